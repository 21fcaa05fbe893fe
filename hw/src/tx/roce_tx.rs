//! RoCE v2 TX frame builder: a header descriptor and a payload stream in, a
//! complete wire frame out (Ethernet, optional 802.1Q, IPv4 with checksum or
//! IPv6, UDP, BTH, extension headers, payload, zero pad, ICRC, zero fill to
//! the 60-byte Ethernet minimum), one beat per cycle at W = 64..512.
//!
//! Pipeline:
//! 1. [`TxHeader`]: descriptor → header bytes and beat counts (5 stages,
//!    one descriptor per cycle).
//! 2. Front: header beats straight from the header window, then the payload
//!    realigned behind the header's tail (`{cur, prev} >> (K - tail)` bytes),
//!    then at most one flush beat. Its output register feeds both
//! 3. a 32-beat delay FIFO, and
//! 4. the ICRC path: the same beats with the Ethernet header dropped
//!    (`{cur, prev} >> E % K` bytes, `E` = 14 or 18), the variant fields set
//!    to ones, into [`Crc32`] started from the LRH stand-in state.
//! 5. Tail: passes beats from the FIFO and, on a frame's last beat, merges
//!    the ICRC (least significant byte first) behind the last byte, spilling
//!    into one extra beat when it does not fit, and pads short frames.
//! 6. An [`AxisRegister`] slice: `m_axis` comes from flip-flops.
//!
//! The payload stream carries one packet of `payload_len` bytes for every
//! descriptor whose opcode has payload and a non-zero length; none
//! otherwise. A packet that ends early or late, or arrives with `tuser`,
//! still yields a frame of the descriptor's length (missing bytes zero,
//! extra bytes dropped), sent with `tuser` set on its last beat so the MAC
//! aborts it, and `error_payload` pulses.

use crate::axis_register::AxisRegister;
use crate::crc32::{Crc32, LATE_RESULT_CAPACITY};
use crate::fifo::{FifoLane, SyncFifo};
use crate::gf2;
use crate::prim::CountKeep;
use crate::rx_prim::{funnel, funnel_verilog};
use crate::stream::{check_width, StreamIn, StreamOut};
use crate::tx_header::{body_shifts, header_lengths, TxHeader, HDR_BITS};
use roce_wire::ethernet;
use roce_wire::icrc::{self, LRH_PREFIX};
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

/// Width of the ICRC stream's beat index `cj`, which saturates at its top
/// value (every masked byte's beat is below it: checked in `RoceTx::new`).
pub const CJ_BITS: usize = 5;

/// Address bits of the delay FIFO (`dfifo` and its lanes).
const DELAY_ADDR_BITS: usize = 5;
type DelayFifo<const W: usize> = SyncFifo<Bits<W>, DELAY_ADDR_BITS, { DELAY_ADDR_BITS + 1 }>;
// The ICRC engine runs without its result credit (`Crc32::uncredited`): a
// frame's result is fed no earlier than its last beat enters `dfifo`, and
// taken when that beat leaves it, so no more results are queued or in
// flight than `dfifo` holds beats.
const _: () = assert!(DelayFifo::<8>::LATE_CAPACITY <= LATE_RESULT_CAPACITY);
/// The front starts a beat only while `dfifo`'s RAM held at most this many
/// words a cycle earlier (`ok_q`): that beat reaches the RAM two edges
/// later, after at most one more beat, so the RAM is never full when the
/// front's register holds a beat, and that register needs no handshake.
const ROOM_WORDS: u64 = (1 << DELAY_ADDR_BITS) - 3;

/// Beat `idx` of the header window: `hdr[idx*W +: W]`.
#[derive(LogicBlock, Default)]
pub struct HdrBeat<const W: usize> {
    pub hdr: Signal<In, Bits<HDR_BITS>>,
    pub idx: Signal<In, Bits<5>>,
    pub y: Signal<Out, Bits<W>>,
}

impl<const W: usize> Logic for HdrBeat<W> {
    fn update(&mut self) {
        let i = self.idx.val().index();
        let mut y = Bits::<W>::default();
        for b in 0..W {
            if i * W + b < HDR_BITS {
                y = y.replace_bit(b, self.hdr.val().get_bit(i * W + b));
            }
        }
        self.y.next = y;
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "wire [{}:0] window = hdr >> (idx * {W});\nalways @(*) y = window[{}:0];\n",
            HDR_BITS - 1,
            W - 1
        ))
    }
}

/// The header window less its first beat: `hdr >> W` (zeros shifted in).
#[derive(LogicBlock, Default)]
pub struct HdrShift<const W: usize> {
    pub hdr: Signal<In, Bits<HDR_BITS>>,
    pub y: Signal<Out, Bits<HDR_BITS>>,
}

impl<const W: usize> Logic for HdrShift<W> {
    fn update(&mut self) {
        let mut y = Bits::<HDR_BITS>::default();
        for b in W..HDR_BITS {
            y = y.replace_bit(b - W, self.hdr.val().get_bit(b));
        }
        self.y.next = y;
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!("always @(*) y = hdr >> {W};\n"))
    }
}

/// Lanes whose `keep` bit is clear read as zero.
#[derive(LogicBlock, Default)]
pub struct KeepMask<const W: usize, const K: usize> {
    pub d: Signal<In, Bits<W>>,
    pub keep: Signal<In, Bits<K>>,
    pub y: Signal<Out, Bits<W>>,
}

impl<const W: usize, const K: usize> Logic for KeepMask<W, K> {
    fn update(&mut self) {
        let mut y = self.d.val();
        for lane in 0..K {
            if !self.keep.val().get_bit(lane) {
                for bit in 0..8 {
                    y = y.replace_bit(8 * lane + bit, false);
                }
            }
        }
        self.y.next = y;
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        for lane in 0..K {
            let (hi, lo) = (8 * lane + 7, 8 * lane);
            v.push_str(&format!(
                "always @(*) y[{hi}:{lo}] = keep[{lane}] ? d[{hi}:{lo}] : 8'h00;\n"
            ));
        }
        Verilog::Custom(v)
    }
}

/// The front's beat: bytes `s .. s + K` of `prev ++ cur` for the shift `s =
/// shifts[idx]` (the payload moved behind the header's tail), ORed with the
/// header bytes `hdr`. `idx` is a dense index (`body_idx`), so the choice is
/// a multiplexer on its few low bits, not a compare of a shift count.
#[derive(LogicBlock)]
pub struct FrontMerge<const W: usize, const K: usize> {
    pub prev: Signal<In, Bits<W>>,
    pub cur: Signal<In, Bits<W>>,
    pub idx: Signal<In, Bits<4>>,
    pub hdr: Signal<In, Bits<W>>,
    pub y: Signal<Out, Bits<W>>,
    _shifts: Vec<usize>,
}

impl<const W: usize, const K: usize> FrontMerge<W, K> {
    /// `shifts`: the shifts `idx` indexes, each 1..K-1.
    pub fn new(shifts: &[usize]) -> Self {
        assert!(!shifts.is_empty() && shifts.len() <= 16);
        assert!(shifts.iter().all(|&s| (1..K).contains(&s)));
        Self {
            prev: Default::default(),
            cur: Default::default(),
            idx: Default::default(),
            hdr: Default::default(),
            y: Default::default(),
            _shifts: shifts.to_vec(),
        }
    }

    /// Select bits: enough for every index (unused codes repeat the last).
    fn bits(&self) -> usize {
        (usize::BITS - (self._shifts.len() - 1).leading_zeros()) as usize
    }
}

impl<const W: usize, const K: usize> Logic for FrontMerge<W, K> {
    fn update(&mut self) {
        let code = self.idx.val().index() & ((1 << self.bits()) - 1);
        let s = self._shifts[code.min(self._shifts.len() - 1)];
        self.y.next = self.hdr.val() | funnel(self.prev.val(), self.cur.val(), s);
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        let moved = |s: usize| funnel_verilog(W, s);
        let bits = self.bits();
        let mut v = format!("reg [{}:0] body;\nalways @(*) begin\n", W - 1);
        if bits == 0 {
            v.push_str(&format!("    body = {};\n", moved(self._shifts[0])));
        } else {
            v.push_str(&format!("    case (idx[{}:0])\n", bits - 1));
            for code in 0..1usize << bits {
                let s = self._shifts[code.min(self._shifts.len() - 1)];
                v.push_str(&format!("    {bits}'d{code}: body = {};\n", moved(s)));
            }
            v.push_str("    endcase\n");
        }
        v.push_str("    y = body | hdr;\nend\n");
        Verilog::Custom(v)
    }
}

/// The ICRC path's aligner: bytes `s .. s + K` of `prev ++ cur` for the
/// one of two shifts (`E % K` of the two Ethernet header lengths) `tag`
/// picks: a 2:1 multiplexer per bit on a flip-flop select, not a compare
/// of a shift count.
#[derive(LogicBlock)]
pub struct EthDrop<const W: usize, const K: usize> {
    pub prev: Signal<In, Bits<W>>,
    pub cur: Signal<In, Bits<W>>,
    pub tag: Signal<In, Bit>,
    pub y: Signal<Out, Bits<W>>,
    _plain: usize,
    _tagged: usize,
}

impl<const W: usize, const K: usize> EthDrop<W, K> {
    /// `plain`, `tagged`: the shifts for `tag` low and high, each 1..K-1.
    pub fn new(plain: usize, tagged: usize) -> Self {
        assert!((1..K).contains(&plain) && (1..K).contains(&tagged));
        Self {
            prev: Default::default(),
            cur: Default::default(),
            tag: Default::default(),
            y: Default::default(),
            _plain: plain,
            _tagged: tagged,
        }
    }
}

impl<const W: usize, const K: usize> Logic for EthDrop<W, K> {
    fn update(&mut self) {
        let s = if self.tag.val() {
            self._tagged
        } else {
            self._plain
        };
        self.y.next = funnel(self.prev.val(), self.cur.val(), s);
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "always @(*) y = tag ? {} : {};\n",
            funnel_verilog(W, self._tagged),
            funnel_verilog(W, self._plain)
        ))
    }
}

/// ORs the ICRC masks into ICRC-stream beat `j` (IP header at byte 0).
/// The masked bytes all lie in the first beats, so `j` is a saturating
/// index of [`CJ_BITS`] bits (its compares are on those few bits).
#[derive(LogicBlock, Default)]
pub struct CrcMask<const W: usize, const K: usize> {
    pub d: Signal<In, Bits<W>>,
    pub j: Signal<In, Bits<CJ_BITS>>,
    pub v6: Signal<In, Bit>,
    pub y: Signal<Out, Bits<W>>,
}

impl<const W: usize, const K: usize> Logic for CrcMask<W, K> {
    fn update(&mut self) {
        let j = self.j.val().index();
        let mut y = self.d.val();
        for &(off, mask) in icrc::masked_bytes(self.v6.val()) {
            if off / K == j {
                for bit in 0..8 {
                    if mask >> bit & 1 != 0 {
                        y = y.replace_bit(8 * (off % K) + bit, true);
                    }
                }
            }
        }
        self.y.next = y;
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut lanes: Vec<Vec<String>> = vec![Vec::new(); K];
        for v6 in [false, true] {
            for &(off, mask) in icrc::masked_bytes(v6) {
                lanes[off % K].push(format!(
                    "((j == {CJ_BITS}'d{}) & {}v6 ? 8'h{mask:02x} : 8'h00)",
                    off / K,
                    if v6 { "" } else { "!" }
                ));
            }
        }
        let mut v = String::new();
        for (lane, terms) in lanes.iter().enumerate() {
            let (hi, lo) = (8 * lane + 7, 8 * lane);
            if terms.is_empty() {
                v.push_str(&format!("always @(*) y[{hi}:{lo}] = d[{hi}:{lo}];\n"));
            } else {
                v.push_str(&format!(
                    "always @(*) y[{hi}:{lo}] = d[{hi}:{lo}] | {};\n",
                    terms.join(" | ")
                ));
            }
        }
        Verilog::Custom(v)
    }
}

/// Merges the ICRC behind the `n` valid bytes of a frame's last beat `d`:
/// `y0`, and `y1` for the bytes that do not fit (the front decides the
/// counts: `fq_spill`, `fq_c0`, `fq_c1`). `n` (1..=K) comes as its lane
/// mask `t` (`t[l] = l < n`), so "`n` is `m`" is `t[m-1] & !t[m]`: no
/// count compare.
#[derive(LogicBlock, Default)]
pub struct IcrcMerge<const W: usize, const K: usize> {
    pub d: Signal<In, Bits<W>>,
    pub t: Signal<In, Bits<K>>,
    pub crc: Signal<In, Bits<32>>,
    pub y0: Signal<Out, Bits<W>>,
    pub y1: Signal<Out, Bits<W>>,
}

impl<const W: usize, const K: usize> Logic for IcrcMerge<W, K> {
    fn update(&mut self) {
        let n = (0..K).filter(|&l| self.t.val().get_bit(l)).count();
        let crc = self.crc.val().index() as u32;
        let byte_at = |i: usize| -> u8 {
            if i < n {
                (self.d.val().get_bits::<8>(8 * i).index()) as u8
            } else if i < n + 4 {
                (crc >> (8 * (i - n))) as u8
            } else {
                0
            }
        };
        let mut y0 = Bits::<W>::default();
        let mut y1 = Bits::<W>::default();
        for lane in 0..K {
            for bit in 0..8 {
                y0 = y0.replace_bit(8 * lane + bit, byte_at(lane) >> bit & 1 != 0);
                y1 = y1.replace_bit(8 * lane + bit, byte_at(K + lane) >> bit & 1 != 0);
            }
        }
        self.y0.next = y0;
        self.y1.next = y1;
    }
    fn connect(&mut self) {
        self.y0.connect();
        self.y1.connect();
    }
    fn hdl(&self) -> Verilog {
        // Lane `l` of y0 holds data below `n`, else ICRC byte `l - n` when
        // that is 0..=3: an AND-OR of four bytes with "`n` is `m`" flags
        // from the mask, no shifter. Lane `l` of y1 is byte `K + l` of the
        // merged pair.
        let is = |m: usize| -> String {
            if m == K {
                format!("t[{}]", K - 1)
            } else {
                format!("(t[{}] & !t[{m}])", m - 1)
            }
        };
        let pick = |at: usize| -> String {
            let terms: Vec<String> = (0..4)
                .filter_map(|i| {
                    at.checked_sub(i)
                        .filter(|&n| (1..=K).contains(&n))
                        .map(|n| (i, n))
                })
                .map(|(i, n)| format!("({{8{{{}}}}} & crc[{}:{}])", is(n), 8 * i + 7, 8 * i))
                .collect();
            if terms.is_empty() {
                "8'h00".to_string()
            } else {
                terms.join(" | ")
            }
        };
        let mut v = String::new();
        for lane in 0..K {
            let (hi, lo) = (8 * lane + 7, 8 * lane);
            v.push_str(&format!(
                "always @(*) y0[{hi}:{lo}] = t[{lane}] ? d[{hi}:{lo}] : ({});\n\
                 always @(*) y1[{hi}:{lo}] = {};\n",
                pick(lane),
                pick(K + lane)
            ));
        }
        Verilog::Custom(v)
    }
}

/// The TX frame builder (see the module documentation).
#[derive(LogicBlock)]
pub struct RoceTx<const W: usize, const K: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high: drops everything in flight.
    pub reset: Signal<In, Bit>,
    /// A descriptor is on the `s_hdr_*` ports.
    pub s_hdr_valid: Signal<In, Bit>,
    pub s_hdr_ready: Signal<Out, Bit>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_dst_mac: Signal<In, Bits<48>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_src_mac: Signal<In, Bits<48>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_vlan: Signal<In, Bits<1>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_vlan_tci: Signal<In, Bits<16>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_ipv6: Signal<In, Bits<1>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_tos: Signal<In, Bits<8>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_ttl: Signal<In, Bits<8>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_flow_label: Signal<In, Bits<20>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_ip_ident: Signal<In, Bits<16>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_ip_df: Signal<In, Bits<1>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_ip_src: Signal<In, Bits<128>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_ip_dst: Signal<In, Bits<128>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_udp_src_port: Signal<In, Bits<16>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_opcode: Signal<In, Bits<8>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_se: Signal<In, Bits<1>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_mig: Signal<In, Bits<1>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_pkey: Signal<In, Bits<16>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_fecn: Signal<In, Bits<1>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_becn: Signal<In, Bits<1>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_dest_qp: Signal<In, Bits<24>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_ack_req: Signal<In, Bits<1>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_psn: Signal<In, Bits<24>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_payload_len: Signal<In, Bits<16>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_reth_va: Signal<In, Bits<64>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_reth_rkey: Signal<In, Bits<32>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_reth_dma_len: Signal<In, Bits<32>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_aeth_syndrome: Signal<In, Bits<8>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_aeth_msn: Signal<In, Bits<24>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_immdt: Signal<In, Bits<32>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_ieth: Signal<In, Bits<32>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_atomic_va: Signal<In, Bits<64>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_atomic_rkey: Signal<In, Bits<32>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_atomic_swap_add: Signal<In, Bits<64>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_atomic_compare: Signal<In, Bits<64>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_atomic_ack_data: Signal<In, Bits<64>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_deth_qkey: Signal<In, Bits<32>>,
    /// Descriptor field (see [`TxHeader`]).
    pub s_hdr_deth_src_qp: Signal<In, Bits<24>>,
    /// Payload bytes of the descriptors with payload, one packet each.
    pub s_payload: StreamIn<W, K>,
    /// Wire frames; `tuser` on the last beat marks a frame whose payload
    /// packet was short, long or flagged.
    pub m_axis: StreamOut<W, K>,
    /// Pulses once per frame sent with `tuser` set.
    pub error_payload: Signal<Out, Bit>,
    // Header assembly and the front.
    hb: TxHeader<W, K>,
    /// The head's header window from beat 1 on, as a shift register: it
    /// loads the head (less beat 0) on every edge of a frame's first beat
    /// and moves down a beat on the edge after each beat taken (`fq_valid`,
    /// which is `go` an edge late), so its beat 0 is the window's beat
    /// `ob1 - fq_valid` (zero past the header).
    hs: DFF<Bits<HDR_BITS>>,
    hs_in: HdrShift<W>,
    hs_next: HdrShift<W>,
    /// Beats 0 and 1 of `hs`, and beat 1 of the head itself.
    hs_0: HdrBeat<W>,
    hs_1: HdrBeat<W>,
    hbeat_1: HdrBeat<W>,
    /// The header window's beat for the next front beat, loaded a beat
    /// ahead (a choice of three registers' beats: no beat multiplexer), and
    /// `ob + 1` as its own register (saturating: only compared with small
    /// counts).
    hbq: DFF<Bits<W>>,
    ob1: DFF<Bits<5>>,
    hsel: Signal<Local, Bits<W>>,
    fshift: FrontMerge<W, K>,
    kmask: KeepMask<W, K>,
    /// `tkeep` differs from the last payload beat's mask, from all lanes;
    /// from the one this beat must have (all lanes but on the last).
    keep_short: Signal<Local, Bit>,
    keep_part: Signal<Local, Bit>,
    keep_bad: Signal<Local, Bit>,
    /// Lanes this beat takes from the payload (none when it reads no
    /// payload beat): from registers only, so the payload's `tkeep` is one
    /// LUT from the lane gates.
    lane_en: Signal<Local, Bits<K>>,
    /// The front's beat index within the frame, and the payload beat
    /// index, each plus 2 (what the last-beat compares need: no adder in
    /// front of them).
    ob: DFF<Bits<14>>,
    ib: DFF<Bits<14>>,
    /// The next beat is a frame's first: the position flags below come from
    /// the header assembly's registered `first_*` outputs, else from these
    /// registers, computed a beat ahead.
    st: DFF<Bit>,
    /// The next beat is its frame's last (`last_now`), on every beat. On a
    /// frame's first it is clear where no header ends in beat 0 (not
    /// `one_beat`); elsewhere it holds the header assembly's `first_last`,
    /// loaded from its next value (`next_first_last`) whenever `st` will
    /// be set, so `go`'s handshake into `out_ready` starts from flip-flops.
    last_q: DFF<Bit>,
    body_q: DFF<Bit>,
    /// The next beat is the first body beat (`body_q`'s new part).
    fb_n: Signal<Local, Bit>,
    more_q: DFF<Bit>,
    ilast_q: DFF<Bit>,
    /// The next beat reads a payload beat (`need_in`), decided a beat ahead
    /// (on a frame's first beat from `next_first_need`, like `last_q`, and
    /// clear where no header ends in beat 0: not `one_beat`), so `need_in`
    /// is a flip-flop.
    need_q: DFF<Bit>,
    more_in: Signal<Local, Bit>,
    ib_last: Signal<Local, Bit>,
    prev: DFF<Bits<W>>,
    err: DFF<Bit>,
    in_done: DFF<Bit>,
    late: DFF<Bit>,
    drain: DFF<Bit>,
    err_pulse: DFF<Bit>,
    /// `error_payload`'s two sources: the flags known with the frame's last
    /// beat, and its `tkeep` check (registered beside it).
    ep_a: DFF<Bit>,
    ep_k: DFF<Bit>,
    /// The previous beat's `tkeep` check failed and it was not its frame's
    /// last (the frame goes on flagged).
    kb_same: Signal<Local, Bit>,
    in_body: Signal<Local, Bit>,
    need_in: Signal<Local, Bit>,
    last_now: Signal<Local, Bit>,
    bad_now: Signal<Local, Bit>,
    go: Signal<Local, Bit>,
    /// `go`'s part that waits on no payload beat, registered from the next
    /// values of its terms: a header is at the assembly's head
    /// (`hb.out_valid`), the front is not draining, and `dfifo`'s RAM had
    /// room (`ROOM_WORDS`) a cycle ago. So `go` is one LUT of flip-flops
    /// and `s_payload.tvalid`, and the paths into its fan-out start there.
    ok_q: DFF<Bit>,
    room_top: Constant<Bits<{ DELAY_ADDR_BITS + 1 }>>,
    // Front output register.
    fq_valid: DFF<Bit>,
    fq_data: DFF<Bits<W>>,
    fq_count: DFF<Bits<8>>,
    fq_last: DFF<Bit>,
    fq_user: DFF<Bit>,
    /// The beat was a payload packet's last and its `tkeep` was wrong.
    fq_kbad: DFF<Bit>,
    /// ICRC-path controls of the beat, decided by the front: the aligner's
    /// lane offset, the beat is past / is the last Ethernet-only beat, it
    /// ends the ICRC stream (with the `fq_ckeep` lanes of the aligner's
    /// beat, a mask registered from the count so no compare sits in front
    /// of the CRC's input register), or
    /// it leaves `fq_fc` bytes for a flush beat.
    fq_tag: DFF<Bit>,
    fq_cn: DFF<Bit>,
    fq_ca: DFF<Bit>,
    fq_ctl: DFF<Bit>,
    fq_ckeep: DFF<Bits<K>>,
    /// Masks from the counts: the ICRC keep count's (`K - E % K +
    /// last_count`, as compares of `last_count` with constants, one set per
    /// Ethernet header length) into `r_ck`, so the front picks a mask, not
    /// a count; the flush beat's into `flush_keep`.
    ck_plain: CountKeep<K>,
    ck_tagged: CountKeep<K>,
    fc_keep: CountKeep<K>,
    fq_fl: DFF<Bit>,
    fq_fc: DFF<Bits<8>>,
    fq_v6: DFF<Bit>,
    /// The tail's counts for a last beat: the ICRC spills into an extra
    /// beat; bytes of the last beat out and of the extra beat (fill included).
    fq_spill: DFF<Bit>,
    fq_c0: DFF<Bits<8>>,
    fq_c1: DFF<Bits<8>>,
    t_n4: Signal<Local, Bits<8>>,
    t_spill: Signal<Local, Bit>,
    /// The frame's tail counts from the header assembly's outputs
    /// (`k_*`), registered on every edge (`r_*`, no enable: the head
    /// registers hold still during a frame, so they are right from the
    /// frame's second beat), and the pick (`u_*`): the registers, but on
    /// the first beat of a frame that can be one beat long. The ICRC keep
    /// count is registered as its lane mask (`r_ck`, `u_ck`).
    k_c0: Signal<Local, Bits<8>>,
    k_c1: Signal<Local, Bits<8>>,
    k_ck: Signal<Local, Bits<K>>,
    k_fc: Signal<Local, Bits<8>>,
    r_ends: DFF<Bit>,
    r_spill: DFF<Bit>,
    r_c0: DFF<Bits<8>>,
    r_c1: DFF<Bits<8>>,
    r_ck: DFF<Bits<K>>,
    r_fc: DFF<Bits<8>>,
    u_ends: Signal<Local, Bit>,
    u_spill: Signal<Local, Bit>,
    u_c0: Signal<Local, Bits<8>>,
    u_c1: Signal<Local, Bits<8>>,
    u_ck: Signal<Local, Bits<K>>,
    u_fc: Signal<Local, Bits<8>>,
    /// A frame can be one beat long, and its first beat can take payload:
    /// the shortest header fits in a beat (no header length is a multiple
    /// of K). Clear at W=64 to 256: every header is at least 54 bytes.
    one_beat: Constant<Bit>,
    // ICRC path.
    cshift: EthDrop<W, K>,
    cmask: CrcMask<W, K>,
    crc: Crc32<W, K>,
    prev_c: DFF<Bits<W>>,
    cj: DFF<Bits<CJ_BITS>>,
    /// `cj + 1`, saturating.
    cj_inc: Signal<Local, Bits<CJ_BITS>>,
    cj_top: Constant<Bits<CJ_BITS>>,
    flush: DFF<Bit>,
    flush_keep: DFF<Bits<K>>,
    flush_j: DFF<Bits<CJ_BITS>>,
    flush_v6: DFF<Bit>,
    flush_tag: DFF<Bit>,
    /// The CRC input's controls, the flush's or the front's (`flush`
    /// picks), registered from their next values so the aligner's select
    /// and `CrcMask`'s compares start at flip-flops.
    ci_tag: DFF<Bit>,
    ci_j: DFF<Bits<CJ_BITS>>,
    ci_v6: DFF<Bit>,
    c_a: Signal<Local, Bits<5>>,
    c_e: Signal<Local, Bits<8>>,
    c_normal: Signal<Local, Bit>,
    c_ends: Signal<Local, Bit>,
    // Delay FIFO and tail.
    /// The beats; its pointers and flags also move `mfifo`, `tfifo` and
    /// `kfifo`, which are written and popped with it.
    dfifo: DelayFifo<W>,
    /// Beside `dfifo`: the beat's count, last, error, spill and extra count.
    mfifo: FifoLane<Bits<32>, DELAY_ADDR_BITS>,
    /// Beside `dfifo`: each beat's byte count as a lane mask (the merge's).
    tfifo: FifoLane<Bits<K>, DELAY_ADDR_BITS>,
    tcount: CountKeep<K>,
    /// Beside `dfifo`: the last beat's output count (`fq_c0`) as a lane
    /// mask, so the output `tkeep` is a pick of masks, no compare.
    kfifo: FifoLane<Bits<K>, DELAY_ADDR_BITS>,
    k0count: CountKeep<K>,
    /// The extra beat's count (`mfifo`'s top byte) as its lane mask.
    xkeep: CountKeep<K>,
    merge: IcrcMerge<W, K>,
    extra: DFF<Bit>,
    extra_data: DFF<Bits<W>>,
    extra_keep: DFF<Bits<K>>,
    extra_user: DFF<Bit>,
    oreg: AxisRegister<W, K>,
    m_last: Signal<Local, Bit>,
    m_user: Signal<Local, Bit>,
    // Constants.
    lanes: Constant<Bits<8>>,
    four: Constant<Bits<8>>,
    spill_above: Constant<Bits<8>>,
    lane_mask: Constant<Bits<8>>,
    all_keep: Constant<Bits<K>>,
    /// The Ethernet header's whole beats, plus 1 (compared with `ob1`).
    a_plain: Constant<Bits<5>>,
    a_tagged: Constant<Bits<5>>,
    e_plain: Constant<Bits<8>>,
    e_tagged: Constant<Bits<8>>,
    icrc_init: Constant<Bits<32>>,
}

impl<const W: usize, const K: usize> RoceTx<W, K> {
    pub fn new() -> Self {
        check_width("RoceTx", W, K);
        let (eu, et) = (ethernet::HEADER_LEN, ethernet::TAGGED_HEADER_LEN);
        assert!(
            eu % K != 0 && et % K != 0,
            "the ICRC aligner assumes E % K != 0"
        );
        for v6 in [false, true] {
            assert!(
                icrc::masked_bytes(v6)
                    .iter()
                    .all(|&(off, _)| off / K + 1 < 1 << CJ_BITS),
                "a masked ICRC byte's beat reaches the saturating cj"
            );
        }
        let icrc_init = gf2::update(gf2::INIT, &LRH_PREFIX) as u64;
        RoceTx {
            clock: Default::default(),
            reset: Default::default(),
            s_hdr_valid: Default::default(),
            s_hdr_ready: Default::default(),
            s_hdr_dst_mac: Default::default(),
            s_hdr_src_mac: Default::default(),
            s_hdr_vlan: Default::default(),
            s_hdr_vlan_tci: Default::default(),
            s_hdr_ipv6: Default::default(),
            s_hdr_tos: Default::default(),
            s_hdr_ttl: Default::default(),
            s_hdr_flow_label: Default::default(),
            s_hdr_ip_ident: Default::default(),
            s_hdr_ip_df: Default::default(),
            s_hdr_ip_src: Default::default(),
            s_hdr_ip_dst: Default::default(),
            s_hdr_udp_src_port: Default::default(),
            s_hdr_opcode: Default::default(),
            s_hdr_se: Default::default(),
            s_hdr_mig: Default::default(),
            s_hdr_pkey: Default::default(),
            s_hdr_fecn: Default::default(),
            s_hdr_becn: Default::default(),
            s_hdr_dest_qp: Default::default(),
            s_hdr_ack_req: Default::default(),
            s_hdr_psn: Default::default(),
            s_hdr_payload_len: Default::default(),
            s_hdr_reth_va: Default::default(),
            s_hdr_reth_rkey: Default::default(),
            s_hdr_reth_dma_len: Default::default(),
            s_hdr_aeth_syndrome: Default::default(),
            s_hdr_aeth_msn: Default::default(),
            s_hdr_immdt: Default::default(),
            s_hdr_ieth: Default::default(),
            s_hdr_atomic_va: Default::default(),
            s_hdr_atomic_rkey: Default::default(),
            s_hdr_atomic_swap_add: Default::default(),
            s_hdr_atomic_compare: Default::default(),
            s_hdr_atomic_ack_data: Default::default(),
            s_hdr_deth_qkey: Default::default(),
            s_hdr_deth_src_qp: Default::default(),
            s_payload: Default::default(),
            m_axis: Default::default(),
            error_payload: Default::default(),
            hb: TxHeader::new(),
            hs: Default::default(),
            hs_in: Default::default(),
            hs_next: Default::default(),
            hs_0: Default::default(),
            hs_1: Default::default(),
            hbeat_1: Default::default(),
            hbq: Default::default(),
            ob1: Default::default(),
            hsel: Default::default(),
            fshift: FrontMerge::new(&body_shifts(K)),
            kmask: Default::default(),
            keep_short: Default::default(),
            keep_part: Default::default(),
            keep_bad: Default::default(),
            lane_en: Default::default(),
            ob: Default::default(),
            ib: Default::default(),
            st: Default::default(),
            last_q: Default::default(),
            body_q: Default::default(),
            fb_n: Default::default(),
            more_q: Default::default(),
            ilast_q: Default::default(),
            need_q: Default::default(),
            more_in: Default::default(),
            ib_last: Default::default(),
            prev: Default::default(),
            err: Default::default(),
            in_done: Default::default(),
            late: Default::default(),
            drain: Default::default(),
            err_pulse: Default::default(),
            ep_a: Default::default(),
            ep_k: Default::default(),
            kb_same: Default::default(),
            in_body: Default::default(),
            need_in: Default::default(),
            last_now: Default::default(),
            bad_now: Default::default(),
            go: Default::default(),
            ok_q: Default::default(),
            room_top: Constant::new(ROOM_WORDS.into()),
            fq_valid: Default::default(),
            fq_data: Default::default(),
            fq_count: Default::default(),
            fq_last: Default::default(),
            fq_user: Default::default(),
            fq_kbad: Default::default(),
            fq_tag: Default::default(),
            fq_cn: Default::default(),
            fq_ca: Default::default(),
            fq_ctl: Default::default(),
            fq_ckeep: Default::default(),
            ck_plain: CountKeep::new(K - eu % K),
            ck_tagged: CountKeep::new(K - et % K),
            fc_keep: Default::default(),
            fq_fl: Default::default(),
            fq_fc: Default::default(),
            fq_v6: Default::default(),
            fq_spill: Default::default(),
            fq_c0: Default::default(),
            fq_c1: Default::default(),
            t_n4: Default::default(),
            t_spill: Default::default(),
            k_c0: Default::default(),
            k_c1: Default::default(),
            k_ck: Default::default(),
            k_fc: Default::default(),
            r_ends: Default::default(),
            r_spill: Default::default(),
            r_c0: Default::default(),
            r_c1: Default::default(),
            r_ck: Default::default(),
            r_fc: Default::default(),
            u_ends: Default::default(),
            u_spill: Default::default(),
            u_c0: Default::default(),
            u_c1: Default::default(),
            u_ck: Default::default(),
            u_fc: Default::default(),
            one_beat: Constant::new(header_lengths()[0] <= K),
            cshift: EthDrop::new(eu % K, et % K),
            cmask: Default::default(),
            crc: Crc32::new_split().uncredited().late_pop(),
            prev_c: Default::default(),
            cj: Default::default(),
            cj_inc: Default::default(),
            cj_top: Constant::new(((1u64 << CJ_BITS) - 1).into()),
            flush: Default::default(),
            flush_keep: Default::default(),
            flush_j: Default::default(),
            flush_v6: Default::default(),
            flush_tag: Default::default(),
            ci_tag: Default::default(),
            ci_j: Default::default(),
            ci_v6: Default::default(),
            c_a: Default::default(),
            c_e: Default::default(),
            c_normal: Default::default(),
            c_ends: Default::default(),
            dfifo: SyncFifo::new().late_read(),
            mfifo: FifoLane::new(),
            tfifo: FifoLane::new(),
            tcount: Default::default(),
            kfifo: FifoLane::new(),
            k0count: Default::default(),
            xkeep: Default::default(),
            merge: Default::default(),
            extra: Default::default(),
            extra_data: Default::default(),
            extra_keep: Default::default(),
            extra_user: Default::default(),
            oreg: AxisRegister::new(),
            m_last: Default::default(),
            m_user: Default::default(),
            lanes: Constant::new((K as u64).into()),
            four: Constant::new(4u64.into()),
            spill_above: Constant::new(((K - 4) as u64).into()),
            lane_mask: Constant::new(((K - 1) as u64).into()),
            all_keep: Constant::new(!Bits::<K>::default()),
            a_plain: Constant::new(((eu / K + 1) as u64).into()),
            a_tagged: Constant::new(((et / K + 1) as u64).into()),
            e_plain: Constant::new(((eu % K) as u64).into()),
            e_tagged: Constant::new(((et % K) as u64).into()),
            icrc_init: Constant::new(icrc_init.into()),
        }
    }
}

impl<const W: usize, const K: usize> Default for RoceTx<W, K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const K: usize> Logic for RoceTx<W, K> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, r_ends, r_spill, r_c0, r_c1, r_ck, r_fc, hs, hbq, ob1, ob, ib, st, last_q,
            body_q, more_q, ilast_q, need_q, prev, err, in_done, late, drain, err_pulse, ep_a,
            ep_k, ok_q, fq_valid, fq_data, fq_count, fq_last, fq_user, fq_kbad, fq_tag, fq_cn,
            fq_ca, fq_ctl, fq_ckeep, fq_fl, fq_fc, fq_v6, fq_spill, fq_c0, fq_c1, prev_c, cj,
            flush, flush_keep, flush_j, flush_v6, flush_tag, ci_tag, ci_j, ci_v6, extra,
            extra_data, extra_keep, extra_user
        );
        clock!(self, clock, hb, crc, dfifo, mfifo, tfifo, kfifo, oreg);
        self.oreg.reset.next = self.reset.val();
        self.hb.reset.next = self.reset.val();
        self.crc.reset.next = self.reset.val();
        self.dfifo.reset.next = self.reset.val();
        // Descriptor ports into the header assembly.
        self.hb.in_valid.next = self.s_hdr_valid.val();
        self.s_hdr_ready.next = self.hb.in_ready.val();
        self.hb.dst_mac.next = self.s_hdr_dst_mac.val();
        self.hb.src_mac.next = self.s_hdr_src_mac.val();
        self.hb.vlan.next = self.s_hdr_vlan.val();
        self.hb.vlan_tci.next = self.s_hdr_vlan_tci.val();
        self.hb.ipv6.next = self.s_hdr_ipv6.val();
        self.hb.tos.next = self.s_hdr_tos.val();
        self.hb.ttl.next = self.s_hdr_ttl.val();
        self.hb.flow_label.next = self.s_hdr_flow_label.val();
        self.hb.ip_ident.next = self.s_hdr_ip_ident.val();
        self.hb.ip_df.next = self.s_hdr_ip_df.val();
        self.hb.ip_src.next = self.s_hdr_ip_src.val();
        self.hb.ip_dst.next = self.s_hdr_ip_dst.val();
        self.hb.udp_src_port.next = self.s_hdr_udp_src_port.val();
        self.hb.opcode.next = self.s_hdr_opcode.val();
        self.hb.se.next = self.s_hdr_se.val();
        self.hb.mig.next = self.s_hdr_mig.val();
        self.hb.pkey.next = self.s_hdr_pkey.val();
        self.hb.fecn.next = self.s_hdr_fecn.val();
        self.hb.becn.next = self.s_hdr_becn.val();
        self.hb.dest_qp.next = self.s_hdr_dest_qp.val();
        self.hb.ack_req.next = self.s_hdr_ack_req.val();
        self.hb.psn.next = self.s_hdr_psn.val();
        self.hb.payload_len.next = self.s_hdr_payload_len.val();
        self.hb.reth_va.next = self.s_hdr_reth_va.val();
        self.hb.reth_rkey.next = self.s_hdr_reth_rkey.val();
        self.hb.reth_dma_len.next = self.s_hdr_reth_dma_len.val();
        self.hb.aeth_syndrome.next = self.s_hdr_aeth_syndrome.val();
        self.hb.aeth_msn.next = self.s_hdr_aeth_msn.val();
        self.hb.immdt.next = self.s_hdr_immdt.val();
        self.hb.ieth.next = self.s_hdr_ieth.val();
        self.hb.atomic_va.next = self.s_hdr_atomic_va.val();
        self.hb.atomic_rkey.next = self.s_hdr_atomic_rkey.val();
        self.hb.atomic_swap_add.next = self.s_hdr_atomic_swap_add.val();
        self.hb.atomic_compare.next = self.s_hdr_atomic_compare.val();
        self.hb.atomic_ack_data.next = self.s_hdr_atomic_ack_data.val();
        self.hb.deth_qkey.next = self.s_hdr_deth_qkey.val();
        self.hb.deth_src_qp.next = self.s_hdr_deth_src_qp.val();

        // ---- Front: header beats, then payload realigned behind them.
        // The Ethernet header's beats and lane offset (the ICRC path drops it),
        // and whether the frame's last beat holds more than that offset (its
        // ICRC-stream bytes then end in a flush beat).
        if self.hb.is_vlan.val() {
            self.c_a.next = self.a_tagged.val();
            self.c_e.next = self.e_tagged.val();
        } else {
            self.c_a.next = self.a_plain.val();
            self.c_e.next = self.e_plain.val();
        }
        self.c_ends.next = bit_cast::<8, 7>(self.hb.last_count.val()) > self.c_e.val();
        // The tail's counts for the frame's last beat: the ICRC's four bytes
        // follow its `last_count` bytes, spilling into an extra beat past K.
        // One add (`4 + fill` is `fill` with bit 2 set, as fill <= 2), the
        // spill a compare of `last_count` itself; the extra beat's count is
        // the sum less K, i.e. its low bits (it is below 2K).
        self.t_n4.next = bit_cast::<8, 7>(self.hb.last_count.val())
            + (bit_cast::<8, 2>(self.hb.fill.val()) | self.four.val());
        self.t_spill.next = bit_cast::<8, 7>(self.hb.last_count.val()) > self.spill_above.val();
        if self.t_spill.val() {
            self.k_c0.next = self.lanes.val();
            self.k_c1.next = self.t_n4.val() & self.lane_mask.val();
        } else {
            self.k_c0.next = self.t_n4.val();
            self.k_c1.next = 0.into();
        }
        self.ck_plain.c.next = bit_cast::<8, 7>(self.hb.last_count.val());
        self.ck_tagged.c.next = bit_cast::<8, 7>(self.hb.last_count.val());
        if self.hb.is_vlan.val() {
            self.k_ck.next = self.ck_tagged.keep.val();
        } else {
            self.k_ck.next = self.ck_plain.keep.val();
        }
        self.k_fc.next = bit_cast::<8, 7>(self.hb.last_count.val()) - self.c_e.val();
        self.r_ends.d.next = self.c_ends.val();
        self.r_spill.d.next = self.t_spill.val();
        self.r_c0.d.next = self.k_c0.val();
        self.r_c1.d.next = self.k_c1.val();
        self.r_ck.d.next = self.k_ck.val();
        self.r_fc.d.next = self.k_fc.val();
        if self.one_beat.val() & self.st.q.val() {
            self.u_ends.next = self.c_ends.val();
            self.u_spill.next = self.t_spill.val();
            self.u_c0.next = self.k_c0.val();
            self.u_c1.next = self.k_c1.val();
            self.u_ck.next = self.k_ck.val();
            self.u_fc.next = self.k_fc.val();
        } else {
            self.u_ends.next = self.r_ends.q.val();
            self.u_spill.next = self.r_spill.q.val();
            self.u_c0.next = self.r_c0.q.val();
            self.u_c1.next = self.r_c1.q.val();
            self.u_ck.next = self.r_ck.q.val();
            self.u_fc.next = self.r_fc.q.val();
        }
        if self.st.q.val() {
            self.in_body.next = self.hb.first_body.val();
            self.more_in.next = self.hb.first_more.val();
            self.ib_last.next = self.hb.first_ilast.val();
        } else {
            self.in_body.next = self.body_q.q.val();
            self.more_in.next = self.more_q.q.val();
            self.ib_last.next = self.ilast_q.q.val();
        }
        self.last_now.next = self.last_q.q.val();
        self.need_in.next = self.need_q.q.val();
        self.go.next = self.ok_q.q.val() & (!self.need_in.val() | self.s_payload.tvalid.val());
        self.s_payload.tready.next = (self.go.val() & self.need_in.val()) | self.drain.q.val();
        // Bytes past the descriptor's length are dropped even within a beat.
        // The lanes taken: beat 0's from the header assembly where a header
        // can end in it (`one_beat`), later beats' (and beat 0's elsewhere,
        // none: `need_q` is clear on a frame's first beat) from the flags
        // registered a beat ahead (`need_q`, `ilast_q`). So at W=64 `st`
        // is not among the payload lanes' gates.
        if self.one_beat.val() & self.st.q.val() {
            self.lane_en.next = self.hb.first_gate.val();
        } else if !self.need_q.q.val() {
            self.lane_en.next = 0.into();
        } else if self.ilast_q.q.val() {
            self.lane_en.next = self.hb.payload_last_keep.val();
        } else {
            self.lane_en.next = self.all_keep.val();
        }
        self.kmask.d.next = self.s_payload.tdata.val();
        self.kmask.keep.next = self.s_payload.tkeep.val() & self.lane_en.val();
        self.hs_in.hdr.next = self.hb.hdr.val();
        self.hs_next.hdr.next = self.hs.q.val();
        if self.st.q.val() {
            self.hs.d.next = self.hs_in.y.val();
        } else if self.fq_valid.q.val() {
            self.hs.d.next = self.hs_next.y.val();
        }
        self.hs_0.hdr.next = self.hs.q.val();
        self.hs_0.idx.next = 0.into();
        self.hs_1.hdr.next = self.hs.q.val();
        self.hs_1.idx.next = 1.into();
        self.hbeat_1.hdr.next = self.hb.hdr.val();
        self.hbeat_1.idx.next = 1.into();
        // A frame's first beat: `hq` still holds the previous header.
        if self.st.q.val() {
            self.hsel.next = self.hb.head_beat0.val();
        } else {
            self.hsel.next = self.hbq.q.val();
        }
        // The payload moved up behind the header's tail, ORed with the
        // header window's beat (zero past the header). `prev` is zero on a
        // frame's header beats and its first body beat (cleared by the
        // previous frame's last beat, loaded only on body beats), and the
        // current beat is zero where no payload lane is taken, so the beat
        // needs no body or header masks: the first body beat is the header's
        // tail ORed with the payload behind it, and past it the header
        // window reads zero (`ob1` saturates beyond the window).
        self.fshift.cur.next = self.kmask.y.val();
        self.fshift.prev.next = self.prev.q.val();
        self.fshift.idx.next = self.hb.body_idx.val();
        self.fshift.hdr.next = self.hsel.val();
        // The last beat's `tkeep` against both masks it can be checked
        // against (each a compare with a register), then the pick.
        self.keep_short.next = self.s_payload.tkeep.val() != self.hb.payload_last_keep.val();
        self.keep_part.next = self.s_payload.tkeep.val() != self.all_keep.val();
        if self.ib_last.val() {
            self.keep_bad.next = self.keep_short.val();
        } else {
            self.keep_bad.next = self.keep_part.val();
        }
        // The payload beat is flagged now (`tuser`, `tlast` out of place);
        // a last beat's `tkeep` (a compare of all lanes) is registered
        // beside the beat (`fq_kbad`) and joins the flags an edge later:
        // the beat's own `tuser` at the FIFO, the frame's later beats
        // through `kb_same`, and `error_payload` one edge later for all.
        self.bad_now.next = self.need_in.val()
            & (self.s_payload.tuser.val() | (self.s_payload.tlast.val() != self.ib_last.val()));
        self.kb_same.next = self.fq_kbad.q.val() & !self.fq_last.q.val();
        self.hb.out_ready.next = false;
        self.fc_keep.c.next = self.fq_fc.q.val();
        self.ep_a.d.next = false;
        self.ep_k.d.next = false;
        // (`ob1` saturates far above the header's beats.)
        self.fb_n.next = self.ob1.q.val() == self.hb.head_beats.val();
        // The front's register loads on every edge (it is read only with
        // `fq_valid`, and `dfifo` takes every beat it holds: `ok_q`), so
        // its wide registers have no enable.
        self.fq_data.d.next = self.fshift.y.val();
        // `prev` loads on every beat: the payload beat taken, which is zero
        // on header beats (no lane is taken), or zero after a frame's last.
        if self.go.val() {
            if self.last_now.val() {
                self.prev.d.next = 0.into();
            } else {
                self.prev.d.next = self.kmask.y.val();
            }
        }
        // The beat's side fields load with `fq_data`, on every edge: `go`'s
        // enables are the front's state and `fq_last` / `fq_kbad`, which
        // `kb_same` reads on the frame's next beat.
        if self.last_now.val() {
            self.fq_count.d.next = bit_cast::<8, 7>(self.hb.last_count.val());
        } else {
            self.fq_count.d.next = self.lanes.val();
        }
        self.fq_user.d.next = self.err.q.val() | self.bad_now.val() | self.kb_same.val();
        // The ICRC path's view of this beat.
        self.fq_tag.d.next = self.hb.is_vlan.val();
        // `ob1` (beat index + 1, saturating far above the Ethernet
        // header) against the Ethernet header's beats + 1.
        self.fq_cn.d.next = self.ob1.q.val() > self.c_a.val();
        self.fq_ca.d.next = self.ob1.q.val() == self.c_a.val();
        self.fq_ctl.d.next = self.last_now.val() & !self.u_ends.val();
        self.fq_fl.d.next = self.last_now.val() & self.u_ends.val();
        // (A last beat that ends in a flush beat has `last_count >
        // E % K`: all lanes, as for any other beat.)
        if self.last_now.val() {
            self.fq_ckeep.d.next = self.u_ck.val();
        } else {
            self.fq_ckeep.d.next = self.all_keep.val();
        }
        self.fq_fc.d.next = self.u_fc.val();
        self.fq_v6.d.next = self.hb.is_ipv6.val();
        self.fq_spill.d.next = self.u_spill.val();
        self.fq_c0.d.next = self.u_c0.val();
        self.fq_c1.d.next = self.u_c1.val();
        if self.go.val() {
            self.fq_last.d.next = self.last_now.val();
            self.fq_kbad.d.next =
                self.need_in.val() & self.s_payload.tlast.val() & self.keep_bad.val();
            if self.kb_same.val() {
                self.err.d.next = true;
            }
            self.ob.d.next = self.ob.q.val() + 1;
            if self.ob1.q.val() != 31 {
                self.ob1.d.next = self.ob1.q.val() + 1;
            }
            if self.st.q.val() {
                self.hbq.d.next = self.hbeat_1.y.val();
            } else if self.fq_valid.q.val() {
                self.hbq.d.next = self.hs_1.y.val();
            } else {
                self.hbq.d.next = self.hs_0.y.val();
            }
            // The position flags of the next beat.
            self.st.d.next = false;
            self.last_q.d.next = self.ob.q.val() == self.hb.frame_beats.val();
            self.body_q.d.next = self.in_body.val() | self.fb_n.val();
            self.more_q.d.next = self.more_in.val();
            self.ilast_q.d.next = self.ib_last.val();
            if self.need_in.val() {
                self.ib.d.next = self.ib.q.val() + 1;
                self.more_q.d.next = !self.ib_last.val();
                self.ilast_q.d.next = self.ib.q.val() == self.hb.payload_beats.val();
                if self.bad_now.val() {
                    self.err.d.next = true;
                }
                if self.s_payload.tlast.val() {
                    self.in_done.d.next = true;
                } else if self.ib_last.val() {
                    self.late.d.next = true;
                }
            }
            self.need_q.d.next = self.body_q.d.val() & self.more_q.d.val() & !self.in_done.d.val();
            if self.last_now.val() {
                self.st.d.next = true;
                self.ob.d.next = 2.into();
                self.ob1.d.next = 1.into();
                self.ib.d.next = 2.into();
                self.err.d.next = false;
                self.in_done.d.next = false;
                self.late.d.next = false;
                self.hb.out_ready.next = true;
                self.ep_a.d.next = self.err.q.val() | self.bad_now.val() | self.kb_same.val();
                self.ep_k.d.next =
                    self.need_in.val() & self.s_payload.tlast.val() & self.keep_bad.val();
                // A packet longer than its descriptor: drop the rest.
                self.drain.d.next =
                    self.late.q.val() | (self.need_in.val() & !self.s_payload.tlast.val());
            }
        }
        if self.drain.q.val() & self.s_payload.tvalid.val() & self.s_payload.tlast.val() {
            self.drain.d.next = false;
        }
        self.fq_valid.d.next = self.go.val();
        self.err_pulse.d.next = self.ep_a.q.val() | self.ep_k.q.val();
        self.error_payload.next = self.err_pulse.q.val();

        // ---- ICRC path: drop the Ethernet header, mask, CRC from the LRH state.
        self.c_normal.next = self.fq_valid.q.val() & self.fq_cn.q.val();
        self.cshift.prev.next = self.prev_c.q.val();
        self.crc.s_init.next = self.icrc_init.val();
        self.crc.s_axis.tuser.next = false;
        // The aligner and the masks read the registered controls (`ci_*`).
        // `cur` needs no zeroing on a flush beat: its kept lanes
        // (`flush_keep`, the last beat's bytes past `E % K`) all come from
        // `prev`, and the CRC zeroes the lanes `tkeep` drops.
        self.cshift.tag.next = self.ci_tag.q.val();
        self.cshift.cur.next = self.fq_data.q.val();
        self.cmask.j.next = self.ci_j.q.val();
        self.cmask.v6.next = self.ci_v6.q.val();
        if self.flush.q.val() {
            // The flush belongs to the previous frame.
            self.crc.s_axis.tkeep.next = self.flush_keep.q.val();
            self.crc.s_axis.tlast.next = true;
            self.crc.s_axis.tvalid.next = true;
        } else {
            self.crc.s_axis.tkeep.next = self.fq_ckeep.q.val();
            self.crc.s_axis.tlast.next = self.fq_ctl.q.val();
            self.crc.s_axis.tvalid.next = self.c_normal.val();
        }
        self.cmask.d.next = self.cshift.y.val();
        self.crc.s_axis.tdata.next = self.cmask.y.val();
        if self.flush.q.val() {
            self.flush.d.next = false;
        }
        if self.cj.q.val() == self.cj_top.val() {
            self.cj_inc.next = self.cj.q.val();
        } else {
            self.cj_inc.next = self.cj.q.val() + 1;
        }
        if self.fq_valid.q.val() {
            if self.fq_ca.q.val() {
                self.prev_c.d.next = self.fq_data.q.val();
                self.cj.d.next = 0.into();
            }
            if self.c_normal.val() {
                self.prev_c.d.next = self.fq_data.q.val();
                self.cj.d.next = self.cj_inc.val();
            }
            if self.fq_fl.q.val() {
                self.flush.d.next = true;
                self.flush_keep.d.next = self.fc_keep.keep.val();
                self.flush_v6.d.next = self.fq_v6.q.val();
                self.flush_tag.d.next = self.fq_tag.q.val();
                if self.c_normal.val() {
                    self.flush_j.d.next = self.cj_inc.val();
                } else {
                    self.flush_j.d.next = 0.into();
                }
            }
        }

        // ---- Delay FIFO.
        self.dfifo.write.next = self.fq_valid.q.val();
        self.dfifo.data_in.next = self.fq_data.q.val();
        self.mfifo.store.next = self.dfifo.lane_store.val();
        self.mfifo.waddr.next = self.dfifo.lane_waddr.val();
        self.mfifo.load.next = self.dfifo.lane_load.val();
        self.mfifo.raddr.next = self.dfifo.lane_raddr.val();
        self.mfifo.skid.next = self.dfifo.lane_skid.val();
        self.mfifo.from_skid.next = self.dfifo.lane_from_skid.val();
        self.tfifo.store.next = self.dfifo.lane_store.val();
        self.tfifo.waddr.next = self.dfifo.lane_waddr.val();
        self.tfifo.load.next = self.dfifo.lane_load.val();
        self.tfifo.raddr.next = self.dfifo.lane_raddr.val();
        self.tfifo.skid.next = self.dfifo.lane_skid.val();
        self.tfifo.from_skid.next = self.dfifo.lane_from_skid.val();
        self.kfifo.store.next = self.dfifo.lane_store.val();
        self.kfifo.waddr.next = self.dfifo.lane_waddr.val();
        self.kfifo.load.next = self.dfifo.lane_load.val();
        self.kfifo.raddr.next = self.dfifo.lane_raddr.val();
        self.kfifo.skid.next = self.dfifo.lane_skid.val();
        self.kfifo.from_skid.next = self.dfifo.lane_from_skid.val();
        self.tcount.c.next = self.fq_count.q.val();
        self.tfifo.data_in.next = self.tcount.keep.val();
        self.k0count.c.next = self.fq_c0.q.val();
        self.kfifo.data_in.next = self.k0count.keep.val();
        self.mfifo.data_in.next = bit_cast::<32, 8>(self.fq_count.q.val())
            | (bit_cast::<32, 1>(self.fq_last.q.val().into()) << 8)
            | (bit_cast::<32, 1>((self.fq_user.q.val() | self.fq_kbad.q.val()).into()) << 9)
            | (bit_cast::<32, 1>(self.fq_spill.q.val().into()) << 10)
            | (bit_cast::<32, 8>(self.fq_c1.q.val()) << 24);

        // ---- Tail: pass beats, merge the ICRC into each frame's last.
        self.m_last.next = self.mfifo.data_out.val().get_bit(8);
        self.m_user.next = self.mfifo.data_out.val().get_bit(9) | self.crc.m_crc.tuser.val();
        self.merge.d.next = self.dfifo.data_out.val();
        self.merge.t.next = self.tfifo.data_out.val();
        self.merge.crc.next = self.crc.m_crc.tdata.val();
        self.dfifo.read.next = false;
        self.crc.m_crc.tready.next = false;
        self.oreg.s_axis.tuser.next = false;
        self.oreg.s_axis.tkeep.next = self.all_keep.val();
        if self.extra.q.val() {
            self.oreg.s_axis.tdata.next = self.extra_data.q.val();
            self.oreg.s_axis.tkeep.next = self.extra_keep.q.val();
            self.oreg.s_axis.tlast.next = true;
            self.oreg.s_axis.tuser.next = self.extra_user.q.val();
            self.oreg.s_axis.tvalid.next = true;
            if self.oreg.s_axis.tready.val() {
                self.extra.d.next = false;
            }
        } else if !self.m_last.val() {
            self.oreg.s_axis.tdata.next = self.dfifo.data_out.val();
            self.oreg.s_axis.tlast.next = false;
            self.oreg.s_axis.tvalid.next = !self.dfifo.empty.val();
            if self.oreg.s_axis.tready.val() & !self.dfifo.empty.val() {
                self.dfifo.read.next = true;
            }
        } else {
            self.oreg.s_axis.tdata.next = self.merge.y0.val();
            self.oreg.s_axis.tvalid.next = !self.dfifo.empty.val() & self.crc.m_crc.tvalid.val();
            if self.mfifo.data_out.val().get_bit(10) {
                self.oreg.s_axis.tlast.next = false;
            } else {
                self.oreg.s_axis.tkeep.next = self.kfifo.data_out.val();
                self.oreg.s_axis.tlast.next = true;
                self.oreg.s_axis.tuser.next = self.m_user.val();
            }
            if self.oreg.s_axis.tready.val() & !self.dfifo.empty.val() & self.crc.m_crc.tvalid.val()
            {
                self.dfifo.read.next = true;
                self.crc.m_crc.tready.next = true;
                if self.mfifo.data_out.val().get_bit(10) {
                    self.extra.d.next = true;
                }
            }
        }
        // The extra beat's contents load on every edge but while one waits
        // (only read then), so no handshake enables them.
        if !self.extra.q.val() {
            self.extra_data.d.next = self.merge.y1.val();
            self.extra_keep.d.next = self.xkeep.keep.val();
            self.extra_user.d.next = self.m_user.val();
        }
        self.xkeep.c.next = self.mfifo.data_out.val().get_bits::<8>(24);
        // Output register slice: every `m_axis` signal from a flip-flop.
        self.m_axis.tdata.next = self.oreg.m_axis.tdata.val();
        self.m_axis.tkeep.next = self.oreg.m_axis.tkeep.val();
        self.m_axis.tlast.next = self.oreg.m_axis.tlast.val();
        self.m_axis.tuser.next = self.oreg.m_axis.tuser.val();
        self.m_axis.tvalid.next = self.oreg.m_axis.tvalid.val();
        self.oreg.m_axis.tready.next = self.m_axis.tready.val();

        self.ok_q.d.next = self.hb.next_out_valid.val()
            & !self.drain.d.val()
            & (self.dfifo.ram_words.val() <= self.room_top.val());
        if self.reset.val() {
            self.ok_q.d.next = false;
            self.prev.d.next = 0.into();
            self.st.d.next = true;
            self.last_q.d.next = false;
            self.need_q.d.next = false;
            self.ob.d.next = 2.into();
            self.ob1.d.next = 1.into();
            self.ib.d.next = 2.into();
            self.err.d.next = false;
            self.in_done.d.next = false;
            self.late.d.next = false;
            self.drain.d.next = false;
            self.fq_valid.d.next = false;
            self.flush.d.next = false;
            self.extra.d.next = false;
        }
        // Where a header can end in beat 0 (`one_beat`), a frame's first
        // beat's flags are the header assembly's, as its head registers
        // load them at this edge. Elsewhere a frame's first beat is
        // neither its last nor reads a payload beat, and both flags are
        // already clear when it comes: the previous frame's last beat
        // computes them clear (`ob` is past `frame_beats`, and every
        // payload beat was read by then: `more_q` clear), the reset clears
        // them, and they hold while `st` waits. So neither waits on the
        // header queue's pop or on `st`'s next value.
        if self.one_beat.val() & self.st.d.val() {
            self.last_q.d.next = self.hb.next_first_last.val();
            self.need_q.d.next = self.hb.next_first_need.val();
        }
        // The CRC input's controls for the next beat, from the next values.
        if self.flush.d.val() {
            self.ci_tag.d.next = self.flush_tag.d.val();
            self.ci_j.d.next = self.flush_j.d.val();
            self.ci_v6.d.next = self.flush_v6.d.val();
        } else {
            self.ci_tag.d.next = self.fq_tag.d.val();
            self.ci_j.d.next = self.cj.d.val();
            self.ci_v6.d.next = self.fq_v6.d.val();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roce_tx_synthesizes() {
        let mut uut = RoceTx::<64, 8>::new();
        uut.connect_all();
        yosys_validate("roce_tx_w64", &generate_verilog(&uut)).unwrap();
    }
}
