//! The sweep spec parser (`SweepSpec::load`): arbitrary TOML text written
//! to `spec.toml` in a temporary folder that holds a C file, an IR file and
//! a small `.plab` script for the spec to name. No panic; an error has a
//! message; a spec that loads has units that every shard count deals out
//! completely and disjointly, as `passlab sweep` relies on.
//!
//! Specs whose strings could reach outside that folder (`/`, `\`, `..`,
//! `~`) are skipped: `path = "/dev/zero"` would only measure the machine.
use passlab::sweep::SweepSpec;
use std::path::PathBuf;
use std::sync::OnceLock;

fn folder() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("passlab-fuzz-sweep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("a.c"),
            "int f(int x, int *p) { int s = 0; for (int i = 0; i < x && i < 16; i++) s += p[i]; return s; }\n",
        )
        .unwrap();
        std::fs::write(dir.join("b.ll"), "define i32 @g(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}\n").unwrap();
        std::fs::write(dir.join("s.plab"), ":module m\ndefine i32 @h() {\n  ret i32 7\n}\n.\n").unwrap();
        dir
    })
}

/// Whether a string of the spec stays inside the folder.
fn local(s: &str) -> bool {
    !(s.contains(['/', '\\']) || s.contains("..") || s.starts_with('~'))
}

fn all_local(v: &toml::Value) -> bool {
    match v {
        toml::Value::String(s) => local(s),
        toml::Value::Array(a) => a.iter().all(all_local),
        toml::Value::Table(t) => t.iter().all(|(k, v)| local(k) && all_local(v)),
        _ => true,
    }
}

/// Nothing to gather before the first input.
pub fn init() {}

/// One input, as libFuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The parser reads TOML: look at its strings first.
    if let Ok(t) = text.parse::<toml::Table>() {
        if !t.iter().all(|(k, v)| local(k) && all_local(v)) {
            return;
        }
    }
    let path = folder().join("spec.toml");
    std::fs::write(&path, text).unwrap();
    let spec = match SweepSpec::load(&path) {
        Ok(spec) => spec,
        Err(e) => {
            assert!(!e.to_string().trim().is_empty(), "empty error message");
            return;
        }
    };
    assert!(!spec.programs.is_empty());
    let units = spec.units();
    let phases = spec.tune.strategies.len() + 1;
    assert_eq!(units.len(), spec.programs.len() * phases);
    for i in 0..phases {
        assert!(!spec.phase_name(i).is_empty());
    }
    let key = |u: &passlab::sweep::Unit| (u.program.name.clone(), u.phase);
    let mut all: Vec<_> = units.iter().map(key).collect();
    all.sort();
    for count in [1, 2, 3, 7] {
        let mut dealt: Vec<_> = (0..count)
            .flat_map(|i| spec.assign(i, count))
            .map(|u| key(&u))
            .collect();
        dealt.sort();
        assert_eq!(
            dealt, all,
            "{count} shards do not deal the units out exactly once"
        );
    }
    assert_eq!(spec.fingerprint().len(), 16);
}
