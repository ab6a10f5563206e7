//! libFuzzer's entry to the `bitcode` target (fuzz/targets/bitcode.rs, which the
//! replay test of the seed corpus runs too).
#![no_main]

#[path = "../targets/bitcode.rs"]
mod target;

libfuzzer_sys::fuzz_target!(
    init: {
        target::init();
    },
    |data: &[u8]| target::run(data)
);
