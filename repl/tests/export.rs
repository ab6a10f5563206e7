//! `:export` round trip: a session's commands that succeeded, written as a
//! script and replayed by `passlab run` in another folder, rebuild the same
//! modules (the same IR, byte for byte) and the same stack of pass
//! contexts.

use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `script` on `passlab run -` in `dir`: (standard output, errors).
fn run_in(dir: &Path, script: &str) -> (String, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_passlab"))
        .args(["run", "--keep-going", "-"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Commands printing what the replayed session must agree on: each
/// module's IR (saved as `PREFIX-NAME.ll`), the context stack, the modules.
fn state(prefix: &Path) -> String {
    let mut out = String::new();
    for name in ["m", "z", "m2"] {
        out.push_str(&format!(
            ":use {name}\n:save {}-{name}.ll\n",
            prefix.display()
        ));
    }
    out + ":context\n:modules\n"
}

#[test]
fn an_exported_session_replays_to_the_same_modules_and_contexts() {
    let base = std::env::temp_dir().join(format!("passlab-export-{}", std::process::id()));
    let session_dir = base.join("session");
    let elsewhere = base.join("elsewhere");
    std::fs::create_dir_all(session_dir.join("inputs")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    // An input only the session's folder has: the replay, run elsewhere,
    // finds it through the :path line the export writes.
    std::fs::write(
        session_dir.join("inputs/twice.c"),
        "int twice(int x) { int y = x; return y + y; }\n",
    )
    .unwrap();

    let session = "\
:module scratch --lang c
int g(void) { return 1; }
.
:reset
:load inputs/twice.c zlib/adler32.c as z
:with opt_level=3 disabled=licm
:run
:module m --lang c
int f(int x) {
  return x * 2 + 0;
}
.
:nosuch command
:pass cleanup = mem2reg,instcombine
:run cleanup
:run no-such-pass
:with config.llvm.loop_unrolling=false
:with opt_level=1
:end
:copy m2
:run sroa
:undo
:run instcombine
:call f 21
:export session.plab
";
    let (first, first_errors) = run_in(
        &session_dir,
        &format!("{session}{}", state(&session_dir.join("a"))),
    );
    assert!(first.contains("f(21) = 42"), "{first}");
    assert_eq!(first_errors.lines().count(), 2, "{first_errors}");
    let script = std::fs::read_to_string(session_dir.join("session.plab")).unwrap();
    // What failed and what came before :reset is not in the script.
    assert!(!script.contains("nosuch"), "{script}");
    assert!(!script.contains("no-such-pass"), "{script}");
    assert!(!script.contains("scratch"), "{script}");
    assert!(
        script.contains("int f(int x) {\n  return x * 2 + 0;\n}\n.\n"),
        "{script}"
    );

    let (second, second_errors) = run_in(
        &elsewhere,
        &format!("{script}{}", state(&elsewhere.join("b"))),
    );
    assert!(second.contains("f(21) = 42"), "{second}");
    assert_eq!(second_errors, "", "the replay failed");
    for name in ["m", "z", "m2"] {
        let a = std::fs::read_to_string(session_dir.join(format!("a-{name}.ll"))).unwrap();
        let b = std::fs::read_to_string(elsewhere.join(format!("b-{name}.ll"))).unwrap();
        assert!(a.len() > 100, "{name}: {a}");
        assert_eq!(a, b, "module {name} differs after the replay");
    }
    // The context stack and the module list, printed last by both.
    let tail = |out: &str| out[out.find("pass contexts, outermost first").unwrap()..].to_string();
    assert_eq!(tail(&first), tail(&second));
    assert!(tail(&first).contains("config.llvm.loop_unrolling=false"));
    std::fs::remove_dir_all(&base).unwrap();
}
