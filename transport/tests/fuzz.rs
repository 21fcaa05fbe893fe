//! Bad input (issue 35, "Bad input"): random and mutated packets of every
//! opcode into RC, UC and UD QPs — requests into responders, responses into
//! a requester with work outstanding. No panic, no hang (every transmit
//! drain ends), and no byte changes in the regions that no request may
//! write: one registered without write access, one in another PD.

use roce_transport::*;
use roce_wire::mr::Access;
use roce_wire::opcode::{ExtKind, TABLE};
use roce_wire::{
    AckCredits, AethRepr, AtomicAckEthRepr, AtomicEthRepr, BthRepr, DethRepr, ExtHeaders,
    LocalAckTimeout, NakCode, Opcode, RethRepr, RnrTimer, Syndrome,
};

mod common;
use common::{seed_from_env, Rng};

const PD: u16 = 5;
const QPNS: [u32; 3] = [0x31, 0x32, 0x33];
const PEER: u32 = 0x77;

struct Target {
    qp: Qp,
    attr: QpAttr,
}

fn attr(t: QpType, qpn: u32) -> QpAttr {
    let mut a = QpAttr::new(t, qpn, PEER);
    a.pmtu = Pmtu::Mtu256;
    a.pd = PD;
    a.sq_psn = Psn::new(0xFF_FFF0);
    a.rq_psn = Psn::new(0xFF_FFF8);
    a.timeout = LocalAckTimeout::new(6).unwrap();
    a.min_rnr_timer = RnrTimer(1);
    a.max_rd_atomic = 2;
    a.max_dest_rd_atomic = 2;
    a.qkey = 0x1234;
    a
}

#[test]
fn random_and_mutated_packets() {
    fuzz(200_000);
}

/// The 10^6 (`cargo test --release -p roce-transport -- --ignored`).
#[test]
#[ignore]
fn a_million_random_and_mutated_packets() {
    fuzz(1_000_000);
}

fn fuzz(n: u64) {
    let seed = seed_from_env(0xf022);
    let n: u64 = std::env::var("ROCE_FUZZ_PACKETS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(n);
    eprintln!(
        "random_and_mutated_packets: seed {seed:#x}, {n} packets (ROCE_SEED, ROCE_FUZZ_PACKETS)"
    );
    let mut rng = Rng(seed);
    let mut mem = HostMemory::new(64, 1024);
    let (rw, rw_va) = mem.alloc(PD, Access::ALL, 3000);
    let (ro, ro_va) = mem.alloc(PD, Access::REMOTE_READ, 3000);
    let (other, other_va) = mem.alloc(PD + 1, Access::ALL, 3000);
    let (local, local_va) = mem.alloc(PD, Access::LOCAL_WRITE, 1 << 16);
    for (k, va) in [(ro, ro_va), (other, other_va)] {
        let fill: Vec<u8> = (0..3000).map(|i| (i * 13 % 251) as u8).collect();
        mem.poke(k, va, &fill);
    }
    let guarded = |m: &HostMemory| (m.peek(ro, ro_va, 3000), m.peek(other, other_va, 3000));
    let before = guarded(&mem);
    let keys = [rw, ro, other, local, rw ^ 1, rw + 0x100, 0, u32::MAX];
    let vas = [
        rw_va,
        rw_va + 2992,
        rw_va + 3000,
        ro_va,
        other_va,
        0,
        u64::MAX - 7,
        rw_va + 4,
    ];
    let mut targets: Vec<Target> = [QpType::Rc, QpType::Uc, QpType::Ud]
        .iter()
        .zip(QPNS)
        .map(|(&t, q)| {
            let a = attr(t, q);
            Target {
                qp: Qp::connected(a, Config::default()),
                attr: a,
            }
        })
        .collect();
    let mut now = 0u64;
    let mut wr = 0u64;
    let mut sent = 0u64;
    let mut seen = vec![0u64; Counter::ALL.len()];
    for i in 0..n {
        now += rng.below(3000);
        let ti = rng.below(3) as usize;
        let tg = &mut targets[ti];
        // Keep receive WQEs and send work around.
        if tg.qp.rq_len() < 4 && rng.below(2) == 0 {
            let len = rng.pick(&[0u32, 8, 256, 1000]);
            let lkey = rng.pick(&[local, local, rw, ro]);
            tg.qp
                .post_recv(RecvWr {
                    wr_id: wr,
                    sgl: vec![Sge {
                        addr: local_va + rng.below(60_000),
                        len,
                        lkey,
                    }],
                })
                .unwrap();
            wr += 1;
        }
        if tg.qp.sq_len() < 4 && rng.below(3) == 0 {
            let remote = Remote {
                va: rng.pick(&vas),
                rkey: rng.pick(&keys),
            };
            let op = match rng.below(8) {
                0 => WrOp::Send,
                1 => WrOp::SendImm(7),
                2 => WrOp::SendInv(rng.pick(&keys)),
                3 => WrOp::Write(remote),
                4 => WrOp::WriteImm(remote, 9),
                5 => WrOp::Read(remote),
                6 => WrOp::CmpSwap {
                    remote,
                    compare: 1,
                    swap: 2,
                },
                _ => WrOp::FetchAdd { remote, add: 3 },
            };
            let len = if matches!(op, WrOp::CmpSwap { .. } | WrOp::FetchAdd { .. }) {
                8
            } else {
                rng.pick(&[0u32, 1, 255, 256, 257, 600])
            };
            let mut w = SendWr::new(
                wr,
                op,
                vec![Sge {
                    addr: local_va + rng.below(60_000),
                    len,
                    lkey: rng.pick(&[local, local, local, rw, other]),
                }],
            );
            w.ud = Some(UdDest {
                qpn: PEER,
                qkey: rng.pick(&[0x1234, 0x8000_0000, 5]),
            });
            w.fence = rng.below(8) == 0;
            let _ = tg.qp.post_send(w);
            wr += 1;
        }
        // A packet: any opcode of the table (or none), fields near the edges
        // and near what the QP expects.
        let own: Vec<_> = TABLE
            .iter()
            .filter(|i| i.transport == tg.attr.qp_type.transport())
            .collect();
        let info = if rng.below(4) == 0 {
            &TABLE[rng.below(TABLE.len() as u64) as usize]
        } else {
            own[rng.below(own.len() as u64) as usize]
        };
        let opcode = if rng.below(50) == 0 {
            Opcode(rng.next() as u8)
        } else {
            Opcode(info.code)
        };
        let near = |rng: &mut Rng, p: Psn| -> Psn {
            match rng.below(4) {
                0 => Psn::new(rng.next() as u32),
                _ => p.add(rng.below(8) as u32).sub(4),
            }
        };
        let psn = if rng.below(2) == 0 {
            near(&mut rng, tg.qp.epsn())
        } else {
            near(&mut rng, tg.qp.unacked_psn())
        };
        let len = match rng.below(4) {
            0 => rng.pick(&[0usize, 1, 4, 255, 256, 257]),
            _ => rng.below(300) as usize,
        };
        let mut ext = ExtHeaders::default();
        for &k in opcode.info().map_or(&[][..], |i| i.headers) {
            match k {
                ExtKind::Reth => {
                    ext.reth = Some(RethRepr {
                        va: rng.pick(&vas).wrapping_add(rng.edgy(3)),
                        rkey: rng.pick(&keys),
                        dma_len: rng.pick(&[0, 1, 8, 256, 300, 1 << 31, u32::MAX, len as u32]),
                    })
                }
                ExtKind::Aeth => {
                    let syndrome = match rng.below(4) {
                        0 => Syndrome::Ack(AckCredits(rng.below(32) as u8)),
                        1 => Syndrome::RnrNak(RnrTimer(rng.below(32) as u8)),
                        2 => Syndrome::Nak(NakCode::from_value(rng.below(32) as u8)),
                        _ => Syndrome::from_byte(rng.next() as u8),
                    };
                    ext.aeth = Some(AethRepr {
                        syndrome,
                        msn: rng.edgy(24) as u32,
                    })
                }
                ExtKind::ImmDt => ext.immdt = Some(rng.next() as u32),
                ExtKind::Ieth => ext.ieth = Some(rng.pick(&keys)),
                ExtKind::AtomicEth => {
                    ext.atomic_eth = Some(AtomicEthRepr {
                        va: rng.pick(&vas).wrapping_add(rng.edgy(3)),
                        rkey: rng.pick(&keys),
                        swap_add: rng.edgy(64),
                        compare: rng.edgy(64),
                    })
                }
                ExtKind::AtomicAckEth => {
                    ext.atomic_ack_eth = Some(AtomicAckEthRepr {
                        orig_remote_data: rng.edgy(64),
                    })
                }
                ExtKind::Deth => {
                    ext.deth = Some(DethRepr {
                        qkey: rng.pick(&[0x1234, 0x1235, 0]),
                        src_qp: rng.edgy(24) as u32,
                    })
                }
                ExtKind::Cnp => {}
            }
        }
        if rng.below(30) == 0 {
            // Headers that do not match the opcode.
            ext.reth = ext.reth.xor(Some(RethRepr::default()));
        }
        let bth = BthRepr {
            opcode,
            solicited: rng.below(2) == 0,
            mig_req: false,
            pad_count: rng.below(4) as u8,
            tver: 0,
            pkey: if rng.below(16) == 0 {
                rng.pick(&[0x7FFF, 0x8001, 0])
            } else {
                0xFFFF
            },
            fecn: false,
            becn: rng.below(2) == 0,
            dest_qp: if rng.below(20) == 0 {
                rng.edgy(24) as u32
            } else {
                tg.attr.qpn
            },
            ack_req: rng.below(2) == 0,
            psn,
        };
        let payload = (0..len).map(|_| rng.next() as u8).collect();
        let p = Packet { bth, ext, payload };
        tg.qp.receive(now, &p, rng.below(10) == 0, &mut mem);
        // Drain what it sends; a drain must end.
        let mut k = 0;
        while tg.qp.poll_transmit(now, &mut mem).is_some() {
            k += 1;
            sent += 1;
            assert!(
                k < 100_000,
                "seed {seed:#x} packet {i}: transmit does not end"
            );
        }
        while tg.qp.poll_cq().is_some() {}
        if tg.qp.state() == QpState::Error || tg.qp.state() == QpState::Sqe {
            for (c, k) in tg.qp.counters().nonzero() {
                seen[c as usize] += k;
            }
            tg.qp.modify(QpState::Reset, &tg.attr).unwrap();
            for s in [QpState::Init, QpState::Rtr, QpState::Rts] {
                tg.qp.modify(s, &tg.attr).unwrap();
            }
        }
        if let Some(d) = tg.qp.next_deadline() {
            if rng.below(4) == 0 {
                now = now.max(d);
            }
        }
    }
    assert!(
        guarded(&mem) == before,
        "seed {seed:#x}: a protected region changed"
    );
    for t in &targets {
        for (c, k) in t.qp.counters().nonzero() {
            seen[c as usize] += k;
        }
    }
    eprintln!("  sent {sent}");
    for (i, c) in Counter::ALL.iter().enumerate() {
        eprintln!("  {:>26} {}", c.name(), seen[i]);
    }
}

/// Real traffic between two RC endpoints, every verb, with one field of
/// some packets changed in flight: opcode, PSN, length, pad, keys, VAs,
/// DMA lengths, syndromes. No panic, no hang, no write to a region that
/// allows none; a QP that goes to Error is brought up again.
#[test]
fn mutated_real_traffic() {
    let seed = seed_from_env(0x3017);
    eprintln!("mutated_real_traffic: seed {seed:#x}");
    let mut rng = Rng(seed);
    let mut attrs = [attr(QpType::Rc, QPNS[0]), attr(QpType::Rc, PEER)];
    attrs[0].dest_qpn = PEER;
    attrs[1].dest_qpn = QPNS[0];
    attrs[1].sq_psn = attrs[0].rq_psn;
    attrs[1].rq_psn = attrs[0].sq_psn;
    let mut qps = attrs.map(|a| Qp::connected(a, Config::default()));
    let mut mems = [HostMemory::new(64, 1024), HostMemory::new(64, 1024)];
    let regions: Vec<_> = mems
        .iter_mut()
        .map(|m| {
            let rw = m.alloc(PD, Access::ALL, 4096);
            let ro = m.alloc(PD, Access::REMOTE_READ, 4096);
            m.poke(ro.0, ro.1, &[0xA5; 4096]);
            (rw, ro)
        })
        .collect();
    let mut now = 0u64;
    let mut mutated = 0u64;
    let mut ok = 0u64;
    let mut restarts = 0u64;
    for round in 0..20_000u64 {
        for s in 0..2 {
            let ((rw, rwva), _) = regions[s];
            let ((prw, prwva), (pro, prova)) = regions[1 - s];
            if qps[s].rq_len() < 4 {
                let _ = qps[s].post_recv(RecvWr {
                    wr_id: round,
                    sgl: vec![Sge {
                        addr: rwva + 2048,
                        len: 2048,
                        lkey: rw,
                    }],
                });
            }
            if qps[s].sq_len() < 6 {
                // Mostly the writable region; sometimes the read-only one,
                // where WRITEs and atomics must fail.
                let remote = if rng.below(8) != 0 {
                    Remote {
                        va: prwva + rng.below(3000),
                        rkey: prw,
                    }
                } else {
                    Remote {
                        va: prova + rng.below(3000),
                        rkey: pro,
                    }
                };
                let aligned = Remote {
                    va: remote.va & !7,
                    ..remote
                };
                let (op, len) = match rng.below(8) {
                    0 => (WrOp::Send, 600),
                    1 => (WrOp::SendImm(1), 10),
                    2 => (WrOp::Write(remote), 700),
                    3 => (WrOp::WriteImm(remote, 2), 30),
                    4 | 5 => (WrOp::Read(remote), 900),
                    6 => (
                        WrOp::CmpSwap {
                            remote: aligned,
                            compare: 0,
                            swap: 1,
                        },
                        8,
                    ),
                    _ => (
                        WrOp::FetchAdd {
                            remote: aligned,
                            add: 1,
                        },
                        8,
                    ),
                };
                let sgl = vec![Sge {
                    addr: rwva,
                    len,
                    lkey: rw,
                }];
                let _ = qps[s].post_send(SendWr::new(round, op, sgl));
            }
        }
        now += 2000;
        let mut busy = false;
        for s in 0..2 {
            let mut out = Vec::new();
            while let Some(p) = qps[s].poll_transmit(now, &mut mems[s]) {
                out.push(p);
                assert!(out.len() < 100_000, "seed {seed:#x}: transmit does not end");
            }
            busy |= !out.is_empty();
            for mut p in out {
                if rng.below(100) < 3 {
                    continue;
                }
                if rng.below(100) < 5 {
                    mutated += 1;
                    match rng.below(9) {
                        0 => {
                            p.bth.opcode =
                                Opcode(TABLE[rng.below(TABLE.len() as u64) as usize].code)
                        }
                        1 => p.bth.psn = p.bth.psn.add(rng.below(5) as u32).sub(2),
                        2 => {
                            let n = p.payload.len() as i64 + rng.below(9) as i64 - 4;
                            p.payload.resize(n.max(0) as usize, 0x5A);
                        }
                        3 => p.bth.pad_count = rng.below(4) as u8,
                        4 => {
                            if let Some(r) = &mut p.ext.reth {
                                r.rkey ^= 1 << rng.below(32);
                            }
                        }
                        5 => {
                            if let Some(r) = &mut p.ext.reth {
                                r.va = r.va.wrapping_add(rng.edgy(13));
                            }
                        }
                        6 => {
                            if let Some(r) = &mut p.ext.reth {
                                r.dma_len = rng.edgy(32) as u32;
                            }
                        }
                        7 => {
                            if let Some(a) = &mut p.ext.aeth {
                                a.syndrome = Syndrome::from_byte(rng.next() as u8);
                            }
                        }
                        _ => {
                            if let Some(a) = &mut p.ext.atomic_eth {
                                a.va ^= 1 << rng.below(16);
                            }
                        }
                    }
                }
                qps[1 - s].receive(now, &p, false, &mut mems[1 - s]);
            }
            while let Some(c) = qps[s].poll_cq() {
                ok += (c.status == WcStatus::Success) as u64;
            }
        }
        if !busy {
            // Idle: on to the next timer.
            if let Some(d) = qps.iter().filter_map(Qp::next_deadline).min() {
                now = now.max(d);
            }
        }
        for s in 0..2 {
            if qps[s].state() != QpState::Rts {
                // Both ends start again with fresh PSN state.
                restarts += 1;
                for (q, a) in qps.iter_mut().zip(attrs) {
                    q.modify(QpState::Reset, &a).unwrap();
                    for st in [QpState::Init, QpState::Rtr, QpState::Rts] {
                        q.modify(st, &a).unwrap();
                    }
                }
            }
        }
    }
    for (m, (_, (ro, rova))) in mems.iter().zip(&regions) {
        assert!(
            m.peek(*ro, *rova, 4096) == [0xA5; 4096],
            "seed {seed:#x}: a read-only region changed"
        );
    }
    eprintln!("  {mutated} packets mutated, {ok} successful completions, {restarts} restarts");
    assert!(mutated > 1000 && ok > 10_000);
}
