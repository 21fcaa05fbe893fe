//! Memory-region table and TLB: rkey/lkey, PD, access and bounds checks,
//! VA→PA translation across pages. The rules are `roce_wire::mr`'s; this
//! block computes them at one request per cycle.
//!
//! # Memories
//! - **MR table**: `2^MA` entries in two block RAMs, indexed by the key's
//!   index (`key >> 8`): the hot part ([`MrHot`]: tag, state, PD, access,
//!   epoch; 38 bits, 10 DP16KD at 4096 entries) that every request checks
//!   in S2, and the cold part ([`MrCold`]: base, limit, page shift,
//!   page-table base; 150 bits, 38 DP16KD) that only the engine uses. The
//!   cold part reads every cycle, free-running, addressed from S3's MR
//!   index (its output register holds the entry of the request S3 held two
//!   cycles before; the engine takes it in its second cycle), so no
//!   pipeline enable reaches its blocks, and its read address is that
//!   register alone (commands never read the cold part: only REGISTER
//!   writes it, all of it). The hit path gathers from the 10
//!   hot blocks and the TLB's, not from all 47 blocks of one 188-bit word.
//! - **Page table**: `2^PTA` page frame numbers (40 bits, `PA >> 12`) in
//!   block RAM.
//! - **TLB**: `2^TA` entries ([`TlbWord`]) in block RAM (on ECP5 five
//!   512 × 36 `PDPW16KD` at 256 entries: [`BramOutReg::new_wide`]), direct mapped,
//!   one entry per 4 KiB of VA. Set = low `TA` bits of `va >> 12`, XOR the
//!   low bits of the MR index (so equal addresses of different regions
//!   spread). Tag = MR index, the registration's epoch and `va >> 12`; the
//!   entry holds the physical frame of those 4 KiB (the region's page,
//!   4 KiB..2 MiB, plus the offset of the 4 KiB in it, combined when the
//!   walk fills the entry), so a hit's address is that frame and the low
//!   12 bits of the VA, with no page mask. The entry also caches what the
//!   hit's checks need of the cold part: the region's page shift (less 12)
//!   and its bounds relative to those 4 KiB (`P = vpn << 12`):
//!   `lo = max(base - P, 0)` (12 bits) and `hi = min(limit - P, 2^33 - 1)`
//!   (33 bits). A request in those 4 KiB is in bounds exactly when
//!   `va - P >= lo` and `va - P + len <= hi`, so every hit checks its
//!   bounds in S2 from the TLB word (12- and 33-bit compares instead of
//!   64- and 65-bit ones against the MR word). Because the set does not
//!   depend on the region's page size, the TLB is read in the same cycle
//!   as the MR table, straight from the request. Direct mapping gives the
//!   one-cycle hit with one RAM read and one compare; set-associative
//!   would need `k` compares and a way mux in the same cycle and a
//!   replacement policy, for fewer conflict misses that a NIC's mostly
//!   streaming accesses (consecutive pages land in consecutive sets) do
//!   not suffer. The price of 4 KiB tags: a large page takes one miss per
//!   4 KiB touched.
//!
//! # Coherence
//! The TLB caches translations, never permissions: every request reads its
//! MR entry's hot part, so deregistration and invalidation take effect at
//! once. Each MR entry carries an 8-bit epoch, incremented by every
//! REGISTER of its index and part of the TLB tag, so translations of an
//! earlier registration never hit. When an epoch wraps to 0 the whole TLB
//! is swept (`2^TA` cycles), so an (index, epoch) pair names one
//! registration among all live TLB entries. The cached shift and bounds
//! are therefore exact: only REGISTER writes base, limit and shift, and it
//! always bumps the epoch (DEREGISTER and INVALIDATE change the state
//! only, which the hit checks in the hot part). The bounds encoding is
//! exact because the walk fills only 4 KiB that hold a byte of an
//! in-bounds request (the engine checks a miss's bounds before it walks),
//! so `base - P < 4096` and `limit > P`; and `va - P + len < 2^33`.
//! Contract for the control plane: page-table entries a registered region
//! uses are not rewritten while it is registered (re-register after
//! changing them), as with any NIC's MTT.
//!
//! # Pipeline (requests)
//! | cycle | work |
//! |---|---|
//! | accept | request registered into S1 (with the low 32 bits of its last byte `va + len - 1` and their carry, and its end within its 4 KiB `va[11:0] + len`); the hot MR part and the TLB read into the RAM latches ([`BramOutReg`]), addressed straight from `s_req_key` / `s_req_va` |
//! | S1 | the words move to the RAMs' output registers as the request enters S2 (DP16KD `OUTREG` on ECP5); first XOR last byte, smeared towards bit 0, and the end `va + len` into S2 |
//! | S2 | on the RAMs' output registers, each check's failure into its own S3 register: bad key (range, state, tag), invalidated, PD (below, above), access; TLB tag (valid and index, `vpn` above the set bits in two parts) and TLB epoch = MR epoch; the bounds from the TLB word (`va[11:0] < lo`, the end above `hi` in 17 + 16 bits); one page (the smear's bit at the TLB's page shift, a 16-way select) |
//! | S3 | the reason by the rules' priority (bounds only on a TLB hit) and the hit from those flags; decision: rejects (counted per reason), zero-length grants and hits within one page go out; otherwise handed to the engine |
//! | out | S3's beat is on `m_grant_*` in the S3 cycle when the output register is empty (from S3's registers; the decision drives only its valid and reason, not its address and length); if not taken, or if an older beat waits, it goes to the output register or the skid register behind it |
//!
//! Hit latency 2 cycles (from the accepting edge to `m_grant_valid`, the
//! issue's goal) for every hit, wherever it lies in its region (a partly
//! covered 4 KiB at either end, across 4 KiB inside a larger page); a hit
//! that reaches outside the region is refused as fast. One request per
//! cycle while requests hit and fit one page. A request that misses, or
//! spans pages, goes to the *engine*, which stalls the pipeline: on a
//! miss the cold part (two cycles), the bounds (compare, decide: an
//! out-of-bounds request is rejected there), a walk (shift, page-table
//! index, page-table read in two cycles, register, TLB fill, emit: 14
//! cycles from accept to the first chunk); on a hit spanning pages the
//! first page at once (page room, fits, emit: 6 cycles); then 6 cycles per
//! further page on hits (advance, TLB read, output register, capture,
//! compare, emit), walking on a miss. The engine's beats go through the
//! output register. If the engine reads the TLB while a request waits in
//! S1 or S2, that request's word is lost and it walks (same outcome, more
//! cycles).
//!
//! Flow control (S3 may go, S1 → S2 load, accept) is three registers
//! computed a cycle ahead from the next-state values (for both outcomes of
//! S3's decision, which selects last), so the RAMs' clock and output
//! enables come from flip-flops through at most one gate; the engine's
//! RAM enables, the TLB read-address select and write port are registers
//! too.
//!
//! # Programming
//! `s_cmd_*` is a valid/ready command port (the CSR block drives it in
//! `mr_ctrl`, from the `roce_regs::mr` registers).
//! A command waits for the request pipeline to drain (new requests are
//! held off while `s_cmd_valid` is high), is registered as the control
//! leaves Idle (the RAM write ports are driven from registers only) and
//! completes with a one-cycle
//! `m_cmd_done` pulse, `m_cmd_error` telling whether it was refused (the
//! tables are then unchanged). Ops ([`op`]): WRITE_PT, REGISTER,
//! DEREGISTER, INVALIDATE; see the field table in docs/ARCHITECTURE.md.
//! After reset the block clears the MR table and the TLB (`busy` high for
//! `2^max(MA, TA)` cycles) before it takes requests or commands.

use crate::bram::BramOutReg;
use crate::prim::StateReg;
use roce_wire::mr::{MrState, Reject, EPOCH_BITS, PAGE_SHIFT_MAX, PAGE_SHIFT_MIN, PA_BITS};
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

/// Command opcodes on `s_cmd_op`: `roce_regs::MrOp`, the codes the CSR
/// block's `mr.op` register and the firmware use.
pub mod op {
    use roce_regs::MrOp;
    /// Page-table entry `s_cmd_index` := `s_cmd_addr` (a physical address).
    pub const WRITE_PT: u64 = MrOp::WritePt as u64;
    /// MR entry of `s_cmd_key` := the region (`s_cmd_pd`, `s_cmd_access`,
    /// base `s_cmd_addr`, length `s_cmd_len`, page shift `s_cmd_shift`,
    /// page-table base `s_cmd_index`), valid.
    pub const REGISTER: u64 = MrOp::Register as u64;
    /// MR entry of `s_cmd_key`'s index := free.
    pub const DEREGISTER: u64 = MrOp::Deregister as u64;
    /// MR entry of `s_cmd_key` := invalidated, if valid with the key's tag.
    pub const INVALIDATE: u64 = MrOp::Invalidate as u64;
    /// Width of `s_cmd_op`.
    pub const BITS: usize = roce_regs::MR_OP_BITS as usize;
}
// The command port's widths are the register map's.
const _: () = assert!(op::BITS == 2);
const _: () = assert!(roce_regs::MR_PD_BITS == 16 && roce_regs::MR_ACCESS_BITS == 4);
const _: () = assert!(roce_regs::MR_SHIFT_BITS == 5);

/// Width of a page frame number in a page-table or TLB entry.
pub const PFN_BITS: usize = PA_BITS as usize - 12;
const _: () = assert!(EPOCH_BITS == 8 && PFN_BITS == 40);
// The walk shifts `va >> 12` by the page shift less 12 (`e_pidx`, 4 bits)
// and keeps the low `PTA` (at most 16) bits: 32 bits of it suffice.
const _: () =
    assert!(PAGE_SHIFT_MAX - PAGE_SHIFT_MIN < 16 && 16 + PAGE_SHIFT_MAX - PAGE_SHIFT_MIN <= 32);

/// One MR table entry, the part every request checks in S2 (its own
/// block RAM, 38 bits: 10 DP16KD at 4096 entries, so the checks gather
/// from few blocks).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct MrHot {
    pub tag: Bits<8>,
    /// [`MrState`] code.
    pub state: Bits<2>,
    pub pd: Bits<16>,
    pub access: Bits<4>,
    pub epoch: Bits<8>,
}

/// One MR table entry, the part only the engine uses (a miss's bounds,
/// walks): read free-running from S3's MR index, taken by the engine in
/// its second cycle.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct MrCold {
    pub base: Bits<64>,
    /// `base + length`, exact (up to 2^64).
    pub limit: Bits<65>,
    pub shift: Bits<5>,
    pub pt_base: Bits<16>,
}

/// One TLB entry.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct TlbWord {
    pub valid: Bit,
    pub index: Bits<16>,
    pub epoch: Bits<8>,
    /// `va >> 12`.
    pub vpn: Bits<52>,
    /// The frame (`PA >> 12`) of those 4 KiB, within the region's page.
    pub pfn: Bits<40>,
    /// The region's page shift, less 12 (`0..=9`: the one-page test is
    /// a 16-way select).
    pub pidx: Bits<4>,
    /// The region's bounds relative to those 4 KiB (`P = vpn << 12`):
    /// the lowest offset in them inside the region, `max(base - P, 0)`,
    /// and `min(limit - P, 2^33 - 1)`. A request in them is in bounds when
    /// `va - P >= lo` and `va - P + len <= hi` (exact: the walk fills only
    /// 4 KiB holding a byte of an in-bounds request, so `base - P < 4096`
    /// and `limit > P`; `va - P + len < 2^33`).
    pub lo: Bits<12>,
    pub hi: Bits<33>,
}

/// One output beat: a chunk, a zero-length grant, or a reject.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct GrantWord {
    pub pa: Bits<64>,
    pub len: Bits<32>,
    pub last: Bit,
    pub reason: Bits<3>,
}

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum Engine {
    Idle,
    Cold,
    Take,
    Bounds,
    Check,
    Room,
    Fits,
    Look,
    Wait,
    Capture,
    Compare,
    Shift,
    Index,
    Read,
    Hold,
    Load,
    Fill,
    Emit,
    Advance,
}

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum Control {
    Sweep,
    /// The last sweep write (from the write-port registers) lands.
    Flush,
    Idle,
    Decode,
    Wait,
    Capture,
    Modify,
    Write,
}

/// The block: `2^MA` memory regions, `2^TA` TLB entries, `2^PTA`
/// page-table entries.
#[derive(LogicBlock)]
pub struct MrTlb<const MA: usize, const TA: usize, const PTA: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// High while the tables are being cleared (after reset, or the TLB
    /// after an epoch wrap).
    pub busy: Signal<Out, Bit>,
    // Requests.
    pub s_req_valid: Signal<In, Bit>,
    pub s_req_ready: Signal<Out, Bit>,
    pub s_req_key: Signal<In, Bits<32>>,
    pub s_req_pd: Signal<In, Bits<16>>,
    pub s_req_access: Signal<In, Bits<4>>,
    pub s_req_va: Signal<In, Bits<64>>,
    pub s_req_len: Signal<In, Bits<32>>,
    // Grants: one beat per chunk (`last` on the final one), or one beat
    // with `reason != 0`, or one zero-length beat.
    pub m_grant_valid: Signal<Out, Bit>,
    pub m_grant_ready: Signal<In, Bit>,
    pub m_grant_pa: Signal<Out, Bits<64>>,
    pub m_grant_len: Signal<Out, Bits<32>>,
    pub m_grant_last: Signal<Out, Bit>,
    pub m_grant_reason: Signal<Out, Bits<3>>,
    // Programming.
    pub s_cmd_valid: Signal<In, Bit>,
    pub s_cmd_ready: Signal<Out, Bit>,
    pub s_cmd_op: Signal<In, Bits<{ op::BITS }>>,
    pub s_cmd_key: Signal<In, Bits<32>>,
    pub s_cmd_pd: Signal<In, Bits<16>>,
    pub s_cmd_access: Signal<In, Bits<4>>,
    pub s_cmd_addr: Signal<In, Bits<64>>,
    pub s_cmd_len: Signal<In, Bits<64>>,
    pub s_cmd_shift: Signal<In, Bits<5>>,
    pub s_cmd_index: Signal<In, Bits<32>>,
    pub m_cmd_done: Signal<Out, Bit>,
    pub m_cmd_error: Signal<Out, Bit>,
    /// One-cycle pulse per page-table walk (a TLB miss).
    pub tlb_miss: Signal<Out, Bit>,
    // Counters (DESIGN §3: every drop counted), cleared by reset, wrapping
    // at 2^32: rejects per reason, and page-table walks.
    pub cnt_bad_key: Signal<Out, Bits<32>>,
    pub cnt_invalidated_key: Signal<Out, Bits<32>>,
    pub cnt_pd_mismatch: Signal<Out, Bits<32>>,
    pub cnt_access_denied: Signal<Out, Bits<32>>,
    pub cnt_out_of_bounds: Signal<Out, Bits<32>>,
    pub cnt_tlb_miss: Signal<Out, Bits<32>>,

    mr: BramOutReg<MrHot, MA>,
    mr_cold: BramOutReg<MrCold, MA>,
    pt: BramOutReg<Bits<40>, PTA>,
    tlb: BramOutReg<TlbWord, TA>,

    // Constants.
    // The bits at or above a table's size, or the PA's width: a value is
    // out of range when it has any of them, one OR of a few LUTs (Yosys
    // maps `x >= 2^k` as a carry chain the width of `x`).
    mr_over: Constant<Bits<32>>,
    pt_over: Constant<Bits<32>>,
    pa_over: Constant<Bits<64>>,
    one32: Constant<Bits<32>>,
    low12: Constant<Bits<64>>,
    low32: Constant<Bits<64>>,
    sat33: Constant<Bits<33>>,
    ones_hi12: Constant<Bits<64>>,
    shift_min: Constant<Bits<5>>,
    shift_max: Constant<Bits<5>>,
    st_free: Constant<Bits<2>>,
    st_valid: Constant<Bits<2>>,
    st_invalid: Constant<Bits<2>>,
    r_bad_key: Constant<Bits<3>>,
    r_invalidated: Constant<Bits<3>>,
    r_pd: Constant<Bits<3>>,
    r_access: Constant<Bits<3>>,
    r_bounds: Constant<Bits<3>>,
    op_write_pt: Constant<Bits<{ op::BITS }>>,
    op_register: Constant<Bits<{ op::BITS }>>,
    op_deregister: Constant<Bits<{ op::BITS }>>,
    sweep_last: Constant<Bits<16>>,
    /// The bits of a 30-bit `vpn` part above the TLB set's `TA`.
    vpn_above_set: Constant<Bits<30>>,

    // Flow.
    ld1: Signal<Local, Bit>,
    ld2: Signal<Local, Bit>,
    ld3: Signal<Local, Bit>,
    s3_fire: Signal<Local, Bit>,
    /// The engine reads the TLB this cycle (`Look`): the TLB read-address
    /// mux selected by a flip-flop.
    e_look: DFF<Bit>,
    /// The engine is in a state that writes beats (`Emit`, `Check`; S3
    /// writes none then): the beat mux selected by a flip-flop.
    e_out: DFF<Bit>,
    /// The engine's bounds compares combined (`Check`).
    e_oob: Signal<Local, Bit>,
    /// The page table's read and output enables (`Read`, `Hold`).
    pt_ce: DFF<Bit>,
    pt_oce: DFF<Bit>,
    /// The TLB write port's registers (fill or sweep).
    tw_we: DFF<Bit>,
    tw_addr: DFF<Bits<TA>>,
    tw_data: DFF<TlbWord>,
    // The flow-control decisions, each a register computed a cycle ahead
    // from the next-state values (the RAM clock enables come from flip-flops
    // through at most one gate).
    /// S3 may go this cycle: engine idle and the skid register free.
    can_go: DFF<Bit>,
    /// S2 can take S1's request this cycle (S2 empty, or S3 moving on or
    /// empty): S1 moves to S2 when it holds one (`ld2`, the RAMs' output
    /// enables, one gate from flip-flops). Not from S1's next state, so
    /// the port's valid does not reach it.
    ld2_r: DFF<Bit>,
    /// A request may be accepted this cycle (unless `s_cmd_valid`).
    room: DFF<Bit>,
    /// S3 hands its request to the engine: it fires, not zero-length, and
    /// not a hit within one page. The engine starts on it (`Room` on a
    /// hit, `Cold` on a miss) and the flow control takes the engine as
    /// busy, with S3's reject checks left out: a rejected request, whose
    /// beat S3 writes, leaves the engine from `Room` or `Cold` a cycle
    /// later (`e_rej`, `e_done`). One bubble after such a reject beat,
    /// and S3's check flags reach neither `room` nor the engine's state.
    e_sel: Signal<Local, Bit>,
    /// S3's request of last cycle was rejected (registered every cycle).
    e_rej: DFF<Bit>,
    /// The flow control's next values for each outcome of S3's decision.
    fc_free: Signal<Local, Bit>,
    fc_skid_s: Signal<Local, Bit>,
    fc_skid_e: Signal<Local, Bit>,
    fc_go_s: Signal<Local, Bit>,
    fc_go_e: Signal<Local, Bit>,
    fc_ld2_s: Signal<Local, Bit>,
    fc_ld2_e: Signal<Local, Bit>,
    fc_room: Signal<Local, Bit>,
    /// The engine finishes a request (or leaves a rejected one).
    e_done: Signal<Local, Bit>,

    // S1: request whose MR entry and TLB set are being read.
    v1: DFF<Bit>,
    t1_ok: DFF<Bit>,
    key1: DFF<Bits<32>>,
    inrange1: DFF<Bit>,
    pd1: DFF<Bits<16>>,
    access1: DFF<Bits<4>>,
    va1: DFF<Bits<64>>,
    len1: DFF<Bits<32>>,
    /// The last byte's low 32 bits, `va[31:0] + len - 1` (for a nonzero
    /// length), with the carry out at bit 32: `len < 2^32`, so above bit
    /// 31 the first and last byte differ exactly when it carries.
    last1: DFF<Bits<33>>,
    /// The end relative to the request's 4 KiB: `va[11:0] + len`.
    oend1: DFF<Bits<33>>,
    zero1: DFF<Bit>,

    // S2: the request; its MR entry and TLB word are the RAMs' output
    // registers (loaded as the request enters S2).
    v2: DFF<Bit>,
    tok2: DFF<Bit>,
    key2: DFF<Bits<32>>,
    inrange2: DFF<Bit>,
    pd2: DFF<Bits<16>>,
    access2: DFF<Bits<4>>,
    va2: DFF<Bits<64>>,
    len2: DFF<Bits<32>>,
    end2: DFF<Bits<65>>,
    oend2: DFF<Bits<33>>,
    /// Bit `s` set when the request's first and last byte differ at bit
    /// `12 + s` or above (they are in different pages of `2^(12 + s)`
    /// bytes).
    above2: DFF<Bits<16>>,
    zero2: DFF<Bit>,
    /// First and last byte XORed, and that smeared towards bit 0.
    span1: Signal<Local, Bits<64>>,
    smear_a: Signal<Local, Bits<64>>,
    smear_b: Signal<Local, Bits<64>>,
    smear_c: Signal<Local, Bits<64>>,

    // S3: the checks' results, registered; the decision.
    v3: DFF<Bit>,
    // Each check's failure, registered; the priority is S3's (`why3`).
    bad_key3: DFF<Bit>,
    invalidated3: DFF<Bit>,
    /// PD below the request's, above it.
    pd_ne3: DFF<Bit>,
    pd_ne_hi3: DFF<Bit>,
    denied3: DFF<Bit>,
    /// The bounds from the TLB entry (meaningful on a hit): `va` below
    /// the region, its end beyond it.
    lo_bad3: DFF<Bit>,
    hi_bad3: DFF<Bit>,
    /// `hi_bad3` is the end above `hi` on the high 17 bits; this, equal
    /// there; and above on the low 16 bits.
    hi_eq3: DFF<Bit>,
    hi_lo_bad3: DFF<Bit>,
    /// S3's reject reason, the bounds on a hit included (on a miss the
    /// engine checks them).
    why3: Signal<Local, Bits<3>>,
    /// TLB tag match, and TLB epoch = MR epoch: a hit when both hold.
    tag3: DFF<Bit>,
    /// The tag compare's `vpn` half (`tag3`: valid, MR index).
    tag3_v: DFF<Bit>,
    /// `tag3_v` is the low 30 bits of `vpn` above the set's `TA` (which the
    /// set and the MR index imply), this the high 22.
    tag3_w: DFF<Bit>,
    epoch_eq3: DFF<Bit>,
    hit3: Signal<Local, Bit>,
    /// First and last byte in one page of the region (the TLB entry's
    /// page shift: meaningful on a hit).
    single3: DFF<Bit>,
    /// The TLB entry's page shift less 12 (the engine's on a hit).
    pidx3: DFF<Bits<4>>,
    end3: DFF<Bits<65>>,
    zero3: DFF<Bit>,
    pa3: DFF<Bits<64>>,
    len3: DFF<Bits<32>>,
    va3: DFF<Bits<64>>,
    idx3: DFF<Bits<16>>,
    epoch3: DFF<Bits<8>>,
    pfn3: DFF<Bits<40>>,

    // Engine (misses and multi-page requests).
    e_state: StateReg<Engine>,
    e_va: DFF<Bits<64>>,
    e_rem: DFF<Bits<32>>,
    e_mask: DFF<Bits<64>>,
    /// The region's page shift less 12 (the mask's, the walk's shift
    /// amount and the TLB fill's `pidx`).
    e_pidx: DFF<Bits<4>>,
    e_base: DFF<Bits<64>>,
    e_end: DFF<Bits<65>>,
    e_limit: DFF<Bits<65>>,
    /// The bounds compares in halves (`va < base` on 32 + 32 bits,
    /// `end > limit` on 33 + 32), recomputed every cycle from the registers
    /// above (valid in `Check`), combined in `Check`.
    e_va_lt_hi: DFF<Bit>,
    e_va_eq_hi: DFF<Bit>,
    e_va_lt_lo: DFF<Bit>,
    e_end_gt_hi: DFF<Bit>,
    e_end_eq_hi: DFF<Bit>,
    e_end_gt_lo: DFF<Bit>,
    /// The TLB fill's bounds for `e_va`'s 4 KiB (`TlbWord::lo`, `hi`;
    /// `e_lp` = `limit - P`): recomputed every cycle from the registers
    /// (valid two cycles after `e_va` changes).
    e_lo: DFF<Bits<12>>,
    /// `base >> 12 == e_va >> 12`, in two 26-bit halves (for `e_lo`).
    e_beq_lo: DFF<Bit>,
    e_beq_hi: DFF<Bit>,
    e_lp: DFF<Bits<65>>,
    e_hi: DFF<Bits<33>>,
    e_ptb: DFF<Bits<16>>,
    e_idx: DFF<Bits<16>>,
    e_epoch: DFF<Bits<8>>,
    e_pfn: DFF<Bits<40>>,
    /// The page table's output register, copied every cycle (no enable,
    /// no mux: placed anywhere between the page-table blocks and its
    /// users); valid in `Fill`, which loads it into `e_pfn`.
    e_ptw: DFF<Bits<40>>,
    /// The page numbers of `e_va` and of the base, their low `PTA` bits
    /// (all the page-table index needs).
    e_vs: DFF<Bits<PTA>>,
    e_bs: DFF<Bits<PTA>>,
    e_pta: DFF<Bits<PTA>>,
    e_chunk: DFF<Bits<32>>,
    /// Bytes from `e_va` to the end of its page, and whether `e_rem` fits
    /// in them: recomputed every cycle from the registers above (valid two
    /// cycles after `e_va` / `e_rem` change).
    e_room: DFF<Bits<32>>,
    e_fits: DFF<Bit>,
    /// The engine's TLB compare (`Compare`), registered; `Emit` emits on
    /// it or walks. Set by the hand-over on an S3 hit and by `Fill`.
    e_hit: DFF<Bit>,
    /// The TLB word the engine read (`Capture`), compared in `Compare`.
    e_tw: DFF<TlbWord>,
    /// The compare's `vpn` part in two halves, low and high 26 bits
    /// (`e_hit` holds valid, index and epoch).
    e_hit_v: DFF<Bit>,
    e_hit_w: DFF<Bit>,
    e_tidx: Signal<Local, Bits<TA>>,
    e_vpn: Signal<Local, Bits<52>>,

    // Output register and the skid register behind it.
    q_write: Signal<Local, Bit>,
    q_data: Signal<Local, GrantWord>,
    /// S3's beat and the engine's; only S3's is offered on the port in the
    /// cycle it is written (the engine's go through the output register).
    s3_write: Signal<Local, Bit>,
    s3_data: Signal<Local, GrantWord>,
    e_write: Signal<Local, Bit>,
    e_data: Signal<Local, GrantWord>,
    q_pop: Signal<Local, Bit>,
    /// The output register is empty and the consumer takes a beat now:
    /// S3's beat of this cycle, if any, goes straight out and is not
    /// stored.
    q_pass: Signal<Local, Bit>,
    /// The output register (the beat on `m_grant_*` when valid, `q_v`).
    /// Its valid in two parts, so S3's checks reach only a data input: a
    /// beat moved from the skid register or written by the engine sets
    /// `q_valid`; a beat of S3's that did not go straight out sets `q_t`
    /// (S3 fired, whatever it decided) and `q_tw` takes S3's write flag
    /// (`w3`) with it.
    q_valid: DFF<Bit>,
    q_t: DFF<Bit>,
    q_tw: DFF<Bit>,
    q_v: Signal<Local, Bit>,
    /// S3 writes a beat if it fires: zero length, a reject, or a hit
    /// inside one page (else it hands over to the engine).
    w3: Signal<Local, Bit>,
    q_out: DFF<GrantWord>,
    /// The skid register behind it: a beat written while the output
    /// register holds one that is not taken. Full = no beat may be
    /// written next cycle (S3 and the engine wait).
    q_skid_valid: DFF<Bit>,
    q_skid: DFF<GrantWord>,

    // Counters.
    n_bad_key: DFF<Bits<32>>,
    n_invalidated: DFF<Bits<32>>,
    n_pd: DFF<Bits<32>>,
    n_access: DFF<Bits<32>>,
    n_bounds: DFF<Bits<32>>,
    n_miss: DFF<Bits<32>>,
    /// A reject of each reason decided last cycle, not yet in its counter
    /// (the `cnt_*` outputs add them in). Not from S3's decision: from
    /// `rej4` and S3's check flags, registered every cycle, by the rules'
    /// priority again; the engine's bounds rejects from `p_e_bounds`.
    p_bad_key: Signal<Local, Bit>,
    p_invalidated: Signal<Local, Bit>,
    p_pd: Signal<Local, Bit>,
    p_access: Signal<Local, Bit>,
    p_bounds: Signal<Local, Bit>,
    /// S3 fired last cycle on a request of nonzero length (a reject if any
    /// flag below is set).
    rej4: DFF<Bit>,
    bad_key4: DFF<Bit>,
    invalidated4: DFF<Bit>,
    pd4: DFF<Bit>,
    denied4: DFF<Bit>,
    /// Out of bounds on a TLB hit (S3's bounds reject).
    bounds4: DFF<Bit>,
    /// The engine rejected a request as out of bounds last cycle.
    p_e_bounds: DFF<Bit>,

    // Control plane.
    c_state: DFF<Control>,
    c_sweep_mr: DFF<Bit>,
    c_count: DFF<Bits<16>>,
    c_done: DFF<Bit>,
    c_error: DFF<Bit>,
    /// The hot part of the entry read by a command, then the word to
    /// write (the hot part's write data comes from this register). The
    /// cold part is never read by a command: only REGISTER writes it, all
    /// of it, from the command's registers (`c_we_cold`).
    c_hot: DFF<MrHot>,
    c_we_cold: DFF<Bit>,
    /// REGISTER's refusal (page shift, index or limit out of range),
    /// formed from the command's registers in two free-running steps:
    /// the three checks registered in Decode, their OR in Wait, so it is
    /// ready in Modify with no more than an OR per step.
    c_refuse: DFF<Bit>,
    c_shift_bad: DFF<Bit>,
    c_over: DFF<Bit>,
    c_index_bad: DFF<Bit>,
    /// The entry read for an invalidate is valid under the command's tag
    /// (compared in Capture, used in Modify).
    c_match: DFF<Bit>,
    // The command, registered as the control leaves Idle: the RAM write
    // ports are driven from flip-flops only.
    c_op: DFF<Bits<{ op::BITS }>>,
    c_key: DFF<Bits<32>>,
    c_pd: DFF<Bits<16>>,
    c_access: DFF<Bits<4>>,
    c_addr: DFF<Bits<64>>,
    c_limit: DFF<Bits<65>>,
    c_shift: DFF<Bits<5>>,
    c_index: DFF<Bits<32>>,
    c_bad: DFF<Bit>,
    c_pt_bad: DFF<Bit>,
    c_err: DFF<Bit>,
    c_wrap: DFF<Bit>,
    c_we: DFF<Bit>,
    c_waddr: DFF<Bits<MA>>,
    c_pt_we: DFF<Bit>,
    /// The command reads its MR entry this cycle (Decode): the MR read
    /// address mux selected by a flip-flop.
    c_rd: DFF<Bit>,
    drained: Signal<Local, Bit>,
}

fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.into())
}

impl<const MA: usize, const TA: usize, const PTA: usize> MrTlb<MA, TA, PTA> {
    pub fn new() -> Self {
        assert!(
            (1..=16).contains(&MA),
            "MrTlb: MR index bits {MA} out of 1..=16"
        );
        assert!(
            (1..=12).contains(&TA),
            "MrTlb: TLB index bits {TA} out of 1..=12"
        );
        assert!(
            (1..=16).contains(&PTA),
            "MrTlb: page-table index bits {PTA} out of 1..=16"
        );
        Self {
            clock: Default::default(),
            reset: Default::default(),
            busy: Default::default(),
            s_req_valid: Default::default(),
            s_req_ready: Default::default(),
            s_req_key: Default::default(),
            s_req_pd: Default::default(),
            s_req_access: Default::default(),
            s_req_va: Default::default(),
            s_req_len: Default::default(),
            m_grant_valid: Default::default(),
            m_grant_ready: Default::default(),
            m_grant_pa: Default::default(),
            m_grant_len: Default::default(),
            m_grant_last: Default::default(),
            m_grant_reason: Default::default(),
            s_cmd_valid: Default::default(),
            s_cmd_ready: Default::default(),
            s_cmd_op: Default::default(),
            s_cmd_key: Default::default(),
            s_cmd_pd: Default::default(),
            s_cmd_access: Default::default(),
            s_cmd_addr: Default::default(),
            s_cmd_len: Default::default(),
            s_cmd_shift: Default::default(),
            s_cmd_index: Default::default(),
            m_cmd_done: Default::default(),
            m_cmd_error: Default::default(),
            tlb_miss: Default::default(),
            cnt_bad_key: Default::default(),
            cnt_invalidated_key: Default::default(),
            cnt_pd_mismatch: Default::default(),
            cnt_access_denied: Default::default(),
            cnt_out_of_bounds: Default::default(),
            cnt_tlb_miss: Default::default(),
            mr: BramOutReg::new(),
            mr_cold: BramOutReg::new(),
            pt: BramOutReg::new(),
            tlb: BramOutReg::new_wide(),
            // The key's index is its bits from 8 up.
            mr_over: c(0xFFFF_FFFF & !((1u64 << (MA + 8)) - 1)),
            pt_over: c(0xFFFF_FFFF & !((1u64 << PTA) - 1)),
            pa_over: c(!((1u64 << PA_BITS) - 1)),
            one32: c(1),
            low12: c(0xFFF),
            low32: c(0xFFFF_FFFF),
            sat33: c((1 << 33) - 1),
            ones_hi12: c(!0xFFF),
            shift_min: c(PAGE_SHIFT_MIN as u64),
            shift_max: c(PAGE_SHIFT_MAX as u64),
            st_free: c(MrState::Free as u64),
            st_valid: c(MrState::Valid as u64),
            st_invalid: c(MrState::Invalid as u64),
            r_bad_key: c(Reject::BadKey.code() as u64),
            r_invalidated: c(Reject::InvalidatedKey.code() as u64),
            r_pd: c(Reject::PdMismatch.code() as u64),
            r_access: c(Reject::AccessDenied.code() as u64),
            r_bounds: c(Reject::OutOfBounds.code() as u64),
            op_write_pt: c(op::WRITE_PT),
            op_register: c(op::REGISTER),
            op_deregister: c(op::DEREGISTER),
            sweep_last: c((1u64 << MA.max(TA)) - 1),
            vpn_above_set: c(((1u64 << 30) - 1) & !((1u64 << TA) - 1)),
            ld1: Default::default(),
            ld2: Default::default(),
            ld3: Default::default(),
            s3_fire: Default::default(),
            e_look: Default::default(),
            e_out: Default::default(),
            e_oob: Default::default(),
            pt_ce: Default::default(),
            pt_oce: Default::default(),
            tw_we: Default::default(),
            tw_addr: Default::default(),
            tw_data: Default::default(),
            can_go: Default::default(),
            ld2_r: Default::default(),
            room: Default::default(),
            e_sel: Default::default(),
            fc_free: Default::default(),
            fc_skid_s: Default::default(),
            fc_skid_e: Default::default(),
            fc_go_s: Default::default(),
            fc_go_e: Default::default(),
            fc_ld2_s: Default::default(),
            fc_ld2_e: Default::default(),
            fc_room: Default::default(),
            e_done: Default::default(),
            v1: Default::default(),
            t1_ok: Default::default(),
            key1: Default::default(),
            inrange1: Default::default(),
            pd1: Default::default(),
            access1: Default::default(),
            va1: Default::default(),
            len1: Default::default(),
            last1: Default::default(),
            oend1: Default::default(),
            zero1: Default::default(),
            v2: Default::default(),
            tok2: Default::default(),
            key2: Default::default(),
            inrange2: Default::default(),
            pd2: Default::default(),
            access2: Default::default(),
            va2: Default::default(),
            len2: Default::default(),
            end2: Default::default(),
            oend2: Default::default(),
            above2: Default::default(),
            span1: Default::default(),
            smear_a: Default::default(),
            smear_b: Default::default(),
            smear_c: Default::default(),
            zero2: Default::default(),
            v3: Default::default(),
            bad_key3: Default::default(),
            invalidated3: Default::default(),
            pd_ne3: Default::default(),
            pd_ne_hi3: Default::default(),
            denied3: Default::default(),
            why3: Default::default(),
            tag3: Default::default(),
            tag3_v: Default::default(),
            tag3_w: Default::default(),
            epoch_eq3: Default::default(),
            hit3: Default::default(),
            single3: Default::default(),
            pidx3: Default::default(),
            lo_bad3: Default::default(),
            hi_bad3: Default::default(),
            hi_eq3: Default::default(),
            hi_lo_bad3: Default::default(),
            end3: Default::default(),
            zero3: Default::default(),
            pa3: Default::default(),
            len3: Default::default(),
            va3: Default::default(),
            idx3: Default::default(),
            epoch3: Default::default(),
            pfn3: Default::default(),
            e_state: Default::default(),
            e_va: Default::default(),
            e_rem: Default::default(),
            e_mask: Default::default(),
            e_pidx: Default::default(),
            e_base: Default::default(),
            e_end: Default::default(),
            e_limit: Default::default(),
            e_va_lt_hi: Default::default(),
            e_va_eq_hi: Default::default(),
            e_va_lt_lo: Default::default(),
            e_end_gt_hi: Default::default(),
            e_end_eq_hi: Default::default(),
            e_end_gt_lo: Default::default(),
            e_lo: Default::default(),
            e_beq_lo: Default::default(),
            e_beq_hi: Default::default(),
            e_lp: Default::default(),
            e_hi: Default::default(),
            e_ptb: Default::default(),
            e_idx: Default::default(),
            e_epoch: Default::default(),
            e_pfn: Default::default(),
            e_ptw: Default::default(),
            e_vs: Default::default(),
            e_bs: Default::default(),
            e_pta: Default::default(),
            e_chunk: Default::default(),
            e_tidx: Default::default(),
            e_vpn: Default::default(),
            e_room: Default::default(),
            e_fits: Default::default(),
            e_rej: Default::default(),
            e_hit: Default::default(),
            e_tw: Default::default(),
            e_hit_v: Default::default(),
            e_hit_w: Default::default(),
            q_write: Default::default(),
            q_data: Default::default(),
            s3_write: Default::default(),
            s3_data: Default::default(),
            e_write: Default::default(),
            e_data: Default::default(),
            q_pop: Default::default(),
            q_pass: Default::default(),
            q_valid: Default::default(),
            q_t: Default::default(),
            q_tw: Default::default(),
            q_v: Default::default(),
            w3: Default::default(),
            q_out: Default::default(),
            q_skid_valid: Default::default(),
            q_skid: Default::default(),
            n_bad_key: Default::default(),
            n_invalidated: Default::default(),
            n_pd: Default::default(),
            n_access: Default::default(),
            n_bounds: Default::default(),
            n_miss: Default::default(),
            p_bad_key: Default::default(),
            p_invalidated: Default::default(),
            p_pd: Default::default(),
            p_access: Default::default(),
            p_bounds: Default::default(),
            rej4: Default::default(),
            bad_key4: Default::default(),
            invalidated4: Default::default(),
            pd4: Default::default(),
            denied4: Default::default(),
            bounds4: Default::default(),
            p_e_bounds: Default::default(),
            c_state: Default::default(),
            c_sweep_mr: Default::default(),
            c_count: Default::default(),
            c_done: Default::default(),
            c_error: Default::default(),
            c_hot: Default::default(),
            c_we_cold: Default::default(),
            c_refuse: Default::default(),
            c_shift_bad: Default::default(),
            c_over: Default::default(),
            c_index_bad: Default::default(),
            c_match: Default::default(),
            c_op: Default::default(),
            c_key: Default::default(),
            c_pd: Default::default(),
            c_access: Default::default(),
            c_addr: Default::default(),
            c_limit: Default::default(),
            c_shift: Default::default(),
            c_index: Default::default(),
            c_bad: Default::default(),
            c_pt_bad: Default::default(),
            c_err: Default::default(),
            c_wrap: Default::default(),
            c_we: Default::default(),
            c_waddr: Default::default(),
            c_pt_we: Default::default(),
            c_rd: Default::default(),
            drained: Default::default(),
        }
    }

    /// Cycles from the edge that accepts a request to `m_grant_valid`, for
    /// any TLB hit inside one page with the output free.
    pub const HIT_LATENCY: usize = 2;
    /// MR table entries.
    pub const MRS: usize = 1 << MA;
    /// TLB entries.
    pub const TLB_ENTRIES: usize = 1 << TA;
    /// Page-table entries.
    pub const PT_ENTRIES: usize = 1 << PTA;
}

impl<const MA: usize, const TA: usize, const PTA: usize> Default for MrTlb<MA, TA, PTA> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const MA: usize, const TA: usize, const PTA: usize> Logic for MrTlb<MA, TA, PTA> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            can_go,
            e_look,
            e_out,
            pt_ce,
            pt_oce,
            tw_we,
            tw_addr,
            tw_data,
            ld2_r,
            room,
            v1,
            t1_ok,
            key1,
            inrange1,
            pd1,
            access1,
            va1,
            len1,
            last1,
            oend1,
            zero1,
            v2,
            tok2,
            key2,
            inrange2,
            pd2,
            access2,
            va2,
            len2,
            end2,
            oend2,
            above2,
            zero2,
            v3,
            bad_key3,
            invalidated3,
            pd_ne3,
            pd_ne_hi3,
            denied3,
            tag3,
            tag3_v,
            tag3_w,
            epoch_eq3,
            single3,
            pidx3,
            lo_bad3,
            hi_bad3,
            hi_eq3,
            hi_lo_bad3,
            end3,
            zero3,
            pa3,
            len3,
            va3,
            idx3,
            epoch3,
            pfn3,
            e_state,
            e_va,
            e_rem,
            e_mask,
            e_pidx,
            e_base,
            e_end,
            e_limit,
            e_va_lt_hi,
            e_va_eq_hi,
            e_va_lt_lo,
            e_end_gt_hi,
            e_end_eq_hi,
            e_end_gt_lo,
            e_lo,
            e_beq_lo,
            e_beq_hi,
            e_lp,
            e_hi,
            e_ptb,
            e_idx,
            e_epoch,
            e_pfn,
            e_ptw,
            e_vs,
            e_bs,
            e_pta,
            e_chunk,
            e_room,
            e_fits,
            e_rej,
            e_hit,
            e_tw,
            e_hit_v,
            e_hit_w,
            q_valid,
            q_t,
            q_tw,
            q_out,
            q_skid_valid,
            q_skid,
            n_bad_key,
            n_invalidated,
            n_pd,
            n_access,
            n_bounds,
            n_miss,
            rej4,
            bad_key4,
            invalidated4,
            pd4,
            denied4,
            bounds4,
            p_e_bounds,
            c_state,
            c_sweep_mr,
            c_count,
            c_done,
            c_error,
            c_hot,
            c_we_cold,
            c_refuse,
            c_shift_bad,
            c_over,
            c_index_bad,
            c_match,
            c_op,
            c_key,
            c_pd,
            c_access,
            c_addr,
            c_limit,
            c_shift,
            c_index,
            c_bad,
            c_pt_bad,
            c_err,
            c_wrap,
            c_we,
            c_waddr,
            c_pt_we,
            c_rd
        );
        clock!(self, clock, mr, mr_cold, pt, tlb);

        // ---- Engine-side values (from its registers).
        self.e_tidx.next =
            bit_cast::<TA, 64>(self.e_va.q.val() >> 12) ^ bit_cast::<TA, 16>(self.e_idx.q.val());
        self.e_vpn.next = bit_cast::<52, 64>(self.e_va.q.val() >> 12);
        // `2^s - (va & m)` with `m = 2^s - 1` is `(!va & m) + 1`: the mask
        // register and an increment, no decoder before a subtraction.
        self.e_room.d.next =
            bit_cast::<32, 64>(!self.e_va.q.val() & self.e_mask.q.val()) + self.one32.val();
        self.e_fits.d.next = self.e_rem.q.val() <= self.e_room.q.val();
        self.e_va_lt_hi.d.next = bit_cast::<32, 64>(self.e_va.q.val() >> 32)
            < bit_cast::<32, 64>(self.e_base.q.val() >> 32);
        self.e_va_eq_hi.d.next = bit_cast::<32, 64>(self.e_va.q.val() >> 32)
            == bit_cast::<32, 64>(self.e_base.q.val() >> 32);
        self.e_va_lt_lo.d.next =
            bit_cast::<32, 64>(self.e_va.q.val()) < bit_cast::<32, 64>(self.e_base.q.val());
        self.e_end_gt_hi.d.next = bit_cast::<33, 65>(self.e_end.q.val() >> 32)
            > bit_cast::<33, 65>(self.e_limit.q.val() >> 32);
        self.e_end_eq_hi.d.next = bit_cast::<33, 65>(self.e_end.q.val() >> 32)
            == bit_cast::<33, 65>(self.e_limit.q.val() >> 32);
        self.e_end_gt_lo.d.next =
            bit_cast::<32, 65>(self.e_end.q.val()) > bit_cast::<32, 65>(self.e_limit.q.val());
        // Valid the cycle after `e_pidx` loads (the engine's `Bounds`).
        self.e_mask.d.next = !(self.ones_hi12.val() << self.e_pidx.q.val());
        // `base` is below `e_va`'s 4 KiB or in it (the walk fills only
        // 4 KiB that hold an in-bounds byte): `base - P` is its offset
        // there, or 0.
        self.e_beq_lo.d.next = bit_cast::<26, 64>(self.e_base.q.val() >> 12)
            == bit_cast::<26, 64>(self.e_va.q.val() >> 12);
        self.e_beq_hi.d.next = bit_cast::<26, 64>(self.e_base.q.val() >> 38)
            == bit_cast::<26, 64>(self.e_va.q.val() >> 38);
        if self.e_beq_lo.q.val() & self.e_beq_hi.q.val() {
            self.e_lo.d.next = bit_cast::<12, 64>(self.e_base.q.val());
        } else {
            self.e_lo.d.next = 0.into();
        }
        self.e_lp.d.next =
            self.e_limit.q.val() - bit_cast::<65, 64>(self.e_va.q.val() & !self.low12.val());
        if (self.e_lp.q.val() >> 33).any() {
            self.e_hi.d.next = self.sat33.val();
        } else {
            self.e_hi.d.next = bit_cast::<33, 65>(self.e_lp.q.val());
        }

        // ---- S2: every check, on the RAMs' output registers.

        // Memory port defaults.
        self.mr.write_enable.next = self.c_we.q.val();
        self.mr.write_address.next = self.c_waddr.q.val();
        self.mr.write_data.next = self.c_hot.q.val();
        self.mr.read_enable.next = false;
        self.mr.output_enable.next = false;
        self.mr.read_address.next = bit_cast::<MA, 32>(self.s_req_key.val() >> 8);
        self.mr_cold.write_enable.next = self.c_we_cold.q.val();
        self.mr_cold.write_address.next = self.c_waddr.q.val();
        self.mr_cold.write_data.next.base = self.c_addr.q.val();
        self.mr_cold.write_data.next.limit = self.c_limit.q.val();
        self.mr_cold.write_data.next.shift = self.c_shift.q.val();
        self.mr_cold.write_data.next.pt_base = bit_cast::<16, 32>(self.c_index.q.val());
        self.pt.write_enable.next = self.c_pt_we.q.val();
        self.pt.write_address.next = bit_cast::<PTA, 32>(self.c_index.q.val());
        self.pt.write_data.next = bit_cast::<40, 64>(self.c_addr.q.val() >> 12);
        self.pt.read_address.next = self.e_pta.q.val();
        self.e_ptw.d.next = self.pt.read_data.val();
        // The TLB write port is driven from registers (`tw_*`: the write
        // lands the cycle after `Fill` or a sweep step).
        self.tlb.write_enable.next = self.tw_we.q.val();
        self.tlb.write_address.next = self.tw_addr.q.val();
        self.tlb.write_data.next = self.tw_data.q.val();
        self.tw_we.d.next = false;
        self.tw_addr.d.next = self.e_tidx.val();
        self.tw_data.d.next.valid = true;
        self.tw_data.d.next.index = self.e_idx.q.val();
        self.tw_data.d.next.epoch = self.e_epoch.q.val();
        self.tw_data.d.next.vpn = self.e_vpn.val();
        // The frame of `e_va`'s 4 KiB: the page's frame with `e_va`'s
        // offset bits above 12 within the page.
        self.tw_data.d.next.pfn = bit_cast::<40, 64>(
            (((bit_cast::<64, 40>(self.e_ptw.q.val()) << 12) & !self.e_mask.q.val())
                | (self.e_va.q.val() & self.e_mask.q.val()))
                >> 12,
        );
        self.tw_data.d.next.pidx = self.e_pidx.q.val();
        self.tw_data.d.next.lo = self.e_lo.q.val();
        self.tw_data.d.next.hi = self.e_hi.q.val();
        // The page table's read enables, registers computed a cycle ahead.
        self.pt.read_enable.next = self.pt_ce.q.val();
        self.pt.output_enable.next = self.pt_oce.q.val();
        self.tlb.read_enable.next = false;
        self.tlb.output_enable.next = false;
        self.tlb.read_address.next = bit_cast::<TA, 64>(self.s_req_va.val() >> 12)
            ^ bit_cast::<TA, 32>(self.s_req_key.val() >> 8);
        self.m_cmd_done.next = self.c_done.q.val();
        self.m_cmd_error.next = self.c_error.q.val();
        self.c_done.d.next = false;
        self.c_error.d.next = false;
        self.s_cmd_ready.next = false;
        self.tlb_miss.next = self.e_state.q.val() == Engine::Shift;
        self.busy.next = self.c_state.q.val() == Control::Sweep;
        // The pending rejects, by the rules' priority over last cycle's
        // flags (S3's `why3` order).
        self.p_bad_key.next = self.rej4.q.val() & self.bad_key4.q.val();
        self.p_invalidated.next =
            self.rej4.q.val() & !self.bad_key4.q.val() & self.invalidated4.q.val();
        self.p_pd.next = self.rej4.q.val()
            & !self.bad_key4.q.val()
            & !self.invalidated4.q.val()
            & self.pd4.q.val();
        self.p_access.next = self.rej4.q.val()
            & !self.bad_key4.q.val()
            & !self.invalidated4.q.val()
            & !self.pd4.q.val()
            & self.denied4.q.val();
        self.p_bounds.next = self.p_e_bounds.q.val()
            | (self.rej4.q.val()
                & !self.bad_key4.q.val()
                & !self.invalidated4.q.val()
                & !self.pd4.q.val()
                & !self.denied4.q.val()
                & self.bounds4.q.val());
        self.p_e_bounds.d.next = false;
        self.cnt_bad_key.next = self.n_bad_key.q.val();
        if self.p_bad_key.val() {
            self.cnt_bad_key.next = self.n_bad_key.q.val() + 1;
            self.n_bad_key.d.next = self.n_bad_key.q.val() + 1;
        }
        self.cnt_invalidated_key.next = self.n_invalidated.q.val();
        if self.p_invalidated.val() {
            self.cnt_invalidated_key.next = self.n_invalidated.q.val() + 1;
            self.n_invalidated.d.next = self.n_invalidated.q.val() + 1;
        }
        self.cnt_pd_mismatch.next = self.n_pd.q.val();
        if self.p_pd.val() {
            self.cnt_pd_mismatch.next = self.n_pd.q.val() + 1;
            self.n_pd.d.next = self.n_pd.q.val() + 1;
        }
        self.cnt_access_denied.next = self.n_access.q.val();
        if self.p_access.val() {
            self.cnt_access_denied.next = self.n_access.q.val() + 1;
            self.n_access.d.next = self.n_access.q.val() + 1;
        }
        self.cnt_out_of_bounds.next = self.n_bounds.q.val();
        if self.p_bounds.val() {
            self.cnt_out_of_bounds.next = self.n_bounds.q.val() + 1;
            self.n_bounds.d.next = self.n_bounds.q.val() + 1;
        }
        self.cnt_tlb_miss.next = self.n_miss.q.val();

        // ---- Flow control.
        self.s3_fire.next = self.v3.q.val() & self.can_go.q.val();
        self.ld3.next = self.v2.q.val() & (!self.v3.q.val() | self.can_go.q.val());
        self.ld2.next = self.ld2_r.q.val() & self.v1.q.val();
        // The cold part reads every cycle, free-running, addressed from S3's
        // MR index: its output register holds the entry of the request S3
        // held two cycles before, which the engine takes in its second
        // cycle (`Take` on a miss, `Fits` on a hit). No enable from the
        // pipeline's flow control, and no command on its address.
        self.mr_cold.read_enable.next = true;
        self.mr_cold.output_enable.next = true;
        self.mr_cold.read_address.next = bit_cast::<MA, 16>(self.idx3.q.val());
        self.s_req_ready.next = self.room.q.val() & !self.s_cmd_valid.val();
        self.ld1.next = self.s_req_valid.val() & self.s_req_ready.val();
        self.drained.next = !self.v1.q.val()
            & !self.v2.q.val()
            & !self.v3.q.val()
            & (self.e_state.q.val() == Engine::Idle);

        // Accept into S1: start reading its MR entry and its TLB set (page
        // number at 4 KiB, XOR the MR index), both straight from the inputs.
        self.mr.read_enable.next = self.ld1.val();
        self.tlb.read_enable.next = self.ld1.val();
        if self.ld1.val() {
            self.v1.d.next = true;
            self.t1_ok.d.next = true;
            self.key1.d.next = self.s_req_key.val();
            self.inrange1.d.next = !(self.s_req_key.val() & self.mr_over.val()).any();
            self.pd1.d.next = self.s_req_pd.val();
            self.access1.d.next = self.s_req_access.val();
            self.va1.d.next = self.s_req_va.val();
            self.len1.d.next = self.s_req_len.val();
            self.last1.d.next = bit_cast::<33, 64>(self.s_req_va.val() & self.low32.val())
                + bit_cast::<33, 32>(self.s_req_len.val() - self.one32.val());
            self.oend1.d.next = bit_cast::<33, 64>(self.s_req_va.val() & self.low12.val())
                + bit_cast::<33, 32>(self.s_req_len.val());
            self.zero1.d.next = self.s_req_len.val() == 0;
        } else {
            if self.ld2.val() {
                self.v1.d.next = false;
            }
            if self.e_look.q.val() {
                // The engine reads the TLB: S1's word is gone (it walks).
                self.t1_ok.d.next = false;
            }
        }

        // S1's first and last byte: where they differ, smeared down (bit
        // `s` of `smear_c` set when they differ at bit `s` or above).
        // (Bit 32: the carry; the bits above it do not matter, any one
        // of them would set bit 32 of the smear and all below.)
        self.span1.next = bit_cast::<64, 33>(
            bit_cast::<33, 64>(self.va1.q.val() & self.low32.val()) ^ self.last1.q.val(),
        );
        self.smear_a.next = self.span1.val()
            | (self.span1.val() >> 1)
            | (self.span1.val() >> 2)
            | (self.span1.val() >> 3);
        self.smear_b.next = self.smear_a.val()
            | (self.smear_a.val() >> 4)
            | (self.smear_a.val() >> 8)
            | (self.smear_a.val() >> 12);
        self.smear_c.next = self.smear_b.val()
            | (self.smear_b.val() >> 16)
            | (self.smear_b.val() >> 32)
            | (self.smear_b.val() >> 48);

        // S1 -> S2: the RAMs move S1's words to their output registers.
        self.mr.output_enable.next = self.ld2.val();
        self.tlb.output_enable.next = self.ld2.val();
        if self.ld2.val() {
            self.v2.d.next = true;
            self.tok2.d.next = self.t1_ok.q.val();
            self.key2.d.next = self.key1.q.val();
            self.inrange2.d.next = self.inrange1.q.val();
            self.pd2.d.next = self.pd1.q.val();
            self.access2.d.next = self.access1.q.val();
            self.va2.d.next = self.va1.q.val();
            self.len2.d.next = self.len1.q.val();
            // The end, from S1's registers (not at accept, from the port).
            self.end2.d.next =
                bit_cast::<65, 64>(self.va1.q.val()) + bit_cast::<65, 32>(self.len1.q.val());
            self.oend2.d.next = self.oend1.q.val();
            self.above2.d.next = bit_cast::<16, 64>(self.smear_c.val() >> 12);
            self.zero2.d.next = self.zero1.q.val();
        } else {
            if self.ld3.val() {
                self.v2.d.next = false;
            }
            if self.e_state.q.val() == Engine::Wait {
                // The engine moves its TLB word to the output register:
                // S2's word is gone (it walks).
                self.tok2.d.next = false;
            }
        }

        // S2 -> S3: register the checks' results and what the engine needs.
        if self.ld3.val() {
            self.v3.d.next = true;
            self.bad_key3.d.next = !self.inrange2.q.val()
                | (self.mr.read_data.val().state == self.st_free.val())
                | (self.mr.read_data.val().tag != bit_cast::<8, 32>(self.key2.q.val()));
            self.invalidated3.d.next = self.mr.read_data.val().state == self.st_invalid.val();
            // Unequal as below or above: two carry chains, not a tree of
            // LUTs.
            self.pd_ne3.d.next = self.mr.read_data.val().pd < self.pd2.q.val();
            self.pd_ne_hi3.d.next = self.mr.read_data.val().pd > self.pd2.q.val();
            self.denied3.d.next = (self.access2.q.val() & !self.mr.read_data.val().access).any();
            self.tag3.d.next = self.tok2.q.val()
                & self.tlb.read_data.val().valid
                & (bit_cast::<MA, 16>(self.tlb.read_data.val().index)
                    == bit_cast::<MA, 32>(self.key2.q.val() >> 8));
            // The `vpn` compare skips its low `TA` bits: an entry of this
            // set with this MR index has them (set = `vpn ^ index` on
            // those bits), so 52 - `TA` bits in two parts (30 and 22 bits).
            self.tag3_v.d.next = !((bit_cast::<30, 52>(self.tlb.read_data.val().vpn)
                ^ bit_cast::<30, 64>(self.va2.q.val() >> 12))
                & self.vpn_above_set.val())
            .any();
            self.tag3_w.d.next = bit_cast::<22, 52>(self.tlb.read_data.val().vpn >> 30)
                == bit_cast::<22, 64>(self.va2.q.val() >> 42);
            self.epoch_eq3.d.next = self.tlb.read_data.val().epoch == self.mr.read_data.val().epoch;
            // One page: no bit at or above the page shift differs.
            self.single3.d.next =
                !bit_cast::<1, 16>(self.above2.q.val() >> self.tlb.read_data.val().pidx).any();
            self.pidx3.d.next = self.tlb.read_data.val().pidx;
            self.lo_bad3.d.next =
                bit_cast::<12, 64>(self.va2.q.val()) < self.tlb.read_data.val().lo;
            self.hi_bad3.d.next = bit_cast::<17, 33>(self.oend2.q.val() >> 16)
                > bit_cast::<17, 33>(self.tlb.read_data.val().hi >> 16);
            self.hi_eq3.d.next = bit_cast::<17, 33>(self.oend2.q.val() >> 16)
                == bit_cast::<17, 33>(self.tlb.read_data.val().hi >> 16);
            self.hi_lo_bad3.d.next = bit_cast::<16, 33>(self.oend2.q.val())
                > bit_cast::<16, 33>(self.tlb.read_data.val().hi);
            self.end3.d.next = self.end2.q.val();
            self.zero3.d.next = self.zero2.q.val();
            // The TLB holds the frame of the request's 4 KiB: no page mask.
            self.pa3.d.next = (bit_cast::<64, 40>(self.tlb.read_data.val().pfn) << 12)
                | (self.va2.q.val() & self.low12.val());
            self.len3.d.next = self.len2.q.val();
            self.va3.d.next = self.va2.q.val();
            self.idx3.d.next = bit_cast::<16, 32>(self.key2.q.val() >> 8);
            self.epoch3.d.next = self.mr.read_data.val().epoch;
            self.pfn3.d.next = self.tlb.read_data.val().pfn;
        } else if self.s3_fire.val() {
            self.v3.d.next = false;
        }

        // S3 decision: one beat out, or hand over to the engine.
        // The first failing check in the rules' order is the reason.
        self.why3.next = 0.into();
        if self.bad_key3.q.val() {
            self.why3.next = self.r_bad_key.val();
        } else if self.invalidated3.q.val() {
            self.why3.next = self.r_invalidated.val();
        } else if self.pd_ne3.q.val() | self.pd_ne_hi3.q.val() {
            self.why3.next = self.r_pd.val();
        } else if self.denied3.q.val() {
            self.why3.next = self.r_access.val();
        } else if self.hit3.val()
            & (self.lo_bad3.q.val()
                | self.hi_bad3.q.val()
                | (self.hi_eq3.q.val() & self.hi_lo_bad3.q.val()))
        {
            self.why3.next = self.r_bounds.val();
        }
        self.hit3.next =
            self.tag3.q.val() & self.tag3_v.q.val() & self.tag3_w.q.val() & self.epoch_eq3.q.val();
        self.e_sel.next =
            self.s3_fire.val() & !self.zero3.q.val() & !(self.hit3.val() & self.single3.q.val());
        self.s3_write.next = false;
        self.e_done.next = false;
        // S3's beat: the address and length are S3's registers whatever
        // the decision (they mean nothing on a reject beat; a zero-length
        // request has length 0), so the decision drives only the reason,
        // the valid and the write enables.
        self.s3_data.next.pa = self.pa3.q.val();
        self.s3_data.next.len = self.len3.q.val();
        self.s3_data.next.last = true;
        self.s3_data.next.reason = 0.into();
        if !self.zero3.q.val() {
            self.s3_data.next.reason = self.why3.val();
        }
        // For the counters, a cycle later (no load enable, no decision).
        self.rej4.d.next = self.s3_fire.val() & !self.zero3.q.val();
        self.bad_key4.d.next = self.bad_key3.q.val();
        self.invalidated4.d.next = self.invalidated3.q.val();
        self.pd4.d.next = self.pd_ne3.q.val() | self.pd_ne_hi3.q.val();
        self.denied4.d.next = self.denied3.q.val();
        self.bounds4.d.next = self.hit3.val()
            & (self.lo_bad3.q.val()
                | self.hi_bad3.q.val()
                | (self.hi_eq3.q.val() & self.hi_lo_bad3.q.val()));
        // A reject beat is counted from `rej4` and the flags.
        self.w3.next =
            self.zero3.q.val() | self.why3.val().any() | (self.hit3.val() & self.single3.q.val());
        self.s3_write.next = self.s3_fire.val() & self.w3.val();
        // The engine starts on `e_sel`, S3's decision without its reject
        // checks; a rejected request (its beat written above) leaves it
        // from `Room` or `Cold` a cycle later, by `e_rej`.
        self.e_rej.d.next = self.why3.val().any();
        if self.e_sel.val() {
            if self.hit3.val() {
                // In bounds (checked in S3 from the TLB entry): wait for
                // e_room and e_fits, then emit the first page.
                self.e_state.d.next = Engine::Room;
            } else {
                // A miss: the bounds first (from the cold part), then
                // a walk.
                self.e_state.d.next = Engine::Cold;
            }
        }
        // While the engine is idle its registers follow S3's request (it
        // uses them only once started): the hand-over sets only its state,
        // and the decision drives no load enables.
        if self.e_state.q.val() == Engine::Idle {
            self.e_va.d.next = self.va3.q.val();
            self.e_rem.d.next = self.len3.q.val();
            // The page shift from the TLB entry (right on a hit); the cold
            // part's fields are taken in the engine's second cycle.
            self.e_pidx.d.next = self.pidx3.q.val();
            self.e_idx.d.next = self.idx3.q.val();
            self.e_epoch.d.next = self.epoch3.q.val();
            self.e_pfn.d.next = self.pfn3.q.val();
            self.e_end.d.next = self.end3.q.val();
            self.e_hit.d.next = true;
            self.e_hit_v.d.next = true;
            self.e_hit_w.d.next = true;
            // The mask from the TLB's page shift (a register): right for
            // a hit's first page (`Room`); a miss's `Bounds` recomputes it
            // from the cold part's shift (`e_pidx`).
            self.e_mask.d.next = !(self.ones_hi12.val() << self.pidx3.q.val());
        }
        if self.e_state.q.val() == Engine::Shift {
            self.n_miss.d.next = self.n_miss.q.val() + 1;
        }

        self.e_write.next = false;
        self.e_data.next.pa = 0.into();
        self.e_data.next.len = 0.into();
        self.e_data.next.last = true;
        self.e_data.next.reason = 0.into();
        self.e_oob.next = self.e_va_lt_hi.q.val()
            | (self.e_va_eq_hi.q.val() & self.e_va_lt_lo.q.val())
            | self.e_end_gt_hi.q.val()
            | (self.e_end_eq_hi.q.val() & self.e_end_gt_lo.q.val());
        // ---- Engine.
        if self.e_look.q.val() {
            self.tlb.read_address.next = self.e_tidx.val();
            self.tlb.read_enable.next = true;
        }
        match self.e_state.q.val() {
            Engine::Idle => {}
            Engine::Bounds => {
                // The bounds compares are registered at the end of this cycle.
                self.e_state.d.next = Engine::Check;
            }
            Engine::Check => {
                if self.e_oob.val() {
                    // Out of bounds: one reject beat.
                    if !self.q_skid_valid.q.val() {
                        self.e_write.next = true;
                        self.e_data.next.reason = self.r_bounds.val();
                        self.p_e_bounds.d.next = true;
                        self.e_done.next = true;
                        self.e_state.d.next = Engine::Idle;
                    }
                } else {
                    self.e_state.d.next = Engine::Shift;
                }
            }
            Engine::Room => {
                if self.e_rej.q.val() {
                    self.e_done.next = true;
                    self.e_state.d.next = Engine::Idle;
                } else {
                    self.e_state.d.next = Engine::Fits;
                }
            }
            Engine::Fits => {
                // The cold part (for a walk of a further page).
                self.e_pidx.d.next =
                    bit_cast::<4, 5>(self.mr_cold.read_data.val().shift - self.shift_min.val());
                self.e_base.d.next = self.mr_cold.read_data.val().base;
                self.e_ptb.d.next = self.mr_cold.read_data.val().pt_base;
                self.e_limit.d.next = self.mr_cold.read_data.val().limit;
                self.e_state.d.next = Engine::Emit;
            }
            Engine::Cold => {
                // The cold part's output register loads this request's entry.
                if self.e_rej.q.val() {
                    self.e_done.next = true;
                    self.e_state.d.next = Engine::Idle;
                } else {
                    self.e_state.d.next = Engine::Take;
                }
            }
            Engine::Take => {
                self.e_pidx.d.next =
                    bit_cast::<4, 5>(self.mr_cold.read_data.val().shift - self.shift_min.val());
                self.e_base.d.next = self.mr_cold.read_data.val().base;
                self.e_ptb.d.next = self.mr_cold.read_data.val().pt_base;
                self.e_limit.d.next = self.mr_cold.read_data.val().limit;
                self.e_state.d.next = Engine::Bounds;
            }
            Engine::Look => {
                // The TLB read (`e_look`, below).
                self.e_state.d.next = Engine::Wait;
            }
            Engine::Wait => {
                self.tlb.output_enable.next = true;
                self.e_state.d.next = Engine::Capture;
            }
            Engine::Capture => {
                // The TLB word into a register, no logic after the RAM.
                self.e_tw.d.next = self.tlb.read_data.val();
                self.e_state.d.next = Engine::Compare;
            }
            Engine::Compare => {
                // The frame is taken whether it hits or not: a walk loads
                // the page table's frame over it before it is used.
                self.e_pfn.d.next = self.e_tw.q.val().pfn;
                // The compare is registered (`e_hit`); `Emit` walks on a
                // miss (one cycle more per miss, none per hit).
                self.e_hit.d.next = self.e_tw.q.val().valid
                    & (bit_cast::<MA, 16>(self.e_tw.q.val().index)
                        == bit_cast::<MA, 16>(self.e_idx.q.val()))
                    & (self.e_tw.q.val().epoch == self.e_epoch.q.val());
                self.e_hit_v.d.next = bit_cast::<26, 52>(self.e_tw.q.val().vpn)
                    == bit_cast::<26, 52>(self.e_vpn.val());
                self.e_hit_w.d.next = bit_cast::<26, 52>(self.e_tw.q.val().vpn >> 26)
                    == bit_cast::<26, 52>(self.e_vpn.val() >> 26);
                self.e_state.d.next = Engine::Emit;
            }
            Engine::Shift => {
                // `x >> shift` on the bits the index needs: `x >> 12` (32
                // bits) shifted by 0..=9, not 64 bits by 12..=21.
                self.e_vs.d.next = bit_cast::<PTA, 32>(
                    bit_cast::<32, 64>(self.e_va.q.val() >> 12) >> self.e_pidx.q.val(),
                );
                self.e_bs.d.next = bit_cast::<PTA, 32>(
                    bit_cast::<32, 64>(self.e_base.q.val() >> 12) >> self.e_pidx.q.val(),
                );
                self.e_state.d.next = Engine::Index;
            }
            Engine::Index => {
                self.e_pta.d.next =
                    self.e_vs.q.val() - self.e_bs.q.val() + bit_cast::<PTA, 16>(self.e_ptb.q.val());
                self.e_state.d.next = Engine::Read;
            }
            Engine::Read => {
                // The page table reads (`pt_ce`).
                self.e_state.d.next = Engine::Hold;
            }
            Engine::Hold => {
                // The word moves to the output register (`pt_oce`).
                self.e_state.d.next = Engine::Load;
            }
            Engine::Load => {
                // `e_ptw` takes the page table's word.
                self.e_state.d.next = Engine::Fill;
            }
            Engine::Fill => {
                self.e_pfn.d.next = self.e_ptw.q.val();
                self.tw_we.d.next = true;
                self.e_hit.d.next = true;
                self.e_hit_v.d.next = true;
                self.e_hit_w.d.next = true;
                self.e_state.d.next = Engine::Emit;
            }
            Engine::Emit => {
                if !(self.e_hit.q.val() & self.e_hit_v.q.val() & self.e_hit_w.q.val()) {
                    self.e_state.d.next = Engine::Shift;
                } else if !self.q_skid_valid.q.val() {
                    self.e_write.next = true;
                    self.e_data.next.pa = ((bit_cast::<64, 40>(self.e_pfn.q.val()) << 12)
                        & !self.e_mask.q.val())
                        | (self.e_va.q.val() & self.e_mask.q.val());
                    if self.e_fits.q.val() {
                        self.e_data.next.len = self.e_rem.q.val();
                        self.e_done.next = true;
                        self.e_state.d.next = Engine::Idle;
                    } else {
                        self.e_data.next.len = self.e_room.q.val();
                        self.e_data.next.last = false;
                        self.e_chunk.d.next = self.e_room.q.val();
                        self.e_state.d.next = Engine::Advance;
                    }
                }
            }
            Engine::Advance => {
                self.e_va.d.next = self.e_va.q.val() + bit_cast::<64, 32>(self.e_chunk.q.val());
                self.e_rem.d.next = self.e_rem.q.val() - self.e_chunk.q.val();
                self.e_state.d.next = Engine::Look;
            }
        }
        // One beat written this cycle: S3's or the engine's (never both:
        // S3 goes only while the engine is idle).
        self.q_write.next = self.s3_write.val() | self.e_write.val();
        if self.e_out.q.val() {
            self.q_data.next = self.e_data.val();
        } else {
            self.q_data.next = self.s3_data.val();
        }
        // ---- Output: the output register and a skid register behind it.
        // With the output register empty (and so the skid register), the
        // beat written this cycle is offered on the port at once and
        // stored only if not taken. A beat is written only while the skid
        // register is free (S3's `can_go`, the engine's `Emit`).
        self.q_v.next = self.q_valid.q.val() | (self.q_t.q.val() & self.q_tw.q.val());
        self.q_pop.next = self.q_v.val() & self.m_grant_ready.val();
        // (S3's beat goes straight out when the output register is empty
        // and the consumer takes it; when S3 hands over there is no beat,
        // so with the register empty and `m_grant_ready` S3 stores none.)
        self.q_pass.next = !self.q_v.val() & self.m_grant_ready.val();
        // The skid register loads whenever it is free (a beat is
        // written only then): its enable is a flip-flop.
        if !self.q_skid_valid.q.val() {
            self.q_skid.d.next = self.q_data.val();
        }
        if !self.q_v.val() | self.q_pop.val() {
            // The output register takes the older beat: the skid's, else
            // the one written now.
            if self.q_skid_valid.q.val() {
                self.q_out.d.next = self.q_skid.q.val();
            } else {
                self.q_out.d.next = self.q_data.val();
            }
            // The engine's beat is stored; S3's unless it goes straight
            // out, its valid completed by `q_tw` (S3's write flag).
            self.q_valid.d.next = self.q_skid_valid.q.val() | self.e_write.val();
            self.q_t.d.next = self.s3_fire.val() & !self.q_pass.val();
            self.q_tw.d.next = self.w3.val();
            self.q_skid_valid.d.next = self.q_skid_valid.q.val() & self.q_write.val();
        } else if self.q_write.val() {
            self.q_skid_valid.d.next = true;
        }
        // `valid` and the beat come from registers only (S3, the engine,
        // the output register), never from `m_grant_ready`.
        self.m_grant_valid.next = self.q_v.val() | self.s3_write.val();
        if self.q_v.val() {
            self.m_grant_pa.next = self.q_out.q.val().pa;
            self.m_grant_len.next = self.q_out.q.val().len;
            self.m_grant_last.next = self.q_out.q.val().last;
            self.m_grant_reason.next = self.q_out.q.val().reason;
        } else {
            self.m_grant_pa.next = self.s3_data.val().pa;
            self.m_grant_len.next = self.s3_data.val().len;
            self.m_grant_last.next = self.s3_data.val().last;
            self.m_grant_reason.next = self.s3_data.val().reason;
        }

        // ---- Control plane. The command is registered as it leaves Idle,
        // and the RAM writes come from registers (`c_we`, `c_we_cold`,
        // `c_waddr`, `c_hot`, the command's; `c_pt_we`), set the cycle
        // before the write.
        self.c_we.d.next = false;
        self.c_we_cold.d.next = false;
        self.c_pt_we.d.next = false;
        self.c_rd.d.next = false;
        if self.c_rd.q.val() {
            // Decode: read the entry (harmless when the command turns out
            // not to need it).
            self.mr.read_enable.next = true;
            self.mr.read_address.next = self.c_waddr.q.val();
        }
        // REGISTER's checks, every cycle from the registers loaded when the
        // command is taken (held until the next): valid in Wait, and their
        // OR in Capture, ahead of Modify.
        self.c_shift_bad.d.next = (self.c_shift.q.val() < self.shift_min.val())
            | (self.c_shift.q.val() > self.shift_max.val());
        // The limit above 2^64: bit 64 and any bit below it (a compare
        // against the constant maps to a 33-cell carry chain).
        self.c_over.d.next =
            self.c_limit.q.val().get_bit(64) & bit_cast::<64, 65>(self.c_limit.q.val()).any();
        self.c_index_bad.d.next = (self.c_index.q.val() & self.pt_over.val()).any();
        self.c_refuse.d.next =
            self.c_shift_bad.q.val() | self.c_over.q.val() | self.c_index_bad.q.val();
        match self.c_state.q.val() {
            Control::Sweep => {
                self.tw_we.d.next = true;
                self.tw_addr.d.next = bit_cast::<TA, 16>(self.c_count.q.val());
                self.tw_data.d.next.valid = false;
                self.c_we.d.next = self.c_sweep_mr.q.val();
                self.c_waddr.d.next = bit_cast::<MA, 16>(self.c_count.q.val());
                self.c_hot.d.next.state = self.st_free.val();
                self.c_hot.d.next.epoch = 0.into();
                self.c_count.d.next = self.c_count.q.val() + 1;
                if self.c_count.q.val() == self.sweep_last.val() {
                    self.c_state.d.next = Control::Flush;
                }
            }
            Control::Flush => {
                self.c_state.d.next = Control::Idle;
            }
            Control::Idle => {
                if self.s_cmd_valid.val() & self.drained.val() {
                    self.c_op.d.next = self.s_cmd_op.val();
                    self.c_key.d.next = self.s_cmd_key.val();
                    self.c_pd.d.next = self.s_cmd_pd.val();
                    self.c_access.d.next = self.s_cmd_access.val();
                    self.c_addr.d.next = self.s_cmd_addr.val();
                    self.c_limit.d.next = bit_cast::<65, 64>(self.s_cmd_addr.val())
                        + bit_cast::<65, 64>(self.s_cmd_len.val());
                    self.c_shift.d.next = self.s_cmd_shift.val();
                    self.c_index.d.next = self.s_cmd_index.val();
                    self.c_waddr.d.next = bit_cast::<MA, 32>(self.s_cmd_key.val() >> 8);
                    self.c_bad.d.next = (self.s_cmd_key.val() & self.mr_over.val()).any();
                    self.c_pt_bad.d.next = (self.s_cmd_index.val() & self.pt_over.val()).any()
                        | (self.s_cmd_addr.val() & self.pa_over.val()).any();
                    self.c_rd.d.next = true;
                    self.c_state.d.next = Control::Decode;
                }
            }
            Control::Decode => {
                self.c_wrap.d.next = false;
                if self.c_op.q.val() == self.op_write_pt.val() {
                    self.c_err.d.next = self.c_pt_bad.q.val();
                    self.c_pt_we.d.next = !self.c_pt_bad.q.val();
                    self.c_state.d.next = Control::Write;
                } else if self.c_bad.q.val() {
                    self.c_err.d.next = true;
                    self.c_state.d.next = Control::Write;
                } else {
                    // The entry is being read (`c_rd`; two cycles), then
                    // registered, modified and written.
                    self.c_state.d.next = Control::Wait;
                }
            }
            Control::Wait => {
                self.mr.output_enable.next = true;
                self.c_state.d.next = Control::Capture;
            }
            Control::Capture => {
                self.c_hot.d.next = self.mr.read_data.val();
                self.c_match.d.next = (self.mr.read_data.val().state == self.st_valid.val())
                    & (self.mr.read_data.val().tag == bit_cast::<8, 32>(self.c_key.q.val()));
                self.c_state.d.next = Control::Modify;
            }
            Control::Modify => {
                self.c_err.d.next = false;
                self.c_state.d.next = Control::Write;
                if self.c_op.q.val() == self.op_register.val() {
                    if self.c_refuse.q.val() {
                        self.c_err.d.next = true;
                    } else {
                        self.c_we.d.next = true;
                        self.c_hot.d.next.tag = bit_cast::<8, 32>(self.c_key.q.val());
                        self.c_hot.d.next.state = self.st_valid.val();
                        self.c_hot.d.next.pd = self.c_pd.q.val();
                        self.c_hot.d.next.access = self.c_access.q.val();
                        self.c_we_cold.d.next = true;
                        self.c_hot.d.next.epoch = self.c_hot.q.val().epoch + 1;
                        // The epoch wraps: sweep the TLB, keep the MRs.
                        self.c_wrap.d.next = self.c_hot.q.val().epoch == 0xFF;
                    }
                } else if self.c_op.q.val() == self.op_deregister.val() {
                    self.c_we.d.next = true;
                    self.c_hot.d.next.state = self.st_free.val();
                } else if self.c_match.q.val() {
                    self.c_we.d.next = true;
                    self.c_hot.d.next.state = self.st_invalid.val();
                } else {
                    self.c_err.d.next = true;
                }
            }
            Control::Write => {
                // The write registered in Modify (or Decode) lands at the
                // end of this cycle; the command completes.
                self.s_cmd_ready.next = true;
                self.c_done.d.next = true;
                self.c_error.d.next = self.c_err.q.val();
                if self.c_wrap.q.val() {
                    self.c_state.d.next = Control::Sweep;
                    self.c_sweep_mr.d.next = false;
                    self.c_count.d.next = 0.into();
                } else {
                    self.c_state.d.next = Control::Idle;
                }
            }
        }

        if self.reset.val() {
            self.v1.d.next = false;
            self.v2.d.next = false;
            self.v3.d.next = false;
            self.e_state.d.next = Engine::Idle;
            self.n_bad_key.d.next = 0.into();
            self.n_invalidated.d.next = 0.into();
            self.n_pd.d.next = 0.into();
            self.n_access.d.next = 0.into();
            self.n_bounds.d.next = 0.into();
            self.n_miss.d.next = 0.into();
            self.rej4.d.next = false;
            self.p_e_bounds.d.next = false;
            self.q_valid.d.next = false;
            self.q_t.d.next = false;
            self.q_skid_valid.d.next = false;
            self.c_state.d.next = Control::Sweep;
            self.c_sweep_mr.d.next = true;
            self.c_count.d.next = 0.into();
            self.c_done.d.next = false;
            self.c_error.d.next = false;
            self.c_we.d.next = false;
            self.c_we_cold.d.next = false;
            self.c_pt_we.d.next = false;
            self.c_rd.d.next = false;
            self.tw_we.d.next = false;
        }

        // ---- Next cycle's flow control, from the next-state values above:
        // S3 goes when the engine is idle and the skid is free; S2
        // loads when empty or S3 moves on; S1 likewise; a request is taken
        // when S1 will be free, with the control idle and the engine not
        // reading the TLB (it would share the read port).
        // The engine is idle next cycle if it is now and takes nothing, or
        // it finishes; it looks up the TLB next cycle after Advance.
        // S3's decision enters last: each register's next value is
        // computed for both outcomes (`*_s`: S3 does not hand over, so it
        // writes a beat if it fires; `*_e`: it hands over, writes nothing,
        // and the engine is busy), and `e_sel` selects (S3 hands over, its
        // reject checks left out: the cautious side).
        self.fc_free.next = !self.q_v.val() | self.q_pop.val();
        if self.fc_free.val() {
            self.fc_skid_s.next =
                self.q_skid_valid.q.val() & (self.s3_fire.val() | self.e_write.val());
        } else {
            self.fc_skid_s.next =
                self.q_skid_valid.q.val() | self.s3_fire.val() | self.e_write.val();
        }
        self.fc_skid_e.next = !self.fc_free.val() & self.q_skid_valid.q.val();
        self.fc_go_s.next =
            ((self.e_state.q.val() == Engine::Idle) | self.e_done.val() | self.reset.val())
                & (!self.fc_skid_s.val() | self.reset.val());
        self.fc_go_e.next =
            (self.e_done.val() | self.reset.val()) & (!self.fc_skid_e.val() | self.reset.val());
        self.fc_ld2_s.next = !self.v2.d.val() | !self.v3.d.val() | self.fc_go_s.val();
        self.fc_ld2_e.next = !self.v2.d.val() | !self.v3.d.val() | self.fc_go_e.val();
        // The control is idle next cycle, from its state alone: a command
        // it takes now leaves `room` set in Decode, where `s_cmd_valid`
        // (held until `s_cmd_ready`, in Write) still holds requests off;
        // so `drained` does not reach `room`.
        self.fc_room.next = ((self.c_state.q.val() == Control::Idle)
            | (self.c_state.q.val() == Control::Flush)
            | ((self.c_state.q.val() == Control::Write) & !self.c_wrap.q.val()))
            & !self.reset.val()
            & (self.e_state.q.val() != Engine::Advance);
        // The engine's registered decodes, from its present state and
        // registers (S3's hand-over enters only `Room` or `Cold`, so they
        // do not depend on S3's decision).
        self.e_look.d.next = (self.e_state.q.val() == Engine::Advance) & !self.reset.val();
        self.pt_ce.d.next = (self.e_state.q.val() == Engine::Index) & !self.reset.val();
        self.pt_oce.d.next = (self.e_state.q.val() == Engine::Read) & !self.reset.val();
        // Next in `Emit` or `Check`: entering them, or staying (the skid
        // register full with a beat to write).
        self.e_out.d.next = ((self.e_state.q.val() == Engine::Fits)
            | (self.e_state.q.val() == Engine::Compare)
            | (self.e_state.q.val() == Engine::Fill)
            | (self.e_state.q.val() == Engine::Bounds)
            | ((self.e_state.q.val() == Engine::Emit)
                & self.e_hit.q.val()
                & self.e_hit_v.q.val()
                & self.e_hit_w.q.val()
                & self.q_skid_valid.q.val())
            | ((self.e_state.q.val() == Engine::Check)
                & self.e_oob.val()
                & self.q_skid_valid.q.val()))
            & !self.reset.val();
        if self.e_sel.val() {
            self.can_go.d.next = self.fc_go_e.val();
            self.ld2_r.d.next = self.fc_ld2_e.val();
            self.room.d.next = self.fc_room.val() & (!self.v1.d.val() | self.fc_ld2_e.val());
        } else {
            self.can_go.d.next = self.fc_go_s.val();
            self.ld2_r.d.next = self.fc_ld2_s.val();
            self.room.d.next = self.fc_room.val() & (!self.v1.d.val() | self.fc_ld2_s.val());
        }
    }
}

/// The default build: 4096 MRs, 256 TLB entries, 8192 page-table entries.
pub type MrTlbDefault = MrTlb<12, 8, 13>;
/// A small build for fast tests: 64 MRs, 8 TLB entries (heavy thrash),
/// 256 page-table entries.
pub type MrTlbSmall = MrTlb<6, 3, 8>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mr_tlb_synthesizes() {
        let mut uut = MrTlbSmall::new();
        uut.connect_all();
        yosys_validate("mr_tlb_small", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    #[should_panic(expected = "TLB index bits")]
    fn parameters_are_checked() {
        let _ = MrTlb::<12, 13, 13>::new();
    }
}
