//! The main job until the REPL exists: load a real C file, run the default
//! pipeline under nested pass contexts with timing and IR-size instruments,
//! and print what changed and which passes (LLVM's own included) did it.
//!
//! `cargo run --release --example tour [FILE.c|.ll|.bc ...]` — with no file,
//! zlib's adler32.c (from the libz-sys crate's bundled sources).

#[path = "../tests/common/inputs.rs"]
mod inputs;

use passlab::instrument::{IrSize, Timing};
use passlab::{pipeline, registry, Module, PassContext, Source, Stats};
use std::collections::BTreeSet;
use std::rc::Rc;

fn main() -> anyhow::Result<()> {
    let files: Vec<String> = std::env::args().skip(1).collect();
    let sources = if files.is_empty() {
        vec![inputs::zlib_source("adler32.c")]
    } else {
        files
            .iter()
            .map(Source::file)
            .collect::<passlab::Result<Vec<_>>>()?
    };
    let names: Vec<&str> = sources.iter().map(|s| s.name()).collect();
    let mut module = Module::load(&sources)?;
    let before = module.stats();
    let original = module.copy();
    println!(
        "loaded {} (clang-19 -O0, optnone disabled)",
        names.join(" + ")
    );
    println!("{}", summary(&before));

    // Outer scope: opt level 3, timing every pass. Inner scope: inherits it,
    // disables two passes — LLVM's loop vectorizer inside default<O3>, and
    // our Rust pass — and records the IR size after every pass.
    let timing = Rc::new(Timing::new());
    let size = Rc::new(IrSize::new());
    let _o3 = PassContext::inherit()
        .with_opt_level(3)
        .with_instrument(timing.clone())
        .enter()?;
    let _inner = PassContext::inherit()
        .with_disabled(["loop-vectorize", "strip-dead-internals"])
        .with_instrument(size.clone())
        .enter()?;
    let ctx = PassContext::current();
    let pipeline = pipeline::default_pipeline(ctx.opt_level())?;
    println!("\ncontext: {}", ctx.summary());
    println!("pipeline {}:", pipeline.info().name);
    for pass in pipeline.children() {
        let info = pass.info();
        let runs = ctx.pass_enabled(&info.name, info.opt_level);
        println!(
            "  {:<22} opt_level {}  {}",
            info.name,
            info.opt_level,
            if runs { "runs" } else { "skipped (disabled)" }
        );
    }

    let fingerprint = module.fingerprint();
    pipeline.apply(&mut module)?;
    let after = module.stats();
    println!("\nafter {}: {}", pipeline.info().name, summary(&after));
    println!(
        "changed: {}",
        if module.fingerprint() != fingerprint {
            "yes"
        } else {
            "no"
        }
    );

    let report = timing.report();
    println!();
    print!("{}", report.flat_table(Some(12)));
    let mut changes = size.changes();
    changes.retain(|p| p.depth > 0 && p.unit != passlab::llvm::IrUnit::Module);
    changes.sort_by_key(|p| p.delta);
    println!("\npasses inside LLVM's pipeline that removed the most instructions:");
    for p in changes.iter().take(6) {
        println!(
            "  {:<22} on {} {:<24} {:>+6}",
            p.pass, p.unit, p.target, p.delta
        );
    }
    println!(
        "  ({} passes ran; {} changed the instruction count)",
        size.series().len(),
        size.changes().len()
    );

    println!("\nper function (instructions):");
    for f in &before.per_function {
        match after.per_function.iter().find(|g| g.name == f.name) {
            Some(g) => println!(
                "  {:<24} {:>6} -> {:>6}",
                f.name, f.instructions, g.instructions
            ),
            None => println!("  {:<24} {:>6} -> (removed)", f.name, f.instructions),
        }
    }
    println!("\nper opcode (largest changes):");
    let ops: BTreeSet<&String> = before
        .per_opcode
        .keys()
        .chain(after.per_opcode.keys())
        .collect();
    let mut deltas: Vec<(i64, &str, u64, u64)> = ops
        .into_iter()
        .map(|op| {
            let (b, a) = (
                before.per_opcode.get(op).copied().unwrap_or(0),
                after.per_opcode.get(op).copied().unwrap_or(0),
            );
            (-(a as i64 - b as i64).abs(), op.as_str(), b, a)
        })
        .collect();
    deltas.sort();
    for (_, op, b, a) in deltas.iter().take(8) {
        println!("  {op:<16} {b:>6} -> {a:>6}");
    }

    // The same pipeline with the loop vectorizer back on, for comparison.
    drop(_inner);
    let mut vectorized = original.copy();
    registry::get_pass("default<O3>")?.apply(&mut vectorized)?;
    let same = vectorized.print() == module.print();
    println!(
        "\nwith loop-vectorize enabled again: {} instructions, {}",
        vectorized.stats().instructions,
        if same {
            "the same IR (the vectorizer found nothing to do)"
        } else {
            "different IR"
        }
    );
    Ok(())
}

fn summary(s: &Stats) -> String {
    format!(
        "{} functions, {} basic blocks, {} instructions",
        s.functions, s.blocks, s.instructions
    )
}
