//! TX header assembly: a RoCE v2 header descriptor in, the frame's header
//! bytes out (Ethernet with optional 802.1Q tag, IPv4 with its checksum or
//! IPv6, UDP, BTH and the opcode's extension headers), with the lengths the
//! stream stage needs.
//!
//! Nothing here is typed by hand: byte offsets come from `roce-wire`'s
//! `field` constants, the extension-header order from its opcode table, and
//! the Verilog is generated from them at construction (one `case` per header
//! byte over the 4 layouts × the distinct extension-header lists). The Rust
//! `update()` (rust-hdl's simulator) is `roce_wire::FrameRepr::emit` itself.
//!
//! A [`STAGES`]-stage pipeline with valid/ready on both sides: one
//! descriptor per cycle, outputs [`LATENCY`] edges after the descriptor is
//! taken. Byte `i` of the header is `hdr[8i+7:8i]`, zero past `hdr_len`.
//!
//! The pipeline never stalls: its stages load on every edge (a valid bit
//! travels with each descriptor) and the last two write an output queue of
//! [`QUEUE`] headers in LUT RAM: stage 3 the bytes that never depend on the
//! lengths, stage 4 the lengths, the checksum and the bytes that share
//! their places in other layouts (20 of the 106), each part in its own
//! RAM, so only those 20 bytes' sources ride a fourth register stage.
//! `hdr` is the head's bytes read straight from the two RAMs at a pointer
//! register; every other output comes from
//! registers that load the head on every edge (or the header after it, when
//! the head is taken). `in_ready` is a registered credit flag (fewer than
//! [`QUEUE`] descriptors in the stages and the queue) and `out_valid` a
//! registered non-empty flag, so `out_ready` only moves the read pointers
//! and two counters and picks what the head registers load: no stage enable
//! and no wide register enable waits for the consumer.

use roce_wire::opcode::{ExtKind, OpcodeInfo, TABLE};
use roce_wire::{bth, ethernet, ext, ipv4, ipv6, udp};
use rust_hdl_core::prelude::*;

/// Bytes in the header window: the longest header is 18 + 40 + 8 + 12 + 28 = 106.
pub const HDR_BYTES: usize = 128;
/// `HDR_BYTES * 8`.
pub const HDR_BITS: usize = HDR_BYTES * 8;
/// Pipeline stages: the outputs follow the descriptor by this many edges
/// (four register stages, then the write into the output queue).
pub const STAGES: usize = 5;
/// Edges from a descriptor taken to its outputs valid: the stages, then one
/// edge into the head registers.
pub const LATENCY: usize = STAGES + 1;
/// Headers the output queue holds, and the credits: at most this many
/// descriptors are in the stages and the queue together. At least the
/// credit loop (`LATENCY` + 2 edges from a descriptor taken to its credit
/// back at `in_ready`: the take reaches the credit count from a register)
/// for one descriptor per cycle; a power of two.
pub const QUEUE: usize = 8;
const _: () = assert!(QUEUE >= LATENCY + 2 && QUEUE.is_power_of_two());
/// The frame before the ICRC is filled with zeros up to this length (the
/// 60-byte Ethernet minimum less the ICRC).
pub const MIN_FRAME_LEN: usize = ethernet::MIN_FRAME_LEN - roce_wire::icrc::ICRC_LEN;

/// The header descriptor ports (also the TX block's `s_hdr_*` ports).
macro_rules! descriptor {
    ($mac:ident) => {
        $mac! {
            dst_mac: 48, src_mac: 48, vlan: 1, vlan_tci: 16, ipv6: 1, tos: 8, ttl: 8,
            flow_label: 20, ip_ident: 16, ip_df: 1, ip_src: 128, ip_dst: 128,
            udp_src_port: 16, opcode: 8, se: 1, mig: 1, pkey: 16, fecn: 1, becn: 1,
            dest_qp: 24, ack_req: 1, psn: 24, payload_len: 16, reth_va: 64, reth_rkey: 32,
            reth_dma_len: 32, aeth_syndrome: 8, aeth_msn: 24, immdt: 32, ieth: 32,
            atomic_va: 64, atomic_rkey: 32, atomic_swap_add: 64, atomic_compare: 64,
            atomic_ack_data: 64, deth_qkey: 32, deth_src_qp: 24
        }
    };
}
#[allow(unused_imports)]
pub(crate) use descriptor;

macro_rules! header_struct {
    ($($name:ident: $w:literal),*) => {
        /// TX header assembly (see the module documentation) for a stream of
        /// `K` bytes per beat.
        #[derive(LogicBlock)]
        pub struct TxHeader<const W: usize, const K: usize> {
            pub clock: Signal<In, Clock>,
            pub reset: Signal<In, Bit>,
            /// A descriptor is on the field ports.
            pub in_valid: Signal<In, Bit>,
            /// It is taken at this edge (when `in_valid`).
            pub in_ready: Signal<Out, Bit>,
            /// The outputs describe a descriptor, [`LATENCY`] edges after it was taken.
            pub out_valid: Signal<Out, Bit>,
            /// The consumer takes the outputs at this edge.
            pub out_ready: Signal<In, Bit>,
            $(
                #[doc = concat!("Descriptor field `", stringify!($name), "`.")]
                pub $name: Signal<In, Bits<$w>>,
            )*
            /// Header bytes, byte `i` at `[8i+7:8i]`; zero past `hdr_len`.
            pub hdr: Signal<Out, Bits<HDR_BITS>>,
            /// Header length in bytes (58..=106).
            pub hdr_len: Signal<Out, Bits<7>>,
            /// Frame length before the ICRC: header + payload + pad.
            pub frame_len: Signal<Out, Bits<17>>,
            /// PadCnt.
            pub pad: Signal<Out, Bits<2>>,
            /// The opcode is in the table (unknown ones get no extension headers).
            pub known: Signal<Out, Bit>,
            /// The opcode carries payload: read `payload_len` bytes from the stream.
            pub has_payload: Signal<Out, Bit>,
            /// Beats wholly filled by the header: `hdr_len / K`.
            pub head_beats: Signal<Out, Bits<5>>,
            /// Header bytes in the beat it shares with the payload: `hdr_len % K`.
            pub head_tail: Signal<Out, Bits<7>>,
            /// `K - head_tail` (1..=K): the byte shift that moves the payload
            /// behind the header's tail.
            pub body_shift: Signal<Out, Bits<8>>,
            /// Beats of the frame before the ICRC: `ceil(frame_len / K)`.
            pub frame_beats: Signal<Out, Bits<14>>,
            /// Bytes in the last of them (1..=K).
            pub last_count: Signal<Out, Bits<7>>,
            /// Payload beats to read: `ceil(payload_len / K)`, 0 without payload.
            pub payload_beats: Signal<Out, Bits<14>>,
            /// Bytes in the last payload beat (1..=K; meaningless without payload).
            pub payload_last_count: Signal<Out, Bits<7>>,
            /// `tkeep` of the last payload beat: `payload_last_count` lanes.
            pub payload_last_keep: Signal<Out, Bits<K>>,
            /// Zero bytes that bring the frame before the ICRC to the
            /// Ethernet minimum (60 bytes with the ICRC): 0..=2.
            pub fill: Signal<Out, Bits<2>>,
            /// Beat 0 is the frame's last: `frame_beats == 1`.
            pub first_last: Signal<Out, Bit>,
            /// Beat 0 carries payload: `head_beats == 0`.
            pub first_body: Signal<Out, Bit>,
            /// There are payload beats to read: `payload_beats != 0`.
            pub first_more: Signal<Out, Bit>,
            /// The first payload beat is the last: `payload_beats == 1`.
            pub first_ilast: Signal<Out, Bit>,
            /// Lanes of beat 0 that take payload bytes: all of them when the
            /// frame's payload starts in beat 0 (`first_body & first_more`),
            /// the last payload beat's `payload_last_keep` when that is also
            /// its last payload beat (`first_ilast`), none otherwise.
            pub first_gate: Signal<Out, Bits<K>>,
            /// The index of `body_shift` in [`body_shifts`]`(K)`, so the TX
            /// front's realigner selects with a few register bits.
            pub body_idx: Signal<Out, Bits<4>>,
            /// The descriptor has an 802.1Q tag (the Ethernet header is 18 bytes).
            pub is_vlan: Signal<Out, Bit>,
            /// The descriptor is IPv6.
            pub is_ipv6: Signal<Out, Bit>,
            /// Beat 0 of the header, `hdr[W-1:0]`, from a register (the
            /// other outputs are registered too; `hdr` is read straight
            /// from the queue).
            pub head_beat0: Signal<Out, Bits<W>>,
            /// What `first_last` and `first_body & first_more` load at this
            /// edge (the head registers' next values: the head, or the
            /// header after it when the head is taken), for a consumer that
            /// keeps its own registered copies of them.
            pub next_first_last: Signal<Out, Bit>,
            pub next_first_need: Signal<Out, Bit>,
            /// What `out_valid` loads at this edge (a header other than a
            /// head taken now is queued), for a consumer that folds it into
            /// a registered handshake flag of its own.
            pub next_out_valid: Signal<Out, Bit>,
            /// rust-hdl simulation state: the descriptors in the register
            /// stages, the output queue, the credit count and the two
            /// registered handshake flags (`in_ready`, `out_valid`).
            _stages: [Option<Vec<u128>>; STAGES - 1],
            _queue: std::collections::VecDeque<Vec<u128>>,
            _used: usize,
            _flags: (bool, bool),
        }

        impl<const W: usize, const K: usize> TxHeader<W, K> {
            /// Descriptor field names and widths, in port order.
            pub const FIELDS: &'static [(&'static str, usize)] = &[$((stringify!($name), $w)),*];

            fn field_values(&self) -> Vec<u128> {
                vec![$(self.$name.val().to_u128()),*]
            }
        }

        impl<const W: usize, const K: usize> Default for TxHeader<W, K> {
            fn default() -> Self {
                TxHeader {
                    clock: Default::default(),
                    reset: Default::default(),
                    in_valid: Default::default(),
                    in_ready: Default::default(),
                    out_valid: Default::default(),
                    out_ready: Default::default(),
                    $($name: Default::default(),)*
                    hdr: Default::default(),
                    hdr_len: Default::default(),
                    frame_len: Default::default(),
                    pad: Default::default(),
                    known: Default::default(),
                    has_payload: Default::default(),
                    head_beats: Default::default(),
                    head_tail: Default::default(),
                    body_shift: Default::default(),
                    frame_beats: Default::default(),
                    last_count: Default::default(),
                    payload_beats: Default::default(),
                    payload_last_count: Default::default(),
                    payload_last_keep: Default::default(),
                    fill: Default::default(),
                    first_last: Default::default(),
                    first_body: Default::default(),
                    first_more: Default::default(),
                    first_ilast: Default::default(),
                    first_gate: Default::default(),
                    body_idx: Default::default(),
                    is_vlan: Default::default(),
                    is_ipv6: Default::default(),
                    head_beat0: Default::default(),
                    next_first_last: Default::default(),
                    next_first_need: Default::default(),
                    next_out_valid: Default::default(),
                    _stages: Default::default(),
                    _queue: Default::default(),
                    _used: 0,
                    _flags: (true, false),
                }
            }
        }
    };
}
descriptor!(header_struct);

/// Where a header byte comes from.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Src {
    Const(u8),
    /// `name[lo+7:lo]` of a port or internal wire.
    Bits(&'static str, usize),
    /// A Verilog expression of 8 bits; `@` stands for the name prefix.
    Expr(String),
    /// `name[lo+7:lo]` of an internal wire (never prefixed).
    Wire(&'static str, usize),
}

impl Src {
    /// The Verilog for the byte, port and field names prefixed by `prefix`
    /// (the pipeline stage's registered copies).
    fn verilog(&self, prefix: &str) -> String {
        match self {
            Src::Const(c) => format!("8'h{c:02x}"),
            Src::Bits(n, lo) => format!("{prefix}{n}[{}:{lo}]", lo + 7),
            Src::Expr(e) => e.replace('@', prefix),
            Src::Wire(n, lo) => format!("{n}[{}:{lo}]", lo + 7),
        }
    }
}

/// A symbolic header: 128 byte sources.
struct Sym(Vec<Src>);

impl Sym {
    /// Big-endian `bytes`-byte field `name` at `off` (its low `bytes*8` bits).
    fn put(&mut self, off: usize, bytes: usize, name: &'static str) {
        for i in 0..bytes {
            self.0[off + i] = Src::Bits(name, 8 * (bytes - 1 - i));
        }
    }
    fn put_field(&mut self, base: usize, f: core::ops::Range<usize>, name: &'static str) {
        self.put(base + f.start, f.len(), name);
    }
    fn byte(&mut self, at: usize, s: Src) {
        self.0[at] = s;
    }
}

/// Bytes of the canonical layout stages 2 and 3 hold: the Ethernet slot
/// as if tagged, the IP slot as if IPv6, then UDP, BTH and the extension
/// headers (zero past them).
const CANON_BYTES: usize = HDR_BYTES;
const ETH_SLOT: usize = ethernet::TAGGED_HEADER_LEN;
const IP_SLOT: usize = ipv6::HEADER_LEN;

/// Where header byte `i` of a (VLAN, IPv6) layout sits in the canonical
/// layout (`None` past it). The MACs stay; an untagged EtherType moves to
/// the tagged one's place; the IP header starts the IP slot; the rest
/// follows the IP slot.
fn canonical(i: usize, vlan: bool, v6: bool) -> Option<usize> {
    let mac_end = ethernet::field::ETHERTYPE.start;
    let eth = if vlan {
        ethernet::TAGGED_HEADER_LEN
    } else {
        ethernet::HEADER_LEN
    };
    let ip = if v6 {
        ipv6::HEADER_LEN
    } else {
        ipv4::HEADER_LEN
    };
    let c = if i < mac_end {
        i
    } else if i < eth {
        i + (ETH_SLOT - eth)
    } else if i < eth + ip {
        ETH_SLOT + (i - eth)
    } else {
        ETH_SLOT + IP_SLOT + (i - eth - ip)
    };
    (c < CANON_BYTES).then_some(c)
}

/// The distinct extension-header lists of the opcode table, the empty list
/// first (it is also what unknown opcodes get).
pub fn ext_patterns() -> Vec<&'static [ExtKind]> {
    let mut v: Vec<&'static [ExtKind]> = vec![&[]];
    for row in &TABLE {
        if !v.contains(&row.headers) {
            v.push(row.headers);
        }
    }
    v
}

fn pattern_of(info: &OpcodeInfo) -> usize {
    ext_patterns()
        .iter()
        .position(|p| *p == info.headers)
        .expect("pattern")
}

/// Every header length a descriptor can produce (all layouts × extension
/// lists), ascending.
pub fn header_lengths() -> Vec<usize> {
    let pats = ext_patterns();
    let mut v: Vec<usize> = (0..64)
        .filter(|sel| sel & 15 < pats.len())
        .map(|sel| layout_len(sel, &pats))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The byte shifts that move a payload behind a header's tail, `K - (hdr_len
/// mod K)` over every header length, ascending (`body_idx` indexes it). No
/// header length is a multiple of `K` (the lengths are 2 mod 4), so each
/// shift is 1..K-1.
pub fn body_shifts(k: usize) -> Vec<usize> {
    let mut v: Vec<usize> = header_lengths().iter().map(|hl| k - hl % k).collect();
    v.sort_unstable();
    v.dedup();
    assert!(
        v.iter().all(|&s| s < k),
        "a header length is a multiple of K"
    );
    assert!(v.len() <= 16, "body_idx is 4 bits");
    v
}

/// Header length of the layout with selector `sel` = {vlan, ipv6, pattern}.
fn layout_len(sel: usize, pats: &[&[ExtKind]]) -> usize {
    let vlan = sel >> 5 & 1 != 0;
    let v6 = sel >> 4 & 1 != 0;
    let ext: usize = pats[sel & 15].iter().map(|k| k.size()).sum();
    (if vlan {
        ethernet::TAGGED_HEADER_LEN
    } else {
        ethernet::HEADER_LEN
    }) + (if v6 {
        ipv6::HEADER_LEN
    } else {
        ipv4::HEADER_LEN
    }) + udp::HEADER_LEN
        + bth::HEADER_LEN
        + ext
}

/// The header layout for (VLAN, IPv6, extension list).
fn layout(vlan: bool, v6: bool, exts: &[ExtKind]) -> Sym {
    let mut s = Sym(vec![Src::Const(0); HDR_BYTES]);
    use ethernet::field as ef;
    s.put_field(0, ef::DST, "dst_mac");
    s.put_field(0, ef::SRC, "src_mac");
    let eth = if vlan {
        s.put(ef::ETHERTYPE.start, 2, "tpid");
        s.put_field(0, ef::TCI, "vlan_tci");
        s.put_field(0, ef::INNER_ETHERTYPE, "ethertype");
        ethernet::TAGGED_HEADER_LEN
    } else {
        s.put_field(0, ef::ETHERTYPE, "ethertype");
        ethernet::HEADER_LEN
    };
    let ip_len = if v6 {
        use ipv6::field as f;
        s.put(eth + f::VER_TC_FLOW.start, 4, "v6_word0");
        s.put_field(eth, f::LENGTH, "l4_len");
        s.byte(eth + f::NXT_HDR, Src::Const(ipv4::PROTOCOL_UDP));
        s.byte(eth + f::HOP_LIMIT, Src::Bits("ttl", 0));
        s.put_field(eth, f::SRC, "ip_src");
        s.put_field(eth, f::DST, "ip_dst");
        ipv6::HEADER_LEN
    } else {
        use ipv4::field as f;
        s.byte(
            eth + f::VER_IHL,
            Src::Const(0x40 | (ipv4::HEADER_LEN / 4) as u8),
        );
        s.byte(eth + f::TOS, Src::Bits("tos", 0));
        s.put_field(eth, f::LENGTH, "ip_total");
        s.put_field(eth, f::IDENT, "ip_ident");
        s.byte(
            eth + f::FLG_OFF.start,
            Src::Expr("{1'b0, @ip_df, 6'b0}".into()),
        );
        s.byte(eth + f::TTL, Src::Bits("ttl", 0));
        s.byte(eth + f::PROTOCOL, Src::Const(ipv4::PROTOCOL_UDP));
        s.put_field(eth, f::CHECKSUM, "ip_csum");
        s.put_field(eth, f::SRC, "ip_src");
        s.put_field(eth, f::DST, "ip_dst");
        ipv4::HEADER_LEN
    };
    let u = eth + ip_len;
    s.put_field(u, udp::field::SRC_PORT, "udp_src_port");
    s.put_field(u, udp::field::DST_PORT, "roce_port");
    s.put_field(u, udp::field::LENGTH, "l4_len");
    let b = u + udp::HEADER_LEN;
    {
        use bth::field as f;
        s.byte(b + f::OPCODE, Src::Bits("opcode", 0));
        s.byte(b + f::FLAGS, Src::Expr("{@se, @mig, @pad_w, 4'h0}".into()));
        s.put_field(b, f::PKEY, "pkey");
        s.byte(b + f::FECN_BECN, Src::Expr("{@fecn, @becn, 6'b0}".into()));
        s.put_field(b, f::DEST_QP, "dest_qp");
        s.byte(b + f::ACKREQ, Src::Expr("{@ack_req, 7'b0}".into()));
        s.put_field(b, f::PSN, "psn");
    }
    let mut e = b + bth::HEADER_LEN;
    for &k in exts {
        match k {
            ExtKind::Reth => {
                use ext::reth::field as f;
                s.put_field(e, f::VA, "reth_va");
                s.put_field(e, f::RKEY, "reth_rkey");
                s.put_field(e, f::DMA_LEN, "reth_dma_len");
            }
            ExtKind::Aeth => {
                use ext::aeth::field as f;
                s.byte(e + f::SYNDROME, Src::Bits("aeth_syndrome", 0));
                s.put_field(e, f::MSN, "aeth_msn");
            }
            ExtKind::ImmDt => s.put(e, 4, "immdt"),
            ExtKind::Ieth => s.put(e, 4, "ieth"),
            ExtKind::AtomicEth => {
                use ext::atomic_eth::field as f;
                s.put_field(e, f::VA, "atomic_va");
                s.put_field(e, f::RKEY, "atomic_rkey");
                s.put_field(e, f::SWAP_ADD, "atomic_swap_add");
                s.put_field(e, f::COMPARE, "atomic_compare");
            }
            ExtKind::AtomicAckEth => s.put(e, 8, "atomic_ack_data"),
            ExtKind::Deth => {
                use ext::deth::field as f;
                s.put_field(e, f::QKEY, "deth_qkey");
                s.put_field(e, f::SRC_QP, "deth_src_qp");
            }
            ExtKind::Cnp => {}
        }
        e += k.size();
    }
    s
}

impl<const W: usize, const K: usize> TxHeader<W, K> {
    pub fn new() -> Self {
        crate::stream::check_width("TxHeader", W, K);
        assert!(
            ext_patterns().len() <= 16,
            "extension patterns need more select bits"
        );
        assert!(
            header_lengths().iter().max().unwrap() - ethernet::TAGGED_HEADER_LEN - ipv6::HEADER_LEN
                + ETH_SLOT
                + IP_SLOT
                <= CANON_BYTES,
            "the canonical layout holds the longest header"
        );
        Self::default()
    }

    /// The Verilog body: a [`STAGES`]-stage pipeline that never stalls,
    /// into the output queue (see the module documentation).
    ///
    /// Every stage is one carry chain (or a byte multiplexer) deep, so the
    /// block holds the 10 GbE clock on ECP5 at W = 64:
    /// 0. Registers the descriptor and the opcode ROM's outputs (the
    ///    extension pattern, payload or not, the L4 and IP base lengths and
    ///    the checksum's length constant): no add behind the ROM.
    /// 1. The payload length rounded up to 4 (payload + pad); the IPv4
    ///    checksum's four terms: three ones'-complement pair sums of the
    ///    descriptor's words, and the constant words with the total length
    ///    (the payload length plus the ROM constant, one add); the select
    ///    flags of stage 2's byte sources, decoded from the layout selector.
    /// 2. Places every header byte that does not depend on the lengths in
    ///    the canonical layout (slots at fixed places, so a byte chooses
    ///    among few sources: an AND-OR with flip-flop selects); L4 length
    ///    and IP total length (one add each); two checksum pair sums; the
    ///    header length.
    /// 3. The checksum; the frame length; payload beats. Moves each byte
    ///    that is late in no layout from the canonical layout to its place
    ///    (one of four, by VLAN and IP version) and writes it into the early
    ///    queue.
    /// 4. Moves the other bytes to their places or puts in a length or
    ///    checksum byte; frame beats; all written into the late queue and
    ///    the small queues (no register of its own but beat 0's early
    ///    bytes, `e4`).
    ///
    /// The checksum takes the total length as header + padded payload
    /// without wrapping at 16 bits: it is exact for every total length an
    /// IPv4 header can carry (up to 65535).
    fn body() -> String {
        let log2k = K.trailing_zeros();
        let pats = ext_patterns();
        let mut v = String::new();
        // Handshake: the stages never stall. A valid bit travels with each
        // descriptor; stage 4's results are written into the output queue
        // (`QUEUE` headers of LUT RAM). `in_ready` is a registered credit
        // flag: a descriptor is taken only while fewer than `QUEUE` are in
        // the stages or the queue, so the queue never overflows and no
        // stage waits for `out_ready`. `out_valid` counts only the headers
        // written before this edge (`occ` less the one taken), so the head
        // registers below, loaded at the same edge, hold the head. The
        // credit count takes a header's take an edge late (`take_q`), so
        // `out_ready`'s logic reaches `occ` and the read pointers only;
        // the credit comes back a cycle later, still within `QUEUE`.
        let qa = QUEUE.trailing_zeros();
        v.push_str(&format!(
            "reg v0, v1, v2, v3;\nreg [{a1}:0] wptr, wptr2, rptr, rptr1;\nreg [{qa}:0] used, occ;\nreg take_q;\n\
             wire take_in = in_valid & in_ready;\nwire take_out = out_valid & out_ready;\n\
             always @(posedge clock) begin\n    if (reset) begin\n\
             \x20       v0 <= 1'b0;\n        v1 <= 1'b0;\n        v2 <= 1'b0;\n        v3 <= 1'b0;\n\
             \x20       wptr <= {qa}'d0;\n        wptr2 <= {qa}'d0;\n        rptr <= {qa}'d0;\n        rptr1 <= {qa}'d1;\n\
             \x20       used <= {qb}'d0;\n        occ <= {qb}'d0;\n        take_q <= 1'b0;\n\
             \x20       in_ready <= 1'b1;\n        out_valid <= 1'b0;\n\
             \x20   end else begin\n\
             \x20       v0 <= take_in;\n        v1 <= v0;\n        v2 <= v1;\n        v3 <= v2;\n\
             \x20       if (v3) wptr <= wptr + {qa}'d1;\n        if (v2) wptr2 <= wptr2 + {qa}'d1;\n\
             \x20       if (take_out) begin\n            rptr <= rptr1;\n            rptr1 <= rptr1 + {qa}'d1;\n        end\n\
             \x20       take_q <= take_out;\n\
             \x20       used <= used + {{{qa}'d0, take_in}} - {{{qa}'d0, take_q}};\n\
             \x20       occ <= occ + {{{qa}'d0, v3}} - {{{qa}'d0, take_out}};\n\
             \x20       in_ready <= take_q | (take_in ? used != {qb}'d{} : in_ready);\n\
             \x20       out_valid <= next_out_valid;\n\
             \x20   end\nend\n\
             always @(*) next_out_valid = take_out ? occ > {qb}'d1 : occ != {qb}'d0;\n",
            QUEUE - 1,
            a1 = qa - 1,
            qb = qa + 1,
        ));
        // Ones'-complement 16-bit add with the end-around carry chosen
        // between two parallel adds (one carry chain deep, RFC 1071). The
        // `+ 1` one rides in as a carry-in (`{a, 1} + {b, 1}`): written
        // `a + b + 1`, synthesis chains a second adder behind the first.
        v.push_str(
            "function [15:0] oc_add(input [15:0] a, input [15:0] b);\n\
             \x20   reg [16:0] t0; reg [17:0] t1;\n\
             \x20   begin t0 = a + b; t1 = {1'b0, a, 1'b1} + {1'b0, b, 1'b1}; \
             oc_add = t0[16] ? t1[16:1] : t0[15:0]; end\n\
             endfunction\n",
        );
        // Stage 0: the opcode ROM, to the opcode's extension-header pattern
        // and two flags only. The lengths and the checksum's length term
        // are functions of the pattern alone: a second ROM on the
        // registered pattern gives them in stage 1, so stage 0 decodes the
        // 8-bit opcode into 6 bits, not 57 (it sat behind the descriptor's
        // input flip-flops on several held-out seeds).
        let fixed_l4 = udp::HEADER_LEN + bth::HEADER_LEN + roce_wire::icrc::ICRC_LEN;
        v.push_str(
            "reg [3:0] pat;\nreg kn, hp;\n\
             always @(*) begin\n    case (opcode)\n",
        );
        // The IPv4 checksum's length term: the constant header words
        // (version/IHL, protocol, DF) and the total length without the
        // payload, `ck`, whose low two bits are a constant (the lengths are
        // multiples of 4). With the payload padded to 4, the sum's bits
        // above 1 are `payload_len[15:2] + ck[15:2]` with the carry-in
        // `payload_len[1:0] != 0`: a 14-bit add, one carry chain behind the
        // ROM. Stage 2 folds its carry-out back in (ones' complement) and
        // takes `ck` alone for opcodes without payload.
        let ver_ihl = 0x40 | (ipv4::HEADER_LEN / 4);
        let ck = |ipt: usize, df: bool| {
            let k = (ver_ihl << 8) + ipv4::PROTOCOL_UDP as usize + ipt + ((df as usize) << 14);
            assert!(
                ipt % 4 == 0 && k & 3 <= 2 && k < 0x10000,
                "checksum length term"
            );
            k & !3
        };
        // The sum's low two bits (the lengths are multiples of 4).
        let ck_low = ((ver_ihl << 8) + ipv4::PROTOCOL_UDP as usize) & 3;
        let rom_row = |pat: usize, kn: bool, hp: bool| {
            format!(
                "begin pat = 4'd{pat}; kn = 1'b{}; hp = 1'b{}; end",
                kn as u8, hp as u8,
            )
        };
        // The pattern ROM's row (stage 1, on `d_pat`).
        let pat_row = |pat: usize| {
            let ext: usize = pats[pat].iter().map(|k| k.size()).sum();
            let ipt = fixed_l4 + ext + ipv4::HEADER_LEN;
            format!(
                "begin ext_len = 5'd{ext}; l4_base = 7'd{}; ipt_base = 7'd{ipt}; \
                 ck0 = 16'd{}; ck1 = 16'd{}; end",
                fixed_l4 + ext,
                ck(ipt, false),
                ck(ipt, true),
            )
        };
        for row in &TABLE {
            v.push_str(&format!(
                "    8'h{:02x}: {}\n",
                row.code,
                rom_row(pattern_of(row), true, row.has_payload())
            ));
        }
        v.push_str(&format!(
            "    default: {}\n    endcase\nend\n",
            rom_row(0, false, false)
        ));
        v.push_str(
            "reg [3:0] d_pat;\nreg d_kn, d_hp;\n\
             reg [4:0] ext_len;\nreg [6:0] l4_base, ipt_base;\nreg [15:0] ck0, ck1;\n\
             always @(*) begin\n    case (d_pat)\n",
        );
        assert!(pats.len() <= 16, "tx_header: a pattern is 4 bits");
        for pi in 0..pats.len() {
            v.push_str(&format!("    4'd{pi}: {}\n", pat_row(pi)));
        }
        v.push_str(&format!("    default: {}\n    endcase\nend\n", pat_row(0)));
        // Stage 0 registers the descriptor and the opcode ROM's outputs
        // (`d_` names), so no add sits behind that ROM (stage 1's adds
        // follow the pattern ROM, a LUT of `d_pat`); stage 1's registers
        // (`r_`).
        let mut regs = String::new();
        let mut loads0 = String::new();
        let mut loads = String::new();
        for &(name, w) in Self::FIELDS {
            regs.push_str(&format!(
                "reg [{0}:0] d_{name};\nreg [{0}:0] r_{name};\n",
                w - 1
            ));
            loads0.push_str(&format!("    d_{name} <= {name};\n"));
            loads.push_str(&format!("    r_{name} <= d_{name};\n"));
        }
        v.push_str(&regs);
        v.push_str(&format!(
            "always @(posedge clock) begin\n{loads0}\
             \x20   d_pat <= pat;\n    d_kn <= kn;\n    d_hp <= hp;\n\
             end\n"
        ));
        v.push_str(&format!(
            "reg [3:0] pat1;\nreg kn1, hp1;\nreg [4:0] ext1;\nreg [6:0] l4b1, iptb1;\n\
             reg [15:0] pl1;\nreg [16:0] plup1;\nreg [1:0] pad1;\nreg [15:0] p0, p1, p2;\nreg [14:0] p3;\nreg [13:0] np3;\n\
             wire [16:0] pl_up = ({{1'b0, d_payload_len}} + 17'd3) & ~17'd3;\n\
             wire [15:0] ck = d_ip_df ? ck1 : ck0;\n\
             wire [15:0] ckr = {{1'b0, d_payload_len[15:2], d_payload_len[1:0] != 2'd0}} + {{1'b0, ck[15:2], 1'b1}};\n\
             always @(posedge clock) begin\n{loads}\
             \x20   pat1 <= d_pat;\n    kn1 <= d_kn;\n    hp1 <= d_hp;\n    ext1 <= ext_len;\n\
             \x20   l4b1 <= l4_base;\n    iptb1 <= ipt_base;\n\
             \x20   pl1 <= d_hp ? d_payload_len : 16'd0;\n    plup1 <= d_hp ? pl_up : 17'd0;\n\
             \x20   pad1 <= d_hp ? 2'd0 - d_payload_len[1:0] : 2'd0;\n\
             \x20   p0 <= oc_add({{d_ttl, d_tos}}, d_ip_ident);\n\
             \x20   p1 <= oc_add(d_ip_src[31:16], d_ip_src[15:0]);\n\
             \x20   p2 <= oc_add(d_ip_dst[31:16], d_ip_dst[15:0]);\n\
             \x20   p3 <= ckr[15:1];\n    np3 <= ck[15:2];\n\
             end\n",
        ));
        // Stage 2: derived byte sources from stage-1 registers (`r_` names).
        v.push_str(&format!(
            "wire [15:0] r_ethertype = r_ipv6 ? 16'h{:04x} : 16'h{:04x};\n\
             wire [15:0] r_tpid = 16'h{:04x};\n\
             wire [15:0] r_roce_port = 16'd{};\n\
             wire [31:0] r_v6_word0 = {{4'h6, r_tos, r_flow_label}};\n\
             wire [1:0] r_pad_w = pad1;\n\
             wire [5:0] sel1 = {{r_vlan, r_ipv6, pat1}};\n",
            ethernet::ETHERTYPE_IPV6,
            ethernet::ETHERTYPE_IPV4,
            ethernet::TPID_8021Q,
            udp::ROCE_V2_PORT,
        ));
        let mut layouts = Vec::new();
        for vlan in [false, true] {
            for v6 in [false, true] {
                for (pi, p) in pats.iter().enumerate() {
                    let sel = ((vlan as usize) << 5) | ((v6 as usize) << 4) | pi;
                    layouts.push((sel, layout(vlan, v6, p)));
                }
            }
        }
        let late =
            |s: &Src| matches!(s, Src::Bits(n, _) if ["l4_len", "ip_total", "ip_csum"].contains(n));
        // A case over the bits of the 6-bit selector `sel` that matter,
        // grouped by source: `entries` gives the source for each selector
        // value that occurs; `prefix` names its wires. A bit matters when
        // flipping it changes the source of some entry.
        let case = |v: &mut String,
                    target: &str,
                    op: &str,
                    sel: &str,
                    prefix: &str,
                    entries: &[(usize, Src)]| {
            let src_of = |s: usize| entries.iter().find(|e| e.0 == s).map(|e| &e.1);
            let bits: Vec<usize> = (0..6)
                .rev()
                .filter(|&b| {
                    entries
                        .iter()
                        .any(|(s, src)| src_of(s ^ 1 << b).is_some_and(|o| o != src))
                })
                .collect();
            let project = |s: usize| bits.iter().fold(0, |acc, &b| acc << 1 | (s >> b & 1));
            let mut groups: Vec<(Src, Vec<usize>)> = Vec::new();
            for (s, src) in entries {
                let label = project(*s);
                match groups.iter_mut().find(|(g, _)| g == src) {
                    Some(g) => {
                        if !g.1.contains(&label) {
                            g.1.push(label)
                        }
                    }
                    None => groups.push((src.clone(), vec![label])),
                }
            }
            if groups.len() == 1 {
                v.push_str(&format!(
                    "    {target} {op} {};\n",
                    groups[0].0.verilog(prefix)
                ));
                return;
            }
            let sel_bits: Vec<String> = bits.iter().map(|b| format!("{sel}[{b}]")).collect();
            let (default_src, _) = groups.iter().max_by_key(|g| g.1.len()).unwrap().clone();
            v.push_str(&format!("    case ({{{}}})\n", sel_bits.join(", ")));
            for (src, labels) in &groups {
                if *src == default_src {
                    continue;
                }
                let labels: Vec<String> = labels
                    .iter()
                    .map(|l| format!("{}'d{l}", bits.len()))
                    .collect();
                v.push_str(&format!(
                    "    {}: {target} {op} {};\n",
                    labels.join(", "),
                    src.verilog(prefix)
                ));
            }
            v.push_str(&format!(
                "    default: {target} {op} {};\n    endcase\n",
                default_src.verilog(prefix)
            ));
        };
        // The byte sources' select flags (filled in below), registered in
        // stage 1 from the stage-0 selector.
        v.push_str("//@@SELECT_FLAGS@@\n");
        // Stage 2 registers: early bytes (late ones zero) and the lengths.
        v.push_str(&format!(
            "reg [5:0] sel2;\nreg kn2, hp2;\nreg [15:0] pl2, l4_2, ipt2;\nreg [16:0] plup2;\n\
             reg [1:0] pad2;\nreg [6:0] hl2;\nreg [15:0] q0, q1;\nreg [{}:0] hdr2;\n\
             always @(posedge clock) begin\n\
             \x20   sel2 <= sel1;\n    kn2 <= kn1;\n    hp2 <= hp1;\n    pl2 <= pl1;\n    plup2 <= plup1;\n    pad2 <= pad1;\n\
             \x20   l4_2 <= l4b1 + plup1[15:0];\n    ipt2 <= iptb1 + plup1[15:0];\n\
             \x20   hl2 <= (r_vlan ? 7'd{} : 7'd{}) + (r_ipv6 ? 7'd{} : 7'd{}) + 7'd{} + ext1;\n\
             \x20   q0 <= oc_add(p0, p1);\n\
             \x20   q1 <= oc_add(p2, hp1 ? {{p3[13:0], p3[14] ? 2'd{} : 2'd{ck_low}}} : {{np3, 2'd{ck_low}}});\n",
            HDR_BITS - 1,
            ethernet::TAGGED_HEADER_LEN,
            ethernet::HEADER_LEN,
            ipv6::HEADER_LEN,
            ipv4::HEADER_LEN,
            udp::HEADER_LEN + bth::HEADER_LEN,
            ck_low + 1,
        ));
        // Stage 2 places the bytes in the canonical layout (see [`canonical`]):
        // every slot at a fixed place, so a byte chooses among few sources.
        // Each source comes with a select flag, registered in stage 1 from
        // the selector (`flags[k]`: the selector values that pick it; one
        // flag per distinct set, shared by the bytes), so a byte is an
        // AND-OR of its sources with flip-flop selects: no selector decode
        // sits in stage 2.
        let mut flags: Vec<Vec<usize>> = Vec::new();
        // Canonical slots no layout fills (past the longest header): zero.
        let mut zero_slot = Vec::with_capacity(CANON_BYTES);
        let all_sels: Vec<usize> = layouts.iter().map(|(sel, _)| *sel).collect();
        for c in 0..CANON_BYTES {
            let target = format!("hdr2[{}:{}]", 8 * c + 7, 8 * c);
            let entries: Vec<(usize, Src)> = layouts
                .iter()
                .map(|(sel, sym)| {
                    let (vlan, v6) = (sel >> 5 & 1 != 0, sel >> 4 & 1 != 0);
                    let src = (0..HDR_BYTES)
                        .find(|&i| canonical(i, vlan, v6) == Some(c))
                        .map_or(Src::Const(0), |i| sym.0[i].clone());
                    (*sel, if late(&src) { Src::Const(0) } else { src })
                })
                .collect();
            let mut groups: Vec<(Src, Vec<usize>)> = Vec::new();
            for (sel, src) in entries {
                if src == Src::Const(0) {
                    continue;
                }
                match groups.iter_mut().find(|g| g.0 == src) {
                    Some(g) => g.1.push(sel),
                    None => groups.push((src, vec![sel])),
                }
            }
            let terms: Vec<String> = groups
                .iter()
                .map(|(src, sels)| {
                    if *sels == all_sels {
                        return src.verilog("r_");
                    }
                    let k = flags.iter().position(|f| f == sels).unwrap_or_else(|| {
                        flags.push(sels.clone());
                        flags.len() - 1
                    });
                    format!("(g{k} ? {} : 8'h00)", src.verilog("r_"))
                })
                .collect();
            zero_slot.push(terms.is_empty());
            let rhs = if terms.is_empty() {
                "8'h00".to_string()
            } else {
                terms.join(" | ")
            };
            v.push_str(&format!("    {target} <= {rhs};\n"));
        }
        v.push_str("end\n");
        let mut fl = String::from("wire [5:0] d_sel = {d_vlan, d_ipv6, d_pat};\n");
        for k in 0..flags.len() {
            fl.push_str(&format!("reg g{k};\n"));
        }
        fl.push_str("always @(posedge clock) begin\n");
        for (k, sels) in flags.iter().enumerate() {
            let vals: Vec<String> = sels.iter().map(|s| format!("6'd{s}")).collect();
            fl.push_str(&format!(
                "    case (d_sel)\n    {}: g{k} <= 1'b1;\n    default: g{k} <= 1'b0;\n    endcase\n",
                vals.join(", ")
            ));
        }
        fl.push_str("end\n");
        let v = v.replace("//@@SELECT_FLAGS@@\n", &fl);
        let mut v = v;
        // Stage 3.
        v.push_str(&format!(
            "reg [5:0] sel3;\nreg kn3, hp3;\nreg [15:0] l4_3, ipt3, r3;\nreg [1:0] pad3;\n\
             reg [6:0] hl3;\nreg [16:0] fl3;\nreg [13:0] pb3;\nreg [6:0] plc3;\nreg [{}:0] hdr3;\nreg more3, ilast3;\n\
             always @(posedge clock) begin\n\
             \x20   sel3 <= sel2;\n    kn3 <= kn2;\n    hp3 <= hp2;\n    l4_3 <= l4_2;\n    ipt3 <= ipt2;\n    pad3 <= pad2;\n\
             \x20   hl3 <= hl2;\n    hdr3 <= hdr2;\n    r3 <= ~oc_add(q0, q1);\n    fl3 <= hl2 + plup2;\n\
             \x20   pb3 <= ({{1'b0, pl2}} + 17'd{}) >> {log2k};\n\
             \x20   plc3 <= ((pl2 - 16'd1) & 16'd{}) + 16'd1;\n\
             \x20   more3 <= pl2 != 16'd0;\n    ilast3 <= (pl2 != 16'd0) & (pl2 <= 16'd{K});\n\
             end\n",
            HDR_BITS - 1,
            K - 1,
            K - 1,
        ));
        let lane_mask = K - 1;
        // Stage 4: the late bytes (`s4_` names) and the outputs, computed
        // into `w_` wires and written into the queue.
        let outs: [(&str, usize); 23] = [
            ("hdr", HDR_BITS),
            ("hdr_len", 7),
            ("frame_len", 17),
            ("pad", 2),
            ("known", 1),
            ("has_payload", 1),
            ("head_beats", 5),
            ("head_tail", 7),
            ("body_shift", 8),
            ("frame_beats", 14),
            ("last_count", 7),
            ("payload_beats", 14),
            ("payload_last_count", 7),
            ("payload_last_keep", K),
            ("fill", 2),
            ("first_last", 1),
            ("first_body", 1),
            ("first_more", 1),
            ("first_ilast", 1),
            ("first_gate", K),
            ("body_idx", 4),
            ("is_vlan", 1),
            ("is_ipv6", 1),
        ];
        for (name, w) in outs {
            v.push_str(&format!("reg [{}:0] w_{name};\n", w - 1));
        }
        let mut s4 = format!(
            "integer i;\nwire [15:0] s4_l4_len = l4_3;\nwire [15:0] s4_ip_total = ipt3;\n\
             wire [15:0] s4_ip_csum = r3;\n\
             always @(*) begin\n\
             \x20   w_is_vlan = sel3[5];\n    w_is_ipv6 = sel3[4];\n    w_hdr_len = hl3;\n    w_frame_len = fl3;\n\
             \x20   w_pad = pad3;\n    w_known = kn3;\n    w_has_payload = hp3;\n\
             \x20   w_payload_beats = pb3;\n    w_payload_last_count = plc3;\n\
             \x20   for (i = 0; i < {K}; i = i + 1) w_payload_last_keep[i] = plc3 > i;\n\
             \x20   w_head_beats = hl3 >> {log2k};\n    w_head_tail = hl3 & 7'd{};\n\
             \x20   w_body_shift = 8'd{K} - (hl3 & 7'd{lane_mask});\n\
             \x20   w_frame_beats = (fl3 + 17'd{}) >> {log2k};\n\
             \x20   w_last_count = ((fl3 - 17'd1) & 17'd{}) + 17'd1;\n\
             \x20   w_fill = (fl3 < 17'd{MIN_FRAME_LEN}) ? 17'd{MIN_FRAME_LEN} - fl3 : 17'd0;\n\
             \x20   w_first_last = fl3 <= 17'd{K};\n    w_first_body = hl3 < 7'd{K};\n\
             \x20   w_first_more = more3;\n    w_first_ilast = ilast3;\n\
             \x20   for (i = 0; i < {K}; i = i + 1) w_first_gate[i] = (hl3 < 7'd{K}) & more3 & (!ilast3 | (plc3 > i));\n\
             \x20   w_body_idx = 4'd0;\n",
            K - 1,
            K - 1,
            K - 1
        );
        for (i, sh) in body_shifts(K).iter().enumerate() {
            s4.push_str(&format!(
                "    if ((hl3 & 7'd{lane_mask}) == 7'd{}) w_body_idx = 4'd{i};\n",
                K - sh
            ));
        }
        // Each byte moves from the canonical layout to its place (a choice
        // of four, by VLAN and IP version), or takes a late byte. A byte
        // that is late in no layout is placed a stage early, in stage 3
        // from `hdr2`, and written into the early queue as its header
        // leaves stage 2; the others (lengths and checksum, and whatever
        // shares their places in other layouts) in stage 4 from `hdr3`, into
        // the late queue. So `hdr3` keeps only the bytes the late queue
        // needs, and those of beat 0, which leaves through the small queue
        // at stage 4 (`e4`). Bytes zero in every layout are in neither.
        let sources = |byte: usize, hdr: &'static str| -> Vec<(usize, Src)> {
            layouts
                .iter()
                .map(|(sel, sym)| {
                    let (vlan, v6) = (sel >> 5 & 1 != 0, sel >> 4 & 1 != 0);
                    let src = &sym.0[byte];
                    let src = if late(src) {
                        src.clone()
                    } else {
                        canonical(byte, vlan, v6)
                            .filter(|&c| !zero_slot[c])
                            .map_or(Src::Const(0), |c| Src::Wire(hdr, 8 * c))
                    };
                    (*sel, src)
                })
                .collect()
        };
        let (mut early, mut lates) = (Vec::new(), Vec::new());
        let mut s3 = format!(
            "reg [{}:0] w3_hdr;\nreg [{}:0] e4;\nalways @(posedge clock) e4 <= w3_hdr[{}:0];\n\
             always @(*) begin\n    w3_hdr = {HDR_BITS}'h0;\n",
            HDR_BITS - 1,
            W - 1,
            W - 1
        );
        for byte in 0..HDR_BYTES {
            let target = format!("w_hdr[{}:{}]", 8 * byte + 7, 8 * byte);
            let entries = sources(byte, "hdr3");
            if entries.iter().all(|(_, src)| *src == Src::Const(0)) {
                s4.push_str(&format!("    {target} = 8'h00;\n"));
            } else if entries.iter().any(|(_, src)| late(src)) {
                lates.push(byte);
                case(&mut s4, &target, "=", "sel3", "s4_", &entries);
            } else {
                early.push(byte);
                let t3 = format!("w3_hdr[{}:{}]", 8 * byte + 7, 8 * byte);
                case(&mut s3, &t3, "=", "sel2", "s3_", &sources(byte, "hdr2"));
                let from = if byte < K {
                    format!("e4[{}:{}]", 8 * byte + 7, 8 * byte)
                } else {
                    "8'h00".to_string()
                };
                s4.push_str(&format!("    {target} = {from};\n"));
            }
        }
        s3.push_str("end\n");
        s4.push_str("end\n");
        v.push_str(&s3);
        v.push_str(&s4);
        // The output queue: LUT RAM written at stage 4. The header bytes are
        // read at `rptr` (`hdr`, no register); the other outputs and the
        // header's beat 0 sit in a second queue read at `rptr` and `rptr1`
        // into registers that hold the head on every edge (the next one
        // when the head is taken), so `out_ready` selects, never enables.
        let small: Vec<(&str, usize)> = outs[1..]
            .iter()
            .copied()
            .chain([("head_beat0", W)])
            .collect();
        let cat: Vec<String> = small
            .iter()
            .map(|(n, _)| match *n {
                "head_beat0" => format!("w_hdr[{}:0]", W - 1),
                n => format!("w_{n}"),
            })
            .collect();
        let ports: Vec<&str> = small.iter().map(|(n, _)| *n).collect();
        let sw: usize = small.iter().map(|(_, w)| w).sum();
        // A field's lowest bit in the concatenation (the first is on top).
        let at = |name: &str| -> usize {
            let i = small.iter().position(|(n, _)| *n == name).unwrap();
            small[i + 1..].iter().map(|(_, w)| w).sum()
        };
        // The two header queues: the `i`-th byte of a queue's list at bits
        // `8i+7:8i` of its word. `wptr2` is the slot of the header in stage
        // 2 (the stages never stall, so it equals `wptr + v3`; it is kept as
        // its own counter so the early RAM's write address comes straight
        // from flip-flops); the credits free a slot before a descriptor that
        // reuses it is taken.
        let word = |bytes: &[usize], name: &str| -> Vec<String> {
            bytes
                .iter()
                .rev()
                .map(|b| format!("{name}[{}:{}]", 8 * b + 7, 8 * b))
                .collect()
        };
        let (ecat, lcat) = (word(&early, "w3_hdr"), word(&lates, "w_hdr"));
        let mut place = String::new();
        for (bytes, rd) in [(&early, "r_early"), (&lates, "r_late")] {
            for (i, b) in bytes.iter().enumerate() {
                place.push_str(&format!(
                    "    hdr[{}:{}] = {rd}[{}:{}];\n",
                    8 * b + 7,
                    8 * b,
                    8 * i + 7,
                    8 * i
                ));
            }
        }
        v.push_str(&format!(
            "\nreg [{eb}:0] qearly [0:{last}];\nreg [{lb}:0] qlate [0:{last}];\n\
             always @(posedge clock) if (v2) qearly[wptr2] <= {{{ecat}}};\n\
             always @(posedge clock) if (v3) qlate[wptr] <= {{{lcat}}};\n\
             wire [{eb}:0] r_early = qearly[rptr];\nwire [{lb}:0] r_late = qlate[rptr];\n\
             always @(*) begin\n    hdr = {HDR_BITS}'h0;\n{place}end\n\
             reg [{sb}:0] qsmall [0:{last}];\n\
             reg [{sb}:0] qsmall1 [0:{last}];\n\
             always @(posedge clock) if (v3) qsmall[wptr] <= {{{cat}}};\n\
             always @(posedge clock) if (v3) qsmall1[wptr] <= {{{cat}}};\n\
             wire [{sb}:0] head_d = take_out ? qsmall1[rptr1] : qsmall[rptr];\n\
             always @(posedge clock) {{{ports}}} <= head_d;\n\
             always @(*) next_first_last = head_d[{fl}];\n\
             always @(*) next_first_need = head_d[{fb}] & head_d[{fm}];\n",
            fl = at("first_last"),
            fb = at("first_body"),
            fm = at("first_more"),
            eb = 8 * early.len() - 1,
            lb = 8 * lates.len() - 1,
            ecat = ecat.join(", "),
            lcat = lcat.join(", "),
            place = place,
            sb = sw - 1,
            last = QUEUE - 1,
            cat = cat.join(", "),
            ports = ports.join(", ")
        ));
        v
    }

    /// The header `roce-wire` emits for these field values (rust-hdl
    /// simulation of the leaf; also what the Verilator tests compare with).
    pub fn reference(fields: &[u128]) -> (Vec<u8>, usize, usize, u8, bool, bool) {
        use roce_wire::aeth::Syndrome;
        use roce_wire::ext::*;
        use roce_wire::*;
        let get = |name: &str| {
            let i = Self::FIELDS.iter().position(|(n, _)| *n == name).unwrap();
            fields[i]
        };
        let b = |name: &str| get(name) != 0;
        let opcode = Opcode(get("opcode") as u8);
        let info = opcode.info();
        let has = |k| info.is_some_and(|i| i.has(k));
        let ip = if b("ipv6") {
            IpRepr::V6(Ipv6Repr {
                traffic_class: get("tos") as u8,
                flow_label: get("flow_label") as u32,
                hop_limit: get("ttl") as u8,
                next_header: 17,
                src: get("ip_src").to_be_bytes(),
                dst: get("ip_dst").to_be_bytes(),
                payload_len: 0,
            })
        } else {
            IpRepr::V4(Ipv4Repr {
                tos: get("tos") as u8,
                ident: get("ip_ident") as u16,
                dont_frag: b("ip_df"),
                ttl: get("ttl") as u8,
                protocol: 17,
                src: (get("ip_src") as u32).to_be_bytes(),
                dst: (get("ip_dst") as u32).to_be_bytes(),
                payload_len: 0,
            })
        };
        let mac = |n: &str| {
            let v = get(n).to_be_bytes();
            let mut m = [0u8; 6];
            m.copy_from_slice(&v[10..16]);
            m
        };
        let repr = FrameRepr {
            eth: EthernetRepr {
                dst: mac("dst_mac"),
                src: mac("src_mac"),
                vlan: b("vlan").then(|| VlanTag::from_tci(get("vlan_tci") as u16)),
                ethertype: 0,
            },
            ip,
            udp: UdpRepr {
                src_port: get("udp_src_port") as u16,
                dst_port: udp::ROCE_V2_PORT,
                checksum: 0,
                payload_len: 0,
            },
            bth: BthRepr {
                opcode,
                solicited: b("se"),
                mig_req: b("mig"),
                pad_count: 0,
                tver: 0,
                pkey: get("pkey") as u16,
                fecn: b("fecn"),
                becn: b("becn"),
                dest_qp: get("dest_qp") as u32,
                ack_req: b("ack_req"),
                psn: Psn::new(get("psn") as u32),
            },
            ext: ExtHeaders {
                reth: has(ExtKind::Reth).then(|| RethRepr {
                    va: get("reth_va") as u64,
                    rkey: get("reth_rkey") as u32,
                    dma_len: get("reth_dma_len") as u32,
                }),
                aeth: has(ExtKind::Aeth).then(|| AethRepr {
                    syndrome: Syndrome::from_byte(get("aeth_syndrome") as u8),
                    msn: get("aeth_msn") as u32,
                }),
                immdt: has(ExtKind::ImmDt).then(|| get("immdt") as u32),
                ieth: has(ExtKind::Ieth).then(|| get("ieth") as u32),
                atomic_eth: has(ExtKind::AtomicEth).then(|| AtomicEthRepr {
                    va: get("atomic_va") as u64,
                    rkey: get("atomic_rkey") as u32,
                    swap_add: get("atomic_swap_add") as u64,
                    compare: get("atomic_compare") as u64,
                }),
                atomic_ack_eth: has(ExtKind::AtomicAckEth).then(|| AtomicAckEthRepr {
                    orig_remote_data: get("atomic_ack_data") as u64,
                }),
                deth: has(ExtKind::Deth).then(|| DethRepr {
                    qkey: get("deth_qkey") as u32,
                    src_qp: get("deth_src_qp") as u32,
                }),
            },
            payload_len: 0,
        };
        let has_payload = info.is_some_and(|i| i.has_payload());
        let pl = if has_payload {
            get("payload_len") as usize
        } else {
            0
        };
        let frame = repr.to_bytes(&vec![0u8; pl]).expect("descriptor emits");
        let ext_len = info.map_or(0, |i| i.ext_len());
        let hdr_len = repr.eth.header_len() + repr.ip.header_len() + 20 + ext_len;
        let pad = roce_wire::pmtu::pad_count(pl);
        (
            frame[..hdr_len].to_vec(),
            hdr_len,
            hdr_len + pl + pad as usize,
            pad,
            info.is_some(),
            has_payload,
        )
    }
}

impl<const W: usize, const K: usize> Logic for TxHeader<W, K> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let fields = self.field_values();
            let (in_valid, out_ready) = (self.in_valid.val(), self.out_ready.val());
            let (in_ready, out_valid) = self._flags;
            if self.reset.val() {
                self._stages.iter_mut().for_each(|s| *s = None);
                self._queue.clear();
                self._used = 0;
                self._flags = (true, false);
            } else {
                // The stages shift every edge; stage 4 writes the queue.
                let take_in = in_valid && in_ready;
                let take_out = out_valid && out_ready;
                if take_out {
                    self._queue.pop_front();
                }
                // Headers written before this edge, less the one taken.
                let visible = !self._queue.is_empty();
                let st = &mut self._stages;
                if let Some(done) = st[STAGES - 2].take() {
                    self._queue.push_back(done);
                }
                for i in (1..STAGES - 1).rev() {
                    st[i] = st[i - 1].take();
                }
                st[0] = take_in.then(|| fields.clone());
                self._used = self._used + take_in as usize - take_out as usize;
                self._flags = (self._used != QUEUE, visible);
            }
        }
        (self.in_ready.next, self.out_valid.next) = self._flags;
        // The head registers' next values: the header after the head when
        // it is taken at this edge (as the Verilog, whatever the queue
        // holds; meaningful only when `out_valid` will be).
        let next = if self._flags.1 && self.out_ready.val() {
            self._queue.get(1)
        } else {
            self._queue.front()
        };
        let (nl, nn) = next.map_or((false, false), |fields| {
            let (_, hl, fl, pad, _, _) = Self::reference(fields);
            (fl <= K, hl < K && fl - hl - pad as usize != 0)
        });
        self.next_first_last.next = nl;
        self.next_first_need.next = nn;
        // Headers queued before this edge, less the head if taken now.
        self.next_out_valid.next = if self._flags.1 && self.out_ready.val() {
            self._queue.len() > 1
        } else {
            !self._queue.is_empty()
        };
        if let Some(fields) = self._queue.front() {
            let get =
                |name: &str| fields[Self::FIELDS.iter().position(|(n, _)| *n == name).unwrap()];
            self.is_vlan.next = get("vlan") != 0;
            self.is_ipv6.next = get("ipv6") != 0;
            let (bytes, hl, fl, pad, known, hp) = Self::reference(fields);
            let mut h = Bits::<HDR_BITS>::default();
            for (i, byte) in bytes.iter().enumerate() {
                for bit in 0..8 {
                    h = h.replace_bit(8 * i + bit, byte >> bit & 1 != 0);
                }
            }
            self.hdr.next = h;
            self.head_beat0.next = h.get_bits::<W>(0);
            self.hdr_len.next = (hl as u64).into();
            self.frame_len.next = (fl as u64).into();
            self.pad.next = (pad as u64).into();
            self.known.next = known;
            self.has_payload.next = hp;
            self.head_beats.next = ((hl / K) as u64).into();
            self.head_tail.next = ((hl % K) as u64).into();
            self.body_shift.next = ((K - hl % K) as u64).into();
            self.frame_beats.next = (fl.div_ceil(K) as u64).into();
            self.last_count.next = (((fl - 1) % K + 1) as u64).into();
            let pl = fl - hl - pad as usize;
            self.payload_beats.next = (pl.div_ceil(K) as u64).into();
            let plc = (pl.max(1) - 1) % K + 1;
            self.payload_last_count.next = (plc as u64).into();
            self.payload_last_keep.next =
                (0..plc).fold(Bits::<K>::default(), |k, lane| k.replace_bit(lane, true));
            self.fill.next = (MIN_FRAME_LEN.saturating_sub(fl) as u64).into();
            self.first_last.next = fl <= K;
            self.first_body.next = hl < K;
            self.first_more.next = pl != 0;
            self.first_ilast.next = pl != 0 && pl <= K;
            let gate = if hl < K && pl != 0 {
                if pl <= K {
                    plc
                } else {
                    K
                }
            } else {
                0
            };
            self.first_gate.next =
                (0..gate).fold(Bits::<K>::default(), |k, lane| k.replace_bit(lane, true));
            let idx = body_shifts(K)
                .iter()
                .position(|&s| s == K - hl % K)
                .unwrap();
            self.body_idx.next = (idx as u64).into();
        }
    }

    fn connect(&mut self) {
        self.in_ready.connect();
        self.out_valid.connect();
        self.hdr.connect();
        self.hdr_len.connect();
        self.frame_len.connect();
        self.pad.connect();
        self.known.connect();
        self.has_payload.connect();
        self.head_beats.connect();
        self.head_tail.connect();
        self.body_shift.connect();
        self.frame_beats.connect();
        self.last_count.connect();
        self.payload_beats.connect();
        self.payload_last_count.connect();
        self.payload_last_keep.connect();
        self.fill.connect();
        self.first_last.connect();
        self.first_body.connect();
        self.first_more.connect();
        self.first_ilast.connect();
        self.first_gate.connect();
        self.body_idx.connect();
        self.is_vlan.connect();
        self.is_ipv6.connect();
        self.head_beat0.connect();
        self.next_first_last.connect();
        self.next_first_need.connect();
        self.next_out_valid.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(Self::body())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_header_synthesizes() {
        let mut uut = TxHeader::<64, 8>::new();
        uut.connect_all();
        let v = generate_verilog(&uut);
        yosys_validate("tx_header", &v).unwrap();
    }

    #[test]
    fn patterns_cover_the_table() {
        let pats = ext_patterns();
        assert!(pats[0].is_empty());
        for row in &TABLE {
            assert!(pats.contains(&row.headers));
        }
    }
}
