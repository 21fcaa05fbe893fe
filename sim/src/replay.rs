//! `roce-sim replay`: a real capture's requests fed to our responder (the
//! `roce-transport` model), its answers compared with the real responder's.
//!
//! 1. Every frame `roce_wire::Frame::parse` accepts is sorted into a
//!    *flow*: source IP, destination IP and DestQP (UD: also the DETH
//!    source QP). Two flows in opposite directions whose frames overlap in
//!    time, or whose responses carry the other's request PSNs, form one
//!    *conversation* (a QP pair: the responses to one flow's
//!    requests travel in the other); a UD flow pairs with the flow back to
//!    its DETH source QP. A flow that overlaps several is told apart by the
//!    response PSNs that answer its requests.
//! 2. For each flow that carries requests, our responding QP is set up from
//!    what the capture shows (see [`Setup`]), its memory preloaded with what
//!    the real responder revealed: READ response payloads (the bytes at those
//!    addresses, where no earlier WRITE or atomic of the capture changed
//!    them) and ATOMIC ACK original data (the word before the atomic).
//! 3. The requests are fed in capture order, duplicates and retransmissions
//!    included, at model time = capture time since the first frame; after
//!    each one, everything the QP sends is collected with `in_reply_to`.
//! 4. The model's responses and the real ones (the other flow's ACK, NAK,
//!    READ response, ATOMIC ACK and CNP frames) are compared in order by the
//!    rules of `docs/REPLAY.md`: opcode, PSN, DestQP, AETH syndrome class
//!    (ACK / RNR NAK / NAK and its code) and MSN, payload length and bytes,
//!    atomic original data; a real response must come after the request
//!    that caused the model's. Allowed differences: coalesced ACKs and
//!    duplicates re-ACKed once or per packet (the credit field is never
//!    compared: only the syndrome class).

use crate::capture::{CaptureError, CaptureReader};
use roce_transport::{Memory, Packet, Qp, QpAttr, QpType, RecvWr, Sge};
use roce_wire::json::Line;
use roce_wire::mr::{self, key_index, Access, Chunk, CmdError, MrEntry, MrState, Region, Reject};
use roce_wire::opcode::{flags, OpKind, Position, Transport};
use roce_wire::{Frame, FrameRepr, IpRepr, Pmtu, Psn, Syndrome};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::io::Read;

/// One accepted frame of the capture.
#[derive(Clone, Debug)]
pub struct CapFrame {
    /// 1-based frame number in the capture.
    pub n: u64,
    /// Nanoseconds since the first frame.
    pub t: u64,
    /// Headers.
    pub repr: FrameRepr,
    /// Payload without pad.
    pub payload: Vec<u8>,
}

impl CapFrame {
    fn kind(&self) -> OpKind {
        self.repr.bth.opcode.info().expect("accepted").kind
    }
    fn is_response(&self) -> bool {
        matches!(
            self.kind(),
            OpKind::Acknowledge | OpKind::AtomicAcknowledge | OpKind::ReadResponse | OpKind::Cnp
        )
    }
    fn psn(&self) -> Psn {
        self.repr.bth.psn
    }
    fn ce(&self) -> bool {
        let ecn = match self.repr.ip {
            IpRepr::V4(r) => r.tos & 3,
            IpRepr::V6(r) => r.traffic_class & 3,
        };
        ecn == 3
    }
}

/// An IP address as 16 bytes (IPv4 mapped as ::ffff:a.b.c.d).
type Addr = [u8; 16];

fn addrs(r: &FrameRepr) -> (Addr, Addr) {
    match r.ip {
        IpRepr::V4(ip) => (mapped(ip.src), mapped(ip.dst)),
        IpRepr::V6(ip) => (ip.src, ip.dst),
    }
}

fn mapped(a: [u8; 4]) -> Addr {
    let mut m = [0u8; 16];
    m[10] = 0xff;
    m[11] = 0xff;
    m[12..].copy_from_slice(&a);
    m
}

/// An address as the frames carried it: IPv4 dotted, IPv6 (also an
/// IPv4-mapped one) as IPv6.
fn show_addr(a: &Addr, v6: bool) -> String {
    let ip = std::net::Ipv6Addr::from(*a);
    match ip.to_ipv4_mapped() {
        Some(v4) if !v6 => v4.to_string(),
        _ => ip.to_string(),
    }
}

/// Why a capture cannot be replayed.
#[derive(Debug)]
pub enum ReplayError {
    /// The capture could not be read.
    Capture(CaptureError),
    /// No frame of the capture is a RoCE v2 frame.
    NoRoce {
        /// Frames read.
        frames: u64,
    },
    /// RoCE frames, but no flow carries requests.
    NoRequests,
    /// The conversations cannot be told apart, or a flow cannot be set up.
    Setup(String),
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Capture(e) => write!(f, "{e}"),
            ReplayError::NoRoce { frames } => write!(
                f,
                "no RoCE conversation: none of its {frames} frames is a valid RoCE v2 frame"
            ),
            ReplayError::NoRequests => write!(
                f,
                "no RoCE conversation: the RoCE v2 frames hold no requests (SEND, WRITE, READ, atomic)"
            ),
            ReplayError::Setup(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for ReplayError {}

/// One direction of frames: source, destination, DestQP (and, for UD, the
/// DETH source QP).
#[derive(Clone, Debug)]
struct Flow {
    src: Addr,
    dst: Addr,
    qpn: u32,
    ud_src: Option<u32>,
    v6: bool,
    frames: Vec<usize>,
}

impl Flow {
    fn first(&self) -> usize {
        self.frames[0]
    }
    fn last(&self) -> usize {
        *self.frames.last().expect("a flow has frames")
    }
}

/// Reads the whole capture: accepted frames, and the count of all frames.
pub fn read_frames<R: Read>(
    capture: &mut CaptureReader<R>,
) -> Result<(Vec<CapFrame>, u64), CaptureError> {
    let mut out = Vec::new();
    let mut t0: Option<u64> = None;
    while capture.next_frame_ts(|n, ts, data| {
        let base = *t0.get_or_insert(ts);
        if let Ok(f) = Frame::parse(data) {
            out.push(CapFrame {
                n,
                t: ts.saturating_sub(base),
                repr: f.repr,
                payload: f.payload.to_vec(),
            });
        }
    })? {}
    Ok((out, capture.frames()))
}

/// One conversation: a QP pair.
#[derive(Clone, Debug)]
pub struct Conversation {
    /// 1-based, by first frame.
    pub number: usize,
    /// Its flows (one or two), indexes into the flow list.
    flows: Vec<usize>,
}

fn find_flows(frames: &[CapFrame]) -> Vec<Flow> {
    let mut index: HashMap<(Addr, Addr, u32, Option<u32>), usize> = HashMap::new();
    let mut flows: Vec<Flow> = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let (src, dst) = addrs(&f.repr);
        let ud_src = f.repr.ext.deth.map(|d| d.src_qp);
        let key = (src, dst, f.repr.bth.dest_qp, ud_src);
        let k = *index.entry(key).or_insert_with(|| {
            flows.push(Flow {
                src,
                dst,
                qpn: key.2,
                ud_src,
                v6: f.repr.ip.version() == 6,
                frames: Vec::new(),
            });
            flows.len() - 1
        });
        flows[k].frames.push(i);
    }
    flows
}

/// How many of `g`'s responses answer one of `f`'s requests by PSN.
fn psn_evidence(frames: &[CapFrame], f: &Flow, g: &Flow) -> usize {
    let reqs: HashSet<u32> = f
        .frames
        .iter()
        .map(|&i| &frames[i])
        .filter(|x| !x.is_response())
        .map(|x| x.psn().value())
        .collect();
    g.frames
        .iter()
        .map(|&i| &frames[i])
        .filter(|x| x.is_response() && reqs.contains(&x.psn().value()))
        .count()
}

fn pair_flows(frames: &[CapFrame], flows: &[Flow]) -> Result<Vec<Conversation>, ReplayError> {
    let overlaps = |a: &Flow, b: &Flow| a.first() <= b.last() && b.first() <= a.last();
    let partner = |i: usize| -> Result<Option<usize>, ReplayError> {
        let f = &flows[i];
        if let Some(s) = f.ud_src {
            return Ok(flows
                .iter()
                .position(|g| g.src == f.dst && g.dst == f.src && g.qpn == s));
        }
        let score =
            |j: usize| psn_evidence(frames, f, &flows[j]) + psn_evidence(frames, &flows[j], f);
        let cands: Vec<usize> = (0..flows.len())
            .filter(|&j| {
                let g = &flows[j];
                g.ud_src.is_none()
                    && g.src == f.dst
                    && g.dst == f.src
                    && (overlaps(f, g) || score(j) > 0)
            })
            .collect();
        if cands.len() <= 1 {
            return Ok(cands.first().copied());
        }
        let best = cands.iter().map(|&j| score(j)).max().unwrap_or(0);
        let top: Vec<usize> = cands.into_iter().filter(|&j| score(j) == best).collect();
        if top.len() == 1 {
            Ok(Some(top[0]))
        } else {
            Err(ReplayError::Setup(format!(
                "cannot tell conversations apart: frames to {} QP {:#x} (first frame {}) overlap several flows back",
                show_addr(&f.dst, f.v6),
                f.qpn,
                frames[f.first()].n
            )))
        }
    };
    let mut conv_of: Vec<Option<usize>> = vec![None; flows.len()];
    let mut convs: Vec<Vec<usize>> = Vec::new();
    let mut order: Vec<usize> = (0..flows.len()).collect();
    order.sort_by_key(|&i| flows[i].first());
    for i in order {
        if conv_of[i].is_some() {
            continue;
        }
        let p = partner(i)?;
        let members = match p {
            Some(j) if conv_of[j].is_none() && partner(j)? == Some(i) => vec![i, j],
            Some(j) if conv_of[j].is_some() => {
                return Err(ReplayError::Setup(format!(
                    "cannot tell conversations apart: frames to {} QP {:#x} (first frame {}) pair with a flow already taken",
                    show_addr(&flows[i].dst, flows[i].v6),
                    flows[i].qpn,
                    frames[flows[i].first()].n
                )))
            }
            _ => vec![i],
        };
        for &m in &members {
            conv_of[m] = Some(convs.len());
        }
        convs.push(members);
    }
    Ok(convs
        .into_iter()
        .enumerate()
        .map(|(k, flows)| Conversation {
            number: k + 1,
            flows,
        })
        .collect())
}

/// Memory regions at the capture's own keys and addresses, over flat
/// physical memory; checks by `roce_wire::mr::check`.
#[derive(Clone, Debug, Default)]
pub struct ReplayMemory {
    entries: HashMap<u32, (MrEntry, u64)>,
    phys: Vec<u8>,
}

impl ReplayMemory {
    /// Registers `[base, base + len)` under `key` with `access` in `pd`.
    pub fn register(&mut self, key: u32, pd: u16, access: Access, base: u64, len: u64) {
        let pa = self.phys.len() as u64;
        self.phys.resize((pa + len) as usize, 0);
        let region = Region {
            pd,
            access,
            base,
            length: len,
            page_shift: mr::PAGE_SHIFT_MAX,
            pt_base: 0,
        };
        let entry = MrEntry {
            tag: mr::key_tag(key),
            state: MrState::Valid,
            region,
        };
        self.entries.insert(key_index(key), (entry, pa));
    }

    /// The flat physical memory behind the regions.
    pub fn phys(&self) -> &[u8] {
        &self.phys
    }

    /// Writes `data` at `va` of the region under `key`, without checks.
    pub fn poke(&mut self, key: u32, va: u64, data: &[u8]) {
        let (e, pa) = self.entries[&key_index(key)];
        let at = (pa + (va - e.region.base)) as usize;
        self.phys[at..at + data.len()].copy_from_slice(data);
    }
}

impl Memory for ReplayMemory {
    fn translate(&self, req: &mr::Request) -> Result<Vec<Chunk>, Reject> {
        let e = self.entries.get(&key_index(req.key));
        mr::check(e.map(|(e, _)| e), req)?;
        match e {
            Some((e, pa)) if req.len > 0 => Ok(vec![Chunk {
                pa: pa + (req.va - e.region.base),
                len: req.len,
            }]),
            _ => Ok(Vec::new()),
        }
    }
    fn read_pa(&self, pa: u64, buf: &mut [u8]) {
        let a = pa as usize;
        buf.copy_from_slice(&self.phys[a..a + buf.len()]);
    }
    fn write_pa(&mut self, pa: u64, data: &[u8]) {
        let a = pa as usize;
        self.phys[a..a + data.len()].copy_from_slice(data);
    }
    fn invalidate(&mut self, key: u32) -> Result<(), CmdError> {
        match self.entries.get_mut(&key_index(key)) {
            Some((e, _)) if e.state == MrState::Valid && e.tag == mr::key_tag(key) => {
                e.state = MrState::Invalid;
                Ok(())
            }
            _ => Err(CmdError::KeyMismatch),
        }
    }
}

/// What the capture shows about one responder, and how our QP is set up.
#[derive(Clone, Debug)]
pub struct Setup {
    /// Service (from the requests' opcodes).
    pub qp_type: QpType,
    /// Our QP: the requests' DestQP.
    pub qpn: u32,
    /// The requester's QP: the responses' DestQP (UD: the DETH source QP).
    pub dest_qpn: u32,
    /// The first request's PSN.
    pub rq_psn: Psn,
    /// Path MTU: the FIRST/MIDDLE payload size seen between these hosts,
    /// else the smallest that holds every ONLY packet and READ.
    pub pmtu: Pmtu,
    /// Remote access for each operation the requests use.
    pub access: Access,
    /// Q_Key (UD): the first DETH's.
    pub qkey: u32,
    /// P_Key of the first request.
    pub pkey: u16,
    /// Regions: key, base VA, length, access — covering every RETH and
    /// AtomicETH range of the requests.
    pub mrs: Vec<(u32, u64, u64, Access)>,
    /// Receive WQEs posted (one per request that takes one) and each one's size.
    pub recv: (usize, u32),
}

/// The responder resources our QP gets (rxe's device maximum).
const MAX_DEST_RD_ATOMIC: u8 = 128;
/// Protection domain of every region.
const PD: u16 = 1;

fn op_access(kind: OpKind) -> Access {
    match kind {
        OpKind::Write => Access::REMOTE_WRITE,
        OpKind::ReadRequest => Access::REMOTE_READ,
        OpKind::CompareSwap | OpKind::FetchAdd => Access::REMOTE_ATOMIC,
        _ => Access::NONE,
    }
}

/// The PMTU from FIRST/MIDDLE payloads (requests and READ responses) of `fs`.
fn pmtu_seen<'a>(fs: impl Iterator<Item = &'a CapFrame>) -> Result<Option<Pmtu>, String> {
    let mut seen: Option<(u32, u64)> = None;
    for f in fs {
        let info = f.repr.bth.opcode.info().expect("accepted");
        if matches!(info.position, Position::First | Position::Middle) && info.has_payload() {
            let n = f.payload.len() as u32;
            match seen {
                None => seen = Some((n, f.n)),
                Some((m, at)) if m != n => {
                    return Err(format!(
                        "frames {at} and {} disagree on the path MTU ({m} and {n} bytes in FIRST/MIDDLE packets)",
                        f.n
                    ))
                }
                _ => {}
            }
        }
    }
    match seen {
        None => Ok(None),
        Some((n, at)) => Pmtu::from_bytes(n).map(Some).ok_or_else(|| {
            format!("frame {at}: a FIRST/MIDDLE packet of {n} bytes is no path MTU")
        }),
    }
}

fn setup(
    frames: &[CapFrame],
    reqs: &[usize],
    resps: &[usize],
    host_pmtu: Option<Pmtu>,
) -> Result<Setup, String> {
    let first = &frames[reqs[0]];
    let info0 = first.repr.bth.opcode.info().expect("accepted");
    let qp_type = match info0.transport {
        Transport::Rc => QpType::Rc,
        Transport::Uc => QpType::Uc,
        Transport::Ud => QpType::Ud,
        Transport::Cnp => unreachable!("a CNP is no request"),
    };
    let mut access = Access::NONE;
    let mut ranges: BTreeMap<u32, (u64, u64, Access)> = BTreeMap::new();
    let mut recv_n = 0usize;
    let mut msg_len = 0u64;
    let mut max_msg = 0u64;
    let mut max_only = 0u64;
    for &i in reqs {
        let f = &frames[i];
        let info = f.repr.bth.opcode.info().expect("accepted");
        if info.transport != info0.transport {
            return Err(format!(
                "frame {}: {} mixes transports with frame {} ({})",
                f.n, info.name, first.n, info0.name
            ));
        }
        let a = op_access(info.kind);
        access = access.union(a);
        let mut add = |key: u32, va: u64, len: u64| {
            if len == 0 {
                return;
            }
            let e = ranges.entry(key).or_insert((va, va + len, a));
            e.0 = e.0.min(va);
            e.1 = e.1.max(va + len);
            e.2 = e.2.union(a);
        };
        if let Some(r) = f.repr.ext.reth {
            add(r.rkey, r.va, r.dma_len as u64);
            if info.position == Position::Only {
                max_only = max_only.max(r.dma_len as u64);
            }
        }
        if let Some(x) = f.repr.ext.atomic_eth {
            add(x.rkey, x.va, 8);
        }
        if info.flags() & flags::RECV_WQE != 0 {
            recv_n += 1;
        }
        if info.kind == OpKind::Send {
            if matches!(info.position, Position::First | Position::Only) {
                msg_len = 0;
            }
            msg_len += f.payload.len() as u64;
            max_msg = max_msg.max(msg_len);
        }
        if info.position == Position::Only {
            max_only = max_only.max(f.payload.len() as u64);
        }
    }
    let all = reqs.iter().chain(resps).map(|&i| &frames[i]);
    let pmtu = match pmtu_seen(all)?.or(host_pmtu) {
        Some(p) => p,
        None => *Pmtu::ALL
            .iter()
            .find(|p| p.bytes() as u64 >= max_only)
            .unwrap_or(&Pmtu::Mtu4096),
    };
    let dest_qpn = match (qp_type, resps.first()) {
        (QpType::Ud, _) => first.repr.ext.deth.map_or(0, |d| d.src_qp),
        (_, Some(&r)) => frames[r].repr.bth.dest_qp,
        (_, None) => 0,
    };
    let mrs = ranges
        .into_iter()
        .map(|(k, (lo, hi, a))| (k, lo, hi - lo, a))
        .collect();
    Ok(Setup {
        qp_type,
        qpn: first.repr.bth.dest_qp,
        dest_qpn,
        rq_psn: first.psn(),
        pmtu,
        access,
        qkey: first.repr.ext.deth.map_or(0, |d| d.qkey),
        pkey: first.repr.bth.pkey,
        mrs,
        recv: (recv_n, max_msg.max(max_only).max(1) as u32),
    })
}

/// The bytes the capture reveals: READ response payloads at their
/// addresses and ATOMIC ACK original data, where no earlier WRITE or
/// atomic of the capture changed them. `(key, va) -> byte`.
fn revealed(
    frames: &[CapFrame],
    reqs: &[usize],
    resps: &[usize],
    pmtu: Pmtu,
) -> BTreeMap<(u32, u64), u8> {
    let mut all: Vec<usize> = reqs.iter().chain(resps).copied().collect();
    all.sort_unstable();
    let mut written: Vec<(u64, u64)> = Vec::new();
    let mut known: BTreeMap<(u32, u64), u8> = BTreeMap::new();
    // READ requests by first PSN: (va, rkey, packets); atomics by PSN.
    let mut reads: HashMap<u32, (u64, u32, u32)> = HashMap::new();
    let mut atomics: HashMap<u32, (u64, u32)> = HashMap::new();
    let touched = |w: &Vec<(u64, u64)>, a: u64| w.iter().any(|&(lo, hi)| a >= lo && a < hi);
    for i in all {
        let f = &frames[i];
        let p = f.psn();
        match f.kind() {
            OpKind::Write => {
                if let Some(r) = f.repr.ext.reth {
                    written.push((r.va, r.va + r.dma_len as u64));
                }
            }
            OpKind::ReadRequest => {
                let r = f.repr.ext.reth.expect("accepted");
                let n = pmtu.packets(r.dma_len as u64).max(1) as u32;
                reads.insert(p.value(), (r.va, r.rkey, n));
            }
            OpKind::CompareSwap | OpKind::FetchAdd => {
                let a = f.repr.ext.atomic_eth.expect("accepted");
                atomics.insert(p.value(), (a.va, a.rkey));
            }
            OpKind::ReadResponse => {
                let found = reads.iter().find(|(&first, &(_, _, n))| {
                    let d = p.diff(Psn::new(first));
                    d >= 0 && (d as u32) < n
                });
                if let Some((&first, &(va, rkey, _))) = found {
                    let off = p.diff(Psn::new(first)) as u64 * pmtu.bytes() as u64;
                    for (k, &b) in f.payload.iter().enumerate() {
                        let a = va + off + k as u64;
                        if !touched(&written, a) {
                            known.entry((rkey, a)).or_insert(b);
                        }
                    }
                }
            }
            OpKind::AtomicAcknowledge => {
                if let (Some(&(va, rkey)), Some(x)) =
                    (atomics.get(&p.value()), f.repr.ext.atomic_ack_eth)
                {
                    for (k, b) in x.orig_remote_data.to_le_bytes().into_iter().enumerate() {
                        let a = va + k as u64;
                        if !touched(&written, a) {
                            known.entry((rkey, a)).or_insert(b);
                        }
                    }
                    written.push((va, va + 8));
                }
            }
            _ => {}
        }
    }
    known
}

/// One frame our responder sent.
#[derive(Clone, Debug)]
pub struct Sent {
    /// The capture frame that caused it.
    pub in_reply_to: u64,
    /// The packet.
    pub pkt: Packet,
    /// The request that caused it was a duplicate (PSN behind ePSN).
    pub dup: bool,
    /// The real response it was compared with.
    pub capture_frame: Option<u64>,
    /// An allowed difference (docs/REPLAY.md rule).
    pub allowed: Option<String>,
    /// A disagreement.
    pub differs: Option<String>,
}

/// One responder's replay.
#[derive(Clone, Debug)]
pub struct Responder {
    /// Its conversation's number.
    pub conversation: usize,
    /// "10.0.0.2 QP 0x11 -> 10.0.0.1 QP 0x11 (RC)".
    pub name: String,
    /// The setup.
    pub setup: Setup,
    /// Requests fed.
    pub fed: usize,
    /// What our responder sent, in order.
    pub sent: Vec<Sent>,
    /// Real responses.
    pub real: usize,
    /// Pairs that agree exactly.
    pub agree: usize,
    /// Differences the rules allow (model or capture side).
    pub allowed: Vec<String>,
    /// Disagreements.
    pub disagreements: Vec<String>,
    /// Template headers of our frames (a real response's, else the request's reversed).
    template: FrameRepr,
}

/// The whole replay.
#[derive(Clone, Debug)]
pub struct Report {
    /// Frames in the capture.
    pub frames: u64,
    /// Frames `Frame::parse` accepted.
    pub roce_frames: usize,
    /// Conversations found.
    pub conversations: usize,
    /// One per flow that carries requests.
    pub responders: Vec<Responder>,
    /// Responses without any request flow (cannot be replayed).
    pub orphan_responses: usize,
}

impl Report {
    /// Every disagreement.
    pub fn disagreements(&self) -> impl Iterator<Item = &String> {
        self.responders.iter().flat_map(|r| &r.disagreements)
    }

    /// One JSON line per frame our responders sent, in capture order of
    /// the frames that caused them: DESIGN §7 fields plus `in_reply_to`,
    /// `conversation`, `capture_frame` (the real response compared, or
    /// null), and `allowed` or `differs` when it is not an exact match.
    /// `frame` numbers our frames 1, 2, ... in that order.
    pub fn lines(&self) -> Vec<String> {
        let mut all: Vec<(&Responder, &Sent)> = self
            .responders
            .iter()
            .flat_map(|r| r.sent.iter().map(move |s| (r, s)))
            .collect();
        all.sort_by_key(|(_, s)| s.in_reply_to);
        all.iter()
            .enumerate()
            .map(|(k, (r, s))| {
                let bytes = s
                    .pkt
                    .to_frame(r.template.eth, r.template.ip, r.template.udp)
                    .expect("the model's packets emit");
                let f = Frame::parse(&bytes).expect("the model's frames parse");
                let line = Line {
                    frame: k as u64 + 1,
                    verdict: Ok(&f.repr),
                }
                .to_string();
                let mut extra = format!(
                    r#", "in_reply_to": {}, "conversation": {}, "capture_frame": {}"#,
                    s.in_reply_to,
                    r.conversation,
                    s.capture_frame.map_or("null".into(), |n| n.to_string())
                );
                if let Some(a) = &s.allowed {
                    extra += &format!(r#", "allowed": {}"#, json_str(a));
                }
                if let Some(d) = &s.differs {
                    extra += &format!(r#", "differs": {}"#, json_str(d));
                }
                format!("{}{extra}}}", &line[..line.len() - 1])
            })
            .collect()
    }
}

fn json_str(s: &str) -> String {
    serde_json::Value::String(s.into()).to_string()
}

/// A response, for comparison and messages.
#[derive(Clone, Debug)]
struct Resp {
    opcode: u8,
    psn: Psn,
    dest_qp: u32,
    syndrome: Option<Syndrome>,
    msn: Option<u32>,
    payload: Vec<u8>,
    orig: Option<u64>,
}

impl Resp {
    fn of_packet(p: &Packet) -> Resp {
        Resp {
            opcode: p.bth.opcode.0,
            psn: p.bth.psn,
            dest_qp: p.bth.dest_qp,
            syndrome: p.ext.aeth.map(|a| a.syndrome),
            msn: p.ext.aeth.map(|a| a.msn),
            payload: p.payload.clone(),
            orig: p.ext.atomic_ack_eth.map(|a| a.orig_remote_data),
        }
    }
    fn of_frame(f: &CapFrame) -> Resp {
        Resp {
            opcode: f.repr.bth.opcode.0,
            psn: f.psn(),
            dest_qp: f.repr.bth.dest_qp,
            syndrome: f.repr.ext.aeth.map(|a| a.syndrome),
            msn: f.repr.ext.aeth.map(|a| a.msn),
            payload: f.payload.clone(),
            orig: f.repr.ext.atomic_ack_eth.map(|a| a.orig_remote_data),
        }
    }
    /// A positive ACK (opcode ACKNOWLEDGE, syndrome class ACK).
    fn is_ack(&self) -> bool {
        self.opcode == 0x11 && matches!(self.syndrome, Some(Syndrome::Ack(_)))
    }
}

impl fmt::Display for Resp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = roce_wire::Opcode(self.opcode)
            .name()
            .unwrap_or("?")
            .trim_start_matches("RC_");
        write!(f, "{name} PSN {}", self.psn.value())?;
        if let Some(s) = self.syndrome {
            write!(f, " {}", class(s))?;
        }
        if let Some(m) = self.msn {
            write!(f, " MSN {m}")?;
        }
        if !self.payload.is_empty() {
            write!(f, " {} B", self.payload.len())?;
        }
        if let Some(o) = self.orig {
            write!(f, " orig {o:#x}")?;
        }
        Ok(())
    }
}

/// The syndrome class compared: ACK, RNR NAK, or NAK with its code (the
/// ACK credit field and the RNR timer are not compared).
fn class(s: Syndrome) -> String {
    match s {
        Syndrome::Ack(_) => "ACK".into(),
        Syndrome::RnrNak(_) => "RNR-NAK".into(),
        Syndrome::Nak(c) => format!("NAK({})", c.value()),
        Syndrome::Reserved(b) => format!("reserved({b:#04x})"),
    }
}

/// What differs between the model's response `m` and the real one `c`.
fn compare(m: &Resp, c: &Resp) -> Vec<String> {
    let mut d = Vec::new();
    if m.opcode != c.opcode {
        d.push(format!("opcode {:#04x} != {:#04x}", m.opcode, c.opcode));
    }
    if m.psn != c.psn {
        d.push(format!("psn {} != {}", m.psn.value(), c.psn.value()));
    }
    if m.dest_qp != c.dest_qp {
        d.push(format!("destqp {:#x} != {:#x}", m.dest_qp, c.dest_qp));
    }
    match (m.syndrome, c.syndrome) {
        (Some(a), Some(b)) if class(a) != class(b) => {
            d.push(format!("aeth {} != {}", class(a), class(b)))
        }
        _ => {}
    }
    if let (Some(a), Some(b)) = (m.msn, c.msn) {
        if a != b {
            d.push(format!("msn {a} != {b}"));
        }
    }
    if m.payload.len() != c.payload.len() {
        d.push(format!(
            "payload_len {} != {}",
            m.payload.len(),
            c.payload.len()
        ));
    } else if let Some(k) = (0..m.payload.len()).find(|&k| m.payload[k] != c.payload[k]) {
        d.push(format!(
            "payload byte {k}: {:#04x} != {:#04x}",
            m.payload[k], c.payload[k]
        ));
    }
    if let (Some(a), Some(b)) = (m.orig, c.orig) {
        if a != b {
            d.push(format!("orig_remote_data {a:#x} != {b:#x}"));
        }
    }
    d
}

/// `b` covers `a`: a later PSN and an MSN not behind (24-bit compare).
fn covers(b: &Resp, a: &Resp) -> bool {
    let msn_ok = match (a.msn, b.msn) {
        (Some(x), Some(y)) => Psn::new(y).diff(Psn::new(x)) >= 0,
        _ => false,
    };
    b.psn.is_after(a.psn) && msn_ok
}

/// `v[k]` repeats `v[k - 1]`: both positive ACKs with the same PSN and MSN.
fn repeats(v: &[Resp], k: usize) -> bool {
    k > 0
        && v[k].is_ack()
        && v[k - 1].is_ack()
        && v[k].psn == v[k - 1].psn
        && v[k].msn == v[k - 1].msn
}

/// Replays a capture with the model as our responder.
/// Which responder answers the capture's requests.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The `roce-transport` model.
    Model,
    /// The hardware responder (`resp_top`, Verilator) for RC
    /// conversations; UC and UD (not built in hardware) on the model.
    Hw,
}

pub fn replay<R: Read>(capture: &mut CaptureReader<R>) -> Result<Report, ReplayError> {
    replay_with(capture, Engine::Model)
}

/// [`replay`] on the chosen engine.
pub fn replay_with<R: Read>(
    capture: &mut CaptureReader<R>,
    engine: Engine,
) -> Result<Report, ReplayError> {
    let (frames, count) = read_frames(capture).map_err(ReplayError::Capture)?;
    if frames.is_empty() {
        return Err(ReplayError::NoRoce { frames: count });
    }
    let flows = find_flows(&frames);
    let convs = pair_flows(&frames, &flows)?;
    // The path MTU between two hosts, from every conversation between them.
    let mut host_pmtu: HashMap<(Addr, Addr), Option<Pmtu>> = HashMap::new();
    for f in &flows {
        let key = if f.src < f.dst {
            (f.src, f.dst)
        } else {
            (f.dst, f.src)
        };
        let seen = pmtu_seen(f.frames.iter().map(|&i| &frames[i])).map_err(ReplayError::Setup)?;
        let e = host_pmtu.entry(key).or_insert(None);
        if let (Some(a), Some(b)) = (*e, seen) {
            if a != b {
                // Different per conversation: decide per conversation.
                continue;
            }
        }
        *e = e.or(seen);
    }
    let mut responders = Vec::new();
    let mut orphans = 0;
    for c in &convs {
        for (k, &fi) in c.flows.iter().enumerate() {
            let f = &flows[fi];
            let back = c
                .flows
                .iter()
                .enumerate()
                .find(|&(j, _)| j != k)
                .map(|(_, &g)| &flows[g]);
            let reqs: Vec<usize> = f
                .frames
                .iter()
                .copied()
                .filter(|&i| !frames[i].is_response())
                .collect();
            let resps: Vec<usize> = back.map_or(Vec::new(), |g| {
                g.frames
                    .iter()
                    .copied()
                    .filter(|&i| frames[i].is_response())
                    .collect()
            });
            if reqs.is_empty() {
                if back.is_none_or(|g| g.frames.iter().all(|&i| frames[i].is_response())) {
                    orphans += f.frames.len();
                }
                continue;
            }
            let key = if f.src < f.dst {
                (f.src, f.dst)
            } else {
                (f.dst, f.src)
            };
            let s = setup(
                &frames,
                &reqs,
                &resps,
                host_pmtu.get(&key).copied().flatten(),
            )
            .map_err(ReplayError::Setup)?;
            let name = format!(
                "{} QP {:#x} -> {} QP {:#x} ({:?})",
                show_addr(&f.src, f.v6),
                s.dest_qpn,
                show_addr(&f.dst, f.v6),
                s.qpn,
                s.qp_type
            )
            .replace("(Rc)", "(RC)")
            .replace("(Uc)", "(UC)")
            .replace("(Ud)", "(UD)");
            responders.push(run_responder(
                &frames, c.number, name, s, &reqs, &resps, engine,
            ));
        }
    }
    if responders.is_empty() {
        return Err(ReplayError::NoRequests);
    }
    Ok(Report {
        frames: count,
        roce_frames: frames.len(),
        conversations: convs.len(),
        responders,
        orphan_responses: orphans,
    })
}

fn run_responder(
    frames: &[CapFrame],
    conversation: usize,
    name: String,
    s: Setup,
    reqs: &[usize],
    resps: &[usize],
    engine: Engine,
) -> Responder {
    let mut attr = QpAttr::new(s.qp_type, s.qpn, s.dest_qpn);
    attr.pmtu = s.pmtu;
    attr.rq_psn = s.rq_psn;
    attr.access = s.access;
    attr.qkey = s.qkey;
    attr.pkey = s.pkey;
    attr.pd = PD;
    attr.max_dest_rd_atomic = MAX_DEST_RD_ATOMIC;
    let mut qp = Qp::connected(attr, roce_transport::Config::default());
    let mut mem = ReplayMemory::default();
    for &(key, base, len, access) in &s.mrs {
        mem.register(key, PD, access, base, len);
    }
    // Receive WQEs, all over one buffer (what lands there is not compared)
    // under a key whose index no remote key uses.
    let used: HashSet<u32> = s.mrs.iter().map(|m| key_index(m.0)).collect();
    let lkey_index = (1..).find(|i| !used.contains(i)).expect("a free index");
    let lkey = mr::key(lkey_index, 0x5a);
    let (n, size) = s.recv;
    let recv_base = 0x1000_0000_0000u64;
    mem.register(lkey, PD, Access::LOCAL_WRITE, recv_base, size as u64);
    for k in 0..n {
        qp.post_recv(RecvWr {
            wr_id: k as u64,
            sgl: vec![Sge {
                addr: recv_base,
                len: size,
                lkey,
            }],
        })
        .expect("a QP in RTS takes receive WQEs");
    }
    for ((key, va), b) in revealed(frames, reqs, resps, s.pmtu) {
        mem.poke(key, va, &[b]);
    }
    // Headers of our frames: a real response's, else the request's reversed.
    let template = match resps.first() {
        Some(&r) => frames[r].repr,
        None => {
            let mut t = frames[reqs[0]].repr;
            core::mem::swap(&mut t.eth.src, &mut t.eth.dst);
            match &mut t.ip {
                IpRepr::V4(ip) => core::mem::swap(&mut ip.src, &mut ip.dst),
                IpRepr::V6(ip) => core::mem::swap(&mut ip.src, &mut ip.dst),
            }
            t
        }
    };
    let mut sent = Vec::new();
    let mut ud_drops = Vec::new();
    let hw = engine == Engine::Hw && s.qp_type == QpType::Rc;
    if hw {
        sent = run_hw(frames, &s, reqs, mem.clone(), (lkey, recv_base, size, n));
    }
    for &i in reqs.iter().filter(|_| !hw) {
        let f = &frames[i];
        let pkt = Packet {
            bth: f.repr.bth,
            ext: f.repr.ext,
            payload: f.payload.clone(),
        };
        let dup = s.qp_type == QpType::Rc && f.psn().is_before(qp.epsn());
        let before: HashMap<_, _> = qp.counters().nonzero().collect();
        qp.receive(f.t, &pkt, f.ce(), &mut mem);
        while let Some(p) = qp.poll_transmit(f.t, &mut mem) {
            sent.push(Sent {
                in_reply_to: f.n,
                pkt: p,
                dup,
                capture_frame: None,
                allowed: None,
                differs: None,
            });
        }
        if s.qp_type == QpType::Ud {
            match qp.poll_cq() {
                Some(c) if c.status == roce_transport::WcStatus::Success => {}
                other => ud_drops.push(format!(
                    "{name}: frame {}: UD SEND the real responder's peer answered, the model {} ({:?})",
                    f.n,
                    match other {
                        Some(_) => "completed in error",
                        None => "dropped it",
                    },
                    qp.counters()
                        .nonzero()
                        .filter(|(c, v)| before.get(c) != Some(v))
                        .map(|(c, _)| c.name())
                        .collect::<Vec<_>>()
                )),
            }
        }
        while qp.poll_cq().is_some() {}
    }
    let mut r = Responder {
        conversation,
        name: if engine == Engine::Hw && !hw {
            format!("{name} [model: UC/UD not built in hardware]")
        } else {
            name
        },
        setup: s,
        fed: reqs.len(),
        sent,
        real: resps.len(),
        agree: 0,
        allowed: Vec::new(),
        disagreements: ud_drops,
        template,
    };
    align(frames, reqs, resps, &mut r);
    r
}

/// The hardware responder's answers to `reqs`: `resp_top` (64 QPs, W = 64)
/// with our QP at local index 1 (the requests' DestQP mapped to it), its
/// context from the setup, `mr_tlb`'s grants from `mem`'s regions, AXI
/// memory holding `mem`'s bytes, and `n` receive WQEs of `size` bytes at
/// `recv_base` under `lkey`. Each request runs until the responder is idle,
/// so every response is attributed to the request that caused it.
fn run_hw(
    frames: &[CapFrame],
    s: &Setup,
    reqs: &[usize],
    mem: ReplayMemory,
    (lkey, recv_base, size, n): (u32, u64, u32, usize),
) -> Vec<Sent> {
    use crate::responder::{pack_ctx, HwResponder, Item};
    use roce_regs::{AccessFlag, QpState as RegState, QpType as RegType};
    const LOCAL: u32 = 1;
    let mut flags = 0;
    for (a, f) in [
        (Access::REMOTE_WRITE, AccessFlag::RemoteWrite),
        (Access::REMOTE_READ, AccessFlag::RemoteRead),
        (Access::REMOTE_ATOMIC, AccessFlag::RemoteAtomic),
    ] {
        if s.access.contains(a) {
            flags |= f as u32;
        }
    }
    let defaults = QpAttr::new(QpType::Rc, 0, 0);
    let ctx = pack_ctx(|reg, field| match (reg, field) {
        ("state", "STATE") => RegState::Rts as u32,
        ("state", "TYPE") => RegType::Rc as u32,
        ("path", "PMTU") => s.pmtu.code() as u32,
        ("access", "FLAGS") => flags,
        ("timers", "MIN_RNR_TIMER") => defaults.min_rnr_timer.0 as u32,
        ("rd_atomic", "MAX_DEST_RD_ATOMIC") => crate::responder::res_per_qp(),
        ("rq_psn", "PSN") => s.rq_psn.value(),
        ("pd", "PD") => PD as u32,
        _ => 0,
    });
    let mut ctxs = vec![pack_ctx(|_, _| 0); 64];
    ctxs[LOCAL as usize] = ctx;
    let phys = mem.phys().to_vec();
    let mut hw = HwResponder::new(0x5eed, mem, ctxs, 0);
    hw.axi.poke(0, &phys);
    hw.rq
        .insert(LOCAL, (0..n).map(|_| (lkey, recv_base, size)).collect());
    hw.items.push_back(Item::Ev {
        kind: crate::responder::code("EV_INIT"),
        qpn: LOCAL,
        count: 0,
    });
    let mut left = n;
    while left > 0 {
        let c = left.min(u16::MAX as usize);
        hw.items.push_back(Item::Ev {
            kind: crate::responder::code("EV_POST_RECV"),
            qpn: LOCAL,
            count: c as u32,
        });
        left -= c;
    }
    let mut sent = Vec::new();
    for &i in reqs {
        let f = &frames[i];
        let mut pkt = Packet {
            bth: f.repr.bth,
            ext: f.repr.ext,
            payload: f.payload.clone(),
        };
        pkt.bth.dest_qp = LOCAL;
        hw.items.push_back(Item::Hdr(pkt));
        hw.d.eval();
        let dups = hw.d.get_cnt_duplicate();
        let mut idle = 0;
        let start = hw.cycle;
        while hw.busy() || idle < 40 {
            hw.step();
            idle = if hw.busy() { 0 } else { idle + 1 };
            assert!(
                hw.cycle - start < 10_000_000,
                "the hardware hangs: {}",
                hw.why()
            );
        }
        hw.d.eval();
        let dup = hw.d.get_cnt_duplicate() != dups;
        for (_, (op, psn, aeth, orig, payload)) in hw.rsp.drain(..) {
            let mut bth = f.repr.bth;
            bth.opcode = roce_wire::Opcode(op);
            bth.psn = Psn::new(psn);
            bth.dest_qp = s.dest_qpn;
            bth.ack_req = false;
            bth.solicited = false;
            bth.pad_count = ((4 - payload.len() % 4) % 4) as u8;
            let ext = roce_wire::ExtHeaders {
                aeth: aeth.map(|(syn, msn)| roce_wire::AethRepr {
                    syndrome: Syndrome::from_byte(syn),
                    msn,
                }),
                atomic_ack_eth: orig.map(|o| roce_wire::AtomicAckEthRepr {
                    orig_remote_data: o,
                }),
                ..Default::default()
            };
            sent.push(Sent {
                in_reply_to: f.n,
                pkt: Packet { bth, ext, payload },
                dup,
                capture_frame: None,
                allowed: None,
                differs: None,
            });
        }
    }
    sent
}

/// Pairs the model's responses with the real ones by the rules of
/// docs/REPLAY.md.
fn align(frames: &[CapFrame], reqs: &[usize], resps: &[usize], r: &mut Responder) {
    let m: Vec<Resp> = r.sent.iter().map(|s| Resp::of_packet(&s.pkt)).collect();
    let c: Vec<Resp> = resps.iter().map(|&i| Resp::of_frame(&frames[i])).collect();
    let cn: Vec<u64> = resps.iter().map(|&i| frames[i].n).collect();
    // A duplicate request (a PSN seen before) precedes capture position `n`.
    let mut seen = HashSet::new();
    let mut first_dup: Option<u64> = None;
    for &i in reqs {
        if !seen.insert(frames[i].psn().value()) && first_dup.is_none() {
            first_dup = Some(frames[i].n);
        }
    }
    let dup_before = |n: u64| first_dup.is_some_and(|d| d < n);
    let name = r.name.clone();
    let (mut i, mut j) = (0, 0);
    while i < m.len() || j < c.len() {
        let mi = m.get(i);
        let cj = c.get(j);
        if let (Some(a), Some(b)) = (mi, cj) {
            let mut d = compare(a, b);
            if cn[j] < r.sent[i].in_reply_to {
                d.push(format!(
                    "rxe sent frame {} before request frame {} arrived",
                    cn[j], r.sent[i].in_reply_to
                ));
            }
            if d.is_empty() {
                r.sent[i].capture_frame = Some(cn[j]);
                r.agree += 1;
                i += 1;
                j += 1;
                continue;
            }
        }
        // Rule 2: a duplicate re-ACKed per packet on one side, once on the other.
        if mi.is_some() && r.sent[i].dup && repeats(&m, i) {
            r.sent[i].allowed = Some("duplicate re-ACKed per packet here, fewer times by the real responder (REPLAY.md rule 2)".into());
            r.allowed.push(format!(
                "{name}: model's repeat ACK for duplicate frame {} (rule 2)",
                r.sent[i].in_reply_to
            ));
            i += 1;
            continue;
        }
        if cj.is_some() && repeats(&c, j) && dup_before(cn[j]) {
            r.allowed.push(format!("{name}: real responder's repeat ACK frame {} for a duplicate, not repeated by the model (rule 2)", cn[j]));
            j += 1;
            continue;
        }
        // Rule 1: coalesced ACKs (a repeat is rule 2's business only).
        if let (Some(a), Some(b)) = (mi, cj) {
            if a.is_ack() && b.is_ack() && covers(b, a) && !repeats(&m, i) {
                r.sent[i].allowed = Some(format!(
                    "coalesced by the real responder into frame {} (REPLAY.md rule 1)",
                    cn[j]
                ));
                r.allowed.push(format!(
                    "{name}: model ACK ({a}) coalesced into real frame {} (rule 1)",
                    cn[j]
                ));
                i += 1;
                continue;
            }
            if a.is_ack() && b.is_ack() && covers(a, b) && !repeats(&c, j) {
                r.allowed.push(format!("{name}: real ACK frame {} ({b}) coalesced by the model into its reply to frame {} (rule 1)", cn[j], r.sent[i].in_reply_to));
                j += 1;
                continue;
            }
        }
        match (mi, cj) {
            (Some(a), Some(b)) => {
                let d = compare(a, b);
                let mut d = d;
                if cn[j] < r.sent[i].in_reply_to {
                    d.push(format!(
                        "rxe's frame {} came before request frame {}",
                        cn[j], r.sent[i].in_reply_to
                    ));
                }
                let what = d.join(", ");
                r.disagreements.push(format!(
                    "{name}: real frame {} ({b}) vs the model's reply to frame {} ({a}): {what} (model != capture)",
                    cn[j], r.sent[i].in_reply_to
                ));
                r.sent[i].capture_frame = Some(cn[j]);
                r.sent[i].differs = Some(what);
                i += 1;
                j += 1;
            }
            (Some(a), None) => {
                r.disagreements.push(format!(
                    "{name}: the model answered frame {} with {a}; the capture has no such response",
                    r.sent[i].in_reply_to
                ));
                r.sent[i].differs = Some("no such response in the capture".into());
                i += 1;
            }
            (None, Some(b)) => {
                r.disagreements.push(format!(
                    "{name}: real frame {} ({b}) has no counterpart: the model sent nothing",
                    cn[j]
                ));
                j += 1;
            }
            (None, None) => unreachable!(),
        }
    }
}
