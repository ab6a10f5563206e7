//! Temporary folders are private: every folder passlab makes under the
//! system's temporary folder comes from `folder::private_temp_dir` (a
//! random name, mode 0700, made new), never from a name built by hand that
//! another user could create first (as the hunt's native oracle's
//! `/tmp/passlab-hunt-{pid}-{hash}` was, and the binary found there run).
//! This reads every file under `src/` outside its tests.

use std::path::Path;

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn only_private_temporary_folders_are_made() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    let mut found = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        // The code, without its tests (a test may make what it likes).
        let code = match text.find("#[cfg(test)]\nmod ") {
            Some(at) => &text[..at],
            None => &text,
        };
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        for (i, line) in code.lines().enumerate() {
            let line = line.trim_start();
            if line.starts_with("//") {
                continue;
            }
            if line.contains("temp_dir()") && rel != "src/folder.rs" {
                found.push(format!("{rel}:{}: {line}", i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "temporary folders named by hand (use passlab::folder::private_temp_dir):\n{}",
        found.join("\n")
    );
}
