//! RoCE v2 on the wire, as data.
//!
//! The one software truth the hardware of roce-hdl is checked against:
//! smoltcp-style views (`Packet<T: AsRef<[u8]>>` with `mod field` byte ranges
//! and `check_len`) and `Repr`s (`parse`, `emit`, `header_len`) for every
//! header of a RoCE v2 frame, the opcode table, PSN arithmetic, AETH
//! syndromes and the IBTA timer tables, the ICRC, and a whole-frame
//! [`Frame::parse`] / [`FrameRepr::emit`] that reports the first fault in the
//! order a receiver checks it ([`DropReason`]).
//!
//! Header layouts are in `docs/WIRE.md`; protocol facts in DESIGN §8.
//!
//! `no_std`; the `std` feature (on by default) only adds `std::error::Error`.
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod aeth;
pub mod bth;
pub mod ethernet;
pub mod ext;
pub mod frame;
pub mod icrc;
pub mod ipv4;
pub mod ipv6;
pub mod json;
pub mod mr;
pub mod opcode;
pub mod pmtu;
pub mod psn;
pub mod reason;
pub mod udp;

pub use aeth::{AckCredits, LocalAckTimeout, NakCode, RnrTimer, Syndrome};
pub use bth::BthRepr;
pub use ethernet::{EthernetRepr, VlanTag};
pub use ext::{AethRepr, AtomicAckEthRepr, AtomicEthRepr, DethRepr, ExtHeaders, RethRepr};
pub use frame::{Frame, FrameRepr, IpRepr};
pub use ipv4::Ipv4Repr;
pub use ipv6::Ipv6Repr;
pub use opcode::{ExtKind, OpKind, Opcode, OpcodeInfo, Position, Transport};
pub use pmtu::{LengthError, Pmtu};
pub use psn::Psn;
pub use reason::DropReason;
pub use udp::UdpRepr;

/// Results of parsing: the error is the reason a receiver drops the frame.
pub type Result<T> = core::result::Result<T, DropReason>;

/// A byte range inside a header (smoltcp's `Field`).
pub type Field = core::ops::Range<usize>;

/// Big-endian reads and writes used by every view.
pub(crate) mod be {
    pub fn u16(b: &[u8]) -> u16 {
        u16::from_be_bytes([b[0], b[1]])
    }
    pub fn u24(b: &[u8]) -> u32 {
        u32::from_be_bytes([0, b[0], b[1], b[2]])
    }
    pub fn u32(b: &[u8]) -> u32 {
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }
    pub fn u64(b: &[u8]) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[..8]);
        u64::from_be_bytes(a)
    }
    pub fn set_u16(b: &mut [u8], v: u16) {
        b[..2].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_u24(b: &mut [u8], v: u32) {
        b[..3].copy_from_slice(&v.to_be_bytes()[1..]);
    }
    pub fn set_u32(b: &mut [u8], v: u32) {
        b[..4].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_u64(b: &mut [u8], v: u64) {
        b[..8].copy_from_slice(&v.to_be_bytes());
    }
}
