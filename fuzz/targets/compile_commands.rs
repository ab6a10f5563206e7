//! The compilation database reader (`Project::read`, what `:load
//! compile_commands.json` and a sweep's corpus read): arbitrary bytes as a
//! `compile_commands.json`. No panic; an error has a message; a database
//! that reads has C or C++ units, each named, none of whose flags is one
//! the reader drops (`-c`, `-o`, an `-O` level, `-flto`), and each unit's
//! name, as a pattern, keeps that unit.
use passlab::module::project::Project;
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
        for f in &u.flags {
            assert!(
                f != "-c"
                    && f != "-o"
                    && !(f.starts_with("-O") && f.len() <= 3)
                    && !f.starts_with("-flto"),
                "a dropped flag was kept: {f} in {u:?}"
            );
        }
        if !u.name.contains(['[', ']', '*', '?', '!']) {
            let mut one = p.clone();
            one.keep(std::slice::from_ref(&u.name)).unwrap();
            assert!(one.units.iter().any(|v| v.name == u.name));
        }
    }
}
