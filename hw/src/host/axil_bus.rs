//! `axil_bus`: the NIC's register bus. Two AXI4-Lite masters, the host
//! (`s_host_axil_*`) and the firmware softcore (`s_core_axil_*`), onto two
//! targets: the CSR block's AXI4-Lite slave (`m_csr_axil_*`) and
//! `host_if`'s register port (`m_reg_*` out, `s_reg_resp_*` back).
//!
//! **Decode.** The blocks of [`roce_regs::HOST_BLOCKS`] (`db` and `hq`)
//! go to `host_if`, every other address to the CSR block; the ranges come
//! from the blocks' `base` and `size` (each a power-of-two size at an
//! aligned base, checked in `new()`), compared as `addr & !(size - 1) ==
//! base`. `host_if` answering with `err` becomes SLVERR.
//!
//! **Arbitration** (as `sim/verilog/fw_soc.v`'s core/host arbiter): one
//! whole transaction at a time (AW+W then B, or AR then R). A write is
//! granted once both AWVALID and WVALID are up, a read on ARVALID; when a
//! master offers both, its write goes first. When both masters wait they
//! alternate (round robin; `fw_soc.v` favours the core instead).
//! AWREADY/WREADY/ARREADY are high in the grant cycle only (from the bus's
//! idle state and the masters' valids); addresses, data and responses are
//! registered, so the targets see flip-flops and the masters' responses
//! come from flip-flops.
//!
//! **Latency**: from the grant cycle to the master's BVALID/RVALID, 2
//! cycles plus the target's time from the request's handshake to its
//! response (plus any wait for the target's ready): 3 with a target that
//! answers in the next cycle. The bus is back in its idle state the cycle
//! after the response is taken, so back-to-back transactions run one per 4
//! cycles at best (measured in `sim/tests/axil_bus.rs`).

use crate::csr::ADDR_BITS;
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum BusState {
    Idle,
    CsrReq,
    CsrWait,
    RegReq,
    RegWait,
    Resp,
}

/// The register bus: host and core AXI4-Lite slave ports onto the CSR
/// block's AXI4-Lite port and `host_if`'s register port.
#[derive(LogicBlock)]
pub struct AxilBus {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_host_axil_awaddr: Signal<In, Bits<ADDR_BITS>>,
    pub s_host_axil_awvalid: Signal<In, Bit>,
    pub s_host_axil_awready: Signal<Out, Bit>,
    pub s_host_axil_wdata: Signal<In, Bits<32>>,
    pub s_host_axil_wstrb: Signal<In, Bits<4>>,
    pub s_host_axil_wvalid: Signal<In, Bit>,
    pub s_host_axil_wready: Signal<Out, Bit>,
    pub s_host_axil_bresp: Signal<Out, Bits<2>>,
    pub s_host_axil_bvalid: Signal<Out, Bit>,
    pub s_host_axil_bready: Signal<In, Bit>,
    pub s_host_axil_araddr: Signal<In, Bits<ADDR_BITS>>,
    pub s_host_axil_arvalid: Signal<In, Bit>,
    pub s_host_axil_arready: Signal<Out, Bit>,
    pub s_host_axil_rdata: Signal<Out, Bits<32>>,
    pub s_host_axil_rresp: Signal<Out, Bits<2>>,
    pub s_host_axil_rvalid: Signal<Out, Bit>,
    pub s_host_axil_rready: Signal<In, Bit>,
    pub s_core_axil_awaddr: Signal<In, Bits<ADDR_BITS>>,
    pub s_core_axil_awvalid: Signal<In, Bit>,
    pub s_core_axil_awready: Signal<Out, Bit>,
    pub s_core_axil_wdata: Signal<In, Bits<32>>,
    pub s_core_axil_wstrb: Signal<In, Bits<4>>,
    pub s_core_axil_wvalid: Signal<In, Bit>,
    pub s_core_axil_wready: Signal<Out, Bit>,
    pub s_core_axil_bresp: Signal<Out, Bits<2>>,
    pub s_core_axil_bvalid: Signal<Out, Bit>,
    pub s_core_axil_bready: Signal<In, Bit>,
    pub s_core_axil_araddr: Signal<In, Bits<ADDR_BITS>>,
    pub s_core_axil_arvalid: Signal<In, Bit>,
    pub s_core_axil_arready: Signal<Out, Bit>,
    pub s_core_axil_rdata: Signal<Out, Bits<32>>,
    pub s_core_axil_rresp: Signal<Out, Bits<2>>,
    pub s_core_axil_rvalid: Signal<Out, Bit>,
    pub s_core_axil_rready: Signal<In, Bit>,
    pub m_csr_axil_awaddr: Signal<Out, Bits<ADDR_BITS>>,
    pub m_csr_axil_awvalid: Signal<Out, Bit>,
    pub m_csr_axil_awready: Signal<In, Bit>,
    pub m_csr_axil_wdata: Signal<Out, Bits<32>>,
    pub m_csr_axil_wstrb: Signal<Out, Bits<4>>,
    pub m_csr_axil_wvalid: Signal<Out, Bit>,
    pub m_csr_axil_wready: Signal<In, Bit>,
    pub m_csr_axil_bresp: Signal<In, Bits<2>>,
    pub m_csr_axil_bvalid: Signal<In, Bit>,
    pub m_csr_axil_bready: Signal<Out, Bit>,
    pub m_csr_axil_araddr: Signal<Out, Bits<ADDR_BITS>>,
    pub m_csr_axil_arvalid: Signal<Out, Bit>,
    pub m_csr_axil_arready: Signal<In, Bit>,
    pub m_csr_axil_rdata: Signal<In, Bits<32>>,
    pub m_csr_axil_rresp: Signal<In, Bits<2>>,
    pub m_csr_axil_rvalid: Signal<In, Bit>,
    pub m_csr_axil_rready: Signal<Out, Bit>,
    // host_if's register port.
    pub m_reg_valid: Signal<Out, Bit>,
    pub m_reg_ready: Signal<In, Bit>,
    pub m_reg_write: Signal<Out, Bit>,
    pub m_reg_addr: Signal<Out, Bits<ADDR_BITS>>,
    pub m_reg_wdata: Signal<Out, Bits<32>>,
    pub m_reg_strb: Signal<Out, Bits<4>>,
    pub s_reg_resp_valid: Signal<In, Bit>,
    pub s_reg_resp_rdata: Signal<In, Bits<32>>,
    pub s_reg_resp_err: Signal<In, Bit>,

    st: DFF<BusState>,
    /// The granted transaction: the core's (else the host's), a write.
    g_core: DFF<Bit>,
    g_write: DFF<Bit>,
    addr: DFF<Bits<ADDR_BITS>>,
    wdata: DFF<Bits<32>>,
    strb: DFF<Bits<4>>,
    rdata: DFF<Bits<32>>,
    resp: DFF<Bits<2>>,
    /// The core goes first when both wait.
    pri_core: DFF<Bit>,
    /// CSR-side AW, W, AR not yet taken.
    aw_pend: DFF<Bit>,
    w_pend: DFF<Bit>,
    ar_pend: DFF<Bit>,
    // The host_if ranges: `addr & mask == base`.
    base0: Constant<Bits<ADDR_BITS>>,
    mask0: Constant<Bits<ADDR_BITS>>,
    base1: Constant<Bits<ADDR_BITS>>,
    mask1: Constant<Bits<ADDR_BITS>>,
    // Combinational.
    idle: Signal<Local, Bit>,
    h_w: Signal<Local, Bit>,
    h_req: Signal<Local, Bit>,
    c_w: Signal<Local, Bit>,
    c_req: Signal<Local, Bit>,
    pick_c: Signal<Local, Bit>,
    pick_h: Signal<Local, Bit>,
    sel_w: Signal<Local, Bit>,
    a: Signal<Local, Bits<ADDR_BITS>>,
    is_reg: Signal<Local, Bit>,
}

impl AxilBus {
    pub fn new() -> Self {
        let hb = roce_regs::HOST_BLOCKS;
        assert_eq!(hb.len(), 2, "AxilBus decodes two host_if blocks");
        let window = 1u64 << ADDR_BITS;
        let range = |b: &roce_regs::Block| {
            let (base, size) = (b.base as u64, b.size as u64);
            assert!(
                size.is_power_of_two() && base % size == 0 && base + size <= window,
                "AxilBus: block {} ({base:#x}+{size:#x}) is not an aligned power of two in the window",
                b.name
            );
            (
                Constant::new(base.into()),
                Constant::new(((window - 1) & !(size - 1)).into()),
            )
        };
        let (base0, mask0) = range(&hb[0]);
        let (base1, mask1) = range(&hb[1]);
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_host_axil_awaddr: Default::default(),
            s_host_axil_awvalid: Default::default(),
            s_host_axil_awready: Default::default(),
            s_host_axil_wdata: Default::default(),
            s_host_axil_wstrb: Default::default(),
            s_host_axil_wvalid: Default::default(),
            s_host_axil_wready: Default::default(),
            s_host_axil_bresp: Default::default(),
            s_host_axil_bvalid: Default::default(),
            s_host_axil_bready: Default::default(),
            s_host_axil_araddr: Default::default(),
            s_host_axil_arvalid: Default::default(),
            s_host_axil_arready: Default::default(),
            s_host_axil_rdata: Default::default(),
            s_host_axil_rresp: Default::default(),
            s_host_axil_rvalid: Default::default(),
            s_host_axil_rready: Default::default(),
            s_core_axil_awaddr: Default::default(),
            s_core_axil_awvalid: Default::default(),
            s_core_axil_awready: Default::default(),
            s_core_axil_wdata: Default::default(),
            s_core_axil_wstrb: Default::default(),
            s_core_axil_wvalid: Default::default(),
            s_core_axil_wready: Default::default(),
            s_core_axil_bresp: Default::default(),
            s_core_axil_bvalid: Default::default(),
            s_core_axil_bready: Default::default(),
            s_core_axil_araddr: Default::default(),
            s_core_axil_arvalid: Default::default(),
            s_core_axil_arready: Default::default(),
            s_core_axil_rdata: Default::default(),
            s_core_axil_rresp: Default::default(),
            s_core_axil_rvalid: Default::default(),
            s_core_axil_rready: Default::default(),
            m_csr_axil_awaddr: Default::default(),
            m_csr_axil_awvalid: Default::default(),
            m_csr_axil_awready: Default::default(),
            m_csr_axil_wdata: Default::default(),
            m_csr_axil_wstrb: Default::default(),
            m_csr_axil_wvalid: Default::default(),
            m_csr_axil_wready: Default::default(),
            m_csr_axil_bresp: Default::default(),
            m_csr_axil_bvalid: Default::default(),
            m_csr_axil_bready: Default::default(),
            m_csr_axil_araddr: Default::default(),
            m_csr_axil_arvalid: Default::default(),
            m_csr_axil_arready: Default::default(),
            m_csr_axil_rdata: Default::default(),
            m_csr_axil_rresp: Default::default(),
            m_csr_axil_rvalid: Default::default(),
            m_csr_axil_rready: Default::default(),
            m_reg_valid: Default::default(),
            m_reg_ready: Default::default(),
            m_reg_write: Default::default(),
            m_reg_addr: Default::default(),
            m_reg_wdata: Default::default(),
            m_reg_strb: Default::default(),
            s_reg_resp_valid: Default::default(),
            s_reg_resp_rdata: Default::default(),
            s_reg_resp_err: Default::default(),
            st: Default::default(),
            g_core: Default::default(),
            g_write: Default::default(),
            addr: Default::default(),
            wdata: Default::default(),
            strb: Default::default(),
            rdata: Default::default(),
            resp: Default::default(),
            pri_core: Default::default(),
            aw_pend: Default::default(),
            w_pend: Default::default(),
            ar_pend: Default::default(),
            base0,
            mask0,
            base1,
            mask1,
            idle: Default::default(),
            h_w: Default::default(),
            h_req: Default::default(),
            c_w: Default::default(),
            c_req: Default::default(),
            pick_c: Default::default(),
            pick_h: Default::default(),
            sel_w: Default::default(),
            a: Default::default(),
            is_reg: Default::default(),
        }
    }
}

impl Default for AxilBus {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for AxilBus {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, g_core, g_write, addr, wdata, strb, rdata, resp, pri_core, aw_pend,
            w_pend, ar_pend
        );
        // ---- Grant (in the idle state): a write needs AW and W up.
        self.idle.next = self.st.q.val() == BusState::Idle;
        self.h_w.next = self.s_host_axil_awvalid.val() & self.s_host_axil_wvalid.val();
        self.h_req.next = self.h_w.val() | self.s_host_axil_arvalid.val();
        self.c_w.next = self.s_core_axil_awvalid.val() & self.s_core_axil_wvalid.val();
        self.c_req.next = self.c_w.val() | self.s_core_axil_arvalid.val();
        self.pick_c.next = self.idle.val()
            & !self.reset.val()
            & self.c_req.val()
            & (!self.h_req.val() | self.pri_core.q.val());
        self.pick_h.next =
            self.idle.val() & !self.reset.val() & self.h_req.val() & !self.pick_c.val();
        if self.pick_c.val() {
            self.sel_w.next = self.c_w.val();
            if self.c_w.val() {
                self.a.next = self.s_core_axil_awaddr.val();
            } else {
                self.a.next = self.s_core_axil_araddr.val();
            }
        } else {
            self.sel_w.next = self.h_w.val();
            if self.h_w.val() {
                self.a.next = self.s_host_axil_awaddr.val();
            } else {
                self.a.next = self.s_host_axil_araddr.val();
            }
        }
        self.is_reg.next = ((self.a.val() & self.mask0.val()) == self.base0.val())
            | ((self.a.val() & self.mask1.val()) == self.base1.val());
        self.s_core_axil_awready.next = self.pick_c.val() & self.sel_w.val();
        self.s_core_axil_wready.next = self.pick_c.val() & self.sel_w.val();
        self.s_core_axil_arready.next = self.pick_c.val() & !self.sel_w.val();
        self.s_host_axil_awready.next = self.pick_h.val() & self.sel_w.val();
        self.s_host_axil_wready.next = self.pick_h.val() & self.sel_w.val();
        self.s_host_axil_arready.next = self.pick_h.val() & !self.sel_w.val();

        // ---- Targets and responses, from flip-flops.
        self.m_csr_axil_awaddr.next = self.addr.q.val();
        self.m_csr_axil_araddr.next = self.addr.q.val();
        self.m_csr_axil_wdata.next = self.wdata.q.val();
        self.m_csr_axil_wstrb.next = self.strb.q.val();
        self.m_csr_axil_awvalid.next = false;
        self.m_csr_axil_wvalid.next = false;
        self.m_csr_axil_arvalid.next = false;
        self.m_csr_axil_bready.next = false;
        self.m_csr_axil_rready.next = false;
        self.m_reg_valid.next = false;
        self.m_reg_write.next = self.g_write.q.val();
        self.m_reg_addr.next = self.addr.q.val();
        self.m_reg_wdata.next = self.wdata.q.val();
        self.m_reg_strb.next = self.strb.q.val();
        self.s_core_axil_bvalid.next = false;
        self.s_core_axil_rvalid.next = false;
        self.s_host_axil_bvalid.next = false;
        self.s_host_axil_rvalid.next = false;
        self.s_core_axil_bresp.next = self.resp.q.val();
        self.s_core_axil_rresp.next = self.resp.q.val();
        self.s_core_axil_rdata.next = self.rdata.q.val();
        self.s_host_axil_bresp.next = self.resp.q.val();
        self.s_host_axil_rresp.next = self.resp.q.val();
        self.s_host_axil_rdata.next = self.rdata.q.val();

        match self.st.q.val() {
            BusState::Idle => {
                if self.pick_c.val() | self.pick_h.val() {
                    self.g_core.d.next = self.pick_c.val();
                    self.g_write.d.next = self.sel_w.val();
                    self.addr.d.next = self.a.val();
                    if self.pick_c.val() {
                        self.wdata.d.next = self.s_core_axil_wdata.val();
                        self.strb.d.next = self.s_core_axil_wstrb.val();
                    } else {
                        self.wdata.d.next = self.s_host_axil_wdata.val();
                        self.strb.d.next = self.s_host_axil_wstrb.val();
                    }
                    self.pri_core.d.next = self.pick_h.val();
                    self.aw_pend.d.next = self.sel_w.val() & !self.is_reg.val();
                    self.w_pend.d.next = self.sel_w.val() & !self.is_reg.val();
                    self.ar_pend.d.next = !self.sel_w.val() & !self.is_reg.val();
                    if self.is_reg.val() {
                        self.st.d.next = BusState::RegReq;
                    } else {
                        self.st.d.next = BusState::CsrReq;
                    }
                }
            }
            BusState::CsrReq => {
                self.m_csr_axil_awvalid.next = self.aw_pend.q.val();
                self.m_csr_axil_wvalid.next = self.w_pend.q.val();
                self.m_csr_axil_arvalid.next = self.ar_pend.q.val();
                if self.m_csr_axil_awready.val() {
                    self.aw_pend.d.next = false;
                }
                if self.m_csr_axil_wready.val() {
                    self.w_pend.d.next = false;
                }
                if self.m_csr_axil_arready.val() {
                    self.ar_pend.d.next = false;
                }
                if (!self.aw_pend.q.val() | self.m_csr_axil_awready.val())
                    & (!self.w_pend.q.val() | self.m_csr_axil_wready.val())
                    & (!self.ar_pend.q.val() | self.m_csr_axil_arready.val())
                {
                    self.st.d.next = BusState::CsrWait;
                }
            }
            BusState::CsrWait => {
                self.m_csr_axil_bready.next = self.g_write.q.val();
                self.m_csr_axil_rready.next = !self.g_write.q.val();
                if self.g_write.q.val() & self.m_csr_axil_bvalid.val() {
                    self.resp.d.next = self.m_csr_axil_bresp.val();
                    self.st.d.next = BusState::Resp;
                }
                if !self.g_write.q.val() & self.m_csr_axil_rvalid.val() {
                    self.rdata.d.next = self.m_csr_axil_rdata.val();
                    self.resp.d.next = self.m_csr_axil_rresp.val();
                    self.st.d.next = BusState::Resp;
                }
            }
            BusState::RegReq => {
                self.m_reg_valid.next = true;
                if self.m_reg_ready.val() {
                    self.st.d.next = BusState::RegWait;
                }
            }
            BusState::RegWait => {
                if self.s_reg_resp_valid.val() {
                    self.rdata.d.next = self.s_reg_resp_rdata.val();
                    if self.s_reg_resp_err.val() {
                        self.resp.d.next = 2.into();
                    } else {
                        self.resp.d.next = 0.into();
                    }
                    self.st.d.next = BusState::Resp;
                }
            }
            BusState::Resp => {
                if self.g_core.q.val() {
                    self.s_core_axil_bvalid.next = self.g_write.q.val();
                    self.s_core_axil_rvalid.next = !self.g_write.q.val();
                    if (self.g_write.q.val() & self.s_core_axil_bready.val())
                        | (!self.g_write.q.val() & self.s_core_axil_rready.val())
                    {
                        self.st.d.next = BusState::Idle;
                    }
                } else {
                    self.s_host_axil_bvalid.next = self.g_write.q.val();
                    self.s_host_axil_rvalid.next = !self.g_write.q.val();
                    if (self.g_write.q.val() & self.s_host_axil_bready.val())
                        | (!self.g_write.q.val() & self.s_host_axil_rready.val())
                    {
                        self.st.d.next = BusState::Idle;
                    }
                }
            }
        }
        if self.reset.val() {
            self.st.d.next = BusState::Idle;
            self.pri_core.d.next = false;
            self.aw_pend.d.next = false;
            self.w_pend.d.next = false;
            self.ar_pend.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axil_bus_synthesizes() {
        let mut uut = AxilBus::new();
        uut.connect_all();
        check_all(&uut).unwrap();
        yosys_validate("axil_bus", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn host_blocks_decode() {
        // The ranges are the map's db and hq blocks.
        let names: Vec<&str> = roce_regs::HOST_BLOCKS.iter().map(|b| b.name).collect();
        assert_eq!(names, ["db", "hq"]);
        AxilBus::new();
    }
}
