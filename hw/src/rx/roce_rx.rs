//! RoCE v2 frame parser and classifier (receive side of DESIGN §3's
//! `hdr_rx` + `icrc_rx`): a frame stream in; a header descriptor with a
//! verdict, and the payload (pad and ICRC stripped, realigned to byte 0)
//! out. Every layout fact comes from `roce-wire`: header offsets from its
//! `field` constants, the extension headers from `opcode::TABLE`, the ICRC
//! masks by probing `icrc::compute`, the check order from `Frame::parse`.
//!
//! # Pipeline (one beat per cycle, frames back to back)
//!
//! | stage | work |
//! |---|---|
//! | S1 | beat registered; header bytes captured (first 112/128 bytes); layout (VLAN, IP version) from the EtherType; every header field selected by layout |
//! | S2 | opcode ROM (from `opcode::TABLE`), IP payload length |
//! | S3 | frame offsets: BTH, payload start, ICRC end; ICRC masks of the beat |
//! | S4 | payload length and end |
//! | S5 | ICRC feed (masked, trimmed at the IP datagram's end) to [`Crc32`]; payload realigned by [`ByteRealign`]; the checks, in `Frame::parse`'s order, on the frame's last beat |
//! | S6 | payload written to the frame buffer (block RAM) |
//!
//! The descriptor leaves through a [`RegSlice`]: every `m_hdr_*` output is a
//! flip-flop, and `m_hdr_ready` reaches none of the queues behind it in the
//! cycle it arrives (their pops wait on the slice's registered `s_ready`).
//!
//! A frame's entry waits for its verdict parts in queues written and
//! popped together: the fields the join decides on ([`RxCtl`]) in a
//! [`SyncFifo`], the fields that pass through ([`RxData`], and the two
//! halves of the extension word) in three [`RamQueue`]s whose LUT-RAM reads
//! feed the slice directly, so the join's take moves pointers and a few
//! flip-flops, not a wide head register. The slice carries the extension
//! word once; the extension fields are wired from it at its output.
//!
//! The IPv4 header checksum ([`OnesStream`], summed from S1's beats as they
//! pass, with no copy of the header) and the ICRC result
//! ([`Crc32`], which checks the CRC residue over the datagram including its
//! ICRC) arrive later; they join the frame's other checks at `m_hdr`.
//!
//! # Drop without rollback
//! Payloads of every frame go into the frame buffer as they arrive. A
//! descriptor (accepted or dropped) is offered on `m_hdr` once all three
//! verdict parts are in; when it is taken, the frame's region becomes a
//! read job: an accepted frame is read out on `m_axis`, a dropped one is
//! skipped (the read pointer jumps over it). So a dropped frame never
//! reaches `m_axis`, and no write is ever undone.
//!
//! # Flow control
//! `s_axis.tready` is registered: low when the frame buffer could fill or
//! [`MAX_FRAMES`] frames wait for their descriptor to be taken. It never
//! depends on `s_axis.tvalid`. Payloads must fit the buffer
//! (`2^A` beats less a margin of [`MARGIN`]).

use crate::axis_register::RegSlice;
use crate::bram::BramOutReg;
use crate::crc32::{Crc32, PAD_BITS, RESULT_CAPACITY};
use crate::fifo::{FifoLane, RamQueue, SyncFifo};
use crate::gf2;
use crate::prim::{Counter32, LogicRom, XorMatrix};
use crate::rx_prim::{BeatMask, ByteRealign, ByteSelect, HeaderCapture, OnesStream, HDR_BITS};
use crate::stream::{check_width, StreamIn, StreamOut};
use roce_wire::opcode::{ExtKind, TABLE};
use roce_wire::{bth, ethernet, ext, icrc, ipv4, ipv6, udp, DropReason};
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;
use std::collections::BTreeMap;

/// Frames whose last beat was taken on `s_axis` and whose descriptor has
/// not yet moved to the descriptor output slice: the input credit closes
/// at this many (being registered, it lets one more in as it closes), so
/// with the slice's two, at most `MAX_FRAMES + 3` frames wait for `m_hdr`.
pub const MAX_FRAMES: u64 = 20;
/// Frame-buffer beats kept free for beats in the pipeline (and one for
/// the buffer's fill level, which the input credit reads a cycle old).
pub const MARGIN: u64 = 13;
// The ICRC engine runs without its result credit (`Crc32::uncredited`): a
// frame's result is produced after its last beat is taken, which counts it
// in `frames`, and consumed as its descriptor moves to the output slice,
// which uncounts it; the registered input credit lets `frames` reach
// `MAX_FRAMES + 1` at most, so no more results are queued or in flight
// than that.
const _: () = assert!((MAX_FRAMES as usize) < RESULT_CAPACITY);
/// `m_hdr_reason` when the frame is accepted.
pub const REASON_NONE: u64 = 15;
/// Counters: one per drop reason (in `DropReason::ALL` order), then accepts.
const COUNTERS: usize = DropReason::ALL.len() + 1;
// A reason's one-hot (`1 << reason`, cut to COUNTERS bits) is 0 for
// none only while none's code is past the counters.
const _: () = assert!(REASON_NONE as usize >= COUNTERS);

/// The four frame layouts, indexed `tagged + 2 * ipv6`.
#[derive(Copy, Clone, Debug)]
pub struct Layout {
    pub tagged: bool,
    pub ipv6: bool,
}

impl Layout {
    pub const ALL: [Layout; 4] = [
        Layout {
            tagged: false,
            ipv6: false,
        },
        Layout {
            tagged: true,
            ipv6: false,
        },
        Layout {
            tagged: false,
            ipv6: true,
        },
        Layout {
            tagged: true,
            ipv6: true,
        },
    ];
    /// Start of the IP header.
    pub const fn ip(self) -> usize {
        if self.tagged {
            ethernet::TAGGED_HEADER_LEN
        } else {
            ethernet::HEADER_LEN
        }
    }
    pub const fn ip_len(self) -> usize {
        if self.ipv6 {
            ipv6::HEADER_LEN
        } else {
            ipv4::HEADER_LEN
        }
    }
    pub const fn udp(self) -> usize {
        self.ip() + self.ip_len()
    }
    pub const fn bth(self) -> usize {
        self.udp() + udp::HEADER_LEN
    }
    pub const fn ext(self) -> usize {
        self.bth() + bth::HEADER_LEN
    }
}

fn per_layout(f: impl Fn(Layout) -> usize) -> [usize; 4] {
    Layout::ALL.map(f)
}

/// Largest extension-header block in the opcode table.
pub fn max_ext_len() -> usize {
    TABLE.iter().map(|i| i.ext_len()).max().unwrap()
}

/// Header bytes the parser captures: through the longest BTH + extension
/// headers (the IPv4 checksum reads the beats, not the capture).
pub fn header_bytes() -> usize {
    Layout::ALL.iter().map(|l| l.ext()).max().unwrap() + max_ext_len()
}

/// Distinct byte offsets of extension header `k` after the BTH, over the table.
pub fn ext_offsets(k: ExtKind) -> Vec<usize> {
    let mut v: Vec<usize> = TABLE.iter().filter_map(|i| i.ext_offset(k)).collect();
    v.sort_unstable();
    v.dedup();
    assert!(v.len() <= 4, "{k:?} at more than four offsets");
    v
}

/// Opcode ROM word: bit 0 known, 1 has payload, 7:2 extension length,
/// 15:8 extension presence (`ExtKind` order), 16+2k..: offset index of kind k.
pub fn opcode_rom() -> BTreeMap<Bits<8>, Bits<32>> {
    let mut m = BTreeMap::new();
    for code in 0..=255u64 {
        let mut w = 0u64;
        if let Some(i) = roce_wire::Opcode(code as u8).info() {
            w |= 1 | (i.has_payload() as u64) << 1 | (i.ext_len() as u64) << 2;
            for (n, k) in ExtKind::ALL.into_iter().enumerate() {
                if let Some(off) = i.ext_offset(k) {
                    w |= 1 << (8 + n);
                    let idx = ext_offsets(k).iter().position(|&o| o == off).unwrap();
                    w |= (idx as u64) << (16 + 2 * n);
                }
            }
        }
        m.insert(code.into(), w.into());
    }
    m
}

/// Payload start offsets (mod nothing): every layout and opcode.
pub fn payload_starts() -> Vec<usize> {
    let mut v: Vec<usize> = Layout::ALL
        .iter()
        .flat_map(|l| TABLE.iter().map(move |i| l.ext() + i.ext_len()))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Bits of the L3 header (IP, UDP, BTH) that the ICRC masks to one, per
/// byte, from `roce_wire::icrc::masked_bytes`.
pub fn icrc_masked_bits(ipv6: bool) -> Vec<u8> {
    let l = Layout {
        tagged: false,
        ipv6,
    };
    let mut bits = vec![0u8; l.ext() - l.ip()];
    for &(off, mask) in icrc::masked_bytes(ipv6) {
        bits[off] |= mask;
    }
    bits
}

/// CRC register the ICRC feed starts from: after the zeroed Ethernet header
/// (14 bytes) it holds the state after the 8 × 0xFF LRH stand-in.
pub fn icrc_init() -> u32 {
    let after_lrh = gf2::update(gf2::INIT, &icrc::LRH_PREFIX);
    (0..8 * ethernet::HEADER_LEN).fold(after_lrh, |s, _| gf2::unstep(s))
}

/// The four bytes that stand in for a VLAN tag in the ICRC feed: they leave
/// the register unchanged, so tagged and untagged frames share the start.
pub fn tag_filler() -> [u8; 4] {
    let d = gf2::update(gf2::INIT, &icrc::LRH_PREFIX);
    let target = d ^ gf2::update(d, &[0; 4]);
    // Solve data(32) · x = target over GF(2).
    let cols = gf2::data(32);
    let mut rows: Vec<(u32, u32)> = cols.iter().enumerate().map(|(i, &c)| (c, 1 << i)).collect();
    let (mut t, mut x) = (target, 0u32);
    for bit in 0..32 {
        let Some(p) = (bit..32).find(|&r| rows[r].0 >> bit & 1 == 1) else {
            panic!("CRC data matrix is singular");
        };
        rows.swap(bit, p);
        let pivot = rows[bit];
        for (r, row) in rows.iter_mut().enumerate() {
            if r != bit && row.0 >> bit & 1 == 1 {
                row.0 ^= pivot.0;
                row.1 ^= pivot.1;
            }
        }
        if t >> bit & 1 == 1 {
            t ^= pivot.0;
            x ^= pivot.1;
        }
    }
    assert_eq!(t, 0);
    let bytes = x.to_le_bytes();
    assert_eq!(gf2::update(d, &bytes), d);
    bytes
}

/// `m_crc.tdata` of a datagram whose ICRC is right: the CRC residue.
pub fn icrc_residue() -> u32 {
    let s = gf2::update(gf2::update(gf2::INIT, &icrc::LRH_PREFIX), b"roce");
    !gf2::update(s, &(!s).to_le_bytes())
}

/// Per layout and beat: AND/OR masks that turn frame bytes into the ICRC
/// feed (Ethernet header zero, the tag replaced by [`tag_filler`], masked
/// L3 bits forced to one).
pub fn beat_masks(k: usize) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
    Layout::ALL
        .iter()
        .map(|&l| {
            let bits = icrc_masked_bits(l.ipv6);
            let end = l.ext();
            let mut and = vec![0xFFu8; end.div_ceil(k) * k];
            let mut or = vec![0u8; and.len()];
            and[..ethernet::HEADER_LEN].fill(0);
            if l.tagged {
                and[ethernet::HEADER_LEN..l.ip()].fill(0);
                or[ethernet::HEADER_LEN..l.ip()].copy_from_slice(&tag_filler());
            }
            for (i, &m) in bits.iter().enumerate() {
                or[l.ip() + i] |= m;
            }
            and.chunks(k)
                .zip(or.chunks(k))
                .map(|(a, o)| (a.to_vec(), o.to_vec()))
                .collect()
        })
        .collect()
}

/// Offsets (by the opcode ROM's index for kind `k`) of byte `f` of header `k`.
fn ext_field(k: ExtKind, f: usize) -> [usize; 4] {
    let o = ext_offsets(k);
    let mut a = [o[0] + f; 4];
    for (i, off) in o.iter().enumerate() {
        a[i] = off + f;
    }
    a
}

fn field_at(layout: impl Fn(Layout) -> usize, f: usize) -> [usize; 4] {
    per_layout(|l| layout(l) + f)
}

/// One frame's checks, waiting (with its [`RxData`]) for its checksum and
/// ICRC.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct RxEntry {
    pub pre: Bits<4>,
    pub post: Bits<4>,
    /// The later checks' reason, which counts when `post` is none.
    pub post2: Bits<4>,
    /// Whether `pre`, `post` and `post2` are a reason (not none): taken
    /// from the checks' flags in S5, beside the reasons, so that queueing
    /// the entry picks the reason with registered selects.
    pub pre_hit: Bit,
    pub post_hit: Bit,
    pub post2_hit: Bit,
    /// `pre`, `post` and `post2` one-hot in counter order (0 for none),
    /// decoded in S5, so that queueing the entry picks the one-hot with
    /// the same registered selects as the reason (decoding the picked
    /// reason put four LUTs before the queue's write data).
    pub pre_hot: Bits<COUNTERS>,
    pub post_hot: Bits<COUNTERS>,
    pub post2_hot: Bits<COUNTERS>,
    pub v4: Bit,
    pub last_n: Bits<8>,
}

/// The part of a queued entry the join decides on (verdict parts, the
/// read job): a queue with a head register, popped by the join's take
/// (31 flip-flops follow the take).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct RxCtl {
    /// A check before the IPv4 checksum's place in the order failed.
    pub pre_hit: Bit,
    /// Any check other than the checksum and the ICRC failed.
    pub hit: Bit,
    /// Its reason (the earliest in the order), and that one-hot in
    /// counter order (0 when none failed), for the counters.
    pub why: Bits<4>,
    pub why_hot: Bits<COUNTERS>,
    pub v4: Bit,
    pub end_ptr: Bits<16>,
    pub last_n: Bits<8>,
}

/// The rest of a queued entry: fields that pass to the descriptor without
/// a decision. Held in two [`RamQueue`]s (this and [`RxData2`]), each
/// read at its own registered pointer straight into the output slice, so
/// the take moves no register of them and no pointer reaches more than
/// ~45 LUT-RAM cells (at 32 words, two 16-word DPR16X4 per 4 bits on ECP5;
/// one pointer for all 169 bits reached ~86).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct RxData {
    pub ipv6: Bit,
    pub src_port: Bits<16>,
    pub opcode: Bits<8>,
    pub flags: Bits<8>,
    pub pkey: Bits<16>,
    pub fb: Bits<8>,
    pub destqp: Bits<24>,
}

/// The second half of [`RxData`].
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct RxData2 {
    pub ack: Bits<8>,
    pub psn: Bits<24>,
    pub pay_len: Bits<16>,
    /// Extension headers present (opcode ROM bits 15:8, `ExtKind` order).
    pub ext_present: Bits<8>,
    /// ImmDt, selected from `ext` by the opcode when the entry is queued.
    pub immdt: Bits<32>,
}

/// The descriptor as it leaves the parser: the `m_hdr_*` outputs, held in
/// the output [`RegSlice`] so `m_hdr_ready` reaches no FIFO in the cycle it
/// arrives.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct RxDesc {
    pub drop: Bit,
    pub reason: Bits<4>,
    pub ipv6: Bit,
    pub src_port: Bits<16>,
    pub opcode: Bits<8>,
    pub se: Bit,
    pub m: Bit,
    pub padcnt: Bits<2>,
    pub tver: Bits<4>,
    pub pkey: Bits<16>,
    pub fecn: Bit,
    pub becn: Bit,
    pub destqp: Bits<24>,
    pub ackreq: Bit,
    pub psn: Bits<24>,
    pub payload_len: Bits<16>,
    pub ext: Bits<8>,
    /// The extension-header bytes after the BTH: every `m_hdr_*` extension
    /// field but ImmDt is a fixed slice of them, wired after the slice.
    pub ext_word: Bits<224>,
    pub immdt: Bits<32>,
}

/// A payload read job.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct RxJob {
    pub accept: Bit,
    pub end_ptr: Bits<16>,
    pub last_n: Bits<8>,
    /// Beats of the frame in the buffer (from the previous job's end).
    pub beats: Bits<16>,
    /// `beats == 0`, `beats == 1`, decided when the job is queued.
    pub none: Bit,
    pub one: Bit,
}

const EXT_BITS: usize = 224;
const EXT_HALF: usize = EXT_BITS / 2;

/// Address bits of the payload output FIFOs: deep enough for every beat
/// issued and not yet taken (two RAM stages, `r_*`, the FIFO's own).
const OB_A: usize = 3;
/// Beats the payload reader may have issued and not yet seen taken.
const OB_DEPTH: u64 = 1 << OB_A;

/// The receive parser. `A` is log2 of the frame buffer in beats, `AP1 = A + 1`.
///
/// The drop counters step one edge after a descriptor enters the output
/// slice, which is no later than the edge it can first be taken on `m_hdr`:
/// a descriptor taken is already counted.
#[derive(LogicBlock)]
pub struct RoceRx<const W: usize, const K: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_axis: StreamIn<W, K>,
    pub m_axis: StreamOut<W, K>,
    // Descriptor.
    pub m_hdr_valid: Signal<Out, Bit>,
    pub m_hdr_ready: Signal<In, Bit>,
    pub m_hdr_drop: Signal<Out, Bit>,
    pub m_hdr_reason: Signal<Out, Bits<4>>,
    pub m_hdr_ipv6: Signal<Out, Bit>,
    pub m_hdr_src_port: Signal<Out, Bits<16>>,
    pub m_hdr_opcode: Signal<Out, Bits<8>>,
    pub m_hdr_se: Signal<Out, Bit>,
    pub m_hdr_m: Signal<Out, Bit>,
    pub m_hdr_padcnt: Signal<Out, Bits<2>>,
    pub m_hdr_tver: Signal<Out, Bits<4>>,
    pub m_hdr_pkey: Signal<Out, Bits<16>>,
    pub m_hdr_fecn: Signal<Out, Bit>,
    pub m_hdr_becn: Signal<Out, Bit>,
    pub m_hdr_destqp: Signal<Out, Bits<24>>,
    pub m_hdr_ackreq: Signal<Out, Bit>,
    pub m_hdr_psn: Signal<Out, Bits<24>>,
    pub m_hdr_payload_len: Signal<Out, Bits<16>>,
    /// Presence per `ExtKind` (bit n = `ExtKind::ALL[n]`).
    pub m_hdr_ext: Signal<Out, Bits<8>>,
    pub m_hdr_reth_va: Signal<Out, Bits<64>>,
    pub m_hdr_reth_rkey: Signal<Out, Bits<32>>,
    pub m_hdr_reth_dmalen: Signal<Out, Bits<32>>,
    pub m_hdr_aeth_syndrome: Signal<Out, Bits<8>>,
    pub m_hdr_aeth_msn: Signal<Out, Bits<24>>,
    pub m_hdr_immdt: Signal<Out, Bits<32>>,
    pub m_hdr_ieth: Signal<Out, Bits<32>>,
    pub m_hdr_atomic_va: Signal<Out, Bits<64>>,
    pub m_hdr_atomic_rkey: Signal<Out, Bits<32>>,
    pub m_hdr_atomic_swap_add: Signal<Out, Bits<64>>,
    pub m_hdr_atomic_compare: Signal<Out, Bits<64>>,
    pub m_hdr_atomicack_orig: Signal<Out, Bits<64>>,
    pub m_hdr_deth_qkey: Signal<Out, Bits<32>>,
    pub m_hdr_deth_srcqp: Signal<Out, Bits<24>>,
    // Counters (drops per DropReason, in DropReason::ALL order; accepts).
    pub cnt_not_roce: Signal<Out, Bits<32>>,
    pub cnt_truncated: Signal<Out, Bits<32>>,
    pub cnt_bad_ip_checksum: Signal<Out, Bits<32>>,
    pub cnt_ip_options: Signal<Out, Bits<32>>,
    pub cnt_bad_length: Signal<Out, Bits<32>>,
    pub cnt_bad_tver: Signal<Out, Bits<32>>,
    pub cnt_unknown_opcode: Signal<Out, Bits<32>>,
    pub cnt_bad_padcnt: Signal<Out, Bits<32>>,
    pub cnt_bad_icrc: Signal<Out, Bits<32>>,
    pub cnt_accept: Signal<Out, Bits<32>>,
    // --- input and S1 ---
    ready_r: DFF<Bit>,
    /// Frame-buffer beats in use (`wptr - rptr`), registered so the credit
    /// compare starts from flip-flops.
    used: DFF<Bits<16>>,
    fire: Signal<Local, Bit>,
    in_b: DFF<Bits<16>>,
    cap: HeaderCapture<W, K>,
    v1: DFF<Bit>,
    d1: DFF<Bits<W>>,
    k1: DFF<Bits<K>>,
    l1: DFF<Bit>,
    b1: DFF<Bits<16>>,
    top_byte: XorMatrix<K, PAD_BITS>,
    /// The beat's top valid lane (from `tkeep`, registered with the beat).
    t1: DFF<Bits<PAD_BITS>>,
    et_o: ByteSelect<HDR_BITS, 16>,
    et_i: ByteSelect<HDR_BITS, 16>,
    // The layout's EtherType flags, decided from the beat that brings the
    // bytes (S0) and registered with the capture, so S1's field selects
    // start from flip-flops (`o_*`: the outer EtherType; `i_*`: the one
    // after a VLAN tag).
    et_o0: ByteSelect<W, 16>,
    et_i0: ByteSelect<W, 16>,
    o_tag: DFF<Bit>,
    o_v6: DFF<Bit>,
    o_v4: DFF<Bit>,
    i_v6: DFF<Bit>,
    i_v4: DFF<Bit>,
    // The IP version of the layout, `o_tag ? i_* : o_*`, kept as a register
    // that updates with its inputs.
    lay_v6: DFF<Bit>,
    lay_v4: DFF<Bit>,
    // Copies of `o_tag` and `lay_v6` for half of S1's field selects (the
    // checksum's, UDP's and BTH's; the originals drive the other IP
    // fields' and the extension headers'), so no one flag register drives
    // all of them and sits by them, far from the logic that computes it.
    // They hold the inverted value, or yosys would merge them with the
    // originals (a keep attribute does not stop that); their `_n` is "not",
    // not "next" as in `tag_n` below. `tagged1b` / `v6_1b` undo it.
    o_tag_n: DFF<Bit>,
    lay_v6_n: DFF<Bit>,
    tag_n: Signal<Local, Bit>,
    ov6_n: Signal<Local, Bit>,
    ov4_n: Signal<Local, Bit>,
    iv6_n: Signal<Local, Bit>,
    iv4_n: Signal<Local, Bit>,
    // `in_b` one beat before the outer / inner EtherType's beat, and
    // whether that beat is the first.
    c_b_o1: Constant<Bits<16>>,
    c_b_i1: Constant<Bits<16>>,
    c_o_first: Constant<Bit>,
    c_i_first: Constant<Bit>,
    /// The next beat is the one with the outer / inner EtherType
    /// (registered from `in_b` and the handshake a beat ahead).
    at_o: DFF<Bit>,
    at_i: DFF<Bit>,
    tagged1: Signal<Local, Bit>,
    v6_1: Signal<Local, Bit>,
    v4_1: Signal<Local, Bit>,
    sel1: Signal<Local, Bits<2>>,
    tagged1b: Signal<Local, Bit>,
    v6_1b: Signal<Local, Bit>,
    sel1b: Signal<Local, Bits<2>>,
    f_ipb0: ByteSelect<HDR_BITS, 8>,
    f_tot: ByteSelect<HDR_BITS, 16>,
    f_frag: ByteSelect<HDR_BITS, 16>,
    f_proto: ByteSelect<HDR_BITS, 8>,
    f_plen: ByteSelect<HDR_BITS, 16>,
    f_nh: ByteSelect<HDR_BITS, 8>,
    f_usrc: ByteSelect<HDR_BITS, 16>,
    f_udst: ByteSelect<HDR_BITS, 16>,
    f_ulen: ByteSelect<HDR_BITS, 16>,
    f_op: ByteSelect<HDR_BITS, 8>,
    f_flags: ByteSelect<HDR_BITS, 8>,
    f_pkey: ByteSelect<HDR_BITS, 16>,
    f_fb: ByteSelect<HDR_BITS, 8>,
    f_qp: ByteSelect<HDR_BITS, 24>,
    f_ack: ByteSelect<HDR_BITS, 8>,
    f_psn: ByteSelect<HDR_BITS, 24>,
    f_ext: ByteSelect<HDR_BITS, EXT_BITS>,
    csum: OnesStream<W>,
    // --- S2 ---
    v2: DFF<Bit>,
    d2: DFF<Bits<W>>,
    k2: DFF<Bits<K>>,
    l2: DFF<Bit>,
    b2: DFF<Bits<16>>,
    pos2: DFF<Bits<18>>,
    len2: DFF<Bits<18>>,
    sel2: DFF<Bits<2>>,
    et_o2: DFF<Bits<16>>,
    et_i2: DFF<Bits<16>>,
    tagged2: DFF<Bit>,
    v6_2: DFF<Bit>,
    v4_2: DFF<Bit>,
    ipb0_2: DFF<Bits<8>>,
    tot2: DFF<Bits<16>>,
    frag2: DFF<Bits<16>>,
    proto2: DFF<Bits<8>>,
    plen2: DFF<Bits<16>>,
    nh2: DFF<Bits<8>>,
    usrc2: DFF<Bits<16>>,
    udst2: DFF<Bits<16>>,
    ulen2: DFF<Bits<16>>,
    op2: DFF<Bits<8>>,
    flags2: DFF<Bits<8>>,
    pkey2: DFF<Bits<16>>,
    fb2: DFF<Bits<8>>,
    qp2: DFF<Bits<24>>,
    ack2: DFF<Bits<8>>,
    psn2: DFF<Bits<24>>,
    ext2: DFF<Bits<EXT_BITS>>,
    op_rom: LogicRom<32, 8>,
    nh_rom: ROM<Bit, 8>,
    // --- S3 ---
    v3: DFF<Bit>,
    d3: DFF<Bits<W>>,
    k3: DFF<Bits<K>>,
    l3: DFF<Bit>,
    /// `b2` clamped to 31 (the ICRC mask table has fewer rows), so the
    /// mask decode reads five flip-flops, not a 16-bit compare.
    mb3: DFF<Bits<5>>,
    c_mb_max: Constant<Bits<16>>,
    pos3: DFF<Bits<18>>,
    len3: DFF<Bits<18>>,
    sel3: DFF<Bits<2>>,
    bad_eth3: DFF<Bit>,
    bad_ad3: DFF<Bit>,
    tagged3: DFF<Bit>,
    v6_3: DFF<Bit>,
    v4_3: DFF<Bit>,
    ipb0_3: DFF<Bits<8>>,
    tot_lt3: DFF<Bit>,
    frag_bad3: DFF<Bit>,
    proto_bad3: DFF<Bit>,
    nhext3: DFF<Bit>,
    nh_bad3: DFF<Bit>,
    port_bad3: DFF<Bit>,
    ulen3: DFF<Bits<18>>,
    ip_pay3: DFF<Bits<18>>,
    /// `ip_pay3` less the UDP and BTH headers and the ICRC: the body's
    /// constant part, taken off a stage early so that S4's body length is
    /// one subtraction (of the extension headers' length).
    body3: DFF<Bits<18>>,
    e3: DFF<Bits<18>>,
    /// `e3` + the UDP header, and + UDP and BTH (constants chosen with it).
    eu3: DFF<Bits<18>>,
    eub3: DFF<Bits<18>>,
    iph3: DFF<Bits<18>>,
    info3: DFF<Bits<32>>,
    usrc3: DFF<Bits<16>>,
    op3: DFF<Bits<8>>,
    flags3: DFF<Bits<8>>,
    pkey3: DFF<Bits<16>>,
    fb3: DFF<Bits<8>>,
    qp3: DFF<Bits<24>>,
    ack3: DFF<Bits<8>>,
    psn3: DFF<Bits<24>>,
    ext3: DFF<Bits<EXT_BITS>>,
    extlen3: Signal<Local, Bits<18>>,
    mask: BeatMask<W, K>,
    // --- S4 ---
    v4s: DFF<Bit>,
    d4: DFF<Bits<W>>,
    k4: DFF<Bits<K>>,
    l4: DFF<Bit>,
    pos4: DFF<Bits<18>>,
    /// `pos4 + K`, one bit wider.
    posk4: DFF<Bits<19>>,
    len4: DFF<Bits<18>>,
    and4: DFF<Bits<W>>,
    or4: DFF<Bits<W>>,
    pre_eth4: DFF<Bits<4>>,
    e4: DFF<Bits<18>>,
    v6_4: DFF<Bit>,
    v4_4: DFF<Bit>,
    ver_bad4: DFF<Bit>,
    ihl_lt4: DFF<Bit>,
    ihl_ne4: DFF<Bit>,
    frag_bad4: DFF<Bit>,
    proto_bad4: DFF<Bit>,
    nhext4: DFF<Bit>,
    nh_bad4: DFF<Bit>,
    port_bad4: DFF<Bit>,
    t_ip4: DFF<Bits<18>>,
    t_ihl4: DFF<Bits<18>>,
    t_udp4: DFF<Bits<18>>,
    t_l3_4: DFF<Bits<18>>,
    pay_small4: DFF<Bit>,
    ulen_bad4: DFF<Bit>,
    l4_short4: DFF<Bit>,
    body4: DFF<Bits<18>>,
    body_neg4: DFF<Bit>,
    p4: DFF<Bits<18>>,
    info4: DFF<Bits<32>>,
    usrc4: DFF<Bits<16>>,
    op4: DFF<Bits<8>>,
    flags4: DFF<Bits<8>>,
    pkey4: DFF<Bits<16>>,
    fb4: DFF<Bits<8>>,
    qp4: DFF<Bits<24>>,
    ack4: DFF<Bits<8>>,
    psn4: DFF<Bits<24>>,
    ext4: DFF<Bits<EXT_BITS>>,
    // --- S5 ---
    v5: DFF<Bit>,
    d5: DFF<Bits<W>>,
    k5: DFF<Bits<K>>,
    l5: DFF<Bit>,
    and5: DFF<Bits<W>>,
    or5: DFF<Bits<W>>,
    /// ICRC-covered bytes left from this beat's start, and whether they end
    /// in it (computed in S4, so S5 feeds the engine from registers).
    crem5: DFF<Bits<18>>,
    /// The range tests of both candidate ICRC-feed ends (UDP end when the
    /// IP payload is too small for UDP, else the IP datagram's end) against
    /// this beat, registered in S4; S5 picks by `pay_small5`:
    /// `pos <= end` (`ge`), `end <= pos + K` (`le`), `end < pos + K` (`lt`).
    ge_u5: DFF<Bit>,
    le_u5: DFF<Bit>,
    lt_u5: DFF<Bit>,
    ge_l5: DFF<Bit>,
    le_l5: DFF<Bit>,
    lt_l5: DFF<Bit>,
    /// The ICRC feed's end is at or past this beat's end (or before its
    /// start): every lane of the beat is fed, so the lane mask looks only at
    /// `crem5`'s low bits.
    cbig: Signal<Local, Bit>,
    /// The ICRC feed's end lies in this beat: `pos <= end <= pos + K`.
    clast: Signal<Local, Bit>,
    ce_sel4: Signal<Local, Bits<18>>,
    /// The beat holds or is past the payload start (`pos4 >= p4 & !kmask`:
    /// the payload starts in beat `p / K`), and is past it (`pos >= first`
    /// with `first = (p & !kmask) + K`: both are multiples of K, so `pos4 >
    /// p4 & !kmask`).
    from5: DFF<Bit>,
    past5: DFF<Bit>,
    /// The payload continues past this beat (`peks > pos + K` with `peks =
    /// first + body - pad`, tested as `pb5 > pp5`: `(p & !kmask) + body >
    /// pos + pad`, one add each in S4), and that
    /// test at the last valid beat: for a beat past the payload start it
    /// is the beat before, of the same frame, whose `pos + K` is this beat's
    /// `pos`, so it says `peks > pos` from a register.
    more5: Signal<Local, Bit>,
    more_q: DFF<Bit>,
    pb5: DFF<Bits<19>>,
    pp5: DFF<Bits<19>>,
    shift5: DFF<Bits<8>>,
    pay_len5: DFF<Bits<18>>,
    /// The IP checks' inputs, as bits (`pre_ip` orders them in S5).
    len_eq5: DFF<Bit>,
    ver_bad5: DFF<Bit>,
    lt_ip5: DFF<Bit>,
    ihl_lt5: DFF<Bit>,
    lt_ihl5: DFF<Bit>,
    v4_5: DFF<Bit>,
    v6_5: DFF<Bit>,
    ihl_ne5: DFF<Bit>,
    frag_bad5: DFF<Bit>,
    proto_bad5: DFF<Bit>,
    nhext5: DFF<Bit>,
    nh_bad5: DFF<Bit>,
    port_bad5: DFF<Bit>,
    // S5's length compares, made in S4 from the same values.
    lt_udp5: DFF<Bit>,
    lt_l3_5: DFF<Bit>,
    pad_gt5: DFF<Bit>,
    pay_small5: DFF<Bit>,
    ulen_bad5: DFF<Bit>,
    l4_short5: DFF<Bit>,
    /// The BTH payload is non-zero / not 4-byte aligned; the BTH's TVer is
    /// not 0 / PadCnt is not 0 (S4's values reduced to a bit).
    body_nz5: DFF<Bit>,
    body_lo_nz5: DFF<Bit>,
    tver_bad5: DFF<Bit>,
    pad_nz5: DFF<Bit>,
    body_neg5: DFF<Bit>,
    info5: DFF<Bits<32>>,
    usrc5: DFF<Bits<16>>,
    op5: DFF<Bits<8>>,
    flags5: DFF<Bits<8>>,
    pkey5: DFF<Bits<16>>,
    fb5: DFF<Bits<8>>,
    qp5: DFF<Bits<24>>,
    ack5: DFF<Bits<8>>,
    psn5: DFF<Bits<24>>,
    ext5: DFF<Bits<EXT_BITS>>,
    pre_eth5: DFF<Bits<4>>,
    crc_done: DFF<Bit>,
    crem: Signal<Local, Bits<18>>,
    emit: Signal<Local, Bit>,
    prev: DFF<Bits<W>>,
    realign: ByteRealign<W, K>,
    fl_pending: DFF<Bit>,
    fl_need: DFF<Bit>,
    fl_shift: DFF<Bits<8>>,
    crc: Crc32<W, K>,
    pre: Signal<Local, Bits<4>>,
    pre_ip: Signal<Local, Bits<4>>,
    post: Signal<Local, Bits<4>>,
    post2: Signal<Local, Bits<4>>,
    post2a: Signal<Local, Bits<4>>,
    post2b: Signal<Local, Bits<4>>,
    // --- S6: frame buffer and frame results ---
    w_valid: DFF<Bit>,
    w_data: DFF<Bits<W>>,
    wptr: DFF<Bits<16>>,
    ram: BramOutReg<Bits<W>, A>,
    r_entry: DFF<RxEntry>,
    r_data: DFF<RxData>,
    r_data2: DFF<RxData2>,
    r_ext: DFF<Bits<EXT_BITS>>,
    // A frame's entry, queued in two parts written and popped together
    // (at most MAX_FRAMES entries wait, so neither fills).
    entries: SyncFifo<RxCtl, 5, 6>,
    fields: RamQueue<RxData, 5>,
    fields2: RamQueue<RxData2, 5>,
    // The extension word in two more queues, each with its own read
    // pointer: no pointer reaches more than ~60 LUT-RAM cells.
    ext_lo: RamQueue<Bits<EXT_HALF>, 5>,
    ext_hi: RamQueue<Bits<EXT_HALF>, 5>,
    ext_word: Signal<Local, Bits<EXT_BITS>>,
    csums: SyncFifo<Bit, 5, 6>,
    // --- descriptor output ---
    hdr_avail: Signal<Local, Bit>,
    hs: RegSlice<RxDesc>,
    // The IPv4 checksum and ICRC verdicts, each through a slice placed at
    // the join, so the join's take pops only local registers (the queues
    // behind refill them through the slices' registered `s_ready`).
    cs: RegSlice<Bit>,
    cr: RegSlice<Bit>,
    hdr_take: Signal<Local, Bit>,
    reason: Signal<Local, Bits<4>>,
    /// The frame is dropped (`reason` is not none), from the parts directly.
    e_drop: Signal<Local, Bit>,
    e_flags: Signal<Local, Bits<8>>,
    e_fb: Signal<Local, Bits<8>>,
    e_ack: Signal<Local, Bits<8>>,
    crc_ok: Signal<Local, Bit>,
    o_reth_va: ByteSelect<EXT_BITS, 64>,
    o_reth_rkey: ByteSelect<EXT_BITS, 32>,
    o_reth_dmalen: ByteSelect<EXT_BITS, 32>,
    o_aeth_syn: ByteSelect<EXT_BITS, 8>,
    o_aeth_msn: ByteSelect<EXT_BITS, 24>,
    o_immdt: ByteSelect<EXT_BITS, 32>,
    o_ieth: ByteSelect<EXT_BITS, 32>,
    o_at_va: ByteSelect<EXT_BITS, 64>,
    o_at_rkey: ByteSelect<EXT_BITS, 32>,
    o_at_swap: ByteSelect<EXT_BITS, 64>,
    o_at_cmp: ByteSelect<EXT_BITS, 64>,
    o_ack_orig: ByteSelect<EXT_BITS, 64>,
    o_deth_qkey: ByteSelect<EXT_BITS, 32>,
    o_deth_srcqp: ByteSelect<EXT_BITS, 24>,
    frames: DFF<Bits<8>>,
    counts: Vec<Counter32>,
    why6: Signal<Local, Bits<4>>,
    /// The entry's checksum verdict fails the frame (IPv4 and bad).
    cs_bad: Signal<Local, Bit>,
    /// The join's verdict one-hot in counter order (0 when accepted),
    /// each bit from the head registers in one LUT.
    onehot: Signal<Local, Bits<COUNTERS>>,
    onehot_why: Signal<Local, Bits<COUNTERS>>,
    onehot_cs: Signal<Local, Bits<COUNTERS>>,
    onehot_cr: Signal<Local, Bits<COUNTERS>>,
    onehot_ok: Signal<Local, Bits<COUNTERS>>,
    // A taken descriptor's verdict (one-hot, registered every cycle),
    // counted a cycle later, so no counter's enable decodes a reason.
    take_q: DFF<Bit>,
    onehot_q: DFF<Bits<COUNTERS>>,
    jobs: SyncFifo<RxJob, 4, 5>,
    // --- payload reader ---
    job_active: DFF<Bit>,
    job: DFF<RxJob>,
    /// The previous job's end pointer (where the next frame starts), and
    /// one past it.
    prev_end: DFF<Bits<16>>,
    prev_end1: DFF<Bits<16>>,
    job_beats: Signal<Local, Bits<16>>,
    /// Beats the reader has left of the current job, and whether that is
    /// 0 or 1 (flip-flops, so no beat compares the read pointer).
    left: DFF<Bits<16>>,
    left_none: DFF<Bit>,
    left_one: DFF<Bit>,
    rptr: DFF<Bits<16>>,
    issue: Signal<Local, Bit>,
    finishing: Signal<Local, Bit>,
    r_valid: DFF<Bit>,
    r_keep: DFF<Bits<K>>,
    r_last: DFF<Bit>,
    // The RAM word leaves its output register a cycle after `r_*`.
    r2_valid: DFF<Bit>,
    r2_keep: DFF<Bits<K>>,
    r2_last: DFF<Bit>,
    ob_cnt: DFF<Bits<4>>,
    ob_data: SyncFifo<Bits<W>, OB_A, { OB_A + 1 }>,
    /// Beside `ob_data`, moved by its pointers and flags.
    ob_keep: FifoLane<Bits<K>, OB_A>,
    ob_last: FifoLane<Bit, OB_A>,
    // Constants.
    c_tpid: Constant<Bits<16>>,
    c_tpid_ad: Constant<Bits<16>>,
    c_et4: Constant<Bits<16>>,
    c_et6: Constant<Bits<16>>,
    c_udp_proto: Constant<Bits<8>>,
    c_port: Constant<Bits<16>>,
    c_e_untagged: Constant<Bits<18>>,
    c_e_tagged: Constant<Bits<18>>,
    c_iph4: Constant<Bits<18>>,
    c_iph6: Constant<Bits<18>>,
    c_udph: Constant<Bits<18>>,
    c_eu_untagged: Constant<Bits<18>>,
    c_eu_tagged: Constant<Bits<18>>,
    c_eub_untagged: Constant<Bits<18>>,
    c_eub_tagged: Constant<Bits<18>>,
    c_udp_bth_icrc: Constant<Bits<18>>,
    c_iph4_udp_bth_icrc: Constant<Bits<18>>,
    c_k: Constant<Bits<18>>,
    c_kmask: Constant<Bits<18>>,
    c_log2k: Constant<Bits<8>>,
    c_ones: Constant<Bits<K>>,
    c_ob_depth: Constant<Bits<4>>,
    c_ver4: Constant<Bits<8>>,
    c_ver6: Constant<Bits<8>>,
    c_ihl_min: Constant<Bits<8>>,
    c_frag_mask: Constant<Bits<16>>,
    c_init: Constant<Bits<32>>,
    c_residue: Constant<Bits<32>>,
    c_room: Constant<Bits<16>>,
    c_fmax: Constant<Bits<8>>,
    c_r_not_roce: Constant<Bits<4>>,
    c_r_truncated: Constant<Bits<4>>,
    c_r_bad_csum: Constant<Bits<4>>,
    c_r_ip_options: Constant<Bits<4>>,
    c_r_bad_length: Constant<Bits<4>>,
    c_r_bad_tver: Constant<Bits<4>>,
    c_r_unknown_opcode: Constant<Bits<4>>,
    c_r_bad_padcnt: Constant<Bits<4>>,
    c_r_bad_icrc: Constant<Bits<4>>,
    c_hot_csum: Constant<Bits<COUNTERS>>,
    c_hot_icrc: Constant<Bits<COUNTERS>>,
    c_hot_accept: Constant<Bits<COUNTERS>>,
    c_ext_half: Constant<Bits<8>>,
    c_r_none: Constant<Bits<4>>,
}

fn k18(v: usize) -> Constant<Bits<18>> {
    Constant::new((v as u64).into())
}
fn r4(r: DropReason) -> Constant<Bits<4>> {
    Constant::new((r.index() as u64).into())
}
fn hot(i: usize) -> Constant<Bits<COUNTERS>> {
    Constant::new(Bits::<COUNTERS>::default().replace_bit(i, true))
}

impl<const W: usize, const K: usize, const A: usize> RoceRx<W, K, A> {
    pub fn new() -> Self {
        check_width("RoceRx", W, K);
        assert!(
            (4..=15).contains(&A),
            "RoceRx: buffer address width {A} out of 4..=15"
        );
        assert!((1u64 << A) > 2 * MARGIN);
        // bit b of n-1 (bytes in a packed keep) is the parity of keep[m * 2^b].
        let top_rows: Vec<Vec<u64>> = (0..PAD_BITS)
            .map(|b| {
                let mut row = vec![0u64; K.div_ceil(64)];
                for v in (1..K).filter(|v| v % (1 << b) == 0) {
                    row[v / 64] |= 1 << (v % 64);
                }
                row
            })
            .collect();
        let ip = |l: Layout| l.ip();
        let u = |l: Layout| l.udp();
        let b = |l: Layout| l.bth();
        let nh_rom: BTreeMap<Bits<8>, Bit> = (0..=255u64)
            .map(|v| (v.into(), ipv6::EXTENSION_HEADERS.contains(&(v as u8))))
            .collect();
        let shifts: Vec<usize> = payload_starts().iter().map(|p| p % K).collect();
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_axis: Default::default(),
            m_axis: Default::default(),
            m_hdr_valid: Default::default(),
            m_hdr_ready: Default::default(),
            m_hdr_drop: Default::default(),
            m_hdr_reason: Default::default(),
            m_hdr_ipv6: Default::default(),
            m_hdr_src_port: Default::default(),
            m_hdr_opcode: Default::default(),
            m_hdr_se: Default::default(),
            m_hdr_m: Default::default(),
            m_hdr_padcnt: Default::default(),
            m_hdr_tver: Default::default(),
            m_hdr_pkey: Default::default(),
            m_hdr_fecn: Default::default(),
            m_hdr_becn: Default::default(),
            m_hdr_destqp: Default::default(),
            m_hdr_ackreq: Default::default(),
            m_hdr_psn: Default::default(),
            m_hdr_payload_len: Default::default(),
            m_hdr_ext: Default::default(),
            m_hdr_reth_va: Default::default(),
            m_hdr_reth_rkey: Default::default(),
            m_hdr_reth_dmalen: Default::default(),
            m_hdr_aeth_syndrome: Default::default(),
            m_hdr_aeth_msn: Default::default(),
            m_hdr_immdt: Default::default(),
            m_hdr_ieth: Default::default(),
            m_hdr_atomic_va: Default::default(),
            m_hdr_atomic_rkey: Default::default(),
            m_hdr_atomic_swap_add: Default::default(),
            m_hdr_atomic_compare: Default::default(),
            m_hdr_atomicack_orig: Default::default(),
            m_hdr_deth_qkey: Default::default(),
            m_hdr_deth_srcqp: Default::default(),
            cnt_not_roce: Default::default(),
            cnt_truncated: Default::default(),
            cnt_bad_ip_checksum: Default::default(),
            cnt_ip_options: Default::default(),
            cnt_bad_length: Default::default(),
            cnt_bad_tver: Default::default(),
            cnt_unknown_opcode: Default::default(),
            cnt_bad_padcnt: Default::default(),
            cnt_bad_icrc: Default::default(),
            cnt_accept: Default::default(),
            ready_r: Default::default(),
            used: Default::default(),
            fire: Default::default(),
            in_b: Default::default(),
            cap: HeaderCapture::new(header_bytes()),
            v1: Default::default(),
            d1: Default::default(),
            k1: Default::default(),
            l1: Default::default(),
            b1: Default::default(),
            top_byte: XorMatrix::new(top_rows),
            t1: Default::default(),
            et_o: ByteSelect::fixed(ethernet::field::ETHERTYPE.start),
            et_i: ByteSelect::fixed(ethernet::field::INNER_ETHERTYPE.start),
            et_o0: ByteSelect::fixed(ethernet::field::ETHERTYPE.start % K),
            et_i0: ByteSelect::fixed(ethernet::field::INNER_ETHERTYPE.start % K),
            o_tag: Default::default(),
            o_v6: Default::default(),
            o_v4: Default::default(),
            i_v6: Default::default(),
            i_v4: Default::default(),
            lay_v6: Default::default(),
            lay_v4: Default::default(),
            o_tag_n: Default::default(),
            lay_v6_n: Default::default(),
            tag_n: Default::default(),
            ov6_n: Default::default(),
            ov4_n: Default::default(),
            iv6_n: Default::default(),
            iv4_n: Default::default(),
            c_b_o1: Constant::new(
                (((ethernet::field::ETHERTYPE.start / K) as u64).wrapping_sub(1) & 0xffff).into(),
            ),
            c_b_i1: Constant::new(
                (((ethernet::field::INNER_ETHERTYPE.start / K) as u64).wrapping_sub(1) & 0xffff)
                    .into(),
            ),
            c_o_first: Constant::new(ethernet::field::ETHERTYPE.start / K == 0),
            c_i_first: Constant::new(ethernet::field::INNER_ETHERTYPE.start / K == 0),
            at_o: Default::default(),
            at_i: Default::default(),
            tagged1: Default::default(),
            v6_1: Default::default(),
            v4_1: Default::default(),
            sel1: Default::default(),
            tagged1b: Default::default(),
            v6_1b: Default::default(),
            sel1b: Default::default(),
            f_ipb0: ByteSelect::new(field_at(ip, ipv4::field::VER_IHL)),
            f_tot: ByteSelect::new(field_at(ip, ipv4::field::LENGTH.start)),
            f_frag: ByteSelect::new(field_at(ip, ipv4::field::FLG_OFF.start)),
            f_proto: ByteSelect::new(field_at(ip, ipv4::field::PROTOCOL)),
            f_plen: ByteSelect::new(field_at(ip, ipv6::field::LENGTH.start)),
            f_nh: ByteSelect::new(field_at(ip, ipv6::field::NXT_HDR)),
            f_usrc: ByteSelect::new(field_at(u, udp::field::SRC_PORT.start)),
            f_udst: ByteSelect::new(field_at(u, udp::field::DST_PORT.start)),
            f_ulen: ByteSelect::new(field_at(u, udp::field::LENGTH.start)),
            f_op: ByteSelect::new(field_at(b, bth::field::OPCODE)),
            f_flags: ByteSelect::new(field_at(b, bth::field::FLAGS)),
            f_pkey: ByteSelect::new(field_at(b, bth::field::PKEY.start)),
            f_fb: ByteSelect::new(field_at(b, bth::field::FECN_BECN)),
            f_qp: ByteSelect::new(field_at(b, bth::field::DEST_QP.start)),
            f_ack: ByteSelect::new(field_at(b, bth::field::ACKREQ)),
            f_psn: ByteSelect::new(field_at(b, bth::field::PSN.start)),
            f_ext: ByteSelect::new(per_layout(|l| l.ext())),
            csum: OnesStream::new([false, true].map(|tagged| {
                Layout {
                    tagged,
                    ipv6: false,
                }
                .ip()
            })),
            v2: Default::default(),
            d2: Default::default(),
            k2: Default::default(),
            l2: Default::default(),
            b2: Default::default(),
            pos2: Default::default(),
            len2: Default::default(),
            sel2: Default::default(),
            et_o2: Default::default(),
            et_i2: Default::default(),
            tagged2: Default::default(),
            v6_2: Default::default(),
            v4_2: Default::default(),
            ipb0_2: Default::default(),
            tot2: Default::default(),
            frag2: Default::default(),
            proto2: Default::default(),
            plen2: Default::default(),
            nh2: Default::default(),
            usrc2: Default::default(),
            udst2: Default::default(),
            ulen2: Default::default(),
            op2: Default::default(),
            flags2: Default::default(),
            pkey2: Default::default(),
            fb2: Default::default(),
            qp2: Default::default(),
            ack2: Default::default(),
            psn2: Default::default(),
            ext2: Default::default(),
            op_rom: LogicRom::new(opcode_rom()),
            nh_rom: ROM::new(nh_rom),
            v3: Default::default(),
            d3: Default::default(),
            k3: Default::default(),
            l3: Default::default(),
            pos3: Default::default(),
            len3: Default::default(),
            sel3: Default::default(),
            bad_eth3: Default::default(),
            bad_ad3: Default::default(),
            tagged3: Default::default(),
            v6_3: Default::default(),
            v4_3: Default::default(),
            ipb0_3: Default::default(),
            tot_lt3: Default::default(),
            frag_bad3: Default::default(),
            proto_bad3: Default::default(),
            nhext3: Default::default(),
            nh_bad3: Default::default(),
            port_bad3: Default::default(),
            ulen3: Default::default(),
            ip_pay3: Default::default(),
            body3: Default::default(),
            e3: Default::default(),
            eu3: Default::default(),
            eub3: Default::default(),
            iph3: Default::default(),
            info3: Default::default(),
            usrc3: Default::default(),
            op3: Default::default(),
            flags3: Default::default(),
            pkey3: Default::default(),
            fb3: Default::default(),
            qp3: Default::default(),
            ack3: Default::default(),
            psn3: Default::default(),
            ext3: Default::default(),
            extlen3: Default::default(),
            mask: BeatMask::new(beat_masks(K)),
            mb3: Default::default(),
            c_mb_max: Constant::new(31.into()),
            v4s: Default::default(),
            d4: Default::default(),
            k4: Default::default(),
            l4: Default::default(),
            pos4: Default::default(),
            posk4: Default::default(),
            len4: Default::default(),
            and4: Default::default(),
            or4: Default::default(),
            pre_eth4: Default::default(),
            e4: Default::default(),
            v6_4: Default::default(),
            v4_4: Default::default(),
            ver_bad4: Default::default(),
            ihl_lt4: Default::default(),
            ihl_ne4: Default::default(),
            frag_bad4: Default::default(),
            proto_bad4: Default::default(),
            nhext4: Default::default(),
            nh_bad4: Default::default(),
            port_bad4: Default::default(),
            t_ip4: Default::default(),
            t_ihl4: Default::default(),
            t_udp4: Default::default(),
            t_l3_4: Default::default(),
            pay_small4: Default::default(),
            ulen_bad4: Default::default(),
            l4_short4: Default::default(),
            body4: Default::default(),
            body_neg4: Default::default(),
            p4: Default::default(),
            info4: Default::default(),
            usrc4: Default::default(),
            op4: Default::default(),
            flags4: Default::default(),
            pkey4: Default::default(),
            fb4: Default::default(),
            qp4: Default::default(),
            ack4: Default::default(),
            psn4: Default::default(),
            ext4: Default::default(),
            v5: Default::default(),
            d5: Default::default(),
            k5: Default::default(),
            l5: Default::default(),
            and5: Default::default(),
            or5: Default::default(),
            crem5: Default::default(),
            ge_u5: Default::default(),
            le_u5: Default::default(),
            lt_u5: Default::default(),
            ge_l5: Default::default(),
            le_l5: Default::default(),
            lt_l5: Default::default(),
            cbig: Default::default(),
            clast: Default::default(),
            ce_sel4: Default::default(),
            from5: Default::default(),
            past5: Default::default(),
            more5: Default::default(),
            more_q: Default::default(),
            pb5: Default::default(),
            pp5: Default::default(),
            shift5: Default::default(),
            pay_len5: Default::default(),
            len_eq5: Default::default(),
            ver_bad5: Default::default(),
            lt_ip5: Default::default(),
            ihl_lt5: Default::default(),
            lt_ihl5: Default::default(),
            v4_5: Default::default(),
            v6_5: Default::default(),
            ihl_ne5: Default::default(),
            frag_bad5: Default::default(),
            proto_bad5: Default::default(),
            nhext5: Default::default(),
            nh_bad5: Default::default(),
            port_bad5: Default::default(),
            lt_udp5: Default::default(),
            lt_l3_5: Default::default(),
            pad_gt5: Default::default(),
            pay_small5: Default::default(),
            ulen_bad5: Default::default(),
            l4_short5: Default::default(),
            body_nz5: Default::default(),
            body_lo_nz5: Default::default(),
            tver_bad5: Default::default(),
            pad_nz5: Default::default(),
            body_neg5: Default::default(),
            info5: Default::default(),
            usrc5: Default::default(),
            op5: Default::default(),
            flags5: Default::default(),
            pkey5: Default::default(),
            fb5: Default::default(),
            qp5: Default::default(),
            ack5: Default::default(),
            psn5: Default::default(),
            ext5: Default::default(),
            pre_eth5: Default::default(),
            crc_done: Default::default(),
            crem: Default::default(),
            emit: Default::default(),
            prev: Default::default(),
            realign: ByteRealign::new(&shifts),
            fl_pending: Default::default(),
            fl_need: Default::default(),
            fl_shift: Default::default(),
            crc: Crc32::new().uncredited(),
            pre: Default::default(),
            pre_ip: Default::default(),
            post: Default::default(),
            post2: Default::default(),
            post2a: Default::default(),
            post2b: Default::default(),
            w_valid: Default::default(),
            w_data: Default::default(),
            wptr: Default::default(),
            ram: BramOutReg::new(),
            r_entry: Default::default(),
            r_data: Default::default(),
            r_data2: Default::default(),
            r_ext: Default::default(),
            entries: SyncFifo::new(),
            fields: RamQueue::new(),
            fields2: RamQueue::new(),
            ext_lo: RamQueue::new(),
            ext_hi: RamQueue::new(),
            ext_word: Default::default(),
            csums: SyncFifo::new(),
            hdr_avail: Default::default(),
            hs: RegSlice::new(),
            cs: RegSlice::new(),
            cr: RegSlice::new(),
            hdr_take: Default::default(),
            reason: Default::default(),
            e_drop: Default::default(),
            e_flags: Default::default(),
            e_fb: Default::default(),
            e_ack: Default::default(),
            crc_ok: Default::default(),
            o_reth_va: ByteSelect::new_be(ext_field(ExtKind::Reth, ext::reth::field::VA.start)),
            o_reth_rkey: ByteSelect::new_be(ext_field(ExtKind::Reth, ext::reth::field::RKEY.start)),
            o_reth_dmalen: ByteSelect::new_be(ext_field(
                ExtKind::Reth,
                ext::reth::field::DMA_LEN.start,
            )),
            o_aeth_syn: ByteSelect::new_be(ext_field(ExtKind::Aeth, ext::aeth::field::SYNDROME)),
            o_aeth_msn: ByteSelect::new_be(ext_field(ExtKind::Aeth, ext::aeth::field::MSN.start)),
            o_immdt: ByteSelect::new_be(ext_field(ExtKind::ImmDt, 0)),
            o_ieth: ByteSelect::new_be(ext_field(ExtKind::Ieth, 0)),
            o_at_va: ByteSelect::new_be(ext_field(
                ExtKind::AtomicEth,
                ext::atomic_eth::field::VA.start,
            )),
            o_at_rkey: ByteSelect::new_be(ext_field(
                ExtKind::AtomicEth,
                ext::atomic_eth::field::RKEY.start,
            )),
            o_at_swap: ByteSelect::new_be(ext_field(
                ExtKind::AtomicEth,
                ext::atomic_eth::field::SWAP_ADD.start,
            )),
            o_at_cmp: ByteSelect::new_be(ext_field(
                ExtKind::AtomicEth,
                ext::atomic_eth::field::COMPARE.start,
            )),
            o_ack_orig: ByteSelect::new_be(ext_field(ExtKind::AtomicAckEth, 0)),
            o_deth_qkey: ByteSelect::new_be(ext_field(ExtKind::Deth, ext::deth::field::QKEY.start)),
            o_deth_srcqp: ByteSelect::new_be(ext_field(
                ExtKind::Deth,
                ext::deth::field::SRC_QP.start,
            )),
            frames: Default::default(),
            counts: (0..COUNTERS).map(|_| Default::default()).collect(),
            why6: Default::default(),
            cs_bad: Default::default(),
            onehot: Default::default(),
            onehot_why: Default::default(),
            onehot_cs: Default::default(),
            onehot_cr: Default::default(),
            onehot_ok: Default::default(),
            take_q: Default::default(),
            onehot_q: Default::default(),
            jobs: SyncFifo::new(),
            job_active: Default::default(),
            prev_end: Default::default(),
            prev_end1: Default::default(),
            job_beats: Default::default(),
            left: Default::default(),
            left_none: Default::default(),
            left_one: Default::default(),
            job: Default::default(),
            rptr: Default::default(),
            issue: Default::default(),
            finishing: Default::default(),
            r_valid: Default::default(),
            r_keep: Default::default(),
            r_last: Default::default(),
            r2_valid: Default::default(),
            r2_keep: Default::default(),
            r2_last: Default::default(),
            ob_cnt: Default::default(),
            ob_data: SyncFifo::new(),
            ob_keep: FifoLane::new(),
            ob_last: FifoLane::new(),
            c_tpid: Constant::new((ethernet::TPID_8021Q as u64).into()),
            c_tpid_ad: Constant::new((ethernet::TPID_8021AD as u64).into()),
            c_et4: Constant::new((ethernet::ETHERTYPE_IPV4 as u64).into()),
            c_et6: Constant::new((ethernet::ETHERTYPE_IPV6 as u64).into()),
            c_udp_proto: Constant::new((ipv4::PROTOCOL_UDP as u64).into()),
            c_port: Constant::new((udp::ROCE_V2_PORT as u64).into()),
            c_e_untagged: k18(ethernet::HEADER_LEN),
            c_e_tagged: k18(ethernet::TAGGED_HEADER_LEN),
            c_iph4: k18(ipv4::HEADER_LEN),
            c_iph6: k18(ipv6::HEADER_LEN),
            c_udph: k18(udp::HEADER_LEN),
            c_eu_untagged: k18(ethernet::HEADER_LEN + udp::HEADER_LEN),
            c_eu_tagged: k18(ethernet::TAGGED_HEADER_LEN + udp::HEADER_LEN),
            c_eub_untagged: k18(ethernet::HEADER_LEN + udp::HEADER_LEN + bth::HEADER_LEN),
            c_eub_tagged: k18(ethernet::TAGGED_HEADER_LEN + udp::HEADER_LEN + bth::HEADER_LEN),
            c_udp_bth_icrc: k18(udp::HEADER_LEN + bth::HEADER_LEN + icrc::ICRC_LEN),
            c_iph4_udp_bth_icrc: k18(ipv4::HEADER_LEN
                + udp::HEADER_LEN
                + bth::HEADER_LEN
                + icrc::ICRC_LEN),
            c_k: k18(K),
            c_kmask: k18(K - 1),
            c_log2k: Constant::new((K.trailing_zeros() as u64).into()),
            c_ones: Constant::new(Bits::<K>::mask()),
            c_ob_depth: Constant::new(OB_DEPTH.into()),
            c_ver4: Constant::new(4u64.into()),
            c_ver6: Constant::new(6u64.into()),
            c_ihl_min: Constant::new(((ipv4::HEADER_LEN / 4) as u64).into()),
            c_frag_mask: Constant::new(0x3FFFu64.into()),
            c_init: Constant::new((icrc_init() as u64).into()),
            c_residue: Constant::new((icrc_residue() as u64).into()),
            c_room: Constant::new(((1u64 << A) - MARGIN).into()),
            c_fmax: Constant::new(MAX_FRAMES.into()),
            c_r_not_roce: r4(DropReason::NotRoce),
            c_r_truncated: r4(DropReason::Truncated),
            c_r_bad_csum: r4(DropReason::BadIpChecksum),
            c_r_ip_options: r4(DropReason::IpOptions),
            c_r_bad_length: r4(DropReason::BadLength),
            c_r_bad_tver: r4(DropReason::BadTver),
            c_r_unknown_opcode: r4(DropReason::UnknownOpcode),
            c_r_bad_padcnt: r4(DropReason::BadPadcnt),
            c_r_bad_icrc: r4(DropReason::BadIcrc),
            c_hot_csum: hot(DropReason::BadIpChecksum.index()),
            c_hot_icrc: hot(DropReason::BadIcrc.index()),
            c_hot_accept: hot(COUNTERS - 1),
            c_ext_half: Constant::new((EXT_HALF as u64).into()),
            c_r_none: Constant::new(REASON_NONE.into()),
        }
    }

    /// Cycles from a frame's last beat on `s_axis` to its descriptor on
    /// `m_hdr` (idle outputs): S1..S5, the CRC's pipeline, the result queue,
    /// the ICRC verdict's slice, the output slice.
    pub fn latency() -> usize {
        7 + Crc32::<W, K>::latency()
    }
}

impl<const W: usize, const K: usize, const A: usize> Default for RoceRx<W, K, A> {
    fn default() -> Self {
        Self::new()
    }
}

// The checks keep Frame::parse's order, so several branches give one reason.
#[allow(clippy::if_same_then_else)]
impl<const W: usize, const K: usize, const A: usize> Logic for RoceRx<W, K, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            ready_r,
            used,
            at_o,
            at_i,
            in_b,
            o_tag,
            o_v6,
            o_v4,
            i_v6,
            i_v4,
            lay_v6,
            lay_v4,
            o_tag_n,
            lay_v6_n,
            take_q,
            onehot_q,
            v1,
            d1,
            k1,
            t1,
            l1,
            b1,
            v2,
            d2,
            k2,
            l2,
            b2,
            pos2,
            len2,
            sel2,
            et_o2,
            et_i2,
            tagged2,
            v6_2,
            v4_2,
            ipb0_2,
            tot2,
            frag2,
            proto2,
            plen2,
            nh2,
            usrc2,
            udst2,
            ulen2,
            op2,
            flags2,
            pkey2,
            fb2,
            qp2,
            ack2,
            psn2,
            ext2,
            v3,
            d3,
            k3,
            l3,
            mb3,
            pos3,
            len3,
            sel3,
            bad_eth3,
            bad_ad3,
            tagged3,
            v6_3,
            v4_3,
            ipb0_3,
            tot_lt3,
            frag_bad3,
            proto_bad3,
            nhext3,
            nh_bad3,
            port_bad3,
            ulen3,
            ip_pay3,
            body3,
            e3,
            eu3,
            eub3,
            iph3,
            info3,
            usrc3,
            op3,
            flags3,
            pkey3,
            fb3,
            qp3,
            ack3,
            psn3,
            ext3,
            v4s,
            d4,
            k4,
            l4,
            pos4,
            posk4,
            len4,
            and4,
            or4,
            pre_eth4,
            e4,
            v6_4,
            v4_4,
            ver_bad4,
            ihl_lt4,
            ihl_ne4,
            frag_bad4,
            proto_bad4,
            nhext4,
            nh_bad4,
            port_bad4,
            t_ip4,
            t_ihl4,
            t_udp4,
            t_l3_4,
            pay_small4,
            ulen_bad4,
            l4_short4,
            body4,
            body_neg4,
            p4,
            info4,
            usrc4,
            op4,
            flags4,
            pkey4,
            fb4,
            qp4,
            ack4,
            psn4,
            ext4,
            v5,
            d5,
            k5,
            l5,
            and5,
            or5,
            crem5,
            ge_u5,
            le_u5,
            lt_u5,
            ge_l5,
            le_l5,
            lt_l5,
            from5,
            past5,
            more_q,
            pb5,
            pp5,
            shift5,
            pay_len5,
            len_eq5,
            ver_bad5,
            lt_ip5,
            ihl_lt5,
            lt_ihl5,
            v4_5,
            v6_5,
            ihl_ne5,
            frag_bad5,
            proto_bad5,
            nhext5,
            nh_bad5,
            port_bad5,
            lt_udp5,
            lt_l3_5,
            pad_gt5,
            pay_small5,
            ulen_bad5,
            l4_short5,
            body_nz5,
            body_lo_nz5,
            tver_bad5,
            pad_nz5,
            body_neg5,
            info5,
            usrc5,
            op5,
            flags5,
            pkey5,
            fb5,
            qp5,
            ack5,
            psn5,
            ext5,
            pre_eth5,
            crc_done,
            prev,
            fl_pending,
            fl_need,
            fl_shift,
            w_valid,
            w_data,
            wptr,
            r_entry,
            r_data,
            r_data2,
            r_ext,
            frames,
            job_active,
            job,
            rptr,
            r_valid,
            r_keep,
            r_last,
            r2_valid,
            r2_keep,
            r2_last,
            ob_cnt,
            prev_end,
            prev_end1,
            left,
            left_none,
            left_one
        );
        clock!(
            self, clock, cap, csum, crc, entries, fields, fields2, ext_lo, ext_hi, csums, jobs, hs,
            cs, cr, ob_data, ob_keep, ob_last
        );
        self.ram.clock.next = self.clock.val();
        for i in 0..self.counts.len() {
            self.counts[i].clock.next = self.clock.val();
            self.counts[i].clear.next = self.reset.val();
        }

        // ---- Input: a beat every cycle the buffer and descriptor credits allow.
        self.s_axis.tready.next = self.ready_r.q.val();
        self.fire.next = self.s_axis.tvalid.val() & self.ready_r.q.val();
        if self.fire.val() {
            if self.s_axis.tlast.val() {
                self.in_b.d.next = 0.into();
            } else {
                self.in_b.d.next = self.in_b.q.val() + 1;
            }
        }
        self.cap.load.next = self.fire.val();
        self.cap.last.next = self.s_axis.tlast.val();
        self.cap.reset.next = self.reset.val();
        self.cap.d.next = self.s_axis.tdata.val();
        self.v1.d.next = self.fire.val();
        self.d1.d.next = self.s_axis.tdata.val();
        self.k1.d.next = self.s_axis.tkeep.val();
        self.top_byte.x.next = self.s_axis.tkeep.val();
        self.t1.d.next = self.top_byte.y.val();
        self.l1.d.next = self.s_axis.tlast.val();
        self.b1.d.next = self.in_b.q.val();
        self.et_o0.x.next = self.s_axis.tdata.val();
        self.et_o0.sel.next = 0.into();
        self.et_i0.x.next = self.s_axis.tdata.val();
        self.et_i0.sel.next = 0.into();
        // The flags load on `fire` (their clock enable), so the input
        // handshake is not in the compares' logic.
        if self.fire.val() {
            if self.s_axis.tlast.val() {
                self.at_o.d.next = self.c_o_first.val();
                self.at_i.d.next = self.c_i_first.val();
            } else {
                self.at_o.d.next = self.in_b.q.val() == self.c_b_o1.val();
                self.at_i.d.next = self.in_b.q.val() == self.c_b_i1.val();
            }
        }
        self.tag_n.next = self.o_tag.q.val();
        self.ov6_n.next = self.o_v6.q.val();
        self.ov4_n.next = self.o_v4.q.val();
        self.iv6_n.next = self.i_v6.q.val();
        self.iv4_n.next = self.i_v4.q.val();
        if self.at_o.q.val() {
            self.tag_n.next = self.et_o0.y.val() == self.c_tpid.val();
            self.ov6_n.next = self.et_o0.y.val() == self.c_et6.val();
            self.ov4_n.next = self.et_o0.y.val() == self.c_et4.val();
        }
        if self.at_i.q.val() {
            self.iv6_n.next = self.et_i0.y.val() == self.c_et6.val();
            self.iv4_n.next = self.et_i0.y.val() == self.c_et4.val();
        }
        if self.fire.val() {
            self.o_tag.d.next = self.tag_n.val();
            self.o_tag_n.d.next = !self.tag_n.val();
            self.o_v6.d.next = self.ov6_n.val();
            self.o_v4.d.next = self.ov4_n.val();
            self.i_v6.d.next = self.iv6_n.val();
            self.i_v4.d.next = self.iv4_n.val();
            if self.tag_n.val() {
                self.lay_v6.d.next = self.iv6_n.val();
                self.lay_v6_n.d.next = !self.iv6_n.val();
                self.lay_v4.d.next = self.iv4_n.val();
            } else {
                self.lay_v6.d.next = self.ov6_n.val();
                self.lay_v6_n.d.next = !self.ov6_n.val();
                self.lay_v4.d.next = self.ov4_n.val();
            }
        }

        // ---- S1: layout and header fields (the capture includes this beat).
        self.et_o.x.next = self.cap.v.val();
        self.et_o.sel.next = 0.into();
        self.et_i.x.next = self.cap.v.val();
        self.et_i.sel.next = 0.into();
        // The EtherType flags describe the same bytes as the capture: the
        // last frame that reached each of the two beats.
        self.tagged1.next = self.o_tag.q.val();
        self.v6_1.next = self.lay_v6.q.val();
        self.v4_1.next = self.lay_v4.q.val();
        if self.tagged1.val() & self.v6_1.val() {
            self.sel1.next = 3.into();
        } else if self.v6_1.val() {
            self.sel1.next = 2.into();
        } else if self.tagged1.val() {
            self.sel1.next = 1.into();
        } else {
            self.sel1.next = 0.into();
        }
        self.tagged1b.next = !self.o_tag_n.q.val();
        self.v6_1b.next = !self.lay_v6_n.q.val();
        if self.tagged1b.val() & self.v6_1b.val() {
            self.sel1b.next = 3.into();
        } else if self.v6_1b.val() {
            self.sel1b.next = 2.into();
        } else if self.tagged1b.val() {
            self.sel1b.next = 1.into();
        } else {
            self.sel1b.next = 0.into();
        }
        self.f_ipb0.x.next = self.cap.v.val();
        self.f_ipb0.sel.next = self.sel1.val();
        self.f_tot.x.next = self.cap.v.val();
        self.f_tot.sel.next = self.sel1.val();
        self.f_frag.x.next = self.cap.v.val();
        self.f_frag.sel.next = self.sel1.val();
        self.f_proto.x.next = self.cap.v.val();
        self.f_proto.sel.next = self.sel1.val();
        self.f_plen.x.next = self.cap.v.val();
        self.f_plen.sel.next = self.sel1.val();
        self.f_nh.x.next = self.cap.v.val();
        self.f_nh.sel.next = self.sel1.val();
        self.f_usrc.x.next = self.cap.v.val();
        self.f_usrc.sel.next = self.sel1b.val();
        self.f_udst.x.next = self.cap.v.val();
        self.f_udst.sel.next = self.sel1b.val();
        self.f_ulen.x.next = self.cap.v.val();
        self.f_ulen.sel.next = self.sel1b.val();
        self.f_op.x.next = self.cap.v.val();
        self.f_op.sel.next = self.sel1b.val();
        self.f_flags.x.next = self.cap.v.val();
        self.f_flags.sel.next = self.sel1b.val();
        self.f_pkey.x.next = self.cap.v.val();
        self.f_pkey.sel.next = self.sel1b.val();
        self.f_fb.x.next = self.cap.v.val();
        self.f_fb.sel.next = self.sel1b.val();
        self.f_qp.x.next = self.cap.v.val();
        self.f_qp.sel.next = self.sel1b.val();
        self.f_ack.x.next = self.cap.v.val();
        self.f_ack.sel.next = self.sel1b.val();
        self.f_psn.x.next = self.cap.v.val();
        self.f_psn.sel.next = self.sel1b.val();
        self.f_ext.x.next = self.cap.v.val();
        self.f_ext.sel.next = self.sel1.val();
        // The checksum sums the beats as they pass (from S1, with the
        // layout bit that holds from the beat with the IP header's start).
        self.csum.reset.next = self.reset.val();
        self.csum.d.next = self.d1.q.val();
        self.csum.valid.next = self.v1.q.val();
        self.csum.last.next = self.l1.q.val();
        self.csum.beat.next = self.b1.q.val();
        self.csum.vlan.next = self.o_tag.q.val();
        self.csums.write.next = self.csum.tag_out.val();
        self.csums.data_in.next = self.csum.ok.val();

        self.v2.d.next = self.v1.q.val();
        self.d2.d.next = self.d1.q.val();
        self.k2.d.next = self.k1.q.val();
        self.l2.d.next = self.l1.q.val();
        self.b2.d.next = self.b1.q.val();
        self.pos2.d.next = bit_cast::<18, 16>(self.b1.q.val()) << self.c_log2k.val();
        // Bytes so far: beat index · K + top lane + 1, the lane below K so
        // the sum is an OR and one increment.
        self.len2.d.next = ((bit_cast::<18, 16>(self.b1.q.val()) << self.c_log2k.val())
            | bit_cast::<18, PAD_BITS>(self.t1.q.val()))
            + 1;
        self.sel2.d.next = self.sel1.val();
        self.et_o2.d.next = self.et_o.y.val();
        self.et_i2.d.next = self.et_i.y.val();
        self.tagged2.d.next = self.tagged1.val();
        self.v6_2.d.next = self.v6_1.val();
        self.v4_2.d.next = self.v4_1.val();
        self.ipb0_2.d.next = self.f_ipb0.y.val();
        self.tot2.d.next = self.f_tot.y.val();
        self.frag2.d.next = self.f_frag.y.val();
        self.proto2.d.next = self.f_proto.y.val();
        self.plen2.d.next = self.f_plen.y.val();
        self.nh2.d.next = self.f_nh.y.val();
        self.usrc2.d.next = self.f_usrc.y.val();
        self.udst2.d.next = self.f_udst.y.val();
        self.ulen2.d.next = self.f_ulen.y.val();
        self.op2.d.next = self.f_op.y.val();
        self.flags2.d.next = self.f_flags.y.val();
        self.pkey2.d.next = self.f_pkey.y.val();
        self.fb2.d.next = self.f_fb.y.val();
        self.qp2.d.next = self.f_qp.y.val();
        self.ack2.d.next = self.f_ack.y.val();
        self.psn2.d.next = self.f_psn.y.val();
        self.ext2.d.next = self.f_ext.y.val();

        // ---- S2: opcode ROM, IP payload length, flag checks.
        self.op_rom.address.next = self.op2.q.val();
        self.nh_rom.address.next = self.nh2.q.val();
        self.v3.d.next = self.v2.q.val();
        self.d3.d.next = self.d2.q.val();
        self.k3.d.next = self.k2.q.val();
        self.l3.d.next = self.l2.q.val();
        if self.b2.q.val() >= self.c_mb_max.val() {
            self.mb3.d.next = 31.into();
        } else {
            self.mb3.d.next = self.b2.q.val().get_bits::<5>(0);
        }
        self.pos3.d.next = self.pos2.q.val();
        self.len3.d.next = self.len2.q.val();
        self.sel3.d.next = self.sel2.q.val();
        self.bad_eth3.d.next = (self.et_o2.q.val() == self.c_tpid_ad.val())
            | (self.tagged2.q.val()
                & ((self.et_i2.q.val() == self.c_tpid.val())
                    | (self.et_i2.q.val() == self.c_tpid_ad.val())));
        self.bad_ad3.d.next = !(self.v4_2.q.val() | self.v6_2.q.val());
        self.tagged3.d.next = self.tagged2.q.val();
        self.v6_3.d.next = self.v6_2.q.val();
        self.v4_3.d.next = self.v4_2.q.val();
        self.ipb0_3.d.next = self.ipb0_2.q.val();
        // IPv4 only: for IPv6 these bytes are the flow label's low half.
        self.tot_lt3.d.next =
            self.v4_2.q.val() & (bit_cast::<18, 16>(self.tot2.q.val()) < self.c_iph4.val());
        self.frag_bad3.d.next = (self.frag2.q.val() & self.c_frag_mask.val()).any();
        self.proto_bad3.d.next = self.proto2.q.val() != self.c_udp_proto.val();
        self.nhext3.d.next = self.nh_rom.data.val();
        self.nh_bad3.d.next = self.nh2.q.val() != self.c_udp_proto.val();
        self.port_bad3.d.next = self.udst2.q.val() != self.c_port.val();
        self.ulen3.d.next = bit_cast::<18, 16>(self.ulen2.q.val());
        if self.v6_2.q.val() {
            self.ip_pay3.d.next = bit_cast::<18, 16>(self.plen2.q.val());
            self.body3.d.next = bit_cast::<18, 16>(self.plen2.q.val()) - self.c_udp_bth_icrc.val();
            self.iph3.d.next = self.c_iph6.val();
        } else {
            self.ip_pay3.d.next = bit_cast::<18, 16>(self.tot2.q.val()) - self.c_iph4.val();
            self.body3.d.next =
                bit_cast::<18, 16>(self.tot2.q.val()) - self.c_iph4_udp_bth_icrc.val();
            self.iph3.d.next = self.c_iph4.val();
        }
        if self.tagged2.q.val() {
            self.e3.d.next = self.c_e_tagged.val();
            self.eu3.d.next = self.c_eu_tagged.val();
            self.eub3.d.next = self.c_eub_tagged.val();
        } else {
            self.e3.d.next = self.c_e_untagged.val();
            self.eu3.d.next = self.c_eu_untagged.val();
            self.eub3.d.next = self.c_eub_untagged.val();
        }
        self.info3.d.next = self.op_rom.data.val();
        self.usrc3.d.next = self.usrc2.q.val();
        self.op3.d.next = self.op2.q.val();
        self.flags3.d.next = self.flags2.q.val();
        self.pkey3.d.next = self.pkey2.q.val();
        self.fb3.d.next = self.fb2.q.val();
        self.qp3.d.next = self.qp2.q.val();
        self.ack3.d.next = self.ack2.q.val();
        self.psn3.d.next = self.psn2.q.val();
        self.ext3.d.next = self.ext2.q.val();

        // ---- S3: offsets, thresholds, Ethernet verdict, ICRC masks.
        self.extlen3.next = bit_cast::<18, 6>(self.info3.q.val().get_bits::<6>(2));
        self.mask.beat.next = self.mb3.q.val();
        self.mask.sel.next = self.sel3.q.val();
        self.v4s.d.next = self.v3.q.val();
        self.d4.d.next = self.d3.q.val();
        self.k4.d.next = self.k3.q.val();
        self.l4.d.next = self.l3.q.val();
        self.pos4.d.next = self.pos3.q.val();
        self.posk4.d.next =
            bit_cast::<19, 18>(self.pos3.q.val()) + bit_cast::<19, 18>(self.c_k.val());
        self.len4.d.next = self.len3.q.val();
        self.and4.d.next = self.mask.and_m.val();
        self.or4.d.next = self.mask.or_m.val();
        if self.len3.q.val() < self.c_e_untagged.val() {
            self.pre_eth4.d.next = self.c_r_truncated.val();
        } else if self.tagged3.q.val() & (self.len3.q.val() < self.c_e_tagged.val()) {
            self.pre_eth4.d.next = self.c_r_truncated.val();
        } else if self.bad_eth3.q.val() | self.bad_ad3.q.val() {
            self.pre_eth4.d.next = self.c_r_not_roce.val();
        } else {
            self.pre_eth4.d.next = self.c_r_none.val();
        }
        self.e4.d.next = self.e3.q.val();
        self.v6_4.d.next = self.v6_3.q.val();
        self.v4_4.d.next = self.v4_3.q.val();
        if self.v6_3.q.val() {
            self.ver_bad4.d.next =
                bit_cast::<8, 4>(self.ipb0_3.q.val().get_bits::<4>(4)) != self.c_ver6.val();
        } else {
            self.ver_bad4.d.next =
                bit_cast::<8, 4>(self.ipb0_3.q.val().get_bits::<4>(4)) != self.c_ver4.val();
        }
        self.ihl_lt4.d.next =
            bit_cast::<8, 4>(self.ipb0_3.q.val().get_bits::<4>(0)) < self.c_ihl_min.val();
        self.ihl_ne4.d.next =
            bit_cast::<8, 4>(self.ipb0_3.q.val().get_bits::<4>(0)) != self.c_ihl_min.val();
        self.frag_bad4.d.next = self.frag_bad3.q.val();
        self.proto_bad4.d.next = self.proto_bad3.q.val();
        self.nhext4.d.next = self.nhext3.q.val();
        self.nh_bad4.d.next = self.nh_bad3.q.val();
        self.port_bad4.d.next = self.port_bad3.q.val();
        self.t_ip4.d.next = self.e3.q.val() + self.iph3.q.val();
        self.t_ihl4.d.next =
            self.e3.q.val() + (bit_cast::<18, 4>(self.ipb0_3.q.val().get_bits::<4>(0)) << 2);
        self.t_udp4.d.next = self.eu3.q.val() + self.iph3.q.val();
        self.t_l3_4.d.next = self.e3.q.val() + self.iph3.q.val() + self.ip_pay3.q.val();
        self.pay_small4.d.next = self.tot_lt3.q.val() | (self.ip_pay3.q.val() < self.c_udph.val());
        self.ulen_bad4.d.next = self.ulen3.q.val() != self.ip_pay3.q.val();
        self.l4_short4.d.next = self.ip_pay3.q.val() < self.c_udp_bth_icrc.val();
        // The body and its checks count only when the L4 part is not short
        // (`l4_short` decides the frame first, in `post2` and its hit), so
        // `body3` is not negative wherever they are read: the body is short
        // of the extension headers exactly when `body3 < extlen3`.
        self.body4.d.next = self.body3.q.val() - self.extlen3.val();
        self.body_neg4.d.next = self.body3.q.val() < self.extlen3.val();
        self.p4.d.next = self.eub3.q.val() + self.iph3.q.val() + self.extlen3.val();
        self.info4.d.next = self.info3.q.val();
        self.usrc4.d.next = self.usrc3.q.val();
        self.op4.d.next = self.op3.q.val();
        self.flags4.d.next = self.flags3.q.val();
        self.pkey4.d.next = self.pkey3.q.val();
        self.fb4.d.next = self.fb3.q.val();
        self.qp4.d.next = self.qp3.q.val();
        self.ack4.d.next = self.ack3.q.val();
        self.psn4.d.next = self.psn3.q.val();
        self.ext4.d.next = self.ext3.q.val();

        // ---- S4: payload end, ICRC end, IP checks before the checksum.
        self.v5.d.next = self.v4s.q.val();
        self.d5.d.next = self.d4.q.val();
        self.k5.d.next = self.k4.q.val();
        self.l5.d.next = self.l4.q.val();
        self.and5.d.next = self.and4.q.val();
        self.or5.d.next = self.or4.q.val();
        if self.pay_small4.q.val() {
            self.ce_sel4.next = self.t_udp4.q.val();
        } else {
            self.ce_sel4.next = self.t_l3_4.q.val();
        }
        self.crem5.d.next = self.ce_sel4.val() - self.pos4.q.val();
        // Both candidate ends against this beat (no subtraction first, no
        // select before the compares).
        self.ge_u5.d.next = self.t_udp4.q.val() >= self.pos4.q.val();
        self.le_u5.d.next = bit_cast::<19, 18>(self.t_udp4.q.val()) <= self.posk4.q.val();
        self.lt_u5.d.next = bit_cast::<19, 18>(self.t_udp4.q.val()) < self.posk4.q.val();
        self.ge_l5.d.next = self.t_l3_4.q.val() >= self.pos4.q.val();
        self.le_l5.d.next = bit_cast::<19, 18>(self.t_l3_4.q.val()) <= self.posk4.q.val();
        self.lt_l5.d.next = bit_cast::<19, 18>(self.t_l3_4.q.val()) < self.posk4.q.val();
        self.from5.d.next = self.pos4.q.val() >= (self.p4.q.val() & !self.c_kmask.val());
        self.past5.d.next = self.pos4.q.val() > (self.p4.q.val() & !self.c_kmask.val());
        self.pb5.d.next = bit_cast::<19, 18>(self.p4.q.val() & !self.c_kmask.val())
            + bit_cast::<19, 18>(self.body4.q.val());
        self.pp5.d.next = bit_cast::<19, 18>(self.pos4.q.val())
            + bit_cast::<19, 2>(self.flags4.q.val().get_bits::<2>(4));
        self.shift5.d.next = bit_cast::<8, 18>(self.p4.q.val() & self.c_kmask.val());
        self.pay_len5.d.next =
            self.body4.q.val() - bit_cast::<18, 2>(self.flags4.q.val().get_bits::<2>(4));
        self.len_eq5.d.next = self.len4.q.val() == self.e4.q.val();
        self.ver_bad5.d.next = self.ver_bad4.q.val();
        self.lt_ip5.d.next = self.len4.q.val() < self.t_ip4.q.val();
        self.ihl_lt5.d.next = self.v4_4.q.val() & self.ihl_lt4.q.val();
        self.lt_ihl5.d.next = self.v4_4.q.val() & (self.len4.q.val() < self.t_ihl4.q.val());
        self.pre_eth5.d.next = self.pre_eth4.q.val();
        self.v4_5.d.next = self.v4_4.q.val();
        self.v6_5.d.next = self.v6_4.q.val();
        self.ihl_ne5.d.next = self.ihl_ne4.q.val();
        self.frag_bad5.d.next = self.frag_bad4.q.val();
        self.proto_bad5.d.next = self.proto_bad4.q.val();
        self.nhext5.d.next = self.nhext4.q.val();
        self.nh_bad5.d.next = self.nh_bad4.q.val();
        self.port_bad5.d.next = self.port_bad4.q.val();
        self.lt_udp5.d.next = self.len4.q.val() < self.t_udp4.q.val();
        self.lt_l3_5.d.next = self.len4.q.val() < self.t_l3_4.q.val();
        self.pad_gt5.d.next =
            self.body4.q.val() < bit_cast::<18, 2>(self.flags4.q.val().get_bits::<2>(4));
        self.pay_small5.d.next = self.pay_small4.q.val();
        self.ulen_bad5.d.next = self.ulen_bad4.q.val();
        self.l4_short5.d.next = self.l4_short4.q.val();
        self.body_nz5.d.next = self.body4.q.val().any();
        self.body_lo_nz5.d.next = self.body4.q.val().get_bits::<2>(0).any();
        self.tver_bad5.d.next = self.flags4.q.val().get_bits::<4>(0).any();
        self.pad_nz5.d.next = self.flags4.q.val().get_bits::<2>(4).any();
        self.body_neg5.d.next = self.body_neg4.q.val();
        self.info5.d.next = self.info4.q.val();
        self.usrc5.d.next = self.usrc4.q.val();
        self.op5.d.next = self.op4.q.val();
        self.flags5.d.next = self.flags4.q.val();
        self.pkey5.d.next = self.pkey4.q.val();
        self.fb5.d.next = self.fb4.q.val();
        self.qp5.d.next = self.qp4.q.val();
        self.ack5.d.next = self.ack4.q.val();
        self.psn5.d.next = self.psn4.q.val();
        self.ext5.d.next = self.ext4.q.val();

        // ---- S5: ICRC feed (frame start to the end of the IP datagram).
        self.crem.next = self.crem5.q.val();
        if self.pay_small5.q.val() {
            self.cbig.next = !(self.ge_u5.q.val() & self.lt_u5.q.val());
            self.clast.next = self.ge_u5.q.val() & self.le_u5.q.val();
        } else {
            self.cbig.next = !(self.ge_l5.q.val() & self.lt_l5.q.val());
            self.clast.next = self.ge_l5.q.val() & self.le_l5.q.val();
        }
        self.crc.s_init.next = self.c_init.val();
        self.crc.s_axis.tvalid.next = self.v5.q.val() & !self.crc_done.q.val();
        self.crc.s_axis.tdata.next = (self.d5.q.val() & self.and5.q.val()) | self.or5.q.val();
        // Lane b is fed while b < crem (unsigned): all of them when
        // `cbig`, else crem < K and its low bits decide.
        if self.cbig.val() {
            self.crc.s_axis.tkeep.next = self.k5.q.val();
        } else {
            self.crc.s_axis.tkeep.next =
                self.k5.q.val() & !(self.c_ones.val() << (self.crem.val() & self.c_kmask.val()));
        }
        self.crc.s_axis.tlast.next = self.l5.q.val() | self.clast.val();
        self.crc.s_axis.tuser.next = false;
        if self.v5.q.val() {
            if self.l5.q.val() {
                self.crc_done.d.next = false;
            } else if self.clast.val() {
                self.crc_done.d.next = true;
            }
        }
        // Payload: bytes [pos - K + shift, pos + shift) of the frame.
        self.more5.next = self.pb5.q.val() > self.pp5.q.val();
        if self.v5.q.val() {
            self.more_q.d.next = self.more5.val();
        }
        self.emit.next = self.v5.q.val() & self.past5.q.val() & self.more_q.q.val();
        self.realign.prev.next = self.prev.q.val();
        self.realign.cur.next = self.d5.q.val();
        if self.fl_pending.q.val() {
            self.realign.shift.next = self.fl_shift.q.val();
        } else {
            self.realign.shift.next = self.shift5.q.val();
        }
        if self.v5.q.val() {
            self.prev.d.next = self.d5.q.val();
        }
        self.w_valid.d.next = self.emit.val() | (self.fl_pending.q.val() & self.fl_need.q.val());
        self.w_data.d.next = self.realign.y.val();
        self.fl_pending.d.next = self.v5.q.val() & self.l5.q.val();
        // A flush beat follows when the payload continues past this last
        // beat (`peks > pos + K`) and this beat holds or is past its start.
        self.fl_need.d.next = self.more5.val() & self.from5.q.val();
        self.fl_shift.d.next = self.shift5.q.val();

        // The checks, in Frame::parse's order, on the frame's last beat.
        if self.len_eq5.q.val() {
            self.pre_ip.next = self.c_r_truncated.val();
        } else if self.ver_bad5.q.val() {
            self.pre_ip.next = self.c_r_not_roce.val();
        } else if self.lt_ip5.q.val() {
            self.pre_ip.next = self.c_r_truncated.val();
        } else if self.ihl_lt5.q.val() {
            self.pre_ip.next = self.c_r_bad_length.val();
        } else if self.lt_ihl5.q.val() {
            self.pre_ip.next = self.c_r_truncated.val();
        } else {
            self.pre_ip.next = self.c_r_none.val();
        }
        if self.pre_eth5.q.val() != self.c_r_none.val() {
            self.pre.next = self.pre_eth5.q.val();
        } else {
            self.pre.next = self.pre_ip.val();
        }
        if self.v4_5.q.val() & self.ihl_ne5.q.val() {
            self.post.next = self.c_r_ip_options.val();
        } else if self.v4_5.q.val() & (self.frag_bad5.q.val() | self.proto_bad5.q.val()) {
            self.post.next = self.c_r_not_roce.val();
        } else if self.v6_5.q.val() & self.nhext5.q.val() {
            self.post.next = self.c_r_ip_options.val();
        } else if self.v6_5.q.val() & self.nh_bad5.q.val() {
            self.post.next = self.c_r_not_roce.val();
        } else if self.lt_udp5.q.val() {
            self.post.next = self.c_r_truncated.val();
        } else if self.port_bad5.q.val() {
            self.post.next = self.c_r_not_roce.val();
        } else {
            self.post.next = self.c_r_none.val();
        }
        // The rest of the order, decided alongside (`post2` counts when
        // `post` is none; the two are joined when the entry is queued), in
        // two halves: the length checks, then the BTH checks.
        if self.pay_small5.q.val() {
            self.post2a.next = self.c_r_bad_length.val();
        } else if self.lt_l3_5.q.val() {
            self.post2a.next = self.c_r_truncated.val();
        } else if self.ulen_bad5.q.val() {
            self.post2a.next = self.c_r_bad_length.val();
        } else {
            self.post2a.next = self.c_r_truncated.val();
        }
        if self.tver_bad5.q.val() {
            self.post2b.next = self.c_r_bad_tver.val();
        } else if !self.info5.q.val().get_bit(0) {
            self.post2b.next = self.c_r_unknown_opcode.val();
        } else if self.body_neg5.q.val() {
            self.post2b.next = self.c_r_truncated.val();
        } else if !self.info5.q.val().get_bit(1) {
            if self.pad_nz5.q.val() {
                self.post2b.next = self.c_r_bad_padcnt.val();
            } else if self.body_nz5.q.val() {
                self.post2b.next = self.c_r_bad_length.val();
            } else {
                self.post2b.next = self.c_r_none.val();
            }
        } else if self.body_lo_nz5.q.val() {
            self.post2b.next = self.c_r_bad_length.val();
        } else if self.pad_gt5.q.val() {
            self.post2b.next = self.c_r_bad_padcnt.val();
        } else {
            self.post2b.next = self.c_r_none.val();
        }
        if self.pay_small5.q.val()
            | self.lt_l3_5.q.val()
            | self.ulen_bad5.q.val()
            | self.l4_short5.q.val()
        {
            self.post2.next = self.post2a.val();
        } else {
            self.post2.next = self.post2b.val();
        }
        self.o_immdt.x.next = self.ext5.q.val();
        self.o_immdt.sel.next = self.info5.q.val().get_bits::<2>(20);
        if self.v5.q.val() & self.l5.q.val() {
            self.r_entry.d.next.pre = self.pre.val();
            self.r_entry.d.next.post = self.post.val();
            self.r_entry.d.next.post2 = self.post2.val();
            self.r_entry.d.next.pre_hot =
                bit_cast::<COUNTERS, 16>(bit_cast::<16, 1>(true.into()) << self.pre.val());
            self.r_entry.d.next.post_hot =
                bit_cast::<COUNTERS, 16>(bit_cast::<16, 1>(true.into()) << self.post.val());
            self.r_entry.d.next.post2_hot =
                bit_cast::<COUNTERS, 16>(bit_cast::<16, 1>(true.into()) << self.post2.val());
            // Each reason is none exactly when none of its checks fired.
            self.r_entry.d.next.pre_hit = (self.pre_eth5.q.val() != self.c_r_none.val())
                | self.len_eq5.q.val()
                | self.ver_bad5.q.val()
                | self.lt_ip5.q.val()
                | self.ihl_lt5.q.val()
                | self.lt_ihl5.q.val();
            self.r_entry.d.next.post_hit = (self.v4_5.q.val()
                & (self.ihl_ne5.q.val() | self.frag_bad5.q.val() | self.proto_bad5.q.val()))
                | (self.v6_5.q.val() & (self.nhext5.q.val() | self.nh_bad5.q.val()))
                | self.lt_udp5.q.val()
                | self.port_bad5.q.val();
            self.r_entry.d.next.post2_hit = self.pay_small5.q.val()
                | self.lt_l3_5.q.val()
                | self.ulen_bad5.q.val()
                | self.l4_short5.q.val()
                | self.tver_bad5.q.val()
                | !self.info5.q.val().get_bit(0)
                | self.body_neg5.q.val()
                | (!self.info5.q.val().get_bit(1) & (self.pad_nz5.q.val() | self.body_nz5.q.val()))
                | (self.info5.q.val().get_bit(1)
                    & (self.body_lo_nz5.q.val() | self.pad_gt5.q.val()));
            self.r_entry.d.next.v4 = self.v4_5.q.val();
            self.r_data.d.next.ipv6 = self.v6_5.q.val();
            self.r_data.d.next.src_port = self.usrc5.q.val();
            self.r_data.d.next.opcode = self.op5.q.val();
            self.r_data.d.next.flags = self.flags5.q.val();
            self.r_data.d.next.pkey = self.pkey5.q.val();
            self.r_data.d.next.fb = self.fb5.q.val();
            self.r_data.d.next.destqp = self.qp5.q.val();
            self.r_data2.d.next.ack = self.ack5.q.val();
            self.r_data2.d.next.psn = self.psn5.q.val();
            self.r_data2.d.next.pay_len = bit_cast::<16, 18>(self.pay_len5.q.val());
            self.r_entry.d.next.last_n =
                bit_cast::<8, 18>(((self.pay_len5.q.val() - 1) & self.c_kmask.val()) + 1);
            self.r_ext.d.next = self.ext5.q.val();
            self.r_data2.d.next.ext_present = self.info5.q.val().get_bits::<8>(8);
            self.r_data2.d.next.immdt = self.o_immdt.y.val();
        }

        // ---- S6: frame buffer; a frame's entry is queued once its writes are.
        self.ram.write_enable.next = self.w_valid.q.val();
        self.ram.write_address.next = bit_cast::<A, 16>(self.wptr.q.val());
        self.ram.write_data.next = self.w_data.q.val();
        if self.w_valid.q.val() {
            self.wptr.d.next = self.wptr.q.val() + 1;
        }
        self.entries.write.next = self.fl_pending.q.val();
        // The join's reason is `why` on a pre hit, else bad-ip-checksum on
        // a bad IPv4 checksum, else `why` on a hit, else bad-icrc on a bad
        // ICRC: the entry's part of it decided here.
        self.entries.data_in.next.pre_hit = self.r_entry.q.val().pre_hit;
        self.entries.data_in.next.hit = self.r_entry.q.val().pre_hit
            | self.r_entry.q.val().post_hit
            | self.r_entry.q.val().post2_hit;
        if self.r_entry.q.val().pre_hit {
            self.why6.next = self.r_entry.q.val().pre;
        } else if self.r_entry.q.val().post_hit {
            self.why6.next = self.r_entry.q.val().post;
        } else {
            self.why6.next = self.r_entry.q.val().post2;
        }
        self.entries.data_in.next.why = self.why6.val();
        if self.r_entry.q.val().pre_hit {
            self.entries.data_in.next.why_hot = self.r_entry.q.val().pre_hot;
        } else if self.r_entry.q.val().post_hit {
            self.entries.data_in.next.why_hot = self.r_entry.q.val().post_hot;
        } else {
            self.entries.data_in.next.why_hot = self.r_entry.q.val().post2_hot;
        }
        self.entries.data_in.next.v4 = self.r_entry.q.val().v4;
        self.entries.data_in.next.end_ptr = self.wptr.q.val()
            + bit_cast::<16, 1>(self.w_valid.q.val().into())
            + bit_cast::<16, 1>(self.fl_need.q.val().into());
        self.entries.data_in.next.last_n = self.r_entry.q.val().last_n;
        self.fields.write.next = self.fl_pending.q.val() & !self.entries.full.val();
        self.fields.data_in.next = self.r_data.q.val();
        self.fields2.write.next = self.fl_pending.q.val() & !self.entries.full.val();
        self.fields2.data_in.next = self.r_data2.q.val();
        self.ext_lo.write.next = self.fl_pending.q.val() & !self.entries.full.val();
        self.ext_lo.data_in.next = self.r_ext.q.val().get_bits::<EXT_HALF>(0);
        self.ext_hi.write.next = self.fl_pending.q.val() & !self.entries.full.val();
        self.ext_hi.data_in.next =
            bit_cast::<EXT_HALF, EXT_BITS>(self.r_ext.q.val() >> self.c_ext_half.val());

        // ---- Descriptor: entry + IPv4 checksum + ICRC, joined in order.
        self.crc_ok.next =
            (self.crc.m_crc.tdata.val() == self.c_residue.val()) & !self.crc.m_crc.tuser.val();
        if self.entries.data_out.val().pre_hit {
            self.reason.next = self.entries.data_out.val().why;
        } else if self.entries.data_out.val().v4 & !self.cs.m_data.val() {
            self.reason.next = self.c_r_bad_csum.val();
        } else if self.entries.data_out.val().hit {
            self.reason.next = self.entries.data_out.val().why;
        } else if !self.cr.m_data.val() {
            self.reason.next = self.c_r_bad_icrc.val();
        } else {
            self.reason.next = self.c_r_none.val();
        }
        self.e_drop.next = self.entries.data_out.val().hit
            | (self.entries.data_out.val().v4 & !self.cs.m_data.val())
            | !self.cr.m_data.val();
        self.e_flags.next = self.fields.data_out.val().flags;
        self.e_fb.next = self.fields.data_out.val().fb;
        self.e_ack.next = self.fields2.data_out.val().ack;
        self.cr.s_valid.next = self.crc.m_crc.tvalid.val();
        self.cr.s_data.next = self.crc_ok.val();
        self.crc.m_crc.tready.next = self.cr.s_ready.val();
        self.cs.s_valid.next = !self.csums.empty.val();
        self.cs.s_data.next = self.csums.data_out.val();
        self.csums.read.next = self.cs.s_ready.val();
        self.hdr_avail.next = !self.entries.empty.val()
            & self.cs.m_valid.val()
            & self.cr.m_valid.val()
            & !self.jobs.full.val();
        self.hdr_take.next = self.hdr_avail.val() & self.hs.s_ready.val();
        self.hs.s_valid.next = self.hdr_avail.val();
        self.hs.m_ready.next = self.m_hdr_ready.val();
        self.m_hdr_valid.next = self.hs.m_valid.val();
        self.m_hdr_drop.next = self.hs.m_data.val().drop;
        self.m_hdr_reason.next = self.hs.m_data.val().reason;
        self.m_hdr_ipv6.next = self.hs.m_data.val().ipv6;
        self.m_hdr_src_port.next = self.hs.m_data.val().src_port;
        self.m_hdr_opcode.next = self.hs.m_data.val().opcode;
        self.m_hdr_se.next = self.hs.m_data.val().se;
        self.m_hdr_m.next = self.hs.m_data.val().m;
        self.m_hdr_padcnt.next = self.hs.m_data.val().padcnt;
        self.m_hdr_tver.next = self.hs.m_data.val().tver;
        self.m_hdr_pkey.next = self.hs.m_data.val().pkey;
        self.m_hdr_fecn.next = self.hs.m_data.val().fecn;
        self.m_hdr_becn.next = self.hs.m_data.val().becn;
        self.m_hdr_destqp.next = self.hs.m_data.val().destqp;
        self.m_hdr_ackreq.next = self.hs.m_data.val().ackreq;
        self.m_hdr_psn.next = self.hs.m_data.val().psn;
        self.m_hdr_payload_len.next = self.hs.m_data.val().payload_len;
        self.m_hdr_ext.next = self.hs.m_data.val().ext;
        self.m_hdr_reth_va.next = self.o_reth_va.y.val();
        self.m_hdr_reth_rkey.next = self.o_reth_rkey.y.val();
        self.m_hdr_reth_dmalen.next = self.o_reth_dmalen.y.val();
        self.m_hdr_aeth_syndrome.next = self.o_aeth_syn.y.val();
        self.m_hdr_aeth_msn.next = self.o_aeth_msn.y.val();
        self.m_hdr_immdt.next = self.hs.m_data.val().immdt;
        self.m_hdr_ieth.next = self.o_ieth.y.val();
        self.m_hdr_atomic_va.next = self.o_at_va.y.val();
        self.m_hdr_atomic_rkey.next = self.o_at_rkey.y.val();
        self.m_hdr_atomic_swap_add.next = self.o_at_swap.y.val();
        self.m_hdr_atomic_compare.next = self.o_at_cmp.y.val();
        self.m_hdr_atomicack_orig.next = self.o_ack_orig.y.val();
        self.m_hdr_deth_qkey.next = self.o_deth_qkey.y.val();
        self.m_hdr_deth_srcqp.next = self.o_deth_srcqp.y.val();
        self.hs.s_data.next.drop = self.e_drop.val();
        self.hs.s_data.next.reason = self.reason.val();
        self.hs.s_data.next.ipv6 = self.fields.data_out.val().ipv6;
        self.hs.s_data.next.src_port = self.fields.data_out.val().src_port;
        self.hs.s_data.next.opcode = self.fields.data_out.val().opcode;
        self.hs.s_data.next.se = self.e_flags.val().get_bit(7);
        self.hs.s_data.next.m = self.e_flags.val().get_bit(6);
        self.hs.s_data.next.padcnt = self.e_flags.val().get_bits::<2>(4);
        self.hs.s_data.next.tver = self.e_flags.val().get_bits::<4>(0);
        self.hs.s_data.next.pkey = self.fields.data_out.val().pkey;
        self.hs.s_data.next.fecn = self.e_fb.val().get_bit(7);
        self.hs.s_data.next.becn = self.e_fb.val().get_bit(6);
        self.hs.s_data.next.destqp = self.fields.data_out.val().destqp;
        self.hs.s_data.next.ackreq = self.e_ack.val().get_bit(7);
        self.hs.s_data.next.psn = self.fields2.data_out.val().psn;
        self.hs.s_data.next.payload_len = self.fields2.data_out.val().pay_len;
        self.hs.s_data.next.ext = self.fields2.data_out.val().ext_present;
        self.ext_word.next = (bit_cast::<EXT_BITS, EXT_HALF>(self.ext_hi.data_out.val())
            << self.c_ext_half.val())
            | bit_cast::<EXT_BITS, EXT_HALF>(self.ext_lo.data_out.val());
        self.hs.s_data.next.ext_word = self.ext_word.val();
        self.o_reth_va.x.next = self.hs.m_data.val().ext_word;
        self.o_reth_va.sel.next = 0.into();
        self.o_reth_rkey.x.next = self.hs.m_data.val().ext_word;
        self.o_reth_rkey.sel.next = 0.into();
        self.o_reth_dmalen.x.next = self.hs.m_data.val().ext_word;
        self.o_reth_dmalen.sel.next = 0.into();
        self.o_aeth_syn.x.next = self.hs.m_data.val().ext_word;
        self.o_aeth_syn.sel.next = 0.into();
        self.o_aeth_msn.x.next = self.hs.m_data.val().ext_word;
        self.o_aeth_msn.sel.next = 0.into();
        self.o_ieth.x.next = self.hs.m_data.val().ext_word;
        self.o_ieth.sel.next = 0.into();
        self.o_at_va.x.next = self.hs.m_data.val().ext_word;
        self.o_at_va.sel.next = 0.into();
        self.o_at_rkey.x.next = self.hs.m_data.val().ext_word;
        self.o_at_rkey.sel.next = 0.into();
        self.o_at_swap.x.next = self.hs.m_data.val().ext_word;
        self.o_at_swap.sel.next = 0.into();
        self.o_at_cmp.x.next = self.hs.m_data.val().ext_word;
        self.o_at_cmp.sel.next = 0.into();
        self.o_ack_orig.x.next = self.hs.m_data.val().ext_word;
        self.o_ack_orig.sel.next = 0.into();
        self.o_deth_qkey.x.next = self.hs.m_data.val().ext_word;
        self.o_deth_qkey.sel.next = 0.into();
        self.o_deth_srcqp.x.next = self.hs.m_data.val().ext_word;
        self.o_deth_srcqp.sel.next = 0.into();
        self.hs.s_data.next.immdt = self.fields2.data_out.val().immdt;
        self.entries.read.next = self.hdr_take.val();
        self.fields.read.next = self.hdr_take.val();
        self.fields2.read.next = self.hdr_take.val();
        self.ext_lo.read.next = self.hdr_take.val();
        self.ext_hi.read.next = self.hdr_take.val();
        self.cs.m_ready.next = self.hdr_take.val();
        self.cr.m_ready.next = self.hdr_take.val();
        self.jobs.write.next = self.hdr_take.val();
        self.jobs.data_in.next.accept = !self.e_drop.val();
        self.jobs.data_in.next.end_ptr = self.entries.data_out.val().end_ptr;
        self.jobs.data_in.next.last_n = self.entries.data_out.val().last_n;
        self.job_beats.next = self.entries.data_out.val().end_ptr - self.prev_end.q.val();
        self.jobs.data_in.next.beats = self.job_beats.val();
        self.jobs.data_in.next.none = self.entries.data_out.val().end_ptr == self.prev_end.q.val();
        self.jobs.data_in.next.one = self.entries.data_out.val().end_ptr == self.prev_end1.q.val();
        if self.hdr_take.val() {
            self.prev_end.d.next = self.entries.data_out.val().end_ptr;
            self.prev_end1.d.next = self.entries.data_out.val().end_ptr + 1;
        }
        // Counters: a descriptor taken at one edge is counted at the next.
        self.take_q.d.next = self.hdr_take.val();
        // `reason` one-hot, term by term from the head registers (`why_hot`
        // is 0 unless `hit`, and `pre_hit` implies `hit`).
        self.cs_bad.next = self.entries.data_out.val().v4 & !self.cs.m_data.val();
        self.onehot_why.next = 0.into();
        if self.entries.data_out.val().pre_hit | !self.cs_bad.val() {
            self.onehot_why.next = self.entries.data_out.val().why_hot;
        }
        self.onehot_cs.next = 0.into();
        if !self.entries.data_out.val().pre_hit & self.cs_bad.val() {
            self.onehot_cs.next = self.c_hot_csum.val();
        }
        self.onehot_cr.next = 0.into();
        if !self.entries.data_out.val().hit & !self.cs_bad.val() & !self.cr.m_data.val() {
            self.onehot_cr.next = self.c_hot_icrc.val();
        }
        self.onehot_ok.next = 0.into();
        if !self.entries.data_out.val().hit & !self.cs_bad.val() & self.cr.m_data.val() {
            self.onehot_ok.next = self.c_hot_accept.val();
        }
        self.onehot.next = self.onehot_why.val()
            | self.onehot_cs.val()
            | self.onehot_cr.val()
            | self.onehot_ok.val();
        self.onehot_q.d.next = self.onehot.val();
        for i in 0..COUNTERS {
            self.counts[i].inc.next = self.take_q.q.val() & self.onehot_q.q.val().get_bit(i);
        }
        self.cnt_not_roce.next = self.counts[0].count.val();
        self.cnt_truncated.next = self.counts[1].count.val();
        self.cnt_bad_ip_checksum.next = self.counts[2].count.val();
        self.cnt_ip_options.next = self.counts[3].count.val();
        self.cnt_bad_length.next = self.counts[4].count.val();
        self.cnt_bad_tver.next = self.counts[5].count.val();
        self.cnt_unknown_opcode.next = self.counts[6].count.val();
        self.cnt_bad_padcnt.next = self.counts[7].count.val();
        self.cnt_bad_icrc.next = self.counts[8].count.val();
        self.cnt_accept.next = self.counts[9].count.val();
        // Frames in flight, for the input credit. A take leaves the count
        // an edge late (from `take_q`), which only holds the credit back a
        // cycle longer; the take's own cycle reaches no counter.
        if (self.fire.val() & self.s_axis.tlast.val()) & !self.take_q.q.val() {
            self.frames.d.next = self.frames.q.val() + 1;
        }
        if !(self.fire.val() & self.s_axis.tlast.val()) & self.take_q.q.val() {
            self.frames.d.next = self.frames.q.val() - 1;
        }

        // ---- Payload reader: accepted frames out, dropped ones skipped.
        self.issue.next = self.job_active.q.val()
            & self.job.q.val().accept
            & !self.left_none.q.val()
            & (self.ob_cnt.q.val() < self.c_ob_depth.val());
        self.finishing.next = self.job_active.q.val()
            & (!self.job.q.val().accept
                | self.left_none.q.val()
                | (self.issue.val() & self.left_one.q.val()));
        if self.issue.val() {
            self.left.d.next = self.left.q.val() - 1;
            self.left_none.d.next = self.left_one.q.val();
            self.left_one.d.next = self.left.q.val() == 2;
        }
        self.jobs.read.next = false;
        if (!self.job_active.q.val() | self.finishing.val()) & !self.jobs.empty.val() {
            self.jobs.read.next = true;
            self.job.d.next = self.jobs.data_out.val();
            self.job_active.d.next = true;
            self.left.d.next = self.jobs.data_out.val().beats;
            self.left_none.d.next = self.jobs.data_out.val().none;
            self.left_one.d.next = self.jobs.data_out.val().one;
        } else if self.finishing.val() {
            self.job_active.d.next = false;
        }
        if self.job_active.q.val() & !self.job.q.val().accept {
            self.rptr.d.next = self.job.q.val().end_ptr;
        } else if self.issue.val() {
            self.rptr.d.next = self.rptr.q.val() + 1;
        }
        self.ram.read_address.next = bit_cast::<A, 16>(self.rptr.q.val());
        self.ram.read_enable.next = true;
        self.ram.output_enable.next = true;
        self.r_valid.d.next = self.issue.val();
        self.r_last.d.next = self.left_one.q.val();
        if self.left_one.q.val() {
            self.r_keep.d.next = !(self.c_ones.val() << self.job.q.val().last_n);
        } else {
            self.r_keep.d.next = self.c_ones.val();
        }
        self.r2_valid.d.next = self.r_valid.q.val();
        self.r2_keep.d.next = self.r_keep.q.val();
        self.r2_last.d.next = self.r_last.q.val();
        self.ob_data.write.next = self.r2_valid.q.val();
        self.ob_data.data_in.next = self.ram.read_data.val();
        self.ob_keep.store.next = self.ob_data.lane_store.val();
        self.ob_keep.waddr.next = self.ob_data.lane_waddr.val();
        self.ob_keep.load.next = self.ob_data.lane_load.val();
        self.ob_keep.raddr.next = self.ob_data.lane_raddr.val();
        self.ob_keep.skid.next = self.ob_data.lane_skid.val();
        self.ob_keep.from_skid.next = self.ob_data.lane_from_skid.val();
        self.ob_keep.data_in.next = self.r2_keep.q.val();
        self.ob_last.store.next = self.ob_data.lane_store.val();
        self.ob_last.waddr.next = self.ob_data.lane_waddr.val();
        self.ob_last.load.next = self.ob_data.lane_load.val();
        self.ob_last.raddr.next = self.ob_data.lane_raddr.val();
        self.ob_last.skid.next = self.ob_data.lane_skid.val();
        self.ob_last.from_skid.next = self.ob_data.lane_from_skid.val();
        self.ob_last.data_in.next = self.r2_last.q.val();
        self.m_axis.tvalid.next = !self.ob_data.empty.val();
        self.m_axis.tdata.next = self.ob_data.data_out.val();
        self.m_axis.tkeep.next = self.ob_keep.data_out.val();
        self.m_axis.tlast.next = self.ob_last.data_out.val();
        self.m_axis.tuser.next = false;
        self.ob_data.read.next = self.m_axis.tready.val();
        if self.issue.val() & !(self.m_axis.tvalid.val() & self.m_axis.tready.val()) {
            self.ob_cnt.d.next = self.ob_cnt.q.val() + 1;
        }
        if !self.issue.val() & (self.m_axis.tvalid.val() & self.m_axis.tready.val()) {
            self.ob_cnt.d.next = self.ob_cnt.q.val() - 1;
        }

        // Input credit: buffer room and frames in flight (registered).
        self.used.d.next = self.wptr.q.val() - self.rptr.q.val();
        self.ready_r.d.next =
            (self.used.q.val() < self.c_room.val()) & (self.frames.q.val() < self.c_fmax.val());

        // ---- Reset.
        self.crc.reset.next = self.reset.val();
        self.entries.reset.next = self.reset.val();
        self.fields.reset.next = self.reset.val();
        self.fields2.reset.next = self.reset.val();
        self.ext_lo.reset.next = self.reset.val();
        self.ext_hi.reset.next = self.reset.val();
        self.csums.reset.next = self.reset.val();
        self.jobs.reset.next = self.reset.val();
        self.hs.reset.next = self.reset.val();
        self.cs.reset.next = self.reset.val();
        self.cr.reset.next = self.reset.val();
        self.ob_data.reset.next = self.reset.val();
        if self.reset.val() {
            self.ready_r.d.next = false;
            self.in_b.d.next = 0.into();
            self.at_o.d.next = self.c_o_first.val();
            self.at_i.d.next = self.c_i_first.val();
            self.v1.d.next = false;
            self.v2.d.next = false;
            self.v3.d.next = false;
            self.v4s.d.next = false;
            self.v5.d.next = false;
            self.crc_done.d.next = false;
            self.fl_pending.d.next = false;
            self.w_valid.d.next = false;
            self.wptr.d.next = 0.into();
            self.rptr.d.next = 0.into();
            self.prev_end.d.next = 0.into();
            self.prev_end1.d.next = 1.into();
            self.frames.d.next = 0.into();
            self.job_active.d.next = false;
            self.r_valid.d.next = false;
            self.r2_valid.d.next = false;
            self.ob_cnt.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_from_the_model() {
        assert_eq!(header_bytes(), 106);
        assert_eq!(ext_offsets(ExtKind::ImmDt), vec![0, 8, 16]);
        // Every payload start is 2 mod 4: few realignment shifts.
        assert!(payload_starts().iter().all(|p| p % 4 == 2));
        let v4 = icrc_masked_bits(false);
        assert_eq!(v4[ipv4::field::TOS], 0xFF);
        assert_eq!(v4[ipv4::field::VER_IHL], 0);
        let v6 = icrc_masked_bits(true);
        assert_eq!(v6[0], 0x0F);
        assert_eq!(v6[ipv6::field::HOP_LIMIT], 0xFF);
        tag_filler();
        // The residue does not depend on the data.
        let s = gf2::update(0x1234_5678, b"other data");
        assert_eq!(!gf2::update(s, &(!s).to_le_bytes()), icrc_residue());
        assert_eq!(
            gf2::update(icrc_init(), &[0; 14]),
            gf2::update(gf2::INIT, &icrc::LRH_PREFIX)
        );
    }

    #[test]
    fn roce_rx_synthesizes() {
        let mut uut = RoceRx::<64, 8, 11>::new();
        uut.connect_all();
        yosys_validate("roce_rx_w64", &generate_verilog(&uut)).unwrap();
    }
}
