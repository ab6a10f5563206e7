//! Bug hunts over C files with bugs planted by the test plugin
//! (tests/plugin/planted_bugs.cpp): the hunt classifies each run, bisects
//! the miscompile to the planted pass and its function, reduces each
//! finding (a miscompile, a crash that costs the worker, a fatal error)
//! into a reproducer whose script shows the bug without passlab; an
//! interrupted hunt keeps what it checked and finishes when run again.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// tests/plugin/planted_bugs.cpp built with clang++-19
/// (scripts/test-plugin.sh, which keeps the build in the user's cache).
fn plugin() -> PathBuf {
    let so = root().join("target/test-plugin/hunt-planted_bugs.so");
    let status = Command::new("sh")
        .arg(root().join("scripts/test-plugin.sh"))
        .arg("planted_bugs")
        .arg(&so)
        .status()
        .unwrap();
    assert!(status.success(), "building the plugin failed");
    so
}

fn passlab(args: &[&str]) -> (bool, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_passlab"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr),
    )
}

fn records(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_hunt_finds_bisects_and_reduces_planted_bugs() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hunt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let corpus = root().join("repl/tests/hunt");
    let spec = dir.join("planted.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"planted\"\ncorpus = [\"{}/*.c\"]\npipelines = [\"O2\", \"planted-sdiv\", \"planted-crash\", \"planted-fatal\"]\n\
             plugins = [\"{}\"]\ntimeout = 5\nreduce = true\nreduce_budget = 60\njobs = 2\n",
            corpus.display(),
            plugin().display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let (ok, text) = passlab(&[
        "hunt",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    let recs = records(&out.join("hunt-0-of-1.jsonl"));
    let check = |program: &str, pipeline: &str| -> Value {
        recs.iter()
            .rev()
            .find(|r| {
                r["kind"] == "check"
                    && r["pipeline"] == pipeline
                    && r["program"].as_str().unwrap().ends_with(program)
            })
            .unwrap_or_else(|| panic!("no check of {program} {pipeline}:\n{text}"))
            .clone()
    };
    // Nothing wrong with O2; the planted passes show where they should.
    for p in ["sums.c", "halves.c", "digits.c"] {
        assert_eq!(check(p, "O2")["verdict"], "same", "{p}");
    }
    let m = check("halves.c", "planted-sdiv");
    assert_eq!(
        (
            m["verdict"].as_str(),
            m["pass"].as_str(),
            m["function"].as_str()
        ),
        (Some("miscompile"), Some("planted-sdiv"), Some("quarter")),
        "{m}"
    );
    assert_eq!(check("sums.c", "planted-sdiv")["verdict"], "same");
    let c = check("digits.c", "planted-crash");
    assert_eq!(
        (c["verdict"].as_str(), c["pass"].as_str()),
        (Some("crash"), Some("planted-crash")),
        "{c}"
    );
    let f = check("digits.c", "planted-fatal");
    assert_eq!(f["verdict"], "fatal error", "{f}");
    assert!(
        f["signature"]
            .as_str()
            .unwrap()
            .contains("planted-fatal: a udiv"),
        "{f}"
    );
    // Each finding reduced once, to a few instructions, and its
    // reproducer shows the bug with opt-19 (and lli-19).
    let findings: Vec<&Value> = recs.iter().filter(|r| r["kind"] == "finding").collect();
    assert_eq!(findings.len(), 3, "{findings:?}");
    for f in findings {
        let after = f["instructions_after"].as_u64().unwrap();
        assert!(after <= 12, "{f}");
        assert!(
            after * 2 <= f["instructions_before"].as_u64().unwrap(),
            "{f}"
        );
        assert_eq!(f["shows_bug_without_passlab"], true, "{f}");
        let script = out.join(f["reproducer"].as_str().unwrap()).join("repro.sh");
        let run = Command::new("sh").arg(&script).output().unwrap();
        assert!(
            run.status.success(),
            "{} does not show the bug: {}",
            script.display(),
            String::from_utf8_lossy(&run.stdout)
        );
    }
    let (ok, text) = passlab(&["hunt", "merge", out.to_str().unwrap()]);
    assert!(ok, "{text}");
    for pass in ["planted-sdiv", "planted-crash", "planted-fatal"] {
        assert!(text.contains(pass), "{text}");
    }
    // Run again: nothing to check or reduce.
    let (ok, text) = passlab(&[
        "hunt",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        ok && text.contains("3 programs (3 done before), 0 checks")
            && text.contains("0 findings reduced"),
        "{text}"
    );
}

#[test]
fn an_interrupted_hunt_keeps_its_checks_and_finishes_when_run_again() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hunt-int-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("long.toml");
    std::fs::write(&spec, "csmith = { seeds = [1, 12] }\npipelines = [\"O1\", \"O2\"]\noracle = \"jit-o0\"\nreduce = false\njobs = 1\n").unwrap();
    let out = dir.join("out");
    let file = out.join("hunt-0-of-1.jsonl");
    let child = Command::new(env!("CARGO_BIN_EXE_passlab"))
        .args([
            "hunt",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let done = |f: &Path| records(f).iter().filter(|r| r["kind"] == "program").count();
    let start = Instant::now();
    while done(&file) < 3 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "3 programs not checked in 2 minutes"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    let (status, said) = (output.status, String::from_utf8_lossy(&output.stderr));
    // How many programs finish between the third and the signal's landing
    // depends on the machine's speed, so no upper bound below all twelve:
    // what is checked is that the run says what it did. Interrupted, it
    // says so and keeps what it checked (at least the three seen); if it
    // had finished all twelve first, it ended as a finished run does.
    let kept = done(&file);
    assert!((3..=12).contains(&kept), "{status}, {kept} programs kept");
    if status.success() {
        assert_eq!(kept, 12, "a run that was not interrupted did all: {said}");
    } else {
        assert!(
            said.contains("(programs checked so far are kept)"),
            "{status}, {kept} programs kept: {said}"
        );
    }
    let (ok, text) = passlab(&[
        "hunt",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    assert!(
        text.contains(&format!("12 programs ({kept} done before)")),
        "{text}"
    );
    let (ok, text) = passlab(&["hunt", "merge", out.to_str().unwrap()]);
    assert!(ok, "{text}");
}

#[test]
fn a_second_session_running_the_same_hunt_in_one_folder_is_refused() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hunt-two-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("hunt.plab");
    std::fs::write(
        &script,
        ":hunt csmith=1..12 oracle=jit-o0 reduce=no jobs=1 | O1 | O2\n",
    )
    .unwrap();
    let run = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_passlab"));
        c.current_dir(&dir).args(["run", "hunt.plab"]);
        c
    };
    let mut first = run()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The first session's records, once it has checked a program.
    let file = || {
        std::fs::read_dir(dir.join("passlab-hunt"))
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("hunt-0-of-1.jsonl"))
            .find(|f| f.exists())
    };
    let done = |f: &Path| records(f).iter().filter(|r| r["kind"] == "program").count();
    let start = Instant::now();
    let records_file = loop {
        if let Some(f) = file().filter(|f| done(f) >= 1) {
            break f;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no program checked in 2 minutes"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let second = run().output().unwrap();
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{said}");
    assert!(
        said.contains("passlab-hunt/") && said.contains("is in use by another passlab process"),
        "{said}"
    );
    assert!(said.contains("--out DIR"), "{said}");
    // The first one's records are still there, and it goes on.
    assert!(done(&records_file) >= 1);
    assert!(first.try_wait().unwrap().is_none(), "the first hunt ended");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(first.id() as i32, libc::SIGINT) };
    first.wait().unwrap();
    assert!(done(&records_file) >= 1);
    std::fs::remove_dir_all(&dir).unwrap();
}
