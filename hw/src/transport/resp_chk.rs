//! `resp_chk`: the RC responder's header engine. For each request header
//! `roce_rx` accepts it makes the decisions of IBTA 9.7.5 up to, not
//! including, the R_Key check, in the order and with the outcomes of
//! `roce_transport`'s responder (`transport/src/responder.rs`):
//!
//! 1. QP: DestQP below `2^Q`, a live per-QP state (INIT event seen, not
//!    moved to Error by this block), context state RTR/RTS/SQD/SQE (the
//!    model's set; `roce_regs::QpState`), type RC (UC and UD QPs, and
//!    non-RC opcodes, are counted and dropped: not built yet); RC
//!    responses and CNPs are counted and dropped (they belong to the
//!    requester, which does not exist yet). Silent drops, counted.
//! 2. PSN against ePSN, 24-bit serial compare (`roce_wire::Psn::diff`):
//!    ahead: one PSN-sequence NAK carrying ePSN and MSN, then silence
//!    (counted) until ePSN arrives; behind: duplicate; equal: 3–6.
//! 3. Opcode sequence; 4. access flags and PadCnt; 5. resources
//!    (max_dest_rd_atomic, receive credits: RNR NAK with min_rnr_timer);
//!    6. length (PMTU per position, WRITE residual, DMA length ≤ 2^31,
//!    atomic alignment). Failures 3–6 except RNR: invalid-request NAK and
//!    the QP moves to Error (`m_qp_error_*`).
//!
//! Then the state update and one command per header on `m_cmd_*`.
//!
//! **Pipeline** (one item — header or event — per 2 cycles):
//! - accept (cycle t): `qp_rd_addr` and the state RAM's read address are
//!   the incoming QPN; the item is registered into A1;
//! - A1 (t+1): the context port and the state RAM (`BramOutReg`) work;
//! - A2 (t+2): what needs only the header and the context (opcode flags,
//!   access, PadCnt, resources, per-position length, READ packets, sums)
//!   is registered, and so is the state RAM's word, in the fabric;
//! - A3 (t+3): the state, taken from the last write or the one before it
//!   when they were to this QP (items are at least 2 cycles apart and
//!   write the RAM the cycle after A4, so those two are the only writes an
//!   item's read can have missed), and the checks that depend on it (PSN
//!   compare, opcode sequence, credits, WRITE residual), registered;
//! - A4 (t+4): the update's sums, the decision, the new state into the
//!   forwarding registers and the RAM's write registers (the RAM takes it
//!   a cycle later), the command into the output FIFO.
//!
//! Headers are accepted while fewer than `CMD_CAPACITY` commands are in
//! the pipeline or the FIFO, so the pipeline never stalls.

use crate::bram::BramOutReg;
use crate::csr::{ctx_layout, QpStore, QP_CTX_BITS};
use crate::fifo::SyncFifo;
use crate::prim::Counter32;
use roce_regs::{AccessFlag, QpState, QpType};
use roce_wire::opcode::{flags, OpKind, Opcode, Position, Transport};
use roce_wire::NakCode;
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

/// Command kinds on `m_cmd_kind`.
pub const CMD_EXECUTE: u64 = 0;
/// A duplicate (PSN behind ePSN): SEND/WRITE re-ACKed with `ack_psn` and
/// `msn`; READ/atomic replayed from the executor's responder resources.
pub const CMD_DUPLICATE: u64 = 1;
/// NAK with code `m_cmd_code` (`NakCode`) for PSN `m_cmd_psn`.
pub const CMD_NAK: u64 = 2;
/// RNR NAK with timer `m_cmd_code` for PSN `m_cmd_psn`.
pub const CMD_RNR_NAK: u64 = 3;
/// Silent drop; `m_cmd_code` is the reason (`DROP_*`).
pub const CMD_DROP: u64 = 4;
/// Not a header: the QP was re-initialised (`EV_INIT` or `EV_CLEAR`
/// taken), in order with the headers, so the executor forgets what it
/// kept for the QP's previous life (responder resources, its own Error
/// mark) exactly between the commands before and after.
pub const CMD_RESET: u64 = 5;
/// Not a header: the firmware moved the QP to Error (`EV_ERROR` without
/// `s_ev_exec`), in order with the headers, so the executor flushes its
/// receive queue after the completions of every command before it.
pub const CMD_FLUSH: u64 = 6;

/// Drop reasons on `m_cmd_code` for `CMD_DROP`.
pub const DROP_QPN: u64 = 1;
pub const DROP_STATE: u64 = 2;
pub const DROP_TYPE: u64 = 3;
pub const DROP_RESPONSE: u64 = 4;
pub const DROP_OUT_OF_SEQ: u64 = 5;

/// Event kinds on `s_ev_kind`.
/// The firmware's modify to RTR: ePSN = context `rq_psn`, MSN 0, no
/// message in progress, no NAK sent, live; receive credits kept (the
/// model's `modify` keeps posted receive WQEs).
pub const EV_INIT: u64 = 0;
/// `s_ev_count` receive WQEs posted (ignored on a QP this block moved to
/// Error: the model flushes them).
pub const EV_POST_RECV: u64 = 1;
/// Modify to Reset: the whole state cleared (not live, no credits).
pub const EV_CLEAR: u64 = 2;
/// The QP moved to Error by someone else (the executor's remote access
/// or operational error, the firmware's modify to Error): its packets are
/// dropped from the next item on, its credits flushed. From the firmware
/// (`s_ev_exec` low) it becomes a `CMD_FLUSH`; from the executor (which
/// flushes the receive queue itself, and must not wait for room while its
/// commands wait) no command.
pub const EV_ERROR: u64 = 3;

// The accept counts INIT and CLEAR (they become `CMD_RESET` commands)
// by bit 0 of the kind; ERROR by its `s_ev_exec`.
const _: () =
    assert!(EV_INIT & 1 == 0 && EV_CLEAR & 1 == 0 && EV_POST_RECV & 1 == 1 && EV_ERROR == 3);

/// Commands the block holds (pipeline + output FIFO).
pub const CMD_CAPACITY: u64 = 9;
/// Cycles from a header's handshake on `s_hdr` to its command on `m_cmd`
/// with `m_cmd_ready` high (measured by `sim/tests/resp_chk.rs`).
pub const LATENCY: usize = 6;
/// Receive-credit counter bits.
pub const CREDIT_BITS: usize = 16;

const ST_BITS: usize = roce_regs::STATE_BITS as usize;
const TY_BITS: usize = roce_regs::QP_TYPE_BITS as usize;
const PMTU_BITS: usize = roce_regs::PMTU_BITS as usize;
const ACC_BITS: usize = roce_regs::ACCESS_BITS as usize;
const RNR_BITS: usize = roce_regs::RNR_TIMER_BITS as usize;
/// Bits of `max_dest_rd_atomic` on `m_cmd_mdra` (`roce_regs::RD_ATOMIC_BITS`).
pub const RDA_BITS: usize = roce_regs::RD_ATOMIC_BITS as usize;
const PSN_BITS: usize = roce_regs::PSN_BITS as usize;
/// Bits of the PD on `m_cmd_pd` (`roce_regs::MR_PD_BITS`).
pub const PD_BITS: usize = roce_regs::MR_PD_BITS as usize;

/// One item in the pipeline: a header or an event.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct RespItem {
    pub ev: Bit,
    pub ev_kind: Bits<2>,
    /// An `EV_ERROR` from the executor (no `CMD_FLUSH`).
    pub ev_exec: Bit,
    pub ev_count: Bits<16>,
    pub qpn: Bits<24>,
    pub opcode: Bits<8>,
    pub padcnt: Bits<2>,
    pub ackreq: Bit,
    /// BTH SE (solicited event).
    pub se: Bit,
    pub psn: Bits<24>,
    pub plen: Bits<16>,
    /// RETH or AtomicETH VA / R_Key (by opcode).
    pub va: Bits<64>,
    pub rkey: Bits<32>,
    pub dmalen: Bits<32>,
    /// ImmDt or IETH (by opcode).
    pub imm: Bits<32>,
    pub swap: Bits<64>,
    pub compare: Bits<64>,
}

/// Per-QP responder state (one block-RAM word).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct RespState {
    /// INIT seen since the last CLEAR.
    pub live: Bit,
    /// This block moved the QP to Error (every error NAK does).
    pub err: Bit,
    pub epsn: Bits<24>,
    pub msn: Bits<24>,
    /// One past the last SEND/WRITE/atomic PSN executed (rxe's `ack_psn`).
    pub ack_psn: Bits<24>,
    /// A PSN-sequence or RNR NAK was sent for `epsn`.
    pub nak_sent: Bit,
    /// Message in progress: 0 none, 1 SEND, 2 WRITE.
    pub cur: Bits<2>,
    /// WRITE in progress: next VA, R_Key, bytes left.
    pub va: Bits<64>,
    pub rkey: Bits<32>,
    pub resid: Bits<32>,
    /// SEND in progress: bytes written into the receive WQE.
    pub off: Bits<32>,
    /// Receive WQEs posted and not consumed.
    pub credits: Bits<CREDIT_BITS>,
}

/// What A2 works out from the header and the context alone.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct RespPre {
    pub qpn_bad: Bit,
    pub state_ok: Bit,
    /// Context type RC and an RC opcode.
    pub type_ok: Bit,
    pub req: Bit,
    pub send: Bit,
    pub write: Bit,
    pub read: Bit,
    pub atomic: Bit,
    pub first: Bit,
    pub middle: Bit,
    pub last: Bit,
    pub only: Bit,
    pub wqe: Bit,
    pub acc_ok: Bit,
    pub pad_bad: Bit,
    pub res_bad: Bit,
    pub dma_big: Bit,
    /// The length rules that need no state (per position, READ, atomic).
    pub len_bad: Bit,
    pub pmtu: Bits<32>,
    pub rnr_code: Bits<RNR_BITS>,
    pub rq_psn: Bits<PSN_BITS>,
    pub pd: Bits<PD_BITS>,
    pub mdra: Bits<RDA_BITS>,
    /// PSN + 1, and PSN + the READ's packets.
    pub psn1: Bits<24>,
    pub psn_rd: Bits<24>,
}

/// What A3 works out from the (forwarded) state.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct RespMid {
    pub ahead: Bit,
    pub behind: Bit,
    pub drop_state: Bit,
    pub seq_ok: Bit,
    pub rnr: Bit,
    pub len_bad: Bit,
    pub wr_va: Bits<64>,
    pub wr_rkey: Bits<32>,
    pub resid: Bits<32>,
}

/// One command to the executor.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct RespCmd {
    pub qpn: Bits<24>,
    pub kind: Bits<3>,
    pub code: Bits<5>,
    pub opcode: Bits<8>,
    pub psn: Bits<24>,
    pub msn: Bits<24>,
    pub ack_req: Bit,
    /// The header's BTH SE.
    pub se: Bit,
    pub plen: Bits<16>,
    pub va: Bits<64>,
    pub rkey: Bits<32>,
    pub len: Bits<32>,
    pub imm: Bits<32>,
    pub swap: Bits<64>,
    pub compare: Bits<64>,
    pub off: Bits<32>,
    pub ack_psn: Bits<24>,
    /// From the context, for the executor: PD, PMTU in bytes,
    /// max_dest_rd_atomic.
    pub pd: Bits<PD_BITS>,
    pub pmtu: Bits<16>,
    pub mdra: Bits<RDA_BITS>,
}

/// A 256-entry opcode flag table.
fn opcode_rom(f: impl Fn(u8) -> bool) -> Constant<Bits<256>> {
    let mut b = Bits::<256>::default();
    for c in 0..=255u8 {
        if f(c) {
            b = b.replace_bit(c as usize, true);
        }
    }
    Constant::new(b)
}

fn rc_info(c: u8) -> Option<&'static roce_wire::opcode::OpcodeInfo> {
    Opcode(c).info().filter(|i| i.transport == Transport::Rc)
}

fn rc_req_kind(c: u8, k: &[OpKind]) -> bool {
    rc_info(c).is_some_and(|i| k.contains(&i.kind))
}

fn rc_pos(c: u8, p: Position) -> bool {
    rc_info(c).is_some_and(|i| i.position == p)
}

/// The header engine; `2^Q` QPs.
#[derive(LogicBlock)]
pub struct RespChk<const Q: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // Request headers (roce_rx's descriptor fields).
    pub s_hdr_valid: Signal<In, Bit>,
    pub s_hdr_ready: Signal<Out, Bit>,
    pub s_hdr_drop: Signal<In, Bit>,
    pub s_hdr_opcode: Signal<In, Bits<8>>,
    pub s_hdr_padcnt: Signal<In, Bits<2>>,
    pub s_hdr_destqp: Signal<In, Bits<24>>,
    pub s_hdr_ackreq: Signal<In, Bit>,
    pub s_hdr_se: Signal<In, Bit>,
    pub s_hdr_psn: Signal<In, Bits<24>>,
    pub s_hdr_payload_len: Signal<In, Bits<16>>,
    pub s_hdr_reth_va: Signal<In, Bits<64>>,
    pub s_hdr_reth_rkey: Signal<In, Bits<32>>,
    pub s_hdr_reth_dmalen: Signal<In, Bits<32>>,
    pub s_hdr_immdt: Signal<In, Bits<32>>,
    pub s_hdr_ieth: Signal<In, Bits<32>>,
    pub s_hdr_atomic_va: Signal<In, Bits<64>>,
    pub s_hdr_atomic_rkey: Signal<In, Bits<32>>,
    pub s_hdr_atomic_swap_add: Signal<In, Bits<64>>,
    pub s_hdr_atomic_compare: Signal<In, Bits<64>>,
    // Events (firmware / host interface).
    pub s_ev_valid: Signal<In, Bit>,
    pub s_ev_ready: Signal<Out, Bit>,
    pub s_ev_kind: Signal<In, Bits<2>>,
    pub s_ev_qpn: Signal<In, Bits<24>>,
    pub s_ev_count: Signal<In, Bits<16>>,
    /// With `EV_ERROR`: it comes from the executor (no command, no room
    /// needed).
    pub s_ev_exec: Signal<In, Bit>,
    // The csr block's datapath context port (2-cycle form).
    pub qp_rd_addr: Signal<Out, Bits<Q>>,
    pub qp_rd_data: Signal<In, Bits<QP_CTX_BITS>>,
    // Commands.
    pub m_cmd_valid: Signal<Out, Bit>,
    pub m_cmd_ready: Signal<In, Bit>,
    pub m_cmd_qpn: Signal<Out, Bits<24>>,
    pub m_cmd_kind: Signal<Out, Bits<3>>,
    pub m_cmd_code: Signal<Out, Bits<5>>,
    pub m_cmd_opcode: Signal<Out, Bits<8>>,
    pub m_cmd_psn: Signal<Out, Bits<24>>,
    pub m_cmd_msn: Signal<Out, Bits<24>>,
    pub m_cmd_ack_req: Signal<Out, Bit>,
    pub m_cmd_se: Signal<Out, Bit>,
    pub m_cmd_plen: Signal<Out, Bits<16>>,
    pub m_cmd_va: Signal<Out, Bits<64>>,
    pub m_cmd_rkey: Signal<Out, Bits<32>>,
    pub m_cmd_len: Signal<Out, Bits<32>>,
    pub m_cmd_imm: Signal<Out, Bits<32>>,
    pub m_cmd_swap: Signal<Out, Bits<64>>,
    pub m_cmd_compare: Signal<Out, Bits<64>>,
    pub m_cmd_off: Signal<Out, Bits<32>>,
    pub m_cmd_ack_psn: Signal<Out, Bits<24>>,
    pub m_cmd_pd: Signal<Out, Bits<PD_BITS>>,
    pub m_cmd_pmtu: Signal<Out, Bits<16>>,
    pub m_cmd_mdra: Signal<Out, Bits<RDA_BITS>>,
    /// One-cycle pulse: this block moved QP `m_qp_error_qpn` to Error.
    pub m_qp_error_valid: Signal<Out, Bit>,
    pub m_qp_error_qpn: Signal<Out, Bits<24>>,
    // Counters.
    pub cnt_execute: Signal<Out, Bits<32>>,
    pub cnt_hdr_drop: Signal<Out, Bits<32>>,
    pub cnt_drop_qpn: Signal<Out, Bits<32>>,
    pub cnt_drop_state: Signal<Out, Bits<32>>,
    pub cnt_drop_type: Signal<Out, Bits<32>>,
    pub cnt_drop_response: Signal<Out, Bits<32>>,
    pub cnt_drop_out_of_seq: Signal<Out, Bits<32>>,
    pub cnt_duplicate: Signal<Out, Bits<32>>,
    pub cnt_nak_psn_seq: Signal<Out, Bits<32>>,
    pub cnt_nak_op_seq: Signal<Out, Bits<32>>,
    pub cnt_nak_op_invalid: Signal<Out, Bits<32>>,
    pub cnt_nak_padcnt: Signal<Out, Bits<32>>,
    pub cnt_nak_resource: Signal<Out, Bits<32>>,
    pub cnt_nak_length: Signal<Out, Bits<32>>,
    pub cnt_rnr_nak: Signal<Out, Bits<32>>,
    // Pipeline.
    a1: DFF<RespItem>,
    a1_valid: DFF<Bit>,
    a2: DFF<RespItem>,
    a2_valid: DFF<Bit>,
    fw_valid: DFF<Bit>,
    fw_qp: DFF<Bits<Q>>,
    fw_state: DFF<RespState>,
    fw2_valid: DFF<Bit>,
    fw2_qp: DFF<Bits<Q>>,
    fw2_state: DFF<RespState>,
    ram_we: DFF<Bit>,
    ram_wa: DFF<Bits<Q>>,
    ram_wd: DFF<RespState>,
    s1a: DFF<Bit>,
    s2a: DFF<Bit>,
    s1b: DFF<Bit>,
    s2b: DFF<Bit>,
    m_a4: Signal<Local, Bit>,
    m_f1: Signal<Local, Bit>,
    m_f2: Signal<Local, Bit>,
    a3: DFF<RespItem>,
    a3_valid: DFF<Bit>,
    a4: DFF<RespItem>,
    a4_valid: DFF<Bit>,
    pre3: DFF<RespPre>,
    pre4: DFF<RespPre>,
    raw3: DFF<RespState>,
    st4: DFF<RespState>,
    mid4: DFF<RespMid>,
    inflight: DFF<Bits<4>>,
    err_valid: DFF<Bit>,
    err_qpn: DFF<Bits<24>>,
    hot: DFF<Bits<16>>,
    ram: BramOutReg<RespState, Q>,
    fifo: SyncFifo<RespCmd, 3, 4>,
    ctr: Vec<Counter32>,
    hot_hdr_drop: DFF<Bit>,
    // Combinational.
    acc_hdr: Signal<Local, Bit>,
    acc_ev: Signal<Local, Bit>,
    /// The offered event becomes a command (INIT, CLEAR, the firmware's
    /// ERROR).
    ev_cmd: Signal<Local, Bit>,
    cmd_take: Signal<Local, Bit>,
    hdr_new: Signal<Local, Bit>,
    item_in: Signal<Local, Bit>,
    st: Signal<Local, RespState>,
    ns: Signal<Local, RespState>,
    cmd: Signal<Local, RespCmd>,
    wr: Signal<Local, Bit>,
    out: Signal<Local, Bit>,
    hotv: Signal<Local, Bits<16>>,
    to_err: Signal<Local, Bit>,
    c_state: Signal<Local, Bits<ST_BITS>>,
    c_type: Signal<Local, Bits<TY_BITS>>,
    c_pmtu: Signal<Local, Bits<PMTU_BITS>>,
    c_access: Signal<Local, Bits<ACC_BITS>>,
    c_rnr: Signal<Local, Bits<RNR_BITS>>,
    c_mdra: Signal<Local, Bits<RDA_BITS>>,
    c_rq_psn: Signal<Local, Bits<PSN_BITS>>,
    c_pd: Signal<Local, Bits<PD_BITS>>,
    f_req: Signal<Local, Bit>,
    f_rc: Signal<Local, Bit>,
    f_send: Signal<Local, Bit>,
    f_write: Signal<Local, Bit>,
    f_read: Signal<Local, Bit>,
    f_atomic: Signal<Local, Bit>,
    f_first: Signal<Local, Bit>,
    f_middle: Signal<Local, Bit>,
    f_last: Signal<Local, Bit>,
    f_only: Signal<Local, Bit>,
    f_wqe: Signal<Local, Bit>,
    state_ok: Signal<Local, Bit>,
    dpsn: Signal<Local, Bits<24>>,
    pmtu: Signal<Local, Bits<32>>,
    plen32: Signal<Local, Bits<32>>,
    seq_ok: Signal<Local, Bit>,
    acc_ok: Signal<Local, Bit>,
    pad_bad: Signal<Local, Bit>,
    res_bad: Signal<Local, Bit>,
    pos_bad: Signal<Local, Bit>,
    dma_big: Signal<Local, Bit>,
    resid: Signal<Local, Bits<32>>,
    wr_va: Signal<Local, Bits<64>>,
    wr_rkey: Signal<Local, Bits<32>>,
    npkts: Signal<Local, Bits<32>>,
    a_va: Signal<Local, Bits<64>>,
    plen3: Signal<Local, Bits<32>>,
    pmtu3: Signal<Local, Bits<32>>,
    fo3: Signal<Local, Bit>,
    plen4: Signal<Local, Bits<32>>,
    va_next4: Signal<Local, Bits<64>>,
    off_next4: Signal<Local, Bits<32>>,
    resid_next4: Signal<Local, Bits<32>>,
    msn1_4: Signal<Local, Bits<24>>,
    cred_m1_4: Signal<Local, Bits<CREDIT_BITS>>,
    cred_p4: Signal<Local, Bits<CREDIT_BITS>>,
    ack_m1_4: Signal<Local, Bits<24>>,
    // Constants.
    rom_req: Constant<Bits<256>>,
    rom_rc: Constant<Bits<256>>,
    rom_send: Constant<Bits<256>>,
    rom_write: Constant<Bits<256>>,
    rom_read: Constant<Bits<256>>,
    rom_atomic: Constant<Bits<256>>,
    rom_first: Constant<Bits<256>>,
    rom_middle: Constant<Bits<256>>,
    rom_last: Constant<Bits<256>>,
    rom_only: Constant<Bits<256>>,
    rom_wqe: Constant<Bits<256>>,
    rom_ieth: Constant<Bits<256>>,
    off_state: Constant<Bits<16>>,
    off_type: Constant<Bits<16>>,
    off_pmtu: Constant<Bits<16>>,
    off_access: Constant<Bits<16>>,
    off_rnr: Constant<Bits<16>>,
    off_mdra: Constant<Bits<16>>,
    off_rq_psn: Constant<Bits<16>>,
    off_pd: Constant<Bits<16>>,
    st_rtr: Constant<Bits<ST_BITS>>,
    st_rts: Constant<Bits<ST_BITS>>,
    st_sqd: Constant<Bits<ST_BITS>>,
    st_sqe: Constant<Bits<ST_BITS>>,
    ty_rc: Constant<Bits<TY_BITS>>,
    acc_write: Constant<Bits<ACC_BITS>>,
    acc_read: Constant<Bits<ACC_BITS>>,
    acc_atomic: Constant<Bits<ACC_BITS>>,
    nak_seq: Constant<Bits<5>>,
    nak_inv: Constant<Bits<5>>,
    capacity: Constant<Bits<4>>,
    dma_max: Constant<Bits<32>>,
    c128: Constant<Bits<32>>,
    qpn_hi: Constant<Bits<24>>,
}

/// 1024 QPs (the floor).
pub type RespChkDefault = RespChk<10>;
/// 64 QPs (simulation build).
pub type RespChkSmall = RespChk<6>;

/// Where a context field sits in `qp_rd_data`, checked to have `width`.
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

impl<const Q: usize> RespChk<Q> {
    /// `2^Q` QPs.
    pub fn new() -> Self {
        assert!(
            (1..=14).contains(&Q),
            "RespChk: QP index bits {Q} out of 1..=14"
        );
        // The pipeline reads the context in the same two cycles as its
        // state RAM: the csr block's default datapath port.
        assert_eq!(QpStore::BramOutReg.latency(), 2);
        use roce_regs::qp;
        let send = [OpKind::Send];
        let c = |v: u64| -> Constant<Bits<ST_BITS>> { Constant::new(v.into()) };
        let a = |f: AccessFlag| -> Constant<Bits<ACC_BITS>> { Constant::new((f as u64).into()) };
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_hdr_valid: Default::default(),
            s_hdr_ready: Default::default(),
            s_hdr_drop: Default::default(),
            s_hdr_opcode: Default::default(),
            s_hdr_padcnt: Default::default(),
            s_hdr_destqp: Default::default(),
            s_hdr_ackreq: Default::default(),
            s_hdr_se: Default::default(),
            s_hdr_psn: Default::default(),
            s_hdr_payload_len: Default::default(),
            s_hdr_reth_va: Default::default(),
            s_hdr_reth_rkey: Default::default(),
            s_hdr_reth_dmalen: Default::default(),
            s_hdr_immdt: Default::default(),
            s_hdr_ieth: Default::default(),
            s_hdr_atomic_va: Default::default(),
            s_hdr_atomic_rkey: Default::default(),
            s_hdr_atomic_swap_add: Default::default(),
            s_hdr_atomic_compare: Default::default(),
            s_ev_valid: Default::default(),
            s_ev_ready: Default::default(),
            s_ev_kind: Default::default(),
            s_ev_qpn: Default::default(),
            s_ev_count: Default::default(),
            s_ev_exec: Default::default(),
            qp_rd_addr: Default::default(),
            qp_rd_data: Default::default(),
            m_cmd_valid: Default::default(),
            m_cmd_ready: Default::default(),
            m_cmd_qpn: Default::default(),
            m_cmd_kind: Default::default(),
            m_cmd_code: Default::default(),
            m_cmd_opcode: Default::default(),
            m_cmd_psn: Default::default(),
            m_cmd_msn: Default::default(),
            m_cmd_ack_req: Default::default(),
            m_cmd_se: Default::default(),
            m_cmd_plen: Default::default(),
            m_cmd_va: Default::default(),
            m_cmd_rkey: Default::default(),
            m_cmd_len: Default::default(),
            m_cmd_imm: Default::default(),
            m_cmd_swap: Default::default(),
            m_cmd_compare: Default::default(),
            m_cmd_off: Default::default(),
            m_cmd_ack_psn: Default::default(),
            m_cmd_pd: Default::default(),
            m_cmd_pmtu: Default::default(),
            m_cmd_mdra: Default::default(),
            m_qp_error_valid: Default::default(),
            m_qp_error_qpn: Default::default(),
            cnt_execute: Default::default(),
            cnt_hdr_drop: Default::default(),
            cnt_drop_qpn: Default::default(),
            cnt_drop_state: Default::default(),
            cnt_drop_type: Default::default(),
            cnt_drop_response: Default::default(),
            cnt_drop_out_of_seq: Default::default(),
            cnt_duplicate: Default::default(),
            cnt_nak_psn_seq: Default::default(),
            cnt_nak_op_seq: Default::default(),
            cnt_nak_op_invalid: Default::default(),
            cnt_nak_padcnt: Default::default(),
            cnt_nak_resource: Default::default(),
            cnt_nak_length: Default::default(),
            cnt_rnr_nak: Default::default(),
            a1: Default::default(),
            a1_valid: Default::default(),
            a2: Default::default(),
            a2_valid: Default::default(),
            fw_valid: Default::default(),
            fw_qp: Default::default(),
            fw_state: Default::default(),
            fw2_valid: Default::default(),
            fw2_qp: Default::default(),
            fw2_state: Default::default(),
            ram_we: Default::default(),
            ram_wa: Default::default(),
            ram_wd: Default::default(),
            s1a: Default::default(),
            s2a: Default::default(),
            s1b: Default::default(),
            s2b: Default::default(),
            m_a4: Default::default(),
            m_f1: Default::default(),
            m_f2: Default::default(),
            a3: Default::default(),
            a3_valid: Default::default(),
            a4: Default::default(),
            a4_valid: Default::default(),
            pre3: Default::default(),
            pre4: Default::default(),
            raw3: Default::default(),
            st4: Default::default(),
            mid4: Default::default(),
            inflight: Default::default(),
            err_valid: Default::default(),
            err_qpn: Default::default(),
            hot: Default::default(),
            ram: BramOutReg::new(),
            fifo: SyncFifo::new(),
            ctr: (0..15).map(|_| Counter32::new()).collect(),
            hot_hdr_drop: Default::default(),
            acc_hdr: Default::default(),
            acc_ev: Default::default(),
            ev_cmd: Default::default(),
            cmd_take: Default::default(),
            hdr_new: Default::default(),
            item_in: Default::default(),
            st: Default::default(),
            ns: Default::default(),
            cmd: Default::default(),
            wr: Default::default(),
            out: Default::default(),
            hotv: Default::default(),
            to_err: Default::default(),
            c_state: Default::default(),
            c_type: Default::default(),
            c_pmtu: Default::default(),
            c_access: Default::default(),
            c_rnr: Default::default(),
            c_mdra: Default::default(),
            c_rq_psn: Default::default(),
            c_pd: Default::default(),
            f_req: Default::default(),
            f_rc: Default::default(),
            f_send: Default::default(),
            f_write: Default::default(),
            f_read: Default::default(),
            f_atomic: Default::default(),
            f_first: Default::default(),
            f_middle: Default::default(),
            f_last: Default::default(),
            f_only: Default::default(),
            f_wqe: Default::default(),
            state_ok: Default::default(),
            dpsn: Default::default(),
            pmtu: Default::default(),
            plen32: Default::default(),
            seq_ok: Default::default(),
            acc_ok: Default::default(),
            pad_bad: Default::default(),
            res_bad: Default::default(),
            pos_bad: Default::default(),
            dma_big: Default::default(),
            resid: Default::default(),
            wr_va: Default::default(),
            wr_rkey: Default::default(),
            npkts: Default::default(),
            a_va: Default::default(),
            plen3: Default::default(),
            pmtu3: Default::default(),
            fo3: Default::default(),
            plen4: Default::default(),
            va_next4: Default::default(),
            off_next4: Default::default(),
            resid_next4: Default::default(),
            msn1_4: Default::default(),
            cred_m1_4: Default::default(),
            cred_p4: Default::default(),
            ack_m1_4: Default::default(),
            rom_req: opcode_rom(|c| {
                rc_req_kind(
                    c,
                    &[
                        OpKind::Send,
                        OpKind::Write,
                        OpKind::ReadRequest,
                        OpKind::CompareSwap,
                        OpKind::FetchAdd,
                    ],
                )
            }),
            rom_rc: opcode_rom(|c| rc_info(c).is_some()),
            rom_send: opcode_rom(|c| rc_req_kind(c, &send)),
            rom_write: opcode_rom(|c| rc_req_kind(c, &[OpKind::Write])),
            rom_read: opcode_rom(|c| rc_req_kind(c, &[OpKind::ReadRequest])),
            rom_atomic: opcode_rom(|c| rc_req_kind(c, &[OpKind::CompareSwap, OpKind::FetchAdd])),
            rom_first: opcode_rom(|c| rc_pos(c, Position::First)),
            rom_middle: opcode_rom(|c| rc_pos(c, Position::Middle)),
            rom_last: opcode_rom(|c| rc_pos(c, Position::Last)),
            rom_only: opcode_rom(|c| rc_pos(c, Position::Only)),
            rom_wqe: opcode_rom(|c| rc_info(c).is_some_and(|i| i.flags() & flags::RECV_WQE != 0)),
            rom_ieth: opcode_rom(|c| {
                rc_info(c).is_some_and(|i| i.flags() & flags::INVALIDATE != 0)
            }),
            off_state: ctx_offset(&qp::state::REG, &qp::state::STATE, ST_BITS),
            off_type: ctx_offset(&qp::state::REG, &qp::state::TYPE, TY_BITS),
            off_pmtu: ctx_offset(&qp::path::REG, &qp::path::PMTU, PMTU_BITS),
            off_access: ctx_offset(&qp::access::REG, &qp::access::FLAGS, ACC_BITS),
            off_rnr: ctx_offset(&qp::timers::REG, &qp::timers::MIN_RNR_TIMER, RNR_BITS),
            off_mdra: ctx_offset(
                &qp::rd_atomic::REG,
                &qp::rd_atomic::MAX_DEST_RD_ATOMIC,
                RDA_BITS,
            ),
            off_rq_psn: ctx_offset(&qp::rq_psn::REG, &qp::rq_psn::PSN, PSN_BITS),
            off_pd: ctx_offset(&qp::pd::REG, &qp::pd::PD, PD_BITS),
            st_rtr: c(QpState::Rtr as u64),
            st_rts: c(QpState::Rts as u64),
            st_sqd: c(QpState::Sqd as u64),
            st_sqe: c(QpState::Sqe as u64),
            ty_rc: Constant::new((QpType::Rc as u64).into()),
            acc_write: a(AccessFlag::RemoteWrite),
            acc_read: a(AccessFlag::RemoteRead),
            acc_atomic: a(AccessFlag::RemoteAtomic),
            nak_seq: Constant::new((NakCode::PsnSequenceError.value() as u64).into()),
            nak_inv: Constant::new((NakCode::InvalidRequest.value() as u64).into()),
            capacity: Constant::new(CMD_CAPACITY.into()),
            dma_max: Constant::new((1u64 << 31).into()),
            c128: Constant::new(128u64.into()),
            qpn_hi: Constant::new((0xFF_FFFFu64 & !((1u64 << Q) - 1)).into()),
        }
    }
}

impl<const Q: usize> Default for RespChk<Q> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const Q: usize> Logic for RespChk<Q> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            a1,
            a1_valid,
            a2,
            a2_valid,
            a3,
            a3_valid,
            a4,
            a4_valid,
            pre3,
            pre4,
            raw3,
            st4,
            mid4,
            fw2_valid,
            fw2_qp,
            fw2_state,
            ram_we,
            ram_wa,
            ram_wd,
            s1a,
            s2a,
            s1b,
            s2b,
            fw_valid,
            fw_qp,
            fw_state,
            inflight,
            err_valid,
            err_qpn,
            hot,
            hot_hdr_drop
        );
        clock!(self, clock, ram, fifo);
        for i in 0..self.ctr.len() {
            self.ctr[i].clock.next = self.clock.val();
            self.ctr[i].clear.next = self.reset.val();
            self.ctr[i].inc.next = self.hot.q.val().get_bit(i);
        }
        self.ctr[1].inc.next = self.hot_hdr_drop.q.val();
        self.fifo.reset.next = self.reset.val();
        // ---- Accept: one item per 2 cycles; events first.
        // INIT, CLEAR (kind bit 0 clear) and the firmware's ERROR become
        // commands and need room; POST_RECV and the executor's ERROR do
        // not (the executor's ERROR must pass while its commands wait).
        self.ev_cmd.next = !self.s_ev_kind.val().get_bit(0)
            | (self.s_ev_kind.val().get_bit(1) & !self.s_ev_exec.val());
        self.s_ev_ready.next = !self.reset.val()
            & !self.a1_valid.q.val()
            & ((self.inflight.q.val() < self.capacity.val()) | !self.ev_cmd.val());
        self.s_hdr_ready.next = !self.reset.val()
            & !self.a1_valid.q.val()
            & !self.s_ev_valid.val()
            & (self.inflight.q.val() < self.capacity.val());
        self.acc_ev.next = self.s_ev_valid.val()
            & !self.reset.val()
            & !self.a1_valid.q.val()
            & ((self.inflight.q.val() < self.capacity.val()) | !self.ev_cmd.val());
        self.acc_hdr.next = self.s_hdr_valid.val()
            & !self.reset.val()
            & !self.a1_valid.q.val()
            & !self.s_ev_valid.val()
            & (self.inflight.q.val() < self.capacity.val());
        self.hdr_new.next = self.acc_hdr.val() & !self.s_hdr_drop.val();
        self.a1_valid.d.next = self.acc_ev.val() | self.hdr_new.val();
        self.a2_valid.d.next = self.a1_valid.q.val();
        self.a2.d.next = self.a1.q.val();
        if self.acc_ev.val() {
            self.a1.d.next.ev = true;
            self.a1.d.next.ev_kind = self.s_ev_kind.val();
            self.a1.d.next.ev_exec = self.s_ev_exec.val();
            self.a1.d.next.ev_count = self.s_ev_count.val();
            self.a1.d.next.qpn = self.s_ev_qpn.val();
            self.qp_rd_addr.next = bit_cast::<Q, 24>(self.s_ev_qpn.val());
        } else {
            self.a1.d.next.ev = false;
            self.a1.d.next.qpn = self.s_hdr_destqp.val();
            self.qp_rd_addr.next = bit_cast::<Q, 24>(self.s_hdr_destqp.val());
        }
        self.a1.d.next.opcode = self.s_hdr_opcode.val();
        self.a1.d.next.padcnt = self.s_hdr_padcnt.val();
        self.a1.d.next.ackreq = self.s_hdr_ackreq.val();
        self.a1.d.next.se = self.s_hdr_se.val();
        self.a1.d.next.psn = self.s_hdr_psn.val();
        self.a1.d.next.plen = self.s_hdr_payload_len.val();
        self.a1.d.next.dmalen = self.s_hdr_reth_dmalen.val();
        self.a1.d.next.swap = self.s_hdr_atomic_swap_add.val();
        self.a1.d.next.compare = self.s_hdr_atomic_compare.val();
        if self
            .rom_atomic
            .val()
            .get_bit(self.s_hdr_opcode.val().index())
        {
            self.a1.d.next.va = self.s_hdr_atomic_va.val();
            self.a1.d.next.rkey = self.s_hdr_atomic_rkey.val();
        } else {
            self.a1.d.next.va = self.s_hdr_reth_va.val();
            self.a1.d.next.rkey = self.s_hdr_reth_rkey.val();
        }
        if self.rom_ieth.val().get_bit(self.s_hdr_opcode.val().index()) {
            self.a1.d.next.imm = self.s_hdr_ieth.val();
        } else {
            self.a1.d.next.imm = self.s_hdr_immdt.val();
        }
        self.ram.read_enable.next = self.acc_ev.val() | self.hdr_new.val();
        self.ram.read_address.next = self.qp_rd_addr.val();
        self.ram.output_enable.next = self.a1_valid.q.val();
        // ---- A2: context, state (forwarded), opcode flags.
        self.c_state.next = self
            .qp_rd_data
            .val()
            .get_bits::<ST_BITS>(self.off_state.val().index());
        self.c_type.next = self
            .qp_rd_data
            .val()
            .get_bits::<TY_BITS>(self.off_type.val().index());
        self.c_pmtu.next = self
            .qp_rd_data
            .val()
            .get_bits::<PMTU_BITS>(self.off_pmtu.val().index());
        self.c_access.next = self
            .qp_rd_data
            .val()
            .get_bits::<ACC_BITS>(self.off_access.val().index());
        self.c_rnr.next = self
            .qp_rd_data
            .val()
            .get_bits::<RNR_BITS>(self.off_rnr.val().index());
        self.c_mdra.next = self
            .qp_rd_data
            .val()
            .get_bits::<RDA_BITS>(self.off_mdra.val().index());
        self.c_rq_psn.next = self
            .qp_rd_data
            .val()
            .get_bits::<PSN_BITS>(self.off_rq_psn.val().index());
        self.c_pd.next = self
            .qp_rd_data
            .val()
            .get_bits::<PD_BITS>(self.off_pd.val().index());
        self.f_req.next = self.rom_req.val().get_bit(self.a2.q.val().opcode.index());
        self.f_rc.next = self.rom_rc.val().get_bit(self.a2.q.val().opcode.index());
        self.f_send.next = self.rom_send.val().get_bit(self.a2.q.val().opcode.index());
        self.f_write.next = self.rom_write.val().get_bit(self.a2.q.val().opcode.index());
        self.f_read.next = self.rom_read.val().get_bit(self.a2.q.val().opcode.index());
        self.f_atomic.next = self
            .rom_atomic
            .val()
            .get_bit(self.a2.q.val().opcode.index());
        self.f_first.next = self.rom_first.val().get_bit(self.a2.q.val().opcode.index());
        self.f_middle.next = self
            .rom_middle
            .val()
            .get_bit(self.a2.q.val().opcode.index());
        self.f_last.next = self.rom_last.val().get_bit(self.a2.q.val().opcode.index());
        self.f_only.next = self.rom_only.val().get_bit(self.a2.q.val().opcode.index());
        self.f_wqe.next = self.rom_wqe.val().get_bit(self.a2.q.val().opcode.index());
        self.state_ok.next = (self.c_state.val() == self.st_rtr.val())
            | (self.c_state.val() == self.st_rts.val())
            | (self.c_state.val() == self.st_sqd.val())
            | (self.c_state.val() == self.st_sqe.val());
        self.pmtu.next = self.c128.val() << bit_cast::<32, PMTU_BITS>(self.c_pmtu.val());
        self.plen32.next = bit_cast::<32, 16>(self.a2.q.val().plen);
        // 4. Opcode valid: access flags, PadCnt.
        self.acc_ok.next = self.f_send.val()
            | (self.f_write.val() & (self.c_access.val() & self.acc_write.val()).any())
            | (self.f_read.val() & (self.c_access.val() & self.acc_read.val()).any())
            | (self.f_atomic.val() & (self.c_access.val() & self.acc_atomic.val()).any());
        self.pad_bad.next =
            (self.f_first.val() | self.f_middle.val()) & self.a2.q.val().padcnt.any();
        // 5. Resources.
        self.res_bad.next = (self.f_read.val() | self.f_atomic.val()) & (self.c_mdra.val() == 0);
        // 6. Length.
        self.pos_bad.next = ((self.f_first.val() | self.f_middle.val())
            & (self.plen32.val() != self.pmtu.val()))
            | (self.f_last.val()
                & ((self.plen32.val() == 0) | (self.plen32.val() > self.pmtu.val())))
            | (self.f_only.val() & (self.plen32.val() > self.pmtu.val()));
        self.dma_big.next = self.a2.q.val().dmalen > self.dma_max.val();
        self.a_va.next = self.a2.q.val().va;
        // READ: PSNs taken, ceil(len / PMTU), at least 1.
        if self.a2.q.val().dmalen == 0 {
            self.npkts.next = 1.into();
        } else {
            self.npkts.next = (self.a2.q.val().dmalen + self.pmtu.val() - 1)
                >> (bit_cast::<32, PMTU_BITS>(self.c_pmtu.val()) + 7);
        }
        self.pre3.d.next.qpn_bad = (self.a2.q.val().qpn & self.qpn_hi.val()).any();
        self.pre3.d.next.pd = self.c_pd.val();
        self.pre3.d.next.mdra = self.c_mdra.val();
        self.pre3.d.next.state_ok = self.state_ok.val();
        self.pre3.d.next.type_ok = (self.c_type.val() == self.ty_rc.val()) & self.f_rc.val();
        self.pre3.d.next.req = self.f_req.val();
        self.pre3.d.next.send = self.f_send.val();
        self.pre3.d.next.write = self.f_write.val();
        self.pre3.d.next.read = self.f_read.val();
        self.pre3.d.next.atomic = self.f_atomic.val();
        self.pre3.d.next.first = self.f_first.val();
        self.pre3.d.next.middle = self.f_middle.val();
        self.pre3.d.next.last = self.f_last.val();
        self.pre3.d.next.only = self.f_only.val();
        self.pre3.d.next.wqe = self.f_wqe.val();
        self.pre3.d.next.acc_ok = self.acc_ok.val();
        self.pre3.d.next.pad_bad = self.pad_bad.val();
        self.pre3.d.next.res_bad = self.res_bad.val();
        self.pre3.d.next.dma_big = self.dma_big.val();
        self.pre3.d.next.len_bad = self.pos_bad.val()
            | (self.f_read.val() & self.dma_big.val())
            | (self.f_atomic.val() & self.a_va.val().get_bits::<3>(0).any());
        self.pre3.d.next.pmtu = self.pmtu.val();
        self.pre3.d.next.rnr_code = self.c_rnr.val();
        self.pre3.d.next.rq_psn = self.c_rq_psn.val();
        self.pre3.d.next.psn1 = self.a2.q.val().psn + 1;
        self.pre3.d.next.psn_rd = self.a2.q.val().psn + bit_cast::<24, 32>(self.npkts.val());
        self.raw3.d.next = self.ram.read_data.val();
        self.a3.d.next = self.a2.q.val();
        self.a3_valid.d.next = self.a2_valid.q.val();
        // ---- A3: the state (forwarded from the last two writes), the
        // checks and sums that depend on it.
        // Which write is this QP's newest: selects registered in A2 (two
        // copies, for the narrow fields the checks read and the wide ones).
        if self.s1a.q.val() {
            self.st.next = self.fw_state.q.val();
        } else if self.s2a.q.val() {
            self.st.next = self.fw2_state.q.val();
        } else {
            self.st.next = self.raw3.q.val();
        }
        if self.s1b.q.val() {
            self.st.next.va = self.fw_state.q.val().va;
            self.st.next.rkey = self.fw_state.q.val().rkey;
            self.st.next.resid = self.fw_state.q.val().resid;
            self.st.next.off = self.fw_state.q.val().off;
            self.st.next.msn = self.fw_state.q.val().msn;
            self.st.next.ack_psn = self.fw_state.q.val().ack_psn;
        } else if self.s2b.q.val() {
            self.st.next.va = self.fw2_state.q.val().va;
            self.st.next.rkey = self.fw2_state.q.val().rkey;
            self.st.next.resid = self.fw2_state.q.val().resid;
            self.st.next.off = self.fw2_state.q.val().off;
            self.st.next.msn = self.fw2_state.q.val().msn;
            self.st.next.ack_psn = self.fw2_state.q.val().ack_psn;
        } else {
            self.st.next.va = self.raw3.q.val().va;
            self.st.next.rkey = self.raw3.q.val().rkey;
            self.st.next.resid = self.raw3.q.val().resid;
            self.st.next.off = self.raw3.q.val().off;
            self.st.next.msn = self.raw3.q.val().msn;
            self.st.next.ack_psn = self.raw3.q.val().ack_psn;
        }
        self.plen3.next = bit_cast::<32, 16>(self.a3.q.val().plen);
        self.dpsn.next = self.a3.q.val().psn - self.st.val().epsn;
        self.mid4.d.next.ahead = self.dpsn.val().any() & !self.dpsn.val().get_bit(23);
        self.mid4.d.next.behind = self.dpsn.val().get_bit(23);
        self.mid4.d.next.drop_state =
            !self.pre3.q.val().state_ok | !self.st.val().live | self.st.val().err;
        // 3. Opcode sequence.
        if self.st.val().cur == 0 {
            self.seq_ok.next = self.pre3.q.val().first | self.pre3.q.val().only;
        } else if self.st.val().cur == 1 {
            self.seq_ok.next =
                self.pre3.q.val().send & (self.pre3.q.val().middle | self.pre3.q.val().last);
        } else {
            self.seq_ok.next =
                self.pre3.q.val().write & (self.pre3.q.val().middle | self.pre3.q.val().last);
        }
        self.mid4.d.next.seq_ok = self.seq_ok.val();
        // 5. Receive credits.
        self.mid4.d.next.rnr = self.pre3.q.val().wqe & (self.st.val().credits == 0);
        // 6. WRITE residual.
        self.fo3.next = self.pre3.q.val().first | self.pre3.q.val().only;
        if self.fo3.val() {
            self.resid.next = self.a3.q.val().dmalen;
            self.wr_va.next = self.a3.q.val().va;
            self.wr_rkey.next = self.a3.q.val().rkey;
        } else {
            self.resid.next = self.st.val().resid;
            self.wr_va.next = self.st.val().va;
            self.wr_rkey.next = self.st.val().rkey;
        }
        self.pmtu3.next = self.pre3.q.val().pmtu;
        self.mid4.d.next.len_bad = self.pre3.q.val().len_bad
            | (self.pre3.q.val().write
                & ((self.fo3.val() & self.pre3.q.val().dma_big)
                    | ((self.pre3.q.val().first | self.pre3.q.val().middle)
                        & (self.resid.val() <= self.pmtu3.val()))
                    | ((self.pre3.q.val().last | self.pre3.q.val().only)
                        & (self.plen3.val() != self.resid.val()))));
        self.mid4.d.next.wr_va = self.wr_va.val();
        self.mid4.d.next.wr_rkey = self.wr_rkey.val();
        self.mid4.d.next.resid = self.resid.val();
        self.st4.d.next = self.st.val();
        self.pre4.d.next = self.pre3.q.val();
        self.a4.d.next = self.a3.q.val();
        self.a4_valid.d.next = self.a3_valid.q.val();
        // ---- A4: the decision, the state written back, the command.
        self.plen4.next = bit_cast::<32, 16>(self.a4.q.val().plen);
        self.va_next4.next = self.mid4.q.val().wr_va + bit_cast::<64, 16>(self.a4.q.val().plen);
        if self.pre4.q.val().first | self.pre4.q.val().only {
            self.off_next4.next = self.plen4.val();
        } else {
            self.off_next4.next = self.st4.q.val().off + self.plen4.val();
        }
        self.resid_next4.next = self.mid4.q.val().resid - self.plen4.val();
        self.msn1_4.next = self.st4.q.val().msn + 1;
        self.cred_m1_4.next = self.st4.q.val().credits - 1;
        self.cred_p4.next =
            self.st4.q.val().credits + bit_cast::<CREDIT_BITS, 16>(self.a4.q.val().ev_count);
        self.ack_m1_4.next = self.st4.q.val().ack_psn - 1;
        self.ns.next = self.st4.q.val();
        self.wr.next = false;
        self.out.next = false;
        self.hotv.next = 0.into();
        self.to_err.next = false;
        self.cmd.next.qpn = self.a4.q.val().qpn;
        self.cmd.next.kind = 4.into(); // CMD_DROP
        self.cmd.next.code = 0.into();
        self.cmd.next.opcode = self.a4.q.val().opcode;
        self.cmd.next.psn = self.a4.q.val().psn;
        self.cmd.next.msn = self.st4.q.val().msn;
        self.cmd.next.ack_req = self.a4.q.val().ackreq;
        self.cmd.next.se = self.a4.q.val().se;
        self.cmd.next.plen = self.a4.q.val().plen;
        self.cmd.next.va = self.a4.q.val().va;
        self.cmd.next.rkey = self.a4.q.val().rkey;
        self.cmd.next.len = self.a4.q.val().dmalen;
        self.cmd.next.imm = self.a4.q.val().imm;
        self.cmd.next.swap = self.a4.q.val().swap;
        self.cmd.next.compare = self.a4.q.val().compare;
        self.cmd.next.off = self.st4.q.val().off;
        self.cmd.next.ack_psn = self.ack_m1_4.val();
        self.cmd.next.pd = self.pre4.q.val().pd;
        self.cmd.next.pmtu = bit_cast::<16, 32>(self.pre4.q.val().pmtu);
        self.cmd.next.mdra = self.pre4.q.val().mdra;
        if self.a4.q.val().ev {
            self.wr.next = true;
            if self.a4.q.val().ev_kind == 0 {
                // EV_INIT
                self.out.next = true;
                self.cmd.next.kind = 5.into(); // CMD_RESET
                self.ns.next.live = true;
                self.ns.next.err = false;
                self.ns.next.epsn = self.pre4.q.val().rq_psn;
                self.ns.next.ack_psn = self.pre4.q.val().rq_psn;
                self.ns.next.msn = 0.into();
                self.ns.next.nak_sent = false;
                self.ns.next.cur = 0.into();
            } else if self.a4.q.val().ev_kind == 1 {
                // EV_POST_RECV
                if !self.st4.q.val().err {
                    self.ns.next.credits = self.cred_p4.val();
                }
            } else if self.a4.q.val().ev_kind == 2 {
                // EV_CLEAR
                self.out.next = true;
                self.cmd.next.kind = 5.into(); // CMD_RESET
                self.ns.next.live = false;
                self.ns.next.err = false;
                self.ns.next.credits = 0.into();
                self.ns.next.cur = 0.into();
                self.ns.next.nak_sent = false;
            } else {
                // EV_ERROR: the firmware's flushes the receive queue.
                self.out.next = !self.a4.q.val().ev_exec;
                self.cmd.next.kind = 6.into(); // CMD_FLUSH
                self.ns.next.err = true;
                self.ns.next.credits = 0.into();
                self.ns.next.cur = 0.into();
            }
        } else {
            self.out.next = true;
            if self.pre4.q.val().qpn_bad {
                self.cmd.next.code = 1.into(); // DROP_QPN
                self.hotv.next = 4.into();
            } else if self.mid4.q.val().drop_state {
                self.cmd.next.code = 2.into(); // DROP_STATE
                self.hotv.next = 8.into();
            } else if !self.pre4.q.val().type_ok {
                self.cmd.next.code = 3.into(); // DROP_TYPE
                self.hotv.next = 16.into();
            } else if !self.pre4.q.val().req {
                self.cmd.next.code = 4.into(); // DROP_RESPONSE
                self.hotv.next = 32.into();
            } else if self.mid4.q.val().ahead {
                // Ahead: one sequence NAK, then silence.
                if self.st4.q.val().nak_sent {
                    self.cmd.next.code = 5.into(); // DROP_OUT_OF_SEQ
                    self.hotv.next = 64.into();
                } else {
                    self.wr.next = true;
                    self.ns.next.nak_sent = true;
                    self.cmd.next.kind = 2.into(); // CMD_NAK
                    self.cmd.next.code = self.nak_seq.val();
                    self.cmd.next.psn = self.st4.q.val().epsn;
                    self.hotv.next = 256.into();
                }
            } else if self.mid4.q.val().behind {
                self.cmd.next.kind = 1.into(); // CMD_DUPLICATE
                self.hotv.next = 128.into();
            } else {
                self.wr.next = true;
                self.ns.next.nak_sent = false;
                if !self.mid4.q.val().seq_ok {
                    self.to_err.next = true;
                    self.hotv.next = 512.into();
                } else if !self.pre4.q.val().acc_ok {
                    self.to_err.next = true;
                    self.hotv.next = 1024.into();
                } else if self.pre4.q.val().pad_bad {
                    self.to_err.next = true;
                    self.hotv.next = 2048.into();
                } else if self.pre4.q.val().res_bad {
                    self.to_err.next = true;
                    self.hotv.next = 4096.into();
                } else if self.mid4.q.val().rnr {
                    // As rxe (the model's default): `nak_sent` stays clear,
                    // so the first packet behind the RNR-NAKed one gets one
                    // PSN sequence NAK (the requester ignores it while it
                    // waits out the RNR timer).
                    self.cmd.next.kind = 3.into(); // CMD_RNR_NAK
                    self.cmd.next.code = self.pre4.q.val().rnr_code;
                    self.hotv.next = 16384.into();
                } else if self.mid4.q.val().len_bad {
                    self.to_err.next = true;
                    self.hotv.next = 8192.into();
                } else {
                    // Execute.
                    self.hotv.next = 1.into();
                    self.cmd.next.kind = 0.into(); // CMD_EXECUTE
                    self.ns.next.epsn = self.pre4.q.val().psn1;
                    self.ns.next.ack_psn = self.pre4.q.val().psn1;
                    if self.pre4.q.val().last | self.pre4.q.val().only {
                        self.ns.next.msn = self.msn1_4.val();
                        self.ns.next.cur = 0.into();
                    }
                    if self.pre4.q.val().send {
                        if self.pre4.q.val().first | self.pre4.q.val().only {
                            self.ns.next.credits = self.cred_m1_4.val();
                            self.cmd.next.off = 0.into();
                            self.ns.next.off = self.off_next4.val();
                        } else {
                            self.ns.next.off = self.off_next4.val();
                        }
                        if self.pre4.q.val().first {
                            self.ns.next.cur = 1.into();
                        }
                    }
                    if self.pre4.q.val().write {
                        self.cmd.next.va = self.mid4.q.val().wr_va;
                        self.cmd.next.rkey = self.mid4.q.val().wr_rkey;
                        self.cmd.next.len = self.mid4.q.val().resid;
                        self.ns.next.va = self.va_next4.val();
                        self.ns.next.rkey = self.mid4.q.val().wr_rkey;
                        self.ns.next.resid = self.resid_next4.val();
                        if self.pre4.q.val().first {
                            self.ns.next.cur = 2.into();
                        }
                        if self.pre4.q.val().wqe {
                            self.ns.next.credits = self.cred_m1_4.val();
                        }
                    }
                    if self.pre4.q.val().read {
                        self.ns.next.epsn = self.pre4.q.val().psn_rd;
                        self.ns.next.ack_psn = self.st4.q.val().ack_psn;
                        self.ns.next.msn = self.msn1_4.val();
                    }
                    if self.pre4.q.val().atomic {
                        self.cmd.next.len = 8.into();
                        self.ns.next.msn = self.msn1_4.val();
                    }
                    self.cmd.next.msn = self.ns.val().msn;
                }
                if self.to_err.val() {
                    self.cmd.next.kind = 2.into(); // CMD_NAK
                    self.cmd.next.code = self.nak_inv.val();
                    self.ns.next.err = true;
                    self.ns.next.credits = 0.into();
                    self.ns.next.cur = 0.into();
                }
            }
        }
        if !self.a4_valid.q.val() {
            self.wr.next = false;
            self.out.next = false;
            self.hotv.next = 0.into();
            self.to_err.next = false;
        }
        self.hot_hdr_drop.d.next = self.acc_hdr.val() & self.s_hdr_drop.val();
        self.hot.d.next = self.hotv.val();
        // The RAM takes the write a cycle later, from registers (its blocks
        // sit apart); the forwarding registers cover it meanwhile.
        self.ram_we.d.next = self.wr.val();
        self.ram_wa.d.next = bit_cast::<Q, 24>(self.a4.q.val().qpn);
        self.ram_wd.d.next = self.ns.val();
        self.ram.write_enable.next = self.ram_we.q.val();
        self.ram.write_address.next = self.ram_wa.q.val();
        self.ram.write_data.next = self.ram_wd.q.val();
        if self.wr.val() {
            self.fw_valid.d.next = true;
            self.fw_qp.d.next = bit_cast::<Q, 24>(self.a4.q.val().qpn);
            self.fw_state.d.next = self.ns.val();
            self.fw2_valid.d.next = self.fw_valid.q.val();
            self.fw2_qp.d.next = self.fw_qp.q.val();
            self.fw2_state.d.next = self.fw_state.q.val();
        }
        // The item in A2 reads its state in A3: its newest write is the one
        // this A4 item makes now (if to its QP), else the forwarding
        // registers as they will be after this edge.
        self.m_a4.next = self.a4_valid.q.val()
            & (bit_cast::<Q, 24>(self.a4.q.val().qpn) == bit_cast::<Q, 24>(self.a2.q.val().qpn));
        self.m_f1.next =
            self.fw_valid.q.val() & (self.fw_qp.q.val() == bit_cast::<Q, 24>(self.a2.q.val().qpn));
        self.m_f2.next = self.fw2_valid.q.val()
            & (self.fw2_qp.q.val() == bit_cast::<Q, 24>(self.a2.q.val().qpn));
        if self.wr.val() {
            self.s1a.d.next = self.m_a4.val();
            self.s2a.d.next = self.m_f1.val();
            self.s1b.d.next = self.m_a4.val();
            self.s2b.d.next = self.m_f1.val();
        } else {
            self.s1a.d.next = self.m_f1.val();
            self.s2a.d.next = self.m_f2.val();
            self.s1b.d.next = self.m_f1.val();
            self.s2b.d.next = self.m_f2.val();
        }
        self.err_valid.d.next = self.to_err.val();
        self.err_qpn.d.next = self.a4.q.val().qpn;
        self.m_qp_error_valid.next = self.err_valid.q.val();
        self.m_qp_error_qpn.next = self.err_qpn.q.val();
        // ---- Output FIFO.
        self.fifo.write.next = self.out.val();
        self.fifo.data_in.next = self.cmd.val();
        self.m_cmd_valid.next = !self.fifo.empty.val();
        self.cmd_take.next = !self.fifo.empty.val() & self.m_cmd_ready.val();
        self.fifo.read.next = self.cmd_take.val();
        // Every header and every INIT/CLEAR/firmware-ERROR event becomes
        // a command.
        self.item_in.next = self.hdr_new.val() | (self.acc_ev.val() & self.ev_cmd.val());
        if self.item_in.val() & !self.cmd_take.val() {
            self.inflight.d.next = self.inflight.q.val() + 1;
        } else if !self.item_in.val() & self.cmd_take.val() {
            self.inflight.d.next = self.inflight.q.val() - 1;
        }
        if self.reset.val() {
            self.a1_valid.d.next = false;
            self.a2_valid.d.next = false;
            self.a3_valid.d.next = false;
            self.a4_valid.d.next = false;
            self.fw_valid.d.next = false;
            self.fw2_valid.d.next = false;
            self.s1a.d.next = false;
            self.ram_we.d.next = false;
            self.s2a.d.next = false;
            self.s1b.d.next = false;
            self.s2b.d.next = false;
            self.inflight.d.next = 0.into();
            self.err_valid.d.next = false;
            self.hot.d.next = 0.into();
            self.hot_hdr_drop.d.next = false;
        }
        self.m_cmd_qpn.next = self.fifo.data_out.val().qpn;
        self.m_cmd_kind.next = self.fifo.data_out.val().kind;
        self.m_cmd_code.next = self.fifo.data_out.val().code;
        self.m_cmd_opcode.next = self.fifo.data_out.val().opcode;
        self.m_cmd_psn.next = self.fifo.data_out.val().psn;
        self.m_cmd_msn.next = self.fifo.data_out.val().msn;
        self.m_cmd_ack_req.next = self.fifo.data_out.val().ack_req;
        self.m_cmd_se.next = self.fifo.data_out.val().se;
        self.m_cmd_plen.next = self.fifo.data_out.val().plen;
        self.m_cmd_va.next = self.fifo.data_out.val().va;
        self.m_cmd_rkey.next = self.fifo.data_out.val().rkey;
        self.m_cmd_len.next = self.fifo.data_out.val().len;
        self.m_cmd_imm.next = self.fifo.data_out.val().imm;
        self.m_cmd_swap.next = self.fifo.data_out.val().swap;
        self.m_cmd_compare.next = self.fifo.data_out.val().compare;
        self.m_cmd_off.next = self.fifo.data_out.val().off;
        self.m_cmd_ack_psn.next = self.fifo.data_out.val().ack_psn;
        self.m_cmd_pd.next = self.fifo.data_out.val().pd;
        self.m_cmd_pmtu.next = self.fifo.data_out.val().pmtu;
        self.m_cmd_mdra.next = self.fifo.data_out.val().mdra;
        self.cnt_execute.next = self.ctr[0].count.val();
        self.cnt_hdr_drop.next = self.ctr[1].count.val();
        self.cnt_drop_qpn.next = self.ctr[2].count.val();
        self.cnt_drop_state.next = self.ctr[3].count.val();
        self.cnt_drop_type.next = self.ctr[4].count.val();
        self.cnt_drop_response.next = self.ctr[5].count.val();
        self.cnt_drop_out_of_seq.next = self.ctr[6].count.val();
        self.cnt_duplicate.next = self.ctr[7].count.val();
        self.cnt_nak_psn_seq.next = self.ctr[8].count.val();
        self.cnt_nak_op_seq.next = self.ctr[9].count.val();
        self.cnt_nak_op_invalid.next = self.ctr[10].count.val();
        self.cnt_nak_padcnt.next = self.ctr[11].count.val();
        self.cnt_nak_resource.next = self.ctr[12].count.val();
        self.cnt_nak_length.next = self.ctr[13].count.val();
        self.cnt_rnr_nak.next = self.ctr[14].count.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resp_chk_synthesizes() {
        let mut uut = RespChkSmall::new();
        uut.connect_all();
        yosys_validate("resp_chk_small", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    #[should_panic(expected = "QP index bits")]
    fn parameters_are_checked() {
        let _ = RespChk::<15>::new();
    }
}
