//! AXI4-Lite master bus-functional model.
//!
//! The master keeps three independent request channels (AW, W, AR) and two
//! response channels (B, R). Each request channel presents its next item
//! after a random number of idle cycles, and holds `valid` and the payload
//! until the handshake (AXI rule); W may run ahead of AW or behind it, and
//! reads run beside writes. `bready` and `rready` are random every cycle.
//! Responses come back in order per direction; the master checks the
//! slave's side of the protocol (a response, once valid, stays valid and
//! stable until taken).

use crate::model::Model;
use crate::rng::Rng;
use std::collections::VecDeque;

/// AXI response codes.
pub const OKAY: u32 = 0;
pub const SLVERR: u32 = 2;

/// The slave port of a model, `s_axil_*`.
pub trait AxilSlave: Model {
    fn set_aw(&mut self, valid: bool, addr: u32);
    fn aw_ready(&self) -> bool;
    fn set_w(&mut self, valid: bool, data: u32, strb: u32);
    fn w_ready(&self) -> bool;
    fn set_b_ready(&mut self, ready: bool);
    /// `bresp` while `bvalid`.
    fn b(&self) -> Option<u32>;
    fn set_ar(&mut self, valid: bool, addr: u32);
    fn ar_ready(&self) -> bool;
    fn set_r_ready(&mut self, ready: bool);
    /// (`rdata`, `rresp`) while `rvalid`.
    fn r(&self) -> Option<(u32, u32)>;
}

/// Implement [`AxilSlave`] for a model with `s_axil_*` ports.
macro_rules! axil_slave {
    ($t:ty) => {
        impl AxilSlave for $t {
            fn set_aw(&mut self, valid: bool, addr: u32) {
                self.set_s_axil_awvalid(valid);
                self.set_s_axil_awaddr(addr);
            }
            fn aw_ready(&self) -> bool {
                self.get_s_axil_awready()
            }
            fn set_w(&mut self, valid: bool, data: u32, strb: u32) {
                self.set_s_axil_wvalid(valid);
                self.set_s_axil_wdata(data);
                self.set_s_axil_wstrb(strb);
            }
            fn w_ready(&self) -> bool {
                self.get_s_axil_wready()
            }
            fn set_b_ready(&mut self, ready: bool) {
                self.set_s_axil_bready(ready)
            }
            fn b(&self) -> Option<u32> {
                self.get_s_axil_bvalid().then(|| self.get_s_axil_bresp())
            }
            fn set_ar(&mut self, valid: bool, addr: u32) {
                self.set_s_axil_arvalid(valid);
                self.set_s_axil_araddr(addr);
            }
            fn ar_ready(&self) -> bool {
                self.get_s_axil_arready()
            }
            fn set_r_ready(&mut self, ready: bool) {
                self.set_s_axil_rready(ready)
            }
            fn r(&self) -> Option<(u32, u32)> {
                self.get_s_axil_rvalid()
                    .then(|| (self.get_s_axil_rdata(), self.get_s_axil_rresp()))
            }
        }
    };
}
axil_slave!(crate::models::CsrW256);
axil_slave!(crate::models::CsrBramW64);
axil_slave!(crate::models::CsrLutramW64);
axil_slave!(crate::models::CsrNicW64);
#[cfg(roce_picorv32)]
axil_slave!(crate::models::FwSoc);
#[cfg(roce_picorv32)]
axil_slave!(crate::models::RoceNicW64);
axil_slave!(crate::models::MrCtrlW64);
axil_slave!(crate::models::MrCtrlW4096);

/// A completed transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Done {
    /// Write `tag`: response.
    Write { tag: u64, resp: u32 },
    /// Read `tag`: data and response.
    Read { tag: u64, data: u32, resp: u32 },
}

/// Random timing of the master: per-mille chances per cycle.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Chance that a request channel with work stays idle this cycle.
    pub idle: u32,
    /// Chance that `bready` / `rready` is low this cycle.
    pub stall: u32,
}

impl Timing {
    pub const FULL_RATE: Timing = Timing { idle: 0, stall: 0 };
    pub const RANDOM: Timing = Timing {
        idle: 400,
        stall: 400,
    };
}

/// The master.
#[derive(Debug)]
pub struct AxilMaster {
    rng: Rng,
    pub timing: Timing,
    next_tag: u64,
    aw: VecDeque<u32>,
    w: VecDeque<(u32, u32)>,
    ar: VecDeque<u32>,
    aw_cur: Option<u32>,
    w_cur: Option<(u32, u32)>,
    ar_cur: Option<u32>,
    /// Tags of writes whose B is due, in order; likewise reads.
    b_due: VecDeque<u64>,
    r_due: VecDeque<u64>,
    b_ready: bool,
    r_ready: bool,
    /// Responses seen valid but not taken last cycle (must hold).
    b_held: Option<u32>,
    r_held: Option<(u32, u32)>,
    pub done: VecDeque<Done>,
}

impl AxilMaster {
    pub fn new(seed: u64, timing: Timing) -> AxilMaster {
        AxilMaster {
            rng: Rng::new(seed),
            timing,
            next_tag: 0,
            aw: VecDeque::new(),
            w: VecDeque::new(),
            ar: VecDeque::new(),
            aw_cur: None,
            w_cur: None,
            ar_cur: None,
            b_due: VecDeque::new(),
            r_due: VecDeque::new(),
            b_ready: false,
            r_ready: false,
            b_held: None,
            r_held: None,
            done: VecDeque::new(),
        }
    }

    /// Queue a write; returns its tag.
    pub fn write(&mut self, addr: u32, data: u32, strb: u32) -> u64 {
        self.next_tag += 1;
        self.aw.push_back(addr);
        self.w.push_back((data, strb));
        self.b_due.push_back(self.next_tag);
        self.next_tag
    }

    /// Queue a read; returns its tag.
    pub fn read(&mut self, addr: u32) -> u64 {
        self.next_tag += 1;
        self.ar.push_back(addr);
        self.r_due.push_back(self.next_tag);
        self.next_tag
    }

    /// Nothing queued or in flight.
    pub fn idle(&self) -> bool {
        self.b_due.is_empty() && self.r_due.is_empty()
    }

    /// Drive the inputs for this cycle (call `eval` after).
    pub fn drive<S: AxilSlave>(&mut self, s: &mut S) {
        let idle = self.timing.idle;
        if self.aw_cur.is_none() && !self.aw.is_empty() && !self.rng.chance(idle) {
            self.aw_cur = self.aw.pop_front();
        }
        if self.w_cur.is_none() && !self.w.is_empty() && !self.rng.chance(idle) {
            self.w_cur = self.w.pop_front();
        }
        if self.ar_cur.is_none() && !self.ar.is_empty() && !self.rng.chance(idle) {
            self.ar_cur = self.ar.pop_front();
        }
        // Idle channels carry garbage payloads: the slave must ignore them.
        let junk = self.rng.next_u32();
        s.set_aw(
            self.aw_cur.is_some(),
            self.aw_cur.unwrap_or(junk) & addr_mask(),
        );
        let (d, st) = self.w_cur.unwrap_or((junk, junk & 0xF));
        s.set_w(self.w_cur.is_some(), d, st);
        s.set_ar(
            self.ar_cur.is_some(),
            self.ar_cur.unwrap_or(!junk) & addr_mask(),
        );
        self.b_ready = !self.rng.chance(self.timing.stall);
        self.r_ready = !self.rng.chance(self.timing.stall);
        s.set_b_ready(self.b_ready);
        s.set_r_ready(self.r_ready);
    }

    /// Sample handshakes after `eval` (call `tick` after).
    pub fn sample<S: AxilSlave>(&mut self, s: &S) {
        if self.aw_cur.is_some() && s.aw_ready() {
            self.aw_cur = None;
        }
        if self.w_cur.is_some() && s.w_ready() {
            self.w_cur = None;
        }
        if self.ar_cur.is_some() && s.ar_ready() {
            self.ar_cur = None;
        }
        let b = s.b();
        if let Some(held) = self.b_held {
            assert_eq!(b, Some(held), "bvalid/bresp changed before the handshake");
        }
        self.b_held = None;
        if let Some(resp) = b {
            if self.b_ready {
                let tag = self
                    .b_due
                    .pop_front()
                    .expect("B response with no write due");
                self.done.push_back(Done::Write { tag, resp });
            } else {
                self.b_held = Some(resp);
            }
        }
        let r = s.r();
        if let Some(held) = self.r_held {
            assert_eq!(
                r,
                Some(held),
                "rvalid/rdata/rresp changed before the handshake"
            );
        }
        self.r_held = None;
        if let Some((data, resp)) = r {
            if self.r_ready {
                let tag = self.r_due.pop_front().expect("R response with no read due");
                self.done.push_back(Done::Read { tag, data, resp });
            } else {
                self.r_held = Some((data, resp));
            }
        }
    }

    /// One cycle: drive, `eval`, sample, `tick`.
    pub fn step<S: AxilSlave>(&mut self, s: &mut S) {
        self.drive(s);
        s.eval();
        self.sample(s);
        s.tick();
    }

    /// Step until everything queued has completed (panics after `limit`
    /// cycles: a hung slave).
    pub fn finish<S: AxilSlave>(&mut self, s: &mut S, limit: u64) {
        let start = s.cycles();
        while !self.idle() {
            assert!(s.cycles() - start < limit, "AXI4-Lite slave hung");
            self.step(s);
        }
    }

    /// One write, run to completion: its response.
    pub fn write_now<S: AxilSlave>(&mut self, s: &mut S, addr: u32, data: u32, strb: u32) -> u32 {
        let tag = self.write(addr, data, strb);
        self.finish(s, 1000);
        match self.done.pop_front() {
            Some(Done::Write { tag: t, resp }) if t == tag => resp,
            other => panic!("expected write {tag}, got {other:?}"),
        }
    }

    /// One read, run to completion: (data, response).
    pub fn read_now<S: AxilSlave>(&mut self, s: &mut S, addr: u32) -> (u32, u32) {
        let tag = self.read(addr);
        self.finish(s, 1000);
        match self.done.pop_front() {
            Some(Done::Read { tag: t, data, resp }) if t == tag => (data, resp),
            other => panic!("expected read {tag}, got {other:?}"),
        }
    }
}

/// Byte addresses of the CSR window.
fn addr_mask() -> u32 {
    roce_regs::CSR_WINDOW_SIZE - 1
}
