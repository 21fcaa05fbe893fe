//! Whole RoCE v2 frames: parse with a drop verdict, and emit.
//!
//! [`Frame::parse`] checks in the order a receiver does, and reports the
//! first fault:
//!
//! 1. Ethernet: header present (`truncated`); one 802.1Q tag at most,
//!    EtherType IPv4 or IPv6 (`not-roce`).
//! 2. IP: version matches the EtherType (`not-roce`); IPv4 IHL ≥ 5
//!    (`bad-length`), header present (`truncated`), header checksum
//!    (`bad-ip-checksum`), no options (`ip-options`), not a fragment
//!    (`not-roce`); IPv6 no extension headers (`ip-options`); protocol or
//!    next header UDP (`not-roce`).
//! 3. UDP: header present (`truncated`), destination port 4791 (`not-roce`).
//! 4. Lengths: the IP length covers at least the UDP header (`bad-length`)
//!    and fits in the frame (`truncated`; bytes after it are Ethernet
//!    padding and ignored); the UDP length equals the IP payload length
//!    (`bad-length`).
//! 5. BTH: BTH and ICRC present (`truncated`), TVer 0 (`bad-tver`), opcode
//!    known (`unknown-opcode`), its extension headers present (`truncated`);
//!    an opcode without payload has PadCnt 0 (`bad-padcnt`) and nothing
//!    between its headers and the ICRC (`bad-length`); otherwise payload and
//!    pad are a multiple of 4 bytes (`bad-length`) and hold PadCnt
//!    (`bad-padcnt`).
//! 6. ICRC (`bad-icrc`).
//!
//! The UDP checksum is never checked (RoCE v2 sends 0). Path MTU and the
//! FIRST/MIDDLE/LAST length rules depend on the QP and are the transport's
//! check ([`crate::Pmtu::check_len`]).

use crate::bth::{self, BthRepr};
use crate::ethernet::{self, EthernetRepr, ETHERTYPE_IPV4, ETHERTYPE_IPV6, MIN_FRAME_LEN};
use crate::ext::ExtHeaders;
use crate::icrc::{self, ICRC_LEN};
use crate::ipv4::{self, Ipv4Repr, PROTOCOL_UDP};
use crate::ipv6::{self, Ipv6Repr};
use crate::opcode::ExtKind;
use crate::pmtu::pad_count;
use crate::udp::{self, UdpRepr};
use crate::{DropReason, Result};
use core::fmt;

/// The IP header of a frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum IpRepr {
    /// IPv4.
    V4(Ipv4Repr),
    /// IPv6.
    V6(Ipv6Repr),
}

impl IpRepr {
    /// 4 or 6.
    pub const fn version(&self) -> u8 {
        match self {
            IpRepr::V4(_) => 4,
            IpRepr::V6(_) => 6,
        }
    }
    /// Header length.
    pub const fn header_len(&self) -> usize {
        match self {
            IpRepr::V4(_) => ipv4::HEADER_LEN,
            IpRepr::V6(_) => ipv6::HEADER_LEN,
        }
    }
    /// EtherType that carries it.
    pub const fn ethertype(&self) -> u16 {
        match self {
            IpRepr::V4(_) => ETHERTYPE_IPV4,
            IpRepr::V6(_) => ETHERTYPE_IPV6,
        }
    }
    fn set_payload_len(&mut self, len: u16) {
        match self {
            IpRepr::V4(r) => r.payload_len = len,
            IpRepr::V6(r) => r.payload_len = len,
        }
    }
}

/// Every header of a RoCE v2 frame and the payload length.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct FrameRepr {
    /// Ethernet header.
    pub eth: EthernetRepr,
    /// IP header.
    pub ip: IpRepr,
    /// UDP header.
    pub udp: UdpRepr,
    /// Base transport header.
    pub bth: BthRepr,
    /// Extension headers.
    pub ext: ExtHeaders,
    /// Payload bytes, without pad.
    pub payload_len: usize,
}

/// A parsed, accepted frame: its headers and a view of its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The headers.
    pub repr: FrameRepr,
    /// The payload, pad and ICRC stripped.
    pub payload: &'a [u8],
    /// The ICRC as received (and checked).
    pub icrc: u32,
}

/// Why a [`FrameRepr`] cannot be emitted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EmitError {
    /// The output buffer is shorter than [`FrameRepr::wire_len`].
    BufferTooSmall,
    /// The opcode lists this header and the repr lacks it, or the other way round.
    HeaderMismatch(ExtKind),
    /// Payload on an opcode that carries none.
    PayloadNotAllowed,
    /// The frame does not fit the 16-bit IP length.
    TooLong,
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmitError::BufferTooSmall => f.write_str("output buffer too small"),
            EmitError::HeaderMismatch(k) => {
                write!(f, "extension headers do not match the opcode ({k:?})")
            }
            EmitError::PayloadNotAllowed => f.write_str("this opcode carries no payload"),
            EmitError::TooLong => f.write_str("frame too long for the IP length field"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for EmitError {}

impl<'a> Frame<'a> {
    /// Parses and judges a frame (Ethernet header first, no FCS).
    pub fn parse(buf: &'a [u8]) -> Result<Frame<'a>> {
        // 1. Ethernet
        let eth = EthernetRepr::parse(&ethernet::Packet::new_unchecked(buf))?;
        let l3 = &buf[eth.header_len()..];
        // 2. IP
        let (ip, ip_hlen, ip_payload_len) = match eth.ethertype {
            ETHERTYPE_IPV4 => {
                let p = ipv4::Packet::new_unchecked(l3);
                let r = Ipv4Repr::parse(&p)?;
                if r.protocol != PROTOCOL_UDP {
                    return Err(DropReason::NotRoce);
                }
                let total = p.total_len() as usize;
                (
                    IpRepr::V4(r),
                    ipv4::HEADER_LEN,
                    total.checked_sub(ipv4::HEADER_LEN),
                )
            }
            ETHERTYPE_IPV6 => {
                let r = Ipv6Repr::parse(&ipv6::Packet::new_unchecked(l3))?;
                if r.next_header != PROTOCOL_UDP {
                    return Err(DropReason::NotRoce);
                }
                (
                    IpRepr::V6(r),
                    ipv6::HEADER_LEN,
                    Some(r.payload_len as usize),
                )
            }
            _ => return Err(DropReason::NotRoce),
        };
        // 3. UDP
        let udp_view = udp::Packet::new_unchecked(&l3[ip_hlen..]);
        let udp = UdpRepr::parse(&udp_view)?;
        // 4. Lengths
        let ip_payload_len = match ip_payload_len {
            Some(n) if n >= udp::HEADER_LEN => n,
            _ => return Err(DropReason::BadLength),
        };
        let l3_len = ip_hlen + ip_payload_len;
        if l3_len > l3.len() {
            return Err(DropReason::Truncated);
        }
        if udp_view.len() as usize != ip_payload_len {
            return Err(DropReason::BadLength);
        }
        let l3 = &l3[..l3_len];
        let l4 = &l3[ip_hlen + udp::HEADER_LEN..];
        // 5. BTH
        if l4.len() < bth::HEADER_LEN + ICRC_LEN {
            return Err(DropReason::Truncated);
        }
        let bth = BthRepr::parse(&bth::Packet::new_unchecked(l4))?;
        if bth.tver != bth::TVER {
            return Err(DropReason::BadTver);
        }
        let info = bth.opcode.info().ok_or(DropReason::UnknownOpcode)?;
        let ext_len = info.ext_len();
        let body = (l4.len() - bth::HEADER_LEN - ICRC_LEN)
            .checked_sub(ext_len)
            .ok_or(DropReason::Truncated)?;
        let pad = bth.pad_count as usize;
        if !info.has_payload() {
            if pad != 0 {
                return Err(DropReason::BadPadcnt);
            }
            if body != 0 {
                return Err(DropReason::BadLength);
            }
        } else {
            if body % 4 != 0 {
                return Err(DropReason::BadLength);
            }
            if pad > body {
                return Err(DropReason::BadPadcnt);
            }
        }
        let ext = ExtHeaders::parse(info, &l4[bth::HEADER_LEN..])?;
        // 6. ICRC
        if !icrc::check(l3) {
            return Err(DropReason::BadIcrc);
        }
        let payload_start = bth::HEADER_LEN + ext_len;
        let payload = &l4[payload_start..payload_start + body - pad];
        let t = &l4[l4.len() - ICRC_LEN..];
        Ok(Frame {
            repr: FrameRepr {
                eth,
                ip,
                udp,
                bth,
                ext,
                payload_len: payload.len(),
            },
            payload,
            icrc: u32::from_le_bytes([t[0], t[1], t[2], t[3]]),
        })
    }
}

impl FrameRepr {
    /// Pad bytes after the payload: `(-payload_len) & 3`.
    pub const fn pad_len(&self) -> usize {
        pad_count(self.payload_len) as usize
    }

    /// Bytes from the IP header to the end of the ICRC.
    pub fn l3_len(&self) -> usize {
        let ext = self.bth.opcode.info().map_or(0, |i| i.ext_len());
        self.ip.header_len()
            + udp::HEADER_LEN
            + bth::HEADER_LEN
            + ext
            + self.payload_len
            + self.pad_len()
            + ICRC_LEN
    }

    /// Frame length before Ethernet padding.
    pub fn frame_len(&self) -> usize {
        self.eth.header_len() + self.l3_len()
    }

    /// Bytes [`FrameRepr::emit`] writes: the frame padded to the 60-byte
    /// Ethernet minimum.
    pub fn wire_len(&self) -> usize {
        self.frame_len().max(MIN_FRAME_LEN)
    }

    /// Sets every derived field from `payload_len` and the opcode: the IP and
    /// UDP payload lengths, the PadCnt, and the EtherType from the IP
    /// version. [`FrameRepr::emit`] writes these values whatever the repr
    /// holds; a parsed frame always has them in sync.
    pub fn sync_lengths(&mut self) {
        let l4 = self.l3_len() - self.ip.header_len();
        self.ip.set_payload_len(l4 as u16);
        self.udp.payload_len = (l4 - udp::HEADER_LEN) as u16;
        self.bth.pad_count = self.pad_len() as u8;
        self.eth.ethertype = self.ip.ethertype();
    }

    /// Emits the whole frame into `buf`: Ethernet (with its tag), IP (IPv4
    /// checksum), UDP, BTH (PadCnt), extension headers, `payload`, zero pad,
    /// ICRC, then zeros up to 60 bytes. Returns the bytes written
    /// ([`FrameRepr::wire_len`]). `self.payload_len` is ignored in favour of
    /// `payload.len()`.
    ///
    /// Opcodes outside the table are emitted with no extension headers, so
    /// tests can build the frames a receiver must drop.
    pub fn emit(&self, payload: &[u8], buf: &mut [u8]) -> core::result::Result<usize, EmitError> {
        let mut r = *self;
        r.payload_len = payload.len();
        if let Some(info) = r.bth.opcode.info() {
            if let Some(k) = r.ext.mismatch(info) {
                return Err(EmitError::HeaderMismatch(k));
            }
            if !info.has_payload() && !payload.is_empty() {
                return Err(EmitError::PayloadNotAllowed);
            }
        }
        if r.l3_len() - ipv4::HEADER_LEN.min(r.ip.header_len()) > u16::MAX as usize {
            return Err(EmitError::TooLong);
        }
        r.sync_lengths();
        let wire_len = r.wire_len();
        if buf.len() < wire_len {
            return Err(EmitError::BufferTooSmall);
        }
        let buf = &mut buf[..wire_len];
        r.eth
            .emit(&mut ethernet::Packet::new_unchecked(&mut buf[..]));
        let mut at = r.eth.header_len();
        let l3_start = at;
        match &r.ip {
            IpRepr::V4(ip) => ip.emit(&mut ipv4::Packet::new_unchecked(&mut buf[at..])),
            IpRepr::V6(ip) => ip.emit(&mut ipv6::Packet::new_unchecked(&mut buf[at..])),
        }
        at += r.ip.header_len();
        r.udp.emit(&mut udp::Packet::new_unchecked(&mut buf[at..]));
        at += udp::HEADER_LEN;
        r.bth.emit(&mut bth::Packet::new_unchecked(&mut buf[at..]));
        at += bth::HEADER_LEN;
        if let Some(info) = r.bth.opcode.info() {
            r.ext.emit(info, &mut buf[at..]);
            at += info.ext_len();
        }
        buf[at..at + payload.len()].copy_from_slice(payload);
        at += payload.len();
        buf[at..at + r.pad_len()].fill(0);
        at += r.pad_len() + ICRC_LEN;
        icrc::fill(&mut buf[l3_start..at]).expect("an IP/UDP/BTH header was just written");
        buf[at..].fill(0);
        Ok(wire_len)
    }

    /// Emits into a new vector.
    #[cfg(feature = "std")]
    pub fn to_bytes(&self, payload: &[u8]) -> core::result::Result<std::vec::Vec<u8>, EmitError> {
        let mut r = *self;
        r.payload_len = payload.len();
        let mut v = std::vec![0u8; r.wire_len()];
        let n = r.emit(payload, &mut v)?;
        v.truncate(n);
        Ok(v)
    }
}
