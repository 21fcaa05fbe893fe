//! AXI4 master DMA engines: `dma_wr` writes bytes of a payload stream (or a
//! command's immediate word) to memory, `dma_rd` reads memory into a
//! stream. The responder executor uses them for RDMA WRITE/SEND payloads
//! (`dma_wr`) and READ responses and atomics (`dma_rd`); the host interface
//! will too.
//!
//! Both are generic over the data width `W` ∈ {64, 128, 256, 512} (`K = W /
//! 8` byte lanes, checked in `new()`), with 64-bit addresses and AXI4 INCR
//! bursts of full-width beats (`AxSIZE = log2 K`; `WSTRB` selects the bytes
//! written). A burst never crosses a 4 KiB boundary and never has more than
//! 256 beats: it ends at the command's end or at the next multiple of
//! `WR_MAX_BURST` bytes (`min(4096, 256 K)`; `dma_rd`: `RD_MAX_BURST`,
//! `min(4096, 16 K)`, so its R buffer stays small). Every request uses ID 0,
//! so B and R come back in order and there are no ID ports; AxLOCK,
//! AxCACHE, AxPROT and AxQOS have no ports either: tie them off at the
//! interconnect (0, 0b0011, 0b000, 0).
//!
//! **Realignment.** Output lane `j` of a beat takes byte `pp + (j - l)` of
//! a two-beat source window, where `[l, h)` are the lanes the beat carries
//! and `pp` the source's byte offset: one [`Funnel`] (a `2W`-to-`W` byte
//! shifter by `(pp - l) mod K`) per engine, no per-width copy.
//!
//! Ports, semantics, bad-input behaviour, latency and resources:
//! docs/ARCHITECTURE.md, "dma_wr / dma_rd".

use crate::fifo::{FifoLane, SyncFifo};
use crate::prim::{CountKeep, Counter32, Funnel, LaneMux};
use crate::stream::{check_width, StreamIn, StreamOut};
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

/// `dma_wr`'s largest burst in bytes at `K` lanes: 256 beats, at most 4 KiB.
pub const fn wr_max_burst(k: usize) -> usize {
    if 256 * k < 4096 {
        256 * k
    } else {
        4096
    }
}

/// `dma_rd`'s largest burst in beats.
pub const RD_BURST_BEATS: usize = 16;

/// `dma_rd`'s largest burst in bytes at `K` lanes: 16 beats, at most 4 KiB.
pub const fn rd_max_burst(k: usize) -> usize {
    if RD_BURST_BEATS * k < 4096 {
        RD_BURST_BEATS * k
    } else {
        4096
    }
}

/// `dma_rd`'s R buffer in beats: an AR is issued only when the buffer has
/// room for all its beats besides every beat already requested, so
/// `m_data` backpressure never blocks the R channel.
pub const RD_BUF_BEATS: usize = 64;

/// `dma_wr`'s bursts awaiting B at most (its B-tracking FIFO).
pub const WR_OUTSTANDING: usize = 17;

const _: () = assert!(
    RD_BURST_BEATS * 2 <= RD_BUF_BEATS,
    "two full read bursts in flight"
);

/// `dma_rd`'s bursts in flight at most (its burst FIFO).
pub const RD_OUTSTANDING: usize = 17;

/// The write engine: "write the next `len` bytes of the payload stream (or
/// the command's immediate word) to `addr`". `W` is the data width, `K =
/// W / 8` (checked in `new()`).
#[derive(LogicBlock)]
pub struct DmaWr<const W: usize, const K: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // Commands.
    pub s_cmd_valid: Signal<In, Bit>,
    pub s_cmd_ready: Signal<Out, Bit>,
    pub s_cmd_addr: Signal<In, Bits<64>>,
    pub s_cmd_len: Signal<In, Bits<32>>,
    pub s_cmd_last: Signal<In, Bit>,
    pub s_cmd_discard: Signal<In, Bit>,
    pub s_cmd_imm: Signal<In, Bit>,
    pub s_cmd_data: Signal<In, Bits<64>>,
    // Payload.
    pub s_pay: StreamIn<W, K>,
    // AXI4 write channels.
    pub m_axi_awaddr: Signal<Out, Bits<64>>,
    pub m_axi_awlen: Signal<Out, Bits<8>>,
    pub m_axi_awsize: Signal<Out, Bits<3>>,
    pub m_axi_awburst: Signal<Out, Bits<2>>,
    pub m_axi_awvalid: Signal<Out, Bit>,
    pub m_axi_awready: Signal<In, Bit>,
    pub m_axi_wdata: Signal<Out, Bits<W>>,
    pub m_axi_wstrb: Signal<Out, Bits<K>>,
    pub m_axi_wlast: Signal<Out, Bit>,
    pub m_axi_wvalid: Signal<Out, Bit>,
    pub m_axi_wready: Signal<In, Bit>,
    pub m_axi_bresp: Signal<In, Bits<2>>,
    pub m_axi_bvalid: Signal<In, Bit>,
    pub m_axi_bready: Signal<Out, Bit>,
    // Completions.
    pub m_done_valid: Signal<Out, Bit>,
    pub m_done_ready: Signal<In, Bit>,
    pub m_done_err: Signal<Out, Bit>,
    // Status.
    pub idle: Signal<Out, Bit>,
    pub cnt_stream_err: Signal<Out, Bits<32>>,

    // Queues: bursts to issue (address; length beside), commands for the
    // data engine (length; address low bits, flags, immediate beside), the
    // payload stream, W beats, bursts awaiting B (last of its command),
    // B results per command, data-engine results per command.
    aq: SyncFifo<Bits<64>, 2, 3>,
    aq_len: FifoLane<Bits<32>, 2>,
    wq: SyncFifo<Bits<32>, 2, 3>,
    wq_a: FifoLane<Bits<16>, 2>,
    wq_last: FifoLane<Bit, 2>,
    wq_disc: FifoLane<Bit, 2>,
    wq_imm: FifoLane<Bit, 2>,
    wq_data: FifoLane<Bits<64>, 2>,
    pf: SyncFifo<Bits<W>, 2, 3>,
    pf_keep: FifoLane<Bits<K>, 2>,
    pf_last: FifoLane<Bit, 2>,
    wf: SyncFifo<Bits<W>, 2, 3>,
    wf_strb: FifoLane<Bits<K>, 2>,
    wf_last: FifoLane<Bit, 2>,
    bq: SyncFifo<Bit, 4, 5>,
    cq: SyncFifo<Bit, 4, 5>,
    rq: SyncFifo<Bit, 4, 5>,
    rq_hasb: FifoLane<Bit, 4>,
    fun: Funnel<W>,
    fun_k: Funnel<K>,
    ck_h: CountKeep<K>,
    ck_l: CountKeep<K>,
    c_serr: Counter32,

    // Burst splitter and the AW register.
    sp_act: DFF<Bit>,
    sp_addr: DFF<Bits<64>>,
    sp_rem: DFF<Bits<32>>,
    aw_valid: DFF<Bit>,
    aw_addr: DFF<Bits<64>>,
    aw_len: DFF<Bits<8>>,
    // B side: error of the command's bursts so far.
    b_acc: DFF<Bit>,
    // Commands accepted and not yet completed.
    pend: DFF<Bits<8>>,
    // Data engine: the command.
    e_act: DFF<Bit>,
    /// The current beat: lanes `[g_l, g_l + g_c)`, `g_strb` their mask,
    /// the command's last beat; registered a beat ahead. `g_zero`: a
    /// zero-length command. `nrem`: bytes left after the current beat.
    g_l: DFF<Bits<8>>,
    g_c: DFF<Bits<8>>,
    g_lastb: DFF<Bit>,
    g_strb: DFF<Bits<K>>,
    g_zero: DFF<Bit>,
    nrem: DFF<Bits<32>>,
    /// A stream error this cycle (counted a cycle later).
    err_q: DFF<Bit>,
    e_abeat: DFF<Bits<16>>,
    e_last: DFF<Bit>,
    e_imm: DFF<Bit>,
    e_hasb: DFF<Bit>,
    e_data: DFF<Bits<64>>,
    e_ip: DFF<Bits<8>>,
    e_err: DFF<Bit>,
    // Data engine: the stream window (B0 and the payload FIFO's head).
    b0: DFF<Bits<W>>,
    b0_keep: DFF<Bits<K>>,
    b0_last: DFF<Bit>,
    v0: DFF<Bit>,
    p: DFF<Bits<8>>,
    resync: DFF<Bit>,
    dead: DFF<Bit>,
    ended: DFF<Bit>,

    // Constants.
    kconst: Constant<Bits<8>>,
    kmask: Constant<Bits<8>>,
    kmask16: Constant<Bits<16>>,
    kconst16: Constant<Bits<16>>,
    kshift: Constant<Bits<8>>,
    amask: Constant<Bits<64>>,
    maxb: Constant<Bits<16>>,
    maxb_mask: Constant<Bits<16>>,
    bmask: Constant<Bits<16>>,
    awsize: Constant<Bits<3>>,
    keep_ones: Constant<Bits<K>>,

    // Combinational.
    accept: Signal<Local, Bit>,
    bound: Signal<Local, Bits<16>>,
    sp_lastb: Signal<Local, Bit>,
    bb: Signal<Local, Bits<16>>,
    beats: Signal<Local, Bits<16>>,
    emit: Signal<Local, Bit>,
    bt: Signal<Local, Bit>,
    done: Signal<Local, Bit>,
    ld: Signal<Local, Bit>,
    l: Signal<Local, Bits<8>>,
    l0: Signal<Local, Bits<8>>,
    room0: Signal<Local, Bits<8>>,
    lastb0: Signal<Local, Bit>,
    c0: Signal<Local, Bits<8>>,
    n_lastb: Signal<Local, Bit>,
    n_c: Signal<Local, Bits<8>>,
    lastb: Signal<Local, Bit>,
    c: Signal<Local, Bits<8>>,
    pp: Signal<Local, Bits<8>>,
    useb0: Signal<Local, Bit>,
    pc: Signal<Local, Bits<8>>,
    need1: Signal<Local, Bit>,
    src_lo: Signal<Local, Bits<W>>,
    vm: Signal<Local, Bits<K>>,
    strb: Signal<Local, Bits<K>>,
    missing: Signal<Local, Bit>,
    spath: Signal<Local, Bit>,
    sok: Signal<Local, Bit>,
    go: Signal<Local, Bit>,
    zgo: Signal<Local, Bit>,
    fin_tlast: Signal<Local, Bit>,
    err_now: Signal<Local, Bit>,
    bpop: Signal<Local, Bit>,
    rpop: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
}

impl<const W: usize, const K: usize> DmaWr<W, K> {
    /// Largest burst in bytes.
    pub const MAX_BURST: usize = wr_max_burst(K);

    pub fn new() -> Self {
        check_width("DmaWr", W, K);
        let maxb = wr_max_burst(K);
        let keep_ones = if K >= 64 { u64::MAX } else { (1u64 << K) - 1 };
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_cmd_valid: Default::default(),
            s_cmd_ready: Default::default(),
            s_cmd_addr: Default::default(),
            s_cmd_len: Default::default(),
            s_cmd_last: Default::default(),
            s_cmd_discard: Default::default(),
            s_cmd_imm: Default::default(),
            s_cmd_data: Default::default(),
            s_pay: Default::default(),
            m_axi_awaddr: Default::default(),
            m_axi_awlen: Default::default(),
            m_axi_awsize: Default::default(),
            m_axi_awburst: Default::default(),
            m_axi_awvalid: Default::default(),
            m_axi_awready: Default::default(),
            m_axi_wdata: Default::default(),
            m_axi_wstrb: Default::default(),
            m_axi_wlast: Default::default(),
            m_axi_wvalid: Default::default(),
            m_axi_wready: Default::default(),
            m_axi_bresp: Default::default(),
            m_axi_bvalid: Default::default(),
            m_axi_bready: Default::default(),
            m_done_valid: Default::default(),
            m_done_ready: Default::default(),
            m_done_err: Default::default(),
            idle: Default::default(),
            cnt_stream_err: Default::default(),
            aq: SyncFifo::new(),
            aq_len: FifoLane::new(),
            wq: SyncFifo::new(),
            wq_a: FifoLane::new(),
            wq_last: FifoLane::new(),
            wq_disc: FifoLane::new(),
            wq_imm: FifoLane::new(),
            wq_data: FifoLane::new(),
            pf: SyncFifo::new(),
            pf_keep: FifoLane::new(),
            pf_last: FifoLane::new(),
            wf: SyncFifo::new(),
            wf_strb: FifoLane::new(),
            wf_last: FifoLane::new(),
            bq: SyncFifo::new(),
            cq: SyncFifo::new(),
            rq: SyncFifo::new(),
            rq_hasb: FifoLane::new(),
            fun: Funnel::new(8),
            fun_k: Funnel::new(1),
            ck_h: CountKeep::new(0),
            ck_l: CountKeep::new(0),
            c_serr: Counter32::new(),
            sp_act: Default::default(),
            sp_addr: Default::default(),
            sp_rem: Default::default(),
            aw_valid: Default::default(),
            aw_addr: Default::default(),
            aw_len: Default::default(),
            b_acc: Default::default(),
            pend: Default::default(),
            e_act: Default::default(),
            g_l: Default::default(),
            g_c: Default::default(),
            g_lastb: Default::default(),
            g_strb: Default::default(),
            g_zero: Default::default(),
            nrem: Default::default(),
            err_q: Default::default(),
            e_abeat: Default::default(),
            e_last: Default::default(),
            e_imm: Default::default(),
            e_hasb: Default::default(),
            e_data: Default::default(),
            e_ip: Default::default(),
            e_err: Default::default(),
            b0: Default::default(),
            b0_keep: Default::default(),
            b0_last: Default::default(),
            v0: Default::default(),
            p: Default::default(),
            resync: Default::default(),
            dead: Default::default(),
            ended: Default::default(),
            kconst: Constant::new((K as u64).into()),
            kmask: Constant::new(((K - 1) as u64).into()),
            kmask16: Constant::new(((K - 1) as u64).into()),
            kconst16: Constant::new((K as u64).into()),
            kshift: Constant::new((K.trailing_zeros() as u64).into()),
            amask: Constant::new((!((K - 1) as u64)).into()),
            maxb: Constant::new((maxb as u64).into()),
            maxb_mask: Constant::new(((maxb - 1) as u64).into()),
            bmask: Constant::new((((maxb - 1) & !(K - 1)) as u64).into()),
            awsize: Constant::new((K.trailing_zeros() as u64).into()),
            keep_ones: Constant::new(keep_ones.into()),
            accept: Default::default(),
            bound: Default::default(),
            sp_lastb: Default::default(),
            bb: Default::default(),
            beats: Default::default(),
            emit: Default::default(),
            bt: Default::default(),
            done: Default::default(),
            ld: Default::default(),
            l: Default::default(),
            l0: Default::default(),
            room0: Default::default(),
            lastb0: Default::default(),
            c0: Default::default(),
            n_lastb: Default::default(),
            n_c: Default::default(),
            lastb: Default::default(),
            c: Default::default(),
            pp: Default::default(),
            useb0: Default::default(),
            pc: Default::default(),
            need1: Default::default(),
            src_lo: Default::default(),
            vm: Default::default(),
            strb: Default::default(),
            missing: Default::default(),
            spath: Default::default(),
            sok: Default::default(),
            go: Default::default(),
            zgo: Default::default(),
            fin_tlast: Default::default(),
            err_now: Default::default(),
            bpop: Default::default(),
            rpop: Default::default(),
            take: Default::default(),
        }
    }
}

impl<const W: usize, const K: usize> Default for DmaWr<W, K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const K: usize> Logic for DmaWr<W, K> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, sp_act, sp_addr, sp_rem, aw_valid, aw_addr, aw_len, b_acc, pend, e_act,
            g_l, g_c, g_lastb, g_strb, g_zero, nrem, err_q, e_abeat, e_last, e_imm, e_hasb, e_data,
            e_ip, e_err, b0, b0_keep, b0_last, v0, p, resync, dead, ended
        );
        clock!(
            self, clock, aq, aq_len, wq, wq_a, wq_last, wq_disc, wq_imm, wq_data, pf, pf_keep,
            pf_last, wf, wf_strb, wf_last, bq, cq, rq, rq_hasb, c_serr
        );
        self.aq.reset.next = self.reset.val();
        self.wq.reset.next = self.reset.val();
        self.pf.reset.next = self.reset.val();
        self.wf.reset.next = self.reset.val();
        self.bq.reset.next = self.reset.val();
        self.cq.reset.next = self.reset.val();
        self.rq.reset.next = self.reset.val();
        self.aq_len.store.next = self.aq.lane_store.val();
        self.aq_len.waddr.next = self.aq.lane_waddr.val();
        self.aq_len.load.next = self.aq.lane_load.val();
        self.aq_len.raddr.next = self.aq.lane_raddr.val();
        self.aq_len.skid.next = self.aq.lane_skid.val();
        self.aq_len.from_skid.next = self.aq.lane_from_skid.val();
        self.wq_a.store.next = self.wq.lane_store.val();
        self.wq_a.waddr.next = self.wq.lane_waddr.val();
        self.wq_a.load.next = self.wq.lane_load.val();
        self.wq_a.raddr.next = self.wq.lane_raddr.val();
        self.wq_a.skid.next = self.wq.lane_skid.val();
        self.wq_a.from_skid.next = self.wq.lane_from_skid.val();
        self.wq_last.store.next = self.wq.lane_store.val();
        self.wq_last.waddr.next = self.wq.lane_waddr.val();
        self.wq_last.load.next = self.wq.lane_load.val();
        self.wq_last.raddr.next = self.wq.lane_raddr.val();
        self.wq_last.skid.next = self.wq.lane_skid.val();
        self.wq_last.from_skid.next = self.wq.lane_from_skid.val();
        self.wq_disc.store.next = self.wq.lane_store.val();
        self.wq_disc.waddr.next = self.wq.lane_waddr.val();
        self.wq_disc.load.next = self.wq.lane_load.val();
        self.wq_disc.raddr.next = self.wq.lane_raddr.val();
        self.wq_disc.skid.next = self.wq.lane_skid.val();
        self.wq_disc.from_skid.next = self.wq.lane_from_skid.val();
        self.wq_imm.store.next = self.wq.lane_store.val();
        self.wq_imm.waddr.next = self.wq.lane_waddr.val();
        self.wq_imm.load.next = self.wq.lane_load.val();
        self.wq_imm.raddr.next = self.wq.lane_raddr.val();
        self.wq_imm.skid.next = self.wq.lane_skid.val();
        self.wq_imm.from_skid.next = self.wq.lane_from_skid.val();
        self.wq_data.store.next = self.wq.lane_store.val();
        self.wq_data.waddr.next = self.wq.lane_waddr.val();
        self.wq_data.load.next = self.wq.lane_load.val();
        self.wq_data.raddr.next = self.wq.lane_raddr.val();
        self.wq_data.skid.next = self.wq.lane_skid.val();
        self.wq_data.from_skid.next = self.wq.lane_from_skid.val();
        self.pf_keep.store.next = self.pf.lane_store.val();
        self.pf_keep.waddr.next = self.pf.lane_waddr.val();
        self.pf_keep.load.next = self.pf.lane_load.val();
        self.pf_keep.raddr.next = self.pf.lane_raddr.val();
        self.pf_keep.skid.next = self.pf.lane_skid.val();
        self.pf_keep.from_skid.next = self.pf.lane_from_skid.val();
        self.pf_last.store.next = self.pf.lane_store.val();
        self.pf_last.waddr.next = self.pf.lane_waddr.val();
        self.pf_last.load.next = self.pf.lane_load.val();
        self.pf_last.raddr.next = self.pf.lane_raddr.val();
        self.pf_last.skid.next = self.pf.lane_skid.val();
        self.pf_last.from_skid.next = self.pf.lane_from_skid.val();
        self.wf_strb.store.next = self.wf.lane_store.val();
        self.wf_strb.waddr.next = self.wf.lane_waddr.val();
        self.wf_strb.load.next = self.wf.lane_load.val();
        self.wf_strb.raddr.next = self.wf.lane_raddr.val();
        self.wf_strb.skid.next = self.wf.lane_skid.val();
        self.wf_strb.from_skid.next = self.wf.lane_from_skid.val();
        self.wf_last.store.next = self.wf.lane_store.val();
        self.wf_last.waddr.next = self.wf.lane_waddr.val();
        self.wf_last.load.next = self.wf.lane_load.val();
        self.wf_last.raddr.next = self.wf.lane_raddr.val();
        self.wf_last.skid.next = self.wf.lane_skid.val();
        self.wf_last.from_skid.next = self.wf.lane_from_skid.val();
        self.rq_hasb.store.next = self.rq.lane_store.val();
        self.rq_hasb.waddr.next = self.rq.lane_waddr.val();
        self.rq_hasb.load.next = self.rq.lane_load.val();
        self.rq_hasb.raddr.next = self.rq.lane_raddr.val();
        self.rq_hasb.skid.next = self.rq.lane_skid.val();
        self.rq_hasb.from_skid.next = self.rq.lane_from_skid.val();
        // ---- Commands ----
        // Every command enters the data engine's queue; one with bytes to
        // write also the burst splitter's.
        self.s_cmd_ready.next = !self.aq.full.val() & !self.wq.full.val();
        self.accept.next = self.s_cmd_valid.val() & !self.aq.full.val() & !self.wq.full.val();
        self.aq.write.next =
            self.accept.val() & !self.s_cmd_discard.val() & self.s_cmd_len.val().any();
        self.aq.data_in.next = self.s_cmd_addr.val();
        self.aq_len.data_in.next = self.s_cmd_len.val();
        self.wq.write.next = self.accept.val();
        self.wq.data_in.next = self.s_cmd_len.val();
        self.wq_a.data_in.next = bit_cast::<16, 64>(self.s_cmd_addr.val());
        self.wq_last.data_in.next = self.s_cmd_last.val();
        self.wq_disc.data_in.next = self.s_cmd_discard.val();
        self.wq_imm.data_in.next = self.s_cmd_imm.val();
        self.wq_data.data_in.next = self.s_cmd_data.val();

        // ---- Burst splitter: one AW a cycle ----
        // A burst ends at the command's end or at the next multiple of
        // MAXB (min(4096, 256 K) bytes): never 256 beats, never a 4 KiB
        // crossing.
        self.aq.read.next = !self.sp_act.q.val() & !self.aq.empty.val();
        if !self.sp_act.q.val() & !self.aq.empty.val() {
            self.sp_act.d.next = true;
            self.sp_addr.d.next = self.aq.data_out.val();
            self.sp_rem.d.next = self.aq_len.data_out.val();
        }
        self.bound.next =
            self.maxb.val() - (bit_cast::<16, 64>(self.sp_addr.q.val()) & self.maxb_mask.val());
        self.sp_lastb.next = self.sp_rem.q.val() <= bit_cast::<32, 16>(self.bound.val());
        if self.sp_lastb.val() {
            self.bb.next = bit_cast::<16, 32>(self.sp_rem.q.val());
        } else {
            self.bb.next = self.bound.val();
        }
        self.beats.next = ((bit_cast::<16, 64>(self.sp_addr.q.val()) & self.kmask16.val())
            + self.bb.val()
            + self.kmask16.val())
            >> self.kshift.val();
        self.emit.next = self.sp_act.q.val()
            & (!self.aw_valid.q.val() | self.m_axi_awready.val())
            & !self.bq.full.val();
        self.bq.write.next = self.emit.val();
        self.bq.data_in.next = self.sp_lastb.val();
        if self.emit.val() {
            self.aw_valid.d.next = true;
            self.aw_addr.d.next = self.sp_addr.q.val() & self.amask.val();
            self.aw_len.d.next = bit_cast::<8, 16>(self.beats.val() - 1);
            self.sp_addr.d.next = self.sp_addr.q.val() + bit_cast::<64, 16>(self.bb.val());
            self.sp_rem.d.next = self.sp_rem.q.val() - bit_cast::<32, 16>(self.bb.val());
            if self.sp_lastb.val() {
                self.sp_act.d.next = false;
            }
        } else if self.m_axi_awready.val() {
            self.aw_valid.d.next = false;
        }
        self.m_axi_awvalid.next = self.aw_valid.q.val();
        self.m_axi_awaddr.next = self.aw_addr.q.val();
        self.m_axi_awlen.next = self.aw_len.q.val();
        self.m_axi_awsize.next = self.awsize.val();
        self.m_axi_awburst.next = 1.into();

        // ---- B: one per burst, in order; a command's result after its last ----
        self.m_axi_bready.next = !self.bq.empty.val() & !self.cq.full.val();
        self.bt.next = self.m_axi_bvalid.val() & !self.bq.empty.val() & !self.cq.full.val();
        self.bq.read.next = self.bt.val();
        self.cq.write.next = self.bt.val() & self.bq.data_out.val();
        self.cq.data_in.next = self.b_acc.q.val() | self.m_axi_bresp.val().any();
        if self.bt.val() {
            if self.bq.data_out.val() {
                self.b_acc.d.next = false;
            } else {
                self.b_acc.d.next = self.b_acc.q.val() | self.m_axi_bresp.val().any();
            }
        }

        // ---- Completions, in command order ----
        self.m_done_valid.next =
            !self.rq.empty.val() & (!self.rq_hasb.data_out.val() | !self.cq.empty.val());
        self.m_done_err.next =
            self.rq.data_out.val() | (self.rq_hasb.data_out.val() & self.cq.data_out.val());
        self.done.next = self.m_done_ready.val()
            & !self.rq.empty.val()
            & (!self.rq_hasb.data_out.val() | !self.cq.empty.val());
        self.rq.read.next = self.done.val();
        self.cq.read.next = self.done.val() & self.rq_hasb.data_out.val();
        if self.accept.val() & !self.done.val() {
            self.pend.d.next = self.pend.q.val() + 1;
        } else if self.done.val() & !self.accept.val() {
            self.pend.d.next = self.pend.q.val() - 1;
        }
        self.idle.next = !self.pend.q.val().any();

        // ---- Payload in ----
        self.s_pay.tready.next = !self.pf.full.val();
        self.pf.write.next = self.s_pay.tvalid.val();
        self.pf.data_in.next = self.s_pay.tdata.val();
        self.pf_keep.data_in.next = self.s_pay.tkeep.val();
        self.pf_last.data_in.next = self.s_pay.tlast.val();

        // ---- Data engine: one W beat (or one discarded beat) a cycle ----
        self.ld.next = !self.e_act.q.val() & !self.wq.empty.val() & !self.rq.full.val();
        self.wq.read.next = self.ld.val();
        // This beat's lanes: [l, l + c) of the beat at `e_abeat`, from
        // registers set a beat ahead.
        self.l.next = self.g_l.q.val();
        self.c.next = self.g_c.q.val();
        self.lastb.next = self.g_lastb.q.val();
        self.strb.next = self.g_strb.q.val();
        // The first beat's, from the queue's head (loaded at `ld`): lanes
        // from `addr mod K`; and the next beat's (loaded at `go`): lanes
        // from 0, `min(nrem, K)` of them.
        self.l0.next = bit_cast::<8, 16>(self.wq_a.data_out.val()) & self.kmask.val();
        self.room0.next = self.kconst.val() - self.l0.val();
        self.lastb0.next = self.wq.data_out.val() <= bit_cast::<32, 8>(self.room0.val());
        if self.lastb0.val() {
            self.c0.next = bit_cast::<8, 32>(self.wq.data_out.val());
        } else {
            self.c0.next = self.room0.val();
        }
        self.n_lastb.next = self.nrem.q.val() <= bit_cast::<32, 8>(self.kconst.val());
        if self.n_lastb.val() {
            self.n_c.next = bit_cast::<8, 32>(self.nrem.q.val());
        } else {
            self.n_c.next = self.kconst.val();
        }
        if self.ld.val() {
            self.ck_l.c.next = self.l0.val();
            self.ck_h.c.next = self.l0.val() + self.c0.val();
        } else {
            self.ck_l.c.next = 0.into();
            self.ck_h.c.next = self.n_c.val();
        }
        // Source: stream byte `pp + (j - l)` of the window {B1, B0} (or of
        // the immediate word) goes to lane `j`: funnel {hi, lo} by
        // `(pp - l) mod K`; when the command starts before lane `pp`'s
        // lane in B0, all its bytes are in B0 (hi = lo: a rotation).
        if self.e_imm.q.val() {
            self.pp.next = self.e_ip.q.val();
            self.src_lo.next = bit_cast::<W, 64>(self.e_data.q.val());
        } else {
            self.pp.next = self.p.q.val();
            self.src_lo.next = self.b0.q.val();
        }
        self.useb0.next = self.e_imm.q.val() | (self.pp.val() < self.l.val());
        self.pc.next = self.p.q.val() + self.c.val();
        self.need1.next = self.pc.val() > self.kconst.val();
        self.fun.lo.next = self.src_lo.val();
        if self.useb0.val() {
            self.fun.hi.next = self.src_lo.val();
        } else {
            self.fun.hi.next = self.pf.data_out.val();
        }
        self.fun.d.next = (self.pp.val() - self.l.val()) & self.kmask.val();
        // The same funnel over the keep bits: which lanes have a byte.
        self.fun_k.lo.next = self.b0_keep.q.val();
        if self.useb0.val() {
            self.fun_k.hi.next = self.b0_keep.q.val();
        } else if self.b0_last.q.val() | self.pf.empty.val() {
            self.fun_k.hi.next = 0.into();
        } else {
            self.fun_k.hi.next = self.pf_keep.data_out.val();
        }
        self.fun_k.d.next = (self.pp.val() - self.l.val()) & self.kmask.val();
        if self.ended.q.val() {
            self.vm.next = 0.into();
        } else {
            self.vm.next = self.fun_k.y.val();
        }
        // The stream path: a stream command neither dead (an earlier
        // command of its packet failed) nor failed itself.
        self.spath.next = !self.e_imm.q.val() & !self.dead.q.val() & !self.e_err.q.val();
        self.sok.next = !self.resync.q.val()
            & (self.ended.q.val()
                | (self.v0.q.val()
                    & (!self.need1.val() | self.b0_last.q.val() | !self.pf.empty.val())));
        self.missing.next = self.spath.val() & (self.strb.val() & !self.vm.val()).any();
        self.go.next = self.e_act.q.val()
            & !self.g_zero.q.val()
            & (!self.e_hasb.q.val() | !self.wf.full.val())
            & (!self.spath.val() | self.sok.val());
        // A zero-length command: a `last` one of a live packet waits for
        // the stream to be resynchronised, then checks the beat it ends in.
        self.zgo.next = self.e_act.q.val()
            & self.g_zero.q.val()
            & (self.e_imm.q.val()
                | self.dead.q.val()
                | !self.e_last.q.val()
                | !self.resync.q.val());
        // The beat holding the command's final byte is a tlast beat.
        if self.pc.val() > self.kconst.val() {
            self.fin_tlast.next = self.pf_last.data_out.val();
        } else {
            self.fin_tlast.next = self.b0_last.q.val();
        }
        self.wf.write.next = self.go.val() & self.e_hasb.q.val();
        self.wf.data_in.next = self.fun.y.val();
        if self.e_imm.q.val() {
            self.wf_strb.data_in.next = self.strb.val();
        } else if self.spath.val() {
            self.wf_strb.data_in.next = self.strb.val() & self.vm.val();
        } else {
            self.wf_strb.data_in.next = 0.into();
        }
        self.wf_last.data_in.next =
            self.lastb.val() | ((self.e_abeat.q.val() & self.bmask.val()) == self.bmask.val());
        self.err_now.next = false;
        self.bpop.next = false;
        self.rq.write.next = false;
        self.rq_hasb.data_in.next = self.e_hasb.q.val();
        if self.ld.val() {
            self.e_act.d.next = true;
            self.g_l.d.next = self.l0.val();
            self.g_c.d.next = self.c0.val();
            self.g_lastb.d.next = self.lastb0.val();
            self.g_strb.d.next = self.ck_h.keep.val() & !self.ck_l.keep.val();
            self.g_zero.d.next = !self.wq.data_out.val().any();
            self.nrem.d.next = self.wq.data_out.val() - bit_cast::<32, 8>(self.c0.val());
            self.e_abeat.d.next = self.wq_a.data_out.val() & !self.kmask16.val();
            self.e_last.d.next = self.wq_last.data_out.val();
            self.e_imm.d.next = self.wq_imm.data_out.val();
            self.e_hasb.d.next = !self.wq_disc.data_out.val() & self.wq.data_out.val().any();
            self.e_data.d.next = self.wq_data.data_out.val();
            self.e_ip.d.next = 0.into();
            self.e_err.d.next = false;
        }
        if self.go.val() {
            self.g_l.d.next = 0.into();
            self.g_c.d.next = self.n_c.val();
            self.g_lastb.d.next = self.n_lastb.val();
            self.g_strb.d.next = self.ck_h.keep.val();
            self.nrem.d.next = self.nrem.q.val() - bit_cast::<32, 8>(self.n_c.val());
            self.e_abeat.d.next = self.e_abeat.q.val() + self.kconst16.val();
            self.e_ip.d.next = self.e_ip.q.val() + self.c.val();
            if self.spath.val() {
                if self.missing.val() {
                    // The packet ended before the command's bytes: write
                    // what arrived, skip to the packet's end, fail.
                    self.err_now.next = true;
                    self.e_err.d.next = true;
                    self.resync.d.next = !self.ended.q.val();
                } else {
                    self.p.d.next = self.pc.val() & self.kmask.val();
                    self.bpop.next = self.pc.val() >= self.kconst.val();
                    if (self.pc.val() >= self.kconst.val()) & self.b0_last.q.val() {
                        self.ended.d.next = true;
                    }
                    if self.lastb.val() & self.e_last.q.val() {
                        // The packet's last command: its final byte must
                        // be in the tlast beat; skip the rest of that beat
                        // (or, if it is not the tlast beat, up to and
                        // including the next tlast beat).
                        self.err_now.next = !self.fin_tlast.val();
                        self.resync.d.next =
                            !self.fin_tlast.val() | (self.pc.val() != self.kconst.val());
                    }
                }
            }
            if self.lastb.val() {
                self.e_act.d.next = false;
                self.rq.write.next = true;
            }
        }
        if self.zgo.val() {
            self.e_act.d.next = false;
            self.rq.write.next = true;
            if !self.e_imm.q.val()
                & !self.dead.q.val()
                & self.e_last.q.val()
                & !self.ended.q.val()
                & self.p.q.val().any()
            {
                // Bytes of the tlast beat are left: skip them.
                self.resync.d.next = true;
                self.err_now.next = !self.b0_last.q.val();
            }
        }
        // End of a command: a `last` one ends its packet (a dead packet
        // comes back to life); a failed one kills the rest of its packet.
        if ((self.go.val() & self.lastb.val()) | self.zgo.val()) & !self.e_imm.q.val() {
            if self.e_last.q.val() {
                self.dead.d.next = false;
                self.ended.d.next = false;
            } else if self.e_err.q.val() | self.err_now.val() {
                self.dead.d.next = true;
                self.ended.d.next = false;
            }
        }
        self.rq.data_in.next =
            self.e_err.q.val() | self.err_now.val() | (self.dead.q.val() & !self.e_imm.q.val());
        self.err_q.d.next = self.err_now.val();
        self.c_serr.inc.next = self.err_q.q.val();
        // Resynchronising: drop beats up to and including a tlast beat.
        self.rpop.next = self.resync.q.val() & self.v0.q.val();
        if self.rpop.val() {
            self.p.d.next = 0.into();
            if self.b0_last.q.val() {
                self.resync.d.next = false;
            }
        }
        // B0 refill from the payload FIFO.
        self.take.next =
            (self.bpop.val() | self.rpop.val() | !self.v0.q.val()) & !self.pf.empty.val();
        self.pf.read.next = self.take.val();
        if self.take.val() {
            self.b0.d.next = self.pf.data_out.val();
            self.b0_keep.d.next = self.pf_keep.data_out.val();
            self.b0_last.d.next = self.pf_last.data_out.val();
            self.v0.d.next = true;
        } else if self.bpop.val() | self.rpop.val() {
            self.v0.d.next = false;
        }

        // ---- W out ----
        self.m_axi_wvalid.next = !self.wf.empty.val();
        self.m_axi_wdata.next = self.wf.data_out.val();
        self.m_axi_wstrb.next = self.wf_strb.data_out.val();
        self.m_axi_wlast.next = self.wf_last.data_out.val();
        self.wf.read.next = self.m_axi_wready.val();

        self.cnt_stream_err.next = self.c_serr.count.val();
        self.c_serr.clear.next = self.reset.val();

        // ---- Synchronous reset ----
        if self.reset.val() {
            self.sp_act.d.next = false;
            self.aw_valid.d.next = false;
            self.b_acc.d.next = false;
            self.pend.d.next = 0.into();
            self.e_act.d.next = false;
            self.err_q.d.next = false;
            self.v0.d.next = false;
            self.p.d.next = 0.into();
            self.resync.d.next = false;
            self.dead.d.next = false;
            self.ended.d.next = false;
        }
    }
}

/// The read engine: "read `len` bytes at `addr` into the output stream".
/// `W` is the data width, `K = W / 8` (checked in `new()`).
#[derive(LogicBlock)]
pub struct DmaRd<const W: usize, const K: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // Commands.
    pub s_cmd_valid: Signal<In, Bit>,
    pub s_cmd_ready: Signal<Out, Bit>,
    pub s_cmd_addr: Signal<In, Bits<64>>,
    pub s_cmd_len: Signal<In, Bits<32>>,
    pub s_cmd_last: Signal<In, Bit>,
    // AXI4 read channels.
    pub m_axi_araddr: Signal<Out, Bits<64>>,
    pub m_axi_arlen: Signal<Out, Bits<8>>,
    pub m_axi_arsize: Signal<Out, Bits<3>>,
    pub m_axi_arburst: Signal<Out, Bits<2>>,
    pub m_axi_arvalid: Signal<Out, Bit>,
    pub m_axi_arready: Signal<In, Bit>,
    pub m_axi_rdata: Signal<In, Bits<W>>,
    pub m_axi_rresp: Signal<In, Bits<2>>,
    pub m_axi_rlast: Signal<In, Bit>,
    pub m_axi_rvalid: Signal<In, Bit>,
    pub m_axi_rready: Signal<Out, Bit>,
    // Data out.
    pub m_data: StreamOut<W, K>,
    // Status.
    pub idle: Signal<Out, Bit>,

    // Queues: commands (address; length, last beside), bursts issued
    // (beats - 1; first lane, end lane of the last beat, ends a packet),
    // R beats (data; error beside), output beats.
    cq: SyncFifo<Bits<64>, 2, 3>,
    cq_len: FifoLane<Bits<32>, 2>,
    cq_last: FifoLane<Bit, 2>,
    jq: SyncFifo<Bits<8>, 4, 5>,
    jq_lo: FifoLane<Bits<8>, 4>,
    jq_hi: FifoLane<Bits<8>, 4>,
    jq_pend: FifoLane<Bit, 4>,
    rf: SyncFifo<Bits<W>, 6, 7>,
    rf_err: FifoLane<Bit, 6>,
    of: SyncFifo<Bits<W>, 2, 3>,
    of_keep: FifoLane<Bits<K>, 2>,
    of_last: FifoLane<Bit, 2>,
    of_user: FifoLane<Bit, 2>,
    fun: Funnel<W>,
    mux: LaneMux<W, K>,
    ck_q: CountKeep<K>,
    ck_e: CountKeep<K>,

    // Burst splitter and the AR register.
    sp_act: DFF<Bit>,
    sp_addr: DFF<Bits<64>>,
    sp_rem: DFF<Bits<32>>,
    sp_last: DFF<Bit>,
    ar_valid: DFF<Bit>,
    ar_addr: DFF<Bits<64>>,
    ar_len: DFF<Bits<8>>,
    /// R beats requested and not yet taken from the R FIFO.
    cred: DFF<Bits<8>>,
    // Packer.
    acc: DFF<Bits<W>>,
    q: DFF<Bits<8>>,
    bi: DFF<Bits<8>>,
    perr: DFF<Bit>,
    flush: DFF<Bit>,

    // Constants.
    kconst: Constant<Bits<8>>,
    kmask: Constant<Bits<8>>,
    kmask16: Constant<Bits<16>>,
    kshift: Constant<Bits<8>>,
    amask: Constant<Bits<64>>,
    maxb: Constant<Bits<16>>,
    maxb_mask: Constant<Bits<16>>,
    rbuf: Constant<Bits<8>>,
    arsize: Constant<Bits<3>>,
    keep_ones: Constant<Bits<K>>,

    // Combinational.
    accept: Signal<Local, Bit>,
    bound: Signal<Local, Bits<16>>,
    sp_lastb: Signal<Local, Bit>,
    bb: Signal<Local, Bits<16>>,
    beats: Signal<Local, Bits<16>>,
    end_lane: Signal<Local, Bits<8>>,
    emit: Signal<Local, Bit>,
    pk: Signal<Local, Bit>,
    firstb: Signal<Local, Bit>,
    lastb: Signal<Local, Bit>,
    l: Signal<Local, Bits<8>>,
    h: Signal<Local, Bits<8>>,
    qc: Signal<Local, Bits<8>>,
    pend_end: Signal<Local, Bit>,
    err: Signal<Local, Bit>,
}

impl<const W: usize, const K: usize> DmaRd<W, K> {
    /// Largest burst in bytes.
    pub const MAX_BURST: usize = rd_max_burst(K);

    pub fn new() -> Self {
        check_width("DmaRd", W, K);
        let maxb = rd_max_burst(K);
        let keep_ones = if K >= 64 { u64::MAX } else { (1u64 << K) - 1 };
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_cmd_valid: Default::default(),
            s_cmd_ready: Default::default(),
            s_cmd_addr: Default::default(),
            s_cmd_len: Default::default(),
            s_cmd_last: Default::default(),
            m_axi_araddr: Default::default(),
            m_axi_arlen: Default::default(),
            m_axi_arsize: Default::default(),
            m_axi_arburst: Default::default(),
            m_axi_arvalid: Default::default(),
            m_axi_arready: Default::default(),
            m_axi_rdata: Default::default(),
            m_axi_rresp: Default::default(),
            m_axi_rlast: Default::default(),
            m_axi_rvalid: Default::default(),
            m_axi_rready: Default::default(),
            m_data: Default::default(),
            idle: Default::default(),
            cq: SyncFifo::new(),
            cq_len: FifoLane::new(),
            cq_last: FifoLane::new(),
            jq: SyncFifo::new(),
            jq_lo: FifoLane::new(),
            jq_hi: FifoLane::new(),
            jq_pend: FifoLane::new(),
            rf: SyncFifo::new(),
            rf_err: FifoLane::new(),
            of: SyncFifo::new(),
            of_keep: FifoLane::new(),
            of_last: FifoLane::new(),
            of_user: FifoLane::new(),
            fun: Funnel::new(8),
            mux: LaneMux::new(),
            ck_q: CountKeep::new(0),
            ck_e: CountKeep::new(0),
            sp_act: Default::default(),
            sp_addr: Default::default(),
            sp_rem: Default::default(),
            sp_last: Default::default(),
            ar_valid: Default::default(),
            ar_addr: Default::default(),
            ar_len: Default::default(),
            cred: Default::default(),
            acc: Default::default(),
            q: Default::default(),
            bi: Default::default(),
            perr: Default::default(),
            flush: Default::default(),
            kconst: Constant::new((K as u64).into()),
            kmask: Constant::new(((K - 1) as u64).into()),
            kmask16: Constant::new(((K - 1) as u64).into()),
            kshift: Constant::new((K.trailing_zeros() as u64).into()),
            amask: Constant::new((!((K - 1) as u64)).into()),
            maxb: Constant::new((maxb as u64).into()),
            maxb_mask: Constant::new(((maxb - 1) as u64).into()),
            rbuf: Constant::new((RD_BUF_BEATS as u64).into()),
            arsize: Constant::new((K.trailing_zeros() as u64).into()),
            keep_ones: Constant::new(keep_ones.into()),
            accept: Default::default(),
            bound: Default::default(),
            sp_lastb: Default::default(),
            bb: Default::default(),
            beats: Default::default(),
            end_lane: Default::default(),
            emit: Default::default(),
            pk: Default::default(),
            firstb: Default::default(),
            lastb: Default::default(),
            l: Default::default(),
            h: Default::default(),
            qc: Default::default(),
            pend_end: Default::default(),
            err: Default::default(),
        }
    }
}

impl<const W: usize, const K: usize> Default for DmaRd<W, K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const K: usize> Logic for DmaRd<W, K> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, sp_act, sp_addr, sp_rem, sp_last, ar_valid, ar_addr, ar_len, cred, acc, q,
            bi, perr, flush
        );
        clock!(
            self, clock, cq, cq_len, cq_last, jq, jq_lo, jq_hi, jq_pend, rf, rf_err, of, of_keep,
            of_last, of_user
        );
        self.cq.reset.next = self.reset.val();
        self.jq.reset.next = self.reset.val();
        self.rf.reset.next = self.reset.val();
        self.of.reset.next = self.reset.val();
        self.cq_len.store.next = self.cq.lane_store.val();
        self.cq_len.waddr.next = self.cq.lane_waddr.val();
        self.cq_len.load.next = self.cq.lane_load.val();
        self.cq_len.raddr.next = self.cq.lane_raddr.val();
        self.cq_len.skid.next = self.cq.lane_skid.val();
        self.cq_len.from_skid.next = self.cq.lane_from_skid.val();
        self.cq_last.store.next = self.cq.lane_store.val();
        self.cq_last.waddr.next = self.cq.lane_waddr.val();
        self.cq_last.load.next = self.cq.lane_load.val();
        self.cq_last.raddr.next = self.cq.lane_raddr.val();
        self.cq_last.skid.next = self.cq.lane_skid.val();
        self.cq_last.from_skid.next = self.cq.lane_from_skid.val();
        self.jq_lo.store.next = self.jq.lane_store.val();
        self.jq_lo.waddr.next = self.jq.lane_waddr.val();
        self.jq_lo.load.next = self.jq.lane_load.val();
        self.jq_lo.raddr.next = self.jq.lane_raddr.val();
        self.jq_lo.skid.next = self.jq.lane_skid.val();
        self.jq_lo.from_skid.next = self.jq.lane_from_skid.val();
        self.jq_hi.store.next = self.jq.lane_store.val();
        self.jq_hi.waddr.next = self.jq.lane_waddr.val();
        self.jq_hi.load.next = self.jq.lane_load.val();
        self.jq_hi.raddr.next = self.jq.lane_raddr.val();
        self.jq_hi.skid.next = self.jq.lane_skid.val();
        self.jq_hi.from_skid.next = self.jq.lane_from_skid.val();
        self.jq_pend.store.next = self.jq.lane_store.val();
        self.jq_pend.waddr.next = self.jq.lane_waddr.val();
        self.jq_pend.load.next = self.jq.lane_load.val();
        self.jq_pend.raddr.next = self.jq.lane_raddr.val();
        self.jq_pend.skid.next = self.jq.lane_skid.val();
        self.jq_pend.from_skid.next = self.jq.lane_from_skid.val();
        self.rf_err.store.next = self.rf.lane_store.val();
        self.rf_err.waddr.next = self.rf.lane_waddr.val();
        self.rf_err.load.next = self.rf.lane_load.val();
        self.rf_err.raddr.next = self.rf.lane_raddr.val();
        self.rf_err.skid.next = self.rf.lane_skid.val();
        self.rf_err.from_skid.next = self.rf.lane_from_skid.val();
        self.of_keep.store.next = self.of.lane_store.val();
        self.of_keep.waddr.next = self.of.lane_waddr.val();
        self.of_keep.load.next = self.of.lane_load.val();
        self.of_keep.raddr.next = self.of.lane_raddr.val();
        self.of_keep.skid.next = self.of.lane_skid.val();
        self.of_keep.from_skid.next = self.of.lane_from_skid.val();
        self.of_last.store.next = self.of.lane_store.val();
        self.of_last.waddr.next = self.of.lane_waddr.val();
        self.of_last.load.next = self.of.lane_load.val();
        self.of_last.raddr.next = self.of.lane_raddr.val();
        self.of_last.skid.next = self.of.lane_skid.val();
        self.of_last.from_skid.next = self.of.lane_from_skid.val();
        self.of_user.store.next = self.of.lane_store.val();
        self.of_user.waddr.next = self.of.lane_waddr.val();
        self.of_user.load.next = self.of.lane_load.val();
        self.of_user.raddr.next = self.of.lane_raddr.val();
        self.of_user.skid.next = self.of.lane_skid.val();
        self.of_user.from_skid.next = self.of.lane_from_skid.val();
        // ---- Commands (a zero-length one is accepted and ignored) ----
        self.s_cmd_ready.next = !self.cq.full.val();
        self.accept.next = self.s_cmd_valid.val() & !self.cq.full.val();
        self.cq.write.next = self.accept.val() & self.s_cmd_len.val().any();
        self.cq.data_in.next = self.s_cmd_addr.val();
        self.cq_len.data_in.next = self.s_cmd_len.val();
        self.cq_last.data_in.next = self.s_cmd_last.val();

        // ---- Burst splitter: one AR a cycle, while the R FIFO has room
        // for every beat requested ----
        self.cq.read.next = !self.sp_act.q.val() & !self.cq.empty.val();
        if !self.sp_act.q.val() & !self.cq.empty.val() {
            self.sp_act.d.next = true;
            self.sp_addr.d.next = self.cq.data_out.val();
            self.sp_rem.d.next = self.cq_len.data_out.val();
            self.sp_last.d.next = self.cq_last.data_out.val();
        }
        self.bound.next =
            self.maxb.val() - (bit_cast::<16, 64>(self.sp_addr.q.val()) & self.maxb_mask.val());
        self.sp_lastb.next = self.sp_rem.q.val() <= bit_cast::<32, 16>(self.bound.val());
        if self.sp_lastb.val() {
            self.bb.next = bit_cast::<16, 32>(self.sp_rem.q.val());
        } else {
            self.bb.next = self.bound.val();
        }
        self.beats.next = ((bit_cast::<16, 64>(self.sp_addr.q.val()) & self.kmask16.val())
            + self.bb.val()
            + self.kmask16.val())
            >> self.kshift.val();
        self.end_lane.next =
            (bit_cast::<8, 16>(bit_cast::<16, 64>(self.sp_addr.q.val()) + self.bb.val() - 1)
                & self.kmask.val())
                + 1;
        self.emit.next = self.sp_act.q.val()
            & (!self.ar_valid.q.val() | self.m_axi_arready.val())
            & !self.jq.full.val()
            & ((self.cred.q.val() + bit_cast::<8, 16>(self.beats.val())) <= self.rbuf.val());
        self.jq.write.next = self.emit.val();
        self.jq.data_in.next = bit_cast::<8, 16>(self.beats.val() - 1);
        self.jq_lo.data_in.next = bit_cast::<8, 64>(self.sp_addr.q.val()) & self.kmask.val();
        self.jq_hi.data_in.next = self.end_lane.val();
        self.jq_pend.data_in.next = self.sp_lastb.val() & self.sp_last.q.val();
        if self.emit.val() {
            self.ar_valid.d.next = true;
            self.ar_addr.d.next = self.sp_addr.q.val() & self.amask.val();
            self.ar_len.d.next = bit_cast::<8, 16>(self.beats.val() - 1);
            self.sp_addr.d.next = self.sp_addr.q.val() + bit_cast::<64, 16>(self.bb.val());
            self.sp_rem.d.next = self.sp_rem.q.val() - bit_cast::<32, 16>(self.bb.val());
            if self.sp_lastb.val() {
                self.sp_act.d.next = false;
            }
        } else if self.m_axi_arready.val() {
            self.ar_valid.d.next = false;
        }
        self.m_axi_arvalid.next = self.ar_valid.q.val();
        self.m_axi_araddr.next = self.ar_addr.q.val();
        self.m_axi_arlen.next = self.ar_len.q.val();
        self.m_axi_arsize.next = self.arsize.val();
        self.m_axi_arburst.next = 1.into();

        // ---- R in ----
        self.m_axi_rready.next = !self.rf.full.val();
        self.rf.write.next = self.m_axi_rvalid.val();
        self.rf.data_in.next = self.m_axi_rdata.val();
        self.rf_err.data_in.next = self.m_axi_rresp.val().any();

        // ---- Packer: R beat lanes [l, h) appended at output lane q ----
        self.pk.next =
            !self.rf.empty.val() & !self.jq.empty.val() & !self.flush.q.val() & !self.of.full.val();
        self.rf.read.next = self.pk.val();
        self.firstb.next = !self.bi.q.val().any();
        self.lastb.next = self.bi.q.val() == self.jq.data_out.val();
        if self.firstb.val() {
            self.l.next = self.jq_lo.data_out.val();
        } else {
            self.l.next = 0.into();
        }
        if self.lastb.val() {
            self.h.next = self.jq_hi.data_out.val();
        } else {
            self.h.next = self.kconst.val();
        }
        self.qc.next = self.q.q.val() + self.h.val() - self.l.val();
        self.fun.hi.next = self.rf.data_out.val();
        self.fun.lo.next = self.rf.data_out.val();
        self.fun.d.next = (self.l.val() - self.q.q.val()) & self.kmask.val();
        self.ck_q.c.next = self.q.q.val();
        self.mux.a.next = self.acc.q.val();
        self.mux.b.next = self.fun.y.val();
        self.mux.sel.next = self.ck_q.keep.val();
        self.pend_end.next = self.lastb.val() & self.jq_pend.data_out.val();
        self.err.next = self.perr.q.val() | self.rf_err.data_out.val();
        self.jq.read.next = self.pk.val() & self.lastb.val();
        if self.flush.q.val() {
            self.ck_e.c.next = self.q.q.val();
        } else {
            self.ck_e.c.next = self.qc.val();
        }
        self.of.write.next = false;
        self.of.data_in.next = self.mux.y.val();
        self.of_keep.data_in.next = self.keep_ones.val();
        self.of_last.data_in.next = false;
        self.of_user.data_in.next = false;
        if self.pk.val() {
            if self.lastb.val() {
                self.bi.d.next = 0.into();
            } else {
                self.bi.d.next = self.bi.q.val() + 1;
            }
            self.perr.d.next = self.err.val();
            if self.qc.val() >= self.kconst.val() {
                // A full beat out; the bytes past it stay in `acc`.
                self.of.write.next = true;
                self.acc.d.next = self.fun.y.val();
                self.q.d.next = self.qc.val() & self.kmask.val();
                if self.pend_end.val() {
                    if self.qc.val() == self.kconst.val() {
                        self.of_last.data_in.next = true;
                        self.of_user.data_in.next = self.err.val();
                        self.perr.d.next = false;
                    } else {
                        self.flush.d.next = true;
                    }
                }
            } else if self.pend_end.val() {
                self.of.write.next = true;
                self.of_keep.data_in.next = self.ck_e.keep.val();
                self.of_last.data_in.next = true;
                self.of_user.data_in.next = self.err.val();
                self.q.d.next = 0.into();
                self.perr.d.next = false;
            } else {
                self.acc.d.next = self.mux.y.val();
                self.q.d.next = self.qc.val();
            }
        }
        if self.flush.q.val() & !self.of.full.val() {
            self.of.write.next = true;
            self.of.data_in.next = self.acc.q.val();
            self.of_keep.data_in.next = self.ck_e.keep.val();
            self.of_last.data_in.next = true;
            self.of_user.data_in.next = self.perr.q.val();
            self.flush.d.next = false;
            self.q.d.next = 0.into();
            self.perr.d.next = false;
        }
        if self.pk.val() & !self.emit.val() {
            self.cred.d.next = self.cred.q.val() - 1;
        } else if self.emit.val() & !self.pk.val() {
            self.cred.d.next = self.cred.q.val() + bit_cast::<8, 16>(self.beats.val());
        } else if self.emit.val() & self.pk.val() {
            self.cred.d.next = self.cred.q.val() + bit_cast::<8, 16>(self.beats.val()) - 1;
        }

        // ---- Data out ----
        self.m_data.tvalid.next = !self.of.empty.val();
        self.m_data.tdata.next = self.of.data_out.val();
        self.m_data.tkeep.next = self.of_keep.data_out.val();
        self.m_data.tlast.next = self.of_last.data_out.val();
        self.m_data.tuser.next = self.of_user.data_out.val();
        self.of.read.next = self.m_data.tready.val();

        // Idle: no word in any queue (RAM or output register), no burst
        // being split or offered, no flush pending.
        self.idle.next = self.cq.empty.val()
            & !self.cq.ram_words.val().any()
            & !self.sp_act.q.val()
            & !self.ar_valid.q.val()
            & self.jq.empty.val()
            & !self.jq.ram_words.val().any()
            & self.rf.empty.val()
            & !self.rf.ram_words.val().any()
            & !self.flush.q.val()
            & self.of.empty.val()
            & !self.of.ram_words.val().any();

        // ---- Synchronous reset ----
        if self.reset.val() {
            self.sp_act.d.next = false;
            self.ar_valid.d.next = false;
            self.cred.d.next = 0.into();
            self.q.d.next = 0.into();
            self.bi.d.next = 0.into();
            self.perr.d.next = false;
            self.flush.d.next = false;
        }
    }
}

pub type DmaWr64 = DmaWr<64, 8>;
pub type DmaWr128 = DmaWr<128, 16>;
pub type DmaWr256 = DmaWr<256, 32>;
pub type DmaWr512 = DmaWr<512, 64>;
pub type DmaRd64 = DmaRd<64, 8>;
pub type DmaRd128 = DmaRd<128, 16>;
pub type DmaRd256 = DmaRd<256, 32>;
pub type DmaRd512 = DmaRd<512, 64>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dma_wr_synthesizes() {
        let mut uut = DmaWr64::new();
        uut.connect_all();
        check_all(&uut).unwrap();
        yosys_validate("dma_wr_w64", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn dma_rd_synthesizes() {
        let mut uut = DmaRd64::new();
        uut.connect_all();
        check_all(&uut).unwrap();
        yosys_validate("dma_rd_w64", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn burst_limits() {
        assert_eq!(DmaWr64::MAX_BURST, 2048);
        assert_eq!(DmaWr512::MAX_BURST, 4096);
        assert_eq!(DmaRd64::MAX_BURST, 128);
        assert_eq!(DmaRd512::MAX_BURST, 1024);
    }

    #[test]
    #[should_panic(expected = "keep width")]
    fn widths_are_checked() {
        let _ = DmaWr::<64, 16>::new();
    }
}
