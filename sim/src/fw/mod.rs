//! Firmware co-simulation: the real roce-fw ELF running on a softcore model
//! whose CSR window is the Verilated CSR block (`CsrW256`), with a host
//! posting modify-QP commands through the mailbox on the block's AXI4-Lite
//! port.
//!
//! - [`elf`]: build the firmware ELF (`target/fw-elf`) and load its
//!   `PT_LOAD` segments into a RAM image.
//! - [`iss`]: the `rvsim` RV32IMC instruction-set simulator with the CSR
//!   window forwarded as AXI4-Lite transactions.
//! - [`picorv32`]: PicoRV32 (RTL) with RAM and the CSR block in one
//!   Verilator model (`sim/verilog/fw_soc.v`).
//! - [`Softcore`]: what a host needs of either softcore model; [`boot`] and
//!   [`post`] play the host's side of the mailbox and measure each command.

pub mod demo;
pub mod elf;
pub mod iss;
pub mod picorv32;

use roce_fw::qp::Request;
use roce_fw::Regs;
use roce_regs::{mbox, Command, ResultCode};
use std::sync::OnceLock;

/// One CSR-window access the firmware completed (window offset; `Some`
/// value for a write).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CsrAccess {
    pub offset: u32,
    pub write: Option<u32>,
    /// [`Softcore::cycles`] when it completed.
    pub cycle: u64,
}

/// A softcore running roce-fw over the CSR block, plus the host's port.
pub trait Softcore {
    /// Advance the softcore by one step (ISS: one instruction; RTL: one
    /// clock); the CSR access it completed in that step, if any.
    fn step(&mut self) -> Option<CsrAccess>;
    /// CSR accesses the firmware completed while the host's transactions
    /// ran (RTL: the core runs on during them), not yet handed out by
    /// `step`; taken without advancing.
    fn drain(&mut self) -> Vec<CsrAccess> {
        Vec::new()
    }
    /// Host read on the CSR block's AXI4-Lite port: (data, response).
    fn host_read(&mut self, offset: u32) -> (u32, u32);
    /// Host write (all byte strobes): the response.
    fn host_write(&mut self, offset: u32, value: u32) -> u32;
    /// QP `q`'s context on the datapath read port (packed, as
    /// `hw/src/csr/mod.rs` documents).
    fn qp_ctx(&mut self, q: u32) -> Vec<u32>;
    /// Softcore clock cycles so far (ISS: instructions plus the clock
    /// cycles of its CSR transactions).
    fn cycles(&self) -> u64;
    /// Instructions retired so far, where the model counts them.
    fn instret(&self) -> Option<u64>;
    /// Short name for logs.
    fn name(&self) -> &'static str;
}

/// The host's view of the mailbox as a [`Regs`] (every access is an
/// AXI4-Lite transaction; a non-OKAY response is a test failure).
pub struct Host<'a, S: Softcore + ?Sized>(pub &'a mut S);

impl<S: Softcore + ?Sized> Regs for Host<'_, S> {
    fn read32(&mut self, offset: u32) -> u32 {
        let (d, resp) = self.0.host_read(offset);
        assert_eq!(resp, crate::axil::OKAY, "host read {offset:#x}");
        d
    }
    fn write32(&mut self, offset: u32, value: u32) {
        let resp = self.0.host_write(offset, value);
        assert_eq!(resp, crate::axil::OKAY, "host write {offset:#x}");
    }
}

/// The firmware image (built once per process): RAM bytes and entry.
/// Cycles from `qp_rd_addr` to `qp_rd_data` in the CSR block build the
/// models use (the catalogue's `QP_READ_LATENCY`).
pub fn qp_read_latency() -> usize {
    crate::models::CsrW256::PARAMS
        .iter()
        .find(|(k, _)| *k == "QP_READ_LATENCY")
        .expect("the csr build names its datapath read latency")
        .1 as usize
}

pub fn image() -> Result<&'static (Vec<u8>, u32), String> {
    static IMAGE: OnceLock<Result<(Vec<u8>, u32), String>> = OnceLock::new();
    IMAGE
        .get_or_init(elf::build_image)
        .as_ref()
        .map_err(Clone::clone)
}

/// Steps allowed for boot and for one command before the host gives up.
pub const STEP_LIMIT: u64 = 200_000;

/// Run the softcore until the firmware first reads `mbox.doorbell` (it has
/// booted and entered its poll loop); the steps that took.
pub fn boot<S: Softcore + ?Sized>(s: &mut S) -> Result<u64, String> {
    let start = s.cycles();
    for _ in 0..STEP_LIMIT {
        if let Some(a) = s.step() {
            if a.offset == mbox::doorbell::ADDR && a.write.is_none() {
                return Ok(s.cycles() - start);
            }
        }
    }
    Err(format!(
        "{}: the firmware did not reach its poll loop",
        s.name()
    ))
}

/// What one posted command did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posted {
    pub result: ResultCode,
    /// Softcore cycles from the host's doorbell write (its B response) to
    /// the firmware's write clearing `doorbell.GO`.
    pub cycles: u64,
    /// Instructions over the same span, where the model counts them.
    pub instrs: Option<u64>,
}

/// How often (in softcore steps) the host polls `doorbell.GO`.
pub const POLL_EVERY: u64 = 256;

/// Post `req` as a host does: write the command registers, `cmd`, then
/// `doorbell.GO`; run the softcore, polling the doorbell every
/// [`POLL_EVERY`] steps, until `GO` clears; check `status.SEQ` advanced by
/// one and return `status.RESULT` with the cycles the firmware took.
pub fn post<S: Softcore + ?Sized>(s: &mut S, req: &Request) -> Result<Posted, String> {
    req.write(&mut Host(s));
    let mut h = Host(s);
    h.write32(
        mbox::cmd::ADDR,
        mbox::cmd::OP.val(Command::ModifyQp.value()),
    );
    let seq = mbox::status::SEQ.get(h.read32(mbox::status::ADDR));
    h.write32(mbox::doorbell::ADDR, mbox::doorbell::GO.val(1));
    let (c0, i0) = (s.cycles(), s.instret());
    let mut done: Option<(u64, Option<u64>)> = None;
    let mut see = |s: &mut S, a: CsrAccess| {
        let clears = a.offset == mbox::doorbell::ADDR
            && a.write.is_some_and(|v| mbox::doorbell::GO.get(v) == 0);
        if clears && done.is_none() {
            done = Some((a.cycle - c0, s.instret().zip(i0).map(|(i, i0)| i - i0)));
        }
    };
    let mut steps = 0u64;
    loop {
        if let Some(a) = s.step() {
            see(s, a);
        }
        steps += 1;
        if steps % POLL_EVERY == 0 {
            let go = mbox::doorbell::GO.get(Host(s).read32(mbox::doorbell::ADDR));
            if go == 0 {
                break;
            }
        }
        if steps > STEP_LIMIT {
            return Err(format!(
                "{}: doorbell.GO still set after {STEP_LIMIT} steps",
                s.name()
            ));
        }
    }
    for a in s.drain() {
        see(s, a);
    }
    let (cycles, instrs) = done.ok_or("GO cleared, but not by the firmware")?;
    let status = Host(s).read32(mbox::status::ADDR);
    let got = mbox::status::SEQ.get(status);
    if got != (seq + 1) & mbox::status::SEQ.max() {
        return Err(format!("status.SEQ {got}, expected {}", seq + 1));
    }
    let code = mbox::status::RESULT.get(status);
    let result =
        ResultCode::from_value(code).ok_or_else(|| format!("unknown result code {code}"))?;
    Ok(Posted {
        result,
        cycles,
        instrs,
    })
}

/// The attributes of a Reset → Init → RTR → RTS bring-up of one QP
/// (Linux `ib_modify_qp` names; values as the mailbox takes them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BringUp {
    pub qpn: u32,
    pub qp_type: roce_regs::QpType,
    pub pkey_index: u32,
    pub access_flags: u32,
    pub qkey: u32,
    pub sgid_index: u32,
    pub dmac: [u8; 6],
    pub dgid: [u8; 16],
    pub path_mtu: u32,
    pub dest_qpn: u32,
    pub rq_psn: u32,
    pub max_dest_rd_atomic: u32,
    pub min_rnr_timer: u32,
    pub sq_psn: u32,
    pub timeout: u32,
    pub retry_cnt: u32,
    pub rnr_retry: u32,
    pub max_rd_atomic: u32,
    pub pd: u32,
}

impl BringUp {
    /// The three modify-QP requests, named by their target state: `STATE`
    /// plus exactly the attributes each transition requires for the QP
    /// type (`roce_fw::qp::rule`, the firmware's IBTA table).
    pub fn requests(&self) -> [(&'static str, Request); 3] {
        use roce_regs::{AttrMask as A, QpState};
        let t = self.qp_type;
        let need = |from: QpState, to: QpState| {
            A::State.value()
                | roce_fw::qp::rule(from, to, t)
                    .expect("Reset to Init to RTR to RTS is legal for every QP type")
                    .required
        };
        let init = Request {
            qpn: self.qpn,
            mask: need(QpState::Reset, QpState::Init),
            qp_state: QpState::Init.value(),
            qp_type: t.value(),
            pkey_index: self.pkey_index,
            access_flags: self.access_flags,
            qkey: self.qkey,
            pd: self.pd,
            ..Request::default()
        };
        let dgid: [u32; 4] = std::array::from_fn(|i| {
            u32::from_be_bytes(self.dgid[4 * i..4 * i + 4].try_into().unwrap())
        });
        let rtr = Request {
            qpn: self.qpn,
            mask: need(QpState::Init, QpState::Rtr),
            qp_state: QpState::Rtr.value(),
            sgid_index: self.sgid_index,
            dmac_hi: u32::from(u16::from_be_bytes([self.dmac[0], self.dmac[1]])),
            dmac_lo: u32::from_be_bytes([self.dmac[2], self.dmac[3], self.dmac[4], self.dmac[5]]),
            dgid,
            path_mtu: self.path_mtu,
            dest_qpn: self.dest_qpn,
            rq_psn: self.rq_psn,
            max_dest_rd_atomic: self.max_dest_rd_atomic,
            min_rnr_timer: self.min_rnr_timer,
            ..Request::default()
        };
        let rts = Request {
            qpn: self.qpn,
            mask: need(QpState::Rtr, QpState::Rts),
            qp_state: QpState::Rts.value(),
            timeout: self.timeout,
            retry_cnt: self.retry_cnt,
            rnr_retry: self.rnr_retry,
            sq_psn: self.sq_psn,
            max_rd_atomic: self.max_rd_atomic,
            ..Request::default()
        };
        [("init", init), ("rtr", rtr), ("rts", rts)]
    }
}
