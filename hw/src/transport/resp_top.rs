//! `resp_top`: the RC responder as one block — `resp_chk` (header
//! checks, per-QP responder state), `resp_exec` (what each command
//! means), `dma_wr` and `dma_rd` (the AXI4 master) — between `roce_rx`'s
//! descriptor and payload outputs and `tx_arb`'s responder port. Outside
//! it: the csr block's context port, `mr_tlb`'s request port, the host
//! interface's receive queues and completions, `mr_tlb`'s command port
//! for invalidation, and AXI4 memory. The executor's move to Error goes
//! to `resp_chk` as `EV_ERROR`, ahead of the firmware's events.

use crate::csr::QP_CTX_BITS;
use crate::dma::{DmaRd, DmaWr};
use crate::resp_chk::{RespChk, EV_ERROR, PD_BITS};
use crate::resp_exec::RespExec;
use crate::stream::{check_width, StreamIn, StreamOut};
use rust_hdl_core::prelude::*;

/// The responder: width `W` (`K` = W/8), `2^Q` QPs, `A` = Q + 4.
#[derive(LogicBlock)]
pub struct RespTop<const W: usize, const K: usize, const Q: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // Request headers (roce_rx's descriptor; resp_chk's s_hdr_*).
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
    /// The request payloads (roce_rx's m_axis), to dma_wr.
    pub s_pay: StreamIn<W, K>,
    // Events from the firmware (resp_chk's s_ev_*); the executor's Error goes first.
    pub s_ev_valid: Signal<In, Bit>,
    pub s_ev_ready: Signal<Out, Bit>,
    pub s_ev_kind: Signal<In, Bits<2>>,
    pub s_ev_qpn: Signal<In, Bits<24>>,
    pub s_ev_count: Signal<In, Bits<16>>,
    // The csr block's datapath context port (2-cycle form).
    pub qp_rd_addr: Signal<Out, Bits<Q>>,
    pub qp_rd_data: Signal<In, Bits<QP_CTX_BITS>>,
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
    // Receive WQEs and completions, invalidation (the host interface, mr_tlb's command port).
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
    pub m_inv_valid: Signal<Out, Bit>,
    pub m_inv_ready: Signal<In, Bit>,
    pub m_inv_key: Signal<Out, Bits<32>>,
    pub s_inv_done_valid: Signal<In, Bit>,
    pub s_inv_done_err: Signal<In, Bit>,
    // AXI4 master: writes (dma_wr) and reads (dma_rd).
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
    // Responses (to tx_arb's s_rsp_*).
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
    /// resp_chk moved a QP to Error (one-cycle pulse).
    pub m_qp_error_valid: Signal<Out, Bit>,
    pub m_qp_error_qpn: Signal<Out, Bits<24>>,
    /// The executor moved a QP to Error (its EV_ERROR taken by resp_chk this
    /// cycle).
    pub m_exec_error_valid: Signal<Out, Bit>,
    pub m_exec_error_qpn: Signal<Out, Bits<24>>,
    // Counters: resp_chk's, resp_exec's, dma_wr's stream errors.
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
    pub cnt_nak_rem_access: Signal<Out, Bits<32>>,
    pub cnt_nak_rem_op: Signal<Out, Bits<32>>,
    pub cnt_nak_inv_req: Signal<Out, Bits<32>>,
    pub cnt_read_replay: Signal<Out, Bits<32>>,
    pub cnt_atomic_replay: Signal<Out, Bits<32>>,
    pub cnt_dup_no_res: Signal<Out, Bits<32>>,
    pub cnt_drop_err: Signal<Out, Bits<32>>,
    pub cnt_axi_err: Signal<Out, Bits<32>>,
    pub cnt_stream_err: Signal<Out, Bits<32>>,
    chk: RespChk<Q>,
    ex: RespExec<W, K, Q, A>,
    dw: DmaWr<W, K>,
    dr: DmaRd<W, K>,
    ev_error: Constant<Bits<2>>,
}

/// 1024 QPs at W = 64..512.
pub type RespTop64 = RespTop<64, 8, 10, 14>;
pub type RespTop128 = RespTop<128, 16, 10, 14>;
pub type RespTop256 = RespTop<256, 32, 10, 14>;
pub type RespTop512 = RespTop<512, 64, 10, 14>;
/// 64 QPs (simulation builds).
pub type RespTopSmall64 = RespTop<64, 8, 6, 10>;
pub type RespTopSmall512 = RespTop<512, 64, 6, 10>;

impl<const W: usize, const K: usize, const Q: usize, const A: usize> RespTop<W, K, Q, A> {
    pub fn new() -> Self {
        check_width("resp_top", W, K);
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
            s_pay: Default::default(),
            s_ev_valid: Default::default(),
            s_ev_ready: Default::default(),
            s_ev_kind: Default::default(),
            s_ev_qpn: Default::default(),
            s_ev_count: Default::default(),
            qp_rd_addr: Default::default(),
            qp_rd_data: Default::default(),
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
            m_qp_error_valid: Default::default(),
            m_qp_error_qpn: Default::default(),
            m_exec_error_valid: Default::default(),
            m_exec_error_qpn: Default::default(),
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
            cnt_nak_rem_access: Default::default(),
            cnt_nak_rem_op: Default::default(),
            cnt_nak_inv_req: Default::default(),
            cnt_read_replay: Default::default(),
            cnt_atomic_replay: Default::default(),
            cnt_dup_no_res: Default::default(),
            cnt_drop_err: Default::default(),
            cnt_axi_err: Default::default(),
            cnt_stream_err: Default::default(),
            chk: RespChk::new(),
            ex: RespExec::new(),
            dw: DmaWr::new(),
            dr: DmaRd::new(),
            ev_error: Constant::new(EV_ERROR.into()),
        }
    }
}

impl<const W: usize, const K: usize, const Q: usize, const A: usize> Default
    for RespTop<W, K, Q, A>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const K: usize, const Q: usize, const A: usize> Logic for RespTop<W, K, Q, A> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, chk, ex, dw, dr);
        self.chk.reset.next = self.reset.val();
        self.ex.reset.next = self.reset.val();
        self.dw.reset.next = self.reset.val();
        self.dr.reset.next = self.reset.val();
        self.chk.s_hdr_valid.next = self.s_hdr_valid.val();
        self.s_hdr_ready.next = self.chk.s_hdr_ready.val();
        self.chk.s_hdr_drop.next = self.s_hdr_drop.val();
        self.chk.s_hdr_opcode.next = self.s_hdr_opcode.val();
        self.chk.s_hdr_padcnt.next = self.s_hdr_padcnt.val();
        self.chk.s_hdr_destqp.next = self.s_hdr_destqp.val();
        self.chk.s_hdr_ackreq.next = self.s_hdr_ackreq.val();
        self.chk.s_hdr_se.next = self.s_hdr_se.val();
        self.chk.s_hdr_psn.next = self.s_hdr_psn.val();
        self.chk.s_hdr_payload_len.next = self.s_hdr_payload_len.val();
        self.chk.s_hdr_reth_va.next = self.s_hdr_reth_va.val();
        self.chk.s_hdr_reth_rkey.next = self.s_hdr_reth_rkey.val();
        self.chk.s_hdr_reth_dmalen.next = self.s_hdr_reth_dmalen.val();
        self.chk.s_hdr_immdt.next = self.s_hdr_immdt.val();
        self.chk.s_hdr_ieth.next = self.s_hdr_ieth.val();
        self.chk.s_hdr_atomic_va.next = self.s_hdr_atomic_va.val();
        self.chk.s_hdr_atomic_rkey.next = self.s_hdr_atomic_rkey.val();
        self.chk.s_hdr_atomic_swap_add.next = self.s_hdr_atomic_swap_add.val();
        self.chk.s_hdr_atomic_compare.next = self.s_hdr_atomic_compare.val();
        self.dw.s_pay.tdata.next = self.s_pay.tdata.val();
        self.dw.s_pay.tkeep.next = self.s_pay.tkeep.val();
        self.dw.s_pay.tlast.next = self.s_pay.tlast.val();
        self.dw.s_pay.tuser.next = self.s_pay.tuser.val();
        self.dw.s_pay.tvalid.next = self.s_pay.tvalid.val();
        self.s_pay.tready.next = self.dw.s_pay.tready.val();
        // The executor's EV_ERROR ahead of the firmware's events.
        self.chk.s_ev_valid.next = self.ex.m_err_valid.val() | self.s_ev_valid.val();
        self.ex.m_err_ready.next = self.chk.s_ev_ready.val();
        self.s_ev_ready.next = self.chk.s_ev_ready.val() & !self.ex.m_err_valid.val();
        if self.ex.m_err_valid.val() {
            self.chk.s_ev_kind.next = self.ev_error.val();
            self.chk.s_ev_qpn.next = self.ex.m_err_qpn.val();
            self.chk.s_ev_count.next = 0.into();
            self.chk.s_ev_exec.next = true;
        } else {
            self.chk.s_ev_kind.next = self.s_ev_kind.val();
            self.chk.s_ev_qpn.next = self.s_ev_qpn.val();
            self.chk.s_ev_count.next = self.s_ev_count.val();
            self.chk.s_ev_exec.next = false;
        }
        self.qp_rd_addr.next = self.chk.qp_rd_addr.val();
        self.chk.qp_rd_data.next = self.qp_rd_data.val();
        // resp_chk's commands to the executor.
        self.ex.s_cmd_valid.next = self.chk.m_cmd_valid.val();
        self.chk.m_cmd_ready.next = self.ex.s_cmd_ready.val();
        self.ex.s_cmd_qpn.next = self.chk.m_cmd_qpn.val();
        self.ex.s_cmd_kind.next = self.chk.m_cmd_kind.val();
        self.ex.s_cmd_code.next = self.chk.m_cmd_code.val();
        self.ex.s_cmd_opcode.next = self.chk.m_cmd_opcode.val();
        self.ex.s_cmd_psn.next = self.chk.m_cmd_psn.val();
        self.ex.s_cmd_msn.next = self.chk.m_cmd_msn.val();
        self.ex.s_cmd_ack_req.next = self.chk.m_cmd_ack_req.val();
        self.ex.s_cmd_se.next = self.chk.m_cmd_se.val();
        self.ex.s_cmd_plen.next = self.chk.m_cmd_plen.val();
        self.ex.s_cmd_va.next = self.chk.m_cmd_va.val();
        self.ex.s_cmd_rkey.next = self.chk.m_cmd_rkey.val();
        self.ex.s_cmd_len.next = self.chk.m_cmd_len.val();
        self.ex.s_cmd_imm.next = self.chk.m_cmd_imm.val();
        self.ex.s_cmd_swap.next = self.chk.m_cmd_swap.val();
        self.ex.s_cmd_compare.next = self.chk.m_cmd_compare.val();
        self.ex.s_cmd_off.next = self.chk.m_cmd_off.val();
        self.ex.s_cmd_ack_psn.next = self.chk.m_cmd_ack_psn.val();
        self.ex.s_cmd_pd.next = self.chk.m_cmd_pd.val();
        self.ex.s_cmd_pmtu.next = self.chk.m_cmd_pmtu.val();
        self.ex.s_cmd_mdra.next = self.chk.m_cmd_mdra.val();
        self.m_mr_req_valid.next = self.ex.m_mr_req_valid.val();
        self.ex.m_mr_req_ready.next = self.m_mr_req_ready.val();
        self.m_mr_req_key.next = self.ex.m_mr_req_key.val();
        self.m_mr_req_pd.next = self.ex.m_mr_req_pd.val();
        self.m_mr_req_access.next = self.ex.m_mr_req_access.val();
        self.m_mr_req_va.next = self.ex.m_mr_req_va.val();
        self.m_mr_req_len.next = self.ex.m_mr_req_len.val();
        self.ex.s_mr_grant_valid.next = self.s_mr_grant_valid.val();
        self.s_mr_grant_ready.next = self.ex.s_mr_grant_ready.val();
        self.ex.s_mr_grant_pa.next = self.s_mr_grant_pa.val();
        self.ex.s_mr_grant_len.next = self.s_mr_grant_len.val();
        self.ex.s_mr_grant_last.next = self.s_mr_grant_last.val();
        self.ex.s_mr_grant_reason.next = self.s_mr_grant_reason.val();
        self.m_rq_req_valid.next = self.ex.m_rq_req_valid.val();
        self.ex.m_rq_req_ready.next = self.m_rq_req_ready.val();
        self.m_rq_req_qpn.next = self.ex.m_rq_req_qpn.val();
        self.m_rq_req_pop.next = self.ex.m_rq_req_pop.val();
        self.ex.s_rq_resp_valid.next = self.s_rq_resp_valid.val();
        self.s_rq_resp_ready.next = self.ex.s_rq_resp_ready.val();
        self.ex.s_rq_resp_ok.next = self.s_rq_resp_ok.val();
        self.ex.s_rq_resp_key.next = self.s_rq_resp_key.val();
        self.ex.s_rq_resp_va.next = self.s_rq_resp_va.val();
        self.ex.s_rq_resp_len.next = self.s_rq_resp_len.val();
        self.m_rcqe_valid.next = self.ex.m_rcqe_valid.val();
        self.ex.m_rcqe_ready.next = self.m_rcqe_ready.val();
        self.m_rcqe_qpn.next = self.ex.m_rcqe_qpn.val();
        self.m_rcqe_status.next = self.ex.m_rcqe_status.val();
        self.m_rcqe_opcode.next = self.ex.m_rcqe_opcode.val();
        self.m_rcqe_len.next = self.ex.m_rcqe_len.val();
        self.m_rcqe_imm.next = self.ex.m_rcqe_imm.val();
        self.m_rcqe_se.next = self.ex.m_rcqe_se.val();
        self.m_inv_valid.next = self.ex.m_inv_valid.val();
        self.ex.m_inv_ready.next = self.m_inv_ready.val();
        self.m_inv_key.next = self.ex.m_inv_key.val();
        self.ex.s_inv_done_valid.next = self.s_inv_done_valid.val();
        self.ex.s_inv_done_err.next = self.s_inv_done_err.val();
        // The executor's DMA commands.
        self.dw.s_cmd_valid.next = self.ex.m_wr_cmd_valid.val();
        self.dw.s_cmd_addr.next = self.ex.m_wr_cmd_addr.val();
        self.dw.s_cmd_len.next = self.ex.m_wr_cmd_len.val();
        self.dw.s_cmd_last.next = self.ex.m_wr_cmd_last.val();
        self.dw.s_cmd_discard.next = self.ex.m_wr_cmd_discard.val();
        self.dw.s_cmd_imm.next = self.ex.m_wr_cmd_imm.val();
        self.dw.s_cmd_data.next = self.ex.m_wr_cmd_data.val();
        self.ex.m_wr_cmd_ready.next = self.dw.s_cmd_ready.val();
        self.ex.s_wr_done_valid.next = self.dw.m_done_valid.val();
        self.ex.s_wr_done_err.next = self.dw.m_done_err.val();
        self.dw.m_done_ready.next = self.ex.s_wr_done_ready.val();
        self.dr.s_cmd_valid.next = self.ex.m_rd_cmd_valid.val();
        self.dr.s_cmd_addr.next = self.ex.m_rd_cmd_addr.val();
        self.dr.s_cmd_len.next = self.ex.m_rd_cmd_len.val();
        self.dr.s_cmd_last.next = self.ex.m_rd_cmd_last.val();
        self.ex.m_rd_cmd_ready.next = self.dr.s_cmd_ready.val();
        self.ex.s_rd.tdata.next = self.dr.m_data.tdata.val();
        self.ex.s_rd.tkeep.next = self.dr.m_data.tkeep.val();
        self.ex.s_rd.tlast.next = self.dr.m_data.tlast.val();
        self.ex.s_rd.tuser.next = self.dr.m_data.tuser.val();
        self.ex.s_rd.tvalid.next = self.dr.m_data.tvalid.val();
        self.dr.m_data.tready.next = self.ex.s_rd.tready.val();
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
        self.m_rsp_valid.next = self.ex.m_rsp_valid.val();
        self.ex.m_rsp_ready.next = self.m_rsp_ready.val();
        self.m_rsp_qpn.next = self.ex.m_rsp_qpn.val();
        self.m_rsp_opcode.next = self.ex.m_rsp_opcode.val();
        self.m_rsp_psn.next = self.ex.m_rsp_psn.val();
        self.m_rsp_payload_len.next = self.ex.m_rsp_payload_len.val();
        self.m_rsp_syndrome.next = self.ex.m_rsp_syndrome.val();
        self.m_rsp_msn.next = self.ex.m_rsp_msn.val();
        self.m_rsp_atomic_ack_data.next = self.ex.m_rsp_atomic_ack_data.val();
        self.m_rsp_pay.tdata.next = self.ex.m_rsp_pay.tdata.val();
        self.m_rsp_pay.tkeep.next = self.ex.m_rsp_pay.tkeep.val();
        self.m_rsp_pay.tlast.next = self.ex.m_rsp_pay.tlast.val();
        self.m_rsp_pay.tuser.next = self.ex.m_rsp_pay.tuser.val();
        self.m_rsp_pay.tvalid.next = self.ex.m_rsp_pay.tvalid.val();
        self.ex.m_rsp_pay.tready.next = self.m_rsp_pay.tready.val();
        self.m_qp_error_valid.next = self.chk.m_qp_error_valid.val();
        self.m_qp_error_qpn.next = self.chk.m_qp_error_qpn.val();
        self.m_exec_error_valid.next = self.ex.m_err_valid.val() & self.chk.s_ev_ready.val();
        self.m_exec_error_qpn.next = self.ex.m_err_qpn.val();
        self.cnt_execute.next = self.chk.cnt_execute.val();
        self.cnt_hdr_drop.next = self.chk.cnt_hdr_drop.val();
        self.cnt_drop_qpn.next = self.chk.cnt_drop_qpn.val();
        self.cnt_drop_state.next = self.chk.cnt_drop_state.val();
        self.cnt_drop_type.next = self.chk.cnt_drop_type.val();
        self.cnt_drop_response.next = self.chk.cnt_drop_response.val();
        self.cnt_drop_out_of_seq.next = self.chk.cnt_drop_out_of_seq.val();
        self.cnt_duplicate.next = self.chk.cnt_duplicate.val();
        self.cnt_nak_psn_seq.next = self.chk.cnt_nak_psn_seq.val();
        self.cnt_nak_op_seq.next = self.chk.cnt_nak_op_seq.val();
        self.cnt_nak_op_invalid.next = self.chk.cnt_nak_op_invalid.val();
        self.cnt_nak_padcnt.next = self.chk.cnt_nak_padcnt.val();
        self.cnt_nak_resource.next = self.chk.cnt_nak_resource.val();
        self.cnt_nak_length.next = self.chk.cnt_nak_length.val();
        self.cnt_rnr_nak.next = self.chk.cnt_rnr_nak.val();
        self.cnt_nak_rem_access.next = self.ex.cnt_nak_rem_access.val();
        self.cnt_nak_rem_op.next = self.ex.cnt_nak_rem_op.val();
        self.cnt_nak_inv_req.next = self.ex.cnt_nak_inv_req.val();
        self.cnt_read_replay.next = self.ex.cnt_read_replay.val();
        self.cnt_atomic_replay.next = self.ex.cnt_atomic_replay.val();
        self.cnt_dup_no_res.next = self.ex.cnt_dup_no_res.val();
        self.cnt_drop_err.next = self.ex.cnt_drop_err.val();
        self.cnt_axi_err.next = self.ex.cnt_axi_err.val();
        self.cnt_stream_err.next = self.dw.cnt_stream_err.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates() {
        let mut b = RespTopSmall64::new();
        b.connect_all();
        yosys_validate("resp_top", &generate_verilog(&b)).unwrap();
    }
}
