//! `axi_arb` (two AXI4 masters onto one, no IDs) in Verilator at W = 64
//! and 512, its master port served by `roce_sim::axi_mem::AxiMem` (random
//! latency and backpressure; it checks the AXI rules on the port). Rust
//! masters issue random read and write bursts (random lengths, addresses,
//! gaps, W before AW, BREADY/RREADY backpressure): every R beat must reach
//! the master that asked, with the bytes and response of its burst, in
//! order; every B likewise; the memory must end as a reference built from
//! each master's writes in order. A 3:1 cascade (an arbiter on `s0` of
//! another, as the NIC top joins responder, requester and host_if) runs
//! the same checks, and the throughput tests measure R and W beats per
//! cycle with both masters streaming back-to-back bursts. Seeds printed;
//! `ROCE_SEED` repeats one.

use roce_sim::axi_mem::{AxReq, AxiMem, AxiMemTiming, AxiReadPort, AxiWritePort, RBeat, WBeat};
use roce_sim::axis::{bytes_from_u64, bytes_from_words, le_u64, le_words};
use roce_sim::model::Model;
use roce_sim::models::{AxiArbW512, AxiArbW64};
use roce_sim::rng::Rng;
use std::collections::{HashMap, VecDeque};

/// What a master drives into a slave port (or the arbiter drives out of
/// its master port).
#[derive(Clone, Debug, Default)]
struct MIn {
    aw: Option<AxReq>,
    w: Option<WBeat>,
    bready: bool,
    ar: Option<AxReq>,
    rready: bool,
}

/// What a slave port drives back to its master.
#[derive(Clone, Debug, Default)]
struct SOut {
    awready: bool,
    wready: bool,
    b: Option<u8>,
    arready: bool,
    r: Option<RBeat>,
}

trait ArbDut: Model {
    fn set_rst(&mut self, v: bool);
    /// Drive slave port `i` (`s0_axi_*`, `s1_axi_*`).
    fn set_s(&mut self, i: usize, m: &MIn);
    fn get_s(&self, i: usize) -> SOut;
    /// The master port's outputs and inputs.
    fn get_m(&self) -> MIn;
    fn set_m(&mut self, s: &SOut);
}

macro_rules! put {
    (narrow, $d:expr, $f:ident, $b:expr) => {
        $d.$f(le_u64($b))
    };
    (wide, $d:expr, $f:ident, $b:expr) => {
        $d.$f(&le_words::<16>($b))
    };
}

macro_rules! take {
    (narrow, $v:expr, $n:expr) => {
        bytes_from_u64($v, $n)
    };
    (wide, $v:expr, $n:expr) => {
        bytes_from_words(&$v, $n)
    };
}

/// Drive a master's request side into port `$p` of `$d` (`$p` = s0, s1)
/// or, for `$p` = m, the responses.
macro_rules! set_req {
    ($kind:tt, $strb:ty, $lanes:expr, $d:expr, $p:ident, $m:expr) => {
        paste::paste! {{
            let m: &MIn = $m;
            let z = AxReq { addr: 0, len: 0, size: 0, burst: 0 };
            let aw = m.aw.clone().unwrap_or(z.clone());
            $d.[<set_ $p _axi_awvalid>](m.aw.is_some());
            $d.[<set_ $p _axi_awaddr>](aw.addr);
            $d.[<set_ $p _axi_awlen>](aw.len as u32);
            $d.[<set_ $p _axi_awsize>](aw.size as u32);
            $d.[<set_ $p _axi_awburst>](aw.burst as u32);
            $d.[<set_ $p _axi_wvalid>](m.w.is_some());
            if let Some(w) = &m.w {
                put!($kind, $d, [<set_ $p _axi_wdata>], &w.data);
                $d.[<set_ $p _axi_wstrb>](w.strb as $strb);
                $d.[<set_ $p _axi_wlast>](w.last);
            }
            $d.[<set_ $p _axi_bready>](m.bready);
            let ar = m.ar.clone().unwrap_or(z);
            $d.[<set_ $p _axi_arvalid>](m.ar.is_some());
            $d.[<set_ $p _axi_araddr>](ar.addr);
            $d.[<set_ $p _axi_arlen>](ar.len as u32);
            $d.[<set_ $p _axi_arsize>](ar.size as u32);
            $d.[<set_ $p _axi_arburst>](ar.burst as u32);
            $d.[<set_ $p _axi_rready>](m.rready);
        }}
    };
}

macro_rules! get_resp {
    ($kind:tt, $lanes:expr, $d:expr, $p:ident) => {
        paste::paste! {
            SOut {
                awready: $d.[<get_ $p _axi_awready>](),
                wready: $d.[<get_ $p _axi_wready>](),
                b: $d.[<get_ $p _axi_bvalid>]().then(|| $d.[<get_ $p _axi_bresp>]() as u8),
                arready: $d.[<get_ $p _axi_arready>](),
                r: $d.[<get_ $p _axi_rvalid>]().then(|| RBeat {
                    data: take!($kind, $d.[<get_ $p _axi_rdata>](), $lanes),
                    resp: $d.[<get_ $p _axi_rresp>]() as u8,
                    last: $d.[<get_ $p _axi_rlast>](),
                }),
            }
        }
    };
}

macro_rules! arb_dut {
    ($t:ty, $kind:tt, $strb:ty, $lanes:expr) => {
        impl ArbDut for $t {
            fn set_rst(&mut self, v: bool) {
                self.set_reset(v)
            }
            fn set_s(&mut self, i: usize, m: &MIn) {
                if i == 0 {
                    set_req!($kind, $strb, $lanes, self, s0, m)
                } else {
                    set_req!($kind, $strb, $lanes, self, s1, m)
                }
            }
            fn get_s(&self, i: usize) -> SOut {
                if i == 0 {
                    get_resp!($kind, $lanes, self, s0)
                } else {
                    get_resp!($kind, $lanes, self, s1)
                }
            }
            fn get_m(&self) -> MIn {
                MIn {
                    aw: self.get_m_axi_awvalid().then(|| AxReq {
                        addr: self.get_m_axi_awaddr(),
                        len: self.get_m_axi_awlen() as u8,
                        size: self.get_m_axi_awsize() as u8,
                        burst: self.get_m_axi_awburst() as u8,
                    }),
                    w: self.get_m_axi_wvalid().then(|| WBeat {
                        data: take!($kind, self.get_m_axi_wdata(), $lanes),
                        strb: self.get_m_axi_wstrb() as u64,
                        last: self.get_m_axi_wlast(),
                    }),
                    bready: self.get_m_axi_bready(),
                    ar: self.get_m_axi_arvalid().then(|| AxReq {
                        addr: self.get_m_axi_araddr(),
                        len: self.get_m_axi_arlen() as u8,
                        size: self.get_m_axi_arsize() as u8,
                        burst: self.get_m_axi_arburst() as u8,
                    }),
                    rready: self.get_m_axi_rready(),
                }
            }
            fn set_m(&mut self, s: &SOut) {
                self.set_m_axi_awready(s.awready);
                self.set_m_axi_wready(s.wready);
                self.set_m_axi_bvalid(s.b.is_some());
                self.set_m_axi_bresp(s.b.unwrap_or(0) as u32);
                self.set_m_axi_arready(s.arready);
                self.set_m_axi_rvalid(s.r.is_some());
                if let Some(r) = &s.r {
                    put!($kind, self, set_m_axi_rdata, &r.data);
                    self.set_m_axi_rresp(r.resp as u32);
                    self.set_m_axi_rlast(r.last);
                }
            }
        }
    };
}

arb_dut!(AxiArbW64, narrow, u32, 8);
arb_dut!(AxiArbW512, wide, u64, 64);

fn dut(width: usize) -> Box<dyn ArbDut> {
    match width {
        64 => Box::new(AxiArbW64::new()),
        512 => Box::new(AxiArbW512::new()),
        w => panic!("no axi_arb model at width {w}"),
    }
}

/// The memory's side of the last arbiter's master port.
struct Wire {
    lanes: usize,
    min: MIn,
    sout: SOut,
}

impl AxiWritePort for Wire {
    fn lanes(&self) -> usize {
        self.lanes
    }
    fn aw(&self) -> Option<AxReq> {
        self.min.aw.clone()
    }
    fn set_aw_ready(&mut self, ready: bool) {
        self.sout.awready = ready
    }
    fn w(&self) -> Option<WBeat> {
        self.min.w.clone()
    }
    fn set_w_ready(&mut self, ready: bool) {
        self.sout.wready = ready
    }
    fn set_b(&mut self, resp: Option<u8>) {
        self.sout.b = resp
    }
    fn b_ready(&self) -> bool {
        self.min.bready
    }
}

impl AxiReadPort for Wire {
    fn lanes(&self) -> usize {
        self.lanes
    }
    fn ar(&self) -> Option<AxReq> {
        self.min.ar.clone()
    }
    fn set_ar_ready(&mut self, ready: bool) {
        self.sout.arready = ready
    }
    fn set_r(&mut self, beat: Option<&RBeat>) {
        self.sout.r = beat.cloned()
    }
    fn r_ready(&self) -> bool {
        self.min.rready
    }
}

/// Reads come from this region (never written: its bytes are the memory's
/// background), writes go to one region per master.
const RD_BASE: u64 = 0x0000_0001_0000_0000;
const WR_BASE: u64 = 0x0000_0002_0000_0000;
const REGION: u64 = 1 << 18;

/// Master pacing (‰ per cycle).
#[derive(Clone, Copy, Debug)]
struct Pace {
    /// A request channel with work idles.
    gap: u32,
    /// BREADY / RREADY low.
    stall: u32,
    /// A write's AW is held back 1..=24 cycles after its W may start.
    w_first: u32,
}

const RANDOM: Pace = Pace {
    gap: 300,
    stall: 300,
    w_first: 250,
};
const FULL: Pace = Pace {
    gap: 0,
    stall: 0,
    w_first: 0,
};

/// A Rust AXI4 master: queued bursts, checks of everything it gets back.
struct Master {
    name: String,
    lanes: usize,
    rng: Rng,
    pace: Pace,
    min: MIn,
    // Write side: AWs (with cycles to hold each back), W beats (burst
    // index, beat).
    aw_q: VecDeque<(AxReq, u32)>,
    w_q: VecDeque<(usize, WBeat)>,
    aws: usize,
    w_bursts: usize,
    /// Expected BRESP per burst, in order.
    b_exp: VecDeque<u8>,
    bs: usize,
    b_held: Option<u8>,
    // Read side.
    ar_q: VecDeque<AxReq>,
    /// Bursts whose AR was taken: (request, beats received, expected resp).
    r_exp: VecDeque<(AxReq, u32, u8)>,
    r_beats: u64,
    r_held: Option<RBeat>,
    /// Expected bytes per R beat (from the memory at issue time).
    r_data: VecDeque<Vec<u8>>,
    /// Bursts queued so far (for the write side's burst index).
    wr_bursts_queued: usize,
    /// Cycles a W beat was offered before its burst's AW was granted.
    w_early: u64,
}

impl Master {
    fn new(name: &str, lanes: usize, seed: u64, pace: Pace) -> Master {
        Master {
            name: name.to_string(),
            lanes,
            rng: Rng::new(seed),
            pace,
            min: MIn::default(),
            aw_q: VecDeque::new(),
            w_q: VecDeque::new(),
            aws: 0,
            w_bursts: 0,
            b_exp: VecDeque::new(),
            bs: 0,
            b_held: None,
            ar_q: VecDeque::new(),
            r_exp: VecDeque::new(),
            r_beats: 0,
            r_held: None,
            r_data: VecDeque::new(),
            wr_bursts_queued: 0,
            w_early: 0,
        }
    }

    fn size(&self) -> u8 {
        self.lanes.trailing_zeros() as u8
    }

    /// Queue a write burst of `beats` beats at `addr` (with random bytes
    /// and strobes); apply it to `refm`.
    fn write(&mut self, addr: u64, beats: usize, refm: &mut HashMap<u64, u8>) {
        let req = AxReq {
            addr,
            len: (beats - 1) as u8,
            size: self.size(),
            burst: 1,
        };
        let hold = if self.rng.chance(self.pace.w_first) {
            self.rng.range(1, 24) as u32
        } else {
            0
        };
        self.aw_q.push_back((req, hold));
        let idx = self.wr_bursts_queued;
        self.wr_bursts_queued += 1;
        let all = if self.lanes == 64 {
            u64::MAX
        } else {
            (1u64 << self.lanes) - 1
        };
        for b in 0..beats {
            let data = self.rng.bytes(self.lanes);
            let strb = match self.rng.below(4) {
                0 => self.rng.next_u64() & all,
                1 => 0,
                _ => all,
            };
            for (i, &byte) in data.iter().enumerate() {
                if (strb >> i) & 1 == 1 {
                    refm.insert(addr + (b * self.lanes + i) as u64, byte);
                }
            }
            self.w_q.push_back((
                idx,
                WBeat {
                    data,
                    strb,
                    last: b + 1 == beats,
                },
            ));
        }
    }

    fn read(&mut self, addr: u64, beats: usize) {
        self.ar_q.push_back(AxReq {
            addr,
            len: (beats - 1) as u8,
            size: self.size(),
            burst: 1,
        });
    }

    fn done(&self) -> bool {
        self.aw_q.is_empty()
            && self.w_q.is_empty()
            && self.b_exp.is_empty()
            && self.ar_q.is_empty()
            && self.r_exp.is_empty()
            && self.min.aw.is_none()
            && self.min.w.is_none()
            && self.min.ar.is_none()
    }

    /// Choose this cycle's outputs.
    fn drive(&mut self) {
        let gap = self.pace.gap;
        if self.min.aw.is_none() {
            // A held-back AW waits at the queue's head while its W goes.
            let go = !self.rng.chance(gap);
            if let Some(f) = self.aw_q.front_mut() {
                if f.1 > 0 {
                    f.1 -= 1;
                } else if go {
                    self.min.aw = self.aw_q.pop_front().map(|a| a.0);
                }
            }
        }
        if self.min.w.is_none() && !self.w_q.is_empty() && !self.rng.chance(gap) {
            self.min.w = Some(self.w_q.front().unwrap().1.clone());
        }
        if self.min.ar.is_none() && !self.ar_q.is_empty() && !self.rng.chance(gap) {
            self.min.ar = self.ar_q.pop_front();
        }
        self.min.bready = !self.rng.chance(self.pace.stall);
        self.min.rready = !self.rng.chance(self.pace.stall);
    }

    /// After `eval`: the handshakes of the coming edge, checked.
    fn sample(&mut self, s: &SOut, mem: &AxiMem, cycle: u64) {
        let n = &self.name;
        // B: only after its burst's last W (counted before this edge).
        if let Some(held) = self.b_held.take() {
            assert_eq!(s.b, Some(held), "{n} cycle {cycle}: B changed before taken");
        }
        if let Some(resp) = s.b {
            if self.min.bready {
                let exp = self
                    .b_exp
                    .pop_front()
                    .unwrap_or_else(|| panic!("{n} cycle {cycle}: B with no write due"));
                assert!(
                    self.bs < self.w_bursts,
                    "{n} cycle {cycle}: B {} before its last W",
                    self.bs
                );
                assert_eq!(resp, exp, "{n} cycle {cycle}: BRESP of write {}", self.bs);
                self.bs += 1;
            } else {
                self.b_held = Some(resp);
            }
        }
        // W: never taken before its burst's AW was granted.
        if self.min.w.is_some() && self.w_q.front().unwrap().0 >= self.aws {
            self.w_early += 1;
        }
        if self.min.w.is_some() && s.wready {
            let (idx, beat) = self.w_q.pop_front().unwrap();
            assert!(
                idx < self.aws,
                "{n} cycle {cycle}: W of burst {idx} taken before its AW"
            );
            if beat.last {
                self.w_bursts += 1;
            }
            self.min.w = None;
        }
        if let Some(req) = &self.min.aw {
            if s.awready {
                let err = mem.range_poisoned(req.addr, (req.len as u64 + 1) << req.size);
                self.b_exp.push_back(if err { 2 } else { 0 });
                self.aws += 1;
                self.min.aw = None;
            }
        }
        // R.
        if let Some(held) = self.r_held.take() {
            assert_eq!(
                s.r.as_ref(),
                Some(&held),
                "{n} cycle {cycle}: R changed before taken"
            );
        }
        if let Some(beat) = &s.r {
            if self.min.rready {
                let (req, got, resp) = self
                    .r_exp
                    .front_mut()
                    .unwrap_or_else(|| panic!("{n} cycle {cycle}: R beat with no read due"));
                let exp = self.r_data.pop_front().unwrap();
                assert_eq!(
                    beat.data, exp,
                    "{n} cycle {cycle}: R data, beat {got} of {req:?}"
                );
                assert_eq!(beat.resp, *resp, "{n} cycle {cycle}: RRESP of {req:?}");
                let last = *got == req.len as u32;
                assert_eq!(beat.last, last, "{n} cycle {cycle}: RLAST, beat {got}");
                *got += 1;
                self.r_beats += 1;
                if last {
                    self.r_exp.pop_front();
                }
            } else {
                self.r_held = Some(beat.clone());
            }
        }
        if let Some(req) = &self.min.ar {
            if s.arready {
                let err = mem.range_poisoned(req.addr, (req.len as u64 + 1) << req.size);
                for b in 0..=req.len as u64 {
                    self.r_data
                        .push_back(mem.peek(req.addr + b * self.lanes as u64, self.lanes));
                }
                self.r_exp
                    .push_back((req.clone(), 0, if err { 2 } else { 0 }));
                self.min.ar = None;
            }
        }
    }
}

/// Arbiters, masters and the memory. `cascade`: two arbiters, the first's
/// master port on the second's `s0`; masters on (arb 0, s0), (arb 0, s1),
/// (arb 1, s1).
struct Bench {
    arbs: Vec<Box<dyn ArbDut>>,
    at: Vec<(usize, usize)>,
    masters: Vec<Master>,
    mem: AxiMem,
    wire: Wire,
    /// Master-port beats and the cycles of the first and last, per side.
    r_span: (u64, u64, u64),
    w_span: (u64, u64, u64),
}

impl Bench {
    fn new(width: usize, cascade: bool, seed: u64, timing: AxiMemTiming, pace: Pace) -> Bench {
        let lanes = width / 8;
        let mut arbs = vec![dut(width)];
        let mut at = vec![(0, 0), (0, 1)];
        if cascade {
            arbs.push(dut(width));
            at.push((1, 1));
        }
        let names = ["responder", "requester", "host_if"];
        let masters = at
            .iter()
            .enumerate()
            .map(|(k, _)| Master::new(names[k], lanes, seed ^ ((k as u64 + 1) * 0x9e37), pace))
            .collect();
        let mut b = Bench {
            arbs,
            at,
            masters,
            mem: AxiMem::new(lanes, seed, timing),
            wire: Wire {
                lanes,
                min: MIn::default(),
                sout: SOut::default(),
            },
            r_span: (0, u64::MAX, 0),
            w_span: (0, u64::MAX, 0),
        };
        for a in b.arbs.iter_mut() {
            a.set_rst(true);
            a.set_s(0, &MIn::default());
            a.set_s(1, &MIn::default());
            a.set_m(&SOut::default());
            a.eval();
            a.tick();
            a.tick();
            a.set_rst(false);
        }
        b
    }

    fn step(&mut self) {
        let c = self.mem.cycle();
        for (m, &(d, i)) in self.masters.iter_mut().zip(&self.at) {
            m.drive();
            self.arbs[d].set_s(i, &m.min);
        }
        self.mem.drive_write(&mut self.wire);
        self.mem.drive_read(&mut self.wire);
        let last = self.arbs.len() - 1;
        self.arbs[last].set_m(&self.wire.sout);
        if last == 1 {
            // The first arbiter's master-port outputs do not depend on its
            // master-port inputs (no valid waits on a ready), so one pass
            // and a final settle suffice; two passes to be safe.
            for _ in 0..2 {
                self.arbs[0].eval();
                let up = self.arbs[0].get_m();
                self.arbs[1].set_s(0, &up);
                self.arbs[1].eval();
                let down = self.arbs[1].get_s(0);
                self.arbs[0].set_m(&down);
            }
            self.arbs[0].eval();
            let up = self.arbs[0].get_m();
            self.arbs[1].set_s(0, &up);
            self.arbs[1].eval();
        } else {
            self.arbs[0].eval();
        }
        self.wire.min = self.arbs[last].get_m();
        for (m, &(d, i)) in self.masters.iter_mut().zip(&self.at) {
            let s = self.arbs[d].get_s(i);
            m.sample(&s, &self.mem, c);
        }
        if self.wire.min.rready && self.wire.sout.r.is_some() {
            self.r_span.0 += 1;
            self.r_span.1 = self.r_span.1.min(c);
            self.r_span.2 = c;
        }
        if self.wire.min.w.is_some() && self.wire.sout.wready {
            self.w_span.0 += 1;
            self.w_span.1 = self.w_span.1.min(c);
            self.w_span.2 = c;
        }
        self.mem.sample_write(&self.wire);
        self.mem.sample_read(&self.wire);
        for a in self.arbs.iter_mut() {
            a.tick();
        }
        self.mem.tick();
    }

    fn run(&mut self, limit: u64) {
        let start = self.mem.cycle();
        while !(self.masters.iter().all(|m| m.done()) && self.mem.quiet()) {
            assert!(
                self.mem.cycle() - start < limit,
                "hung: {:?}",
                self.masters
                    .iter()
                    .map(|m| (
                        &m.name,
                        m.aw_q.len(),
                        m.w_q.len(),
                        m.b_exp.len(),
                        m.ar_q.len(),
                        m.r_exp.len()
                    ))
                    .collect::<Vec<_>>()
            );
            self.step();
        }
        assert!(
            self.mem.violations.is_empty(),
            "AXI rules broken on the master port: {:?}",
            &self.mem.violations[..self.mem.violations.len().min(10)]
        );
    }
}

/// A burst of 1..=256 beats inside one 4 KiB page of `[base, base +
/// REGION)`, lengths favouring the edges.
fn burst(rng: &mut Rng, lanes: usize, base: u64) -> (u64, usize) {
    let page_beats = 4096 / lanes;
    let max = page_beats.min(256);
    let beats = match rng.below(6) {
        0 => 1,
        1 => max,
        2 => 16.min(max),
        _ => rng.range(1, max),
    };
    let page = rng.below(REGION / 4096);
    let slot = rng.range(0, page_beats - beats) as u64;
    (base + page * 4096 + slot * lanes as u64, beats)
}

fn random_traffic(width: usize, cascade: bool, seed: u64, timing: AxiMemTiming, bursts: usize) {
    let lanes = width / 8;
    let mut b = Bench::new(width, cascade, seed, timing, RANDOM);
    // One SLVERR page in the read region and in each write region.
    b.mem.poison_page(RD_BASE + 4096 * 3);
    let mut refm = HashMap::new();
    let mut rng = Rng::new(seed ^ 0x5eed);
    let n = b.masters.len();
    for k in 0..n {
        let wbase = WR_BASE + k as u64 * REGION;
        b.mem.poison_page(wbase + 4096 * 5);
        for _ in 0..bursts {
            if rng.chance(500) {
                let (a, beats) = burst(&mut rng, lanes, wbase);
                b.masters[k].write(a, beats, &mut refm);
            } else {
                let (a, beats) = burst(&mut rng, lanes, RD_BASE);
                b.masters[k].read(a, beats);
            }
        }
    }
    b.run(2_000_000);
    let (mut rb, mut early) = (0, 0);
    for m in &b.masters {
        assert_eq!(m.bs, m.wr_bursts_queued, "{}: every write answered", m.name);
        rb += m.r_beats;
        early += m.w_early;
    }
    assert!(early > 0, "no W was offered before its AW");
    assert_eq!(rb, b.mem.r_beats);
    // Memory = each master's writes in order (the regions are disjoint).
    for (&a, &v) in &refm {
        assert_eq!(b.mem.peek(a, 1)[0], v, "byte at {a:#x}");
    }
    let stray: Vec<u64> = b
        .mem
        .written()
        .filter(|(a, _)| !refm.contains_key(a))
        .map(|(a, _)| a)
        .take(5)
        .collect();
    assert!(
        stray.is_empty(),
        "bytes written outside the writes: {stray:x?}"
    );
    eprintln!(
        "axi_arb w{width}{}: {} cycles, {} AW / {} W beats / {} AR / {} R beats, \
         max {} writes and {} reads outstanding, W offered before its AW in {early} cycles",
        if cascade { " 3:1" } else { "" },
        b.mem.cycle(),
        b.mem.aws,
        b.mem.w_beats,
        b.mem.ars,
        b.mem.r_beats,
        b.mem.max_writes_out,
        b.mem.max_reads_out
    );
}

const SLOW: AxiMemTiming = AxiMemTiming {
    lat_min: 1,
    lat_max: 40,
    stall_permille: 250,
    gap_permille: 250,
};

#[test]
fn random_w64() {
    let seed = Rng::seed_from_env("axi_arb::random_w64", 0xa1b64);
    random_traffic(64, false, seed, SLOW, 300);
    random_traffic(64, false, seed + 1, AxiMemTiming::FAST, 300);
}

#[test]
fn random_w512() {
    let seed = Rng::seed_from_env("axi_arb::random_w512", 0xa1b512);
    random_traffic(512, false, seed, SLOW, 300);
    random_traffic(512, false, seed + 1, AxiMemTiming::FAST, 300);
}

#[test]
fn cascade_3to1_random() {
    let seed = Rng::seed_from_env("axi_arb::cascade_3to1_random", 0xa1b3);
    random_traffic(64, true, seed, SLOW, 200);
    random_traffic(512, true, seed + 1, AxiMemTiming::FAST, 200);
}

/// Both masters (all three in the cascade) stream back-to-back bursts of
/// `beats` beats, reads and writes at once, no master pacing, a zero-stall
/// memory: beats per cycle on the master port's R and W channels.
fn throughput(width: usize, cascade: bool, beats: usize) -> (f64, f64) {
    let lanes = width / 8;
    let mut b = Bench::new(width, cascade, 7, AxiMemTiming::FAST, FULL);
    let mut refm = HashMap::new();
    let n = b.masters.len();
    let bursts = 4096 / beats.max(8);
    for k in 0..n {
        let wbase = WR_BASE + k as u64 * REGION;
        for j in 0..bursts {
            let off = (j * beats * lanes) as u64 % (REGION - 4096);
            // Keep each burst inside its 4 KiB page.
            let a = (off / 4096) * 4096 + (off % 4096).min(4096 - (beats * lanes) as u64);
            b.masters[k].write(wbase + a, beats, &mut refm);
            b.masters[k].read(RD_BASE + a, beats);
        }
    }
    b.run(10_000_000);
    let rate = |s: (u64, u64, u64)| s.0 as f64 / (s.2 - s.1 + 1) as f64;
    let (r, w) = (rate(b.r_span), rate(b.w_span));
    eprintln!(
        "axi_arb w{width}{} {beats}-beat bursts: R {r:.4} beats/cycle ({} beats), \
         W {w:.4} beats/cycle ({} beats)",
        if cascade { " 3:1" } else { "" },
        b.r_span.0,
        b.w_span.0
    );
    (r, w)
}

#[test]
fn throughput_w64() {
    for beats in [16, 1, 4, 256] {
        let (r, w) = throughput(64, false, beats);
        if beats >= 4 {
            assert!(r >= 0.95 && w >= 0.95, "{beats}-beat bursts: R {r}, W {w}");
        }
    }
}

#[test]
fn throughput_w512() {
    for beats in [16, 1, 4, 64] {
        let (r, w) = throughput(512, false, beats);
        if beats >= 4 {
            assert!(r >= 0.95 && w >= 0.95, "{beats}-beat bursts: R {r}, W {w}");
        }
    }
}

#[test]
fn throughput_cascade() {
    for width in [64, 512] {
        let (r, w) = throughput(width, true, 16);
        assert!(r >= 0.95 && w >= 0.95, "3:1 w{width}: R {r}, W {w}");
    }
}
