//! Interrupting a pipeline: LLVM's passes stop at the next optional one, a
//! sequential before its next element, and the module is as it was. In a
//! file of its own, as tests/interrupt.rs: the request is process-wide.

use passlab::{pipeline, Module};

#[test]
fn an_interrupt_stops_a_pipeline_and_the_module_stays_as_it_was() {
    use passlab::instrument::FnInstrument;
    use passlab::{ErrorKind, PassContext};
    use std::rc::Rc;
    let mut m = Module::from_c(
        "static int sq(int x) { return x * x; }\nint f(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += sq(a[i]); return s; }",
        "loop.c",
    )
    .unwrap();
    let before = m.print();
    // An interrupt that arrives while LLVM runs sroa (deterministic: the
    // instrument requests it from inside the pipeline).
    let trigger = FnInstrument::new("trigger").on_before(|_, run| {
        if run.name() == "sroa" {
            passlab::interrupt::request();
        }
        Ok(())
    });
    let e = {
        let _g = PassContext::inherit()
            .with_instrument(Rc::new(trigger))
            .enter()
            .unwrap();
        pipeline::parse("default<O2>")
            .unwrap()
            .apply(&mut m)
            .unwrap_err()
    };
    assert_eq!(e.kind(), ErrorKind::Interrupted, "{e}");
    assert!(
        e.to_string()
            .starts_with("interrupted during default<O2> (before "),
        "{e}"
    );
    assert_eq!(m.print(), before);
    // A pending request stops a sequential before its next pass, and an
    // LLVM pipeline with no instruments once interrupts are watched.
    passlab::interrupt::watch();
    for text in ["mem2reg,instcombine", "default<O2>"] {
        let e = pipeline::parse(text).unwrap().apply(&mut m).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Interrupted, "{text}: {e}");
        assert_eq!(m.print(), before);
    }
    // Cleared, the same pipeline runs.
    passlab::interrupt::clear();
    pipeline::parse("default<O2>")
        .unwrap()
        .apply(&mut m)
        .unwrap();
    assert_ne!(m.print(), before);
}
