//! libFuzzer's entry to the `config` target (fuzz/targets/config.rs, which the
//! replay test of the seed corpus runs too).
#![no_main]

#[path = "../targets/config.rs"]
mod target;

libfuzzer_sys::fuzz_target!(
    init: {
        target::init();
    },
    |data: &[u8]| target::run(data)
);
