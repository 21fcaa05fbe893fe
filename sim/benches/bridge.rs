//! Verilator bridge throughput: simulated cycles per second of wall time,
//! each CRC-32 model at full line rate (a beat every cycle, 1500-byte
//! packets, sink always ready).
//!
//! `cargo bench -p roce-sim --bench bridge [-- CYCLES]` (default 2,000,000)

use roce_sim::axis::StreamInPort;
use roce_sim::bfm::{PacketSink, PacketSource};
use roce_sim::models::*;
use roce_sim::rng::Rng;
use std::time::Instant;

macro_rules! bench_crc {
    ($model:ty, $cycles:expr) => {{
        let mut dut = <$model>::new();
        let lanes = dut.s_axis().bytes();
        let mut rng = Rng::new(1);
        let mut src = PacketSource::new(lanes, 2, 0);
        let mut sink = PacketSink::new(4, 3, 0);
        dut.set_s_init(0xFFFF_FFFF);
        // Pre-generate traffic so the timed loop is the model and the bridge.
        let packet = rng.bytes(1500);
        let start = Instant::now();
        for _ in 0..$cycles {
            if src.backlog() < 4 {
                src.push(&packet);
            }
            src.drive(&mut dut.s_axis());
            sink.drive(&mut dut.m_crc());
            dut.eval();
            src.handshake(&dut.s_axis());
            sink.handshake(&dut.m_crc());
            dut.tick();
        }
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(sink.violations, Vec::<String>::new());
        assert!(sink.packets.len() as u64 + 64 >= src.packets_sent && src.packets_sent > 0);
        println!(
            "{:<16} {:>10} cycles {:>7.2} s {:>8.2} M cycles/s  ({} packets)",
            <$model>::TOP,
            $cycles,
            secs,
            $cycles as f64 / secs / 1e6,
            sink.packets.len()
        );
    }};
}

fn main() {
    let cycles: u64 = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(|a| a.parse().expect("CYCLES must be a number"))
        .unwrap_or(2_000_000);
    bench_crc!(Crc32W64, cycles);
    bench_crc!(Crc32W128, cycles);
    bench_crc!(Crc32W256, cycles);
    bench_crc!(Crc32W512, cycles);
}
