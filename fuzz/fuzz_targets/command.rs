//! libFuzzer's entry to the `command` target (fuzz/targets/command.rs, which the
//! replay test of the seed corpus runs too).
#![no_main]

#[path = "../targets/command.rs"]
mod target;

libfuzzer_sys::fuzz_target!(
    init: {
        target::init();
    },
    |data: &[u8]| target::run(data)
);
