//! `qp_events`: what the transport must hear when a QP changes state, and
//! the receive WQEs the host posts (issue 36 §2).
//!
//! The firmware runs modify-QP: it writes a QP's attributes into the `csr`
//! block's context table and the `qp.state` register last
//! (`roce_fw::qp::apply`). The `csr` block reports every context write
//! (`m_ctx_wr_*`); this block keeps each QP's previous state (one block-RAM
//! word per QP, cleared after reset) and turns a change of `qp.state` into
//! the transport's events, per IBTA's state machine:
//!
//! | previous → new | responder (`resp_chk`) | requester (`req_engine`) |
//! |---|---|---|
//! | any but Reset → Reset | `CLEAR` | `ERROR` if it was RTS, SQD or SQE |
//! | any but RTR → RTR | `INIT` (ePSN from the context) | — |
//! | RTR → RTS | — | `INIT` (next PSN from the context) |
//! | any but Error → Error | `ERROR` | `ERROR` if it was RTS, SQD or SQE |
//!
//! A write that leaves the state as it was (RTS → RTS with new timers)
//! makes no event.
//!
//! The transport's own moves to Error take the same path, so the whole QP
//! goes to Error as the model's `enter_error` does: the responder's
//! (`s_rsp_err`: `resp_chk`'s fatal NAK; `s_exec_err`: the executor's
//! remote access or operational error; one-cycle pulses, each into an
//! 8-deep queue) make the requester's `ERROR` (if the QP was RTS, SQD or
//! SQE; the responder flushes itself), the requester's (`s_req_err`,
//! retry or RNR retries exhausted, a remote error NAK) the responder's
//! `ERROR` (its receive queue flushes). The previous state becomes Error,
//! so the firmware's later modify to Error makes no second event. They
//! enter only when no context write does and the event queues have room.
//! The context's `qp.state` is not rewritten (the host reads the state
//! the firmware last wrote). Responder events and `host_if`'s `m_post_recv` (receive
//! WQEs posted) share one queue, so the transport sees them in the order
//! they happened (a `CLEAR` never overtakes the credits posted before it).
//! State changes cannot wait (the context write has happened), so they go
//! in first; `s_post_recv` waits while the queue is nearly full.
//! `overflow` counts events lost to a full queue: the firmware writes a
//! state at most once per modify command (hundreds of cycles apart), so it
//! stays 0; a test drives the queue full to show it does not hang.

use crate::bram::Bram;
use crate::fifo::SyncFifo;
use crate::req_engine::{EV_ERROR as REQ_ERROR, EV_INIT as REQ_INIT};
use crate::resp_chk::{
    EV_CLEAR as RSP_CLEAR, EV_ERROR as RSP_ERROR, EV_INIT as RSP_INIT,
    EV_POST_RECV as RSP_POST_RECV,
};
use roce_regs::{qp, QpState, QP_CTX_OFFSET};
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

/// Bits of `ctx_wr_offset`: a register's byte offset within a QP's context.
pub const OFFSET_BITS: usize = 8;
const _: () = assert!(roce_regs::QP_STRIDE as usize <= 1 << OFFSET_BITS);
/// Bits of a QP state value.
const ST_BITS: usize = 3;
const _: () = assert!(qp::state::STATE.width as usize <= ST_BITS);

/// A responder event in the queue: kind, QPN, count.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct RspEv {
    pub kind: Bits<2>,
    pub qpn: Bits<24>,
    pub count: Bits<16>,
}

/// A requester event in the queue.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct ReqEv {
    pub kind: Bits<2>,
    pub qpn: Bits<24>,
}

#[derive(LogicBlock)]
pub struct QpEvents<const Q: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Clearing the previous-state table after reset (2^Q cycles).
    pub busy: Signal<Out, Bit>,
    /// A context register write (the `csr` block's `m_ctx_wr_*`).
    pub ctx_wr_valid: Signal<In, Bit>,
    pub ctx_wr_qpn: Signal<In, Bits<Q>>,
    pub ctx_wr_offset: Signal<In, Bits<OFFSET_BITS>>,
    pub ctx_wr_data: Signal<In, Bits<32>>,
    /// Receive WQEs posted (`host_if`'s `m_post_recv`).
    pub s_post_recv_valid: Signal<In, Bit>,
    pub s_post_recv_ready: Signal<Out, Bit>,
    pub s_post_recv_qpn: Signal<In, Bits<24>>,
    pub s_post_recv_count: Signal<In, Bits<16>>,
    /// The transport moved a QP to Error: the responder (pulses), the
    /// requester (held until taken).
    pub s_rsp_err_valid: Signal<In, Bit>,
    pub s_rsp_err_qpn: Signal<In, Bits<24>>,
    pub s_exec_err_valid: Signal<In, Bit>,
    pub s_exec_err_qpn: Signal<In, Bits<24>>,
    pub s_req_err_valid: Signal<In, Bit>,
    pub s_req_err_ready: Signal<Out, Bit>,
    pub s_req_err_qpn: Signal<In, Bits<24>>,
    /// To `rc_transport`'s `s_rsp_ev_*`.
    pub m_rsp_ev_valid: Signal<Out, Bit>,
    pub m_rsp_ev_ready: Signal<In, Bit>,
    pub m_rsp_ev_kind: Signal<Out, Bits<2>>,
    pub m_rsp_ev_qpn: Signal<Out, Bits<24>>,
    pub m_rsp_ev_count: Signal<Out, Bits<16>>,
    /// To `rc_transport`'s `s_req_ev_*`.
    pub m_req_ev_valid: Signal<Out, Bit>,
    pub m_req_ev_ready: Signal<In, Bit>,
    pub m_req_ev_kind: Signal<Out, Bits<2>>,
    pub m_req_ev_qpn: Signal<Out, Bits<24>>,
    /// State events lost to a full queue (see the module doc), and
    /// responder errors lost to a full error queue.
    pub overflow: Signal<Out, Bits<32>>,
    prev: Bram<Bits<ST_BITS>, Q>,
    rsp_err_q: SyncFifo<Bits<24>, 3, 4>,
    exec_err_q: SyncFifo<Bits<24>, 3, 4>,
    /// Stage 1's source: 0 a context write, 1 the responder, 2 the
    /// requester.
    s1_src: DFF<Bits<2>>,
    /// The QPN stage 1 takes this cycle, and from where.
    sel_qpn: Signal<Local, Bits<Q>>,
    take_err: Signal<Local, Bit>,
    err_room: Signal<Local, Bit>,
    rsp_q: SyncFifo<RspEv, 4, 5>,
    req_q: SyncFifo<ReqEv, 4, 5>,
    /// Clearing: the next QP to clear, and whether clearing.
    clr: DFF<Bits<Q>>,
    clearing: DFF<Bit>,
    /// Stage 1: a `qp.state` write (its QPN and new state); the previous
    /// state is read from `prev` at the same edge.
    s1_v: DFF<Bit>,
    s1_qpn: DFF<Bits<Q>>,
    s1_new: DFF<Bits<ST_BITS>>,
    /// The previous edge wrote `prev` at the QPN stage 1 now holds: its
    /// value (the RAM's read returns the old word then).
    fwd_v: DFF<Bit>,
    fwd_st: DFF<Bits<ST_BITS>>,
    lost: DFF<Bits<32>>,
    old: Signal<Local, Bits<ST_BITS>>,
    rsp_v: Signal<Local, Bit>,
    rsp_kind: Signal<Local, Bits<2>>,
    req_v: Signal<Local, Bit>,
    req_kind: Signal<Local, Bits<2>>,
    old_sends: Signal<Local, Bit>,
    is_state: Signal<Local, Bit>,
    st_off: Constant<Bits<OFFSET_BITS>>,
    st_lsb: Constant<Bits<8>>,
    st_mask: Constant<Bits<ST_BITS>>,
    s_reset: Constant<Bits<ST_BITS>>,
    s_rtr: Constant<Bits<ST_BITS>>,
    s_rts: Constant<Bits<ST_BITS>>,
    s_sqd: Constant<Bits<ST_BITS>>,
    s_sqe: Constant<Bits<ST_BITS>>,
    s_error: Constant<Bits<ST_BITS>>,
    k_rsp_init: Constant<Bits<2>>,
    k_rsp_clear: Constant<Bits<2>>,
    k_rsp_error: Constant<Bits<2>>,
    k_rsp_post: Constant<Bits<2>>,
    k_req_init: Constant<Bits<2>>,
    k_req_error: Constant<Bits<2>>,
    last_qp: Constant<Bits<Q>>,
    /// RAM words below which a receive credit may enter the queue.
    room: Constant<Bits<5>>,
}

impl<const Q: usize> QpEvents<Q> {
    pub fn new() -> Self {
        assert!((1..=16).contains(&Q), "qp_events: Q = {Q} out of 1..=16");
        let st = |s: QpState| Constant::new((s.value() as u64).into());
        Self {
            clock: Default::default(),
            reset: Default::default(),
            busy: Default::default(),
            ctx_wr_valid: Default::default(),
            ctx_wr_qpn: Default::default(),
            ctx_wr_offset: Default::default(),
            ctx_wr_data: Default::default(),
            s_post_recv_valid: Default::default(),
            s_post_recv_ready: Default::default(),
            s_post_recv_qpn: Default::default(),
            s_post_recv_count: Default::default(),
            m_rsp_ev_valid: Default::default(),
            m_rsp_ev_ready: Default::default(),
            m_rsp_ev_kind: Default::default(),
            m_rsp_ev_qpn: Default::default(),
            m_rsp_ev_count: Default::default(),
            m_req_ev_valid: Default::default(),
            m_req_ev_ready: Default::default(),
            m_req_ev_kind: Default::default(),
            m_req_ev_qpn: Default::default(),
            s_rsp_err_valid: Default::default(),
            s_rsp_err_qpn: Default::default(),
            s_exec_err_valid: Default::default(),
            s_exec_err_qpn: Default::default(),
            s_req_err_valid: Default::default(),
            s_req_err_ready: Default::default(),
            s_req_err_qpn: Default::default(),
            overflow: Default::default(),
            prev: Bram::new(),
            rsp_err_q: SyncFifo::new(),
            exec_err_q: SyncFifo::new(),
            s1_src: Default::default(),
            sel_qpn: Default::default(),
            take_err: Default::default(),
            err_room: Default::default(),
            rsp_q: SyncFifo::new(),
            req_q: SyncFifo::new(),
            clr: Default::default(),
            clearing: Default::default(),
            s1_v: Default::default(),
            s1_qpn: Default::default(),
            s1_new: Default::default(),
            fwd_v: Default::default(),
            fwd_st: Default::default(),
            lost: Default::default(),
            old: Default::default(),
            rsp_v: Default::default(),
            rsp_kind: Default::default(),
            req_v: Default::default(),
            req_kind: Default::default(),
            old_sends: Default::default(),
            is_state: Default::default(),
            st_off: Constant::new(((qp::state::REG.offset - QP_CTX_OFFSET) as u64).into()),
            st_lsb: Constant::new((qp::state::STATE.lsb as u64).into()),
            st_mask: Constant::new((qp::state::STATE.max() as u64).into()),
            s_reset: st(QpState::Reset),
            s_rtr: st(QpState::Rtr),
            s_rts: st(QpState::Rts),
            s_sqd: st(QpState::Sqd),
            s_sqe: st(QpState::Sqe),
            s_error: st(QpState::Error),
            k_rsp_init: Constant::new(RSP_INIT.into()),
            k_rsp_clear: Constant::new(RSP_CLEAR.into()),
            k_rsp_error: Constant::new(RSP_ERROR.into()),
            k_rsp_post: Constant::new(RSP_POST_RECV.into()),
            k_req_init: Constant::new(REQ_INIT.into()),
            k_req_error: Constant::new(REQ_ERROR.into()),
            last_qp: Constant::new(((1u64 << Q) - 1).into()),
            room: Constant::new(14u64.into()),
        }
    }
}

impl<const Q: usize> Default for QpEvents<Q> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const Q: usize> Logic for QpEvents<Q> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, clr, clearing, s1_v, s1_qpn, s1_new, s1_src, fwd_v, fwd_st, lost);
        clock!(self, clock, prev, rsp_q, req_q, rsp_err_q, exec_err_q);
        self.rsp_q.reset.next = self.reset.val();
        self.req_q.reset.next = self.reset.val();
        self.rsp_err_q.reset.next = self.reset.val();
        self.exec_err_q.reset.next = self.reset.val();

        // ---- The responder's error pulses, queued.
        self.rsp_err_q.write.next = self.s_rsp_err_valid.val();
        self.rsp_err_q.data_in.next = self.s_rsp_err_qpn.val();
        self.exec_err_q.write.next = self.s_exec_err_valid.val();
        self.exec_err_q.data_in.next = self.s_exec_err_qpn.val();
        self.rsp_err_q.read.next = false;
        self.exec_err_q.read.next = false;
        self.s_req_err_ready.next = false;

        // ---- Stage 1: a write of qp.state, else a transport error (when
        // both event queues have room for its event); read the previous
        // state.
        self.is_state.next =
            self.ctx_wr_valid.val() & (self.ctx_wr_offset.val() == self.st_off.val());
        self.err_room.next = !self.reset.val()
            & !self.clearing.q.val()
            & !self.is_state.val()
            & (self.rsp_q.ram_words.val() < self.room.val())
            & !self.req_q.full.val();
        self.s1_v.d.next = self.is_state.val() & !self.clearing.q.val();
        self.s1_src.d.next = 0.into();
        self.sel_qpn.next = self.ctx_wr_qpn.val();
        self.s1_new.d.next = bit_cast::<ST_BITS, 32>(self.ctx_wr_data.val() >> self.st_lsb.val())
            & self.st_mask.val();
        self.take_err.next = false;
        if self.err_room.val() {
            if !self.rsp_err_q.empty.val() {
                self.take_err.next = true;
                self.rsp_err_q.read.next = true;
                self.sel_qpn.next = bit_cast::<Q, 24>(self.rsp_err_q.data_out.val());
                self.s1_src.d.next = 1.into();
            } else if !self.exec_err_q.empty.val() {
                self.take_err.next = true;
                self.exec_err_q.read.next = true;
                self.sel_qpn.next = bit_cast::<Q, 24>(self.exec_err_q.data_out.val());
                self.s1_src.d.next = 1.into();
            } else if self.s_req_err_valid.val() {
                self.take_err.next = true;
                self.s_req_err_ready.next = true;
                self.sel_qpn.next = bit_cast::<Q, 24>(self.s_req_err_qpn.val());
                self.s1_src.d.next = 2.into();
            }
        }
        if self.take_err.val() {
            self.s1_v.d.next = true;
            self.s1_new.d.next = self.s_error.val();
        }
        self.s1_qpn.d.next = self.sel_qpn.val();
        self.prev.read_enable.next = true;
        self.prev.read_address.next = self.sel_qpn.val();
        self.fwd_v.d.next = self.s1_v.q.val() & (self.s1_qpn.q.val() == self.sel_qpn.val());
        self.fwd_st.d.next = self.s1_new.q.val();

        // ---- Stage 2: the events.
        self.old.next = self.prev.read_data.val();
        if self.fwd_v.q.val() {
            self.old.next = self.fwd_st.q.val();
        }
        self.old_sends.next = (self.old.val() == self.s_rts.val())
            | (self.old.val() == self.s_sqd.val())
            | (self.old.val() == self.s_sqe.val());
        self.rsp_v.next = false;
        self.rsp_kind.next = self.k_rsp_init.val();
        self.req_v.next = false;
        self.req_kind.next = self.k_req_init.val();
        if self.s1_v.q.val() & (self.s1_new.q.val() != self.old.val()) {
            if self.s1_new.q.val() == self.s_reset.val() {
                self.rsp_v.next = true;
                self.rsp_kind.next = self.k_rsp_clear.val();
                self.req_v.next = self.old_sends.val();
                self.req_kind.next = self.k_req_error.val();
            }
            if self.s1_new.q.val() == self.s_rtr.val() {
                self.rsp_v.next = true;
                self.rsp_kind.next = self.k_rsp_init.val();
            }
            if (self.s1_new.q.val() == self.s_rts.val()) & (self.old.val() == self.s_rtr.val()) {
                self.req_v.next = true;
                self.req_kind.next = self.k_req_init.val();
            }
            if self.s1_new.q.val() == self.s_error.val() {
                // The side that moved the QP to Error needs no event.
                self.rsp_v.next = self.s1_src.q.val() != 1;
                self.rsp_kind.next = self.k_rsp_error.val();
                self.req_v.next = self.old_sends.val() & (self.s1_src.q.val() != 2);
                self.req_kind.next = self.k_req_error.val();
            }
        }

        // The previous-state table: cleared after reset, then written by
        // stage 2.
        self.prev.write_enable.next = self.s1_v.q.val();
        self.prev.write_address.next = self.s1_qpn.q.val();
        self.prev.write_data.next = self.s1_new.q.val();
        if self.clearing.q.val() {
            self.prev.write_enable.next = true;
            self.prev.write_address.next = self.clr.q.val();
            self.prev.write_data.next = self.s_reset.val();
            self.clr.d.next = self.clr.q.val() + 1;
            if self.clr.q.val() == self.last_qp.val() {
                self.clearing.d.next = false;
            }
        }
        if self.reset.val() {
            self.clearing.d.next = true;
            self.clr.d.next = 0.into();
        }
        self.busy.next = self.clearing.q.val();

        // ---- The queues: state events first; receive credits when
        // there is room for them and for a state event after them.
        self.rsp_q.write.next = false;
        self.rsp_q.data_in.next.kind = self.rsp_kind.val();
        self.rsp_q.data_in.next.qpn = bit_cast::<24, Q>(self.s1_qpn.q.val());
        self.rsp_q.data_in.next.count = 0.into();
        self.s_post_recv_ready.next = false;
        if self.rsp_v.val() {
            self.rsp_q.write.next = true;
        } else if !self.reset.val()
            & !self.clearing.q.val()
            & (self.rsp_q.ram_words.val() < self.room.val())
        {
            self.s_post_recv_ready.next = true;
            self.rsp_q.write.next = self.s_post_recv_valid.val();
            self.rsp_q.data_in.next.kind = self.k_rsp_post.val();
            self.rsp_q.data_in.next.qpn = self.s_post_recv_qpn.val();
            self.rsp_q.data_in.next.count = self.s_post_recv_count.val();
        }
        self.req_q.write.next = self.req_v.val();
        self.req_q.data_in.next.kind = self.req_kind.val();
        self.req_q.data_in.next.qpn = bit_cast::<24, Q>(self.s1_qpn.q.val());
        if (self.rsp_v.val() & self.rsp_q.full.val())
            | (self.req_v.val() & self.req_q.full.val())
            | (self.s_rsp_err_valid.val() & self.rsp_err_q.full.val())
            | (self.s_exec_err_valid.val() & self.exec_err_q.full.val())
        {
            self.lost.d.next = self.lost.q.val() + 1;
        }
        if self.reset.val() {
            self.lost.d.next = 0.into();
        }
        self.overflow.next = self.lost.q.val();

        self.m_rsp_ev_valid.next = !self.rsp_q.empty.val();
        self.m_rsp_ev_kind.next = self.rsp_q.data_out.val().kind;
        self.m_rsp_ev_qpn.next = self.rsp_q.data_out.val().qpn;
        self.m_rsp_ev_count.next = self.rsp_q.data_out.val().count;
        self.rsp_q.read.next = self.m_rsp_ev_ready.val() & !self.rsp_q.empty.val();
        self.m_req_ev_valid.next = !self.req_q.empty.val();
        self.m_req_ev_kind.next = self.req_q.data_out.val().kind;
        self.m_req_ev_qpn.next = self.req_q.data_out.val().qpn;
        self.req_q.read.next = self.m_req_ev_ready.val() & !self.req_q.empty.val();
    }
}
