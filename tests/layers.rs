//! The core reads bottom-up: no module uses one from a layer above its own.
//! The layers are ARCHITECTURE.md's; this test reads every file under
//! `src/`, finds what it takes from the crate (`crate::x`, `use crate::{x,
//! y::z}`, and the crate-root re-exports such as `crate::PassContext`), and
//! checks each against the table. Comments are not code: a doc link may
//! point anywhere.

use std::collections::BTreeMap;
use std::path::Path;

/// Bottom to top. Above the base, each module is a layer of its own, so
/// that an upward use between any two of them is seen; the base modules
/// only have to be free of circles among themselves
/// (`no_module_imports_in_a_circle`).
const LAYERS: &[(&str, &[&str])] = &[
    (
        "base",
        &[
            "error",
            "ffi",
            "config",
            "table",
            "diff",
            "highlight",
            "console",
            "llvm",
            "interrupt",
            "rng",
            "child",
            "folder",
        ],
    ),
    ("module", &["module"]),
    ("info", &["info"]),
    ("instrument", &["instrument"]),
    ("context", &["context"]),
    ("pass", &["pass"]),
    ("prelude", &["prelude"]),
    ("passes", &["passes"]),
    ("pipeline", &["pipeline"]),
    ("user", &["user"]),
    ("jit", &["jit"]),
    ("chart", &["chart"]),
    ("graph", &["graph"]),
    ("explore", &["explore"]),
    ("tune", &["tune"]),
    ("reduce", &["reduce"]),
    ("batch", &["batch"]),
    ("session", &["session"]),
    ("sweep", &["sweep"]),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, mods)| mods.contains(&module))
}

/// Crate-root names (`pub use module::{Name}` in lib.rs) → their module.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let text = lib.replace('\n', " ");
    for stmt in text.split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let module = rest.split("::").next().unwrap_or("").trim().to_string();
        let names = match (rest.find('{'), rest.rfind('}')) {
            (Some(a), Some(b)) => rest[a + 1..b].to_string(),
            _ => rest.rsplit("::").next().unwrap_or("").to_string(),
        };
        for name in names.split(',') {
            let name = name.split(" as ").last().unwrap_or("").trim();
            if !name.is_empty() {
                out.insert(name.to_string(), module.clone());
            }
        }
    }
    out
}

/// The code of a file, without comments and without its `#[cfg(test)] mod
/// tests` (a test may use any layer).
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first segments of the paths the code takes from the crate.
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let first = item.trim().split("::").next().unwrap_or("").trim();
                if !first.is_empty() {
                    out.push(first.to_string());
                }
            }
        } else {
            let word: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(word);
        }
    }
    out
}

/// Every use of the crate by a file under `src/`: (file, its module, the
/// module it uses). Test modules (`#[cfg(test)] mod tests`, `tests.rs`)
/// are left out.
fn uses() -> Vec<(String, String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let roots = reexports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut out = Vec::new();
    for (rel, text) in sources() {
        if rel == "tests.rs" || rel.ends_with("/tests.rs") {
            continue;
        }
        let top = module_of(&rel);
        if top == "lib" {
            continue;
        }
        assert!(
            layer_of(&top).is_some(),
            "src/{rel} is in no layer: add it to LAYERS (and to ARCHITECTURE.md)"
        );
        for used in crate_paths(&code(&text)) {
            let module = roots.get(&used).cloned().unwrap_or(used.clone());
            if module != top && layer_of(&module).is_some() {
                out.push((rel.clone(), top.clone(), module));
            }
        }
    }
    out
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let mut crossings = Vec::new();
    for (file, own, used) in uses() {
        let (own, theirs) = (layer_of(&own).unwrap(), layer_of(&used).unwrap());
        if theirs > own {
            crossings.push(format!(
                "src/{file} ({}) uses crate::{used} ({})",
                LAYERS[own].0, LAYERS[theirs].0
            ));
        }
    }
    assert!(
        crossings.is_empty(),
        "layers crossed:\n{}",
        crossings.join("\n")
    );
}

/// Within the base too: no module reaches itself through the others.
/// Edges between modules (or files), each with the file that makes it.
type Edges = BTreeMap<String, BTreeMap<String, String>>;

/// A circle in `edges`, written out with the files, if there is one
/// (depth-first search: a back edge is a circle).
fn circle(edges: &Edges) -> Option<String> {
    fn visit(
        m: &str,
        edges: &Edges,
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Option<String> {
        if let Some(at) = path.iter().position(|p| p == m) {
            let circle: Vec<String> = path[at..]
                .iter()
                .zip(path[at..].iter().skip(1).chain([&m.to_string()]))
                .map(|(a, b)| format!("{a} -> {b} (src/{})", edges[a][b]))
                .collect();
            return Some(circle.join(", "));
        }
        if done.iter().any(|d| d == m) {
            return None;
        }
        path.push(m.to_string());
        for next in edges.get(m).into_iter().flat_map(|e| e.keys()) {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.push(m.to_string());
        None
    }
    let mut done = Vec::new();
    edges
        .keys()
        .find_map(|m| visit(m, edges, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_imports_in_a_circle() {
    let mut edges = Edges::new();
    for (file, own, used) in uses() {
        edges.entry(own).or_default().entry(used).or_insert(file);
    }
    if let Some(circle) = circle(&edges) {
        panic!("modules import each other in a circle: {circle}");
    }
}

/// Whether `code` (a file of `module`) takes from its sibling file
/// `sibling`: `super::sibling`, `crate::module::sibling`, or `sibling` in a
/// `use super::{...}` list.
fn takes_from_sibling(code: &str, module: &str, sibling: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let at_word = |prefix: &str| {
        code.match_indices(prefix).any(|(i, p)| {
            let before = code[..i].chars().next_back();
            let after = code[i + p.len()..].chars().next();
            !before.is_some_and(|c| ident(c) || c == ':') && !after.is_some_and(ident)
        })
    };
    let listed = code.match_indices("use super::{").any(|(i, p)| {
        let list = &code[i + p.len()..];
        let list = &list[..list.find('}').unwrap_or(list.len())];
        list.split(|c: char| !ident(c)).any(|w| w == sibling)
    });
    at_word(&format!("super::{sibling}"))
        || at_word(&format!("crate::{module}::{sibling}"))
        || listed
}

/// The files of a module read bottom-up too: none takes from a sibling that
/// takes from it, directly or around (`mod.rs`, which declares them, aside).
#[test]
fn no_file_imports_a_sibling_in_a_circle() {
    let mut by_dir: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (rel, text) in sources() {
        let p = Path::new(&rel);
        let (Some(dir), Some(stem)) = (p.parent(), p.file_stem()) else {
            continue;
        };
        let (dir, stem) = (
            dir.display().to_string(),
            stem.to_string_lossy().into_owned(),
        );
        if !dir.is_empty() && stem != "mod" {
            by_dir.entry(dir).or_default().push((stem, code(&text)));
        }
    }
    for (dir, files) in &by_dir {
        let module = dir.replace('/', "::");
        let mut edges = Edges::new();
        for (f, text) in files {
            for (g, _) in files.iter().filter(|(g, _)| g != f) {
                if takes_from_sibling(text, &module, g) {
                    edges
                        .entry(f.clone())
                        .or_default()
                        .insert(g.clone(), format!("{dir}/{f}.rs"));
                }
            }
        }
        if let Some(circle) = circle(&edges) {
            panic!("files of src/{dir} import each other in a circle: {circle}");
        }
    }
}

/// The Python extension's files (python/src, a crate of its own, each
/// file a module under the crate root) read bottom-up as well: `module.rs`
/// (the Module class's methods) uses the other classes, which take the
/// class's data from `module_type.rs`, not from `module.rs`.
#[test]
fn no_file_of_the_python_extension_imports_in_a_circle() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/src");
    let mut files = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "rs") {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            files.push((stem, code(&std::fs::read_to_string(&p).unwrap())));
        }
    }
    assert!(files.len() > 10, "python/src: {} files", files.len());
    let mut edges = Edges::new();
    for (f, text) in files.iter().filter(|(f, _)| f != "lib") {
        for used in crate_paths(text) {
            if used != *f && files.iter().any(|(g, _)| *g == used) {
                edges
                    .entry(f.clone())
                    .or_default()
                    .insert(used, format!("python/src/{f}.rs"));
            }
        }
    }
    if let Some(circle) = circle(&edges) {
        panic!("files of python/src import each other in a circle: {circle}");
    }
}

#[test]
fn the_sibling_check_sees_each_way_of_taking() {
    assert!(takes_from_sibling(
        "use super::asm::Assembly;",
        "jit",
        "asm"
    ));
    assert!(takes_from_sibling(
        "let r = crate::jit::asm::f();",
        "jit",
        "asm"
    ));
    assert!(takes_from_sibling(
        "use super::{asm, probes::Reader};",
        "jit",
        "asm"
    ));
    assert!(!takes_from_sibling(
        "use super::asmx::A; use super::super::asm;",
        "jit",
        "asm"
    ));
    let mut edges = Edges::new();
    edges
        .entry("a".into())
        .or_default()
        .insert("b".into(), "m/a.rs".into());
    edges
        .entry("b".into())
        .or_default()
        .insert("a".into(), "m/b.rs".into());
    assert_eq!(
        circle(&edges).as_deref(),
        Some("a -> b (src/m/a.rs), b -> a (src/m/b.rs)")
    );
}

#[test]
fn the_scanner_finds_what_a_file_takes_from_the_crate() {
    let code = code("use crate::{a, b::c};\nlet x = crate::d::e(); // crate::f\nuse crate::G;");
    assert_eq!(crate_paths(&code), ["a", "b", "d", "G"]);
    let roots = reexports(
        "pub use context::{ContextGuard, PassContext};\npub use pass::{Pass,\n PassInfo};",
    );
    assert_eq!(roots["PassContext"], "context");
    assert_eq!(roots["PassInfo"], "pass");
    let roots = reexports("pub use pass::registry;");
    assert_eq!(roots["registry"], "pass");
    assert_eq!(
        crate::code("use crate::a;\n#[cfg(test)]\nmod tests {\n use crate::b;\n}"),
        "use crate::a;"
    );
}

/// The front ends — the REPL, the kernel, the Python module — go through
/// the core: none names inkwell or LLVM's C API (the core's own types,
/// such as `passlab::llvm::IrUnit`, are the core's).
#[test]
fn no_front_end_names_llvm_bindings() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for front in ["repl/src", "kernel/src", "python/src"] {
        let mut files = vec![root.join(front)];
        while let Some(path) = files.pop() {
            if path.is_dir() {
                files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = code(&std::fs::read_to_string(&path).unwrap());
                for word in ["inkwell", "llvm_sys", "LLVMModuleRef", "LLVMValueRef"] {
                    if text.contains(word) {
                        found.push(format!("{}: {word}", path.display()));
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "front ends naming LLVM's bindings:\n{}",
        found.join("\n")
    );
}

/// The modules that may hold `unsafe` code: the base layer's system and
/// LLVM modules, and the LLVM boundary above them (the IR, the
/// instruments' callbacks from inside LLVM's pipelines, the JIT and code
/// generation, user passes' shared table). Every other module forbids
/// `unsafe` (`#![forbid(unsafe_code)]` first in its file, which the
/// compiler then enforces) and names neither `llvm_sys` nor the shim
/// (`ffi`): what it needs of LLVM, it asks of a safe function below it.
const UNSAFE_ALLOWED: &[&str] = &[
    "ffi",
    "llvm",
    "child",
    "folder",
    "interrupt",
    "module",
    "instrument",
    "jit",
    "user",
];

/// Files outside the boundary that name one of LLVM's raw handle types
/// without any `unsafe` (their module forbids it): the LLVM pass's bridge
/// keeps the function handle LLVM's pass callbacks give, to hand it back
/// to the instruments.
const NAMES_A_HANDLE: &[&str] = &["pass/llvm_pass.rs"];

/// Every `.rs` file under `src/` with its path relative to `src/`.
fn sources() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p.strip_prefix(&src).unwrap().display().to_string();
                out.push((rel, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn module_of(rel: &str) -> String {
    rel.split('/')
        .next()
        .unwrap()
        .trim_end_matches(".rs")
        .to_string()
}

/// What a file holds that only the boundary may: `unsafe` code, `llvm_sys`,
/// the shim's `ffi` (comments left out).
fn boundary_words(text: &str) -> Vec<&'static str> {
    let code = code(text);
    let mut found = Vec::new();
    if code.contains("unsafe ") || code.contains("unsafe{") {
        found.push("unsafe");
    }
    if code.contains("llvm_sys") {
        found.push("llvm_sys");
    }
    if code.contains("crate::ffi") || code.contains("super::ffi") || code.contains("ffi::plab_") {
        found.push("ffi");
    }
    found
}

/// What crosses the boundary: (file, word) for each file outside it that
/// holds `unsafe`, `llvm_sys` or `ffi`, and each module outside it whose
/// root file does not forbid `unsafe` code.
fn boundary_crossings(files: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (rel, text) in files {
        let module = module_of(rel);
        if module == "lib" || UNSAFE_ALLOWED.contains(&module.as_str()) {
            continue;
        }
        for word in boundary_words(text) {
            if word == "llvm_sys"
                && NAMES_A_HANDLE.contains(&rel.as_str())
                && !code(text).contains("llvm_sys::core")
            {
                continue;
            }
            out.push(format!("src/{rel}: {word}"));
        }
        let root = rel == &format!("{module}.rs") || rel == &format!("{module}/mod.rs");
        if root && !code(text).contains("#![forbid(unsafe_code)]") {
            out.push(format!("src/{rel}: no #![forbid(unsafe_code)]"));
        }
    }
    out
}

#[test]
fn only_the_llvm_boundary_holds_unsafe_code() {
    let files = sources();
    let crossings = boundary_crossings(&files);
    assert!(
        crossings.is_empty(),
        "outside the LLVM boundary ({UNSAFE_ALLOWED:?}); move the raw work into a safe function there:\n{}",
        crossings.join("\n")
    );
    // Every module is either inside the boundary or in a layer.
    for (rel, _) in &files {
        let m = module_of(rel);
        assert!(
            m == "lib" || layer_of(&m).is_some(),
            "src/{rel} is in no layer"
        );
    }
    // The body of an `unsafe fn` is checked like any other code: each
    // unsafe operation in its own block with its SAFETY note.
    let lib = files.iter().find(|(r, _)| r == "lib.rs").unwrap();
    assert!(lib.1.contains("#![deny(unsafe_op_in_unsafe_fn)]"));
    // Every `unsafe fn` says what its callers must uphold.
    let mut undocumented = Vec::new();
    for (rel, text) in &files {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let t = line.trim_start();
            let is_fn = ["unsafe fn ", "pub unsafe fn ", "pub(crate) unsafe fn "]
                .iter()
                .any(|p| t.starts_with(p));
            if !is_fn {
                continue;
            }
            let doc: Vec<&str> = lines[..i]
                .iter()
                .rev()
                .map(|l| l.trim_start())
                .take_while(|l| l.starts_with("///") || l.starts_with("#["))
                .collect();
            if !doc.iter().any(|l| l.trim_end() == "/// # Safety") {
                undocumented.push(format!("src/{rel}:{}", i + 1));
            }
        }
    }
    assert!(
        undocumented.is_empty(),
        "unsafe fns without a `# Safety` section in their docs:\n{}",
        undocumented.join("\n")
    );
}

#[test]
fn the_boundary_check_sees_a_planted_crossing() {
    let planted =
        |rel: &str, text: &str| boundary_crossings(&[(rel.to_string(), text.to_string())]);
    // LLVM's C API called from the search, unsafe code in the session, the
    // shim from the reducer, a module that does not forbid unsafe code.
    let tune = planted(
        "tune/mod.rs",
        "#![forbid(unsafe_code)]\nuse llvm_sys::core::*;\nfn f() { unsafe { LLVMShutdown() } }",
    );
    assert_eq!(
        tune,
        ["src/tune/mod.rs: unsafe", "src/tune/mod.rs: llvm_sys"]
    );
    assert_eq!(
        planted(
            "reduce/mod.rs",
            "#![forbid(unsafe_code)]\nfn f() { crate::ffi::plab_init_targets(); }"
        ),
        ["src/reduce/mod.rs: ffi"]
    );
    assert_eq!(
        planted("chart.rs", "fn f() {}"),
        ["src/chart.rs: no #![forbid(unsafe_code)]"]
    );
    // In a comment, or inside the boundary, it is not a crossing.
    assert!(planted(
        "tune/mod.rs",
        "#![forbid(unsafe_code)]\n// unsafe { llvm_sys }"
    )
    .is_empty());
    assert!(planted(
        "jit/mod.rs",
        "fn f() { unsafe { llvm_sys::core::LLVMShutdown() } }"
    )
    .is_empty());
}
