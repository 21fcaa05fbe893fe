//! Property tests of the whole-frame API: emit→parse is the identity over
//! random valid frames, the ICRC ignores exactly the masked fields, and
//! parse never panics.

use proptest::prelude::*;
use roce_wire::aeth::Syndrome;
use roce_wire::ext::{AethRepr, AtomicAckEthRepr, AtomicEthRepr, DethRepr, RethRepr};
use roce_wire::opcode::TABLE;
use roce_wire::{
    icrc, BthRepr, EthernetRepr, ExtHeaders, ExtKind, Frame, FrameRepr, IpRepr, Ipv4Repr, Ipv6Repr,
    Opcode, Psn, UdpRepr, VlanTag,
};

fn psn() -> impl Strategy<Value = Psn> {
    // Half the time within 16 of the wrap, else anywhere.
    prop_oneof![
        (0u32..32).prop_map(|d| Psn::new(0xFF_FFF0u32.wrapping_add(d))),
        (0u32..=Psn::MASK).prop_map(Psn::new),
    ]
}

fn ip() -> impl Strategy<Value = IpRepr> {
    prop_oneof![
        (
            any::<u8>(),
            any::<u16>(),
            any::<bool>(),
            any::<u8>(),
            any::<[u8; 4]>(),
            any::<[u8; 4]>()
        )
            .prop_map(
                |(tos, ident, dont_frag, ttl, src, dst)| IpRepr::V4(Ipv4Repr {
                    tos,
                    ident,
                    dont_frag,
                    ttl,
                    protocol: 17,
                    src,
                    dst,
                    payload_len: 0,
                })
            ),
        (
            any::<u8>(),
            0u32..1 << 20,
            any::<u8>(),
            any::<[u8; 16]>(),
            any::<[u8; 16]>()
        )
            .prop_map(
                |(traffic_class, flow_label, hop_limit, src, dst)| IpRepr::V6(Ipv6Repr {
                    traffic_class,
                    flow_label,
                    hop_limit,
                    next_header: 17,
                    src,
                    dst,
                    payload_len: 0,
                })
            ),
    ]
}

fn ext_for(kinds: &'static [ExtKind]) -> impl Strategy<Value = ExtHeaders> {
    (
        any::<(u64, u32, u32)>(),
        any::<(u8, u32)>(),
        any::<(u32, u32)>(),
        any::<(u64, u32, u64, u64)>(),
        any::<u64>(),
        any::<(u32, u32)>(),
    )
        .prop_map(move |(reth, aeth, words, atomic, ack, deth)| {
            let has = |k| kinds.contains(&k);
            ExtHeaders {
                reth: has(ExtKind::Reth).then_some(RethRepr {
                    va: reth.0,
                    rkey: reth.1,
                    dma_len: reth.2,
                }),
                aeth: has(ExtKind::Aeth).then_some(AethRepr {
                    syndrome: Syndrome::from_byte(aeth.0),
                    msn: aeth.1 & 0xFF_FFFF,
                }),
                immdt: has(ExtKind::ImmDt).then_some(words.0),
                ieth: has(ExtKind::Ieth).then_some(words.1),
                atomic_eth: has(ExtKind::AtomicEth).then_some(AtomicEthRepr {
                    va: atomic.0,
                    rkey: atomic.1,
                    swap_add: atomic.2,
                    compare: atomic.3,
                }),
                atomic_ack_eth: has(ExtKind::AtomicAckEth).then_some(AtomicAckEthRepr {
                    orig_remote_data: ack,
                }),
                deth: has(ExtKind::Deth).then_some(DethRepr {
                    qkey: deth.0,
                    src_qp: deth.1 & 0xFF_FFFF,
                }),
            }
        })
}

/// A valid frame of any opcode, with a payload of 0..=4096 bytes where the
/// opcode carries one (lengths chosen so every pad count occurs).
fn frame() -> impl Strategy<Value = (FrameRepr, Vec<u8>)> {
    (0..TABLE.len()).prop_flat_map(|i| {
        let info = &TABLE[i];
        let payload = if info.has_payload() {
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..=64),
                proptest::collection::vec(any::<u8>(), 4090..=4096),
            ]
            .boxed()
        } else {
            Just(Vec::new()).boxed()
        };
        let eth = (
            any::<[u8; 6]>(),
            any::<[u8; 6]>(),
            proptest::option::of(any::<u16>()),
        );
        let bth = (
            any::<(bool, bool, u16, bool, bool)>(),
            0u32..1 << 24,
            any::<bool>(),
            psn(),
        );
        (
            eth,
            ip(),
            any::<(u16, u16)>(),
            bth,
            ext_for(info.headers),
            payload,
        )
            .prop_map(
                move |((dst, src, tag), ip, (sport, csum), (f, qp, ack, psn), ext, payload)| {
                    let mut r = FrameRepr {
                        eth: EthernetRepr {
                            dst,
                            src,
                            vlan: tag.map(VlanTag::from_tci),
                            ethertype: 0,
                        },
                        ip,
                        udp: UdpRepr {
                            src_port: sport,
                            dst_port: 4791,
                            checksum: csum,
                            payload_len: 0,
                        },
                        bth: BthRepr {
                            opcode: Opcode(info.code),
                            solicited: f.0,
                            mig_req: f.1,
                            pad_count: 0,
                            tver: 0,
                            pkey: f.2,
                            fecn: f.3,
                            becn: f.4,
                            dest_qp: qp,
                            ack_req: ack,
                            psn,
                        },
                        ext,
                        payload_len: payload.len(),
                    };
                    r.sync_lengths();
                    (r, payload)
                },
            )
    })
}

/// Offsets of the ICRC-masked bytes in a frame, written from DESIGN §8
/// independently of the library's mask code.
fn masked_offsets(r: &FrameRepr) -> Vec<usize> {
    let l3 = r.eth.header_len();
    let mut m = match r.ip {
        IpRepr::V4(_) => vec![l3 + 1, l3 + 8, l3 + 10, l3 + 11],
        IpRepr::V6(_) => vec![l3, l3 + 1, l3 + 2, l3 + 3, l3 + 7],
    };
    let udp = l3 + r.ip.header_len();
    m.extend([udp + 6, udp + 7, udp + 8 + 4]);
    m
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn emit_then_parse_is_identity((repr, payload) in frame()) {
        let bytes = repr.to_bytes(&payload).unwrap();
        prop_assert_eq!(bytes.len(), repr.wire_len());
        let f = Frame::parse(&bytes).unwrap();
        prop_assert_eq!(f.repr, repr);
        prop_assert_eq!(f.payload, &payload[..]);
        prop_assert_eq!((f.repr.bth.pad_count as usize + payload.len()) % 4, 0);
    }

    #[test]
    fn icrc_ignores_exactly_the_masked_bits((repr, payload) in frame(), flip in 1u8..=255, pick in any::<prop::sample::Index>()) {
        let bytes = repr.to_bytes(&payload).unwrap();
        let l3 = repr.eth.header_len();
        let end = repr.frame_len() - 4;
        let icrc_of = |x: &[u8]| icrc::compute(&x[l3..end]);
        let original = icrc_of(&bytes).unwrap();
        let v6 = matches!(repr.ip, IpRepr::V6(_));
        let masked = masked_offsets(&repr);
        // Masked: flipping any bit there leaves the ICRC alone; in IPv6
        // byte 0 only the low nibble (traffic class) is masked.
        for &at in &masked {
            let mut x = bytes.clone();
            x[at] ^= if v6 && at == l3 { flip & 0x0F } else { flip };
            prop_assert_eq!(icrc_of(&x), Some(original), "byte {}", at - l3);
        }
        if v6 && flip >> 4 != 0 {
            // ...and the version nibble is covered (or no longer IP at all).
            let mut x = bytes.clone();
            x[l3] ^= flip & 0xF0;
            prop_assert_ne!(icrc_of(&x), Some(original));
        }
        // Covered: flipping any other byte changes it.
        let covered: Vec<usize> = (l3..end).filter(|i| !masked.contains(i)).collect();
        let at = covered[pick.index(covered.len())];
        let mut x = bytes.clone();
        x[at] ^= flip;
        prop_assert_ne!(icrc_of(&x), Some(original), "byte {}", at - l3);
    }

    #[test]
    fn parse_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = Frame::parse(&bytes);
    }

    /// Mutated valid frames reach deep into the parser: any single-byte
    /// change is either still a valid frame with the change visible, or
    /// dropped; it never panics and never yields a different accepted frame
    /// with the same bytes.
    #[test]
    fn mutated_frames_are_dropped_or_masked((repr, payload) in frame(), flip in 1u8..=255, pick in any::<prop::sample::Index>(), cut in any::<prop::sample::Index>()) {
        let bytes = repr.to_bytes(&payload).unwrap();
        let mut x = bytes.clone();
        let at = pick.index(repr.frame_len());
        x[at] ^= flip;
        if let Ok(f) = Frame::parse(&x) {
            // Only fields outside the ICRC can change and still be accepted.
            let masked = masked_offsets(&repr);
            let eth = 0..repr.eth.header_len();
            prop_assert!(masked.contains(&at) || eth.contains(&at), "accepted a change at byte {at}");
            prop_assert_eq!(f.payload, &payload[..]);
        }
        let _ = Frame::parse(&bytes[..cut.index(bytes.len())]);
    }
}
