//! What the tests ask of clang-19 and get the same answer for every run —
//! clang's own modules of a sample file, native builds of the sample
//! programs — kept in the user's cache (`~/.cache/passlab/NAME`), not the
//! clone's target/, so that a fresh clone on the same machine (CI's) does
//! not ask again. The key is the tool's version, its arguments and the
//! names and bytes of every file it reads (the sources, and the headers in
//! each `-I` folder); an entry is written whole and then renamed, so it is
//! there complete or not at all.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The cache's folder `name`, made if missing.
pub fn folder(name: &str) -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let dir = cache.join("passlab").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// FNV-1a of some byte strings, as hex.
pub fn hash(parts: &[&[u8]]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for b in p.iter().chain(&[0u8]) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    format!("{h:016x}")
}

/// `tool --version`'s output.
pub fn version(tool: &Path) -> String {
    let out = Command::new(tool).arg("--version").output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A name for a file being written into `dir`, unique in this process.
pub fn scratch(dir: &Path) -> PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    dir.join(format!(".{}.{n}", std::process::id()))
}

/// Keeps `bytes` as `key` in `dir`, whole or not at all.
pub fn keep(dir: &Path, key: &str, bytes: &[u8]) {
    let tmp = scratch(dir);
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, dir.join(key)).unwrap();
}

/// The headers in each `-IDIR` of `args`, sorted: what a build reads
/// besides its sources.
fn headers(args: &[&OsStr]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for a in args {
        let Some(dir) = a.to_str().and_then(|a| a.strip_prefix("-I")) else {
            continue;
        };
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.extension()
                .is_some_and(|x| x == "h" || x == "hpp" || x == "inc" || x == "def")
            {
                found.push(p);
            }
        }
    }
    found.sort();
    found
}

/// `tool ARGS SOURCES LIBS -o exe`, a native build, taken from the
/// cache's `native-builds` folder when the same tool, arguments and files
/// made it before; panics, with the tool's messages, if the build fails.
pub fn native_build(tool: &Path, args: &[&str], sources: &[PathBuf], libs: &[&str], exe: &Path) {
    let dir = folder("native-builds");
    let os_args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let mut parts: Vec<Vec<u8>> = vec![
        version(tool).into_bytes(),
        args.join(" ").into_bytes(),
        libs.join(" ").into_bytes(),
    ];
    // (each file by its name and bytes: where a test wrote one, under a
    // folder named by its process, does not change what is built)
    for f in sources.iter().chain(&headers(&os_args)) {
        parts.push(
            f.file_name()
                .unwrap_or_default()
                .as_encoded_bytes()
                .to_vec(),
        );
        parts.push(std::fs::read(f).unwrap());
    }
    let key = hash(&parts.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let kept = dir.join(&key);
    if !kept.exists() {
        let tmp = scratch(&dir);
        let out = Command::new(tool)
            .args(args)
            .args(sources)
            .args(libs)
            .arg("-o")
            .arg(&tmp)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the native build failed: {} {}: {}",
            tool.display(),
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::rename(&tmp, &kept).unwrap();
    }
    std::fs::copy(&kept, exe).unwrap();
}
