//! One transport packet: BTH, extension headers and payload, with the
//! conversions to and from whole wire frames (`roce_wire::FrameRepr`).

use alloc::vec;
use alloc::vec::Vec;
use roce_wire::frame::EmitError;
use roce_wire::opcode::{ExtKind, OpKind, OpcodeInfo, Position, Transport, TABLE};
use roce_wire::pmtu::pad_count;
use roce_wire::{BthRepr, EthernetRepr, ExtHeaders, Frame, FrameRepr, IpRepr, Opcode, UdpRepr};

/// A transport packet: what the QP sends and receives. The lower layers
/// (Ethernet, IP, UDP, ICRC) are added by [`Packet::to_frame`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Base transport header (`pad_count` always matches the payload).
    pub bth: BthRepr,
    /// Extension headers, exactly those the opcode lists.
    pub ext: ExtHeaders,
    /// Payload without pad.
    pub payload: Vec<u8>,
}

impl Packet {
    /// The opcode table row (`None` for an opcode the table does not know).
    pub fn info(&self) -> Option<&'static OpcodeInfo> {
        self.bth.opcode.info()
    }

    /// The packet of an accepted frame.
    pub fn from_frame(f: &Frame<'_>) -> Packet {
        Packet {
            bth: f.repr.bth,
            ext: f.repr.ext,
            payload: f.payload.to_vec(),
        }
    }

    /// The frame headers for this packet over `eth`, `ip` and `udp`
    /// (lengths and PadCnt derived).
    pub fn frame_repr(&self, eth: EthernetRepr, ip: IpRepr, udp: UdpRepr) -> FrameRepr {
        let mut r = FrameRepr {
            eth,
            ip,
            udp,
            bth: self.bth,
            ext: self.ext,
            payload_len: self.payload.len(),
        };
        r.sync_lengths();
        r
    }

    /// The whole wire frame (Ethernet header to ICRC, padded to 60 bytes).
    pub fn to_frame(
        &self,
        eth: EthernetRepr,
        ip: IpRepr,
        udp: UdpRepr,
    ) -> Result<Vec<u8>, EmitError> {
        let r = self.frame_repr(eth, ip, udp);
        let mut buf = vec![0u8; r.wire_len()];
        let n = r.emit(&self.payload, &mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }
}

/// The opcode of `transport`/`kind`/`position` with or without immediate
/// data and invalidate, found in the one opcode table.
pub(crate) fn opcode(
    transport: Transport,
    kind: OpKind,
    position: Position,
    imm: bool,
    inv: bool,
) -> Opcode {
    TABLE
        .iter()
        .find(|i| {
            i.transport == transport
                && i.kind == kind
                && i.position == position
                && i.has(ExtKind::ImmDt) == imm
                && i.has(ExtKind::Ieth) == inv
        })
        .map(|i| Opcode(i.code))
        .expect("the opcode table holds every opcode the transport sends")
}

/// A BTH with the fields the transport sets; the rest zero.
pub(crate) fn bth(
    opcode: Opcode,
    pkey: u16,
    dest_qp: u32,
    ack_req: bool,
    psn: roce_wire::Psn,
) -> BthRepr {
    BthRepr {
        opcode,
        solicited: false,
        mig_req: false,
        pad_count: 0,
        tver: roce_wire::bth::TVER,
        pkey,
        fecn: false,
        becn: false,
        dest_qp,
        ack_req,
        psn,
    }
}

/// A packet with its PadCnt set from the payload.
pub(crate) fn packet(mut bth: BthRepr, ext: ExtHeaders, payload: Vec<u8>) -> Packet {
    bth.pad_count = pad_count(payload.len());
    Packet { bth, ext, payload }
}
