//! Streaming CRC-32 (reflected 0xEDB88320), one beat per cycle at any width.
//!
//! Takes packets on `s_axis` and returns one CRC per packet on `m_crc`, in
//! order. The engine under the ICRC (DESIGN §8): `s_init` is the register
//! value the packet starts from, sampled with its first beat; 0xFFFFFFFF
//! gives the standard CRC-32, 0xDEBB20E3 the ICRC (the state after the
//! 8×0xFF LRH stand-in). The result is the register XOR 0xFFFFFFFF, i.e.
//! the value sent least significant byte first.
//!
//! # Pipeline (W bits per beat, K = W/8 bytes, C = W/64 chunks, P = log2 K)
//!
//! The register update over a beat is linear: `s' = A^W s ⊕ M x`
//! ([`crate::gf2`]). Only the `A^W s` part is a loop; the data part is
//! pipelined freely:
//!
//! | stage | work | logic per output bit |
//! |---|---|---|
//! | S0 | capture beat, zero the bytes `tkeep` drops | flip-flop sync reset |
//! | S1 | `M x` as C partial parities of 64-bit chunks; `A^W init` on the first beat; keep checks, pad count | XOR ≤ 64 |
//! | S2 | sum the partials | XOR ≤ C+1 |
//! | S3 | loop: `s ← A^W s ⊕ d` (0 after a last beat) | XOR ≤ 33 |
//! | S4..S3+P | undo the zero bytes of the last beat: `r ← A^(-8·2^b) r` when pad bit `b` is set | XOR ≤ 32, mux |
//! | queue | result FIFO (33 words) for `m_crc` backpressure | — |
//!
//! [`Crc32::new_split`] moves part of S1's work into S2: partials over
//! [`SUB_BITS`]-bit chunks (XOR ≤ 16), summed in S2 (XOR ≤ W/16 + 1); same
//! latency, more partial flip-flops. [`Crc32::new`] is the table above.
//!
//! A last beat with `n` valid bytes is fed as a full beat whose `K-n` top
//! bytes are zero; that multiplies the true register by `A^(8(K-n))`, which
//! the correction stages take back off. So the loop never depends on
//! `tkeep` and the pad count arrives with the result, off the loop.
//!
//! Latency from the last beat's handshake to `m_crc.tvalid`: `P + 6`
//! cycles (S0..S3, P correction stages, two in the result queue).
//! Throughput: one beat per cycle, back-to-back packets of any length,
//! including one-beat packets (one result per cycle).
//!
//! # Flow control and errors
//! `s_axis.tready` is low only when 32 results are queued or in flight
//! (the `m_crc` consumer is stalling); it never depends on `s_axis.tvalid`.
//! [`Crc32::uncredited`] drops that credit: `s_axis.tready` is constant
//! high, for a caller that itself never has more than [`RESULT_CAPACITY`]
//! results queued or in flight (it must prove so: a result past that is
//! lost), so no flow control of the engine's sits in the caller's
//! handshake.
//! `m_crc.tuser` flags a packet the engine could not take as a contiguous
//! byte stream: a beat other than the last with a byte missing from
//! `tkeep`, a last beat whose `tkeep` is empty or not packed from byte 0,
//! or any beat with `s_axis.tuser` set. The CRC of such a packet is
//! undefined; the packets after it are unaffected.

use crate::fifo::SyncFifo;
use crate::gf2;
use crate::prim::{MaskedReg, XorMatrix};
use crate::stream::{check_width, StreamIn, StreamOut};
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

/// Width of the pad count (bytes missing from the last beat); K ≤ 64.
pub const PAD_BITS: usize = 6;
/// Results that may be queued or in flight before `s_axis.tready` falls.
pub const RESULT_DEPTH: usize = 32;
const RESULT_ADDR_BITS: usize = 5;
/// The result queue.
type ResultQueue = SyncFifo<CrcResult, RESULT_ADDR_BITS, { RESULT_ADDR_BITS + 1 }>;
/// Results the queue holds (an [`Crc32::uncredited`] caller's bound).
pub const RESULT_CAPACITY: usize = ResultQueue::CAPACITY;
/// Results the queue of a [`Crc32::late_pop`] engine holds (one more).
pub const LATE_RESULT_CAPACITY: usize = ResultQueue::LATE_CAPACITY;
// The queue holds every result the credit lets in.
const _: () = assert!(RESULT_DEPTH <= RESULT_CAPACITY && RESULT_DEPTH < 64);

/// Chunk width of [`Crc32::new_split`]'s S1 partials.
pub const SUB_BITS: usize = 16;
const _: () = assert!(SUB_BITS == 16, "Crc32::update slices x0 by a literal 16");

/// One CRC result as it waits in the output queue.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct CrcResult {
    pub crc: Bits<32>,
    pub error: Bit,
}

#[derive(LogicBlock)]
pub struct Crc32<const W: usize, const K: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_axis: StreamIn<W, K>,
    /// Register value at the start of the packet; sampled with its first beat.
    pub s_init: Signal<In, Bits<32>>,
    /// One beat per packet: `tdata` = CRC, `tuser` = malformed packet.
    pub m_crc: StreamOut<32, 4>,
    // Flow control.
    fire: Signal<Local, Bit>,
    in_packet: DFF<Bit>,
    outstanding: DFF<Bits<6>>,
    /// `!s_axis.tready`, from a flip-flop set from the next `outstanding`
    /// (low at power-up, like `outstanding`).
    busy_q: DFF<Bit>,
    depth: Constant<Bits<6>>,
    /// The credit above applies (see [`Crc32::uncredited`]).
    credit: Constant<Bit>,
    // S0: captured beat.
    x0: MaskedReg<W, K>,
    v0: DFF<Bit>,
    last0: DFF<Bit>,
    user0: DFF<Bit>,
    keep0: DFF<Bits<K>>,
    init0: DFF<Bits<32>>,
    // S1: partial parities, init contribution, keep checks.
    chunk: Vec<XorMatrix<64, 32>>,
    /// With [`Crc32::new_split`]: the partials over [`SUB_BITS`]-bit
    /// chunks instead (`chunk` is then empty, `p1` holds these).
    sub: Vec<XorMatrix<SUB_BITS, 32>>,
    p1: Vec<DFF<Bits<32>>>,
    init_matrix: XorMatrix<32, 32>,
    q1: DFF<Bits<32>>,
    top_byte: XorMatrix<K, PAD_BITS>,
    pad1: DFF<Bits<PAD_BITS>>,
    v1: DFF<Bit>,
    last1: DFF<Bit>,
    err1: DFF<Bit>,
    keep_max: Constant<Bits<PAD_BITS>>,
    // S2: sum of partials.
    sum: Vec<Signal<Local, Bits<32>>>,
    d2: DFF<Bits<32>>,
    pad2: DFF<Bits<PAD_BITS>>,
    v2: DFF<Bit>,
    last2: DFF<Bit>,
    err2: DFF<Bit>,
    // S3: the loop.
    advance: XorMatrix<32, 32>,
    state: DFF<Bits<32>>,
    err_acc: DFF<Bit>,
    t3: Signal<Local, Bits<32>>,
    // S4..: correction for the zero-filled bytes of the last beat.
    corr: Vec<XorMatrix<32, 32>>,
    r: Vec<DFF<Bits<32>>>,
    rv: Vec<DFF<Bit>>,
    rpad: Vec<DFF<Bits<PAD_BITS>>>,
    rerr: Vec<DFF<Bit>>,
    // Result queue.
    results: ResultQueue,
}

fn full_rows(cols: &[u32]) -> Vec<Vec<u64>> {
    gf2::rows(cols, 32)
}

impl<const W: usize, const K: usize> Crc32<W, K> {
    pub fn new() -> Self {
        Self::build(false)
    }

    /// The same engine with S1's partial parities over [`SUB_BITS`]-bit
    /// chunks (rows of at most 16 inputs: two LUT4 levels) and S2 summing
    /// `W / SUB_BITS` of them (at W=64 five inputs with the init term):
    /// the work of a 64-input XOR row split over the two stages, the same
    /// latency, `W / SUB_BITS * 32` partial flip-flops instead of `W / 2`.
    pub fn new_split() -> Self {
        Self::build(true)
    }

    /// This engine with `s_axis.tready` constant high (no result credit):
    /// the caller keeps at most [`RESULT_CAPACITY`] results queued or in
    /// flight, e.g. by taking each result with a beat of its own bounded
    /// queue (see the module documentation).
    pub fn uncredited(mut self) -> Self {
        self.credit = Constant::new(false);
        self
    }

    /// This engine for a consumer whose `m_crc.tready` arrives late in the
    /// cycle: the result queue is a [`SyncFifo::late_read`] one, which
    /// holds [`LATE_RESULT_CAPACITY`] results.
    pub fn late_pop(mut self) -> Self {
        self.results = std::mem::take(&mut self.results).late_read();
        self
    }

    fn build(split: bool) -> Self {
        check_width("Crc32", W, K);
        assert!(K <= 1 << PAD_BITS);
        let chunks = if split { 0 } else { W / 64 };
        let subs = if split { W / SUB_BITS } else { 0 };
        let partials = chunks + subs;
        let stages = K.trailing_zeros() as usize;
        let data = gf2::data(W);
        // For a packed keep with n bytes, keep[i] = (i < n), and bit b of
        // n - 1 is the parity of keep[m * 2^b] over m >= 1: a linear map.
        let top_rows: Vec<Vec<u64>> = (0..PAD_BITS)
            .map(|b| {
                let mut row = vec![0u64; K.div_ceil(64)];
                for v in (1..K).filter(|v| v % (1 << b) == 0) {
                    row[v / 64] |= 1 << (v % 64);
                }
                row
            })
            .collect();
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_axis: Default::default(),
            s_init: Default::default(),
            m_crc: Default::default(),
            fire: Default::default(),
            in_packet: Default::default(),
            outstanding: Default::default(),
            busy_q: Default::default(),
            depth: Constant::new((RESULT_DEPTH as u64).into()),
            credit: Constant::new(true),
            x0: MaskedReg::new(),
            v0: Default::default(),
            last0: Default::default(),
            user0: Default::default(),
            keep0: Default::default(),
            init0: Default::default(),
            chunk: (0..chunks)
                .map(|c| XorMatrix::new(full_rows(&data[c * 64..(c + 1) * 64])))
                .collect(),
            sub: (0..subs)
                .map(|c| XorMatrix::new(full_rows(&data[c * SUB_BITS..(c + 1) * SUB_BITS])))
                .collect(),
            p1: (0..partials).map(|_| Default::default()).collect(),
            init_matrix: XorMatrix::new(full_rows(&gf2::advance(W))),
            q1: Default::default(),
            top_byte: XorMatrix::new(top_rows),
            pad1: Default::default(),
            v1: Default::default(),
            last1: Default::default(),
            err1: Default::default(),
            keep_max: Constant::new(((K - 1) as u64).into()),
            sum: (0..=partials).map(|_| Default::default()).collect(),
            d2: Default::default(),
            pad2: Default::default(),
            v2: Default::default(),
            last2: Default::default(),
            err2: Default::default(),
            advance: XorMatrix::new(full_rows(&gf2::advance(W))),
            state: Default::default(),
            err_acc: Default::default(),
            t3: Default::default(),
            corr: (0..stages)
                .map(|b| XorMatrix::new(full_rows(&gf2::retreat(8 << b))))
                .collect(),
            r: (0..=stages).map(|_| Default::default()).collect(),
            rv: (0..=stages).map(|_| Default::default()).collect(),
            rpad: (0..=stages).map(|_| Default::default()).collect(),
            rerr: (0..=stages).map(|_| Default::default()).collect(),
            results: SyncFifo::new(),
        }
    }

    /// Cycles from the handshake of a packet's last beat to its result on
    /// `m_crc` (`tvalid` high), with an idle output queue.
    pub fn latency() -> usize {
        K.trailing_zeros() as usize + 6
    }
}

impl<const W: usize, const K: usize> Default for Crc32<W, K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const K: usize> Logic for Crc32<W, K> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            in_packet,
            outstanding,
            busy_q,
            x0,
            v0,
            last0,
            user0,
            keep0,
            init0,
            q1,
            pad1,
            v1,
            last1,
            err1,
            d2,
            pad2,
            v2,
            last2,
            err2,
            state,
            err_acc
        );
        clock!(self, clock, results);
        for c in 0..self.p1.len() {
            self.p1[c].clock.next = self.clock.val();
            self.p1[c].d.next = self.p1[c].q.val();
        }
        for b in 0..self.r.len() {
            self.r[b].clock.next = self.clock.val();
            self.r[b].d.next = self.r[b].q.val();
            self.rv[b].clock.next = self.clock.val();
            self.rv[b].d.next = self.rv[b].q.val();
            self.rpad[b].clock.next = self.clock.val();
            self.rpad[b].d.next = self.rpad[b].q.val();
            self.rerr[b].clock.next = self.clock.val();
            self.rerr[b].d.next = self.rerr[b].q.val();
        }

        // Flow control: accept while fewer than RESULT_DEPTH results are
        // queued or in flight. Counted per packet (its last beat).
        self.s_axis.tready.next = !(self.busy_q.q.val() & self.credit.val());
        self.fire.next = self.s_axis.tvalid.val() & self.s_axis.tready.val();
        if self.fire.val() {
            self.in_packet.d.next = !self.s_axis.tlast.val();
        }
        if (self.fire.val() & self.s_axis.tlast.val())
            & !(self.m_crc.tvalid.val() & self.m_crc.tready.val())
        {
            self.outstanding.d.next = self.outstanding.q.val() + 1;
        }
        if !(self.fire.val() & self.s_axis.tlast.val())
            & (self.m_crc.tvalid.val() & self.m_crc.tready.val())
        {
            self.outstanding.d.next = self.outstanding.q.val() - 1;
        }

        // S0: capture, zeroing the bytes tkeep drops. Data registers load
        // every cycle; the valid bit qualifies them.
        self.x0.d.next = self.s_axis.tdata.val();
        self.x0.keep.next = self.s_axis.tkeep.val();
        self.v0.d.next = self.fire.val();
        self.last0.d.next = self.s_axis.tlast.val();
        self.user0.d.next = self.s_axis.tuser.val();
        self.keep0.d.next = self.s_axis.tkeep.val();
        if self.in_packet.q.val() {
            self.init0.d.next = 0.into();
        } else {
            self.init0.d.next = self.s_init.val();
        }

        // S1: partial parities over 64-bit chunks, the init term, keep checks.
        for c in 0..self.chunk.len() {
            self.chunk[c].x.next = self.x0.q.val().get_bits::<64>(c * 64);
            self.p1[c].d.next = self.chunk[c].y.val();
        }
        // (Literal 16s: hdl_gen emits a constant's name; SUB_BITS is 16.)
        for c in 0..self.sub.len() {
            self.sub[c].x.next = self.x0.q.val().get_bits::<16>(c * 16);
            self.p1[c].d.next = self.sub[c].y.val();
        }
        self.init_matrix.x.next = self.init0.q.val();
        self.q1.d.next = self.init_matrix.y.val();
        // Index of the highest kept byte; pad = (K-1) - index.
        self.top_byte.x.next = self.keep0.q.val();
        self.pad1.d.next = 0.into();
        if self.last0.q.val() {
            self.pad1.d.next = self.top_byte.y.val() ^ self.keep_max.val();
        }
        self.v1.d.next = self.v0.q.val();
        self.last1.d.next = self.last0.q.val();
        if self.last0.q.val() {
            // Packed from byte 0: byte 0 kept and no kept byte above a gap.
            self.err1.d.next = self.user0.q.val()
                | !self.keep0.q.val().get_bit(0)
                | (!self.keep0.q.val() & (self.keep0.q.val() >> 1)).any();
        } else {
            self.err1.d.next = self.user0.q.val() | !self.keep0.q.val().all();
        }

        // S2: sum the partials.
        self.sum[0].next = self.q1.q.val();
        for c in 0..self.p1.len() {
            self.sum[c + 1].next = self.sum[c].val() ^ self.p1[c].q.val();
            // The last iteration's assignment stands.
            self.d2.d.next = self.sum[c + 1].val();
        }
        self.pad2.d.next = self.pad1.q.val();
        self.v2.d.next = self.v1.q.val();
        self.last2.d.next = self.last1.q.val();
        self.err2.d.next = self.err1.q.val();

        // S3: the loop. The register restarts from zero after a last beat;
        // the first beat's d already carries A^W·init.
        self.advance.x.next = self.state.q.val();
        self.t3.next = self.advance.y.val() ^ self.d2.q.val();
        self.r[0].d.next = self.t3.val();
        self.rv[0].d.next = self.v2.q.val() & self.last2.q.val();
        self.rpad[0].d.next = self.pad2.q.val();
        self.rerr[0].d.next = self.err_acc.q.val() | self.err2.q.val();
        if self.v2.q.val() {
            if self.last2.q.val() {
                self.state.d.next = 0.into();
                self.err_acc.d.next = false;
            } else {
                self.state.d.next = self.t3.val();
                self.err_acc.d.next = self.err_acc.q.val() | self.err2.q.val();
            }
        }

        // S4..: move the register back over the zero-filled bytes.
        for b in 0..self.corr.len() {
            self.corr[b].x.next = self.r[b].q.val();
            if self.rpad[b].q.val().get_bit(b) {
                self.r[b + 1].d.next = self.corr[b].y.val();
            } else {
                self.r[b + 1].d.next = self.r[b].q.val();
            }
            self.rv[b + 1].d.next = self.rv[b].q.val();
            self.rpad[b + 1].d.next = self.rpad[b].q.val();
            self.rerr[b + 1].d.next = self.rerr[b].q.val();
            // Result queue input: the last iteration's assignment stands.
            self.results.write.next = self.rv[b + 1].q.val();
            self.results.data_in.next.crc = !self.r[b + 1].q.val();
            self.results.data_in.next.error = self.rerr[b + 1].q.val();
        }

        // Output stream.
        self.results.reset.next = self.reset.val();
        self.results.read.next = self.m_crc.tready.val();
        self.m_crc.tvalid.next = !self.results.empty.val();
        self.m_crc.tdata.next = self.results.data_out.val().crc;
        self.m_crc.tuser.next = self.results.data_out.val().error;
        self.m_crc.tkeep.next = 0xF.into();
        self.m_crc.tlast.next = true;

        if self.reset.val() {
            self.in_packet.d.next = false;
            self.outstanding.d.next = 0.into();
            self.v0.d.next = false;
            self.v1.d.next = false;
            self.v2.d.next = false;
            self.state.d.next = 0.into();
            self.err_acc.d.next = false;
            for b in 0..self.rv.len() {
                self.rv[b].d.next = false;
            }
        }
        self.busy_q.d.next = self.outstanding.d.val() >= self.depth.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_synthesizes() {
        let mut uut = Crc32::<64, 8>::new();
        uut.connect_all();
        yosys_validate("crc32_w64", &generate_verilog(&uut)).unwrap();
    }
}
