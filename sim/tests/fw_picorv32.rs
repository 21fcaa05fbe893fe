//! Firmware co-simulation on PicoRV32 (issue 5, item 6): the real roce-fw
//! ELF in the on-chip RAM of the Verilated `FwSoc` (PicoRV32 RV32IMC +
//! RAM + the CSR block `csr_w256`, `sim/verilog/fw_soc.v`); the host posts
//! modify-QP commands on the SoC's AXI4-Lite port, arbitrated with the
//! core's. The same checks as the ISS co-simulation (`common::fwcheck`:
//! result codes and the whole QP table against the firmware host library
//! on the reference register file), plus the softcore cycles from the
//! doorbell write to the firmware's completion, against the goal.

mod common;

use common::fwcheck;
use roce_sim::axil::Timing;
use roce_sim::fw::{self, picorv32::PicoSoc};
use roce_sim::rng::Rng;

/// Issue 5: a modify-QP command completes within this many PicoRV32
/// cycles.
const GOAL_CYCLES: u64 = 2000;

fn soc(test: &str, seed: u64, timing: Timing) -> (PicoSoc, Rng) {
    let (ram, entry) = fw::image().unwrap_or_else(|e| panic!("{e}"));
    let seed = Rng::seed_from_env(test, seed);
    let s = PicoSoc::new(ram, *entry, seed ^ 0x32, timing).unwrap_or_else(|e| panic!("{e}"));
    (s, Rng::new(seed))
}

#[test]
fn picorv32_brings_qps_up() {
    let (mut s, mut rng) = soc("fw_picorv32::picorv32_brings_qps_up", 30, Timing::RANDOM);
    let log = fwcheck::bring_up(&mut s, &mut rng, 3);
    assert_eq!(log.len(), 9);
}

#[test]
fn picorv32_illegal_requests_change_nothing() {
    let (mut s, mut rng) = soc("fw_picorv32::picorv32_illegal_requests", 31, Timing::RANDOM);
    let log = fwcheck::illegal_requests(&mut s, &mut rng);
    assert_eq!(log.len(), 14);
}

/// Cycles per command with the host idle on the bus while the firmware
/// works (it polls every `fw::POLL_EVERY` cycles), full-rate host port;
/// every modify-QP command within the goal.
#[test]
fn picorv32_cycles_per_command() {
    let (mut s, mut rng) = soc(
        "fw_picorv32::picorv32_cycles_per_command",
        32,
        Timing::FULL_RATE,
    );
    let log = fwcheck::bring_up(&mut s, &mut rng, 3);
    let worst = log.iter().map(|(_, p)| p.cycles).max().unwrap();
    for (name, p) in &log {
        println!("PicoRV32: {name}: {} cycles (goal {GOAL_CYCLES})", p.cycles);
    }
    println!("PicoRV32: worst {worst} cycles per modify-QP command (goal {GOAL_CYCLES})");
    assert!(worst <= GOAL_CYCLES, "{worst} cycles > goal {GOAL_CYCLES}");
    // Simulation speed: the firmware's idle poll loop.
    use roce_sim::fw::Softcore;
    let (c0, t0) = (s.cycles(), std::time::Instant::now());
    for _ in 0..200_000 {
        s.step();
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "PicoRV32 model: {:.2} M cycles/s (poll loop, {} cycles in {secs:.3} s)",
        (s.cycles() - c0) as f64 / secs / 1e6,
        s.cycles() - c0
    );
}

/// The arbiter under load: while the firmware runs each bring-up command,
/// the host reads random registers back to back (random gaps and
/// backpressure) — configuration, counters, other QPs' contexts — and each
/// must read its reference value; the commands still give the reference's
/// results and table.
#[test]
fn picorv32_host_reads_during_commands() {
    use fwcheck::{random_bringup, ref_table, table, Reference};
    use roce_fw::Regs;
    use roce_regs::{mbox, Command, QpType};
    use roce_sim::fw::{boot, Host, Softcore};
    let (mut s, mut rng) = soc("fw_picorv32::picorv32_host_reads", 33, Timing::RANDOM);
    boot(&mut s).unwrap();
    let mut r = Reference::new();
    let n = r.n_qps();
    let q = rng.below(n as u64) as u32;
    let b = random_bringup(&mut rng, q, QpType::Rc);
    // Registers whose value no command here changes: not the mailbox, not
    // QP q's context.
    let ctx_q: Vec<u32> = roce_regs::qp::BLOCK
        .registers
        .iter()
        .filter(|reg| common::is_ctx(reg))
        .map(|reg| roce_regs::qp::BASE + reg.element_offset(q))
        .collect();
    let stable: Vec<u32> = r
        .regs
        .addrs()
        .into_iter()
        .filter(|a| !(mbox::BASE..mbox::BASE + mbox::BLOCK.size).contains(a) && !ctx_q.contains(a))
        .collect();
    let mut reads = 0u32;
    for (name, req) in b.requests() {
        req.write(&mut Host(&mut s));
        let mut h = Host(&mut s);
        h.write32(
            mbox::cmd::ADDR,
            mbox::cmd::OP.val(Command::ModifyQp.value()),
        );
        h.write32(mbox::doorbell::ADDR, mbox::doorbell::GO.val(1));
        let start = s.cycles();
        loop {
            let a = stable[rng.below(stable.len() as u64) as usize];
            let (d, resp) = s.host_read(a);
            assert_eq!(resp, roce_sim::axil::OKAY);
            assert_eq!(Some(d), r.regs.read(a), "{name}: host read {a:#x}");
            reads += 1;
            let (db, _) = s.host_read(mbox::doorbell::ADDR);
            if mbox::doorbell::GO.get(db) == 0 {
                break;
            }
            assert!(s.cycles() - start < 100_000, "{name}: no completion");
        }
        let want = r.post(&req);
        let status = Host(&mut s).read32(mbox::status::ADDR);
        assert_eq!(mbox::status::RESULT.get(status), want.value(), "{name}");
        assert_eq!(table(&mut s, n), ref_table(&r, n), "{name}");
        println!(
            "{name}: {} cycles with the host reading back to back",
            s.cycles() - start
        );
    }
    println!("{reads} host reads checked during the commands");
}
