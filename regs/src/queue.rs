//! Host queue formats (issue 36 §1): the send WQE, the receive WQE and the
//! CQE as they sit in host memory, and the code tables their fields hold.
//! Defined once here; the hardware (`host_if`), the host library and the
//! generated C header and docs (`roce-gen regs`) all read these tables.
//!
//! **Byte order.** Every entry is little-endian: a field of `bytes` bytes
//! at `offset` is the little-endian integer in those bytes, and a bit field
//! sits at `lsb` inside it. On an AXI data bus byte `k` of a beat is
//! `data[8k+7:8k]`, so hardware reads an entry without swapping bytes.
//! (Immediate data is the 32-bit number the wire's ImmDt carries, its first
//! wire byte in bits 31:24; ibverbs' `imm_data` is that number in network
//! order, `htonl` of this field.)
//!
//! **Rings.** A queue is a ring of `2^LOG_SIZE` entries at a base aligned to
//! its entry size (an entry never crosses a 4 KiB page, so one AXI burst
//! fetches it). Producer and consumer indices are free-running 16-bit
//! counters; the slot of index `i` is `i mod 2^LOG_SIZE`, so `LOG_SIZE` is
//! at most [`LOG_SIZE_MAX`] and `pi - ci` (mod 2^16) is the fill.
//!
//! **CQE ownership: a phase bit** (NVMe's convention, not mlx5's owner bit).
//! The hardware writes `PHASE` = 1 on its first pass over a CQ ring, 0 on
//! the second, and so on (the inverse of bit `LOG_SIZE` of its producer
//! counter); the host takes the CQE at consumer index `ci` when `PHASE` =
//! `1 ^ ((ci >> LOG_SIZE) & 1)`. Why: with mlx5's owner bit the first pass
//! writes 0, so the driver must stamp every CQE as hardware-owned before
//! arming the ring; with a phase bit a zeroed ring (what `calloc` or a fresh
//! DMA allocation gives) is already empty. Either way the host polls without
//! reading a producer index. `PHASE` is in the CQE's last byte so a writer
//! that stores in ascending address order makes it visible last.
//!
//! Code tables take ibverbs' values (rdma-core `verbs.h`: `ibv_wr_opcode`,
//! `ibv_send_flags`, `ibv_wc_status`, `ibv_wc_opcode`, `ibv_wc_flags`), so
//! a host library passes them through unchanged.

use crate::model::EnumDesc;

/// SGEs a send or receive WQE holds, at most.
pub const MAX_SGE: u32 = 4;
/// Bytes of inline data a send WQE holds, at most (its SGE area).
pub const MAX_INLINE: u32 = 64;
/// Bytes of a send WQE.
pub const SWQE_SIZE: u32 = 128;
/// Bytes of a receive WQE.
pub const RWQE_SIZE: u32 = 128;
/// Bytes of a CQE.
pub const CQE_SIZE: u32 = 32;
/// Bytes of an SGE in a WQE.
pub const SGE_SIZE: u32 = 16;
/// Largest `LOG_SIZE` of a ring: indices are 16-bit free-running counters.
pub const LOG_SIZE_MAX: u32 = 15;
/// Bits of a ring index (producer, consumer, `CQE.WQE_INDEX`).
pub const INDEX_BITS: u8 = 16;

/// One field of a queue entry: bits `lsb..lsb + width` of the
/// little-endian integer of `bytes` bytes at byte `offset`; with `count` >
/// 1, element `i` is `stride` bytes further on (SGE arrays).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QField {
    /// Name (UPPER case, as register fields).
    pub name: &'static str,
    /// Byte offset of element 0 in the entry.
    pub offset: u16,
    /// Bytes of the integer holding the field: 1, 2, 4 or 8, and `offset`
    /// is a multiple of it (naturally aligned).
    pub bytes: u8,
    /// Least significant bit inside that integer.
    pub lsb: u8,
    /// Width in bits.
    pub width: u8,
    /// Number of elements.
    pub count: u8,
    /// Bytes between elements (0 when `count` is 1).
    pub stride: u16,
    pub doc: &'static str,
}

impl QField {
    const fn new(name: &'static str, offset: u16, bytes: u8, doc: &'static str) -> QField {
        QField {
            name,
            offset,
            bytes,
            lsb: 0,
            width: bytes * 8,
            count: 1,
            stride: 0,
            doc,
        }
    }

    const fn bits(self, lsb: u8, width: u8) -> QField {
        QField { lsb, width, ..self }
    }

    const fn array(self, count: u8, stride: u16) -> QField {
        QField {
            count,
            stride,
            ..self
        }
    }

    /// The largest value the field holds.
    pub const fn max(self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }

    /// Byte offset of element `i`.
    pub const fn offset_of(self, i: usize) -> usize {
        self.offset as usize + i * self.stride as usize
    }

    /// Bit offset of element `i`'s least significant bit in the entry (the
    /// entry as one little-endian number: what hardware slices).
    pub const fn bit_of(self, i: usize) -> usize {
        self.offset_of(i) * 8 + self.lsb as usize
    }

    /// Element `i` of the field in `entry`.
    pub fn get_at(self, entry: &[u8], i: usize) -> u64 {
        let at = self.offset_of(i);
        let mut word = [0u8; 8];
        word[..self.bytes as usize].copy_from_slice(&entry[at..at + self.bytes as usize]);
        (u64::from_le_bytes(word) >> self.lsb) & self.max()
    }

    /// Element 0 of the field in `entry`.
    pub fn get(self, entry: &[u8]) -> u64 {
        self.get_at(entry, 0)
    }

    /// Set element `i` of the field to `value` (bits beyond the width are
    /// dropped); the other bits of the entry stay.
    pub fn set_at(self, entry: &mut [u8], i: usize, value: u64) {
        let at = self.offset_of(i);
        let n = self.bytes as usize;
        let mut word = [0u8; 8];
        word[..n].copy_from_slice(&entry[at..at + n]);
        let mut w = u64::from_le_bytes(word);
        let mask = self.max() << self.lsb;
        w = (w & !mask) | ((value & self.max()) << self.lsb);
        entry[at..at + n].copy_from_slice(&w.to_le_bytes()[..n]);
    }

    /// Set element 0.
    pub fn set(self, entry: &mut [u8], value: u64) {
        self.set_at(entry, 0, value)
    }
}

/// A queue entry format: its size and its fields, in offset order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueFormat {
    /// Name (lower case).
    pub name: &'static str,
    /// Bytes of one entry (a power of two).
    pub size: u32,
    pub fields: &'static [QField],
    /// Fields that reuse other fields' bytes under a flag (the send WQE's
    /// `INLINE_DATA` over its SGEs with `inline`).
    pub overlays: &'static [QField],
    pub doc: &'static str,
}

impl QueueFormat {
    /// The field called `name` (overlays included).
    pub fn field(&self, name: &str) -> Option<&'static QField> {
        self.fields
            .iter()
            .chain(self.overlays)
            .find(|f| f.name == name)
    }
}

value_enum! {
    /// Send WQE opcode (`SWQE.OPCODE`): ibverbs' `enum ibv_wr_opcode`
    /// values. Others (LOCAL_INV 7, BIND_MW 8, TSO 10, ...) complete with
    /// `loc-qp-op-err`.
    WrOpcode("wr_opcode", flags: false) {
        /// RDMA WRITE (`IBV_WR_RDMA_WRITE`).
        RdmaWrite = 0 => "rdma-write",
        /// RDMA WRITE with immediate (`IBV_WR_RDMA_WRITE_WITH_IMM`).
        RdmaWriteWithImm = 1 => "rdma-write-with-imm",
        /// SEND (`IBV_WR_SEND`).
        Send = 2 => "send",
        /// SEND with immediate (`IBV_WR_SEND_WITH_IMM`).
        SendWithImm = 3 => "send-with-imm",
        /// RDMA READ (`IBV_WR_RDMA_READ`).
        RdmaRead = 4 => "rdma-read",
        /// CMP & SWAP (`IBV_WR_ATOMIC_CMP_AND_SWP`).
        AtomicCmpAndSwp = 5 => "atomic-cmp-and-swp",
        /// FETCH & ADD (`IBV_WR_ATOMIC_FETCH_AND_ADD`).
        AtomicFetchAndAdd = 6 => "atomic-fetch-and-add",
        /// SEND with invalidate (`IBV_WR_SEND_WITH_INV`).
        SendWithInv = 9 => "send-with-inv",
    }
}

value_enum! {
    /// Send WQE flags (`SWQE.FLAGS`): ibverbs' `enum ibv_send_flags` bits.
    SendFlag("send_flag", flags: true) {
        /// Wait for earlier READs and atomics first (`IBV_SEND_FENCE`).
        Fence = 1 << 0 => "fence",
        /// Write a CQE on success too (`IBV_SEND_SIGNALED`); errors always
        /// complete.
        Signaled = 1 << 1 => "signaled",
        /// Solicited event bit on the last packet (`IBV_SEND_SOLICITED`).
        Solicited = 1 << 2 => "solicited",
        /// The payload is in the WQE (`INLINE_LEN` bytes in the SGE area),
        /// not in SGEs (`IBV_SEND_INLINE`).
        Inline = 1 << 3 => "inline",
    }
}

value_enum! {
    /// Completion status (`CQE.STATUS`): ibverbs' `enum ibv_wc_status`
    /// values (the ones this NIC produces).
    WcStatus("wc_status", flags: false) {
        /// Success (`IBV_WC_SUCCESS`).
        Success = 0 => "success",
        /// A receive buffer too small, or a send longer than 2^31
        /// (`IBV_WC_LOC_LEN_ERR`).
        LocLenErr = 1 => "loc-len-err",
        /// A malformed WQE: unknown opcode, more SGEs than `MAX_SGE`,
        /// inline data beyond `MAX_INLINE` (`IBV_WC_LOC_QP_OP_ERR`).
        LocQpOpErr = 2 => "loc-qp-op-err",
        /// An SGE failed its lkey, PD, access or bounds check
        /// (`IBV_WC_LOC_PROT_ERR`).
        LocProtErr = 4 => "loc-prot-err",
        /// Flushed: the QP went to Error before this WQE ran
        /// (`IBV_WC_WR_FLUSH_ERR`).
        WrFlushErr = 5 => "wr-flush-err",
        /// A DMA error response while serving the WQE
        /// (`IBV_WC_LOC_ACCESS_ERR`).
        LocAccessErr = 8 => "loc-access-err",
        /// The responder answered invalid request (`IBV_WC_REM_INV_REQ_ERR`).
        RemInvReqErr = 9 => "rem-inv-req-err",
        /// The responder answered remote access error
        /// (`IBV_WC_REM_ACCESS_ERR`).
        RemAccessErr = 10 => "rem-access-err",
        /// The responder answered remote operational error
        /// (`IBV_WC_REM_OP_ERR`).
        RemOpErr = 11 => "rem-op-err",
        /// `retry_cnt` exhausted (`IBV_WC_RETRY_EXC_ERR`).
        RetryExcErr = 12 => "retry-exc-err",
        /// `rnr_retry` exhausted (`IBV_WC_RNR_RETRY_EXC_ERR`).
        RnrRetryExcErr = 13 => "rnr-retry-exc-err",
        /// Any other error (`IBV_WC_GENERAL_ERR`).
        GeneralErr = 21 => "general-err",
    }
}

value_enum! {
    /// Completion opcode (`CQE.OPCODE`): ibverbs' `enum ibv_wc_opcode`
    /// values; receive completions have bit 7 set.
    WcOpcode("wc_opcode", flags: false) {
        /// A SEND (any kind) completed (`IBV_WC_SEND`).
        Send = 0 => "send",
        /// An RDMA WRITE (with or without immediate) completed
        /// (`IBV_WC_RDMA_WRITE`).
        RdmaWrite = 1 => "rdma-write",
        /// An RDMA READ completed (`IBV_WC_RDMA_READ`).
        RdmaRead = 2 => "rdma-read",
        /// A CMP & SWAP completed (`IBV_WC_COMP_SWAP`).
        CompSwap = 3 => "comp-swap",
        /// A FETCH & ADD completed (`IBV_WC_FETCH_ADD`).
        FetchAdd = 4 => "fetch-add",
        /// A SEND was received (`IBV_WC_RECV`).
        Recv = 128 => "recv",
        /// An RDMA WRITE with immediate was received
        /// (`IBV_WC_RECV_RDMA_WITH_IMM`).
        RecvRdmaWithImm = 129 => "recv-rdma-with-imm",
    }
}

value_enum! {
    /// Completion flags (`CQE.FLAGS`): ibverbs' `enum ibv_wc_flags` bits.
    WcFlag("wc_flag", flags: true) {
        /// UD receive: the first 40 bytes of the buffer hold a GRH
        /// (`IBV_WC_GRH`).
        Grh = 1 << 0 => "grh",
        /// `IMM_INV` holds immediate data (`IBV_WC_WITH_IMM`).
        WithImm = 1 << 1 => "with-imm",
        /// `IMM_INV` holds the R_Key a SEND with invalidate invalidated
        /// (`IBV_WC_WITH_INV`).
        WithInv = 1 << 3 => "with-inv",
    }
}

/// The queue enums, for generators.
pub const QUEUE_ENUMS: &[EnumDesc] = &[
    WrOpcode::DESC,
    SendFlag::DESC,
    WcStatus::DESC,
    WcOpcode::DESC,
    WcFlag::DESC,
];

/// Fields of an SGE (ibverbs' `struct ibv_sge` order), as used in both WQEs.
macro_rules! sge_fields {
    ($at:expr) => {
        /// SGE i: start address (a VA inside the lkey's region).
        pub const SGE_ADDR: QField = QField::new(
            "SGE_ADDR",
            $at,
            8,
            " SGE i: start address (a VA in the lkey's region).",
        )
        .array(MAX_SGE as u8, SGE_SIZE as u16);
        /// SGE i: length in bytes.
        pub const SGE_LENGTH: QField =
            QField::new("SGE_LENGTH", $at + 8, 4, " SGE i: length in bytes.")
                .array(MAX_SGE as u8, SGE_SIZE as u16);
        /// SGE i: local key, checked through `mr_tlb`.
        pub const SGE_LKEY: QField = QField::new(
            "SGE_LKEY",
            $at + 12,
            4,
            " SGE i: L_Key, checked through `mr_tlb` (PD, local access, bounds).",
        )
        .array(MAX_SGE as u8, SGE_SIZE as u16);
    };
}

/// The send WQE: [`SWQE_SIZE`] bytes per entry of a send queue.
pub mod swqe {
    use super::*;

    /// Operation (`WrOpcode`).
    pub const OPCODE: QField = QField::new("OPCODE", 0x00, 1, " Operation (`wr_opcode`).");
    /// `SendFlag` bits.
    pub const FLAGS: QField = QField::new("FLAGS", 0x01, 1, " `send_flag` bits.");
    /// SGEs used, 0..=`MAX_SGE` (ignored with `INLINE`).
    pub const NUM_SGE: QField = QField::new(
        "NUM_SGE",
        0x02,
        1,
        " SGEs used, 0..=MAX_SGE (ignored with `inline`).",
    );
    /// Bytes of inline data in the SGE area, 0..=`MAX_INLINE` (with `INLINE`).
    pub const INLINE_LEN: QField = QField::new(
        "INLINE_LEN",
        0x03,
        1,
        " With `inline`: bytes of payload at INLINE_DATA, 0..=MAX_INLINE.",
    );
    /// Immediate data (`*_WITH_IMM`) or the R_Key to invalidate (`SEND_WITH_INV`).
    pub const IMM_INV: QField = QField::new(
        "IMM_INV",
        0x04,
        4,
        " Immediate data (`*-with-imm`) or the R_Key to invalidate (`send-with-inv`).",
    );
    /// Returned in the CQE.
    pub const WR_ID: QField = QField::new("WR_ID", 0x08, 8, " Returned in the CQE.");
    /// Remote VA (WRITE, READ, atomics: 8-byte aligned).
    pub const REMOTE_ADDR: QField = QField::new(
        "REMOTE_ADDR",
        0x10,
        8,
        " Remote VA (WRITE, READ; atomics: 8-byte aligned).",
    );
    /// Remote key (WRITE, READ, atomics).
    pub const RKEY: QField = QField::new("RKEY", 0x18, 4, " R_Key (WRITE, READ, atomics).");
    /// UD: destination QP number.
    pub const UD_QPN: QField =
        QField::new("UD_QPN", 0x1C, 4, " UD: destination QPN (24 bits).").bits(0, 24);
    /// Atomics: the compare value (CMP & SWAP) or the addend (FETCH & ADD).
    pub const COMPARE_ADD: QField = QField::new(
        "COMPARE_ADD",
        0x20,
        8,
        " Atomics: compare value (CMP & SWAP) or addend (FETCH & ADD).",
    );
    /// CMP & SWAP: the value stored when equal.
    pub const SWAP: QField = QField::new("SWAP", 0x28, 8, " CMP & SWAP: value stored when equal.");
    /// UD: Q_Key; bit 31 set sends the QP's own Q_Key.
    pub const UD_QKEY: QField = QField::new(
        "UD_QKEY",
        0x30,
        4,
        " UD: Q_Key (bit 31 set: the QP's own Q_Key).",
    );
    sge_fields!(0x40);
    /// With `INLINE`: the payload, `INLINE_LEN` bytes over the SGE area.
    pub const INLINE_DATA: QField = QField::new(
        "INLINE_DATA",
        0x40,
        1,
        " With `inline` (overlays the SGEs): the payload bytes, INLINE_LEN of them.",
    )
    .array(MAX_INLINE as u8, 1);

    /// Bytes 0x34..0x40 are reserved (write 0).
    pub const FORMAT: QueueFormat = QueueFormat {
        name: "swqe",
        size: SWQE_SIZE,
        fields: &[
            OPCODE,
            FLAGS,
            NUM_SGE,
            INLINE_LEN,
            IMM_INV,
            WR_ID,
            REMOTE_ADDR,
            RKEY,
            UD_QPN,
            COMPARE_ADD,
            SWAP,
            UD_QKEY,
            SGE_ADDR,
            SGE_LENGTH,
            SGE_LKEY,
        ],
        overlays: &[INLINE_DATA],
        doc:
            " Send WQE, one per send-queue slot. Bytes 0x34..0x40 are reserved (write 0). \
              With `inline` the SGE area 0x40..0x80 holds INLINE_LEN payload bytes instead of SGEs.",
    };
}

/// The receive WQE: [`RWQE_SIZE`] bytes per entry of a receive queue.
pub mod rwqe {
    use super::*;

    /// Returned in the CQE.
    pub const WR_ID: QField = QField::new("WR_ID", 0x00, 8, " Returned in the CQE.");
    /// SGEs used, 0..=`MAX_SGE`.
    pub const NUM_SGE: QField = QField::new("NUM_SGE", 0x08, 1, " SGEs used, 0..=MAX_SGE.");
    sge_fields!(0x10);

    /// The format.
    pub const FORMAT: QueueFormat = QueueFormat {
        name: "rwqe",
        size: RWQE_SIZE,
        fields: &[WR_ID, NUM_SGE, SGE_ADDR, SGE_LENGTH, SGE_LKEY],
        overlays: &[],
        doc: " Receive WQE, one per receive-queue slot: where a received SEND's payload lands, \
              SGE after SGE. Bytes 0x09..0x10 and 0x50..0x80 are reserved (write 0).",
    };
}

/// The CQE: [`CQE_SIZE`] bytes per entry of a completion queue.
pub mod cqe {
    use super::*;

    /// The completed WQE's `WR_ID`.
    pub const WR_ID: QField = QField::new("WR_ID", 0x00, 8, " The completed WQE's WR_ID.");
    /// Bytes: a receive's bytes received; a READ's or atomic's bytes landed.
    pub const BYTE_LEN: QField = QField::new(
        "BYTE_LEN",
        0x08,
        4,
        " Bytes received (receive), or the message length (send side).",
    );
    /// Immediate data (`WITH_IMM`) or the invalidated R_Key (`WITH_INV`).
    pub const IMM_INV: QField = QField::new(
        "IMM_INV",
        0x0C,
        4,
        " Immediate data (flag `with-imm`) or the invalidated R_Key (flag `with-inv`).",
    );
    /// The local QP number.
    pub const QPN: QField = QField::new("QPN", 0x10, 4, " Local QPN.").bits(0, 24);
    /// UD receive: the sender's QP number.
    pub const SRC_QP: QField =
        QField::new("SRC_QP", 0x14, 4, " UD receive: the sender's QPN.").bits(0, 24);
    /// The completed WQE's ring index (mod 2^16): the queue's consumer
    /// index after it is this plus one, also past unsignaled WQEs.
    pub const WQE_INDEX: QField = QField::new(
        "WQE_INDEX",
        0x18,
        2,
        " The completed WQE's ring index (mod 2^16); every earlier WQE of its queue is done too.",
    );
    /// `WcStatus`.
    pub const STATUS: QField = QField::new("STATUS", 0x1A, 1, " `wc_status`.");
    /// `WcOpcode` (valid with any status for send completions; receive
    /// completions in error carry `recv`).
    pub const OPCODE: QField = QField::new("OPCODE", 0x1B, 1, " `wc_opcode`.");
    /// `WcFlag` bits.
    pub const FLAGS: QField = QField::new("FLAGS", 0x1C, 1, " `wc_flag` bits.");
    /// Phase: 1 on the hardware's first pass over the ring, then alternating.
    pub const PHASE: QField = QField::new(
        "PHASE",
        0x1F,
        1,
        " Phase bit: 1 on the hardware's first pass over the ring, 0 on the second, ...; \
          the host owns the CQE at index ci when PHASE = 1 ^ ((ci >> LOG_SIZE) & 1).",
    )
    .bits(0, 1);

    /// The format.
    pub const FORMAT: QueueFormat = QueueFormat {
        name: "cqe",
        size: CQE_SIZE,
        fields: &[
            WR_ID, BYTE_LEN, IMM_INV, QPN, SRC_QP, WQE_INDEX, STATUS, OPCODE, FLAGS, PHASE,
        ],
        overlays: &[],
        doc: " Completion queue entry. Bytes 0x1D..0x1F and bits 7:1 of 0x1F are reserved (0).",
    };

    /// The phase a CQE written at producer index `pi` of a ring of
    /// `2^log_size` entries carries (and the host expects at `ci` = `pi`).
    pub const fn phase(pi: u32, log_size: u32) -> u8 {
        (1 ^ ((pi >> log_size) & 1)) as u8
    }
}

/// Ring index arithmetic shared by the hardware model, the host library
/// and tests: free-running 16-bit indices over `2^log_size` slots.
pub mod ring {
    use super::INDEX_BITS;

    const MASK: u32 = (1 << INDEX_BITS) - 1;

    /// The slot index `i` occupies.
    pub const fn slot(i: u32, log_size: u32) -> u32 {
        i & ((1 << log_size) - 1)
    }

    /// Entries between consumer `ci` and producer `pi` (mod 2^16).
    pub const fn fill(pi: u32, ci: u32) -> u32 {
        pi.wrapping_sub(ci) & MASK
    }

    /// Whether a producer at `pi` may post one more entry.
    pub const fn has_room(pi: u32, ci: u32, log_size: u32) -> bool {
        fill(pi, ci) < (1 << log_size)
    }

    /// Whether a doorbell of `pi` is beyond the ring: more entries posted
    /// than the ring holds past the hardware's consumer `ci`.
    pub const fn beyond(pi: u32, ci: u32, log_size: u32) -> bool {
        fill(pi, ci) > (1 << log_size)
    }

    /// Index `i` plus one (mod 2^16).
    pub const fn next(i: u32) -> u32 {
        (i + 1) & MASK
    }
}

/// Every format, for generators.
pub const FORMATS: &[QueueFormat] = &[swqe::FORMAT, rwqe::FORMAT, cqe::FORMAT];

/// A scatter/gather element (ibverbs' `struct ibv_sge`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Sge {
    pub addr: u64,
    pub length: u32,
    pub lkey: u32,
}

/// A send WQE's payload: SGEs or inline bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Payload {
    /// `num` SGEs (the rest are zero).
    Sgl {
        num: u8,
        sge: [Sge; MAX_SGE as usize],
    },
    /// `len` inline bytes (the rest are zero).
    Inline {
        len: u8,
        data: [u8; MAX_INLINE as usize],
    },
}

/// A send WQE, unpacked. The opcode stays a raw byte so a bad one round
/// trips (the hardware completes it with `loc-qp-op-err`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SendWqe {
    /// `WrOpcode` value.
    pub opcode: u8,
    /// `SendFlag` bits other than `inline` (that one follows `payload`).
    pub flags: u8,
    pub imm_inv: u32,
    pub wr_id: u64,
    pub remote_addr: u64,
    pub rkey: u32,
    pub ud_qpn: u32,
    pub compare_add: u64,
    pub swap: u64,
    pub ud_qkey: u32,
    pub payload: Payload,
}

impl SendWqe {
    /// The entry's bytes.
    pub fn pack(&self) -> [u8; SWQE_SIZE as usize] {
        use swqe::*;
        let mut e = [0u8; SWQE_SIZE as usize];
        OPCODE.set(&mut e, self.opcode.into());
        let inline = SendFlag::Inline.value() as u8;
        WR_ID.set(&mut e, self.wr_id);
        IMM_INV.set(&mut e, self.imm_inv.into());
        REMOTE_ADDR.set(&mut e, self.remote_addr);
        RKEY.set(&mut e, self.rkey.into());
        UD_QPN.set(&mut e, self.ud_qpn.into());
        COMPARE_ADD.set(&mut e, self.compare_add);
        SWAP.set(&mut e, self.swap);
        UD_QKEY.set(&mut e, self.ud_qkey.into());
        match &self.payload {
            Payload::Sgl { num, sge } => {
                FLAGS.set(&mut e, (self.flags & !inline).into());
                NUM_SGE.set(&mut e, (*num).into());
                put_sgl(&mut e, SGE_ADDR, SGE_LENGTH, SGE_LKEY, sge);
            }
            Payload::Inline { len, data } => {
                FLAGS.set(&mut e, (self.flags | inline).into());
                INLINE_LEN.set(&mut e, (*len).into());
                let at = INLINE_DATA.offset as usize;
                e[at..at + MAX_INLINE as usize].copy_from_slice(data);
            }
        }
        e
    }

    /// The WQE in `e` (at least [`SWQE_SIZE`] bytes).
    pub fn unpack(e: &[u8]) -> SendWqe {
        use swqe::*;
        let flags = FLAGS.get(e) as u8;
        let inline = SendFlag::Inline.value() as u8;
        let payload = if flags & inline != 0 {
            let at = INLINE_DATA.offset as usize;
            let mut data = [0u8; MAX_INLINE as usize];
            data.copy_from_slice(&e[at..at + MAX_INLINE as usize]);
            Payload::Inline {
                len: INLINE_LEN.get(e) as u8,
                data,
            }
        } else {
            Payload::Sgl {
                num: NUM_SGE.get(e) as u8,
                sge: get_sgl(e, SGE_ADDR, SGE_LENGTH, SGE_LKEY),
            }
        };
        SendWqe {
            opcode: OPCODE.get(e) as u8,
            flags: flags & !inline,
            imm_inv: IMM_INV.get(e) as u32,
            wr_id: WR_ID.get(e),
            remote_addr: REMOTE_ADDR.get(e),
            rkey: RKEY.get(e) as u32,
            ud_qpn: UD_QPN.get(e) as u32,
            compare_add: COMPARE_ADD.get(e),
            swap: SWAP.get(e),
            ud_qkey: UD_QKEY.get(e) as u32,
            payload,
        }
    }
}

/// A receive WQE, unpacked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RecvWqe {
    pub wr_id: u64,
    /// SGEs used.
    pub num_sge: u8,
    pub sge: [Sge; MAX_SGE as usize],
}

impl RecvWqe {
    /// The entry's bytes.
    pub fn pack(&self) -> [u8; RWQE_SIZE as usize] {
        use rwqe::*;
        let mut e = [0u8; RWQE_SIZE as usize];
        WR_ID.set(&mut e, self.wr_id);
        NUM_SGE.set(&mut e, self.num_sge.into());
        put_sgl(&mut e, SGE_ADDR, SGE_LENGTH, SGE_LKEY, &self.sge);
        e
    }

    /// The WQE in `e` (at least [`RWQE_SIZE`] bytes).
    pub fn unpack(e: &[u8]) -> RecvWqe {
        use rwqe::*;
        RecvWqe {
            wr_id: WR_ID.get(e),
            num_sge: NUM_SGE.get(e) as u8,
            sge: get_sgl(e, SGE_ADDR, SGE_LENGTH, SGE_LKEY),
        }
    }
}

/// A CQE, unpacked. Status and opcode stay raw bytes (`WcStatus`,
/// `WcOpcode` values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Cqe {
    pub wr_id: u64,
    pub byte_len: u32,
    pub imm_inv: u32,
    pub qpn: u32,
    pub src_qp: u32,
    pub wqe_index: u16,
    pub status: u8,
    pub opcode: u8,
    /// `WcFlag` bits.
    pub flags: u8,
    pub phase: u8,
}

impl Cqe {
    /// The entry's bytes.
    pub fn pack(&self) -> [u8; CQE_SIZE as usize] {
        use cqe::*;
        let mut e = [0u8; CQE_SIZE as usize];
        WR_ID.set(&mut e, self.wr_id);
        BYTE_LEN.set(&mut e, self.byte_len.into());
        IMM_INV.set(&mut e, self.imm_inv.into());
        QPN.set(&mut e, self.qpn.into());
        SRC_QP.set(&mut e, self.src_qp.into());
        WQE_INDEX.set(&mut e, self.wqe_index.into());
        STATUS.set(&mut e, self.status.into());
        OPCODE.set(&mut e, self.opcode.into());
        FLAGS.set(&mut e, self.flags.into());
        PHASE.set(&mut e, self.phase.into());
        e
    }

    /// The CQE in `e` (at least [`CQE_SIZE`] bytes).
    pub fn unpack(e: &[u8]) -> Cqe {
        use cqe::*;
        Cqe {
            wr_id: WR_ID.get(e),
            byte_len: BYTE_LEN.get(e) as u32,
            imm_inv: IMM_INV.get(e) as u32,
            qpn: QPN.get(e) as u32,
            src_qp: SRC_QP.get(e) as u32,
            wqe_index: WQE_INDEX.get(e) as u16,
            status: STATUS.get(e) as u8,
            opcode: OPCODE.get(e) as u8,
            flags: FLAGS.get(e) as u8,
            phase: PHASE.get(e) as u8,
        }
    }
}

fn put_sgl(e: &mut [u8], addr: QField, len: QField, key: QField, sge: &[Sge]) {
    for (i, s) in sge.iter().enumerate() {
        addr.set_at(e, i, s.addr);
        len.set_at(e, i, s.length.into());
        key.set_at(e, i, s.lkey.into());
    }
}

fn get_sgl(e: &[u8], addr: QField, len: QField, key: QField) -> [Sge; MAX_SGE as usize] {
    let mut sge = [Sge::default(); MAX_SGE as usize];
    for (i, s) in sge.iter_mut().enumerate() {
        *s = Sge {
            addr: addr.get_at(e, i),
            length: len.get_at(e, i) as u32,
            lkey: key.get_at(e, i) as u32,
        };
    }
    sge
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator that favours edge values.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            match self.0 % 5 {
                0 => 0,
                1 => u64::MAX,
                2 => 1 << ((self.0 >> 8) % 64),
                _ => self.0.rotate_left(17),
            }
        }
    }

    #[test]
    fn sizes_are_powers_of_two_and_fields_fit_aligned() {
        for f in FORMATS {
            assert!(f.size.is_power_of_two(), "{}", f.name);
            for q in f.fields.iter().chain(f.overlays) {
                assert!(matches!(q.bytes, 1 | 2 | 4 | 8), "{}.{}", f.name, q.name);
                assert_eq!(
                    q.offset % q.bytes as u16,
                    0,
                    "{}.{} aligned",
                    f.name,
                    q.name
                );
                assert!(
                    q.width >= 1 && q.lsb + q.width <= q.bytes * 8,
                    "{}.{}",
                    f.name,
                    q.name
                );
                assert!(q.count >= 1 && (q.count == 1) == (q.stride == 0));
                let end = q.offset_of(q.count as usize - 1) + q.bytes as usize;
                assert!(
                    end <= f.size as usize,
                    "{}.{} beyond the entry",
                    f.name,
                    q.name
                );
            }
        }
        assert_eq!(SGE_SIZE as usize, core::mem::size_of::<[u64; 2]>());
        assert_eq!(swqe::INLINE_DATA.offset, swqe::SGE_ADDR.offset);
        assert_eq!(MAX_INLINE, MAX_SGE * SGE_SIZE);
        assert!(swqe::SGE_LKEY.offset_of(MAX_SGE as usize - 1) + 4 <= SWQE_SIZE as usize);
    }

    #[test]
    fn no_field_overlaps_another() {
        for f in FORMATS {
            let mut owner = [None::<&str>; 1024];
            for q in f.fields {
                for i in 0..q.count as usize {
                    let bits = q.bit_of(i)..q.bit_of(i) + q.width as usize;
                    for (b, o) in owner[bits.clone()].iter_mut().enumerate() {
                        assert!(
                            o.is_none(),
                            "{}: {} and {:?} share bit {}",
                            f.name,
                            q.name,
                            o,
                            bits.start + b
                        );
                        *o = Some(q.name);
                    }
                }
            }
            // The phase bit is the entry's last byte.
            if f.name == "cqe" {
                assert_eq!(cqe::PHASE.offset as u32, CQE_SIZE - 1);
            }
        }
    }

    #[test]
    fn fields_are_little_endian_in_place() {
        let mut e = [0u8; CQE_SIZE as usize];
        cqe::WR_ID.set(&mut e, 0x0102_0304_0506_0708);
        assert_eq!(e[0], 0x08);
        assert_eq!(e[7], 0x01);
        cqe::QPN.set(&mut e, 0xFFFF_FFFF);
        assert_eq!(&e[0x10..0x14], &[0xFF, 0xFF, 0xFF, 0x00]);
        cqe::PHASE.set(&mut e, 1);
        assert_eq!(e[0x1F], 1);
        // Setting a field leaves its neighbours alone.
        cqe::SRC_QP.set(&mut e, 0);
        assert_eq!(cqe::QPN.get(&e), 0xFF_FFFF);
    }

    #[test]
    fn send_wqe_round_trips() {
        let mut r = Rng(0x9E37_79B9_7F4A_7C15);
        for n in 0..2000 {
            let payload = if n % 3 == 0 {
                let mut data = [0u8; MAX_INLINE as usize];
                data.iter_mut().for_each(|b| *b = r.next() as u8);
                Payload::Inline {
                    len: (r.next() % (MAX_INLINE as u64 + 1)) as u8,
                    data,
                }
            } else {
                let mut sge = [Sge::default(); MAX_SGE as usize];
                for s in &mut sge {
                    *s = Sge {
                        addr: r.next(),
                        length: r.next() as u32,
                        lkey: r.next() as u32,
                    };
                }
                Payload::Sgl {
                    num: (r.next() % (MAX_SGE as u64 + 1)) as u8,
                    sge,
                }
            };
            let w = SendWqe {
                opcode: r.next() as u8,
                flags: r.next() as u8 & !(SendFlag::Inline.value() as u8),
                imm_inv: r.next() as u32,
                wr_id: r.next(),
                remote_addr: r.next(),
                rkey: r.next() as u32,
                ud_qpn: r.next() as u32 & 0xFF_FFFF,
                compare_add: r.next(),
                swap: r.next(),
                ud_qkey: r.next() as u32,
                payload,
            };
            let e = w.pack();
            assert_eq!(SendWqe::unpack(&e), w);
            // Reserved bytes stay zero.
            assert!(e[0x34..0x40].iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn recv_wqe_and_cqe_round_trip() {
        let mut r = Rng(12345);
        for _ in 0..2000 {
            let mut w = RecvWqe {
                wr_id: r.next(),
                num_sge: (r.next() % (MAX_SGE as u64 + 1)) as u8,
                ..Default::default()
            };
            for s in &mut w.sge {
                *s = Sge {
                    addr: r.next(),
                    length: r.next() as u32,
                    lkey: r.next() as u32,
                };
            }
            let e = w.pack();
            assert_eq!(RecvWqe::unpack(&e), w);
            assert!(e[0x50..].iter().all(|&b| b == 0));

            let c = Cqe {
                wr_id: r.next(),
                byte_len: r.next() as u32,
                imm_inv: r.next() as u32,
                qpn: r.next() as u32 & 0xFF_FFFF,
                src_qp: r.next() as u32 & 0xFF_FFFF,
                wqe_index: r.next() as u16,
                status: r.next() as u8,
                opcode: r.next() as u8,
                flags: r.next() as u8,
                phase: r.next() as u8 & 1,
            };
            let e = c.pack();
            assert_eq!(Cqe::unpack(&e), c);
            assert!(e[0x1D..0x1F].iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn phase_alternates_per_pass_and_a_zeroed_ring_is_empty() {
        let log = 3;
        for pi in 0..64u32 {
            assert_eq!(
                cqe::phase(pi, log),
                if (pi >> log) % 2 == 0 { 1 } else { 0 }
            );
        }
        // The host at ci = 0 expects phase 1; zeroed memory holds 0.
        assert_ne!(cqe::phase(0, log), Cqe::unpack(&[0u8; 32]).phase);
    }

    #[test]
    fn ring_indices_wrap_at_16_bits() {
        use ring::*;
        assert_eq!(slot(0x1_0005, 3), 5);
        assert_eq!(fill(2, 0xFFFE), 4);
        assert!(has_room(7, 0, 3) && !has_room(8, 0, 3));
        assert!(!beyond(8, 0, 3) && beyond(9, 0, 3));
        assert!(has_room(0x0003, 0xFFFC, 3) && !has_room(0x0004, 0xFFFC, 3));
        assert_eq!(next(0xFFFF), 0);
        // A ring of 2^LOG_SIZE_MAX entries is told apart from an empty one.
        assert_eq!(fill(1 << LOG_SIZE_MAX, 0), 1 << LOG_SIZE_MAX);
        assert!(!beyond(1 << LOG_SIZE_MAX, 0, LOG_SIZE_MAX));
    }

    #[test]
    fn codes_are_ibverbs_values() {
        // rdma-core libibverbs/verbs.h.
        assert_eq!(WrOpcode::RdmaWrite.value(), 0);
        assert_eq!(WrOpcode::Send.value(), 2);
        assert_eq!(WrOpcode::AtomicFetchAndAdd.value(), 6);
        assert_eq!(WrOpcode::SendWithInv.value(), 9);
        assert_eq!(SendFlag::Inline.value(), 8);
        assert_eq!(WcStatus::WrFlushErr.value(), 5);
        assert_eq!(WcStatus::RnrRetryExcErr.value(), 13);
        assert_eq!(WcStatus::GeneralErr.value(), 21);
        assert_eq!(WcOpcode::Recv.value(), 1 << 7);
        assert_eq!(WcOpcode::RecvRdmaWithImm.value(), 129);
        assert_eq!(WcFlag::WithInv.value(), 8);
        // Opcode, status and flags fit their fields.
        for e in QUEUE_ENUMS {
            for v in e.values {
                assert!(v.value <= 0xFF, "{}.{}", e.name, v.name);
            }
        }
    }
}
