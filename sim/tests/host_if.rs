//! `host_if` (64 QPs, 64 CQs) against `roce_sim::host_rings`, at W = 64
//! and 512: the host side posts WQEs into an `AxiMem` with random latency
//! and backpressure and rings doorbells through the register port; the
//! bench plays `req_engine` (takes `m_wqe` with random backpressure,
//! returns completions on `s_scqe`) and `resp_exec` (`s_rq_req`,
//! `s_rcqe`). Every CQ ring's bytes are compared with the model's after
//! each completion, and every work request field with the posted WQE.
//! Seeds printed; `ROCE_SEED` repeats one.

use roce_regs::queue::{
    ring, Cqe, Payload, RecvWqe, SendFlag, SendWqe, Sge, WcOpcode, WcStatus, WrOpcode, CQE_SIZE,
    MAX_INLINE, MAX_SGE,
};
use roce_regs::{db, hq};
use roce_sim::axi_mem::{AxiMem, AxiMemTiming};
use roce_sim::host_if::{dut, Dut, Rcqe, RegOp, Scqe, CODES};
use roce_sim::host_rings::{
    rcqe_status, rcqe_to_cqe, req_status, rq_resp, scqe_to_cqe, send_wc_opcode, swqe_to_wr, wr_op,
    CompletionQueue, RecvQueue, RingError, SendQueue, WorkRequest,
};
use roce_sim::rng::Rng;
use std::collections::{BTreeMap, VecDeque};

const QPS: u32 = 64;
const CQS: u32 = 64;

/// The DUT, its memory and what came out of it.
struct Bench {
    dut: Box<dyn Dut>,
    mem: AxiMem,
    rng: Rng,
    cycle: u64,
    /// ‰ of cycles `m_wqe_ready` / `m_rq_resp_ready` are low.
    wqe_stall: u32,
    resp_stall: u32,
    reg: Option<RegOp>,
    scqe: Option<Scqe>,
    rcqe: Option<Rcqe>,
    rq_req: Option<(u32, bool)>,
    reg_resp: Option<(u32, bool)>,
    wqes: VecDeque<(WorkRequest, u64)>,
    rq_resps: VecDeque<(bool, u32, u64, u32)>,
    events: Vec<u32>,
    qp_errs: Vec<u32>,
    /// Receive WQEs posted, as `m_post_recv` reported them (QPN → count).
    posted: BTreeMap<u32, u32>,
    /// ‰ of cycles `m_post_recv_ready` is low.
    post_stall: u32,
    /// Cycle of the last register handshake.
    reg_cycle: u64,
}

impl Bench {
    fn new(width: usize, seed: u64, timing: AxiMemTiming) -> Bench {
        let mut dut = dut(width);
        dut.rst(true);
        dut.reg(None);
        dut.scqe(None);
        dut.rcqe(None);
        dut.rq_req(None);
        dut.eval_();
        dut.tick_();
        dut.tick_();
        dut.rst(false);
        let mut b = Bench {
            dut,
            mem: AxiMem::new(width / 8, seed ^ 0xa11, timing),
            rng: Rng::new(seed ^ 0xbe7c),
            cycle: 0,
            wqe_stall: 0,
            resp_stall: 0,
            reg: None,
            scqe: None,
            rcqe: None,
            rq_req: None,
            reg_resp: None,
            wqes: VecDeque::new(),
            rq_resps: VecDeque::new(),
            events: Vec::new(),
            qp_errs: Vec::new(),
            posted: BTreeMap::new(),
            post_stall: 0,
            reg_cycle: 0,
        };
        let mut n = 0;
        while b.dut.busy() || n < 2 {
            b.step();
            n += 1;
            assert!(n < 10_000, "busy after reset");
        }
        b
    }

    fn step(&mut self) {
        self.dut.reg(self.reg.as_ref());
        self.dut.scqe(self.scqe.as_ref());
        self.dut.rcqe(self.rcqe.as_ref());
        self.dut.rq_req(self.rq_req.as_ref());
        let wr = !self.rng.chance(self.wqe_stall);
        let rr = !self.rng.chance(self.resp_stall);
        self.dut.set_wqe_ready(wr);
        self.dut.set_rq_resp_ready(rr);
        let pr = !self.rng.chance(self.post_stall);
        self.dut.set_post_recv_ready(pr);
        self.mem.drive_write(&mut *self.dut);
        self.mem.drive_read(&mut *self.dut);
        self.dut.eval_();
        if self.reg.is_some() && self.dut.reg_ready() {
            self.reg = None;
            self.reg_cycle = self.cycle;
        }
        if self.scqe.is_some() && self.dut.scqe_ready() {
            self.scqe = None;
        }
        if self.rcqe.is_some() && self.dut.rcqe_ready() {
            self.rcqe = None;
        }
        if self.rq_req.is_some() && self.dut.rq_req_ready() {
            self.rq_req = None;
        }
        if let Some(r) = self.dut.reg_resp() {
            assert!(self.reg_resp.is_none(), "a second register response");
            self.reg_resp = Some(r);
        }
        if wr {
            if let Some(w) = self.dut.wqe() {
                self.wqes.push_back((w, self.cycle));
            }
        }
        if rr {
            if let Some(r) = self.dut.rq_resp() {
                self.rq_resps.push_back(r);
            }
        }
        if let Some(c) = self.dut.event() {
            self.events.push(c);
        }
        if let Some(q) = self.dut.qp_err() {
            self.qp_errs.push(q);
        }
        if pr {
            if let Some((q, n)) = self.dut.post_recv() {
                assert!(n > 0, "cycle {}: QP {q} posted 0 receive WQEs", self.cycle);
                *self.posted.entry(q).or_default() += n;
            }
        }
        self.mem.sample_write(&*self.dut);
        self.mem.sample_read(&*self.dut);
        self.dut.tick_();
        self.mem.tick();
        self.cycle += 1;
    }

    fn reg_op(&mut self, write: bool, addr: u32, data: u32, strb: u32) -> (u32, bool) {
        self.reg = Some(RegOp {
            write,
            addr,
            data,
            strb,
        });
        self.reg_resp = None;
        for _ in 0..20_000 {
            self.step();
            if self.reg.is_none() {
                if let Some(r) = self.reg_resp.take() {
                    return r;
                }
            }
        }
        panic!("cycle {}: no register response at {addr:#x}", self.cycle);
    }

    fn wr(&mut self, addr: u32, data: u32) {
        let (_, err) = self.reg_op(true, addr, data, 0xF);
        assert!(!err, "write {addr:#x} answered err");
    }

    fn rd(&mut self, addr: u32) -> u32 {
        let (d, err) = self.reg_op(false, addr, 0, 0);
        assert!(!err, "read {addr:#x} answered err");
        d
    }

    /// Step until `done` or panic after `max` cycles.
    fn until(&mut self, max: u64, what: &str, mut done: impl FnMut(&Bench) -> bool) {
        for _ in 0..max {
            if done(self) {
                return;
            }
            self.step();
        }
        panic!("cycle {}: timed out waiting for {what}", self.cycle);
    }

    fn set_cq(&mut self, c: u32, base: u64, log: u32) {
        self.wr(hq::cq_base_lo::addr(c), base as u32);
        self.wr(hq::cq_base_hi::addr(c), (base >> 32) as u32);
        self.wr(hq::cq_cfg::addr(c), hq::cq_cfg::LOG_SIZE.val(log));
    }

    fn set_sq(&mut self, q: u32, base: u64, log: u32, cqn: u32) {
        self.wr(hq::sq_base_lo::addr(q), base as u32);
        self.wr(hq::sq_base_hi::addr(q), (base >> 32) as u32);
        self.wr(
            hq::sq_cfg::addr(q),
            hq::sq_cfg::LOG_SIZE.val(log) | hq::sq_cfg::CQN.val(cqn),
        );
    }

    fn set_rq(&mut self, q: u32, base: u64, log: u32, cqn: u32) {
        self.wr(hq::rq_base_lo::addr(q), base as u32);
        self.wr(hq::rq_base_hi::addr(q), (base >> 32) as u32);
        self.wr(
            hq::rq_cfg::addr(q),
            hq::rq_cfg::LOG_SIZE.val(log) | hq::rq_cfg::CQN.val(cqn),
        );
    }
}

fn timing(rng: &mut Rng) -> AxiMemTiming {
    AxiMemTiming {
        lat_min: 1,
        lat_max: 1 + rng.below(30) as u32,
        stall_permille: 200,
        gap_permille: 150,
    }
}

/// The model of one CQ: the NIC-side producer (`ring.ci` = the last
/// `cq_ci` doorbell), the error bit, the arm, and the host's poller.
struct CqModel {
    cq: CompletionQueue,
    host: CompletionQueue,
    err: bool,
    armed: Option<bool>,
    /// CQEs written and not yet polled, as the host should see them.
    expect: VecDeque<Cqe>,
}

/// Everything about the CQs: DUT memory vs a model memory of the rings.
struct Cqs {
    model_mem: AxiMem,
    cqs: BTreeMap<u32, CqModel>,
    events: Vec<u32>,
}

impl Cqs {
    fn new(b: &mut Bench, list: &[(u32, u32)]) -> Cqs {
        let mut s = Cqs {
            model_mem: AxiMem::new(8, 1, AxiMemTiming::FAST),
            cqs: BTreeMap::new(),
            events: Vec::new(),
        };
        for &(c, log) in list {
            // Half the rings above 4 GiB.
            let base = ((c as u64 & 1) << 32) | (0x4000_0000 + c as u64 * 0x10_0000);
            let cq = CompletionQueue::new(base, log);
            cq.clear(&mut b.mem);
            cq.clear(&mut s.model_mem);
            b.set_cq(c, base, log);
            s.cqs.insert(
                c,
                CqModel {
                    host: cq.clone(),
                    cq,
                    err: false,
                    armed: None,
                    expect: VecDeque::new(),
                },
            );
        }
        s
    }

    /// The model's side of one completion into CQ `c`; `solicited`: an
    /// armed-for-solicited CQ fires on it.
    fn push(&mut self, c: u32, cqe: &Cqe, solicited: bool) {
        let m = self.cqs.get_mut(&c).unwrap();
        if m.err {
            return;
        }
        let pi = m.cq.ring.pi;
        match m.cq.push(&mut self.model_mem, cqe) {
            Ok(()) => {
                let mut e = *cqe;
                e.phase = roce_regs::queue::cqe::phase(pi, m.cq.ring.log_size);
                m.expect.push_back(e);
                if let Some(sol) = m.armed {
                    if !sol || solicited {
                        m.armed = None;
                        self.events.push(c);
                    }
                }
            }
            Err(RingError::Full) => m.err = true,
        }
    }

    /// Compare CQ `c`'s status register, ring bytes and events.
    fn check(&mut self, b: &mut Bench, c: u32, what: &str) {
        let st = b.rd(hq::cq_status::addr(c));
        let m = &self.cqs[&c];
        assert_eq!(
            hq::cq_status::PI.get(st),
            m.cq.ring.pi,
            "{what}: CQ {c} PI (status {st:#x})"
        );
        assert_eq!(
            hq::cq_status::ERROR.get(st) == 1,
            m.err,
            "{what}: CQ {c} ERROR"
        );
        assert_eq!(
            hq::cq_status::ARMED.get(st) == 1,
            m.armed.is_some(),
            "{what}: CQ {c} ARMED"
        );
        let n = (CQE_SIZE as usize) << m.cq.ring.log_size;
        let got = b.mem.peek(m.cq.ring.base, n);
        let want = self.model_mem.peek(m.cq.ring.base, n);
        if got != want {
            for i in 0..(1usize << m.cq.ring.log_size) {
                let r = i * CQE_SIZE as usize..(i + 1) * CQE_SIZE as usize;
                if got[r.clone()] != want[r.clone()] {
                    panic!(
                        "{what}: CQ {c} slot {i}:\n got  {:?}\n want {:?}",
                        Cqe::unpack(&got[r.clone()]),
                        Cqe::unpack(&want[r])
                    );
                }
            }
        }
        assert_eq!(b.events, self.events, "{what}: events");
    }

    /// The host polls CQ `c` (by phase, in the DUT's memory) and maybe
    /// rings `cq_ci`.
    fn poll(&mut self, b: &mut Bench, c: u32, doorbell: bool) {
        let m = self.cqs.get_mut(&c).unwrap();
        while let Some(got) = m.host.poll(&b.mem) {
            let want = m
                .expect
                .pop_front()
                .unwrap_or_else(|| panic!("CQ {c}: CQE {got:?} polled, none written"));
            assert_eq!(got, want, "CQ {c}: polled CQE");
        }
        assert!(
            m.expect.is_empty(),
            "CQ {c}: {} CQEs not visible to the host",
            m.expect.len()
        );
        if doorbell {
            m.cq.ring.ci = m.host.ring.ci;
            let ci = m.host.ring.ci;
            b.wr(db::cq_ci::addr(c), ci);
        }
    }

    /// Re-create CQ `c` (an overrun one): zero its ring, write `cq_cfg`
    /// again (the hardware restarts its indices and clears ERROR).
    fn recreate(&mut self, b: &mut Bench, c: u32) {
        let m = self.cqs.get_mut(&c).unwrap();
        let (base, log) = (m.cq.ring.base, m.cq.ring.log_size);
        let cq = CompletionQueue::new(base, log);
        cq.clear(&mut b.mem);
        cq.clear(&mut self.model_mem);
        b.wr(hq::cq_cfg::addr(c), hq::cq_cfg::LOG_SIZE.val(log));
        *m = CqModel {
            host: cq.clone(),
            cq,
            err: false,
            armed: None,
            expect: VecDeque::new(),
        };
    }

    fn arm(&mut self, b: &mut Bench, c: u32, sol: bool) {
        let m = self.cqs.get_mut(&c).unwrap();
        if m.cq.ring.pi != m.cq.ring.ci {
            m.armed = None;
            self.events.push(c);
        } else {
            m.armed = Some(sol);
        }
        b.wr(
            db::cq_arm::addr(c),
            db::cq_arm::ARM.val(1) | db::cq_arm::SOLICITED.val(sol as u32),
        );
    }
}

fn edge(rng: &mut Rng, bits: u32) -> u64 {
    let typical = rng.next_u64();
    rng.edge(bits, typical)
}

fn random_sge(rng: &mut Rng) -> Sge {
    Sge {
        addr: edge(rng, 64),
        length: edge(rng, 32) as u32,
        lkey: edge(rng, 32) as u32,
    }
}

fn random_rwqe(rng: &mut Rng, id: u64) -> RecvWqe {
    let mut w = RecvWqe {
        wr_id: if rng.chance(300) { edge(rng, 64) } else { id },
        num_sge: if rng.chance(100) {
            0
        } else {
            1 + rng.below(MAX_SGE as u64) as u8
        },
        ..Default::default()
    };
    for s in &mut w.sge {
        *s = random_sge(rng);
    }
    w
}

/// Whether ibverbs allows `IBV_SEND_INLINE` with opcode `op`: the
/// operations that carry a payload (SEND and WRITE, ± immediate or
/// invalidate).
fn inline_ok(op: u8) -> bool {
    [
        WrOpcode::Send,
        WrOpcode::SendWithImm,
        WrOpcode::SendWithInv,
        WrOpcode::RdmaWrite,
        WrOpcode::RdmaWriteWithImm,
    ]
    .iter()
    .any(|o| o.value() as u8 == op)
}

/// A send WQE: mostly good (one in five SEND/WRITEs inline), with
/// `bad_permille` unknown opcodes, several SGEs, inline data beyond
/// `MAX_INLINE` or inline READs/atomics.
fn random_swqe(rng: &mut Rng, id: u64, bad_permille: u32) -> SendWqe {
    let ops = WrOpcode::ALL;
    let mut opcode = ops[rng.below(ops.len() as u64) as usize].value() as u8;
    let mut sge = [Sge::default(); MAX_SGE as usize];
    for s in &mut sge {
        *s = random_sge(rng);
    }
    let mut data = [0u8; MAX_INLINE as usize];
    data.copy_from_slice(&rng.bytes(MAX_INLINE as usize));
    let mut payload = Payload::Sgl {
        num: rng.below(2) as u8,
        sge,
    };
    if inline_ok(opcode) && rng.chance(200) {
        payload = Payload::Inline {
            len: rng.below(MAX_INLINE as u64 + 1) as u8,
            data,
        };
    }
    if rng.chance(bad_permille) {
        match rng.below(4) {
            0 => opcode = [7, 8, 10, 11, 0x7F, 0xFF][rng.below(6) as usize],
            1 => {
                payload = Payload::Sgl {
                    num: 2 + rng.below(MAX_SGE as u64 - 1) as u8,
                    sge,
                }
            }
            2 => {
                payload = Payload::Inline {
                    len: (MAX_INLINE + 1 + rng.below(255 - MAX_INLINE as u64) as u32) as u8,
                    data,
                }
            }
            _ => {
                let no = [
                    WrOpcode::RdmaRead,
                    WrOpcode::AtomicCmpAndSwp,
                    WrOpcode::AtomicFetchAndAdd,
                ];
                opcode = no[rng.below(3) as usize].value() as u8;
                payload = Payload::Inline {
                    len: rng.below(MAX_INLINE as u64 + 1) as u8,
                    data,
                }
            }
        }
    }
    SendWqe {
        opcode,
        flags: (rng.next_u32() as u8)
            & (SendFlag::Fence.value() | SendFlag::Signaled.value() | SendFlag::Solicited.value())
                as u8,
        imm_inv: edge(rng, 32) as u32,
        wr_id: if rng.chance(300) { edge(rng, 64) } else { id },
        remote_addr: edge(rng, 64),
        rkey: edge(rng, 32) as u32,
        ud_qpn: edge(rng, 24) as u32,
        compare_add: edge(rng, 64),
        swap: edge(rng, 64),
        ud_qkey: edge(rng, 32) as u32,
        payload,
    }
}

const RECV_OPCODES: [u8; 12] = [
    0x04, 0x05, 0x02, 0x03, 0x0B, 0x09, 0x17, 0x16, 0x24, 0x25, 0x2B, 0x64,
];

/// The model's side of `RCQE_FLUSH` (or of WQEs posted to a flushing
/// ring): the WQEs taken and not completed, then those posted and not
/// taken, complete in order with a flush error. Returns how many.
fn flush_model(
    mem: &AxiMem,
    q: u32,
    rq: &mut RecvQueue,
    popped: &mut VecDeque<(u32, RecvWqe)>,
    done: &mut u32,
    cqs: &mut Cqs,
    cqn: u32,
) -> usize {
    let mut all: Vec<(u32, RecvWqe)> = popped.drain(..).collect();
    while let Some(h) = rq.head(mem) {
        rq.pop();
        all.push(h);
    }
    for (i, w) in &all {
        let c = rcqe_to_cqe(q, WcStatus::WrFlushErr, 0, 0, 0, w.wr_id, *i);
        cqs.push(cqn, &c, true);
        *done = ring::next(*done);
    }
    all.len()
}

/// Steps until QP `q`'s flush is done: its `rq_ci` (WQEs taken or
/// flushed) is the model's and CQ `c`'s PI too (the flush runs in the
/// fetcher's turns, after the operation that started it).
fn wait_flushed(b: &mut Bench, cqs: &Cqs, q: u32, ci: u32, c: u32, what: &str) {
    let want = cqs.cqs[&c].cq.ring.pi;
    for _ in 0..400 {
        if hq::cq_status::PI.get(b.rd(hq::cq_status::addr(c))) == want
            && b.rd(hq::rq_ci::addr(q)) == ci
        {
            return;
        }
        for _ in 0..50 {
            b.step();
        }
    }
    panic!("{what}: QP {q} rq_ci never reached {ci} or CQ {c} PI {want}");
}

fn receive_half(width: usize, default_seed: u64) {
    let s = Rng::seed_from_env(&format!("host_if::receive_half_w{width}"), default_seed);
    let mut rng = Rng::new(s);
    let t = timing(&mut rng);
    let mut b = Bench::new(width, s, t);
    b.resp_stall = 300;
    b.post_stall = 300;
    let cq_list = [(0, 1), (5, 2), (63, 3)];
    let mut cqs = Cqs::new(&mut b, &cq_list);
    let qps = [0u32, 1, 7, 33, 62, 63];
    let mut rqs = BTreeMap::new();
    for &q in &qps {
        let log = rng.below(4) as u32;
        let base = ((q as u64 & 2) << 31) | (0x1000_0000 + q as u64 * 0x10_0000);
        let cqn = cq_list[rng.below(cq_list.len() as u64) as usize].0;
        b.set_rq(q, base, log, cqn);
        // (queue (its consumer index: the WQEs the NIC took), CQ, held
        // WQE: (index, wqe), WQEs taken and not completed, WQEs completed:
        // a slot is the host's again only once its WQE completed, as
        // host_if reads the WQE's WR_ID again for its CQE)
        rqs.insert(
            q,
            (
                RecvQueue::new(base, log),
                cqn,
                None::<(u32, RecvWqe)>,
                VecDeque::<(u32, RecvWqe)>::new(),
                0u32,
            ),
        );
    }
    let mut id = 0u64;
    let (mut lookups, mut rnr, mut cqes_in, mut recreated) = (0, 0, 0, 0);
    let st_flush = roce_sim::param(CODES, "RCQE_FLUSH") as u32;
    // QPs whose receive queue flushes (RCQE_FLUSH sent, ring not restarted).
    let mut fl: BTreeMap<u32, bool> = BTreeMap::new();
    let (mut flushes, mut flushed, mut late, mut restarts) = (0, 0, 0, 0);
    for n in 0..4000 {
        let q = qps[rng.below(qps.len() as u64) as usize];
        let (rq, cqn, held, popped, done) = rqs.get_mut(&q).unwrap();
        let cqn = *cqn;
        let flushing = fl.get(&q).copied().unwrap_or(false);
        if !flushing && rng.chance(8) {
            // The QP goes to Error: RCQE_FLUSH.
            let c = Rcqe {
                qpn: q,
                status: st_flush,
                opcode: 0,
                len: 0,
                imm: 0,
                se: false,
            };
            flushed += flush_model(&b.mem, q, rq, popped, done, &mut cqs, cqn);
            b.rcqe = Some(c);
            b.until(5000, "flush taken", |b| b.rcqe.is_none());
            let ci = rq.ring.ci;
            wait_flushed(&mut b, &cqs, q, ci, cqn, &format!("op {n}: QP {q} flush"));
            cqs.check(&mut b, cqn, &format!("op {n}: QP {q} flush"));
            fl.insert(q, true);
            flushes += 1;
            continue;
        }
        if flushing && rng.chance(60) {
            // Modify to Reset: the driver restarts the ring (flush mark
            // off), once every doorbell was reported.
            let pi = rq.ring.pi;
            b.until(5000, "posts reported", |b| {
                b.posted.get(&q).copied().unwrap_or(0) == pi
            });
            *b.posted.get_mut(&q).unwrap() = 0;
            let (base, log) = (rq.ring.base, rq.ring.log_size);
            b.set_rq(q, base, log, cqn);
            *rq = RecvQueue::new(base, log);
            *held = None;
            popped.clear();
            *done = 0;
            fl.insert(q, false);
            restarts += 1;
            continue;
        }
        match rng.below(10) {
            // Post and ring.
            0 | 1 => {
                for _ in 0..=rng.below(4) {
                    id += 1;
                    if !ring::has_room(rq.ring.pi, *done, rq.ring.log_size)
                        || rq.post(&mut b.mem, &random_rwqe(&mut rng, id)).is_err()
                    {
                        break;
                    }
                }
                let pi = rq.ring.pi;
                b.wr(db::rq_pi::addr(q), pi);
                if flushing {
                    // Posted in Error: flushed in the fetcher's turns.
                    flushed += flush_model(&b.mem, q, rq, popped, done, &mut cqs, cqn);
                    let ci = rq.ring.ci;
                    let what = format!("op {n}: QP {q} post in Error");
                    wait_flushed(&mut b, &cqs, q, ci, cqn, &what);
                    cqs.check(&mut b, cqn, &format!("op {n}: QP {q} post in Error"));
                }
            }
            // Lookups.
            2..=4 => {
                let pop = !rng.chance(250);
                let want = if pop && flushing {
                    rnr += 1;
                    None
                } else if pop {
                    let h = rq.head(&b.mem);
                    if let Some((i, w)) = h {
                        rq.pop();
                        *held = Some((i, w));
                        popped.push_back((i, w));
                    } else {
                        rnr += 1;
                    }
                    h.map(|(_, w)| w)
                } else {
                    held.map(|(_, w)| w)
                };
                let want = rq_resp(want.as_ref());
                b.rq_req = Some((q, pop));
                b.until(5000, "rq_resp", |b| !b.rq_resps.is_empty());
                let got = b.rq_resps.pop_front().unwrap();
                lookups += 1;
                if want.0 {
                    assert_eq!(got, want, "op {n}: QP {q} lookup (pop {pop})");
                } else {
                    assert!(
                        !got.0,
                        "op {n}: QP {q} lookup (pop {pop}) answered ok: {got:?}"
                    );
                }
            }
            // A receive completion: of the oldest WQE popped and not
            // completed (the responder completes them in order; several
            // may be popped ahead, and the held one is the newest).
            5..=7 if flushing => {
                // A completion after the flush: dropped (its WQE was
                // flushed), nothing written.
                b.rcqe = Some(Rcqe {
                    qpn: q,
                    status: 0,
                    opcode: RECV_OPCODES[0] as u32,
                    len: 8,
                    imm: 0,
                    se: true,
                });
                b.until(5000, "late rcqe taken", |b| b.rcqe.is_none());
                for _ in 0..100 {
                    b.step();
                }
                cqs.check(
                    &mut b,
                    cqn,
                    &format!("op {n}: QP {q} completion after the flush"),
                );
                late += 1;
            }
            5..=7 => {
                let Some((idx, w)) = popped.pop_front() else {
                    continue;
                };
                *done = ring::next(*done);
                let c = Rcqe {
                    qpn: q,
                    status: if rng.chance(700) {
                        0
                    } else {
                        // Any status but RCQE_FLUSH (not a completion).
                        (st_flush + 1 + rng.below(7) as u32) % 8
                    },
                    opcode: RECV_OPCODES[rng.below(RECV_OPCODES.len() as u64) as usize] as u32,
                    len: edge(&mut rng, 32) as u32,
                    imm: edge(&mut rng, 32) as u32,
                    se: rng.chance(500),
                };
                let want = rcqe_to_cqe(
                    q,
                    rcqe_status(CODES, c.status as u64),
                    c.opcode as u8,
                    c.len,
                    c.imm,
                    w.wr_id,
                    idx,
                );
                // A CQ armed for solicited CQEs fires on SE or an error.
                cqs.push(cqn, &want, c.se || c.status != 0);
                b.rcqe = Some(c);
                cqes_in += 1;
                b.until(5000, "rcqe taken", |b| b.rcqe.is_none());
                cqs.check(&mut b, cqn, &format!("op {n}: rcqe {c:?}"));
            }
            // The host polls, maybe rings cq_ci, maybe arms.
            _ => {
                let c = cq_list[rng.below(cq_list.len() as u64) as usize].0;
                if cqs.cqs[&c].err && rng.chance(300) {
                    cqs.recreate(&mut b, c);
                    recreated += 1;
                }
                cqs.poll(&mut b, c, rng.chance(700));
                if rng.chance(400) {
                    cqs.arm(&mut b, c, rng.chance(500));
                }
                cqs.check(&mut b, c, &format!("op {n}: poll/arm CQ {c}"));
            }
        }
    }
    for &(c, _) in &cq_list {
        cqs.check(&mut b, c, "end");
    }
    // Every doorbell's receive WQEs reached `m_post_recv`, once.
    for (q, (rq, _, _, _, _)) in &rqs {
        assert_eq!(
            b.posted.get(q).copied().unwrap_or(0),
            rq.ring.pi,
            "QP {q}: receive WQEs reported on m_post_recv"
        );
    }
    assert!(b.mem.violations.is_empty(), "{:?}", b.mem.violations);
    let overruns = cqs.cqs.values().filter(|m| m.err).count();
    println!(
        "receive half w{width}: {lookups} lookups ({rnr} RNR), {cqes_in} completions, \
         {} events, {overruns} CQs overrun at the end, {recreated} re-created, {} cycles",
        b.events.len(),
        b.cycle
    );
    println!(
        "  {flushes} flushes ({flushed} WQEs flushed), {late} completions after one dropped, \
         {restarts} rings restarted"
    );
    assert!(
        rnr > 0
            && !b.events.is_empty()
            && overruns + recreated > 0
            && flushed > 0
            && late > 0
            && restarts > 0,
        "coverage"
    );
}

#[test]
fn receive_half_w64() {
    receive_half(64, 0x5EC0_0064);
}

#[test]
fn receive_half_w512() {
    receive_half(512, 0x5EC0_0512);
}

/// One QP's send side in the bench.
struct SqModel {
    sq: SendQueue,
    cqn: u32,
    /// Doorbell rung up to here.
    rung: u32,
    /// Posted, not yet on m_wqe: (index, WQE).
    posted: VecDeque<(u32, SendWqe)>,
    /// On m_wqe, not completed: (index, WQE, work request).
    flight: VecDeque<(u32, SendWqe, WorkRequest)>,
    /// The bad WQE the fetcher stopped at, not yet completed.
    bad: Option<(u32, SendWqe)>,
    /// The queue stopped (its bad WQE completed): nothing more is posted.
    stopped: bool,
}

struct SendBench {
    b: Bench,
    cqs: Cqs,
    sqs: BTreeMap<u32, SqModel>,
    rng: Rng,
    fetched: u32,
    /// Of them inline (`phys`).
    inline: u32,
    completed: u32,
    bad: u32,
}

impl SendBench {
    /// Check every work request that came out against the posted WQEs.
    fn check_out(&mut self) {
        while let Some((w, cyc)) = self.b.wqes.pop_front() {
            let m = self
                .sqs
                .get_mut(&w.qpn)
                .unwrap_or_else(|| panic!("cycle {cyc}: work request for QP {}", w.qpn));
            let (i, sw) = m.posted.pop_front().unwrap_or_else(|| {
                panic!("cycle {cyc}: QP {} work request {w:?} not posted", w.qpn)
            });
            assert!(
                ring::fill(m.rung, i) > 0,
                "cycle {cyc}: QP {} WQE {i} not rung",
                w.qpn
            );
            let want = swqe_to_wr(CODES, w.qpn, &sw, m.sq.ring.addr(i)).unwrap_or_else(|e| {
                panic!("cycle {cyc}: QP {} bad WQE {i} ({e:?}) came out", w.qpn)
            });
            assert_eq!(w, want, "cycle {cyc}: QP {} WQE {i}", w.qpn);
            m.flight.push_back((i, sw, w));
            self.fetched += 1;
            self.inline += u32::from(w.phys);
        }
    }

    /// A bad WQE next in line (rung, everything before it fetched): the
    /// fetcher stops there. With nothing in flight it completes at once;
    /// wait for that (its `m_qp_err` pulse) so CQE order is known.
    fn find_bad(&mut self) {
        self.check_out();
        let qs: Vec<u32> = self.sqs.keys().copied().collect();
        for q in qs {
            let m = &self.sqs[&q];
            if m.bad.is_some() || m.stopped {
                continue;
            }
            let Some(&(i, w)) = m.posted.front() else {
                continue;
            };
            if ring::fill(m.rung, i) == 0 || swqe_to_wr(CODES, q, &w, m.sq.ring.addr(i)).is_ok() {
                continue;
            }
            self.bad += 1;
            let errs = self.b.qp_errs.len();
            let m = self.sqs.get_mut(&q).unwrap();
            // What was posted after it is never fetched.
            m.posted.clear();
            m.bad = Some((i, w));
            if m.flight.is_empty() {
                self.b
                    .until(5000, "bad WQE completion", |b| b.qp_errs.len() > errs);
                assert_eq!(self.b.qp_errs[errs], q);
                self.complete_bad(q, true);
            } else {
                // Let the fetcher reach it before anything completes.
                for _ in 0..300 {
                    self.b.step();
                }
                self.check_out();
            }
        }
    }

    /// The model completes QP `q`'s bad WQE (and checks its CQ with `check`).
    fn complete_bad(&mut self, q: u32, check: bool) {
        let m = self.sqs.get_mut(&q).unwrap();
        let (i, w) = m.bad.take().unwrap();
        assert_eq!(i, m.sq.ring.ci);
        m.sq.ring.ci = ring::next(i);
        m.stopped = true;
        let op = wr_op(CODES, w.opcode).map_or(WcOpcode::Send, |o| send_wc_opcode(CODES, o));
        let cqn = m.cqn;
        self.cqs.push(
            cqn,
            &scqe_to_cqe(q, WcStatus::LocQpOpErr, op, 0, w.wr_id, i),
            true,
        );
        if check {
            self.cqs
                .check(&mut self.b, cqn, &format!("QP {q}: bad WQE {i}"));
        }
    }

    /// `req_engine` completes QP `q`'s oldest work request; false if none.
    fn complete(&mut self, q: u32, any_status: bool) -> bool {
        let rng = &mut self.rng;
        let m = self.sqs.get_mut(&q).unwrap();
        let Some((i, sw, w)) = m.flight.pop_front() else {
            return false;
        };
        let st = if !any_status || rng.chance(850) {
            0
        } else {
            1 + rng.below(15) as u32
        };
        let len = if rng.chance(500) {
            w.len
        } else {
            edge(rng, 32) as u32
        };
        let wc = req_status(CODES, st as u64);
        let signaled = sw.flags & SendFlag::Signaled.value() as u8 != 0;
        let cqn = m.cqn;
        assert_eq!(i, m.sq.ring.ci);
        m.sq.ring.ci = ring::next(i);
        let bad_next = m.flight.is_empty() && m.bad.is_some();
        if signaled || wc != WcStatus::Success {
            self.cqs.push(
                cqn,
                &scqe_to_cqe(q, wc, send_wc_opcode(CODES, w.op), len, w.wr_id, i),
                wc != WcStatus::Success,
            );
        }
        self.b.scqe = Some(Scqe {
            qpn: q,
            wr_id: w.wr_id,
            status: st,
            opcode: w.op as u32,
            len,
        });
        self.completed += 1;
        // A bad WQE right behind completes with it.
        if bad_next {
            self.complete_bad(q, false);
        }
        self.b.until(5000, "scqe taken", |b| b.scqe.is_none());
        self.cqs
            .check(&mut self.b, cqn, &format!("QP {q} completes WQE {i}"));
        true
    }
}

fn send_half(width: usize, default_seed: u64, bad_permille: u32) {
    let name = if bad_permille == 0 {
        format!("host_if::send_half_w{width}")
    } else {
        format!("host_if::send_bad_wqes_w{width}")
    };
    let s = Rng::seed_from_env(&name, default_seed);
    let mut rng = Rng::new(s);
    let t = timing(&mut rng);
    let mut b = Bench::new(width, s, t);
    b.wqe_stall = 400;
    let cq_list = [(2, 2), (9, 3), (40, 5)];
    let cqs = Cqs::new(&mut b, &cq_list);
    let qps = [0u32, 3, 17, 32, 63];
    let mut sqs = BTreeMap::new();
    for &q in &qps {
        let log = [0, 1, 2, 3, 5][rng.below(5) as usize];
        let base = ((q as u64 & 1) << 33) | (0x2000_0000 + q as u64 * 0x10_0000);
        let cqn = cq_list[rng.below(cq_list.len() as u64) as usize].0;
        b.set_sq(q, base, log, cqn);
        sqs.insert(
            q,
            SqModel {
                sq: SendQueue::new(base, log),
                cqn,
                rung: 0,
                posted: VecDeque::new(),
                flight: VecDeque::new(),
                bad: None,
                stopped: false,
            },
        );
    }
    let mut t = SendBench {
        b,
        cqs,
        sqs,
        rng,
        fetched: 0,
        inline: 0,
        completed: 0,
        bad: 0,
    };
    let mut id = 0u64;
    for n in 0..3000 {
        let q = qps[t.rng.below(qps.len() as u64) as usize];
        t.find_bad();
        match t.rng.below(10) {
            // Post, maybe ring.
            0..=2 => {
                let m = t.sqs.get_mut(&q).unwrap();
                if m.bad.is_some() {
                    continue;
                }
                if m.stopped {
                    // Re-create the stopped send queue (sq_cfg restarts it).
                    let (base, log, cqn) = (m.sq.ring.base, m.sq.ring.log_size, m.cqn);
                    m.sq = SendQueue::new(base, log);
                    m.rung = 0;
                    m.stopped = false;
                    t.b.set_sq(q, base, log, cqn);
                    continue;
                }
                for _ in 0..=t.rng.below(5) {
                    id += 1;
                    let w = random_swqe(&mut t.rng, id, bad_permille);
                    let i = m.sq.ring.pi;
                    if m.sq.post(&mut t.b.mem, &w).is_err() {
                        break;
                    }
                    m.posted.push_back((i, w));
                }
                if t.rng.chance(800) {
                    m.rung = m.sq.ring.pi;
                    let pi = m.rung;
                    t.b.wr(db::sq_pi::addr(q), pi);
                }
            }
            // Complete the oldest in flight of a QP.
            3..=6 => {
                if !t.complete(q, true) {
                    for _ in 0..t.rng.below(50) {
                        t.b.step();
                    }
                }
            }
            // Poll / ring / arm.
            _ => {
                let c = cq_list[t.rng.below(cq_list.len() as u64) as usize].0;
                if t.cqs.cqs[&c].err && t.rng.chance(300) {
                    t.cqs.recreate(&mut t.b, c);
                }
                let db = t.rng.chance(800);
                t.cqs.poll(&mut t.b, c, db);
                if t.rng.chance(300) {
                    let sol = t.rng.chance(500);
                    t.cqs.arm(&mut t.b, c, sol);
                }
                t.cqs
                    .check(&mut t.b, c, &format!("op {n}: poll/arm CQ {c}"));
            }
        }
    }
    // Drain: ring what is posted, complete everything.
    for &q in &qps {
        let m = t.sqs.get_mut(&q).unwrap();
        if !m.stopped && m.bad.is_none() && m.rung != m.sq.ring.pi {
            m.rung = m.sq.ring.pi;
            let pi = m.rung;
            t.b.wr(db::sq_pi::addr(q), pi);
        }
    }
    for _ in 0..200 {
        for _ in 0..200 {
            t.b.step();
        }
        t.find_bad();
        for &q in &qps {
            while t.complete(q, false) {}
            let c = t.sqs[&q].cqn;
            t.cqs.poll(&mut t.b, c, true);
        }
        if t.sqs
            .values()
            .all(|m| m.posted.is_empty() && m.flight.is_empty() && m.bad.is_none())
        {
            break;
        }
    }
    for (q, m) in &t.sqs {
        assert!(
            m.posted.is_empty() && m.flight.is_empty(),
            "QP {q}: {} rung WQEs never came out",
            m.posted.len()
        );
    }
    for &(c, _) in &cq_list {
        t.cqs.check(&mut t.b, c, "end");
        assert_eq!(
            t.b.rd(hq::cq_status::addr(c)) & hq::cq_status::ERROR.mask() != 0,
            t.cqs.cqs[&c].err
        );
    }
    for (&q, m) in &t.sqs {
        assert_eq!(
            hq::sq_ci::CI.get(t.b.rd(hq::sq_ci::addr(q))),
            m.sq.ring.ci,
            "QP {q} sq_ci"
        );
    }
    assert!(t.b.mem.violations.is_empty(), "{:?}", t.b.mem.violations);
    println!(
        "{name}: {} WQEs fetched, {} completed, {} bad, {} events, {} QP errors, {} cycles",
        t.fetched,
        t.completed,
        t.bad,
        t.b.events.len(),
        t.b.qp_errs.len(),
        t.b.cycle
    );
    let floor = if bad_permille == 0 { 200 } else { 50 };
    assert!(t.fetched > floor && t.completed > floor, "coverage");
    assert!(t.inline > 0, "coverage: no inline WQE");
    assert_eq!(t.b.qp_errs.len() as u32, t.bad, "one QP error per bad WQE");
    if bad_permille > 0 {
        assert!(t.bad > 0, "coverage: no bad WQE");
    }
}

#[test]
fn send_half_w64() {
    send_half(64, 0x5E0D_0064, 0);
}

#[test]
fn send_half_w512() {
    send_half(512, 0x5E0D_0512, 0);
}

#[test]
fn send_bad_wqes_w64() {
    send_half(64, 0xBAD0_0064, 20);
}

#[test]
fn send_bad_wqes_w512() {
    send_half(512, 0xBAD0_0512, 20);
}

/// Registers: read back, RO, unmapped, partial writes, identity words.
#[test]
fn registers() {
    let mut b = Bench::new(64, 1, AxiMemTiming::FAST);
    assert_eq!(b.rd(db::id::ADDR), db::BLOCK.id_word());
    assert_eq!(b.rd(hq::id::ADDR), hq::BLOCK.id_word());
    assert_eq!(b.rd(hq::caps::ADDR), hq::caps::REG.reset());
    assert_eq!(hq::cq_count::COUNT.get(b.rd(hq::cq_count::ADDR)), CQS);
    let mut rng = Rng::new(7);
    for q in [0, 1, 31, QPS - 1] {
        for r in [
            hq::sq_base_lo::addr(q),
            hq::sq_base_hi::addr(q),
            hq::rq_base_lo::addr(q),
            hq::rq_base_hi::addr(q),
        ] {
            let v = rng.next_u32();
            b.wr(r, v);
            assert_eq!(b.rd(r), v, "{r:#x}");
        }
        let v = hq::sq_cfg::LOG_SIZE.val(q % 16) | hq::sq_cfg::CQN.val(q * 3);
        b.wr(hq::sq_cfg::addr(q), v | 0xF0);
        assert_eq!(b.rd(hq::sq_cfg::addr(q)), v, "sq_cfg holds its fields only");
        b.wr(hq::rq_cfg::addr(q), v);
        assert_eq!(b.rd(hq::rq_cfg::addr(q)), v);
        // RO: ignored.
        b.wr(hq::sq_ci::addr(q), 0x1234);
        assert_eq!(b.rd(hq::sq_ci::addr(q)), 0);
        // Doorbells read back (within the ring: log = q % 16 ≥ 0 holds 1).
        b.wr(db::rq_pi::addr(q), 1);
        assert_eq!(b.rd(db::rq_pi::addr(q)), 1);
    }
    for c in [0, 5, CQS - 1] {
        b.wr(hq::cq_base_lo::addr(c), 0xDEAD_BEE0);
        b.wr(hq::cq_base_hi::addr(c), c);
        b.wr(hq::cq_cfg::addr(c), hq::cq_cfg::LOG_SIZE.val(c % 16));
        assert_eq!(b.rd(hq::cq_base_lo::addr(c)), 0xDEAD_BEE0);
        assert_eq!(b.rd(hq::cq_base_hi::addr(c)), c);
        assert_eq!(b.rd(hq::cq_cfg::addr(c)), hq::cq_cfg::LOG_SIZE.val(c % 16));
        b.wr(db::cq_ci::addr(c), 0);
        assert_eq!(b.rd(db::cq_ci::addr(c)), 0);
        assert_eq!(b.rd(hq::cq_status::addr(c)), 0);
        b.wr(
            db::cq_arm::addr(c),
            db::cq_arm::ARM.val(1) | db::cq_arm::SOLICITED.val(1),
        );
        assert_eq!(
            b.rd(hq::cq_status::addr(c)),
            hq::cq_status::ARMED.val(1) | hq::cq_status::SOLICITED.val(1)
        );
        assert_eq!(b.rd(db::cq_arm::addr(c)), 0, "cq_arm is write-only");
    }
    assert!(b.events.is_empty());
    // Unmapped: beyond the build's QPs and CQs, between arrays, misaligned.
    for a in [
        hq::sq_base_lo::addr(QPS),
        db::sq_pi::addr(QPS),
        hq::cq_base_lo::addr(CQS),
        db::cq_ci::addr(CQS),
        db::BASE + 4,
        hq::BASE + 0x100,
        hq::sq_base_lo::addr(3) + 2,
    ] {
        assert!(b.reg_op(false, a, 0, 0).1, "read {a:#x} should be unmapped");
        assert!(
            b.reg_op(true, a, 0, 0xF).1,
            "write {a:#x} should be unmapped"
        );
    }
    // A partial write changes nothing and answers err.
    b.wr(hq::sq_base_lo::addr(4), 0x1111_1111);
    assert!(b.reg_op(true, hq::sq_base_lo::addr(4), 0x2222_2222, 0x3).1);
    assert_eq!(b.rd(hq::sq_base_lo::addr(4)), 0x1111_1111);
    assert!(b.qp_errs.is_empty() && b.wqes.is_empty() && b.mem.ars == 0);
}

/// Doorbells beyond the ring: the QP's error, no fetch; RQ lookups RNR.
#[test]
fn bad_doorbells() {
    let mut b = Bench::new(64, 2, AxiMemTiming::FAST);
    let mut rng = Rng::new(3);
    b.set_cq(1, 0x9000_0000, 4);
    b.set_sq(5, 0x1000_0000, 2, 1);
    b.set_rq(5, 0x2000_0000, 2, 1);
    let mut sq = SendQueue::new(0x1000_0000, 2);
    for i in 0..4 {
        sq.post(&mut b.mem, &random_swqe(&mut rng, i, 0)).unwrap();
    }
    b.wr(db::sq_pi::addr(5), 5);
    b.wr(db::rq_pi::addr(5), 6);
    for _ in 0..200 {
        b.step();
    }
    assert_eq!(b.qp_errs, vec![5, 5], "one error per bad doorbell");
    assert!(b.posted.is_empty(), "a bad doorbell posts nothing");
    assert_eq!(b.mem.ars, 0, "no fetch");
    assert!(b.wqes.is_empty());
    b.rq_req = Some((5, true));
    b.until(1000, "rq_resp", |b| !b.rq_resps.is_empty());
    assert!(!b.rq_resps[0].0, "a failed RQ answers not ok");
    assert_eq!(b.mem.ars, 0);
    // A full ring is not beyond it: QP 6 gets all four.
    b.set_sq(6, 0x1100_0000, 2, 1);
    let mut sq = SendQueue::new(0x1100_0000, 2);
    let mut want = Vec::new();
    for i in 0..4 {
        let w = random_swqe(&mut rng, 100 + i, 0);
        let slot = sq.ring.addr(sq.ring.pi);
        sq.post(&mut b.mem, &w).unwrap();
        want.push(swqe_to_wr(CODES, 6, &w, slot).unwrap());
    }
    b.wr(db::sq_pi::addr(6), 4);
    b.until(2000, "four WQEs", |b| b.wqes.len() == 4);
    let got: Vec<WorkRequest> = b.wqes.iter().map(|w| w.0).collect();
    assert_eq!(got, want);
    assert_eq!(b.qp_errs, vec![5, 5]);
    // A producer index "behind" the consumer is far beyond the ring.
    b.set_sq(7, 0x1200_0000, 1, 1);
    b.wr(db::sq_pi::addr(7), 0xFFFF);
    for _ in 0..100 {
        b.step();
    }
    assert_eq!(b.qp_errs, vec![5, 5, 7]);
    assert_eq!(b.wqes.len(), 4);
}

/// Doorbell to the first `m_wqe_valid`, memory answering at once.
#[test]
fn doorbell_latency() {
    for width in [64, 512] {
        let mut b = Bench::new(width, 4, AxiMemTiming::FAST);
        let mut rng = Rng::new(5);
        b.set_cq(0, 0x9000_0000, 4);
        b.set_sq(3, 0x1000_0000, 3, 0);
        let mut sq = SendQueue::new(0x1000_0000, 3);
        let w = random_swqe(&mut rng, 1, 0);
        sq.post(&mut b.mem, &w).unwrap();
        b.wr(db::sq_pi::addr(3), 1);
        let rung = b.reg_cycle;
        b.until(1000, "m_wqe", |b| !b.wqes.is_empty());
        let lat = b.wqes[0].1 - rung;
        println!(
            "host_if w{width}: doorbell write handshake to m_wqe_valid: {lat} cycles \
             (memory latency 1, always ready)"
        );
        assert_eq!(
            b.wqes[0].0,
            swqe_to_wr(CODES, 3, &w, sq.ring.addr(0)).unwrap()
        );
        assert!(lat <= if width == 64 { 30 } else { 22 }, "latency {lat}");
    }
}

/// An unknown opcode behind good WQEs: they come out, it completes with
/// loc-qp-op-err in its turn, and nothing after it is fetched.
#[test]
fn bad_wqe_completes_in_order() {
    let mut b = Bench::new(64, 6, AxiMemTiming::FAST);
    let mut rng = Rng::new(8);
    b.set_cq(4, 0x9000_0000, 3);
    let mut cqs_model = CompletionQueue::new(0x9000_0000, 3);
    let mut model_mem = AxiMem::new(8, 1, AxiMemTiming::FAST);
    cqs_model.clear(&mut model_mem);
    CompletionQueue::new(0x9000_0000, 3).clear(&mut b.mem);
    b.set_sq(9, 0x1000_0000, 3, 4);
    let mut sq = SendQueue::new(0x1000_0000, 3);
    let mut ws = Vec::new();
    for i in 0..4 {
        let mut w = random_swqe(&mut rng, i, 0);
        w.flags = SendFlag::Signaled.value() as u8;
        if i == 2 {
            w.opcode = 7; // LOCAL_INV: not supported.
        }
        sq.post(&mut b.mem, &w).unwrap();
        ws.push(w);
    }
    b.wr(db::sq_pi::addr(9), 4);
    b.until(2000, "two WQEs", |b| b.wqes.len() == 2);
    for _ in 0..300 {
        b.step();
    }
    assert_eq!(b.wqes.len(), 2, "nothing past the bad WQE");
    assert!(b.qp_errs.is_empty(), "the bad WQE waits for its turn");
    for i in 0..2u32 {
        let w = b.wqes[i as usize].0;
        b.scqe = Some(Scqe {
            qpn: 9,
            wr_id: w.wr_id,
            status: 0,
            opcode: w.op as u32,
            len: w.len,
        });
        b.until(1000, "scqe", |b| b.scqe.is_none());
        cqs_model
            .push(
                &mut model_mem,
                &scqe_to_cqe(
                    9,
                    WcStatus::Success,
                    send_wc_opcode(CODES, w.op),
                    w.len,
                    w.wr_id,
                    i,
                ),
            )
            .unwrap();
    }
    cqs_model
        .push(
            &mut model_mem,
            &scqe_to_cqe(9, WcStatus::LocQpOpErr, WcOpcode::Send, 0, ws[2].wr_id, 2),
        )
        .unwrap();
    assert_eq!(b.rd(hq::sq_ci::addr(9)), 3, "the bad WQE is consumed");
    assert_eq!(b.qp_errs, vec![9]);
    assert_eq!(
        b.mem.peek(0x9000_0000, 256),
        model_mem.peek(0x9000_0000, 256)
    );
    for _ in 0..300 {
        b.step();
    }
    assert_eq!(b.wqes.len(), 2);
}

/// An AXI error (SLVERR) on a WQE read: the send WQE completes with
/// loc-access-err and its queue stops; the receive lookup answers not ok.
#[test]
fn axi_errors_on_wqe_reads() {
    for width in [64, 512] {
        let mut b = Bench::new(width, 9, AxiMemTiming::FAST);
        let mut rng = Rng::new(10);
        let mut model_mem = AxiMem::new(8, 1, AxiMemTiming::FAST);
        let mut cq = CompletionQueue::new(0x9000_0000, 3);
        cq.clear(&mut model_mem);
        cq.clear(&mut b.mem);
        b.set_cq(1, 0x9000_0000, 3);
        b.set_sq(2, 0x1000_0000, 2, 1);
        b.set_rq(3, 0x2000_0000, 2, 1);
        let mut sq = SendQueue::new(0x1000_0000, 2);
        let mut w = random_swqe(&mut rng, 1, 0);
        w.flags = SendFlag::Signaled.value() as u8;
        sq.post(&mut b.mem, &w).unwrap();
        b.mem.poison_page(0x1000_0000);
        b.wr(db::sq_pi::addr(2), 1);
        b.until(1000, "QP error", |b| !b.qp_errs.is_empty());
        assert_eq!(b.qp_errs, vec![2]);
        assert!(b.wqes.is_empty(), "w{width}: a failed fetch is not sent");
        let op = wr_op(CODES, w.opcode).unwrap();
        cq.push(
            &mut model_mem,
            &scqe_to_cqe(
                2,
                WcStatus::LocAccessErr,
                send_wc_opcode(CODES, op),
                0,
                w.wr_id,
                0,
            ),
        )
        .unwrap();
        assert_eq!(b.rd(hq::sq_ci::addr(2)), 1);
        assert_eq!(
            b.mem.peek(0x9000_0000, 256),
            model_mem.peek(0x9000_0000, 256),
            "w{width}: the error CQE"
        );
        let mut rq = RecvQueue::new(0x2000_0000, 2);
        let mut rw = random_rwqe(&mut rng, 2);
        rw.num_sge = 1;
        rq.post(&mut b.mem, &rw).unwrap();
        b.mem.poison_page(0x2000_0000);
        b.wr(db::rq_pi::addr(3), 1);
        b.rq_req = Some((3, true));
        b.until(1000, "rq_resp", |b| !b.rq_resps.is_empty());
        assert!(
            !b.rq_resps[0].0,
            "w{width}: a failed RWQE read answers not ok"
        );
    }
}
