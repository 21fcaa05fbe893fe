//! The retransmit buffer (`retx_buf`) from Rust: a port trait over its
//! Verilator models, the reference model the benches check it against (a
//! `VecDeque` of packets per QP, PSNs compared with `roce_wire::Psn`), and
//! a bench that drives the three command ports and the payload stream with
//! random pacing and checks every replayed packet.

use crate::bfm::{PacketSink, PacketSource};
use crate::model::Model;
use crate::models::{RetxBufSmallW512, RetxBufSmallW64, RetxBufW64};
use crate::rng::Rng;
use roce_wire::Psn;
use std::collections::VecDeque;

/// A packet's descriptor as the ports carry it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PktDesc {
    pub qpn: u32,
    pub psn: u32,
    pub len: u32,
    pub meta: u128,
}

/// The block's event counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub stored: u32,
    pub freed: u32,
    pub replayed: u32,
    pub refused: u32,
    pub empty: u32,
}

/// One `retx_buf` model, whatever its build.
pub trait RetxDut {
    fn lanes(&self) -> usize;
    fn slots(&self) -> usize;
    fn qps(&self) -> usize;
    fn slot_bytes(&self) -> usize;
    fn meta_bits(&self) -> usize;
    fn init_cycles(&self) -> usize;
    fn set_rst(&mut self, v: bool);
    fn busy(&self) -> bool;
    fn set_pkt(&mut self, d: Option<&PktDesc>);
    fn pkt_ready(&self) -> bool;
    fn set_ack(&mut self, c: Option<(u32, u32)>);
    fn ack_ready(&self) -> bool;
    fn set_replay(&mut self, c: Option<(u32, u32)>);
    fn replay_ready(&self) -> bool;
    fn set_out_ready(&mut self, v: bool);
    /// The descriptor on `m_pkt_*` while `m_pkt_valid`.
    fn out(&self) -> Option<PktDesc>;
    fn free(&self) -> usize;
    fn counters(&self) -> Counters;
    fn src_drive(&mut self, src: &mut PacketSource);
    fn src_handshake(&mut self, src: &mut PacketSource) -> bool;
    fn sink_drive(&mut self, sink: &mut PacketSink);
    fn sink_handshake(&mut self, sink: &mut PacketSink) -> bool;
    fn eval_(&mut self);
    fn tick_(&mut self);
}

fn param(p: &[(&str, u64)], name: &str) -> usize {
    crate::param(p, name) as usize
}

macro_rules! retx_dut {
    ($m:ident, $set_meta:expr, $get_meta:expr) => {
        impl RetxDut for $m {
            fn lanes(&self) -> usize {
                param($m::PARAMS, "K")
            }
            fn slots(&self) -> usize {
                param($m::PARAMS, "SLOTS")
            }
            fn qps(&self) -> usize {
                param($m::PARAMS, "QPS")
            }
            fn slot_bytes(&self) -> usize {
                param($m::PARAMS, "PMTU")
            }
            fn meta_bits(&self) -> usize {
                param($m::PARAMS, "META")
            }
            fn init_cycles(&self) -> usize {
                param($m::PARAMS, "INIT_CYCLES")
            }
            fn set_rst(&mut self, v: bool) {
                self.set_reset(v)
            }
            fn busy(&self) -> bool {
                self.get_busy()
            }
            fn set_pkt(&mut self, d: Option<&PktDesc>) {
                self.set_s_pkt_valid(d.is_some());
                if let Some(d) = d {
                    self.set_s_pkt_qpn(d.qpn as _);
                    self.set_s_pkt_psn(d.psn as _);
                    self.set_s_pkt_len(d.len as _);
                    #[allow(clippy::redundant_closure_call)]
                    ($set_meta)(self, d.meta);
                }
            }
            fn pkt_ready(&self) -> bool {
                self.get_s_pkt_ready()
            }
            fn set_ack(&mut self, c: Option<(u32, u32)>) {
                self.set_s_ack_valid(c.is_some());
                if let Some((q, p)) = c {
                    self.set_s_ack_qpn(q as _);
                    self.set_s_ack_psn(p as _);
                }
            }
            fn ack_ready(&self) -> bool {
                self.get_s_ack_ready()
            }
            fn set_replay(&mut self, c: Option<(u32, u32)>) {
                self.set_s_replay_valid(c.is_some());
                if let Some((q, p)) = c {
                    self.set_s_replay_qpn(q as _);
                    self.set_s_replay_psn(p as _);
                }
            }
            fn replay_ready(&self) -> bool {
                self.get_s_replay_ready()
            }
            fn set_out_ready(&mut self, v: bool) {
                self.set_m_pkt_ready(v)
            }
            fn out(&self) -> Option<PktDesc> {
                #[allow(clippy::redundant_closure_call)]
                self.get_m_pkt_valid().then(|| PktDesc {
                    qpn: self.get_m_pkt_qpn() as u32,
                    psn: self.get_m_pkt_psn() as u32,
                    len: self.get_m_pkt_len() as u32,
                    meta: ($get_meta)(self),
                })
            }
            fn free(&self) -> usize {
                self.get_m_free() as usize
            }
            fn counters(&self) -> Counters {
                Counters {
                    stored: self.get_cnt_stored() as u32,
                    freed: self.get_cnt_freed() as u32,
                    replayed: self.get_cnt_replayed() as u32,
                    refused: self.get_cnt_refused() as u32,
                    empty: self.get_cnt_empty() as u32,
                }
            }
            fn src_drive(&mut self, src: &mut PacketSource) {
                src.drive(&mut self.s_axis());
            }
            fn src_handshake(&mut self, src: &mut PacketSource) -> bool {
                src.handshake(&self.s_axis()).is_some()
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

retx_dut!(
    RetxBufSmallW64,
    |m: &mut RetxBufSmallW64, v: u128| m.set_s_pkt_meta(v as u64),
    |m: &RetxBufSmallW64| m.get_m_pkt_meta() as u128
);
retx_dut!(
    RetxBufSmallW512,
    |m: &mut RetxBufSmallW512, v: u128| m.set_s_pkt_meta(v as u64),
    |m: &RetxBufSmallW512| m.get_m_pkt_meta() as u128
);
retx_dut!(
    RetxBufW64,
    |m: &mut RetxBufW64, v: u128| m.set_s_pkt_meta(&crate::tx::words128(v)),
    |m: &RetxBufW64| {
        let w = m.get_m_pkt_meta();
        w.iter().rev().fold(0u128, |a, &x| (a << 32) | x as u128)
    }
);

/// The test build (64 QPs, 16 slots of 1024 bytes) at width `width` (64 or
/// 512), or with `default_build` the default one (1024 QPs, 64 slots of
/// 4096 bytes, 128-bit descriptor) at 64 bits.
pub fn dut(width: usize, default_build: bool) -> Box<dyn RetxDut> {
    match (width, default_build) {
        (64, false) => Box::new(RetxBufSmallW64::new()),
        (512, false) => Box::new(RetxBufSmallW512::new()),
        (64, true) => Box::new(RetxBufW64::new()),
        _ => panic!("no retx_buf model at width {width} (default build: {default_build})"),
    }
}

/// A stored packet in the reference model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    pub desc: PktDesc,
    pub payload: Vec<u8>,
}

/// The reference model: one list per QP in PSN order.
#[derive(Clone, Debug)]
pub struct RetxModel {
    pub lists: Vec<VecDeque<Stored>>,
    pub slot_bytes: usize,
    pub counters: Counters,
}

impl RetxModel {
    pub fn new(qps: usize, slot_bytes: usize) -> Self {
        RetxModel {
            lists: vec![VecDeque::new(); qps],
            slot_bytes,
            counters: Counters::default(),
        }
    }

    /// Packets held.
    pub fn held(&self) -> usize {
        self.lists.iter().map(|l| l.len()).sum()
    }

    /// A store: refused (and counted) when longer than a slot.
    pub fn store(&mut self, desc: &PktDesc, payload: &[u8]) -> bool {
        if desc.len as usize > self.slot_bytes {
            self.counters.refused += 1;
            return false;
        }
        self.counters.stored += 1;
        self.lists[desc.qpn as usize].push_back(Stored {
            desc: desc.clone(),
            payload: payload.to_vec(),
        });
        true
    }

    /// A cumulative ACK: free from the head every packet whose PSN is
    /// before `psn`. Returns the count freed.
    pub fn ack(&mut self, qpn: u32, psn: u32) -> usize {
        let l = &mut self.lists[qpn as usize];
        if l.is_empty() {
            self.counters.empty += 1;
            return 0;
        }
        let mut n = 0;
        while l
            .front()
            .is_some_and(|p| Psn::new(p.desc.psn).is_before(Psn::new(psn)))
        {
            l.pop_front();
            n += 1;
        }
        self.counters.freed += n as u32;
        n
    }

    /// A replay: every packet from the first whose PSN is not before
    /// `psn` to the newest.
    pub fn replay(&mut self, qpn: u32, psn: u32) -> Vec<Stored> {
        let l = &self.lists[qpn as usize];
        if l.is_empty() {
            self.counters.empty += 1;
            return vec![];
        }
        let out: Vec<Stored> = l
            .iter()
            .skip_while(|p| Psn::new(p.desc.psn).is_before(Psn::new(psn)))
            .cloned()
            .collect();
        self.counters.replayed += out.len() as u32;
        out
    }
}

/// Pacing of a bench: per mille of idle cycles on each input and of stall
/// cycles on each output.
#[derive(Clone, Copy, Debug)]
pub struct Pacing {
    pub idle: u32,
    pub stall: u32,
}

/// A command offered on one of the three input ports.
#[derive(Clone, Debug)]
pub enum Op {
    Store(PktDesc, Vec<u8>),
    Ack(u32, u32),
    Replay(u32, u32),
}

/// Statistics of a bench run.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunStats {
    pub cycles: u64,
    pub stores: u64,
    pub acks: u64,
    pub replays: u64,
    pub replayed: u64,
    /// Cycles with a store offered and not taken while no slot was free.
    pub full_stalls: u64,
    /// Payload beats in and out.
    pub beats_in: u64,
    pub beats_out: u64,
    /// Cycle of the first and the last payload beat in / out.
    pub first_in: Option<u64>,
    pub last_in: u64,
    pub first_out: Option<u64>,
    pub last_out: u64,
}

/// The DUT, the model, the stream BFMs and the three command queues.
pub struct Bench {
    pub dut: Box<dyn RetxDut>,
    pub model: RetxModel,
    pub rng: Rng,
    pub pacing: Pacing,
    src: PacketSource,
    sink: PacketSink,
    stores: VecDeque<(PktDesc, Vec<u8>)>,
    acks: VecDeque<(u32, u32)>,
    replays: VecDeque<(u32, u32)>,
    held_store: Option<(PktDesc, Vec<u8>)>,
    held_ack: Option<(u32, u32)>,
    held_replay: Option<(u32, u32)>,
    exp_desc: VecDeque<PktDesc>,
    exp_payload: VecDeque<Vec<u8>>,
    out_ready: bool,
    pub stats: RunStats,
}

impl Bench {
    /// A bench on `dut`, reset and past its init sweep.
    pub fn new(dut: Box<dyn RetxDut>, seed: u64, pacing: Pacing) -> Self {
        let lanes = dut.lanes();
        let model = RetxModel::new(dut.qps(), dut.slot_bytes());
        let mut b = Bench {
            dut,
            model,
            rng: Rng::new(seed),
            pacing,
            src: PacketSource::new(lanes, seed ^ 0x5a5a, pacing.idle),
            sink: PacketSink::new(lanes, seed ^ 0xa5a5, pacing.stall),
            stores: VecDeque::new(),
            acks: VecDeque::new(),
            replays: VecDeque::new(),
            held_store: None,
            held_ack: None,
            held_replay: None,
            exp_desc: VecDeque::new(),
            exp_payload: VecDeque::new(),
            out_ready: true,
            stats: RunStats::default(),
        };
        b.reset();
        b
    }

    /// Reset, then wait out `busy`; checks the init time and the free count.
    pub fn reset(&mut self) {
        self.dut.set_pkt(None);
        self.dut.set_ack(None);
        self.dut.set_replay(None);
        self.dut.set_out_ready(false);
        self.dut.set_rst(true);
        self.dut.eval_();
        self.dut.tick_();
        self.dut.set_rst(false);
        self.dut.eval_();
        let mut n = 0;
        while self.dut.busy() {
            assert!(!self.dut.pkt_ready() && !self.dut.ack_ready() && !self.dut.replay_ready());
            self.dut.tick_();
            self.dut.eval_();
            n += 1;
            assert!(n <= self.dut.init_cycles() + 4, "busy for too long");
        }
        assert_eq!(n, self.dut.init_cycles(), "busy cycles after reset");
        // The free FIFO's last words land a few cycles after the sweep.
        for _ in 0..4 {
            self.dut.tick_();
            self.dut.eval_();
        }
        assert_eq!(self.dut.free(), self.dut.slots(), "free slots after init");
        assert_eq!(self.dut.counters(), Counters::default());
    }

    pub fn lanes(&self) -> usize {
        self.dut.lanes()
    }

    pub fn push(&mut self, op: Op) {
        match op {
            Op::Store(d, p) => {
                assert_eq!(d.len as usize, p.len());
                self.stores.push_back((d, p))
            }
            Op::Ack(q, p) => self.acks.push_back((q, p)),
            Op::Replay(q, p) => self.replays.push_back((q, p)),
        }
    }

    /// Commands not yet taken.
    pub fn pending(&self) -> (usize, usize, usize) {
        (
            self.stores.len() + self.held_store.is_some() as usize,
            self.acks.len() + self.held_ack.is_some() as usize,
            self.replays.len() + self.held_replay.is_some() as usize,
        )
    }

    /// Everything offered taken, and every expected output seen.
    pub fn idle(&self) -> bool {
        self.pending() == (0, 0, 0)
            && self.src.is_done()
            && self.exp_desc.is_empty()
            && self.exp_payload.is_empty()
    }

    /// Expected outputs not yet seen.
    pub fn expected(&self) -> (usize, usize) {
        (self.exp_desc.len(), self.exp_payload.len())
    }

    /// One clock cycle.
    pub fn cycle(&mut self) {
        let idle = self.pacing.idle;
        if self.held_store.is_none() && !self.rng.chance(idle) {
            self.held_store = self.stores.pop_front();
            if let Some((d, p)) = &self.held_store {
                // The payload may be offered before its header is taken.
                if d.len > 0 {
                    self.src.push(p);
                }
            }
        }
        if self.held_ack.is_none() && !self.rng.chance(idle) {
            self.held_ack = self.acks.pop_front();
        }
        if self.held_replay.is_none() && !self.rng.chance(idle) {
            self.held_replay = self.replays.pop_front();
        }
        self.out_ready = !self.rng.chance(self.pacing.stall);
        self.dut.set_pkt(self.held_store.as_ref().map(|s| &s.0));
        self.dut.set_ack(self.held_ack);
        self.dut.set_replay(self.held_replay);
        self.dut.set_out_ready(self.out_ready);
        self.dut.src_drive(&mut self.src);
        self.dut.sink_drive(&mut self.sink);
        self.dut.eval_();
        let now = self.stats.cycles;
        let ack = self.held_ack.filter(|_| self.dut.ack_ready());
        let rep = self.held_replay.filter(|_| self.dut.replay_ready());
        let store_taken = self.held_store.is_some() && self.dut.pkt_ready();
        if self.held_store.is_some() && !store_taken && self.dut.free() == 0 {
            self.stats.full_stalls += 1;
        }
        if self.out_ready {
            if let Some(got) = self.dut.out() {
                let want = self.exp_desc.pop_front().unwrap_or_else(|| {
                    panic!("cycle {now}: unexpected replayed descriptor {got:x?}")
                });
                assert_eq!(got, want, "cycle {now}: replayed descriptor");
                self.stats.replayed += 1;
            }
        }
        if self.dut.src_handshake(&mut self.src) {
            self.stats.beats_in += 1;
            self.stats.first_in.get_or_insert(now);
            self.stats.last_in = now;
        }
        if self.dut.sink_handshake(&mut self.sink) {
            self.stats.beats_out += 1;
            self.stats.first_out.get_or_insert(now);
            self.stats.last_out = now;
        }
        assert!(
            self.sink.violations.is_empty(),
            "stream rules: {:?}",
            self.sink.violations
        );
        while let Some(p) = self.sink.packets.pop_front() {
            let want = self.exp_payload.pop_front().unwrap_or_else(|| {
                panic!(
                    "cycle {now}: unexpected replayed payload of {} bytes",
                    p.data.len()
                )
            });
            assert!(
                p.data == want,
                "cycle {now}: replayed payload differs ({} bytes, want {})",
                p.data.len(),
                want.len()
            );
            assert!(!p.user, "tuser set on a replayed packet");
        }
        // The model, in the order the block runs them: ACK, replay, store.
        if let Some((q, p)) = ack {
            self.model.ack(q, p);
            self.held_ack = None;
            self.stats.acks += 1;
        }
        if let Some((q, p)) = rep {
            for s in self.model.replay(q, p) {
                if s.desc.len > 0 {
                    self.exp_payload.push_back(s.payload);
                }
                self.exp_desc.push_back(s.desc);
            }
            self.held_replay = None;
            self.stats.replays += 1;
        }
        if store_taken {
            let (d, p) = self.held_store.take().unwrap();
            self.model.store(&d, &p);
            self.stats.stores += 1;
        }
        self.dut.tick_();
        self.stats.cycles += 1;
    }

    /// Run until everything offered is taken and seen, or panic after
    /// `limit` cycles.
    pub fn drain(&mut self, limit: u64) {
        let start = self.stats.cycles;
        while !self.idle() {
            assert!(
                self.stats.cycles - start < limit,
                "no progress: pending {:?}, expected {:?}, free {}",
                self.pending(),
                self.expected(),
                self.dut.free()
            );
            self.cycle();
        }
        // Let the last links and frees land: an ACK walks 2 cycles a slot.
        for _ in 0..4 * self.dut.slots() + 32 {
            self.cycle();
        }
    }

    /// With the block quiet: counters equal the model's, and the free
    /// count equals the slots the model does not hold.
    pub fn check_quiet(&mut self) {
        assert_eq!(self.dut.counters(), self.model.counters, "counters");
        assert_eq!(
            self.dut.free(),
            self.dut.slots() - self.model.held(),
            "free slots"
        );
    }

    /// ACK everything the model holds, then check that every slot is free.
    pub fn free_all(&mut self) {
        let acks: Vec<(u32, u32)> = self
            .model
            .lists
            .iter()
            .enumerate()
            .filter_map(|(q, l)| {
                l.back()
                    .map(|p| (q as u32, Psn::new(p.desc.psn).next().value()))
            })
            .collect();
        for (q, p) in acks {
            self.push(Op::Ack(q, p));
        }
        self.drain(100_000);
        assert_eq!(self.model.held(), 0);
        self.check_quiet();
        assert_eq!(self.dut.free(), self.dut.slots(), "slots leaked");
    }

    /// Read `pacing` again (the BFMs' rates too).
    pub fn set_pacing(&mut self, pacing: Pacing) {
        self.pacing = pacing;
        self.src.set_idle(pacing.idle);
        self.sink.set_stall(pacing.stall);
    }
}
