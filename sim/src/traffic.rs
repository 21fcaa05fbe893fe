//! Seeded random RoCE v2 traffic: valid frames of every opcode, both IP
//! versions, with and without a VLAN tag, payloads across the MTU edges and
//! PSNs near the 24-bit wrap. Built by `roce-wire`, so every frame is
//! wire-exact; benches and hardware tests draw from it.

use crate::rng::Rng;
use roce_wire::aeth::Syndrome;
use roce_wire::ext::{AethRepr, AtomicAckEthRepr, AtomicEthRepr, DethRepr, RethRepr};
use roce_wire::opcode::TABLE;
use roce_wire::{
    BthRepr, EthernetRepr, ExtHeaders, ExtKind, FrameRepr, IpRepr, Ipv4Repr, Ipv6Repr, Opcode, Psn,
    UdpRepr, VlanTag,
};

/// Payload lengths a test should hit: small, around every PMTU, jumbo.
pub const EDGE_LENGTHS: [usize; 5] = [256, 512, 1024, 2048, 4096];

/// A seeded generator of valid frames.
pub struct FrameGen {
    rng: Rng,
    /// Largest payload drawn (default 4096, one PMTU).
    pub max_payload: usize,
    /// Chance of IPv6, per mille (default 500).
    pub ipv6_permille: u32,
    /// Chance of an 802.1Q tag, per mille (default 250).
    pub vlan_permille: u32,
}

impl FrameGen {
    /// A generator with the default mix.
    pub fn new(seed: u64) -> FrameGen {
        FrameGen {
            rng: Rng::new(seed),
            max_payload: 4096,
            ipv6_permille: 500,
            vlan_permille: 250,
        }
    }

    /// The generator's random source.
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// A payload length: a third small (0..=127), a third within 4 bytes of
    /// an MTU edge, a third uniform up to `max_payload`.
    pub fn payload_len(&mut self) -> usize {
        let r = &mut self.rng;
        let len = match r.below(3) {
            0 => r.range(0, 127),
            1 => {
                let edge = EDGE_LENGTHS[r.below(EDGE_LENGTHS.len() as u64) as usize];
                edge + r.range(0, 8) - 4
            }
            _ => r.range(0, self.max_payload),
        };
        len.min(self.max_payload)
    }

    /// A PSN: a quarter within 8 of the wrap, else anywhere.
    pub fn psn(&mut self) -> Psn {
        if self.rng.chance(250) {
            Psn::new(0xFF_FFF8u32.wrapping_add(self.rng.below(16) as u32))
        } else {
            Psn::new(self.rng.next_u32())
        }
    }

    fn ext(&mut self, headers: &[ExtKind]) -> ExtHeaders {
        let r = &mut self.rng;
        let mut e = ExtHeaders::default();
        for &k in headers {
            match k {
                ExtKind::Reth => {
                    e.reth = Some(RethRepr {
                        va: r.next_u64(),
                        rkey: r.next_u32(),
                        dma_len: r.next_u32(),
                    })
                }
                ExtKind::Aeth => {
                    e.aeth = Some(AethRepr {
                        syndrome: Syndrome::from_byte(r.next_u32() as u8 & 0x7F),
                        msn: r.next_u32() & 0xFF_FFFF,
                    })
                }
                ExtKind::ImmDt => e.immdt = Some(r.next_u32()),
                ExtKind::Ieth => e.ieth = Some(r.next_u32()),
                ExtKind::AtomicEth => {
                    e.atomic_eth = Some(AtomicEthRepr {
                        va: r.next_u64() & !7,
                        rkey: r.next_u32(),
                        swap_add: r.next_u64(),
                        compare: r.next_u64(),
                    })
                }
                ExtKind::AtomicAckEth => {
                    e.atomic_ack_eth = Some(AtomicAckEthRepr {
                        orig_remote_data: r.next_u64(),
                    })
                }
                ExtKind::Deth => {
                    e.deth = Some(DethRepr {
                        qkey: r.next_u32(),
                        src_qp: r.next_u32() & 0xFF_FFFF,
                    })
                }
                ExtKind::Cnp => {}
            }
        }
        e
    }

    fn ip(&mut self) -> IpRepr {
        let r = &mut self.rng;
        if r.chance(self.ipv6_permille) {
            let mut src = [0u8; 16];
            let mut dst = [0u8; 16];
            src.copy_from_slice(&r.bytes(16));
            dst.copy_from_slice(&r.bytes(16));
            IpRepr::V6(Ipv6Repr {
                traffic_class: r.next_u32() as u8,
                flow_label: r.next_u32() & 0xF_FFFF,
                hop_limit: r.next_u32() as u8,
                next_header: 17,
                src,
                dst,
                payload_len: 0,
            })
        } else {
            IpRepr::V4(Ipv4Repr {
                tos: r.next_u32() as u8,
                ident: r.next_u32() as u16,
                dont_frag: r.chance(500),
                ttl: r.next_u32() as u8,
                protocol: 17,
                src: r.next_u32().to_be_bytes(),
                dst: r.next_u32().to_be_bytes(),
                payload_len: 0,
            })
        }
    }

    /// A valid frame of the opcode in row `row` of the opcode table.
    pub fn frame_with_opcode(&mut self, row: usize) -> (FrameRepr, Vec<u8>) {
        let info = &TABLE[row];
        let payload_len = if info.has_payload() {
            self.payload_len()
        } else {
            0
        };
        let payload = self.rng.bytes(payload_len);
        let ip = self.ip();
        let ext = self.ext(info.headers);
        let psn = self.psn();
        let r = &mut self.rng;
        let mut mac = || {
            let mut m = [0u8; 6];
            m.copy_from_slice(&r.bytes(6));
            m
        };
        let (dst, src) = (mac(), mac());
        let vlan = r
            .chance(self.vlan_permille)
            .then(|| VlanTag::from_tci(r.next_u32() as u16));
        let mut repr = FrameRepr {
            eth: EthernetRepr {
                dst,
                src,
                vlan,
                ethertype: 0,
            },
            ip,
            udp: UdpRepr {
                src_port: roce_wire::udp::roce_src_port(r.next_u32()),
                dst_port: roce_wire::udp::ROCE_V2_PORT,
                checksum: 0,
                payload_len: 0,
            },
            bth: BthRepr {
                opcode: Opcode(info.code),
                solicited: r.chance(200),
                mig_req: r.chance(100),
                pad_count: 0,
                tver: 0,
                pkey: r.next_u32() as u16,
                fecn: r.chance(100),
                becn: info.kind == roce_wire::OpKind::Cnp || r.chance(100),
                dest_qp: r.next_u32() & 0xFF_FFFF,
                ack_req: r.chance(500),
                psn,
            },
            ext,
            payload_len,
        };
        repr.sync_lengths();
        (repr, payload)
    }

    /// A valid frame of a uniformly chosen opcode.
    pub fn frame(&mut self) -> (FrameRepr, Vec<u8>) {
        let row = self.rng.below(TABLE.len() as u64) as usize;
        self.frame_with_opcode(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roce_wire::Frame;

    #[test]
    fn frames_are_valid_and_varied() {
        let mut g = FrameGen::new(7);
        let (mut v6, mut tagged, mut edge, mut wrap) = (0, 0, 0, 0);
        for i in 0..2000 {
            let (repr, payload) = g.frame_with_opcode(i % TABLE.len());
            let bytes = repr.to_bytes(&payload).unwrap();
            let f = Frame::parse(&bytes).unwrap();
            assert_eq!(f.repr, repr);
            assert_eq!(f.payload, &payload[..]);
            v6 += matches!(repr.ip, IpRepr::V6(_)) as u32;
            tagged += repr.eth.vlan.is_some() as u32;
            edge += EDGE_LENGTHS.iter().any(|&e| payload.len().abs_diff(e) <= 4) as u32;
            wrap += (repr.bth.psn.value() >= 0xFF_FFF8 || repr.bth.psn.value() < 8) as u32;
        }
        assert!(
            v6 > 800 && tagged > 300 && edge > 200 && wrap > 200,
            "{v6} {tagged} {edge} {wrap}"
        );
    }
}
