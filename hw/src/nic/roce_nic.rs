//! `roce_nic`: the whole NIC (issue 36 §2). Inside:
//!
//! - `rc_transport` (`roce_rx`, the responder, the requester and
//!   completer, `qp_timers`, `mr_tlb`, `tx_arb` + `roce_tx`) on the MAC's
//!   frame streams;
//! - `host_if`: send, receive and completion queues in host memory, their
//!   doorbells, WQE fetch and CQE writes;
//! - `csr`: the register map's configuration, mailbox, counters, MR
//!   command registers and the QP context table, with three datapath read
//!   ports (responder, requester, `tx_arb`) and its configuration outputs
//!   (MAC, UDP source port, GID and PKey tables) wired to `tx_arb`;
//! - `fw_core`: PicoRV32 with the firmware in its RAM, serving the mailbox;
//! - `qp_events`: the firmware's `qp.state` writes (seen on the csr
//!   block's context-write report) become the transport's `INIT`,
//!   `CLEAR` and `ERROR` events, and so does one side of the transport's
//!   move to Error for the other side; `host_if`'s receive doorbells its
//!   `POST_RECV` credits;
//! - `axil_bus`: the host's AXI4-Lite port and the softcore's onto the csr
//!   block and `host_if`'s registers (the `db` and `hq` blocks);
//! - two `axi_arb` 2:1 arbiters: the responder's, the requester's and
//!   `host_if`'s AXI4 masters onto the one DMA master `m_axi_*`.
//!
//! Outside: the MAC streams (`s_axis`, `m_axis`), the host's AXI4-Lite
//! slave (`s_axil_*`, the `roce-regs` window), the AXI4 DMA master
//! (`m_axi_*`, W bits), the firmware loader (`fw_*`, while `reset`), the
//! interrupt-shaped pulses (`m_event_*`: an armed CQ's CQE written;
//! `m_qp_err_*`: a bad doorbell or WQE; `m_req_err_*`, `m_rsp_err_*`,
//! `m_exec_err_*`: the transport moved a QP to Error), status and the
//! transport's counters.
//!
//! Not yet: the transport's own moves to Error reach both of its sides
//! (through `qp_events`) and the pulses, but are not written back into
//! the context table (the host reads the state the firmware last wrote); `RxBadPkey` counts 0 (no PKey check
//! in the responder yet).

use crate::csr::{Csr, ADDR_BITS, COUNTER_IN_BITS, CTX_OFFSET_BITS, MR_COUNTER_BITS};
use crate::host::axi_arb::AxiArb2;
use crate::host::axil_bus::AxilBus;
use crate::host_if::HostIf;
use crate::nic::fw_core::FwCore;
use crate::nic::qp_events::{QpEvents, OFFSET_BITS};
use crate::rc_transport::RcTransport;
use crate::stream::{check_width, StreamIn, StreamOut};
use rust_hdl_core::prelude::*;

/// The NIC: width `W` (`K` = W/8); `2^Q` QPs; `RA`..`L` the transport's
/// derived sizes ([`RcTransport`]); `NQ` = 2^Q and `2^C` CQs
/// ([`HostIf`]); `2^FA` words of firmware RAM.
#[derive(LogicBlock)]
pub struct RoceNic<
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
    const NQ: usize,
    const C: usize,
    const FA: usize,
> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Frames from and to the MAC.
    pub s_axis: StreamIn<W, K>,
    pub m_axis: StreamOut<W, K>,
    /// The host's AXI4-Lite port: the register window (`roce_regs`).
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
    /// The DMA master: WQE fetch, CQE writes, payload reads and writes.
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
    /// Firmware loader: write RAM word `fw_waddr` while `reset` is high.
    pub fw_we: Signal<In, Bit>,
    pub fw_waddr: Signal<In, Bits<FA>>,
    pub fw_wdata: Signal<In, Bits<32>>,
    /// Clearing tables after reset (MR table, timers, host rings, QP
    /// states): the NIC takes no traffic and no doorbells before it falls.
    pub busy: Signal<Out, Bit>,
    pub fw_trap: Signal<Out, Bit>,
    pub fw_bus_error: Signal<Out, Bit>,
    /// An armed CQ's CQE was written (`host_if`).
    pub m_event_valid: Signal<Out, Bit>,
    pub m_event_cqn: Signal<Out, Bits<16>>,
    /// A bad doorbell or a bad WQE stopped a queue (`host_if`).
    pub m_qp_err_valid: Signal<Out, Bit>,
    pub m_qp_err_qpn: Signal<Out, Bits<24>>,
    /// The requester moved a QP to Error (retries exhausted, a NAK).
    pub m_req_err_valid: Signal<Out, Bit>,
    pub m_req_err_qpn: Signal<Out, Bits<24>>,
    /// The responder's checks moved a QP to Error.
    pub m_rsp_err_valid: Signal<Out, Bit>,
    pub m_rsp_err_qpn: Signal<Out, Bits<24>>,
    /// The responder's executor moved a QP to Error.
    pub m_exec_err_valid: Signal<Out, Bit>,
    pub m_exec_err_qpn: Signal<Out, Bits<24>>,
    /// A payload stream error (`rc_transport`'s `error_payload`).
    pub error_payload: Signal<Out, Bit>,
    /// State events `qp_events` could not queue (0 unless misused).
    pub ev_overflow: Signal<Out, Bits<32>>,
    /// CQEs not written because their CQ was full.
    pub cnt_cq_overrun: Signal<Out, Bits<32>>,
    /// The transport's counters (`rc_transport`'s).
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
    pub cnt_to_responder: Signal<Out, Bits<32>>,
    pub cnt_to_requester: Signal<Out, Bits<32>>,
    tr: RcTransport<W, K, Q, RA, E, R, QA, B, MA, TA, PTA, TMA, LB, L>,
    hif: HostIf<W, K, Q, NQ, C>,
    csr: Csr<Q>,
    ev: QpEvents<Q>,
    fw: FwCore<FA>,
    bus: AxilBus,
    a1: AxiArb2<W, K>,
    a2: AxiArb2<W, K>,
    lanes: Signal<Local, Bits<COUNTER_IN_BITS>>,
    mr_lanes: Signal<Local, Bits<MR_COUNTER_BITS>>,
    c32: Constant<Bits<16>>,
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
        const NQ: usize,
        const C: usize,
        const FA: usize,
    > RoceNic<W, K, Q, RA, E, R, QA, B, MA, TA, PTA, TMA, LB, L, NQ, C, FA>
{
    /// `tick_cycles`: `qp_timers`' tick ([`RcTransport::new`]).
    pub fn new(tick_cycles: u16) -> Self {
        check_width("roce_nic", W, K);
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_axis: Default::default(),
            m_axis: Default::default(),
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
            fw_we: Default::default(),
            fw_waddr: Default::default(),
            fw_wdata: Default::default(),
            busy: Default::default(),
            fw_trap: Default::default(),
            fw_bus_error: Default::default(),
            m_event_valid: Default::default(),
            m_event_cqn: Default::default(),
            m_qp_err_valid: Default::default(),
            m_qp_err_qpn: Default::default(),
            m_req_err_valid: Default::default(),
            m_req_err_qpn: Default::default(),
            m_rsp_err_valid: Default::default(),
            m_rsp_err_qpn: Default::default(),
            m_exec_err_valid: Default::default(),
            m_exec_err_qpn: Default::default(),
            error_payload: Default::default(),
            ev_overflow: Default::default(),
            cnt_cq_overrun: Default::default(),
            tr: RcTransport::new(tick_cycles),
            hif: HostIf::new(),
            csr: Csr::with_ports(1 << Q, Csr::<Q>::DEFAULT_STORE, 3),
            ev: QpEvents::new(),
            fw: FwCore::new(),
            bus: AxilBus::new(),
            a1: AxiArb2::new(),
            a2: AxiArb2::new(),
            lanes: Default::default(),
            mr_lanes: Default::default(),
            c32: Constant::new(32u64.into()),
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
        const NQ: usize,
        const C: usize,
        const FA: usize,
    > Logic for RoceNic<W, K, Q, RA, E, R, QA, B, MA, TA, PTA, TMA, LB, L, NQ, C, FA>
{
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, tr, hif, csr, ev, fw, bus, a1, a2);
        self.tr.reset.next = self.reset.val();
        self.hif.reset.next = self.reset.val();
        self.csr.reset.next = self.reset.val();
        self.ev.reset.next = self.reset.val();
        self.fw.reset.next = self.reset.val();
        self.bus.reset.next = self.reset.val();
        self.a1.reset.next = self.reset.val();
        self.a2.reset.next = self.reset.val();

        // ---- The MAC's streams.
        self.tr.s_axis.tdata.next = self.s_axis.tdata.val();
        self.tr.s_axis.tkeep.next = self.s_axis.tkeep.val();
        self.tr.s_axis.tlast.next = self.s_axis.tlast.val();
        self.tr.s_axis.tuser.next = self.s_axis.tuser.val();
        self.tr.s_axis.tvalid.next = self.s_axis.tvalid.val();
        self.s_axis.tready.next = self.tr.s_axis.tready.val();
        self.m_axis.tdata.next = self.tr.m_axis.tdata.val();
        self.m_axis.tkeep.next = self.tr.m_axis.tkeep.val();
        self.m_axis.tlast.next = self.tr.m_axis.tlast.val();
        self.m_axis.tuser.next = self.tr.m_axis.tuser.val();
        self.m_axis.tvalid.next = self.tr.m_axis.tvalid.val();
        self.tr.m_axis.tready.next = self.m_axis.tready.val();
        self.error_payload.next = self.tr.error_payload.val();

        // ---- Firmware.
        self.fw.fw_we.next = self.fw_we.val();
        self.fw.fw_waddr.next = self.fw_waddr.val();
        self.fw.fw_wdata.next = self.fw_wdata.val();
        self.fw_trap.next = self.fw.trap.val();
        self.fw_bus_error.next = self.fw.bus_error.val();

        // AXI4-Lite: the host and the softcore onto the bus; the bus onto the csr block.
        self.bus.s_host_axil_awaddr.next = self.s_axil_awaddr.val();
        self.bus.s_host_axil_awvalid.next = self.s_axil_awvalid.val();
        self.s_axil_awready.next = self.bus.s_host_axil_awready.val();
        self.bus.s_host_axil_wdata.next = self.s_axil_wdata.val();
        self.bus.s_host_axil_wstrb.next = self.s_axil_wstrb.val();
        self.bus.s_host_axil_wvalid.next = self.s_axil_wvalid.val();
        self.s_axil_wready.next = self.bus.s_host_axil_wready.val();
        self.s_axil_bresp.next = self.bus.s_host_axil_bresp.val();
        self.s_axil_bvalid.next = self.bus.s_host_axil_bvalid.val();
        self.bus.s_host_axil_bready.next = self.s_axil_bready.val();
        self.bus.s_host_axil_araddr.next = self.s_axil_araddr.val();
        self.bus.s_host_axil_arvalid.next = self.s_axil_arvalid.val();
        self.s_axil_arready.next = self.bus.s_host_axil_arready.val();
        self.s_axil_rdata.next = self.bus.s_host_axil_rdata.val();
        self.s_axil_rresp.next = self.bus.s_host_axil_rresp.val();
        self.s_axil_rvalid.next = self.bus.s_host_axil_rvalid.val();
        self.bus.s_host_axil_rready.next = self.s_axil_rready.val();
        self.bus.s_core_axil_awaddr.next = self.fw.m_axil_awaddr.val();
        self.bus.s_core_axil_awvalid.next = self.fw.m_axil_awvalid.val();
        self.fw.m_axil_awready.next = self.bus.s_core_axil_awready.val();
        self.bus.s_core_axil_wdata.next = self.fw.m_axil_wdata.val();
        self.bus.s_core_axil_wstrb.next = self.fw.m_axil_wstrb.val();
        self.bus.s_core_axil_wvalid.next = self.fw.m_axil_wvalid.val();
        self.fw.m_axil_wready.next = self.bus.s_core_axil_wready.val();
        self.fw.m_axil_bresp.next = self.bus.s_core_axil_bresp.val();
        self.fw.m_axil_bvalid.next = self.bus.s_core_axil_bvalid.val();
        self.bus.s_core_axil_bready.next = self.fw.m_axil_bready.val();
        self.bus.s_core_axil_araddr.next = self.fw.m_axil_araddr.val();
        self.bus.s_core_axil_arvalid.next = self.fw.m_axil_arvalid.val();
        self.fw.m_axil_arready.next = self.bus.s_core_axil_arready.val();
        self.fw.m_axil_rdata.next = self.bus.s_core_axil_rdata.val();
        self.fw.m_axil_rresp.next = self.bus.s_core_axil_rresp.val();
        self.fw.m_axil_rvalid.next = self.bus.s_core_axil_rvalid.val();
        self.bus.s_core_axil_rready.next = self.fw.m_axil_rready.val();
        self.csr.s_axil_awaddr.next = self.bus.m_csr_axil_awaddr.val();
        self.csr.s_axil_awvalid.next = self.bus.m_csr_axil_awvalid.val();
        self.bus.m_csr_axil_awready.next = self.csr.s_axil_awready.val();
        self.csr.s_axil_wdata.next = self.bus.m_csr_axil_wdata.val();
        self.csr.s_axil_wstrb.next = self.bus.m_csr_axil_wstrb.val();
        self.csr.s_axil_wvalid.next = self.bus.m_csr_axil_wvalid.val();
        self.bus.m_csr_axil_wready.next = self.csr.s_axil_wready.val();
        self.bus.m_csr_axil_bresp.next = self.csr.s_axil_bresp.val();
        self.bus.m_csr_axil_bvalid.next = self.csr.s_axil_bvalid.val();
        self.csr.s_axil_bready.next = self.bus.m_csr_axil_bready.val();
        self.csr.s_axil_araddr.next = self.bus.m_csr_axil_araddr.val();
        self.csr.s_axil_arvalid.next = self.bus.m_csr_axil_arvalid.val();
        self.bus.m_csr_axil_arready.next = self.csr.s_axil_arready.val();
        self.bus.m_csr_axil_rdata.next = self.csr.s_axil_rdata.val();
        self.bus.m_csr_axil_rresp.next = self.csr.s_axil_rresp.val();
        self.bus.m_csr_axil_rvalid.next = self.csr.s_axil_rvalid.val();
        self.csr.s_axil_rready.next = self.bus.m_csr_axil_rready.val();
        // host_if's register port.
        self.hif.s_reg_valid.next = self.bus.m_reg_valid.val();
        self.hif.s_reg_write.next = self.bus.m_reg_write.val();
        self.hif.s_reg_addr.next = self.bus.m_reg_addr.val();
        self.hif.s_reg_wdata.next = self.bus.m_reg_wdata.val();
        self.hif.s_reg_strb.next = self.bus.m_reg_strb.val();
        self.bus.m_reg_ready.next = self.hif.s_reg_ready.val();
        self.bus.s_reg_resp_valid.next = self.hif.m_reg_resp_valid.val();
        self.bus.s_reg_resp_rdata.next = self.hif.m_reg_resp_rdata.val();
        self.bus.s_reg_resp_err.next = self.hif.m_reg_resp_err.val();

        // AXI4: responder and requester into a1, a1 and host_if into a2.
        self.a1.s0_axi_awaddr.next = self.tr.m_axi_rsp_awaddr.val();
        self.a1.s0_axi_awlen.next = self.tr.m_axi_rsp_awlen.val();
        self.a1.s0_axi_awsize.next = self.tr.m_axi_rsp_awsize.val();
        self.a1.s0_axi_awburst.next = self.tr.m_axi_rsp_awburst.val();
        self.a1.s0_axi_awvalid.next = self.tr.m_axi_rsp_awvalid.val();
        self.tr.m_axi_rsp_awready.next = self.a1.s0_axi_awready.val();
        self.a1.s0_axi_wdata.next = self.tr.m_axi_rsp_wdata.val();
        self.a1.s0_axi_wstrb.next = self.tr.m_axi_rsp_wstrb.val();
        self.a1.s0_axi_wlast.next = self.tr.m_axi_rsp_wlast.val();
        self.a1.s0_axi_wvalid.next = self.tr.m_axi_rsp_wvalid.val();
        self.tr.m_axi_rsp_wready.next = self.a1.s0_axi_wready.val();
        self.tr.m_axi_rsp_bresp.next = self.a1.s0_axi_bresp.val();
        self.tr.m_axi_rsp_bvalid.next = self.a1.s0_axi_bvalid.val();
        self.a1.s0_axi_bready.next = self.tr.m_axi_rsp_bready.val();
        self.a1.s0_axi_araddr.next = self.tr.m_axi_rsp_araddr.val();
        self.a1.s0_axi_arlen.next = self.tr.m_axi_rsp_arlen.val();
        self.a1.s0_axi_arsize.next = self.tr.m_axi_rsp_arsize.val();
        self.a1.s0_axi_arburst.next = self.tr.m_axi_rsp_arburst.val();
        self.a1.s0_axi_arvalid.next = self.tr.m_axi_rsp_arvalid.val();
        self.tr.m_axi_rsp_arready.next = self.a1.s0_axi_arready.val();
        self.tr.m_axi_rsp_rdata.next = self.a1.s0_axi_rdata.val();
        self.tr.m_axi_rsp_rresp.next = self.a1.s0_axi_rresp.val();
        self.tr.m_axi_rsp_rlast.next = self.a1.s0_axi_rlast.val();
        self.tr.m_axi_rsp_rvalid.next = self.a1.s0_axi_rvalid.val();
        self.a1.s0_axi_rready.next = self.tr.m_axi_rsp_rready.val();
        self.a1.s1_axi_awaddr.next = self.tr.m_axi_req_awaddr.val();
        self.a1.s1_axi_awlen.next = self.tr.m_axi_req_awlen.val();
        self.a1.s1_axi_awsize.next = self.tr.m_axi_req_awsize.val();
        self.a1.s1_axi_awburst.next = self.tr.m_axi_req_awburst.val();
        self.a1.s1_axi_awvalid.next = self.tr.m_axi_req_awvalid.val();
        self.tr.m_axi_req_awready.next = self.a1.s1_axi_awready.val();
        self.a1.s1_axi_wdata.next = self.tr.m_axi_req_wdata.val();
        self.a1.s1_axi_wstrb.next = self.tr.m_axi_req_wstrb.val();
        self.a1.s1_axi_wlast.next = self.tr.m_axi_req_wlast.val();
        self.a1.s1_axi_wvalid.next = self.tr.m_axi_req_wvalid.val();
        self.tr.m_axi_req_wready.next = self.a1.s1_axi_wready.val();
        self.tr.m_axi_req_bresp.next = self.a1.s1_axi_bresp.val();
        self.tr.m_axi_req_bvalid.next = self.a1.s1_axi_bvalid.val();
        self.a1.s1_axi_bready.next = self.tr.m_axi_req_bready.val();
        self.a1.s1_axi_araddr.next = self.tr.m_axi_req_araddr.val();
        self.a1.s1_axi_arlen.next = self.tr.m_axi_req_arlen.val();
        self.a1.s1_axi_arsize.next = self.tr.m_axi_req_arsize.val();
        self.a1.s1_axi_arburst.next = self.tr.m_axi_req_arburst.val();
        self.a1.s1_axi_arvalid.next = self.tr.m_axi_req_arvalid.val();
        self.tr.m_axi_req_arready.next = self.a1.s1_axi_arready.val();
        self.tr.m_axi_req_rdata.next = self.a1.s1_axi_rdata.val();
        self.tr.m_axi_req_rresp.next = self.a1.s1_axi_rresp.val();
        self.tr.m_axi_req_rlast.next = self.a1.s1_axi_rlast.val();
        self.tr.m_axi_req_rvalid.next = self.a1.s1_axi_rvalid.val();
        self.a1.s1_axi_rready.next = self.tr.m_axi_req_rready.val();
        self.a2.s0_axi_awaddr.next = self.a1.m_axi_awaddr.val();
        self.a2.s0_axi_awlen.next = self.a1.m_axi_awlen.val();
        self.a2.s0_axi_awsize.next = self.a1.m_axi_awsize.val();
        self.a2.s0_axi_awburst.next = self.a1.m_axi_awburst.val();
        self.a2.s0_axi_awvalid.next = self.a1.m_axi_awvalid.val();
        self.a1.m_axi_awready.next = self.a2.s0_axi_awready.val();
        self.a2.s0_axi_wdata.next = self.a1.m_axi_wdata.val();
        self.a2.s0_axi_wstrb.next = self.a1.m_axi_wstrb.val();
        self.a2.s0_axi_wlast.next = self.a1.m_axi_wlast.val();
        self.a2.s0_axi_wvalid.next = self.a1.m_axi_wvalid.val();
        self.a1.m_axi_wready.next = self.a2.s0_axi_wready.val();
        self.a1.m_axi_bresp.next = self.a2.s0_axi_bresp.val();
        self.a1.m_axi_bvalid.next = self.a2.s0_axi_bvalid.val();
        self.a2.s0_axi_bready.next = self.a1.m_axi_bready.val();
        self.a2.s0_axi_araddr.next = self.a1.m_axi_araddr.val();
        self.a2.s0_axi_arlen.next = self.a1.m_axi_arlen.val();
        self.a2.s0_axi_arsize.next = self.a1.m_axi_arsize.val();
        self.a2.s0_axi_arburst.next = self.a1.m_axi_arburst.val();
        self.a2.s0_axi_arvalid.next = self.a1.m_axi_arvalid.val();
        self.a1.m_axi_arready.next = self.a2.s0_axi_arready.val();
        self.a1.m_axi_rdata.next = self.a2.s0_axi_rdata.val();
        self.a1.m_axi_rresp.next = self.a2.s0_axi_rresp.val();
        self.a1.m_axi_rlast.next = self.a2.s0_axi_rlast.val();
        self.a1.m_axi_rvalid.next = self.a2.s0_axi_rvalid.val();
        self.a2.s0_axi_rready.next = self.a1.m_axi_rready.val();
        self.a2.s1_axi_awaddr.next = self.hif.m_axi_awaddr.val();
        self.a2.s1_axi_awlen.next = self.hif.m_axi_awlen.val();
        self.a2.s1_axi_awsize.next = self.hif.m_axi_awsize.val();
        self.a2.s1_axi_awburst.next = self.hif.m_axi_awburst.val();
        self.a2.s1_axi_awvalid.next = self.hif.m_axi_awvalid.val();
        self.hif.m_axi_awready.next = self.a2.s1_axi_awready.val();
        self.a2.s1_axi_wdata.next = self.hif.m_axi_wdata.val();
        self.a2.s1_axi_wstrb.next = self.hif.m_axi_wstrb.val();
        self.a2.s1_axi_wlast.next = self.hif.m_axi_wlast.val();
        self.a2.s1_axi_wvalid.next = self.hif.m_axi_wvalid.val();
        self.hif.m_axi_wready.next = self.a2.s1_axi_wready.val();
        self.hif.m_axi_bresp.next = self.a2.s1_axi_bresp.val();
        self.hif.m_axi_bvalid.next = self.a2.s1_axi_bvalid.val();
        self.a2.s1_axi_bready.next = self.hif.m_axi_bready.val();
        self.a2.s1_axi_araddr.next = self.hif.m_axi_araddr.val();
        self.a2.s1_axi_arlen.next = self.hif.m_axi_arlen.val();
        self.a2.s1_axi_arsize.next = self.hif.m_axi_arsize.val();
        self.a2.s1_axi_arburst.next = self.hif.m_axi_arburst.val();
        self.a2.s1_axi_arvalid.next = self.hif.m_axi_arvalid.val();
        self.hif.m_axi_arready.next = self.a2.s1_axi_arready.val();
        self.hif.m_axi_rdata.next = self.a2.s1_axi_rdata.val();
        self.hif.m_axi_rresp.next = self.a2.s1_axi_rresp.val();
        self.hif.m_axi_rlast.next = self.a2.s1_axi_rlast.val();
        self.hif.m_axi_rvalid.next = self.a2.s1_axi_rvalid.val();
        self.a2.s1_axi_rready.next = self.hif.m_axi_rready.val();
        self.m_axi_awaddr.next = self.a2.m_axi_awaddr.val();
        self.m_axi_awlen.next = self.a2.m_axi_awlen.val();
        self.m_axi_awsize.next = self.a2.m_axi_awsize.val();
        self.m_axi_awburst.next = self.a2.m_axi_awburst.val();
        self.m_axi_awvalid.next = self.a2.m_axi_awvalid.val();
        self.a2.m_axi_awready.next = self.m_axi_awready.val();
        self.m_axi_wdata.next = self.a2.m_axi_wdata.val();
        self.m_axi_wstrb.next = self.a2.m_axi_wstrb.val();
        self.m_axi_wlast.next = self.a2.m_axi_wlast.val();
        self.m_axi_wvalid.next = self.a2.m_axi_wvalid.val();
        self.a2.m_axi_wready.next = self.m_axi_wready.val();
        self.a2.m_axi_bresp.next = self.m_axi_bresp.val();
        self.a2.m_axi_bvalid.next = self.m_axi_bvalid.val();
        self.m_axi_bready.next = self.a2.m_axi_bready.val();
        self.m_axi_araddr.next = self.a2.m_axi_araddr.val();
        self.m_axi_arlen.next = self.a2.m_axi_arlen.val();
        self.m_axi_arsize.next = self.a2.m_axi_arsize.val();
        self.m_axi_arburst.next = self.a2.m_axi_arburst.val();
        self.m_axi_arvalid.next = self.a2.m_axi_arvalid.val();
        self.a2.m_axi_arready.next = self.m_axi_arready.val();
        self.a2.m_axi_rdata.next = self.m_axi_rdata.val();
        self.a2.m_axi_rresp.next = self.m_axi_rresp.val();
        self.a2.m_axi_rlast.next = self.m_axi_rlast.val();
        self.a2.m_axi_rvalid.next = self.m_axi_rvalid.val();
        self.m_axi_rready.next = self.a2.m_axi_rready.val();

        // ---- Contexts and configuration from the csr block.
        self.csr.qp_rd_addr.next = self.tr.rsp_qp_rd_addr.val();
        self.tr.rsp_qp_rd_data.next = self.csr.qp_rd_data.val();
        self.csr.qp_rd_addr_1.next = self.tr.req_qp_rd_addr.val();
        self.tr.req_qp_rd_data.next = self.csr.qp_rd_data_1.val();
        self.csr.qp_rd_addr_2.next = self.tr.arb_qp_rd_addr.val();
        self.tr.arb_qp_rd_data.next = self.csr.qp_rd_data_2.val();
        self.tr.cfg_mac.next = self.csr.cfg_mac.val();
        self.tr.cfg_udp_sport.next = self.csr.cfg_udp_sport.val();
        self.tr.cfg_gid.next = self.csr.cfg_gid.val();
        self.tr.cfg_pkey.next = self.csr.cfg_pkey.val();

        // ---- MR commands: the csr block's mr registers to mr_tlb.
        self.tr.s_mr_cmd_valid.next = self.csr.m_mr_cmd_valid.val();
        self.csr.m_mr_cmd_ready.next = self.tr.s_mr_cmd_ready.val();
        self.tr.s_mr_cmd_op.next = self.csr.m_mr_cmd_op.val();
        self.tr.s_mr_cmd_key.next = self.csr.m_mr_cmd_key.val();
        self.tr.s_mr_cmd_pd.next = self.csr.m_mr_cmd_pd.val();
        self.tr.s_mr_cmd_access.next = self.csr.m_mr_cmd_access.val();
        self.tr.s_mr_cmd_addr.next = self.csr.m_mr_cmd_addr.val();
        self.tr.s_mr_cmd_len.next = self.csr.m_mr_cmd_len.val();
        self.tr.s_mr_cmd_shift.next = self.csr.m_mr_cmd_shift.val();
        self.tr.s_mr_cmd_index.next = self.csr.m_mr_cmd_index.val();
        self.csr.mr_cmd_done.next = self.tr.m_mr_cmd_done.val();
        self.csr.mr_cmd_error.next = self.tr.m_mr_cmd_error.val();

        // ---- QP events: state changes and receive credits.
        self.ev.ctx_wr_valid.next = self.csr.m_ctx_wr_valid.val();
        self.ev.ctx_wr_qpn.next = self.csr.m_ctx_wr_qpn.val();
        self.ev.ctx_wr_offset.next =
            bit_cast::<OFFSET_BITS, CTX_OFFSET_BITS>(self.csr.m_ctx_wr_offset.val());
        self.ev.ctx_wr_data.next = self.csr.m_ctx_wr_data.val();
        self.ev.s_post_recv_valid.next = self.hif.m_post_recv_valid.val();
        self.hif.m_post_recv_ready.next = self.ev.s_post_recv_ready.val();
        self.ev.s_post_recv_qpn.next = self.hif.m_post_recv_qpn.val();
        self.ev.s_post_recv_count.next = self.hif.m_post_recv_count.val();
        self.tr.s_rsp_ev_valid.next = self.ev.m_rsp_ev_valid.val();
        self.ev.m_rsp_ev_ready.next = self.tr.s_rsp_ev_ready.val();
        self.tr.s_rsp_ev_kind.next = self.ev.m_rsp_ev_kind.val();
        self.tr.s_rsp_ev_qpn.next = self.ev.m_rsp_ev_qpn.val();
        self.tr.s_rsp_ev_count.next = self.ev.m_rsp_ev_count.val();
        self.tr.s_req_ev_valid.next = self.ev.m_req_ev_valid.val();
        self.ev.m_req_ev_ready.next = self.tr.s_req_ev_ready.val();
        self.tr.s_req_ev_kind.next = self.ev.m_req_ev_kind.val();
        self.tr.s_req_ev_qpn.next = self.ev.m_req_ev_qpn.val();
        self.ev_overflow.next = self.ev.overflow.val();

        // ---- Work requests and completions: host_if <-> the transport.
        self.tr.s_wqe_valid.next = self.hif.m_wqe_valid.val();
        self.hif.m_wqe_ready.next = self.tr.s_wqe_ready.val();
        self.tr.s_wqe_qpn.next = self.hif.m_wqe_qpn.val();
        self.tr.s_wqe_op.next = self.hif.m_wqe_op.val();
        self.tr.s_wqe_signaled.next = self.hif.m_wqe_signaled.val();
        self.tr.s_wqe_solicited.next = self.hif.m_wqe_solicited.val();
        self.tr.s_wqe_fence.next = self.hif.m_wqe_fence.val();
        self.tr.s_wqe_wr_id.next = self.hif.m_wqe_wr_id.val();
        self.tr.s_wqe_lkey.next = self.hif.m_wqe_lkey.val();
        self.tr.s_wqe_phys.next = self.hif.m_wqe_phys.val();
        self.tr.s_wqe_lva.next = self.hif.m_wqe_lva.val();
        self.tr.s_wqe_len.next = self.hif.m_wqe_len.val();
        self.tr.s_wqe_rva.next = self.hif.m_wqe_rva.val();
        self.tr.s_wqe_rkey.next = self.hif.m_wqe_rkey.val();
        self.tr.s_wqe_imm.next = self.hif.m_wqe_imm.val();
        self.tr.s_wqe_swap.next = self.hif.m_wqe_swap.val();
        self.tr.s_wqe_compare.next = self.hif.m_wqe_compare.val();
        self.hif.s_scqe_valid.next = self.tr.m_scqe_valid.val();
        self.tr.m_scqe_ready.next = self.hif.s_scqe_ready.val();
        self.hif.s_scqe_qpn.next = self.tr.m_scqe_qpn.val();
        self.hif.s_scqe_wr_id.next = self.tr.m_scqe_wr_id.val();
        self.hif.s_scqe_status.next = self.tr.m_scqe_status.val();
        self.hif.s_scqe_opcode.next = self.tr.m_scqe_opcode.val();
        self.hif.s_scqe_byte_len.next = self.tr.m_scqe_byte_len.val();
        self.hif.s_rq_req_valid.next = self.tr.m_rq_req_valid.val();
        self.tr.m_rq_req_ready.next = self.hif.s_rq_req_ready.val();
        self.hif.s_rq_req_qpn.next = self.tr.m_rq_req_qpn.val();
        self.hif.s_rq_req_pop.next = self.tr.m_rq_req_pop.val();
        self.tr.s_rq_resp_valid.next = self.hif.m_rq_resp_valid.val();
        self.hif.m_rq_resp_ready.next = self.tr.s_rq_resp_ready.val();
        self.tr.s_rq_resp_ok.next = self.hif.m_rq_resp_ok.val();
        self.tr.s_rq_resp_key.next = self.hif.m_rq_resp_key.val();
        self.tr.s_rq_resp_va.next = self.hif.m_rq_resp_va.val();
        self.tr.s_rq_resp_len.next = self.hif.m_rq_resp_len.val();
        self.hif.s_rcqe_valid.next = self.tr.m_rcqe_valid.val();
        self.tr.m_rcqe_ready.next = self.hif.s_rcqe_ready.val();
        self.hif.s_rcqe_qpn.next = self.tr.m_rcqe_qpn.val();
        self.hif.s_rcqe_status.next = self.tr.m_rcqe_status.val();
        self.hif.s_rcqe_opcode.next = self.tr.m_rcqe_opcode.val();
        self.hif.s_rcqe_len.next = self.tr.m_rcqe_len.val();
        self.hif.s_rcqe_imm.next = self.tr.m_rcqe_imm.val();
        self.hif.s_rcqe_se.next = self.tr.m_rcqe_se.val();

        // ---- Events and errors out.
        self.m_event_valid.next = self.hif.m_event_valid.val();
        self.m_event_cqn.next = self.hif.m_event_cqn.val();
        self.m_qp_err_valid.next = self.hif.m_qp_err_valid.val();
        self.m_qp_err_qpn.next = self.hif.m_qp_err_qpn.val();
        // The transport's moves to Error: out as pulses, and to
        // qp_events, which tells the other side (the whole QP to Error).
        self.tr.m_req_err_ready.next = self.ev.s_req_err_ready.val();
        self.ev.s_req_err_valid.next = self.tr.m_req_err_valid.val();
        self.ev.s_req_err_qpn.next = self.tr.m_req_err_qpn.val();
        self.ev.s_rsp_err_valid.next = self.tr.m_qp_error_valid.val();
        self.ev.s_rsp_err_qpn.next = self.tr.m_qp_error_qpn.val();
        self.ev.s_exec_err_valid.next = self.tr.m_exec_error_valid.val();
        self.ev.s_exec_err_qpn.next = self.tr.m_exec_error_qpn.val();
        self.m_req_err_valid.next = self.tr.m_req_err_valid.val() & self.ev.s_req_err_ready.val();
        self.m_req_err_qpn.next = self.tr.m_req_err_qpn.val();
        self.m_rsp_err_valid.next = self.tr.m_qp_error_valid.val();
        self.m_rsp_err_qpn.next = self.tr.m_qp_error_qpn.val();
        self.m_exec_err_valid.next = self.tr.m_exec_error_valid.val();
        self.m_exec_err_qpn.next = self.tr.m_exec_error_qpn.val();
        self.busy.next = self.tr.mr_busy.val()
            | self.tr.timers_busy.val()
            | self.hif.busy.val()
            | self.ev.busy.val();

        // ---- Counters: the csr block's lanes (`roce_regs::Counter`
        // order, checked by a test below) and MR lanes (`MrCounter`).
        self.lanes.next = ((((((((((((((((((bit_cast::<COUNTER_IN_BITS, 32>(
            self.tr.cnt_rsp_drop_qpn.val() + self.tr.cnt_rsp_drop_state.val(),
        )) << self.c32.val())
            | bit_cast::<COUNTER_IN_BITS, 32>(self.tr.cnt_rx_bad_icrc.val()))
            << self.c32.val())
            | bit_cast::<COUNTER_IN_BITS, 32>(self.tr.cnt_rx_bad_padcnt.val()))
            << self.c32.val())
            | bit_cast::<COUNTER_IN_BITS, 32>(self.tr.cnt_rx_unknown_opcode.val()))
            << self.c32.val())
            | bit_cast::<COUNTER_IN_BITS, 32>(self.tr.cnt_rx_bad_tver.val()))
            << self.c32.val())
            | bit_cast::<COUNTER_IN_BITS, 32>(self.tr.cnt_rx_bad_length.val()))
            << self.c32.val())
            | bit_cast::<COUNTER_IN_BITS, 32>(self.tr.cnt_rx_ip_options.val()))
            << self.c32.val())
            | bit_cast::<COUNTER_IN_BITS, 32>(self.tr.cnt_rx_bad_ip_checksum.val()))
            << self.c32.val())
            | bit_cast::<COUNTER_IN_BITS, 32>(self.tr.cnt_rx_truncated.val()))
            << self.c32.val())
            | bit_cast::<COUNTER_IN_BITS, 32>(self.tr.cnt_rx_not_roce.val());
        self.csr.counters.next = self.lanes.val();
        self.mr_lanes.next =
            ((((((((((bit_cast::<MR_COUNTER_BITS, 32>(self.tr.cnt_mr_tlb_miss.val()))
                << self.c32.val())
                | bit_cast::<MR_COUNTER_BITS, 32>(self.tr.cnt_mr_out_of_bounds.val()))
                << self.c32.val())
                | bit_cast::<MR_COUNTER_BITS, 32>(self.tr.cnt_mr_access_denied.val()))
                << self.c32.val())
                | bit_cast::<MR_COUNTER_BITS, 32>(self.tr.cnt_mr_pd_mismatch.val()))
                << self.c32.val())
                | bit_cast::<MR_COUNTER_BITS, 32>(self.tr.cnt_mr_invalidated_key.val()))
                << self.c32.val())
                | bit_cast::<MR_COUNTER_BITS, 32>(self.tr.cnt_mr_bad_key.val());
        self.csr.mr_counters.next = self.mr_lanes.val();
        self.cnt_cq_overrun.next = self.hif.cnt_cq_overrun.val();
        self.cnt_rx_not_roce.next = self.tr.cnt_rx_not_roce.val();
        self.cnt_rx_truncated.next = self.tr.cnt_rx_truncated.val();
        self.cnt_rx_bad_ip_checksum.next = self.tr.cnt_rx_bad_ip_checksum.val();
        self.cnt_rx_ip_options.next = self.tr.cnt_rx_ip_options.val();
        self.cnt_rx_bad_length.next = self.tr.cnt_rx_bad_length.val();
        self.cnt_rx_bad_tver.next = self.tr.cnt_rx_bad_tver.val();
        self.cnt_rx_unknown_opcode.next = self.tr.cnt_rx_unknown_opcode.val();
        self.cnt_rx_bad_padcnt.next = self.tr.cnt_rx_bad_padcnt.val();
        self.cnt_rx_bad_icrc.next = self.tr.cnt_rx_bad_icrc.val();
        self.cnt_rx_accept.next = self.tr.cnt_rx_accept.val();
        self.cnt_rsp_execute.next = self.tr.cnt_rsp_execute.val();
        self.cnt_rsp_hdr_drop.next = self.tr.cnt_rsp_hdr_drop.val();
        self.cnt_rsp_drop_qpn.next = self.tr.cnt_rsp_drop_qpn.val();
        self.cnt_rsp_drop_state.next = self.tr.cnt_rsp_drop_state.val();
        self.cnt_rsp_drop_type.next = self.tr.cnt_rsp_drop_type.val();
        self.cnt_rsp_drop_response.next = self.tr.cnt_rsp_drop_response.val();
        self.cnt_rsp_drop_out_of_seq.next = self.tr.cnt_rsp_drop_out_of_seq.val();
        self.cnt_rsp_duplicate.next = self.tr.cnt_rsp_duplicate.val();
        self.cnt_rsp_nak_psn_seq.next = self.tr.cnt_rsp_nak_psn_seq.val();
        self.cnt_rsp_nak_op_seq.next = self.tr.cnt_rsp_nak_op_seq.val();
        self.cnt_rsp_nak_op_invalid.next = self.tr.cnt_rsp_nak_op_invalid.val();
        self.cnt_rsp_nak_padcnt.next = self.tr.cnt_rsp_nak_padcnt.val();
        self.cnt_rsp_nak_resource.next = self.tr.cnt_rsp_nak_resource.val();
        self.cnt_rsp_nak_length.next = self.tr.cnt_rsp_nak_length.val();
        self.cnt_rsp_rnr_nak.next = self.tr.cnt_rsp_rnr_nak.val();
        self.cnt_rsp_nak_rem_access.next = self.tr.cnt_rsp_nak_rem_access.val();
        self.cnt_rsp_nak_rem_op.next = self.tr.cnt_rsp_nak_rem_op.val();
        self.cnt_rsp_nak_inv_req.next = self.tr.cnt_rsp_nak_inv_req.val();
        self.cnt_rsp_read_replay.next = self.tr.cnt_rsp_read_replay.val();
        self.cnt_rsp_atomic_replay.next = self.tr.cnt_rsp_atomic_replay.val();
        self.cnt_rsp_dup_no_res.next = self.tr.cnt_rsp_dup_no_res.val();
        self.cnt_rsp_drop_err.next = self.tr.cnt_rsp_drop_err.val();
        self.cnt_rsp_axi_err.next = self.tr.cnt_rsp_axi_err.val();
        self.cnt_rsp_stream_err.next = self.tr.cnt_rsp_stream_err.val();
        self.cnt_req_sent.next = self.tr.cnt_req_sent.val();
        self.cnt_req_retx.next = self.tr.cnt_req_retx.val();
        self.cnt_req_retry_seq_nak.next = self.tr.cnt_req_retry_seq_nak.val();
        self.cnt_req_retry_implied.next = self.tr.cnt_req_retry_implied.val();
        self.cnt_req_retry_timeout.next = self.tr.cnt_req_retry_timeout.val();
        self.cnt_req_retry_rnr.next = self.tr.cnt_req_retry_rnr.val();
        self.cnt_req_retry_ignored.next = self.tr.cnt_req_retry_ignored.val();
        self.cnt_req_retry_exceeded.next = self.tr.cnt_req_retry_exceeded.val();
        self.cnt_req_rnr_exceeded.next = self.tr.cnt_req_rnr_exceeded.val();
        self.cnt_req_rnr_nak.next = self.tr.cnt_req_rnr_nak.val();
        self.cnt_req_nak_err.next = self.tr.cnt_req_nak_err.val();
        self.cnt_req_drop_stale.next = self.tr.cnt_req_drop_stale.val();
        self.cnt_req_drop_unexpected.next = self.tr.cnt_req_drop_unexpected.val();
        self.cnt_req_drop_out_of_order.next = self.tr.cnt_req_drop_out_of_order.val();
        self.cnt_req_drop_qp_state.next = self.tr.cnt_req_drop_qp_state.val();
        self.cnt_req_stream_err.next = self.tr.cnt_req_stream_err.val();
        self.cnt_mr_bad_key.next = self.tr.cnt_mr_bad_key.val();
        self.cnt_mr_invalidated_key.next = self.tr.cnt_mr_invalidated_key.val();
        self.cnt_mr_pd_mismatch.next = self.tr.cnt_mr_pd_mismatch.val();
        self.cnt_mr_access_denied.next = self.tr.cnt_mr_access_denied.val();
        self.cnt_mr_out_of_bounds.next = self.tr.cnt_mr_out_of_bounds.val();
        self.cnt_mr_tlb_miss.next = self.tr.cnt_mr_tlb_miss.val();
        self.cnt_timers_armed.next = self.tr.cnt_timers_armed.val();
        self.cnt_timers_expired.next = self.tr.cnt_timers_expired.val();
        self.cnt_to_responder.next = self.tr.cnt_to_responder.val();
        self.cnt_to_requester.next = self.tr.cnt_to_requester.val();
    }
}

/// The default NIC build at width W: 64 QPs (8 WQEs each), 64 MRs, 128
/// timers (`rc_transport_small`'s sizes), 64 CQs, 64 KiB of firmware RAM.
pub type RoceNicSmall<const W: usize, const K: usize, const B: usize> =
    RoceNic<W, K, 6, 10, 7, 3, 9, B, 6, 3, 8, 4, 3, 8, 64, 6, FW_RAM_ABITS>;
pub type RoceNic64 = RoceNicSmall<64, 8, 11>;
pub type RoceNic512 = RoceNicSmall<512, 64, 8>;

/// Word-address bits of the firmware RAM: `firmware/memory.x`'s 64 KiB.
pub const FW_RAM_ABITS: usize = 14;

#[cfg(test)]
mod tests {
    use roce_regs::{Counter, MrCounter};

    /// The `roce_rx` counters wired to the csr block's lanes 0.., in
    /// `update`'s order, then `unknown-qpn`; `bad-pkey` is 0.
    const RX_LANES: [&str; 9] = [
        "not_roce",
        "truncated",
        "bad_ip_checksum",
        "ip_options",
        "bad_length",
        "bad_tver",
        "unknown_opcode",
        "bad_padcnt",
        "bad_icrc",
    ];
    /// The `mr_tlb` counters wired to the MR lanes.
    const MR_LANES: [&str; 6] = [
        "bad_key",
        "invalidated_key",
        "pd_mismatch",
        "access_denied",
        "out_of_bounds",
        "tlb_miss",
    ];

    #[test]
    fn counter_lanes_follow_the_map() {
        for (i, n) in RX_LANES.iter().enumerate() {
            let c = Counter::from_index(i as u32).unwrap();
            assert_eq!(c.name().replace('-', "_"), *n, "lane {i}");
        }
        assert_eq!(Counter::RxUnknownQpn.index() as usize, RX_LANES.len());
        assert_eq!(Counter::RxBadPkey.index() as usize, RX_LANES.len() + 1);
        assert_eq!(Counter::COUNT as usize, RX_LANES.len() + 3);
        for (i, n) in MR_LANES.iter().enumerate() {
            let c = MrCounter::ALL[i];
            assert_eq!(
                c.name().trim_start_matches("mr-").replace('-', "_"),
                *n,
                "MR lane {i}"
            );
        }
        assert_eq!(MrCounter::COUNT as usize, MR_LANES.len());
    }
}
