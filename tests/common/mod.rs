#![allow(dead_code)]
pub mod cache;
pub mod inputs;
pub mod opt19;
pub mod projects;

/// A search trial's phase, index, ordering, instructions and verdict: what
/// must repeat when a search does.
pub type Outcome = (
    String,
    usize,
    Vec<String>,
    Option<u64>,
    passlab::tune::Verdict,
);

/// The outcome of every trial of a search.
pub fn outcome(t: &passlab::tune::Tuning) -> Vec<Outcome> {
    t.trials
        .iter()
        .map(|t| {
            (
                t.phase.clone(),
                t.index,
                t.ordering.clone(),
                t.instructions,
                t.verdict.clone(),
            )
        })
        .collect()
}

/// A small module with a loop, for pass tests.
pub const SUM_C: &str = r#"
int sum(int *a, int n) {
    int s = 0;
    for (int i = 0; i < n; i++)
        s += a[i];
    return s;
}
int twice(int x) { return x * 2; }
"#;
