//! The responder (`resp_top`) as the benches drive it: its AXI4 master
//! ports for [`crate::axi_mem::AxiMem`].

use crate::axi_mem::{AxReq, AxiReadPort, AxiWritePort, RBeat, WBeat};
use crate::models::RespTopSmallW64;

impl AxiWritePort for RespTopSmallW64 {
    fn lanes(&self) -> usize {
        8
    }
    fn aw(&self) -> Option<AxReq> {
        self.get_m_axi_awvalid().then(|| AxReq {
            addr: self.get_m_axi_awaddr(),
            len: self.get_m_axi_awlen() as u8,
            size: self.get_m_axi_awsize() as u8,
            burst: self.get_m_axi_awburst() as u8,
        })
    }
    fn set_aw_ready(&mut self, ready: bool) {
        self.set_m_axi_awready(ready)
    }
    fn w(&self) -> Option<WBeat> {
        self.get_m_axi_wvalid().then(|| WBeat {
            data: self.get_m_axi_wdata().to_le_bytes().to_vec(),
            strb: self.get_m_axi_wstrb() as u64,
            last: self.get_m_axi_wlast(),
        })
    }
    fn set_w_ready(&mut self, ready: bool) {
        self.set_m_axi_wready(ready)
    }
    fn set_b(&mut self, resp: Option<u8>) {
        self.set_m_axi_bvalid(resp.is_some());
        self.set_m_axi_bresp(resp.unwrap_or(0) as u32);
    }
    fn b_ready(&self) -> bool {
        self.get_m_axi_bready()
    }
}

impl AxiReadPort for RespTopSmallW64 {
    fn lanes(&self) -> usize {
        8
    }
    fn ar(&self) -> Option<AxReq> {
        self.get_m_axi_arvalid().then(|| AxReq {
            addr: self.get_m_axi_araddr(),
            len: self.get_m_axi_arlen() as u8,
            size: self.get_m_axi_arsize() as u8,
            burst: self.get_m_axi_arburst() as u8,
        })
    }
    fn set_ar_ready(&mut self, ready: bool) {
        self.set_m_axi_arready(ready)
    }
    fn set_r(&mut self, beat: Option<&RBeat>) {
        self.set_m_axi_rvalid(beat.is_some());
        if let Some(b) = beat {
            self.set_m_axi_rdata(u64::from_le_bytes(b.data[..8].try_into().unwrap()));
            self.set_m_axi_rresp(b.resp as u32);
            self.set_m_axi_rlast(b.last);
        }
    }
    fn r_ready(&self) -> bool {
        self.get_m_axi_rready()
    }
}
