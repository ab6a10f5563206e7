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
            "output",
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
    ("explore", &["explore"]),
    ("tune", &["tune"]),
    ("reduce", &["reduce"]),
    ("session", &["session"]),
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
    let mut files = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "rs")
                && p.file_name().is_some_and(|n| n != "tests.rs")
            {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" {
            continue;
        }
        assert!(
            layer_of(&top).is_some(),
            "src/{} is in no layer: add it to LAYERS (and to ARCHITECTURE.md)",
            rel.display()
        );
        for used in crate_paths(&code(&std::fs::read_to_string(&file).unwrap())) {
            let module = roots.get(&used).cloned().unwrap_or(used.clone());
            if module != top && layer_of(&module).is_some() {
                out.push((rel.display().to_string(), top.clone(), module));
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
#[test]
fn no_module_imports_in_a_circle() {
    let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (file, own, used) in uses() {
        edges.entry(own).or_default().entry(used).or_insert(file);
    }
    // Depth-first search; a back edge is a circle, printed with the files.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeMap<String, String>>,
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
    for m in edges.keys() {
        if let Some(circle) = visit(m, &edges, &mut Vec::new(), &mut done) {
            panic!("modules import each other in a circle: {circle}");
        }
    }
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
