//! `host_if`: the host queues of `roce_regs::queue` served to the transport
//! (issue 36 §1). Host memory holds the rings (send WQEs, receive WQEs,
//! CQEs); the host writes ring contexts and rings doorbells through the
//! `db` and `hq` register blocks of `roce_regs::HOST_BLOCKS`; this block
//! fetches WQEs and writes CQEs with its own `dma_rd` and `dma_wr` (one
//! AXI4 master: their read and write channels).
//!
//! - **Register port** (`s_reg_*`, one access at a time; a response pulse
//!   `m_reg_resp_*`): the `db` and `hq` blocks decoded from the map's
//!   constants (array bases, strides, word offsets, field positions: see
//!   [`Decode`]), for the build's `2^Q` QPs and `2^C` CQs. Writes need all
//!   four strobes (else `err`, nothing changes); RO registers ignore
//!   writes; an address outside the blocks' mapped words answers `err`.
//!   Writing `hq.sq_cfg` / `rq_cfg` / `cq_cfg` (re)starts that ring: its
//!   indices, held WQE and error bits go to 0.
//! - **State**: one block-RAM word per QP ([`QpRing`]) and per CQ
//!   ([`CqCtx`]), read, changed and written back by one state machine that
//!   does one thing at a time (a register access, a receive completion, a
//!   send completion, a receive-WQE lookup, a send-WQE fetch, in that
//!   priority), so there is no forwarding to get wrong.
//! - **Receive half**: `s_rq_req` with `pop` reads the first 32 bytes of
//!   the RWQE at `rq_ci` (`dma_rd`) and answers SGE 0 on `m_rq_resp`
//!   (`ok` = 0 when the ring is empty, the WQE has no SGE, or the read
//!   failed); without `pop` it answers the held SGE. `s_rcqe` writes one
//!   CQE (32 bytes, one `dma_wr` command) into the QP's receive CQ, for
//!   the oldest WQE taken and not completed (`rq_cc`: the responder
//!   completes receive WQEs in the order it took them, and may take
//!   several first); its WR_ID is read again from the ring (one 32-byte
//!   `dma_rd`), its index is the CQE's `WQE_INDEX`.
//!   `RCQE_FLUSH` (the QP went to Error) sets the ring's flush mark: the
//!   fetcher's round robin then completes every receive WQE not completed
//!   (`rq_cc` up to `rq_pi`, one CQE per turn, WR_ID read from the ring)
//!   with `WR_FLUSH_ERR`, and any posted later; lookups answer not ok and
//!   the QP's later completions are dropped (their WQEs were flushed),
//!   until `rq_cfg` restarts the ring (a driver restarts its rings on the
//!   modify to Reset).
//!   An `rq_pi` doorbell that moves the producer index by n > 0 (and is
//!   not beyond the ring) offers `m_post_recv` (QPN, n): `resp_chk`'s
//!   `POST_RECV` credits for its RNR decision. The offer is held until
//!   taken and the block serves nothing else meanwhile.
//! - **Send half**: an `sq_pi` doorbell marks the QP in a pending bitmap,
//!   served round robin (one WQE per pending QP per turn; with nothing
//!   pending the scanner jumps to the QP rung); the fetcher reads
//!   the first [`SWQE_READ`] = 80 bytes of each SWQE (all but SGEs 1–3),
//!   decodes them and offers them on `m_wqe`
//!   (ibverbs opcodes → `req_engine` `OP_*`). At most [`SQ_WINDOW`] WQEs per
//!   QP are fetched and not completed. `m_wqe_signaled` is always 1: every
//!   WQE completes on `s_scqe`, so `sq_ci` and `CQE.WQE_INDEX` stay exact;
//!   this block writes the CQE only if the host asked (`signaled`) or the
//!   status is an error. An SWQE with an unknown opcode, `inline`, or more
//!   than one SGE (not supported yet) completes with `loc-qp-op-err` in its
//!   turn (after the WQEs before it), and its send queue stops (`sq_err`);
//!   a failed fetch likewise with `loc-access-err`.
//! - **CQEs**: only while the ring has room (`ring::has_room(pi, cq_ci)`),
//!   else the CQ's `ERROR` bit and nothing more is written to it. The phase
//!   bit is `queue::cqe::phase(pi)`. An armed CQ (`db.cq_arm`) pulses
//!   `m_event` once after its next CQE's write completed (`SOLICITED`:
//!   only for a receive CQE whose message's last packet had SE, `s_rcqe_se`,
//!   or a CQE in error); arming a CQ that already holds unpolled CQEs fires
//!   at once.
//! - **Bad doorbells**: a producer index beyond the ring (`ring::beyond`
//!   against the hardware consumer index) stores the index, sets the ring's
//!   error (no fetch; receive lookups answer not ok) and pulses `m_qp_err`.

use crate::bram::Bram;
use crate::dma::{DmaRd, DmaWr};
use crate::req_engine::{
    OP_CMP_SWAP, OP_FETCH_ADD, OP_READ, OP_SEND, OP_SEND_IMM, OP_SEND_INV, OP_WRITE, OP_WRITE_IMM,
    ST_FLUSH, ST_LOC_LEN, ST_LOC_PROT, ST_REM_ACCESS, ST_REM_INV_REQ, ST_REM_OP, ST_RETRY_EXC,
    ST_RNR_RETRY_EXC, ST_SUCCESS,
};
use crate::resp_exec::{RCQE_FAILED, RCQE_FLUSH, RCQE_LOC_LEN, RCQE_LOC_QP_OP, RCQE_OK};
use crate::stream::check_width;
use roce_regs::queue::{cqe, rwqe, swqe, SendFlag, WcOpcode, WcStatus, WrOpcode};
use roce_regs::{db, hq};
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

/// Byte-address bits of the register port (the CSR window's).
pub const ADDR_BITS: usize = crate::csr::ADDR_BITS;
/// Send WQEs per QP fetched and not yet completed, at most (one
/// `signaled` bit each in the QP's word).
pub const SQ_WINDOW: usize = 16;
/// Bits of the WQE capture register: one send WQE.
const CAP_BITS: usize = 1024;
const _: () = assert!(CAP_BITS == roce_regs::queue::SWQE_SIZE as usize * 8);
/// Bytes of a send WQE read: everything before the SGE area, and SGE 0
/// (inline data is read later, by `req_engine`, where it lies).
pub const SWQE_READ: usize = 0x50;
const _: () = assert!(
    swqe::SGE_LKEY.offset as usize + 4 <= SWQE_READ
        && swqe::INLINE_DATA.offset as usize == swqe::SGE_ADDR.offset as usize
        && swqe::UD_QKEY.offset as usize + 4 <= swqe::SGE_ADDR.offset as usize
        && SWQE_READ <= CAP_BITS / 8
);
/// Bytes of a receive WQE read: WR_ID, NUM_SGE and SGE 0.
pub const RWQE_READ: usize = 32;
const _: () = assert!(
    rwqe::SGE_LKEY.offset as usize + 4 <= RWQE_READ && (rwqe::NUM_SGE.offset as usize) < RWQE_READ
);
const CQE_BITS: usize = roce_regs::queue::CQE_SIZE as usize * 8;
const _: () = assert!(CQE_BITS == 256);

/// Per-QP ring state (one block-RAM word).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct QpRing {
    pub sq_base: Bits<64>,
    pub rq_base: Bits<64>,
    pub sq_log: Bits<4>,
    pub rq_log: Bits<4>,
    pub sq_cqn: Bits<16>,
    pub rq_cqn: Bits<16>,
    /// Doorbell (host producer index).
    pub sq_pi: Bits<16>,
    /// Next send WQE to fetch.
    pub sq_fi: Bits<16>,
    /// Send WQEs completed.
    pub sq_ci: Bits<16>,
    /// `signaled` of the WQEs in flight, bit `index mod SQ_WINDOW`.
    pub sq_sig: Bits<16>,
    /// The send queue stopped (bad doorbell, bad WQE).
    pub sq_err: Bit,
    /// The WQE at `sq_fi` is bad; it completes when `sq_ci` reaches it.
    pub sq_bad: Bit,
    pub bad_st: Bits<8>,
    pub bad_op: Bits<8>,
    pub bad_wr_id: Bits<64>,
    pub rq_pi: Bits<16>,
    pub rq_ci: Bits<16>,
    /// Receive WQEs completed: the next receive CQE completes WQE
    /// `rq_cc` (the responder completes them in the order it took them,
    /// and may take several before completing the first).
    pub rq_cc: Bits<16>,
    pub rq_err: Bit,
    /// The receive queue flushes (the QP is in Error).
    pub rq_fl: Bit,
    /// The receive WQE in use (popped last): its answer, index and wr_id.
    pub rq_ok: Bit,
    pub rq_idx: Bits<16>,
    pub rq_wr_id: Bits<64>,
    pub rq_key: Bits<32>,
    pub rq_va: Bits<64>,
    pub rq_len: Bits<32>,
}

/// Per-CQ state (one block-RAM word).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct CqCtx {
    pub base: Bits<64>,
    pub log: Bits<4>,
    pub pi: Bits<16>,
    /// Host consumer index (`db.cq_ci`).
    pub ci: Bits<16>,
    pub armed: Bit,
    pub sol: Bit,
    pub err: Bit,
}

/// A work request on `m_wqe` (req_engine's `s_wqe`).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct WqeOut {
    pub qpn: Bits<24>,
    pub op: Bits<3>,
    pub solicited: Bit,
    pub fence: Bit,
    /// `lva` is the inline data's host physical address (`m_wqe_phys`).
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
}

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum St {
    Init,
    Idle,
    LdQp,
    LdCq,
    RegQp,
    RegCq,
    Rq,
    RqCmd,
    RqDec,
    Rc,
    RcCmd,
    RcW,
    Sc,
    ScPost,
    Fetch,
    FCmd,
    FDec,
    Cap,
    CqChk,
    CqCmd,
    CqPay,
    CqDone,
}

/// `req_engine`'s `OP_*` for an ibverbs `WrOpcode` value below 16: a
/// nibble per value, bit 3 = supported.
fn wr_op_table() -> u64 {
    let mut t = 0u64;
    for (wr, op) in [
        (WrOpcode::RdmaWrite, OP_WRITE),
        (WrOpcode::RdmaWriteWithImm, OP_WRITE_IMM),
        (WrOpcode::Send, OP_SEND),
        (WrOpcode::SendWithImm, OP_SEND_IMM),
        (WrOpcode::RdmaRead, OP_READ),
        (WrOpcode::AtomicCmpAndSwp, OP_CMP_SWAP),
        (WrOpcode::AtomicFetchAndAdd, OP_FETCH_ADD),
        (WrOpcode::SendWithInv, OP_SEND_INV),
    ] {
        assert!(wr.value() < 16 && op < 8);
        t |= (8 | op) << (4 * wr.value());
    }
    t
}

/// `WcOpcode` of a send completion per `OP_*`: a byte per op.
fn wc_op_table() -> u64 {
    let mut t = 0u64;
    for (op, wc) in [
        (OP_SEND, WcOpcode::Send),
        (OP_SEND_IMM, WcOpcode::Send),
        (OP_SEND_INV, WcOpcode::Send),
        (OP_WRITE, WcOpcode::RdmaWrite),
        (OP_WRITE_IMM, WcOpcode::RdmaWrite),
        (OP_READ, WcOpcode::RdmaRead),
        (OP_CMP_SWAP, WcOpcode::CompSwap),
        (OP_FETCH_ADD, WcOpcode::FetchAdd),
    ] {
        t |= u64::from(wc.value()) << (8 * op);
    }
    t
}

/// `WcStatus` per `req_engine` `ST_*` (16 bytes; unknown codes
/// `general-err`).
pub fn st_table() -> u128 {
    let map = [
        (ST_SUCCESS, WcStatus::Success),
        (ST_LOC_LEN, WcStatus::LocLenErr),
        (ST_LOC_PROT, WcStatus::LocProtErr),
        (ST_FLUSH, WcStatus::WrFlushErr),
        (ST_REM_INV_REQ, WcStatus::RemInvReqErr),
        (ST_REM_ACCESS, WcStatus::RemAccessErr),
        (ST_REM_OP, WcStatus::RemOpErr),
        (ST_RETRY_EXC, WcStatus::RetryExcErr),
        (ST_RNR_RETRY_EXC, WcStatus::RnrRetryExcErr),
    ];
    (0..16u64)
        .map(|s| {
            let wc = map
                .iter()
                .find(|(k, _)| *k == s)
                .map_or(WcStatus::GeneralErr, |(_, w)| *w);
            u128::from(wc.value()) << (8 * s)
        })
        .fold(0, |a, b| a | b)
}

/// `WcStatus` per `resp_exec` `RCQE_*` (8 bytes; `RCQE_FAILED` and unknown
/// codes `general-err`, as `host_rings::rcqe_to_cqe`; `RCQE_FLUSH`'s
/// flushed WQEs `wr-flush-err`).
pub fn rcqe_st_table() -> u64 {
    let map = [
        (RCQE_OK, WcStatus::Success),
        (RCQE_LOC_LEN, WcStatus::LocLenErr),
        (RCQE_LOC_QP_OP, WcStatus::LocQpOpErr),
        (RCQE_FAILED, WcStatus::GeneralErr),
        (RCQE_FLUSH, WcStatus::WrFlushErr),
    ];
    (0..8u64)
        .map(|s| {
            let wc = map
                .iter()
                .find(|(k, _)| *k == s)
                .map_or(WcStatus::GeneralErr, |(_, w)| *w);
            u64::from(wc.value()) << (8 * s)
        })
        .fold(0, |a, b| a | b)
}

/// How the register port decodes one array of the map: `2^n` elements
/// of `stride` bytes from `base` (a window offset aligned to the whole
/// array), compared as `addr >> shift == base >> shift`.
#[derive(Clone, Copy, Debug)]
pub struct Decode {
    pub base: u32,
    pub stride: u32,
    pub shift: u32,
}

impl Decode {
    fn new(base: u32, stride: u32, count_log: usize) -> Decode {
        assert!(stride.is_power_of_two() && stride <= 32);
        let shift = stride.trailing_zeros() + count_log as u32;
        assert_eq!(base % (1 << shift), 0, "array at {base:#x} not aligned");
        Decode {
            base,
            stride,
            shift,
        }
    }
}

fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.into())
}

fn word(reg: u32, first: u32) -> Constant<Bits<5>> {
    c((reg - first) as u64)
}

/// The host interface: data width `W` (`K` = W/8), `2^Q` QPs (`NQ` =
/// 2^Q, the fetch-pending bitmap), `2^C` CQs.
#[derive(LogicBlock)]
pub struct HostIf<const W: usize, const K: usize, const Q: usize, const NQ: usize, const C: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Clearing the context RAMs after reset.
    pub busy: Signal<Out, Bit>,
    // Register port.
    pub s_reg_valid: Signal<In, Bit>,
    pub s_reg_ready: Signal<Out, Bit>,
    pub s_reg_write: Signal<In, Bit>,
    pub s_reg_addr: Signal<In, Bits<ADDR_BITS>>,
    pub s_reg_wdata: Signal<In, Bits<32>>,
    pub s_reg_strb: Signal<In, Bits<4>>,
    pub m_reg_resp_valid: Signal<Out, Bit>,
    pub m_reg_resp_rdata: Signal<Out, Bits<32>>,
    pub m_reg_resp_err: Signal<Out, Bit>,
    // Work requests to req_engine (its s_wqe_*).
    pub m_wqe_valid: Signal<Out, Bit>,
    pub m_wqe_ready: Signal<In, Bit>,
    pub m_wqe_qpn: Signal<Out, Bits<24>>,
    pub m_wqe_op: Signal<Out, Bits<3>>,
    pub m_wqe_signaled: Signal<Out, Bit>,
    pub m_wqe_solicited: Signal<Out, Bit>,
    pub m_wqe_fence: Signal<Out, Bit>,
    pub m_wqe_wr_id: Signal<Out, Bits<64>>,
    pub m_wqe_lkey: Signal<Out, Bits<32>>,
    pub m_wqe_lva: Signal<Out, Bits<64>>,
    /// An inline WQE: `lva` is the physical address of its data in the
    /// send queue (`INLINE_DATA`), `len` its `INLINE_LEN`, `lkey` 0.
    pub m_wqe_phys: Signal<Out, Bit>,
    pub m_wqe_len: Signal<Out, Bits<32>>,
    pub m_wqe_rva: Signal<Out, Bits<64>>,
    pub m_wqe_rkey: Signal<Out, Bits<32>>,
    pub m_wqe_imm: Signal<Out, Bits<32>>,
    pub m_wqe_swap: Signal<Out, Bits<64>>,
    pub m_wqe_compare: Signal<Out, Bits<64>>,
    // Send completions from req_engine (its m_scqe_*).
    pub s_scqe_valid: Signal<In, Bit>,
    pub s_scqe_ready: Signal<Out, Bit>,
    pub s_scqe_qpn: Signal<In, Bits<24>>,
    pub s_scqe_wr_id: Signal<In, Bits<64>>,
    pub s_scqe_status: Signal<In, Bits<4>>,
    pub s_scqe_opcode: Signal<In, Bits<3>>,
    pub s_scqe_byte_len: Signal<In, Bits<32>>,
    // Receive WQE lookups from resp_exec (its m_rq_req_* / s_rq_resp_*).
    pub s_rq_req_valid: Signal<In, Bit>,
    pub s_rq_req_ready: Signal<Out, Bit>,
    pub s_rq_req_qpn: Signal<In, Bits<24>>,
    pub s_rq_req_pop: Signal<In, Bit>,
    pub m_rq_resp_valid: Signal<Out, Bit>,
    pub m_rq_resp_ready: Signal<In, Bit>,
    pub m_rq_resp_ok: Signal<Out, Bit>,
    pub m_rq_resp_key: Signal<Out, Bits<32>>,
    pub m_rq_resp_va: Signal<Out, Bits<64>>,
    pub m_rq_resp_len: Signal<Out, Bits<32>>,
    // Receive completions from resp_exec (its m_rcqe_*).
    pub s_rcqe_valid: Signal<In, Bit>,
    pub s_rcqe_ready: Signal<Out, Bit>,
    pub s_rcqe_qpn: Signal<In, Bits<24>>,
    pub s_rcqe_status: Signal<In, Bits<3>>,
    pub s_rcqe_opcode: Signal<In, Bits<8>>,
    pub s_rcqe_len: Signal<In, Bits<32>>,
    pub s_rcqe_imm: Signal<In, Bits<32>>,
    /// SE of the message's last packet: a CQ armed for solicited events
    /// fires on this CQE.
    pub s_rcqe_se: Signal<In, Bit>,
    // Events: an armed CQ's CQE written; a ring's bad doorbell or bad WQE.
    pub m_event_valid: Signal<Out, Bit>,
    pub m_event_cqn: Signal<Out, Bits<16>>,
    pub m_qp_err_valid: Signal<Out, Bit>,
    pub m_qp_err_qpn: Signal<Out, Bits<24>>,
    /// Receive WQEs posted: an `rq_pi` doorbell that moved the producer
    /// index by `count` (resp_chk's `POST_RECV` event). Held until taken;
    /// the block does nothing else meanwhile, so none is lost.
    pub m_post_recv_valid: Signal<Out, Bit>,
    pub m_post_recv_ready: Signal<In, Bit>,
    pub m_post_recv_qpn: Signal<Out, Bits<24>>,
    pub m_post_recv_count: Signal<Out, Bits<16>>,
    // AXI4 master (dma_wr's write channels, dma_rd's read channels).
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
    /// CQEs not written because their CQ was full (it went to ERROR).
    pub cnt_cq_overrun: Signal<Out, Bits<32>>,

    dw: DmaWr<W, K>,
    dr: DmaRd<W, K>,
    qram: Bram<QpRing, Q>,
    cram: Bram<CqCtx, C>,

    state: DFF<St>,
    lret: DFF<St>,
    cret: DFF<St>,
    capret: DFF<St>,
    ia: DFF<Bits<16>>,
    wb_q: DFF<Bit>,
    wb_c: DFF<Bit>,
    qa: DFF<Bits<Q>>,
    ca: DFF<Bits<C>>,
    qc: DFF<QpRing>,
    cc: DFF<CqCtx>,
    pend: DFF<Bits<NQ>>,
    ptr: DFF<Bits<Q>>,
    // The register access in progress.
    r_write: DFF<Bit>,
    r_ok: DFF<Bit>,
    r_wdata: DFF<Bits<32>>,
    r_word: DFF<Bits<5>>,
    r_grp: DFF<Bits<3>>,
    resp_v: DFF<Bit>,
    resp_d: DFF<Bits<32>>,
    resp_e: DFF<Bit>,
    // The lookup or completion in progress.
    pop: DFF<Bit>,
    /// The completion in progress is the fetcher's flush of a WQE.
    fl_go: DFF<Bit>,
    i_st: DFF<Bits<4>>,
    i_op: DFF<Bits<8>>,
    i_len: DFF<Bits<32>>,
    i_imm: DFF<Bits<32>>,
    i_se: DFF<Bit>,
    i_wr_id: DFF<Bits<64>>,
    i_qpn: DFF<Bits<24>>,
    // The CQE to write.
    k_wr_id: DFF<Bits<64>>,
    k_len: DFF<Bits<32>>,
    k_imm: DFF<Bits<32>>,
    k_qpn: DFF<Bits<24>>,
    k_idx: DFF<Bits<16>>,
    k_st: DFF<Bits<8>>,
    k_op: DFF<Bits<8>>,
    k_fl: DFF<Bits<8>>,
    k_sol: DFF<Bit>,
    k_cqn: DFF<Bits<16>>,
    fire: DFF<Bit>,
    cbuf: DFF<Bits<256>>,
    caddr: DFF<Bits<64>>,
    beat: DFF<Bits<8>>,
    // DMA read command and capture.
    raddr: DFF<Bits<64>>,
    rlen: DFF<Bits<32>>,
    cap: DFF<Bits<1024>>,
    cap_err: DFF<Bit>,
    // Outputs held.
    ow_v: DFF<Bit>,
    ow: DFF<WqeOut>,
    or_v: DFF<Bit>,
    or_ok: DFF<Bit>,
    or_key: DFF<Bits<32>>,
    or_va: DFF<Bits<64>>,
    or_len: DFF<Bits<32>>,
    ev_v: DFF<Bit>,
    ev_cqn: DFF<Bits<16>>,
    qe_v: DFF<Bit>,
    qe_qpn: DFF<Bits<24>>,
    pr_v: DFF<Bit>,
    pr_qpn: DFF<Bits<24>>,
    pr_cnt: DFF<Bits<16>>,
    overrun: DFF<Bits<32>>,

    // Per cycle.
    idle_ok: Signal<Local, Bit>,
    a: Signal<Local, Bits<ADDR_BITS>>,
    hit_dbq: Signal<Local, Bit>,
    hit_dbc: Signal<Local, Bit>,
    hit_hqc: Signal<Local, Bit>,
    hit_hqq: Signal<Local, Bit>,
    single_v: Signal<Local, Bit>,
    single_d: Signal<Local, Bits<32>>,
    take_reg: Signal<Local, Bit>,
    take_rc: Signal<Local, Bit>,
    take_sc: Signal<Local, Bit>,
    take_rq: Signal<Local, Bit>,
    take_f: Signal<Local, Bit>,
    pend_ptr: Signal<Local, Bit>,
    qbit: Signal<Local, Bits<NQ>>,
    wd16: Signal<Local, Bits<16>>,
    sq_size: Signal<Local, Bits<16>>,
    rq_size: Signal<Local, Bits<16>>,
    cq_size: Signal<Local, Bits<16>>,
    sq_mask: Signal<Local, Bits<16>>,
    rq_mask: Signal<Local, Bits<16>>,
    cq_mask: Signal<Local, Bits<16>>,
    sig_bit: Signal<Local, Bit>,
    op_idx: Signal<Local, Bits<8>>,
    op_ent: Signal<Local, Bits<4>>,
    op_ok: Signal<Local, Bit>,
    nsge: Signal<Local, Bits<8>>,
    ilen: Signal<Local, Bits<8>>,
    /// The captured send WQE is inline.
    inl: Signal<Local, Bit>,
    /// Its payload form is acceptable (inline: a SEND/WRITE within
    /// `MAX_INLINE`; else at most one SGE).
    pay_ok: Signal<Local, Bit>,
    flags: Signal<Local, Bits<8>>,
    phase: Signal<Local, Bit>,
    phase_w: Signal<Local, Bits<256>>,
    st_word: Signal<Local, Bits<32>>,
    st_idx: Signal<Local, Bits<8>>,
    wc_idx: Signal<Local, Bits<8>>,
    bad_wc_idx: Signal<Local, Bits<8>>,
    rd_qa: Signal<Local, Bits<Q>>,
    rd_ca: Signal<Local, Bits<C>>,
    c_q: Constant<Bits<8>>,
    c_c: Constant<Bits<8>>,
    one32: Constant<Bits<32>>,
    one256: Constant<Bits<256>>,
    zq: Constant<QpRing>,
    zc: Constant<CqCtx>,

    // Decoding (from roce_regs).
    dbq_sh: Constant<Bits<8>>,
    dbq_hi: Constant<Bits<ADDR_BITS>>,
    dbq_ssh: Constant<Bits<8>>,
    dbq_wm: Constant<Bits<5>>,
    dbc_sh: Constant<Bits<8>>,
    dbc_hi: Constant<Bits<ADDR_BITS>>,
    dbc_ssh: Constant<Bits<8>>,
    dbc_wm: Constant<Bits<5>>,
    hqc_sh: Constant<Bits<8>>,
    hqc_hi: Constant<Bits<ADDR_BITS>>,
    hqc_ssh: Constant<Bits<8>>,
    hqc_wm: Constant<Bits<5>>,
    hqq_sh: Constant<Bits<8>>,
    hqq_hi: Constant<Bits<ADDR_BITS>>,
    hqq_ssh: Constant<Bits<8>>,
    hqq_wm: Constant<Bits<5>>,
    a_db_id: Constant<Bits<ADDR_BITS>>,
    a_hq_id: Constant<Bits<ADDR_BITS>>,
    a_caps: Constant<Bits<ADDR_BITS>>,
    a_cq_count: Constant<Bits<ADDR_BITS>>,
    v_db_id: Constant<Bits<32>>,
    v_hq_id: Constant<Bits<32>>,
    v_caps: Constant<Bits<32>>,
    v_cq_count: Constant<Bits<32>>,
    w_sq_pi: Constant<Bits<5>>,
    w_rq_pi: Constant<Bits<5>>,
    w_cq_ci: Constant<Bits<5>>,
    w_cq_arm: Constant<Bits<5>>,
    w_cq_lo: Constant<Bits<5>>,
    w_cq_hi: Constant<Bits<5>>,
    w_cq_cfg: Constant<Bits<5>>,
    w_cq_st: Constant<Bits<5>>,
    w_sq_lo: Constant<Bits<5>>,
    w_sq_hi: Constant<Bits<5>>,
    w_rq_lo: Constant<Bits<5>>,
    w_rq_hi: Constant<Bits<5>>,
    w_sq_cfg: Constant<Bits<5>>,
    w_rq_cfg: Constant<Bits<5>>,
    w_sq_ci: Constant<Bits<5>>,
    w_rq_ci: Constant<Bits<5>>,
    f_log: Constant<Bits<8>>,
    f_cqn: Constant<Bits<8>>,
    f_arm: Constant<Bits<8>>,
    f_arm_sol: Constant<Bits<8>>,
    f_st_armed: Constant<Bits<8>>,
    f_st_sol: Constant<Bits<8>>,
    f_st_err: Constant<Bits<8>>,
    c32: Constant<Bits<8>>,
    one16: Constant<Bits<16>>,
    one_nq: Constant<Bits<NQ>>,
    win: Constant<Bits<16>>,
    init_last: Constant<Bits<16>>,
    nq_last: Constant<Bits<16>>,
    nc_last: Constant<Bits<16>>,
    sw_shift: Constant<Bits<8>>,
    rw_shift: Constant<Bits<8>>,
    cqe_shift: Constant<Bits<8>>,
    // Entry field positions (bit offsets in the captured entry / the CQE).
    o_sw_opcode: Constant<Bits<16>>,
    o_sw_opcode_hi: Constant<Bits<16>>,
    o_sw_flags: Constant<Bits<16>>,
    o_sw_num_sge: Constant<Bits<16>>,
    o_sw_inline_len: Constant<Bits<16>>,
    /// Byte offset of `INLINE_DATA` in a send WQE.
    inline_off: Constant<Bits<64>>,
    max_inline: Constant<Bits<8>>,
    /// `OP_READ`: the opcodes before it carry a payload (may be inline).
    op_rd: Constant<Bits<3>>,
    o_sw_imm: Constant<Bits<16>>,
    o_sw_wr_id: Constant<Bits<16>>,
    o_sw_raddr: Constant<Bits<16>>,
    o_sw_rkey: Constant<Bits<16>>,
    o_sw_cmp: Constant<Bits<16>>,
    /// `OP_FETCH_ADD`.
    op_fa: Constant<Bits<3>>,
    o_sw_swap: Constant<Bits<16>>,
    o_sw_sge_addr: Constant<Bits<16>>,
    o_sw_sge_len: Constant<Bits<16>>,
    o_sw_sge_key: Constant<Bits<16>>,
    o_rw_wr_id: Constant<Bits<16>>,
    o_rw_num_sge: Constant<Bits<16>>,
    o_rw_sge_addr: Constant<Bits<16>>,
    o_rw_sge_len: Constant<Bits<16>>,
    o_rw_sge_key: Constant<Bits<16>>,
    o_cq_wr_id: Constant<Bits<16>>,
    o_cq_len: Constant<Bits<16>>,
    o_cq_imm: Constant<Bits<16>>,
    o_cq_qpn: Constant<Bits<16>>,
    o_cq_idx: Constant<Bits<16>>,
    o_cq_st: Constant<Bits<16>>,
    o_cq_op: Constant<Bits<16>>,
    o_cq_fl: Constant<Bits<16>>,
    o_cq_phase: Constant<Bits<16>>,
    fl_fence: Constant<Bits<8>>,
    fl_signaled: Constant<Bits<8>>,
    fl_solicited: Constant<Bits<8>>,
    fl_inline: Constant<Bits<8>>,
    op_tab: Constant<Bits<64>>,
    wc_tab: Constant<Bits<64>>,
    st_tab: Constant<Bits<128>>,
    rst_tab: Constant<Bits<64>>,
    /// `RCQE_FLUSH`.
    st_rflush: Constant<Bits<4>>,
    st_qp_op: Constant<Bits<8>>,
    st_access: Constant<Bits<8>>,
    wc_recv: Constant<Bits<8>>,
    wc_recv_imm: Constant<Bits<8>>,
    wf_imm: Constant<Bits<8>>,
    wf_inv: Constant<Bits<8>>,
    // DMA shapes.
    cap_w: Constant<Bits<16>>,
    cap_top: Constant<Bits<16>>,
    rwqe_len: Constant<Bits<32>>,
    swqe_len: Constant<Bits<32>>,
    cqe_len: Constant<Bits<32>>,
    cq_beats_last: Constant<Bits<8>>,
    cq_keep: Constant<Bits<K>>,
    cq_step: Constant<Bits<16>>,
}

impl<const W: usize, const K: usize, const Q: usize, const NQ: usize, const C: usize>
    HostIf<W, K, Q, NQ, C>
{
    pub const QPS: usize = 1 << Q;
    pub const CQS: usize = 1 << C;

    pub fn new() -> Self {
        check_width("host_if", W, K);
        assert_eq!(NQ, 1 << Q, "host_if: NQ must be 2^Q");
        assert!((1..=10).contains(&Q), "host_if: Q={Q} out of 1..=10");
        assert!((1..=10).contains(&C), "host_if: C={C} out of 1..=10");
        assert!(1 << Q <= roce_regs::QP_COUNT && 1 << C <= roce_regs::CQ_COUNT);
        let dbq = Decode::new(db::sq_pi::ADDR, db::sq_pi::REG.stride, Q);
        let dbc = Decode::new(db::cq_ci::ADDR, db::cq_ci::REG.stride, C);
        let hqc = Decode::new(hq::cq_base_lo::ADDR, hq::cq_base_lo::REG.stride, C);
        let hqq = Decode::new(hq::sq_base_lo::ADDR, hq::sq_base_lo::REG.stride, Q);
        // Every register of an array sits in its first element's stride.
        for (r, d) in [
            (db::rq_pi::ADDR, dbq),
            (db::cq_arm::ADDR, dbc),
            (hq::cq_status::ADDR, hqc),
            (hq::rq_ci::ADDR, hqq),
        ] {
            assert!(r >= d.base && r < d.base + d.stride);
        }
        let sh = |d: Decode| c::<8>(d.shift as u64);
        let hi = |d: Decode| c::<ADDR_BITS>((d.base >> d.shift) as u64);
        let ssh = |d: Decode| c::<8>(d.stride.trailing_zeros() as u64);
        let wm = |d: Decode| c::<5>((d.stride - 1) as u64);
        let cap_off = |bytes: usize| CAP_BITS - bytes.div_ceil(K) * W;
        let sw_base = cap_off(SWQE_READ);
        let rw_base = cap_off(RWQE_READ);
        let o = |base: usize, f: roce_regs::queue::QField| c::<16>((base + f.bit_of(0)) as u64);
        let cq_beats = (CQE_BITS / 8).div_ceil(K);
        let caps = hq::caps::REG.reset();
        let lo32 = |f: roce_regs::Field| c::<8>(f.lsb as u64);
        Self {
            clock: Default::default(),
            reset: Default::default(),
            busy: Default::default(),
            s_reg_valid: Default::default(),
            s_reg_ready: Default::default(),
            s_reg_write: Default::default(),
            s_reg_addr: Default::default(),
            s_reg_wdata: Default::default(),
            s_reg_strb: Default::default(),
            m_reg_resp_valid: Default::default(),
            m_reg_resp_rdata: Default::default(),
            m_reg_resp_err: Default::default(),
            m_wqe_valid: Default::default(),
            m_wqe_ready: Default::default(),
            m_wqe_qpn: Default::default(),
            m_wqe_op: Default::default(),
            m_wqe_signaled: Default::default(),
            m_wqe_solicited: Default::default(),
            m_wqe_fence: Default::default(),
            m_wqe_wr_id: Default::default(),
            m_wqe_lkey: Default::default(),
            m_wqe_lva: Default::default(),
            m_wqe_phys: Default::default(),
            m_wqe_len: Default::default(),
            m_wqe_rva: Default::default(),
            m_wqe_rkey: Default::default(),
            m_wqe_imm: Default::default(),
            m_wqe_swap: Default::default(),
            m_wqe_compare: Default::default(),
            s_scqe_valid: Default::default(),
            s_scqe_ready: Default::default(),
            s_scqe_qpn: Default::default(),
            s_scqe_wr_id: Default::default(),
            s_scqe_status: Default::default(),
            s_scqe_opcode: Default::default(),
            s_scqe_byte_len: Default::default(),
            s_rq_req_valid: Default::default(),
            s_rq_req_ready: Default::default(),
            s_rq_req_qpn: Default::default(),
            s_rq_req_pop: Default::default(),
            m_rq_resp_valid: Default::default(),
            m_rq_resp_ready: Default::default(),
            m_rq_resp_ok: Default::default(),
            m_rq_resp_key: Default::default(),
            m_rq_resp_va: Default::default(),
            m_rq_resp_len: Default::default(),
            s_rcqe_valid: Default::default(),
            s_rcqe_ready: Default::default(),
            s_rcqe_qpn: Default::default(),
            s_rcqe_status: Default::default(),
            s_rcqe_opcode: Default::default(),
            s_rcqe_len: Default::default(),
            s_rcqe_imm: Default::default(),
            s_rcqe_se: Default::default(),
            m_event_valid: Default::default(),
            m_event_cqn: Default::default(),
            m_qp_err_valid: Default::default(),
            m_qp_err_qpn: Default::default(),
            m_post_recv_valid: Default::default(),
            m_post_recv_ready: Default::default(),
            m_post_recv_qpn: Default::default(),
            m_post_recv_count: Default::default(),
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
            cnt_cq_overrun: Default::default(),
            dw: DmaWr::new(),
            dr: DmaRd::new(),
            qram: Bram::new(),
            cram: Bram::new(),
            state: Default::default(),
            lret: Default::default(),
            cret: Default::default(),
            capret: Default::default(),
            ia: Default::default(),
            wb_q: Default::default(),
            wb_c: Default::default(),
            qa: Default::default(),
            ca: Default::default(),
            qc: Default::default(),
            cc: Default::default(),
            pend: Default::default(),
            ptr: Default::default(),
            r_write: Default::default(),
            r_ok: Default::default(),
            r_wdata: Default::default(),
            r_word: Default::default(),
            r_grp: Default::default(),
            resp_v: Default::default(),
            resp_d: Default::default(),
            resp_e: Default::default(),
            pop: Default::default(),
            fl_go: Default::default(),
            i_st: Default::default(),
            i_op: Default::default(),
            i_len: Default::default(),
            i_imm: Default::default(),
            i_se: Default::default(),
            i_wr_id: Default::default(),
            i_qpn: Default::default(),
            k_wr_id: Default::default(),
            k_len: Default::default(),
            k_imm: Default::default(),
            k_qpn: Default::default(),
            k_idx: Default::default(),
            k_st: Default::default(),
            k_op: Default::default(),
            k_fl: Default::default(),
            k_sol: Default::default(),
            k_cqn: Default::default(),
            fire: Default::default(),
            cbuf: Default::default(),
            caddr: Default::default(),
            beat: Default::default(),
            raddr: Default::default(),
            rlen: Default::default(),
            cap: Default::default(),
            cap_err: Default::default(),
            ow_v: Default::default(),
            ow: Default::default(),
            or_v: Default::default(),
            or_ok: Default::default(),
            or_key: Default::default(),
            or_va: Default::default(),
            or_len: Default::default(),
            ev_v: Default::default(),
            ev_cqn: Default::default(),
            qe_v: Default::default(),
            qe_qpn: Default::default(),
            pr_v: Default::default(),
            pr_qpn: Default::default(),
            pr_cnt: Default::default(),
            overrun: Default::default(),
            idle_ok: Default::default(),
            a: Default::default(),
            hit_dbq: Default::default(),
            hit_dbc: Default::default(),
            hit_hqc: Default::default(),
            hit_hqq: Default::default(),
            single_v: Default::default(),
            single_d: Default::default(),
            take_reg: Default::default(),
            take_rc: Default::default(),
            take_sc: Default::default(),
            take_rq: Default::default(),
            take_f: Default::default(),
            pend_ptr: Default::default(),
            qbit: Default::default(),
            wd16: Default::default(),
            sq_size: Default::default(),
            rq_size: Default::default(),
            cq_size: Default::default(),
            sq_mask: Default::default(),
            rq_mask: Default::default(),
            cq_mask: Default::default(),
            sig_bit: Default::default(),
            op_idx: Default::default(),
            op_ent: Default::default(),
            op_ok: Default::default(),
            nsge: Default::default(),
            ilen: Default::default(),
            inl: Default::default(),
            pay_ok: Default::default(),
            flags: Default::default(),
            phase: Default::default(),
            phase_w: Default::default(),
            st_word: Default::default(),
            st_idx: Default::default(),
            wc_idx: Default::default(),
            bad_wc_idx: Default::default(),
            rd_qa: Default::default(),
            rd_ca: Default::default(),
            c_q: c(Q as u64),
            c_c: c(C as u64),
            one32: c(1),
            one256: c(1),
            zq: Constant::new(QpRing::default()),
            zc: Constant::new(CqCtx::default()),
            dbq_sh: sh(dbq),
            dbq_hi: hi(dbq),
            dbq_ssh: ssh(dbq),
            dbq_wm: wm(dbq),
            dbc_sh: sh(dbc),
            dbc_hi: hi(dbc),
            dbc_ssh: ssh(dbc),
            dbc_wm: wm(dbc),
            hqc_sh: sh(hqc),
            hqc_hi: hi(hqc),
            hqc_ssh: ssh(hqc),
            hqc_wm: wm(hqc),
            hqq_sh: sh(hqq),
            hqq_hi: hi(hqq),
            hqq_ssh: ssh(hqq),
            hqq_wm: wm(hqq),
            a_db_id: c(db::id::ADDR as u64),
            a_hq_id: c(hq::id::ADDR as u64),
            a_caps: c(hq::caps::ADDR as u64),
            a_cq_count: c(hq::cq_count::ADDR as u64),
            v_db_id: c(db::BLOCK.id_word() as u64),
            v_hq_id: c(hq::BLOCK.id_word() as u64),
            v_caps: c(caps as u64),
            v_cq_count: c(hq::cq_count::COUNT.val(1 << C) as u64),
            w_sq_pi: word(db::sq_pi::ADDR, dbq.base),
            w_rq_pi: word(db::rq_pi::ADDR, dbq.base),
            w_cq_ci: word(db::cq_ci::ADDR, dbc.base),
            w_cq_arm: word(db::cq_arm::ADDR, dbc.base),
            w_cq_lo: word(hq::cq_base_lo::ADDR, hqc.base),
            w_cq_hi: word(hq::cq_base_hi::ADDR, hqc.base),
            w_cq_cfg: word(hq::cq_cfg::ADDR, hqc.base),
            w_cq_st: word(hq::cq_status::ADDR, hqc.base),
            w_sq_lo: word(hq::sq_base_lo::ADDR, hqq.base),
            w_sq_hi: word(hq::sq_base_hi::ADDR, hqq.base),
            w_rq_lo: word(hq::rq_base_lo::ADDR, hqq.base),
            w_rq_hi: word(hq::rq_base_hi::ADDR, hqq.base),
            w_sq_cfg: word(hq::sq_cfg::ADDR, hqq.base),
            w_rq_cfg: word(hq::rq_cfg::ADDR, hqq.base),
            w_sq_ci: word(hq::sq_ci::ADDR, hqq.base),
            w_rq_ci: word(hq::rq_ci::ADDR, hqq.base),
            f_log: lo32(hq::sq_cfg::LOG_SIZE),
            f_cqn: lo32(hq::sq_cfg::CQN),
            f_arm: lo32(db::cq_arm::ARM),
            f_arm_sol: lo32(db::cq_arm::SOLICITED),
            f_st_armed: lo32(hq::cq_status::ARMED),
            f_st_sol: lo32(hq::cq_status::SOLICITED),
            f_st_err: lo32(hq::cq_status::ERROR),
            c32: c(32),
            one16: c(1),
            one_nq: c(1),
            win: c(SQ_WINDOW as u64),
            init_last: c((1u64 << Q.max(C)) - 1),
            nq_last: c((1u64 << Q) - 1),
            nc_last: c((1u64 << C) - 1),
            sw_shift: c(roce_regs::queue::SWQE_SIZE.trailing_zeros() as u64),
            rw_shift: c(roce_regs::queue::RWQE_SIZE.trailing_zeros() as u64),
            cqe_shift: c(roce_regs::queue::CQE_SIZE.trailing_zeros() as u64),
            o_sw_opcode: o(sw_base, swqe::OPCODE),
            o_sw_opcode_hi: c((sw_base + swqe::OPCODE.bit_of(0) + 4) as u64),
            o_sw_flags: o(sw_base, swqe::FLAGS),
            o_sw_num_sge: o(sw_base, swqe::NUM_SGE),
            o_sw_inline_len: o(sw_base, swqe::INLINE_LEN),
            inline_off: c(swqe::INLINE_DATA.offset as u64),
            max_inline: c(roce_regs::queue::MAX_INLINE as u64),
            op_rd: Constant::new(OP_READ.into()),
            o_sw_imm: o(sw_base, swqe::IMM_INV),
            o_sw_wr_id: o(sw_base, swqe::WR_ID),
            o_sw_raddr: o(sw_base, swqe::REMOTE_ADDR),
            o_sw_rkey: o(sw_base, swqe::RKEY),
            o_sw_cmp: o(sw_base, swqe::COMPARE_ADD),
            op_fa: Constant::new(OP_FETCH_ADD.into()),
            o_sw_swap: o(sw_base, swqe::SWAP),
            o_sw_sge_addr: o(sw_base, swqe::SGE_ADDR),
            o_sw_sge_len: o(sw_base, swqe::SGE_LENGTH),
            o_sw_sge_key: o(sw_base, swqe::SGE_LKEY),
            o_rw_wr_id: o(rw_base, rwqe::WR_ID),
            o_rw_num_sge: o(rw_base, rwqe::NUM_SGE),
            o_rw_sge_addr: o(rw_base, rwqe::SGE_ADDR),
            o_rw_sge_len: o(rw_base, rwqe::SGE_LENGTH),
            o_rw_sge_key: o(rw_base, rwqe::SGE_LKEY),
            o_cq_wr_id: o(0, cqe::WR_ID),
            o_cq_len: o(0, cqe::BYTE_LEN),
            o_cq_imm: o(0, cqe::IMM_INV),
            o_cq_qpn: o(0, cqe::QPN),
            o_cq_idx: o(0, cqe::WQE_INDEX),
            o_cq_st: o(0, cqe::STATUS),
            o_cq_op: o(0, cqe::OPCODE),
            o_cq_fl: o(0, cqe::FLAGS),
            o_cq_phase: o(0, cqe::PHASE),
            fl_fence: c(SendFlag::Fence.value() as u64),
            fl_signaled: c(SendFlag::Signaled.value() as u64),
            fl_solicited: c(SendFlag::Solicited.value() as u64),
            fl_inline: c(SendFlag::Inline.value() as u64),
            op_tab: c(wr_op_table()),
            wc_tab: c(wc_op_table()),
            st_tab: Constant::new(
                (Bits::<128>::from((st_table() >> 64) as u64) << 64u64)
                    | Bits::<128>::from(st_table() as u64),
            ),
            rst_tab: c(rcqe_st_table()),
            st_rflush: c(RCQE_FLUSH),
            st_qp_op: c(WcStatus::LocQpOpErr.value() as u64),
            st_access: c(WcStatus::LocAccessErr.value() as u64),
            wc_recv: c(WcOpcode::Recv.value() as u64),
            wc_recv_imm: c(WcOpcode::RecvRdmaWithImm.value() as u64),
            wf_imm: c(roce_regs::queue::WcFlag::WithImm.value() as u64),
            wf_inv: c(roce_regs::queue::WcFlag::WithInv.value() as u64),
            cap_w: c(W as u64),
            cap_top: c((CAP_BITS - W) as u64),
            rwqe_len: c(RWQE_READ as u64),
            swqe_len: c(SWQE_READ as u64),
            cqe_len: c(roce_regs::queue::CQE_SIZE as u64),
            cq_beats_last: c((cq_beats - 1) as u64),
            cq_keep: c(if K >= CQE_BITS / 8 {
                (1u64 << (CQE_BITS / 8)) - 1
            } else {
                u64::MAX >> (64 - K)
            }),
            cq_step: c(if W < CQE_BITS { W as u64 } else { 0 }),
        }
    }
}

impl<const W: usize, const K: usize, const Q: usize, const NQ: usize, const C: usize> Default
    for HostIf<W, K, Q, NQ, C>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const K: usize, const Q: usize, const NQ: usize, const C: usize> Logic
    for HostIf<W, K, Q, NQ, C>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, lret, cret, capret, ia, wb_q, wb_c, qa, ca, qc, cc, pend, ptr,
            r_write, r_ok, r_wdata, r_word, r_grp, resp_v, resp_d, resp_e, pop, fl_go, i_st, i_op,
            i_len, i_imm, i_se, i_wr_id, i_qpn, k_wr_id, k_len, k_imm, k_qpn, k_idx, k_st, k_op,
            k_fl, k_sol, k_cqn, fire, cbuf, caddr, beat, raddr, rlen, cap, cap_err, ow_v, ow, or_v,
            or_ok, or_key, or_va, or_len, ev_v, ev_cqn, qe_v, qe_qpn, pr_v, pr_qpn, pr_cnt,
            overrun
        );
        clock!(self, clock, dw, dr, qram, cram);
        self.dw.reset.next = self.reset.val();
        self.dr.reset.next = self.reset.val();

        // ---- AXI4 master: the two engines' channels.
        self.m_axi_awaddr.next = self.dw.m_axi_awaddr.val();
        self.m_axi_awlen.next = self.dw.m_axi_awlen.val();
        self.m_axi_awsize.next = self.dw.m_axi_awsize.val();
        self.m_axi_awburst.next = self.dw.m_axi_awburst.val();
        self.m_axi_awvalid.next = self.dw.m_axi_awvalid.val();
        self.dw.m_axi_awready.next = self.m_axi_awready.val();
        self.m_axi_wdata.next = self.dw.m_axi_wdata.val();
        self.m_axi_wstrb.next = self.dw.m_axi_wstrb.val();
        self.m_axi_wlast.next = self.dw.m_axi_wlast.val();
        self.m_axi_wvalid.next = self.dw.m_axi_wvalid.val();
        self.dw.m_axi_wready.next = self.m_axi_wready.val();
        self.dw.m_axi_bresp.next = self.m_axi_bresp.val();
        self.dw.m_axi_bvalid.next = self.m_axi_bvalid.val();
        self.m_axi_bready.next = self.dw.m_axi_bready.val();
        self.m_axi_araddr.next = self.dr.m_axi_araddr.val();
        self.m_axi_arlen.next = self.dr.m_axi_arlen.val();
        self.m_axi_arsize.next = self.dr.m_axi_arsize.val();
        self.m_axi_arburst.next = self.dr.m_axi_arburst.val();
        self.m_axi_arvalid.next = self.dr.m_axi_arvalid.val();
        self.dr.m_axi_arready.next = self.m_axi_arready.val();
        self.dr.m_axi_rdata.next = self.m_axi_rdata.val();
        self.dr.m_axi_rresp.next = self.m_axi_rresp.val();
        self.dr.m_axi_rlast.next = self.m_axi_rlast.val();
        self.dr.m_axi_rvalid.next = self.m_axi_rvalid.val();
        self.m_axi_rready.next = self.dr.m_axi_rready.val();

        // ---- Engine command defaults.
        self.dw.s_cmd_valid.next = false;
        self.dw.s_cmd_addr.next = self.caddr.q.val();
        self.dw.s_cmd_len.next = self.cqe_len.val();
        self.dw.s_cmd_last.next = true;
        self.dw.s_cmd_discard.next = false;
        self.dw.s_cmd_imm.next = false;
        self.dw.s_cmd_data.next = 0.into();
        self.dw.s_pay.tdata.next = bit_cast::<W, 256>(self.cbuf.q.val());
        self.dw.s_pay.tkeep.next = self.cq_keep.val();
        self.dw.s_pay.tlast.next = self.beat.q.val() == self.cq_beats_last.val();
        self.dw.s_pay.tuser.next = false;
        self.dw.s_pay.tvalid.next = false;
        self.dw.m_done_ready.next = false;
        self.dr.s_cmd_valid.next = false;
        self.dr.s_cmd_addr.next = self.raddr.q.val();
        self.dr.s_cmd_len.next = self.rlen.q.val();
        self.dr.s_cmd_last.next = true;
        self.dr.m_data.tready.next = false;

        // ---- RAM defaults: read at qa/ca, write back when asked.
        self.qram.read_enable.next = false;
        self.qram.read_address.next = self.qa.q.val();
        self.qram.write_enable.next = self.wb_q.q.val();
        self.qram.write_address.next = self.qa.q.val();
        self.qram.write_data.next = self.qc.q.val();
        self.cram.read_enable.next = false;
        self.cram.read_address.next = self.ca.q.val();
        self.cram.write_enable.next = self.wb_c.q.val();
        self.cram.write_address.next = self.ca.q.val();
        self.cram.write_data.next = self.cc.q.val();
        self.wb_q.d.next = false;
        self.wb_c.d.next = false;
        self.resp_v.d.next = false;
        self.ev_v.d.next = false;
        self.qe_v.d.next = false;
        if self.pr_v.q.val() & self.m_post_recv_ready.val() {
            self.pr_v.d.next = false;
        }

        // ---- Outputs.
        self.m_post_recv_valid.next = self.pr_v.q.val();
        self.m_post_recv_qpn.next = self.pr_qpn.q.val();
        self.m_post_recv_count.next = self.pr_cnt.q.val();
        self.busy.next = self.state.q.val() == St::Init;
        self.m_reg_resp_valid.next = self.resp_v.q.val();
        self.m_reg_resp_rdata.next = self.resp_d.q.val();
        self.m_reg_resp_err.next = self.resp_e.q.val();
        self.m_wqe_valid.next = self.ow_v.q.val();
        self.m_wqe_qpn.next = self.ow.q.val().qpn;
        self.m_wqe_op.next = self.ow.q.val().op;
        self.m_wqe_signaled.next = true;
        self.m_wqe_solicited.next = self.ow.q.val().solicited;
        self.m_wqe_fence.next = self.ow.q.val().fence;
        self.m_wqe_wr_id.next = self.ow.q.val().wr_id;
        self.m_wqe_lkey.next = self.ow.q.val().lkey;
        self.m_wqe_phys.next = self.ow.q.val().phys;
        self.m_wqe_lva.next = self.ow.q.val().lva;
        self.m_wqe_len.next = self.ow.q.val().len;
        self.m_wqe_rva.next = self.ow.q.val().rva;
        self.m_wqe_rkey.next = self.ow.q.val().rkey;
        self.m_wqe_imm.next = self.ow.q.val().imm;
        self.m_wqe_swap.next = self.ow.q.val().swap;
        self.m_wqe_compare.next = self.ow.q.val().compare;
        if self.ow_v.q.val() & self.m_wqe_ready.val() {
            self.ow_v.d.next = false;
        }
        self.m_rq_resp_valid.next = self.or_v.q.val();
        self.m_rq_resp_ok.next = self.or_ok.q.val();
        self.m_rq_resp_key.next = self.or_key.q.val();
        self.m_rq_resp_va.next = self.or_va.q.val();
        self.m_rq_resp_len.next = self.or_len.q.val();
        if self.or_v.q.val() & self.m_rq_resp_ready.val() {
            self.or_v.d.next = false;
        }
        self.m_event_valid.next = self.ev_v.q.val();
        self.m_event_cqn.next = self.ev_cqn.q.val();
        self.m_qp_err_valid.next = self.qe_v.q.val();
        self.m_qp_err_qpn.next = self.qe_qpn.q.val();
        self.cnt_cq_overrun.next = self.overrun.q.val();

        // ---- Ring arithmetic on the held contexts.
        self.sq_size.next = self.one16.val() << self.qc.q.val().sq_log;
        self.rq_size.next = self.one16.val() << self.qc.q.val().rq_log;
        self.cq_size.next = self.one16.val() << self.cc.q.val().log;
        self.sq_mask.next = self.sq_size.val() - 1;
        self.rq_mask.next = self.rq_size.val() - 1;
        self.cq_mask.next = self.cq_size.val() - 1;
        self.wd16.next = self.r_wdata.q.val().get_bits::<16>(0);
        self.qbit.next = self.one_nq.val() << self.qa.q.val();
        self.sig_bit.next =
            ((self.qc.q.val().sq_sig >> bit_cast::<4, 16>(self.qc.q.val().sq_ci)) & 1) != 0;
        self.phase.next = ((self.cc.q.val().pi >> self.cc.q.val().log) & 1) == 0;
        self.phase_w.next = 0.into();
        if self.phase.val() {
            self.phase_w.next = self.one256.val() << self.o_cq_phase.val();
        }
        self.st_word.next = bit_cast::<32, 16>(self.cc.q.val().pi);
        if self.cc.q.val().armed {
            self.st_word.next = self.st_word.val() | (self.one32.val() << self.f_st_armed.val());
        }
        if self.cc.q.val().sol {
            self.st_word.next = self.st_word.val() | (self.one32.val() << self.f_st_sol.val());
        }
        if self.cc.q.val().err {
            self.st_word.next = self.st_word.val() | (self.one32.val() << self.f_st_err.val());
        }
        self.st_idx.next = bit_cast::<8, 4>(self.i_st.q.val()) << 3;
        self.wc_idx.next = bit_cast::<8, 3>(self.i_op.q.val().get_bits::<3>(0)) << 3;
        self.rd_qa.next = self.qa.q.val();
        self.rd_ca.next = self.ca.q.val();

        // ---- Send WQE decode (from the capture register).
        self.flags.next = self
            .cap
            .q
            .val()
            .get_bits::<8>(self.o_sw_flags.val().index());
        self.nsge.next = self
            .cap
            .q
            .val()
            .get_bits::<8>(self.o_sw_num_sge.val().index());
        self.ilen.next = self
            .cap
            .q
            .val()
            .get_bits::<8>(self.o_sw_inline_len.val().index());
        self.inl.next = (self.flags.val() & self.fl_inline.val()) != 0;
        self.op_idx.next = bit_cast::<8, 4>(
            self.cap
                .q
                .val()
                .get_bits::<4>(self.o_sw_opcode.val().index()),
        ) << 2;
        self.op_ent.next = self.op_tab.val().get_bits::<4>(self.op_idx.val().index());
        self.op_ok.next = self.op_ent.val().get_bit(3)
            & (self
                .cap
                .q
                .val()
                .get_bits::<4>(self.o_sw_opcode_hi.val().index())
                == 0);
        if self.inl.val() {
            self.pay_ok.next = (self.op_ent.val().get_bits::<3>(0) < self.op_rd.val())
                & (self.ilen.val() <= self.max_inline.val());
        } else {
            self.pay_ok.next = self.nsge.val().get_bits::<7>(1) == 0;
        }

        self.bad_wc_idx.next = bit_cast::<8, 3>(self.op_ent.val().get_bits::<3>(0)) << 3;

        // ---- Register decode (of the port's address).
        self.a.next = self.s_reg_addr.val();
        self.hit_dbq.next = (self.a.val() >> self.dbq_sh.val()) == self.dbq_hi.val();
        self.hit_dbc.next = (self.a.val() >> self.dbc_sh.val()) == self.dbc_hi.val();
        self.hit_hqc.next = (self.a.val() >> self.hqc_sh.val()) == self.hqc_hi.val();
        self.hit_hqq.next = (self.a.val() >> self.hqq_sh.val()) == self.hqq_hi.val();
        self.single_v.next = true;
        self.single_d.next = 0.into();
        if self.a.val() == self.a_db_id.val() {
            self.single_d.next = self.v_db_id.val();
        } else if self.a.val() == self.a_hq_id.val() {
            self.single_d.next = self.v_hq_id.val();
        } else if self.a.val() == self.a_caps.val() {
            self.single_d.next = self.v_caps.val();
        } else if self.a.val() == self.a_cq_count.val() {
            self.single_d.next = self.v_cq_count.val();
        } else {
            self.single_v.next = false;
        }

        // ---- Arbitration (one operation at a time).
        self.idle_ok.next = (self.state.q.val() == St::Idle)
            & !self.wb_q.q.val()
            & !self.wb_c.q.val()
            & !self.pr_v.q.val();
        self.pend_ptr.next = ((self.pend.q.val() >> self.ptr.q.val()) & 1) != 0;
        self.take_reg.next = self.idle_ok.val() & self.s_reg_valid.val();
        self.take_rc.next = self.idle_ok.val() & !self.s_reg_valid.val() & self.s_rcqe_valid.val();
        self.take_sc.next = self.idle_ok.val()
            & !self.s_reg_valid.val()
            & !self.s_rcqe_valid.val()
            & self.s_scqe_valid.val();
        self.take_rq.next = self.idle_ok.val()
            & !self.s_reg_valid.val()
            & !self.s_rcqe_valid.val()
            & !self.s_scqe_valid.val()
            & self.s_rq_req_valid.val()
            & !self.or_v.q.val();
        self.take_f.next = self.idle_ok.val()
            & !self.s_reg_valid.val()
            & !self.s_rcqe_valid.val()
            & !self.s_scqe_valid.val()
            & !(self.s_rq_req_valid.val() & !self.or_v.q.val())
            & self.pend_ptr.val()
            & !self.ow_v.q.val();
        self.s_reg_ready.next = self.idle_ok.val();
        self.s_rcqe_ready.next = self.idle_ok.val() & !self.s_reg_valid.val();
        self.s_scqe_ready.next =
            self.idle_ok.val() & !self.s_reg_valid.val() & !self.s_rcqe_valid.val();
        self.s_rq_req_ready.next = self.idle_ok.val()
            & !self.s_reg_valid.val()
            & !self.s_rcqe_valid.val()
            & !self.s_scqe_valid.val()
            & !self.or_v.q.val();

        match self.state.q.val() {
            St::Init => {
                self.qram.write_enable.next = self.ia.q.val() <= self.nq_last.val();
                self.qram.write_address.next = bit_cast::<Q, 16>(self.ia.q.val());
                self.qram.write_data.next = self.zq.val();
                self.cram.write_enable.next = self.ia.q.val() <= self.nc_last.val();
                self.cram.write_address.next = bit_cast::<C, 16>(self.ia.q.val());
                self.cram.write_data.next = self.zc.val();
                self.ia.d.next = self.ia.q.val() + 1;
                if self.ia.q.val() == self.init_last.val() {
                    self.state.d.next = St::Idle;
                }
            }
            St::Idle => {
                if self.take_reg.val() {
                    self.r_write.d.next = self.s_reg_write.val();
                    self.r_wdata.d.next = self.s_reg_wdata.val();
                    self.r_ok.d.next = !self.s_reg_write.val() | (self.s_reg_strb.val() == 0xF);
                    if self.hit_dbq.val() {
                        self.r_grp.d.next = 1.into();
                        self.r_word.d.next =
                            bit_cast::<5, ADDR_BITS>(self.a.val()) & self.dbq_wm.val();
                        self.rd_qa.next =
                            bit_cast::<Q, ADDR_BITS>(self.a.val() >> self.dbq_ssh.val());
                        self.qa.d.next = self.rd_qa.val();
                        self.lret.d.next = St::RegQp;
                        self.state.d.next = St::LdQp;
                    } else if self.hit_hqq.val() {
                        self.r_grp.d.next = 4.into();
                        self.r_word.d.next =
                            bit_cast::<5, ADDR_BITS>(self.a.val()) & self.hqq_wm.val();
                        self.rd_qa.next =
                            bit_cast::<Q, ADDR_BITS>(self.a.val() >> self.hqq_ssh.val());
                        self.qa.d.next = self.rd_qa.val();
                        self.lret.d.next = St::RegQp;
                        self.state.d.next = St::LdQp;
                    } else if self.hit_dbc.val() {
                        self.r_grp.d.next = 2.into();
                        self.r_word.d.next =
                            bit_cast::<5, ADDR_BITS>(self.a.val()) & self.dbc_wm.val();
                        self.rd_ca.next =
                            bit_cast::<C, ADDR_BITS>(self.a.val() >> self.dbc_ssh.val());
                        self.ca.d.next = self.rd_ca.val();
                        self.lret.d.next = St::RegCq;
                        self.state.d.next = St::LdCq;
                    } else if self.hit_hqc.val() {
                        self.r_grp.d.next = 3.into();
                        self.r_word.d.next =
                            bit_cast::<5, ADDR_BITS>(self.a.val()) & self.hqc_wm.val();
                        self.rd_ca.next =
                            bit_cast::<C, ADDR_BITS>(self.a.val() >> self.hqc_ssh.val());
                        self.ca.d.next = self.rd_ca.val();
                        self.lret.d.next = St::RegCq;
                        self.state.d.next = St::LdCq;
                    } else {
                        // A single register (RO) or unmapped.
                        self.resp_v.d.next = true;
                        self.resp_e.d.next = !self.single_v.val()
                            | (self.s_reg_write.val() & (self.s_reg_strb.val() != 0xF));
                        if self.s_reg_write.val() {
                            self.resp_d.d.next = 0.into();
                        } else {
                            self.resp_d.d.next = self.single_d.val();
                        }
                    }
                } else if self.take_rc.val() {
                    self.i_qpn.d.next = self.s_rcqe_qpn.val();
                    self.i_st.d.next = bit_cast::<4, 3>(self.s_rcqe_status.val());
                    self.i_op.d.next = self.s_rcqe_opcode.val();
                    self.i_len.d.next = self.s_rcqe_len.val();
                    self.i_imm.d.next = self.s_rcqe_imm.val();
                    self.i_se.d.next = self.s_rcqe_se.val();
                    self.rd_qa.next = bit_cast::<Q, 24>(self.s_rcqe_qpn.val());
                    self.qa.d.next = self.rd_qa.val();
                    if (self.s_rcqe_qpn.val() >> self.c_q.val()) == 0 {
                        self.lret.d.next = St::Rc;
                        self.state.d.next = St::LdQp;
                    }
                } else if self.take_sc.val() {
                    self.i_qpn.d.next = self.s_scqe_qpn.val();
                    self.i_st.d.next = self.s_scqe_status.val();
                    self.i_op.d.next = bit_cast::<8, 3>(self.s_scqe_opcode.val());
                    self.i_len.d.next = self.s_scqe_byte_len.val();
                    self.i_wr_id.d.next = self.s_scqe_wr_id.val();
                    self.rd_qa.next = bit_cast::<Q, 24>(self.s_scqe_qpn.val());
                    self.qa.d.next = self.rd_qa.val();
                    if (self.s_scqe_qpn.val() >> self.c_q.val()) == 0 {
                        self.lret.d.next = St::Sc;
                        self.state.d.next = St::LdQp;
                    }
                } else if self.take_rq.val() {
                    self.pop.d.next = self.s_rq_req_pop.val();
                    self.rd_qa.next = bit_cast::<Q, 24>(self.s_rq_req_qpn.val());
                    self.qa.d.next = self.rd_qa.val();
                    if (self.s_rq_req_qpn.val() >> self.c_q.val()) == 0 {
                        self.lret.d.next = St::Rq;
                        self.state.d.next = St::LdQp;
                    } else {
                        self.or_v.d.next = true;
                        self.or_ok.d.next = false;
                    }
                } else if self.take_f.val() {
                    self.rd_qa.next = self.ptr.q.val();
                    self.qa.d.next = self.ptr.q.val();
                    self.lret.d.next = St::Fetch;
                    self.state.d.next = St::LdQp;
                } else if !self.pend_ptr.val() {
                    self.ptr.d.next = self.ptr.q.val() + 1;
                }
                // The read for the chosen QP or CQ (at the index just decoded).
                self.qram.read_enable.next = true;
                self.qram.read_address.next = self.rd_qa.val();
                self.cram.read_enable.next = true;
                self.cram.read_address.next = self.rd_ca.val();
            }
            St::LdQp => {
                self.qc.d.next = self.qram.read_data.val();
                self.state.d.next = self.lret.q.val();
            }
            St::LdCq => {
                self.cc.d.next = self.cram.read_data.val();
                self.state.d.next = self.lret.q.val();
            }
            // ---------------- Registers of a QP.
            St::RegQp => {
                self.resp_v.d.next = true;
                self.resp_e.d.next = !self.r_ok.q.val();
                self.resp_d.d.next = 0.into();
                self.state.d.next = St::Idle;
                if self.r_grp.q.val() == 1 {
                    if self.r_word.q.val() == self.w_sq_pi.val() {
                        self.resp_d.d.next = bit_cast::<32, 16>(self.qc.q.val().sq_pi);
                        if self.r_write.q.val() & self.r_ok.q.val() {
                            self.qc.d.next.sq_pi = self.wd16.val();
                            self.wb_q.d.next = true;
                            if (self.wd16.val() - self.qc.q.val().sq_ci) > self.sq_size.val() {
                                self.qc.d.next.sq_err = true;
                                self.qe_v.d.next = true;
                                self.qe_qpn.d.next = bit_cast::<24, Q>(self.qa.q.val());
                            } else {
                                self.pend.d.next = self.pend.q.val() | self.qbit.val();
                                // A scanner with nothing pending jumps to
                                // the QP just rung (else it goes round).
                                if self.pend.q.val() == 0 {
                                    self.ptr.d.next = self.qa.q.val();
                                }
                            }
                        }
                    } else if self.r_word.q.val() == self.w_rq_pi.val() {
                        self.resp_d.d.next = bit_cast::<32, 16>(self.qc.q.val().rq_pi);
                        if self.r_write.q.val() & self.r_ok.q.val() {
                            self.qc.d.next.rq_pi = self.wd16.val();
                            self.wb_q.d.next = true;
                            if (self.wd16.val() - self.qc.q.val().rq_ci) > self.rq_size.val() {
                                self.qc.d.next.rq_err = true;
                                self.qe_v.d.next = true;
                                self.qe_qpn.d.next = bit_cast::<24, Q>(self.qa.q.val());
                            } else if self.wd16.val() != self.qc.q.val().rq_pi {
                                self.pr_v.d.next = true;
                                self.pr_qpn.d.next = bit_cast::<24, Q>(self.qa.q.val());
                                self.pr_cnt.d.next = self.wd16.val() - self.qc.q.val().rq_pi;
                                if self.qc.q.val().rq_fl {
                                    // Posted in Error: flushed in turn.
                                    self.pend.d.next = self.pend.q.val() | self.qbit.val();
                                    if self.pend.q.val() == 0 {
                                        self.ptr.d.next = self.qa.q.val();
                                    }
                                }
                            }
                        }
                    } else {
                        self.resp_e.d.next = true;
                    }
                } else {
                    if self.r_word.q.val() == self.w_sq_lo.val() {
                        self.resp_d.d.next = bit_cast::<32, 64>(self.qc.q.val().sq_base);
                        if self.r_write.q.val() & self.r_ok.q.val() {
                            self.qc.d.next.sq_base = (self.qc.q.val().sq_base >> self.c32.val()
                                << self.c32.val())
                                | bit_cast::<64, 32>(self.r_wdata.q.val());
                            self.wb_q.d.next = true;
                        }
                    } else if self.r_word.q.val() == self.w_sq_hi.val() {
                        self.resp_d.d.next =
                            bit_cast::<32, 64>(self.qc.q.val().sq_base >> self.c32.val());
                        if self.r_write.q.val() & self.r_ok.q.val() {
                            self.qc.d.next.sq_base =
                                bit_cast::<64, 32>(bit_cast::<32, 64>(self.qc.q.val().sq_base))
                                    | (bit_cast::<64, 32>(self.r_wdata.q.val()) << self.c32.val());
                            self.wb_q.d.next = true;
                        }
                    } else if self.r_word.q.val() == self.w_rq_lo.val() {
                        self.resp_d.d.next = bit_cast::<32, 64>(self.qc.q.val().rq_base);
                        if self.r_write.q.val() & self.r_ok.q.val() {
                            self.qc.d.next.rq_base = (self.qc.q.val().rq_base >> self.c32.val()
                                << self.c32.val())
                                | bit_cast::<64, 32>(self.r_wdata.q.val());
                            self.wb_q.d.next = true;
                        }
                    } else if self.r_word.q.val() == self.w_rq_hi.val() {
                        self.resp_d.d.next =
                            bit_cast::<32, 64>(self.qc.q.val().rq_base >> self.c32.val());
                        if self.r_write.q.val() & self.r_ok.q.val() {
                            self.qc.d.next.rq_base =
                                bit_cast::<64, 32>(bit_cast::<32, 64>(self.qc.q.val().rq_base))
                                    | (bit_cast::<64, 32>(self.r_wdata.q.val()) << self.c32.val());
                            self.wb_q.d.next = true;
                        }
                    } else if self.r_word.q.val() == self.w_sq_cfg.val() {
                        self.resp_d.d.next = (bit_cast::<32, 4>(self.qc.q.val().sq_log)
                            << self.f_log.val())
                            | (bit_cast::<32, 16>(self.qc.q.val().sq_cqn) << self.f_cqn.val());
                        if self.r_write.q.val() & self.r_ok.q.val() {
                            self.qc.d.next.sq_log =
                                bit_cast::<4, 32>(self.r_wdata.q.val() >> self.f_log.val());
                            self.qc.d.next.sq_cqn =
                                bit_cast::<16, 32>(self.r_wdata.q.val() >> self.f_cqn.val());
                            self.qc.d.next.sq_pi = 0.into();
                            self.qc.d.next.sq_fi = 0.into();
                            self.qc.d.next.sq_ci = 0.into();
                            self.qc.d.next.sq_sig = 0.into();
                            self.qc.d.next.sq_err = false;
                            self.qc.d.next.sq_bad = false;
                            self.wb_q.d.next = true;
                        }
                    } else if self.r_word.q.val() == self.w_rq_cfg.val() {
                        self.resp_d.d.next = (bit_cast::<32, 4>(self.qc.q.val().rq_log)
                            << self.f_log.val())
                            | (bit_cast::<32, 16>(self.qc.q.val().rq_cqn) << self.f_cqn.val());
                        if self.r_write.q.val() & self.r_ok.q.val() {
                            self.qc.d.next.rq_log =
                                bit_cast::<4, 32>(self.r_wdata.q.val() >> self.f_log.val());
                            self.qc.d.next.rq_cqn =
                                bit_cast::<16, 32>(self.r_wdata.q.val() >> self.f_cqn.val());
                            self.qc.d.next.rq_pi = 0.into();
                            self.qc.d.next.rq_ci = 0.into();
                            self.qc.d.next.rq_err = false;
                            self.qc.d.next.rq_fl = false;
                            self.qc.d.next.rq_ok = false;
                            self.qc.d.next.rq_idx = 0.into();
                            self.qc.d.next.rq_cc = 0.into();
                            self.wb_q.d.next = true;
                        }
                    } else if self.r_word.q.val() == self.w_sq_ci.val() {
                        self.resp_d.d.next = bit_cast::<32, 16>(self.qc.q.val().sq_ci);
                    } else if self.r_word.q.val() == self.w_rq_ci.val() {
                        self.resp_d.d.next = bit_cast::<32, 16>(self.qc.q.val().rq_ci);
                    } else {
                        self.resp_e.d.next = true;
                    }
                }
            }
            // ---------------- Registers of a CQ.
            St::RegCq => {
                self.resp_v.d.next = true;
                self.resp_e.d.next = !self.r_ok.q.val();
                self.resp_d.d.next = 0.into();
                self.state.d.next = St::Idle;
                if self.r_grp.q.val() == 2 {
                    if self.r_word.q.val() == self.w_cq_ci.val() {
                        self.resp_d.d.next = bit_cast::<32, 16>(self.cc.q.val().ci);
                        if self.r_write.q.val() & self.r_ok.q.val() {
                            self.cc.d.next.ci = self.wd16.val();
                            self.wb_c.d.next = true;
                        }
                    } else if self.r_word.q.val() == self.w_cq_arm.val() {
                        if self.r_write.q.val()
                            & self.r_ok.q.val()
                            & (((self.r_wdata.q.val() >> self.f_arm.val()) & 1) != 0)
                        {
                            self.wb_c.d.next = true;
                            if self.cc.q.val().pi != self.cc.q.val().ci {
                                // CQEs wait already: the event at once.
                                self.ev_v.d.next = true;
                                self.ev_cqn.d.next = bit_cast::<16, C>(self.ca.q.val());
                                self.cc.d.next.armed = false;
                            } else {
                                self.cc.d.next.armed = true;
                                self.cc.d.next.sol =
                                    ((self.r_wdata.q.val() >> self.f_arm_sol.val()) & 1) != 0;
                            }
                        }
                    } else {
                        self.resp_e.d.next = true;
                    }
                } else {
                    if self.r_word.q.val() == self.w_cq_lo.val() {
                        self.resp_d.d.next = bit_cast::<32, 64>(self.cc.q.val().base);
                        if self.r_write.q.val() & self.r_ok.q.val() {
                            self.cc.d.next.base = (self.cc.q.val().base >> self.c32.val()
                                << self.c32.val())
                                | bit_cast::<64, 32>(self.r_wdata.q.val());
                            self.wb_c.d.next = true;
                        }
                    } else if self.r_word.q.val() == self.w_cq_hi.val() {
                        self.resp_d.d.next =
                            bit_cast::<32, 64>(self.cc.q.val().base >> self.c32.val());
                        if self.r_write.q.val() & self.r_ok.q.val() {
                            self.cc.d.next.base =
                                bit_cast::<64, 32>(bit_cast::<32, 64>(self.cc.q.val().base))
                                    | (bit_cast::<64, 32>(self.r_wdata.q.val()) << self.c32.val());
                            self.wb_c.d.next = true;
                        }
                    } else if self.r_word.q.val() == self.w_cq_cfg.val() {
                        self.resp_d.d.next =
                            bit_cast::<32, 4>(self.cc.q.val().log) << self.f_log.val();
                        if self.r_write.q.val() & self.r_ok.q.val() {
                            self.cc.d.next.log =
                                bit_cast::<4, 32>(self.r_wdata.q.val() >> self.f_log.val());
                            self.cc.d.next.pi = 0.into();
                            self.cc.d.next.ci = 0.into();
                            self.cc.d.next.armed = false;
                            self.cc.d.next.sol = false;
                            self.cc.d.next.err = false;
                            self.wb_c.d.next = true;
                        }
                    } else if self.r_word.q.val() == self.w_cq_st.val() {
                        self.resp_d.d.next = self.st_word.val();
                    } else {
                        self.resp_e.d.next = true;
                    }
                }
            }
            // ---------------- Receive WQE lookup.
            St::Rq => {
                self.raddr.d.next = self.qc.q.val().rq_base
                    + (bit_cast::<64, 16>(self.qc.q.val().rq_ci & self.rq_mask.val())
                        << self.rw_shift.val());
                self.rlen.d.next = self.rwqe_len.val();
                if !self.pop.q.val() {
                    self.or_v.d.next = true;
                    self.or_ok.d.next = self.qc.q.val().rq_ok;
                    self.or_key.d.next = self.qc.q.val().rq_key;
                    self.or_va.d.next = self.qc.q.val().rq_va;
                    self.or_len.d.next = self.qc.q.val().rq_len;
                    self.state.d.next = St::Idle;
                } else if self.qc.q.val().rq_err
                    | self.qc.q.val().rq_fl
                    | (self.qc.q.val().rq_pi == self.qc.q.val().rq_ci)
                {
                    // Empty, failed or flushing ring: RNR.
                    self.or_v.d.next = true;
                    self.or_ok.d.next = false;
                    self.state.d.next = St::Idle;
                } else {
                    self.state.d.next = St::RqCmd;
                }
            }
            St::RqCmd => {
                self.dr.s_cmd_valid.next = true;
                if self.dr.s_cmd_ready.val() {
                    self.cap_err.d.next = false;
                    self.capret.d.next = St::RqDec;
                    self.state.d.next = St::Cap;
                }
            }
            St::RqDec => {
                self.qc.d.next.rq_ci = self.qc.q.val().rq_ci + 1;
                self.qc.d.next.rq_idx = self.qc.q.val().rq_ci;
                self.qc.d.next.rq_ok = !self.cap_err.q.val()
                    & (self
                        .cap
                        .q
                        .val()
                        .get_bits::<8>(self.o_rw_num_sge.val().index())
                        != 0);
                self.qc.d.next.rq_wr_id = self
                    .cap
                    .q
                    .val()
                    .get_bits::<64>(self.o_rw_wr_id.val().index());
                self.qc.d.next.rq_key = self
                    .cap
                    .q
                    .val()
                    .get_bits::<32>(self.o_rw_sge_key.val().index());
                self.qc.d.next.rq_va = self
                    .cap
                    .q
                    .val()
                    .get_bits::<64>(self.o_rw_sge_addr.val().index());
                self.qc.d.next.rq_len = self
                    .cap
                    .q
                    .val()
                    .get_bits::<32>(self.o_rw_sge_len.val().index());
                self.wb_q.d.next = true;
                self.or_v.d.next = true;
                self.or_ok.d.next = !self.cap_err.q.val()
                    & (self
                        .cap
                        .q
                        .val()
                        .get_bits::<8>(self.o_rw_num_sge.val().index())
                        != 0);
                self.or_key.d.next = self
                    .cap
                    .q
                    .val()
                    .get_bits::<32>(self.o_rw_sge_key.val().index());
                self.or_va.d.next = self
                    .cap
                    .q
                    .val()
                    .get_bits::<64>(self.o_rw_sge_addr.val().index());
                self.or_len.d.next = self
                    .cap
                    .q
                    .val()
                    .get_bits::<32>(self.o_rw_sge_len.val().index());
                self.state.d.next = St::Idle;
            }
            // ---------------- Capture a DMA read packet.
            St::Cap => {
                self.dr.m_data.tready.next = true;
                if self.dr.m_data.tvalid.val() {
                    self.cap.d.next = (self.cap.q.val() >> self.cap_w.val())
                        | (bit_cast::<1024, W>(self.dr.m_data.tdata.val()) << self.cap_top.val());
                    if self.dr.m_data.tlast.val() {
                        self.cap_err.d.next = self.cap_err.q.val() | self.dr.m_data.tuser.val();
                        self.state.d.next = self.capret.q.val();
                    }
                }
            }
            // ---------------- Receive completion.
            St::Rc => {
                // Read the completed WQE's WR_ID (WQE `rq_cc`).
                self.raddr.d.next = self.qc.q.val().rq_base
                    + (bit_cast::<64, 16>(self.qc.q.val().rq_cc & self.rq_mask.val())
                        << self.rw_shift.val());
                self.rlen.d.next = self.rwqe_len.val();
                self.state.d.next = St::RcCmd;
                // (The fetcher's turn, fl_go, flushes WQE rq_cc.)
                if !self.fl_go.q.val() & (self.i_st.q.val() == self.st_rflush.val()) {
                    // The QP went to Error: mark the ring; the fetcher's
                    // round robin flushes it.
                    self.qc.d.next.rq_fl = true;
                    self.wb_q.d.next = true;
                    self.pend.d.next = self.pend.q.val() | self.qbit.val();
                    if self.pend.q.val() == 0 {
                        self.ptr.d.next = self.qa.q.val();
                    }
                    self.state.d.next = St::Idle;
                } else if !self.fl_go.q.val() & self.qc.q.val().rq_fl {
                    // A completion after the flush: its WQE was flushed.
                    self.state.d.next = St::Idle;
                }
            }
            St::RcCmd => {
                self.dr.s_cmd_valid.next = true;
                if self.dr.s_cmd_ready.val() {
                    self.cap_err.d.next = false;
                    self.capret.d.next = St::RcW;
                    self.state.d.next = St::Cap;
                }
            }
            St::RcW => {
                self.fl_go.d.next = false;
                self.qc.d.next.rq_cc = self.qc.q.val().rq_cc + 1;
                if self.qc.q.val().rq_cc == self.qc.q.val().rq_ci {
                    // A flushed WQE never taken.
                    self.qc.d.next.rq_ci = self.qc.q.val().rq_ci + 1;
                }
                self.wb_q.d.next = true;
                self.k_qpn.d.next = self.i_qpn.q.val();
                self.k_wr_id.d.next = self
                    .cap
                    .q
                    .val()
                    .get_bits::<64>(self.o_rw_wr_id.val().index());
                if self.cap_err.q.val() {
                    self.k_wr_id.d.next = 0.into();
                }
                self.k_idx.d.next = self.qc.q.val().rq_cc;
                self.k_st.d.next = self.rst_tab.val().get_bits::<8>(self.st_idx.val().index());
                // Solicited: the message's SE, or an error.
                self.k_sol.d.next = self.i_se.q.val() | (self.i_st.q.val() != 0);
                self.k_cqn.d.next = self.qc.q.val().rq_cqn;
                self.k_len.d.next = 0.into();
                self.k_imm.d.next = 0.into();
                self.k_fl.d.next = 0.into();
                self.k_op.d.next = self.wc_recv.val();
                if self.i_st.q.val() == 0 {
                    self.k_len.d.next = self.i_len.q.val();
                    if (self.i_op.q.val().get_bits::<5>(0) == 0x09)
                        | (self.i_op.q.val().get_bits::<5>(0) == 0x0B)
                    {
                        self.k_op.d.next = self.wc_recv_imm.val();
                        self.k_fl.d.next = self.wf_imm.val();
                        self.k_imm.d.next = self.i_imm.q.val();
                    } else if (self.i_op.q.val().get_bits::<5>(0) == 0x03)
                        | (self.i_op.q.val().get_bits::<5>(0) == 0x05)
                    {
                        self.k_fl.d.next = self.wf_imm.val();
                        self.k_imm.d.next = self.i_imm.q.val();
                    } else if ((self.i_op.q.val() == 0x16) | (self.i_op.q.val() == 0x17))
                        & (self.i_op.q.val() < 0x20)
                    {
                        self.k_fl.d.next = self.wf_inv.val();
                        self.k_imm.d.next = self.i_imm.q.val();
                    }
                }
                self.cret.d.next = St::Idle;
                self.ca.d.next = bit_cast::<C, 16>(self.qc.q.val().rq_cqn);
                self.cram.read_enable.next = true;
                self.cram.read_address.next = bit_cast::<C, 16>(self.qc.q.val().rq_cqn);
                self.lret.d.next = St::CqChk;
                if (self.qc.q.val().rq_cqn >> self.c_c.val()) == 0 {
                    self.state.d.next = St::LdCq;
                } else {
                    self.state.d.next = St::Idle;
                }
            }
            // ---------------- Send completion.
            St::Sc => {
                self.k_qpn.d.next = self.i_qpn.q.val();
                self.k_wr_id.d.next = self.i_wr_id.q.val();
                self.k_idx.d.next = self.qc.q.val().sq_ci;
                self.k_st.d.next = self.st_tab.val().get_bits::<8>(self.st_idx.val().index());
                self.k_sol.d.next = self.i_st.q.val() != 0;
                self.k_cqn.d.next = self.qc.q.val().sq_cqn;
                self.k_len.d.next = self.i_len.q.val();
                self.k_imm.d.next = 0.into();
                self.k_fl.d.next = 0.into();
                self.k_op.d.next = self.wc_tab.val().get_bits::<8>(self.wc_idx.val().index());
                self.qc.d.next.sq_ci = self.qc.q.val().sq_ci + 1;
                self.wb_q.d.next = true;
                self.cret.d.next = St::ScPost;
                self.ca.d.next = bit_cast::<C, 16>(self.qc.q.val().sq_cqn);
                self.cram.read_enable.next = true;
                self.cram.read_address.next = bit_cast::<C, 16>(self.qc.q.val().sq_cqn);
                self.lret.d.next = St::CqChk;
                if (self.sig_bit.val() | (self.i_st.q.val() != 0))
                    & ((self.qc.q.val().sq_cqn >> self.c_c.val()) == 0)
                {
                    self.state.d.next = St::LdCq;
                } else {
                    self.state.d.next = St::ScPost;
                }
            }
            // After a send completion (or a bad WQE's decode): the bad WQE's
            // turn, else look for more to fetch.
            St::ScPost => {
                self.state.d.next = St::Idle;
                if self.qc.q.val().sq_bad & (self.qc.q.val().sq_ci == self.qc.q.val().sq_fi) {
                    self.k_qpn.d.next = bit_cast::<24, Q>(self.qa.q.val());
                    self.k_wr_id.d.next = self.qc.q.val().bad_wr_id;
                    self.k_idx.d.next = self.qc.q.val().sq_ci;
                    self.k_st.d.next = self.qc.q.val().bad_st;
                    self.k_op.d.next = self.qc.q.val().bad_op;
                    self.k_sol.d.next = true;
                    self.k_cqn.d.next = self.qc.q.val().sq_cqn;
                    self.k_len.d.next = 0.into();
                    self.k_imm.d.next = 0.into();
                    self.k_fl.d.next = 0.into();
                    self.qc.d.next.sq_ci = self.qc.q.val().sq_ci + 1;
                    self.qc.d.next.sq_fi = self.qc.q.val().sq_fi + 1;
                    self.qc.d.next.sq_bad = false;
                    self.qc.d.next.sq_err = true;
                    self.wb_q.d.next = true;
                    self.qe_v.d.next = true;
                    self.qe_qpn.d.next = bit_cast::<24, Q>(self.qa.q.val());
                    self.cret.d.next = St::Idle;
                    self.ca.d.next = bit_cast::<C, 16>(self.qc.q.val().sq_cqn);
                    self.cram.read_enable.next = true;
                    self.cram.read_address.next = bit_cast::<C, 16>(self.qc.q.val().sq_cqn);
                    self.lret.d.next = St::CqChk;
                    if (self.qc.q.val().sq_cqn >> self.c_c.val()) == 0 {
                        self.state.d.next = St::LdCq;
                    }
                } else {
                    self.pend.d.next = self.pend.q.val() | self.qbit.val();
                    if self.pend.q.val() == 0 {
                        self.ptr.d.next = self.qa.q.val();
                    }
                }
            }
            // ---------------- Send WQE fetch.
            St::Fetch => {
                self.raddr.d.next = self.qc.q.val().sq_base
                    + (bit_cast::<64, 16>(self.qc.q.val().sq_fi & self.sq_mask.val())
                        << self.sw_shift.val());
                self.rlen.d.next = self.swqe_len.val();
                if self.qc.q.val().rq_fl
                    & !self.qc.q.val().rq_err
                    & (self.qc.q.val().rq_cc != self.qc.q.val().rq_pi)
                {
                    // A flushing receive queue: one WQE this turn (the
                    // QP stays pending).
                    self.fl_go.d.next = true;
                    self.i_st.d.next = self.st_rflush.val();
                    self.i_qpn.d.next = bit_cast::<24, Q>(self.qa.q.val());
                    self.state.d.next = St::Rc;
                } else if self.qc.q.val().sq_err
                    | self.qc.q.val().sq_bad
                    | (self.qc.q.val().sq_pi == self.qc.q.val().sq_fi)
                    | ((self.qc.q.val().sq_fi - self.qc.q.val().sq_ci) >= self.win.val())
                {
                    self.pend.d.next = self.pend.q.val() & !self.qbit.val();
                    self.state.d.next = St::Idle;
                } else {
                    self.state.d.next = St::FCmd;
                }
            }
            St::FCmd => {
                self.dr.s_cmd_valid.next = true;
                if self.dr.s_cmd_ready.val() {
                    self.cap_err.d.next = false;
                    self.capret.d.next = St::FDec;
                    self.state.d.next = St::Cap;
                }
            }
            St::FDec => {
                self.ow.d.next.qpn = bit_cast::<24, Q>(self.qa.q.val());
                self.ow.d.next.op = self.op_ent.val().get_bits::<3>(0);
                self.ow.d.next.solicited = (self.flags.val() & self.fl_solicited.val()) != 0;
                self.ow.d.next.fence = (self.flags.val() & self.fl_fence.val()) != 0;
                self.ow.d.next.wr_id = self
                    .cap
                    .q
                    .val()
                    .get_bits::<64>(self.o_sw_wr_id.val().index());
                self.ow.d.next.imm = self.cap.q.val().get_bits::<32>(self.o_sw_imm.val().index());
                self.ow.d.next.rva = self
                    .cap
                    .q
                    .val()
                    .get_bits::<64>(self.o_sw_raddr.val().index());
                self.ow.d.next.rkey = self
                    .cap
                    .q
                    .val()
                    .get_bits::<32>(self.o_sw_rkey.val().index());
                self.ow.d.next.compare =
                    self.cap.q.val().get_bits::<64>(self.o_sw_cmp.val().index());
                self.ow.d.next.swap = self
                    .cap
                    .q
                    .val()
                    .get_bits::<64>(self.o_sw_swap.val().index());
                // ibverbs' `compare_add` is FETCH & ADD's addend: the
                // transport carries it in the swap/add field.
                if self.op_ent.val().get_bits::<3>(0) == self.op_fa.val() {
                    self.ow.d.next.swap =
                        self.cap.q.val().get_bits::<64>(self.o_sw_cmp.val().index());
                    self.ow.d.next.compare = 0.into();
                }
                self.ow.d.next.lva = 0.into();
                self.ow.d.next.len = 0.into();
                self.ow.d.next.lkey = 0.into();
                self.ow.d.next.phys = self.inl.val();
                if self.inl.val() {
                    // The data stays in the ring slot until the WQE
                    // completes (the host reuses a slot only then).
                    self.ow.d.next.lva = self.raddr.q.val() + self.inline_off.val();
                    self.ow.d.next.len = bit_cast::<32, 8>(self.ilen.val());
                } else if self.nsge.val() != 0 {
                    self.ow.d.next.lva = self
                        .cap
                        .q
                        .val()
                        .get_bits::<64>(self.o_sw_sge_addr.val().index());
                    self.ow.d.next.len = self
                        .cap
                        .q
                        .val()
                        .get_bits::<32>(self.o_sw_sge_len.val().index());
                    self.ow.d.next.lkey = self
                        .cap
                        .q
                        .val()
                        .get_bits::<32>(self.o_sw_sge_key.val().index());
                }
                self.wb_q.d.next = true;
                if self.op_ok.val() & !self.cap_err.q.val() & self.pay_ok.val() {
                    self.ow_v.d.next = true;
                    // Round robin: one WQE per pending QP per turn (a QP
                    // alone keeps the fetcher).
                    if (self.pend.q.val() & !self.qbit.val()) != 0 {
                        self.ptr.d.next = self.ptr.q.val() + 1;
                    }
                    self.qc.d.next.sq_fi = self.qc.q.val().sq_fi + 1;
                    if (self.flags.val() & self.fl_signaled.val()) != 0 {
                        self.qc.d.next.sq_sig = self.qc.q.val().sq_sig
                            | (self.one16.val() << bit_cast::<4, 16>(self.qc.q.val().sq_fi));
                    } else {
                        self.qc.d.next.sq_sig = self.qc.q.val().sq_sig
                            & !(self.one16.val() << bit_cast::<4, 16>(self.qc.q.val().sq_fi));
                    }
                    self.state.d.next = St::Idle;
                } else {
                    self.qc.d.next.sq_bad = true;
                    self.qc.d.next.bad_wr_id = self
                        .cap
                        .q
                        .val()
                        .get_bits::<64>(self.o_sw_wr_id.val().index());
                    if self.cap_err.q.val() {
                        self.qc.d.next.bad_st = self.st_access.val();
                    } else {
                        self.qc.d.next.bad_st = self.st_qp_op.val();
                    }
                    if self.op_ok.val() {
                        self.qc.d.next.bad_op = self
                            .wc_tab
                            .val()
                            .get_bits::<8>(self.bad_wc_idx.val().index());
                    } else {
                        self.qc.d.next.bad_op = 0.into();
                    }
                    self.state.d.next = St::ScPost;
                }
            }
            // ---------------- Write the CQE k_* into CQ ca (cc loaded).
            St::CqChk => {
                self.state.d.next = self.cret.q.val();
                self.fire.d.next = false;
                self.beat.d.next = 0.into();
                self.caddr.d.next = self.cc.q.val().base
                    + (bit_cast::<64, 16>(self.cc.q.val().pi & self.cq_mask.val())
                        << self.cqe_shift.val());
                self.cbuf.d.next = (bit_cast::<256, 64>(self.k_wr_id.q.val())
                    << self.o_cq_wr_id.val())
                    | (bit_cast::<256, 32>(self.k_len.q.val()) << self.o_cq_len.val())
                    | (bit_cast::<256, 32>(self.k_imm.q.val()) << self.o_cq_imm.val())
                    | (bit_cast::<256, 24>(self.k_qpn.q.val()) << self.o_cq_qpn.val())
                    | (bit_cast::<256, 16>(self.k_idx.q.val()) << self.o_cq_idx.val())
                    | (bit_cast::<256, 8>(self.k_st.q.val()) << self.o_cq_st.val())
                    | (bit_cast::<256, 8>(self.k_op.q.val()) << self.o_cq_op.val())
                    | (bit_cast::<256, 8>(self.k_fl.q.val()) << self.o_cq_fl.val())
                    | self.phase_w.val();
                if !self.cc.q.val().err {
                    self.wb_c.d.next = true;
                    if (self.cc.q.val().pi - self.cc.q.val().ci) < self.cq_size.val() {
                        self.cc.d.next.pi = self.cc.q.val().pi + 1;
                        if self.cc.q.val().armed & (!self.cc.q.val().sol | self.k_sol.q.val()) {
                            self.fire.d.next = true;
                            self.cc.d.next.armed = false;
                        }
                        self.state.d.next = St::CqCmd;
                    } else {
                        self.cc.d.next.err = true;
                        self.overrun.d.next = self.overrun.q.val() + 1;
                    }
                }
            }
            St::CqCmd => {
                self.dw.s_cmd_valid.next = true;
                if self.dw.s_cmd_ready.val() {
                    self.state.d.next = St::CqPay;
                }
            }
            St::CqPay => {
                self.dw.s_pay.tvalid.next = true;
                if self.dw.s_pay.tready.val() {
                    self.beat.d.next = self.beat.q.val() + 1;
                    self.cbuf.d.next = self.cbuf.q.val() >> self.cq_step.val();
                    if self.beat.q.val() == self.cq_beats_last.val() {
                        self.state.d.next = St::CqDone;
                    }
                }
            }
            St::CqDone => {
                self.dw.m_done_ready.next = true;
                if self.dw.m_done_valid.val() {
                    if self.fire.q.val() {
                        self.ev_v.d.next = true;
                        self.ev_cqn.d.next = bit_cast::<16, C>(self.ca.q.val());
                    }
                    self.state.d.next = self.cret.q.val();
                }
            }
        }

        if self.reset.val() {
            self.state.d.next = St::Init;
            self.ia.d.next = 0.into();
            self.pend.d.next = 0.into();
            self.ptr.d.next = 0.into();
            self.ow_v.d.next = false;
            self.or_v.d.next = false;
            self.resp_v.d.next = false;
            self.ev_v.d.next = false;
            self.qe_v.d.next = false;
            self.wb_q.d.next = false;
            self.wb_c.d.next = false;
            self.overrun.d.next = 0.into();
        }
    }
}

/// The test build: 64 QPs, 64 CQs.
pub type HostIfSmall64 = HostIf<64, 8, 6, 64, 6>;
pub type HostIfSmall512 = HostIf<512, 64, 6, 64, 6>;
/// The default build: `roce_regs::QP_COUNT` QPs and `CQ_COUNT` CQs.
pub type HostIf64 = HostIf<64, 8, 8, 256, 8>;
pub type HostIf512 = HostIf<512, 64, 8, 256, 8>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_if_synthesizes() {
        let mut uut = HostIfSmall64::new();
        uut.connect_all();
        yosys_validate("host_if", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn code_tables_follow_the_sources() {
        // Every ibverbs opcode this NIC sends maps to a req_engine op, and
        // back to the completion opcode ibverbs reports for it.
        let t = wr_op_table();
        for wr in WrOpcode::ALL {
            let e = (t >> (4 * wr.value())) & 0xF;
            assert_eq!(e & 8, 8, "{wr:?} supported");
        }
        assert_eq!((t >> (4 * 7)) & 8, 0, "LOCAL_INV not supported");
        assert_eq!((st_table() >> (8 * ST_RNR_RETRY_EXC)) as u8, 13);
        assert_eq!((st_table() >> (8 * 15)) as u8, 21);
        assert_eq!((rcqe_st_table() >> (8 * RCQE_FAILED)) as u8, 21);
        assert_eq!((wc_op_table() >> (8 * OP_FETCH_ADD)) as u8, 4);
    }
}
