//! `resp_exec`: the RC responder's executor. It takes `resp_chk`'s
//! commands (one per request header, in PSN order, plus `CMD_RESET`
//! markers) and does what each means, in the order and with the outcomes
//! of `roce_transport`'s responder (`transport/src/responder.rs`):
//!
//! - **Protection** through `mr_tlb` (`m_mr_req` / `s_mr_grant`): R_Key,
//!   the QP's PD (from the context, carried by the command), access and
//!   bounds. A WRITE's FIRST/ONLY packet is checked over the whole RETH
//!   range: its payload request covers the first byte, and a one-byte
//!   *probe* of the range's last byte covers the end (a region is
//!   contiguous, so first and last byte inside = all inside; a range that
//!   wraps past 2^64 is refused without asking), so a 2 GiB WRITE costs
//!   two table requests, not one per page. A refusal: remote access
//!   error NAK (the PSN, the MSN before the packet), the payload
//!   discarded, the QP moved to Error (`m_err`), nothing written.
//! - **Memory** through two DMA engines outside this block (`dma_wr`,
//!   `dma_rd`: `m_wr_cmd` / `s_wr_done`, `m_rd_cmd` / `s_rd`): payloads
//!   are written chunk by chunk as `mr_tlb` grants them; READ responses
//!   are read chunk by chunk, cut at PMTU; an atomic reads its 8 bytes,
//!   and writes the new value back when it changes. A memory READ or an
//!   atomic waits until every earlier write has its AXI response, so it
//!   sees them; an ACK, a completion or an atomic's answer waits for the
//!   writes before it.
//! - **Receive WQEs** (`m_rq_req` / `s_rq_resp`, served by the host
//!   interface): SEND FIRST/ONLY and WRITE with immediate pop the next
//!   one; SEND MIDDLE/LAST ask for the current one. Its one SGE (key, VA,
//!   length) is checked through `mr_tlb` with the QP's PD and local write;
//!   a payload past its end is an invalid-request NAK (the model's
//!   `LocLenErr`), a refused SGE a remote operational error NAK.
//! - **Completions** (`m_rcqe`): SEND LAST/ONLY and WRITE with immediate
//!   LAST/ONLY, after their data; SEND with invalidate first asks for the
//!   invalidation (`m_inv` / `s_inv_done`, to `mr_tlb`'s command port)
//!   and NAKs an invalid request when it is refused. A receive WQE in
//!   use when the QP fails completes with an error status.
//! - **Responder resources**: the last `max_dest_rd_atomic` READs and
//!   atomics per QP (up to `roce_regs::MAX_DEST_RD_ATOMIC`), in block
//!   RAM. A duplicate READ inside one is replayed from its PSN (FIRST or
//!   ONLY only if it starts the response); a duplicate atomic gets its
//!   saved original value and is not executed again; otherwise dropped.
//! - **Responses** (`m_rsp`, to `tx_arb`): ACK, NAK, RNR NAK, READ
//!   RESPONSE FIRST/MIDDLE/LAST/ONLY with their payload on `m_rsp_pay`
//!   (the `dma_rd` stream passed through), ATOMIC ACK, one command at a
//!   time, so a QP's responses never overtake each other.
//!
//! - **Flush**: when a QP goes to Error (this block's own remote access
//!   or operational error, `resp_chk`'s fatal NAK, the firmware's
//!   `CMD_FLUSH`), an `RCQE_FLUSH` on `m_rcqe` tells the host interface
//!   to complete the QP's remaining receive WQEs with a flush error (one
//!   owed at a time, sent when `m_rcqe` is free).
//!
//! Commands are executed one at a time (a state machine); a QP this
//! block moved to Error has every later command discarded (payload
//! dropped, counted) until `CMD_RESET`.

use crate::bram::Bram;
use crate::fifo::RamQueue;
use crate::prim::Counter32;
use crate::resp_chk::{
    CMD_DROP, CMD_DUPLICATE, CMD_EXECUTE, CMD_FLUSH, CMD_NAK, CMD_RESET, CMD_RNR_NAK, PD_BITS,
    RDA_BITS,
};
use crate::stream::{check_width, StreamIn, StreamOut};
use roce_wire::aeth::Syndrome;
use roce_wire::mr::Access;
use roce_wire::opcode::{ExtKind, OpKind, Position, Transport, TABLE};
use roce_wire::NakCode;
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

/// Responder resources per QP: the register map's largest
/// `max_dest_rd_atomic`.
pub const RES_PER_QP: usize = roce_regs::MAX_DEST_RD_ATOMIC as usize;
/// Bits of a resource's index within its QP.
pub const RES_BITS: usize = RES_PER_QP.trailing_zeros() as usize;
const _: () = assert!(RES_PER_QP == 1 << RES_BITS);

/// Receive completion status on `m_rcqe_status` (the model's `WcStatus`
/// for each case; the host interface maps them into its CQE).
pub const RCQE_OK: u64 = 0;
/// The payload did not fit the receive WQE (`LocLenErr`).
pub const RCQE_LOC_LEN: u64 = 1;
/// The receive WQE's SGE was refused by `mr_tlb`, or there was none
/// (`LocQpOpErr`).
pub const RCQE_LOC_QP_OP: u64 = 2;
/// The QP failed while the WQE was in use (remote access or operational
/// error, a refused invalidation, an AXI error).
pub const RCQE_FAILED: u64 = 3;
/// Not a completion: the QP is in Error; every receive WQE not completed
/// (taken or posted, and any posted later) completes with a flush error,
/// and completions of this QP that follow are dropped (the host interface
/// flushed their WQEs), until the receive ring is restarted.
pub const RCQE_FLUSH: u64 = 4;

/// One command from `resp_chk` (its `m_cmd_*`).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct ExecCmd {
    pub qpn: Bits<24>,
    pub kind: Bits<3>,
    pub code: Bits<5>,
    pub opcode: Bits<8>,
    pub psn: Bits<24>,
    pub msn: Bits<24>,
    pub ack_req: Bit,
    /// BTH SE: a receive completion's solicited event.
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
    pub pd: Bits<PD_BITS>,
    pub pmtu: Bits<16>,
    pub mdra: Bits<RDA_BITS>,
}

/// Per-QP executor state (one word per QP).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct ExecMeta {
    /// This block moved the QP to Error: discard until `CMD_RESET`.
    pub xerr: Bit,
    /// Next resource slot, and resources kept (saturates at
    /// `RES_PER_QP`).
    pub head: Bits<4>,
    pub count: Bits<5>,
    /// The WRITE in progress's DMA length (a WRITE with immediate's
    /// completion reports it).
    pub wtotal: Bits<32>,
}

/// A responder resource.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct ResEntry {
    pub atomic: Bit,
    pub first: Bits<24>,
    pub last: Bits<24>,
    /// READ: the VA; atomic: the original value.
    pub va: Bits<64>,
    pub rkey: Bits<32>,
    pub len: Bits<32>,
}

/// A response waiting in the response queue for the writes before it to
/// be acknowledged. Beside it, per entry (rust-hdl reads no struct field
/// of a `Vec` element inside a loop): valid, `kill` (its QP was moved to
/// Error by an earlier entry's AXI error: dropped), `err` (a write it
/// covers answered with an AXI error: sent as a remote operational error
/// NAK with MSN `msnb`, and the QP moved to Error), the QPN and the fence
/// (write commands issued up to it, mod 2^16).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct RspEnt {
    /// A response (ACK, NAK, ATOMIC ACK) to send.
    pub rsp: Bit,
    /// A receive completion to send first (status, opcode, length,
    /// immediate), SEND / WRITE with immediate LAST/ONLY.
    pub cqe: Bit,
    pub cst: Bits<3>,
    pub cop: Bits<8>,
    pub clen: Bits<32>,
    pub cimm: Bits<32>,
    pub cse: Bit,
    pub opcode: Bits<8>,
    pub psn: Bits<24>,
    pub syn: Bits<8>,
    pub msn: Bits<24>,
    pub msnb: Bits<24>,
    pub data: Bits<64>,
}

/// Entries of the response queue.
pub const RSP_QUEUE: usize = 4;
/// log2 of it (the wide part's LUT RAM).
const RSP_QA: usize = 2;
const _: () = assert!(RSP_QUEUE == 1 << RSP_QA);
/// The queue's registers: one more, always empty, shifted into the last.
const RSP_ENTRIES: usize = RSP_QUEUE + 1;
const RSP_QUEUE_M1: usize = RSP_QUEUE - 1;

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum Ex {
    Idle,
    Decode,
    /// Receive WQE: ask, wait.
    RqReq,
    RqWait,
    /// WRITE FIRST/ONLY: the last byte's check.
    ProbeReq,
    ProbeWait,
    /// Payload write: the request, then one `dma_wr` command per grant.
    WrReq,
    WrGrant,
    /// After the payload: what follows it.
    WrPost,
    /// READ: request, first grant, resource, wait for writes, then per
    /// packet a response descriptor and its `dma_rd` commands.
    RdReq,
    RdFirst,
    ResWrite,
    RdWaitWr,
    RdHdr,
    RdCmd,
    /// Atomic: request, grant, wait, read, data, write back.
    AtReq,
    AtGrant,
    AtWait,
    AtRead,
    AtData,
    AtWrite,
    /// Duplicate READ/atomic: search the QP's resources.
    ScanStart,
    ScanRead,
    ScanCheck,
    /// The tail: each step runs if its flag is set.
    Tail,
    Discard,
    WrWait,
    Inv,
    InvWait,
    Cqe,
    Resp,
    /// Owe an `RCQE_FLUSH` for the command's QP.
    Flush,
    ErrEv,
    Finish,
}

/// A 256-entry opcode flag table.
fn opcode_rom(f: impl Fn(&roce_wire::opcode::OpcodeInfo) -> bool) -> Constant<Bits<256>> {
    let mut b = Bits::<256>::default();
    for i in TABLE.iter().filter(|i| i.transport == Transport::Rc) {
        if f(i) {
            b = b.replace_bit(i.code as usize, true);
        }
    }
    Constant::new(b)
}

/// The RC opcode of `kind` at `pos`, from the opcode table.
fn rc_opcode(kind: OpKind, pos: Position) -> Constant<Bits<8>> {
    let i = TABLE
        .iter()
        .find(|i| {
            i.transport == Transport::Rc
                && i.kind == kind
                && i.position == pos
                && !i.has(ExtKind::ImmDt)
                && !i.has(ExtKind::Ieth)
        })
        .unwrap_or_else(|| panic!("no RC {kind:?} {pos:?} opcode"));
    Constant::new((i.code as u64).into())
}

fn nak(code: NakCode) -> Constant<Bits<8>> {
    Constant::new((Syndrome::Nak(code).to_byte() as u64).into())
}

/// Counters, in `cnt_*` port order.
pub const COUNTERS: [&str; 8] = [
    "nak_rem_access",
    "nak_rem_op",
    "nak_inv_req",
    "read_replay",
    "atomic_replay",
    "dup_no_res",
    "drop_err",
    "axi_err",
];

/// The executor: width `W` (`K` = W/8) for the READ response stream,
/// `2^Q` QPs, `A` = Q + `RES_BITS` resource-table address bits.
#[derive(LogicBlock)]
pub struct RespExec<const W: usize, const K: usize, const Q: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // Commands (resp_chk's m_cmd_*).
    pub s_cmd_valid: Signal<In, Bit>,
    pub s_cmd_ready: Signal<Out, Bit>,
    pub s_cmd_qpn: Signal<In, Bits<24>>,
    pub s_cmd_kind: Signal<In, Bits<3>>,
    pub s_cmd_code: Signal<In, Bits<5>>,
    pub s_cmd_opcode: Signal<In, Bits<8>>,
    pub s_cmd_psn: Signal<In, Bits<24>>,
    pub s_cmd_msn: Signal<In, Bits<24>>,
    pub s_cmd_ack_req: Signal<In, Bit>,
    pub s_cmd_se: Signal<In, Bit>,
    pub s_cmd_plen: Signal<In, Bits<16>>,
    pub s_cmd_va: Signal<In, Bits<64>>,
    pub s_cmd_rkey: Signal<In, Bits<32>>,
    pub s_cmd_len: Signal<In, Bits<32>>,
    pub s_cmd_imm: Signal<In, Bits<32>>,
    pub s_cmd_swap: Signal<In, Bits<64>>,
    pub s_cmd_compare: Signal<In, Bits<64>>,
    pub s_cmd_off: Signal<In, Bits<32>>,
    pub s_cmd_ack_psn: Signal<In, Bits<24>>,
    pub s_cmd_pd: Signal<In, Bits<PD_BITS>>,
    pub s_cmd_pmtu: Signal<In, Bits<16>>,
    pub s_cmd_mdra: Signal<In, Bits<RDA_BITS>>,
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
    // Receive WQEs (the host interface).
    pub m_rq_req_valid: Signal<Out, Bit>,
    pub m_rq_req_ready: Signal<In, Bit>,
    pub m_rq_req_qpn: Signal<Out, Bits<24>>,
    pub m_rq_req_pop: Signal<Out, Bit>,
    pub s_rq_resp_valid: Signal<In, Bit>,
    pub s_rq_resp_ready: Signal<Out, Bit>,
    pub s_rq_resp_ok: Signal<In, Bit>,
    pub s_rq_resp_key: Signal<In, Bits<32>>,
    pub s_rq_resp_va: Signal<In, Bits<64>>,
    pub s_rq_resp_len: Signal<In, Bits<32>>,
    // Receive completions.
    pub m_rcqe_valid: Signal<Out, Bit>,
    pub m_rcqe_ready: Signal<In, Bit>,
    pub m_rcqe_qpn: Signal<Out, Bits<24>>,
    pub m_rcqe_status: Signal<Out, Bits<3>>,
    pub m_rcqe_opcode: Signal<Out, Bits<8>>,
    pub m_rcqe_len: Signal<Out, Bits<32>>,
    pub m_rcqe_imm: Signal<Out, Bits<32>>,
    /// The completed message's last packet had SE (solicited event).
    pub m_rcqe_se: Signal<Out, Bit>,
    // Invalidation (SEND with invalidate).
    pub m_inv_valid: Signal<Out, Bit>,
    pub m_inv_ready: Signal<In, Bit>,
    pub m_inv_key: Signal<Out, Bits<32>>,
    pub s_inv_done_valid: Signal<In, Bit>,
    pub s_inv_done_err: Signal<In, Bit>,
    // dma_wr.
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
    // dma_rd.
    pub m_rd_cmd_valid: Signal<Out, Bit>,
    pub m_rd_cmd_ready: Signal<In, Bit>,
    pub m_rd_cmd_addr: Signal<Out, Bits<64>>,
    pub m_rd_cmd_len: Signal<Out, Bits<32>>,
    pub m_rd_cmd_last: Signal<Out, Bit>,
    pub s_rd: StreamIn<W, K>,
    // Responses (to tx_arb).
    pub m_rsp_valid: Signal<Out, Bit>,
    pub m_rsp_ready: Signal<In, Bit>,
    pub m_rsp_qpn: Signal<Out, Bits<24>>,
    pub m_rsp_opcode: Signal<Out, Bits<8>>,
    pub m_rsp_psn: Signal<Out, Bits<24>>,
    pub m_rsp_payload_len: Signal<Out, Bits<16>>,
    pub m_rsp_syndrome: Signal<Out, Bits<8>>,
    pub m_rsp_msn: Signal<Out, Bits<24>>,
    pub m_rsp_atomic_ack_data: Signal<Out, Bits<64>>,
    pub m_rsp_pay: StreamOut<W, K>,
    // QP moved to Error (to resp_chk's EV_ERROR).
    pub m_err_valid: Signal<Out, Bit>,
    pub m_err_ready: Signal<In, Bit>,
    pub m_err_qpn: Signal<Out, Bits<24>>,
    // Counters (`COUNTERS`).
    pub cnt_nak_rem_access: Signal<Out, Bits<32>>,
    pub cnt_nak_rem_op: Signal<Out, Bits<32>>,
    pub cnt_nak_inv_req: Signal<Out, Bits<32>>,
    pub cnt_read_replay: Signal<Out, Bits<32>>,
    pub cnt_atomic_replay: Signal<Out, Bits<32>>,
    pub cnt_dup_no_res: Signal<Out, Bits<32>>,
    pub cnt_drop_err: Signal<Out, Bits<32>>,
    pub cnt_axi_err: Signal<Out, Bits<32>>,
    // State.
    state: DFF<Ex>,
    c: DFF<ExecCmd>,
    m: DFF<ExecMeta>,
    f_send: DFF<Bit>,
    f_write: DFF<Bit>,
    f_read: DFF<Bit>,
    f_atomic: DFF<Bit>,
    f_fadd: DFF<Bit>,
    f_first: DFF<Bit>,
    f_last: DFF<Bit>,
    f_imm: DFF<Bit>,
    f_inv: DFF<Bit>,
    msn_before: DFF<Bits<24>>,
    // The tail's steps.
    t_disc: DFF<Bit>,
    t_wait: DFF<Bit>,
    t_inv: DFF<Bit>,
    t_cqe: DFF<Bit>,
    t_rsp: DFF<Bit>,
    t_fail: DFF<Bit>,
    /// The QP's receive queue to flush (`RCQE_FLUSH` owed).
    t_flush: DFF<Bit>,
    cqe_status: DFF<Bits<3>>,
    cqe_len: DFF<Bits<32>>,
    rsp_opcode: DFF<Bits<8>>,
    rsp_psn: DFF<Bits<24>>,
    rsp_syn: DFF<Bits<8>>,
    rsp_msn: DFF<Bits<24>>,
    rsp_data: DFF<Bits<64>>,
    // Memory requests.
    req_key: DFF<Bits<32>>,
    req_va: DFF<Bits<64>>,
    req_len: DFF<Bits<32>>,
    req_acc: DFF<Bits<4>>,
    wqe_len: DFF<Bits<32>>,
    wr_pend: DFF<Bits<8>>,
    // The response queue: write commands issued and completed (mod 2^16),
    // an AXI error not yet given to an entry, a queue error's m_err, the
    // command in hand belongs to a QP the queue moved to Error, the last
    // queue error (for the error RAM's read in the same cycle).
    wr_iss: DFF<Bits<16>>,
    wr_dn: DFF<Bits<16>>,
    err_pend: DFF<Bit>,
    cl_pend: DFF<Bit>,
    cl_qpn: DFF<Bits<24>>,
    /// An `RCQE_FLUSH` owed for QP `fl_qpn`.
    fl_pend: DFF<Bit>,
    fl_qpn: DFF<Bits<24>>,
    c_dead: DFF<Bit>,
    xw_v: DFF<Bit>,
    xw_qpn: DFF<Bits<24>>,
    /// The head's receive completion is out.
    h_cqd: DFF<Bit>,
    /// The command taken in Finish is of the QP whose word Finish wrote.
    mfwd: DFF<Bit>,
    /// The entries' wide part, in LUT RAM (written and popped with the
    /// shifted registers; readable two cycles after its push: `erdy`).
    qbody: RamQueue<RspEnt, RSP_QA>,
    erdy: Vec<DFF<Bit>>,
    ev: Vec<DFF<Bit>>,
    ekill: Vec<DFF<Bit>>,
    eerr: Vec<DFF<Bit>>,
    eqpn: Vec<DFF<Bits<24>>>,
    efence: Vec<DFF<Bits<16>>>,
    qerr: Bram<Bit, Q>,
    rd_pend: DFF<Bits<8>>,
    rd_to_me: DFF<Bit>,
    res_new: DFF<Bit>,
    ch_pa: DFF<Bits<64>>,
    ch_left: DFF<Bits<32>>,
    rd_left: DFF<Bits<32>>,
    pkt_left: DFF<Bits<32>>,
    rd_psn: DFF<Bits<24>>,
    rd_first: DFF<Bit>,
    at_pa: DFF<Bits<64>>,
    orig: DFF<Bits<64>>,
    scan_i: DFF<Bits<5>>,
    scan_n: DFF<Bits<5>>,
    hot: DFF<Bits<8>>,
    meta: Bram<ExecMeta, Q>,
    res: Bram<ResEntry, A>,
    ctr: Vec<Counter32>,
    // Combinational.
    take: Signal<Local, Bit>,
    wr_go: Signal<Local, Bit>,
    rd_go: Signal<Local, Bit>,
    rd_end: Signal<Local, Bit>,
    probe_end: Signal<Local, Bits<65>>,
    lenm1: Signal<Local, Bits<32>>,
    npk_m1: Signal<Local, Bits<32>>,
    rd_lastpkt: Signal<Local, Bit>,
    rd_plen: Signal<Local, Bits<32>>,
    take_len: Signal<Local, Bits<32>>,
    scan_slot: Signal<Local, Bits<4>>,
    e: Signal<Local, ResEntry>,
    e_in: Signal<Local, Bit>,
    e_inside: Signal<Local, Bit>,
    at_new: Signal<Local, Bits<64>>,
    at_change: Signal<Local, Bit>,
    hotv: Signal<Local, Bits<8>>,
    ge_s: Vec<Signal<Local, Bit>>,
    fdist: Vec<Signal<Local, Bits<16>>>,
    dist0: Signal<Local, Bits<16>>,
    dn_eff: Signal<Local, Bits<16>>,
    ehit: Vec<Signal<Local, Bit>>,
    xhit: Vec<Signal<Local, Bit>>,
    pv: Vec<Signal<Local, Bit>>,
    pfree: Vec<Signal<Local, Bit>>,
    done_err: Signal<Local, Bit>,
    anyhit: Signal<Local, Bit>,
    reached0: Signal<Local, Bit>,
    qpop: Signal<Local, Bit>,
    qpush: Signal<Local, Bit>,
    claim: Signal<Local, Bit>,
    fsm_claim: Signal<Local, Bit>,
    /// `m_rcqe` carries a completion this cycle (the FSM's or the
    /// queue head's).
    rc_used: Signal<Local, Bit>,
    fsm_qw: Signal<Local, Bit>,
    q_empty: Signal<Local, Bit>,
    q_room: Signal<Local, Bit>,
    xerr_now: Signal<Local, Bit>,
    mrd: Signal<Local, ExecMeta>,
    dfast: Signal<Local, Bit>,
    cqe_len_now: Signal<Local, Bits<32>>,
    dresp: Signal<Local, Bit>,
    ent_in: Signal<Local, RspEnt>,
    in_err: Signal<Local, Bit>,
    in_fence: Signal<Local, Bits<16>>,
    // Constants.
    rom_send: Constant<Bits<256>>,
    rom_write: Constant<Bits<256>>,
    rom_read: Constant<Bits<256>>,
    rom_atomic: Constant<Bits<256>>,
    rom_fadd: Constant<Bits<256>>,
    rom_first: Constant<Bits<256>>,
    rom_last: Constant<Bits<256>>,
    rom_imm: Constant<Bits<256>>,
    rom_inv: Constant<Bits<256>>,
    op_ack: Constant<Bits<8>>,
    op_atomic_ack: Constant<Bits<8>>,
    op_rr_first: Constant<Bits<8>>,
    op_rr_middle: Constant<Bits<8>>,
    op_rr_last: Constant<Bits<8>>,
    op_rr_only: Constant<Bits<8>>,
    syn_ack: Constant<Bits<8>>,
    syn_nak: Constant<Bits<8>>,
    syn_rnr: Constant<Bits<8>>,
    syn_inv_req: Constant<Bits<8>>,
    syn_rem_access: Constant<Bits<8>>,
    syn_rem_op: Constant<Bits<8>>,
    acc_local_write: Constant<Bits<4>>,
    acc_remote_write: Constant<Bits<4>>,
    acc_remote_read: Constant<Bits<4>>,
    acc_remote_atomic: Constant<Bits<4>>,
    k_execute: Constant<Bits<3>>,
    k_duplicate: Constant<Bits<3>>,
    k_nak: Constant<Bits<3>>,
    k_rnr_nak: Constant<Bits<3>>,
    k_drop: Constant<Bits<3>>,
    k_reset: Constant<Bits<3>>,
    k_flush: Constant<Bits<3>>,
    st_ok: Constant<Bits<3>>,
    st_loc_len: Constant<Bits<3>>,
    st_loc_qp_op: Constant<Bits<3>>,
    st_failed: Constant<Bits<3>>,
    st_flush: Constant<Bits<3>>,
    res_max: Constant<Bits<5>>,
}

/// 1024 QPs (the transport's goal), W = 64..512.
pub type RespExec64 = RespExec<64, 8, 10, 14>;
pub type RespExec128 = RespExec<128, 16, 10, 14>;
pub type RespExec256 = RespExec<256, 32, 10, 14>;
pub type RespExec512 = RespExec<512, 64, 10, 14>;
/// 64 QPs (simulation builds).
pub type RespExecSmall64 = RespExec<64, 8, 6, 10>;

fn acc(a: Access) -> Constant<Bits<4>> {
    Constant::new((a.bits() as u64).into())
}

fn kind(k: u64) -> Constant<Bits<3>> {
    Constant::new(k.into())
}

impl<const W: usize, const K: usize, const Q: usize, const A: usize> RespExec<W, K, Q, A> {
    pub fn new() -> Self {
        check_width("resp_exec", W, K);
        assert!(
            (1..=14).contains(&Q),
            "resp_exec: QP bits {Q} out of 1..=14"
        );
        assert_eq!(A, Q + RES_BITS, "resp_exec: A must be Q + RES_BITS");
        let rc = |i: &roce_wire::opcode::OpcodeInfo, k: &[OpKind]| k.contains(&i.kind);
        let mut ctr = Vec::new();
        for _ in COUNTERS {
            ctr.push(Counter32::new());
        }
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_cmd_valid: Default::default(),
            s_cmd_ready: Default::default(),
            s_cmd_qpn: Default::default(),
            s_cmd_kind: Default::default(),
            s_cmd_code: Default::default(),
            s_cmd_opcode: Default::default(),
            s_cmd_psn: Default::default(),
            s_cmd_msn: Default::default(),
            s_cmd_ack_req: Default::default(),
            s_cmd_se: Default::default(),
            s_cmd_plen: Default::default(),
            s_cmd_va: Default::default(),
            s_cmd_rkey: Default::default(),
            s_cmd_len: Default::default(),
            s_cmd_imm: Default::default(),
            s_cmd_swap: Default::default(),
            s_cmd_compare: Default::default(),
            s_cmd_off: Default::default(),
            s_cmd_ack_psn: Default::default(),
            s_cmd_pd: Default::default(),
            s_cmd_pmtu: Default::default(),
            s_cmd_mdra: Default::default(),
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
            m_rq_req_valid: Default::default(),
            m_rq_req_ready: Default::default(),
            m_rq_req_qpn: Default::default(),
            m_rq_req_pop: Default::default(),
            s_rq_resp_valid: Default::default(),
            s_rq_resp_ready: Default::default(),
            s_rq_resp_ok: Default::default(),
            s_rq_resp_key: Default::default(),
            s_rq_resp_va: Default::default(),
            s_rq_resp_len: Default::default(),
            m_rcqe_valid: Default::default(),
            m_rcqe_ready: Default::default(),
            m_rcqe_qpn: Default::default(),
            m_rcqe_status: Default::default(),
            m_rcqe_opcode: Default::default(),
            m_rcqe_len: Default::default(),
            m_rcqe_imm: Default::default(),
            m_rcqe_se: Default::default(),
            m_inv_valid: Default::default(),
            m_inv_ready: Default::default(),
            m_inv_key: Default::default(),
            s_inv_done_valid: Default::default(),
            s_inv_done_err: Default::default(),
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
            m_rd_cmd_valid: Default::default(),
            m_rd_cmd_ready: Default::default(),
            m_rd_cmd_addr: Default::default(),
            m_rd_cmd_len: Default::default(),
            m_rd_cmd_last: Default::default(),
            s_rd: Default::default(),
            m_rsp_valid: Default::default(),
            m_rsp_ready: Default::default(),
            m_rsp_qpn: Default::default(),
            m_rsp_opcode: Default::default(),
            m_rsp_psn: Default::default(),
            m_rsp_payload_len: Default::default(),
            m_rsp_syndrome: Default::default(),
            m_rsp_msn: Default::default(),
            m_rsp_atomic_ack_data: Default::default(),
            m_rsp_pay: Default::default(),
            m_err_valid: Default::default(),
            m_err_ready: Default::default(),
            m_err_qpn: Default::default(),
            cnt_nak_rem_access: Default::default(),
            cnt_nak_rem_op: Default::default(),
            cnt_nak_inv_req: Default::default(),
            cnt_read_replay: Default::default(),
            cnt_atomic_replay: Default::default(),
            cnt_dup_no_res: Default::default(),
            cnt_drop_err: Default::default(),
            cnt_axi_err: Default::default(),
            state: Default::default(),
            c: Default::default(),
            m: Default::default(),
            f_send: Default::default(),
            f_write: Default::default(),
            f_read: Default::default(),
            f_atomic: Default::default(),
            f_fadd: Default::default(),
            f_first: Default::default(),
            f_last: Default::default(),
            f_imm: Default::default(),
            f_inv: Default::default(),
            msn_before: Default::default(),
            t_disc: Default::default(),
            t_wait: Default::default(),
            t_inv: Default::default(),
            t_cqe: Default::default(),
            t_rsp: Default::default(),
            t_fail: Default::default(),
            t_flush: Default::default(),
            cqe_status: Default::default(),
            cqe_len: Default::default(),
            rsp_opcode: Default::default(),
            rsp_psn: Default::default(),
            rsp_syn: Default::default(),
            rsp_msn: Default::default(),
            rsp_data: Default::default(),
            req_key: Default::default(),
            req_va: Default::default(),
            req_len: Default::default(),
            req_acc: Default::default(),
            wqe_len: Default::default(),
            wr_pend: Default::default(),
            wr_iss: Default::default(),
            wr_dn: Default::default(),
            err_pend: Default::default(),
            cl_pend: Default::default(),
            cl_qpn: Default::default(),
            fl_pend: Default::default(),
            fl_qpn: Default::default(),
            c_dead: Default::default(),
            xw_v: Default::default(),
            xw_qpn: Default::default(),
            qbody: RamQueue::new(),
            erdy: (0..=RSP_QUEUE).map(|_| Default::default()).collect(),
            ev: (0..=RSP_QUEUE).map(|_| Default::default()).collect(),
            ekill: (0..=RSP_QUEUE).map(|_| Default::default()).collect(),
            eerr: (0..=RSP_QUEUE).map(|_| Default::default()).collect(),
            eqpn: (0..=RSP_QUEUE).map(|_| Default::default()).collect(),
            efence: (0..=RSP_QUEUE).map(|_| Default::default()).collect(),
            qerr: Bram::new(),
            rd_pend: Default::default(),
            rd_to_me: Default::default(),
            res_new: Default::default(),
            ch_pa: Default::default(),
            ch_left: Default::default(),
            rd_left: Default::default(),
            pkt_left: Default::default(),
            rd_psn: Default::default(),
            rd_first: Default::default(),
            at_pa: Default::default(),
            orig: Default::default(),
            scan_i: Default::default(),
            scan_n: Default::default(),
            hot: Default::default(),
            meta: Bram::new(),
            res: Bram::new(),
            ctr,
            take: Default::default(),
            wr_go: Default::default(),
            rd_go: Default::default(),
            rd_end: Default::default(),
            probe_end: Default::default(),
            lenm1: Default::default(),
            npk_m1: Default::default(),
            rd_lastpkt: Default::default(),
            rd_plen: Default::default(),
            take_len: Default::default(),
            scan_slot: Default::default(),
            e: Default::default(),
            e_in: Default::default(),
            e_inside: Default::default(),
            at_new: Default::default(),
            at_change: Default::default(),
            hotv: Default::default(),
            ge_s: (0..=RSP_QUEUE).map(|_| Default::default()).collect(),
            fdist: (0..=RSP_QUEUE).map(|_| Default::default()).collect(),
            dist0: Default::default(),
            dn_eff: Default::default(),
            ehit: (0..=RSP_QUEUE).map(|_| Default::default()).collect(),
            xhit: (0..=RSP_QUEUE).map(|_| Default::default()).collect(),
            pv: (0..RSP_QUEUE).map(|_| Default::default()).collect(),
            pfree: (0..RSP_QUEUE).map(|_| Default::default()).collect(),
            done_err: Default::default(),
            anyhit: Default::default(),
            reached0: Default::default(),
            qpop: Default::default(),
            qpush: Default::default(),
            claim: Default::default(),
            fsm_claim: Default::default(),
            rc_used: Default::default(),
            fsm_qw: Default::default(),
            q_empty: Default::default(),
            q_room: Default::default(),
            xerr_now: Default::default(),
            mrd: Default::default(),
            dfast: Default::default(),
            dresp: Default::default(),
            mfwd: Default::default(),
            h_cqd: Default::default(),
            cqe_len_now: Default::default(),
            ent_in: Default::default(),
            in_err: Default::default(),
            in_fence: Default::default(),
            rom_send: opcode_rom(|i| rc(i, &[OpKind::Send])),
            rom_write: opcode_rom(|i| rc(i, &[OpKind::Write])),
            rom_read: opcode_rom(|i| rc(i, &[OpKind::ReadRequest])),
            rom_atomic: opcode_rom(|i| rc(i, &[OpKind::CompareSwap, OpKind::FetchAdd])),
            rom_fadd: opcode_rom(|i| rc(i, &[OpKind::FetchAdd])),
            rom_first: opcode_rom(|i| matches!(i.position, Position::First | Position::Only)),
            rom_last: opcode_rom(|i| matches!(i.position, Position::Last | Position::Only)),
            rom_imm: opcode_rom(|i| i.has(ExtKind::ImmDt)),
            rom_inv: opcode_rom(|i| i.has(ExtKind::Ieth)),
            op_ack: rc_opcode(OpKind::Acknowledge, Position::Only),
            op_atomic_ack: rc_opcode(OpKind::AtomicAcknowledge, Position::Only),
            op_rr_first: rc_opcode(OpKind::ReadResponse, Position::First),
            op_rr_middle: rc_opcode(OpKind::ReadResponse, Position::Middle),
            op_rr_last: rc_opcode(OpKind::ReadResponse, Position::Last),
            op_rr_only: rc_opcode(OpKind::ReadResponse, Position::Only),
            syn_ack: Constant::new((Syndrome::ACK_NO_CREDITS.to_byte() as u64).into()),
            syn_nak: nak(NakCode::PsnSequenceError),
            syn_rnr: Constant::new(
                (Syndrome::RnrNak(roce_wire::RnrTimer(0)).to_byte() as u64).into(),
            ),
            syn_inv_req: nak(NakCode::InvalidRequest),
            syn_rem_access: nak(NakCode::RemoteAccessError),
            syn_rem_op: nak(NakCode::RemoteOperationalError),
            acc_local_write: acc(Access::LOCAL_WRITE),
            acc_remote_write: acc(Access::REMOTE_WRITE),
            acc_remote_read: acc(Access::REMOTE_READ),
            acc_remote_atomic: acc(Access::REMOTE_ATOMIC),
            k_execute: kind(CMD_EXECUTE),
            k_duplicate: kind(CMD_DUPLICATE),
            k_nak: kind(CMD_NAK),
            k_rnr_nak: kind(CMD_RNR_NAK),
            k_drop: kind(CMD_DROP),
            k_reset: kind(CMD_RESET),
            k_flush: kind(CMD_FLUSH),
            st_ok: kind(RCQE_OK),
            st_loc_len: kind(RCQE_LOC_LEN),
            st_loc_qp_op: kind(RCQE_LOC_QP_OP),
            st_failed: kind(RCQE_FAILED),
            st_flush: kind(RCQE_FLUSH),
            res_max: Constant::new((RES_PER_QP as u64).into()),
        }
    }
}

impl<const W: usize, const K: usize, const Q: usize, const A: usize> Default
    for RespExec<W, K, Q, A>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const K: usize, const Q: usize, const A: usize> Logic
    for RespExec<W, K, Q, A>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, c, m, f_send, f_write, f_read, f_atomic, f_fadd, f_first, f_last,
            f_imm, f_inv, msn_before, t_disc, t_wait, t_inv, t_cqe, t_rsp, t_fail, t_flush,
            cqe_status, cqe_len, rsp_opcode, rsp_psn, rsp_syn, rsp_msn, rsp_data, req_key, req_va,
            req_len, req_acc, wqe_len, wr_pend, wr_iss, wr_dn, err_pend, cl_pend, cl_qpn, fl_pend,
            fl_qpn, c_dead, xw_v, xw_qpn, h_cqd, mfwd, rd_pend, rd_to_me, res_new, ch_pa, ch_left,
            rd_left, pkt_left, rd_psn, rd_first, at_pa, orig, scan_i, scan_n, hot
        );
        clock!(self, clock, meta, res, qerr, qbody);
        self.qbody.reset.next = self.reset.val();
        for i in 0..RSP_ENTRIES {
            self.erdy[i].clock.next = self.clock.val();
            self.ev[i].clock.next = self.clock.val();
            self.ekill[i].clock.next = self.clock.val();
            self.eerr[i].clock.next = self.clock.val();
            self.eqpn[i].clock.next = self.clock.val();
            self.efence[i].clock.next = self.clock.val();
        }
        for i in 0..self.ctr.len() {
            self.ctr[i].clock.next = self.clock.val();
            self.ctr[i].clear.next = self.reset.val();
            self.ctr[i].inc.next = self.hot.q.val().get_bit(i);
        }
        // ---- Arithmetic used by several states.
        self.probe_end.next =
            bit_cast::<65, 64>(self.c.q.val().va) + bit_cast::<65, 32>(self.c.q.val().len) - 1;
        self.lenm1.next = self.c.q.val().len - 1;
        self.npk_m1.next = 0.into();
        if self.c.q.val().len != 0 {
            if self.c.q.val().pmtu == 256 {
                self.npk_m1.next = self.lenm1.val() >> 8;
            } else if self.c.q.val().pmtu == 512 {
                self.npk_m1.next = self.lenm1.val() >> 9;
            } else if self.c.q.val().pmtu == 1024 {
                self.npk_m1.next = self.lenm1.val() >> 10;
            } else if self.c.q.val().pmtu == 2048 {
                self.npk_m1.next = self.lenm1.val() >> 11;
            } else {
                self.npk_m1.next = self.lenm1.val() >> 12;
            }
        }
        self.rd_lastpkt.next = self.rd_left.q.val() <= bit_cast::<32, 16>(self.c.q.val().pmtu);
        if self.rd_lastpkt.val() {
            self.rd_plen.next = self.rd_left.q.val();
        } else {
            self.rd_plen.next = bit_cast::<32, 16>(self.c.q.val().pmtu);
        }
        if self.ch_left.q.val() < self.pkt_left.q.val() {
            self.take_len.next = self.ch_left.q.val();
        } else {
            self.take_len.next = self.pkt_left.q.val();
        }
        self.scan_slot.next = self.m.q.val().head - 1 - bit_cast::<4, 5>(self.scan_i.q.val());
        self.res.read_address.next =
            (bit_cast::<A, 24>(self.c.q.val().qpn) << 4) | bit_cast::<A, 4>(self.scan_slot.val());
        self.res.write_address.next =
            (bit_cast::<A, 24>(self.c.q.val().qpn) << 4) | bit_cast::<A, 4>(self.m.q.val().head);
        self.res.write_data.next.atomic = self.f_atomic.q.val();
        self.res.write_data.next.first = self.c.q.val().psn;
        self.res.write_data.next.last = self.c.q.val().psn + bit_cast::<24, 32>(self.npk_m1.val());
        if self.f_atomic.q.val() {
            self.res.write_data.next.last = self.c.q.val().psn;
            self.res.write_data.next.va = self.orig.q.val();
        } else {
            self.res.write_data.next.va = self.c.q.val().va;
        }
        self.res.write_data.next.rkey = self.c.q.val().rkey;
        self.res.write_data.next.len = self.c.q.val().len;
        self.e.next = self.res.read_data.val();
        self.e_in.next =
            (self.c.q.val().psn - self.e.val().first) <= (self.e.val().last - self.e.val().first);
        self.e_inside.next = (self.c.q.val().va >= self.e.val().va)
            & ((bit_cast::<65, 64>(self.c.q.val().va) + bit_cast::<65, 32>(self.c.q.val().len))
                <= (bit_cast::<65, 64>(self.e.val().va) + bit_cast::<65, 32>(self.e.val().len)))
            & (self.c.q.val().rkey == self.e.val().rkey);
        if self.f_fadd.q.val() {
            self.at_new.next = self.orig.q.val() + self.c.q.val().swap;
            self.at_change.next = self.c.q.val().swap != 0;
        } else {
            self.at_change.next = self.orig.q.val() == self.c.q.val().compare;
            self.at_new.next = self.c.q.val().swap;
        }
        // ---- Defaults.
        self.s_cmd_ready.next = false;
        self.m_mr_req_valid.next = false;
        self.m_mr_req_key.next = self.req_key.q.val();
        self.m_mr_req_pd.next = self.c.q.val().pd;
        self.m_mr_req_access.next = self.req_acc.q.val();
        self.m_mr_req_va.next = self.req_va.q.val();
        self.m_mr_req_len.next = self.req_len.q.val();
        self.s_mr_grant_ready.next = false;
        self.m_rq_req_valid.next = false;
        self.m_rq_req_qpn.next = self.c.q.val().qpn;
        // SEND FIRST/ONLY and WRITE with immediate (at LAST/ONLY) pop.
        self.m_rq_req_pop.next = self.f_first.q.val() | self.f_write.q.val();
        self.s_rq_resp_ready.next = false;
        self.m_rcqe_valid.next = false;
        self.m_rcqe_qpn.next = self.c.q.val().qpn;
        self.m_rcqe_status.next = self.cqe_status.q.val();
        self.m_rcqe_opcode.next = self.c.q.val().opcode;
        self.m_rcqe_len.next = self.cqe_len.q.val();
        self.m_rcqe_imm.next = self.c.q.val().imm;
        self.m_rcqe_se.next = self.c.q.val().se;
        self.m_inv_valid.next = false;
        self.m_inv_key.next = self.c.q.val().imm;
        self.m_wr_cmd_valid.next = false;
        self.m_wr_cmd_addr.next = self.s_mr_grant_pa.val();
        self.m_wr_cmd_len.next = self.s_mr_grant_len.val();
        self.m_wr_cmd_last.next = self.s_mr_grant_last.val();
        self.m_wr_cmd_discard.next = false;
        self.m_wr_cmd_imm.next = false;
        self.m_wr_cmd_data.next = self.at_new.val();
        self.s_wr_done_ready.next = true;
        self.m_rd_cmd_valid.next = false;
        self.m_rd_cmd_addr.next = self.ch_pa.q.val();
        self.m_rd_cmd_len.next = self.take_len.val();
        self.m_rd_cmd_last.next = self.take_len.val() == self.pkt_left.q.val();
        self.m_rsp_valid.next = false;
        self.m_rsp_qpn.next = self.c.q.val().qpn;
        self.m_rsp_opcode.next = self.rsp_opcode.q.val();
        self.m_rsp_psn.next = self.rsp_psn.q.val();
        self.m_rsp_payload_len.next = 0.into();
        self.m_rsp_syndrome.next = self.rsp_syn.q.val();
        self.m_rsp_msn.next = self.rsp_msn.q.val();
        self.m_rsp_atomic_ack_data.next = self.rsp_data.q.val();
        self.m_err_valid.next = false;
        self.m_err_qpn.next = self.c.q.val().qpn;
        self.meta.write_enable.next = false;
        self.meta.write_address.next = bit_cast::<Q, 24>(self.c.q.val().qpn);
        self.meta.write_data.next = self.m.q.val();
        self.meta.read_enable.next = false;
        self.meta.read_address.next = bit_cast::<Q, 24>(self.s_cmd_qpn.val());
        self.res.write_enable.next = false;
        self.res.read_enable.next = false;
        self.qerr.write_enable.next = false;
        self.qerr.write_address.next = bit_cast::<Q, 24>(self.c.q.val().qpn);
        self.qerr.write_data.next = false;
        self.qerr.read_enable.next = false;
        self.qerr.read_address.next = bit_cast::<Q, 24>(self.s_cmd_qpn.val());
        self.fsm_qw.next = false;
        self.fsm_claim.next = false;
        self.rc_used.next = false;
        self.dfast.next = false;
        self.dresp.next = false;
        self.qpush.next = false;
        self.q_empty.next = !self.ev[0].q.val();
        self.q_room.next = false;
        for i in 0..RSP_QUEUE {
            if !self.ev[i].q.val() {
                self.q_room.next = true;
            }
        }
        // The QP was moved to Error by the response queue (an AXI write
        // error): the error RAM read at the take, or written since.
        self.xerr_now.next = self.qerr.read_data.val()
            | (self.xw_v.q.val() & (self.xw_qpn.q.val() == self.c.q.val().qpn))
            | self.c_dead.q.val();
        if self.mfwd.q.val() {
            self.mrd.next = self.m.q.val();
        } else {
            self.mrd.next = self.meta.read_data.val();
        }
        // A receive completion's byte count (WrPost's).
        if self.f_send.q.val() {
            self.cqe_len_now.next = self.c.q.val().off + bit_cast::<32, 16>(self.c.q.val().plen);
        } else if self.f_first.q.val() {
            self.cqe_len_now.next = self.c.q.val().len;
        } else {
            self.cqe_len_now.next = self.m.q.val().wtotal;
        }
        // A response into the queue: fenced behind every write issued.
        self.ent_in.next.rsp = true;
        self.ent_in.next.cqe = false;
        self.ent_in.next.cst = self.st_ok.val();
        self.ent_in.next.cop = self.c.q.val().opcode;
        self.ent_in.next.clen = self.cqe_len_now.val();
        self.ent_in.next.cimm = self.c.q.val().imm;
        self.ent_in.next.cse = self.c.q.val().se;
        self.ent_in.next.opcode = self.rsp_opcode.q.val();
        self.ent_in.next.psn = self.rsp_psn.q.val();
        self.ent_in.next.syn = self.rsp_syn.q.val();
        self.ent_in.next.msn = self.rsp_msn.q.val();
        self.ent_in.next.msnb = self.msn_before.q.val();
        self.ent_in.next.data = self.rsp_data.q.val();
        self.hotv.next = 0.into();
        self.wr_go.next = false;
        self.rd_go.next = false;
        self.rd_end.next = false;
        // ---- The READ stream: to tx_arb, or to this block for an atomic.
        self.m_rsp_pay.tdata.next = self.s_rd.tdata.val();
        self.m_rsp_pay.tkeep.next = self.s_rd.tkeep.val();
        self.m_rsp_pay.tlast.next = self.s_rd.tlast.val();
        self.m_rsp_pay.tuser.next = self.s_rd.tuser.val();
        self.m_rsp_pay.tvalid.next = self.s_rd.tvalid.val() & !self.rd_to_me.q.val();
        if self.rd_to_me.q.val() {
            self.s_rd.tready.next = self.state.q.val() == Ex::AtData;
        } else {
            self.s_rd.tready.next = self.m_rsp_pay.tready.val();
        }
        self.rd_end.next = self.s_rd.tvalid.val() & self.s_rd.tready.val() & self.s_rd.tlast.val();
        // ---- The state machine.
        self.take.next = false;
        match self.state.q.val() {
            Ex::Idle => {
                self.s_cmd_ready.next = true;
                if self.s_cmd_valid.val() {
                    self.take.next = true;
                    self.meta.read_enable.next = true;
                    self.qerr.read_enable.next = true;
                    self.state.d.next = Ex::Decode;
                }
            }
            Ex::Decode => {
                self.m.d.next = self.mrd.val();
                self.t_disc.d.next = self.c.q.val().plen != 0;
                self.rsp_opcode.d.next = self.op_ack.val();
                self.rsp_psn.d.next = self.c.q.val().psn;
                self.rsp_msn.d.next = self.c.q.val().msn;
                self.rsp_syn.d.next = self.syn_ack.val();
                self.state.d.next = Ex::Tail;
                // A command without payload whose whole work is at most a
                // response (dfast) queues it from here: the response's
                // fields as worked out below.
                self.dfast.next = false;
                self.dresp.next = false;
                self.ent_in.next.opcode = self.op_ack.val();
                self.ent_in.next.psn = self.c.q.val().psn;
                self.ent_in.next.msn = self.c.q.val().msn;
                self.ent_in.next.syn = self.syn_ack.val();
                if self.c.q.val().kind == self.k_reset.val() {
                    self.dfast.next = true;
                    self.t_disc.d.next = false;
                    self.m.d.next.xerr = false;
                    self.m.d.next.head = 0.into();
                    self.m.d.next.count = 0.into();
                    self.fsm_qw.next = true;
                    self.qerr.write_enable.next = true;
                    self.qerr.write_data.next = false;
                } else if self.c.q.val().kind == self.k_flush.val() {
                    // The firmware moved the QP to Error.
                    self.t_flush.d.next = true;
                } else if self.mrd.val().xerr | self.xerr_now.val() {
                    self.hotv.next = 0x40.into(); // drop_err
                    self.dfast.next = true;
                } else if self.c.q.val().kind == self.k_drop.val() {
                    self.dfast.next = true;
                } else if self.c.q.val().kind == self.k_nak.val() {
                    self.t_rsp.d.next = true;
                    self.rsp_syn.d.next =
                        self.syn_nak.val() | bit_cast::<8, 5>(self.c.q.val().code);
                    // Any NAK but a PSN sequence error moved the QP to
                    // Error in resp_chk: the flush follows the NAK.
                    self.t_flush.d.next =
                        self.c.q.val().code != self.syn_nak.val().get_bits::<5>(0);
                    self.dfast.next = self.c.q.val().code == self.syn_nak.val().get_bits::<5>(0);
                    self.dresp.next = true;
                    self.ent_in.next.syn =
                        self.syn_nak.val() | bit_cast::<8, 5>(self.c.q.val().code);
                } else if self.c.q.val().kind == self.k_rnr_nak.val() {
                    self.t_rsp.d.next = true;
                    self.rsp_syn.d.next =
                        self.syn_rnr.val() | bit_cast::<8, 5>(self.c.q.val().code);
                    self.dfast.next = true;
                    self.dresp.next = true;
                    self.ent_in.next.syn =
                        self.syn_rnr.val() | bit_cast::<8, 5>(self.c.q.val().code);
                } else if self.c.q.val().kind == self.k_duplicate.val() {
                    if self.f_read.q.val() | self.f_atomic.q.val() {
                        self.state.d.next = Ex::ScanStart;
                    } else {
                        self.t_rsp.d.next = true;
                        self.rsp_psn.d.next = self.c.q.val().ack_psn;
                        self.dfast.next = true;
                        self.dresp.next = true;
                        self.ent_in.next.psn = self.c.q.val().ack_psn;
                    }
                } else if self.c.q.val().kind == self.k_execute.val() {
                    // A READ or atomic carries no payload (roce_rx refuses
                    // one that does); should one arrive, it is dropped.
                    self.t_disc.d.next =
                        (self.f_read.q.val() | self.f_atomic.q.val()) & (self.c.q.val().plen != 0);
                    if self.f_send.q.val()
                        | (self.f_write.q.val() & self.f_last.q.val() & self.f_imm.q.val())
                    {
                        self.state.d.next = Ex::RqReq;
                    } else if self.f_write.q.val() {
                        // The payload's mr_tlb request from here when no
                        // probe of the range's end comes first.
                        self.req_key.d.next = self.c.q.val().rkey;
                        self.req_va.d.next = self.c.q.val().va;
                        self.req_len.d.next = bit_cast::<32, 16>(self.c.q.val().plen);
                        self.req_acc.d.next = self.acc_remote_write.val();
                        if self.f_first.q.val()
                            & (self.c.q.val().len > bit_cast::<32, 16>(self.c.q.val().plen))
                        {
                            self.state.d.next = Ex::ProbeReq;
                        } else if self.c.q.val().plen == 0 {
                            // Nothing to write: WrPost's work, here.
                            self.state.d.next = Ex::WrPost;
                            self.dfast.next = true;
                            self.dresp.next = self.c.q.val().ack_req;
                            if self.f_first.q.val() {
                                self.m.d.next.wtotal = self.c.q.val().len;
                            }
                        } else if self.rd_pend.q.val() == 0 {
                            self.m_mr_req_valid.next = true;
                            self.m_mr_req_key.next = self.c.q.val().rkey;
                            self.m_mr_req_access.next = self.acc_remote_write.val();
                            self.m_mr_req_va.next = self.c.q.val().va;
                            self.m_mr_req_len.next = bit_cast::<32, 16>(self.c.q.val().plen);
                            if self.m_mr_req_ready.val() {
                                self.state.d.next = Ex::WrGrant;
                            } else {
                                self.state.d.next = Ex::WrReq;
                            }
                        } else {
                            self.state.d.next = Ex::WrReq;
                        }
                    } else if self.f_read.q.val() {
                        self.res_new.d.next = true;
                        self.rd_first.d.next = true;
                        self.state.d.next = Ex::RdReq;
                    } else {
                        self.state.d.next = Ex::AtReq;
                    }
                }
                if (self.c.q.val().plen == 0) & self.dfast.val() {
                    if !self.dresp.val() | self.c_dead.q.val() {
                        self.t_rsp.d.next = false;
                        self.state.d.next = Ex::Finish;
                    } else if self.q_room.val() {
                        self.qpush.next = true;
                        self.t_rsp.d.next = false;
                        self.state.d.next = Ex::Finish;
                    }
                }
            }
            Ex::RqReq => {
                self.m_rq_req_valid.next = true;
                if self.m_rq_req_ready.val() {
                    self.state.d.next = Ex::RqWait;
                }
            }
            Ex::RqWait => {
                self.s_rq_resp_ready.next = true;
                if self.s_rq_resp_valid.val() {
                    self.req_key.d.next = self.s_rq_resp_key.val();
                    self.req_va.d.next =
                        self.s_rq_resp_va.val() + bit_cast::<64, 32>(self.c.q.val().off);
                    self.req_len.d.next = bit_cast::<32, 16>(self.c.q.val().plen);
                    self.req_acc.d.next = self.acc_local_write.val();
                    self.wqe_len.d.next = self.s_rq_resp_len.val();
                    if !self.s_rq_resp_ok.val() {
                        // No receive WQE although resp_chk counted one.
                        self.t_disc.d.next = self.c.q.val().plen != 0;
                        self.t_rsp.d.next = true;
                        self.t_fail.d.next = true;
                        self.rsp_syn.d.next = self.syn_rem_op.val();
                        self.rsp_msn.d.next = self.msn_before.q.val();
                        self.hotv.next = 0x02.into(); // nak_rem_op
                        self.state.d.next = Ex::Tail;
                    } else if self.f_send.q.val() {
                        if (bit_cast::<33, 32>(self.c.q.val().off)
                            + bit_cast::<33, 16>(self.c.q.val().plen))
                            > bit_cast::<33, 32>(self.s_rq_resp_len.val())
                        {
                            self.t_disc.d.next = self.c.q.val().plen != 0;
                            self.t_rsp.d.next = true;
                            self.t_fail.d.next = true;
                            self.t_cqe.d.next = true;
                            self.cqe_status.d.next = self.st_loc_len.val();
                            self.rsp_syn.d.next = self.syn_inv_req.val();
                            self.rsp_msn.d.next = self.msn_before.q.val();
                            self.hotv.next = 0x04.into(); // nak_inv_req
                            self.state.d.next = Ex::Tail;
                        } else if self.c.q.val().plen != 0 {
                            self.state.d.next = Ex::WrReq;
                        } else {
                            self.state.d.next = Ex::WrPost;
                        }
                    } else {
                        self.state.d.next = Ex::ProbeReq;
                    }
                }
            }
            Ex::ProbeReq => {
                // WRITE: the RETH range's last byte on FIRST/ONLY.
                self.req_key.d.next = self.c.q.val().rkey;
                self.req_va.d.next = self.c.q.val().va;
                self.req_len.d.next = bit_cast::<32, 16>(self.c.q.val().plen);
                self.req_acc.d.next = self.acc_remote_write.val();
                if self.f_first.q.val()
                    & (self.c.q.val().len > bit_cast::<32, 16>(self.c.q.val().plen))
                {
                    if self.probe_end.val().get_bit(64) {
                        // Wraps past 2^64: out of bounds.
                        self.t_disc.d.next = self.c.q.val().plen != 0;
                        self.t_rsp.d.next = true;
                        self.t_fail.d.next = true;
                        self.rsp_syn.d.next = self.syn_rem_access.val();
                        self.rsp_msn.d.next = self.msn_before.q.val();
                        self.hotv.next = 0x01.into(); // nak_rem_access
                        self.state.d.next = Ex::Tail;
                    } else {
                        self.m_mr_req_valid.next = true;
                        self.m_mr_req_key.next = self.c.q.val().rkey;
                        self.m_mr_req_access.next = self.acc_remote_write.val();
                        self.m_mr_req_va.next = self.probe_end.val().get_bits::<64>(0);
                        self.m_mr_req_len.next = 1.into();
                        if self.m_mr_req_ready.val() {
                            self.state.d.next = Ex::ProbeWait;
                        }
                    }
                } else if self.c.q.val().plen != 0 {
                    self.state.d.next = Ex::WrReq;
                } else {
                    self.state.d.next = Ex::WrPost;
                }
            }
            Ex::ProbeWait => {
                self.s_mr_grant_ready.next = true;
                if self.s_mr_grant_valid.val() {
                    if self.s_mr_grant_reason.val() != 0 {
                        self.t_disc.d.next = self.c.q.val().plen != 0;
                        self.t_rsp.d.next = true;
                        self.t_fail.d.next = true;
                        self.rsp_syn.d.next = self.syn_rem_access.val();
                        self.rsp_msn.d.next = self.msn_before.q.val();
                        self.hotv.next = 0x01.into(); // nak_rem_access
                        self.state.d.next = Ex::Tail;
                    } else if self.c.q.val().plen != 0 {
                        self.state.d.next = Ex::WrReq;
                    } else {
                        self.state.d.next = Ex::WrPost;
                    }
                }
            }
            Ex::WrReq => {
                // A write waits until every earlier READ response's data
                // has been read (and passed on), so it cannot change what
                // an earlier READ returns.
                if self.rd_pend.q.val() == 0 {
                    self.m_mr_req_valid.next = true;
                    if self.m_mr_req_ready.val() {
                        self.state.d.next = Ex::WrGrant;
                    }
                }
            }
            Ex::WrGrant => {
                if self.s_mr_grant_valid.val() & (self.s_mr_grant_reason.val() != 0) {
                    self.s_mr_grant_ready.next = true;
                    self.t_disc.d.next = true;
                    self.t_rsp.d.next = true;
                    self.t_fail.d.next = true;
                    self.rsp_msn.d.next = self.msn_before.q.val();
                    if self.f_send.q.val() {
                        // The receive WQE's SGE refused.
                        self.rsp_syn.d.next = self.syn_rem_op.val();
                        self.t_cqe.d.next = true;
                        self.cqe_status.d.next = self.st_loc_qp_op.val();
                        self.hotv.next = 0x02.into(); // nak_rem_op
                    } else {
                        self.rsp_syn.d.next = self.syn_rem_access.val();
                        self.hotv.next = 0x01.into(); // nak_rem_access
                    }
                    self.state.d.next = Ex::Tail;
                } else {
                    self.m_wr_cmd_valid.next = self.s_mr_grant_valid.val();
                    self.s_mr_grant_ready.next = self.m_wr_cmd_ready.val();
                    if self.s_mr_grant_valid.val() & self.m_wr_cmd_ready.val() {
                        self.wr_go.next = true;
                        if self.s_mr_grant_last.val() {
                            self.state.d.next = Ex::WrPost;
                        }
                    }
                }
            }
            Ex::WrPost => {
                // The payload is on its way; what the packet still needs.
                // The ACK waits in the response queue for the writes; a
                // receive completion (and its invalidation) waits here.
                self.t_rsp.d.next = self.c.q.val().ack_req;
                self.t_wait.d.next = false;
                if self.f_write.q.val() & self.f_first.q.val() {
                    self.m.d.next.wtotal = self.c.q.val().len;
                }
                if self.f_last.q.val() & (self.f_send.q.val() | self.f_imm.q.val()) {
                    self.t_wait.d.next = true;
                    self.t_cqe.d.next = true;
                    self.cqe_status.d.next = self.st_ok.val();
                    self.t_inv.d.next = self.f_inv.q.val();
                }
                self.cqe_len.d.next = self.cqe_len_now.val();
                self.state.d.next = Ex::Tail;
                // Nothing but an ACK (or nothing) left: the ACK into the
                // response queue from here, and on to the next command.
                if !(self.f_last.q.val() & (self.f_send.q.val() | self.f_imm.q.val()))
                    & !self.t_disc.q.val()
                {
                    if !self.c.q.val().ack_req | self.c_dead.q.val() {
                        self.t_rsp.d.next = false;
                        self.state.d.next = Ex::Finish;
                    } else if self.q_room.val() {
                        self.qpush.next = true;
                        self.t_rsp.d.next = false;
                        self.state.d.next = Ex::Finish;
                    }
                } else if !self.f_inv.q.val() & !self.t_disc.q.val() & !self.c_dead.q.val() {
                    // A receive completion (and the ACK) into the queue:
                    // it leaves after the data, as the ACK does.
                    if self.q_room.val() {
                        self.qpush.next = true;
                        self.ent_in.next.cqe = true;
                        self.ent_in.next.rsp = self.c.q.val().ack_req;
                        self.t_rsp.d.next = false;
                        self.t_wait.d.next = false;
                        self.t_cqe.d.next = false;
                        self.state.d.next = Ex::Finish;
                    }
                }
            }
            Ex::RdReq => {
                self.req_key.d.next = self.c.q.val().rkey;
                self.req_va.d.next = self.c.q.val().va;
                self.req_len.d.next = self.c.q.val().len;
                self.req_acc.d.next = self.acc_remote_read.val();
                self.rd_left.d.next = self.c.q.val().len;
                self.rd_psn.d.next = self.c.q.val().psn;
                self.pkt_left.d.next = 0.into();
                self.ch_left.d.next = 0.into();
                if self.c.q.val().len == 0 {
                    if self.res_new.q.val() {
                        self.state.d.next = Ex::ResWrite;
                    } else {
                        self.state.d.next = Ex::RdWaitWr;
                    }
                } else {
                    self.m_mr_req_valid.next = true;
                    self.m_mr_req_key.next = self.c.q.val().rkey;
                    self.m_mr_req_access.next = self.acc_remote_read.val();
                    self.m_mr_req_va.next = self.c.q.val().va;
                    self.m_mr_req_len.next = self.c.q.val().len;
                    if self.m_mr_req_ready.val() {
                        self.state.d.next = Ex::RdFirst;
                    }
                }
            }
            Ex::RdFirst => {
                self.s_mr_grant_ready.next = true;
                if self.s_mr_grant_valid.val() {
                    self.ch_pa.d.next = self.s_mr_grant_pa.val();
                    self.ch_left.d.next = self.s_mr_grant_len.val();
                    if self.s_mr_grant_reason.val() != 0 {
                        self.t_rsp.d.next = true;
                        self.t_fail.d.next = true;
                        self.rsp_syn.d.next = self.syn_rem_access.val();
                        self.rsp_msn.d.next = self.msn_before.q.val();
                        self.hotv.next = 0x01.into(); // nak_rem_access
                        self.state.d.next = Ex::Tail;
                    } else if self.res_new.q.val() {
                        self.state.d.next = Ex::ResWrite;
                    } else {
                        self.state.d.next = Ex::RdWaitWr;
                    }
                }
            }
            Ex::ResWrite => {
                self.res.write_enable.next = true;
                self.m.d.next.head = self.m.q.val().head + 1;
                if self.m.q.val().count != self.res_max.val() {
                    self.m.d.next.count = self.m.q.val().count + 1;
                }
                if self.f_atomic.q.val() {
                    self.state.d.next = Ex::Tail;
                } else {
                    self.state.d.next = Ex::RdWaitWr;
                }
            }
            Ex::RdWaitWr => {
                // Earlier responses out first (they may still turn into
                // NAKs); none for a QP the queue moved to Error.
                if (self.wr_pend.q.val() == 0) & self.q_empty.val() {
                    if self.c_dead.q.val() {
                        self.state.d.next = Ex::Tail;
                    } else {
                        self.state.d.next = Ex::RdHdr;
                    }
                }
            }
            Ex::RdHdr => {
                // One response packet's descriptor.
                self.m_rsp_valid.next = true;
                self.m_rsp_psn.next = self.rd_psn.q.val();
                self.m_rsp_payload_len.next = self.rd_plen.val().get_bits::<16>(0);
                self.m_rsp_syndrome.next = self.syn_ack.val();
                self.m_rsp_msn.next = self.c.q.val().msn;
                if self.rd_first.q.val() {
                    if self.rd_lastpkt.val() {
                        self.m_rsp_opcode.next = self.op_rr_only.val();
                    } else {
                        self.m_rsp_opcode.next = self.op_rr_first.val();
                    }
                } else if self.rd_lastpkt.val() {
                    self.m_rsp_opcode.next = self.op_rr_last.val();
                } else {
                    self.m_rsp_opcode.next = self.op_rr_middle.val();
                }
                if self.m_rsp_ready.val() {
                    self.rd_first.d.next = false;
                    self.rd_psn.d.next = self.rd_psn.q.val() + 1;
                    self.pkt_left.d.next = self.rd_plen.val();
                    if self.rd_left.q.val() == 0 {
                        self.state.d.next = Ex::Tail;
                    } else {
                        self.state.d.next = Ex::RdCmd;
                    }
                }
            }
            Ex::RdCmd => {
                if self.ch_left.q.val() == 0 {
                    // The next page's chunk.
                    self.s_mr_grant_ready.next = true;
                    if self.s_mr_grant_valid.val() {
                        self.ch_pa.d.next = self.s_mr_grant_pa.val();
                        self.ch_left.d.next = self.s_mr_grant_len.val();
                    }
                } else {
                    self.m_rd_cmd_valid.next = true;
                    if self.m_rd_cmd_ready.val() {
                        self.ch_pa.d.next =
                            self.ch_pa.q.val() + bit_cast::<64, 32>(self.take_len.val());
                        self.ch_left.d.next = self.ch_left.q.val() - self.take_len.val();
                        self.pkt_left.d.next = self.pkt_left.q.val() - self.take_len.val();
                        self.rd_left.d.next = self.rd_left.q.val() - self.take_len.val();
                        if self.take_len.val() == self.pkt_left.q.val() {
                            self.rd_go.next = true;
                            if self.rd_left.q.val() == self.take_len.val() {
                                self.state.d.next = Ex::Tail;
                            } else {
                                self.state.d.next = Ex::RdHdr;
                            }
                        }
                    }
                }
            }
            Ex::AtReq => {
                self.m_mr_req_valid.next = true;
                self.m_mr_req_key.next = self.c.q.val().rkey;
                self.m_mr_req_access.next = self.acc_remote_atomic.val();
                self.m_mr_req_va.next = self.c.q.val().va;
                self.m_mr_req_len.next = 8.into();
                if self.m_mr_req_ready.val() {
                    self.state.d.next = Ex::AtGrant;
                }
            }
            Ex::AtGrant => {
                self.s_mr_grant_ready.next = true;
                if self.s_mr_grant_valid.val() {
                    self.at_pa.d.next = self.s_mr_grant_pa.val();
                    if self.s_mr_grant_reason.val() != 0 {
                        self.t_rsp.d.next = true;
                        self.t_fail.d.next = true;
                        self.rsp_syn.d.next = self.syn_rem_access.val();
                        self.rsp_msn.d.next = self.msn_before.q.val();
                        self.hotv.next = 0x01.into(); // nak_rem_access
                        self.state.d.next = Ex::Tail;
                    } else {
                        self.state.d.next = Ex::AtWait;
                    }
                }
            }
            Ex::AtWait => {
                if (self.wr_pend.q.val() == 0) & (self.rd_pend.q.val() == 0) {
                    self.state.d.next = Ex::AtRead;
                }
            }
            Ex::AtRead => {
                self.m_rd_cmd_valid.next = true;
                self.m_rd_cmd_addr.next = self.at_pa.q.val();
                self.m_rd_cmd_len.next = 8.into();
                self.m_rd_cmd_last.next = true;
                if self.m_rd_cmd_ready.val() {
                    self.rd_go.next = true;
                    self.rd_to_me.d.next = true;
                    self.state.d.next = Ex::AtData;
                }
            }
            Ex::AtData => {
                if self.s_rd.tvalid.val() {
                    self.orig.d.next = self.s_rd.tdata.val().get_bits::<64>(0);
                    if self.s_rd.tlast.val() {
                        self.rd_to_me.d.next = false;
                        self.state.d.next = Ex::AtWrite;
                    }
                }
            }
            Ex::AtWrite => {
                self.rsp_opcode.d.next = self.op_atomic_ack.val();
                self.rsp_data.d.next = self.orig.q.val();
                self.t_rsp.d.next = true;
                self.t_wait.d.next = true;
                if self.at_change.val() {
                    self.m_wr_cmd_valid.next = true;
                    self.m_wr_cmd_addr.next = self.at_pa.q.val();
                    self.m_wr_cmd_len.next = 8.into();
                    self.m_wr_cmd_last.next = true;
                    self.m_wr_cmd_imm.next = true;
                    if self.m_wr_cmd_ready.val() {
                        self.wr_go.next = true;
                        self.state.d.next = Ex::ResWrite;
                    }
                } else {
                    self.state.d.next = Ex::ResWrite;
                }
            }
            Ex::ScanStart => {
                self.scan_i.d.next = 0.into();
                if bit_cast::<RDA_BITS, 5>(self.m.q.val().count) < self.c.q.val().mdra {
                    self.scan_n.d.next = self.m.q.val().count;
                } else {
                    self.scan_n.d.next = bit_cast::<5, RDA_BITS>(self.c.q.val().mdra);
                }
                if (self.m.q.val().count == 0) | (self.c.q.val().mdra == 0) {
                    self.hotv.next = 0x20.into(); // dup_no_res
                    self.state.d.next = Ex::Tail;
                } else {
                    self.state.d.next = Ex::ScanRead;
                }
            }
            Ex::ScanRead => {
                self.res.read_enable.next = true;
                self.state.d.next = Ex::ScanCheck;
            }
            Ex::ScanCheck => {
                if self.e_in.val() {
                    // The newest resource holding the PSN decides.
                    self.state.d.next = Ex::Tail;
                    if self.f_read.q.val() & !self.e.val().atomic & self.e_inside.val() {
                        self.hotv.next = 0x08.into(); // read_replay
                        self.res_new.d.next = false;
                        self.rd_first.d.next = self.c.q.val().psn == self.e.val().first;
                        self.state.d.next = Ex::RdReq;
                    } else if self.f_atomic.q.val()
                        & self.e.val().atomic
                        & (self.c.q.val().psn == self.e.val().first)
                    {
                        self.hotv.next = 0x10.into(); // atomic_replay
                        self.t_rsp.d.next = true;
                        self.rsp_opcode.d.next = self.op_atomic_ack.val();
                        self.rsp_data.d.next = self.e.val().va;
                    } else {
                        self.hotv.next = 0x20.into(); // dup_no_res
                    }
                } else if self.scan_i.q.val() + 1 == self.scan_n.q.val() {
                    self.hotv.next = 0x20.into(); // dup_no_res
                    self.state.d.next = Ex::Tail;
                } else {
                    self.scan_i.d.next = self.scan_i.q.val() + 1;
                    self.state.d.next = Ex::ScanRead;
                }
            }
            Ex::Tail => {
                if self.t_disc.q.val() {
                    self.state.d.next = Ex::Discard;
                } else if self.t_wait.q.val() {
                    self.state.d.next = Ex::WrWait;
                } else if self.t_inv.q.val() {
                    self.state.d.next = Ex::Inv;
                } else if self.t_cqe.q.val() {
                    self.state.d.next = Ex::Cqe;
                } else if self.t_rsp.q.val() {
                    self.state.d.next = Ex::Resp;
                } else if self.t_fail.q.val() {
                    self.state.d.next = Ex::ErrEv;
                } else if self.t_flush.q.val() {
                    self.state.d.next = Ex::Flush;
                } else {
                    self.state.d.next = Ex::Finish;
                }
            }
            Ex::Discard => {
                self.m_wr_cmd_valid.next = true;
                self.m_wr_cmd_len.next = bit_cast::<32, 16>(self.c.q.val().plen);
                self.m_wr_cmd_last.next = true;
                self.m_wr_cmd_discard.next = true;
                if self.m_wr_cmd_ready.val() {
                    self.wr_go.next = true;
                    self.t_disc.d.next = false;
                    self.state.d.next = Ex::Tail;
                }
            }
            Ex::WrWait => {
                // Every write done, and the queue's entries have taken
                // the AXI errors of the writes they cover.
                if (self.wr_pend.q.val() == 0) & !self.wr_go.val() & self.q_empty.val() {
                    self.t_wait.d.next = false;
                    self.state.d.next = Ex::Tail;
                    if self.err_pend.q.val() {
                        // An AXI write error: remote operational error.
                        self.fsm_claim.next = true;
                        self.hotv.next = 0x82.into(); // axi_err, nak_rem_op
                        self.t_inv.d.next = false;
                        self.t_cqe.d.next = self.f_send.q.val() | self.t_cqe.q.val();
                        self.cqe_status.d.next = self.st_failed.val();
                        self.t_rsp.d.next = true;
                        self.t_fail.d.next = true;
                        self.rsp_opcode.d.next = self.op_ack.val();
                        self.rsp_syn.d.next = self.syn_rem_op.val();
                        self.rsp_msn.d.next = self.msn_before.q.val();
                    }
                }
            }
            Ex::Inv => {
                self.m_inv_valid.next = true;
                if self.m_inv_ready.val() {
                    self.state.d.next = Ex::InvWait;
                }
            }
            Ex::InvWait => {
                if self.s_inv_done_valid.val() {
                    self.t_inv.d.next = false;
                    self.state.d.next = Ex::Tail;
                    if self.s_inv_done_err.val() {
                        self.hotv.next = 0x04.into(); // nak_inv_req
                        self.cqe_status.d.next = self.st_failed.val();
                        self.t_rsp.d.next = true;
                        self.t_fail.d.next = true;
                        self.rsp_syn.d.next = self.syn_inv_req.val();
                        self.rsp_msn.d.next = self.msn_before.q.val();
                    }
                }
            }
            Ex::Cqe => {
                // After the queue's completions (a failure's completion
                // would overtake them).
                self.m_rcqe_valid.next = self.q_empty.val();
                self.rc_used.next = self.q_empty.val();
                if self.c_dead.q.val() {
                    self.m_rcqe_status.next = self.st_failed.val();
                }
                if self.m_rcqe_ready.val() & self.q_empty.val() {
                    self.t_cqe.d.next = false;
                    self.state.d.next = Ex::Tail;
                }
            }
            Ex::Resp => {
                // Into the response queue, behind the writes issued so
                // far; none for a QP the queue moved to Error meanwhile.
                if self.c_dead.q.val() {
                    self.t_rsp.d.next = false;
                    self.state.d.next = Ex::Tail;
                } else if self.q_room.val() {
                    self.qpush.next = true;
                    self.t_rsp.d.next = false;
                    self.state.d.next = Ex::Tail;
                }
            }
            Ex::ErrEv => {
                self.m_err_valid.next = !self.cl_pend.q.val();
                if self.m_err_ready.val() & !self.cl_pend.q.val() {
                    self.t_fail.d.next = false;
                    self.t_flush.d.next = true;
                    self.m.d.next.xerr = true;
                    self.state.d.next = Ex::Tail;
                }
            }
            Ex::Flush => {
                // Owe the QP's RCQE_FLUSH (one at a time; never in the
                // cycle a claim's error event owes one).
                if !self.fl_pend.q.val() & !self.cl_pend.q.val() {
                    self.fl_pend.d.next = true;
                    self.fl_qpn.d.next = self.c.q.val().qpn;
                    self.t_flush.d.next = false;
                    self.state.d.next = Ex::Tail;
                }
            }
            Ex::Finish => {
                // The QP's word written back, and the next command taken
                // in the same cycle (Decode forwards the word when the
                // next command is of the same QP: the RAM reads first).
                self.meta.write_enable.next = true;
                self.state.d.next = Ex::Idle;
                self.s_cmd_ready.next = true;
                if self.s_cmd_valid.val() {
                    self.take.next = true;
                    self.meta.read_enable.next = true;
                    self.qerr.read_enable.next = true;
                    self.state.d.next = Ex::Decode;
                }
            }
        }
        // ---- Take a command: its flags from the opcode tables.
        if self.take.val() {
            self.c.d.next.qpn = self.s_cmd_qpn.val();
            self.c.d.next.kind = self.s_cmd_kind.val();
            self.c.d.next.code = self.s_cmd_code.val();
            self.c.d.next.opcode = self.s_cmd_opcode.val();
            self.c.d.next.psn = self.s_cmd_psn.val();
            self.c.d.next.msn = self.s_cmd_msn.val();
            self.c.d.next.ack_req = self.s_cmd_ack_req.val();
            self.c.d.next.se = self.s_cmd_se.val();
            self.c.d.next.plen = self.s_cmd_plen.val();
            self.c.d.next.va = self.s_cmd_va.val();
            self.c.d.next.rkey = self.s_cmd_rkey.val();
            self.c.d.next.len = self.s_cmd_len.val();
            self.c.d.next.imm = self.s_cmd_imm.val();
            self.c.d.next.swap = self.s_cmd_swap.val();
            self.c.d.next.compare = self.s_cmd_compare.val();
            self.c.d.next.off = self.s_cmd_off.val();
            self.c.d.next.ack_psn = self.s_cmd_ack_psn.val();
            self.c.d.next.pd = self.s_cmd_pd.val();
            self.c.d.next.pmtu = self.s_cmd_pmtu.val();
            self.c.d.next.mdra = self.s_cmd_mdra.val();
            self.f_send.d.next = self.rom_send.val().get_bit(self.s_cmd_opcode.val().index());
            self.f_write.d.next = self
                .rom_write
                .val()
                .get_bit(self.s_cmd_opcode.val().index());
            self.f_read.d.next = self.rom_read.val().get_bit(self.s_cmd_opcode.val().index());
            self.f_atomic.d.next = self
                .rom_atomic
                .val()
                .get_bit(self.s_cmd_opcode.val().index());
            self.f_fadd.d.next = self.rom_fadd.val().get_bit(self.s_cmd_opcode.val().index());
            self.f_first.d.next = self
                .rom_first
                .val()
                .get_bit(self.s_cmd_opcode.val().index());
            self.f_last.d.next = self.rom_last.val().get_bit(self.s_cmd_opcode.val().index());
            self.f_imm.d.next = self.rom_imm.val().get_bit(self.s_cmd_opcode.val().index());
            self.f_inv.d.next = self.rom_inv.val().get_bit(self.s_cmd_opcode.val().index());
            // The MSN before the packet: EXECUTE's MSN counts SEND/WRITE
            // LAST/ONLY, READs and atomics.
            if (self.s_cmd_kind.val() == self.k_execute.val())
                & (self.rom_read.val().get_bit(self.s_cmd_opcode.val().index())
                    | self
                        .rom_atomic
                        .val()
                        .get_bit(self.s_cmd_opcode.val().index())
                    | self.rom_last.val().get_bit(self.s_cmd_opcode.val().index()))
            {
                self.msn_before.d.next = self.s_cmd_msn.val() - 1;
            } else {
                self.msn_before.d.next = self.s_cmd_msn.val();
            }
            self.t_disc.d.next = false;
            self.t_wait.d.next = false;
            self.t_inv.d.next = false;
            self.t_cqe.d.next = false;
            self.t_rsp.d.next = false;
            self.t_fail.d.next = false;
            self.t_flush.d.next = false;
            self.res_new.d.next = false;
            self.rsp_data.d.next = 0.into();
        }
        // ---- Outstanding DMA work.
        if self.wr_go.val() & !(self.s_wr_done_valid.val()) {
            self.wr_pend.d.next = self.wr_pend.q.val() + 1;
        } else if !self.wr_go.val() & self.s_wr_done_valid.val() {
            self.wr_pend.d.next = self.wr_pend.q.val() - 1;
        }
        if self.wr_go.val() {
            self.wr_iss.d.next = self.wr_iss.q.val() + 1;
        }
        if self.s_wr_done_valid.val() {
            self.wr_dn.d.next = self.wr_dn.q.val() + 1;
        }
        // ---- The response queue (entries 0..RSP_QUEUE, 0 the head; the
        // extra last entry stays empty). An AXI error is the write with
        // sequence number wr_dn + 1; it belongs to the first entry whose
        // fence reaches it (completions come in command order), else to
        // the next response (err_pend).
        self.done_err.next = self.s_wr_done_valid.val() & self.s_wr_done_err.val();
        for i in 0..RSP_ENTRIES {
            self.fdist[i].next = self.efence[i].q.val() - self.wr_dn.q.val() - 1;
            self.ge_s[i].next = !self.fdist[i].val().get_bit(15);
        }
        self.ehit[0].next = self.done_err.val() & self.ev[0].q.val() & self.ge_s[0].val();
        for i in 0..RSP_QUEUE {
            self.ehit[i + 1].next = self.done_err.val()
                & self.ev[i + 1].q.val()
                & self.ge_s[i + 1].val()
                & !self.ge_s[i].val();
        }
        self.anyhit.next = false;
        for i in 0..RSP_ENTRIES {
            if self.ehit[i].val() {
                self.anyhit.next = true;
            }
        }
        // The head leaves once its writes are done: dropped (its QP
        // failed), as a NAK (a write it covers failed), or as it is.
        // Counting the completion of this cycle: an ACK leaves in the
        // cycle its last write's completion arrives (unless that write
        // failed: ehit).
        self.dn_eff.next = self.wr_dn.q.val();
        if self.s_wr_done_valid.val() {
            self.dn_eff.next = self.wr_dn.q.val() + 1;
        }
        self.dist0.next = self.dn_eff.val() - self.efence[0].q.val();
        self.reached0.next = !self.dist0.val().get_bit(15);
        self.qpop.next = false;
        self.claim.next = false;
        // A head with a receive completion sends it first (its status
        // failed when the QP failed or one of its writes did).
        self.m_rcqe_qpn.next = self.c.q.val().qpn;
        if self.ev[0].q.val() {
            self.m_rcqe_qpn.next = self.eqpn[0].q.val();
            self.m_rcqe_status.next = self.qbody.data_out.val().cst;
            self.m_rcqe_opcode.next = self.qbody.data_out.val().cop;
            self.m_rcqe_len.next = self.qbody.data_out.val().clen;
            self.m_rcqe_imm.next = self.qbody.data_out.val().cimm;
            self.m_rcqe_se.next = self.qbody.data_out.val().cse;
        }
        self.h_cqd.d.next = self.h_cqd.q.val();
        if self.ev[0].q.val() & self.erdy[0].q.val() & self.reached0.val() {
            if self.qbody.data_out.val().cqe & !self.h_cqd.q.val() {
                self.m_rcqe_valid.next = true;
                self.rc_used.next = true;
                if self.ekill[0].q.val() | self.eerr[0].q.val() | self.ehit[0].val() {
                    self.m_rcqe_status.next = self.st_failed.val();
                }
                if self.m_rcqe_ready.val() {
                    self.h_cqd.d.next = true;
                }
            } else if self.ekill[0].q.val() {
                self.qpop.next = true;
            } else if self.eerr[0].q.val() | self.ehit[0].val() {
                if !self.cl_pend.q.val() & !self.fl_pend.q.val() & !self.fsm_qw.val() {
                    self.m_rsp_valid.next = true;
                    self.m_rsp_qpn.next = self.eqpn[0].q.val();
                    self.m_rsp_opcode.next = self.op_ack.val();
                    self.m_rsp_psn.next = self.qbody.data_out.val().psn;
                    self.m_rsp_payload_len.next = 0.into();
                    self.m_rsp_syndrome.next = self.syn_rem_op.val();
                    self.m_rsp_msn.next = self.qbody.data_out.val().msnb;
                    self.m_rsp_atomic_ack_data.next = 0.into();
                    if self.m_rsp_ready.val() {
                        self.qpop.next = true;
                        self.claim.next = true;
                    }
                }
            } else if self.qbody.data_out.val().rsp {
                self.m_rsp_valid.next = true;
                self.m_rsp_qpn.next = self.eqpn[0].q.val();
                self.m_rsp_opcode.next = self.qbody.data_out.val().opcode;
                self.m_rsp_psn.next = self.qbody.data_out.val().psn;
                self.m_rsp_payload_len.next = 0.into();
                self.m_rsp_syndrome.next = self.qbody.data_out.val().syn;
                self.m_rsp_msn.next = self.qbody.data_out.val().msn;
                self.m_rsp_atomic_ack_data.next = self.qbody.data_out.val().data;
                if self.m_rsp_ready.val() {
                    self.qpop.next = true;
                }
            } else {
                self.qpop.next = true;
            }
        }
        if self.qpop.val() {
            self.h_cqd.d.next = false;
        }
        // A claim: the QP to Error (the error RAM, m_err), its later
        // entries dropped, the command in hand too if it is the QP's.
        for i in 0..RSP_ENTRIES {
            self.xhit[i].next = self.claim.val()
                & self.ev[i].q.val()
                & (self.eqpn[i].q.val() == self.eqpn[0].q.val());
        }
        self.xw_v.d.next = self.claim.val();
        self.xw_qpn.d.next = self.eqpn[0].q.val();
        if self.claim.val() {
            self.qerr.write_enable.next = true;
            self.qerr.write_address.next = bit_cast::<Q, 24>(self.eqpn[0].q.val());
            self.qerr.write_data.next = true;
            self.cl_pend.d.next = true;
            self.cl_qpn.d.next = self.eqpn[0].q.val();
            self.hotv.next = self.hotv.val() | 0x82; // axi_err, nak_rem_op
            if self.eqpn[0].q.val() == self.c.q.val().qpn {
                self.c_dead.d.next = true;
            }
        }
        if self.take.val() {
            self.c_dead.d.next = false;
        }
        self.mfwd.d.next = self.take.val()
            & (self.state.q.val() == Ex::Finish)
            & (self.s_cmd_qpn.val() == self.c.q.val().qpn);
        if self.cl_pend.q.val() {
            self.m_err_valid.next = true;
            self.m_err_qpn.next = self.cl_qpn.q.val();
            if self.m_err_ready.val() {
                self.cl_pend.d.next = false;
                self.fl_pend.d.next = true;
                self.fl_qpn.d.next = self.cl_qpn.q.val();
            }
        }
        // The owed RCQE_FLUSH, when m_rcqe is free (the host interface
        // drops the QP's completions that come after it).
        if self.fl_pend.q.val() & !self.rc_used.val() {
            self.m_rcqe_valid.next = true;
            self.m_rcqe_qpn.next = self.fl_qpn.q.val();
            self.m_rcqe_status.next = self.st_flush.val();
            if self.m_rcqe_ready.val() {
                self.fl_pend.d.next = false;
            }
        }
        // Shift on a pop, push into the first free entry after it.
        self.in_err.next = self.err_pend.q.val() | (self.done_err.val() & !self.anyhit.val());
        self.in_fence.next = self.wr_iss.q.val();
        if self.wr_go.val() {
            self.in_fence.next = self.wr_iss.q.val() + 1;
        }
        for i in 0..RSP_QUEUE {
            if self.qpop.val() {
                self.pv[i].next = self.ev[i + 1].q.val();
            } else {
                self.pv[i].next = self.ev[i].q.val();
            }
        }
        self.pfree[0].next = !self.pv[0].val();
        for i in 0..RSP_QUEUE_M1 {
            self.pfree[i + 1].next = !self.pv[i + 1].val() & self.pv[i].val();
        }
        // The wide part: pushed and popped with the registers.
        self.qbody.write.next = self.qpush.val();
        self.qbody.data_in.next = self.ent_in.val();
        self.qbody.read.next = self.qpop.val();
        for i in 0..RSP_QUEUE {
            self.erdy[i].d.next = self.pv[i].val();
            if self.qpop.val() {
                self.ev[i].d.next = self.ev[i + 1].q.val();
                self.eqpn[i].d.next = self.eqpn[i + 1].q.val();
                self.efence[i].d.next = self.efence[i + 1].q.val();
                self.eerr[i].d.next = self.eerr[i + 1].q.val() | self.ehit[i + 1].val();
                self.ekill[i].d.next = self.ekill[i + 1].q.val() | self.xhit[i + 1].val();
            } else {
                self.ev[i].d.next = self.ev[i].q.val();
                self.eqpn[i].d.next = self.eqpn[i].q.val();
                self.efence[i].d.next = self.efence[i].q.val();
                self.eerr[i].d.next = self.eerr[i].q.val() | self.ehit[i].val();
                self.ekill[i].d.next = self.ekill[i].q.val() | self.xhit[i].val();
            }
            if self.qpush.val() & self.pfree[i].val() {
                self.erdy[i].d.next = false;
                self.ev[i].d.next = true;
                self.eqpn[i].d.next = self.c.q.val().qpn;
                self.efence[i].d.next = self.in_fence.val();
                self.eerr[i].d.next = self.in_err.val();
                // A claim of this QP in the same cycle drops it too.
                self.ekill[i].d.next =
                    self.claim.val() & (self.eqpn[0].q.val() == self.c.q.val().qpn);
            }
        }
        for i in RSP_QUEUE..RSP_ENTRIES {
            self.erdy[i].d.next = false;
            self.ev[i].d.next = false;
            self.eqpn[i].d.next = self.eqpn[i].q.val();
            self.efence[i].d.next = self.efence[i].q.val();
            self.eerr[i].d.next = false;
            self.ekill[i].d.next = false;
        }
        self.err_pend.d.next = (self.err_pend.q.val() | (self.done_err.val() & !self.anyhit.val()))
            & !self.qpush.val()
            & !self.fsm_claim.val();
        if self.rd_go.val() & !self.rd_end.val() {
            self.rd_pend.d.next = self.rd_pend.q.val() + 1;
        } else if !self.rd_go.val() & self.rd_end.val() {
            self.rd_pend.d.next = self.rd_pend.q.val() - 1;
        }
        if self.rd_end.val() & self.s_rd.tuser.val() {
            self.hotv.next = self.hotv.val() | 0x80;
        }
        self.hot.d.next = self.hotv.val();
        if self.reset.val() {
            self.state.d.next = Ex::Idle;
            self.wr_pend.d.next = 0.into();
            self.rd_pend.d.next = 0.into();
            self.wr_iss.d.next = 0.into();
            self.wr_dn.d.next = 0.into();
            self.err_pend.d.next = false;
            self.cl_pend.d.next = false;
            self.fl_pend.d.next = false;
            self.c_dead.d.next = false;
            self.h_cqd.d.next = false;
            for i in 0..RSP_QUEUE {
                self.ev[i].d.next = false;
            }
            self.rd_to_me.d.next = false;
            self.hot.d.next = 0.into();
        }
        self.cnt_nak_rem_access.next = self.ctr[0].count.val();
        self.cnt_nak_rem_op.next = self.ctr[1].count.val();
        self.cnt_nak_inv_req.next = self.ctr[2].count.val();
        self.cnt_read_replay.next = self.ctr[3].count.val();
        self.cnt_atomic_replay.next = self.ctr[4].count.val();
        self.cnt_dup_no_res.next = self.ctr[5].count.val();
        self.cnt_drop_err.next = self.ctr[6].count.val();
        self.cnt_axi_err.next = self.ctr[7].count.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates() {
        let mut b = RespExecSmall64::new();
        b.connect_all();
        let v = generate_verilog(&b);
        yosys_validate("resp_exec", &v).unwrap();
    }

    #[test]
    fn response_opcodes_come_from_the_table() {
        let b = RespExecSmall64::new();
        assert_eq!(b.op_ack.val().index(), 0x11);
        assert_eq!(b.op_atomic_ack.val().index(), 0x12);
        assert_eq!(b.op_rr_first.val().index(), 0x0D);
        assert_eq!(b.op_rr_only.val().index(), 0x10);
        assert_eq!(b.syn_rem_access.val().index(), 0x62);
    }
}
