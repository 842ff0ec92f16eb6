//! A small deterministic generator (xorshift), shared by the tests and the examples that
//! make random problems, so each failure or figure names a reproducible seed.

/// xorshift: the same numbers on every machine.
pub struct Rng(pub u64);

impl Rng {
    /// A generator for `seed` (any value).
    pub fn seeded(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
