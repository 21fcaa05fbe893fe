//! A small seeded generator (SplitMix64) for reproducible benches: every
//! random choice of a test derives from one printed seed.

#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below((hi - lo + 1) as u64) as usize
    }

    /// True with probability `permille / 1000`.
    pub fn chance(&mut self, permille: u32) -> bool {
        self.below(1000) < permille as u64
    }

    /// A `bits`-bit value (1 to 64 bits) drawn to favour a field's edges:
    /// 0, 1, all ones and a single set bit an eighth each, `typical` (what
    /// real stacks send, e.g. rxe's IPv6 flow label 0 or TTL 64) a quarter,
    /// uniform the last quarter. Uniform values alone almost never give the
    /// all-zero field a real peer sends every time (DESIGN §5).
    pub fn edge(&mut self, bits: u32, typical: u64) -> u64 {
        assert!((1..=64).contains(&bits));
        let ones = u64::MAX >> (64 - bits);
        match self.below(8) {
            0 => 0,
            1 => 1,
            2 => ones,
            3 => 1 << self.below(bits as u64),
            4 | 5 => typical & ones,
            _ => self.next_u64() & ones,
        }
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }

    /// A seed from `ROCE_SEED` when set, else `default`; printed either way
    /// so a failing run can be repeated.
    pub fn seed_from_env(test: &str, default: u64) -> u64 {
        let seed = std::env::var("ROCE_SEED")
            .ok()
            .map(|s| {
                let s = s.trim();
                let parsed = match s.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16),
                    None => s.parse(),
                };
                parsed.unwrap_or_else(|_| panic!("ROCE_SEED={s:?} is not a number"))
            })
            .unwrap_or(default);
        eprintln!("{test}: seed {seed:#x} (set ROCE_SEED to repeat or vary)");
        seed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_in_range() {
        let mut a = Rng::new(1);
        let mut b = Rng::new(1);
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
            let r = a.range(3, 9);
            assert!((3..=9).contains(&r));
            b.range(3, 9);
        }
        let mut e = Rng::new(3);
        let draws: Vec<u64> = (0..8000).map(|_| e.edge(20, 0x12345)).collect();
        assert!(draws.iter().all(|&v| v < 1 << 20));
        let count = |want: u64| draws.iter().filter(|&&v| v == want).count();
        // 0 is drawn as itself (1/8) and as the single-bit edge never.
        assert!((800..1200).contains(&count(0)), "{}", count(0));
        assert!(
            (800..1200).contains(&count(0xF_FFFF)),
            "{}",
            count(0xF_FFFF)
        );
        assert!((1700..2300).contains(&count(0x12345)), "{}", count(0x12345));
        let single = draws.iter().filter(|v| v.count_ones() == 1).count();
        // 1 itself (1/8) plus the single-bit eighth.
        assert!((1700..2300).contains(&single), "{single}");
        let mut c = Rng::new(2);
        let hits = (0..10_000).filter(|_| c.chance(250)).count();
        assert!((2200..2800).contains(&hits), "{hits}");
    }
}
