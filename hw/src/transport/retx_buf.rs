//! The requester's retransmit buffer: every sent, un-ACKed request packet
//! (an opaque descriptor word and its payload) in on-chip SRAM, so
//! go-back-N replays without fetching host memory again (issue 35 §2).
//!
//! A shared pool of `S = 2^A` packet slots of `2^B` beats each (one PMTU at
//! `K = W/8` bytes a beat), with one singly linked list per QP (head, tail,
//! valid per QP in block RAM; a `next` pointer per slot), a free-slot FIFO,
//! and three commands:
//!
//! - **store** (`s_pkt_*` + `s_axis`): take a free slot, write the
//!   descriptor into the slot table and the payload into the slot, then
//!   append the slot to its QP's list. `s_pkt_ready` is low while no slot is
//!   free (the window backpressure) and while `busy`. A packet longer than a
//!   slot is refused: its payload is drained, nothing is written, counted.
//! - **ack** (`s_ack_*`): free every packet of the QP, from its list head,
//!   whose PSN is before `s_ack_psn` (24-bit serial compare, rxe's
//!   `psn_compare`: bit 23 of `psn - ack`).
//! - **replay** (`s_replay_*`): send, in list order, every packet of the QP
//!   from the first whose PSN is not before `s_replay_psn` to the newest:
//!   descriptor on `m_pkt_*`, payload on `m_axis` (`tkeep`/`tlast` from the
//!   stored length).
//!
//! **Order.** ACKs and replays act, in the order they were accepted (an ACK
//! before a replay accepted at the same edge), on exactly the packets whose
//! `s_pkt` handshake came at an earlier edge than their own: a packet
//! stored during a replay of its QP (accepted after the replay) is never
//! part of it. The control links stored packets in order and holds a
//! command until the stores accepted before it are linked (`st_done ==
//! snapshot`); no later store is linked before the command has run.
//!
//! **Safety of slot reuse.** An ACK runs only when no replayed payload is
//! waiting to be read from the RAM (`jobs_out == 0`), so a freed slot is
//! never rewritten under a replay. A store writes at most one slot's beats
//! (extra beats up to `tlast` are dropped), so bad input never reaches
//! another slot.
//!
//! Ports, pipeline, latency and resources: docs/ARCHITECTURE.md,
//! "retx_buf".

use crate::bram::{Bram, BramOutReg};
use crate::fifo::{FifoLane, SyncFifo};
use crate::prim::Counter32;
use crate::stream::{check_width, StreamIn, StreamOut};
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

/// Width of the payload-length ports (bytes).
pub const LEN_BITS: usize = 16;
/// Width of a PSN.
pub const PSN_BITS: usize = 24;

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum Ctl {
    /// After reset: clear every QP's list, fill the free-slot FIFO.
    Init,
    /// Pick the next operation (a command, else a link).
    Idle,
    /// ACK: the QP entry moves to the output registers.
    AckWait,
    /// ACK: the QP entry is read; read the head slot.
    AckQp,
    /// ACK: the head slot is read: compare its PSN (registered), read the
    /// next slot.
    AckCmp,
    /// ACK: free the slot at `c_cur` or stop, while the next slot's PSN is
    /// compared and the one after it read (one slot per cycle).
    AckChk,
    /// Replay: the QP entry moves to the output registers.
    RepWait,
    /// Replay: the QP entry is read; read the head slot.
    RepQp,
    /// Replay: the head slot is read: compare, read the next slot.
    RepCmp,
    /// Replay: queue the slot at `c_cur` (or skip it) and go on, as
    /// `AckChk`; holds while the output queues are full.
    RepChk,
}

/// The retransmit buffer. `W`/`K`: stream width and keep width; `Q`: QP
/// index bits; `A`: slot index bits (`S = 2^A` slots), `AP1 = A + 1`; `B`:
/// beat index bits inside a slot (`2^B` beats = `K << B` bytes a slot),
/// `AB = A + B`; `D`: descriptor word bits.
#[derive(LogicBlock)]
pub struct RetxBuf<
    const W: usize,
    const K: usize,
    const Q: usize,
    const A: usize,
    const AP1: usize,
    const B: usize,
    const AB: usize,
    const D: usize,
> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Clearing the tables after reset (`2^Q` cycles): no command taken.
    pub busy: Signal<Out, Bit>,
    // Store.
    pub s_pkt_valid: Signal<In, Bit>,
    pub s_pkt_ready: Signal<Out, Bit>,
    pub s_pkt_qpn: Signal<In, Bits<Q>>,
    pub s_pkt_psn: Signal<In, Bits<PSN_BITS>>,
    pub s_pkt_len: Signal<In, Bits<LEN_BITS>>,
    pub s_pkt_meta: Signal<In, Bits<D>>,
    pub s_axis: StreamIn<W, K>,
    // ACK.
    pub s_ack_valid: Signal<In, Bit>,
    pub s_ack_ready: Signal<Out, Bit>,
    pub s_ack_qpn: Signal<In, Bits<Q>>,
    pub s_ack_psn: Signal<In, Bits<PSN_BITS>>,
    // Replay.
    pub s_replay_valid: Signal<In, Bit>,
    pub s_replay_ready: Signal<Out, Bit>,
    pub s_replay_qpn: Signal<In, Bits<Q>>,
    pub s_replay_psn: Signal<In, Bits<PSN_BITS>>,
    pub m_pkt_valid: Signal<Out, Bit>,
    pub m_pkt_ready: Signal<In, Bit>,
    pub m_pkt_qpn: Signal<Out, Bits<Q>>,
    pub m_pkt_psn: Signal<Out, Bits<PSN_BITS>>,
    pub m_pkt_len: Signal<Out, Bits<LEN_BITS>>,
    pub m_pkt_meta: Signal<Out, Bits<D>>,
    pub m_axis: StreamOut<W, K>,
    // Status.
    /// Free slots (0..=S).
    pub m_free: Signal<Out, Bits<AP1>>,
    /// Packets appended to a list.
    pub cnt_stored: Signal<Out, Bits<32>>,
    /// Packets freed by ACKs.
    pub cnt_freed: Signal<Out, Bits<32>>,
    /// Packets queued for replay.
    pub cnt_replayed: Signal<Out, Bits<32>>,
    /// Stores refused (`s_pkt_len` over a slot).
    pub cnt_refused: Signal<Out, Bits<32>>,
    /// ACKs and replays for a QP with nothing stored.
    pub cnt_empty: Signal<Out, Bits<32>>,

    // Storage.
    payload: BramOutReg<Bits<W>, AB>,
    sl_psn: Bram<Bits<PSN_BITS>, A>,
    sl_len: Bram<Bits<LEN_BITS>, A>,
    sl_meta: Bram<Bits<D>, A>,
    sl_next: Bram<Bits<A>, A>,
    qp_valid: BramOutReg<Bit, Q>,
    qp_head: BramOutReg<Bits<A>, Q>,
    qp_tail: BramOutReg<Bits<A>, Q>,
    free: SyncFifo<Bits<A>, A, AP1>,
    // Store: accepted headers (slot; QP, refused, has payload beside).
    hfifo: SyncFifo<Bits<A>, 2, 3>,
    h_qpn: FifoLane<Bits<Q>, 2>,
    h_refused: FifoLane<Bit, 2>,
    h_haspay: FifoLane<Bit, 2>,
    // Stores waiting to be linked (QP; slot, refused beside).
    lfifo: SyncFifo<Bits<Q>, A, AP1>,
    l_slot: FifoLane<Bits<A>, A>,
    l_refused: FifoLane<Bit, A>,
    // Replay descriptors out (PSN; length, meta, QP beside).
    ofifo: SyncFifo<Bits<PSN_BITS>, 2, 3>,
    o_len: FifoLane<Bits<LEN_BITS>, 2>,
    o_meta: FifoLane<Bits<D>, 2>,
    o_qpn: FifoLane<Bits<Q>, 2>,
    // Replay payload jobs (slot; length beside).
    jfifo: SyncFifo<Bits<A>, 2, 3>,
    j_len: FifoLane<Bits<LEN_BITS>, 2>,
    // Replay payload beats out (data; keep, last beside).
    pfifo: SyncFifo<Bits<W>, 3, 4>,
    p_keep: FifoLane<Bits<K>, 3>,
    p_last: FifoLane<Bit, 3>,
    c_stored: Counter32,
    c_freed: Counter32,
    c_replayed: Counter32,
    c_refused: Counter32,
    c_empty: Counter32,

    // Store engine.
    beat: DFF<Bits<B>>,
    ovf: DFF<Bit>,
    st_acc: DFF<Bits<AP1>>,
    /// Stores taken from the link queue (linked or in the link pipeline,
    /// or refused).
    st_done: DFF<Bits<AP1>>,
    free_cnt: DFF<Bits<AP1>>,
    // Commands.
    ack_valid: DFF<Bit>,
    ack_qpn: DFF<Bits<Q>>,
    ack_psn: DFF<Bits<PSN_BITS>>,
    ack_snap: DFF<Bits<AP1>>,
    rep_valid: DFF<Bit>,
    rep_qpn: DFF<Bits<Q>>,
    rep_psn: DFF<Bits<PSN_BITS>>,
    rep_snap: DFF<Bits<AP1>>,
    /// The pending replay was accepted before the pending ACK.
    rep_older: DFF<Bit>,
    // Control.
    state: DFF<Ctl>,
    init_i: DFF<Bits<Q>>,
    c_qpn: DFF<Bits<Q>>,
    c_psn: DFF<Bits<PSN_BITS>>,
    c_cur: DFF<Bits<A>>,
    c_tail: DFF<Bits<A>>,
    c_started: DFF<Bit>,
    jobs_out: DFF<Bits<4>>,
    // The walk's compare stage: the slot at `c_cur` as it was read (PSN
    // compare, next pointer, fields), registered.
    // The link pipeline: W (the QP entry moves to the QP RAMs' output
    // registers), X (append: write the QP entry and the old tail's next),
    // and the links executed 1 and 2 cycles ago, whose writes the read of
    // the link in X missed (forwarded).
    lw_valid: DFF<Bit>,
    lw_qpn: DFF<Bits<Q>>,
    lw_slot: DFF<Bits<A>>,
    lx_valid: DFF<Bit>,
    lx_qpn: DFF<Bits<Q>>,
    lx_slot: DFF<Bits<A>>,
    x1_valid: DFF<Bit>,
    x1_qpn: DFF<Bits<Q>>,
    x1_slot: DFF<Bits<A>>,
    x2_valid: DFF<Bit>,
    x2_qpn: DFF<Bits<Q>>,
    x2_slot: DFF<Bits<A>>,
    before_q: DFF<Bit>,
    nxt_q: DFF<Bits<A>>,
    d_psn: DFF<Bits<PSN_BITS>>,
    d_len: DFF<Bits<LEN_BITS>>,
    d_meta: DFF<Bits<D>>,
    // Payload reader.
    rd_active: DFF<Bit>,
    rd_slot: DFF<Bits<A>>,
    rd_beat: DFF<Bits<B>>,
    rd_lastb: DFF<Bits<B>>,
    rd_keepl: DFF<Bits<K>>,
    r_valid: DFF<Bit>,
    r_keep: DFF<Bits<K>>,
    r_last: DFF<Bit>,
    r2_valid: DFF<Bit>,
    r2_keep: DFF<Bits<K>>,
    r2_last: DFF<Bit>,
    ob_cnt: DFF<Bits<4>>,

    // Constants.
    slot_bytes: Constant<Bits<LEN_BITS>>,
    bshift: Constant<Bits<8>>,
    ashift: Constant<Bits<8>>,
    kshift: Constant<Bits<8>>,
    kmask: Constant<Bits<8>>,
    keep_ones: Constant<Bits<K>>,
    beat_max: Constant<Bits<B>>,
    qp_last: Constant<Bits<Q>>,
    half: Constant<Bits<AP1>>,
    ob_cap: Constant<Bits<4>>,

    // Combinational.
    accept: Signal<Local, Bit>,
    refuse: Signal<Local, Bit>,
    bt: Signal<Local, Bit>,
    h_end: Signal<Local, Bit>,
    at_ack: Signal<Local, Bit>,
    at_rep: Signal<Local, Bit>,
    go_ack: Signal<Local, Bit>,
    go_rep: Signal<Local, Bit>,
    go_link: Signal<Local, Bit>,
    ack_acc: Signal<Local, Bit>,
    rep_acc: Signal<Local, Bit>,
    pdiff: Signal<Local, Bits<PSN_BITS>>,
    psn_before: Signal<Local, Bit>,
    incl: Signal<Local, Bit>,
    stall: Signal<Local, Bit>,
    fwd1: Signal<Local, Bit>,
    fwd2: Signal<Local, Bit>,
    eff_valid: Signal<Local, Bit>,
    eff_tail: Signal<Local, Bits<A>>,
    links_idle: Signal<Local, Bit>,
    load_cmp: Signal<Local, Bit>,
    at_tail: Signal<Local, Bit>,
    push_job: Signal<Local, Bit>,
    job_done: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    rd_is_last: Signal<Local, Bit>,
    rd_take: Signal<Local, Bit>,
    jlen_m1: Signal<Local, Bits<LEN_BITS>>,
    pop: Signal<Local, Bit>,
}

impl<
        const W: usize,
        const K: usize,
        const Q: usize,
        const A: usize,
        const AP1: usize,
        const B: usize,
        const AB: usize,
        const D: usize,
    > RetxBuf<W, K, Q, A, AP1, B, AB, D>
{
    /// Packet slots.
    pub const SLOTS: usize = 1 << A;
    /// Beats a slot holds.
    pub const SLOT_BEATS: usize = 1 << B;
    /// Bytes a slot holds: the largest payload stored (the PMTU).
    pub const SLOT_BYTES: usize = K << B;
    /// QPs.
    pub const QPS: usize = 1 << Q;
    /// Descriptor word bits.
    pub const META_BITS: usize = D;
    /// Cycles `busy` stays high after reset is released.
    pub const INIT_CYCLES: usize = 1 << Q;

    pub fn new() -> Self {
        check_width("RetxBuf", W, K);
        assert_eq!(AP1, A + 1, "RetxBuf: AP1 must be A + 1");
        assert_eq!(AB, A + B, "RetxBuf: AB must be A + B");
        assert!(
            (2..=10).contains(&A),
            "RetxBuf: slot bits {A} out of 2..=10"
        );
        assert!(
            (A..=14).contains(&Q),
            "RetxBuf: QP bits {Q} out of A..=14 (the init sweep covers the slots)"
        );
        assert!(B >= 1 && AB <= 16, "RetxBuf: beat bits {B}");
        assert!(
            (K << B) < (1 << LEN_BITS),
            "RetxBuf: a slot's bytes must fit the length port"
        );
        assert!(D >= 1, "RetxBuf: descriptor bits");
        let keep_ones = if K >= 64 { u64::MAX } else { (1u64 << K) - 1 };
        Self {
            clock: Default::default(),
            reset: Default::default(),
            busy: Default::default(),
            s_pkt_valid: Default::default(),
            s_pkt_ready: Default::default(),
            s_pkt_qpn: Default::default(),
            s_pkt_psn: Default::default(),
            s_pkt_len: Default::default(),
            s_pkt_meta: Default::default(),
            s_axis: Default::default(),
            s_ack_valid: Default::default(),
            s_ack_ready: Default::default(),
            s_ack_qpn: Default::default(),
            s_ack_psn: Default::default(),
            s_replay_valid: Default::default(),
            s_replay_ready: Default::default(),
            s_replay_qpn: Default::default(),
            s_replay_psn: Default::default(),
            m_pkt_valid: Default::default(),
            m_pkt_ready: Default::default(),
            m_pkt_qpn: Default::default(),
            m_pkt_psn: Default::default(),
            m_pkt_len: Default::default(),
            m_pkt_meta: Default::default(),
            m_axis: Default::default(),
            m_free: Default::default(),
            cnt_stored: Default::default(),
            cnt_freed: Default::default(),
            cnt_replayed: Default::default(),
            cnt_refused: Default::default(),
            cnt_empty: Default::default(),
            payload: BramOutReg::new(),
            sl_psn: slot_ram::<Bits<PSN_BITS>, A>(),
            sl_len: slot_ram::<Bits<LEN_BITS>, A>(),
            sl_meta: slot_ram::<Bits<D>, A>(),
            sl_next: slot_ram::<Bits<A>, A>(),
            qp_valid: BramOutReg::new(),
            qp_head: BramOutReg::new(),
            qp_tail: BramOutReg::new(),
            free: SyncFifo::new(),
            hfifo: SyncFifo::new(),
            h_qpn: FifoLane::new(),
            h_refused: FifoLane::new(),
            h_haspay: FifoLane::new(),
            lfifo: SyncFifo::new(),
            l_slot: FifoLane::new(),
            l_refused: FifoLane::new(),
            ofifo: SyncFifo::new(),
            o_len: FifoLane::new(),
            o_meta: FifoLane::new(),
            o_qpn: FifoLane::new(),
            jfifo: SyncFifo::new(),
            j_len: FifoLane::new(),
            pfifo: SyncFifo::new(),
            p_keep: FifoLane::new(),
            p_last: FifoLane::new(),
            c_stored: Counter32::new(),
            c_freed: Counter32::new(),
            c_replayed: Counter32::new(),
            c_refused: Counter32::new(),
            c_empty: Counter32::new(),
            beat: Default::default(),
            ovf: Default::default(),
            st_acc: Default::default(),
            st_done: Default::default(),
            free_cnt: Default::default(),
            ack_valid: Default::default(),
            ack_qpn: Default::default(),
            ack_psn: Default::default(),
            ack_snap: Default::default(),
            rep_valid: Default::default(),
            rep_qpn: Default::default(),
            rep_psn: Default::default(),
            rep_snap: Default::default(),
            rep_older: Default::default(),
            state: Default::default(),
            init_i: Default::default(),
            c_qpn: Default::default(),
            c_psn: Default::default(),
            c_cur: Default::default(),
            c_tail: Default::default(),
            c_started: Default::default(),
            jobs_out: Default::default(),
            lw_valid: Default::default(),
            lw_qpn: Default::default(),
            lw_slot: Default::default(),
            lx_valid: Default::default(),
            lx_qpn: Default::default(),
            lx_slot: Default::default(),
            x1_valid: Default::default(),
            x1_qpn: Default::default(),
            x1_slot: Default::default(),
            x2_valid: Default::default(),
            x2_qpn: Default::default(),
            x2_slot: Default::default(),
            before_q: Default::default(),
            nxt_q: Default::default(),
            d_psn: Default::default(),
            d_len: Default::default(),
            d_meta: Default::default(),
            rd_active: Default::default(),
            rd_slot: Default::default(),
            rd_beat: Default::default(),
            rd_lastb: Default::default(),
            rd_keepl: Default::default(),
            r_valid: Default::default(),
            r_keep: Default::default(),
            r_last: Default::default(),
            r2_valid: Default::default(),
            r2_keep: Default::default(),
            r2_last: Default::default(),
            ob_cnt: Default::default(),
            slot_bytes: Constant::new(((K << B) as u64).into()),
            bshift: Constant::new((B as u64).into()),
            ashift: Constant::new((A as u64).into()),
            kshift: Constant::new((K.trailing_zeros() as u64).into()),
            kmask: Constant::new(((K - 1) as u64).into()),
            keep_ones: Constant::new(keep_ones.into()),
            beat_max: Constant::new(((1u64 << B) - 1).into()),
            qp_last: Constant::new(((1u64 << Q) - 1).into()),
            half: Constant::new((1u64 << A).into()),
            ob_cap: Constant::new((SyncFifo::<Bits<W>, 3, 4>::CAPACITY as u64).into()),
            accept: Default::default(),
            refuse: Default::default(),
            bt: Default::default(),
            h_end: Default::default(),
            at_ack: Default::default(),
            at_rep: Default::default(),
            go_ack: Default::default(),
            go_rep: Default::default(),
            go_link: Default::default(),
            ack_acc: Default::default(),
            rep_acc: Default::default(),
            pdiff: Default::default(),
            psn_before: Default::default(),
            incl: Default::default(),
            stall: Default::default(),
            fwd1: Default::default(),
            fwd2: Default::default(),
            eff_valid: Default::default(),
            eff_tail: Default::default(),
            links_idle: Default::default(),
            load_cmp: Default::default(),
            at_tail: Default::default(),
            push_job: Default::default(),
            job_done: Default::default(),
            issue: Default::default(),
            rd_is_last: Default::default(),
            rd_take: Default::default(),
            jlen_m1: Default::default(),
            pop: Default::default(),
        }
    }
}

/// A slot-table RAM: LUT RAM with a registered read up to 128 slots (its
/// read feeds the walk's PSN compare, which a block RAM's clock-to-out
/// would slow), block RAM above.
fn slot_ram<T: Synth, const A: usize>() -> Bram<T, A> {
    if A <= 7 {
        Bram::distributed()
    } else {
        Bram::new()
    }
}

impl<
        const W: usize,
        const K: usize,
        const Q: usize,
        const A: usize,
        const AP1: usize,
        const B: usize,
        const AB: usize,
        const D: usize,
    > Default for RetxBuf<W, K, Q, A, AP1, B, AB, D>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<
        const W: usize,
        const K: usize,
        const Q: usize,
        const A: usize,
        const AP1: usize,
        const B: usize,
        const AB: usize,
        const D: usize,
    > Logic for RetxBuf<W, K, Q, A, AP1, B, AB, D>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, beat, ovf, st_acc, st_done, free_cnt, ack_valid, ack_qpn, ack_psn,
            ack_snap, rep_valid, rep_qpn, rep_psn, rep_snap, rep_older, state, init_i, c_qpn,
            c_psn, c_cur, c_tail, c_started, jobs_out, lw_valid, lw_qpn, lw_slot, lx_valid, lx_qpn,
            lx_slot, x1_valid, x1_qpn, x1_slot, x2_valid, x2_qpn, x2_slot, before_q, nxt_q, d_psn,
            d_len, d_meta, rd_active, rd_slot, rd_beat, rd_lastb, rd_keepl, r_valid, r_keep,
            r_last, r2_valid, r2_keep, r2_last, ob_cnt
        );
        clock!(
            self, clock, payload, sl_psn, sl_len, sl_meta, sl_next, qp_valid, qp_head, qp_tail,
            free, hfifo, h_qpn, h_refused, h_haspay, lfifo, l_slot, l_refused, ofifo, o_len,
            o_meta, o_qpn, jfifo, j_len, pfifo, p_keep, p_last, c_stored, c_freed, c_replayed,
            c_refused, c_empty
        );
        // FIFO resets and lanes.
        self.free.reset.next = self.reset.val();
        self.hfifo.reset.next = self.reset.val();
        self.lfifo.reset.next = self.reset.val();
        self.ofifo.reset.next = self.reset.val();
        self.jfifo.reset.next = self.reset.val();
        self.pfifo.reset.next = self.reset.val();
        self.h_qpn.store.next = self.hfifo.lane_store.val();
        self.h_qpn.waddr.next = self.hfifo.lane_waddr.val();
        self.h_qpn.load.next = self.hfifo.lane_load.val();
        self.h_qpn.raddr.next = self.hfifo.lane_raddr.val();
        self.h_qpn.skid.next = self.hfifo.lane_skid.val();
        self.h_qpn.from_skid.next = self.hfifo.lane_from_skid.val();
        self.h_refused.store.next = self.hfifo.lane_store.val();
        self.h_refused.waddr.next = self.hfifo.lane_waddr.val();
        self.h_refused.load.next = self.hfifo.lane_load.val();
        self.h_refused.raddr.next = self.hfifo.lane_raddr.val();
        self.h_refused.skid.next = self.hfifo.lane_skid.val();
        self.h_refused.from_skid.next = self.hfifo.lane_from_skid.val();
        self.h_haspay.store.next = self.hfifo.lane_store.val();
        self.h_haspay.waddr.next = self.hfifo.lane_waddr.val();
        self.h_haspay.load.next = self.hfifo.lane_load.val();
        self.h_haspay.raddr.next = self.hfifo.lane_raddr.val();
        self.h_haspay.skid.next = self.hfifo.lane_skid.val();
        self.h_haspay.from_skid.next = self.hfifo.lane_from_skid.val();
        self.l_slot.store.next = self.lfifo.lane_store.val();
        self.l_slot.waddr.next = self.lfifo.lane_waddr.val();
        self.l_slot.load.next = self.lfifo.lane_load.val();
        self.l_slot.raddr.next = self.lfifo.lane_raddr.val();
        self.l_slot.skid.next = self.lfifo.lane_skid.val();
        self.l_slot.from_skid.next = self.lfifo.lane_from_skid.val();
        self.l_refused.store.next = self.lfifo.lane_store.val();
        self.l_refused.waddr.next = self.lfifo.lane_waddr.val();
        self.l_refused.load.next = self.lfifo.lane_load.val();
        self.l_refused.raddr.next = self.lfifo.lane_raddr.val();
        self.l_refused.skid.next = self.lfifo.lane_skid.val();
        self.l_refused.from_skid.next = self.lfifo.lane_from_skid.val();
        self.o_len.store.next = self.ofifo.lane_store.val();
        self.o_len.waddr.next = self.ofifo.lane_waddr.val();
        self.o_len.load.next = self.ofifo.lane_load.val();
        self.o_len.raddr.next = self.ofifo.lane_raddr.val();
        self.o_len.skid.next = self.ofifo.lane_skid.val();
        self.o_len.from_skid.next = self.ofifo.lane_from_skid.val();
        self.o_meta.store.next = self.ofifo.lane_store.val();
        self.o_meta.waddr.next = self.ofifo.lane_waddr.val();
        self.o_meta.load.next = self.ofifo.lane_load.val();
        self.o_meta.raddr.next = self.ofifo.lane_raddr.val();
        self.o_meta.skid.next = self.ofifo.lane_skid.val();
        self.o_meta.from_skid.next = self.ofifo.lane_from_skid.val();
        self.o_qpn.store.next = self.ofifo.lane_store.val();
        self.o_qpn.waddr.next = self.ofifo.lane_waddr.val();
        self.o_qpn.load.next = self.ofifo.lane_load.val();
        self.o_qpn.raddr.next = self.ofifo.lane_raddr.val();
        self.o_qpn.skid.next = self.ofifo.lane_skid.val();
        self.o_qpn.from_skid.next = self.ofifo.lane_from_skid.val();
        self.j_len.store.next = self.jfifo.lane_store.val();
        self.j_len.waddr.next = self.jfifo.lane_waddr.val();
        self.j_len.load.next = self.jfifo.lane_load.val();
        self.j_len.raddr.next = self.jfifo.lane_raddr.val();
        self.j_len.skid.next = self.jfifo.lane_skid.val();
        self.j_len.from_skid.next = self.jfifo.lane_from_skid.val();
        self.p_keep.store.next = self.pfifo.lane_store.val();
        self.p_keep.waddr.next = self.pfifo.lane_waddr.val();
        self.p_keep.load.next = self.pfifo.lane_load.val();
        self.p_keep.raddr.next = self.pfifo.lane_raddr.val();
        self.p_keep.skid.next = self.pfifo.lane_skid.val();
        self.p_keep.from_skid.next = self.pfifo.lane_from_skid.val();
        self.p_last.store.next = self.pfifo.lane_store.val();
        self.p_last.waddr.next = self.pfifo.lane_waddr.val();
        self.p_last.load.next = self.pfifo.lane_load.val();
        self.p_last.raddr.next = self.pfifo.lane_raddr.val();
        self.p_last.skid.next = self.pfifo.lane_skid.val();
        self.p_last.from_skid.next = self.pfifo.lane_from_skid.val();

        // ---- Store engine ----
        self.busy.next = self.state.q.val() == Ctl::Init;
        // Ready from registers only: a free slot, room for the header, and
        // at most 2^A stores between accept and link (so the link FIFO,
        // 2^A + 1 deep, never overflows even with refused stores).
        self.s_pkt_ready.next = !(self.state.q.val() == Ctl::Init)
            & !self.free.empty.val()
            & !self.hfifo.full.val()
            & ((self.st_acc.q.val() - self.st_done.q.val()) < self.half.val());
        self.accept.next = self.s_pkt_valid.val()
            & !(self.state.q.val() == Ctl::Init)
            & !self.free.empty.val()
            & !self.hfifo.full.val()
            & ((self.st_acc.q.val() - self.st_done.q.val()) < self.half.val());
        self.refuse.next = self.s_pkt_len.val() > self.slot_bytes.val();
        self.free.read.next = self.accept.val() & !self.refuse.val();
        // The slot table takes the descriptor as the store is accepted.
        self.sl_psn.write_enable.next = self.accept.val() & !self.refuse.val();
        self.sl_psn.write_address.next = self.free.data_out.val();
        self.sl_psn.write_data.next = self.s_pkt_psn.val();
        self.sl_len.write_enable.next = self.accept.val() & !self.refuse.val();
        self.sl_len.write_address.next = self.free.data_out.val();
        self.sl_len.write_data.next = self.s_pkt_len.val();
        self.sl_meta.write_enable.next = self.accept.val() & !self.refuse.val();
        self.sl_meta.write_address.next = self.free.data_out.val();
        self.sl_meta.write_data.next = self.s_pkt_meta.val();
        self.hfifo.write.next = self.accept.val();
        self.hfifo.data_in.next = self.free.data_out.val();
        self.h_qpn.data_in.next = self.s_pkt_qpn.val();
        self.h_refused.data_in.next = self.refuse.val();
        self.h_haspay.data_in.next = self.s_pkt_len.val().any();
        if self.accept.val() {
            self.st_acc.d.next = self.st_acc.q.val() + 1;
        }
        // Payload of the oldest accepted header.
        self.s_axis.tready.next = !self.hfifo.empty.val() & self.h_haspay.data_out.val();
        self.bt.next =
            self.s_axis.tvalid.val() & !self.hfifo.empty.val() & self.h_haspay.data_out.val();
        self.h_end.next = (!self.hfifo.empty.val() & !self.h_haspay.data_out.val())
            | (self.bt.val() & self.s_axis.tlast.val());
        self.payload.write_enable.next =
            self.bt.val() & !self.h_refused.data_out.val() & !self.ovf.q.val();
        self.payload.write_address.next = (bit_cast::<AB, A>(self.hfifo.data_out.val())
            << self.bshift.val())
            | bit_cast::<AB, B>(self.beat.q.val());
        self.payload.write_data.next = self.s_axis.tdata.val();
        if self.h_end.val() {
            self.beat.d.next = 0.into();
            self.ovf.d.next = false;
        } else if self.bt.val() {
            if self.beat.q.val() == self.beat_max.val() {
                self.ovf.d.next = true;
            } else {
                self.beat.d.next = self.beat.q.val() + 1;
            }
        }
        self.hfifo.read.next = self.h_end.val();
        self.lfifo.write.next = self.h_end.val();
        self.lfifo.data_in.next = self.h_qpn.data_out.val();
        self.l_slot.data_in.next = self.hfifo.data_out.val();
        self.l_refused.data_in.next = self.h_refused.data_out.val();
        self.c_refused.inc.next = self.h_end.val() & self.h_refused.data_out.val();

        // ---- Commands ----
        self.s_ack_ready.next = !self.ack_valid.q.val() & !(self.state.q.val() == Ctl::Init);
        self.s_replay_ready.next = !self.rep_valid.q.val() & !(self.state.q.val() == Ctl::Init);
        self.ack_acc.next =
            self.s_ack_valid.val() & !self.ack_valid.q.val() & !(self.state.q.val() == Ctl::Init);
        self.rep_acc.next = self.s_replay_valid.val()
            & !self.rep_valid.q.val()
            & !(self.state.q.val() == Ctl::Init);
        if self.ack_acc.val() {
            self.ack_valid.d.next = true;
            self.ack_qpn.d.next = self.s_ack_qpn.val();
            self.ack_psn.d.next = self.s_ack_psn.val();
            self.ack_snap.d.next = self.st_acc.q.val();
        }
        if self.rep_acc.val() {
            self.rep_valid.d.next = true;
            self.rep_qpn.d.next = self.s_replay_qpn.val();
            self.rep_psn.d.next = self.s_replay_psn.val();
            self.rep_snap.d.next = self.st_acc.q.val();
        }
        // Which pending command came first (an ACK wins a tie).
        if self.ack_acc.val() & self.rep_acc.val() {
            self.rep_older.d.next = false;
        } else if self.ack_acc.val() {
            self.rep_older.d.next = self.rep_valid.q.val();
        } else if self.rep_acc.val() {
            self.rep_older.d.next = !self.ack_valid.q.val();
        }
        self.at_ack.next = self.st_done.q.val() == self.ack_snap.q.val();
        self.at_rep.next = self.st_done.q.val() == self.rep_snap.q.val();

        // ---- Control ----
        self.go_ack.next = false;
        self.go_rep.next = false;
        self.go_link.next = false;
        // A command reads the QP table only after the links before it
        // have written it.
        self.links_idle.next = !self.lw_valid.q.val() & !self.lx_valid.q.val();
        if self.state.q.val() == Ctl::Idle {
            if self.ack_valid.q.val()
                & self.links_idle.val()
                & self.at_ack.val()
                & !self.jobs_out.q.val().any()
                & (!self.rep_valid.q.val() | !self.rep_older.q.val())
            {
                self.go_ack.next = true;
            } else if self.rep_valid.q.val()
                & self.links_idle.val()
                & self.at_rep.val()
                & (!self.ack_valid.q.val() | self.rep_older.q.val())
            {
                self.go_rep.next = true;
            } else if !self.lfifo.empty.val()
                & !(self.ack_valid.q.val() & self.at_ack.val())
                & !(self.rep_valid.q.val() & self.at_rep.val())
            {
                self.go_link.next = true;
            }
        }
        self.lfifo.read.next = self.go_link.val();
        // QP table read port: the dispatched operation's QP.
        self.qp_valid.read_enable.next = self.go_ack.val() | self.go_rep.val() | self.go_link.val();
        self.qp_head.read_enable.next = self.go_ack.val() | self.go_rep.val() | self.go_link.val();
        self.qp_tail.read_enable.next = self.go_ack.val() | self.go_rep.val() | self.go_link.val();
        if self.go_ack.val() {
            self.qp_valid.read_address.next = self.ack_qpn.q.val();
            self.ack_valid.d.next = false;
            self.c_qpn.d.next = self.ack_qpn.q.val();
            self.c_psn.d.next = self.ack_psn.q.val();
        } else if self.go_rep.val() {
            self.qp_valid.read_address.next = self.rep_qpn.q.val();
            self.rep_valid.d.next = false;
            self.c_qpn.d.next = self.rep_qpn.q.val();
            self.c_psn.d.next = self.rep_psn.q.val();
        } else {
            self.qp_valid.read_address.next = self.lfifo.data_out.val();
        }
        // The link pipeline.
        self.lw_valid.d.next = self.go_link.val() & !self.l_refused.data_out.val();
        self.lw_qpn.d.next = self.lfifo.data_out.val();
        self.lw_slot.d.next = self.l_slot.data_out.val();
        self.lx_valid.d.next = self.lw_valid.q.val();
        self.lx_qpn.d.next = self.lw_qpn.q.val();
        self.lx_slot.d.next = self.lw_slot.q.val();
        self.x1_valid.d.next = self.lx_valid.q.val();
        self.x1_qpn.d.next = self.lx_qpn.q.val();
        self.x1_slot.d.next = self.lx_slot.q.val();
        self.x2_valid.d.next = self.x1_valid.q.val();
        self.x2_qpn.d.next = self.x1_qpn.q.val();
        self.x2_slot.d.next = self.x1_slot.q.val();
        self.fwd1.next = self.x1_valid.q.val() & (self.x1_qpn.q.val() == self.lx_qpn.q.val());
        self.fwd2.next = self.x2_valid.q.val() & (self.x2_qpn.q.val() == self.lx_qpn.q.val());
        self.eff_valid.next = self.fwd1.val() | self.fwd2.val() | self.qp_valid.read_data.val();
        if self.fwd1.val() {
            self.eff_tail.next = self.x1_slot.q.val();
        } else if self.fwd2.val() {
            self.eff_tail.next = self.x2_slot.q.val();
        } else {
            self.eff_tail.next = self.qp_tail.read_data.val();
        }
        if self.go_link.val() {
            self.st_done.d.next = self.st_done.q.val() + 1;
        }
        self.qp_head.read_address.next = self.qp_valid.read_address.val();
        self.qp_tail.read_address.next = self.qp_valid.read_address.val();
        // Free-running output registers: a read issued in `Idle` is on
        // `read_data` in the state after the wait state.
        self.qp_valid.output_enable.next = true;
        self.qp_head.output_enable.next = true;
        self.qp_tail.output_enable.next = true;
        self.payload.output_enable.next = true;
        // QP table writes (defaults off).
        self.qp_valid.write_enable.next = false;
        self.qp_valid.write_address.next = self.c_qpn.q.val();
        self.qp_valid.write_data.next = false;
        self.qp_head.write_enable.next = false;
        self.qp_head.write_address.next = self.c_qpn.q.val();
        self.qp_head.write_data.next = self.c_cur.q.val();
        self.qp_tail.write_enable.next = false;
        self.qp_tail.write_address.next = self.c_qpn.q.val();
        self.qp_tail.write_data.next = self.lx_slot.q.val();
        self.sl_next.write_enable.next = false;
        self.sl_next.write_address.next = self.eff_tail.val();
        self.sl_next.write_data.next = self.lx_slot.q.val();
        // The walk, one slot a cycle: in `*Chk` the slot at `c_cur` is
        // decided from registers (`before_q`, `nxt_q`, `d_*`), the slot at
        // `nxt_q` is on the slot RAMs' outputs (compared and registered
        // now), and the one after it is read (address from the RAM's
        // registered `next`).
        self.incl.next = self.c_started.q.val() | !self.before_q.q.val();
        self.stall.next = (self.state.q.val() == Ctl::RepChk)
            & self.incl.val()
            & (self.ofifo.full.val() | self.jfifo.full.val());
        self.at_tail.next = self.c_cur.q.val() == self.c_tail.q.val();
        self.load_cmp.next = (self.state.q.val() == Ctl::AckCmp)
            | (self.state.q.val() == Ctl::RepCmp)
            | (self.state.q.val() == Ctl::AckChk)
            | ((self.state.q.val() == Ctl::RepChk) & !self.stall.val());
        if (self.state.q.val() == Ctl::AckQp) | (self.state.q.val() == Ctl::RepQp) {
            self.sl_psn.read_enable.next = true;
            self.sl_psn.read_address.next = self.qp_head.read_data.val();
        } else {
            self.sl_psn.read_enable.next = self.load_cmp.val();
            self.sl_psn.read_address.next = self.sl_next.read_data.val();
        }
        self.sl_len.read_enable.next = self.sl_psn.read_enable.val();
        self.sl_len.read_address.next = self.sl_psn.read_address.val();
        self.sl_meta.read_enable.next = self.sl_psn.read_enable.val();
        self.sl_meta.read_address.next = self.sl_psn.read_address.val();
        self.sl_next.read_enable.next = self.sl_psn.read_enable.val();
        self.sl_next.read_address.next = self.sl_psn.read_address.val();
        // PSN compare, registered: the slot's PSN is before the command's.
        self.pdiff.next = self.sl_psn.read_data.val() - self.c_psn.q.val();
        self.psn_before.next = self.pdiff.val().get_bit(23);
        if self.load_cmp.val() {
            self.before_q.d.next = self.psn_before.val();
            self.nxt_q.d.next = self.sl_next.read_data.val();
            self.d_psn.d.next = self.sl_psn.read_data.val();
            self.d_len.d.next = self.sl_len.read_data.val();
            self.d_meta.d.next = self.sl_meta.read_data.val();
        }
        // Free FIFO pushes: the init sweep, then ACKs.
        self.free.write.next = false;
        self.free.data_in.next = self.c_cur.q.val();
        self.push_job.next = false;
        self.c_stored.inc.next = false;
        self.c_freed.inc.next = false;
        self.c_empty.inc.next = false;
        match self.state.q.val() {
            Ctl::Init => {
                self.qp_valid.write_enable.next = true;
                self.qp_valid.write_address.next = self.init_i.q.val();
                self.free.write.next = !(self.init_i.q.val() >> self.ashift.val()).any();
                self.free.data_in.next = bit_cast::<A, Q>(self.init_i.q.val());
                self.init_i.d.next = self.init_i.q.val() + 1;
                if self.init_i.q.val() == self.qp_last.val() {
                    self.state.d.next = Ctl::Idle;
                }
            }
            Ctl::Idle => {
                if self.go_ack.val() {
                    self.state.d.next = Ctl::AckWait;
                } else if self.go_rep.val() {
                    self.state.d.next = Ctl::RepWait;
                }
            }
            Ctl::AckWait => {
                self.state.d.next = Ctl::AckQp;
            }
            Ctl::RepWait => {
                self.state.d.next = Ctl::RepQp;
            }
            Ctl::AckQp => {
                self.c_cur.d.next = self.qp_head.read_data.val();
                self.c_tail.d.next = self.qp_tail.read_data.val();
                if self.qp_valid.read_data.val() {
                    self.state.d.next = Ctl::AckCmp;
                } else {
                    self.c_empty.inc.next = true;
                    self.state.d.next = Ctl::Idle;
                }
            }
            Ctl::AckCmp => {
                self.state.d.next = Ctl::AckChk;
            }
            Ctl::AckChk => {
                if self.before_q.q.val() {
                    self.free.write.next = true;
                    self.c_freed.inc.next = true;
                    if self.at_tail.val() {
                        // The list is empty now.
                        self.qp_valid.write_enable.next = true;
                        self.state.d.next = Ctl::Idle;
                    } else {
                        self.c_cur.d.next = self.nxt_q.q.val();
                    }
                } else {
                    self.qp_head.write_enable.next = true;
                    self.state.d.next = Ctl::Idle;
                }
            }
            Ctl::RepQp => {
                self.c_cur.d.next = self.qp_head.read_data.val();
                self.c_tail.d.next = self.qp_tail.read_data.val();
                self.c_started.d.next = false;
                if self.qp_valid.read_data.val() {
                    self.state.d.next = Ctl::RepCmp;
                } else {
                    self.c_empty.inc.next = true;
                    self.state.d.next = Ctl::Idle;
                }
            }
            Ctl::RepCmp => {
                self.state.d.next = Ctl::RepChk;
            }
            Ctl::RepChk => {
                if !self.stall.val() {
                    if self.incl.val() {
                        self.push_job.next = true;
                        self.c_started.d.next = true;
                    }
                    if self.at_tail.val() {
                        self.state.d.next = Ctl::Idle;
                    } else {
                        self.c_cur.d.next = self.nxt_q.q.val();
                    }
                }
            }
        }
        if self.lx_valid.q.val() {
            self.qp_valid.write_enable.next = true;
            self.qp_valid.write_address.next = self.lx_qpn.q.val();
            self.qp_valid.write_data.next = true;
            self.qp_tail.write_enable.next = true;
            self.qp_tail.write_address.next = self.lx_qpn.q.val();
            // A new list starts at this slot; else it goes after the tail.
            self.qp_head.write_enable.next = !self.eff_valid.val();
            self.qp_head.write_address.next = self.lx_qpn.q.val();
            self.qp_head.write_data.next = self.lx_slot.q.val();
            self.sl_next.write_enable.next = self.eff_valid.val();
            self.c_stored.inc.next = true;
        }
        self.ofifo.write.next = self.push_job.val();
        self.ofifo.data_in.next = self.d_psn.q.val();
        self.o_len.data_in.next = self.d_len.q.val();
        self.o_meta.data_in.next = self.d_meta.q.val();
        self.o_qpn.data_in.next = self.c_qpn.q.val();
        self.jfifo.write.next = self.push_job.val();
        self.jfifo.data_in.next = self.c_cur.q.val();
        self.j_len.data_in.next = self.d_len.q.val();
        self.c_replayed.inc.next = self.push_job.val();
        if self.free.write.val() & !self.free.read.val() {
            self.free_cnt.d.next = self.free_cnt.q.val() + 1;
        } else if self.free.read.val() & !self.free.write.val() {
            self.free_cnt.d.next = self.free_cnt.q.val() - 1;
        }
        self.m_free.next = self.free_cnt.q.val();

        // ---- Replay output ----
        self.m_pkt_valid.next = !self.ofifo.empty.val();
        self.m_pkt_psn.next = self.ofifo.data_out.val();
        self.m_pkt_len.next = self.o_len.data_out.val();
        self.m_pkt_meta.next = self.o_meta.data_out.val();
        self.m_pkt_qpn.next = self.o_qpn.data_out.val();
        self.ofifo.read.next = self.m_pkt_ready.val();
        // Payload reader: one RAM read per cycle while the beat FIFO has
        // room for it (credits: words queued plus the read in flight).
        self.issue.next = self.rd_active.q.val() & (self.ob_cnt.q.val() < self.ob_cap.val());
        self.rd_is_last.next = self.rd_beat.q.val() == self.rd_lastb.q.val();
        // A job is taken when the reader is idle, or (a job with payload)
        // as the last beat of the current one is read: back to back.
        self.rd_take.next = !self.jfifo.empty.val()
            & (!self.rd_active.q.val()
                | (self.issue.val() & self.rd_is_last.val() & self.j_len.data_out.val().any()));
        self.jfifo.read.next = self.rd_take.val();
        self.jlen_m1.next = self.j_len.data_out.val() - 1;
        self.job_done.next = (self.issue.val() & self.rd_is_last.val())
            | (self.rd_take.val() & !self.j_len.data_out.val().any());
        self.payload.read_enable.next = self.issue.val();
        self.payload.read_address.next = (bit_cast::<AB, A>(self.rd_slot.q.val())
            << self.bshift.val())
            | bit_cast::<AB, B>(self.rd_beat.q.val());
        self.r_valid.d.next = self.issue.val();
        // The payload RAM's output register: a read is on `read_data` two
        // edges after it is issued.
        self.r2_valid.d.next = self.r_valid.q.val();
        self.r2_keep.d.next = self.r_keep.q.val();
        self.r2_last.d.next = self.r_last.q.val();
        if self.issue.val() {
            if self.rd_is_last.val() {
                self.r_keep.d.next = self.rd_keepl.q.val();
                self.r_last.d.next = true;
                self.rd_active.d.next = false;
            } else {
                self.r_keep.d.next = self.keep_ones.val();
                self.r_last.d.next = false;
                self.rd_beat.d.next = self.rd_beat.q.val() + 1;
            }
        }
        if self.rd_take.val() {
            self.rd_active.d.next = self.j_len.data_out.val().any();
            self.rd_slot.d.next = self.jfifo.data_out.val();
            self.rd_beat.d.next = 0.into();
            self.rd_lastb.d.next = bit_cast::<B, LEN_BITS>(self.jlen_m1.val() >> self.kshift.val());
            // Bytes on the last beat: ((len - 1) mod K) + 1, packed from
            // lane 0: all ones shifted down by K - n = !(len - 1) mod K.
            self.rd_keepl.d.next = self.keep_ones.val()
                >> (bit_cast::<8, LEN_BITS>(!self.jlen_m1.val()) & self.kmask.val());
        }
        if self.push_job.val() & !self.job_done.val() {
            self.jobs_out.d.next = self.jobs_out.q.val() + 1;
        } else if self.job_done.val() & !self.push_job.val() {
            self.jobs_out.d.next = self.jobs_out.q.val() - 1;
        }
        self.pfifo.write.next = self.r2_valid.q.val();
        self.pfifo.data_in.next = self.payload.read_data.val();
        self.p_keep.data_in.next = self.r2_keep.q.val();
        self.p_last.data_in.next = self.r2_last.q.val();
        self.m_axis.tvalid.next = !self.pfifo.empty.val();
        self.m_axis.tdata.next = self.pfifo.data_out.val();
        self.m_axis.tkeep.next = self.p_keep.data_out.val();
        self.m_axis.tlast.next = self.p_last.data_out.val();
        self.m_axis.tuser.next = false;
        self.pop.next = self.m_axis.tready.val() & !self.pfifo.empty.val();
        self.pfifo.read.next = self.m_axis.tready.val();
        if self.issue.val() & !self.pop.val() {
            self.ob_cnt.d.next = self.ob_cnt.q.val() + 1;
        } else if self.pop.val() & !self.issue.val() {
            self.ob_cnt.d.next = self.ob_cnt.q.val() - 1;
        }

        // ---- Counters ----
        self.cnt_stored.next = self.c_stored.count.val();
        self.cnt_freed.next = self.c_freed.count.val();
        self.cnt_replayed.next = self.c_replayed.count.val();
        self.cnt_refused.next = self.c_refused.count.val();
        self.cnt_empty.next = self.c_empty.count.val();
        self.c_stored.clear.next = self.reset.val();
        self.c_freed.clear.next = self.reset.val();
        self.c_replayed.clear.next = self.reset.val();
        self.c_refused.clear.next = self.reset.val();
        self.c_empty.clear.next = self.reset.val();

        // ---- Synchronous reset ----
        if self.reset.val() {
            self.state.d.next = Ctl::Init;
            self.init_i.d.next = 0.into();
            self.beat.d.next = 0.into();
            self.ovf.d.next = false;
            self.st_acc.d.next = 0.into();
            self.st_done.d.next = 0.into();
            self.free_cnt.d.next = 0.into();
            self.ack_valid.d.next = false;
            self.rep_valid.d.next = false;
            self.rep_older.d.next = false;
            self.lw_valid.d.next = false;
            self.lx_valid.d.next = false;
            self.x1_valid.d.next = false;
            self.x2_valid.d.next = false;
            self.jobs_out.d.next = 0.into();
            self.rd_active.d.next = false;
            self.r_valid.d.next = false;
            self.r2_valid.d.next = false;
            self.ob_cnt.d.next = 0.into();
        }
    }
}

/// The default build at width `W`: 1024 QPs, 64 slots of one 4096-byte
/// PMTU, a 128-bit descriptor word.
pub type RetxBufDefault<const W: usize, const K: usize, const B: usize, const AB: usize> =
    RetxBuf<W, K, 10, 6, 7, B, AB, 128>;
pub type RetxBuf64 = RetxBufDefault<64, 8, 9, 15>;
pub type RetxBuf128 = RetxBufDefault<128, 16, 8, 14>;
pub type RetxBuf256 = RetxBufDefault<256, 32, 7, 13>;
pub type RetxBuf512 = RetxBufDefault<512, 64, 6, 12>;
/// The test build: 64 QPs, 16 slots of a 1024-byte PMTU, 64-bit descriptor.
pub type RetxBufSmall64 = RetxBuf<64, 8, 6, 4, 5, 7, 11, 64>;
pub type RetxBufSmall512 = RetxBuf<512, 64, 6, 4, 5, 4, 8, 64>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retx_buf_synthesizes() {
        let mut uut = RetxBufSmall64::new();
        uut.connect_all();
        check_all(&uut).unwrap();
        yosys_validate("retx_buf_small64", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn retx_buf_default_synthesizes() {
        let mut uut = RetxBuf64::new();
        uut.connect_all();
        check_all(&uut).unwrap();
        yosys_validate("retx_buf_w64", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    #[should_panic(expected = "QP bits")]
    fn retx_parameters_are_checked() {
        let _ = RetxBuf::<64, 8, 3, 4, 5, 7, 11, 64>::new();
    }
}
