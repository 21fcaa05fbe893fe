//! Leaf primitives whose Verilog body is generated from Rust data.
//!
//! rust-hdl kernels cannot assemble a vector bit by bit, address a byte by a
//! loop index or read a memory asynchronously (DESIGN §4), so the leaves that
//! need it are written the way rust-hdl writes its own `DFF` and `RAM`: the
//! module header comes from rust-hdl, the body from `Verilog::Custom`, and
//! `update()` is the same function in Rust for rust-hdl's simulator. Each is
//! a few lines of Verilog; all control lives in the kernels that use them.

use crate::xornet::{self, XorNet};
use rust_hdl_core::prelude::*;
use rust_hdl_core::timing::TimingInfo;
use rust_hdl_widgets::{dff::DFF, dff_setup};
use std::cmp::Reverse;

/// `y = A · x` over GF(2) for a constant `M × N` matrix `A`: output bit `j`
/// is the parity of `x & row[j]`.
///
/// The Verilog holds two forms of the same matrix:
/// - for synthesis, a shared XOR network ([`crate::xornet`]): pairs of
///   inputs common to several rows are computed once, and each output sums
///   its terms as a balanced tree, shallowest terms first;
/// - with the macro [`FAST_SIM_DEFINE`] defined, one lookup table per input
///   byte, which Verilator evaluates an order of magnitude faster than the
///   bit-level network.
///
/// The test benches run both forms.
#[derive(LogicBlock)]
pub struct XorMatrix<const N: usize, const M: usize> {
    pub x: Signal<In, Bits<N>>,
    pub y: Signal<Out, Bits<M>>,
    /// Row masks, `M` rows of `ceil(N / 64)` little-endian words.
    _rows: Vec<Vec<u64>>,
    _net: XorNet,
}

impl<const N: usize, const M: usize> XorMatrix<N, M> {
    /// `rows[j]` is the input mask of output bit `j` (see [`crate::gf2::rows`]).
    pub fn new(rows: Vec<Vec<u64>>) -> Self {
        assert_eq!(rows.len(), M, "XorMatrix needs one row per output bit");
        for row in &rows {
            assert_eq!(row.len(), N.div_ceil(64), "row width must cover N inputs");
            if N % 64 != 0 {
                assert_eq!(row[N / 64] >> (N % 64), 0, "row has bits beyond N");
            }
        }
        Self {
            x: Default::default(),
            y: Default::default(),
            _net: xornet::share(&rows, N),
            _rows: rows,
        }
    }

    /// The function this block computes, for rust-hdl's simulator and tests.
    pub fn eval(&self, x: Bits<N>) -> Bits<M> {
        (0..M).fold(Bits::<M>::default(), |y, j| {
            let parity = (0..N)
                .filter(|&i| self.row_has(j, i))
                .fold(false, |p, i| p ^ x.get_bit(i));
            y.replace_bit(j, parity)
        })
    }

    fn row_has(&self, j: usize, i: usize) -> bool {
        (self._rows[j][i / 64] >> (i % 64)) & 1 == 1
    }

    /// The simulation form: one table per input byte (the last one narrower
    /// when `N` is not a multiple of 8), filled by an `initial` loop from
    /// the row masks, so a Verilator model does a lookup per byte instead
    /// of a parity per row.
    fn fast_sim_body(&self) -> String {
        let lanes: Vec<(usize, usize)> =
            (0..N.div_ceil(8)).map(|g| (g, 8.min(N - 8 * g))).collect();
        let mut b = String::new();
        for &(g, w) in &lanes {
            b.push_str(&format!("reg [{}:0] tab{g} [0:{}];\n", M - 1, (1 << w) - 1));
        }
        b.push_str("integer v;\ninitial begin\n");
        for &(g, w) in &lanes {
            b.push_str(&format!(
                "    for (v = 0; v < {}; v = v + 1) begin\n",
                1 << w
            ));
            for j in 0..M {
                let mask = (0..w)
                    .filter(|&k| self.row_has(j, 8 * g + k))
                    .fold(0, |m, k| m | 1 << k);
                b.push_str(&format!(
                    "        tab{g}[v][{j}] = ^(v[{}:0] & {w}'h{mask:x});\n",
                    w - 1
                ));
            }
            b.push_str("    end\n");
        }
        let terms: Vec<String> = lanes
            .iter()
            .map(|&(g, w)| format!("tab{g}[x[{}:{}]]", 8 * g + w - 1, 8 * g))
            .collect();
        b.push_str(&format!(
            "end\nalways @(*) begin\n    y = {};\nend\n",
            terms.join(" ^ ")
        ));
        b
    }

    /// The synthesis form: the shared network's gates, then each output as
    /// a balanced tree of its terms.
    fn network_body(&self) -> String {
        let net = &self._net;
        let name = |n: usize| {
            if n < N {
                format!("x[{n}]")
            } else {
                format!("n{n}")
            }
        };
        let mut depth: Vec<usize> = vec![0; N];
        let mut b = String::new();
        for k in 0..net.gates.len() {
            b.push_str(&format!("reg n{};\n", N + k));
        }
        b.push_str("always @(*) begin\n");
        for &(p, q) in &net.gates {
            b.push_str(&format!(
                "    n{} = {} ^ {};\n",
                depth.len(),
                name(p),
                name(q)
            ));
            depth.push(depth[p].max(depth[q]) + 1);
        }
        for (j, terms) in net.outputs.iter().enumerate() {
            // (depth, expression, is a sum): always join the two shallowest
            // (ties: the lower operand text, so the output is reproducible).
            let operand = |(_, e, sum): &(usize, String, bool)| {
                if *sum {
                    format!("({e})")
                } else {
                    e.clone()
                }
            };
            let mut pending: Vec<(usize, String, bool)> =
                terms.iter().map(|&t| (depth[t], name(t), false)).collect();
            let rhs = loop {
                pending.sort_by_cached_key(|t| Reverse((t.0, operand(t))));
                match (pending.pop(), pending.pop()) {
                    (None, _) => break "1'b0".to_string(),
                    (Some((_, e, _)), None) => break e,
                    (Some(p), Some(q)) => {
                        let d = p.0.max(q.0) + 1;
                        pending.push((d, format!("{} ^ {}", operand(&p), operand(&q)), true));
                    }
                }
            };
            b.push_str(&format!("    y[{j}] = {rhs};\n"));
        }
        b.push_str("end\n");
        b
    }
}

/// Verilog macro selecting the lookup-table simulation form of
/// [`XorMatrix`] (same function, checked by running the tests on both).
pub const FAST_SIM_DEFINE: &str = "ROCE_FAST_SIM";

impl<const N: usize, const M: usize> Logic for XorMatrix<N, M> {
    fn update(&mut self) {
        self.y.next = self.eval(self.x.val());
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "`ifdef {FAST_SIM_DEFINE}\n{}`else\n{}`endif\n",
            self.fast_sim_body(),
            self.network_body()
        ))
    }
}

/// A register that loads `d` with every byte whose `keep` bit is clear
/// forced to zero (AXI-Stream null bytes carry no defined value).
///
/// Written per byte as `if (keep[b]) q <= d; else q <= 0;`, which synthesis
/// maps onto the flip-flops' synchronous reset (FDRE `R`, TRELLIS_FF `LSR`,
/// SB_DFFSR): the masking costs no LUTs.
#[derive(LogicBlock, Default)]
pub struct MaskedReg<const W: usize, const K: usize> {
    pub clock: Signal<In, Clock>,
    pub d: Signal<In, Bits<W>>,
    pub keep: Signal<In, Bits<K>>,
    pub q: Signal<Out, Bits<W>>,
}

impl<const W: usize, const K: usize> MaskedReg<W, K> {
    pub fn new() -> Self {
        assert_eq!(K * 8, W, "MaskedReg: K must be W / 8");
        Self::default()
    }

    /// The value loaded at a clock edge.
    pub fn masked(d: Bits<W>, keep: Bits<K>) -> Bits<W> {
        let mut y = d;
        for byte in (0..K).filter(|&b| !keep.get_bit(b)) {
            for bit in 0..8 {
                y = y.replace_bit(byte * 8 + bit, false);
            }
        }
        y
    }
}

impl<const W: usize, const K: usize> Logic for MaskedReg<W, K> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self.q.next = Self::masked(self.d.val(), self.keep.val());
        }
    }

    fn connect(&mut self) {
        self.q.connect();
    }

    fn hdl(&self) -> Verilog {
        let mut body = String::from("always @(posedge clock) begin\n");
        for b in 0..K {
            let (hi, lo) = (b * 8 + 7, b * 8);
            body.push_str(&format!(
                "    if (keep[{b}]) q[{hi}:{lo}] <= d[{hi}:{lo}]; else q[{hi}:{lo}] <= 8'h0;\n"
            ));
        }
        body.push_str("end\n");
        Verilog::Custom(body)
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "masked_reg".into(),
            clock: "clock".into(),
            inputs: vec!["d".into(), "keep".into()],
            outputs: vec!["q".into()],
        }]
    }
}

/// Simple dual-port memory with a synchronous write and an asynchronous
/// read: distributed RAM (RAM32M/RAM64M on 7-series, DPR16X4 on ECP5), for
/// small queues whose read must not cost a cycle. `2^A` words of `D`.
#[derive(LogicBlock)]
pub struct LutRam<D: Synth, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub write_enable: Signal<In, Bit>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_data: Signal<In, D>,
    pub read_address: Signal<In, Bits<A>>,
    pub read_data: Signal<Out, D>,
    _mem: Vec<D>,
}

impl<D: Synth, const A: usize> LutRam<D, A> {
    pub fn new() -> Self {
        assert!(
            (1..=8).contains(&A),
            "LutRam: address width {A} out of 1..=8"
        );
        Self {
            clock: Default::default(),
            write_enable: Default::default(),
            write_address: Default::default(),
            write_data: Default::default(),
            read_address: Default::default(),
            read_data: Default::default(),
            _mem: vec![D::default(); 1 << A],
        }
    }
}

impl<D: Synth, const A: usize> Default for LutRam<D, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Synth, const A: usize> Logic for LutRam<D, A> {
    fn update(&mut self) {
        if self.clock.pos_edge() && self.write_enable.val() {
            self._mem[self.write_address.val().index()] = self.write_data.val();
        }
        self.read_data.next = self._mem[self.read_address.val().index()];
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "reg [{msb}:0] mem [0:{last}];\n\nalways @(posedge clock) begin\n    if (write_enable) mem[write_address] <= write_data;\nend\n\nalways @(*) begin\n    read_data = mem[read_address];\nend\n",
            msb = D::BITS - 1,
            last = (1usize << A) - 1
        ))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "lutram_write".into(),
            clock: "clock".into(),
            inputs: vec![
                "write_enable".into(),
                "write_address".into(),
                "write_data".into(),
            ],
            outputs: vec![],
        }]
    }
}

/// A constant table in logic: `data = table[address]` (zero for addresses
/// not listed), written as one OR of address matches per output bit, so no
/// synthesis flow turns it into a block RAM (whose read on ECP5 costs
/// ~5.6 ns clock-to-output without its output register). For sparse tables
/// such as the opcode ROM, where a few dozen of `2^A` words are non-zero.
#[derive(LogicBlock)]
pub struct LogicRom<const D: usize, const A: usize> {
    pub address: Signal<In, Bits<A>>,
    pub data: Signal<Out, Bits<D>>,
    _table: std::collections::BTreeMap<u64, Bits<D>>,
}

impl<const D: usize, const A: usize> LogicRom<D, A> {
    pub fn new(table: std::collections::BTreeMap<Bits<A>, Bits<D>>) -> Self {
        Self {
            address: Default::default(),
            data: Default::default(),
            _table: table
                .into_iter()
                .filter(|(_, d)| d.any())
                .map(|(a, d)| (a.index() as u64, d))
                .collect(),
        }
    }
}

impl<const D: usize, const A: usize> Logic for LogicRom<D, A> {
    fn update(&mut self) {
        self.data.next = self
            ._table
            .get(&(self.address.val().index() as u64))
            .copied()
            .unwrap_or_default();
    }

    fn connect(&mut self) {
        self.data.connect();
    }

    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        for bit in 0..D {
            let terms: Vec<String> = self
                ._table
                .iter()
                .filter(|(_, d)| d.get_bit(bit))
                .map(|(a, _)| format!("(address == {A}'d{a})"))
                .collect();
            let rhs = if terms.is_empty() {
                "1'b0".to_string()
            } else {
                terms.join(" | ")
            };
            v.push_str(&format!("always @(*) data[{bit}] = {rhs};\n"));
        }
        Verilog::Custom(v)
    }
}

/// An `N`-bit event counter (`N = L + H`) whose increment is an `L`-bit
/// carry chain, not an `N`-bit one: the low `L` bits count, and the high `H`
/// bits step on the same edge as the low half wraps, told by a flag
/// registered one increment ahead (`lo_ones`: the low half is all ones). The
/// count is exact on every cycle (no ripple lag), and the longest path is
/// the wider of the two halves' chains, where a plain 32-bit counter is one
/// 32-bit chain (9 cells on xc7: one LUT and eight CARRY4).
///
/// `clear` wins over `inc`; the count starts at zero.
#[derive(LogicBlock)]
pub struct EventCounter<const N: usize, const L: usize, const H: usize> {
    pub clock: Signal<In, Clock>,
    pub inc: Signal<In, Bit>,
    pub clear: Signal<In, Bit>,
    pub count: Signal<Out, Bits<N>>,
    lo: DFF<Bits<L>>,
    hi: DFF<Bits<H>>,
    lo_ones: DFF<Bit>,
    lo_pen: Constant<Bits<L>>,
    shift: Constant<Bits<8>>,
}

impl<const N: usize, const L: usize, const H: usize> EventCounter<N, L, H> {
    pub fn new() -> Self {
        assert_eq!(N, L + H, "EventCounter: N must be L + H");
        assert!(L >= 2 && H >= 1, "EventCounter: L >= 2, H >= 1");
        Self {
            clock: Default::default(),
            inc: Default::default(),
            clear: Default::default(),
            count: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            lo_ones: Default::default(),
            // All ones but bit 0: the low half one increment before it wraps.
            lo_pen: Constant::new(!Bits::<L>::from(1u64)),
            shift: Constant::new((L as u64).into()),
        }
    }
}

impl<const N: usize, const L: usize, const H: usize> Default for EventCounter<N, L, H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize, const L: usize, const H: usize> Logic for EventCounter<N, L, H> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, lo, hi, lo_ones);
        self.count.next = (bit_cast::<N, H>(self.hi.q.val()) << self.shift.val())
            | bit_cast::<N, L>(self.lo.q.val());
        if self.clear.val() {
            self.lo.d.next = 0.into();
            self.hi.d.next = 0.into();
            self.lo_ones.d.next = false;
        } else if self.inc.val() {
            self.lo.d.next = self.lo.q.val() + 1;
            self.lo_ones.d.next = self.lo.q.val() == self.lo_pen.val();
            if self.lo_ones.q.val() {
                self.hi.d.next = self.hi.q.val() + 1;
            }
        }
    }
}

/// The 32-bit drop and event counters the blocks expose.
pub type Counter32 = EventCounter<32, 16, 16>;

/// A lane mask from a byte count plus a constant `add` (0 by default):
/// `keep = 2^(c + add) - 1` (all ones for `c + add >= K`), written as one
/// compare of `c` with a constant per lane (`c > lane - add`, or true): no
/// adder in front of the compares. (`roce_rx` keeps its two masks as
/// `!(ones << c)`: this form cost it 580 more LUTs at W=512 on xc7.)
#[derive(LogicBlock)]
pub struct CountKeep<const K: usize> {
    pub c: Signal<In, Bits<8>>,
    pub keep: Signal<Out, Bits<K>>,
    _add: usize,
}

impl<const K: usize> CountKeep<K> {
    pub fn new(add: usize) -> Self {
        Self {
            c: Default::default(),
            keep: Default::default(),
            _add: add,
        }
    }
}

impl<const K: usize> Default for CountKeep<K> {
    fn default() -> Self {
        Self::new(0)
    }
}

impl<const K: usize> Logic for CountKeep<K> {
    fn update(&mut self) {
        let c = self.c.val().index() + self._add;
        let mut k = Bits::<K>::default();
        for lane in 0..K.min(c) {
            k = k.replace_bit(lane, true);
        }
        self.keep.next = k;
    }
    fn connect(&mut self) {
        self.keep.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        for lane in 0..K {
            match lane.checked_sub(self._add) {
                Some(m) => v.push_str(&format!("always @(*) keep[{lane}] = c > 8'd{m};\n")),
                None => v.push_str(&format!("always @(*) keep[{lane}] = 1'b1;\n")),
            }
        }
        Verilog::Custom(v)
    }
}

/// A funnel shifter: `y = ({hi, lo} >> (d * lane))[N-1:0]`, i.e. output
/// lane `j` is lane `j + d` of the `2N`-bit word `{hi, lo}` (`lane` bits a
/// lane: 8 for data bytes, 1 for their keep bits). With `hi = lo` it is a
/// rotation. The DMA engines realign bytes with it (`hw/src/host/dma.rs`).
#[derive(LogicBlock)]
pub struct Funnel<const N: usize> {
    pub hi: Signal<In, Bits<N>>,
    pub lo: Signal<In, Bits<N>>,
    pub d: Signal<In, Bits<8>>,
    pub y: Signal<Out, Bits<N>>,
    _lane: usize,
}

impl<const N: usize> Funnel<N> {
    pub fn new(lane: usize) -> Self {
        assert!(
            lane >= 1 && N % lane == 0 && N / lane <= 128,
            "Funnel: lane width {lane} must divide N = {N} into at most 128 lanes"
        );
        Self {
            hi: Default::default(),
            lo: Default::default(),
            d: Default::default(),
            y: Default::default(),
            _lane: lane,
        }
    }

    /// The function, for rust-hdl's simulator and tests.
    pub fn eval(hi: Bits<N>, lo: Bits<N>, d: usize, lane: usize) -> Bits<N> {
        let mut y = Bits::<N>::default();
        for i in 0..N {
            let k = i + d * lane;
            let b = if k < N {
                lo.get_bit(k)
            } else if k < 2 * N {
                hi.get_bit(k - N)
            } else {
                false
            };
            y = y.replace_bit(i, b);
        }
        y
    }
}

impl<const N: usize> Logic for Funnel<N> {
    fn update(&mut self) {
        self.y.next = Self::eval(
            self.hi.val(),
            self.lo.val(),
            self.d.val().index(),
            self._lane,
        );
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "reg [{t}:0] t;\nalways @(*) begin\n    t = {{hi, lo}} >> (d * {lane});\n    y = t[{n}:0];\nend\n",
            t = 2 * N - 1,
            lane = self._lane,
            n = N - 1
        ))
    }
}

/// A lane-wise multiplexer: output lane `i` (`lane` bits, `N / lane`
/// lanes of `sel`) is lane `i` of `a` where `sel[i]` is set, else of `b`.
#[derive(LogicBlock)]
pub struct LaneMux<const N: usize, const L: usize> {
    pub a: Signal<In, Bits<N>>,
    pub b: Signal<In, Bits<N>>,
    pub sel: Signal<In, Bits<L>>,
    pub y: Signal<Out, Bits<N>>,
}

impl<const N: usize, const L: usize> LaneMux<N, L> {
    pub fn new() -> Self {
        assert!(
            L >= 1 && N % L == 0,
            "LaneMux: {L} lanes must divide {N} bits"
        );
        Self {
            a: Default::default(),
            b: Default::default(),
            sel: Default::default(),
            y: Default::default(),
        }
    }
}

impl<const N: usize, const L: usize> Default for LaneMux<N, L> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize, const L: usize> Logic for LaneMux<N, L> {
    fn update(&mut self) {
        let w = N / L;
        let mut y = Bits::<N>::default();
        for i in 0..N {
            let src = if self.sel.val().get_bit(i / w) {
                self.a.val()
            } else {
                self.b.val()
            };
            y = y.replace_bit(i, src.get_bit(i));
        }
        self.y.next = y;
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    fn hdl(&self) -> Verilog {
        let w = N / L;
        let mut v = String::new();
        for i in 0..L {
            let (hi, lo) = (i * w + w - 1, i * w);
            v.push_str(&format!(
                "always @(*) y[{hi}:{lo}] = sel[{i}] ? a[{hi}:{lo}] : b[{hi}:{lo}];\n"
            ));
        }
        Verilog::Custom(v)
    }
}

/// A flip-flop like rust-hdl's `DFF`, but without an initial value: Yosys
/// extracts a state machine only from a register without one, and then
/// re-encodes it (one-hot), so each state's decode is a flip-flop instead
/// of a compare of the binary code. Its user resets it explicitly
/// (`mr_tlb`'s walk engine).
#[derive(LogicBlock)]
pub struct StateReg<T: Synth> {
    pub d: Signal<In, T>,
    pub q: Signal<Out, T>,
    pub clock: Signal<In, Clock>,
}

impl<T: Synth> Default for StateReg<T> {
    fn default() -> Self {
        Self {
            d: Default::default(),
            q: Default::default(),
            clock: Default::default(),
        }
    }
}

impl<T: Synth> Logic for StateReg<T> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self.q.next = self.d.val()
        }
    }
    fn connect(&mut self) {
        self.q.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom("always @(posedge clock) begin\n   q <= d;\nend\n".into())
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "state_reg".into(),
            clock: "clock".into(),
            inputs: vec!["d".into()],
            outputs: vec!["q".into()],
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xor_matrix_rust_model() {
        // Rows: y0 = x0 ^ x1, y1 = x2, y2 = 0.
        let m = XorMatrix::<8, 3>::new(vec![vec![0b011], vec![0b100], vec![0]]);
        for x in 0..256u64 {
            let expect = ((x ^ (x >> 1)) & 1) | (((x >> 2) & 1) << 1);
            assert_eq!(m.eval(x.into()), Bits::<3>::from(expect), "x = {x:#b}");
        }
    }

    #[test]
    fn xor_matrix_synthesizes() {
        let mut m = XorMatrix::<70, 2>::new(vec![vec![u64::MAX, 0x3f], vec![1 << 5, 0]]);
        m.connect_all();
        let v = generate_verilog(&m);
        // Fast form: nine byte tables, the last 6 bits wide.
        assert!(v.contains("reg [1:0] tab8 [0:63];"), "{v}");
        assert!(v.contains("tab8[x[69:64]]"), "{v}");
        // Network form: a single-input row is a wire.
        assert!(v.contains("y[1] = x[5];"), "{v}");
        yosys_validate("xor_matrix", &v).unwrap();
    }

    #[test]
    fn masked_reg_zeroes_dropped_bytes() {
        let d: Bits<64> = 0x8877_6655_4433_2211u64.into();
        let keep: Bits<8> = 0b0000_0101u64.into();
        assert_eq!(
            MaskedReg::<64, 8>::masked(d, keep),
            Bits::<64>::from(0x0033_0011u64)
        );
    }

    #[test]
    fn masked_reg_synthesizes() {
        let mut m = MaskedReg::<64, 8>::new();
        m.connect_all();
        let v = generate_verilog(&m);
        assert!(
            v.contains("if (keep[7]) q[63:56] <= d[63:56]; else q[63:56] <= 8'h0;"),
            "{v}"
        );
        yosys_validate("masked_reg", &v).unwrap();
    }

    #[test]
    fn lut_ram_synthesizes() {
        let mut m = LutRam::<Bits<33>, 5>::new();
        m.connect_all();
        yosys_validate("lut_ram", &generate_verilog(&m)).unwrap();
    }

    #[test]
    fn event_counter_matches_a_plain_counter() {
        // A 6-bit counter (4 + 2) wraps its low half every 16 increments and
        // the whole count every 64: random increments and clears over 3000
        // cycles against a u64 model.
        type C = EventCounter<6, 4, 2>;
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<C>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<C>| {
            let mut x = sim.init()?;
            let mut model = 0u64;
            let mut rng = 0x2545_f491_4f6c_dd1du64;
            let mut wraps = 0;
            for cycle in 0..3000 {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let inc = rng & 3 != 0;
                let clear = cycle == 0 || rng % 701 == 0;
                x.inc.next = inc;
                x.clear.next = clear;
                wait_clock_cycle!(sim, clock, x);
                model = if clear { 0 } else { (model + inc as u64) & 63 };
                if inc && !clear && model == 0 {
                    wraps += 1;
                }
                sim_assert_eq!(sim, x.count.val().index() as u64, model, x);
            }
            sim_assert!(sim, wraps > 10, x);
            sim.done(x)
        });
        sim.run(Box::new(C::new()), 100_000).unwrap();
    }

    #[test]
    fn funnel_shifts_lanes() {
        let hi: Bits<32> = 0x4433_2211u64.into();
        let lo: Bits<32> = 0xddcc_bbaau64.into();
        assert_eq!(Funnel::<32>::eval(hi, lo, 0, 8), lo);
        assert_eq!(
            Funnel::<32>::eval(hi, lo, 1, 8),
            Bits::<32>::from(0x11dd_ccbbu64)
        );
        assert_eq!(
            Funnel::<32>::eval(hi, lo, 3, 8),
            Bits::<32>::from(0x3322_11ddu64)
        );
        let k: Bits<4> = 0b0011u64.into();
        assert_eq!(Funnel::<4>::eval(k, k, 3, 1), Bits::<4>::from(0b0110u64));
        let mut m = Funnel::<64>::new(8);
        m.connect_all();
        let v = generate_verilog(&m);
        assert!(v.contains("t = {hi, lo} >> (d * 8);"), "{v}");
        yosys_validate("funnel", &v).unwrap();
    }

    #[test]
    fn counter32_synthesizes() {
        let mut m = Counter32::new();
        m.connect_all();
        yosys_validate("counter32", &generate_verilog(&m)).unwrap();
    }
}
