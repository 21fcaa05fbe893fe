//! The whole NIC (`roce_nic`: the transport, `host_if`, the csr block,
//! `qp_events`, PicoRV32 running roce-fw) driven as a host drives it, through
//! `roce_sim::verbs`: rings in host memory, doorbells, modify-QP through the
//! firmware's mailbox.
//!
//! - Bring-up: the firmware's modify-QP lands in the context table (read
//!   back over the host's AXI4-Lite port), an illegal transition is
//!   refused with the firmware's result code and changes nothing.
//! - `roce-sim run --a nic --b nic` (and against the model): every verb,
//!   lossless and over a lossy link, every byte checked by the run.
//! - Bad input: a doorbell beyond the ring and a WQE with an unknown
//!   opcode stop the queue with an error (never a hang, nothing written).
//! - Modify-QP to Error: outstanding sends and every receive WQE not
//!   completed (a half-received SEND's included) complete in order with
//!   `WR_FLUSH_ERR`, as the transport model; Reset brings the QP back.

#![cfg(roce_picorv32)]

use roce_regs::queue::{Payload, SendFlag, SendWqe, Sge, WcStatus, MAX_SGE};
use roce_regs::{db, qp, QpState, QpType, ResultCode};
use roce_sim::axi_mem::AxiMemTiming;
use roce_sim::nic::Station;
use roce_sim::verbs::Device;
use std::process::Command;

const A: Station = Station {
    mac: [0x02, 0, 0, 0, 0, 0x0a],
    ip: [10, 0, 0, 1],
};

fn settle(d: &mut Device, max: u64) {
    for _ in 0..max {
        if d.settled() {
            return;
        }
        d.step();
    }
    panic!(
        "the register script did not finish in {max} cycles: {:?}",
        d.errors()
    );
}

fn bring_up(qpn: u32) -> roce_sim::fw::BringUp {
    roce_sim::fw::BringUp {
        qpn,
        qp_type: QpType::Rc,
        pkey_index: 0,
        access_flags: 0xE,
        qkey: 0,
        sgid_index: 1,
        dmac: [0x02, 0, 0, 0, 0, 0x0b],
        dgid: roce_sim::nic::ipv4_mapped([10, 0, 0, 2]),
        path_mtu: 5,
        dest_qpn: qpn,
        rq_psn: 0x12_3456,
        max_dest_rd_atomic: 16,
        min_rnr_timer: 1,
        sq_psn: 0xFF_FFF0,
        timeout: 14,
        retry_cnt: 7,
        rnr_retry: 7,
        max_rd_atomic: 16,
        pd: roce_sim::nic::PD as u32,
    }
}

/// A NIC with CQ 0 (`2^cq_log` CQEs) and QP `qpn` (send and receive
/// rings of `2^sq_log` / `2^rq_log` WQEs, both completing to CQ 0), with
/// one 4 KiB MR (`key` at `va`, its page at 0x5000_0000) if asked, brought
/// to RTS through the firmware.
fn nic_with_qp(seed: u64, qpn: u32, logs: (u32, u32, u32), mr: Option<(u32, u64)>) -> Device {
    nic_brought_up(seed, logs, mr, bring_up(qpn))
}

/// [`nic_with_qp`] with the QP's attributes `up`.
fn nic_brought_up(
    seed: u64,
    logs: (u32, u32, u32),
    mr: Option<(u32, u64)>,
    up: roce_sim::fw::BringUp,
) -> Device {
    let qpn = up.qpn;
    let mut d = Device::open(seed, AxiMemTiming::FAST).expect("open");
    d.set_station(A);
    d.create_cq(0, logs.0);
    d.create_qp(qpn, logs.1, logs.2, 0, 0);
    if let Some((key, va)) = mr {
        let region = roce_wire::mr::Region {
            pd: roce_sim::nic::PD,
            access: roce_wire::mr::Access::ALL,
            base: va,
            length: 4096,
            page_shift: 12,
            pt_base: 0,
        };
        d.reg_mr(key, &region, &[0x5000_0000]);
    }
    for (what, req) in up.requests() {
        d.modify_qp(&req, what);
    }
    settle(&mut d, 2_000_000);
    assert!(d.errors().is_empty(), "{:?}", d.errors());
    d
}

/// Modify-QP `qpn` to state `s` (only the state) through the firmware.
fn move_qp(d: &mut Device, qpn: u32, s: QpState) {
    let req = roce_fw::qp::Request {
        qpn,
        mask: roce_regs::AttrMask::State.value(),
        qp_state: s.value(),
        ..roce_fw::qp::Request::default()
    };
    d.modify_qp(&req, &format!("QP {qpn} to {s:?}"));
    settle(d, 2_000_000);
}

/// Nothing but the rings (`Device`'s ring area) was written in host memory.
fn only_rings_written(d: &Device) {
    assert!(
        d.mem
            .written()
            .all(|(pa, _)| (0x1_0000_0000..0x2_0000_0000).contains(&pa)),
        "only the rings were written"
    );
}

#[test]
fn firmware_brings_a_qp_up_and_refuses_an_illegal_transition() {
    let mut d = Device::open(7, AxiMemTiming::FAST).expect("open");
    d.set_station(A);
    for (what, req) in bring_up(5).requests() {
        d.modify_qp(&req, what);
    }
    settle(&mut d, 2_000_000);
    assert!(d.errors().is_empty(), "{:?}", d.errors());
    let st = d.read_reg(qp::state::addr(5));
    assert_eq!(
        qp::state::STATE.get(st),
        QpState::Rts.value(),
        "QP 5 in RTS"
    );
    assert_eq!(
        qp::sq_psn::PSN.get(d.read_reg(qp::sq_psn::addr(5))),
        0xFF_FFF0
    );
    assert_eq!(
        qp::rq_psn::PSN.get(d.read_reg(qp::rq_psn::addr(5))),
        0x12_3456
    );
    // RTS → Init is not a transition IBTA allows: refused, nothing written.
    let mut bad = bring_up(5).requests()[0].1;
    bad.mask = roce_regs::AttrMask::State.value();
    let got = d.command_result(&bad);
    assert_eq!(got, ResultCode::BadTransition, "RTS to Init");
    let st = d.read_reg(qp::state::addr(5));
    assert_eq!(qp::state::STATE.get(st), QpState::Rts.value(), "still RTS");
}

fn roce_sim(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_roce-sim"))
        .arg("run")
        .args(args)
        .output()
        .expect("run roce-sim");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

fn json_of(args: &[&str], name: &str) -> serde_json::Value {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("roce_nic");
    std::fs::create_dir_all(&dir).unwrap();
    let j = dir.join(name);
    let mut a: Vec<&str> = args.to_vec();
    let js = j.to_str().unwrap().to_string();
    a.extend(["--quiet", "--json", &js]);
    let (ok, out, err) = roce_sim(&a);
    assert!(ok, "roce-sim run {args:?} failed:\n{out}\n{err}");
    serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap()
}

#[test]
fn two_whole_nics_run_every_verb() {
    for (test, drop) in [("mixed", "0"), ("mixed", "1"), ("send", "0.5")] {
        let j = json_of(
            &[
                "--a", "nic", "--b", "nic", "--test", test, "--size", "1000", "--iters", "60",
                "--qps", "2", "--drop", drop,
            ],
            &format!("nic_{test}_{drop}.json"),
        );
        assert_eq!(j["messages"], 120, "{test} at {drop} % loss");
    }
    // Inline SENDs and WRITEs (every one of at most 64 bytes), lossy.
    let j = json_of(
        &[
            "--a", "nic", "--b", "nic", "--test", "mixed", "--size", "64", "--inline", "--iters",
            "80", "--qps", "2", "--drop", "1",
        ],
        "nic_mixed_inline.json",
    );
    assert_eq!(j["messages"], 160, "mixed inline at 1 % loss");
}

/// Eight QPs of 8-byte SENDs on a lossless link: `host_if` serves pending
/// send queues in turn, so no message waits much longer than the rest
/// (its fetcher once stayed on the QPs that kept completing, and a few
/// waited 40 times the median).
#[test]
fn busy_queues_are_served_in_turn() {
    let j = json_of(
        &[
            "--a", "nic", "--b", "nic", "--test", "send", "--size", "8", "--iters", "300", "--qps",
            "8", "--drop", "0",
        ],
        "nic_fair.json",
    );
    assert_eq!(j["messages"], 2400);
    let lat = &j["latency_cycles"];
    let (p50, max) = (lat["p50"].as_u64().unwrap(), lat["max"].as_u64().unwrap());
    assert!(max < 4 * p50, "latency p50 {p50}, max {max} cycles");
}

#[test]
fn whole_nic_against_the_model() {
    for (a, b) in [("nic", "model"), ("model", "nic")] {
        let j = json_of(
            &[
                "--a",
                a,
                "--b",
                b,
                "--test",
                "mixed",
                "--size",
                "3000",
                "--iters",
                "50",
                "--qps",
                "2",
                "--drop",
                "1",
                "--dup",
                "1",
                "--reorder",
                "1",
            ],
            &format!("nic_vs_{a}_{b}.json"),
        );
        assert_eq!(j["messages"], 100);
    }
}

fn send_wqe(opcode: u8, wr_id: u64) -> SendWqe {
    let mut sge = [Sge::default(); MAX_SGE as usize];
    sge[0] = Sge {
        addr: 0x1000,
        length: 8,
        lkey: 0x100,
    };
    SendWqe {
        opcode,
        flags: SendFlag::Signaled.value() as u8,
        imm_inv: 0,
        wr_id,
        remote_addr: 0,
        rkey: 0,
        ud_qpn: 0,
        compare_add: 0,
        swap: 0,
        ud_qkey: 0,
        payload: Payload::Sgl { num: 1, sge },
    }
}

#[test]
fn bad_wqe_and_bad_doorbell_stop_the_queue() {
    let mut d = nic_with_qp(9, 3, (4, 2, 2), None);
    // An opcode no verb has: completes with loc-qp-op-err, QP error pulse.
    d.post_send(3, &send_wqe(0x0F, 77)).unwrap();
    let mut cqe = None;
    for _ in 0..20_000 {
        d.step();
        if let Some(c) = d.poll_cq(0) {
            cqe = Some(c);
            break;
        }
    }
    let c = cqe.expect("a completion for the bad WQE");
    assert_eq!((c.qpn, c.wr_id), (3, 77));
    assert_eq!(c.status, WcStatus::LocQpOpErr.value() as u8);
    settle(&mut d, 10_000);
    assert!(
        d.errors()
            .iter()
            .any(|e| e.contains("QP 3 to Error by the host_if")),
        "{:?}",
        d.errors()
    );
    // A doorbell beyond the ring (4 WQEs, producer index 9).
    let before = d.errors().len();
    d.write_reg(db::sq_pi::addr(3), 9);
    for _ in 0..2000 {
        d.step();
    }
    assert!(d.errors()[before..]
        .iter()
        .any(|e| e.contains("QP 3 to Error")));
    only_rings_written(&d);
}

/// Doorbell to the first beat on the wire, the NIC's own share: memory
/// answering at once (`AxiMemTiming::FAST`), an idle NIC, an 8-byte SEND.
/// Counted from the cycle the host's AXI4-Lite doorbell write is issued.
#[test]
fn doorbell_to_wire_latency() {
    let key = (1 << roce_wire::mr::KEY_INDEX_SHIFT) | 0x42;
    let mut d = nic_with_qp(11, 4, (4, 4, 4), Some((key, 0x7000_1000)));
    let mut lat = Vec::new();
    for i in 0..8u64 {
        let mut w = send_wqe(2, i); // WrOpcode::Send
        if let Payload::Sgl { sge, .. } = &mut w.payload {
            sge[0] = Sge {
                addr: 0x7000_1000 + 8 * i,
                length: 8,
                lkey: key,
            };
        }
        d.post_send(4, &w).unwrap();
        let t0 = d.cycle();
        let first = loop {
            d.step();
            if let Some((first, f)) = d.pop_tx() {
                assert!(roce_wire::Frame::parse(&f).is_ok(), "a valid frame");
                break first;
            }
            assert!(d.cycle() - t0 < 10_000, "no frame for the SEND");
        };
        lat.push(first - t0);
        // Let the (unanswered) request's retries not matter: reset the
        // QP's send side by moving on; each SEND is measured from idle.
        for _ in 0..200 {
            d.step();
        }
    }
    println!("doorbell → first beat on the wire, 8-byte SEND: {lat:?} cycles");
    let min = *lat.iter().min().unwrap();
    assert!(min > 0 && min < 200, "latency {min}");
}

/// Inline SENDs and WRITEs, 0 to `MAX_INLINE` bytes: the payload is read
/// from the WQE in the send queue, with no memory region at all. Each
/// request on the wire (parsed, ICRC checked, by `roce_wire`) carries the
/// bytes the WQE held; a WRITE's RETH names the remote address and length.
#[test]
fn inline_payload_is_taken_from_the_wqe() {
    use roce_regs::queue::{WrOpcode, MAX_INLINE};
    use roce_sim::rng::Rng;
    let mut d = nic_with_qp(13, 5, (6, 5, 4), None);
    let mut rng = Rng::new(13);
    let mut want = Vec::new();
    let lens = [0u32, 1, 7, 8, 33, MAX_INLINE - 1, MAX_INLINE];
    for (i, &len) in lens.iter().enumerate() {
        let write = i % 2 == 1;
        let bytes = rng.bytes(len as usize);
        let mut data = [0u8; MAX_INLINE as usize];
        data[..bytes.len()].copy_from_slice(&bytes);
        let mut w = send_wqe(
            if write {
                WrOpcode::RdmaWrite
            } else {
                WrOpcode::Send
            }
            .value() as u8,
            i as u64,
        );
        w.remote_addr = 0x4000 + 0x100 * i as u64;
        w.rkey = 0x1234;
        w.payload = Payload::Inline {
            len: len as u8,
            data,
        };
        d.post_send(5, &w).unwrap();
        want.push((write, w.remote_addr, bytes));
    }
    // No MR is registered: the payload can only come from the WQEs.
    let mut got = Vec::new();
    for _ in 0..20_000 {
        d.step();
        while let Some((_, f)) = d.pop_tx() {
            let fr = roce_wire::Frame::parse(&f).expect("a valid frame, ICRC right");
            assert_eq!(fr.repr.bth.dest_qp, bring_up(5).dest_qpn);
            got.push((fr.repr.ext.reth, fr.payload.to_vec()));
        }
        if got.len() >= want.len() {
            break;
        }
    }
    assert!(
        got.len() >= want.len(),
        "{} requests on the wire",
        got.len()
    );
    for (i, ((write, rva, bytes), (reth, pay))) in want.iter().zip(&got).enumerate() {
        assert_eq!(pay, bytes, "WQE {i}: payload");
        match reth {
            Some(r) => {
                assert!(write, "WQE {i}: a SEND with a RETH");
                assert_eq!((r.va, r.dma_len), (*rva, bytes.len() as u32), "WQE {i}");
            }
            None => assert!(!write, "WQE {i}: a WRITE without RETH"),
        }
    }
    only_rings_written(&d);
}

/// Modify-QP to Error with SENDs outstanding (sent, never acknowledged:
/// no peer), then to Reset and up again with another `sq_psn`, through the
/// firmware, as `qp_events` turns the context writes into the transport's
/// events: the outstanding SENDs complete in order with `WR_FLUSH_ERR`, so
/// does one posted while in Error, nothing is sent in Error, and after
/// Reset → Init → RTR → RTS the next SEND leaves with the new first PSN.
#[test]
fn error_flushes_and_reset_brings_the_qp_back() {
    use roce_regs::queue::WrOpcode;
    const Q: u32 = 6;
    let key = (1 << roce_wire::mr::KEY_INDEX_SHIFT) | 0x17;
    let mut d = nic_with_qp(17, Q, (5, 4, 4), Some((key, 0x7000_0000)));
    let send = |i: u64| {
        let mut w = send_wqe(WrOpcode::Send.value() as u8, i);
        if let Payload::Sgl { sge, .. } = &mut w.payload {
            sge[0] = Sge {
                addr: 0x7000_0000 + 64 * i,
                length: 64,
                lkey: key,
            };
        }
        w
    };
    // Run until `n` frames left (their PSNs) or `cycles` passed.
    let frames = |d: &mut Device, n: usize, cycles: u64| {
        let mut psns = Vec::new();
        for _ in 0..cycles {
            d.step();
            while let Some((_, f)) = d.pop_tx() {
                let fr = roce_wire::Frame::parse(&f).expect("a valid frame");
                psns.push(fr.repr.bth.psn.value());
            }
            if psns.len() >= n {
                break;
            }
        }
        psns
    };
    let poll = |d: &mut Device, n: usize| {
        let mut got = Vec::new();
        for _ in 0..50_000 {
            d.step();
            while let Some(c) = d.poll_cq(0) {
                got.push(c);
            }
            if got.len() >= n {
                break;
            }
        }
        got
    };
    for i in 0..3 {
        d.post_send(Q, &send(i)).unwrap();
    }
    let first = bring_up(Q).sq_psn;
    let want: Vec<u32> = (0..3).map(|k| (first + k) & 0xFF_FFFF).collect();
    assert_eq!(
        frames(&mut d, 3, 20_000),
        want,
        "three SENDs across the PSN wrap"
    );
    move_qp(&mut d, Q, QpState::Error);
    let c = poll(&mut d, 3);
    let got: Vec<(u64, u8)> = c.iter().map(|c| (c.wr_id, c.status)).collect();
    let flush = WcStatus::WrFlushErr.value() as u8;
    assert_eq!(
        got,
        vec![(0, flush), (1, flush), (2, flush)],
        "flushed in order"
    );
    d.post_send(Q, &send(3)).unwrap();
    let c = poll(&mut d, 1);
    assert_eq!(
        c.iter().map(|c| (c.wr_id, c.status)).collect::<Vec<_>>(),
        vec![(3, flush)],
        "a SEND posted in Error is flushed"
    );
    assert!(frames(&mut d, 1, 5_000).is_empty(), "nothing sent in Error");
    // Reset, the rings restarted, and up again from another PSN.
    move_qp(&mut d, Q, QpState::Reset);
    d.create_qp(Q, 4, 4, 0, 0);
    let mut up = bring_up(Q);
    up.sq_psn = 0x00_0100;
    for (what, req) in up.requests() {
        d.modify_qp(&req, what);
    }
    settle(&mut d, 2_000_000);
    d.post_send(Q, &send(4)).unwrap();
    assert_eq!(frames(&mut d, 1, 20_000), vec![0x100], "the new first PSN");
    assert!(
        d.errors()
            .iter()
            .all(|e| e.contains(&format!("QP {Q} to Error"))),
        "{:?}",
        d.errors()
    );
}

/// The peer's station (the bring-up's DMAC and DGID).
const B: Station = Station {
    mac: [0x02, 0, 0, 0, 0, 0x0b],
    ip: [10, 0, 0, 2],
};

/// A SEND packet (`pos`) from B to QP `qpn` with `payload`.
fn send_packet(
    qpn: u32,
    pos: roce_wire::opcode::Position,
    psn: u32,
    payload: Vec<u8>,
) -> roce_transport::Packet {
    use roce_wire::opcode::{OpKind, Transport, TABLE};
    let op = TABLE
        .iter()
        .find(|i| {
            i.transport == Transport::Rc
                && i.kind == OpKind::Send
                && i.position == pos
                && i.headers.is_empty()
        })
        .expect("a plain RC SEND opcode");
    roce_transport::Packet {
        bth: roce_wire::BthRepr {
            opcode: roce_wire::Opcode(op.code),
            solicited: false,
            mig_req: false,
            pad_count: 0,
            tver: 0,
            pkey: roce_wire::bth::DEFAULT_PKEY,
            fecn: false,
            becn: false,
            dest_qp: qpn,
            ack_req: true,
            psn: roce_wire::Psn::new(psn),
        },
        ext: Default::default(),
        payload,
    }
}

/// Packet `p` from B into the NIC's receive port, as a frame.
fn deliver(d: &mut Device, p: &roce_transport::Packet) {
    let eth = roce_wire::EthernetRepr {
        dst: A.mac,
        src: B.mac,
        vlan: None,
        ethertype: 0,
    };
    let udp = roce_wire::UdpRepr {
        src_port: roce_wire::udp::roce_src_port(p.bth.psn.value()),
        dst_port: roce_wire::udp::ROCE_V2_PORT,
        checksum: 0,
        payload_len: 0,
    };
    let f = p
        .to_frame(eth, roce_sim::nic::ipv4_path(B, A), udp)
        .expect("a well-formed frame");
    let at = d.cycle();
    d.push_rx(at, f);
}

/// A QP moved to Error by the firmware with receive WQEs posted, one SEND
/// complete and one half received (FIRST and MIDDLE, its LAST never
/// comes), then a receive posted in Error, against the transport model
/// fed the same packets: the same completions in the same order — the
/// finished SEND's success, then every other receive WQE (the half-filled
/// one first) with `WR_FLUSH_ERR`. After Reset, the rings restarted and
/// the QP up again, a SEND lands in a new receive WQE.
#[test]
fn error_flushes_the_receive_queue() {
    use roce_regs::queue::{RecvWqe, WcOpcode};
    use roce_transport::{HostMemory, Qp, QpAttr};
    use roce_wire::opcode::Position;
    const Q: u32 = 9;
    let key = (1 << roce_wire::mr::KEY_INDEX_SHIFT) | 0x29;
    let va = 0x7000_0000u64;
    let mut up = bring_up(Q);
    up.path_mtu = roce_wire::Pmtu::Mtu256 as u32;
    let mut d = nic_brought_up(23, (5, 4, 4), Some((key, va)), up);
    // The model: the responder's side of the same QP.
    let mut mem = HostMemory::new(4, 16);
    let (mkey, mva) = mem.alloc(0, roce_wire::mr::Access::ALL, 4096);
    let mut a = QpAttr::new(roce_transport::QpType::Rc, Q, Q);
    a.pmtu = roce_wire::Pmtu::Mtu256;
    a.rq_psn = roce_wire::Psn::new(up.rq_psn);
    let mut m = Qp::new(a, roce_transport::Config::default());
    for st in [roce_transport::QpState::Init, roce_transport::QpState::Rtr] {
        m.modify(st, &a).unwrap();
    }
    let post = |d: &mut Device, m: &mut Qp, i: u64| {
        let mut sge = [Sge::default(); MAX_SGE as usize];
        sge[0] = Sge {
            addr: va + 512 * (i % 8),
            length: 512,
            lkey: key,
        };
        let wr_id = 100 + i;
        d.post_recv(
            Q,
            &RecvWqe {
                wr_id,
                num_sge: 1,
                sge,
            },
        )
        .unwrap();
        m.post_recv(roce_transport::RecvWr {
            wr_id,
            sgl: vec![roce_transport::Sge {
                addr: mva + 512 * (i % 8),
                len: 512,
                lkey: mkey,
            }],
        })
        .unwrap();
    };
    for i in 0..5 {
        post(&mut d, &mut m, i);
    }
    let bytes =
        |n: usize, seed: u8| -> Vec<u8> { (0..n).map(|k| seed.wrapping_add(k as u8)).collect() };
    let psn0 = up.rq_psn;
    let pkts = [
        send_packet(Q, Position::Only, psn0, bytes(100, 1)),
        send_packet(Q, Position::First, psn0 + 1, bytes(256, 2)),
        send_packet(Q, Position::Middle, psn0 + 2, bytes(256, 3)),
    ];
    for p in &pkts {
        deliver(&mut d, p);
        m.receive(0, p, false, &mut mem);
    }
    // Until the MIDDLE is acknowledged (its data written), then Error.
    let mut acked = None;
    for _ in 0..20_000 {
        d.step();
        while let Some((_, f)) = d.pop_tx() {
            let f = roce_wire::Frame::parse(&f).expect("a valid ACK");
            acked = Some(f.repr.bth.psn.value());
        }
        if acked == Some(psn0 + 2) {
            break;
        }
    }
    assert_eq!(acked, Some(psn0 + 2), "the MIDDLE acknowledged");
    move_qp(&mut d, Q, QpState::Error);
    m.modify(roce_transport::QpState::Error, &a).unwrap();
    post(&mut d, &mut m, 5);
    let mut got = Vec::new();
    for _ in 0..50_000 {
        d.step();
        while let Some(c) = d.poll_cq(0) {
            got.push(c);
        }
        if got.len() >= 6 {
            break;
        }
    }
    let flush = WcStatus::WrFlushErr.value() as u8;
    let recv = WcOpcode::Recv.value() as u8;
    let got: Vec<(u64, u8, u8, u32)> = got
        .iter()
        .map(|c| (c.wr_id, c.status, c.opcode, c.byte_len))
        .collect();
    let mut want = Vec::new();
    while let Some(c) = m.poll_cq() {
        let st = match c.status {
            roce_transport::WcStatus::Success => WcStatus::Success.value() as u8,
            roce_transport::WcStatus::WrFlushErr => flush,
            s => panic!("the model completed {} with {s:?}", c.wr_id),
        };
        assert_eq!(c.opcode, roce_transport::WcOpcode::Recv);
        want.push((c.wr_id, st, recv, c.byte_len));
    }
    assert_eq!(got, want, "receive completions against the model");
    assert_eq!(
        want.iter().map(|w| (w.0, w.1)).collect::<Vec<_>>(),
        [
            (100, WcStatus::Success.value() as u8),
            (101, flush),
            (102, flush),
            (103, flush),
            (104, flush),
            (105, flush)
        ],
        "the finished SEND, then every other WQE flushed in order"
    );
    assert_eq!(
        d.mem.peek(0x5000_0000, 100),
        bytes(100, 1),
        "the SEND ONLY landed"
    );
    // Reset, the rings restarted, up again: receives work again.
    move_qp(&mut d, Q, QpState::Reset);
    d.create_qp(Q, 4, 4, 0, 0);
    let mut up2 = up;
    up2.rq_psn = 0x00_0200;
    for (what, req) in up2.requests() {
        d.modify_qp(&req, what);
    }
    settle(&mut d, 2_000_000);
    post(&mut d, &mut m, 6);
    let p = send_packet(Q, Position::Only, 0x200, bytes(40, 9));
    deliver(&mut d, &p);
    let mut c = None;
    for _ in 0..20_000 {
        d.step();
        c = c.or_else(|| d.poll_cq(0));
        if c.is_some() {
            break;
        }
    }
    let c = c.expect("a receive completion after the restart");
    assert_eq!(
        (c.wr_id, c.status, c.byte_len),
        (106, WcStatus::Success.value() as u8, 40),
        "the SEND after Reset"
    );
    assert_eq!(d.mem.peek(0x5000_0000 + 512 * 6, 40), bytes(40, 9));
    assert!(
        d.mem
            .written()
            .all(|(pa, _)| (0x1_0000_0000..0x2_0000_0000).contains(&pa)
                || (0x5000_0000..0x5000_1000).contains(&pa)),
        "only the rings and the MR's page were written"
    );
}

/// A receive WQE of 512 bytes at `va + 512 * (i % 8)` under `key`, wr_id
/// 100 + i.
fn recv_wqe(key: u32, va: u64, i: u64) -> roce_regs::queue::RecvWqe {
    let mut sge = [Sge::default(); MAX_SGE as usize];
    sge[0] = Sge {
        addr: va + 512 * (i % 8),
        length: 512,
        lkey: key,
    };
    roce_regs::queue::RecvWqe {
        wr_id: 100 + i,
        num_sge: 1,
        sge,
    }
}

/// Steps until `n` CQEs were polled from CQ 0 (or `cycles` passed); their
/// (wr_id, status, opcode) split into send and receive completions.
/// Completions as (wr_id, status).
type Done = Vec<(u64, u8)>;

fn cqes_by_queue(d: &mut Device, n: usize, cycles: u64) -> (Done, Done) {
    use roce_regs::queue::WcOpcode;
    let mut got = Vec::new();
    for _ in 0..cycles {
        d.step();
        while let Some(c) = d.poll_cq(0) {
            got.push(c);
        }
        if got.len() >= n {
            break;
        }
    }
    let recv =
        |o: u8| o == WcOpcode::Recv.value() as u8 || o == WcOpcode::RecvRdmaWithImm.value() as u8;
    let sends = got
        .iter()
        .filter(|c| !recv(c.opcode))
        .map(|c| (c.wr_id, c.status))
        .collect();
    let recvs = got
        .iter()
        .filter(|c| recv(c.opcode))
        .map(|c| (c.wr_id, c.status))
        .collect();
    (sends, recvs)
}

/// The requester gives up (a SEND never acknowledged: timeout 1, one
/// retry): the SEND completes with `RETRY_EXC_ERR` and, as the model's
/// `enter_error`, the whole QP goes to Error: every receive WQE posted
/// completes with `WR_FLUSH_ERR`, and one posted afterwards too.
#[test]
fn requester_error_flushes_the_receive_queue() {
    const Q: u32 = 12;
    let key = (1 << roce_wire::mr::KEY_INDEX_SHIFT) | 0x33;
    let va = 0x7000_0000u64;
    let mut up = bring_up(Q);
    up.timeout = 1;
    up.retry_cnt = 1;
    let mut d = nic_brought_up(29, (5, 4, 4), Some((key, va)), up);
    for i in 0..3 {
        d.post_recv(Q, &recv_wqe(key, va, i)).unwrap();
    }
    let mut w = send_wqe(roce_regs::queue::WrOpcode::Send.value() as u8, 1);
    if let Payload::Sgl { sge, .. } = &mut w.payload {
        sge[0] = Sge {
            addr: va,
            length: 64,
            lkey: key,
        };
    }
    d.post_send(Q, &w).unwrap();
    let (sends, recvs) = cqes_by_queue(&mut d, 4, 200_000);
    let flush = WcStatus::WrFlushErr.value() as u8;
    assert_eq!(
        sends,
        [(1, WcStatus::RetryExcErr.value() as u8)],
        "the SEND gave up"
    );
    assert_eq!(
        recvs,
        [(100, flush), (101, flush), (102, flush)],
        "receives flushed"
    );
    d.post_recv(Q, &recv_wqe(key, va, 3)).unwrap();
    let (_, recvs) = cqes_by_queue(&mut d, 1, 20_000);
    assert_eq!(recvs, [(103, flush)], "a receive posted in Error");
    only_rings_written(&d);
}

/// The responder fails (a WRITE with a wrong R_Key: remote access error
/// NAK): as the model's `enter_error`, the whole QP goes to Error — its
/// SENDs outstanding (sent, not acknowledged) and its receive WQEs
/// complete with `WR_FLUSH_ERR`, each queue in order, as the transport
/// model fed the same packet completes them; nothing is written.
#[test]
fn responder_error_flushes_the_send_queue() {
    use roce_transport::{HostMemory, Qp, QpAttr, SendWr, WrOp};
    const Q: u32 = 13;
    let key = (1 << roce_wire::mr::KEY_INDEX_SHIFT) | 0x35;
    let va = 0x7000_0000u64;
    let up = bring_up(Q);
    let mut d = nic_brought_up(31, (5, 4, 4), Some((key, va)), up);
    let mut mem = HostMemory::new(4, 16);
    let (mkey, mva) = mem.alloc(0, roce_wire::mr::Access::ALL, 4096);
    let mut a = QpAttr::new(roce_transport::QpType::Rc, Q, Q);
    a.pmtu = roce_wire::Pmtu::Mtu4096;
    a.rq_psn = roce_wire::Psn::new(up.rq_psn);
    a.sq_psn = roce_wire::Psn::new(up.sq_psn);
    let mut m = Qp::new(a, roce_transport::Config::default());
    for st in [
        roce_transport::QpState::Init,
        roce_transport::QpState::Rtr,
        roce_transport::QpState::Rts,
    ] {
        m.modify(st, &a).unwrap();
    }
    for i in 0..2u64 {
        let mut w = send_wqe(roce_regs::queue::WrOpcode::Send.value() as u8, i + 1);
        if let Payload::Sgl { sge, .. } = &mut w.payload {
            sge[0] = Sge {
                addr: va + 64 * i,
                length: 64,
                lkey: key,
            };
        }
        d.post_send(Q, &w).unwrap();
        m.post_send(SendWr::new(
            i + 1,
            WrOp::Send,
            vec![roce_transport::Sge {
                addr: mva + 64 * i,
                len: 64,
                lkey: mkey,
            }],
        ))
        .unwrap();
        while m.poll_transmit(0, &mut mem).is_some() {}
        d.post_recv(Q, &recv_wqe(key, va, i)).unwrap();
        m.post_recv(roce_transport::RecvWr {
            wr_id: 100 + i,
            sgl: vec![roce_transport::Sge {
                addr: mva + 512 * i,
                len: 512,
                lkey: mkey,
            }],
        })
        .unwrap();
    }
    // Both SENDs on the wire (no peer acknowledges them).
    let mut sent = 0;
    for _ in 0..20_000 {
        d.step();
        while d.pop_tx().is_some() {
            sent += 1;
        }
        if sent == 2 {
            break;
        }
    }
    assert_eq!(sent, 2, "both SENDs sent");
    // A WRITE ONLY with a wrong R_Key.
    let info = roce_wire::opcode::TABLE
        .iter()
        .find(|i| {
            i.transport == roce_wire::opcode::Transport::Rc
                && i.kind == roce_wire::opcode::OpKind::Write
                && i.position == roce_wire::opcode::Position::Only
                && !i.has(roce_wire::opcode::ExtKind::ImmDt)
        })
        .unwrap();
    let mut p = send_packet(Q, roce_wire::opcode::Position::Only, up.rq_psn, vec![7; 16]);
    p.bth.opcode = roce_wire::Opcode(info.code);
    p.ext.reth = Some(roce_wire::ext::RethRepr {
        va,
        rkey: key ^ 0xFF,
        dma_len: 16,
    });
    deliver(&mut d, &p);
    m.receive(0, &p, false, &mut mem);
    let (sends, recvs) = cqes_by_queue(&mut d, 4, 50_000);
    let (mut msends, mut mrecvs) = (Vec::new(), Vec::new());
    let flush = WcStatus::WrFlushErr.value() as u8;
    while let Some(c) = m.poll_cq() {
        assert_eq!(c.status, roce_transport::WcStatus::WrFlushErr, "{c:?}");
        if c.opcode == roce_transport::WcOpcode::Recv {
            mrecvs.push((c.wr_id, flush));
        } else {
            msends.push((c.wr_id, flush));
        }
    }
    assert_eq!(sends, msends, "send completions against the model");
    assert_eq!(recvs, mrecvs, "receive completions against the model");
    assert_eq!(sends, [(1, flush), (2, flush)]);
    assert_eq!(recvs, [(100, flush), (101, flush)]);
    only_rings_written(&d);
}

/// The BTH's SE reaches the receive completion: a CQ armed for solicited
/// CQEs stays quiet through a SEND without SE (its CQE written) and fires
/// once on the next SEND, which has SE.
#[test]
fn solicited_events_follow_the_se_bit() {
    use roce_wire::opcode::Position;
    const Q: u32 = 14;
    let key = (1 << roce_wire::mr::KEY_INDEX_SHIFT) | 0x37;
    let va = 0x7000_0000u64;
    let up = bring_up(Q);
    let mut d = nic_brought_up(37, (5, 4, 4), Some((key, va)), up);
    for i in 0..2 {
        d.post_recv(Q, &recv_wqe(key, va, i)).unwrap();
    }
    d.arm_cq(0, true);
    settle(&mut d, 100_000);
    let mut p = send_packet(Q, Position::Only, up.rq_psn, vec![1; 32]);
    deliver(&mut d, &p);
    let (_, recvs) = cqes_by_queue(&mut d, 1, 20_000);
    assert_eq!(recvs, [(100, WcStatus::Success.value() as u8)]);
    for _ in 0..2_000 {
        d.step();
    }
    assert!(
        d.cq_events().is_empty(),
        "no event without SE: {:?}",
        d.cq_events()
    );
    p.bth.psn = roce_wire::Psn::new(up.rq_psn + 1);
    p.bth.solicited = true;
    deliver(&mut d, &p);
    let (_, recvs) = cqes_by_queue(&mut d, 1, 20_000);
    assert_eq!(recvs, [(101, WcStatus::Success.value() as u8)]);
    for _ in 0..2_000 {
        d.step();
    }
    assert_eq!(
        d.cq_events().iter().map(|e| e.1).collect::<Vec<_>>(),
        [0],
        "one event, on the solicited CQE"
    );
}
