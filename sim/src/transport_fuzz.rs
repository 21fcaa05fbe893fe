//! `roce-sim fuzz transport`: the whole hardware transport (`rc_transport`,
//! through [`HwNic`]) under a stream of well-formed, random and mutated
//! frames (issue 35's bad-input goal: no hang, no memory write outside a
//! registered region, the QPs usable again after Reset).
//!
//! The frames into the NIC (from a peer at station A, to the NIC's
//! station B):
//! - **well-formed requests** from a per-QP generator that plays a real
//!   requester: SEND, SEND with immediate, WRITE, WRITE with immediate
//!   (FIRST/MIDDLE/LAST at the QP's PMTU), READ and atomics, with the PSN
//!   the NIC expects (resynchronised from its sequence NAKs), R_Keys and
//!   addresses mostly valid, sometimes not;
//! - **responses** to the NIC's own requests (it has WRITEs and READs
//!   outstanding toward A): ACKs, NAKs, RNR NAKs, READ responses and atomic
//!   ACKs with PSNs near the ones it sent;
//! - **random frames** of every opcode from [`FrameGen`], retargeted to
//!   the NIC's QPs;
//! - each of these **mutated** at `mutate_permille` by [`crate::fuzz`]'s
//!   mutations (bytes, lengths, fields with good checksums and ICRC,
//!   truncation, trailing bytes).
//!
//! Checked: the MAC input never waits more than `HANG_CYCLES` for the NIC
//! to take a frame, and the NIC keeps answering; no AXI rule broken; no
//! byte of either memory written outside the registered regions. A QP the
//! NIC moves to Error is reset (as the firmware would) and used again.
//! At the end every QP is reset and must carry a clean 64-byte WRITE and a
//! SEND: the ACKs come back, the bytes land, the receive completes.

use crate::fuzz::{mutate, Mutation};
use crate::nic::{ipv4_path, HwNic, Layout, QpSetup, RecvWr, Region, SendWr, SimNic, Verb};
use crate::rng::Rng;
use crate::run::{FIRST_QPN, STATION_A, STATION_B};
use crate::traffic::FrameGen;
use roce_wire::aeth::{AckCredits, NakCode, RnrTimer, Syndrome};
use roce_wire::opcode::TABLE;
use roce_wire::{
    AethRepr, AtomicAckEthRepr, AtomicEthRepr, BthRepr, EthernetRepr, ExtHeaders, Frame, FrameRepr,
    IpRepr, OpKind, Opcode, Pmtu, Position, Psn, RethRepr, Transport, UdpRepr,
};

/// Cycles the MAC input may wait for the NIC before it counts as a hang.
pub const HANG_CYCLES: u64 = 200_000;

/// A fuzz run's settings.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Frames into the NIC.
    pub frames: u64,
    /// Seed.
    pub seed: u64,
    /// QPs in use.
    pub qps: u32,
    /// Frames mutated, per mille.
    pub mutate_permille: u32,
}

/// What a fuzz run did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Frames in, by source: well-formed requests, responses, random.
    pub requests: u64,
    /// Responses to the NIC's requests.
    pub responses: u64,
    /// Random frames.
    pub random: u64,
    /// Frames mutated, by mutation.
    pub mutated: Vec<(&'static str, u64)>,
    /// Frames out of the NIC.
    pub frames_out: u64,
    /// QP resets after the NIC moved a QP to Error.
    pub resets: u64,
    /// Cycles.
    pub cycles: u64,
    /// The NIC's counters at the end of the fuzzing.
    pub counters: Vec<(String, u64)>,
}

impl Report {
    /// The report as text.
    pub fn text(&self) -> String {
        let c: Vec<String> = self
            .counters
            .iter()
            .filter(|c| c.1 > 0)
            .map(|(n, v)| format!("{n} {v}"))
            .collect();
        format!(
            "frames in: {} requests, {} responses, {} random; mutated: {}\n\
             frames out: {}; QPs reset after Error: {}; cycles: {}\n\
             counters: {}\n",
            self.requests,
            self.responses,
            self.random,
            self.mutated
                .iter()
                .map(|(n, v)| format!("{n} {v}"))
                .collect::<Vec<_>>()
                .join(", "),
            self.frames_out,
            self.resets,
            self.cycles,
            c.join(", ")
        )
    }
}

/// The RC opcode of `kind` at `pos` with (or without) an extra header.
fn rc_op(kind: OpKind, pos: Position, extra: Option<roce_wire::ExtKind>) -> Opcode {
    let t = TABLE
        .iter()
        .find(|t| {
            t.transport == Transport::Rc
                && t.kind == kind
                && t.position == pos
                && extra.map_or(
                    !t.headers
                        .iter()
                        .any(|h| matches!(h, roce_wire::ExtKind::ImmDt | roce_wire::ExtKind::Ieth)),
                    |e| t.headers.contains(&e),
                )
        })
        .expect("in the opcode table");
    Opcode(t.code)
}

/// One QP as the fuzzing peer sees it.
#[derive(Clone, Copy)]
struct Peer {
    /// Next PSN of the peer's requests (the NIC's ePSN).
    psn: Psn,
    /// The NIC's requests: the last PSN seen.
    nic_psn: Psn,
    seen: bool,
}

const PMTU: Pmtu = Pmtu::Mtu256;
/// Remote buffer per QP (valid WRITE/READ/atomic targets).
const AREA: u64 = 8192;

struct Fuzzer {
    rng: Rng,
    gen: FrameGen,
    peers: Vec<Peer>,
    qps: u32,
}

impl Fuzzer {
    fn eth_ip_udp(&mut self) -> (EthernetRepr, IpRepr, UdpRepr) {
        (
            EthernetRepr {
                dst: STATION_B.mac,
                src: STATION_A.mac,
                vlan: None,
                ethertype: 0,
            },
            ipv4_path(STATION_A, STATION_B),
            UdpRepr {
                src_port: roce_wire::udp::roce_src_port(self.rng.next_u32()),
                dst_port: roce_wire::udp::ROCE_V2_PORT,
                checksum: 0,
                payload_len: 0,
            },
        )
    }

    fn frame(
        &mut self,
        q: u32,
        op: Opcode,
        psn: Psn,
        ext: ExtHeaders,
        payload: &[u8],
    ) -> (FrameRepr, Vec<u8>) {
        let (eth, ip, udp) = self.eth_ip_udp();
        let mut repr = FrameRepr {
            eth,
            ip,
            udp,
            bth: BthRepr {
                opcode: op,
                solicited: false,
                mig_req: true,
                pad_count: 0,
                tver: 0,
                pkey: roce_wire::bth::DEFAULT_PKEY,
                fecn: false,
                becn: false,
                dest_qp: FIRST_QPN + q,
                ack_req: self.rng.chance(300),
                psn,
            },
            ext,
            payload_len: payload.len(),
        };
        repr.sync_lengths();
        let bytes = repr.to_bytes(payload).expect("a well-formed frame");
        (repr, bytes)
    }

    /// A remote address and R_Key: mostly inside the QP's area, sometimes
    /// across its end, outside every region, or under a wrong key.
    fn target(&mut self, q: u32, len: u64, align: u64) -> (u64, u32) {
        let base = Region::Rem.va_base() + q as u64 * AREA;
        let r = self.rng.below(100);
        let va = match r {
            0..=84 => base + self.rng.below(AREA.saturating_sub(len) + 1) / align * align,
            85..=89 => base + AREA - len / 2,
            90..=94 => self.rng.next_u64() / align * align,
            _ => base,
        };
        let key = if self.rng.below(100) < 92 {
            Region::Rem.key()
        } else {
            [Region::Src.key(), Region::Rcv.key(), self.rng.next_u32()][self.rng.below(3) as usize]
        };
        (va, key)
    }

    /// One well-formed message from the peer on QP `q` (one or more frames).
    fn message(&mut self, q: u32) -> Vec<(FrameRepr, Vec<u8>)> {
        let pm = PMTU.bytes() as u64;
        let len = match self.rng.below(4) {
            0 => self.rng.below(16),
            1 => pm * (1 + self.rng.below(3)),
            _ => self.rng.below(3 * pm + 1),
        };
        let mut out = Vec::new();
        let mut psn = self.peers[q as usize].psn;
        match self.rng.below(7) {
            // SEND, SEND with immediate, WRITE, WRITE with immediate.
            k @ 0..=3 => {
                let write = k >= 2;
                let imm = k % 2 == 1;
                let kind = if write { OpKind::Write } else { OpKind::Send };
                let (va, rkey) = self.target(q, len, 1);
                let data = self.rng.bytes(len as usize);
                let n = (len.div_ceil(pm)).max(1);
                for i in 0..n {
                    let pos = match (n, i) {
                        (1, _) => Position::Only,
                        (_, 0) => Position::First,
                        (_, i) if i == n - 1 => Position::Last,
                        _ => Position::Middle,
                    };
                    let last = matches!(pos, Position::Only | Position::Last);
                    let op = rc_op(
                        kind,
                        pos,
                        (last && imm).then_some(roce_wire::ExtKind::ImmDt),
                    );
                    let mut ext = ExtHeaders::default();
                    if write && matches!(pos, Position::First | Position::Only) {
                        ext.reth = Some(RethRepr {
                            va,
                            rkey,
                            dma_len: len as u32,
                        });
                    }
                    if last && imm {
                        ext.immdt = Some(self.rng.next_u32());
                    }
                    let chunk = &data[(i * pm) as usize..((i + 1) * pm).min(len) as usize];
                    out.push(self.frame(q, op, psn, ext, chunk));
                    psn = psn.next();
                }
            }
            4 => {
                let (va, rkey) = self.target(q, len, 1);
                let ext = ExtHeaders {
                    reth: Some(RethRepr {
                        va,
                        rkey,
                        dma_len: len as u32,
                    }),
                    ..Default::default()
                };
                let op = rc_op(OpKind::ReadRequest, Position::Only, None);
                out.push(self.frame(q, op, psn, ext, &[]));
                psn = psn.add(len.div_ceil(pm).max(1) as u32);
            }
            k => {
                let (va, rkey) = self.target(q, 8, 8);
                let kind = if k == 5 {
                    OpKind::CompareSwap
                } else {
                    OpKind::FetchAdd
                };
                let ext = ExtHeaders {
                    atomic_eth: Some(AtomicEthRepr {
                        va,
                        rkey,
                        swap_add: self.rng.next_u64(),
                        compare: self.rng.next_u64(),
                    }),
                    ..Default::default()
                };
                out.push(self.frame(q, rc_op(kind, Position::Only, None), psn, ext, &[]));
                psn = psn.next();
            }
        }
        self.peers[q as usize].psn = psn;
        out
    }

    /// A response to the NIC's requests on QP `q`.
    fn response(&mut self, q: u32) -> (FrameRepr, Vec<u8>) {
        let p = self.peers[q as usize];
        let psn = p
            .nic_psn
            .sub(self.rng.below(4) as u32)
            .add(self.rng.below(2) as u32);
        let syndrome = match self.rng.below(10) {
            0..=5 => Syndrome::Ack(AckCredits::NONE),
            6 => Syndrome::RnrNak(RnrTimer(1)),
            7 => Syndrome::Nak(NakCode::PsnSequenceError),
            8 => Syndrome::Nak(
                [
                    NakCode::InvalidRequest,
                    NakCode::RemoteAccessError,
                    NakCode::RemoteOperationalError,
                ][self.rng.below(3) as usize],
            ),
            _ => Syndrome::Ack(AckCredits(self.rng.below(31) as u8)),
        };
        let aeth = Some(AethRepr {
            syndrome,
            msn: self.rng.below(1 << 24) as u32,
        });
        match self.rng.below(4) {
            0 | 1 => {
                let ext = ExtHeaders {
                    aeth,
                    ..Default::default()
                };
                self.frame(
                    q,
                    rc_op(OpKind::Acknowledge, Position::Only, None),
                    psn,
                    ext,
                    &[],
                )
            }
            2 => {
                let ext = ExtHeaders {
                    aeth,
                    atomic_ack_eth: Some(AtomicAckEthRepr {
                        orig_remote_data: self.rng.next_u64(),
                    }),
                    ..Default::default()
                };
                let op = rc_op(OpKind::AtomicAcknowledge, Position::Only, None);
                self.frame(q, op, psn, ext, &[])
            }
            _ => {
                let pos = [
                    Position::First,
                    Position::Middle,
                    Position::Last,
                    Position::Only,
                ][self.rng.below(4) as usize];
                let ext = ExtHeaders {
                    aeth: (pos != Position::Middle).then_some(aeth).flatten(),
                    ..Default::default()
                };
                let n = if matches!(pos, Position::First | Position::Middle) {
                    PMTU.bytes() as usize
                } else {
                    self.rng.below(PMTU.bytes() as u64 + 1) as usize
                };
                let data = self.rng.bytes(n);
                self.frame(q, rc_op(OpKind::ReadResponse, pos, None), psn, ext, &data)
            }
        }
    }

    /// A random frame of any opcode, mostly to one of the NIC's QPs.
    fn random(&mut self) -> (FrameRepr, Vec<u8>) {
        let (mut repr, payload) = self.gen.frame();
        repr.eth.dst = STATION_B.mac;
        if let IpRepr::V4(ip) = &mut repr.ip {
            ip.dst = STATION_B.ip;
        }
        if self.rng.below(10) < 8 {
            repr.bth.dest_qp = FIRST_QPN + self.rng.below(self.qps as u64) as u32;
        }
        if self.rng.chance(500) {
            let i = repr.bth.dest_qp.wrapping_sub(FIRST_QPN) as usize % self.qps as usize;
            repr.bth.psn = self.peers[i].psn;
        }
        repr.sync_lengths();
        let bytes = repr.to_bytes(&payload).expect("FrameGen's frames emit");
        (repr, bytes)
    }
}

fn setup(q: u32, rng: &mut Rng) -> QpSetup {
    QpSetup {
        qpn: FIRST_QPN + q,
        dest_qpn: FIRST_QPN + q,
        sq_psn: rng.below(1 << 24) as u32,
        rq_psn: rng.below(1 << 24) as u32,
        pmtu: PMTU,
        max_rd_atomic: 4,
        timeout: 6,
        retry_cnt: 7,
        rnr_retry: 3,
        min_rnr_timer: 1,
    }
}

/// Runs the fuzzing; `progress` gets the frames sent so far.
pub fn transport(c: &Config, mut progress: impl FnMut(u64)) -> Result<Report, String> {
    let mut rng = Rng::new(c.seed);
    let mut nic = HwNic::new("B", rng.next_u64(), STATION_B, 0);
    if c.qps == 0 || FIRST_QPN + c.qps > nic.qps() {
        return Err(format!("--qps {}: 1 to {}", c.qps, nic.qps() - FIRST_QPN));
    }
    let mut lay = Layout::new(12);
    lay.alloc(Region::Rem, AREA * c.qps as u64, 64);
    let rcv = lay.alloc(Region::Rcv, 4096 * c.qps as u64, 64);
    let src = lay.alloc(Region::Src, 4096 * c.qps as u64, 64);
    let dst = lay.alloc(Region::Dst, 4096 * c.qps as u64, 64);
    lay.seal();
    nic.reg_mrs(&lay);
    let mut f = Fuzzer {
        gen: FrameGen::new(rng.next_u64()),
        rng: Rng::new(rng.next_u64()),
        peers: Vec::new(),
        qps: c.qps,
    };
    for q in 0..c.qps {
        let s = setup(q, &mut rng);
        nic.create_qp(&s, STATION_A);
        f.peers.push(Peer {
            psn: Psn::new(s.rq_psn),
            nic_psn: Psn::new(s.sq_psn),
            seen: false,
        });
    }
    let mut rep = Report {
        mutated: Mutation::ALL.iter().map(|m| (m.name(), 0)).collect(),
        ..Report::default()
    };
    let mut recvs = vec![0u32; c.qps as usize];
    let mut wr_id = 0u64;
    let mut queue: std::collections::VecDeque<Vec<u8>> = Default::default();
    let (mut sent, mut waiting_since) = (0u64, 0u64);
    let mut last_taken = 0u64;
    while sent < c.frames || nic.rx_waiting() > 0 {
        // Keep receive WQEs and the NIC's own requests going.
        if nic.ready() {
            for q in 0..c.qps {
                while recvs[q as usize] < 4 {
                    wr_id += 1;
                    nic.post_recv(
                        FIRST_QPN + q,
                        RecvWr {
                            wr_id,
                            va: rcv + q as u64 * 4096 + rng.below(8),
                            len: 1024 + rng.below(2048) as u32,
                        },
                    );
                    recvs[q as usize] += 1;
                }
                if nic.sends_outstanding(FIRST_QPN + q) < 2 {
                    wr_id += 1;
                    let verb = [Verb::Write, Verb::Read, Verb::FetchAdd][rng.below(3) as usize];
                    let len = if verb.atomic() {
                        8
                    } else {
                        rng.below(600) as u32
                    };
                    nic.post_send(SendWr {
                        qpn: FIRST_QPN + q,
                        verb,
                        wr_id,
                        lva: if verb == Verb::Write { src } else { dst } + q as u64 * 4096,
                        len,
                        rva: 0x1000 * rng.below(16),
                        imm: 0,
                        swap: rng.next_u64(),
                        compare: 0,
                        inline: false,
                    });
                }
            }
        }
        // Frames toward the NIC, a few queued at a time.
        if nic.ready() && sent < c.frames && queue.is_empty() {
            let q = rng.below(c.qps as u64) as u32;
            let frames = match rng.below(10) {
                0..=5 => {
                    rep.requests += 1;
                    f.message(q)
                }
                6 | 7 if f.peers[q as usize].seen => {
                    rep.responses += 1;
                    vec![f.response(q)]
                }
                _ => {
                    rep.random += 1;
                    vec![f.random()]
                }
            };
            for (repr, bytes) in frames {
                let bytes = if rng.chance(c.mutate_permille) {
                    let k = Mutation::ALL[1 + rng.below(Mutation::ALL.len() as u64 - 1) as usize];
                    rep.mutated[k as usize].1 += 1;
                    mutate(&mut rng, k, &repr, &bytes)
                } else {
                    bytes
                };
                queue.push_back(bytes);
            }
        }
        if nic.rx_waiting() < 2 {
            if let Some(b) = queue.pop_front() {
                nic.push_rx(nic.cycle(), b);
                sent += 1;
                if sent % 1000 == 0 {
                    progress(sent);
                }
            }
        }
        nic.step();
        // The NIC's answers: resynchronise on sequence NAKs, learn its PSNs.
        while let Some((_, fr)) = nic.pop_tx() {
            rep.frames_out += 1;
            let Ok(fr) = Frame::parse(&fr) else {
                return Err(format!(
                    "the NIC sent a frame roce-wire rejects: {:02x?}",
                    &fr[..fr.len().min(64)]
                ));
            };
            let q = fr.repr.bth.dest_qp.wrapping_sub(FIRST_QPN) as usize;
            if q >= c.qps as usize {
                return Err(format!(
                    "the NIC sent to QP {}, which it was not given",
                    fr.repr.bth.dest_qp
                ));
            }
            let info = fr.repr.bth.opcode.info();
            let response = info.is_some_and(|i| {
                matches!(
                    i.kind,
                    OpKind::Acknowledge | OpKind::ReadResponse | OpKind::AtomicAcknowledge
                )
            });
            if response {
                if let Some(AethRepr {
                    syndrome: Syndrome::Nak(NakCode::PsnSequenceError),
                    ..
                }) = fr.repr.ext.aeth
                {
                    f.peers[q].psn = fr.repr.bth.psn;
                }
            } else {
                f.peers[q].nic_psn = fr.repr.bth.psn;
                f.peers[q].seen = true;
            }
        }
        while let Some(cqe) = nic.poll_cq() {
            if matches!(
                cqe.opcode,
                roce_transport::WcOpcode::Recv | roce_transport::WcOpcode::RecvRdmaWithImm
            ) {
                let i = cqe.qpn.wrapping_sub(FIRST_QPN) as usize;
                if i >= recvs.len() {
                    return Err(format!(
                        "a completion on QP {}, which the NIC was not given",
                        cqe.qpn
                    ));
                }
                recvs[i] = recvs[i].saturating_sub(1);
            }
        }
        // QPs in Error: reset, as the firmware would.
        for (qpn, _, _) in nic.take_qp_errors() {
            let q = qpn.wrapping_sub(FIRST_QPN);
            if q >= c.qps {
                return Err(format!(
                    "the NIC moved QP {qpn}, which it was not given, to Error"
                ));
            }
            rep.resets += 1;
            let s = setup(q, &mut rng);
            nic.create_qp(&s, STATION_A);
            f.peers[q as usize] = Peer {
                psn: Psn::new(s.rq_psn),
                nic_psn: Psn::new(s.sq_psn),
                seen: false,
            };
            recvs[q as usize] = 0;
        }
        let e = nic.errors();
        if !e.is_empty() {
            return Err(format!("after {sent} frames: {}", e.join("; ")));
        }
        if nic.rx_taken() != last_taken || nic.rx_waiting() == 0 {
            last_taken = nic.rx_taken();
            waiting_since = nic.cycle();
        } else if nic.cycle() - waiting_since > HANG_CYCLES {
            return Err(format!(
                "hang: the NIC took no frame for {HANG_CYCLES} cycles after {sent} frames\n  {}",
                nic.why()
            ));
        }
    }
    rep.cycles = nic.cycle();
    rep.counters = nic.counters();
    check_writes(&nic, &lay)?;
    clean_traffic(&mut nic, &mut f, &mut rng, c.qps)?;
    check_writes(&nic, &lay)?;
    Ok(rep)
}

/// No byte of `nic`'s memories written outside the regions of `lay`.
pub fn check_writes(nic: &HwNic, lay: &Layout) -> Result<(), String> {
    let allowed = |va: u64| {
        let r = Region::of(va);
        va >= r.va_base() && va < r.va_base() + lay.used[r as usize]
    };
    match nic.stray_writes(lay, &allowed) {
        Some(bad) if !bad.is_empty() => Err(format!(
            "{} bytes written outside the registered regions, first at {:#x}",
            bad.len(),
            bad[0]
        )),
        _ => Ok(()),
    }
}

/// Every QP reset, then a clean WRITE and SEND each: ACKed, landed,
/// received.
fn clean_traffic(nic: &mut HwNic, f: &mut Fuzzer, rng: &mut Rng, qps: u32) -> Result<(), String> {
    let rcv = Region::Rcv.va_base();
    // Let what is in flight settle, then reset every QP.
    for _ in 0..50_000 {
        nic.step();
        while nic.pop_tx().is_some() {}
        while nic.poll_cq().is_some() {}
    }
    nic.take_qp_errors();
    for q in 0..qps {
        let s = setup(q, rng);
        nic.create_qp(&s, STATION_A);
        f.peers[q as usize].psn = Psn::new(s.rq_psn);
        nic.post_recv(
            FIRST_QPN + q,
            RecvWr {
                wr_id: 1 << 40 | q as u64,
                va: rcv + q as u64 * 4096,
                len: 256,
            },
        );
    }
    let mut want = Vec::new();
    for q in 0..qps {
        let data = rng.bytes(64);
        let va = Region::Rem.va_base() + q as u64 * AREA + 128;
        let psn = f.peers[q as usize].psn;
        let mut ext = ExtHeaders {
            reth: Some(RethRepr {
                va,
                rkey: Region::Rem.key(),
                dma_len: 64,
            }),
            ..Default::default()
        };
        let (_, mut w) = f.frame(
            q,
            rc_op(OpKind::Write, Position::Only, None),
            psn,
            ext,
            &data,
        );
        ext = ExtHeaders::default();
        let sdata = rng.bytes(100);
        let (_, mut s) = f.frame(
            q,
            rc_op(OpKind::Send, Position::Only, None),
            psn.next(),
            ext,
            &sdata,
        );
        // AckReq on both: rebuild with the bit set.
        for b in [&mut w, &mut s] {
            let mut r = Frame::parse(b).expect("valid").repr;
            let payload = Frame::parse(b).expect("valid").payload.to_vec();
            r.bth.ack_req = true;
            *b = r.to_bytes(&payload).expect("valid");
        }
        nic.push_rx(nic.cycle(), w);
        nic.push_rx(nic.cycle(), s);
        want.push((q, psn, va, data, sdata));
    }
    let mut acked = vec![false; qps as usize];
    let mut received = vec![false; qps as usize];
    for _ in 0..200_000 {
        nic.step();
        while let Some((_, fr)) = nic.pop_tx() {
            let fr =
                Frame::parse(&fr).map_err(|e| format!("clean traffic: a bad frame out: {e:?}"))?;
            let q = fr.repr.bth.dest_qp.wrapping_sub(FIRST_QPN) as usize;
            if fr
                .repr
                .bth
                .opcode
                .info()
                .is_some_and(|i| i.kind == OpKind::Acknowledge)
            {
                match fr.repr.ext.aeth.map(|a| a.syndrome) {
                    Some(Syndrome::Ack(_)) if fr.repr.bth.psn == want[q].1.next() => {
                        acked[q] = true
                    }
                    Some(Syndrome::Ack(_)) => {}
                    s => {
                        return Err(format!(
                            "clean traffic: QP {q} answered {s:?} at PSN {}",
                            fr.repr.bth.psn.value()
                        ))
                    }
                }
            }
        }
        while let Some(c) = nic.poll_cq() {
            if c.wr_id >> 40 == 1 {
                let q = c.qpn.wrapping_sub(FIRST_QPN) as usize;
                if q >= qps as usize {
                    return Err(format!("clean traffic: a completion on QP {}", c.qpn));
                }
                if !c.ok || c.byte_len != 100 {
                    return Err(format!("clean traffic: QP {q} receive completion {c:?}"));
                }
                received[q] = true;
            }
        }
        if acked.iter().all(|a| *a) && received.iter().all(|r| *r) {
            break;
        }
    }
    for (q, _, va, data, sdata) in &want {
        let i = *q as usize;
        if !acked[i] || !received[i] {
            return Err(format!(
                "clean traffic after Reset: QP {q} {}",
                if !acked[i] {
                    "not ACKed"
                } else {
                    "SEND not received"
                }
            ));
        }
        if nic.read(*va, 64) != *data {
            return Err(format!(
                "clean traffic after Reset: QP {q}'s WRITE did not land"
            ));
        }
        if nic.read(rcv + *q as u64 * 4096, 100) != *sdata {
            return Err(format!(
                "clean traffic after Reset: QP {q}'s SEND did not land"
            ));
        }
    }
    if let Some(e) = nic.errors().first() {
        return Err(format!("clean traffic after Reset: {e}"));
    }
    Ok(())
}
