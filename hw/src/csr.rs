//! CSR block: an AXI4-Lite slave that decodes the `roce-regs` map, the
//! configuration and mailbox registers, the counters, and the QP context
//! table in block RAM with a registered read port for the datapath.
//!
//! Nothing here retypes the map: [`Plan::new`] walks `roce_regs::BLOCKS` at
//! construction and the decoder's Verilog is generated from that plan.
//!
//! - `cfg` and `mbox` RW registers are flip-flops with the map's reset
//!   values, written with byte strobes. `cfg` registers store only the bits
//!   their fields own (other bits read 0). `mbox` registers store all 32
//!   bits, as the map's `mbox` block documents, so the firmware sees (and
//!   rejects) out-of-range attributes instead of truncated ones.
//! - RO registers read their constant (the `id` words, `cfg.caps`,
//!   `ctr.ctr_count`), `qp.qp_count` reads the build's N, `ctr.counter[i]`
//!   reads counter input lane i. Writes to RO registers are ignored and
//!   answered OKAY (the address is mapped; SLVERR means unmapped only).
//! - Unmapped addresses (reads and writes) answer SLVERR and count
//!   `Counter::CsrUnmapped`, which this block keeps itself; every other
//!   counter is an input lane of `counters`.
//! - QP context registers (`qp` registers with `QP_COUNT` elements of
//!   `QP_STRIDE`) live in one block RAM per register, holding its field
//!   bits only, N deep. CSR writes need all four byte strobes (a partial
//!   write answers SLVERR and changes nothing, but is not counted: the
//!   address is mapped). The datapath reads a whole context, packed, one
//!   cycle after `qp_rd_addr` ([`ctx_layout`]).
//!
//! - `mr` (memory-region commands): the command registers are RW flip-flops
//!   (all 32 bits); a write of `mr.doorbell.GO` copies them into the
//!   `m_mr_cmd_*` command (valid/ready, to `mr_tlb`'s `s_cmd_*`) unless a
//!   command is busy (then `mr.status.DROPPED`) or a field is too wide for
//!   the table (then `status.ERROR` at once, nothing sent). `mr.status`
//!   shows `BUSY`, `ERROR`, `DROPPED` and `SEQ` (commands answered).
//!
//! AXI behaviour: one write and one read in flight. AW and W are accepted
//! independently (each has a one-entry holding register); the write happens
//! when both are held and no B response is pending; B follows one cycle
//! later. A read is accepted when no read is in flight; R is valid four
//! cycles after the AR handshake (address registered, decode and RAM read,
//! RAM word registered, read mux registered): the context RAM's clock-to-out feeds a flip-flop
//! and nothing else. `ready` outputs depend only on state.

use roce_regs::{Access, Counter, Field, Register, BLOCKS, CSR_WINDOW_SIZE, QP_MAX, QP_STRIDE};
use rust_hdl_core::prelude::*;
use rust_hdl_core::timing::TimingInfo;
use rust_hdl_widgets::prelude::*;

/// Byte-address bits of the CSR window.
pub const ADDR_BITS: usize = CSR_WINDOW_SIZE.trailing_zeros() as usize;
const _: () = assert!(CSR_WINDOW_SIZE.is_power_of_two());

/// Counter input lanes: every `Counter` except `CsrUnmapped`, which the
/// block counts itself and which is the last counter.
pub const COUNTER_LANES: usize = Counter::COUNT as usize - 1;
const _: () = assert!(Counter::CsrUnmapped.index() == Counter::COUNT - 1);
/// Bits of the `counters` input: lane i (`Counter` index i) in bits
/// `32 i + 31 .. 32 i`.
pub const COUNTER_IN_BITS: usize = 32 * COUNTER_LANES;

/// A `qp` register is a per-QP context register when it has one element
/// per QP, `QP_STRIDE` apart.
const fn is_ctx_register(r: &Register) -> bool {
    r.count == roce_regs::QP_COUNT && r.stride == QP_STRIDE
}

const fn field_bits(fields: &[Field]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < fields.len() {
        n += fields[i].width as usize;
        i += 1;
    }
    n
}

/// Bits of a packed QP context (`qp_rd_data`): every field of every
/// context register.
pub const QP_CTX_BITS: usize = {
    let regs = roce_regs::qp::BLOCK.registers;
    let mut n = 0;
    let mut i = 0;
    while i < regs.len() {
        if is_ctx_register(&regs[i]) {
            n += field_bits(regs[i].fields);
        }
        i += 1;
    }
    n
};

/// Where each context field sits in `qp_rd_data`: (register, field, lowest
/// bit). Registers in map order, fields in declaration order, packed from
/// bit 0 up.
pub fn ctx_layout() -> Vec<(&'static Register, &'static Field, usize)> {
    let mut at = 0;
    let mut out = Vec::new();
    for r in roce_regs::qp::BLOCK
        .registers
        .iter()
        .filter(|r| is_ctx_register(r))
    {
        for f in r.fields {
            out.push((r, f, at));
            at += f.width as usize;
        }
    }
    out
}

/// Widths of the MR command port (`m_mr_cmd_*`, wired to `mr_tlb`'s
/// `s_cmd_*`): the `mr` block's fields.
pub const MR_OP_BITS: usize = roce_regs::MR_OP_BITS as usize;
pub const MR_PD_BITS: usize = roce_regs::MR_PD_BITS as usize;
pub const MR_ACCESS_BITS: usize = roce_regs::MR_ACCESS_BITS as usize;
pub const MR_SHIFT_BITS: usize = roce_regs::MR_SHIFT_BITS as usize;
/// Bits of `mr.status.SEQ`.
pub const MR_SEQ_BITS: usize = roce_regs::mr::status::SEQ.width as usize;
/// Bits of the `mr_counters` input: lane i (`roce_regs::MrCounter` i) in
/// bits `32 i + 31 .. 32 i`.
pub const MR_COUNTER_BITS: usize = 32 * roce_regs::MrCounter::COUNT as usize;

/// When a doorbell refuses an MR command field wider than its port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    Never,
    Always,
    /// For REGISTER only (the other ops do not use the field).
    Register,
}

/// One MR command output of [`CsrCore`].
struct MrOutput {
    port: &'static str,
    width: usize,
    parts: Vec<(u32, Field)>,
    check: Check,
}

/// What a mapped (non-context) word reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Flip-flop `index`: reset value, bits it stores.
    Flop {
        index: usize,
        reset: u32,
        store: u32,
    },
    /// A constant.
    Const(u32),
    /// Counter input lane.
    Lane(usize),
    /// The block's own `csr-unmapped` counter.
    Unmapped,
    /// `mr.doorbell`: a write with `GO` set pulses `mr_go`; reads 0.
    MrDoorbell,
    /// `mr.status`: built from the `mr_busy`, `mr_error`, `mr_dropped`,
    /// `mr_seq` inputs.
    MrStatus,
    /// `mr.counter[i]`: lane i of the `mr_counters` input.
    MrCounter(usize),
}

/// One mapped word outside the context table.
#[derive(Clone, Debug)]
pub struct Word {
    /// Byte offset in the window.
    pub addr: u32,
    pub name: String,
    pub src: Source,
}

/// One context register: its RAM.
#[derive(Clone, Debug)]
pub struct CtxReg {
    pub reg: &'static Register,
    /// Byte offset within a context (`offset - QP_CTX_OFFSET` of element 0).
    pub offset: u32,
    /// Lowest bit in the packed context.
    pub at: usize,
    pub bits: usize,
}

/// The decoder, computed from `roce_regs::BLOCKS`.
#[derive(Clone, Debug)]
pub struct Plan {
    pub words: Vec<Word>,
    pub ctx: Vec<CtxReg>,
    /// Window byte offset of context 0.
    pub ctx_base: u32,
    /// QP contexts held.
    pub n: u32,
}

impl Plan {
    pub fn new(n: u32) -> Plan {
        assert!(
            (1..=QP_MAX).contains(&n),
            "Csr: {n} QPs out of 1..={QP_MAX}"
        );
        let mut words = Vec::new();
        let mut ctx = Vec::new();
        let mut flops = 0;
        let mut ctx_base = None;
        let mut at = 0;
        for b in BLOCKS {
            for r in b.registers {
                if b.name == roce_regs::qp::BLOCK.name && is_ctx_register(r) {
                    assert_eq!(
                        r.access,
                        Access::RW,
                        "qp.{}: context registers are RW",
                        r.name
                    );
                    let base = *ctx_base.get_or_insert(b.base + r.offset);
                    let offset = b.base + r.offset - base;
                    assert!(offset < QP_STRIDE, "qp.{} outside the context", r.name);
                    let bits = field_bits(r.fields);
                    ctx.push(CtxReg {
                        reg: r,
                        offset,
                        at,
                        bits,
                    });
                    at += bits;
                    continue;
                }
                for i in 0..r.count {
                    let addr = b.base + r.element_offset(i);
                    let name = if r.count > 1 {
                        format!("{}_{}_{i}", b.name, r.name)
                    } else {
                        format!("{}_{}", b.name, r.name)
                    };
                    let src = match r.access {
                        Access::RW => {
                            let store = if b.name == roce_regs::mbox::BLOCK.name {
                                u32::MAX
                            } else {
                                r.used_bits()
                            };
                            flops += 1;
                            Source::Flop {
                                index: flops - 1,
                                reset: r.reset(),
                                store,
                            }
                        }
                        Access::RO if *r == roce_regs::ctr::counter::REG => {
                            if Counter::from_index(i) == Some(Counter::CsrUnmapped) {
                                Source::Unmapped
                            } else {
                                Source::Lane(i as usize)
                            }
                        }
                        Access::WO if *r == roce_regs::mr::doorbell::REG => Source::MrDoorbell,
                        Access::RO if *r == roce_regs::mr::status::REG => Source::MrStatus,
                        Access::RO if *r == roce_regs::mr::counter::REG => {
                            Source::MrCounter(i as usize)
                        }
                        Access::RO if *r == roce_regs::qp::qp_count::REG => {
                            Source::Const(roce_regs::qp::qp_count::COUNT.val(n))
                        }
                        Access::RO => Source::Const(r.reset()),
                        a => panic!(
                            "{}.{}: {} registers need a hardware source the CSR block does not have",
                            b.name,
                            r.name,
                            a.name()
                        ),
                    };
                    words.push(Word { addr, name, src });
                }
            }
        }
        let ctx_base = ctx_base.expect("the map has QP context registers");
        assert_eq!(ctx_base % QP_STRIDE, 0, "contexts aligned to their stride");
        assert!(QP_STRIDE.is_power_of_two());
        assert_eq!(at, QP_CTX_BITS);
        Plan {
            words,
            ctx,
            ctx_base,
            n,
        }
    }

    /// The context register at window byte offset `addr`: (QPN, index in `ctx`).
    pub fn ctx_at(&self, addr: u32) -> Option<(u32, usize)> {
        let word = addr & !3;
        if word < self.ctx_base || word >= self.ctx_base + self.n * QP_STRIDE {
            return None;
        }
        let rel = word - self.ctx_base;
        let k = self.ctx.iter().position(|c| c.offset == rel % QP_STRIDE)?;
        Some((rel / QP_STRIDE, k))
    }

    /// The non-context word at window byte offset `addr`.
    pub fn word_at(&self, addr: u32) -> Option<&Word> {
        self.words.iter().find(|w| w.addr == addr & !3)
    }

    /// The flip-flop of the RW register at window byte offset `addr`.
    fn flop_at(&self, addr: u32) -> usize {
        match self.word_at(addr).map(|w| &w.src) {
            Some(Source::Flop { index, .. }) => *index,
            _ => panic!("no RW register at {addr:#x}"),
        }
    }

    /// The MR command outputs: (port, its width, fields from most to
    /// least significant as (window address, field), which ops refuse a
    /// value wider than the port).
    fn mr_outputs() -> Vec<MrOutput> {
        use roce_regs::mr;
        let one = |port, width, a, f, check| MrOutput {
            port,
            width,
            parts: vec![(a, f)],
            check,
        };
        let two = |port, hi: (u32, Field), lo: (u32, Field)| MrOutput {
            port,
            width: 64,
            parts: vec![hi, lo],
            check: Check::Never,
        };
        vec![
            one("mr_op", MR_OP_BITS, mr::op::ADDR, mr::op::OP, Check::Always),
            one("mr_key", 32, mr::key::ADDR, mr::key::KEY, Check::Never),
            one(
                "mr_pd",
                MR_PD_BITS,
                mr::pd::ADDR,
                mr::pd::PD,
                Check::Register,
            ),
            one(
                "mr_access",
                MR_ACCESS_BITS,
                mr::access::ADDR,
                mr::access::FLAGS,
                Check::Register,
            ),
            two(
                "mr_va",
                (mr::va_hi::ADDR, mr::va_hi::VA),
                (mr::va_lo::ADDR, mr::va_lo::VA),
            ),
            two(
                "mr_len",
                (mr::len_hi::ADDR, mr::len_hi::LEN),
                (mr::len_lo::ADDR, mr::len_lo::LEN),
            ),
            one(
                "mr_shift",
                MR_SHIFT_BITS,
                mr::page_shift::ADDR,
                mr::page_shift::SHIFT,
                Check::Register,
            ),
            one(
                "mr_index",
                32,
                mr::pt_index::ADDR,
                mr::pt_index::INDEX,
                Check::Never,
            ),
            two(
                "mr_pa",
                (mr::pa_hi::ADDR, mr::pa_hi::PA),
                (mr::pa_lo::ADDR, mr::pa_lo::PA),
            ),
        ]
    }

    fn flops(&self) -> impl Iterator<Item = (&Word, usize, u32, u32)> {
        self.words.iter().filter_map(|w| match w.src {
            Source::Flop {
                index,
                reset,
                store,
            } => Some((w, index, reset, store)),
            _ => None,
        })
    }

    /// The decoder's Verilog body (ports declared by rust-hdl).
    fn verilog(&self, qa: usize) -> String {
        use std::fmt::Write;
        let wa = ADDR_BITS - 2;
        let sh = (QP_STRIDE / 4).trailing_zeros() as usize;
        let lo = self.ctx_base / 4;
        let hi = lo + self.n * (QP_STRIDE / 4);
        let mut v = String::new();
        let s = &mut v;
        writeln!(s, "// Generated from roce-regs by roce_hw::csr::Plan.").unwrap();
        writeln!(s, "wire [{}:0] wa = wr_addr[{}:2];", wa - 1, ADDR_BITS - 1).unwrap();
        writeln!(s, "wire [{}:0] ra = rd_addr[{}:2];", wa - 1, ADDR_BITS - 1).unwrap();
        writeln!(
            s,
            "wire [31:0] wmask = {{{{8{{wr_strb[3]}}}}, {{8{{wr_strb[2]}}}}, {{8{{wr_strb[1]}}}}, {{8{{wr_strb[0]}}}}}};"
        )
        .unwrap();
        for (p, a) in [("w", "wa"), ("r", "ra")] {
            writeln!(
                s,
                "wire {p}_in_ctx = ({a} >= {wa}'d{lo}) && ({a} < {wa}'d{hi});"
            )
            .unwrap();
            writeln!(s, "wire [{}:0] {p}_rel = {a} - {wa}'d{lo};", wa - 1).unwrap();
            writeln!(
                s,
                "wire [{}:0] {p}_qpn = {p}_rel[{}:{sh}];",
                qa - 1,
                qa + sh - 1
            )
            .unwrap();
            writeln!(s, "wire [{}:0] {p}_reg = {p}_rel[{}:0];", sh - 1, sh - 1).unwrap();
            writeln!(s, "reg {p}_ctx_hit;\nreg {p}_hit;").unwrap();
            writeln!(s, "always @(*) begin\n    {p}_ctx_hit = 1'b0;").unwrap();
            writeln!(s, "    if ({p}_in_ctx) case ({p}_reg)").unwrap();
            for c in &self.ctx {
                writeln!(s, "        {sh}'d{}: {p}_ctx_hit = 1'b1;", c.offset / 4).unwrap();
            }
            writeln!(
                s,
                "        default: ;\n    endcase\n    {p}_hit = {p}_ctx_hit;\n    case ({a})"
            )
            .unwrap();
            for w in &self.words {
                writeln!(
                    s,
                    "        {wa}'d{}: {p}_hit = 1'b1; // {}",
                    w.addr / 4,
                    w.name
                )
                .unwrap();
            }
            writeln!(s, "        default: ;\n    endcase\nend").unwrap();
        }
        writeln!(
            s,
            "always @(*) wr_err = !w_hit || (w_ctx_hit && wr_strb != 4'hf);"
        )
        .unwrap();
        // MR command: the doorbell pulse, the status word.
        {
            use roce_regs::mr::{doorbell, status};
            let go = doorbell::GO.lsb;
            writeln!(
                s,
                "always @(*) mr_go = wr_en && (wa == {wa}'d{}) && wr_strb[{}] && wr_data[{go}];",
                doorbell::ADDR / 4,
                go / 8
            )
            .unwrap();
            let part = |port: &str, f: Field| {
                format!("({{{}'d0, {port}}} << {})", 32 - f.width as usize, f.lsb)
            };
            writeln!(
                s,
                "wire [31:0] mr_status = {} | {} | {} | {};",
                part("mr_busy", status::BUSY),
                part("mr_error", status::ERROR),
                part("mr_dropped", status::DROPPED),
                part("mr_seq", status::SEQ)
            )
            .unwrap();
        }
        // Flip-flops and the unmapped counter.
        for (w, i, _, _) in self.flops() {
            writeln!(s, "reg [31:0] f{i}; // {}", w.name).unwrap();
        }
        writeln!(s, "reg [31:0] unmapped;\nreg un_w;\nreg un_r;").unwrap();
        writeln!(s, "always @(posedge clock) begin\n    if (reset) begin").unwrap();
        for (_, i, reset, _) in self.flops() {
            writeln!(s, "        f{i} <= 32'h{reset:08x};").unwrap();
        }
        writeln!(
            s,
            "        unmapped <= 32'd0;\n        un_w <= 1'b0;\n        un_r <= 1'b0;\n    end else begin\n        if (wr_en) case (wa)"
        )
        .unwrap();
        for (w, i, _, store) in self.flops() {
            writeln!(
                s,
                "            {wa}'d{}: f{i} <= (f{i} & ~(wmask & 32'h{store:08x})) | (wr_data & wmask & 32'h{store:08x});",
                w.addr / 4
            )
            .unwrap();
        }
        writeln!(
            s,
            "            default: ;\n        endcase\n        un_w <= wr_en & ~w_hit;\n        un_r <= rd_en & ~r_hit;\n        unmapped <= unmapped + {{31'd0, un_w}} + {{31'd0, un_r}};\n    end\nend"
        )
        .unwrap();
        // MR command registers, out to the command port (low bits), and
        // whether a doorbell must refuse them (a field too wide).
        let outs = Self::mr_outputs();
        let fl =
            |a: u32, f: &Field| format!("f{}[{}:{}]", self.flop_at(a), f.lsb + f.width - 1, f.lsb);
        writeln!(s, "always @(*) begin").unwrap();
        for o in &outs {
            let e: Vec<String> = o
                .parts
                .iter()
                .map(|(a, f)| {
                    // A single field wider than the port: its low bits.
                    let w = if o.parts.len() == 1 {
                        o.width.min(f.width as usize)
                    } else {
                        f.width as usize
                    };
                    format!(
                        "f{}[{}:{}]",
                        self.flop_at(*a),
                        f.lsb as usize + w - 1,
                        f.lsb
                    )
                })
                .collect();
            let total: usize = o.parts.iter().map(|(_, f)| f.width as usize).sum();
            assert!(o.parts.len() == 1 || total == o.width, "{}", o.port);
            writeln!(s, "    {} = {{{}}};", o.port, e.join(", ")).unwrap();
        }
        writeln!(s, "end").unwrap();
        let wide = |o: &MrOutput| {
            let (a, f) = &o.parts[0];
            assert!(o.parts.len() == 1 && (f.width as usize) > o.width);
            format!("({} >> {}) != 0", fl(*a, f), o.width)
        };
        let always: Vec<String> = outs
            .iter()
            .filter(|o| o.check == Check::Always)
            .map(wide)
            .collect();
        let register: Vec<String> = outs
            .iter()
            .filter(|o| o.check == Check::Register)
            .map(wide)
            .collect();
        let (oa, of) = (roce_regs::mr::op::ADDR, roce_regs::mr::op::OP);
        writeln!(
            s,
            "always @(*) mr_bad = {} || ({} == {}'d{} && ({}));",
            always.join(" || "),
            fl(oa, &of),
            of.width,
            roce_regs::MrOp::Register as u32,
            register.join(" || ")
        )
        .unwrap();
        // CSR read of the non-context words.
        writeln!(
            s,
            "reg [31:0] rd_q;\nreg rd_ctx;\nreg rd_err1;\nreg [{m}:0] rd_reg;\nreg [31:0] rd_q2;\nreg rd_ctx2;\nreg [{m}:0] rd_reg2;",
            m = sh - 1
        )
        .unwrap();
        writeln!(
            s,
            "always @(posedge clock) begin\n    rd_q2 <= rd_q;\n    rd_ctx2 <= rd_ctx;\n    rd_reg2 <= rd_reg;\n    rd_err <= rd_err1;\n    if (rd_en) begin\n        rd_err1 <= ~r_hit;\n        rd_ctx <= r_ctx_hit;\n        rd_reg <= r_reg;\n        case (ra)"
        )
        .unwrap();
        for w in &self.words {
            let e = match w.src {
                Source::Flop { index, .. } => format!("f{index}"),
                Source::Const(c) => format!("32'h{c:08x}"),
                Source::Lane(l) => format!("counters[{}:{}]", 32 * l + 31, 32 * l),
                Source::Unmapped => "unmapped".into(),
                Source::MrDoorbell => "32'h00000000".into(),
                Source::MrStatus => "mr_status".into(),
                Source::MrCounter(l) => format!("mr_counters[{}:{}]", 32 * l + 31, 32 * l),
            };
            writeln!(s, "            {wa}'d{}: rd_q <= {e};", w.addr / 4).unwrap();
        }
        writeln!(
            s,
            "            default: rd_q <= 32'd0;\n        endcase\n    end\nend"
        )
        .unwrap();
        // Context RAMs: one write port (CSR), two registered read ports.
        let mut pack = Vec::new();
        for (k, c) in self.ctx.iter().enumerate() {
            let reset = packed_reset(c.reg);
            writeln!(
                s,
                "reg [{m}:0] qm{k} [0:{}]; // qp.{}\nreg [{m}:0] qc{k};\nreg [{m}:0] qc2_{k};\nreg [{m}:0] qd{k};",
                self.n - 1,
                c.reg.name,
                m = c.bits - 1
            )
            .unwrap();
            writeln!(
                s,
                "integer i{k};\ninitial for (i{k} = 0; i{k} < {}; i{k} = i{k} + 1) qm{k}[i{k}] = {}'h{reset:x};",
                self.n, c.bits
            )
            .unwrap();
            let parts: Vec<String> = c
                .reg
                .fields
                .iter()
                .rev()
                .map(|f| format!("wr_data[{}:{}]", f.lsb + f.width - 1, f.lsb))
                .collect();
            writeln!(
                s,
                "always @(posedge clock) begin\n    if (wr_en && w_ctx_hit && wr_strb == 4'hf && w_reg == {sh}'d{}) qm{k}[w_qpn] <= {{{}}};\n    if (rd_en) qc{k} <= qm{k}[r_qpn];\n    qc2_{k} <= qc{k};\n    qd{k} <= qm{k}[qp_rd_addr];\nend",
                c.offset / 4,
                parts.join(", ")
            )
            .unwrap();
            pack.push(format!("qd{k}"));
        }
        pack.reverse();
        writeln!(s, "always @(*) qp_rd_data = {{{}}};", pack.join(", ")).unwrap();
        writeln!(s, "always @(*) begin\n    rd_data = rd_q2;\n    if (rd_ctx2) begin\n        rd_data = 32'd0;\n        case (rd_reg2)").unwrap();
        for (k, c) in self.ctx.iter().enumerate() {
            let mut at = 0;
            let mut assigns = String::new();
            for f in c.reg.fields {
                write!(
                    assigns,
                    " rd_data[{}:{}] = qc2_{k}[{}:{}];",
                    f.lsb + f.width - 1,
                    f.lsb,
                    at + f.width as usize - 1,
                    at
                )
                .unwrap();
                at += f.width as usize;
            }
            writeln!(s, "            {sh}'d{}: begin{assigns} end", c.offset / 4).unwrap();
        }
        writeln!(s, "            default: ;\n        endcase\n    end\nend").unwrap();
        v
    }
}

/// A context register's reset value, packed (field bits only).
fn packed_reset(r: &Register) -> u64 {
    let mut at = 0;
    let mut v = 0u64;
    for f in r.fields {
        v |= (f.reset as u64) << at;
        at += f.width as usize;
    }
    v
}

/// The decoder and storage leaf: its Verilog comes from [`Plan::verilog`];
/// `update()` is the same behaviour for rust-hdl's simulator.
#[derive(LogicBlock)]
pub struct CsrCore<const QA: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub wr_en: Signal<In, Bit>,
    pub wr_addr: Signal<In, Bits<ADDR_BITS>>,
    pub wr_data: Signal<In, Bits<32>>,
    pub wr_strb: Signal<In, Bits<4>>,
    /// The write at `wr_addr` would answer SLVERR (combinational).
    pub wr_err: Signal<Out, Bit>,
    pub rd_en: Signal<In, Bit>,
    pub rd_addr: Signal<In, Bits<ADDR_BITS>>,
    /// Two cycles after `rd_en` (RAM read, then a register, then the mux).
    pub rd_data: Signal<Out, Bits<32>>,
    pub rd_err: Signal<Out, Bit>,
    pub counters: Signal<In, Bits<COUNTER_IN_BITS>>,
    pub qp_rd_addr: Signal<In, Bits<QA>>,
    pub qp_rd_data: Signal<Out, Bits<QP_CTX_BITS>>,
    /// The write in progress sets `mr.doorbell.GO` (combinational).
    pub mr_go: Signal<Out, Bit>,
    /// The `mr` registers hold a value too wide for the command port.
    pub mr_bad: Signal<Out, Bit>,
    /// `mr.status` fields.
    pub mr_busy: Signal<In, Bit>,
    pub mr_error: Signal<In, Bit>,
    pub mr_dropped: Signal<In, Bit>,
    pub mr_seq: Signal<In, Bits<MR_SEQ_BITS>>,
    /// `mr.counter` lanes.
    pub mr_counters: Signal<In, Bits<MR_COUNTER_BITS>>,
    /// The `mr` command registers' fields (from the flip-flops).
    pub mr_op: Signal<Out, Bits<MR_OP_BITS>>,
    pub mr_key: Signal<Out, Bits<32>>,
    pub mr_pd: Signal<Out, Bits<MR_PD_BITS>>,
    pub mr_access: Signal<Out, Bits<MR_ACCESS_BITS>>,
    pub mr_va: Signal<Out, Bits<64>>,
    pub mr_len: Signal<Out, Bits<64>>,
    pub mr_shift: Signal<Out, Bits<MR_SHIFT_BITS>>,
    pub mr_index: Signal<Out, Bits<32>>,
    pub mr_pa: Signal<Out, Bits<64>>,
    _plan: Plan,
    _flops: Vec<u32>,
    _unmapped: u32,
    /// Unmapped (write, read) seen last cycle, counted this cycle.
    _un: (bool, bool),
    _mem: Vec<Vec<u64>>,
    _rd_q: u32,
    _rd_err: bool,
    _rd_ctx: Option<usize>,
    _qc: Vec<u64>,
    /// Stage 2 of the CSR read: (data, error).
    _out: (u32, bool),
    _qd: Vec<u64>,
}

impl<const QA: usize> CsrCore<QA> {
    pub fn new(n: u32) -> Self {
        let plan = Plan::new(n);
        assert!(
            n <= 1 << QA && (QA == 0 || n > 1 << (QA - 1)),
            "CsrCore: {n} QPs need {} address bits, not {QA}",
            u32::BITS - (n - 1).leading_zeros()
        );
        let flops = plan.flops().map(|(_, _, r, _)| r).collect();
        let mem = plan
            .ctx
            .iter()
            .map(|c| vec![packed_reset(c.reg); n as usize])
            .collect();
        let k = plan.ctx.len();
        Self {
            clock: Default::default(),
            reset: Default::default(),
            wr_en: Default::default(),
            wr_addr: Default::default(),
            wr_data: Default::default(),
            wr_strb: Default::default(),
            wr_err: Default::default(),
            rd_en: Default::default(),
            rd_addr: Default::default(),
            rd_data: Default::default(),
            rd_err: Default::default(),
            counters: Default::default(),
            qp_rd_addr: Default::default(),
            qp_rd_data: Default::default(),
            mr_go: Default::default(),
            mr_bad: Default::default(),
            mr_busy: Default::default(),
            mr_error: Default::default(),
            mr_dropped: Default::default(),
            mr_seq: Default::default(),
            mr_counters: Default::default(),
            mr_op: Default::default(),
            mr_key: Default::default(),
            mr_pd: Default::default(),
            mr_access: Default::default(),
            mr_va: Default::default(),
            mr_len: Default::default(),
            mr_shift: Default::default(),
            mr_index: Default::default(),
            mr_pa: Default::default(),
            _plan: plan,
            _flops: flops,
            _unmapped: 0,
            _un: (false, false),
            _mem: mem,
            _rd_q: 0,
            _rd_err: false,
            _rd_ctx: None,
            _qc: vec![0; k],
            _out: (0, false),
            _qd: vec![0; k],
        }
    }

    /// The word stage 1 of a CSR read holds.
    fn stage1(&self) -> u32 {
        match self._rd_ctx {
            None => self._rd_q,
            Some(k) => {
                let mut at = 0;
                let mut v = 0u32;
                for f in self._plan.ctx[k].reg.fields {
                    v = f.set(v, (self._qc[k] >> at) as u32);
                    at += f.width as usize;
                }
                v
            }
        }
    }

    /// The `mr.status` word from the status inputs.
    fn mr_status(&self) -> u32 {
        use roce_regs::mr::status;
        status::BUSY.val(self.mr_busy.val() as u32)
            | status::ERROR.val(self.mr_error.val() as u32)
            | status::DROPPED.val(self.mr_dropped.val() as u32)
            | status::SEQ.val(val32(self.mr_seq.val()))
    }

    /// The value of an MR command output: its fields, high to low.
    fn mr_output(&self, parts: &[(u32, Field)]) -> u64 {
        parts.iter().fold(0u64, |v, (a, f)| {
            (v << f.width) | f.get(self._flops[self._plan.flop_at(*a)]) as u64
        })
    }

    /// The doorbell refuses the command registers (a field too wide).
    fn mr_bad(&self) -> bool {
        let outs = Plan::mr_outputs();
        let wide = |o: &MrOutput| self.mr_output(&o.parts) >> o.width != 0;
        let reg = self.mr_output(&outs[0].parts) == roce_regs::MrOp::Register as u64;
        outs.iter()
            .any(|o| (o.check == Check::Always || (reg && o.check == Check::Register)) && wide(o))
    }

    fn word_err(&self, addr: u32, strb: u32) -> (bool, bool) {
        let ctx = self._plan.ctx_at(addr).is_some();
        let hit = ctx || self._plan.word_at(addr).is_some();
        (!hit, !hit || (ctx && strb != 0xF))
    }
}

fn val32<const N: usize>(b: Bits<N>) -> u32 {
    (0..N.min(32)).fold(0, |v, i| v | (b.get_bit(i) as u32) << i)
}

impl<const QA: usize> Logic for CsrCore<QA> {
    fn update(&mut self) {
        let wa = val32(self.wr_addr.val());
        let strb = val32(self.wr_strb.val());
        let (w_unmapped, w_err) = self.word_err(wa, strb);
        if self.clock.pos_edge() {
            let ra = val32(self.rd_addr.val());
            let (r_unmapped, _) = self.word_err(ra, 0xF);
            let qa = self.qp_rd_addr.val().index();
            for (k, m) in self._mem.iter().enumerate() {
                self._qd[k] = m[qa.min(m.len() - 1)];
            }
            self._out = (self.stage1(), self._rd_err);
            if self.rd_en.val() {
                self._rd_err = r_unmapped;
                self._rd_ctx = None;
                self._rd_q = 0;
                if let Some((q, k)) = self._plan.ctx_at(ra) {
                    self._qc[k] = self._mem[k][q as usize];
                    self._rd_ctx = Some(k);
                } else if let Some(w) = self._plan.word_at(ra) {
                    let lanes = self.counters.val();
                    self._rd_q = match w.src {
                        Source::Flop { index, .. } => self._flops[index],
                        Source::Const(c) => c,
                        Source::Lane(l) => {
                            (0..32).fold(0, |v, i| v | (lanes.get_bit(32 * l + i) as u32) << i)
                        }
                        Source::Unmapped => self._unmapped,
                        Source::MrDoorbell => 0,
                        Source::MrStatus => self.mr_status(),
                        Source::MrCounter(l) => {
                            let lanes = self.mr_counters.val();
                            (0..32).fold(0, |v, i| v | (lanes.get_bit(32 * l + i) as u32) << i)
                        }
                    };
                }
            }
            let wr = self.wr_en.val();
            if wr && !w_err {
                let data = val32(self.wr_data.val());
                if let Some((q, k)) = self._plan.ctx_at(wa) {
                    let mut at = 0;
                    let mut v = 0u64;
                    for f in self._plan.ctx[k].reg.fields {
                        v |= (f.get(data) as u64) << at;
                        at += f.width as usize;
                    }
                    self._mem[k][q as usize] = v;
                }
            }
            if self.reset.val() {
                self._flops = self._plan.flops().map(|(_, _, r, _)| r).collect();
                self._unmapped = 0;
                self._un = (false, false);
            } else {
                if wr {
                    let data = val32(self.wr_data.val());
                    let bytes = (0..4)
                        .filter(|b| strb >> b & 1 == 1)
                        .fold(0u32, |m, b| m | 0xFF << (8 * b));
                    if let Some((_, index, _, store)) =
                        self._plan.flops().find(|(w, ..)| w.addr == wa & !3)
                    {
                        let m = bytes & store;
                        self._flops[index] = (self._flops[index] & !m) | (data & m);
                    }
                }
                self._unmapped = self
                    ._unmapped
                    .wrapping_add(self._un.0 as u32)
                    .wrapping_add(self._un.1 as u32);
                self._un = (wr && w_unmapped, self.rd_en.val() && r_unmapped);
            }
        }
        self.wr_err.next = w_err;
        {
            use roce_regs::mr::doorbell;
            let go = doorbell::GO.lsb as u32;
            self.mr_go.next = self.wr_en.val()
                && wa & !3 == doorbell::ADDR
                && strb >> (go / 8) & 1 == 1
                && val32(self.wr_data.val()) >> go & 1 == 1;
        }
        let v: Vec<u64> = Plan::mr_outputs()
            .iter()
            .map(|o| self.mr_output(&o.parts) & ((1u128 << o.width) - 1) as u64)
            .collect();
        self.mr_bad.next = self.mr_bad();
        // In `Plan::mr_outputs` order.
        self.mr_op.next = v[0].into();
        self.mr_key.next = v[1].into();
        self.mr_pd.next = v[2].into();
        self.mr_access.next = v[3].into();
        self.mr_va.next = v[4].into();
        self.mr_len.next = v[5].into();
        self.mr_shift.next = v[6].into();
        self.mr_index.next = v[7].into();
        self.mr_pa.next = v[8].into();
        self.rd_err.next = self._out.1;
        self.rd_data.next = (self._out.0 as u64).into();
        let mut packed = Bits::<QP_CTX_BITS>::default();
        for (c, q) in self._plan.ctx.iter().zip(&self._qd) {
            for b in 0..c.bits {
                packed = packed.replace_bit(c.at + b, q >> b & 1 == 1);
            }
        }
        self.qp_rd_data.next = packed;
    }

    fn connect(&mut self) {
        self.wr_err.connect();
        self.rd_data.connect();
        self.rd_err.connect();
        self.qp_rd_data.connect();
        self.mr_go.connect();
        self.mr_bad.connect();
        self.mr_op.connect();
        self.mr_key.connect();
        self.mr_pd.connect();
        self.mr_access.connect();
        self.mr_va.connect();
        self.mr_len.connect();
        self.mr_shift.connect();
        self.mr_index.connect();
        self.mr_pa.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(self._plan.verilog(QA))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "csr_core".into(),
            clock: "clock".into(),
            inputs: vec![
                "wr_en".into(),
                "wr_addr".into(),
                "wr_data".into(),
                "wr_strb".into(),
                "rd_en".into(),
                "rd_addr".into(),
                "counters".into(),
                "qp_rd_addr".into(),
                "mr_busy".into(),
                "mr_error".into(),
                "mr_dropped".into(),
                "mr_seq".into(),
                "mr_counters".into(),
            ],
            outputs: vec![
                "rd_data".into(),
                "rd_err".into(),
                "qp_rd_data".into(),
                "mr_go".into(),
                "mr_bad".into(),
                "mr_op".into(),
                "mr_key".into(),
                "mr_pd".into(),
                "mr_access".into(),
                "mr_va".into(),
                "mr_len".into(),
                "mr_shift".into(),
                "mr_index".into(),
                "mr_pa".into(),
            ],
        }]
    }
}

/// AXI4-Lite response codes.
pub const RESP_OKAY: u64 = 0;
pub const RESP_SLVERR: u64 = 2;

/// The CSR block: AXI4-Lite slave (`s_axil_*`, byte addresses in the
/// window, 32-bit data), counter inputs and the datapath's QP context read
/// port. `QA` = QPN bits of `qp_rd_addr`; N (`new(n)`) ≤ 2^QA contexts.
#[derive(LogicBlock)]
pub struct Csr<const QA: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_axil_awaddr: Signal<In, Bits<ADDR_BITS>>,
    pub s_axil_awvalid: Signal<In, Bit>,
    pub s_axil_awready: Signal<Out, Bit>,
    pub s_axil_wdata: Signal<In, Bits<32>>,
    pub s_axil_wstrb: Signal<In, Bits<4>>,
    pub s_axil_wvalid: Signal<In, Bit>,
    pub s_axil_wready: Signal<Out, Bit>,
    pub s_axil_bresp: Signal<Out, Bits<2>>,
    pub s_axil_bvalid: Signal<Out, Bit>,
    pub s_axil_bready: Signal<In, Bit>,
    pub s_axil_araddr: Signal<In, Bits<ADDR_BITS>>,
    pub s_axil_arvalid: Signal<In, Bit>,
    pub s_axil_arready: Signal<Out, Bit>,
    pub s_axil_rdata: Signal<Out, Bits<32>>,
    pub s_axil_rresp: Signal<Out, Bits<2>>,
    pub s_axil_rvalid: Signal<Out, Bit>,
    pub s_axil_rready: Signal<In, Bit>,
    /// Counter lane i = `ctr.counter[i]` (every `Counter` but `csr-unmapped`).
    pub counters: Signal<In, Bits<COUNTER_IN_BITS>>,
    /// Datapath: QPN to read (must be below N).
    pub qp_rd_addr: Signal<In, Bits<QA>>,
    /// Datapath: that QP's packed context ([`ctx_layout`]), one cycle later.
    pub qp_rd_data: Signal<Out, Bits<QP_CTX_BITS>>,
    /// MR command to `mr_tlb`'s `s_cmd_*`: one per `mr.doorbell.GO` write
    /// while not busy, a copy of the `mr` registers taken at the doorbell.
    pub m_mr_cmd_valid: Signal<Out, Bit>,
    pub m_mr_cmd_ready: Signal<In, Bit>,
    pub m_mr_cmd_op: Signal<Out, Bits<MR_OP_BITS>>,
    pub m_mr_cmd_key: Signal<Out, Bits<32>>,
    pub m_mr_cmd_pd: Signal<Out, Bits<MR_PD_BITS>>,
    pub m_mr_cmd_access: Signal<Out, Bits<MR_ACCESS_BITS>>,
    /// `mr.pa` for WRITE_PT, `mr.va` otherwise.
    pub m_mr_cmd_addr: Signal<Out, Bits<64>>,
    pub m_mr_cmd_len: Signal<Out, Bits<64>>,
    pub m_mr_cmd_shift: Signal<Out, Bits<MR_SHIFT_BITS>>,
    pub m_mr_cmd_index: Signal<Out, Bits<32>>,
    /// `mr_tlb`'s `m_cmd_done` / `m_cmd_error`: the command's answer.
    pub mr_cmd_done: Signal<In, Bit>,
    pub mr_cmd_error: Signal<In, Bit>,
    /// `mr.counter[i]` = lane i (`roce_regs::MrCounter` order: `mr_tlb`'s
    /// reject counters by reason code, then `cnt_tlb_miss`).
    pub mr_counters: Signal<In, Bits<MR_COUNTER_BITS>>,
    core: CsrCore<QA>,
    mr_valid: DFF<Bit>,
    mr_busy: DFF<Bit>,
    mr_error: DFF<Bit>,
    mr_dropped: DFF<Bit>,
    mr_seq: DFF<Bits<MR_SEQ_BITS>>,
    c_op: DFF<Bits<MR_OP_BITS>>,
    c_key: DFF<Bits<32>>,
    c_pd: DFF<Bits<MR_PD_BITS>>,
    c_access: DFF<Bits<MR_ACCESS_BITS>>,
    c_addr: DFF<Bits<64>>,
    c_len: DFF<Bits<64>>,
    c_shift: DFF<Bits<MR_SHIFT_BITS>>,
    c_index: DFF<Bits<32>>,
    op_write_pt: Constant<Bits<MR_OP_BITS>>,
    aw_full: DFF<Bit>,
    aw_addr: DFF<Bits<ADDR_BITS>>,
    w_full: DFF<Bit>,
    w_data: DFF<Bits<32>>,
    w_strb: DFF<Bits<4>>,
    b_valid: DFF<Bit>,
    b_resp: DFF<Bits<2>>,
    r_busy: DFF<Bit>,
    ar_addr: DFF<Bits<ADDR_BITS>>,
    r_pend0: DFF<Bit>,
    r_pend: DFF<Bit>,
    r_pend2: DFF<Bit>,
    r_valid: DFF<Bit>,
    r_data: DFF<Bits<32>>,
    r_resp: DFF<Bits<2>>,
    okay: Constant<Bits<2>>,
    slverr: Constant<Bits<2>>,
}

/// The default build: `QP_COUNT` contexts.
pub type CsrDefault = Csr<8>;
const _: () = assert!(roce_regs::QP_COUNT == 1 << 8);

impl<const QA: usize> Csr<QA> {
    /// Cycles from the AR handshake to `rvalid`.
    pub const READ_LATENCY: usize = 4;
    /// Cycles from `qp_rd_addr` to `qp_rd_data`.
    pub const QP_READ_LATENCY: usize = 1;

    pub fn new(n: u32) -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_axil_awaddr: Default::default(),
            s_axil_awvalid: Default::default(),
            s_axil_awready: Default::default(),
            s_axil_wdata: Default::default(),
            s_axil_wstrb: Default::default(),
            s_axil_wvalid: Default::default(),
            s_axil_wready: Default::default(),
            s_axil_bresp: Default::default(),
            s_axil_bvalid: Default::default(),
            s_axil_bready: Default::default(),
            s_axil_araddr: Default::default(),
            s_axil_arvalid: Default::default(),
            s_axil_arready: Default::default(),
            s_axil_rdata: Default::default(),
            s_axil_rresp: Default::default(),
            s_axil_rvalid: Default::default(),
            s_axil_rready: Default::default(),
            counters: Default::default(),
            qp_rd_addr: Default::default(),
            qp_rd_data: Default::default(),
            m_mr_cmd_valid: Default::default(),
            m_mr_cmd_ready: Default::default(),
            m_mr_cmd_op: Default::default(),
            m_mr_cmd_key: Default::default(),
            m_mr_cmd_pd: Default::default(),
            m_mr_cmd_access: Default::default(),
            m_mr_cmd_addr: Default::default(),
            m_mr_cmd_len: Default::default(),
            m_mr_cmd_shift: Default::default(),
            m_mr_cmd_index: Default::default(),
            mr_cmd_done: Default::default(),
            mr_cmd_error: Default::default(),
            mr_counters: Default::default(),
            core: CsrCore::new(n),
            mr_valid: Default::default(),
            mr_busy: Default::default(),
            mr_error: Default::default(),
            mr_dropped: Default::default(),
            mr_seq: Default::default(),
            c_op: Default::default(),
            c_key: Default::default(),
            c_pd: Default::default(),
            c_access: Default::default(),
            c_addr: Default::default(),
            c_len: Default::default(),
            c_shift: Default::default(),
            c_index: Default::default(),
            op_write_pt: Constant::new((roce_regs::MrOp::WritePt as u64).into()),
            aw_full: Default::default(),
            aw_addr: Default::default(),
            w_full: Default::default(),
            w_data: Default::default(),
            w_strb: Default::default(),
            b_valid: Default::default(),
            b_resp: Default::default(),
            r_busy: Default::default(),
            ar_addr: Default::default(),
            r_pend0: Default::default(),
            r_pend: Default::default(),
            r_pend2: Default::default(),
            r_valid: Default::default(),
            r_data: Default::default(),
            r_resp: Default::default(),
            okay: Constant::new(RESP_OKAY.into()),
            slverr: Constant::new(RESP_SLVERR.into()),
        }
    }

    /// QP contexts held.
    pub fn qps(&self) -> u32 {
        self.core._plan.n
    }
}

impl<const QA: usize> Logic for Csr<QA> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, aw_full, aw_addr, w_full, w_data, w_strb, b_valid, b_resp, r_busy,
            ar_addr, r_pend0, r_pend, r_pend2, r_valid, r_data, r_resp, mr_valid, mr_busy,
            mr_error, mr_dropped, mr_seq, c_op, c_key, c_pd, c_access, c_addr, c_len, c_shift,
            c_index
        );
        clock!(self, clock, core);
        self.core.reset.next = self.reset.val();
        self.core.counters.next = self.counters.val();
        self.core.qp_rd_addr.next = self.qp_rd_addr.val();
        self.qp_rd_data.next = self.core.qp_rd_data.val();
        self.s_axil_awready.next = !self.aw_full.q.val();
        self.s_axil_wready.next = !self.w_full.q.val();
        self.s_axil_bvalid.next = self.b_valid.q.val();
        self.s_axil_bresp.next = self.b_resp.q.val();
        self.s_axil_arready.next = !self.r_busy.q.val();
        self.s_axil_rvalid.next = self.r_valid.q.val();
        self.s_axil_rdata.next = self.r_data.q.val();
        self.s_axil_rresp.next = self.r_resp.q.val();
        // Write: hold AW and W, write when both are held and B is free.
        self.core.wr_addr.next = self.aw_addr.q.val();
        self.core.wr_data.next = self.w_data.q.val();
        self.core.wr_strb.next = self.w_strb.q.val();
        self.core.wr_en.next = false;
        if self.s_axil_awvalid.val() & !self.aw_full.q.val() {
            self.aw_full.d.next = true;
            self.aw_addr.d.next = self.s_axil_awaddr.val();
        }
        if self.s_axil_wvalid.val() & !self.w_full.q.val() {
            self.w_full.d.next = true;
            self.w_data.d.next = self.s_axil_wdata.val();
            self.w_strb.d.next = self.s_axil_wstrb.val();
        }
        if self.aw_full.q.val() & self.w_full.q.val() & !self.b_valid.q.val() {
            self.core.wr_en.next = true;
            self.aw_full.d.next = false;
            self.w_full.d.next = false;
            self.b_valid.d.next = true;
            if self.core.wr_err.val() {
                self.b_resp.d.next = self.slverr.val();
            } else {
                self.b_resp.d.next = self.okay.val();
            }
        }
        if self.b_valid.q.val() & self.s_axil_bready.val() {
            self.b_valid.d.next = false;
        }
        // Read: AR address registered (stage 0), decoded and read (stage
        // 1), RAM words registered (stage 2), R after the read mux (stage 3).
        self.core.rd_addr.next = self.ar_addr.q.val();
        self.core.rd_en.next = self.r_pend0.q.val();
        self.r_pend0.d.next = false;
        if self.s_axil_arvalid.val() & !self.r_busy.q.val() {
            self.r_busy.d.next = true;
            self.r_pend0.d.next = true;
            self.ar_addr.d.next = self.s_axil_araddr.val();
        }
        self.r_pend.d.next = self.r_pend0.q.val();
        self.r_pend2.d.next = self.r_pend.q.val();
        if self.r_pend2.q.val() {
            self.r_valid.d.next = true;
            self.r_data.d.next = self.core.rd_data.val();
            if self.core.rd_err.val() {
                self.r_resp.d.next = self.slverr.val();
            } else {
                self.r_resp.d.next = self.okay.val();
            }
        }
        if self.r_valid.q.val() & self.s_axil_rready.val() {
            self.r_valid.d.next = false;
            self.r_busy.d.next = false;
        }
        // MR command: the doorbell copies the registers into the command,
        // which is offered until taken; busy until the table answers.
        self.core.mr_busy.next = self.mr_busy.q.val();
        self.core.mr_error.next = self.mr_error.q.val();
        self.core.mr_dropped.next = self.mr_dropped.q.val();
        self.core.mr_seq.next = self.mr_seq.q.val();
        self.core.mr_counters.next = self.mr_counters.val();
        self.m_mr_cmd_valid.next = self.mr_valid.q.val();
        self.m_mr_cmd_op.next = self.c_op.q.val();
        self.m_mr_cmd_key.next = self.c_key.q.val();
        self.m_mr_cmd_pd.next = self.c_pd.q.val();
        self.m_mr_cmd_access.next = self.c_access.q.val();
        self.m_mr_cmd_addr.next = self.c_addr.q.val();
        self.m_mr_cmd_len.next = self.c_len.q.val();
        self.m_mr_cmd_shift.next = self.c_shift.q.val();
        self.m_mr_cmd_index.next = self.c_index.q.val();
        if self.mr_valid.q.val() & self.m_mr_cmd_ready.val() {
            self.mr_valid.d.next = false;
        }
        if self.mr_busy.q.val() & self.mr_cmd_done.val() {
            self.mr_busy.d.next = false;
            self.mr_error.d.next = self.mr_cmd_error.val();
            self.mr_seq.d.next = self.mr_seq.q.val() + 1;
        }
        if self.core.mr_go.val() {
            if self.mr_busy.q.val() {
                self.mr_dropped.d.next = true;
            } else if self.core.mr_bad.val() {
                // Refused here: answered at once, nothing sent.
                self.mr_dropped.d.next = false;
                self.mr_error.d.next = true;
                self.mr_seq.d.next = self.mr_seq.q.val() + 1;
            } else {
                self.mr_busy.d.next = true;
                self.mr_valid.d.next = true;
                self.mr_dropped.d.next = false;
                self.c_op.d.next = self.core.mr_op.val();
                self.c_key.d.next = self.core.mr_key.val();
                self.c_pd.d.next = self.core.mr_pd.val();
                self.c_access.d.next = self.core.mr_access.val();
                self.c_len.d.next = self.core.mr_len.val();
                self.c_shift.d.next = self.core.mr_shift.val();
                self.c_index.d.next = self.core.mr_index.val();
                if self.core.mr_op.val() == self.op_write_pt.val() {
                    self.c_addr.d.next = self.core.mr_pa.val();
                } else {
                    self.c_addr.d.next = self.core.mr_va.val();
                }
            }
        }
        if self.reset.val() {
            self.mr_valid.d.next = false;
            self.mr_busy.d.next = false;
            self.mr_error.d.next = false;
            self.mr_dropped.d.next = false;
            self.mr_seq.d.next = 0.into();
            self.aw_full.d.next = false;
            self.w_full.d.next = false;
            self.b_valid.d.next = false;
            self.r_busy.d.next = false;
            self.r_pend0.d.next = false;
            self.r_pend.d.next = false;
            self.r_pend2.d.next = false;
            self.r_valid.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csr_synthesizes() {
        let mut m = Csr::<4>::new(16);
        m.connect_all();
        let v = generate_verilog(&m);
        yosys_validate("csr", &v).unwrap();
    }

    #[test]
    fn csr_plan_covers_the_map() {
        let p = Plan::new(roce_regs::QP_COUNT);
        // Every register element of the map is decoded exactly once.
        for b in BLOCKS {
            for r in b.registers {
                for i in 0..r.count {
                    let a = b.base + r.element_offset(i);
                    let hits = p.word_at(a).is_some() as u32 + p.ctx_at(a).is_some() as u32;
                    assert_eq!(hits, 1, "{}.{}[{i}] at {a:#x}", b.name, r.name);
                }
            }
        }
        assert_eq!(
            ctx_layout().last().map(|(_, f, at)| at + f.width as usize),
            Some(QP_CTX_BITS)
        );
    }

    #[test]
    #[should_panic(expected = "out of 1..=")]
    fn csr_rejects_too_many_qps() {
        Plan::new(QP_MAX + 1);
    }
}
