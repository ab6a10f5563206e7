//! The command table: every command once, with its usage, its help and its
//! handler. Dispatch, `:help`, completion and the README's command
//! reference all read [`COMMANDS`].

use super::{Active, Args, Output, Scope, Session};
use crate::instrument::{
    Bisect, Counts, IrSize, PassFilter, PrintChanged, PrintPasses, Timing, Trace, VerifyEach,
};
use crate::module::{Lang, Module, Source};
use crate::table::Table;
use crate::{pipeline, registry, Error, PassContext, Result};
use std::rc::Rc;

type Handler = fn(&mut Session, &Args, Option<&str>) -> Result<Output>;

/// One command of the language.
pub struct Command {
    /// The name users type after `:`.
    pub name: &'static str,
    /// Its arguments, as `:help` shows them.
    pub usage: &'static str,
    /// One line saying what it does.
    pub help: &'static str,
    run: Handler,
}

impl Command {
    /// Runs the command (the session's `execute` is the usual way in).
    pub(crate) fn call(&self, s: &mut Session, a: &Args, body: Option<&str>) -> Result<Output> {
        (self.run)(s, a, body)
    }
}

/// Every command, in the order `:help` lists them.
pub static COMMANDS: &[Command] = &[
    Command { name: "help", usage: "[COMMAND]", help: "list the commands, or explain one", run: help },
    Command { name: "module", usage: "NAME [--lang llvm|c|cpp]", help: "create a module from the source that follows (in scripts and the REPL: the lines up to a line holding only '.')", run: module },
    Command { name: "load", usage: "PATH... [as NAME]", help: "load .ll .bc .c .cpp files (several are linked into one module)", run: load },
    Command { name: "modules", usage: "", help: "list the modules", run: modules },
    Command { name: "use", usage: "NAME", help: "make a module the current one", run: use_module },
    Command { name: "show", usage: "[FUNCTION]", help: "print the current module, or one function", run: show },
    Command { name: "stats", usage: "", help: "functions, blocks and instructions of the current module, per function", run: stats },
    Command { name: "copy", usage: "NEW", help: "copy the current module under a new name and use it", run: copy },
    Command { name: "diff", usage: "A B", help: "unified diff of two modules' IR", run: diff },
    Command { name: "save", usage: "PATH", help: "write the current module (.bc: bitcode, otherwise IR text)", run: save },
    Command { name: "with", usage: "opt_level=N disabled=P,... required=P,... config.KEY=VALUE ...", help: "enter a pass context nested in the current one", run: with },
    Command { name: "end", usage: "", help: "leave the innermost :with context", run: end },
    Command { name: "context", usage: "", help: "show the stack of pass contexts", run: context },
    Command { name: "instrument", usage: "timing | ir-size | print-before=P,... | print-after=P,... | print-changed | verify | bisect=N | skip=P,... | trace | counts | clear", help: "add instruments to the passes :run runs", run: instrument },
    Command { name: "instruments", usage: "", help: "list the active instruments", run: instruments },
    Command { name: "passes", usage: "[FILTER]", help: "list the registered passes (Rust and LLVM), optionally those whose name contains FILTER", run: passes },
    Command { name: "pass", usage: "NAME = PIPELINE [opt_level=N] [required=P,...]", help: "define a named sequential pass (usable in pipelines, gated like any pass)", run: define_pass },
    Command { name: "explain", usage: "[PIPELINE]", help: "what would run under the current context, and why each pass would or would not", run: explain },
    Command { name: "run", usage: "[PIPELINE]", help: "run a pipeline on the current module (none: the default one for the context's opt level)", run: run_pipeline },
    Command { name: "buffer", usage: "NAME TYPE[LEN] = zeros|ones|range|random(SEED)", help: "create a typed array (i8 i16 i32 i64 f32 f64) that functions can read and write", run: buffer },
    Command { name: "buffers", usage: "", help: "list the buffers with a summary and checksum", run: buffers },
    Command { name: "call", usage: "FN ARGS...", help: "JIT-compile the current module and call a function (integers, floats, buffer names), isolated from crashes", run: call },
    Command { name: "time", usage: "FN ARGS... [number=N repeat=R min_repeat_ms=M]", help: "time a function (TVM's time evaluator: warm-up, number calls per repeat, repeat repeats)", run: time },
    Command { name: "bench", usage: "FN ARGS... [number=N repeat=R min_repeat_ms=M] | PIPELINE | PIPELINE ...", help: "run each pipeline on a copy of the module, check the function's result against the first, and time it", run: bench },
    Command { name: "undo", usage: "", help: "put the module back as it was before the last :run", run: undo },
    Command { name: "report", usage: "timing | timing-tree | ir-size | changed | counts | bisect | bench", help: "show what an instrument recorded", run: report },
    Command { name: "reset", usage: "", help: "forget modules, contexts, instruments and results", run: reset },
    Command { name: "quit", usage: "", help: "leave", run: quit },
];

/// The command named `name`; an unknown one suggests the nearest.
pub(crate) fn find(name: &str) -> Result<&'static Command> {
    COMMANDS
        .iter()
        .find(|c| c.name == name)
        .ok_or_else(|| Error::Command {
            command: name.into(),
            message: "unknown command (:help lists them)".into(),
            suggestions: crate::nearest_names(name, COMMANDS.iter().map(|c| c.name)),
        })
}

fn err(command: &str, message: impl Into<String>) -> Error {
    Error::Command {
        command: command.into(),
        message: message.into(),
        suggestions: vec![],
    }
}

fn text(t: impl Into<String>) -> Result<Output> {
    let mut o = Output::default();
    o.push_text(t);
    Ok(o)
}

fn table(t: &Table) -> Result<Output> {
    let mut o = Output::default();
    o.push_table(t);
    Ok(o)
}

fn no_args(a: &Args) -> Result<()> {
    if a.rest.is_empty() {
        Ok(())
    } else {
        Err(err(
            &a.command,
            format!("takes no arguments, got '{}'", a.rest),
        ))
    }
}

fn one_word<'a>(a: &'a Args, what: &str) -> Result<&'a str> {
    match (a.words.as_slice(), a.settings.is_empty()) {
        ([w], true) => Ok(w),
        _ => Err(err(&a.command, format!("expects {what}, got '{}'", a.rest))),
    }
}

// ---------------------------------------------------------------- help

fn help(_s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    if let Some(name) = a.words.first() {
        let c = find(name.trim_start_matches(':'))?;
        return text(format!(":{} {}\n  {}", c.name, c.usage, c.help));
    }
    let mut t = Table::new("commands", &["command", "arguments", "what it does"]);
    for c in COMMANDS {
        t.push([
            format!(":{}", c.name),
            c.usage.to_string(),
            c.help.to_string(),
        ]);
    }
    table(&t)
}

/// The command reference as Markdown, generated from [`COMMANDS`] (the
/// README's section is this text).
pub fn reference_markdown() -> String {
    let mut out = String::from("| command | arguments | what it does |\n|---|---|---|\n");
    for c in COMMANDS {
        out.push_str(&format!(
            "| `:{}` | {} | {} |\n",
            c.name,
            if c.usage.is_empty() {
                String::new()
            } else {
                format!("`{}`", c.usage.replace('|', "\\|"))
            },
            c.help
        ));
    }
    out
}

// ---------------------------------------------------------------- modules

fn module(s: &mut Session, a: &Args, body: Option<&str>) -> Result<Output> {
    let name = a
        .words
        .first()
        .ok_or_else(|| err("module", "expects a name: :module NAME [--lang llvm|c|cpp]"))?;
    let lang = match a.words.get(1).map(String::as_str) {
        None => Lang::Llvm,
        Some("--lang") => Lang::parse(
            a.words
                .get(2)
                .ok_or_else(|| err("module", "--lang needs llvm, c or cpp"))?,
        )
        .map_err(|e| err("module", e.to_string()))?,
        Some(other) => {
            return Err(err(
                "module",
                format!("unexpected argument '{other}' (expected --lang llvm|c|cpp)"),
            ))
        }
    };
    let body = body.unwrap_or("");
    if body.trim().is_empty() {
        return Err(err(
            "module",
            format!("module '{name}' has no source: put it on the lines after the command"),
        ));
    }
    let file = match lang {
        Lang::Llvm => format!("{name}.ll"),
        Lang::C => format!("{name}.c"),
        Lang::Cpp => format!("{name}.cpp"),
    };
    let m = Module::load(&[Source::text(lang, body, &file)])?;
    let summary = summary(&m);
    s.modules.insert(name.clone(), m);
    s.current = Some(name.clone());
    text(format!("module {name}: {summary}"))
}

fn summary(m: &Module) -> String {
    let st = m.stats();
    format!(
        "{} functions, {} blocks, {} instructions",
        st.functions, st.blocks, st.instructions
    )
}

fn load(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let mut paths: Vec<&str> = a.words.iter().map(String::as_str).collect();
    let mut name = None;
    if let Some(i) = paths.iter().position(|w| *w == "as") {
        let rest = paths.split_off(i);
        name = Some(
            *rest
                .get(1)
                .ok_or_else(|| err("load", "'as' needs a module name"))?,
        );
        if rest.len() > 2 {
            return Err(err(
                "load",
                format!("unexpected '{}' after the module name", rest[2]),
            ));
        }
    }
    if paths.is_empty() {
        return Err(err(
            "load",
            "expects at least one path: :load PATH... [as NAME]",
        ));
    }
    let sources = paths.iter().map(Source::file).collect::<Result<Vec<_>>>()?;
    let m = Module::load(&sources)?;
    let name = name.map(str::to_string).unwrap_or_else(|| {
        std::path::Path::new(paths[0])
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "module".into())
    });
    let summary = summary(&m);
    s.modules.insert(name.clone(), m);
    s.current = Some(name.clone());
    text(format!("module {name}: {summary}"))
}

fn modules(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    let mut t = Table::new("modules", &["", "name", "functions>", "instructions>"]);
    for (name, m) in &s.modules {
        let st = m.stats();
        let mark = if s.current.as_ref() == Some(name) {
            "*"
        } else {
            ""
        };
        t.push([
            mark.to_string(),
            name.clone(),
            st.functions.to_string(),
            st.instructions.to_string(),
        ]);
    }
    table(&t)
}

fn use_module(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let name = one_word(a, "a module name")?;
    s.module_named("use", name)?;
    s.current = Some(name.to_string());
    text(format!("using {name}"))
}

fn show(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let m = s.module()?;
    match a.words.as_slice() {
        [] => text(m.print()),
        [f] => text(m.print_function(f)?),
        _ => Err(err("show", "expects at most one function name")),
    }
}

fn stats(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    let st = s.module()?.stats();
    let mut t = Table::new(
        &format!(
            "{} functions, {} blocks, {} instructions",
            st.functions, st.blocks, st.instructions
        ),
        &["function", "blocks>", "instructions>"],
    );
    for f in &st.per_function {
        t.push([
            f.name.clone(),
            f.blocks.to_string(),
            f.instructions.to_string(),
        ]);
    }
    table(&t)
}

fn copy(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let new = one_word(a, "a new module name")?;
    if s.modules.contains_key(new) {
        return Err(err(
            "copy",
            format!("a module named '{new}' exists already"),
        ));
    }
    let m = s.module()?.copy();
    s.modules.insert(new.to_string(), m);
    s.current = Some(new.to_string());
    text(format!("copied to {new}; using {new}"))
}

fn diff(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let [x, y] = a.words.as_slice() else {
        return Err(err("diff", "expects two module names: :diff A B"));
    };
    let (tx, ty) = (
        s.module_named("diff", x)?.print(),
        s.module_named("diff", y)?.print(),
    );
    let d = crate::diff::unified(&tx, &ty, x, y, 3);
    text(if d.is_empty() {
        format!("{x} and {y} print the same")
    } else {
        d
    })
}

fn save(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let path = one_word(a, "a path")?;
    s.module()?.save(path)?;
    text(format!("wrote {path}"))
}

// ---------------------------------------------------------------- contexts

fn with(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    if let Some(w) = a.words.first() {
        return Err(err(
            "with",
            format!(
                "expects KEY=VALUE settings, got '{w}' (opt_level, disabled, required, config.KEY)"
            ),
        ));
    }
    let mut ctx = PassContext::inherit();
    for (key, value) in &a.settings {
        let list = || {
            value
                .split(',')
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        ctx = match key.as_str() {
            "opt_level" => ctx.with_opt_level(
                value
                    .parse()
                    .map_err(|_| err("with", format!("opt_level expects 0-3, got '{value}'")))?,
            ),
            "disabled" => ctx.with_disabled(list()),
            "required" => ctx.with_required(list()),
            k => match k.strip_prefix("config.") {
                Some(option) => ctx.with_config_text(option, value)?,
                None => {
                    return Err(Error::Command {
                        command: "with".into(),
                        message: format!("unknown setting '{k}'"),
                        suggestions: crate::nearest_names(
                            k,
                            ["opt_level", "disabled", "required", "config."],
                        ),
                    })
                }
            },
        };
    }
    if ctx.opt_level() > 3 {
        return Err(err(
            "with",
            format!("opt_level expects 0-3, got {}", ctx.opt_level()),
        ));
    }
    let summary = ctx.summary();
    let guard = ctx.enter()?;
    s.scopes.push(Scope {
        spec: a.rest.clone(),
        guard,
    });
    text(format!("context {}: {summary}", s.scopes.len()))
}

fn end(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    let scope = s
        .scopes
        .pop()
        .ok_or_else(|| err("end", "no :with context to leave"))?;
    scope.guard.exit()?;
    text(format!(
        "left context {}: {}",
        s.scopes.len() + 1,
        scope.spec
    ))
}

fn context(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    let mut t = Table::new(
        "pass contexts, outermost first",
        &["#>", ":with", "in effect"],
    );
    t.push(["0".into(), "(default)".into(), PassContext::new().summary()]);
    for (i, (scope, ctx)) in s.scopes.iter().zip(PassContext::stack()).enumerate() {
        t.push([(i + 1).to_string(), scope.spec.clone(), ctx.summary()]);
    }
    table(&t)
}

// ---------------------------------------------------------------- instruments

/// The built-in instruments `:instrument` knows, with their results.
pub(crate) enum Handle {
    Timing(Rc<Timing>),
    IrSize(Rc<IrSize>),
    PrintBefore(Rc<PrintPasses>),
    PrintAfter(Rc<PrintPasses>),
    PrintChanged(Rc<PrintChanged>),
    Verify(Rc<VerifyEach>),
    Bisect(Rc<Bisect>),
    Trace(Rc<Trace>),
    Counts(Rc<Counts>),
}

impl Handle {
    pub(crate) fn instrument(&self) -> Rc<dyn crate::Instrument> {
        match self {
            Handle::Timing(i) => i.clone(),
            Handle::IrSize(i) => i.clone(),
            Handle::PrintBefore(i) | Handle::PrintAfter(i) => i.clone(),
            Handle::PrintChanged(i) => i.clone(),
            Handle::Verify(i) => i.clone(),
            Handle::Bisect(i) => i.clone(),
            Handle::Trace(i) => i.clone(),
            Handle::Counts(i) => i.clone(),
        }
    }

    /// The name `:instrument` takes (`skip=` lists are a bisect).
    fn name(&self) -> &'static str {
        match self {
            Handle::Timing(_) => "timing",
            Handle::IrSize(_) => "ir-size",
            Handle::PrintBefore(_) => "print-before",
            Handle::PrintAfter(_) => "print-after",
            Handle::PrintChanged(_) => "print-changed",
            Handle::Verify(_) => "verify",
            Handle::Bisect(_) => "bisect",
            Handle::Trace(_) => "trace",
            Handle::Counts(_) => "counts",
        }
    }

    /// Instruments of the same kind replace each other, except printing
    /// before and after, which take different pass lists.
    fn replaces(&self, other: &Handle) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

const INSTRUMENT_NAMES: &[&str] = &[
    "timing",
    "ir-size",
    "print-before",
    "print-after",
    "print-changed",
    "verify",
    "bisect",
    "skip",
    "trace",
    "counts",
    "clear",
];

fn instrument(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    if a.rest.is_empty() {
        return Err(err(
            "instrument",
            format!("expects one of: {}", INSTRUMENT_NAMES.join(", ")),
        ));
    }
    let items: Vec<(String, Option<String>)> = a
        .words
        .iter()
        .map(|w| (w.clone(), None))
        .chain(a.settings.iter().map(|(k, v)| (k.clone(), Some(v.clone()))))
        .collect();
    for (name, value) in items {
        let list = |v: &Option<String>| -> Vec<String> {
            v.as_deref()
                .unwrap_or("")
                .split(',')
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect()
        };
        let spec = match &value {
            Some(v) => format!("{name}={v}"),
            None => name.clone(),
        };
        let handle = match name.as_str() {
            "clear" => {
                s.instruments.clear();
                continue;
            }
            "timing" => Handle::Timing(Rc::new(Timing::new())),
            "ir-size" => Handle::IrSize(Rc::new(IrSize::new())),
            // The printing instruments share one buffer, so that their
            // output comes in the order the passes ran.
            "print-before" => Handle::PrintBefore(Rc::new(
                PrintPasses::before(PassFilter::passes(list(&value)))
                    .writing_to(Box::new(s.printed.clone())),
            )),
            "print-after" => Handle::PrintAfter(Rc::new(
                PrintPasses::after(PassFilter::passes(list(&value)))
                    .writing_to(Box::new(s.printed.clone())),
            )),
            "print-changed" => Handle::PrintChanged(Rc::new(
                PrintChanged::new(PassFilter::passes(list(&value)))
                    .writing_to(Box::new(s.printed.clone())),
            )),
            "verify" => Handle::Verify(Rc::new(VerifyEach::new())),
            "bisect" => {
                let v = value
                    .as_deref()
                    .ok_or_else(|| err("instrument", "bisect needs a limit: bisect=N"))?;
                let n = v.parse::<usize>().map_err(|_| {
                    err("instrument", format!("bisect expects a number, got '{v}'"))
                })?;
                Handle::Bisect(Rc::new(Bisect::new(Some(n))))
            }
            "skip" => Handle::Bisect(Rc::new(Bisect::new(None).skipping(list(&value)))),
            "trace" => Handle::Trace(Rc::new(Trace::new(|_m, p, before| {
                if before {
                    crate::output::emit(&format!(
                        "{}{} on {} {}",
                        "  ".repeat(p.depth),
                        p.name(),
                        p.unit,
                        p.target
                    ));
                }
            }))),
            "counts" => Handle::Counts(Rc::new(Counts::new())),
            other => {
                return Err(Error::Command {
                    command: "instrument".into(),
                    message: format!("unknown instrument '{other}'"),
                    suggestions: crate::nearest_names(other, INSTRUMENT_NAMES.iter().copied()),
                })
            }
        };
        s.instruments.retain(|i| !i.handle.replaces(&handle));
        s.instruments.push(Active { spec, handle });
    }
    text(format!("instruments: {}", describe(s)))
}

fn describe(s: &Session) -> String {
    if s.instruments.is_empty() {
        "none".into()
    } else {
        s.instruments
            .iter()
            .map(|i| i.spec.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn instruments(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    text(format!("instruments: {}", describe(s)))
}

fn report(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    const REPORTS: &[&str] = &[
        "timing",
        "timing-tree",
        "ir-size",
        "changed",
        "counts",
        "bisect",
    ];
    let what = one_word(
        a,
        "what to report: timing, timing-tree, ir-size, changed, counts or bisect",
    )?;
    if what == "bench" {
        return match &s.last_bench {
            Some(t) => table(t),
            None => Err(err("report", "no :bench has run yet")),
        };
    }
    let needed = match what {
        "timing" | "timing-tree" => "timing",
        "changed" => "print-changed",
        "ir-size" | "counts" | "bisect" => what,
        other => {
            return Err(Error::Command {
                command: "report".into(),
                message: format!("nothing to report called '{other}'"),
                suggestions: crate::nearest_names(other, REPORTS.iter().copied()),
            })
        }
    };
    let active = s
        .instruments
        .iter()
        .rev()
        .find(|i| i.handle.name() == needed)
        .ok_or_else(|| {
            err(
                "report",
                format!("no {needed} instrument: add one with :instrument {needed}"),
            )
        })?;
    match (what, &active.handle) {
        ("timing", Handle::Timing(t)) => table(&t.report().flat_table(Some(20))),
        ("timing-tree", Handle::Timing(t)) => table(&t.report().tree_table()),
        ("ir-size", Handle::IrSize(t)) => table(&t.table()),
        ("changed", Handle::PrintChanged(t)) => {
            let (changed, unchanged) = t.counts();
            text(format!("{changed} passes changed the IR, {unchanged} did not (their diffs were printed by :run)"))
        }
        ("counts", Handle::Counts(t)) => table(&t.table()),
        ("bisect", Handle::Bisect(b)) => {
            let mut o = Output::default();
            o.push_text(b.text());
            o.push_table(&b.table());
            Ok(o)
        }
        _ => Err(err(
            "report",
            format!("the {needed} instrument has no {what} report"),
        )),
    }
}

// ---------------------------------------------------------------- passes

fn passes(_s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let filter = a.words.first().map(String::as_str).unwrap_or("");
    let mut t = Table::new("passes", &["name", "kind", "opt_level>", "description"]);
    for p in registry::passes()
        .into_iter()
        .filter(|p| p.name.contains(filter))
    {
        let kind = match &p.kind {
            registry::PassKind::Rust => "rust".to_string(),
            registry::PassKind::Llvm { unit, .. } => format!("llvm {unit}"),
        };
        t.push([
            p.name.clone(),
            kind,
            p.opt_level.to_string(),
            p.description.clone(),
        ]);
    }
    let n = t.rows.len();
    t.notes.push(format!("{n} passes"));
    table(&t)
}

fn run_pipeline(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    if !a.settings.is_empty() {
        return Err(err(
            "run",
            format!(
                "takes a pipeline, not settings ('{}'); use :with for those",
                a.settings[0].0
            ),
        ));
    }
    if a.words.len() > 1 {
        return Err(err(
            "run",
            format!(
                "a pipeline is one word, passes separated by commas: got '{}'",
                a.rest
            ),
        ));
    }
    let pass = if a.rest.is_empty() {
        pipeline::default_pipeline(PassContext::current().opt_level())?
    } else {
        pipeline::parse(&a.rest)?
    };
    let name = s.current.clone().ok_or_else(|| {
        err(
            "run",
            "no module yet: create one with :module NAME or :load PATH",
        )
    })?;
    let mut ctx = PassContext::inherit();
    for i in &s.instruments {
        ctx = ctx.with_instrument(i.handle.instrument());
    }
    let module = s
        .modules
        .get_mut(&name)
        .ok_or_else(|| err("run", format!("module '{name}' is gone")))?;
    let before = module.stats().instructions;
    let snapshot = module.snapshot();
    s.printed.take(); // what a failed run printed
    let start = std::time::Instant::now();
    let scope = ctx.enter()?;
    let result = pass.apply(module);
    let exited = scope.exit();
    result?;
    exited?;
    let after = module.stats().instructions;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    s.undo.push((name.clone(), snapshot));
    let mut o = Output::default();
    o.push_text(s.printed.take());
    for i in &s.instruments {
        if let Handle::PrintChanged(p) = &i.handle {
            // The closing count (the diffs went to the shared buffer).
            o.push_text(p.output());
        }
    }
    o.push_text(format!(
        "ran {} on {name}: {before} -> {after} instructions [{ms:.1} ms]",
        pass.info().name
    ));
    Ok(o)
}

fn define_pass(_s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let usage = "expects NAME = PIPELINE [opt_level=N] [required=P,...]";
    let [name, eq, pipeline_text] = a.words.as_slice() else {
        return Err(err("pass", usage));
    };
    if eq != "=" {
        return Err(err("pass", usage));
    }
    let mut info = crate::PassInfo::new(name, 0).describe(&format!("= {pipeline_text}"));
    for (k, v) in &a.settings {
        match k.as_str() {
            "opt_level" => {
                info.opt_level = v
                    .parse()
                    .map_err(|_| err("pass", format!("opt_level expects a number, got '{v}'")))?
            }
            "required" => info = info.requires(v.split(',').filter(|p| !p.is_empty())),
            other => {
                return Err(Error::Command {
                    command: "pass".into(),
                    message: format!("unknown setting '{other}'"),
                    suggestions: crate::nearest_names(other, ["opt_level", "required"]),
                })
            }
        }
    }
    for r in &info.required {
        registry::get_pass(r)?;
    }
    let inner = pipeline::parse(pipeline_text)?;
    let children: Vec<crate::PassRef> = if inner.children().is_empty() {
        vec![inner]
    } else {
        inner.children().to_vec()
    };
    if children.iter().any(|c| c.info().name == *name) {
        return Err(err("pass", format!("'{name}' cannot contain itself")));
    }
    let summary = format!(
        "pass {name} = {pipeline_text} (opt_level {}{})",
        info.opt_level,
        if info.required.is_empty() {
            String::new()
        } else {
            format!(", requires {}", info.required.join(","))
        }
    );
    let seq: crate::PassRef = std::sync::Arc::new(crate::Sequential::with_info(info, children));
    registry::define_pass(move || seq.clone()).map_err(|e| err("pass", e.to_string()))?;
    text(summary)
}

fn explain(_s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let ctx = PassContext::current();
    let pass = if a.rest.is_empty() {
        pipeline::default_pipeline(ctx.opt_level())?
    } else {
        pipeline::parse(&a.rest)?
    };
    let mut t = Table::new(
        &format!("{} under {}", pass.info().name, ctx.summary()),
        &["pass", "opt_level>", "decision", "why"],
    );
    if pass.children().is_empty() {
        t.push([
            pass.info().name.clone(),
            pass.info().opt_level.to_string(),
            "runs".into(),
            "a pass run on its own ignores gating (as in TVM)".into(),
        ]);
    }
    for child in pass.children() {
        let info = child.info();
        let (runs, why) = if ctx.disabled().contains(&info.name) {
            (
                false,
                "disabled in the context (disabled wins over required)".to_string(),
            )
        } else if ctx.required().contains(&info.name) {
            (true, "required by the context".to_string())
        } else if info.opt_level <= ctx.opt_level() {
            (
                true,
                format!(
                    "opt_level {} <= the context's {}",
                    info.opt_level,
                    ctx.opt_level()
                ),
            )
        } else {
            (
                false,
                format!(
                    "opt_level {} > the context's {}",
                    info.opt_level,
                    ctx.opt_level()
                ),
            )
        };
        let mut why = why;
        if runs && !info.required.is_empty() {
            why.push_str(&format!(
                "; first runs its required passes {}",
                info.required.join(", ")
            ));
        }
        t.push([
            info.name.clone(),
            info.opt_level.to_string(),
            if runs { "runs" } else { "skipped" }.into(),
            why,
        ]);
    }
    if !ctx.disabled().is_empty() {
        t.notes.push(format!(
            "inside LLVM pipelines, LLVM's optional passes named {} are skipped",
            ctx.disabled()
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    table(&t)
}

fn buffer(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    use crate::jit::{Buffer, ElemType, Fill};
    let usage = "expects NAME TYPE[LEN] = zeros|ones|range|random(SEED), e.g. :buffer a f32[1024] = random(1)";
    let [name, ty, eq, fill] = a.words.as_slice() else {
        return Err(err("buffer", usage));
    };
    if eq != "=" {
        return Err(err("buffer", usage));
    }
    let (t, len) = ty
        .strip_suffix(']')
        .and_then(|t| t.split_once('['))
        .ok_or_else(|| err("buffer", format!("'{ty}' is not TYPE[LEN] (e.g. i32[100])")))?;
    let t = ElemType::parse(t).map_err(|e| err("buffer", e.to_string()))?;
    let len: usize = len
        .parse()
        .map_err(|_| err("buffer", format!("length '{len}' is not a number")))?;
    let fill = match fill.as_str() {
        "zeros" => Fill::Zeros,
        "ones" => Fill::Ones,
        "range" => Fill::Range,
        f => match f.strip_prefix("random(").and_then(|r| r.strip_suffix(')')) {
            Some(seed) => Fill::Random(seed.parse().map_err(|_| {
                err(
                    "buffer",
                    format!("random needs a number seed, got '{seed}'"),
                )
            })?),
            None => {
                return Err(Error::Command {
                    command: "buffer".into(),
                    message: format!("unknown fill '{f}'"),
                    suggestions: crate::nearest_names(
                        f,
                        ["zeros", "ones", "range", "random(SEED)"],
                    ),
                })
            }
        },
    };
    let b = Buffer::new(t, len, fill)?;
    let summary = b.summary();
    s.buffers.insert(name.clone(), b);
    text(format!("{name}: {summary}"))
}

fn buffers(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    let mut t = Table::new("buffers", &["name", "contents"]);
    for (name, b) in &s.buffers {
        t.push([name.clone(), b.summary()]);
    }
    table(&t)
}

/// The compiled current module (compiled again when it changed).
fn jit_for(s: &mut Session, command: &str) -> Result<String> {
    let name = s.current.clone().ok_or_else(|| {
        err(
            command,
            "no module yet: create one with :module NAME or :load PATH",
        )
    })?;
    let m = s.module_named(command, &name)?;
    let fp = m.fingerprint();
    let fresh = matches!(s.jits.get(&name), Some((f, _)) if *f == fp);
    if !fresh {
        let jit = crate::jit::Jit::new(m, 2)?;
        s.jits.insert(name.clone(), (fp, jit));
    }
    Ok(name)
}

/// Arguments: integers, floats, or buffer names.
fn call_args<'b>(
    s: &'b Session,
    command: &str,
    words: &[String],
) -> Result<Vec<crate::jit::Arg<'b>>> {
    use crate::jit::Arg;
    words
        .iter()
        .map(|w| {
            if let Ok(i) = w.parse::<i64>() {
                Ok(Arg::Int(i))
            } else if let Ok(f) = w.parse::<f64>() {
                Ok(Arg::Float(f))
            } else if let Some(b) = s.buffers.get(w) {
                Ok(Arg::Buffer(b))
            } else {
                Err(Error::Command {
                    command: command.into(),
                    message: format!("'{w}' is not a number or a buffer"),
                    suggestions: crate::nearest_names(w, s.buffers.keys().map(String::as_str)),
                })
            }
        })
        .collect()
}

fn call(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let (f, rest) = a
        .words
        .split_first()
        .ok_or_else(|| err("call", "expects FN ARGS..."))?;
    if let Some((k, _)) = a.settings.first() {
        return Err(err("call", format!("takes no settings, got '{k}='")));
    }
    let name = jit_for(s, "call")?;
    let args = call_args(s, "call", rest)?;
    let jit = &s.jits[&name].1;
    let r = jit.call(f, &args)?;
    let mut o = Output::default();
    if !r.output.is_empty() {
        o.items.push(super::Item::Stream(r.output));
    }
    o.push_text(match r.value {
        Some(v) => format!("{f}({}) = {v}", rest.join(", ")),
        None => format!("{f}({}) returned", rest.join(", ")),
    });
    Ok(o)
}

/// `number=`, `repeat=`, `min_repeat_ms=` settings over TVM's defaults.
fn time_spec(command: &str, a: &Args) -> Result<crate::jit::TimeSpec> {
    let mut spec = crate::jit::TimeSpec::default();
    for (k, v) in &a.settings {
        let n: u64 = v
            .parse()
            .map_err(|_| err(command, format!("{k} expects a number, got '{v}'")))?;
        match k.as_str() {
            "number" => spec.number = n,
            "repeat" => spec.repeat = n as usize,
            "min_repeat_ms" => spec.min_repeat_ms = n,
            other => {
                return Err(Error::Command {
                    command: command.into(),
                    message: format!("unknown setting '{other}'"),
                    suggestions: crate::nearest_names(other, ["number", "repeat", "min_repeat_ms"]),
                })
            }
        }
    }
    Ok(spec)
}

fn time(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let (f, rest) = a.words.split_first().ok_or_else(|| {
        err(
            "time",
            "expects FN ARGS... [number=N repeat=R min_repeat_ms=M]",
        )
    })?;
    let spec = time_spec("time", a)?;
    let name = jit_for(s, "time")?;
    let args = call_args(s, "time", rest)?;
    let r = s.jits[&name].1.time(f, &args, spec)?;
    let samples: Vec<String> = r
        .per_call
        .iter()
        .map(|d| format!("{:.3}", d.as_secs_f64() * 1e6))
        .collect();
    text(format!(
        "{f}: {}
samples (us per call): {}",
        r.summary(),
        samples.join(" ")
    ))
}

fn bench(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let usage = "expects FN ARGS... [number=N repeat=R min_repeat_ms=M] | PIPELINE | PIPELINE ...";
    let mut segments = a.rest.split('|').map(str::trim);
    let head = segments.next().unwrap_or("");
    let pipelines: Vec<&str> = segments.collect();
    if pipelines.is_empty() || pipelines.iter().any(|p| p.is_empty()) {
        return Err(err("bench", usage));
    }
    let head = Args::parse(&format!(":bench {head}"))?;
    let (f, rest) = head
        .words
        .split_first()
        .ok_or_else(|| err("bench", usage))?;
    let spec = time_spec("bench", &head)?;
    let name = s.current.clone().ok_or_else(|| {
        err(
            "bench",
            "no module yet: create one with :module NAME or :load PATH",
        )
    })?;
    let args = call_args(s, "bench", rest)?;
    let m = s.module_named("bench", &name)?;
    let c = crate::jit::compare(m, f, &args, &pipelines, spec)?;
    let t = c.table();
    s.last_bench = Some(t.clone());
    table(&t)
}

fn undo(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    let (name, snapshot) = s.undo.pop().ok_or_else(|| err("undo", "nothing to undo"))?;
    match s.modules.get_mut(&name) {
        Some(m) => {
            m.restore(&snapshot)?;
            text(format!("{name} is back as it was before the last :run"))
        }
        None => Err(err("undo", format!("module '{name}' no longer exists"))),
    }
}

// ---------------------------------------------------------------- session

fn reset(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    while let Some(scope) = s.scopes.pop() {
        let _ = scope.guard.exit();
    }
    *s = Session::new();
    text("session reset")
}

fn quit(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    s.quit = true;
    Ok(Output::default())
}
