//! A panic inside a command (forced by the debug builds' hook
//! `PASSLAB_PANIC_AT`) is an error naming the command in each front end of
//! this crate: a script goes on with its next line, the REPL with the next
//! thing typed, `passlab sweep` stops with the unit named; and what the
//! command was changing is as it was before it. The kernel's side is in
//! kernel/tests/jupyter/test_passlab.py; the session's, for every kind of
//! command, in tests/panic_boundary.rs.

// The hook compiles to nothing in release builds (`cargo test --release`):
// there is no panic to inject, so no test either.
#![cfg(debug_assertions)]

use rexpect::session::spawn_command;
use std::path::{Path, PathBuf};
use std::process::Command;

fn folder(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const SOURCE: &str = "int f(int x) { int y = x * 2; return y + 0; }";

#[test]
fn a_script_goes_on_after_a_panic_and_the_module_is_as_it_was() {
    let dir = folder("panic-script");
    let script = dir.join("s.plab");
    std::fs::write(
        &script,
        format!(":module m --lang c\n{SOURCE}\n.\n:show\n:run instcombine\n:show\n:modules\n"),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_passlab"))
        .args(["run", "--keep-going"])
        .arg(&script)
        .env("PASSLAB_PANIC_AT", "after::run")
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    // Exit 1 (a line failed), not a crash.
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        err.contains("s.plab:5: error: internal error in :run: injected panic at after::run"),
        "{err}"
    );
    assert!(err.contains("the session is as it was before it"), "{err}");
    // The two :show print the same module: :run's change was rolled back.
    let shown: Vec<&str> = out.split("; ModuleID").skip(1).collect();
    assert_eq!(shown.len(), 2, "{out}");
    let module = |t: &str| t.split("\nmodules").next().unwrap_or("").trim().to_string();
    assert_eq!(module(shown[0]), module(shown[1]), "{out}");
    assert!(shown[0].contains("mul nsw i32"), "{out}");
    assert!(
        out.contains("modules"),
        "the line after the panic did not run: {out}"
    );
}

#[test]
fn the_repl_goes_on_after_a_panic_and_the_buffer_is_not_made() -> Result<(), rexpect::error::Error>
{
    let home = folder("panic-home");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_passlab"));
    cmd.env("HOME", &home)
        .env("TERM", "xterm")
        .env("PASSLAB_PANIC_AT", "after::buffer")
        .env("RUST_BACKTRACE", "0");
    let mut p = spawn_command(cmd, Some(30_000))?;
    let settle = || std::thread::sleep(std::time::Duration::from_millis(300));
    p.exp_string("passlab> ")?;
    settle();
    p.send_line(":buffer a i32[4] = range")?;
    p.exp_string("internal error in :buffer: injected panic at after::buffer")?;
    settle();
    // An empty table: a row for `a` would widen it.
    p.send_line(":buffers")?;
    p.exp_string("| name   contents |")?;
    settle();
    p.send_line(":module m --lang llvm")?;
    settle();
    p.send_line("define i32 @one() {")?;
    p.send_line("  ret i32 1")?;
    p.send_line("}")?;
    p.send_line(".")?;
    p.exp_string("module m: 1 function,")?;
    settle();
    p.send_line(":call one")?;
    p.exp_string("one() = 1")?;
    p.send_line(":quit")?;
    p.exp_eof()?;
    Ok(())
}

#[test]
fn a_sweep_stops_with_the_unit_named() {
    let dir = folder("panic-sweep");
    std::fs::write(dir.join("a.c"), SOURCE).unwrap();
    let spec = dir.join("spec.toml");
    std::fs::write(
        &spec,
        "corpus = [\"a.c\"]\nstrategy = \"random\"\ntrials = 2\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_passlab"))
        .arg("sweep")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .env("PASSLAB_PANIC_AT", "sweep::unit")
        .env("RUST_BACKTRACE", "0")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("JOB_COMPLETION_INDEX")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("internal error in the sweep's unit")
            && text.contains("injected panic at sweep::unit"),
        "{text}"
    );
}
