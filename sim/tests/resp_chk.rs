//! `resp_chk` (the RC responder's header engine) in Verilator, checked
//! against the transport model `roce_transport`.
//!
//! The same request packets go into one `roce_transport::Qp` per QP (RC,
//! connected, a memory whose one MR covers every key and address the
//! traffic uses, receive WQEs posted as the hardware's credits) and into
//! `RespChkW64` (64 QPs). The csr block's datapath context port is
//! emulated here: a Rust context table packed by `csr::ctx_layout()`, read
//! two cycles before the data is shown (`QpStore::BramOutReg`'s latency),
//! the word captured at the read. A small executor turns each command
//! into the responses the NIC would send (ACK on AckReq, re-ACK of a
//! duplicate SEND/WRITE, NAK, RNR NAK, READ responses and ATOMIC ACKs by
//! kind and PSN, replays from its own responder resources), and every
//! header's responses are compared with what the model's `poll_transmit`
//! gives for it (opcode, PSN, AETH syndrome and MSN), together with the
//! order of QPs moved to Error.
//!
//! `ROCE_SEED` repeats or varies a run; every test prints its seed.

use roce_regs::{AccessFlag, QpState as RegState, QpType as RegType};
use roce_sim::models::RespChkW64;
use roce_sim::rng::Rng;
use roce_transport::{
    Config, HostMemory, Memory, Packet, Qp, QpAttr, QpState, QpType, RecvWr, Sge,
};
use roce_wire::bth::DEFAULT_PKEY;
use roce_wire::mr::{Access, Request};
use roce_wire::opcode::{ExtKind, OpKind, Position, Transport, TABLE};
use roce_wire::{AtomicEthRepr, BthRepr, ExtHeaders, Opcode, Pmtu, Psn, RethRepr, RnrTimer};
use std::collections::{HashMap, VecDeque};

const QPS: u32 = 64;
/// `qp_rd_data` words (the packed context, `csr::QP_CTX_BITS` bits).
const WORDS: usize = 11;

// The block's command and event codes, as match patterns; checked against
// the catalogue's (hw/src/transport/resp_chk.rs) by `codes_are_the_catalogues`.
const CMD_EXECUTE: u64 = 0;
const CMD_DUPLICATE: u64 = 1;
const CMD_NAK: u64 = 2;
const CMD_RNR_NAK: u64 = 3;
const CMD_DROP: u64 = 4;
const CMD_RESET: u64 = 5;
const CMD_FLUSH: u64 = 6;
const EV_INIT: u64 = 0;
const EV_POST_RECV: u64 = 1;
const EV_CLEAR: u64 = 2;
const EV_ERROR: u64 = 3;
/// The bench's own kind: `EV_ERROR` with `s_ev_exec` (the executor's).
const EV_EXEC_ERROR: u64 = 0x100 | EV_ERROR;

/// The context packing of `csr::ctx_layout()`, walked here from the
/// register map on its own: context registers in map order, fields in
/// declaration order, from bit 0 up.
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
const MR_LEN: u64 = 1 << 20;

/// One QP's context as the firmware writes it.
#[derive(Clone, Copy, Debug)]
struct Ctx {
    state: RegState,
    ty: RegType,
    pmtu: Pmtu,
    access: u32,
    rnr: u8,
    mdra: u8,
    rq_psn: u32,
    pd: u16,
}

impl Ctx {
    fn pack(&self) -> [u32; WORDS] {
        let mut w = [0u32; WORDS];
        for (r, f, at) in ctx_layout() {
            let v: u64 = match (r.name, f.name) {
                ("state", "STATE") => self.state as u64,
                ("state", "TYPE") => self.ty as u64,
                ("path", "PMTU") => self.pmtu.code() as u64,
                ("access", "FLAGS") => self.access as u64,
                ("timers", "MIN_RNR_TIMER") => self.rnr as u64,
                ("rd_atomic", "MAX_DEST_RD_ATOMIC") => self.mdra as u64,
                ("rq_psn", "PSN") => self.rq_psn as u64,
                ("pd", "PD") => self.pd as u64,
                _ => 0,
            };
            for b in 0..f.width as usize {
                if v >> b & 1 == 1 {
                    w[(at + b) / 32] |= 1 << ((at + b) % 32);
                }
            }
        }
        w
    }

    /// The model's access flags for these context flags.
    fn model_access(&self) -> Access {
        let mut a = Access::LOCAL_WRITE.bits();
        for (f, m) in [
            (AccessFlag::RemoteWrite, Access::REMOTE_WRITE),
            (AccessFlag::RemoteRead, Access::REMOTE_READ),
            (AccessFlag::RemoteAtomic, Access::REMOTE_ATOMIC),
        ] {
            if self.access & f as u32 != 0 {
                a |= m.bits();
            }
        }
        Access::from_bits(a)
    }
}

fn all_access() -> u32 {
    AccessFlag::RemoteWrite as u32 | AccessFlag::RemoteRead as u32 | AccessFlag::RemoteAtomic as u32
}

/// What the bench feeds, in order.
#[derive(Clone, Debug)]
enum Item {
    Hdr(Packet),
    /// `s_hdr_drop`: a frame roce_rx dropped (the model never sees it).
    DroppedHdr(Packet),
    Ev {
        kind: u64,
        qpn: u32,
        count: u32,
    },
    /// The firmware rewrites a context (takes no cycle).
    SetCtx(u32, Ctx),
}

/// A response as compared: opcode, PSN, AETH (syndrome byte, MSN).
type Resp = (u8, u32, Option<(u8, u32)>);

#[derive(Clone, Copy, Debug)]
struct Cmd {
    qpn: u32,
    kind: u64,
    code: u32,
    opcode: u8,
    psn: u32,
    msn: u32,
    ack_req: bool,
    va: u64,
    rkey: u32,
    len: u32,
    ack_psn: u32,
    pd: u32,
    pmtu: u32,
    mdra: u32,
}

/// The hardware's run: commands in order, QPs moved to Error, cycles.
struct HwRun {
    cmds: Vec<Cmd>,
    /// `CMD_RESET` commands: (header commands before it, QPN).
    resets: Vec<(usize, u32)>,
    /// `CMD_FLUSH` commands, likewise.
    flushes: Vec<(usize, u32)>,
    errors: Vec<u32>,
    cycles: u64,
    /// Cycle of each header's handshake and of each command's.
    hdr_cycles: Vec<u64>,
    cmd_cycles: Vec<u64>,
    counters: HashMap<&'static str, u32>,
}

/// Pacing of the run.
#[derive(Clone, Copy)]
struct Pace {
    idle: u32,
    stall: u32,
}

const FULL: Pace = Pace { idle: 0, stall: 0 };
const RANDOM: Pace = Pace {
    idle: 200,
    stall: 250,
};

fn drive_hdr(d: &mut RespChkW64, p: &Packet, drop: bool) {
    roce_sim::set_request_header!(d, p, drop);
}

fn counters(d: &RespChkW64) -> HashMap<&'static str, u32> {
    HashMap::from([
        ("execute", d.get_cnt_execute()),
        ("hdr_drop", d.get_cnt_hdr_drop()),
        ("drop_qpn", d.get_cnt_drop_qpn()),
        ("drop_state", d.get_cnt_drop_state()),
        ("drop_type", d.get_cnt_drop_type()),
        ("drop_response", d.get_cnt_drop_response()),
        ("drop_out_of_seq", d.get_cnt_drop_out_of_seq()),
        ("duplicate", d.get_cnt_duplicate()),
        ("nak_psn_seq", d.get_cnt_nak_psn_seq()),
        ("nak_op_seq", d.get_cnt_nak_op_seq()),
        ("nak_op_invalid", d.get_cnt_nak_op_invalid()),
        ("nak_padcnt", d.get_cnt_nak_padcnt()),
        ("nak_resource", d.get_cnt_nak_resource()),
        ("nak_length", d.get_cnt_nak_length()),
        ("rnr_nak", d.get_cnt_rnr_nak()),
    ])
}

/// Runs `items` through the hardware with the emulated context port.
fn run_hw(ctx0: &[Ctx], items: &[Item], pace: Pace, rng: &mut Rng) -> HwRun {
    let mut d = RespChkW64::new();
    let mut ctx: Vec<[u32; WORDS]> = ctx0.iter().map(Ctx::pack).collect();
    // The context words read in the last two cycles (oldest first).
    let mut reads: VecDeque<[u32; WORDS]> = VecDeque::from([[0; WORDS], [0; WORDS]]);
    d.set_reset(true);
    for _ in 0..3 {
        d.eval();
        d.tick();
    }
    d.set_reset(false);
    let mut q: VecDeque<&Item> = items.iter().collect();
    let want = items.iter().filter(|i| matches!(i, Item::Hdr(_))).count();
    let want_resets = items
        .iter()
        .filter(|i| matches!(i, Item::Ev { kind, .. } if *kind == EV_INIT || *kind == EV_CLEAR))
        .count();
    let want_flushes = items
        .iter()
        .filter(|i| matches!(i, Item::Ev { kind, .. } if *kind == EV_ERROR))
        .count();
    let mut run = HwRun {
        cmds: Vec::new(),
        resets: Vec::new(),
        flushes: Vec::new(),
        errors: Vec::new(),
        cycles: 0,
        hdr_cycles: Vec::new(),
        cmd_cycles: Vec::new(),
        counters: HashMap::new(),
    };
    let mut cycle = 0u64;
    while run.cmds.len() < want
        || run.resets.len() < want_resets
        || run.flushes.len() < want_flushes
        || !q.is_empty()
    {
        while let Some(Item::SetCtx(n, c)) = q.front() {
            ctx[*n as usize] = c.pack();
            q.pop_front();
        }
        let idle = pace.idle > 0 && rng.chance(pace.idle);
        let (mut hv, mut ev) = (false, false);
        match q.front() {
            Some(Item::Hdr(p)) if !idle => {
                hv = true;
                drive_hdr(&mut d, p, false);
            }
            Some(Item::DroppedHdr(p)) if !idle => {
                hv = true;
                drive_hdr(&mut d, p, true);
            }
            Some(Item::Ev { kind, qpn, count }) if !idle => {
                ev = true;
                d.set_s_ev_kind((*kind & 3) as _);
                d.set_s_ev_exec(*kind == EV_EXEC_ERROR);
                d.set_s_ev_qpn(*qpn as _);
                d.set_s_ev_count(*count as _);
            }
            _ => {}
        }
        d.set_s_hdr_valid(hv);
        d.set_s_ev_valid(ev);
        d.set_qp_rd_data(&reads[0]);
        let ready = pace.stall == 0 || !rng.chance(pace.stall);
        d.set_m_cmd_ready(ready);
        d.eval();
        let addr = d.get_qp_rd_addr() as usize;
        reads.pop_front();
        reads.push_back(ctx[addr % QPS as usize]);
        if (hv && d.get_s_hdr_ready()) || (ev && d.get_s_ev_ready()) {
            if matches!(q.front(), Some(Item::Hdr(_))) {
                run.hdr_cycles.push(cycle);
            }
            q.pop_front();
        }
        if d.get_m_cmd_valid() && ready && d.get_m_cmd_kind() as u64 == CMD_RESET {
            run.resets.push((run.cmds.len(), d.get_m_cmd_qpn()));
        } else if d.get_m_cmd_valid() && ready && d.get_m_cmd_kind() as u64 == CMD_FLUSH {
            run.flushes.push((run.cmds.len(), d.get_m_cmd_qpn()));
        } else if d.get_m_cmd_valid() && ready {
            run.cmd_cycles.push(cycle);
            run.cmds.push(Cmd {
                qpn: d.get_m_cmd_qpn(),
                kind: d.get_m_cmd_kind() as u64,
                code: d.get_m_cmd_code(),
                opcode: d.get_m_cmd_opcode() as u8,
                psn: d.get_m_cmd_psn(),
                msn: d.get_m_cmd_msn(),
                ack_req: d.get_m_cmd_ack_req(),
                va: d.get_m_cmd_va(),
                rkey: d.get_m_cmd_rkey(),
                len: d.get_m_cmd_len(),
                ack_psn: d.get_m_cmd_ack_psn(),
                pd: d.get_m_cmd_pd(),
                pmtu: d.get_m_cmd_pmtu(),
                mdra: d.get_m_cmd_mdra(),
            });
        }
        if d.get_m_qp_error_valid() {
            run.errors.push(d.get_m_qp_error_qpn());
        }
        d.tick();
        cycle += 1;
        assert!(
            cycle < 1000 + 40 * items.len() as u64,
            "hang: {} of {want} commands after {cycle} cycles",
            run.cmds.len()
        );
    }
    // Let the counters and error pulses settle.
    d.set_s_hdr_valid(false);
    d.set_s_ev_valid(false);
    for _ in 0..4 {
        d.eval();
        if d.get_m_qp_error_valid() {
            run.errors.push(d.get_m_qp_error_qpn());
        }
        assert!(!d.get_m_cmd_valid(), "a command beyond one per header");
        d.tick();
    }
    d.eval();
    run.counters = counters(&d);
    run.cycles = cycle;
    run
}

/// The model side: QPs, memory, the key every request uses.
struct World {
    qps: Vec<Qp>,
    mem: HostMemory,
    key: u32,
    base: u64,
    /// Receive WQE ids.
    wr_id: u64,
}

fn model_attr(n: u32, c: &Ctx) -> QpAttr {
    let mut a = QpAttr::new(QpType::Rc, n, 0x100 + n);
    a.pmtu = c.pmtu;
    a.rq_psn = Psn::new(c.rq_psn);
    a.access = c.model_access();
    a.min_rnr_timer = RnrTimer(c.rnr);
    a.max_dest_rd_atomic = c.mdra;
    a.qp_type = match c.ty {
        RegType::Rc => QpType::Rc,
        RegType::Uc => QpType::Uc,
        RegType::Ud => QpType::Ud,
    };
    a
}

impl World {
    fn new(ctx: &[Ctx]) -> World {
        let mut mem = HostMemory::new(16, 512);
        let (key, base) = mem.alloc(0, Access::ALL, MR_LEN);
        let qps = ctx
            .iter()
            .enumerate()
            .map(|(n, c)| World::make_qp(n as u32, c))
            .collect();
        World {
            qps,
            mem,
            key,
            base,
            wr_id: 0,
        }
    }

    fn make_qp(n: u32, c: &Ctx) -> Qp {
        let a = model_attr(n, c);
        let mut qp = Qp::new(a, Config::default());
        let path: &[QpState] = match c.state {
            RegState::Reset => &[],
            RegState::Init => &[QpState::Init],
            RegState::Rtr => &[QpState::Init, QpState::Rtr],
            _ => &[QpState::Init, QpState::Rtr, QpState::Rts],
        };
        for s in path {
            qp.modify(*s, &a).unwrap();
        }
        qp
    }

    fn post(&mut self, n: u32, count: u32) {
        for _ in 0..count {
            self.wr_id += 1;
            let wr = RecvWr {
                wr_id: self.wr_id,
                sgl: vec![Sge {
                    addr: self.base,
                    len: MR_LEN as u32,
                    lkey: self.key,
                }],
            };
            let _ = self.qps[n as usize].post_recv(wr);
        }
    }

    /// Feeds the items; per header, the responses the model sends, and the
    /// QPs that went to Error, in order.
    fn expect(&mut self, items: &[Item]) -> (Vec<Vec<Resp>>, Vec<u32>) {
        let mut out = Vec::new();
        let mut errors = Vec::new();
        for it in items {
            match it {
                Item::Hdr(p) => {
                    let n = p.bth.dest_qp;
                    let mut r = Vec::new();
                    if n < QPS {
                        let qp = &mut self.qps[n as usize];
                        let was = qp.state();
                        qp.receive(0, p, false, &mut self.mem);
                        while let Some(t) = qp.poll_transmit(0, &mut self.mem) {
                            r.push(resp_of(&t));
                        }
                        if was != QpState::Error && qp.state() == QpState::Error {
                            errors.push(n);
                        }
                    }
                    out.push(r);
                }
                Item::Ev { kind, qpn, count } if *kind == EV_POST_RECV => self.post(*qpn, *count),
                Item::Ev { kind, qpn, .. } if *kind & 3 == EV_ERROR => {
                    let qp = &mut self.qps[*qpn as usize];
                    let a = *qp.attr();
                    qp.modify(QpState::Error, &a).unwrap();
                }
                Item::SetCtx(n, c) => {
                    // Modify to Reset, then up again with the new context
                    // (the bench sends CLEAR and INIT next).
                    self.qps[*n as usize] = World::make_qp(*n, c);
                }
                _ => {}
            }
        }
        (out, errors)
    }
}

fn resp_of(p: &Packet) -> Resp {
    (
        p.bth.opcode.0,
        p.bth.psn.value(),
        p.ext.aeth.map(|a| (a.syndrome.to_byte(), a.msn)),
    )
}

fn op(kind: OpKind, pos: Position, imm: bool) -> Opcode {
    TABLE
        .iter()
        .find(|i| {
            i.transport == Transport::Rc
                && i.kind == kind
                && i.position == pos
                && i.has(ExtKind::ImmDt) == imm
                && !i.has(ExtKind::Ieth)
        })
        .map(|i| Opcode(i.code))
        .unwrap()
}

const ACK: u8 = 0x11;
const ATOMIC_ACK: u8 = 0x12;
const NO_CREDITS: u8 = 0x1f;

/// A responder resource of the executor (READ or atomic), as the model keeps them.
#[derive(Clone, Copy, Debug)]
struct Res {
    first: Psn,
    last: Psn,
    read: Option<(u64, u32, u32)>,
}

/// The test's executor: commands to responses.
struct Executor {
    res: HashMap<u32, VecDeque<Res>>,
}

impl Executor {
    fn run(&mut self, c: &Cmd, ctx: &Ctx, w: &World) -> Vec<Resp> {
        let info = Opcode(c.opcode).info().unwrap();
        let pmtu = ctx.pmtu;
        let psn = Psn::new(c.psn);
        let mut out = Vec::new();
        let read_resp = |out: &mut Vec<Resp>, psn: Psn, len: u32, first: bool, msn: u32| {
            let n = pmtu.packets(len as u64) as u32;
            for i in 0..n {
                let pos = match (first && i == 0, i + 1 == n) {
                    (true, true) => Position::Only,
                    (true, false) => Position::First,
                    (false, false) => Position::Middle,
                    (false, true) => Position::Last,
                };
                let aeth = (pos != Position::Middle).then_some((NO_CREDITS, msn));
                out.push((
                    op(OpKind::ReadResponse, pos, false).0,
                    psn.add(i).value(),
                    aeth,
                ));
            }
        };
        match c.kind {
            CMD_EXECUTE => {
                // The R_Key check the executor does through mr_tlb.
                let check = |key: u32, access: Access, va: u64, len: u32| {
                    len == 0
                        || w.mem
                            .translate(&Request {
                                key,
                                pd: 0,
                                access,
                                va,
                                len,
                            })
                            .is_ok()
                };
                let first = matches!(info.position, Position::First | Position::Only);
                let ok = match info.kind {
                    OpKind::Write if first => check(c.rkey, Access::REMOTE_WRITE, c.va, c.len),
                    OpKind::ReadRequest => check(c.rkey, Access::REMOTE_READ, c.va, c.len),
                    OpKind::CompareSwap | OpKind::FetchAdd => {
                        check(c.rkey, Access::REMOTE_ATOMIC, c.va, 8)
                    }
                    _ => true,
                };
                assert!(ok, "the traffic stays inside the MR: {c:x?}");
                let res = self.res.entry(c.qpn).or_default();
                let mut keep = |r: Res| {
                    res.push_back(r);
                    while res.len() > ctx.mdra as usize {
                        res.pop_front();
                    }
                };
                match info.kind {
                    OpKind::ReadRequest => {
                        let n = pmtu.packets(c.len as u64) as u32;
                        keep(Res {
                            first: psn,
                            last: psn.add(n - 1),
                            read: Some((c.va, c.rkey, c.len)),
                        });
                        read_resp(&mut out, psn, c.len, true, c.msn);
                    }
                    OpKind::CompareSwap | OpKind::FetchAdd => {
                        keep(Res {
                            first: psn,
                            last: psn,
                            read: None,
                        });
                        out.push((ATOMIC_ACK, c.psn, Some((NO_CREDITS, c.msn))));
                    }
                    _ => {
                        if c.ack_req {
                            out.push((ACK, c.psn, Some((NO_CREDITS, c.msn))));
                        }
                    }
                }
            }
            CMD_DUPLICATE => {
                let res = self.res.entry(c.qpn).or_default();
                let found = res
                    .iter()
                    .rev()
                    .find(|r| !psn.is_before(r.first) && !psn.is_after(r.last))
                    .copied();
                match info.kind {
                    OpKind::Send | OpKind::Write => {
                        out.push((ACK, c.ack_psn, Some((NO_CREDITS, c.msn))))
                    }
                    OpKind::ReadRequest => {
                        if let Some(Res {
                            first,
                            read: Some((va, rkey, len)),
                            ..
                        }) = found
                        {
                            let inside = c.va >= va
                                && c.va as u128 + c.len as u128 <= va as u128 + len as u128
                                && c.rkey == rkey;
                            if inside {
                                read_resp(&mut out, psn, c.len, psn == first, c.msn);
                            }
                        }
                    }
                    _ => {
                        if let Some(Res {
                            first, read: None, ..
                        }) = found
                        {
                            if first == psn {
                                out.push((ATOMIC_ACK, c.psn, Some((NO_CREDITS, c.msn))));
                            }
                        }
                    }
                }
            }
            CMD_NAK => out.push((ACK, c.psn, Some((0x60 | c.code as u8, c.msn)))),
            CMD_RNR_NAK => out.push((ACK, c.psn, Some((0x20 | c.code as u8, c.msn)))),
            CMD_DROP => {}
            k => panic!("unknown command kind {k}"),
        }
        out
    }
}

/// Runs `items` through model and hardware and compares response by
/// response. Returns the hardware run and the model's responses.
fn differential(
    test: &str,
    ctx0: &[Ctx],
    items: &[Item],
    pace: Pace,
    rng: &mut Rng,
) -> (HwRun, Vec<Vec<Resp>>) {
    let mut world = World::new(ctx0);
    // Bring-up: every QP in RTR/RTS gets INIT first.
    let mut all: Vec<Item> = ctx0
        .iter()
        .enumerate()
        .map(|(n, _)| Item::Ev {
            kind: EV_INIT,
            qpn: n as u32,
            count: 0,
        })
        .collect();
    all.extend(items.iter().cloned());
    let (want, want_err) = world.expect(&all);
    let hw = run_hw(ctx0, &all, pace, rng);
    assert_eq!(hw.cmds.len(), want.len(), "{test}: one command per header");
    // One CMD_RESET per INIT/CLEAR event and one CMD_FLUSH per firmware
    // ERROR (none for the executor's), in order with the headers.
    let mut resets = Vec::new();
    let mut flushes = Vec::new();
    let mut hdrs = 0;
    for it in &all {
        match it {
            Item::Hdr(_) => hdrs += 1,
            Item::Ev { kind, qpn, .. } if *kind == EV_INIT || *kind == EV_CLEAR => {
                resets.push((hdrs, *qpn))
            }
            Item::Ev { kind, qpn, .. } if *kind == EV_ERROR => flushes.push((hdrs, *qpn)),
            _ => {}
        }
    }
    assert_eq!(
        hw.resets, resets,
        "{test}: CMD_RESET per INIT/CLEAR, in order"
    );
    assert_eq!(
        hw.flushes, flushes,
        "{test}: CMD_FLUSH per firmware ERROR, in order"
    );
    // Executor, replaying context changes in item order.
    let mut ctx = ctx0.to_vec();
    let mut ex = Executor {
        res: HashMap::new(),
    };
    let mr = World::new(ctx0);
    let mut i = 0;
    for it in &all {
        match it {
            Item::SetCtx(n, c) => {
                ctx[*n as usize] = *c;
                ex.res.remove(n);
            }
            Item::Hdr(p) => {
                let c = &hw.cmds[i];
                assert_eq!(c.qpn, p.bth.dest_qp, "{test}: header {i}: command order");
                let ctx_n = ctx[(c.qpn % QPS) as usize];
                if c.kind == CMD_EXECUTE {
                    assert_eq!(
                        (c.pd, c.pmtu, c.mdra),
                        (ctx_n.pd as u32, ctx_n.pmtu.bytes(), ctx_n.mdra as u32),
                        "{test}: header {i}: the context's PD, PMTU and max_dest_rd_atomic"
                    );
                }
                let got = ex.run(c, &ctx_n, &mr);
                assert_eq!(
                    got,
                    want[i],
                    "{test}: header {i} (QP {}, opcode {:#x}, PSN {:#x}): command {c:x?}",
                    c.qpn,
                    p.bth.opcode.0,
                    p.bth.psn.value()
                );
                i += 1;
            }
            _ => {}
        }
    }
    assert_eq!(hw.errors, want_err, "{test}: QPs moved to Error");
    (hw, want)
}

// ---------------------------------------------------------------- traffic

fn rc_ctx(rq_psn: u32) -> Ctx {
    Ctx {
        state: RegState::Rts,
        ty: RegType::Rc,
        pmtu: Pmtu::Mtu256,
        access: all_access(),
        rnr: 12,
        mdra: 4,
        rq_psn,
        pd: 0x5a3c,
    }
}

/// A request packet.
#[allow(clippy::too_many_arguments)]
fn packet(
    qpn: u32,
    opcode: Opcode,
    psn: Psn,
    ack_req: bool,
    len: usize,
    reth: Option<RethRepr>,
    atomic: Option<AtomicEthRepr>,
) -> Packet {
    let info = opcode.info().unwrap();
    let ext = ExtHeaders {
        reth: info.has(ExtKind::Reth).then(|| reth.unwrap_or_default()),
        immdt: info.has(ExtKind::ImmDt).then_some(0x1234_5678),
        ieth: info.has(ExtKind::Ieth).then_some(0),
        atomic_eth: info
            .has(ExtKind::AtomicEth)
            .then(|| atomic.unwrap_or_default()),
        ..ExtHeaders::default()
    };
    Packet {
        bth: BthRepr {
            opcode,
            solicited: false,
            mig_req: false,
            pad_count: ((4 - len % 4) % 4) as u8,
            tver: roce_wire::bth::TVER,
            pkey: DEFAULT_PKEY,
            fecn: false,
            becn: false,
            dest_qp: qpn,
            ack_req,
            psn,
        },
        ext,
        payload: vec![0xA5; len],
    }
}

/// A sender of messages for one QP: PSNs, and what it sent for go-back-N.
struct Sender {
    qpn: u32,
    psn: Psn,
    pmtu: Pmtu,
    sent: VecDeque<Packet>,
}

impl Sender {
    fn new(qpn: u32, c: &Ctx) -> Sender {
        Sender {
            qpn,
            psn: Psn::new(c.rq_psn),
            pmtu: c.pmtu,
            sent: VecDeque::new(),
        }
    }

    fn emit(&mut self, p: Packet, out: &mut Vec<Item>, psns: u32) {
        self.psn = self.psn.add(psns);
        self.sent.push_back(p.clone());
        if self.sent.len() > 64 {
            self.sent.pop_front();
        }
        out.push(Item::Hdr(p));
    }

    /// A SEND or WRITE of `len` bytes.
    fn message(
        &mut self,
        kind: OpKind,
        imm: bool,
        len: usize,
        va: u64,
        key: u32,
        out: &mut Vec<Item>,
    ) {
        let m = self.pmtu.bytes() as usize;
        let n = self.pmtu.packets(len as u64) as usize;
        for i in 0..n {
            let pos = match (i == 0, i + 1 == n) {
                (true, true) => Position::Only,
                (true, false) => Position::First,
                (false, false) => Position::Middle,
                (false, true) => Position::Last,
            };
            let last = matches!(pos, Position::Last | Position::Only);
            let plen = if last { len - i * m } else { m };
            let o = op(kind, pos, imm && last);
            let reth = RethRepr {
                va,
                rkey: key,
                dma_len: len as u32,
            };
            let p = packet(self.qpn, o, self.psn, last, plen, Some(reth), None);
            self.emit(p, out, 1);
        }
    }

    fn read(&mut self, len: u32, va: u64, key: u32, out: &mut Vec<Item>) {
        let o = op(OpKind::ReadRequest, Position::Only, false);
        let reth = RethRepr {
            va,
            rkey: key,
            dma_len: len,
        };
        let p = packet(self.qpn, o, self.psn, true, 0, Some(reth), None);
        let n = self.pmtu.packets(len as u64) as u32;
        self.emit(p, out, n);
    }

    fn atomic(&mut self, cs: bool, va: u64, key: u32, out: &mut Vec<Item>) {
        let k = if cs {
            OpKind::CompareSwap
        } else {
            OpKind::FetchAdd
        };
        let o = op(k, Position::Only, false);
        let a = AtomicEthRepr {
            va,
            rkey: key,
            swap_add: 5,
            compare: 0,
        };
        let p = packet(self.qpn, o, self.psn, true, 0, None, Some(a));
        self.emit(p, out, 1);
    }

    /// Go-back-N: resend everything from `from` (a PSN it sent).
    fn resend_from(&mut self, from: Psn, out: &mut Vec<Item>) {
        if let Some(i) = self.sent.iter().position(|p| p.bth.psn == from) {
            for p in self.sent.iter().skip(i) {
                out.push(Item::Hdr(p.clone()));
            }
        }
    }
}

fn ev(kind: u64, qpn: u32, count: u32) -> Item {
    Item::Ev { kind, qpn, count }
}

fn seed(test: &str, default: u64) -> Rng {
    Rng::new(Rng::seed_from_env(test, default))
}

// ---------------------------------------------------------------- named tests

#[test]
fn dup_send_is_reacked_not_reexecuted() {
    let mut rng = seed("dup_send_is_reacked_not_reexecuted", 1);
    let ctx = vec![rc_ctx(100)];
    let mut s = Sender::new(0, &ctx[0]);
    let mut items = vec![ev(EV_POST_RECV, 0, 2)];
    s.message(OpKind::Send, false, 700, 0, 0, &mut items);
    s.message(OpKind::Send, false, 10, 0, 0, &mut items);
    // The whole first message again, then the second's packet.
    s.resend_from(Psn::new(100), &mut items);
    let (hw, want) = differential("dup_send", &ctx, &items, RANDOM, &mut rng);
    // 3 + 1 executed (ACKs on the last packets), then 4 duplicates each re-ACKed
    // with the PSN before ePSN and MSN 2.
    let acks: Vec<&Resp> = want.iter().flatten().collect();
    assert_eq!(acks.len(), 6);
    for r in &acks[2..] {
        assert_eq!(**r, (ACK, 103, Some((NO_CREDITS, 2))));
    }
    assert_eq!(hw.counters["duplicate"], 4);
    assert_eq!(hw.counters["execute"], 4);
}

#[test]
fn out_of_sequence_nak_sent_once() {
    let mut rng = seed("out_of_sequence_nak_sent_once", 2);
    let ctx = vec![rc_ctx(0)];
    let mut s = Sender::new(0, &ctx[0]);
    let mut items = vec![];
    let mut lost = vec![];
    s.message(OpKind::Write, false, 256, 0x7f00_0000_0000, 0, &mut lost);
    s.message(OpKind::Write, false, 1000, 0x7f00_0000_0000, 0, &mut items);
    s.message(OpKind::Write, false, 3, 0x7f00_0000_0000, 0, &mut items);
    items.extend(lost);
    s.resend_from(Psn::new(1), &mut items);
    // Fix the keys: WRITEs need the MR's key and VA.
    let w = World::new(&ctx);
    for it in items.iter_mut() {
        if let Item::Hdr(p) = it {
            if let Some(r) = p.ext.reth.as_mut() {
                r.rkey = w.key;
                r.va = w.base;
            }
        }
    }
    let (hw, want) = differential("out_of_sequence", &ctx, &items, RANDOM, &mut rng);
    let naks: Vec<&Resp> = want
        .iter()
        .flatten()
        .filter(|r| r.2.unwrap().0 == 0x60)
        .collect();
    assert_eq!(naks, vec![&(ACK, 0, Some((0x60, 0)))]);
    assert_eq!(hw.counters["nak_psn_seq"], 1);
    assert_eq!(hw.counters["drop_out_of_seq"], 4);
}

#[test]
fn msn_counts_messages() {
    let mut rng = seed("msn_counts_messages", 3);
    let ctx = vec![rc_ctx(0xFF_FFF0)];
    let w = World::new(&ctx);
    let mut s = Sender::new(0, &ctx[0]);
    let mut items = vec![ev(EV_POST_RECV, 0, 3)];
    s.message(OpKind::Send, false, 600, 0, 0, &mut items);
    s.message(OpKind::Write, true, 512, w.base, w.key, &mut items);
    s.read(1000, w.base, w.key, &mut items);
    s.atomic(true, w.base + 8, w.key, &mut items);
    s.message(OpKind::Send, true, 0, 0, 0, &mut items);
    let (_, want) = differential("msn", &ctx, &items, FULL, &mut rng);
    let msns: Vec<u32> = want
        .iter()
        .filter_map(|r| r.last().and_then(|x| x.2.map(|a| a.1)))
        .collect();
    assert_eq!(msns, vec![1, 2, 3, 4, 5]);
}

/// Each invalid-request cause on its own QP: NAK code 1 and the QP to Error.
#[test]
fn invalid_request_naks() {
    let mut rng = seed("invalid_request_naks", 4);
    let mut ctx: Vec<Ctx> = (0..7).map(|_| rc_ctx(10)).collect();
    ctx[1].access = AccessFlag::RemoteRead as u32; // no remote write
    ctx[3].mdra = 0;
    let w = World::new(&ctx);
    let mut items = vec![];
    let mut s: Vec<Sender> = ctx
        .iter()
        .enumerate()
        .map(|(n, c)| Sender::new(n as u32, c))
        .collect();
    // 0: MIDDLE without FIRST.
    items.push(Item::Hdr(packet(
        0,
        op(OpKind::Send, Position::Middle, false),
        Psn::new(10),
        false,
        256,
        None,
        None,
    )));
    // 1: WRITE without remote write access.
    s[1].message(OpKind::Write, false, 8, w.base, w.key, &mut items);
    // 2: PadCnt on a FIRST.
    let mut p = packet(
        2,
        op(OpKind::Write, Position::First, false),
        Psn::new(10),
        false,
        256,
        Some(RethRepr {
            va: w.base,
            rkey: w.key,
            dma_len: 1000,
        }),
        None,
    );
    p.bth.pad_count = 2;
    items.push(Item::Hdr(p));
    // 3: READ with max_dest_rd_atomic = 0.
    s[3].read(8, w.base, w.key, &mut items);
    // 4: FIRST shorter than the PMTU.
    items.push(Item::Hdr(packet(
        4,
        op(OpKind::Write, Position::First, false),
        Psn::new(10),
        false,
        200,
        Some(RethRepr {
            va: w.base,
            rkey: w.key,
            dma_len: 1000,
        }),
        None,
    )));
    // 5: READ longer than 2^31; 6: unaligned atomic.
    s[5].read(0x8000_0001, w.base, w.key, &mut items);
    s[6].atomic(false, w.base + 4, w.key, &mut items);
    // Afterwards every QP is in Error: a good packet is dropped silently.
    for q in 0..7 {
        items.push(Item::Hdr(packet(
            q,
            op(OpKind::Send, Position::Only, false),
            Psn::new(10),
            true,
            4,
            None,
            None,
        )));
    }
    let (hw, want) = differential("invalid_request", &ctx, &items, RANDOM, &mut rng);
    for (q, r) in want.iter().take(7).enumerate() {
        assert_eq!(r, &vec![(ACK, 10, Some((0x61, 0)))], "QP {q}");
    }
    assert!(want[7..].iter().all(|r| r.is_empty()));
    assert_eq!(hw.errors, (0..7).collect::<Vec<u32>>());
    for c in ["nak_op_seq", "nak_op_invalid", "nak_padcnt", "nak_resource"] {
        assert_eq!(hw.counters[c], 1, "{c}");
    }
    assert_eq!(hw.counters["nak_length"], 3);
    assert_eq!(hw.counters["drop_state"], 7);
}

#[test]
fn rnr_nak_then_retry() {
    let mut rng = seed("rnr_nak_then_retry", 5);
    let mut ctx = vec![rc_ctx(7)];
    ctx[0].rnr = 17;
    let w = World::new(&ctx);
    let mut s = Sender::new(0, &ctx[0]);
    let mut items = vec![];
    s.message(OpKind::Send, false, 300, 0, 0, &mut items);
    s.message(OpKind::Write, true, 4, w.base, w.key, &mut items);
    items.push(ev(EV_POST_RECV, 0, 1));
    s.resend_from(Psn::new(7), &mut items);
    items.push(ev(EV_POST_RECV, 0, 1));
    s.resend_from(Psn::new(9), &mut items);
    let (hw, want) = differential("rnr", &ctx, &items, RANDOM, &mut rng);
    assert_eq!(want[0], vec![(ACK, 7, Some((0x20 | 17, 0)))]);
    // As rxe: the first packet behind the RNR-NAKed one gets one PSN
    // sequence NAK carrying ePSN 7; the rest of the message and the WRITE
    // are silent.
    assert_eq!(want[1], vec![(ACK, 7, Some((0x60, 0)))]);
    assert!(want[2].is_empty());
    assert_eq!(want[4], vec![(ACK, 8, Some((NO_CREDITS, 1)))]);
    assert_eq!(want[5], vec![(ACK, 9, Some((0x20 | 17, 1)))]);
    assert_eq!(want[6], vec![(ACK, 9, Some((NO_CREDITS, 2)))]);
    assert_eq!(hw.counters["rnr_nak"], 2);
}

#[test]
fn psn_wraps_at_2_24() {
    let mut rng = seed("psn_wraps_at_2_24", 6);
    let ctx = vec![rc_ctx(0xFF_FFFD)];
    let w = World::new(&ctx);
    let mut s = Sender::new(0, &ctx[0]);
    let mut items = vec![ev(EV_POST_RECV, 0, 4)];
    s.message(OpKind::Send, false, 1024, 0, 0, &mut items); // FFFFFD..000000
    s.read(600, w.base, w.key, &mut items); // 000001..000003
    s.message(OpKind::Write, false, 256, w.base, w.key, &mut items); // 000004
    s.resend_from(Psn::new(0xFF_FFFF), &mut items); // duplicates across the wrap
    let (_, want) = differential("psn_wrap", &ctx, &items, RANDOM, &mut rng);
    assert_eq!(want[3], vec![(ACK, 0, Some((NO_CREDITS, 1)))]);
    assert_eq!(want[4].len(), 3);
    assert_eq!(want[4][2].1, 3);
}

/// The 24-bit serial compare against `Psn::diff` on vectors around the
/// wrap and the half-space edge: the hardware's ahead / behind / equal.
#[test]
fn psn_compare_matches_psn_diff() {
    let mut rng = seed("psn_compare_matches_psn_diff", 7);
    let e = [
        0u32, 1, 0x7F_FFFF, 0x80_0000, 0x80_0001, 0xFF_FFFE, 0xFF_FFFF,
    ];
    let d = [
        0i64, 1, -1, 2, -2, 0x7F_FFFF, -0x7F_FFFF, -0x80_0000, 0x40_0000,
    ];
    let mut ctx = vec![];
    let mut items = vec![];
    for (n, &epsn) in e.iter().enumerate() {
        ctx.push(rc_ctx(epsn));
        for &dd in &d {
            let psn = Psn::new(((epsn as i64 + dd) & 0xFF_FFFF) as u32);
            let model = psn.diff(Psn::new(epsn));
            assert_eq!(model.signum() as i64, dd.signum(), "{psn:?} vs {epsn:#x}");
            // A zero-length WRITE ONLY: executes when equal, else dup / NAK.
            items.push(Item::Hdr(packet(
                n as u32,
                op(OpKind::Write, Position::Only, false),
                psn,
                true,
                0,
                None,
                None,
            )));
            // Back to this ePSN for the next vector: re-initialise.
            items.push(Item::SetCtx(n as u32, ctx[n]));
            items.push(ev(EV_CLEAR, n as u32, 0));
            items.push(ev(EV_INIT, n as u32, 0));
        }
    }
    let (hw, want) = differential("psn_compare", &ctx, &items, RANDOM, &mut rng);
    let mut k = 0;
    for &epsn in &e {
        for &dd in &d {
            let got = &want[k];
            match dd.signum() {
                0 => assert_eq!(got, &vec![(ACK, epsn, Some((NO_CREDITS, 1)))]),
                1 => assert_eq!(got, &vec![(ACK, epsn, Some((0x60, 0)))]),
                _ => assert_eq!(
                    got,
                    &vec![(ACK, (epsn + 0xFF_FFFF) & 0xFF_FFFF, Some((NO_CREDITS, 0)))]
                ),
            }
            k += 1;
        }
    }
    assert_eq!(hw.counters["duplicate"], 4 * e.len() as u32);
}

/// The executor (or the firmware) moves a QP to Error: its packets are
/// dropped, receive credits posted meanwhile are flushed; after Reset and
/// INIT it starts again without credits (RNR NAK).
#[test]
fn error_event_stops_the_qp() {
    let mut rng = seed("error_event_stops_the_qp", 9);
    let ctx = vec![rc_ctx(40), rc_ctx(50)];
    let mut s0 = Sender::new(0, &ctx[0]);
    let mut s1 = Sender::new(1, &ctx[1]);
    let mut items = vec![ev(EV_POST_RECV, 0, 2), ev(EV_POST_RECV, 1, 2)];
    s0.message(OpKind::Send, false, 4, 0, 0, &mut items);
    items.push(ev(EV_ERROR, 0, 0));
    items.push(ev(EV_POST_RECV, 0, 3));
    s0.message(OpKind::Send, false, 4, 0, 0, &mut items);
    s1.message(OpKind::Send, false, 4, 0, 0, &mut items);
    items.extend([
        Item::SetCtx(0, ctx[0]),
        ev(EV_CLEAR, 0, 0),
        ev(EV_INIT, 0, 0),
    ]);
    let mut s0 = Sender::new(0, &ctx[0]);
    s0.message(OpKind::Send, false, 4, 0, 0, &mut items);
    // The executor's Error on QP 1: dropped after it, and no CMD_FLUSH
    // (the executor flushes the receive queue itself).
    items.push(ev(EV_EXEC_ERROR, 1, 0));
    s1.message(OpKind::Send, false, 4, 0, 0, &mut items);
    let (hw, want) = differential("error_event", &ctx, &items, RANDOM, &mut rng);
    assert_eq!(want[0], vec![(ACK, 40, Some((NO_CREDITS, 1)))]);
    assert!(want[1].is_empty());
    assert_eq!(want[2], vec![(ACK, 50, Some((NO_CREDITS, 1)))]);
    assert_eq!(want[3], vec![(ACK, 40, Some((0x20 | 12, 0)))]);
    assert!(want[4].is_empty());
    assert_eq!(hw.counters["drop_state"], 2);
    // The firmware's Error on QP 0 only: one CMD_FLUSH, after its first
    // SEND's command.
    assert_eq!(hw.flushes, vec![(1, 0)]);
    // The errors came from outside: no m_qp_error pulse.
    assert!(hw.errors.is_empty());
}

// ---------------------------------------------------------------- random

/// A random context for a (re)started QP.
fn random_ctx(rng: &mut Rng) -> Ctx {
    let rq = match rng.below(4) {
        0 => 0xFF_FFFF - rng.below(40) as u32,
        1 => 0,
        _ => rng.next_u32() & 0xFF_FFFF,
    };
    let mut c = rc_ctx(rq);
    c.pmtu = Pmtu::ALL[rng.below(3) as usize];
    c.rnr = rng.below(32) as u8;
    c.pd = match rng.below(3) {
        0 => 0,
        1 => u16::MAX,
        _ => rng.next_u32() as u16,
    };
    c.mdra = [0, 1, 2, 16][rng.below(4) as usize].max(if rng.chance(900) { 1 } else { 0 });
    if rng.chance(100) {
        c.access = rng.below(16) as u32;
    }
    if rng.chance(30) {
        c.state = RegState::Init;
    }
    if rng.chance(30) {
        c.ty = RegType::Uc;
    }
    c
}

/// Random message sequences with the faults the model handles.
fn random_traffic(rng: &mut Rng, ctx: &mut [Ctx], msgs: usize, active: u32) -> Vec<Item> {
    let w = World::new(ctx);
    let mut model = World::new(ctx);
    let mut s: Vec<Sender> = ctx
        .iter()
        .enumerate()
        .map(|(n, c)| Sender::new(n as u32, c))
        .collect();
    let mut items = vec![];
    let mut chunk = vec![];
    let mut next_ctx = ctx.to_vec();
    for _ in 0..msgs {
        let q = rng.below(active as u64) as u32;
        let qi = q as usize;
        let m = s[qi].pmtu.bytes() as usize;
        let edge = |rng: &mut Rng| -> usize {
            match rng.below(8) {
                0 => 0,
                1 => 1,
                2 => m - 1,
                3 => m,
                4 => m + 1,
                5 => 2 * m,
                6 => 3 * m - 1,
                _ => rng.range(0, 4 * m),
            }
        };
        let va = w.base + (rng.below(MR_LEN / 2) & !7);
        chunk.clear();
        match rng.below(10) {
            0..=2 => {
                let len = edge(rng);
                s[qi].message(OpKind::Send, rng.chance(300), len, 0, 0, &mut chunk)
            }
            3..=5 => {
                let len = edge(rng);
                s[qi].message(OpKind::Write, rng.chance(300), len, va, w.key, &mut chunk)
            }
            6 | 7 => {
                let len = edge(rng) as u32;
                s[qi].read(len, va, w.key, &mut chunk)
            }
            _ => s[qi].atomic(rng.chance(500), va, w.key, &mut chunk),
        }
        // Faults.
        match rng.below(40) {
            0 if chunk.len() > 1 => {
                // A packet lost.
                let i = rng.below(chunk.len() as u64) as usize;
                chunk.remove(i);
            }
            1 if chunk.len() > 1 => {
                // Two packets swapped.
                let i = rng.below(chunk.len() as u64 - 1) as usize;
                chunk.swap(i, i + 1);
            }
            2 => {
                // A packet duplicated.
                let i = rng.below(chunk.len() as u64) as usize;
                let p = chunk[i].clone();
                chunk.insert(i, p);
            }
            3 => {
                // Bad PadCnt on a FIRST/MIDDLE, or a bad length.
                let i = rng.below(chunk.len() as u64) as usize;
                if let Item::Hdr(p) = &mut chunk[i] {
                    match rng.below(4) {
                        0 => p.bth.pad_count = 1 + rng.below(3) as u8,
                        1 if !p.payload.is_empty() => {
                            p.payload.pop();
                        }
                        2 => {
                            if let Some(r) = p.ext.reth.as_mut() {
                                r.dma_len = r.dma_len.wrapping_add(1 + rng.below(3) as u32)
                            }
                        }
                        _ => {
                            if let Some(a) = p.ext.atomic_eth.as_mut() {
                                a.va += 4;
                            }
                        }
                    }
                }
            }
            4 => {
                // A MIDDLE without FIRST.
                let o = op(OpKind::Send, Position::Middle, false);
                let p = packet(q, o, s[qi].psn, false, m, None, None);
                chunk.insert(0, Item::Hdr(p));
            }
            5 => {
                // A header roce_rx dropped, and one for a QP beyond the table.
                let p = packet(
                    q,
                    op(OpKind::Send, Position::Only, false),
                    s[qi].psn,
                    true,
                    4,
                    None,
                    None,
                );
                chunk.insert(0, Item::DroppedHdr(p.clone()));
                let mut p2 = p;
                p2.bth.dest_qp = QPS + rng.below(1000) as u32;
                chunk.push(Item::Hdr(p2));
            }
            _ => {}
        }
        if rng.chance(150) {
            chunk.insert(0, ev(EV_POST_RECV, q, rng.range(1, 3) as u32));
        }
        if rng.chance(8) {
            // The executor met a remote access error, or the firmware
            // moved the QP to Error.
            let k = if rng.chance(500) {
                EV_EXEC_ERROR
            } else {
                EV_ERROR
            };
            chunk.push(ev(k, q, 0));
        }
        let (_, _) = model.expect(&chunk);
        items.append(&mut chunk);
        // The requester's reaction to what the model did.
        let qp = &model.qps[qi];
        let stuck = qp.state() != QpState::Rts || next_ctx[qi].ty != RegType::Rc;
        if qp.state() == QpState::Error || (stuck && rng.chance(300)) {
            let c = random_ctx(rng);
            next_ctx[qi] = c;
            let mut re = vec![Item::SetCtx(q, c), ev(EV_CLEAR, q, 0), ev(EV_INIT, q, 0)];
            if rng.chance(800) {
                re.push(ev(EV_POST_RECV, q, rng.range(1, 8) as u32));
            }
            model.expect(&re);
            items.extend(re);
            s[qi] = Sender::new(q, &c);
        } else if !stuck && qp.epsn() != s[qi].psn && rng.chance(700) {
            let mut re = vec![];
            if qp.rq_len() == 0 {
                re.push(ev(EV_POST_RECV, q, rng.range(1, 4) as u32));
            }
            s[qi].resend_from(qp.epsn(), &mut re);
            model.expect(&re);
            items.extend(re);
        }
    }
    items
}

#[test]
fn random_against_the_model() {
    let mut rng = seed("random_against_the_model", 0x5eed);
    for round in 0..6 {
        let active = [64, 4, 1, 16, 2, 64][round];
        let mut ctx: Vec<Ctx> = (0..QPS).map(|_| random_ctx(&mut rng)).collect();
        let mut items: Vec<Item> = (0..QPS)
            .map(|q| ev(EV_POST_RECV, q, rng.range(0, 6) as u32))
            .collect();
        items.extend(random_traffic(&mut rng, &mut ctx, 1500, active));
        let pace = if round % 2 == 0 { RANDOM } else { FULL };
        let (hw, want) = differential(
            &format!("random round {round}"),
            &ctx,
            &items,
            pace,
            &mut rng,
        );
        let n: usize = want.iter().map(|r| r.len()).sum();
        eprintln!(
            "round {round}: {} headers, {} responses, {} cycles, counters {:?}",
            want.len(),
            n,
            hw.cycles,
            hw.counters
        );
    }
}

// ---------------------------------------------------------------- throughput

/// Headers per cycle with no idle and no backpressure, same QP and many
/// QPs, and the latency from a header's handshake to its command.
#[test]
fn throughput_and_latency() {
    let mut rng = seed("throughput_and_latency", 8);
    let ctx: Vec<Ctx> = (0..QPS).map(|q| rc_ctx(q * 1000)).collect();
    for (name, active) in [("one QP", 1u32), ("64 QPs", QPS)] {
        let mut s: Vec<Sender> = ctx
            .iter()
            .enumerate()
            .map(|(n, c)| Sender::new(n as u32, c))
            .collect();
        let mut items = vec![];
        for i in 0..2000u32 {
            let q = (i % active) as usize;
            s[q].message(OpKind::Write, false, 0, 0, 0, &mut items);
        }
        let (hw, _) = differential(name, &ctx, &items, FULL, &mut rng);
        let h = &hw.hdr_cycles;
        let rate = (h.len() - 1) as f64 / (h[h.len() - 1] - h[0]) as f64;
        let lat: Vec<u64> = hw
            .cmd_cycles
            .iter()
            .zip(&hw.hdr_cycles)
            .map(|(c, h)| c - h)
            .collect();
        eprintln!(
            "{name}: {rate:.3} headers/cycle, latency {}..={} cycles",
            lat.iter().min().unwrap(),
            lat.iter().max().unwrap()
        );
        assert!(rate >= 0.499, "{name}: {rate}");
        assert!(lat
            .iter()
            .all(|&l| l == RespChkW64::LATENCY.unwrap() as u64));
    }
}

#[test]
fn codes_are_the_catalogues() {
    for (name, v) in [
        ("CMD_EXECUTE", CMD_EXECUTE),
        ("CMD_DUPLICATE", CMD_DUPLICATE),
        ("CMD_NAK", CMD_NAK),
        ("CMD_RNR_NAK", CMD_RNR_NAK),
        ("CMD_DROP", CMD_DROP),
        ("CMD_RESET", CMD_RESET),
        ("CMD_FLUSH", CMD_FLUSH),
        ("EV_INIT", EV_INIT),
        ("EV_POST_RECV", EV_POST_RECV),
        ("EV_CLEAR", EV_CLEAR),
        ("EV_ERROR", EV_ERROR),
    ] {
        assert_eq!(v, roce_sim::param(RespChkW64::PARAMS, name), "{name}");
    }
}
