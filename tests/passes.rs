//! The pass infrastructure: gating, required passes, sequentials, contexts,
//! config, the pass kinds, and the transactional rollback. Where the seed
//! documents (TVM's pass infra) give an example, the test follows it.

mod common;

use passlab::pass::{llvm_keys, VERIFY_EACH};
use passlab::{
    console, pipeline, registry, Error, ErrorKind, FunctionPass, Module, ModulePass, Pass,
    PassContext, PassInfo, PassRef, PrintIr, Sequential,
};
use std::sync::{Arc, Mutex};

type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// A module pass that records its name when it runs and changes nothing.
fn recorder(name: &str, opt_level: u32, log: &Log) -> ModulePass {
    recorder_info(PassInfo::new(name, opt_level), log)
}

fn recorder_info(info: PassInfo, log: &Log) -> ModulePass {
    let (log, name) = (log.clone(), info.name.clone());
    ModulePass::new(info, move |_m, _ctx| {
        log.lock().unwrap().push(name.clone());
        Ok(())
    })
}

fn arc(p: impl Pass + 'static) -> PassRef {
    Arc::new(p)
}

fn sum_module() -> Module {
    Module::from_c(common::SUM_C, "sum.c").unwrap()
}

// ---------------------------------------------------------------- gating

#[test]
fn sequential_gates_by_opt_level_required_and_disabled() {
    let log = log();
    let seq = Sequential::new(
        "seq",
        vec![
            arc(recorder("p1", 1, &log)),
            arc(recorder("p2", 2, &log)),
            arc(recorder("p3", 3, &log)),
        ],
    );
    let mut m = sum_module();
    let run = |ctx: PassContext, m: &mut Module| {
        log.lock().unwrap().clear();
        (&seq as &dyn Pass).apply_in(m, &ctx).unwrap();
        entries(&log)
    };
    // opt_level <= ctx.opt_level runs.
    assert_eq!(run(PassContext::new(), &mut m), ["p1", "p2"]);
    assert_eq!(
        run(PassContext::new().with_opt_level(3), &mut m),
        ["p1", "p2", "p3"]
    );
    assert_eq!(
        run(PassContext::new().with_opt_level(0), &mut m),
        Vec::<String>::new()
    );
    // Required runs whatever its level.
    assert_eq!(
        run(
            PassContext::new().with_opt_level(1).with_required(["p3"]),
            &mut m
        ),
        ["p1", "p3"]
    );
    // Disabled never runs, even if also required.
    let ctx = PassContext::new()
        .with_opt_level(3)
        .with_disabled(["p2"])
        .with_required(["p2"]);
    assert_eq!(run(ctx, &mut m), ["p1", "p3"]);
}

#[test]
fn calling_a_pass_directly_ignores_gating() {
    let log = log();
    let p3 = recorder("direct-p3", 3, &log);
    let mut m = sum_module();
    let _scope = PassContext::new()
        .with_opt_level(0)
        .with_disabled(["direct-p3"])
        .enter()
        .unwrap();
    (&p3 as &dyn Pass).apply(&mut m).unwrap();
    assert_eq!(entries(&log), ["direct-p3"]);
}

#[test]
fn sequential_defaults_match_tvm() {
    let seq = Sequential::new("sequential", vec![]);
    assert_eq!(seq.info().opt_level, 0);
    assert_eq!(PassContext::new().opt_level(), 2);
}

// ---------------------------------------------------------------- required passes

#[test]
fn required_passes_come_from_the_registry_and_run_first_ungated() {
    let log = log();
    let l = log.clone();
    registry::register_pass(move || arc(recorder_info(PassInfo::new("req-base", 3), &l))).unwrap();
    let l = log.clone();
    registry::register_pass(move || {
        arc(recorder_info(
            PassInfo::new("req-mid", 3).requires(["req-base"]),
            &l,
        ))
    })
    .unwrap();
    let top = recorder_info(PassInfo::new("req-top", 1).requires(["req-mid"]), &log);
    let seq = Sequential::new("s", vec![arc(top)]);
    let mut m = sum_module();
    // req-mid and req-base have opt level 3 > 1, yet run: required passes are not gated.
    (&seq as &dyn Pass)
        .apply_in(&mut m, &PassContext::new().with_opt_level(1))
        .unwrap();
    assert_eq!(entries(&log), ["req-base", "req-mid", "req-top"]);
}

#[test]
fn unknown_required_pass_is_an_error_with_suggestions() {
    let log = log();
    let p = recorder_info(
        PassInfo::new("needs-typo", 0).requires(["instcombin"]),
        &log,
    );
    let seq = Sequential::new("s", vec![arc(p)]);
    let mut m = sum_module();
    let err = (&seq as &dyn Pass).apply(&mut m).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown pass 'instcombin'; did you mean 'instcombine'?"
    );
    assert!(entries(&log).is_empty());
}

#[test]
fn dependency_cycles_are_errors() {
    let log = log();
    let l = log.clone();
    registry::register_pass(move || {
        arc(recorder_info(
            PassInfo::new("cyc-x", 0).requires(["cyc-y"]),
            &l,
        ))
    })
    .unwrap();
    let l = log.clone();
    registry::register_pass(move || {
        arc(recorder_info(
            PassInfo::new("cyc-y", 0).requires(["cyc-x"]),
            &l,
        ))
    })
    .unwrap();
    let seq = Sequential::new("s", vec![registry::get_pass("cyc-x").unwrap()]);
    let mut m = sum_module();
    let err = (&seq as &dyn Pass).apply(&mut m).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::DependencyCycle);
    assert_eq!(
        err.to_string(),
        "dependency cycle in required passes: cyc-x -> cyc-y -> cyc-x"
    );
    assert!(entries(&log).is_empty());
}

// ---------------------------------------------------------------- sequentials

#[test]
fn empty_sequential_is_identity() {
    let mut m = sum_module();
    let (text, fp) = (m.print(), m.fingerprint());
    (&Sequential::new("empty", vec![]) as &dyn Pass)
        .apply(&mut m)
        .unwrap();
    assert_eq!(m.fingerprint(), fp);
    assert_eq!(m.print(), text);
}

#[test]
fn nested_sequentials_under_scoped_contexts() {
    let log = log();
    let inner = Sequential::new(
        "inner",
        vec![arc(recorder("n-a", 1, &log)), arc(recorder("n-c", 3, &log))],
    );
    let outer = Sequential::new("outer", vec![arc(inner), arc(recorder("n-b", 2, &log))]);
    let mut m = sum_module();
    {
        let _o3 = PassContext::inherit().with_opt_level(3).enter().unwrap();
        (&outer as &dyn Pass).apply(&mut m).unwrap();
        assert_eq!(entries(&log), ["n-a", "n-c", "n-b"]);
        log.lock().unwrap().clear();
        {
            // The nested scope inherits opt level 3 and adds a disabled pass.
            let _inner = PassContext::inherit()
                .with_disabled(["n-c"])
                .enter()
                .unwrap();
            assert_eq!(PassContext::current().opt_level(), 3);
            (&outer as &dyn Pass).apply(&mut m).unwrap();
            assert_eq!(entries(&log), ["n-a", "n-b"]);
        }
        log.lock().unwrap().clear();
        // Back in the outer scope: n-c runs again.
        (&outer as &dyn Pass).apply(&mut m).unwrap();
        assert_eq!(entries(&log), ["n-a", "n-c", "n-b"]);
    }
    log.lock().unwrap().clear();
    // Default context (opt level 2).
    (&outer as &dyn Pass).apply(&mut m).unwrap();
    assert_eq!(entries(&log), ["n-a", "n-b"]);
}

#[test]
fn seed_example_pipeline_with_print_ir() {
    // The seed's Python example: a sequential of standard passes with PrintIR
    // after one of them.
    let seq = Sequential::new(
        "seed",
        vec![
            registry::get_pass("mem2reg").unwrap(),
            registry::get_pass("instcombine").unwrap(),
            arc(PrintIr::new("after instcombine")),
            registry::get_pass("gvn").unwrap(),
        ],
    );
    let mut m = sum_module();
    let before = m.instruction_count();
    let _o3 = PassContext::inherit().with_opt_level(3).enter().unwrap();
    let (result, printed) = console::capture(|| (&seq as &dyn Pass).apply(&mut m));
    result.unwrap();
    assert!(printed.starts_with("; after instcombine\n"), "{printed}");
    assert!(printed.contains("define dso_local i32 @sum"), "{printed}");
    assert!(
        !printed.contains("alloca"),
        "mem2reg ran before PrintIR:\n{printed}"
    );
    assert!(m.instruction_count() < before);
}

// ---------------------------------------------------------------- module and function passes

#[test]
fn module_pass_adds_a_function() {
    // The seed's module pass example: add an `abs` function to the module.
    let add_abs = ModulePass::new(PassInfo::new("add-abs", 2), |m, _ctx| {
        m.with_ir(|ir| {
            let ctx = ir.get_context();
            let i32t = ctx.i32_type();
            let f = ir.add_function("abs", i32t.fn_type(&[i32t.into()], false), None);
            let entry = ctx.append_basic_block(f, "entry");
            let b = ctx.create_builder();
            b.position_at_end(entry);
            let x = f.get_nth_param(0).unwrap().into_int_value();
            let neg = b.build_int_neg(x, "neg").unwrap();
            let is_neg = b
                .build_int_compare(inkwell::IntPredicate::SLT, x, i32t.const_zero(), "isneg")
                .unwrap();
            let r = b.build_select(is_neg, neg, x, "abs").unwrap();
            b.build_return(Some(&r)).unwrap();
        });
        Ok(())
    });
    let mut m = Module::from_ir("", "empty.ll").unwrap();
    (&add_abs as &dyn Pass).apply(&mut m).unwrap();
    assert_eq!(m.defined_functions(), ["abs"]);
    assert_eq!(add_abs.info().opt_level, 2);
}

#[test]
fn function_pass_skips_marked_and_optnone_functions() {
    let seen = log();
    let s = seen.clone();
    let visit = FunctionPass::new(PassInfo::new("visit", 0), move |f, _ctx| {
        s.lock()
            .unwrap()
            .push(f.get_name().to_string_lossy().into_owned());
        Ok(())
    });
    let mut m = Module::from_ir(
        "define void @a() {\n  ret void\n}\ndefine void @b() {\n  ret void\n}\ndefine void @c() noinline optnone {\n  ret void\n}\ndeclare void @d()\n",
        "fns.ll",
    )
    .unwrap();
    m.mark_skip("b").unwrap();
    (&visit as &dyn Pass).apply(&mut m).unwrap();
    assert_eq!(entries(&seen), ["a"]);
}

#[test]
fn function_pass_may_not_add_or_remove_functions() {
    let adder = FunctionPass::new(PassInfo::new("sneaky-adder", 0), |f, _ctx| {
        use inkwell::values::AsValueRef;
        // The module of `f`, borrowed (not owned) as inkwell sees it.
        // SAFETY: `f` is a live function handed to the pass body.
        let raw = unsafe { llvm_sys::core::LLVMGetGlobalParent(f.as_value_ref()) };
        // SAFETY: `raw` is the live module the pass runs on, its context
        // alive for the call; `ManuallyDrop` keeps this view from disposing
        // the module the `Module` under test owns, and it does not escape
        // the closure.
        let m = std::mem::ManuallyDrop::new(unsafe { inkwell::module::Module::new(raw) });
        if m.get_function("extra").is_none() {
            let ctx = m.get_context();
            let g = m.add_function("extra", ctx.void_type().fn_type(&[], false), None);
            let b = ctx.create_builder();
            b.position_at_end(ctx.append_basic_block(g, "entry"));
            b.build_return(None).unwrap();
        }
        Ok(())
    });
    let mut m = sum_module();
    let text = m.print();
    let err = (&adder as &dyn Pass).apply(&mut m).unwrap_err();
    assert_eq!(
        err.to_string(),
        "function pass sneaky-adder added function 'extra' (function passes must keep the module's functions)"
    );
    assert_eq!(m.print(), text, "rolled back");

    let remover = FunctionPass::new(PassInfo::new("sneaky-remover", 0), |f, _ctx| {
        if f.get_name().to_bytes() == b"twice" {
            // SAFETY: nothing in sum.c calls `twice`, so no IR uses it; `f`
            // is not used again, and `FunctionPass` looks each function up
            // by name when its turn comes, so it holds no stale handle.
            unsafe { f.delete() };
        }
        Ok(())
    });
    let err = (&remover as &dyn Pass).apply(&mut m).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::FunctionSetChanged);
    assert!(
        err.to_string().contains("removed function 'twice'"),
        "{err}"
    );
    assert_eq!(m.print(), text, "rolled back");
}

// ---------------------------------------------------------------- the shipped Rust passes

#[test]
fn fold_int_folds_constants_and_identities() {
    let ir = "define i32 @f(i32 %x) {\n  %a = add i32 2, 3\n  %b = mul i32 %a, 4\n  %c = add i32 %x, 0\n  %d = mul i32 %c, 1\n  %e = and i32 %d, 0\n  %r = add i32 %b, %e\n  %s = add i32 %r, %d\n  ret i32 %s\n}\n";
    let mut m = Module::from_ir(ir, "fold.ll").unwrap();
    registry::get_pass("fold-int")
        .unwrap()
        .apply(&mut m)
        .unwrap();
    let f = m.print_function("f").unwrap();
    assert!(f.contains("%s = add i32 20, %x"), "{f}");
    assert_eq!(m.instruction_count(), 2, "{f}");

    // With identities off, only constant operands fold.
    let mut m = Module::from_ir(ir, "fold.ll").unwrap();
    let _scope = PassContext::inherit()
        .with_config("fold-int.identities", false)
        .unwrap()
        .enter()
        .unwrap();
    registry::get_pass("fold-int")
        .unwrap()
        .apply(&mut m)
        .unwrap();
    let f = m.print_function("f").unwrap();
    assert!(f.contains("%c = add i32 %x, 0"), "{f}");
    assert!(!f.contains("add i32 2, 3"), "{f}");
}

#[test]
fn strip_dead_internals_removes_unreferenced_internals_transitively() {
    let ir = "@used = internal global i32 1\n@dead = internal global i32 2\ndefine internal i32 @leaf() {\n  ret i32 0\n}\ndefine internal i32 @only_from_dead() {\n  %r = call i32 @leaf()\n  ret i32 %r\n}\ndefine i32 @main() {\n  %v = load i32, ptr @used\n  ret i32 %v\n}\n";
    let mut m = Module::from_ir(ir, "dead.ll").unwrap();
    registry::get_pass("strip-dead-internals")
        .unwrap()
        .apply(&mut m)
        .unwrap();
    assert_eq!(m.function_names(), ["main"]);
    let text = m.print();
    assert!(text.contains("@used") && !text.contains("@dead"), "{text}");

    // strip-dead-internals.globals=false keeps globals.
    let mut m = Module::from_ir(ir, "dead.ll").unwrap();
    let ctx = PassContext::new()
        .with_config_text("strip-dead-internals.globals", "false")
        .unwrap();
    registry::get_pass("strip-dead-internals")
        .unwrap()
        .apply_in(&mut m, &ctx)
        .unwrap();
    assert!(m.print().contains("@dead"));
    assert_eq!(m.function_names(), ["main"]);
}

// ---------------------------------------------------------------- LLVM passes

#[test]
fn llvm_pipelines_in_every_form() {
    for text in [
        "instcombine",
        "loop-unroll<O3>",
        "function(loop-mssa(licm))",
        "mem2reg,instcombine,simplifycfg",
        "default<O2>",
    ] {
        let mut m = sum_module();
        let before = m.fingerprint();
        pipeline::parse(text)
            .unwrap()
            .apply(&mut m)
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        m.verify().unwrap();
        if text != "function(loop-mssa(licm))" && text != "loop-unroll<O3>" {
            assert_ne!(m.fingerprint(), before, "{text} changed nothing");
        }
    }
}

#[test]
fn llvm_pipeline_errors_name_what_is_wrong() {
    let err = registry::get_pass("simplifycfg<bogus>").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Pipeline);
    assert_eq!(
        err.to_string(),
        "invalid pipeline 'simplifycfg<bogus>': invalid SimplifyCFG pass parameter 'bogus'"
    );
    let err = registry::get_pass("function(instcombin)").unwrap_err();
    assert!(
        err.to_string().contains("did you mean 'instcombine'"),
        "{err}"
    );
    let err = registry::get_pass("licn").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownPass);
    assert!(err.to_string().contains("'licm'"), "{err}");
    let err = registry::get_pass("trigger-crash-module").unwrap_err();
    assert!(
        err.to_string().contains("aborts the process on purpose"),
        "{err}"
    );
}

#[test]
fn llvm_pass_opt_levels_gate_in_a_sequential() {
    assert_eq!(registry::get_pass("gvn").unwrap().info().opt_level, 2);
    assert_eq!(
        registry::get_pass("default<O3>").unwrap().info().opt_level,
        3
    );
    let mut m = sum_module();
    let seq = pipeline::parse("mem2reg,gvn").unwrap();
    let _o1 = PassContext::inherit().with_opt_level(1).enter().unwrap();
    let ran_o1 = {
        let mut c = m.copy();
        seq.apply(&mut c).unwrap();
        c.print()
    };
    let only_mem2reg = {
        let mut c = m.copy();
        registry::get_pass("mem2reg")
            .unwrap()
            .apply(&mut c)
            .unwrap();
        c.print()
    };
    assert_eq!(
        ran_o1, only_mem2reg,
        "gvn (opt level 2) is skipped at opt level 1"
    );
    seq.apply(&mut m).unwrap();
}

const VEC_C: &str = "void scale(float *restrict a, const float *restrict b, int n) {\n  for (int i = 0; i < n; i++) a[i] = 3.0f * b[i];\n}\n";

#[test]
fn disabled_passes_are_skipped_inside_llvm_pipelines() {
    let o2 = registry::get_pass("default<O2>").unwrap();
    let mut m = Module::from_c(VEC_C, "vec.c").unwrap();
    o2.apply(&mut m).unwrap();
    assert!(
        m.print().contains("<4 x float>"),
        "O2 vectorizes:\n{}",
        m.print()
    );

    let mut m = Module::from_c(VEC_C, "vec.c").unwrap();
    let ctx = PassContext::new().with_disabled(["loop-vectorize"]);
    o2.apply_in(&mut m, &ctx).unwrap();
    assert!(
        !m.print().contains("x float>"),
        "loop-vectorize disabled:\n{}",
        m.print()
    );
}

const CALLS_C: &str = "int work(int *a, int n) {\n  int s = 0;\n  for (int i = 0; i < n; i++) { s += a[i] * a[i]; if (s > 1000) s -= a[i] / 3; else s ^= a[i] << 2; }\n  for (int i = 0; i < n; i++) { s += a[i] % 7; if (s & 1) s *= 3; else s /= 5; }\n  return s;\n}\nint both(int *a, int *b, int n) { return work(a, n) + work(b, n) * 2; }\n";

fn calls_in_both(ctx: &PassContext) -> usize {
    let mut m = Module::from_c(CALLS_C, "calls.c").unwrap();
    // noinline comes from -O0; drop it so that the inliner may decide.
    let text = m.print().replace(" noinline", "");
    m = Module::from_ir(&text, "calls.ll").unwrap();
    registry::get_pass("default<O2>")
        .unwrap()
        .apply_in(&mut m, ctx)
        .unwrap();
    m.print_function("both")
        .unwrap()
        .matches("call i32 @work")
        .count()
}

#[test]
fn llvm_tuning_options_are_config() {
    assert_eq!(
        calls_in_both(&PassContext::new()),
        0,
        "O2's threshold inlines work"
    );
    let stingy = PassContext::new()
        .with_config(llvm_keys::INLINER_THRESHOLD, 0)
        .unwrap();
    assert_eq!(calls_in_both(&stingy), 2, "threshold 0 keeps both calls");
}

#[test]
fn default_pipeline_per_opt_level() {
    let mut o0 = sum_module();
    let mut o2 = sum_module();
    let before = o2.instruction_count();
    pipeline::default_pipeline(0)
        .unwrap()
        .apply(&mut o0)
        .unwrap();
    assert_eq!(o0.instruction_count(), before, "O0 keeps -O0 code as it is");
    let p = pipeline::default_pipeline(PassContext::current().opt_level()).unwrap();
    assert_eq!(p.info().name, "O2");
    let names: Vec<_> = p.children().iter().map(|c| c.info().name.clone()).collect();
    // Exactly LLVM's pipeline, as clang runs it for -O2.
    assert_eq!(names, ["default<O2>"]);
    p.apply(&mut o2).unwrap();
    // (sum.c's 38 instructions become 38 others: the loop vectorized)
    assert_ne!(o2.print(), o0.print());
    assert!(!o2.print().contains("alloca"), "{}", o2.print());
}

// ---------------------------------------------------------------- config

#[test]
fn config_keys_are_declared_and_typed() {
    let err = PassContext::new()
        .with_config("llvm.loop_vectorise", true)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
    let msg = err.to_string();
    assert!(
        msg.starts_with("invalid config option 'llvm.loop_vectorise'; valid options are: "),
        "{msg}"
    );
    assert!(
        msg.contains("llvm.slp_vectorization") && msg.contains(VERIFY_EACH),
        "{msg}"
    );
    assert!(
        msg.ends_with("did you mean 'llvm.loop_vectorization'?"),
        "{msg}"
    );

    let err = PassContext::new()
        .with_config(llvm_keys::INLINER_THRESHOLD, "lots")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "config option 'llvm.inliner_threshold' expects an integer from -1 to 2147483647, got 'lots'"
    );
    let err = PassContext::new()
        .with_config_text(llvm_keys::LOOP_UNROLLING, "maybe")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "config option 'llvm.loop_unrolling' expects a bool (true or false), got 'maybe'"
    );

    let ctx = PassContext::new()
        .with_config_text(llvm_keys::INLINER_THRESHOLD, "500")
        .unwrap();
    assert_eq!(ctx.config_int(llvm_keys::INLINER_THRESHOLD).unwrap(), 500);
    assert!(
        PassContext::new()
            .config_bool(llvm_keys::LOOP_VECTORIZATION)
            .unwrap(),
        "LLVM's default"
    );

    registry::register_config(passlab::ConfigOption::new("test.depth", 4, "a test option"))
        .unwrap();
    let ctx = PassContext::new().with_config("test.depth", 7).unwrap();
    assert_eq!(ctx.config_int("test.depth").unwrap(), 7);
    assert!(
        registry::register_config(passlab::ConfigOption::new("test.depth", 1, "again")).is_err()
    );
}

// ---------------------------------------------------------------- contexts

#[test]
fn context_stack_nesting_and_current() {
    assert_eq!(PassContext::current().opt_level(), 2);
    {
        let _a = PassContext::new()
            .with_opt_level(3)
            .with_disabled(["licm"])
            .enter()
            .unwrap();
        {
            let _b = PassContext::inherit()
                .with_required(["gvn"])
                .enter()
                .unwrap();
            let c = PassContext::current();
            assert_eq!(
                (c.opt_level(), c.disabled().len(), c.required().len()),
                (3, 1, 1)
            );
            assert_eq!(PassContext::stack().len(), 2);
            // A fresh context ignores the enclosing one (TVM's behaviour).
            let _f = PassContext::new().enter().unwrap();
            assert!(PassContext::current().disabled().is_empty());
        }
        let c = PassContext::current();
        assert_eq!(
            (c.opt_level(), c.required().len()),
            (3, 0),
            "inner scope ended"
        );
        assert_eq!(c.summary(), "opt_level=3 disabled=licm");
    }
    assert_eq!(PassContext::stack().len(), 0);
    assert_eq!(PassContext::current().opt_level(), 2);
}

#[test]
fn context_pops_on_panic() {
    let r = std::panic::catch_unwind(|| {
        let _a = PassContext::new().with_opt_level(0).enter().unwrap();
        panic!("boom");
    });
    assert!(r.is_err());
    assert_eq!(PassContext::current().opt_level(), 2);
    assert!(PassContext::stack().is_empty());
}

// ---------------------------------------------------------------- nothing lost

fn failing_after_change(kind: &'static str) -> PassRef {
    arc(ModulePass::new(PassInfo::new(kind, 0), move |m, _ctx| {
        // Damage the module first, so that rollback has something to undo.
        m.with_ir(|ir| {
            for f in ir.get_functions().collect::<Vec<_>>() {
                // SAFETY: every caller passes `sum_module()`, whose two
                // functions (`sum`, `twice`) use no function and are used by
                // none, so no IR refers to a deleted one; each handle was
                // collected before any delete and is used once.
                unsafe { f.delete() }
            }
        });
        match kind {
            "fails" => Err(Error::Invalid("the pass gave up".into())),
            _ => panic!("the pass panicked"),
        }
    }))
}

#[test]
fn a_snapshot_reused_for_an_unchanged_module_still_restores_exactly() {
    let mut m = sum_module();
    let instcombine = pipeline::parse("mem2reg,instcombine").unwrap();
    instcombine.apply(&mut m).unwrap();
    // Nothing left to do: the module is unchanged, its snapshot reused.
    let (text, fp) = (m.print(), m.fingerprint());
    instcombine.apply(&mut m).unwrap();
    assert_eq!(m.fingerprint(), fp);
    let err = failing_after_change("fails").apply(&mut m).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PassFailed);
    assert_eq!(m.print(), text);
    // A module changed outside any pass gets a fresh snapshot.
    m.mark_skip("twice").unwrap();
    let text = m.print();
    assert!(text.contains("passlab-skip"));
    failing_after_change("panics").apply(&mut m).unwrap_err();
    assert_eq!(m.print(), text);
}

#[test]
fn a_step_without_a_snapshot_is_made_again_by_replay_when_it_fails() {
    let start = sum_module();
    let ctx = PassContext::current();
    let steps = vec![pipeline::parse("mem2reg,instcombine").unwrap()];
    let rebuild = || passlab::pass::replay(&start, &steps, &ctx);
    let mut m = rebuild().unwrap();
    let text = m.print();
    // A step that changes nothing says so and keeps the fingerprint.
    let fp = m.fingerprint();
    let stepped = steps[0].apply_step(&mut m, &ctx, fp, rebuild).unwrap();
    assert!(!stepped.changed);
    assert_eq!(stepped.fingerprint, fp);
    // A failing step (after damaging the module) leaves it as it was.
    let err = failing_after_change("fails")
        .apply_step(&mut m, &ctx, fp, rebuild)
        .unwrap_err();
    assert_eq!(err.to_string(), "error in pass fails: the pass gave up");
    assert_eq!(m.print(), text);
    // So does one that panics (a Rust pass's panic is its error).
    let fp = m.fingerprint();
    let err = failing_after_change("panics")
        .apply_step(&mut m, &ctx, fp, rebuild)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "error in pass panics: panicked: the pass panicked"
    );
    assert_eq!(m.print(), text);
    m.verify().unwrap();
    // A stale fingerprint costs a verification and says "changed".
    let stepped = steps[0].apply_step(&mut m, &ctx, 0, rebuild).unwrap();
    assert!(stepped.changed);
    assert_eq!(m.print(), text);
}

#[test]
fn a_failing_pass_leaves_the_module_as_it_was() {
    for kind in ["fails", "panics"] {
        let mut m = sum_module();
        let (text, fp) = (m.print(), m.fingerprint());
        // An LLVM pass changes the IR, then the Rust pass fails.
        let seq = Sequential::new(
            "s",
            vec![
                registry::get_pass("mem2reg").unwrap(),
                failing_after_change(kind),
            ],
        );
        let err = (&seq as &dyn Pass).apply(&mut m).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::PassFailed);
        let expected = match kind {
            "fails" => "error in pass fails: the pass gave up",
            _ => "error in pass panics: panicked: the pass panicked",
        };
        assert_eq!(err.to_string(), expected);
        assert_eq!(m.print(), text);
        assert_ne!(
            m.fingerprint(),
            fp,
            "restored into a fresh context: pointers differ"
        );
        m.verify().unwrap();
        // The module still works.
        pipeline::parse("mem2reg").unwrap().apply(&mut m).unwrap();
    }
}

#[test]
fn ir_that_no_longer_verifies_is_rolled_back_and_named() {
    let mut m = sum_module();
    let text = m.print();
    let err = pipeline::parse("mem2reg,trigger-verifier-error")
        .unwrap()
        .apply(&mut m)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Verify);
    assert!(
        err.to_string()
            .starts_with("IR does not verify after pass mem2reg,trigger-verifier-error"),
        "{err}"
    );
    match &err {
        Error::Verify { ir: Some(ir), .. } => {
            assert!(ir.contains("__bad_alias"), "the broken IR is kept")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(m.print(), text);

    // With verify-each, the exact pass is named.
    let ctx = PassContext::new().with_config(VERIFY_EACH, true).unwrap();
    let err = pipeline::parse("mem2reg,trigger-verifier-error")
        .unwrap()
        .apply_in(&mut m, &ctx)
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("IR does not verify after pass trigger-verifier-error:"),
        "{err}"
    );
    assert_eq!(m.print(), text);
}
