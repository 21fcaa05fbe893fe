//! The QP endpoint: attributes, state machine, work queues, completions,
//! and the entry points that drive the requester, responder and completer
//! (`requester.rs`, `responder.rs`).

use crate::counters::{Counter, Counters};
use crate::memory::{sg_len, Memory, Sge};
use crate::packet::{self, Packet};
use crate::responder::Responder;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use roce_wire::mr::Access;
use roce_wire::opcode::{OpKind, Transport};
use roce_wire::{ExtHeaders, LocalAckTimeout, Pmtu, Psn, RnrTimer};

/// Transport service of a QP.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum QpType {
    /// Reliable connected.
    Rc,
    /// Unreliable connected.
    Uc,
    /// Unreliable datagram.
    Ud,
}

impl QpType {
    /// The opcode-table transport of this service.
    pub const fn transport(self) -> Transport {
        match self {
            QpType::Rc => Transport::Rc,
            QpType::Uc => Transport::Uc,
            QpType::Ud => Transport::Ud,
        }
    }
}

/// QP states (IBTA 10.3.1).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum QpState {
    /// Reset: nothing is accepted or sent.
    Reset,
    /// Initialised: receive WQEs may be posted; nothing on the wire.
    Init,
    /// Ready to receive: the responder works.
    Rtr,
    /// Ready to send: requester, responder and completer work.
    Rts,
    /// Send queue drained: no new send WQE starts; outstanding ones finish.
    Sqd,
    /// Send queue error (UC, UD): the responder still works.
    Sqe,
    /// Error: every outstanding work request was flushed.
    Error,
}

/// QP attributes (IBTA 11.2.5; the fields `ibv_modify_qp` sets).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct QpAttr {
    /// Service type.
    pub qp_type: QpType,
    /// This QP's number (24 bits).
    pub qpn: u32,
    /// The peer QP (RC, UC).
    pub dest_qpn: u32,
    /// Path MTU.
    pub pmtu: Pmtu,
    /// First PSN the requester sends.
    pub sq_psn: Psn,
    /// First PSN the responder expects.
    pub rq_psn: Psn,
    /// Local ACK timeout.
    pub timeout: LocalAckTimeout,
    /// Retries after a timeout or a sequence NAK (3 bits).
    pub retry_cnt: u8,
    /// Retries after an RNR NAK (3 bits, 7 = forever).
    pub rnr_retry: u8,
    /// RNR timer the responder puts in its RNR NAKs.
    pub min_rnr_timer: RnrTimer,
    /// READs and atomics the requester may have outstanding.
    pub max_rd_atomic: u8,
    /// Responder resources for READs and atomics.
    pub max_dest_rd_atomic: u8,
    /// Remote access the responder allows (REMOTE_READ, REMOTE_WRITE, REMOTE_ATOMIC).
    pub access: Access,
    /// Protection domain.
    pub pd: u16,
    /// UD queue key.
    pub qkey: u32,
    /// Partition key.
    pub pkey: u16,
}

impl QpAttr {
    /// Attributes with common defaults: PMTU 1024, PSNs 0, timeout 14
    /// (67 ms), retry_cnt 7, rnr_retry 7, min_rnr_timer 12 (0.64 ms), 16
    /// READ/atomic resources each way, every remote access, PD 0, Q_Key 0,
    /// the default P_Key.
    pub fn new(qp_type: QpType, qpn: u32, dest_qpn: u32) -> QpAttr {
        QpAttr {
            qp_type,
            qpn,
            dest_qpn,
            pmtu: Pmtu::Mtu1024,
            sq_psn: Psn::new(0),
            rq_psn: Psn::new(0),
            timeout: LocalAckTimeout::new(14).expect("valid"),
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: RnrTimer(12),
            max_rd_atomic: 16,
            max_dest_rd_atomic: 16,
            access: Access::REMOTE_READ
                .union(Access::REMOTE_WRITE)
                .union(Access::REMOTE_ATOMIC),
            pd: 0,
            qkey: 0,
            pkey: roce_wire::bth::DEFAULT_PKEY,
        }
    }
}

/// Model parameters that are not IBTA attributes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// AckReq on every N-th packet of a long message as well as on its last
    /// one (0: only the last).
    pub ack_req_every: u32,
    /// At most this many PSNs outstanding (sent, not acknowledged) before
    /// the requester waits (1..=2^22).
    pub window: u32,
    /// Least time between two CNPs of this QP.
    pub cnp_interval: u64,
    /// After an RNR NAK the responder stays silent, like after a sequence
    /// NAK, until the NAKed PSN returns. Off: as rxe, the first packet
    /// behind the NAKed one gets a PSN sequence NAK (the requester ignores
    /// it while it waits out the RNR timer).
    pub silent_after_rnr_nak: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            ack_req_every: 64,
            window: 1024,
            cnp_interval: 50_000,
            silent_after_rnr_nak: false,
        }
    }
}

/// The remote side of a READ, WRITE or atomic.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Remote {
    /// Remote virtual address.
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
}

/// A send work request's operation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WrOp {
    /// SEND.
    Send,
    /// SEND with immediate data.
    SendImm(u32),
    /// SEND with invalidate of the given remote key.
    SendInv(u32),
    /// RDMA WRITE.
    Write(Remote),
    /// RDMA WRITE with immediate data.
    WriteImm(Remote, u32),
    /// RDMA READ into the local scatter list.
    Read(Remote),
    /// CMP & SWAP; the original value lands in the 8-byte local list.
    CmpSwap {
        /// Remote address (8-byte aligned).
        remote: Remote,
        /// Compared with the remote value.
        compare: u64,
        /// Stored when equal.
        swap: u64,
    },
    /// FETCH & ADD; the original value lands in the 8-byte local list.
    FetchAdd {
        /// Remote address (8-byte aligned).
        remote: Remote,
        /// Added to the remote value.
        add: u64,
    },
}

impl WrOp {
    fn wc_opcode(self) -> WcOpcode {
        match self {
            WrOp::Send | WrOp::SendImm(_) | WrOp::SendInv(_) => WcOpcode::Send,
            WrOp::Write(_) | WrOp::WriteImm(..) => WcOpcode::RdmaWrite,
            WrOp::Read(_) => WcOpcode::RdmaRead,
            WrOp::CmpSwap { .. } => WcOpcode::CompSwap,
            WrOp::FetchAdd { .. } => WcOpcode::FetchAdd,
        }
    }

    pub(crate) fn kind(self) -> OpKind {
        match self {
            WrOp::Send | WrOp::SendImm(_) | WrOp::SendInv(_) => OpKind::Send,
            WrOp::Write(_) | WrOp::WriteImm(..) => OpKind::Write,
            WrOp::Read(_) => OpKind::ReadRequest,
            WrOp::CmpSwap { .. } => OpKind::CompareSwap,
            WrOp::FetchAdd { .. } => OpKind::FetchAdd,
        }
    }

    pub(crate) fn is_rd_atomic(self) -> bool {
        matches!(
            self,
            WrOp::Read(_) | WrOp::CmpSwap { .. } | WrOp::FetchAdd { .. }
        )
    }
}

/// UD destination of a send work request.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct UdDest {
    /// Destination QP.
    pub qpn: u32,
    /// Q_Key; with bit 31 set the QP's own Q_Key is sent instead.
    pub qkey: u32,
}

/// A send work request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendWr {
    /// Returned in the completion.
    pub wr_id: u64,
    /// The operation.
    pub op: WrOp,
    /// Local buffers: the payload of a SEND or WRITE, the destination of a
    /// READ, the 8-byte result of an atomic.
    pub sgl: Vec<Sge>,
    /// Wait for every earlier READ and atomic to complete before starting.
    pub fence: bool,
    /// Solicited event bit on the last packet.
    pub solicited: bool,
    /// UD destination (UD only).
    pub ud: Option<UdDest>,
}

impl SendWr {
    /// A work request with no fence, no solicited bit and no UD destination.
    pub fn new(wr_id: u64, op: WrOp, sgl: Vec<Sge>) -> SendWr {
        SendWr {
            wr_id,
            op,
            sgl,
            fence: false,
            solicited: false,
            ud: None,
        }
    }
}

/// A receive work request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecvWr {
    /// Returned in the completion.
    pub wr_id: u64,
    /// Where the SEND payload lands.
    pub sgl: Vec<Sge>,
}

/// Completion status (`ibv_wc_status`, the subset this model produces).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WcStatus {
    /// Success.
    Success,
    /// Local length error (a receive buffer too small).
    LocLenErr,
    /// Local QP operation error (a malformed receive WQE).
    LocQpOpErr,
    /// Local protection error (an lkey check failed).
    LocProtErr,
    /// Flushed: the QP went to Error before this request ran.
    WrFlushErr,
    /// The responder answered invalid request.
    RemInvReqErr,
    /// The responder answered remote access error.
    RemAccessErr,
    /// The responder answered remote operational error.
    RemOpErr,
    /// retry_cnt exhausted.
    RetryExcErr,
    /// rnr_retry exhausted.
    RnrRetryExcErr,
}

/// Completion opcode.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WcOpcode {
    /// SEND (any kind).
    Send,
    /// RDMA WRITE (with or without immediate).
    RdmaWrite,
    /// RDMA READ.
    RdmaRead,
    /// CMP & SWAP.
    CompSwap,
    /// FETCH & ADD.
    FetchAdd,
    /// A received SEND.
    Recv,
    /// A received RDMA WRITE with immediate.
    RecvRdmaWithImm,
}

/// One completion. Send completions come in send-queue order, receive
/// completions in receive-queue order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Completion {
    /// The work request's id.
    pub wr_id: u64,
    /// Status.
    pub status: WcStatus,
    /// What completed.
    pub opcode: WcOpcode,
    /// Bytes: message length (receive side: bytes received).
    pub byte_len: u32,
    /// Immediate data received.
    pub imm: Option<u32>,
    /// Remote key invalidated by a received SEND with invalidate.
    pub invalidated_rkey: Option<u32>,
    /// UD: the sender's QP.
    pub src_qp: Option<u32>,
}

/// Why a work request cannot be posted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PostError {
    /// The QP state does not take this queue's work requests.
    InvalidState,
    /// The operation is not supported by the QP type, or its lengths or
    /// UD destination are wrong.
    InvalidWr,
}

/// Why a state transition is refused.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ModifyError {
    /// Not a transition of the QP state diagram.
    InvalidTransition(QpState, QpState),
    /// An attribute out of range (retry counts over 7, a window of 0 or
    /// over 2^22).
    InvalidAttr,
}

/// A send work request in the send queue.
#[derive(Clone, Debug)]
pub(crate) struct SendWqe {
    pub wr: SendWr,
    /// Message length.
    pub len: u32,
    /// PSNs the message uses (a READ: one per response packet).
    pub npkts: u32,
    /// Assigned when its first packet is sent.
    pub first_psn: Option<Psn>,
}

impl SendWqe {
    pub fn last_psn(&self) -> Option<Psn> {
        self.first_psn.map(|f| f.add(self.npkts - 1))
    }
}

/// Requester and completer state.
#[derive(Clone, Debug)]
pub(crate) struct Requester {
    pub sq: VecDeque<SendWqe>,
    /// Next PSN to assign to a new message.
    pub next_psn: Psn,
    /// Oldest PSN not yet acknowledged.
    pub comp_psn: Psn,
    /// One past the highest PSN a transmitted request covers (a READ: its
    /// last response PSN); no response may name a PSN at or beyond it.
    pub sent_high: Psn,
    /// Send queue index of the WQE being transmitted.
    pub send_idx: usize,
    /// Its next packet (PSN offset from its first PSN).
    pub send_pkt: u32,
    pub retry_left: u8,
    pub rnr_left: u8,
    /// A go-back-N started by a NAK or an implied NAK, without progress since.
    pub retry_started: bool,
    pub ack_deadline: Option<u64>,
    pub rnr_until: Option<u64>,
    /// READs and atomics sent and not complete.
    pub rd_atomic_out: u32,
}

impl Requester {
    fn new(sq_psn: Psn) -> Requester {
        Requester {
            sq: VecDeque::new(),
            next_psn: sq_psn,
            comp_psn: sq_psn,
            sent_high: sq_psn,
            send_idx: 0,
            send_pkt: 0,
            retry_left: 0,
            rnr_left: 0,
            retry_started: false,
            ack_deadline: None,
            rnr_until: None,
            rd_atomic_out: 0,
        }
    }
}

/// One QP: requester, responder and completer of RC, UC or UD.
#[derive(Clone, Debug)]
pub struct Qp {
    pub(crate) attr: QpAttr,
    pub(crate) cfg: Config,
    pub(crate) state: QpState,
    pub(crate) counters: Counters,
    pub(crate) cq: VecDeque<Completion>,
    pub(crate) req: Requester,
    pub(crate) resp: Responder,
    /// A CNP to send, to this QP number.
    pub(crate) cnp_due: Option<u32>,
    pub(crate) last_cnp: Option<u64>,
}

impl Qp {
    /// A QP in Reset with attributes `attr` (the ones a transition takes
    /// are copied again by [`Qp::modify`]).
    pub fn new(attr: QpAttr, cfg: Config) -> Qp {
        Qp {
            attr,
            cfg,
            state: QpState::Reset,
            counters: Counters::default(),
            cq: VecDeque::new(),
            req: Requester::new(attr.sq_psn),
            resp: Responder::new(attr.rq_psn),
            cnp_due: None,
            last_cnp: None,
        }
    }

    /// A QP taken through Reset → Init → RTR → RTS with `attr`.
    pub fn connected(attr: QpAttr, cfg: Config) -> Qp {
        let mut qp = Qp::new(attr, cfg);
        for s in [QpState::Init, QpState::Rtr, QpState::Rts] {
            qp.modify(s, &attr).expect("the standard bring-up");
        }
        qp
    }

    /// The current state.
    pub fn state(&self) -> QpState {
        self.state
    }

    /// The attributes in force.
    pub fn attr(&self) -> &QpAttr {
        &self.attr
    }

    /// The counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The responder's expected PSN.
    pub fn epsn(&self) -> Psn {
        self.resp.epsn
    }

    /// The responder's message sequence number (24 bits).
    pub fn msn(&self) -> u32 {
        self.resp.msn
    }

    /// The PSN the requester gives its next new packet.
    pub fn next_psn(&self) -> Psn {
        self.req.next_psn
    }

    /// The oldest PSN the requester has not seen acknowledged.
    pub fn unacked_psn(&self) -> Psn {
        self.req.comp_psn
    }

    /// Send work requests not yet completed.
    pub fn sq_len(&self) -> usize {
        self.req.sq.len()
    }

    /// Receive work requests posted and not yet consumed.
    pub fn rq_len(&self) -> usize {
        self.resp.rq.len()
    }

    /// Moves the QP to `target`, taking from `attr` the attributes that
    /// transition sets (IBTA 11.2.5.1 / DESIGN §8): Reset→Init: P_Key,
    /// access, PD, Q_Key; Init→RTR: PMTU, dest QPN, rq PSN,
    /// max_dest_rd_atomic, min_rnr_timer; RTR→RTS: sq PSN, timeout,
    /// retry_cnt, rnr_retry, max_rd_atomic. Any state may go to Reset
    /// (everything cleared) or Error (everything flushed).
    pub fn modify(&mut self, target: QpState, attr: &QpAttr) -> Result<(), ModifyError> {
        use QpState::*;
        if attr.retry_cnt > 7 || attr.rnr_retry > 7 || !(1..=1 << 22).contains(&self.cfg.window) {
            return Err(ModifyError::InvalidAttr);
        }
        let a = &mut self.attr;
        match (self.state, target) {
            (_, Reset) => {
                *self = Qp::new(*attr, self.cfg);
                return Ok(());
            }
            (_, Error) => {
                self.enter_error();
                return Ok(());
            }
            (Reset, Init) | (Init, Init) => {
                a.pkey = attr.pkey;
                a.access = attr.access;
                a.pd = attr.pd;
                a.qkey = attr.qkey;
            }
            (Init, Rtr) => {
                a.pmtu = attr.pmtu;
                a.dest_qpn = attr.dest_qpn;
                a.rq_psn = attr.rq_psn;
                a.max_dest_rd_atomic = attr.max_dest_rd_atomic;
                a.min_rnr_timer = attr.min_rnr_timer;
                a.access = attr.access;
                let rq = core::mem::take(&mut self.resp.rq);
                self.resp = Responder::new(attr.rq_psn);
                self.resp.rq = rq;
            }
            (Rtr, Rts) => {
                a.sq_psn = attr.sq_psn;
                a.timeout = attr.timeout;
                a.retry_cnt = attr.retry_cnt;
                a.rnr_retry = attr.rnr_retry;
                a.max_rd_atomic = attr.max_rd_atomic;
                let sq = core::mem::take(&mut self.req.sq);
                self.req = Requester::new(attr.sq_psn);
                self.req.sq = sq;
                self.req.retry_left = attr.retry_cnt;
                self.req.rnr_left = attr.rnr_retry;
            }
            (Rts, Rts) | (Sqd, Sqd) | (Sqe, Rts) | (Rts, Sqd) | (Sqd, Rts) => {
                a.timeout = attr.timeout;
                a.retry_cnt = attr.retry_cnt;
                a.rnr_retry = attr.rnr_retry;
                a.min_rnr_timer = attr.min_rnr_timer;
                a.access = attr.access;
            }
            (from, to) => return Err(ModifyError::InvalidTransition(from, to)),
        }
        self.state = target;
        Ok(())
    }

    /// Posts a send work request. In Error it completes at once with a
    /// flush error.
    pub fn post_send(&mut self, wr: SendWr) -> Result<(), PostError> {
        match self.state {
            QpState::Reset | QpState::Init | QpState::Rtr => return Err(PostError::InvalidState),
            _ => {}
        }
        let len = sg_len(&wr.sgl);
        let ok_op = match self.attr.qp_type {
            QpType::Rc => true,
            // UC has no SEND with invalidate, READ or atomics.
            QpType::Uc => matches!(
                wr.op,
                WrOp::Send | WrOp::SendImm(_) | WrOp::Write(_) | WrOp::WriteImm(..)
            ),
            QpType::Ud => {
                matches!(wr.op, WrOp::Send | WrOp::SendImm(_))
                    && wr.ud.is_some()
                    && len <= self.attr.pmtu.bytes() as u64
            }
        };
        let atomic_len = !matches!(wr.op, WrOp::CmpSwap { .. } | WrOp::FetchAdd { .. }) || len == 8;
        if !ok_op || !atomic_len || len > 1 << 31 {
            return Err(PostError::InvalidWr);
        }
        let npkts = match wr.op {
            WrOp::CmpSwap { .. } | WrOp::FetchAdd { .. } => 1,
            _ => self.attr.pmtu.packets(len) as u32,
        };
        let wqe = SendWqe {
            wr,
            len: len as u32,
            npkts,
            first_psn: None,
        };
        if self.state == QpState::Error || self.state == QpState::Sqe {
            self.cq.push_back(flush(&wqe.wr));
        } else {
            self.req.sq.push_back(wqe);
        }
        Ok(())
    }

    /// Posts a receive work request. In Error it completes at once with a
    /// flush error.
    pub fn post_recv(&mut self, wr: RecvWr) -> Result<(), PostError> {
        match self.state {
            QpState::Reset => Err(PostError::InvalidState),
            QpState::Error => {
                self.cq.push_back(Completion {
                    wr_id: wr.wr_id,
                    status: WcStatus::WrFlushErr,
                    opcode: WcOpcode::Recv,
                    byte_len: 0,
                    imm: None,
                    invalidated_rkey: None,
                    src_qp: None,
                });
                Ok(())
            }
            _ => {
                self.resp.rq.push_back(wr);
                Ok(())
            }
        }
    }

    /// The oldest completion.
    pub fn poll_cq(&mut self) -> Option<Completion> {
        self.cq.pop_front()
    }

    /// The earliest time a timer (local ACK timeout, RNR wait) fires, if
    /// one runs. Between events the caller drains [`Qp::poll_transmit`]
    /// and waits until the next frame or this deadline.
    pub fn next_deadline(&self) -> Option<u64> {
        match (self.req.ack_deadline, self.req.rnr_until) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Handles one received packet. `ce` is the IP ECN field's CE mark.
    /// `now` is in nanoseconds (as every time of this model).
    pub fn receive<M: Memory + ?Sized>(&mut self, now: u64, pkt: &Packet, ce: bool, mem: &mut M) {
        self.handle_timers(now);
        if pkt.bth.dest_qp != self.attr.qpn {
            self.counters.inc(Counter::DropDestQp);
            return;
        }
        let Some(info) = pkt.info() else {
            self.counters.inc(Counter::DropTransport);
            return;
        };
        if pkt.ext.mismatch(info).is_some() || (!info.has_payload() && !pkt.payload.is_empty()) {
            self.counters.inc(Counter::DropMalformed);
            return;
        }
        if !matches!(
            self.state,
            QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe
        ) {
            self.counters.inc(Counter::DropQpState);
            return;
        }
        if !pkey_match(pkt.bth.pkey, self.attr.pkey) {
            self.counters.inc(Counter::DropPkey);
            return;
        }
        if info.transport == Transport::Cnp {
            self.counters.inc(Counter::CnpReceived);
            return;
        }
        if info.transport != self.attr.qp_type.transport() {
            self.counters.inc(Counter::DropTransport);
            return;
        }
        if ce {
            self.counters.inc(Counter::CeReceived);
            let to = match (self.attr.qp_type, pkt.ext.deth) {
                (QpType::Ud, Some(d)) => d.src_qp,
                _ => self.attr.dest_qpn,
            };
            if self
                .last_cnp
                .is_none_or(|t| now.saturating_sub(t) >= self.cfg.cnp_interval)
            {
                self.cnp_due = Some(to);
                self.last_cnp = Some(now);
            } else {
                self.counters.inc(Counter::CnpSuppressed);
            }
        }
        match info.kind {
            OpKind::ReadResponse | OpKind::Acknowledge | OpKind::AtomicAcknowledge => {
                self.on_response(now, pkt, info, mem)
            }
            _ => self.on_request(pkt, info, mem),
        }
    }

    /// The next packet to send, if any: a CNP first, then responses (ACK,
    /// NAK, READ response, ATOMIC ACK) in PSN order, then requests. Fires
    /// due timers first. Call until it returns `None`.
    pub fn poll_transmit<M: Memory + ?Sized>(&mut self, now: u64, mem: &mut M) -> Option<Packet> {
        self.handle_timers(now);
        if let Some(to) = self.cnp_due.take() {
            self.counters.inc(Counter::CnpSent);
            let op = packet::opcode(
                Transport::Cnp,
                OpKind::Cnp,
                roce_wire::Position::Only,
                false,
                false,
            );
            let mut bth = packet::bth(op, self.attr.pkey, to, false, Psn::new(0));
            bth.becn = true;
            return Some(packet::packet(bth, ExtHeaders::default(), Vec::new()));
        }
        if let Some(p) = self.next_response(mem) {
            return Some(p);
        }
        self.next_request(now, mem)
    }

    /// Fires the timers that are due at `now` (also done by
    /// [`Qp::receive`] and [`Qp::poll_transmit`]).
    pub fn handle_timers(&mut self, now: u64) {
        if !matches!(self.state, QpState::Rts | QpState::Sqd) {
            return;
        }
        if self.req.rnr_until.is_some_and(|t| now >= t) {
            self.req.rnr_until = None;
            self.counters.inc(Counter::RetryRnr);
            self.go_back(now);
        }
        if self.req.ack_deadline.is_some_and(|t| now >= t) {
            if !self.outstanding() {
                self.req.ack_deadline = None;
            } else if self.req.retry_left == 0 {
                self.counters.inc(Counter::RetryExceeded);
                self.fail_head(WcStatus::RetryExcErr);
            } else {
                self.req.retry_left -= 1;
                self.counters.inc(Counter::RetryTimeout);
                self.go_back(now);
            }
        }
    }

    /// Completes the send queue's head with `status` and moves the QP to
    /// Error (RC) or SQE (UC, UD), flushing the rest.
    pub(crate) fn fail_head(&mut self, status: WcStatus) {
        if let Some(w) = self.req.sq.pop_front() {
            self.cq.push_back(Completion {
                status,
                ..flush(&w.wr)
            });
        }
        if self.attr.qp_type == QpType::Rc {
            self.enter_error();
        } else {
            while let Some(w) = self.req.sq.pop_front() {
                self.cq.push_back(flush(&w.wr));
            }
            self.req.send_idx = 0;
            self.req.send_pkt = 0;
            self.state = QpState::Sqe;
        }
    }

    /// Moves to Error: every send and receive work request still queued
    /// completes with a flush error, timers stop. Responses already queued
    /// (the NAK that caused the error) are still sent.
    pub(crate) fn enter_error(&mut self) {
        if self.state == QpState::Error {
            return;
        }
        self.state = QpState::Error;
        while let Some(w) = self.req.sq.pop_front() {
            self.cq.push_back(flush(&w.wr));
        }
        self.req.ack_deadline = None;
        self.req.rnr_until = None;
        self.req.send_idx = 0;
        self.req.send_pkt = 0;
        self.req.rd_atomic_out = 0;
        if let Some(w) = self.resp.take_current_wqe() {
            self.cq
                .push_back(recv_completion(w.wr_id, WcStatus::WrFlushErr));
        }
        while let Some(w) = self.resp.rq.pop_front() {
            self.cq
                .push_back(recv_completion(w.wr_id, WcStatus::WrFlushErr));
        }
    }

    /// Some request packet is sent and not yet acknowledged.
    pub(crate) fn outstanding(&self) -> bool {
        self.req.sq.front().is_some_and(|w| w.first_psn.is_some())
    }
}

/// P_Key match (IBTA 10.9.3): the low 15 bits agree and at least one of
/// the two is a full member.
pub fn pkey_match(a: u16, b: u16) -> bool {
    (a & 0x7FFF) == (b & 0x7FFF) && (a | b) & 0x8000 != 0
}

pub(crate) fn flush(wr: &SendWr) -> Completion {
    Completion {
        wr_id: wr.wr_id,
        status: WcStatus::WrFlushErr,
        opcode: wr.op.wc_opcode(),
        byte_len: 0,
        imm: None,
        invalidated_rkey: None,
        src_qp: None,
    }
}

pub(crate) fn recv_completion(wr_id: u64, status: WcStatus) -> Completion {
    Completion {
        wr_id,
        status,
        opcode: WcOpcode::Recv,
        byte_len: 0,
        imm: None,
        invalidated_rkey: None,
        src_qp: None,
    }
}

pub(crate) fn send_completion(w: &SendWqe) -> Completion {
    Completion {
        wr_id: w.wr.wr_id,
        status: WcStatus::Success,
        opcode: w.wr.op.wc_opcode(),
        byte_len: w.len,
        imm: None,
        invalidated_rkey: None,
        src_qp: None,
    }
}
