//! The transport timers (`qp_timers`) in Verilator, against a reference
//! that knows every entry's deadline: each armed entry is reported once,
//! never before its deadline tick, and within one scan (plus the other
//! expiries reported meanwhile) after it; a disarmed or re-armed entry
//! reports only its latest arm; nothing is lost under backpressure; reset
//! clears every entry. Both builds: 128 entries (8 banks, 16-cycle tick)
//! and the default 2048 (16 banks, 128-cycle tick). Seeds print;
//! `ROCE_SEED` repeats a run.

use roce_sim::model::Model;
use roce_sim::models::{QpTimersW128, QpTimersW2048};
use roce_sim::rng::Rng;

trait Dut: Model {
    const ENTRIES: usize;
    const SCAN: u64;
    const TICK: u64;
    fn make() -> Self;
    fn reset(&mut self, v: bool);
    fn arm(&mut self, valid: bool, entry: u32, delay: u32, disarm: bool);
    fn arm_ready(&self) -> bool;
    fn exp_ready(&mut self, v: bool);
    fn exp(&self) -> Option<u32>;
    fn now(&self) -> u32;
    fn busy(&self) -> bool;
    fn counters(&self) -> (u32, u32);
}

macro_rules! dut {
    ($t:ty, $entries:expr, $scan:expr, $tick:expr) => {
        impl Dut for $t {
            const ENTRIES: usize = $entries;
            const SCAN: u64 = $scan;
            const TICK: u64 = $tick;
            fn make() -> Self {
                <$t>::new()
            }
            fn reset(&mut self, v: bool) {
                self.set_reset(v)
            }
            fn arm(&mut self, valid: bool, entry: u32, delay: u32, disarm: bool) {
                self.set_s_arm_valid(valid);
                self.set_s_arm_entry(entry as _);
                self.set_s_arm_delay(delay as _);
                self.set_s_arm_disarm(disarm);
            }
            fn arm_ready(&self) -> bool {
                self.get_s_arm_ready()
            }
            fn exp_ready(&mut self, v: bool) {
                self.set_m_exp_ready(v)
            }
            fn exp(&self) -> Option<u32> {
                self.get_m_exp_valid()
                    .then(|| self.get_m_exp_entry() as u32)
            }
            fn now(&self) -> u32 {
                self.get_now() as u32
            }
            fn busy(&self) -> bool {
                self.get_busy()
            }
            fn counters(&self) -> (u32, u32) {
                (self.get_cnt_armed() as u32, self.get_cnt_expired() as u32)
            }
        }
    };
}
dut!(QpTimersW128, 128, 16, 16);
dut!(QpTimersW2048, 2048, 128, 128);

/// What the reference knows of an entry.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Entry {
    Idle,
    /// Armed for tick `deadline`; `due` is the cycle `now` reached it.
    Armed {
        deadline: u32,
        due: Option<u64>,
    },
}

/// A bench: the model, the reference and the cycle count.
struct Bench<D: Dut> {
    d: D,
    e: Vec<Entry>,
    cycle: u64,
    /// Cycles from due to reported, per report.
    late: Vec<u64>,
    /// The cycle of every report, in order.
    at: Vec<u64>,
    /// The cycle of every arm, in order.
    arm_at: Vec<u64>,
    /// The sink has always been ready (lateness is bounded only then).
    always_ready: bool,
    /// Reports so far (each checked against the reference).
    reports: u64,
    arms: u64,
}

/// `deadline` has come at tick `now` (serial 32-bit compare, as the block).
fn due(now: u32, deadline: u32) -> bool {
    (now.wrapping_sub(deadline) as i32) >= 0
}

impl<D: Dut> Bench<D> {
    fn new() -> Self {
        let mut d = D::make();
        d.reset(true);
        d.arm(false, 0, 0, false);
        d.exp_ready(false);
        for _ in 0..2 {
            d.eval();
            d.tick();
        }
        d.reset(false);
        d.eval();
        let mut b = Bench {
            d,
            e: vec![Entry::Idle; D::ENTRIES],
            cycle: 0,
            late: Vec::new(),
            at: Vec::new(),
            arm_at: Vec::new(),
            always_ready: true,
            reports: 0,
            arms: 0,
        };
        // The clearing pass: busy for one scan, no arm taken.
        let mut busy = 0;
        while b.d.busy() {
            assert!(!b.d.arm_ready(), "an arm is taken while clearing");
            b.d.tick();
            b.d.eval();
            busy += 1;
        }
        assert!(busy <= D::SCAN, "clearing pass of {busy} cycles");
        b
    }

    /// One cycle: optionally an arm (entry, delay, disarm) and the sink's
    /// readiness; checks a report against the reference.
    fn step(&mut self, arm: Option<(u32, u32, bool)>, ready: bool) {
        self.always_ready &= ready;
        let (v, e, dl, dis) = arm.map_or((false, 0, 0, false), |(e, d, x)| (true, e, d, x));
        self.d.arm(v, e, dl, dis);
        self.d.exp_ready(ready);
        self.d.eval();
        let now = self.d.now();
        if v {
            assert!(self.d.arm_ready());
            self.arms += 1;
            self.arm_at.push(self.cycle);
            let delay = dl.min(0x7FFF_FFFF);
            self.e[e as usize] = if dis {
                Entry::Idle
            } else {
                let deadline = now.wrapping_add(delay);
                Entry::Armed {
                    deadline,
                    due: due(now, deadline).then_some(self.cycle),
                }
            };
        }
        if ready {
            if let Some(x) = self.d.exp() {
                match self.e[x as usize] {
                    Entry::Armed {
                        due: Some(at),
                        deadline,
                    } => {
                        // The earliest report of a lane due at `at` leaves
                        // two cycles after it (evaluation, queue).
                        assert!(
                            self.cycle >= at + 2,
                            "entry {x} reported at cycle {} but due at {at} (deadline {deadline})",
                            self.cycle
                        );
                        // At most one scan late, plus the pipeline, plus a
                        // cycle per other report since it was due (their
                        // word holds the scanner) and per arm (an arm
                        // takes its bank's write port from a report).
                        let since = |v: &[u64]| (v.len() - v.partition_point(|&c| c < at)) as u64;
                        let (others, arms) = (since(&self.at), since(&self.arm_at));
                        let late = self.cycle - at;
                        assert!(
                            !self.always_ready || late <= D::SCAN + 4 + others + arms,
                            "entry {x} reported {late} cycles after due \
                             ({others} reports and {arms} arms since)"
                        );
                        self.late.push(late);
                        self.at.push(self.cycle);
                    }
                    other => panic!(
                        "entry {x} reported at cycle {} (now {now}) while {other:?}",
                        self.cycle
                    ),
                }
                self.e[x as usize] = Entry::Idle;
                self.reports += 1;
            }
        }
        self.d.tick();
        self.cycle += 1;
        // Entries whose deadline the new `now` reaches become due now.
        self.d.eval();
        let now = self.d.now();
        for s in self.e.iter_mut() {
            if let Entry::Armed {
                deadline,
                due: d @ None,
            } = s
            {
                if due(now, *deadline) {
                    *d = Some(self.cycle);
                }
            }
        }
    }

    /// Entries armed and not yet reported.
    fn armed(&self) -> usize {
        self.e
            .iter()
            .filter(|s| matches!(s, Entry::Armed { .. }))
            .count()
    }

    /// Whether `e` may be touched without racing its expiry: idle, or
    /// armed at least two ticks ahead.
    fn quiet(&self, e: usize) -> bool {
        match self.e[e] {
            Entry::Idle => true,
            Entry::Armed { deadline, due } => {
                due.is_none() && (deadline.wrapping_sub(self.d.now()) as i32) >= 2
            }
        }
    }
}

/// A delay in ticks: mostly short, at the edges sometimes (0, 1), now and
/// then beyond the clamp (never due in a run).
fn delay(rng: &mut Rng) -> u32 {
    match rng.below(10) {
        0 => 0,
        1 => 1,
        2 => 0x8000_0000 | rng.next_u32(),
        _ => 2 + rng.below(6) as u32,
    }
}

fn random<D: Dut>(name: &str, cycles: u64, arm_permille: u32) {
    let seed = Rng::seed_from_env(name, 0x71 + D::ENTRIES as u64);
    let mut rng = Rng::new(seed);
    let mut b = Bench::<D>::new();
    let mut far = 0;
    while b.cycle < cycles {
        let e = rng.below(D::ENTRIES as u64) as usize;
        let arm = (rng.chance(arm_permille) && b.quiet(e)).then(|| {
            let dis = rng.chance(150);
            let dl = delay(&mut rng);
            far += (!dis && dl >= 0x8000_0000) as u32;
            (e as u32, dl, dis)
        });
        b.step(arm, true);
    }
    // Drain: every entry that will come due within a few ticks reports.
    let until = b.cycle + 10 * D::TICK;
    while b.cycle < until {
        b.step(None, true);
    }
    let never: Vec<usize> = (0..D::ENTRIES)
        .filter(|&i| matches!(b.e[i], Entry::Armed { due: Some(_), .. }))
        .collect();
    assert!(never.is_empty(), "due but never reported: {never:?}");
    let (armed, expired) = b.d.counters();
    assert_eq!(armed as u64, b.arms, "cnt_armed");
    assert_eq!(expired as u64, b.reports, "cnt_expired");
    let max = *b.late.iter().max().unwrap();
    let mean = b.late.iter().sum::<u64>() as f64 / b.late.len() as f64;
    println!(
        "{name}: seed {seed:#x}: {} arms, {} reports, {} still armed (beyond the clamp: {far} armed), \
         lateness mean {mean:.1} max {max} cycles (scan {}, tick {})",
        b.arms,
        b.reports,
        b.armed(),
        D::SCAN,
        D::TICK
    );
    assert!(b.reports > 500, "too few reports to judge: {}", b.reports);
}

#[test]
fn random_arms_report_once_on_time_small() {
    random::<QpTimersW128>("qp_timers small", 200_000, 300);
}

#[test]
fn random_arms_report_once_on_time_default() {
    random::<QpTimersW2048>("qp_timers default", 400_000, 300);
}

/// A light load (an arm every 50 cycles): lateness is about one scan.
#[test]
fn light_load_default() {
    random::<QpTimersW2048>("qp_timers default light", 400_000, 20);
}

/// Every entry armed for the same tick: all report once, one per cycle,
/// the last within one scan plus one cycle per entry of its deadline.
fn burst<D: Dut>() {
    let mut b = Bench::<D>::new();
    for e in 0..D::ENTRIES as u32 {
        b.step(
            Some((e, 3 * D::ENTRIES as u32 / D::TICK as u32 + 2, false)),
            true,
        );
    }
    let start = b.cycle;
    while b.armed() > 0 {
        b.step(None, true);
        assert!(
            b.cycle - start < 50 * D::TICK + 4 * D::ENTRIES as u64,
            "burst stuck"
        );
    }
    assert_eq!(b.reports, D::ENTRIES as u64);
    let max = *b.late.iter().max().unwrap();
    println!(
        "burst of {}: the last report {max} cycles after due",
        D::ENTRIES
    );
    assert!(max <= D::SCAN + D::ENTRIES as u64 + 8, "{max}");
}

#[test]
fn every_entry_at_once() {
    burst::<QpTimersW128>();
    burst::<QpTimersW2048>();
}

/// The sink ready 30 % of the time: reports wait, none is lost or doubled.
#[test]
fn backpressure_loses_nothing() {
    let seed = Rng::seed_from_env("qp_timers backpressure", 0xBAC);
    let mut rng = Rng::new(seed);
    let mut b = Bench::<QpTimersW128>::new();
    while b.cycle < 100_000 {
        let e = rng.below(128) as usize;
        let arm = (rng.chance(400) && b.quiet(e)).then(|| (e as u32, rng.below(4) as u32, false));
        let ready = rng.chance(300);
        b.step(arm, ready);
    }
    while b.armed() > 0 && b.cycle < 200_000 {
        b.step(None, rng.chance(300));
    }
    assert_eq!(b.armed(), 0, "entries left armed");
    assert!(b.reports > 5_000, "{}", b.reports);
    assert_eq!(b.d.counters().1 as u64, b.reports);
}

/// Disarms and re-arms well before the deadline win; a delay at or above
/// 2^31 is clamped (it does not wrap round to "due now"); delay 0 is due at
/// once.
#[test]
fn disarm_rearm_and_clamp() {
    let mut b = Bench::<QpTimersW128>::new();
    b.step(Some((5, 4, false)), true);
    b.step(Some((6, 4, false)), true);
    b.step(Some((7, u32::MAX, false)), true);
    b.step(Some((8, 0x8000_0000, false)), true);
    b.step(Some((9, 0, false)), true);
    b.step(Some((5, 0, true)), true); // disarm 5
    b.step(Some((6, 9, false)), true); // 6 later
    for _ in 0..3 * 16 {
        b.step(None, true);
    }
    // 9 (delay 0) has reported; 5 never will; 6 not yet.
    assert_eq!(b.reports, 1);
    assert_eq!(b.e[9], Entry::Idle);
    for _ in 0..12 * 16 {
        b.step(None, true);
    }
    assert_eq!(b.reports, 2, "6 reports at its new deadline only");
    assert!(matches!(b.e[7], Entry::Armed { due: None, .. }));
    assert!(matches!(b.e[8], Entry::Armed { due: None, .. }));
}

/// A reset forgets every armed entry.
#[test]
fn reset_clears_every_entry() {
    let mut b = Bench::<QpTimersW128>::new();
    for e in 0..128 {
        b.step(Some((e, 2, false)), true);
    }
    let d = &mut b.d;
    d.arm(false, 0, 0, false);
    d.reset(true);
    d.eval();
    d.tick();
    d.reset(false);
    d.eval();
    while d.busy() {
        d.tick();
        d.eval();
    }
    d.exp_ready(true);
    for _ in 0..10 * 16 {
        d.eval();
        assert_eq!(d.exp(), None, "an entry armed before the reset reported");
        d.tick();
    }
}
