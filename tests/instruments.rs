//! Instruments: TVM's hook order and failure semantics, LLVM-internal
//! granularity, and each built-in instrument on real C.

mod common;

use passlab::instrument::{
    Bisect, Counts, FnInstrument, IrSize, PassFilter, PassRun, PrintChanged, PrintPasses, Timing,
    Trace, VerifyEach,
};
use passlab::llvm::IrUnit;
use passlab::pipeline::bisect_search;
use passlab::{
    pipeline, Error, ErrorKind, Instrument, Module, ModulePass, Pass, PassContext, PassInfo,
    PassRef, Sequential,
};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

type Log = Arc<Mutex<Vec<String>>>;

/// Logs every hook; fails at the hook named by `fail`.
struct Events {
    name: &'static str,
    log: Log,
    fail: &'static str,
    /// Log only the passes passlab runs (not LLVM's).
    outer_only: bool,
}

impl Events {
    fn new(name: &'static str, log: &Log, fail: &'static str) -> Rc<Events> {
        Rc::new(Events {
            name,
            log: log.clone(),
            fail,
            outer_only: true,
        })
    }

    fn event(&self, hook: &str, pass: Option<&PassRun>) -> passlab::Result<()> {
        if let Some(p) = pass {
            if self.outer_only && p.inside_llvm {
                return Ok(());
            }
        }
        let what = match pass {
            Some(p) => format!("{} {hook} {}", self.name, p.name()),
            None => format!("{} {hook}", self.name),
        };
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(what);
        if self.fail == hook {
            return Err(Error::Invalid(format!("{} failed in {hook}", self.name)));
        }
        Ok(())
    }
}

impl Instrument for Events {
    fn name(&self) -> &str {
        self.name
    }
    fn enter_pass_ctx(&self) -> passlab::Result<()> {
        self.event("enter", None)
    }
    fn exit_pass_ctx(&self) -> passlab::Result<()> {
        self.event("exit", None)
    }
    fn should_run(&self, _m: &Module, p: &PassRun) -> passlab::Result<bool> {
        self.event("should_run", Some(p)).map(|()| true)
    }
    fn run_before_pass(&self, _m: &Module, p: &PassRun) -> passlab::Result<()> {
        self.event("before", Some(p))
    }
    fn run_after_pass(&self, _m: &Module, p: &PassRun) -> passlab::Result<()> {
        self.event("after", Some(p))
    }
}

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn sum_module() -> Module {
    Module::from_c(common::SUM_C, "sum.c").unwrap()
}

/// A module pass that records that it ran.
fn noting(name: &'static str, log: &Log) -> PassRef {
    let log = log.clone();
    Arc::new(ModulePass::new(PassInfo::new(name, 0), move |_m, _c| {
        log.lock().unwrap().push(format!("run {name}"));
        Ok(())
    }))
}

fn failing(name: &'static str, log: &Log) -> PassRef {
    let log = log.clone();
    Arc::new(ModulePass::new(PassInfo::new(name, 0), move |_m, _c| {
        log.lock().unwrap().push(format!("run {name}"));
        Err(Error::Invalid("gave up".into()))
    }))
}

/// Runs `pass` on a module in a fresh context with `instruments`; returns
/// the log and whether the run (entering, running, exiting) succeeded.
fn events(pass: PassRef, instruments: &[Rc<Events>], log: &Log) -> Vec<String> {
    let mut ctx = PassContext::new();
    for i in instruments {
        ctx = ctx.with_instrument(i.clone());
    }
    let mut m = sum_module();
    match ctx.enter() {
        Ok(guard) => {
            let r = pass.apply(&mut m);
            let exit = guard.exit();
            log.lock().unwrap().push(format!(
                "result {}",
                if r.is_ok() && exit.is_ok() {
                    "ok"
                } else {
                    "err"
                }
            ));
        }
        Err(_) => log.lock().unwrap().push("enter failed".into()),
    }
    log.lock().unwrap().clone()
}

/// TVM's tested hook orders (../shared/notes/pass-semantics.md): each case
/// is (what fails, the instruments, the events expected).
#[test]
fn hooks_and_failures_follow_tvm() {
    type Case = (
        &'static str,
        &'static [(&'static str, &'static str)],
        &'static [&'static str],
    );
    let cases: &[Case] = &[
        (
            "nothing",
            &[("A", ""), ("B", "")],
            &[
                "A enter",
                "B enter",
                "A should_run p",
                "B should_run p",
                "A before p",
                "B before p",
                "run p",
                "A after p",
                "B after p",
                "A exit",
                "B exit",
                "result ok",
            ],
        ),
        (
            // The ones already entered are exited; the context is not pushed.
            "enter at B",
            &[("A", ""), ("B", "enter"), ("C", "")],
            &["A enter", "B enter", "A exit", "enter failed"],
        ),
        (
            // The instruments after the failing one get no exit.
            "exit at B",
            &[("A", ""), ("B", "exit"), ("C", "")],
            &[
                "A enter",
                "B enter",
                "C enter",
                "A should_run p",
                "B should_run p",
                "C should_run p",
                "A before p",
                "B before p",
                "C before p",
                "run p",
                "A after p",
                "B after p",
                "C after p",
                "A exit",
                "B exit",
                "result err",
            ],
        ),
        (
            // The first error propagates; everyone still exits.
            "should_run at A",
            &[("A", "should_run"), ("B", "")],
            &[
                "A enter",
                "B enter",
                "A should_run p",
                "A exit",
                "B exit",
                "result err",
            ],
        ),
        (
            // The pass does not run.
            "before at B",
            &[("A", ""), ("B", "before")],
            &[
                "A enter",
                "B enter",
                "A should_run p",
                "B should_run p",
                "A before p",
                "B before p",
                "A exit",
                "B exit",
                "result err",
            ],
        ),
        (
            // The pass has run.
            "after at A",
            &[("A", "after"), ("B", "")],
            &[
                "A enter",
                "B enter",
                "A should_run p",
                "B should_run p",
                "A before p",
                "B before p",
                "run p",
                "A after p",
                "A exit",
                "B exit",
                "result err",
            ],
        ),
    ];
    for (what, instruments, expected) in cases {
        let l = log();
        let list: Vec<Rc<Events>> = instruments
            .iter()
            .map(|(name, fail)| {
                let name: &'static str = name;
                Events::new(name, &l, fail)
            })
            .collect();
        let got = events(noting("p", &l), &list, &l);
        assert_eq!(got, *expected, "{what} fails");
        assert!(
            PassContext::stack().is_empty(),
            "{what}: the context is gone"
        );
    }
}

#[test]
fn a_failing_pass_gets_no_after_hooks() {
    let l = log();
    let got = events(failing("p", &l), &[Events::new("A", &l, "")], &l);
    assert_eq!(
        got,
        [
            "A enter",
            "A should_run p",
            "A before p",
            "run p",
            "A exit",
            "result err"
        ]
    );
}

#[test]
fn should_run_is_not_asked_for_required_passes_and_answers_are_anded() {
    let l = log();
    let veto = Rc::new(FnInstrument::new("veto").on_should_run(|_m, p| Ok(p.name() != "q")));
    let ctx = PassContext::new()
        .with_instrument(Events::new("A", &l, ""))
        .with_instrument(veto)
        .with_required(["r"]);
    let mut m = sum_module();
    let _g = ctx.enter().unwrap();
    let seq = Sequential::new("s", vec![noting("q", &l), noting("r", &l)]);
    (Arc::new(seq) as PassRef).apply(&mut m).unwrap();
    assert_eq!(
        *l.lock().unwrap(),
        [
            "A enter",
            "A should_run s",
            "A before s",
            "A should_run q", // asked; the veto says no: q does not run
            "A before r",
            "run r",
            "A after r", // required: not asked
            "A after s"
        ]
    );
}

#[test]
fn override_instruments_exits_old_and_enters_new() {
    let l = log();
    let g = PassContext::new()
        .with_instrument(Events::new("A", &l, ""))
        .enter()
        .unwrap();
    PassContext::override_instruments(vec![Events::new("B", &l, ""), Events::new("C", &l, "")])
        .unwrap();
    assert_eq!(PassContext::current().instruments().len(), 2);
    // A failing enter: B is exited again and the list is cleared.
    PassContext::override_instruments(vec![
        Events::new("D", &l, ""),
        Events::new("E", &l, "enter"),
    ])
    .unwrap_err();
    assert!(PassContext::current().instruments().is_empty());
    g.exit().unwrap();
    assert_eq!(
        *l.lock().unwrap(),
        [
            "A enter", "A exit", "B enter", "C enter", "B exit", "C exit", "D enter", "E enter",
            "D exit"
        ]
    );
    assert!(
        PassContext::override_instruments(vec![]).is_err(),
        "needs an entered context"
    );
}

#[test]
fn a_panicking_instrument_is_an_error_and_the_module_is_kept() {
    let mut m = sum_module();
    let text = m.print();
    let boom = Rc::new(FnInstrument::new("boom").on_after(|_m, p| {
        if p.name() == "instcombine" && p.inside_llvm {
            panic!("instrument bug");
        }
        Ok(())
    }));
    let _g = PassContext::new().with_instrument(boom).enter().unwrap();
    let e = pipeline::parse("mem2reg,instcombine")
        .unwrap()
        .apply(&mut m)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Instrument, "{e}");
    assert!(
        e.to_string().contains("boom") && e.to_string().contains("instrument bug"),
        "{e}"
    );
    assert_eq!(m.print(), text);
}

#[test]
fn an_instrument_error_inside_llvm_stops_optional_passes_and_rolls_back() {
    let mut m = sum_module();
    let text = m.print();
    let l = log();
    let seen = l.clone();
    let stop = Rc::new(FnInstrument::new("stop").on_before(move |_m, p| {
        seen.lock().unwrap().push(p.name().to_string());
        if p.name() == "sroa" {
            return Err(Error::Invalid("no sroa today".into()));
        }
        Ok(())
    }));
    let _g = PassContext::new().with_instrument(stop).enter().unwrap();
    let e = pipeline::parse("default<O2>")
        .unwrap()
        .apply(&mut m)
        .unwrap_err();
    assert!(e.to_string().contains("no sroa today"), "{e}");
    assert_eq!(m.print(), text);
    // Nothing was shown to instruments after the error.
    assert_eq!(l.lock().unwrap().last().map(String::as_str), Some("sroa"));
}

// ------------------------------------------------------------ granularity

#[test]
fn instruments_see_llvm_passes_nested_with_their_ir_unit() {
    let (trace, lines) = Trace::lines();
    let mut m = sum_module();
    {
        let _g = PassContext::new()
            .with_instrument(Rc::new(trace))
            .enter()
            .unwrap();
        pipeline::parse("mem2reg,function(loop-mssa(licm))")
            .unwrap()
            .apply(&mut m)
            .unwrap();
    }
    let text = lines.borrow().clone();
    let expect = [
        "before mem2reg,function(loop-mssa(licm)) on module sum.c",
        "  before mem2reg on module sum.c",
        "    before mem2reg on function sum",
        "    after mem2reg on function sum",
        "  before function(loop-mssa(licm)) on module sum.c",
        "    before licm on loop sum:for.cond",
    ];
    let mut at = 0;
    for want in expect {
        let found = text[at..]
            .find(want)
            .unwrap_or_else(|| panic!("{want:?} not in order in\n{text}"));
        at += found + want.len();
    }
}

#[test]
fn should_run_can_skip_llvm_optional_passes_but_not_required_ones() {
    let l = log();
    let seen = l.clone();
    let no_instcombine = Rc::new(
        FnInstrument::new("veto")
            .on_should_run(|_m, p| Ok(!(p.inside_llvm && p.name() == "instcombine")))
            .on_before(move |_m, p| {
                seen.lock().unwrap().push(p.name().to_string());
                Ok(())
            }),
    );
    let mut m = sum_module();
    let _g = PassContext::new()
        .with_instrument(no_instcombine)
        .enter()
        .unwrap();
    pipeline::parse("default<O2>")
        .unwrap()
        .apply(&mut m)
        .unwrap();
    let ran = l.lock().unwrap();
    assert!(!ran.iter().any(|p| p == "instcombine"), "instcombine ran");
    assert!(ran.iter().any(|p| p == "sroa"), "other passes still run");

    // With every optional pass vetoed, LLVM's required passes still run.
    drop(ran);
    l.lock().unwrap().clear();
    let veto_all = Rc::new(FnInstrument::new("veto-all").on_should_run(|_m, p| Ok(!p.inside_llvm)));
    let seen = l.clone();
    let after = Rc::new(FnInstrument::new("log").on_before(move |_m, p| {
        if p.inside_llvm {
            seen.lock().unwrap().push(p.name().to_string());
        }
        Ok(())
    }));
    let _g2 = PassContext::inherit()
        .with_instrument(veto_all)
        .with_instrument(after)
        .enter()
        .unwrap();
    let mut m = sum_module();
    pipeline::parse("default<O2>")
        .unwrap()
        .apply(&mut m)
        .unwrap();
    let ran = l.lock().unwrap();
    assert!(
        !ran.is_empty(),
        "LLVM's required passes run without being asked"
    );
    assert!(
        ran.iter()
            .any(|p| p == "always-inline" || p.starts_with("require<")),
        "{ran:?}"
    );
}

// ------------------------------------------------------------ built-ins on real C

fn zlib(file: &str) -> Module {
    Module::load(&[common::inputs::zlib_source(file)]).unwrap()
}

fn o2() -> PassRef {
    pipeline::parse("default<O2>").unwrap()
}

#[test]
fn timing_and_ir_size_see_llvm_internal_passes_on_real_c() {
    let mut m = zlib("deflate.c");
    let timing = Rc::new(Timing::new());
    let size = Rc::new(IrSize::new());
    {
        let _g = PassContext::new()
            .with_instrument(timing.clone())
            .with_instrument(size.clone())
            .enter()
            .unwrap();
        o2().apply(&mut m).unwrap();
    }
    // Readable after the context exited.
    let report = timing.report();
    assert_eq!(report.roots.len(), 1);
    let root = &report.roots[0];
    assert_eq!(root.name, "default<O2>");
    let inside: std::collections::BTreeSet<&str> = report
        .nodes()
        .into_iter()
        .filter(|(d, _)| *d > 0)
        .map(|(_, n)| n.name.as_str())
        .collect();
    assert!(
        inside.len() > 50,
        "{} LLVM-internal passes: {inside:?}",
        inside.len()
    );
    for unit in [
        IrUnit::Module,
        IrUnit::Cgscc,
        IrUnit::Function,
        IrUnit::Loop,
    ] {
        assert!(
            report.nodes().iter().any(|(_, n)| n.unit == unit),
            "no {unit} pass"
        );
    }
    // Self times add up to the total.
    let self_sum: std::time::Duration = report.nodes().iter().map(|(_, n)| n.self_time).sum();
    let diff = self_sum.as_secs_f64() - report.total().as_secs_f64();
    assert!(
        diff.abs() < 1e-6,
        "self {self_sum:?} vs total {:?}",
        report.total()
    );
    // TVM's format: `name: total [self] (% of total; % of parent)`.
    let first = report.tree_text().lines().next().unwrap().to_string();
    assert!(
        first.starts_with("default<O2>: ") && first.ends_with("(100.0%; 100.0%)"),
        "{first}"
    );
    let flat = report.flat();
    assert!(flat.windows(2).all(|w| w[0].self_time >= w[1].self_time));
    assert!(report
        .flat_table(Some(10))
        .to_text()
        .contains("more passes"));

    // The series ends at the module's instruction count; deltas add up.
    let series = size.series();
    let last = series.last().unwrap();
    assert_eq!(last.pass.as_ref(), "default<O2>");
    assert_eq!(last.instructions, m.instruction_count());
    assert_eq!(last.functions as usize, m.defined_functions().len());
    assert_eq!(last.blocks, m.stats().blocks);
    assert!(series.len() > 300, "{} points", series.len());
    assert!(size
        .changes()
        .iter()
        .any(|p| p.pass.as_ref() == "sroa" && p.delta < 0));
    let start = last.instructions as i64 - last.delta;
    assert!(start > last.instructions as i64, "O2 shrinks deflate.c");

    timing.clear();
    size.clear();
    assert!(timing.report().roots.is_empty());
    assert!(size.series().is_empty());
}

/// Texts of every defined function, from the whole module's text, with
/// attribute group references (`#3`) replaced by the groups' contents and
/// metadata references (`!tbaa !9`) by the nodes' contents: a pass that
/// adds attributes to one function, or drops the last use of a metadata
/// node in one, renumbers the groups and nodes that others print without
/// changing them.
fn texts(m: &Module) -> std::collections::BTreeMap<String, String> {
    let text = m.print();
    let groups: std::collections::HashMap<String, String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("attributes "))
        .filter_map(|l| l.split_once(" = "))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let nodes: std::collections::HashMap<String, String> = text
        .lines()
        .filter(|l| l.starts_with('!') && l[1..].starts_with(|c: char| c.is_ascii_digit()))
        .filter_map(|l| l.split_once(" = "))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    // A node's content with the nodes it names resolved in turn (a node
    // that names itself, as loop metadata does, is `self`).
    fn node(
        id: &str,
        nodes: &std::collections::HashMap<String, String>,
        open: &mut Vec<String>,
    ) -> String {
        if open.iter().any(|o| o == id) {
            return "self".into();
        }
        let Some(body) = nodes.get(id) else {
            return id.to_string();
        };
        open.push(id.to_string());
        let resolved = metadata_refs(body, &mut |r| node(r, nodes, open));
        open.pop();
        resolved
    }
    let resolve = |line: &str| {
        let line = line
            .split(' ')
            .map(|w| {
                groups
                    .get(w.trim_end_matches(','))
                    .map_or(w.to_string(), |g| g.clone())
            })
            .collect::<Vec<_>>()
            .join(" ");
        metadata_refs(&line, &mut |r| node(r, &nodes, &mut Vec::new()))
    };
    let mut out = std::collections::BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        if line.starts_with("define ") {
            let name = line
                .split('@')
                .nth(1)
                .unwrap()
                .split('(')
                .next()
                .unwrap()
                .to_string();
            current = Some((name, String::new()));
        }
        if let Some((_, body)) = &mut current {
            body.push_str(&resolve(line));
            body.push('\n');
            if line == "}" {
                let (name, body) = current.take().unwrap();
                out.insert(name, body);
            }
        }
    }
    out
}

/// `text` with each metadata reference (`!12`) replaced by `f` of it.
fn metadata_refs(text: &str, f: &mut dyn FnMut(&str) -> String) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('!') {
        out.push_str(&rest[..at]);
        let digits = rest[at + 1..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len() - at - 1);
        if digits == 0 {
            out.push('!');
            rest = &rest[at + 1..];
            continue;
        }
        out.push_str(&f(&rest[at..at + 1 + digits]));
        rest = &rest[at + 1 + digits..];
    }
    out.push_str(rest);
    out
}

#[test]
fn print_changed_shows_exactly_the_leaf_passes_that_changed_a_function() {
    let mut m = zlib("adler32.c");
    // An oracle: every function's text before and after every pass. A
    // function that a pass inside a CGSCC or function pass manager takes
    // out of the module (the inliner marking dead a static callee it
    // inlined everywhere) is outside the scope PrintChanged looks at after such a
    // pass (its SCC's functions, as ChangeTracker documents); it is found,
    // and reported, when the module pass around it ends (inliner-wrapper).
    struct Seen {
        before: Vec<std::collections::BTreeMap<String, String>>,
        leaf: Vec<bool>,
        module: Vec<bool>,
        gone: Vec<Vec<String>>,
        changes: Vec<(usize, String, String)>, // (after-index, pass, function)
        ended: usize,
    }
    let seen = Rc::new(RefCell::new(Seen {
        before: vec![],
        leaf: vec![],
        module: vec![],
        gone: vec![],
        changes: vec![],
        ended: 0,
    }));
    let s = seen.clone();
    let oracle = Trace::new(move |m, p, is_before| {
        let mut s = s.borrow_mut();
        if is_before {
            if let Some(l) = s.leaf.last_mut() {
                *l = false;
            }
            let t = texts(m);
            s.before.push(t);
            s.leaf.push(true);
            s.module.push(p.unit == IrUnit::Module);
            s.gone.push(vec![]);
        } else {
            let before = s.before.pop().unwrap();
            let leaf = s.leaf.pop().unwrap();
            let module = s.module.pop().unwrap();
            let mut gone = s.gone.pop().unwrap();
            let index = s.ended;
            s.ended += 1;
            if leaf {
                let after = texts(m);
                let names: std::collections::BTreeSet<&String> =
                    before.keys().chain(after.keys()).collect();
                for f in names {
                    if before.get(f) == after.get(f) {
                        continue;
                    }
                    // Out of the module, or marked dead by the inliner (its
                    // body a lone `unreachable`, taken out of the module
                    // when the inliner-wrapper ends).
                    let dead = after.get(f).is_none_or(|t| {
                        t.lines().count() == 3 && t.lines().nth(1) == Some("  unreachable")
                    });
                    if dead && !module {
                        gone.push(f.clone());
                    } else {
                        s.changes.push((index, p.name().to_string(), f.clone()));
                    }
                }
            }
            if module {
                for f in gone {
                    s.changes.push((index, p.name().to_string(), f));
                }
            } else if let Some(outer) = s.gone.last_mut() {
                outer.extend(gone);
            }
        }
    });
    let changed = Rc::new(PrintChanged::default());
    {
        let _g = PassContext::new()
            .with_instrument(Rc::new(oracle))
            .with_instrument(changed.clone())
            .enter()
            .unwrap();
        o2().apply(&mut m).unwrap();
    }
    let mut got: Vec<(usize, String, String)> = changed
        .changes()
        .into_iter()
        .map(|c| (c.index, c.pass, c.function))
        .collect();
    got.sort();
    let want = seen.borrow().changes.clone();
    assert!(!want.is_empty());
    assert_eq!(got, want);
    let (changed_passes, unchanged) = changed.counts();
    assert!(
        unchanged > changed_passes,
        "{changed_passes} changed, {unchanged} not"
    );
    for c in changed.changes() {
        assert!(
            c.diff.contains("\n-") || c.diff.contains("\n+"),
            "{}",
            c.diff
        );
    }
    let out = changed.output();
    assert!(
        out.contains("*** IR Dump After sroa on function adler32_z ***"),
        "{out}"
    );
    assert!(out.ends_with(&format!(
        "; {changed_passes} passes changed the IR, {unchanged} did not\n"
    )));
}

#[test]
fn print_before_and_after_filter_by_pass_and_function() {
    let mut m = sum_module();
    let before = Rc::new(PrintPasses::before(
        PassFilter::passes(["instcombine"]).in_functions(["sum"]),
    ));
    let after = Rc::new(PrintPasses::after(PassFilter::passes(["mem2reg"])));
    {
        let _g = PassContext::new()
            .with_instrument(before.clone())
            .with_instrument(after.clone())
            .enter()
            .unwrap();
        pipeline::parse("mem2reg,instcombine")
            .unwrap()
            .apply(&mut m)
            .unwrap();
    }
    let b = before.output();
    // The outer `instcombine` (module) and LLVM's on `sum`; never `twice`.
    assert_eq!(
        b.matches("; *** IR Dump Before instcombine on function sum ***")
            .count(),
        2,
        "{b}"
    );
    assert!(!b.contains("twice") && !b.contains("mem2reg"), "{b}");
    assert!(
        !b.contains(" alloca "),
        "after mem2reg there are no allocas:\n{b}"
    );
    let a = after.output();
    assert!(
        a.contains("; *** IR Dump After mem2reg on module sum.c ***"),
        "{a}"
    );
    assert!(
        a.contains("; *** IR Dump After mem2reg on function twice ***"),
        "{a}"
    );
    assert!(a.contains("define dso_local i32 @twice"), "{a}");
    assert!(!a.contains("instcombine"), "{a}");
}

#[test]
fn bisect_limits_optional_passes_and_search_finds_the_first_changing_pass() {
    let m = zlib("adler32.c");
    // The limit: only the first N optional passes run, numbered as LLVM does.
    let b = Rc::new(Bisect::new(Some(5)));
    {
        let _g = PassContext::new()
            .with_instrument(b.clone())
            .enter()
            .unwrap();
        let mut copy = m.copy();
        o2().apply(&mut copy).unwrap();
    }
    let entries = b.entries();
    assert!(entries.len() > 100);
    assert!(entries
        .iter()
        .enumerate()
        .all(|(i, e)| e.index == i + 1 && e.ran == (i < 5)));
    let first = entries[0].to_string();
    assert!(
        first.starts_with("BISECT: running pass (1) default<O2> on module ")
            && first.ends_with("adler32.c"),
        "{first}"
    );
    assert!(entries[5]
        .to_string()
        .starts_with("BISECT: NOT running pass (6) "));

    // A known pass: the first after which adler32_z has no alloca is SROA.
    let found = bisect_search(&m, o2().as_ref(), |m| {
        Ok(!m.print_function("adler32_z")?.contains(" alloca "))
    })
    .unwrap();
    assert_eq!(
        (found.entry.pass.as_str(), found.entry.target.as_str()),
        ("sroa", "adler32_z")
    );
    assert!(found.runs < 2 * (usize::BITS - found.total.leading_zeros()) as usize + 4);

    // Textually: the first pass after which adler32_z differs from -O0 is
    // the first change print-changed reports on it.
    let o0 = m.print_function("adler32_z").unwrap();
    let found = bisect_search(&m, o2().as_ref(), |m| {
        Ok(m.print_function("adler32_z")? != o0)
    })
    .unwrap();
    let changed = Rc::new(PrintChanged::new(
        PassFilter::all().in_functions(["adler32_z"]),
    ));
    {
        let _g = PassContext::new()
            .with_instrument(changed.clone())
            .enter()
            .unwrap();
        let mut copy = m.copy();
        o2().apply(&mut copy).unwrap();
    }
    let first = changed.changes().into_iter().next().unwrap();
    assert_eq!(found.entry.pass, first.pass);
    assert_eq!(found.entry.target, first.target);

    // A skip list never runs the named passes.
    let skip = Rc::new(Bisect::new(None).skipping(["sroa"]));
    let _g = PassContext::new()
        .with_instrument(skip.clone())
        .enter()
        .unwrap();
    let mut copy = m.copy();
    o2().apply(&mut copy).unwrap();
    let sroa: Vec<_> = skip
        .entries()
        .into_iter()
        .filter(|e| e.pass == "sroa")
        .collect();
    assert!(!sroa.is_empty() && sroa.iter().all(|e| !e.ran));
    assert!(skip
        .entries()
        .iter()
        .filter(|e| e.pass != "sroa")
        .all(|e| e.ran));
    let mut plain = m.copy();
    drop(_g);
    o2().apply(&mut plain).unwrap();
    assert_ne!(
        copy.print(),
        plain.print(),
        "skipping SROA changes the result"
    );
}

/// A pass that breaks the IR and does not check (a custom `Pass`).
struct Breaker(PassInfo);

impl Pass for Breaker {
    fn info(&self) -> &PassInfo {
        &self.0
    }
    fn run(&self, m: &mut Module, _ctx: &PassContext) -> passlab::Result<()> {
        m.with_ir(|ir| {
            let f = ir.get_function("twice").unwrap();
            let entry = f.get_first_basic_block().unwrap();
            entry.get_terminator().unwrap().erase_from_basic_block();
        });
        Ok(())
    }
}

#[test]
fn verify_each_names_the_first_pass_that_broke_the_ir_and_the_function() {
    let mut m = sum_module();
    let text = m.print();
    let verify = Rc::new(VerifyEach::new());
    let seq = Sequential::new(
        "s",
        vec![
            pipeline::parse("mem2reg").unwrap(),
            Arc::new(Breaker(PassInfo::new("breaker", 0))),
            pipeline::parse("instcombine").unwrap(),
        ],
    );
    let _g = PassContext::new()
        .with_instrument(verify.clone())
        .enter()
        .unwrap();
    let e = (Arc::new(seq) as PassRef).apply(&mut m).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Verify);
    assert!(
        e.to_string()
            .starts_with("IR does not verify after pass breaker on function twice"),
        "{e}"
    );
    let f = verify.failure().unwrap();
    assert_eq!(
        (f.pass.as_str(), f.function.as_deref()),
        ("breaker", Some("twice"))
    );
    assert_eq!(m.print(), text, "rolled back");
    assert!(
        verify.checked() >= 3,
        "mem2reg (outer and inner) and breaker were checked"
    );
}

#[test]
fn counts_add_up_with_bisect_and_trace() {
    let m = zlib("adler32.c");
    let counts = Rc::new(Counts::new());
    let bisect = Rc::new(Bisect::new(Some(40)));
    let befores = Rc::new(RefCell::new(0u64));
    let b = befores.clone();
    let trace = Trace::new(move |_m, _p, is_before| {
        if is_before {
            *b.borrow_mut() += 1;
        }
    });
    {
        let _g = PassContext::new()
            .with_instrument(counts.clone())
            .with_instrument(bisect.clone())
            .with_instrument(Rc::new(trace))
            .enter()
            .unwrap();
        let mut copy = m.copy();
        o2().apply(&mut copy).unwrap();
    }
    let t = counts.totals();
    assert_eq!(t.ran, *befores.borrow());
    assert_eq!(
        t.skipped as usize,
        bisect.entries().iter().filter(|e| !e.ran).count()
    );
    assert!(t.changed > 0 && t.changed < t.ran, "{t:?}");
    let table = counts.table().to_text();
    assert!(table.contains("sroa"), "{table}");
}

// ---------------------------------------------------------------------------
// dump-ir, and the instruments' table.

const DUMPED_C: &str = "static int sq(int x) { return x * x; }\n\
    int f(int n) { int s = 0; for (int i = 0; i < n; i++) s += sq(i); return s; }\n\
    int g(int x) { return x + 0; }\n";

fn session_with_c() -> passlab::session::Session {
    let mut s = passlab::session::Session::new();
    s.execute(&format!(":module m --lang c\n{DUMPED_C}."))
        .unwrap();
    s
}

/// The index's rows after its header: (pass, unit, target, file).
fn index_rows(dir: &std::path::Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(dir.join("index.tsv"))
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

#[test]
fn dump_ir_writes_the_module_after_each_pass_that_changed_it_numbered() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dumps");
    let mut s = session_with_c();
    s.execute(&format!(":instrument dump-ir --out {}", dir.display()))
        .unwrap();
    s.execute(":run default<O2>").unwrap();
    let rows = index_rows(&dir);
    assert!(rows.len() > 10, "{rows:?}");
    assert_eq!(rows[0][1], "input");
    assert_eq!(rows[0][4], "0000-input-m.c.ll");
    let texts: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            assert_eq!(r[0], i.to_string());
            assert!(r[4].starts_with(&format!("{i:04}-")), "{r:?}");
            std::fs::read_to_string(dir.join(&r[4])).unwrap()
        })
        .collect();
    // Each file is the module after a pass that changed it: no two in a
    // row are the same, and the last is what the run left.
    for (k, w) in texts.windows(2).enumerate() {
        assert_ne!(w[0], w[1], "{} and {}", rows[k][4], rows[k + 1][4]);
    }
    let shown = s.execute(":show").unwrap().text();
    assert_eq!(texts.last().unwrap().trim(), shown.trim());
    // Every file is IR LLVM reads back.
    for t in &texts {
        Module::from_ir(t, "dump.ll").unwrap();
    }
    let report = s.execute(":report dump-ir").unwrap().text();
    assert!(
        report.contains(&format!("{} files", rows.len())),
        "{report}"
    );
}

#[test]
fn dump_ir_keeps_to_the_passes_and_functions_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    let mut s = session_with_c();
    s.execute(&format!(
        ":instrument dump-ir=instcombine functions=f --out {}",
        dir.display()
    ))
    .unwrap();
    s.execute(":run default<O2>").unwrap();
    let rows = index_rows(&dir);
    assert!(rows.len() >= 2, "{rows:?}");
    for r in &rows[1..] {
        assert_eq!(
            (r[1].as_str(), r[2].as_str(), r[3].as_str()),
            ("instcombine", "function", "f")
        );
        let text = std::fs::read_to_string(dir.join(&r[4])).unwrap();
        assert!(text.contains("define") && text.contains("@f("), "{text}");
        assert!(!text.contains("@g("), "{text}");
    }
}

#[test]
fn dump_ir_writes_only_into_a_folder_it_made() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = session_with_c();
    // No folder, a folder of the user's, a file: refused, nothing touched.
    let e = s.execute(":instrument dump-ir").unwrap_err().to_string();
    assert!(e.contains("--out DIR"), "{e}");
    let e = s
        .execute(":instrument dump-ir --out")
        .unwrap_err()
        .to_string();
    assert!(e.contains("--out expects a folder"), "{e}");
    let mine = tmp.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "mine").unwrap();
    let e = s
        .execute(&format!(":instrument dump-ir --out {}", mine.display()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("did not write") && e.contains("notes.txt"),
        "{e}"
    );
    assert_eq!(std::fs::read_dir(&mine).unwrap().count(), 1);
    let e = s
        .execute(&format!(":instrument timing --out {}", mine.display()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("for dump-ir"), "{e}");
    // The active dump's folder again, or an earlier dump's: the dump
    // starts again there (a notebook run twice writes the same files).
    let dir = tmp.path().join("dumps");
    s.execute(&format!(":instrument dump-ir --out {}", dir.display()))
        .unwrap();
    s.execute(":run sroa").unwrap();
    assert_eq!(index_rows(&dir).len(), 4, "input, then f, sq and g");
    s.execute(&format!(
        ":instrument dump-ir=instcombine --out {}",
        dir.display()
    ))
    .unwrap();
    assert_eq!(index_rows(&dir).len(), 0);
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        2,
        "index and marker"
    );
    let active = s.execute(":instruments").unwrap().text();
    assert!(active.contains("dump-ir=instcombine --out"), "{active}");
    s.execute(":instrument clear").unwrap();
    s.execute(&format!(":instrument dump-ir --out {}", dir.display()))
        .unwrap();
    s.execute(":run instcombine").unwrap();
    assert!(index_rows(&dir).iter().all(|r| r[1] != "sroa"));
}

#[test]
fn dump_ir_names_files_safely_whatever_the_ir_calls_things() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    let mut s = passlab::session::Session::new();
    s.execute(
        ":module evil --lang llvm\n\
         define i32 @\"/../../x\\22y\"(i32 %a) {\n  %b = add i32 %a, 0\n  ret i32 %b\n}\n.",
    )
    .unwrap();
    s.execute(&format!(":instrument dump-ir --out {}", dir.display()))
        .unwrap();
    s.execute(":run instcombine").unwrap();
    let rows = index_rows(&dir);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[1][4], "0001-instcombine-_.._.._x_y.ll");
    // Nothing was written outside the folder.
    let outside: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(outside.len(), 1);
}

#[test]
fn dump_ir_writes_the_back_ends_changes_in_asm() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    let mut s = session_with_c();
    s.execute(&format!(
        ":instrument dump-ir functions=g --out {}",
        dir.display()
    ))
    .unwrap();
    s.execute(":asm g").unwrap();
    let rows = index_rows(&dir);
    let mir: Vec<_> = rows.iter().filter(|r| r[4].ends_with(".mir")).collect();
    assert!(!mir.is_empty(), "{rows:?}");
    assert!(mir
        .iter()
        .all(|r| r[3] == "g" && r[2] == "machine function"));
    assert!(mir.iter().any(|r| r[1].contains("isel")), "{mir:?}");
}

/// The instruments' recipe (ARCHITECTURE.md): a row of
/// `session::BUILTINS` is all `:instrument`, `:help`, completion, `:report`
/// and the reference need.
#[test]
fn every_row_of_the_instruments_table_reaches_help_completion_and_reference() {
    let mut s = passlab::session::Session::new();
    let help = s.execute(":help instrument").unwrap().text();
    let reference = passlab::session::reference_markdown();
    let report_help = s.execute(":help report").unwrap().text();
    for b in passlab::session::BUILTINS {
        assert!(
            help.contains(&format!("  {}", b.usage())),
            "{}: {help}",
            b.name
        );
        assert!(
            reference.contains(&format!("| `{}` |", b.usage().replace('|', "\\|"))),
            "{}",
            b.name
        );
        // Completion matches a fixed set of words in any case.
        let line = format!(":instrument {}", b.name[..2].to_uppercase());
        let (_, completed) = s.completions().complete(&line, line.len());
        assert!(
            completed
                .iter()
                .any(|c| c.trim_end_matches(['=', ' ']) == b.name),
            "{}: {completed:?}",
            b.name
        );
        for r in b.reports {
            assert!(report_help.contains(&format!("  {}", r.name)), "{}", r.name);
            // Without its instrument, the report names it.
            let e = s
                .execute(&format!(":report {}", r.name))
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!(":instrument {}", b.family)), "{e}");
        }
    }
}
