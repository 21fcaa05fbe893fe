//! Why a receiver drops a frame: the `reason` vocabulary of DESIGN §7.
//!
//! Hardware drop counters, the CLI's JSON and the shared vectors all use these
//! names. A frame with several faults reports the first one a receiver meets
//! (Ethernet, IP, UDP, lengths, BTH, ICRC: see [`crate::frame`]); the order
//! of the variants here is only the counter order.

use core::fmt;

/// The reason a frame is dropped.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// Not a RoCE v2 frame: another EtherType, IP protocol or UDP port, a
    /// second VLAN tag, or an IPv4 fragment (a NIC datapath does not reassemble).
    NotRoce,
    /// The frame ends before a header it announces, or before the ICRC.
    Truncated,
    /// The IPv4 header checksum is wrong.
    BadIpChecksum,
    /// IPv4 options (IHL > 5) or IPv6 extension headers are present.
    IpOptions,
    /// IP and UDP lengths disagree, or the BTH payload is not 4-byte aligned.
    BadLength,
    /// The BTH transport version is not 0.
    BadTver,
    /// The opcode is not in the opcode table.
    UnknownOpcode,
    /// PadCnt is larger than the payload, or non-zero on an opcode without payload.
    BadPadcnt,
    /// The ICRC does not match.
    BadIcrc,
}

impl DropReason {
    /// Every reason, in counter order.
    pub const ALL: [DropReason; 9] = [
        DropReason::NotRoce,
        DropReason::Truncated,
        DropReason::BadIpChecksum,
        DropReason::IpOptions,
        DropReason::BadLength,
        DropReason::BadTver,
        DropReason::UnknownOpcode,
        DropReason::BadPadcnt,
        DropReason::BadIcrc,
    ];

    /// The DESIGN §7 name, as printed by `roce-sim parse`.
    pub const fn name(self) -> &'static str {
        match self {
            DropReason::NotRoce => "not-roce",
            DropReason::Truncated => "truncated",
            DropReason::BadIpChecksum => "bad-ip-checksum",
            DropReason::IpOptions => "ip-options",
            DropReason::BadLength => "bad-length",
            DropReason::BadTver => "bad-tver",
            DropReason::UnknownOpcode => "unknown-opcode",
            DropReason::BadPadcnt => "bad-padcnt",
            DropReason::BadIcrc => "bad-icrc",
        }
    }

    /// The reason with DESIGN §7 name `s`.
    pub fn from_name(s: &str) -> Option<DropReason> {
        DropReason::ALL.into_iter().find(|r| r.name() == s)
    }

    /// Index of the reason's counter (its position in [`DropReason::ALL`]).
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DropReason {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_index_is_position() {
        for (i, r) in DropReason::ALL.into_iter().enumerate() {
            assert_eq!(DropReason::from_name(r.name()), Some(r));
            assert_eq!(r.index(), i);
        }
        assert_eq!(DropReason::from_name("bad-crc"), None);
    }
}
