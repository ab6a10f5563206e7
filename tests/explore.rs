//! The explore instrument on real runs: every pass recorded with its
//! nesting, each function's versions replaying to the IR as it ends.

use passlab::instrument::Explore;
use passlab::{pipeline, Module, PassContext};
use std::rc::Rc;

#[test]
fn records_every_pass_and_each_functions_versions() {
    // sq is internal and not noinline (clang's -O0 would mark it so):
    // the inliner inlines it and deletes it.
    let ir = "define internal i32 @sq(i32 %x) {\n  %m = mul i32 %x, %x\n  ret i32 %m\n}\n\
              define i32 @f(i32 %a) {\nentry:\n  %s = alloca i32\n  store i32 0, ptr %s\n  br label %loop\n\
              loop:\n  %i = phi i32 [ 0, %entry ], [ %n, %loop ]\n  %q = call i32 @sq(i32 %i)\n\
              %v = load i32, ptr %s\n  %w = add i32 %v, %q\n  store i32 %w, ptr %s\n\
              %n = add i32 %i, 1\n  %c = icmp slt i32 %n, %a\n  br i1 %c, label %loop, label %done\n\
              done:\n  %r = load i32, ptr %s\n  ret i32 %r\n}\n\
              define i32 @g(i32 %x) {\n  %y = add i32 %x, 0\n  ret i32 %y\n}\n";
    let mut m = Module::from_ir(ir, "t.ll").unwrap();
    let start = m.print_function("f").unwrap();
    let explore = Rc::new(Explore::new());
    {
        let _g = PassContext::inherit()
            .with_instrument(explore.clone())
            .enter()
            .unwrap();
        pipeline::parse("default<O2>")
            .unwrap()
            .apply(&mut m)
            .unwrap();
    }
    let r = explore.recording();
    assert!(r.passes.len() > 50, "{}", r.passes.len());
    assert_eq!(r.passes[0].depth, 0);
    assert!(r.passes.iter().skip(1).all(|p| p.parent.is_some()));
    let f = r.function("f").unwrap();
    let log = &r.functions[f];
    assert!(log.versions.len() >= 3);
    // Replaying the edits gives the function as it is now.
    assert_eq!(log.initial, start);
    assert_eq!(
        log.text_at(log.versions.len()),
        m.print_function("f").unwrap()
    );
    let now = m.stats();
    let f_now = now.per_function.iter().find(|s| s.name == "f").unwrap();
    assert_eq!(log.instructions_after, f_now.instructions);
    assert_eq!(log.instructions_before, 13);
    // sq was inlined everywhere and deleted.
    let sq = &r.functions[r.function("sq").unwrap()];
    assert!(sq.versions.last().unwrap().deleted);
    assert_eq!(sq.instructions_after, 0);
    // The passes on f include function passes on f and the module
    // passes above them; each pass that changed f is among them.
    let on_f = r.passes_on(f);
    for v in &log.versions {
        assert!(on_f.contains(&(v.pass as usize)));
    }
    let (ran, changed) = r.counts(f);
    assert!(ran > changed && changed == log.versions.len());
}
