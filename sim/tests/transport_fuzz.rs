//! `roce-sim fuzz transport` in the test suite: a short run of the whole
//! hardware transport under well-formed, random and mutated frames must
//! end with no hang, no AXI violation, no write outside the registered
//! regions and every QP carrying clean traffic after Reset; and it must
//! have reached the transport's deep paths (executed requests, NAKs, drops
//! of several reasons, QP resets), so a passing run means something. The
//! write check itself catches a stray byte. Seed printed; `ROCE_SEED`
//! repeats it. The long run (10^6 frames) is in docs/BENCHMARKS.md.

use roce_sim::nic::{HwNic, Layout, Region, SimNic};
use roce_sim::rng::Rng;
use roce_sim::run::STATION_B;
use roce_sim::transport_fuzz::{check_writes, transport, Config};

#[test]
fn short_fuzz_run_reaches_deep_and_breaks_nothing() {
    let seed = Rng::seed_from_env("short_fuzz_run_reaches_deep_and_breaks_nothing", 0x7f0_0001);
    let r = transport(
        &Config {
            frames: 15_000,
            seed,
            qps: 8,
            mutate_permille: 150,
        },
        |_| {},
    )
    .unwrap_or_else(|e| panic!("seed {seed:#x}: {e}"));
    print!("{}", r.text());
    let c = |n: &str| r.counters.iter().find(|c| c.0 == n).map_or(0, |c| c.1);
    assert!(c("rsp_execute") > 1000, "requests executed");
    assert!(
        c("rsp_nak_psn_seq") > 0 && c("rsp_nak_rem_access") > 0,
        "NAKs sent"
    );
    assert!(
        c("req_sent") > 0 && c("to_requester") > 0,
        "the requester side ran"
    );
    let drops = [
        "rx_truncated",
        "rx_bad_ip_checksum",
        "rx_bad_length",
        "rx_bad_icrc",
        "rsp_drop_out_of_seq",
    ];
    for d in drops {
        assert!(c(d) > 0, "{d}");
    }
    assert!(r.resets > 0, "QPs moved to Error and reset");
    assert!(r.mutated.iter().skip(1).all(|m| m.1 > 0), "{:?}", r.mutated);
}

#[test]
fn the_write_check_catches_a_stray_byte() {
    let mut nic = HwNic::new("B", 1, STATION_B, 0);
    let mut lay = Layout::new(12);
    let va = lay.alloc(Region::Rem, 4096, 64);
    lay.seal();
    nic.reg_mrs(&lay);
    nic.write(va, &[1, 2, 3]);
    check_writes(&nic, &lay).expect("a write inside the region");
    nic.mem_rsp.poke(0x7_0000_0000, &[9]);
    let e = check_writes(&nic, &lay).expect_err("a byte outside every region");
    assert!(e.contains("outside"), "{e}");
}
