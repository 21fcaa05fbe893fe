//! The whole RC transport in hardware — `rc_transport` (Verilator, the
//! 64-QP build at W = 64) — through `roce_sim::run`: two instances talking
//! to each other over a seeded faulty link, and one talking to the
//! transport model's NIC (`roce_transport::Endpoint`) in either role.
//!
//! Around each instance `roce_sim::nic::HwNic` puts what a NIC would: two
//! AXI memories (one per AXI master), the context ports, the MR table
//! programmed through the block's own `mr_tlb` command port, the receive
//! queues, and work requests on `s_wqe`.
//!
//! Checked by `run` (any failure is an `Err` naming the QP and message):
//! every work request completes successfully, in order per QP, with its
//! opcode and byte count; every receive completion (length, immediate,
//! bytes); every byte that lands (WRITE targets, receive buffers, READ
//! destinations, atomic originals and final values) holds what in-order
//! semantics give; no byte written outside the registered buffers; the
//! AXI rules; nothing more completes in a quiet period after the last
//! completion; nothing hangs. Here on top: what the counters must show.
//! Seeds printed; `ROCE_SEED` repeats.

use roce_sim::rng::Rng;
use roce_sim::run::{run, Engine, LinkConfig, Report, Scenario, Test};
use roce_wire::Pmtu;
use std::collections::HashMap;

/// The ACK opcode, from roce-wire's table.
const ACK_OPCODE: u8 = {
    let mut i = 0;
    let mut code = 0;
    while i < roce_wire::opcode::TABLE.len() {
        let t = &roce_wire::opcode::TABLE[i];
        if matches!(t.kind, roce_wire::OpKind::Acknowledge)
            && matches!(t.transport, roce_wire::Transport::Rc)
        {
            code = t.code;
        }
        i += 1;
    }
    code
};

const LOSSLESS: LinkConfig = LinkConfig {
    latency: 156,
    bytes_per_cycle: 8.0,
    drop_ppm: 0,
    dup_ppm: 0,
    reorder_ppm: 0,
    corrupt_ppm: 0,
    ecn_threshold: None,
};

fn faulty(ppm: u32) -> LinkConfig {
    LinkConfig {
        drop_ppm: ppm,
        dup_ppm: ppm,
        reorder_ppm: ppm,
        corrupt_ppm: ppm,
        ..LOSSLESS
    }
}

/// Every verb at random, both directions at once.
fn every_verb(seed: u64, qps: u32, iters: u64, pmtu: Pmtu, link: LinkConfig) -> Scenario {
    Scenario {
        test: Test::Mixed,
        size: 3 * pmtu.bytes() + 7,
        iters,
        qps,
        pmtu,
        link,
        seed,
        bidir: true,
        ..Scenario::default_run()
    }
}

fn go(sc: &Scenario) -> Report {
    match run(sc, None) {
        Ok((r, _)) => {
            print!("{}", r.text());
            r
        }
        Err(e) => panic!("{e}"),
    }
}

fn counter(r: &Report, nic: usize, name: &str) -> u64 {
    r.nics[nic]
        .2
        .iter()
        .find(|c| c.0 == name)
        .unwrap_or_else(|| panic!("counter {name}"))
        .1
}

#[test]
fn hw_to_hw_every_verb_lossless() {
    let seed = Rng::seed_from_env("hw_to_hw_every_verb_lossless", 0x7c0_0001);
    let r = go(&every_verb(seed, 4, 40, Pmtu::Mtu256, LOSSLESS));
    assert_eq!(r.messages, 2 * 4 * 40);
    for n in 0..2 {
        assert_eq!(
            counter(&r, n, "req_retx"),
            0,
            "no retransmission on a lossless link"
        );
        assert_eq!(counter(&r, n, "rsp_nak_psn_seq"), 0, "no sequence NAK");
    }
}

#[test]
fn hw_to_hw_every_verb_lossless_pmtu_1024_with_stalls() {
    let seed = Rng::seed_from_env(
        "hw_to_hw_every_verb_lossless_pmtu_1024_with_stalls",
        0x7c0_0002,
    );
    let sc = Scenario {
        stall: 200,
        timeout: 12,
        ..every_verb(seed, 3, 30, Pmtu::Mtu1024, LOSSLESS)
    };
    let r = go(&sc);
    for n in 0..2 {
        assert_eq!(
            counter(&r, n, "req_retx"),
            0,
            "no retransmission on a lossless link"
        );
    }
}

#[test]
fn hw_to_hw_every_verb_faulty_link() {
    let seed = Rng::seed_from_env("hw_to_hw_every_verb_faulty_link", 0x7c0_0003);
    let r = go(&every_verb(seed, 4, 40, Pmtu::Mtu256, faulty(10_000)));
    let (l, m) = (r.links[0].1, r.links[1].1);
    assert!(
        l.dropped + m.dropped > 0 && l.corrupted + m.corrupted > 0,
        "the link dropped and corrupted frames: {l:?} {m:?}"
    );
    assert!(
        counter(&r, 0, "req_retx") + counter(&r, 1, "req_retx") > 0,
        "the requesters retransmitted"
    );
    assert!(
        counter(&r, 0, "rx_bad_icrc") + counter(&r, 1, "rx_bad_icrc") > 0,
        "corrupted frames were dropped by the ICRC check"
    );
}

/// The hardware against the transport model, each in both roles at once,
/// over a faulty link: every frame of one judged by the other.
#[test]
fn hw_against_model_every_verb_faulty_link() {
    let seed = Rng::seed_from_env("hw_against_model_every_verb_faulty_link", 0x7c0_0006);
    for engines in [[Engine::Hw, Engine::Model], [Engine::Model, Engine::Hw]] {
        let sc = Scenario {
            engines,
            ..every_verb(seed, 4, 30, Pmtu::Mtu256, faulty(10_000))
        };
        let r = go(&sc);
        let hw = engines.iter().position(|e| *e == Engine::Hw).unwrap();
        assert!(
            counter(&r, hw, "req_retx") > 0,
            "the hardware retransmitted"
        );
        assert!(
            counter(&r, 1 - hw, "req_retx") > 0,
            "the model retransmitted"
        );
    }
}

/// The ACK latency of the transport (issue 35's goal: at most 32 cycles
/// at W=64 from a request's last beat into `roce_rx` to its ACK's first
/// beat out of `roce_tx`): 64-byte WRITEs, each asking for its ACK, on
/// one QP, one at a time, lossless, every port ready. Printed for
/// docs/BENCHMARKS.md.
#[test]
fn ack_latency() {
    let seed = Rng::seed_from_env("ack_latency", 0x7c0_0005);
    let sc = Scenario {
        size: 64,
        iters: 40,
        qps: 1,
        depth: 1,
        pmtu: Pmtu::Mtu1024,
        link: LOSSLESS,
        seed,
        record_rx: true,
        ..Scenario::default_run()
    };
    let (_, out) = run(&sc, None).unwrap_or_else(|e| panic!("{e}"));
    // The request each ACK answers: the frame into B with its PSN that
    // asked for an ACK.
    let mut req_last: HashMap<u32, u64> = HashMap::new();
    for (c, fr) in &out.rx[1] {
        let f = roce_wire::Frame::parse(fr).expect("B took only valid frames");
        if f.repr.bth.ack_req {
            req_last.entry(f.repr.bth.psn.value()).or_insert(*c);
        }
    }
    let mut l: Vec<u64> = out
        .frames
        .iter()
        .filter(|(_, nic, _)| *nic == 1)
        .filter_map(|(first, _, fr)| {
            let f = roce_wire::Frame::parse(fr).ok()?;
            (f.repr.bth.opcode.0 == ACK_OPCODE)
                .then(|| first.checked_sub(*req_last.get(&f.repr.bth.psn.value())?))?
        })
        .collect();
    assert!(l.len() >= 38, "ACKs matched to their WRITEs: {}", l.len());
    l.sort_unstable();
    let (min, med, max) = (l[0], l[l.len() / 2], l[l.len() - 1]);
    println!(
        "ACK latency W=64, 64-byte WRITEs: min {min}, median {med}, max {max} cycles over {} ACKs",
        l.len()
    );
    // Around today's figure, so a regression shows; the goal is 32.
    assert!(min <= 120, "ACK latency {min}");
}

/// Goodput of 4 KiB WRITEs from A to B (PMTU 4096, 4 QPs, 8 WQEs each in
/// flight), lossless and with 0.1 % and 1 % of frames dropped; every byte
/// still checked. Prints bytes per cycle against W/8 = 8.
#[test]
fn goodput_4k_writes() {
    let seed = Rng::seed_from_env("goodput_4k_writes", 0x7c0_0004);
    let mut base = 0.0;
    for ppm in [0u32, 1_000, 10_000] {
        let sc = Scenario {
            size: 4096,
            iters: 40,
            qps: 4,
            depth: 8,
            link: LinkConfig {
                drop_ppm: ppm,
                ..LOSSLESS
            },
            seed,
            ..Scenario::default_run()
        };
        let r = go(&sc);
        let g = r.bytes_per_cycle();
        if ppm == 0 {
            base = g;
        }
        println!(
            "goodput W=64, 4 KiB WRITEs, drop {:.1} %: {} bytes in {} cycles = {g:.3} bytes/cycle \
             = {:.1} % of W/8, {:.1} % of lossless",
            ppm as f64 / 10_000.0,
            r.bytes,
            r.cycles,
            100.0 * g / 8.0,
            100.0 * g / base
        );
        assert!(g > 0.5, "goodput collapsed");
    }
}
