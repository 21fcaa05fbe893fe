//! The CSR block in Verilator (`CsrW256`, the default build), driven by the
//! AXI4-Lite master BFM (`roce_sim::axil`) with random gaps on AW, W and AR
//! and random backpressure on B and R, and checked against a reference
//! register file built from the `roce-regs` tables (`common::RefRegs`, shared
//! with the firmware co-simulations; independent of the
//! hardware decoder's plan):
//!
//! - every register element reads its reset value;
//! - RW writes land, with byte strobes, in the bits their fields own
//!   (`mbox`: all 32 bits, as its block documents);
//! - RO writes are ignored and answered OKAY;
//! - unmapped reads and writes answer SLVERR and count `csr-unmapped`;
//! - partial writes to QP contexts answer SLVERR and change nothing;
//! - QP context writes appear on the datapath port (`QP_READ_LATENCY` cycles
//!   after a request) from the cycle after the B response, in the default
//!   build and in the 1-cycle datapath forms (`csr_bram`, `csr_lutram`:
//!   64 contexts), each measured against the latency it publishes;
//! - counters read back what their input lanes hold;
//! - random mixes of reads and writes in flight together;
//! - the NIC's form (`csr_nic`, 64 contexts): its three datapath read
//!   ports return the contexts at the published latency under random
//!   concurrent reads (the one-port builds' ports 1 and 2 read 0), its
//!   `cfg_*` outputs follow the `cfg` registers in `tx_arb`'s layout, and
//!   `m_ctx_wr_*` pulses once per successful context write, in the first
//!   cycle whose datapath read returns the new word.

mod common;

use common::{is_ctx, unpack_ctx, RefRegs, CTX_WORDS, LANES};
use roce_regs::{Access, Counter, BLOCKS, CSR_WINDOW_SIZE};
use roce_sim::axil::{AxilMaster, AxilSlave, Done, Timing, OKAY, SLVERR};
use roce_sim::model::Model;
use roce_sim::models::{CsrBramW64, CsrLutramW64, CsrNicW64, CsrW256};
use roce_sim::rng::Rng;
use std::collections::BTreeMap;

type Dut = CsrW256;

/// A Verilated CSR build: the default (`Dut`) or a 1-cycle datapath form
/// of the context table (`CsrBramW64`, `CsrLutramW64`).
trait CsrDut: AxilSlave {
    const PARAMS: &'static [(&'static str, u64)];
    fn build() -> Self;
    fn reset(&mut self, v: bool);
    fn lanes(&mut self, v: &[u32; LANES]);
    fn qp_addr(&mut self, q: u32);
    fn qp_data(&self) -> [u32; CTX_WORDS];
}

macro_rules! csr_dut {
    ($($t:ty),*) => {$(
        impl CsrDut for $t {
            const PARAMS: &'static [(&'static str, u64)] = <$t>::PARAMS;
            fn build() -> Self {
                <$t>::new()
            }
            fn reset(&mut self, v: bool) {
                self.set_reset(v)
            }
            fn lanes(&mut self, v: &[u32; LANES]) {
                self.set_counters(v)
            }
            fn qp_addr(&mut self, q: u32) {
                self.set_qp_rd_addr(q)
            }
            fn qp_data(&self) -> [u32; CTX_WORDS] {
                self.get_qp_rd_data()
            }
        }
    )*};
}
csr_dut!(CsrW256, CsrBramW64, CsrLutramW64, CsrNicW64);

/// A parameter the build publishes.
fn param<D: CsrDut>(name: &str) -> u64 {
    D::PARAMS
        .iter()
        .find(|(k, _)| *k == name)
        .unwrap_or_else(|| panic!("the csr build publishes {name}"))
        .1
}

fn n_qps() -> u32 {
    param::<Dut>("N") as u32
}

/// Cycles from `qp_rd_addr` to `qp_rd_data`.
fn qp_latency() -> usize {
    param::<Dut>("QP_READ_LATENCY") as usize
}

struct Bench<D = Dut> {
    dut: D,
    m: AxilMaster,
    r: RefRegs,
    rng: Rng,
}

impl Bench {
    fn new(test: &str, default_seed: u64, timing: Timing) -> Bench {
        Bench::with_dut(test, default_seed, timing)
    }
}

impl<D: CsrDut> Bench<D> {
    fn with_dut(test: &str, default_seed: u64, timing: Timing) -> Bench<D> {
        let seed = Rng::seed_from_env(test, default_seed);
        let mut b = Bench {
            dut: D::build(),
            m: AxilMaster::new(seed ^ 0x5EED, timing),
            r: RefRegs::with_qps(param::<D>("N") as u32),
            rng: Rng::new(seed),
        };
        b.dut.lanes(&[0; LANES]);
        b.dut.reset(true);
        for _ in 0..3 {
            b.m.step(&mut b.dut);
        }
        b.dut.reset(false);
        b
    }

    fn set_lanes(&mut self, lanes: [u32; LANES]) {
        self.dut.lanes(&lanes);
        self.r.lanes = lanes;
    }

    fn read(&mut self, addr: u32) -> (u32, u32) {
        self.m.read_now(&mut self.dut, addr)
    }

    fn write(&mut self, addr: u32, data: u32, strb: u32) {
        let want = self.r.write(addr, data, strb);
        let got = self.m.write_now(&mut self.dut, addr, data, strb);
        assert_eq!(got, want, "write {data:#x} strb {strb:#x} to {addr:#x}");
    }

    /// Read every register element and compare with the reference.
    fn check_all(&mut self) {
        for a in self.r.addrs() {
            let (d, resp) = self.read(a);
            assert_eq!(resp, OKAY, "read {a:#x}");
            assert_eq!(
                Some(d),
                self.r.read(a),
                "{} at {a:#x}",
                self.r.words[&a].reg.name
            );
        }
    }

    fn random_unmapped(&mut self) -> u32 {
        loop {
            // Half anywhere in the window, half inside a block's span (holes
            // between registers, contexts beyond N, the context gaps).
            let a = if self.rng.chance(500) {
                self.rng.below(CSR_WINDOW_SIZE as u64) as u32
            } else {
                let b = BLOCKS[self.rng.below(BLOCKS.len() as u64) as usize];
                b.base + self.rng.below(b.size as u64) as u32
            };
            if self.r.read(a).is_none() {
                return a;
            }
        }
    }
}

#[test]
fn reset_values() {
    let mut b = Bench::new("csr::reset_values", 1, Timing::RANDOM);
    // Every element, straight from the map's reset values.
    for a in b.r.addrs() {
        let e = b.r.words[&a].clone();
        let (d, resp) = b.read(a);
        assert_eq!(resp, OKAY);
        assert_eq!(d, e.reg.reset(), "{} at {a:#x}", e.reg.name);
    }
    let (d, _) = b.read(roce_regs::qp::qp_count::ADDR);
    assert_eq!(roce_regs::qp::qp_count::COUNT.get(d), n_qps());
}

#[test]
fn rw_fields_land_in_their_bits() {
    let mut b = Bench::new("csr::rw_fields_land_in_their_bits", 2, Timing::RANDOM);
    let rw: Vec<u32> =
        b.r.addrs()
            .into_iter()
            .filter(|a| b.r.words[a].access == Access::RW)
            .collect();
    for _round in 0..2 {
        for &a in &rw {
            let v = b.rng.next_u32();
            let strb = if b.r.words[&a].ctx.is_some() {
                0xF
            } else {
                b.rng.below(16) as u32
            };
            b.write(a, v, strb);
            let (d, resp) = b.read(a);
            assert_eq!(resp, OKAY);
            assert_eq!(Some(d), b.r.read(a), "{} at {a:#x}", b.r.words[&a].reg.name);
        }
    }
    // Nothing landed anywhere else.
    b.check_all();
}

#[test]
fn ro_registers_ignore_writes() {
    let mut b = Bench::new("csr::ro_registers_ignore_writes", 3, Timing::RANDOM);
    let mut lanes = [0u32; LANES];
    lanes.iter_mut().for_each(|l| *l = b.rng.next_u32());
    b.set_lanes(lanes);
    let ro: Vec<u32> =
        b.r.addrs()
            .into_iter()
            .filter(|a| b.r.words[a].access == Access::RO)
            .collect();
    assert!(ro.len() > BLOCKS.len());
    for &a in &ro {
        let v = b.rng.next_u32();
        let strb = b.rng.below(16) as u32;
        b.write(a, v, strb);
    }
    b.check_all();
}

#[test]
fn unmapped_accesses_answer_slverr_and_count() {
    let mut b = Bench::new(
        "csr::unmapped_accesses_answer_slverr_and_count",
        4,
        Timing::RANDOM,
    );
    let ctr = roce_regs::ctr::counter::addr(Counter::CsrUnmapped.index());
    for i in 0..1500 {
        let a = b.random_unmapped();
        if i % 2 == 0 {
            let (_, resp) = b.read(a);
            assert_eq!(resp, SLVERR, "read {a:#x}");
            b.r.unmapped += 1;
        } else {
            let v = b.rng.next_u32();
            b.write(a, v, 0xF);
        }
        if i % 100 == 0 {
            assert_eq!(b.read(ctr), (b.r.unmapped, OKAY));
        }
    }
    assert_eq!(b.read(ctr), (1500, OKAY));
    // The unmapped writes changed nothing.
    b.check_all();
}

#[test]
fn partial_context_writes_answer_slverr() {
    let mut b = Bench::new(
        "csr::partial_context_writes_answer_slverr",
        5,
        Timing::RANDOM,
    );
    let ctx: Vec<u32> =
        b.r.addrs()
            .into_iter()
            .filter(|a| b.r.words[a].ctx.is_some())
            .collect();
    for _ in 0..300 {
        let a = ctx[b.rng.below(ctx.len() as u64) as usize];
        let v = b.rng.next_u32();
        b.write(a, v, 0xF);
        let strb = b.rng.below(15) as u32; // never 0xF
        let v = b.rng.next_u32();
        b.write(a, v, strb);
        assert_eq!(b.read(a), (b.r.read(a).unwrap(), OKAY));
    }
    let ctr = roce_regs::ctr::counter::addr(Counter::CsrUnmapped.index());
    assert_eq!(b.read(ctr), (0, OKAY), "partial writes are not unmapped");
}

/// Program random contexts through the CSR window and read them on the
/// datapath port, one request per cycle beside CSR reads, `D`'s published
/// `QP_READ_LATENCY` after each request; measure that latency too.
fn qp_contexts<D: CsrDut>(test: &str, seed: u64) {
    let mut b = Bench::<D>::with_dut(test, seed, Timing::RANDOM);
    let n = param::<D>("N") as u32;
    let lat = param::<D>("QP_READ_LATENCY") as usize;
    for round in 0..4 {
        // Program random contexts (whole words) through the CSR window.
        for _ in 0..200 {
            let q = b.rng.below(n as u64) as u32;
            for r in roce_regs::qp::BLOCK.registers.iter().filter(|r| is_ctx(r)) {
                let v = b.rng.next_u32();
                b.write(roce_regs::qp::BASE + r.element_offset(q), v, 0xF);
            }
        }
        // The port answers `lat` cycles after each request, every cycle,
        // while CSR reads run beside it.
        let mut inflight: std::collections::VecDeque<u32> = Default::default();
        for c in 0..3000 {
            if c % 7 == 0 && b.m.idle() {
                let a = b.r.addrs()[b.rng.below(b.r.words.len() as u64) as usize];
                b.m.read(a);
            }
            let q = b.rng.below(n as u64) as u32;
            b.dut.qp_addr(q);
            b.m.drive(&mut b.dut);
            b.dut.eval();
            if inflight.len() == lat {
                let p = inflight.pop_front().unwrap();
                assert_eq!(b.dut.qp_data(), b.r.packed_ctx(p), "QP {p}, round {round}");
            }
            b.m.sample(&b.dut);
            b.dut.tick();
            inflight.push_back(q);
        }
        b.m.finish(&mut b.dut, 1000);
        while let Some(d) = b.m.done.pop_front() {
            assert!(matches!(d, Done::Read { resp: OKAY, .. }));
        }
    }
    // The latency, measured: hold one QP, switch to one with another
    // context, count edges until the port shows it.
    let q0 = 0;
    let q1 = (1..n)
        .find(|&q| b.r.packed_ctx(q) != b.r.packed_ctx(q0))
        .expect("two QPs with different contexts");
    b.dut.qp_addr(q0);
    for _ in 0..lat + 2 {
        b.dut.eval();
        b.dut.tick();
    }
    b.dut.eval();
    assert_eq!(b.dut.qp_data(), b.r.packed_ctx(q0));
    b.dut.qp_addr(q1);
    let mut measured = 0;
    while {
        b.dut.eval();
        b.dut.qp_data() != b.r.packed_ctx(q1)
    } {
        b.dut.tick();
        measured += 1;
        assert!(measured < 10, "QP {q1} never reached the port");
    }
    assert_eq!(measured, lat, "qp_rd_addr to qp_rd_data, as published");
    // A write is visible on the port for a request in the cycle after its
    // B response.
    for _ in 0..50 {
        let q = b.rng.below(n as u64) as u32;
        let v = b.rng.next_u32();
        b.write(roce_regs::qp::dest_qpn::addr(q), v, 0xF);
        b.dut.qp_addr(q);
        for _ in 0..lat {
            b.dut.eval();
            b.dut.tick();
        }
        b.dut.eval();
        assert_eq!(b.dut.qp_data(), b.r.packed_ctx(q));
    }
}

#[test]
fn qp_contexts_reach_the_datapath_port() {
    qp_contexts::<Dut>("csr::qp_contexts_reach_the_datapath_port", 6);
}

/// The datapath copy in block RAM without its output register (1 cycle).
#[test]
fn qp_contexts_bram_store() {
    qp_contexts::<CsrBramW64>("csr::qp_contexts_bram_store", 13);
}

/// The datapath copy in LUT RAM (1 cycle).
#[test]
fn qp_contexts_lutram_store() {
    qp_contexts::<CsrLutramW64>("csr::qp_contexts_lutram_store", 14);
}

/// The NIC's form: port 0 as every build's.
#[test]
fn qp_contexts_nic_port_0() {
    qp_contexts::<CsrNicW64>("csr::qp_contexts_nic_port_0", 16);
}

/// `csr_nic`'s three read ports.
fn nic_ports(d: &mut CsrNicW64, q: [u32; 3]) {
    d.set_qp_rd_addr(q[0]);
    d.set_qp_rd_addr_1(q[1]);
    d.set_qp_rd_addr_2(q[2]);
}

fn nic_data(d: &CsrNicW64) -> [[u32; CTX_WORDS]; 3] {
    [
        d.get_qp_rd_data(),
        d.get_qp_rd_data_1(),
        d.get_qp_rd_data_2(),
    ]
}

/// Random contexts, then random concurrent reads on all three ports (the
/// same QP on several ports now and then), each checked `QP_READ_LATENCY`
/// cycles later, beside CSR reads; then each port's latency, measured.
#[test]
fn nic_read_ports_agree() {
    let mut b = Bench::<CsrNicW64>::with_dut("csr::nic_read_ports_agree", 17, Timing::RANDOM);
    let n = param::<CsrNicW64>("N") as u32;
    let lat = param::<CsrNicW64>("QP_READ_LATENCY") as usize;
    assert_eq!(param::<CsrNicW64>("QP_READ_PORTS"), 3);
    assert_eq!(lat, qp_latency(), "every build's ports have the same form");
    for round in 0..3 {
        for _ in 0..100 {
            let q = b.rng.below(n as u64) as u32;
            for r in roce_regs::qp::BLOCK.registers.iter().filter(|r| is_ctx(r)) {
                let v = b.rng.next_u32();
                b.write(roce_regs::qp::BASE + r.element_offset(q), v, 0xF);
            }
        }
        let mut inflight: std::collections::VecDeque<[u32; 3]> = Default::default();
        for c in 0..3000 {
            if c % 5 == 0 && b.m.idle() {
                let a = b.r.addrs()[b.rng.below(b.r.words.len() as u64) as usize];
                b.m.read(a);
            }
            let mut q = [0; 3];
            for p in 0..3 {
                q[p] = if p > 0 && b.rng.chance(200) {
                    q[b.rng.below(p as u64) as usize]
                } else {
                    b.rng.below(n as u64) as u32
                };
            }
            nic_ports(&mut b.dut, q);
            b.m.drive(&mut b.dut);
            b.dut.eval();
            if inflight.len() == lat {
                let want = inflight.pop_front().unwrap();
                let got = nic_data(&b.dut);
                for p in 0..3 {
                    assert_eq!(
                        got[p],
                        b.r.packed_ctx(want[p]),
                        "port {p}, QP {}, round {round}",
                        want[p]
                    );
                }
            }
            b.m.sample(&b.dut);
            b.dut.tick();
            inflight.push_back(q);
        }
        b.m.finish(&mut b.dut, 1000);
        while let Some(d) = b.m.done.pop_front() {
            assert!(matches!(d, Done::Read { resp: OKAY, .. }));
        }
    }
    // Each port's latency, measured as `qp_contexts` does, the other ports
    // moving at random meanwhile.
    let q0 = 0;
    let q1 = (1..n)
        .find(|&q| b.r.packed_ctx(q) != b.r.packed_ctx(q0))
        .expect("two QPs with different contexts");
    for p in 0..3 {
        let mut q = [q0; 3];
        nic_ports(&mut b.dut, q);
        for _ in 0..lat + 2 {
            b.dut.eval();
            b.dut.tick();
        }
        b.dut.eval();
        assert_eq!(nic_data(&b.dut)[p], b.r.packed_ctx(q0));
        q[p] = q1;
        let mut measured = 0;
        while {
            for (o, x) in q.iter_mut().enumerate() {
                if o != p {
                    *x = b.rng.below(n as u64) as u32;
                }
            }
            nic_ports(&mut b.dut, q);
            b.dut.eval();
            nic_data(&b.dut)[p] != b.r.packed_ctx(q1)
        } {
            b.dut.tick();
            measured += 1;
            assert!(measured < 10, "QP {q1} never reached port {p}");
        }
        assert_eq!(measured, lat, "port {p}: qp_rd_addr to qp_rd_data");
    }
}

/// The one-port builds' ports 1 and 2 read 0 whatever they are asked.
#[test]
fn one_port_builds_read_zero_on_ports_1_and_2() {
    let mut b = Bench::new("csr::one_port_builds_read_zero", 18, Timing::RANDOM);
    assert_eq!(param::<Dut>("QP_READ_PORTS"), 1);
    let n = n_qps();
    for _ in 0..20 {
        let q = b.rng.below(n as u64) as u32;
        let v = b.rng.next_u32() | 1;
        b.write(roce_regs::qp::dest_qpn::addr(q), v, 0xF);
    }
    for _ in 0..200 {
        b.dut.set_qp_rd_addr_1(b.rng.below(n as u64) as u32);
        b.dut.set_qp_rd_addr_2(b.rng.below(n as u64) as u32);
        b.dut.eval();
        assert_eq!(b.dut.get_qp_rd_data_1(), [0; CTX_WORDS]);
        assert_eq!(b.dut.get_qp_rd_data_2(), [0; CTX_WORDS]);
        b.dut.tick();
    }
}

/// What `cfg_*` must show, derived from the reference register file the
/// way the map documents the bytes and `HwNic` fills `tx_arb`'s inputs:
/// (MAC with byte 0 in bits 47:40, UDP source-port base, GID table as
/// 32-bit words with entry e's byte i at bit `128e + 8(15 - i)`, P_Key
/// table with entry e at `[16e +: 16]`).
fn cfg_expected(r: &RefRegs) -> (u64, u32, [u32; 16], u64) {
    use roce_regs::cfg;
    let rd = |a: u32| r.read(a).expect("cfg register mapped");
    // MAC bytes: mac_hi byte 0 in bits 15:8, mac_lo byte 2 in bits 31:24.
    let hi = rd(cfg::mac_hi::ADDR);
    let lo = rd(cfg::mac_lo::ADDR);
    let mac_bytes = [
        (hi >> 8) as u8,
        hi as u8,
        (lo >> 24) as u8,
        (lo >> 16) as u8,
        (lo >> 8) as u8,
        lo as u8,
    ];
    let mac = mac_bytes.iter().fold(0u64, |a, &b| a << 8 | b as u64);
    let sport = rd(cfg::udp_sport::ADDR) & 0xFFFF;
    let mut gid = [0u32; 16];
    for e in 0..roce_regs::GID_COUNT {
        // GID bytes 4w..4w+4 in gid_w<w>, byte 4w in bits 31:24.
        let words = [
            rd(cfg::gid_w0::addr(e)),
            rd(cfg::gid_w1::addr(e)),
            rd(cfg::gid_w2::addr(e)),
            rd(cfg::gid_w3::addr(e)),
        ];
        for i in 0..16 {
            let byte = words[i / 4] >> (24 - 8 * (i % 4)) & 0xFF;
            let bit = 128 * e as usize + 8 * (15 - i);
            gid[bit / 32] |= byte << (bit % 32);
        }
    }
    let pkey = (0..roce_regs::PKEY_COUNT).fold(0u64, |a, e| {
        a | ((rd(cfg::pkey::addr(e)) & 0xFFFF) as u64) << (16 * e)
    });
    (mac, sport, gid, pkey)
}

fn cfg_outputs(d: &CsrNicW64) -> (u64, u32, [u32; 16], u64) {
    (
        d.get_cfg_mac(),
        d.get_cfg_udp_sport(),
        d.get_cfg_gid(),
        d.get_cfg_pkey(),
    )
}

#[test]
fn cfg_outputs_follow_the_registers() {
    use roce_regs::cfg;
    let mut b =
        Bench::<CsrNicW64>::with_dut("csr::cfg_outputs_follow_the_registers", 19, Timing::RANDOM);
    // Reset values, before any write.
    b.dut.eval();
    assert_eq!(cfg_outputs(&b.dut), cfg_expected(&b.r));
    assert_eq!(b.dut.get_cfg_udp_sport(), cfg::udp_sport::BASE.reset);
    assert_eq!(
        b.dut.get_cfg_pkey(),
        u64::MAX,
        "every P_Key resets to 0xFFFF"
    );
    assert_eq!((b.dut.get_cfg_mac(), b.dut.get_cfg_gid()), (0, [0; 16]));
    // Random writes with random byte strobes to every cfg RW register
    // (edge values favoured), each checked once its B response is taken.
    let rw: Vec<u32> =
        b.r.addrs()
            .into_iter()
            .filter(|&a| {
                (cfg::BASE..cfg::BASE + cfg::BLOCK.size).contains(&a)
                    && b.r.words[&a].access == Access::RW
            })
            .collect();
    for i in 0..600 {
        let a = rw[b.rng.below(rw.len() as u64) as usize];
        let v = match b.rng.below(5) {
            0 => 0,
            1 => u32::MAX,
            2 => 1 << b.rng.below(32),
            _ => b.rng.next_u32(),
        };
        let strb = if i % 3 == 0 {
            0xF
        } else {
            b.rng.below(16) as u32
        };
        b.write(a, v, strb);
        b.dut.eval();
        assert_eq!(
            cfg_outputs(&b.dut),
            cfg_expected(&b.r),
            "after {v:#x} strb {strb:#x} to {a:#x}"
        );
    }
    // A station programmed as HwNic programs tx_arb directly: the MAC
    // bytes, the IPv4-mapped GID in entry 1, the default P_Key alone.
    let mac = [0x02u8, 0x00, 0x5e, 0x10, 0x20, 0x30];
    let ip = [10u8, 0, 0, 1];
    let mut g = [0u8; 16];
    g[10] = 0xFF;
    g[11] = 0xFF;
    g[12..].copy_from_slice(&ip);
    let be = |b: &[u8]| b.iter().fold(0u32, |a, &x| a << 8 | x as u32);
    b.write(cfg::mac_hi::ADDR, be(&mac[..2]), 0xF);
    b.write(cfg::mac_lo::ADDR, be(&mac[2..]), 0xF);
    b.write(cfg::udp_sport::ADDR, 0xC000, 0x3);
    for e in 0..roce_regs::GID_COUNT {
        let w = if e == 1 { g } else { [0; 16] };
        b.write(cfg::gid_w0::addr(e), be(&w[0..4]), 0xF);
        b.write(cfg::gid_w1::addr(e), be(&w[4..8]), 0xF);
        b.write(cfg::gid_w2::addr(e), be(&w[8..12]), 0xF);
        b.write(cfg::gid_w3::addr(e), be(&w[12..]), 0xF);
    }
    for e in 0..roce_regs::PKEY_COUNT {
        let k = if e == 0 {
            roce_wire::bth::DEFAULT_PKEY as u32
        } else {
            0
        };
        b.write(cfg::pkey::addr(e), k, 0xF);
    }
    b.dut.eval();
    // HwNic::cfg's values for tx_arb's cfg_* inputs.
    let mut gid = [0u32; 16];
    gid[4] = be(&ip);
    gid[5] = 0xFFFF;
    assert_eq!(
        cfg_outputs(&b.dut),
        (
            mac.iter().fold(0, |a, &b| a << 8 | b as u64),
            0xC000,
            gid,
            roce_wire::bth::DEFAULT_PKEY as u64
        )
    );
}

/// One cycle of the notification benches: drive `q` on every read port,
/// step the master, and return (pulse, bvalid, what the ports return).
#[allow(clippy::type_complexity)]
fn nic_cycle(
    b: &mut Bench<CsrNicW64>,
    q: u32,
) -> (Option<(u32, u32, u32)>, bool, [[u32; CTX_WORDS]; 3]) {
    nic_ports(&mut b.dut, [q; 3]);
    b.m.drive(&mut b.dut);
    b.dut.eval();
    let pulse = b.dut.get_m_ctx_wr_valid().then(|| {
        (
            b.dut.get_m_ctx_wr_qpn(),
            b.dut.get_m_ctx_wr_offset(),
            b.dut.get_m_ctx_wr_data(),
        )
    });
    let bvalid = AxilSlave::b(&b.dut).is_some();
    let data = nic_data(&b.dut);
    b.m.sample(&b.dut);
    b.dut.tick();
    (pulse, bvalid, data)
}

/// (QPN, byte offset in the context as `roce_regs::qp` places it) of a
/// context register address.
fn ctx_of(a: u32) -> (u32, u32) {
    let rel = a - roce_regs::qp::state::ADDR;
    (rel / roce_regs::QP_STRIDE, rel % roce_regs::QP_STRIDE)
}

/// A random write for the notification benches: a whole context word
/// (half of them), a partial context write, or any other write (RW, RO,
/// unmapped).
fn random_write(b: &mut Bench<CsrNicW64>, ctx: &[u32], other: &[u32]) -> (u32, u32, u32) {
    let v = b.rng.next_u32();
    match b.rng.below(6) {
        0..=2 => (ctx[b.rng.below(ctx.len() as u64) as usize], v, 0xF),
        3 => (
            ctx[b.rng.below(ctx.len() as u64) as usize],
            v,
            b.rng.below(15) as u32,
        ),
        4 => {
            let a = b.random_unmapped();
            (a, v, b.rng.below(16) as u32)
        }
        _ => (
            other[b.rng.below(other.len() as u64) as usize],
            v,
            b.rng.below(16) as u32,
        ),
    }
}

/// One write at a time: exactly one pulse for a successful context write
/// (QPN, offset, stored word), in the cycle after `bvalid` rises; a read
/// issued in the pulse cycle returns the new context on every port, one
/// issued the cycle before the old one; no pulse for anything else.
#[test]
fn context_writes_notify() {
    let mut b = Bench::<CsrNicW64>::with_dut("csr::context_writes_notify", 20, Timing::RANDOM);
    let lat = param::<CsrNicW64>("QP_READ_LATENCY") as usize;
    let n = param::<CsrNicW64>("N") as u32;
    let ctx: Vec<u32> =
        b.r.addrs()
            .into_iter()
            .filter(|a| b.r.words[a].ctx.is_some())
            .collect();
    let other: Vec<u32> =
        b.r.addrs()
            .into_iter()
            .filter(|a| {
                b.r.words[a].ctx.is_none()
                    && *a != roce_regs::mr::doorbell::ADDR
                    && *a != roce_regs::mbox::doorbell::ADDR
            })
            .collect();
    let (mut pulses, mut changed) = (0, 0);
    for i in 0..1500 {
        let (a, v, strb) = random_write(&mut b, &ctx, &other);
        let ctx_write = b.r.words.get(&(a & !3)).is_some_and(|e| e.ctx.is_some());
        let q = if ctx_write {
            ctx_of(a & !3).0
        } else {
            b.rng.below(n as u64) as u32
        };
        let old = b.r.packed_ctx(q);
        let want = b.r.write(a, v, strb);
        let notify = ctx_write && want == OKAY;
        let tag = b.m.write(a, v, strb);
        // Run until the B response, then long enough for any pulse and
        // for the reads issued around it to return.
        let mut trace = Vec::new();
        let mut after = 0;
        while !b.m.idle() || after < lat + 3 {
            if b.m.idle() {
                after += 1;
            }
            trace.push(nic_cycle(&mut b, q));
            assert!(trace.len() < 1000, "write {i} hung");
        }
        assert_eq!(
            b.m.done.pop_front(),
            Some(Done::Write { tag, resp: want }),
            "write {v:#x} strb {strb:#x} to {a:#x}"
        );
        let at: Vec<usize> = (0..trace.len()).filter(|&c| trace[c].0.is_some()).collect();
        if !notify {
            assert!(
                at.is_empty(),
                "write {v:#x} strb {strb:#x} to {a:#x} (resp {want}) notified"
            );
            continue;
        }
        pulses += 1;
        assert_eq!(at.len(), 1, "one pulse for write {i} to {a:#x}");
        let c = at[0];
        let (pq, off, data) = trace[c].0.unwrap();
        assert_eq!((pq, off), ctx_of(a & !3), "write {i} to {a:#x}");
        assert_eq!(Some(data), b.r.read(a), "the stored word, write {i}");
        let rose = (0..trace.len()).find(|&c| trace[c].1).expect("bvalid");
        assert_eq!(c, rose + 1, "the pulse follows bvalid's first cycle");
        // Reads issued in cycle c return in cycle c + lat.
        let new = b.r.packed_ctx(q);
        for p in 0..3 {
            assert_eq!(
                trace[c + lat].2[p],
                new,
                "port {p}: read in the pulse cycle"
            );
            assert_eq!(
                trace[c + lat - 1].2[p],
                old,
                "port {p}: read the cycle before"
            );
        }
        changed += (new != old) as u32;
    }
    eprintln!("{pulses} notifications, {changed} of them changed the context");
    assert!(pulses > 500 && changed > 400);
}

/// Writes queued back to back with random AXI timing: the pulses are the
/// successful context writes, in order, each once.
#[test]
fn context_write_notifications_in_order() {
    let mut b = Bench::<CsrNicW64>::with_dut(
        "csr::context_write_notifications_in_order",
        21,
        Timing::RANDOM,
    );
    let ctx: Vec<u32> =
        b.r.addrs()
            .into_iter()
            .filter(|a| b.r.words[a].ctx.is_some())
            .collect();
    let other: Vec<u32> =
        b.r.addrs()
            .into_iter()
            .filter(|a| {
                b.r.words[a].ctx.is_none()
                    && *a != roce_regs::mr::doorbell::ADDR
                    && *a != roce_regs::mbox::doorbell::ADDR
            })
            .collect();
    for _ in 0..10 {
        let mut want = Vec::new();
        for _ in 0..200 {
            let (a, v, strb) = random_write(&mut b, &ctx, &other);
            let ctx_write = b.r.words.get(&(a & !3)).is_some_and(|e| e.ctx.is_some());
            if b.r.write(a, v, strb) == OKAY && ctx_write {
                let (q, off) = ctx_of(a & !3);
                want.push((q, off, b.r.read(a).unwrap()));
            }
            b.m.write(a, v, strb);
        }
        let mut got = Vec::new();
        let mut after = 0;
        while !b.m.idle() || after < 4 {
            if b.m.idle() {
                after += 1;
            }
            got.extend(nic_cycle(&mut b, 0).0);
        }
        assert_eq!(got, want);
        b.m.done.clear();
    }
    b.check_all();
}

#[test]
fn counters_read_their_inputs() {
    let mut b = Bench::new("csr::counters_read_their_inputs", 7, Timing::RANDOM);
    for _ in 0..20 {
        let mut lanes = [0u32; LANES];
        lanes.iter_mut().for_each(|l| *l = b.rng.next_u32());
        b.set_lanes(lanes);
        for c in Counter::ALL {
            let (d, resp) = b.read(roce_regs::ctr::counter::addr(c.index()));
            assert_eq!(resp, OKAY);
            assert_eq!(
                Some(d),
                b.r.read(roce_regs::ctr::counter::addr(c.index())),
                "{}",
                c.name()
            );
        }
    }
}

/// Cycles from the AR handshake to `rvalid` (the catalogue's latency) and
/// from the AW+W handshake to `bvalid`, with the master never waiting.
#[test]
fn latency() {
    use roce_sim::axil::AxilSlave;
    let mut b = Bench::new("csr::latency", 12, Timing::FULL_RATE);
    let d = &mut b.dut;
    d.set_b_ready(true);
    d.set_r_ready(true);
    d.set_ar(true, roce_regs::cfg::udp_sport::ADDR);
    d.eval();
    assert!(d.ar_ready());
    d.tick();
    d.set_ar(false, 0);
    let mut read = 1;
    while {
        d.eval();
        d.r().is_none()
    } {
        d.tick();
        read += 1;
        assert!(read < 10);
    }
    assert_eq!(Some(read), Dut::LATENCY, "AR handshake to rvalid");
    d.tick();
    d.set_aw(true, roce_regs::cfg::ipv4::ADDR);
    d.set_w(true, 1, 0xF);
    d.eval();
    assert!(d.aw_ready() && d.w_ready());
    d.tick();
    d.set_aw(false, 0);
    d.set_w(false, 0, 0);
    let mut write = 1;
    while {
        d.eval();
        d.b().is_none()
    } {
        d.tick();
        write += 1;
        assert!(write < 10);
    }
    eprintln!("AR to rvalid {read} cycles, AW+W to bvalid {write} cycles");
    let want = Dut::PARAMS.iter().find(|(k, _)| *k == "WRITE_LATENCY");
    assert_eq!(
        Some(write as u64),
        want.map(|p| p.1),
        "AW+W handshake to bvalid"
    );
}

/// Batches of reads and writes in flight together, in random order on the
/// channels. Within a batch an address is either read or written, so
/// every read has one right answer.
fn mixed(test: &str, seed: u64, timing: Timing, batches: usize) -> (u64, usize) {
    let mut b = Bench::new(test, seed, timing);
    let addrs = b.r.addrs();
    let start = b.dut.cycles();
    let mut ops = 0;
    for _ in 0..batches {
        let before = b.r.clone();
        let mut written = std::collections::BTreeSet::new();
        let mut reads = BTreeMap::new();
        let mut writes = BTreeMap::new();
        for _ in 0..60 {
            let a = if b.rng.chance(100) {
                b.random_unmapped()
            } else {
                addrs[b.rng.below(addrs.len() as u64) as usize]
            };
            if a & !3 == roce_regs::ctr::counter::addr(Counter::CsrUnmapped.index()) {
                continue; // moves with this batch's unmapped reads
            }
            let rw = before.words.get(&(a & !3)).map(|e| e.access) == Some(Access::RW);
            if rw && !reads.values().any(|&r| r == a & !3) && b.rng.chance(500) {
                let v = b.rng.next_u32();
                let strb = if before.words[&(a & !3)].ctx.is_some() {
                    0xF
                } else {
                    b.rng.below(16) as u32
                };
                let want = b.r.write(a, v, strb);
                writes.insert(b.m.write(a, v, strb), (a, want));
                written.insert(a & !3);
            } else if !written.contains(&(a & !3)) {
                reads.insert(b.m.read(a), a & !3);
            }
        }
        b.m.finish(&mut b.dut, 100_000);
        while let Some(d) = b.m.done.pop_front() {
            ops += 1;
            match d {
                Done::Write { tag, resp } => {
                    let (a, want) = writes[&tag];
                    assert_eq!(resp, want, "write to {a:#x}");
                }
                Done::Read { tag, data, resp } => {
                    let a = reads[&tag];
                    match before.read(a) {
                        Some(v) => assert_eq!((data, resp), (v, OKAY), "read {a:#x}"),
                        None => {
                            assert_eq!(resp, SLVERR, "read {a:#x}");
                            b.r.unmapped += 1;
                        }
                    }
                }
            }
        }
    }
    let cycles = b.dut.cycles() - start;
    b.check_all();
    (cycles, ops)
}

#[test]
fn mixed_traffic_random_timing() {
    mixed("csr::mixed_traffic_random_timing", 8, Timing::RANDOM, 40);
}

#[test]
fn mixed_traffic_full_rate() {
    let (cycles, ops) = mixed("csr::mixed_traffic_full_rate", 9, Timing::FULL_RATE, 40);
    eprintln!(
        "full rate: {ops} transactions in {cycles} cycles ({:.2} cycles each)",
        cycles as f64 / ops as f64
    );
}

/// Co-simulation (issue 5, 5a without the ISS): the firmware's QP-modify
/// logic runs on the host against the Verilated CSR block; every register
/// access it makes is an AXI4-Lite transaction from the BFM.
mod cosim {
    use super::*;
    use roce_fw::qp::Request;
    use roce_fw::{Firmware, Regs};
    use roce_regs::qp::{access, dest_qpn, dmac_hi, dmac_lo, path, rd_atomic, rq_psn, sq_psn};
    use roce_regs::qp::{state, timers};
    use roce_regs::{mbox, AccessFlag, AttrMask as A, Command, QpState, QpType, ResultCode};

    impl Regs for Bench {
        fn read32(&mut self, offset: u32) -> u32 {
            let (d, resp) = self.read(offset);
            assert_eq!(resp, OKAY, "firmware read {offset:#x}");
            d
        }
        fn write32(&mut self, offset: u32, value: u32) {
            self.write(offset, value, 0xF);
        }
    }

    /// The context of QP `q` as the datapath sees it.
    fn port(b: &mut Bench, q: u32) -> [u32; CTX_WORDS] {
        b.dut.set_qp_rd_addr(q);
        for _ in 0..super::qp_latency() {
            b.dut.eval();
            b.dut.tick();
        }
        b.dut.eval();
        b.dut.get_qp_rd_data()
    }

    fn table(b: &mut Bench) -> Vec<[u32; CTX_WORDS]> {
        (0..n_qps()).map(|q| port(b, q)).collect()
    }

    /// Post `req` as a host would, run one firmware step, and return the
    /// result the host reads from `mbox.status`.
    fn post(b: &mut Bench, fw: &Firmware, req: &Request) -> ResultCode {
        req.write(b);
        b.write32(
            mbox::cmd::ADDR,
            mbox::cmd::OP.val(Command::ModifyQp.value()),
        );
        let seq = mbox::status::SEQ.get(b.read32(mbox::status::ADDR));
        b.write32(mbox::doorbell::ADDR, mbox::doorbell::GO.val(1));
        let ran = fw.poll(b);
        assert!(ran.is_some(), "the firmware saw no doorbell");
        assert_eq!(mbox::doorbell::GO.get(b.read32(mbox::doorbell::ADDR)), 0);
        let status = b.read32(mbox::status::ADDR);
        assert_eq!(mbox::status::SEQ.get(status), (seq + 1) & 0xFFFF);
        let result = ResultCode::from_value(mbox::status::RESULT.get(status)).unwrap();
        assert_eq!(Some(result), ran);
        result
    }

    fn flags(f: &[AccessFlag]) -> u32 {
        f.iter().fold(0, |m, f| m | f.value())
    }

    fn mask(m: &[A]) -> u32 {
        m.iter().fold(0, |x, a| x | a.value())
    }

    #[test]
    fn firmware_brings_a_qp_up_on_the_csr_block() {
        let mut b = Bench::new("csr::cosim::firmware_brings_a_qp_up", 10, Timing::RANDOM);
        let fw = Firmware::boot(&mut b);
        assert_eq!(fw.limits.qp_count, n_qps());
        let n = n_qps();
        for _ in 0..3 {
            let q = b.rng.below(n as u64) as u32;
            let before = table(&mut b);
            let init = Request {
                qpn: q,
                mask: mask(&[A::State, A::QpType, A::Pd, A::PkeyIndex, A::AccessFlags]),
                qp_state: QpState::Init.value(),
                qp_type: QpType::Rc.value(),
                pd: b.rng.next_u32() & roce_regs::qp::pd::PD.max(),
                pkey_index: b.rng.below(roce_regs::PKEY_COUNT as u64) as u32,
                access_flags: flags(&[AccessFlag::RemoteWrite, AccessFlag::RemoteRead]),
                ..Request::default()
            };
            assert_eq!(post(&mut b, &fw, &init), ResultCode::Ok);
            let c = unpack_ctx(&port(&mut b, q));
            assert_eq!(c[&("state", state::STATE.name)], QpState::Init.value());
            assert_eq!(c[&("state", state::TYPE.name)], QpType::Rc.value());
            assert_eq!(c[&("path", path::PKEY_INDEX.name)], init.pkey_index);
            assert_eq!(c[&("access", access::FLAGS.name)], init.access_flags);
            assert_eq!(c[&("pd", roce_regs::qp::pd::PD.name)], init.pd);
            let rtr = Request {
                qpn: q,
                mask: mask(&[
                    A::State,
                    A::Av,
                    A::PathMtu,
                    A::DestQpn,
                    A::RqPsn,
                    A::MaxDestRdAtomic,
                    A::MinRnrTimer,
                ]),
                qp_state: QpState::Rtr.value(),
                sgid_index: b.rng.below(roce_regs::GID_COUNT as u64) as u32,
                dmac_hi: b.rng.next_u32() & 0xFFFF,
                dmac_lo: b.rng.next_u32(),
                dgid: [
                    b.rng.next_u32(),
                    b.rng.next_u32(),
                    b.rng.next_u32(),
                    b.rng.next_u32(),
                ],
                path_mtu: roce_wire::Pmtu::Mtu1024.code() as u32,
                dest_qpn: b.rng.next_u32() & 0xFF_FFFF,
                rq_psn: b.rng.next_u32() & 0xFF_FFFF,
                max_dest_rd_atomic: b.rng.below(roce_regs::MAX_DEST_RD_ATOMIC as u64 + 1) as u32,
                min_rnr_timer: b.rng.below(32) as u32,
                ..Request::default()
            };
            assert_eq!(post(&mut b, &fw, &rtr), ResultCode::Ok);
            let rts = Request {
                qpn: q,
                mask: mask(&[
                    A::State,
                    A::Timeout,
                    A::RetryCnt,
                    A::RnrRetry,
                    A::SqPsn,
                    A::MaxRdAtomic,
                ]),
                qp_state: QpState::Rts.value(),
                timeout: b.rng.below(32) as u32,
                retry_cnt: b.rng.below(8) as u32,
                rnr_retry: b.rng.below(8) as u32,
                sq_psn: b.rng.next_u32() & 0xFF_FFFF,
                max_rd_atomic: b.rng.below(roce_regs::MAX_RD_ATOMIC as u64 + 1) as u32,
                ..Request::default()
            };
            assert_eq!(post(&mut b, &fw, &rts), ResultCode::Ok);
            let c = unpack_ctx(&port(&mut b, q));
            let want = [
                (("state", state::STATE.name), QpState::Rts.value()),
                (("dest_qpn", dest_qpn::QPN.name), rtr.dest_qpn),
                (("rq_psn", rq_psn::PSN.name), rtr.rq_psn),
                (("sq_psn", sq_psn::PSN.name), rts.sq_psn),
                (("path", path::PMTU.name), rtr.path_mtu),
                (("path", path::SGID_INDEX.name), rtr.sgid_index),
                (("timers", timers::TIMEOUT.name), rts.timeout),
                (("timers", timers::RETRY_CNT.name), rts.retry_cnt),
                (("timers", timers::RNR_RETRY.name), rts.rnr_retry),
                (("timers", timers::MIN_RNR_TIMER.name), rtr.min_rnr_timer),
                (
                    ("rd_atomic", rd_atomic::MAX_RD_ATOMIC.name),
                    rts.max_rd_atomic,
                ),
                (
                    ("rd_atomic", rd_atomic::MAX_DEST_RD_ATOMIC.name),
                    rtr.max_dest_rd_atomic,
                ),
                (("dmac_hi", dmac_hi::MAC.name), rtr.dmac_hi),
                (("dmac_lo", dmac_lo::MAC.name), rtr.dmac_lo),
                (("dgid_w0", "WORD"), rtr.dgid[0]),
                (("dgid_w3", "WORD"), rtr.dgid[3]),
            ];
            for (k, v) in want {
                assert_eq!(c[&k], v, "QP {q} {k:?}");
            }
            // No other QP changed.
            let after = table(&mut b);
            for p in (0..n).filter(|&p| p != q) {
                assert_eq!(after[p as usize], before[p as usize], "QP {p} changed");
            }
        }
    }

    #[test]
    fn illegal_requests_leave_the_table_unchanged() {
        let mut b = Bench::new("csr::cosim::illegal_requests", 11, Timing::RANDOM);
        let fw = Firmware::boot(&mut b);
        let q = b.rng.below(n_qps() as u64) as u32;
        // Bring the QP to Init first: some faults need a QP past Reset.
        let init = Request {
            qpn: q,
            mask: mask(&[A::State, A::QpType, A::Pd, A::PkeyIndex, A::AccessFlags]),
            qp_state: QpState::Init.value(),
            qp_type: QpType::Rc.value(),
            ..Request::default()
        };
        assert_eq!(post(&mut b, &fw, &init), ResultCode::Ok);
        let rtr = Request {
            qpn: q,
            mask: mask(&[
                A::State,
                A::Av,
                A::PathMtu,
                A::DestQpn,
                A::RqPsn,
                A::MaxDestRdAtomic,
                A::MinRnrTimer,
            ]),
            qp_state: QpState::Rtr.value(),
            path_mtu: roce_wire::Pmtu::Mtu4096.code() as u32,
            ..Request::default()
        };
        let bad = common::fwcheck::illegal_rtr_requests(rtr, n_qps());
        for (req, code) in bad {
            let before = table(&mut b);
            assert_eq!(post(&mut b, &fw, &req), code, "{req:?}");
            assert_eq!(table(&mut b), before, "{code:?} changed the table");
        }
        // And the legal request still works afterwards.
        assert_eq!(post(&mut b, &fw, &rtr), ResultCode::Ok);
        let c = unpack_ctx(&port(&mut b, q));
        assert_eq!(c[&("state", state::STATE.name)], QpState::Rtr.value());
    }
}
