//! The command table: every command once, with its usage, its help and its
//! handler. Dispatch, `:help`, completion and the README's command
//! reference all read [`COMMANDS`].

mod contexts;
mod instruments;
mod jit;
mod modules;
mod passes;

pub(crate) use instruments::Handle;

use contexts::{context, context_from, end, with};
use instruments::{instrument, instruments, plot, report};
use jit::{bench, buffer, buffers, call, time};
use modules::{copy, diff, load, module, modules, save, show, stats, use_module};
use passes::{define_pass, explain, passes, run_pipeline, undo};

use super::{Active, Args, Item, Output, Scope, Session};
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
    Command { name: "module", usage: "NAME [--lang llvm|c|cpp] [cflags=FLAG,...]", help: "create a module from the source that follows: the lines up to a line holding only '.' (in a notebook cell, also the rest of the cell)", run: module },
    Command { name: "load", usage: "PATH... [as NAME] [cflags=FLAG,...]", help: "load .ll .bc .c .cpp files (several are linked into one module); C and C++ go through clang-19 at -O0 without optnone, plus cflags", run: load },
    Command { name: "modules", usage: "", help: "list the modules", run: modules },
    Command { name: "use", usage: "NAME", help: "make a module the current one", run: use_module },
    Command { name: "show", usage: "[FUNCTION]", help: "print the current module, or one function", run: show },
    Command { name: "stats", usage: "", help: "functions, blocks and instructions of the current module, per function", run: stats },
    Command { name: "copy", usage: "NEW", help: "copy the current module under a new name and use it", run: copy },
    Command { name: "diff", usage: "A B [FUNCTION]", help: "unified diff of two modules' IR, or of one function in both", run: diff },
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
    Command { name: "bench", usage: "FN ARGS... [number=N repeat=R min_repeat_ms=M flops=N] | PIPELINE [KEY=VALUE...] | ...", help: "run each pipeline (O0-O3 or pass lists, each with optional :with settings) on a copy of the module, check the function's result against the first, and time it", run: bench },
    Command { name: "undo", usage: "", help: "put the module back as it was before the last :run", run: undo },
    Command { name: "report", usage: "timing | timing-tree | ir-size | changed | counts | bisect | bench", help: "show what an instrument recorded", run: report },
    Command { name: "plot", usage: "timing [top=N] | ir-size | bench | compile-vs-runtime [--out FILE.svg|FILE.png]", help: "chart what timing, ir-size or the last :bench measured (shown inline, or written to FILE)", run: plot },
    Command { name: "reset", usage: "", help: "forget modules, contexts, instruments and results", run: reset },
    Command { name: "quit", usage: "", help: "leave", run: quit },
];

/// The words the first argument of `command` can be, for completion
/// (empty for commands whose arguments are names).
pub(crate) fn keywords(command: &str) -> &'static [&'static str] {
    match command {
        "instrument" => instruments::INSTRUMENT_NAMES,
        "report" => instruments::REPORTS,
        "plot" => instruments::CHARTS,
        _ => &[],
    }
}

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

/// The current module's name, or an error for `command` saying how to get one.
fn current(s: &Session, command: &str) -> Result<String> {
    s.current.clone().ok_or_else(|| {
        err(
            command,
            "no module yet: create one with :module NAME or :load PATH",
        )
    })
}

/// `a,b,,c` as `["a", "b", "c"]`.
fn comma_list(text: &str) -> Vec<String> {
    text.split(',')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
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
        let usage = if c.usage.is_empty() {
            String::new()
        } else {
            format!(" {}", c.usage)
        };
        return text(format!(":{}{usage}\n  {}", c.name, c.help));
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

fn reset(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    while let Some(scope) = s.scopes.pop() {
        let _ = scope.guard.exit();
    }
    let progress = s.progress.take();
    *s = Session::new();
    s.progress = progress;
    text("session reset")
}

fn quit(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    s.quit = true;
    Ok(Output::default())
}
