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
//!   `QP_STRIDE`) are stored twice, N deep, holding their field bits only:
//!   the CSR copy in one block RAM per register, read with the RAM's output
//!   register (under `ROCE_BRAM_ECP5_DP16KD`, DP16KD primitives with
//!   `OUTREG`, as `bram::BramOutReg`), and the datapath copy ([`QpStore`]:
//!   block RAM with its output register in the default build, or block RAM
//!   without it, or LUT RAM). CSR writes need all four byte strobes (a
//!   partial write answers SLVERR and changes nothing, but is not counted:
//!   the address is mapped). The datapath reads a whole context, packed,
//!   [`QpStore::latency`] cycles after `qp_rd_addr` (2 in the default
//!   build; 1 with `Bram` or `Lutram`), one read per cycle ([`ctx_layout`]).
//!
//! - Datapath read ports: `qp_rd_addr`/`qp_rd_data` and, for the NIC's
//!   other context readers, `qp_rd_addr_1`/`qp_rd_data_1` and
//!   `qp_rd_addr_2`/`qp_rd_data_2`, each the same form (one read per cycle,
//!   [`QpStore::latency`]) with its own copy of the datapath store, all
//!   written by the same context writes. [`Csr::with_ports`] builds 1 to 3
//!   copies (1 by default); a port without a copy reads 0.
//! - Context-write notification (`m_ctx_wr_*`): one pulse per successful
//!   context-register write with its QPN, byte offset in the context and
//!   the word as stored, in the first cycle in which a datapath read
//!   issued returns the new word (the cycle after the write's `bvalid`
//!   rises).
//! - `cfg_*` outputs: the station MAC, UDP source-port base, GID and P_Key
//!   tables from the `cfg` flip-flops, laid out as `tx_arb` takes them
//!   (built, as the MR command fields, by `Plan::flop_outputs`).
//!
//! The address decode is two stages ([`PAGE_BITS`]): the first registers
//! one bit per page of 8 words that holds mapped words (a compare of the
//! upper word-address bits against a handful of constants), the word index
//! within the page and the context-register hit; the second selects within
//! a page, for reads in two registered steps (a 4:1 mux per half page,
//! then the half). No single cycle compares an address against every
//! mapped word.
//!
//! - `mr` (memory-region commands): the command registers are RW flip-flops
//!   (all 32 bits); a write of `mr.doorbell.GO` copies them into the
//!   `m_mr_cmd_*` command (valid/ready, to `mr_tlb`'s `s_cmd_*`) unless a
//!   command is busy (then `mr.status.DROPPED`) or a field is too wide for
//!   the table (then `status.ERROR` at once, nothing sent). `mr.status`
//!   shows `BUSY`, `ERROR`, `DROPPED` and `SEQ` (commands answered). The
//!   doorbell is decoded from the stage-1 page decode, as the flip-flop
//!   writes, and acts with them, one cycle after the write decision
//!   (`mr_go` and the too-wide check `mr_bad` are registered; `mr_bad`
//!   in two steps).
//!
//! AXI behaviour: one write and one read in flight. AW and W are accepted
//! independently (each has a one-entry holding register); the held AW
//! address is decoded into registers in the next two cycles, and the write
//! happens once that decode is in and W is held and no B response is
//! pending; B follows one cycle later (4 cycles from an AW+W handshake in
//! one cycle). Flip-flop registers take the write one cycle after it, the
//! context RAMs one cycle after that (their port is registered), both
//! before a read that follows the B response can see them. A read is accepted when no read is in flight; R is valid
//! seven cycles after the AR handshake (address registered; page decode;
//! index copies per page; word within its half page and RAM read; word
//! within its page and RAM output register; both registered again in the
//! fabric; context mux into the R register). `ready` outputs
//! depend only on state.

use roce_regs::{Access, Counter, Field, Register, BLOCKS, CSR_WINDOW_SIZE, QP_MAX, QP_STRIDE};
use rust_hdl_core::prelude::*;
use rust_hdl_core::timing::TimingInfo;
use rust_hdl_widgets::prelude::*;

use crate::tx_arb::{GIDS, GID_TABLE_BITS, PKEYS, PKEY_TABLE_BITS};

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

/// Word-address bits the second stage of the CSR decode resolves: the
/// first stage registers which page (word address `>> PAGE_BITS`) an
/// access falls in, as one bit per page that holds mapped words, and the
/// word index within the page; the second selects among the page's (at
/// most `2^PAGE_BITS`) words: for reads a registered 4:1 mux per half page
/// (one ECP5 slice per bit), then the half, registered.
/// Contexts are whole pages (`QP_STRIDE` is a multiple of a page), so no
/// page mixes mapped words and contexts.
pub const PAGE_BITS: usize = 3;
const _: () = assert!((QP_STRIDE / 4) % (1 << PAGE_BITS) == 0);

/// Where the datapath copy of the QP context table lives (the CSR copy is
/// always block RAM) and so how many cycles `qp_rd_data` takes after
/// `qp_rd_addr` ([`QpStore::latency`]); every form takes one read per
/// cycle. On ECP5 in this flow no 1-cycle form reaches 150 MHz
/// (docs/BENCHMARKS.md, `csr`): the default build uses [`QpStore::BramOutReg`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpStore {
    /// Block RAM with its output register (DP16KD `OUTREG` under
    /// `ROCE_BRAM_ECP5_DP16KD`): **2 cycles**, the default build.
    BramOutReg,
    /// Block RAM read without its output register: 1 cycle, but the RAM's
    /// clock-to-out caps the block near 145 MHz on ECP5.
    Bram,
    /// Distributed (LUT) RAM with a flip-flop output register: 1 cycle, but
    /// `qp_rd_addr` fans out to every LUT RAM (1328 DPR16X4 on ECP5 for 256
    /// contexts) and the read mux follows: 109 MHz on ECP5.
    Lutram,
}

impl QpStore {
    /// Cycles from `qp_rd_addr` to `qp_rd_data`.
    pub const fn latency(self) -> usize {
        match self {
            QpStore::BramOutReg => 2,
            QpStore::Bram | QpStore::Lutram => 1,
        }
    }
}

/// Datapath context read ports (`qp_rd_addr`/`qp_rd_data`,
/// `qp_rd_addr_1`/`qp_rd_data_1`, `qp_rd_addr_2`/`qp_rd_data_2`): every
/// build has all three; a build with `ports` copies of the datapath store
/// ([`Csr::with_ports`]) serves the first `ports`, the others read 0.
pub const QP_READ_PORTS: usize = 3;

/// Bits of `m_ctx_wr_offset`: a byte offset within a context (`QP_STRIDE`).
pub const CTX_OFFSET_BITS: usize = QP_STRIDE.trailing_zeros() as usize;

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

/// One output of [`CsrCore`] built from flip-flop fields: the MR command
/// registers (`mr_*`) and the configuration for the datapath (`cfg_*`).
#[derive(Clone, Debug)]
struct FlopOutput {
    port: &'static str,
    width: usize,
    /// Fields from most to least significant: (window address, field).
    /// One part: its low `width` bits; several: exactly `width` bits.
    parts: Vec<(u32, Field)>,
    /// The flip-flop of each part.
    flops: Vec<usize>,
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

    /// The outputs built from flip-flop fields: (port, its width, fields
    /// from most to least significant as (window address, field), which
    /// ops refuse a value wider than the port). The MR command registers
    /// (`mr_*`), then the configuration `tx_arb` takes (`cfg_*`).
    fn flop_outputs(&self) -> Vec<FlopOutput> {
        use roce_regs::{cfg, mr};
        let out = |port, width, parts: Vec<(u32, Field)>, check| {
            let flops = parts.iter().map(|(a, _)| self.flop_at(*a)).collect();
            let total: usize = parts.iter().map(|(_, f)| f.width as usize).sum();
            assert!(parts.len() == 1 || total == width, "{port}");
            FlopOutput {
                port,
                width,
                parts,
                flops,
                check,
            }
        };
        let one = |port, width, a, f, check| out(port, width, vec![(a, f)], check);
        let two =
            |port, hi: (u32, Field), lo: (u32, Field)| out(port, 64, vec![hi, lo], Check::Never);
        // `tx_arb`'s `gid`: entry e at `[128e +: 128]`, `gid_w0[e]` (GID
        // bytes 0..4) in its top word; `pkey_tab`: entry e at `[16e +: 16]`.
        let gid = (0..GIDS as u32)
            .rev()
            .flat_map(|e| {
                [
                    (cfg::gid_w0::addr(e), cfg::gid_w0::WORD),
                    (cfg::gid_w1::addr(e), cfg::gid_w1::WORD),
                    (cfg::gid_w2::addr(e), cfg::gid_w2::WORD),
                    (cfg::gid_w3::addr(e), cfg::gid_w3::WORD),
                ]
            })
            .collect();
        let pkey = (0..PKEYS as u32)
            .rev()
            .map(|e| (cfg::pkey::addr(e), cfg::pkey::PKEY))
            .collect();
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
            out(
                "cfg_mac",
                48,
                vec![
                    (cfg::mac_hi::ADDR, cfg::mac_hi::MAC),
                    (cfg::mac_lo::ADDR, cfg::mac_lo::MAC),
                ],
                Check::Never,
            ),
            one(
                "cfg_udp_sport",
                16,
                cfg::udp_sport::ADDR,
                cfg::udp_sport::BASE,
                Check::Never,
            ),
            out("cfg_gid", GID_TABLE_BITS, gid, Check::Never),
            out("cfg_pkey", PKEY_TABLE_BITS, pkey, Check::Never),
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

    /// Pages (word address `>> PAGE_BITS`) that hold mapped words, in
    /// ascending order, each with its words.
    pub fn pages(&self) -> Vec<(u32, Vec<&Word>)> {
        let mut pages: Vec<(u32, Vec<&Word>)> = Vec::new();
        for w in &self.words {
            let p = (w.addr / 4) >> PAGE_BITS;
            match pages.iter_mut().find(|(q, _)| *q == p) {
                Some((_, ws)) => ws.push(w),
                None => pages.push((p, vec![w])),
            }
        }
        pages.sort_by_key(|(p, _)| *p);
        pages
    }

    /// The decoder's Verilog body (ports declared by rust-hdl).
    fn verilog(&self, qa: usize, store: QpStore, ports: usize) -> String {
        use std::fmt::Write;
        let wa = ADDR_BITS - 2;
        let sh = (QP_STRIDE / 4).trailing_zeros() as usize;
        let lo = self.ctx_base / 4;
        let qhi = sh + qa;
        assert!(qhi < wa, "the context table fits the window");
        assert_eq!(
            lo % (1 << qhi),
            0,
            "contexts start at a multiple of 2^QA contexts, so a QPN is address bits"
        );
        assert!(
            qa <= 10,
            "context RAMs are at most 1024 deep (one DP16KD column)"
        );
        let pb = PAGE_BITS;
        let pages = self.pages();
        let np = pages.len();
        // A word's index in its page; a page's indices as case labels.
        let slot = |w: &Word| (w.addr / 4) as usize & ((1 << pb) - 1);
        let labels = |ws: &[&Word]| {
            let l: Vec<String> = ws.iter().map(|w| format!("{pb}'d{}", slot(w))).collect();
            l.join(", ")
        };
        // Byte `b` of what word `w` reads.
        let src = |w: &Word, b: usize| match w.src {
            Source::Flop { index, .. } => format!("f{index}[{}:{}]", 8 * b + 7, 8 * b),
            Source::Const(c) => format!("8'h{:02x}", (c >> (8 * b)) & 0xFF),
            Source::Lane(l) => format!("counters[{}:{}]", 32 * l + 8 * b + 7, 32 * l + 8 * b),
            Source::Unmapped => format!("unmapped[{}:{}]", 8 * b + 7, 8 * b),
            Source::MrDoorbell => "8'h00".into(),
            Source::MrStatus => format!("mr_status[{}:{}]", 8 * b + 7, 8 * b),
            Source::MrCounter(l) => {
                format!("mr_counters[{}:{}]", 32 * l + 8 * b + 7, 32 * l + 8 * b)
            }
        };
        let mut v = String::new();
        let s = &mut v;
        writeln!(s, "// Generated from roce-regs by roce_hw::csr::Plan.").unwrap();
        writeln!(
            s,
            "// Decode in two stages: page select (word address bits {}:{pb}) and word within the page.",
            wa - 1
        )
        .unwrap();
        writeln!(s, "wire [{}:0] wa = wr_addr[{}:2];", wa - 1, ADDR_BITS - 1).unwrap();
        writeln!(s, "wire [{}:0] ra = rd_addr[{}:2];", wa - 1, ADDR_BITS - 1).unwrap();
        writeln!(
            s,
            "wire [31:0] wmask = {{{{8{{wr_strb[3]}}}}, {{8{{wr_strb[2]}}}}, {{8{{wr_strb[1]}}}}, {{8{{wr_strb[0]}}}}}};"
        )
        .unwrap();
        for (p, a) in [("w", "wa"), ("r", "ra")] {
            let below_n = if self.n < 1 << qa {
                format!(" && ({p}_qpn < {qa}'d{})", self.n)
            } else {
                String::new()
            };
            writeln!(s, "wire [{}:0] {p}_qpn = {a}[{}:{sh}];", qa - 1, qhi - 1).unwrap();
            writeln!(s, "wire [{}:0] {p}_reg = {a}[{}:0];", sh - 1, sh - 1).unwrap();
            writeln!(
                s,
                "wire {p}_in_ctx = ({a}[{}:{qhi}] == {}'d{}){below_n};",
                wa - 1,
                wa - qhi,
                lo >> qhi
            )
            .unwrap();
            writeln!(s, "reg {p}_reg_ok;\nalways @(*) case ({p}_reg)").unwrap();
            for c in &self.ctx {
                writeln!(s, "    {sh}'d{}: {p}_reg_ok = 1'b1;", c.offset / 4).unwrap();
            }
            writeln!(s, "    default: {p}_reg_ok = 1'b0;\nendcase").unwrap();
        }
        // Write decode, stage 1: registered from the held AW address every
        // cycle (the AXI side writes only once it has been held two
        // cycles): page, index, context hit and one select per context
        // register.
        writeln!(
            s,
            "reg [{}:0] w_pg;\nreg [{}:0] w_idx;\nreg w_ctx;\nreg [{}:0] w_qpn1;\nreg [{}:0] w_reg1;",
            np - 1,
            pb - 1,
            qa - 1,
            sh - 1
        )
        .unwrap();
        writeln!(s, "reg [{}:0] w_csel;", self.ctx.len() - 1).unwrap();
        writeln!(s, "always @(posedge clock) begin").unwrap();
        for (k, c) in self.ctx.iter().enumerate() {
            writeln!(
                s,
                "    w_csel[{k}] <= w_in_ctx && w_reg == {sh}'d{};",
                c.offset / 4
            )
            .unwrap();
        }
        for (j, (p, _)) in pages.iter().enumerate() {
            writeln!(
                s,
                "    w_pg[{j}] <= (wa[{}:{pb}] == {}'d{p});",
                wa - 1,
                wa - pb
            )
            .unwrap();
        }
        writeln!(
            s,
            "    w_idx <= wa[{}:0];\n    w_ctx <= w_in_ctx && w_reg_ok;\n    w_qpn1 <= w_qpn;\n    w_reg1 <= w_reg;\nend",
            pb - 1
        )
        .unwrap();
        // Write decode, stage 2: hit and error.
        writeln!(s, "reg w_hit;\nalways @(*) begin\n    w_hit = w_ctx;").unwrap();
        for (j, (_, ws)) in pages.iter().enumerate() {
            writeln!(
                s,
                "    if (w_pg[{j}]) case (w_idx)\n        {}: w_hit = 1'b1;\n        default: ;\n    endcase",
                labels(ws)
            )
            .unwrap();
        }
        writeln!(s, "end").unwrap();
        // Write decode, stage 2: the hit registered.
        writeln!(
            s,
            "reg w_hit2;\nalways @(posedge clock) w_hit2 <= w_hit;\nalways @(*) wr_err = !w_hit2 || (w_ctx && wr_strb != 4'hf);"
        )
        .unwrap();
        // MR command: the doorbell pulse, the status word.
        {
            use roce_regs::mr::{doorbell, status};
            // A write of `GO` to the doorbell, from the stage-1 page decode
            // (as the flip-flop writes), registered: `mr_go` pulses one edge
            // after `wr_en`, when the flip-flop registers take their writes.
            let go = doorbell::GO.lsb;
            let dw = doorbell::ADDR / 4;
            let j = pages
                .iter()
                .position(|(p, _)| *p == dw >> pb)
                .expect("the doorbell is a mapped word");
            writeln!(
                s,
                "always @(posedge clock) mr_go <= !reset && wr_en && w_pg[{j}] && w_idx == {pb}'d{} && wr_strb[{}] && wr_data[{go}];",
                dw & ((1 << pb) - 1),
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
        // Flip-flop registers take a write one edge after `wr_en`, from the
        // data and strobes still held then; the decode as one registered
        // select per register (`fs`, from the stage-1 page and index, held:
        // `wr_en` comes two edges after them), and its write enable
        // registered with `wr_en` (`fw`), so each register's clock enable
        // is a flip-flop of its own.
        writeln!(s, "reg [31:0] unmapped;\nreg un_w;\nreg un_r;\nreg wr_q;").unwrap();
        for (j, (_, ws)) in pages.iter().enumerate() {
            for w in ws {
                if let Source::Flop { index: i, .. } = w.src {
                    writeln!(
                        s,
                        "reg fs{i};\nreg fw{i};\ninitial fw{i} = 1'b0;\nalways @(posedge clock) begin\n    fs{i} <= w_pg[{j}] && w_idx == {pb}'d{};\n    fw{i} <= !reset && wr_en && fs{i};\nend",
                        slot(w)
                    )
                    .unwrap();
                }
            }
        }
        writeln!(
            s,
            "reg r1_v;\nreg r2_v;\nreg r3_v;\nreg r4_v;\nreg [{n}:0] r_pg;\nreg [{n}:0] r_pg2;\nreg [{i}:0] r_i1;\nreg r_ctx;\nreg [{m}:0] r_reg1;\nreg [{q}:0] r_qpn1;\nreg [{q}:0] r_qpn2;\nwire r_miss;",
            n = np - 1,
            i = pb - 1,
            q = qa - 1,
            m = sh - 1
        )
        .unwrap();
        writeln!(s, "always @(posedge clock) begin\n    if (reset) begin").unwrap();
        for (_, i, reset, _) in self.flops() {
            writeln!(s, "        f{i} <= 32'h{reset:08x};").unwrap();
        }
        writeln!(
            s,
            "        unmapped <= 32'd0;\n        wr_q <= 1'b0;\n        un_w <= 1'b0;\n        un_r <= 1'b0;\n        r1_v <= 1'b0;\n        r2_v <= 1'b0;\n        r3_v <= 1'b0;\n        r4_v <= 1'b0;\n    end else begin"
        )
        .unwrap();
        for (_, ws) in &pages {
            for w in ws {
                if let Source::Flop {
                    index: i, store, ..
                } = w.src
                {
                    writeln!(
                        s,
                        "        if (fw{i}) f{i} <= (f{i} & ~(wmask & 32'h{store:08x})) | (wr_data & wmask & 32'h{store:08x}); // {}",
                        w.name
                    )
                    .unwrap();
                }
            }
        }
        writeln!(
            s,
            "        wr_q <= wr_en;\n        r1_v <= rd_en;\n        r2_v <= r1_v;\n        r3_v <= r2_v;\n        r4_v <= r3_v;\n        un_w <= wr_en & ~w_hit2;\n        un_r <= r4_v & r_miss;\n        unmapped <= unmapped + {{30'd0, un_w & un_r, un_w ^ un_r}};\n    end\nend"
        )
        .unwrap();
        // Read, stage 1: page select, word index, context register.
        writeln!(s, "always @(posedge clock) if (rd_en) begin").unwrap();
        for (j, (p, _)) in pages.iter().enumerate() {
            writeln!(
                s,
                "    r_pg[{j}] <= (ra[{}:{pb}] == {}'d{p});",
                wa - 1,
                wa - pb
            )
            .unwrap();
        }
        writeln!(
            s,
            "    r_i1 <= ra[{}:0];\n    r_ctx <= r_in_ctx && r_reg_ok;\n    r_reg1 <= r_reg;\n    r_qpn1 <= r_qpn;\nend",
            pb - 1
        )
        .unwrap();
        // Read, stage 2: four copies of the word index per page, one per
        // byte of the word, to keep each one's fanout local. Each is
        // loaded only when its page matches (the registered page bit is
        // the enable: no logic between the address and the copies, which
        // sit by their muxes across the chip) and copy b holds the index
        // XOR b, so copies are not all the same flip-flop (synthesis would
        // merge them).
        writeln!(
            s,
            "reg rd_ctx2;\nreg [{m}:0] rd_reg2;\nreg rd_ctx3;\nreg [{m}:0] rd_reg3;\nreg rd_ctx4;",
            m = sh - 1
        )
        .unwrap();
        for j in 0..np {
            for b in 0..4 {
                writeln!(s, "reg [{}:0] r_idx{j}_{b};", pb - 1).unwrap();
            }
        }
        writeln!(
            s,
            "always @(posedge clock) begin\n    r_pg2 <= r_pg;\n    rd_ctx2 <= r_ctx;\n    rd_reg2 <= r_reg1;\n    r_qpn2 <= r_qpn1;"
        )
        .unwrap();
        for j in 0..np {
            for b in 0..4 {
                writeln!(s, "    if (r_pg[{j}]) r_idx{j}_{b} <= r_i1 ^ {pb}'d{b};").unwrap();
            }
        }
        writeln!(s, "end").unwrap();
        // MR command registers, out to the command port (low bits), and
        // whether a doorbell must refuse them (a field too wide),
        // registered in two steps (each field's check and the op, then
        // their combination): the registers change only with a write's
        // `wr_q`, and the next write (so a doorbell's `mr_go`) comes at
        // least three edges later, so `mr_bad` is current by then.
        let outs = self.flop_outputs();
        let fl =
            |a: u32, f: &Field| format!("f{}[{}:{}]", self.flop_at(a), f.lsb + f.width - 1, f.lsb);
        writeln!(s, "always @(*) begin").unwrap();
        for o in &outs {
            let e: Vec<String> = o
                .parts
                .iter()
                .zip(&o.flops)
                .map(|((_, f), i)| {
                    // A single field wider than the port: its low bits.
                    let w = if o.parts.len() == 1 {
                        o.width.min(f.width as usize)
                    } else {
                        f.width as usize
                    };
                    format!("f{i}[{}:{}]", f.lsb as usize + w - 1, f.lsb)
                })
                .collect();
            writeln!(s, "    {} = {{{}}};", o.port, e.join(", ")).unwrap();
        }
        writeln!(s, "end").unwrap();
        let wide = |o: &FlopOutput| {
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
            "reg [{}:0] mr_wa;\nreg [{}:0] mr_wr;\nreg mr_reg;\nalways @(posedge clock) begin\n    mr_wa <= {{{}}};\n    mr_wr <= {{{}}};\n    mr_reg <= {} == {}'d{};\nend",
            always.len() - 1,
            register.len() - 1,
            always.join(", "),
            register.join(", "),
            fl(oa, &of),
            of.width,
            roce_regs::MrOp::Register as u32,
        )
        .unwrap();
        writeln!(
            s,
            "always @(posedge clock) mr_bad <= (|mr_wa) || (mr_reg && (|mr_wr));"
        )
        .unwrap();
        // Read, stage 3: per page, the word within each half page (a 4:1
        // mux on the index's low bits, words absent from the page read 0:
        // one LUT4 pair and a PFUMX per bit on ECP5), whether the index
        // names a word of the page, and per byte lane a copy of the page
        // bit and the index's high bit (copy b XORed with b's two bits, so
        // no two copies are the same flip-flop).
        let half = 1usize << (pb - 1);
        let mut hits = Vec::new();
        let mut words = Vec::new();
        for j in 0..np {
            writeln!(s, "reg [31:0] plo{j};\nreg [31:0] phi{j};\nreg pa{j};").unwrap();
            for b in 0..4 {
                writeln!(s, "reg [1:0] ps{j}_{b};").unwrap();
            }
            writeln!(s, "reg [31:0] pq{j};\nreg ph{j};").unwrap();
            hits.push(format!("ph{j}"));
            words.push(format!("pq{j}"));
        }
        writeln!(
            s,
            "always @(posedge clock) begin\n    rd_ctx3 <= rd_ctx2;\n    rd_reg3 <= rd_reg2;"
        )
        .unwrap();
        for (j, (_, ws)) in pages.iter().enumerate() {
            let at = |i: usize| ws.iter().find(|w| slot(w) == i);
            writeln!(
                s,
                "    case (r_idx{j}_0)\n        {}: pa{j} <= r_pg2[{j}];\n        default: pa{j} <= 1'b0;\n    endcase",
                labels(ws)
            )
            .unwrap();
            for b in 0..4 {
                writeln!(
                    s,
                    "    ps{j}_{b} <= {{r_pg2[{j}] ^ 1'b{}, r_idx{j}_{b}[{}] ^ 1'b{}}};",
                    b & 1,
                    pb - 1,
                    b >> 1
                )
                .unwrap();
                writeln!(s, "    case (r_idx{j}_{b}[{}:0] ^ {}'d{b})", pb - 2, pb - 1).unwrap();
                for i in 0..half {
                    let byte = |w: Option<&&Word>| match w {
                        Some(w) => src(w, b),
                        None => "8'h00".into(),
                    };
                    writeln!(
                        s,
                        "        {}'d{i}: begin plo{j}[{hi}:{lo}] <= {}; phi{j}[{hi}:{lo}] <= {}; end",
                        pb - 1,
                        byte(at(i)),
                        byte(at(i + half)),
                        hi = 8 * b + 7,
                        lo = 8 * b,
                    )
                    .unwrap();
                }
                writeln!(s, "    endcase").unwrap();
            }
        }
        writeln!(s, "end").unwrap();
        // Read, stage 4: the page word (0 outside the page) from its half.
        writeln!(
            s,
            "reg [{}:0] rsel4;\nalways @(posedge clock) begin\n    rd_ctx4 <= rd_ctx3;",
            self.ctx.len() - 1
        )
        .unwrap();
        // One select per context register for stage 5.
        for (k, c) in self.ctx.iter().enumerate() {
            writeln!(
                s,
                "    rsel4[{k}] <= rd_ctx3 && rd_reg3 == {sh}'d{};",
                c.offset / 4
            )
            .unwrap();
        }
        for j in 0..np {
            writeln!(s, "    ph{j} <= pa{j};").unwrap();
            for b in 0..4 {
                writeln!(
                    s,
                    "    pq{j}[{hi}:{lo}] <= (ps{j}_{b}[1] ^ 1'b{}) ? ((ps{j}_{b}[0] ^ 1'b{}) ? phi{j}[{hi}:{lo}] : plo{j}[{hi}:{lo}]) : 8'h00;",
                    b & 1,
                    b >> 1,
                    hi = 8 * b + 7,
                    lo = 8 * b,
                )
                .unwrap();
            }
        }
        writeln!(s, "end").unwrap();
        hits.push("rd_ctx4".into());
        writeln!(s, "assign r_miss = !({});", hits.join(" | ")).unwrap();
        // Read, stage 5: the page words ORed, the error, and every context
        // RAM word registered again in the fabric, 0 unless its register
        // is the one read (the RAMs sit far apart; the last OR then starts
        // at nearby flip-flops).
        writeln!(
            s,
            "reg [31:0] pw5;\nreg rd_err5;\nalways @(posedge clock) begin\n    pw5 <= {};\n    rd_err5 <= r_miss;\nend\nalways @(*) rd_err = rd_err5;",
            words.join(" | ")
        )
        .unwrap();
        // Context RAMs: one write port (CSR), its enable, address and data
        // registered once more so they can travel to RAMs anywhere on the
        // chip; the CSR read port (RAM word, then its output register) and
        // the datapath copy.
        writeln!(
            s,
            "reg [{}:0] cw_a;\nreg [31:0] cw_d;\nalways @(posedge clock) begin\n    cw_a <= w_qpn1;\n    cw_d <= wr_data;\nend",
            qa - 1
        )
        .unwrap();
        let mut pack = vec![Vec::new(); QP_READ_PORTS];
        for (k, c) in self.ctx.iter().enumerate() {
            let reset = packed_reset(c.reg);
            let m = c.bits - 1;
            let parts: Vec<String> = c
                .reg
                .fields
                .iter()
                .rev()
                .map(|f| format!("cw_d[{}:{}]", f.lsb + f.width - 1, f.lsb))
                .collect();
            writeln!(
                s,
                "// qp.{}\nreg [{m}:0] qc5_{k};\nalways @(posedge clock) qc5_{k} <= rsel4[{k}] ? qc2_{k} : {}'d0;\nreg we{k};\ninitial we{k} = 1'b0;\nalways @(posedge clock) we{k} <= wr_en && w_csel[{k}] && wr_strb == 4'hf;\nwire [{m}:0] wd{k} = {{{}}};",
                c.reg.name,
                c.bits,
                parts.join(", ")
            )
            .unwrap();
            let ports_of = |label: &str, ce: &str, ra: &str, q: &str| {
                crate::bram::outreg_ram(
                    &crate::bram::Dp16kdPorts {
                        label,
                        we: &format!("we{k}"),
                        wa: "cw_a",
                        wd: &format!("wd{k}"),
                        ce,
                        ra,
                        oce: "1'b1",
                        q,
                    },
                    c.bits,
                    qa,
                    self.n as usize,
                    Some(reset),
                )
            };
            // The CSR copy, read through its output register.
            s.push_str(&ports_of(
                &format!("cm{k}"),
                "r2_v",
                "r_qpn2",
                &format!("qc2_{k}"),
            ));
            // The datapath copies, one per read port (port 0's names as
            // in a one-port build).
            for (p, words) in pack.iter_mut().enumerate().take(ports) {
                let (pre, addr) = match p {
                    0 => (String::new(), "qp_rd_addr".to_string()),
                    p => (format!("p{p}_"), format!("qp_rd_addr_{p}")),
                };
                if store == QpStore::BramOutReg {
                    s.push_str(&ports_of(
                        &format!("{pre}dm{k}"),
                        "1'b1",
                        &addr,
                        &format!("{pre}qd{k}"),
                    ));
                } else {
                    let attr = match store {
                        QpStore::Lutram => "(* ram_style = \"distributed\" *) ",
                        _ => "",
                    };
                    writeln!(
                        s,
                        "{attr}reg [{m}:0] {pre}qdm{k} [0:{}];\nreg [{m}:0] {pre}qd{k};\ninteger {pre}j{k};\ninitial for ({pre}j{k} = 0; {pre}j{k} < {}; {pre}j{k} = {pre}j{k} + 1) {pre}qdm{k}[{pre}j{k}] = {}'h{reset:x};\nalways @(posedge clock) begin\n    if (we{k}) {pre}qdm{k}[cw_a] <= wd{k};\n    {pre}qd{k} <= {pre}qdm{k}[{addr}];\nend",
                        self.n - 1,
                        self.n,
                        c.bits
                    )
                    .unwrap();
                }
                words.push(format!("{pre}qd{k}"));
            }
        }
        for (p, words) in pack.iter_mut().enumerate() {
            let port = match p {
                0 => "qp_rd_data".to_string(),
                p => format!("qp_rd_data_{p}"),
            };
            if words.is_empty() {
                writeln!(s, "always @(*) {port} = {QP_CTX_BITS}'d0;").unwrap();
            } else {
                words.reverse();
                writeln!(s, "always @(*) {port} = {{{}}};", words.join(", ")).unwrap();
            }
        }
        // Context-write notification: registered from the RAM write
        // enables (`we*`, the edge the RAMs take the word), so it pulses in
        // the first cycle whose datapath read returns the new word.
        let any: Vec<String> = (0..self.ctx.len()).map(|k| format!("we{k}")).collect();
        let ow = CTX_OFFSET_BITS;
        let offs: Vec<String> = self
            .ctx
            .iter()
            .enumerate()
            .map(|(k, c)| format!("({{{ow}{{we{k}}}}} & {ow}'d{})", c.offset))
            .collect();
        let masks: Vec<String> = self
            .ctx
            .iter()
            .enumerate()
            .map(|(k, c)| format!("({{32{{we{k}}}}} & 32'h{:08x})", c.reg.used_bits()))
            .collect();
        writeln!(
            s,
            "initial ctx_wr_valid = 1'b0;\nalways @(posedge clock) begin\n    ctx_wr_valid <= {};\n    ctx_wr_qpn <= cw_a;\n    ctx_wr_offset <= {};\n    ctx_wr_data <= cw_d & ({});\nend",
            any.join(" | "),
            offs.join(" | "),
            masks.join(" | ")
        )
        .unwrap();
        // The read word: the page word (0 for a context) ORed with each
        // context register's fields in place (0 unless selected).
        let mut terms = vec!["pw5".to_string()];
        for (k, c) in self.ctx.iter().enumerate() {
            let mut fields: Vec<(usize, &Field)> = Vec::new();
            let mut at = 0;
            for f in c.reg.fields {
                fields.push((at, f));
                at += f.width as usize;
            }
            fields.sort_by_key(|(_, f)| std::cmp::Reverse(f.lsb));
            let mut parts = Vec::new();
            let mut top = 32;
            for (at, f) in fields {
                let (lsb, w) = (f.lsb as usize, f.width as usize);
                if top > lsb + w {
                    parts.push(format!("{}'d0", top - lsb - w));
                }
                parts.push(format!("qc5_{k}[{}:{at}]", at + w - 1));
                top = lsb;
            }
            if top > 0 {
                parts.push(format!("{top}'d0"));
            }
            terms.push(format!("{{{}}}", parts.join(", ")));
        }
        writeln!(s, "always @(*) rd_data = {};", terms.join("\n    | ")).unwrap();
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
    /// Write the word at `wr_addr`; `wr_addr` must have been held for the
    /// two previous edges (the write decode registers it twice).
    pub wr_en: Signal<In, Bit>,
    pub wr_addr: Signal<In, Bits<ADDR_BITS>>,
    pub wr_data: Signal<In, Bits<32>>,
    pub wr_strb: Signal<In, Bits<4>>,
    /// The write at the held `wr_addr` would answer SLVERR (from the
    /// registered decode and `wr_strb`).
    pub wr_err: Signal<Out, Bit>,
    pub rd_en: Signal<In, Bit>,
    pub rd_addr: Signal<In, Bits<ADDR_BITS>>,
    /// Five edges after `rd_en` (page decode; index copies per page; the
    /// word in its half page and the RAM read; the word in its page and the
    /// RAM output register; both registered again), before the last mux.
    pub rd_data: Signal<Out, Bits<32>>,
    pub rd_err: Signal<Out, Bit>,
    pub counters: Signal<In, Bits<COUNTER_IN_BITS>>,
    pub qp_rd_addr: Signal<In, Bits<QA>>,
    pub qp_rd_data: Signal<Out, Bits<QP_CTX_BITS>>,
    /// Datapath read ports 1 and 2: as port 0 when built, else 0.
    pub qp_rd_addr_1: Signal<In, Bits<QA>>,
    pub qp_rd_data_1: Signal<Out, Bits<QP_CTX_BITS>>,
    pub qp_rd_addr_2: Signal<In, Bits<QA>>,
    pub qp_rd_data_2: Signal<Out, Bits<QP_CTX_BITS>>,
    /// A context register took a write at the last edge (registered from
    /// the RAM write enables): QPN, byte offset in the context, the word
    /// as stored (field bits only).
    pub ctx_wr_valid: Signal<Out, Bit>,
    pub ctx_wr_qpn: Signal<Out, Bits<QA>>,
    pub ctx_wr_offset: Signal<Out, Bits<CTX_OFFSET_BITS>>,
    pub ctx_wr_data: Signal<Out, Bits<32>>,
    /// The write of the previous edge set `mr.doorbell.GO` (registered:
    /// it pulses with the flip-flop registers' write, one edge after
    /// `wr_en`).
    pub mr_go: Signal<Out, Bit>,
    /// The `mr` registers held a value too wide for the command port
    /// (registered twice: from the flip-flops two edges before).
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
    /// The `cfg` registers `tx_arb` takes (from the flip-flops).
    pub cfg_mac: Signal<Out, Bits<48>>,
    pub cfg_udp_sport: Signal<Out, Bits<16>>,
    pub cfg_gid: Signal<Out, Bits<GID_TABLE_BITS>>,
    pub cfg_pkey: Signal<Out, Bits<PKEY_TABLE_BITS>>,
    _plan: Plan,
    _store: QpStore,
    /// Copies of the datapath store (read ports served), 1..=3.
    _ports: usize,
    /// `Plan::flop_outputs`.
    _outs: Vec<FlopOutput>,
    /// The notification registered at the last edge: (QPN, offset, word).
    _ctx_wr: Option<(u32, u32, u32)>,
    _flops: Vec<u32>,
    _unmapped: u32,
    /// Unmapped (write, read) seen last cycle, counted this cycle.
    _un: (bool, bool),
    _mem: Vec<Vec<u64>>,
    /// Context RAM write registered on its way to the RAM: (register, QPN, word).
    _cw: Option<(usize, usize, u64)>,
    /// Write decode: the `wr_addr` of the previous edge.
    _wdec: u32,
    /// `wr_en` of the previous edge: flip-flop registers write then.
    _wr_q: bool,
    /// `mr_go`: the previous edge's write set `mr.doorbell.GO`.
    _mr_go: bool,
    /// `mr_bad`, registered twice from the flip-flops (before the last
    /// edge, before the one before).
    _mr_bad: bool,
    _mr_bad1: bool,
    /// Read stage 1: address held, valid.
    _r1: u32,
    _r1v: bool,
    /// Read stage 2: address, valid; stages 3 and 4 valid.
    _r2: u32,
    _r2v: bool,
    _r3v: bool,
    _r4v: bool,
    /// Stages 3, 4 and 5 of the CSR read: (data, error).
    _out: (u32, bool),
    _out2: (u32, bool),
    _out3: (u32, bool),
    /// Datapath read pipelines, one per built port, `store.latency()`
    /// stages each (last = output).
    _qd: Vec<Vec<Vec<u64>>>,
}

impl<const QA: usize> CsrCore<QA> {
    pub fn new(n: u32, store: QpStore, ports: usize) -> Self {
        assert!(
            (1..=QP_READ_PORTS).contains(&ports),
            "CsrCore: {ports} datapath read ports out of 1..={QP_READ_PORTS}"
        );
        let plan = Plan::new(n);
        let outs = plan.flop_outputs();
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
            qp_rd_addr_1: Default::default(),
            qp_rd_data_1: Default::default(),
            qp_rd_addr_2: Default::default(),
            qp_rd_data_2: Default::default(),
            ctx_wr_valid: Default::default(),
            ctx_wr_qpn: Default::default(),
            ctx_wr_offset: Default::default(),
            ctx_wr_data: Default::default(),
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
            cfg_mac: Default::default(),
            cfg_udp_sport: Default::default(),
            cfg_gid: Default::default(),
            cfg_pkey: Default::default(),
            _plan: plan,
            _store: store,
            _ports: ports,
            _outs: outs,
            _ctx_wr: None,
            _flops: flops,
            _unmapped: 0,
            _un: (false, false),
            _mem: mem,
            _cw: None,
            _wdec: 0,
            _wr_q: false,
            _mr_go: false,
            _mr_bad: false,
            _mr_bad1: false,
            _r1: 0,
            _r1v: false,
            _r2: 0,
            _r2v: false,
            _r3v: false,
            _r4v: false,
            _out: (0, false),
            _out2: (0, false),
            _out3: (0, false),
            _qd: vec![vec![vec![0; k]; store.latency()]; ports],
        }
    }

    /// What stage 3 of a CSR read of `addr` takes (data, unmapped): the
    /// word's source now, or the context RAM word (read in stage 3).
    fn stage3(&self, addr: u32) -> (u32, bool) {
        if let Some((q, k)) = self._plan.ctx_at(addr) {
            let mut at = 0;
            let mut v = 0u32;
            for f in self._plan.ctx[k].reg.fields {
                v = f.set(v, (self._mem[k][q as usize] >> at) as u32);
                at += f.width as usize;
            }
            return (v, false);
        }
        match self._plan.word_at(addr) {
            None => (0, true),
            Some(w) => {
                let lanes = self.counters.val();
                let v = match w.src {
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
                (v, false)
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

    /// The fields of a flip-flop output of at most 64 bits, high to low
    /// (not cut to the port).
    fn mr_output(&self, o: &FlopOutput) -> u64 {
        o.parts.iter().zip(&o.flops).fold(0u64, |v, ((_, f), &i)| {
            (v << f.width) | f.get(self._flops[i]) as u64
        })
    }

    /// A flip-flop output as its port shows it.
    fn flop_output<const N: usize>(&self, port: &str) -> Bits<N> {
        let o = self
            ._outs
            .iter()
            .find(|o| o.port == port)
            .expect("a flip-flop output");
        assert_eq!(o.width, N, "{port}");
        let mut b = Bits::<N>::default();
        let mut at: usize = o.parts.iter().map(|(_, f)| f.width as usize).sum();
        for ((_, f), &i) in o.parts.iter().zip(&o.flops) {
            at -= f.width as usize;
            let v = f.get(self._flops[i]);
            for j in (0..f.width as usize).filter(|j| at + j < N) {
                b = b.replace_bit(at + j, v >> j & 1 == 1);
            }
        }
        b
    }

    /// The doorbell refuses the command registers (a field too wide).
    fn mr_bad(&self) -> bool {
        let outs = &self._outs;
        let wide = |o: &FlopOutput| self.mr_output(o) >> o.width != 0;
        let op = outs.iter().find(|o| o.port == "mr_op").expect("mr_op");
        let reg = self.mr_output(op) == roce_regs::MrOp::Register as u64;
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
        let wa = self._wdec;
        let strb = val32(self.wr_strb.val());
        let (w_unmapped, w_err) = self.word_err(wa, strb);
        if self.clock.pos_edge() {
            self._mr_bad = self._mr_bad1;
            self._mr_bad1 = self.mr_bad();
            let addrs = [
                self.qp_rd_addr.val().index(),
                self.qp_rd_addr_1.val().index(),
                self.qp_rd_addr_2.val().index(),
            ];
            for (qd, qa) in self._qd.iter_mut().zip(addrs) {
                qd.pop();
                qd.insert(
                    0,
                    self._mem.iter().map(|m| m[qa.min(m.len() - 1)]).collect(),
                );
            }
            // Read stages 5 and 4, stage 3 (from stage 2 before this edge,
            // the context RAM read before this edge's RAM write), then
            // stages 2 and 1.
            let r_miss = self._out2.1;
            self._out3 = self._out2;
            self._out2 = self._out;
            self._out = self.stage3(self._r2);
            self._r2 = self._r1;
            if self.rd_en.val() {
                self._r1 = val32(self.rd_addr.val());
            }
            let wr = self.wr_en.val();
            // The RAM write, and its notification.
            self._ctx_wr = None;
            if let Some((k, q, v)) = self._cw.take() {
                self._mem[k][q] = v;
                let c = &self._plan.ctx[k];
                let mut at = 0;
                let mut word = 0u32;
                for f in c.reg.fields {
                    word = f.set(word, (v >> at) as u32);
                    at += f.width as usize;
                }
                self._ctx_wr = Some((q as u32, c.offset, word));
            }
            if wr && !w_err {
                let data = val32(self.wr_data.val());
                if let Some((q, k)) = self._plan.ctx_at(wa) {
                    let mut at = 0;
                    let mut v = 0u64;
                    for f in self._plan.ctx[k].reg.fields {
                        v |= (f.get(data) as u64) << at;
                        at += f.width as usize;
                    }
                    self._cw = Some((k, q as usize, v));
                }
            }
            {
                use roce_regs::mr::doorbell;
                let go = doorbell::GO.lsb as u32;
                self._mr_go = !self.reset.val()
                    && wr
                    && wa & !3 == doorbell::ADDR
                    && strb >> (go / 8) & 1 == 1
                    && val32(self.wr_data.val()) >> go & 1 == 1;
            }
            if self.reset.val() {
                self._flops = self._plan.flops().map(|(_, _, r, _)| r).collect();
                self._unmapped = 0;
                self._un = (false, false);
                self._wr_q = false;
                self._r1v = false;
                self._r2v = false;
                self._r3v = false;
                self._r4v = false;
            } else {
                if self._wr_q {
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
                self._un = (wr && w_unmapped, self._r4v && r_miss);
                self._wr_q = wr;
                self._r4v = self._r3v;
                self._r3v = self._r2v;
                self._r2v = self._r1v;
                self._r1v = self.rd_en.val();
            }
            self._wdec = val32(self.wr_addr.val());
        }
        self.wr_err.next = w_err;
        // The doorbell pulse (registered in `update`), with the flip-flop
        // writes: one edge after `wr_en`.
        self.mr_go.next = self._mr_go;
        self.mr_bad.next = self._mr_bad;
        self.mr_op.next = self.flop_output("mr_op");
        self.mr_key.next = self.flop_output("mr_key");
        self.mr_pd.next = self.flop_output("mr_pd");
        self.mr_access.next = self.flop_output("mr_access");
        self.mr_va.next = self.flop_output("mr_va");
        self.mr_len.next = self.flop_output("mr_len");
        self.mr_shift.next = self.flop_output("mr_shift");
        self.mr_index.next = self.flop_output("mr_index");
        self.mr_pa.next = self.flop_output("mr_pa");
        self.cfg_mac.next = self.flop_output("cfg_mac");
        self.cfg_udp_sport.next = self.flop_output("cfg_udp_sport");
        self.cfg_gid.next = self.flop_output("cfg_gid");
        self.cfg_pkey.next = self.flop_output("cfg_pkey");
        let (q, off, word) = self._ctx_wr.unwrap_or_default();
        self.ctx_wr_valid.next = self._ctx_wr.is_some();
        self.ctx_wr_qpn.next = (q as u64).into();
        self.ctx_wr_offset.next = (off as u64).into();
        self.ctx_wr_data.next = (word as u64).into();
        self.rd_err.next = self._out3.1;
        self.rd_data.next = (self._out3.0 as u64).into();
        let mut packed = [Bits::<QP_CTX_BITS>::default(); QP_READ_PORTS];
        for (p, qd) in self._qd.iter().enumerate() {
            for (c, q) in self._plan.ctx.iter().zip(qd.last().unwrap()) {
                for b in 0..c.bits {
                    packed[p] = packed[p].replace_bit(c.at + b, q >> b & 1 == 1);
                }
            }
        }
        self.qp_rd_data.next = packed[0];
        self.qp_rd_data_1.next = packed[1];
        self.qp_rd_data_2.next = packed[2];
    }

    fn connect(&mut self) {
        self.wr_err.connect();
        self.rd_data.connect();
        self.rd_err.connect();
        self.qp_rd_data.connect();
        self.qp_rd_data_1.connect();
        self.qp_rd_data_2.connect();
        self.ctx_wr_valid.connect();
        self.ctx_wr_qpn.connect();
        self.ctx_wr_offset.connect();
        self.ctx_wr_data.connect();
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
        self.cfg_mac.connect();
        self.cfg_udp_sport.connect();
        self.cfg_gid.connect();
        self.cfg_pkey.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(self._plan.verilog(QA, self._store, self._ports))
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
                "qp_rd_addr_1".into(),
                "qp_rd_addr_2".into(),
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
                "qp_rd_data_1".into(),
                "qp_rd_data_2".into(),
                "ctx_wr_valid".into(),
                "ctx_wr_qpn".into(),
                "ctx_wr_offset".into(),
                "ctx_wr_data".into(),
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
                "cfg_mac".into(),
                "cfg_udp_sport".into(),
                "cfg_gid".into(),
                "cfg_pkey".into(),
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
    /// Datapath: that QP's packed context ([`ctx_layout`]),
    /// [`QpStore::latency`] cycles later.
    pub qp_rd_data: Signal<Out, Bits<QP_CTX_BITS>>,
    /// Datapath read ports 1 and 2, each the form of port 0 (one read per
    /// cycle, the same latency, its own copy of the store) in a build with
    /// 2 or 3 ports ([`Self::with_ports`]); without a copy they read 0.
    pub qp_rd_addr_1: Signal<In, Bits<QA>>,
    pub qp_rd_data_1: Signal<Out, Bits<QP_CTX_BITS>>,
    pub qp_rd_addr_2: Signal<In, Bits<QA>>,
    pub qp_rd_data_2: Signal<Out, Bits<QP_CTX_BITS>>,
    /// Context-write notification: one pulse per successful write of a
    /// context register (all four strobes, QPN below N; none for a
    /// partial write or any other register), in the first cycle in which a
    /// datapath read issued returns the new word: the cycle after `bvalid`
    /// rises for that write ([`Self::CTX_WR_LATENCY`] cycles after an
    /// AW+W handshake in one cycle); a read issued the cycle before
    /// returns the old word.
    pub m_ctx_wr_valid: Signal<Out, Bit>,
    pub m_ctx_wr_qpn: Signal<Out, Bits<QA>>,
    /// The register's byte offset within the context (its window offset
    /// minus context 0's, as `roce_regs::qp` places it; `qp.state` is 0).
    pub m_ctx_wr_offset: Signal<Out, Bits<CTX_OFFSET_BITS>>,
    /// The word as stored: what a CSR read of it returns (field bits).
    pub m_ctx_wr_data: Signal<Out, Bits<32>>,
    /// `cfg` registers for `tx_arb` (straight from their flip-flops; they
    /// change one edge after a write's B response is first offered, with
    /// the notification above): the station MAC (`mac_hi.MAC` in bits
    /// 47:32, byte 0 in 47:40, then `mac_lo.MAC`), `udp_sport.BASE`, the
    /// GID table as `tx_arb`'s `gid` (entry e at `[128e +: 128]`,
    /// `gid_w0[e]` in its top word, `gid_w3[e]` in its bottom one) and the
    /// P_Key table as its `pkey_tab` (entry e at `[16e +: 16]`).
    pub cfg_mac: Signal<Out, Bits<48>>,
    pub cfg_udp_sport: Signal<Out, Bits<16>>,
    pub cfg_gid: Signal<Out, Bits<GID_TABLE_BITS>>,
    pub cfg_pkey: Signal<Out, Bits<PKEY_TABLE_BITS>>,
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
    aw_dec: DFF<Bit>,
    aw_dec2: DFF<Bit>,
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
    r_pend3: DFF<Bit>,
    r_pend4: DFF<Bit>,
    r_pend5: DFF<Bit>,
    r_valid: DFF<Bit>,
    r_data: DFF<Bits<32>>,
    r_resp: DFF<Bits<2>>,
    okay: Constant<Bits<2>>,
    slverr: Constant<Bits<2>>,
}

/// The default build: `QP_COUNT` contexts.
pub type CsrDefault = Csr<8>;
/// A small build for simulation (the catalogue's `csr_bram` and
/// `csr_lutram`): up to 64 contexts.
pub type CsrSmall = Csr<6>;
const _: () = assert!(roce_regs::QP_COUNT == 1 << 8);

impl<const QA: usize> Csr<QA> {
    /// Cycles from the AR handshake to `rvalid`.
    pub const READ_LATENCY: usize = 7;
    /// Cycles from an AW+W handshake in one cycle to `bvalid` (AW held,
    /// its decode registered in two stages, the write).
    pub const WRITE_LATENCY: usize = 4;
    /// Cycles from an AW+W handshake in one cycle to the write's
    /// `m_ctx_wr_valid` pulse: one after `bvalid`.
    pub const CTX_WR_LATENCY: usize = Self::WRITE_LATENCY + 1;
    /// The datapath copy of the context table in the default build.
    pub const DEFAULT_STORE: QpStore = QpStore::BramOutReg;

    /// N contexts, the datapath copy in [`Self::DEFAULT_STORE`], one read
    /// port.
    pub fn new(n: u32) -> Self {
        Self::with_store(n, Self::DEFAULT_STORE)
    }

    /// Cycles from `qp_rd_addr` to `qp_rd_data` (every port).
    pub fn qp_read_latency(&self) -> usize {
        self.core._store.latency()
    }

    /// Datapath read ports served (copies of the store).
    pub fn qp_read_ports(&self) -> usize {
        self.core._ports
    }

    /// N contexts, the datapath copy in `store`, one read port.
    pub fn with_store(n: u32, store: QpStore) -> Self {
        Self::with_ports(n, store, 1)
    }

    /// N contexts, `ports` (1..=[`QP_READ_PORTS`]) copies of the datapath
    /// store in `store`, one per read port.
    pub fn with_ports(n: u32, store: QpStore, ports: usize) -> Self {
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
            qp_rd_addr_1: Default::default(),
            qp_rd_data_1: Default::default(),
            qp_rd_addr_2: Default::default(),
            qp_rd_data_2: Default::default(),
            m_ctx_wr_valid: Default::default(),
            m_ctx_wr_qpn: Default::default(),
            m_ctx_wr_offset: Default::default(),
            m_ctx_wr_data: Default::default(),
            cfg_mac: Default::default(),
            cfg_udp_sport: Default::default(),
            cfg_gid: Default::default(),
            cfg_pkey: Default::default(),
            core: CsrCore::new(n, store, ports),
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
            aw_dec: Default::default(),
            aw_dec2: Default::default(),
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
            r_pend3: Default::default(),
            r_pend4: Default::default(),
            r_pend5: Default::default(),
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
            self, clock, aw_full, aw_dec, aw_dec2, aw_addr, w_full, w_data, w_strb, b_valid,
            b_resp, r_busy, ar_addr, r_pend0, r_pend, r_pend2, r_pend3, r_pend4, r_pend5, r_valid,
            r_data, r_resp, mr_valid, mr_busy, mr_error, mr_dropped, mr_seq, c_op, c_key, c_pd,
            c_access, c_addr, c_len, c_shift, c_index
        );
        clock!(self, clock, core);
        self.core.reset.next = self.reset.val();
        self.core.counters.next = self.counters.val();
        self.core.qp_rd_addr.next = self.qp_rd_addr.val();
        self.qp_rd_data.next = self.core.qp_rd_data.val();
        self.core.qp_rd_addr_1.next = self.qp_rd_addr_1.val();
        self.qp_rd_data_1.next = self.core.qp_rd_data_1.val();
        self.core.qp_rd_addr_2.next = self.qp_rd_addr_2.val();
        self.qp_rd_data_2.next = self.core.qp_rd_data_2.val();
        self.m_ctx_wr_valid.next = self.core.ctx_wr_valid.val();
        self.m_ctx_wr_qpn.next = self.core.ctx_wr_qpn.val();
        self.m_ctx_wr_offset.next = self.core.ctx_wr_offset.val();
        self.m_ctx_wr_data.next = self.core.ctx_wr_data.val();
        self.cfg_mac.next = self.core.cfg_mac.val();
        self.cfg_udp_sport.next = self.core.cfg_udp_sport.val();
        self.cfg_gid.next = self.core.cfg_gid.val();
        self.cfg_pkey.next = self.core.cfg_pkey.val();
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
        // The address decode registers the held AW address twice: write
        // once it has been held for two cycles (`aw_dec2`).
        self.aw_dec.d.next = self.aw_full.q.val();
        self.aw_dec2.d.next = self.aw_dec.q.val();
        if self.aw_dec2.q.val() & self.w_full.q.val() & !self.b_valid.q.val() {
            self.core.wr_en.next = true;
            self.aw_full.d.next = false;
            self.aw_dec.d.next = false;
            self.aw_dec2.d.next = false;
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
        // Read: AR address registered (stage 0), page decode (stage 1),
        // index copies per page (stage 2), word within the half page and
        // RAM read (stage 3), word within the page and RAM output register
        // (stage 4), both registered again (stage 5), R after the last mux.
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
        self.r_pend3.d.next = self.r_pend2.q.val();
        self.r_pend4.d.next = self.r_pend3.q.val();
        self.r_pend5.d.next = self.r_pend4.q.val();
        if self.r_pend5.q.val() {
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
            self.aw_dec.d.next = false;
            self.aw_dec2.d.next = false;
            self.w_full.d.next = false;
            self.b_valid.d.next = false;
            self.r_busy.d.next = false;
            self.r_pend0.d.next = false;
            self.r_pend.d.next = false;
            self.r_pend2.d.next = false;
            self.r_pend3.d.next = false;
            self.r_pend4.d.next = false;
            self.r_pend5.d.next = false;
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
    fn csr_datapath_stores_synthesize() {
        for store in [QpStore::Bram, QpStore::Lutram] {
            let mut m = Csr::<4>::with_store(16, store);
            assert_eq!(m.qp_read_latency(), 1);
            m.connect_all();
            let v = generate_verilog(&m);
            assert_eq!(
                v.contains("ram_style = \"distributed\""),
                store == QpStore::Lutram
            );
            yosys_validate("csr_store", &v).unwrap();
        }
        assert_eq!(CsrDefault::new(256).qp_read_latency(), 2);
    }

    #[test]
    fn csr_read_ports_synthesize() {
        for store in [QpStore::BramOutReg, QpStore::Lutram] {
            let mut m = Csr::<4>::with_ports(16, store, 3);
            assert_eq!(m.qp_read_ports(), 3);
            m.connect_all();
            let v = generate_verilog(&m);
            assert!(v.contains("qp_rd_data_2 = {p2_qd"), "{store:?}");
            yosys_validate("csr_ports", &v).unwrap();
        }
        // One port: the others read 0.
        let v = generate_verilog(&{
            let mut m = Csr::<4>::new(16);
            m.connect_all();
            m
        });
        assert!(v.contains(&format!("qp_rd_data_1 = {QP_CTX_BITS}'d0;")));
    }

    #[test]
    fn csr_cfg_outputs_follow_tx_arb() {
        let p = Plan::new(16);
        let outs = p.flop_outputs();
        let gid = outs.iter().find(|o| o.port == "cfg_gid").unwrap();
        // Most significant first: entry GIDS-1's gid_w0 ... entry 0's gid_w3.
        assert_eq!(gid.parts.len(), 4 * GIDS);
        assert_eq!(
            gid.parts[0].0,
            roce_regs::cfg::gid_w0::addr(GIDS as u32 - 1)
        );
        assert_eq!(gid.parts.last().unwrap().0, roce_regs::cfg::gid_w3::addr(0));
        let pkey = outs.iter().find(|o| o.port == "cfg_pkey").unwrap();
        assert_eq!(pkey.parts.last().unwrap().0, roce_regs::cfg::pkey::addr(0));
        let mac = outs.iter().find(|o| o.port == "cfg_mac").unwrap();
        assert_eq!(mac.parts[0].0, roce_regs::cfg::mac_hi::ADDR);
    }

    #[test]
    #[should_panic(expected = "datapath read ports out of")]
    fn csr_rejects_four_ports() {
        Csr::<4>::with_ports(16, QpStore::BramOutReg, 4);
    }

    #[test]
    fn csr_pages_hold_every_word_once() {
        let p = Plan::new(roce_regs::QP_COUNT);
        let pages = p.pages();
        let mut n = 0;
        for (pg, ws) in &pages {
            assert!(ws.len() <= 1 << PAGE_BITS);
            for w in ws {
                assert_eq!((w.addr / 4) >> PAGE_BITS, *pg, "{}", w.name);
                n += 1;
            }
        }
        assert_eq!(n, p.words.len());
        // No page of words overlaps the context table.
        let lo = (p.ctx_base / 4) >> PAGE_BITS;
        let hi = ((p.ctx_base + p.n * QP_STRIDE) / 4) >> PAGE_BITS;
        assert!(pages.iter().all(|(pg, _)| *pg < lo || *pg >= hi));
    }

    #[test]
    #[should_panic(expected = "out of 1..=")]
    fn csr_rejects_too_many_qps() {
        Plan::new(QP_MAX + 1);
    }
}
