//! The panic boundary around every command: a bug (a panic) in a command
//! costs an error naming the command, and the session is as it was before
//! the command. Panics are injected with `PASSLAB_PANIC_AT` (debug builds
//! only: `passlab::error::panic_point`), at the end of a command that
//! succeeded (`after::NAME`: its effects are all there to undo) and inside
//! `Pass::apply` after the passes ran (`pass::apply`). One test: the
//! variable is the process's.

// The hook compiles to nothing in release builds (`cargo test --release`):
// there is no panic to inject, so no test either.
#![cfg(debug_assertions)]

use passlab::session::Session;
use passlab::ErrorKind;

fn state(s: &mut Session) -> String {
    let mut out = String::new();
    for c in [
        ":modules",
        ":buffers",
        ":context",
        ":instruments",
        ":show",
        ":report tune",
    ] {
        out.push_str(
            &s.execute(c)
                .map(|o| o.text())
                .unwrap_or_else(|e| e.to_string()),
        );
    }
    out
}

#[test]
fn a_panic_in_a_command_leaves_the_session_as_it_was() {
    let mut s = Session::new();
    s.execute(":module m --lang c\nint f(int x) { int y = x * 2; return y + 1; }\n.")
        .unwrap();
    s.execute(":buffer b i32[4] = range").unwrap();
    s.execute(":with opt_level=1").unwrap();
    s.execute(":instrument timing").unwrap();
    s.execute(":run mem2reg").unwrap();
    let before = state(&mut s);
    for (point, command) in [
        ("after::run", ":run O2"),
        ("pass::apply", ":run instcombine"),
        ("after::load", ":load examples/gemm.c"),
        (
            "after::module",
            ":module n --lang c\nint g(void) { return 2; }\n.",
        ),
        ("after::copy", ":copy m2"),
        ("after::with", ":with opt_level=3 disabled=licm"),
        ("after::end", ":end"),
        ("after::instrument", ":instrument ir-size"),
        ("after::buffer", ":buffer c f32[8] = ones"),
        // Replacing by name: the one replaced comes back.
        ("after::buffer", ":buffer b i32[4] = ones"),
        (
            "after::module",
            ":module m --lang c\nint f(int x) { return 0; }\n.",
        ),
        ("after::load", ":load examples/gemm.c as m"),
        ("after::tune", ":tune trials=3 seed=1"),
        ("after::undo", ":undo"),
    ] {
        std::env::set_var("PASSLAB_PANIC_AT", point);
        let e = s.execute(command).unwrap_err();
        std::env::remove_var("PASSLAB_PANIC_AT");
        let name = command.split_whitespace().next().unwrap();
        assert_eq!(e.kind(), ErrorKind::Internal, "{point}: {e}");
        let text = e.to_string();
        assert!(
            text.starts_with(&format!(
                "internal error in {name}: injected panic at {point}"
            )),
            "{point}: {text}"
        );
        assert_eq!(state(&mut s), before, "{point}: the session changed");
    }
    // `:tune apply` replaces the module with a copy and runs on it.
    s.execute(":tune trials=3 seed=1").unwrap();
    let before = state(&mut s);
    std::env::set_var("PASSLAB_PANIC_AT", "after::tune");
    let e = s.execute(":tune apply").unwrap_err();
    std::env::remove_var("PASSLAB_PANIC_AT");
    assert_eq!(e.kind(), ErrorKind::Internal, "{e}");
    assert_eq!(state(&mut s), before, ":tune apply: the session changed");
    // And it goes on: the same commands work without the panic (the undo
    // entry of the first :run is still there).
    s.execute(":undo").unwrap();
    s.execute(":run O2").unwrap();
    assert!(s.execute(":call f 20").unwrap().text().contains("41"));
}
