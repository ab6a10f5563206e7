//! Deterministic random numbers: one small generator whose output is fixed
//! by its seed on every platform and version. Searches (`:tune`) and the
//! JIT's `random(SEED)` buffers draw from it, so both repeat exactly.

#![forbid(unsafe_code)]

/// SplitMix64 (Steele, Lea and Flood): a small generator whose output is
/// fixed by its seed on every platform and version, which is what makes a
/// search reproducible (and `random(SEED)` buffers the same everywhere).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0), without modulo bias worth speaking of
    /// for the small `n` of pass pools.
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 11) as u128 * n as u128) >> 53) as usize
    }

    /// A number in `lo..=hi`.
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    /// `Rng::new(0)` starts from SplitMix64's state 0x9e37…7c15, so it
    /// yields the reference sequence of state 0 from its second value on
    /// (e220a8397b1dcdaf, 6e789e6aa1b965f4, 06c45d188009454f, …).
    #[test]
    fn the_sequence_is_splitmix64s() {
        let mut rng = Rng::new(0);
        let got: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(
            got,
            [
                0x6e78_9e6a_a1b9_65f4,
                0x06c4_5d18_8009_454f,
                0xf88b_b8a8_724c_81ec
            ]
        );
    }

    #[test]
    fn below_and_between_stay_in_range() {
        let mut rng = Rng::new(7);
        for n in 1..50 {
            assert!(rng.below(n) < n);
            let v = rng.between(3, 3 + n);
            assert!((3..=3 + n).contains(&v));
        }
    }
}
