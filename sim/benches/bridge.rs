//! Verilator bridge throughput: simulated cycles per second of wall time,
//! each CRC-32 model at full line rate (a beat every cycle, 1500-byte
//! packets, result sink always ready), measured two ways:
//!
//! - `bridge`: the model alone through the FFI: a new `tdata` (packed from
//!   precomputed bytes) and `tlast` every cycle, `eval()`, `tick()`;
//! - `with BFMs`: the same traffic from `PacketSource` into `PacketSink`,
//!   as the test benches drive it.
//!
//! `cargo bench -p roce-sim --bench bridge [-- CYCLES]` (default 2,000,000).
//! These are wall-clock figures: run on an idle machine and take the median
//! of a few runs.

use roce_sim::axis::{full_keep, le_u64, le_words, StreamInPort};
use roce_sim::bfm::{PacketSink, PacketSource};
use roce_sim::models::*;
use roce_sim::rng::Rng;
use std::time::Instant;

macro_rules! bench_crc {
    ($model:ty, $cycles:expr, $set_data:expr) => {{
        let cycles: u64 = $cycles;
        let set_data = $set_data;
        let mut rng = Rng::new(1);
        let packet = rng.bytes(1500);

        // With the bus-functional models.
        let mut dut = <$model>::new();
        let lanes = dut.s_axis().bytes();
        let mut src = PacketSource::new(lanes, 2, 0);
        let mut sink = PacketSink::new(4, 3, 0);
        dut.set_s_init(0xFFFF_FFFF);
        let start = Instant::now();
        for _ in 0..cycles {
            if src.backlog() < 4 {
                src.push(&packet);
            }
            roce_sim::stream_cycle!(dut, src => s_axis, sink => m_crc);
        }
        let with_bfms = cycles as f64 / start.elapsed().as_secs_f64() / 1e6;
        assert_eq!(sink.violations, Vec::<String>::new());
        assert!(src.packets_sent > 0 && sink.packets.len() as u64 + 64 >= src.packets_sent);

        // The model alone.
        let mut dut = <$model>::new();
        dut.set_s_init(0xFFFF_FFFF);
        dut.set_m_crc_tready(true);
        dut.set_s_axis_tvalid(true);
        dut.set_s_axis_tkeep(full_keep(lanes) as _);
        let beats: Vec<Vec<u8>> = (0..64).map(|_| rng.bytes(lanes)).collect();
        let mut results = 0u64;
        let start = Instant::now();
        for i in 0..cycles {
            set_data(&mut dut, &beats[(i % 64) as usize]);
            dut.set_s_axis_tlast(i % 24 == 23);
            dut.eval();
            results += dut.get_m_crc_tvalid() as u64;
            dut.tick();
        }
        let bridge = cycles as f64 / start.elapsed().as_secs_f64() / 1e6;
        assert!(results * 24 + 100 >= cycles, "one result per 24 beats");
        println!(
            "{:<16} {:>9} cycles   bridge {:>5.2} M cycles/s   with BFMs {:>5.2} M cycles/s",
            <$model>::NAME,
            cycles,
            bridge,
            with_bfms,
        );
    }};
}

fn main() {
    let cycles: u64 = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(|a| a.parse().expect("CYCLES must be a number"))
        .unwrap_or(2_000_000);
    bench_crc!(Crc32W64, cycles, |d: &mut Crc32W64, b: &[u8]| d
        .set_s_axis_tdata(le_u64(b)));
    bench_crc!(Crc32W128, cycles, |d: &mut Crc32W128, b: &[u8]| d
        .set_s_axis_tdata(&le_words(b)));
    bench_crc!(Crc32W256, cycles, |d: &mut Crc32W256, b: &[u8]| d
        .set_s_axis_tdata(&le_words(b)));
    bench_crc!(Crc32W512, cycles, |d: &mut Crc32W512, b: &[u8]| d
        .set_s_axis_tdata(&le_words(b)));
    bench_crc!(Crc32W64Synth, cycles, |d: &mut Crc32W64Synth, b: &[u8]| d
        .set_s_axis_tdata(le_u64(b)));
    bench_crc!(
        Crc32W512Synth,
        cycles,
        |d: &mut Crc32W512Synth, b: &[u8]| d.set_s_axis_tdata(&le_words(b))
    );
}
