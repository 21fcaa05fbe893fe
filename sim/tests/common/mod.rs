//! Test helpers shared by the TX benches: driving a header descriptor onto
//! a model's ports from a `roce_wire::FrameRepr`.
#![allow(dead_code)]

/// A MAC address as the 48-bit port value.
pub fn mac(m: [u8; 6]) -> u64 {
    m.iter().fold(0, |a, &b| a << 8 | b as u64)
}

/// A 128-bit port value as the bridge's little-endian words.
pub fn words128(v: u128) -> [u32; 4] {
    [
        v as u32,
        (v >> 32) as u32,
        (v >> 64) as u32,
        (v >> 96) as u32,
    ]
}

/// Sets the descriptor ports from `repr` (payload length `pl`); fields the
/// opcode does not use get garbage from `junk`.
#[macro_export]
macro_rules! drive_desc {
    ($dut:expr, $set:ident, $repr:expr, $pl:expr, $junk:expr) => {{
        paste::paste! {
            let dut = &mut $dut;
            let repr: &roce_wire::FrameRepr = $repr;
            let pl: usize = $pl;
            let junk: &mut roce_sim::rng::Rng = $junk;
            let e = &repr.ext;
            dut.[<$set dst_mac>]($crate::common::mac(repr.eth.dst) as _);
            dut.[<$set src_mac>]($crate::common::mac(repr.eth.src) as _);
            dut.[<$set vlan>](repr.eth.vlan.is_some());
            dut.[<$set vlan_tci>](repr.eth.vlan.map_or(junk.next_u32() as u16, |t| t.tci()) as _);
            match repr.ip {
                roce_wire::IpRepr::V4(ip) => {
                    dut.[<$set ipv6>](false);
                    dut.[<$set tos>](ip.tos as _);
                    dut.[<$set ttl>](ip.ttl as _);
                    dut.[<$set flow_label>]((junk.next_u32() & 0xF_FFFF) as _);
                    dut.[<$set ip_ident>](ip.ident as _);
                    dut.[<$set ip_df>](ip.dont_frag);
                    dut.[<$set ip_src>](&$crate::common::words128(
                        u32::from_be_bytes(ip.src) as u128 | (junk.next_u64() as u128) << 64,
                    ));
                    dut.[<$set ip_dst>](&$crate::common::words128(
                        u32::from_be_bytes(ip.dst) as u128 | (junk.next_u64() as u128) << 32,
                    ));
                }
                roce_wire::IpRepr::V6(ip) => {
                    dut.[<$set ipv6>](true);
                    dut.[<$set tos>](ip.traffic_class as _);
                    dut.[<$set ttl>](ip.hop_limit as _);
                    dut.[<$set flow_label>](ip.flow_label as _);
                    dut.[<$set ip_ident>](junk.next_u32() as u16 as _);
                    dut.[<$set ip_df>](junk.chance(500));
                    dut.[<$set ip_src>](&$crate::common::words128(u128::from_be_bytes(ip.src)));
                    dut.[<$set ip_dst>](&$crate::common::words128(u128::from_be_bytes(ip.dst)));
                }
            }
            let b = &repr.bth;
            dut.[<$set udp_src_port>](repr.udp.src_port as _);
            dut.[<$set opcode>](b.opcode.0 as _);
            dut.[<$set se>](b.solicited);
            dut.[<$set mig>](b.mig_req);
            dut.[<$set pkey>](b.pkey as _);
            dut.[<$set fecn>](b.fecn);
            dut.[<$set becn>](b.becn);
            dut.[<$set dest_qp>](b.dest_qp as _);
            dut.[<$set ack_req>](b.ack_req);
            dut.[<$set psn>](b.psn.value() as _);
            dut.[<$set payload_len>](pl as _);
            let j = &mut *junk;
            let reth = e.reth.unwrap_or(roce_wire::RethRepr {
                va: j.next_u64(),
                rkey: j.next_u32(),
                dma_len: j.next_u32(),
            });
            dut.[<$set reth_va>](reth.va as _);
            dut.[<$set reth_rkey>](reth.rkey as _);
            dut.[<$set reth_dma_len>](reth.dma_len as _);
            let (syn, msn) = e
                .aeth
                .map_or((j.next_u32() as u8, j.next_u32() & 0xFF_FFFF), |a| {
                    (a.syndrome.to_byte(), a.msn)
                });
            dut.[<$set aeth_syndrome>](syn as _);
            dut.[<$set aeth_msn>](msn as _);
            dut.[<$set immdt>](e.immdt.unwrap_or(j.next_u32()) as _);
            dut.[<$set ieth>](e.ieth.unwrap_or(j.next_u32()) as _);
            let at = e.atomic_eth.unwrap_or(roce_wire::AtomicEthRepr {
                va: j.next_u64(),
                rkey: j.next_u32(),
                swap_add: j.next_u64(),
                compare: j.next_u64(),
            });
            dut.[<$set atomic_va>](at.va as _);
            dut.[<$set atomic_rkey>](at.rkey as _);
            dut.[<$set atomic_swap_add>](at.swap_add as _);
            dut.[<$set atomic_compare>](at.compare as _);
            dut.[<$set atomic_ack_data>](
                e.atomic_ack_eth
                    .map_or(j.next_u64(), |a| a.orig_remote_data) as _,
            );
            let d = e.deth.unwrap_or(roce_wire::DethRepr {
                qkey: j.next_u32(),
                src_qp: j.next_u32() & 0xFF_FFFF,
            });
            dut.[<$set deth_qkey>](d.qkey as _);
            dut.[<$set deth_src_qp>](d.src_qp as _);
        }
    }};
}
