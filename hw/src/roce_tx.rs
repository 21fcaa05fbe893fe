//! RoCE v2 TX frame builder: a header descriptor and a payload stream in, a
//! complete wire frame out (Ethernet, optional 802.1Q, IPv4 with checksum or
//! IPv6, UDP, BTH, extension headers, payload, zero pad, ICRC, zero fill to
//! the 60-byte Ethernet minimum), one beat per cycle at W = 64..512.
//!
//! Pipeline:
//! 1. [`TxHeader`]: descriptor → header bytes and beat counts (4 stages,
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
use crate::crc32::Crc32;
use crate::fifo::SyncFifo;
use crate::gf2;
use crate::rx_prim::ByteRealign;
use crate::stream::{check_width, StreamIn, StreamOut};
use crate::tx_header::{header_lengths, TxHeader, HDR_BITS};
use roce_wire::ethernet;
use roce_wire::icrc::{self, LRH_PREFIX};
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

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

/// `keep = 2^c - 1` (all ones for `c >= K`).
#[derive(LogicBlock, Default)]
pub struct CountKeep<const K: usize> {
    pub c: Signal<In, Bits<8>>,
    pub keep: Signal<Out, Bits<K>>,
}

impl<const K: usize> Logic for CountKeep<K> {
    fn update(&mut self) {
        let c = self.c.val().index();
        let mut k = Bits::<K>::default();
        for lane in 0..K.min(c) {
            k = k.replace_bit(lane, true);
        }
        self.keep.next = k;
    }
    fn connect(&mut self) {
        self.keep.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        for lane in 0..K {
            v.push_str(&format!("always @(*) keep[{lane}] = c > 8'd{lane};\n"));
        }
        Verilog::Custom(v)
    }
}

/// ORs the ICRC masks into ICRC-stream beat `j` (IP header at byte 0).
#[derive(LogicBlock, Default)]
pub struct CrcMask<const W: usize, const K: usize> {
    pub d: Signal<In, Bits<W>>,
    pub j: Signal<In, Bits<14>>,
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
                    "((j == 14'd{}) & {}v6 ? 8'h{mask:02x} : 8'h00)",
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
/// counts: `fq_spill`, `fq_c0`, `fq_c1`).
#[derive(LogicBlock, Default)]
pub struct IcrcMerge<const W: usize, const K: usize> {
    pub d: Signal<In, Bits<W>>,
    pub n: Signal<In, Bits<8>>,
    pub crc: Signal<In, Bits<32>>,
    pub y0: Signal<Out, Bits<W>>,
    pub y1: Signal<Out, Bits<W>>,
}

impl<const W: usize, const K: usize> Logic for IcrcMerge<W, K> {
    fn update(&mut self) {
        let n = self.n.val().index();
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
        // that is 0..=3: a choice among four constants of `n`, no shifter.
        // Lane `l` of y1 is byte `K + l` of the merged pair.
        let pick = |at: usize| -> String {
            let terms: Vec<String> = (0..4)
                .filter_map(|i| at.checked_sub(i).filter(|&n| n <= K).map(|n| (i, n)))
                .map(|(i, n)| format!("(n == 8'd{n}) ? crc[{}:{}] : ", 8 * i + 7, 8 * i))
                .collect();
            format!("{}8'h00", terms.join(""))
        };
        let mut v = String::new();
        for lane in 0..K {
            let (hi, lo) = (8 * lane + 7, 8 * lane);
            v.push_str(&format!(
                "always @(*) y0[{hi}:{lo}] = (8'd{lane} < n) ? d[{hi}:{lo}] : {};\n\
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
    /// The head's header bytes, registered on every edge (no enable): they
    /// trail the head by one edge, so beat 0 comes from `hb.head_beat0`.
    hq: DFF<Bits<HDR_BITS>>,
    /// Header window beat `ob + 1` of `hq`, and beat 1 of the head itself
    /// (read from the queue: `hq` trails during a frame's first beat).
    hbeat: HdrBeat<W>,
    hbeat_1: HdrBeat<W>,
    /// The header window's beat for the next front beat, loaded a beat
    /// ahead (so the beat multiplexer is off the path into `fq_data`), and
    /// the index it comes from (`ob + 1`, as its own register).
    hbq: DFF<Bits<W>>,
    ob1: DFF<Bits<5>>,
    hsel: Signal<Local, Bits<W>>,
    fshift: ByteRealign<W, K>,
    kmask: KeepMask<W, K>,
    /// `tkeep` this payload beat must have (all lanes but on the last).
    want_keep: Signal<Local, Bits<K>>,
    ob: DFF<Bits<14>>,
    ib: DFF<Bits<14>>,
    /// The next beat is a frame's first: the position flags below come from
    /// the header assembly's registered `first_*` outputs, else from these
    /// registers, computed a beat ahead.
    st: DFF<Bit>,
    last_q: DFF<Bit>,
    body_q: DFF<Bit>,
    fb_q: DFF<Bit>,
    more_q: DFF<Bit>,
    ilast_q: DFF<Bit>,
    /// The next beat reads a payload beat (`need_in` past a frame's first
    /// beat), decided a beat ahead so `need_in` is one LUT from registers.
    need_q: DFF<Bit>,
    more_in: Signal<Local, Bit>,
    ib_last: Signal<Local, Bit>,
    prev: DFF<Bits<W>>,
    err: DFF<Bit>,
    in_done: DFF<Bit>,
    late: DFF<Bit>,
    drain: DFF<Bit>,
    err_pulse: DFF<Bit>,
    active: Signal<Local, Bit>,
    in_body: Signal<Local, Bit>,
    first_body: Signal<Local, Bit>,
    body_mask: Signal<Local, Bits<W>>,
    hdr_mask: Signal<Local, Bits<W>>,
    ones_w: Constant<Bits<W>>,
    need_in: Signal<Local, Bit>,
    last_now: Signal<Local, Bit>,
    bad_now: Signal<Local, Bit>,
    go: Signal<Local, Bit>,
    // Front output register.
    fq_valid: DFF<Bit>,
    fq_data: DFF<Bits<W>>,
    fq_count: DFF<Bits<8>>,
    fq_last: DFF<Bit>,
    fq_user: DFF<Bit>,
    /// ICRC-path controls of the beat, decided by the front: the aligner's
    /// lane offset, the beat is past / is the last Ethernet-only beat, it
    /// ends the ICRC stream (with `fq_ck` bytes in the aligner's beat), or
    /// it leaves `fq_fc` bytes for a flush beat.
    fq_e: DFF<Bits<8>>,
    fq_cn: DFF<Bit>,
    fq_ca: DFF<Bit>,
    fq_ctl: DFF<Bit>,
    fq_ck: DFF<Bits<8>>,
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
    /// the first beat of a frame that can be one beat long.
    k_c0: Signal<Local, Bits<8>>,
    k_c1: Signal<Local, Bits<8>>,
    k_ck: Signal<Local, Bits<8>>,
    k_fc: Signal<Local, Bits<8>>,
    r_ends: DFF<Bit>,
    r_spill: DFF<Bit>,
    r_c0: DFF<Bits<8>>,
    r_c1: DFF<Bits<8>>,
    r_ck: DFF<Bits<8>>,
    r_fc: DFF<Bits<8>>,
    u_ends: Signal<Local, Bit>,
    u_spill: Signal<Local, Bit>,
    u_c0: Signal<Local, Bits<8>>,
    u_c1: Signal<Local, Bits<8>>,
    u_ck: Signal<Local, Bits<8>>,
    u_fc: Signal<Local, Bits<8>>,
    /// A frame can be one beat long: the shortest header fits in a beat.
    one_beat: Constant<Bit>,
    fq_take: Signal<Local, Bit>,
    // ICRC path.
    cshift: ByteRealign<W, K>,
    cmask: CrcMask<W, K>,
    ckeep: CountKeep<K>,
    crc: Crc32<W, K>,
    prev_c: DFF<Bits<W>>,
    cj: DFF<Bits<14>>,
    flush: DFF<Bit>,
    flush_count: DFF<Bits<8>>,
    flush_j: DFF<Bits<14>>,
    flush_v6: DFF<Bit>,
    flush_e: DFF<Bits<8>>,
    c_a: Signal<Local, Bits<14>>,
    c_e: Signal<Local, Bits<8>>,
    c_normal: Signal<Local, Bit>,
    c_ends: Signal<Local, Bit>,
    // Delay FIFO and tail.
    dfifo: SyncFifo<Bits<W>, 5, 6>,
    mfifo: SyncFifo<Bits<32>, 5, 6>,
    merge: IcrcMerge<W, K>,
    okeep: CountKeep<K>,
    extra: DFF<Bit>,
    extra_data: DFF<Bits<W>>,
    extra_count: DFF<Bits<8>>,
    extra_user: DFF<Bit>,
    oreg: AxisRegister<W, K>,
    m_last: Signal<Local, Bit>,
    m_user: Signal<Local, Bit>,
    // Constants.
    lanes: Constant<Bits<8>>,
    all_keep: Constant<Bits<K>>,
    a_plain: Constant<Bits<14>>,
    a_tagged: Constant<Bits<14>>,
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
        let icrc_init = gf2::update(gf2::INIT, &LRH_PREFIX) as u64;
        // The payload moves behind the header's tail: K - (header length mod K)
        // bytes, for the header lengths the layouts can produce.
        let front_shifts: Vec<usize> = header_lengths().iter().map(|hl| K - hl % K).collect();
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
            hq: Default::default(),
            hbeat: Default::default(),
            hbeat_1: Default::default(),
            hbq: Default::default(),
            ob1: Default::default(),
            hsel: Default::default(),
            fshift: ByteRealign::new(&front_shifts),
            kmask: Default::default(),
            want_keep: Default::default(),
            ob: Default::default(),
            ib: Default::default(),
            st: Default::default(),
            last_q: Default::default(),
            body_q: Default::default(),
            fb_q: Default::default(),
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
            active: Default::default(),
            in_body: Default::default(),
            first_body: Default::default(),
            body_mask: Default::default(),
            hdr_mask: Default::default(),
            ones_w: Constant::new(!Bits::<W>::default()),
            need_in: Default::default(),
            last_now: Default::default(),
            bad_now: Default::default(),
            go: Default::default(),
            fq_valid: Default::default(),
            fq_data: Default::default(),
            fq_count: Default::default(),
            fq_last: Default::default(),
            fq_user: Default::default(),
            fq_e: Default::default(),
            fq_cn: Default::default(),
            fq_ca: Default::default(),
            fq_ctl: Default::default(),
            fq_ck: Default::default(),
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
            fq_take: Default::default(),
            cshift: ByteRealign::new(&[eu, et]),
            cmask: Default::default(),
            ckeep: Default::default(),
            crc: Crc32::new(),
            prev_c: Default::default(),
            cj: Default::default(),
            flush: Default::default(),
            flush_count: Default::default(),
            flush_j: Default::default(),
            flush_v6: Default::default(),
            flush_e: Default::default(),
            c_a: Default::default(),
            c_e: Default::default(),
            c_normal: Default::default(),
            c_ends: Default::default(),
            dfifo: SyncFifo::new(),
            mfifo: SyncFifo::new(),
            merge: Default::default(),
            okeep: Default::default(),
            extra: Default::default(),
            extra_data: Default::default(),
            extra_count: Default::default(),
            extra_user: Default::default(),
            oreg: AxisRegister::new(),
            m_last: Default::default(),
            m_user: Default::default(),
            lanes: Constant::new((K as u64).into()),
            all_keep: Constant::new(!Bits::<K>::default()),
            a_plain: Constant::new(((eu / K) as u64).into()),
            a_tagged: Constant::new(((et / K) as u64).into()),
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
            self,
            clock,
            r_ends,
            r_spill,
            r_c0,
            r_c1,
            r_ck,
            r_fc,
            hq,
            hbq,
            ob1,
            ob,
            ib,
            st,
            last_q,
            body_q,
            fb_q,
            more_q,
            ilast_q,
            need_q,
            prev,
            err,
            in_done,
            late,
            drain,
            err_pulse,
            fq_valid,
            fq_data,
            fq_count,
            fq_last,
            fq_user,
            fq_e,
            fq_cn,
            fq_ca,
            fq_ctl,
            fq_ck,
            fq_fl,
            fq_fc,
            fq_v6,
            fq_spill,
            fq_c0,
            fq_c1,
            prev_c,
            cj,
            flush,
            flush_count,
            flush_j,
            flush_v6,
            flush_e,
            extra,
            extra_data,
            extra_count,
            extra_user
        );
        clock!(self, clock, hb, crc, dfifo, mfifo, oreg);
        self.oreg.reset.next = self.reset.val();
        self.hb.reset.next = self.reset.val();
        self.crc.reset.next = self.reset.val();
        self.dfifo.reset.next = self.reset.val();
        self.mfifo.reset.next = self.reset.val();
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
        self.t_n4.next = bit_cast::<8, 7>(self.hb.last_count.val()) + 4;
        self.t_spill.next = self.t_n4.val() > self.lanes.val();
        if self.t_spill.val() {
            self.k_c0.next = self.lanes.val();
            self.k_c1.next =
                self.t_n4.val() - self.lanes.val() + bit_cast::<8, 2>(self.hb.fill.val());
        } else {
            self.k_c0.next = self.t_n4.val() + bit_cast::<8, 2>(self.hb.fill.val());
            self.k_c1.next = 0.into();
        }
        self.k_ck.next =
            self.lanes.val() - self.c_e.val() + bit_cast::<8, 7>(self.hb.last_count.val());
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
        self.fq_take.next =
            self.fq_valid.q.val() & !self.dfifo.full.val() & self.crc.s_axis.tready.val();
        self.active.next = self.hb.out_valid.val() & !self.drain.q.val();
        if self.st.q.val() {
            self.in_body.next = self.hb.first_body.val();
            self.first_body.next = self.hb.first_body.val();
            self.last_now.next = self.hb.first_last.val();
            self.more_in.next = self.hb.first_more.val();
            self.ib_last.next = self.hb.first_ilast.val();
        } else {
            self.in_body.next = self.body_q.q.val();
            self.first_body.next = self.fb_q.q.val();
            self.last_now.next = self.last_q.q.val();
            self.more_in.next = self.more_q.q.val();
            self.ib_last.next = self.ilast_q.q.val();
        }
        if self.st.q.val() {
            self.need_in.next = self.hb.first_body.val() & self.hb.first_more.val();
        } else {
            self.need_in.next = self.need_q.q.val();
        }
        self.go.next = self.active.val()
            & (!self.fq_valid.q.val() | self.fq_take.val())
            & (!self.need_in.val() | self.s_payload.tvalid.val());
        self.s_payload.tready.next = (self.go.val() & self.need_in.val()) | self.drain.q.val();
        // Bytes past the descriptor's length are dropped even within a beat.
        if self.ib_last.val() {
            self.want_keep.next = self.hb.payload_last_keep.val();
        } else {
            self.want_keep.next = self.all_keep.val();
        }
        self.kmask.d.next = self.s_payload.tdata.val();
        self.kmask.keep.next = self.s_payload.tkeep.val() & self.want_keep.val();
        self.hq.d.next = self.hb.hdr.val();
        self.hbeat.hdr.next = self.hq.q.val();
        self.hbeat.idx.next = self.ob1.q.val();
        self.hbeat_1.hdr.next = self.hb.hdr.val();
        self.hbeat_1.idx.next = 1.into();
        // A frame's first beat: `hq` still holds the previous header.
        if self.st.q.val() {
            self.hsel.next = self.hb.head_beat0.val();
        } else {
            self.hsel.next = self.hbq.q.val();
        }
        if self.need_in.val() {
            self.fshift.cur.next = self.kmask.y.val();
        } else {
            self.fshift.cur.next = 0.into();
        }
        // A header that ends on a beat boundary leaves the payload in place
        // (shift K reads as 0: `prev` is then the current beat itself). The
        // first body beat is the header's tail (the header window there, zero
        // past the header) ORed with the payload moved up behind it.
        if self.hb.head_tail.val() == 0 {
            self.fshift.prev.next = self.fshift.cur.val();
        } else if self.first_body.val() {
            self.fshift.prev.next = 0.into();
        } else {
            self.fshift.prev.next = self.prev.q.val();
        }
        self.fshift.shift.next = self.hb.body_shift.val();
        if self.in_body.val() {
            self.body_mask.next = self.ones_w.val();
        } else {
            self.body_mask.next = 0.into();
        }
        if !self.in_body.val() | self.first_body.val() {
            self.hdr_mask.next = self.ones_w.val();
        } else {
            self.hdr_mask.next = 0.into();
        }
        self.bad_now.next = self.need_in.val()
            & (self.s_payload.tuser.val()
                | (self.s_payload.tlast.val() != self.ib_last.val())
                | (self.s_payload.tlast.val()
                    & (self.s_payload.tkeep.val() != self.want_keep.val())));
        self.hb.out_ready.next = false;
        self.err_pulse.d.next = false;
        if self.go.val() {
            // Header beats, body beats, and the first body beat (both ORed):
            // an AND-OR per bit rather than a chain of multiplexers.
            self.fq_data.d.next = (self.fshift.y.val() & self.body_mask.val())
                | (self.hsel.val() & self.hdr_mask.val());
            if self.last_now.val() {
                self.fq_count.d.next = bit_cast::<8, 7>(self.hb.last_count.val());
            } else {
                self.fq_count.d.next = self.lanes.val();
            }
            self.fq_last.d.next = self.last_now.val();
            self.fq_user.d.next = self.err.q.val() | self.bad_now.val();
            // The ICRC path's view of this beat.
            self.fq_e.d.next = self.c_e.val();
            self.fq_cn.d.next = self.ob.q.val() > self.c_a.val();
            self.fq_ca.d.next = self.ob.q.val() == self.c_a.val();
            self.fq_ctl.d.next = self.last_now.val() & !self.u_ends.val();
            self.fq_fl.d.next = self.last_now.val() & self.u_ends.val();
            if self.last_now.val() & !self.u_ends.val() {
                self.fq_ck.d.next = self.u_ck.val();
            } else {
                self.fq_ck.d.next = self.lanes.val();
            }
            self.fq_fc.d.next = self.u_fc.val();
            self.fq_v6.d.next = self.hb.is_ipv6.val();
            self.fq_spill.d.next = self.u_spill.val();
            self.fq_c0.d.next = self.u_c0.val();
            self.fq_c1.d.next = self.u_c1.val();
            self.ob.d.next = self.ob.q.val() + 1;
            self.ob1.d.next = self.ob1.q.val() + 1;
            if self.st.q.val() {
                self.hbq.d.next = self.hbeat_1.y.val();
            } else {
                self.hbq.d.next = self.hbeat.y.val();
            }
            // The position flags of the next beat.
            self.st.d.next = false;
            self.last_q.d.next = (self.ob.q.val() + 2) == self.hb.frame_beats.val();
            self.fb_q.d.next = (self.ob.q.val() + 1) == bit_cast::<14, 5>(self.hb.head_beats.val());
            self.body_q.d.next = self.in_body.val() | self.fb_q.d.val();
            self.more_q.d.next = self.more_in.val();
            self.ilast_q.d.next = self.ib_last.val();
            if self.in_body.val() {
                // A beat past a short payload packet reads zeros from here on.
                self.prev.d.next = 0.into();
            }
            if self.need_in.val() {
                self.ib.d.next = self.ib.q.val() + 1;
                self.more_q.d.next = !self.ib_last.val();
                self.ilast_q.d.next = (self.ib.q.val() + 2) == self.hb.payload_beats.val();
                self.prev.d.next = self.kmask.y.val();
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
                self.ob.d.next = 0.into();
                self.ob1.d.next = 1.into();
                self.ib.d.next = 0.into();
                self.err.d.next = false;
                self.in_done.d.next = false;
                self.late.d.next = false;
                self.hb.out_ready.next = true;
                self.err_pulse.d.next = self.err.q.val() | self.bad_now.val();
                // A packet longer than its descriptor: drop the rest.
                self.drain.d.next =
                    self.late.q.val() | (self.need_in.val() & !self.s_payload.tlast.val());
            }
        }
        if self.drain.q.val() & self.s_payload.tvalid.val() & self.s_payload.tlast.val() {
            self.drain.d.next = false;
        }
        self.fq_valid.d.next = self.go.val() | (self.fq_valid.q.val() & !self.fq_take.val());
        self.error_payload.next = self.err_pulse.q.val();

        // ---- ICRC path: drop the Ethernet header, mask, CRC from the LRH state.
        self.c_normal.next = self.fq_take.val() & self.fq_cn.q.val();
        self.cshift.prev.next = self.prev_c.q.val();
        self.crc.s_init.next = self.icrc_init.val();
        self.crc.s_axis.tuser.next = false;
        if self.flush.q.val() {
            // The flush belongs to the previous frame: its own lane offset.
            self.cshift.shift.next = self.flush_e.q.val();
            self.cshift.cur.next = 0.into();
            self.cmask.j.next = self.flush_j.q.val();
            self.cmask.v6.next = self.flush_v6.q.val();
            self.ckeep.c.next = self.flush_count.q.val();
            self.crc.s_axis.tlast.next = true;
            self.crc.s_axis.tvalid.next = true;
        } else {
            self.cshift.shift.next = self.fq_e.q.val();
            self.cshift.cur.next = self.fq_data.q.val();
            self.cmask.j.next = self.cj.q.val();
            self.cmask.v6.next = self.fq_v6.q.val();
            self.ckeep.c.next = self.fq_ck.q.val();
            self.crc.s_axis.tlast.next = self.fq_ctl.q.val();
            self.crc.s_axis.tvalid.next = self.c_normal.val();
        }
        self.cmask.d.next = self.cshift.y.val();
        self.crc.s_axis.tdata.next = self.cmask.y.val();
        self.crc.s_axis.tkeep.next = self.ckeep.keep.val();
        if self.flush.q.val() & self.crc.s_axis.tready.val() {
            self.flush.d.next = false;
        }
        if self.fq_take.val() {
            if self.fq_ca.q.val() {
                self.prev_c.d.next = self.fq_data.q.val();
                self.cj.d.next = 0.into();
            }
            if self.c_normal.val() {
                self.prev_c.d.next = self.fq_data.q.val();
                self.cj.d.next = self.cj.q.val() + 1;
            }
            if self.fq_fl.q.val() {
                self.flush.d.next = true;
                self.flush_count.d.next = self.fq_fc.q.val();
                self.flush_v6.d.next = self.fq_v6.q.val();
                self.flush_e.d.next = self.fq_e.q.val();
                if self.c_normal.val() {
                    self.flush_j.d.next = self.cj.q.val() + 1;
                } else {
                    self.flush_j.d.next = 0.into();
                }
            }
        }

        // ---- Delay FIFO.
        self.dfifo.write.next = self.fq_take.val();
        self.dfifo.data_in.next = self.fq_data.q.val();
        self.mfifo.write.next = self.fq_take.val();
        self.mfifo.data_in.next = bit_cast::<32, 8>(self.fq_count.q.val())
            | (bit_cast::<32, 1>(self.fq_last.q.val().into()) << 8)
            | (bit_cast::<32, 1>(self.fq_user.q.val().into()) << 9)
            | (bit_cast::<32, 1>(self.fq_spill.q.val().into()) << 10)
            | (bit_cast::<32, 8>(self.fq_c0.q.val()) << 16)
            | (bit_cast::<32, 8>(self.fq_c1.q.val()) << 24);

        // ---- Tail: pass beats, merge the ICRC into each frame's last.
        self.m_last.next = self.mfifo.data_out.val().get_bit(8);
        self.m_user.next = self.mfifo.data_out.val().get_bit(9) | self.crc.m_crc.tuser.val();
        self.merge.d.next = self.dfifo.data_out.val();
        self.merge.n.next = self.mfifo.data_out.val().get_bits::<8>(0);
        self.merge.crc.next = self.crc.m_crc.tdata.val();
        self.dfifo.read.next = false;
        self.mfifo.read.next = false;
        self.crc.m_crc.tready.next = false;
        self.oreg.s_axis.tuser.next = false;
        self.okeep.c.next = self.lanes.val();
        if self.extra.q.val() {
            self.oreg.s_axis.tdata.next = self.extra_data.q.val();
            self.okeep.c.next = self.extra_count.q.val();
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
                self.mfifo.read.next = true;
            }
        } else {
            self.oreg.s_axis.tdata.next = self.merge.y0.val();
            self.oreg.s_axis.tvalid.next = !self.dfifo.empty.val() & self.crc.m_crc.tvalid.val();
            if self.mfifo.data_out.val().get_bit(10) {
                self.oreg.s_axis.tlast.next = false;
            } else {
                self.okeep.c.next = self.mfifo.data_out.val().get_bits::<8>(16);
                self.oreg.s_axis.tlast.next = true;
                self.oreg.s_axis.tuser.next = self.m_user.val();
            }
            if self.oreg.s_axis.tready.val() & !self.dfifo.empty.val() & self.crc.m_crc.tvalid.val()
            {
                self.dfifo.read.next = true;
                self.mfifo.read.next = true;
                self.crc.m_crc.tready.next = true;
                if self.mfifo.data_out.val().get_bit(10) {
                    self.extra.d.next = true;
                    self.extra_data.d.next = self.merge.y1.val();
                    self.extra_count.d.next = self.mfifo.data_out.val().get_bits::<8>(24);
                    self.extra_user.d.next = self.m_user.val();
                }
            }
        }
        self.oreg.s_axis.tkeep.next = self.okeep.keep.val();
        // Output register slice: every `m_axis` signal from a flip-flop.
        self.m_axis.tdata.next = self.oreg.m_axis.tdata.val();
        self.m_axis.tkeep.next = self.oreg.m_axis.tkeep.val();
        self.m_axis.tlast.next = self.oreg.m_axis.tlast.val();
        self.m_axis.tuser.next = self.oreg.m_axis.tuser.val();
        self.m_axis.tvalid.next = self.oreg.m_axis.tvalid.val();
        self.oreg.m_axis.tready.next = self.m_axis.tready.val();

        if self.reset.val() {
            self.st.d.next = true;
            self.ob.d.next = 0.into();
            self.ob1.d.next = 1.into();
            self.ib.d.next = 0.into();
            self.err.d.next = false;
            self.in_done.d.next = false;
            self.late.d.next = false;
            self.drain.d.next = false;
            self.fq_valid.d.next = false;
            self.flush.d.next = false;
            self.extra.d.next = false;
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
