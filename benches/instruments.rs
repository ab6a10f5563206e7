//! Instrument benchmarks on sqlite3, measured side by side in one run.
//!
//! `bash scripts/passlab.sh bench instruments` prints:
//! 1. default<O2> with timing + ir-size at LLVM-internal granularity vs
//!    plain `opt-19 -passes='default<O2>'` (target ratio ≤ 1.10), plus
//!    passlab without instruments for reference;
//! 2. default<O2> with print-changed (diffs written to a file) vs
//!    `opt-19 -passes='default<O2>' -print-changed=diff` (target ≤ 1.0).
//!    opt's diff mode runs the system `diff` for every change and did not
//!    finish in 25 minutes on this machine, so it is given a time limit
//!    (`PASSLAB_BENCH_OPT_LIMIT` seconds, default 300); if it is stopped,
//!    the ratio printed is an upper bound. The ratio against plain opt-19
//!    (aim ≤ 3) is printed too.
//!
//! Rounds: `PASSLAB_BENCH_ROUNDS` (default 5); medians.

mod common;
#[path = "../tests/common/inputs.rs"]
mod inputs;

use common::{median, median_f, opt, rounds, run_opt, wanted};
use passlab::instrument::{IrSize, PrintChanged, Timing};
use passlab::{registry, Module, Pass, PassContext};
use std::path::Path;
use std::process::{Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// opt-19 with -print-changed=diff, output to `log`, stopped after `limit`.
/// Returns the time and whether it finished.
fn run_opt_print_changed(
    input: &Path,
    out: &Path,
    log: &Path,
    limit: Duration,
) -> (Duration, bool) {
    let t = Instant::now();
    let mut child = Command::new(opt())
        .arg("-passes=default<O2>")
        .arg("-print-changed=diff")
        .arg(input)
        .arg("-o")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            assert!(s.success());
            return (t.elapsed(), true);
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return (t.elapsed(), false);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn main() {
    let dir = std::env::temp_dir().join(format!("passlab-bench-instr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("sqlite3.bc");
    let m = Module::from_file(inputs::sqlite3_c()).expect("sqlite3 compiles");
    m.save(&input).unwrap();
    drop(m);
    let o2 = registry::get_pass("default<O2>").unwrap();
    if wanted("timing") {
        timing_and_ir_size(&input, &dir, o2.as_ref());
    }
    if wanted("print-changed") {
        print_changed(&input, &dir, o2.as_ref());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// 1. timing + ir-size.
fn timing_and_ir_size(input: &Path, dir: &Path, o2: &dyn Pass) {
    let (mut plain, mut instrumented, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ratios, mut plain_ratios) = (Vec::new(), Vec::new());
    let mut summary = String::new();
    for round in 0..rounds() {
        let ours_plain = || {
            let t = Instant::now();
            let mut m = Module::from_file(input).unwrap();
            o2.apply(&mut m).unwrap();
            m.save(dir.join("plain.bc")).unwrap();
            t.elapsed()
        };
        let ours_instrumented = |summary: &mut String| {
            let timing = Rc::new(Timing::new());
            let size = Rc::new(IrSize::new());
            let t = Instant::now();
            let mut m = Module::from_file(input).unwrap();
            {
                let _g = PassContext::inherit()
                    .with_instrument(timing.clone())
                    .with_instrument(size.clone())
                    .enter()
                    .unwrap();
                o2.apply(&mut m).unwrap();
            }
            m.save(dir.join("instrumented.bc")).unwrap();
            let elapsed = t.elapsed();
            let report = timing.report();
            let series = size.series();
            *summary = format!(
                "  {} distinct passes timed ({} nodes), {} IR-size points, last {} instructions (module: {})",
                report.distinct_passes(),
                report.nodes().len(),
                series.len(),
                series.last().map_or(0, |p| p.instructions),
                m.instruction_count()
            );
            elapsed
        };
        // Rotate who goes first, so drift hits all three alike.
        let (mut a, mut b, mut c) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
        for k in 0..3 {
            match (round + k) % 3 {
                0 => c = run_opt(input, &dir.join("opt.bc")),
                1 => b = ours_instrumented(&mut summary),
                _ => a = ours_plain(),
            }
        }
        ratios.push(b.as_secs_f64() / c.as_secs_f64());
        plain_ratios.push(a.as_secs_f64() / c.as_secs_f64());
        eprintln!(
            "  round {}: passlab {:.2} s, with timing+ir-size {:.2} s, opt-19 {:.2} s",
            round + 1,
            a.as_secs_f64(),
            b.as_secs_f64(),
            c.as_secs_f64()
        );
        plain.push(a);
        instrumented.push(b);
        theirs.push(c);
    }
    let (p, i, t) = (median(plain), median(instrumented), median(theirs));
    println!("sqlite3 default<O2> with timing + ir-size at LLVM-internal granularity:");
    println!("{summary}");
    println!(
        "  passlab+instruments {:.3} s, opt-19 {:.3} s, ratio of medians {:.3}; median of per-round ratios {:.3} (target <= 1.10)",
        i.as_secs_f64(),
        t.as_secs_f64(),
        i.as_secs_f64() / t.as_secs_f64(),
        median_f(ratios),
    );
    println!(
        "  passlab plain {:.3} s: ratio of medians {:.3}, median of per-round ratios {:.3}; {} rounds",
        p.as_secs_f64(),
        p.as_secs_f64() / t.as_secs_f64(),
        median_f(plain_ratios),
        rounds()
    );
}

/// 2. print-changed.
fn print_changed(input: &Path, dir: &Path, o2: &dyn Pass) {
    let t = {
        let mut v: Vec<Duration> = (0..rounds().min(3))
            .map(|_| run_opt(input, &dir.join("opt.bc")))
            .collect();
        v.sort();
        v[v.len() / 2]
    };
    let mut ours = Vec::new();
    let mut lines = String::new();
    for _ in 0..rounds() {
        let out = std::fs::File::create(dir.join("changed.diff")).unwrap();
        let changed =
            Rc::new(PrintChanged::default().writing_to(Box::new(std::io::BufWriter::new(out))));
        let t = Instant::now();
        let mut m = Module::from_file(input).unwrap();
        {
            let _g = PassContext::inherit()
                .with_instrument(changed.clone())
                .enter()
                .unwrap();
            o2.apply(&mut m).unwrap();
        }
        let _ = changed.output();
        m.save(dir.join("changed.bc")).unwrap();
        ours.push(t.elapsed());
        let (c, u) = changed.counts();
        let bytes = std::fs::metadata(dir.join("changed.diff")).unwrap().len();
        lines = format!(
            "  passlab: {c} passes changed the IR, {u} did not; {:.1} MB of diffs",
            bytes as f64 / 1e6
        );
    }
    let ours = median(ours);
    let limit = Duration::from_secs(
        std::env::var("PASSLAB_BENCH_OPT_LIMIT")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(300),
    );
    let (theirs, finished) = run_opt_print_changed(
        input,
        &dir.join("opt-changed.bc"),
        &dir.join("opt-changed.diff"),
        limit,
    );
    let opt_bytes = std::fs::metadata(dir.join("opt-changed.diff")).map_or(0, |m| m.len());
    println!("sqlite3 default<O2> with print-changed (diffs to a file):");
    println!("{lines}");
    println!(
        "  opt-19 -print-changed=diff: {} {:.1} s, {:.1} MB written",
        if finished {
            "finished in"
        } else {
            "stopped unfinished after"
        },
        theirs.as_secs_f64(),
        opt_bytes as f64 / 1e6
    );
    println!(
        "  passlab {:.3} s (median of {}), ratio {}{:.4} (target <= 1.0); vs plain opt-19 {:.2}x (aim <= 3)",
        ours.as_secs_f64(),
        rounds(),
        if finished { "" } else { "< " },
        ours.as_secs_f64() / theirs.as_secs_f64(),
        ours.as_secs_f64() / t.as_secs_f64()
    );
}
