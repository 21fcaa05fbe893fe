//! Leaves of the RoCE v2 receive path (`ByteRealign` also serves the
//! transmit path) whose Verilog is generated in Rust
//! from `roce-wire` tables (DESIGN §4: kernels cannot pick bytes by a
//! computed offset or assemble vectors byte by byte). Each is a few lines of
//! Verilog plus an `update()` that computes the same function for rust-hdl's
//! simulator; all control lives in [`crate::roce_rx`].
//!
//! - [`ByteSelect`]: a big-endian field of `M / 8` bytes at one of up to
//!   four byte offsets of `x` (the frame layouts: VLAN tag or not, IPv4 or
//!   IPv6), picked by `sel`.
//! - [`ByteRealign`]: `W / 8` bytes starting at byte `shift` of the pair
//!   (`prev`, `cur`), for the shifts a layout can produce. Generic: any
//!   block that moves a stream by a per-packet byte offset can use it.
//! - [`HeaderCapture`]: the first beats of a frame, as one header vector.
//! - [`BeatMask`]: per beat and layout, an AND and an OR mask over `tdata`
//!   (the ICRC's masked fields and the Ethernet header stand-in).
//! - [`OnesSum`]: a pipelined RFC 1071 check over up to 30 16-bit words.

use rust_hdl_core::prelude::*;
use rust_hdl_core::timing::TimingInfo;
use std::collections::VecDeque;

/// Width of the header vector [`HeaderCapture`] produces (128 bytes).
pub const HDR_BITS: usize = 1024;

fn byte_of<const N: usize>(x: &Bits<N>, i: usize) -> u64 {
    if 8 * i + 8 > N {
        return 0;
    }
    (0..8).fold(0, |v, b| v | (x.get_bit(8 * i + b) as u64) << b)
}

fn put_byte<const N: usize>(mut y: Bits<N>, i: usize, v: u64) -> Bits<N> {
    for b in 0..8 {
        if 8 * i + b < N {
            y = y.replace_bit(8 * i + b, (v >> b) & 1 == 1);
        }
    }
    y
}

fn hex_of(bytes: &[u8], bits: usize) -> String {
    let mut s = String::new();
    for b in bytes.iter().rev() {
        s.push_str(&format!("{b:02x}"));
    }
    format!("{bits}'h{s}")
}

/// A big-endian field: `M / 8` bytes of `x` starting at `offsets[sel]`.
#[derive(LogicBlock)]
pub struct ByteSelect<const N: usize, const M: usize> {
    pub x: Signal<In, Bits<N>>,
    pub sel: Signal<In, Bits<2>>,
    pub y: Signal<Out, Bits<M>>,
    _offsets: [usize; 4],
    /// `x` holds a big-endian byte string (byte 0 in the top bits), as
    /// another `ByteSelect` delivers it.
    _be: bool,
}

impl<const N: usize, const M: usize> ByteSelect<N, M> {
    /// Like [`ByteSelect::new`], over a big-endian byte string `x`.
    pub fn new_be(offsets: [usize; 4]) -> Self {
        let mut s = Self::new(offsets);
        s._be = true;
        s
    }
    /// Position in `x` (little-endian byte index) of string byte `i`.
    fn lane(&self, i: usize) -> Option<usize> {
        if !self._be {
            Some(i)
        } else {
            (N / 8).checked_sub(i + 1)
        }
    }
    /// One offset per `sel` value (layout); bytes past `N` read as zero.
    pub fn new(offsets: [usize; 4]) -> Self {
        assert_eq!(M % 8, 0, "ByteSelect: M must be whole bytes");
        Self {
            x: Default::default(),
            sel: Default::default(),
            y: Default::default(),
            _offsets: offsets,
            _be: false,
        }
    }
    /// The same offset for every layout.
    pub fn fixed(offset: usize) -> Self {
        Self::new([offset; 4])
    }
    /// The function, for rust-hdl's simulator.
    pub fn select(&self, x: &Bits<N>, sel: usize) -> Bits<M> {
        let off = self._offsets[sel & 3];
        let mut y = Bits::<M>::default();
        for j in 0..M / 8 {
            let v = self.lane(off + j).map_or(0, |i| byte_of(x, i));
            y = put_byte(y, M / 8 - 1 - j, v);
        }
        y
    }
    fn concat(&self, off: usize) -> String {
        let parts: Vec<String> = (0..M / 8)
            .map(|j| {
                let i = self.lane(off + j).unwrap_or(N);
                if 8 * i + 8 <= N {
                    format!("x[{}:{}]", 8 * i + 7, 8 * i)
                } else {
                    "8'h00".to_string()
                }
            })
            .collect();
        format!("{{{}}}", parts.join(", "))
    }
}

impl<const N: usize, const M: usize> Logic for ByteSelect<N, M> {
    fn update(&mut self) {
        self.y.next = self.select(&self.x.val(), self.sel.val().index());
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        let o = self._offsets;
        if o.iter().all(|&v| v == o[0]) {
            return Verilog::Custom(format!("always @(*) y = {};\n", self.concat(o[0])));
        }
        let mut b = String::from("always @(*) begin\n    case (sel)\n");
        for (k, &off) in o.iter().enumerate() {
            b.push_str(&format!("    2'd{k}: y = {};\n", self.concat(off)));
        }
        b.push_str("    endcase\nend\n");
        Verilog::Custom(b)
    }
}

/// Bytes `s .. s + K` of the byte string `prev ++ cur` (byte 0 in the
/// low bits of `prev`): the funnel that [`ByteRealign`] and the TX
/// aligners (`roce_tx::FrontMerge`, `roce_tx::EthDrop`) pick between.
pub(crate) fn funnel<const W: usize>(prev: Bits<W>, cur: Bits<W>, s: usize) -> Bits<W> {
    let mut y = Bits::<W>::default();
    for b in 0..W {
        let at = b + 8 * s;
        let v = if at < W {
            prev.get_bit(at)
        } else {
            cur.get_bit(at - W)
        };
        y = y.replace_bit(b, v);
    }
    y
}

/// [`funnel`] as a Verilog expression of `prev` and `cur`, for `s` in
/// 1..K-1 (`s = 0` is `prev`).
pub(crate) fn funnel_verilog(w: usize, s: usize) -> String {
    format!("{{cur[{}:0], prev[{}:{}]}}", 8 * s - 1, w - 1, 8 * s)
}

/// `y` = bytes `shift .. shift + K` of the byte string `prev ++ cur`.
#[derive(LogicBlock)]
pub struct ByteRealign<const W: usize, const K: usize> {
    pub prev: Signal<In, Bits<W>>,
    pub cur: Signal<In, Bits<W>>,
    pub shift: Signal<In, Bits<8>>,
    pub y: Signal<Out, Bits<W>>,
    _shifts: Vec<usize>,
}

impl<const W: usize, const K: usize> ByteRealign<W, K> {
    /// `shifts`: every shift the block must support (others give `prev`).
    pub fn new(shifts: &[usize]) -> Self {
        assert_eq!(K * 8, W);
        let mut s: Vec<usize> = shifts.iter().map(|&v| v % K).collect();
        s.sort_unstable();
        s.dedup();
        Self {
            prev: Default::default(),
            cur: Default::default(),
            shift: Default::default(),
            y: Default::default(),
            _shifts: s,
        }
    }
}

impl<const W: usize, const K: usize> Logic for ByteRealign<W, K> {
    fn update(&mut self) {
        let s = self.shift.val().index();
        let s = if self._shifts.contains(&s) { s } else { 0 };
        self.y.next = funnel(self.prev.val(), self.cur.val(), s);
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut b = String::from("always @(*) begin\n    case (shift)\n");
        for &s in self._shifts.iter().filter(|&&s| s != 0) {
            b.push_str(&format!("    8'd{s}: y = {};\n", funnel_verilog(W, s)));
        }
        b.push_str("    default: y = prev;\n    endcase\nend\n");
        Verilog::Custom(b)
    }
}

/// Holds the first `slots` beats of the current frame: each beat taken
/// (`load`) is stored in the slot of its index within the frame; `last`
/// with a load ends the frame, so the next load is beat 0 again. `v` is
/// the slots side by side (byte `i` of the frame at bits `8i+7:8i`), zero
/// past the last slot. The beat index is kept one-hot in a register, so a
/// slot's load enable is one AND of `load` with a flip-flop.
#[derive(LogicBlock)]
pub struct HeaderCapture<const W: usize, const K: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub load: Signal<In, Bit>,
    pub last: Signal<In, Bit>,
    pub d: Signal<In, Bits<W>>,
    pub v: Signal<Out, Bits<HDR_BITS>>,
    _slots: Vec<Bits<W>>,
    /// Index of the next beat within the frame (saturating past the slots).
    _next: usize,
}

impl<const W: usize, const K: usize> HeaderCapture<W, K> {
    /// Keeps `bytes` header bytes (rounded up to whole beats, at most 128).
    pub fn new(bytes: usize) -> Self {
        let slots = bytes.div_ceil(K);
        assert!(slots * K <= HDR_BITS / 8, "header capture over 128 bytes");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            load: Default::default(),
            last: Default::default(),
            d: Default::default(),
            v: Default::default(),
            _slots: vec![Bits::default(); slots],
            _next: 0,
        }
    }
}

impl<const W: usize, const K: usize> Logic for HeaderCapture<W, K> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.reset.val() {
                self._next = 0;
            } else if self.load.val() {
                if let Some(slot) = self._slots.get_mut(self._next) {
                    *slot = self.d.val();
                }
                self._next = if self.last.val() {
                    0
                } else {
                    (self._next + 1).min(self._slots.len())
                };
            }
        }
        let mut v = Bits::<HDR_BITS>::default();
        for (s, slot) in self._slots.iter().enumerate() {
            for i in 0..K {
                v = put_byte(v, s * K + i, byte_of(slot, i));
            }
        }
        self.v.next = v;
    }
    fn connect(&mut self) {
        self.v.connect();
    }
    fn hdl(&self) -> Verilog {
        let n = self._slots.len();
        let mut b = String::new();
        for s in 0..n {
            b.push_str(&format!("reg [{}:0] slot{s};\n", W - 1));
        }
        // at[s]: the next beat is beat s (at[n]: past the slots).
        b.push_str(&format!(
            "reg [{n}:0] at = {w}'d1;\n\
             always @(posedge clock) begin\n\
             \x20   if (reset) at <= {w}'d1;\n\
             \x20   else if (load) at <= last ? {w}'d1 : (at[{n}] ? at : {{at[{m}:0], 1'b0}});\n\
             end\n\
             always @(posedge clock) begin\n",
            w = n + 1,
            m = n - 1
        ));
        for s in 0..n {
            b.push_str(&format!("    if (load & at[{s}]) slot{s} <= d;\n"));
        }
        b.push_str("end\n");
        let parts: Vec<String> = (0..n).rev().map(|s| format!("slot{s}")).collect();
        let pad = HDR_BITS - n * W;
        if pad > 0 {
            b.push_str(&format!(
                "always @(*) v = {{{pad}'h0, {}}};\n",
                parts.join(", ")
            ));
        } else {
            b.push_str(&format!("always @(*) v = {{{}}};\n", parts.join(", ")));
        }
        Verilog::Custom(b)
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "header_capture".into(),
            clock: "clock".into(),
            inputs: vec!["reset".into(), "load".into(), "last".into(), "d".into()],
            outputs: vec!["v".into()],
        }]
    }
}

/// Per beat index and layout: `y = (tdata & and_m) | or_m`. Beats past the
/// table pass unchanged. `table[layout][beat] = (and bytes, or bytes)`.
/// The beat index is five bits, saturated at 31 by the caller (registered
/// there, so the decode reads five flip-flops); a table has fewer rows.
#[derive(LogicBlock)]
pub struct BeatMask<const W: usize, const K: usize> {
    pub beat: Signal<In, Bits<5>>,
    pub sel: Signal<In, Bits<2>>,
    pub and_m: Signal<Out, Bits<W>>,
    pub or_m: Signal<Out, Bits<W>>,
    _table: Vec<Vec<(Vec<u8>, Vec<u8>)>>,
}

impl<const W: usize, const K: usize> BeatMask<W, K> {
    pub fn new(table: Vec<Vec<(Vec<u8>, Vec<u8>)>>) -> Self {
        assert_eq!(table.len(), 4);
        for rows in &table {
            assert!(rows.len() < 31, "BeatMask: {} rows", rows.len());
            for (a, o) in rows {
                assert_eq!((a.len(), o.len()), (K, K));
            }
        }
        Self {
            beat: Default::default(),
            sel: Default::default(),
            and_m: Default::default(),
            or_m: Default::default(),
            _table: table,
        }
    }
}

impl<const W: usize, const K: usize> Logic for BeatMask<W, K> {
    fn update(&mut self) {
        let rows = &self._table[self.sel.val().index() & 3];
        let b = self.beat.val().index();
        let (mut a, mut o) = (Bits::<W>::default(), Bits::<W>::default());
        for i in 0..K {
            let (av, ov) = rows.get(b).map_or((0xFF, 0), |(x, y)| (x[i], y[i]));
            a = put_byte(a, i, av as u64);
            o = put_byte(o, i, ov as u64);
        }
        self.and_m.next = a;
        self.or_m.next = o;
    }
    fn connect(&mut self) {
        self.and_m.connect();
        self.or_m.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut b = format!(
            "always @(*) begin\n    and_m = {{{W}{{1'b1}}}};\n    or_m = {W}'h0;\n    case (sel)\n"
        );
        for (k, rows) in self._table.iter().enumerate() {
            b.push_str(&format!("    2'd{k}: case (beat)\n"));
            for (i, (a, o)) in rows.iter().enumerate() {
                b.push_str(&format!(
                    "        5'd{i}: begin and_m = {}; or_m = {}; end\n",
                    hex_of(a, W),
                    hex_of(o, W)
                ));
            }
            b.push_str("        default: ;\n        endcase\n");
        }
        b.push_str("    endcase\nend\n");
        Verilog::Custom(b)
    }
}

/// Words in the IPv4 checksum window (IHL up to 15).
pub const CSUM_WORDS: usize = 30;

/// Pipelined RFC 1071 check: `ok` is high when the one's-complement sum of
/// the first `2 * ihl` 16-bit words of `x` is 0xFFFF (`x` big-endian: its
/// first byte in the top bits, as [`ByteSelect`] delivers a byte string). The
/// inputs are registered first (they arrive through the parser's field
/// selects, and the length mask drives every word's reset), then one adder
/// level per stage; `tag` travels alongside. Latency [`OnesSum::LATENCY`].
#[derive(LogicBlock)]
pub struct OnesSum {
    pub clock: Signal<In, Clock>,
    pub x: Signal<In, Bits<{ CSUM_WORDS * 16 }>>,
    pub ihl: Signal<In, Bits<4>>,
    pub tag_in: Signal<In, Bit>,
    pub ok: Signal<Out, Bit>,
    pub tag_out: Signal<Out, Bit>,
    _pipe: VecDeque<(bool, bool)>,
}

impl OnesSum {
    /// Input register, mask stage, five adder levels (30 → 1), fold and
    /// compare.
    pub const LATENCY: usize = 8;

    pub fn new() -> Self {
        Self {
            clock: Default::default(),
            x: Default::default(),
            ihl: Default::default(),
            tag_in: Default::default(),
            ok: Default::default(),
            tag_out: Default::default(),
            _pipe: std::iter::repeat_n((false, false), Self::LATENCY).collect(),
        }
    }

    /// The function, for rust-hdl's simulator.
    pub fn check(x: &Bits<{ CSUM_WORDS * 16 }>, ihl: usize) -> bool {
        let mut sum: u64 = 0;
        for i in 0..(2 * ihl).min(CSUM_WORDS) {
            let last = 2 * CSUM_WORDS - 1;
            sum += byte_of(x, last - 2 * i) << 8 | byte_of(x, last - 2 * i - 1);
        }
        let s = (sum & 0xFFFF) + (sum >> 16);
        let s = (s & 0xFFFF) + (s >> 16);
        s == 0xFFFF
    }
}

impl Default for OnesSum {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for OnesSum {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let v = (
                Self::check(&self.x.val(), self.ihl.val().index()),
                self.tag_in.val(),
            );
            self._pipe.push_back(v);
            self._pipe.pop_front();
        }
        let (ok, tag) = *self._pipe.front().unwrap();
        self.ok.next = ok;
        self.tag_out.next = tag;
    }
    fn connect(&mut self) {
        self.ok.connect();
        self.tag_out.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut b = String::new();
        let mut n = CSUM_WORDS;
        b.push_str(&format!(
            "reg [{}:0] xr;\nreg [3:0] ihlr;\nreg ti;\nalways @(posedge clock) begin\n    xr <= x;\n    ihlr <= ihl;\n    ti <= tag_in;\nend\n",
            CSUM_WORDS * 16 - 1
        ));
        b.push_str(&format!("reg [15:0] w0 [0:{}];\nreg t0;\n", n - 1));
        b.push_str("integer i;\nalways @(posedge clock) begin\n    t0 <= ti;\n");
        for i in 0..n {
            // x is big-endian (byte 0 in the top bits, as ByteSelect gives it).
            let top = CSUM_WORDS * 16 - 1 - 16 * i;
            b.push_str(&format!(
                "    w0[{i}] <= (ihlr > 4'd{}) ? xr[{top}:{}] : 16'h0;\n",
                i / 2,
                top - 15
            ));
        }
        b.push_str("end\n");
        let mut level = 0;
        while n > 1 {
            let m = n.div_ceil(2);
            let wi = 16 + level;
            let wo = wi + 1;
            let l = level + 1;
            b.push_str(&format!(
                "reg [{}:0] w{l} [0:{}];\nreg t{l};\nalways @(posedge clock) begin\n    t{l} <= t{level};\n",
                wo - 1,
                m - 1
            ));
            for j in 0..m {
                if 2 * j + 1 < n {
                    b.push_str(&format!(
                        "    w{l}[{j}] <= w{level}[{}] + w{level}[{}];\n",
                        2 * j,
                        2 * j + 1
                    ));
                } else {
                    b.push_str(&format!("    w{l}[{j}] <= w{level}[{}];\n", 2 * j));
                }
            }
            b.push_str("end\n");
            n = m;
            level = l;
        }
        let wl = 16 + level;
        b.push_str(&format!(
            // The folded sum is 0xFFFF exactly when the first fold is: the
            // top part is under 2^5, so a first fold past 0xFFFF folds to
            // at most 32. One add, no second fold.
            "wire [16:0] f1 = w{level}[0][15:0] + w{level}[0][{}:16];\nreg okr, tr;\nalways @(posedge clock) begin\n    okr <= (f1 == 17'h0ffff);\n    tr <= t{level};\nend\nalways @(*) begin\n    ok = okr;\n    tag_out = tr;\nend\n",
            wl - 1
        ));
        assert_eq!(level + 3, Self::LATENCY);
        Verilog::Custom(b)
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "ones_sum".into(),
            clock: "clock".into(),
            inputs: vec!["x".into(), "ihl".into(), "tag_in".into()],
            outputs: vec!["ok".into(), "tag_out".into()],
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rx_leaves_synthesize() {
        let mut a = ByteSelect::<1024, 24>::new([1, 2, 3, 127]);
        a.connect_all();
        yosys_validate("rx_byte_select", &generate_verilog(&a)).unwrap();
        let mut r = ByteRealign::<64, 8>::new(&[2, 6]);
        r.connect_all();
        yosys_validate("rx_realign", &generate_verilog(&r)).unwrap();
        let mut c = HeaderCapture::<64, 8>::new(106);
        c.connect_all();
        yosys_validate("rx_capture", &generate_verilog(&c)).unwrap();
        let mut s = OnesSum::new();
        s.connect_all();
        yosys_validate("rx_ones_sum", &generate_verilog(&s)).unwrap();
    }

    #[test]
    fn byte_select_is_big_endian() {
        let a = ByteSelect::<64, 16>::new([1, 2, 3, 7]);
        let x = Bits::<64>::from(0x0807_0605_0403_0201u64);
        assert_eq!(a.select(&x, 1), Bits::<16>::from(0x0304u64));
        assert_eq!(a.select(&x, 3), Bits::<16>::from(0x0800u64));
    }
}
