//! IPv6 header (RFC 8200). RoCE v2 needs UDP right after the fixed header;
//! extension headers are reported as `ip-options`.
//!
//! ```text
//!  0        1        2        3
//!  |ver| traffic cls | flow label (20)  |
//!  | payload length  | next hdr| hop lim|
//!  | source address (16)                |
//!  | destination address (16)           |
//! ```
//! The ICRC masks the traffic class, flow label and hop limit (not the version).

use crate::{be, DropReason, Result};

/// Fixed header length.
pub const HEADER_LEN: usize = 40;

/// Byte ranges of the header fields.
pub mod field {
    use crate::Field;
    /// Version (4), traffic class (8), flow label (20).
    pub const VER_TC_FLOW: Field = 0..4;
    /// Payload length.
    pub const LENGTH: Field = 4..6;
    /// Next header.
    pub const NXT_HDR: usize = 6;
    /// Hop limit.
    pub const HOP_LIMIT: usize = 7;
    /// Source address.
    pub const SRC: Field = 8..24;
    /// Destination address.
    pub const DST: Field = 24..40;
}

/// Next-header values of the IANA "IPv6 Extension Header Types" registry:
/// hop-by-hop, routing, fragment, ESP, AH, destination options, mobility,
/// HIP, shim6 and the two experimental values.
pub const EXTENSION_HEADERS: [u8; 11] = [0, 43, 44, 50, 51, 60, 135, 139, 140, 253, 254];

/// A view of an IPv6 header.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// A view without checks.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }
    /// A view whose fixed header is present.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    /// The fixed header is present.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            Err(DropReason::Truncated)
        } else {
            Ok(())
        }
    }
    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    fn word0(&self) -> u32 {
        be::u32(&self.b()[field::VER_TC_FLOW])
    }
    /// Version, 6 for IPv6.
    pub fn version(&self) -> u8 {
        self.b()[0] >> 4
    }
    /// Traffic class (DSCP and ECN).
    pub fn traffic_class(&self) -> u8 {
        (self.word0() >> 20) as u8
    }
    /// Flow label (20 bits).
    pub fn flow_label(&self) -> u32 {
        self.word0() & 0xF_FFFF
    }
    /// Payload length.
    pub fn payload_len(&self) -> u16 {
        be::u16(&self.b()[field::LENGTH])
    }
    /// Next header.
    pub fn next_header(&self) -> u8 {
        self.b()[field::NXT_HDR]
    }
    /// Hop limit.
    pub fn hop_limit(&self) -> u8 {
        self.b()[field::HOP_LIMIT]
    }
    /// Source address.
    pub fn src(&self) -> [u8; 16] {
        self.b()[field::SRC].try_into().unwrap()
    }
    /// Destination address.
    pub fn dst(&self) -> [u8; 16] {
        self.b()[field::DST].try_into().unwrap()
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn m(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    /// Sets version 6, the traffic class and the flow label.
    pub fn set_ver_tc_flow(&mut self, tc: u8, flow: u32) {
        let w = (6 << 28) | ((tc as u32) << 20) | (flow & 0xF_FFFF);
        be::set_u32(&mut self.m()[field::VER_TC_FLOW], w);
    }
    /// Sets the payload length.
    pub fn set_payload_len(&mut self, v: u16) {
        be::set_u16(&mut self.m()[field::LENGTH], v);
    }
    /// Sets the next header.
    pub fn set_next_header(&mut self, v: u8) {
        self.m()[field::NXT_HDR] = v;
    }
    /// Sets the hop limit.
    pub fn set_hop_limit(&mut self, v: u8) {
        self.m()[field::HOP_LIMIT] = v;
    }
    /// Sets the source address.
    pub fn set_src(&mut self, v: [u8; 16]) {
        self.m()[field::SRC].copy_from_slice(&v);
    }
    /// Sets the destination address.
    pub fn set_dst(&mut self, v: [u8; 16]) {
        self.m()[field::DST].copy_from_slice(&v);
    }
}

/// An IPv6 header without extension headers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Ipv6Repr {
    /// Traffic class.
    pub traffic_class: u8,
    /// Flow label (20 bits).
    pub flow_label: u32,
    /// Hop limit.
    pub hop_limit: u8,
    /// Next header (17 for RoCE v2).
    pub next_header: u8,
    /// Source address.
    pub src: [u8; 16],
    /// Destination address.
    pub dst: [u8; 16],
    /// Payload length.
    pub payload_len: u16,
}

impl Ipv6Repr {
    /// Parses the fixed header: version (not-roce), presence (truncated),
    /// extension headers (ip-options). IPv6 has no header checksum.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Ipv6Repr> {
        if p.buffer.as_ref().is_empty() {
            return Err(DropReason::Truncated);
        }
        if p.version() != 6 {
            return Err(DropReason::NotRoce);
        }
        p.check_len()?;
        if EXTENSION_HEADERS.contains(&p.next_header()) {
            return Err(DropReason::IpOptions);
        }
        Ok(Ipv6Repr {
            traffic_class: p.traffic_class(),
            flow_label: p.flow_label(),
            hop_limit: p.hop_limit(),
            next_header: p.next_header(),
            src: p.src(),
            dst: p.dst(),
            payload_len: p.payload_len(),
        })
    }

    /// Header length: 40.
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_ver_tc_flow(self.traffic_class, self.flow_label);
        p.set_payload_len(self.payload_len);
        p.set_next_header(self.next_header);
        p.set_hop_limit(self.hop_limit);
        p.set_src(self.src);
        p.set_dst(self.dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // fd00::a → fd00::b, TC 0x02, flow label 0x12345, UDP, hop limit 64.
    const HDR: [u8; 40] = [
        0x60, 0x21, 0x23, 0x45, 0x00, 0x50, 0x11, 0x40, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0x0a, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b,
    ];

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&HDR[..]).unwrap();
        assert_eq!(p.version(), 6);
        assert_eq!(p.traffic_class(), 0x02);
        assert_eq!(p.flow_label(), 0x12345);
        assert_eq!(p.payload_len(), 80);
        assert_eq!(p.next_header(), 17);
        assert_eq!(p.hop_limit(), 64);
        assert_eq!(p.src()[15], 0x0a);
        assert_eq!(p.dst()[0], 0xfd);
    }

    #[test]
    fn parse_emit_round_trip() {
        let repr = Ipv6Repr::parse(&Packet::new_unchecked(&HDR[..])).unwrap();
        let mut out = [0u8; 40];
        repr.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, HDR);
    }

    #[test]
    fn extension_headers_are_options() {
        for nh in EXTENSION_HEADERS {
            let mut h = HDR;
            h[6] = nh;
            assert_eq!(
                Ipv6Repr::parse(&Packet::new_unchecked(&h[..])).unwrap_err(),
                DropReason::IpOptions
            );
        }
    }

    #[test]
    fn impossible_len() {
        assert_eq!(
            Packet::new_checked(&HDR[..39]).unwrap_err(),
            DropReason::Truncated
        );
        let mut v4 = HDR;
        v4[0] = 0x45;
        assert_eq!(
            Ipv6Repr::parse(&Packet::new_unchecked(&v4[..])).unwrap_err(),
            DropReason::NotRoce
        );
    }
}
