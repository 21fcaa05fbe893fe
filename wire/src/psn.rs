//! Packet sequence numbers: 24-bit counters that wrap (IBTA 9.7.1).
//!
//! Two PSNs are compared by the signed 24-bit distance between them, exactly
//! as rxe's `psn_compare`: `((a - b) << 8) as i32`. A PSN up to 2^23 - 1
//! ahead of another is "after" it; 2^23 or more ahead wraps round to "before".
//! The hardware comparators are tested with the same vectors.

use core::cmp::Ordering;
use core::fmt;

/// A 24-bit packet sequence number.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default)]
pub struct Psn(u32);

impl Psn {
    /// Width of a PSN in bits.
    pub const BITS: u32 = 24;
    /// Mask of the valid bits; also the largest PSN.
    pub const MASK: u32 = (1 << Self::BITS) - 1;
    /// The largest PSN, 0xFF_FFFF.
    pub const MAX: Psn = Psn(Self::MASK);
    /// Half the PSN space: the largest forward distance still "ahead".
    pub const HALF: u32 = 1 << (Self::BITS - 1);

    /// A PSN from the low 24 bits of `v` (higher bits are dropped, as on the wire).
    pub const fn new(v: u32) -> Psn {
        Psn(v & Self::MASK)
    }

    /// A PSN from `v` if it fits in 24 bits.
    pub const fn checked(v: u32) -> Option<Psn> {
        if v <= Self::MASK {
            Some(Psn(v))
        } else {
            None
        }
    }

    /// The PSN as a number in 0..=0xFF_FFFF.
    pub const fn value(self) -> u32 {
        self.0
    }

    /// `self + n`, wrapping at 2^24.
    pub const fn add(self, n: u32) -> Psn {
        Psn::new(self.0.wrapping_add(n))
    }

    /// `self - n`, wrapping at 2^24.
    pub const fn sub(self, n: u32) -> Psn {
        Psn::new(self.0.wrapping_sub(n))
    }

    /// The next PSN.
    pub const fn next(self) -> Psn {
        self.add(1)
    }

    /// Signed distance `self - other` in -2^23..2^23 (rxe `psn_compare`).
    pub const fn diff(self, other: Psn) -> i32 {
        ((self.0.wrapping_sub(other.0)) << 8) as i32 >> 8
    }

    /// Forward distance from `other` to `self`, modulo 2^24.
    pub const fn forward_from(self, other: Psn) -> u32 {
        self.0.wrapping_sub(other.0) & Self::MASK
    }

    /// Serial-number order: `Less` when `self` is before `other`.
    ///
    /// Not a total order (it is not transitive across half the space), so
    /// `Psn` deliberately does not implement `Ord`.
    pub const fn wrapping_cmp(self, other: Psn) -> Ordering {
        let d = self.diff(other);
        if d < 0 {
            Ordering::Less
        } else if d > 0 {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }

    /// `self` is strictly before `other`.
    pub const fn is_before(self, other: Psn) -> bool {
        self.diff(other) < 0
    }

    /// `self` is strictly after `other`.
    pub const fn is_after(self, other: Psn) -> bool {
        self.diff(other) > 0
    }
}

impl fmt::Debug for Psn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Psn({:#08x})", self.0)
    }
}

impl fmt::Display for Psn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl From<Psn> for u32 {
    fn from(p: Psn) -> u32 {
        p.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_to_24_bits() {
        assert_eq!(Psn::new(0x0123_4567).value(), 0x23_4567);
        assert_eq!(Psn::checked(0x100_0000), None);
        assert_eq!(Psn::checked(0xFF_FFFF), Some(Psn::MAX));
    }

    #[test]
    fn wraps() {
        assert_eq!(Psn::MAX.next(), Psn::new(0));
        assert_eq!(Psn::new(0).sub(1), Psn::MAX);
        assert_eq!(Psn::new(5).add(0xFF_FFFF), Psn::new(4));
        assert_eq!(Psn::new(2).forward_from(Psn::MAX), 3);
    }

    #[test]
    fn compares_across_the_wrap() {
        let a = Psn::new(0xFF_FFFE);
        let b = Psn::new(1);
        assert!(a.is_before(b));
        assert!(b.is_after(a));
        assert_eq!(b.diff(a), 3);
        assert_eq!(a.diff(b), -3);
        assert_eq!(a.wrapping_cmp(a), Ordering::Equal);
    }

    #[test]
    fn half_space_boundary() {
        let z = Psn::new(0);
        // 2^23 - 1 ahead is after; 2^23 ahead reads as 2^23 behind.
        assert!(Psn::new(Psn::HALF - 1).is_after(z));
        assert_eq!(Psn::new(Psn::HALF).diff(z), -(Psn::HALF as i32));
        assert!(Psn::new(Psn::HALF).is_before(z));
    }

    /// The defining formula, written independently with i64 arithmetic.
    fn reference_diff(a: u32, b: u32) -> i32 {
        let d = (a as i64 - b as i64).rem_euclid(1 << 24);
        if d >= 1 << 23 {
            (d - (1 << 24)) as i32
        } else {
            d as i32
        }
    }

    proptest::proptest! {
        #[test]
        fn diff_matches_modular_reference(a in 0u32..=Psn::MASK, b in 0u32..=Psn::MASK) {
            proptest::prop_assert_eq!(Psn::new(a).diff(Psn::new(b)), reference_diff(a, b));
        }

        #[test]
        fn add_then_diff(a in 0u32..=Psn::MASK, n in 0u32..Psn::HALF) {
            let p = Psn::new(a);
            proptest::prop_assert_eq!(p.add(n).diff(p), n as i32);
            proptest::prop_assert_eq!(p.add(n).sub(n), p);
        }
    }
}
