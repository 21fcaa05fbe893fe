//! An AXI4 slave memory for the benches of AXI masters (the DMA engines,
//! later the responder executor and the host DMA): a sparse byte memory,
//! seeded per-request latency, random backpressure on every channel, and
//! checks of the master's side of the protocol.
//!
//! **Memory.** Bytes never written read as [`background`]`(addr)` (a hash
//! of the address), so a bench can check that bytes it did not mean to
//! write are untouched without storing them. [`AxiMem::peek`] /
//! [`AxiMem::poke`] read and write bytes directly; [`AxiMem::write_burst`]
//! and [`AxiMem::read_burst`] are what a W burst and an AR do.
//!
//! **Cycle discipline** (as `bfm`): per cycle,
//!
//! ```text
//! mem.drive_write(&mut dut);   // AWREADY, WREADY, BVALID/BRESP
//! mem.drive_read(&mut dut);    // ARREADY, RVALID/RDATA/RRESP/RLAST
//! dut.eval();
//! mem.sample_write(&dut);      // the handshakes the edge will take
//! mem.sample_read(&dut);
//! dut.tick();
//! mem.tick();
//! ```
//!
//! The master's ports are reached through [`AxiWritePort`] and
//! [`AxiReadPort`], implemented for each Verilator model by its bench.
//!
//! **Ordering.** One ID: W bursts are taken in AW order, B and R answer in
//! request order. WREADY is low while no accepted AW waits for data (a
//! slave may wait for AWVALID before WREADY), so a master that holds W
//! until AW is accepted, or the reverse, is exercised either way.
//!
//! **Latency.** A B is offered no earlier than `latency` cycles after its
//! AW was accepted and one cycle after its last W beat; a read burst's first
//! R beat `latency` cycles after its AR, each request's `latency` drawn in
//! `lat_min..=lat_max`. B and R beats are also held back at random
//! (`gap_permille`), and AWREADY/WREADY/ARREADY dropped at random
//! (`stall_permille`).
//!
//! **Errors.** A burst that touches a poisoned 4 KiB page
//! ([`AxiMem::poison_page`]) is answered SLVERR (BRESP/RRESP = 2); it still
//! writes (and reads) normally.
//!
//! **Checks** (breaches go to [`AxiMem::violations`]): AxBURST = INCR,
//! AxSIZE = log2 of the bus width, Ax address aligned to the bus width, no
//! burst crossing a 4 KiB boundary, WLAST on exactly a burst's last beat, a
//! request or beat offered and not taken stays unchanged.

use crate::rng::Rng;
use std::collections::{HashMap, HashSet, VecDeque};

/// An AW or AR request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxReq {
    pub addr: u64,
    /// Beats minus one (AxLEN).
    pub len: u8,
    /// log2 of bytes a beat (AxSIZE).
    pub size: u8,
    /// AxBURST (1 = INCR).
    pub burst: u8,
}

/// A W beat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WBeat {
    /// One byte per lane.
    pub data: Vec<u8>,
    pub strb: u64,
    pub last: bool,
}

/// An R beat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RBeat {
    pub data: Vec<u8>,
    pub resp: u8,
    pub last: bool,
}

/// A master's write channels, as the slave sees them.
pub trait AxiWritePort {
    /// Bytes a beat.
    fn lanes(&self) -> usize;
    /// The AW request on offer (AWVALID high), after `eval()`.
    fn aw(&self) -> Option<AxReq>;
    fn set_aw_ready(&mut self, ready: bool);
    /// The W beat on offer, after `eval()`.
    fn w(&self) -> Option<WBeat>;
    fn set_w_ready(&mut self, ready: bool);
    /// Drive BVALID (with BRESP) or not.
    fn set_b(&mut self, resp: Option<u8>);
    fn b_ready(&self) -> bool;
}

/// A master's read channels, as the slave sees them.
pub trait AxiReadPort {
    fn lanes(&self) -> usize;
    /// The AR request on offer, after `eval()`.
    fn ar(&self) -> Option<AxReq>;
    fn set_ar_ready(&mut self, ready: bool);
    /// Drive RVALID (with the beat) or not.
    fn set_r(&mut self, beat: Option<&RBeat>);
    fn r_ready(&self) -> bool;
}

/// Implements [`AxiWritePort`] for a Verilator model with `m_axi_aw*`,
/// `m_axi_w*` and `m_axi_b*` ports: `$lanes` bytes a beat, `$wdata` and
/// `$wstrb` read the data (as bytes) and the strobes (as a `u64`).
#[macro_export]
macro_rules! axi_write_port {
    ($m:ident, $lanes:expr, $wdata:expr, $wstrb:expr) => {
        impl $crate::axi_mem::AxiWritePort for $m {
            fn lanes(&self) -> usize {
                $lanes
            }
            fn aw(&self) -> Option<$crate::axi_mem::AxReq> {
                self.get_m_axi_awvalid().then(|| $crate::axi_mem::AxReq {
                    addr: self.get_m_axi_awaddr(),
                    len: self.get_m_axi_awlen() as u8,
                    size: self.get_m_axi_awsize() as u8,
                    burst: self.get_m_axi_awburst() as u8,
                })
            }
            fn set_aw_ready(&mut self, ready: bool) {
                self.set_m_axi_awready(ready)
            }
            fn w(&self) -> Option<$crate::axi_mem::WBeat> {
                #[allow(clippy::redundant_closure_call)]
                self.get_m_axi_wvalid().then(|| $crate::axi_mem::WBeat {
                    data: ($wdata)(self),
                    strb: ($wstrb)(self),
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
    };
}

/// Implements [`AxiReadPort`] for a Verilator model with `m_axi_ar*` and
/// `m_axi_r*` ports: `$lanes` bytes a beat, `$set_rdata` drives RDATA from
/// the beat's bytes.
#[macro_export]
macro_rules! axi_read_port {
    ($m:ident, $lanes:expr, $set_rdata:expr) => {
        impl $crate::axi_mem::AxiReadPort for $m {
            fn lanes(&self) -> usize {
                $lanes
            }
            fn ar(&self) -> Option<$crate::axi_mem::AxReq> {
                self.get_m_axi_arvalid().then(|| $crate::axi_mem::AxReq {
                    addr: self.get_m_axi_araddr(),
                    len: self.get_m_axi_arlen() as u8,
                    size: self.get_m_axi_arsize() as u8,
                    burst: self.get_m_axi_arburst() as u8,
                })
            }
            fn set_ar_ready(&mut self, ready: bool) {
                self.set_m_axi_arready(ready)
            }
            fn set_r(&mut self, beat: Option<&$crate::axi_mem::RBeat>) {
                self.set_m_axi_rvalid(beat.is_some());
                if let Some(b) = beat {
                    #[allow(clippy::redundant_closure_call)]
                    ($set_rdata)(self, &b.data);
                    self.set_m_axi_rresp(b.resp as u32);
                    self.set_m_axi_rlast(b.last);
                }
            }
            fn r_ready(&self) -> bool {
                self.get_m_axi_rready()
            }
        }
    };
}

/// What an unwritten byte reads as.
pub fn background(addr: u64) -> u8 {
    let mut z = addr.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z ^= z >> 29;
    z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (z >> 32) as u8
}

/// Storage granule of an [`AxiMem`].
const PAGE_BYTES: u64 = 4096;

/// One 4 KiB page of an [`AxiMem`]: its bytes (the background where never
/// written) and which of them were written.
struct Page {
    data: Box<[u8; PAGE_BYTES as usize]>,
    set: [u64; PAGE_BYTES as usize / 64],
}

impl std::fmt::Debug for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n: u32 = self.set.iter().map(|w| w.count_ones()).sum();
        write!(f, "Page({n} bytes written)")
    }
}

impl Page {
    fn new(n: u64) -> Page {
        let mut data = Box::new([0u8; PAGE_BYTES as usize]);
        for (i, b) in data.iter_mut().enumerate() {
            *b = background(n * PAGE_BYTES + i as u64);
        }
        Page {
            data,
            set: [0; PAGE_BYTES as usize / 64],
        }
    }
}

/// Timing and backpressure of an [`AxiMem`].
#[derive(Clone, Copy, Debug)]
pub struct AxiMemTiming {
    /// Cycles from a request's acceptance to its first response, drawn per
    /// request in `lat_min..=lat_max`.
    pub lat_min: u32,
    pub lat_max: u32,
    /// AWREADY / WREADY / ARREADY low in a cycle with this probability (‰).
    pub stall_permille: u32,
    /// A due B or R beat held back a cycle with this probability (‰).
    pub gap_permille: u32,
}

impl AxiMemTiming {
    /// Always ready, answers as early as the rules allow (latency 1).
    pub const FAST: AxiMemTiming = AxiMemTiming {
        lat_min: 1,
        lat_max: 1,
        stall_permille: 0,
        gap_permille: 0,
    };

    /// `FAST` for `stall` = 0; else latency 1 to 24 cycles, with `stall`
    /// per mille of cycles split between not-ready and gaps.
    pub fn with_stalls(stall: u32) -> AxiMemTiming {
        if stall == 0 {
            return AxiMemTiming::FAST;
        }
        AxiMemTiming {
            lat_min: 1,
            lat_max: 24,
            stall_permille: stall / 2,
            gap_permille: stall / 2,
        }
    }
}

#[derive(Debug)]
struct WBurst {
    req: AxReq,
    beat: u32,
    due: u64,
    err: bool,
}

#[derive(Debug)]
struct RBurst {
    req: AxReq,
    beat: u32,
    due: u64,
    err: bool,
}

/// The memory and the slave's channel state.
#[derive(Debug)]
pub struct AxiMem {
    lanes: usize,
    rng: Rng,
    pub timing: AxiMemTiming,
    mem: HashMap<u64, Page>,
    poisoned: HashSet<u64>,
    cycle: u64,
    // Write side.
    aw_ready: bool,
    w_ready: bool,
    /// Accepted AWs, oldest first; the front one takes W beats.
    wq: VecDeque<WBurst>,
    /// Bs to send: (resp, due cycle), oldest first.
    bq: VecDeque<(u8, u64)>,
    b_offered: Option<u8>,
    aw_seen: Option<AxReq>,
    w_seen: Option<WBeat>,
    // Read side.
    ar_ready: bool,
    rq: VecDeque<RBurst>,
    r_offered: Option<RBeat>,
    ar_seen: Option<AxReq>,
    /// Breaches of the AXI rules by the master, with their cycle.
    pub violations: Vec<String>,
    /// AW, W beats, B, AR, R beats handshaken.
    pub aws: u64,
    pub w_beats: u64,
    pub bs: u64,
    pub ars: u64,
    pub r_beats: u64,
    /// Write bursts accepted and not yet answered (B not taken); the most
    /// seen at once.
    pub writes_out: usize,
    pub max_writes_out: usize,
    /// Read bursts accepted and not fully answered; the most seen at once.
    pub reads_out: usize,
    pub max_reads_out: usize,
    /// Cycles a B or an R beat was offered and not taken (the master
    /// holding BREADY / RREADY low).
    pub b_stalls: u64,
    pub r_stalls: u64,
    /// Cycle of the first AW and first W handshake (for latency figures).
    pub first_aw: Option<u64>,
    pub first_w: Option<u64>,
    pub first_ar: Option<u64>,
    pub first_r: Option<u64>,
}

impl AxiMem {
    /// A memory for a `lanes`-byte bus.
    pub fn new(lanes: usize, seed: u64, timing: AxiMemTiming) -> Self {
        assert!(lanes.is_power_of_two() && (1..=128).contains(&lanes));
        assert!(timing.lat_min >= 1 && timing.lat_min <= timing.lat_max);
        AxiMem {
            lanes,
            rng: Rng::new(seed),
            timing,
            mem: HashMap::new(),
            poisoned: HashSet::new(),
            cycle: 0,
            aw_ready: false,
            w_ready: false,
            wq: VecDeque::new(),
            bq: VecDeque::new(),
            b_offered: None,
            aw_seen: None,
            w_seen: None,
            ar_ready: false,
            rq: VecDeque::new(),
            r_offered: None,
            ar_seen: None,
            violations: Vec::new(),
            aws: 0,
            w_beats: 0,
            bs: 0,
            ars: 0,
            r_beats: 0,
            writes_out: 0,
            max_writes_out: 0,
            reads_out: 0,
            max_reads_out: 0,
            b_stalls: 0,
            r_stalls: 0,
            first_aw: None,
            first_w: None,
            first_ar: None,
            first_r: None,
        }
    }

    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// Cycles ticked.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Bytes at `addr..addr + n`.
    pub fn peek(&self, addr: u64, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let a = addr.wrapping_add(out.len() as u64);
            let off = (a % PAGE_BYTES) as usize;
            let k = (PAGE_BYTES as usize - off).min(n - out.len());
            match self.mem.get(&(a / PAGE_BYTES)) {
                Some(p) => out.extend_from_slice(&p.data[off..off + k]),
                None => out.extend((0..k as u64).map(|i| background(a.wrapping_add(i)))),
            }
        }
        out
    }

    /// Writes one byte (and remembers it was written).
    fn store(&mut self, a: u64, b: u8) {
        let p = self
            .mem
            .entry(a / PAGE_BYTES)
            .or_insert_with(|| Page::new(a / PAGE_BYTES));
        let i = (a % PAGE_BYTES) as usize;
        p.data[i] = b;
        p.set[i / 64] |= 1 << (i % 64);
    }

    /// Write bytes at `addr`.
    pub fn poke(&mut self, addr: u64, bytes: &[u8]) {
        for (i, &b) in bytes.iter().enumerate() {
            self.store(addr.wrapping_add(i as u64), b);
        }
    }

    /// Every byte written so far (by bursts or `poke`), in no order.
    pub fn written(&self) -> impl Iterator<Item = (u64, u8)> + '_ {
        self.mem.iter().flat_map(|(&n, p)| {
            (0..PAGE_BYTES as usize)
                .filter(|&i| p.set[i / 64] >> (i % 64) & 1 == 1)
                .map(move |i| (n * PAGE_BYTES + i as u64, p.data[i]))
        })
    }

    /// Answer every burst touching the 4 KiB page holding `addr` with
    /// SLVERR.
    pub fn poison_page(&mut self, addr: u64) {
        self.poisoned.insert(addr >> 12);
    }

    pub fn is_poisoned(&self, addr: u64) -> bool {
        self.poisoned.contains(&(addr >> 12))
    }

    /// True when any byte of `addr..addr + n` is in a poisoned page.
    pub fn range_poisoned(&self, addr: u64, n: u64) -> bool {
        n > 0 && (addr >> 12..=(addr + n - 1) >> 12).any(|p| self.poisoned.contains(&p))
    }

    /// Write one beat of a burst: the bytes whose `strb` bit is set, at
    /// the beat's address (`req.addr` + `beat` beats).
    pub fn write_burst(&mut self, req: &AxReq, beat: u32, data: &[u8], strb: u64) {
        let base = req.addr + beat as u64 * (1u64 << req.size);
        for (i, &b) in data.iter().enumerate() {
            if (strb >> i) & 1 == 1 {
                self.store(base + i as u64, b);
            }
        }
    }

    /// The bytes of one beat of a read burst.
    pub fn read_burst(&self, req: &AxReq, beat: u32) -> Vec<u8> {
        self.peek(req.addr + beat as u64 * (1u64 << req.size), self.lanes)
    }

    /// True when nothing is outstanding on either side.
    pub fn quiet(&self) -> bool {
        self.wq.is_empty()
            && self.bq.is_empty()
            && self.b_offered.is_none()
            && self.rq.is_empty()
            && self.r_offered.is_none()
    }

    fn latency(&mut self) -> u64 {
        let (lo, hi) = (self.timing.lat_min, self.timing.lat_max);
        lo as u64 + self.rng.below((hi - lo + 1) as u64)
    }

    fn check_req(&mut self, what: &str, r: &AxReq) {
        let c = self.cycle;
        let bytes = 1u64 << r.size;
        if r.burst != 1 {
            self.violations
                .push(format!("cycle {c}: {what} burst type {} not INCR", r.burst));
        }
        if bytes != self.lanes as u64 {
            self.violations.push(format!(
                "cycle {c}: {what} size {} is not the bus width {}",
                r.size, self.lanes
            ));
        }
        if r.addr % self.lanes as u64 != 0 {
            self.violations
                .push(format!("cycle {c}: {what} address {:#x} unaligned", r.addr));
        }
        let end = r.addr + (r.len as u64 + 1) * bytes;
        if (r.addr >> 12) != ((end - 1) >> 12) {
            self.violations.push(format!(
                "cycle {c}: {what} {:#x}+{} crosses a 4 KiB boundary",
                r.addr,
                (r.len as u64 + 1) * bytes
            ));
        }
    }

    fn poisoned_req(&self, r: &AxReq) -> bool {
        self.range_poisoned(r.addr, (r.len as u64 + 1) << r.size)
    }

    /// Drive AWREADY, WREADY, BVALID/BRESP for this cycle.
    pub fn drive_write<P: AxiWritePort + ?Sized>(&mut self, port: &mut P) {
        assert_eq!(port.lanes(), self.lanes, "memory and port widths differ");
        self.aw_ready = !self.rng.chance(self.timing.stall_permille);
        self.w_ready = !self.wq.is_empty() && !self.rng.chance(self.timing.stall_permille);
        port.set_aw_ready(self.aw_ready);
        port.set_w_ready(self.w_ready);
        if self.b_offered.is_none() {
            if let Some(&(resp, due)) = self.bq.front() {
                if due <= self.cycle && !self.rng.chance(self.timing.gap_permille) {
                    self.b_offered = Some(resp);
                    self.bq.pop_front();
                }
            }
        }
        port.set_b(self.b_offered);
    }

    /// After `eval()`: take what the coming edge takes.
    pub fn sample_write<P: AxiWritePort + ?Sized>(&mut self, port: &P) {
        let c = self.cycle;
        // AW.
        let aw = port.aw();
        if let Some(prev) = self.aw_seen.take() {
            if aw.as_ref() != Some(&prev) {
                self.violations.push(format!(
                    "cycle {c}: AW offered and not taken changed: {prev:?} -> {aw:?}"
                ));
            }
        }
        let mut new_aw = None;
        if let Some(r) = aw {
            if self.aw_ready {
                self.check_req("AW", &r);
                new_aw = Some(r);
            } else {
                self.aw_seen = Some(r);
            }
        }
        // W (to the oldest accepted AW, which was accepted at an earlier
        // edge: WREADY is low until then).
        let w = port.w();
        if let Some(prev) = self.w_seen.take() {
            if w.as_ref() != Some(&prev) {
                self.violations
                    .push(format!("cycle {c}: W beat offered and not taken changed"));
            }
        }
        if let Some(beat) = w {
            if self.w_ready {
                let b = self.wq.front_mut().expect("WREADY only with an AW");
                let (req, idx) = (b.req.clone(), b.beat);
                let is_last = idx == req.len as u32;
                if beat.last != is_last {
                    self.violations.push(format!(
                        "cycle {c}: WLAST {} on beat {idx} of a {}-beat burst at {:#x}",
                        beat.last,
                        req.len as u32 + 1,
                        req.addr
                    ));
                }
                b.beat += 1;
                self.write_burst(&req, idx, &beat.data, beat.strb);
                self.w_beats += 1;
                self.first_w.get_or_insert(c);
                if is_last {
                    let b = self.wq.pop_front().unwrap();
                    let due = b.due.max(c + 1);
                    self.bq.push_back((if b.err { 2 } else { 0 }, due));
                }
            } else {
                self.w_seen = Some(beat);
            }
        }
        if let Some(r) = new_aw {
            let due = c + self.latency();
            let err = self.poisoned_req(&r);
            self.wq.push_back(WBurst {
                req: r,
                beat: 0,
                due,
                err,
            });
            self.aws += 1;
            self.first_aw.get_or_insert(c);
            self.writes_out += 1;
            self.max_writes_out = self.max_writes_out.max(self.writes_out);
        }
        // B.
        if self.b_offered.is_some() {
            if port.b_ready() {
                self.b_offered = None;
                self.bs += 1;
                self.writes_out -= 1;
            } else {
                self.b_stalls += 1;
            }
        }
    }

    /// Drive ARREADY, RVALID and the R beat for this cycle.
    pub fn drive_read<P: AxiReadPort + ?Sized>(&mut self, port: &mut P) {
        assert_eq!(port.lanes(), self.lanes, "memory and port widths differ");
        self.ar_ready = !self.rng.chance(self.timing.stall_permille);
        port.set_ar_ready(self.ar_ready);
        if self.r_offered.is_none() {
            let gap = self.rng.chance(self.timing.gap_permille);
            if let Some(b) = self.rq.front() {
                if b.due <= self.cycle && !gap {
                    let beat = RBeat {
                        data: self.read_burst(&b.req, b.beat),
                        resp: if b.err { 2 } else { 0 },
                        last: b.beat == b.req.len as u32,
                    };
                    self.r_offered = Some(beat);
                }
            }
        }
        port.set_r(self.r_offered.as_ref());
    }

    /// After `eval()`: take what the coming edge takes.
    pub fn sample_read<P: AxiReadPort + ?Sized>(&mut self, port: &P) {
        let c = self.cycle;
        let ar = port.ar();
        if let Some(prev) = self.ar_seen.take() {
            if ar.as_ref() != Some(&prev) {
                self.violations.push(format!(
                    "cycle {c}: AR offered and not taken changed: {prev:?} -> {ar:?}"
                ));
            }
        }
        if let Some(r) = ar {
            if self.ar_ready {
                self.check_req("AR", &r);
                let due = c + self.latency();
                let err = self.poisoned_req(&r);
                self.rq.push_back(RBurst {
                    req: r,
                    beat: 0,
                    due,
                    err,
                });
                self.ars += 1;
                self.first_ar.get_or_insert(c);
                self.reads_out += 1;
                self.max_reads_out = self.max_reads_out.max(self.reads_out);
            } else {
                self.ar_seen = Some(r);
            }
        }
        if self.r_offered.is_some() && !port.r_ready() {
            self.r_stalls += 1;
        }
        if self.r_offered.is_some() && port.r_ready() {
            let beat = self.r_offered.take().unwrap();
            self.r_beats += 1;
            self.first_r.get_or_insert(c);
            let b = self.rq.front_mut().unwrap();
            b.beat += 1;
            if beat.last {
                self.rq.pop_front();
                self.reads_out -= 1;
            }
        }
    }

    /// The clock edge.
    pub fn tick(&mut self) {
        self.cycle += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_memory_and_poison() {
        let mut m = AxiMem::new(8, 1, AxiMemTiming::FAST);
        let before = m.peek(0x1000, 16);
        m.poke(0x1004, &[1, 2, 3]);
        let after = m.peek(0x1000, 16);
        assert_eq!(&after[4..7], &[1, 2, 3]);
        assert_eq!(after[..4], before[..4]);
        assert_eq!(after[7..], before[7..]);
        let req = AxReq {
            addr: 0x2000,
            len: 1,
            size: 3,
            burst: 1,
        };
        m.write_burst(&req, 1, &[9; 8], 0b1000_0001);
        assert_eq!(m.peek(0x2008, 1), vec![9]);
        assert_eq!(m.peek(0x200f, 1), vec![9]);
        assert_eq!(m.peek(0x2009, 1), vec![background(0x2009)]);
        assert_eq!(m.read_burst(&req, 1)[0], 9);
        m.poison_page(0x3fff);
        assert!(m.range_poisoned(0x2fff, 2) && !m.range_poisoned(0x2000, 0x1000));
        m.check_req(
            "AW",
            &AxReq {
                addr: 0xff8,
                len: 1,
                size: 3,
                burst: 1,
            },
        );
        assert_eq!(m.violations.len(), 1, "{:?}", m.violations);
    }
}
