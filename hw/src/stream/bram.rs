//! Block RAM leaf: simple dual-port memory with a synchronous write and a
//! registered read with a read enable (the output holds while the enable is
//! low), written so Yosys infers DP16KD on ECP5 and RAMB18/36 on 7-series.
//!
//! rust-hdl's `RAM` widget has no read enable; a pipeline that stalls needs
//! one so the word it read stays on the output. Read-during-write of one
//! address returns the old word.

use rust_hdl_core::prelude::*;
use rust_hdl_core::timing::TimingInfo;

/// `2^A` words of `D`, one write and one registered read per cycle.
#[derive(LogicBlock)]
pub struct Bram<D: Synth, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub write_enable: Signal<In, Bit>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_data: Signal<In, D>,
    pub read_enable: Signal<In, Bit>,
    pub read_address: Signal<In, Bits<A>>,
    pub read_data: Signal<Out, D>,
    _mem: Vec<D>,
    _out: D,
    /// Emit `(* ram_style = "distributed" *)`: LUT RAM and a register.
    _distributed: bool,
}

impl<D: Synth, const A: usize> Bram<D, A> {
    /// The same memory, asking synthesis for LUT RAM (`ram_style =
    /// "distributed"`): for a shallow table whose registered read feeds
    /// logic, where a block RAM's clock-to-out (5.8 ns on ECP5 without the
    /// output register) would set the clock.
    pub fn distributed() -> Self {
        Self {
            _distributed: true,
            ..Self::new()
        }
    }

    pub fn new() -> Self {
        assert!(
            (1..=16).contains(&A),
            "Bram: address width {A} out of 1..=16"
        );
        Self {
            clock: Default::default(),
            write_enable: Default::default(),
            write_address: Default::default(),
            write_data: Default::default(),
            read_enable: Default::default(),
            read_address: Default::default(),
            read_data: Default::default(),
            _mem: vec![D::default(); 1 << A],
            _out: D::default(),
            _distributed: false,
        }
    }
}

impl<D: Synth, const A: usize> Default for Bram<D, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Synth, const A: usize> Logic for Bram<D, A> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.read_enable.val() {
                self._out = self._mem[self.read_address.val().index()];
            }
            if self.write_enable.val() {
                self._mem[self.write_address.val().index()] = self.write_data.val();
            }
        }
        self.read_data.next = self._out;
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "{attr}reg [{msb}:0] mem [0:{last}];\n\nalways @(posedge clock) begin\n    if (write_enable) mem[write_address] <= write_data;\n    if (read_enable) read_data <= mem[read_address];\nend\n",
            attr = if self._distributed {
                "(* ram_style = \"distributed\" *) "
            } else {
                ""
            },
            msb = D::BITS - 1,
            last = (1usize << A) - 1
        ))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "bram".into(),
            clock: "clock".into(),
            inputs: vec![
                "write_enable".into(),
                "write_address".into(),
                "write_data".into(),
                "read_enable".into(),
                "read_address".into(),
            ],
            outputs: vec!["read_data".into()],
        }]
    }
}

/// Verilog define that selects the ECP5 form of [`BramOutReg`]:
/// `DP16KD` primitives with their output register (`REGMODE_B "OUTREG"`).
/// `scripts/synth --target ecp5` passes it to Yosys; without it (Verilator,
/// `yosys_validate`, xc7) the same module is plain Verilog with the same
/// two-cycle read.
pub const ECP5_DP16KD_DEFINE: &str = "ROCE_BRAM_ECP5_DP16KD";

/// `2^A` words of `D` with a two-stage registered read, the shape of a
/// block RAM with its output register on:
/// - `read_enable` (the RAM's clock enable): the RAM word at `read_address`
///   is latched inside the RAM;
/// - `output_enable` (the output register's enable): `read_data` takes the
///   latched word.
///
/// Both hold while their enable is low, so a stalled pipeline keeps its
/// word at either stage. A read issued with `read_enable` at one edge is on
/// `read_data` after an `output_enable` at a later edge (the next one in a
/// free-running pipeline: two cycles from address to data). One write per
/// cycle; read-during-write of one address latches the old word in the
/// plain form (the ECP5 primitive does not define a same-address collision
/// between its ports).
///
/// Yosys does not pack a register after an inferred ECP5 block RAM into
/// the primitive's output register (docs/BENCHMARKS.md, `mr_tlb`), and the
/// RAM's clock-to-out without it (5.8 ns) caps any block at ~145 MHz; under
/// [`ECP5_DP16KD_DEFINE`] this module instantiates `DP16KD` itself, one
/// column per 18/9/4/2/1 data bits for 1024/2048/4096/8192/16384 words
/// (no read mux), and for `A > 14` rows of 16384 × 1 with a registered row
/// select after the output registers.
#[derive(LogicBlock)]
pub struct BramOutReg<D: Synth, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub write_enable: Signal<In, Bit>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_data: Signal<In, D>,
    pub read_enable: Signal<In, Bit>,
    pub read_address: Signal<In, Bits<A>>,
    pub output_enable: Signal<In, Bit>,
    pub read_data: Signal<Out, D>,
    _mem: Vec<D>,
    _stage: D,
    _out: D,
    /// ECP5 form in 36-bit-wide `PDPW16KD` blocks ([`BramOutReg::new_wide`]).
    _wide: bool,
}

impl<D: Synth, const A: usize> BramOutReg<D, A> {
    pub fn new() -> Self {
        assert!(
            (1..=16).contains(&A),
            "BramOutReg: address width {A} out of 1..=16"
        );
        Self {
            clock: Default::default(),
            write_enable: Default::default(),
            write_address: Default::default(),
            write_data: Default::default(),
            read_enable: Default::default(),
            read_address: Default::default(),
            output_enable: Default::default(),
            read_data: Default::default(),
            _mem: vec![D::default(); 1 << A],
            _stage: D::default(),
            _out: D::default(),
            _wide: false,
        }
    }

    /// The same RAM, but under [`ECP5_DP16KD_DEFINE`] a shallow one
    /// (`A <= 9`) wider than 18 bits is built of 512 × 36 `PDPW16KD`
    /// blocks (one write port, one read port, read through the output
    /// register) instead of 1024 × 18 `DP16KD` columns: half the blocks
    /// for a wide word (a 166-bit word: 5 instead of 10), so the logic
    /// after the RAM gathers from fewer, closer blocks. The plain form is
    /// unchanged.
    pub fn new_wide() -> Self {
        Self {
            _wide: true,
            ..Self::new()
        }
    }
}

impl<D: Synth, const A: usize> Default for BramOutReg<D, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Synth, const A: usize> Logic for BramOutReg<D, A> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.output_enable.val() {
                self._out = self._stage;
            }
            if self.read_enable.val() {
                self._stage = self._mem[self.read_address.val().index()];
            }
            if self.write_enable.val() {
                self._mem[self.write_address.val().index()] = self.write_data.val();
            }
        }
        self.read_data.next = self._out;
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        let ports = Dp16kdPorts {
            label: "bram",
            we: "write_enable",
            wa: "write_address",
            wd: "write_data",
            ce: "read_enable",
            ra: "read_address",
            oce: "output_enable",
            q: "bram_q",
        };
        let ram = if self._wide && pdpw16kd_fits(D::BITS, A) {
            outreg_ram_wide(&ports, D::BITS, A)
        } else {
            outreg_ram(&ports, D::BITS, A, 1 << A, None)
        };
        Verilog::Custom(ram + "always @(*) read_data = bram_q;\n")
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "bram_outreg".into(),
            clock: "clock".into(),
            inputs: vec![
                "write_enable".into(),
                "write_address".into(),
                "write_data".into(),
                "read_enable".into(),
                "read_address".into(),
                "output_enable".into(),
            ],
            outputs: vec!["read_data".into()],
        }]
    }
}

/// The signals an ECP5 `DP16KD` block RAM (with its output register)
/// connects to: write enable / address / data, read clock enable /
/// address, output-register enable, and the name of the read-data wire
/// the Verilog declares. `label` prefixes every internal name, so several
/// RAMs can share a module.
pub struct Dp16kdPorts<'a> {
    pub label: &'a str,
    pub we: &'a str,
    pub wa: &'a str,
    pub wd: &'a str,
    pub ce: &'a str,
    pub ra: &'a str,
    pub oce: &'a str,
    pub q: &'a str,
}

/// DP16KD data width for `a` address bits: (bits per block, address bits
/// the block decodes).
fn dp16kd_geometry(a: usize) -> (usize, usize) {
    match a {
        0..=10 => (18, 10),
        11 => (9, 11),
        12 => (4, 12),
        13 => (2, 13),
        _ => (1, 14),
    }
}

/// A `w`-bit, `2^a`-deep RAM of ECP5 `DP16KD` blocks read through their
/// output register (`REGMODE_B = "OUTREG"`): columns for the width, rows
/// for `a > 14`. Every word starts at `init` (non-zero only in the 18-bit
/// mode of one row: `a <= 10`, `w <= 64`). Used by [`BramOutReg`] and by
/// the CSR block's context RAMs.
pub fn dp16kd_outreg(p: &Dp16kdPorts, w: usize, a: usize, init: u64) -> String {
    use std::fmt::Write;
    assert!((1..=16).contains(&a), "dp16kd_outreg: {a} address bits");
    let (bw, ab) = dp16kd_geometry(a);
    let cols = w.div_ceil(bw);
    let lo = a.min(14); // address bits inside one block
    let rows = 1usize << (a - lo);
    assert!(
        init == 0 || (bw == 18 && rows == 1 && w <= 64),
        "dp16kd_outreg: an initial value needs the 18-bit mode"
    );
    let l = p.label;
    // 14-bit port address: word address at [13 : 14 - ab], zeros above a
    // short address, and below it zeros (read) or the byte enables of the
    // 18-bit mode (write: both bytes on).
    let port_addr = |sig: &str, write: bool| -> String {
        let mut parts = Vec::new();
        if ab > lo {
            parts.push(format!("{}'b0", ab - lo));
        }
        parts.push(format!("{sig}[{}:0]", lo - 1));
        let below = 14 - ab;
        if below > 0 {
            if write && bw == 18 {
                parts.push(format!("{}'b0", below - 2));
                parts.push("2'b11".into());
            } else {
                parts.push(format!("{below}'b0"));
            }
        }
        format!("{{{}}}", parts.join(", "))
    };
    let pins = |pin: &str, sig: &str, n: usize| -> String {
        (0..n)
            .map(|i| format!(".{pin}{i}({sig}[{i}])"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let pad = cols * bw - w;
    let mut s = String::new();
    writeln!(
        s,
        "wire [{}:0] {l}_wpad = {};\nwire [13:0] {l}_ada = {};\nwire [13:0] {l}_adb = {};\nwire [{}:0] {l}_dout;",
        cols * bw - 1,
        if pad > 0 { format!("{{{pad}'b0, {}}}", p.wd) } else { p.wd.to_string() },
        port_addr(p.wa, true),
        port_addr(p.ra, false),
        rows * cols * bw - 1
    )
    .unwrap();
    for r in 0..rows {
        let we = if rows > 1 {
            format!("{} & ({}[{}:14] == {r})", p.we, p.wa, a - 1)
        } else {
            p.we.to_string()
        };
        for c in 0..cols {
            let word = (init >> (18 * c).min(63)) & if 18 * c < 64 { 0x3FFFF } else { 0 };
            let mut inits = String::new();
            if word != 0 {
                // 16 words of 18 bits per INITVAL, each in a 20-bit slot.
                let slot = format!("{word:05x}").repeat(16);
                for i in 0..64 {
                    write!(inits, ".INITVAL_{i:02X}(320'h{slot}), ").unwrap();
                }
            }
            let n = format!("{l}_{r}_{c}");
            let di = (0..18)
                .map(|i| {
                    if i < bw {
                        format!(".DIA{i}({l}_wpad[{}])", c * bw + i)
                    } else {
                        format!(".DIA{i}(1'b0)")
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            writeln!(
                s,
                "wire [17:0] {n}_dq;\nDP16KD #({inits}.DATA_WIDTH_A({bw}), .DATA_WIDTH_B({bw}), .REGMODE_A(\"NOREG\"), .REGMODE_B(\"OUTREG\"), .RESETMODE(\"SYNC\"), .ASYNC_RESET_RELEASE(\"SYNC\"), .CSDECODE_A(\"0b000\"), .CSDECODE_B(\"0b000\"), .WRITEMODE_A(\"NORMAL\"), .WRITEMODE_B(\"NORMAL\"), .GSR(\"DISABLED\")) {n} (\n    .CLKA(clock), .CEA(1'b1), .OCEA(1'b1), .WEA({we}), .RSTA(1'b0), .CSA0(1'b0), .CSA1(1'b0), .CSA2(1'b0),\n    {}, {di},\n    .CLKB(clock), .CEB({}), .OCEB({}), .WEB(1'b0), .RSTB(1'b0), .CSB0(1'b0), .CSB1(1'b0), .CSB2(1'b0),\n    {}, {}, {}\n);\nassign {l}_dout[{}:{}] = {n}_dq[{}:0];",
                pins("ADA", &format!("{l}_ada"), 14),
                p.ce,
                p.oce,
                pins("ADB", &format!("{l}_adb"), 14),
                (0..18).map(|i| format!(".DIB{i}(1'b0)")).collect::<Vec<_>>().join(", "),
                pins("DOB", &format!("{n}_dq"), 18),
                (r * cols + c) * bw + bw - 1,
                (r * cols + c) * bw,
                bw - 1
            )
            .unwrap();
        }
    }
    if rows > 1 {
        writeln!(
            s,
            "reg [{hb}:0] {l}_sel1, {l}_sel2;\nalways @(posedge clock) begin\n    if ({ce}) {l}_sel1 <= {ra}[{hi}:14];\n    if ({oce}) {l}_sel2 <= {l}_sel1;\nend\nwire [{}:0] {q} = {l}_dout[{l}_sel2*{} +: {w}];",
            w - 1,
            cols * bw,
            hb = a - 15,
            hi = a - 1,
            ce = p.ce,
            ra = p.ra,
            oce = p.oce,
            q = p.q,
        )
        .unwrap();
    } else {
        writeln!(s, "wire [{}:0] {} = {l}_dout[{}:0];", w - 1, p.q, w - 1).unwrap();
    }
    s
}

/// Whether [`pdpw16kd_outreg`] applies and saves blocks: `2^a <= 512`
/// words wider than one 18-bit `DP16KD` column.
pub fn pdpw16kd_fits(w: usize, a: usize) -> bool {
    (1..=9).contains(&a) && w > 18
}

/// A `w`-bit, `2^a`-deep RAM (`a <= 9`) of ECP5 `PDPW16KD` blocks (512 ×
/// 36, pseudo dual port: write port `ADW`/`DI`/`CEW`, read port
/// `ADR`/`DO`/`CER`) read through their output register (`REGMODE
/// "OUTREG"`, enable `OCER`): one block per 36 bits. nextpnr packs each as
/// a `DP16KD` in its 36-bit mode. The 36-bit read address is `ADR[13:5]`.
pub fn pdpw16kd_outreg(p: &Dp16kdPorts, w: usize, a: usize) -> String {
    use std::fmt::Write;
    assert!(
        pdpw16kd_fits(w, a),
        "pdpw16kd_outreg: {w} bits, {a} address bits"
    );
    let cols = w.div_ceil(36);
    let pad = cols * 36 - w;
    let l = p.label;
    let high = |n: usize| {
        if n > 0 {
            format!("{n}'b0, ")
        } else {
            String::new()
        }
    };
    let pins = |pin: &str, sig: &str, n: usize| -> String {
        (0..n)
            .map(|i| format!(".{pin}{i}({sig}[{i}])"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = String::new();
    writeln!(
        s,
        "wire [{}:0] {l}_wpad = {};\nwire [8:0] {l}_adw = {{{}{}[{}:0]}};\nwire [13:0] {l}_adr = {{{}{}[{}:0], 5'b0}};\nwire [{}:0] {l}_dout;",
        cols * 36 - 1,
        if pad > 0 { format!("{{{pad}'b0, {}}}", p.wd) } else { p.wd.to_string() },
        high(9 - a),
        p.wa,
        a - 1,
        high(9 - a),
        p.ra,
        a - 1,
        cols * 36 - 1
    )
    .unwrap();
    for c in 0..cols {
        let n = format!("{l}_w_{c}");
        let di = (0..36)
            .map(|i| format!(".DI{i}({l}_wpad[{}])", c * 36 + i))
            .collect::<Vec<_>>()
            .join(", ");
        writeln!(
            s,
            "wire [35:0] {n}_dq;\nPDPW16KD #(.DATA_WIDTH_W(36), .DATA_WIDTH_R(36), .REGMODE(\"OUTREG\"), .RESETMODE(\"SYNC\"), .ASYNC_RESET_RELEASE(\"SYNC\"), .CSDECODE_W(\"0b000\"), .CSDECODE_R(\"0b000\"), .GSR(\"DISABLED\")) {n} (\n    .CLKW(clock), .CEW({}), .CSW0(1'b0), .CSW1(1'b0), .CSW2(1'b0), .BE0(1'b1), .BE1(1'b1), .BE2(1'b1), .BE3(1'b1),\n    {}, {di},\n    .CLKR(clock), .CER({}), .OCER({}), .CSR0(1'b0), .CSR1(1'b0), .CSR2(1'b0), .RST(1'b0),\n    {}, {}\n);\nassign {l}_dout[{}:{}] = {n}_dq;",
            p.we,
            pins("ADW", &format!("{l}_adw"), 9),
            p.ce,
            p.oce,
            pins("ADR", &format!("{l}_adr"), 14),
            pins("DO", &format!("{n}_dq"), 36),
            c * 36 + 35,
            c * 36
        )
        .unwrap();
    }
    writeln!(s, "wire [{}:0] {} = {l}_dout[{}:0];", w - 1, p.q, w - 1).unwrap();
    s
}

/// [`outreg_ram`] with the `PDPW16KD` blocks of [`pdpw16kd_outreg`] as the
/// ECP5 form (`2^a` words, no initial value); the plain form is the same.
pub fn outreg_ram_wide(p: &Dp16kdPorts, w: usize, a: usize) -> String {
    let plain = outreg_ram(p, w, a, 1 << a, None);
    let (_, rest) = plain
        .split_once("`else\n")
        .expect("outreg_ram has an `else");
    format!(
        "`ifdef {ECP5_DP16KD_DEFINE}\n{}`else\n{rest}",
        pdpw16kd_outreg(p, w, a)
    )
}

/// A `w`-bit RAM of `words` words (at most `2^a`) read through an output
/// register, as Verilog text for a module body: under
/// [`ECP5_DP16KD_DEFINE`] the DP16KD blocks of [`dp16kd_outreg`], otherwise
/// plain Verilog with the same two-stage read (`ce` latches the RAM word,
/// `oce` moves it to `q`). `init`: every word's initial value (`None`
/// leaves the plain form's words undefined, and 0 in the blocks). Declares
/// `p.q` in both forms. Used by [`BramOutReg`] and the CSR block's context
/// RAMs.
pub fn outreg_ram(p: &Dp16kdPorts, w: usize, a: usize, words: usize, init: Option<u64>) -> String {
    use std::fmt::Write;
    assert!(
        words <= 1 << a,
        "outreg_ram: {words} words over {a} address bits"
    );
    let l = p.label;
    let m = w - 1;
    let mut s = format!("`ifdef {ECP5_DP16KD_DEFINE}\n");
    s.push_str(&dp16kd_outreg(p, w, a, init.unwrap_or(0)));
    writeln!(
        s,
        "`else\nreg [{m}:0] {l}_mem [0:{}];\nreg [{m}:0] {l}_stage;\nreg [{m}:0] {};",
        words - 1,
        p.q
    )
    .unwrap();
    if let Some(v) = init {
        writeln!(
            s,
            "integer {l}_i;\ninitial for ({l}_i = 0; {l}_i < {words}; {l}_i = {l}_i + 1) {l}_mem[{l}_i] = {w}'h{v:x};"
        )
        .unwrap();
    }
    writeln!(
        s,
        "always @(posedge clock) begin\n    if ({we}) {l}_mem[{wa}] <= {wd};\n    if ({ce}) {l}_stage <= {l}_mem[{ra}];\n    if ({oce}) {q} <= {l}_stage;\nend\n`endif",
        we = p.we,
        wa = p.wa,
        wd = p.wd,
        ce = p.ce,
        ra = p.ra,
        oce = p.oce,
        q = p.q
    )
    .unwrap();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bram_synthesizes() {
        let mut m = Bram::<Bits<40>, 9>::new();
        m.connect_all();
        let v = generate_verilog(&m);
        assert!(v.contains("if (read_enable) read_data <= mem[read_address];"));
        yosys_validate("bram", &v).unwrap();
    }

    #[test]
    fn bram_outreg_synthesizes() {
        let mut m = BramOutReg::<Bits<40>, 13>::new();
        m.connect_all();
        let v = generate_verilog(&m);
        assert!(v.contains("if (output_enable) bram_q <= bram_stage;"));
        assert!(v.contains(".REGMODE_B(\"OUTREG\")"));
        yosys_validate("bram_outreg", &v).unwrap();
    }

    #[test]
    fn bram_outreg_wide_synthesizes() {
        let mut m = BramOutReg::<Bits<166>, 8>::new_wide();
        m.connect_all();
        let v = generate_verilog(&m);
        assert!(v.contains("if (output_enable) bram_q <= bram_stage;"));
        assert_eq!(v.matches("PDPW16KD #(").count(), 5);
        assert!(v.contains(".REGMODE(\"OUTREG\")"));
        assert!(v.contains("wire [13:0] bram_adr = {1'b0, read_address[7:0], 5'b0};"));
        yosys_validate("bram_outreg_wide", &v).unwrap();
        // Deeper than 512 words: the DP16KD columns.
        let mut m = BramOutReg::<Bits<166>, 10>::new_wide();
        m.connect_all();
        assert!(!generate_verilog(&m).contains("PDPW16KD"));
    }
}
