//! libFuzzer's entry to the `sweep_spec` target (fuzz/targets/sweep_spec.rs, which the
//! replay test of the seed corpus runs too).
#![no_main]

#[path = "../targets/sweep_spec.rs"]
mod target;

libfuzzer_sys::fuzz_target!(
    init: {
        target::init();
    },
    |data: &[u8]| target::run(data)
);
