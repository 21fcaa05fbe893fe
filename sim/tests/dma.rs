//! The DMA engines (`dma_wr`, `dma_rd`) in Verilator against an AXI4
//! slave memory (`roce_sim::axi_mem`), checked against a plain Rust byte
//! map: every byte written (and no other), every byte read, completion
//! order and errors, `idle`, the AXI rules, stream-error recovery, and the
//! throughput and latency goals. W = 64 and 512. Seeds are printed;
//! `ROCE_SEED` repeats a run.

use roce_sim::axi_mem::{background, AxiMemTiming};
use roce_sim::dma::{Pacing, RdBench, RdCmd, WrBench, WrCmd};
use roce_sim::rng::Rng;
use std::collections::HashMap;

/// The test region straddles the 4 GiB line, so address bits above 32
/// carry.
const BASE: u64 = 0x0000_0001_FFF8_0000;
const REGION: u64 = 1 << 20;

const PACED: Pacing = Pacing {
    cmd_gap: 200,
    stream: 200,
    done_stall: 200,
};

const SLOW_MEM: AxiMemTiming = AxiMemTiming {
    lat_min: 1,
    lat_max: 30,
    stall_permille: 200,
    gap_permille: 200,
};

fn addr(rng: &mut Rng, lanes: usize) -> u64 {
    let off = match rng.below(6) {
        // Just below a 4 KiB boundary.
        0 => (rng.below(REGION >> 12) << 12).wrapping_sub(rng.below(3 * lanes as u64 + 1)),
        // Every offset within a beat.
        1 => rng.below(REGION / lanes as u64) * lanes as u64 + rng.below(lanes as u64),
        _ => rng.below(REGION),
    };
    BASE + (off % (REGION - 16384))
}

fn pkt_len(rng: &mut Rng, lanes: usize) -> usize {
    let k = lanes;
    match rng.below(14) {
        0 => 1,
        1 => rng.range(1, 127),
        2 => k - 1,
        3 => k,
        4 => k + 1,
        5 => [256, 512, 1024, 2048, 4096][rng.below(5) as usize] + rng.range(0, 2) - 1,
        6 => 9000,
        7 => rng.range(4097, 9000),
        _ => rng.range(1, 3000),
    }
}

/// Expected memory: the bytes the commands write, in order.
#[derive(Default)]
struct RefMem(HashMap<u64, u8>);

impl RefMem {
    fn write(&mut self, addr: u64, bytes: &[u8]) {
        for (i, &b) in bytes.iter().enumerate() {
            self.0.insert(addr + i as u64, b);
        }
    }
}

/// Random `dma_wr` traffic: packets split into commands at random byte
/// offsets (some discarded, some ended by a zero-length `last` command),
/// immediate and zero-length commands between and inside them.
fn wr_traffic(
    rng: &mut Rng,
    lanes: usize,
    packets: usize,
) -> (Vec<WrCmd>, Vec<Vec<u8>>, RefMem, usize) {
    let mut cmds = Vec::new();
    let mut pkts = Vec::new();
    let mut refm = RefMem::default();
    let mut bytes = 0;
    let imm = |rng: &mut Rng, cmds: &mut Vec<WrCmd>, refm: &mut RefMem| {
        let len = rng.range(0, 8) as u32;
        let c = WrCmd {
            addr: addr(rng, lanes),
            len,
            last: rng.chance(300),
            discard: rng.chance(100),
            imm: true,
            data: rng.next_u64(),
        };
        if !c.discard {
            refm.write(c.addr, &c.data.to_le_bytes()[..len as usize]);
        }
        cmds.push(c);
    };
    for _ in 0..packets {
        if rng.chance(150) {
            imm(rng, &mut cmds, &mut refm);
        }
        if rng.chance(50) {
            // A zero-length command that is not a packet's last.
            cmds.push(WrCmd {
                addr: addr(rng, lanes),
                len: 0,
                last: false,
                discard: rng.chance(500),
                imm: false,
                data: 0,
            });
        }
        let len = pkt_len(rng, lanes);
        let data = rng.bytes(len);
        bytes += len;
        let discard = rng.chance(150);
        // Cut points: 0 = c0 <= c1 <= ... <= len.
        let pieces = 1 + rng.below(4) as usize;
        let mut cuts: Vec<usize> = (1..pieces).map(|_| rng.range(0, len)).collect();
        cuts.push(0);
        cuts.push(len);
        cuts.sort();
        let zero_last = rng.chance(80);
        for i in 0..pieces {
            let (a, b) = (cuts[i], cuts[i + 1]);
            let c = WrCmd {
                addr: addr(rng, lanes),
                len: (b - a) as u32,
                last: i + 1 == pieces && !zero_last,
                discard,
                imm: false,
                data: rng.next_u64(),
            };
            if !discard {
                refm.write(c.addr, &data[a..b]);
            }
            cmds.push(c);
            if rng.chance(80) {
                imm(rng, &mut cmds, &mut refm);
            }
        }
        if zero_last {
            cmds.push(WrCmd {
                addr: addr(rng, lanes),
                len: 0,
                last: true,
                discard: rng.chance(500),
                imm: false,
                data: 0,
            });
        }
        pkts.push(data);
    }
    (cmds, pkts, refm, bytes)
}

/// Every byte the memory holds was written by the reference with that
/// value, and every byte the reference wrote is there.
fn check_memory(b: &WrBench, refm: &RefMem) {
    let mut stray = Vec::new();
    for (a, v) in b.mem.written() {
        match refm.0.get(&a) {
            Some(&e) if e == v => {}
            e => stray.push((a, v, e)),
        }
    }
    stray.sort();
    assert!(
        stray.is_empty(),
        "{} bytes written wrongly (addr, got, expected), first: {:x?}",
        stray.len(),
        &stray[..stray.len().min(8)]
    );
    for (&a, &e) in &refm.0 {
        let got = b.mem.peek(a, 1)[0];
        assert_eq!(got, e, "byte at {a:#x} not written");
    }
}

fn wr_random(width: usize, default_seed: u64, packets: usize) {
    let test = format!("wr_random_w{width}");
    let seed = Rng::seed_from_env(&test, default_seed);
    let lanes = width / 8;
    let mut rng = Rng::new(seed);
    for (pacing, timing, n) in [
        (PACED, SLOW_MEM, packets),
        (Pacing::FULL_RATE, AxiMemTiming::FAST, packets / 2),
    ] {
        let mut b = WrBench::new(width, rng.next_u64(), pacing, timing);
        let (cmds, pkts, refm, bytes) = wr_traffic(&mut rng, lanes, n);
        // Two poisoned pages: those of two random writing commands.
        let writers: Vec<&WrCmd> = cmds.iter().filter(|c| !c.discard && c.len > 0).collect();
        for _ in 0..2 {
            let c = writers[rng.below(writers.len() as u64) as usize];
            b.mem.poison_page(c.addr + rng.below(c.len as u64));
        }
        let expect_err: Vec<bool> = cmds
            .iter()
            .map(|c| !c.discard && b.mem.range_poisoned(c.addr, c.len as u64))
            .collect();
        for p in &pkts {
            b.src.push(p);
        }
        for c in &cmds {
            b.push_cmd(c.clone());
        }
        let done = b.run(40 * bytes as u64 / lanes as u64 + 200 * cmds.len() as u64 + 10_000);
        assert!(
            done,
            "{test}: hung with {} of {} commands completed, {} stream beats left",
            b.dones.len(),
            cmds.len(),
            b.src.backlog()
        );
        assert!(b.src.is_done(), "{test}: stream not consumed");
        assert!(
            b.mem.violations.is_empty(),
            "{test}: {:?}",
            b.mem.violations
        );
        assert!(
            b.idle_errors.is_empty(),
            "{test}: {:?}",
            &b.idle_errors[..1]
        );
        assert_eq!(b.dut.stream_errs(), 0, "{test}: stream errors counted");
        let errs: Vec<bool> = b.dones.iter().map(|d| d.0).collect();
        assert_eq!(errs.len(), cmds.len());
        for (i, (&got, &want)) in errs.iter().zip(&expect_err).enumerate() {
            assert_eq!(got, want, "{test}: command {i} {:?} err", cmds[i]);
        }
        check_memory(&b, &refm);
        assert!(b.dut.idle());
        println!(
            "{test}: {} commands, {} packets, {bytes} bytes, {} bursts ({} SLVERR commands), \
             at most {} bursts awaiting B, {} cycles",
            cmds.len(),
            pkts.len(),
            b.mem.aws,
            expect_err.iter().filter(|&&e| e).count(),
            b.mem.max_writes_out,
            b.cycle
        );
        assert!(expect_err.iter().any(|&e| e));
    }
}

#[test]
fn wr_random_w64() {
    wr_random(64, 0xd3a1_0064, 300);
}

#[test]
fn wr_random_w512() {
    wr_random(512, 0xd3a1_0512, 300);
}

/// One stream-error scenario: the packet's real bytes, its commands (as
/// byte counts and last flags), and the expected per-command errors.
struct Scenario {
    name: &'static str,
    pkt_len: usize,
    cmds: Vec<(u32, bool)>,
    errs: Vec<bool>,
}

fn wr_stream_errors(width: usize) {
    let test = format!("wr_stream_errors_w{width}");
    let seed = Rng::seed_from_env(&test, 0x5e77 + width as u64);
    let lanes = width / 8;
    let mut rng = Rng::new(seed);
    let scenarios = [
        Scenario {
            name: "short packet, last command missing bytes",
            pkt_len: 100,
            cmds: vec![(80, false), (70, true)],
            errs: vec![false, true],
        },
        Scenario {
            name: "packet consumed exactly, then more bytes asked (dead to its last)",
            pkt_len: 128,
            cmds: vec![(64, false), (64, false), (10, false), (0, true)],
            errs: vec![false, false, true, true],
        },
        Scenario {
            name: "last command ends before the tlast beat",
            pkt_len: 200,
            cmds: vec![(50, true)],
            errs: vec![true],
        },
        Scenario {
            name: "short packet mid-packet (dead to its last)",
            pkt_len: 100,
            cmds: vec![(30, false), (100, false), (10, false), (10, true)],
            errs: vec![false, true, true, true],
        },
        Scenario {
            name: "good packet ended by a zero-length last command",
            pkt_len: 3 * lanes + 5,
            cmds: vec![
                (lanes as u32 + 3, false),
                (2 * lanes as u32 + 2, false),
                (0, true),
            ],
            errs: vec![false, false, false],
        },
    ];
    for sc in &scenarios {
        for paced in [false, true] {
            let pacing = if paced { PACED } else { Pacing::FULL_RATE };
            let timing = if paced { SLOW_MEM } else { AxiMemTiming::FAST };
            let mut b = WrBench::new(width, rng.next_u64(), pacing, timing);
            // A good packet before and after the bad one.
            let mut good = RefMem::default();
            let mut allowed = RefMem::default();
            let mut expect = Vec::new();
            let mut good_pkt = |rng: &mut Rng, b: &mut WrBench, expect: &mut Vec<bool>| {
                let len = rng.range(1, 3 * lanes + 7);
                let data = rng.bytes(len);
                let c = WrCmd {
                    addr: addr(rng, lanes),
                    len: len as u32,
                    last: true,
                    discard: false,
                    imm: false,
                    data: 0,
                };
                good.write(c.addr, &data);
                b.src.push(&data);
                b.push_cmd(c);
                expect.push(false);
            };
            good_pkt(&mut rng, &mut b, &mut expect);
            let data = rng.bytes(sc.pkt_len);
            b.src.push(&data);
            let mut off = 0usize;
            for (&(len, last), &e) in sc.cmds.iter().zip(&sc.errs) {
                let c = WrCmd {
                    addr: addr(&mut rng, lanes),
                    len,
                    last,
                    discard: false,
                    imm: false,
                    data: 0,
                };
                // What the command may write: its bytes that exist.
                let end = (off + len as usize).min(sc.pkt_len);
                if off < end {
                    allowed.write(c.addr, &data[off..end]);
                }
                off += len as usize;
                b.push_cmd(c);
                expect.push(e);
            }
            good_pkt(&mut rng, &mut b, &mut expect);
            assert!(b.run(20_000), "{test}: {}: hung", sc.name);
            assert!(b.src.is_done(), "{test}: {}: stream not consumed", sc.name);
            assert!(b.mem.violations.is_empty(), "{:?}", b.mem.violations);
            assert!(b.idle_errors.is_empty(), "{:?}", b.idle_errors);
            let errs: Vec<bool> = b.dones.iter().map(|d| d.0).collect();
            assert_eq!(errs, expect, "{test}: {}", sc.name);
            let want_count = sc.errs.iter().any(|&e| e) as u32;
            assert_eq!(b.dut.stream_errs(), want_count, "{test}: {}", sc.name);
            for (&a, &v) in &good.0 {
                assert_eq!(
                    b.mem.peek(a, 1)[0],
                    v,
                    "{test}: {}: good byte {a:#x}",
                    sc.name
                );
            }
            for (a, v) in b.mem.written() {
                let ok = good.0.get(&a) == Some(&v) || allowed.0.get(&a) == Some(&v);
                assert!(ok, "{test}: {}: stray byte {v:#x} at {a:#x}", sc.name);
            }
        }
    }
    println!(
        "{test}: {} scenarios, paced and at full rate",
        scenarios.len()
    );
}

#[test]
fn wr_stream_errors_w64() {
    wr_stream_errors(64);
}

#[test]
fn wr_stream_errors_w512() {
    wr_stream_errors(512);
}

/// Full-rate figures: a 4096-byte packet (one command, aligned), then 16
/// packets of 4096 bytes, each split into three commands at unaligned
/// addresses; memory always ready, latency `lat`.
fn wr_throughput(width: usize) {
    let lanes = width / 8;
    let mut rng = Rng::new(0x7410 + width as u64);
    // Latency of one command.
    let mut b = WrBench::new(width, 1, Pacing::FULL_RATE, AxiMemTiming::FAST);
    let data = rng.bytes(4096);
    b.src.push(&data);
    b.push_cmd(WrCmd {
        addr: BASE,
        len: 4096,
        last: true,
        discard: false,
        imm: false,
        data: 0,
    });
    assert!(b.run(10_000));
    let t0 = b.accepted[0].1;
    let first_aw = b.mem.first_aw.unwrap() - t0;
    let first_w = b.mem.first_w.unwrap() - t0;
    let done = b.dones[0].1 - t0;
    let beats = 4096 / lanes as u64;
    assert_eq!(b.mem.w_beats, beats);
    println!(
        "dma_wr w{width}: one 4096-byte command: first AW +{first_aw}, first W +{first_w}, \
         done +{done} cycles ({beats} W beats)"
    );
    assert!(first_aw <= 4 && first_w <= 8, "command latency");
    assert!(done <= beats + 12, "4096 bytes in {done} cycles");
    // Sustained, over unaligned split commands, with B latency 20.
    let timing = AxiMemTiming {
        lat_min: 20,
        lat_max: 20,
        stall_permille: 0,
        gap_permille: 0,
    };
    let mut b = WrBench::new(width, 2, Pacing::FULL_RATE, timing);
    let mut refm = RefMem::default();
    for p in 0..16u64 {
        let data = rng.bytes(4096);
        b.src.push(&data);
        let cuts = [0, 1000 + rng.range(0, 50), 3000 + rng.range(0, 50), 4096];
        for i in 0..3 {
            let a = BASE + p * 0x3000 + [3, 4100, 8000][i] + rng.below(lanes as u64);
            refm.write(a, &data[cuts[i]..cuts[i + 1]]);
            b.push_cmd(WrCmd {
                addr: a,
                len: (cuts[i + 1] - cuts[i]) as u32,
                last: i == 2,
                discard: false,
                imm: false,
                data: 0,
            });
        }
    }
    assert!(b.run(100_000));
    check_memory(&b, &refm);
    let cycles = b.dones.last().unwrap().1 - b.accepted[0].1;
    let stream_beats = 16 * 4096 / lanes as u64;
    let rate = stream_beats as f64 / cycles as f64;
    println!(
        "dma_wr w{width}: 16 x 4096-byte packets in 48 unaligned commands, B latency 20: \
         {stream_beats} stream beats, {} W beats in {cycles} cycles = {rate:.3} stream beats/cycle; \
         {} bursts awaiting B at most",
        b.mem.w_beats, b.mem.max_writes_out
    );
    assert!(b.mem.max_writes_out >= 8, "outstanding bursts");
    // W = 64: 512 beats a packet plus a few cycles a command.
    // (At W = 512 a 4096-byte packet is 64 beats, and each of its three
    // commands costs a cycle or two.)
    let goal = if width == 64 { 0.95 } else { 0.85 };
    assert!(rate >= goal, "{rate:.3} beats/cycle below {goal}");
}

#[test]
fn wr_throughput_w64() {
    wr_throughput(64);
}

#[test]
fn wr_throughput_w512() {
    wr_throughput(512);
}

/// Random `dma_rd` traffic: packets of 1..=4 chunks at random addresses
/// (every offset in a beat, across 4 KiB lines, over 256 beats), some
/// touching a poisoned page.
fn rd_random(width: usize, default_seed: u64, packets: usize) {
    let test = format!("rd_random_w{width}");
    let seed = Rng::seed_from_env(&test, default_seed);
    let lanes = width / 8;
    let mut rng = Rng::new(seed);
    // The third run: a sink ready 30 % of the time behind a fast memory.
    let slow_sink = Pacing {
        cmd_gap: 0,
        stream: 700,
        done_stall: 0,
    };
    for (pacing, timing, n) in [
        (PACED, SLOW_MEM, packets),
        (Pacing::FULL_RATE, AxiMemTiming::FAST, packets / 2),
        (slow_sink, AxiMemTiming::FAST, packets / 4),
    ] {
        let mut b = RdBench::new(width, rng.next_u64(), pacing, timing);
        // Some memory written beforehand (the rest reads as background).
        for _ in 0..50 {
            let a = addr(&mut rng, lanes);
            let n = rng.range(1, 5000);
            let bytes = rng.bytes(n);
            b.mem.poke(a, &bytes);
        }
        let poisoned: Vec<u64> = (0..2).map(|_| addr(&mut rng, lanes)).collect();
        for &p in &poisoned {
            b.mem.poison_page(p);
        }
        let mut expect = Vec::new();
        let mut total = 0;
        for _ in 0..n {
            let chunks = 1 + rng.below(4) as usize;
            let mut bytes = Vec::new();
            let mut err = false;
            for i in 0..chunks {
                let len = pkt_len(&mut rng, lanes).min(if chunks > 1 { 4096 } else { 9000 });
                let a = addr(&mut rng, lanes);
                bytes.extend(b.mem.peek(a, len));
                err |= b.mem.range_poisoned(a, len as u64);
                b.push_cmd(RdCmd {
                    addr: a,
                    len: len as u32,
                    last: i + 1 == chunks,
                });
                if rng.chance(30) {
                    // Ignored: zero length, not last.
                    b.push_cmd(RdCmd {
                        addr: a,
                        len: 0,
                        last: false,
                    });
                }
            }
            total += bytes.len();
            expect.push((bytes, err));
        }
        let ok = b.run(expect.len(), 40 * total as u64 / lanes as u64 + 100_000);
        assert!(
            ok,
            "{test}: hung with {} of {} packets out",
            b.sink.packets.len(),
            expect.len()
        );
        assert!(
            b.sink.violations.is_empty(),
            "{test}: {:?}",
            b.sink.violations
        );
        assert!(
            b.mem.violations.is_empty(),
            "{test}: {:?}",
            b.mem.violations
        );
        assert!(
            b.idle_errors.is_empty(),
            "{test}: {:?}",
            &b.idle_errors[..1]
        );
        // The R buffer is reserved before each AR: `m_data` backpressure
        // never reaches the R channel.
        assert_eq!(b.mem.r_stalls, 0, "{test}: RREADY low under an R beat");
        assert_eq!(b.sink.packets.len(), expect.len());
        for (i, ((want, err), got)) in expect.iter().zip(&b.sink.packets).enumerate() {
            assert_eq!(got.data.len(), want.len(), "{test}: packet {i} length");
            assert!(got.data == *want, "{test}: packet {i} bytes differ");
            assert_eq!(got.user, *err, "{test}: packet {i} tuser");
        }
        println!(
            "{test}: {} packets, {total} bytes, {} bursts, {} with SLVERR, at most {} reads \
             outstanding, {} cycles",
            expect.len(),
            b.mem.ars,
            expect.iter().filter(|e| e.1).count(),
            b.mem.max_reads_out,
            b.cycle
        );
    }
}

#[test]
fn rd_random_w64() {
    rd_random(64, 0xd3a2_0064, 300);
}

#[test]
fn rd_random_w512() {
    rd_random(512, 0xd3a2_0512, 300);
}

/// Full-rate read figures: memory latency 20, always ready; a 64 KiB
/// packet of 16 page chunks at an unaligned start, and one 4096-byte read.
fn rd_throughput(width: usize) {
    let lanes = width / 8;
    let timing = AxiMemTiming {
        lat_min: 20,
        lat_max: 20,
        stall_permille: 0,
        gap_permille: 0,
    };
    let mut b = RdBench::new(width, 3, Pacing::FULL_RATE, timing);
    b.push_cmd(RdCmd {
        addr: BASE,
        len: 4096,
        last: true,
    });
    assert!(b.run(1, 10_000));
    let t0 = b.accepted[0].1;
    let first_ar = b.mem.first_ar.unwrap() - t0;
    let first = b.beat_cycles[0] - t0;
    let last = b.beat_cycles.last().unwrap() - t0;
    let beats = 4096 / lanes as u64;
    println!(
        "dma_rd w{width}: one 4096-byte read, latency 20: first AR +{first_ar}, first m_data \
         beat +{first}, last +{last} cycles ({beats} beats)"
    );
    assert_eq!(b.sink.packets[0].data, b.mem.peek(BASE, 4096));
    assert!(first_ar <= 4 && first <= 20 + 8, "read latency");
    let mut b = RdBench::new(width, 4, Pacing::FULL_RATE, timing);
    let start = BASE + 5;
    let mut a = start;
    for i in 0..16 {
        let len = 4096 - (a & 0xfff);
        b.push_cmd(RdCmd {
            addr: a,
            len: len as u32,
            last: i == 15,
        });
        a += len;
    }
    let total = a - start;
    assert!(b.run(1, 100_000));
    assert_eq!(b.sink.packets[0].data, b.mem.peek(start, total as usize));
    let span = b.beat_cycles.last().unwrap() - b.beat_cycles[0] + 1;
    let out_beats = b.beat_cycles.len() as u64;
    let rate = out_beats as f64 / span as f64;
    println!(
        "dma_rd w{width}: {total} bytes in 16 page chunks, latency 20: {out_beats} beats in \
         {span} cycles = {rate:.3} beats/cycle; {} ARs, at most {} outstanding",
        b.mem.ars, b.mem.max_reads_out
    );
    assert!(rate >= 0.9, "{rate:.3} beats/cycle");
}

#[test]
fn rd_throughput_w64() {
    rd_throughput(64);
}

#[test]
fn rd_throughput_w512() {
    rd_throughput(512);
}

#[test]
fn background_is_not_constant() {
    // The untouched-byte check relies on the background varying.
    let v: std::collections::HashSet<u8> = (0..256).map(background).collect();
    assert!(v.len() > 100);
}
