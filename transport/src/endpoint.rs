//! A software NIC for simulations: QPs and one memory behind a frame
//! interface. Frames in are judged by `roce_wire::Frame::parse` (drops
//! counted per `DropReason`), dispatched by BTH DestQP (unknown QPNs
//! counted), with the IP ECN field's CE mark; frames out are built from
//! each QP's path (Ethernet and IP headers toward its peer) and a per-QP
//! UDP source port.

use crate::memory::Memory;
use crate::packet::Packet;
use crate::qp::Qp;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use roce_wire::{DropReason, EthernetRepr, Frame, IpRepr, UdpRepr};

/// The headers toward a QP's peer: Ethernet (destination MAC, source MAC,
/// VLAN) and IP (addresses, TOS or traffic class, TTL or hop limit). Lengths
/// and EtherType are filled in per frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// Ethernet header.
    pub eth: EthernetRepr,
    /// IP header.
    pub ip: IpRepr,
}

/// Why an endpoint did not take a frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FrameDrop {
    /// The frame parser's verdict.
    Frame(DropReason),
    /// No QP with the BTH's DestQP.
    UnknownQp,
}

/// QPs and their memory behind frames.
#[derive(Debug)]
pub struct Endpoint<M: Memory> {
    /// The memory every QP of the endpoint reads and writes.
    pub mem: M,
    qps: BTreeMap<u32, (Qp, Path)>,
    /// Round-robin position for transmission.
    next: u32,
    frame_drops: [u64; DropReason::ALL.len()],
    unknown_qp: u64,
}

/// The UDP source port of a QP: `roce_wire::udp::roce_src_port` of the QPN
/// folded to 14 bits, so each QP's flow hashes on its own in ECMP (rxe's
/// scheme; the fold is ours, not rxe's hash).
pub const fn udp_src_port(qpn: u32) -> u16 {
    roce_wire::udp::roce_src_port(qpn ^ (qpn >> 14))
}

/// The IP ECN field says Congestion Experienced.
pub fn ce(ip: &IpRepr) -> bool {
    let tc = match ip {
        IpRepr::V4(r) => r.tos,
        IpRepr::V6(r) => r.traffic_class,
    };
    tc & 3 == 3
}

impl<M: Memory> Endpoint<M> {
    /// An endpoint without QPs.
    pub fn new(mem: M) -> Endpoint<M> {
        Endpoint {
            mem,
            qps: BTreeMap::new(),
            next: 0,
            frame_drops: [0; DropReason::ALL.len()],
            unknown_qp: 0,
        }
    }

    /// Adds (or replaces) a QP, reached at `path`.
    pub fn add_qp(&mut self, qp: Qp, path: Path) {
        self.qps.insert(qp.attr().qpn, (qp, path));
    }

    /// The QP numbered `qpn`.
    pub fn qp(&self, qpn: u32) -> Option<&Qp> {
        self.qps.get(&qpn).map(|(q, _)| q)
    }

    /// The QP numbered `qpn`, to post work, poll completions or modify it.
    pub fn qp_mut(&mut self, qpn: u32) -> Option<&mut Qp> {
        self.qps.get_mut(&qpn).map(|(q, _)| q)
    }

    /// Frames dropped by the parser for `reason`.
    pub fn frame_drops(&self, reason: DropReason) -> u64 {
        let i = DropReason::ALL
            .iter()
            .position(|&r| r == reason)
            .expect("in ALL");
        self.frame_drops[i]
    }

    /// Frames for a QP number the endpoint does not have.
    pub fn unknown_qp_drops(&self) -> u64 {
        self.unknown_qp
    }

    /// Takes one frame (Ethernet header first, no FCS).
    pub fn receive_frame(&mut self, now: u64, bytes: &[u8]) -> Result<(), FrameDrop> {
        let f = match Frame::parse(bytes) {
            Ok(f) => f,
            Err(r) => {
                let i = DropReason::ALL
                    .iter()
                    .position(|&x| x == r)
                    .expect("in ALL");
                self.frame_drops[i] += 1;
                return Err(FrameDrop::Frame(r));
            }
        };
        let Some((qp, _)) = self.qps.get_mut(&f.repr.bth.dest_qp) else {
            self.unknown_qp += 1;
            return Err(FrameDrop::UnknownQp);
        };
        let p = Packet::from_frame(&f);
        qp.receive(now, &p, ce(&f.repr.ip), &mut self.mem);
        Ok(())
    }

    /// The next frame to send: QPs take turns, one packet each.
    pub fn poll_transmit_frame(&mut self, now: u64) -> Option<Vec<u8>> {
        let order: Vec<u32> = self
            .qps
            .range(self.next..)
            .chain(self.qps.range(..self.next))
            .map(|(&q, _)| q)
            .collect();
        for qpn in order {
            let (qp, path) = self.qps.get_mut(&qpn).expect("listed");
            if let Some(p) = qp.poll_transmit(now, &mut self.mem) {
                self.next = qpn.wrapping_add(1);
                let udp = UdpRepr {
                    src_port: udp_src_port(qpn),
                    dst_port: roce_wire::udp::ROCE_V2_PORT,
                    checksum: 0,
                    payload_len: 0,
                };
                return Some(
                    p.to_frame(path.eth, path.ip, udp)
                        .expect("a transport packet fits a frame"),
                );
            }
        }
        None
    }

    /// The earliest timer of any QP.
    pub fn next_deadline(&self) -> Option<u64> {
        self.qps
            .values()
            .filter_map(|(q, _)| q.next_deadline())
            .min()
    }
}
