//! libFuzzer's entry to the `kernel_message` target (fuzz/targets/kernel_message.rs, which the
//! replay test of the seed corpus runs too).
#![no_main]

#[path = "../targets/kernel_message.rs"]
mod target;

libfuzzer_sys::fuzz_target!(
    init: {
        target::init();
    },
    |data: &[u8]| target::run(data)
);
