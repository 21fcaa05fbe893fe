//! The streaming CRC-32 in Verilator, checked against the `crc` crate.
//!
//! Widths 64..512 run on the word-parallel simulation form of the XOR
//! matrices; 64 and 512 also on the synthesised form (`*Synth` models).
//!
//! Each width runs: every length 1..=130; 2000 random packets of
//! 1..=9000 bytes; both under random idle cycles on the input and random
//! backpressure on the result stream; plus full-rate throughput, latency,
//! malformed input, result backpressure and reset. Every packet starts
//! from a random register value (the state after a random prefix), so the
//! settable initial state is exercised throughout, and `s_init` carries
//! garbage on every beat but a packet's first.

use crc::{Crc, CRC_32_ISO_HDLC};
use roce_sim::axis::{full_keep, Beat, StreamInPort};
use roce_sim::bfm::{PacketSink, PacketSource};
use roce_sim::model::Model;
use roce_sim::models::{Crc32W128, Crc32W256, Crc32W512, Crc32W512Synth, Crc32W64, Crc32W64Synth};
use roce_sim::rng::Rng;
use std::collections::VecDeque;

const CRC32: Crc<u32> = Crc::<u32>::new(&CRC_32_ISO_HDLC);

/// The register value after `prefix`, as the `crc` crate computes it (its
/// result is the register XOR 0xFFFFFFFF).
fn state_after(prefix: &[u8]) -> u32 {
    !CRC32.checksum(prefix)
}

/// What the benches need from each width's model.
trait CrcDut: Model + Sized {
    fn create() -> Self;
    fn lanes(&mut self) -> usize;
    fn latency() -> usize;
    fn set_init(&mut self, v: u32);
    fn set_rst(&mut self, v: bool);
    fn in_ready(&self) -> bool;
    fn out_valid(&self) -> bool;
    fn src_drive(&mut self, src: &mut PacketSource);
    fn src_handshake(&mut self, src: &mut PacketSource) -> Option<Beat>;
    fn sink_drive(&mut self, sink: &mut PacketSink);
    fn sink_handshake(&mut self, sink: &mut PacketSink) -> Option<Beat>;
}

macro_rules! crc_dut {
    ($t:ty) => {
        impl CrcDut for $t {
            fn create() -> Self {
                <$t>::new()
            }
            fn lanes(&mut self) -> usize {
                self.s_axis().bytes()
            }
            fn latency() -> usize {
                <$t>::LATENCY.unwrap()
            }
            fn set_init(&mut self, v: u32) {
                self.set_s_init(v)
            }
            fn set_rst(&mut self, v: bool) {
                self.set_reset(v)
            }
            fn in_ready(&self) -> bool {
                self.get_s_axis_tready()
            }
            fn out_valid(&self) -> bool {
                self.get_m_crc_tvalid()
            }
            fn src_drive(&mut self, src: &mut PacketSource) {
                src.drive(&mut self.s_axis())
            }
            fn src_handshake(&mut self, src: &mut PacketSource) -> Option<Beat> {
                src.handshake(&self.s_axis())
            }
            fn sink_drive(&mut self, sink: &mut PacketSink) {
                sink.drive(&mut self.m_crc())
            }
            fn sink_handshake(&mut self, sink: &mut PacketSink) -> Option<Beat> {
                sink.handshake(&self.m_crc())
            }
        }
    };
}
crc_dut!(Crc32W64);
crc_dut!(Crc32W128);
crc_dut!(Crc32W256);
crc_dut!(Crc32W512);
crc_dut!(Crc32W64Synth);
crc_dut!(Crc32W512Synth);

/// One packet to send and the result it must produce.
struct Case {
    data: Vec<u8>,
    init: u32,
    /// `Some(crc)` for a good packet, `None` for one flagged malformed.
    expect: Option<u32>,
    /// Raw beats instead of `data` (malformed-input cases).
    beats: Option<Vec<Beat>>,
}

fn good_case(rng: &mut Rng, len: usize) -> Case {
    let prefix_len = rng.range(0, 12);
    let prefix = rng.bytes(prefix_len);
    let data = rng.bytes(len);
    let mut whole = prefix.clone();
    whole.extend_from_slice(&data);
    Case {
        init: state_after(&prefix),
        expect: Some(CRC32.checksum(&whole)),
        data,
        beats: None,
    }
}

/// A good packet of a random length in `lo..=hi`.
fn sized_case(rng: &mut Rng, lo: usize, hi: usize) -> Case {
    let len = rng.range(lo, hi);
    good_case(rng, len)
}

/// Counters a run reports.
#[derive(Debug, Default)]
struct RunStats {
    cycles: u64,
    beats: u64,
    input_stalls: u64,
}

/// A packet source, a result sink, and the start state of each packet
/// queued or on the wire.
struct Bench {
    src: PacketSource,
    sink: PacketSink,
    inits: VecDeque<u32>,
    garbage: Rng,
    stats: RunStats,
}

impl Bench {
    fn new(lanes: usize, seed: u64, idle: u32, stall: u32) -> Self {
        Bench {
            src: PacketSource::new(lanes, seed, idle),
            sink: PacketSink::new(4, seed.wrapping_add(1), stall),
            inits: VecDeque::new(),
            garbage: Rng::new(seed ^ 0x5eed),
            stats: RunStats::default(),
        }
    }

    fn push(&mut self, case: &Case) {
        match &case.beats {
            Some(beats) => self.src.push_beats(beats),
            None => self.src.push(&case.data),
        }
        self.inits.push_back(case.init);
    }

    /// One cycle: drive (`s_init` = the packet's start state with its first
    /// beat, random garbage otherwise, which the block must ignore), settle,
    /// sample both handshakes, clock. Returns the result beat taken, if any.
    fn cycle<D: CrcDut>(&mut self, dut: &mut D) -> Option<Beat> {
        dut.src_drive(&mut self.src);
        if self.src.presenting_first() {
            dut.set_init(*self.inits.front().expect("init for the packet on the wire"));
        } else {
            dut.set_init(self.garbage.next_u32());
        }
        dut.sink_drive(&mut self.sink);
        dut.eval();
        if self.src.presenting().is_some() && !dut.in_ready() {
            self.stats.input_stalls += 1;
        }
        if let Some(beat) = dut.src_handshake(&mut self.src) {
            self.stats.beats += 1;
            if beat.last {
                self.inits.pop_front();
            }
        }
        let result = dut.sink_handshake(&mut self.sink);
        dut.tick();
        self.stats.cycles += 1;
        result
    }
}

fn crc_of(result: &roce_sim::bfm::Packet) -> u32 {
    u32::from_le_bytes(result.data.as_slice().try_into().expect("4-byte result"))
}

/// Drive `cases` through `dut`, feeding the source lazily so memory stays
/// flat, and check every result in order. Returns counters.
fn run<D: CrcDut>(
    dut: &mut D,
    cases: impl IntoIterator<Item = Case>,
    seed: u64,
    idle: u32,
    stall: u32,
) -> RunStats {
    let mut bench = Bench::new(dut.lanes(), seed, idle, stall);
    let mut cases = cases.into_iter();
    let mut expect: VecDeque<Option<u32>> = VecDeque::new();
    let mut got = 0usize;
    let mut idle_cycles = 0u64;
    let mut exhausted = false;
    loop {
        // Keep a few packets queued at the source.
        while !exhausted && bench.src.backlog() < 64 {
            match cases.next() {
                Some(c) => {
                    bench.push(&c);
                    expect.push_back(c.expect);
                }
                None => exhausted = true,
            }
        }
        if exhausted && expect.is_empty() {
            break;
        }
        if bench.cycle(dut).is_some() {
            let result = bench.sink.packets.pop_front().expect("one beat per result");
            let crc = crc_of(&result);
            match expect.pop_front().expect("a result with no packet") {
                Some(want) => {
                    assert!(!result.user, "packet {got}: good packet flagged malformed");
                    assert_eq!(
                        crc, want,
                        "packet {got}: CRC {crc:#010x}, expected {want:#010x}"
                    );
                }
                None => assert!(result.user, "packet {got}: malformed packet not flagged"),
            }
            got += 1;
            idle_cycles = 0;
        } else {
            idle_cycles += 1;
            assert!(
                idle_cycles < 10_000,
                "no result for 10000 cycles after {got} results"
            );
        }
    }
    assert_eq!(
        bench.sink.violations,
        Vec::<String>::new(),
        "result stream broke the stream rules"
    );
    assert!(bench.src.is_done());
    bench.stats
}

fn every_length<D: CrcDut>(name: &str) {
    let seed = Rng::seed_from_env(name, 0x1e9);
    let mut rng = Rng::new(seed);
    let cases: Vec<Case> = (1..=130).map(|len| good_case(&mut rng, len)).collect();
    let mut dut = D::create();
    run(&mut dut, cases, seed, 200, 200);
}

fn random_packets<D: CrcDut>(name: &str) {
    let seed = Rng::seed_from_env(name, 0x2000);
    let mut rng = Rng::new(seed);
    // Lengths: uniform 1..=9000, with a quarter drawn around the MTU edges
    // and the beat boundaries where the last-beat logic has its cases.
    let cases = (0..2000).map(move |i| {
        let len = if i % 4 == 0 {
            let edge = [64usize, 256, 512, 1024, 2048, 4096, 9000][rng.range(0, 6)];
            (edge + rng.range(0, 130)).saturating_sub(65).clamp(1, 9000)
        } else {
            rng.range(1, 9000)
        };
        good_case(&mut rng, len)
    });
    let mut dut = D::create();
    let stats = run(&mut dut, cases, seed, 200, 200);
    eprintln!("{name}: {stats:?}");
}

/// No idle, no backpressure: a beat every cycle, back-to-back packets of
/// every small length (one-beat packets give a result every cycle), and
/// the input never stalls.
fn full_rate<D: CrcDut>(name: &str) {
    let seed = Rng::seed_from_env(name, 0xf011);
    let mut rng = Rng::new(seed);
    let mut dut = D::create();
    let lanes = dut.lanes();
    let cases: Vec<Case> = (0..600)
        .map(|i| good_case(&mut rng, 1 + (i * 7) % (3 * lanes)))
        .collect();
    let beats: u64 = cases
        .iter()
        .map(|c| c.data.len().div_ceil(lanes) as u64)
        .sum();
    let stats = run(&mut dut, cases, seed, 0, 0);
    assert_eq!(stats.beats, beats);
    assert_eq!(
        stats.input_stalls, 0,
        "input stalled with the result sink always ready"
    );
    // The source never idles, so every cycle until the last beat moves one.
    let tail = D::latency() as u64 + 1;
    assert!(
        stats.cycles <= beats + tail,
        "{} cycles for {beats} beats: not one beat per cycle",
        stats.cycles
    );
}

/// Cycles from the last beat's handshake to the result match LATENCY.
fn latency<D: CrcDut>() {
    let mut dut = D::create();
    let lanes = dut.lanes();
    for len in [1, lanes, lanes + 1, 3 * lanes] {
        let data: Vec<u8> = (0..len as u32).map(|i| (i * 37) as u8).collect();
        let mut src = PacketSource::new(lanes, 1, 0);
        let mut sink = PacketSink::new(4, 2, 0);
        src.push(&data);
        dut.set_init(0xFFFF_FFFF);
        let mut last_at = None;
        for cycle in 0..100u64 {
            dut.src_drive(&mut src);
            dut.sink_drive(&mut sink);
            dut.eval();
            if dut.out_valid() {
                let at = last_at.expect("result before the packet ended");
                assert_eq!((cycle - at) as usize, D::latency(), "latency, {len} bytes");
                assert!(dut.sink_handshake(&mut sink).is_some());
                dut.tick();
                let crc = u32::from_le_bytes(sink.packets[0].data.as_slice().try_into().unwrap());
                assert_eq!(crc, CRC32.checksum(&data));
                break;
            }
            if let Some(b) = dut.src_handshake(&mut src) {
                if b.last {
                    last_at = Some(cycle);
                }
            }
            dut.tick();
            assert!(cycle < 99, "no result");
        }
    }
}

/// Malformed beats flag their packet and leave the next ones intact.
fn malformed<D: CrcDut>(name: &str) {
    let seed = Rng::seed_from_env(name, 0xbad);
    let mut rng = Rng::new(seed);
    let mut dut = D::create();
    let lanes = dut.lanes();
    let full = full_keep(lanes);
    let beat = |rng: &mut Rng, keep: u64, last: bool, user: bool| Beat {
        data: rng.bytes(lanes),
        keep,
        last,
        user,
    };
    let bad = |beats: Vec<Beat>| Case {
        data: Vec::new(),
        init: 0xFFFF_FFFF,
        expect: None,
        beats: Some(beats),
    };
    let mut cases = Vec::new();
    for round in 0..20 {
        cases.push(sized_case(&mut rng, 1, 4 * lanes));
        let case = match round % 5 {
            // A byte missing from a beat that is not the last.
            0 => bad(vec![
                beat(&mut rng, full >> 1, false, false),
                beat(&mut rng, 1, true, false),
            ]),
            // Last beat with a gap in tkeep.
            1 => bad(vec![
                beat(&mut rng, full, false, false),
                beat(&mut rng, 0b101, true, false),
            ]),
            // Last beat with no byte at all.
            2 => bad(vec![beat(&mut rng, 0, true, false)]),
            // Last beat not starting at lane 0.
            3 => bad(vec![beat(&mut rng, full & !1, true, false)]),
            // Upstream error on a middle beat.
            _ => bad(vec![
                beat(&mut rng, full, false, false),
                beat(&mut rng, full, false, true),
                beat(&mut rng, 3, true, false),
            ]),
        };
        cases.push(case);
    }
    cases.push(good_case(&mut rng, 1));
    run(&mut dut, cases, seed, 100, 300);
}

/// With the result sink stalled, the input stops after RESULT_DEPTH
/// packets and nothing is lost; once released, every result is right.
fn result_backpressure<D: CrcDut>(name: &str) {
    let seed = Rng::seed_from_env(name, 0xb4c);
    let mut rng = Rng::new(seed);
    let mut dut = D::create();
    let lanes = dut.lanes();
    let mut bench = Bench::new(lanes, seed, 0, 1000);
    let cases: Vec<Case> = (0..80)
        .map(|_| sized_case(&mut rng, 1, 2 * lanes))
        .collect();
    for c in &cases {
        bench.push(c);
    }
    for _ in 0..400 {
        bench.cycle(&mut dut);
    }
    assert_eq!(
        bench.src.packets_sent, 32,
        "input must stop at RESULT_DEPTH outstanding results"
    );
    assert!(bench.sink.packets.is_empty());
    bench.sink.set_stall(500);
    for _ in 0..2000 {
        bench.cycle(&mut dut);
    }
    assert_eq!(bench.sink.violations, Vec::<String>::new());
    assert_eq!(bench.sink.packets.len(), cases.len());
    for (i, (p, c)) in bench.sink.packets.iter().zip(&cases).enumerate() {
        assert_eq!(Some(crc_of(p)), c.expect, "packet {i}");
    }
}

/// Reset in the middle of a packet: no result for it ever appears and the
/// packets after reset are right.
fn reset_mid_packet<D: CrcDut>(name: &str) {
    let seed = Rng::seed_from_env(name, 0x4e5);
    let mut rng = Rng::new(seed);
    let mut dut = D::create();
    let lanes = dut.lanes();
    // Two short packets whose results sit in the stalled queue, then half
    // of a long packet, then reset.
    let mut bench = Bench::new(lanes, seed, 0, 1000);
    for len in [lanes, 1, 5 * lanes] {
        bench.push(&good_case(&mut rng, len));
    }
    for _ in 0..5 {
        bench.cycle(&mut dut);
    }
    assert_eq!(bench.src.packets_sent, 2);
    let mut quiet = Bench::new(lanes, seed, 0, 1000);
    for _ in 0..20 {
        quiet.cycle(&mut dut);
    }
    assert!(dut.out_valid(), "results queued before reset");
    dut.set_rst(true);
    quiet.cycle(&mut dut);
    dut.set_rst(false);
    let cases: Vec<Case> = (0..40)
        .map(|_| sized_case(&mut rng, 1, 3 * lanes))
        .collect();
    run(&mut dut, cases, seed, 100, 100);
}

/// The ICRC's start state (DESIGN §8: 0xDEBB20E3, the register after the
/// 8 bytes of 0xFF that stand in for the LRH) gives the CRC of the packet
/// with those 8 bytes in front, as the `crc` crate computes it.
fn icrc_start<D: CrcDut>(name: &str) {
    let seed = Rng::seed_from_env(name, 0x1c2c);
    let mut rng = Rng::new(seed);
    let cases: Vec<Case> = (0..200)
        .map(|_| {
            let len = rng.range(1, 1500);
            let data = rng.bytes(len);
            let mut whole = vec![0xFF; 8];
            whole.extend_from_slice(&data);
            Case {
                init: 0xDEBB_20E3,
                expect: Some(CRC32.checksum(&whole)),
                data,
                beats: None,
            }
        })
        .collect();
    let mut dut = D::create();
    run(&mut dut, cases, seed, 100, 100);
}

macro_rules! width_tests {
    ($m:ident, $t:ty) => {
        mod $m {
            use super::*;
            #[test]
            fn every_length_1_to_130() {
                every_length::<$t>(concat!(stringify!($m), "::every_length_1_to_130"));
            }
            #[test]
            fn random_2000_packets_to_9000_bytes() {
                random_packets::<$t>(concat!(stringify!($m), "::random_2000_packets"));
            }
            #[test]
            fn full_rate_back_to_back() {
                full_rate::<$t>(concat!(stringify!($m), "::full_rate"));
            }
            #[test]
            fn latency_matches_spec() {
                latency::<$t>();
            }
            #[test]
            fn malformed_keep_and_tuser_flagged() {
                malformed::<$t>(concat!(stringify!($m), "::malformed"));
            }
            #[test]
            fn result_backpressure_loses_nothing() {
                result_backpressure::<$t>(concat!(stringify!($m), "::result_backpressure"));
            }
            #[test]
            fn reset_mid_packet_recovers() {
                reset_mid_packet::<$t>(concat!(stringify!($m), "::reset"));
            }
            #[test]
            fn icrc_start_state() {
                icrc_start::<$t>(concat!(stringify!($m), "::icrc_start_state"));
            }
        }
    };
}

width_tests!(w64, Crc32W64);
width_tests!(w128, Crc32W128);
width_tests!(w256, Crc32W256);
width_tests!(w512, Crc32W512);
// The same benches on the exact Verilog synthesis sees (shared XOR networks
// instead of the word-parallel simulation form).
width_tests!(w64_synth, Crc32W64Synth);
width_tests!(w512_synth, Crc32W512Synth);
