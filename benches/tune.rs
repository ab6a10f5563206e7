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

mod common;
#[path = "../tests/common/inputs.rs"]
mod inputs;

use common::{median, opt, rounds, wanted};
use passlab::jit::{Arg, Buffer, ElemType, Fill};
use passlab::tune::{tune, Budget, Strategy, TuneSpec};
use passlab::Module;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const TRIALS: usize = 200;

fn trials(dir: &Path) {
    let m = Module::load(&[inputs::zlib_source("adler32.c")]).unwrap();
    let bc = dir.join("adler32.bc");
    m.save(&bc).unwrap();
    let data = Buffer::new(ElemType::I8, 4096, Fill::Random(1)).unwrap();
    let args = [Arg::Int(1), Arg::Buffer(&data), Arg::Int(4096)];
    println!(
        "search on zlib's adler32.c ({} instructions), goal instructions, pool of {} passes, orderings of 10-40, {TRIALS} trials; medians of {} rounds:",
        m.instruction_count(),
        passlab::tune::DEFAULT_POOL.len(),
        rounds()
    );
    let mut opt_per: Option<f64> = None;
    for strategy in [Strategy::Random, Strategy::Hill] {
        for checked in [true, false] {
            let spec = TuneSpec {
                strategies: vec![strategy.clone()],
                budget: Budget::Trials(TRIALS),
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

fn passlab_binary() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("release").join("passlab")
}

fn sweep(dir: &Path) {
    let passlab = passlab_binary();
    assert!(
        passlab.exists(),
        "build target/release/passlab first (scripts/passlab.sh bench tune does)"
    );
    let zlib = inputs::zlib_dir();
    let files = [
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
    let corpus: Vec<String> = files
        .iter()
        .map(|f| format!("\"{}\"", zlib.join(f).display()))
        .collect();
    let spec = dir.join("zlib.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"zlib\"\ncorpus = [{}]\ncflags = [\"-I{}\"]\ngoal = \"instructions\"\nstrategy = [\"random\", \"hill\"]\ntrials = 250\nseed = 1\n",
            corpus.join(", "),
            zlib.display()
        ),
    )
    .unwrap();
    let rounds = std::env::var("PASSLAB_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
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
    let cluster = dir.join("cluster");
    let conf = if slurm {
        let o = Command::new("bash")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/slurm/local-cluster.sh"))
            .arg("up")
            .arg(&cluster)
            .env("SLURMCTLD_PORT", "26817")
            .env("SLURMD_PORT", "26818")
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("SLURM_CONF=").map(str::to_string))
    } else {
        None
    };
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
        if let Some(conf) = &conf {
            let out = dir.join(format!("array-{r}"));
            let t = Instant::now();
            let o = Command::new("sbatch")
                .env("SLURM_CONF", conf)
                .args(["--wait", "--array=0-3", "--parsable"])
                .arg(format!("--export=ALL,PASSLAB={}", passlab.display()))
                .arg(format!("--output={}/task-%A_%a.out", cluster.display()))
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/slurm/sweep.sbatch"))
                .arg(&spec)
                .arg(&out)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            array.push(t.elapsed());
        }
    }
    if slurm {
        let _ = Command::new("bash")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/slurm/local-cluster.sh"))
            .arg("down")
            .arg(&cluster)
            .status();
    }
    let records = std::fs::read_to_string(dir.join("one-0/shard-0-of-1.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.contains("\"done\""))
        .count();
    let one = median(one);
    let secs = |d: Duration| d.as_secs_f64();
    println!(
        "sweep over 9 of zlib's files (random + hill, 250 trials each: {records} records), medians of {rounds} rounds on {} cores:",
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
    println!(
        "local search, pool 'size', instruction goal, unchecked, 150 trials: trials/s with prefixes kept and resumed vs every trial from the input; medians of {} rounds:",
        rounds()
    );
    for (name, src) in corpus()
        .into_iter()
        .filter(|(n, _)| n == "zlib/adler32.c" || n == "lua/lparser.c")
    {
        let m = passlab::Module::load(&[src]).unwrap();
        let mut per = Vec::new();
        let mut bests = Vec::new();
        for reuse in [true, false] {
            let spec = TuneSpec {
                strategies: vec![Strategy::Local],
                pool: passlab::tune::expand_pool(&["size".to_string()]),
                budget: Budget::Trials(150),
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
            per.push(150.0 / median(times).as_secs_f64());
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
/// gzwrite.c need a configured build).
fn corpus() -> Vec<(String, passlab::Source)> {
    let zlib = [
        "adler32", "compress", "crc32", "deflate", "infback", "inffast", "inflate", "inftrees",
        "trees", "uncompr",
    ];
    let lua = [
        "lapi", "lcode", "ldebug", "ldo", "ldump", "lfunc", "lgc", "llex", "lmem", "lobject",
        "lparser", "lstate", "lstring", "ltable", "ltm", "lundump", "lvm", "lzio",
    ];
    // clang's -O0 hand-over (`:load … level=O0`), on which the README's
    // figures were measured.
    let o0 = passlab::module::Level::O0;
    let mut out: Vec<(String, passlab::Source)> = zlib
        .iter()
        .map(|f| {
            (
                format!("zlib/{f}.c"),
                inputs::zlib_source(&format!("{f}.c")).level(o0),
            )
        })
        .collect();
    let dir = inputs::lua_dir();
    for f in lua {
        let src = passlab::Source::file(dir.join(format!("{f}.c")))
            .unwrap()
            .clang_args([format!("-I{}", dir.display())])
            .level(o0);
        out.push((format!("lua/{f}.c"), src));
    }
    out
}

/// CompilerGym's `llvm-ic-v0` leaderboard protocol on this corpus: the
/// module as passlab loads C (-O0 without optnone), single passes from the
/// size pool, the whole module's instruction count, -Oz's count divided by
/// the best ordering's, at most `PASSLAB_LEADERBOARD_SECONDS` (default 10)
/// of wall time per program for the whole search; the geomean, a table and
/// a chart. The best ordering is then run by opt-19 (each pass in its
/// adaptor) and counted by passlab, to show it makes what the search says.
fn leaderboard(dir: &Path) {
    let seconds: f64 = std::env::var("PASSLAB_LEADERBOARD_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    let only: Option<String> = std::env::var("PASSLAB_LEADERBOARD_ONLY").ok();
    println!(
        "leaderboard (CompilerGym's llvm-ic-v0 protocol): local search from -Oz as single passes, pool 'size' ({} passes), {seconds} s per program, seed 0",
        passlab::tune::SIZE_POOL.len()
    );
    println!(
        "  {:<16} {:>7} {:>7} {:>7} {:>7} {:>8} {:>7} {:>7} {:>6}  checked",
        "program", "O0", "-Oz", "seed", "best", "vs -Oz", "trials", "wall s", "opt-19"
    );
    let mut logs = Vec::new();
    let mut rows = Vec::new();
    for (name, src) in corpus() {
        if only.as_ref().is_some_and(|o| !name.contains(o.as_str())) {
            continue;
        }
        let m = passlab::Module::load(&[src]).unwrap();
        // zlib's checksums are checked on 4 KiB of bytes: a candidate whose
        // result differs is a miscompile and never the best.
        let data = Buffer::new(ElemType::I8, 4096, Fill::Random(1)).unwrap();
        let check = match name.as_str() {
            "zlib/adler32.c" => Some(("adler32", 1)),
            "zlib/crc32.c" => Some(("crc32", 0)),
            _ => None,
        }
        .map(|(function, start)| passlab::jit::Subject::Call {
            function: function.into(),
            args: vec![Arg::Int(start), Arg::Buffer(&data), Arg::Int(4096)],
        });
        let mut oz = m.copy();
        passlab::pipeline::parse("default<Oz>")
            .unwrap()
            .apply(&mut oz)
            .unwrap();
        let oz = oz.instruction_count();
        let spec = TuneSpec {
            strategies: vec![Strategy::Local],
            pool: passlab::tune::expand_pool(&["size".to_string()]),
            // The whole search, the O0 baseline and the child's start
            // included, within the per-program time.
            budget: Budget::Seconds(seconds - 0.3),
            levels: false,
            seed: 0,
            ..TuneSpec::default()
        };
        let start = Instant::now();
        let t = tune(&m, check.as_ref(), &spec, &[], &mut |_, _| {}).unwrap();
        let wall = start.elapsed().as_secs_f64();
        let best = t.best(1)[0];
        let count = best.instructions.unwrap();
        // opt-19 runs the best ordering; passlab counts what it made. Its
        // input is a copy of the module, as every trial's is, written with
        // its use-list order: a few passes decide by the order of a value's
        // uses, so another order can make another module.
        let bc = dir.join("leaderboard.bc");
        let out = dir.join("leaderboard-opt.bc");
        m.copy().save(&bc).unwrap();
        let s = Command::new(opt())
            .arg(format!("-passes={}", opt_pipeline(&best.ordering)))
            .arg(&bc)
            .arg("-o")
            .arg(&out)
            .status()
            .unwrap();
        assert!(s.success(), "opt-19 runs the best ordering of {name}");
        let by_opt = passlab::Module::from_file(&out)
            .unwrap()
            .instruction_count();
        let ratio = oz as f64 / count as f64;
        logs.push(ratio.ln());
        println!(
            "  {:<16} {:>7} {:>7} {:>7} {:>7} {:>7.3}x {:>7} {:>7.1} {:>6}  {}",
            name,
            m.instruction_count(),
            oz,
            t.searched()
                .next()
                .and_then(|s| s.instructions)
                .map_or("-".to_string(), |c| c.to_string()),
            count,
            ratio,
            t.searched().count(),
            wall,
            if by_opt == count {
                "same".to_string()
            } else {
                by_opt.to_string()
            },
            match &check {
                Some(passlab::jit::Subject::Call { function, .. }) => format!(
                    "{function}(): {} miscompiles excluded",
                    t.miscompiles().count()
                ),
                _ => "-".to_string(),
            }
        );
        if by_opt != count {
            println!(
                "    opt-19 made {by_opt} instructions from: {}",
                best.pipeline()
            );
        }
        rows.push((name, ratio));
    }
    let geomean = (logs.iter().sum::<f64>() / logs.len().max(1) as f64).exp();
    let chart = passlab::chart::Chart::bars(
        &format!(
            "-Oz's instruction count / the best ordering's in {seconds} s (geomean {geomean:.3}x)"
        ),
        "gain over -Oz (above 1: fewer instructions than -Oz)",
        rows.clone(),
    );
    let charts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    std::fs::create_dir_all(&charts).unwrap();
    for ext in ["svg", "png"] {
        let p = charts.join(format!("leaderboard.{ext}"));
        chart.write(&p.to_string_lossy()).unwrap();
        println!("  chart: {}", p.display());
    }
    println!(
        "  geomean over {} programs: {geomean:.3}x -Oz's instruction count (goal >= 1.08); worst {}",
        logs.len(),
        rows.iter()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(String::new(), |(n, r)| format!("{n} {r:.3}x"))
    );
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
