//! `axi_arb`: two AXI4 masters onto one AXI4 master port (the NIC's
//! responder, requester and host interface share one memory port through
//! two of these in cascade).
//!
//! Our masters ([`crate::dma`]'s `DmaRd`/`DmaWr`, `rc_transport`'s
//! `m_axi_rsp_*`) use no AXI IDs, so the port has none either and every
//! response comes back in request order: the arbiter remembers which
//! master each granted request belongs to and routes the responses by that.
//!
//! - **AR**: round robin between `s0` and `s1` into a registered AR
//!   (`m_axi_ar*` come from flip-flops; one AR a cycle). The granted
//!   master's index goes into the R-order FIFO; R beats go to the master at
//!   its head, popped on RLAST.
//! - **AW**: round robin into a registered AW; the index goes into a
//!   W-order FIFO and a B-order FIFO. W beats pass from the W-FIFO head's
//!   master until WLAST: a master's W is never taken before its AW is
//!   granted (it may present W first; it then waits, and the AW side never
//!   waits on W, so nothing deadlocks). B goes to the B-FIFO head's master.
//! - **Order FIFOs**: `2^A + 1` entries (default `A = 5`: 33 bursts
//!   outstanding per direction; `dma_rd` and `dma_wr` keep at most 17
//!   each). A full FIFO only holds the AR / AW grant back.
//! - **Paths**: R, W and B pass through combinationally (data and valid
//!   through a 2:1 mux or fan-out, ready back from the selected side); no
//!   valid depends on a ready, so cascades and any master or slave that
//!   follows the AXI rules close no loop. `s*_axi_arready`/`awready`
//!   depend on `m_axi_arready`/`awready` and the `s*` valids.
//! - **Throughput**: one R beat and one W beat a cycle with no bubble
//!   between bursts, as long as a burst's AR/AW was granted two cycles
//!   before its first beat is due (the order FIFO's write-to-head time).
//!   AR and AW accept one request a cycle.
//! - **Latency**: AR/AW one cycle (the register); R, W, B zero.

use crate::fifo::SyncFifo;
use crate::stream::check_width;
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

/// Order-FIFO address bits of the default build (`2^5 + 1` bursts).
pub const ORDER_BITS: usize = 5;

/// Two AXI4 masters (`s0_axi_*`, `s1_axi_*`) onto one (`m_axi_*`). `W` is
/// the data width (64..512), `K = W / 8`; `A` the order FIFOs' address bits
/// (`AP1 = A + 1`), checked in `new()`.
#[derive(LogicBlock)]
pub struct AxiArb2<const W: usize, const K: usize, const A: usize = 5, const AP1: usize = 6> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s0_axi_awaddr: Signal<In, Bits<64>>,
    pub s0_axi_awlen: Signal<In, Bits<8>>,
    pub s0_axi_awsize: Signal<In, Bits<3>>,
    pub s0_axi_awburst: Signal<In, Bits<2>>,
    pub s0_axi_awvalid: Signal<In, Bit>,
    pub s0_axi_awready: Signal<Out, Bit>,
    pub s0_axi_wdata: Signal<In, Bits<W>>,
    pub s0_axi_wstrb: Signal<In, Bits<K>>,
    pub s0_axi_wlast: Signal<In, Bit>,
    pub s0_axi_wvalid: Signal<In, Bit>,
    pub s0_axi_wready: Signal<Out, Bit>,
    pub s0_axi_bresp: Signal<Out, Bits<2>>,
    pub s0_axi_bvalid: Signal<Out, Bit>,
    pub s0_axi_bready: Signal<In, Bit>,
    pub s0_axi_araddr: Signal<In, Bits<64>>,
    pub s0_axi_arlen: Signal<In, Bits<8>>,
    pub s0_axi_arsize: Signal<In, Bits<3>>,
    pub s0_axi_arburst: Signal<In, Bits<2>>,
    pub s0_axi_arvalid: Signal<In, Bit>,
    pub s0_axi_arready: Signal<Out, Bit>,
    pub s0_axi_rdata: Signal<Out, Bits<W>>,
    pub s0_axi_rresp: Signal<Out, Bits<2>>,
    pub s0_axi_rlast: Signal<Out, Bit>,
    pub s0_axi_rvalid: Signal<Out, Bit>,
    pub s0_axi_rready: Signal<In, Bit>,
    pub s1_axi_awaddr: Signal<In, Bits<64>>,
    pub s1_axi_awlen: Signal<In, Bits<8>>,
    pub s1_axi_awsize: Signal<In, Bits<3>>,
    pub s1_axi_awburst: Signal<In, Bits<2>>,
    pub s1_axi_awvalid: Signal<In, Bit>,
    pub s1_axi_awready: Signal<Out, Bit>,
    pub s1_axi_wdata: Signal<In, Bits<W>>,
    pub s1_axi_wstrb: Signal<In, Bits<K>>,
    pub s1_axi_wlast: Signal<In, Bit>,
    pub s1_axi_wvalid: Signal<In, Bit>,
    pub s1_axi_wready: Signal<Out, Bit>,
    pub s1_axi_bresp: Signal<Out, Bits<2>>,
    pub s1_axi_bvalid: Signal<Out, Bit>,
    pub s1_axi_bready: Signal<In, Bit>,
    pub s1_axi_araddr: Signal<In, Bits<64>>,
    pub s1_axi_arlen: Signal<In, Bits<8>>,
    pub s1_axi_arsize: Signal<In, Bits<3>>,
    pub s1_axi_arburst: Signal<In, Bits<2>>,
    pub s1_axi_arvalid: Signal<In, Bit>,
    pub s1_axi_arready: Signal<Out, Bit>,
    pub s1_axi_rdata: Signal<Out, Bits<W>>,
    pub s1_axi_rresp: Signal<Out, Bits<2>>,
    pub s1_axi_rlast: Signal<Out, Bit>,
    pub s1_axi_rvalid: Signal<Out, Bit>,
    pub s1_axi_rready: Signal<In, Bit>,
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

    // Order FIFOs: the granted master's index per burst.
    r_ord: SyncFifo<Bit, A, AP1>,
    w_ord: SyncFifo<Bit, A, AP1>,
    b_ord: SyncFifo<Bit, A, AP1>,
    // The AR and AW registers; `*_pri1`: master 1 goes first on a tie.
    ar_valid: DFF<Bit>,
    ar_addr: DFF<Bits<64>>,
    ar_len: DFF<Bits<8>>,
    ar_size: DFF<Bits<3>>,
    ar_burst: DFF<Bits<2>>,
    ar_pri1: DFF<Bit>,
    aw_valid: DFF<Bit>,
    aw_addr: DFF<Bits<64>>,
    aw_len: DFF<Bits<8>>,
    aw_size: DFF<Bits<3>>,
    aw_burst: DFF<Bits<2>>,
    aw_pri1: DFF<Bit>,
    // Combinational.
    ar_free: Signal<Local, Bit>,
    ar_g0: Signal<Local, Bit>,
    ar_g1: Signal<Local, Bit>,
    aw_free: Signal<Local, Bit>,
    aw_g0: Signal<Local, Bit>,
    aw_g1: Signal<Local, Bit>,
    r_ok: Signal<Local, Bit>,
    r_sel: Signal<Local, Bit>,
    w_ok: Signal<Local, Bit>,
    w_sel: Signal<Local, Bit>,
    b_ok: Signal<Local, Bit>,
    b_sel: Signal<Local, Bit>,
}

impl<const W: usize, const K: usize, const A: usize, const AP1: usize> AxiArb2<W, K, A, AP1> {
    /// Bursts each order FIFO holds (outstanding per direction at most).
    pub const OUTSTANDING: usize = (1 << A) + 1;

    pub fn new() -> Self {
        check_width("AxiArb2", W, K);
        assert!(
            (2..=8).contains(&A),
            "AxiArb2: order FIFO bits {A} out of 2..=8"
        );
        assert_eq!(AP1, A + 1, "AxiArb2: AP1 must be A + 1");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s0_axi_awaddr: Default::default(),
            s0_axi_awlen: Default::default(),
            s0_axi_awsize: Default::default(),
            s0_axi_awburst: Default::default(),
            s0_axi_awvalid: Default::default(),
            s0_axi_awready: Default::default(),
            s0_axi_wdata: Default::default(),
            s0_axi_wstrb: Default::default(),
            s0_axi_wlast: Default::default(),
            s0_axi_wvalid: Default::default(),
            s0_axi_wready: Default::default(),
            s0_axi_bresp: Default::default(),
            s0_axi_bvalid: Default::default(),
            s0_axi_bready: Default::default(),
            s0_axi_araddr: Default::default(),
            s0_axi_arlen: Default::default(),
            s0_axi_arsize: Default::default(),
            s0_axi_arburst: Default::default(),
            s0_axi_arvalid: Default::default(),
            s0_axi_arready: Default::default(),
            s0_axi_rdata: Default::default(),
            s0_axi_rresp: Default::default(),
            s0_axi_rlast: Default::default(),
            s0_axi_rvalid: Default::default(),
            s0_axi_rready: Default::default(),
            s1_axi_awaddr: Default::default(),
            s1_axi_awlen: Default::default(),
            s1_axi_awsize: Default::default(),
            s1_axi_awburst: Default::default(),
            s1_axi_awvalid: Default::default(),
            s1_axi_awready: Default::default(),
            s1_axi_wdata: Default::default(),
            s1_axi_wstrb: Default::default(),
            s1_axi_wlast: Default::default(),
            s1_axi_wvalid: Default::default(),
            s1_axi_wready: Default::default(),
            s1_axi_bresp: Default::default(),
            s1_axi_bvalid: Default::default(),
            s1_axi_bready: Default::default(),
            s1_axi_araddr: Default::default(),
            s1_axi_arlen: Default::default(),
            s1_axi_arsize: Default::default(),
            s1_axi_arburst: Default::default(),
            s1_axi_arvalid: Default::default(),
            s1_axi_arready: Default::default(),
            s1_axi_rdata: Default::default(),
            s1_axi_rresp: Default::default(),
            s1_axi_rlast: Default::default(),
            s1_axi_rvalid: Default::default(),
            s1_axi_rready: Default::default(),
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
            r_ord: SyncFifo::new(),
            w_ord: SyncFifo::new(),
            b_ord: SyncFifo::new(),
            ar_valid: Default::default(),
            ar_addr: Default::default(),
            ar_len: Default::default(),
            ar_size: Default::default(),
            ar_burst: Default::default(),
            ar_pri1: Default::default(),
            aw_valid: Default::default(),
            aw_addr: Default::default(),
            aw_len: Default::default(),
            aw_size: Default::default(),
            aw_burst: Default::default(),
            aw_pri1: Default::default(),
            ar_free: Default::default(),
            ar_g0: Default::default(),
            ar_g1: Default::default(),
            aw_free: Default::default(),
            aw_g0: Default::default(),
            aw_g1: Default::default(),
            r_ok: Default::default(),
            r_sel: Default::default(),
            w_ok: Default::default(),
            w_sel: Default::default(),
            b_ok: Default::default(),
            b_sel: Default::default(),
        }
    }
}

impl<const W: usize, const K: usize, const A: usize, const AP1: usize> Default
    for AxiArb2<W, K, A, AP1>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const K: usize, const A: usize, const AP1: usize> Logic
    for AxiArb2<W, K, A, AP1>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, ar_valid, ar_addr, ar_len, ar_size, ar_burst, ar_pri1, aw_valid, aw_addr,
            aw_len, aw_size, aw_burst, aw_pri1
        );
        clock!(self, clock, r_ord, w_ord, b_ord);
        self.r_ord.reset.next = self.reset.val();
        self.w_ord.reset.next = self.reset.val();
        self.b_ord.reset.next = self.reset.val();

        // ---- AR: round robin into the AR register.
        self.ar_free.next = !self.reset.val()
            & (!self.ar_valid.q.val() | self.m_axi_arready.val())
            & !self.r_ord.full.val();
        self.ar_g1.next = self.ar_free.val()
            & self.s1_axi_arvalid.val()
            & (!self.s0_axi_arvalid.val() | self.ar_pri1.q.val());
        self.ar_g0.next = self.ar_free.val() & self.s0_axi_arvalid.val() & !self.ar_g1.val();
        self.s0_axi_arready.next = self.ar_g0.val();
        self.s1_axi_arready.next = self.ar_g1.val();
        self.r_ord.write.next = self.ar_g0.val() | self.ar_g1.val();
        self.r_ord.data_in.next = self.ar_g1.val();
        if self.m_axi_arready.val() {
            self.ar_valid.d.next = false;
        }
        if self.ar_g0.val() {
            self.ar_valid.d.next = true;
            self.ar_addr.d.next = self.s0_axi_araddr.val();
            self.ar_len.d.next = self.s0_axi_arlen.val();
            self.ar_size.d.next = self.s0_axi_arsize.val();
            self.ar_burst.d.next = self.s0_axi_arburst.val();
            self.ar_pri1.d.next = true;
        }
        if self.ar_g1.val() {
            self.ar_valid.d.next = true;
            self.ar_addr.d.next = self.s1_axi_araddr.val();
            self.ar_len.d.next = self.s1_axi_arlen.val();
            self.ar_size.d.next = self.s1_axi_arsize.val();
            self.ar_burst.d.next = self.s1_axi_arburst.val();
            self.ar_pri1.d.next = false;
        }
        self.m_axi_arvalid.next = self.ar_valid.q.val();
        self.m_axi_araddr.next = self.ar_addr.q.val();
        self.m_axi_arlen.next = self.ar_len.q.val();
        self.m_axi_arsize.next = self.ar_size.q.val();
        self.m_axi_arburst.next = self.ar_burst.q.val();

        // ---- R: to the R-order FIFO's head, popped on RLAST.
        self.r_ok.next = !self.r_ord.empty.val();
        self.r_sel.next = self.r_ord.data_out.val();
        self.s0_axi_rvalid.next = self.m_axi_rvalid.val() & self.r_ok.val() & !self.r_sel.val();
        self.s1_axi_rvalid.next = self.m_axi_rvalid.val() & self.r_ok.val() & self.r_sel.val();
        if self.r_sel.val() {
            self.m_axi_rready.next = self.r_ok.val() & self.s1_axi_rready.val();
        } else {
            self.m_axi_rready.next = self.r_ok.val() & self.s0_axi_rready.val();
        }
        self.s0_axi_rdata.next = self.m_axi_rdata.val();
        self.s0_axi_rresp.next = self.m_axi_rresp.val();
        self.s0_axi_rlast.next = self.m_axi_rlast.val();
        self.s1_axi_rdata.next = self.m_axi_rdata.val();
        self.s1_axi_rresp.next = self.m_axi_rresp.val();
        self.s1_axi_rlast.next = self.m_axi_rlast.val();
        self.r_ord.read.next =
            self.m_axi_rvalid.val() & self.m_axi_rready.val() & self.m_axi_rlast.val();

        // ---- AW: round robin into the AW register; the index into the W-
        // and B-order FIFOs.
        self.aw_free.next = !self.reset.val()
            & (!self.aw_valid.q.val() | self.m_axi_awready.val())
            & !self.w_ord.full.val()
            & !self.b_ord.full.val();
        self.aw_g1.next = self.aw_free.val()
            & self.s1_axi_awvalid.val()
            & (!self.s0_axi_awvalid.val() | self.aw_pri1.q.val());
        self.aw_g0.next = self.aw_free.val() & self.s0_axi_awvalid.val() & !self.aw_g1.val();
        self.s0_axi_awready.next = self.aw_g0.val();
        self.s1_axi_awready.next = self.aw_g1.val();
        self.w_ord.write.next = self.aw_g0.val() | self.aw_g1.val();
        self.w_ord.data_in.next = self.aw_g1.val();
        self.b_ord.write.next = self.aw_g0.val() | self.aw_g1.val();
        self.b_ord.data_in.next = self.aw_g1.val();
        if self.m_axi_awready.val() {
            self.aw_valid.d.next = false;
        }
        if self.aw_g0.val() {
            self.aw_valid.d.next = true;
            self.aw_addr.d.next = self.s0_axi_awaddr.val();
            self.aw_len.d.next = self.s0_axi_awlen.val();
            self.aw_size.d.next = self.s0_axi_awsize.val();
            self.aw_burst.d.next = self.s0_axi_awburst.val();
            self.aw_pri1.d.next = true;
        }
        if self.aw_g1.val() {
            self.aw_valid.d.next = true;
            self.aw_addr.d.next = self.s1_axi_awaddr.val();
            self.aw_len.d.next = self.s1_axi_awlen.val();
            self.aw_size.d.next = self.s1_axi_awsize.val();
            self.aw_burst.d.next = self.s1_axi_awburst.val();
            self.aw_pri1.d.next = false;
        }
        self.m_axi_awvalid.next = self.aw_valid.q.val();
        self.m_axi_awaddr.next = self.aw_addr.q.val();
        self.m_axi_awlen.next = self.aw_len.q.val();
        self.m_axi_awsize.next = self.aw_size.q.val();
        self.m_axi_awburst.next = self.aw_burst.q.val();

        // ---- W: from the W-order FIFO's head until WLAST.
        self.w_ok.next = !self.w_ord.empty.val();
        self.w_sel.next = self.w_ord.data_out.val();
        if self.w_sel.val() {
            self.m_axi_wvalid.next = self.w_ok.val() & self.s1_axi_wvalid.val();
            self.m_axi_wdata.next = self.s1_axi_wdata.val();
            self.m_axi_wstrb.next = self.s1_axi_wstrb.val();
            self.m_axi_wlast.next = self.s1_axi_wlast.val();
        } else {
            self.m_axi_wvalid.next = self.w_ok.val() & self.s0_axi_wvalid.val();
            self.m_axi_wdata.next = self.s0_axi_wdata.val();
            self.m_axi_wstrb.next = self.s0_axi_wstrb.val();
            self.m_axi_wlast.next = self.s0_axi_wlast.val();
        }
        self.s0_axi_wready.next = self.w_ok.val() & !self.w_sel.val() & self.m_axi_wready.val();
        self.s1_axi_wready.next = self.w_ok.val() & self.w_sel.val() & self.m_axi_wready.val();
        self.w_ord.read.next =
            self.m_axi_wvalid.val() & self.m_axi_wready.val() & self.m_axi_wlast.val();

        // ---- B: to the B-order FIFO's head.
        self.b_ok.next = !self.b_ord.empty.val();
        self.b_sel.next = self.b_ord.data_out.val();
        self.s0_axi_bvalid.next = self.m_axi_bvalid.val() & self.b_ok.val() & !self.b_sel.val();
        self.s1_axi_bvalid.next = self.m_axi_bvalid.val() & self.b_ok.val() & self.b_sel.val();
        if self.b_sel.val() {
            self.m_axi_bready.next = self.b_ok.val() & self.s1_axi_bready.val();
        } else {
            self.m_axi_bready.next = self.b_ok.val() & self.s0_axi_bready.val();
        }
        self.s0_axi_bresp.next = self.m_axi_bresp.val();
        self.s1_axi_bresp.next = self.m_axi_bresp.val();
        self.b_ord.read.next = self.m_axi_bvalid.val() & self.m_axi_bready.val();

        if self.reset.val() {
            self.ar_valid.d.next = false;
            self.aw_valid.d.next = false;
            self.ar_pri1.d.next = false;
            self.aw_pri1.d.next = false;
        }
    }
}

/// The default build at each width.
pub type AxiArb64 = AxiArb2<64, 8>;
pub type AxiArb128 = AxiArb2<128, 16>;
pub type AxiArb256 = AxiArb2<256, 32>;
pub type AxiArb512 = AxiArb2<512, 64>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axi_arb_synthesizes() {
        let mut uut = AxiArb64::new();
        uut.connect_all();
        check_all(&uut).unwrap();
        yosys_validate("axi_arb_w64", &generate_verilog(&uut)).unwrap();
    }
}
