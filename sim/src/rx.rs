//! Driving the `roce_rx` hardware parser: one trait over its Verilator
//! models (W = 64, 128, 256, 512), its descriptor as a `roce-wire` [`FrameRepr`] (so
//! hardware and model print the same DESIGN §7 line), and a runner that
//! streams frames through it with random idle cycles and backpressure.

use crate::axis::StreamInPort;
use crate::bfm::{PacketSink, PacketSource};
use crate::models::{RoceRxW128, RoceRxW256, RoceRxW512, RoceRxW64};
use crate::rng::Rng;
use roce_wire::aeth::Syndrome;
use roce_wire::ext::{AethRepr, AtomicAckEthRepr, AtomicEthRepr, DethRepr, RethRepr};
use roce_wire::{
    BthRepr, DropReason, EthernetRepr, ExtHeaders, ExtKind, FrameRepr, IpRepr, Ipv4Repr, Ipv6Repr,
    Opcode, Psn, UdpRepr,
};

/// One descriptor as `m_hdr` presents it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// `Err(reason)` for a dropped frame.
    pub verdict: Result<(), DropReason>,
    /// The fields (meaningful when accepted).
    pub repr: FrameRepr,
}

impl Descriptor {
    /// The verdict as `roce_wire::json::Line` wants it.
    pub fn line_verdict(&self) -> Result<&FrameRepr, DropReason> {
        self.verdict.map(|_| &self.repr)
    }
}

/// What the benches need from a `roce_rx` model.
pub trait RxDut {
    fn lanes(&mut self) -> usize;
    fn set_rst(&mut self, v: bool);
    fn eval_(&mut self);
    fn tick_(&mut self);
    fn in_ready(&self) -> bool;
    fn src_drive(&mut self, src: &mut PacketSource);
    fn src_handshake(&mut self, src: &mut PacketSource) -> bool;
    fn sink_drive(&mut self, sink: &mut PacketSink);
    fn sink_handshake(&mut self, sink: &mut PacketSink);
    fn set_hdr_ready(&mut self, v: bool);
    fn hdr_valid(&self) -> bool;
    fn descriptor(&self) -> Descriptor;
    /// Drops per reason (`DropReason::ALL` order), then accepts.
    fn counters(&self) -> [u64; 10];
    /// Cycles from a frame's last beat in to its descriptor out, on an idle
    /// parser (the build's published `LATENCY`).
    fn latency(&self) -> usize;
}

macro_rules! rx_dut {
    ($t:ty) => {
        impl RxDut for $t {
            fn lanes(&mut self) -> usize {
                self.s_axis().bytes()
            }
            fn set_rst(&mut self, v: bool) {
                self.set_reset(v)
            }
            fn eval_(&mut self) {
                self.eval()
            }
            fn tick_(&mut self) {
                self.tick()
            }
            fn in_ready(&self) -> bool {
                self.get_s_axis_tready()
            }
            fn src_drive(&mut self, src: &mut PacketSource) {
                src.drive(&mut self.s_axis())
            }
            fn src_handshake(&mut self, src: &mut PacketSource) -> bool {
                src.handshake(&self.s_axis()).is_some()
            }
            fn sink_drive(&mut self, sink: &mut PacketSink) {
                sink.drive(&mut self.m_axis())
            }
            fn sink_handshake(&mut self, sink: &mut PacketSink) {
                sink.handshake(&self.m_axis());
            }
            fn set_hdr_ready(&mut self, v: bool) {
                self.set_m_hdr_ready(v)
            }
            fn hdr_valid(&self) -> bool {
                self.get_m_hdr_valid()
            }
            fn descriptor(&self) -> Descriptor {
                let reason = self.get_m_hdr_reason() as usize;
                let verdict = if self.get_m_hdr_drop() {
                    Err(*DropReason::ALL.get(reason).expect("a drop reason code"))
                } else {
                    Ok(())
                };
                let has = |k: ExtKind| (self.get_m_hdr_ext() >> (k as u32)) & 1 == 1;
                let ext = ExtHeaders {
                    reth: has(ExtKind::Reth).then(|| RethRepr {
                        va: self.get_m_hdr_reth_va(),
                        rkey: self.get_m_hdr_reth_rkey(),
                        dma_len: self.get_m_hdr_reth_dmalen(),
                    }),
                    aeth: has(ExtKind::Aeth).then(|| AethRepr {
                        syndrome: Syndrome::from_byte(self.get_m_hdr_aeth_syndrome() as u8),
                        msn: self.get_m_hdr_aeth_msn(),
                    }),
                    immdt: has(ExtKind::ImmDt).then(|| self.get_m_hdr_immdt()),
                    ieth: has(ExtKind::Ieth).then(|| self.get_m_hdr_ieth()),
                    atomic_eth: has(ExtKind::AtomicEth).then(|| AtomicEthRepr {
                        va: self.get_m_hdr_atomic_va(),
                        rkey: self.get_m_hdr_atomic_rkey(),
                        swap_add: self.get_m_hdr_atomic_swap_add(),
                        compare: self.get_m_hdr_atomic_compare(),
                    }),
                    atomic_ack_eth: has(ExtKind::AtomicAckEth).then(|| AtomicAckEthRepr {
                        orig_remote_data: self.get_m_hdr_atomicack_orig(),
                    }),
                    deth: has(ExtKind::Deth).then(|| DethRepr {
                        qkey: self.get_m_hdr_deth_qkey(),
                        src_qp: self.get_m_hdr_deth_srcqp(),
                    }),
                };
                let ip = if self.get_m_hdr_ipv6() {
                    IpRepr::V6(Ipv6Repr::default())
                } else {
                    IpRepr::V4(Ipv4Repr::default())
                };
                Descriptor {
                    verdict,
                    repr: FrameRepr {
                        eth: EthernetRepr::default(),
                        ip,
                        udp: UdpRepr {
                            src_port: self.get_m_hdr_src_port() as u16,
                            dst_port: roce_wire::udp::ROCE_V2_PORT,
                            checksum: 0,
                            payload_len: 0,
                        },
                        bth: BthRepr {
                            opcode: Opcode(self.get_m_hdr_opcode() as u8),
                            solicited: self.get_m_hdr_se(),
                            mig_req: self.get_m_hdr_m(),
                            pad_count: self.get_m_hdr_padcnt() as u8,
                            tver: self.get_m_hdr_tver() as u8,
                            pkey: self.get_m_hdr_pkey() as u16,
                            fecn: self.get_m_hdr_fecn(),
                            becn: self.get_m_hdr_becn(),
                            dest_qp: self.get_m_hdr_destqp(),
                            ack_req: self.get_m_hdr_ackreq(),
                            psn: Psn::new(self.get_m_hdr_psn()),
                        },
                        ext,
                        payload_len: self.get_m_hdr_payload_len() as usize,
                    },
                }
            }
            fn latency(&self) -> usize {
                <$t>::LATENCY.expect("the roce_rx build publishes its latency")
            }
            fn counters(&self) -> [u64; 10] {
                [
                    self.get_cnt_not_roce() as u64,
                    self.get_cnt_truncated() as u64,
                    self.get_cnt_bad_ip_checksum() as u64,
                    self.get_cnt_ip_options() as u64,
                    self.get_cnt_bad_length() as u64,
                    self.get_cnt_bad_tver() as u64,
                    self.get_cnt_unknown_opcode() as u64,
                    self.get_cnt_bad_padcnt() as u64,
                    self.get_cnt_bad_icrc() as u64,
                    self.get_cnt_accept() as u64,
                ]
            }
        }
    };
}
models_by_width!("roce_rx", RxDut, rx_dut: 64 => RoceRxW64, 128 => RoceRxW128, 256 => RoceRxW256, 512 => RoceRxW512);

/// Random idle and stall rates, per mille.
#[derive(Copy, Clone, Debug, Default)]
pub struct Pace {
    /// Idle cycles on `s_axis`.
    pub idle: u32,
    /// Stalls on `m_hdr_ready`.
    pub hdr_stall: u32,
    /// Stalls on `m_axis.tready`.
    pub pay_stall: u32,
    /// `m_hdr_ready` held low for the run's first `hdr_hold` cycles.
    pub hdr_hold: u64,
}

/// What a run produced.
#[derive(Debug, Default)]
pub struct RunResult {
    /// One descriptor per frame, in order.
    pub descriptors: Vec<Descriptor>,
    /// Payload packets, in order (one per accepted frame with payload).
    pub payloads: Vec<Vec<u8>>,
    /// Cycles from the first beat offered to the last descriptor.
    pub cycles: u64,
    /// Cycles with a beat offered and `s_axis.tready` low.
    pub input_stalls: u64,
    /// Cycle (from the run's start) at which each input beat was taken.
    pub in_cycle: Vec<u64>,
    /// Cycle (from the run's start) at which each descriptor was taken.
    pub hdr_cycle: Vec<u64>,
    /// Stream rule breaches on `m_axis`.
    pub violations: Vec<String>,
    /// Counters at the end.
    pub counters: [u64; 10],
}

/// Sends `frames` back to back (with `pace`) and collects everything.
/// Panics if the parser stops making progress.
pub fn run(dut: &mut dyn RxDut, frames: &[Vec<u8>], pace: Pace, seed: u64) -> RunResult {
    let lanes = dut.lanes();
    let mut rng = Rng::new(seed ^ 0x5eed);
    let mut src = PacketSource::new(lanes, seed, pace.idle);
    let mut sink = PacketSink::new(lanes, seed.wrapping_add(1), pace.pay_stall);
    for f in frames {
        src.push(f);
    }
    dut.set_rst(true);
    for _ in 0..3 {
        dut.eval_();
        dut.tick_();
    }
    dut.set_rst(false);
    // One cycle for the registered `s_axis.tready` to come up.
    dut.eval_();
    dut.tick_();
    let mut r = RunResult::default();
    let mut idle_for = 0u64;
    let mut started = false;
    loop {
        dut.src_drive(&mut src);
        dut.sink_drive(&mut sink);
        let hdr_ready = r.cycles >= pace.hdr_hold && !rng.chance(pace.hdr_stall);
        dut.set_hdr_ready(hdr_ready);
        dut.eval_();
        let offered = src.presenting().is_some();
        started |= offered;
        if offered && !dut.in_ready() && started {
            r.input_stalls += 1;
        }
        let took = dut.src_handshake(&mut src);
        if took {
            r.in_cycle.push(r.cycles);
        }
        dut.sink_handshake(&mut sink);
        let mut progress = took;
        if dut.hdr_valid() && hdr_ready {
            r.descriptors.push(dut.descriptor());
            r.hdr_cycle.push(r.cycles);
            progress = true;
        }
        while let Some(p) = sink.packets.pop_front() {
            r.payloads.push(p.data);
            progress = true;
        }
        dut.tick_();
        if started {
            r.cycles += 1;
        }
        let want_payloads = r
            .descriptors
            .iter()
            .filter(|d| d.verdict.is_ok() && d.repr.payload_len > 0)
            .count();
        if r.descriptors.len() >= frames.len() && r.payloads.len() >= want_payloads {
            break;
        }
        idle_for = if progress { 0 } else { idle_for + 1 };
        assert!(
            idle_for < 20_000,
            "roce_rx stuck: {} of {} descriptors, {} payloads, source backlog {}",
            r.descriptors.len(),
            frames.len(),
            r.payloads.len(),
            src.backlog()
        );
    }
    r.violations = sink.violations;
    // Read right after the last take: a taken descriptor is already counted.
    r.counters = dut.counters();
    r
}

/// Compares a run with `roce_wire::Frame::parse`, frame by frame: the
/// DESIGN §7 line of every descriptor, every accepted payload, the stream
/// rules on `m_axis`, and the counters against the model's tallies. Returns
/// the model's counts (drops in `DropReason::ALL` order, then accepts), or
/// the first disagreement as `(frame index, message)`.
pub fn compare(frames: &[Vec<u8>], r: &RunResult) -> Result<[u64; 10], (Option<usize>, String)> {
    use roce_wire::json::Line;
    if let Some(v) = r.violations.first() {
        return Err((None, format!("m_axis stream rule: {v}")));
    }
    if r.descriptors.len() != frames.len() {
        return Err((
            None,
            format!(
                "{} descriptors for {} frames",
                r.descriptors.len(),
                frames.len()
            ),
        ));
    }
    let mut counts = [0u64; 10];
    let mut payloads = r.payloads.iter();
    for (i, (f, d)) in frames.iter().zip(&r.descriptors).enumerate() {
        let model = roce_wire::Frame::parse(f);
        let line = |verdict| {
            Line {
                frame: i as u64 + 1,
                verdict,
            }
            .to_string()
        };
        let want = line(model.as_ref().map(|m| &m.repr).map_err(|e| *e));
        let got = line(d.line_verdict());
        if got != want {
            return Err((Some(i), format!("hardware {got}\n   model {want}")));
        }
        match &model {
            Ok(m) => {
                counts[9] += 1;
                if !m.payload.is_empty() {
                    match payloads.next() {
                        Some(p) if &p[..] == m.payload => {}
                        Some(p) => {
                            return Err((
                                Some(i),
                                format!(
                                    "payload differs ({} bytes, model {})",
                                    p.len(),
                                    m.payload.len()
                                ),
                            ))
                        }
                        None => return Err((Some(i), "payload missing".into())),
                    }
                }
            }
            Err(e) => counts[e.index()] += 1,
        }
    }
    if payloads.next().is_some() {
        return Err((None, "a payload of no frame".into()));
    }
    if r.counters != counts {
        return Err((
            None,
            format!(
                "counters {:?}, model {counts:?} (DropReason::ALL order, then accepts)",
                r.counters
            ),
        ));
    }
    Ok(counts)
}

/// `n` valid frames of exactly `len` bytes (RC SEND ONLY, IPv4, no tag;
/// Ethernet padding after the datagram where the pad rule needs it).
pub fn sized_frames(len: usize, n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut g = crate::traffic::FrameGen::new(seed);
    g.ipv6_permille = 0;
    g.vlan_permille = 0;
    let row = roce_wire::opcode::TABLE
        .iter()
        .position(|i| i.name == "RC_SEND_ONLY")
        .unwrap();
    (0..n)
        .map(|_| {
            let (repr, _) = g.frame_with_opcode(row);
            let overhead = repr.frame_len() - repr.payload_len - repr.pad_len();
            let payload_len = len.saturating_sub(overhead) & !3;
            let payload = g.rng().bytes(payload_len);
            let mut f = repr.to_bytes(&payload).unwrap();
            assert!(f.len() <= len.max(60), "{len}");
            f.resize(len.max(f.len()), 0);
            f
        })
        .collect()
}

/// `roce-sim bench datapath`: back-to-back frames of each size through the
/// receive parser at full rate; a table of cycles per frame against the
/// ideal `ceil(len / (W/8))`, input stall cycles, and latency (last beat in
/// to descriptor out, on an idle parser).
pub fn bench(width: usize) -> String {
    use std::fmt::Write as _;
    let lanes = width / 8;
    let mut s = format!(
        "roce_rx W={width}: {} frames per size, back to back, no idle, no backpressure\n",
        BENCH_FRAMES
    );
    s.push_str("| frame bytes | ideal cycles/frame | measured cycles/frame | input stall cycles | latency (cycles) |\n|---|---|---|---|---|\n");
    for len in [64, 256, 1024, 4096, 9000] {
        let frames = sized_frames(len, BENCH_FRAMES, 3);
        let ideal = len.div_ceil(lanes);
        let r = run(&mut *dut(width), &frames, Pace::default(), 1);
        assert!(r.descriptors.iter().all(|d| d.verdict.is_ok()));
        // Steady state: from the first descriptor to the last.
        let n = r.hdr_cycle.len() as u64;
        let per = (r.hdr_cycle[n as usize - 1] - r.hdr_cycle[0]) as f64 / (n - 1) as f64;
        // Latency: one frame alone; its last beat enters at cycle beats - 1.
        let one = run(&mut *dut(width), &frames[..1], Pace::default(), 1);
        let latency = one.hdr_cycle[0] + 1 - ideal as u64;
        writeln!(
            s,
            "| {len} | {ideal} | {per:.2} | {} | {latency} |",
            r.input_stalls
        )
        .unwrap();
    }
    s
}

/// Frames per size in [`bench`].
pub const BENCH_FRAMES: usize = 200;
