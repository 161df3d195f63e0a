//! SplitMix64: the one pseudo-random generator of the project. The simulator's seeded
//! schedules, the program generators of the test crate and the command-line fuzzer all draw
//! from it, so a seed means the same stream everywhere. It is tiny, fast, passes BigCrush,
//! and is not cryptographic (nothing here needs that).

/// A SplitMix64 stream.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The stream for `seed`.
    pub fn new(seed: u64) -> Rng {
        // The xor keeps seed 0 from starting at the all-zero state (harmless for SplitMix,
        // but it also keeps the streams of existing seeds, recorded in test files, stable).
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below_u64(&mut self, n: u64) -> u64 {
        if n <= 1 { 0 } else { self.next_u64() % n }
    }

    /// An index in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.below_u64(n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    /// The stream is SplitMix64's: the reference value for state 0 after one step, reached
    /// from the seed that xors to 0.
    #[test]
    fn it_is_splitmix64() {
        let mut r = Rng::new(0x5DEE_CE66_D1CE_4E5B);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        let mut r = Rng::new(1);
        assert!((0..1000).all(|_| r.below(7) < 7));
        assert_eq!(r.below(0), 0);
    }
}
