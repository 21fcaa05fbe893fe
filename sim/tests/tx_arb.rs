//! `tx_arb` (transport packets to `roce_tx`) in Verilator.
//!
//! `TxArbTxW64` / `TxArbTxW512` are `tx_arb` + `roce_tx` joined (64 QPs):
//! the bench drives transport descriptors and payload packets on the
//! responder and requester ports and checks the wire frames. The csr
//! block's datapath context port is emulated from a Rust context table
//! packed by walking the register map on its own (not `csr::ctx_layout`),
//! read two cycles before the word is shown (`QpStore::BramOutReg`). Every
//! frame is parsed with `roce_wire::Frame::parse` (ICRC checked) and must
//! equal, byte for byte, the frame `roce_wire` emits for what the
//! descriptor, the context and the configuration imply, computed here:
//! addresses, IP version from the destination GID, TTL 64, DF, the IPv4
//! identification counter, P_Key, DestQP, UDP source port, DETH. The take
//! order is checked against a model of the arbitration rule (responses
//! first, the requester after `STARVE_LIMIT` responses in a row).
//!
//! `TxArbW64` (tx_arb alone, 1024 QPs) gives the throughput and latency.
//! `ROCE_SEED` repeats or varies a run; every test prints its seed.

// Port index p walks several per-port arrays (offers, sources, queues).
#![allow(clippy::needless_range_loop)]

use roce_sim::bfm::{PacketSink, PacketSource};
use roce_sim::models::{TxArbTxW512, TxArbTxW64, TxArbW64};
use roce_sim::rng::Rng;
use roce_wire::opcode::{ExtKind, OpKind, TABLE};
use roce_wire::{
    AethRepr, AtomicAckEthRepr, AtomicEthRepr, BthRepr, DethRepr, EthernetRepr, ExtHeaders, Frame,
    FrameRepr, IpRepr, Ipv4Repr, Ipv6Repr, Opcode, Psn, RethRepr, Syndrome, UdpRepr,
};
use std::collections::{HashMap, VecDeque};

/// `qp_rd_data` words (the packed context, `csr::QP_CTX_BITS` bits).
const WORDS: usize = 11;
/// The arbitration rule's constant (`tx_arb::STARVE_LIMIT`).
const STARVE_LIMIT: u32 = 7;
/// `tx_arb::LATENCY`.
const LATENCY: u64 = 4;
const TTL: u8 = 64;

/// The context packing, walked here from the register map on its own:
/// context registers in map order, fields in declaration order, from bit 0
/// up.
fn ctx_layout() -> Vec<(
    &'static roce_regs::Register,
    &'static roce_regs::Field,
    usize,
)> {
    let mut at = 0;
    let mut out = Vec::new();
    for r in roce_regs::qp::BLOCK
        .registers
        .iter()
        .filter(|r| r.count == roce_regs::QP_COUNT && r.stride == roce_regs::QP_STRIDE)
    {
        for f in r.fields {
            out.push((r, f, at));
            at += f.width as usize;
        }
    }
    assert!(at <= 32 * WORDS);
    out
}

/// One QP's context: the path fields, and random values in every other
/// field (they must not leak into a frame).
#[derive(Clone, Debug)]
struct Ctx {
    dest_qpn: u32,
    sgid: usize,
    pkey_index: usize,
    dmac: [u8; 6],
    dgid: [u8; 16],
    qkey: u32,
    other: HashMap<(&'static str, &'static str), u64>,
}

impl Ctx {
    fn random(r: &mut Rng, v4_permille: u32) -> Ctx {
        let dgid = if r.chance(v4_permille) {
            let mut g = [0u8; 16];
            g[10] = 0xff;
            g[11] = 0xff;
            g[12..].copy_from_slice(&(r.edge(32, 0x0A00_0002) as u32).to_be_bytes());
            g
        } else {
            // Link-local, all zeros, all ones, almost-mapped, anything.
            let v: u128 = match r.below(6) {
                0 => 0xFE80u128 << 112 | r.next_u64() as u128,
                1 => 0,
                2 => u128::MAX,
                3 => 0xFFFE_0000_0000 | r.next_u32() as u128,
                4 => 0x1_0000_FFFF_0000_0000 | r.next_u32() as u128,
                _ => (r.next_u64() as u128) << 64 | r.next_u64() as u128,
            };
            v.to_be_bytes()
        };
        let mut other = HashMap::new();
        for (reg, f, _) in ctx_layout() {
            other.insert((reg.name, f.name), r.next_u64() & ((1u64 << f.width) - 1));
        }
        Ctx {
            dest_qpn: r.edge(24, 0x11) as u32,
            sgid: r.below(4) as usize,
            pkey_index: r.below(4) as usize,
            dmac: r.edge(48, 0x5254_0012_3456).to_be_bytes()[2..]
                .try_into()
                .unwrap(),
            dgid,
            qkey: r.edge(32, 0x1111_1111) as u32,
            other,
        }
    }

    fn pack(&self) -> [u32; WORDS] {
        let mut w = [0u32; WORDS];
        let be32 = |b: &[u8]| u32::from_be_bytes(b.try_into().unwrap()) as u64;
        for (r, f, at) in ctx_layout() {
            let v: u64 = match (r.name, f.name) {
                ("dest_qpn", "QPN") => self.dest_qpn as u64,
                ("path", "SGID_INDEX") => self.sgid as u64,
                ("path", "PKEY_INDEX") => self.pkey_index as u64,
                ("dmac_hi", "MAC") => u16::from_be_bytes([self.dmac[0], self.dmac[1]]) as u64,
                ("dmac_lo", "MAC") => be32(&self.dmac[2..6]),
                ("dgid_w0", "WORD") => be32(&self.dgid[0..4]),
                ("dgid_w1", "WORD") => be32(&self.dgid[4..8]),
                ("dgid_w2", "WORD") => be32(&self.dgid[8..12]),
                ("dgid_w3", "WORD") => be32(&self.dgid[12..16]),
                ("qkey", "QKEY") => self.qkey as u64,
                k => self.other[&k],
            };
            for b in 0..f.width as usize {
                if v >> b & 1 == 1 {
                    w[(at + b) / 32] |= 1 << ((at + b) % 32);
                }
            }
        }
        w
    }

    /// IPv4 when the destination GID is IPv4-mapped (`::ffff:a.b.c.d`).
    fn ipv4(&self) -> bool {
        std::net::Ipv6Addr::from(self.dgid)
            .to_ipv4_mapped()
            .is_some()
    }
}

/// The csr block's `cfg` registers as tx_arb's inputs see them.
#[derive(Clone, Debug)]
struct Cfg {
    mac: [u8; 6],
    sport: u16,
    gid: [[u8; 16]; 4],
    pkey: [u16; 4],
}

impl Cfg {
    fn random(r: &mut Rng) -> Cfg {
        let mut gid = [[0u8; 16]; 4];
        for (i, g) in gid.iter_mut().enumerate() {
            // Entry 1 IPv4-mapped as the firmware writes it; others anything.
            let v: u128 = if i == 1 {
                0xFFFF_0000_0000 | r.edge(32, 0x0A00_0001) as u128
            } else {
                (r.next_u64() as u128) << 64 | r.next_u64() as u128
            };
            *g = v.to_be_bytes();
        }
        Cfg {
            mac: r.edge(48, 0x5254_0012_3457).to_be_bytes()[2..]
                .try_into()
                .unwrap(),
            sport: [0xC000, 0, 0xFFFF, r.next_u32() as u16][r.below(4) as usize],
            gid,
            pkey: [
                0xFFFF,
                r.edge(16, 0x7FFF) as u16,
                r.next_u32() as u16,
                r.edge(16, 0) as u16,
            ],
        }
    }

    fn mac_port(&self) -> u64 {
        self.mac.iter().fold(0, |a, &b| a << 8 | b as u64)
    }

    fn gid_port(&self) -> [u32; 16] {
        let mut w = [0u32; 16];
        for (e, g) in self.gid.iter().enumerate() {
            let v = u128::from_be_bytes(*g);
            for i in 0..4 {
                w[4 * e + i] = (v >> (32 * i)) as u32;
            }
        }
        w
    }

    fn pkey_port(&self) -> u64 {
        self.pkey
            .iter()
            .enumerate()
            .fold(0, |a, (e, &p)| a | (p as u64) << (16 * e))
    }
}

/// A transport packet descriptor: every field set (garbage where the
/// opcode has no such header), and its payload packet.
#[derive(Clone, Debug)]
struct Desc {
    qpn: u32,
    opcode: u8,
    psn: u32,
    ack_req: bool,
    se: bool,
    payload_len: u16,
    syndrome: u8,
    msn: u32,
    reth: RethRepr,
    immdt: u32,
    ieth: u32,
    atomic: AtomicEthRepr,
    ack_data: u64,
    becn: bool,
    payload: Vec<u8>,
}

fn has_payload(op: u8) -> bool {
    Opcode(op).info().is_some_and(|i| i.has_payload())
}

/// The opcodes of the responder's port (ACK/NAK/RNR NAK, READ responses,
/// ATOMIC ACK) and of the requester's (everything else in the table:
/// SEND/WRITE ± immediate/invalidate, READ request, atomics, UC, UD, CNP).
fn port_opcodes(rsp: bool) -> Vec<u8> {
    TABLE
        .iter()
        .filter(|i| {
            let r = matches!(
                i.kind,
                OpKind::Acknowledge | OpKind::AtomicAcknowledge | OpKind::ReadResponse
            );
            r == rsp
        })
        .map(|i| i.code)
        .collect()
}

fn random_syndrome(r: &mut Rng) -> u8 {
    match r.below(4) {
        0 => 0x1F,                     // ACK, no credit information
        1 => r.below(32) as u8,        // ACK with a credit code
        2 => 0x60 | r.below(5) as u8,  // NAK codes 0..4
        _ => 0x20 | r.below(32) as u8, // RNR NAK with a timer
    }
}

fn random_desc(r: &mut Rng, ops: &[u8], qps: u32, max_payload: usize) -> Desc {
    let opcode = ops[r.below(ops.len() as u64) as usize];
    let payload_len = if has_payload(opcode) {
        match r.below(6) {
            0 => 0,
            1 => r.below(4) as usize + 1,
            _ => r.below(max_payload as u64 + 1) as usize,
        }
    } else {
        // Ignored: no payload packet whatever it says.
        r.edge(16, 0) as usize
    };
    let payload = if has_payload(opcode) {
        r.bytes(payload_len)
    } else {
        Vec::new()
    };
    let cnp = Opcode(opcode).info().is_some_and(|i| i.kind == OpKind::Cnp);
    Desc {
        qpn: r.below(qps as u64) as u32,
        opcode,
        psn: r.edge(24, 0x12_3456) as u32,
        ack_req: r.chance(500),
        se: r.chance(200),
        payload_len: payload_len as u16,
        syndrome: random_syndrome(r),
        msn: r.edge(24, 1) as u32,
        reth: RethRepr {
            va: r.edge(64, 0x7f00_0000_1000),
            rkey: r.edge(32, 0x1234) as u32,
            dma_len: r.edge(32, 4096) as u32,
        },
        immdt: r.next_u32(),
        ieth: r.next_u32(),
        atomic: AtomicEthRepr {
            va: r.edge(64, 0x7f00_0000_1000),
            rkey: r.next_u32(),
            swap_add: r.edge(64, 1),
            compare: r.edge(64, 0),
        },
        ack_data: r.edge(64, 0),
        becn: cnp || r.chance(50),
        payload,
    }
}

/// The frame the NIC must send for `d`, the `n`-th frame out.
fn expected(d: &Desc, ctx: &Ctx, cfg: &Cfg, n: usize) -> (FrameRepr, Vec<u8>) {
    let info = Opcode(d.opcode).info().expect("table opcode");
    let sgid = cfg.gid[ctx.sgid];
    let ip = if ctx.ipv4() {
        IpRepr::V4(Ipv4Repr {
            tos: 0,
            ident: n as u16,
            dont_frag: true,
            ttl: TTL,
            protocol: 17,
            src: sgid[12..].try_into().unwrap(),
            dst: ctx.dgid[12..].try_into().unwrap(),
            payload_len: 0,
        })
    } else {
        IpRepr::V6(Ipv6Repr {
            traffic_class: 0,
            flow_label: 0,
            hop_limit: TTL,
            next_header: 17,
            src: sgid,
            dst: ctx.dgid,
            payload_len: 0,
        })
    };
    let mut ext = ExtHeaders::default();
    for h in info.headers {
        match h {
            ExtKind::Reth => ext.reth = Some(d.reth),
            ExtKind::Aeth => {
                ext.aeth = Some(AethRepr {
                    syndrome: Syndrome::from_byte(d.syndrome),
                    msn: d.msn,
                })
            }
            ExtKind::ImmDt => ext.immdt = Some(d.immdt),
            ExtKind::Ieth => ext.ieth = Some(d.ieth),
            ExtKind::AtomicEth => ext.atomic_eth = Some(d.atomic),
            ExtKind::AtomicAckEth => {
                ext.atomic_ack_eth = Some(AtomicAckEthRepr {
                    orig_remote_data: d.ack_data,
                })
            }
            ExtKind::Deth => {
                ext.deth = Some(DethRepr {
                    qkey: ctx.qkey,
                    src_qp: d.qpn,
                })
            }
            ExtKind::Cnp => {}
        }
    }
    let q = d.qpn;
    let mut repr = FrameRepr {
        eth: EthernetRepr {
            dst: ctx.dmac,
            src: cfg.mac,
            vlan: None,
            ethertype: 0,
        },
        ip,
        udp: UdpRepr {
            // cfg.udp_sport's BASE | (hash(QPN) & 0x3FFF), the model's hash.
            src_port: cfg.sport | ((q ^ (q >> 14)) & 0x3FFF) as u16,
            dst_port: roce_wire::udp::ROCE_V2_PORT,
            checksum: 0,
            payload_len: 0,
        },
        bth: BthRepr {
            opcode: Opcode(d.opcode),
            solicited: d.se,
            mig_req: false,
            pad_count: 0,
            tver: 0,
            pkey: cfg.pkey[ctx.pkey_index],
            fecn: false,
            becn: d.becn,
            dest_qp: ctx.dest_qpn,
            ack_req: d.ack_req,
            psn: Psn::new(d.psn),
        },
        ext,
        payload_len: d.payload.len(),
    };
    repr.sync_lengths();
    (repr, d.payload.clone())
}

/// What the bench drives into either tx_arb + roce_tx model.
trait Dut {
    fn lanes(&self) -> usize;
    fn set_desc(&mut self, req: bool, d: &Desc);
    fn set_valid(&mut self, rsp: bool, req: bool);
    fn ready(&self) -> (bool, bool);
    fn set_cfg(&mut self, cfg: &Cfg);
    fn set_ctx(&mut self, w: &[u32; WORDS]);
    fn rd_addr(&self) -> usize;
    fn set_rst(&mut self, v: bool);
    fn src_drive(&mut self, req: bool, s: &mut PacketSource);
    fn src_handshake(&mut self, req: bool, s: &mut PacketSource);
    fn sink_drive(&mut self, s: &mut PacketSink);
    fn sink_handshake(&mut self, s: &mut PacketSink) -> bool;
    fn error_payload(&self) -> bool;
    fn eval_(&mut self);
    fn tick_(&mut self);
}

macro_rules! set_port {
    ($d:expr, $p:ident, $x:expr) => {
        roce_sim::tx::__paste::paste! {{
            let d = &mut $d;
            let x: &Desc = $x;
            d.[<set_ $p qpn>](x.qpn as _);
            d.[<set_ $p opcode>](x.opcode as _);
            d.[<set_ $p psn>](x.psn as _);
            d.[<set_ $p ack_req>](x.ack_req);
            d.[<set_ $p se>](x.se);
            d.[<set_ $p payload_len>](x.payload_len as _);
            d.[<set_ $p aeth_syndrome>](x.syndrome as _);
            d.[<set_ $p aeth_msn>](x.msn as _);
            d.[<set_ $p reth_va>](x.reth.va as _);
            d.[<set_ $p reth_rkey>](x.reth.rkey as _);
            d.[<set_ $p reth_dmalen>](x.reth.dma_len as _);
            d.[<set_ $p immdt>](x.immdt as _);
            d.[<set_ $p ieth>](x.ieth as _);
            d.[<set_ $p atomic_va>](x.atomic.va as _);
            d.[<set_ $p atomic_rkey>](x.atomic.rkey as _);
            d.[<set_ $p atomic_swap_add>](x.atomic.swap_add as _);
            d.[<set_ $p atomic_compare>](x.atomic.compare as _);
            d.[<set_ $p atomic_ack_data>](x.ack_data as _);
            d.[<set_ $p becn>](x.becn);
        }}
    };
}

macro_rules! dut {
    ($m:ident) => {
        impl Dut for $m {
            fn lanes(&self) -> usize {
                $m::PARAMS.iter().find(|p| p.0 == "K").unwrap().1 as usize
            }
            fn set_desc(&mut self, req: bool, d: &Desc) {
                if req {
                    set_port!(*self, s_req_, d);
                } else {
                    set_port!(*self, s_rsp_, d);
                }
            }
            fn set_valid(&mut self, rsp: bool, req: bool) {
                self.set_s_rsp_valid(rsp);
                self.set_s_req_valid(req);
            }
            fn ready(&self) -> (bool, bool) {
                (self.get_s_rsp_ready(), self.get_s_req_ready())
            }
            fn set_cfg(&mut self, cfg: &Cfg) {
                self.set_cfg_mac(cfg.mac_port() as _);
                self.set_cfg_udp_sport(cfg.sport as _);
                self.set_cfg_gid(&cfg.gid_port());
                self.set_cfg_pkey(cfg.pkey_port() as _);
            }
            fn set_ctx(&mut self, w: &[u32; WORDS]) {
                self.set_qp_rd_data(w);
            }
            fn rd_addr(&self) -> usize {
                self.get_qp_rd_addr() as usize
            }
            fn set_rst(&mut self, v: bool) {
                self.set_reset(v)
            }
            fn src_drive(&mut self, req: bool, s: &mut PacketSource) {
                if req {
                    s.drive(&mut self.s_req_pay())
                } else {
                    s.drive(&mut self.s_rsp_pay())
                }
            }
            fn src_handshake(&mut self, req: bool, s: &mut PacketSource) {
                if req {
                    s.handshake(&self.s_req_pay());
                } else {
                    s.handshake(&self.s_rsp_pay());
                }
            }
            fn sink_drive(&mut self, s: &mut PacketSink) {
                s.drive(&mut self.m_axis());
            }
            fn sink_handshake(&mut self, s: &mut PacketSink) -> bool {
                s.handshake(&self.m_axis()).is_some()
            }
            fn error_payload(&self) -> bool {
                self.get_error_payload()
            }
            fn eval_(&mut self) {
                self.eval()
            }
            fn tick_(&mut self) {
                self.tick()
            }
        }
    };
}
dut!(TxArbTxW64);
dut!(TxArbTxW512);

fn model(width: usize) -> Box<dyn Dut> {
    match width {
        64 => Box::new(TxArbTxW64::new()),
        512 => Box::new(TxArbTxW512::new()),
        w => panic!("no tx_arb_tx model at {w}"),
    }
}

#[derive(Clone, Copy, Debug)]
struct Pace {
    /// Per mille: a port holds its next descriptor back this cycle; the
    /// payload sources idle between beats.
    idle: u32,
    /// Per mille: `m_axis.tready` low.
    stall: u32,
}

struct Run {
    /// Frames out, in order, with `tuser`.
    frames: Vec<(Vec<u8>, bool)>,
    /// (port is requester, index in that port's list), in take order.
    taken: Vec<(bool, usize)>,
    cycles: u64,
    error_pulses: u64,
}

/// Drives both ports' lists through `dut` and collects the frames; checks
/// every cycle's grant against the arbitration rule.
fn run(
    dut: &mut dyn Dut,
    ctxs: &[Ctx],
    cfg: &Cfg,
    lists: [&[Desc]; 2],
    pace: Pace,
    seed: u64,
) -> Run {
    let k = dut.lanes();
    let mut r = Rng::new(seed ^ 0x7A2B);
    let packed: Vec<[u32; WORDS]> = ctxs.iter().map(Ctx::pack).collect();
    let mut reads: VecDeque<[u32; WORDS]> = VecDeque::from([[0; WORDS], [0; WORDS]]);
    let mut src = [
        PacketSource::new(k, seed ^ 11, pace.idle),
        PacketSource::new(k, seed ^ 12, pace.idle),
    ];
    for (p, list) in lists.iter().enumerate() {
        for d in list.iter().filter(|d| !d.payload.is_empty()) {
            src[p].push(&d.payload);
        }
    }
    let mut sink = PacketSink::new(k, seed ^ 13, pace.stall);
    dut.set_cfg(cfg);
    dut.set_rst(true);
    for _ in 0..3 {
        dut.eval_();
        dut.tick_();
    }
    dut.set_rst(false);
    let total = lists[0].len() + lists[1].len();
    let mut next = [0usize; 2];
    let mut out = Run {
        frames: Vec::new(),
        taken: Vec::new(),
        cycles: 0,
        error_pulses: 0,
    };
    // The arbitration rule's state: responder takes in a row while the
    // requester waited.
    let mut starve = 0u32;
    // A port keeps a descriptor offered until it is taken.
    let mut offered = [false; 2];
    let mut idle_for = 0;
    while out.frames.len() < total {
        for p in 0..2 {
            if !offered[p] && next[p] < lists[p].len() && !r.chance(pace.idle) {
                offered[p] = true;
            }
            if offered[p] {
                dut.set_desc(p == 1, &lists[p][next[p]]);
            }
        }
        dut.set_valid(offered[0], offered[1]);
        dut.set_ctx(&reads[0]);
        for p in 0..2 {
            dut.src_drive(p == 1, &mut src[p]);
        }
        dut.sink_drive(&mut sink);
        dut.eval_();
        let addr = dut.rd_addr();
        reads.pop_front();
        reads.push_back(packed[addr % packed.len()]);
        let (rdy_rsp, rdy_req) = dut.ready();
        let take = [offered[0] && rdy_rsp, offered[1] && rdy_req];
        assert!(!(take[0] && take[1]), "both ports taken in one cycle");
        // The rule: when both wait, the responder, unless it has had
        // STARVE_LIMIT turns in a row while the requester waited.
        if offered[0] && offered[1] && (take[0] || take[1]) {
            let want_req = starve >= STARVE_LIMIT;
            assert_eq!(
                take[1],
                want_req,
                "cycle {}: grant to the {} with {starve} responses in a row",
                out.cycles,
                if take[1] { "requester" } else { "responder" }
            );
        }
        if !offered[1] || take[1] {
            starve = 0;
        } else if take[0] {
            starve += 1;
        }
        assert!(starve <= STARVE_LIMIT, "the requester waits past the limit");
        for p in 0..2 {
            dut.src_handshake(p == 1, &mut src[p]);
        }
        let beat = dut.sink_handshake(&mut sink);
        while let Some(f) = sink.packets.pop_front() {
            out.frames.push((f.data, f.user));
        }
        out.error_pulses += dut.error_payload() as u64;
        dut.tick_();
        for p in 0..2 {
            if take[p] {
                out.taken.push((p == 1, next[p]));
                next[p] += 1;
                offered[p] = false;
            }
        }
        out.cycles += 1;
        idle_for = if take[0] || take[1] || beat {
            0
        } else {
            idle_for + 1
        };
        assert!(
            idle_for < 20_000,
            "stuck: {} of {total} frames out, {} descriptors taken",
            out.frames.len(),
            out.taken.len()
        );
    }
    assert!(
        sink.violations.is_empty(),
        "{:?}",
        &sink.violations[..sink.violations.len().min(3)]
    );
    out
}

/// Runs and checks every frame; returns the run.
#[allow(clippy::too_many_arguments)]
fn check(width: usize, ctxs: &[Ctx], cfg: &Cfg, lists: [&[Desc]; 2], pace: Pace, seed: u64) -> Run {
    let r = run(&mut *model(width), ctxs, cfg, lists, pace, seed);
    assert_eq!(r.taken.len(), r.frames.len());
    assert_eq!(r.error_pulses, 0, "W={width}: error_payload pulsed");
    // Per-port order kept (the take order is the frame order).
    for p in [false, true] {
        let idx: Vec<usize> = r.taken.iter().filter(|t| t.0 == p).map(|t| t.1).collect();
        assert!(idx.iter().enumerate().all(|(i, &x)| i == x), "port order");
    }
    for (n, (&(req, i), (got, user))) in r.taken.iter().zip(&r.frames).enumerate() {
        let d = &lists[req as usize][i];
        let ctx = &ctxs[d.qpn as usize];
        let (repr, payload) = expected(d, ctx, cfg, n);
        let what = format!(
            "W={width} frame {n} ({} #{i}): {} IPv{} qpn {} payload {}",
            if req { "requester" } else { "responder" },
            Opcode(d.opcode).info().unwrap().name,
            if ctx.ipv4() { 4 } else { 6 },
            d.qpn,
            payload.len()
        );
        assert!(!user, "{what}: tuser");
        let f = Frame::parse(got).unwrap_or_else(|e| panic!("{what}: parse: {e:?}"));
        assert_eq!(f.repr, repr, "{what}: headers");
        assert_eq!(f.payload, &payload[..], "{what}: payload");
        let want = repr.to_bytes(&payload).expect("emit");
        assert_eq!(got, &want, "{what}: bytes");
    }
    r
}

struct World {
    ctxs: Vec<Ctx>,
    cfg: Cfg,
}

fn world(r: &mut Rng, qps: u32, v4_permille: u32) -> World {
    World {
        ctxs: (0..qps).map(|_| Ctx::random(r, v4_permille)).collect(),
        cfg: Cfg::random(r),
    }
}

fn lists(r: &mut Rng, n: [usize; 2], qps: u32, max_payload: usize) -> [Vec<Desc>; 2] {
    let (ro, qo) = (port_opcodes(true), port_opcodes(false));
    [
        (0..n[0])
            .map(|_| random_desc(r, &ro, qps, max_payload))
            .collect(),
        (0..n[1])
            .map(|_| random_desc(r, &qo, qps, max_payload))
            .collect(),
    ]
}

const QPS: u32 = 64;

/// Both ports busy with every opcode, both IP versions, random idle on
/// the inputs and backpressure on the wire: every frame exact.
#[test]
fn random_traffic_frames_are_exact() {
    for width in [64, 512] {
        let seed = Rng::seed_from_env(&format!("tx_arb W={width}"), 0x7AB0 + width as u64);
        let mut r = Rng::new(seed);
        let w = world(&mut r, QPS, 500);
        for (round, pace) in [
            Pace {
                idle: 200,
                stall: 200,
            },
            Pace { idle: 0, stall: 0 },
            Pace {
                idle: 600,
                stall: 50,
            },
            Pace {
                idle: 50,
                stall: 600,
            },
        ]
        .into_iter()
        .enumerate()
        {
            let l = lists(&mut r, [500, 500], QPS, 300);
            let run = check(
                width,
                &w.ctxs,
                &w.cfg,
                [&l[0], &l[1]],
                pace,
                seed + round as u64,
            );
            let v4 = run
                .taken
                .iter()
                .filter(|&&(q, i)| w.ctxs[l[q as usize][i].qpn as usize].ipv4())
                .count();
            eprintln!(
                "W={width} round {round} {pace:?}: {} frames ({v4} IPv4) in {} cycles",
                run.frames.len(),
                run.cycles
            );
            assert!(v4 > 100 && run.frames.len() - v4 > 100, "both IP versions");
        }
    }
}

/// Every opcode of each port at least a few times, on QPs of both IP
/// versions, with the edges of the payload length (0, 1..4, beat edges).
#[test]
fn every_opcode_on_both_ip_versions() {
    for width in [64, 512] {
        let seed = Rng::seed_from_env(&format!("tx_arb opcodes W={width}"), 0x0BC0 + width as u64);
        let mut r = Rng::new(seed);
        let w = world(&mut r, QPS, 500);
        let v4: Vec<u32> = (0..QPS).filter(|&q| w.ctxs[q as usize].ipv4()).collect();
        let v6: Vec<u32> = (0..QPS).filter(|&q| !w.ctxs[q as usize].ipv4()).collect();
        let mut l: [Vec<Desc>; 2] = [Vec::new(), Vec::new()];
        for (p, rsp) in [(0, true), (1, false)] {
            for op in port_opcodes(rsp) {
                for rep in 0..8 {
                    let mut d = random_desc(&mut r, &[op], QPS, 130);
                    let qs = if rep % 2 == 0 { &v4 } else { &v6 };
                    d.qpn = qs[r.below(qs.len() as u64) as usize];
                    if has_payload(op) {
                        let len = [0, 1, 3, 4, 7, 8, 63, 64][rep];
                        d.payload = r.bytes(len);
                        d.payload_len = len as u16;
                    }
                    l[p].push(d);
                }
            }
        }
        let run = check(
            width,
            &w.ctxs,
            &w.cfg,
            [&l[0], &l[1]],
            Pace {
                idle: 100,
                stall: 300,
            },
            seed,
        );
        eprintln!(
            "W={width}: {} frames, {} cycles",
            run.frames.len(),
            run.cycles
        );
        let ops: std::collections::BTreeSet<u8> = l.iter().flatten().map(|d| d.opcode).collect();
        assert_eq!(ops.len(), TABLE.len(), "every opcode of the table");
    }
}

/// Both ports always offering: responses win but the requester gets one
/// turn after STARVE_LIMIT responses (checked every cycle by `run`), and
/// the requester's share is what the rule gives.
#[test]
fn priority_and_the_starvation_bound() {
    for width in [64, 512] {
        let seed = Rng::seed_from_env(&format!("tx_arb priority W={width}"), 0x9710 + width as u64);
        let mut r = Rng::new(seed);
        let w = world(&mut r, QPS, 500);
        // Responses without payload, so the descriptor port is the limit.
        let mut l = lists(&mut r, [0, 200], QPS, 0);
        l[0] = (0..800)
            .map(|_| random_desc(&mut r, &[0x11], QPS, 0))
            .collect();
        let run = check(
            width,
            &w.ctxs,
            &w.cfg,
            [&l[0], &l[1]],
            Pace { idle: 0, stall: 0 },
            seed,
        );
        // While both wait: 7 responses, then 1 request.
        let first_req = run.taken.iter().position(|t| t.0).unwrap();
        assert_eq!(
            first_req, STARVE_LIMIT as usize,
            "W={width}: first request's turn"
        );
        let both = &run.taken[..800];
        let reqs = both.iter().filter(|t| t.0).count();
        assert_eq!(
            reqs, 100,
            "W={width}: requester share of the first 800 takes"
        );
    }
}

/// tx_arb alone (`TxArbW64`, 1024 QPs; `m_hdr_ready` and the payload sink
/// always ready): latency from a descriptor's handshake to `m_hdr_valid`,
/// descriptors per cycle without payload and with small payloads, and the
/// path fields of every descriptor on `m_hdr_*`.
#[test]
fn throughput_and_latency() {
    let seed = Rng::seed_from_env("tx_arb throughput", 0x7B00);
    let mut r = Rng::new(seed);
    let qps = 1024;
    let w = world(&mut r, qps, 500);
    let packed: Vec<[u32; WORDS]> = w.ctxs.iter().map(Ctx::pack).collect();
    let (ro, qo) = (port_opcodes(true), port_opcodes(false));
    // (payload bytes per descriptor with payload, goal descriptors/cycle)
    for (plen, goal) in [(0usize, 0.5f64), (8, 0.5), (16, 0.5), (64, 0.125)] {
        let mut d = TxArbW64::new();
        d.set_cfg_mac(w.cfg.mac_port() as _);
        d.set_cfg_udp_sport(w.cfg.sport as _);
        d.set_cfg_gid(&w.cfg.gid_port());
        d.set_cfg_pkey(w.cfg.pkey_port() as _);
        d.set_reset(true);
        for _ in 0..3 {
            d.eval();
            d.tick();
        }
        d.set_reset(false);
        let n = 2000;
        let descs: Vec<(bool, Desc)> = (0..n)
            .map(|i| {
                let req = i % 3 == 0;
                let ops: Vec<u8> = if req { &qo } else { &ro }
                    .iter()
                    .copied()
                    .filter(|&o| (plen > 0) == has_payload(o))
                    .collect();
                let mut x = random_desc(&mut r, &ops, qps, 0);
                if plen > 0 {
                    x.payload = r.bytes(plen);
                    x.payload_len = plen as u16;
                }
                (req, x)
            })
            .collect();
        let k = 8;
        let mut src = [PacketSource::new(k, 1, 0), PacketSource::new(k, 2, 0)];
        let mut sink = PacketSink::new(k, 3, 0);
        for (req, x) in &descs {
            if !x.payload.is_empty() {
                src[*req as usize].push(&x.payload);
            }
        }
        let mut q: [VecDeque<&Desc>; 2] = [VecDeque::new(), VecDeque::new()];
        for (req, x) in &descs {
            q[*req as usize].push_back(x);
        }
        let mut reads: VecDeque<[u32; WORDS]> = VecDeque::from([[0; WORDS], [0; WORDS]]);
        let (mut taken, mut outs) = (Vec::new(), Vec::new());
        let mut order: VecDeque<&Desc> = VecDeque::new();
        let mut pay_order: Vec<&Desc> = Vec::new();
        let mut cycle = 0u64;
        let mut ident = 0u16;
        let pays_due = if plen > 0 { n } else { 0 };
        while outs.len() < n || sink.packets.len() < pays_due {
            if let Some(x) = q[0].front() {
                set_port!(d, s_rsp_, x);
            }
            if let Some(x) = q[1].front() {
                set_port!(d, s_req_, x);
            }
            d.set_s_rsp_valid(!q[0].is_empty());
            d.set_s_req_valid(!q[1].is_empty());
            d.set_qp_rd_data(&reads[0]);
            d.set_m_hdr_ready(true);
            src[0].drive(&mut d.s_rsp_pay());
            src[1].drive(&mut d.s_req_pay());
            sink.drive(&mut d.m_payload());
            d.eval();
            reads.pop_front();
            reads.push_back(packed[d.get_qp_rd_addr() as usize]);
            for p in 0..2 {
                let rdy = if p == 0 {
                    d.get_s_rsp_ready()
                } else {
                    d.get_s_req_ready()
                };
                if !q[p].is_empty() && rdy {
                    taken.push(cycle);
                    let x = q[p].pop_front().unwrap();
                    if !x.payload.is_empty() {
                        pay_order.push(x);
                    }
                    order.push_back(x);
                }
            }
            if d.get_m_hdr_valid() {
                outs.push(cycle);
                let x = order.pop_front().expect("a header without a descriptor");
                let c = &w.ctxs[x.qpn as usize];
                assert_eq!(d.get_m_hdr_opcode() as u8, x.opcode);
                assert_eq!(d.get_m_hdr_psn(), x.psn);
                assert_eq!(d.get_m_hdr_dest_qp(), c.dest_qpn);
                assert_eq!(d.get_m_hdr_pkey() as u16, w.cfg.pkey[c.pkey_index]);
                assert_eq!(d.get_m_hdr_ipv6(), !c.ipv4());
                assert_eq!(d.get_m_hdr_ip_ident() as u16, ident);
                assert_eq!(
                    d.get_m_hdr_udp_src_port() as u16,
                    w.cfg.sport | (x.qpn & 0x3FFF) as u16
                );
                assert_eq!(d.get_m_hdr_ttl() as u8, TTL);
                assert!(d.get_m_hdr_ip_df());
                ident = ident.wrapping_add(1);
            }
            src[0].handshake(&d.s_rsp_pay());
            src[1].handshake(&d.s_req_pay());
            sink.handshake(&d.m_payload());
            d.tick();
            cycle += 1;
            assert!(cycle < 100 * n as u64, "stuck");
        }
        assert!(sink.violations.is_empty(), "{:?}", &sink.violations[..1]);
        // Payload packets in take order, whole.
        let pays: Vec<&Vec<u8>> = sink.packets.iter().map(|p| &p.data).collect();
        let want: Vec<&Vec<u8>> = pay_order.iter().map(|x| &x.payload).collect();
        assert_eq!(pays.len(), if plen > 0 { n } else { 0 });
        assert!(pays == want, "payload {plen}: packets out of take order");
        // Steady state over the middle of the run.
        let (a, b) = (n / 10, n - n / 10);
        let rate = (b - a) as f64 / (taken[b] - taken[a]) as f64;
        let beats = plen.div_ceil(k).max(1);
        eprintln!(
            "tx_arb W=64 payload {plen}: {rate:.3} descriptors/cycle ({beats} beat(s) each), goal {goal}"
        );
        assert!(rate >= goal, "payload {plen}: {rate:.3} < {goal}");
        if plen > 0 {
            // Payload bound: one beat per cycle, no bubble.
            assert!(
                rate >= 0.99 / beats as f64,
                "payload {plen}: bubbles ({rate:.3})"
            );
        }
    }
    // Latency: one descriptor into an idle block.
    let mut d = TxArbW64::new();
    d.set_reset(true);
    d.eval();
    d.tick();
    d.set_reset(false);
    let x = random_desc(&mut r, &[0x11], qps, 0);
    set_port!(d, s_rsp_, &x);
    d.set_m_hdr_ready(true);
    let mut t0 = None;
    let mut lat = None;
    for cycle in 0..20u64 {
        d.set_s_rsp_valid(t0.is_none());
        d.eval();
        if d.get_m_hdr_valid() && lat.is_none() {
            lat = Some(cycle - t0.unwrap());
        }
        if t0.is_none() && d.get_s_rsp_ready() {
            t0 = Some(cycle);
        }
        d.tick();
    }
    eprintln!("tx_arb latency: {lat:?} cycles from the handshake to m_hdr_valid");
    assert_eq!(lat, Some(LATENCY));
}
