//! libFuzzer's entry to the `pipeline` target (fuzz/targets/pipeline.rs, which the
//! replay test of the seed corpus runs too).
#![no_main]

#[path = "../targets/pipeline.rs"]
mod target;

libfuzzer_sys::fuzz_target!(
    init: {
        target::init();
    },
    |data: &[u8]| target::run(data)
);
