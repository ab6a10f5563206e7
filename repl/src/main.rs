//! `passlab`: the REPL and script runner of the passlab command language.
//!
//! `passlab` starts the REPL; `passlab run FILE.plab` (or `-` for standard
//! input) runs a script, stopping at the first error with its file:line
//! unless `--keep-going`. Everything a command does is the core library's
//! `Session`; this binary only reads lines and prints output.

// std's printing macros, ending quietly on a closed pipe (see out.rs);
// defined before the modules so that every one of them uses these.
macro_rules! print {
    ($($t:tt)*) => { $crate::out::stdout(format_args!($($t)*)) };
}
macro_rules! println {
    () => { $crate::out::stdout(format_args!("\n")) };
    ($($t:tt)*) => { $crate::out::stdout(format_args!("{}\n", format_args!($($t)*))) };
}
macro_rules! eprint {
    ($($t:tt)*) => { $crate::out::stderr(format_args!($($t)*)) };
}
macro_rules! eprintln {
    () => { $crate::out::stderr(format_args!("\n")) };
    ($($t:tt)*) => { $crate::out::stderr(format_args!("{}\n", format_args!($($t)*))) };
}

mod coreset;
mod hunt;
mod out;
mod render;
mod script;
mod sweep;

use clap::{Parser, Subcommand};
use passlab::session::{Session, COMMANDS};
use render::Renderer;
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "passlab",
    about = "A workbench for compiler experiments on LLVM 19"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Sub>,
    /// Where charts (:plot) are written.
    #[arg(long, global = true, default_value = "passlab-charts")]
    charts: PathBuf,
}

#[derive(Subcommand)]
enum Sub {
    /// Run a script of commands (`-`: standard input).
    Run {
        file: PathBuf,
        /// Go on after an error (the exit status is still non-zero).
        #[arg(long)]
        keep_going: bool,
        /// Print each command before its output.
        #[arg(long)]
        echo: bool,
    },
    /// Print the command reference (Markdown, from the command table).
    Commands,
    /// Print a notebook's cells as a script that `passlab run` runs (its
    /// `.plab` twin): code cells as they are, a body that runs to the end
    /// of its cell ended with `.`, Markdown cells as `#` comments.
    Script { notebook: PathBuf },
    /// Search pass orderings over a corpus (SPEC, a TOML file), as one
    /// shard of N: `--shard I/N`, or the index from SLURM_ARRAY_TASK_ID
    /// (Slurm job arrays) or JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs)
    /// with the count from --shards, SLURM_ARRAY_TASK_COUNT or
    /// PASSLAB_SHARDS. Run again, a shard finishes what it had not.
    /// `passlab sweep merge DIR...` merges the shards and writes the report.
    #[command(args_conflicts_with_subcommands = true)]
    Sweep {
        #[command(subcommand)]
        merge: Option<Merge>,
        #[command(flatten)]
        batch: Batch,
    },
    /// Learn a coreset over a corpus: a few orderings that together bring
    /// every program near its best (greedy set cover over local search's
    /// best orderings), written to --out for `:tune strategy=coreset
    /// coreset=FILE`.
    Coreset(coreset::Make),
    /// Hunt compiler bugs (SPEC, a TOML file): generated or given C
    /// programs through pipelines, each run checked against the program's
    /// right output, findings bisected, reduced and written as
    /// reproducers; one shard of N as for sweep (--shard I/N, or Slurm's
    /// and Kubernetes' index). `passlab hunt merge DIR...` merges the
    /// shards.
    #[command(args_conflicts_with_subcommands = true)]
    Hunt {
        #[command(subcommand)]
        merge: Option<Merge>,
        #[command(flatten)]
        batch: Batch,
    },
}

/// What `passlab sweep` and `passlab hunt` take: one shard of a batch job.
#[derive(clap::Args)]
struct Batch {
    /// The job's spec (TOML).
    spec: Option<PathBuf>,
    /// Where the shard writes (default: NAME.sweep or NAME.hunt beside the
    /// spec).
    #[arg(long)]
    out: Option<PathBuf>,
    /// This shard: I/N.
    #[arg(long)]
    shard: Option<String>,
    /// The number of shards, when the index comes from the environment.
    #[arg(long)]
    shards: Option<usize>,
    /// A folder passlab did not make, or another job's, is refused;
    /// with --replace, the job writes beside the files of a folder of
    /// yours (touching none of them) or removes another job's files
    /// there (only those that job wrote).
    #[arg(long)]
    replace: bool,
}

#[derive(Subcommand)]
enum Merge {
    /// Merge the shards written into DIR... (one job), check that nothing
    /// is missing or twice, and write the report.
    Merge {
        dirs: Vec<PathBuf>,
        /// Where the report goes (default: DIR/report for the first DIR).
        #[arg(long)]
        out: Option<PathBuf>,
        /// A folder passlab did not make, or another job's, is refused;
        /// with --replace, the job writes beside the files of a folder of
        /// yours (touching none of them) or removes another job's files
        /// there (only those that job wrote).
        #[arg(long)]
        replace: bool,
    },
}

impl Batch {
    /// The shard this process runs (`--shard`, or the environment's) and
    /// where it writes (`--out`, or the job's own folder).
    fn place(&self, job: &passlab::batch::Job) -> anyhow::Result<((usize, usize), PathBuf)> {
        let shard = passlab::batch::choose_shard(self.shard.as_deref(), self.shards)?;
        Ok((shard, self.out.clone().unwrap_or_else(|| job.default_out())))
    }
}

/// Where a merge writes its report: `out`, or `report` in the first of
/// `dirs`.
fn report_folder(dirs: &[PathBuf], out: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match (out, dirs.first()) {
        (Some(out), _) => Ok(out),
        (None, Some(first)) => Ok(first.join("report")),
        (None, None) => anyhow::bail!("merge expects the folders the shards wrote into"),
    }
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let done = match cli.command {
        Some(Sub::Run {
            file,
            keep_going,
            echo,
        }) => {
            let ok = script::run(&file, keep_going, echo, Renderer::new(cli.charts));
            passlab::user::stop_worker();
            std::process::exit(if ok? { 0 } else { 1 });
        }
        Some(Sub::Coreset(make)) => coreset::run(make),
        Some(Sub::Commands) => {
            print!("{}", passlab::session::reference_markdown());
            Ok(())
        }
        Some(Sub::Script { notebook }) => {
            print!("{}", script::from_notebook(&notebook)?);
            Ok(())
        }
        Some(Sub::Sweep {
            merge: Some(Merge::Merge { dirs, out, replace }),
            ..
        }) => sweep::merge(&dirs, out, replace),
        Some(Sub::Hunt {
            merge: Some(Merge::Merge { dirs, out, replace }),
            ..
        }) => hunt::merge(&dirs, out, replace),
        Some(Sub::Sweep { batch, .. }) => match &batch.spec {
            Some(spec) => sweep::run(&spec.clone(), batch),
            None => anyhow::bail!(
                "sweep expects SPEC.toml (or: sweep merge DIR...); see passlab sweep --help"
            ),
        },
        Some(Sub::Hunt { batch, .. }) => match &batch.spec {
            Some(spec) => hunt::run(&spec.clone(), batch),
            None => anyhow::bail!(
                "hunt expects SPEC.toml (or: hunt merge DIR...); see passlab hunt --help"
            ),
        },
        None => repl(Renderer::new(cli.charts)),
    };
    // A Rust worker's build folder free for the next session.
    passlab::user::stop_worker();
    done
}

/// Completes as the core's `Names::complete` says (commands, then each
/// argument from its own kind: passes, processors, strategies, modules,
/// functions, buffers, paths…, with the session's names as of the last
/// command).
struct Completion {
    names: passlab::session::Names,
}

impl Completer for Completion {
    type Candidate = Pair;
    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let (start, names) = self.names.complete(line, pos);
        let pairs = names
            .into_iter()
            .map(|n| Pair {
                display: n.clone(),
                replacement: n,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for Completion {
    type Hint = String;
    fn hint(&self, line: &str, pos: usize, _: &Context<'_>) -> Option<String> {
        // The usage of a command once its name is typed.
        let name = line.strip_prefix(':')?.strip_suffix(' ')?;
        if pos != line.len() {
            return None;
        }
        COMMANDS
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.usage.to_string())
    }
}

impl Highlighter for Completion {}
impl Validator for Completion {}
impl Helper for Completion {}

/// While a command runs, Ctrl-C interrupts it (`passlab::interrupt`): a
/// JIT call ends, a pipeline stops and is rolled back; the REPL goes on.
/// The previous handler comes back when this is dropped.
pub(crate) struct InterruptCommand(libc::sighandler_t);

extern "C" fn on_sigint(_: libc::c_int) {
    passlab::interrupt::request();
}

impl InterruptCommand {
    pub(crate) fn new() -> InterruptCommand {
        let handler = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: `on_sigint` is an `extern "C" fn(c_int)` that lives for the
        // whole program and only calls `passlab::interrupt::request`, which
        // is async-signal-safe (atomic stores and `kill`).
        InterruptCommand(unsafe { libc::signal(libc::SIGINT, handler) })
    }
}

impl Drop for InterruptCommand {
    fn drop(&mut self) {
        // SAFETY: `self.0` is the disposition `signal` returned in `new`
        // (a handler, SIG_DFL or SIG_IGN), so restoring it installs nothing
        // that was not installed before; were it SIG_ERR, this call would
        // just fail with EINVAL.
        unsafe { libc::signal(libc::SIGINT, self.0) };
    }
}

fn history_path() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".passlab_history"))
}

/// Shows how a long command (`:bench`) is getting on, on standard error when
/// it is a terminal (indicatif draws nothing otherwise).
pub fn show_progress(session: &mut Session) {
    let mut bar: Option<indicatif::ProgressBar> = None;
    session.set_progress(move |p| {
        if p.stage.is_empty() {
            if let Some(b) = bar.take() {
                b.finish_and_clear();
            }
            return;
        }
        let b = bar.get_or_insert_with(|| {
            let b = indicatif::ProgressBar::new(p.total as u64);
            b.set_style(
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} ({elapsed})")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        b.set_length(p.total as u64);
        b.set_position(p.done as u64);
        b.set_message(p.stage.clone());
    });
}

/// The next line to run: one left from a pasted block (shown with its
/// prompt, so each output follows the line it belongs to), else one read
/// from the editor. A block pasted at once arrives as one string with
/// newlines; its first line is returned and the rest wait in `pending`.
fn next_line(
    editor: &mut Editor<Completion, rustyline::history::FileHistory>,
    pending: &mut std::collections::VecDeque<String>,
    prompt: &str,
) -> Result<String, ReadlineError> {
    if let Some(line) = pending.pop_front() {
        println!("{prompt}{line}");
        return Ok(line);
    }
    let text = editor.readline(prompt)?;
    if !text.contains('\n') {
        return Ok(text);
    }
    let mut lines = text.lines().map(str::to_string);
    let first = lines.next().unwrap_or_default();
    pending.extend(lines);
    // The editor showed the block as typed; from here on each line is
    // shown again before its output.
    println!("{prompt}{first}");
    Ok(first)
}

fn repl(mut renderer: Renderer) -> anyhow::Result<()> {
    let mut session = Session::new();
    // The terminal shows text only.
    session.set_html(false);
    show_progress(&mut session);
    // Tab completes what all candidates share and lists them, as shells do.
    let config = rustyline::Config::builder()
        .completion_type(rustyline::CompletionType::List)
        .build();
    let mut editor: Editor<Completion, rustyline::history::FileHistory> =
        Editor::with_config(config)?;
    editor.set_helper(Some(Completion {
        names: session.completions(),
    }));
    if let Some(h) = history_path() {
        let _ = editor.load_history(&h);
    }
    println!("passlab: a workbench for compiler experiments on LLVM 19. :help lists the commands.");
    // Lines pasted as one block (bracketed paste gives them to us together)
    // wait here and run one by one, each shown with its prompt.
    let mut pending: std::collections::VecDeque<String> = Default::default();
    loop {
        let ctx = session.prompt_context();
        let prompt = if ctx.is_empty() {
            "passlab> ".to_string()
        } else {
            format!("passlab[{ctx}]> ")
        };
        let line = match next_line(&mut editor, &mut pending, &prompt) {
            Ok(line) => line,
            // Ctrl-C clears the line; Ctrl-D quits.
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        if line.trim().is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(line.as_str());
        let body = if passlab::session::takes_body(&line) {
            let mut lines = Vec::new();
            loop {
                match next_line(&mut editor, &mut pending, "...> ") {
                    Ok(l) if l.trim() == script::TERMINATOR => break,
                    Ok(l) => lines.push(l),
                    Err(ReadlineError::Interrupted) => {
                        lines.clear();
                        pending.clear();
                        break;
                    }
                    Err(_) => break,
                }
            }
            if lines.is_empty() {
                eprintln!(
                    "({} cancelled: nothing after it)",
                    line.split_whitespace().next().unwrap_or("")
                );
                continue;
            }
            Some(lines.join("\n"))
        } else {
            None
        };
        // While a command runs, Ctrl-C interrupts the command, not the
        // session.
        let result = {
            let _interrupt = InterruptCommand::new();
            session.execute_line(&line, body.as_deref())
        };
        match result {
            Ok(out) => renderer.print(&out),
            // A pasted block goes on after an error, as typed lines do.
            Err(e) => eprintln!("error: {e}"),
        }
        if session.quit_requested() {
            break;
        }
        if let Some(h) = editor.helper_mut() {
            h.names = session.completions();
        }
    }
    if let Some(h) = history_path() {
        let _ = editor.save_history(&h);
    }
    Ok(())
}
