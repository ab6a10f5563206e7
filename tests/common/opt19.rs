//! `opt-19` applying an ordering as CompilerGym applies actions: each
//! element on its own, over the whole module, one process after the other
//! (what `:run` and `:tune` do with each element), with clang's target
//! machine for a position-independent module (`--relocation-model=pic`;
//! opt-19's default is static, which changes what some passes do).
//!
//! What a chain makes is kept in the cache's `opt19-chains` folder (see
//! `common::cache`), named by a hash of opt-19's version, every command
//! line and the input's bytes: the same chain on the same bitcode is the
//! same every time (sqlite3 through `default<O2>` is 11 s of opt-19).

use super::cache;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Runs `ordering` from the bitcode `input`, writing into `dir`; the file
/// the last action made (`input` itself for an empty ordering).
pub fn chain(input: &Path, ordering: &[String], dir: &Path) -> PathBuf {
    if ordering.is_empty() {
        return input.to_path_buf();
    }
    let commands: Vec<Vec<String>> = ordering
        .iter()
        .map(|element| {
            let (options, passes) = passlab::pipeline::opt_spelling(element);
            let mut args = vec!["--relocation-model=pic".to_string()];
            args.extend(options);
            args.push(format!("-passes={passes}"));
            args
        })
        .collect();
    static VERSION: OnceLock<String> = OnceLock::new();
    let version = VERSION.get_or_init(|| cache::version(Path::new("opt-19")));
    let lines: Vec<String> = commands.iter().map(|c| c.join(" ")).collect();
    let bytes = std::fs::read(input).unwrap();
    let key = cache::hash(&[version.as_bytes(), lines.join("\n").as_bytes(), &bytes]);
    let kept = cache::folder("opt19-chains");
    let made = dir.join("opt19-chain.bc");
    if let Ok(bytes) = std::fs::read(kept.join(&key)) {
        std::fs::write(&made, bytes).unwrap();
        return made;
    }
    let mut at = input.to_path_buf();
    for (i, args) in commands.iter().enumerate() {
        let next = dir.join(format!("opt19-chain-{}.bc", i % 2));
        let out = Command::new("opt-19")
            .args(args)
            .arg(&at)
            .arg("-o")
            .arg(&next)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "opt-19 {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        at = next;
    }
    cache::keep(&kept, &key, &std::fs::read(&at).unwrap());
    at
}
