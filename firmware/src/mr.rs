//! Memory regions: the driver side of the `mr` register block (issue 6).
//! Each call writes the command registers the op uses, rings
//! `mr.doorbell.GO` and waits for `mr.status` to answer (`BUSY` low and
//! `SEQ` moved on), then reports `ERROR`.
//!
//! The rules (page shifts, bounds, PA width, keys) are checked by the
//! hardware (`mr_tlb`, after `roce_wire::mr`) and by the doorbell (values
//! too wide for the table), never restated here: a refused command comes
//! back as [`MrError::Refused`] and changes nothing.

use crate::regs::Regs;
use roce_regs::{mr, MrOp};

pub use roce_wire::mr::Region;

/// Why a command did not complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MrError {
    /// The table refused it (`mr.status.ERROR`); nothing changed.
    Refused,
    /// `mr.status` did not answer within [`MAX_POLLS`] reads.
    Timeout,
    /// The doorbell was not taken (`mr.status.DROPPED`): another command
    /// was busy. Nothing was sent; retry.
    Dropped,
}

/// Status reads before a command is given up as hung. After a reset the
/// table clears itself for up to 2^12 cycles, during which commands wait;
/// a status read takes several cycles, so this is generous.
pub const MAX_POLLS: u32 = 100_000;

/// Wait until no command is busy; returns the status word.
fn idle<R: Regs>(r: &mut R) -> Result<u32, MrError> {
    for _ in 0..MAX_POLLS {
        let s = r.read32(mr::status::ADDR);
        if mr::status::BUSY.get(s) == 0 {
            return Ok(s);
        }
    }
    Err(MrError::Timeout)
}

/// Ring the doorbell for the command in the registers and wait for its
/// answer.
fn issue<R: Regs>(r: &mut R, op: MrOp) -> Result<(), MrError> {
    r.write32(mr::op::ADDR, mr::op::OP.val(op.value()));
    let seq = mr::status::SEQ.get(idle(r)?);
    r.write32(mr::doorbell::ADDR, mr::doorbell::GO.val(1));
    for _ in 0..MAX_POLLS {
        let s = r.read32(mr::status::ADDR);
        if mr::status::BUSY.get(s) == 1 {
            continue;
        }
        if mr::status::SEQ.get(s) == seq {
            // Not busy and not answered: the doorbell was not taken.
            return Err(if mr::status::DROPPED.get(s) == 1 {
                MrError::Dropped
            } else {
                MrError::Timeout
            });
        }
        return if mr::status::ERROR.get(s) == 1 {
            Err(MrError::Refused)
        } else {
            Ok(())
        };
    }
    Err(MrError::Timeout)
}

fn write64<R: Regs>(r: &mut R, lo: u32, hi: u32, v: u64) {
    r.write32(lo, v as u32);
    r.write32(hi, (v >> 32) as u32);
}

/// Page-table entry `index` := the physical address `pa` of a page.
pub fn write_pt<R: Regs>(r: &mut R, index: u32, pa: u64) -> Result<(), MrError> {
    r.write32(mr::pt_index::ADDR, mr::pt_index::INDEX.val(index));
    write64(r, mr::pa_lo::ADDR, mr::pa_hi::ADDR, pa);
    issue(r, MrOp::WritePt)
}

/// Register `region` under `key` (`index << 8 | tag`). Its page-table
/// entries are written first ([`write_pt`]) and not changed while it is
/// registered.
pub fn register_mr<R: Regs>(r: &mut R, key: u32, region: &Region) -> Result<(), MrError> {
    r.write32(mr::key::ADDR, mr::key::KEY.val(key));
    r.write32(mr::pd::ADDR, mr::pd::PD.val(region.pd as u32));
    r.write32(
        mr::access::ADDR,
        mr::access::FLAGS.val(region.access.bits() as u32),
    );
    write64(r, mr::va_lo::ADDR, mr::va_hi::ADDR, region.base);
    write64(r, mr::len_lo::ADDR, mr::len_hi::ADDR, region.length);
    r.write32(
        mr::page_shift::ADDR,
        mr::page_shift::SHIFT.val(region.page_shift as u32),
    );
    r.write32(mr::pt_index::ADDR, mr::pt_index::INDEX.val(region.pt_base));
    issue(r, MrOp::Register)
}

/// Free the table entry of `key`'s index (whatever its tag).
pub fn deregister_mr<R: Regs>(r: &mut R, key: u32) -> Result<(), MrError> {
    r.write32(mr::key::ADDR, mr::key::KEY.val(key));
    issue(r, MrOp::Deregister)
}

/// Invalidate the region registered under `key` (local invalidate, SEND
/// with invalidate): refused unless it is valid under the key's tag.
pub fn invalidate_mr<R: Regs>(r: &mut R, key: u32) -> Result<(), MrError> {
    r.write32(mr::key::ADDR, mr::key::KEY.val(key));
    issue(r, MrOp::Invalidate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::FakeRegs;
    use roce_wire::mr::Access;
    use std::vec::Vec;

    /// The `mr` block as the hardware behaves, scripted: a doorbell takes
    /// a copy of the command registers and answers after `busy_reads`
    /// status reads (never when `stuck`), with `ERROR` = `refuse`; with
    /// `drop` the doorbell only sets `DROPPED`.
    struct FakeMr {
        regs: FakeRegs,
        /// (op, key, pd, access, va, len, shift, pt index, pa) per doorbell.
        log: Vec<[u64; 9]>,
        busy_reads: u32,
        pending: Option<u32>,
        refuse: bool,
        stuck: bool,
        drop: bool,
    }

    impl FakeMr {
        fn new() -> FakeMr {
            FakeMr {
                regs: FakeRegs::new(),
                log: Vec::new(),
                busy_reads: 3,
                pending: None,
                refuse: false,
                stuck: false,
                drop: false,
            }
        }

        fn status(&self) -> u32 {
            self.regs.peek(mr::status::ADDR)
        }

        fn w64(&self, lo: u32, hi: u32) -> u64 {
            self.regs.peek(lo) as u64 | (self.regs.peek(hi) as u64) << 32
        }
    }

    impl Regs for FakeMr {
        fn read32(&mut self, offset: u32) -> u32 {
            if offset == mr::status::ADDR {
                if let Some(n) = self.pending.filter(|_| !self.stuck) {
                    if n == 0 {
                        self.pending = None;
                        let s = self.status();
                        let seq = (mr::status::SEQ.get(s) + 1) & mr::status::SEQ.max();
                        let s = mr::status::BUSY.set(s, 0);
                        let s = mr::status::ERROR.set(s, self.refuse as u32);
                        self.regs
                            .poke(mr::status::ADDR, mr::status::SEQ.set(s, seq));
                    } else {
                        self.pending = Some(n - 1);
                    }
                }
            }
            self.regs.read32(offset)
        }

        fn write32(&mut self, offset: u32, value: u32) {
            self.regs.write32(offset, value);
            if offset != mr::doorbell::ADDR || mr::doorbell::GO.get(value) == 0 {
                return;
            }
            let s = self.status();
            if self.drop || self.pending.is_some() {
                self.regs
                    .poke(mr::status::ADDR, mr::status::DROPPED.set(s, 1));
                return;
            }
            let p = |a| self.regs.peek(a) as u64;
            self.log.push([
                p(mr::op::ADDR),
                p(mr::key::ADDR),
                p(mr::pd::ADDR),
                p(mr::access::ADDR),
                self.w64(mr::va_lo::ADDR, mr::va_hi::ADDR),
                self.w64(mr::len_lo::ADDR, mr::len_hi::ADDR),
                p(mr::page_shift::ADDR),
                p(mr::pt_index::ADDR),
                self.w64(mr::pa_lo::ADDR, mr::pa_hi::ADDR),
            ]);
            let s = mr::status::DROPPED.set(mr::status::BUSY.set(s, 1), 0);
            self.regs.poke(mr::status::ADDR, s);
            self.pending = Some(self.busy_reads);
        }
    }

    const REGION: Region = Region {
        pd: 0xBEEF,
        access: Access::REMOTE_WRITE.union(Access::LOCAL_WRITE),
        base: 0xFFFF_0001_2345_6000,
        length: 0x1_0000_3000,
        page_shift: 13,
        pt_base: 0x1F0,
    };

    #[test]
    fn register_carries_every_field() {
        let mut f = FakeMr::new();
        register_mr(&mut f, 0x1234_56AB, &REGION).unwrap();
        assert_eq!(
            f.log,
            [[
                MrOp::Register as u64,
                0x1234_56AB,
                0xBEEF,
                5,
                0xFFFF_0001_2345_6000,
                0x1_0000_3000,
                13,
                0x1F0,
                0,
            ]]
        );
        assert_eq!(mr::status::SEQ.get(f.status()), 1);
    }

    #[test]
    fn write_pt_deregister_invalidate() {
        let mut f = FakeMr::new();
        write_pt(&mut f, 77, 0x000F_ABCD_E000_1000).unwrap();
        deregister_mr(&mut f, 0x500).unwrap();
        invalidate_mr(&mut f, 0x6FF).unwrap();
        let ops: Vec<(u64, u64)> = f.log.iter().map(|c| (c[0], c[1])).collect();
        assert_eq!(
            ops,
            [
                (MrOp::WritePt as u64, 0),
                (MrOp::Deregister as u64, 0x500),
                (MrOp::Invalidate as u64, 0x6FF)
            ]
        );
        assert_eq!((f.log[0][7], f.log[0][8]), (77, 0x000F_ABCD_E000_1000));
        assert_eq!(mr::status::SEQ.get(f.status()), 3);
    }

    #[test]
    fn outcomes() {
        let mut f = FakeMr::new();
        f.refuse = true;
        assert_eq!(write_pt(&mut f, 1, 1 << 60), Err(MrError::Refused));
        f.refuse = false;
        f.busy_reads = 0;
        assert_eq!(write_pt(&mut f, 1, 0x1000), Ok(()));
        f.drop = true;
        assert_eq!(deregister_mr(&mut f, 0x100), Err(MrError::Dropped));
        assert_eq!(f.log.len(), 2, "a dropped doorbell sends nothing");
        f.drop = false;
        f.stuck = true;
        assert_eq!(deregister_mr(&mut f, 0x100), Err(MrError::Timeout));
        // Still busy: the next command waits, then gives up without
        // ringing.
        assert_eq!(invalidate_mr(&mut f, 0x100), Err(MrError::Timeout));
        assert_eq!(f.log.len(), 3);
    }

    #[test]
    fn waits_for_a_busy_command_first() {
        let mut f = FakeMr::new();
        f.busy_reads = 50;
        // Another master's command in flight.
        f.write32(mr::doorbell::ADDR, mr::doorbell::GO.val(1));
        register_mr(&mut f, 0x300, &REGION).unwrap();
        assert_eq!(f.log.len(), 2);
        assert_eq!(mr::status::DROPPED.get(f.status()), 0);
        assert_eq!(mr::status::SEQ.get(f.status()), 2);
    }
}
