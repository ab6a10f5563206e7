//! The compilation database reader (`Project::read`, what `:load
//! compile_commands.json` and a sweep's corpus read): arbitrary bytes as a
//! `compile_commands.json`. No panic; an error has a message; a database
//! that reads has C or C++ units, each named, whose flags are the
//! allow-list's: every word where clang reads a flag is one the list keeps
//! (so none that loads code or writes a file, and none of `-c`, `-o`, an
//! `-O` level, `-flto`), each kept with its value; and each unit's name, as
//! a pattern, keeps that unit.
use passlab::module::project::{rule, Project, Rule};
use std::path::PathBuf;
use std::sync::OnceLock;

fn folder() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("passlab-fuzz-cc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

/// Nothing to gather before the first input.
pub fn init() {}

/// One input, as libFuzzer gives it.
pub fn run(data: &[u8]) {
    let path = folder().join("compile_commands.json");
    std::fs::write(&path, data).unwrap();
    let p = match Project::read(&path) {
        Ok(p) => p,
        Err(e) => {
            assert!(!e.to_string().trim().is_empty(), "empty error message");
            return;
        }
    };
    assert!(!p.units.is_empty());
    for u in &p.units {
        assert!(!u.name.is_empty(), "a unit without a name: {u:?}");
        let mut flags = u.flags.iter();
        while let Some(f) = flags.next() {
            match rule(f) {
                Rule::Kept => {}
                Rule::KeptWithNext => {
                    assert!(flags.next().is_some(), "{f} without its value in {u:?}");
                }
                r => panic!("a flag the allow-list does not keep ({r:?}): {f} in {u:?}"),
            }
            let dropped = ["-c", "-o"].contains(&f.as_str())
                || (f.starts_with("-O") && f.len() <= 3)
                || ["-flto", "-fpass-plugin", "-Xclang", "-Wp,"]
                    .iter()
                    .any(|p| f.starts_with(p));
            assert!(!dropped, "a dropped flag was kept: {f} in {u:?}");
        }
        if !u.name.contains(['[', ']', '*', '?', '!']) {
            let mut one = p.clone();
            one.keep(std::slice::from_ref(&u.name)).unwrap();
            assert!(one.units.iter().any(|v| v.name == u.name));
        }
    }
}
