//! Bus-functional models: a seeded packet source with random idle cycles
//! and a seeded packet sink with random backpressure.
//!
//! Both follow one cycle discipline, which every bench uses (and
//! [`stream_cycle!`](crate::stream_cycle) writes out):
//!
//! ```text
//! src.drive(&mut dut.s_axis());      // inputs for this cycle
//! sink.drive(&mut dut.m_axis());
//! dut.eval();                        // settle
//! src.handshake(&dut.s_axis());      // what the rising edge will take
//! sink.handshake(&dut.m_axis());
//! dut.tick();                        // the edge
//! ```
//!
//! The sink checks the AXI-Stream rules on what it receives: a beat once
//! offered stays unchanged until taken, and `tkeep` is packed (all lanes on
//! every beat but the last, `2^n - 1` on the last). Breaches are recorded in
//! [`PacketSink::violations`], never ignored.

use crate::axis::{full_keep, Beat, StreamInPort, StreamOutPort};
use crate::rng::Rng;
use std::collections::VecDeque;

/// A packet as the sink reassembles it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    pub data: Vec<u8>,
    /// OR of `tuser` over the packet's beats.
    pub user: bool,
}

#[derive(Clone, Debug)]
struct Queued {
    beat: Beat,
    first: bool,
}

/// Sends queued packets one beat at a time, idling at random between beats.
#[derive(Debug)]
pub struct PacketSource {
    lanes: usize,
    rng: Rng,
    idle_permille: u32,
    queue: VecDeque<Queued>,
    held: Option<Queued>,
    /// Beats taken by the model.
    pub beats_sent: u64,
    /// Packets whose last beat was taken.
    pub packets_sent: u64,
}

impl PacketSource {
    /// `lanes` bytes per beat; an idle cycle is inserted before a beat with
    /// probability `idle_permille / 1000`.
    pub fn new(lanes: usize, seed: u64, idle_permille: u32) -> Self {
        assert!((1..=64).contains(&lanes), "lanes {lanes} out of 1..=64");
        PacketSource {
            lanes,
            rng: Rng::new(seed),
            idle_permille,
            queue: VecDeque::new(),
            held: None,
            beats_sent: 0,
            packets_sent: 0,
        }
    }

    pub fn set_idle(&mut self, permille: u32) {
        self.idle_permille = permille;
    }

    /// Queue a packet (at least one byte). Lanes past the end of the last
    /// beat carry random bytes, as a real source may.
    pub fn push(&mut self, data: &[u8]) {
        self.push_with_user(data, false);
    }

    /// Queue a packet whose last beat carries `tuser = user`.
    pub fn push_with_user(&mut self, data: &[u8], user: bool) {
        assert!(
            !data.is_empty(),
            "a stream packet carries at least one byte"
        );
        let beats = data.len().div_ceil(self.lanes);
        for (i, chunk) in data.chunks(self.lanes).enumerate() {
            let mut bytes = chunk.to_vec();
            while bytes.len() < self.lanes {
                bytes.push(self.rng.next_u64() as u8);
            }
            let last = i + 1 == beats;
            self.queue.push_back(Queued {
                beat: Beat {
                    data: bytes,
                    keep: full_keep(chunk.len()),
                    last,
                    user: user && last,
                },
                first: i == 0,
            });
        }
    }

    /// Queue beats exactly as given (for malformed-input tests). The first
    /// beat after a `last` one starts a packet.
    pub fn push_beats(&mut self, beats: &[Beat]) {
        let mut first = self
            .queue
            .back()
            .map(|q| q.beat.last)
            .unwrap_or_else(|| self.held.as_ref().is_none_or(|h| h.beat.last));
        for b in beats {
            assert_eq!(b.data.len(), self.lanes, "beat width");
            self.queue.push_back(Queued {
                beat: b.clone(),
                first,
            });
            first = b.last;
        }
    }

    /// Beats queued and not yet taken.
    pub fn backlog(&self) -> usize {
        self.queue.len() + self.held.is_some() as usize
    }

    /// True when every queued beat has been taken.
    pub fn is_done(&self) -> bool {
        self.backlog() == 0
    }

    /// Is the beat on the wire now the first of its packet? (For sidebands
    /// sampled with the first beat.)
    pub fn presenting_first(&self) -> bool {
        self.held.as_ref().is_some_and(|q| q.first)
    }

    /// The beat on the wire now, if any.
    pub fn presenting(&self) -> Option<&Beat> {
        self.held.as_ref().map(|q| &q.beat)
    }

    /// Choose this cycle's beat (holding an offered one until it is taken)
    /// and drive it.
    pub fn drive(&mut self, port: &mut impl StreamInPort) {
        assert_eq!(port.bytes(), self.lanes, "source and port widths differ");
        if self.held.is_none() && !self.queue.is_empty() && !self.rng.chance(self.idle_permille) {
            self.held = self.queue.pop_front();
        }
        port.drive(self.held.as_ref().map(|q| &q.beat));
    }

    /// After `eval()`: if the model is ready, the offered beat is taken at
    /// the coming edge. Returns the beat taken.
    pub fn handshake(&mut self, port: &impl StreamInPort) -> Option<Beat> {
        if self.held.is_some() && port.ready() {
            let q = self.held.take().unwrap();
            self.beats_sent += 1;
            if q.beat.last {
                self.packets_sent += 1;
            }
            Some(q.beat)
        } else {
            None
        }
    }
}

/// Collects packets, stalling `tready` at random, and checks the stream
/// rules on everything it sees.
#[derive(Debug)]
pub struct PacketSink {
    lanes: usize,
    rng: Rng,
    stall_permille: u32,
    ready: bool,
    current: Vec<u8>,
    current_user: bool,
    offered: Option<Beat>,
    cycle: u64,
    /// Completed packets, oldest first.
    pub packets: VecDeque<Packet>,
    /// Beats taken.
    pub beats: u64,
    /// Stream rule breaches seen, with the cycle they were seen in.
    pub violations: Vec<String>,
}

impl PacketSink {
    /// `tready` is low in a cycle with probability `stall_permille / 1000`.
    pub fn new(lanes: usize, seed: u64, stall_permille: u32) -> Self {
        PacketSink {
            lanes,
            rng: Rng::new(seed),
            stall_permille,
            ready: false,
            current: Vec::new(),
            current_user: false,
            offered: None,
            cycle: 0,
            packets: VecDeque::new(),
            beats: 0,
            violations: Vec::new(),
        }
    }

    pub fn set_stall(&mut self, permille: u32) {
        self.stall_permille = permille;
    }

    /// Drive this cycle's `tready`.
    pub fn drive(&mut self, port: &mut impl StreamOutPort) {
        assert_eq!(port.bytes(), self.lanes, "sink and port widths differ");
        self.ready = !self.rng.chance(self.stall_permille);
        port.set_ready(self.ready);
    }

    /// After `eval()`: take the beat on offer if ready. Returns it.
    pub fn handshake(&mut self, port: &impl StreamOutPort) -> Option<Beat> {
        let beat = port.peek();
        if let Some(prev) = self.offered.take() {
            if beat.as_ref() != Some(&prev) {
                self.violations.push(format!(
                    "cycle {}: beat offered and not taken changed or vanished: {prev:?} -> {beat:?}",
                    self.cycle
                ));
            }
        }
        self.cycle += 1;
        let beat = beat?;
        if !self.ready {
            self.offered = Some(beat);
            return None;
        }
        if !beat.keep_is_packed(self.lanes) {
            self.violations.push(format!(
                "cycle {}: tkeep {:#x} not packed (last = {})",
                self.cycle - 1,
                beat.keep,
                beat.last
            ));
        }
        self.beats += 1;
        self.current.extend(beat.kept());
        self.current_user |= beat.user;
        if beat.last {
            self.packets.push_back(Packet {
                data: std::mem::take(&mut self.current),
                user: std::mem::replace(&mut self.current_user, false),
            });
        }
        Some(beat)
    }
}

/// One bench cycle between a source and a sink on two stream ports of a
/// model: drive both, settle, sample both handshakes, clock. Evaluates to
/// `(beat taken from the source, beat delivered to the sink)`.
///
/// ```text
/// let (sent, got) = roce_sim::stream_cycle!(dut, src => s_axis, sink => m_axis);
/// ```
#[macro_export]
macro_rules! stream_cycle {
    ($dut:expr, $src:expr => $input:ident, $sink:expr => $output:ident) => {{
        $src.drive(&mut $dut.$input());
        $sink.drive(&mut $dut.$output());
        $dut.eval();
        let sent = $src.handshake(&$dut.$input());
        let got = $sink.handshake(&$dut.$output());
        $dut.tick();
        (sent, got)
    }};
}
