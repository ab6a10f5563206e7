//! libFuzzer's entry to the `compile_commands` target
//! (fuzz/targets/compile_commands.rs, which the replay test of the seed
//! corpus runs too).
#![no_main]

#[path = "../targets/compile_commands.rs"]
mod target;

libfuzzer_sys::fuzz_target!(
    init: {
        target::init();
    },
    |data: &[u8]| target::run(data)
);
