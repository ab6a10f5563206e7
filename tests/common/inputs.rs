//! Real C inputs no one here wrote, from crates that bundle them: sqlite3's
//! amalgamation (libsqlite3-sys), zlib (libz-sys), Lua (lua-src), and a
//! real C++ file, cxx's runtime (cxx: src/cxx.cc, the standard library's
//! strings, vectors and exceptions). `cargo metadata` on
//! tests/inputs/Cargo.toml fetches them and says where they are.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn crate_dirs() -> &'static Vec<(String, PathBuf)> {
    static DIRS: OnceLock<Vec<(String, PathBuf)>> = OnceLock::new();
    DIRS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut dirs = Vec::new();
        // Two manifests: projects/ holds a crate whose build dependencies
        // cannot share a graph with the others' (see its Cargo.toml).
        for manifest in [
            "tests/inputs/Cargo.toml",
            "tests/inputs/projects/Cargo.toml",
        ] {
            dirs.extend(packages(&root.join(manifest)));
        }
        dirs
    })
}

fn packages(manifest: &Path) -> Vec<(String, PathBuf)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--manifest-path",
        ])
        .arg(manifest)
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    json["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            let manifest = PathBuf::from(p["manifest_path"].as_str().expect("manifest_path"));
            (
                p["name"].as_str().expect("name").to_string(),
                manifest.parent().expect("crate dir").to_path_buf(),
            )
        })
        .collect()
}

fn crate_dir(name: &str) -> PathBuf {
    crate_dirs()
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, d)| d.clone())
        .unwrap_or_else(|| panic!("{name} not fetched"))
}

/// sqlite3.c, the amalgamation (~9 MB of C).
pub fn sqlite3_c() -> PathBuf {
    crate_dir("libsqlite3-sys").join("sqlite3/sqlite3.c")
}

/// cmark-gfm (GitHub's CommonMark, C: 35 units and its CMake build), from
/// cmark-gfm-sys.
pub fn cmark_gfm_dir() -> PathBuf {
    crate_dir("cmark-gfm-sys").join("cmark-gfm")
}

/// double-conversion (C++: the library and its tests' runner, cctest,
/// with their CMake build), from double-conversion-sys.
pub fn double_conversion_dir() -> PathBuf {
    crate_dir("double-conversion-sys").join("double-conversion")
}

/// The directory of zlib's sources (adler32.c, crc32.c, zutil.h…).
pub fn zlib_dir() -> PathBuf {
    crate_dir("libz-sys").join("src/zlib")
}

/// A zlib source file as a passlab source (with zlib's include directory).
pub fn zlib_source(file: &str) -> passlab::Source {
    let dir = zlib_dir();
    passlab::Source::file(dir.join(file))
        .expect("zlib file")
        .clang_args([format!("-I{}", dir.display())])
}

/// The directory of Lua 5.4's sources (lua-src: lapi.c … lzio.c, 32 files).
pub fn lua_dir() -> PathBuf {
    crate_dir("lua-src").join("lua-5.4.7")
}

/// A Lua source file as a passlab source (with Lua's include directory).
pub fn lua_source(file: &str) -> passlab::Source {
    let dir = lua_dir();
    passlab::Source::file(dir.join(file))
        .expect("lua file")
        .clang_args([format!("-I{}", dir.display())])
}

/// Lua's C files, sorted, and the driver that runs Lua programs
/// (tests/inputs/lua_driver.c).
pub fn lua_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(lua_dir())
        .expect("lua sources")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    files.sort();
    files.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inputs/lua_driver.c"));
    files
}

/// cxx's C++ runtime (src/cxx.cc, ~900 lines of C++ using the standard
/// library), from the cxx crate.
pub fn cxx_cc() -> PathBuf {
    crate_dir("cxx").join("src/cxx.cc")
}

/// libFuzzer (libfuzzer-sys: `libfuzzer/`), a whole C++ program no one
/// here wrote: 26 files of C++17 (the standard library's strings,
/// containers, threads and streams, thread-local and global objects with
/// constructors), whose `main` calls `LLVMFuzzerTestOneInput`, the
/// target a user links in.
pub fn libfuzzer_sources() -> Vec<PathBuf> {
    let dir = crate_dir("libfuzzer-sys").join("libfuzzer");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("libfuzzer-sys's libfuzzer/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
        .collect();
    files.sort();
    files
}
