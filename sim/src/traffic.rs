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

/// Typical values of fields where real stacks send no constant: a small
/// QPN, a key and a user-space address as perftest's would look.
const TYPICAL_QPN: u64 = 0x11;
const TYPICAL_KEY: u64 = 0x1234;
const TYPICAL_VA: u64 = 0x5555_5555_8000;

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

    /// A PSN: a quarter within 8 of the wrap, else edge-favouring.
    pub fn psn(&mut self) -> Psn {
        if self.rng.chance(250) {
            Psn::new(0xFF_FFF8u32.wrapping_add(self.rng.below(16) as u32))
        } else {
            Psn::new(self.rng.edge(24, 0) as u32)
        }
    }

    /// Field draws favour edges (`Rng::edge`: 0, 1, all ones, single bits)
    /// and the values Linux rxe sends (DESIGN §5, §9), in every header.
    fn ext(&mut self, headers: &[ExtKind], payload_len: usize) -> ExtHeaders {
        let r = &mut self.rng;
        let mut e = ExtHeaders::default();
        for &k in headers {
            match k {
                ExtKind::Reth => {
                    e.reth = Some(RethRepr {
                        va: r.edge(64, TYPICAL_VA),
                        rkey: r.edge(32, TYPICAL_KEY) as u32,
                        dma_len: r.edge(32, payload_len as u64) as u32,
                    })
                }
                ExtKind::Aeth => {
                    e.aeth = Some(AethRepr {
                        // Bit 7 is reserved: 7 bits; rxe's ACKs carry 0x1f.
                        syndrome: Syndrome::from_byte(
                            r.edge(7, Syndrome::ACK_NO_CREDITS.to_byte() as u64) as u8,
                        ),
                        msn: r.edge(24, 1) as u32,
                    })
                }
                ExtKind::ImmDt => e.immdt = Some(r.edge(32, 0) as u32),
                ExtKind::Ieth => e.ieth = Some(r.edge(32, TYPICAL_KEY) as u32),
                ExtKind::AtomicEth => {
                    e.atomic_eth = Some(AtomicEthRepr {
                        va: r.edge(64, TYPICAL_VA) & !7,
                        rkey: r.edge(32, TYPICAL_KEY) as u32,
                        swap_add: r.edge(64, 1),
                        compare: r.edge(64, 0),
                    })
                }
                ExtKind::AtomicAckEth => {
                    e.atomic_ack_eth = Some(AtomicAckEthRepr {
                        orig_remote_data: r.edge(64, 0),
                    })
                }
                ExtKind::Deth => {
                    e.deth = Some(DethRepr {
                        // ibv_ud_pingpong's Q_Key.
                        qkey: r.edge(32, 0x1111_1111) as u32,
                        src_qp: r.edge(24, TYPICAL_QPN) as u32,
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
            let mut addr = || {
                // An IPv4-mapped GID (what rxe uses over IPv4 GIDs), a
                // link-local one, all zeros, all ones, or anything.
                let v: u128 = match r.below(5) {
                    0 => 0xFFFF_0A00_0000 | r.edge(8, 1) as u128,
                    1 => 0xFE80u128 << 112 | r.next_u64() as u128,
                    2 => 0,
                    3 => u128::MAX,
                    _ => (r.next_u64() as u128) << 64 | r.next_u64() as u128,
                };
                v.to_be_bytes()
            };
            let (src, dst) = (addr(), addr());
            IpRepr::V6(Ipv6Repr {
                traffic_class: r.edge(8, 0) as u8,
                flow_label: r.edge(20, 0) as u32,
                hop_limit: r.edge(8, 64) as u8,
                next_header: 17,
                src,
                dst,
                payload_len: 0,
            })
        } else {
            IpRepr::V4(Ipv4Repr {
                tos: r.edge(8, 0) as u8,
                ident: r.edge(16, 0) as u16,
                // rxe sets DF.
                dont_frag: r.chance(750),
                ttl: r.edge(8, 64) as u8,
                protocol: 17,
                src: (r.edge(32, 0x0A00_0001) as u32).to_be_bytes(),
                dst: (r.edge(32, 0x0A00_0002) as u32).to_be_bytes(),
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
        let ext = self.ext(info.headers, payload_len);
        let psn = self.psn();
        let r = &mut self.rng;
        // QEMU's MAC prefix is the typical one.
        let mut mac = || {
            r.edge(48, 0x5254_0012_3456).to_be_bytes()[2..]
                .try_into()
                .unwrap()
        };
        let (dst, src): ([u8; 6], [u8; 6]) = (mac(), mac());
        let rxe_port = roce_wire::udp::roce_src_port(r.next_u32());
        let vlan = r
            .chance(self.vlan_permille)
            .then(|| VlanTag::from_tci(r.edge(16, 0x0064) as u16));
        let mut repr = FrameRepr {
            eth: EthernetRepr {
                dst,
                src,
                vlan,
                ethertype: 0,
            },
            ip,
            udp: UdpRepr {
                src_port: r.edge(16, rxe_port as u64) as u16,
                dst_port: roce_wire::udp::ROCE_V2_PORT,
                // Sent 0 (roce_tx has no other value); receivers ignore it,
                // and the RX benches vary it on the wire.
                checksum: 0,
                payload_len: 0,
            },
            bth: BthRepr {
                opcode: Opcode(info.code),
                solicited: r.chance(200),
                mig_req: r.chance(100),
                pad_count: 0,
                tver: 0,
                pkey: r.edge(16, 0xFFFF) as u16,
                fecn: r.chance(100),
                becn: info.kind == roce_wire::OpKind::Cnp || r.chance(100),
                dest_qp: r.edge(24, TYPICAL_QPN) as u32,
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
        // The values rxe sends, and all-ones, must come up often.
        let (mut v6_zero, mut v6_ones, mut v4_rxe, mut syn_1f) = (0, 0, 0, 0);
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
            match repr.ip {
                IpRepr::V6(ip) => {
                    v6_zero += (ip.traffic_class == 0 && ip.flow_label == 0) as u32;
                    v6_ones += (ip.flow_label == 0xF_FFFF) as u32;
                }
                IpRepr::V4(ip) => v4_rxe += (ip.tos == 0 && ip.ttl == 64) as u32,
            }
            syn_1f += repr.ext.aeth.is_some_and(|a| a.syndrome.to_byte() == 0x1f) as u32;
        }
        assert!(
            v6_zero > 100 && v6_ones > 80 && v4_rxe > 80 && syn_1f > 20,
            "{v6_zero} {v6_ones} {v4_rxe} {syn_1f}"
        );
        assert!(
            v6 > 800 && tagged > 300 && edge > 200 && wrap > 200,
            "{v6} {tagged} {edge} {wrap}"
        );
    }
}
