//! Ethernet II header with at most one 802.1Q tag (no FCS: frames are as a
//! MAC hands them over, and as pcap stores them).
//!
//! ```text
//!  0      6      12           14 (untagged)
//!  | dst  | src  | EtherType  | ...
//!  | dst  | src  | 0x8100 | TCI (PCP 3, DEI 1, VID 12) | EtherType | ...  (18)
//! ```

use crate::{be, DropReason, Result};

/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
/// TPID of an 802.1Q tag.
pub const TPID_8021Q: u16 = 0x8100;
/// TPID of an 802.1ad service tag (not supported: dropped as not-roce).
pub const TPID_8021AD: u16 = 0x88A8;
/// Shortest Ethernet frame without FCS; shorter frames are padded with zeros.
pub const MIN_FRAME_LEN: usize = 60;

/// Byte ranges of the header fields.
pub mod field {
    use crate::Field;
    /// Destination MAC.
    pub const DST: Field = 0..6;
    /// Source MAC.
    pub const SRC: Field = 6..12;
    /// EtherType, or the 802.1Q TPID when tagged.
    pub const ETHERTYPE: Field = 12..14;
    /// Tag control information (tagged frames).
    pub const TCI: Field = 14..16;
    /// EtherType after the tag (tagged frames).
    pub const INNER_ETHERTYPE: Field = 16..18;
}

/// Length of an untagged header.
pub const HEADER_LEN: usize = field::ETHERTYPE.end;
/// Length of a header with one 802.1Q tag.
pub const TAGGED_HEADER_LEN: usize = field::INNER_ETHERTYPE.end;

/// A view of an Ethernet header in a buffer.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// A view without length checks.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// A view whose header is all present.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the whole header (with its tag, if tagged) is present.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN || (self.is_tagged() && len < TAGGED_HEADER_LEN) {
            Err(DropReason::Truncated)
        } else {
            Ok(())
        }
    }

    /// The buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Destination MAC.
    pub fn dst(&self) -> [u8; 6] {
        self.buffer.as_ref()[field::DST].try_into().unwrap()
    }

    /// Source MAC.
    pub fn src(&self) -> [u8; 6] {
        self.buffer.as_ref()[field::SRC].try_into().unwrap()
    }

    /// The EtherType (or TPID) field at offset 12.
    pub fn outer_ethertype(&self) -> u16 {
        be::u16(&self.buffer.as_ref()[field::ETHERTYPE])
    }

    /// Is there an 802.1Q tag?
    pub fn is_tagged(&self) -> bool {
        self.buffer.as_ref().len() >= HEADER_LEN && self.outer_ethertype() == TPID_8021Q
    }

    /// The tag control information, if tagged.
    pub fn tci(&self) -> Option<u16> {
        self.is_tagged()
            .then(|| be::u16(&self.buffer.as_ref()[field::TCI]))
    }

    /// The EtherType of the payload (after the tag, if any).
    pub fn ethertype(&self) -> u16 {
        if self.is_tagged() {
            be::u16(&self.buffer.as_ref()[field::INNER_ETHERTYPE])
        } else {
            self.outer_ethertype()
        }
    }

    /// Header length: 14, or 18 with a tag.
    pub fn header_len(&self) -> usize {
        if self.is_tagged() {
            TAGGED_HEADER_LEN
        } else {
            HEADER_LEN
        }
    }

    /// What follows the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn buf(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    /// Sets the destination MAC.
    pub fn set_dst(&mut self, v: [u8; 6]) {
        self.buf()[field::DST].copy_from_slice(&v);
    }
    /// Sets the source MAC.
    pub fn set_src(&mut self, v: [u8; 6]) {
        self.buf()[field::SRC].copy_from_slice(&v);
    }
    /// Writes an untagged EtherType.
    pub fn set_ethertype(&mut self, v: u16) {
        be::set_u16(&mut self.buf()[field::ETHERTYPE], v);
    }
    /// Writes an 802.1Q tag and the inner EtherType.
    pub fn set_tag(&mut self, tci: u16, ethertype: u16) {
        be::set_u16(&mut self.buf()[field::ETHERTYPE], TPID_8021Q);
        be::set_u16(&mut self.buf()[field::TCI], tci);
        be::set_u16(&mut self.buf()[field::INNER_ETHERTYPE], ethertype);
    }
}

/// An 802.1Q tag.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct VlanTag {
    /// Priority code point, 3 bits.
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN id, 12 bits.
    pub vid: u16,
}

impl VlanTag {
    /// The tag from its TCI.
    pub const fn from_tci(tci: u16) -> VlanTag {
        VlanTag {
            pcp: (tci >> 13) as u8,
            dei: tci & 0x1000 != 0,
            vid: tci & 0x0FFF,
        }
    }
    /// The TCI.
    pub const fn tci(self) -> u16 {
        ((self.pcp as u16 & 7) << 13) | ((self.dei as u16) << 12) | (self.vid & 0x0FFF)
    }
}

/// An Ethernet header.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct EthernetRepr {
    /// Destination MAC.
    pub dst: [u8; 6],
    /// Source MAC.
    pub src: [u8; 6],
    /// The 802.1Q tag, if any.
    pub vlan: Option<VlanTag>,
    /// EtherType of the payload.
    pub ethertype: u16,
}

impl EthernetRepr {
    /// Parses a header. A second tag (802.1Q or 802.1ad) is `NotRoce`: one tag
    /// is all a RoCE v2 port is required to strip.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<EthernetRepr> {
        p.check_len()?;
        if matches!(p.outer_ethertype(), TPID_8021AD)
            || (p.is_tagged() && matches!(p.ethertype(), TPID_8021Q | TPID_8021AD))
        {
            return Err(DropReason::NotRoce);
        }
        Ok(EthernetRepr {
            dst: p.dst(),
            src: p.src(),
            vlan: p.tci().map(VlanTag::from_tci),
            ethertype: p.ethertype(),
        })
    }

    /// Header length.
    pub const fn header_len(&self) -> usize {
        if self.vlan.is_some() {
            TAGGED_HEADER_LEN
        } else {
            HEADER_LEN
        }
    }

    /// Writes the header into the start of `p`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_dst(self.dst);
        p.set_src(self.src);
        match self.vlan {
            Some(tag) => p.set_tag(tag.tci(), self.ethertype),
            None => p.set_ethertype(self.ethertype),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A tagged header: dst 02:..:0b, src 02:..:0a, VLAN PCP 3 VID 100, IPv4.
    const TAGGED: [u8; 18] = [
        0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a, 0x81, 0x00, 0x60, 0x64, 0x08, 0x00,
    ];

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&TAGGED[..]).unwrap();
        assert_eq!(p.dst(), [2, 0, 0, 0, 0, 0x0b]);
        assert_eq!(p.src(), [2, 0, 0, 0, 0, 0x0a]);
        assert!(p.is_tagged());
        assert_eq!(p.tci(), Some(0x6064));
        assert_eq!(p.ethertype(), ETHERTYPE_IPV4);
        assert_eq!(p.header_len(), 18);
    }

    #[test]
    fn parse_and_emit() {
        let repr = EthernetRepr::parse(&Packet::new_unchecked(&TAGGED[..])).unwrap();
        assert_eq!(
            repr.vlan,
            Some(VlanTag {
                pcp: 3,
                dei: false,
                vid: 100
            })
        );
        let mut out = [0u8; 18];
        repr.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, TAGGED);
    }

    #[test]
    fn impossible_len() {
        assert_eq!(
            Packet::new_checked(&TAGGED[..13]).unwrap_err(),
            DropReason::Truncated
        );
        assert_eq!(
            Packet::new_checked(&TAGGED[..17]).unwrap_err(),
            DropReason::Truncated
        );
        assert!(Packet::new_checked(&TAGGED[..14]).is_err());
    }

    #[test]
    fn double_tag_is_not_roce() {
        let mut qinq = [0u8; 22];
        qinq[..16].copy_from_slice(&TAGGED[..16]);
        qinq[16..18].copy_from_slice(&[0x81, 0x00]);
        assert_eq!(
            EthernetRepr::parse(&Packet::new_unchecked(&qinq[..])).unwrap_err(),
            DropReason::NotRoce
        );
    }
}
