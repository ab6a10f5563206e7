//! Every fuzz target of passlab's core over its seed corpus and mutations
//! of it (`fuzz/replay.rs`); the kernel's message target is replayed in
//! `kernel/tests/fuzz_replay.rs`. One test, one target after another: the
//! command target works in a folder of its own (it changes this process's
//! working directory).

#[path = "../fuzz/replay.rs"]
mod replay;

#[path = "../fuzz/targets/bitcode.rs"]
mod bitcode;
#[path = "../fuzz/targets/command.rs"]
mod command;
#[path = "../fuzz/targets/compile_commands.rs"]
mod compile_commands;
#[path = "../fuzz/targets/config.rs"]
mod config;
#[path = "../fuzz/targets/ir_text.rs"]
mod ir_text;
#[path = "../fuzz/targets/pipeline.rs"]
mod pipeline;
#[path = "../fuzz/targets/sweep_spec.rs"]
mod sweep_spec;

/// A target: its name, its set-up and its body.
type Target = (&'static str, fn(), fn(&[u8]));

#[test]
fn every_target_over_its_seeds_and_their_mutations() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = root.join("target/fuzz-replay");
    let targets: [Target; 7] = [
        ("pipeline", pipeline::init, pipeline::run),
        ("ir_text", ir_text::init, ir_text::run),
        ("bitcode", bitcode::init, bitcode::run),
        ("config", config::init, config::run),
        ("sweep_spec", sweep_spec::init, sweep_spec::run),
        (
            "compile_commands",
            compile_commands::init,
            compile_commands::run,
        ),
        // Last: it moves into a folder of its own.
        ("command", command::init, command::run),
    ];
    for (name, init, run) in targets {
        let start = std::time::Instant::now();
        let r = replay::replay(name, &root.join("fuzz/corpus").join(name), &out, init, run);
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{name}: {} seeds and {} inputs in all: ok ({:.0} executions/s in this test build)",
            r.seeds,
            r.runs,
            r.runs as f64 / secs
        );
    }
}
