//! What a bug is, as something a module has or has not: the property a
//! reduction keeps ([`Property`]), and how one pipeline run ends when it is
//! run where it cannot take the session ([`Ending`], [`run_isolated`]).

use crate::instrument::{FnInstrument, VerifyEach};
use crate::jit::{Codegen, ExecResult, Jit, Subject};
use crate::module::Module;
use crate::{pipeline, Error, PassContext, Result};
use std::rc::Rc;
use std::time::Duration;

/// How running a pipeline on a module ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ending {
    /// It ran and the IR verifies.
    Fine,
    /// A pass crashed: the process died of `signal` while `pass` ran.
    Crash { pass: String, signal: String },
    /// A pass hit an LLVM fatal error (`LLVM ERROR: …`).
    Fatal { pass: String, message: String },
    /// The IR did not verify after `pass`.
    Invalid { pass: String, message: String },
    /// It did not finish in time.
    Timeout { pass: String },
    /// Another error (a pass that failed as passes may fail).
    Failed { message: String },
}

impl Ending {
    /// `crash`, `fatal error`, `verifier failure`, `timeout`, `failed` or
    /// `fine`.
    pub fn kind(&self) -> &'static str {
        match self {
            Ending::Fine => "fine",
            Ending::Crash { .. } => "crash",
            Ending::Fatal { .. } => "fatal error",
            Ending::Invalid { .. } => "verifier failure",
            Ending::Timeout { .. } => "timeout",
            Ending::Failed { .. } => "failed",
        }
    }

    /// The pass it ended in, if any.
    pub fn pass(&self) -> Option<&str> {
        match self {
            Ending::Crash { pass, .. }
            | Ending::Fatal { pass, .. }
            | Ending::Invalid { pass, .. }
            | Ending::Timeout { pass } => Some(pass),
            Ending::Fine | Ending::Failed { .. } => None,
        }
    }

    /// What two runs must share to be the same bug: the kind, the pass and
    /// the first line of the message with numbers and names of values left
    /// out (`%5`, `@f`, `i32 7`), so that a smaller module that fails the
    /// same way matches and one that fails another way does not.
    pub fn signature(&self) -> String {
        let message = match self {
            Ending::Crash { signal, .. } => signal.clone(),
            Ending::Fatal { message, .. }
            | Ending::Invalid { message, .. }
            | Ending::Failed { message } => message.clone(),
            Ending::Timeout { .. } | Ending::Fine => String::new(),
        };
        let first = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        format!(
            "{} in {}: {}",
            self.kind(),
            self.pass().unwrap_or("-"),
            mask_values(first.trim())
        )
    }

    /// As a table cell: `crash (SIGSEGV …) in gvn`.
    pub fn describe(&self) -> String {
        match self {
            Ending::Fine => "fine".into(),
            Ending::Crash { pass, signal } => format!("crashed in {pass}: {signal}"),
            Ending::Fatal { pass, message } => {
                format!("fatal error in {pass}: {}", first_line(message))
            }
            Ending::Invalid { pass, message } => {
                format!("IR does not verify after {pass}: {}", first_line(message))
            }
            Ending::Timeout { pass } => format!("timed out in {pass}"),
            Ending::Failed { message } => format!("failed: {}", first_line(message)),
        }
    }
}

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

/// `text` with the names of values and numbers replaced by `#`: what
/// stays the same when a module shrinks.
pub fn mask_values(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if matches!(c, '%' | '@') {
            out.push(c);
            out.push('#');
            while chars
                .peek()
                .is_some_and(|n| n.is_alphanumeric() || matches!(n, '_' | '.' | '-'))
            {
                chars.next();
            }
        } else if c.is_ascii_digit() {
            out.push('#');
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// In the child: runs `pass` on a copy of `module`, telling `out` each
/// pass it starts (`P`) and how the run ended: fine (`O`), the verifier's
/// failure (`V`), a Rust pass's crash (`C`) or an error (`E`).
fn run_telling(module: &Module, pass: &crate::pass::PassRef, verify_each: bool, out: i32) {
    let mut copy = module.copy();
    let tell = move |name: &str| {
        let mut line = name.replace('\n', " ");
        line.push('\n');
        crate::child::write_all(out, format!("P\t{line}").as_bytes());
    };
    let starts = FnInstrument::new("reduce:passes").on_before(move |_, run| {
        tell(&run.info.name);
        Ok(())
    });
    let mut ctx = PassContext::inherit().with_instrument(Rc::new(starts));
    if verify_each {
        ctx = ctx.with_instrument(Rc::new(VerifyEach::new()));
    }
    let result = ctx.enter().and_then(|scope| {
        let r = pass.apply(&mut copy);
        scope.exit()?;
        r
    });
    let line = match result {
        Ok(()) => "O\n".to_string(),
        Err(Error::Verify { pass, message, .. }) => {
            format!("V\t{}\t{}\n", pass, message.replace('\n', "\u{1f}"))
        }
        // A Rust pass that crashed in its own process: a crash, as if
        // here.
        Err(Error::PassCrashed { pass, how, .. }) => {
            format!("C\t{}\t{}\n", pass, how.replace('\n', " "))
        }
        Err(e) => format!("E\t{}\n", e.to_string().replace('\n', "\u{1f}")),
    };
    crate::child::write_all(out, line.as_bytes());
}

/// What the child told: the last pass it started (the pipeline, if none)
/// and how the run ended, if it said.
fn told(bytes: &[u8], pipeline_text: &str) -> (String, Option<Ending>) {
    let text = String::from_utf8_lossy(bytes);
    let mut last_pass = pipeline_text.to_string();
    let mut end = None;
    for line in text.lines() {
        match line.split_once('\t') {
            Some(("P", p)) => last_pass = p.to_string(),
            Some(("V", rest)) => {
                let (p, m) = rest.split_once('\t').unwrap_or((rest, ""));
                end = Some(Ending::Invalid {
                    pass: p.to_string(),
                    message: m.replace('\u{1f}', "\n"),
                });
            }
            Some(("C", rest)) => {
                let (p, how) = rest.split_once('\t').unwrap_or((rest, ""));
                end = Some(Ending::Crash {
                    pass: p.to_string(),
                    signal: how.to_string(),
                });
            }
            Some(("E", m)) => {
                let m = m.replace('\u{1f}', "\n");
                end = Some(match m.find("LLVM ERROR:") {
                    Some(at) => Ending::Fatal {
                        pass: last_pass.clone(),
                        // LLVM's words, without what passlab adds after them.
                        message: m[at..]
                            .split(" (LLVM gave up on the run")
                            .next()
                            .unwrap_or("")
                            .to_string(),
                    },
                    None => Ending::Failed { message: m },
                });
            }
            _ if line == "O" => end = Some(Ending::Fine),
            _ => {}
        }
    }
    (last_pass, end)
}

/// Runs `pipeline` on a copy of `module` in a forked child under the
/// current context, the IR verified after every pass when `verify_each`,
/// and says how it ended. The child tells the parent each pass it starts,
/// so that a crash names the pass it happened in.
pub fn run_isolated(
    module: &Module,
    pipeline_text: &str,
    verify_each: bool,
    timeout: Duration,
) -> Result<Ending> {
    let pass = pipeline::parse(pipeline_text)?;
    let c = crate::child::spawn(|out| {
        run_telling(module, &pass, verify_each, out);
        0
    })
    .map_err(Error::Invalid)?;
    let (mut said, mut bytes, mut buf) = (Vec::new(), Vec::new(), vec![0u8; 1 << 16]);
    let start = std::time::Instant::now();
    let (status, timed_out) = loop {
        c.poll(20);
        crate::child::drain(c.said, &mut said, &mut buf);
        crate::child::drain(c.result, &mut bytes, &mut buf);
        if let Some(status) = c.try_wait() {
            break (status, false);
        }
        if crate::interrupt::requested() {
            c.kill();
            c.close();
            return Err(Error::Interrupted {
                pass: format!("{pipeline_text} (in a child)"),
            });
        }
        if start.elapsed() > timeout {
            break (c.kill(), true);
        }
    };
    crate::child::drain(c.said, &mut said, &mut buf);
    crate::child::drain(c.result, &mut bytes, &mut buf);
    c.close();
    let (last_pass, end) = told(&bytes, pipeline_text);
    if timed_out {
        return Ok(Ending::Timeout { pass: last_pass });
    }
    if libc::WIFSIGNALED(status) {
        let said = String::from_utf8_lossy(&said);
        // LLVM prints a fatal error and aborts where no guard catches it.
        return Ok(match said.find("LLVM ERROR:") {
            Some(at) => Ending::Fatal {
                pass: last_pass,
                message: said[at..].trim().to_string(),
            },
            None => Ending::Crash {
                pass: last_pass,
                signal: crate::child::signal_name(libc::WTERMSIG(status)),
            },
        });
    }
    Ok(end.unwrap_or_else(|| Ending::Failed {
        message: format!(
            "the child {} without saying how the pipeline ended",
            crate::child::how_it_ended(status)
        ),
    }))
}

/// Set in a child [`spawn_decision`] starts: this process decides one
/// candidate and ends.
static DECISION_CHILD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process is a child that decides one candidate (so what
/// could end it needs no further child).
fn in_decision_child() -> bool {
    DECISION_CHILD.load(std::sync::atomic::Ordering::Relaxed)
}

/// Starts a forked child that decides with `work` and writes its answer as
/// one byte: `1` yes, `0` no (an error too), `I` interrupted.
pub(super) fn spawn_decision(work: impl FnOnce() -> Result<bool>) -> Result<crate::child::Child> {
    crate::child::spawn(|out| {
        DECISION_CHILD.store(true, std::sync::atomic::Ordering::Relaxed);
        let answer: &[u8] = match work() {
            Ok(true) => b"1",
            Ok(false) => b"0",
            Err(Error::Interrupted { .. }) => b"I",
            Err(_) => b"0",
        };
        crate::child::write_all(out, answer);
        0
    })
    .map_err(Error::Invalid)
}

/// Runs `work` in a forked child and gives its answer: false when the
/// child dies (a crash is not the property), an interrupt is an error.
fn in_child(work: impl FnOnce() -> Result<bool>) -> Result<bool> {
    if in_decision_child() {
        // Already one: nothing here outlives the answer.
        return work();
    }
    let c = spawn_decision(work)?;
    let (mut said, mut answer, mut buf) = (Vec::new(), Vec::new(), vec![0u8; 4096]);
    loop {
        c.poll(20);
        crate::child::drain(c.said, &mut said, &mut buf);
        crate::child::drain(c.result, &mut answer, &mut buf);
        if c.try_wait().is_some() {
            break;
        }
        if crate::interrupt::requested() {
            c.kill();
            break;
        }
    }
    crate::child::drain(c.result, &mut answer, &mut buf);
    c.close();
    match answer.first() {
        Some(b'1') => Ok(true),
        Some(b'I') => Err(Error::Interrupted {
            pass: "a reduction's test (in a child)".into(),
        }),
        _ if crate::interrupt::requested() => Err(Error::Interrupted {
            pass: "a reduction's test (in a child)".into(),
        }),
        _ => Ok(false),
    }
}

/// What a reduction keeps true.
pub enum Property<'a> {
    /// The subject's outcome after `second` differs from its outcome after
    /// `first` (both run and compiled without error) with the same
    /// symptom: a miscompile. Made by [`Property::differs`].
    Differs {
        subject: Subject<'a>,
        first: String,
        second: String,
        symptom: Symptom,
        /// How much processor time a candidate's run may use: twenty times
        /// the original's slower run of `main`, plus 50 ms (a reduction
        /// often makes loops that never end; processor time, so that a
        /// loaded machine decides the same candidates the same way).
        limit: Duration,
        /// How candidates are compiled: the code generator at level 0 when
        /// the original shows the symptom that way too, else as the context
        /// says. (Candidates with an `alloca` of zero elements or one that
        /// is read but never written, whose accesses are undefined
        /// behaviour that level 0's code happens to survive, are refused
        /// whatever the level.)
        codegen: Codegen,
        /// The code the context asks for, which the session's `:bench` and
        /// `:exec` then use: a candidate that shows the symptom with the
        /// quick code must show it with this one too (its stability
        /// re-run), or the reduced module may show the bug only at level 0
        /// (undefined behaviour the reduction brought in, which the two
        /// code generators happen to treat differently).
        checked: Box<Codegen>,
    },
    /// Running `pipeline` ends the same way as `ending` (its
    /// [`Ending::signature`]): the same kind of failure, in the same pass,
    /// with the same message.
    Fails { pipeline: String, ending: Ending },
    /// A registered pass (a Rust predicate wrapped by `:reduce rust`)
    /// accepts the module: it runs without error.
    Accepted { pass: String },
}

/// What a subject gave: a function's result in words, or what a program
/// did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Call(String),
    Exec(ExecResult),
}

/// The subject's outcome in a copy of `module` after `text`, and how long
/// the program's `main` ran.
fn try_outcome(
    subject: &Subject,
    module: &Module,
    text: &str,
    codegen: &Codegen,
    limit: Option<Duration>,
) -> Result<(Outcome, Duration)> {
    let mut copy = module.copy();
    pipeline::parse(text)?.apply(&mut copy)?;
    // In a child that decides one candidate and is then thrown away, the
    // code is generated here: a fatal error ends that child, which answers
    // no, as a failed compilation does (a fork per compilation, and the
    // copy-on-write faults of a large session, cost a fifth of the time).
    let mut jit = Jit::compile(&copy, codegen, in_decision_child())?;
    if let Some(limit) = limit {
        // Processor time, which a loaded machine does not shorten (so the
        // same candidates are decided the same way under load); wall time
        // only as a backstop, for a program that waits.
        let most = jit.timeout();
        jit = jit
            .with_cpu_limit(limit)
            .with_timeout((limit * 10).max(Duration::from_secs(2)).min(most));
    }
    let saved = subject.save();
    saved.restore()?;
    let o = match subject {
        // Compared by what it did, not how long it took.
        Subject::Exec(p) => jit.exec(p).map(|r| {
            let ran = r.elapsed;
            (
                Outcome::Exec(ExecResult {
                    elapsed: std::time::Duration::ZERO,
                    ..r
                }),
                ran,
            )
        }),
        Subject::Call { .. } => subject
            .outcome(&jit)
            .map(|o| (Outcome::Call(o), Duration::ZERO)),
    };
    saved.restore()?;
    o
}

/// [`try_outcome`], `None` when the pipeline, the compilation or the run
/// fails (an interrupt is an error).
fn outcome(
    subject: &Subject,
    module: &Module,
    text: &str,
    codegen: &Codegen,
    limit: Duration,
) -> Result<Option<Outcome>> {
    match try_outcome(subject, module, text, codegen, Some(limit)) {
        Ok((o, _)) => Ok(Some(o)),
        Err(e @ Error::Interrupted { .. }) => Err(e),
        Err(_) => Ok(None),
    }
}

/// How a miscompile shows, kept while the module shrinks, so that a
/// candidate that differs for another reason (undefined behaviour the
/// reduction brought in, such as reading memory never written) is not
/// taken for the same bug: the first line on which the program's output
/// differs, as it reads after each pipeline, with the words that differ;
/// or the exit statuses; or, for a function, both results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Symptom {
    /// The first line on which the outputs differ reads `first` after the
    /// first pipeline and `second` after the second. A candidate shows it
    /// when its first differing line has as many words and differs in the
    /// same words (those that differ here), whatever their values (a
    /// reduction changes what a checksum adds up), the others the same
    /// after both pipelines.
    Lines { first: String, second: String },
    /// The program ends with these exit statuses.
    Status(i32, i32),
    /// The function gives these results.
    Results(String, String),
}

/// The first line on which two programs' outputs differ (standard output,
/// then standard error): the line as each printed it (empty when one
/// printed fewer lines).
fn first_difference(x: &ExecResult, y: &ExecResult) -> Option<(String, String)> {
    for (p, q) in [(&x.stdout, &y.stdout), (&x.stderr, &y.stderr)] {
        let (pl, ql): (Vec<&str>, Vec<&str>) = (p.lines().collect(), q.lines().collect());
        for i in 0..pl.len().max(ql.len()) {
            let (l, m) = (pl.get(i).copied(), ql.get(i).copied());
            if l != m {
                return Some((l.unwrap_or("").to_string(), m.unwrap_or("").to_string()));
            }
        }
    }
    None
}

impl Symptom {
    /// The symptom two outcomes show, if they differ.
    pub fn between(a: &Outcome, b: &Outcome) -> Option<Symptom> {
        match (a, b) {
            (Outcome::Call(x), Outcome::Call(y)) => {
                (x != y).then(|| Symptom::Results(x.clone(), y.clone()))
            }
            (Outcome::Exec(x), Outcome::Exec(y)) => match first_difference(x, y) {
                Some((first, second)) => Some(Symptom::Lines { first, second }),
                None => (x.status != y.status).then_some(Symptom::Status(x.status, y.status)),
            },
            _ => None,
        }
    }

    /// Whether outcomes `a` (after the first pipeline) and `b` show it.
    fn shown_by(&self, a: &Outcome, b: &Outcome) -> bool {
        match (self, a, b) {
            (Symptom::Lines { first, second }, Outcome::Exec(x), Outcome::Exec(y)) => {
                let Some((l, m)) = first_difference(x, y) else {
                    return false;
                };
                let words = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
                let (f, s, l, m) = (words(first), words(second), words(&l), words(&m));
                if f.len() != l.len() || s.len() != m.len() {
                    return false;
                }
                // Where the original lines differ, a difference; where they
                // agree, agreement: any values (a reduction changes what a
                // checksum adds up), the same shape.
                (0..f.len().max(s.len())).all(|i| {
                    let (fi, si, li, mi) = (f.get(i), s.get(i), l.get(i), m.get(i));
                    if fi != si {
                        li != mi
                    } else {
                        li == mi
                    }
                })
            }
            (Symptom::Status(p, q), Outcome::Exec(x), Outcome::Exec(y)) => {
                x.status == *p && y.status == *q
            }
            (Symptom::Results(p, q), Outcome::Call(x), Outcome::Call(y)) => x == p && y == q,
            _ => false,
        }
    }

    /// In words: `prints "wraps: 1" after O0, "wraps: 0" after O2`.
    pub fn describe(&self, first: &str, second: &str) -> String {
        match self {
            Symptom::Lines {
                first: a,
                second: b,
            } => {
                format!("prints {a:?} after {first}, {b:?} after {second}")
            }
            Symptom::Status(a, b) => format!("exits with {a} after {first}, {b} after {second}"),
            Symptom::Results(a, b) => format!("gives {a} after {first}, {b} after {second}"),
        }
    }
}

impl<'a> Property<'a> {
    /// The miscompile `module` shows: `subject`'s outcome after `second`
    /// differs from its outcome after `first`; the symptom is taken from
    /// `module`. An error when it does not differ there.
    pub fn differs(
        subject: Subject<'a>,
        first: &str,
        second: &str,
        module: &Module,
    ) -> Result<Property<'a>> {
        let context_codegen = Codegen::from_context(&PassContext::current())?;
        let run = |p: &str| -> Result<(Outcome, Duration)> {
            try_outcome(&subject, module, p, &context_codegen, None).map_err(|e| match e {
                e @ Error::Interrupted { .. } => e,
                e => Error::Invalid(format!(
                    "{} does not run after {p} (it must, for a difference to mean anything): {e}",
                    subject.label(&module.name())
                )),
            })
        };
        let ((a, ta), (b, tb)) = (run(first)?, run(second)?);
        let limit = ta.max(tb) * 20 + Duration::from_millis(50);
        let symptom = Symptom::between(&a, &b).ok_or_else(|| {
            Error::Invalid(format!(
                "{} is the same after {first} and {second}: no difference to keep",
                subject.label(&module.name())
            ))
        })?;
        // Candidates compile three to five times faster with the code
        // generator at level 0 (its fast instruction selector and register
        // allocator): used when the original shows the symptom that way
        // too, the code the context asks for otherwise.
        let quick = Codegen {
            opt_level: 0,
            ..context_codegen.clone()
        };
        let shows_quickly = {
            let a = outcome(&subject, module, first, &quick, limit)?;
            let b = outcome(&subject, module, second, &quick, limit)?;
            matches!((a, b), (Some(a), Some(b)) if a != b && symptom.shown_by(&a, &b))
        };
        let codegen = if shows_quickly {
            quick
        } else {
            context_codegen.clone()
        };
        Ok(Property::Differs {
            subject,
            first: first.to_string(),
            second: second.to_string(),
            symptom,
            limit,
            codegen,
            checked: Box::new(context_codegen),
        })
    }
}

impl Property<'static> {
    /// The failure `pipeline` shows on `module` now (a crash, an LLVM fatal
    /// error or a verifier failure, in a child, the IR verified after each
    /// pass, within a minute), as the property to keep. An error when it
    /// ends fine or with an ordinary error: nothing to keep (`name` is the
    /// module's, for the message).
    pub fn fails_now(module: &Module, pipeline: &str, name: &str) -> Result<Property<'static>> {
        let ending = run_isolated(module, pipeline, true, Duration::from_secs(60))?;
        if matches!(ending, Ending::Fine | Ending::Failed { .. }) {
            return Err(Error::Command {
                command: "reduce".into(),
                message: format!(
                    "{pipeline} does not crash, hit a fatal error or break the IR on {name} ({}): nothing to keep",
                    ending.describe()
                ),
                suggestions: vec![],
            });
        }
        Ok(Property::Fails {
            pipeline: pipeline.to_string(),
            ending,
        })
    }
}

impl Property<'_> {
    /// In words, for titles and reproducers.
    pub fn describe(&self, argv0: &str) -> String {
        match self {
            Property::Differs {
                subject,
                first,
                second,
                symptom,
                ..
            } => format!(
                "{} differs between {first} and {second}: {}",
                subject.label(argv0),
                symptom.describe(first, second)
            ),
            Property::Fails { pipeline, ending } => {
                format!("{pipeline}: {}", ending.describe())
            }
            Property::Accepted { pass } => format!("the predicate {pass} holds"),
        }
    }

    /// Whether `module` has the property. A module the property cannot be
    /// decided on (it does not compile, a run fails another way) does not
    /// have it; an interrupt is an error.
    pub fn holds(&self, module: &Module) -> Result<bool> {
        let interrupted = |e: &Error| matches!(e, Error::Interrupted { .. });
        match self {
            Property::Differs {
                subject,
                first,
                second,
                symptom,
                limit,
                codegen,
                checked,
            } => {
                if module.has_unsound_alloca() {
                    return Ok(false);
                }
                // In a child: a candidate may crash a pass that ran well
                // on the original.
                in_child(|| {
                    let run = |p: &str, cg: &Codegen| outcome(subject, module, p, cg, *limit);
                    let Some(a) = run(first, codegen)? else {
                        return Ok(false);
                    };
                    let Some(b) = run(second, codegen)? else {
                        return Ok(false);
                    };
                    if a == b || !symptom.shown_by(&a, &b) {
                        return Ok(false);
                    }
                    // The first pipeline compiled and run again: a program
                    // whose output depends on where the JIT put things
                    // (printing an address) or on memory it never wrote
                    // differs from itself, and says nothing about a pass.
                    // Fresh memory painted this time: a program that
                    // reads memory it never wrote (a reduction easily
                    // makes one) prints what the paint says.
                    // And the code and data elsewhere: a reserved range
                    // moves where the JIT maps them, so a program whose
                    // output depends on addresses (undefined behaviour a
                    // reduction makes) differs from itself here, instead
                    // of only from one address layout to the next.
                    crate::child::reserve_address_space((3 << 20) + (5 << 12));
                    // With the code the context asks for when the
                    // candidates are compiled quickly: both pipelines, the
                    // first giving what it gave, the second still showing
                    // the symptom.
                    crate::jit::paint_fresh_memory(Some(0xA5));
                    let stable = (|| -> Result<bool> {
                        if run(first, checked)?.as_ref() != Some(&a) {
                            return Ok(false);
                        }
                        if *codegen == **checked {
                            return Ok(true);
                        }
                        Ok(matches!(run(second, checked)?,
                                    Some(b2) if b2 != a && symptom.shown_by(&a, &b2)))
                    })();
                    crate::jit::paint_fresh_memory(None);
                    stable
                })
            }
            Property::Fails { pipeline, ending } => {
                let verify = matches!(ending, Ending::Invalid { .. });
                let timeout = Duration::from_secs(30);
                Ok(run_isolated(module, pipeline, verify, timeout)?.signature()
                    == ending.signature())
            }
            Property::Accepted { pass } => {
                let p = crate::registry::get_pass(pass)?;
                let mut copy = module.copy();
                match p.apply(&mut copy) {
                    Ok(()) => Ok(true),
                    Err(e) if interrupted(&e) => Err(e),
                    Err(_) => Ok(false),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocas_read_but_never_written_are_unsound() {
        let m = |body: &str| {
            Module::from_ir(
                &format!("declare void @g(ptr)\ndefine i32 @f() {{\n  %a = alloca [4 x i32]\n  %p = getelementptr [4 x i32], ptr %a, i64 0, i64 1\n{body}  %x = load i32, ptr %p\n  ret i32 %x\n}}\n"),
                "a.ll",
            )
            .unwrap()
        };
        assert!(m("").has_unsound_alloca(), "read only");
        assert!(
            !m("  store i32 1, ptr %p\n").has_unsound_alloca(),
            "written"
        );
        assert!(
            !m("  call void @g(ptr %a)\n").has_unsound_alloca(),
            "escaped"
        );
        let empty = Module::from_ir(
            "define void @f() {\n  %a = alloca i32, i32 0\n  store i32 1, ptr %a\n  ret void\n}\n",
            "e.ll",
        )
        .unwrap();
        assert!(empty.has_unsound_alloca(), "zero elements");
    }

    #[test]
    fn signatures_ignore_names_and_numbers() {
        assert_eq!(
            mask_values("Instruction does not dominate all uses! %12 = add i32 %x, 7 @main"),
            "Instruction does not dominate all uses! %# = add i# %#, # @#"
        );
        let a = Ending::Fatal {
            pass: "instcombine".into(),
            message:
                "LLVM ERROR: Instruction Combining did not reach a fixpoint after 1 iterations"
                    .into(),
        };
        let b = Ending::Fatal {
            pass: "instcombine".into(),
            message: "LLVM ERROR: Instruction Combining did not reach a fixpoint after 2 iterations\nmore".into(),
        };
        assert_eq!(a.signature(), b.signature());
        let c = Ending::Crash {
            pass: "instcombine".into(),
            signal: "crashed with SIGSEGV".into(),
        };
        assert_ne!(a.signature(), c.signature());
    }

    #[test]
    fn a_run_that_ends_well_is_fine_and_a_broken_pipeline_is_named() {
        let m = Module::from_ir(
            "define i32 @f(i32 %x) {\n  %y = add i32 %x, 0\n  ret i32 %y\n}\n",
            "f.ll",
        )
        .unwrap();
        let t = Duration::from_secs(30);
        assert_eq!(
            run_isolated(&m, "instcombine", false, t).unwrap(),
            Ending::Fine
        );
        assert!(run_isolated(&m, "no-such-pass", false, t).is_err());
    }

    #[test]
    fn a_pipeline_that_runs_fine_is_no_failure_to_keep() {
        let m = Module::from_ir(
            "define i32 @f(i32 %x) {\n  %y = add i32 %x, 0\n  ret i32 %y\n}\n",
            "f.ll",
        )
        .unwrap();
        let Err(Error::Command {
            command, message, ..
        }) = Property::fails_now(&m, "instcombine", "m")
        else {
            panic!("a fine run was kept as a failure")
        };
        assert_eq!(command, "reduce");
        assert!(
            message.starts_with(
                "instcombine does not crash, hit a fatal error or break the IR on m ("
            ) && message.ends_with("): nothing to keep"),
            "{message}"
        );
    }
}
