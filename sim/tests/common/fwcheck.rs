//! The checks both firmware co-simulations (ISS and PicoRV32) run, over
//! any [`Softcore`]. The reference is the firmware's own host library
//! (`roce_fw::Firmware::poll`) over the register file built from the
//! `roce-regs` tables ([`RefRegs`]): every command must give the same
//! result code on the softcore as there, and the whole QP context table on
//! the datapath port must equal the reference's after every command.

use super::{unpack_ctx, RefRegs};
use roce_fw::qp::Request;
use roce_fw::{Firmware, Regs};
use roce_regs::{mbox, AccessFlag, AttrMask as A, Command, QpState, QpType, ResultCode};
use roce_sim::fw::{boot, post, BringUp, Posted, Softcore};
use roce_sim::rng::Rng;

/// The reference: the host library on the reference register file.
pub struct Reference {
    pub regs: RefRegs,
    pub fw: Firmware,
}

impl Reference {
    pub fn new() -> Reference {
        let mut regs = RefRegs::new();
        let fw = Firmware::boot(&mut regs);
        Reference { regs, fw }
    }

    /// The host's side of the mailbox, then one poll: the result.
    pub fn post(&mut self, req: &Request) -> ResultCode {
        req.write(&mut self.regs);
        self.regs.write32(
            mbox::cmd::ADDR,
            mbox::cmd::OP.val(Command::ModifyQp.value()),
        );
        self.regs
            .write32(mbox::doorbell::ADDR, mbox::doorbell::GO.val(1));
        self.fw.poll(&mut self.regs).expect("doorbell set")
    }

    pub fn n_qps(&mut self) -> u32 {
        self.fw.limits.qp_count
    }
}

/// The whole context table on the softcore's datapath port.
pub fn table<S: Softcore>(s: &mut S, n: u32) -> Vec<Vec<u32>> {
    (0..n).map(|q| s.qp_ctx(q)).collect()
}

/// The reference's table, packed as the datapath port packs it.
pub fn ref_table(r: &Reference, n: u32) -> Vec<Vec<u32>> {
    (0..n).map(|q| r.regs.packed_ctx(q).to_vec()).collect()
}

/// Post on both; the results must agree, and so must the tables.
pub fn post_both<S: Softcore>(s: &mut S, r: &mut Reference, what: &str, req: &Request) -> Posted {
    let p = post(s, req).unwrap_or_else(|e| panic!("{what}: {e}"));
    let want = r.post(req);
    assert_eq!(p.result, want, "{what}: {req:?}");
    let n = r.n_qps();
    let got = table(s, n);
    let exp = ref_table(r, n);
    for q in 0..n as usize {
        assert_eq!(
            got[q], exp[q],
            "{what}: QP {q} context differs from the reference"
        );
    }
    println!(
        "{}: {what:<28} {:<20} {:>6} cycles{}",
        s.name(),
        format!("{:?}", p.result),
        p.cycles,
        p.instrs
            .map(|i| format!(" {i:>6} instructions"))
            .unwrap_or_default()
    );
    p
}

/// Random bring-up attributes for QP `qpn` (every value in range).
pub fn random_bringup(rng: &mut Rng, qpn: u32, qp_type: QpType) -> BringUp {
    let mut dgid = [0u8; 16];
    dgid.copy_from_slice(&rng.bytes(16));
    let mut dmac = [0u8; 6];
    dmac.copy_from_slice(&rng.bytes(6));
    let pmtu = [
        roce_wire::Pmtu::Mtu256,
        roce_wire::Pmtu::Mtu512,
        roce_wire::Pmtu::Mtu1024,
    ];
    BringUp {
        qpn,
        qp_type,
        pkey_index: rng.below(roce_regs::PKEY_COUNT as u64) as u32,
        access_flags: [
            AccessFlag::RemoteWrite,
            AccessFlag::RemoteRead,
            AccessFlag::LocalWrite,
        ]
        .iter()
        .filter(|_| rng.chance(500))
        .fold(0, |m, f| m | f.value()),
        qkey: rng.next_u32(),
        pd: rng.next_u32() & roce_regs::qp::pd::PD.max(),
        sgid_index: rng.below(roce_regs::GID_COUNT as u64) as u32,
        dmac,
        dgid,
        path_mtu: pmtu[rng.below(pmtu.len() as u64) as usize].code() as u32,
        dest_qpn: rng.next_u32() & roce_regs::qp::dest_qpn::QPN.max(),
        rq_psn: rng.next_u32() & roce_regs::qp::rq_psn::PSN.max(),
        max_dest_rd_atomic: rng.below(roce_regs::MAX_DEST_RD_ATOMIC as u64 + 1) as u32,
        min_rnr_timer: rng.below(roce_regs::qp::timers::MIN_RNR_TIMER.max() as u64 + 1) as u32,
        sq_psn: rng.next_u32() & roce_regs::qp::sq_psn::PSN.max(),
        timeout: rng.below(roce_regs::qp::timers::TIMEOUT.max() as u64 + 1) as u32,
        retry_cnt: rng.below(roce_regs::qp::timers::RETRY_CNT.max() as u64 + 1) as u32,
        rnr_retry: rng.below(roce_regs::qp::timers::RNR_RETRY.max() as u64 + 1) as u32,
        max_rd_atomic: rng.below(roce_regs::MAX_RD_ATOMIC as u64 + 1) as u32,
    }
}

/// Boot, then bring `qps` distinct random QPs (each type in turn) up through Init,
/// RTR and RTS with random attributes, checking each command against the
/// reference; then the QP's state and attributes, field by field, on the
/// datapath port and through host CSR reads of its context. The cycles
/// each command took, by target state.
pub fn bring_up<S: Softcore>(s: &mut S, rng: &mut Rng, qps: usize) -> Vec<(&'static str, Posted)> {
    let booted = boot(s).unwrap_or_else(|e| panic!("{e}"));
    println!("{}: booted in {booted} cycles", s.name());
    let mut r = Reference::new();
    let n = r.n_qps();
    let mut log = Vec::new();
    let types = [QpType::Rc, QpType::Uc, QpType::Ud];
    let mut used = Vec::new();
    for i in 0..qps {
        // A fresh QP each time (one already up would reject Reset -> Init).
        let q = loop {
            let q = rng.below(n as u64) as u32;
            if !used.contains(&q) {
                break q;
            }
        };
        used.push(q);
        let b = random_bringup(rng, q, types[i % types.len()]);
        for (name, req) in b.requests() {
            let p = post_both(
                s,
                &mut r,
                &format!("QP {q} {:?} -> {name}", b.qp_type),
                &req,
            );
            assert_eq!(p.result, ResultCode::Ok, "{name}: {req:?}");
            log.push((name, p));
        }
        let c = unpack_ctx(&s.qp_ctx(q).try_into().unwrap());
        use roce_regs::qp::{dest_qpn, rq_psn, sq_psn, state};
        assert_eq!(c[&("state", state::STATE.name)], QpState::Rts.value());
        assert_eq!(c[&("state", state::TYPE.name)], b.qp_type.value());
        assert_eq!(c[&("sq_psn", sq_psn::PSN.name)], b.sq_psn);
        assert_eq!(c[&("pd", roce_regs::qp::pd::PD.name)], b.pd);
        if b.qp_type != QpType::Ud {
            assert_eq!(c[&("dest_qpn", dest_qpn::QPN.name)], b.dest_qpn);
            assert_eq!(c[&("rq_psn", rq_psn::PSN.name)], b.rq_psn);
        }
        // The same context through the host's CSR port.
        for reg in roce_regs::qp::BLOCK
            .registers
            .iter()
            .filter(|r| super::is_ctx(r))
        {
            let a = roce_regs::qp::BASE + reg.element_offset(q);
            let (d, resp) = s.host_read(a);
            assert_eq!(resp, roce_sim::axil::OKAY);
            assert_eq!(Some(d), r.regs.read(a), "QP {q} {} over CSR", reg.name);
        }
    }
    log
}

/// Requests that must each be rejected with their code, for a QP in Init
/// (`rtr` is a legal Init → RTR request for it).
pub fn illegal_rtr_requests(rtr: Request, n_qps: u32) -> Vec<(Request, ResultCode)> {
    vec![
        (Request { qpn: n_qps, ..rtr }, ResultCode::BadQpn),
        (
            Request {
                mask: rtr.mask | 1 << 2,
                ..rtr
            },
            ResultCode::UnknownMaskBit,
        ),
        (Request { qp_state: 7, ..rtr }, ResultCode::BadState),
        (
            Request {
                mask: rtr.mask | A::CurState.value(),
                cur_state: QpState::Rts.value(),
                ..rtr
            },
            ResultCode::CurStateMismatch,
        ),
        (
            Request {
                qp_state: QpState::Rts.value(),
                mask: A::State.value(),
                ..rtr
            },
            ResultCode::BadTransition,
        ),
        (
            Request {
                mask: rtr.mask & !A::RqPsn.value(),
                ..rtr
            },
            ResultCode::MissingAttr,
        ),
        (
            Request {
                mask: rtr.mask | A::SqPsn.value(),
                ..rtr
            },
            ResultCode::DisallowedAttr,
        ),
        (Request { path_mtu: 6, ..rtr }, ResultCode::BadPmtu),
        (
            Request {
                rq_psn: 1 << 24,
                ..rtr
            },
            ResultCode::BadRqPsn,
        ),
        (
            Request {
                dest_qpn: 1 << 24,
                ..rtr
            },
            ResultCode::BadDestQpn,
        ),
        (
            Request {
                min_rnr_timer: 32,
                ..rtr
            },
            ResultCode::BadMinRnrTimer,
        ),
        (
            Request {
                sgid_index: roce_regs::GID_COUNT,
                ..rtr
            },
            ResultCode::BadGidIndex,
        ),
        (
            Request {
                dmac_hi: 1 << 16,
                ..rtr
            },
            ResultCode::BadDmac,
        ),
        (
            Request {
                max_dest_rd_atomic: roce_regs::MAX_DEST_RD_ATOMIC + 1,
                ..rtr
            },
            ResultCode::BadMaxDestRdAtomic,
        ),
    ]
}

/// A QP brought to Init, then every request of [`illegal_rtr_requests`]:
/// each answers its code (the reference's too), the table stays
/// byte-identical; then the legal RTR request succeeds.
pub fn illegal_requests<S: Softcore>(s: &mut S, rng: &mut Rng) -> Vec<(ResultCode, Posted)> {
    boot(s).unwrap_or_else(|e| panic!("{e}"));
    let mut r = Reference::new();
    let n = r.n_qps();
    let q = rng.below(n as u64) as u32;
    let b = random_bringup(rng, q, QpType::Rc);
    let [(_, init), (_, rtr), _] = b.requests();
    assert_eq!(post_both(s, &mut r, "init", &init).result, ResultCode::Ok);
    let mut log = Vec::new();
    for (req, code) in illegal_rtr_requests(rtr, n) {
        let before = table(s, n);
        let p = post_both(s, &mut r, &format!("illegal: {code:?}"), &req);
        assert_eq!(p.result, code, "{req:?}");
        assert_eq!(table(s, n), before, "{code:?} changed the table");
        log.push((code, p));
    }
    assert_eq!(post_both(s, &mut r, "rtr", &rtr).result, ResultCode::Ok);
    log
}
