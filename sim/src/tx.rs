//! The TX frame builder (`roce_tx`) from Rust: descriptor driving, a runner
//! with random pacing, the datapath bench and hardware `emit`.

use crate::bfm::{PacketSink, PacketSource};
use crate::model::Model;
use crate::models::{RoceTxW128, RoceTxW256, RoceTxW512, RoceTxW64};
use crate::rng::Rng;
use roce_wire::FrameRepr;

#[doc(hidden)]
pub use paste as __paste;

/// A MAC address as the 48-bit port value.
pub fn mac(m: [u8; 6]) -> u64 {
    m.iter().fold(0, |a, &b| a << 8 | b as u64)
}

/// A 128-bit port value as the bridge's little-endian words.
pub fn words128(v: u128) -> [u32; 4] {
    [
        v as u32,
        (v >> 32) as u32,
        (v >> 64) as u32,
        (v >> 96) as u32,
    ]
}

/// Sets the descriptor ports from `repr` (payload length `pl`); fields the
/// opcode does not use get garbage from `junk`.
#[macro_export]
macro_rules! drive_desc {
    ($dut:expr, $set:ident, $repr:expr, $pl:expr, $junk:expr) => {{
        $crate::tx::__paste::paste! {
            let dut = &mut $dut;
            let repr: &roce_wire::FrameRepr = $repr;
            let pl: usize = $pl;
            let junk: &mut $crate::rng::Rng = $junk;
            let e = &repr.ext;
            dut.[<$set dst_mac>]($crate::tx::mac(repr.eth.dst) as _);
            dut.[<$set src_mac>]($crate::tx::mac(repr.eth.src) as _);
            dut.[<$set vlan>](repr.eth.vlan.is_some());
            dut.[<$set vlan_tci>](repr.eth.vlan.map_or(junk.next_u32() as u16, |t| t.tci()) as _);
            match repr.ip {
                roce_wire::IpRepr::V4(ip) => {
                    dut.[<$set ipv6>](false);
                    dut.[<$set tos>](ip.tos as _);
                    dut.[<$set ttl>](ip.ttl as _);
                    dut.[<$set flow_label>]((junk.next_u32() & 0xF_FFFF) as _);
                    dut.[<$set ip_ident>](ip.ident as _);
                    dut.[<$set ip_df>](ip.dont_frag);
                    dut.[<$set ip_src>](&$crate::tx::words128(
                        u32::from_be_bytes(ip.src) as u128 | (junk.next_u64() as u128) << 64,
                    ));
                    dut.[<$set ip_dst>](&$crate::tx::words128(
                        u32::from_be_bytes(ip.dst) as u128 | (junk.next_u64() as u128) << 32,
                    ));
                }
                roce_wire::IpRepr::V6(ip) => {
                    dut.[<$set ipv6>](true);
                    dut.[<$set tos>](ip.traffic_class as _);
                    dut.[<$set ttl>](ip.hop_limit as _);
                    dut.[<$set flow_label>](ip.flow_label as _);
                    dut.[<$set ip_ident>](junk.next_u32() as u16 as _);
                    dut.[<$set ip_df>](junk.chance(500));
                    dut.[<$set ip_src>](&$crate::tx::words128(u128::from_be_bytes(ip.src)));
                    dut.[<$set ip_dst>](&$crate::tx::words128(u128::from_be_bytes(ip.dst)));
                }
            }
            let b = &repr.bth;
            dut.[<$set udp_src_port>](repr.udp.src_port as _);
            dut.[<$set opcode>](b.opcode.0 as _);
            dut.[<$set se>](b.solicited);
            dut.[<$set mig>](b.mig_req);
            dut.[<$set pkey>](b.pkey as _);
            dut.[<$set fecn>](b.fecn);
            dut.[<$set becn>](b.becn);
            dut.[<$set dest_qp>](b.dest_qp as _);
            dut.[<$set ack_req>](b.ack_req);
            dut.[<$set psn>](b.psn.value() as _);
            dut.[<$set payload_len>](pl as _);
            let j = &mut *junk;
            let reth = e.reth.unwrap_or(roce_wire::RethRepr {
                va: j.next_u64(),
                rkey: j.next_u32(),
                dma_len: j.next_u32(),
            });
            dut.[<$set reth_va>](reth.va as _);
            dut.[<$set reth_rkey>](reth.rkey as _);
            dut.[<$set reth_dma_len>](reth.dma_len as _);
            let (syn, msn) = e
                .aeth
                .map_or((j.next_u32() as u8, j.next_u32() & 0xFF_FFFF), |a| {
                    (a.syndrome.to_byte(), a.msn)
                });
            dut.[<$set aeth_syndrome>](syn as _);
            dut.[<$set aeth_msn>](msn as _);
            dut.[<$set immdt>](e.immdt.unwrap_or(j.next_u32()) as _);
            dut.[<$set ieth>](e.ieth.unwrap_or(j.next_u32()) as _);
            let at = e.atomic_eth.unwrap_or(roce_wire::AtomicEthRepr {
                va: j.next_u64(),
                rkey: j.next_u32(),
                swap_add: j.next_u64(),
                compare: j.next_u64(),
            });
            dut.[<$set atomic_va>](at.va as _);
            dut.[<$set atomic_rkey>](at.rkey as _);
            dut.[<$set atomic_swap_add>](at.swap_add as _);
            dut.[<$set atomic_compare>](at.compare as _);
            dut.[<$set atomic_ack_data>](
                e.atomic_ack_eth
                    .map_or(j.next_u64(), |a| a.orig_remote_data) as _,
            );
            let d = e.deth.unwrap_or(roce_wire::DethRepr {
                qkey: j.next_u32(),
                src_qp: j.next_u32() & 0xFF_FFFF,
            });
            dut.[<$set deth_qkey>](d.qkey as _);
            dut.[<$set deth_src_qp>](d.src_qp as _);
        }
    }};
}
/// A `roce_tx` model of either width, behind one interface.
pub trait TxDut {
    /// Bytes per beat.
    fn lanes(&self) -> usize;
    /// Drive the descriptor ports (unused fields get garbage from `junk`).
    fn set_desc(&mut self, repr: &FrameRepr, payload_len: usize, junk: &mut Rng);
    fn set_hdr_valid(&mut self, v: bool);
    fn hdr_ready(&self) -> bool;
    fn set_rst(&mut self, v: bool);
    fn error_payload(&self) -> bool;
    fn src_drive(&mut self, src: &mut PacketSource);
    fn src_handshake(&mut self, src: &mut PacketSource);
    fn sink_drive(&mut self, sink: &mut PacketSink);
    fn sink_handshake(&mut self, sink: &mut PacketSink) -> bool;
    fn eval_(&mut self);
    fn tick_(&mut self);
}

macro_rules! tx_dut {
    ($m:ident) => {
        impl TxDut for $m {
            fn lanes(&self) -> usize {
                $m::PARAMS.iter().find(|p| p.0 == "K").unwrap().1 as usize
            }
            fn set_desc(&mut self, repr: &FrameRepr, payload_len: usize, junk: &mut Rng) {
                $crate::drive_desc!(*self, set_s_hdr_, repr, payload_len, junk);
            }
            fn set_hdr_valid(&mut self, v: bool) {
                self.set_s_hdr_valid(v)
            }
            fn hdr_ready(&self) -> bool {
                self.get_s_hdr_ready()
            }
            fn set_rst(&mut self, v: bool) {
                self.set_reset(v)
            }
            fn error_payload(&self) -> bool {
                self.get_error_payload()
            }
            fn src_drive(&mut self, src: &mut PacketSource) {
                src.drive(&mut self.s_payload());
            }
            fn src_handshake(&mut self, src: &mut PacketSource) {
                src.handshake(&self.s_payload());
            }
            fn sink_drive(&mut self, sink: &mut PacketSink) {
                sink.drive(&mut self.m_axis());
            }
            fn sink_handshake(&mut self, sink: &mut PacketSink) -> bool {
                sink.handshake(&self.m_axis()).is_some()
            }
            fn eval_(&mut self) {
                Model::eval(self)
            }
            fn tick_(&mut self) {
                Model::tick(self)
            }
        }
    };
}
models_by_width!("roce_tx", TxDut, tx_dut: 64 => RoceTxW64, 128 => RoceTxW128, 256 => RoceTxW256, 512 => RoceTxW512);

/// One frame to send: its headers, the payload packet the stream carries,
/// and the payload length the descriptor announces (normally equal).
#[derive(Clone, Debug)]
pub struct TxFrame {
    pub repr: FrameRepr,
    pub payload: Vec<u8>,
    pub payload_len: usize,
}

impl TxFrame {
    /// A well-formed frame: the descriptor announces the payload's length.
    pub fn new(repr: FrameRepr, payload: Vec<u8>) -> TxFrame {
        let payload_len = payload.len();
        TxFrame {
            repr,
            payload,
            payload_len,
        }
    }

    /// The frame the builder must send: the descriptor's length of payload
    /// (missing bytes zero, extra bytes dropped), and whether it is flagged.
    pub fn expected(&self) -> (Vec<u8>, bool) {
        let has_payload = self.repr.bth.opcode.info().is_some_and(|i| i.has_payload());
        let pl = if has_payload { self.payload_len } else { 0 };
        let mut p = self.payload.clone();
        p.resize(pl, 0);
        (self.repr.to_bytes(&p).expect("emit"), p != self.payload)
    }

    /// Beats of the expected frame on a `k`-lane stream.
    pub fn beats(&self, k: usize) -> u64 {
        self.expected().0.len().div_ceil(k) as u64
    }
}

/// Random idle (descriptors and payload beats) and output backpressure,
/// per mille; `hold`: `m_axis.tready` low for the run's first `hold`
/// cycles, whatever `stall` says; `hdr_idle`: more idle on the descriptor
/// port alone, per mille (a trickle of descriptors leaves the header
/// queue empty at some frames' ends; drawn only when non-zero, so the
/// other runs keep their random sequence).
#[derive(Copy, Clone, Debug, Default)]
pub struct Pace {
    pub idle: u32,
    pub stall: u32,
    pub hold: u64,
    pub hdr_idle: u32,
}

/// What a run produced.
#[derive(Debug, Default)]
pub struct TxRun {
    /// Frames on `m_axis`, in order, with their `tuser`.
    pub frames: Vec<(Vec<u8>, bool)>,
    /// Cycles from the first descriptor offered to the last frame's last beat.
    pub cycles: u64,
    /// For each frame, the cycle its descriptor was taken and the cycles of
    /// its first and last output beats.
    pub taken_at: Vec<u64>,
    pub first_beat_at: Vec<u64>,
    pub last_beat_at: Vec<u64>,
    /// `error_payload` pulses seen.
    pub error_pulses: u64,
    /// Stream rule breaches on `m_axis`.
    pub violations: Vec<String>,
}

/// Sends `frames` through `dut` with `pace`; panics if it stops making
/// progress, or if a frame on `m_axis` runs past the longest frame expected
/// (a block that repeats a beat forever is never idle).
pub fn run(dut: &mut dyn TxDut, frames: &[TxFrame], pace: Pace, seed: u64) -> TxRun {
    let k = dut.lanes();
    let max_beats = frames.iter().map(|f| f.beats(k)).max().unwrap_or(0);
    let mut junk = Rng::new(seed ^ 0x1D1E);
    let mut src = PacketSource::new(k, seed ^ 2, pace.idle);
    let mut sink = PacketSink::new(k, seed ^ 3, pace.stall);
    for f in frames {
        if !f.payload.is_empty() {
            src.push(&f.payload);
        }
    }
    dut.set_rst(true);
    dut.eval_();
    dut.tick_();
    dut.set_rst(false);
    let mut r = TxRun::default();
    let (mut next, mut idle_for, mut in_frame) = (0usize, 0u64, false);
    let mut frame_beats = 0u64;
    while r.frames.len() < frames.len() {
        let offer = next < frames.len()
            && !junk.chance(pace.idle)
            && (pace.hdr_idle == 0 || !junk.chance(pace.hdr_idle));
        if offer {
            dut.set_desc(&frames[next].repr, frames[next].payload_len, &mut junk);
        }
        dut.set_hdr_valid(offer);
        dut.src_drive(&mut src);
        sink.set_stall(if r.cycles < pace.hold {
            1000
        } else {
            pace.stall
        });
        dut.sink_drive(&mut sink);
        dut.eval_();
        let taken = offer && dut.hdr_ready();
        dut.src_handshake(&mut src);
        let beat = dut.sink_handshake(&mut sink);
        if beat && !in_frame {
            r.first_beat_at.push(r.cycles);
            in_frame = true;
        }
        frame_beats += beat as u64;
        assert!(
            frame_beats <= max_beats,
            "roce_tx runs on: frame {} has {frame_beats} beats, more than the longest expected ({max_beats})",
            r.frames.len()
        );
        while let Some(p) = sink.packets.pop_front() {
            r.frames.push((p.data, p.user));
            r.last_beat_at.push(r.cycles);
            in_frame = false;
            frame_beats = 0;
        }
        r.error_pulses += dut.error_payload() as u64;
        dut.tick_();
        if taken {
            r.taken_at.push(r.cycles);
            next += 1;
        }
        r.cycles += 1;
        idle_for = if taken || beat { 0 } else { idle_for + 1 };
        assert!(
            idle_for < 20_000,
            "roce_tx stuck: {} of {} frames out, {} descriptors taken",
            r.frames.len(),
            frames.len(),
            next
        );
    }
    r.violations = sink.violations;
    r
}

/// Builds `frames` (headers and payloads) with the Verilated TX path.
pub fn emit_hw(width: usize, frames: &[(FrameRepr, Vec<u8>)]) -> Vec<Vec<u8>> {
    let frames: Vec<TxFrame> = frames
        .iter()
        .map(|(r, p)| TxFrame::new(*r, p.clone()))
        .collect();
    let r = run(&mut *dut(width), &frames, Pace::default(), 1);
    r.frames.into_iter().map(|(f, _)| f).collect()
}

/// The receive bench's frames of `len` bytes (RC SEND ONLY, IPv4, no tag),
/// as descriptors and payloads. Sizes the 4-byte payload granularity cannot
/// hit come out up to 2 bytes shorter (the RX frames pad them with Ethernet
/// fill, which the builder does not add above 60 bytes).
fn sized(len: usize, n: usize, seed: u64) -> Vec<TxFrame> {
    crate::rx::sized_frames(len, n, seed)
        .iter()
        .map(|b| {
            let f = roce_wire::Frame::parse(b).expect("a valid bench frame");
            TxFrame::new(f.repr, f.payload.to_vec())
        })
        .collect()
}

/// Frames per size in the bench.
pub const BENCH_FRAMES: usize = 200;

/// `roce-sim bench datapath` TX rows: frames of each size back to back at
/// full rate: cycles per frame against the ideal `ceil(len / (W/8))`, and
/// the latency from the descriptor taken to the first beat out (idle TX).
pub fn bench(width: usize) -> String {
    use std::fmt::Write as _;
    let k = width / 8;
    let mut s = format!(
        "roce_tx W={width}: {BENCH_FRAMES} frames per size, back to back, no idle, no backpressure\n\
         | frame bytes | ideal cycles/frame | measured cycles/frame | extra cycles/frame | latency (cycles) |\n|---|---|---|---|---|\n"
    );
    for len in [64, 256, 1024, 4096, 9000] {
        let frames = sized(len, BENCH_FRAMES, 5);
        let wire = frames[0].expected().0.len();
        let ideal = wire.div_ceil(k);
        let r = run(&mut *dut(width), &frames, Pace::default(), 1);
        assert!(r
            .frames
            .iter()
            .zip(&frames)
            .all(|(got, f)| got.0 == f.expected().0));
        // Steady state: first beat of frame 1 to first beat of the last frame.
        let n = frames.len();
        let per = (r.first_beat_at[n - 1] - r.first_beat_at[1]) as f64 / (n - 2) as f64;
        let single = run(&mut *dut(width), &frames[..1], Pace::default(), 2);
        let latency = single.first_beat_at[0] - single.taken_at[0];
        writeln!(
            s,
            "| {wire} | {ideal} | {per:.2} | {:.2} | {latency} |",
            per - ideal as f64
        )
        .unwrap();
    }
    s
}
