//! The host queues as a Rust model over [`AxiMem`]: send, receive and
//! completion rings in host memory in the formats of `roce_regs::queue`,
//! seen from both sides. The host side posts receive WQEs and polls CQEs (what the
//! host library will do); the NIC side is the reference behaviour of
//! `host_if`'s receive half: it answers `resp_exec`'s receive-WQE lookup
//! (`m_rq_req_*` → `s_rq_resp_*`) from the RQ ring and turns its
//! completions (`m_rcqe_*`) into CQEs. A hardware bench runs `host_if`
//! against the same memory and compares CQE bytes with this model's.

use crate::axi_mem::AxiMem;
use roce_regs::queue::{
    cqe, ring, swqe, Cqe, Payload, RecvWqe, SendFlag, SendWqe, Sge, WcFlag, WcOpcode, WcStatus,
    WrOpcode, CQE_SIZE, MAX_INLINE, RWQE_SIZE, SWQE_SIZE,
};

/// A ring in host memory: `2^log_size` entries of `entry` bytes at `base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ring {
    pub base: u64,
    pub log_size: u32,
    pub entry: u32,
    /// Producer index (free-running, 16 bits).
    pub pi: u32,
    /// Consumer index (free-running, 16 bits).
    pub ci: u32,
}

impl Ring {
    /// An empty ring.
    pub fn new(base: u64, log_size: u32, entry: u32) -> Ring {
        assert!(log_size <= roce_regs::queue::LOG_SIZE_MAX);
        assert_eq!(
            base % entry as u64,
            0,
            "ring base aligned to its entry size"
        );
        Ring {
            base,
            log_size,
            entry,
            pi: 0,
            ci: 0,
        }
    }

    /// Address of index `i`'s slot.
    pub fn addr(&self, i: u32) -> u64 {
        self.base + ring::slot(i, self.log_size) as u64 * self.entry as u64
    }
}

/// Why a ring operation did not happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingError {
    /// The producer found the ring full (a CQ overrun on the NIC side).
    Full,
}

/// A receive queue: the host posts, the NIC consumes.
#[derive(Clone, Debug)]
pub struct RecvQueue {
    pub ring: Ring,
}

impl RecvQueue {
    /// An empty RQ of `2^log_size` receive WQEs at `base`.
    pub fn new(base: u64, log_size: u32) -> RecvQueue {
        RecvQueue {
            ring: Ring::new(base, log_size, RWQE_SIZE),
        }
    }

    /// Host: write `w` at the producer index and ring the doorbell (the
    /// new producer index is `ring.pi`).
    pub fn post(&mut self, mem: &mut AxiMem, w: &RecvWqe) -> Result<(), RingError> {
        let r = &mut self.ring;
        if !ring::has_room(r.pi, r.ci, r.log_size) {
            return Err(RingError::Full);
        }
        mem.poke(r.addr(r.pi), &w.pack());
        r.pi = ring::next(r.pi);
        Ok(())
    }

    /// NIC: the WQE at the consumer index, if one is posted.
    pub fn head(&self, mem: &AxiMem) -> Option<(u32, RecvWqe)> {
        let r = &self.ring;
        (ring::fill(r.pi, r.ci) > 0).then(|| {
            (
                r.ci,
                RecvWqe::unpack(&mem.peek(r.addr(r.ci), RWQE_SIZE as usize)),
            )
        })
    }

    /// NIC: consume the head WQE.
    pub fn pop(&mut self) {
        assert!(ring::fill(self.ring.pi, self.ring.ci) > 0);
        self.ring.ci = ring::next(self.ring.ci);
    }
}

/// A completion queue: the NIC produces, the host polls by phase.
#[derive(Clone, Debug)]
pub struct CompletionQueue {
    pub ring: Ring,
}

impl CompletionQueue {
    /// An empty CQ of `2^log_size` CQEs at `base` (the memory there must be
    /// zero: a zeroed ring is empty under the phase rule).
    pub fn new(base: u64, log_size: u32) -> CompletionQueue {
        CompletionQueue {
            ring: Ring::new(base, log_size, CQE_SIZE),
        }
    }

    /// Zero the ring's memory.
    pub fn clear(&self, mem: &mut AxiMem) {
        let n = (CQE_SIZE as usize) << self.ring.log_size;
        mem.poke(self.ring.base, &vec![0u8; n]);
    }

    /// NIC: write `c` (its phase set here) at the producer index. The
    /// host's consumer index is `ring.ci` (the `db.cq_ci` doorbell).
    pub fn push(&mut self, mem: &mut AxiMem, c: &Cqe) -> Result<(), RingError> {
        let r = &mut self.ring;
        if !ring::has_room(r.pi, r.ci, r.log_size) {
            return Err(RingError::Full);
        }
        let mut c = *c;
        c.phase = cqe::phase(r.pi, r.log_size);
        mem.poke(r.addr(r.pi), &c.pack());
        r.pi = ring::next(r.pi);
        Ok(())
    }

    /// Host: the next CQE if the NIC has written it (phase rule; no
    /// producer index read), consumed.
    pub fn poll(&mut self, mem: &AxiMem) -> Option<Cqe> {
        let r = &mut self.ring;
        let c = Cqe::unpack(&mem.peek(r.addr(r.ci), CQE_SIZE as usize));
        (c.phase == cqe::phase(r.ci, r.log_size)).then(|| {
            r.ci = ring::next(r.ci);
            c
        })
    }
}

/// `resp_exec`'s receive-WQE answer (`s_rq_resp_{ok,key,va,len}`): its
/// first SGE, or not ok when the ring is empty or the WQE has no SGE.
pub fn rq_resp(w: Option<&RecvWqe>) -> (bool, u32, u64, u32) {
    match w {
        Some(w) if w.num_sge >= 1 => (true, w.sge[0].lkey, w.sge[0].addr, w.sge[0].length),
        _ => (false, 0, 0, 0),
    }
}

/// The CQE for one of `resp_exec`'s receive completions (`m_rcqe_*`: QPN,
/// status, BTH opcode, length, immediate or invalidated R_Key) of the WQE
/// `wr_id` at ring index `wqe_index`. `st` is the `RCQE_*` status mapped:
/// `RCQE_OK` → `success`, `RCQE_LOC_LEN` → `loc-len-err`,
/// `RCQE_LOC_QP_OP` → `loc-qp-op-err`, `RCQE_FAILED` (the QP failed with
/// the WQE in use; `resp_exec` does not say why) → `general-err`;
/// `RCQE_FLUSH`'s flushed WQEs → `wr-flush-err`.
pub fn rcqe_to_cqe(
    qpn: u32,
    st: WcStatus,
    bth_opcode: u8,
    len: u32,
    imm: u32,
    wr_id: u64,
    wqe_index: u32,
) -> Cqe {
    // RC and UC share the low five bits; UD SEND ONLY (+IMM) is 0x64/0x65.
    let (write_imm, imm_f, inv_f) = match bth_opcode & 0x1F {
        0x09 | 0x0B => (true, true, false),
        0x03 | 0x05 => (false, true, false),
        0x16 | 0x17 if bth_opcode < 0x20 => (false, false, true),
        _ => (false, false, false),
    };
    let ok = st == WcStatus::Success;
    let mut flags = 0;
    if ok && imm_f {
        flags |= WcFlag::WithImm.value() as u8;
    }
    if ok && inv_f {
        flags |= WcFlag::WithInv.value() as u8;
    }
    Cqe {
        wr_id,
        byte_len: if ok { len } else { 0 },
        imm_inv: if flags != 0 { imm } else { 0 },
        qpn,
        src_qp: 0,
        wqe_index: wqe_index as u16,
        status: st.value() as u8,
        opcode: if write_imm && ok {
            WcOpcode::RecvRdmaWithImm
        } else {
            WcOpcode::Recv
        }
        .value() as u8,
        flags,
        phase: 0,
    }
}

/// A send queue: the host posts, the NIC fetches and completes.
#[derive(Clone, Debug)]
pub struct SendQueue {
    pub ring: Ring,
}

impl SendQueue {
    /// An empty SQ of `2^log_size` send WQEs at `base`.
    pub fn new(base: u64, log_size: u32) -> SendQueue {
        SendQueue {
            ring: Ring::new(base, log_size, SWQE_SIZE),
        }
    }

    /// Host: write `w` at the producer index (the doorbell value is then
    /// `ring.pi`). `ring.ci` is what the host knows completed.
    pub fn post(&mut self, mem: &mut AxiMem, w: &SendWqe) -> Result<(), RingError> {
        let r = &mut self.ring;
        if !ring::has_room(r.pi, r.ci, r.log_size) {
            return Err(RingError::Full);
        }
        mem.poke(r.addr(r.pi), &w.pack());
        r.pi = ring::next(r.pi);
        Ok(())
    }
}

/// One work request as `host_if` hands it to `req_engine` (`s_wqe_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkRequest {
    pub qpn: u32,
    pub op: u64,
    pub signaled: bool,
    pub solicited: bool,
    pub fence: bool,
    pub wr_id: u64,
    pub lkey: u32,
    pub lva: u64,
    /// `lva` is a host physical address, read without an MR check: an
    /// inline WQE's data in its send-queue slot.
    pub phys: bool,
    pub len: u32,
    pub rva: u64,
    pub rkey: u32,
    pub imm: u32,
    pub swap: u64,
    pub compare: u64,
}

/// The transport's codes (`req_engine`'s `OP_*` and `ST_*`, `resp_exec`'s
/// `RCQE_*`) by name, as the `host_if` catalogue entry exports them (a
/// model's `PARAMS`).
pub type Codes = [(&'static str, u64)];

fn code(codes: &Codes, name: &str) -> u64 {
    codes
        .iter()
        .find(|c| c.0 == name)
        .unwrap_or_else(|| panic!("no code {name}"))
        .1
}

fn code_name(codes: &Codes, prefix: &str, v: u64) -> Option<&'static str> {
    codes
        .iter()
        .find(|c| c.0.starts_with(prefix) && c.1 == v)
        .map(|c| c.0)
}

/// `req_engine`'s op (`OP_*`) for an ibverbs send opcode, if supported.
pub fn wr_op(codes: &Codes, opcode: u8) -> Option<u64> {
    Some(code(
        codes,
        match WrOpcode::from_value(opcode.into())? {
            WrOpcode::RdmaWrite => "OP_WRITE",
            WrOpcode::RdmaWriteWithImm => "OP_WRITE_IMM",
            WrOpcode::Send => "OP_SEND",
            WrOpcode::SendWithImm => "OP_SEND_IMM",
            WrOpcode::RdmaRead => "OP_READ",
            WrOpcode::AtomicCmpAndSwp => "OP_CMP_SWAP",
            WrOpcode::AtomicFetchAndAdd => "OP_FETCH_ADD",
            WrOpcode::SendWithInv => "OP_SEND_INV",
        },
    ))
}

/// The work request `host_if` makes of send WQE `w` of QP `qpn`, held in
/// host memory at `slot`, or the error status it completes the WQE with
/// instead (a known opcode; one SGE at most, or inline data of a SEND or
/// WRITE within `MAX_INLINE`). Inline data is read where it is, in the
/// slot (`phys`): the host reuses a slot only after its WQE completed.
/// `signaled` is always set: every WQE completes to `host_if`, which
/// writes a CQE only when the host asked for one (`SendFlag::Signaled`) or
/// the status is an error.
pub fn swqe_to_wr(
    codes: &Codes,
    qpn: u32,
    w: &SendWqe,
    slot: u64,
) -> Result<WorkRequest, WcStatus> {
    let op = wr_op(codes, w.opcode).ok_or(WcStatus::LocQpOpErr)?;
    let (sge, phys) = match &w.payload {
        Payload::Inline { len, .. } => {
            if op >= code(codes, "OP_READ") || u32::from(*len) > MAX_INLINE {
                return Err(WcStatus::LocQpOpErr);
            }
            let data = Sge {
                addr: slot + swqe::INLINE_DATA.offset as u64,
                length: u32::from(*len),
                lkey: 0,
            };
            (data, true)
        }
        Payload::Sgl { num, .. } if *num > 1 => return Err(WcStatus::LocQpOpErr),
        Payload::Sgl { num: 0, .. } => Default::default(),
        Payload::Sgl { sge, .. } => (sge[0], false),
    };
    let f = |flag: SendFlag| w.flags & flag.value() as u8 != 0;
    Ok(WorkRequest {
        qpn,
        op,
        signaled: true,
        solicited: f(SendFlag::Solicited),
        fence: f(SendFlag::Fence),
        wr_id: w.wr_id,
        lkey: sge.lkey,
        lva: sge.addr,
        phys,
        len: sge.length,
        rva: w.remote_addr,
        rkey: w.rkey,
        imm: w.imm_inv,
        // ibverbs' `compare_add` is FETCH & ADD's addend; the transport
        // (and the AtomicETH) carry it in the swap/add field.
        swap: if op == code(codes, "OP_FETCH_ADD") {
            w.compare_add
        } else {
            w.swap
        },
        compare: if op == code(codes, "OP_FETCH_ADD") {
            0
        } else {
            w.compare_add
        },
    })
}

/// `WcStatus` of `req_engine`'s completion status `st` (`ST_*`).
pub fn req_status(codes: &Codes, st: u64) -> WcStatus {
    match code_name(codes, "ST_", st) {
        Some("ST_SUCCESS") => WcStatus::Success,
        Some("ST_LOC_LEN") => WcStatus::LocLenErr,
        Some("ST_LOC_PROT") => WcStatus::LocProtErr,
        Some("ST_FLUSH") => WcStatus::WrFlushErr,
        Some("ST_REM_INV_REQ") => WcStatus::RemInvReqErr,
        Some("ST_REM_ACCESS") => WcStatus::RemAccessErr,
        Some("ST_REM_OP") => WcStatus::RemOpErr,
        Some("ST_RETRY_EXC") => WcStatus::RetryExcErr,
        Some("ST_RNR_RETRY_EXC") => WcStatus::RnrRetryExcErr,
        _ => WcStatus::GeneralErr,
    }
}

/// `WcOpcode` of a send completion of `req_engine` op `op` (`OP_*`).
pub fn send_wc_opcode(codes: &Codes, op: u64) -> WcOpcode {
    match code_name(codes, "OP_", op) {
        Some("OP_WRITE" | "OP_WRITE_IMM") => WcOpcode::RdmaWrite,
        Some("OP_READ") => WcOpcode::RdmaRead,
        Some("OP_CMP_SWAP") => WcOpcode::CompSwap,
        Some("OP_FETCH_ADD") => WcOpcode::FetchAdd,
        _ => WcOpcode::Send,
    }
}

/// The CQE for one of `req_engine`'s send completions (`m_scqe_*`) of the
/// WQE at ring index `wqe_index` of QP `qpn`.
pub fn scqe_to_cqe(
    qpn: u32,
    st: WcStatus,
    op: WcOpcode,
    byte_len: u32,
    wr_id: u64,
    wqe_index: u32,
) -> Cqe {
    Cqe {
        wr_id,
        byte_len,
        qpn,
        wqe_index: wqe_index as u16,
        status: st.value() as u8,
        opcode: op.value() as u8,
        ..Default::default()
    }
}

/// `resp_exec`'s receive completion status (`RCQE_*`) as `host_if` maps it
/// (as [`rcqe_to_cqe`] documents).
pub fn rcqe_status(codes: &Codes, st: u64) -> WcStatus {
    match code_name(codes, "RCQE_", st) {
        Some("RCQE_OK") => WcStatus::Success,
        Some("RCQE_LOC_LEN") => WcStatus::LocLenErr,
        Some("RCQE_LOC_QP_OP") => WcStatus::LocQpOpErr,
        Some("RCQE_FLUSH") => WcStatus::WrFlushErr,
        _ => WcStatus::GeneralErr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axi_mem::AxiMemTiming;
    use roce_regs::queue::Sge;

    fn mem() -> AxiMem {
        AxiMem::new(8, 1, AxiMemTiming::FAST)
    }

    #[test]
    fn receive_ring_serves_wqes_in_order_and_wraps() {
        let mut m = mem();
        let mut rq = RecvQueue::new(0x1_0000, 2);
        let mut next_id = 0u64;
        let mut served = 0u64;
        for round in 0..10 {
            while rq.post(&mut m, &wqe(next_id)).is_ok() {
                next_id += 1;
            }
            assert_eq!(ring::fill(rq.ring.pi, rq.ring.ci), 4, "round {round}");
            for _ in 0..(1 + round % 4) {
                let (i, w) = rq.head(&m).unwrap();
                assert_eq!(i, served as u32 & 0xFFFF);
                assert_eq!(w.wr_id, served);
                assert_eq!(rq_resp(Some(&w)), (true, 7, 0x8000 + served, 64));
                rq.pop();
                served += 1;
            }
        }
        assert!(!rq_resp(None).0);
    }

    fn wqe(id: u64) -> RecvWqe {
        let mut w = RecvWqe {
            wr_id: id,
            num_sge: 1,
            ..Default::default()
        };
        w.sge[0] = Sge {
            addr: 0x8000 + id,
            length: 64,
            lkey: 7,
        };
        w
    }

    #[test]
    fn completion_ring_is_polled_by_phase_over_many_passes() {
        let mut m = mem();
        let mut cq = CompletionQueue::new(0x2_0000, 3);
        cq.clear(&mut m);
        assert_eq!(cq.poll(&m), None, "a zeroed ring is empty");
        let mut host = cq.clone();
        for n in 0..100u64 {
            let c = rcqe_to_cqe(5, WcStatus::Success, 0x05, n as u32, 0xABCD, n, n as u32);
            cq.push(&mut m, &c).unwrap();
            let got = host.poll(&m).unwrap();
            assert_eq!((got.wr_id, got.byte_len), (n, n as u32));
            assert_eq!(host.poll(&m), None, "entry {n}: nothing beyond");
            cq.ring.ci = host.ring.ci; // the cq_ci doorbell
        }
        // Overrun: the NIC refuses to overwrite what the host has not taken.
        for n in 0..8 {
            cq.push(
                &mut m,
                &Cqe {
                    wr_id: n,
                    ..Default::default()
                },
            )
            .unwrap();
        }
        assert_eq!(cq.push(&mut m, &Cqe::default()), Err(RingError::Full));
    }

    #[test]
    fn receive_completions_take_ibverbs_codes() {
        let c = rcqe_to_cqe(3, WcStatus::Success, 0x0B, 0, 0x1234, 9, 2);
        assert_eq!(c.opcode, WcOpcode::RecvRdmaWithImm.value() as u8);
        assert_eq!(c.flags, WcFlag::WithImm.value() as u8);
        assert_eq!(c.imm_inv, 0x1234);
        let c = rcqe_to_cqe(3, WcStatus::Success, 0x17, 100, 0x55, 9, 2);
        assert_eq!(c.opcode, WcOpcode::Recv.value() as u8);
        assert_eq!(c.flags, WcFlag::WithInv.value() as u8);
        let c = rcqe_to_cqe(3, WcStatus::Success, 0x24, 100, 0x55, 9, 2);
        assert_eq!((c.flags, c.imm_inv, c.byte_len), (0, 0, 100));
        let c = rcqe_to_cqe(3, WcStatus::LocLenErr, 0x04, 100, 0, 9, 2);
        assert_eq!(c.status, WcStatus::LocLenErr.value() as u8);
        assert_eq!(c.opcode, WcOpcode::Recv.value() as u8);
    }
}
