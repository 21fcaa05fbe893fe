//! `req_engine`: the RC requester and completer. Work requests in, request
//! packets out (to `tx_arb`'s `s_req_*`), responses in (from the dispatch
//! after `roce_rx`), send completions out — with the order and outcomes of
//! `roce_transport`'s requester (`transport/src/requester.rs`,
//! `transport/src/qp.rs`), the reference it is tested against:
//!
//! - **Work requests** (`s_wqe_*`, one send WQE the host interface
//!   fetched) go into a per-QP ring of `2^R` records in block RAM. They
//!   are segmented at the context's PMTU (FIRST/MIDDLE/LAST/ONLY), PSNs
//!   assigned at the first packet (24-bit wrap), AckReq on the last packet
//!   of a message, on every [`ACK_REQ_EVERY`]-th packet of one, and on the
//!   packet that fills the [`WINDOW`]. A READ or atomic waits while
//!   `max_rd_atomic` of them are outstanding (and everything behind it, as
//!   the model does); a fenced one while any is.
//! - **Payloads** are read from local memory at transmission time: the
//!   SGE's lkey through `mr_tlb` (`m_mr_req` / `s_mr_grant`, local read:
//!   no access flag), then one `dma_rd` command per granted chunk
//!   (`m_rd_cmd`); the `dma_rd` stream (`s_rd`) is passed through to
//!   `tx_arb`'s `s_req_pay` (`m_req_pay`). A `phys` WQE (`s_wqe_phys`:
//!   inline data, which `host_if` leaves in the send queue) is read with
//!   one `dma_rd` command at its physical address, without `mr_tlb`.
//! - **Retransmission regenerates** packets from the WQE records and reads
//!   memory again (what rxe does, and what the model does): go-back-N
//!   rewinds the ring cursor to the oldest unacknowledged WQE and the
//!   packet offset to the oldest unacknowledged PSN; a READ is retried from
//!   the first missing response packet (RETH VA and length moved on).
//! - **Responses** (`s_rsp_*`): ACK (cumulative by PSN), implied ACKs (a
//!   READ response or ATOMIC ACK acknowledges every earlier request; an
//!   earlier READ/atomic without its response starts a retry), PSN
//!   sequence NAK (go-back-N from its PSN), RNR NAK (wait the NAK's RNR
//!   time, then go back; `rnr_retry` 7 = forever), error NAKs (error
//!   completion, the QP to Error, the rest flushed). READ response
//!   payloads go to the WQE's local SGE (`mr_tlb` with local write, then
//!   `m_wr_cmd` per chunk, the payload stream consumed by `dma_wr`
//!   outside this block); an ATOMIC ACK's original value is written as an
//!   immediate `dma_wr` command. Stale, unexpected and out-of-order
//!   responses are dropped and counted (their payload discarded).
//! - **Timers** are `qp_timers` entries `2·qpn` (local ACK timeout,
//!   4.096 µs·2^timeout) and `2·qpn + 1` (RNR wait), armed through `m_arm`;
//!   expiries come back on `s_exp`. The deadline is also kept here and
//!   checked against `s_now`, so a stale report is ignored.
//! - **Completions** (`m_scqe_*`) in order per QP, after the data they
//!   cover is written (every `dma_wr` command done).
//!
//! One event at a time (a state machine): a QP's state word is read,
//! worked on and written back before the next event, so there is no
//! forwarding to get wrong; throughput is a later matter.

use crate::bram::Bram;
use crate::csr::{ctx_layout, QP_CTX_BITS};
use crate::prim::Counter32;
use crate::resp_chk::{PD_BITS, RDA_BITS};
use crate::stream::{check_width, StreamIn, StreamOut};
use roce_wire::mr::Access;
use roce_wire::opcode::{flags, ExtKind, OpKind, Position, Transport, TABLE};
use roce_wire::RnrTimer;
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

/// Work request opcodes on `s_wqe_op` (and `m_scqe_opcode`).
pub const OP_SEND: u64 = 0;
pub const OP_SEND_IMM: u64 = 1;
pub const OP_SEND_INV: u64 = 2;
pub const OP_WRITE: u64 = 3;
pub const OP_WRITE_IMM: u64 = 4;
pub const OP_READ: u64 = 5;
pub const OP_CMP_SWAP: u64 = 6;
pub const OP_FETCH_ADD: u64 = 7;

/// Completion status on `m_scqe_status` (the model's `WcStatus`).
pub const ST_SUCCESS: u64 = 0;
pub const ST_LOC_LEN: u64 = 1;
pub const ST_LOC_PROT: u64 = 2;
pub const ST_FLUSH: u64 = 3;
pub const ST_REM_INV_REQ: u64 = 4;
pub const ST_REM_ACCESS: u64 = 5;
pub const ST_REM_OP: u64 = 6;
pub const ST_RETRY_EXC: u64 = 7;
pub const ST_RNR_RETRY_EXC: u64 = 8;

/// Events on `s_ev_kind`.
pub const EV_INIT: u64 = 0;
/// The QP was moved to Error from outside: flush its send queue.
pub const EV_ERROR: u64 = 1;

/// AckReq at least every this many packets of a message (the model's
/// `Config::default().ack_req_every`, a power of two here).
pub const ACK_REQ_EVERY: u32 = 64;
/// PSNs outstanding before the requester waits (`Config::default().window`).
pub const WINDOW: u32 = 1024;
/// The `qp_timers` tick this block's tables assume, in picoseconds: 128
/// cycles at 156.25 MHz (`qp_timers`'s default build).
pub const TICK_PS: u64 = 819_200;

/// Counters, in `cnt_*` port order (the model's `Counter` names).
pub const COUNTERS: [&str; 15] = [
    "req_sent",
    "req_retx",
    "retry_seq_nak",
    "retry_implied",
    "retry_timeout",
    "retry_rnr",
    "retry_ignored",
    "retry_exceeded",
    "rnr_exceeded",
    "rnr_nak",
    "nak_err",
    "drop_stale",
    "drop_unexpected",
    "drop_out_of_order",
    "drop_qp_state",
];

/// One send WQE as the ring holds it.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct WqeRec {
    pub op: Bits<3>,
    pub signaled: Bit,
    pub solicited: Bit,
    pub fence: Bit,
    /// `lva` is a host physical address read without `mr_tlb` (an inline
    /// WQE's data in its send-queue slot).
    pub phys: Bit,
    pub wr_id: Bits<64>,
    pub lkey: Bits<32>,
    pub lva: Bits<64>,
    pub len: Bits<32>,
    pub rva: Bits<64>,
    pub rkey: Bits<32>,
    pub imm: Bits<32>,
    pub swap: Bits<64>,
    pub compare: Bits<64>,
    /// The first packet was sent: `first` is its PSN.
    pub started: Bit,
    pub first: Bits<24>,
    /// PSNs the message uses (a READ: its response packets).
    pub npkts: Bits<24>,
}

/// Per-QP requester state (one block-RAM word per QP).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct ReqState {
    /// This block moved the QP to Error (cleared by `EV_INIT`).
    pub err: Bit,
    /// In the transmit queue.
    pub queued: Bit,
    /// The local ACK timer runs.
    pub ack_on: Bit,
    /// Waiting out an RNR NAK.
    pub rnr_on: Bit,
    /// A go-back-N started by a NAK without progress since.
    pub retry_started: Bit,
    pub next_psn: Bits<24>,
    /// Oldest PSN not acknowledged.
    pub comp_psn: Bits<24>,
    /// One past the highest PSN a sent request covers.
    pub sent_high: Bits<24>,
    /// Ring: oldest WQE, WQE being sent, next free (wrap bit above R).
    pub head: Bits<8>,
    pub cur: Bits<8>,
    pub tail: Bits<8>,
    /// Next packet of the WQE at `cur` (PSN offset from its first).
    pub send_pkt: Bits<24>,
    pub rd_out: Bits<8>,
    pub retry_left: Bits<3>,
    pub rnr_left: Bits<3>,
    /// The running timer's deadline, in `s_now` ticks.
    pub deadline: Bits<32>,
}

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum Rq {
    Idle,
    KickRd,
    Rd0,
    Rd1,
    Rd2,
    WqeTake,
    // Transmit one packet.
    TxRd,
    TxDec,
    TxPkt,
    TxMr,
    TxGrant,
    TxDesc,
    // Responses.
    Rsp,
    RspAck,
    SrRd,
    SrChk,
    RrChk,
    RrOrd,
    RrMr,
    RrGrant,
    AtGrant,
    RrDone,
    AfterAb,
    // Timer expiry.
    Exp,
    ExpChk,
    // AckBefore(ab_q): a loop over the ring's head.
    AbRd,
    AbChk,
    // Complete the head (success), return to ret2.
    ChCqe,
    // Progress, return to ret.
    PgRd,
    PgDo,
    // Go-back-N, return to ret.
    GbRd,
    GbDo,
    // RetryAfterNak, then Fin.
    Retry,
    // OnRnrNak, then Fin.
    Rnr,
    // Flush from head with fail_at / fail_status.
    FlRd,
    FlCqe,
    FlEnd,
    ErrEv,
    // Immediate flush CQE of a WQE posted to a QP in Error.
    WqeFlush,
    // Tail: discard, arm, write back, kick.
    Fin,
    Disc,
    Arm,
    Wb,
}

fn ctx_offset(
    reg: &roce_regs::Register,
    field: &roce_regs::Field,
    width: usize,
) -> Constant<Bits<16>> {
    let (_, f, at) = ctx_layout()
        .into_iter()
        .find(|(r, f, _)| r.name == reg.name && f.name == field.name)
        .unwrap_or_else(|| {
            panic!(
                "context field {}.{} not in the layout",
                reg.name, field.name
            )
        });
    assert_eq!(f.width as usize, width, "{}.{} width", reg.name, field.name);
    Constant::new((at as u64).into())
}

const ST_BITS: usize = roce_regs::STATE_BITS as usize;
const TY_BITS: usize = roce_regs::QP_TYPE_BITS as usize;
const PMTU_BITS: usize = roce_regs::PMTU_BITS as usize;
const TO_BITS: usize = roce_regs::TIMEOUT_BITS as usize;
const RT_BITS: usize = roce_regs::RETRY_BITS as usize;

/// The RC request opcode of WR op `op` (OP_*) at position `pos` (0 FIRST,
/// 1 MIDDLE, 2 LAST, 3 ONLY): a 32 × 8-bit table, entry `op·4 + pos`.
fn opcode_table() -> Constant<Bits<256>> {
    let find = |kind: OpKind, pos: Position, imm: bool, inv: bool| -> u64 {
        TABLE
            .iter()
            .find(|i| {
                i.transport == Transport::Rc
                    && i.kind == kind
                    && i.position == pos
                    && i.has(ExtKind::ImmDt) == imm
                    && i.has(ExtKind::Ieth) == inv
            })
            .map(|i| i.code as u64)
            .unwrap_or_else(|| panic!("no RC {kind:?} {pos:?} imm {imm} inv {inv}"))
    };
    let pos = [
        Position::First,
        Position::Middle,
        Position::Last,
        Position::Only,
    ];
    let mut b = Bits::<256>::default();
    for op in 0..8u64 {
        for (p, &ps) in pos.iter().enumerate() {
            let last = p >= 2;
            let code = match op {
                OP_SEND => find(OpKind::Send, ps, false, false),
                OP_SEND_IMM => find(OpKind::Send, ps, last, false),
                OP_SEND_INV => find(OpKind::Send, ps, false, last),
                OP_WRITE => find(OpKind::Write, ps, false, false),
                OP_WRITE_IMM => find(OpKind::Write, ps, last, false),
                OP_READ => find(OpKind::ReadRequest, Position::Only, false, false),
                OP_CMP_SWAP => find(OpKind::CompareSwap, Position::Only, false, false),
                _ => find(OpKind::FetchAdd, Position::Only, false, false),
            };
            let at = ((op as usize) * 4 + p) * 8;
            for bit in 0..8 {
                b = b.replace_bit(at + bit, (code >> bit) & 1 != 0);
            }
        }
    }
    Constant::new(b)
}

fn needs_ack_rom() -> Constant<Bits<256>> {
    let mut b = Bits::<256>::default();
    for i in TABLE.iter().filter(|i| i.transport == Transport::Rc) {
        if i.flags() & flags::NEEDS_ACK != 0 {
            b = b.replace_bit(i.code as usize, true);
        }
    }
    Constant::new(b)
}

/// Ticks (of [`TICK_PS`]) for `ns` nanoseconds, rounded up, plus one (a
/// timer armed with d ticks comes due d−1 to d ticks later), clamped to
/// `2^31 − 1` (the `qp_timers` limit).
pub fn ticks(ns: u64) -> u64 {
    ((ns * 1000).div_ceil(TICK_PS) + 1).min((1 << 31) - 1)
}

/// Local ACK timeout ticks by `timeout` code (0: disabled, entry 0).
fn timeout_table() -> Constant<Bits<1024>> {
    let mut b = Bits::<1024>::default();
    for t in 1..32usize {
        let v = ticks(4096u64 << t);
        for bit in 0..32 {
            b = b.replace_bit(t * 32 + bit, (v >> bit) & 1 != 0);
        }
    }
    Constant::new(b)
}

/// RNR wait ticks by RNR timer code.
fn rnr_table() -> Constant<Bits<1024>> {
    let mut b = Bits::<1024>::default();
    for (t, &us) in RnrTimer::TABLE_US.iter().enumerate() {
        let v = ticks(us as u64 * 1000);
        for bit in 0..32 {
            b = b.replace_bit(t * 32 + bit, (v >> bit) & 1 != 0);
        }
    }
    Constant::new(b)
}

/// The requester and completer: stream width `W` (`K` = W/8), `2^Q` QPs,
/// `E` = Q + 1 timer entry bits, `2^R` WQE records per QP, `A` = Q + R.
#[derive(LogicBlock)]
pub struct ReqEngine<
    const W: usize,
    const K: usize,
    const Q: usize,
    const E: usize,
    const R: usize,
    const A: usize,
> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // QP events (the csr / firmware side).
    pub s_ev_valid: Signal<In, Bit>,
    pub s_ev_ready: Signal<Out, Bit>,
    pub s_ev_kind: Signal<In, Bits<2>>,
    pub s_ev_qpn: Signal<In, Bits<24>>,
    // Work requests.
    pub s_wqe_valid: Signal<In, Bit>,
    pub s_wqe_ready: Signal<Out, Bit>,
    pub s_wqe_qpn: Signal<In, Bits<24>>,
    pub s_wqe_op: Signal<In, Bits<3>>,
    pub s_wqe_signaled: Signal<In, Bit>,
    pub s_wqe_solicited: Signal<In, Bit>,
    pub s_wqe_fence: Signal<In, Bit>,
    pub s_wqe_wr_id: Signal<In, Bits<64>>,
    pub s_wqe_lkey: Signal<In, Bits<32>>,
    pub s_wqe_lva: Signal<In, Bits<64>>,
    /// `s_wqe_lva` is a host physical address (SEND/WRITE only): the
    /// payload is read from it without `mr_tlb` (inline data in the send
    /// queue, which the host does not reuse before the completion).
    pub s_wqe_phys: Signal<In, Bit>,
    pub s_wqe_len: Signal<In, Bits<32>>,
    pub s_wqe_rva: Signal<In, Bits<64>>,
    pub s_wqe_rkey: Signal<In, Bits<32>>,
    pub s_wqe_imm: Signal<In, Bits<32>>,
    pub s_wqe_swap: Signal<In, Bits<64>>,
    pub s_wqe_compare: Signal<In, Bits<64>>,
    // QP context (csr's datapath port, 2-cycle read).
    pub qp_rd_addr: Signal<Out, Bits<Q>>,
    pub qp_rd_data: Signal<In, Bits<QP_CTX_BITS>>,
    // Request descriptors (tx_arb's s_req_*).
    pub m_req_valid: Signal<Out, Bit>,
    pub m_req_ready: Signal<In, Bit>,
    pub m_req_qpn: Signal<Out, Bits<Q>>,
    pub m_req_opcode: Signal<Out, Bits<8>>,
    pub m_req_psn: Signal<Out, Bits<24>>,
    pub m_req_ack_req: Signal<Out, Bits<1>>,
    pub m_req_se: Signal<Out, Bits<1>>,
    pub m_req_payload_len: Signal<Out, Bits<16>>,
    pub m_req_aeth_syndrome: Signal<Out, Bits<8>>,
    pub m_req_aeth_msn: Signal<Out, Bits<24>>,
    pub m_req_reth_va: Signal<Out, Bits<64>>,
    pub m_req_reth_rkey: Signal<Out, Bits<32>>,
    pub m_req_reth_dmalen: Signal<Out, Bits<32>>,
    pub m_req_immdt: Signal<Out, Bits<32>>,
    pub m_req_ieth: Signal<Out, Bits<32>>,
    pub m_req_atomic_va: Signal<Out, Bits<64>>,
    pub m_req_atomic_rkey: Signal<Out, Bits<32>>,
    pub m_req_atomic_swap_add: Signal<Out, Bits<64>>,
    pub m_req_atomic_compare: Signal<Out, Bits<64>>,
    pub m_req_atomic_ack_data: Signal<Out, Bits<64>>,
    pub m_req_becn: Signal<Out, Bits<1>>,
    pub m_req_pay: StreamOut<W, K>,
    // mr_tlb's request port.
    pub m_mr_req_valid: Signal<Out, Bit>,
    pub m_mr_req_ready: Signal<In, Bit>,
    pub m_mr_req_key: Signal<Out, Bits<32>>,
    pub m_mr_req_pd: Signal<Out, Bits<PD_BITS>>,
    pub m_mr_req_access: Signal<Out, Bits<4>>,
    pub m_mr_req_va: Signal<Out, Bits<64>>,
    pub m_mr_req_len: Signal<Out, Bits<32>>,
    pub s_mr_grant_valid: Signal<In, Bit>,
    pub s_mr_grant_ready: Signal<Out, Bit>,
    pub s_mr_grant_pa: Signal<In, Bits<64>>,
    pub s_mr_grant_len: Signal<In, Bits<32>>,
    pub s_mr_grant_last: Signal<In, Bit>,
    pub s_mr_grant_reason: Signal<In, Bits<3>>,
    // dma_rd (request payloads).
    pub m_rd_cmd_valid: Signal<Out, Bit>,
    pub m_rd_cmd_ready: Signal<In, Bit>,
    pub m_rd_cmd_addr: Signal<Out, Bits<64>>,
    pub m_rd_cmd_len: Signal<Out, Bits<32>>,
    pub m_rd_cmd_last: Signal<Out, Bit>,
    pub s_rd: StreamIn<W, K>,
    // Responses (roce_rx's m_hdr_* fields, dispatched).
    pub s_rsp_valid: Signal<In, Bit>,
    pub s_rsp_ready: Signal<Out, Bit>,
    pub s_rsp_destqp: Signal<In, Bits<24>>,
    pub s_rsp_opcode: Signal<In, Bits<8>>,
    pub s_rsp_psn: Signal<In, Bits<24>>,
    pub s_rsp_payload_len: Signal<In, Bits<16>>,
    pub s_rsp_aeth_syndrome: Signal<In, Bits<8>>,
    pub s_rsp_aeth_msn: Signal<In, Bits<24>>,
    pub s_rsp_atomicack_orig: Signal<In, Bits<64>>,
    // dma_wr (READ response payloads, atomic results).
    pub m_wr_cmd_valid: Signal<Out, Bit>,
    pub m_wr_cmd_ready: Signal<In, Bit>,
    pub m_wr_cmd_addr: Signal<Out, Bits<64>>,
    pub m_wr_cmd_len: Signal<Out, Bits<32>>,
    pub m_wr_cmd_last: Signal<Out, Bit>,
    pub m_wr_cmd_discard: Signal<Out, Bit>,
    pub m_wr_cmd_imm: Signal<Out, Bit>,
    pub m_wr_cmd_data: Signal<Out, Bits<64>>,
    pub s_wr_done_valid: Signal<In, Bit>,
    pub s_wr_done_ready: Signal<Out, Bit>,
    pub s_wr_done_err: Signal<In, Bit>,
    // Timers (qp_timers).
    pub m_arm_valid: Signal<Out, Bit>,
    pub m_arm_ready: Signal<In, Bit>,
    pub m_arm_entry: Signal<Out, Bits<E>>,
    pub m_arm_delay: Signal<Out, Bits<32>>,
    pub m_arm_disarm: Signal<Out, Bit>,
    pub s_exp_valid: Signal<In, Bit>,
    pub s_exp_ready: Signal<Out, Bit>,
    pub s_exp_entry: Signal<In, Bits<E>>,
    pub s_now: Signal<In, Bits<32>>,
    // Send completions.
    pub m_scqe_valid: Signal<Out, Bit>,
    pub m_scqe_ready: Signal<In, Bit>,
    pub m_scqe_qpn: Signal<Out, Bits<24>>,
    pub m_scqe_wr_id: Signal<Out, Bits<64>>,
    pub m_scqe_status: Signal<Out, Bits<4>>,
    pub m_scqe_opcode: Signal<Out, Bits<3>>,
    pub m_scqe_byte_len: Signal<Out, Bits<32>>,
    // The requester moved a QP to Error.
    pub m_err_valid: Signal<Out, Bit>,
    pub m_err_ready: Signal<In, Bit>,
    pub m_err_qpn: Signal<Out, Bits<24>>,
    // Counters (`COUNTERS`).
    pub cnt_req_sent: Signal<Out, Bits<32>>,
    pub cnt_req_retx: Signal<Out, Bits<32>>,
    pub cnt_retry_seq_nak: Signal<Out, Bits<32>>,
    pub cnt_retry_implied: Signal<Out, Bits<32>>,
    pub cnt_retry_timeout: Signal<Out, Bits<32>>,
    pub cnt_retry_rnr: Signal<Out, Bits<32>>,
    pub cnt_retry_ignored: Signal<Out, Bits<32>>,
    pub cnt_retry_exceeded: Signal<Out, Bits<32>>,
    pub cnt_rnr_exceeded: Signal<Out, Bits<32>>,
    pub cnt_rnr_nak: Signal<Out, Bits<32>>,
    pub cnt_nak_err: Signal<Out, Bits<32>>,
    pub cnt_drop_stale: Signal<Out, Bits<32>>,
    pub cnt_drop_unexpected: Signal<Out, Bits<32>>,
    pub cnt_drop_out_of_order: Signal<Out, Bits<32>>,
    pub cnt_drop_qp_state: Signal<Out, Bits<32>>,
    // ---- State.
    state: DFF<Rq>,
    ret: DFF<Rq>,
    ret2: DFF<Rq>,
    ekind: DFF<Bits<3>>,
    qpn: DFF<Bits<24>>,
    st: DFF<ReqState>,
    rec: DFF<WqeRec>,
    w: DFF<WqeRec>,
    // Context fields.
    c_state: DFF<Bits<ST_BITS>>,
    c_type: DFF<Bits<TY_BITS>>,
    c_pmtu: DFF<Bits<PMTU_BITS>>,
    c_timeout: DFF<Bits<TO_BITS>>,
    c_retry: DFF<Bits<RT_BITS>>,
    c_rnr: DFF<Bits<RT_BITS>>,
    c_mra: DFF<Bits<RDA_BITS>>,
    c_pd: DFF<Bits<PD_BITS>>,
    c_sq_psn: DFF<Bits<24>>,
    // The response.
    r_op: DFF<Bits<8>>,
    r_psn: DFF<Bits<24>>,
    r_syn: DFF<Bits<8>>,
    r_orig: DFF<Bits<64>>,
    r_plen: DFF<Bits<16>>,
    x_kind: DFF<Bit>,
    // Work registers.
    ab_q: DFF<Bits<24>>,
    comp_before: DFF<Bits<24>>,
    pg_cond: DFF<Bit>,
    lost: DFF<Bit>,
    why: DFF<Bits<16>>,
    fail_at: DFF<Bits<8>>,
    fail_status: DFF<Bits<4>>,
    idx: DFF<Bits<8>>,
    k: DFF<Bits<24>>,
    t_disc: DFF<Bit>,
    t_arm: DFF<Bit>,
    arm_kind: DFF<Bit>,
    arm_delay: DFF<Bits<32>>,
    t_kick: DFF<Bit>,
    wqe_blocked: DFF<Bit>,
    // The packet being sent.
    p_op: DFF<Bits<8>>,
    p_psn: DFF<Bits<24>>,
    p_plen: DFF<Bits<32>>,
    p_off: DFF<Bits<32>>,
    p_ackreq: DFF<Bit>,
    p_se: DFF<Bit>,
    p_last: DFF<Bit>,
    p_reth_va: DFF<Bits<64>>,
    p_reth_len: DFF<Bits<32>>,
    at_done: DFF<Bits<8>>,
    // Completion.
    cq_status: DFF<Bits<4>>,
    cq_len: DFF<Bits<32>>,
    wr_pend: DFF<Bits<8>>,
    kq_w: DFF<Bits<16>>,
    kq_r: DFF<Bits<16>>,
    hot: DFF<Bits<16>>,
    sts: Bram<ReqState, Q>,
    wq: Bram<WqeRec, A>,
    kq: Bram<Bits<Q>, Q>,
    ctr: Vec<Counter32>,
    // ---- Combinational.
    hotv: Signal<Local, Bits<16>>,
    wr_go: Signal<Local, Bit>,
    rdrec: Signal<Local, WqeRec>,
    pmtu: Signal<Local, Bits<32>>,
    pmtu_sh: Signal<Local, Bits<32>>,
    npk_m1: Signal<Local, Bits<32>>,
    lenm1: Signal<Local, Bits<32>>,
    rd_atomic: Signal<Local, Bit>,
    rec_rd_atomic: Signal<Local, Bit>,
    rec_last: Signal<Local, Bits<24>>,
    ring_used: Signal<Local, Bits<8>>,
    ring_full: Signal<Local, Bit>,
    ctx_ok: Signal<Local, Bit>,
    d_last_q: Signal<Local, Bits<24>>,
    d_q_comp: Signal<Local, Bits<24>>,
    d_first_comp: Signal<Local, Bits<24>>,
    d_p_sh: Signal<Local, Bits<24>>,
    d_p_comp: Signal<Local, Bits<24>>,
    d_comp_before: Signal<Local, Bits<24>>,
    d_np_comp: Signal<Local, Bits<24>>,
    d_psn_sh: Signal<Local, Bits<24>>,
    d_cov_sh: Signal<Local, Bits<24>>,
    d_p_first: Signal<Local, Bits<24>>,
    d_last_p: Signal<Local, Bits<24>>,
    d_due: Signal<Local, Bits<32>>,
    d_acked: Signal<Local, Bits<24>>,
    pkt_psn: Signal<Local, Bits<24>>,
    pkt_left: Signal<Local, Bits<32>>,
    pkt_pos: Signal<Local, Bits<2>>,
    pkt_is_last: Signal<Local, Bit>,
    op_idx: Signal<Local, Bits<16>>,
    cov: Signal<Local, Bits<24>>,
    rr_first_ok: Signal<Local, Bit>,
    rr_len_ok: Signal<Local, Bit>,
    rr_want: Signal<Local, Bits<32>>,
    rr_last: Signal<Local, Bit>,
    rr_off: Signal<Local, Bits<32>>,
    syn_type: Signal<Local, Bits<2>>,
    is_ack: Signal<Local, Bit>,
    is_rr: Signal<Local, Bit>,
    is_at: Signal<Local, Bit>,
    has_aeth: Signal<Local, Bit>,
    opc: Signal<Local, Bits<8>>,
    to_idx: Signal<Local, Bits<16>>,
    rnr_idx: Signal<Local, Bits<16>>,
    rr_k_off: Signal<Local, Bits<32>>,
    // ---- Constants.
    op_table: Constant<Bits<256>>,
    needs_ack: Constant<Bits<256>>,
    to_table: Constant<Bits<1024>>,
    rnr_table: Constant<Bits<1024>>,
    off_state: Constant<Bits<16>>,
    off_type: Constant<Bits<16>>,
    off_pmtu: Constant<Bits<16>>,
    off_timeout: Constant<Bits<16>>,
    off_retry: Constant<Bits<16>>,
    off_rnr: Constant<Bits<16>>,
    off_mra: Constant<Bits<16>>,
    off_pd: Constant<Bits<16>>,
    off_sq_psn: Constant<Bits<16>>,
    s_rts: Constant<Bits<ST_BITS>>,
    s_sqd: Constant<Bits<ST_BITS>>,
    ty_rc: Constant<Bits<TY_BITS>>,
    acc_local_write: Constant<Bits<4>>,
    ring_size: Constant<Bits<8>>,
    ring_mask: Constant<Bits<8>>,
    ring_bits: Constant<Bits<8>>,
    window: Constant<Bits<24>>,
    every_mask: Constant<Bits<24>>,
    c128: Constant<Bits<32>>,
    op_ack: Constant<Bits<8>>,
    op_atomic_ack: Constant<Bits<8>>,
    op_rr_first: Constant<Bits<8>>,
    op_rr_middle: Constant<Bits<8>>,
    op_rr_last: Constant<Bits<8>>,
    op_rr_only: Constant<Bits<8>>,
}

/// 1024 QPs, 4 WQEs outstanding per QP (the default build).
pub type ReqEngine64 = ReqEngine<64, 8, 10, 11, 2, 12>;
pub type ReqEngine128 = ReqEngine<128, 16, 10, 11, 2, 12>;
pub type ReqEngine256 = ReqEngine<256, 32, 10, 11, 2, 12>;
pub type ReqEngine512 = ReqEngine<512, 64, 10, 11, 2, 12>;
/// 64 QPs, 8 WQEs per QP (simulation build; its timers fit
/// `qp_timers`'s 128-entry build).
pub type ReqEngineSmall64 = ReqEngine<64, 8, 6, 7, 3, 9>;
pub type ReqEngineSmall512 = ReqEngine<512, 64, 6, 7, 3, 9>;

fn rc_op(kind: OpKind, pos: Position) -> Constant<Bits<8>> {
    let i = TABLE
        .iter()
        .find(|i| i.transport == Transport::Rc && i.kind == kind && i.position == pos)
        .expect("in the table");
    Constant::new((i.code as u64).into())
}

// Counter bits (`hotv`, written as literals in the kernel): 0x1 req_sent,
// 0x2 req_retx, 0x4 retry_seq_nak, 0x8 retry_implied, 0x10 retry_timeout,
// 0x20 retry_rnr, 0x40 retry_ignored, 0x80 retry_exceeded, 0x100
// rnr_exceeded, 0x200 rnr_nak, 0x400 nak_err, 0x800 drop_stale, 0x1000
// drop_unexpected, 0x2000 drop_out_of_order, 0x4000 drop_qp_state.

// Event kinds (`ekind`): 0 INIT, 1 ERROR, 2 response, 3 timer, 4 WQE, 5 kick.

impl<
        const W: usize,
        const K: usize,
        const Q: usize,
        const E: usize,
        const R: usize,
        const A: usize,
    > ReqEngine<W, K, Q, E, R, A>
{
    pub fn new() -> Self {
        check_width("req_engine", W, K);
        assert!(
            (1..=14).contains(&Q),
            "req_engine: QP bits {Q} out of 1..=14"
        );
        assert_eq!(E, Q + 1, "req_engine: E must be Q + 1");
        assert!(
            (1..=6).contains(&R),
            "req_engine: ring bits {R} out of 1..=6"
        );
        assert_eq!(A, Q + R, "req_engine: A must be Q + R");
        use roce_regs::qp;
        let mut ctr = Vec::new();
        for _ in COUNTERS {
            ctr.push(Counter32::new());
        }
        let c8 = |v: u64| -> Constant<Bits<8>> { Constant::new(v.into()) };
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_ev_valid: Default::default(),
            s_ev_ready: Default::default(),
            s_ev_kind: Default::default(),
            s_ev_qpn: Default::default(),
            s_wqe_valid: Default::default(),
            s_wqe_ready: Default::default(),
            s_wqe_qpn: Default::default(),
            s_wqe_op: Default::default(),
            s_wqe_signaled: Default::default(),
            s_wqe_solicited: Default::default(),
            s_wqe_fence: Default::default(),
            s_wqe_wr_id: Default::default(),
            s_wqe_lkey: Default::default(),
            s_wqe_lva: Default::default(),
            s_wqe_phys: Default::default(),
            s_wqe_len: Default::default(),
            s_wqe_rva: Default::default(),
            s_wqe_rkey: Default::default(),
            s_wqe_imm: Default::default(),
            s_wqe_swap: Default::default(),
            s_wqe_compare: Default::default(),
            qp_rd_addr: Default::default(),
            qp_rd_data: Default::default(),
            m_req_valid: Default::default(),
            m_req_ready: Default::default(),
            m_req_qpn: Default::default(),
            m_req_opcode: Default::default(),
            m_req_psn: Default::default(),
            m_req_ack_req: Default::default(),
            m_req_se: Default::default(),
            m_req_payload_len: Default::default(),
            m_req_aeth_syndrome: Default::default(),
            m_req_aeth_msn: Default::default(),
            m_req_reth_va: Default::default(),
            m_req_reth_rkey: Default::default(),
            m_req_reth_dmalen: Default::default(),
            m_req_immdt: Default::default(),
            m_req_ieth: Default::default(),
            m_req_atomic_va: Default::default(),
            m_req_atomic_rkey: Default::default(),
            m_req_atomic_swap_add: Default::default(),
            m_req_atomic_compare: Default::default(),
            m_req_atomic_ack_data: Default::default(),
            m_req_becn: Default::default(),
            m_req_pay: Default::default(),
            m_mr_req_valid: Default::default(),
            m_mr_req_ready: Default::default(),
            m_mr_req_key: Default::default(),
            m_mr_req_pd: Default::default(),
            m_mr_req_access: Default::default(),
            m_mr_req_va: Default::default(),
            m_mr_req_len: Default::default(),
            s_mr_grant_valid: Default::default(),
            s_mr_grant_ready: Default::default(),
            s_mr_grant_pa: Default::default(),
            s_mr_grant_len: Default::default(),
            s_mr_grant_last: Default::default(),
            s_mr_grant_reason: Default::default(),
            m_rd_cmd_valid: Default::default(),
            m_rd_cmd_ready: Default::default(),
            m_rd_cmd_addr: Default::default(),
            m_rd_cmd_len: Default::default(),
            m_rd_cmd_last: Default::default(),
            s_rd: Default::default(),
            s_rsp_valid: Default::default(),
            s_rsp_ready: Default::default(),
            s_rsp_destqp: Default::default(),
            s_rsp_opcode: Default::default(),
            s_rsp_psn: Default::default(),
            s_rsp_payload_len: Default::default(),
            s_rsp_aeth_syndrome: Default::default(),
            s_rsp_aeth_msn: Default::default(),
            s_rsp_atomicack_orig: Default::default(),
            m_wr_cmd_valid: Default::default(),
            m_wr_cmd_ready: Default::default(),
            m_wr_cmd_addr: Default::default(),
            m_wr_cmd_len: Default::default(),
            m_wr_cmd_last: Default::default(),
            m_wr_cmd_discard: Default::default(),
            m_wr_cmd_imm: Default::default(),
            m_wr_cmd_data: Default::default(),
            s_wr_done_valid: Default::default(),
            s_wr_done_ready: Default::default(),
            s_wr_done_err: Default::default(),
            m_arm_valid: Default::default(),
            m_arm_ready: Default::default(),
            m_arm_entry: Default::default(),
            m_arm_delay: Default::default(),
            m_arm_disarm: Default::default(),
            s_exp_valid: Default::default(),
            s_exp_ready: Default::default(),
            s_exp_entry: Default::default(),
            s_now: Default::default(),
            m_scqe_valid: Default::default(),
            m_scqe_ready: Default::default(),
            m_scqe_qpn: Default::default(),
            m_scqe_wr_id: Default::default(),
            m_scqe_status: Default::default(),
            m_scqe_opcode: Default::default(),
            m_scqe_byte_len: Default::default(),
            m_err_valid: Default::default(),
            m_err_ready: Default::default(),
            m_err_qpn: Default::default(),
            cnt_req_sent: Default::default(),
            cnt_req_retx: Default::default(),
            cnt_retry_seq_nak: Default::default(),
            cnt_retry_implied: Default::default(),
            cnt_retry_timeout: Default::default(),
            cnt_retry_rnr: Default::default(),
            cnt_retry_ignored: Default::default(),
            cnt_retry_exceeded: Default::default(),
            cnt_rnr_exceeded: Default::default(),
            cnt_rnr_nak: Default::default(),
            cnt_nak_err: Default::default(),
            cnt_drop_stale: Default::default(),
            cnt_drop_unexpected: Default::default(),
            cnt_drop_out_of_order: Default::default(),
            cnt_drop_qp_state: Default::default(),
            state: Default::default(),
            ret: Default::default(),
            ret2: Default::default(),
            ekind: Default::default(),
            qpn: Default::default(),
            st: Default::default(),
            rec: Default::default(),
            w: Default::default(),
            c_state: Default::default(),
            c_type: Default::default(),
            c_pmtu: Default::default(),
            c_timeout: Default::default(),
            c_retry: Default::default(),
            c_rnr: Default::default(),
            c_mra: Default::default(),
            c_pd: Default::default(),
            c_sq_psn: Default::default(),
            r_op: Default::default(),
            r_psn: Default::default(),
            r_syn: Default::default(),
            r_orig: Default::default(),
            r_plen: Default::default(),
            x_kind: Default::default(),
            ab_q: Default::default(),
            comp_before: Default::default(),
            pg_cond: Default::default(),
            lost: Default::default(),
            why: Default::default(),
            fail_at: Default::default(),
            fail_status: Default::default(),
            idx: Default::default(),
            k: Default::default(),
            t_disc: Default::default(),
            t_arm: Default::default(),
            arm_kind: Default::default(),
            arm_delay: Default::default(),
            t_kick: Default::default(),
            wqe_blocked: Default::default(),
            p_op: Default::default(),
            p_psn: Default::default(),
            p_plen: Default::default(),
            p_off: Default::default(),
            p_ackreq: Default::default(),
            p_se: Default::default(),
            p_last: Default::default(),
            p_reth_va: Default::default(),
            p_reth_len: Default::default(),
            at_done: Default::default(),
            cq_status: Default::default(),
            cq_len: Default::default(),
            wr_pend: Default::default(),
            kq_w: Default::default(),
            kq_r: Default::default(),
            hot: Default::default(),
            sts: Bram::new(),
            wq: Bram::new(),
            kq: Bram::new(),
            ctr,
            hotv: Default::default(),
            wr_go: Default::default(),
            rdrec: Default::default(),
            pmtu: Default::default(),
            pmtu_sh: Default::default(),
            npk_m1: Default::default(),
            lenm1: Default::default(),
            rd_atomic: Default::default(),
            rec_rd_atomic: Default::default(),
            rec_last: Default::default(),
            ring_used: Default::default(),
            ring_full: Default::default(),
            ctx_ok: Default::default(),
            d_last_q: Default::default(),
            d_q_comp: Default::default(),
            d_first_comp: Default::default(),
            d_p_sh: Default::default(),
            d_p_comp: Default::default(),
            d_comp_before: Default::default(),
            d_np_comp: Default::default(),
            d_psn_sh: Default::default(),
            d_cov_sh: Default::default(),
            d_p_first: Default::default(),
            d_last_p: Default::default(),
            d_due: Default::default(),
            d_acked: Default::default(),
            pkt_psn: Default::default(),
            pkt_left: Default::default(),
            pkt_pos: Default::default(),
            pkt_is_last: Default::default(),
            op_idx: Default::default(),
            cov: Default::default(),
            rr_first_ok: Default::default(),
            rr_len_ok: Default::default(),
            rr_want: Default::default(),
            rr_last: Default::default(),
            rr_off: Default::default(),
            syn_type: Default::default(),
            is_ack: Default::default(),
            is_rr: Default::default(),
            is_at: Default::default(),
            has_aeth: Default::default(),
            opc: Default::default(),
            to_idx: Default::default(),
            rnr_idx: Default::default(),
            rr_k_off: Default::default(),
            op_table: opcode_table(),
            needs_ack: needs_ack_rom(),
            to_table: timeout_table(),
            rnr_table: rnr_table(),
            off_state: ctx_offset(&qp::state::REG, &qp::state::STATE, ST_BITS),
            off_type: ctx_offset(&qp::state::REG, &qp::state::TYPE, TY_BITS),
            off_pmtu: ctx_offset(&qp::path::REG, &qp::path::PMTU, PMTU_BITS),
            off_timeout: ctx_offset(&qp::timers::REG, &qp::timers::TIMEOUT, TO_BITS),
            off_retry: ctx_offset(&qp::timers::REG, &qp::timers::RETRY_CNT, RT_BITS),
            off_rnr: ctx_offset(&qp::timers::REG, &qp::timers::RNR_RETRY, RT_BITS),
            off_mra: ctx_offset(&qp::rd_atomic::REG, &qp::rd_atomic::MAX_RD_ATOMIC, RDA_BITS),
            off_pd: ctx_offset(&qp::pd::REG, &qp::pd::PD, PD_BITS),
            off_sq_psn: ctx_offset(&qp::sq_psn::REG, &qp::sq_psn::PSN, 24),
            s_rts: Constant::new((roce_regs::QpState::Rts as u64).into()),
            s_sqd: Constant::new((roce_regs::QpState::Sqd as u64).into()),
            ty_rc: Constant::new((roce_regs::QpType::Rc as u64).into()),
            acc_local_write: Constant::new((Access::LOCAL_WRITE.bits() as u64).into()),
            ring_size: c8(1 << R),
            ring_mask: c8((1 << R) - 1),
            ring_bits: c8(R as u64),
            window: Constant::new((WINDOW as u64).into()),
            every_mask: Constant::new(((ACK_REQ_EVERY - 1) as u64).into()),
            c128: Constant::new(128.into()),
            op_ack: rc_op(OpKind::Acknowledge, Position::Only),
            op_atomic_ack: rc_op(OpKind::AtomicAcknowledge, Position::Only),
            op_rr_first: rc_op(OpKind::ReadResponse, Position::First),
            op_rr_middle: rc_op(OpKind::ReadResponse, Position::Middle),
            op_rr_last: rc_op(OpKind::ReadResponse, Position::Last),
            op_rr_only: rc_op(OpKind::ReadResponse, Position::Only),
        }
    }
}

impl<
        const W: usize,
        const K: usize,
        const Q: usize,
        const E: usize,
        const R: usize,
        const A: usize,
    > Default for ReqEngine<W, K, Q, E, R, A>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<
        const W: usize,
        const K: usize,
        const Q: usize,
        const E: usize,
        const R: usize,
        const A: usize,
    > Logic for ReqEngine<W, K, Q, E, R, A>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            ret,
            ret2,
            ekind,
            qpn,
            st,
            rec,
            w,
            c_state,
            c_type,
            c_pmtu,
            c_timeout,
            c_retry,
            c_rnr,
            c_mra,
            c_pd,
            c_sq_psn,
            r_op,
            r_psn,
            r_syn,
            r_orig,
            r_plen,
            x_kind,
            ab_q,
            comp_before,
            pg_cond,
            lost,
            why,
            fail_at,
            fail_status,
            idx,
            k,
            t_disc,
            t_arm,
            arm_kind,
            arm_delay,
            t_kick,
            wqe_blocked,
            p_op,
            p_psn,
            p_plen,
            p_off,
            p_ackreq,
            p_se,
            p_last,
            p_reth_va,
            p_reth_len,
            at_done,
            cq_status,
            cq_len,
            wr_pend,
            kq_w,
            kq_r,
            hot
        );
        clock!(self, clock, sts, wq, kq);
        for i in 0..self.ctr.len() {
            self.ctr[i].clock.next = self.clock.val();
            self.ctr[i].clear.next = self.reset.val();
            self.ctr[i].inc.next = self.hot.q.val().get_bit(i);
        }
        // ---- Arithmetic from registers.
        self.rdrec.next = self.wq.read_data.val();
        self.pmtu.next = self.c128.val() << bit_cast::<32, PMTU_BITS>(self.c_pmtu.q.val());
        self.pmtu_sh.next = bit_cast::<32, PMTU_BITS>(self.c_pmtu.q.val()) + 7;
        self.lenm1.next = self.w.q.val().len - 1;
        self.npk_m1.next = 0.into();
        if self.w.q.val().len != 0 {
            self.npk_m1.next = self.lenm1.val() >> self.pmtu_sh.val();
        }
        self.rd_atomic.next = self.w.q.val().op >= 5;
        self.rec_rd_atomic.next = self.rdrec.val().op >= 5;
        self.rec_last.next = self.rdrec.val().first + self.rdrec.val().npkts - 1;
        self.ring_used.next = self.st.q.val().tail - self.st.q.val().head;
        self.ring_full.next = self.ring_used.val() == self.ring_size.val();
        self.ctx_ok.next = ((self.c_state.q.val() == self.s_rts.val())
            | (self.c_state.q.val() == self.s_sqd.val()))
            & (self.c_type.q.val() == self.ty_rc.val());
        // PSN differences (24-bit; bit 23 set = "before").
        self.d_last_q.next = self.rec_last.val() - self.ab_q.q.val();
        self.d_q_comp.next = self.ab_q.q.val() - self.st.q.val().comp_psn;
        self.d_first_comp.next = self.rdrec.val().first - self.st.q.val().comp_psn;
        self.d_p_sh.next = self.r_psn.q.val() - self.st.q.val().sent_high;
        self.d_p_comp.next = self.r_psn.q.val() - self.st.q.val().comp_psn;
        self.d_comp_before.next = self.st.q.val().comp_psn - self.comp_before.q.val();
        self.d_np_comp.next = self.st.q.val().next_psn - self.st.q.val().comp_psn;
        self.d_p_first.next = self.r_psn.q.val() - self.rdrec.val().first;
        self.d_last_p.next = self.rec_last.val() - self.r_psn.q.val();
        self.d_due.next = self.s_now.val() - self.st.q.val().deadline;
        self.d_acked.next = self.st.q.val().comp_psn - self.rdrec.val().first;
        // The packet at (rec, send_pkt).
        self.pkt_psn.next = self.rec.q.val().first + self.st.q.val().send_pkt;
        self.d_psn_sh.next = self.pkt_psn.val() - self.st.q.val().sent_high;
        self.p_off.d.next = bit_cast::<32, 24>(self.st.q.val().send_pkt) << self.pmtu_sh.val();
        self.pkt_left.next = self.rec.q.val().len - self.p_off.q.val();
        self.pkt_is_last.next = (self.st.q.val().send_pkt + 1) == self.rec.q.val().npkts;
        if self.st.q.val().send_pkt == 0 {
            if self.pkt_is_last.val() {
                self.pkt_pos.next = 3.into();
            } else {
                self.pkt_pos.next = 0.into();
            }
        } else if self.pkt_is_last.val() {
            self.pkt_pos.next = 2.into();
        } else {
            self.pkt_pos.next = 1.into();
        }
        self.op_idx.next = ((bit_cast::<16, 3>(self.rec.q.val().op) << 2)
            | bit_cast::<16, 2>(self.pkt_pos.val()))
            << 3;
        self.opc.next = self.op_table.val().get_bits::<8>(self.op_idx.val().index());
        self.to_idx.next = bit_cast::<16, TO_BITS>(self.c_timeout.q.val()) << 5;
        self.rnr_idx.next = bit_cast::<16, 8>(self.r_syn.q.val() & 0x1F) << 5;
        self.rr_k_off.next = bit_cast::<32, 24>(self.k.q.val()) << self.pmtu_sh.val();
        if self.rec.q.val().op >= 5 {
            self.cov.next = self.rec.q.val().first + self.rec.q.val().npkts;
        } else {
            self.cov.next = self.p_psn.q.val() + 1;
        }
        self.d_cov_sh.next = self.cov.val() - self.st.q.val().sent_high;
        // READ response checks against the record at rdrec.
        self.rr_last.next = (self.d_p_first.val() + 1) == self.rdrec.val().npkts;
        self.rr_off.next = bit_cast::<32, 24>(self.d_p_first.val()) << self.pmtu_sh.val();
        if self.rr_last.val() {
            self.rr_want.next = self.rdrec.val().len - self.rr_off.val();
        } else {
            self.rr_want.next = self.pmtu.val();
        }
        self.rr_len_ok.next = bit_cast::<32, 16>(self.r_plen.q.val()) == self.rr_want.val();
        if self.d_p_first.val() == 0 {
            if self.rr_last.val() {
                self.rr_first_ok.next = self.r_op.q.val() == self.op_rr_only.val();
            } else {
                self.rr_first_ok.next = self.r_op.q.val() == self.op_rr_first.val();
            }
        } else if self.rr_last.val() {
            self.rr_first_ok.next = (self.r_op.q.val() == self.op_rr_last.val())
                | (self.r_op.q.val() == self.op_rr_only.val());
        } else {
            self.rr_first_ok.next = (self.r_op.q.val() == self.op_rr_middle.val())
                | (self.r_op.q.val() == self.op_rr_first.val());
        }
        self.syn_type.next = self.r_syn.q.val().get_bits::<2>(5);
        self.is_ack.next = self.r_op.q.val() == self.op_ack.val();
        self.is_at.next = self.r_op.q.val() == self.op_atomic_ack.val();
        self.is_rr.next = (self.r_op.q.val() >= self.op_rr_first.val())
            & (self.r_op.q.val() <= self.op_rr_only.val());
        self.has_aeth.next = (self.r_op.q.val() == self.op_rr_first.val())
            | (self.r_op.q.val() == self.op_rr_last.val())
            | (self.r_op.q.val() == self.op_rr_only.val())
            | self.is_at.val();
        // ---- Defaults.
        self.s_ev_ready.next = false;
        self.s_wqe_ready.next = false;
        self.s_rsp_ready.next = false;
        self.s_exp_ready.next = false;
        self.qp_rd_addr.next = bit_cast::<Q, 24>(self.qpn.q.val());
        self.m_req_valid.next = false;
        self.m_req_qpn.next = bit_cast::<Q, 24>(self.qpn.q.val());
        self.m_req_opcode.next = self.p_op.q.val();
        self.m_req_psn.next = self.p_psn.q.val();
        self.m_req_ack_req.next = 0.into();
        if self.p_ackreq.q.val() {
            self.m_req_ack_req.next = 1.into();
        }
        self.m_req_se.next = 0.into();
        if self.p_se.q.val() {
            self.m_req_se.next = 1.into();
        }
        self.m_req_payload_len.next = self.p_plen.q.val().get_bits::<16>(0);
        self.m_req_aeth_syndrome.next = 0.into();
        self.m_req_aeth_msn.next = 0.into();
        self.m_req_reth_va.next = self.p_reth_va.q.val();
        self.m_req_reth_rkey.next = self.rec.q.val().rkey;
        self.m_req_reth_dmalen.next = self.p_reth_len.q.val();
        self.m_req_immdt.next = self.rec.q.val().imm;
        self.m_req_ieth.next = self.rec.q.val().imm;
        self.m_req_atomic_va.next = self.rec.q.val().rva;
        self.m_req_atomic_rkey.next = self.rec.q.val().rkey;
        self.m_req_atomic_swap_add.next = self.rec.q.val().swap;
        if self.rec.q.val().op == 6 {
            self.m_req_atomic_compare.next = self.rec.q.val().compare;
        } else {
            self.m_req_atomic_compare.next = 0.into();
        }
        self.m_req_atomic_ack_data.next = 0.into();
        self.m_req_becn.next = 0.into();
        // The dma_rd stream goes to tx_arb as it is.
        self.m_req_pay.tdata.next = self.s_rd.tdata.val();
        self.m_req_pay.tkeep.next = self.s_rd.tkeep.val();
        self.m_req_pay.tlast.next = self.s_rd.tlast.val();
        self.m_req_pay.tuser.next = self.s_rd.tuser.val();
        self.m_req_pay.tvalid.next = self.s_rd.tvalid.val();
        self.s_rd.tready.next = self.m_req_pay.tready.val();
        self.m_mr_req_valid.next = false;
        self.m_mr_req_key.next = self.rec.q.val().lkey;
        self.m_mr_req_pd.next = self.c_pd.q.val();
        self.m_mr_req_access.next = 0.into();
        self.m_mr_req_va.next = self.rec.q.val().lva + bit_cast::<64, 32>(self.p_off.q.val());
        self.m_mr_req_len.next = self.p_plen.q.val();
        self.s_mr_grant_ready.next = false;
        self.m_rd_cmd_valid.next = false;
        self.m_rd_cmd_addr.next = self.s_mr_grant_pa.val();
        self.m_rd_cmd_len.next = self.s_mr_grant_len.val();
        self.m_rd_cmd_last.next = self.s_mr_grant_last.val();
        self.m_wr_cmd_valid.next = false;
        self.m_wr_cmd_addr.next = self.s_mr_grant_pa.val();
        self.m_wr_cmd_len.next = self.s_mr_grant_len.val();
        self.m_wr_cmd_last.next = self.s_mr_grant_last.val();
        self.m_wr_cmd_discard.next = false;
        self.m_wr_cmd_imm.next = false;
        self.m_wr_cmd_data.next =
            self.r_orig.q.val() >> (bit_cast::<64, 8>(self.at_done.q.val()) << 3);
        self.s_wr_done_ready.next = true;
        self.m_arm_valid.next = false;
        self.m_arm_entry.next = bit_cast::<E, 24>(self.qpn.q.val()) << 1;
        if self.arm_kind.q.val() {
            self.m_arm_entry.next = (bit_cast::<E, 24>(self.qpn.q.val()) << 1) | 1;
        }
        self.m_arm_delay.next = self.arm_delay.q.val();
        self.m_arm_disarm.next = false;
        self.m_scqe_valid.next = false;
        self.m_scqe_qpn.next = self.qpn.q.val();
        self.m_scqe_wr_id.next = self.rec.q.val().wr_id;
        self.m_scqe_status.next = self.cq_status.q.val();
        self.m_scqe_opcode.next = self.rec.q.val().op;
        self.m_scqe_byte_len.next = self.cq_len.q.val();
        self.m_err_valid.next = false;
        self.m_err_qpn.next = self.qpn.q.val();
        self.sts.read_enable.next = false;
        self.sts.read_address.next = bit_cast::<Q, 24>(self.qpn.q.val());
        self.sts.write_enable.next = false;
        self.sts.write_address.next = bit_cast::<Q, 24>(self.qpn.q.val());
        self.sts.write_data.next = self.st.q.val();
        self.wq.read_enable.next = false;
        self.wq.read_address.next = (bit_cast::<A, 24>(self.qpn.q.val()) << self.ring_bits.val())
            | bit_cast::<A, 8>(self.st.q.val().head & self.ring_mask.val());
        self.wq.write_enable.next = false;
        self.wq.write_address.next = (bit_cast::<A, 24>(self.qpn.q.val()) << self.ring_bits.val())
            | bit_cast::<A, 8>(self.st.q.val().tail & self.ring_mask.val());
        self.wq.write_data.next = self.w.q.val();
        self.kq.read_enable.next = false;
        self.kq.read_address.next = bit_cast::<Q, 16>(self.kq_r.q.val());
        self.kq.write_enable.next = false;
        self.kq.write_address.next = bit_cast::<Q, 16>(self.kq_w.q.val());
        self.kq.write_data.next = bit_cast::<Q, 24>(self.qpn.q.val());
        self.hotv.next = 0.into();
        self.wr_go.next = false;
        // ---- The state machine.
        match self.state.q.val() {
            Rq::Idle => {
                self.t_disc.d.next = false;
                self.t_arm.d.next = false;
                self.t_kick.d.next = false;
                self.lost.d.next = false;
                self.at_done.d.next = 0.into();
                if self.s_ev_valid.val() {
                    self.s_ev_ready.next = true;
                    self.qpn.d.next = self.s_ev_qpn.val();
                    self.ekind.d.next = bit_cast::<3, 2>(self.s_ev_kind.val());
                    self.state.d.next = Rq::Rd0;
                } else if self.s_rsp_valid.val() {
                    self.s_rsp_ready.next = true;
                    self.qpn.d.next = self.s_rsp_destqp.val();
                    self.r_op.d.next = self.s_rsp_opcode.val();
                    self.r_psn.d.next = self.s_rsp_psn.val();
                    self.r_syn.d.next = self.s_rsp_aeth_syndrome.val();
                    self.r_orig.d.next = self.s_rsp_atomicack_orig.val();
                    self.r_plen.d.next = self.s_rsp_payload_len.val();
                    self.ekind.d.next = 2.into();
                    self.wqe_blocked.d.next = false;
                    self.state.d.next = Rq::Rd0;
                } else if self.s_exp_valid.val() {
                    self.s_exp_ready.next = true;
                    self.qpn.d.next = bit_cast::<24, E>(self.s_exp_entry.val() >> 1);
                    self.x_kind.d.next = self.s_exp_entry.val().get_bit(0);
                    self.ekind.d.next = 3.into();
                    self.wqe_blocked.d.next = false;
                    self.state.d.next = Rq::Rd0;
                } else if self.s_wqe_valid.val() & !self.wqe_blocked.q.val() {
                    // Taken (handshake) once there is room: WqeTake.
                    self.qpn.d.next = self.s_wqe_qpn.val();
                    self.w.d.next.op = self.s_wqe_op.val();
                    self.w.d.next.signaled = self.s_wqe_signaled.val();
                    self.w.d.next.solicited = self.s_wqe_solicited.val();
                    self.w.d.next.fence = self.s_wqe_fence.val();
                    self.w.d.next.wr_id = self.s_wqe_wr_id.val();
                    self.w.d.next.lkey = self.s_wqe_lkey.val();
                    self.w.d.next.lva = self.s_wqe_lva.val();
                    self.w.d.next.phys = self.s_wqe_phys.val();
                    self.w.d.next.len = self.s_wqe_len.val();
                    self.w.d.next.rva = self.s_wqe_rva.val();
                    self.w.d.next.rkey = self.s_wqe_rkey.val();
                    self.w.d.next.imm = self.s_wqe_imm.val();
                    self.w.d.next.swap = self.s_wqe_swap.val();
                    self.w.d.next.compare = self.s_wqe_compare.val();
                    self.w.d.next.started = false;
                    self.w.d.next.first = 0.into();
                    self.ekind.d.next = 4.into();
                    self.state.d.next = Rq::Rd0;
                } else if self.kq_w.q.val() != self.kq_r.q.val() {
                    self.kq.read_enable.next = true;
                    self.kq_r.d.next = self.kq_r.q.val() + 1;
                    self.ekind.d.next = 5.into();
                    self.wqe_blocked.d.next = false;
                    self.state.d.next = Rq::KickRd;
                }
            }
            Rq::KickRd => {
                self.qpn.d.next = bit_cast::<24, Q>(self.kq.read_data.val());
                self.state.d.next = Rq::Rd0;
            }
            Rq::Rd0 => {
                self.sts.read_enable.next = true;
                self.state.d.next = Rq::Rd1;
            }
            Rq::Rd1 => {
                self.st.d.next = self.sts.read_data.val();
                self.state.d.next = Rq::Rd2;
            }
            Rq::Rd2 => {
                // The context (2 cycles after Rd0's address).
                self.c_state.d.next = self
                    .qp_rd_data
                    .val()
                    .get_bits::<ST_BITS>(self.off_state.val().index());
                self.c_type.d.next = self
                    .qp_rd_data
                    .val()
                    .get_bits::<TY_BITS>(self.off_type.val().index());
                self.c_pmtu.d.next = self
                    .qp_rd_data
                    .val()
                    .get_bits::<PMTU_BITS>(self.off_pmtu.val().index());
                self.c_timeout.d.next = self
                    .qp_rd_data
                    .val()
                    .get_bits::<TO_BITS>(self.off_timeout.val().index());
                self.c_retry.d.next = self
                    .qp_rd_data
                    .val()
                    .get_bits::<RT_BITS>(self.off_retry.val().index());
                self.c_rnr.d.next = self
                    .qp_rd_data
                    .val()
                    .get_bits::<RT_BITS>(self.off_rnr.val().index());
                self.c_mra.d.next = self
                    .qp_rd_data
                    .val()
                    .get_bits::<RDA_BITS>(self.off_mra.val().index());
                self.c_pd.d.next = self
                    .qp_rd_data
                    .val()
                    .get_bits::<PD_BITS>(self.off_pd.val().index());
                self.c_sq_psn.d.next = self
                    .qp_rd_data
                    .val()
                    .get_bits::<24>(self.off_sq_psn.val().index());
                if self.ekind.q.val() == 0 {
                    self.state.d.next = Rq::Fin;
                    self.st.d.next.err = false;
                    self.st.d.next.ack_on = false;
                    self.st.d.next.rnr_on = false;
                    self.st.d.next.retry_started = false;
                    self.st.d.next.next_psn = self
                        .qp_rd_data
                        .val()
                        .get_bits::<24>(self.off_sq_psn.val().index());
                    self.st.d.next.comp_psn = self
                        .qp_rd_data
                        .val()
                        .get_bits::<24>(self.off_sq_psn.val().index());
                    self.st.d.next.sent_high = self
                        .qp_rd_data
                        .val()
                        .get_bits::<24>(self.off_sq_psn.val().index());
                    self.st.d.next.head = 0.into();
                    self.st.d.next.cur = 0.into();
                    self.st.d.next.tail = 0.into();
                    self.st.d.next.send_pkt = 0.into();
                    self.st.d.next.rd_out = 0.into();
                    self.st.d.next.retry_left = self
                        .qp_rd_data
                        .val()
                        .get_bits::<RT_BITS>(self.off_retry.val().index());
                    self.st.d.next.rnr_left = self
                        .qp_rd_data
                        .val()
                        .get_bits::<RT_BITS>(self.off_rnr.val().index());
                } else if self.ekind.q.val() == 1 {
                    if self.st.q.val().err {
                        self.state.d.next = Rq::Fin;
                    } else {
                        self.fail_at.d.next = self.st.q.val().head;
                        self.fail_status.d.next = 3.into();
                        self.idx.d.next = self.st.q.val().head;
                        self.state.d.next = Rq::FlRd;
                    }
                } else if self.ekind.q.val() == 2 {
                    self.state.d.next = Rq::Rsp;
                } else if self.ekind.q.val() == 3 {
                    self.state.d.next = Rq::Exp;
                } else if self.ekind.q.val() == 4 {
                    self.state.d.next = Rq::WqeTake;
                } else {
                    self.st.d.next.queued = false;
                    self.state.d.next = Rq::TxRd;
                }
            }
            Rq::WqeTake => {
                if self.st.q.val().err | !self.ctx_ok.val() {
                    // A QP in Error (or not sending): flushed at once.
                    self.s_wqe_ready.next = true;
                    self.rec.d.next = self.w.q.val();
                    self.cq_status.d.next = 3.into();
                    self.cq_len.d.next = 0.into();
                    self.state.d.next = Rq::WqeFlush;
                } else if self.ring_full.val() {
                    self.wqe_blocked.d.next = true;
                    self.state.d.next = Rq::Idle;
                } else {
                    self.s_wqe_ready.next = true;
                    self.wq.write_enable.next = true;
                    if self.rd_atomic.val() & (self.w.q.val().op != 5) {
                        self.wq.write_data.next.npkts = 1.into();
                    } else {
                        self.wq.write_data.next.npkts = bit_cast::<24, 32>(self.npk_m1.val()) + 1;
                    }
                    self.st.d.next.tail = self.st.q.val().tail + 1;
                    self.t_kick.d.next = true;
                    self.state.d.next = Rq::Fin;
                }
            }
            Rq::WqeFlush => {
                self.m_scqe_valid.next = true;
                if self.m_scqe_ready.val() {
                    self.state.d.next = Rq::Fin;
                }
            }
            // ---------------- Transmit one packet.
            Rq::TxRd => {
                if self.st.q.val().err
                    | !self.ctx_ok.val()
                    | self.st.q.val().rnr_on
                    | (self.st.q.val().cur == self.st.q.val().tail)
                {
                    self.state.d.next = Rq::Fin;
                } else {
                    self.wq.read_enable.next = true;
                    self.wq.read_address.next = (bit_cast::<A, 24>(self.qpn.q.val())
                        << self.ring_bits.val())
                        | bit_cast::<A, 8>(self.st.q.val().cur & self.ring_mask.val());
                    self.state.d.next = Rq::TxDec;
                }
            }
            Rq::TxDec => {
                self.rec.d.next = self.rdrec.val();
                self.state.d.next = Rq::TxPkt;
                if !self.rdrec.val().started {
                    // A new message: may it start?
                    if (self.c_state.q.val() == self.s_sqd.val())
                        | (self.rec_rd_atomic.val()
                            & (self.st.q.val().rd_out >= self.c_mra.q.val()))
                        | (self.rdrec.val().fence & (self.st.q.val().rd_out != 0))
                        | ((self.st.q.val().cur != self.st.q.val().head)
                            & (self.d_np_comp.val() >= self.window.val()))
                    {
                        self.state.d.next = Rq::Fin;
                    } else {
                        self.rec.d.next.started = true;
                        self.rec.d.next.first = self.st.q.val().next_psn;
                        self.st.d.next.next_psn = self.st.q.val().next_psn + self.rdrec.val().npkts;
                        if self.rec_rd_atomic.val() {
                            self.st.d.next.rd_out = self.st.q.val().rd_out + 1;
                        }
                        self.wq.write_enable.next = true;
                        self.wq.write_address.next = (bit_cast::<A, 24>(self.qpn.q.val())
                            << self.ring_bits.val())
                            | bit_cast::<A, 8>(self.st.q.val().cur & self.ring_mask.val());
                        self.wq.write_data.next = self.rdrec.val();
                        self.wq.write_data.next.started = true;
                        self.wq.write_data.next.first = self.st.q.val().next_psn;
                    }
                }
            }
            Rq::TxPkt => {
                // rec and st are final: the packet's fields.
                self.p_psn.d.next = self.pkt_psn.val();
                self.p_op.d.next = self.opc.val();
                self.p_last.d.next = self.pkt_is_last.val() | (self.rec.q.val().op >= 5);
                self.p_se.d.next = self.pkt_is_last.val() & self.rec.q.val().solicited;
                self.p_ackreq.d.next = self.needs_ack.val().get_bit(self.opc.val().index())
                    | (((self.st.q.val().send_pkt + 1) & self.every_mask.val()) == 0)
                    | ((self.pkt_psn.val() - self.st.q.val().comp_psn + 1) >= self.window.val());
                if self.rec.q.val().op == 5 {
                    self.p_reth_va.d.next =
                        self.rec.q.val().rva + bit_cast::<64, 32>(self.p_off.q.val());
                    self.p_reth_len.d.next = self.rec.q.val().len - self.p_off.q.val();
                } else {
                    self.p_reth_va.d.next = self.rec.q.val().rva;
                    self.p_reth_len.d.next = self.rec.q.val().len;
                }
                self.p_plen.d.next = 0.into();
                if self.rec.q.val().op < 5 {
                    if self.pkt_left.val() < self.pmtu.val() {
                        self.p_plen.d.next = self.pkt_left.val();
                    } else {
                        self.p_plen.d.next = self.pmtu.val();
                    }
                }
                // Window for the packets after a message's first.
                if (self.st.q.val().send_pkt != 0)
                    & ((self.pkt_psn.val() - self.st.q.val().comp_psn) >= self.window.val())
                {
                    self.state.d.next = Rq::Fin;
                } else {
                    self.state.d.next = Rq::TxMr;
                }
            }
            Rq::TxMr => {
                if self.p_plen.q.val() == 0 {
                    self.state.d.next = Rq::TxDesc;
                } else if self.rec.q.val().phys {
                    // Inline data: one `dma_rd` command at the physical
                    // address, no `mr_tlb` check.
                    self.m_rd_cmd_valid.next = true;
                    self.m_rd_cmd_addr.next =
                        self.rec.q.val().lva + bit_cast::<64, 32>(self.p_off.q.val());
                    self.m_rd_cmd_len.next = self.p_plen.q.val();
                    self.m_rd_cmd_last.next = true;
                    if self.m_rd_cmd_ready.val() {
                        self.state.d.next = Rq::TxDesc;
                    }
                } else {
                    self.m_mr_req_valid.next = true;
                    if self.m_mr_req_ready.val() {
                        self.state.d.next = Rq::TxGrant;
                    }
                }
            }
            Rq::TxGrant => {
                if self.s_mr_grant_valid.val() & (self.s_mr_grant_reason.val() != 0) {
                    // Local protection error: this WQE fails, the rest flush.
                    self.s_mr_grant_ready.next = true;
                    self.fail_at.d.next = self.st.q.val().cur;
                    self.fail_status.d.next = 2.into();
                    self.idx.d.next = self.st.q.val().head;
                    self.state.d.next = Rq::FlRd;
                } else {
                    self.m_rd_cmd_valid.next = self.s_mr_grant_valid.val();
                    self.s_mr_grant_ready.next = self.m_rd_cmd_ready.val();
                    if self.s_mr_grant_valid.val()
                        & self.m_rd_cmd_ready.val()
                        & self.s_mr_grant_last.val()
                    {
                        self.state.d.next = Rq::TxDesc;
                    }
                }
            }
            Rq::TxDesc => {
                self.m_req_valid.next = true;
                if self.m_req_ready.val() {
                    if self.d_psn_sh.val().get_bit(23) {
                        self.hotv.next = 0x2.into();
                    } else {
                        self.hotv.next = 0x1.into();
                    }
                    if !self.d_cov_sh.val().get_bit(23) & (self.d_cov_sh.val() != 0) {
                        self.st.d.next.sent_high = self.cov.val();
                    }
                    if self.p_last.q.val() {
                        self.st.d.next.cur = self.st.q.val().cur + 1;
                        self.st.d.next.send_pkt = 0.into();
                    } else {
                        self.st.d.next.send_pkt = self.st.q.val().send_pkt + 1;
                    }
                    if !self.st.q.val().ack_on & (self.c_timeout.q.val() != 0) {
                        self.st.d.next.ack_on = true;
                        self.t_arm.d.next = true;
                        self.arm_kind.d.next = false;
                        self.arm_delay.d.next = self
                            .to_table
                            .val()
                            .get_bits::<32>(self.to_idx.val().index());
                    }
                    self.t_kick.d.next = true;
                    self.state.d.next = Rq::Fin;
                }
            }
            // ---------------- Responses.
            Rq::Rsp => {
                self.t_disc.d.next = self.r_plen.q.val() != 0;
                self.state.d.next = Rq::Fin;
                if self.st.q.val().err | !self.ctx_ok.val() {
                    self.hotv.next = 0x4000.into();
                } else if !self.d_p_sh.val().get_bit(23) {
                    // At or beyond sent_high: nothing asked for it.
                    self.hotv.next = 0x1000.into();
                } else if self.has_aeth.val() & (self.syn_type.val() != 0) {
                    self.hotv.next = 0x1000.into();
                } else if self.d_p_comp.val().get_bit(23) {
                    self.hotv.next = 0x800.into();
                } else if self.is_ack.val() {
                    self.state.d.next = Rq::RspAck;
                } else if self.is_rr.val() | self.is_at.val() {
                    // Find the sent WQE holding the PSN.
                    self.idx.d.next = self.st.q.val().head;
                    self.state.d.next = Rq::SrRd;
                } else {
                    self.hotv.next = 0x1000.into();
                }
            }
            Rq::RspAck => {
                self.t_disc.d.next = self.r_plen.q.val() != 0;
                self.comp_before.d.next = self.st.q.val().comp_psn;
                self.ab_q.d.next = self.r_psn.q.val();
                self.ret.d.next = Rq::AfterAb;
                self.state.d.next = Rq::AbRd;
                if self.syn_type.val() == 0 {
                    self.ab_q.d.next = self.r_psn.q.val() + 1;
                } else if self.syn_type.val() == 2 {
                    self.hotv.next = 0x1000.into();
                    self.state.d.next = Rq::Fin;
                }
            }
            Rq::AfterAb => {
                // After AckBefore for an ACK/NAK (r_syn) or a READ
                // response / ATOMIC ACK (implied ACK).
                self.state.d.next = Rq::Fin;
                if self.is_ack.val() {
                    if self.syn_type.val() == 0 {
                        if self.lost.q.val() {
                            self.why.d.next = 0x8.into();
                            self.state.d.next = Rq::Retry;
                        }
                    } else if self.syn_type.val() == 1 {
                        self.hotv.next = 0x200.into();
                        self.state.d.next = Rq::Rnr;
                    } else if self.r_syn.q.val().get_bits::<5>(0) == 0 {
                        if self.st.q.val().rnr_on {
                            self.hotv.next = 0x40.into();
                        } else {
                            self.why.d.next = 0x4.into();
                            self.state.d.next = Rq::Retry;
                        }
                    } else {
                        self.hotv.next = 0x400.into();
                        self.fail_at.d.next = self.st.q.val().head;
                        self.idx.d.next = self.st.q.val().head;
                        self.state.d.next = Rq::FlRd;
                        if self.r_syn.q.val().get_bits::<5>(0) == 1 {
                            self.fail_status.d.next = 4.into();
                        } else if self.r_syn.q.val().get_bits::<5>(0) == 2 {
                            self.fail_status.d.next = 5.into();
                        } else {
                            self.fail_status.d.next = 6.into();
                        }
                    }
                } else if self.lost.q.val() {
                    self.hotv.next = 0x2000.into();
                    self.why.d.next = 0x8.into();
                    self.state.d.next = Rq::Retry;
                } else if self.r_psn.q.val() != self.st.q.val().comp_psn {
                    self.hotv.next = 0x2000.into();
                } else {
                    // In order: write the data, then complete.
                    self.idx.d.next = self.st.q.val().head;
                    self.state.d.next = Rq::RrOrd;
                }
            }
            Rq::SrRd => {
                if self.idx.q.val() == self.st.q.val().tail {
                    self.hotv.next = 0x1000.into();
                    self.state.d.next = Rq::Fin;
                } else {
                    self.wq.read_enable.next = true;
                    self.wq.read_address.next = (bit_cast::<A, 24>(self.qpn.q.val())
                        << self.ring_bits.val())
                        | bit_cast::<A, 8>(self.idx.q.val() & self.ring_mask.val());
                    self.state.d.next = Rq::SrChk;
                }
            }
            Rq::SrChk => {
                if !self.rdrec.val().started {
                    self.hotv.next = 0x1000.into();
                    self.state.d.next = Rq::Fin;
                } else if !self.d_p_first.val().get_bit(23) & !self.d_last_p.val().get_bit(23) {
                    self.rec.d.next = self.rdrec.val();
                    self.state.d.next = Rq::RrChk;
                } else {
                    self.idx.d.next = self.idx.q.val() + 1;
                    self.state.d.next = Rq::SrRd;
                }
            }
            Rq::RrChk => {
                // rdrec still holds the found record (no read since).
                self.state.d.next = Rq::Fin;
                self.k.d.next = self.d_p_first.val();
                if self.is_rr.val() {
                    if (self.rdrec.val().op != 5) | !self.rr_first_ok.val() | !self.rr_len_ok.val()
                    {
                        self.hotv.next = 0x1000.into();
                    } else {
                        self.comp_before.d.next = self.st.q.val().comp_psn;
                        self.ab_q.d.next = self.rdrec.val().first;
                        self.ret.d.next = Rq::AfterAb;
                        self.state.d.next = Rq::AbRd;
                    }
                } else if self.rdrec.val().op < 6 {
                    self.hotv.next = 0x1000.into();
                } else {
                    self.comp_before.d.next = self.st.q.val().comp_psn;
                    self.ab_q.d.next = self.r_psn.q.val();
                    self.ret.d.next = Rq::AfterAb;
                    self.state.d.next = Rq::AbRd;
                }
            }
            Rq::RrOrd => {
                // The head is the READ / atomic (comp_psn is in it): read it.
                self.wq.read_enable.next = true;
                self.state.d.next = Rq::RrMr;
            }
            Rq::RrMr => {
                self.rec.d.next = self.rdrec.val();
                if self.is_at.val() {
                    self.m_mr_req_valid.next = true;
                    self.m_mr_req_key.next = self.rdrec.val().lkey;
                    self.m_mr_req_access.next = self.acc_local_write.val();
                    self.m_mr_req_va.next = self.rdrec.val().lva;
                    self.m_mr_req_len.next = 8.into();
                    if self.m_mr_req_ready.val() {
                        self.state.d.next = Rq::AtGrant;
                    }
                } else if self.r_plen.q.val() == 0 {
                    self.state.d.next = Rq::RrDone;
                } else {
                    self.m_mr_req_valid.next = true;
                    self.m_mr_req_key.next = self.rdrec.val().lkey;
                    self.m_mr_req_access.next = self.acc_local_write.val();
                    self.m_mr_req_va.next =
                        self.rdrec.val().lva + bit_cast::<64, 32>(self.rr_k_off.val());
                    self.m_mr_req_len.next = bit_cast::<32, 16>(self.r_plen.q.val());
                    if self.m_mr_req_ready.val() {
                        self.state.d.next = Rq::RrGrant;
                    }
                }
            }
            Rq::RrGrant => {
                if self.s_mr_grant_valid.val() & (self.s_mr_grant_reason.val() != 0) {
                    self.s_mr_grant_ready.next = true;
                    self.fail_at.d.next = self.st.q.val().head;
                    self.fail_status.d.next = 2.into();
                    self.idx.d.next = self.st.q.val().head;
                    self.state.d.next = Rq::FlRd;
                } else {
                    self.m_wr_cmd_valid.next = self.s_mr_grant_valid.val();
                    self.s_mr_grant_ready.next = self.m_wr_cmd_ready.val();
                    if self.s_mr_grant_valid.val() & self.m_wr_cmd_ready.val() {
                        self.wr_go.next = true;
                        if self.s_mr_grant_last.val() {
                            self.t_disc.d.next = false;
                            self.state.d.next = Rq::RrDone;
                        }
                    }
                }
            }
            Rq::AtGrant => {
                if self.s_mr_grant_valid.val() & (self.s_mr_grant_reason.val() != 0) {
                    self.s_mr_grant_ready.next = true;
                    self.fail_at.d.next = self.st.q.val().head;
                    self.fail_status.d.next = 2.into();
                    self.idx.d.next = self.st.q.val().head;
                    self.state.d.next = Rq::FlRd;
                } else {
                    self.m_wr_cmd_valid.next = self.s_mr_grant_valid.val();
                    self.m_wr_cmd_imm.next = true;
                    self.s_mr_grant_ready.next = self.m_wr_cmd_ready.val();
                    if self.s_mr_grant_valid.val() & self.m_wr_cmd_ready.val() {
                        self.wr_go.next = true;
                        self.at_done.d.next =
                            self.at_done.q.val() + self.s_mr_grant_len.val().get_bits::<8>(0);
                        if self.s_mr_grant_last.val() {
                            self.state.d.next = Rq::RrDone;
                        }
                    }
                }
            }
            Rq::RrDone => {
                self.st.d.next.comp_psn = self.r_psn.q.val() + 1;
                self.pg_cond.d.next = false;
                self.ret.d.next = Rq::Fin;
                if self.is_at.val() | ((self.k.q.val() + 1) == self.rec.q.val().npkts) {
                    self.ret2.d.next = Rq::PgRd;
                    self.state.d.next = Rq::ChCqe;
                } else {
                    self.state.d.next = Rq::PgRd;
                }
            }
            // ---------------- Timer expiry.
            Rq::Exp => {
                self.wq.read_enable.next = true;
                self.state.d.next = Rq::ExpChk;
            }
            Rq::ExpChk => {
                self.state.d.next = Rq::Fin;
                if self.st.q.val().err | !self.ctx_ok.val() | self.d_due.val().get_bit(31) {
                    // Stale or not running.
                } else if self.x_kind.q.val() {
                    if self.st.q.val().rnr_on {
                        self.st.d.next.rnr_on = false;
                        self.hotv.next = 0x20.into();
                        self.ret.d.next = Rq::Fin;
                        self.state.d.next = Rq::GbRd;
                    }
                } else if self.st.q.val().ack_on & !self.st.q.val().rnr_on {
                    if (self.st.q.val().head == self.st.q.val().tail) | !self.rdrec.val().started {
                        self.st.d.next.ack_on = false;
                    } else if self.st.q.val().retry_left == 0 {
                        self.hotv.next = 0x80.into();
                        self.fail_at.d.next = self.st.q.val().head;
                        self.fail_status.d.next = 7.into();
                        self.idx.d.next = self.st.q.val().head;
                        self.state.d.next = Rq::FlRd;
                    } else {
                        self.st.d.next.retry_left = self.st.q.val().retry_left - 1;
                        self.hotv.next = 0x10.into();
                        self.ret.d.next = Rq::Fin;
                        self.state.d.next = Rq::GbRd;
                    }
                }
            }
            // ---------------- AckBefore(ab_q): complete what ends before it.
            Rq::AbRd => {
                if self.st.q.val().head == self.st.q.val().tail {
                    self.st.d.next.comp_psn = self.st.q.val().next_psn;
                    self.pg_cond.d.next = true;
                    self.state.d.next = Rq::PgRd;
                } else {
                    self.wq.read_enable.next = true;
                    self.state.d.next = Rq::AbChk;
                }
            }
            Rq::AbChk => {
                self.rec.d.next = self.rdrec.val();
                self.pg_cond.d.next = true;
                self.state.d.next = Rq::PgRd;
                if !self.rdrec.val().started {
                    self.st.d.next.comp_psn = self.st.q.val().next_psn;
                } else if !self.d_last_q.val().get_bit(23) {
                    // Its last PSN is not before q: moves comp_psn only.
                    if !self.rec_rd_atomic.val()
                        & !self.d_q_comp.val().get_bit(23)
                        & (self.d_q_comp.val() != 0)
                    {
                        self.st.d.next.comp_psn = self.ab_q.q.val();
                    } else if !self.d_first_comp.val().get_bit(23) & (self.d_first_comp.val() != 0)
                    {
                        self.st.d.next.comp_psn = self.rdrec.val().first;
                    }
                } else if self.rec_rd_atomic.val() {
                    // A READ/atomic before q has no response: lost.
                    if !self.d_first_comp.val().get_bit(23) & (self.d_first_comp.val() != 0) {
                        self.st.d.next.comp_psn = self.rdrec.val().first;
                    }
                    self.lost.d.next = true;
                } else {
                    self.ret2.d.next = Rq::AbRd;
                    self.state.d.next = Rq::ChCqe;
                }
            }
            // ---------------- Complete the head (rec), success.
            Rq::ChCqe => {
                self.cq_status.d.next = 0.into();
                self.cq_len.d.next = self.rec.q.val().len;
                if (self.wr_pend.q.val() == 0) & !self.wr_go.val() {
                    self.m_scqe_valid.next = self.rec.q.val().signaled;
                    self.m_scqe_status.next = 0.into();
                    self.m_scqe_byte_len.next = self.rec.q.val().len;
                    if self.m_scqe_ready.val() | !self.rec.q.val().signaled {
                        if self.rec.q.val().op >= 5 {
                            self.st.d.next.rd_out = self.st.q.val().rd_out - 1;
                        }
                        if self.st.q.val().cur == self.st.q.val().head {
                            self.st.d.next.cur = self.st.q.val().head + 1;
                            self.st.d.next.send_pkt = 0.into();
                        }
                        self.st.d.next.head = self.st.q.val().head + 1;
                        self.state.d.next = self.ret2.q.val();
                    }
                }
            }
            // ---------------- Progress (after comp_psn moved), return to ret.
            Rq::PgRd => {
                self.wq.read_enable.next = true;
                self.state.d.next = Rq::PgDo;
            }
            Rq::PgDo => {
                self.state.d.next = self.ret.q.val();
                if (self.st.q.val().head == self.st.q.val().tail) | !self.rdrec.val().started {
                    self.st.d.next.comp_psn = self.st.q.val().next_psn;
                }
                if !self.pg_cond.q.val()
                    | (!self.d_comp_before.val().get_bit(23) & (self.d_comp_before.val() != 0))
                    | (((self.st.q.val().head == self.st.q.val().tail) | !self.rdrec.val().started)
                        & (self.st.q.val().next_psn != self.comp_before.q.val()))
                {
                    self.st.d.next.retry_left = self.c_retry.q.val();
                    self.st.d.next.rnr_left = self.c_rnr.q.val();
                    self.st.d.next.retry_started = false;
                    if (self.st.q.val().cur == self.st.q.val().head)
                        & (self.st.q.val().head != self.st.q.val().tail)
                        & self.rdrec.val().started
                        & (self.st.q.val().send_pkt < self.d_acked.val())
                    {
                        self.st.d.next.send_pkt = self.d_acked.val();
                    }
                    if (self.st.q.val().head != self.st.q.val().tail)
                        & self.rdrec.val().started
                        & !self.st.q.val().rnr_on
                        & (self.c_timeout.q.val() != 0)
                    {
                        self.st.d.next.ack_on = true;
                        self.t_arm.d.next = true;
                        self.arm_kind.d.next = false;
                        self.arm_delay.d.next = self
                            .to_table
                            .val()
                            .get_bits::<32>(self.to_idx.val().index());
                    } else {
                        self.st.d.next.ack_on = false;
                    }
                    self.t_kick.d.next = true;
                }
            }
            // ---------------- RetryAfterNak(why), then Fin.
            Rq::Retry => {
                self.state.d.next = Rq::Fin;
                if self.st.q.val().retry_started {
                    self.hotv.next = 0x40.into();
                } else if self.st.q.val().retry_left == 0 {
                    self.hotv.next = 0x80.into();
                    self.fail_at.d.next = self.st.q.val().head;
                    self.fail_status.d.next = 7.into();
                    self.idx.d.next = self.st.q.val().head;
                    self.state.d.next = Rq::FlRd;
                } else {
                    self.st.d.next.retry_left = self.st.q.val().retry_left - 1;
                    self.st.d.next.retry_started = true;
                    self.hotv.next = self.why.q.val();
                    self.ret.d.next = Rq::Fin;
                    self.state.d.next = Rq::GbRd;
                }
            }
            // ---------------- Go-back-N from comp_psn, return to ret.
            Rq::GbRd => {
                self.wq.read_enable.next = true;
                self.state.d.next = Rq::GbDo;
            }
            Rq::GbDo => {
                self.st.d.next.cur = self.st.q.val().head;
                self.state.d.next = self.ret.q.val();
                self.t_kick.d.next = true;
                if (self.st.q.val().head != self.st.q.val().tail) & self.rdrec.val().started {
                    self.st.d.next.send_pkt = self.d_acked.val();
                    if self.c_timeout.q.val() != 0 {
                        self.st.d.next.ack_on = true;
                        self.t_arm.d.next = true;
                        self.arm_kind.d.next = false;
                        self.arm_delay.d.next = self
                            .to_table
                            .val()
                            .get_bits::<32>(self.to_idx.val().index());
                    } else {
                        self.st.d.next.ack_on = false;
                    }
                } else {
                    self.st.d.next.send_pkt = 0.into();
                    self.st.d.next.ack_on = false;
                }
            }
            // ---------------- RNR NAK (r_syn's timer), then Fin.
            Rq::Rnr => {
                self.state.d.next = Rq::Fin;
                if self.st.q.val().rnr_on {
                } else if (self.c_rnr.q.val() != 7) & (self.st.q.val().rnr_left == 0) {
                    self.hotv.next = 0x100.into();
                    self.fail_at.d.next = self.st.q.val().head;
                    self.fail_status.d.next = 8.into();
                    self.idx.d.next = self.st.q.val().head;
                    self.state.d.next = Rq::FlRd;
                } else {
                    if self.c_rnr.q.val() != 7 {
                        self.st.d.next.rnr_left = self.st.q.val().rnr_left - 1;
                    }
                    self.st.d.next.rnr_on = true;
                    self.st.d.next.ack_on = false;
                    self.t_arm.d.next = true;
                    self.arm_kind.d.next = true;
                    self.arm_delay.d.next = self
                        .rnr_table
                        .val()
                        .get_bits::<32>(self.rnr_idx.val().index());
                }
            }
            // ---------------- Flush: idx from head to tail; fail_at gets fail_status.
            Rq::FlRd => {
                if self.idx.q.val() == self.st.q.val().tail {
                    self.state.d.next = Rq::FlEnd;
                } else {
                    self.wq.read_enable.next = true;
                    self.wq.read_address.next = (bit_cast::<A, 24>(self.qpn.q.val())
                        << self.ring_bits.val())
                        | bit_cast::<A, 8>(self.idx.q.val() & self.ring_mask.val());
                    self.state.d.next = Rq::FlCqe;
                }
            }
            Rq::FlCqe => {
                // The completion: wait for every data write before it.
                self.m_scqe_wr_id.next = self.rdrec.val().wr_id;
                self.m_scqe_opcode.next = self.rdrec.val().op;
                self.m_scqe_byte_len.next = 0.into();
                if self.idx.q.val() == self.fail_at.q.val() {
                    self.m_scqe_status.next = self.fail_status.q.val();
                } else {
                    self.m_scqe_status.next = 3.into();
                }
                if (self.wr_pend.q.val() == 0) & !self.wr_go.val() {
                    self.m_scqe_valid.next = true;
                    if self.m_scqe_ready.val() {
                        self.idx.d.next = self.idx.q.val() + 1;
                        self.state.d.next = Rq::FlRd;
                    }
                }
            }
            Rq::FlEnd => {
                self.st.d.next.err = true;
                self.st.d.next.head = self.st.q.val().tail;
                self.st.d.next.cur = self.st.q.val().tail;
                self.st.d.next.send_pkt = 0.into();
                self.st.d.next.rd_out = 0.into();
                self.st.d.next.ack_on = false;
                self.st.d.next.rnr_on = false;
                self.t_arm.d.next = false;
                self.t_kick.d.next = false;
                if self.ekind.q.val() == 1 {
                    self.state.d.next = Rq::Fin;
                } else {
                    self.state.d.next = Rq::ErrEv;
                }
            }
            Rq::ErrEv => {
                self.m_err_valid.next = true;
                if self.m_err_ready.val() {
                    self.state.d.next = Rq::Fin;
                }
            }
            // ---------------- The tail.
            Rq::Fin => {
                if self.t_disc.q.val() {
                    self.state.d.next = Rq::Disc;
                } else if self.t_arm.q.val() {
                    self.state.d.next = Rq::Arm;
                } else {
                    self.state.d.next = Rq::Wb;
                }
            }
            Rq::Disc => {
                self.m_wr_cmd_valid.next = true;
                self.m_wr_cmd_len.next = bit_cast::<32, 16>(self.r_plen.q.val());
                self.m_wr_cmd_last.next = true;
                self.m_wr_cmd_discard.next = true;
                if self.m_wr_cmd_ready.val() {
                    self.wr_go.next = true;
                    self.t_disc.d.next = false;
                    self.state.d.next = Rq::Fin;
                }
            }
            Rq::Arm => {
                self.m_arm_valid.next = true;
                if self.m_arm_ready.val() {
                    self.st.d.next.deadline = self.s_now.val() + self.arm_delay.q.val();
                    self.t_arm.d.next = false;
                    self.state.d.next = Rq::Wb;
                }
            }
            Rq::Wb => {
                self.sts.write_enable.next = true;
                if self.t_kick.q.val()
                    & !self.st.q.val().queued
                    & !self.st.q.val().err
                    & (self.st.q.val().cur != self.st.q.val().tail)
                {
                    self.sts.write_data.next.queued = true;
                    self.kq.write_enable.next = true;
                    self.kq_w.d.next = self.kq_w.q.val() + 1;
                }
                self.state.d.next = Rq::Idle;
            }
        }
        // ---- Outstanding dma_wr commands.
        if self.wr_go.val() & !self.s_wr_done_valid.val() {
            self.wr_pend.d.next = self.wr_pend.q.val() + 1;
        } else if !self.wr_go.val() & self.s_wr_done_valid.val() {
            self.wr_pend.d.next = self.wr_pend.q.val() - 1;
        }
        self.hot.d.next = self.hotv.val();
        if self.reset.val() {
            self.state.d.next = Rq::Idle;
            self.wr_pend.d.next = 0.into();
            self.kq_w.d.next = 0.into();
            self.kq_r.d.next = 0.into();
            self.wqe_blocked.d.next = false;
            self.hot.d.next = 0.into();
        }
        self.cnt_req_sent.next = self.ctr[0].count.val();
        self.cnt_req_retx.next = self.ctr[1].count.val();
        self.cnt_retry_seq_nak.next = self.ctr[2].count.val();
        self.cnt_retry_implied.next = self.ctr[3].count.val();
        self.cnt_retry_timeout.next = self.ctr[4].count.val();
        self.cnt_retry_rnr.next = self.ctr[5].count.val();
        self.cnt_retry_ignored.next = self.ctr[6].count.val();
        self.cnt_retry_exceeded.next = self.ctr[7].count.val();
        self.cnt_rnr_exceeded.next = self.ctr[8].count.val();
        self.cnt_rnr_nak.next = self.ctr[9].count.val();
        self.cnt_nak_err.next = self.ctr[10].count.val();
        self.cnt_drop_stale.next = self.ctr[11].count.val();
        self.cnt_drop_unexpected.next = self.ctr[12].count.val();
        self.cnt_drop_out_of_order.next = self.ctr[13].count.val();
        self.cnt_drop_qp_state.next = self.ctr[14].count.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn req_engine_synthesizes() {
        let mut b = ReqEngineSmall64::new();
        b.connect_all();
        let v = generate_verilog(&b);
        yosys_validate("req_engine", &v).unwrap();
    }

    #[test]
    fn tables_come_from_the_wire_crate() {
        let b = ReqEngineSmall64::new();
        let op = |o: u64, p: usize| {
            b.op_table
                .val()
                .get_bits::<8>(((o as usize) * 4 + p) * 8)
                .index()
        };
        assert_eq!(op(OP_SEND, 0), 0x00);
        assert_eq!(op(OP_SEND_IMM, 3), 0x05);
        assert_eq!(op(OP_SEND_INV, 2), 0x16);
        assert_eq!(op(OP_SEND_INV, 3), 0x17);
        assert_eq!(op(OP_WRITE_IMM, 2), 0x09);
        assert_eq!(op(OP_READ, 0), 0x0C);
        assert_eq!(op(OP_CMP_SWAP, 3), 0x13);
        assert_eq!(op(OP_FETCH_ADD, 1), 0x14);
        // 4.096 us at 0.8192 us a tick: 5 ticks (+1).
        assert_eq!(b.to_table.val().get_bits::<32>(32).index(), 11);
        assert_eq!(ticks(4096), 6);
    }
}
