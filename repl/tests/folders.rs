//! Nothing a user owns is lost: every writer of passlab beside a folder of
//! the user's own files, which must be byte for byte the same afterwards.
//! `:hunt`, `:reduce`, `passlab sweep`, `passlab hunt` and both merges
//! write only into folders they made (their marker, `.passlab-folder`) or
//! beside the user's files when told to (`replace=yes`, `--replace`), never
//! over them; `:save`, `:export`, `:asm --out`, `:plot --out`, `:explore
//! --out`, `:report remarks source --out`, `:exec --out` and the REPL's
//! charts replace a file only if passlab wrote it and nobody changed it
//! since.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// A new empty folder for one test.
fn folder(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("folders-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every file under `dir`, by its path there, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Writes the user's files under `dir` (path, text) and returns them.
fn users_files(dir: &Path, list: &[(&str, &str)]) -> BTreeMap<PathBuf, Vec<u8>> {
    for (p, text) in list {
        let p = dir.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    list.iter()
        .map(|(p, t)| (PathBuf::from(p), t.as_bytes().to_vec()))
        .collect()
}

/// Each of the user's files is still there, byte for byte.
fn intact(dir: &Path, theirs: &BTreeMap<PathBuf, Vec<u8>>, when: &str) {
    let now = files(dir);
    for (p, bytes) in theirs {
        assert_eq!(
            now.get(p),
            Some(bytes),
            "{when}: the user's {} changed or is gone",
            p.display()
        );
    }
}

/// `passlab ARGS` in `cwd`, with `script` on standard input when given;
/// whether it succeeded, and all it printed.
fn passlab(cwd: &Path, args: &[&str], script: Option<&str>) -> (bool, String) {
    use std::io::Write;
    let state = cwd.join("..").join(format!(
        "{}-state",
        cwd.file_name().unwrap().to_string_lossy()
    ));
    let mut child = Command::new(env!("CARGO_BIN_EXE_passlab"))
        .args(args)
        .current_dir(cwd)
        // The ledger of files passlab wrote: the test's own.
        .env("XDG_STATE_HOME", &state)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.unwrap_or("").as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr),
    )
}

fn run(cwd: &Path, script: &str) -> (bool, String) {
    passlab(cwd, &["run", "--keep-going", "-"], Some(script))
}

const PROGRAM: &str = "#include <stdio.h>\nint main(void) { unsigned s = 0; for (int i = 0; i < 100; i++) s = s * 31 + i; printf(\"%u\\n\", s); return 0; }\n";

#[test]
fn a_hunt_writes_only_into_a_folder_it_made() {
    let cwd = folder("hunt");
    std::fs::write(cwd.join("t.c"), PROGRAM).unwrap();
    let dir = cwd.join("mine");
    let theirs = users_files(
        &dir,
        &[
            ("findings/important.txt", "my notes\n"),
            ("hunt-0-of-1.jsonl", "{\"mine\": true}\n"),
            ("notes.md", "# mine\n"),
        ],
    );
    let hunt = ":hunt corpus=t.c orderings=1 reduce=no | O2 --out mine";
    let (ok, text) = run(&cwd, hunt);
    assert!(
        !ok && text.contains("holds files passlab did not write"),
        "{text}"
    );
    assert!(
        text.contains("findings/") && text.contains("replace=yes"),
        "{text}"
    );
    intact(&dir, &theirs, "refused");
    // Told to write beside them, it still will not write over one.
    let (ok, text) = run(&cwd, &hunt.replace(" | O2", " replace=yes | O2"));
    assert!(!ok && text.contains("was there before"), "{text}");
    intact(&dir, &theirs, "beside");
    // Beside the user's files, with no name in common: it runs; again, the
    // same hunt starts afresh in what it wrote, and the user's files stay.
    std::fs::remove_file(dir.join("hunt-0-of-1.jsonl")).unwrap();
    let mut theirs = theirs;
    theirs.remove(Path::new("hunt-0-of-1.jsonl"));
    let (ok, text) = run(&cwd, &hunt.replace(" | O2", " replace=yes | O2"));
    assert!(ok, "{text}");
    assert!(dir.join("hunt-0-of-1.jsonl").exists());
    let (ok, text) = run(&cwd, hunt);
    assert!(ok, "{text}");
    intact(&dir, &theirs, "after two hunts");
    // Another hunt in its folder is refused; with replace=yes it removes
    // the first one's files, and only those.
    let other = hunt.replace("| O2", "| O1");
    let (ok, text) = run(&cwd, &other);
    assert!(!ok && text.contains("made by another job"), "{text}");
    let (ok, text) = run(&cwd, &other.replace(" | O1", " replace=yes | O1"));
    assert!(ok, "{text}");
    intact(&dir, &theirs, "after another hunt replaced the first");
    // The default folder is the hunt's own, made with its marker.
    let (ok, text) = run(&cwd, ":hunt corpus=t.c reduce=no | O2");
    assert!(ok, "{text}");
    let made: Vec<_> = std::fs::read_dir(cwd.join("passlab-hunt"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(made.len(), 1);
    assert!(made[0].join(".passlab-folder").exists());
}

#[test]
fn a_reduction_writes_its_reproducer_only_where_it_may() {
    let cwd = folder("reduce");
    let theirs = users_files(
        &cwd,
        &[
            ("README.md", "# my project\n"),
            ("reduced.ll", "; my own reduction\n"),
        ],
    );
    let module = ":module m --lang c\nint f(int x) { return x + 1 > x; }\n.\n";
    let reduce = ":reduce differs f 2147483647 | O0 | O2 budget=30";
    // Into the project's folder: refused before any work.
    let (ok, text) = run(&cwd, &format!("{module}{reduce} --out .\n"));
    assert!(
        !ok && text.contains("holds files passlab did not write"),
        "{text}"
    );
    assert!(!text.contains("kept:"), "it reduced first: {text}");
    intact(&cwd, &theirs, "refused");
    // replace=yes: beside them, but never over them.
    let (ok, text) = run(&cwd, &format!("{module}{reduce} replace=yes --out .\n"));
    assert!(!ok && text.contains("was there before"), "{text}");
    intact(&cwd, &theirs, "beside");
    // A new folder, twice (a cell run again replaces its own files).
    for _ in 0..2 {
        let (ok, text) = run(&cwd, &format!("{module}{reduce} --out repro\n"));
        assert!(ok, "{text}");
        for f in ["README.md", "reduced.ll", "repro.plab", "progress.csv"] {
            assert!(cwd.join("repro").join(f).exists(), "{f}: {text}");
        }
    }
    // repro.sh leaves nothing beside it.
    let before = files(&cwd.join("repro"));
    if cwd.join("repro/repro.sh").exists() {
        let st = Command::new("sh")
            .arg(cwd.join("repro/repro.sh"))
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "{}",
            String::from_utf8_lossy(&st.stdout)
        );
        assert_eq!(
            files(&cwd.join("repro")).keys().collect::<Vec<_>>(),
            before.keys().collect::<Vec<_>>()
        );
    }
    intact(&cwd, &theirs, "after");
}

fn sweep_spec(dir: &Path) -> PathBuf {
    let zlib = root().join("target/inputs/zlib");
    let p = dir.join("s.toml");
    std::fs::write(
        &p,
        format!(
            "corpus = [\"{0}/adler32.c\"]\nstrategy = \"random\"\ntrials = 2\nseed = 1\n",
            zlib.display()
        ),
    )
    .unwrap();
    p
}

#[test]
fn sweeps_hunts_and_their_merges_write_only_into_folders_they_made() {
    let cwd = folder("sweep");
    let spec = sweep_spec(&cwd);
    let spec = spec.to_str().unwrap();
    let theirs = users_files(
        &cwd.join("out"),
        &[("sweep-0-of-1.jsonl", "{\"mine\":1}\n")],
    );
    let (ok, text) = passlab(&cwd, &["sweep", spec, "--out", "out"], None);
    assert!(
        !ok && text.contains("holds files passlab did not write"),
        "{text}"
    );
    let (ok, text) = passlab(&cwd, &["sweep", spec, "--out", "out", "--replace"], None);
    assert!(!ok && text.contains("was there before"), "{text}");
    intact(&cwd.join("out"), &theirs, "sweep");
    // Its own folder; then the merge's report into a folder of the user's.
    let (ok, text) = passlab(&cwd, &["sweep", spec, "--out", "own"], None);
    assert!(ok, "{text}");
    let report = users_files(&cwd.join("report"), &[("report.txt", "mine\n")]);
    let (ok, text) = passlab(&cwd, &["sweep", "merge", "own", "--out", "report"], None);
    assert!(
        !ok && text.contains("holds files passlab did not write"),
        "{text}"
    );
    intact(&cwd.join("report"), &report, "sweep merge");
    // Merged twice into its own report folder: the second replaces the first.
    for _ in 0..2 {
        let (ok, text) = passlab(&cwd, &["sweep", "merge", "own"], None);
        assert!(ok, "{text}");
    }
    // A hunt spec's shards and merge, the same way.
    std::fs::write(cwd.join("t.c"), PROGRAM).unwrap();
    std::fs::write(
        cwd.join("h.toml"),
        "name = \"h\"\ncorpus = [\"t.c\"]\npipelines = [\"O2\"]\nreduce = false\n",
    )
    .unwrap();
    let theirs = users_files(&cwd.join("hout"), &[("hunt-0-of-1.jsonl", "mine\n")]);
    let (ok, text) = passlab(&cwd, &["hunt", "h.toml", "--out", "hout"], None);
    assert!(
        !ok && text.contains("holds files passlab did not write"),
        "{text}"
    );
    intact(&cwd.join("hout"), &theirs, "hunt");
    let (ok, text) = passlab(&cwd, &["hunt", "h.toml", "--out", "hown"], None);
    assert!(ok, "{text}");
    let (ok, text) = passlab(&cwd, &["hunt", "merge", "hown", "--out", "report"], None);
    assert!(
        !ok && text.contains("holds files passlab did not write"),
        "{text}"
    );
    intact(&cwd.join("report"), &report, "hunt merge");
    let (ok, text) = passlab(&cwd, &["hunt", "merge", "hown"], None);
    assert!(ok, "{text}");
}

#[test]
fn a_file_is_replaced_only_if_passlab_wrote_it() {
    let cwd = folder("files");
    let names = [
        "m.ll",
        "s.plab",
        "f.s",
        "chart.svg",
        "page.html",
        "remarks.html",
        "run.txt",
    ];
    let theirs: Vec<(&str, &str)> = names.iter().map(|n| (*n, "the user's\n")).collect();
    let theirs = users_files(&cwd, &theirs);
    let setup = ":module m --lang c\nint f(int x) { int s = 0; for (int i = 0; i < x; i++) s += i; return s; }\nint main(void) { return f(3) == 3 ? 0 : 1; }\n.\n:instrument timing\n:instrument remarks\n:instrument explore\n:run O2\n";
    let writes = [
        ":save m.ll",
        ":export s.plab",
        ":asm f --out f.s",
        ":plot timing --out chart.svg",
        ":explore --out page.html",
        ":report remarks source --out remarks.html",
        ":exec --out run.txt",
    ];
    let (_, text) = run(&cwd, &format!("{setup}{}\n", writes.join("\n")));
    for name in names {
        let refused = text
            .lines()
            .any(|l| l.contains(name) && l.contains("passlab did not write it"));
        assert!(refused, "{name} was not refused:\n{text}");
    }
    intact(&cwd, &theirs, "every writer");
    // New files: written, and written again (a script run twice).
    let new: Vec<String> = writes
        .iter()
        .zip(names)
        .map(|(w, n)| w.replace(n, &format!("new-{n}")))
        .collect();
    for round in 0..2 {
        let (ok, text) = run(&cwd, &format!("{setup}{}\n", new.join("\n")));
        assert!(ok, "round {round}: {text}");
    }
    for n in names {
        assert!(cwd.join(format!("new-{n}")).exists(), "new-{n}");
    }
    // A file passlab wrote that the user changed since is theirs now.
    std::fs::write(cwd.join("new-m.ll"), "; edited by hand\n").unwrap();
    let (ok, text) = run(&cwd, &format!("{setup}:save new-m.ll\n"));
    assert!(
        !ok && text.contains("passlab did not write it (or it changed since)"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("new-m.ll")).unwrap(),
        "; edited by hand\n"
    );
    // The REPL's charts: a file of the user's of the same name stays.
    let charts = cwd.join("charts");
    let mine = users_files(
        &charts,
        &[("01-pass-timing-self-time-of-the.svg", "mine\n")],
    );
    let (_, text) = passlab(
        &cwd,
        &["run", "--charts", "charts", "-"],
        Some(&format!("{setup}:plot timing\n")),
    );
    assert!(text.contains("not written"), "{text}");
    intact(&charts, &mine, "charts");
}
