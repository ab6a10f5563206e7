//! Instrument benchmarks on sqlite3, measured side by side in one run.
//!
//! `bash scripts/passlab.sh bench instruments` prints:
//! 1. default<O2> with timing + ir-size at LLVM-internal granularity vs
//!    plain `opt-19 -passes='default<O2>'` (target ratio ≤ 1.10), plus
//!    passlab without instruments for reference;
//! 2. the same as a user running `passlab run` experiences it: a script
//!    that loads the bitcode, runs default<O2> with timing + ir-size,
//!    prints both reports and saves the result, against `opt-19
//!    -passes='default<O2>' in.bc -o out.bc`, each a process (start-up,
//!    load, report, write included; target ratio ≤ 1.10). Needs
//!    target/release/passlab (`scripts/passlab.sh bench instruments`
//!    builds it; `PASSLAB_BIN` names another);
//! 3. default<O2> with print-changed (diffs written to a file) vs
//!    `opt-19 -passes='default<O2>' -print-changed=diff` (target ≤ 1.0).
//!    opt's diff mode runs the system `diff` for every change and did not
//!    finish in 25 minutes on this machine, so it is given a time limit
//!    (`PASSLAB_BENCH_OPT_LIMIT` seconds, default 300); if it is stopped,
//!    the ratio printed is an upper bound. The ratios against plain
//!    default<O2> in this process and plain opt-19 (target ≤ 3) are
//!    printed too, and the explore instrument (`:explore`'s recording:
//!    every pass, every function's versions as edit scripts) beside it.
//!
//! Rounds: `PASSLAB_BENCH_ROUNDS` (default 5); medians. Smoke mode
//! (`PASSLAB_BENCH_SMOKE=1`, benches/common): one round of each, zlib's
//! adler32.c in sqlite3's place.

mod common;
#[path = "../tests/common/inputs.rs"]
mod inputs;

use common::{large_input, median, median_f, opt, passlab_binary, rounds, run_opt, smoke, wanted};
use passlab::instrument::{Explore, IrSize, PrintChanged, Timing};
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
    let (name, source) = large_input();
    let input = dir.join("input.bc");
    let m = Module::from_file(&source).unwrap_or_else(|e| panic!("{name} compiles: {e}"));
    m.save(&input).unwrap();
    drop(m);
    let o2 = registry::get_pass("default<O2>").unwrap();
    if wanted("timing") {
        timing_and_ir_size(name, &input, &dir, o2.as_ref());
    }
    if wanted("process") {
        process(name, &input, &dir);
    }
    if wanted("print-changed") {
        print_changed(name, &input, &dir, o2.as_ref());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// 1. timing + ir-size.
fn timing_and_ir_size(name: &str, input: &Path, dir: &Path, o2: &dyn Pass) {
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
    println!("{name} default<O2> with timing + ir-size at LLVM-internal granularity:");
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

/// 2. timing + ir-size, process against process.
fn process(name: &str, input: &Path, dir: &Path) {
    let passlab = passlab_binary();
    // A smoke run is there to run every part: one without its binary fails.
    assert!(
        !smoke() || passlab.exists(),
        "{} not found: the smoke run needs PASSLAB_BIN (bash scripts/passlab.sh bench smoke sets it)",
        passlab.display()
    );
    if !passlab.exists() {
        println!(
            "process-level: {} not found (cargo build --release -p passlab-repl)",
            passlab.display()
        );
        return;
    }
    let script = |name: &str, instruments: &str| {
        let path = dir.join(format!("{name}.plab"));
        let reports = if instruments.is_empty() {
            String::new()
        } else {
            format!(":instrument {instruments}\n")
        };
        let after = if instruments.is_empty() {
            ""
        } else {
            ":report timing\n:report ir-size\n"
        };
        std::fs::write(
            &path,
            format!(
                ":load {}\n{reports}:run default<O2>\n{after}:save {}\n",
                input.display(),
                dir.join(format!("{name}.bc")).display()
            ),
        )
        .unwrap();
        path
    };
    let instrumented = script("instrumented", "timing ir-size");
    let plain = script("plain", "");
    let run = |script: &Path| {
        let t = Instant::now();
        let out = Command::new(&passlab)
            .arg("run")
            .arg(script)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let elapsed = t.elapsed();
        assert!(
            out.status.success(),
            "passlab run {} failed: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        (elapsed, out.stdout.len())
    };
    let (mut ours, mut ours_plain, mut theirs, mut ratios) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut report_bytes = 0;
    for round in 0..rounds() {
        let (mut a, mut b, mut c) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
        for k in 0..3 {
            match (round + k) % 3 {
                0 => c = run_opt(input, &dir.join("opt.bc")),
                1 => (b, report_bytes) = run(&instrumented),
                _ => a = run(&plain).0,
            }
        }
        eprintln!(
            "  round {}: passlab run {:.2} s, with timing+ir-size {:.2} s, opt-19 {:.2} s",
            round + 1,
            a.as_secs_f64(),
            b.as_secs_f64(),
            c.as_secs_f64()
        );
        ratios.push(b.as_secs_f64() / c.as_secs_f64());
        ours_plain.push(a);
        ours.push(b);
        theirs.push(c);
    }
    let (p, i, t) = (median(ours_plain), median(ours), median(theirs));
    println!("{name} default<O2>, process against process (start-up, load, reports, write):");
    println!(
        "  passlab run (timing + ir-size, {report_bytes} bytes of reports) {:.3} s, opt-19 {:.3} s, ratio of medians {:.3}; median of per-round ratios {:.3} (target <= 1.10)",
        i.as_secs_f64(),
        t.as_secs_f64(),
        i.as_secs_f64() / t.as_secs_f64(),
        median_f(ratios)
    );
    println!(
        "  passlab run without instruments {:.3} s: ratio {:.3}; {} rounds",
        p.as_secs_f64(),
        p.as_secs_f64() / t.as_secs_f64(),
        rounds()
    );
}

/// 3. print-changed, and explore beside it.
fn print_changed(name: &str, input: &Path, dir: &Path, o2: &dyn Pass) {
    let t = {
        let mut v: Vec<Duration> = (0..rounds().min(3))
            .map(|_| run_opt(input, &dir.join("opt.bc")))
            .collect();
        v.sort();
        v[v.len() / 2]
    };
    let (mut ours, mut plain, mut explored) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ratios, mut explore_ratios) = (Vec::new(), Vec::new());
    let mut lines = String::new();
    let mut explore_line = String::new();
    for round in 0..rounds() {
        let (mut a, mut b, mut c) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
        for k in 0..3 {
            match (round + k) % 3 {
                0 => {
                    let t = Instant::now();
                    let mut m = Module::from_file(input).unwrap();
                    o2.apply(&mut m).unwrap();
                    m.save(dir.join("plain.bc")).unwrap();
                    a = t.elapsed();
                }
                1 => {
                    let out = std::fs::File::create(dir.join("changed.diff")).unwrap();
                    let changed = Rc::new(
                        PrintChanged::default().writing_to(Box::new(std::io::BufWriter::new(out))),
                    );
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
                    b = t.elapsed();
                    let (c, u) = changed.counts();
                    let bytes = std::fs::metadata(dir.join("changed.diff")).unwrap().len();
                    lines = format!(
                        "  passlab: {c} passes changed the IR, {u} did not; {:.1} MB of diffs",
                        bytes as f64 / 1e6
                    );
                }
                _ => {
                    let explore = Rc::new(Explore::new());
                    let t = Instant::now();
                    let mut m = Module::from_file(input).unwrap();
                    {
                        let _g = PassContext::inherit()
                            .with_instrument(explore.clone())
                            .enter()
                            .unwrap();
                        o2.apply(&mut m).unwrap();
                    }
                    let rec = explore.take();
                    m.save(dir.join("explored.bc")).unwrap();
                    c = t.elapsed();
                    let versions: usize = rec.functions.iter().map(|f| f.versions.len()).sum();
                    explore_line = format!(
                        "{} pass executions, {} functions, {versions} versions recorded",
                        rec.passes.len(),
                        rec.functions.len()
                    );
                }
            }
        }
        eprintln!(
            "  round {}: plain {:.2} s, print-changed {:.2} s ({:.2}x), explore {:.2} s ({:.2}x)",
            round + 1,
            a.as_secs_f64(),
            b.as_secs_f64(),
            b.as_secs_f64() / a.as_secs_f64(),
            c.as_secs_f64(),
            c.as_secs_f64() / a.as_secs_f64()
        );
        ratios.push(b.as_secs_f64() / a.as_secs_f64());
        explore_ratios.push(c.as_secs_f64() / a.as_secs_f64());
        plain.push(a);
        ours.push(b);
        explored.push(c);
    }
    let (ours, plain, explored) = (median(ours), median(plain), median(explored));
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
    println!("{name} default<O2> with print-changed (diffs to a file):");
    let ps = passlab::instrument::printer_stats();
    println!(
        "  function texts: {} printed whole, {} assembled from blocks ({} blocks printed)",
        ps.whole, ps.assembled, ps.blocks
    );
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
        "  passlab {:.3} s (median of {}), ratio to opt-19 -print-changed=diff {}{:.4} (target <= 1.0)",
        ours.as_secs_f64(),
        rounds(),
        if finished { "" } else { "< " },
        ours.as_secs_f64() / theirs.as_secs_f64(),
    );
    println!(
        "  against plain default<O2>: passlab {:.3} s, ratio of medians {:.2}, median of per-round ratios {:.2} (target <= 3); plain opt-19 {:.3} s, ratio {:.2}",
        plain.as_secs_f64(),
        ours.as_secs_f64() / plain.as_secs_f64(),
        median_f(ratios),
        t.as_secs_f64(),
        ours.as_secs_f64() / t.as_secs_f64()
    );
    println!(
        "  explore (the :explore recording: {explore_line}) {:.3} s, ratio to plain of medians {:.2}, median of per-round ratios {:.2}",
        explored.as_secs_f64(),
        explored.as_secs_f64() / plain.as_secs_f64(),
        median_f(explore_ratios)
    );
}
