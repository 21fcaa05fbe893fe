//! The opcode table (DESIGN §6.2, rxe's `rxe_opcode`): for every RC, UC and
//! UD opcode and CNP, which extension headers follow the BTH and in what
//! order, and what the packet means.
//!
//! This table is the only place opcode facts are written down. The parser,
//! the emitter, the CLI and the hardware ROMs (`OpcodeInfo::flags`) all read
//! it. Opcodes not in it are representable as [`Opcode`] but have no
//! [`OpcodeInfo`], and the frame parser drops them as `unknown-opcode`.

use core::fmt;

/// A BTH opcode byte: bits 7:5 the transport, bits 4:0 the operation.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Opcode(pub u8);

impl Opcode {
    /// The table entry, if the opcode is known.
    pub const fn info(self) -> Option<&'static OpcodeInfo> {
        let i = INDEX[self.0 as usize];
        if i == NONE {
            None
        } else {
            Some(&TABLE[i as usize])
        }
    }

    /// The table's name, or `None` for unknown opcodes.
    pub const fn name(self) -> Option<&'static str> {
        match self.info() {
            Some(i) => Some(i.name),
            None => None,
        }
    }
}

impl fmt::Debug for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "Opcode({:#04x} {n})", self.0),
            None => write!(f, "Opcode({:#04x} unknown)", self.0),
        }
    }
}

/// Transport service of an opcode (bits 7:5).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Transport {
    /// Reliable connected, 0x00..=0x1F.
    Rc,
    /// Unreliable connected, 0x20..=0x3F.
    Uc,
    /// Unreliable datagram, 0x60..=0x7F.
    Ud,
    /// Congestion notification packet, 0x81 (RoCE v2 Annex 17).
    Cnp,
}

/// What an opcode does.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// SEND, consumes a receive WQE.
    Send,
    /// RDMA WRITE.
    Write,
    /// RDMA READ request.
    ReadRequest,
    /// RDMA READ response.
    ReadResponse,
    /// ACK or NAK.
    Acknowledge,
    /// ATOMIC ACKNOWLEDGE.
    AtomicAcknowledge,
    /// CMP & SWAP.
    CompareSwap,
    /// FETCH & ADD.
    FetchAdd,
    /// Congestion notification.
    Cnp,
}

/// Where a packet sits in its message.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Position {
    /// First of several packets.
    First,
    /// Neither first nor last.
    Middle,
    /// Last of several packets.
    Last,
    /// The whole message in one packet.
    Only,
}

/// An extension header kind, in wire order after the BTH.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ExtKind {
    /// RDMA extended transport header (16 bytes).
    Reth,
    /// ACK extended transport header (4 bytes).
    Aeth,
    /// Immediate data (4 bytes).
    ImmDt,
    /// Invalidate extended transport header (4 bytes).
    Ieth,
    /// Atomic extended transport header (28 bytes).
    AtomicEth,
    /// Atomic acknowledge extended transport header (8 bytes).
    AtomicAckEth,
    /// Datagram extended transport header (8 bytes).
    Deth,
    /// The 16 reserved bytes of a CNP.
    Cnp,
}

impl ExtKind {
    /// Every kind.
    pub const ALL: [ExtKind; 8] = [
        ExtKind::Reth,
        ExtKind::Aeth,
        ExtKind::ImmDt,
        ExtKind::Ieth,
        ExtKind::AtomicEth,
        ExtKind::AtomicAckEth,
        ExtKind::Deth,
        ExtKind::Cnp,
    ];

    /// Header length in bytes.
    pub const fn size(self) -> usize {
        match self {
            ExtKind::Reth => 16,
            ExtKind::Aeth | ExtKind::ImmDt | ExtKind::Ieth => 4,
            ExtKind::AtomicEth => 28,
            ExtKind::AtomicAckEth | ExtKind::Deth => 8,
            ExtKind::Cnp => 16,
        }
    }

    /// The header's presence bit in [`OpcodeInfo::flags`].
    pub const fn flag(self) -> u32 {
        1 << (flags::EXT_SHIFT + self as u32)
    }
}

/// Meaning bits of an opcode, as packed by [`OpcodeInfo::flags`] (the word
/// the hardware opcode ROM holds).
pub mod flags {
    /// A request (SEND, WRITE, READ request, atomic).
    pub const REQUEST: u32 = 1 << 0;
    /// A response (READ response, ACK/NAK, ATOMIC ACK).
    pub const RESPONSE: u32 = 1 << 1;
    /// Carries an AETH that acknowledges earlier requests.
    pub const ACKNOWLEDGE: u32 = 1 << 2;
    /// First packet of a multi-packet message.
    pub const FIRST: u32 = 1 << 3;
    /// Middle packet.
    pub const MIDDLE: u32 = 1 << 4;
    /// Last packet of a multi-packet message.
    pub const LAST: u32 = 1 << 5;
    /// A single-packet message.
    pub const ONLY: u32 = 1 << 6;
    /// May carry payload.
    pub const PAYLOAD: u32 = 1 << 7;
    /// Carries immediate data.
    pub const IMMEDIATE: u32 = 1 << 8;
    /// Carries an rkey to invalidate.
    pub const INVALIDATE: u32 = 1 << 9;
    /// Ends an RC request message: the requester completes it only once it
    /// is acknowledged, and sets AckReq on it.
    pub const NEEDS_ACK: u32 = 1 << 10;
    /// Consumes a receive WQE at the responder (SEND).
    pub const RECV_WQE: u32 = 1 << 11;
    /// Bits 12..=15 hold the [`OpKind`](super::OpKind) as a number.
    pub const KIND_SHIFT: u32 = 12;
    /// Bits 16.. are the extension header presence bits, `ExtKind::flag`.
    pub const EXT_SHIFT: u32 = 16;
}

/// One row of the opcode table.
#[derive(Debug, PartialEq, Eq)]
pub struct OpcodeInfo {
    /// The opcode byte.
    pub code: u8,
    /// rxe / IBTA style name, e.g. `RC_SEND_ONLY_WITH_IMMEDIATE`.
    pub name: &'static str,
    /// Transport service.
    pub transport: Transport,
    /// Operation.
    pub kind: OpKind,
    /// Position in the message.
    pub position: Position,
    /// Extension headers after the BTH, in wire order.
    pub headers: &'static [ExtKind],
}

impl OpcodeInfo {
    /// May the packet carry payload?
    pub const fn has_payload(&self) -> bool {
        matches!(
            self.kind,
            OpKind::Send | OpKind::Write | OpKind::ReadResponse
        )
    }

    /// Is extension header `k` present?
    pub const fn has(&self, k: ExtKind) -> bool {
        self.ext_offset(k).is_some()
    }

    /// Byte offset of header `k` from the end of the BTH.
    pub const fn ext_offset(&self, k: ExtKind) -> Option<usize> {
        let mut off = 0;
        let mut i = 0;
        while i < self.headers.len() {
            if self.headers[i] as u8 == k as u8 {
                return Some(off);
            }
            off += self.headers[i].size();
            i += 1;
        }
        None
    }

    /// Total length of the extension headers.
    pub const fn ext_len(&self) -> usize {
        let mut len = 0;
        let mut i = 0;
        while i < self.headers.len() {
            len += self.headers[i].size();
            i += 1;
        }
        len
    }

    /// The meaning bits ([`flags`]) plus header presence bits.
    pub const fn flags(&self) -> u32 {
        use flags::*;
        let mut f = 0;
        let request = matches!(
            self.kind,
            OpKind::Send
                | OpKind::Write
                | OpKind::ReadRequest
                | OpKind::CompareSwap
                | OpKind::FetchAdd
        );
        if request {
            f |= REQUEST;
        }
        if matches!(
            self.kind,
            OpKind::ReadResponse | OpKind::Acknowledge | OpKind::AtomicAcknowledge
        ) {
            f |= RESPONSE;
        }
        if self.has(ExtKind::Aeth) {
            f |= ACKNOWLEDGE;
        }
        f |= match self.position {
            Position::First => FIRST,
            Position::Middle => MIDDLE,
            Position::Last => LAST,
            Position::Only => ONLY,
        };
        if self.has_payload() {
            f |= PAYLOAD;
        }
        if self.has(ExtKind::ImmDt) {
            f |= IMMEDIATE;
        }
        if self.has(ExtKind::Ieth) {
            f |= INVALIDATE;
        }
        if request
            && matches!(self.transport, Transport::Rc)
            && matches!(self.position, Position::Last | Position::Only)
        {
            f |= NEEDS_ACK;
        }
        if matches!(self.kind, OpKind::Send) {
            f |= RECV_WQE;
        }
        f |= (self.kind as u32) << KIND_SHIFT;
        let mut i = 0;
        while i < self.headers.len() {
            f |= self.headers[i].flag();
            i += 1;
        }
        f
    }
}

use ExtKind as E;
use OpKind as K;
use Position as P;
use Transport as T;

const fn op(
    code: u8,
    name: &'static str,
    transport: Transport,
    kind: OpKind,
    position: Position,
    headers: &'static [ExtKind],
) -> OpcodeInfo {
    OpcodeInfo {
        code,
        name,
        transport,
        kind,
        position,
        headers,
    }
}

/// Every known opcode, in code order: RC, UC, UD and CNP (RoCE v2 Annex
/// 17.9.3: a BTH with BECN set and 16 reserved bytes).
#[rustfmt::skip]
pub const TABLE: [OpcodeInfo; 38] = [
    op(0x00, "RC_SEND_FIRST", T::Rc, K::Send, P::First, &[]),
    op(0x01, "RC_SEND_MIDDLE", T::Rc, K::Send, P::Middle, &[]),
    op(0x02, "RC_SEND_LAST", T::Rc, K::Send, P::Last, &[]),
    op(0x03, "RC_SEND_LAST_WITH_IMMEDIATE", T::Rc, K::Send, P::Last, &[E::ImmDt]),
    op(0x04, "RC_SEND_ONLY", T::Rc, K::Send, P::Only, &[]),
    op(0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", T::Rc, K::Send, P::Only, &[E::ImmDt]),
    op(0x06, "RC_RDMA_WRITE_FIRST", T::Rc, K::Write, P::First, &[E::Reth]),
    op(0x07, "RC_RDMA_WRITE_MIDDLE", T::Rc, K::Write, P::Middle, &[]),
    op(0x08, "RC_RDMA_WRITE_LAST", T::Rc, K::Write, P::Last, &[]),
    op(0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", T::Rc, K::Write, P::Last, &[E::ImmDt]),
    op(0x0A, "RC_RDMA_WRITE_ONLY", T::Rc, K::Write, P::Only, &[E::Reth]),
    op(0x0B, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", T::Rc, K::Write, P::Only, &[E::Reth, E::ImmDt]),
    op(0x0C, "RC_RDMA_READ_REQUEST", T::Rc, K::ReadRequest, P::Only, &[E::Reth]),
    op(0x0D, "RC_RDMA_READ_RESPONSE_FIRST", T::Rc, K::ReadResponse, P::First, &[E::Aeth]),
    op(0x0E, "RC_RDMA_READ_RESPONSE_MIDDLE", T::Rc, K::ReadResponse, P::Middle, &[]),
    op(0x0F, "RC_RDMA_READ_RESPONSE_LAST", T::Rc, K::ReadResponse, P::Last, &[E::Aeth]),
    op(0x10, "RC_RDMA_READ_RESPONSE_ONLY", T::Rc, K::ReadResponse, P::Only, &[E::Aeth]),
    op(0x11, "RC_ACKNOWLEDGE", T::Rc, K::Acknowledge, P::Only, &[E::Aeth]),
    op(0x12, "RC_ATOMIC_ACKNOWLEDGE", T::Rc, K::AtomicAcknowledge, P::Only, &[E::Aeth, E::AtomicAckEth]),
    op(0x13, "RC_COMPARE_SWAP", T::Rc, K::CompareSwap, P::Only, &[E::AtomicEth]),
    op(0x14, "RC_FETCH_ADD", T::Rc, K::FetchAdd, P::Only, &[E::AtomicEth]),
    op(0x16, "RC_SEND_LAST_WITH_INVALIDATE", T::Rc, K::Send, P::Last, &[E::Ieth]),
    op(0x17, "RC_SEND_ONLY_WITH_INVALIDATE", T::Rc, K::Send, P::Only, &[E::Ieth]),
    op(0x20, "UC_SEND_FIRST", T::Uc, K::Send, P::First, &[]),
    op(0x21, "UC_SEND_MIDDLE", T::Uc, K::Send, P::Middle, &[]),
    op(0x22, "UC_SEND_LAST", T::Uc, K::Send, P::Last, &[]),
    op(0x23, "UC_SEND_LAST_WITH_IMMEDIATE", T::Uc, K::Send, P::Last, &[E::ImmDt]),
    op(0x24, "UC_SEND_ONLY", T::Uc, K::Send, P::Only, &[]),
    op(0x25, "UC_SEND_ONLY_WITH_IMMEDIATE", T::Uc, K::Send, P::Only, &[E::ImmDt]),
    op(0x26, "UC_RDMA_WRITE_FIRST", T::Uc, K::Write, P::First, &[E::Reth]),
    op(0x27, "UC_RDMA_WRITE_MIDDLE", T::Uc, K::Write, P::Middle, &[]),
    op(0x28, "UC_RDMA_WRITE_LAST", T::Uc, K::Write, P::Last, &[]),
    op(0x29, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", T::Uc, K::Write, P::Last, &[E::ImmDt]),
    op(0x2A, "UC_RDMA_WRITE_ONLY", T::Uc, K::Write, P::Only, &[E::Reth]),
    op(0x2B, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", T::Uc, K::Write, P::Only, &[E::Reth, E::ImmDt]),
    op(0x64, "UD_SEND_ONLY", T::Ud, K::Send, P::Only, &[E::Deth]),
    op(0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", T::Ud, K::Send, P::Only, &[E::Deth, E::ImmDt]),
    op(0x81, "CNP", T::Cnp, K::Cnp, P::Only, &[E::Cnp]),
];

const NONE: u8 = 0xFF;

/// Opcode byte → row of [`TABLE`], or `NONE`.
const INDEX: [u8; 256] = {
    let mut idx = [NONE; 256];
    let mut i = 0;
    while i < TABLE.len() {
        idx[TABLE[i].code as usize] = i as u8;
        i += 1;
    }
    idx
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_unique_and_indexed() {
        for w in TABLE.windows(2) {
            assert!(w[0].code < w[1].code, "{} before {}", w[0].name, w[1].name);
        }
        for row in &TABLE {
            assert_eq!(Opcode(row.code).info(), Some(row));
        }
        let known = (0..=255u8).filter(|&c| Opcode(c).info().is_some()).count();
        assert_eq!(known, TABLE.len());
        assert_eq!(Opcode(0x15).info(), None, "RESYNC is RD-only");
        assert_eq!(Opcode(0x1F).info(), None);
        assert_eq!(Opcode(0x80).info(), None);
    }

    #[test]
    fn transport_matches_the_high_bits() {
        for row in &TABLE {
            let want = match row.code >> 5 {
                0 => Transport::Rc,
                1 => Transport::Uc,
                3 => Transport::Ud,
                4 => Transport::Cnp,
                _ => panic!("{} in an unsupported transport", row.name),
            };
            assert_eq!(row.transport, want, "{}", row.name);
            assert!(row.name.starts_with(match want {
                Transport::Rc => "RC_",
                Transport::Uc => "UC_",
                Transport::Ud => "UD_",
                Transport::Cnp => "CNP",
            }));
        }
    }

    /// UC opcodes are the RC SEND/WRITE codes plus 0x20 with the same headers.
    #[test]
    fn uc_mirrors_rc() {
        for rc in TABLE.iter().filter(|r| r.code <= 0x0B) {
            let uc = Opcode(rc.code + 0x20).info().expect("UC twin");
            assert_eq!(uc.headers, rc.headers);
            assert_eq!((uc.kind, uc.position), (rc.kind, rc.position));
            assert_eq!(&uc.name[3..], &rc.name[3..]);
        }
    }

    /// Name fragments agree with the header list (written independently).
    #[test]
    fn names_agree_with_headers() {
        for row in &TABLE {
            let n = row.name;
            assert_eq!(row.has(ExtKind::ImmDt), n.contains("IMMEDIATE"), "{n}");
            assert_eq!(row.has(ExtKind::Ieth), n.contains("INVALIDATE"), "{n}");
            assert_eq!(
                row.has(ExtKind::AtomicEth),
                n.ends_with("SWAP") || n.ends_with("ADD"),
                "{n}"
            );
            let reth = (n.contains("WRITE_FIRST") || n.contains("WRITE_ONLY"))
                || n.contains("READ_REQUEST");
            assert_eq!(row.has(ExtKind::Reth), reth, "{n}");
            let aeth = n.ends_with("ACKNOWLEDGE")
                || (n.contains("READ_RESPONSE") && !n.ends_with("MIDDLE"));
            assert_eq!(row.has(ExtKind::Aeth), aeth, "{n}");
            assert_eq!(row.has(ExtKind::Deth), n.starts_with("UD_"), "{n}");
            for (pos, word) in [
                (Position::First, "FIRST"),
                (Position::Middle, "MIDDLE"),
                (Position::Last, "LAST"),
            ] {
                assert_eq!(row.position == pos, n.contains(word), "{n}");
            }
        }
    }

    #[test]
    fn ext_offsets_and_flags() {
        let wo_imm = Opcode(0x0B).info().unwrap();
        assert_eq!(wo_imm.ext_offset(ExtKind::Reth), Some(0));
        assert_eq!(wo_imm.ext_offset(ExtKind::ImmDt), Some(16));
        assert_eq!(wo_imm.ext_len(), 20);
        let atomic_ack = Opcode(0x12).info().unwrap();
        assert_eq!(atomic_ack.ext_len(), 12);
        assert_eq!(atomic_ack.ext_offset(ExtKind::AtomicAckEth), Some(4));
        let f = wo_imm.flags();
        assert!(f & flags::REQUEST != 0 && f & flags::NEEDS_ACK != 0 && f & flags::IMMEDIATE != 0);
        assert!(f & ExtKind::Reth.flag() != 0 && f & ExtKind::Aeth.flag() == 0);
        let uc_last = Opcode(0x22).info().unwrap().flags();
        assert!(uc_last & flags::NEEDS_ACK == 0, "UC is never acknowledged");
        let mid = Opcode(0x0E).info().unwrap().flags();
        assert!(mid & flags::RESPONSE != 0 && mid & flags::ACKNOWLEDGE == 0);
        let cnp = Opcode(0x81).info().unwrap();
        assert_eq!(cnp.ext_len(), 16);
        assert!(!cnp.has_payload());
        // Flags separate every pair of opcodes that differ in meaning.
        for a in &TABLE {
            for b in &TABLE {
                if a.code != b.code && a.transport == b.transport {
                    assert_ne!(a.flags(), b.flags(), "{} and {}", a.name, b.name);
                }
            }
        }
    }
}
