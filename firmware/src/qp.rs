//! Modify QP: the IBTA QP state machine (IBTA 1.4 §10.3, the table of
//! Linux `ib_modify_qp_is_ok`), attribute range checks and the writes into
//! the QP context table.
//!
//! A command is read from the mailbox ([`Request::read`]), checked
//! ([`check`]) and only then applied ([`apply`]): a rejected command writes
//! nothing. Each transition's attribute rule is a small function below.

use crate::regs::Regs;
use roce_regs::{cfg, mbox, qp, AttrMask, QpState, QpType, ResultCode, QP_CTX_OFFSET};
use roce_wire::{LocalAckTimeout, Pmtu, Psn};

/// Limits of the hardware, read once at boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// QP contexts (`qp.qp_count`).
    pub qp_count: u32,
    /// GID table entries.
    pub gid_count: u32,
    /// PKey table entries.
    pub pkey_count: u32,
    /// Largest `max_rd_atomic`.
    pub max_rd_atomic: u32,
    /// Largest `max_dest_rd_atomic`.
    pub max_dest_rd_atomic: u32,
}

impl Limits {
    /// Read the limits from `qp.qp_count` and `cfg.caps`.
    pub fn read<R: Regs>(r: &mut R) -> Limits {
        let caps = r.read32(cfg::caps::ADDR);
        Limits {
            qp_count: qp::qp_count::COUNT.get(r.read32(qp::qp_count::ADDR)),
            gid_count: cfg::caps::GID_COUNT.get(caps),
            pkey_count: cfg::caps::PKEY_COUNT.get(caps),
            max_rd_atomic: cfg::caps::MAX_RD_ATOMIC.get(caps),
            max_dest_rd_atomic: cfg::caps::MAX_DEST_RD_ATOMIC.get(caps),
        }
    }
}

/// The attributes a transition requires, and those it allows besides.
/// `AttrMask::State` is always allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Attributes that must be in the mask.
    pub required: u32,
    /// Attributes that may be in the mask.
    pub optional: u32,
}

impl Rule {
    const NONE: Rule = Rule {
        required: 0,
        optional: 0,
    };
}

const fn bits(list: &[AttrMask]) -> u32 {
    let mut m = 0;
    let mut i = 0;
    while i < list.len() {
        m |= list[i].value();
        i += 1;
    }
    m
}

use AttrMask as A;

fn reset_to_init(t: QpType) -> Rule {
    let required = match t {
        QpType::Ud => bits(&[A::QpType, A::Pd, A::PkeyIndex, A::Qkey]),
        QpType::Rc | QpType::Uc => bits(&[A::QpType, A::Pd, A::PkeyIndex, A::AccessFlags]),
    };
    Rule {
        required,
        optional: 0,
    }
}

fn init_to_init(t: QpType) -> Rule {
    let optional = match t {
        QpType::Ud => bits(&[A::PkeyIndex, A::Qkey]),
        QpType::Rc | QpType::Uc => bits(&[A::PkeyIndex, A::AccessFlags]),
    };
    Rule {
        required: 0,
        optional,
    }
}

fn init_to_rtr(t: QpType) -> Rule {
    let connected = bits(&[A::Av, A::PathMtu, A::DestQpn, A::RqPsn]);
    match t {
        QpType::Rc => Rule {
            required: connected | bits(&[A::MaxDestRdAtomic, A::MinRnrTimer]),
            optional: bits(&[A::AccessFlags, A::PkeyIndex]),
        },
        QpType::Uc => Rule {
            required: connected,
            optional: bits(&[A::AccessFlags, A::PkeyIndex]),
        },
        QpType::Ud => Rule {
            required: 0,
            optional: bits(&[A::PkeyIndex, A::Qkey]),
        },
    }
}

fn rtr_to_rts(t: QpType) -> Rule {
    match t {
        QpType::Rc => Rule {
            required: bits(&[
                A::Timeout,
                A::RetryCnt,
                A::RnrRetry,
                A::SqPsn,
                A::MaxRdAtomic,
            ]),
            optional: bits(&[A::CurState, A::AccessFlags, A::MinRnrTimer]),
        },
        QpType::Uc => Rule {
            required: A::SqPsn.value(),
            optional: bits(&[A::CurState, A::AccessFlags]),
        },
        QpType::Ud => Rule {
            required: A::SqPsn.value(),
            optional: bits(&[A::CurState, A::Qkey]),
        },
    }
}

/// RTS to RTS and SQD to RTS: nothing required, the same optional set.
fn to_rts_again(t: QpType) -> Rule {
    let optional = match t {
        QpType::Rc => bits(&[A::CurState, A::AccessFlags, A::MinRnrTimer]),
        QpType::Uc => bits(&[A::CurState, A::AccessFlags]),
        QpType::Ud => bits(&[A::CurState, A::Qkey]),
    };
    Rule {
        required: 0,
        optional,
    }
}

fn rts_to_sqd(_t: QpType) -> Rule {
    Rule::NONE
}

fn sqd_to_sqd(t: QpType) -> Rule {
    let optional = match t {
        QpType::Rc => bits(&[
            A::Av,
            A::Timeout,
            A::RetryCnt,
            A::RnrRetry,
            A::MaxRdAtomic,
            A::MaxDestRdAtomic,
            A::AccessFlags,
            A::PkeyIndex,
            A::MinRnrTimer,
        ]),
        QpType::Uc => bits(&[A::Av, A::AccessFlags, A::PkeyIndex]),
        QpType::Ud => bits(&[A::PkeyIndex, A::Qkey]),
    };
    Rule {
        required: 0,
        optional,
    }
}

/// SQE to RTS: only UC and UD QPs enter SQE (an RC error goes to Error).
fn sqe_to_rts(t: QpType) -> Option<Rule> {
    let optional = match t {
        QpType::Rc => return None,
        QpType::Uc => bits(&[A::CurState, A::AccessFlags]),
        QpType::Ud => bits(&[A::CurState, A::Qkey]),
    };
    Some(Rule {
        required: 0,
        optional,
    })
}

/// The rule for `cur` to `target` on a QP of type `t`, or `None` when the
/// transition is not allowed. Reset and Error are reachable from any state
/// and take no attributes.
pub fn rule(cur: QpState, target: QpState, t: QpType) -> Option<Rule> {
    use QpState::*;
    match (cur, target) {
        (_, Reset) | (_, Error) => Some(Rule::NONE),
        (Reset, Init) => Some(reset_to_init(t)),
        (Init, Init) => Some(init_to_init(t)),
        (Init, Rtr) => Some(init_to_rtr(t)),
        (Rtr, Rts) => Some(rtr_to_rts(t)),
        (Rts, Rts) | (Sqd, Rts) => Some(to_rts_again(t)),
        (Rts, Sqd) => Some(rts_to_sqd(t)),
        (Sqd, Sqd) => Some(sqd_to_sqd(t)),
        (Sqe, Rts) => sqe_to_rts(t),
        _ => None,
    }
}

/// A modify-QP command as the mailbox holds it: whole 32-bit words, so a
/// value too large for its field is seen, not truncated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Request {
    pub qpn: u32,
    pub mask: u32,
    pub qp_state: u32,
    pub cur_state: u32,
    pub qp_type: u32,
    pub pkey_index: u32,
    pub access_flags: u32,
    pub qkey: u32,
    pub sgid_index: u32,
    pub dmac_hi: u32,
    pub dmac_lo: u32,
    pub dgid: [u32; 4],
    pub path_mtu: u32,
    pub timeout: u32,
    pub retry_cnt: u32,
    pub rnr_retry: u32,
    pub rq_psn: u32,
    pub max_rd_atomic: u32,
    pub min_rnr_timer: u32,
    pub sq_psn: u32,
    pub max_dest_rd_atomic: u32,
    pub dest_qpn: u32,
    pub pd: u32,
}

impl Request {
    /// Read the command registers of the mailbox.
    pub fn read<R: Regs>(r: &mut R) -> Request {
        Request {
            qpn: r.read32(mbox::qpn::ADDR),
            mask: r.read32(mbox::attr_mask::ADDR),
            qp_state: r.read32(mbox::qp_state::ADDR),
            cur_state: r.read32(mbox::cur_state::ADDR),
            qp_type: r.read32(mbox::qp_type::ADDR),
            pkey_index: r.read32(mbox::pkey_index::ADDR),
            access_flags: r.read32(mbox::access_flags::ADDR),
            qkey: r.read32(mbox::qkey::ADDR),
            sgid_index: r.read32(mbox::sgid_index::ADDR),
            dmac_hi: r.read32(mbox::dmac_hi::ADDR),
            dmac_lo: r.read32(mbox::dmac_lo::ADDR),
            dgid: [
                r.read32(mbox::dgid_w0::ADDR),
                r.read32(mbox::dgid_w1::ADDR),
                r.read32(mbox::dgid_w2::ADDR),
                r.read32(mbox::dgid_w3::ADDR),
            ],
            path_mtu: r.read32(mbox::path_mtu::ADDR),
            timeout: r.read32(mbox::timeout::ADDR),
            retry_cnt: r.read32(mbox::retry_cnt::ADDR),
            rnr_retry: r.read32(mbox::rnr_retry::ADDR),
            rq_psn: r.read32(mbox::rq_psn::ADDR),
            max_rd_atomic: r.read32(mbox::max_rd_atomic::ADDR),
            min_rnr_timer: r.read32(mbox::min_rnr_timer::ADDR),
            sq_psn: r.read32(mbox::sq_psn::ADDR),
            max_dest_rd_atomic: r.read32(mbox::max_dest_rd_atomic::ADDR),
            dest_qpn: r.read32(mbox::dest_qpn::ADDR),
            pd: r.read32(mbox::pd::ADDR),
        }
    }

    /// Write the command registers of the mailbox (what a host does).
    pub fn write<R: Regs>(&self, r: &mut R) {
        let words = [
            (mbox::qpn::ADDR, self.qpn),
            (mbox::attr_mask::ADDR, self.mask),
            (mbox::qp_state::ADDR, self.qp_state),
            (mbox::cur_state::ADDR, self.cur_state),
            (mbox::qp_type::ADDR, self.qp_type),
            (mbox::pkey_index::ADDR, self.pkey_index),
            (mbox::access_flags::ADDR, self.access_flags),
            (mbox::qkey::ADDR, self.qkey),
            (mbox::sgid_index::ADDR, self.sgid_index),
            (mbox::dmac_hi::ADDR, self.dmac_hi),
            (mbox::dmac_lo::ADDR, self.dmac_lo),
            (mbox::dgid_w0::ADDR, self.dgid[0]),
            (mbox::dgid_w1::ADDR, self.dgid[1]),
            (mbox::dgid_w2::ADDR, self.dgid[2]),
            (mbox::dgid_w3::ADDR, self.dgid[3]),
            (mbox::path_mtu::ADDR, self.path_mtu),
            (mbox::timeout::ADDR, self.timeout),
            (mbox::retry_cnt::ADDR, self.retry_cnt),
            (mbox::rnr_retry::ADDR, self.rnr_retry),
            (mbox::rq_psn::ADDR, self.rq_psn),
            (mbox::max_rd_atomic::ADDR, self.max_rd_atomic),
            (mbox::min_rnr_timer::ADDR, self.min_rnr_timer),
            (mbox::sq_psn::ADDR, self.sq_psn),
            (mbox::max_dest_rd_atomic::ADDR, self.max_dest_rd_atomic),
            (mbox::dest_qpn::ADDR, self.dest_qpn),
            (mbox::pd::ADDR, self.pd),
        ];
        for (addr, value) in words {
            r.write32(addr, value);
        }
    }
}

/// A checked command: what [`apply`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The QP.
    pub qpn: u32,
    /// Its state before the command.
    pub cur: QpState,
    /// Its state after.
    pub target: QpState,
    /// Its type after (set on Reset to Init, kept otherwise).
    pub qp_type: QpType,
    /// The attributes to write.
    pub mask: u32,
}

/// Window offset of context register `reg` of QP `qpn`.
fn ctx(reg: roce_regs::Register, qpn: u32) -> u32 {
    qp::BASE + reg.element_offset(qpn)
}

/// Check a request against the QP's current state, the state machine and
/// the attribute ranges. Reads registers, writes none.
pub fn check<R: Regs>(r: &mut R, req: &Request, limits: &Limits) -> Result<Plan, ResultCode> {
    if req.qpn >= limits.qp_count {
        return Err(ResultCode::BadQpn);
    }
    if req.mask & !AttrMask::SUPPORTED != 0 {
        return Err(ResultCode::UnknownMaskBit);
    }
    let has = |a: AttrMask| req.mask & a.value() != 0;
    let word = r.read32(ctx(qp::state::REG, req.qpn));
    let cur = QpState::from_value(qp::state::STATE.get(word)).ok_or(ResultCode::BadContext)?;
    let ctx_type = QpType::from_value(qp::state::TYPE.get(word)).ok_or(ResultCode::BadContext)?;
    let target = if has(A::State) {
        QpState::from_value(req.qp_state).ok_or(ResultCode::BadState)?
    } else {
        cur
    };
    if has(A::CurState) && QpState::from_value(req.cur_state) != Some(cur) {
        return Err(ResultCode::CurStateMismatch);
    }
    let qp_type = if has(A::QpType) {
        QpType::from_value(req.qp_type).ok_or(ResultCode::BadQpType)?
    } else {
        ctx_type
    };
    let rule = rule(cur, target, qp_type).ok_or(ResultCode::BadTransition)?;
    if req.mask & rule.required != rule.required {
        return Err(ResultCode::MissingAttr);
    }
    if req.mask & !(rule.required | rule.optional | A::State.value()) != 0 {
        return Err(ResultCode::DisallowedAttr);
    }
    check_values(r, req, limits)?;
    Ok(Plan {
        qpn: req.qpn,
        cur,
        target,
        qp_type,
        mask: req.mask,
    })
}

/// `Err(code)` unless `ok`.
fn ensure(ok: bool, code: ResultCode) -> Result<(), ResultCode> {
    if ok {
        Ok(())
    } else {
        Err(code)
    }
}

/// Range checks of every attribute in the mask.
fn check_values<R: Regs>(r: &mut R, req: &Request, limits: &Limits) -> Result<(), ResultCode> {
    let has = |a: AttrMask| req.mask & a.value() != 0;
    if has(A::PkeyIndex) {
        ensure(req.pkey_index < limits.pkey_count, ResultCode::BadPkeyIndex)?;
    }
    if has(A::AccessFlags) {
        let defined = mbox::access_flags::FLAGS.mask();
        ensure(req.access_flags & !defined == 0, ResultCode::BadAccessFlags)?;
    }
    if has(A::Av) {
        ensure(req.sgid_index < limits.gid_count, ResultCode::BadGidIndex)?;
        ensure(req.dmac_hi <= mbox::dmac_hi::MAC.max(), ResultCode::BadDmac)?;
    }
    if has(A::PathMtu) {
        let pmtu = u8::try_from(req.path_mtu)
            .ok()
            .and_then(Pmtu::from_code)
            .ok_or(ResultCode::BadPmtu)?;
        let cap = cfg::pmtu_cap::PMTU.get(r.read32(cfg::pmtu_cap::ADDR));
        ensure(u32::from(pmtu.code()) <= cap, ResultCode::PmtuAboveCap)?;
    }
    if has(A::Timeout) {
        let ok = u8::try_from(req.timeout)
            .ok()
            .and_then(LocalAckTimeout::new)
            .is_some();
        ensure(ok, ResultCode::BadTimeout)?;
    }
    if has(A::RetryCnt) {
        ensure(
            req.retry_cnt <= mbox::retry_cnt::COUNT.max(),
            ResultCode::BadRetryCnt,
        )?;
    }
    if has(A::RnrRetry) {
        ensure(
            req.rnr_retry <= mbox::rnr_retry::COUNT.max(),
            ResultCode::BadRnrRetry,
        )?;
    }
    if has(A::RqPsn) {
        ensure(Psn::checked(req.rq_psn).is_some(), ResultCode::BadRqPsn)?;
    }
    if has(A::SqPsn) {
        ensure(Psn::checked(req.sq_psn).is_some(), ResultCode::BadSqPsn)?;
    }
    if has(A::MaxRdAtomic) {
        ensure(
            req.max_rd_atomic <= limits.max_rd_atomic,
            ResultCode::BadMaxRdAtomic,
        )?;
    }
    if has(A::MaxDestRdAtomic) {
        ensure(
            req.max_dest_rd_atomic <= limits.max_dest_rd_atomic,
            ResultCode::BadMaxDestRdAtomic,
        )?;
    }
    if has(A::MinRnrTimer) {
        ensure(
            req.min_rnr_timer <= mbox::min_rnr_timer::TIMER.max(),
            ResultCode::BadMinRnrTimer,
        )?;
    }
    if has(A::DestQpn) {
        ensure(
            req.dest_qpn <= mbox::dest_qpn::QPN.max(),
            ResultCode::BadDestQpn,
        )?;
    }
    if has(A::Pd) {
        ensure(req.pd <= mbox::pd::PD.max(), ResultCode::BadPd)?;
    }
    Ok(())
}

/// Read-modify-write of context register `reg` of QP `qpn`: `edit` gets
/// the old word and returns the new one.
fn update<R: Regs>(r: &mut R, reg: roce_regs::Register, qpn: u32, edit: impl FnOnce(u32) -> u32) {
    let addr = ctx(reg, qpn);
    let old = r.read32(addr);
    r.write32(addr, edit(old));
}

/// Write a checked command into the QP context: the attributes first, the
/// state last, so the datapath never sees the new state with old
/// attributes. To Reset: the state first, then every context register to
/// its reset value.
pub fn apply<R: Regs>(r: &mut R, req: &Request, plan: &Plan) {
    let n = plan.qpn;
    if plan.target == QpState::Reset {
        let others = qp::BLOCK
            .registers
            .iter()
            .filter(|g| g.offset >= QP_CTX_OFFSET && **g != qp::state::REG);
        r.write32(ctx(qp::state::REG, n), qp::state::REG.reset());
        for g in others {
            r.write32(ctx(*g, n), g.reset());
        }
        return;
    }
    let has = |a: AttrMask| plan.mask & a.value() != 0;
    if has(A::PathMtu) || has(A::Av) || has(A::PkeyIndex) {
        update(r, qp::path::REG, n, |mut w| {
            if has(A::PathMtu) {
                w = qp::path::PMTU.set(w, req.path_mtu);
            }
            if has(A::Av) {
                w = qp::path::SGID_INDEX.set(w, req.sgid_index);
            }
            if has(A::PkeyIndex) {
                w = qp::path::PKEY_INDEX.set(w, req.pkey_index);
            }
            w
        });
    }
    if has(A::AccessFlags) {
        r.write32(
            ctx(qp::access::REG, n),
            qp::access::FLAGS.val(req.access_flags),
        );
    }
    if has(A::Timeout) || has(A::RetryCnt) || has(A::RnrRetry) || has(A::MinRnrTimer) {
        update(r, qp::timers::REG, n, |mut w| {
            if has(A::Timeout) {
                w = qp::timers::TIMEOUT.set(w, req.timeout);
            }
            if has(A::RetryCnt) {
                w = qp::timers::RETRY_CNT.set(w, req.retry_cnt);
            }
            if has(A::RnrRetry) {
                w = qp::timers::RNR_RETRY.set(w, req.rnr_retry);
            }
            if has(A::MinRnrTimer) {
                w = qp::timers::MIN_RNR_TIMER.set(w, req.min_rnr_timer);
            }
            w
        });
    }
    if has(A::MaxRdAtomic) || has(A::MaxDestRdAtomic) {
        update(r, qp::rd_atomic::REG, n, |mut w| {
            if has(A::MaxRdAtomic) {
                w = qp::rd_atomic::MAX_RD_ATOMIC.set(w, req.max_rd_atomic);
            }
            if has(A::MaxDestRdAtomic) {
                w = qp::rd_atomic::MAX_DEST_RD_ATOMIC.set(w, req.max_dest_rd_atomic);
            }
            w
        });
    }
    if has(A::Qkey) {
        r.write32(ctx(qp::qkey::REG, n), req.qkey);
    }
    if has(A::Av) {
        r.write32(ctx(qp::dmac_hi::REG, n), qp::dmac_hi::MAC.val(req.dmac_hi));
        r.write32(ctx(qp::dmac_lo::REG, n), req.dmac_lo);
        let dgid = [
            qp::dgid_w0::REG,
            qp::dgid_w1::REG,
            qp::dgid_w2::REG,
            qp::dgid_w3::REG,
        ];
        for (reg, word) in dgid.into_iter().zip(req.dgid) {
            r.write32(ctx(reg, n), word);
        }
    }
    if has(A::DestQpn) {
        r.write32(
            ctx(qp::dest_qpn::REG, n),
            qp::dest_qpn::QPN.val(req.dest_qpn),
        );
    }
    if has(A::SqPsn) {
        r.write32(ctx(qp::sq_psn::REG, n), qp::sq_psn::PSN.val(req.sq_psn));
    }
    if has(A::RqPsn) {
        r.write32(ctx(qp::rq_psn::REG, n), qp::rq_psn::PSN.val(req.rq_psn));
    }
    if has(A::Pd) {
        r.write32(ctx(qp::pd::REG, n), qp::pd::PD.val(req.pd));
    }
    let state =
        qp::state::STATE.val(plan.target.value()) | qp::state::TYPE.val(plan.qp_type.value());
    r.write32(ctx(qp::state::REG, n), state);
}

/// Execute the modify-QP command in the mailbox: check, then apply.
/// On `Err` nothing was written.
pub fn modify<R: Regs>(r: &mut R, limits: &Limits) -> Result<Plan, ResultCode> {
    let req = Request::read(r);
    let plan = check(r, &req, limits)?;
    apply(r, &req, &plan);
    Ok(plan)
}
