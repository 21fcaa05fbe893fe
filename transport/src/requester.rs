//! Requester (segmentation, PSNs, AckReq, go-back-N) and completer (ACK,
//! NAK, RNR NAK, READ responses, ATOMIC ACKs, timers).

use crate::counters::Counter;
use crate::memory::{sg_read, sg_write, Memory, SgError};
use crate::packet::{self, Packet};
use crate::qp::{send_completion, Qp, QpState, QpType, WcStatus, WrOp};
use alloc::vec::Vec;
use roce_wire::opcode::{flags, OpKind, OpcodeInfo, Position};
use roce_wire::{AtomicEthRepr, DethRepr, ExtHeaders, NakCode, Psn, RethRepr, RnrTimer, Syndrome};

/// Where packet `k` of `n` sits in its message.
pub(crate) fn position(k: u32, n: u32) -> Position {
    match (k == 0, k + 1 == n) {
        (true, true) => Position::Only,
        (true, false) => Position::First,
        (false, true) => Position::Last,
        (false, false) => Position::Middle,
    }
}

/// Outcome of acknowledging every PSN before some PSN.
enum Acked {
    /// Done (possibly nothing new).
    Ok,
    /// A READ or atomic before that PSN has no response: it was lost.
    ResponseLost,
}

impl Qp {
    /// The next request packet, or `None` when nothing may be sent now.
    pub(crate) fn next_request<M: Memory + ?Sized>(
        &mut self,
        now: u64,
        mem: &mut M,
    ) -> Option<Packet> {
        if !matches!(self.state, QpState::Rts | QpState::Sqd) || self.req.rnr_until.is_some() {
            return None;
        }
        let rc = self.attr.qp_type == QpType::Rc;
        let pmtu = self.attr.pmtu.bytes();
        let idx = self.req.send_idx;
        let w = self.req.sq.get(idx)?;
        let rd_atomic = w.wr.op.is_rd_atomic();
        if w.first_psn.is_none() {
            // A new message.
            if self.state == QpState::Sqd
                || (rd_atomic && self.req.rd_atomic_out >= self.attr.max_rd_atomic as u32)
                || (w.wr.fence && self.req.rd_atomic_out > 0)
                || (rc
                    && self.outstanding()
                    && self.req.next_psn.forward_from(self.req.comp_psn) >= self.cfg.window)
            {
                return None;
            }
            let w = &mut self.req.sq[idx];
            w.first_psn = Some(self.req.next_psn);
            self.req.next_psn = self.req.next_psn.add(w.npkts);
            if rd_atomic {
                self.req.rd_atomic_out += 1;
            }
        }
        let w = &self.req.sq[idx];
        let first = w.first_psn.expect("assigned");
        let npkts = w.npkts;
        let k = self.req.send_pkt;
        let psn = first.add(k);
        if rc && k > 0 && psn.forward_from(self.req.comp_psn) >= self.cfg.window {
            return None;
        }
        let off = k as u64 * pmtu as u64;
        let (kind, pos) = if rd_atomic {
            (w.wr.op.kind(), Position::Only)
        } else {
            (w.wr.op.kind(), position(k, w.npkts))
        };
        let last = matches!(pos, Position::Last | Position::Only);
        let imm = match w.wr.op {
            WrOp::SendImm(i) | WrOp::WriteImm(_, i) if last => Some(i),
            _ => None,
        };
        let inv = match w.wr.op {
            WrOp::SendInv(r) if last => Some(r),
            _ => None,
        };
        let op = packet::opcode(
            self.attr.qp_type.transport(),
            kind,
            pos,
            imm.is_some(),
            inv.is_some(),
        );
        let info = op.info().expect("from the table");
        let mut ext = ExtHeaders {
            immdt: imm,
            ieth: inv,
            ..ExtHeaders::default()
        };
        let mut payload = Vec::new();
        match w.wr.op {
            WrOp::Send
            | WrOp::SendImm(_)
            | WrOp::SendInv(_)
            | WrOp::Write(_)
            | WrOp::WriteImm(..) => {
                let n = (w.len as u64 - off).min(pmtu as u64) as usize;
                match sg_read(mem, self.attr.pd, &w.wr.sgl, off, n) {
                    Ok(p) => payload = p,
                    Err(e) => {
                        self.fail_head_at(idx, e);
                        return None;
                    }
                }
                if let WrOp::Write(r) | WrOp::WriteImm(r, _) = w.wr.op {
                    if k == 0 {
                        ext.reth = Some(RethRepr {
                            va: r.va,
                            rkey: r.rkey,
                            dma_len: w.len,
                        });
                    }
                }
            }
            WrOp::Read(r) => {
                ext.reth = Some(RethRepr {
                    va: r.va.wrapping_add(off),
                    rkey: r.rkey,
                    dma_len: w.len - off as u32,
                });
            }
            WrOp::CmpSwap {
                remote,
                compare,
                swap,
            } => {
                ext.atomic_eth = Some(AtomicEthRepr {
                    va: remote.va,
                    rkey: remote.rkey,
                    swap_add: swap,
                    compare,
                });
            }
            WrOp::FetchAdd { remote, add } => {
                ext.atomic_eth = Some(AtomicEthRepr {
                    va: remote.va,
                    rkey: remote.rkey,
                    swap_add: add,
                    compare: 0,
                });
            }
        }
        let dest = match (self.attr.qp_type, w.wr.ud) {
            (QpType::Ud, Some(d)) => {
                let qkey = if d.qkey & 0x8000_0000 != 0 {
                    self.attr.qkey
                } else {
                    d.qkey
                };
                ext.deth = Some(DethRepr {
                    qkey,
                    src_qp: self.attr.qpn,
                });
                d.qpn
            }
            _ => self.attr.dest_qpn,
        };
        // AckReq on a message's last packet, on every N-th packet, and on
        // the packet that fills the window (else a message longer than the
        // window would wait for an ACK nobody asked for).
        let every = self.cfg.ack_req_every;
        let ack_req = rc
            && (info.flags() & flags::NEEDS_ACK != 0
                || (every > 0 && (k + 1) % every == 0)
                || psn.forward_from(self.req.comp_psn) + 1 >= self.cfg.window);
        let mut bth = packet::bth(op, self.attr.pkey, dest, ack_req, psn);
        bth.solicited = last && w.wr.solicited;
        let pkt = packet::packet(bth, ext, payload);

        // Advance the cursor.
        let done_with_wqe = last || rd_atomic;
        if done_with_wqe {
            self.req.send_idx += 1;
            self.req.send_pkt = 0;
        } else {
            self.req.send_pkt += 1;
        }
        // `sent_high`: one past the last PSN a sent request covers (a READ
        // request covers its response PSNs); responses beyond it are bogus.
        if psn.is_before(self.req.sent_high) {
            self.counters.inc(Counter::RequestRetransmitted);
        } else {
            self.counters.inc(Counter::RequestSent);
        }
        let covered = if rd_atomic {
            first.add(npkts)
        } else {
            psn.next()
        };
        if covered.is_after(self.req.sent_high) {
            self.req.sent_high = covered;
        }
        if rc {
            if self.req.ack_deadline.is_none() {
                self.req.ack_deadline = self.attr.timeout.nanos().map(|t| now + t);
            }
        } else if done_with_wqe {
            // UC and UD complete once the last packet is handed to the wire.
            let w = self.req.sq.pop_front().expect("the head");
            self.req.send_idx = 0;
            self.req.comp_psn = self.req.next_psn;
            self.cq.push_back(send_completion(&w));
        }
        Some(pkt)
    }

    /// A local gather failed for the WQE at `idx` (the head, or one after
    /// it): complete it and everything queued with errors.
    fn fail_head_at(&mut self, idx: usize, e: SgError) {
        let status = match e {
            SgError::TooShort => WcStatus::LocLenErr,
            SgError::Protection(_) => WcStatus::LocProtErr,
        };
        // Earlier WQEs are still outstanding; the spec completes the failed
        // request in error and flushes; the earlier ones flush too.
        for _ in 0..idx {
            if let Some(w) = self.req.sq.pop_front() {
                self.cq.push_back(crate::qp::flush(&w.wr));
            }
        }
        self.fail_head(status);
    }

    /// Restarts transmission from the oldest unacknowledged PSN.
    pub(crate) fn go_back(&mut self, now: u64) {
        self.req.send_idx = 0;
        self.req.send_pkt = match self.req.sq.front().and_then(|w| w.first_psn) {
            Some(f) => self.req.comp_psn.forward_from(f),
            None => 0,
        };
        self.req.ack_deadline = if self.outstanding() {
            self.attr.timeout.nanos().map(|t| now + t)
        } else {
            None
        };
    }

    /// Acknowledges every PSN before `q`: completes SEND/WRITE messages that
    /// end before it, moves the unacknowledged PSN forward.
    fn ack_before(&mut self, now: u64, q: Psn) -> Acked {
        let before = self.req.comp_psn;
        let mut result = Acked::Ok;
        while let Some(w) = self.req.sq.front() {
            let (Some(first), Some(last)) = (w.first_psn, w.last_psn()) else {
                break;
            };
            if !last.is_before(q) {
                if !w.wr.op.is_rd_atomic() && q.is_after(self.req.comp_psn) {
                    self.req.comp_psn = q;
                } else if first.is_after(self.req.comp_psn) {
                    self.req.comp_psn = first;
                }
                break;
            }
            if w.wr.op.is_rd_atomic() {
                if first.is_after(self.req.comp_psn) {
                    self.req.comp_psn = first;
                }
                result = Acked::ResponseLost;
                break;
            }
            self.complete_head();
        }
        if self.req.sq.front().is_none_or(|w| w.first_psn.is_none()) {
            self.req.comp_psn = self.req.next_psn;
        }
        if self.req.comp_psn.is_after(before) {
            self.progress(now);
        }
        result
    }

    /// Completes the send queue's head successfully.
    fn complete_head(&mut self) {
        let w = self.req.sq.pop_front().expect("a head");
        if w.wr.op.is_rd_atomic() {
            self.req.rd_atomic_out -= 1;
        }
        if self.req.send_idx > 0 {
            self.req.send_idx -= 1;
        } else {
            self.req.send_pkt = 0;
        }
        self.cq.push_back(send_completion(&w));
    }

    /// Forward progress: counters reset, the timer restarts.
    fn progress(&mut self, now: u64) {
        self.req.retry_left = self.attr.retry_cnt;
        self.req.rnr_left = self.attr.rnr_retry;
        self.req.retry_started = false;
        // The cursor never points at acknowledged packets.
        if self.req.send_idx == 0 {
            if let Some(f) = self.req.sq.front().and_then(|w| w.first_psn) {
                let acked = self.req.comp_psn.forward_from(f);
                // (A READ not yet re-sent asks only for what is missing.)
                if self.req.send_pkt < acked {
                    self.req.send_pkt = acked;
                }
            }
        }
        self.req.ack_deadline = if self.outstanding() && self.req.rnr_until.is_none() {
            self.attr.timeout.nanos().map(|t| now + t)
        } else {
            None
        };
    }

    /// Go-back-N after a NAK or an implied NAK: once per episode without
    /// progress, counted against retry_cnt.
    fn retry_after_nak(&mut self, now: u64, why: Counter) {
        if self.req.retry_started {
            self.counters.inc(Counter::RetryIgnored);
            return;
        }
        if self.req.retry_left == 0 {
            self.counters.inc(Counter::RetryExceeded);
            self.fail_head(WcStatus::RetryExcErr);
            return;
        }
        self.req.retry_left -= 1;
        self.req.retry_started = true;
        self.counters.inc(why);
        self.go_back(now);
    }

    /// A response (ACK/NAK, READ response, ATOMIC ACK) arrived.
    pub(crate) fn on_response<M: Memory + ?Sized>(
        &mut self,
        now: u64,
        pkt: &Packet,
        info: &OpcodeInfo,
        mem: &mut M,
    ) {
        if !matches!(self.state, QpState::Rts | QpState::Sqd) {
            self.counters.inc(Counter::DropQpState);
            return;
        }
        let p = pkt.bth.psn;
        if !p.is_before(self.req.sent_high) {
            self.counters.inc(Counter::DropUnexpectedResponse);
            return;
        }
        // A READ response or ATOMIC ACK carries an ACK syndrome, never a NAK.
        let carries_nak = info.kind != OpKind::Acknowledge
            && pkt
                .ext
                .aeth
                .is_some_and(|a| !matches!(a.syndrome, Syndrome::Ack(_)));
        if carries_nak {
            self.counters.inc(Counter::DropUnexpectedResponse);
            return;
        }
        match info.kind {
            OpKind::Acknowledge => {
                let syndrome = pkt.ext.aeth.expect("checked against the opcode").syndrome;
                self.on_ack(now, p, syndrome);
            }
            OpKind::ReadResponse => self.on_read_response(now, pkt, info, mem),
            _ => self.on_atomic_ack(now, pkt, mem),
        }
    }

    fn on_ack(&mut self, now: u64, p: Psn, syndrome: Syndrome) {
        let stale = p.is_before(self.req.comp_psn);
        if stale {
            self.counters.inc(Counter::DropStaleResponse);
            return;
        }
        match syndrome {
            Syndrome::Ack(_) => {
                if let Acked::ResponseLost = self.ack_before(now, p.next()) {
                    self.retry_after_nak(now, Counter::RetryImplied);
                }
            }
            Syndrome::Nak(NakCode::PsnSequenceError) => {
                let _ = self.ack_before(now, p);
                if self.req.rnr_until.is_some() {
                    // The packets behind an RNR-NAKed one: the RNR wait
                    // already decides when to go back.
                    self.counters.inc(Counter::RetryIgnored);
                } else {
                    self.retry_after_nak(now, Counter::RetrySeqNak);
                }
            }
            Syndrome::RnrNak(t) => {
                let _ = self.ack_before(now, p);
                self.on_rnr_nak(now, t);
            }
            Syndrome::Nak(code) => {
                let _ = self.ack_before(now, p);
                self.counters.inc(Counter::NakErrorReceived);
                let status = match code {
                    NakCode::InvalidRequest => WcStatus::RemInvReqErr,
                    NakCode::RemoteAccessError => WcStatus::RemAccessErr,
                    _ => WcStatus::RemOpErr,
                };
                self.fail_head(status);
            }
            Syndrome::Reserved(_) => self.counters.inc(Counter::DropUnexpectedResponse),
        }
    }

    fn on_rnr_nak(&mut self, now: u64, t: RnrTimer) {
        self.counters.inc(Counter::RnrNakReceived);
        if self.req.rnr_until.is_some() {
            return;
        }
        if self.attr.rnr_retry != 7 {
            if self.req.rnr_left == 0 {
                self.counters.inc(Counter::RnrRetryExceeded);
                self.fail_head(WcStatus::RnrRetryExcErr);
                return;
            }
            self.req.rnr_left -= 1;
        }
        self.req.rnr_until = Some(now + t.micros() as u64 * 1000);
        // Nothing is sent until the wait ends; then go-back-N from the NAK.
        self.req.ack_deadline = None;
    }

    /// The send-queue index of the sent message holding PSN `p`.
    fn wqe_of(&self, p: Psn) -> Option<usize> {
        self.req
            .sq
            .iter()
            .position(|w| match (w.first_psn, w.last_psn()) {
                (Some(f), Some(l)) => !p.is_before(f) && !p.is_after(l),
                _ => false,
            })
    }

    fn on_read_response<M: Memory + ?Sized>(
        &mut self,
        now: u64,
        pkt: &Packet,
        info: &OpcodeInfo,
        mem: &mut M,
    ) {
        let p = pkt.bth.psn;
        if p.is_before(self.req.comp_psn) {
            self.counters.inc(Counter::DropStaleResponse);
            return;
        }
        let Some(idx) = self.wqe_of(p) else {
            self.counters.inc(Counter::DropUnexpectedResponse);
            return;
        };
        let w = &self.req.sq[idx];
        let WrOp::Read(_) = w.wr.op else {
            self.counters.inc(Counter::DropUnexpectedResponse);
            return;
        };
        let first = w.first_psn.expect("sent");
        let (npkts, len) = (w.npkts, w.len);
        let k = p.forward_from(first);
        let last = k + 1 == npkts;
        let pmtu = self.attr.pmtu.bytes();
        let pos_ok = match (k == 0, last) {
            (true, true) => info.position == Position::Only,
            (true, false) => info.position == Position::First,
            // A partial retry may be answered as a continuation (rxe) or
            // as a new response.
            (false, true) => matches!(info.position, Position::Last | Position::Only),
            (false, false) => matches!(info.position, Position::Middle | Position::First),
        };
        let want_len = if last { len - k * pmtu } else { pmtu };
        if !pos_ok || pkt.payload.len() != want_len as usize {
            self.counters.inc(Counter::DropUnexpectedResponse);
            return;
        }
        // A READ response acknowledges every request before the READ.
        if !self.in_order_response(now, first, p) {
            return;
        }
        let w = &self.req.sq[0];
        let sgl = w.wr.sgl.clone();
        if let Err(e) = sg_write(
            mem,
            self.attr.pd,
            &sgl,
            k as u64 * pmtu as u64,
            &pkt.payload,
        ) {
            let status = match e {
                SgError::TooShort => WcStatus::LocLenErr,
                SgError::Protection(_) => WcStatus::LocProtErr,
            };
            self.fail_head(status);
            return;
        }
        self.req.comp_psn = p.next();
        if last {
            self.complete_head();
            if self.req.sq.front().is_none_or(|w| w.first_psn.is_none()) {
                self.req.comp_psn = self.req.next_psn;
            }
        }
        self.progress(now);
    }

    /// A READ response or ATOMIC ACK at `p` for the request starting at
    /// `first`: its implied ACK of every earlier request, then whether it is
    /// the response expected next. False (counted) when it is not: an
    /// implied ACK that shows an earlier response lost starts a retry.
    fn in_order_response(&mut self, now: u64, first: Psn, p: Psn) -> bool {
        if let Acked::ResponseLost = self.ack_before(now, first) {
            self.counters.inc(Counter::DropResponseOutOfOrder);
            self.retry_after_nak(now, Counter::RetryImplied);
            return false;
        }
        if p != self.req.comp_psn {
            self.counters.inc(Counter::DropResponseOutOfOrder);
            return false;
        }
        true
    }

    fn on_atomic_ack<M: Memory + ?Sized>(&mut self, now: u64, pkt: &Packet, mem: &mut M) {
        let p = pkt.bth.psn;
        if p.is_before(self.req.comp_psn) {
            self.counters.inc(Counter::DropStaleResponse);
            return;
        }
        let Some(idx) = self.wqe_of(p) else {
            self.counters.inc(Counter::DropUnexpectedResponse);
            return;
        };
        if !matches!(
            self.req.sq[idx].wr.op,
            WrOp::CmpSwap { .. } | WrOp::FetchAdd { .. }
        ) {
            self.counters.inc(Counter::DropUnexpectedResponse);
            return;
        }
        if !self.in_order_response(now, p, p) {
            return;
        }
        let orig = pkt
            .ext
            .atomic_ack_eth
            .expect("checked against the opcode")
            .orig_remote_data;
        let sgl = self.req.sq[0].wr.sgl.clone();
        if let Err(e) = sg_write(mem, self.attr.pd, &sgl, 0, &orig.to_le_bytes()) {
            let status = match e {
                SgError::TooShort => WcStatus::LocLenErr,
                SgError::Protection(_) => WcStatus::LocProtErr,
            };
            self.fail_head(status);
            return;
        }
        self.req.comp_psn = p.next();
        self.complete_head();
        if self.req.sq.front().is_none_or(|w| w.first_psn.is_none()) {
            self.req.comp_psn = self.req.next_psn;
        }
        self.progress(now);
    }
}
