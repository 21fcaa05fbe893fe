//! UDP header (RFC 768). RoCE v2 runs on destination port 4791; the source
//! port carries per-QP entropy for ECMP. The checksum is sent as 0 and not
//! checked on receive (IBTA Annex 17.3.3); the ICRC masks it.
//!
//! ```text
//!  | src port | dst port | length | checksum |
//! ```

use crate::{be, DropReason, Result};

/// UDP destination port of RoCE v2.
pub const ROCE_V2_PORT: u16 = 4791;
/// Header length.
pub const HEADER_LEN: usize = 8;

/// Byte ranges of the header fields.
pub mod field {
    use crate::Field;
    /// Source port.
    pub const SRC_PORT: Field = 0..2;
    /// Destination port.
    pub const DST_PORT: Field = 2..4;
    /// Length of header and payload.
    pub const LENGTH: Field = 4..6;
    /// Checksum.
    pub const CHECKSUM: Field = 6..8;
}

/// rxe's source port for a QP: `0xC000 | (hash & 0x3FFF)`, from the 14 low
/// bits of a flow hash, so the port is always in the dynamic range.
pub const fn roce_src_port(flow_hash: u32) -> u16 {
    0xC000 | (flow_hash & 0x3FFF) as u16
}

/// A view of a UDP header.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// A view without checks.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }
    /// A view whose header is present.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    /// The header is present.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            Err(DropReason::Truncated)
        } else {
            Ok(())
        }
    }
    /// Source port.
    pub fn src_port(&self) -> u16 {
        be::u16(&self.buffer.as_ref()[field::SRC_PORT])
    }
    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        be::u16(&self.buffer.as_ref()[field::DST_PORT])
    }
    /// Length of header and payload.
    pub fn len(&self) -> u16 {
        be::u16(&self.buffer.as_ref()[field::LENGTH])
    }
    /// Is the length field zero? (Never for a valid datagram.)
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Checksum.
    pub fn checksum(&self) -> u16 {
        be::u16(&self.buffer.as_ref()[field::CHECKSUM])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the source port.
    pub fn set_src_port(&mut self, v: u16) {
        be::set_u16(&mut self.buffer.as_mut()[field::SRC_PORT], v);
    }
    /// Sets the destination port.
    pub fn set_dst_port(&mut self, v: u16) {
        be::set_u16(&mut self.buffer.as_mut()[field::DST_PORT], v);
    }
    /// Sets the length.
    pub fn set_len(&mut self, v: u16) {
        be::set_u16(&mut self.buffer.as_mut()[field::LENGTH], v);
    }
    /// Sets the checksum.
    pub fn set_checksum(&mut self, v: u16) {
        be::set_u16(&mut self.buffer.as_mut()[field::CHECKSUM], v);
    }
}

/// A UDP header.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct UdpRepr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Checksum as sent (RoCE v2 sends 0; receivers ignore it).
    pub checksum: u16,
    /// Payload length (length field − 8).
    pub payload_len: u16,
}

impl UdpRepr {
    /// Parses the header: presence (truncated), then the RoCE v2 port
    /// (not-roce). The length is checked by the caller against the IP length.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<UdpRepr> {
        p.check_len()?;
        if p.dst_port() != ROCE_V2_PORT {
            return Err(DropReason::NotRoce);
        }
        Ok(UdpRepr {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            checksum: p.checksum(),
            payload_len: p.len().saturating_sub(HEADER_LEN as u16),
        })
    }

    /// Header length: 8.
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_src_port(self.src_port);
        p.set_dst_port(self.dst_port);
        p.set_len(HEADER_LEN as u16 + self.payload_len);
        p.set_checksum(self.checksum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // UDP header of shared vector frame 71.
    const HDR: [u8; 8] = [0xc0, 0xde, 0x12, 0xb7, 0x00, 0x38, 0x00, 0x00];

    #[test]
    fn deconstruct_parse_emit() {
        let p = Packet::new_checked(&HDR[..]).unwrap();
        assert_eq!(
            (p.src_port(), p.dst_port(), p.len(), p.checksum()),
            (49374, 4791, 56, 0)
        );
        let repr = UdpRepr::parse(&p).unwrap();
        assert_eq!(repr.payload_len, 48);
        let mut out = [0u8; 8];
        repr.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, HDR);
    }

    #[test]
    fn other_port_and_impossible_len() {
        let mut h = HDR;
        h[3] = 0xb8;
        assert_eq!(
            UdpRepr::parse(&Packet::new_unchecked(&h[..])).unwrap_err(),
            DropReason::NotRoce
        );
        assert_eq!(
            Packet::new_checked(&HDR[..7]).unwrap_err(),
            DropReason::Truncated
        );
    }

    #[test]
    fn src_port_is_dynamic() {
        assert_eq!(roce_src_port(0), 0xC000);
        assert_eq!(roce_src_port(0xFFFF_FFFF), 0xFFFF);
    }
}
