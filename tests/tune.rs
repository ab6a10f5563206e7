//! Searching orderings: the same seed tries the same orderings and finds
//! the same best; a candidate whose result differs from the input module's
//! is flagged and never the best; a pass that crashes the evaluating
//! process fails only its trial; a search resumed from its first trials
//! ends as the whole one did; -Oz's 43 actions make what `opt-19
//! -passes='default<Oz>'` makes, and a best ordering replayed by opt-19
//! counts what the search reported; a trial still running when the budget
//! in seconds is up is stopped and not counted. (An interrupt: `tune_interrupt.rs`, alone in
//! its process, since an interrupt request is process-wide.)

mod common;

use passlab::jit::{Arg, Buffer, ElemType, Fill, Subject};
use passlab::tune::{tune, Budget, Goal, Metric, Strategy, Trial, TuneSpec, Verdict};
use passlab::{registry, FunctionPass, Module, PassInfo};
use std::sync::Arc;

fn adler32() -> Module {
    Module::load(&[common::inputs::zlib_source("adler32.c")]).unwrap()
}

fn spec(strategies: Vec<Strategy>, trials: usize, seed: u64) -> TuneSpec {
    TuneSpec {
        strategies,
        budget: Budget::Trials(trials),
        seed,
        ..TuneSpec::default()
    }
}

fn run(m: &Module, check: Option<(&str, &[Arg])>, spec: &TuneSpec) -> passlab::tune::Tuning {
    let subject = check.map(|(function, args)| Subject::Call {
        function: function.to_string(),
        args: args.to_vec(),
    });
    tune(m, subject.as_ref(), spec, &[], &mut |_, _| {}).unwrap()
}

/// What must repeat: the orderings and what they measured.

#[test]
fn the_same_seed_tries_the_same_orderings_and_finds_the_same_best() {
    let m = adler32();
    let data = Buffer::new(ElemType::I8, 1000, Fill::Random(3)).unwrap();
    let args = [Arg::Int(1), Arg::Buffer(&data), Arg::Int(1000)];
    let s = spec(
        vec![Strategy::Random, Strategy::Greedy, Strategy::Hill],
        12,
        7,
    );
    let a = run(&m, Some(("adler32", &args)), &s);
    let b = run(&m, Some(("adler32", &args)), &s);
    assert_eq!(common::outcome(&a), common::outcome(&b));
    let pipelines =
        |t: &passlab::tune::Tuning| t.best(3).iter().map(|b| b.pipeline()).collect::<Vec<_>>();
    assert_eq!(pipelines(&a), pipelines(&b));
    // 4 baselines, then each strategy's 12 (greedy: the empty ordering and
    // one round of the pool is more than 12).
    assert_eq!(a.trials.len(), 4 + 36);
    assert!(
        a.searched().all(|t| t.verdict == Verdict::Same),
        "{:?}",
        a.failures().next()
    );
    let c = run(
        &m,
        Some(("adler32", &args)),
        &spec(vec![Strategy::Random], 12, 8),
    );
    assert_ne!(
        common::outcome(&c)[4..],
        common::outcome(&a)[4..16],
        "another seed tries other orderings"
    );
    // The best beats O0 and is the least of the valid scores.
    let best = a.best(1)[0];
    let least = a
        .searched()
        .filter_map(|t| a.score(t))
        .fold(f64::INFINITY, f64::min);
    assert_eq!(a.score(best), Some(least));
    assert!(least < a.score(a.baseline("O0").unwrap()).unwrap());
    // Each strategy alone tries the orderings it tries beside the others.
    let alone = run(
        &m,
        Some(("adler32", &args)),
        &spec(vec![Strategy::Hill], 12, 7),
    );
    let hill = |t: &passlab::tune::Tuning| -> Vec<Vec<String>> {
        t.trials
            .iter()
            .filter(|t| t.phase == "hill")
            .map(|t| t.ordering.clone())
            .collect()
    };
    assert_eq!(hill(&alone), hill(&a));
}

#[test]
fn a_candidate_that_changes_the_result_is_flagged_and_never_the_best() {
    // x + 1 > x is undefined for INT_MAX; at O0 it wraps and gives 0, and
    // instcombine folds it to 1.
    let m = Module::from_c("int f(int x) { return x + 1 > x; }", "ub.c").unwrap();
    let args = [Arg::Int(i32::MAX as i64)];
    let mut s = spec(vec![Strategy::Random], 25, 3);
    s.pool = ["instcombine", "simplifycfg", "sroa", "early-cse", "dce"]
        .map(String::from)
        .to_vec();
    s.lengths = (1, 3);
    let t = run(&m, Some(("f", &args)), &s);
    assert_eq!(t.reference.as_deref(), Some("0"));
    let bad: Vec<&Trial> = t.miscompiles().collect();
    assert!(!bad.is_empty());
    assert!(
        bad.iter()
            .any(|b| b.ordering.iter().any(|p| p == "instcombine")),
        "{bad:?}"
    );
    assert!(matches!(&bad[0].verdict, Verdict::Different(r) if r.starts_with("1, input module 0")));
    // The best is valid although the flagged ones are smaller.
    let best = t.best(5);
    assert!(!best.is_empty());
    assert!(best.iter().all(|b| b.verdict == Verdict::Same));
    let smallest_flagged = bad.iter().filter_map(|b| b.instructions).min().unwrap();
    assert!(best[0].instructions.unwrap() > smallest_flagged);
    // O2 folds it too: flagged, and its "vs O2" column is empty.
    assert!(matches!(
        t.baseline("O2").unwrap().verdict,
        Verdict::Different(_)
    ));
    let table = t.table(3).to_text();
    assert!(table.contains("possible miscompiles"), "{table}");
    assert!(
        table.contains("DIFFERENT (1, input module 0): possible miscompile"),
        "{table}"
    );
}

#[test]
fn a_pass_that_crashes_fails_its_trial_and_the_search_goes_on() {
    registry::register_pass(|| {
        Arc::new(FunctionPass::new(
            PassInfo::new("test-abort", 0),
            |_f, _ctx| std::process::abort(),
        ))
    })
    .unwrap();
    let m = Module::from_c("int g(int x) { int y = x * 2; return y + 1; }", "g.c").unwrap();
    let mut s = spec(vec![Strategy::Random], 20, 5);
    s.pool = ["test-abort", "instcombine", "sroa", "mem2reg"]
        .map(String::from)
        .to_vec();
    s.lengths = (1, 2);
    let args = [Arg::Int(20)];
    let t = run(&m, Some(("g", &args)), &s);
    assert_eq!(t.searched().count(), 20);
    let failed: Vec<&Trial> = t.failures().collect();
    assert!(!failed.is_empty());
    for f in &failed {
        assert!(f.ordering.iter().any(|p| p == "test-abort"), "{f:?}");
        assert!(
            matches!(&f.verdict, Verdict::Failed(m) if m.contains("aborted (SIGABRT)")),
            "{f:?}"
        );
    }
    assert!(t.searched().any(|t| t.verdict == Verdict::Same));
    assert!(t.best(1)[0].ordering.iter().all(|p| p != "test-abort"));
}

#[test]
fn a_resumed_search_ends_as_the_whole_one() {
    let m = adler32();
    let s = spec(vec![Strategy::Hill], 15, 2);
    let whole = run(&m, None, &s);
    let first: Vec<Trial> = whole.trials[..9].to_vec();
    let mut fresh = Vec::new();
    let resumed = tune(&m, None, &s, &first, &mut |t, _| fresh.push(t.clone())).unwrap();
    assert_eq!(
        fresh.len(),
        whole.trials.len() - 9,
        "only the rest is evaluated"
    );
    assert_eq!(common::outcome(&resumed), common::outcome(&whole));
}

#[test]
fn goals_measure_what_they_name() {
    let m = Module::from_c(
        "int s(int n) { int t = 0; for (int i = 0; i < n; i++) t += i * i; return t; }",
        "s.c",
    )
    .unwrap();
    let args = [Arg::Int(1000)];
    let mut s = spec(vec![Strategy::Random], 4, 1);
    s.goal = Goal::parse("0.5*size+0.5*runtime").unwrap();
    let t = run(&m, Some(("s", &args)), &s);
    for tr in &t.trials {
        assert!(tr.size.is_some_and(|b| b > 0), "{tr:?}");
        assert!(tr.runtime_ns.is_some(), "{tr:?}");
    }
    let o0 = t.baseline("O0").unwrap();
    assert_eq!(t.score(o0), Some(1.0));
    assert!(t.score(t.baseline("O2").unwrap()).unwrap() < 1.0);
    assert!(Metric::Size.of(t.baseline("O2").unwrap()).unwrap() < Metric::Size.of(o0).unwrap());
    let chart = t.chart();
    assert!(chart.svg().unwrap().contains("random"));
    // A runtime goal needs a function.
    let e = tune(&m, None, &s, &[], &mut |_, _| {}).unwrap_err();
    assert!(e.to_string().contains("needs a function"), "{e}");
}

#[test]
fn local_search_repeats_with_a_seed_its_best_runs_as_found_and_miscompiles_stay_out() {
    let m = adler32();
    let mut s = spec(vec![Strategy::Local], 30, 4);
    s.pool = passlab::tune::expand_pool(&["size".to_string()]);
    s.levels = false;
    let a = run(&m, None, &s);
    let b = run(&m, None, &s);
    assert_eq!(common::outcome(&a), common::outcome(&b));
    // The first ordering is -Oz's, as single passes.
    let first = a.searched().next().unwrap();
    let oz: Vec<String> = passlab::tune::OZ_ORDERING
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(first.ordering, oz);
    // Trials resume from kept prefixes; the best is what the ordering makes
    // when run from the input, as `:tune apply` runs it.
    let best = a.best(1)[0];
    let mut again = m.copy();
    passlab::pipeline::parse(&best.pipeline())
        .unwrap()
        .apply(&mut again)
        .unwrap();
    assert_eq!(Some(again.instruction_count()), best.instructions);
    assert!(best.instructions <= first.instructions);
    // A candidate that changes the result is flagged, never the best.
    let ub = Module::from_c("int f(int x) { return x + 1 > x; }", "ub.c").unwrap();
    let args = [Arg::Int(i32::MAX as i64)];
    let mut s = spec(vec![Strategy::Local], 20, 3);
    s.pool = [
        "instcombine<no-verify-fixpoint>",
        "simplifycfg",
        "sroa",
        "early-cse",
        "dce",
    ]
    .map(String::from)
    .to_vec();
    s.levels = false;
    let t = run(&ub, Some(("f", &args)), &s);
    let bad: Vec<&Trial> = t.miscompiles().collect();
    assert!(
        bad.iter()
            .any(|b| b.ordering.iter().any(|p| p.starts_with("instcombine"))),
        "{bad:?}"
    );
    assert!(t.best(3).iter().all(|b| b.verdict == Verdict::Same));
}

/// A module as CompilerGym's protocol makes it: clang-19's -O1 hand-over.
fn trees_o1() -> Module {
    Module::load(&[common::inputs::zlib_source("trees.c").level(passlab::module::Level::O1)])
        .unwrap()
}

fn lua_o1(file: &str) -> Module {
    Module::load(&[common::inputs::lua_source(file).level(passlab::module::Level::O1)]).unwrap()
}

/// What passlab makes of `m` running `ordering` element by element.
fn run_ordering(m: &Module, ordering: &[String]) -> Module {
    let mut c = m.copy();
    for element in ordering {
        passlab::pipeline::parse(element)
            .unwrap()
            .apply(&mut c)
            .unwrap();
    }
    c
}

/// What `opt-19` makes of `m` applying `ordering` action by action (see
/// `common::opt19`), from `m` written with its use-list order.
fn opt19_chain(m: &Module, ordering: &[String], tag: &str) -> Module {
    let dir = std::env::temp_dir().join(format!("passlab-tune-opt19-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("input.bc");
    m.copy().save(&input).unwrap();
    let made = Module::from_file(common::opt19::chain(&input, ordering, &dir)).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    made
}

/// -Oz's inline-and-simplify unit at lower inliner thresholds is what
/// opt-19 makes with those options (its spelling), and the options are
/// put back after it: the plain unit run next inlines as -Oz's does.
#[test]
fn the_unit_with_inliner_thresholds_is_opt_19_with_those_options() {
    let m = lua_o1("lparser.c");
    let low = passlab::tune::OZ_INLINER_LOW_THRESHOLDS.to_string();
    let plain = "scc-oz-module-inliner".to_string();
    for ordering in [
        vec![low.clone()],
        vec![low.clone(), plain.clone()],
        vec![plain.clone()],
    ] {
        let ours = run_ordering(&m, &ordering);
        let theirs = opt19_chain(&m, &ordering, "thresholds");
        assert_eq!(
            ours.instruction_count(),
            theirs.instruction_count(),
            "{ordering:?}"
        );
    }
    // The thresholds change what the unit makes.
    let count = |element: &str| run_ordering(&m, &[element.to_string()]).instruction_count();
    assert!(
        count(&low) < count(&plain),
        "{} {}",
        count(&low),
        count(&plain)
    );
    // A wrong option or value is refused, and the unit names what it is.
    for bad in [
        "scc-oz-module-inliner<inline-threshold=x>",
        "scc-oz-module-inliner<foo=1>",
        "scc-oz-module-inliner<inline-threshold=1;inline-threshold=2>",
        "scc-oz-module-inliner<>",
    ] {
        let e = passlab::pipeline::parse(bad)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains("scc-oz-module-inliner"), "{bad}: {e}");
    }
}

/// The size pool's vectorizers run as opt-19 runs them on clang's target
/// machine: after -Oz on Lua's lstate.c, where they pay, the same count.
#[test]
fn the_vectorizers_in_the_size_pool_make_what_opt_19_makes() {
    let m = lua_o1("lstate.c");
    let pool = passlab::tune::size_pool();
    let mut oz: Vec<String> = passlab::tune::OZ_ORDERING
        .iter()
        .map(|p| p.to_string())
        .collect();
    let run = |ordering: &[String]| run_ordering(&m, ordering).instruction_count();
    let at_oz = run(&oz);
    for v in ["slp-vectorizer", "load-store-vectorizer"] {
        assert!(pool.contains(&v), "{v} is in the size pool");
        oz.push(v.to_string());
    }
    let ours = run(&oz);
    let theirs = opt19_chain(&m, &oz, "vectorizers").instruction_count();
    assert_eq!(ours, theirs, "{oz:?}");
    assert!(
        ours < at_oz,
        "the vectorizers shrink lstate.c after -Oz: {at_oz} -> {ours}"
    );
}

#[test]
fn the_oz_ordering_makes_what_opt_19_oz_makes_and_a_best_ordering_replays_in_opt_19() {
    let m = trees_o1();
    // -Oz's 43 actions, one after the other, make opt-19's default<Oz>.
    let oz: Vec<String> = passlab::tune::OZ_ORDERING
        .iter()
        .map(|p| p.to_string())
        .collect();
    let theirs = opt19_chain(&m, &["default<Oz>".to_string()], "oz");
    let ours = run_ordering(&m, &oz);
    assert_eq!(ours.instruction_count(), theirs.instruction_count());
    // The same code, but for the ModuleID line (opt-19's names the file
    // it read), the counters in local names (`%indvars.iv38` here,
    // `%indvars.iv17` there: passlab keeps clang's symbol tables' counters,
    // opt-19 reading bitcode starts them again) and attribute groups
    // (reading bitcode gives intrinsics' declarations their own).
    let uncounted = |text: &str| -> Vec<String> {
        text.lines()
            .skip(1)
            .filter(|l| !l.starts_with("; Function Attrs") && !l.starts_with("attributes #"))
            .map(|l| {
                let mut out = String::new();
                // A block's label starts its line.
                let mut in_name = l.starts_with(|c: char| c.is_alphabetic());
                for c in l.chars() {
                    if c == '%' {
                        in_name = true;
                    } else if in_name && !(c.is_alphanumeric() || c == '.' || c == '_') {
                        in_name = false;
                    }
                    if !(in_name && c.is_ascii_digit()) {
                        out.push(c);
                    }
                }
                // (and the padding before a label's comment)
                out.split_whitespace().collect::<Vec<_>>().join(" ")
            })
            .collect()
    };
    let (a, b) = (uncounted(&ours.print()), uncounted(&theirs.print()));
    let d = a.iter().zip(b.iter()).find(|(x, y)| x != y);
    assert_eq!(d, None);
    assert_eq!(a.len(), b.len());
    // passlab's own default<Oz>, with the SLP vectorizer off as LLVM's
    // parser leaves it at Oz, is the same module.
    let ctx = passlab::PassContext::inherit()
        .with_config("llvm.slp_vectorization", false)
        .unwrap();
    let _scope = ctx.enter().unwrap();
    let mut level = m.copy();
    passlab::pipeline::parse("default<Oz>")
        .unwrap()
        .apply(&mut level)
        .unwrap();
    assert_eq!(level.instruction_count(), theirs.instruction_count());
    // The search's best ordering, replayed by opt-19, counts what the
    // search reported; the first trial is -Oz itself.
    let mut s = spec(vec![Strategy::Local], 25, 0);
    s.goal_defaults(false, false);
    s.levels = false;
    let t = run(&m, None, &s);
    let first = t.searched().next().unwrap();
    assert_eq!(first.ordering, oz);
    assert_eq!(first.instructions, Some(theirs.instruction_count()));
    let best = t.best(1)[0];
    let replayed = opt19_chain(&m, &best.ordering, "best");
    assert_eq!(Some(replayed.instruction_count()), best.instructions);
}

#[test]
fn a_trial_past_the_budget_is_stopped_and_not_counted() {
    // Each ordering runs default<O3> 200 times over deflate.c: far longer
    // than the search's one second.
    let m = Module::load(&[common::inputs::zlib_source("deflate.c")]).unwrap();
    let mut s = spec(vec![Strategy::Random], 1, 0);
    s.budget = Budget::Seconds(1.0);
    s.pool = vec!["default<O3>".to_string()];
    s.lengths = (200, 200);
    s.levels = false;
    let start = std::time::Instant::now();
    let t = run(&m, None, &s);
    let wall = start.elapsed().as_secs_f64();
    assert_eq!(t.searched().count(), 0, "{:?}", t.trials);
    assert!(!t.interrupted);
    // The second, the baseline and the evaluating child's start, and the
    // 20 ms the session waits between looks.
    assert!(wall < 2.0, "the search took {wall:.2} s");
}

/// Passes the context disables never enter a search's orderings (issue
/// 61): neither a pool entry naming one (`licm`) nor one running it inside
/// an adaptor (-Oz's actions for local search); with every entry
/// disabled, the search is refused, saying why.
#[test]
fn disabled_passes_never_enter_an_ordering() {
    let m = adler32();
    let _guard = passlab::PassContext::new()
        .with_disabled(["licm", "instcombine"])
        .enter()
        .unwrap();
    // A pass by name, with or without parameters, at any depth.
    let runs_disabled = |t: &Trial| {
        t.ordering.iter().any(|p| {
            p.split([',', '(', ')'])
                .map(|e| e.split('<').next().unwrap_or(e).trim())
                .any(|name| name == "licm" || name == "instcombine")
        })
    };
    let mut random = spec(vec![Strategy::Random], 15, 2);
    random.pool = [
        "licm",
        "gvn",
        "sroa",
        "instcombine",
        "function(loop-mssa(licm))",
        "simplifycfg",
    ]
    .map(String::from)
    .to_vec();
    let t = run(&m, None, &random);
    assert!(t.searched().count() > 0);
    assert!(!t.searched().any(runs_disabled), "{:?}", t.trials);
    // Local search from -Oz's actions: those running licm or instcombine
    // are left out.
    let local = TuneSpec {
        pool: passlab::tune::size_pool()
            .iter()
            .map(|s| s.to_string())
            .collect(),
        ..spec(vec![Strategy::Local], 8, 1)
    };
    let t = run(&m, None, &local);
    assert!(!t.searched().any(runs_disabled), "{:?}", t.trials);
    let mut all = spec(vec![Strategy::Random], 5, 1);
    all.pool = vec!["licm".into(), "instcombine".into()];
    let e = tune(&m, None, &all, &[], &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("every entry of the pool runs a disabled pass"),
        "{e}"
    );
}
