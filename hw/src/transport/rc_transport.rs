//! `rc_transport`: the whole RC transport as one block, between the MAC's
//! frame streams and memory. Inside:
//!
//! - `roce_rx` (frames in) and the **dispatch**: response opcodes (ACK/NAK,
//!   READ RESPONSE, ATOMIC ACK — the opcode table's `RESPONSE` class, built
//!   into a 256-bit `Constant` from `roce_wire::opcode::TABLE`) of accepted
//!   frames go to `req_engine`'s response port; everything else (requests,
//!   other opcodes, and `roce_rx`'s drops, which `resp_chk` counts) to
//!   `resp_top`'s header port. Payload packets follow their headers in
//!   `roce_rx`'s order, to `resp_top`'s `s_pay` (requests) or to the
//!   requester's `dma_wr` stream (READ responses): the packets in flight
//!   (header taken, packet not through) always belong to one side, so a
//!   count and one bit route them; a header with payload for the other
//!   side waits until they have passed (see the kernel for why).
//! - `resp_top` (responder: `resp_chk`, `resp_exec`, its own `dma_wr` and
//!   `dma_rd`), `req_engine` (requester and completer) with its own
//!   `dma_wr` and `dma_rd`, `qp_timers` on `req_engine`'s timer ports, and
//!   `tx_arb` + `roce_tx` (`TxArbTx`: responses first) for frames out.
//! - One `mr_tlb` shared by the responder's and the requester's request
//!   ports: a round-robin choice when both ask, the winner's id queued;
//!   `mr_tlb` answers in request order, so the queue's head names the owner
//!   of each grant beat (popped on `last`). Its command port is exposed
//!   (`s_mr_cmd_*`, the csr block's `mr` registers drive it); `resp_exec`'s
//!   invalidation (SEND with invalidate) shares it, ahead of the outside
//!   command, and its done pulse goes back to whichever issued the command.
//!
//! Not shared yet: two AXI4 masters (`m_axi_rsp_*`, `m_axi_req_*`) and one
//! context read port per reader (`rsp_`, `req_`, `arb_qp_rd_*`); the csr
//! block has one datapath read port, so it needs more ports or a
//! time-multiplexed one before this block meets it.

use crate::csr::QP_CTX_BITS;
use crate::dma::{DmaRd, DmaWr};
use crate::fifo::SyncFifo;
use crate::mr_tlb::{op as mr_op, MrTlb};
use crate::qp_timers::QpTimers;
use crate::req_engine::ReqEngine;
use crate::resp_top::RespTop;
use crate::roce_rx::RoceRx;
use crate::stream::{check_width, StreamIn, StreamOut};
use crate::tx_arb::{TxArbTx, GID_TABLE_BITS, PKEY_TABLE_BITS};
use roce_wire::opcode::{flags, Transport, TABLE};
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

/// The transport: width `W` (`K` = W/8), `2^Q` QPs; the other parameters
/// are the parts' derived sizes (checked in `new()`): `RA` = Q + 4
/// (`resp_top`), `E` = Q + 1 timer entries, `2^R` WQEs per QP and
/// `QA` = Q + R (`req_engine`), `B` = log2 of `roce_rx`'s frame buffer in
/// beats, `mr_tlb`'s `MA`/`TA`/`PTA`, `qp_timers`'s `TMA`/`LB`/`L`.
#[derive(LogicBlock)]
pub struct RcTransport<
    const W: usize,
    const K: usize,
    const Q: usize,
    const RA: usize,
    const E: usize,
    const R: usize,
    const QA: usize,
    const B: usize,
    const MA: usize,
    const TA: usize,
    const PTA: usize,
    const TMA: usize,
    const LB: usize,
    const L: usize,
> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // Frames from the MAC (roce_rx) and to the MAC (roce_tx).
    pub s_axis: StreamIn<W, K>,
    pub m_axis: StreamOut<W, K>,
    pub error_payload: Signal<Out, Bit>,
    // Responder events (resp_chk's s_ev: INIT, POST_RECV, CLEAR, ERROR).
    pub s_rsp_ev_valid: Signal<In, Bit>,
    pub s_rsp_ev_ready: Signal<Out, Bit>,
    pub s_rsp_ev_kind: Signal<In, Bits<2>>,
    pub s_rsp_ev_qpn: Signal<In, Bits<24>>,
    pub s_rsp_ev_count: Signal<In, Bits<16>>,
    // Requester events (req_engine's s_ev: INIT, ERROR).
    pub s_req_ev_valid: Signal<In, Bit>,
    pub s_req_ev_ready: Signal<Out, Bit>,
    pub s_req_ev_kind: Signal<In, Bits<2>>,
    pub s_req_ev_qpn: Signal<In, Bits<24>>,
    // Send work requests (req_engine's s_wqe).
    pub s_wqe_valid: Signal<In, Bit>,
    pub s_wqe_ready: Signal<Out, Bit>,
    pub s_wqe_qpn: Signal<In, Bits<24>>,
    pub s_wqe_op: Signal<In, Bits<3>>,
    pub s_wqe_signaled: Signal<In, Bit>,
    pub s_wqe_solicited: Signal<In, Bit>,
    pub s_wqe_fence: Signal<In, Bit>,
    pub s_wqe_wr_id: Signal<In, Bits<64>>,
    pub s_wqe_lkey: Signal<In, Bits<32>>,
    pub s_wqe_phys: Signal<In, Bit>,
    pub s_wqe_lva: Signal<In, Bits<64>>,
    pub s_wqe_len: Signal<In, Bits<32>>,
    pub s_wqe_rva: Signal<In, Bits<64>>,
    pub s_wqe_rkey: Signal<In, Bits<32>>,
    pub s_wqe_imm: Signal<In, Bits<32>>,
    pub s_wqe_swap: Signal<In, Bits<64>>,
    pub s_wqe_compare: Signal<In, Bits<64>>,
    // Send completions (req_engine's m_scqe) and its moves to Error.
    pub m_scqe_valid: Signal<Out, Bit>,
    pub m_scqe_ready: Signal<In, Bit>,
    pub m_scqe_qpn: Signal<Out, Bits<24>>,
    pub m_scqe_wr_id: Signal<Out, Bits<64>>,
    pub m_scqe_status: Signal<Out, Bits<4>>,
    pub m_scqe_opcode: Signal<Out, Bits<3>>,
    pub m_scqe_byte_len: Signal<Out, Bits<32>>,
    pub m_req_err_valid: Signal<Out, Bit>,
    pub m_req_err_ready: Signal<In, Bit>,
    pub m_req_err_qpn: Signal<Out, Bits<24>>,
    // Receive WQEs and receive completions (resp_exec's ports).
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
    pub m_rcqe_valid: Signal<Out, Bit>,
    pub m_rcqe_ready: Signal<In, Bit>,
    pub m_rcqe_qpn: Signal<Out, Bits<24>>,
    pub m_rcqe_status: Signal<Out, Bits<3>>,
    pub m_rcqe_opcode: Signal<Out, Bits<8>>,
    pub m_rcqe_len: Signal<Out, Bits<32>>,
    pub m_rcqe_imm: Signal<Out, Bits<32>>,
    pub m_rcqe_se: Signal<Out, Bit>,
    pub m_qp_error_valid: Signal<Out, Bit>,
    pub m_qp_error_qpn: Signal<Out, Bits<24>>,
    pub m_exec_error_valid: Signal<Out, Bit>,
    pub m_exec_error_qpn: Signal<Out, Bits<24>>,
    // Context ports, one per reader (the csr block's 2-cycle datapath port form).
    pub rsp_qp_rd_addr: Signal<Out, Bits<Q>>,
    pub rsp_qp_rd_data: Signal<In, Bits<QP_CTX_BITS>>,
    pub req_qp_rd_addr: Signal<Out, Bits<Q>>,
    pub req_qp_rd_data: Signal<In, Bits<QP_CTX_BITS>>,
    pub arb_qp_rd_addr: Signal<Out, Bits<Q>>,
    pub arb_qp_rd_data: Signal<In, Bits<QP_CTX_BITS>>,
    // tx_arb's configuration (cfg registers).
    pub cfg_mac: Signal<In, Bits<48>>,
    pub cfg_udp_sport: Signal<In, Bits<16>>,
    pub cfg_gid: Signal<In, Bits<GID_TABLE_BITS>>,
    pub cfg_pkey: Signal<In, Bits<PKEY_TABLE_BITS>>,
    // mr_tlb's command port (INVALIDATE from resp_exec goes first).
    pub s_mr_cmd_valid: Signal<In, Bit>,
    pub s_mr_cmd_ready: Signal<Out, Bit>,
    pub s_mr_cmd_op: Signal<In, Bits<{ mr_op::BITS }>>,
    pub s_mr_cmd_key: Signal<In, Bits<32>>,
    pub s_mr_cmd_pd: Signal<In, Bits<16>>,
    pub s_mr_cmd_access: Signal<In, Bits<4>>,
    pub s_mr_cmd_addr: Signal<In, Bits<64>>,
    pub s_mr_cmd_len: Signal<In, Bits<64>>,
    pub s_mr_cmd_shift: Signal<In, Bits<5>>,
    pub s_mr_cmd_index: Signal<In, Bits<32>>,
    pub m_mr_cmd_done: Signal<Out, Bit>,
    pub m_mr_cmd_error: Signal<Out, Bit>,
    /// mr_tlb clearing its tables (after reset).
    pub mr_busy: Signal<Out, Bit>,
    /// qp_timers clearing (after reset).
    pub timers_busy: Signal<Out, Bit>,
    // AXI4 master of the responder (resp_top's dma_wr and dma_rd).
    pub m_axi_rsp_awaddr: Signal<Out, Bits<64>>,
    pub m_axi_rsp_awlen: Signal<Out, Bits<8>>,
    pub m_axi_rsp_awsize: Signal<Out, Bits<3>>,
    pub m_axi_rsp_awburst: Signal<Out, Bits<2>>,
    pub m_axi_rsp_awvalid: Signal<Out, Bit>,
    pub m_axi_rsp_awready: Signal<In, Bit>,
    pub m_axi_rsp_wdata: Signal<Out, Bits<W>>,
    pub m_axi_rsp_wstrb: Signal<Out, Bits<K>>,
    pub m_axi_rsp_wlast: Signal<Out, Bit>,
    pub m_axi_rsp_wvalid: Signal<Out, Bit>,
    pub m_axi_rsp_wready: Signal<In, Bit>,
    pub m_axi_rsp_bresp: Signal<In, Bits<2>>,
    pub m_axi_rsp_bvalid: Signal<In, Bit>,
    pub m_axi_rsp_bready: Signal<Out, Bit>,
    pub m_axi_rsp_araddr: Signal<Out, Bits<64>>,
    pub m_axi_rsp_arlen: Signal<Out, Bits<8>>,
    pub m_axi_rsp_arsize: Signal<Out, Bits<3>>,
    pub m_axi_rsp_arburst: Signal<Out, Bits<2>>,
    pub m_axi_rsp_arvalid: Signal<Out, Bit>,
    pub m_axi_rsp_arready: Signal<In, Bit>,
    pub m_axi_rsp_rdata: Signal<In, Bits<W>>,
    pub m_axi_rsp_rresp: Signal<In, Bits<2>>,
    pub m_axi_rsp_rlast: Signal<In, Bit>,
    pub m_axi_rsp_rvalid: Signal<In, Bit>,
    pub m_axi_rsp_rready: Signal<Out, Bit>,
    // AXI4 master of the requester (its own dma_wr and dma_rd).
    pub m_axi_req_awaddr: Signal<Out, Bits<64>>,
    pub m_axi_req_awlen: Signal<Out, Bits<8>>,
    pub m_axi_req_awsize: Signal<Out, Bits<3>>,
    pub m_axi_req_awburst: Signal<Out, Bits<2>>,
    pub m_axi_req_awvalid: Signal<Out, Bit>,
    pub m_axi_req_awready: Signal<In, Bit>,
    pub m_axi_req_wdata: Signal<Out, Bits<W>>,
    pub m_axi_req_wstrb: Signal<Out, Bits<K>>,
    pub m_axi_req_wlast: Signal<Out, Bit>,
    pub m_axi_req_wvalid: Signal<Out, Bit>,
    pub m_axi_req_wready: Signal<In, Bit>,
    pub m_axi_req_bresp: Signal<In, Bits<2>>,
    pub m_axi_req_bvalid: Signal<In, Bit>,
    pub m_axi_req_bready: Signal<Out, Bit>,
    pub m_axi_req_araddr: Signal<Out, Bits<64>>,
    pub m_axi_req_arlen: Signal<Out, Bits<8>>,
    pub m_axi_req_arsize: Signal<Out, Bits<3>>,
    pub m_axi_req_arburst: Signal<Out, Bits<2>>,
    pub m_axi_req_arvalid: Signal<Out, Bit>,
    pub m_axi_req_arready: Signal<In, Bit>,
    pub m_axi_req_rdata: Signal<In, Bits<W>>,
    pub m_axi_req_rresp: Signal<In, Bits<2>>,
    pub m_axi_req_rlast: Signal<In, Bit>,
    pub m_axi_req_rvalid: Signal<In, Bit>,
    pub m_axi_req_rready: Signal<Out, Bit>,
    // Counters.
    pub cnt_rx_not_roce: Signal<Out, Bits<32>>,
    pub cnt_rx_truncated: Signal<Out, Bits<32>>,
    pub cnt_rx_bad_ip_checksum: Signal<Out, Bits<32>>,
    pub cnt_rx_ip_options: Signal<Out, Bits<32>>,
    pub cnt_rx_bad_length: Signal<Out, Bits<32>>,
    pub cnt_rx_bad_tver: Signal<Out, Bits<32>>,
    pub cnt_rx_unknown_opcode: Signal<Out, Bits<32>>,
    pub cnt_rx_bad_padcnt: Signal<Out, Bits<32>>,
    pub cnt_rx_bad_icrc: Signal<Out, Bits<32>>,
    pub cnt_rx_accept: Signal<Out, Bits<32>>,
    pub cnt_rsp_execute: Signal<Out, Bits<32>>,
    pub cnt_rsp_hdr_drop: Signal<Out, Bits<32>>,
    pub cnt_rsp_drop_qpn: Signal<Out, Bits<32>>,
    pub cnt_rsp_drop_state: Signal<Out, Bits<32>>,
    pub cnt_rsp_drop_type: Signal<Out, Bits<32>>,
    pub cnt_rsp_drop_response: Signal<Out, Bits<32>>,
    pub cnt_rsp_drop_out_of_seq: Signal<Out, Bits<32>>,
    pub cnt_rsp_duplicate: Signal<Out, Bits<32>>,
    pub cnt_rsp_nak_psn_seq: Signal<Out, Bits<32>>,
    pub cnt_rsp_nak_op_seq: Signal<Out, Bits<32>>,
    pub cnt_rsp_nak_op_invalid: Signal<Out, Bits<32>>,
    pub cnt_rsp_nak_padcnt: Signal<Out, Bits<32>>,
    pub cnt_rsp_nak_resource: Signal<Out, Bits<32>>,
    pub cnt_rsp_nak_length: Signal<Out, Bits<32>>,
    pub cnt_rsp_rnr_nak: Signal<Out, Bits<32>>,
    pub cnt_rsp_nak_rem_access: Signal<Out, Bits<32>>,
    pub cnt_rsp_nak_rem_op: Signal<Out, Bits<32>>,
    pub cnt_rsp_nak_inv_req: Signal<Out, Bits<32>>,
    pub cnt_rsp_read_replay: Signal<Out, Bits<32>>,
    pub cnt_rsp_atomic_replay: Signal<Out, Bits<32>>,
    pub cnt_rsp_dup_no_res: Signal<Out, Bits<32>>,
    pub cnt_rsp_drop_err: Signal<Out, Bits<32>>,
    pub cnt_rsp_axi_err: Signal<Out, Bits<32>>,
    pub cnt_rsp_stream_err: Signal<Out, Bits<32>>,
    pub cnt_req_sent: Signal<Out, Bits<32>>,
    pub cnt_req_retx: Signal<Out, Bits<32>>,
    pub cnt_req_retry_seq_nak: Signal<Out, Bits<32>>,
    pub cnt_req_retry_implied: Signal<Out, Bits<32>>,
    pub cnt_req_retry_timeout: Signal<Out, Bits<32>>,
    pub cnt_req_retry_rnr: Signal<Out, Bits<32>>,
    pub cnt_req_retry_ignored: Signal<Out, Bits<32>>,
    pub cnt_req_retry_exceeded: Signal<Out, Bits<32>>,
    pub cnt_req_rnr_exceeded: Signal<Out, Bits<32>>,
    pub cnt_req_rnr_nak: Signal<Out, Bits<32>>,
    pub cnt_req_nak_err: Signal<Out, Bits<32>>,
    pub cnt_req_drop_stale: Signal<Out, Bits<32>>,
    pub cnt_req_drop_unexpected: Signal<Out, Bits<32>>,
    pub cnt_req_drop_out_of_order: Signal<Out, Bits<32>>,
    pub cnt_req_drop_qp_state: Signal<Out, Bits<32>>,
    pub cnt_req_stream_err: Signal<Out, Bits<32>>,
    pub cnt_mr_bad_key: Signal<Out, Bits<32>>,
    pub cnt_mr_invalidated_key: Signal<Out, Bits<32>>,
    pub cnt_mr_pd_mismatch: Signal<Out, Bits<32>>,
    pub cnt_mr_access_denied: Signal<Out, Bits<32>>,
    pub cnt_mr_out_of_bounds: Signal<Out, Bits<32>>,
    pub cnt_mr_tlb_miss: Signal<Out, Bits<32>>,
    pub cnt_timers_armed: Signal<Out, Bits<32>>,
    pub cnt_timers_expired: Signal<Out, Bits<32>>,
    /// headers dispatched to resp_top.
    pub cnt_to_responder: Signal<Out, Bits<32>>,
    /// headers dispatched to req_engine.
    pub cnt_to_requester: Signal<Out, Bits<32>>,
    rx: RoceRx<W, K, B>,
    rt: RespTop<W, K, Q, RA>,
    re: ReqEngine<W, K, Q, E, R, QA>,
    tm: QpTimers<E, TMA, LB, L>,
    mr: MrTlb<MA, TA, PTA>,
    dw: DmaWr<W, K>,
    dr: DmaRd<W, K>,
    tx: TxArbTx<W, K, Q>,
    /// Dispatch: payload packets in flight (headers taken, packets not
    /// through yet), and whether they are the requester's.
    pend: DFF<Bits<6>>,
    pend_req: DFF<Bit>,
    /// mr_tlb: one bit per request taken (1 = the requester's).
    own: SyncFifo<Bit, 3, 4>,
    /// The requester won the last mr_tlb request (round robin).
    mr_last_req: DFF<Bit>,
    /// A command is on mr_tlb's port (its source held until taken), which.
    cmd_busy: DFF<Bit>,
    cmd_inv: DFF<Bit>,
    /// The last command taken was resp_exec's invalidation.
    was_inv: DFF<Bit>,
    to_rsp: DFF<Bits<32>>,
    to_req: DFF<Bits<32>>,
    is_rsp: Signal<Local, Bit>,
    has_pay: Signal<Local, Bit>,
    hdr_take: Signal<Local, Bit>,
    pay_ready: Signal<Local, Bit>,
    pay_ok: Signal<Local, Bit>,
    pay_done: Signal<Local, Bit>,
    sel_req: Signal<Local, Bit>,
    inv_sel: Signal<Local, Bit>,
    rsp_rom: Constant<Bits<256>>,
    op_invalidate: Constant<Bits<{ mr_op::BITS }>>,
}

/// The test build: 64 QPs (8 WQEs each), `mr_tlb`'s 64-MR build,
/// `qp_timers`'s 128 entries, a 16 KiB frame buffer.
pub type RcTransportSmall64 = RcTransport<64, 8, 6, 10, 7, 3, 9, 11, 6, 3, 8, 4, 3, 8>;
pub type RcTransportSmall512 = RcTransport<512, 64, 6, 10, 7, 3, 9, 8, 6, 3, 8, 4, 3, 8>;
/// The default build: 1024 QPs (4 WQEs each), 4096 MRs, 2048 timers.
pub type RcTransport64 = RcTransport<64, 8, 10, 14, 11, 2, 12, 11, 12, 8, 13, 7, 4, 16>;
pub type RcTransport128 = RcTransport<128, 16, 10, 14, 11, 2, 12, 10, 12, 8, 13, 7, 4, 16>;
pub type RcTransport256 = RcTransport<256, 32, 10, 14, 11, 2, 12, 9, 12, 8, 13, 7, 4, 16>;
pub type RcTransport512 = RcTransport<512, 64, 10, 14, 11, 2, 12, 8, 12, 8, 13, 7, 4, 16>;

/// Bit `c` set for the RC response opcodes (the dispatch's class), from
/// the opcode table.
pub fn response_opcodes() -> Bits<256> {
    let mut b = Bits::<256>::default();
    for i in TABLE
        .iter()
        .filter(|i| i.transport == Transport::Rc && i.flags() & flags::RESPONSE != 0)
    {
        b = b.replace_bit(i.code as usize, true);
    }
    b
}

impl<
        const W: usize,
        const K: usize,
        const Q: usize,
        const RA: usize,
        const E: usize,
        const R: usize,
        const QA: usize,
        const B: usize,
        const MA: usize,
        const TA: usize,
        const PTA: usize,
        const TMA: usize,
        const LB: usize,
        const L: usize,
    > RcTransport<W, K, Q, RA, E, R, QA, B, MA, TA, PTA, TMA, LB, L>
{
    /// `tick_cycles`: `qp_timers`'s tick (its `new` argument).
    pub fn new(tick_cycles: u16) -> Self {
        check_width("rc_transport", W, K);
        assert_eq!(RA, Q + 4, "rc_transport: RA must be Q + 4");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_axis: Default::default(),
            m_axis: Default::default(),
            error_payload: Default::default(),
            s_rsp_ev_valid: Default::default(),
            s_rsp_ev_ready: Default::default(),
            s_rsp_ev_kind: Default::default(),
            s_rsp_ev_qpn: Default::default(),
            s_rsp_ev_count: Default::default(),
            s_req_ev_valid: Default::default(),
            s_req_ev_ready: Default::default(),
            s_req_ev_kind: Default::default(),
            s_req_ev_qpn: Default::default(),
            s_wqe_valid: Default::default(),
            s_wqe_ready: Default::default(),
            s_wqe_qpn: Default::default(),
            s_wqe_op: Default::default(),
            s_wqe_signaled: Default::default(),
            s_wqe_solicited: Default::default(),
            s_wqe_fence: Default::default(),
            s_wqe_wr_id: Default::default(),
            s_wqe_lkey: Default::default(),
            s_wqe_phys: Default::default(),
            s_wqe_lva: Default::default(),
            s_wqe_len: Default::default(),
            s_wqe_rva: Default::default(),
            s_wqe_rkey: Default::default(),
            s_wqe_imm: Default::default(),
            s_wqe_swap: Default::default(),
            s_wqe_compare: Default::default(),
            m_scqe_valid: Default::default(),
            m_scqe_ready: Default::default(),
            m_scqe_qpn: Default::default(),
            m_scqe_wr_id: Default::default(),
            m_scqe_status: Default::default(),
            m_scqe_opcode: Default::default(),
            m_scqe_byte_len: Default::default(),
            m_req_err_valid: Default::default(),
            m_req_err_ready: Default::default(),
            m_req_err_qpn: Default::default(),
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
            m_qp_error_valid: Default::default(),
            m_qp_error_qpn: Default::default(),
            m_exec_error_valid: Default::default(),
            m_exec_error_qpn: Default::default(),
            rsp_qp_rd_addr: Default::default(),
            rsp_qp_rd_data: Default::default(),
            req_qp_rd_addr: Default::default(),
            req_qp_rd_data: Default::default(),
            arb_qp_rd_addr: Default::default(),
            arb_qp_rd_data: Default::default(),
            cfg_mac: Default::default(),
            cfg_udp_sport: Default::default(),
            cfg_gid: Default::default(),
            cfg_pkey: Default::default(),
            s_mr_cmd_valid: Default::default(),
            s_mr_cmd_ready: Default::default(),
            s_mr_cmd_op: Default::default(),
            s_mr_cmd_key: Default::default(),
            s_mr_cmd_pd: Default::default(),
            s_mr_cmd_access: Default::default(),
            s_mr_cmd_addr: Default::default(),
            s_mr_cmd_len: Default::default(),
            s_mr_cmd_shift: Default::default(),
            s_mr_cmd_index: Default::default(),
            m_mr_cmd_done: Default::default(),
            m_mr_cmd_error: Default::default(),
            mr_busy: Default::default(),
            timers_busy: Default::default(),
            m_axi_rsp_awaddr: Default::default(),
            m_axi_rsp_awlen: Default::default(),
            m_axi_rsp_awsize: Default::default(),
            m_axi_rsp_awburst: Default::default(),
            m_axi_rsp_awvalid: Default::default(),
            m_axi_rsp_awready: Default::default(),
            m_axi_rsp_wdata: Default::default(),
            m_axi_rsp_wstrb: Default::default(),
            m_axi_rsp_wlast: Default::default(),
            m_axi_rsp_wvalid: Default::default(),
            m_axi_rsp_wready: Default::default(),
            m_axi_rsp_bresp: Default::default(),
            m_axi_rsp_bvalid: Default::default(),
            m_axi_rsp_bready: Default::default(),
            m_axi_rsp_araddr: Default::default(),
            m_axi_rsp_arlen: Default::default(),
            m_axi_rsp_arsize: Default::default(),
            m_axi_rsp_arburst: Default::default(),
            m_axi_rsp_arvalid: Default::default(),
            m_axi_rsp_arready: Default::default(),
            m_axi_rsp_rdata: Default::default(),
            m_axi_rsp_rresp: Default::default(),
            m_axi_rsp_rlast: Default::default(),
            m_axi_rsp_rvalid: Default::default(),
            m_axi_rsp_rready: Default::default(),
            m_axi_req_awaddr: Default::default(),
            m_axi_req_awlen: Default::default(),
            m_axi_req_awsize: Default::default(),
            m_axi_req_awburst: Default::default(),
            m_axi_req_awvalid: Default::default(),
            m_axi_req_awready: Default::default(),
            m_axi_req_wdata: Default::default(),
            m_axi_req_wstrb: Default::default(),
            m_axi_req_wlast: Default::default(),
            m_axi_req_wvalid: Default::default(),
            m_axi_req_wready: Default::default(),
            m_axi_req_bresp: Default::default(),
            m_axi_req_bvalid: Default::default(),
            m_axi_req_bready: Default::default(),
            m_axi_req_araddr: Default::default(),
            m_axi_req_arlen: Default::default(),
            m_axi_req_arsize: Default::default(),
            m_axi_req_arburst: Default::default(),
            m_axi_req_arvalid: Default::default(),
            m_axi_req_arready: Default::default(),
            m_axi_req_rdata: Default::default(),
            m_axi_req_rresp: Default::default(),
            m_axi_req_rlast: Default::default(),
            m_axi_req_rvalid: Default::default(),
            m_axi_req_rready: Default::default(),
            cnt_rx_not_roce: Default::default(),
            cnt_rx_truncated: Default::default(),
            cnt_rx_bad_ip_checksum: Default::default(),
            cnt_rx_ip_options: Default::default(),
            cnt_rx_bad_length: Default::default(),
            cnt_rx_bad_tver: Default::default(),
            cnt_rx_unknown_opcode: Default::default(),
            cnt_rx_bad_padcnt: Default::default(),
            cnt_rx_bad_icrc: Default::default(),
            cnt_rx_accept: Default::default(),
            cnt_rsp_execute: Default::default(),
            cnt_rsp_hdr_drop: Default::default(),
            cnt_rsp_drop_qpn: Default::default(),
            cnt_rsp_drop_state: Default::default(),
            cnt_rsp_drop_type: Default::default(),
            cnt_rsp_drop_response: Default::default(),
            cnt_rsp_drop_out_of_seq: Default::default(),
            cnt_rsp_duplicate: Default::default(),
            cnt_rsp_nak_psn_seq: Default::default(),
            cnt_rsp_nak_op_seq: Default::default(),
            cnt_rsp_nak_op_invalid: Default::default(),
            cnt_rsp_nak_padcnt: Default::default(),
            cnt_rsp_nak_resource: Default::default(),
            cnt_rsp_nak_length: Default::default(),
            cnt_rsp_rnr_nak: Default::default(),
            cnt_rsp_nak_rem_access: Default::default(),
            cnt_rsp_nak_rem_op: Default::default(),
            cnt_rsp_nak_inv_req: Default::default(),
            cnt_rsp_read_replay: Default::default(),
            cnt_rsp_atomic_replay: Default::default(),
            cnt_rsp_dup_no_res: Default::default(),
            cnt_rsp_drop_err: Default::default(),
            cnt_rsp_axi_err: Default::default(),
            cnt_rsp_stream_err: Default::default(),
            cnt_req_sent: Default::default(),
            cnt_req_retx: Default::default(),
            cnt_req_retry_seq_nak: Default::default(),
            cnt_req_retry_implied: Default::default(),
            cnt_req_retry_timeout: Default::default(),
            cnt_req_retry_rnr: Default::default(),
            cnt_req_retry_ignored: Default::default(),
            cnt_req_retry_exceeded: Default::default(),
            cnt_req_rnr_exceeded: Default::default(),
            cnt_req_rnr_nak: Default::default(),
            cnt_req_nak_err: Default::default(),
            cnt_req_drop_stale: Default::default(),
            cnt_req_drop_unexpected: Default::default(),
            cnt_req_drop_out_of_order: Default::default(),
            cnt_req_drop_qp_state: Default::default(),
            cnt_req_stream_err: Default::default(),
            cnt_mr_bad_key: Default::default(),
            cnt_mr_invalidated_key: Default::default(),
            cnt_mr_pd_mismatch: Default::default(),
            cnt_mr_access_denied: Default::default(),
            cnt_mr_out_of_bounds: Default::default(),
            cnt_mr_tlb_miss: Default::default(),
            cnt_timers_armed: Default::default(),
            cnt_timers_expired: Default::default(),
            cnt_to_responder: Default::default(),
            cnt_to_requester: Default::default(),
            rx: RoceRx::new(),
            rt: RespTop::new(),
            re: ReqEngine::new(),
            tm: QpTimers::new(tick_cycles),
            mr: MrTlb::new(),
            dw: DmaWr::new(),
            dr: DmaRd::new(),
            tx: TxArbTx::new(),
            pend: Default::default(),
            pend_req: Default::default(),
            own: SyncFifo::new(),
            mr_last_req: Default::default(),
            cmd_busy: Default::default(),
            cmd_inv: Default::default(),
            was_inv: Default::default(),
            to_rsp: Default::default(),
            to_req: Default::default(),
            is_rsp: Default::default(),
            has_pay: Default::default(),
            hdr_take: Default::default(),
            pay_ready: Default::default(),
            pay_ok: Default::default(),
            pay_done: Default::default(),
            sel_req: Default::default(),
            inv_sel: Default::default(),
            rsp_rom: Constant::new(response_opcodes()),
            op_invalidate: Constant::new(mr_op::INVALIDATE.into()),
        }
    }
}

impl<
        const W: usize,
        const K: usize,
        const Q: usize,
        const RA: usize,
        const E: usize,
        const R: usize,
        const QA: usize,
        const B: usize,
        const MA: usize,
        const TA: usize,
        const PTA: usize,
        const TMA: usize,
        const LB: usize,
        const L: usize,
    > Logic for RcTransport<W, K, Q, RA, E, R, QA, B, MA, TA, PTA, TMA, LB, L>
{
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, rx, rt, re, tm, mr, dw, dr, tx, own);
        dff_setup!(
            self,
            clock,
            mr_last_req,
            cmd_busy,
            cmd_inv,
            was_inv,
            to_rsp,
            to_req,
            pend,
            pend_req
        );
        self.rx.reset.next = self.reset.val();
        self.rt.reset.next = self.reset.val();
        self.re.reset.next = self.reset.val();
        self.tm.reset.next = self.reset.val();
        self.mr.reset.next = self.reset.val();
        self.dw.reset.next = self.reset.val();
        self.dr.reset.next = self.reset.val();
        self.tx.reset.next = self.reset.val();
        self.own.reset.next = self.reset.val();
        // ---- Dispatch. Responses of accepted frames to the requester,
        // everything else (roce_rx's drops too) to the responder. The
        // payload packets in flight (headers taken, packets not yet through)
        // all belong to one side: a header with payload for the other side
        // waits until they have passed. Otherwise a consumer could hold a
        // header whose payload sits behind the other's, while holding
        // mr_tlb's grant port (its dma_wr command queue full), which the
        // other needs to consume the payload at the stream's head.
        self.is_rsp.next = self
            .rsp_rom
            .val()
            .get_bit(self.rx.m_hdr_opcode.val().index())
            & !self.rx.m_hdr_drop.val();
        self.has_pay.next = !self.rx.m_hdr_drop.val() & (self.rx.m_hdr_payload_len.val() != 0);
        self.pay_ok.next = !self.has_pay.val()
            | (self.pend.q.val() == 0)
            | ((self.pend_req.q.val() == self.is_rsp.val()) & (self.pend.q.val() != 63));
        self.rt.s_hdr_valid.next =
            self.rx.m_hdr_valid.val() & !self.is_rsp.val() & self.pay_ok.val();
        self.re.s_rsp_valid.next =
            self.rx.m_hdr_valid.val() & self.is_rsp.val() & self.pay_ok.val();
        self.hdr_take.next = self.rx.m_hdr_valid.val()
            & self.pay_ok.val()
            & ((self.is_rsp.val() & self.re.s_rsp_ready.val())
                | (!self.is_rsp.val() & self.rt.s_hdr_ready.val()));
        self.rx.m_hdr_ready.next = self.hdr_take.val();
        if self.hdr_take.val() & self.is_rsp.val() {
            self.to_req.d.next = self.to_req.q.val() + 1;
        }
        if self.hdr_take.val() & !self.is_rsp.val() {
            self.to_rsp.d.next = self.to_rsp.q.val() + 1;
        }
        self.cnt_to_responder.next = self.to_rsp.q.val();
        self.cnt_to_requester.next = self.to_req.q.val();
        // Payload packets go to the side that owns the ones in flight.
        self.rt.s_pay.tvalid.next =
            self.rx.m_axis.tvalid.val() & (self.pend.q.val() != 0) & !self.pend_req.q.val();
        self.dw.s_pay.tvalid.next =
            self.rx.m_axis.tvalid.val() & (self.pend.q.val() != 0) & self.pend_req.q.val();
        self.pay_ready.next = (self.pend.q.val() != 0)
            & ((self.pend_req.q.val() & self.dw.s_pay.tready.val())
                | (!self.pend_req.q.val() & self.rt.s_pay.tready.val()));
        self.rx.m_axis.tready.next = self.pay_ready.val();
        self.pay_done.next =
            self.rx.m_axis.tvalid.val() & self.pay_ready.val() & self.rx.m_axis.tlast.val();
        if self.hdr_take.val() & self.has_pay.val() {
            self.pend_req.d.next = self.is_rsp.val();
        }
        if self.hdr_take.val() & self.has_pay.val() & !self.pay_done.val() {
            self.pend.d.next = self.pend.q.val() + 1;
        }
        if !(self.hdr_take.val() & self.has_pay.val()) & self.pay_done.val() {
            self.pend.d.next = self.pend.q.val() - 1;
        }
        // ---- mr_tlb requests: round robin between the responder and the
        // requester; the owner of each request queued for its grants.
        self.sel_req.next = self.re.m_mr_req_valid.val()
            & (!self.rt.m_mr_req_valid.val() | !self.mr_last_req.q.val());
        self.mr.s_req_valid.next =
            (self.rt.m_mr_req_valid.val() | self.re.m_mr_req_valid.val()) & !self.own.full.val();
        if self.sel_req.val() {
            self.mr.s_req_key.next = self.re.m_mr_req_key.val();
            self.mr.s_req_pd.next = self.re.m_mr_req_pd.val();
            self.mr.s_req_access.next = self.re.m_mr_req_access.val();
            self.mr.s_req_va.next = self.re.m_mr_req_va.val();
            self.mr.s_req_len.next = self.re.m_mr_req_len.val();
        } else {
            self.mr.s_req_key.next = self.rt.m_mr_req_key.val();
            self.mr.s_req_pd.next = self.rt.m_mr_req_pd.val();
            self.mr.s_req_access.next = self.rt.m_mr_req_access.val();
            self.mr.s_req_va.next = self.rt.m_mr_req_va.val();
            self.mr.s_req_len.next = self.rt.m_mr_req_len.val();
        }
        self.rt.m_mr_req_ready.next =
            self.mr.s_req_ready.val() & !self.own.full.val() & !self.sel_req.val();
        self.re.m_mr_req_ready.next =
            self.mr.s_req_ready.val() & !self.own.full.val() & self.sel_req.val();
        self.own.write.next = self.mr.s_req_valid.val() & self.mr.s_req_ready.val();
        self.own.data_in.next = self.sel_req.val();
        if self.mr.s_req_valid.val() & self.mr.s_req_ready.val() {
            self.mr_last_req.d.next = self.sel_req.val();
        }
        self.rt.s_mr_grant_valid.next =
            self.mr.m_grant_valid.val() & !self.own.empty.val() & !self.own.data_out.val();
        self.re.s_mr_grant_valid.next =
            self.mr.m_grant_valid.val() & !self.own.empty.val() & self.own.data_out.val();
        self.mr.m_grant_ready.next = !self.own.empty.val()
            & ((self.own.data_out.val() & self.re.s_mr_grant_ready.val())
                | (!self.own.data_out.val() & self.rt.s_mr_grant_ready.val()));
        self.own.read.next = self.mr.m_grant_valid.val()
            & !self.own.empty.val()
            & ((self.own.data_out.val() & self.re.s_mr_grant_ready.val())
                | (!self.own.data_out.val() & self.rt.s_mr_grant_ready.val()))
            & self.mr.m_grant_last.val();
        // ---- mr_tlb commands: resp_exec's INVALIDATE first; the source
        // is held from the first cycle a command is offered until taken.
        if self.cmd_busy.q.val() {
            self.inv_sel.next = self.cmd_inv.q.val();
        } else {
            self.inv_sel.next = self.rt.m_inv_valid.val();
        }
        if self.inv_sel.val() {
            self.mr.s_cmd_valid.next = self.rt.m_inv_valid.val();
            self.mr.s_cmd_op.next = self.op_invalidate.val();
            self.mr.s_cmd_key.next = self.rt.m_inv_key.val();
            self.mr.s_cmd_pd.next = 0.into();
            self.mr.s_cmd_access.next = 0.into();
            self.mr.s_cmd_addr.next = 0.into();
            self.mr.s_cmd_len.next = 0.into();
            self.mr.s_cmd_shift.next = 0.into();
            self.mr.s_cmd_index.next = 0.into();
        } else {
            self.mr.s_cmd_valid.next = self.s_mr_cmd_valid.val();
            self.mr.s_cmd_op.next = self.s_mr_cmd_op.val();
            self.mr.s_cmd_key.next = self.s_mr_cmd_key.val();
            self.mr.s_cmd_pd.next = self.s_mr_cmd_pd.val();
            self.mr.s_cmd_access.next = self.s_mr_cmd_access.val();
            self.mr.s_cmd_addr.next = self.s_mr_cmd_addr.val();
            self.mr.s_cmd_len.next = self.s_mr_cmd_len.val();
            self.mr.s_cmd_shift.next = self.s_mr_cmd_shift.val();
            self.mr.s_cmd_index.next = self.s_mr_cmd_index.val();
        }
        self.rt.m_inv_ready.next = self.mr.s_cmd_ready.val() & self.inv_sel.val();
        self.s_mr_cmd_ready.next = self.mr.s_cmd_ready.val() & !self.inv_sel.val();
        if (self.rt.m_inv_valid.val() | self.s_mr_cmd_valid.val()) & !self.cmd_busy.q.val() {
            self.cmd_busy.d.next = true;
            self.cmd_inv.d.next = self.inv_sel.val();
        }
        if self.mr.s_cmd_valid.val() & self.mr.s_cmd_ready.val() {
            self.cmd_busy.d.next = false;
            self.was_inv.d.next = self.inv_sel.val();
        }
        self.rt.s_inv_done_valid.next = self.mr.m_cmd_done.val() & self.was_inv.q.val();
        self.rt.s_inv_done_err.next = self.mr.m_cmd_error.val();
        self.m_mr_cmd_done.next = self.mr.m_cmd_done.val() & !self.was_inv.q.val();
        self.m_mr_cmd_error.next = self.mr.m_cmd_error.val() & !self.was_inv.q.val();
        // Frames from the MAC (roce_rx) and to the MAC (roce_tx).
        self.rx.s_axis.tdata.next = self.s_axis.tdata.val();
        self.m_axis.tdata.next = self.tx.m_axis.tdata.val();
        self.rx.s_axis.tkeep.next = self.s_axis.tkeep.val();
        self.m_axis.tkeep.next = self.tx.m_axis.tkeep.val();
        self.rx.s_axis.tlast.next = self.s_axis.tlast.val();
        self.m_axis.tlast.next = self.tx.m_axis.tlast.val();
        self.rx.s_axis.tuser.next = self.s_axis.tuser.val();
        self.m_axis.tuser.next = self.tx.m_axis.tuser.val();
        self.rx.s_axis.tvalid.next = self.s_axis.tvalid.val();
        self.m_axis.tvalid.next = self.tx.m_axis.tvalid.val();
        self.s_axis.tready.next = self.rx.s_axis.tready.val();
        self.tx.m_axis.tready.next = self.m_axis.tready.val();
        self.error_payload.next = self.tx.error_payload.val();
        // Responder events (resp_chk's s_ev: INIT, POST_RECV, CLEAR, ERROR).
        self.rt.s_ev_valid.next = self.s_rsp_ev_valid.val();
        self.s_rsp_ev_ready.next = self.rt.s_ev_ready.val();
        self.rt.s_ev_kind.next = self.s_rsp_ev_kind.val();
        self.rt.s_ev_qpn.next = self.s_rsp_ev_qpn.val();
        self.rt.s_ev_count.next = self.s_rsp_ev_count.val();
        // Requester events (req_engine's s_ev: INIT, ERROR).
        self.re.s_ev_valid.next = self.s_req_ev_valid.val();
        self.s_req_ev_ready.next = self.re.s_ev_ready.val();
        self.re.s_ev_kind.next = self.s_req_ev_kind.val();
        self.re.s_ev_qpn.next = self.s_req_ev_qpn.val();
        // Send work requests (req_engine's s_wqe).
        self.re.s_wqe_valid.next = self.s_wqe_valid.val();
        self.s_wqe_ready.next = self.re.s_wqe_ready.val();
        self.re.s_wqe_qpn.next = self.s_wqe_qpn.val();
        self.re.s_wqe_op.next = self.s_wqe_op.val();
        self.re.s_wqe_signaled.next = self.s_wqe_signaled.val();
        self.re.s_wqe_solicited.next = self.s_wqe_solicited.val();
        self.re.s_wqe_fence.next = self.s_wqe_fence.val();
        self.re.s_wqe_wr_id.next = self.s_wqe_wr_id.val();
        self.re.s_wqe_lkey.next = self.s_wqe_lkey.val();
        self.re.s_wqe_phys.next = self.s_wqe_phys.val();
        self.re.s_wqe_lva.next = self.s_wqe_lva.val();
        self.re.s_wqe_len.next = self.s_wqe_len.val();
        self.re.s_wqe_rva.next = self.s_wqe_rva.val();
        self.re.s_wqe_rkey.next = self.s_wqe_rkey.val();
        self.re.s_wqe_imm.next = self.s_wqe_imm.val();
        self.re.s_wqe_swap.next = self.s_wqe_swap.val();
        self.re.s_wqe_compare.next = self.s_wqe_compare.val();
        // Send completions (req_engine's m_scqe) and its moves to Error.
        self.m_scqe_valid.next = self.re.m_scqe_valid.val();
        self.re.m_scqe_ready.next = self.m_scqe_ready.val();
        self.m_scqe_qpn.next = self.re.m_scqe_qpn.val();
        self.m_scqe_wr_id.next = self.re.m_scqe_wr_id.val();
        self.m_scqe_status.next = self.re.m_scqe_status.val();
        self.m_scqe_opcode.next = self.re.m_scqe_opcode.val();
        self.m_scqe_byte_len.next = self.re.m_scqe_byte_len.val();
        self.m_req_err_valid.next = self.re.m_err_valid.val();
        self.re.m_err_ready.next = self.m_req_err_ready.val();
        self.m_req_err_qpn.next = self.re.m_err_qpn.val();
        // Receive WQEs and receive completions (resp_exec's ports).
        self.m_rq_req_valid.next = self.rt.m_rq_req_valid.val();
        self.rt.m_rq_req_ready.next = self.m_rq_req_ready.val();
        self.m_rq_req_qpn.next = self.rt.m_rq_req_qpn.val();
        self.m_rq_req_pop.next = self.rt.m_rq_req_pop.val();
        self.rt.s_rq_resp_valid.next = self.s_rq_resp_valid.val();
        self.s_rq_resp_ready.next = self.rt.s_rq_resp_ready.val();
        self.rt.s_rq_resp_ok.next = self.s_rq_resp_ok.val();
        self.rt.s_rq_resp_key.next = self.s_rq_resp_key.val();
        self.rt.s_rq_resp_va.next = self.s_rq_resp_va.val();
        self.rt.s_rq_resp_len.next = self.s_rq_resp_len.val();
        self.m_rcqe_valid.next = self.rt.m_rcqe_valid.val();
        self.rt.m_rcqe_ready.next = self.m_rcqe_ready.val();
        self.m_rcqe_qpn.next = self.rt.m_rcqe_qpn.val();
        self.m_rcqe_status.next = self.rt.m_rcqe_status.val();
        self.m_rcqe_opcode.next = self.rt.m_rcqe_opcode.val();
        self.m_rcqe_len.next = self.rt.m_rcqe_len.val();
        self.m_rcqe_imm.next = self.rt.m_rcqe_imm.val();
        self.m_rcqe_se.next = self.rt.m_rcqe_se.val();
        self.m_qp_error_valid.next = self.rt.m_qp_error_valid.val();
        self.m_qp_error_qpn.next = self.rt.m_qp_error_qpn.val();
        self.m_exec_error_valid.next = self.rt.m_exec_error_valid.val();
        self.m_exec_error_qpn.next = self.rt.m_exec_error_qpn.val();
        // Context ports, one per reader (the csr block's 2-cycle datapath port form).
        self.rsp_qp_rd_addr.next = self.rt.qp_rd_addr.val();
        self.rt.qp_rd_data.next = self.rsp_qp_rd_data.val();
        self.req_qp_rd_addr.next = self.re.qp_rd_addr.val();
        self.re.qp_rd_data.next = self.req_qp_rd_data.val();
        self.arb_qp_rd_addr.next = self.tx.qp_rd_addr.val();
        self.tx.qp_rd_data.next = self.arb_qp_rd_data.val();
        // tx_arb's configuration (cfg registers).
        self.tx.cfg_mac.next = self.cfg_mac.val();
        self.tx.cfg_udp_sport.next = self.cfg_udp_sport.val();
        self.tx.cfg_gid.next = self.cfg_gid.val();
        self.tx.cfg_pkey.next = self.cfg_pkey.val();
        // mr_tlb's command port (INVALIDATE from resp_exec goes first).
        self.mr_busy.next = self.mr.busy.val();
        self.timers_busy.next = self.tm.busy.val();
        // AXI4 master of the responder (resp_top's dma_wr and dma_rd).
        self.m_axi_rsp_awaddr.next = self.rt.m_axi_awaddr.val();
        self.m_axi_rsp_awlen.next = self.rt.m_axi_awlen.val();
        self.m_axi_rsp_awsize.next = self.rt.m_axi_awsize.val();
        self.m_axi_rsp_awburst.next = self.rt.m_axi_awburst.val();
        self.m_axi_rsp_awvalid.next = self.rt.m_axi_awvalid.val();
        self.rt.m_axi_awready.next = self.m_axi_rsp_awready.val();
        self.m_axi_rsp_wdata.next = self.rt.m_axi_wdata.val();
        self.m_axi_rsp_wstrb.next = self.rt.m_axi_wstrb.val();
        self.m_axi_rsp_wlast.next = self.rt.m_axi_wlast.val();
        self.m_axi_rsp_wvalid.next = self.rt.m_axi_wvalid.val();
        self.rt.m_axi_wready.next = self.m_axi_rsp_wready.val();
        self.rt.m_axi_bresp.next = self.m_axi_rsp_bresp.val();
        self.rt.m_axi_bvalid.next = self.m_axi_rsp_bvalid.val();
        self.m_axi_rsp_bready.next = self.rt.m_axi_bready.val();
        self.m_axi_rsp_araddr.next = self.rt.m_axi_araddr.val();
        self.m_axi_rsp_arlen.next = self.rt.m_axi_arlen.val();
        self.m_axi_rsp_arsize.next = self.rt.m_axi_arsize.val();
        self.m_axi_rsp_arburst.next = self.rt.m_axi_arburst.val();
        self.m_axi_rsp_arvalid.next = self.rt.m_axi_arvalid.val();
        self.rt.m_axi_arready.next = self.m_axi_rsp_arready.val();
        self.rt.m_axi_rdata.next = self.m_axi_rsp_rdata.val();
        self.rt.m_axi_rresp.next = self.m_axi_rsp_rresp.val();
        self.rt.m_axi_rlast.next = self.m_axi_rsp_rlast.val();
        self.rt.m_axi_rvalid.next = self.m_axi_rsp_rvalid.val();
        self.m_axi_rsp_rready.next = self.rt.m_axi_rready.val();
        // AXI4 master of the requester (its own dma_wr and dma_rd).
        self.m_axi_req_awaddr.next = self.dw.m_axi_awaddr.val();
        self.m_axi_req_awlen.next = self.dw.m_axi_awlen.val();
        self.m_axi_req_awsize.next = self.dw.m_axi_awsize.val();
        self.m_axi_req_awburst.next = self.dw.m_axi_awburst.val();
        self.m_axi_req_awvalid.next = self.dw.m_axi_awvalid.val();
        self.dw.m_axi_awready.next = self.m_axi_req_awready.val();
        self.m_axi_req_wdata.next = self.dw.m_axi_wdata.val();
        self.m_axi_req_wstrb.next = self.dw.m_axi_wstrb.val();
        self.m_axi_req_wlast.next = self.dw.m_axi_wlast.val();
        self.m_axi_req_wvalid.next = self.dw.m_axi_wvalid.val();
        self.dw.m_axi_wready.next = self.m_axi_req_wready.val();
        self.dw.m_axi_bresp.next = self.m_axi_req_bresp.val();
        self.dw.m_axi_bvalid.next = self.m_axi_req_bvalid.val();
        self.m_axi_req_bready.next = self.dw.m_axi_bready.val();
        self.m_axi_req_araddr.next = self.dr.m_axi_araddr.val();
        self.m_axi_req_arlen.next = self.dr.m_axi_arlen.val();
        self.m_axi_req_arsize.next = self.dr.m_axi_arsize.val();
        self.m_axi_req_arburst.next = self.dr.m_axi_arburst.val();
        self.m_axi_req_arvalid.next = self.dr.m_axi_arvalid.val();
        self.dr.m_axi_arready.next = self.m_axi_req_arready.val();
        self.dr.m_axi_rdata.next = self.m_axi_req_rdata.val();
        self.dr.m_axi_rresp.next = self.m_axi_req_rresp.val();
        self.dr.m_axi_rlast.next = self.m_axi_req_rlast.val();
        self.dr.m_axi_rvalid.next = self.m_axi_req_rvalid.val();
        self.m_axi_req_rready.next = self.dr.m_axi_rready.val();
        // Counters.
        self.cnt_rx_not_roce.next = self.rx.cnt_not_roce.val();
        self.cnt_rx_truncated.next = self.rx.cnt_truncated.val();
        self.cnt_rx_bad_ip_checksum.next = self.rx.cnt_bad_ip_checksum.val();
        self.cnt_rx_ip_options.next = self.rx.cnt_ip_options.val();
        self.cnt_rx_bad_length.next = self.rx.cnt_bad_length.val();
        self.cnt_rx_bad_tver.next = self.rx.cnt_bad_tver.val();
        self.cnt_rx_unknown_opcode.next = self.rx.cnt_unknown_opcode.val();
        self.cnt_rx_bad_padcnt.next = self.rx.cnt_bad_padcnt.val();
        self.cnt_rx_bad_icrc.next = self.rx.cnt_bad_icrc.val();
        self.cnt_rx_accept.next = self.rx.cnt_accept.val();
        self.cnt_rsp_execute.next = self.rt.cnt_execute.val();
        self.cnt_rsp_hdr_drop.next = self.rt.cnt_hdr_drop.val();
        self.cnt_rsp_drop_qpn.next = self.rt.cnt_drop_qpn.val();
        self.cnt_rsp_drop_state.next = self.rt.cnt_drop_state.val();
        self.cnt_rsp_drop_type.next = self.rt.cnt_drop_type.val();
        self.cnt_rsp_drop_response.next = self.rt.cnt_drop_response.val();
        self.cnt_rsp_drop_out_of_seq.next = self.rt.cnt_drop_out_of_seq.val();
        self.cnt_rsp_duplicate.next = self.rt.cnt_duplicate.val();
        self.cnt_rsp_nak_psn_seq.next = self.rt.cnt_nak_psn_seq.val();
        self.cnt_rsp_nak_op_seq.next = self.rt.cnt_nak_op_seq.val();
        self.cnt_rsp_nak_op_invalid.next = self.rt.cnt_nak_op_invalid.val();
        self.cnt_rsp_nak_padcnt.next = self.rt.cnt_nak_padcnt.val();
        self.cnt_rsp_nak_resource.next = self.rt.cnt_nak_resource.val();
        self.cnt_rsp_nak_length.next = self.rt.cnt_nak_length.val();
        self.cnt_rsp_rnr_nak.next = self.rt.cnt_rnr_nak.val();
        self.cnt_rsp_nak_rem_access.next = self.rt.cnt_nak_rem_access.val();
        self.cnt_rsp_nak_rem_op.next = self.rt.cnt_nak_rem_op.val();
        self.cnt_rsp_nak_inv_req.next = self.rt.cnt_nak_inv_req.val();
        self.cnt_rsp_read_replay.next = self.rt.cnt_read_replay.val();
        self.cnt_rsp_atomic_replay.next = self.rt.cnt_atomic_replay.val();
        self.cnt_rsp_dup_no_res.next = self.rt.cnt_dup_no_res.val();
        self.cnt_rsp_drop_err.next = self.rt.cnt_drop_err.val();
        self.cnt_rsp_axi_err.next = self.rt.cnt_axi_err.val();
        self.cnt_rsp_stream_err.next = self.rt.cnt_stream_err.val();
        self.cnt_req_sent.next = self.re.cnt_req_sent.val();
        self.cnt_req_retx.next = self.re.cnt_req_retx.val();
        self.cnt_req_retry_seq_nak.next = self.re.cnt_retry_seq_nak.val();
        self.cnt_req_retry_implied.next = self.re.cnt_retry_implied.val();
        self.cnt_req_retry_timeout.next = self.re.cnt_retry_timeout.val();
        self.cnt_req_retry_rnr.next = self.re.cnt_retry_rnr.val();
        self.cnt_req_retry_ignored.next = self.re.cnt_retry_ignored.val();
        self.cnt_req_retry_exceeded.next = self.re.cnt_retry_exceeded.val();
        self.cnt_req_rnr_exceeded.next = self.re.cnt_rnr_exceeded.val();
        self.cnt_req_rnr_nak.next = self.re.cnt_rnr_nak.val();
        self.cnt_req_nak_err.next = self.re.cnt_nak_err.val();
        self.cnt_req_drop_stale.next = self.re.cnt_drop_stale.val();
        self.cnt_req_drop_unexpected.next = self.re.cnt_drop_unexpected.val();
        self.cnt_req_drop_out_of_order.next = self.re.cnt_drop_out_of_order.val();
        self.cnt_req_drop_qp_state.next = self.re.cnt_drop_qp_state.val();
        self.cnt_req_stream_err.next = self.dw.cnt_stream_err.val();
        self.cnt_mr_bad_key.next = self.mr.cnt_bad_key.val();
        self.cnt_mr_invalidated_key.next = self.mr.cnt_invalidated_key.val();
        self.cnt_mr_pd_mismatch.next = self.mr.cnt_pd_mismatch.val();
        self.cnt_mr_access_denied.next = self.mr.cnt_access_denied.val();
        self.cnt_mr_out_of_bounds.next = self.mr.cnt_out_of_bounds.val();
        self.cnt_mr_tlb_miss.next = self.mr.cnt_tlb_miss.val();
        self.cnt_timers_armed.next = self.tm.cnt_armed.val();
        self.cnt_timers_expired.next = self.tm.cnt_expired.val();
        // qp_timers <-> req_engine.
        self.tm.s_arm_valid.next = self.re.m_arm_valid.val();
        self.tm.s_arm_entry.next = self.re.m_arm_entry.val();
        self.tm.s_arm_delay.next = self.re.m_arm_delay.val();
        self.tm.s_arm_disarm.next = self.re.m_arm_disarm.val();
        self.re.m_arm_ready.next = self.tm.s_arm_ready.val();
        self.re.s_exp_valid.next = self.tm.m_exp_valid.val();
        self.re.s_exp_entry.next = self.tm.m_exp_entry.val();
        self.tm.m_exp_ready.next = self.re.s_exp_ready.val();
        self.re.s_now.next = self.tm.now.val();
        // The requester's dma_rd (payload reads) and dma_wr (READ responses, atomic results).
        self.dr.s_cmd_valid.next = self.re.m_rd_cmd_valid.val();
        self.dr.s_cmd_addr.next = self.re.m_rd_cmd_addr.val();
        self.dr.s_cmd_len.next = self.re.m_rd_cmd_len.val();
        self.dr.s_cmd_last.next = self.re.m_rd_cmd_last.val();
        self.re.m_rd_cmd_ready.next = self.dr.s_cmd_ready.val();
        self.re.s_rd.tdata.next = self.dr.m_data.tdata.val();
        self.re.s_rd.tkeep.next = self.dr.m_data.tkeep.val();
        self.re.s_rd.tlast.next = self.dr.m_data.tlast.val();
        self.re.s_rd.tuser.next = self.dr.m_data.tuser.val();
        self.re.s_rd.tvalid.next = self.dr.m_data.tvalid.val();
        self.dr.m_data.tready.next = self.re.s_rd.tready.val();
        self.dw.s_cmd_valid.next = self.re.m_wr_cmd_valid.val();
        self.dw.s_cmd_addr.next = self.re.m_wr_cmd_addr.val();
        self.dw.s_cmd_len.next = self.re.m_wr_cmd_len.val();
        self.dw.s_cmd_last.next = self.re.m_wr_cmd_last.val();
        self.dw.s_cmd_discard.next = self.re.m_wr_cmd_discard.val();
        self.dw.s_cmd_imm.next = self.re.m_wr_cmd_imm.val();
        self.dw.s_cmd_data.next = self.re.m_wr_cmd_data.val();
        self.re.m_wr_cmd_ready.next = self.dw.s_cmd_ready.val();
        self.re.s_wr_done_valid.next = self.dw.m_done_valid.val();
        self.re.s_wr_done_err.next = self.dw.m_done_err.val();
        self.dw.m_done_ready.next = self.re.s_wr_done_ready.val();
        // Requests (req_engine) and responses (resp_top) to tx_arb.
        self.tx.s_req_valid.next = self.re.m_req_valid.val();
        self.re.m_req_ready.next = self.tx.s_req_ready.val();
        self.tx.s_req_qpn.next = self.re.m_req_qpn.val();
        self.tx.s_req_opcode.next = self.re.m_req_opcode.val();
        self.tx.s_req_psn.next = self.re.m_req_psn.val();
        self.tx.s_req_ack_req.next = self.re.m_req_ack_req.val();
        self.tx.s_req_se.next = self.re.m_req_se.val();
        self.tx.s_req_payload_len.next = self.re.m_req_payload_len.val();
        self.tx.s_req_aeth_syndrome.next = self.re.m_req_aeth_syndrome.val();
        self.tx.s_req_aeth_msn.next = self.re.m_req_aeth_msn.val();
        self.tx.s_req_reth_va.next = self.re.m_req_reth_va.val();
        self.tx.s_req_reth_rkey.next = self.re.m_req_reth_rkey.val();
        self.tx.s_req_reth_dmalen.next = self.re.m_req_reth_dmalen.val();
        self.tx.s_req_immdt.next = self.re.m_req_immdt.val();
        self.tx.s_req_ieth.next = self.re.m_req_ieth.val();
        self.tx.s_req_atomic_va.next = self.re.m_req_atomic_va.val();
        self.tx.s_req_atomic_rkey.next = self.re.m_req_atomic_rkey.val();
        self.tx.s_req_atomic_swap_add.next = self.re.m_req_atomic_swap_add.val();
        self.tx.s_req_atomic_compare.next = self.re.m_req_atomic_compare.val();
        self.tx.s_req_atomic_ack_data.next = self.re.m_req_atomic_ack_data.val();
        self.tx.s_req_becn.next = self.re.m_req_becn.val();
        self.tx.s_req_pay.tdata.next = self.re.m_req_pay.tdata.val();
        self.tx.s_req_pay.tkeep.next = self.re.m_req_pay.tkeep.val();
        self.tx.s_req_pay.tlast.next = self.re.m_req_pay.tlast.val();
        self.tx.s_req_pay.tuser.next = self.re.m_req_pay.tuser.val();
        self.tx.s_req_pay.tvalid.next = self.re.m_req_pay.tvalid.val();
        self.re.m_req_pay.tready.next = self.tx.s_req_pay.tready.val();
        self.tx.s_rsp_valid.next = self.rt.m_rsp_valid.val();
        self.rt.m_rsp_ready.next = self.tx.s_rsp_ready.val();
        self.tx.s_rsp_qpn.next = bit_cast::<Q, 24>(self.rt.m_rsp_qpn.val());
        self.tx.s_rsp_opcode.next = self.rt.m_rsp_opcode.val();
        self.tx.s_rsp_psn.next = self.rt.m_rsp_psn.val();
        self.tx.s_rsp_payload_len.next = self.rt.m_rsp_payload_len.val();
        self.tx.s_rsp_aeth_syndrome.next = self.rt.m_rsp_syndrome.val();
        self.tx.s_rsp_aeth_msn.next = self.rt.m_rsp_msn.val();
        self.tx.s_rsp_atomic_ack_data.next = self.rt.m_rsp_atomic_ack_data.val();
        self.tx.s_rsp_ack_req.next = 0.into();
        self.tx.s_rsp_se.next = 0.into();
        self.tx.s_rsp_reth_va.next = 0.into();
        self.tx.s_rsp_reth_rkey.next = 0.into();
        self.tx.s_rsp_reth_dmalen.next = 0.into();
        self.tx.s_rsp_immdt.next = 0.into();
        self.tx.s_rsp_ieth.next = 0.into();
        self.tx.s_rsp_atomic_va.next = 0.into();
        self.tx.s_rsp_atomic_rkey.next = 0.into();
        self.tx.s_rsp_atomic_swap_add.next = 0.into();
        self.tx.s_rsp_atomic_compare.next = 0.into();
        self.tx.s_rsp_becn.next = 0.into();
        self.tx.s_rsp_pay.tdata.next = self.rt.m_rsp_pay.tdata.val();
        self.tx.s_rsp_pay.tkeep.next = self.rt.m_rsp_pay.tkeep.val();
        self.tx.s_rsp_pay.tlast.next = self.rt.m_rsp_pay.tlast.val();
        self.tx.s_rsp_pay.tuser.next = self.rt.m_rsp_pay.tuser.val();
        self.tx.s_rsp_pay.tvalid.next = self.rt.m_rsp_pay.tvalid.val();
        self.rt.m_rsp_pay.tready.next = self.tx.s_rsp_pay.tready.val();
        // Dispatch: header fields to both consumers (valid decides).
        self.rt.s_hdr_drop.next = self.rx.m_hdr_drop.val();
        self.rt.s_hdr_opcode.next = self.rx.m_hdr_opcode.val();
        self.rt.s_hdr_padcnt.next = self.rx.m_hdr_padcnt.val();
        self.rt.s_hdr_destqp.next = self.rx.m_hdr_destqp.val();
        self.rt.s_hdr_ackreq.next = self.rx.m_hdr_ackreq.val();
        self.rt.s_hdr_se.next = self.rx.m_hdr_se.val();
        self.rt.s_hdr_psn.next = self.rx.m_hdr_psn.val();
        self.rt.s_hdr_payload_len.next = self.rx.m_hdr_payload_len.val();
        self.rt.s_hdr_reth_va.next = self.rx.m_hdr_reth_va.val();
        self.rt.s_hdr_reth_rkey.next = self.rx.m_hdr_reth_rkey.val();
        self.rt.s_hdr_reth_dmalen.next = self.rx.m_hdr_reth_dmalen.val();
        self.rt.s_hdr_immdt.next = self.rx.m_hdr_immdt.val();
        self.rt.s_hdr_ieth.next = self.rx.m_hdr_ieth.val();
        self.rt.s_hdr_atomic_va.next = self.rx.m_hdr_atomic_va.val();
        self.rt.s_hdr_atomic_rkey.next = self.rx.m_hdr_atomic_rkey.val();
        self.rt.s_hdr_atomic_swap_add.next = self.rx.m_hdr_atomic_swap_add.val();
        self.rt.s_hdr_atomic_compare.next = self.rx.m_hdr_atomic_compare.val();
        self.re.s_rsp_destqp.next = self.rx.m_hdr_destqp.val();
        self.re.s_rsp_opcode.next = self.rx.m_hdr_opcode.val();
        self.re.s_rsp_psn.next = self.rx.m_hdr_psn.val();
        self.re.s_rsp_payload_len.next = self.rx.m_hdr_payload_len.val();
        self.re.s_rsp_aeth_syndrome.next = self.rx.m_hdr_aeth_syndrome.val();
        self.re.s_rsp_aeth_msn.next = self.rx.m_hdr_aeth_msn.val();
        self.re.s_rsp_atomicack_orig.next = self.rx.m_hdr_atomicack_orig.val();
        self.rt.s_pay.tdata.next = self.rx.m_axis.tdata.val();
        self.dw.s_pay.tdata.next = self.rx.m_axis.tdata.val();
        self.rt.s_pay.tkeep.next = self.rx.m_axis.tkeep.val();
        self.dw.s_pay.tkeep.next = self.rx.m_axis.tkeep.val();
        self.rt.s_pay.tlast.next = self.rx.m_axis.tlast.val();
        self.dw.s_pay.tlast.next = self.rx.m_axis.tlast.val();
        self.rt.s_pay.tuser.next = self.rx.m_axis.tuser.val();
        self.dw.s_pay.tuser.next = self.rx.m_axis.tuser.val();
        // mr_tlb grants: fields to both clients (valid decides).
        self.rt.s_mr_grant_pa.next = self.mr.m_grant_pa.val();
        self.re.s_mr_grant_pa.next = self.mr.m_grant_pa.val();
        self.rt.s_mr_grant_len.next = self.mr.m_grant_len.val();
        self.re.s_mr_grant_len.next = self.mr.m_grant_len.val();
        self.rt.s_mr_grant_last.next = self.mr.m_grant_last.val();
        self.re.s_mr_grant_last.next = self.mr.m_grant_last.val();
        self.rt.s_mr_grant_reason.next = self.mr.m_grant_reason.val();
        self.re.s_mr_grant_reason.next = self.mr.m_grant_reason.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates() {
        let mut b = RcTransportSmall64::new(16);
        b.connect_all();
        yosys_validate("rc_transport", &generate_verilog(&b)).unwrap();
    }

    #[test]
    fn response_class_is_the_tables() {
        let b = response_opcodes();
        for c in 0..=255u8 {
            let want = matches!(c, 0x0D..=0x12);
            assert_eq!(b.get_bit(c as usize), want, "opcode {c:#x}");
        }
    }
}
