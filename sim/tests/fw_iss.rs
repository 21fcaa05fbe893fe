//! Firmware co-simulation on an instruction-set simulator (issue 5, item
//! 5): the real roce-fw ELF (riscv32imc, release, built into
//! `target/fw-elf`) runs on `rvsim` with RAM at 0 loaded from its
//! `PT_LOAD` segments; its CSR window is the Verilated CSR block
//! (`CsrW256`), every load and store there an AXI4-Lite transaction. The
//! host posts modify-QP commands through the mailbox on the same port
//! between instructions. Checks (`common::fwcheck`): every result code
//! and the whole QP context table equal the firmware host library's on the
//! reference register file, after every command.

mod common;

use common::fwcheck;
use roce_sim::axil::Timing;
use roce_sim::fw::{self, iss::IssSoc};
use roce_sim::rng::Rng;

fn soc(test: &str, seed: u64, timing: Timing) -> (IssSoc, Rng) {
    let (ram, entry) = fw::image().unwrap_or_else(|e| panic!("{e}"));
    let seed = Rng::seed_from_env(test, seed);
    (
        IssSoc::new(ram, *entry, seed ^ 0x15, timing),
        Rng::new(seed),
    )
}

#[test]
fn iss_brings_qps_up() {
    let (mut s, mut rng) = soc("fw_iss::iss_brings_qps_up", 20, Timing::RANDOM);
    let log = fwcheck::bring_up(&mut s, &mut rng, 3);
    assert_eq!(log.len(), 9);
}

#[test]
fn iss_illegal_requests_change_nothing() {
    let (mut s, mut rng) = soc("fw_iss::iss_illegal_requests", 21, Timing::RANDOM);
    let log = fwcheck::illegal_requests(&mut s, &mut rng);
    assert_eq!(log.len(), 14);
}

/// Instructions and cycles per command with the CSR port at full rate
/// (docs/BENCHMARKS.md).
#[test]
fn iss_cycles_per_command() {
    let (mut s, mut rng) = soc("fw_iss::iss_cycles_per_command", 22, Timing::FULL_RATE);
    let log = fwcheck::bring_up(&mut s, &mut rng, 3);
    for (name, p) in &log {
        println!(
            "ISS full rate: {name}: {} instructions, {} cycles (instructions + CSR bus cycles)",
            p.instrs.unwrap(),
            p.cycles
        );
    }
    // Speed in the firmware's idle poll loop: every iteration reads
    // `mbox.doorbell`, one Verilated AXI4-Lite transaction.
    use roce_sim::fw::Softcore;
    let (i0, t0) = (s.clock.instret, std::time::Instant::now());
    for _ in 0..200_000 {
        s.step();
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "ISS: {:.2} M instructions/s in the poll loop ({} instructions in {secs:.3} s)",
        (s.clock.instret - i0) as f64 / secs / 1e6,
        s.clock.instret - i0
    );
}
