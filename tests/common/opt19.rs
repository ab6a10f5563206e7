//! `opt-19` applying an ordering as CompilerGym applies actions: each
//! element on its own, over the whole module, one process after the other
//! (what `:run` and `:tune` do with each element), with clang's target
//! machine for a position-independent module (`--relocation-model=pic`;
//! opt-19's default is static, which changes what some passes do).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `ordering` from the bitcode `input`, writing into `dir`; the file
/// the last action made (`input` itself for an empty ordering).
pub fn chain(input: &Path, ordering: &[String], dir: &Path) -> PathBuf {
    let mut at = input.to_path_buf();
    for (i, element) in ordering.iter().enumerate() {
        let next = dir.join(format!("opt19-chain-{}.bc", i % 2));
        let (options, passes) = passlab::pipeline::opt_spelling(element);
        let out = Command::new("opt-19")
            .arg("--relocation-model=pic")
            .args(&options)
            .arg(format!("-passes={passes}"))
            .arg(&at)
            .arg("-o")
            .arg(&next)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "opt-19 -passes={element}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        at = next;
    }
    at
}
