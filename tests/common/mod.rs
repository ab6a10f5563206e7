#![allow(dead_code)]
pub mod inputs;

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
