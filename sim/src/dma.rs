//! The DMA engines (`dma_wr`, `dma_rd`) from Rust: port traits over their
//! Verilator models (the AXI side as [`AxiWritePort`] / [`AxiReadPort`] for
//! [`AxiMem`]), and benches that drive commands, the payload stream and the
//! completion port with random pacing against an [`AxiMem`].

use crate::axi_mem::{AxiMem, AxiMemTiming, AxiReadPort, AxiWritePort};
use crate::axis::{bytes_from_u64, bytes_from_words, le_u64, le_words};
use crate::bfm::{PacketSink, PacketSource};
use crate::model::Model;
use crate::models::{DmaRdW512, DmaRdW64, DmaWrW512, DmaWrW64};
use crate::rng::Rng;
use std::collections::VecDeque;

/// A `dma_wr` command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrCmd {
    pub addr: u64,
    pub len: u32,
    pub last: bool,
    pub discard: bool,
    pub imm: bool,
    /// The immediate bytes (little-endian) when `imm`.
    pub data: u64,
}

/// A `dma_rd` command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RdCmd {
    pub addr: u64,
    pub len: u32,
    pub last: bool,
}

/// One `dma_wr` model, whatever its width.
pub trait WrDut: AxiWritePort {
    fn set_rst(&mut self, v: bool);
    fn set_cmd(&mut self, c: Option<&WrCmd>);
    fn cmd_ready(&self) -> bool;
    fn set_done_ready(&mut self, v: bool);
    /// `Some(err)` while `m_done_valid`.
    fn done(&self) -> Option<bool>;
    fn idle(&self) -> bool;
    fn stream_errs(&self) -> u32;
    fn src_drive(&mut self, src: &mut PacketSource);
    fn src_handshake(&mut self, src: &mut PacketSource) -> bool;
    fn eval_(&mut self);
    fn tick_(&mut self);
}

/// One `dma_rd` model, whatever its width.
pub trait RdDut: AxiReadPort {
    fn set_rst(&mut self, v: bool);
    fn set_cmd(&mut self, c: Option<&RdCmd>);
    fn cmd_ready(&self) -> bool;
    fn idle(&self) -> bool;
    fn sink_drive(&mut self, sink: &mut PacketSink);
    fn sink_handshake(&mut self, sink: &mut PacketSink) -> bool;
    fn eval_(&mut self);
    fn tick_(&mut self);
}

macro_rules! wr_dut {
    ($m:ident, $lanes:expr, $wdata:expr, $wstrb:expr) => {
        $crate::axi_write_port!($m, $lanes, $wdata, $wstrb);

        impl WrDut for $m {
            fn set_rst(&mut self, v: bool) {
                self.set_reset(v)
            }
            fn set_cmd(&mut self, c: Option<&WrCmd>) {
                self.set_s_cmd_valid(c.is_some());
                if let Some(c) = c {
                    self.set_s_cmd_addr(c.addr);
                    self.set_s_cmd_len(c.len);
                    self.set_s_cmd_last(c.last);
                    self.set_s_cmd_discard(c.discard);
                    self.set_s_cmd_imm(c.imm);
                    self.set_s_cmd_data(c.data);
                }
            }
            fn cmd_ready(&self) -> bool {
                self.get_s_cmd_ready()
            }
            fn set_done_ready(&mut self, v: bool) {
                self.set_m_done_ready(v)
            }
            fn done(&self) -> Option<bool> {
                self.get_m_done_valid().then(|| self.get_m_done_err())
            }
            fn idle(&self) -> bool {
                self.get_idle()
            }
            fn stream_errs(&self) -> u32 {
                self.get_cnt_stream_err()
            }
            fn src_drive(&mut self, src: &mut PacketSource) {
                src.drive(&mut self.s_pay());
            }
            fn src_handshake(&mut self, src: &mut PacketSource) -> bool {
                src.handshake(&self.s_pay()).is_some()
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

wr_dut!(
    DmaWrW64,
    8,
    |m: &DmaWrW64| bytes_from_u64(m.get_m_axi_wdata(), 8),
    |m: &DmaWrW64| m.get_m_axi_wstrb() as u64
);
wr_dut!(
    DmaWrW512,
    64,
    |m: &DmaWrW512| bytes_from_words(&m.get_m_axi_wdata(), 64),
    |m: &DmaWrW512| m.get_m_axi_wstrb()
);

macro_rules! rd_dut {
    ($m:ident, $lanes:expr, $set_rdata:expr) => {
        $crate::axi_read_port!($m, $lanes, $set_rdata);

        impl RdDut for $m {
            fn set_rst(&mut self, v: bool) {
                self.set_reset(v)
            }
            fn set_cmd(&mut self, c: Option<&RdCmd>) {
                self.set_s_cmd_valid(c.is_some());
                if let Some(c) = c {
                    self.set_s_cmd_addr(c.addr);
                    self.set_s_cmd_len(c.len);
                    self.set_s_cmd_last(c.last);
                }
            }
            fn cmd_ready(&self) -> bool {
                self.get_s_cmd_ready()
            }
            fn idle(&self) -> bool {
                self.get_idle()
            }
            fn sink_drive(&mut self, sink: &mut PacketSink) {
                sink.drive(&mut self.m_data());
            }
            fn sink_handshake(&mut self, sink: &mut PacketSink) -> bool {
                sink.handshake(&self.m_data()).is_some()
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

rd_dut!(DmaRdW64, 8, |m: &mut DmaRdW64, d: &[u8]| m
    .set_m_axi_rdata(le_u64(d)));
rd_dut!(DmaRdW512, 64, |m: &mut DmaRdW512, d: &[u8]| m
    .set_m_axi_rdata(&le_words::<16>(d)));

/// Widths with models.
pub const WIDTHS: [usize; 2] = [64, 512];

pub fn wr_dut(width: usize) -> Box<dyn WrDut> {
    match width {
        64 => Box::new(DmaWrW64::new()),
        512 => Box::new(DmaWrW512::new()),
        w => panic!("no dma_wr model at width {w} (have {WIDTHS:?})"),
    }
}

pub fn rd_dut(width: usize) -> Box<dyn RdDut> {
    match width {
        64 => Box::new(DmaRdW64::new()),
        512 => Box::new(DmaRdW512::new()),
        w => panic!("no dma_rd model at width {w} (have {WIDTHS:?})"),
    }
}

/// Random pacing of a bench (‰ per cycle).
#[derive(Clone, Copy, Debug)]
pub struct Pacing {
    /// No command offered.
    pub cmd_gap: u32,
    /// Payload source idle / output sink stalled.
    pub stream: u32,
    /// Completion not taken.
    pub done_stall: u32,
}

impl Pacing {
    pub const FULL_RATE: Pacing = Pacing {
        cmd_gap: 0,
        stream: 0,
        done_stall: 0,
    };
}

/// A `dma_wr` bench: commands, payload stream, memory, completions.
pub struct WrBench {
    pub dut: Box<dyn WrDut>,
    pub mem: AxiMem,
    pub src: PacketSource,
    pub lanes: usize,
    rng: Rng,
    pacing: Pacing,
    cmds: VecDeque<WrCmd>,
    offered: Option<WrCmd>,
    /// Commands accepted, with the cycle each was.
    pub accepted: Vec<(WrCmd, u64)>,
    /// Completions (err), with their cycle.
    pub dones: Vec<(bool, u64)>,
    /// `idle` disagreeing with "every accepted command completed".
    pub idle_errors: Vec<String>,
    pub cycle: u64,
}

impl WrBench {
    pub fn new(width: usize, seed: u64, pacing: Pacing, timing: AxiMemTiming) -> Self {
        let mut dut = wr_dut(width);
        let lanes = width / 8;
        dut.set_rst(true);
        dut.set_cmd(None);
        dut.set_done_ready(false);
        dut.eval_();
        dut.tick_();
        dut.tick_();
        dut.set_rst(false);
        WrBench {
            dut,
            mem: AxiMem::new(lanes, seed ^ 0xa11, timing),
            src: PacketSource::new(lanes, seed ^ 0x50c, pacing.stream),
            lanes,
            rng: Rng::new(seed ^ 0xc3d),
            pacing,
            cmds: VecDeque::new(),
            offered: None,
            accepted: Vec::new(),
            dones: Vec::new(),
            idle_errors: Vec::new(),
            cycle: 0,
        }
    }

    pub fn push_cmd(&mut self, c: WrCmd) {
        self.cmds.push_back(c);
    }

    /// Commands not yet accepted.
    pub fn backlog(&self) -> usize {
        self.cmds.len() + self.offered.is_some() as usize
    }

    /// One clock cycle.
    pub fn step(&mut self) {
        if self.offered.is_none() && !self.rng.chance(self.pacing.cmd_gap) {
            self.offered = self.cmds.pop_front();
        }
        self.dut.set_cmd(self.offered.as_ref());
        let take_done = !self.rng.chance(self.pacing.done_stall);
        self.dut.set_done_ready(take_done);
        self.dut.src_drive(&mut self.src);
        self.mem.drive_write(&mut *self.dut);
        self.dut.eval_();
        let all_done = self.accepted.len() == self.dones.len();
        if self.dut.idle() != all_done {
            self.idle_errors.push(format!(
                "cycle {}: idle {} with {} accepted, {} completed",
                self.cycle,
                self.dut.idle(),
                self.accepted.len(),
                self.dones.len()
            ));
        }
        if self.offered.is_some() && self.dut.cmd_ready() {
            self.accepted
                .push((self.offered.take().unwrap(), self.cycle));
        }
        if take_done {
            if let Some(err) = self.dut.done() {
                self.dones.push((err, self.cycle));
            }
        }
        self.dut.src_handshake(&mut self.src);
        self.mem.sample_write(&*self.dut);
        self.dut.tick_();
        self.mem.tick();
        self.cycle += 1;
    }

    /// Step until every command has completed and the stream is drained,
    /// or `max` cycles; true when finished.
    pub fn run(&mut self, max: u64) -> bool {
        let end = self.cycle + max;
        while self.cycle < end {
            if self.backlog() == 0 && self.dones.len() == self.accepted.len() && self.mem.quiet() {
                return true;
            }
            self.step();
        }
        false
    }
}

/// A `dma_rd` bench: commands in, memory, output stream.
pub struct RdBench {
    pub dut: Box<dyn RdDut>,
    pub mem: AxiMem,
    pub sink: PacketSink,
    pub lanes: usize,
    rng: Rng,
    pacing: Pacing,
    cmds: VecDeque<RdCmd>,
    offered: Option<RdCmd>,
    pub accepted: Vec<(RdCmd, u64)>,
    /// Cycle of every output beat.
    pub beat_cycles: Vec<u64>,
    /// `idle` high while a read burst is outstanding.
    pub idle_errors: Vec<String>,
    pub cycle: u64,
}

impl RdBench {
    pub fn new(width: usize, seed: u64, pacing: Pacing, timing: AxiMemTiming) -> Self {
        let mut dut = rd_dut(width);
        let lanes = width / 8;
        dut.set_rst(true);
        dut.set_cmd(None);
        dut.eval_();
        dut.tick_();
        dut.tick_();
        dut.set_rst(false);
        RdBench {
            dut,
            mem: AxiMem::new(lanes, seed ^ 0xa11, timing),
            sink: PacketSink::new(lanes, seed ^ 0x51c, pacing.stream),
            lanes,
            rng: Rng::new(seed ^ 0xc3d),
            pacing,
            cmds: VecDeque::new(),
            offered: None,
            accepted: Vec::new(),
            beat_cycles: Vec::new(),
            idle_errors: Vec::new(),
            cycle: 0,
        }
    }

    pub fn push_cmd(&mut self, c: RdCmd) {
        self.cmds.push_back(c);
    }

    pub fn backlog(&self) -> usize {
        self.cmds.len() + self.offered.is_some() as usize
    }

    pub fn step(&mut self) {
        if self.offered.is_none() && !self.rng.chance(self.pacing.cmd_gap) {
            self.offered = self.cmds.pop_front();
        }
        self.dut.set_cmd(self.offered.as_ref());
        self.dut.sink_drive(&mut self.sink);
        self.mem.drive_read(&mut *self.dut);
        self.dut.eval_();
        if self.dut.idle() && self.mem.reads_out > 0 {
            self.idle_errors.push(format!(
                "cycle {}: idle with {} read bursts outstanding",
                self.cycle, self.mem.reads_out
            ));
        }
        if self.offered.is_some() && self.dut.cmd_ready() {
            self.accepted
                .push((self.offered.take().unwrap(), self.cycle));
        }
        if self.dut.sink_handshake(&mut self.sink) {
            self.beat_cycles.push(self.cycle);
        }
        self.mem.sample_read(&*self.dut);
        self.dut.tick_();
        self.mem.tick();
        self.cycle += 1;
    }

    /// Step until `packets` packets have come out and the model is idle,
    /// or `max` cycles; true when finished.
    pub fn run(&mut self, packets: usize, max: u64) -> bool {
        let end = self.cycle + max;
        while self.cycle < end {
            if self.backlog() == 0
                && self.sink.packets.len() >= packets
                && self.mem.quiet()
                && self.dut.idle()
            {
                return true;
            }
            self.step();
        }
        false
    }
}
