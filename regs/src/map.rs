//! The register map itself. Byte offsets are into the CSR window, which the
//! softcore sees at [`CSR_BASE`]; all registers are 32 bits wide.

use crate::model::Block;
use crate::queue;
use crate::values::{Counter, MrCounter, MrOp, QpState, QpType};
use roce_wire::{mr as wire_mr, LocalAckTimeout, Pmtu, Psn, RnrTimer};

/// Address of the CSR window on the softcore's bus (RAM is at 0).
pub const CSR_BASE: u32 = 0x4000_0000;
/// Bytes of the CSR window.
pub const CSR_WINDOW_SIZE: u32 = 0x4_0000;

/// QP contexts in the default build (the hardware parameter N; the running
/// hardware reports its own in `qp.qp_count`).
pub const QP_COUNT: u32 = 256;
/// QP contexts the `qp` block has address space for.
pub const QP_MAX: u32 = 1024;
/// Bytes per QP context in the `qp` block.
pub const QP_STRIDE: u32 = 0x40;
/// Offset of QP context 0 in the `qp` block.
pub const QP_CTX_OFFSET: u32 = 0x1_0000;

/// Completion queues in the default build (the hardware parameter; the
/// running hardware reports its own in `hq.cq_count`). A QP names its send
/// and receive CQ in `hq.sq_cfg.CQN` and `hq.rq_cfg.CQN`; CQs may be shared.
pub const CQ_COUNT: u32 = 256;
/// CQ contexts the `hq` block has address space for.
pub const CQ_MAX: u32 = 1024;
/// Bytes per QP in the `db` block (its two producer doorbells).
pub const QP_DB_STRIDE: u32 = 0x8;
/// Bytes per CQ in the `db` block (consumer index and arm).
pub const CQ_DB_STRIDE: u32 = 0x8;
/// Bytes per QP ring context in the `hq` block.
pub const QP_RING_STRIDE: u32 = 0x20;
/// Bytes per CQ context in the `hq` block.
pub const CQ_CTX_STRIDE: u32 = 0x10;

/// Bits of a GID-table index; the table has `1 << GID_INDEX_BITS` entries.
pub const GID_INDEX_BITS: u8 = 2;
/// Entries in the GID table (IPv6 addresses, 4 words each).
pub const GID_COUNT: u32 = 1 << GID_INDEX_BITS;
/// Bits of a PKey-table index.
pub const PKEY_INDEX_BITS: u8 = 2;
/// Entries in the PKey table; entry 0 is the default PKey.
pub const PKEY_COUNT: u32 = 1 << PKEY_INDEX_BITS;
/// Outstanding RDMA READ/atomic requests a QP may initiate, at most.
pub const MAX_RD_ATOMIC: u32 = 16;
/// RDMA READ/atomic requests a QP may have in flight as responder, at most.
pub const MAX_DEST_RD_ATOMIC: u32 = 16;

// The floor for the default build, and room for it in the `qp` block.
const _: () = assert!(QP_COUNT >= 256 && QP_COUNT <= QP_MAX);
const _: () = assert!(CQ_COUNT <= CQ_MAX && CQ_MAX <= 1 << 16);
// The `db` and `hq` arrays fit their blocks (see the blocks).
const _: () = assert!(0x1000 + QP_MAX * QP_DB_STRIDE <= 0x4000);
const _: () = assert!(0x4000 + CQ_MAX * CQ_DB_STRIDE <= 0x8000);
const _: () = assert!(0x4000 + CQ_MAX * CQ_CTX_STRIDE <= 0x8000);
const _: () = assert!(0x8000 + QP_MAX * QP_RING_STRIDE <= 0x1_0000);
// At least 4 GIDs (issue 5).
const _: () = assert!(GID_COUNT >= 4);

/// The sizing constants above as data, for generators (name, value, doc).
pub const CONSTANTS: &[(&str, u32, &str)] = &[
    (
        "CSR_BASE",
        CSR_BASE,
        "Address of the CSR window on the softcore's bus.",
    ),
    (
        "CSR_WINDOW_SIZE",
        CSR_WINDOW_SIZE,
        "Bytes of the CSR window.",
    ),
    ("QP_COUNT", QP_COUNT, "QP contexts in the default build."),
    (
        "QP_MAX",
        QP_MAX,
        "QP contexts the qp block has address space for.",
    ),
    ("QP_STRIDE", QP_STRIDE, "Bytes per QP context."),
    (
        "QP_CTX_OFFSET",
        QP_CTX_OFFSET,
        "Offset of QP context 0 in the qp block.",
    ),
    ("GID_COUNT", GID_COUNT, "Entries in the GID table."),
    (
        "CQ_COUNT",
        CQ_COUNT,
        "Completion queues in the default build.",
    ),
    (
        "CQ_MAX",
        CQ_MAX,
        "CQ contexts the hq block has address space for.",
    ),
    (
        "QP_DB_STRIDE",
        QP_DB_STRIDE,
        "Bytes per QP in the db block.",
    ),
    (
        "CQ_DB_STRIDE",
        CQ_DB_STRIDE,
        "Bytes per CQ in the db block.",
    ),
    (
        "QP_RING_STRIDE",
        QP_RING_STRIDE,
        "Bytes per QP ring context in the hq block.",
    ),
    (
        "CQ_CTX_STRIDE",
        CQ_CTX_STRIDE,
        "Bytes per CQ context in the hq block.",
    ),
    (
        "MAX_SGE",
        queue::MAX_SGE,
        "SGEs per send or receive WQE, at most.",
    ),
    (
        "MAX_INLINE",
        queue::MAX_INLINE,
        "Inline payload bytes per send WQE, at most.",
    ),
    ("SWQE_SIZE", queue::SWQE_SIZE, "Bytes of a send WQE."),
    ("RWQE_SIZE", queue::RWQE_SIZE, "Bytes of a receive WQE."),
    ("CQE_SIZE", queue::CQE_SIZE, "Bytes of a CQE."),
    (
        "LOG_SIZE_MAX",
        queue::LOG_SIZE_MAX,
        "Largest log2 of a ring's entries (16-bit indices).",
    ),
    ("PKEY_COUNT", PKEY_COUNT, "Entries in the PKey table."),
    ("MAX_RD_ATOMIC", MAX_RD_ATOMIC, "Largest max_rd_atomic."),
    (
        "MAX_DEST_RD_ATOMIC",
        MAX_DEST_RD_ATOMIC,
        "Largest max_dest_rd_atomic.",
    ),
];

/// Bits needed to hold `max`.
pub const fn bits_for(max: u32) -> u8 {
    (u32::BITS - max.leading_zeros()) as u8
}

/// Bits of a PSN (roce-wire's [`Psn`]).
pub const PSN_BITS: u8 = Psn::BITS as u8;
/// Bits of a QP number.
pub const QPN_BITS: u8 = 24;
/// Bits of a PMTU code (roce-wire's [`Pmtu`] codes, 1..=5).
pub const PMTU_BITS: u8 = bits_for(Pmtu::ALL[Pmtu::ALL.len() - 1].code() as u32);
/// Bits of the local ACK timeout exponent (roce-wire's [`LocalAckTimeout`]).
pub const TIMEOUT_BITS: u8 = bits_for(LocalAckTimeout::MAX as u32);
/// Bits of an RNR timer code (roce-wire's [`RnrTimer`] table).
pub const RNR_TIMER_BITS: u8 = bits_for(RnrTimer::TABLE_US.len() as u32 - 1);
/// Bits of `retry_cnt` and `rnr_retry`.
pub const RETRY_BITS: u8 = 3;
/// Bits of `max_rd_atomic` and `max_dest_rd_atomic`.
pub const RD_ATOMIC_BITS: u8 = 8;
/// Bits of a QP state.
pub const STATE_BITS: u8 = 3;
/// Bits of a QP type.
pub const QP_TYPE_BITS: u8 = 2;
/// Bits of the access flags.
pub const ACCESS_BITS: u8 = 4;
/// Bits of a memory-region command op (`MrOp`).
pub const MR_OP_BITS: u8 = MrOp::BITS;
/// Bits of a protection domain (roce-wire's `mr::PD_BITS`).
pub const MR_PD_BITS: u8 = wire_mr::PD_BITS as u8;
/// Bits of a memory region's access flags (roce-wire's `mr::Access`).
pub const MR_ACCESS_BITS: u8 = wire_mr::Access::BITS as u8;
/// Bits of a page shift: holds `mr::PAGE_SHIFT_MAX`.
pub const MR_SHIFT_BITS: u8 = bits_for(wire_mr::PAGE_SHIFT_MAX as u32);

register_map! {
    BLOCKS;

    /// Global configuration: station addresses, GID and PKey tables, limits.
    block cfg (base: 0x0000, size: 0x100, type: 0x0001, version: 1) {
        /// Capabilities of this build.
        caps (0x04): RO {
            /// Entries in the GID table.
            GID_COUNT [0, 8] = crate::GID_COUNT,
            /// Entries in the PKey table.
            PKEY_COUNT [8, 8] = crate::PKEY_COUNT,
            /// Largest `max_rd_atomic`.
            MAX_RD_ATOMIC [16, 8] = crate::MAX_RD_ATOMIC,
            /// Largest `max_dest_rd_atomic`.
            MAX_DEST_RD_ATOMIC [24, 8] = crate::MAX_DEST_RD_ATOMIC,
        }
        /// Station MAC address, bytes 0 and 1 (byte 0 in bits 15:8).
        mac_hi (0x08): RW {
            /// MAC bytes 0..2.
            MAC [0, 16] = 0,
        }
        /// Station MAC address, bytes 2 to 5 (byte 2 in bits 31:24).
        mac_lo (0x0C): RW {
            /// MAC bytes 2..6.
            MAC [0, 32] = 0,
        }
        /// Station IPv4 address (byte 0 in bits 31:24).
        ipv4 (0x10): RW {
            /// The address.
            ADDRESS [0, 32] = 0,
        }
        /// UDP source port base: a QP sends from BASE | (hash(QPN) & 0x3FFF).
        udp_sport (0x14): RW {
            /// Port base.
            BASE [0, 16] = 0xC000,
        }
        /// Largest path MTU a QP may use (IBTA code; 5 = 4096 bytes).
        pmtu_cap (0x18): RW {
            /// MTU code.
            PMTU [0, PMTU_BITS] = Pmtu::Mtu4096 as u32,
        }
        /// PKey table; entry 0 is the default PKey.
        pkey (0x20, [PKEY_COUNT; 4]): RW {
            /// Partition key (bit 15: full membership).
            PKEY [0, 16] = 0xFFFF,
        }
        /// GID table entry e, bytes 0..4 (byte 0 in bits 31:24).
        gid_w0 (0x40, [GID_COUNT; 0x10]): RW {
            /// GID bytes 0..4.
            WORD [0, 32] = 0,
        }
        /// GID table entry e, bytes 4..8.
        gid_w1 (0x44, [GID_COUNT; 0x10]): RW {
            /// GID bytes 4..8.
            WORD [0, 32] = 0,
        }
        /// GID table entry e, bytes 8..12.
        gid_w2 (0x48, [GID_COUNT; 0x10]): RW {
            /// GID bytes 8..12.
            WORD [0, 32] = 0,
        }
        /// GID table entry e, bytes 12..16.
        gid_w3 (0x4C, [GID_COUNT; 0x10]): RW {
            /// GID bytes 12..16.
            WORD [0, 32] = 0,
        }
    }

    /// Command mailbox. The host writes the command registers, then
    /// `doorbell.GO` = 1; the firmware validates and executes the command,
    /// writes `status` and clears `GO`. Attribute registers hold one
    /// attribute each (all 32 bits stored) so out-of-range values are seen
    /// and rejected, never truncated.
    block mbox (base: 0x0100, size: 0x100, type: 0x0002, version: 1) {
        /// Doorbell.
        doorbell (0x04): RW {
            /// Host: 1 posts the command. Firmware: 0 when `status` is valid.
            GO [0, 1] = 0,
        }
        /// Status of the last command.
        status (0x08): RW {
            /// Result code (`ResultCode`); not `ok` means nothing changed.
            RESULT [0, 8] = 0,
            /// Commands completed since reset (wraps).
            SEQ [16, 16] = 0,
        }
        /// Command.
        cmd (0x0C): RW {
            /// Operation (`Command`).
            OP [0, 4] = 0,
        }
        /// QP the command acts on.
        qpn (0x10): RW {
            /// QP number, below `qp.qp_count`.
            QPN [0, QPN_BITS] = 0,
        }
        /// Which attributes the command carries (`AttrMask` bits).
        attr_mask (0x14): RW {
            /// The mask.
            MASK [0, 32] = 0,
        }
        /// Target state (`AttrMask::State`).
        qp_state (0x18): RW {
            /// `QpState`.
            STATE [0, STATE_BITS] = 0,
        }
        /// Current state the host expects (`AttrMask::CurState`).
        cur_state (0x1C): RW {
            /// `QpState`.
            STATE [0, STATE_BITS] = 0,
        }
        /// QP type (`AttrMask::QpType`, Reset to Init only).
        qp_type (0x20): RW {
            /// `QpType`.
            TYPE [0, QP_TYPE_BITS] = 0,
        }
        /// PKey-table index (`AttrMask::PkeyIndex`).
        pkey_index (0x24): RW {
            /// Index.
            INDEX [0, PKEY_INDEX_BITS] = 0,
        }
        /// Access flags (`AttrMask::AccessFlags`).
        access_flags (0x28): RW {
            /// `AccessFlag` bits.
            FLAGS [0, ACCESS_BITS] = 0,
        }
        /// Q_Key (`AttrMask::Qkey`).
        qkey (0x2C): RW {
            /// Q_Key.
            QKEY [0, 32] = 0,
        }
        /// Source GID index (`AttrMask::Av`).
        sgid_index (0x30): RW {
            /// Index into the GID table.
            INDEX [0, GID_INDEX_BITS] = 0,
        }
        /// Destination MAC bytes 0 and 1 (`AttrMask::Av`).
        dmac_hi (0x34): RW {
            /// MAC bytes 0..2.
            MAC [0, 16] = 0,
        }
        /// Destination MAC bytes 2 to 5 (`AttrMask::Av`).
        dmac_lo (0x38): RW {
            /// MAC bytes 2..6.
            MAC [0, 32] = 0,
        }
        /// Destination GID bytes 0..4 (`AttrMask::Av`; IPv4 as ::ffff:a.b.c.d).
        dgid_w0 (0x40): RW {
            /// GID bytes 0..4.
            WORD [0, 32] = 0,
        }
        /// Destination GID bytes 4..8.
        dgid_w1 (0x44): RW {
            /// GID bytes 4..8.
            WORD [0, 32] = 0,
        }
        /// Destination GID bytes 8..12.
        dgid_w2 (0x48): RW {
            /// GID bytes 8..12.
            WORD [0, 32] = 0,
        }
        /// Destination GID bytes 12..16.
        dgid_w3 (0x4C): RW {
            /// GID bytes 12..16.
            WORD [0, 32] = 0,
        }
        /// Path MTU (`AttrMask::PathMtu`).
        path_mtu (0x50): RW {
            /// IBTA MTU code 1..=5 (256..4096 bytes).
            PMTU [0, PMTU_BITS] = 0,
        }
        /// Local ACK timeout (`AttrMask::Timeout`).
        timeout (0x54): RW {
            /// 4.096 us x 2^TIMEOUT; 0 disables.
            TIMEOUT [0, TIMEOUT_BITS] = 0,
        }
        /// Retry count (`AttrMask::RetryCnt`).
        retry_cnt (0x58): RW {
            /// Retries after a timeout.
            COUNT [0, RETRY_BITS] = 0,
        }
        /// RNR retry count (`AttrMask::RnrRetry`).
        rnr_retry (0x5C): RW {
            /// Retries after an RNR NAK; 7 = forever.
            COUNT [0, RETRY_BITS] = 0,
        }
        /// Receive PSN (`AttrMask::RqPsn`).
        rq_psn (0x60): RW {
            /// Expected PSN of the next request.
            PSN [0, PSN_BITS] = 0,
        }
        /// Initiator depth (`AttrMask::MaxRdAtomic`).
        max_rd_atomic (0x64): RW {
            /// Outstanding READ/atomic requests.
            COUNT [0, RD_ATOMIC_BITS] = 0,
        }
        /// Minimum RNR timer (`AttrMask::MinRnrTimer`).
        min_rnr_timer (0x68): RW {
            /// RNR NAK timer code.
            TIMER [0, RNR_TIMER_BITS] = 0,
        }
        /// Send PSN (`AttrMask::SqPsn`).
        sq_psn (0x6C): RW {
            /// PSN of the next request sent.
            PSN [0, PSN_BITS] = 0,
        }
        /// Responder resources (`AttrMask::MaxDestRdAtomic`).
        max_dest_rd_atomic (0x70): RW {
            /// READ/atomic requests in flight as responder.
            COUNT [0, RD_ATOMIC_BITS] = 0,
        }
        /// Destination QP number (`AttrMask::DestQpn`).
        dest_qpn (0x74): RW {
            /// Remote QPN.
            QPN [0, QPN_BITS] = 0,
        }
        /// Protection domain (`AttrMask::Pd`, Reset to Init only).
        pd (0x78): RW {
            /// PD number (`MR_PD_BITS` bits).
            PD [0, MR_PD_BITS] = 0,
        }
    }

    /// Per-reason counters (32 bits, wrapping): `counter[i]` counts
    /// `Counter` i.
    block ctr (base: 0x0200, size: 0x100, type: 0x0003, version: 1) {
        /// Number of counters.
        ctr_count (0x04): RO {
            /// Counters in this block.
            COUNT [0, 8] = Counter::COUNT,
        }
        /// Counter i (`Counter`).
        counter (0x10, [Counter::COUNT; 4]): RO {
            /// Events counted.
            VALUE [0, 32] = 0,
        }
    }

    /// Memory-region commands (the `mr_tlb` block's command port). The host
    /// writes the command registers, then `doorbell.GO` = 1: the block
    /// copies the registers into one command for `mr_tlb` and sets
    /// `status.BUSY` until the table answers; then `status.ERROR` tells
    /// whether the command was refused (tables unchanged) and `status.SEQ`
    /// counts it. The registers may be rewritten while a command is busy
    /// (it carries its own copy). A doorbell while `BUSY` issues nothing
    /// and sets `status.DROPPED` (cleared by the next doorbell that is
    /// taken). Registers store all 32 bits; a value too wide for the
    /// table (`op` of `MR_OP_BITS` bits; for REGISTER also `pd`, `access`,
    /// `page_shift` of `MR_PD_BITS`, `MR_ACCESS_BITS`, `MR_SHIFT_BITS` bits)
    /// is refused at the doorbell: `ERROR` set, `SEQ` counted, nothing
    /// sent, never truncated.
    block mr (base: 0x0300, size: 0x100, type: 0x0005, version: 1) {
        /// Doorbell.
        doorbell (0x04): WO {
            /// 1 issues the command in the registers below (reads 0).
            GO [0, 1] = 0,
        }
        /// Status of the last command.
        status (0x08): RO {
            /// A command is issued and not answered yet.
            BUSY [0, 1] = 0,
            /// The last answered command was refused, tables unchanged: a
            /// field too wide (see the block), or by `mr_tlb` (index beyond
            /// a table, page shift outside 12..=21, base + length beyond
            /// 2^64, PA of 2^52 or more, INVALIDATE of an entry not valid
            /// under the key's tag).
            ERROR [1, 1] = 0,
            /// A doorbell came while `BUSY` and issued nothing (sticky until
            /// a doorbell is taken).
            DROPPED [2, 1] = 0,
            /// Commands answered since reset (wraps).
            SEQ [16, 16] = 0,
        }
        /// Operation.
        op (0x0C): RW {
            /// `MrOp`.
            OP [0, 32] = 0,
        }
        /// Key (`index << 8 | tag`): REGISTER, DEREGISTER, INVALIDATE.
        key (0x10): RW {
            /// L_Key/R_Key.
            KEY [0, 32] = 0,
        }
        /// Protection domain (REGISTER).
        pd (0x14): RW {
            /// PD number (`MR_PD_BITS` bits).
            PD [0, 32] = 0,
        }
        /// Access flags (REGISTER): roce-wire `mr::Access` bits (local
        /// write 1, remote read 2, remote write 4, remote atomic 8).
        access (0x18): RW {
            /// Flags (`MR_ACCESS_BITS` bits).
            FLAGS [0, 32] = 0,
        }
        /// Region base VA, bits 31:0 (REGISTER).
        va_lo (0x1C): RW {
            /// VA bits 31:0.
            VA [0, 32] = 0,
        }
        /// Region base VA, bits 63:32 (REGISTER).
        va_hi (0x20): RW {
            /// VA bits 63:32.
            VA [0, 32] = 0,
        }
        /// Region length in bytes, bits 31:0 (REGISTER).
        len_lo (0x24): RW {
            /// Length bits 31:0.
            LEN [0, 32] = 0,
        }
        /// Region length in bytes, bits 63:32 (REGISTER).
        len_hi (0x28): RW {
            /// Length bits 63:32.
            LEN [0, 32] = 0,
        }
        /// Page size of the region as a shift, 12..=21 (REGISTER).
        page_shift (0x2C): RW {
            /// log2(page size).
            SHIFT [0, 32] = 0,
        }
        /// REGISTER: the region's first page-table entry; WRITE_PT: the
        /// entry written.
        pt_index (0x30): RW {
            /// Page-table index.
            INDEX [0, 32] = 0,
        }
        /// Physical address of a page, bits 31:0 (WRITE_PT).
        pa_lo (0x34): RW {
            /// PA bits 31:0.
            PA [0, 32] = 0,
        }
        /// Physical address of a page, bits 63:32 (WRITE_PT).
        pa_hi (0x38): RW {
            /// PA bits 63:32.
            PA [0, 32] = 0,
        }
        /// MR table counter i (`MrCounter`): rejects per reason, then TLB
        /// misses; 32 bits, wrapping, cleared by reset.
        counter (0x40, [MrCounter::COUNT; 4]): RO {
            /// Events counted.
            VALUE [0, 32] = 0,
        }
    }

    /// QP context table: context n at `QP_CTX_OFFSET + n * QP_STRIDE`. The
    /// datapath reads a whole context per cycle, registered, the build's
    /// `QP_READ_LATENCY` cycles after the address (2 by default, 1 in the
    /// `csr_bram` / `csr_lutram` builds); the firmware writes it one
    /// register at a time. Fields are packed; the
    /// command mailbox validates values before they get here.
    block qp (base: 0x2_0000, size: 0x2_0000, type: 0x0004, version: 1) {
        /// Contexts this hardware holds.
        qp_count (0x04): RO {
            /// N.
            COUNT [0, 16] = QP_COUNT,
        }
        /// State and type.
        state (QP_CTX_OFFSET, [QP_COUNT; QP_STRIDE]): RW {
            /// `QpState`.
            STATE [0, STATE_BITS] = QpState::Reset as u32,
            /// `QpType`.
            TYPE [4, QP_TYPE_BITS] = QpType::Rc as u32,
        }
        /// Destination QP number.
        dest_qpn (QP_CTX_OFFSET + 0x04, [QP_COUNT; QP_STRIDE]): RW {
            /// Remote QPN.
            QPN [0, QPN_BITS] = 0,
        }
        /// Send PSN.
        sq_psn (QP_CTX_OFFSET + 0x08, [QP_COUNT; QP_STRIDE]): RW {
            /// PSN.
            PSN [0, PSN_BITS] = 0,
        }
        /// Receive PSN.
        rq_psn (QP_CTX_OFFSET + 0x0C, [QP_COUNT; QP_STRIDE]): RW {
            /// PSN.
            PSN [0, PSN_BITS] = 0,
        }
        /// Path: MTU and table indices.
        path (QP_CTX_OFFSET + 0x10, [QP_COUNT; QP_STRIDE]): RW {
            /// IBTA MTU code.
            PMTU [0, PMTU_BITS] = 0,
            /// Source GID index.
            SGID_INDEX [8, GID_INDEX_BITS] = 0,
            /// PKey index.
            PKEY_INDEX [16, PKEY_INDEX_BITS] = 0,
        }
        /// Access flags.
        access (QP_CTX_OFFSET + 0x14, [QP_COUNT; QP_STRIDE]): RW {
            /// `AccessFlag` bits.
            FLAGS [0, ACCESS_BITS] = 0,
        }
        /// Timers and retry counts.
        timers (QP_CTX_OFFSET + 0x18, [QP_COUNT; QP_STRIDE]): RW {
            /// Local ACK timeout exponent.
            TIMEOUT [0, TIMEOUT_BITS] = 0,
            /// Retry count.
            RETRY_CNT [8, RETRY_BITS] = 0,
            /// RNR retry count.
            RNR_RETRY [12, RETRY_BITS] = 0,
            /// Minimum RNR timer code.
            MIN_RNR_TIMER [16, RNR_TIMER_BITS] = 0,
        }
        /// READ/atomic depths.
        rd_atomic (QP_CTX_OFFSET + 0x1C, [QP_COUNT; QP_STRIDE]): RW {
            /// Initiator depth.
            MAX_RD_ATOMIC [0, RD_ATOMIC_BITS] = 0,
            /// Responder resources.
            MAX_DEST_RD_ATOMIC [8, RD_ATOMIC_BITS] = 0,
        }
        /// Q_Key (UD).
        qkey (QP_CTX_OFFSET + 0x20, [QP_COUNT; QP_STRIDE]): RW {
            /// Q_Key.
            QKEY [0, 32] = 0,
        }
        /// Destination MAC bytes 0 and 1.
        dmac_hi (QP_CTX_OFFSET + 0x24, [QP_COUNT; QP_STRIDE]): RW {
            /// MAC bytes 0..2.
            MAC [0, 16] = 0,
        }
        /// Destination MAC bytes 2 to 5.
        dmac_lo (QP_CTX_OFFSET + 0x28, [QP_COUNT; QP_STRIDE]): RW {
            /// MAC bytes 2..6.
            MAC [0, 32] = 0,
        }
        /// Protection domain: memory regions the QP reaches must be in it.
        pd (QP_CTX_OFFSET + 0x2C, [QP_COUNT; QP_STRIDE]): RW {
            /// PD number (`MR_PD_BITS` bits).
            PD [0, MR_PD_BITS] = 0,
        }
        /// Destination GID bytes 0..4.
        dgid_w0 (QP_CTX_OFFSET + 0x30, [QP_COUNT; QP_STRIDE]): RW {
            /// GID bytes 0..4.
            WORD [0, 32] = 0,
        }
        /// Destination GID bytes 4..8.
        dgid_w1 (QP_CTX_OFFSET + 0x34, [QP_COUNT; QP_STRIDE]): RW {
            /// GID bytes 4..8.
            WORD [0, 32] = 0,
        }
        /// Destination GID bytes 8..12.
        dgid_w2 (QP_CTX_OFFSET + 0x38, [QP_COUNT; QP_STRIDE]): RW {
            /// GID bytes 8..12.
            WORD [0, 32] = 0,
        }
        /// Destination GID bytes 12..16.
        dgid_w3 (QP_CTX_OFFSET + 0x3C, [QP_COUNT; QP_STRIDE]): RW {
            /// GID bytes 12..16.
            WORD [0, 32] = 0,
        }
    }
}

/// Bits of a ring's `LOG_SIZE`: holds [`queue::LOG_SIZE_MAX`].
pub const LOG_SIZE_BITS: u8 = bits_for(queue::LOG_SIZE_MAX);
/// Bits of a ring index (`queue::INDEX_BITS`).
pub const INDEX_BITS: u8 = queue::INDEX_BITS;
/// Bits of a CQ number.
pub const CQN_BITS: u8 = 16;

register_map! {
    HOST_BLOCKS;

    /// Doorbells (issue 36 §1), one page apart from the ring contexts so a
    /// driver may map them alone. Indices are free-running 16-bit counters
    /// (see `queue`); a write rings, a read returns the last value written.
    /// A producer index more than the ring's size ahead of the hardware's
    /// consumer index is a doorbell beyond the ring: the QP goes to Error.
    /// Served by `host_if`, not by the `csr` block (which answers SLVERR
    /// here until the NIC top routes this range).
    block db (base: 0x0_8000, size: 0x8000, type: 0x0007, version: 1) {
        /// Send-queue producer index of QP n: WQEs below it are posted.
        sq_pi (0x1000, [QP_COUNT; QP_DB_STRIDE]): RW {
            /// Producer index (mod 2^16).
            PI [0, INDEX_BITS] = 0,
        }
        /// Receive-queue producer index of QP n.
        rq_pi (0x1004, [QP_COUNT; QP_DB_STRIDE]): RW {
            /// Producer index (mod 2^16).
            PI [0, INDEX_BITS] = 0,
        }
        /// Consumer index of CQ n: the host has taken every CQE below it.
        /// The hardware writes a CQE only while the ring has room (else
        /// the CQ goes to Error: `hq.cq_status.ERROR`).
        cq_ci (0x4000, [CQ_COUNT; CQ_DB_STRIDE]): RW {
            /// Consumer index (mod 2^16).
            CI [0, INDEX_BITS] = 0,
        }
        /// Arm CQ n: the event line fires once at the next CQE written
        /// (`ibv_req_notify_cq`), then the CQ is disarmed. If a CQE is
        /// already past `cq_ci` when armed, it fires at once.
        cq_arm (0x4004, [CQ_COUNT; CQ_DB_STRIDE]): WO {
            /// 1 arms.
            ARM [0, 1] = 0,
            /// Fire only for a CQE of a solicited receive or one in error
            /// (`solicited_only`).
            SOLICITED [1, 1] = 0,
        }
    }

    /// Host queue contexts (issue 36 §1): per QP its send and receive
    /// rings and CQs, per CQ its ring. A ring holds `2^LOG_SIZE` entries
    /// (`SWQE_SIZE`, `RWQE_SIZE`, `CQE_SIZE` bytes) at a base aligned to
    /// the entry size; formats in the `queue` tables. Written while the QP
    /// is in Reset (CQs: before their first QP leaves Reset). Served by
    /// `host_if`, not by the `csr` block.
    block hq (base: 0x1_0000, size: 0x1_0000, type: 0x0006, version: 1) {
        /// Queue capabilities of this build.
        caps (0x04): RO {
            /// SGEs per WQE, at most.
            MAX_SGE [0, 4] = queue::MAX_SGE,
            /// log2 of ring entries, at most.
            LOG_SIZE_MAX [4, 4] = queue::LOG_SIZE_MAX,
            /// Inline payload bytes per send WQE, at most.
            MAX_INLINE [8, 8] = queue::MAX_INLINE,
            /// log2 of `SWQE_SIZE`.
            SWQE_LOG [16, 4] = queue::SWQE_SIZE.trailing_zeros(),
            /// log2 of `RWQE_SIZE`.
            RWQE_LOG [20, 4] = queue::RWQE_SIZE.trailing_zeros(),
            /// log2 of `CQE_SIZE`.
            CQE_LOG [24, 4] = queue::CQE_SIZE.trailing_zeros(),
        }
        /// CQs this hardware holds.
        cq_count (0x08): RO {
            /// Number of CQs.
            COUNT [0, 16] = CQ_COUNT,
        }
        /// CQ n ring base, bits 31:0.
        cq_base_lo (0x4000, [CQ_COUNT; CQ_CTX_STRIDE]): RW {
            /// Ring base bits 31:0 (a multiple of `CQE_SIZE`).
            BASE [0, 32] = 0,
        }
        /// CQ n ring base, bits 63:32.
        cq_base_hi (0x4004, [CQ_COUNT; CQ_CTX_STRIDE]): RW {
            /// Ring base bits 63:32.
            BASE [0, 32] = 0,
        }
        /// CQ n ring size.
        cq_cfg (0x4008, [CQ_COUNT; CQ_CTX_STRIDE]): RW {
            /// log2 of the CQEs in the ring.
            LOG_SIZE [0, LOG_SIZE_BITS] = 0,
        }
        /// CQ n state, as the hardware sees it.
        cq_status (0x400C, [CQ_COUNT; CQ_CTX_STRIDE]): RO {
            /// Producer index: CQEs written (mod 2^16).
            PI [0, INDEX_BITS] = 0,
            /// Armed (`db.cq_arm`), event not fired yet.
            ARMED [16, 1] = 0,
            /// Armed for solicited CQEs only.
            SOLICITED [17, 1] = 0,
            /// Overrun: a CQE found the ring full; nothing more is written.
            ERROR [18, 1] = 0,
        }
        /// QP n send ring base, bits 31:0.
        sq_base_lo (0x8000, [QP_COUNT; QP_RING_STRIDE]): RW {
            /// Ring base bits 31:0 (a multiple of `SWQE_SIZE`).
            BASE [0, 32] = 0,
        }
        /// QP n send ring base, bits 63:32.
        sq_base_hi (0x8004, [QP_COUNT; QP_RING_STRIDE]): RW {
            /// Ring base bits 63:32.
            BASE [0, 32] = 0,
        }
        /// QP n receive ring base, bits 31:0.
        rq_base_lo (0x8008, [QP_COUNT; QP_RING_STRIDE]): RW {
            /// Ring base bits 31:0 (a multiple of `RWQE_SIZE`).
            BASE [0, 32] = 0,
        }
        /// QP n receive ring base, bits 63:32.
        rq_base_hi (0x800C, [QP_COUNT; QP_RING_STRIDE]): RW {
            /// Ring base bits 63:32.
            BASE [0, 32] = 0,
        }
        /// QP n send ring size and send CQ.
        sq_cfg (0x8010, [QP_COUNT; QP_RING_STRIDE]): RW {
            /// log2 of the WQEs in the ring.
            LOG_SIZE [0, LOG_SIZE_BITS] = 0,
            /// CQ of send completions (below `cq_count`).
            CQN [16, CQN_BITS] = 0,
        }
        /// QP n receive ring size and receive CQ.
        rq_cfg (0x8014, [QP_COUNT; QP_RING_STRIDE]): RW {
            /// log2 of the WQEs in the ring.
            LOG_SIZE [0, LOG_SIZE_BITS] = 0,
            /// CQ of receive completions (below `cq_count`).
            CQN [16, CQN_BITS] = 0,
        }
        /// QP n send ring consumer index, as the hardware sees it.
        sq_ci (0x8018, [QP_COUNT; QP_RING_STRIDE]): RO {
            /// WQEs completed or flushed (mod 2^16).
            CI [0, INDEX_BITS] = 0,
        }
        /// QP n receive ring consumer index, as the hardware sees it.
        rq_ci (0x801C, [QP_COUNT; QP_RING_STRIDE]): RO {
            /// WQEs consumed (mod 2^16).
            CI [0, INDEX_BITS] = 0,
        }
    }
}

/// The whole CSR window for generators and docs, in address order: the
/// `csr` block's [`BLOCKS`] and `host_if`'s [`HOST_BLOCKS`].
pub const MAP: &[Block] = &[
    cfg::BLOCK,
    mbox::BLOCK,
    ctr::BLOCK,
    mr::BLOCK,
    db::BLOCK,
    hq::BLOCK,
    qp::BLOCK,
];
