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
}

impl<D: Synth, const A: usize> Bram<D, A> {
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
            "reg [{msb}:0] mem [0:{last}];\n\nalways @(posedge clock) begin\n    if (write_enable) mem[write_address] <= write_data;\n    if (read_enable) read_data <= mem[read_address];\nend\n",
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
        }
    }

    /// DP16KD data width for this depth: (bits per block, address bits the
    /// block decodes).
    fn geometry() -> (usize, usize) {
        match A {
            0..=10 => (18, 10),
            11 => (9, 11),
            12 => (4, 12),
            13 => (2, 13),
            _ => (1, 14),
        }
    }

    /// The ECP5 form: DP16KD columns (and rows for `A > 14`).
    fn dp16kd_verilog() -> String {
        let w = D::BITS;
        let (bw, ab) = Self::geometry();
        let cols = w.div_ceil(bw);
        let lo = A.min(14); // address bits inside one block
        let rows = 1usize << (A - lo);
        // 14-bit port address: word address at [13 : 14 - ab], zeros above
        // a short address, and below it zeros (read) or the byte enables of
        // the 18-bit mode (write: both bytes on).
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
        let pad = cols * bw - w;
        let wpad = if pad > 0 {
            format!("{{{pad}'b0, write_data}}")
        } else {
            "write_data".into()
        };
        let di = if bw < 18 {
            format!("{{{}'b0, wpad[c*{bw} +: {bw}]}}", 18 - bw)
        } else {
            format!("wpad[c*{bw} +: {bw}]")
        };
        let pins = |p: &str, sig: &str, n: usize| -> String {
            (0..n)
                .map(|i| format!(".{p}{i}({sig}[{i}])"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (row_we, row_sel, out) = if rows > 1 {
            let hi = A - 1;
            (
                format!("write_enable & (write_address[{hi}:14] == r)"),
                format!(
                    "reg [{hb}:0] sel1, sel2;\nalways @(posedge clock) begin\n    if (read_enable) sel1 <= read_address[{hi}:14];\n    if (output_enable) sel2 <= sel1;\nend\n",
                    hb = A - 15
                ),
                format!("always @(*) read_data = dout[sel2*{} +: {w}];\n", cols * bw),
            )
        } else {
            (
                "write_enable".to_string(),
                String::new(),
                format!("always @(*) read_data = dout[{}:0];\n", w - 1),
            )
        };
        format!(
            r#"wire [{pm}:0] wpad = {wpad};
wire [13:0] ada = {ada};
wire [13:0] adb = {adb};
wire [{dm}:0] dout;
{row_sel}genvar r, c;
generate
for (r = 0; r < {rows}; r = r + 1) begin : row
    wire we = {row_we};
    for (c = 0; c < {cols}; c = c + 1) begin : col
        wire [17:0] di = {di};
        wire [17:0] dq;
        DP16KD #(
            .DATA_WIDTH_A({bw}), .DATA_WIDTH_B({bw}),
            .REGMODE_A("NOREG"), .REGMODE_B("OUTREG"),
            .RESETMODE("SYNC"), .ASYNC_RESET_RELEASE("SYNC"),
            .CSDECODE_A("0b000"), .CSDECODE_B("0b000"),
            .WRITEMODE_A("NORMAL"), .WRITEMODE_B("NORMAL"),
            .GSR("DISABLED")
        ) ram (
            .CLKA(clock), .CEA(1'b1), .OCEA(1'b1), .WEA(we), .RSTA(1'b0),
            .CSA0(1'b0), .CSA1(1'b0), .CSA2(1'b0),
            {pada}, {pdia},
            .CLKB(clock), .CEB(read_enable), .OCEB(output_enable), .WEB(1'b0), .RSTB(1'b0),
            .CSB0(1'b0), .CSB1(1'b0), .CSB2(1'b0),
            {padb}, {pdib}, {pdob}
        );
        assign dout[(r*{cols} + c)*{bw} +: {bw}] = dq[{bm}:0];
    end
end
endgenerate
{out}"#,
            pm = cols * bw - 1,
            ada = port_addr("write_address", true),
            adb = port_addr("read_address", false),
            dm = rows * cols * bw - 1,
            bm = bw - 1,
            pada = pins("ADA", "ada", 14),
            pdia = pins("DIA", "di", 18),
            padb = pins("ADB", "adb", 14),
            pdib = (0..18)
                .map(|i| format!(".DIB{i}(1'b0)"))
                .collect::<Vec<_>>()
                .join(", "),
            pdob = pins("DOB", "dq", 18),
        )
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
        Verilog::Custom(format!(
            "`ifdef {define}\n{ecp5}`else\nreg [{msb}:0] mem [0:{last}];\nreg [{msb}:0] stage;\n\nalways @(posedge clock) begin\n    if (write_enable) mem[write_address] <= write_data;\n    if (read_enable) stage <= mem[read_address];\n    if (output_enable) read_data <= stage;\nend\n`endif\n",
            define = ECP5_DP16KD_DEFINE,
            ecp5 = Self::dp16kd_verilog(),
            msb = D::BITS - 1,
            last = (1usize << A) - 1
        ))
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

/// Verilog text for a `2^a`-word (`a` ≤ 10) RAM of `bits` data bits as
/// ECP5 `DP16KD` primitives in 18-bit mode with the output register on
/// (`REGMODE_B "OUTREG"`), for generated leaves (the CSR block) that hold
/// several such RAMs in one module; [`BramOutReg`] is the widget form.
/// Port A writes `wd` at `wa` when `we`; port B reads `ra` when `ce` and the
/// output register takes the word at every edge, so the wire `q` (declared
/// here, `bits` wide) holds the word two edges after its address. Every
/// word starts as `init`. Signal names are made unique with `label`.
pub fn dp16kd_outreg_1k(
    label: &str,
    bits: usize,
    a: usize,
    init: u64,
    [we, wa, wd]: [&str; 3],
    [ce, ra]: [&str; 2],
    q: &str,
) -> String {
    use std::fmt::Write;
    assert!((1..=10).contains(&a), "dp16kd_outreg_1k: {a} address bits");
    assert!((1..=64).contains(&bits));
    let cols = bits.div_ceil(18);
    let mut s = String::new();
    writeln!(s, "wire [{}:0] {q};", bits - 1).unwrap();
    let pad = cols * 18 - bits;
    let wpad = if pad > 0 {
        format!("{{{pad}'b0, {wd}}}")
    } else {
        wd.to_string()
    };
    writeln!(s, "wire [{}:0] {label}_wd = {wpad};", cols * 18 - 1).unwrap();
    writeln!(s, "wire [{}:0] {label}_dq;", cols * 18 - 1).unwrap();
    writeln!(s, "assign {q} = {label}_dq[{}:0];", bits - 1).unwrap();
    // 18-bit mode: word address at [13:4], byte enables at [1:0].
    let hi = if a < 10 {
        format!("{}'b0, ", 10 - a)
    } else {
        String::new()
    };
    writeln!(
        s,
        "wire [13:0] {label}_ada = {{{hi}{wa}[{}:0], 2'b0, 2'b11}};\nwire [13:0] {label}_adb = {{{hi}{ra}[{}:0], 4'b0}};",
        a - 1,
        a - 1
    )
    .unwrap();
    for c in 0..cols {
        let word = (init >> (18 * c)) & 0x3FFFF;
        let mut inits = String::new();
        if word != 0 {
            // 16 words of 18 bits per INITVAL, each in a 20-bit slot.
            let slot = format!("{word:05x}").repeat(16);
            for i in 0..64 {
                write!(inits, ".INITVAL_{i:02X}(320'h{slot}), ").unwrap();
            }
        }
        let pins = |p: &str, sig: String, n: usize| -> String {
            (0..n)
                .map(|i| format!(".{p}{i}({sig}[{i}])"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        writeln!(
            s,
            "DP16KD #({inits}.DATA_WIDTH_A(18), .DATA_WIDTH_B(18), .REGMODE_A(\"NOREG\"), .REGMODE_B(\"OUTREG\"), .RESETMODE(\"SYNC\"), .ASYNC_RESET_RELEASE(\"SYNC\"), .CSDECODE_A(\"0b000\"), .CSDECODE_B(\"0b000\"), .WRITEMODE_A(\"NORMAL\"), .WRITEMODE_B(\"NORMAL\"), .GSR(\"DISABLED\")) {label}_{c} (\n    .CLKA(clock), .CEA(1'b1), .OCEA(1'b1), .WEA({we}), .RSTA(1'b0), .CSA0(1'b0), .CSA1(1'b0), .CSA2(1'b0),\n    {}, {},\n    .CLKB(clock), .CEB({ce}), .OCEB(1'b1), .WEB(1'b0), .RSTB(1'b0), .CSB0(1'b0), .CSB1(1'b0), .CSB2(1'b0),\n    {}, {}, {}\n);",
            pins("ADA", format!("{label}_ada"), 14),
            (0..18)
                .map(|i| format!(".DIA{i}({label}_wd[{}])", 18 * c + i))
                .collect::<Vec<_>>()
                .join(", "),
            pins("ADB", format!("{label}_adb"), 14),
            (0..18)
                .map(|i| format!(".DIB{i}(1'b0)"))
                .collect::<Vec<_>>()
                .join(", "),
            (0..18)
                .map(|i| format!(".DOB{i}({label}_dq[{}])", 18 * c + i))
                .collect::<Vec<_>>()
                .join(", "),
        )
        .unwrap();
    }
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
        assert!(v.contains("if (output_enable) read_data <= stage;"));
        assert!(v.contains(".REGMODE_B(\"OUTREG\")"));
        yosys_validate("bram_outreg", &v).unwrap();
    }
}
