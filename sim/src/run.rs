//! `roce-sim run`: simulated NICs ([`crate::nic`]) doing RDMA over a
//! simulated link (two NICs) or switch (more), perftest-style workloads,
//! every byte checked where it lands, and a report.
//!
//! **Workload.** Each requester (NIC A with two NICs; see [`Pattern`])
//! sends `iters` messages on each of `qps` QPs to its responder, at most
//! `depth` outstanding per QP (perftest's tx-depth); with `bidir`, the
//! responder does the same back at the same time.
//! Buffers are slots reused round-robin (`2·depth` per QP and kind), so
//! memory stays small whatever the message count; the slot a message uses
//! is not reused before that message has completed and been checked.
//! Payloads are a pseudo-random pattern of (seed, QP, message).
//!
//! **Checks**, each naming the QP and message when it fails:
//! - every send completion, in order per QP: wr_id, success, opcode, bytes;
//! - WRITE: at its completion, B's target slot holds the message's bytes
//!   (the ACK that completes it says the data is in memory);
//! - READ: at its completion, A's destination slot holds B's bytes;
//! - FETCH & ADD and CMP & SWAP: the original value returned is the one
//!   in-order execution gives, and B's word holds the final value at the end;
//! - SEND and the immediate of WRITE with immediate: every receive
//!   completion at B, in order: length, immediate, the bytes in its buffer;
//! - nothing else completes in a quiet period after the last completion,
//!   no QP went to Error, no AXI rule broken, and (hardware) no byte written
//!   outside the registered buffers;
//! - no completion for `hang_cycles`: a hang, reported with what each NIC
//!   is waiting for.
//!
//! **Link.** Per direction: latency, bandwidth (bytes per cycle, with
//! Ethernet's preamble, FCS and inter-frame gap counted), seeded drop,
//! duplicate, reorder and corrupt rates, and ECN CE marking of frames that
//! find more than a threshold of bytes queued.

use crate::nic::{
    hw_param, HwNic, Layout, QpSetup, RecvWr, Region, SendWr, SimNic, SoftNic, Station, Verb,
};
use crate::rng::Rng;
use roce_transport::WcOpcode;
use roce_wire::Pmtu;
use std::collections::VecDeque;
use std::fmt::Write as _;

/// The first QP number a run uses: QP0 and QP1 are InfiniBand's
/// management QPs (SMI, GSI), never RC data QPs (Wireshark decodes what
/// goes to them as MADs).
pub const FIRST_QPN: u32 = 2;

/// Preamble + SFD (8), FCS (4) and inter-frame gap (12): bytes a frame
/// occupies on the wire beyond what the MAC stream carries.
pub const WIRE_OVERHEAD: u64 = 24;

/// The workload.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Test {
    /// SEND (with `imm`: SEND with immediate).
    Send,
    /// RDMA WRITE (with `imm`: WRITE with immediate).
    Write,
    /// RDMA READ.
    Read,
    /// FETCH & ADD.
    AtomicFa,
    /// CMP & SWAP.
    AtomicCs,
    /// Every verb at random, lengths up to `size`, buffers unaligned.
    Mixed,
}

impl Test {
    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Test::Send => "send",
            Test::Write => "write",
            Test::Read => "read",
            Test::AtomicFa => "atomic-fa",
            Test::AtomicCs => "atomic-cs",
            Test::Mixed => "mixed",
        }
    }
}

/// Which implementation a NIC of the run is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// The Verilated `rc_transport` with the bench's host around it.
    Hw,
    /// The transport model (roce-transport).
    Model,
    /// The whole Verilated NIC (`roce_nic`: host queues in host memory,
    /// doorbells, the firmware on PicoRV32 running modify-QP), driven
    /// through `roce_sim::verbs`.
    Nic,
}

impl Engine {
    /// A Verilated transport (its build's QP and page-table limits apply).
    pub fn is_rtl(self) -> bool {
        matches!(self, Engine::Hw | Engine::Nic)
    }
}

/// One direction of the link.
#[derive(Copy, Clone, Debug)]
pub struct LinkConfig {
    /// Cycles from a frame's first beat out to its first beat in.
    pub latency: u64,
    /// Bytes per cycle (the MAC's W/8 at line rate).
    pub bytes_per_cycle: f64,
    /// Faults, per million frames.
    pub drop_ppm: u32,
    /// Duplicated frames, per million.
    pub dup_ppm: u32,
    /// Frames swapped with the one before, per million.
    pub reorder_ppm: u32,
    /// Frames with one bit flipped past the Ethernet header, per million.
    pub corrupt_ppm: u32,
    /// Mark CE on frames that find more than this many bytes queued.
    pub ecn_threshold: Option<u64>,
}

/// A whole scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The workload.
    pub test: Test,
    /// Message size in bytes (atomics: 8).
    pub size: u32,
    /// Messages per QP.
    pub iters: u64,
    /// QPs.
    pub qps: u32,
    /// SEND and WRITE with immediate.
    pub imm: bool,
    /// SENDs and WRITEs of at most `MAX_INLINE` bytes posted inline.
    pub inline: bool,
    /// Messages outstanding per QP.
    pub depth: usize,
    /// Receive WQEs each responder QP keeps posted (the slots reused:
    /// at most `2·depth`). Fewer than the SENDs in flight makes the
    /// responder answer RNR NAK and the requester wait and retry.
    pub recv_depth: usize,
    /// Cycles the responder's host takes to post a receive WQE again after
    /// its completion.
    pub recv_delay: u64,
    /// Path MTU.
    pub pmtu: Pmtu,
    /// The link (both directions alike).
    pub link: LinkConfig,
    /// Seed of everything random.
    pub seed: u64,
    /// NIC A (requester) and NIC B (responder).
    pub engines: [Engine; 2],
    /// Clock for the figures in Gb/s and µs.
    pub clock_mhz: f64,
    /// Local ACK timeout code (4.096 µs · 2^timeout).
    pub timeout: u8,
    /// Memory latency and backpressure, per mille (hardware NICs).
    pub stall: u32,
    /// Cycles without a completion that count as a hang.
    pub hang_cycles: u64,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Keep every frame each NIC took in ([`Outputs::rx`]).
    pub record_rx: bool,
    /// The responders run the same workload back at the same time, on
    /// the same QPs.
    pub bidir: bool,
    /// NICs: 2 on one link, more through a switch.
    pub nics: usize,
    /// Who sends to whom with more than two NICs.
    pub pattern: Pattern,
}

/// Who sends to whom.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Pattern {
    /// NIC 2k to NIC 2k+1 (A to B with two NICs).
    Pairs,
    /// Every NIC to NIC 0 (A): many senders, one receiver.
    Incast,
}

impl Scenario {
    /// The default scenario (`roce-sim run` without arguments).
    pub fn default_run() -> Scenario {
        Scenario {
            test: Test::Write,
            size: 4096,
            iters: 500,
            qps: 2,
            imm: false,
            inline: false,
            depth: 8,
            recv_depth: 16,
            recv_delay: 0,
            pmtu: Pmtu::Mtu4096,
            link: LinkConfig {
                latency: 156,
                bytes_per_cycle: 8.0,
                drop_ppm: 10_000,
                dup_ppm: 0,
                reorder_ppm: 0,
                corrupt_ppm: 0,
                ecn_threshold: None,
            },
            seed: 1,
            engines: [Engine::Hw, Engine::Hw],
            clock_mhz: 156.25,
            timeout: 7,
            stall: 0,
            hang_cycles: 2_000_000,
            progress: false,
            record_rx: false,
            bidir: false,
            nics: 2,
            pattern: Pattern::Pairs,
        }
    }

    /// The pairs of NICs that carry traffic (requester, responder): QPs
    /// `g·qps ..` belong to pair `g`.
    pub fn groups(&self) -> Vec<(usize, usize)> {
        match self.pattern {
            Pattern::Pairs => (0..self.nics / 2).map(|k| (2 * k, 2 * k + 1)).collect(),
            Pattern::Incast => (1..self.nics).map(|i| (i, 0)).collect(),
        }
    }

    /// Which engine NIC `i` is: `engines[1]` for the responders of the
    /// pattern, `engines[0]` for the requesters.
    pub fn engine_of(&self, i: usize) -> Engine {
        let responder = match self.pattern {
            Pattern::Pairs => i % 2 == 1,
            Pattern::Incast => i == 0,
        };
        self.engines[responder as usize]
    }

    /// Checks the scenario against what the NICs can do.
    pub fn validate(&self) -> Result<(), String> {
        let hw = self.engines.iter().any(|e| e.is_rtl());
        if self.qps == 0 {
            return Err("--qps must be at least 1".into());
        }
        if !(2..=16).contains(&self.nics) {
            return Err(format!("--nics {}: 2 to 16", self.nics));
        }
        if self.pattern == Pattern::Pairs && self.nics % 2 == 1 {
            return Err(format!("--nics {}: pairs need an even number", self.nics));
        }
        let qps = self.qps as u64 * self.groups().len() as u64;
        if hw && FIRST_QPN as u64 + qps > hw_param("QPS") {
            return Err(format!(
                "--qps {} ({qps} QPs over the NIC pairs): the hardware build has {} QPs, {} of them for data",
                self.qps,
                hw_param("QPS"),
                hw_param("QPS") - FIRST_QPN as u64
            ));
        }
        if self.iters == 0 {
            return Err("--iters must be at least 1".into());
        }
        if !(1..=256).contains(&self.depth) {
            return Err(format!("--depth {}: 1 to 256", self.depth));
        }
        // More than the 2·depth receive slots are never posted.
        if self.recv_depth == 0 {
            return Err("--recv-depth 0: at least 1".into());
        }
        if self.size > 1 << 20 {
            return Err(format!("--size {}: at most 1 MiB", self.size));
        }
        if matches!(self.test, Test::AtomicFa | Test::AtomicCs) && self.size != 8 {
            return Err(format!("--size {}: atomics are 8 bytes", self.size));
        }
        if self.inline {
            let max = roce_regs::queue::MAX_INLINE;
            if matches!(self.test, Test::Read | Test::AtomicFa | Test::AtomicCs) {
                return Err(format!(
                    "--inline with --test {}: only SEND and WRITE carry inline data",
                    self.test.name()
                ));
            }
            if self.test != Test::Mixed && self.size > max {
                return Err(format!(
                    "--inline with --size {}: a WQE holds at most {max} inline bytes",
                    self.size
                ));
            }
        }
        if self.link.bytes_per_cycle <= 0.0 || !self.link.bytes_per_cycle.is_finite() {
            return Err("--bandwidth must be a positive number of bytes per cycle".into());
        }
        for (n, v) in [
            ("--drop", self.link.drop_ppm),
            ("--dup", self.link.dup_ppm),
            ("--reorder", self.link.reorder_ppm),
            ("--corrupt", self.link.corrupt_ppm),
        ] {
            if v > 500_000 {
                return Err(format!("{n}: at most 50 %"));
            }
        }
        if self.clock_mhz <= 0.0 || !self.clock_mhz.is_finite() {
            return Err("--clock-mhz must be positive".into());
        }
        if roce_wire::LocalAckTimeout::new(self.timeout).is_none() || self.timeout == 0 {
            return Err(format!("--timeout {}: 1 to 31", self.timeout));
        }
        if self.stall >= 1000 {
            return Err(format!("--stall {}: below 1000 per mille", self.stall));
        }
        Ok(())
    }
}

/// Link counters of one direction.
#[derive(Default, Debug, Clone, Copy)]
pub struct LinkStats {
    /// Frames offered.
    pub frames: u64,
    /// Bytes offered (MAC stream bytes).
    pub bytes: u64,
    /// Dropped.
    pub dropped: u64,
    /// Duplicated.
    pub duplicated: u64,
    /// Reordered.
    pub reordered: u64,
    /// Corrupted.
    pub corrupted: u64,
    /// CE-marked.
    pub ecn_marked: u64,
}

/// One direction of the link: frames with their delivery cycle.
pub struct Link {
    q: VecDeque<(u64, Vec<u8>)>,
    cfg: LinkConfig,
    /// Cycle (fractional) at which the wire is free again.
    busy_until: f64,
    /// What happened.
    pub st: LinkStats,
}

impl Link {
    /// An empty link.
    pub fn new(cfg: LinkConfig) -> Link {
        Link {
            q: VecDeque::new(),
            cfg,
            busy_until: 0.0,
            st: LinkStats::default(),
        }
    }

    /// Frames in flight.
    pub fn in_flight(&self) -> usize {
        self.q.len()
    }

    /// A frame whose first beat left at cycle `now`.
    pub fn send(&mut self, rng: &mut Rng, now: u64, mut fr: Vec<u8>) {
        let chance = |rng: &mut Rng, ppm: u32| ppm > 0 && rng.below(1_000_000) < ppm as u64;
        self.st.frames += 1;
        self.st.bytes += fr.len() as u64;
        let wire = (fr.len() as u64 + WIRE_OVERHEAD) as f64 / self.cfg.bytes_per_cycle;
        let start = self.busy_until.max(now as f64);
        let queued = (start - now as f64) * self.cfg.bytes_per_cycle;
        self.busy_until = start + wire;
        if chance(rng, self.cfg.drop_ppm) {
            self.st.dropped += 1;
            return;
        }
        if self.cfg.ecn_threshold.is_some_and(|t| queued > t as f64) && mark_ce(&mut fr) {
            self.st.ecn_marked += 1;
        }
        if chance(rng, self.cfg.corrupt_ppm) {
            self.st.corrupted += 1;
            // A bit flipped past the Ethernet header: the IP checksum or
            // the ICRC must catch it.
            let i = 14 + rng.below(fr.len() as u64 - 14) as usize;
            fr[i] ^= 1 << rng.below(8);
        }
        let t = (start as u64 + self.cfg.latency).max(self.q.back().map_or(0, |b| b.0));
        if chance(rng, self.cfg.dup_ppm) {
            self.st.duplicated += 1;
            self.q.push_back((t, fr.clone()));
        }
        if chance(rng, self.cfg.reorder_ppm) && !self.q.is_empty() {
            self.st.reordered += 1;
            let n = self.q.len();
            self.q.insert(n - 1, (t, fr));
        } else {
            self.q.push_back((t, fr));
        }
    }

    /// Frames due by `now`, in order.
    pub fn deliver(&mut self, now: u64) -> impl Iterator<Item = (u64, Vec<u8>)> + '_ {
        let n = self.q.iter().take_while(|f| f.0 <= now).count();
        self.q.drain(..n)
    }
}

/// Sets ECN to CE in an untagged IPv4 or IPv6 frame (the IPv4 checksum
/// redone; the ICRC masks the field). False if the frame is neither.
pub fn mark_ce(fr: &mut [u8]) -> bool {
    if fr.len() < 54 {
        return false;
    }
    match u16::from_be_bytes([fr[12], fr[13]]) {
        0x0800 => {
            fr[15] |= 3;
            fr[24] = 0;
            fr[25] = 0;
            let ihl = (fr[14] & 0xf) as usize * 4;
            let c = !roce_wire::ipv4::ones_complement_sum(&fr[14..14 + ihl]);
            fr[24..26].copy_from_slice(&c.to_be_bytes());
            true
        }
        0x86DD => {
            // Traffic class straddles bytes 0 and 1 of the header.
            fr[15] |= 3 << 4;
            true
        }
        _ => false,
    }
}

/// The payload pattern of message `m` on QP `q`.
fn pattern(seed: u64, q: u32, m: u64, len: u32) -> Vec<u8> {
    Rng::new(seed ^ (q as u64) << 48 ^ m.wrapping_mul(0x9E37_79B9_7F4A_7C15)).bytes(len as usize)
}

/// One message in flight.
#[derive(Clone, Debug)]
struct Pending {
    m: u64,
    wr: SendWr,
    posted: u64,
    /// The bytes that must land (WRITE at B, READ at A) or the original
    /// value an atomic must return.
    want: Vec<u8>,
}

/// A receive completion B must give (in order per QP).
#[derive(Clone, Debug)]
struct WantRecv {
    m: u64,
    len: u32,
    imm: Option<u32>,
    /// The bytes (SEND only).
    data: Option<Vec<u8>>,
}

/// Buffers of one QP (virtual addresses).
#[derive(Clone, Copy, Debug)]
struct Slots {
    src: u64,
    dst: u64,
    rem_w: u64,
    rem_r: u64,
    rem_at: u64,
    rcv: u64,
}

/// The traffic of one requester to one responder over QPs `qp0 ..`.
struct Flow {
    req: usize,
    rsp: usize,
    qp0: u32,
    qs: Vec<QpRun>,
}

struct QpRun {
    slots: Slots,
    next: u64,
    pending: VecDeque<Pending>,
    want_recv: VecDeque<WantRecv>,
    recv_posted: u64,
    recv_done: u64,
    /// Cycles at which the host may post the next receive WQEs (one per
    /// entry): `recv_depth` at the start, then one `recv_delay` after
    /// each receive completion.
    recv_credits: VecDeque<u64>,
    atomic: u64,
    done: u64,
}

/// A NIC's name, engine and counters by name.
pub type NicCounters = (String, &'static str, Vec<(String, u64)>);

/// The report of a run.
#[derive(Clone, Debug)]
pub struct Report {
    /// The scenario, as text.
    pub scenario: String,
    /// Messages completed (send side).
    pub messages: u64,
    /// Payload bytes moved by them.
    pub bytes: u64,
    /// Cycles from the first post to the last completion.
    pub cycles: u64,
    /// Latency of each message (post to completion), cycles, sorted.
    pub latencies: Vec<u64>,
    /// Link counters per NIC: the frames toward it (its switch port, or
    /// the link from its peer).
    pub links: Vec<(String, LinkStats)>,
    /// Each NIC's name, engine and counters.
    pub nics: Vec<NicCounters>,
    /// Clock for the figures.
    pub clock_mhz: f64,
    /// The line rate the payload can use: the links' bytes per cycle times
    /// the NICs the payload goes to (one with two NICs one way; two with
    /// `bidir`; one for incast).
    pub line_bytes_per_cycle: f64,
    /// Simulation wall time in seconds (not a performance figure).
    pub wall_s: f64,
}

impl Report {
    /// Frames the links dropped, all of them.
    pub fn dropped(&self) -> u64 {
        self.links.iter().map(|l| l.1.dropped).sum()
    }
    /// Bytes per cycle.
    pub fn bytes_per_cycle(&self) -> f64 {
        self.bytes as f64 / self.cycles.max(1) as f64
    }
    /// Gb/s at the clock.
    pub fn gbps(&self) -> f64 {
        self.bytes_per_cycle() * 8.0 * self.clock_mhz / 1000.0
    }
    /// Messages per second at the clock, in millions.
    pub fn mmsgs(&self) -> f64 {
        self.messages as f64 / self.cycles.max(1) as f64 * self.clock_mhz
    }
    /// Latency percentile `p` (0..=100), cycles.
    pub fn latency(&self, p: f64) -> u64 {
        if self.latencies.is_empty() {
            return 0;
        }
        let i = ((p / 100.0) * (self.latencies.len() - 1) as f64).round() as usize;
        self.latencies[i]
    }
    fn counter(&self, nic: usize, name: &str) -> u64 {
        self.nics[nic]
            .2
            .iter()
            .find(|c| c.0 == name)
            .map_or(0, |c| c.1)
    }

    /// The report as text, in perftest's spirit.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let us = |c: u64| c as f64 / self.clock_mhz;
        let _ = writeln!(s, "{}", self.scenario);
        let _ = writeln!(
            s,
            " #bytes moved   #msgs    cycles      BW [Gb/s @ {:.2} MHz]   B/cycle (of {:.0})   MsgRate [Mpps]",
            self.clock_mhz, self.line_bytes_per_cycle
        );
        let _ = writeln!(
            s,
            " {:<13} {:<8} {:<11} {:<23.3} {:<20.3} {:.4}",
            self.bytes,
            self.messages,
            self.cycles,
            self.gbps(),
            self.bytes_per_cycle(),
            self.mmsgs()
        );
        let _ = writeln!(
            s,
            " latency post→completion [cycles]: p50 {} p90 {} p99 {} max {}  [µs]: p50 {:.2} p99 {:.2} max {:.2}",
            self.latency(50.0),
            self.latency(90.0),
            self.latency(99.0),
            self.latency(100.0),
            us(self.latency(50.0)),
            us(self.latency(99.0)),
            us(self.latency(100.0)),
        );
        for (to, l) in &self.links {
            let _ = writeln!(
                s,
                " link to {to}: {} frames, dropped {}, duplicated {}, reordered {}, corrupted {}, CE-marked {}",
                l.frames, l.dropped, l.duplicated, l.reordered, l.corrupted, l.ecn_marked
            );
        }
        for (i, (name, engine, c)) in self.nics.iter().enumerate() {
            let get = |n: &str| self.counter(i, n);
            let drops: Vec<String> = c
                .iter()
                .filter(|(n, v)| {
                    *v > 0 && n.starts_with("rx_") && n != "rx_accept"
                        || *v > 0 && (n.contains("drop") || n.contains("nak"))
                })
                .map(|(n, v)| format!("{n} {v}"))
                .collect();
            let _ = writeln!(
                s,
                " NIC {name} ({engine}): frames in {}, retransmitted {}, timeouts {}, seq NAKs sent {}, RNR NAKs sent {}, duplicates {}; drops and NAKs by reason: {}",
                get("rx_accept"),
                get("req_retx"),
                get("req_retry_timeout"),
                get("rsp_nak_psn_seq"),
                get("rsp_rnr_nak"),
                get("rsp_duplicate"),
                if drops.is_empty() { "none".to_string() } else { drops.join(", ") }
            );
        }
        s
    }

    /// The report as JSON.
    pub fn json(&self) -> serde_json::Value {
        let link = |l: &LinkStats| {
            serde_json::json!({
                "frames": l.frames, "bytes": l.bytes, "dropped": l.dropped,
                "duplicated": l.duplicated, "reordered": l.reordered,
                "corrupted": l.corrupted, "ecn_marked": l.ecn_marked,
            })
        };
        serde_json::json!({
            "scenario": self.scenario,
            "messages": self.messages,
            "bytes": self.bytes,
            "cycles": self.cycles,
            "clock_mhz": self.clock_mhz,
            "bytes_per_cycle": self.bytes_per_cycle(),
            "line_bytes_per_cycle": self.line_bytes_per_cycle,
            "gbps": self.gbps(),
            "mmsgs_per_s": self.mmsgs(),
            "latency_cycles": {
                "p50": self.latency(50.0), "p90": self.latency(90.0),
                "p99": self.latency(99.0), "max": self.latency(100.0),
            },
            "links": self.links.iter().map(|(to, l)| {
                let mut j = link(l);
                j["to"] = serde_json::json!(to);
                j
            }).collect::<Vec<_>>(),
            "nics": self.nics.iter().map(|(n, e, c)| serde_json::json!({
                "name": n, "engine": e,
                "counters": c.iter().map(|(k, v)| (k.clone(), serde_json::json!(v)))
                    .collect::<serde_json::Map<_, _>>(),
            })).collect::<Vec<_>>(),
            "wall_seconds": self.wall_s,
        })
    }
}

/// What a run hands back besides its report.
pub struct Outputs {
    /// Every frame each NIC sent: (cycle of its first beat, the NIC, bytes).
    pub frames: Vec<(u64, usize, Vec<u8>)>,
    /// With `record_rx`, every frame each NIC took in: (cycle of its last
    /// beat into the MAC input, bytes), per NIC.
    pub rx: Vec<Vec<(u64, Vec<u8>)>>,
}

/// NIC `i`'s station: MAC 02:00:00:00:00:(0a + i), IP 10.0.0.(1 + i).
pub const fn station(i: usize) -> Station {
    Station {
        mac: [0x02, 0x00, 0x00, 0x00, 0x00, 0x0a + i as u8],
        ip: [10, 0, 0, 1 + i as u8],
    }
}

/// NIC A's station.
pub const STATION_A: Station = station(0);
/// NIC B's station.
pub const STATION_B: Station = station(1);

/// NIC `i`'s name: A, B, C, ...
pub fn nic_name(i: usize) -> String {
    char::from(b'A' + i as u8).to_string()
}

fn make_nic(
    e: Engine,
    name: &str,
    seed: u64,
    st: Station,
    sc: &Scenario,
) -> Result<Box<dyn SimNic>, String> {
    Ok(match e {
        Engine::Hw => Box::new(HwNic::new(name, seed, st, sc.stall)),
        Engine::Model => Box::new(SoftNic::new(
            name,
            st,
            sc.link.bytes_per_cycle.ceil() as u64,
            sc.clock_mhz,
        )),
        #[cfg(roce_picorv32)]
        Engine::Nic => Box::new(crate::verbs::NicDev::new(
            name.to_string(),
            seed,
            st,
            crate::axi_mem::AxiMemTiming::with_stalls(sc.stall),
        )?),
        #[cfg(not(roce_picorv32))]
        Engine::Nic => return Err(crate::fw::picorv32::NOT_BUILT.into()),
    })
}

/// NICs whose links carry the payload (the capacity line rate counts): the
/// responders for SEND, WRITE and atomics, the requesters for READ, both
/// for mixed traffic.
fn payload_sinks(test: Test, flows: &[Flow]) -> usize {
    let mut sinks = std::collections::BTreeSet::new();
    for f in flows {
        if test != Test::Read {
            sinks.insert(f.rsp);
        }
        if matches!(test, Test::Read | Test::Mixed) {
            sinks.insert(f.req);
        }
    }
    sinks.len()
}

/// The oldest message outstanding, for failure messages.
fn oldest(flows: &[Flow]) -> String {
    flows
        .iter()
        .flat_map(|f| {
            f.qs.iter()
                .enumerate()
                .filter_map(move |(k, r)| r.pending.front().map(|p| (f.req, f.qp0 + k as u32, p)))
        })
        .min_by_key(|x| x.2.posted)
        .map_or(
            "none (receive completions missing)".to_string(),
            |(i, q, p)| {
                format!(
                    "NIC {} QP {q} message {} ({:?}, {} bytes) posted at cycle {}",
                    nic_name(i),
                    p.m,
                    p.wr.verb,
                    p.wr.len,
                    p.posted
                )
            },
        )
}

/// Where receive buffer `n` starts inside its slot.
fn recv_offset(odd: bool, n: u64) -> u64 {
    if odd {
        n * 5 % 8
    } else {
        0
    }
}

/// The verb of message `m` (mixed: drawn), and its length.
fn verb_of(sc: &Scenario, rng: &mut Rng) -> (Verb, u32) {
    match sc.test {
        Test::Send => (if sc.imm { Verb::SendImm } else { Verb::Send }, sc.size),
        Test::Write => (if sc.imm { Verb::WriteImm } else { Verb::Write }, sc.size),
        Test::Read => (Verb::Read, sc.size),
        Test::AtomicFa => (Verb::FetchAdd, 8),
        Test::AtomicCs => (Verb::CmpSwap, 8),
        Test::Mixed => {
            let v = Verb::ALL[rng.below(Verb::ALL.len() as u64) as usize];
            let len = if v.atomic() {
                8
            } else {
                match rng.below(4) {
                    0 => rng.below(16.min(sc.size as u64 + 1)) as u32,
                    1 => sc.size,
                    _ => rng.below(sc.size as u64 + 1) as u32,
                }
            };
            (v, len)
        }
    }
}

/// Runs a scenario: the report, or a failure naming what went wrong.
pub fn run(sc: &Scenario, trace: Option<&std::path::Path>) -> Result<(Report, Outputs), String> {
    sc.validate()?;
    let wall = std::time::Instant::now();
    let mut rng = Rng::new(sc.seed);
    let nslots = 2 * sc.depth as u64;
    let size = sc.size.max(8) as u64;
    // Slots are `stride` apart; mixed traffic puts its buffers at odd
    // offsets inside them (unaligned DMA), the benchmarks at 64 bytes.
    let stride = size.next_multiple_of(64) + 64;
    let odd = sc.test == Test::Mixed;
    // Layout: the same on both NICs (each uses its half).
    let mut lay = Layout::new(12);
    let groups = sc.groups();
    let total_qps = sc.qps * groups.len() as u32;
    let slots: Vec<Slots> = (0..total_qps)
        .map(|_| Slots {
            src: lay.alloc(Region::Src, nslots * stride, 64),
            dst: lay.alloc(Region::Dst, nslots * stride, 64),
            rem_w: lay.alloc(Region::Rem, nslots * stride, 64),
            rem_r: lay.alloc(Region::Rem, size, 64),
            rem_at: lay.alloc(Region::Rem, 8, 8),
            rcv: lay.alloc(Region::Rcv, nslots * stride, 64),
        })
        .collect();
    // The smallest page size whose page table fits the hardware's.
    let pt_max = if sc.engines.iter().any(|e| e.is_rtl()) {
        hw_param("PT_ENTRIES")
    } else {
        u64::MAX
    };
    loop {
        lay.seal();
        if lay.pt_entries() <= pt_max {
            break;
        }
        if lay.page_shift == roce_wire::mr::PAGE_SHIFT_MAX as u32 {
            return Err(format!(
                "the buffers ({} bytes per region) need more than the hardware's {pt_max} page-table entries; use fewer QPs, a smaller --size or --depth",
                lay.used.iter().max().unwrap()
            ));
        }
        lay.page_shift += 1;
    }
    let mut nics: Vec<Box<dyn SimNic>> = (0..sc.nics)
        .map(|i| {
            make_nic(
                sc.engine_of(i),
                &nic_name(i),
                rng.next_u64(),
                station(i),
                sc,
            )
        })
        .collect::<Result<_, _>>()?;
    if let Some(p) = trace {
        let hw = (0..sc.nics)
            .find(|&i| sc.engine_of(i) == Engine::Hw)
            .ok_or_else(|| "--trace needs a hardware NIC (--a hw or --b hw)".to_string())?;
        nics[hw].trace_to(p)?;
    }
    for n in nics.iter_mut() {
        n.reg_mrs(&lay);
    }
    let mut flows = Vec::new();
    for (g, &(r, d)) in groups.iter().enumerate() {
        let qp0 = FIRST_QPN + g as u32 * sc.qps;
        for q in qp0..qp0 + sc.qps {
            // PSNs near the 2^24 wrap, different per direction and QP.
            let ab = (0xFF_FF80 + q * 0x2_0003) & 0xFF_FFFF;
            let ba = (0xFF_FFF0u32.wrapping_sub(q * 0x1_0011)) & 0xFF_FFFF;
            for (i, peer, sq, rq) in [(r, d, ab, ba), (d, r, ba, ab)] {
                nics[i].create_qp(
                    &QpSetup {
                        qpn: q,
                        dest_qpn: q,
                        sq_psn: sq,
                        rq_psn: rq,
                        pmtu: sc.pmtu,
                        // Mixed traffic also meets the READ/atomic limit.
                        max_rd_atomic: if sc.test == Test::Mixed {
                            [1, 2, 4, 16][rng.below(4) as usize]
                        } else {
                            16
                        },
                        timeout: sc.timeout,
                        retry_cnt: 7,
                        rnr_retry: 7,
                        min_rnr_timer: 1,
                    },
                    station(peer),
                );
            }
        }
        // The traffic of the pair: requester to responder, and with
        // `bidir` back on the same QPs.
        let ends = if sc.bidir {
            vec![(r, d), (d, r)]
        } else {
            vec![(r, d)]
        };
        for (req, rsp) in ends {
            let qs = (qp0..qp0 + sc.qps)
                .map(|q| QpRun {
                    slots: slots[(q - FIRST_QPN) as usize],
                    next: 0,
                    pending: VecDeque::new(),
                    want_recv: VecDeque::new(),
                    recv_posted: 0,
                    recv_done: 0,
                    recv_credits: vec![0; sc.recv_depth.min(nslots as usize)].into(),
                    atomic: rng.next_u64() ^ q as u64,
                    done: 0,
                })
                .collect();
            flows.push(Flow { req, rsp, qp0, qs });
        }
    }
    // The responders' READ sources and atomic words.
    for (fi, f) in flows.iter().enumerate() {
        for (k, r) in f.qs.iter().enumerate() {
            let q = f.qp0 + k as u32;
            let src = pattern(sc.seed ^ fi as u64, q, u64::MAX, size as u32);
            nics[f.rsp].write(r.slots.rem_r, &src);
            nics[f.rsp].write(r.slots.rem_at, &r.atomic.to_le_bytes());
        }
    }
    // The flow a completion belongs to: a send completion to the flow the
    // NIC requests in, a receive completion to the one it responds in.
    let flow_of = |flows: &[Flow], nic: usize, qpn: u32, recv: bool| {
        flows.iter().position(|f| {
            (if recv { f.rsp } else { f.req }) == nic && (f.qp0..f.qp0 + sc.qps).contains(&qpn)
        })
    };
    let macs: Vec<[u8; 6]> = (0..sc.nics).map(|i| station(i).mac).collect();
    let mut unroutable = 0u64;
    // One link per NIC: the frames toward it (with more than two NICs, the
    // switch's output port to it).
    let mut links: Vec<Link> = (0..sc.nics).map(|_| Link::new(sc.link)).collect();
    let mut lrng = Rng::new(rng.next_u64());
    let mut wrng = Rng::new(rng.next_u64());
    let mut out = Outputs {
        frames: Vec::new(),
        rx: vec![Vec::new(); sc.nics],
    };
    if sc.record_rx {
        for n in nics.iter_mut() {
            n.record_rx();
        }
    }
    let total = sc.iters * sc.qps as u64 * flows.len() as u64;
    let (mut done, mut bytes) = (0u64, 0u64);
    let mut latencies = Vec::with_capacity(total as usize);
    let mut first_post: Option<u64> = None;
    let mut last_done = 0u64;
    let mut last_progress = 0u64;
    let mut quiet_until: Option<u64> = None;
    let mut bar = Progress::new(sc.progress, total);
    let fail = |nics: &mut [Box<dyn SimNic>], msg: String| -> String {
        let why: Vec<String> = nics.iter_mut().map(|n| n.why()).collect();
        format!("{msg}\n  {}", why.join("\n  "))
    };
    loop {
        let now = nics[0].cycle();
        if let Some(t) = quiet_until {
            if now >= t {
                break;
            }
        }
        let ready = nics.iter().all(|n| n.ready());
        for (fi, f) in flows.iter_mut().enumerate() {
            let (rq, rs) = (f.req, f.rsp);
            // The responder: receive buffers ahead of what may be sent.
            for (k, r) in f.qs.iter_mut().enumerate() {
                let q = f.qp0 + k as u32;
                while ready
                    && r.recv_credits.front().is_some_and(|&t| t <= now)
                    && sc.test != Test::Read
                {
                    r.recv_credits.pop_front();
                    let slot = r.recv_posted % nslots;
                    nics[rs].post_recv(
                        q,
                        RecvWr {
                            wr_id: r.recv_posted,
                            va: r.slots.rcv + slot * stride + recv_offset(odd, r.recv_posted),
                            len: size as u32,
                        },
                    );
                    r.recv_posted += 1;
                }
            }
            // The requester: messages, up to `depth` outstanding per QP.
            for (k, r) in f.qs.iter_mut().enumerate() {
                let q = f.qp0 + k as u32;
                while ready && r.next < sc.iters && r.pending.len() < sc.depth {
                    let m = r.next;
                    let (verb, len) = verb_of(sc, &mut wrng);
                    let slot = m % nslots;
                    let off = if odd { wrng.below(8) } else { 0 };
                    let roff = if odd { wrng.below(8) } else { 0 };
                    let mut wr = SendWr {
                        qpn: q,
                        verb,
                        wr_id: (q as u64) << 40 | m,
                        lva: 0,
                        len,
                        rva: 0,
                        imm: wrng.next_u32(),
                        swap: 0,
                        compare: 0,
                        inline: sc.inline
                            && !matches!(verb, Verb::Read)
                            && !verb.atomic()
                            && len <= roce_regs::queue::MAX_INLINE,
                    };
                    let mut want = Vec::new();
                    match verb {
                        Verb::Send | Verb::SendImm | Verb::Write | Verb::WriteImm => {
                            wr.lva = r.slots.src + slot * stride + off;
                            let data = pattern(sc.seed ^ fi as u64, q, m, len);
                            nics[rq].write(wr.lva, &data);
                            if matches!(verb, Verb::Write | Verb::WriteImm) {
                                wr.rva = r.slots.rem_w + slot * stride + roff;
                            }
                            if verb.consumes_recv() {
                                r.want_recv.push_back(WantRecv {
                                    m,
                                    len,
                                    imm: (verb != Verb::Send).then_some(wr.imm),
                                    data: (verb != Verb::WriteImm).then(|| data.clone()),
                                });
                            }
                            if matches!(verb, Verb::Write | Verb::WriteImm) {
                                want = data;
                            }
                        }
                        Verb::Read => {
                            wr.lva = r.slots.dst + slot * stride + off;
                            let off = if len as u64 >= size {
                                0
                            } else {
                                wrng.below(size - len as u64 + 1)
                            };
                            wr.rva = r.slots.rem_r + off;
                            let src = pattern(sc.seed ^ fi as u64, q, u64::MAX, size as u32);
                            want = src[off as usize..off as usize + len as usize].to_vec();
                        }
                        Verb::CmpSwap | Verb::FetchAdd => {
                            wr.lva = r.slots.dst + slot * stride;
                            wr.rva = r.slots.rem_at;
                            wr.swap = wrng.next_u64();
                            let orig = r.atomic;
                            if verb == Verb::FetchAdd {
                                r.atomic = orig.wrapping_add(wr.swap);
                            } else {
                                // Three in four compare equal.
                                wr.compare = if wrng.below(4) < 3 { orig } else { !orig };
                                if wr.compare == orig {
                                    r.atomic = wr.swap;
                                }
                            }
                            want = orig.to_le_bytes().to_vec();
                        }
                    }
                    first_post.get_or_insert(now);
                    r.pending.push_back(Pending {
                        m,
                        wr: wr.clone(),
                        posted: now,
                        want,
                    });
                    nics[rq].post_send(wr);
                    r.next += 1;
                }
            }
        }
        for n in nics.iter_mut() {
            n.step();
        }
        let now = nics[0].cycle();
        // Frames across the links, to the NIC with the destination MAC.
        for (i, n) in nics.iter_mut().enumerate() {
            while let Some((first, fr)) = n.pop_tx() {
                out.frames.push((first, i, fr.clone()));
                match macs.iter().position(|m| fr.len() >= 6 && fr[..6] == m[..]) {
                    Some(j) if j != i => links[j].send(&mut lrng, now, fr),
                    _ => unroutable += 1,
                }
            }
        }
        for (j, l) in links.iter_mut().enumerate() {
            for (t, fr) in l.deliver(now) {
                nics[j].push_rx(t, fr);
            }
        }
        // Completions: a send completion at NIC i belongs to direction i,
        // a receive completion to the direction toward i.
        let mut cqes = Vec::new();
        for (i, n) in nics.iter_mut().enumerate() {
            while let Some(c) = n.poll_cq() {
                cqes.push((i, c));
            }
        }
        for (i, c) in cqes {
            last_progress = now;
            let recv = matches!(c.opcode, WcOpcode::Recv | WcOpcode::RecvRdmaWithImm);
            let q = c.qpn;
            let fi = match flow_of(&flows, i, q, recv) {
                Some(fi) if quiet_until.is_none() => fi,
                _ => {
                    return Err(fail(
                        &mut nics,
                        format!("NIC {}: an unexpected completion: {c:?}", nic_name(i)),
                    ))
                }
            };
            let (rsp, qp0) = (flows[fi].rsp, flows[fi].qp0);
            let r = &mut flows[fi].qs[(q - qp0) as usize];
            if !recv {
                let Some(p) = r.pending.pop_front() else {
                    return Err(fail(
                        &mut nics,
                        format!(
                            "NIC {} QP {q}: a send completion with nothing outstanding: {c:?}",
                            nic_name(i)
                        ),
                    ));
                };
                let name = format!(
                    "NIC {} QP {q} message {} ({:?}, {} bytes)",
                    nic_name(i),
                    p.m,
                    p.wr.verb,
                    p.wr.len
                );
                if !c.ok || c.wr_id != p.wr.wr_id || c.opcode != p.wr.verb.wc_opcode() {
                    return Err(fail(
                        &mut nics,
                        format!(
                            "{name}: completion {c:?}, want wr_id {:#x} success {:?}",
                            p.wr.wr_id,
                            p.wr.verb.wc_opcode()
                        ),
                    ));
                }
                if c.byte_len != p.wr.len && !p.wr.verb.atomic() {
                    return Err(format!("{name}: completion says {} bytes", c.byte_len));
                }
                let got = match p.wr.verb {
                    Verb::Write | Verb::WriteImm => nics[rsp].read(p.wr.rva, p.want.len()),
                    Verb::Read | Verb::CmpSwap | Verb::FetchAdd => {
                        nics[i].read(p.wr.lva, p.want.len())
                    }
                    Verb::Send | Verb::SendImm => p.want.clone(),
                };
                if got != p.want {
                    let at = got
                        .iter()
                        .zip(&p.want)
                        .position(|(a, b)| a != b)
                        .unwrap_or(0);
                    return Err(fail(
                        &mut nics,
                        format!(
                            "{name}: the data where it landed differs from byte {at} (got {:02x?}, want {:02x?})",
                            &got[at..(at + 8).min(got.len())],
                            &p.want[at..(at + 8).min(p.want.len())]
                        ),
                    ));
                }
                latencies.push(now - p.posted);
                bytes += p.wr.len as u64;
                done += 1;
                r.done += 1;
                last_done = now;
                bar.set(done);
            } else {
                let Some(w) = r.want_recv.pop_front() else {
                    return Err(fail(
                        &mut nics,
                        format!(
                            "NIC {} QP {q}: a receive completion nobody sent: {c:?}",
                            nic_name(i)
                        ),
                    ));
                };
                let name = format!("NIC {} QP {q} receive for message {}", nic_name(i), w.m);
                if !c.ok || c.byte_len != w.len || c.imm != w.imm || c.wr_id != r.recv_done {
                    return Err(fail(
                        &mut nics,
                        format!(
                            "{name}: completion {c:?}, want {} bytes, imm {:?}, wr_id {}",
                            w.len, w.imm, r.recv_done
                        ),
                    ));
                }
                if let Some(data) = &w.data {
                    let va = r.slots.rcv
                        + (r.recv_done % nslots) * stride
                        + recv_offset(odd, r.recv_done);
                    if nics[i].read(va, data.len()) != *data {
                        return Err(fail(
                            &mut nics,
                            format!("{name}: the received bytes differ"),
                        ));
                    }
                }
                r.recv_done += 1;
                r.recv_credits.push_back(now + sc.recv_delay);
            }
        }
        for n in nics.iter() {
            let e = n.errors();
            if !e.is_empty() {
                return Err(format!(
                    "NIC {}: {}; oldest message outstanding: {}",
                    n.name(),
                    e.join("; "),
                    oldest(&flows)
                ));
            }
        }
        let all = done == total
            && flows
                .iter()
                .all(|f| f.qs.iter().all(|r| r.want_recv.is_empty()));
        if all && quiet_until.is_none() {
            quiet_until = Some(now + 4 * sc.link.latency + 20_000);
        }
        if !all && now - last_progress >= sc.hang_cycles {
            return Err(fail(
                &mut nics,
                format!(
                    "hang: no completion for {} cycles at cycle {now}; {done} of {total} messages done; oldest outstanding: {}",
                    sc.hang_cycles,
                    oldest(&flows)
                ),
            ));
        }
    }
    bar.finish();
    // The end: nothing in flight, atomics' final values, no stray writes.
    for n in nics.iter() {
        if !n.idle() {
            return Err(format!(
                "NIC {}: traffic left after the quiet period",
                n.name()
            ));
        }
    }
    for f in &flows {
        for (k, r) in f.qs.iter().enumerate() {
            let got = u64::from_le_bytes(nics[f.rsp].read(r.slots.rem_at, 8).try_into().unwrap());
            if got != r.atomic {
                return Err(format!(
                    "NIC {} QP {}: the atomic word holds {got:#x}, in-order execution gives {:#x}",
                    nic_name(f.rsp),
                    f.qp0 + k as u32,
                    r.atomic
                ));
            }
        }
    }
    if unroutable > 0 {
        return Err(format!("{unroutable} frames to a MAC address no NIC has"));
    }
    let allowed = |va: u64| {
        let r = Region::of(va);
        va >= r.va_base() && va < r.va_base() + lay.used[r as usize]
    };
    for n in nics.iter() {
        if let Some(bad) = n.stray_writes(&lay, &allowed) {
            if !bad.is_empty() {
                return Err(format!(
                    "NIC {}: {} bytes written outside the registered buffers, first at {:#x}",
                    n.name(),
                    bad.len(),
                    bad[0]
                ));
            }
        }
    }
    latencies.sort_unstable();
    for (i, n) in nics.iter().enumerate() {
        out.rx[i] = n.rx_log().to_vec();
    }
    let report = Report {
        scenario: format!(
            "roce-sim run: --test {} --size {} --iters {} --qps {}{}{}{} --depth {}{} --pmtu {} \
             --a {} --b {} --latency {} --bandwidth {} --drop {} --dup {} --reorder {} --corrupt {}{} --seed {}",
            sc.test.name(),
            sc.size,
            sc.iters,
            sc.qps,
            if sc.imm { " --imm" } else { "" },
            if sc.bidir { " --bidir" } else { "" },
            if sc.nics > 2 {
                format!(" --nics {} --pattern {:?}", sc.nics, sc.pattern).to_lowercase()
            } else {
                String::new()
            },
            sc.depth,
            if sc.recv_depth != 2 * sc.depth || sc.recv_delay > 0 {
                format!(" --recv-depth {} --recv-delay {}", sc.recv_depth, sc.recv_delay)
            } else {
                String::new()
            },
            sc.pmtu.bytes(),
            engine_name(sc.engines[0]),
            engine_name(sc.engines[1]),
            sc.link.latency,
            sc.link.bytes_per_cycle,
            ppm_pct(sc.link.drop_ppm),
            ppm_pct(sc.link.dup_ppm),
            ppm_pct(sc.link.reorder_ppm),
            ppm_pct(sc.link.corrupt_ppm),
            sc.link
                .ecn_threshold
                .map_or(String::new(), |t| format!(" --ecn-threshold {t}")),
            sc.seed
        ),
        messages: done,
        bytes,
        cycles: last_done - first_post.unwrap_or(0),
        latencies,
        links: links
            .iter()
            .enumerate()
            .map(|(j, l)| (nic_name(j), l.st))
            .collect(),
        nics: nics
            .iter_mut()
            .map(|n| (n.name().to_string(), n.engine(), n.counters()))
            .collect(),
        clock_mhz: sc.clock_mhz,
        line_bytes_per_cycle: sc.link.bytes_per_cycle * payload_sinks(sc.test, &flows) as f64,
        wall_s: wall.elapsed().as_secs_f64(),
    };
    Ok((report, out))
}

/// An engine's name on the command line.
pub fn engine_name(e: Engine) -> &'static str {
    match e {
        Engine::Hw => "hw",
        Engine::Model => "model",
        Engine::Nic => "nic",
    }
}

/// Parts per million as a percentage string.
fn ppm_pct(ppm: u32) -> String {
    format!("{}%", ppm as f64 / 10_000.0)
}

/// A progress bar on stderr (only when asked, e.g. when stderr is a
/// terminal).
struct Progress {
    on: bool,
    total: u64,
    shown: u64,
}

impl Progress {
    fn new(on: bool, total: u64) -> Progress {
        Progress {
            on,
            total,
            shown: u64::MAX,
        }
    }
    fn set(&mut self, done: u64) {
        if !self.on {
            return;
        }
        let pct = done * 100 / self.total.max(1);
        if pct != self.shown {
            self.shown = pct;
            let w = (pct / 2) as usize;
            eprint!(
                "\r[{}{}] {pct:3}% {done}/{} messages",
                "#".repeat(w),
                " ".repeat(50 - w),
                self.total
            );
        }
    }
    fn finish(&self) {
        if self.on {
            eprintln!();
        }
    }
}
