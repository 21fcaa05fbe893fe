//! `axil_bus` in Verilator: two AXI4-Lite master BFMs (`roce_sim::axil`),
//! the host on `s_host_axil_*` and the core on `s_core_axil_*`, issue
//! random reads and writes (random gaps and BREADY/RREADY stalls) over the
//! whole window, block edges favoured. Both targets are Rust models with
//! random ready and latency: an AXI4-Lite slave on `m_csr_axil_*` and
//! `host_if`'s register port on `m_reg_*` / `s_reg_resp_*`. They log every
//! access they see, answer writes with a random response and reads with
//! unique data, so each master's completed transaction is matched with
//! exactly one target access: the target its address decodes to (the
//! map's `db` and `hq` blocks to host_if, the rest to the CSR block), its
//! address, data and strobes, its response (host_if's `err` as SLVERR), in
//! the master's order; no target access is left unclaimed. Seeds printed;
//! `ROCE_SEED` repeats one.

use roce_sim::axil::{AxilMaster, AxilSlave, Done, Timing, OKAY, SLVERR};
use roce_sim::model::Model;
use roce_sim::models::AxilBusW32;
use roce_sim::rng::Rng;
use std::collections::{HashMap, HashSet};

/// One of the bus's slave ports, for the master BFM.
struct Port<'a> {
    d: &'a mut AxilBusW32,
    core: bool,
}

impl Model for Port<'_> {
    fn eval(&mut self) {
        self.d.eval()
    }
    fn tick(&mut self) {
        self.d.tick()
    }
    fn cycles(&self) -> u64 {
        Model::cycles(self.d)
    }
}

macro_rules! pick {
    ($s:expr, $core:ident, $host:ident $(, $a:expr)*) => {
        if $s.core {
            $s.d.$core($($a),*)
        } else {
            $s.d.$host($($a),*)
        }
    };
}

impl AxilSlave for Port<'_> {
    fn set_aw(&mut self, valid: bool, addr: u32) {
        pick!(
            self,
            set_s_core_axil_awvalid,
            set_s_host_axil_awvalid,
            valid
        );
        pick!(self, set_s_core_axil_awaddr, set_s_host_axil_awaddr, addr);
    }
    fn aw_ready(&self) -> bool {
        pick!(self, get_s_core_axil_awready, get_s_host_axil_awready)
    }
    fn set_w(&mut self, valid: bool, data: u32, strb: u32) {
        pick!(self, set_s_core_axil_wvalid, set_s_host_axil_wvalid, valid);
        pick!(self, set_s_core_axil_wdata, set_s_host_axil_wdata, data);
        pick!(self, set_s_core_axil_wstrb, set_s_host_axil_wstrb, strb);
    }
    fn w_ready(&self) -> bool {
        pick!(self, get_s_core_axil_wready, get_s_host_axil_wready)
    }
    fn set_b_ready(&mut self, ready: bool) {
        pick!(self, set_s_core_axil_bready, set_s_host_axil_bready, ready);
    }
    fn b(&self) -> Option<u32> {
        let v = pick!(self, get_s_core_axil_bvalid, get_s_host_axil_bvalid);
        v.then(|| pick!(self, get_s_core_axil_bresp, get_s_host_axil_bresp))
    }
    fn set_ar(&mut self, valid: bool, addr: u32) {
        pick!(
            self,
            set_s_core_axil_arvalid,
            set_s_host_axil_arvalid,
            valid
        );
        pick!(self, set_s_core_axil_araddr, set_s_host_axil_araddr, addr);
    }
    fn ar_ready(&self) -> bool {
        pick!(self, get_s_core_axil_arready, get_s_host_axil_arready)
    }
    fn set_r_ready(&mut self, ready: bool) {
        pick!(self, set_s_core_axil_rready, set_s_host_axil_rready, ready);
    }
    fn r(&self) -> Option<(u32, u32)> {
        let v = pick!(self, get_s_core_axil_rvalid, get_s_host_axil_rvalid);
        v.then(|| {
            (
                pick!(self, get_s_core_axil_rdata, get_s_host_axil_rdata),
                pick!(self, get_s_core_axil_rresp, get_s_host_axil_rresp),
            )
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Csr,
    HostIf,
}

/// The reference decode, from the map's blocks.
fn decode(addr: u32) -> Target {
    if roce_regs::HOST_BLOCKS
        .iter()
        .any(|b| addr >= b.base && addr < b.base + b.size)
    {
        Target::HostIf
    } else {
        Target::Csr
    }
}

/// An access a target saw.
#[derive(Clone, Copy, Debug)]
struct Access {
    target: Target,
    write: bool,
    addr: u32,
    wdata: u32,
    strb: u32,
    /// What the target answered: read data and AXI response.
    rdata: u32,
    resp: u32,
}

/// Both targets' models and the access log.
struct Targets {
    rng: Rng,
    /// ‰ of cycles a ready is low; latency range.
    stall: u32,
    lat: (usize, usize),
    log: Vec<Access>,
    next_rdata: u32,
    // CSR side.
    c_aw: Option<u32>,
    c_w: Option<(u32, u32)>,
    c_awready: bool,
    c_wready: bool,
    c_arready: bool,
    /// The pending response: (due cycle, is write, rdata, resp).
    c_resp: Option<(u64, bool, u32, u32)>,
    c_offered: bool,
    /// The request offered and not taken last cycle (must hold).
    c_held: Option<(bool, bool, bool, u32, u32, u32, u32)>,
    // host_if side.
    r_ready: bool,
    r_resp: Option<(u64, u32, bool)>,
    r_held: Option<(bool, u32, u32, u32)>,
}

impl Targets {
    fn new(seed: u64, stall: u32, lat: (usize, usize)) -> Targets {
        Targets {
            rng: Rng::new(seed),
            stall,
            lat,
            log: Vec::new(),
            next_rdata: 0,
            c_aw: None,
            c_w: None,
            c_awready: false,
            c_wready: false,
            c_arready: false,
            c_resp: None,
            c_offered: false,
            c_held: None,
            r_ready: false,
            r_resp: None,
            r_held: None,
        }
    }

    fn rdata(&mut self) -> u32 {
        self.next_rdata += 1;
        (self.rng.next_u32() & 0xfff0_0000) | self.next_rdata
    }

    fn busy(&self) -> bool {
        self.c_aw.is_some() || self.c_w.is_some() || self.c_resp.is_some() || self.r_resp.is_some()
    }

    fn drive(&mut self, d: &mut AxilBusW32, cycle: u64) {
        let stall = self.stall;
        self.c_awready = self.c_aw.is_none() && !self.rng.chance(stall);
        self.c_wready = self.c_w.is_none() && !self.rng.chance(stall);
        self.c_arready = !self.rng.chance(stall);
        d.set_m_csr_axil_awready(self.c_awready);
        d.set_m_csr_axil_wready(self.c_wready);
        d.set_m_csr_axil_arready(self.c_arready);
        let junk = self.rng.next_u32();
        if !self.c_offered {
            if let Some((due, _, _, _)) = self.c_resp {
                self.c_offered = due <= cycle && !self.rng.chance(stall);
            }
        }
        let (w, data, resp) = match self.c_resp {
            Some((_, w, data, resp)) if self.c_offered => (Some(w), data, resp),
            _ => (None, junk, junk & 3),
        };
        d.set_m_csr_axil_bvalid(w == Some(true));
        d.set_m_csr_axil_rvalid(w == Some(false));
        d.set_m_csr_axil_bresp(resp);
        d.set_m_csr_axil_rresp(resp);
        d.set_m_csr_axil_rdata(data);
        self.r_ready = !self.rng.chance(stall);
        d.set_m_reg_ready(self.r_ready);
        match self.r_resp {
            Some((due, data, err)) if due == cycle => {
                d.set_s_reg_resp_valid(true);
                d.set_s_reg_resp_rdata(data);
                d.set_s_reg_resp_err(err);
                self.r_resp = None;
            }
            _ => {
                d.set_s_reg_resp_valid(false);
                d.set_s_reg_resp_rdata(junk);
                d.set_s_reg_resp_err(junk & 1 == 1);
            }
        }
    }

    fn sample(&mut self, d: &AxilBusW32, cycle: u64) {
        let lat = self.rng.range(self.lat.0, self.lat.1) as u64;
        // CSR side: requests held until taken, one transaction at a time.
        let req = (
            d.get_m_csr_axil_awvalid(),
            d.get_m_csr_axil_wvalid(),
            d.get_m_csr_axil_arvalid(),
            d.get_m_csr_axil_awaddr(),
            d.get_m_csr_axil_wdata(),
            d.get_m_csr_axil_wstrb(),
            d.get_m_csr_axil_araddr(),
        );
        if let Some(h) = self.c_held.take() {
            let same = (!h.0 || req.0 && h.3 == req.3)
                && (!h.1 || req.1 && h.4 == req.4 && h.5 == req.5)
                && (!h.2 || req.2 && h.6 == req.6);
            assert!(
                same,
                "cycle {cycle}: CSR request dropped or changed: {h:?} -> {req:?}"
            );
        }
        let (awv, wv, arv) = (req.0, req.1, req.2);
        if (awv || wv || arv) && self.c_resp.is_some() {
            panic!("cycle {cycle}: a second CSR request while one is answered");
        }
        if arv && (awv || wv || self.c_aw.is_some() || self.c_w.is_some()) {
            panic!("cycle {cycle}: CSR read beside a write");
        }
        let held = (
            awv && !self.c_awready,
            wv && !self.c_wready,
            arv && !self.c_arready,
            req.3,
            req.4,
            req.5,
            req.6,
        );
        if held.0 || held.1 || held.2 {
            self.c_held = Some(held);
        }
        if awv && self.c_awready {
            self.c_aw = Some(req.3);
        }
        if wv && self.c_wready {
            self.c_w = Some((req.4, req.5));
        }
        if let (Some(addr), Some((wdata, strb))) = (self.c_aw, self.c_w) {
            let resp = if self.rng.chance(200) { SLVERR } else { OKAY };
            self.log.push(Access {
                target: Target::Csr,
                write: true,
                addr,
                wdata,
                strb,
                rdata: 0,
                resp,
            });
            self.c_resp = Some((cycle + lat, true, 0, resp));
            self.c_aw = None;
            self.c_w = None;
        }
        if arv && self.c_arready {
            let rdata = self.rdata();
            let resp = if self.rng.chance(200) { SLVERR } else { OKAY };
            self.log.push(Access {
                target: Target::Csr,
                write: false,
                addr: req.6,
                wdata: 0,
                strb: 0,
                rdata,
                resp,
            });
            self.c_resp = Some((cycle + lat, false, rdata, resp));
        }
        if self.c_offered {
            let (_, w, ..) = self.c_resp.unwrap();
            let taken = if w {
                d.get_m_csr_axil_bready()
            } else {
                d.get_m_csr_axil_rready()
            };
            if taken {
                self.c_resp = None;
                self.c_offered = false;
            }
        }
        // host_if side.
        let rv = d.get_m_reg_valid();
        let rq = (
            d.get_m_reg_write(),
            d.get_m_reg_addr(),
            d.get_m_reg_wdata(),
            d.get_m_reg_strb(),
        );
        if let Some(h) = self.r_held.take() {
            assert!(
                rv && (h.0, h.1) == (rq.0, rq.1) && (!h.0 || (h.2, h.3) == (rq.2, rq.3)),
                "cycle {cycle}: register request dropped or changed: {h:?} -> {rq:?}"
            );
        }
        if rv && self.r_resp.is_some() {
            panic!("cycle {cycle}: a second register request before the response");
        }
        if rv && !self.r_ready {
            self.r_held = Some(rq);
        }
        if rv && self.r_ready {
            let err = self.rng.chance(200);
            let rdata = if rq.0 {
                self.rng.next_u32()
            } else {
                self.rdata()
            };
            self.log.push(Access {
                target: Target::HostIf,
                write: rq.0,
                addr: rq.1,
                wdata: rq.2,
                strb: rq.3,
                rdata,
                resp: if err { SLVERR } else { OKAY },
            });
            self.r_resp = Some((cycle + lat.max(1), rdata, err));
        }
    }
}

/// What a master asked: (write, addr, wdata, strb).
type Op = (bool, u32, u32, u32);

fn addr(rng: &mut Rng) -> u32 {
    let window = roce_regs::CSR_WINDOW_SIZE;
    let edges: Vec<u32> = roce_regs::HOST_BLOCKS
        .iter()
        .flat_map(|b| [b.base, b.base + b.size])
        .flat_map(|a| [a, a.wrapping_sub(4), a + 4])
        .chain([0, window - 4])
        .filter(|&a| a < window)
        .collect();
    match rng.below(3) {
        0 => edges[rng.below(edges.len() as u64) as usize],
        // Inside a host_if block.
        1 => {
            let hb = roce_regs::HOST_BLOCKS;
            let b = &hb[rng.below(hb.len() as u64) as usize];
            b.base + (rng.below(b.size as u64) as u32 & !3)
        }
        _ => rng.below(window as u64) as u32 & !3,
    }
}

fn run(seed: u64, timing: Timing, stall: u32, lat: (usize, usize), n: usize) -> [usize; 2] {
    let mut d = AxilBusW32::new();
    d.set_reset(true);
    d.eval();
    d.tick();
    d.tick();
    d.set_reset(false);
    let mut rng = Rng::new(seed);
    let mut masters = [
        AxilMaster::new(seed ^ 1, timing),
        AxilMaster::new(seed ^ 2, timing),
    ];
    let mut ops: [HashMap<u64, Op>; 2] = [HashMap::new(), HashMap::new()];
    let mut used = HashSet::new();
    for k in 0..2 {
        for _ in 0..n {
            let a = addr(&mut rng);
            if rng.chance(500) {
                // Unique write data, so a target's access names its write.
                let mut v = rng.edge(32, 0) as u32;
                while !used.insert(v) {
                    v = rng.next_u32();
                }
                let strb = rng.edge(4, 0xf) as u32;
                let tag = masters[k].write(a, v, strb);
                ops[k].insert(tag, (true, a, v, strb));
            } else {
                let tag = masters[k].read(a);
                ops[k].insert(tag, (false, a, 0, 0));
            }
        }
    }
    let mut t = Targets::new(seed ^ 3, stall, lat);
    let mut cycle = 0u64;
    // Done order per master: the cycle each finished.
    let mut finished = [None, None];
    while masters.iter().any(|m| !m.idle()) || t.busy() {
        assert!(cycle < 200_000 + 200 * n as u64, "hung at cycle {cycle}");
        for (k, m) in masters.iter_mut().enumerate() {
            m.drive(&mut Port {
                d: &mut d,
                core: k == 1,
            });
        }
        t.drive(&mut d, cycle);
        d.eval();
        for (k, m) in masters.iter_mut().enumerate() {
            m.sample(&Port {
                d: &mut d,
                core: k == 1,
            });
            if m.idle() && finished[k].is_none() {
                finished[k] = Some(cycle);
            }
        }
        t.sample(&d, cycle);
        d.tick();
        cycle += 1;
    }
    // Match every completion with one target access.
    let mut claimed = vec![false; t.log.len()];
    let by_wdata: HashMap<u32, usize> = t
        .log
        .iter()
        .enumerate()
        .filter(|(_, a)| a.write)
        .map(|(i, a)| (a.wdata, i))
        .collect();
    let by_rdata: HashMap<u32, usize> = t
        .log
        .iter()
        .enumerate()
        .filter(|(_, a)| !a.write)
        .map(|(i, a)| (a.rdata, i))
        .collect();
    let mut counts = [0; 2];
    for k in 0..2 {
        let (mut last_w, mut last_r) = (None, None);
        for done in masters[k].done.drain(..) {
            counts[k] += 1;
            let (i, resp, last) = match done {
                Done::Write { tag, resp } => {
                    let (_, a, v, strb) = ops[k][&tag];
                    let i = *by_wdata.get(&v).unwrap_or_else(|| {
                        panic!("master {k}: write {a:#x} never reached a target")
                    });
                    let e = t.log[i];
                    assert_eq!((e.addr, e.strb), (a, strb), "master {k}: write {tag}");
                    (i, resp, &mut last_w)
                }
                Done::Read { tag, data, resp } => {
                    let (_, a, ..) = ops[k][&tag];
                    let i = *by_rdata.get(&data).unwrap_or_else(|| {
                        panic!("master {k}: read {a:#x} got {data:#x}, which no target sent")
                    });
                    assert_eq!(
                        t.log[i].addr, a,
                        "master {k}: read {tag} answered by another read"
                    );
                    (i, resp, &mut last_r)
                }
            };
            let e = t.log[i];
            assert_eq!(
                e.target,
                decode(e.addr),
                "access {e:?} reached the wrong target"
            );
            assert_eq!(resp, e.resp, "master {k}: response of {e:?}");
            assert!(!claimed[i], "access {e:?} claimed twice");
            claimed[i] = true;
            assert!(
                last.is_none_or(|l| l < i),
                "master {k}: out of order at {e:?}"
            );
            *last = Some(i);
        }
    }
    assert!(
        claimed.iter().all(|&c| c),
        "a target saw an access no master made"
    );
    let slverr = t.log.iter().filter(|a| a.resp == SLVERR).count();
    let host_if = t.log.iter().filter(|a| a.target == Target::HostIf).count();
    eprintln!(
        "axil_bus: {} accesses ({host_if} to host_if, {slverr} SLVERR) in {cycle} cycles; \
         host done at {:?}, core at {:?}",
        t.log.len(),
        finished[0],
        finished[1]
    );
    [finished[0].unwrap() as usize, finished[1].unwrap() as usize]
}

#[test]
fn random_access() {
    let seed = Rng::seed_from_env("axil_bus::random_access", 0xa11b);
    run(seed, Timing::RANDOM, 300, (1, 12), 2000);
    run(seed + 1, Timing::FULL_RATE, 0, (1, 1), 2000);
}

/// Both masters always asking: they alternate, so they finish together,
/// and a transaction takes 4 cycles plus the target's latency.
#[test]
fn alternate_when_both_wait() {
    let n = 500;
    let [h, c] = run(5, Timing::FULL_RATE, 0, (1, 1), n);
    let (lo, hi) = (h.min(c), h.max(c));
    assert!(hi - lo <= 12, "host done at {h}, core at {c}");
    eprintln!(
        "axil_bus: {:.2} cycles a transaction at full rate",
        hi as f64 / (2 * n) as f64
    );
}
