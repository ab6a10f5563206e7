//! Real projects as their builds describe them: CMake configures them
//! (with clang-19, `-O2 -flto`, and `CMAKE_EXPORT_COMPILE_COMMANDS`), and
//! the reference build runs the units' own commands from the
//! `compile_commands.json`, then links the objects with
//! `clang-19 -flto -O2 -fuse-ld=lld -Wl,--save-temps`: what lld's LTO
//! hands its pipeline (`.0.2.internalize.bc`) and what the pipeline makes
//! (`.0.4.opt.bc`) are kept beside the program.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A configured project: its build folder and database.
pub struct Project {
    pub build: PathBuf,
    pub database: PathBuf,
}

/// Configures `source` with CMake into a fresh folder under the system's
/// temporary folder, `options` after the common ones.
pub fn configure(name: &str, source: &Path, options: &[&str]) -> Project {
    let build = std::env::temp_dir().join(format!("passlab-project-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&build);
    let out = Command::new("cmake")
        .arg("-S")
        .arg(source)
        .arg("-B")
        .arg(&build)
        .args([
            "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
            "-DCMAKE_C_COMPILER=clang-19",
            "-DCMAKE_CXX_COMPILER=clang++-19",
            "-DCMAKE_BUILD_TYPE=Release",
            // The level is the one flag: no -O3 from CMake's Release.
            "-DCMAKE_C_FLAGS_RELEASE=-DNDEBUG",
            "-DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG",
            "-DCMAKE_C_FLAGS=-O2 -flto",
            "-DCMAKE_CXX_FLAGS=-O2 -flto",
        ])
        .args(options)
        .output()
        .expect("run cmake");
    assert!(
        out.status.success(),
        "cmake failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let database = build.join("compile_commands.json");
    assert!(database.is_file(), "no {}", database.display());
    Project { build, database }
}

impl Project {
    /// The database's entries whose file ends with one of `files` (all
    /// when empty): (folder, command line, object file).
    pub fn entries(&self, files: &[&str]) -> Vec<(PathBuf, Vec<String>, PathBuf)> {
        let text = std::fs::read_to_string(&self.database).unwrap();
        let json: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        json.iter()
            .filter(|e| {
                let f = e["file"].as_str().unwrap();
                files.is_empty() || files.iter().any(|x| f.ends_with(x))
            })
            .map(|e| {
                let dir = PathBuf::from(e["directory"].as_str().unwrap());
                let words = shlex::split(e["command"].as_str().unwrap()).unwrap();
                let o = words.iter().position(|w| w == "-o").unwrap();
                let object = dir.join(&words[o + 1]);
                (dir, words, object)
            })
            .collect()
    }

    /// Builds the units' objects with their own commands, two at a time,
    /// and links them in the database's order with clang's LTO through
    /// lld into `program` (its `.0.2.internalize.bc` and `.0.4.opt.bc`
    /// beside it).
    pub fn build_lto(&self, files: &[&str], linker: &str, program: &Path) {
        let entries = self.entries(files);
        for pair in entries.chunks(2) {
            let children: Vec<_> = pair
                .iter()
                .map(|(dir, words, object)| {
                    std::fs::create_dir_all(object.parent().unwrap()).unwrap();
                    Command::new(&words[0])
                        .args(&words[1..])
                        .current_dir(dir)
                        .stderr(std::process::Stdio::null())
                        .spawn()
                        .unwrap()
                })
                .collect();
            for mut c in children {
                assert!(c.wait().unwrap().success(), "a unit did not build");
            }
        }
        let out = Command::new(linker)
            .args(["-flto", "-O2", "-fuse-ld=lld", "-Wl,--save-temps", "-o"])
            .arg(program)
            .args(entries.iter().map(|(_, _, o)| o))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{linker} -flto: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A module's functions' instruction counts, by name without the number
/// a link gives a local function whose name another unit also uses
/// (`outc.264`, numbered by how many such names came before): for each
/// name, its functions' counts, sorted.
pub fn counts(m: &passlab::Module) -> BTreeMap<String, Vec<u64>> {
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for f in m.stats().per_function {
        let base = match f.name.rsplit_once('.') {
            Some((head, n)) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => head,
            _ => f.name.as_str(),
        };
        out.entry(base.to_string())
            .or_default()
            .push(f.instructions);
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

/// Where two modules' counts differ: the names, each with both counts.
pub fn differences(
    ours: &BTreeMap<String, Vec<u64>>,
    theirs: &BTreeMap<String, Vec<u64>>,
) -> Vec<String> {
    let mut out = Vec::new();
    for name in ours.keys().chain(theirs.keys()) {
        let (a, b) = (ours.get(name), theirs.get(name));
        if a != b
            && !out
                .iter()
                .any(|o: &String| o.starts_with(&format!("{name}:")))
        {
            out.push(format!("{name}: passlab {a:?}, clang {b:?}"));
        }
    }
    out
}
