//! `host_if` from Rust: its Verilator models (the 64-QP, 64-CQ test build
//! at W = 64 and 512) behind one trait, the AXI side as [`AxiWritePort`] /
//! [`AxiReadPort`] for an `AxiMem`. The bench is `sim/tests/host_if.rs`.
//!
//! [`AxiWritePort`]: crate::axi_mem::AxiWritePort
//! [`AxiReadPort`]: crate::axi_mem::AxiReadPort

use crate::axis::{bytes_from_u64, bytes_from_words, le_u64, le_words};
use crate::host_rings::WorkRequest;
use crate::model::Model;
use crate::models::{HostIfSmallW512, HostIfSmallW64};

/// A register access on `s_reg_*`.
#[derive(Clone, Copy, Debug)]
pub struct RegOp {
    pub write: bool,
    pub addr: u32,
    pub data: u32,
    pub strb: u32,
}

/// A send completion on `s_scqe_*`.
#[derive(Clone, Copy, Debug)]
pub struct Scqe {
    pub qpn: u32,
    pub wr_id: u64,
    pub status: u32,
    pub opcode: u32,
    pub len: u32,
}

/// A receive completion on `s_rcqe_*`.
#[derive(Clone, Copy, Debug)]
pub struct Rcqe {
    pub qpn: u32,
    pub status: u32,
    pub opcode: u32,
    pub len: u32,
    pub imm: u32,
    /// The message's SE (`s_rcqe_se`).
    pub se: bool,
}

/// One `host_if` model, whatever its width.
pub trait Dut: crate::axi_mem::AxiWritePort + crate::axi_mem::AxiReadPort {
    fn rst(&mut self, v: bool);
    fn busy(&self) -> bool;
    fn reg(&mut self, r: Option<&RegOp>);
    fn reg_ready(&self) -> bool;
    fn reg_resp(&self) -> Option<(u32, bool)>;
    fn set_wqe_ready(&mut self, v: bool);
    fn wqe(&self) -> Option<WorkRequest>;
    fn scqe(&mut self, c: Option<&Scqe>);
    fn scqe_ready(&self) -> bool;
    fn rq_req(&mut self, r: Option<&(u32, bool)>);
    fn rq_req_ready(&self) -> bool;
    fn set_rq_resp_ready(&mut self, v: bool);
    fn rq_resp(&self) -> Option<(bool, u32, u64, u32)>;
    fn rcqe(&mut self, c: Option<&Rcqe>);
    fn rcqe_ready(&self) -> bool;
    fn event(&self) -> Option<u32>;
    fn qp_err(&self) -> Option<u32>;
    /// `m_post_recv`: (QPN, count) offered.
    fn post_recv(&self) -> Option<(u32, u32)>;
    fn set_post_recv_ready(&mut self, v: bool);
    fn eval_(&mut self);
    fn tick_(&mut self);
}

macro_rules! dut {
    ($m:ident, $lanes:expr, $wdata:expr, $wstrb:expr, $rdata:expr) => {
        crate::axi_write_port!($m, $lanes, $wdata, $wstrb);
        crate::axi_read_port!($m, $lanes, $rdata);
        impl Dut for $m {
            fn rst(&mut self, v: bool) {
                self.set_reset(v)
            }
            fn busy(&self) -> bool {
                self.get_busy()
            }
            fn reg(&mut self, r: Option<&RegOp>) {
                self.set_s_reg_valid(r.is_some());
                if let Some(r) = r {
                    self.set_s_reg_write(r.write);
                    self.set_s_reg_addr(r.addr);
                    self.set_s_reg_wdata(r.data);
                    self.set_s_reg_strb(r.strb);
                }
            }
            fn reg_ready(&self) -> bool {
                self.get_s_reg_ready()
            }
            fn reg_resp(&self) -> Option<(u32, bool)> {
                self.get_m_reg_resp_valid()
                    .then(|| (self.get_m_reg_resp_rdata(), self.get_m_reg_resp_err()))
            }
            fn set_wqe_ready(&mut self, v: bool) {
                self.set_m_wqe_ready(v)
            }
            fn wqe(&self) -> Option<WorkRequest> {
                self.get_m_wqe_valid().then(|| WorkRequest {
                    qpn: self.get_m_wqe_qpn(),
                    op: self.get_m_wqe_op() as u64,
                    signaled: self.get_m_wqe_signaled(),
                    solicited: self.get_m_wqe_solicited(),
                    fence: self.get_m_wqe_fence(),
                    wr_id: self.get_m_wqe_wr_id(),
                    lkey: self.get_m_wqe_lkey(),
                    lva: self.get_m_wqe_lva(),
                    phys: self.get_m_wqe_phys(),
                    len: self.get_m_wqe_len(),
                    rva: self.get_m_wqe_rva(),
                    rkey: self.get_m_wqe_rkey(),
                    imm: self.get_m_wqe_imm(),
                    swap: self.get_m_wqe_swap(),
                    compare: self.get_m_wqe_compare(),
                })
            }
            fn scqe(&mut self, c: Option<&Scqe>) {
                self.set_s_scqe_valid(c.is_some());
                if let Some(c) = c {
                    self.set_s_scqe_qpn(c.qpn);
                    self.set_s_scqe_wr_id(c.wr_id);
                    self.set_s_scqe_status(c.status);
                    self.set_s_scqe_opcode(c.opcode);
                    self.set_s_scqe_byte_len(c.len);
                }
            }
            fn scqe_ready(&self) -> bool {
                self.get_s_scqe_ready()
            }
            fn rq_req(&mut self, r: Option<&(u32, bool)>) {
                self.set_s_rq_req_valid(r.is_some());
                if let Some(&(q, pop)) = r {
                    self.set_s_rq_req_qpn(q);
                    self.set_s_rq_req_pop(pop);
                }
            }
            fn rq_req_ready(&self) -> bool {
                self.get_s_rq_req_ready()
            }
            fn set_rq_resp_ready(&mut self, v: bool) {
                self.set_m_rq_resp_ready(v)
            }
            fn rq_resp(&self) -> Option<(bool, u32, u64, u32)> {
                self.get_m_rq_resp_valid().then(|| {
                    (
                        self.get_m_rq_resp_ok(),
                        self.get_m_rq_resp_key(),
                        self.get_m_rq_resp_va(),
                        self.get_m_rq_resp_len(),
                    )
                })
            }
            fn rcqe(&mut self, c: Option<&Rcqe>) {
                self.set_s_rcqe_valid(c.is_some());
                if let Some(c) = c {
                    self.set_s_rcqe_qpn(c.qpn);
                    self.set_s_rcqe_status(c.status);
                    self.set_s_rcqe_opcode(c.opcode);
                    self.set_s_rcqe_len(c.len);
                    self.set_s_rcqe_imm(c.imm);
                    self.set_s_rcqe_se(c.se);
                }
            }
            fn rcqe_ready(&self) -> bool {
                self.get_s_rcqe_ready()
            }
            fn event(&self) -> Option<u32> {
                self.get_m_event_valid().then(|| self.get_m_event_cqn())
            }
            fn qp_err(&self) -> Option<u32> {
                self.get_m_qp_err_valid().then(|| self.get_m_qp_err_qpn())
            }
            fn post_recv(&self) -> Option<(u32, u32)> {
                self.get_m_post_recv_valid().then(|| {
                    (
                        self.get_m_post_recv_qpn(),
                        self.get_m_post_recv_count() as u32,
                    )
                })
            }
            fn set_post_recv_ready(&mut self, v: bool) {
                self.set_m_post_recv_ready(v)
            }
            fn eval_(&mut self) {
                Model::eval(self)
            }
            fn tick_(&mut self) {
                Model::tick(self)
            }
        }
    };
}

dut!(
    HostIfSmallW64,
    8,
    |m: &HostIfSmallW64| bytes_from_u64(m.get_m_axi_wdata(), 8),
    |m: &HostIfSmallW64| m.get_m_axi_wstrb() as u64,
    |m: &mut HostIfSmallW64, d: &[u8]| m.set_m_axi_rdata(le_u64(d))
);
dut!(
    HostIfSmallW512,
    64,
    |m: &HostIfSmallW512| bytes_from_words(&m.get_m_axi_wdata(), 64),
    |m: &HostIfSmallW512| m.get_m_axi_wstrb(),
    |m: &mut HostIfSmallW512, d: &[u8]| m.set_m_axi_rdata(&le_words::<16>(d))
);

/// Widths with models.
pub const WIDTHS: [usize; 2] = [64, 512];

/// A `host_if_small` model at `width`.
pub fn dut(width: usize) -> Box<dyn Dut> {
    match width {
        64 => Box::new(HostIfSmallW64::new()),
        512 => Box::new(HostIfSmallW512::new()),
        w => panic!("no host_if model at width {w} (have {WIDTHS:?})"),
    }
}

/// The transport's codes (`OP_*`, `ST_*`, `RCQE_*`) as the catalogue
/// exports them (both widths export the same).
pub const CODES: &crate::host_rings::Codes = HostIfSmallW64::PARAMS;
