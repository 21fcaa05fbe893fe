//! Responder: the IBTA 9.7.5 checks in order (PSN, opcode sequence, opcode
//! valid, resources, length, rkey), execution, responder resources for
//! READ and atomic replays, and the response queue (ACK, NAK, RNR NAK,
//! READ responses, ATOMIC ACKs) that keeps PSN order.

use crate::counters::Counter;
use crate::memory::{sg_len, sg_write, Memory, SgError};
use crate::packet::{self, Packet};
use crate::qp::{recv_completion, Completion, Qp, QpType, RecvWr, WcOpcode, WcStatus};
use alloc::collections::VecDeque;
use alloc::vec;
use alloc::vec::Vec;
use roce_wire::mr::{Access, Request};
use roce_wire::opcode::{flags, OpKind, OpcodeInfo, Position, Transport};
use roce_wire::{AckCredits, AethRepr, AtomicAckEthRepr, ExtHeaders, NakCode, Psn, Syndrome};

/// The largest RETH DMA length (IBTA: 2^31).
const MAX_DMA_LEN: u32 = 1 << 31;

/// A message being received.
#[derive(Clone, Debug)]
pub(crate) enum InMsg {
    /// A SEND into a receive WQE, `off` bytes in.
    Send { wqe: RecvWr, off: u32 },
    /// An RDMA WRITE: next VA, bytes left, total.
    Write {
        va: u64,
        rkey: u32,
        resid: u32,
        total: u32,
    },
}

impl InMsg {
    fn kind(&self) -> OpKind {
        match self {
            InMsg::Send { .. } => OpKind::Send,
            InMsg::Write { .. } => OpKind::Write,
        }
    }
}

/// A responder resource: what a duplicate READ or atomic is answered from.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Resource {
    first: Psn,
    last: Psn,
    kind: ResKind,
}

#[derive(Copy, Clone, Debug)]
enum ResKind {
    Read { va: u64, rkey: u32, len: u32 },
    Atomic { orig: u64 },
}

/// A queued response.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Resp {
    /// ACK, NAK or RNR NAK.
    Ack {
        psn: Psn,
        syndrome: Syndrome,
        msn: u32,
    },
    /// ATOMIC ACK.
    AtomicAck { psn: Psn, orig: u64 },
    /// The rest of a READ response: next PSN, VA, bytes left, whether the
    /// next packet starts the response.
    Read {
        psn: Psn,
        va: u64,
        rkey: u32,
        resid: u32,
        first: bool,
    },
}

/// Responder state.
#[derive(Clone, Debug)]
pub(crate) struct Responder {
    pub epsn: Psn,
    pub msn: u32,
    /// One past the last SEND/WRITE/atomic PSN executed: a duplicate
    /// SEND/WRITE is re-ACKed with the PSN before it (rxe's `ack_psn`).
    ack_psn: Psn,
    /// A PSN sequence NAK (or, with `Config::silent_after_rnr_nak`, an RNR
    /// NAK) was sent for `epsn`: stay silent until it arrives.
    nak_sent: bool,
    cur: Option<InMsg>,
    /// UC: drop packets until the next FIRST or ONLY.
    uc_drop: bool,
    pub rq: VecDeque<RecvWr>,
    res: VecDeque<Resource>,
    out: VecDeque<Resp>,
}

impl Responder {
    pub fn new(epsn: Psn) -> Responder {
        Responder {
            epsn,
            msn: 0,
            ack_psn: epsn,
            nak_sent: false,
            cur: None,
            uc_drop: false,
            rq: VecDeque::new(),
            res: VecDeque::new(),
            out: VecDeque::new(),
        }
    }

    /// The receive WQE a SEND in progress holds.
    pub fn take_current_wqe(&mut self) -> Option<RecvWr> {
        match self.cur.take() {
            Some(InMsg::Send { wqe, .. }) => Some(wqe),
            _ => None,
        }
    }
}

/// Why a request fails its checks.
enum Fail {
    /// No receive WQE: RNR NAK (RC), drop (UC).
    Rnr,
    /// NAK with this code (RC) and complete the receive WQE in progress
    /// with this status; drop the message (UC).
    Nak(NakCode, WcStatus),
}

const INVALID: Fail = Fail::Nak(NakCode::InvalidRequest, WcStatus::RemInvReqErr);
const ACCESS: Fail = Fail::Nak(NakCode::RemoteAccessError, WcStatus::RemAccessErr);

impl Qp {
    /// A request packet (SEND, WRITE, READ request, atomic) arrived.
    pub(crate) fn on_request<M: Memory + ?Sized>(
        &mut self,
        pkt: &Packet,
        info: &OpcodeInfo,
        mem: &mut M,
    ) {
        let p = pkt.bth.psn;
        match self.attr.qp_type {
            QpType::Ud => return self.ud_request(pkt, mem),
            QpType::Rc => {
                let d = p.diff(self.resp.epsn);
                if d > 0 {
                    if self.resp.nak_sent {
                        self.counters.inc(Counter::DropOutOfSequence);
                    } else {
                        self.resp.nak_sent = true;
                        self.counters.inc(Counter::NakPsnSeqSent);
                        self.resp.out.push_back(Resp::Ack {
                            psn: self.resp.epsn,
                            syndrome: Syndrome::Nak(NakCode::PsnSequenceError),
                            msn: self.resp.msn,
                        });
                    }
                    return;
                }
                if d < 0 {
                    self.counters.inc(Counter::DuplicateRequest);
                    return self.duplicate(pkt, info);
                }
                self.resp.nak_sent = false;
            }
            QpType::Uc => {
                let d = p.diff(self.resp.epsn);
                if d < 0 {
                    // A stale duplicate: UC never executes a packet twice and
                    // a late copy does not break the message in progress
                    // (rxe takes a late FIRST/ONLY as a new message).
                    self.counters.inc(Counter::DuplicateRequest);
                    return;
                }
                if self.resp.uc_drop || d > 0 {
                    if matches!(info.position, Position::First | Position::Only) {
                        self.uc_abort();
                    } else {
                        self.uc_abort();
                        self.resp.uc_drop = true;
                        self.counters.inc(Counter::DropUcMessage);
                        return;
                    }
                }
            }
        }
        match self.check_and_execute(pkt, info, mem) {
            Ok(()) => {}
            Err(_) if self.attr.qp_type == QpType::Uc => {
                self.uc_abort();
                self.resp.uc_drop = true;
                self.counters.inc(Counter::DropUcMessage);
            }
            Err(Fail::Rnr) => {
                self.counters.inc(Counter::RnrNakSent);
                // rxe answers the packets behind an RNR-NAKed one with one
                // sequence NAK; optionally the RNR NAK silences them too.
                self.resp.nak_sent = self.cfg.silent_after_rnr_nak;
                self.resp.out.push_back(Resp::Ack {
                    psn: p,
                    syndrome: Syndrome::RnrNak(self.attr.min_rnr_timer),
                    msn: self.resp.msn,
                });
            }
            Err(Fail::Nak(code, status)) => self.responder_error(p, code, status),
        }
    }

    /// UC: forget the message in progress; its receive WQE is reused.
    fn uc_abort(&mut self) {
        self.resp.uc_drop = false;
        if let Some(w) = self.resp.take_current_wqe() {
            self.resp.rq.push_front(w);
        }
        self.resp.cur = None;
    }

    /// RC class A/C error: NAK `code` for `psn`, the receive WQE in
    /// progress completes with `status`, the QP goes to Error.
    fn responder_error(&mut self, psn: Psn, code: NakCode, status: WcStatus) {
        self.counters.inc(match code {
            NakCode::InvalidRequest => Counter::NakInvalidRequestSent,
            NakCode::RemoteAccessError => Counter::NakRemoteAccessSent,
            _ => Counter::NakRemoteOpSent,
        });
        self.resp.out.push_back(Resp::Ack {
            psn,
            syndrome: Syndrome::Nak(code),
            msn: self.resp.msn,
        });
        if let Some(w) = self.resp.take_current_wqe() {
            self.cq.push_back(recv_completion(w.wr_id, status));
        }
        self.enter_error();
    }

    /// Checks in IBTA order, then executes. Nothing is changed before every
    /// check has passed, except by execution itself.
    fn check_and_execute<M: Memory + ?Sized>(
        &mut self,
        pkt: &Packet,
        info: &OpcodeInfo,
        mem: &mut M,
    ) -> Result<(), Fail> {
        let p = pkt.bth.psn;
        let pos = info.position;
        let plen = pkt.payload.len() as u32;
        let pmtu = self.attr.pmtu.bytes();
        let pd = self.attr.pd;
        let kind = info.kind;
        // Opcode sequence.
        let seq_ok = match self.resp.cur.as_ref().map(InMsg::kind) {
            Some(k) => k == kind && matches!(pos, Position::Middle | Position::Last),
            None => matches!(pos, Position::First | Position::Only),
        };
        if !seq_ok {
            return Err(INVALID);
        }
        // Opcode valid for this QP.
        let need = match kind {
            OpKind::Send => Access::NONE,
            OpKind::Write => Access::REMOTE_WRITE,
            OpKind::ReadRequest => Access::REMOTE_READ,
            OpKind::CompareSwap | OpKind::FetchAdd => Access::REMOTE_ATOMIC,
            _ => return Err(INVALID),
        };
        if !self.attr.access.contains(need) {
            return Err(INVALID);
        }
        if matches!(pos, Position::First | Position::Middle) && pkt.bth.pad_count != 0 {
            return Err(INVALID);
        }
        // Resources.
        let rd_atomic = matches!(
            kind,
            OpKind::ReadRequest | OpKind::CompareSwap | OpKind::FetchAdd
        );
        if rd_atomic && self.attr.max_dest_rd_atomic == 0 {
            return Err(INVALID);
        }
        if info.flags() & flags::RECV_WQE != 0 && self.resp.rq.is_empty() {
            return Err(Fail::Rnr);
        }
        // Length.
        if self.attr.pmtu.check_len(pos, plen).is_err() {
            return Err(INVALID);
        }
        let reth = pkt.ext.reth;
        match kind {
            OpKind::Write => {
                let resid = match (pos, &self.resp.cur) {
                    (Position::First | Position::Only, _) => {
                        let r = reth.expect("checked against the opcode");
                        if r.dma_len > MAX_DMA_LEN {
                            return Err(INVALID);
                        }
                        r.dma_len
                    }
                    (_, Some(InMsg::Write { resid, .. })) => *resid,
                    _ => return Err(INVALID),
                };
                let ok = match pos {
                    Position::First | Position::Middle => resid > pmtu,
                    _ => plen == resid,
                };
                if !ok {
                    return Err(INVALID);
                }
            }
            OpKind::ReadRequest if reth.expect("checked").dma_len > MAX_DMA_LEN => {
                return Err(INVALID);
            }
            OpKind::CompareSwap | OpKind::FetchAdd
                if pkt.ext.atomic_eth.expect("checked").va & 7 != 0 =>
            {
                return Err(INVALID);
            }
            _ => {}
        }
        // R_Key (a zero-length WRITE or READ checks none).
        let check = |key: u32, access: Access, va: u64, len: u32| -> Result<(), Fail> {
            if len == 0 {
                return Ok(());
            }
            let req = Request {
                key,
                pd,
                access,
                va,
                len,
            };
            mem.translate(&req).map(|_| ()).map_err(|_| ACCESS)
        };
        match (kind, pos) {
            (OpKind::Write, Position::First | Position::Only) | (OpKind::ReadRequest, _) => {
                let r = reth.expect("checked");
                check(r.rkey, need, r.va, r.dma_len)?;
            }
            (OpKind::CompareSwap | OpKind::FetchAdd, _) => {
                let a = pkt.ext.atomic_eth.expect("checked");
                check(a.rkey, need, a.va, 8)?;
            }
            _ => {}
        }
        // Execute.
        let last = matches!(pos, Position::Last | Position::Only);
        match kind {
            OpKind::Send => {
                if matches!(pos, Position::First | Position::Only) {
                    let wqe = self.resp.rq.pop_front().expect("checked");
                    self.resp.cur = Some(InMsg::Send { wqe, off: 0 });
                }
                let Some(InMsg::Send { wqe, off }) = &mut self.resp.cur else {
                    unreachable!("opcode sequence checked")
                };
                match sg_write(mem, pd, &wqe.sgl, *off as u64, &pkt.payload) {
                    Ok(()) => *off += plen,
                    Err(SgError::TooShort) => {
                        return Err(Fail::Nak(NakCode::InvalidRequest, WcStatus::LocLenErr))
                    }
                    Err(SgError::Protection(_)) => {
                        return Err(Fail::Nak(
                            NakCode::RemoteOperationalError,
                            WcStatus::LocQpOpErr,
                        ))
                    }
                }
                if last {
                    if let Some(rkey) = pkt.ext.ieth {
                        if mem.invalidate(rkey).is_err() {
                            return Err(INVALID);
                        }
                    }
                    let Some(InMsg::Send { wqe, off }) = self.resp.cur.take() else {
                        unreachable!()
                    };
                    self.cq.push_back(Completion {
                        wr_id: wqe.wr_id,
                        status: WcStatus::Success,
                        opcode: WcOpcode::Recv,
                        byte_len: off,
                        imm: pkt.ext.immdt,
                        invalidated_rkey: pkt.ext.ieth,
                        src_qp: None,
                    });
                }
            }
            OpKind::Write => {
                if matches!(pos, Position::First | Position::Only) {
                    let r = reth.expect("checked");
                    self.resp.cur = Some(InMsg::Write {
                        va: r.va,
                        rkey: r.rkey,
                        resid: r.dma_len,
                        total: r.dma_len,
                    });
                }
                let Some(InMsg::Write {
                    va, rkey, resid, ..
                }) = &mut self.resp.cur
                else {
                    unreachable!("opcode sequence checked")
                };
                if plen > 0 {
                    mem.write(*rkey, pd, need, *va, &pkt.payload)
                        .map_err(|_| ACCESS)?;
                }
                *va = va.wrapping_add(plen as u64);
                *resid -= plen;
                if last {
                    let Some(InMsg::Write { total, .. }) = self.resp.cur.take() else {
                        unreachable!()
                    };
                    if let Some(imm) = pkt.ext.immdt {
                        let wqe = self.resp.rq.pop_front().expect("checked");
                        self.cq.push_back(Completion {
                            wr_id: wqe.wr_id,
                            status: WcStatus::Success,
                            opcode: WcOpcode::RecvRdmaWithImm,
                            byte_len: total,
                            imm: Some(imm),
                            invalidated_rkey: None,
                            src_qp: None,
                        });
                    }
                }
            }
            OpKind::ReadRequest => {
                let r = reth.expect("checked");
                let npkts = self.attr.pmtu.packets(r.dma_len as u64) as u32;
                self.add_resource(Resource {
                    first: p,
                    last: p.add(npkts - 1),
                    kind: ResKind::Read {
                        va: r.va,
                        rkey: r.rkey,
                        len: r.dma_len,
                    },
                });
                self.resp.msn = (self.resp.msn + 1) & Psn::MASK;
                self.resp.epsn = p.add(npkts);
                self.resp.out.push_back(Resp::Read {
                    psn: p,
                    va: r.va,
                    rkey: r.rkey,
                    resid: r.dma_len,
                    first: true,
                });
                return Ok(());
            }
            _ => {
                let a = pkt.ext.atomic_eth.expect("checked");
                let mut b = [0u8; 8];
                mem.read(a.rkey, pd, need, a.va, &mut b)
                    .map_err(|_| ACCESS)?;
                let orig = u64::from_le_bytes(b);
                let new = if kind == OpKind::CompareSwap {
                    if orig == a.compare {
                        a.swap_add
                    } else {
                        orig
                    }
                } else {
                    orig.wrapping_add(a.swap_add)
                };
                mem.write(a.rkey, pd, need, a.va, &new.to_le_bytes())
                    .map_err(|_| ACCESS)?;
                self.add_resource(Resource {
                    first: p,
                    last: p,
                    kind: ResKind::Atomic { orig },
                });
                self.resp.msn = (self.resp.msn + 1) & Psn::MASK;
                self.resp.epsn = p.next();
                self.resp.ack_psn = self.resp.epsn;
                self.resp.out.push_back(Resp::AtomicAck { psn: p, orig });
                return Ok(());
            }
        }
        if last {
            self.resp.msn = (self.resp.msn + 1) & Psn::MASK;
        }
        self.resp.epsn = p.next();
        self.resp.ack_psn = self.resp.epsn;
        if self.attr.qp_type == QpType::Rc && pkt.bth.ack_req {
            self.queue_ack(p);
        }
        Ok(())
    }

    /// Keeps the last `max_dest_rd_atomic` READ/atomic resources.
    fn add_resource(&mut self, r: Resource) {
        self.resp.res.push_back(r);
        while self.resp.res.len() > self.attr.max_dest_rd_atomic as usize {
            self.resp.res.pop_front();
        }
    }

    /// Queues a positive ACK for `psn`, merging it into an ACK queued and
    /// not yet sent (an ACK covers every PSN up to its own).
    fn queue_ack(&mut self, psn: Psn) {
        let msn = self.resp.msn;
        if let Some(Resp::Ack {
            psn: q,
            syndrome: Syndrome::Ack(_),
            msn: m,
        }) = self.resp.out.back_mut()
        {
            *q = psn;
            *m = msn;
            self.counters.inc(Counter::AckCoalesced);
            return;
        }
        self.resp.out.push_back(Resp::Ack {
            psn,
            syndrome: Syndrome::Ack(AckCredits::NONE),
            msn,
        });
    }

    /// RC duplicate (PSN behind ePSN): re-ACK a SEND/WRITE, replay a READ
    /// or atomic from its resource; never execute again.
    fn duplicate(&mut self, pkt: &Packet, info: &OpcodeInfo) {
        let p = pkt.bth.psn;
        let res = self
            .resp
            .res
            .iter()
            .rev()
            .find(|r| !p.is_before(r.first) && !p.is_after(r.last))
            .copied();
        match info.kind {
            OpKind::Send | OpKind::Write => self.queue_ack(self.resp.ack_psn.sub(1)),
            OpKind::ReadRequest => {
                let r = pkt.ext.reth.expect("checked");
                let Some(Resource {
                    first,
                    kind: ResKind::Read { va, rkey, len },
                    ..
                }) = res
                else {
                    self.counters.inc(Counter::DropDuplicateNoResource);
                    return;
                };
                let inside = r.va >= va
                    && r.va as u128 + r.dma_len as u128 <= va as u128 + len as u128
                    && r.rkey == rkey;
                if !inside {
                    self.counters.inc(Counter::DropDuplicateNoResource);
                    return;
                }
                self.counters.inc(Counter::ReadReplay);
                self.resp.out.push_back(Resp::Read {
                    psn: p,
                    va: r.va,
                    rkey,
                    resid: r.dma_len,
                    first: p == first,
                });
            }
            _ => match res {
                Some(Resource {
                    first,
                    kind: ResKind::Atomic { orig },
                    ..
                }) if first == p => {
                    self.counters.inc(Counter::AtomicReplay);
                    self.resp.out.push_back(Resp::AtomicAck { psn: p, orig });
                }
                _ => self.counters.inc(Counter::DropDuplicateNoResource),
            },
        }
    }

    /// UD: Q_Key, length, receive WQE; one packet is one message.
    fn ud_request<M: Memory + ?Sized>(&mut self, pkt: &Packet, mem: &mut M) {
        let deth = pkt.ext.deth.expect("checked against the opcode");
        if deth.qkey != self.attr.qkey {
            self.counters.inc(Counter::DropQkey);
            return;
        }
        let plen = pkt.payload.len();
        if self
            .attr
            .pmtu
            .check_len(Position::Only, plen as u32)
            .is_err()
        {
            self.counters.inc(Counter::DropUdLength);
            return;
        }
        let Some(wqe) = self.resp.rq.front() else {
            self.counters.inc(Counter::DropUdNoRecv);
            return;
        };
        if sg_len(&wqe.sgl) < plen as u64 {
            self.counters.inc(Counter::DropUdLength);
            return;
        }
        let wqe = self.resp.rq.pop_front().expect("a front");
        let status = match sg_write(mem, self.attr.pd, &wqe.sgl, 0, &pkt.payload) {
            Ok(()) => WcStatus::Success,
            Err(_) => WcStatus::LocProtErr,
        };
        self.cq.push_back(Completion {
            wr_id: wqe.wr_id,
            status,
            opcode: WcOpcode::Recv,
            byte_len: plen as u32,
            imm: pkt.ext.immdt,
            invalidated_rkey: None,
            src_qp: Some(deth.src_qp),
        });
    }

    /// The next queued response packet.
    pub(crate) fn next_response<M: Memory + ?Sized>(&mut self, mem: &mut M) -> Option<Packet> {
        let front = *self.resp.out.front()?;
        let pkey = self.attr.pkey;
        let dest = self.attr.dest_qpn;
        let ack_op =
            |kind: OpKind, pos: Position| packet::opcode(Transport::Rc, kind, pos, false, false);
        match front {
            Resp::Ack { psn, syndrome, msn } => {
                self.resp.out.pop_front();
                if let Syndrome::Ack(_) = syndrome {
                    self.counters.inc(Counter::AckSent);
                }
                let ext = ExtHeaders {
                    aeth: Some(AethRepr { syndrome, msn }),
                    ..ExtHeaders::default()
                };
                let op = ack_op(OpKind::Acknowledge, Position::Only);
                Some(packet::packet(
                    packet::bth(op, pkey, dest, false, psn),
                    ext,
                    Vec::new(),
                ))
            }
            Resp::AtomicAck { psn, orig } => {
                self.resp.out.pop_front();
                let ext = ExtHeaders {
                    aeth: Some(AethRepr {
                        syndrome: Syndrome::ACK_NO_CREDITS,
                        msn: self.resp.msn,
                    }),
                    atomic_ack_eth: Some(AtomicAckEthRepr {
                        orig_remote_data: orig,
                    }),
                    ..ExtHeaders::default()
                };
                let op = ack_op(OpKind::AtomicAcknowledge, Position::Only);
                Some(packet::packet(
                    packet::bth(op, pkey, dest, false, psn),
                    ext,
                    Vec::new(),
                ))
            }
            Resp::Read {
                psn,
                va,
                rkey,
                resid,
                first,
            } => {
                let pmtu = self.attr.pmtu.bytes();
                let n = resid.min(pmtu);
                let pos = match (first, resid > pmtu) {
                    (true, false) => Position::Only,
                    (true, true) => Position::First,
                    (false, true) => Position::Middle,
                    (false, false) => Position::Last,
                };
                let mut data = vec![0u8; n as usize];
                if n > 0
                    && mem
                        .read(rkey, self.attr.pd, Access::REMOTE_READ, va, &mut data)
                        .is_err()
                {
                    // The region changed under a READ in progress.
                    self.resp.out.pop_front();
                    self.responder_error(psn, NakCode::RemoteAccessError, WcStatus::RemAccessErr);
                    return self.next_response(mem);
                }
                if matches!(pos, Position::Last | Position::Only) {
                    self.resp.out.pop_front();
                } else {
                    self.resp.out[0] = Resp::Read {
                        psn: psn.next(),
                        va: va.wrapping_add(n as u64),
                        rkey,
                        resid: resid - n,
                        first: false,
                    };
                }
                let ext = ExtHeaders {
                    aeth: (pos != Position::Middle).then_some(AethRepr {
                        syndrome: Syndrome::ACK_NO_CREDITS,
                        msn: self.resp.msn,
                    }),
                    ..ExtHeaders::default()
                };
                let op = ack_op(OpKind::ReadResponse, pos);
                Some(packet::packet(
                    packet::bth(op, pkey, dest, false, psn),
                    ext,
                    data,
                ))
            }
        }
    }
}
