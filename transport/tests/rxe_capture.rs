//! The model's responder against Linux soft-RoCE's own answers
//! (`../shared/captures/rxe_v4.pcap`, DESIGN §9): every request of every
//! conversation, in capture order, goes into a model responder set up from
//! what the capture shows (QPNs, first PSN, rkeys with the address ranges
//! used); the responses the model sends in each direction must be the ones
//! rxe sent — opcode, PSN, AETH syndrome class and MSN, payload length — in
//! the same order. `ROCE_DUMP=1` lists the capture.

use roce_transport::*;
use roce_wire::mr::Access;
use roce_wire::opcode::{OpKind, Transport};
use roce_wire::{Frame, IpRepr, Syndrome};
use std::collections::BTreeMap;

const PD: u16 = 1;

/// The frames of a classic pcap file (microsecond or nanosecond, either byte order).
fn pcap_frames(bytes: &[u8]) -> Vec<Vec<u8>> {
    let magic = u32::from_le_bytes(bytes[..4].try_into().unwrap());
    let le = match magic {
        0xa1b2_c3d4 | 0xa1b2_3c4d => true,
        0xd4c3_b2a1 | 0x4d3c_b2a1 => false,
        m => panic!("not a pcap file: magic {m:#x}"),
    };
    let u32_at = |b: &[u8], i: usize| {
        let w: [u8; 4] = b[i..i + 4].try_into().unwrap();
        if le {
            u32::from_le_bytes(w)
        } else {
            u32::from_be_bytes(w)
        }
    };
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let incl = u32_at(bytes, at + 8) as usize;
        out.push(bytes[at + 16..at + 16 + incl].to_vec());
        at += 16 + incl;
    }
    out
}

/// What we compare of a response.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    opcode: &'static str,
    psn: u32,
    /// 0 ACK, 1 RNR NAK, 3 NAK (syndrome bits 6:5), with the NAK code.
    class: Option<(u8, u8)>,
    msn: Option<u32>,
    payload: usize,
}

fn seen(p: &Packet) -> Seen {
    Seen {
        opcode: p.info().unwrap().name,
        psn: p.bth.psn.value(),
        class: p.ext.aeth.map(|a| {
            let b = a.syndrome.to_byte();
            match a.syndrome {
                Syndrome::Nak(n) => (3, n.value()),
                _ => ((b >> 5) & 3, 0),
            }
        }),
        msn: p.ext.aeth.map(|a| a.msn),
        payload: p.payload.len(),
    }
}

#[test]
fn responder_agrees_with_rxe_on_the_capture() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/captures/rxe_v4.pcap"
    );
    let Ok(bytes) = std::fs::read(path) else {
        eprintln!("responder_agrees_with_rxe_on_the_capture: {path} not found, skipped");
        return;
    };
    let frames: Vec<(Packet, [u8; 4])> = pcap_frames(&bytes)
        .iter()
        .map(|f| {
            let f = Frame::parse(f).expect("every frame of the capture is valid");
            let src = match f.repr.ip {
                IpRepr::V4(ip) => ip.src,
                IpRepr::V6(ip) => ip.src[12..].try_into().unwrap(),
            };
            (Packet::from_frame(&f), src)
        })
        .collect();
    if std::env::var("ROCE_DUMP").is_ok() {
        for (i, (p, src)) in frames.iter().enumerate() {
            eprintln!(
                "{i:3} {src:?} {:?} dest {:#x} psn {} ack_req {} aeth {:?} len {}",
                p.info().unwrap().name,
                p.bth.dest_qp,
                p.bth.psn,
                p.bth.ack_req,
                p.ext.aeth,
                p.payload.len()
            );
        }
    }
    // Both hosts number their QPs alike, so a QP is (its IP, its QPN). A
    // request from S to D names the responder (D, dest_qp); a response from
    // S to D comes from the QP at S that D last sent a request to.
    type Key = ([u8; 4], u32);
    let is_response = |p: &Packet| {
        matches!(
            p.info().unwrap().kind,
            OpKind::Acknowledge | OpKind::ReadResponse | OpKind::AtomicAcknowledge
        )
    };
    let other = |ip: [u8; 4]| {
        frames
            .iter()
            .map(|(_, s)| *s)
            .find(|s| *s != ip)
            .expect("two hosts")
    };
    #[derive(Default)]
    struct Plan {
        first: Option<(u32, Transport)>,
        peer: Option<u32>,
        ranges: BTreeMap<u32, (u64, u64)>,
        qkey: u32,
    }
    let mut plans: BTreeMap<Key, Plan> = BTreeMap::new();
    let mut last_request: BTreeMap<[u8; 4], Key> = BTreeMap::new();
    let mut responder_of = Vec::new();
    for (p, src) in &frames {
        let dst = other(*src);
        if is_response(p) {
            let key = *last_request
                .get(&dst)
                .expect("a response follows a request");
            plans.get_mut(&key).unwrap().peer = Some(p.bth.dest_qp);
            responder_of.push(Some(key));
            continue;
        }
        responder_of.push(None);
        let key = (dst, p.bth.dest_qp);
        last_request.insert(*src, key);
        let plan = plans.entry(key).or_default();
        plan.first
            .get_or_insert((p.bth.psn.value(), p.info().unwrap().transport));
        let mut range = |rkey: u32, va: u64, len: u64| {
            let r = plan.ranges.entry(rkey).or_insert((va, va + len));
            r.0 = r.0.min(va);
            r.1 = r.1.max(va + len);
        };
        if let Some(r) = p.ext.reth {
            range(r.rkey, r.va, r.dma_len as u64);
        }
        if let Some(a) = p.ext.atomic_eth {
            range(a.rkey, a.va, 8);
        }
        if let Some(d) = p.ext.deth {
            plan.qkey = d.qkey;
            plan.peer = Some(d.src_qp);
        }
    }
    struct Model {
        qp: Qp,
        mem: HostMemory,
        out: Vec<Seen>,
        rxe: Vec<Seen>,
    }
    let mut models: BTreeMap<Key, Model> = BTreeMap::new();
    for (&key, plan) in &plans {
        let (psn, transport) = plan.first.unwrap();
        let t = match transport {
            Transport::Rc => QpType::Rc,
            Transport::Uc => QpType::Uc,
            _ => QpType::Ud,
        };
        let mut attr = QpAttr::new(t, key.1, plan.peer.unwrap_or(0));
        attr.pmtu = Pmtu::Mtu1024;
        attr.rq_psn = Psn::new(psn);
        attr.pd = PD;
        attr.qkey = plan.qkey;
        let mut mem = HostMemory::new(1 << 12, 1 << 12);
        for (&rkey, &(lo, hi)) in &plan.ranges {
            mem.map(rkey, PD, Access::ALL, lo, hi - lo).unwrap();
        }
        let mut qp = Qp::connected(attr, Config::default());
        for i in 0..64 {
            let (k, va) = mem.alloc(PD, Access::LOCAL_WRITE, 8192);
            qp.post_recv(RecvWr {
                wr_id: i,
                sgl: vec![Sge {
                    addr: va,
                    len: 8192,
                    lkey: k,
                }],
            })
            .unwrap();
        }
        models.insert(
            key,
            Model {
                qp,
                mem,
                out: Vec::new(),
                rxe: Vec::new(),
            },
        );
    }
    // Replay the requests in capture order; the model answers each at once.
    for (i, ((p, src), resp)) in frames.iter().zip(&responder_of).enumerate() {
        if let Some(key) = resp {
            models.get_mut(key).unwrap().rxe.push(seen(p));
            continue;
        }
        let m = models.get_mut(&(other(*src), p.bth.dest_qp)).unwrap();
        m.qp.receive(i as u64, p, false, &mut m.mem);
        while let Some(r) = m.qp.poll_transmit(i as u64, &mut m.mem) {
            m.out.push(seen(&r));
        }
    }
    let mut compared = 0;
    for (key, m) in &mut models {
        let recvs = core::iter::from_fn(|| m.qp.poll_cq()).count();
        eprintln!(
            "QP {key:?} ({:?}): {} responses from rxe, {} from the model, {recvs} receive completions",
            m.qp.attr().qp_type,
            m.rxe.len(),
            m.out.len()
        );
        for (k, (a, b)) in m.rxe.iter().zip(&m.out).enumerate() {
            assert_eq!(a, b, "QP {key:?} response {k}: rxe vs model");
        }
        assert_eq!(m.rxe.len(), m.out.len(), "QP {key:?}: response count");
        assert_eq!(m.qp.state(), QpState::Rts);
        compared += m.rxe.len();
    }
    assert!(compared > 40, "{compared} responses compared");
}

/// What we compare of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Req {
    opcode: &'static str,
    psn: u32,
    ack_req: bool,
    payload: usize,
    dma_len: Option<u32>,
    imm: Option<u32>,
}

fn req(p: &Packet) -> Req {
    Req {
        opcode: p.info().unwrap().name,
        psn: p.bth.psn.value(),
        ack_req: p.bth.ack_req,
        payload: p.payload.len(),
        dma_len: p.ext.reth.map(|r| r.dma_len),
        imm: p.ext.immdt,
    }
}

/// The model's requester, given the work requests each rxe requester
/// carried out, sends the packets rxe sent the first time (retransmissions
/// aside): opcodes, PSNs (a READ takes one per response packet), AckReq
/// only on a message's last packet, lengths, RETH DMA lengths, immediates.
#[test]
fn requester_agrees_with_rxe_on_the_capture() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/captures/rxe_v4.pcap"
    );
    let Ok(bytes) = std::fs::read(path) else {
        eprintln!("requester_agrees_with_rxe_on_the_capture: {path} not found, skipped");
        return;
    };
    // Requests by sender (source IP, destination QPN), first transmissions only.
    let mut flows: BTreeMap<([u8; 4], u32), Vec<Packet>> = BTreeMap::new();
    for f in pcap_frames(&bytes) {
        let f = Frame::parse(&f).unwrap();
        let IpRepr::V4(ip) = f.repr.ip else { continue };
        let p = Packet::from_frame(&f);
        let info = p.info().unwrap();
        if matches!(
            info.kind,
            OpKind::Acknowledge | OpKind::ReadResponse | OpKind::AtomicAcknowledge
        ) || info.transport == Transport::Ud
        {
            continue;
        }
        let flow = flows.entry((ip.src, p.bth.dest_qp)).or_default();
        if flow.iter().all(|q| q.bth.psn != p.bth.psn) {
            flow.push(p);
        }
    }
    let mut compared = 0;
    for ((src, dest), pkts) in &flows {
        let mut attr = QpAttr::new(QpType::Rc, 0x99, *dest);
        attr.pmtu = Pmtu::Mtu1024;
        attr.sq_psn = pkts[0].bth.psn;
        let mut mem = HostMemory::new(64, 1024);
        let mut qp = Qp::connected(attr, Config::default());
        // One work request per message, rebuilt from its packets.
        let mut len = 0u32;
        for (i, p) in pkts.iter().enumerate() {
            let info = p.info().unwrap();
            len += p.payload.len() as u32;
            if !matches!(
                info.position,
                roce_wire::Position::Last | roce_wire::Position::Only
            ) {
                continue;
            }
            let first = pkts[..=i]
                .iter()
                .rev()
                .find(|q| {
                    matches!(
                        q.info().unwrap().position,
                        roce_wire::Position::First | roce_wire::Position::Only
                    )
                })
                .unwrap();
            let remote = |va, rkey| Remote { va, rkey };
            let (op, n) = match info.kind {
                OpKind::Send => match p.ext.immdt {
                    Some(imm) => (WrOp::SendImm(imm), len),
                    None => (WrOp::Send, len),
                },
                OpKind::Write => {
                    let r = first.ext.reth.unwrap();
                    match p.ext.immdt {
                        Some(imm) => (WrOp::WriteImm(remote(r.va, r.rkey), imm), len),
                        None => (WrOp::Write(remote(r.va, r.rkey)), len),
                    }
                }
                OpKind::ReadRequest => {
                    let r = p.ext.reth.unwrap();
                    (WrOp::Read(remote(r.va, r.rkey)), r.dma_len)
                }
                _ => {
                    let a = p.ext.atomic_eth.unwrap();
                    let remote = remote(a.va, a.rkey);
                    let op = if info.kind == OpKind::FetchAdd {
                        WrOp::FetchAdd {
                            remote,
                            add: a.swap_add,
                        }
                    } else {
                        WrOp::CmpSwap {
                            remote,
                            compare: a.compare,
                            swap: a.swap_add,
                        }
                    };
                    (op, 8)
                }
            };
            len = 0;
            let (k, va) = mem.alloc(0, Access::ALL, n.max(1) as u64);
            qp.post_send(SendWr::new(
                i as u64,
                op,
                vec![Sge {
                    addr: va,
                    len: n,
                    lkey: k,
                }],
            ))
            .unwrap();
        }
        let mut ours = Vec::new();
        while let Some(p) = qp.poll_transmit(0, &mut mem) {
            ours.push(req(&p));
        }
        let want: Vec<Req> = pkts.iter().map(req).collect();
        eprintln!("{src:?} → QP {dest:#x}: {} requests", want.len());
        assert_eq!(ours, want, "{src:?} → QP {dest:#x}");
        compared += want.len();
    }
    assert!(compared > 50, "{compared} requests compared");
}
