//! The RoCE v2 transport as a deterministic software model.
//!
//! One [`Qp`] is a whole endpoint of one queue pair — requester, responder
//! and completer — for RC, UC and UD, following IBTA 1.4 chapter 9 and the
//! facts of DESIGN §8 (Linux rxe's `rxe_req.c`, `rxe_resp.c` and
//! `rxe_comp.c` are the readable reference). It is the model every hardware
//! transport test is checked against, and a software peer a simulation can
//! put on a wire. Plain Rust: no I/O, no clocks, no randomness, `no_std`
//! with `alloc`. Everything protocol-shaped comes from `roce-wire`: [`Psn`]
//! arithmetic, the opcode table, AETH syndromes and timer tables, [`Pmtu`]
//! length rules, header reprs, frames, and the memory-region rules of
//! `roce_wire::mr`.
//!
//! # API
//! - [`Qp::new`] / [`Qp::modify`] (Reset → Init → RTR → RTS ⇄ SQD, SQE,
//!   Error) or [`Qp::connected`]; attributes in [`QpAttr`], model knobs in
//!   [`Config`] (AckReq every N packets, PSN window, CNP interval).
//! - [`Qp::post_send`] ([`SendWr`]: SEND, SEND with immediate or invalidate,
//!   WRITE, WRITE with immediate, READ, CMP_SWAP, FETCH_ADD) and
//!   [`Qp::post_recv`] ([`RecvWr`]); [`Qp::poll_cq`] gives [`Completion`]s.
//! - [`Qp::receive`]`(now, &Packet, ce, mem)` takes one received packet
//!   (`ce`: the frame carried ECN CE); [`Qp::poll_transmit`]`(now, mem)`
//!   gives the next packet to send (call until `None`);
//!   [`Qp::next_deadline`] is when to call again if nothing arrives.
//!   Time is a caller-supplied `u64` in nanoseconds.
//! - [`Packet`] is BTH + extension headers + payload;
//!   [`Packet::to_frame`] / [`Packet::from_frame`] convert to and from wire
//!   frames through `roce_wire::FrameRepr` / `roce_wire::Frame`.
//! - Memory is reached only through the [`Memory`] trait (`translate` by
//!   the `roce_wire::mr` rules, physical reads and writes); [`HostMemory`]
//!   is an MR table, page table and flat physical memory.
//! - [`Counters`] count every drop, NAK, retry and CNP by [`Counter`] reason.
//! - [`Endpoint`] is a software NIC for simulations: several QPs and one
//!   memory behind `receive_frame(now, bytes)` / `poll_transmit_frame(now)`
//!   (parser drops counted per `DropReason`, unknown QPNs counted, CE taken
//!   from the IP ECN field, one [`Path`] of Ethernet/IP headers per QP).
//!
//! Two endpoints: make two QPs whose `dest_qpn` names each other and whose
//! `sq_psn`/`rq_psn` agree, each with its own memory; loop: drain
//! `poll_transmit` of each into a link, deliver what the link delivers with
//! `receive`, advance time to the next delivery or `next_deadline`.
//! `tests/link.rs` does exactly that over a lossy link.
//!
//! # Tests
//! `src/tests.rs` has one test per rule on hand-built packets or a pair of
//! QPs; `tests/link.rs` runs two endpoints over a seeded faulty link (10^4
//! messages of every verb, every landing byte checked and written exactly
//! once; UC and UD too); `tests/fuzz.rs` feeds random and mutated packets;
//! `tests/rxe_capture.rs` checks responder and requester against Linux
//! rxe's own packets in `../shared/captures/rxe_v4.pcap`. Longer sweeps:
//! `cargo test --release -p roce-transport -- --ignored`.
//!
//! # Rules implemented
//! - **Responder** (RC), checks in IBTA 9.7.5 order: PSN (== ePSN executes;
//!   behind within 2^23 is a duplicate; ahead sends one PSN-sequence NAK
//!   carrying ePSN, then silence until ePSN arrives); opcode sequence
//!   (MIDDLE/LAST without FIRST, FIRST inside a message: invalid request);
//!   opcode valid for the QP's access flags, PadCnt 0 on FIRST/MIDDLE
//!   (invalid request); resources (max_dest_rd_atomic > 0: invalid request;
//!   a receive WQE for SEND FIRST/ONLY and WRITE with immediate: else RNR
//!   NAK with min_rnr_timer; packets behind it get one sequence NAK as in
//!   rxe, or none with [`Config::silent_after_rnr_nak`]); length
//!   (FIRST/MIDDLE exactly PMTU, LAST 1..=PMTU, ONLY ≤ PMTU, WRITE total
//!   against the RETH DMA length, DMA length ≤ 2^31, atomic VA 8-byte
//!   aligned: invalid request); rkey, PD,
//!   access and bounds through `roce_wire::mr::check` on the whole RETH
//!   range at a WRITE's first packet (zero length checks nothing): remote
//!   access error. Then execution: SEND into the receive WQE's scatter list
//!   (too small: invalid request, receive completion LocLenErr; a bad lkey:
//!   remote operational error, LocQpOpErr), invalidate on SEND with
//!   invalidate (a key that cannot be invalidated: invalid request), WRITE
//!   (with immediate consumes a receive WQE), READ responses at PMTU
//!   (FIRST/MIDDLE/LAST/ONLY, AETH on all but MIDDLE), CMP_SWAP and
//!   FETCH_ADD on little-endian 64-bit words answered with ATOMIC ACK.
//!   Every error NAK moves the QP to Error after the NAK is queued.
//! - **Responder resources**: the last max_dest_rd_atomic READs and atomics.
//!   A duplicate READ inside a resource (and inside its original range, same
//!   rkey) is replayed from its own PSN and VA — MIDDLE/LAST when it does not
//!   start the response, as rxe does; a duplicate atomic is answered with the
//!   saved original value and never executed again; a duplicate SEND/WRITE
//!   is re-ACKed with the PSN before the last SEND/WRITE/atomic executed.
//! - **ACKs**: AckReq forces an ACK; ACKs queued and not yet sent coalesce
//!   into the latest; MSN counts completed SENDs/WRITEs (last packet), each
//!   READ and each atomic; syndrome 0x1f (no credit information) as rxe.
//!   Responses leave in PSN order: an ACK never overtakes a READ response.
//! - **Requester**: segmentation at PMTU, 24-bit PSN wrap, a READ takes one
//!   PSN per response packet, AckReq on each message's last packet (and on
//!   every [`Config::ack_req_every`]-th packet), the PSN window,
//!   max_rd_atomic, fences, SQD drains.
//! - **Completer**: cumulative ACKs by PSN; implied ACKs (a READ response or
//!   ATOMIC ACK acknowledges everything before its request; an ACK or NAK
//!   acknowledges everything before its PSN); an ACK past a READ or atomic
//!   without its response means the response was lost and starts a
//!   go-back-N; PSN-sequence NAK: go-back-N from its PSN, a READ retried from
//!   the first missing response packet with VA and length moved on; one
//!   NAK-driven go-back-N per episode (duplicate NAKs ignored until
//!   progress). Local ACK timeout 4.096 µs·2^t (restarted on progress) and
//!   sequence NAKs use retry_cnt; RNR NAK: wait the NAK's RNR time, then
//!   go-back-N, using rnr_retry (7 = forever); both counters reset on
//!   progress. Exhaustion or an error NAK completes the request in error
//!   (RetryExcErr, RnrRetryExcErr, RemInvReqErr, RemAccessErr, RemOpErr),
//!   moves the QP to Error and flushes every other work request. Send
//!   completions come in send-queue order.
//! - **UC**: no ACKs, no retransmission, completion when the last packet is
//!   sent; the responder drops every packet of a message that lost one (or
//!   failed a check) until the next FIRST/ONLY ahead of ePSN, reusing the
//!   receive WQE; a packet behind ePSN is a stale duplicate and is dropped
//!   without disturbing the message in progress (rxe would take a late
//!   FIRST/ONLY as a new message and deliver it twice).
//! - **UD**: SEND only, one packet, DETH Q_Key checked (a WR Q_Key with bit
//!   31 set sends the QP's own), source QP in the receive completion; no
//!   receive WQE or too long: dropped and counted. No GRH is written into
//!   the receive buffer.
//! - **CNP**: a frame with ECN CE marks its QP; a CNP (opcode 0x81, BECN
//!   set) goes to the sender at most once per [`Config::cnp_interval`];
//!   marks inside the interval are counted and dropped.
//! - **Drops**: wrong DestQP, a QP state that takes no packets, P_Key
//!   mismatch, another transport's opcode, headers that do not match the
//!   opcode: dropped and counted, nothing written.
//!
//! # Choices where IBTA leaves room (or rxe differs)
//! - READ response data is read from memory when each response packet is
//!   built (as rxe and a hardware responder do), so a later WRITE may be
//!   seen by an earlier READ unless the requester fences; a replayed READ
//!   reads memory again. Retransmitted requests re-read their source
//!   buffers (verbs forbid changing them before completion).
//! - Atomic operands are little-endian 64-bit words in memory.
//! - `retry_cnt` = 7 means seven retries (rxe retries forever); only
//!   `rnr_retry` = 7 is forever (DESIGN §8).
//! - A SEND with invalidate whose key cannot be invalidated is answered
//!   with an invalid-request NAK (rxe completes the receive in error
//!   without a NAK).
//! - A duplicate READ must lie inside the original request's range (rxe
//!   narrows the range to the last duplicate's).
//!
//! # Not modelled
//! Shared receive queues, memory windows, RD and XRC, end-to-end credits
//! (ACKs carry code 31 and the requester ignores credits), alternate paths
//! and APM, the GRH of UD receives and the source address in UD
//! completions, unsignaled completions, congestion reaction to CNPs
//! (counted only).

#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod counters;
pub mod endpoint;
pub mod memory;
pub mod packet;
pub mod qp;
mod requester;
mod responder;

#[cfg(test)]
mod tests;

pub use counters::{Counter, Counters};
pub use endpoint::{Endpoint, FrameDrop, Path};
pub use memory::{sg_len, HostMemory, Memory, Sge};
pub use packet::Packet;
pub use qp::{
    pkey_match, Completion, Config, ModifyError, PostError, Qp, QpAttr, QpState, QpType, RecvWr,
    Remote, SendWr, UdDest, WcOpcode, WcStatus, WrOp,
};
pub use roce_wire::{Pmtu, Psn};
