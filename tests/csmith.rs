//! Differential testing with random programs: Csmith (Debian's `csmith`,
//! fixed seeds) writes C programs free of undefined behaviour that print a
//! checksum of their global state. Each is built and run natively
//! (`clang-19 -O0`), which gives the expected checksum, then loaded into a
//! session and its `main` called through the JIT at O0, after
//! `default<O3>` and after random orderings drawn from `:tune`'s default
//! pool (the orderings `:tune strategy=random seed=SEED` tries), each on a
//! `:copy`: every checksum must be the native one. Programs whose native
//! run fails or takes longer than `NATIVE_TIMEOUT` (Csmith's loops can run
//! for minutes) are skipped and counted. After each program the session
//! must still work and its first module be as it was.

mod common;

use passlab::session::{Item, Output, Session};
use passlab::tune::{Strategy, TuneSpec};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Csmith's seeds.
const SEEDS: std::ops::RangeInclusive<u64> = 1..=30;
/// Small programs that run in milliseconds (Csmith's defaults: 10
/// functions, blocks nested 5 deep).
const CSMITH_FLAGS: &[&str] = &["--max-funcs", "4", "--max-block-depth", "3"];
/// Random orderings per program.
const ORDERINGS: usize = 4;
/// Programs that must be compared for the test to mean something.
const MIN_COMPARED: usize = 24;
/// A native run that takes longer is skipped.
const NATIVE_TIMEOUT: Duration = Duration::from_secs(2);
const CSMITH_INCLUDE: &str = "/usr/include/csmith";

/// Runs `cmd` with its standard output in `out`; `None` when it took
/// longer than `limit` (it is then killed).
fn run_with_timeout(
    cmd: &mut Command,
    out: &Path,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let file = std::fs::File::create(out).unwrap();
    let mut child = cmd
        .stdout(file)
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `checksum = 1A2B3C4D` → `1A2B3C4D`.
fn checksum(stdout: &str) -> Option<String> {
    stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("checksum = "))
        .map(str::to_string)
}

/// A program Csmith wrote, and the checksum of its native run (or why it
/// was skipped).
struct Program {
    seed: u64,
    path: PathBuf,
    native: Result<String, String>,
}

fn csmith_command(seed: u64) -> String {
    format!("csmith --seed {seed} {}", CSMITH_FLAGS.join(" "))
}

fn generate(dir: &Path, seed: u64) -> Program {
    let path = dir.join(format!("csmith{seed}.c"));
    // Csmith writes platform.info where it runs.
    let out = Command::new("csmith")
        .current_dir(dir)
        .arg("--seed")
        .arg(seed.to_string())
        .args(CSMITH_FLAGS)
        .arg("-o")
        .arg(&path)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run csmith ({e}): bash scripts/passlab.sh setup installs \
                 Debian's csmith and libcsmith-dev"
            )
        });
    assert!(
        out.status.success(),
        "{} failed: {}",
        csmith_command(seed),
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = dir.join(format!("csmith{seed}"));
    let build = Command::new(Path::new(env!("PASSLAB_LLVM_BINDIR")).join("clang"))
        .args(["-O0", "-w", &format!("-I{CSMITH_INCLUDE}")])
        .arg(&path)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "the native build of {} failed: {}",
        csmith_command(seed),
        String::from_utf8_lossy(&build.stderr)
    );
    let stdout = dir.join(format!("csmith{seed}.out"));
    let native = match run_with_timeout(&mut Command::new(&exe), &stdout, NATIVE_TIMEOUT) {
        None => Err(format!(
            "its native run took longer than {} s",
            NATIVE_TIMEOUT.as_secs()
        )),
        Some(status) if !status.success() => Err(format!("its native run failed ({status})")),
        Some(_) => {
            let text = std::fs::read_to_string(&stdout).unwrap();
            checksum(&text).ok_or_else(|| format!("its native run printed no checksum: {text}"))
        }
    };
    Program { seed, path, native }
}

/// The pipelines a program runs under, as (label, `:run` argument; none
/// for O0): O0, `default<O3>`, and the first `ORDERINGS` orderings of
/// `:tune`'s random search with the program's seed.
fn pipelines(seed: u64) -> Vec<(String, Option<String>)> {
    let spec = TuneSpec {
        seed,
        ..TuneSpec::default()
    };
    let (_, mut search) = spec
        .phases()
        .into_iter()
        .find(|(_, s)| *s.strategy() == Strategy::Random)
        .expect("a random phase");
    let mut out = vec![
        ("O0".to_string(), None),
        ("O3".to_string(), Some("O3".to_string())),
    ];
    for i in 1..=ORDERINGS {
        let ordering = search.ask().expect("an ordering");
        search.tell(None);
        out.push((format!("random{i}"), Some(ordering.join(","))));
    }
    out
}

/// What `:call` printed on standard output.
fn stdout_of(o: &Output) -> String {
    o.items
        .iter()
        .filter_map(|i| match i {
            Item::Stream(s) => Some(s.as_str()),
            _ => None,
        })
        .collect()
}

/// The checksum `main` prints through the JIT in module `module`, or what
/// went wrong.
fn jit_checksum(s: &mut Session, module: &str) -> Result<String, String> {
    let o = s
        .execute(&format!(":use {module}\n:call main 1 argv"))
        .map_err(|e| format!("error: {e}"))?;
    let text = o.text();
    if !text.contains("main(1, argv) = 0") {
        return Err(format!("main did not return 0: {text}"));
    }
    checksum(&stdout_of(&o)).ok_or_else(|| format!("no checksum printed: {text}"))
}

#[test]
fn csmith_programs_agree_with_native_runs_at_o0_o3_and_random_orderings() {
    let started = Instant::now();
    let dir = std::env::temp_dir().join(format!("passlab-csmith-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let mut s = Session::new();
    // A module that must outlive every program unchanged.
    s.execute_line(":module keep --lang c", Some(common::SUM_C))
        .unwrap();
    let keep_ir = s.execute(":show").unwrap().text();
    let keep_call =
        ":use keep\n:buffer keep_data i32[100] = range\n:call sum keep_data 100\n:call twice 21";
    let keep_out = s.execute(keep_call).unwrap().text();
    assert!(
        keep_out.contains("sum(keep_data, 100) = 4950"),
        "{keep_out}"
    );
    assert!(keep_out.contains("twice(21) = 42"), "{keep_out}");
    s.execute(":buffer argv i64[2] = zeros").unwrap();

    let mut failures = Vec::new();
    let mut skipped = Vec::new();
    let (mut compared, mut runs, mut agreeing) = (0, 0, 0);
    // Every module made so far.
    let mut names = vec!["keep".to_string()];
    let mut pipeline_count = 0;
    for seed in SEEDS {
        let t = Instant::now();
        let p = generate(&dir, seed);
        let expected = match &p.native {
            Ok(c) => c.clone(),
            Err(why) => {
                eprintln!("csmith seed {seed}: skipped: {why}");
                skipped.push(seed);
                continue;
            }
        };
        let m = format!("csmith{seed}");
        let loaded = s
            .execute(&format!(
                ":load {} as {m} cflags=-I{CSMITH_INCLUDE},-w",
                p.path.display()
            ))
            .unwrap_or_else(|e| panic!("{}: :load failed: {e}", csmith_command(seed)))
            .text();
        assert!(loaded.starts_with(&format!("module {m}: ")), "{loaded}");
        names.push(m.clone());
        let pipes = pipelines(p.seed);
        pipeline_count = pipes.len();
        let mut agree = 0;
        for (label, pipeline) in &pipes {
            let target = match pipeline {
                None => m.clone(),
                Some(pipeline) => {
                    let copy = format!("{m}-{label}");
                    let ran = s.execute(&format!(":use {m}\n:copy {copy}\n:run {pipeline}"));
                    names.push(copy.clone());
                    if let Err(e) = ran {
                        failures.push(format!(
                            "{}: :run {pipeline} failed: {e}",
                            csmith_command(seed)
                        ));
                        continue;
                    }
                    copy
                }
            };
            runs += 1;
            match jit_checksum(&mut s, &target) {
                Ok(c) if c == expected => agree += 1,
                Ok(c) => failures.push(format!(
                    "{}: MISMATCH after {label} (:run {}): checksum {c} through the JIT, {expected} natively",
                    csmith_command(seed),
                    pipeline.as_deref().unwrap_or("nothing")
                )),
                Err(e) => failures.push(format!(
                    "{}: {label} (:run {}): {e}",
                    csmith_command(seed),
                    pipeline.as_deref().unwrap_or("nothing")
                )),
            }
        }
        agreeing += agree;
        if agree == pipes.len() {
            compared += 1;
        }
        // The session survives the program: the first module is as it was
        // and still runs, and every module is still there.
        assert_eq!(
            s.execute(":use keep\n:show").unwrap().text(),
            format!("using keep\n{keep_ir}"),
            "after {}",
            csmith_command(seed)
        );
        let again = s.execute(keep_call).unwrap().text();
        assert_eq!(again, keep_out, "after {}", csmith_command(seed));
        for earlier in &names {
            if let Err(e) = s.execute(&format!(":use {earlier}")) {
                panic!(
                    "module {earlier} is gone after {}: {e}",
                    csmith_command(seed)
                );
            }
        }
        eprintln!(
            "csmith seed {seed}: {agree}/{} pipelines agree (checksum {expected}), {:.1} s",
            pipes.len(),
            t.elapsed().as_secs_f64()
        );
    }
    let summary = format!(
        "csmith: {} programs ({} skipped{}), {pipeline_count} pipelines each (O0, O3, {ORDERINGS} random orderings), {} of {runs} runs agree; {} modules in the session; {:.1} s",
        SEEDS.count(),
        skipped.len(),
        if skipped.is_empty() {
            String::new()
        } else {
            format!(": seeds {skipped:?}")
        },
        agreeing,
        names.len(),
        started.elapsed().as_secs_f64()
    );
    println!("{summary}");
    assert!(
        failures.is_empty(),
        "{} failures (program sources in {}):\n{}\n{summary}",
        failures.len(),
        dir.display(),
        failures.join("\n")
    );
    assert!(
        compared >= MIN_COMPARED,
        "only {compared} programs compared (at least {MIN_COMPARED} expected): {summary}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
