//! Memory regions programmed through the register map (issue 6, item 3):
//! `mr_ctrl` (the CSR block driving `mr_tlb`) in Verilator. Every region,
//! page-table entry, deregistration and invalidation goes in as AXI4-Lite
//! writes to the `roce_regs::mr` block (AXI master BFM with random gaps
//! and backpressure), either by the firmware's driver (`roce_fw::mr` over
//! the BFM) or by raw register writes; requests then go in on the
//! datapath port and every outcome is compared beat for beat with
//! `roce_sim::mr_model` (the rules of `roce_wire::mr`), after a separate
//! check of the security rule on the hardware's outcome; the table's
//! counters are read back through `mr.counter` and compared with the
//! model's reject counts.

#[macro_use]
mod mr_port;

use mr_port::{random_region, random_request, run_requests, security_holds, MrPort, RunStats};
use roce_fw::mr::{self as fw, MrError};
use roce_fw::Regs;
use roce_regs::{mr as mrr, MrCounter, MrOp};
use roce_sim::axil::{AxilMaster, AxilSlave, Timing, OKAY};
use roce_sim::model::Model;
use roce_sim::models::{MrCtrlW4096, MrCtrlW64};
use roce_sim::mr_model::{MrTable, Outcome, Region};
use roce_sim::rng::Rng;
use roce_wire::mr::{self, key, key_index, Access, CmdError, MrState, Reject, Request};

/// `mr_ctrl`: the datapath port, and the AXI4-Lite slave the commands go in on.
trait Dut: MrPort + AxilSlave {}

mr_port!(MrCtrlW64);
mr_port!(MrCtrlW4096);
impl Dut for MrCtrlW64 {}
impl Dut for MrCtrlW4096 {}

/// The DUT, the AXI master, the model.
struct Bench<D: Dut> {
    dut: D,
    m: AxilMaster,
    model: MrTable,
    rng: Rng,
    misses: u64,
    requests: u64,
    commands: u64,
}

impl<D: Dut> Regs for Bench<D> {
    fn read32(&mut self, offset: u32) -> u32 {
        let (d, resp) = self.m.read_now(&mut self.dut, offset);
        assert_eq!(resp, OKAY, "read {offset:#x}");
        d
    }
    fn write32(&mut self, offset: u32, value: u32) {
        let resp = self.m.write_now(&mut self.dut, offset, value, 0xF);
        assert_eq!(resp, OKAY, "write {offset:#x}");
    }
}

impl<D: Dut> Bench<D> {
    /// Reset; the table is still clearing itself when this returns
    /// (commands wait for it).
    fn new(test: &str, default_seed: u64, timing: Timing) -> Self {
        let seed = Rng::seed_from_env(test, default_seed);
        let (n, _, pt) = D::params();
        let mut b = Bench {
            dut: D::create(),
            m: AxilMaster::new(seed ^ 0xA11, timing),
            model: MrTable::new(n, pt),
            rng: Rng::new(seed),
            misses: 0,
            requests: 0,
            commands: 0,
        };
        b.dut.drive_req(None);
        b.dut.set_grant_ready(true);
        b.dut.set_rst(true);
        for _ in 0..3 {
            b.m.step(&mut b.dut);
        }
        b.dut.set_rst(false);
        b
    }

    fn status(&mut self) -> u32 {
        self.read32(mrr::status::ADDR)
    }

    /// Let the table finish clearing (after reset).
    fn settle(&mut self) {
        self.dut.eval();
        let mut n = 0;
        while self.dut.busy() {
            self.dut.tick();
            self.dut.eval();
            n += 1;
            assert!(n < 100_000, "busy never ends");
        }
    }

    /// Compare a command's outcome through the firmware driver with the
    /// model's.
    fn expect(&mut self, what: &str, got: Result<(), MrError>, want: Result<(), CmdError>) {
        self.commands += 1;
        match (got, want) {
            (Ok(()), Ok(())) | (Err(MrError::Refused), Err(_)) => {}
            (g, w) => panic!("{what}: hardware {g:?}, model {w:?}"),
        }
    }

    fn write_pt(&mut self, index: u32, pa: u64) -> Result<(), CmdError> {
        let want = self.model.write_pt(index, pa);
        let got = fw::write_pt(self, index, pa);
        self.expect(&format!("write_pt {index} {pa:#x}"), got, want);
        want
    }

    fn register(&mut self, k: u32, r: Region) -> Result<(), CmdError> {
        let want = self.model.register(k, r);
        let got = fw::register_mr(self, k, &r);
        self.expect(&format!("register {k:#x} {r:x?}"), got, want);
        want
    }

    fn deregister(&mut self, k: u32) -> Result<(), CmdError> {
        let want = self.model.deregister(k);
        let got = fw::deregister_mr(self, k);
        self.expect(&format!("deregister {k:#x}"), got, want);
        want
    }

    fn invalidate(&mut self, k: u32) -> Result<(), CmdError> {
        let want = self.model.invalidate(k);
        let got = fw::invalidate_mr(self, k);
        self.expect(&format!("invalidate {k:#x}"), got, want);
        want
    }

    /// Send `reqs` and collect each request's outcome ([`run_requests`]),
    /// the command port idle.
    fn run(&mut self, reqs: &[Request], idle: u32, stall: u32) -> Vec<Outcome> {
        self.settle();
        let mut stats = RunStats::default();
        let got = run_requests(&mut self.dut, &mut self.rng, reqs, idle, stall, &mut stats);
        self.dut.set_grant_ready(true);
        self.requests += stats.requests;
        self.misses += stats.misses;
        got
    }

    /// Run `reqs`, check the security rule and the model on every outcome,
    /// then the counters.
    fn check(&mut self, reqs: &[Request], idle: u32, stall: u32) -> Vec<Outcome> {
        let got = self.run(reqs, idle, stall);
        for (req, hw) in reqs.iter().zip(&got) {
            security_holds(&self.model, req, hw);
            assert_eq!(hw, &self.model.counted(req), "request {req:x?}");
        }
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
        // The same counters through the register map.
        for r in Reject::ALL {
            let c = MrCounter::of(r);
            let v = self.read32(mrr::counter::addr(c.value()));
            assert_eq!(v as u64, self.model.rejected(r), "mr.counter[{}]", c.name());
        }
        let v = self.read32(mrr::counter::addr(MrCounter::TlbMiss.value()));
        assert_eq!(v as u64, self.misses, "mr.counter[mr-tlb-miss]");
        got
    }

    /// One request; its outcome (checked).
    fn one(&mut self, req: Request) -> Outcome {
        self.check(&[req], 0, 0).remove(0)
    }
}

/// The whole flow through the CSRs: page tables, a random layout, random
/// traffic, then rounds of deregister / invalidate / re-register with new
/// tags, each followed by requests for the keys it touched (shown
/// rejected with the right reason) and random traffic.
fn programmed_through_csrs<D: Dut>(
    test: &str,
    seed: u64,
    pt_used: usize,
    regions: usize,
    rounds: usize,
    per_round: usize,
) {
    let mut b = Bench::<D>::new(test, seed, Timing::RANDOM);
    let (n, _, _) = D::params();
    for i in 0..pt_used as u32 {
        let pa = b.rng.next_u64() & ((1 << mr::PA_BITS) - 1);
        b.write_pt(i, pa).unwrap();
    }
    let mut keys: Vec<Option<u32>> = vec![None; n];
    for _ in 0..regions {
        let index = b.rng.below(n as u64) as u32;
        let k = key(index, b.rng.next_u32() as u8);
        let r = random_region(&mut b.rng, (pt_used - 13) as u64);
        b.register(k, r).expect("a valid region");
        keys[index as usize] = Some(k);
    }
    let mut seen = [0usize; 7];
    for round in 0..rounds {
        let live: Vec<u32> = keys.iter().flatten().copied().collect();
        let reqs: Vec<Request> = (0..per_round)
            .map(|_| random_request(&mut b.rng, &b.model, &live))
            .collect();
        let (idle, stall) = if round % 2 == 0 { (0, 0) } else { (200, 200) };
        for o in b.check(&reqs, idle, stall) {
            match o {
                Ok(c) => seen[if c.is_empty() { 6 } else { 0 }] += 1,
                Err(r) => seen[r.code() as usize] += 1,
            }
        }
        // Change the layout through the CSRs and show each change.
        for _ in 0..6 {
            let live: Vec<usize> = (0..n).filter(|&i| keys[i].is_some()).collect();
            let index = live[b.rng.below(live.len() as u64) as usize];
            let k = keys[index].unwrap();
            let e = *b.model.entry(k).unwrap();
            let probe = Request {
                key: k,
                pd: e.region.pd,
                access: Access::NONE,
                va: e.region.base,
                len: 1,
            };
            match b.rng.below(3) {
                0 => {
                    b.deregister(k).unwrap();
                    assert_eq!(b.one(probe), Err(Reject::BadKey), "deregistered {k:#x}");
                    keys[index] = None;
                }
                1 if e.state == MrState::Valid => {
                    b.invalidate(k).unwrap();
                    assert_eq!(
                        b.one(probe),
                        Err(Reject::InvalidatedKey),
                        "invalidated {k:#x}"
                    );
                    // Invalidating twice is refused.
                    assert_eq!(b.invalidate(k), Err(CmdError::KeyMismatch));
                    // Half stay invalidated (random traffic hits them).
                }
                1 => {
                    // Re-register an invalidated index under a new tag at
                    // another page-table run: the old key and its cached
                    // translations must not come back.
                    let k2 = key(index as u32, (k as u8).wrapping_add(1));
                    let r = random_region(&mut b.rng, (pt_used - 13) as u64);
                    b.register(k2, r).unwrap();
                    assert_eq!(b.one(probe), Err(Reject::BadKey), "old key {k:#x}");
                    keys[index] = Some(k2);
                }
                _ => {
                    let k2 = key(index as u32, b.rng.next_u32() as u8);
                    let r = random_region(&mut b.rng, (pt_used - 13) as u64);
                    b.register(k2, r).unwrap();
                    keys[index] = Some(k2);
                }
            }
            if keys.iter().all(|k| k.is_none()) {
                let index = b.rng.below(n as u64) as u32;
                let k = key(index, 7);
                let r = random_region(&mut b.rng, (pt_used - 13) as u64);
                b.register(k, r).unwrap();
                keys[index as usize] = Some(k);
            }
        }
    }
    eprintln!(
        "{test}: {} commands through the CSRs, {} requests, {} cycles, {} TLB misses; \
         granted {}, zero-length {}, rejected: bad key {}, invalidated {}, PD {}, access {}, \
         bounds {}",
        b.commands,
        b.requests,
        b.dut.cycles(),
        b.misses,
        seen[0],
        seen[6],
        seen[1],
        seen[2],
        seen[3],
        seen[4],
        seen[5]
    );
    assert!(
        seen.iter().all(|&c| c > 0),
        "every outcome kind seen: {seen:?}"
    );
}

#[test]
fn programmed_through_csrs_small_build() {
    programmed_through_csrs::<MrCtrlW64>(
        "mr_ctrl::programmed_through_csrs_small_build",
        0x6d63_0001,
        256,
        40,
        12,
        1500,
    );
}

#[test]
fn programmed_through_csrs_default_build() {
    programmed_through_csrs::<MrCtrlW4096>(
        "mr_ctrl::programmed_through_csrs_default_build",
        0x6d63_0002,
        300,
        200,
        4,
        2000,
    );
}

/// Raw register writes (a host without the firmware): write the `mr`
/// registers, ring the doorbell, and return the status once answered.
fn raw<D: Dut>(b: &mut Bench<D>, regs: &[(u32, u32)]) -> u32 {
    for &(a, v) in regs {
        b.write32(a, v);
    }
    let seq = mrr::status::SEQ.get(b.status());
    b.write32(mrr::doorbell::ADDR, mrr::doorbell::GO.val(1));
    for _ in 0..10_000 {
        let s = b.status();
        if mrr::status::BUSY.get(s) == 0 {
            assert_eq!(mrr::status::SEQ.get(s), (seq + 1) & 0xFFFF, "answered once");
            return s;
        }
    }
    panic!("command never answered");
}

/// The REGISTER registers for `region` under `k`.
fn reg_words(k: u32, r: &Region) -> Vec<(u32, u32)> {
    vec![
        (mrr::op::ADDR, MrOp::Register.value()),
        (mrr::key::ADDR, k),
        (mrr::pd::ADDR, r.pd as u32),
        (mrr::access::ADDR, r.access.bits() as u32),
        (mrr::va_lo::ADDR, r.base as u32),
        (mrr::va_hi::ADDR, (r.base >> 32) as u32),
        (mrr::len_lo::ADDR, r.length as u32),
        (mrr::len_hi::ADDR, (r.length >> 32) as u32),
        (mrr::page_shift::ADDR, r.page_shift as u32),
        (mrr::pt_index::ADDR, r.pt_base),
    ]
}

const GOOD: Region = Region {
    pd: 3,
    access: Access::REMOTE_WRITE,
    base: 0x10_0000,
    length: 0x3000,
    page_shift: 12,
    pt_base: 8,
};

fn write_req(k: u32, r: &Region) -> Request {
    Request {
        key: k,
        pd: r.pd,
        access: Access::REMOTE_WRITE,
        va: r.base + 0xFF0,
        len: 0x20,
    }
}

/// Bad input through the registers: each refused with `ERROR`, counted in
/// `SEQ`, nothing changed (the model agrees, and a probe request shows
/// the table as the model has it).
#[test]
fn refused_commands_through_csrs() {
    let mut b = Bench::<MrCtrlW64>::new("mr_ctrl::refused", 3, Timing::RANDOM);
    let (n, _, pt) = <MrCtrlW64 as MrPort>::params();
    for i in 0..16 {
        b.write_pt(i, 0x4000_0000 + ((i as u64) << 20)).unwrap();
    }
    let k = key(5, 0x5A);
    b.register(k, GOOD).unwrap();
    let probe = write_req(k, &GOOD);
    let granted = b.one(probe);
    assert!(granted.is_ok());
    let error = |s: u32| mrr::status::ERROR.get(s) == 1;
    // Values too wide for the table: refused at the doorbell, never
    // truncated (the low bits of each would be a valid command).
    let wide: [(u32, u32); 4] = [
        (mrr::op::ADDR, 4 + MrOp::Deregister.value()),
        (mrr::pd::ADDR, 0x1_0000 | 3),
        (mrr::access::ADDR, 0x10 | 4),
        (mrr::page_shift::ADDR, 32 + 12),
    ];
    for (a, v) in wide {
        let mut words = reg_words(key(6, 1), &GOOD);
        words.retain(|w| w.0 != a);
        words.push((a, v));
        if a == mrr::op::ADDR {
            words = vec![(mrr::key::ADDR, k), (a, v)];
        }
        let s = raw(&mut b, &words);
        assert!(error(s), "{a:#x} = {v:#x} accepted");
    }
    // A wide PD is not checked for an op that does not use it.
    let s = raw(
        &mut b,
        &[
            (mrr::pd::ADDR, 0x1_0000),
            (mrr::op::ADDR, MrOp::Deregister.value()),
            (mrr::key::ADDR, key(7, 0)),
        ],
    );
    assert!(!error(s), "deregister refused for a PD it does not use");
    b.model.deregister(key(7, 0)).unwrap();
    // Refusals of the table itself, each checked against the model.
    let top = Region {
        base: u64::MAX - 0xFFF,
        length: 0x2000,
        ..GOOD
    };
    type Case = (&'static str, Vec<(u32, u32)>, Result<(), CmdError>);
    let cases: Vec<Case> = vec![
        (
            "shift 11",
            reg_words(
                key(6, 1),
                &Region {
                    page_shift: 11,
                    ..GOOD
                },
            ),
            Err(CmdError::BadPageShift),
        ),
        (
            "shift 22",
            reg_words(
                key(6, 1),
                &Region {
                    page_shift: 22,
                    ..GOOD
                },
            ),
            Err(CmdError::BadPageShift),
        ),
        (
            "index beyond the table",
            reg_words(key(n as u32, 1), &GOOD),
            Err(CmdError::BadIndex),
        ),
        (
            "pt base beyond the table",
            reg_words(
                key(6, 1),
                &Region {
                    pt_base: pt as u32,
                    ..GOOD
                },
            ),
            Err(CmdError::BadIndex),
        ),
        (
            "wraps past 2^64",
            reg_words(key(6, 1), &top),
            Err(CmdError::RegionWraps),
        ),
        (
            "PA of 2^52",
            vec![
                (mrr::op::ADDR, MrOp::WritePt.value()),
                (mrr::pt_index::ADDR, 9),
                (mrr::pa_lo::ADDR, 0),
                (mrr::pa_hi::ADDR, 1 << (mr::PA_BITS - 32)),
            ],
            Err(CmdError::PaTooWide),
        ),
        (
            "page-table entry beyond the table",
            vec![
                (mrr::op::ADDR, MrOp::WritePt.value()),
                (mrr::pt_index::ADDR, pt as u32),
                (mrr::pa_hi::ADDR, 0),
            ],
            Err(CmdError::BadIndex),
        ),
        (
            "invalidate under another tag",
            vec![
                (mrr::op::ADDR, MrOp::Invalidate.value()),
                (mrr::key::ADDR, k ^ 1),
            ],
            Err(CmdError::KeyMismatch),
        ),
    ];
    for (what, words, want) in cases {
        let model = match words[0].1 {
            x if x == MrOp::WritePt.value() => {
                let idx = words.iter().find(|w| w.0 == mrr::pt_index::ADDR).unwrap().1;
                b.model.write_pt(
                    idx,
                    (words.iter().find(|w| w.0 == mrr::pa_hi::ADDR).unwrap().1 as u64) << 32,
                )
            }
            x if x == MrOp::Invalidate.value() => b.model.invalidate(words[1].1),
            _ => {
                let r = |a: u32| words.iter().find(|w| w.0 == a).unwrap().1 as u64;
                b.model.register(
                    r(mrr::key::ADDR) as u32,
                    Region {
                        pd: r(mrr::pd::ADDR) as u16,
                        access: Access::from_bits(r(mrr::access::ADDR) as u8),
                        base: r(mrr::va_lo::ADDR) | r(mrr::va_hi::ADDR) << 32,
                        length: r(mrr::len_lo::ADDR) | r(mrr::len_hi::ADDR) << 32,
                        page_shift: r(mrr::page_shift::ADDR) as u8,
                        pt_base: r(mrr::pt_index::ADDR) as u32,
                    },
                )
            }
        };
        assert_eq!(model, want, "{what}: the model");
        let s = raw(&mut b, &words);
        assert!(error(s), "{what}: accepted");
    }
    // Nothing changed: the probe is granted as before, key 6 is still free.
    assert_eq!(b.one(probe), granted);
    assert_eq!(b.one(write_req(key(6, 1), &GOOD)), Err(Reject::BadKey));
    // A good command clears ERROR.
    let s = raw(&mut b, &reg_words(key(6, 1), &GOOD));
    assert!(!error(s));
    b.model.register(key(6, 1), GOOD).unwrap();
    assert!(b.one(write_req(key(6, 1), &GOOD)).is_ok());
}

/// The doorbell copies the registers; a second doorbell while the first
/// command is busy is dropped (`DROPPED`), sends nothing, and the next
/// taken doorbell clears it.
#[test]
fn doorbell_while_busy_is_dropped() {
    // Full-rate AXI so both doorbells land while the table still clears
    // itself after reset (the first command waits for it).
    let mut b = Bench::<MrCtrlW4096>::new("mr_ctrl::doorbell", 4, Timing::FULL_RATE);
    b.dut.eval();
    assert!(b.dut.busy(), "the table clears itself after reset");
    let (ka, kb) = (key(1, 0xA), key(2, 0xB));
    for (a, v) in reg_words(ka, &GOOD) {
        b.m.write(a, v, 0xF);
    }
    b.m.write(mrr::doorbell::ADDR, 1, 0xF);
    // Rewrite the registers while the command waits, then ring again.
    for (a, v) in reg_words(kb, &Region { pd: 9, ..GOOD }) {
        b.m.write(a, v, 0xF);
    }
    b.m.write(mrr::doorbell::ADDR, 1, 0xF);
    b.m.finish(&mut b.dut, 10_000);
    b.m.done.clear();
    let s = b.status();
    b.dut.eval();
    assert!(b.dut.busy(), "both doorbells rang while the table was busy");
    assert_eq!(mrr::status::BUSY.get(s), 1, "the first command waits");
    assert_eq!(
        mrr::status::DROPPED.get(s),
        1,
        "the second doorbell dropped"
    );
    assert_eq!(mrr::status::SEQ.get(s), 0);
    b.settle();
    let mut s = b.status();
    for _ in 0..10 {
        if mrr::status::BUSY.get(s) == 0 {
            break;
        }
        s = b.status();
    }
    assert_eq!(
        mrr::status::BUSY.get(s),
        0,
        "answered once the table is free"
    );
    assert_eq!(mrr::status::DROPPED.get(s), 1, "sticky");
    assert_eq!(mrr::status::SEQ.get(s), 1, "one command answered");
    assert_eq!(mrr::status::ERROR.get(s), 0);
    // The first registration took effect with its own values; the second
    // was never sent.
    b.model.register(ka, GOOD).unwrap();
    assert!(b.one(write_req(ka, &GOOD)).is_ok());
    assert_eq!(b.one(write_req(kb, &GOOD)), Err(Reject::BadKey));
    // The firmware's driver sees a clean status and clears DROPPED.
    b.deregister(ka).unwrap();
    let s = b.status();
    assert_eq!(mrr::status::DROPPED.get(s), 0);
    assert_eq!(mrr::status::SEQ.get(s), 2);
    assert_eq!(b.one(write_req(ka, &GOOD)), Err(Reject::BadKey));
    assert_eq!(key_index(kb), 2);
}

/// Cycles a command takes through the CSRs at full AXI rate: the firmware
/// driver's register writes, the doorbell, and the status polls; and from
/// the doorbell's write response to `BUSY` low as the hardware sees it.
#[test]
fn command_cycles() {
    let mut b = Bench::<MrCtrlW64>::new("mr_ctrl::command_cycles", 5, Timing::FULL_RATE);
    b.settle();
    let t = b.dut.cycles();
    b.write_pt(3, 0x1234_5000).unwrap();
    let pt = b.dut.cycles() - t;
    let t = b.dut.cycles();
    b.register(key(4, 4), GOOD).unwrap();
    let reg = b.dut.cycles() - t;
    // The hardware part: doorbell B response → status read shows it done.
    b.write32(mrr::op::ADDR, MrOp::Deregister.value());
    b.write32(mrr::doorbell::ADDR, 1);
    let t = b.dut.cycles();
    let mut reads = 0;
    while mrr::status::BUSY.get(b.status()) == 1 {
        reads += 1;
        assert!(reads < 100, "never answered");
    }
    let hw = b.dut.cycles() - t;
    b.model.deregister(key(4, 4)).unwrap();
    assert_eq!(b.one(write_req(key(4, 4), &GOOD)), Err(Reject::BadKey));
    eprintln!(
        "mr_ctrl::command_cycles: write_pt {pt} cycles, register_mr {reg} cycles (firmware \
         driver, full-rate AXI); doorbell to a status read showing it done: {hw} cycles \
         ({reads} busy reads)"
    );
    assert!(pt < 100 && reg < 200, "{pt} {reg}");
}
