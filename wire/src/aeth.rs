//! AETH syndromes and the IBTA timer tables (IBTA 9.7.5.2, 9.7.6.1).
//!
//! Syndrome byte: bit 7 reserved, bits 6:5 the type (00 ACK, 01 RNR NAK,
//! 10 reserved, 11 NAK), bits 4:0 the value: an ACK credit code, an RNR timer
//! code or a NAK code.

use core::fmt;

/// Decoded AETH syndrome byte. [`Syndrome::from_byte`] and
/// [`Syndrome::to_byte`] round-trip every byte value.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Syndrome {
    /// Positive acknowledgement with an end-to-end credit code.
    Ack(AckCredits),
    /// Receiver not ready: retry after the timer.
    RnrNak(RnrTimer),
    /// Negative acknowledgement.
    Nak(NakCode),
    /// Bit 7 set, or type 10: reserved encodings, kept verbatim.
    Reserved(u8),
}

impl Syndrome {
    /// Decodes a syndrome byte.
    pub const fn from_byte(b: u8) -> Syndrome {
        let value = b & 0x1F;
        if b & 0x80 != 0 {
            return Syndrome::Reserved(b);
        }
        match (b >> 5) & 3 {
            0 => Syndrome::Ack(AckCredits(value)),
            1 => Syndrome::RnrNak(RnrTimer(value)),
            3 => Syndrome::Nak(NakCode::from_value(value)),
            _ => Syndrome::Reserved(b),
        }
    }

    /// Encodes the syndrome byte.
    pub const fn to_byte(self) -> u8 {
        match self {
            Syndrome::Ack(c) => c.0 & 0x1F,
            Syndrome::RnrNak(t) => 0x20 | (t.0 & 0x1F),
            Syndrome::Nak(n) => 0x60 | (n.value() & 0x1F),
            Syndrome::Reserved(b) => b,
        }
    }

    /// An ACK that carries no credit information (code 31).
    pub const ACK_NO_CREDITS: Syndrome = Syndrome::Ack(AckCredits::NONE);
}

/// An ACK credit code (0..=31): the receive WQEs the responder has available.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct AckCredits(pub u8);

impl AckCredits {
    /// Code 31: no credit information (UC, or an unlimited responder).
    pub const NONE: AckCredits = AckCredits(31);

    /// Credits for codes 0..=30 (IBTA table 46).
    pub const TABLE: [u16; 31] = [
        0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
        2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
    ];

    /// The number of credits, or `None` for code 31 (no information).
    pub const fn credits(self) -> Option<u16> {
        if (self.0 as usize) < Self::TABLE.len() {
            Some(Self::TABLE[self.0 as usize])
        } else {
            None
        }
    }

    /// The largest code whose credit count does not exceed `n` (what a
    /// responder advertises when `n` receive WQEs are posted).
    pub const fn for_credits(n: u32) -> AckCredits {
        let mut code = Self::TABLE.len() - 1;
        while Self::TABLE[code] as u32 > n {
            code -= 1;
        }
        AckCredits(code as u8)
    }
}

/// An RNR NAK timer code (0..=31), also the `min_rnr_timer` QP attribute.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct RnrTimer(pub u8);

impl RnrTimer {
    /// Microseconds for each code (IBTA table 45): code 0 is the longest, 655.36 ms.
    pub const TABLE_US: [u32; 32] = [
        655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560,
        3_840, 5_120, 7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880,
        163_840, 245_760, 327_680, 491_520,
    ];

    /// The delay in microseconds.
    pub const fn micros(self) -> u32 {
        Self::TABLE_US[(self.0 & 0x1F) as usize]
    }
}

/// A NAK code (syndrome type 11).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum NakCode {
    /// 0: PSN sequence error (the responder expected an earlier PSN).
    PsnSequenceError,
    /// 1: invalid request.
    InvalidRequest,
    /// 2: remote access error (rkey, PD, access or bounds).
    RemoteAccessError,
    /// 3: remote operational error.
    RemoteOperationalError,
    /// 4: invalid RD request.
    InvalidRdRequest,
    /// 5..=31: reserved codes, kept verbatim.
    Reserved(u8),
}

impl NakCode {
    /// The NAK code for value `v` (5 bits).
    pub const fn from_value(v: u8) -> NakCode {
        match v & 0x1F {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            4 => NakCode::InvalidRdRequest,
            r => NakCode::Reserved(r),
        }
    }

    /// The 5-bit value.
    pub const fn value(self) -> u8 {
        match self {
            NakCode::PsnSequenceError => 0,
            NakCode::InvalidRequest => 1,
            NakCode::RemoteAccessError => 2,
            NakCode::RemoteOperationalError => 3,
            NakCode::InvalidRdRequest => 4,
            NakCode::Reserved(r) => r & 0x1F,
        }
    }
}

impl fmt::Display for NakCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NakCode::PsnSequenceError => f.write_str("PSN sequence error"),
            NakCode::InvalidRequest => f.write_str("invalid request"),
            NakCode::RemoteAccessError => f.write_str("remote access error"),
            NakCode::RemoteOperationalError => f.write_str("remote operational error"),
            NakCode::InvalidRdRequest => f.write_str("invalid RD request"),
            NakCode::Reserved(r) => write!(f, "reserved NAK code {r}"),
        }
    }
}

/// The local ACK timeout QP attribute (5 bits): 4.096 µs × 2^t, 0 = disabled.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct LocalAckTimeout(u8);

impl LocalAckTimeout {
    /// Largest valid exponent.
    pub const MAX: u8 = 31;
    /// One unit of the timeout: 4.096 µs.
    pub const UNIT_NS: u64 = 4096;

    /// The timeout with exponent `t`, if `t <= 31`.
    pub const fn new(t: u8) -> Option<LocalAckTimeout> {
        if t <= Self::MAX {
            Some(LocalAckTimeout(t))
        } else {
            None
        }
    }

    /// The exponent.
    pub const fn code(self) -> u8 {
        self.0
    }

    /// The timeout in nanoseconds, `None` when disabled (t = 0).
    pub const fn nanos(self) -> Option<u64> {
        if self.0 == 0 {
            None
        } else {
            Some(Self::UNIT_NS << self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syndrome_round_trips_every_byte() {
        for b in 0..=255u8 {
            assert_eq!(Syndrome::from_byte(b).to_byte(), b, "{b:#x}");
        }
    }

    #[test]
    fn syndromes_of_the_shared_vectors() {
        // Values from ../shared/vectors (ACK, credits 5, NAKs, RNR NAK).
        assert_eq!(Syndrome::from_byte(31), Syndrome::ACK_NO_CREDITS);
        assert_eq!(Syndrome::from_byte(5), Syndrome::Ack(AckCredits(5)));
        assert_eq!(
            Syndrome::from_byte(96),
            Syndrome::Nak(NakCode::PsnSequenceError)
        );
        assert_eq!(
            Syndrome::from_byte(97),
            Syndrome::Nak(NakCode::InvalidRequest)
        );
        assert_eq!(
            Syndrome::from_byte(98),
            Syndrome::Nak(NakCode::RemoteAccessError)
        );
        assert_eq!(
            Syndrome::from_byte(99),
            Syndrome::Nak(NakCode::RemoteOperationalError)
        );
        assert_eq!(Syndrome::from_byte(46), Syndrome::RnrNak(RnrTimer(14)));
        assert_eq!(Syndrome::from_byte(0x40), Syndrome::Reserved(0x40));
    }

    #[test]
    fn credit_table_shape() {
        // 0..=4 then the 1, 1.5 pattern doubling: each entry is 2 codes earlier × 2.
        assert_eq!(AckCredits(4).credits(), Some(4));
        for c in 7..31usize {
            assert_eq!(AckCredits::TABLE[c], 2 * AckCredits::TABLE[c - 2]);
        }
        assert_eq!(AckCredits::NONE.credits(), None);
        assert_eq!(AckCredits::for_credits(0), AckCredits(0));
        assert_eq!(AckCredits::for_credits(5), AckCredits(4));
        assert_eq!(AckCredits::for_credits(100_000), AckCredits(30));
    }

    #[test]
    fn rnr_table_shape() {
        assert_eq!(RnrTimer(0).micros(), 655_360);
        assert_eq!(RnrTimer(1).micros(), 10);
        for c in 5..32usize {
            assert_eq!(RnrTimer::TABLE_US[c], 2 * RnrTimer::TABLE_US[c - 2]);
        }
    }

    #[test]
    fn local_ack_timeout() {
        assert_eq!(LocalAckTimeout::new(0).unwrap().nanos(), None);
        assert_eq!(LocalAckTimeout::new(1).unwrap().nanos(), Some(8192));
        assert_eq!(LocalAckTimeout::new(14).unwrap().nanos(), Some(67_108_864));
        assert_eq!(LocalAckTimeout::new(31).unwrap().nanos(), Some(4096 << 31));
        assert_eq!(LocalAckTimeout::new(32), None);
    }
}
