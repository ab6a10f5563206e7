//! A small crate for passlab's `:dep` test: what a pass writer might keep
//! in a crate of their own.

/// `k` when `c == 2^k` (and `c > 1`).
pub fn shift_for(c: u64) -> Option<u32> {
    (c > 1 && c.is_power_of_two()).then(|| c.trailing_zeros())
}
