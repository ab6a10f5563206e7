//! The core reads bottom-up: no module uses one from a layer above its own.
//! The layers are ARCHITECTURE.md's; this test reads every file under
//! `src/`, finds what it takes from the crate (`crate::x`, `use crate::{x,
//! y::z}`, and the crate-root re-exports such as `crate::PassContext`), and
//! checks each against the table. Comments are not code: a doc link may
//! point anywhere.

use std::collections::BTreeMap;
use std::path::Path;

/// Bottom to top.
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
        ],
    ),
    ("module", &["module"]),
    ("instruments", &["info", "instrument"]),
    (
        "passes",
        &[
            "pass", "context", "registry", "passes", "pipeline", "prelude", "user",
        ],
    ),
    ("jit and charts", &["jit", "chart", "explore", "tune"]),
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

/// The code of a file, without comments.
fn code(text: &str) -> String {
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

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let roots = reexports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut crossings = Vec::new();
    let mut files = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
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
        let own = layer_of(&top).unwrap_or_else(|| {
            panic!(
                "src/{} is in no layer: add it to LAYERS (and to ARCHITECTURE.md)",
                rel.display()
            )
        });
        for used in crate_paths(&code(&std::fs::read_to_string(&file).unwrap())) {
            let module = roots.get(&used).cloned().unwrap_or(used.clone());
            let Some(theirs) = layer_of(&module) else {
                continue;
            };
            if theirs > own {
                crossings.push(format!(
                    "src/{} ({}) uses crate::{used} ({})",
                    rel.display(),
                    LAYERS[own].0,
                    LAYERS[theirs].0
                ));
            }
        }
    }
    assert!(
        crossings.is_empty(),
        "layers crossed:\n{}",
        crossings.join("\n")
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
}
