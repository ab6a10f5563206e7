//! The command table: every command once, with its usage, its help and its
//! handler. Dispatch, `:help`, completion and the guide's command
//! reference all read [`COMMANDS`].
//!
//! The guide's reference (`docs/src/reference.md`) is `passlab commands` ([`reference_markdown`]),
//! which `repl/tests/transcripts.rs` keeps in step. The handlers live beside this
//! file by concept: `modules.rs`, `contexts.rs`, `instruments.rs`,
//! `passes.rs`, `rust.rs`, `jit.rs`, `machine.rs`, `tune.rs`, `explore.rs`,
//! `remarks.rs`, `graph.rs` (`:cfg`), `help.rs` (`:help` and the reference).
//! `history_entry` decides what `:export` keeps of a command.

mod contexts;
mod explore;
mod graph;
mod help;
mod hunt;
mod instruments;
mod jit;
mod machine;
mod modules;
mod passes;
mod reduce;
mod remarks;
mod rust;
mod tune;

pub(crate) use instruments::Handle;
pub use instruments::{builtin_named, Builtin, Made, Spec, Takes, BUILTINS};

pub(super) use contexts::enter_again;
use contexts::{context, context_from, end, with};
use explore::explore;
use graph::cfg;
pub(crate) use help::command_help;
use help::help;
pub use help::reference_markdown;
use hunt::hunt;
use instruments::{instrument, instruments, plot, report};
use jit::{bench, bisect, buffer, buffers, call, exec, time};
use machine::{asm, mca};
use modules::{copy, diff, features, load, module, modules, path, save, show, stats, use_module};
use passes::{define_pass, explain, passes, plugin, run_pipeline, undo};
use reduce::reduce;
use rust::{dep, register, rust};
use tune::tune;

use super::kinds::{self, set, Kind, Setting};
use super::{Active, Args, Bundle, Code, Item, Output, Scope, Session};
use crate::instrument::{
    Bisect, Counts, IrSize, PassFilter, PrintChanged, PrintPasses, Timing, Trace, VerifyEach,
};
use crate::module::{Lang, Level, Module, Source};
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
    /// Whether the lines after it are its body (a source), up to a line
    /// holding only `.` or the end of the cell.
    pub body: bool,
    /// The `key=` settings whose values have a kind the session checks
    /// before the handler runs (and completes): passes, modules,
    /// processors, one of some words…
    pub settings: &'static [Setting],
    /// The kinds each positional word may be, by position (the last
    /// repeats), for completion.
    pub words: &'static [&'static [Kind]],
    run: Handler,
}

const fn cmd(name: &'static str, usage: &'static str, help: &'static str, run: Handler) -> Command {
    Command {
        name,
        usage,
        help,
        body: false,
        settings: &[],
        words: &[],
        run,
    }
}

const fn cmd_with_body(
    name: &'static str,
    usage: &'static str,
    help: &'static str,
    run: Handler,
) -> Command {
    Command {
        name,
        usage,
        help,
        body: true,
        settings: &[],
        words: &[],
        run,
    }
}

/// Whether `line` is a command that takes the lines after it as its body.
pub fn takes_body(line: &str) -> bool {
    super::args::command_name(line)
        .is_some_and(|name| COMMANDS.iter().any(|c| c.body && c.name == name))
}

impl Command {
    const fn set(mut self, settings: &'static [Setting]) -> Command {
        self.settings = settings;
        self
    }

    const fn words(mut self, words: &'static [&'static [Kind]]) -> Command {
        self.words = words;
        self
    }

    /// The kind of setting `key` (a declared key, or one under a declared
    /// prefix such as `config.`).
    pub fn setting(&self, key: &str) -> Option<&'static Setting> {
        self.settings
            .iter()
            .find(|s| s.key == key || (s.key.ends_with('.') && key.starts_with(s.key)))
    }

    /// Checks the values of the settings in `a` that have a kind (see
    /// `kinds::check`): a mistyped pass, module, processor or word is
    /// refused where it was typed, with the nearest names.
    pub(crate) fn check_settings(&self, s: &Session, a: &Args) -> Result<()> {
        for (key, value) in &a.settings {
            if let Some(setting) = self.setting(key) {
                kinds::check(s, self.name, key, setting.kind, value)?;
            }
        }
        Ok(())
    }

    /// Runs the command (the session's `execute` is the usual way in).
    pub(crate) fn call(&self, s: &mut Session, a: &Args, body: Option<&str>) -> Result<Output> {
        (self.run)(s, a, body)
    }
}

/// Every command, in the order `:help` lists them.
pub static COMMANDS: &[Command] = &[
    cmd("help", "[COMMAND]", "list the commands, or explain one", help).words(&[&[Kind::Command]]),
    cmd_with_body("module", "NAME [--lang llvm|c|cpp] [level=O0|O1|O2|O3|Os|Oz] [cflags=FLAG,...]", "create a module from the source that follows: the lines up to a line holding only '.' (in a notebook cell, also the rest of the cell); C and C++ as :load compiles them", module).set(LOAD_SETTINGS),
    cmd("load", "PATH... [as NAME] [level=O0|O1|O2|O3|Os|Oz] [cflags=FLAG,...] | PATH/compile_commands.json [as NAME] [link=yes|no|lto] [only=GLOB|!GLOB,...] [warnings=count|show]", "load .ll .bc .c .cpp files, or patterns such as src/*.c (several are linked into one module); C and C++ become the IR clang-19 hands its own pipeline at the level (clang-19 -O2 -Xclang -disable-llvm-passes; default: the context's opt_level, 2; Os and Oz mark functions optsize and minsize; O0 is clang's -O0 without optnone: every function noinline), so that :run O2 gives what clang-19 -O2 gives; cflags come last. A compile_commands.json (CMake, Meson, Bear) loads a project: each unit with its own flags (those that say what the source means: no plugin, no file written; the rest is listed) in its own folder, in parallel; units that fail are reported and the rest load; link=yes (default) links them into one module, link=no keeps one module per unit named by its path, link=lto builds as clang -flto does (each unit -flto and lto-pre-link<On>, then linked and internalized as lld's LTO does for an executable: next :run lto<O2>); only= keeps the units matching the patterns; clang's warnings are counted per unit unless warnings=show", load).set(PROJECT_SETTINGS).words(&[&[Kind::Path]]),
    cmd("path", "[FOLDER...]", "show where :load looks for relative paths (the session's folder, added folders, PASSLAB_PATH, passlab's sample inputs), or add folders", path).words(&[&[Kind::Path]]),
    cmd("modules", "", "list the modules", modules),
    cmd("use", "NAME", "make a module the current one", use_module).words(&[&[Kind::Module]]),
    cmd("show", "[FUNCTION]", "print the current module, or one function; when it has debug info (cflags=-g) each instruction line ends in its source line (; line N, a comment: still IR), and in a notebook IR and source lines share colours as :asm's do", show).words(&[&[Kind::Function]]),
    cmd("cfg", "FUNCTION [after=PIPELINE] [lines=N] [--out FILE.svg|FILE.png|FILE.dot]", "a function's control-flow graph, laid out by Graphviz: its blocks with their instructions (a block longer than lines=, default 12, shows its first ones, how many more and its terminator), edges labelled by what takes them (true/false, switch cases, default, unwind); after=: in a copy of the module after PIPELINE ran on it under the current context (the module stays as it is); in a notebook a picture, in a terminal the blocks as text and the picture written to a file (--out: that file, .svg, .png or Graphviz's .dot text)", cfg).set(&[set("after", Kind::Pipeline), set("lines", kinds::count(3, 10_000))]).words(&[&[Kind::Function]]),
    cmd("stats", "", "functions, blocks and instructions of the current module, per function", stats),
    cmd("features", "[SPACE...] [zeros]", "CompilerGym's observation spaces of the current module, computed by passlab with CompilerGym's definitions (:help features lists them); of vectors, the nonzero values unless zeros", features).words(&[&[Kind::OneOf(&modules::FEATURE_WORDS)]]),
    cmd("copy", "NEW", "copy the current module under a new name and use it", copy),
    cmd("diff", "A B [FUNCTION]", "unified diff of two modules' IR, or of one function in both (one on one side only shows as added or removed)", diff).words(&[&[Kind::Module], &[Kind::Module], &[Kind::Function]]),
    cmd("save", "PATH", "write the current module (.bc: bitcode, otherwise IR text)", save).words(&[&[Kind::Path]]),
    cmd("with", "opt_level=N disabled=P,... required=P,... codegen=N cpu=CPU|host features=+F,... config.KEY=VALUE ...", "enter a pass context nested in the current one", with).set(WITH_SETTINGS),
    cmd("end", "", "leave the innermost :with context", end),
    cmd("context", "", "show the stack of pass contexts", context),
    cmd("instrument", "NAME[=VALUE] ... [functions=F,...] [kinds=K,...] [--out DIR [replace=yes]] | clear", "add instruments to the passes :run runs and to :asm's code generation (:help instrument lists the built-ins, with what each takes and records)", instrument).set(&instruments::INSTRUMENT_SETTINGS).words(&[&[Kind::OneOf(&instruments::INSTRUMENT_NAMES)]]),
    cmd("instruments", "", "list the active instruments", instruments),
    cmd("passes", "[FILTER]", "list the registered passes (Rust and LLVM), optionally those whose name contains FILTER", passes),
    cmd("pass", "NAME = PIPELINE [opt_level=N] [required=P,...]", "define a named sequential pass (usable in pipelines, gated like any pass)", define_pass).set(PASS_SETTINGS).words(&[&[Kind::Free], &[Kind::Free], &[Kind::Pipeline]]),
    cmd_with_body("rust", "", "compile the Rust code that follows with evcxr, passlab a dependency: the lines up to a line holding only '.' (in a notebook cell, also the rest of the cell)", rust),
    cmd("dep", "NAME = \"VERSION\" | NAME = { path = \"DIR\" }", "add a crate from crates.io or a folder for the :rust code", dep),
    cmd("register", "function_pass|module_pass NAME = FUNCTION [opt_level=N] [required=P,...]", "make a function of the :rust code a pass like any other (registering a name again replaces it)", register).set(PASS_SETTINGS).words(&[&[Kind::OneOf(&["function_pass", "module_pass"])], &[Kind::Free]]),
    cmd("plugin", "PATH.so", "load an LLVM pass plugin (new pass manager, as opt -load-pass-plugin): its passes join the registry by the names it registers", plugin).words(&[&[Kind::Path]]),
    cmd("explain", "[PIPELINE]", "what would run under the current context, and why each pass would or would not", explain).words(&[&[Kind::Pipeline]]),
    cmd("run", "[PIPELINE] [--out DIR [replace=yes]]", "run a pipeline on the current module (none: the default one for the context's opt level); if a pass crashes, --out writes a reproducer into a folder passlab makes (:help run)", run_pipeline).set(&[set("replace", Kind::OneOf(YES_NO))]).words(&[&[Kind::Pipeline]]),
    cmd("buffer", "NAME TYPE[LEN] = zeros|ones|range|random(SEED)", "create a typed array (i8 i16 i32 i64 f32 f64) that functions can read and write; random(SEED) fills integers over their type's whole range (random bytes for i8), floats uniformly in [0, 1) as NumPy's random.rand does", buffer).words(&[&[Kind::Free], &[Kind::Free], &[Kind::Free], &[Kind::Words(&["zeros", "ones", "range", "random("])]]),
    cmd("buffers", "", "list the buffers with a summary and checksum", buffers),
    cmd("call", "FN ARGS... [allow=host] [--out FILE]", "JIT-compile the current module and call a function (integers, floats, buffer names), isolated from crashes; a function reaching symbols the module does not define that this process's libraries would supply beyond the C/C++ runtime (libc, libm, libstdc++, libgcc) is refused, naming them, unless allow=host, which lists what it bound", call).set(HOST_SETTINGS).words(&[&[Kind::Function], &[Kind::CallArg]]),
    cmd("exec", "[ARG...] [stdin=TEXT|stdin=@FILE] [allow=host] [--out FILE] [-- ARG...]", "JIT-compile the current module and run its main as a program, as lli does: argv is the module's file name (without its folders) and the arguments (split as a shell splits them), standard input the text (\\n for a new line) or the file; the result is the exit status and what it printed, isolated from crashes; a main reaching symbols the module does not define that this process's libraries would supply beyond the C/C++ runtime is refused, naming them, unless allow=host, which lists what it bound; with --out FILE its standard output goes to FILE only (standard error to FILE.err and the screen)", exec).set(HOST_SETTINGS),
    cmd("asm", "[FUNCTION] [syntax=att|intel] [cpu=A,B | modules=M,N] [--all] [--out FILE.s]", "the machine code the JIT runs for the current module or one function, under the context's code generation settings (codegen=, cpu=, features=), with each function's size and, when the module has debug info (cflags=-g), its source lines; directives and unused labels hidden (--all shows them); cpu=A,B or modules=M,N: two compilations side by side, aligned (by source line with -g) and their differences marked", asm).set(&[set("syntax", Kind::OneOf(&["att", "intel"])), set("cpu", Kind::Cpus), set("modules", Kind::Modules)]).words(&[&[Kind::Function]]),
    cmd("mca", "FUNCTION [BLOCK|all] [cpu=CPU,...] [modules=M,...]", "LLVM's machine-code analyzer (llvm-mca) over FUNCTION's innermost loop (or the loop or block at BLOCK, or all of it) as :asm shows it: cycles per iteration, IPC, the busiest ports, the bottleneck; several processors or modules side by side", mca).set(&[set("cpu", Kind::Cpus), set("modules", Kind::Modules)]).words(&[&[Kind::Function], &[Kind::Free]]),
    cmd("time", "FN ARGS... [number=N repeat=R min_repeat_ms=M]", "time a function (TVM's time evaluator: warm-up, number calls per repeat, repeat repeats)", time).set(TIME_SETTINGS).words(&[&[Kind::Function], &[Kind::CallArg]]),
    cmd("bench", "FN ARGS... [number=N repeat=R min_repeat_ms=M flops=N rtol=R] | PIPELINE [KEY=VALUE...] | ...", "run each pipeline (O0-O3 or pass lists, each with optional :with settings) on a copy of the module, check the function's result against the first, and time it", bench).set(BENCH_SETTINGS).words(&[&[Kind::Function, Kind::Pipeline], &[Kind::CallArg, Kind::Pipeline]]),
    cmd("bisect", "FN ARGS... | PIPELINE", "find the first pass, of PIPELINE or of the code generation after it, that changes FN's result (as LLVM's -opt-bisect-limit, halved automatically), and show what it did", bisect).words(&[&[Kind::Function, Kind::Pipeline], &[Kind::CallArg]]),
    cmd("reduce", "differs FN ARGS... | FIRST | SECOND | differs exec ARG... | FIRST | SECOND | fails PIPELINE | rust PREDICATE [budget=S] [jobs=N] [with=llvm-reduce|cvise source=FILE.c] [replace=yes] [--out DIR]", "shrink the current module while a bug shows (a result that differs between two pipelines, a pass that crashes, hits a fatal error or breaks the IR, or a Rust predicate), with llvm-reduce-19 or cvise, passlab answering whether each candidate still shows it; the result becomes a new module, and --out writes a reproducer into a folder passlab makes (one it did not make is refused: :help reduce)", reduce).set(REDUCE_SETTINGS).words(&[&[Kind::OneOf(&["differs", "fails", "rust"])], &[Kind::Function, Kind::Pipeline], &[Kind::CallArg, Kind::Pipeline]]),
    cmd("hunt", "[csmith=A..B|corpus=PATTERN] [orderings=N seed=N] [oracle=native|jit-o0] [reduce=yes|no budget=S] [jobs=N] [timeout=S] [resume=yes] [replace=yes] | PIPELINE | ... [--out DIR]", "hunt compiler bugs: Csmith's programs (or C files), each with its right output (built by clang-19 -O0, or unoptimized through the JIT), through the pipelines and random orderings, under the current context and with the session's passes; each miscompile, crash, fatal error, verifier failure or timeout bisected to its pass, the first of each kind reduced into a reproducer, in a folder passlab makes (:help hunt)", hunt).set(HUNT_SETTINGS).words(&[&[Kind::Pipeline]]),
    cmd("tune", "[FN ARGS...] [goal=instructions|size|runtime|MIX] [strategy=random,greedy,hill,local,coreset] [trials=N|seconds=S] [coreset=FILE] [warm=coreset|FILE] [seed=N] [pool=P,...|size] [length=MIN..MAX] | apply [N] | save NAME [N]", "search orderings of passes from a pool for a goal on copies of the current module (checking FN's result against the module's), compared with O0, O2, O3 and Oz; apply or save the best (:help tune: settings and the default pool)", tune).set(TUNE_SETTINGS).words(&[&[Kind::Words(&["apply", "save"]), Kind::Function], &[Kind::CallArg]]),
    cmd("explore", "[FUNCTION [N]] [run=PIPELINE] [pass=NAME|GLOB] [changed=yes|no] [--out FILE.html]", "the pipeline explorer for the last recorded run (run=: run PIPELINE now, recording it): the functions, the passes that ran on FUNCTION with those that changed it, the diff of its Nth; pass= keeps the passes whose name (or the loop or SCC they ran on) holds NAME, ignoring case, or matches a glob such as loop-*, and changed=yes those that changed FUNCTION (without FUNCTION: the run's pass executions they keep); in a notebook, interactive, pass= and changed= filling its pass search", explore).set(&[set("run", Kind::Pipeline), set("pass", Kind::PassGlob), set("changed", Kind::OneOf(YES_NO))]).words(&[&[Kind::Function], &[Kind::Free]]),
    cmd("undo", "", "put the current module back as it was before the last :run (refused, saying which, when the last :run was on another module)", undo),
    cmd("report", "WHAT [SETTINGS] (:help report lists what, with its settings)", "show what an instrument recorded, or the last :bench or :tune (timing: the last run's passes, run=N another run's, run=all the total over every run since the instrument was made; remarks: a table of the last run's, by pass and kind; source: its source lines with remarks, the most remarked first, in a notebook or a page with filters; runs: the runs recorded; compare: what appeared, disappeared or changed between two runs, the last two unless given)", report).set(REPORT_SETTINGS).words(&[&[Kind::OneOf(&instruments::REPORTS)], &[Kind::After("remarks", &["source", "runs", "compare"])]]),
    cmd("plot", "WHAT [SETTINGS] [--out FILE.svg|FILE.png] (:help plot lists what, with its settings)", "chart what an instrument, or the last :bench or :tune, measured (shown inline, or written to FILE)", plot).set(PLOT_SETTINGS).words(&[&[Kind::OneOf(&instruments::CHARTS)]]),
    cmd("export", "PATH.plab", "write the commands that succeeded so far (with their :module and :rust sources) as a script that passlab run replays", export).words(&[&[Kind::Path]]),
    cmd("reset", "", "forget modules, contexts, instruments and results", reset),
    cmd("quit", "", "leave", quit),
];

/// Settings for `:load` and `:module`.
const LOAD_SETTINGS: &[Setting] = &[set(
    "level",
    Kind::OneOf(&["O0", "O1", "O2", "O3", "Os", "Oz"]),
)];

/// `:load`'s: the front end's, and a project's.
const PROJECT_SETTINGS: &[Setting] = &[
    set("level", Kind::OneOf(&["O0", "O1", "O2", "O3", "Os", "Oz"])),
    set("cflags", Kind::Free),
    set("link", Kind::OneOf(&["yes", "no", "lto"])),
    set("only", Kind::Globs),
    set("warnings", Kind::OneOf(&["count", "show"])),
];

const OPT_LEVELS: &[&str] = &["0", "1", "2", "3"];
const YES_NO: &[&str] = &["yes", "no", "true", "false"];

/// `:call` and `:exec`: whether a run may bind symbols the module does not
/// define from this process's libraries.
const HOST_SETTINGS: &[Setting] = &[set("allow", Kind::OneOf(&["host"]))];

/// A context's settings: `:with`, and `:bench`'s per pipeline.
const WITH_SETTINGS: &[Setting] = &[
    set("opt_level", Kind::OneOf(OPT_LEVELS)),
    set("disabled", Kind::Passes),
    set("required", Kind::Passes),
    set("codegen", Kind::OneOf(OPT_LEVELS)),
    set("cpu", Kind::Cpu),
    set("features", Kind::Features),
    // Checked as the context is made (the option's own check).
    set("config.", Kind::Free),
];

/// `:bench`'s: a context's (per pipeline), and the time evaluator's
/// (`flops=` and `rtol=` are read by the handler).
const BENCH_SETTINGS: &[Setting] = &[
    WITH_SETTINGS[0],
    WITH_SETTINGS[1],
    WITH_SETTINGS[2],
    WITH_SETTINGS[3],
    WITH_SETTINGS[4],
    WITH_SETTINGS[5],
    WITH_SETTINGS[6],
    TIME_SETTINGS[0],
    TIME_SETTINGS[1],
    TIME_SETTINGS[2],
];

/// `:pass` and `:register`.
const PASS_SETTINGS: &[Setting] = &[
    set("opt_level", Kind::OneOf(OPT_LEVELS)),
    set("required", Kind::Passes),
];

const REDUCE_SETTINGS: &[Setting] = &[
    set(
        "with",
        Kind::OneOf(&["llvm-reduce", "llvm-reduce-19", "cvise"]),
    ),
    set("source", Kind::Path),
    set("level", Kind::OneOf(&["O0", "O1", "O2", "O3", "Os", "Oz"])),
    set("replace", Kind::OneOf(YES_NO)),
    set("budget", Kind::Seconds { max: 86_400 }),
    set("jobs", kinds::count(1, 64)),
    // Compiler flags: clang says what it makes of them.
    set("cflags", Kind::Free),
];

const HUNT_SETTINGS: &[Setting] = &[
    set("oracle", Kind::OneOf(&["native", "jit-o0"])),
    set("reduce", Kind::OneOf(YES_NO)),
    set("resume", Kind::OneOf(YES_NO)),
    set("replace", Kind::OneOf(YES_NO)),
    set("corpus", Kind::Path),
    set("pool", Kind::Pool),
    set(
        "csmith",
        Kind::Range {
            min: 0,
            max: kinds::ANY,
        },
    ),
    // Csmith's command line: Csmith says what it makes of it.
    set("csmith_args", Kind::Free),
    set("orderings", kinds::count(0, 1000)),
    set("length", Kind::Range { min: 1, max: 1000 }),
    set("seed", kinds::count(0, kinds::ANY)),
    set("budget", Kind::Seconds { max: 86_400 }),
    set("jobs", kinds::count(1, 64)),
    set("timeout", Kind::Seconds { max: 3600 }),
];

/// `:time`'s, and `:tune`'s for a runtime goal (TVM's time evaluator).
const TIME_SETTINGS: &[Setting] = &[
    set("number", kinds::count(1, 1_000_000_000)),
    set(
        "repeat",
        kinds::count(1, crate::jit::isolate::MAX_REPEAT as u64),
    ),
    set("min_repeat_ms", kinds::count(0, 3_600_000)),
];

const TUNE_SETTINGS: &[Setting] = &[
    set("goal", Kind::Words(crate::tune::Metric::NAMES)),
    set(
        "strategy",
        Kind::ListOf(crate::tune::coreset::STRATEGY_NAMES),
    ),
    set("pool", Kind::Pool),
    set("trials", kinds::count(1, crate::tune::MAX_TRIALS as u64)),
    set(
        "seconds",
        Kind::Seconds {
            max: crate::tune::MAX_SECONDS,
        },
    ),
    set("seed", kinds::count(0, kinds::ANY)),
    set("length", Kind::Range { min: 0, max: 1000 }),
    set("top", kinds::count(1, tune::MAX_TOP as u64)),
    TIME_SETTINGS[0],
    TIME_SETTINGS[1],
    TIME_SETTINGS[2],
    set(
        "timeout",
        Kind::Seconds {
            max: crate::tune::MAX_TIMEOUT_SECONDS,
        },
    ),
    set("coreset", Kind::Path),
    // `coreset`, or a coreset file.
    set("warm", Kind::Free),
];

const REPORT_SETTINGS: &[Setting] = &[
    set("passes", Kind::RemarkPasses),
    set("kinds", Kind::ListOf(crate::instrument::RemarkKind::NAMES)),
    set("functions", Kind::Functions),
    TOP,
    RUN,
];

/// `:report`'s and `:plot`'s rows, and the run they show (`run=all`: the
/// total over every run, for timing).
const TOP: Setting = set("top", kinds::count(1, kinds::ANY));
const RUN: Setting = set(
    "run",
    Kind::Count {
        min: 1,
        max: kinds::ANY,
        or: &["all"],
    },
);

const PLOT_SETTINGS: &[Setting] = &[TOP, RUN];

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

/// The arguments of a call (integers, floats, buffer names), for sweeps.
pub(crate) fn call_args_for<'b>(
    s: &'b Session,
    command: &str,
    words: &[String],
) -> Result<Vec<crate::jit::Arg<'b>>> {
    jit::call_args(s, command, words)
}

/// The keys of `command`'s settings in the table (for suggestions).
fn setting_keys(command: &str) -> Vec<&'static str> {
    find(command).map_or(Vec::new(), |c| c.settings.iter().map(|s| s.key).collect())
}

/// The value of `command`'s `key=` setting read as its kind in the table
/// says (checked before the handler ran).
fn number(command: &str, key: &str, v: &str) -> Result<kinds::Number> {
    let kind = find(command)?.setting(key).map_or(Kind::Free, |s| s.kind);
    kinds::number(kind, v).map_err(|m| err(command, format!("{key}=: {m}")))
}

/// A whole number setting (a [`Kind::Count`]), as `T` (its range fits).
fn whole<T: TryFrom<u64>>(command: &str, key: &str, v: &str) -> Result<T> {
    match number(command, key, v)? {
        kinds::Number::Whole(n) => {
            T::try_from(n).map_err(|_| err(command, format!("{key}=: {n} is too large here")))
        }
        _ => Err(err(
            command,
            format!("{key}=: expects a whole number, got '{v}'"),
        )),
    }
}

/// A [`Kind::Seconds`] setting.
fn seconds(command: &str, key: &str, v: &str) -> Result<std::time::Duration> {
    match number(command, key, v)? {
        kinds::Number::Seconds(t) => Ok(std::time::Duration::from_secs_f64(t)),
        _ => Err(err(command, format!("{key}=: expects seconds, got '{v}'"))),
    }
}

/// A [`Kind::Range`] setting: `(MIN, MAX)`.
fn range(command: &str, key: &str, v: &str) -> Result<(u64, u64)> {
    match number(command, key, v)? {
        kinds::Number::Range(lo, hi) => Ok((lo, hi)),
        _ => Err(err(command, format!("{key}=: expects MIN..MAX, got '{v}'"))),
    }
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

/// IR or a diff of it: text, and highlighted HTML for front ends that show
/// it.
fn code(s: &Session, text: String, kind: Code) -> Result<Output> {
    let mut o = Output::default();
    o.items
        .push(Item::Display(super::Bundle::code(text, kind, s.html)));
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

/// The text of the source file `path` as debug info names it: a `:module`'s
/// source (by that name, or by the path relative to the session's folder),
/// else the file on disk.
fn source_text(s: &Session, path: &str) -> Option<String> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let p = std::path::Path::new(path);
    p.strip_prefix(&cwd)
        .ok()
        .and_then(|rel| s.sources.get(rel.to_str()?))
        .or_else(|| s.sources.get(path))
        .cloned()
        .or_else(|| std::fs::read_to_string(p).ok())
}

/// A source file's path as the session shows it: relative to the folder
/// the session runs in, or to the `:path` folder it was found in (as
/// `:load` was given it, `zlib/deflate.c`), else as it is.
fn shown_path(s: &Session, path: &str) -> String {
    let p = std::path::Path::new(path);
    let cwd = std::env::current_dir().unwrap_or_default();
    std::iter::once(cwd)
        .chain(s.input_path())
        .find_map(|folder| {
            let rel = p.strip_prefix(&folder).ok()?;
            Some(rel.to_str()?.to_string())
        })
        .unwrap_or_else(|| path.to_string())
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

/// Takes `--out FILE` out of `words`: the file, if given; an error for
/// `command` when `--out` has no file after it (`example` names one).
fn take_out(words: &mut Vec<String>, command: &str, example: &str) -> Result<Option<String>> {
    match words.iter().position(|w| w == "--out") {
        Some(i) if i + 1 < words.len() => {
            let file = words.remove(i + 1);
            words.remove(i);
            Ok(Some(file))
        }
        Some(_) => Err(err(command, format!("--out expects a file name{example}"))),
        None => Ok(None),
    }
}

fn one_word<'a>(a: &'a Args, what: &str) -> Result<&'a str> {
    match (a.words.as_slice(), a.settings.is_empty()) {
        ([w], true) => Ok(w),
        _ => Err(err(&a.command, format!("expects {what}, got '{}'", a.rest))),
    }
}

/// What `:export` will write for a command that succeeded: nothing for
/// the commands that only look or leave (`:help`, `:export`, `:quit`;
/// `:reset` starts a new history), `:path` with its folders made absolute
/// (the script may run elsewhere), others as typed.
pub(super) fn history_entry(
    command: &Command,
    a: &Args,
    line: &str,
    body: Option<&str>,
    last_tune: Option<&crate::tune::Tuning>,
) -> Option<(String, Option<String>)> {
    match command.name {
        "help" | "export" | "quit" | "reset" => None,
        // An interrupted search: what ran, not the whole search again.
        "tune" if !matches!(a.words.first().map(String::as_str), Some("apply" | "save")) => {
            let line = match last_tune {
                Some(t) if t.interrupted => tune::interrupted_line(line, t),
                _ => line.trim().to_string(),
            };
            Some((line, None))
        }
        "path" if !a.words.is_empty() => {
            let cwd = std::env::current_dir().ok()?;
            let dirs: Vec<String> = a
                .words
                .iter()
                .map(|w| cwd.join(w).display().to_string())
                .collect();
            Some((format!(":path {}", dirs.join(" ")), None))
        }
        _ => Some((line.trim().to_string(), body.map(str::to_string))),
    }
}

fn export(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let path = one_word(a, "a file to write, such as session.plab")?;
    let mut script = String::from(
        "# A passlab session: the commands that succeeded, in order, with their\n\
         # sources (written by :export). Run it with: passlab run FILE\n",
    );
    if let Ok(cwd) = std::env::current_dir() {
        script.push_str(&format!(
            "# The session ran in {}: relative inputs are looked for there too.\n:path {}\n",
            cwd.display(),
            cwd.display()
        ));
    }
    let mut sources = 0;
    for (line, body) in &s.history {
        script.push_str(line);
        script.push('\n');
        if let Some(body) = body {
            sources += 1;
            script.push_str(body);
            if !body.ends_with('\n') {
                script.push('\n');
            }
            script.push_str(".\n");
        }
    }
    crate::folder::write_file(std::path::Path::new(path), script, ":export")?;
    let n = s.history.len();
    text(format!(
        "wrote {path}: {n} command{} ({sources} with a source); passlab run {path} replays them",
        if n == 1 { "" } else { "s" }
    ))
}

fn reset(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    while let Some(scope) = s.scopes.pop() {
        let _ = scope.guard.exit();
    }
    let progress = s.progress.take();
    let html = s.html;
    *s = Session::new();
    s.progress = progress;
    s.html = html;
    crate::user::reset();
    text("session reset")
}

fn quit(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    s.quit = true;
    Ok(Output::default())
}
