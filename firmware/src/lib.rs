//! roce-fw: the control firmware of roce-hdl, `no_std`, for the RISC-V
//! softcore (`riscv32imc-unknown-none-elf`) and testable on the host.
//!
//! Everything is generic over [`Regs`] (32-bit reads and writes at CSR
//! window offsets from `roce_regs`); [`Mmio`] is the softcore's
//! implementation and the only `unsafe` code. The main loop is
//! [`Firmware::poll`]: it serves the command mailbox (`roce_regs::mbox`):
//!
//! 1. the host writes the command registers, then `doorbell.GO = 1`;
//! 2. the firmware runs the command: [`qp::modify`] (checks the IBTA state
//!    machine and attribute ranges, then programs the QP context) or
//!    [`config::sync_gids`]; a rejected command changes nothing;
//! 3. it writes `status` (`RESULT`, `SEQ` + 1), then `doorbell.GO = 0`.
//!
//! Every command ends in a result code: unknown commands, QPNs, states and
//! mask bits included, so no input makes the loop hang.
#![no_std]
#![deny(unsafe_code)]

#[cfg(test)]
extern crate std;

pub mod config;
pub mod counters;
pub mod mr;
pub mod qp;
pub mod regs;

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;

pub use regs::{Mmio, Regs};
use roce_regs::{mbox, Command, ResultCode};

/// The firmware's state between polls: the hardware limits read at boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Firmware {
    /// Limits of the hardware.
    pub limits: qp::Limits,
}

impl Firmware {
    /// Start: read the hardware limits.
    pub fn boot<R: Regs>(r: &mut R) -> Firmware {
        Firmware {
            limits: qp::Limits::read(r),
        }
    }

    /// Run one command if `doorbell.GO` is set: returns its result, or
    /// `None` when no command was posted.
    pub fn poll<R: Regs>(&self, r: &mut R) -> Option<ResultCode> {
        if mbox::doorbell::GO.get(r.read32(mbox::doorbell::ADDR)) == 0 {
            return None;
        }
        let result = match Command::from_value(r.read32(mbox::cmd::ADDR)) {
            Some(Command::ModifyQp) => qp::modify(r, &self.limits).err(),
            Some(Command::SyncGids) => config::sync_gids(r).err(),
            None => Some(ResultCode::UnknownCommand),
        }
        .unwrap_or(ResultCode::Ok);
        let seq = mbox::status::SEQ
            .get(r.read32(mbox::status::ADDR))
            .wrapping_add(1);
        r.write32(
            mbox::status::ADDR,
            mbox::status::RESULT.val(result.value()) | mbox::status::SEQ.val(seq),
        );
        r.write32(mbox::doorbell::ADDR, 0);
        Some(result)
    }
}
