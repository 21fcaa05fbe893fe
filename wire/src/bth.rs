//! Base transport header (IBTA 9.2), 12 bytes, first after UDP.
//!
//! ```text
//!  0        1                 2        3
//!  | OpCode |SE|M|Pad|TVer    | P_Key           |
//!  |F|B|resv6| DestQP (24)                      |
//!  |A|resv7 | PSN (24)                          |
//! ```
//! The ICRC masks byte 4 (FECN, BECN and the 6 reserved bits) to 0xFF.

use crate::opcode::Opcode;
use crate::psn::Psn;
use crate::{be, DropReason, Result};

/// Header length.
pub const HEADER_LEN: usize = 12;
/// The transport version this implementation speaks.
pub const TVER: u8 = 0;
/// Default partition key (full member of the default partition).
pub const DEFAULT_PKEY: u16 = 0xFFFF;

/// Byte ranges of the header fields.
pub mod field {
    use crate::Field;
    /// Opcode.
    pub const OPCODE: usize = 0;
    /// SE, M, PadCnt, TVer.
    pub const FLAGS: usize = 1;
    /// Partition key.
    pub const PKEY: Field = 2..4;
    /// FECN, BECN, 6 reserved bits (masked by the ICRC).
    pub const FECN_BECN: usize = 4;
    /// Destination QP.
    pub const DEST_QP: Field = 5..8;
    /// AckReq and 7 reserved bits.
    pub const ACKREQ: usize = 8;
    /// Packet sequence number.
    pub const PSN: Field = 9..12;
}

/// A view of a BTH.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// A view without checks.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }
    /// A view whose 12 bytes are present.
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
    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    /// Opcode.
    pub fn opcode(&self) -> Opcode {
        Opcode(self.b()[field::OPCODE])
    }
    /// Solicited event.
    pub fn solicited(&self) -> bool {
        self.b()[field::FLAGS] & 0x80 != 0
    }
    /// Migration request.
    pub fn mig_req(&self) -> bool {
        self.b()[field::FLAGS] & 0x40 != 0
    }
    /// Pad count.
    pub fn pad_count(&self) -> u8 {
        (self.b()[field::FLAGS] >> 4) & 3
    }
    /// Transport version.
    pub fn tver(&self) -> u8 {
        self.b()[field::FLAGS] & 0x0F
    }
    /// Partition key.
    pub fn pkey(&self) -> u16 {
        be::u16(&self.b()[field::PKEY])
    }
    /// Forward explicit congestion notification.
    pub fn fecn(&self) -> bool {
        self.b()[field::FECN_BECN] & 0x80 != 0
    }
    /// Backward explicit congestion notification.
    pub fn becn(&self) -> bool {
        self.b()[field::FECN_BECN] & 0x40 != 0
    }
    /// Destination QP number.
    pub fn dest_qp(&self) -> u32 {
        be::u24(&self.b()[field::DEST_QP])
    }
    /// Acknowledge request.
    pub fn ack_req(&self) -> bool {
        self.b()[field::ACKREQ] & 0x80 != 0
    }
    /// Packet sequence number.
    pub fn psn(&self) -> Psn {
        Psn::new(be::u24(&self.b()[field::PSN]))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn m(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    /// Sets the opcode.
    pub fn set_opcode(&mut self, v: Opcode) {
        self.m()[field::OPCODE] = v.0;
    }
    /// Sets SE, M, PadCnt and TVer.
    pub fn set_flags(&mut self, se: bool, m: bool, pad: u8, tver: u8) {
        self.m()[field::FLAGS] = (se as u8) << 7 | (m as u8) << 6 | (pad & 3) << 4 | (tver & 0x0F);
    }
    /// Sets the partition key.
    pub fn set_pkey(&mut self, v: u16) {
        be::set_u16(&mut self.m()[field::PKEY], v);
    }
    /// Sets FECN and BECN; the reserved bits are zero.
    pub fn set_fecn_becn(&mut self, fecn: bool, becn: bool) {
        self.m()[field::FECN_BECN] = (fecn as u8) << 7 | (becn as u8) << 6;
    }
    /// Sets the destination QP (24 bits).
    pub fn set_dest_qp(&mut self, v: u32) {
        be::set_u24(&mut self.m()[field::DEST_QP], v);
    }
    /// Sets AckReq and the PSN; the reserved bits are zero.
    pub fn set_ackreq_psn(&mut self, ack_req: bool, psn: Psn) {
        self.m()[field::ACKREQ] = (ack_req as u8) << 7;
        be::set_u24(&mut self.m()[field::PSN], psn.value());
    }
}

/// A BTH. Reserved bits are sent as zero and ignored on receive.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct BthRepr {
    /// Opcode.
    pub opcode: Opcode,
    /// Solicited event.
    pub solicited: bool,
    /// Migration request.
    pub mig_req: bool,
    /// Pad count (0..=3).
    pub pad_count: u8,
    /// Transport version.
    pub tver: u8,
    /// Partition key.
    pub pkey: u16,
    /// FECN.
    pub fecn: bool,
    /// BECN.
    pub becn: bool,
    /// Destination QP number (24 bits).
    pub dest_qp: u32,
    /// Acknowledge request.
    pub ack_req: bool,
    /// Packet sequence number.
    pub psn: Psn,
}

impl BthRepr {
    /// Parses a BTH (only its presence is checked here; TVer and the opcode
    /// are judged by the frame parser).
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<BthRepr> {
        p.check_len()?;
        Ok(BthRepr {
            opcode: p.opcode(),
            solicited: p.solicited(),
            mig_req: p.mig_req(),
            pad_count: p.pad_count(),
            tver: p.tver(),
            pkey: p.pkey(),
            fecn: p.fecn(),
            becn: p.becn(),
            dest_qp: p.dest_qp(),
            ack_req: p.ack_req(),
            psn: p.psn(),
        })
    }

    /// Header length: 12.
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_opcode(self.opcode);
        p.set_flags(self.solicited, self.mig_req, self.pad_count, self.tver);
        p.set_pkey(self.pkey);
        p.set_fecn_becn(self.fecn, self.becn);
        p.set_dest_qp(self.dest_qp);
        p.set_ackreq_psn(self.ack_req, self.psn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // BTH of shared vector frame 71: RC SEND ONLY, P_Key 0xFFFF, QP 0x123,
    // AckReq, PSN 0x800.
    const HDR: [u8; 12] = [
        0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x01, 0x23, 0x80, 0x00, 0x08, 0x00,
    ];

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&HDR[..]).unwrap();
        assert_eq!(p.opcode(), Opcode(4));
        assert!(!p.solicited() && !p.mig_req());
        assert_eq!((p.pad_count(), p.tver(), p.pkey()), (0, 0, 0xFFFF));
        assert!(!p.fecn() && !p.becn());
        assert_eq!(p.dest_qp(), 0x123);
        assert!(p.ack_req());
        assert_eq!(p.psn(), Psn::new(0x800));
    }

    #[test]
    fn construct() {
        let repr = BthRepr {
            opcode: Opcode(0x0B),
            solicited: true,
            mig_req: true,
            pad_count: 3,
            tver: 0,
            pkey: 0x8001,
            fecn: true,
            becn: false,
            dest_qp: 0xABCDEF,
            ack_req: false,
            psn: Psn::MAX,
        };
        let mut out = [0u8; 12];
        repr.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(
            out,
            [0x0b, 0xf0, 0x80, 0x01, 0x80, 0xab, 0xcd, 0xef, 0x00, 0xff, 0xff, 0xff]
        );
        assert_eq!(
            BthRepr::parse(&Packet::new_unchecked(&out[..])).unwrap(),
            repr
        );
    }

    #[test]
    fn reserved_bits_ignored() {
        let mut h = HDR;
        h[4] |= 0x3F;
        h[8] |= 0x7F;
        let a = BthRepr::parse(&Packet::new_unchecked(&HDR[..])).unwrap();
        let b = BthRepr::parse(&Packet::new_unchecked(&h[..])).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn impossible_len() {
        assert_eq!(
            Packet::new_checked(&HDR[..11]).unwrap_err(),
            DropReason::Truncated
        );
    }
}
