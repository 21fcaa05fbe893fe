//! The hardware responder (`resp_top`) as benches and `roce-sim replay
//! --engine hw` drive it: [`HwResponder`], and its AXI4 master ports for
//! [`crate::axi_mem::AxiMem`].

use crate::axi_mem::{AxiMem, AxiMemTiming};
use crate::models::RespTopSmallW64;
use crate::rng::Rng;
use roce_transport::{Memory, Packet};
use roce_wire::mr::{Access, Request};
use std::collections::{HashMap, VecDeque};

/// A `resp_top_small` parameter or code (the catalogue's, never retyped).
pub fn code(name: &str) -> u64 {
    crate::param(RespTopSmallW64::PARAMS, name)
}

/// Responder resources per QP in the hardware.
pub fn res_per_qp() -> u32 {
    code("RES_PER_QP") as u32
}

/// Drives `roce_rx`'s request-header fields (`s_hdr_*`, as `resp_chk`
/// takes them) on a Verilator model from a packet; `$drop` is roce_rx's
/// drop verdict.
#[macro_export]
macro_rules! set_request_header {
    ($d:expr, $p:expr, $drop:expr) => {{
        let p: &roce_transport::Packet = $p;
        let e = &p.ext;
        let reth = e.reth.unwrap_or_default();
        let at = e.atomic_eth.unwrap_or_default();
        $d.set_s_hdr_drop($drop);
        $d.set_s_hdr_opcode(p.bth.opcode.0 as _);
        $d.set_s_hdr_padcnt(p.bth.pad_count as _);
        $d.set_s_hdr_destqp(p.bth.dest_qp as _);
        $d.set_s_hdr_ackreq(p.bth.ack_req);
        $d.set_s_hdr_se(p.bth.solicited);
        $d.set_s_hdr_psn(p.bth.psn.value() as _);
        $d.set_s_hdr_payload_len(p.payload.len() as _);
        $d.set_s_hdr_reth_va(reth.va as _);
        $d.set_s_hdr_reth_rkey(reth.rkey as _);
        $d.set_s_hdr_reth_dmalen(reth.dma_len as _);
        $d.set_s_hdr_immdt(e.immdt.unwrap_or(0) as _);
        $d.set_s_hdr_ieth(e.ieth.unwrap_or(0) as _);
        $d.set_s_hdr_atomic_va(at.va as _);
        $d.set_s_hdr_atomic_rkey(at.rkey as _);
        $d.set_s_hdr_atomic_swap_add(at.swap_add as _);
        $d.set_s_hdr_atomic_compare(at.compare as _);
    }};
}

/// 32-bit words of a packed QP context (`csr::QP_CTX_BITS` = 344 bits).
pub const CTX_WORDS: usize = 11;

/// A response as compared: opcode, PSN, AETH (syndrome byte, MSN),
/// ATOMIC ACK value, payload.
pub type Resp = (u8, u32, Option<(u8, u32)>, Option<u64>, Vec<u8>);

/// A QP context packed as the csr block's datapath port delivers it:
/// context registers in map order, their fields in declaration order,
/// from bit 0 up; `value` gives each (register, field)'s value.
pub fn pack_ctx(value: impl Fn(&str, &str) -> u32) -> [u32; CTX_WORDS] {
    let mut out = [0u32; CTX_WORDS];
    let mut at = 0;
    for r in roce_regs::qp::BLOCK
        .registers
        .iter()
        .filter(|r| r.count == roce_regs::QP_COUNT && r.stride == roce_regs::QP_STRIDE)
    {
        for f in r.fields {
            let v = value(r.name, f.name);
            for b in 0..f.width as usize {
                if v >> b & 1 == 1 {
                    out[(at + b) / 32] |= 1 << ((at + b) % 32);
                }
            }
            at += f.width as usize;
        }
    }
    assert!(at <= 32 * CTX_WORDS, "the context fits CTX_WORDS");
    out
}

crate::axi_write_port!(
    RespTopSmallW64,
    8,
    |m: &RespTopSmallW64| m.get_m_axi_wdata().to_le_bytes().to_vec(),
    |m: &RespTopSmallW64| m.get_m_axi_wstrb() as u64
);
crate::axi_read_port!(RespTopSmallW64, 8, |m: &mut RespTopSmallW64, d: &[u8]| m
    .set_m_axi_rdata(crate::axis::le_u64(d)));

/// What the harness feeds the responder, in order.
pub enum Item {
    /// A request header (its payload follows on the payload stream).
    Hdr(Packet),
    /// A firmware event (`resp_chk::EV_*`).
    Ev { kind: u64, qpn: u32, count: u32 },
}

/// The verilated responder (`resp_top`, 64 QPs, W = 64) and what a bench
/// puts around it: the context port (`ctx`, packed contexts per QP, read
/// 2 cycles after the address), `mr_tlb`'s grants (from `mrs`'s
/// `Memory::translate`, random latency), the AXI memory, `roce_rx`'s
/// payload stream, the receive queues and the invalidation port. `stall`
/// (‰) adds random latency and backpressure everywhere.
pub struct HwResponder<M: Memory> {
    pub d: RespTopSmallW64,
    pub axi: AxiMem,
    pub ctx: Vec<[u32; CTX_WORDS]>,
    pub reads: VecDeque<[u32; CTX_WORDS]>,
    pub items: VecDeque<Item>,
    /// Payload beats of the headers taken, in order (roce_rx's m_axis).
    pub pay: VecDeque<(u64, u8, bool)>,
    /// The MR table (translation and invalidation only: the bytes live in
    /// `axi`).
    pub mrs: M,
    pub grants: VecDeque<(u64, u64, u32, bool, u8)>,
    pub rq: HashMap<u32, VecDeque<(u32, u64, u32)>>,
    pub rq_cur: HashMap<u32, (u32, u64, u32)>,
    pub rq_resp: VecDeque<(u64, bool, u32, u64, u32)>,
    pub inv_done: VecDeque<(u64, bool)>,
    /// Responses: descriptors waiting for their payload, finished ones.
    pub rsp_wait: VecDeque<(u32, Resp, usize)>,
    pub rsp_pay: Vec<u8>,
    pub rsp: Vec<(u32, Resp)>,
    pub cqes: Vec<(u32, u32, u8, u32, u32)>,
    pub errors: Vec<u32>,
    /// Cycle of each header's handshake and of each response descriptor's.
    pub hdr_cycles: Vec<u64>,
    pub rsp_cycles: Vec<u64>,
    pub rng: Rng,
    pub cycle: u64,
    pub stall: u32,
}

impl<M: Memory> HwResponder<M> {
    pub fn new(seed: u64, mrs: M, ctx: Vec<[u32; CTX_WORDS]>, stall: u32) -> HwResponder<M> {
        let timing = AxiMemTiming::with_stalls(stall);
        let axi = AxiMem::new(8, seed ^ 0xa, timing);
        let mut h = HwResponder {
            d: RespTopSmallW64::new(),
            axi,
            ctx,
            reads: VecDeque::from([[0; CTX_WORDS], [0; CTX_WORDS]]),
            items: VecDeque::new(),
            pay: VecDeque::new(),
            mrs,
            grants: VecDeque::new(),
            rq: HashMap::new(),
            rq_cur: HashMap::new(),
            rq_resp: VecDeque::new(),
            inv_done: VecDeque::new(),
            rsp_wait: VecDeque::new(),
            rsp_pay: Vec::new(),
            rsp: Vec::new(),
            cqes: Vec::new(),
            errors: Vec::new(),
            hdr_cycles: Vec::new(),
            rsp_cycles: Vec::new(),
            rng: Rng::new(seed),
            cycle: 0,
            stall,
        };
        for r in [true, false] {
            h.d.set_reset(r);
            for _ in 0..3 {
                h.d.eval();
                h.d.tick();
            }
        }
        h
    }

    /// Work queued, or the responder not idle.
    pub fn busy(&mut self) -> bool {
        self.d.eval();
        !self.items.is_empty()
            || !self.rsp_wait.is_empty()
            || !self.pay.is_empty()
            || !self.d.get_s_ev_ready()
            || !self.axi.quiet()
    }

    /// What is waiting, for a hang's message.
    pub fn why(&mut self) -> String {
        let d = &mut self.d;
        d.eval();
        format!(
            "items {} (front header: {}), payload beats {}, grants {}, responses waiting {}; \
             hdr_ready {} ev_ready {} mr_req {} rsp {} rq_req {} rcqe {} inv {} \
             grant_ready {} pay_ready {} axi quiet {}",
            self.items.len(),
            matches!(self.items.front(), Some(Item::Hdr(_))),
            self.pay.len(),
            self.grants.len(),
            self.rsp_wait.len(),
            d.get_s_hdr_ready(),
            d.get_s_ev_ready(),
            d.get_m_mr_req_valid(),
            d.get_m_rsp_valid(),
            d.get_m_rq_req_valid(),
            d.get_m_rcqe_valid(),
            d.get_m_inv_valid(),
            d.get_s_mr_grant_ready(),
            d.get_s_pay_tready(),
            self.axi.quiet(),
        )
    }

    /// One clock cycle.
    pub fn step(&mut self) {
        let stall = self.stall;
        let rnd = |rng: &mut Rng| stall == 0 || !rng.chance(stall);
        let d = &mut self.d;
        self.axi.drive_write(d);
        self.axi.drive_read(d);
        let (mut hv, mut evv) = (false, false);
        match self.items.front() {
            Some(Item::Ev { kind, qpn, count }) => {
                evv = true;
                d.set_s_ev_kind(*kind as _);
                d.set_s_ev_qpn(*qpn);
                d.set_s_ev_count(*count as _);
            }
            Some(Item::Hdr(p)) => {
                hv = true;
                crate::set_request_header!(d, p, false);
            }
            None => {}
        }
        d.set_s_hdr_valid(hv);
        d.set_s_ev_valid(evv);
        d.set_qp_rd_data(&self.reads[0]);
        let beat = self.pay.front().copied().filter(|_| rnd(&mut self.rng));
        d.set_s_pay_tvalid(beat.is_some());
        if let Some((data, keep, last)) = beat {
            d.set_s_pay_tdata(data);
            d.set_s_pay_tkeep(keep as _);
            d.set_s_pay_tlast(last);
            d.set_s_pay_tuser(false);
        }
        let mr_ready = rnd(&mut self.rng);
        d.set_m_mr_req_ready(mr_ready);
        let g = self.grants.front().filter(|g| g.0 <= self.cycle).copied();
        d.set_s_mr_grant_valid(g.is_some());
        if let Some((_, pa, len, last, reason)) = g {
            d.set_s_mr_grant_pa(pa);
            d.set_s_mr_grant_len(len);
            d.set_s_mr_grant_last(last);
            d.set_s_mr_grant_reason(reason as _);
        }
        let rsp_ready = rnd(&mut self.rng);
        d.set_m_rsp_ready(rsp_ready);
        let pay_ready = rnd(&mut self.rng);
        d.set_m_rsp_pay_tready(pay_ready);
        d.set_m_rcqe_ready(rnd(&mut self.rng));
        d.set_m_rq_req_ready(rnd(&mut self.rng));
        let rqr = self.rq_resp.front().filter(|r| r.0 <= self.cycle).copied();
        d.set_s_rq_resp_valid(rqr.is_some());
        if let Some((_, ok, key, va, len)) = rqr {
            d.set_s_rq_resp_ok(ok);
            d.set_s_rq_resp_key(key);
            d.set_s_rq_resp_va(va);
            d.set_s_rq_resp_len(len);
        }
        d.set_m_inv_ready(true);
        let inv = self.inv_done.front().filter(|r| r.0 <= self.cycle).copied();
        d.set_s_inv_done_valid(inv.is_some());
        d.set_s_inv_done_err(inv.is_some_and(|i| i.1));
        d.eval();
        let addr = d.get_qp_rd_addr();
        self.reads.pop_front();
        self.reads
            .push_back(self.ctx[addr as usize % self.ctx.len()]);
        self.axi.sample_write(d);
        self.axi.sample_read(d);
        // ---- Handshakes.
        if (hv && d.get_s_hdr_ready()) || (evv && d.get_s_ev_ready()) {
            if let Some(Item::Hdr(p)) = self.items.pop_front() {
                self.hdr_cycles.push(self.cycle);
                let n = p.payload.len().div_ceil(8);
                for (i, c) in p.payload.chunks(8).enumerate() {
                    let mut w = [0u8; 8];
                    w[..c.len()].copy_from_slice(c);
                    let keep = ((1u16 << c.len()) - 1) as u8;
                    self.pay
                        .push_back((u64::from_le_bytes(w), keep, i + 1 == n));
                }
            }
        }
        if beat.is_some() && d.get_s_pay_tready() {
            self.pay.pop_front();
        }
        if d.get_m_exec_error_valid() {
            self.errors.push(d.get_m_exec_error_qpn());
        }
        if d.get_m_qp_error_valid() {
            self.errors.push(d.get_m_qp_error_qpn());
        }
        if d.get_m_mr_req_valid() && mr_ready {
            let req = Request {
                key: d.get_m_mr_req_key(),
                pd: d.get_m_mr_req_pd() as u16,
                access: Access::from_bits(d.get_m_mr_req_access() as u8),
                va: d.get_m_mr_req_va(),
                len: d.get_m_mr_req_len(),
            };
            assert!(req.len > 0, "the executor asks mr_tlb nothing of length 0");
            let t = self.cycle + 2 + if stall > 0 { self.rng.below(4) } else { 0 };
            match self.mrs.translate(&req) {
                Ok(ch) => {
                    let n = ch.len();
                    for (i, c) in ch.into_iter().enumerate() {
                        self.grants.push_back((t, c.pa, c.len, i + 1 == n, 0));
                    }
                }
                Err(r) => self.grants.push_back((t, 0, 0, true, r.code())),
            }
        }
        if g.is_some() && d.get_s_mr_grant_ready() {
            self.grants.pop_front();
        }
        if d.get_m_rsp_pay_tvalid() && pay_ready {
            let k = d.get_m_rsp_pay_tkeep().count_ones() as usize;
            self.rsp_pay
                .extend_from_slice(&d.get_m_rsp_pay_tdata().to_le_bytes()[..k]);
            if d.get_m_rsp_pay_tlast() {
                let (q, mut r, n) = self.rsp_wait.pop_front().expect("a payload for a response");
                r.4 = std::mem::take(&mut self.rsp_pay);
                assert_eq!(r.4.len(), n, "READ response payload length");
                self.rsp.push((q, r));
            }
        }
        if d.get_m_rsp_valid() && rsp_ready {
            self.rsp_cycles.push(self.cycle);
            let op = d.get_m_rsp_opcode() as u8;
            let info = roce_wire::Opcode(op).info().expect("a known opcode");
            let r: Resp = (
                op,
                d.get_m_rsp_psn(),
                info.has(roce_wire::ExtKind::Aeth)
                    .then(|| (d.get_m_rsp_syndrome() as u8, d.get_m_rsp_msn())),
                info.has(roce_wire::ExtKind::AtomicAckEth)
                    .then(|| d.get_m_rsp_atomic_ack_data()),
                Vec::new(),
            );
            let n = d.get_m_rsp_payload_len() as usize;
            if n > 0 || !self.rsp_wait.is_empty() {
                self.rsp_wait.push_back((d.get_m_rsp_qpn(), r, n));
            } else {
                self.rsp.push((d.get_m_rsp_qpn(), r));
            }
        }
        // A zero-length READ response waits behind earlier payloads only.
        while self.rsp_wait.front().is_some_and(|w| w.2 == 0) {
            let (q, r, _) = self.rsp_wait.pop_front().unwrap();
            self.rsp.push((q, r));
        }
        if d.get_m_rcqe_valid() && d.get_m_rcqe_ready() {
            self.cqes.push((
                d.get_m_rcqe_qpn(),
                d.get_m_rcqe_status(),
                d.get_m_rcqe_opcode() as u8,
                d.get_m_rcqe_len(),
                d.get_m_rcqe_imm(),
            ));
        }
        if d.get_m_rq_req_valid() && d.get_m_rq_req_ready() {
            let q = d.get_m_rq_req_qpn();
            let w = if d.get_m_rq_req_pop() {
                let w = self.rq.entry(q).or_default().pop_front();
                if let Some(w) = w {
                    self.rq_cur.insert(q, w);
                }
                w
            } else {
                self.rq_cur.get(&q).copied()
            };
            let t = self.cycle + 1 + if stall > 0 { self.rng.below(6) } else { 0 };
            let (k, va, len) = w.unwrap_or_default();
            self.rq_resp.push_back((t, w.is_some(), k, va, len));
        }
        if rqr.is_some() && d.get_s_rq_resp_ready() {
            self.rq_resp.pop_front();
        }
        if d.get_m_inv_valid() {
            let e = self.mrs.invalidate(d.get_m_inv_key()).is_err();
            let t = self.cycle + 1 + if stall > 0 { self.rng.below(6) } else { 0 };
            self.inv_done.push_back((t, e));
        }
        if inv.is_some() {
            self.inv_done.pop_front();
        }
        d.tick();
        self.axi.tick();
        self.cycle += 1;
    }
}
