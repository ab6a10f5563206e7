//! Arbitrary bytes as LLVM bitcode (`Module::from_bitcode`, what `:load
//! FILE.bc` and Python's `Module.from_bitcode` read): no crash of the
//! process, no panic, errors with a message. LLVM's bitcode reader trusts
//! its input and crashes on some corrupt files; passlab reads bitcode in a
//! forked child first, so such an input must come back as an error. A
//! module that loads is counted, printed and written back as bitcode that
//! reads again.
use passlab::Module;

/// Nothing to gather before the first input.
pub fn init() {}

/// One input, as libFuzzer gives it.
pub fn run(data: &[u8]) {
    let m = match Module::from_bitcode(data, "fuzz.bc") {
        Ok(m) => m,
        Err(e) => {
            assert!(!e.to_string().trim().is_empty(), "empty error message");
            return;
        }
    };
    assert_eq!(m.stats().instructions, m.instruction_count());
    let printed = m.print();
    let again =
        Module::from_bitcode(&m.bitcode(), "again.bc").expect("written bitcode reads again");
    assert_eq!(again.instruction_count(), m.instruction_count());
    assert!(!printed.is_empty());
}
