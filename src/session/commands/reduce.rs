//! :reduce — the smallest module (or C source) that still shows a bug
//! (see `crate::reduce`): kept as a new module, with its size over time as
//! a chart and, with `--out DIR`, a reproducer folder.

use super::jit::{subject_spec, SubjectSpec};
use super::*;
use crate::reduce::{self, Property};

/// What `:help reduce` adds.
pub(super) fn details() -> String {
    "  differs FN ARGS... | FIRST | SECOND   FN's result after the two pipelines differs (a miscompile; FIRST may be no-op-module)\n  \
     differs exec ARG... [stdin=…] | FIRST | SECOND   the program's exit status or output differs\n  \
     fails PIPELINE   the pipeline fails as it does now: the same crash, LLVM fatal error or verifier failure, in the same pass\n  \
     rust PREDICATE   the :rust function fn PREDICATE(m: &Module) -> bool says yes\n  \
     budget=S   stop after S seconds, keeping the smallest so far (Ctrl-C does the same)\n  \
     jobs=N   candidates tested at once (default: one per core, Rust passes and predicates included; with jobs=1 a reduction tests the same candidates every time)\n  \
     with=llvm-reduce (default: LLVM's llvm-reduce-19 over the IR) | with=cvise source=FILE.c [cflags=F,...] [level=O0|…|Oz] (Debian's cvise over the C source the module was compiled from, each candidate compiled as :load does, at the level it was loaded at: default the context's opt_level)\n  \
     --out DIR   write a reproducer there: reduced.ll, README.md, repro.sh (opt-19 and lli-19, with the context's processor and code generation level, when every pass is LLVM's or a plugin's; for a function's result, through driver.ll, which calls it with the finding's arguments), repro.plab and progress.csv (the reduction's steps); a new folder, or one the same :reduce wrote (its files are replaced); a folder of yours or another job's is refused: replace=yes writes beside your files without touching them (or removes only the other job's)\n  \
     The result becomes a new module NAME-reduced, the current one."
        .to_string()
}

/// `--out DIR` at the end of the line, and the line without it.
fn take_trailing_out(rest: &str) -> Result<(String, Option<String>)> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    match words.iter().rposition(|w| *w == "--out") {
        Some(i) if i + 2 == words.len() => {
            let at = rest.rfind("--out").unwrap_or(rest.len());
            Ok((
                rest[..at].trim_end().to_string(),
                Some(words[i + 1].to_string()),
            ))
        }
        Some(_) => Err(err(
            "reduce",
            "--out expects a folder name and comes last, e.g. :reduce fails gvn --out repro",
        )),
        None => Ok((rest.to_string(), None)),
    }
}

/// The property `:reduce` keeps, still as words.
enum What {
    Differs(SubjectSpec, String, String),
    Fails(String),
    Rust(String),
}

/// Settings as typed: (key, value).
type Pairs = Vec<(String, String)>;

const USAGE: &str = "expects differs FN ARGS... | FIRST | SECOND, differs exec ARG... | FIRST | SECOND, fails PIPELINE or rust PREDICATE (:help reduce)";

/// The line after `:reduce`: the property, the settings (those after the
/// last pipeline of `differs` included) and the reproducer's folder.
fn parse(line: &str) -> Result<(What, Pairs, Option<String>)> {
    let (rest, out_dir) = take_trailing_out(line)?;
    let (kind, rest) = rest
        .trim()
        .split_once(char::is_whitespace)
        .map_or((rest.trim(), ""), |(k, r)| (k, r.trim()));
    let (what, settings) = match kind {
        "differs" => differs(rest)?,
        "fails" | "rust" => {
            let args = Args::parse(&format!(":reduce {rest}"))?;
            let [word] = args.words.as_slice() else {
                return Err(err(
                    "reduce",
                    if kind == "fails" {
                        "fails expects one PIPELINE (no spaces in it), then settings"
                    } else {
                        "rust expects the name of a :rust function fn NAME(m: &Module) -> bool"
                    },
                ));
            };
            if kind == "fails" {
                pipeline::parse(word)?;
                (What::Fails(word.clone()), args.settings)
            } else {
                (What::Rust(word.clone()), args.settings)
            }
        }
        "" => return Err(err("reduce", USAGE)),
        other => {
            return Err(Error::Command {
                command: "reduce".into(),
                message: format!("'{other}' is not a property: differs, fails or rust"),
                suggestions: crate::nearest_names(other, ["differs", "fails", "rust"]),
            })
        }
    };
    Ok((what, settings, out_dir))
}

/// `differs SUBJECT | FIRST | SECOND [settings]`, after `differs`.
fn differs(rest: &str) -> Result<(What, Pairs)> {
    let mut parts = rest.split('|').map(str::trim);
    let head = parts.next().unwrap_or("");
    let mut pipelines: Vec<String> = parts.map(str::to_string).collect();
    // :reduce's own settings may follow the last pipeline too.
    let mut trailing = Vec::new();
    if let Some(last) = pipelines.last_mut() {
        let mut words: Vec<String> = last.split_whitespace().map(str::to_string).collect();
        while words.len() > 1 {
            match words.last().and_then(|w| crate::session::args::setting(w)) {
                Some((k, v)) if reduce::SETTINGS.contains(&k) => {
                    trailing.insert(0, (k.to_string(), v.to_string()));
                    words.pop();
                }
                _ => break,
            }
        }
        *last = words.join(" ");
    }
    let [first, second] = pipelines.as_slice() else {
        return Err(err(
            "reduce",
            "differs expects the subject and two pipelines: differs FN ARGS... | FIRST | SECOND (FIRST may be no-op-module)",
        ));
    };
    if first.is_empty() || second.is_empty() {
        return Err(err(
            "reduce",
            "differs: a pipeline is empty (no-op-module runs none)",
        ));
    }
    for p in [first, second] {
        pipeline::parse(p)?;
    }
    let (subject, mut settings) = subject_spec("reduce", head)?;
    settings.extend(trailing);
    if matches!(subject, SubjectSpec::None) {
        return Err(err(
            "reduce",
            "differs expects FN ARGS... or exec ARG... before the pipelines",
        ));
    }
    Ok((
        What::Differs(subject, first.clone(), second.clone()),
        settings,
    ))
}

pub(super) fn reduce(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let (what, settings, out_dir) = parse(&a.rest)?;
    let level = crate::module::Level::from_opt_level(PassContext::current().opt_level());
    let settings = reduce::Settings::parse(&settings, level)?;
    let c_text = match &settings.source {
        Some(file) => Some(match source_text(s, file) {
            Some(t) => t,
            None => std::fs::read_to_string(file).map_err(|e| Error::io(file, e))?,
        }),
        None => None,
    };
    let name = current(s, "reduce")?;
    let argv0 = s.module_named("reduce", &name)?.name();
    // The reproducer's folder is taken before the reduction: a folder that
    // is not this job's is refused at once, not after minutes of work.
    let out = match &out_dir {
        Some(dir) => {
            let m = s.module_named("reduce", &name)?;
            let path = std::path::Path::new(dir);
            Some(reduce::claim_folder(path, &a.rest, m, settings.replace)?)
        }
        None => None,
    };
    let result: Result<_> = s.with_progress(|s, progress| {
        let m = s.module_named("reduce", &name)?;
        let property = match &what {
            What::Differs(spec, first, second) => Property::differs(
                spec.resolve(s, "reduce")?
                    .ok_or_else(|| err("reduce", USAGE))?,
                first,
                second,
                m,
            )?,
            What::Fails(p) => Property::fails_now(m, p, &name)?,
            What::Rust(f) => Property::Accepted {
                pass: rust_predicate(f)?,
            },
        };
        let c = c_text
            .as_deref()
            .map(|t| (t, settings.source.as_deref().unwrap_or("source.c")));
        let (reduction, repro) =
            reduce::run(m, &property, &settings.options, c, out.as_ref(), progress)?;
        Ok((reduction, repro, property.describe(&argv0)))
    });
    let (reduction, repro, described) = result?;
    render(s, &name, reduction, repro, &described)
}

/// What `:reduce` shows of `reduction` (of module `name`): what was kept,
/// the summary, the size over time, the reduced source or IR (when short)
/// and the reproducer; the reduced module becomes the current one.
fn render(
    s: &mut Session,
    name: &str,
    reduction: reduce::Reduction,
    repro: Option<reduce::Reproducer>,
    described: &str,
) -> Result<Output> {
    let mut new_name = format!("{name}-reduced");
    let mut n = 2;
    while s.modules.contains_key(&new_name) {
        new_name = format!("{name}-reduced-{n}");
        n += 1;
    }
    let mut o = Output::default();
    o.push_text(format!("kept: {described}\n{}", reduction.summary()));
    if reduction.steps.len() > 1 {
        let chart = reduction.chart(&format!("reducing {name}: instructions over time"));
        o.items
            .push(Item::Display(super::super::Bundle::chart(&chart)?));
    }
    if let Some(src) = &reduction.source {
        o.push_text(format!("the reduced C source:\n{src}"));
    }
    let ir = reduction.module.print();
    if ir.lines().count() <= 80 {
        o.extend(code(s, ir, Code::Ir)?);
    }
    if let Some(r) = &repro {
        o.push_text(r.note());
    }
    o.push_text(format!(
        "{new_name}: the reduced module, now the current one (:use {name} to go back)"
    ));
    s.put_module(new_name.clone(), reduction.module);
    s.current = Some(new_name);
    Ok(o)
}

/// Registers a module pass that runs the `:rust` function `f` (`fn f(m:
/// &Module) -> bool`) and fails when it says no: the predicate as a pass
/// the property can run in the Rust worker.
fn rust_predicate(f: &str) -> Result<String> {
    use crate::user::{Registration, UserKind};
    if !f.chars().all(|c| c.is_alphanumeric() || c == '_') || f.is_empty() {
        return Err(err(
            "reduce",
            format!("'{f}' is not the name of a Rust function"),
        ));
    }
    let wrapper = format!("reduce_predicate_{f}");
    let code = format!(
        "fn {wrapper}(m: &mut passlab::Module, _ctx: &passlab::PassContext) -> passlab::Result<()> {{\n    \
         if {f}(&*m) {{ Ok(()) }} else {{ Err(passlab::Error::Invalid(\"not interesting\".into())) }}\n}}"
    );
    crate::user::eval(&code).map_err(|e| match e {
        crate::user::EvalError::Compile(d) => err(
            "reduce",
            format!(
                "{f} is not a :rust function fn {f}(m: &Module) -> bool: {}",
                d.iter()
                    .map(|d| d.message.clone())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        ),
        crate::user::EvalError::Other(m) => err("reduce", m),
    })?;
    let info = crate::PassInfo::new(&wrapper, 0).describe(&format!("the reduction predicate {f}"));
    crate::user::register(Registration {
        info,
        kind: UserKind::Module,
        function: wrapper.clone(),
    })
    .map_err(|e| {
        err(
            "reduce",
            format!("cannot register the predicate {f}: {e:?}"),
        )
    })?;
    Ok(wrapper)
}
