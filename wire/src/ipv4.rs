//! IPv4 header (RFC 791). A RoCE v2 receiver takes only option-free,
//! unfragmented UDP datagrams.
//!
//! ```text
//!  0        1        2        3
//!  |ver|ihl | TOS    | total length    |
//!  | identification  |flg| frag offset |
//!  | TTL    | proto  | header checksum |
//!  | source address                    |
//!  | destination address               |
//! ```
//! The ICRC masks TOS, TTL and the checksum (they change hop by hop).

use crate::{be, DropReason, Result};

/// IP protocol number of UDP.
pub const PROTOCOL_UDP: u8 = 17;
/// Header length without options.
pub const HEADER_LEN: usize = 20;

/// Byte ranges of the header fields.
pub mod field {
    use crate::Field;
    /// Version (4 bits) and IHL (4 bits).
    pub const VER_IHL: usize = 0;
    /// DSCP and ECN.
    pub const TOS: usize = 1;
    /// Total length.
    pub const LENGTH: Field = 2..4;
    /// Identification.
    pub const IDENT: Field = 4..6;
    /// Flags (3 bits) and fragment offset (13 bits).
    pub const FLG_OFF: Field = 6..8;
    /// Time to live.
    pub const TTL: usize = 8;
    /// Protocol.
    pub const PROTOCOL: usize = 9;
    /// Header checksum.
    pub const CHECKSUM: Field = 10..12;
    /// Source address.
    pub const SRC: Field = 12..16;
    /// Destination address.
    pub const DST: Field = 16..20;
}

/// The RFC 1071 one's-complement sum of `data`, folded to 16 bits.
pub fn ones_complement_sum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [b] = chunks.remainder() {
        sum += (*b as u32) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    sum as u16
}

/// A view of an IPv4 header.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// A view without checks.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// A view whose header, options included, is present.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// The fixed header and any options are present, and IHL ≥ 5.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            Err(DropReason::Truncated)
        } else if self.header_len() < HEADER_LEN {
            Err(DropReason::BadLength)
        } else if len < self.header_len() {
            Err(DropReason::Truncated)
        } else {
            Ok(())
        }
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    /// Version, 4 for IPv4.
    pub fn version(&self) -> u8 {
        self.b()[field::VER_IHL] >> 4
    }
    /// Header length in bytes (IHL × 4).
    pub fn header_len(&self) -> usize {
        (self.b()[field::VER_IHL] & 0x0F) as usize * 4
    }
    /// Type of service (DSCP and ECN).
    pub fn tos(&self) -> u8 {
        self.b()[field::TOS]
    }
    /// Total length.
    pub fn total_len(&self) -> u16 {
        be::u16(&self.b()[field::LENGTH])
    }
    /// Identification.
    pub fn ident(&self) -> u16 {
        be::u16(&self.b()[field::IDENT])
    }
    /// Don't fragment.
    pub fn dont_frag(&self) -> bool {
        self.b()[field::FLG_OFF.start] & 0x40 != 0
    }
    /// More fragments.
    pub fn more_frags(&self) -> bool {
        self.b()[field::FLG_OFF.start] & 0x20 != 0
    }
    /// Fragment offset in 8-byte units.
    pub fn frag_offset(&self) -> u16 {
        be::u16(&self.b()[field::FLG_OFF]) & 0x1FFF
    }
    /// Time to live.
    pub fn ttl(&self) -> u8 {
        self.b()[field::TTL]
    }
    /// Protocol.
    pub fn protocol(&self) -> u8 {
        self.b()[field::PROTOCOL]
    }
    /// Header checksum.
    pub fn checksum(&self) -> u16 {
        be::u16(&self.b()[field::CHECKSUM])
    }
    /// Source address.
    pub fn src(&self) -> [u8; 4] {
        self.b()[field::SRC].try_into().unwrap()
    }
    /// Destination address.
    pub fn dst(&self) -> [u8; 4] {
        self.b()[field::DST].try_into().unwrap()
    }
    /// Does the header checksum verify (options included)?
    pub fn verify_checksum(&self) -> bool {
        ones_complement_sum(&self.b()[..self.header_len()]) == 0xFFFF
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn m(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    /// Sets version 4 and the header length (a multiple of 4, 20..=60).
    pub fn set_ver_hlen(&mut self, header_len: usize) {
        self.m()[field::VER_IHL] = 0x40 | (header_len / 4) as u8;
    }
    /// Sets TOS.
    pub fn set_tos(&mut self, v: u8) {
        self.m()[field::TOS] = v;
    }
    /// Sets the total length.
    pub fn set_total_len(&mut self, v: u16) {
        be::set_u16(&mut self.m()[field::LENGTH], v);
    }
    /// Sets the identification.
    pub fn set_ident(&mut self, v: u16) {
        be::set_u16(&mut self.m()[field::IDENT], v);
    }
    /// Sets flags (DF only; MF clear) and a zero fragment offset.
    pub fn set_dont_frag(&mut self, df: bool) {
        be::set_u16(&mut self.m()[field::FLG_OFF], if df { 0x4000 } else { 0 });
    }
    /// Sets TTL.
    pub fn set_ttl(&mut self, v: u8) {
        self.m()[field::TTL] = v;
    }
    /// Sets the protocol.
    pub fn set_protocol(&mut self, v: u8) {
        self.m()[field::PROTOCOL] = v;
    }
    /// Sets the source address.
    pub fn set_src(&mut self, v: [u8; 4]) {
        self.m()[field::SRC].copy_from_slice(&v);
    }
    /// Sets the destination address.
    pub fn set_dst(&mut self, v: [u8; 4]) {
        self.m()[field::DST].copy_from_slice(&v);
    }
    /// Computes and writes the header checksum.
    pub fn fill_checksum(&mut self) {
        be::set_u16(&mut self.m()[field::CHECKSUM], 0);
        let hl = self.header_len();
        let c = !ones_complement_sum(&self.b()[..hl]);
        be::set_u16(&mut self.m()[field::CHECKSUM], c);
    }
}

/// An option-free, unfragmented IPv4 header.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Ipv4Repr {
    /// DSCP and ECN.
    pub tos: u8,
    /// Identification.
    pub ident: u16,
    /// Don't-fragment flag.
    pub dont_frag: bool,
    /// Time to live.
    pub ttl: u8,
    /// Protocol of the payload.
    pub protocol: u8,
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// Payload length (total length − 20).
    pub payload_len: u16,
}

impl Ipv4Repr {
    /// Parses the header in the order a receiver checks it: version
    /// (not-roce), IHL and presence (bad-length / truncated), checksum,
    /// options, fragments (not-roce). The total length is checked against
    /// the frame by the caller, after UDP ([`crate::frame`]).
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Ipv4Repr> {
        if p.buffer.as_ref().is_empty() {
            return Err(DropReason::Truncated);
        }
        if p.version() != 4 {
            return Err(DropReason::NotRoce);
        }
        p.check_len()?;
        if !p.verify_checksum() {
            return Err(DropReason::BadIpChecksum);
        }
        if p.header_len() != HEADER_LEN {
            return Err(DropReason::IpOptions);
        }
        if p.more_frags() || p.frag_offset() != 0 {
            return Err(DropReason::NotRoce);
        }
        let total = p.total_len() as usize;
        Ok(Ipv4Repr {
            tos: p.tos(),
            ident: p.ident(),
            dont_frag: p.dont_frag(),
            ttl: p.ttl(),
            protocol: p.protocol(),
            src: p.src(),
            dst: p.dst(),
            payload_len: total.saturating_sub(HEADER_LEN) as u16,
        })
    }

    /// Header length (always 20: options are never emitted).
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header with its checksum.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_ver_hlen(HEADER_LEN);
        p.set_tos(self.tos);
        p.set_total_len(HEADER_LEN as u16 + self.payload_len);
        p.set_ident(self.ident);
        p.set_dont_frag(self.dont_frag);
        p.set_ttl(self.ttl);
        p.set_protocol(self.protocol);
        p.set_src(self.src);
        p.set_dst(self.dst);
        p.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The IPv4 header of shared vector frame 71 (10.0.0.1 → 10.0.0.2, UDP).
    const HDR: [u8; 20] = [
        0x45, 0x02, 0x00, 0x4c, 0x10, 0x83, 0x40, 0x00, 0x40, 0x11, 0x16, 0x1a, 0x0a, 0x00, 0x00,
        0x01, 0x0a, 0x00, 0x00, 0x02,
    ];

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&HDR[..]).unwrap();
        assert_eq!(p.version(), 4);
        assert_eq!(p.header_len(), 20);
        assert_eq!(p.tos(), 2);
        assert_eq!(p.total_len(), 76);
        assert_eq!(p.ident(), 0x1083);
        assert!(p.dont_frag() && !p.more_frags());
        assert_eq!(p.ttl(), 64);
        assert_eq!(p.protocol(), PROTOCOL_UDP);
        assert_eq!(p.checksum(), 0x161a);
        assert!(p.verify_checksum());
    }

    #[test]
    fn parse_emit_round_trip() {
        let repr = Ipv4Repr::parse(&Packet::new_unchecked(&HDR[..])).unwrap();
        assert_eq!(repr.payload_len, 56);
        let mut out = [0u8; 20];
        repr.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, HDR);
    }

    #[test]
    fn checksum_options_fragments() {
        let mut bad = HDR;
        bad[8] = 63;
        assert_eq!(
            Ipv4Repr::parse(&Packet::new_unchecked(&bad[..])).unwrap_err(),
            DropReason::BadIpChecksum
        );
        let mut frag = HDR;
        frag[6] = 0x20; // MF
        Packet::new_unchecked(&mut frag[..]).fill_checksum();
        assert_eq!(
            Ipv4Repr::parse(&Packet::new_unchecked(&frag[..])).unwrap_err(),
            DropReason::NotRoce
        );
        let mut opts = [0u8; 24];
        opts[..20].copy_from_slice(&HDR);
        opts[0] = 0x46;
        opts[20] = 1; // NOP option
        Packet::new_unchecked(&mut opts[..]).fill_checksum();
        assert_eq!(
            Ipv4Repr::parse(&Packet::new_unchecked(&opts[..])).unwrap_err(),
            DropReason::IpOptions
        );
    }

    #[test]
    fn impossible_len() {
        assert_eq!(
            Packet::new_checked(&HDR[..19]).unwrap_err(),
            DropReason::Truncated
        );
        let mut short_ihl = HDR;
        short_ihl[0] = 0x44;
        assert_eq!(
            Packet::new_checked(&short_ihl[..]).unwrap_err(),
            DropReason::BadLength
        );
        let mut long_ihl = HDR;
        long_ihl[0] = 0x46;
        assert_eq!(
            Packet::new_checked(&long_ihl[..]).unwrap_err(),
            DropReason::Truncated
        );
        let mut v6 = HDR;
        v6[0] = 0x65;
        assert_eq!(
            Ipv4Repr::parse(&Packet::new_unchecked(&v6[..])).unwrap_err(),
            DropReason::NotRoce
        );
    }
}
