//! libFuzzer's entry to the `ir_text` target (fuzz/targets/ir_text.rs, which the
//! replay test of the seed corpus runs too).
#![no_main]

#[path = "../targets/ir_text.rs"]
mod target;

libfuzzer_sys::fuzz_target!(
    init: {
        target::init();
    },
    |data: &[u8]| target::run(data)
);
