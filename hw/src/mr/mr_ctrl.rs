//! `mr_ctrl`: the CSR block driving the memory-region table. The host (or
//! the firmware) programs regions and page tables through the `mr` block of
//! the register map (AXI4-Lite), and the datapath asks `mr_tlb` for grants.
//!
//! `Csr`'s `m_mr_cmd_*` is wired to `MrTlb`'s `s_cmd_*` and its answer
//! (`m_cmd_done`, `m_cmd_error`) back to `mr.status`. Everything else of
//! both blocks is a port of this one: the AXI4-Lite slave, the counter
//! lanes and the QP context read port of `Csr`; the request and grant
//! ports, `busy`, `tlb_miss` and the counters of `MrTlb`.

use crate::csr::{Csr, ADDR_BITS, COUNTER_IN_BITS, MR_COUNTER_BITS, QP_CTX_BITS};
use crate::mr_tlb::MrTlb;
use rust_hdl_core::prelude::*;

// The lane order below is `roce_regs::MrCounter`'s: 5 reject reasons, then
// TLB misses.
const _: () = assert!(MR_COUNTER_BITS == 32 * 6);

/// CSR block (`QA` QPN bits) and MR table (`MA`, `TA`, `PTA` as `MrTlb`).
#[derive(LogicBlock)]
pub struct MrCtrl<const QA: usize, const MA: usize, const TA: usize, const PTA: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // AXI4-Lite slave (the CSR window).
    pub s_axil_awaddr: Signal<In, Bits<ADDR_BITS>>,
    pub s_axil_awvalid: Signal<In, Bit>,
    pub s_axil_awready: Signal<Out, Bit>,
    pub s_axil_wdata: Signal<In, Bits<32>>,
    pub s_axil_wstrb: Signal<In, Bits<4>>,
    pub s_axil_wvalid: Signal<In, Bit>,
    pub s_axil_wready: Signal<Out, Bit>,
    pub s_axil_bresp: Signal<Out, Bits<2>>,
    pub s_axil_bvalid: Signal<Out, Bit>,
    pub s_axil_bready: Signal<In, Bit>,
    pub s_axil_araddr: Signal<In, Bits<ADDR_BITS>>,
    pub s_axil_arvalid: Signal<In, Bit>,
    pub s_axil_arready: Signal<Out, Bit>,
    pub s_axil_rdata: Signal<Out, Bits<32>>,
    pub s_axil_rresp: Signal<Out, Bits<2>>,
    pub s_axil_rvalid: Signal<Out, Bit>,
    pub s_axil_rready: Signal<In, Bit>,
    pub counters: Signal<In, Bits<COUNTER_IN_BITS>>,
    pub qp_rd_addr: Signal<In, Bits<QA>>,
    pub qp_rd_data: Signal<Out, Bits<QP_CTX_BITS>>,
    // MR table: status, requests, grants, counters.
    pub busy: Signal<Out, Bit>,
    pub s_req_valid: Signal<In, Bit>,
    pub s_req_ready: Signal<Out, Bit>,
    pub s_req_key: Signal<In, Bits<32>>,
    pub s_req_pd: Signal<In, Bits<16>>,
    pub s_req_access: Signal<In, Bits<4>>,
    pub s_req_va: Signal<In, Bits<64>>,
    pub s_req_len: Signal<In, Bits<32>>,
    pub m_grant_valid: Signal<Out, Bit>,
    pub m_grant_ready: Signal<In, Bit>,
    pub m_grant_pa: Signal<Out, Bits<64>>,
    pub m_grant_len: Signal<Out, Bits<32>>,
    pub m_grant_last: Signal<Out, Bit>,
    pub m_grant_reason: Signal<Out, Bits<3>>,
    pub tlb_miss: Signal<Out, Bit>,
    pub cnt_bad_key: Signal<Out, Bits<32>>,
    pub cnt_invalidated_key: Signal<Out, Bits<32>>,
    pub cnt_pd_mismatch: Signal<Out, Bits<32>>,
    pub cnt_access_denied: Signal<Out, Bits<32>>,
    pub cnt_out_of_bounds: Signal<Out, Bits<32>>,
    pub cnt_tlb_miss: Signal<Out, Bits<32>>,
    csr: Csr<QA>,
    tlb: MrTlb<MA, TA, PTA>,
}

/// The default build: 256 QP contexts, 4096 MRs, 256 TLB entries, 8192
/// page-table entries.
pub type MrCtrlDefault = MrCtrl<8, 12, 8, 13>;
/// The small test build: 256 QP contexts, 64 MRs, 8 TLB entries, 256
/// page-table entries.
pub type MrCtrlSmall = MrCtrl<8, 6, 3, 8>;

impl<const QA: usize, const MA: usize, const TA: usize, const PTA: usize> MrCtrl<QA, MA, TA, PTA> {
    /// `n` QP contexts in the CSR block.
    pub fn new(n: u32) -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_axil_awaddr: Default::default(),
            s_axil_awvalid: Default::default(),
            s_axil_awready: Default::default(),
            s_axil_wdata: Default::default(),
            s_axil_wstrb: Default::default(),
            s_axil_wvalid: Default::default(),
            s_axil_wready: Default::default(),
            s_axil_bresp: Default::default(),
            s_axil_bvalid: Default::default(),
            s_axil_bready: Default::default(),
            s_axil_araddr: Default::default(),
            s_axil_arvalid: Default::default(),
            s_axil_arready: Default::default(),
            s_axil_rdata: Default::default(),
            s_axil_rresp: Default::default(),
            s_axil_rvalid: Default::default(),
            s_axil_rready: Default::default(),
            counters: Default::default(),
            qp_rd_addr: Default::default(),
            qp_rd_data: Default::default(),
            busy: Default::default(),
            s_req_valid: Default::default(),
            s_req_ready: Default::default(),
            s_req_key: Default::default(),
            s_req_pd: Default::default(),
            s_req_access: Default::default(),
            s_req_va: Default::default(),
            s_req_len: Default::default(),
            m_grant_valid: Default::default(),
            m_grant_ready: Default::default(),
            m_grant_pa: Default::default(),
            m_grant_len: Default::default(),
            m_grant_last: Default::default(),
            m_grant_reason: Default::default(),
            tlb_miss: Default::default(),
            cnt_bad_key: Default::default(),
            cnt_invalidated_key: Default::default(),
            cnt_pd_mismatch: Default::default(),
            cnt_access_denied: Default::default(),
            cnt_out_of_bounds: Default::default(),
            cnt_tlb_miss: Default::default(),
            csr: Csr::new(n),
            tlb: MrTlb::new(),
        }
    }
}

impl<const QA: usize, const MA: usize, const TA: usize, const PTA: usize> Logic
    for MrCtrl<QA, MA, TA, PTA>
{
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, csr, tlb);
        self.csr.reset.next = self.reset.val();
        self.tlb.reset.next = self.reset.val();
        // CSR block.
        self.csr.s_axil_awaddr.next = self.s_axil_awaddr.val();
        self.csr.s_axil_awvalid.next = self.s_axil_awvalid.val();
        self.s_axil_awready.next = self.csr.s_axil_awready.val();
        self.csr.s_axil_wdata.next = self.s_axil_wdata.val();
        self.csr.s_axil_wstrb.next = self.s_axil_wstrb.val();
        self.csr.s_axil_wvalid.next = self.s_axil_wvalid.val();
        self.s_axil_wready.next = self.csr.s_axil_wready.val();
        self.s_axil_bresp.next = self.csr.s_axil_bresp.val();
        self.s_axil_bvalid.next = self.csr.s_axil_bvalid.val();
        self.csr.s_axil_bready.next = self.s_axil_bready.val();
        self.csr.s_axil_araddr.next = self.s_axil_araddr.val();
        self.csr.s_axil_arvalid.next = self.s_axil_arvalid.val();
        self.s_axil_arready.next = self.csr.s_axil_arready.val();
        self.s_axil_rdata.next = self.csr.s_axil_rdata.val();
        self.s_axil_rresp.next = self.csr.s_axil_rresp.val();
        self.s_axil_rvalid.next = self.csr.s_axil_rvalid.val();
        self.csr.s_axil_rready.next = self.s_axil_rready.val();
        self.csr.counters.next = self.counters.val();
        self.csr.qp_rd_addr.next = self.qp_rd_addr.val();
        self.qp_rd_data.next = self.csr.qp_rd_data.val();
        // One datapath read port here (the csr's default build).
        self.csr.qp_rd_addr_1.next = 0.into();
        self.csr.qp_rd_addr_2.next = 0.into();
        // Commands: CSR → MR table, and its answer back.
        self.tlb.s_cmd_valid.next = self.csr.m_mr_cmd_valid.val();
        self.csr.m_mr_cmd_ready.next = self.tlb.s_cmd_ready.val();
        self.tlb.s_cmd_op.next = self.csr.m_mr_cmd_op.val();
        self.tlb.s_cmd_key.next = self.csr.m_mr_cmd_key.val();
        self.tlb.s_cmd_pd.next = self.csr.m_mr_cmd_pd.val();
        self.tlb.s_cmd_access.next = self.csr.m_mr_cmd_access.val();
        self.tlb.s_cmd_addr.next = self.csr.m_mr_cmd_addr.val();
        self.tlb.s_cmd_len.next = self.csr.m_mr_cmd_len.val();
        self.tlb.s_cmd_shift.next = self.csr.m_mr_cmd_shift.val();
        self.tlb.s_cmd_index.next = self.csr.m_mr_cmd_index.val();
        self.csr.mr_cmd_done.next = self.tlb.m_cmd_done.val();
        self.csr.mr_cmd_error.next = self.tlb.m_cmd_error.val();
        // The table's counters into `mr.counter`, lane i = `MrCounter` i
        // (checked by name in sim/tests/mr_ctrl.rs).
        self.csr.mr_counters.next = bit_cast::<MR_COUNTER_BITS, 32>(self.tlb.cnt_bad_key.val())
            | (bit_cast::<MR_COUNTER_BITS, 32>(self.tlb.cnt_invalidated_key.val()) << 32)
            | (bit_cast::<MR_COUNTER_BITS, 32>(self.tlb.cnt_pd_mismatch.val()) << 64)
            | (bit_cast::<MR_COUNTER_BITS, 32>(self.tlb.cnt_access_denied.val()) << 96)
            | (bit_cast::<MR_COUNTER_BITS, 32>(self.tlb.cnt_out_of_bounds.val()) << 128)
            | (bit_cast::<MR_COUNTER_BITS, 32>(self.tlb.cnt_tlb_miss.val()) << 160);
        // MR table datapath.
        self.busy.next = self.tlb.busy.val();
        self.tlb.s_req_valid.next = self.s_req_valid.val();
        self.s_req_ready.next = self.tlb.s_req_ready.val();
        self.tlb.s_req_key.next = self.s_req_key.val();
        self.tlb.s_req_pd.next = self.s_req_pd.val();
        self.tlb.s_req_access.next = self.s_req_access.val();
        self.tlb.s_req_va.next = self.s_req_va.val();
        self.tlb.s_req_len.next = self.s_req_len.val();
        self.m_grant_valid.next = self.tlb.m_grant_valid.val();
        self.tlb.m_grant_ready.next = self.m_grant_ready.val();
        self.m_grant_pa.next = self.tlb.m_grant_pa.val();
        self.m_grant_len.next = self.tlb.m_grant_len.val();
        self.m_grant_last.next = self.tlb.m_grant_last.val();
        self.m_grant_reason.next = self.tlb.m_grant_reason.val();
        self.tlb_miss.next = self.tlb.tlb_miss.val();
        self.cnt_bad_key.next = self.tlb.cnt_bad_key.val();
        self.cnt_invalidated_key.next = self.tlb.cnt_invalidated_key.val();
        self.cnt_pd_mismatch.next = self.tlb.cnt_pd_mismatch.val();
        self.cnt_access_denied.next = self.tlb.cnt_access_denied.val();
        self.cnt_out_of_bounds.next = self.tlb.cnt_out_of_bounds.val();
        self.cnt_tlb_miss.next = self.tlb.cnt_tlb_miss.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mr_ctrl_synthesizes() {
        let mut m = MrCtrl::<4, 6, 3, 8>::new(16);
        m.connect_all();
        let v = generate_verilog(&m);
        yosys_validate("mr_ctrl", &v).unwrap();
    }
}
