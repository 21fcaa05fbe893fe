//! The hardware responder — `resp_top`: `resp_chk`, `resp_exec`, `dma_wr`
//! and `dma_rd` (Verilator, 64 QPs, W = 64) — answering RC requesters of the
//! transport model (`roce_transport::Qp`), packet by packet against a twin
//! *model* responder that receives the same packets.
//!
//! Around the block the bench puts what the transport top will: the
//! context port (contexts packed from the register map by
//! `common::RefRegs`, independent of `csr.rs`), `mr_tlb`'s grants
//! (`roce_wire::mr` rules through `HostMemory::translate`, one beat per
//! page chunk or one reject beat, with random latency), the AXI4 memory
//! (`roce_sim::axi_mem`, which checks the master's side of the protocol),
//! `roce_rx`'s payload stream, the receive queue and the invalidation
//! port.
//!
//! Checked: every hardware response equals the twin model's (opcode, PSN,
//! AETH syndrome and MSN, payload bytes, ATOMIC ACK value), the responder
//! memory equals the twin's byte for byte (and nothing else is written),
//! receive completions equal the twin's, the requesters' work completes,
//! the QPs moved to Error match, `dma_wr` saw no stream error, the AXI
//! rules held, and nothing hangs. Seeds printed; `ROCE_SEED` repeats.

mod common;

use common::RefRegs;
use roce_regs::{qp, AccessFlag, QpState as RegState, QpType as RegType};
use roce_sim::axi_mem::{AxiMem, AxiMemTiming};
use roce_sim::models::RespTopSmallW64;
use roce_sim::rng::Rng;
use roce_transport::{
    Completion, Config, HostMemory, Memory, Packet, Qp, QpAttr, QpType, RecvWr, Remote, SendWr,
    Sge, WcStatus, WrOp,
};
use roce_wire::mr::{Access, Request};
use roce_wire::{Pmtu, Psn};
use std::collections::{HashMap, VecDeque};

const QPS: u32 = 64;
const PD: u16 = 0x1d;
const EV_POST_RECV: u64 = 1;
const EV_INIT: u64 = 0;

/// A response as compared: opcode, PSN, AETH (syndrome byte, MSN),
/// ATOMIC ACK value, payload.
type Resp = (u8, u32, Option<(u8, u32)>, Option<u64>, Vec<u8>);

fn model_resp(p: &Packet) -> Resp {
    (
        p.bth.opcode.0,
        p.bth.psn.value(),
        p.ext.aeth.map(|a| (a.syndrome.to_byte(), a.msn)),
        p.ext.atomic_ack_eth.map(|a| a.orig_remote_data),
        p.payload.clone(),
    )
}

fn set_ctx(regs: &mut RefRegs, q: u32, reg: &roce_regs::Register, f: &roce_regs::Field, v: u32) {
    let addr = qp::BASE + reg.element_offset(q);
    let old = regs.read(addr).unwrap();
    let m = ((1u64 << f.width) - 1) as u32;
    let new = (old & !(m << f.lsb)) | ((v & m) << f.lsb);
    regs.write(addr, new, 0xF);
}

enum Item {
    Hdr(Packet),
    Ev { kind: u64, qpn: u32, count: u32 },
}

/// The verilated responder and what the bench puts around it.
struct Hw {
    d: RespTopSmallW64,
    axi: AxiMem,
    regs: RefRegs,
    reads: VecDeque<[u32; common::CTX_WORDS]>,
    items: VecDeque<Item>,
    /// Payload beats of the headers taken, in order (roce_rx's m_axis).
    pay: VecDeque<(u64, u8, bool)>,
    /// The MR table (translation and invalidation only: the bytes live in
    /// `axi`).
    mrs: HostMemory,
    grants: VecDeque<(u64, u64, u32, bool, u8)>,
    rq: HashMap<u32, VecDeque<(u32, u64, u32)>>,
    rq_cur: HashMap<u32, (u32, u64, u32)>,
    rq_resp: VecDeque<(u64, bool, u32, u64, u32)>,
    inv_done: VecDeque<(u64, bool)>,
    /// Responses: descriptors waiting for their payload, finished ones.
    rsp_wait: VecDeque<(u32, Resp, usize)>,
    rsp_pay: Vec<u8>,
    rsp: Vec<(u32, Resp)>,
    cqes: Vec<(u32, u32, u8, u32, u32)>,
    errors: Vec<u32>,
    rng: Rng,
    cycle: u64,
    stall: u32,
}

impl Hw {
    fn new(seed: u64, mrs: HostMemory, regs: RefRegs, stall: u32) -> Hw {
        let timing = if stall > 0 {
            AxiMemTiming {
                lat_min: 1,
                lat_max: 24,
                stall_permille: stall / 2,
                gap_permille: stall / 2,
            }
        } else {
            AxiMemTiming::FAST
        };
        let mut axi = AxiMem::new(8, seed ^ 0xa, timing);
        // The responder's memory starts as the twin's.
        axi.poke(0, mrs.phys());
        let mut h = Hw {
            d: RespTopSmallW64::new(),
            axi,
            regs,
            reads: VecDeque::from([[0; common::CTX_WORDS], [0; common::CTX_WORDS]]),
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
    fn busy(&mut self) -> bool {
        self.d.eval();
        !self.items.is_empty()
            || !self.rsp_wait.is_empty()
            || !self.pay.is_empty()
            || !self.d.get_s_ev_ready()
            || !self.axi.quiet()
    }

    /// What is waiting, for a hang's message.
    fn why(&mut self) -> String {
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
    fn step(&mut self) {
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
                let e = &p.ext;
                let reth = e.reth.unwrap_or_default();
                let at = e.atomic_eth.unwrap_or_default();
                d.set_s_hdr_drop(false);
                d.set_s_hdr_opcode(p.bth.opcode.0 as _);
                d.set_s_hdr_padcnt(p.bth.pad_count as _);
                d.set_s_hdr_destqp(p.bth.dest_qp as _);
                d.set_s_hdr_ackreq(p.bth.ack_req);
                d.set_s_hdr_psn(p.bth.psn.value() as _);
                d.set_s_hdr_payload_len(p.payload.len() as _);
                d.set_s_hdr_reth_va(reth.va as _);
                d.set_s_hdr_reth_rkey(reth.rkey as _);
                d.set_s_hdr_reth_dmalen(reth.dma_len as _);
                d.set_s_hdr_immdt(e.immdt.unwrap_or(0) as _);
                d.set_s_hdr_ieth(e.ieth.unwrap_or(0) as _);
                d.set_s_hdr_atomic_va(at.va as _);
                d.set_s_hdr_atomic_rkey(at.rkey as _);
                d.set_s_hdr_atomic_swap_add(at.swap_add as _);
                d.set_s_hdr_atomic_compare(at.compare as _);
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
        self.reads.push_back(self.regs.packed_ctx(addr % QPS));
        self.axi.sample_write(d);
        self.axi.sample_read(d);
        // ---- Handshakes.
        if (hv && d.get_s_hdr_ready()) || (evv && d.get_s_ev_ready()) {
            if let Some(Item::Hdr(p)) = self.items.pop_front() {
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

/// One requester QP (model) and its twin model responder.
struct Conn {
    a: Qp,
    b: Qp,
    mem_a: HostMemory,
    /// B's remote buffer: key, VA, length.
    rkey: u32,
    rva: u64,
    rlen: u64,
    want: VecDeque<Resp>,
    pending: usize,
}

fn attrs(n: u32, mdra: u8) -> (QpAttr, QpAttr) {
    let mut a = QpAttr::new(QpType::Rc, 100 + n, n);
    let mut b = QpAttr::new(QpType::Rc, n, 100 + n);
    for x in [&mut a, &mut b] {
        x.pmtu = Pmtu::Mtu256;
        x.pd = PD;
        x.access = Access::ALL;
        x.max_rd_atomic = mdra;
        x.max_dest_rd_atomic = mdra;
    }
    let psn = (0xFF_FFF0 + n * 0x1_0001) & 0xFF_FFFF;
    a.sq_psn = Psn::new(psn);
    b.rq_psn = Psn::new(psn);
    (a, b)
}

/// Random traffic on `nq` QPs, `msgs` work requests each.
/// The faults of a run, in parts per thousand: responses lost on the way
/// back (so requests are retried and arrive as duplicates), work requests
/// with a wrong R_Key (remote access error, the QP to Error).
#[derive(Clone, Copy)]
struct Faults {
    loss: u32,
    bad_key: u32,
}

const NONE: Faults = Faults {
    loss: 0,
    bad_key: 0,
};

/// `nq` connected QP pairs (model requester, twin model responder) and
/// the responder's side of them: its memory (a remote buffer per QP filled
/// at random), contexts, and the INIT events.
fn setup(rng: &mut Rng, nq: u32, stall: u32) -> (Vec<Conn>, HostMemory, Hw) {
    // Responder memory, the hardware's and the twin's, alike.
    let mut mem_b = HostMemory::new(256, 8192);
    let mut regs = RefRegs::with_qps(QPS);
    let mut conns = Vec::new();
    let mut items = Vec::new();
    for n in 0..nq {
        let mdra = [1u8, 2, 4, 16][rng.below(4) as usize];
        let (a, b) = attrs(n, mdra);
        let rlen = 3 * 4096 + rng.below(5000);
        let (rkey, rva) = mem_b.alloc(PD, Access::ALL, rlen);
        let fill: Vec<u8> = (0..rlen).map(|_| rng.next_u32() as u8).collect();
        mem_b.poke(rkey, rva, &fill);
        for (r, f, v) in [
            (&qp::state::REG, &qp::state::STATE, RegState::Rts as u32),
            (&qp::state::REG, &qp::state::TYPE, RegType::Rc as u32),
            (&qp::path::REG, &qp::path::PMTU, b.pmtu.code() as u32),
            (
                &qp::access::REG,
                &qp::access::FLAGS,
                AccessFlag::RemoteWrite as u32
                    | AccessFlag::RemoteRead as u32
                    | AccessFlag::RemoteAtomic as u32,
            ),
            (&qp::timers::REG, &qp::timers::MIN_RNR_TIMER, 14),
            (
                &qp::rd_atomic::REG,
                &qp::rd_atomic::MAX_DEST_RD_ATOMIC,
                mdra as u32,
            ),
            (&qp::rq_psn::REG, &qp::rq_psn::PSN, b.rq_psn.value()),
            (&qp::pd::REG, &qp::pd::PD, PD as u32),
        ] {
            set_ctx(&mut regs, n, r, f, v);
        }
        items.push(Item::Ev {
            kind: EV_INIT,
            qpn: n,
            count: 0,
        });
        conns.push(Conn {
            a: Qp::connected(a, Config::default()),
            b: Qp::connected(b, Config::default()),
            mem_a: HostMemory::new(64, 4096),
            rkey,
            rva,
            rlen,
            want: VecDeque::new(),
            pending: 0,
        });
    }
    let twin = mem_b.clone();
    let mut hw = Hw::new(rng.next_u64(), mem_b, regs, stall);
    hw.items.extend(items);
    (conns, twin, hw)
}

fn run(seed: u64, nq: u32, msgs: usize, stall: u32, f: Faults) {
    let mut rng = Rng::new(seed);
    let (mut conns, mut twin, mut hw) = setup(&mut rng, nq, stall);
    // Work requests.
    let mut recv_want = Vec::new();
    for (n, c) in conns.iter_mut().enumerate() {
        let n = n as u32;
        for i in 0..msgs {
            let len = match rng.below(4) {
                0 => rng.below(16) as u32,
                1 => 256 * (1 + rng.below(3) as u32) + [0u32, 1, 255][rng.below(3) as usize],
                _ => rng.below(1100) as u32,
            };
            let off = rng.below(c.rlen - 1100 - 8) & !7;
            let remote = Remote {
                va: c.rva + off,
                rkey: if rng.chance(f.bad_key) {
                    c.rkey ^ 0x100
                } else {
                    c.rkey
                },
            };
            let verb = rng.below(7);
            let local_len = if verb >= 5 { 8 } else { len.max(1) };
            let (lk, lva) = c.mem_a.alloc(PD, Access::ALL, local_len as u64);
            let data: Vec<u8> = (0..local_len).map(|_| rng.next_u32() as u8).collect();
            c.mem_a.poke(lk, lva, &data);
            let sge = |l: u32| {
                vec![Sge {
                    addr: lva,
                    len: l,
                    lkey: lk,
                }]
            };
            let op = match verb {
                0 => WrOp::Send,
                1 => WrOp::SendImm(rng.next_u32()),
                2 => WrOp::Write(remote),
                3 => WrOp::WriteImm(remote, rng.next_u32()),
                4 => WrOp::Read(remote),
                5 => WrOp::CmpSwap {
                    remote,
                    compare: if rng.chance(500) { 0 } else { rng.next_u64() },
                    swap: rng.next_u64(),
                },
                _ => WrOp::FetchAdd {
                    remote,
                    add: rng.next_u64(),
                },
            };
            if verb <= 1 || verb == 3 {
                // A receive WQE for it, at B (twin and hardware alike).
                let wl = len + rng.below(64) as u32;
                let (k, va) = twin.alloc(PD, Access::ALL, wl.max(1) as u64);
                let (k2, va2) = hw.mrs.alloc(PD, Access::ALL, wl.max(1) as u64);
                assert_eq!((k, va), (k2, va2));
                c.b.post_recv(RecvWr {
                    wr_id: i as u64,
                    sgl: vec![Sge {
                        addr: va,
                        len: wl,
                        lkey: k,
                    }],
                })
                .unwrap();
                hw.rq.entry(n).or_default().push_back((k, va, wl));
                hw.items.push_back(Item::Ev {
                    kind: EV_POST_RECV,
                    qpn: n,
                    count: 1,
                });
                recv_want.push(n);
            }
            let l = if verb >= 5 { 8 } else { len };
            c.a.post_send(SendWr::new(i as u64, op, sge(l))).unwrap();
            c.pending += 1;
        }
    }
    // Every buffer is allocated: the responder's AXI memory starts as the
    // twin's bytes.
    let phys = hw.mrs.phys().to_vec();
    hw.axi.poke(0, &phys);
    let start_image = phys;
    // Exchange: requests to both responders, responses compared, the
    // twin's fed back.
    let mut now = 0u64;
    let mut twin_cqes: Vec<(u32, Completion)> = Vec::new();
    for round in 0.. {
        assert!(round < 100_000, "no progress");
        now += 1000;
        let mut sent = false;
        for (n, c) in conns.iter_mut().enumerate() {
            while let Some(p) = c.a.poll_transmit(now, &mut c.mem_a) {
                sent = true;
                c.b.receive(now, &p, false, &mut twin);
                hw.items.push_back(Item::Hdr(p));
                while let Some(r) = c.b.poll_transmit(now, &mut twin) {
                    c.want.push_back(model_resp(&r));
                    if !rng.chance(f.loss) {
                        c.a.receive(now, &r, false, &mut c.mem_a);
                    }
                }
                while let Some(cq) = c.b.poll_cq() {
                    twin_cqes.push((n as u32, cq));
                }
            }
        }
        // Run the hardware until it has answered everything queued.
        let (mut idle, start) = (0, hw.cycle);
        while hw.busy() || idle < 40 {
            hw.step();
            idle = if hw.busy() { 0 } else { idle + 1 };
            assert!(hw.cycle - start < 1_000_000, "hang: {}", hw.why());
        }
        for (q, r) in hw.rsp.drain(..) {
            let c = &mut conns[q as usize];
            let w = c
                .want
                .pop_front()
                .unwrap_or_else(|| panic!("QP {q}: a response the model did not send: {r:x?}"));
            if r != w && std::env::var("RX_DEBUG").is_ok() {
                let ph = twin.phys();
                let find = |m: &[u8], v: &[u8]| m.windows(v.len().max(1)).position(|x| x == v);
                eprintln!(
                    "hw payload at {:x?} in the twin now, {:x?} in the start image; model's at {:x?}; axi has the model's at {:x?}",
                    find(ph, &r.4),
                    find(&start_image, &r.4),
                    find(ph, &w.4),
                    find(&hw.axi.peek(0, ph.len()), &w.4)
                );
            }
            assert_eq!(r, w, "QP {q}: response (hardware vs model)");
        }
        for (q, c) in conns.iter().enumerate() {
            assert!(
                c.want.is_empty(),
                "QP {q}: responses missing: {:x?}",
                c.want
            );
        }
        for c in conns.iter_mut() {
            while let Some(cq) = c.a.poll_cq() {
                if f.bad_key == 0 {
                    assert_eq!(cq.status, WcStatus::Success, "requester completion {cq:?}");
                }
                c.pending -= 1;
            }
        }
        if !sent && conns.iter().all(|c| c.pending == 0) {
            break;
        }
        if !sent {
            // Quiet: the requesters' timers (lost responses) move time on.
            match conns.iter().filter_map(|c| c.a.next_deadline()).min() {
                Some(t) => now = now.max(t),
                None => panic!("work pending and nothing to wait for"),
            }
        }
    }
    // Memory, completions, errors.
    assert!(
        hw.axi.peek(0, twin.phys().len()) == twin.phys(),
        "responder memory differs from the model's"
    );
    // Receive completions: the hardware's successful ones equal the
    // twin's (a QP in Error flushes the rest in the host interface).
    let ok: Vec<_> = twin_cqes
        .iter()
        .filter(|(_, t)| t.status == WcStatus::Success)
        .collect();
    let hw_ok: Vec<_> = hw.cqes.iter().filter(|c| c.1 == 0).collect();
    assert_eq!(hw_ok.len(), ok.len(), "successful receive completions");
    for ((q, _, _op, len, imm), (tq, t)) in hw_ok.iter().zip(ok) {
        assert_eq!(*q, *tq, "completion QP");
        assert_eq!(*len, t.byte_len, "completion byte length");
        if let Some(i) = t.imm {
            assert_eq!(*imm, i, "immediate data");
        }
    }
    let mut want_err: Vec<u32> = conns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.b.state() == roce_transport::QpState::Error)
        .map(|(n, _)| n as u32)
        .collect();
    let mut got_err = hw.errors.clone();
    want_err.sort();
    got_err.sort();
    assert_eq!(got_err, want_err, "QPs the responder moved to Error");
    if f.bad_key > 0 {
        assert!(!want_err.is_empty(), "the run had a remote access error");
    }
    let _ = recv_want;
    let x = &mut hw.d;
    x.eval();
    assert_eq!(
        x.get_cnt_stream_err(),
        0,
        "dma_wr: every command matched its payload"
    );
    assert!(
        hw.axi.violations.is_empty(),
        "AXI rules: {:?}",
        hw.axi.violations
    );
    let (rr, ar, nra) = (
        x.get_cnt_read_replay(),
        x.get_cnt_atomic_replay(),
        x.get_cnt_nak_rem_access(),
    );
    println!("responder counters: read_replay {rr}, atomic_replay {ar}, nak_rem_access {nra}");
    if f.loss > 0 {
        assert!(
            rr > 0 && ar > 0,
            "lost responses made READ and atomic replays"
        );
    }
    assert_eq!(
        nra as usize,
        want_err.len(),
        "one remote access NAK per QP in Error"
    );
    println!(
        "responder: {} cycles, {} receive completions",
        hw.cycle,
        hw.cqes.len()
    );
}

#[test]
fn every_verb_against_the_model() {
    run(
        Rng::seed_from_env("every_verb_against_the_model", 0xe7ec_0001),
        4,
        60,
        0,
        NONE,
    );
}

#[test]
fn every_verb_against_the_model_with_stalls() {
    run(
        Rng::seed_from_env("every_verb_against_the_model_with_stalls", 0xe7ec_0002),
        8,
        40,
        300,
        NONE,
    );
}

#[test]
fn lost_responses_replay_reads_and_atomics() {
    run(
        Rng::seed_from_env("lost_responses_replay_reads_and_atomics", 0xe7ec_0003),
        6,
        60,
        200,
        Faults {
            loss: 150,
            bad_key: 0,
        },
    );
}

#[test]
fn bad_rkeys_nak_and_stop_the_qp() {
    run(
        Rng::seed_from_env("bad_rkeys_nak_and_stop_the_qp", 0xe7ec_0004),
        8,
        40,
        100,
        Faults {
            loss: 50,
            bad_key: 15,
        },
    );
}
