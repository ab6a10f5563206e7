//! Reduction: the smallest module (or C source) that still has a property
//! — a miscompile, a crash, an LLVM fatal error, a verifier failure, or a
//! user's Rust predicate ([`Property`]) — found by the field's own
//! reducers: `llvm-reduce-19` over IR (its delta passes: functions,
//! blocks, instructions, operands, attributes, metadata …) and Debian's
//! `cvise` over C.
//!
//! The interestingness test is passlab itself. The reducer runs a small
//! shell script for each candidate; the script writes the candidate's path
//! into a FIFO and waits for the answer on another, and this process,
//! which holds the session (its buffers, its Rust worker, its passes),
//! decides with [`Property::holds`] and answers. Candidates are decided in
//! forked children, as many at once as the reducer is told to test
//! (`-j`, `--n`: the processors; a Rust pass or predicate runs for each
//! child in a fork of the Rust worker's service); a child that decides one
//! candidate generates its code in-process, since nothing there outlives
//! the answer. The smallest interesting candidate is kept as the reduction
//! goes, so an interrupt (or a time budget) ends it with the smallest
//! found so far.
//!
//! [`reproducer`] writes a finding as a folder others can run without
//! passlab: the reduced IR, the pipeline, the property, and `repro.sh`,
//! which shows the bug with `opt-19` and `lli-19`.

#![forbid(unsafe_code)]

mod property;
mod repro;

pub use property::{mask_values, run_isolated, Ending, Outcome, Property, Symptom};
pub use repro::{crash_reproducer, reproducer, Reproducer};

use crate::folder::OwnedDir;
use crate::module::Module;
use crate::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Which reducer ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// `llvm-reduce-19`, over IR.
    LlvmReduce,
    /// Debian's `cvise`, over a C source.
    Cvise,
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::LlvmReduce => "llvm-reduce-19",
            Tool::Cvise => "cvise",
        }
    }
}

/// One step of a reduction: a smaller interesting candidate, found at
/// `at` after the start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub at: Duration,
    pub instructions: u64,
    /// The C source's bytes, for cvise.
    pub bytes: Option<u64>,
    /// Candidates tested so far.
    pub tests: usize,
}

/// What a reduction found.
pub struct Reduction {
    /// The smallest interesting module.
    pub module: Module,
    /// For cvise: the reduced C source.
    pub source: Option<String>,
    pub tool: Tool,
    pub instructions_before: u64,
    /// Every new smallest candidate, in order (the first is the input).
    pub steps: Vec<Step>,
    pub tests: usize,
    pub interesting: usize,
    pub elapsed: Duration,
    /// Stopped by an interrupt or the time budget before the reducer was
    /// done: the module is the smallest found until then.
    pub stopped: Option<String>,
}

impl Reduction {
    pub fn instructions_after(&self) -> u64 {
        self.module.instruction_count()
    }

    /// One line: `1,912 → 31 instructions (1.6%) in 41.2 s, 612 candidates
    /// tested by llvm-reduce-19`.
    pub fn summary(&self) -> String {
        let before = self.instructions_before;
        let after = self.instructions_after();
        let mut s = format!(
            "{before} → {after} instructions ({:.1}%) in {:.1} s: {} candidates tested by {}, {} interesting",
            100.0 * after as f64 / before.max(1) as f64,
            self.elapsed.as_secs_f64(),
            self.tests,
            self.tool.name(),
            self.interesting
        );
        if let (Some(src), Some(first)) = (&self.source, self.steps.first().and_then(|s| s.bytes)) {
            s.push_str(&format!("; source {first} → {} bytes", src.len()));
        }
        if let Some(why) = &self.stopped {
            s.push_str(&format!(" (stopped: {why}; the smallest so far is kept)"));
        }
        s
    }

    /// Size over time, as a chart (instructions against seconds).
    pub fn chart(&self, title: &str) -> crate::chart::Chart {
        let points: Vec<(f64, f64)> = self
            .steps
            .iter()
            .map(|s| (s.at.as_secs_f64(), s.instructions as f64))
            .collect();
        crate::chart::Chart::lines(
            title,
            "seconds",
            "instructions",
            vec![("smallest interesting candidate".into(), points)],
            Vec::new(),
        )
    }
}

/// How long a reduction may run, at most (`None`: until the reducer is
/// done).
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub budget: Option<Duration>,
    /// Extra flags for compiling C candidates (cvise).
    pub cflags: Vec<String>,
    /// clang's hand-over C candidates are compiled at (cvise; as `:load`'s
    /// `level=`, O2 by default).
    pub level: crate::module::Level,
    /// Candidates tested at once (0: one per core).
    pub jobs: usize,
}

impl Options {
    /// How many candidates are tested at once.
    fn jobs(&self) -> usize {
        match self.jobs {
            0 => std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(8),
            n => n.min(64),
        }
    }
}

/// The settings `:reduce` takes after its property.
pub const SETTINGS: &[&str] = &[
    "budget", "with", "source", "cflags", "level", "jobs", "replace",
];

/// `message` as an error of `:reduce`'s.
fn command_error(message: impl Into<String>) -> Error {
    Error::Command {
        command: "reduce".into(),
        message: message.into(),
        suggestions: vec![],
    }
}

/// How a reduction runs, read from its settings ([`SETTINGS`]): the
/// reducer's [`Options`], the C source cvise reduces (`source=`, which is
/// given exactly when `with=cvise` is), and whether a reproducer folder
/// may be shared with files that are not this job's (`replace=yes`).
#[derive(Clone, Debug, Default)]
pub struct Settings {
    pub options: Options,
    /// The C source's path, for cvise; `None`: llvm-reduce.
    pub source: Option<String>,
    pub replace: bool,
}

impl Settings {
    /// Reads `settings` (key, value), in order; candidates are compiled at
    /// `level` unless `level=` says otherwise. An error names the first
    /// setting that is unknown or out of range, or a reducer without its
    /// input (cvise without `source=`, `source=` without cvise).
    pub fn parse(settings: &[(String, String)], level: crate::module::Level) -> Result<Settings> {
        let mut options = Options {
            level,
            ..Options::default()
        };
        let (mut replace, mut cvise, mut source) = (false, false, None);
        for (k, v) in settings {
            match k.as_str() {
                "budget" => {
                    let secs: f64 = v.parse().ok().filter(|s: &f64| *s > 0.0 && *s <= 86_400.0).ok_or_else(|| {
                        command_error(format!("budget expects seconds above 0 and at most 86400 (a day), got '{v}'"))
                    })?;
                    options.budget = Some(Duration::from_secs_f64(secs));
                }
                "with" => match v.as_str() {
                    "llvm-reduce" | "llvm-reduce-19" => cvise = false,
                    "cvise" => cvise = true,
                    other => {
                        return Err(Error::Command {
                            command: "reduce".into(),
                            message: format!("with expects llvm-reduce or cvise, got '{other}'"),
                            suggestions: crate::nearest_names(other, ["llvm-reduce", "cvise"]),
                        })
                    }
                },
                "source" => source = Some(v.clone()),
                "replace" => {
                    replace = match v.as_str() {
                        "yes" | "true" => true,
                        "no" | "false" => false,
                        _ => {
                            return Err(command_error(format!(
                                "replace expects yes or no, got '{v}'"
                            )))
                        }
                    }
                }
                "cflags" => {
                    options.cflags = v
                        .split(',')
                        .filter(|p| !p.is_empty())
                        .map(str::to_string)
                        .collect()
                }
                "level" => {
                    options.level = crate::module::Level::parse(v).map_err(|_| {
                        command_error(format!(
                            "level expects O0, O1, O2, O3, Os or Oz (as :load's), got '{v}'"
                        ))
                    })?
                }
                "jobs" => {
                    options.jobs = v.parse().ok().filter(|n| (1..=64).contains(n)).ok_or_else(|| {
                        command_error(format!("jobs expects how many candidates to test at once, 1 to 64, got '{v}'"))
                    })?;
                }
                other => {
                    return Err(Error::Command {
                        command: "reduce".into(),
                        message: format!("unknown setting '{other}'"),
                        suggestions: crate::nearest_names(other, SETTINGS.iter().copied()),
                    })
                }
            }
        }
        if cvise != source.is_some() {
            return Err(command_error(if cvise {
                "with=cvise reduces C: give the source the module was compiled from, source=FILE.c"
            } else {
                "source= is for with=cvise (llvm-reduce reduces the module itself)"
            }));
        }
        Ok(Settings {
            options,
            source,
            replace,
        })
    }
}

/// Claims the folder `dir` for the reproducer of the reduction that the
/// line `line` (what follows `:reduce`) asks of `module`. The job is the
/// line and the module's text (a fingerprint holds addresses, which differ
/// from run to run): the same job may replace what it wrote there; a
/// folder of the user's or of another job's is refused unless `replace`.
/// Done before the reduction, so that a refused folder costs nothing.
pub fn claim_folder(dir: &Path, line: &str, module: &Module, replace: bool) -> Result<OwnedDir> {
    claim_folder_for("reduce", dir, line, module, replace)
}

/// [`claim_folder`] for the command `command` (`reduce`, `run`: a crash's
/// reproducer), `line` what follows it.
pub fn claim_folder_for(
    command: &str,
    dir: &Path,
    line: &str,
    module: &Module,
    replace: bool,
) -> Result<OwnedDir> {
    let line = line.trim();
    let job = format!(
        "{:016x}",
        crate::jit::fnv1a(line.bytes().chain([0]).chain(module.print().into_bytes()))
    );
    let owner = crate::folder::Owner::new(format!(":{command}"), format!(":{command} {line}"), job);
    OwnedDir::claim(
        dir,
        &owner,
        crate::folder::Access::Exclusive,
        replace,
        "replace=yes",
    )
    .map_err(|e| Error::Command {
        command: command.into(),
        message: e.to_string(),
        suggestions: vec![],
    })
}

/// Reduces `module` while `property` holds — with llvm-reduce-19 over its
/// IR, or, given `c` (the C source's text and file name), with cvise over
/// that source — telling `progress` of each smaller candidate and once
/// more when done; then, given `out`, writes the reproducer there (what
/// this job wrote there before goes first). `:reduce`'s work, whole.
pub fn run(
    module: &Module,
    property: &Property,
    options: &Options,
    c: Option<(&str, &str)>,
    out: Option<&OwnedDir>,
    progress: &mut dyn FnMut(&crate::jit::Progress),
) -> Result<(Reduction, Option<Reproducer>)> {
    let before = module.instruction_count();
    let tool = if c.is_some() {
        "cvise"
    } else {
        "llvm-reduce-19"
    };
    let mut tell = |step: &Step| {
        progress(&crate::jit::Progress {
            done: before.saturating_sub(step.instructions) as usize,
            total: before as usize,
            stage: format!(
                "reducing with {tool}: {before} → {} instructions, {} candidates tested",
                step.instructions, step.tests
            ),
        })
    };
    let reduction = match c {
        Some((text, name)) => reduce_c(text, name, property, options, &mut tell)?,
        None => reduce_ir(module, property, options, &mut tell)?,
    };
    progress(&crate::jit::Progress {
        done: before as usize,
        total: before as usize,
        stage: String::new(),
    });
    let repro = match out {
        Some(dir) => {
            // What this job wrote there before goes (a cell run again).
            dir.remove_own()?;
            Some(reproducer(dir, "", &reduction, property)?)
        }
        None => None,
    };
    Ok((reduction, repro))
}

/// Flags every C candidate is compiled with: a candidate that reads an
/// uninitialized variable, falls off a function's end or calls an
/// undeclared function is refused, so that cvise cannot turn a bug into
/// undefined behaviour that only looks like it (C-Reduce's advice).
pub const CANDIDATE_CFLAGS: &[&str] = &[
    "-Werror=uninitialized",
    "-Werror=sometimes-uninitialized",
    "-Werror=return-type",
    "-Werror=implicit-function-declaration",
    "-Werror=implicit-int",
    "-Werror=int-conversion",
    "-Werror=incompatible-pointer-types",
    "-Werror=format-insufficient-args",
];

/// The reducer's side of the conversation: a folder with a request FIFO
/// and the script the reducer runs. Each run of the script makes a FIFO of
/// its own for its answer and sends the candidate's path and that FIFO's on
/// one line, so that several candidates may be tested at once.
struct Oracle {
    dir: PathBuf,
    requests: std::fs::File,
    script: PathBuf,
}

impl Oracle {
    /// `cvise`: the script sends the file it is run beside (its working
    /// folder holds the candidate as `name`); llvm-reduce gives the path.
    fn new(dir: &Path, candidate: Option<&str>) -> Result<Oracle> {
        let requests = dir.join("requests");
        crate::child::make_fifo(&requests).map_err(|e| Error::io(requests.display(), e))?;
        let script = dir.join("interesting.sh");
        // No more processes than needed (each costs a millisecond or more
        // a candidate): the answer's FIFO is named after the script's pid
        // (unique among scripts running at once; a stale one left by a
        // killed script is replaced), and passlab removes it once answered.
        // Every name written into the script is quoted for the shell (a
        // C file's name is the user's).
        let which = match candidate {
            Some(name) => format!("c=\"$PWD\"/{}", repro::quote(name)),
            None => "case \"$1\" in /*) c=$1 ;; *) c=$PWD/$1 ;; esac".into(),
        };
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\n# Asks passlab whether the candidate is interesting (exit 0: yes).\n\
                 {which}\n\
                 a={answers}$$\n\
                 mkfifo \"$a\" 2>/dev/null || {{ rm -f \"$a\" && mkfifo \"$a\"; }} || exit 2\n\
                 printf '%s\\t%s\\n' \"$c\" \"$a\" > {requests}\n\
                 read answer < \"$a\"\nexit \"$answer\"\n",
                answers = repro::quote(&format!("{}/answer.", dir.display())),
                requests = repro::quote(&requests.display().to_string()),
            ),
        )
        .map_err(|e| Error::io(script.display(), e))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| Error::io(script.display(), e))?;
        // Read and write: the FIFO then always has a writer (this one), so
        // that a script's closing it never reads as the end of the file.
        let requests = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&requests)
            .map_err(|e| Error::io(requests.display(), e))?;
        crate::child::set_nonblocking(std::os::fd::AsRawFd::as_raw_fd(&requests));
        Ok(Oracle {
            dir: dir.to_path_buf(),
            requests,
            script,
        })
    }

    /// Answers the script waiting on the FIFO `to`.
    fn answer(to: &Path, yes: bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            // A reader is there once the script opens it; until then the
            // open fails (ENXIO), and it is tried again.
            let f = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags_nonblock()
                .open(to);
            match f {
                Ok(mut f) => {
                    let _ = f.write_all(if yes { b"0\n" } else { b"1\n" });
                    // The script has it open: its read still gets the
                    // answer.
                    let _ = std::fs::remove_file(to);
                    return;
                }
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_micros(200))
                }
                Err(_) => {
                    let _ = std::fs::remove_file(to);
                    return;
                }
            }
        }
    }
}

trait NonBlock {
    fn custom_flags_nonblock(&mut self) -> &mut Self;
}

impl NonBlock for std::fs::OpenOptions {
    fn custom_flags_nonblock(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(libc::O_NONBLOCK)
    }
}

/// A new private folder for one reduction (mode 0700, a random name,
/// made now; removed when dropped).
fn work_dir() -> Result<tempfile::TempDir> {
    crate::folder::private_temp_dir("passlab-reduce-")
}

/// One candidate being decided in a child.
struct InFlight {
    child: crate::child::Child,
    path: PathBuf,
    answer: PathBuf,
    said: Vec<u8>,
}

/// Runs `command` (a reducer) and answers its candidates until it ends,
/// an interrupt comes or `budget` runs out; returns why it stopped early,
/// if it did. `decide` says whether a candidate (its path) is interesting;
/// with `jobs` above 1 it runs in forked children, `jobs` candidates at
/// once (the reducer asks that many at a time), else here. `record` is
/// told of each answer here, before the script hears it (the reducer may
/// remove the candidate afterwards).
fn converse(
    command: std::process::Command,
    oracle: &Oracle,
    budget: Option<Duration>,
    jobs: usize,
    decide: &dyn Fn(&Path) -> Result<bool>,
    record: &mut dyn FnMut(&Path, bool),
) -> Result<Option<String>> {
    use std::io::Read;
    let (mut child, tool) = start_reducer(command, oracle)?;
    let start = Instant::now();
    let mut flight: Vec<InFlight> = Vec::new();
    let mut pending = Vec::new();
    let mut queue: std::collections::VecDeque<(PathBuf, PathBuf)> = Default::default();
    let mut buf = [0u8; 4096];
    let mut requests = &oracle.requests;
    loop {
        let mut fds = vec![std::os::fd::AsRawFd::as_raw_fd(&oracle.requests)];
        fds.extend(flight.iter().map(|f| f.child.result));
        crate::child::wait_readable(&fds, 20);
        if let Ok(n) = requests.read(&mut buf) {
            pending.extend_from_slice(&buf[..n]);
        }
        queue.extend(requests_in(&mut pending));
        // Decide what waits, here or in children.
        while let Some((path, answer)) = queue.pop_front() {
            if jobs <= 1 {
                match decide(&path) {
                    Ok(yes) => {
                        record(&path, yes);
                        Oracle::answer(&answer, yes);
                    }
                    Err(e) => {
                        stop(&mut child, &mut flight);
                        return Err(e);
                    }
                }
                continue;
            }
            if flight.len() >= jobs {
                queue.push_front((path, answer));
                break;
            }
            let c = property::spawn_decision(|| decide(&path))?;
            flight.push(InFlight {
                child: c,
                path,
                answer,
                said: Vec::new(),
            });
        }
        // Answers from the children.
        if !answer_finished(&mut flight, &mut buf, record) {
            stop(&mut child, &mut flight);
            crate::interrupt::clear();
            return Ok(Some("interrupted".into()));
        }
        if let Ok(Some(status)) = child.try_wait() {
            for f in flight.drain(..) {
                f.child.kill();
                f.child.close();
            }
            return reducer_ended(status, oracle, tool);
        }
        if crate::interrupt::requested() {
            stop(&mut child, &mut flight);
            crate::interrupt::clear();
            return Ok(Some("interrupted".into()));
        }
        if budget.is_some_and(|b| start.elapsed() > b) {
            stop(&mut child, &mut flight);
            return Ok(Some(format!(
                "{:.0} s budget used",
                budget.unwrap_or_default().as_secs_f64()
            )));
        }
    }
}

/// Starts the reducer in the oracle's folder, in a process group of its
/// own, its output to `reducer.log`; the child and the tool's name.
fn start_reducer(
    mut command: std::process::Command,
    oracle: &Oracle,
) -> Result<(std::process::Child, String)> {
    use std::os::unix::process::CommandExt;
    let log = std::fs::File::create(oracle.dir.join("reducer.log"))
        .map_err(|e| Error::io(oracle.dir.display(), e))?;
    command
        .current_dir(&oracle.dir)
        .stdin(std::process::Stdio::null())
        .stdout(
            log.try_clone()
                .map_err(|e| Error::io("the reducer's log", e))?,
        )
        .stderr(log)
        .process_group(0);
    let tool = command.get_program().to_string_lossy().into_owned();
    let child = command.spawn().map_err(|e| Error::Tool {
        tool: tool.clone(),
        message: format!("cannot start it: {e}"),
    })?;
    Ok((child, tool))
}

/// Stops the decisions in flight and the reducer: its process group (made
/// by [`start_reducer`]), so that its test scripts go too.
fn stop(child: &mut std::process::Child, flight: &mut Vec<InFlight>) {
    for f in flight.drain(..) {
        f.child.kill();
        f.child.close();
    }
    crate::child::kill_group(child.id());
    let _ = child.wait();
}

/// The whole lines in `pending` (taken out of it): each a candidate's path
/// and, after a tab, where its answer goes.
fn requests_in(pending: &mut Vec<u8>) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    while let Some(nl) = pending.iter().position(|&b| b == b'\n') {
        let line: Vec<u8> = pending.drain(..=nl).collect();
        let line = String::from_utf8_lossy(&line[..nl]).into_owned();
        let (path, answer) = line.split_once('\t').unwrap_or((line.as_str(), ""));
        out.push((PathBuf::from(path), PathBuf::from(answer)));
    }
    out
}

/// Answers the candidates whose children have decided (`record` told
/// first); false when one was interrupted.
fn answer_finished(
    flight: &mut Vec<InFlight>,
    buf: &mut [u8],
    record: &mut dyn FnMut(&Path, bool),
) -> bool {
    let mut i = 0;
    while i < flight.len() {
        let f = &mut flight[i];
        let mut sink = Vec::new();
        crate::child::drain(f.child.said, &mut sink, buf);
        crate::child::drain(f.child.result, &mut f.said, buf);
        if f.child.try_wait().is_none() {
            i += 1;
            continue;
        }
        crate::child::drain(f.child.result, &mut f.said, buf);
        let f = flight.swap_remove(i);
        f.child.close();
        if f.said.first() == Some(&b'I') {
            return false;
        }
        let yes = f.said.first() == Some(&b'1');
        record(&f.path, yes);
        Oracle::answer(&f.answer, yes);
    }
    true
}

/// The reducer ended with `status`: done, or an error with the end of its
/// log.
fn reducer_ended(
    status: std::process::ExitStatus,
    oracle: &Oracle,
    tool: String,
) -> Result<Option<String>> {
    if status.success() {
        return Ok(None);
    }
    let said = std::fs::read_to_string(oracle.dir.join("reducer.log")).unwrap_or_default();
    let tail: Vec<&str> = said.lines().rev().take(12).collect();
    Err(Error::Tool {
        tool,
        message: format!(
            "it {}: {}",
            status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ),
    })
}

/// A reduction's course so far: since `start`, its steps (the first the
/// input), tests and interesting candidates, each step told to
/// `progress`.
struct Course<'p> {
    start: Instant,
    steps: Vec<Step>,
    tests: usize,
    interesting: usize,
    progress: &'p mut dyn FnMut(&Step),
}

impl<'p> Course<'p> {
    /// Begins with the input, of `instructions` (and `bytes` of source).
    fn begin(instructions: u64, bytes: Option<u64>, progress: &'p mut dyn FnMut(&Step)) -> Self {
        let start = Instant::now();
        let first = Step {
            at: Duration::ZERO,
            instructions,
            bytes,
            tests: 0,
        };
        progress(&first);
        Course {
            start,
            steps: vec![first],
            tests: 0,
            interesting: 0,
            progress,
        }
    }

    /// A test made: `yes` if its candidate was interesting.
    fn tested(&mut self, yes: bool) {
        self.tests += 1;
        if yes {
            self.interesting += 1;
        }
    }

    /// The last step's instructions.
    fn last(&self) -> u64 {
        self.steps.last().map_or(u64::MAX, |s| s.instructions)
    }

    /// A smaller candidate, of `instructions` (and `bytes`): a step, told.
    fn step(&mut self, instructions: u64, bytes: Option<u64>) {
        let step = Step {
            at: self.start.elapsed(),
            instructions,
            bytes,
            tests: self.tests,
        };
        self.steps.push(step);
        (self.progress)(&step);
    }

    /// The reduction, by `tool`, to `module` (from `source`, for C).
    fn reduction(
        self,
        module: Module,
        source: Option<String>,
        tool: Tool,
        stopped: Option<String>,
    ) -> Reduction {
        Reduction {
            module,
            source,
            tool,
            instructions_before: self.steps[0].instructions,
            steps: self.steps,
            tests: self.tests,
            interesting: self.interesting,
            elapsed: self.start.elapsed(),
            stopped,
        }
    }
}

/// Reduces `module` with `llvm-reduce-19` while `property` holds (checked
/// on the module first: reducing what does not have the property is an
/// error). `progress` hears of each smaller interesting candidate.
pub fn reduce_ir(
    module: &Module,
    property: &Property,
    options: &Options,
    progress: &mut dyn FnMut(&Step),
) -> Result<Reduction> {
    if !property.holds(module)? {
        return Err(Error::Invalid(format!(
            "the module does not have the property to keep ({}): nothing to reduce",
            property.describe(&module.name())
        )));
    }
    let temp = work_dir()?;
    let dir = temp.path().to_path_buf();
    let (name, source_name) = (module.name(), module.source_file_name());
    let result = (|| {
        let oracle = Oracle::new(&dir, None)?;
        let input = dir.join("input.ll");
        std::fs::write(&input, module.print()).map_err(|e| Error::io(input.display(), e))?;
        let mut course = Course::begin(module.instruction_count(), None, progress);
        let mut best = module.print();
        let jobs = options.jobs();
        let command = llvm_reduce(&oracle, jobs, &dir.join("reduced.ll"), &input);
        // Named as the input (a program's argv[0] is its name).
        let load = |path: &Path| {
            crate::module::Source::file(path)
                .map(|src| src.named(&name))
                .and_then(|src| Module::load(&[src]))
        };
        let decide = |path: &Path| match load(path) {
            Ok(candidate) => property.holds(&candidate),
            Err(_) => Ok(false),
        };
        let stopped = converse(
            command,
            &oracle,
            options.budget,
            jobs,
            &decide,
            &mut |path, yes| {
                course.tested(yes);
                if !yes {
                    return;
                }
                let Ok(candidate) = load(path) else { return };
                let (n, text) = (candidate.instruction_count(), candidate.print());
                let last = course.last();
                // Smaller, or as small with less of the rest (globals,
                // attributes, metadata).
                if n < last || (n == last && text.len() < best.len()) {
                    best = text;
                }
                if n < last {
                    course.step(n, None);
                }
            },
        )?;
        let mut reduced = Module::from_ir(&best, &name)?;
        reduced.set_source_file_name(&source_name);
        Ok(course.reduction(reduced, None, Tool::LlvmReduce, stopped))
    })();
    drop(temp);
    result
}

/// The `llvm-reduce-19` command reducing `input` into `output` with
/// `jobs` jobs, asking `oracle` whether a candidate is interesting.
fn llvm_reduce(oracle: &Oracle, jobs: usize, output: &Path, input: &Path) -> std::process::Command {
    let mut command = std::process::Command::new("llvm-reduce-19");
    // Its own temporary files (each candidate, written as text and as
    // bitcode) go in the reduction's folder, removed with it: stopped at
    // the budget or by an interrupt, llvm-reduce leaves them behind.
    if let Some(dir) = output.parent() {
        command.env("TMPDIR", dir);
    }
    command
        .arg(format!("--test={}", oracle.script.display()))
        // Its ir-passes delta runs instcombine: spelled as LLVM's own
        // pipelines do, so that an input instcombine does not bring to a
        // fixpoint (a finding of its own) does not abort llvm-reduce
        // itself.
        .arg("--ir-passes=function(sroa,instcombine<no-verify-fixpoint>,gvn,simplifycfg,infer-address-spaces)")
        .arg("-j")
        .arg(jobs.to_string())
        .arg("-o")
        .arg(output)
        .arg(input);
    command
}

/// Reduces the C source `text` (named `name`, compiled as `:load` compiles
/// C, plus `options.cflags` and [`CANDIDATE_CFLAGS`]) with `cvise` while
/// the module it compiles to has `property`.
pub fn reduce_c(
    text: &str,
    name: &str,
    property: &Property,
    options: &Options,
    progress: &mut dyn FnMut(&Step),
) -> Result<Reduction> {
    let compile = |source: &str| compile_candidate(source, name, options);
    let module = compile(text).map_err(|e| {
        Error::Invalid(format!(
            "{name} does not compile with the flags reduction keeps it to ({}): {e}",
            CANDIDATE_CFLAGS.join(" ")
        ))
    })?;
    if !property.holds(&module)? {
        return Err(Error::Invalid(format!(
            "{name} does not have the property to keep ({}): nothing to reduce",
            property.describe(name)
        )));
    }
    let temp = work_dir()?;
    let dir = temp.path().to_path_buf();
    let result = (|| {
        let file = std::path::Path::new(name)
            .file_name()
            .map_or_else(|| "program.c".into(), |f| f.to_string_lossy().into_owned());
        let oracle = Oracle::new(&dir, Some(&file))?;
        std::fs::write(dir.join(&file), text).map_err(|e| Error::io(file.as_str(), e))?;
        let bytes = Some(text.len() as u64);
        let mut course = Course::begin(module.instruction_count(), bytes, progress);
        let mut best = text.to_string();
        let jobs = options.jobs();
        let decide = |path: &Path| -> Result<bool> {
            let Ok(source) = std::fs::read_to_string(path) else {
                return Ok(false);
            };
            match compile(&source) {
                Ok(candidate) => property.holds(&candidate),
                Err(_) => Ok(false),
            }
        };
        let stopped = converse(
            cvise(&oracle, jobs, &file),
            &oracle,
            options.budget,
            jobs,
            &decide,
            &mut |path, yes| {
                course.tested(yes);
                if !yes {
                    return;
                }
                let Ok(source) = std::fs::read_to_string(path) else {
                    return;
                };
                if source.len() < best.len() {
                    let Ok(candidate) = compile(&source) else {
                        return;
                    };
                    best = source;
                    course.step(candidate.instruction_count(), Some(best.len() as u64));
                }
            },
        )?;
        let module = compile(&best)?;
        Ok(course.reduction(module, Some(best), Tool::Cvise, stopped))
    })();
    drop(temp);
    result
}

/// C source `source` (named `name`) compiled as a candidate: as `:load`
/// compiles C, plus `options.cflags` and [`CANDIDATE_CFLAGS`], its
/// warnings dropped.
fn compile_candidate(source: &str, name: &str, options: &Options) -> Result<Module> {
    let mut flags: Vec<String> = options.cflags.clone();
    flags.extend(CANDIDATE_CFLAGS.iter().map(|s| s.to_string()));
    let src = crate::module::Source::text(crate::module::Lang::C, source, name)
        .clang_args(flags)
        .level(options.level);
    // A candidate's warnings are cvise's business, not the reader's.
    crate::console::capture_warnings(|| Module::load(&[src])).0
}

/// The `cvise` command reducing `file` (in the oracle's folder) with
/// `jobs` jobs, asking `oracle` whether a candidate is interesting.
fn cvise(oracle: &Oracle, jobs: usize, file: &str) -> std::process::Command {
    let mut command = std::process::Command::new("cvise");
    command
        .args([
            "--n",
            &jobs.to_string(),
            "--timeout",
            "60",
            "--no-cache",
            "--tidy",
        ])
        .arg(&oracle.script)
        .arg(file);
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> Result<Settings> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::parse(&pairs, crate::module::Level::parse("O1").unwrap())
    }

    fn message(e: Error) -> String {
        match e {
            Error::Command {
                command, message, ..
            } => {
                assert_eq!(command, "reduce");
                message
            }
            e => panic!("not an error of :reduce's: {e:?}"),
        }
    }

    #[test]
    fn settings_are_read_in_order_and_checked() {
        let s = settings(&[]).unwrap();
        assert_eq!(s.options.level, crate::module::Level::parse("O1").unwrap());
        assert_eq!((s.source, s.replace, s.options.budget), (None, false, None));
        let s = settings(&[
            ("with", "cvise"),
            ("source", "a.c"),
            ("cflags", "-DX,,-g"),
            ("level", "Oz"),
            ("jobs", "3"),
            ("budget", "1.5"),
            ("replace", "yes"),
        ])
        .unwrap();
        assert_eq!(s.source.as_deref(), Some("a.c"));
        assert_eq!(s.options.cflags, ["-DX", "-g"]);
        assert_eq!(s.options.level, crate::module::Level::parse("Oz").unwrap());
        assert_eq!(s.options.jobs, 3);
        assert_eq!(s.options.budget, Some(Duration::from_millis(1500)));
        assert!(s.replace);
        // The last word wins: llvm-reduce again, so source= is refused.
        let e = settings(&[
            ("with", "cvise"),
            ("source", "a.c"),
            ("with", "llvm-reduce"),
        ]);
        assert_eq!(
            message(e.unwrap_err()),
            "source= is for with=cvise (llvm-reduce reduces the module itself)"
        );
        assert!(message(settings(&[("with", "cvise")]).unwrap_err())
            .starts_with("with=cvise reduces C"));
        for (k, v, said) in [
            ("budget", "0", "budget expects seconds above 0"),
            ("budget", "86401", "budget expects seconds above 0"),
            ("jobs", "65", "jobs expects how many candidates"),
            ("replace", "maybe", "replace expects yes or no, got 'maybe'"),
            ("level", "O9", "level expects O0, O1, O2, O3, Os or Oz"),
            (
                "with",
                "creduce",
                "with expects llvm-reduce or cvise, got 'creduce'",
            ),
        ] {
            let m = message(settings(&[(k, v)]).unwrap_err());
            assert!(m.starts_with(said), "{k}={v}: {m}");
        }
        let Err(Error::Command {
            message,
            suggestions,
            ..
        }) = settings(&[("budgte", "3")])
        else {
            panic!("an unknown setting was taken")
        };
        assert_eq!(message, "unknown setting 'budgte'");
        assert!(suggestions.iter().any(|s| s == "budget"), "{suggestions:?}");
    }

    #[test]
    fn a_reproducer_folder_is_the_same_jobs_again_and_no_one_elses() {
        let temp = crate::folder::private_temp_dir("passlab-claim").unwrap();
        let dir = temp.path().join("repro");
        let m = Module::from_ir("define void @f() {\n  ret void\n}\n", "f.ll").unwrap();
        let line = " fails gvn --out repro ";
        drop(claim_folder(&dir, line, &m, false).unwrap());
        // The same line (spaces aside) on the same module: the same job.
        drop(claim_folder(&dir, "fails gvn --out repro", &m, false).unwrap());
        // Another line, or the same line on another module: refused.
        let e = claim_folder(&dir, "fails sroa --out repro", &m, false).unwrap_err();
        assert!(
            matches!(e, Error::Command { ref command, .. } if command == "reduce"),
            "{e:?}"
        );
        let other = Module::from_ir("define void @g() {\n  ret void\n}\n", "f.ll").unwrap();
        assert!(claim_folder(&dir, line, &other, false).is_err());
        // Unless replace=yes.
        assert!(claim_folder(&dir, line, &other, true).is_ok());
    }

    /// llvm-reduce's own temporary files (left behind when it is stopped
    /// at the budget) are written in the reduction's folder, which goes
    /// with the reduction, not in the system's.
    #[test]
    fn llvm_reduce_keeps_its_temporary_files_in_the_work_folder() {
        let work = work_dir().unwrap();
        let oracle = Oracle::new(work.path(), None).unwrap();
        let command = llvm_reduce(
            &oracle,
            1,
            &work.path().join("reduced.ll"),
            &work.path().join("input.ll"),
        );
        let tmpdir = command
            .get_envs()
            .find(|(k, _)| *k == "TMPDIR")
            .and_then(|(_, v)| v);
        assert_eq!(tmpdir, Some(work.path().as_os_str()));
    }

    #[test]
    fn a_reductions_work_folder_is_private_and_new() {
        use std::os::unix::fs::PermissionsExt;
        let (a, b) = (work_dir().unwrap(), work_dir().unwrap());
        assert_ne!(a.path(), b.path());
        for d in [&a, &b] {
            let mode = std::fs::metadata(d.path()).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", d.path().display());
            let name = d.path().file_name().unwrap().to_string_lossy().into_owned();
            // A random name: nothing of this process's to guess it by.
            assert!(!name.contains(&std::process::id().to_string()), "{name}");
        }
    }

    /// Runs the oracle's script (with `arg`, in `dir`), reads its request,
    /// answers `yes` and gives the candidate's path and the script's exit
    /// code.
    fn ask(oracle: &Oracle, dir: &Path, arg: Option<&str>, yes: bool) -> (PathBuf, i32) {
        use std::io::Read;
        let mut script = std::process::Command::new("sh");
        script.arg(&oracle.script).current_dir(dir);
        if let Some(a) = arg {
            script.arg(a);
        }
        let mut script = script.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut line = Vec::new();
        while !line.contains(&b'\n') {
            assert!(Instant::now() < deadline, "no request from the script");
            let mut buf = [0u8; 512];
            match (&oracle.requests).read(&mut buf) {
                Ok(n) => line.extend_from_slice(&buf[..n]),
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        let line = String::from_utf8(line).unwrap();
        let (path, answer) = line.trim_end().split_once('\t').unwrap();
        Oracle::answer(Path::new(answer), yes);
        let code = script.wait().unwrap().code().unwrap();
        assert!(!Path::new(answer).exists(), "the answer's FIFO is removed");
        (PathBuf::from(path), code)
    }

    #[test]
    fn the_script_sends_any_file_name_in_any_folder_and_exits_with_the_answer() {
        let dir = std::env::temp_dir().join(format!(
            "passlab-oracle-{} it's $HOME \"here\"",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        // cvise: the candidate is the file beside the script's working folder.
        let name = "a'b $x\"c.c";
        let oracle = Oracle::new(&dir, Some(name)).unwrap();
        assert_eq!(ask(&oracle, &dir, None, true), (dir.join(name), 0));
        assert_eq!(ask(&oracle, &dir, None, false), (dir.join(name), 1));
        drop(oracle);
        std::fs::remove_file(dir.join("requests")).unwrap();
        // llvm-reduce: the candidate's path, relative or absolute.
        let oracle = Oracle::new(&dir, None).unwrap();
        assert_eq!(
            ask(&oracle, &dir, Some("c $1.ll"), true),
            (dir.join("c $1.ll"), 0)
        );
        assert_eq!(
            ask(&oracle, &dir, Some("/x/y z.ll"), false),
            (PathBuf::from("/x/y z.ll"), 1)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
