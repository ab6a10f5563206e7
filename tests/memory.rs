//! Resident memory stays flat over 1,000 pipeline runs on one module, each
//! with its rollback snapshot, some of them failing and rolled back.

mod common;

use passlab::{pipeline, Module};

fn resident_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4
}

#[test]
fn thousand_runs_keep_resident_memory_flat() {
    let mut m = Module::load(&[common::inputs::zlib_source("crc32.c")]).unwrap();
    let text = m.print();
    let good = pipeline::parse("mem2reg,instcombine,simplifycfg").unwrap();
    let bad = pipeline::parse("instcombine,trigger-verifier-error").unwrap();
    let run = |i: usize, m: &mut Module| {
        if i % 10 == 9 {
            assert!(bad.apply(m).is_err());
        } else {
            good.apply(m).unwrap();
        }
        if i % 50 == 49 {
            // Start again from the original, so every run has work to do.
            *m = Module::from_ir(&text, "crc32.ll").unwrap();
        }
    };
    for i in 0..100 {
        run(i, &mut m);
    }
    let warm = resident_kib();
    for i in 100..1100 {
        run(i, &mut m);
    }
    let end = resident_kib();
    let growth = (end as f64 - warm as f64) / warm as f64;
    println!(
        "resident memory: {warm} KiB after 100 runs, {end} KiB after 1,100 ({:+.2}%)",
        growth * 100.0
    );
    assert!(
        growth < 0.05,
        "resident memory grew {:.1}% ({warm} -> {end} KiB)",
        growth * 100.0
    );
}
