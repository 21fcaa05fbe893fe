//! The values fields hold: QP states and types, attribute-mask bits, access
//! flags, mailbox commands, result codes and counters. One enum per set,
//! each with its name table (`ALL`, `name()`) and an [`EnumDesc`] for the
//! generators.

use crate::model::{EnumDesc, EnumValue};
use roce_wire::DropReason;

value_enum! {
    /// QP state (IBTA 1.4 §10.3.1; values as Linux `enum ib_qp_state`).
    QpState("qp_state", flags: false) {
        /// Reset: no traffic, attributes at their defaults.
        Reset = 0 => "reset",
        /// Initialised: receive WQEs may be posted, nothing is processed.
        Init = 1 => "init",
        /// Ready to receive.
        Rtr = 2 => "rtr",
        /// Ready to send.
        Rts = 3 => "rts",
        /// Send queue drained: new send WQEs are not started.
        Sqd = 4 => "sqd",
        /// Send queue error (UC/UD only; entered by hardware).
        Sqe = 5 => "sqe",
        /// Error: outstanding work is flushed with error completions.
        Error = 6 => "error",
    }
}

value_enum! {
    /// QP transport service type.
    QpType("qp_type", flags: false) {
        /// Reliable connected.
        Rc = 0 => "rc",
        /// Unreliable connected.
        Uc = 1 => "uc",
        /// Unreliable datagram.
        Ud = 2 => "ud",
    }
}

value_enum! {
    /// Attribute-mask bits of a modify-QP command: which attributes the
    /// mailbox carries. Bit positions are Linux's `enum ib_qp_attr_mask`,
    /// so a host driver passes its mask through; `QP_TYPE` (bit 31) and `PD`
    /// (bit 30) are ours (there is no create-QP command: the type and the
    /// protection domain are set on Reset to Init).
    /// Linux bits not listed (PORT, ALT_PATH, PATH_MIG_STATE, CAP,
    /// EN_SQD_ASYNC_NOTIFY, ...) are not supported: one port, no automatic
    /// path migration.
    AttrMask("attr_mask", flags: true) {
        /// Change the state to `mbox.qp_state`; without it the state stays.
        State = 1 << 0 => "state",
        /// `mbox.cur_state` must equal the QP's current state.
        CurState = 1 << 1 => "cur-state",
        /// `mbox.access_flags`.
        AccessFlags = 1 << 3 => "access-flags",
        /// `mbox.pkey_index`.
        PkeyIndex = 1 << 4 => "pkey-index",
        /// `mbox.qkey` (UD).
        Qkey = 1 << 6 => "qkey",
        /// Address vector: `mbox.sgid_index`, `dmac_hi/lo`, `dgid_w0..3`.
        Av = 1 << 7 => "av",
        /// `mbox.path_mtu`.
        PathMtu = 1 << 8 => "path-mtu",
        /// `mbox.timeout`.
        Timeout = 1 << 9 => "timeout",
        /// `mbox.retry_cnt`.
        RetryCnt = 1 << 10 => "retry-cnt",
        /// `mbox.rnr_retry`.
        RnrRetry = 1 << 11 => "rnr-retry",
        /// `mbox.rq_psn`.
        RqPsn = 1 << 12 => "rq-psn",
        /// `mbox.max_rd_atomic`.
        MaxRdAtomic = 1 << 13 => "max-rd-atomic",
        /// `mbox.min_rnr_timer`.
        MinRnrTimer = 1 << 15 => "min-rnr-timer",
        /// `mbox.sq_psn`.
        SqPsn = 1 << 16 => "sq-psn",
        /// `mbox.max_dest_rd_atomic`.
        MaxDestRdAtomic = 1 << 17 => "max-dest-rd-atomic",
        /// `mbox.dest_qpn`.
        DestQpn = 1 << 20 => "dest-qpn",
        /// `mbox.pd` (Reset to Init only; required there: Linux sets a
        /// QP's PD at creation, and the responder checks R_Keys against it).
        Pd = 1 << 30 => "pd",
        /// `mbox.qp_type` (Reset to Init only).
        QpType = 1 << 31 => "qp-type",
    }
}

impl AttrMask {
    /// Every supported bit.
    pub const SUPPORTED: u32 = {
        let mut m = 0;
        let mut i = 0;
        while i < AttrMask::ALL.len() {
            m |= AttrMask::ALL[i].value();
            i += 1;
        }
        m
    };
}

value_enum! {
    /// QP access flags (Linux `enum ib_access_flags` bit positions).
    AccessFlag("access_flag", flags: true) {
        /// The local side may write (receive buffers, READ responses).
        LocalWrite = 1 << 0 => "local-write",
        /// RDMA WRITE from the remote side.
        RemoteWrite = 1 << 1 => "remote-write",
        /// RDMA READ from the remote side.
        RemoteRead = 1 << 2 => "remote-read",
        /// Atomics from the remote side.
        RemoteAtomic = 1 << 3 => "remote-atomic",
    }
}

value_enum! {
    /// Mailbox command (`mbox.cmd.OP`).
    Command("command", flags: false) {
        /// Modify a QP: `qpn`, `attr_mask` and the attribute registers.
        ModifyQp = 1 => "modify-qp",
        /// Rewrite GID entries 0 and 1 from `cfg.mac_*` and `cfg.ipv4`:
        /// the link-local (EUI-64) GID and the IPv4-mapped GID.
        SyncGids = 2 => "sync-gids",
    }
}

value_enum! {
    /// Result of a mailbox command (`mbox.status.RESULT`). Anything but
    /// `ok` means nothing was changed.
    ResultCode("result", flags: false) {
        /// Done.
        Ok = 0 => "ok",
        /// `cmd.OP` is not a known command.
        UnknownCommand = 1 => "unknown-command",
        /// `qpn` is not below `qp.qp_count`.
        BadQpn = 2 => "bad-qpn",
        /// The attribute mask has a bit that is not supported.
        UnknownMaskBit = 3 => "unknown-mask-bit",
        /// `qp_state` (the target) is not a QP state.
        BadState = 4 => "bad-state",
        /// `cur_state` is not a state, or not the QP's current state.
        CurStateMismatch = 5 => "cur-state-mismatch",
        /// The QP context holds no valid state or type (hardware fault).
        BadContext = 6 => "bad-context",
        /// The transition from the current to the target state is not
        /// allowed for this QP type.
        BadTransition = 7 => "bad-transition",
        /// An attribute the transition requires is missing from the mask.
        MissingAttr = 8 => "missing-attr",
        /// The mask has an attribute the transition does not allow.
        DisallowedAttr = 9 => "disallowed-attr",
        /// `qp_type` is not a QP type.
        BadQpType = 10 => "bad-qp-type",
        /// `pkey_index` is not below `cfg.caps.PKEY_COUNT`.
        BadPkeyIndex = 11 => "bad-pkey-index",
        /// `access_flags` has undefined bits.
        BadAccessFlags = 12 => "bad-access-flags",
        /// `sgid_index` is not below `cfg.caps.GID_COUNT`.
        BadGidIndex = 13 => "bad-gid-index",
        /// `dmac_hi` has bits above the MAC's 16.
        BadDmac = 14 => "bad-dmac",
        /// `path_mtu` is not an IBTA MTU code (1..=5).
        BadPmtu = 15 => "bad-pmtu",
        /// `path_mtu` is above `cfg.pmtu_cap`.
        PmtuAboveCap = 16 => "pmtu-above-cap",
        /// `timeout` is above 31.
        BadTimeout = 17 => "bad-timeout",
        /// `retry_cnt` is above 7.
        BadRetryCnt = 18 => "bad-retry-cnt",
        /// `rnr_retry` is above 7.
        BadRnrRetry = 19 => "bad-rnr-retry",
        /// `rq_psn` does not fit 24 bits.
        BadRqPsn = 20 => "bad-rq-psn",
        /// `sq_psn` does not fit 24 bits.
        BadSqPsn = 21 => "bad-sq-psn",
        /// `max_rd_atomic` is above `cfg.caps.MAX_RD_ATOMIC`.
        BadMaxRdAtomic = 22 => "bad-max-rd-atomic",
        /// `max_dest_rd_atomic` is above `cfg.caps.MAX_DEST_RD_ATOMIC`.
        BadMaxDestRdAtomic = 23 => "bad-max-dest-rd-atomic",
        /// `min_rnr_timer` is above 31.
        BadMinRnrTimer = 24 => "bad-min-rnr-timer",
        /// `dest_qpn` does not fit 24 bits.
        BadDestQpn = 25 => "bad-dest-qpn",
        /// `pd` does not fit `MR_PD_BITS`.
        BadPd = 26 => "bad-pd",
    }
}

value_enum! {
    /// Memory-region command (`mr.op.OP`): what the `mr_tlb` block executes
    /// when `mr.doorbell.GO` is written (its `s_cmd_op` codes).
    MrOp("mr_op", flags: false) {
        /// Page-table entry `mr.pt_index` := `mr.pa_hi:pa_lo` (a physical
        /// address below 2^52; bits below the region's page size ignored).
        WritePt = 0 => "write-pt",
        /// MR entry of `mr.key`'s index := the region (`pd`, `access`,
        /// base `va_hi:va_lo`, length `len_hi:len_lo`, `page_shift`,
        /// page-table base `pt_index`), valid under the key's tag.
        Register = 1 => "register",
        /// MR entry of `mr.key`'s index := free.
        Deregister = 2 => "deregister",
        /// MR entry of `mr.key` := invalidated, if valid under the key's tag.
        Invalidate = 3 => "invalidate",
    }
}

impl MrOp {
    /// Bits of an op code.
    pub const BITS: u8 = {
        let mut max = 0;
        let mut i = 0;
        while i < MrOp::ALL.len() {
            if MrOp::ALL[i].value() > max {
                max = MrOp::ALL[i].value();
            }
            i += 1;
        }
        (u32::BITS - max.leading_zeros()) as u8
    };
}

value_enum! {
    /// Counters of the MR table (`mr.counter[i]`): requests rejected per
    /// reason, in the order of roce-wire's `mr::Reject` codes (counter i
    /// counts code i + 1), then page-table walks (TLB misses).
    MrCounter("mr_counter", flags: false) {
        /// Rejected: index beyond the table, free entry or tag mismatch.
        BadKey = 0 => "mr-bad-key",
        /// Rejected: the key names an invalidated region.
        InvalidatedKey = 1 => "mr-invalidated-key",
        /// Rejected: PD mismatch.
        PdMismatch = 2 => "mr-pd-mismatch",
        /// Rejected: a wanted access flag is not granted.
        AccessDenied = 3 => "mr-access-denied",
        /// Rejected: outside the region.
        OutOfBounds = 4 => "mr-out-of-bounds",
        /// Page-table walks (TLB misses).
        TlbMiss = 5 => "mr-tlb-miss",
    }
}

impl MrCounter {
    /// Number of MR counters.
    pub const COUNT: u32 = MrCounter::ALL.len() as u32;

    /// The counter of a reject reason.
    pub const fn of(r: roce_wire::mr::Reject) -> MrCounter {
        match r {
            roce_wire::mr::Reject::BadKey => MrCounter::BadKey,
            roce_wire::mr::Reject::InvalidatedKey => MrCounter::InvalidatedKey,
            roce_wire::mr::Reject::PdMismatch => MrCounter::PdMismatch,
            roce_wire::mr::Reject::AccessDenied => MrCounter::AccessDenied,
            roce_wire::mr::Reject::OutOfBounds => MrCounter::OutOfBounds,
        }
    }
}

// Counter i counts reject code i + 1, for every reason.
const _: () = {
    let mut i = 0;
    while i < roce_wire::mr::Reject::ALL.len() {
        let r = roce_wire::mr::Reject::ALL[i];
        assert!(MrCounter::of(r).value() + 1 == r.code() as u32);
        i += 1;
    }
    assert!(MrCounter::TlbMiss.value() as usize == roce_wire::mr::Reject::ALL.len());
};

/// All enums, for generators.
pub const ENUMS: &[EnumDesc] = &[
    QpState::DESC,
    QpType::DESC,
    AttrMask::DESC,
    AccessFlag::DESC,
    Command::DESC,
    ResultCode::DESC,
    MrOp::DESC,
    MrCounter::DESC,
    Counter::DESC,
    crate::queue::WrOpcode::DESC,
    crate::queue::SendFlag::DESC,
    crate::queue::WcStatus::DESC,
    crate::queue::WcOpcode::DESC,
    crate::queue::WcFlag::DESC,
];

/// A counter of the `ctr` block: `ctr.counter[c.index()]` counts `c`.
/// The RX drop reasons are roce-wire's [`DropReason`]s, in its counter order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Counter {
    /// A frame the receiver dropped, by reason (DESIGN §7).
    RxDrop(DropReason),
    /// A frame dropped because its destination QP does not exist or is not
    /// ready to receive.
    RxUnknownQpn,
    /// A frame dropped because its PKey does not match the QP's.
    RxBadPkey,
    /// A CSR access to an unmapped address (answered SLVERR).
    CsrUnmapped,
}

/// Counters after the RX drop reasons, in index order.
const OTHER_COUNTERS: [Counter; 3] = [
    Counter::RxUnknownQpn,
    Counter::RxBadPkey,
    Counter::CsrUnmapped,
];

impl Counter {
    /// Number of counters.
    pub const COUNT: u32 = (DropReason::ALL.len() + OTHER_COUNTERS.len()) as u32;

    /// Every counter, in index order.
    pub const ALL: [Counter; Counter::COUNT as usize] = {
        let mut all = [Counter::CsrUnmapped; Counter::COUNT as usize];
        let mut i = 0;
        while i < DropReason::ALL.len() {
            all[i] = Counter::RxDrop(DropReason::ALL[i]);
            i += 1;
        }
        let mut j = 0;
        while j < OTHER_COUNTERS.len() {
            all[i + j] = OTHER_COUNTERS[j];
            j += 1;
        }
        all
    };

    /// Index of the counter's register in `ctr.counter`.
    pub const fn index(self) -> u32 {
        match self {
            Counter::RxDrop(r) => r.index() as u32,
            Counter::RxUnknownQpn => DropReason::ALL.len() as u32,
            Counter::RxBadPkey => DropReason::ALL.len() as u32 + 1,
            Counter::CsrUnmapped => DropReason::ALL.len() as u32 + 2,
        }
    }

    /// The counter with index `i`.
    pub const fn from_index(i: u32) -> Option<Counter> {
        if i < Counter::COUNT {
            Some(Counter::ALL[i as usize])
        } else {
            None
        }
    }

    /// Stable name: the DESIGN §7 reason for RX drops.
    pub const fn name(self) -> &'static str {
        match self {
            Counter::RxDrop(r) => r.name(),
            Counter::RxUnknownQpn => "unknown-qpn",
            Counter::RxBadPkey => "bad-pkey",
            Counter::CsrUnmapped => "csr-unmapped",
        }
    }

    const fn doc(self) -> &'static str {
        match self {
            Counter::RxDrop(_) => " RX frames dropped for this reason (DESIGN §7).",
            Counter::RxUnknownQpn => " RX frames dropped: no such QP, or not ready to receive.",
            Counter::RxBadPkey => " RX frames dropped: PKey mismatch.",
            Counter::CsrUnmapped => " CSR accesses to unmapped addresses (answered SLVERR).",
        }
    }

    const VALUES: [EnumValue; Counter::COUNT as usize] = {
        let mut v = [EnumValue {
            name: "",
            value: 0,
            doc: "",
        }; Counter::COUNT as usize];
        let mut i = 0;
        while i < v.len() {
            let c = Counter::ALL[i];
            v[i] = EnumValue {
                name: c.name(),
                value: c.index(),
                doc: c.doc(),
            };
            i += 1;
        }
        v
    };

    /// The counters as data, for generators (value = register index).
    pub const DESC: EnumDesc = EnumDesc {
        name: "counter",
        doc: " Index of each counter in `ctr.counter`.",
        flags: false,
        values: &Counter::VALUES,
    };
}
