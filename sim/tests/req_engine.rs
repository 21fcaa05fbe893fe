//! The hardware requester and completer — `req_engine` (Verilator, 64
//! QPs) with the real `qp_timers` (128 entries) — against the transport
//! model's responder (`roce_transport::Qp`, one per QP), packet by packet,
//! over a link that can drop, duplicate and reorder in both directions.
//!
//! Around the block the bench models what the transport top will put
//! there: the context port (contexts packed from the register map by
//! `common::RefRegs`, latency 2), `mr_tlb`'s grants (`roce_wire::mr` rules
//! through `HostMemory::translate`, one beat per page chunk or one reject
//! beat), `dma_rd` (reads local memory by physical address, one W = 64
//! stream packet per `last` command), `tx_arb` (descriptor + payload →
//! `Packet`), and `dma_wr` (READ response payloads and atomic results into
//! local memory, every command consuming exactly its packet's bytes).
//!
//! Checked against a *twin*: the same work run between a model requester
//! and a model responder over a lossless link. Every hardware send
//! completion equals the twin's (QP, order, wr_id, status, opcode, byte
//! count), the requester's local memory (READ results, atomic originals)
//! equals the twin requester's byte for byte, the remote memory equals the
//! twin responder's, nothing hangs. Seeds printed; `ROCE_SEED` repeats.

mod common;

use common::RefRegs;
use roce_regs::{qp, QpState as RegState, QpType as RegType};
use roce_sim::models::{QpTimersW128, ReqEngineSmallW64};
use roce_sim::rng::Rng;
use roce_transport::{
    Config, HostMemory, Memory, Packet, Qp, QpAttr, QpType, RecvWr, Remote, SendWr, Sge, WcOpcode,
    WcStatus, WrOp,
};
use roce_wire::mr::{Access, Request};
use roce_wire::opcode::ExtKind;
use roce_wire::{
    AtomicEthRepr, BthRepr, ExtHeaders, LocalAckTimeout, Opcode, Pmtu, Psn, RethRepr, RnrTimer,
};
use std::collections::{HashMap, VecDeque};

// `roce_hw::req_engine`'s port codes (roce-hw is a build dependency only).
const EV_INIT: u64 = 0;
const OP_SEND: u64 = 0;
const OP_SEND_IMM: u64 = 1;
const OP_SEND_INV: u64 = 2;
const OP_WRITE: u64 = 3;
const OP_WRITE_IMM: u64 = 4;
const OP_READ: u64 = 5;
const OP_CMP_SWAP: u64 = 6;
const OP_FETCH_ADD: u64 = 7;
const ST_SUCCESS: u64 = 0;
const ST_FLUSH: u64 = 3;
const ST_REM_ACCESS: u64 = 5;

const QPS: u32 = 64;
const PD: u16 = 0x1d;
const REMOTE: u32 = 100;

fn set_ctx(regs: &mut RefRegs, q: u32, reg: &roce_regs::Register, f: &roce_regs::Field, v: u32) {
    let addr = qp::BASE + reg.element_offset(q);
    let old = regs.read(addr).unwrap();
    let m = ((1u64 << f.width) - 1) as u32;
    let new = (old & !(m << f.lsb)) | ((v & m) << f.lsb);
    regs.write(addr, new, 0xF);
}

/// Link faults in parts per thousand, each direction.
#[derive(Clone, Copy)]
struct Faults {
    drop: u32,
    dup: u32,
    reorder: u32,
}

const LOSSLESS: Faults = Faults {
    drop: 0,
    dup: 0,
    reorder: 0,
};

/// A one-way link: packets with their delivery cycle.
struct Link {
    q: VecDeque<(u64, Packet)>,
    f: Faults,
    lat: u64,
    dropped: u64,
}

impl Link {
    fn send(&mut self, rng: &mut Rng, now: u64, p: Packet) {
        if rng.chance(self.f.drop) {
            self.dropped += 1;
            return;
        }
        let t = now + self.lat + rng.below(8);
        let t = t.max(self.q.back().map_or(0, |b| b.0));
        if rng.chance(self.f.dup) {
            self.q.push_back((t, p.clone()));
        }
        if rng.chance(self.f.reorder) && !self.q.is_empty() {
            let n = self.q.len();
            self.q.insert(n - 1, (t, p));
        } else {
            self.q.push_back((t, p));
        }
    }

    fn take(&mut self, now: u64) -> Option<Packet> {
        if self.q.front().is_some_and(|f| f.0 <= now) {
            self.q.pop_front().map(|x| x.1)
        } else {
            None
        }
    }
}

/// A send completion as compared: wr_id, status, opcode (OP_*), byte count.
type Cqe = (u64, u64, u64, u32);

struct Setup {
    nq: u32,
    msgs: usize,
    faults: Faults,
    timeout: u8,
    /// Receive WQEs released to the model responders one per this many
    /// cycles per QP (0: all posted at the start).
    recv_every: u64,
    /// Work requests with a wrong R_Key, per thousand.
    bad_key: u32,
    stall: u32,
    pmtu: Pmtu,
    /// Only this verb (0..=7 as OP_*) and length (throughput runs).
    only: Option<(u64, u32)>,
}

/// What a run measured.
struct Stats {
    cycles: u64,
    packets: u64,
}

fn wc_op(op: u64) -> WcOpcode {
    match op {
        OP_SEND | OP_SEND_IMM | OP_SEND_INV => WcOpcode::Send,
        OP_WRITE | OP_WRITE_IMM => WcOpcode::RdmaWrite,
        OP_READ => WcOpcode::RdmaRead,
        OP_CMP_SWAP => WcOpcode::CompSwap,
        _ => WcOpcode::FetchAdd,
    }
}

fn st_code(s: WcStatus) -> u64 {
    match s {
        WcStatus::Success => ST_SUCCESS,
        WcStatus::LocLenErr => 1,
        WcStatus::LocProtErr => 2,
        WcStatus::WrFlushErr => ST_FLUSH,
        WcStatus::RemInvReqErr => 4,
        WcStatus::RemAccessErr => ST_REM_ACCESS,
        WcStatus::RemOpErr => 6,
        WcStatus::RetryExcErr => 7,
        WcStatus::RnrRetryExcErr => 8,
        WcStatus::LocQpOpErr => 15,
    }
}

/// One posted work request, as the hardware port takes it.
#[derive(Clone)]
struct Wqe {
    qpn: u32,
    op: u64,
    wr: SendWr,
    /// Sent as `host_if` sends inline data: SGE 0's physical address with
    /// `s_wqe_phys` (and an lkey no MR has, so a `mr_tlb` lookup fails).
    phys: Option<u64>,
}

fn attrs(n: u32, s: &Setup, mra: u8) -> (QpAttr, QpAttr) {
    let mut a = QpAttr::new(QpType::Rc, n, REMOTE + n);
    let mut b = QpAttr::new(QpType::Rc, REMOTE + n, n);
    for x in [&mut a, &mut b] {
        x.pmtu = s.pmtu;
        x.pd = PD;
        x.access = Access::ALL;
        x.max_rd_atomic = mra;
        x.max_dest_rd_atomic = 16;
        x.timeout = LocalAckTimeout::new(s.timeout).unwrap();
        x.retry_cnt = 7;
        x.rnr_retry = 7;
        x.min_rnr_timer = RnrTimer(1);
    }
    // PSNs around the 2^24 wrap.
    let psn = (0xFF_FF80 + n * 0x2_0003) & 0xFF_FFFF;
    a.sq_psn = Psn::new(psn);
    b.rq_psn = Psn::new(psn);
    (a, b)
}

fn run(seed: u64, s: Setup) -> Stats {
    let mut rng = Rng::new(seed);
    let mut local = HostMemory::new(1024, 16384);
    let mut remote = HostMemory::new(1024, 16384);
    let mut regs = RefRegs::with_qps(QPS);
    let mut a_twin = Vec::new();
    let mut b_twin = Vec::new();
    let mut b_hw = Vec::new();
    let mut regions = Vec::new();
    for n in 0..s.nq {
        let mra = [1u8, 2, 4, 16][rng.below(4) as usize];
        let (a, b) = attrs(n, &s, mra);
        let rlen = 8 * 4096 + rng.below(5000);
        let (rkey, rva) = remote.alloc(PD, Access::ALL, rlen);
        let fill: Vec<u8> = (0..rlen).map(|_| rng.next_u32() as u8).collect();
        remote.poke(rkey, rva, &fill);
        regions.push((rkey, rva, rlen));
        for (r, f, v) in [
            (&qp::state::REG, &qp::state::STATE, RegState::Rts as u32),
            (&qp::state::REG, &qp::state::TYPE, RegType::Rc as u32),
            (&qp::path::REG, &qp::path::PMTU, a.pmtu.code() as u32),
            (&qp::timers::REG, &qp::timers::TIMEOUT, s.timeout as u32),
            (&qp::timers::REG, &qp::timers::RETRY_CNT, a.retry_cnt as u32),
            (&qp::timers::REG, &qp::timers::RNR_RETRY, a.rnr_retry as u32),
            (
                &qp::rd_atomic::REG,
                &qp::rd_atomic::MAX_RD_ATOMIC,
                mra as u32,
            ),
            (&qp::sq_psn::REG, &qp::sq_psn::PSN, a.sq_psn.value()),
            (&qp::pd::REG, &qp::pd::PD, PD as u32),
        ] {
            set_ctx(&mut regs, n, r, f, v);
        }
        a_twin.push(Qp::connected(a, Config::default()));
        b_twin.push(Qp::connected(b, Config::default()));
        b_hw.push(Qp::connected(b, Config::default()));
    }
    // Work: every verb, lengths at the PMTU edges.
    let pm = s.pmtu.bytes();
    let mut wqes: Vec<Wqe> = Vec::new();
    let mut recvs: Vec<VecDeque<RecvWr>> = vec![VecDeque::new(); s.nq as usize];
    for i in 0..s.msgs {
        for n in 0..s.nq {
            let (rkey, rva, rlen) = regions[n as usize];
            let len = match rng.below(5) {
                0 => rng.below(16) as u32,
                1 => (pm * (1 + rng.below(3) as u32))
                    .wrapping_add([0u32, 1, u32::MAX][rng.below(3) as usize]),
                2 => pm * (4 + rng.below(8) as u32) + rng.below(3) as u32,
                _ => rng.below(1100) as u32,
            };
            // On a faulty link a retried READ may be replayed by the
            // responder after later WRITEs of the same QP ran (IBTA allows
            // it; a fence orders them): READs then read a part of the region
            // no WRITE or atomic touches, so the result is the twin's.
            let mut verb = rng.below(8);
            let mut len = len;
            if let Some((v, l)) = s.only {
                (verb, len) = (v, l);
            }
            let faulty = s.faults.drop + s.faults.dup + s.faults.reorder > 0;
            let off = if faulty && verb == 5 {
                4 * 4096 + (rng.below(rlen - 4 * 4096 - 3 * 4096 - 8) & !7)
            } else if faulty {
                rng.below(4096 - 8) & !7
            } else {
                rng.below(rlen - 3 * 4096 - 8) & !7
            };
            let remote_r = Remote {
                va: rva + off,
                rkey: if rng.chance(s.bad_key) {
                    rkey ^ 0x100
                } else {
                    rkey
                },
            };
            let l = if verb >= 6 { 8 } else { len };
            let (lk, lva) = local.alloc(PD, Access::ALL, l.max(1) as u64);
            let data: Vec<u8> = (0..l.max(1)).map(|_| rng.next_u32() as u8).collect();
            local.poke(lk, lva, &data);
            let (op, wop) = match verb {
                0 => (OP_SEND, WrOp::Send),
                1 => (OP_SEND_IMM, WrOp::SendImm(rng.next_u32())),
                2 => (
                    OP_SEND_INV,
                    WrOp::SendInv(0x5555_0000 | rng.below(100) as u32),
                ),
                3 => (OP_WRITE, WrOp::Write(remote_r)),
                4 => (OP_WRITE_IMM, WrOp::WriteImm(remote_r, rng.next_u32())),
                5 => (OP_READ, WrOp::Read(remote_r)),
                6 => (
                    OP_CMP_SWAP,
                    WrOp::CmpSwap {
                        remote: remote_r,
                        compare: if rng.chance(500) { 0 } else { rng.next_u64() },
                        swap: rng.next_u64(),
                    },
                ),
                _ => (
                    OP_FETCH_ADD,
                    WrOp::FetchAdd {
                        remote: remote_r,
                        add: rng.next_u64(),
                    },
                ),
            };
            let mut wr = SendWr::new(
                (n as u64) << 32 | i as u64,
                wop,
                vec![Sge {
                    addr: lva,
                    len: l,
                    lkey: lk,
                }],
            );
            wr.solicited = rng.chance(300);
            if matches!(op, OP_SEND | OP_SEND_IMM | OP_SEND_INV | OP_WRITE_IMM) {
                let wl = len + rng.below(64) as u32;
                let (k, va) = remote.alloc(PD, Access::ALL, wl.max(1) as u64);
                recvs[n as usize].push_back(RecvWr {
                    wr_id: i as u64,
                    sgl: vec![Sge {
                        addr: va,
                        len: wl,
                        lkey: k,
                    }],
                });
            }
            // Half the SEND/WRITEs of inline size go as inline data does.
            let mut phys = None;
            if verb < 5 && (1..=64).contains(&l) && rng.chance(500) {
                let req = Request {
                    key: lk,
                    pd: PD,
                    access: Access::from_bits(0),
                    va: lva,
                    len: l,
                };
                if let Ok([c]) = local.translate(&req).as_deref() {
                    phys = Some(c.pa);
                }
            }
            wqes.push(Wqe {
                qpn: n,
                op,
                wr,
                phys,
            });
        }
    }
    // SEND with invalidate invalidates nothing registered (keys 0x5555_00xx
    // are never allocated): the responder's rule is then its own business;
    // the model NAKs it — keep only invalidates of a real key instead.
    for w in wqes.iter_mut() {
        if let WrOp::SendInv(_) = w.wr.op {
            let (k, _) = remote.alloc(PD, Access::ALL, 64);
            w.wr.op = WrOp::SendInv(k);
        }
    }
    let n_phys = wqes.iter().filter(|w| w.phys.is_some()).count();
    println!("{n_phys} of {} WQEs sent as inline data (phys)", wqes.len());
    if s.only.is_none() && wqes.len() >= 100 {
        assert!(n_phys > 0, "coverage: no phys WQE");
    }
    let mut twin_local = local.clone();
    let mut twin_remote = remote.clone();
    // ---- The twin, lossless.
    for w in &wqes {
        a_twin[w.qpn as usize].post_send(w.wr.clone()).unwrap();
    }
    for (n, r) in recvs.iter().enumerate() {
        for x in r {
            b_twin[n].post_recv(x.clone()).unwrap();
        }
    }
    let mut twin_cqes: Vec<Vec<Cqe>> = vec![Vec::new(); s.nq as usize];
    let op_of: HashMap<u64, u64> = wqes.iter().map(|w| (w.wr.wr_id, w.op)).collect();
    for n in 0..s.nq as usize {
        let mut now = 0;
        loop {
            now += 1000;
            let mut moved = false;
            while let Some(p) = a_twin[n].poll_transmit(now, &mut twin_local) {
                moved = true;
                b_twin[n].receive(now, &p, false, &mut twin_remote);
                while let Some(r) = b_twin[n].poll_transmit(now, &mut twin_remote) {
                    a_twin[n].receive(now, &r, false, &mut twin_local);
                }
            }
            while let Some(c) = a_twin[n].poll_cq() {
                assert_eq!(wc_op(op_of[&c.wr_id]), c.opcode);
                twin_cqes[n].push((c.wr_id, st_code(c.status), op_of[&c.wr_id], c.byte_len));
            }
            if !moved {
                match a_twin[n].next_deadline() {
                    Some(t) if a_twin[n].sq_len() > 0 => now = now.max(t),
                    _ => break,
                }
            }
        }
        assert_eq!(a_twin[n].sq_len(), 0, "twin QP {n} finished");
    }
    // ---- The hardware.
    if s.recv_every == 0 {
        for (n, r) in recvs.iter_mut().enumerate() {
            for x in r.drain(..) {
                b_hw[n].post_recv(x).unwrap();
            }
        }
    }
    let mut hw = ReqEngineSmallW64::new();
    let mut tm = QpTimersW128::new();
    for d in [true, false] {
        hw.set_reset(d);
        tm.set_reset(d);
        for _ in 0..3 {
            hw.eval();
            tm.eval();
            hw.tick();
            tm.tick();
        }
    }
    let mut evs: VecDeque<u32> = (0..s.nq).collect();
    let mut post: VecDeque<Wqe> = VecDeque::new();
    // Post round by round so QPs interleave on the port.
    post.extend(wqes.iter().cloned());
    let mut reads: VecDeque<[u32; common::CTX_WORDS]> =
        VecDeque::from([[0; common::CTX_WORDS], [0; common::CTX_WORDS]]);
    let mut grants: VecDeque<(u64, u64, u32, bool, u8)> = VecDeque::new();
    let mut rd_pkt: Vec<u8> = Vec::new();
    let mut rd_beats: VecDeque<(u64, u8, bool)> = VecDeque::new();
    let mut descs: VecDeque<Packet> = VecDeque::new();
    let mut tx_pay: Vec<u8> = Vec::new();
    let mut tx_pays: VecDeque<Vec<u8>> = VecDeque::new();
    let mut to_b = Link {
        q: VecDeque::new(),
        f: s.faults,
        lat: 30,
        dropped: 0,
    };
    let mut to_a = Link {
        q: VecDeque::new(),
        f: s.faults,
        lat: 30,
        dropped: 0,
    };
    let mut rsp_in: VecDeque<Packet> = VecDeque::new();
    let mut wr_pays: VecDeque<Vec<u8>> = VecDeque::new();
    let mut wr_at = 0usize;
    let mut wr_done: VecDeque<u64> = VecDeque::new();
    let mut cqes: Vec<Vec<Cqe>> = vec![Vec::new(); s.nq as usize];
    let want_total: usize = twin_cqes.iter().map(|c| c.len()).sum();
    let mut got_total = 0usize;
    let mut cycle = 0u64;
    let mut sent_pkts = 0u64;
    let mut last_progress = 0u64;
    let stall = s.stall;
    // After the last completion the bench runs on for a while: what is in
    // flight drains, and nothing more may be sent or completed.
    let mut quiet_until = u64::MAX;
    let mut done_cycle = 0;
    while got_total < want_total || cycle < quiet_until {
        if got_total == want_total && quiet_until == u64::MAX {
            quiet_until = cycle + 20_000;
            done_cycle = cycle;
        }
        assert!(
            cycle - last_progress < 2_000_000,
            "hang at cycle {cycle}: {got_total} of {want_total} completions, posts left {} \
             (front for QP {:?}), per QP {:?} of {:?}, links {} / {}",
            post.len(),
            post.front().map(|w| w.qpn),
            cqes.iter().map(|c| c.len()).collect::<Vec<_>>(),
            twin_cqes.iter().map(|c| c.len()).collect::<Vec<_>>(),
            to_b.q.len(),
            to_a.q.len()
        );
        // Receive WQEs trickle into the model responders.
        if s.recv_every > 0 && cycle % s.recv_every == 0 {
            for (n, r) in recvs.iter_mut().enumerate() {
                if let Some(x) = r.pop_front() {
                    b_hw[n].post_recv(x).unwrap();
                }
            }
        }
        // The links: requests to the model responders, their responses back.
        while let Some(p) = to_b.take(cycle) {
            let n = (p.bth.dest_qp - REMOTE) as usize;
            b_hw[n].receive(cycle, &p, false, &mut remote);
            while let Some(r) = b_hw[n].poll_transmit(cycle, &mut remote) {
                to_a.send(&mut rng, cycle, r);
            }
            while b_hw[n].poll_cq().is_some() {}
        }
        while let Some(r) = to_a.take(cycle) {
            rsp_in.push_back(r);
        }
        hw.eval();
        let rnd = |rng: &mut Rng| stall == 0 || !rng.chance(stall);
        // Events, work requests, responses.
        let ev = evs.front().copied();
        hw.set_s_ev_valid(ev.is_some());
        hw.set_s_ev_kind(EV_INIT as _);
        hw.set_s_ev_qpn(ev.unwrap_or(0));
        let wq = if evs.is_empty() { post.front() } else { None };
        hw.set_s_wqe_valid(wq.is_some());
        if let Some(w) = wq {
            let sge = w.wr.sgl[0];
            let (rva, rkey, imm, swap, compare) = match w.wr.op {
                WrOp::Send => (0, 0, 0, 0, 0),
                WrOp::SendImm(i) | WrOp::SendInv(i) => (0, 0, i, 0, 0),
                WrOp::Write(r) | WrOp::Read(r) => (r.va, r.rkey, 0, 0, 0),
                WrOp::WriteImm(r, i) => (r.va, r.rkey, i, 0, 0),
                WrOp::CmpSwap {
                    remote,
                    compare,
                    swap,
                } => (remote.va, remote.rkey, 0, swap, compare),
                WrOp::FetchAdd { remote, add } => (remote.va, remote.rkey, 0, add, 0),
            };
            hw.set_s_wqe_qpn(w.qpn);
            hw.set_s_wqe_op(w.op as _);
            hw.set_s_wqe_signaled(true);
            hw.set_s_wqe_solicited(w.wr.solicited);
            hw.set_s_wqe_fence(false);
            hw.set_s_wqe_wr_id(w.wr.wr_id);
            hw.set_s_wqe_lkey(if w.phys.is_some() {
                !sge.lkey
            } else {
                sge.lkey
            });
            hw.set_s_wqe_lva(w.phys.unwrap_or(sge.addr));
            hw.set_s_wqe_phys(w.phys.is_some());
            hw.set_s_wqe_len(sge.len);
            hw.set_s_wqe_rva(rva);
            hw.set_s_wqe_rkey(rkey);
            hw.set_s_wqe_imm(imm);
            hw.set_s_wqe_swap(swap);
            hw.set_s_wqe_compare(compare);
        }
        let rsp = rsp_in.front().cloned();
        hw.set_s_rsp_valid(rsp.is_some());
        if let Some(p) = &rsp {
            hw.set_s_rsp_destqp(p.bth.dest_qp);
            hw.set_s_rsp_opcode(p.bth.opcode.0 as _);
            hw.set_s_rsp_psn(p.bth.psn.value());
            hw.set_s_rsp_payload_len(p.payload.len() as _);
            hw.set_s_rsp_aeth_syndrome(p.ext.aeth.map_or(0, |a| a.syndrome.to_byte()) as _);
            hw.set_s_rsp_aeth_msn(p.ext.aeth.map_or(0, |a| a.msn));
            hw.set_s_rsp_atomicack_orig(p.ext.atomic_ack_eth.map_or(0, |a| a.orig_remote_data));
        }
        // Context port.
        hw.set_qp_rd_data(&reads[0]);
        // Timers.
        tm.set_s_arm_valid(hw.get_m_arm_valid());
        tm.set_s_arm_entry(hw.get_m_arm_entry() as _);
        tm.set_s_arm_delay(hw.get_m_arm_delay());
        tm.set_s_arm_disarm(hw.get_m_arm_disarm());
        tm.eval();
        hw.set_m_arm_ready(tm.get_s_arm_ready());
        hw.set_s_exp_valid(tm.get_m_exp_valid());
        hw.set_s_exp_entry(tm.get_m_exp_entry() as _);
        hw.set_s_now(tm.get_now());
        // mr_tlb, dma_rd, tx_arb, dma_wr, completions.
        let mr_ready = rnd(&mut rng);
        hw.set_m_mr_req_ready(mr_ready);
        let g = grants.front().filter(|g| g.0 <= cycle).copied();
        hw.set_s_mr_grant_valid(g.is_some());
        if let Some((_, pa, len, last, reason)) = g {
            hw.set_s_mr_grant_pa(pa);
            hw.set_s_mr_grant_len(len);
            hw.set_s_mr_grant_last(last);
            hw.set_s_mr_grant_reason(reason as _);
        }
        let rd_ready = rnd(&mut rng);
        hw.set_m_rd_cmd_ready(rd_ready);
        let beat = rd_beats.front().copied().filter(|_| rnd(&mut rng));
        hw.set_s_rd_tvalid(beat.is_some());
        if let Some((d, k, l)) = beat {
            hw.set_s_rd_tdata(d);
            hw.set_s_rd_tkeep(k as _);
            hw.set_s_rd_tlast(l);
            hw.set_s_rd_tuser(false);
        }
        let req_ready = rnd(&mut rng);
        hw.set_m_req_ready(req_ready);
        let pay_ready = rnd(&mut rng);
        hw.set_m_req_pay_tready(pay_ready);
        let wr_ready = rnd(&mut rng);
        hw.set_m_wr_cmd_ready(wr_ready);
        let done = wr_done.front().is_some_and(|&t| t <= cycle);
        hw.set_s_wr_done_valid(done);
        hw.set_s_wr_done_err(false);
        let cq_ready = rnd(&mut rng);
        hw.set_m_scqe_ready(cq_ready);
        hw.set_m_err_ready(true);
        hw.eval();
        // The block's s_exp_ready follows s_exp_valid (its Idle arbiter).
        tm.set_m_exp_ready(hw.get_s_exp_ready());
        tm.eval();
        // ---- Handshakes.
        let addr = hw.get_qp_rd_addr();
        reads.pop_front();
        reads.push_back(regs.packed_ctx(addr % QPS));
        if ev.is_some() && hw.get_s_ev_ready() {
            evs.pop_front();
        }
        if wq.is_some() && hw.get_s_wqe_ready() {
            post.pop_front();
            last_progress = cycle;
        }
        if rsp.is_some() && hw.get_s_rsp_ready() {
            let p = rsp_in.pop_front().unwrap();
            if !p.payload.is_empty() {
                wr_pays.push_back(p.payload);
            }
        }
        if hw.get_m_mr_req_valid() && mr_ready {
            let req = Request {
                key: hw.get_m_mr_req_key(),
                pd: hw.get_m_mr_req_pd() as u16,
                access: Access::from_bits(hw.get_m_mr_req_access() as u8),
                va: hw.get_m_mr_req_va(),
                len: hw.get_m_mr_req_len(),
            };
            assert!(req.len > 0, "no mr_tlb request of length 0");
            let t = cycle + 2 + if stall > 0 { rng.below(4) } else { 0 };
            match local.translate(&req) {
                Ok(ch) => {
                    let n = ch.len();
                    for (i, c) in ch.into_iter().enumerate() {
                        grants.push_back((t, c.pa, c.len, i + 1 == n, 0));
                    }
                }
                Err(r) => grants.push_back((t, 0, 0, true, r.code())),
            }
        }
        if g.is_some() && hw.get_s_mr_grant_ready() {
            grants.pop_front();
        }
        if hw.get_m_rd_cmd_valid() && rd_ready {
            let (pa, len) = (
                hw.get_m_rd_cmd_addr() as usize,
                hw.get_m_rd_cmd_len() as usize,
            );
            rd_pkt.extend_from_slice(&local.phys()[pa..pa + len]);
            if hw.get_m_rd_cmd_last() {
                let n = rd_pkt.len();
                for (i, c) in rd_pkt.chunks(8).enumerate() {
                    let mut b = [0u8; 8];
                    b[..c.len()].copy_from_slice(c);
                    let keep = ((1u16 << c.len()) - 1) as u8;
                    rd_beats.push_back((u64::from_le_bytes(b), keep, (i + 1) * 8 >= n));
                }
                rd_pkt.clear();
            }
        }
        if beat.is_some() && hw.get_s_rd_tready() {
            rd_beats.pop_front();
        }
        if hw.get_m_req_pay_tvalid() && pay_ready {
            let k = hw.get_m_req_pay_tkeep().count_ones() as usize;
            tx_pay.extend_from_slice(&hw.get_m_req_pay_tdata().to_le_bytes()[..k]);
            if hw.get_m_req_pay_tlast() {
                tx_pays.push_back(std::mem::take(&mut tx_pay));
            }
        }
        if hw.get_m_req_valid() && req_ready {
            let op = Opcode(hw.get_m_req_opcode() as u8);
            let info = op.info().expect("a known opcode");
            let n = hw.get_m_req_qpn();
            let mut ext = ExtHeaders::default();
            if info.has(ExtKind::Reth) {
                ext.reth = Some(RethRepr {
                    va: hw.get_m_req_reth_va(),
                    rkey: hw.get_m_req_reth_rkey(),
                    dma_len: hw.get_m_req_reth_dmalen(),
                });
            }
            if info.has(ExtKind::ImmDt) {
                ext.immdt = Some(hw.get_m_req_immdt());
            }
            if info.has(ExtKind::Ieth) {
                ext.ieth = Some(hw.get_m_req_ieth());
            }
            if info.has(ExtKind::AtomicEth) {
                ext.atomic_eth = Some(AtomicEthRepr {
                    va: hw.get_m_req_atomic_va(),
                    rkey: hw.get_m_req_atomic_rkey(),
                    swap_add: hw.get_m_req_atomic_swap_add(),
                    compare: hw.get_m_req_atomic_compare(),
                });
            }
            let plen = hw.get_m_req_payload_len() as usize;
            assert!(plen == 0 || info.has_payload(), "payload on {op:?}");
            descs.push_back(Packet {
                bth: BthRepr {
                    opcode: op,
                    solicited: hw.get_m_req_se(),
                    mig_req: false,
                    pad_count: roce_wire::pmtu::pad_count(plen),
                    tver: roce_wire::bth::TVER,
                    pkey: roce_wire::bth::DEFAULT_PKEY,
                    fecn: false,
                    becn: false,
                    dest_qp: REMOTE + n,
                    ack_req: hw.get_m_req_ack_req(),
                    psn: Psn::new(hw.get_m_req_psn()),
                },
                ext,
                payload: vec![0; plen],
            });
        }
        // Descriptors leave with their payloads, in order.
        while let Some(d) = descs.front() {
            if d.payload.is_empty() {
                let d = descs.pop_front().unwrap();
                sent_pkts += 1;
                to_b.send(&mut rng, cycle, d);
            } else if let Some(p) = tx_pays.pop_front() {
                let mut d = descs.pop_front().unwrap();
                assert_eq!(p.len(), d.payload.len(), "payload length of {:?}", d.bth);
                d.payload = p;
                sent_pkts += 1;
                to_b.send(&mut rng, cycle, d);
            } else {
                break;
            }
        }
        if hw.get_m_wr_cmd_valid() && wr_ready {
            let (a, len) = (
                hw.get_m_wr_cmd_addr() as usize,
                hw.get_m_wr_cmd_len() as usize,
            );
            if hw.get_m_wr_cmd_imm() {
                assert!(len <= 8);
                let d = hw.get_m_wr_cmd_data().to_le_bytes();
                local.write_pa(a as u64, &d[..len]);
            } else {
                let p = wr_pays.front().expect("a dma_wr command without a payload");
                assert!(wr_at + len <= p.len(), "dma_wr command past its packet");
                if !hw.get_m_wr_cmd_discard() {
                    let bytes = p[wr_at..wr_at + len].to_vec();
                    local.write_pa(a as u64, &bytes);
                }
                wr_at += len;
                if hw.get_m_wr_cmd_last() {
                    assert_eq!(wr_at, p.len(), "the packet's last command ends it");
                    wr_pays.pop_front();
                    wr_at = 0;
                }
            }
            let t = cycle + 4 + if stall > 0 { rng.below(6) } else { 0 };
            wr_done.push_back(t.max(wr_done.back().copied().unwrap_or(0)));
        }
        if done {
            wr_done.pop_front();
        }
        if hw.get_m_scqe_valid() && cq_ready {
            let n = hw.get_m_scqe_qpn() as usize;
            cqes[n].push((
                hw.get_m_scqe_wr_id(),
                hw.get_m_scqe_status() as u64,
                hw.get_m_scqe_opcode() as u64,
                hw.get_m_scqe_byte_len(),
            ));
            got_total += 1;
            last_progress = cycle;
        }
        if std::env::var("REQ_DEBUG").is_ok() {
            if hw.get_m_arm_valid() && tm.get_s_arm_ready() {
                eprintln!(
                    "{cycle}: arm entry {} delay {} now {}",
                    hw.get_m_arm_entry(),
                    hw.get_m_arm_delay(),
                    tm.get_now()
                );
            }
            if tm.get_m_exp_valid() && hw.get_s_exp_ready() {
                eprintln!(
                    "{cycle}: exp entry {} now {}",
                    tm.get_m_exp_entry(),
                    tm.get_now()
                );
            }
            if let Some(p) = rsp.as_ref().filter(|_| hw.get_s_rsp_ready()) {
                eprintln!(
                    "{cycle}: rsp qp {} op {:?} psn {:#x} aeth {:?}",
                    p.bth.dest_qp,
                    p.bth.opcode,
                    p.bth.psn.value(),
                    p.ext.aeth
                );
            }
            if hw.get_m_req_valid() && req_ready {
                eprintln!(
                    "{cycle}: req qp {} op {:#x} psn {:#x}",
                    hw.get_m_req_qpn(),
                    hw.get_m_req_opcode(),
                    hw.get_m_req_psn()
                );
            }
        }
        hw.tick();
        tm.tick();
        cycle += 1;
    }
    // ---- Compare.
    assert_eq!(got_total, want_total, "no completion beyond the twin's");
    assert!(
        descs.is_empty() && tx_pays.is_empty(),
        "every descriptor left with its payload"
    );
    for n in 0..s.nq as usize {
        assert_eq!(cqes[n].len(), twin_cqes[n].len(), "QP {n}: completions");
        for (i, (h, t)) in cqes[n].iter().zip(&twin_cqes[n]).enumerate() {
            assert_eq!(
                h, t,
                "QP {n}: completion {i} (hardware vs twin) {h:x?} {t:x?}"
            );
        }
    }
    assert!(
        local.phys() == twin_local.phys(),
        "local memory (READ results, atomic originals) differs from the twin's"
    );
    assert!(
        remote.phys() == twin_remote.phys(),
        "remote memory differs from the twin's"
    );
    hw.eval();
    let c = [
        ("req_sent", hw.get_cnt_req_sent()),
        ("req_retx", hw.get_cnt_req_retx()),
        ("retry_seq_nak", hw.get_cnt_retry_seq_nak()),
        ("retry_implied", hw.get_cnt_retry_implied()),
        ("retry_timeout", hw.get_cnt_retry_timeout()),
        ("retry_rnr", hw.get_cnt_retry_rnr()),
        ("retry_ignored", hw.get_cnt_retry_ignored()),
        ("rnr_nak", hw.get_cnt_rnr_nak()),
        ("nak_err", hw.get_cnt_nak_err()),
        ("drop_stale", hw.get_cnt_drop_stale()),
        ("drop_unexpected", hw.get_cnt_drop_unexpected()),
        ("drop_out_of_order", hw.get_cnt_drop_out_of_order()),
        ("drop_qp_state", hw.get_cnt_drop_qp_state()),
    ];
    println!(
        "req_engine: {done_cycle} cycles to the last of {want_total} completions, {sent_pkts} packets sent, links dropped {}/{}",
        to_b.dropped, to_a.dropped
    );
    println!("counters: {c:?}");
    let get = |name: &str| c.iter().find(|x| x.0 == name).unwrap().1;
    assert_eq!(
        (get("req_sent") + get("req_retx")) as u64,
        sent_pkts,
        "every descriptor counted once"
    );
    if s.faults.drop == 0 && s.faults.reorder == 0 && s.faults.dup == 0 && s.recv_every == 0 {
        assert_eq!(get("req_retx"), 0, "no retransmission on a lossless link");
    }
    if s.faults.drop > 0 {
        assert!(get("req_retx") > 0, "losses were retransmitted");
        assert!(get("retry_timeout") + get("retry_seq_nak") + get("retry_implied") > 0);
    }
    if s.recv_every > 0 {
        assert!(
            get("rnr_nak") > 0 && get("retry_rnr") > 0,
            "RNR NAKs waited out"
        );
    }
    if s.bad_key > 0 {
        let all: Vec<&Cqe> = twin_cqes.iter().flatten().collect();
        assert!(
            all.iter().any(|c| c.1 == ST_REM_ACCESS) && all.iter().any(|c| c.1 == ST_FLUSH),
            "the run had remote access errors and flushed work"
        );
        assert!(get("nak_err") > 0);
    }
    Stats {
        cycles: done_cycle,
        packets: sent_pkts,
    }
}

#[test]
fn every_verb_lossless() {
    run(
        Rng::seed_from_env("every_verb_lossless", 0x7e9_0001),
        Setup {
            nq: 4,
            msgs: 40,
            faults: LOSSLESS,
            timeout: 14,
            recv_every: 0,
            bad_key: 0,
            stall: 0,
            pmtu: Pmtu::Mtu256,
            only: None,
        },
    );
}

#[test]
fn every_verb_lossless_with_stalls_pmtu_1024() {
    run(
        Rng::seed_from_env("every_verb_lossless_with_stalls_pmtu_1024", 0x7e9_0002),
        Setup {
            nq: 6,
            msgs: 25,
            faults: LOSSLESS,
            timeout: 14,
            recv_every: 0,
            bad_key: 0,
            stall: 300,
            pmtu: Pmtu::Mtu1024,
            only: None,
        },
    );
}

#[test]
fn faulty_link_retransmits() {
    run(
        Rng::seed_from_env("faulty_link_retransmits", 0x7e9_0003),
        Setup {
            nq: 6,
            msgs: 40,
            faults: Faults {
                drop: 20,
                dup: 20,
                reorder: 20,
            },
            timeout: 6,
            recv_every: 0,
            bad_key: 0,
            stall: 100,
            pmtu: Pmtu::Mtu256,
            only: None,
        },
    );
}

#[test]
fn rnr_naks_wait_and_retry() {
    run(
        Rng::seed_from_env("rnr_naks_wait_and_retry", 0x7e9_0004),
        Setup {
            nq: 4,
            msgs: 30,
            faults: LOSSLESS,
            timeout: 8,
            recv_every: 1500,
            bad_key: 0,
            stall: 0,
            pmtu: Pmtu::Mtu256,
            only: None,
        },
    );
}

#[test]
fn bad_rkey_fails_and_flushes() {
    run(
        Rng::seed_from_env("bad_rkey_fails_and_flushes", 0x7e9_0005),
        Setup {
            nq: 6,
            msgs: 30,
            faults: LOSSLESS,
            timeout: 14,
            recv_every: 0,
            bad_key: 40,
            stall: 100,
            pmtu: Pmtu::Mtu512,
            only: None,
        },
    );
}

/// Cycles per request packet, 8 QPs, no stalls, lossless (link latency 30
/// cycles each way): header-bound (0-byte SENDs) and payload-bound (WRITEs
/// of 16 PMTU-256 packets, 32 beats each at W = 64).
#[test]
fn throughput() {
    for (what, op, len, bound) in [
        ("0-byte SEND", OP_SEND, 0u32, 60.0),
        ("4096-byte WRITE, PMTU 256", OP_WRITE, 4096, 60.0),
    ] {
        let st = run(
            Rng::seed_from_env("throughput", 0x7e9_0006),
            Setup {
                nq: 8,
                msgs: 40,
                faults: LOSSLESS,
                timeout: 14,
                recv_every: 0,
                bad_key: 0,
                stall: 0,
                pmtu: Pmtu::Mtu256,
                only: Some((op, len)),
            },
        );
        let cpp = st.cycles as f64 / st.packets as f64;
        println!(
            "throughput: {what}: {} packets in {} cycles, {cpp:.2} cycles/packet",
            st.packets, st.cycles
        );
        assert!(cpp < bound, "{what}: {cpp:.2} cycles per packet");
    }
}
