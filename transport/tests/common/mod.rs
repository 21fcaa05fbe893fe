//! What the transport's integration tests share: the seeded generator
//! (SplitMix64, as `roce_sim::rng`; this crate cannot depend on roce-sim)
//! and the `ROCE_SEED` override.
#![allow(dead_code)]

/// `ROCE_SEED` (decimal or 0x-hex) when set, else `default`.
pub fn seed_from_env(default: u64) -> u64 {
    match std::env::var("ROCE_SEED") {
        Ok(s) => {
            let s = s.trim();
            match s.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16),
                None => s.parse(),
            }
            .expect("ROCE_SEED is a number")
        }
        Err(_) => default,
    }
}

/// SplitMix64: every random choice of a run derives from its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }
    pub fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len() as u64) as usize]
    }
    /// True with probability `ppm` per million.
    pub fn ppm(&mut self, ppm: u32) -> bool {
        self.below(1_000_000) < ppm as u64
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    /// An edge value half the time, else uniform: 0, 1, all ones, single bits.
    pub fn edgy(&mut self, bits: u32) -> u64 {
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1 << bits) - 1
        };
        match self.below(6) {
            0 => 0,
            1 => 1,
            2 => mask,
            3 => 1 << self.below(bits as u64),
            _ => self.next() & mask,
        }
    }
}
