//! One test per transport rule (DESIGN §8, issue 35 §3), each against
//! hand-built packets or a pair of QPs over a perfect link whose losses the
//! test chooses.

use crate::*;
use roce_wire::mr::{self, Access};
use roce_wire::opcode::TABLE;
use roce_wire::{
    AethRepr, AtomicEthRepr, BthRepr, DethRepr, ExtHeaders, LocalAckTimeout, NakCode, Opcode,
    RethRepr, RnrTimer, Syndrome,
};
use std::vec;
use std::vec::Vec;

const A: u32 = 0x11;
const B: u32 = 0x22;
const A_PSN: u32 = 100;
const B_PSN: u32 = 5000;
const PD: u16 = 7;

/// The opcode named `name` in the one table.
fn op(name: &str) -> Opcode {
    Opcode(TABLE.iter().find(|i| i.name == name).expect(name).code)
}

fn name(p: &Packet) -> &'static str {
    p.info().expect("known").name
}

fn pkt(
    opname: &str,
    dest: u32,
    psn: u32,
    ack_req: bool,
    ext: ExtHeaders,
    payload: Vec<u8>,
) -> Packet {
    let bth = BthRepr {
        opcode: op(opname),
        solicited: false,
        mig_req: false,
        pad_count: roce_wire::pmtu::pad_count(payload.len()),
        tver: 0,
        pkey: 0xFFFF,
        fecn: false,
        becn: false,
        dest_qp: dest,
        ack_req,
        psn: Psn::new(psn),
    };
    Packet { bth, ext, payload }
}

fn reth(va: u64, rkey: u32, dma_len: u32) -> ExtHeaders {
    ExtHeaders {
        reth: Some(RethRepr { va, rkey, dma_len }),
        ..ExtHeaders::default()
    }
}

fn atomic(va: u64, rkey: u32, swap_add: u64, compare: u64) -> ExtHeaders {
    ExtHeaders {
        atomic_eth: Some(AtomicEthRepr {
            va,
            rkey,
            swap_add,
            compare,
        }),
        ..ExtHeaders::default()
    }
}

fn aeth(p: &Packet) -> AethRepr {
    p.ext.aeth.expect("an AETH")
}

fn attrs(t: QpType) -> (QpAttr, QpAttr) {
    let mut a = QpAttr::new(t, A, B);
    a.pmtu = Pmtu::Mtu256;
    a.sq_psn = Psn::new(A_PSN);
    a.rq_psn = Psn::new(B_PSN);
    a.pd = PD;
    a.timeout = LocalAckTimeout::new(4).unwrap();
    a.min_rnr_timer = RnrTimer(1);
    a.qkey = 0x1111_0000;
    let mut b = a;
    b.qpn = B;
    b.dest_qpn = A;
    b.sq_psn = Psn::new(B_PSN);
    b.rq_psn = Psn::new(A_PSN);
    b.qkey = 0x2222_0000;
    (a, b)
}

struct Side {
    qp: Qp,
    mem: HostMemory,
}

impl Side {
    fn new(attr: QpAttr) -> Side {
        Side {
            qp: Qp::connected(attr, Config::default()),
            mem: HostMemory::new(64, 4096),
        }
    }
    fn alloc(&mut self, len: u64) -> (u32, u64) {
        self.mem.alloc(PD, Access::ALL, len)
    }
    fn tx(&mut self, now: u64) -> Vec<Packet> {
        let mut v = Vec::new();
        while let Some(p) = self.qp.poll_transmit(now, &mut self.mem) {
            v.push(p);
        }
        v
    }
    fn rx(&mut self, now: u64, pkts: &[Packet]) {
        for p in pkts {
            self.qp.receive(now, p, false, &mut self.mem);
        }
    }
    fn cqes(&mut self) -> Vec<Completion> {
        core::iter::from_fn(|| self.qp.poll_cq()).collect()
    }
    fn post_recv(&mut self, wr_id: u64, len: u32) -> (u32, u64) {
        let (k, va) = self.alloc(len as u64);
        self.qp
            .post_recv(RecvWr {
                wr_id,
                sgl: vec![Sge {
                    addr: va,
                    len,
                    lkey: k,
                }],
            })
            .unwrap();
        (k, va)
    }
    /// A local buffer holding `data`, as a one-element list.
    fn buf(&mut self, data: &[u8]) -> Vec<Sge> {
        let (k, va) = self.alloc(data.len().max(1) as u64);
        self.mem.poke(k, va, data);
        vec![Sge {
            addr: va,
            len: data.len() as u32,
            lkey: k,
        }]
    }
}

struct Pair {
    a: Side,
    b: Side,
    now: u64,
}

impl Pair {
    fn new(t: QpType) -> Pair {
        let (a, b) = attrs(t);
        Pair::of(a, b)
    }
    /// Two endpoints with these attributes, at time 0.
    fn of(a: QpAttr, b: QpAttr) -> Pair {
        Pair {
            a: Side::new(a),
            b: Side::new(b),
            now: 0,
        }
    }
    /// Exchanges packets over a perfect link until both sides are quiet,
    /// letting timers fire; `drop(from_a, packet)` loses a packet.
    fn run_with(&mut self, mut drop: impl FnMut(bool, &Packet) -> bool) {
        for _ in 0..10_000 {
            let from_a = self.a.tx(self.now);
            let from_b = self.b.tx(self.now);
            if from_a.is_empty() && from_b.is_empty() {
                let next = [self.a.qp.next_deadline(), self.b.qp.next_deadline()]
                    .into_iter()
                    .flatten()
                    .min();
                match next {
                    Some(t) => self.now = self.now.max(t),
                    None => return,
                }
                continue;
            }
            self.now += 1000;
            for p in from_a.iter().filter(|p| !drop(true, p)) {
                self.b.qp.receive(self.now, p, false, &mut self.b.mem);
            }
            for p in from_b.iter().filter(|p| !drop(false, p)) {
                self.a.qp.receive(self.now, p, false, &mut self.a.mem);
            }
        }
        panic!("no quiescence");
    }
    fn run(&mut self) {
        self.run_with(|_, _| false)
    }
}

fn data(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect()
}

#[test]
fn every_verb_lossless() {
    let mut p = Pair::new(QpType::Rc);
    let (rk, rva) = p.b.alloc(4096);
    let (recv_key, recv_va) = p.b.post_recv(1, 2000);
    p.b.mem.poke(rk, rva + 2048, &data(700, 9));
    p.b.mem.poke(rk, rva + 4000, &40u64.to_le_bytes());
    p.b.mem.poke(rk, rva + 4008, &5u64.to_le_bytes());
    let s = p.a.buf(&data(600, 1));
    p.a.qp
        .post_send(SendWr::new(10, WrOp::SendImm(0xabcd), s))
        .unwrap();
    let w = p.a.buf(&data(513, 2));
    let remote = Remote { va: rva, rkey: rk };
    p.a.qp
        .post_send(SendWr::new(11, WrOp::Write(remote), w))
        .unwrap();
    let r = p.a.buf(&[0; 700]);
    let read_into = r[0];
    let rremote = Remote {
        va: rva + 2048,
        rkey: rk,
    };
    p.a.qp
        .post_send(SendWr::new(12, WrOp::Read(rremote), r))
        .unwrap();
    let f = p.a.buf(&[0; 8]);
    let fa_into = f[0];
    let fremote = Remote {
        va: rva + 4000,
        rkey: rk,
    };
    p.a.qp
        .post_send(SendWr::new(
            13,
            WrOp::FetchAdd {
                remote: fremote,
                add: 2,
            },
            f,
        ))
        .unwrap();
    let c = p.a.buf(&[0; 8]);
    let cs_into = c[0];
    let cremote = Remote {
        va: rva + 4008,
        rkey: rk,
    };
    p.a.qp
        .post_send(SendWr::new(
            14,
            WrOp::CmpSwap {
                remote: cremote,
                compare: 5,
                swap: 77,
            },
            c,
        ))
        .unwrap();
    p.run();
    let done = p.a.cqes();
    assert_eq!(
        done.iter().map(|c| c.wr_id).collect::<Vec<_>>(),
        [10, 11, 12, 13, 14]
    );
    assert!(
        done.iter().all(|c| c.status == WcStatus::Success),
        "{done:?}"
    );
    assert_eq!(done[2].byte_len, 700);
    let got = p.b.cqes();
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].wr_id, got[0].byte_len, got[0].imm),
        (1, 600, Some(0xabcd))
    );
    assert_eq!(p.b.mem.peek(recv_key, recv_va, 600), data(600, 1));
    assert_eq!(p.b.mem.peek(rk, rva, 513), data(513, 2));
    assert_eq!(
        p.a.mem.peek(read_into.lkey, read_into.addr, 700),
        data(700, 9)
    );
    assert_eq!(
        p.a.mem.peek(fa_into.lkey, fa_into.addr, 8),
        40u64.to_le_bytes()
    );
    assert_eq!(p.b.mem.peek(rk, rva + 4000, 8), 42u64.to_le_bytes());
    assert_eq!(
        p.a.mem.peek(cs_into.lkey, cs_into.addr, 8),
        5u64.to_le_bytes()
    );
    assert_eq!(p.b.mem.peek(rk, rva + 4008, 8), 77u64.to_le_bytes());
    // SEND 3 pkts + WRITE 3 + READ 3 PSNs + 2 atomics.
    assert_eq!(p.a.qp.next_psn(), Psn::new(A_PSN + 11));
    assert_eq!(p.b.qp.epsn(), Psn::new(A_PSN + 11));
    assert_eq!(p.b.qp.msn(), 5);
}

/// Responder B alone, with a remote-access region and `recvs` receive WQEs.
fn responder(recvs: u64) -> (Side, u32, u64) {
    let (_, b) = attrs(QpType::Rc);
    let mut s = Side::new(b);
    let (k, va) = s.alloc(8192);
    for i in 0..recvs {
        s.post_recv(100 + i, 4096);
    }
    (s, k, va)
}

#[test]
fn dup_send_reacked_not_reexecuted() {
    let (mut b, _, _) = responder(2);
    let send = pkt(
        "RC_SEND_ONLY",
        B,
        A_PSN,
        true,
        ExtHeaders::default(),
        data(40, 1),
    );
    b.rx(0, core::slice::from_ref(&send));
    let out = b.tx(0);
    assert_eq!(out.len(), 1);
    assert_eq!(
        (name(&out[0]), out[0].bth.psn),
        ("RC_ACKNOWLEDGE", Psn::new(A_PSN))
    );
    assert_eq!(b.cqes().len(), 1);
    assert_eq!(b.qp.rq_len(), 1);
    // The same packet again: re-ACKed, no second receive completion, the
    // second WQE untouched.
    b.rx(1, &[send]);
    let out = b.tx(1);
    assert_eq!(out.len(), 1);
    assert_eq!(name(&out[0]), "RC_ACKNOWLEDGE");
    assert_eq!(out[0].bth.psn, Psn::new(A_PSN));
    assert_eq!(aeth(&out[0]).syndrome, Syndrome::ACK_NO_CREDITS);
    assert_eq!(aeth(&out[0]).msn, 1);
    assert!(b.cqes().is_empty());
    assert_eq!(b.qp.rq_len(), 1);
    assert_eq!(b.qp.counters().get(Counter::DuplicateRequest), 1);
    assert_eq!(b.qp.epsn(), Psn::new(A_PSN + 1));
}

#[test]
fn dup_write_not_rewritten() {
    let (mut b, k, va) = responder(0);
    let w = pkt(
        "RC_RDMA_WRITE_ONLY",
        B,
        A_PSN,
        true,
        reth(va, k, 16),
        data(16, 3),
    );
    b.rx(0, core::slice::from_ref(&w));
    assert_eq!(b.mem.peek(k, va, 16), data(16, 3));
    b.mem.poke(k, va, &[0; 16]);
    b.rx(1, &[w]);
    assert_eq!(
        b.mem.peek(k, va, 16),
        [0; 16],
        "a duplicate WRITE is not executed"
    );
    let out = b.tx(1);
    assert_eq!(out.len(), 1, "the two ACKs coalesced");
    assert_eq!(out[0].bth.psn, Psn::new(A_PSN));
    assert_eq!(b.qp.counters().get(Counter::AckCoalesced), 1);
}

#[test]
fn dup_read_replayed_in_full_and_partially() {
    let (mut b, k, va) = responder(0);
    b.mem.poke(k, va, &data(600, 4));
    let rd = pkt(
        "RC_RDMA_READ_REQUEST",
        B,
        A_PSN,
        true,
        reth(va, k, 600),
        vec![],
    );
    b.rx(0, core::slice::from_ref(&rd));
    let first = b.tx(0);
    let names: Vec<_> = first.iter().map(name).collect();
    assert_eq!(
        names,
        [
            "RC_RDMA_READ_RESPONSE_FIRST",
            "RC_RDMA_READ_RESPONSE_MIDDLE",
            "RC_RDMA_READ_RESPONSE_LAST"
        ]
    );
    let psns: Vec<_> = first.iter().map(|p| p.bth.psn.value()).collect();
    assert_eq!(psns, [A_PSN, A_PSN + 1, A_PSN + 2]);
    assert_eq!(first.concat_payload(), data(600, 4));
    assert!(first[0].ext.aeth.is_some() && first[1].ext.aeth.is_none());
    assert_eq!(b.qp.epsn(), Psn::new(A_PSN + 3));
    // A full duplicate is replayed: same opcodes, PSNs and data.
    b.rx(1, &[rd]);
    let again = b.tx(1);
    assert_eq!(again.iter().map(name).collect::<Vec<_>>(), names);
    assert_eq!(
        again.iter().map(|p| p.bth.psn.value()).collect::<Vec<_>>(),
        psns
    );
    assert_eq!(again.concat_payload(), data(600, 4));
    // A partial retry from the second packet: VA and length moved on by one PMTU.
    let part = pkt(
        "RC_RDMA_READ_REQUEST",
        B,
        A_PSN + 1,
        true,
        reth(va + 256, k, 344),
        vec![],
    );
    b.rx(2, &[part]);
    let rest = b.tx(2);
    assert_eq!(
        rest.iter().map(name).collect::<Vec<_>>(),
        ["RC_RDMA_READ_RESPONSE_MIDDLE", "RC_RDMA_READ_RESPONSE_LAST"]
    );
    assert_eq!(rest[0].bth.psn, Psn::new(A_PSN + 1));
    assert_eq!(rest.concat_payload(), data(600, 4)[256..]);
    assert_eq!(b.qp.counters().get(Counter::ReadReplay), 2);
    assert_eq!(b.qp.msn(), 1, "replays do not count as messages");
    // A duplicate outside the original range is dropped.
    let outside = pkt(
        "RC_RDMA_READ_REQUEST",
        B,
        A_PSN + 1,
        true,
        reth(va + 256, k, 400),
        vec![],
    );
    b.rx(3, &[outside]);
    assert!(b.tx(3).is_empty());
    assert_eq!(b.qp.counters().get(Counter::DropDuplicateNoResource), 1);
}

trait Concat {
    fn concat_payload(&self) -> Vec<u8>;
}
impl Concat for Vec<Packet> {
    fn concat_payload(&self) -> Vec<u8> {
        self.iter()
            .flat_map(|p| p.payload.iter().copied())
            .collect()
    }
}

#[test]
fn dup_atomic_returns_saved_value() {
    let (mut b, k, va) = responder(0);
    b.mem.poke(k, va + 8, &10u64.to_le_bytes());
    let fa = pkt(
        "RC_FETCH_ADD",
        B,
        A_PSN,
        true,
        atomic(va + 8, k, 5, 0),
        vec![],
    );
    b.rx(0, core::slice::from_ref(&fa));
    let out = b.tx(0);
    assert_eq!(name(&out[0]), "RC_ATOMIC_ACKNOWLEDGE");
    assert_eq!(out[0].ext.atomic_ack_eth.unwrap().orig_remote_data, 10);
    assert_eq!(b.mem.peek(k, va + 8, 8), 15u64.to_le_bytes());
    b.rx(1, &[fa]);
    let out = b.tx(1);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].bth.psn, Psn::new(A_PSN));
    assert_eq!(out[0].ext.atomic_ack_eth.unwrap().orig_remote_data, 10);
    assert_eq!(
        b.mem.peek(k, va + 8, 8),
        15u64.to_le_bytes(),
        "not added twice"
    );
    assert_eq!(b.qp.counters().get(Counter::AtomicReplay), 1);
    // CMP_SWAP: a duplicate after the value changed still returns the saved one.
    let cs = pkt(
        "RC_COMPARE_SWAP",
        B,
        A_PSN + 1,
        true,
        atomic(va + 8, k, 99, 15),
        vec![],
    );
    b.rx(2, core::slice::from_ref(&cs));
    assert_eq!(b.tx(2)[0].ext.atomic_ack_eth.unwrap().orig_remote_data, 15);
    b.mem.poke(k, va + 8, &15u64.to_le_bytes());
    b.rx(3, &[cs]);
    assert_eq!(b.tx(3)[0].ext.atomic_ack_eth.unwrap().orig_remote_data, 15);
    assert_eq!(
        b.mem.peek(k, va + 8, 8),
        15u64.to_le_bytes(),
        "not swapped twice"
    );
}

#[test]
fn out_of_sequence_nak_sent_once() {
    let (mut b, _, _) = responder(8);
    let send = |psn: u32| {
        pkt(
            "RC_SEND_ONLY",
            B,
            psn,
            true,
            ExtHeaders::default(),
            data(8, 0),
        )
    };
    b.rx(0, &[send(A_PSN + 2), send(A_PSN + 3), send(A_PSN + 4)]);
    let out = b.tx(0);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(
        aeth(&out[0]).syndrome,
        Syndrome::Nak(NakCode::PsnSequenceError)
    );
    assert_eq!(out[0].bth.psn, Psn::new(A_PSN), "the NAK carries ePSN");
    assert_eq!(b.qp.counters().get(Counter::DropOutOfSequence), 2);
    assert!(b.cqes().is_empty());
    // The gap closes; a new gap gets a new NAK.
    b.rx(1, &[send(A_PSN), send(A_PSN + 2)]);
    let out = b.tx(1);
    assert_eq!(out.len(), 2);
    assert_eq!(aeth(&out[0]).syndrome, Syndrome::ACK_NO_CREDITS);
    assert_eq!(
        aeth(&out[1]).syndrome,
        Syndrome::Nak(NakCode::PsnSequenceError)
    );
    assert_eq!(out[1].bth.psn, Psn::new(A_PSN + 1));
    assert_eq!(b.qp.counters().get(Counter::NakPsnSeqSent), 2);
}

#[test]
fn go_back_n_from_the_nak() {
    let mut p = Pair::new(QpType::Rc);
    for i in 0..3 {
        p.b.post_recv(i, 1000);
    }
    for i in 0..3 {
        let s = p.a.buf(&data(700, i as u8));
        p.a.qp.post_send(SendWr::new(i, WrOp::Send, s)).unwrap();
    }
    // Lose the second packet of the first message, once.
    let mut lost = false;
    p.run_with(|from_a, pk| {
        let hit = from_a && !lost && pk.bth.psn == Psn::new(A_PSN + 1);
        lost |= hit;
        hit
    });
    assert!(lost);
    let c = p.a.cqes();
    assert_eq!(
        c.iter().filter(|c| c.status == WcStatus::Success).count(),
        3
    );
    assert_eq!(p.a.qp.counters().get(Counter::RetrySeqNak), 1);
    assert_eq!(p.a.qp.counters().get(Counter::RetryTimeout), 0);
    assert_eq!(p.b.qp.counters().get(Counter::NakPsnSeqSent), 1);
    // Go-back-N resent PSN 101..=108 (8 packets); the responder executed
    // each message once.
    assert_eq!(p.a.qp.counters().get(Counter::RequestRetransmitted), 8);
    let r = p.b.cqes();
    assert_eq!(
        r.iter().map(|c| (c.wr_id, c.byte_len)).collect::<Vec<_>>(),
        [(0, 700), (1, 700), (2, 700)]
    );
}

#[test]
fn read_retried_from_the_missing_offset() {
    let mut p = Pair::new(QpType::Rc);
    let (rk, rva) = p.b.alloc(2048);
    p.b.mem.poke(rk, rva, &data(1000, 5));
    let into = p.a.buf(&[0; 1000]);
    let sge = into[0];
    p.a.qp
        .post_send(SendWr::new(
            1,
            WrOp::Read(Remote { va: rva, rkey: rk }),
            into,
        ))
        .unwrap();
    let mut lost = false;
    let mut retried = None;
    p.run_with(|from_a, pk| {
        if !from_a && !lost && pk.bth.psn == Psn::new(A_PSN + 1) {
            lost = true;
            return true;
        }
        if from_a && lost && retried.is_none() {
            retried = Some((pk.bth.psn, pk.ext.reth.unwrap()));
        }
        false
    });
    let (psn, r) = retried.expect("a retried READ");
    assert_eq!(psn, Psn::new(A_PSN + 1));
    assert_eq!((r.va, r.rkey, r.dma_len), (rva + 256, rk, 1000 - 256));
    let c = p.a.cqes();
    assert_eq!((c[0].status, c[0].byte_len), (WcStatus::Success, 1000));
    assert_eq!(p.a.mem.peek(sge.lkey, sge.addr, 1000), data(1000, 5));
    assert_eq!(p.b.qp.counters().get(Counter::ReadReplay), 1);
}

#[test]
fn implied_ack_by_read_response_and_atomic_ack() {
    for atomic in [false, true] {
        let mut p = Pair::new(QpType::Rc);
        p.b.post_recv(1, 100);
        let (rk, rva) = p.b.alloc(64);
        let s = p.a.buf(&data(10, 1));
        p.a.qp.post_send(SendWr::new(1, WrOp::Send, s)).unwrap();
        let w = p.a.buf(&data(10, 2));
        let remote = Remote { va: rva, rkey: rk };
        p.a.qp
            .post_send(SendWr::new(2, WrOp::Write(remote), w))
            .unwrap();
        let into = p.a.buf(&[0; 8]);
        let op = if atomic {
            WrOp::FetchAdd { remote, add: 1 }
        } else {
            WrOp::Read(remote)
        };
        p.a.qp.post_send(SendWr::new(3, op, into)).unwrap();
        // Every plain ACK is lost: the SEND and the WRITE complete by the
        // READ response or the ATOMIC ACK.
        p.run_with(|from_a, pk| !from_a && name(pk) == "RC_ACKNOWLEDGE");
        let c = p.a.cqes();
        assert_eq!(
            c.iter().map(|c| (c.wr_id, c.status)).collect::<Vec<_>>(),
            [
                (1, WcStatus::Success),
                (2, WcStatus::Success),
                (3, WcStatus::Success)
            ]
        );
        assert_eq!(p.a.qp.counters().get(Counter::RequestRetransmitted), 0);
        assert_eq!(p.a.qp.counters().get(Counter::RetryTimeout), 0);
        assert!(
            p.b.qp.counters().get(Counter::AckSent) >= 1,
            "ACKs were sent and lost"
        );
    }
}

#[test]
fn timeout_retry() {
    let mut p = Pair::new(QpType::Rc);
    let (rk, rva) = p.b.alloc(64);
    let w = p.a.buf(&data(32, 7));
    p.a.qp
        .post_send(SendWr::new(1, WrOp::Write(Remote { va: rva, rkey: rk }), w))
        .unwrap();
    let sent = p.a.tx(0);
    assert_eq!(sent.len(), 1);
    // 4.096 µs · 2^4.
    assert_eq!(p.a.qp.next_deadline(), Some(4096 << 4));
    assert!(
        p.a.tx((4096 << 4) - 1).is_empty(),
        "nothing before the deadline"
    );
    let again = p.a.tx(4096 << 4);
    assert_eq!(again, sent, "the same packet again");
    assert_eq!(p.a.qp.counters().get(Counter::RetryTimeout), 1);
    p.b.rx(70_000, &again);
    p.a.rx(71_000, &p.b.tx(70_000));
    assert_eq!(p.a.cqes()[0].status, WcStatus::Success);
    assert_eq!(p.a.qp.next_deadline(), None);
    assert_eq!(p.b.mem.peek(rk, rva, 32), data(32, 7));
}

#[test]
fn retry_exhaustion_flushes() {
    let (mut a, b) = attrs(QpType::Rc);
    a.retry_cnt = 2;
    let mut p = Pair::of(a, b);
    let (rk, rva) = p.b.alloc(64);
    for i in 0..3 {
        let w = p.a.buf(&data(8, i));
        p.a.qp
            .post_send(SendWr::new(
                i as u64,
                WrOp::Write(Remote { va: rva, rkey: rk }),
                w,
            ))
            .unwrap();
    }
    p.a.qp
        .post_recv(RecvWr {
            wr_id: 9,
            sgl: vec![],
        })
        .unwrap();
    p.run_with(|from_a, _| from_a);
    assert_eq!(p.a.qp.counters().get(Counter::RetryTimeout), 2);
    assert_eq!(p.a.qp.state(), QpState::Error);
    let c = p.a.cqes();
    let got: Vec<_> = c.iter().map(|c| (c.wr_id, c.status)).collect();
    assert_eq!(
        got,
        [
            (0, WcStatus::RetryExcErr),
            (1, WcStatus::WrFlushErr),
            (2, WcStatus::WrFlushErr),
            (9, WcStatus::WrFlushErr)
        ]
    );
    assert_eq!(
        p.now,
        3 * (4096 << 4),
        "three timeouts, each restarting the timer"
    );
    // Posting in Error flushes at once.
    p.a.qp
        .post_send(SendWr::new(5, WrOp::Send, vec![]))
        .unwrap();
    assert_eq!(p.a.cqes()[0].status, WcStatus::WrFlushErr);
    assert!(p.a.tx(p.now + 1_000_000_000).is_empty());
}

#[test]
fn rnr_wait_then_retry() {
    let mut p = Pair::new(QpType::Rc);
    let s = p.a.buf(&data(20, 1));
    p.a.qp.post_send(SendWr::new(1, WrOp::Send, s)).unwrap();
    let req = p.a.tx(0);
    p.b.rx(0, &req);
    let nak = p.b.tx(0);
    assert_eq!(nak.len(), 1);
    assert_eq!(
        aeth(&nak[0]).syndrome,
        Syndrome::RnrNak(RnrTimer(1)),
        "min_rnr_timer"
    );
    assert_eq!(nak[0].bth.psn, Psn::new(A_PSN));
    assert_eq!(p.b.qp.epsn(), Psn::new(A_PSN), "ePSN stays");
    p.a.rx(1000, &nak);
    // RNR timer code 1 = 10 µs.
    assert_eq!(p.a.qp.next_deadline(), Some(1000 + 10_000));
    assert!(p.a.tx(10_999).is_empty());
    p.b.post_recv(7, 64);
    let again = p.a.tx(11_000);
    assert_eq!(again, req);
    p.b.rx(12_000, &again);
    p.a.rx(13_000, &p.b.tx(12_000));
    assert_eq!(p.a.cqes()[0].status, WcStatus::Success);
    assert_eq!(p.b.cqes()[0].wr_id, 7);
    assert_eq!(p.a.qp.counters().get(Counter::RnrNakReceived), 1);
    assert_eq!(p.a.qp.counters().get(Counter::RetryRnr), 1);
    assert_eq!(p.b.qp.counters().get(Counter::RnrNakSent), 1);
}

#[test]
fn rnr_retry_7_is_forever_and_others_run_out() {
    for rnr_retry in [7u8, 3] {
        let (mut a, b) = attrs(QpType::Rc);
        a.rnr_retry = rnr_retry;
        let mut p = Pair::of(a, b);
        let s = p.a.buf(&data(20, 1));
        p.a.qp.post_send(SendWr::new(1, WrOp::Send, s)).unwrap();
        let s = p.a.buf(&data(20, 2));
        p.a.qp.post_send(SendWr::new(2, WrOp::Send, s)).unwrap();
        let mut naks = 0;
        for _ in 0..200 {
            let out = p.a.tx(p.now);
            p.b.rx(p.now, &out);
            let back = p.b.tx(p.now);
            naks += back
                .iter()
                .filter(|p| matches!(aeth(p).syndrome, Syndrome::RnrNak(_)))
                .count();
            p.a.rx(p.now, &back);
            match p.a.qp.next_deadline() {
                Some(t) => p.now = t,
                None => break,
            }
        }
        if rnr_retry == 7 {
            assert_eq!(naks, 200);
            assert_eq!(p.a.qp.state(), QpState::Rts);
            assert!(p.a.cqes().is_empty());
            p.b.post_recv(1, 64);
            p.b.post_recv(2, 64);
            p.run();
            assert_eq!(p.a.cqes().len(), 2);
        } else {
            assert_eq!(naks, 4, "the first RNR NAK and three retries");
            assert_eq!(p.a.qp.state(), QpState::Error);
            let c: Vec<_> = p.a.cqes().iter().map(|c| c.status).collect();
            assert_eq!(c, [WcStatus::RnrRetryExcErr, WcStatus::WrFlushErr]);
            assert_eq!(p.a.qp.counters().get(Counter::RnrRetryExceeded), 1);
        }
    }
}

#[test]
fn psn_wraps_at_2_pow_24() {
    let (mut a, mut b) = attrs(QpType::Rc);
    a.sq_psn = Psn::new(0xFF_FFFE);
    b.rq_psn = Psn::new(0xFF_FFFE);
    let mut p = Pair::of(a, b);
    let (rk, rva) = p.b.alloc(4096);
    p.b.mem.poke(rk, rva, &data(1000, 3));
    p.b.post_recv(1, 1000);
    let s = p.a.buf(&data(600, 1));
    p.a.qp.post_send(SendWr::new(1, WrOp::Send, s)).unwrap();
    let into = p.a.buf(&[0; 1000]);
    let sge = into[0];
    p.a.qp
        .post_send(SendWr::new(
            2,
            WrOp::Read(Remote { va: rva, rkey: rk }),
            into,
        ))
        .unwrap();
    let mut psns = Vec::new();
    p.run_with(|_, pk| {
        psns.push(pk.bth.psn.value());
        false
    });
    assert_eq!(
        psns,
        [0xFF_FFFE, 0xFF_FFFF, 0, 1, 0, 1, 2, 3, 4],
        "SEND 3 packets, READ request, ACK, READ responses 4"
    );
    assert_eq!(p.a.cqes().len(), 2);
    assert_eq!(p.a.mem.peek(sge.lkey, sge.addr, 1000), data(1000, 3));
    assert_eq!(p.b.qp.epsn(), Psn::new(5));
    assert_eq!(p.a.qp.next_psn(), Psn::new(5));
}

#[test]
fn msn_counts_messages() {
    let (mut b, k, va) = responder(1);
    let mid = ExtHeaders::default();
    b.rx(
        0,
        &[pkt("RC_SEND_FIRST", B, A_PSN, true, mid, data(256, 0))],
    );
    assert_eq!(aeth(&b.tx(0)[0]).msn, 0, "not after a FIRST");
    b.rx(
        0,
        &[pkt("RC_SEND_LAST", B, A_PSN + 1, true, mid, data(3, 0))],
    );
    assert_eq!(aeth(&b.tx(0)[0]).msn, 1);
    b.rx(
        0,
        &[pkt(
            "RC_RDMA_WRITE_ONLY",
            B,
            A_PSN + 2,
            true,
            reth(va, k, 4),
            data(4, 0),
        )],
    );
    assert_eq!(aeth(&b.tx(0)[0]).msn, 2);
    b.rx(
        0,
        &[pkt(
            "RC_RDMA_READ_REQUEST",
            B,
            A_PSN + 3,
            true,
            reth(va, k, 300),
            vec![],
        )],
    );
    let r = b.tx(0);
    assert_eq!((aeth(&r[0]).msn, aeth(&r[1]).msn), (3, 3));
    b.rx(
        0,
        &[pkt(
            "RC_FETCH_ADD",
            B,
            A_PSN + 5,
            true,
            atomic(va, k, 1, 0),
            vec![],
        )],
    );
    assert_eq!(aeth(&b.tx(0)[0]).msn, 4);
    assert_eq!(b.qp.msn(), 4);
}

/// B gets `bad` as its first request: the NAK, its code, and B in Error
/// with its receive WQEs flushed.
fn expect_nak(bad: Packet, code: NakCode, b: &mut Side) {
    b.rx(0, &[bad]);
    let out = b.tx(0);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(aeth(&out[0]).syndrome, Syndrome::Nak(code));
    assert_eq!(out[0].bth.psn, Psn::new(A_PSN));
    assert_eq!(b.qp.state(), QpState::Error);
    assert!(b.cqes().iter().all(|c| c.status != WcStatus::Success));
    // Nothing further is answered.
    b.rx(
        1,
        &[pkt(
            "RC_SEND_ONLY",
            B,
            A_PSN,
            true,
            ExtHeaders::default(),
            vec![],
        )],
    );
    assert!(b.tx(1).is_empty());
}

#[test]
fn nak_invalid_request() {
    let none = ExtHeaders::default;
    let cases: Vec<(&str, Packet)> = vec![
        (
            "MIDDLE without FIRST",
            pkt("RC_SEND_MIDDLE", B, A_PSN, true, none(), data(256, 0)),
        ),
        (
            "FIRST shorter than PMTU",
            pkt("RC_SEND_FIRST", B, A_PSN, true, none(), data(200, 0)),
        ),
        (
            "ONLY longer than PMTU",
            pkt("RC_SEND_ONLY", B, A_PSN, true, none(), data(260, 0)),
        ),
        (
            "WRITE ONLY longer than its DMA length",
            pkt(
                "RC_RDMA_WRITE_ONLY",
                B,
                A_PSN,
                true,
                reth(0, 0, 8),
                data(12, 0),
            ),
        ),
        (
            "misaligned atomic",
            pkt("RC_FETCH_ADD", B, A_PSN, true, atomic(4, 0, 1, 0), vec![]),
        ),
        (
            "READ longer than 2^31",
            pkt(
                "RC_RDMA_READ_REQUEST",
                B,
                A_PSN,
                true,
                reth(0, 0, (1 << 31) + 1),
                vec![],
            ),
        ),
        (
            "receive WQE too small",
            pkt("RC_SEND_ONLY", B, A_PSN, true, none(), data(256, 0)),
        ),
    ];
    for (what, bad) in cases {
        let (_, b) = attrs(QpType::Rc);
        let mut s = Side::new(b);
        s.post_recv(1, 100);
        let before = s.mem.phys().to_vec();
        expect_nak(bad, NakCode::InvalidRequest, &mut s);
        if what != "receive WQE too small" {
            assert_eq!(s.mem.phys(), &before[..], "{what}: nothing written");
        }
        assert_eq!(
            s.qp.counters().get(Counter::NakInvalidRequestSent),
            1,
            "{what}"
        );
    }
    // A QP without remote WRITE access refuses WRITEs as invalid requests.
    let (_, mut b) = attrs(QpType::Rc);
    b.access = Access::REMOTE_READ;
    let mut s = Side::new(b);
    let (k, va) = s.alloc(64);
    expect_nak(
        pkt(
            "RC_RDMA_WRITE_ONLY",
            B,
            A_PSN,
            true,
            reth(va, k, 4),
            data(4, 1),
        ),
        NakCode::InvalidRequest,
        &mut s,
    );
}

#[test]
fn nak_remote_access_error_writes_nothing() {
    for what in ["key", "pd", "access", "bounds", "invalidated"] {
        let (_, b) = attrs(QpType::Rc);
        let mut s = Side::new(b);
        let (k, va) = s.alloc(1024);
        let (k2, va2) = s.mem.alloc(PD + 1, Access::ALL, 1024);
        let (k3, va3) = s.mem.alloc(PD, Access::REMOTE_READ, 1024);
        let (key, addr) = match what {
            "key" => (k ^ 0x01, va),
            "pd" => (k2, va2),
            "access" => (k3, va3),
            "bounds" => (k, va + 1000),
            _ => {
                s.mem.invalidate(k).unwrap();
                (k, va)
            }
        };
        let before = s.mem.phys().to_vec();
        // A two-packet WRITE: the first packet's RETH covers 400 bytes.
        expect_nak(
            pkt(
                "RC_RDMA_WRITE_FIRST",
                B,
                A_PSN,
                true,
                reth(addr, key, 400),
                data(256, 1),
            ),
            NakCode::RemoteAccessError,
            &mut s,
        );
        assert_eq!(s.mem.phys(), &before[..], "{what}: nothing written");
        assert_eq!(s.qp.counters().get(Counter::NakRemoteAccessSent), 1);
    }
}

#[test]
fn nak_remote_operational_error() {
    let (_, b) = attrs(QpType::Rc);
    let mut s = Side::new(b);
    // A receive WQE whose lkey is not registered.
    s.qp.post_recv(RecvWr {
        wr_id: 3,
        sgl: vec![Sge {
            addr: 0,
            len: 64,
            lkey: mr::key(40, 1),
        }],
    })
    .unwrap();
    s.rx(
        0,
        &[pkt(
            "RC_SEND_ONLY",
            B,
            A_PSN,
            true,
            ExtHeaders::default(),
            data(8, 0),
        )],
    );
    let out = s.tx(0);
    assert_eq!(
        aeth(&out[0]).syndrome,
        Syndrome::Nak(NakCode::RemoteOperationalError)
    );
    assert_eq!(s.qp.state(), QpState::Error);
    let c = s.cqes();
    assert_eq!((c[0].wr_id, c[0].status), (3, WcStatus::LocQpOpErr));
    assert_eq!(s.qp.counters().get(Counter::NakRemoteOpSent), 1);
}

#[test]
fn requester_completes_each_nak_in_error() {
    for (code, status) in [
        (NakCode::InvalidRequest, WcStatus::RemInvReqErr),
        (NakCode::RemoteAccessError, WcStatus::RemAccessErr),
        (NakCode::RemoteOperationalError, WcStatus::RemOpErr),
    ] {
        let (a, _) = attrs(QpType::Rc);
        let mut s = Side::new(a);
        for i in 0..3 {
            let b = s.buf(&data(10, 0));
            s.qp.post_send(SendWr::new(i, WrOp::Send, b)).unwrap();
        }
        assert_eq!(s.tx(0).len(), 3);
        let nak = ExtHeaders {
            aeth: Some(AethRepr {
                syndrome: Syndrome::Nak(code),
                msn: 1,
            }),
            ..ExtHeaders::default()
        };
        // NAK for the second: the first is implicitly acknowledged.
        s.rx(
            1,
            &[pkt("RC_ACKNOWLEDGE", A, A_PSN + 1, false, nak, vec![])],
        );
        let c: Vec<_> = s.cqes().iter().map(|c| (c.wr_id, c.status)).collect();
        assert_eq!(
            c,
            [
                (0, WcStatus::Success),
                (1, status),
                (2, WcStatus::WrFlushErr)
            ]
        );
        assert_eq!(s.qp.state(), QpState::Error);
    }
}

#[test]
fn uc_loss_drops_only_its_message() {
    let mut p = Pair::new(QpType::Uc);
    for i in 0..3 {
        p.b.post_recv(i, 1000);
    }
    for i in 0..3 {
        let s = p.a.buf(&data(600, i as u8));
        p.a.qp.post_send(SendWr::new(i, WrOp::Send, s)).unwrap();
    }
    let mut sent = Vec::new();
    // Lose the middle packet of the second message (PSN 104).
    p.run_with(|from_a, pk| {
        sent.push((from_a, name(pk)));
        from_a && pk.bth.psn == Psn::new(A_PSN + 4)
    });
    assert!(
        sent.iter()
            .all(|&(from_a, n)| from_a && n.starts_with("UC_SEND")),
        "no ACKs: {sent:?}"
    );
    assert_eq!(sent.len(), 9, "no retransmission");
    let c: Vec<_> = p.a.cqes().iter().map(|c| (c.wr_id, c.status)).collect();
    assert_eq!(
        c,
        [
            (0, WcStatus::Success),
            (1, WcStatus::Success),
            (2, WcStatus::Success)
        ]
    );
    // The receiver got messages 0 and 2; message 2 landed in the WQE
    // message 1 had started to fill.
    let r: Vec<_> = p.b.cqes().iter().map(|c| (c.wr_id, c.byte_len)).collect();
    assert_eq!(r, [(0, 600), (1, 600)]);
    assert_eq!(p.b.qp.rq_len(), 1);
    assert_eq!(
        p.b.qp.counters().get(Counter::DropUcMessage),
        1,
        "the LAST of message 1"
    );
    assert_eq!(p.b.qp.state(), QpState::Rts);
}

#[test]
fn ud_qkey_and_source_qp() {
    let mut p = Pair::new(QpType::Ud);
    let (k, va) = p.b.post_recv(5, 256);
    let b_qkey = p.b.qp.attr().qkey;
    for (wr_id, qkey) in [(1, 0x1234), (2, b_qkey)] {
        let s = p.a.buf(&data(100, wr_id as u8));
        let mut wr = SendWr::new(wr_id, WrOp::SendImm(9), s);
        wr.ud = Some(UdDest { qpn: B, qkey });
        p.a.qp.post_send(wr).unwrap();
    }
    let out = p.a.tx(0);
    assert_eq!(
        out.iter().map(name).collect::<Vec<_>>(),
        ["UD_SEND_ONLY_WITH_IMMEDIATE"; 2]
    );
    assert_eq!(
        out[1].ext.deth,
        Some(DethRepr {
            qkey: b_qkey,
            src_qp: A
        })
    );
    p.b.rx(0, &out);
    assert_eq!(p.b.qp.counters().get(Counter::DropQkey), 1);
    let c = p.b.cqes();
    assert_eq!(c.len(), 1);
    assert_eq!(
        (c[0].wr_id, c[0].src_qp, c[0].imm, c[0].byte_len),
        (5, Some(A), Some(9), 100)
    );
    assert_eq!(p.b.mem.peek(k, va, 100), data(100, 2));
    // Sends complete when sent; UD takes no READs and nothing over the PMTU.
    assert_eq!(p.a.cqes().len(), 2);
    let big = p.a.buf(&data(300, 0));
    let mut wr = SendWr::new(3, WrOp::Send, big);
    wr.ud = Some(UdDest {
        qpn: B,
        qkey: b_qkey,
    });
    assert_eq!(p.a.qp.post_send(wr), Err(PostError::InvalidWr));
    // A Q_Key with bit 31 set sends the QP's own.
    let s = p.a.buf(&[1]);
    let mut wr = SendWr::new(4, WrOp::Send, s);
    wr.ud = Some(UdDest {
        qpn: B,
        qkey: 0x8000_0000,
    });
    p.a.qp.post_send(wr).unwrap();
    assert_eq!(p.a.tx(0)[0].ext.deth.unwrap().qkey, p.a.qp.attr().qkey);
}

#[test]
fn cnp_at_most_once_per_interval() {
    let (mut b, _, _) = responder(25);
    let mut cnps = Vec::new();
    for i in 0..20u32 {
        let now = i as u64 * 10_000;
        let s = pkt(
            "RC_SEND_ONLY",
            B,
            A_PSN + i,
            false,
            ExtHeaders::default(),
            vec![],
        );
        b.qp.receive(now, &s, true, &mut b.mem);
        for p in b.tx(now) {
            assert_eq!(name(&p), "CNP");
            assert!(p.bth.becn);
            assert_eq!(p.bth.dest_qp, A);
            cnps.push(now);
        }
    }
    // Default interval 50 µs; marks every 10 µs.
    assert_eq!(cnps, [0, 50_000, 100_000, 150_000]);
    assert_eq!(b.qp.counters().get(Counter::CeReceived), 20);
    assert_eq!(b.qp.counters().get(Counter::CnpSuppressed), 16);
    assert_eq!(b.qp.counters().get(Counter::CnpSent), 4);
    // No CE, no CNP.
    let s = pkt(
        "RC_SEND_ONLY",
        B,
        A_PSN + 20,
        false,
        ExtHeaders::default(),
        vec![],
    );
    b.qp.receive(1_000_000, &s, false, &mut b.mem);
    assert!(b.tx(1_000_000).is_empty());
}

#[test]
fn max_rd_atomic_limits_outstanding_reads() {
    let (mut a, b) = attrs(QpType::Rc);
    a.max_rd_atomic = 2;
    let mut p = Pair::of(a, b);
    let (rk, rva) = p.b.alloc(64);
    for i in 0..4 {
        let into = p.a.buf(&[0; 8]);
        p.a.qp
            .post_send(SendWr::new(
                i,
                WrOp::Read(Remote { va: rva, rkey: rk }),
                into,
            ))
            .unwrap();
    }
    assert_eq!(p.a.tx(0).len(), 2);
    p.run();
    assert_eq!(p.a.cqes().len(), 4);
}

#[test]
fn write_with_immediate_and_send_with_invalidate() {
    let mut p = Pair::new(QpType::Rc);
    let (rk, rva) = p.b.alloc(1024);
    let (victim, _) = p.b.alloc(64);
    p.b.post_recv(1, 64);
    p.b.post_recv(2, 64);
    let w = p.a.buf(&data(300, 1));
    p.a.qp
        .post_send(SendWr::new(
            1,
            WrOp::WriteImm(Remote { va: rva, rkey: rk }, 77),
            w,
        ))
        .unwrap();
    let s = p.a.buf(&data(4, 2));
    p.a.qp
        .post_send(SendWr::new(2, WrOp::SendInv(victim), s))
        .unwrap();
    let mut names = Vec::new();
    p.run_with(|from_a, pk| {
        if from_a {
            names.push(name(pk));
        }
        false
    });
    assert_eq!(
        names,
        [
            "RC_RDMA_WRITE_FIRST",
            "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
            "RC_SEND_ONLY_WITH_INVALIDATE"
        ]
    );
    let c = p.b.cqes();
    assert_eq!(
        (c[0].wr_id, c[0].opcode, c[0].byte_len, c[0].imm),
        (1, WcOpcode::RecvRdmaWithImm, 300, Some(77))
    );
    assert_eq!((c[1].wr_id, c[1].invalidated_rkey), (2, Some(victim)));
    assert_eq!(
        p.b.mem.entry(victim).unwrap().state,
        roce_wire::mr::MrState::Invalid
    );
    assert_eq!(p.b.mem.peek(rk, rva, 300), data(300, 1));
}

#[test]
fn packets_become_wire_frames_and_back() {
    use roce_wire::{EthernetRepr, Frame, IpRepr, Ipv4Repr, UdpRepr};
    let eth = EthernetRepr {
        dst: [2, 0, 0, 0, 0, 2],
        src: [2, 0, 0, 0, 0, 1],
        vlan: None,
        ethertype: 0,
    };
    let ip = IpRepr::V4(Ipv4Repr {
        tos: 0,
        ident: 0,
        dont_frag: true,
        ttl: 64,
        protocol: 17,
        src: [10, 0, 0, 1],
        dst: [10, 0, 0, 2],
        payload_len: 0,
    });
    let udp = UdpRepr {
        src_port: 0xC000,
        dst_port: 4791,
        checksum: 0,
        payload_len: 0,
    };
    let mut p = Pair::new(QpType::Rc);
    let (rk, rva) = p.b.alloc(64);
    let w = p.a.buf(&data(13, 1));
    p.a.qp
        .post_send(SendWr::new(
            1,
            WrOp::WriteImm(Remote { va: rva, rkey: rk }, 5),
            w,
        ))
        .unwrap();
    for pk in p.a.tx(0) {
        let bytes = pk.to_frame(eth, ip, udp).unwrap();
        let f = Frame::parse(&bytes).expect("a valid frame");
        assert_eq!(f.repr.bth.pad_count, 3);
        assert_eq!(Packet::from_frame(&f), pk);
    }
}

#[test]
fn endpoints_exchange_frames() {
    use crate::endpoint::{ce, Endpoint, FrameDrop, Path};
    use roce_wire::{DropReason, EthernetRepr, IpRepr, Ipv6Repr};
    let path = |src: u8, dst: u8, tc: u8| Path {
        eth: EthernetRepr {
            dst: [2, 0, 0, 0, 0, dst],
            src: [2, 0, 0, 0, 0, src],
            vlan: None,
            ethertype: 0,
        },
        ip: IpRepr::V6(Ipv6Repr {
            traffic_class: tc,
            flow_label: 0,
            hop_limit: 64,
            next_header: 17,
            src: [src; 16],
            dst: [dst; 16],
            payload_len: 0,
        }),
    };
    let (a, b) = attrs(QpType::Rc);
    let mut ea = Endpoint::new(HostMemory::new(16, 256));
    let mut eb = Endpoint::new(HostMemory::new(16, 256));
    ea.add_qp(Qp::connected(a, Config::default()), path(1, 2, 0));
    // B's frames carry ECN CE: A answers with a CNP.
    eb.add_qp(Qp::connected(b, Config::default()), path(2, 1, 3));
    let (rk, rva) = eb.mem.alloc(PD, Access::ALL, 600);
    let (lk, lva) = ea.mem.alloc(PD, Access::ALL, 600);
    ea.mem.poke(lk, lva, &data(600, 8));
    let sgl = vec![Sge {
        addr: lva,
        len: 600,
        lkey: lk,
    }];
    ea.qp_mut(A)
        .unwrap()
        .post_send(SendWr::new(
            1,
            WrOp::Write(Remote { va: rva, rkey: rk }),
            sgl,
        ))
        .unwrap();
    let mut frames = 0;
    for now in 0..10 {
        while let Some(f) = ea.poll_transmit_frame(now) {
            frames += 1;
            eb.receive_frame(now, &f).unwrap();
        }
        while let Some(f) = eb.poll_transmit_frame(now) {
            frames += 1;
            let fr = roce_wire::Frame::parse(&f).unwrap();
            assert!(ce(&fr.repr.ip));
            assert_eq!(fr.repr.udp.src_port & 0xC000, 0xC000);
            ea.receive_frame(now, &f).unwrap();
        }
    }
    assert_eq!(frames, 5, "3 WRITE packets, 1 ACK, 1 CNP");
    assert_eq!(
        ea.qp_mut(A).unwrap().poll_cq().unwrap().status,
        WcStatus::Success
    );
    assert_eq!(eb.mem.peek(rk, rva, 600), data(600, 8));
    assert_eq!(ea.qp(A).unwrap().counters().get(Counter::CnpSent), 1);
    assert_eq!(eb.qp(B).unwrap().counters().get(Counter::CnpReceived), 1);
    // Bad frames and unknown QPs are counted.
    let mut f = ea.poll_transmit_frame(10);
    assert!(f.is_none());
    ea.qp_mut(A)
        .unwrap()
        .post_send(SendWr::new(2, WrOp::Send, vec![]))
        .unwrap();
    f = ea.poll_transmit_frame(11);
    let mut bad = f.clone().unwrap();
    let n = bad.len();
    bad[n - 1] ^= 1;
    assert_eq!(
        eb.receive_frame(11, &bad),
        Err(FrameDrop::Frame(DropReason::BadIcrc))
    );
    assert_eq!(eb.frame_drops(DropReason::BadIcrc), 1);
    let mut other = Endpoint::new(HostMemory::new(16, 16));
    assert_eq!(
        other.receive_frame(11, &f.unwrap()),
        Err(FrameDrop::UnknownQp)
    );
    assert_eq!(other.unknown_qp_drops(), 1);
}

#[test]
fn window_forces_ack_req_and_bounds_outstanding() {
    let (a, b) = attrs(QpType::Rc);
    let cfg = Config {
        ack_req_every: 0,
        window: 4,
        ..Config::default()
    };
    let mut p = Pair {
        a: Side {
            qp: Qp::connected(a, cfg),
            mem: HostMemory::new(64, 4096),
        },
        b: Side::new(b),
        now: 0,
    };
    p.b.post_recv(1, 4096);
    let s = p.a.buf(&data(2560, 3));
    p.a.qp.post_send(SendWr::new(1, WrOp::Send, s)).unwrap();
    let first = p.a.tx(0);
    assert_eq!(first.len(), 4, "the window");
    let acks: Vec<bool> = first.iter().map(|p| p.bth.ack_req).collect();
    assert_eq!(
        acks,
        [false, false, false, true],
        "AckReq where the window fills"
    );
    // An ACK for a PSN never sent is refused and completes nothing.
    let bogus = ExtHeaders {
        aeth: Some(AethRepr {
            syndrome: Syndrome::ACK_NO_CREDITS,
            msn: 0,
        }),
        ..ExtHeaders::default()
    };
    p.a.rx(
        1,
        &[pkt("RC_ACKNOWLEDGE", A, A_PSN + 8, false, bogus, vec![])],
    );
    assert_eq!(p.a.qp.counters().get(Counter::DropUnexpectedResponse), 1);
    assert_eq!(p.a.qp.unacked_psn(), Psn::new(A_PSN));
    p.b.rx(1, &first);
    p.run();
    assert_eq!(p.a.cqes()[0].status, WcStatus::Success);
    assert_eq!(p.b.cqes()[0].byte_len, 2560);
    assert_eq!(p.a.qp.counters().get(Counter::RetryTimeout), 0);
}

#[test]
fn state_machine() {
    let (a, _) = attrs(QpType::Rc);
    let mut qp = Qp::new(a, Config::default());
    let mut mem = HostMemory::new(16, 16);
    assert_eq!(
        qp.modify(QpState::Rts, &a),
        Err(ModifyError::InvalidTransition(QpState::Reset, QpState::Rts))
    );
    assert_eq!(
        qp.post_recv(RecvWr {
            wr_id: 1,
            sgl: vec![]
        }),
        Err(PostError::InvalidState)
    );
    qp.modify(QpState::Init, &a).unwrap();
    qp.post_recv(RecvWr {
        wr_id: 1,
        sgl: vec![],
    })
    .unwrap();
    assert_eq!(
        qp.post_send(SendWr::new(1, WrOp::Send, vec![])),
        Err(PostError::InvalidState)
    );
    let send = pkt(
        "RC_SEND_ONLY",
        A,
        B_PSN,
        true,
        ExtHeaders::default(),
        vec![],
    );
    qp.receive(0, &send, false, &mut mem);
    assert_eq!(
        qp.counters().get(Counter::DropQpState),
        1,
        "Init takes no packets"
    );
    qp.modify(QpState::Rtr, &a).unwrap();
    assert_eq!(qp.rq_len(), 1, "receive WQEs posted in Init survive RTR");
    qp.receive(0, &send, false, &mut mem);
    assert_eq!(
        qp.poll_cq().unwrap().status,
        WcStatus::Success,
        "RTR receives"
    );
    assert_eq!(
        qp.poll_transmit(0, &mut mem).map(|p| name(&p)),
        Some("RC_ACKNOWLEDGE")
    );
    qp.modify(QpState::Rts, &a).unwrap();
    // SQD: queued work does not start; back to RTS it does.
    qp.modify(QpState::Sqd, &a).unwrap();
    qp.post_send(SendWr::new(2, WrOp::Send, vec![])).unwrap();
    assert!(qp.poll_transmit(0, &mut mem).is_none());
    qp.modify(QpState::Rts, &a).unwrap();
    assert!(qp.poll_transmit(0, &mut mem).is_some());
    let mut bad = a;
    bad.retry_cnt = 8;
    assert_eq!(qp.modify(QpState::Rts, &bad), Err(ModifyError::InvalidAttr));
    // P_Key and DestQP mismatches are dropped and counted.
    let mut other = send.clone();
    other.bth.pkey = 0x7FFE;
    qp.receive(0, &other, false, &mut mem);
    other.bth.pkey = 0xFFFF;
    other.bth.dest_qp = 0x99;
    qp.receive(0, &other, false, &mut mem);
    assert_eq!(qp.counters().get(Counter::DropPkey), 1);
    assert_eq!(qp.counters().get(Counter::DropDestQp), 1);
    assert!(pkey_match(0x7FFF, 0xFFFF) && !pkey_match(0x7FFF, 0x7FFF));
    qp.modify(QpState::Error, &a).unwrap();
    assert_eq!(qp.poll_cq().unwrap().status, WcStatus::WrFlushErr);
    qp.modify(QpState::Reset, &a).unwrap();
    assert_eq!(qp.state(), QpState::Reset);
    assert_eq!(qp.counters().get(Counter::DropPkey), 0);
}

#[test]
fn packets_behind_an_rnr_nak() {
    for silent in [false, true] {
        let (a, b) = attrs(QpType::Rc);
        let cfg = Config {
            silent_after_rnr_nak: silent,
            ..Config::default()
        };
        let mut p = Pair {
            a: Side::new(a),
            b: Side {
                qp: Qp::connected(b, cfg),
                mem: HostMemory::new(64, 4096),
            },
            now: 0,
        };
        for i in 0..3 {
            let s = p.a.buf(&data(20, i));
            p.a.qp
                .post_send(SendWr::new(i as u64, WrOp::Send, s))
                .unwrap();
        }
        let reqs = p.a.tx(0);
        p.b.rx(0, &reqs);
        let back = p.b.tx(0);
        let syn: Vec<_> = back
            .iter()
            .map(|p| (aeth(p).syndrome, p.bth.psn.value()))
            .collect();
        let rnr = (Syndrome::RnrNak(RnrTimer(1)), A_PSN);
        if silent {
            assert_eq!(syn, [rnr]);
        } else {
            assert_eq!(
                syn,
                [rnr, (Syndrome::Nak(NakCode::PsnSequenceError), A_PSN)]
            );
        }
        // The requester waits the RNR time either way.
        p.a.rx(1000, &back);
        assert!(p.a.tx(1000).is_empty(), "silent={silent}");
        assert_eq!(p.a.qp.next_deadline(), Some(11_000));
        assert_eq!(p.a.qp.counters().get(Counter::RetrySeqNak), 0);
        for i in 0..3 {
            p.b.post_recv(i, 64);
        }
        p.now = 11_000;
        p.run();
        assert_eq!(p.a.cqes().len(), 3);
        assert_eq!(p.b.cqes().len(), 3);
    }
}

#[test]
fn acks_only_when_asked_and_coalesced() {
    let (mut b, _, _) = responder(4);
    let none = ExtHeaders::default;
    b.rx(
        0,
        &[pkt("RC_SEND_FIRST", B, A_PSN, false, none(), data(256, 0))],
    );
    assert!(b.tx(0).is_empty(), "no AckReq, no ACK");
    b.rx(
        0,
        &[pkt(
            "RC_SEND_MIDDLE",
            B,
            A_PSN + 1,
            true,
            none(),
            data(256, 0),
        )],
    );
    let out = b.tx(0);
    assert_eq!(
        (out[0].bth.psn, aeth(&out[0]).msn),
        (Psn::new(A_PSN + 1), 0)
    );
    b.rx(
        0,
        &[pkt("RC_SEND_LAST", B, A_PSN + 2, false, none(), data(1, 0))],
    );
    assert!(b.tx(0).is_empty());
    // Three messages before the responder transmits: one ACK covers them.
    let three: Vec<_> = (3..6)
        .map(|i| pkt("RC_SEND_ONLY", B, A_PSN + i, true, none(), data(4, 0)))
        .collect();
    b.rx(1, &three);
    let out = b.tx(1);
    assert_eq!(out.len(), 1);
    assert_eq!(
        (out[0].bth.psn, aeth(&out[0]).msn),
        (Psn::new(A_PSN + 5), 4)
    );
    assert_eq!(b.qp.counters().get(Counter::AckCoalesced), 2);
}

#[test]
fn responder_resources_keep_the_last_max_dest_rd_atomic() {
    let (_, mut attr) = attrs(QpType::Rc);
    attr.max_dest_rd_atomic = 2;
    let mut b = Side::new(attr);
    let (k, va) = b.alloc(64);
    let read = |i: u32| {
        pkt(
            "RC_RDMA_READ_REQUEST",
            B,
            A_PSN + i,
            true,
            reth(va, k, 8),
            vec![],
        )
    };
    b.rx(0, &[read(0), read(1), read(2)]);
    assert_eq!(b.tx(0).len(), 3);
    // The first resource was recycled: its duplicate is dropped; the last is replayed.
    b.rx(1, &[read(0)]);
    assert!(b.tx(1).is_empty());
    assert_eq!(b.qp.counters().get(Counter::DropDuplicateNoResource), 1);
    b.rx(2, &[read(2)]);
    assert_eq!(b.tx(2)[0].bth.psn, Psn::new(A_PSN + 2));
    // No resources at all: READ is an invalid request.
    attr.max_dest_rd_atomic = 0;
    let mut b = Side::new(attr);
    expect_nak(read(0), NakCode::InvalidRequest, &mut b);
}

#[test]
fn read_response_with_a_nak_syndrome_is_dropped() {
    let (a, _) = attrs(QpType::Rc);
    let mut s = Side::new(a);
    let into = s.buf(&[0; 8]);
    let sge = into[0];
    let r = Remote {
        va: 0x1000,
        rkey: 5,
    };
    s.qp.post_send(SendWr::new(1, WrOp::Read(r), into)).unwrap();
    assert_eq!(s.tx(0).len(), 1);
    let resp = |syndrome| ExtHeaders {
        aeth: Some(AethRepr { syndrome, msn: 1 }),
        ..ExtHeaders::default()
    };
    let nak = resp(Syndrome::Nak(NakCode::RemoteAccessError));
    s.rx(
        1,
        &[pkt(
            "RC_RDMA_READ_RESPONSE_ONLY",
            A,
            A_PSN,
            false,
            nak,
            data(8, 1),
        )],
    );
    assert_eq!(s.qp.counters().get(Counter::DropUnexpectedResponse), 1);
    assert!(s.cqes().is_empty());
    // Wrong length: dropped too.
    let ack = resp(Syndrome::ACK_NO_CREDITS);
    s.rx(
        2,
        &[pkt(
            "RC_RDMA_READ_RESPONSE_ONLY",
            A,
            A_PSN,
            false,
            ack,
            data(7, 1),
        )],
    );
    assert_eq!(s.qp.counters().get(Counter::DropUnexpectedResponse), 2);
    s.rx(
        3,
        &[pkt(
            "RC_RDMA_READ_RESPONSE_ONLY",
            A,
            A_PSN,
            false,
            ack,
            data(8, 1),
        )],
    );
    let c = s.cqes();
    assert_eq!((c[0].status, c[0].byte_len), (WcStatus::Success, 8));
    assert_eq!(s.mem.peek(sge.lkey, sge.addr, 8), data(8, 1));
}
