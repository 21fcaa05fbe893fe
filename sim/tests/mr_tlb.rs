//! The memory-region TLB in Verilator, checked against `roce_sim::mr_model`
//! (the semantics of `roce_wire::mr`).
//!
//! Both builds run: `MrTlbW64` (64 MRs, 8 TLB entries, 256 page-table
//! entries: small, so random traffic thrashes the TLB) and `MrTlbW4096`
//! (the default build: 4096 MRs, 256 TLB entries, 8192 page-table
//! entries). Every outcome is compared beat for beat with the model, and a
//! separate property check states the security rule on every hardware
//! outcome: nothing the model refuses is granted, and no granted byte lies
//! outside the region.

#[macro_use]
mod mr_port;

use mr_port::{
    random_region, random_request, run_paced, run_requests, security_holds, MrPort, RunStats,
};
use roce_sim::model::Model;
use roce_sim::models::{MrTlbW4096, MrTlbW64};
use roce_sim::mr_model::{MrTable, Outcome, Region};
use roce_sim::rng::Rng;
use roce_wire::mr::{self, key, key_index, Access, Chunk, CmdError, MrState, Reject, Request};

/// Command opcodes of the block's `s_cmd_op`: `roce_regs::MrOp`, which
/// hw/src/mr/mr_tlb.rs `op` uses too.
const WRITE_PT: u32 = roce_regs::MrOp::WritePt as u32;
const REGISTER: u32 = roce_regs::MrOp::Register as u32;
const DEREGISTER: u32 = roce_regs::MrOp::Deregister as u32;
const INVALIDATE: u32 = roce_regs::MrOp::Invalidate as u32;

/// `mr_tlb` alone: the datapath port plus the command port.
trait Dut: MrPort + Model {
    /// The documented hit latency (the block's `HIT_LATENCY`).
    fn hit_latency() -> usize;
    #[allow(clippy::too_many_arguments)]
    fn drive_cmd(&mut self, valid: bool, op: u32, key: u32, r: &Region, index: u32, addr: u64);
    fn cmd_ready(&self) -> bool;
    fn cmd_done(&self) -> Option<bool>;
}

macro_rules! dut {
    ($t:ty) => {
        mr_port!($t);
        impl Dut for $t {
            fn hit_latency() -> usize {
                <$t>::LATENCY.expect("mr_tlb documents its hit latency")
            }
            fn drive_cmd(
                &mut self,
                valid: bool,
                op: u32,
                key: u32,
                r: &Region,
                index: u32,
                addr: u64,
            ) {
                self.set_s_cmd_valid(valid);
                self.set_s_cmd_op(op);
                self.set_s_cmd_key(key);
                self.set_s_cmd_pd(r.pd as u32);
                self.set_s_cmd_access(r.access.bits() as u32);
                self.set_s_cmd_addr(addr);
                self.set_s_cmd_len(r.length);
                self.set_s_cmd_shift(r.page_shift as u32);
                self.set_s_cmd_index(index);
            }
            fn cmd_ready(&self) -> bool {
                self.get_s_cmd_ready()
            }
            fn cmd_done(&self) -> Option<bool> {
                self.get_m_cmd_done().then(|| self.get_m_cmd_error())
            }
        }
    };
}
dut!(MrTlbW64);
dut!(MrTlbW4096);

const NO_REGION: Region = Region {
    pd: 0,
    access: Access::NONE,
    base: 0,
    length: 0,
    page_shift: 0,
    pt_base: 0,
};

/// A model, the DUT, and counters.
struct Bench<D: Dut> {
    dut: D,
    model: MrTable,
    rng: Rng,
    misses: u64,
    requests: u64,
    beats: u64,
}

impl<D: Dut> Bench<D> {
    fn new(seed: u64) -> Self {
        let (n, _, pt) = D::params();
        let mut b = Bench {
            dut: D::create(),
            model: MrTable::new(n, pt),
            rng: Rng::new(seed),
            misses: 0,
            requests: 0,
            beats: 0,
        };
        b.dut.drive_req(None);
        b.dut.drive_cmd(false, 0, 0, &NO_REGION, 0, 0);
        b.dut.set_grant_ready(true);
        b.dut.set_rst(true);
        b.dut.eval();
        b.dut.tick();
        b.dut.set_rst(false);
        b.dut.eval();
        let mut n = 0;
        while b.dut.busy() {
            b.dut.tick();
            b.dut.eval();
            n += 1;
            assert!(n < 100_000, "busy after reset never ends");
        }
        b
    }

    /// Run one command through the port, check its outcome against the
    /// model's, and return it.
    fn cmd(
        &mut self,
        op: u32,
        key: u32,
        r: &Region,
        index: u32,
        addr: u64,
    ) -> Result<(), CmdError> {
        let expect = match op {
            WRITE_PT => self.model.write_pt(index, addr),
            REGISTER => self.model.register(
                key,
                Region {
                    pt_base: index,
                    base: addr,
                    ..*r
                },
            ),
            DEREGISTER => self.model.deregister(key),
            INVALIDATE => self.model.invalidate(key),
            _ => unreachable!(),
        };
        self.dut.drive_cmd(true, op, key, r, index, addr);
        let mut waited = 0;
        loop {
            self.dut.eval();
            let ready = self.dut.cmd_ready();
            self.dut.tick();
            if ready {
                break;
            }
            waited += 1;
            assert!(waited < 100_000, "command never accepted");
        }
        self.dut.drive_cmd(false, 0, 0, &NO_REGION, 0, 0);
        self.dut.eval();
        let error = self
            .dut
            .cmd_done()
            .expect("m_cmd_done the cycle after acceptance");
        assert_eq!(
            error,
            expect.is_err(),
            "command {op} key {key:#x}: model says {expect:?}"
        );
        // Let an epoch-wrap sweep finish.
        let mut n = 0;
        while self.dut.busy() {
            self.dut.tick();
            self.dut.eval();
            n += 1;
            assert!(n < 100_000, "the epoch-wrap sweep never ends");
        }
        expect
    }

    fn register(&mut self, key: u32, r: Region) -> Result<(), CmdError> {
        self.cmd(REGISTER, key, &r, r.pt_base, r.base)
    }

    /// Send `reqs` and collect each request's outcome ([`run_requests`]).
    fn run(&mut self, reqs: &[Request], idle: u32, stall: u32) -> Vec<Outcome> {
        let mut stats = RunStats::default();
        let got = run_requests(&mut self.dut, &mut self.rng, reqs, idle, stall, &mut stats);
        self.tally(stats);
        got
    }

    fn tally(&mut self, stats: RunStats) {
        self.requests += stats.requests;
        self.beats += stats.beats;
        self.misses += stats.misses;
    }

    /// Run `reqs` and compare every outcome with the model's, after the
    /// security property; then the block's counters with the model's
    /// reject counts and with the miss pulses seen.
    fn check(&mut self, reqs: &[Request], idle: u32, stall: u32) -> Vec<Outcome> {
        let got = self.run(reqs, idle, stall);
        self.compare(reqs, got)
    }

    /// As `check`, request `i` presented `gaps[i]` cycles after request
    /// `i - 1` was taken, every beat taken at once.
    fn check_paced(&mut self, reqs: &[Request], gaps: &[u32]) -> Vec<Outcome> {
        let mut stats = RunStats::default();
        let got = run_paced(
            &mut self.dut,
            &mut self.rng,
            reqs,
            0,
            &mut stats,
            |_, i, w| w >= gaps[i],
        );
        self.tally(stats);
        self.compare(reqs, got)
    }

    fn compare(&mut self, reqs: &[Request], got: Vec<Outcome>) -> Vec<Outcome> {
        for (req, hw) in reqs.iter().zip(&got) {
            security_holds(&self.model, req, hw);
            assert_eq!(hw, &self.model.counted(req), "request {req:x?}");
        }
        self.check_counters();
        got
    }

    /// Every counter against the model (rejects) and the bench's count of
    /// `tlb_miss` pulses (the model has no TLB).
    fn check_counters(&mut self) {
        self.dut.eval();
        let hw = self.dut.counters();
        for r in Reject::ALL {
            assert_eq!(
                hw[r.code() as usize - 1],
                self.model.rejected(r),
                "{r:?} counter"
            );
        }
        assert_eq!(hw[5], self.misses, "TLB miss counter");
    }
}

/// Keys registered in a bench (index → current key).
struct Layout {
    keys: Vec<Option<u32>>,
}

fn random_layout<D: Dut>(b: &mut Bench<D>, count: usize) -> Layout {
    let (n, _, pt) = D::params();
    let mut keys = vec![None; n];
    for _ in 0..count {
        let index = b.rng.below(n as u64) as u32;
        let k = key(index, b.rng.next_u32() as u8);
        let r = random_region(&mut b.rng, pt as u64);
        b.register(k, r).expect("valid region");
        keys[index as usize] = Some(k);
    }
    Layout { keys }
}

fn fill_page_table<D: Dut>(b: &mut Bench<D>) {
    let (_, _, pt) = D::params();
    for i in 0..pt as u32 {
        let pa = b.rng.next_u64() & ((1 << mr::PA_BITS) - 1);
        b.cmd(WRITE_PT, 0, &NO_REGION, i, pa).unwrap();
    }
}

/// Random layouts, changed between batches (deregister, invalidate,
/// re-register under new tags and page sizes); random requests.
fn random_traffic<D: Dut>(test: &str, default_seed: u64, batches: usize, per_batch: usize) {
    let seed = Rng::seed_from_env(test, default_seed);
    let mut b = Bench::<D>::new(seed);
    fill_page_table(&mut b);
    let (n, _, pt) = D::params();
    let mut layout = random_layout(&mut b, n.min(48));
    let mut outcomes = [0usize; 7];
    for batch in 0..batches {
        let live: Vec<u32> = layout.keys.iter().flatten().copied().collect();
        let reqs: Vec<Request> = (0..per_batch)
            .map(|_| random_request(&mut b.rng, &b.model, &live))
            .collect();
        let (idle, stall) = if batch % 2 == 0 { (0, 0) } else { (200, 200) };
        for o in b.check(&reqs, idle, stall) {
            match o {
                Ok(c) => outcomes[if c.is_empty() { 6 } else { 0 }] += 1,
                Err(r) => outcomes[r.code() as usize] += 1,
            }
        }
        // Change the layout.
        for _ in 0..8 {
            let live: Vec<usize> = (0..n).filter(|&i| layout.keys[i].is_some()).collect();
            let index = if b.rng.chance(800) {
                live[b.rng.below(live.len() as u64) as usize]
            } else {
                b.rng.below(n as u64) as usize
            };
            let k = layout.keys[index].unwrap_or(key(index as u32, 0));
            match b.rng.below(4) {
                0 => {
                    let _ = b.cmd(DEREGISTER, k, &NO_REGION, 0, 0);
                }
                1 => {
                    let _ = b.cmd(INVALIDATE, k, &NO_REGION, 0, 0);
                }
                2 => {
                    let k = key(index as u32, b.rng.next_u32() as u8);
                    let r = random_region(&mut b.rng, pt as u64);
                    b.register(k, r).unwrap();
                    layout.keys[index] = Some(k);
                }
                _ => {
                    // The same region and key moved to another page-table
                    // run: translations cached for the old registration
                    // must not be used.
                    if let Some(e) = b.model.entry(k).filter(|e| e.state != MrState::Free) {
                        let r = Region {
                            pt_base: b.rng.below(pt as u64) as u32,
                            ..e.region
                        };
                        b.register(k, r).unwrap();
                    }
                }
            }
        }
    }
    eprintln!(
        "{test}: {} requests, {} beats, {} cycles, {} TLB misses; granted {}, zero-length {}, \
         rejected: bad key {}, invalidated {}, PD {}, access {}, bounds {}",
        b.requests,
        b.beats,
        b.dut.cycles(),
        b.misses,
        outcomes[0],
        outcomes[6],
        outcomes[1],
        outcomes[2],
        outcomes[3],
        outcomes[4],
        outcomes[5]
    );
    assert!(
        outcomes.iter().all(|&c| c > 0),
        "every outcome kind seen: {outcomes:?}"
    );
}

#[test]
fn random_requests_small_build() {
    random_traffic::<MrTlbW64>(
        "mr_tlb::random_requests_small_build",
        0x6d72_0001,
        100,
        1000,
    );
}

#[test]
fn random_requests_default_build() {
    random_traffic::<MrTlbW4096>(
        "mr_tlb::random_requests_default_build",
        0x6d72_0002,
        20,
        1000,
    );
}

/// One region with 4 KiB pages, mapped page i → PA 0x1_0000_0000 + i << 16.
fn simple<D: Dut>(b: &mut Bench<D>, index: u32, base: u64, length: u64) -> (u32, Region) {
    for i in 0..16u32 {
        b.cmd(
            WRITE_PT,
            0,
            &NO_REGION,
            32 + i,
            0x1_0000_0000 + ((i as u64) << 16),
        )
        .unwrap();
    }
    let r = Region {
        pd: 1,
        access: Access::REMOTE_READ.union(Access::REMOTE_WRITE),
        base,
        length,
        page_shift: 12,
        pt_base: 32,
    };
    let k = key(index, 0x3c);
    b.register(k, r).unwrap();
    (k, r)
}

fn write(k: u32, va: u64, len: u32) -> Request {
    Request {
        key: k,
        pd: 1,
        access: Access::REMOTE_WRITE,
        va,
        len,
    }
}

#[test]
fn boundaries() {
    let mut b = Bench::<MrTlbW64>::new(1);
    let base = 0x7000_0f00u64;
    let (k, r) = simple(&mut b, 3, base, 0x2100);
    let last = base + r.length - 1;
    // A region that ends at 2^64.
    let top = Region {
        base: 0u64.wrapping_sub(0x3000),
        length: 0x3000,
        ..r
    };
    let kt = key(4, 0x11);
    b.register(kt, top).unwrap();
    let cases: Vec<(Request, Outcome)> = vec![
        (
            write(k, last, 1),
            Ok(vec![Chunk {
                pa: 0x1_0002_0fff,
                len: 1,
            }]),
        ),
        (write(k, last + 1, 1), Err(Reject::OutOfBounds)),
        (write(k, last, 2), Err(Reject::OutOfBounds)),
        (write(k, base - 1, 1), Err(Reject::OutOfBounds)),
        (write(k, base - 1, 2), Err(Reject::OutOfBounds)),
        (
            write(k, base, r.length as u32),
            Ok(vec![
                Chunk {
                    pa: 0x1_0000_0f00,
                    len: 0x100,
                },
                Chunk {
                    pa: 0x1_0001_0000,
                    len: 0x1000,
                },
                Chunk {
                    pa: 0x1_0002_0000,
                    len: 0x1000,
                },
            ]),
        ),
        // Page-crossing by one byte either side.
        (
            write(k, 0x7000_0fff, 2),
            Ok(vec![
                Chunk {
                    pa: 0x1_0000_0fff,
                    len: 1,
                },
                Chunk {
                    pa: 0x1_0001_0000,
                    len: 1,
                },
            ]),
        ),
        (
            write(k, 0x7000_1000, 0x1000),
            Ok(vec![Chunk {
                pa: 0x1_0001_0000,
                len: 0x1000,
            }]),
        ),
        // Zero length: granted with no chunk, even with a bad key or VA.
        (write(k, last + 100, 0), Ok(vec![])),
        (write(key(63, 0), u64::MAX, 0), Ok(vec![])),
        (write(key(1000, 0), 0, 0), Ok(vec![])),
        // VA + length past 2^64: refused, never wrapped.
        (
            write(kt, u64::MAX, 1),
            Ok(vec![Chunk {
                pa: 0x1_0002_0fff,
                len: 1,
            }]),
        ),
        (write(kt, u64::MAX, 2), Err(Reject::OutOfBounds)),
        (
            write(kt, u64::MAX - 0xfff, 0xffff_ffff),
            Err(Reject::OutOfBounds),
        ),
        (
            write(kt, u64::MAX - 0x2fff, 0x3000),
            Ok(vec![
                Chunk {
                    pa: 0x1_0000_0000,
                    len: 0x1000,
                },
                Chunk {
                    pa: 0x1_0001_0000,
                    len: 0x1000,
                },
                Chunk {
                    pa: 0x1_0002_0000,
                    len: 0x1000,
                },
            ]),
        ),
        (
            write(k, 0x7000_0f00u64.wrapping_add(u64::MAX), 0x10),
            Err(Reject::OutOfBounds),
        ),
    ];
    let reqs: Vec<Request> = cases.iter().map(|c| c.0).collect();
    let got = b.check(&reqs, 0, 0);
    for ((req, expect), hw) in cases.iter().zip(&got) {
        assert_eq!(hw, expect, "{req:x?}");
    }
}

#[test]
fn every_reject_reason() {
    let mut b = Bench::<MrTlbW64>::new(2);
    let (k, r) = simple(&mut b, 5, 0x10_0000, 0x1000);
    let mut inv = key(6, 0x42);
    b.register(inv, r).unwrap();
    b.cmd(INVALIDATE, inv, &NO_REGION, 0, 0).unwrap();
    let ok = write(k, 0x10_0010, 8);
    let cases = [
        (
            Request {
                key: key(5, 0x3d),
                ..ok
            },
            Reject::BadKey,
        ),
        (
            Request {
                key: key(7, 0x3c),
                ..ok
            },
            Reject::BadKey,
        ), // free entry
        (
            Request {
                key: key(64, 0x3c),
                ..ok
            },
            Reject::BadKey,
        ), // beyond the table
        (
            Request {
                key: key(1 << 23, 0x3c),
                ..ok
            },
            Reject::BadKey,
        ),
        (Request { key: inv, ..ok }, Reject::InvalidatedKey),
        (Request { pd: 2, ..ok }, Reject::PdMismatch),
        (
            Request {
                access: Access::REMOTE_ATOMIC,
                ..ok
            },
            Reject::AccessDenied,
        ),
        (
            Request {
                access: Access::LOCAL_WRITE.union(Access::REMOTE_WRITE),
                ..ok
            },
            Reject::AccessDenied,
        ),
        (
            Request {
                va: 0x10_0ff9,
                ..ok
            },
            Reject::OutOfBounds,
        ),
        // Check order: a bad PD wins over a bad access and bounds.
        (
            Request {
                pd: 2,
                access: Access::ALL,
                va: 0,
                ..ok
            },
            Reject::PdMismatch,
        ),
    ];
    let reqs: Vec<Request> = cases.iter().map(|c| c.0).collect();
    let got = b.check(&reqs, 0, 0);
    for ((req, reason), hw) in cases.iter().zip(&got) {
        assert_eq!(hw, &Err(*reason), "{req:x?}");
    }
    // An invalidated key under another tag is a bad key; wrong-tag
    // invalidation is refused.
    inv ^= 1;
    assert_eq!(
        b.cmd(INVALIDATE, inv, &NO_REGION, 0, 0),
        Err(CmdError::KeyMismatch)
    );
    assert_eq!(
        b.check(&[Request { key: inv, ..ok }], 0, 0)[0],
        Err(Reject::BadKey)
    );
    assert!(b.check(&[ok], 0, 0)[0].is_ok());
}

#[test]
fn invalidate_then_use_and_reregister() {
    let mut b = Bench::<MrTlbW64>::new(3);
    let (k, r) = simple(&mut b, 9, 0x4000_0000, 0x4000);
    let req = write(k, 0x4000_1000, 0x10);
    // Warm the TLB, then invalidate: refused at once.
    assert_eq!(
        b.check(&[req, req], 0, 0)[1],
        Ok(vec![Chunk {
            pa: 0x1_0001_0000,
            len: 0x10
        }])
    );
    b.cmd(INVALIDATE, k, &NO_REGION, 0, 0).unwrap();
    assert_eq!(b.check(&[req], 0, 0)[0], Err(Reject::InvalidatedKey));
    // Re-register the index under a new tag with another page-table run:
    // the old key is bad, the new one translates through the new run (the
    // cached translation of the old registration must not hit).
    let k2 = key(9, 0x3d);
    b.register(k2, Region { pt_base: 40, ..r }).unwrap();
    assert_eq!(b.check(&[req], 0, 0)[0], Err(Reject::BadKey));
    assert_eq!(
        b.check(&[Request { key: k2, ..req }], 0, 0)[0],
        Ok(vec![Chunk {
            pa: 0x1_0009_0000,
            len: 0x10
        }])
    );
    // Same key re-registered (same tag) with another run: new translation.
    b.register(k2, Region { pt_base: 34, ..r }).unwrap();
    assert_eq!(
        b.check(&[Request { key: k2, ..req }], 0, 0)[0],
        Ok(vec![Chunk {
            pa: 0x1_0003_0000,
            len: 0x10
        }])
    );
    // Deregistered: bad key.
    b.cmd(DEREGISTER, k2, &NO_REGION, 0, 0).unwrap();
    assert_eq!(
        b.check(&[Request { key: k2, ..req }], 0, 0)[0],
        Err(Reject::BadKey)
    );
}

#[test]
fn epoch_wrap_sweeps_the_tlb() {
    let mut b = Bench::<MrTlbW64>::new(4);
    let (k, r) = simple(&mut b, 2, 0x9000_0000, 0x1000);
    let req = write(k, 0x9000_0000, 4);
    // 600 re-registrations alternating between two page-table entries; a
    // stale translation would show up as the other PA.
    for i in 0..600u32 {
        b.register(
            k,
            Region {
                pt_base: 32 + (i % 2),
                ..r
            },
        )
        .unwrap();
        let pa = 0x1_0000_0000 + (((i % 2) as u64) << 16);
        assert_eq!(
            b.check(&[req, req], 0, 0),
            vec![Ok(vec![Chunk { pa, len: 4 }]); 2],
            "i={i}"
        );
    }
}

#[test]
fn commands_refused_leave_tables_unchanged() {
    let mut b = Bench::<MrTlbW64>::new(5);
    let (k, r) = simple(&mut b, 1, 0x5000, 0x1000);
    let bad = [
        (
            Region {
                page_shift: 11,
                ..r
            },
            CmdError::BadPageShift,
        ),
        (
            Region {
                page_shift: 22,
                ..r
            },
            CmdError::BadPageShift,
        ),
        (
            Region {
                base: u64::MAX,
                length: 2,
                ..r
            },
            CmdError::RegionWraps,
        ),
        (Region { pt_base: 256, ..r }, CmdError::BadIndex),
    ];
    for (region, err) in bad {
        assert_eq!(b.register(k, region), Err(err));
    }
    assert_eq!(b.register(key(64, 0), r), Err(CmdError::BadIndex));
    assert_eq!(
        b.cmd(WRITE_PT, 0, &NO_REGION, 256, 0),
        Err(CmdError::BadIndex)
    );
    assert_eq!(
        b.cmd(WRITE_PT, 0, &NO_REGION, 33, 1 << 52),
        Err(CmdError::PaTooWide)
    );
    assert_eq!(
        b.cmd(INVALIDATE, key(70, 0), &NO_REGION, 0, 0),
        Err(CmdError::BadIndex)
    );
    // The region still translates as registered.
    assert_eq!(
        b.check(&[write(k, 0x5ff0, 0x10)], 0, 0)[0],
        Ok(vec![Chunk {
            pa: 0x1_0000_0ff0,
            len: 0x10
        }])
    );
}

#[test]
fn tlb_thrash_and_hits() {
    let mut b = Bench::<MrTlbW64>::new(6);
    // 8 sets: pages p and p + 8 of one region share a set.
    let (k, _) = simple(&mut b, 0, 0x20_0000, 0x10000);
    let a = write(k, 0x20_0010, 16);
    let c = write(k, 0x20_8010, 16);
    // One at a time: a request right behind a miss may still read the set
    // as it was before the fill (a stale but correct translation).
    let before = b.misses;
    let got: Vec<Outcome> = [a, c, a, c, a, c, a, c]
        .iter()
        .map(|r| b.check(&[*r], 0, 0).remove(0))
        .collect();
    assert_eq!(
        b.misses - before,
        8,
        "alternating pages of one set miss every time"
    );
    assert_eq!(
        got[6],
        Ok(vec![Chunk {
            pa: 0x1_0000_0010,
            len: 16
        }])
    );
    assert_eq!(
        got[7],
        Ok(vec![Chunk {
            pa: 0x1_0008_0010,
            len: 16
        }])
    );
    b.check(&[a], 0, 0);
    let before = b.misses;
    b.check(&[a; 50], 0, 0);
    assert_eq!(b.misses - before, 0, "a cached page hits");
    // Every page of the region, twice: with 8 sets each page has been
    // evicted when it comes round again; only page 0 is cached already.
    let sweep: Vec<Request> = (0..32)
        .map(|i| write(k, 0x20_0000 + ((i % 16) << 12), 8))
        .collect();
    let before = b.misses;
    for r in &sweep {
        b.check(&[*r], 0, 0);
    }
    assert_eq!(b.misses - before, 31);
}

/// One request alone on an idle block: cycles from its accepting edge to
/// its first beat's valid, and that beat (every beat of it is taken).
fn first_beat<D: Dut>(b: &mut Bench<D>, r: Request) -> (u64, (u64, u32, bool, u8)) {
    b.dut.drive_req(Some(&r));
    b.dut.eval();
    assert!(b.dut.req_ready());
    b.dut.tick();
    b.dut.drive_req(None);
    let mut n = 0;
    b.dut.eval();
    while b.dut.grant().is_none() {
        b.misses += b.dut.tlb_miss() as u64;
        b.dut.tick();
        b.dut.eval();
        n += 1;
        assert!(n < 10_000, "{r:x?}: no beat");
    }
    let first = b.dut.grant().unwrap();
    // Take every beat of it (ready is high); a request has at most one
    // chunk per 4 KiB, so an endless run of beats is a failure, not a hang.
    let mut beats = 1u64;
    while !b.dut.grant().is_some_and(|g| g.2) {
        b.misses += b.dut.tlb_miss() as u64;
        b.dut.tick();
        b.dut.eval();
        beats += b.dut.grant().is_some() as u64;
        assert!(
            beats <= 2 + (r.len as u64 >> 12),
            "{r:x?}: more beats than 4 KiB pieces"
        );
    }
    b.dut.tick();
    b.dut.eval();
    (n, first)
}

/// Hit latency, miss latency and hit throughput from cycle counts; printed
/// for docs/BENCHMARKS.md and checked against the goals.
fn timing<D: Dut>(name: &str) {
    let mut b = Bench::<D>::new(7);
    let (k, _) = simple(&mut b, 3, 0x30_0000, 0x4000);
    let req = write(k, 0x30_0100, 64);
    // Latency of one request: cycles from its accepting edge to valid.
    let latency = |b: &mut Bench<D>, r: Request| -> u64 { first_beat(b, r).0 };
    let miss = latency(&mut b, req);
    let hit = latency(&mut b, req);
    let cross = latency(&mut b, write(k, 0x30_0ff0, 32)); // page 0 hit, page 1 miss
    let cross_hit = latency(&mut b, write(k, 0x30_0ff0, 32));
    // Throughput: back-to-back hits over two cached pages, no stalls.
    let reqs: Vec<Request> = (0..10_000u64)
        .map(|i| write(k, 0x30_0000 + (i % 2) * 0x1000 + (i % 64), 64))
        .collect();
    let start = b.dut.cycles();
    b.check(&reqs, 0, 0);
    let cycles = b.dut.cycles() - start;
    let rate = reqs.len() as f64 / cycles as f64;
    // Rejects back to back: on the cached pages under another PD (TLB
    // hits inside one page: S3 writes them without the engine), and under
    // the key of a free entry (TLB misses, which the flow control takes as
    // hand-overs until the engine has seen the reject: one bubble each).
    let hit_rej: Vec<Request> = (0..1000u64)
        .map(|i| Request {
            pd: 2,
            ..write(k, 0x30_0000 + (i % 2) * 0x1000, 64)
        })
        .collect();
    // Cycles for a run of requests that all get one reject.
    let rejects = |b: &mut Bench<D>, reqs: &[Request], why: Reject| -> u64 {
        let start = b.dut.cycles();
        assert!(b.check(reqs, 0, 0).iter().all(|o| *o == Err(why)));
        b.dut.cycles() - start
    };
    let hit_rej_cycles = rejects(&mut b, &hit_rej, Reject::PdMismatch);
    let miss_rej: Vec<Request> = (0..1000u64)
        .map(|i| write(key(40, 0), 0x30_0000 + (i % 16) * 0x1000, 64))
        .collect();
    let miss_rej_cycles = rejects(&mut b, &miss_rej, Reject::BadKey);
    eprintln!(
        "{name}: hit latency {hit} cycles, miss latency {miss} cycles, two-page request: \
         {cross} cycles to the first chunk after one miss, {cross_hit} on hits; \
         {} requests in {cycles} cycles = {rate:.4} requests/cycle on hits; \
         rejects: {} on TLB hits in {hit_rej_cycles} cycles, {} on misses in \
         {miss_rej_cycles} cycles",
        reqs.len(),
        hit_rej.len(),
        miss_rej.len()
    );
    assert!(
        hit_rej_cycles <= hit_rej.len() as u64 + 8,
        "one reject per cycle on TLB hits"
    );
    assert!(
        miss_rej_cycles <= 2 * miss_rej.len() as u64 + 8,
        "one reject per two cycles on misses"
    );
    // The goal is <= 2 cycles (met; docs/BENCHMARKS.md). Checked
    // against what the block documents.
    assert_eq!(hit as usize, D::hit_latency(), "documented hit latency");
    assert!(miss > hit);
    assert!(
        cycles <= reqs.len() as u64 + 8,
        "one request per cycle on hits"
    );
}

/// Every hit takes the hit latency, wherever it lies in its region: in the
/// partly covered 4 KiB at either end of a region that starts and ends
/// off 4 KiB boundaries, and across a 4 KiB boundary inside a larger
/// page; a hit that ends beyond the region is refused as fast. Each
/// request is first run against the model (its outcome checked, its 4 KiB
/// cached), then alone, timed.
fn hits_anywhere<D: Dut>() {
    let mut b = Bench::<D>::new(9);
    // The page table of `simple` (entries 32.., 64 KiB apart), and a region
    // of 64 KiB pages over it: base and limit inside a 4 KiB.
    simple(&mut b, 3, 0x30_0000, 0x4000);
    let r = Region {
        pd: 1,
        access: Access::REMOTE_WRITE,
        base: 0x40_0f00,
        length: 0x2_0000,
        page_shift: 16,
        pt_base: 32,
    };
    let k = key(5, 0x77);
    b.register(k, r).unwrap();
    let limit = r.base + r.length;
    let cases = [
        (
            "first 4 KiB, partly in the region",
            write(k, r.base, 0x40),
            true,
        ),
        (
            "across 4 KiB in a 64 KiB page",
            write(k, 0x40_1ff0, 0x20),
            true,
        ),
        (
            "last 4 KiB, partly in the region",
            write(k, limit - 0x40, 0x40),
            true,
        ),
        (
            "a hit ending beyond the region",
            write(k, limit - 0x20, 0x40),
            false,
        ),
    ];
    for (what, req, granted) in cases {
        assert_eq!(b.check(&[req], 0, 0)[0].is_ok(), granted, "{what}");
        let misses = b.misses;
        let (n, beat) = first_beat(&mut b, req);
        assert_eq!(b.misses, misses, "{what}: a hit");
        assert_eq!(n as usize, D::hit_latency(), "{what}: latency");
        let expect = if granted {
            0
        } else {
            Reject::OutOfBounds.code()
        };
        assert_eq!(beat.3, expect, "{what}: reason");
        assert!(beat.2, "{what}: one beat");
    }
}

#[test]
fn every_hit_has_the_hit_latency() {
    hits_anywhere::<MrTlbW64>();
    hits_anywhere::<MrTlbW4096>();
}

#[test]
fn latency_and_throughput_small_build() {
    timing::<MrTlbW64>("mr_tlb_w64");
}

#[test]
fn latency_and_throughput_default_build() {
    timing::<MrTlbW4096>("mr_tlb_w4096");
}

/// A request arriving while the engine reads the TLB for a further page
/// of an earlier request (`Look`) must read its own TLB set, not take the
/// engine's word: the words the engine reads here belong to the same
/// region, with the same page-number bits above the set (the part the tag
/// compares), so a request given one would hit with another page's frame.
/// Every page's translation is cached; a three-page hit, then a one-page
/// hit on another page of the region, presented 0..24 cycles after the
/// first is taken, so one of them arrives at each of the engine's states.
fn beside_the_engines_tlb_reads<D: Dut>() {
    let mut b = Bench::<D>::new(9);
    let (k, _) = simple(&mut b, 5, 0x30_0000, 0x8000);
    for p in 0..8 {
        b.check(&[write(k, 0x30_0000 + (p << 12), 8)], 0, 0);
    }
    let misses = b.misses;
    let a = write(k, 0x30_0ff0, 0x1020); // pages 0, 1, 2
    for gap in 0..24u32 {
        for page in [3u64, 5, 7] {
            let c = write(k, 0x30_0000 + (page << 12) + 0x40 + gap as u64, 8);
            // (`check_paced` compares both outcomes with the model's.)
            let got = b.check_paced(&[a, c], &[0, gap]);
            assert!(
                matches!((&got[0], &got[1]), (Ok(x), Ok(y)) if x.len() == 3 && y.len() == 1),
                "gap {gap}, page {page}: {got:x?}"
            );
        }
    }
    assert_eq!(b.misses, misses, "every page was cached: no walk");
}

#[test]
fn requests_beside_the_engines_tlb_reads() {
    beside_the_engines_tlb_reads::<MrTlbW64>();
    beside_the_engines_tlb_reads::<MrTlbW4096>();
}

#[test]
fn keys_select_their_entry() {
    // The model's key layout is the hardware's: index << 8 | tag.
    let mut b = Bench::<MrTlbW64>::new(8);
    let (k, _) = simple(&mut b, 0x2a, 0x1000, 0x1000);
    assert_eq!(key_index(k), 0x2a);
    assert!(b.check(&[write(k, 0x1000, 1)], 0, 0)[0].is_ok());
}
