//! Path MTU (IBTA 9.7.7 and the `enum ib_mtu` codes) and the packet length
//! rules of a multi-packet message.
//!
//! FIRST and MIDDLE packets carry exactly one PMTU of payload, LAST carries
//! 1..=PMTU, ONLY carries 0..=PMTU. The pad count is `(-len) & 3`.

use crate::opcode::Position;
use core::fmt;

/// A path MTU: the payload bytes one packet may carry.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Pmtu {
    /// 256 bytes (code 1).
    Mtu256 = 1,
    /// 512 bytes (code 2).
    Mtu512 = 2,
    /// 1024 bytes (code 3).
    Mtu1024 = 3,
    /// 2048 bytes (code 4).
    Mtu2048 = 4,
    /// 4096 bytes (code 5).
    Mtu4096 = 5,
}

impl Pmtu {
    /// Every PMTU, smallest first.
    pub const ALL: [Pmtu; 5] = [
        Pmtu::Mtu256,
        Pmtu::Mtu512,
        Pmtu::Mtu1024,
        Pmtu::Mtu2048,
        Pmtu::Mtu4096,
    ];

    /// The PMTU with IBTA code `code` (1..=5).
    pub const fn from_code(code: u8) -> Option<Pmtu> {
        match code {
            1 => Some(Pmtu::Mtu256),
            2 => Some(Pmtu::Mtu512),
            3 => Some(Pmtu::Mtu1024),
            4 => Some(Pmtu::Mtu2048),
            5 => Some(Pmtu::Mtu4096),
            _ => None,
        }
    }

    /// The PMTU of exactly `bytes` bytes.
    pub const fn from_bytes(bytes: u32) -> Option<Pmtu> {
        match bytes {
            256 => Some(Pmtu::Mtu256),
            512 => Some(Pmtu::Mtu512),
            1024 => Some(Pmtu::Mtu1024),
            2048 => Some(Pmtu::Mtu2048),
            4096 => Some(Pmtu::Mtu4096),
            _ => None,
        }
    }

    /// The IBTA code, 1..=5.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// Payload bytes per packet: `128 << code`.
    pub const fn bytes(self) -> u32 {
        128 << (self as u32)
    }

    /// The number of packets a message of `len` bytes takes (a zero-length
    /// message is one ONLY packet).
    pub const fn packets(self, len: u64) -> u64 {
        if len == 0 {
            1
        } else {
            len.div_ceil(self.bytes() as u64)
        }
    }

    /// Checks the payload length of a packet at `position` in its message.
    pub const fn check_len(self, position: Position, len: u32) -> Result<(), LengthError> {
        let mtu = self.bytes();
        match position {
            Position::First | Position::Middle if len != mtu => Err(LengthError::NotPmtu),
            Position::Last if len == 0 => Err(LengthError::Empty),
            Position::Last | Position::Only if len > mtu => Err(LengthError::TooLong),
            _ => Ok(()),
        }
    }
}

/// How a packet breaks the length rules.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LengthError {
    /// A FIRST or MIDDLE packet that does not carry exactly one PMTU.
    NotPmtu,
    /// A LAST packet without payload.
    Empty,
    /// More payload than one PMTU.
    TooLong,
}

impl fmt::Display for LengthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LengthError::NotPmtu => "FIRST/MIDDLE packet payload is not exactly one PMTU",
            LengthError::Empty => "LAST packet has no payload",
            LengthError::TooLong => "packet payload exceeds the PMTU",
        })
    }
}

/// The pad count of a payload of `len` bytes: `(-len) & 3`.
pub const fn pad_count(len: usize) -> u8 {
    (len.wrapping_neg() & 3) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_bytes() {
        for (i, p) in Pmtu::ALL.into_iter().enumerate() {
            assert_eq!(p.code() as usize, i + 1);
            assert_eq!(p.bytes(), 256 << i);
            assert_eq!(Pmtu::from_code(p.code()), Some(p));
            assert_eq!(Pmtu::from_bytes(p.bytes()), Some(p));
        }
        assert_eq!(Pmtu::from_code(0), None);
        assert_eq!(Pmtu::from_code(6), None);
        assert_eq!(Pmtu::from_bytes(1500), None);
    }

    #[test]
    fn length_rules() {
        let m = Pmtu::Mtu1024;
        assert_eq!(m.check_len(Position::First, 1024), Ok(()));
        assert_eq!(
            m.check_len(Position::First, 1023),
            Err(LengthError::NotPmtu)
        );
        assert_eq!(
            m.check_len(Position::Middle, 1025),
            Err(LengthError::NotPmtu)
        );
        assert_eq!(m.check_len(Position::Last, 1), Ok(()));
        assert_eq!(m.check_len(Position::Last, 0), Err(LengthError::Empty));
        assert_eq!(m.check_len(Position::Last, 1025), Err(LengthError::TooLong));
        assert_eq!(m.check_len(Position::Only, 0), Ok(()));
        assert_eq!(m.check_len(Position::Only, 1024), Ok(()));
        assert_eq!(m.check_len(Position::Only, 1025), Err(LengthError::TooLong));
    }

    #[test]
    fn packets_and_pad() {
        assert_eq!(Pmtu::Mtu256.packets(0), 1);
        assert_eq!(Pmtu::Mtu256.packets(256), 1);
        assert_eq!(Pmtu::Mtu256.packets(257), 2);
        for len in 0..64usize {
            let p = pad_count(len) as usize;
            assert!(p < 4 && (len + p) % 4 == 0);
        }
    }
}
