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
//! - [`OnesStream`]: the IPv4 header checksum (RFC 1071), summed from the
//!   frame's beats as they pass.

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

/// The IPv4 header checksum (RFC 1071), summed from the frame stream as it
/// passes: `ok` is high when the one's-complement sum of the first
/// `2 * ihl` 16-bit words from the IP header's start is 0xFFFF (`ihl` is
/// the low nibble of the header's first byte, at most 15, so at most
/// [`CSUM_WORDS`] words). The header starts at byte `ip[vlan]` of the
/// frame, an even offset, so its words fill whole 16-bit lanes of a beat.
///
/// Inputs are the frame's beats (`d`, byte 0 in the low bits), each with
/// its index in the frame (`beat`), `last`, and the layout bit `vlan` (a VLAN tag)
/// valid from the beat that holds the header's first word on. One result
/// per frame: `tag_out` pulses with `ok` [`OnesStream::latency`] cycles
/// after the frame's last beat. Frames may follow back to back; beats of
/// one frame may have idle cycles between them.
///
/// Stages, none with a clock enable on the beat: the beat with, per lane,
/// the IHL the word needs (`ihl > i / 2` for word `i`; a table of the beat
/// index and layout) and the frame's IHL (from this beat when it holds
/// it); the masked words; one adder level per stage over the `W / 16`
/// lanes; the frame's running sum; fold and compare. Whatever the words
/// hold, at most [`CSUM_WORDS`] of them reach a frame's sum, so 21 bits
/// hold it.
#[derive(LogicBlock)]
pub struct OnesStream<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub d: Signal<In, Bits<W>>,
    pub valid: Signal<In, Bit>,
    pub last: Signal<In, Bit>,
    pub beat: Signal<In, Bits<16>>,
    pub vlan: Signal<In, Bit>,
    pub ok: Signal<Out, Bit>,
    pub tag_out: Signal<Out, Bit>,
    _ip: [usize; 2],
    /// Model state: the frame's sum, its IHL, and the results in flight.
    _sum: u64,
    _ihl: usize,
    _pipe: VecDeque<(bool, bool)>,
}

/// No word of a beat's lane is in the window.
const NEVER: usize = 31;

impl<const W: usize> OnesStream<W> {
    const LANES: usize = W / 16;

    /// `ip[vlan]`: byte offset of the IP header in the frame.
    pub fn new(ip: [usize; 2]) -> Self {
        assert!(W % 16 == 0 && Self::LANES.is_power_of_two());
        for o in ip {
            assert_eq!(o % 2, 0, "OnesStream: the IP header at an odd offset");
            assert!((o + 2 * CSUM_WORDS).div_ceil(W / 8) <= 16);
        }
        Self {
            clock: Default::default(),
            reset: Default::default(),
            d: Default::default(),
            valid: Default::default(),
            last: Default::default(),
            beat: Default::default(),
            vlan: Default::default(),
            ok: Default::default(),
            tag_out: Default::default(),
            _ip: ip,
            _sum: 0,
            _ihl: 0,
            _pipe: std::iter::repeat_n((false, false), Self::latency()).collect(),
        }
    }

    /// Cycles from a frame's last beat on the inputs to its `tag_out`.
    pub fn latency() -> usize {
        // Lane table, mask, adder levels, running sum, compare.
        3 + Self::LANES.trailing_zeros() as usize + 1
    }

    /// Per lane of beat `k` in layout `t`: the least IHL that puts the
    /// lane's word in the sum (`i / 2 + 1` for word `i`), or [`NEVER`].
    fn need(&self, t: usize, k: usize) -> Vec<usize> {
        (0..Self::LANES)
            .map(|j| {
                let at = k * W / 8 + 2 * j;
                match at.checked_sub(self._ip[t]) {
                    Some(o) if o / 2 < CSUM_WORDS => o / 4 + 1,
                    _ => NEVER,
                }
            })
            .collect()
    }

    /// Beat and byte lane of the IHL nibble in layout `t`.
    fn ihl_at(&self, t: usize) -> (usize, usize) {
        (self._ip[t] / (W / 8), self._ip[t] % (W / 8))
    }

    /// Beats of the window in either layout: later beats need nothing.
    fn beats(&self) -> usize {
        (self._ip.iter().max().unwrap() + 2 * CSUM_WORDS).div_ceil(W / 8)
    }
}

impl<const W: usize> Logic for OnesStream<W> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let mut out = (false, false);
            if self.reset.val() {
                self._sum = 0;
            } else if self.valid.val() {
                let t = self.vlan.val() as usize;
                let k = self.beat.val().index();
                let d = self.d.val();
                let (kb, lb) = self.ihl_at(t);
                if k == kb {
                    self._ihl = (byte_of(&d, lb) & 15) as usize;
                }
                for (j, n) in self.need(t, k).into_iter().enumerate() {
                    if n != NEVER && self._ihl >= n {
                        self._sum += byte_of(&d, 2 * j) | byte_of(&d, 2 * j + 1) << 8;
                    }
                }
                if self.last.val() {
                    let s = (self._sum & 0xFFFF) + (self._sum >> 16);
                    out = (s == 0xFFFF, true);
                    self._sum = 0;
                }
            }
            self._pipe.push_back(out);
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
        let l = Self::LANES;
        // Bits of the beat index the table reads; `near`: the rest are 0.
        let kbits = ((usize::BITS - (self.beats() - 1).leading_zeros()) as usize).max(1);
        let mut b = format!(
            "reg [{}:0] dp;\nreg vp, lp;\nreg [3:0] ihlp;\nreg [{}:0] needp;\nreg [{}:0] need_c;\n\
             wire near = beat[15:{kbits}] == {}'d0;\n",
            W - 1,
            5 * l - 1,
            5 * l - 1,
            16 - kbits
        );
        // The lane table: per layout and beat, each lane's least IHL.
        b.push_str(&format!(
            "always @(*) begin\n    need_c = {{{l}{{5'd{NEVER}}}}};\n    if (near) case ({{vlan, beat[{}:0]}})\n",
            kbits - 1
        ));
        for t in 0..2 {
            for k in 0..self.beats() {
                let n = self.need(t, k);
                if n.iter().all(|&x| x == NEVER) {
                    continue;
                }
                let parts: Vec<String> = n.iter().rev().map(|x| format!("5'd{x}")).collect();
                b.push_str(&format!(
                    "        {}'d{}: need_c = {{{}}};\n",
                    kbits + 1,
                    (t << kbits) | k,
                    parts.join(", ")
                ));
            }
        }
        b.push_str("        default: ;\n    endcase\nend\n");
        let ((k0, l0), (k1, l1)) = (self.ihl_at(0), self.ihl_at(1));
        b.push_str(&format!(
            "always @(posedge clock) begin\n    dp <= d;\n    vp <= valid;\n    lp <= valid & last;\n    needp <= need_c;\n\
             \x20   if (valid & near & !vlan & beat[{kb}:0] == {kw}'d{k0}) ihlp <= d[{}:{}];\n\
             \x20   if (valid & near & vlan & beat[{kb}:0] == {kw}'d{k1}) ihlp <= d[{}:{}];\nend\n",
            8 * l0 + 3,
            8 * l0,
            8 * l1 + 3,
            8 * l1,
            kb = kbits - 1,
            kw = kbits
        ));
        // The masked words.
        b.push_str(&format!(
            "reg [15:0] w0 [0:{}];\nreg t0;\nalways @(posedge clock) begin\n    t0 <= lp;\n",
            l - 1
        ));
        for j in 0..l {
            b.push_str(&format!(
                "    w0[{j}] <= (vp & ({{1'b0, ihlp}} >= needp[{}:{}])) ? dp[{}:{}] : 16'h0;\n",
                5 * j + 4,
                5 * j,
                16 * j + 15,
                16 * j
            ));
        }
        b.push_str("end\n");
        // One adder level per stage.
        let (mut n, mut level) = (l, 0);
        while n > 1 {
            let m = n / 2;
            let lv = level + 1;
            b.push_str(&format!(
                "reg [{}:0] w{lv} [0:{}];\nreg t{lv};\nalways @(posedge clock) begin\n    t{lv} <= t{level};\n",
                16 + level,
                m - 1
            ));
            for j in 0..m {
                b.push_str(&format!(
                    "    w{lv}[{j}] <= w{level}[{}] + w{level}[{}];\n",
                    2 * j,
                    2 * j + 1
                ));
            }
            b.push_str("end\n");
            n = m;
            level = lv;
        }
        // The frame's running sum, cleared after its last beat, then the
        // fold, as a compare: the sum is under 2^21 (30 words), so its top
        // part `h` is under 2^5 and the folded sum is 0xFFFF exactly when
        // the first fold `low + h` is, that is when `low == 0xFFFF - h`:
        // the top 11 bits of `low` ones and its low 5 bits `~h`. No add.
        b.push_str(&format!(
            "reg [20:0] acc, fin;\nreg done;\nwire [20:0] nxt = acc + w{level}[0];\n\
             always @(posedge clock) begin\n    fin <= nxt;\n    done <= t{level} & !reset;\n\
             \x20   if (reset | t{level}) acc <= 21'd0;\n    else acc <= nxt;\nend\n\
             reg okr, tr;\n\
             always @(posedge clock) begin\n    okr <= (fin[15:5] == 11'h7ff) & (fin[4:0] == ~fin[20:16]);\n    tr <= done;\nend\n\
             always @(*) begin\n    ok = okr;\n    tag_out = tr;\nend\n"
        ));
        assert_eq!(level + 4, Self::latency());
        Verilog::Custom(b)
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "ones_stream".into(),
            clock: "clock".into(),
            inputs: vec![
                "reset".into(),
                "d".into(),
                "valid".into(),
                "last".into(),
                "beat".into(),
                "vlan".into(),
            ],
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
        let mut s = OnesStream::<64>::new([14, 18]);
        s.connect_all();
        yosys_validate("rx_ones_stream", &generate_verilog(&s)).unwrap();
        let mut s = OnesStream::<512>::new([14, 18]);
        s.connect_all();
        yosys_validate("rx_ones_stream_512", &generate_verilog(&s)).unwrap();
    }

    #[test]
    fn byte_select_is_big_endian() {
        let a = ByteSelect::<64, 16>::new([1, 2, 3, 7]);
        let x = Bits::<64>::from(0x0807_0605_0403_0201u64);
        assert_eq!(a.select(&x, 1), Bits::<16>::from(0x0304u64));
        assert_eq!(a.select(&x, 3), Bits::<16>::from(0x0800u64));
    }
}
