//! The TX header assembly (`tx_header`) against `roce-wire`: for random
//! descriptors of every opcode (IPv4/IPv6, VLAN on and off, payloads across
//! the MTU edges, PSNs near the wrap) the header bytes equal the first
//! `hdr_len` bytes `FrameRepr::emit` writes, and the lengths and beat counts
//! agree. Fields an opcode does not use carry random garbage and must not
//! leak into the header.

use roce_sim::models::{TxHeaderW512, TxHeaderW64};
use roce_sim::rng::Rng;
use roce_sim::traffic::FrameGen;
use roce_wire::opcode::TABLE;
use roce_wire::{bth, ethernet, ipv4, ipv6, udp, FrameRepr, Opcode};

/// What the hardware must produce for `repr` with `payload_len` bytes.
struct Expect {
    hdr: Vec<u8>,
    frame_len: usize,
    pad: u8,
    known: bool,
    has_payload: bool,
}

fn expect(repr: &FrameRepr, payload_len: usize) -> Expect {
    let info = repr.bth.opcode.info();
    let has_payload = info.is_some_and(|i| i.has_payload());
    let pl = if has_payload { payload_len } else { 0 };
    let frame = repr.to_bytes(&vec![0u8; pl]).unwrap();
    let ext = info.map_or(0, |i| i.ext_len());
    let hl = repr.eth.header_len() + repr.ip.header_len() + 8 + 12 + ext;
    let pad = roce_wire::pmtu::pad_count(pl);
    Expect {
        hdr: frame[..hl].to_vec(),
        frame_len: hl + pl + pad as usize,
        pad,
        known: info.is_some(),
        has_payload,
    }
}

/// The payload shifts `body_idx` indexes: `k - hdr_len % k` over every
/// header length (Ethernet with or without a tag, IPv4 or IPv6, UDP, BTH and
/// each opcode's extension headers, none for unknown opcodes), ascending.
fn body_shifts(k: usize) -> Vec<usize> {
    let exts = TABLE.iter().map(|r| r.ext_len()).chain([0]);
    let mut v: Vec<usize> = exts
        .flat_map(|e| {
            [ethernet::HEADER_LEN, ethernet::TAGGED_HEADER_LEN]
                .into_iter()
                .flat_map(move |eth| {
                    [ipv4::HEADER_LEN, ipv6::HEADER_LEN]
                        .map(|ip| k - (eth + ip + udp::HEADER_LEN + bth::HEADER_LEN + e) % k)
                })
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Little-endian bytes of a port value (`u64`, or `u32` words when wider).
trait PortBytes {
    fn port_bytes(&self) -> Vec<u8>;
}

impl PortBytes for u64 {
    fn port_bytes(&self) -> Vec<u8> {
        self.to_le_bytes().to_vec()
    }
}

impl<const N: usize> PortBytes for [u32; N] {
    fn port_bytes(&self) -> Vec<u8> {
        self.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// Checks the outputs against `want` (for `repr` with payload `pl`).
macro_rules! check {
    ($dut:ident, $k:expr, $want:expr, $ctx:expr) => {{
        let dut = &$dut;
        let k: usize = $k;
        let want: &Expect = $want;
        let ctx: &str = $ctx;
        let words = dut.get_hdr();
        let got: Vec<u8> = (0..128)
            .map(|i| (words[i / 4] >> (8 * (i % 4))) as u8)
            .collect();
        let hl = want.hdr.len();
        assert_eq!(dut.get_hdr_len() as usize, hl, "{}", ctx);
        assert_eq!(&got[..hl], &want.hdr[..], "{}", ctx);
        assert!(
            got[hl..].iter().all(|&b| b == 0),
            "{}: bytes past the header",
            ctx
        );
        assert_eq!(
            dut.get_head_beat0().port_bytes(),
            got[..k],
            "{}: head_beat0",
            ctx
        );
        assert_eq!(dut.get_frame_len() as usize, want.frame_len, "{}", ctx);
        assert_eq!(dut.get_pad() as u8, want.pad, "{}", ctx);
        assert_eq!(dut.get_known(), want.known, "{}", ctx);
        assert_eq!(dut.get_has_payload(), want.has_payload, "{}", ctx);
        assert_eq!(dut.get_head_beats() as usize, hl / k, "{}", ctx);
        assert_eq!(dut.get_head_tail() as usize, hl % k, "{}", ctx);
        assert_eq!(
            dut.get_body_shift() as usize,
            k - hl % k,
            "{}: body_shift",
            ctx
        );
        assert_eq!(
            dut.get_frame_beats() as usize,
            want.frame_len.div_ceil(k),
            "{}",
            ctx
        );
        assert_eq!(
            dut.get_last_count() as usize,
            (want.frame_len - 1) % k + 1,
            "{}",
            ctx
        );
        let pl_used = want.frame_len - hl - want.pad as usize;
        assert_eq!(
            dut.get_payload_beats() as usize,
            pl_used.div_ceil(k),
            "{}",
            ctx
        );
        if pl_used > 0 {
            assert_eq!(
                dut.get_payload_last_count() as usize,
                (pl_used - 1) % k + 1,
                "{}",
                ctx
            );
        }
        if pl_used > 0 {
            // u32 at W=64, u64 at W=512.
            let keep = u64::from(dut.get_payload_last_keep());
            let lanes = (pl_used - 1) % k + 1;
            for lane in 0..k {
                let bit = keep >> lane & 1 == 1;
                assert_eq!(
                    bit,
                    lane < lanes,
                    "{}: payload_last_keep lane {}",
                    ctx,
                    lane
                );
            }
        }
        // The frame filled to the Ethernet minimum: 60 bytes with the ICRC.
        let min = roce_wire::ethernet::MIN_FRAME_LEN - roce_wire::icrc::ICRC_LEN;
        assert_eq!(
            dut.get_fill() as usize,
            min.saturating_sub(want.frame_len),
            "{}: fill",
            ctx
        );
        // Flags of beat 0 (the TX front's first-beat state).
        assert_eq!(
            dut.get_first_last(),
            want.frame_len <= k,
            "{}: first_last",
            ctx
        );
        assert_eq!(dut.get_first_body(), hl < k, "{}: first_body", ctx);
        assert_eq!(dut.get_first_more(), pl_used > 0, "{}: first_more", ctx);
        assert_eq!(
            dut.get_first_ilast(),
            pl_used > 0 && pl_used <= k,
            "{}: first_ilast",
            ctx
        );
        // Beat 0's payload lanes: all, or the last beat's, when the payload
        // starts there; none otherwise.
        let gate = u64::from(dut.get_first_gate());
        let lanes = match (hl < k, pl_used) {
            (true, 1..) if pl_used <= k => (pl_used - 1) % k + 1,
            (true, 1..) => k,
            _ => 0,
        };
        for lane in 0..k {
            assert_eq!(
                gate >> lane & 1 == 1,
                lane < lanes,
                "{}: first_gate lane {}",
                ctx,
                lane
            );
        }
        let shifts = body_shifts(k);
        assert_eq!(
            shifts.get(dut.get_body_idx() as usize),
            Some(&(k - hl % k)),
            "{}: body_idx",
            ctx
        );
    }};
}

macro_rules! run {
    ($model:ty, $seed:expr) => {{
        let seed = Rng::seed_from_env(stringify!($model), $seed);
        let mut gen = FrameGen::new(seed);
        let mut junk = Rng::new(seed ^ 0x5EED);
        let mut dut = <$model>::new();
        let k = <$model>::PARAMS.iter().find(|p| p.0 == "K").unwrap().1 as usize;
        // Descriptors of every opcode; every 12th gets an opcode outside the
        // table, and no-payload opcodes a garbage length that must be ignored.
        let mut descs = Vec::new();
        for i in 0..2400 {
            let (mut repr, payload) = gen.frame_with_opcode(i % TABLE.len());
            if i % 12 == 11 {
                let mut op = junk.next_u32() as u8;
                while Opcode(op).info().is_some() {
                    op = op.wrapping_add(1);
                }
                repr.bth.opcode = Opcode(op);
            }
            let pl = if payload.is_empty() {
                junk.below(4097) as usize
            } else {
                payload.len()
            };
            descs.push((repr, pl));
        }
        // Phase 1 (first 600): always ready, no gaps: one descriptor per cycle.
        // Phase 2: random idle on the input and backpressure on the output.
        let mut expected = std::collections::VecDeque::new();
        let (mut next, mut checked, mut cycles_phase1) = (0usize, 0usize, 0u64);
        let mut first_out: Option<usize> = None;
        dut.set_reset(true);
        dut.tick();
        dut.set_reset(false);
        while checked < descs.len() {
            let phase2 = next >= 600;
            let offer = next < descs.len() && (!phase2 || junk.chance(700));
            if offer {
                let (repr, pl) = &descs[next];
                roce_sim::drive_desc!(dut, set_, repr, *pl, &mut junk);
            }
            dut.set_in_valid(offer);
            let ready = !phase2 || junk.chance(600);
            dut.set_out_ready(ready);
            dut.eval();
            if dut.get_out_valid() && first_out.is_none() {
                first_out = Some(cycles_phase1 as usize);
            }
            if dut.get_out_valid() && ready {
                let (i, want): (usize, Expect) =
                    expected.pop_front().expect("output without input");
                let (r, pl) = &descs[i];
                let ctx = format!(
                    "descriptor {i}: {:?} IPv{} vlan {:?}, payload {pl}",
                    r.bth.opcode,
                    r.ip.version(),
                    r.eth.vlan
                );
                check!(dut, k, &want, &ctx);
                checked += 1;
            }
            if offer && dut.get_in_ready() {
                let (repr, pl) = &descs[next];
                expected.push_back((next, expect(repr, *pl)));
                next += 1;
            }
            dut.tick();
            if !phase2 {
                cycles_phase1 += 1;
            }
        }
        // The first descriptor, taken at cycle 0, is out the catalogue's
        // latency later.
        assert_eq!(
            first_out,
            <$model>::LATENCY,
            "cycles from taken to out_valid"
        );
        // 600 back-to-back descriptors taken in 600 cycles: no input stall.
        assert_eq!(
            cycles_phase1, 600,
            "cycles to take 600 back-to-back descriptors"
        );
    }};
}

#[test]
fn tx_header_w64_matches_roce_wire() {
    run!(TxHeaderW64, 0x7E64);
}

#[test]
fn tx_header_w512_matches_roce_wire() {
    run!(TxHeaderW512, 0x7E512);
}
