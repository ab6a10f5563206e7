//! Hunting compiler bugs: programs (Debian's `csmith`, seeded, or a corpus
//! of C files), each with its oracle (built by `clang-19 -O0` and run, or
//! its unoptimized module run through the JIT), through pipelines (named
//! ones and random orderings of `:tune`'s pool), each run classified:
//! `same`, `miscompile` (the program prints something else, or crashes),
//! `crash`, `fatal error`, `verifier failure` (after the pass that broke
//! the IR), `timeout`, `failed`. A miscompile is bisected to the pass (and
//! function) that changed the output; every finding gets a signature
//! (kind, pass, message with names and numbers left out) and the first
//! program of each signature is reduced ([`crate::reduce`]) into a
//! reproducer folder.
//!
//! Like sweeps, a hunt is described by a TOML file ([`HuntSpec::load`]) and
//! runs as shards (Slurm job arrays, Kubernetes Indexed Jobs: shard `I/N`
//! takes every N-th program); each writes JSON lines to
//! `OUT/hunt-I-of-N.jsonl` (`check` per program and pipeline, `program`
//! when a program is done, `finding` per reduced finding), and a shard run
//! again resumes after the last complete program. [`merge`] checks that
//! every program was checked once and reports the findings per pass.
//!
//! Within a shard, programs are checked by `jobs` forked workers at once
//! (a crash in a pass costs the worker, which the shard replaces); the
//! findings are reduced afterwards, one after the other, in this process
//! (each candidate's test runs in a child of its own).

mod merge;
mod spec;

pub use merge::{merge, write_report, Finding, HuntReport};
pub use spec::{HuntProgram, HuntSpec, Oracle, Source, CSMITH_ARGS};

use crate::folder::{Access, OwnedDir, Owner};
use crate::jit::{Codegen, ExecResult, Jit, Program, Subject};
use crate::module::{Lang, Module};
use crate::reduce::{self, Ending, Property};
use crate::{pipeline, Error, PassContext, Result};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const CSMITH_INCLUDE: &str = "/usr/include/csmith";

/// A program made ready: its C source, its module and the right output.
struct Prepared {
    source: String,
    module: Module,
    oracle: ExecResult,
}

/// How a program's source is compiled (for the module and for cvise).
fn cflags(spec: &HuntSpec) -> Vec<String> {
    let mut f = vec![format!("-I{CSMITH_INCLUDE}")];
    f.extend(spec.cflags.iter().cloned());
    f
}

/// Runs `cmd` for at most `limit`; its status (None: it was stopped), its
/// standard output and error.
fn run_limited(
    cmd: &mut std::process::Command,
    limit: Duration,
) -> Result<(Option<std::process::ExitStatus>, String, String)> {
    // Its output in files of a private folder of this call's (a pipe
    // could fill up while it runs).
    let dir = crate::folder::private_temp_dir("passlab-run-")?;
    let (out_path, err_path) = (dir.path().join("out"), dir.path().join("err"));
    let out = std::fs::File::create(&out_path).map_err(|e| Error::io(out_path.display(), e))?;
    let err = std::fs::File::create(&err_path).map_err(|e| Error::io(err_path.display(), e))?;
    let program = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| Error::Tool {
            tool: program,
            message: format!("cannot start it: {e}"),
        })?;
    let start = Instant::now();
    let status = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break Some(s);
        }
        if start.elapsed() > limit || crate::interrupt::requested() {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let (o, e) = (read(&out_path), read(&err_path));
    Ok((status, o, e))
}

/// The C source of `p`.
fn source_of(spec: &HuntSpec, p: &HuntProgram) -> std::result::Result<String, String> {
    match (&spec.source, p.seed, &p.file) {
        (spec::Source::Csmith { args, .. }, Some(seed), _) => {
            let mut cmd = std::process::Command::new("csmith");
            // Csmith writes platform.info where it runs: in a private
            // folder of its own, not the user's (nor a shared /tmp's).
            let temp =
                crate::folder::private_temp_dir("passlab-csmith-").map_err(|e| e.to_string())?;
            cmd.arg("--seed")
                .arg(seed.to_string())
                .args(args)
                .current_dir(temp.path());
            match run_limited(&mut cmd, Duration::from_secs(60)) {
                Ok((Some(s), out, _)) if s.success() && !out.is_empty() => Ok(out),
                Ok((_, _, err)) => Err(format!("csmith --seed {seed} failed: {}", err.trim())),
                Err(e) => Err(e.to_string()),
            }
        }
        (_, _, Some(f)) => std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display())),
        _ => Err("a program with neither a seed nor a file".into()),
    }
}

/// The program made ready, or why it is skipped (the oracle fails or
/// takes too long: Csmith's loops can run for minutes).
fn prepare(spec: &HuntSpec, p: &HuntProgram) -> Result<std::result::Result<Prepared, String>> {
    let source = match source_of(spec, p) {
        Ok(s) => s,
        Err(why) => return Ok(Err(why)),
    };
    let file = format!("{}.c", p.name.trim_end_matches(".c"));
    let mut flags = cflags(spec);
    flags.push("-w".into());
    let src = crate::module::Source::text(Lang::C, &source, &file).clang_args(flags.clone());
    let module = match crate::console::capture_warnings(|| Module::load(&[src])).0 {
        Ok(m) => m,
        Err(e) => return Ok(Err(format!("does not compile: {e}"))),
    };
    let oracle = match spec.oracle {
        Oracle::Native => {
            // A private folder made now (mode 0700, a random name): the
            // binary run is the one built here, never one another user
            // put in a folder of a name they could guess.
            let temp = crate::folder::private_temp_dir("passlab-hunt-")?;
            let dir = temp.path();
            let c = dir.join(&file);
            std::fs::write(&c, &source).map_err(|e| Error::io(c.display(), e))?;
            let exe = dir.join("native");
            let built = run_limited(
                std::process::Command::new("clang-19")
                    .arg("-O0")
                    .args(&flags)
                    .arg(&c)
                    .arg("-o")
                    .arg(&exe),
                Duration::from_secs(120),
            )?;
            let result = if !matches!(built.0, Some(s) if s.success()) {
                Err(format!("clang-19 -O0 failed: {}", built.2.trim()))
            } else {
                let start = Instant::now();
                match run_limited(
                    std::process::Command::new(&exe).arg0_as(&file),
                    spec.timeout,
                )? {
                    (None, _, _) => Err(format!(
                        "the native build ran longer than {} s",
                        spec.timeout.as_secs()
                    )),
                    (Some(status), stdout, stderr) => Ok(ExecResult {
                        status: status.code().unwrap_or(128) & 0xff,
                        stdout,
                        stderr,
                        elapsed: start.elapsed(),
                    }),
                }
            };
            drop(temp);
            match result {
                Ok(r) => r,
                Err(why) => return Ok(Err(why)),
            }
        }
        Oracle::JitO0 => {
            let jit = Jit::with_codegen(&module, &Codegen::from_context(&PassContext::current())?)?
                .with_timeout(spec.timeout);
            match jit.exec(&Program::default()) {
                Ok(r) => r,
                Err(e) => return Ok(Err(format!("the unoptimized program fails: {e}"))),
            }
        }
    };
    Ok(Ok(Prepared {
        source,
        module,
        oracle,
    }))
}

/// `argv[0]` as the program's name, for the native oracle (the JIT's is
/// the module's name).
trait Arg0 {
    fn arg0_as(&mut self, name: &str) -> &mut Self;
}

impl Arg0 for std::process::Command {
    fn arg0_as(&mut self, name: &str) -> &mut Self {
        use std::os::unix::process::CommandExt;
        self.arg0(name)
    }
}

/// A program's result compared by what it did.
fn same(a: &ExecResult, b: &ExecResult) -> bool {
    a.status == b.status && a.stdout == b.stdout && a.stderr == b.stderr
}

/// One program through one pipeline: the check record.
fn check(
    spec: &HuntSpec,
    p: &HuntProgram,
    prepared: &Prepared,
    pipeline_text: &str,
) -> Result<Json> {
    let c = Check {
        spec,
        p,
        prepared,
        pipeline: pipeline_text,
    };
    let pass = pipeline::parse(pipeline_text)?;
    let mut m = prepared.module.copy();
    if pass.apply(&mut m).is_err() {
        // Which pass, and how: again in a child, every pass verified.
        let ending = reduce::run_isolated(&prepared.module, pipeline_text, true, spec.timeout)?;
        return Ok(c.failed(&ending));
    }
    let codegen = Codegen::from_context(&PassContext::current())?;
    let jit = match Jit::with_codegen(&m, &codegen) {
        Ok(j) => j.with_timeout(spec.timeout),
        Err(e) => {
            let mut r = c.record("failed");
            r["detail"] = json!(format!("code generation: {e}"));
            r["signature"] = json!(format!(
                "failed in code generation: {}",
                reduce::mask_values(e.to_string().lines().next().unwrap_or(""))
            ));
            return Ok(r);
        }
    };
    let run = jit.exec(&Program::default());
    let outcome = match run {
        Ok(r) if same(&r, &prepared.oracle) => return Ok(c.record("same")),
        Ok(r) => format!(
            "exit {}, {:?}",
            r.status,
            r.stdout.lines().last().unwrap_or("")
        ),
        Err(e) if e.to_string().contains("did not finish within") => {
            let mut r = c.record("timeout");
            r["detail"] = json!(e.to_string());
            r["signature"] = json!(format!("timeout in {pipeline_text}"));
            return Ok(r);
        }
        Err(e) => e.to_string().lines().next().unwrap_or("").to_string(),
    };
    Ok(c.miscompile(pass.as_ref(), &codegen, &outcome))
}

/// One program through one pipeline, being checked.
struct Check<'c> {
    spec: &'c HuntSpec,
    p: &'c HuntProgram,
    prepared: &'c Prepared,
    pipeline: &'c str,
}

impl Check<'_> {
    /// The check record with `verdict`.
    fn record(&self, verdict: &str) -> Json {
        json!({"kind": "check", "program": self.p.name, "seed": self.p.seed, "pipeline": self.pipeline, "verdict": verdict})
    }

    /// The record of a pipeline that did not finish: how, in which pass.
    fn failed(&self, ending: &Ending) -> Json {
        let mut r = self.record(match ending {
            Ending::Crash { .. } => "crash",
            Ending::Fatal { .. } => "fatal error",
            Ending::Invalid { .. } => "verifier failure",
            Ending::Timeout { .. } => "timeout",
            _ => "failed",
        });
        r["pass"] = json!(ending.pass());
        r["signature"] = json!(ending.signature());
        r["detail"] = json!(ending.describe());
        r
    }

    /// The record of a miscompile (the program ended with `outcome`): the
    /// first optional pass of `pass` after which the output is not the
    /// oracle's.
    fn miscompile(&self, pass: &dyn crate::pass::Pass, codegen: &Codegen, outcome: &str) -> Json {
        let (spec, pipeline_text) = (self.spec, self.pipeline);
        let oracle = &self.prepared.oracle;
        let found = pipeline::bisect_search(&self.prepared.module, pass, |candidate| {
            let jit = Jit::with_codegen(candidate, codegen)?.with_timeout(spec.timeout);
            Ok(match jit.exec(&Program::default()) {
                Ok(r) => !same(&r, oracle),
                Err(_) => true,
            })
        });
        let mut r = self.record("miscompile");
        r["detail"] = json!(format!(
            "prints {:?} (exit {}) {}, {outcome} after {pipeline_text}",
            oracle.stdout.lines().last().unwrap_or(""),
            oracle.status,
            match spec.oracle {
                Oracle::Native => "natively",
                Oracle::JitO0 => "at -O0 through the JIT",
            }
        ));
        match found {
            Ok(f) => {
                let function = f.entry.target.split(':').next().unwrap_or("").to_string();
                r["pass"] = json!(f.entry.pass);
                r["function"] = json!(function);
                r["signature"] = json!(format!("miscompile in {}", f.entry.pass));
            }
            Err(e) => {
                // No single pass: the code generator, or the pipeline as a
                // whole (opt-bisect does not reach every pass).
                r["signature"] = json!(format!(
                    "miscompile in {pipeline_text} (not bisected: {})",
                    e.to_string().lines().next().unwrap_or("")
                ));
            }
        }
        r
    }
}

/// Loads the spec's plugins into this process (once each).
fn load_plugins(spec: &HuntSpec) -> Result<()> {
    for p in &spec.plugins {
        match crate::registry::load_plugin(p) {
            Ok(_) => {}
            Err(e) if e.to_string().contains("is loaded already") => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// What a shard tells as it goes: a line of text.
pub type HuntProgress<'p> = dyn FnMut(&str) + 'p;

/// What one shard did.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct HuntSummary {
    pub file: PathBuf,
    pub programs: usize,
    /// Programs done before (a shard run again).
    pub skipped: usize,
    pub checks: usize,
    /// Checks by verdict.
    pub verdicts: BTreeMap<String, usize>,
    /// Findings reduced now.
    pub reduced: usize,
    pub elapsed: Duration,
}

/// Checks `programs` (from the `first`-th pipeline of the first one) in a
/// forked worker that writes each record as a line to `out`; the worker
/// says `{"start": …}` before each check, so that its death names the
/// check it died in.
fn worker(spec: &HuntSpec, programs: &[HuntProgram], first: usize, out: i32) -> i32 {
    let say = |v: &Json| {
        let mut line = v.to_string();
        line.push('\n');
        crate::child::write_all(out, line.as_bytes());
    };
    for (k, p) in programs.iter().enumerate() {
        if crate::interrupt::requested() {
            return 0;
        }
        let prepared = match prepare(spec, p) {
            Ok(Ok(prepared)) => prepared,
            Ok(Err(why)) => {
                say(&json!({"kind": "program", "program": p.name, "seed": p.seed, "skipped": why}));
                continue;
            }
            Err(e) => {
                say(
                    &json!({"kind": "program", "program": p.name, "seed": p.seed, "skipped": e.to_string()}),
                );
                continue;
            }
        };
        let pipelines = spec.pipelines_for(p);
        let from = if k == 0 { first } else { 0 };
        for (i, text) in pipelines.iter().enumerate().skip(from) {
            say(&json!({"start": p.name, "pipeline": i}));
            let record = check(spec, p, &prepared, text).unwrap_or_else(|e| {
                json!({"kind": "check", "program": p.name, "seed": p.seed, "pipeline": text,
                       "verdict": "failed", "detail": e.to_string(),
                       "signature": format!("failed: {}", reduce::mask_values(e.to_string().lines().next().unwrap_or("")))})
            });
            say(&record);
        }
        say(
            &json!({"kind": "program", "program": p.name, "seed": p.seed, "pipelines": pipelines.len()}),
        );
    }
    0
}

/// One worker's share of the programs, and where it is.
struct Stripe {
    programs: Vec<HuntProgram>,
    /// The next program and pipeline to check.
    at: (usize, usize),
    child: Option<crate::child::Child>,
    pending: Vec<u8>,
    /// The check in flight.
    started: Option<(String, usize)>,
}

impl HuntSummary {
    /// Counts a check and its verdict.
    fn count(&mut self, verdict: &Json) {
        self.checks += 1;
        *self
            .verdicts
            .entry(verdict.as_str().unwrap_or("").to_string())
            .or_default() += 1;
    }
}

impl Stripe {
    /// `todo` dealt round-robin into `jobs` stripes.
    fn deal(todo: &[HuntProgram], jobs: usize) -> Vec<Stripe> {
        (0..jobs)
            .map(|j| Stripe {
                programs: todo.iter().skip(j).step_by(jobs).cloned().collect(),
                at: (0, 0),
                child: None,
                pending: Vec::new(),
                started: None,
            })
            .collect()
    }

    /// Starts a worker on the programs left if none runs, and takes what
    /// the worker said (through `buf`); false when no worker runs.
    fn step(
        &mut self,
        spec: &HuntSpec,
        file: &mut crate::batch::Shard,
        summary: &mut HuntSummary,
        progress: &mut HuntProgress,
        buf: &mut [u8],
    ) -> Result<bool> {
        if self.child.is_none() && self.at.0 < self.programs.len() {
            let rest = self.programs[self.at.0..].to_vec();
            let first = self.at.1;
            self.child = Some(
                crate::child::spawn(|fd| worker(spec, &rest, first, fd)).map_err(Error::Invalid)?,
            );
        }
        let Some((said_fd, result_fd)) = self.child.as_ref().map(|c| (c.said, c.result)) else {
            return Ok(false);
        };
        let mut said = Vec::new();
        crate::child::drain(said_fd, &mut said, buf);
        crate::child::drain(result_fd, &mut self.pending, buf);
        self.take_lines(file, summary, progress)?;
        if let Some(status) = self.child.as_ref().and_then(|c| c.try_wait()) {
            crate::child::drain(result_fd, &mut self.pending, buf);
            if let Some(c) = self.child.take() {
                c.close();
            }
            if !crate::interrupt::requested() {
                self.worker_ended(spec, status, file, summary)?;
            }
        }
        Ok(true)
    }

    /// The whole lines its worker wrote: a check starting (kept, in case
    /// the worker dies in it), or a record, appended to the shard's file
    /// (a program's telling `progress`).
    fn take_lines(
        &mut self,
        file: &mut crate::batch::Shard,
        summary: &mut HuntSummary,
        progress: &mut HuntProgress,
    ) -> Result<()> {
        while let Some(nl) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=nl).collect();
            let Ok(v) = serde_json::from_slice::<Json>(&line) else {
                continue;
            };
            if let Some(name) = v["start"].as_str() {
                self.started = Some((
                    name.to_string(),
                    v["pipeline"].as_u64().unwrap_or(0) as usize,
                ));
                continue;
            }
            file.append(&v)?;
            match v["kind"].as_str() {
                Some("check") => {
                    summary.count(&v["verdict"]);
                    self.at.1 += 1;
                    self.started = None;
                }
                Some("program") => {
                    self.at = (self.at.0 + 1, 0);
                    let verdict = match v["skipped"].as_str() {
                        Some(why) => format!("skipped: {why}"),
                        None => "checked".into(),
                    };
                    progress(&format!(
                        "{}: {verdict}",
                        v["program"].as_str().unwrap_or("")
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Its worker ended (`status`): if in a check, that check crashed
    /// (found again in a child of this process, to name the pass) and the
    /// worker goes on after it; if between checks and not by exiting, the
    /// program is skipped.
    fn worker_ended(
        &mut self,
        spec: &HuntSpec,
        status: i32,
        file: &mut crate::batch::Shard,
        summary: &mut HuntSummary,
    ) -> Result<()> {
        if let Some((name, i)) = self.started.take() {
            let p = self.programs[self.at.0].clone();
            let text = spec.pipelines_for(&p).get(i).cloned().unwrap_or_default();
            let ending = match prepare(spec, &p)? {
                Ok(prepared) => reduce::run_isolated(&prepared.module, &text, true, spec.timeout)?,
                Err(_) => Ending::Crash {
                    pass: text.clone(),
                    signal: crate::child::how_it_ended(status),
                },
            };
            let record = json!({"kind": "check", "program": name, "seed": p.seed, "pipeline": text,
                "verdict": match ending { Ending::Fatal { .. } => "fatal error", Ending::Invalid { .. } => "verifier failure",
                                          Ending::Timeout { .. } => "timeout", _ => "crash" },
                "pass": ending.pass(), "signature": ending.signature(), "detail": ending.describe()});
            file.append(&record)?;
            summary.count(&record["verdict"]);
            self.at.1 = i + 1;
            if self.at.1 >= spec.pipelines_for(&p).len() {
                file.append(
                    &json!({"kind": "program", "program": p.name, "seed": p.seed,
                    "pipelines": spec.pipelines_for(&p).len()}),
                )?;
                self.at = (self.at.0 + 1, 0);
            }
        } else if self.at.0 < self.programs.len() && !libc::WIFEXITED(status) {
            // Died between checks: the program is skipped.
            let p = self.programs[self.at.0].clone();
            file.append(
                &json!({"kind": "program", "program": p.name, "seed": p.seed,
                "skipped": format!("the worker {}", crate::child::how_it_ended(status))}),
            )?;
            self.at = (self.at.0 + 1, 0);
        }
        Ok(())
    }
}

/// Runs shard `index` of `count` of `spec` into `out` (a folder the
/// hunt's job holds: [`HuntSpec::job`]'s `claim`), resuming what is there; `progress`
/// hears a line per program and per finding.
pub fn run_shard(
    spec: &HuntSpec,
    out: &OwnedDir,
    (index, count): (usize, usize),
    progress: &mut HuntProgress,
) -> Result<HuntSummary> {
    let start = Instant::now();
    load_plugins(spec)?;
    let (mut file, records) = spec.job().open_shard(out, (index, count))?;
    let file_path = file.path().to_path_buf();
    let mine = spec.assign(index, count);
    let done: std::collections::HashSet<String> = records
        .iter()
        .filter(|r| r["kind"] == "program")
        .filter_map(|r| r["program"].as_str().map(str::to_string))
        .collect();
    // A program half checked (a killed shard) is checked again whole: its
    // checks so far are dropped from what counts (merge takes the last).
    let todo: Vec<HuntProgram> = mine
        .iter()
        .filter(|p| !done.contains(&p.name))
        .cloned()
        .collect();
    let mut summary = HuntSummary {
        file: file_path.clone(),
        programs: mine.len(),
        skipped: mine.len() - todo.len(),
        ..HuntSummary::default()
    };
    let mut stripes = Stripe::deal(&todo, spec.jobs.clamp(1, 64).min(todo.len().max(1)));
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let mut running = 0;
        for s in stripes.iter_mut() {
            if s.step(spec, &mut file, &mut summary, progress, &mut buf)? {
                running += 1;
            }
        }
        if crate::interrupt::requested() {
            for s in stripes.iter_mut() {
                if let Some(c) = s.child.take() {
                    c.kill();
                    c.close();
                }
            }
            return Err(Error::Interrupted {
                pass: format!("the hunt {} (programs checked so far are kept)", spec.name),
            });
        }
        if running == 0 {
            break;
        }
        // Wait for any worker to say something.
        let fds: Vec<i32> = stripes
            .iter()
            .filter_map(|s| s.child.as_ref())
            .map(|c| c.result)
            .collect();
        crate::child::wait_readable(&fds, 20);
    }
    summary.reduced = triage(spec, out, (index, count), &mut file, progress)?;
    summary.elapsed = start.elapsed();
    Ok(summary)
}

/// Runs a whole hunt here, as `:hunt` does: claims `dir` for `owner` alone
/// (`replace` as [`OwnedDir::claim`] takes it), starts afresh there
/// (removing only what it wrote before) unless `resume`, runs it as one
/// shard telling `progress` how far it is, and merges its records. Returns
/// the folder, the shard's summary and the report.
pub fn run_here(
    spec: &HuntSpec,
    dir: &Path,
    owner: &Owner,
    resume: bool,
    replace: bool,
    progress: &mut dyn FnMut(&crate::jit::Progress),
) -> Result<(OwnedDir, HuntSummary, HuntReport)> {
    let dir =
        OwnedDir::claim(dir, owner, Access::Exclusive, replace, "replace=yes").map_err(|e| {
            Error::Command {
                command: "hunt".into(),
                message: e.to_string(),
                suggestions: vec![],
            }
        })?;
    if !resume {
        dir.remove_own()?;
    }
    let total = spec.programs().len();
    let mut done = 0usize;
    let summary = run_shard(spec, &dir, (0, 1), &mut |line: &str| {
        // A line per program; a finding's lines are not programs.
        if !line.starts_with("  ") && !line.starts_with("reducing") {
            done += 1;
        }
        progress(&crate::jit::Progress {
            done: done.min(total),
            total,
            stage: line.to_string(),
        });
    })?;
    progress(&crate::jit::Progress {
        done: total,
        total,
        stage: String::new(),
    });
    let report = merge(&[dir.path().to_path_buf()])?;
    Ok((dir, summary, report))
}

/// A finding's folder name: its signature, hashed.
pub fn finding_dir(signature: &str) -> String {
    format!("finding-{:016x}", crate::jit::fnv1a(signature.bytes()))
}

/// Reduces the first program of each signature found in this shard's
/// records that has no `finding` record yet (a shard run again does not
/// reduce again); returns how many it reduced.
fn triage(
    spec: &HuntSpec,
    out: &OwnedDir,
    (index, count): (usize, usize),
    file: &mut crate::batch::Shard,
    progress: &mut HuntProgress,
) -> Result<usize> {
    // Every shard's records in the folder, as far as they are written (the
    // others may still be running).
    let records = crate::batch::read_shards("hunt", &[out.path().to_path_buf()], false)?.records;
    let reduced: std::collections::HashSet<String> = records
        .iter()
        .filter(|r| r["kind"] == "finding")
        .filter_map(|r| r["signature"].as_str().map(str::to_string))
        .collect();
    let firsts = first_by_signature(spec, &records);
    let mut n = 0;
    for (sig, r) in firsts {
        if reduced.contains(&sig) || !spec.reduce {
            continue;
        }
        // Each shard reduces the findings of its own programs.
        let Some(p) = spec
            .programs()
            .into_iter()
            .find(|p| Some(p.name.as_str()) == r["program"].as_str())
        else {
            continue;
        };
        let mine = spec.assign(index, count);
        if !mine.iter().any(|q| q.name == p.name) {
            continue;
        }
        progress(&format!("reducing {sig} (found in {})", p.name));
        let record = match reduce_finding(spec, &p, &r, out) {
            Ok(mut rec) => {
                rec["signature"] = json!(sig);
                rec
            }
            Err(e @ Error::Interrupted { .. }) => return Err(e),
            Err(e) => {
                json!({"kind": "finding", "signature": sig, "program": p.name, "pipeline": r["pipeline"],
                             "error": e.to_string()})
            }
        };
        file.append(&record)?;
        progress(&format!(
            "  {}",
            record["summary"]
                .as_str()
                .or(record["error"].as_str())
                .unwrap_or("")
        ));
        n += 1;
    }
    Ok(n)
}

/// For each signature among `records`' checks that did not pass, the
/// check of the program that comes first in `spec`.
fn first_by_signature(spec: &HuntSpec, records: &[Json]) -> BTreeMap<String, Json> {
    let mut firsts: BTreeMap<String, Json> = BTreeMap::new();
    let order: BTreeMap<String, usize> = spec
        .programs()
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.clone(), i))
        .collect();
    for r in records
        .iter()
        .filter(|r| r["kind"] == "check" && r["verdict"] != "same")
    {
        let Some(sig) = r["signature"].as_str() else {
            continue;
        };
        let rank = |r: &Json| {
            order
                .get(r["program"].as_str().unwrap_or(""))
                .copied()
                .unwrap_or(usize::MAX)
        };
        match firsts.get(sig) {
            Some(old) if rank(old) <= rank(r) => {}
            _ => {
                firsts.insert(sig.to_string(), r.clone());
            }
        }
    }
    firsts
}

/// Reduces one finding and writes its reproducer.
fn reduce_finding(spec: &HuntSpec, p: &HuntProgram, check: &Json, out: &OwnedDir) -> Result<Json> {
    let prepared = match prepare(spec, p)? {
        Ok(prepared) => prepared,
        Err(why) => {
            return Err(Error::Invalid(format!(
                "{} cannot be made again: {why}",
                p.name
            )))
        }
    };
    let pipeline_text = check["pipeline"].as_str().unwrap_or("").to_string();
    let property = if check["verdict"] == "miscompile" {
        Property::differs(
            Subject::Exec(Program::default()),
            "no-op-module",
            &pipeline_text,
            &prepared.module,
        )?
    } else {
        let ending = reduce::run_isolated(&prepared.module, &pipeline_text, true, spec.timeout)?;
        if matches!(ending, Ending::Fine | Ending::Failed { .. }) {
            return Err(Error::Invalid(format!(
                "{pipeline_text} no longer fails on {}: {}",
                p.name,
                ending.describe()
            )));
        }
        Property::Fails {
            pipeline: pipeline_text.clone(),
            ending,
        }
    };
    let options = reduce::Options {
        budget: Some(spec.reduce_budget),
        cflags: cflags(spec),
        // (the IR is reduced, not the C; the programs' own hand-over)
        level: crate::module::Level::default(),
        jobs: spec.jobs,
    };
    let reduction = reduce::reduce_ir(&prepared.module, &property, &options, &mut |_| {})?;
    let sub = format!(
        "findings/{}",
        finding_dir(check["signature"].as_str().unwrap_or(""))
    );
    out.create_dir(&sub)?;
    // The program's source beside its reduction (named by its file name
    // alone: a program's name may be a path).
    let file = Path::new(&p.name)
        .file_name()
        .map_or_else(|| "program".into(), |f| f.to_string_lossy().into_owned());
    out.write(
        &format!("{sub}/{}.c", file.trim_end_matches(".c")),
        &prepared.source,
    )?;
    let repro = reduce::reproducer(out, &sub, &reduction, &property)?;
    Ok(json!({
        "kind": "finding",
        "program": p.name,
        "seed": p.seed,
        "pipeline": pipeline_text,
        "verdict": check["verdict"],
        "pass": check["pass"],
        "function": check["function"],
        "instructions_before": reduction.instructions_before,
        "instructions_after": reduction.instructions_after(),
        "reduce_seconds": reduction.elapsed.as_secs_f64(),
        "tests": reduction.tests,
        "reproducer": sub,
        "shows_bug_without_passlab": repro.with_llvm_tools && repro.shows_bug,
        "summary": reduction.summary(),
    }))
}
