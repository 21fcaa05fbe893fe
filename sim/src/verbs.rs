//! A host library in the ibverbs shapes over the whole Verilated NIC
//! (`roce_nic`, issue 36 §3): the NIC's DMA master is served by a host
//! memory model ([`AxiMem`], with its latency and stalls), its register
//! window by an AXI4-Lite master, and the firmware (the real `roce-fw` ELF)
//! runs on the NIC's PicoRV32 and executes modify-QP from the mailbox.
//!
//! - [`Device`]: open (load the firmware, reset, wait for the tables to
//!   clear), [`Device::set_station`] (MAC, IPv4, `sync-gids` through the
//!   mailbox), [`Device::reg_mr`] (page table and region through the `mr`
//!   registers, with `roce_fw::mr`'s driver), [`Device::create_cq`],
//!   [`Device::create_qp`] (rings in host memory, `hq` registers),
//!   [`Device::modify_qp`] (the mailbox: `roce_fw::qp::Request`),
//!   [`Device::post_send`], [`Device::post_recv`] (WQEs into the rings,
//!   doorbells), [`Device::poll_cq`] (CQEs from the ring, `cq_ci`).
//! - Register work runs as a script in [`Device::step`] (one register
//!   access at a time, each waited for; a poll reads until a field holds a
//!   value), so a device set up beside others keeps their clocks together:
//!   nothing here runs the clock on its own. [`Device::settled`] says when
//!   the script is done.
//! - [`NicDev`] is a [`Device`] as a [`SimNic`] for `roce-sim run`
//!   (`--a nic`): the run's regions are four MRs, each QP gets rings and a
//!   send and a receive CQ, and the checks of the run apply unchanged.

use crate::axi_mem::{AxiMem, AxiMemTiming};
use crate::axil::{AxilMaster, Done, Timing, OKAY};
use crate::host_rings::{CompletionQueue, RecvQueue, SendQueue};
use crate::models::RoceNicW64 as Dut;
use crate::nic::{Cqe as RunCqe, Layout, QpSetup, RecvWr, Region, SendWr, SimNic, Station, Verb};
use crate::nic::{PD, REGIONS};
use roce_fw::qp::Request;
use roce_fw::Regs;
use roce_regs::queue::{
    ring, Cqe, Payload, RecvWqe, SendFlag, SendWqe, Sge, WcOpcode, WcStatus, WrOpcode, MAX_INLINE,
    MAX_SGE,
};
use roce_regs::{cfg, db, hq, mbox, mr, Command, ResultCode};
use roce_wire::mr::Access;
use std::collections::{HashMap, VecDeque};

crate::axi_write_port!(
    Dut,
    8,
    |m: &Dut| crate::axis::bytes_from_u64(m.get_m_axi_wdata(), 8),
    |m: &Dut| m.get_m_axi_wstrb() as u64
);
crate::axi_read_port!(Dut, 8, |m: &mut Dut, d: &[u8]| m
    .set_m_axi_rdata(crate::axis::le_u64(d)));

/// One step of the register script.
#[derive(Clone, Debug)]
enum Op {
    /// Write and wait for an OKAY response.
    Write(u32, u32),
    /// Write, not waited for (a doorbell); its response is checked later.
    Post(u32, u32),
    /// Read until `value & mask == want` (every [`POLL_GAP`] cycles).
    Poll {
        addr: u32,
        mask: u32,
        want: u32,
        what: String,
    },
    /// Read once: `value & mask` must be `want`.
    Expect {
        addr: u32,
        mask: u32,
        want: u32,
        what: String,
    },
}

/// Cycles between the reads of a poll.
pub const POLL_GAP: u64 = 64;
/// Reads a poll makes before it is reported as hung.
pub const POLL_LIMIT: u32 = 20_000;

/// Records register writes of a `roce_fw` driver function; its status
/// reads see an idle, answered `mr` block (the script then polls the real
/// one).
struct Recorder {
    ops: Vec<Op>,
    /// `mr.status.SEQ` the recorded function should see.
    mr_seq: u32,
}

impl Regs for Recorder {
    fn read32(&mut self, offset: u32) -> u32 {
        if offset == mr::status::ADDR {
            mr::status::SEQ.val(self.mr_seq)
        } else {
            0
        }
    }
    fn write32(&mut self, offset: u32, value: u32) {
        if offset == mr::doorbell::ADDR && mr::doorbell::GO.get(value) == 1 {
            self.mr_seq = (self.mr_seq + 1) & mr::status::SEQ.max();
        }
        self.ops.push(Op::Write(offset, value));
    }
}

/// Host state of one QP's rings.
struct QpRings {
    sq: SendQueue,
    rq: RecvQueue,
    /// WQEs written since the last doorbell (rung once per cycle).
    sq_dirty: bool,
    rq_dirty: bool,
}

/// CQEs consumed before the host returns their slots (`db.cq_ci`); also
/// whenever a poll finds the CQ empty.
pub const CQ_CI_EVERY: u32 = 32;

/// The NIC and its host.
pub struct Device {
    d: Box<Dut>,
    /// Host memory, served on the NIC's DMA master.
    pub mem: AxiMem,
    axil: AxilMaster,
    cycle: u64,
    script: VecDeque<Op>,
    /// The op in progress: its AXI4-Lite tag, reads made, next read cycle.
    cur: Option<(Op, Option<u64>, u32, u64)>,
    /// Tags of posted writes not answered yet.
    posted: VecDeque<u64>,
    /// A blocking access ([`Device::read_reg`]): its tag and, once
    /// answered, (data, response).
    sync: Option<(u64, Option<(u32, u32)>)>,
    /// `mr.status.SEQ` after the commands scripted so far.
    mr_seq: u32,
    /// `mbox.status.SEQ` likewise.
    mbox_seq: u32,
    /// Host memory for rings: the next free physical address.
    ring_pa: u64,
    qps: HashMap<u32, QpRings>,
    cqs: HashMap<u32, CompletionQueue>,
    /// The consumer index last written to each CQ's `cq_ci`.
    cq_rung: HashMap<u32, u32>,
    errors: Vec<String>,
    // Frames.
    rx_q: VecDeque<(u64, Vec<u8>)>,
    rx_cur: Option<(Vec<u8>, usize)>,
    tx_cur: Vec<u8>,
    tx_first: u64,
    tx_out: VecDeque<(u64, Vec<u8>)>,
    /// `m_event`: (cycle, CQN).
    cq_events: Vec<(u64, u32)>,
}

/// Where rings live in host physical memory (below the run's regions).
const RING_BASE: u64 = 0x1_0000_0000;

impl Device {
    /// A NIC with the firmware loaded, out of reset, its tables cleared.
    pub fn open(seed: u64, mem: AxiMemTiming) -> Result<Device, String> {
        let (image, entry) = crate::fw::image()?;
        if *entry != 0 {
            return Err(format!("firmware entry {entry:#x}: PicoRV32 resets to 0"));
        }
        let words = crate::param(Dut::PARAMS, "FW_RAM_WORDS") as usize;
        if image.len() > 4 * words {
            return Err(format!(
                "firmware image of {} bytes exceeds the RAM",
                image.len()
            ));
        }
        let mut dev = Device {
            d: Box::new(Dut::new()),
            mem: AxiMem::new(8, seed, mem),
            axil: AxilMaster::new(seed ^ 0xA5, Timing::FULL_RATE),
            cycle: 0,
            script: VecDeque::new(),
            cur: None,
            posted: VecDeque::new(),
            sync: None,
            mr_seq: 0,
            mbox_seq: 0,
            ring_pa: RING_BASE,
            qps: HashMap::new(),
            cqs: HashMap::new(),
            cq_rung: HashMap::new(),
            errors: Vec::new(),
            rx_q: VecDeque::new(),
            rx_cur: None,
            tx_cur: Vec::new(),
            tx_first: 0,
            tx_out: VecDeque::new(),
            cq_events: Vec::new(),
        };
        let d = &mut dev.d;
        d.set_reset(true);
        for i in 0..words {
            let w = image
                .get(4 * i..4 * i + 4)
                .map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap()));
            d.set_fw_we(true);
            d.set_fw_waddr(i as u32);
            d.set_fw_wdata(w);
            d.eval();
            d.tick();
        }
        d.set_fw_we(false);
        for _ in 0..4 {
            d.eval();
            d.tick();
        }
        d.set_reset(false);
        // The tables clear themselves (MR table, timers, rings, states).
        for _ in 0..100_000 {
            dev.step();
            if !dev.d.get_busy() {
                return Ok(dev);
            }
        }
        Err("roce_nic stayed busy after reset".into())
    }

    /// The register script is done (set-up finished, doorbells answered).
    pub fn settled(&self) -> bool {
        self.script.is_empty() && self.cur.is_none() && self.posted.is_empty()
    }

    /// Errors seen: script failures, non-OKAY responses, firmware traps.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// Cycles stepped.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Arm CQ `cqn`: the NIC's `m_event` fires once after its next CQE
    /// (with `solicited`, its next solicited or error CQE).
    pub fn arm_cq(&mut self, cqn: u32, solicited: bool) {
        self.op(Op::Write(
            db::cq_arm::addr(cqn),
            db::cq_arm::ARM.val(1) | db::cq_arm::SOLICITED.val(solicited as u32),
        ));
    }

    /// The CQ events (`m_event`) so far: (cycle, CQN).
    pub fn cq_events(&self) -> &[(u64, u32)] {
        &self.cq_events
    }

    /// The Verilated NIC (for counters and traces).
    pub fn dut(&mut self) -> &mut Dut {
        &mut self.d
    }

    /// Station MAC and IPv4 address; the firmware then writes GID entries
    /// 0 (link-local) and 1 (IPv4-mapped) from them (`sync-gids`).
    pub fn set_station(&mut self, s: Station) {
        let mac = s.mac;
        self.op(Op::Write(
            cfg::mac_hi::ADDR,
            cfg::mac_hi::MAC.val(u16::from_be_bytes([mac[0], mac[1]]) as u32),
        ));
        self.op(Op::Write(
            cfg::mac_lo::ADDR,
            u32::from_be_bytes([mac[2], mac[3], mac[4], mac[5]]),
        ));
        self.op(Op::Write(cfg::ipv4::ADDR, u32::from_be_bytes(s.ip)));
        self.command(Command::SyncGids, "sync-gids");
    }

    /// A mailbox command: `cmd`, `doorbell.GO`, wait for the firmware to
    /// clear it, `status.RESULT` must be `ok`.
    fn command(&mut self, c: Command, what: &str) {
        self.op(Op::Write(mbox::cmd::ADDR, mbox::cmd::OP.val(c.value())));
        self.op(Op::Write(mbox::doorbell::ADDR, mbox::doorbell::GO.val(1)));
        self.op(Op::Poll {
            addr: mbox::doorbell::ADDR,
            mask: mbox::doorbell::GO.mask(),
            want: 0,
            what: format!("{what}: the firmware clearing doorbell.GO"),
        });
        self.mbox_seq = (self.mbox_seq + 1) & mbox::status::SEQ.max();
        self.op(Op::Expect {
            addr: mbox::status::ADDR,
            mask: mbox::status::RESULT.mask() | mbox::status::SEQ.mask(),
            want: mbox::status::RESULT.val(ResultCode::Ok.value())
                | mbox::status::SEQ.val(self.mbox_seq),
            what: format!("{what}: status (RESULT ok, SEQ moved on)"),
        });
    }

    /// Modify a QP through the mailbox (the firmware checks the IBTA
    /// state machine and writes the context).
    pub fn modify_qp(&mut self, req: &Request, what: &str) {
        let mut rec = Recorder {
            ops: Vec::new(),
            mr_seq: 0,
        };
        req.write(&mut rec);
        for o in rec.ops {
            self.op(o);
        }
        self.command(Command::ModifyQp, what);
    }

    /// Record one `roce_fw::mr` driver call and script it, then wait for
    /// the table's answer: `SEQ` moved on, not busy, no error.
    fn mr_call(
        &mut self,
        what: &str,
        f: impl FnOnce(&mut Recorder) -> Result<(), roce_fw::mr::MrError>,
    ) {
        let mut rec = Recorder {
            ops: Vec::new(),
            mr_seq: self.mr_seq,
        };
        f(&mut rec).expect("the recorder answers every command");
        self.mr_seq = rec.mr_seq;
        for o in rec.ops {
            self.op(o);
        }
        self.op(Op::Poll {
            addr: mr::status::ADDR,
            mask: mr::status::SEQ.mask() | mr::status::BUSY.mask(),
            want: mr::status::SEQ.val(self.mr_seq),
            what: format!("{what}: mr.status answering"),
        });
        self.op(Op::Expect {
            addr: mr::status::ADDR,
            mask: mr::status::ERROR.mask() | mr::status::DROPPED.mask(),
            want: 0,
            what: format!("{what}: mr.status.ERROR"),
        });
    }

    /// Register `region` (virtual addresses) under `key`, its pages at
    /// the physical addresses `pages` (one per page, from `region.base`'s
    /// page on), page-table entries from `region.pt_base`.
    pub fn reg_mr(&mut self, key: u32, region: &roce_wire::mr::Region, pages: &[u64]) {
        for (i, &pa) in pages.iter().enumerate() {
            let index = region.pt_base + i as u32;
            self.mr_call(&format!("MR {key:#x} page {i}"), |r| {
                roce_fw::mr::write_pt(r, index, pa)
            });
        }
        let reg = *region;
        self.mr_call(&format!("MR {key:#x}"), |r| {
            roce_fw::mr::register_mr(r, key, &reg)
        });
    }

    fn alloc_ring(&mut self, bytes: u64) -> u64 {
        let at = self.ring_pa;
        self.ring_pa += bytes.next_multiple_of(4096);
        at
    }

    /// A CQ of `2^log` CQEs in host memory.
    pub fn create_cq(&mut self, cqn: u32, log: u32) {
        let n = (roce_regs::queue::CQE_SIZE as u64) << log;
        let base = self.alloc_ring(n);
        let cq = CompletionQueue::new(base, log);
        cq.clear(&mut self.mem);
        self.cqs.insert(cqn, cq);
        self.op(Op::Write(hq::cq_base_lo::addr(cqn), base as u32));
        self.op(Op::Write(hq::cq_base_hi::addr(cqn), (base >> 32) as u32));
        self.op(Op::Write(
            hq::cq_cfg::addr(cqn),
            hq::cq_cfg::LOG_SIZE.val(log),
        ));
    }

    /// A QP's rings: `2^sq_log` send and `2^rq_log` receive WQEs,
    /// completing into `scq` and `rcq`. (Re)starts both rings.
    pub fn create_qp(&mut self, qpn: u32, sq_log: u32, rq_log: u32, scq: u32, rcq: u32) {
        let sq = self.alloc_ring((roce_regs::queue::SWQE_SIZE as u64) << sq_log);
        let rq = self.alloc_ring((roce_regs::queue::RWQE_SIZE as u64) << rq_log);
        self.qps.insert(
            qpn,
            QpRings {
                sq: SendQueue::new(sq, sq_log),
                rq: RecvQueue::new(rq, rq_log),
                sq_dirty: false,
                rq_dirty: false,
            },
        );
        self.op(Op::Write(hq::sq_base_lo::addr(qpn), sq as u32));
        self.op(Op::Write(hq::sq_base_hi::addr(qpn), (sq >> 32) as u32));
        self.op(Op::Write(
            hq::sq_cfg::addr(qpn),
            hq::sq_cfg::LOG_SIZE.val(sq_log) | hq::sq_cfg::CQN.val(scq),
        ));
        self.op(Op::Write(hq::rq_base_lo::addr(qpn), rq as u32));
        self.op(Op::Write(hq::rq_base_hi::addr(qpn), (rq >> 32) as u32));
        self.op(Op::Write(
            hq::rq_cfg::addr(qpn),
            hq::rq_cfg::LOG_SIZE.val(rq_log) | hq::rq_cfg::CQN.val(rcq),
        ));
    }

    /// Room in a QP's send ring.
    pub fn sq_room(&self, qpn: u32) -> bool {
        let r = &self.qps[&qpn].sq.ring;
        ring::has_room(r.pi, r.ci, r.log_size)
    }

    /// Write a send WQE into the ring; the doorbell rings at the next
    /// step (once for all the WQEs posted meanwhile). `Err` when the ring
    /// is full (nothing written).
    pub fn post_send(&mut self, qpn: u32, w: &SendWqe) -> Result<(), String> {
        let q = self
            .qps
            .get_mut(&qpn)
            .ok_or(format!("QP {qpn} has no rings"))?;
        q.sq.post(&mut self.mem, w)
            .map_err(|e| format!("QP {qpn} SQ: {e:?}"))?;
        q.sq_dirty = true;
        Ok(())
    }

    /// Write a receive WQE into the ring; the doorbell as for sends.
    pub fn post_recv(&mut self, qpn: u32, w: &RecvWqe) -> Result<(), String> {
        let q = self
            .qps
            .get_mut(&qpn)
            .ok_or(format!("QP {qpn} has no rings"))?;
        q.rq.post(&mut self.mem, w)
            .map_err(|e| format!("QP {qpn} RQ: {e:?}"))?;
        q.rq_dirty = true;
        Ok(())
    }

    /// Ring the doorbells of the rings written since the last ones.
    fn doorbells(&mut self) {
        let mut qs: Vec<u32> = self
            .qps
            .iter()
            .filter(|(_, q)| q.sq_dirty || q.rq_dirty)
            .map(|(&n, _)| n)
            .collect();
        qs.sort_unstable();
        for n in qs {
            let q = self.qps.get_mut(&n).unwrap();
            let (sq, rq) = (
                q.sq_dirty.then_some(q.sq.ring.pi),
                q.rq_dirty.then_some(q.rq.ring.pi),
            );
            q.sq_dirty = false;
            q.rq_dirty = false;
            if let Some(pi) = rq {
                self.op(Op::Post(db::rq_pi::addr(n), pi));
            }
            if let Some(pi) = sq {
                self.op(Op::Post(db::sq_pi::addr(n), pi));
            }
        }
    }

    /// The next CQE of `cqn`, if the NIC has written one; the ring it
    /// completes advances. Slots go back to the NIC (`cq_ci`) every
    /// [`CQ_CI_EVERY`] CQEs and when the CQ is found empty.
    pub fn poll_cq(&mut self, cqn: u32) -> Option<Cqe> {
        let cq = self.cqs.get_mut(&cqn)?;
        let Some(c) = cq.poll(&self.mem) else {
            let ci = cq.ring.ci;
            if self.cq_rung.get(&cqn) != Some(&ci) {
                self.cq_rung.insert(cqn, ci);
                self.op(Op::Post(db::cq_ci::addr(cqn), ci));
            }
            return None;
        };
        let ci = cq.ring.ci;
        let rung = self.cq_rung.get(&cqn).copied().unwrap_or(0);
        if ci.wrapping_sub(rung) & 0xFFFF >= CQ_CI_EVERY {
            self.cq_rung.insert(cqn, ci);
            self.op(Op::Post(db::cq_ci::addr(cqn), ci));
        }
        if let Some(q) = self.qps.get_mut(&c.qpn) {
            let recv = WcOpcode::from_value(c.opcode as u32)
                .is_some_and(|o| matches!(o, WcOpcode::Recv | WcOpcode::RecvRdmaWithImm));
            let r = if recv { &mut q.rq.ring } else { &mut q.sq.ring };
            r.ci = ring::next(r.ci);
        }
        Some(c)
    }

    /// One register access run to its answer (the clock runs meanwhile;
    /// the script must be settled): (data, response).
    fn access(&mut self, write: Option<u32>, addr: u32) -> (u32, u32) {
        assert!(self.settled(), "a blocking access while the script runs");
        let tag = match write {
            Some(v) => self.axil.write(addr, v, 0xF),
            None => self.axil.read(addr),
        };
        self.sync = Some((tag, None));
        for _ in 0..100_000 {
            self.step();
            if let Some((_, Some(r))) = self.sync {
                self.sync = None;
                return r;
            }
        }
        panic!("no answer to the register access at {addr:#x}");
    }

    /// Read a register (blocking); a response other than OKAY panics.
    pub fn read_reg(&mut self, addr: u32) -> u32 {
        let (d, r) = self.access(None, addr);
        assert_eq!(r, OKAY, "read {addr:#x}");
        d
    }

    /// Write a register (blocking); a response other than OKAY panics.
    pub fn write_reg(&mut self, addr: u32, v: u32) {
        let (_, r) = self.access(Some(v), addr);
        assert_eq!(r, OKAY, "write {addr:#x}");
    }

    /// Run one modify-QP command to its end (blocking) and return the
    /// firmware's result, whatever it is.
    pub fn command_result(&mut self, req: &Request) -> ResultCode {
        let mut rec = Recorder {
            ops: Vec::new(),
            mr_seq: 0,
        };
        req.write(&mut rec);
        for o in rec.ops {
            if let Op::Write(a, v) = o {
                self.write_reg(a, v);
            }
        }
        self.write_reg(
            mbox::cmd::ADDR,
            mbox::cmd::OP.val(Command::ModifyQp.value()),
        );
        self.write_reg(mbox::doorbell::ADDR, mbox::doorbell::GO.val(1));
        for _ in 0..POLL_LIMIT {
            if mbox::doorbell::GO.get(self.read_reg(mbox::doorbell::ADDR)) == 0 {
                break;
            }
            for _ in 0..POLL_GAP {
                self.step();
            }
        }
        self.mbox_seq = (self.mbox_seq + 1) & mbox::status::SEQ.max();
        let st = self.read_reg(mbox::status::ADDR);
        assert_eq!(
            mbox::status::SEQ.get(st),
            self.mbox_seq,
            "the firmware answered"
        );
        ResultCode::from_value(mbox::status::RESULT.get(st)).expect("a known result code")
    }

    fn op(&mut self, o: Op) {
        self.script.push_back(o);
    }

    /// One clock cycle: the register script, host memory, frames.
    pub fn step(&mut self) {
        self.doorbells();
        self.run_script();
        let d = &mut *self.d;
        self.mem.drive_write(d);
        self.mem.drive_read(d);
        self.axil.drive(d);
        // Frames in: one beat per cycle.
        if self.rx_cur.is_none() && self.rx_q.front().is_some_and(|f| f.0 <= self.cycle) {
            self.rx_cur = Some((self.rx_q.pop_front().unwrap().1, 0));
        }
        let beat = self.rx_cur.as_ref().map(|(f, i)| {
            let c = &f[i * 8..(i * 8 + 8).min(f.len())];
            (
                crate::axis::le_u64(c),
                (1u32 << c.len()) - 1,
                (i + 1) * 8 >= f.len(),
            )
        });
        d.set_s_axis_tvalid(beat.is_some());
        if let Some((data, keep, last)) = beat {
            d.set_s_axis_tdata(data);
            d.set_s_axis_tkeep(keep as _);
            d.set_s_axis_tlast(last);
            d.set_s_axis_tuser(false);
        }
        d.set_m_axis_tready(true);
        d.eval();
        self.mem.sample_write(d);
        self.mem.sample_read(d);
        self.axil.sample(d);
        if beat.is_some() && d.get_s_axis_tready() {
            let (f, i) = self.rx_cur.as_mut().unwrap();
            *i += 1;
            if *i * 8 >= f.len() {
                self.rx_cur = None;
            }
        }
        if d.get_m_event_valid() {
            self.cq_events.push((self.cycle, d.get_m_event_cqn()));
        }
        if d.get_m_axis_tvalid() {
            if self.tx_cur.is_empty() {
                self.tx_first = self.cycle;
            }
            let keep = d.get_m_axis_tkeep();
            let data = d.get_m_axis_tdata().to_le_bytes();
            self.tx_cur
                .extend_from_slice(&data[..(keep.trailing_ones() as usize).min(8)]);
            if d.get_m_axis_tlast() {
                self.tx_out
                    .push_back((self.tx_first, std::mem::take(&mut self.tx_cur)));
            }
        }
        for (v, q, who) in [
            (d.get_m_req_err_valid(), d.get_m_req_err_qpn(), "requester"),
            (
                d.get_m_rsp_err_valid(),
                d.get_m_rsp_err_qpn(),
                "responder checks",
            ),
            (
                d.get_m_exec_err_valid(),
                d.get_m_exec_err_qpn(),
                "responder executor",
            ),
            (
                d.get_m_qp_err_valid(),
                d.get_m_qp_err_qpn(),
                "host_if (bad doorbell or WQE)",
            ),
        ] {
            if v {
                self.errors.push(format!(
                    "cycle {}: QP {q} to Error by the {who}",
                    self.cycle
                ));
            }
        }
        if d.get_fw_trap() || d.get_fw_bus_error() {
            let e = format!(
                "firmware trap {} / bus error {}",
                d.get_fw_trap(),
                d.get_fw_bus_error()
            );
            if !self.errors.contains(&e) {
                self.errors.push(e);
            }
        }
        d.tick();
        self.mem.tick();
        self.cycle += 1;
        self.take_done();
    }

    /// Responses of the AXI4-Lite transactions that completed.
    fn take_done(&mut self) {
        while let Some(done) = self.axil.done.pop_front() {
            let (tag, resp, data) = match done {
                Done::Write { tag, resp } => (tag, resp, 0),
                Done::Read { tag, data, resp } => (tag, resp, data),
            };
            if let Some((t, r)) = self.sync.as_mut() {
                if *t == tag {
                    *r = Some((data, resp));
                    continue;
                }
            }
            if let Some(i) = self.posted.iter().position(|&t| t == tag) {
                self.posted.remove(i);
                if resp != OKAY {
                    self.errors
                        .push(format!("a doorbell write answered {resp}"));
                }
                continue;
            }
            let Some((op, Some(t), n, _)) = self.cur.as_mut() else {
                self.errors
                    .push(format!("a response to no request (tag {tag})"));
                continue;
            };
            assert_eq!(*t, tag, "responses in order");
            if resp != OKAY {
                self.errors.push(format!("{op:?} answered {resp}"));
                self.cur = None;
                continue;
            }
            match op.clone() {
                Op::Write(..) | Op::Post(..) => self.cur = None,
                Op::Poll {
                    mask, want, what, ..
                } => {
                    if data & mask == want {
                        self.cur = None;
                    } else if *n >= POLL_LIMIT {
                        self.errors
                            .push(format!("{what}: still {data:#x} after {n} reads"));
                        self.cur = None;
                    } else {
                        let c = self.cycle + POLL_GAP;
                        let cur = self.cur.as_mut().unwrap();
                        cur.1 = None;
                        cur.3 = c;
                    }
                }
                Op::Expect {
                    mask, want, what, ..
                } => {
                    if data & mask != want {
                        self.errors.push(format!(
                            "{what}: {:#x}, expected {want:#x} (register {data:#x})",
                            data & mask
                        ));
                    }
                    self.cur = None;
                }
            }
        }
    }

    fn run_script(&mut self) {
        if self.cur.is_none() {
            if let Some(o) = self.script.pop_front() {
                self.cur = Some((o, None, 0, self.cycle));
            }
        }
        let Some((op, tag, n, at)) = self.cur.as_mut() else {
            return;
        };
        if tag.is_some() || *at > self.cycle {
            return;
        }
        match op {
            Op::Write(a, v) => *tag = Some(self.axil.write(*a, *v, 0xF)),
            Op::Post(a, v) => {
                let t = self.axil.write(*a, *v, 0xF);
                self.posted.push_back(t);
                self.cur = None;
            }
            Op::Poll { addr, .. } | Op::Expect { addr, .. } => {
                *n += 1;
                *tag = Some(self.axil.read(*addr));
            }
        }
    }

    /// A frame from the link, entering from cycle `at`.
    pub fn push_rx(&mut self, at: u64, frame: Vec<u8>) {
        self.rx_q.push_back((at, frame));
    }

    /// The next frame sent: cycle of its first beat, bytes.
    pub fn pop_tx(&mut self) -> Option<(u64, Vec<u8>)> {
        self.tx_out.pop_front()
    }
}

// ------------------------------------------------------------ for `run`

/// Send and receive CQs of [`NicDev`]: one each for all QPs.
const SEND_CQ: u32 = 0;
const RECV_CQ: u32 = 1;
/// Their size, and the rings' (log2 entries).
const CQ_LOG: u32 = 12;
const SQ_LOG: u32 = 6;
const RQ_LOG: u32 = 7;

/// A [`Device`] as one of `roce-sim run`'s NICs.
pub struct NicDev {
    name: String,
    dev: Device,
    station: Station,
    lay: Option<Layout>,
    /// Send work requests waiting for ring room, per QP.
    backlog: HashMap<u32, VecDeque<SendWr>>,
    outstanding: HashMap<u32, usize>,
    rx_log: Option<Vec<(u64, Vec<u8>)>>,
    /// The set-up script (station, CQs, MRs, QPs) has run.
    up: bool,
}

impl NicDev {
    pub fn new(
        name: String,
        seed: u64,
        station: Station,
        mem: AxiMemTiming,
    ) -> Result<NicDev, String> {
        let mut dev = Device::open(seed, mem)?;
        dev.set_station(station);
        dev.create_cq(SEND_CQ, CQ_LOG);
        dev.create_cq(RECV_CQ, CQ_LOG);
        Ok(NicDev {
            name,
            dev,
            station,
            lay: None,
            backlog: HashMap::new(),
            outstanding: HashMap::new(),
            rx_log: None,
            up: false,
        })
    }

    fn lay(&self) -> &Layout {
        self.lay.as_ref().expect("reg_mrs before use")
    }

    /// The send WQE of `w`: an inline one copies its payload now.
    fn wqe(&self, w: &SendWr) -> SendWqe {
        let (opcode, imm) = match w.verb {
            Verb::Send => (WrOpcode::Send, 0),
            Verb::SendImm => (WrOpcode::SendWithImm, w.imm),
            Verb::Write => (WrOpcode::RdmaWrite, 0),
            Verb::WriteImm => (WrOpcode::RdmaWriteWithImm, w.imm),
            Verb::Read => (WrOpcode::RdmaRead, 0),
            Verb::CmpSwap => (WrOpcode::AtomicCmpAndSwp, 0),
            Verb::FetchAdd => (WrOpcode::AtomicFetchAndAdd, 0),
        };
        let mut sge = [Sge::default(); MAX_SGE as usize];
        sge[0] = Sge {
            addr: w.lva,
            length: w.len,
            lkey: w.verb.local_region().key(),
        };
        let (compare_add, swap) = match w.verb {
            Verb::CmpSwap => (w.compare, w.swap),
            Verb::FetchAdd => (w.swap, 0),
            _ => (0, 0),
        };
        SendWqe {
            opcode: opcode.value() as u8,
            flags: SendFlag::Signaled.value() as u8,
            imm_inv: imm,
            wr_id: w.wr_id,
            remote_addr: w.rva,
            rkey: Region::Rem.key(),
            ud_qpn: 0,
            compare_add,
            swap,
            ud_qkey: 0,
            payload: if w.inline {
                let mut data = [0u8; MAX_INLINE as usize];
                data[..w.len as usize].copy_from_slice(&self.read(w.lva, w.len as usize));
                Payload::Inline {
                    len: w.len as u8,
                    data,
                }
            } else {
                Payload::Sgl { num: 1, sge }
            },
        }
    }
}

impl SimNic for NicDev {
    fn name(&self) -> &str {
        &self.name
    }

    fn engine(&self) -> &'static str {
        "nic"
    }

    fn create_qp(&mut self, s: &QpSetup, peer: Station) {
        use roce_regs::{AccessFlag, QpType};
        self.dev.create_qp(s.qpn, SQ_LOG, RQ_LOG, SEND_CQ, RECV_CQ);
        let up = crate::fw::BringUp {
            qpn: s.qpn,
            qp_type: QpType::Rc,
            pkey_index: 0,
            access_flags: AccessFlag::RemoteWrite.value()
                | AccessFlag::RemoteRead.value()
                | AccessFlag::RemoteAtomic.value(),
            qkey: 0,
            sgid_index: 1,
            dmac: peer.mac,
            dgid: crate::nic::ipv4_mapped(peer.ip),
            path_mtu: s.pmtu as u32,
            dest_qpn: s.dest_qpn,
            rq_psn: s.rq_psn,
            max_dest_rd_atomic: 16,
            min_rnr_timer: s.min_rnr_timer as u32,
            sq_psn: s.sq_psn,
            timeout: s.timeout as u32,
            retry_cnt: s.retry_cnt as u32,
            rnr_retry: s.rnr_retry as u32,
            max_rd_atomic: s.max_rd_atomic as u32,
            pd: PD as u32,
        };
        for (what, req) in up.requests() {
            self.dev.modify_qp(&req, &format!("QP {} to {what}", s.qpn));
        }
        self.backlog.insert(s.qpn, VecDeque::new());
        self.outstanding.insert(s.qpn, 0);
    }

    fn reg_mrs(&mut self, lay: &Layout) {
        let page = lay.page();
        let mut pt = 0u32;
        for r in REGIONS {
            let n = lay.pages[r as usize];
            let va0 = r.va_base() - r.va_base() % page;
            let pages: Vec<u64> = (0..n)
                .map(|p| lay.pa(r, va0 + p * page) - (va0 + p * page) % page)
                .collect();
            let region = roce_wire::mr::Region {
                pd: PD,
                access: Access::ALL,
                base: r.va_base(),
                length: lay.used[r as usize].max(1),
                page_shift: lay.page_shift as u8,
                pt_base: pt,
            };
            self.dev.reg_mr(r.key(), &region, &pages);
            pt += n as u32;
        }
        self.lay = Some(lay.clone());
    }

    fn write(&mut self, va: u64, bytes: &[u8]) {
        let lay = self.lay().clone();
        let mut at = 0;
        while at < bytes.len() {
            let v = va + at as u64;
            let n = ((lay.page() - v % lay.page()) as usize).min(bytes.len() - at);
            self.dev.mem.poke(lay.pa_of(v), &bytes[at..at + n]);
            at += n;
        }
    }

    fn read(&self, va: u64, n: usize) -> Vec<u8> {
        let lay = self.lay();
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let v = va + out.len() as u64;
            let k = ((lay.page() - v % lay.page()) as usize).min(n - out.len());
            out.extend(self.dev.mem.peek(lay.pa_of(v), k));
        }
        out
    }

    fn post_send(&mut self, wr: SendWr) {
        *self.outstanding.get_mut(&wr.qpn).expect("created") += 1;
        self.backlog
            .get_mut(&wr.qpn)
            .expect("created")
            .push_back(wr);
    }

    fn post_recv(&mut self, qpn: u32, wr: RecvWr) {
        let mut sge = [Sge::default(); MAX_SGE as usize];
        sge[0] = Sge {
            addr: wr.va,
            length: wr.len,
            lkey: Region::Rcv.key(),
        };
        let w = RecvWqe {
            wr_id: wr.wr_id,
            num_sge: 1,
            sge,
        };
        if let Err(e) = self.dev.post_recv(qpn, &w) {
            self.dev.errors.push(format!("post_recv: {e}"));
        }
    }

    fn sends_outstanding(&self, qpn: u32) -> usize {
        self.outstanding.get(&qpn).copied().unwrap_or(0)
    }

    fn poll_cq(&mut self) -> Option<RunCqe> {
        for cqn in [SEND_CQ, RECV_CQ] {
            if let Some(c) = self.dev.poll_cq(cqn) {
                let opcode = WcOpcode::from_value(c.opcode as u32).unwrap_or(WcOpcode::Send);
                let recv = matches!(opcode, WcOpcode::Recv | WcOpcode::RecvRdmaWithImm);
                if !recv {
                    if let Some(n) = self.outstanding.get_mut(&c.qpn) {
                        *n = n.saturating_sub(1);
                    }
                }
                let with_imm = c.flags & roce_regs::queue::WcFlag::WithImm.value() as u8 != 0;
                return Some(RunCqe {
                    qpn: c.qpn,
                    wr_id: c.wr_id,
                    ok: c.status == WcStatus::Success.value() as u8,
                    opcode: transport_opcode(opcode),
                    byte_len: c.byte_len,
                    imm: (recv && with_imm).then_some(c.imm_inv),
                    status: c.status as u32,
                });
            }
        }
        None
    }

    fn ready(&self) -> bool {
        self.up
    }

    fn idle(&self) -> bool {
        self.rx_idle() && self.dev.mem.quiet() && self.dev.tx_cur.is_empty()
    }

    fn step(&mut self) {
        // Backlogged send WQEs into the rings once set up.
        if self.up {
            let qs: Vec<u32> = self.backlog.keys().copied().collect();
            for q in qs {
                while self.dev.sq_room(q) {
                    let Some(w) = self.backlog.get_mut(&q).unwrap().pop_front() else {
                        break;
                    };
                    let wqe = self.wqe(&w);
                    self.dev.post_send(q, &wqe).expect("room checked");
                }
            }
        }
        let before = self.dev.rx_cur.is_some();
        let log = self.rx_log.is_some();
        let cur = if log { self.dev.rx_cur.clone() } else { None };
        self.dev.step();
        if !self.up && self.dev.settled() && self.lay.is_some() {
            self.up = true;
        }
        if log && before && self.dev.rx_cur.is_none() {
            if let Some((f, _)) = cur {
                self.rx_log.as_mut().unwrap().push((self.dev.cycle, f));
            }
        }
    }

    fn cycle(&self) -> u64 {
        self.dev.cycle
    }

    fn push_rx(&mut self, at: u64, frame: Vec<u8>) {
        self.dev.push_rx(at, frame);
    }

    fn pop_tx(&mut self) -> Option<(u64, Vec<u8>)> {
        self.dev.pop_tx()
    }

    fn counters(&mut self) -> Vec<(String, u64)> {
        let d = &mut *self.dev.d;
        d.eval();
        let mut c = crate::nic::transport_counters!(d);
        c.push(("cq_overrun".into(), d.get_cnt_cq_overrun() as u64));
        c
    }

    fn errors(&self) -> Vec<String> {
        self.dev.errors.clone()
    }

    fn why(&mut self) -> String {
        format!(
            "{} (nic): script {} ops{}, backlog {:?}, outstanding {:?}, cycle {}",
            self.name,
            self.dev.script.len(),
            self.dev
                .cur
                .as_ref()
                .map_or(String::new(), |c| format!(" (at {:?})", c.0)),
            self.backlog
                .iter()
                .filter(|(_, b)| !b.is_empty())
                .map(|(q, b)| (*q, b.len()))
                .collect::<Vec<_>>(),
            self.outstanding
                .iter()
                .filter(|(_, &n)| n > 0)
                .collect::<Vec<_>>(),
            self.dev.cycle,
        )
    }

    fn stray_writes(&self, lay: &Layout, allowed: &dyn Fn(u64) -> bool) -> Option<Vec<u64>> {
        // Physical → virtual for the run's regions; rings are the NIC's own.
        let mut by_pa: HashMap<u64, u64> = HashMap::new();
        let page = lay.page();
        for r in REGIONS {
            let va0 = r.va_base() - r.va_base() % page;
            for p in 0..lay.pages[r as usize] {
                let va = va0 + p * page;
                by_pa.insert(lay.pa(r, va) / page, va);
            }
        }
        let rings = RING_BASE..self.dev.ring_pa;
        Some(
            self.dev
                .mem
                .written()
                .filter(|&(pa, _)| !rings.contains(&pa))
                .filter_map(|(pa, _)| match by_pa.get(&(pa / page)) {
                    Some(va) => {
                        let v = va + pa % page;
                        (!allowed(v)).then_some(v)
                    }
                    None => Some(pa),
                })
                .collect(),
        )
    }

    fn trace_to(&mut self, _path: &std::path::Path) -> Result<(), String> {
        Err("--trace is not built for the whole-NIC model yet".into())
    }

    fn record_rx(&mut self) {
        self.rx_log = Some(Vec::new());
    }

    fn rx_log(&self) -> &[(u64, Vec<u8>)] {
        self.rx_log.as_deref().unwrap_or(&[])
    }
}

/// The transport model's name for a CQE opcode.
fn transport_opcode(o: WcOpcode) -> roce_transport::WcOpcode {
    use roce_transport::WcOpcode as T;
    match o {
        WcOpcode::Send => T::Send,
        WcOpcode::RdmaWrite => T::RdmaWrite,
        WcOpcode::RdmaRead => T::RdmaRead,
        WcOpcode::CompSwap => T::CompSwap,
        WcOpcode::FetchAdd => T::FetchAdd,
        WcOpcode::Recv => T::Recv,
        WcOpcode::RecvRdmaWithImm => T::RecvRdmaWithImm,
    }
}

impl NicDev {
    fn rx_idle(&self) -> bool {
        self.dev.rx_q.is_empty() && self.dev.rx_cur.is_none()
    }

    /// The station this NIC answers as.
    pub fn station(&self) -> Station {
        self.station
    }
}
