//! Ordering search benchmarks, measured side by side in one run.
//!
//! `bash scripts/passlab.sh bench tune` prints:
//! 1. trials per second of `:tune`'s search on zlib's adler32.c for an
//!    instruction-count goal, the default pool (34 passes), orderings of
//!    10–40 passes: random search and hill climbing, with the function
//!    checked against the input module (every distinct module compiled and
//!    called) and without; pass steps per second beside them (CompilerGym
//!    publishes about 1,760 single-pass steps per second on small
//!    programs); and the same orderings run by `opt-19 -passes=...`, one
//!    process each, as the reference (ratio: passlab's time per trial over
//!    opt's per ordering);
//! 2. a sweep over 9 of zlib's files: one process (`passlab sweep --shard
//!    0/1`) against 4 shards — as 4 processes at once, and as a 4-task
//!    Slurm job array on a one-node cluster (deploy/slurm/local-cluster.sh)
//!    when Slurm is installed — wall-clock speed-up on this machine.
//!
//! Rounds: `PASSLAB_BENCH_ROUNDS` (default 5; the sweep: 3); medians.
//! Smoke mode (`PASSLAB_BENCH_SMOKE=1`, benches/common): one round of
//! each, 10 trials a search, the sweep over 4 files with 5 trials each
//! (the Slurm job array included: Slurm must be installed), local search on
//! adler32.c alone, the leaderboard on adler32.c (training) and cmark-gfm's
//! arena.c (held out) for 1 s; its charts go
//! to target/bench/smoke.

#[path = "../tests/common/cache.rs"]
#[allow(dead_code)]
mod cache;
mod common;
#[path = "../tests/common/inputs.rs"]
mod inputs;
#[path = "../tests/common/opt19.rs"]
mod opt19;
#[path = "../tests/common/slurm.rs"]
mod slurm;

use common::{median, opt, passlab_binary, results_dir, rounds, rounds_or, scaled, smoke, wanted};
use passlab::jit::{Arg, Buffer, ElemType, Fill};
use passlab::tune::{tune, Budget, Strategy, TuneSpec};
use passlab::Module;
use slurm::Cluster;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn trials(dir: &Path) {
    let trials = scaled(200, 10);
    let m = Module::load(&[inputs::zlib_source("adler32.c")]).unwrap();
    let bc = dir.join("adler32.bc");
    m.save(&bc).unwrap();
    let data = Buffer::new(ElemType::I8, 4096, Fill::Random(1)).unwrap();
    let args = [Arg::Int(1), Arg::Buffer(&data), Arg::Int(4096)];
    println!(
        "search on zlib's adler32.c ({} instructions), goal instructions, pool of {} passes, orderings of 10-40, {trials} trials; medians of {} rounds:",
        m.instruction_count(),
        passlab::tune::DEFAULT_POOL.len(),
        rounds()
    );
    let mut opt_per: Option<f64> = None;
    for strategy in [Strategy::Random, Strategy::Hill] {
        for checked in [true, false] {
            let spec = TuneSpec {
                strategies: vec![strategy.clone()],
                budget: Budget::Trials(trials),
                seed: 1,
                ..TuneSpec::default()
            };
            let check = checked.then(|| passlab::jit::Subject::Call {
                function: "adler32".into(),
                args: args.to_vec(),
            });
            let mut times = Vec::new();
            let mut result = None;
            for _ in 0..rounds() {
                let mut first: Option<Instant> = None;
                let mut last = Instant::now();
                // From the first searched trial to the last (the baselines
                // and the reference call before are left out).
                let t = tune(&m, check.as_ref(), &spec, &[], &mut |t, _| {
                    if t.phase != "baseline" {
                        first.get_or_insert_with(Instant::now);
                        last = Instant::now();
                    }
                })
                .unwrap();
                times.push(last - first.unwrap());
                result = Some(t);
            }
            let t = result.unwrap();
            let n = t.searched().count() - 1;
            let per = median(times).as_secs_f64() / n as f64;
            let passes: usize = t.searched().map(|t| t.ordering.len()).sum();
            let mean_len = passes as f64 / t.searched().count() as f64;
            println!(
                "  {:<6} {}: {:.0} trials/s ({:.2} ms per trial, {:.1} passes per ordering: {:.0} pass steps/s); best {} instructions",
                strategy.name(),
                if checked { "checked  " } else { "unchecked" },
                1.0 / per,
                per * 1e3,
                mean_len,
                mean_len / per,
                t.best(1)[0].instructions.unwrap()
            );
            if strategy == Strategy::Random {
                let opt_per = *opt_per.get_or_insert_with(|| opt_reference(&bc, &t));
                println!(
                    "         passlab per trial / opt-19 per ordering = {:.2}",
                    per / opt_per
                );
            }
        }
    }
}

/// An ordering as one opt pipeline: each pass as LLVM spells it alone
/// (in the adaptor of its IR unit: `function(loop-mssa(licm))`), so that
/// each runs over the whole module before the next, and with every
/// analysis dropped between two passes (`invalidate<all>`), as passlab
/// runs them: without that, a pass can read an analysis an earlier pass
/// left valid in opt but not here, and the module differs (Lua's llex.c:
/// 1427 instructions instead of 1343).
fn opt_pipeline(ordering: &[String]) -> String {
    let parts: Vec<String> = ordering
        .iter()
        .map(|p| {
            passlab::pipeline::llvm_spelling(p)
                .unwrap_or_else(|| panic!("{p} is LLVM's"))
                .passes
        })
        .collect();
    format!("module({})", parts.join(",invalidate<all>,"))
}

/// opt-19 running the same orderings, one process per ordering.
fn opt_reference(bc: &Path, t: &passlab::tune::Tuning) -> f64 {
    let orderings: Vec<String> = t
        .searched()
        .take(50)
        .map(|t| opt_pipeline(&t.ordering))
        .collect();
    let mut times = Vec::new();
    for _ in 0..rounds() {
        let start = Instant::now();
        for o in &orderings {
            let s = Command::new(opt())
                .arg(format!("-passes={o}"))
                .arg(bc)
                .arg("-o")
                .arg("/dev/null")
                .status()
                .unwrap();
            assert!(s.success(), "opt-19 -passes={o}");
        }
        times.push(start.elapsed());
    }
    let opt_per = median(times).as_secs_f64() / orderings.len() as f64;
    println!(
        "         reference: opt-19 -passes=ORDERING, a process per ordering (the first {} orderings): {:.2} ms per ordering",
        orderings.len(),
        opt_per * 1e3
    );
    opt_per
}

fn sweep(dir: &Path) {
    let passlab = passlab_binary();
    assert!(
        passlab.exists(),
        "{} not found: build target/release/passlab first (scripts/passlab.sh bench tune does) or name one in PASSLAB_BIN",
        passlab.display()
    );
    let zlib = inputs::zlib_dir();
    let mut files = vec![
        "adler32.c",
        "compress.c",
        "crc32.c",
        "deflate.c",
        "inffast.c",
        "inftrees.c",
        "trees.c",
        "uncompr.c",
        "zutil.c",
    ];
    // Four files: each of the four shards has one.
    files.truncate(scaled(files.len(), 4));
    let trials = scaled(250, 5);
    let corpus: Vec<String> = files
        .iter()
        .map(|f| format!("\"{}\"", zlib.join(f).display()))
        .collect();
    let spec = dir.join("zlib.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"zlib\"\ncorpus = [{}]\ncflags = [\"-I{}\"]\ngoal = \"instructions\"\nstrategy = [\"random\", \"hill\"]\ntrials = {trials}\nseed = 1\n",
            corpus.join(", "),
            zlib.display()
        ),
    )
    .unwrap();
    let rounds = rounds_or(3);
    let run = |out: &Path, shard: &str| {
        Command::new(&passlab)
            .args(["sweep"])
            .arg(&spec)
            .arg("--out")
            .arg(out)
            .args(["--shard", shard])
            .env("RUST_BACKTRACE", "0")
            .output()
            .unwrap()
    };
    let slurm = Command::new("sh")
        .args(["-c", "command -v sbatch && command -v slurmctld"])
        .output()
        .is_ok_and(|o| o.status.success());
    // A smoke run is there to run every part, the job array included.
    assert!(
        slurm || !smoke(),
        "Slurm is not installed: the smoke run needs it for the sweep's job array (bash scripts/passlab.sh test installs it)"
    );
    // Stopped when dropped, even when an assertion below fails.
    let cluster =
        slurm.then(|| Cluster::up(Path::new(env!("CARGO_MANIFEST_DIR")), &dir.join("cluster")));
    let (mut one, mut four, mut array) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..rounds {
        let out = dir.join(format!("one-{r}"));
        let t = Instant::now();
        let o = run(&out, "0/1");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        one.push(t.elapsed());
        let out = dir.join(format!("four-{r}"));
        let t = Instant::now();
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|i| {
                    let out = &out;
                    let run = &run;
                    s.spawn(move || run(out, &format!("{i}/4")))
                })
                .collect();
            for h in handles {
                let o = h.join().unwrap();
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            }
        });
        four.push(t.elapsed());
        if let Some(cluster) = &cluster {
            let out = dir.join(format!("array-{r}"));
            let t = Instant::now();
            let o = cluster
                .command("sbatch")
                .args(["--wait", "--array=0-3", "--parsable"])
                .arg(format!("--export=ALL,PASSLAB={}", passlab.display()))
                .arg(format!("--output={}/task-%A_%a.out", cluster.dir.display()))
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/slurm/passlab.sbatch"))
                .arg("sweep")
                .arg(&spec)
                .arg(&out)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            array.push(t.elapsed());
        }
    }
    drop(cluster);
    let records = std::fs::read_to_string(dir.join("one-0/sweep-0-of-1.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.contains("\"done\""))
        .count();
    let one = median(one);
    let secs = |d: Duration| d.as_secs_f64();
    println!(
        "sweep over {} of zlib's files (random + hill, {trials} trials each: {records} records), medians of {rounds} rounds on {} cores:",
        files.len(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("  one process: {:.1} s", secs(one));
    let four = median(four);
    println!(
        "  4 shards as 4 processes at once: {:.1} s, speed-up {:.2}x",
        secs(four),
        secs(one) / secs(four)
    );
    if array.is_empty() {
        println!("  (Slurm is not installed: no job array measured)");
    } else {
        let array = median(array);
        println!(
            "  4 shards as a Slurm job array (sbatch --wait --array=0-3, one-node cluster): {:.1} s, speed-up {:.2}x ({:.1} s more than the 4 processes: Slurm starting, placing and reporting the tasks)",
            secs(array),
            secs(one) / secs(array),
            secs(array) - secs(four)
        );
    }
}

/// Local search's trials per second with and without resuming from the
/// modules kept after the best ordering's prefixes, same run, on zlib's
/// adler32.c and Lua's lparser.c (pool size, instruction goal, unchecked).
fn prefixes() {
    let trials = scaled(150, 10);
    println!(
        "local search, pool 'size', instruction goal, unchecked, {trials} trials: trials/s with prefixes kept and resumed vs every trial from the input; medians of {} rounds:",
        rounds()
    );
    // (Smoke mode: lparser.c takes the same path as adler32.c.)
    for (name, src) in corpus()
        .into_iter()
        .filter(|(n, _)| n == "zlib/adler32.c" || (n == "lua/lparser.c" && !smoke()))
    {
        let m = passlab::Module::load(&[src]).unwrap();
        let mut per = Vec::new();
        let mut bests = Vec::new();
        for reuse in [true, false] {
            let spec = TuneSpec {
                strategies: vec![Strategy::Local],
                pool: passlab::tune::expand_pool(&["size".to_string()]),
                budget: Budget::Trials(trials),
                levels: false,
                reuse_prefixes: reuse,
                ..TuneSpec::default()
            };
            let mut times = Vec::new();
            let mut best = 0;
            for _ in 0..rounds() {
                let start = Instant::now();
                let t = tune(&m, None, &spec, &[], &mut |_, _| {}).unwrap();
                times.push(start.elapsed());
                best = t.best(1)[0].instructions.unwrap();
            }
            per.push(trials as f64 / median(times).as_secs_f64());
            bests.push(best);
        }
        println!(
            "  {name:<16} kept and resumed {:.0} trials/s, from the input {:.0} trials/s: {:.2}x; best {} and {} instructions",
            per[0],
            per[1],
            per[0] / per[1],
            bests[0],
            bests[1]
        );
    }
}

/// The leaderboard's corpus: zlib's library files and Lua's core files (the
/// CORE_O list of Lua's makefile), each translation unit a program, those
/// with at least 50 instructions after -Oz (zlib's zutil.c and gzclose.c,
/// Lua's lctype.c and lopcodes.c have fewer; zlib's gzlib.c, gzread.c and
/// gzwrite.c need a configured build). Each is compiled as CompilerGym's
/// cBench-v1 was: clang's -O1 hand-over (`-O1 -Xclang
/// -disable-llvm-passes`, passlab's `level=O1`), where functions can be
/// inlined.
fn corpus() -> Vec<(String, passlab::Source)> {
    let o1 = passlab::module::Level::O1;
    passlab::tune::SAMPLE_CORPUS
        .iter()
        .map(|name| {
            let (set, file) = name.split_once('/').unwrap();
            let dir = match set {
                "zlib" => inputs::zlib_dir(),
                _ => inputs::lua_dir(),
            };
            let src = passlab::Source::file(dir.join(file))
                .unwrap()
                .clang_args([format!("-I{}", dir.display())])
                .level(o1);
            (name.to_string(), src)
        })
        .collect()
}

/// The held-out corpus (`src/tune/held_out.txt`): Lua's library files and
/// cmark-gfm's units, compiled as the training corpus is (clang's -O1
/// hand-over), cmark-gfm's with the include directories and definitions
/// of its CMake build (target/inputs/cmark-build, configured by the
/// set-up).
fn held_out() -> Vec<(String, passlab::Source)> {
    let o1 = passlab::module::Level::O1;
    let cmark = inputs::cmark_gfm_dir();
    let build = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/inputs/cmark-build");
    passlab::tune::held_out_corpus()
        .into_iter()
        .map(|name| {
            let (set, file) = name.split_once('/').unwrap();
            let (path, args) = match set {
                "lua" => (
                    inputs::lua_dir().join(file),
                    vec![format!("-I{}", inputs::lua_dir().display())],
                ),
                "cmark-gfm" => {
                    let mut args = vec![
                        format!("-I{}", cmark.join("src").display()),
                        format!("-I{}", build.join("src").display()),
                        format!("-I{}", build.join("extensions").display()),
                        "-DCMARK_STATIC_DEFINE".to_string(),
                    ];
                    if file.starts_with("extensions/") {
                        args.push(format!("-I{}", cmark.join("extensions").display()));
                        args.push("-DCMARKEXTENSIONS_STATIC_DEFINE".to_string());
                    }
                    (cmark.join(file), args)
                }
                _ => panic!("{name}: not a set of the sample inputs"),
            };
            let src = passlab::Source::file(path)
                .unwrap()
                .clang_args(args)
                .level(o1);
            (name.to_string(), src)
        })
        .collect()
}

/// CompilerGym's `llvm-ic-v0` leaderboard's score for one program:
/// `(C0 - C) / (C0 - C_Oz)`, C0 the count of the module the environment
/// starts from (here the -O1 hand-over), C the technique's, C_Oz -Oz's
/// (`BaselineImprovementNormalizedReward`).
fn normalized(c0: u64, c: u64, oz: u64) -> f64 {
    (c0 as f64 - c as f64) / (c0 as f64 - oz as f64)
}

fn geomean(xs: &[f64]) -> f64 {
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len().max(1) as f64).exp()
}

/// CompilerGym's `llvm-ic-v0` protocol, on the training corpus (the one
/// the search was tuned on: zlib + Lua's core files) and on the held-out
/// corpus (`src/tune/held_out.txt`, never tuned on), each printed on its
/// own (`PASSLAB_LEADERBOARD_CORPUS`: `training`, `held-out` or both, the
/// default).
fn leaderboard(dir: &Path) {
    let which = std::env::var("PASSLAB_LEADERBOARD_CORPUS").unwrap_or_default();
    let mut failures = Vec::new();
    if which.is_empty() || which == "training" {
        failures.extend(board(dir, "training", corpus()));
    }
    if which.is_empty() || which == "held-out" {
        failures.extend(board(dir, "held-out", held_out()));
    }
    assert!(
        failures.is_empty(),
        "the leaderboard's checks failed:\n{}",
        failures.join("\n")
    );
}

/// A leaderboard row: the program, C0, -Oz, the coreset's attempt, the
/// search's.
type Row = (String, u64, u64, Option<Attempt>, Attempt);

/// What one technique made of one program.
struct Attempt {
    count: u64,
    trials: usize,
    wall: f64,
    pipeline: String,
}

/// Runs `spec` on `m` (whose bitcode is `bc`) within `seconds`, asserted
/// (everything included: the evaluating child's start, the input's
/// baseline; a trial still running when the time is up is stopped and not
/// counted), and replays its best ordering with opt-19, element by
/// element: any difference is pushed to `failures`. No trial finished in
/// time: the module stays as it came (C0).
#[allow(clippy::too_many_arguments)]
fn attempt(
    name: &str,
    what: &str,
    m: &passlab::Module,
    bc: &Path,
    dir: &Path,
    spec: &TuneSpec,
    seconds: f64,
    failures: &mut Vec<String>,
) -> Attempt {
    let start = Instant::now();
    let t = tune(m, None, spec, &[], &mut |_, _| {}).unwrap();
    let wall = start.elapsed().as_secs_f64();
    if wall > seconds + 0.5 {
        failures.push(format!(
            "{name}: {what} took {wall:.2} s, over {seconds} s + 0.5 s"
        ));
    }
    let best = t.best(1).first().copied();
    let count = best.map_or(m.instruction_count(), |b| b.instructions.unwrap());
    let ordering = best.map_or(Vec::new(), |b| b.ordering.clone());
    let pipeline = best.map_or("(no ordering finished: the input)".to_string(), |b| {
        b.pipeline()
    });
    let by_opt = passlab::Module::from_file(opt19::chain(bc, &ordering, dir))
        .unwrap()
        .instruction_count();
    if by_opt != count {
        failures.push(format!(
            "{name}: {what}'s best ordering makes {count} instructions, opt-19 {by_opt}: {}",
            passlab::tune::abbreviate(&pipeline, 300)
        ));
    }
    Attempt {
        count,
        trials: t.searched().count(),
        wall,
        pipeline,
    }
}

/// One corpus: clang's -O1 hand-over, whose count is C0; -Oz is
/// `default<Oz>` on it (opt-19's, whose parser leaves the SLP vectorizer
/// off at Oz: passlab runs it so, and the bench checks the count against
/// `opt-19 --relocation-model=pic`'s, the target machine clang and passlab
/// give position-independent modules); two scores, -Oz's instruction count
/// over the technique's (C_Oz / C) and the leaderboard's own,
/// `(C0 - C) / (C0 - C_Oz)`. Two techniques, each checked by [`attempt`]:
/// the coreset passlab ships (`src/tune/coreset.txt`, or the file
/// `PASSLAB_LEADERBOARD_CORESET` names; `none`: no coreset), its orderings
/// tried in turn within `PASSLAB_CORESET_SECONDS` (default 1) per program;
/// and the search `:tune` runs for an instruction count when nothing else
/// is named (`goal_defaults`: local search from -Oz's 43 actions over the
/// size pool), warm-started with the coreset's orderings as its openings
/// (`PASSLAB_LEADERBOARD_WARM=0`: -Oz's own openings), within
/// `PASSLAB_LEADERBOARD_SECONDS` (default 10) per program. The geomeans,
/// a table and a chart.
fn board(dir: &Path, label: &str, programs: Vec<(String, passlab::Source)>) -> Vec<String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let seconds: f64 = var("PASSLAB_LEADERBOARD_SECONDS")
        .and_then(|s| s.parse().ok())
        .unwrap_or(if smoke() { 1.0 } else { 10.0 });
    let coreset_seconds: f64 = var("PASSLAB_CORESET_SECONDS")
        .and_then(|s| s.parse().ok())
        .unwrap_or(passlab::tune::coreset::DEFAULT_SECONDS);
    let only: Option<String> = var("PASSLAB_LEADERBOARD_ONLY")
        .or_else(|| smoke().then(|| "zlib/adler32.c,cmark-gfm/src/arena.c".to_string()));
    let coreset = match var("PASSLAB_LEADERBOARD_CORESET").as_deref() {
        Some("none") => None,
        other => Some(passlab::tune::coreset::Coreset::named(other).unwrap()),
    };
    let warm = coreset.is_some() && var("PASSLAB_LEADERBOARD_WARM").as_deref() != Some("0");
    let mut spec = TuneSpec {
        // The whole search within the per-program time: the session stops
        // it then (and the module's copy, the input's baseline and the
        // child's start count too).
        budget: Budget::Seconds(seconds),
        levels: false,
        seed: 0,
        ..TuneSpec::default()
    };
    spec.goal_defaults(false, false);
    if warm {
        spec.warm = coreset.as_ref().unwrap().orderings.clone();
    }
    println!(
        "leaderboard, {label} corpus (CompilerGym's llvm-ic-v0 protocol: clang-19 -O1 hand-over = C0, -Oz = opt-19's default<Oz>); {}; search: :tune's default for instructions ({}, pool 'size' of {} actions{}), {seconds} s per program, seed 0",
        coreset.as_ref().map_or("no coreset".to_string(), |c| format!(
            "coreset: {} orderings, {coreset_seconds} s per program",
            c.orderings.len()
        )),
        spec.strategies[0].name(),
        spec.pool.len(),
        if warm {
            ", warm-started: the coreset's orderings as its openings"
        } else {
            ", -Oz's openings"
        },
    );
    println!(
        "  {:<36} {:>6} {:>6} | {:>6} {:>7} {:>7} {:>5} {:>5} | {:>6} {:>7} {:>7} {:>5} {:>5}  opt-19",
        "program", "C0", "-Oz", "core", "Oz/C", "(C0-C)/", "tried", "s", "search", "Oz/C", "(C0-C)/", "tried", "s"
    );
    let ctx = passlab::PassContext::inherit()
        .with_config("llvm.slp_vectorization", false)
        .unwrap();
    let _scope = ctx.enter().unwrap();
    // Per program: name, C0, -Oz, the coreset's attempt, the search's.
    let mut rows: Vec<Row> = Vec::new();
    let mut failures = Vec::new();
    for (name, src) in programs {
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|o| name.contains(o)))
        {
            continue;
        }
        let m = passlab::Module::load(&[src]).unwrap();
        // Every file opt-19 reads is a copy of the module, as every trial's
        // input is, written with its use-list order.
        let bc = dir.join("leaderboard.bc");
        m.copy().save(&bc).unwrap();
        let mut oz = m.copy();
        passlab::pipeline::parse("default<Oz>")
            .unwrap()
            .apply(&mut oz)
            .unwrap();
        let oz = oz.instruction_count();
        let c0 = m.instruction_count();
        if oz < 50 {
            failures.push(format!(
                "{name}: {oz} instructions after -Oz, fewer than the corpus's 50"
            ));
        }
        let opt_oz = passlab::Module::from_file(opt19::chain(&bc, &["default<Oz>".into()], dir))
            .unwrap()
            .instruction_count();
        if opt_oz != oz {
            failures.push(format!(
                "{name}: -Oz makes {oz} instructions, opt-19 -passes='default<Oz>' {opt_oz}"
            ));
        }
        let core = coreset.as_ref().map(|c| {
            let s = passlab::tune::coreset::spec(c, coreset_seconds);
            attempt(
                &name,
                "the coreset",
                &m,
                &bc,
                dir,
                &s,
                coreset_seconds,
                &mut failures,
            )
        });
        let search = attempt(
            &name,
            "the search",
            &m,
            &bc,
            dir,
            &spec,
            seconds,
            &mut failures,
        );
        let cells = |a: &Attempt| {
            format!(
                "{:>6} {:>6.3}x {:>7.3} {:>5} {:>5.2}",
                a.count,
                oz as f64 / a.count as f64,
                normalized(c0, a.count, oz),
                a.trials,
                a.wall
            )
        };
        println!(
            "  {:<36} {:>6} {:>6} | {} | {}  {}",
            name,
            c0,
            oz,
            core.as_ref().map_or(format!("{:>34}", "-"), cells),
            cells(&search),
            if failures.iter().any(|f| f.starts_with(&format!("{name}:"))) {
                "DIFFERENT (below)"
            } else {
                "same"
            },
        );
        rows.push((name, c0, oz, core, search));
    }
    let summary = |what: &str, of: &dyn Fn(&Row) -> Option<u64>| {
        let pairs: Vec<(f64, f64, &str)> = rows
            .iter()
            .filter_map(|r| {
                of(r).map(|c| (r.2 as f64 / c as f64, normalized(r.1, c, r.2), r.0.as_str()))
            })
            .collect();
        if pairs.is_empty() {
            return 0.0;
        }
        let ratios: Vec<f64> = pairs.iter().map(|p| p.0).collect();
        let norms: Vec<f64> = pairs.iter().map(|p| p.1).collect();
        let below = pairs.iter().filter(|p| p.0 < 1.0).count();
        let worst = pairs.iter().min_by(|a, b| a.0.total_cmp(&b.0)).unwrap();
        let g = geomean(&ratios);
        println!(
            "  {label}: {what}: geomean over {} programs: C_Oz/C {g:.4}x, (C0-C)/(C0-C_Oz) {:.4} (llvm-ic-v0's metric); {below} below -Oz; worst {} {:.3}x",
            pairs.len(),
            geomean(&norms),
            worst.2,
            worst.0
        );
        g
    };
    if coreset.is_some() {
        summary(&format!("coreset in {coreset_seconds} s"), &|r| {
            r.3.as_ref().map(|a| a.count)
        });
    }
    let g = summary(
        &format!(
            "search in {seconds} s{}",
            if warm { " (warm-started)" } else { "" }
        ),
        &|r| Some(r.4.count),
    );
    let chart = passlab::chart::Chart::bars(
        &format!(
            "{label} corpus: -Oz's instruction count / the best ordering's in {seconds} s, clang's -O1 hand-over (geomean {g:.3}x)"
        ),
        "gain over -Oz (above 1: fewer instructions than -Oz)",
        rows.iter().map(|r| (r.0.clone(), r.2 as f64 / r.4.count as f64)).collect(),
    );
    let charts = results_dir();
    std::fs::create_dir_all(&charts).unwrap();
    let stem = if label == "training" {
        "leaderboard".to_string()
    } else {
        format!("leaderboard-{label}")
    };
    for ext in ["svg", "png"] {
        let p = charts.join(format!("{stem}.{ext}"));
        chart.write(&p.to_string_lossy()).unwrap();
        println!("  chart: {}", p.display());
    }
    println!("  the search's best orderings (abbreviated; all replayed by opt-19 above):");
    for r in &rows {
        println!(
            "    {}: {}",
            r.0,
            passlab::tune::abbreviate(&r.4.pipeline, 160)
        );
    }
    // In full, one program per line, for `:run` and opt-19.
    let full = charts.join(format!("{stem}-orderings.txt"));
    let text: String = rows
        .iter()
        .map(|r| {
            format!(
                "{}\tsearch\t{}\n{}",
                r.0,
                r.4.pipeline,
                r.3.as_ref().map_or(String::new(), |a| format!(
                    "{}\tcoreset\t{}\n",
                    r.0, a.pipeline
                ))
            )
        })
        .collect();
    std::fs::write(&full, text).unwrap();
    println!("  in full: {}", full.display());
    failures
}

fn main() {
    let dir = std::env::temp_dir().join(format!("passlab-bench-tune-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    if wanted("trials") {
        trials(&dir);
    }
    if wanted("sweep") {
        sweep(&dir);
    }
    if wanted("prefixes") {
        prefixes();
    }
    if wanted("leaderboard") {
        leaderboard(&dir);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
