//! Arbitrary text as an LLVM IR module (`Module::from_ir`, which parses and
//! verifies): no crash, no panic, errors with a message. A module that
//! loads is counted, printed (whole and per function), copied and put
//! through a snapshot, checking what passlab documents: the counts agree,
//! a copy prints the same, and a restored snapshot prints exactly
//! as the module did.
use passlab::Module;

/// Nothing to gather before the first input.
pub fn init() {}

/// One input, as libFuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let m = match Module::from_ir(text, "fuzz.ll") {
        Ok(m) => m,
        Err(e) => {
            assert!(!e.to_string().trim().is_empty(), "empty error message");
            return;
        }
    };
    let stats = m.stats();
    assert_eq!(
        stats.instructions,
        m.instruction_count(),
        "stats() and instruction_count() disagree"
    );
    assert_eq!(stats.functions as usize, stats.per_function.len());
    assert_eq!(
        stats.instructions,
        stats
            .per_function
            .iter()
            .map(|f| f.instructions)
            .sum::<u64>(),
        "per-function instructions do not add up"
    );
    assert_eq!(
        stats.instructions,
        stats.per_opcode.values().sum::<u64>(),
        "per-opcode counts do not add up"
    );
    let _ = stats.table();
    let printed = m.print();
    let _ = m.name();
    let _ = m.triple();
    let _ = m.verify();
    for f in m.function_names() {
        // Names with a NUL byte cannot be looked up: an error, not a panic.
        if let Err(e) = m.print_function(&f) {
            assert!(!e.to_string().trim().is_empty());
        }
        let _ = m.function_fingerprint(&f);
    }
    // A fingerprint tells whether a module changed, not whether two modules
    // are alike (it hashes the objects' identity): compare copies as text.
    let copy = m.copy();
    assert_eq!(copy.print(), printed, "a copy prints differently");
    let _ = m.bitcode();
    let snapshot = m.snapshot();
    let mut restored = m.copy();
    restored
        .restore(&snapshot)
        .expect("a snapshot does not restore");
    assert_eq!(
        restored.print(),
        printed,
        "the restored snapshot prints differently"
    );
}
