//! The kernel's message decoding (fuzz target `kernel_message`) over its
//! seed corpus and mutations of it (`fuzz/replay.rs`).

#[path = "../../fuzz/replay.rs"]
mod replay;

#[path = "../../fuzz/targets/kernel_message.rs"]
mod kernel_message;

#[test]
fn kernel_message_over_its_seeds_and_their_mutations() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let r = replay::replay(
        "kernel_message",
        &root.join("fuzz/corpus/kernel_message"),
        &root.join("target/fuzz-replay"),
        kernel_message::init,
        kernel_message::run,
    );
    println!(
        "kernel_message: {} seeds and {} inputs in all: ok",
        r.seeds, r.runs
    );
}
