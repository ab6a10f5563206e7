//! An LLVM pass that reports a fatal error (LLVM 19's instcombine, run by
//! that name, checks that it reached a fixpoint and gives up otherwise)
//! does not end the process: the pass fails, the module is as it was, and
//! later runs work.

mod common;

use passlab::{pipeline, Module};

/// An ordering found by a sweep over zlib's trees.c after which instcombine
/// gives up.
const ORDERING: &str = "globaldce,ipsccp,instcombine,memcpyopt,indvars,inline,ipsccp,loop-rotate,jump-threading,instcombine,function-attrs,indvars,mem2reg,sroa,gvn,jump-threading,bdce,globalopt,memcpyopt,dse,jump-threading,function-attrs,adce,instsimplify,loop-rotate,simplifycfg";

#[test]
fn a_fatal_error_fails_the_pass_and_keeps_the_module() {
    let mut m = Module::load(&[common::inputs::zlib_source("trees.c")]).unwrap();
    // The IR text without the `; preds = ...` comments: a restored module's
    // use lists (which order those) are not kept by snapshots.
    let ir = |m: &Module| -> String {
        m.print()
            .lines()
            .map(|l| l.split("; preds =").next().unwrap_or(l).trim_end())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let before = ir(&m);
    let e = pipeline::parse(ORDERING)
        .unwrap()
        .apply(&mut m)
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("LLVM ERROR: Instruction Combining did not reach a fixpoint"),
        "{text}"
    );
    assert!(
        text.contains("instcombine<no-verify-fixpoint>"),
        "the message says what does not check: {text}"
    );
    let after = ir(&m);
    if let Some((a, b)) = before.lines().zip(after.lines()).find(|(a, b)| a != b) {
        panic!("the module changed:\n  before: {a}\n  after:  {b}");
    }
    assert_eq!(after.len(), before.len());
    // The same pipeline as LLVM's own pipelines spell instcombine runs.
    let fixed = ORDERING.replace("instcombine", "instcombine<no-verify-fixpoint>");
    pipeline::parse(&fixed).unwrap().apply(&mut m).unwrap();
    assert!(m.instruction_count() < 4646 / 2 + 200);
    pipeline::parse("O2").unwrap().apply(&mut m).unwrap();
    m.verify().unwrap();
}

/// A fatal error outside a run — here clang's own, while compiling C in
/// process (`#pragma clang __debug llvm_fatal_error` calls LLVM's
/// `report_fatal_error` from clang's preprocessor) — fails that command and
/// nothing else: the session's modules are there and work after it, and it
/// can happen again.
#[test]
fn a_fatal_error_outside_a_run_fails_the_command_only() {
    let mut s = passlab::session::Session::new();
    s.execute(":module keep --lang c\nint sq(int x) { return x * x; }\n.")
        .unwrap();
    for _ in 0..3 {
        let e = s
            .execute(":module fatal --lang c\n#pragma clang __debug llvm_fatal_error\nint g(void) { return 1; }\n.")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("LLVM ERROR: #pragma clang __debug llvm_fatal_error"),
            "{e}"
        );
    }
    let modules = s.execute(":modules").unwrap().text();
    assert!(
        modules.contains("keep") && !modules.contains("fatal"),
        "{modules}"
    );
    s.execute(":run O2").unwrap();
    assert!(s.execute(":call sq 7").unwrap().text().contains("49"));
    // A module compiled after it is sound.
    s.execute(":module other --lang c\nint add(int a, int b) { return a + b; }\n.")
        .unwrap();
    s.execute(":run O2").unwrap();
    assert!(s.execute(":call add 2 3").unwrap().text().contains('5'));
}
