//! The retransmit buffer (`retx_buf`) in Verilator, checked against the
//! reference model in `roce_sim::retx` (a `VecDeque` of packets per QP,
//! PSNs compared with `roce_wire::Psn`): every replayed descriptor and
//! payload byte, the counters, the free-slot count, and no slot leaked.
//!
//! Builds: the test build (64 QPs, 16 slots of 1024 bytes, 64-bit
//! descriptor) at W = 64 and 512, and the default build (1024 QPs, 64 slots
//! of 4096 bytes, 128-bit descriptor) at W = 64. Seeds are printed;
//! `ROCE_SEED` repeats a run.

use roce_sim::retx::{dut, Bench, Op, Pacing, PktDesc};
use roce_sim::rng::Rng;
use roce_wire::Psn;

const PACED: Pacing = Pacing {
    idle: 200,
    stall: 200,
};
const FULL_RATE: Pacing = Pacing { idle: 0, stall: 0 };

/// Per-QP state of the traffic generator (what the requester knows when it
/// issues a command, not what the block has done yet).
#[derive(Clone, Copy, Default)]
struct QpGen {
    next: u32,
    acked: u32,
    used: bool,
}

/// Random traffic: stores in PSN order per QP, cumulative / duplicate /
/// stale / wrapping ACKs, replays from the oldest, the middle, beyond the
/// newest and of empty QPs; a few hot QPs get back-to-back commands.
struct Gen {
    rng: Rng,
    qps: Vec<QpGen>,
    slot_bytes: usize,
    lanes: usize,
    meta_mask: u128,
    stores_left: u64,
}

impl Gen {
    fn new(seed: u64, b: &Bench, stores: u64) -> Self {
        let mut rng = Rng::new(seed ^ 0x6e6e);
        let nq = b.dut.qps();
        let qps = (0..nq)
            .map(|_| {
                // Start PSNs at the edges (wrap at 2^24 within a few packets).
                let p = match rng.below(4) {
                    0 => Psn::MASK - rng.below(20) as u32,
                    1 => 0,
                    2 => Psn::HALF - rng.below(20) as u32,
                    _ => rng.next_u32() & Psn::MASK,
                };
                QpGen {
                    next: p,
                    acked: p,
                    used: false,
                }
            })
            .collect();
        let mb = b.dut.meta_bits();
        Gen {
            rng,
            qps,
            slot_bytes: b.dut.slot_bytes(),
            lanes: b.lanes(),
            meta_mask: if mb >= 128 {
                u128::MAX
            } else {
                (1u128 << mb) - 1
            },
            stores_left: stores,
        }
    }

    fn qp(&mut self) -> u32 {
        let n = self.qps.len() as u64;
        match self.rng.below(8) {
            0..=2 => 0,
            3 => 1,
            4 => (n - 1) as u32,
            _ => self.rng.below(n) as u32,
        }
    }

    fn len(&mut self) -> u32 {
        let (k, s) = (self.lanes, self.slot_bytes);
        let l = match self.rng.below(16) {
            0 => 0,
            1 => 1,
            2 => k - 1,
            3 => k,
            4 => k + 1,
            5 => s - 1,
            6 => s,
            7 => s + 1 + self.rng.below(3 * k as u64) as usize, // refused
            8 | 9 => self.rng.range(1, 2 * k),
            _ => self.rng.range(0, s),
        };
        l as u32
    }

    fn meta(&mut self) -> u128 {
        let v = match self.rng.below(6) {
            0 => 0,
            1 => u128::MAX,
            _ => (self.rng.next_u64() as u128) << 64 | self.rng.next_u64() as u128,
        };
        v & self.meta_mask
    }

    fn store(&mut self) -> Op {
        let q = self.qp();
        let len = self.len();
        let g = &mut self.qps[q as usize];
        let psn = g.next;
        // Mostly consecutive PSNs, sometimes a gap (the buffer does not
        // care; a refused store keeps its PSN too).
        g.next = Psn::new(g.next).add(1 + (len % 7 == 0) as u32).value();
        g.used = true;
        let d = PktDesc {
            qpn: q,
            psn,
            len,
            meta: self.meta(),
        };
        let payload = self.rng.bytes(len as usize);
        self.stores_left -= 1;
        Op::Store(d, payload)
    }

    /// A QP with stores not yet ACKed (as the generator knows), mostly.
    fn busy_qp(&mut self) -> u32 {
        let open: Vec<u32> = (0..self.qps.len() as u32)
            .filter(|&q| self.qps[q as usize].next != self.qps[q as usize].acked)
            .collect();
        if open.is_empty() || self.rng.chance(150) {
            self.qp()
        } else {
            open[self.rng.below(open.len() as u64) as usize]
        }
    }

    fn ack(&mut self) -> Op {
        let q = self.busy_qp();
        let r = self.rng.below(20);
        let g = &mut self.qps[q as usize];
        let span = Psn::new(g.next).forward_from(Psn::new(g.acked));
        let psn = match r {
            0..=9 => {
                let p = Psn::new(g.acked).add(self.rng.below(span as u64 + 1) as u32);
                g.acked = p.value();
                p.value()
            }
            10..=12 => g.acked, // duplicate
            13..=14 => Psn::new(g.acked)
                .sub(1 + self.rng.below(300) as u32)
                .value(), // stale
            15..=17 => {
                g.acked = g.next;
                g.next
            }
            _ => Psn::new(g.acked)
                .add(1 + span + self.rng.below(5) as u32)
                .value(), // beyond
        };
        Op::Ack(q, psn)
    }

    fn replay(&mut self) -> Op {
        let q = if self.rng.chance(100) {
            // A QP that was never used: nothing stored.
            match self.qps.iter().position(|g| !g.used) {
                Some(i) => i as u32,
                None => self.qp(),
            }
        } else {
            self.busy_qp()
        };
        let g = self.qps[q as usize];
        let span = Psn::new(g.next).forward_from(Psn::new(g.acked));
        let psn = match self.rng.below(10) {
            0..=2 => g.acked,
            3..=6 => Psn::new(g.acked)
                .add(self.rng.below(span as u64 + 1) as u32)
                .value(),
            7 => Psn::new(g.next).add(self.rng.below(4) as u32).value(), // beyond the newest
            8 => Psn::new(g.acked).sub(1 + self.rng.below(50) as u32).value(),
            _ => self.rng.next_u32() & Psn::MASK,
        };
        Op::Replay(q, psn)
    }

    /// Keep the command queues topped up.
    fn top_up(&mut self, b: &mut Bench) {
        let (s, a, r) = b.pending();
        if s < 2 && self.stores_left > 0 {
            let op = self.store();
            b.push(op);
        }
        let (eq, _) = b.expected();
        if a < 2 && self.rng.chance(40) {
            let op = self.ack();
            b.push(op);
        }
        // Full and nothing to free it queued: ACK a QP's stores.
        if a == 0 && b.dut.free() == 0 && self.rng.chance(200) {
            let q = self.busy_qp();
            let g = &mut self.qps[q as usize];
            g.acked = g.next;
            b.push(Op::Ack(q, g.next));
        }
        if r < 1 && eq < 8 && self.rng.chance(15) {
            let op = self.replay();
            b.push(op);
        }
    }
}

fn random_run(test: &str, width: usize, default_build: bool, stores: u64, default_seed: u64) {
    let seed = Rng::seed_from_env(test, default_seed);
    for (phase, pacing) in [PACED, FULL_RATE].into_iter().enumerate() {
        let seed = seed.wrapping_add(phase as u64);
        let mut b = Bench::new(dut(width, default_build), seed, pacing);
        let mut g = Gen::new(seed, &b, stores);
        let mut guard = 0u64;
        while g.stores_left > 0 || b.pending().0 > 0 {
            g.top_up(&mut b);
            b.cycle();
            guard += 1;
            assert!(guard < 200 * stores * 1024, "{test}: no progress");
        }
        b.drain(200_000);
        b.check_quiet();
        // Everything still held replays intact, then is freed.
        for q in 0..b.dut.qps() as u32 {
            if let Some(p) = b.model.lists[q as usize].front() {
                let psn = p.desc.psn;
                b.push(Op::Replay(q, psn));
            }
        }
        b.drain(500_000);
        b.free_all();
        let s = b.stats;
        eprintln!(
            "{test} phase {phase}: {} cycles, {} stores ({} refused), {} acks, {} replays, \
             {} packets replayed, {} cycles stalled on a full buffer",
            s.cycles,
            s.stores,
            b.model.counters.refused,
            s.acks,
            s.replays,
            s.replayed,
            s.full_stalls
        );
        assert!(s.replayed > 100, "{test}: too few replayed packets");
        assert!(b.model.counters.freed > stores as u32 / 2);
        assert!(b.model.counters.empty > 0 && b.model.counters.refused > 0);
        if !default_build {
            assert!(s.full_stalls > 0, "{test}: the buffer never filled");
        }
    }
}

#[test]
fn random_w64() {
    random_run("random_w64", 64, false, 6000, 0x7e7a_0064);
}

#[test]
fn random_w512() {
    random_run("random_w512", 512, false, 6000, 0x7e7a_0512);
}

#[test]
fn random_default_build_w64() {
    random_run("random_default_build_w64", 64, true, 600, 0x7e7a_d064);
}

fn store(b: &mut Bench, qpn: u32, psn: u32, len: usize) {
    let meta = (b.rng.next_u64() as u128) << 64 | b.rng.next_u64() as u128;
    let meta = meta & ((1u128 << b.dut.meta_bits().min(127)) - 1);
    let payload = b.rng.bytes(len);
    b.push(Op::Store(
        PktDesc {
            qpn,
            psn,
            len: len as u32,
            meta,
        },
        payload,
    ));
}

/// Stores beyond the slot count wait (`s_pkt_ready` low with no slot
/// free), nothing is lost, and ACKs let them in.
fn full_buffer(width: usize) {
    let seed = Rng::seed_from_env("full_buffer", 0xf011 + width as u64);
    let mut b = Bench::new(dut(width, false), seed, PACED);
    let slots = b.dut.slots();
    let sb = b.dut.slot_bytes();
    // Twice the slots over three QPs, no ACKs.
    for i in 0..2 * slots as u32 {
        let len = b.rng.range(0, sb);
        store(&mut b, i % 3, 1000 + i, len);
    }
    for _ in 0..20_000 {
        b.cycle();
    }
    assert_eq!(b.dut.free(), 0);
    assert_eq!(b.model.held(), slots, "exactly the slots are taken");
    assert_eq!(b.pending().0, slots, "the rest wait");
    assert!(b.stats.full_stalls > 10_000);
    b.check_quiet();
    // Every held packet replays intact while the stores wait.
    for q in 0..3 {
        b.push(Op::Replay(q, 0));
    }
    for _ in 0..30_000 {
        b.cycle();
    }
    assert_eq!(b.expected(), (0, 0));
    assert_eq!(b.stats.replayed as usize, slots);
    // Free QP 0's first three packets and the first of QP 1: four more in.
    b.push(Op::Ack(0, 1000 + 9));
    b.push(Op::Ack(1, 1000 + 2));
    for _ in 0..20_000 {
        b.cycle();
    }
    assert_eq!(b.model.held(), slots);
    assert_eq!(b.pending().0, slots - 4);
    // ACK everything as it comes until all stores are in.
    while b.pending().0 > 0 {
        for q in 0..3u32 {
            b.push(Op::Ack(q, 1000 + 2 * slots as u32));
        }
        b.drain(200_000);
    }
    assert_eq!(b.model.counters.stored as usize, 2 * slots);
    b.free_all();
}

#[test]
fn full_buffer_backpressures_w64() {
    full_buffer(64);
}

#[test]
fn full_buffer_backpressures_w512() {
    full_buffer(512);
}

/// The PSN compares of ACK and replay on vectors from `roce_wire::Psn`:
/// one stored packet at PSN `p`, an ACK or a replay at `p + d` for
/// distances around 0 and ±2^23, at PSNs around the wrap.
#[test]
fn psn_compare_vectors() {
    let seed = Rng::seed_from_env("psn_compare_vectors", 0x950);
    let mut b = Bench::new(dut(64, false), seed, FULL_RATE);
    let bases = [
        0u32, 1, 0x7F_FFFF, 0x80_0000, 0x80_0001, 0xFF_FFFE, 0xFF_FFFF, 0x12_3456,
    ];
    let h = Psn::HALF;
    let dists = [
        0u32,
        1,
        2,
        h - 1,
        h,
        h + 1,
        Psn::MASK,
        Psn::MASK - 1,
        0x40_0000,
        0xC0_0000,
    ];
    let mut n = 0;
    for (i, &p) in bases.iter().enumerate() {
        for &d in &dists {
            let a = Psn::new(p).add(d);
            let q = (n % 60) as u32;
            n += 1;
            store(&mut b, q, p, 3 + i);
            b.drain(10_000);
            // Replay from `a`: the packet comes back iff p is not before a.
            b.push(Op::Replay(q, a.value()));
            b.drain(10_000);
            // ACK at `a`: freed iff p is before a (Psn::diff < 0).
            let freed0 = b.model.counters.freed;
            b.push(Op::Ack(q, a.value()));
            b.drain(10_000);
            let freed = b.model.counters.freed - freed0;
            assert_eq!(freed == 1, Psn::new(p).diff(a) < 0, "p {p:#x} ack {a:?}");
            b.check_quiet();
            b.free_all();
        }
    }
    // A list whose PSNs straddle the point half the space away from the
    // command's: a replay starts at the first packet not before it and
    // sends everything after (even packets "before" it), an ACK stops at
    // the first packet not before it.
    for &p in &bases {
        for e in [-1i64, 0, 1, 2] {
            let q = 61;
            for i in 0..6 {
                store(&mut b, q, Psn::new(p).add(i).value(), 9);
            }
            b.drain(10_000);
            let c = Psn::new(p).add((3 + h as i64 + e) as u32).value();
            let r0 = b.stats.replayed;
            b.push(Op::Replay(q, c));
            b.drain(10_000);
            let n = b.stats.replayed - r0;
            let first_not_before = (0..6)
                .position(|i| !Psn::new(p).add(i).is_before(Psn::new(c)))
                .map_or(0, |i| 6 - i);
            assert_eq!(n as usize, first_not_before, "p {p:#x} replay {c:#x}");
            b.push(Op::Ack(q, c));
            b.drain(10_000);
            b.check_quiet();
            b.free_all();
        }
    }
    assert_eq!(b.model.counters.replayed, b.stats.replayed as u32);
}

/// Refused stores (longer than a slot) drain their payload and are
/// counted; the packets around them are intact. Commands for empty QPs
/// are counted and change nothing.
#[test]
fn bad_input() {
    let seed = Rng::seed_from_env("bad_input", 0xbad);
    for width in [64, 512] {
        let mut b = Bench::new(dut(width, false), seed, PACED);
        let sb = b.dut.slot_bytes();
        store(&mut b, 5, 10, sb);
        store(&mut b, 5, 11, sb + 1);
        store(&mut b, 5, 12, 3);
        store(&mut b, 6, 12, 0xFFFF);
        store(&mut b, 5, 13, 0);
        store(&mut b, 5, 14, sb);
        b.push(Op::Ack(7, 100));
        b.push(Op::Replay(8, 100));
        b.drain(50_000);
        assert_eq!(b.model.counters.refused, 2);
        assert_eq!(b.model.counters.empty, 2);
        b.check_quiet();
        b.push(Op::Replay(5, 0));
        b.push(Op::Replay(6, 0));
        b.drain(50_000);
        assert_eq!(b.stats.replayed, 4);
        b.check_quiet();
        b.free_all();
    }
}

/// Store and replay at one beat per cycle with packets back to back, ACK
/// frees, and the latencies, measured at full rate (no idle, no stall).
fn throughput(width: usize) {
    let seed = Rng::seed_from_env("throughput", 0x7410 + width as u64);
    let mut b = Bench::new(dut(width, false), seed, FULL_RATE);
    let k = b.lanes();
    let sb = b.dut.slot_bytes();
    let slots = b.dut.slots() as u32;
    for (what, len) in [("one-beat", k), ("two-beat", 2 * k), ("PMTU", sb)] {
        let beats_per = len.div_ceil(k) as u64;
        // Burst: as many packets as slots into the empty buffer.
        b.stats = Default::default();
        for i in 0..slots {
            store(&mut b, i % 5, i, len);
        }
        b.drain(100_000);
        let s = b.stats;
        let span = s.last_in - s.first_in.unwrap() + 1;
        let rate = s.beats_in as f64 / span as f64;
        eprintln!(
            "throughput w{width} store burst {what}: {} beats in {span} cycles = {rate:.3} beats/cycle",
            s.beats_in
        );
        assert!(rate >= 0.95, "store burst {what}: {rate:.3} beats/cycle");
        b.free_all();
        // Sustained: 4 * slots packets on `nq` QPs, each QP ACKed (all but
        // its newest) whenever it holds `every` packets, so slots come back
        // (the control links and frees). Every 2 on 4 QPs, then coalesced:
        // every 6 on 2 QPs.
        for (nq, every) in [(4u32, 2usize), (2, 6)] {
            let n = 4 * slots;
            b.stats = Default::default();
            let mut psn = [0u32; 4];
            for i in 0..n {
                let q = i % nq;
                store(&mut b, q, psn[q as usize], len);
                psn[q as usize] += 1;
            }
            let mut acked = [0u32; 4];
            while b.pending().0 > 0 || !b.idle() {
                if b.pending().1 == 0 {
                    for (q, a) in acked.iter_mut().enumerate().take(nq as usize) {
                        let held = b.model.lists[q].len();
                        if held >= every {
                            *a += held as u32 - 1;
                            b.push(Op::Ack(q as u32, *a));
                        }
                    }
                }
                b.cycle();
                assert!(b.stats.cycles < 1_000_000);
            }
            let s = b.stats;
            let span = s.last_in - s.first_in.unwrap() + 1;
            let rate = s.beats_in as f64 / span as f64;
            eprintln!(
                "throughput w{width} store sustained, {nq} QPs ACKed every {every} held, {what}: \
                 {} beats in {span} cycles = {rate:.3} beats/cycle ({:.3} packets/cycle)",
                s.beats_in,
                n as f64 / span as f64
            );
            assert_eq!(s.beats_in, n as u64 * beats_per);
            let want = if beats_per <= 4 { 0.15 } else { 0.9 };
            assert!(
                rate >= want,
                "store sustained {what}: {rate:.3} beats/cycle"
            );
            b.free_all();
        }

        // Replay: fill every slot on one QP, replay from the oldest.
        for i in 0..slots {
            store(&mut b, 9, 0x100 + i, len);
        }
        b.drain(100_000);
        b.stats = Default::default();
        b.push(Op::Replay(9, 0x100));
        let mut t_hdr = None;
        while !b.idle() || b.stats.cycles < 2 {
            let c = b.stats.cycles;
            b.cycle();
            if t_hdr.is_none() && b.stats.replayed > 0 {
                t_hdr = Some(c);
            }
        }
        let s = b.stats;
        let span = s.last_out - s.first_out.unwrap() + 1;
        let rate = s.beats_out as f64 / span as f64;
        eprintln!(
            "throughput w{width} replay {what}: {} beats in {span} cycles = {rate:.3} beats/cycle; \
             latency from the replay handshake: descriptor {} cycles, first beat {} cycles",
            s.beats_out,
            t_hdr.unwrap(),
            s.first_out.unwrap()
        );
        assert_eq!(s.beats_out, slots as u64 * beats_per);
        let want = if beats_per == 1 { 0.45 } else { 0.95 };
        assert!(rate >= want, "replay {what}: {rate:.3} beats/cycle");

        // ACK: free all the slots of QP 9 with one ACK.
        let c0 = b.stats.cycles;
        b.push(Op::Ack(9, 0x100 + slots));
        let mut done = None;
        for _ in 0..1000 {
            b.cycle();
            if done.is_none() && b.dut.free() == slots as usize {
                done = Some(b.stats.cycles - c0);
            }
        }
        let done = done.expect("ACK freed everything");
        eprintln!(
            "throughput w{width} ack: {slots} packets freed {done} cycles after the ACK was offered \
             ({:.2} cycles/packet)",
            done as f64 / slots as f64
        );
        assert!(
            done <= 2 * slots as u64 + 8,
            "ACK frees one packet per 2 cycles"
        );
        b.check_quiet();
        b.free_all();
    }
}

#[test]
fn throughput_w64() {
    throughput(64);
}

#[test]
fn throughput_w512() {
    throughput(512);
}

/// Stores to a QP while it is being replayed (its output stalled 90 % of
/// cycles): a store accepted before the replay is part of it, one accepted
/// at the replay's edge or after is not (the model applies each cycle's
/// replay before its store), and the next replay includes them all.
#[test]
fn store_during_replay() {
    let seed = Rng::seed_from_env("store_during_replay", 0x5d5d);
    for width in [64, 512] {
        let mut b = Bench::new(
            dut(width, false),
            seed,
            Pacing {
                idle: 0,
                stall: 900,
            },
        );
        let k = b.lanes();
        for i in 0..6 {
            store(&mut b, 0, 100 + i, 3 * k);
        }
        b.drain(100_000);
        let r0 = b.stats.replays;
        b.push(Op::Replay(0, 100));
        for i in 6..12 {
            store(&mut b, 0, 100 + i, 2 * k + 1);
        }
        // Run until the replay is taken, then count the stores taken while
        // its packets are still coming out.
        while b.stats.replays == r0 {
            b.cycle();
        }
        let s0 = b.stats.stores;
        while b.expected() != (0, 0) {
            b.cycle();
        }
        let during = b.stats.stores - s0;
        assert!(during > 0, "no store was taken during the replay");
        b.drain(100_000);
        let before = b.stats.replayed;
        b.push(Op::Replay(0, 100));
        b.drain(100_000);
        assert_eq!(
            b.stats.replayed - before,
            12,
            "the second replay has every packet"
        );
        b.free_all();
    }
}
