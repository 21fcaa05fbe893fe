//! roce-fw on the `rvsim` instruction-set simulator (RV32IMC): RAM at 0
//! loaded from the ELF's `PT_LOAD` segments, and the CSR window at
//! [`roce_regs::CSR_BASE`] forwarded, one 32-bit AXI4-Lite transaction per
//! load or store, to the Verilated CSR block through the master BFM. The
//! host shares that AXI port between instructions (the ISS is sequential,
//! so no arbitration is needed).

use super::{CsrAccess, Softcore};
use crate::axil::{AxilMaster, Timing, OKAY};
use crate::model::Model;
use crate::models::CsrW256;
use roce_regs::{Counter, CSR_BASE, CSR_WINDOW_SIZE};
use rvsim::{Clock, CpuError, CpuState, Interp, Memory, MemoryAccess, Op, SimpleClock};
use std::mem::size_of;

/// Counter input lanes: every counter but `csr-unmapped`, which the block
/// counts itself.
const LANES: usize = Counter::COUNT as usize - 1;

/// The address space the ISS sees.
pub struct Bus {
    ram: Vec<u8>,
    dut: CsrW256,
    m: AxilMaster,
    /// The last CSR access, for [`Softcore::step`].
    last: Option<CsrAccess>,
    /// Clock cycles spent in the firmware's CSR transactions.
    bus_cycles: u64,
    /// A CSR transaction that did not answer OKAY (a firmware bug).
    fault: Option<String>,
}

impl Bus {
    fn csr_read(&mut self, offset: u32) -> u32 {
        let c0 = self.dut.cycles();
        let (d, resp) = self.m.read_now(&mut self.dut, offset);
        self.bus_cycles += self.dut.cycles() - c0;
        if resp != OKAY && self.fault.is_none() {
            self.fault = Some(format!("firmware read {offset:#x}: response {resp}"));
        }
        self.last = Some(CsrAccess {
            offset,
            write: None,
            cycle: self.dut.cycles(),
        });
        d
    }

    fn csr_write(&mut self, offset: u32, value: u32) {
        let c0 = self.dut.cycles();
        let resp = self.m.write_now(&mut self.dut, offset, value, 0xF);
        self.bus_cycles += self.dut.cycles() - c0;
        if resp != OKAY && self.fault.is_none() {
            self.fault = Some(format!("firmware write {offset:#x}: response {resp}"));
        }
        self.last = Some(CsrAccess {
            offset,
            write: Some(value),
            cycle: self.dut.cycles(),
        });
    }
}

impl Memory for Bus {
    fn access<T: Copy>(&mut self, addr: u32, access: MemoryAccess<T>) -> bool {
        let Some(offset) = addr.checked_sub(CSR_BASE).filter(|&o| o < CSR_WINDOW_SIZE) else {
            return Memory::access(&mut self.ram[..], addr, access);
        };
        // The CSR window: aligned 32-bit loads and stores only (what
        // `roce_fw::Mmio` does); anything else is an access fault.
        if size_of::<T>() != 4 || offset % 4 != 0 {
            return false;
        }
        match access {
            MemoryAccess::Load(dest) => {
                let v = self.csr_read(offset);
                // SAFETY: `T` is 4 bytes (checked above) and `dest` is a
                // valid, exclusive reference to one; every 4-byte `T` the
                // interpreter loads is a plain integer.
                unsafe { (dest as *mut T as *mut u32).write_unaligned(v) };
                true
            }
            MemoryAccess::Store(value) => {
                // SAFETY: as above, `value` is a 4-byte plain integer.
                let v = unsafe { (&value as *const T as *const u32).read_unaligned() };
                self.csr_write(offset, v);
                true
            }
            MemoryAccess::Exec(_) => false,
        }
    }
}

/// The ISS system: CPU state, RAM + CSR block, instruction counter.
pub struct IssSoc {
    pub state: CpuState,
    pub bus: Bus,
    pub clock: SimpleClock,
}

impl IssSoc {
    /// Reset the CSR block (3 cycles), load `ram` at 0, PC = `entry`.
    /// `timing`: the AXI master's gaps and backpressure, for the firmware's
    /// transactions and the host's alike.
    pub fn new(ram: &[u8], entry: u32, seed: u64, timing: Timing) -> IssSoc {
        let mut dut = CsrW256::new();
        let mut m = AxilMaster::new(seed, timing);
        dut.set_counters(&[0; LANES]);
        dut.set_reset(true);
        for _ in 0..3 {
            m.step(&mut dut);
        }
        dut.set_reset(false);
        IssSoc {
            state: CpuState::new(entry),
            bus: Bus {
                ram: ram.to_vec(),
                dut,
                m,
                last: None,
                bus_cycles: 0,
                fault: None,
            },
            clock: SimpleClock::new(),
        }
    }

    /// The CSR block model (for its datapath port and counters).
    pub fn dut(&mut self) -> &mut CsrW256 {
        &mut self.bus.dut
    }

    /// Execute one instruction. An ISS stop (illegal instruction, access
    /// fault, `ebreak`) or a CSR transaction that did not answer OKAY is a
    /// firmware bug: panic with the PC.
    pub fn step_instr(&mut self) -> Result<Op, String> {
        let pc = self.state.pc;
        let r = Interp::new(&mut self.state, &mut self.bus, &mut self.clock).step();
        if let Some(f) = self.bus.fault.take() {
            return Err(format!("at pc {pc:#x}: {f}"));
        }
        r.map_err(|(e, op): (CpuError, Option<Op>)| {
            format!("ISS stopped at pc {pc:#x}: {e:?} ({op:?})")
        })
    }
}

impl Softcore for IssSoc {
    fn step(&mut self) -> Option<CsrAccess> {
        self.bus.last = None;
        if let Err(e) = self.step_instr() {
            panic!("{e}");
        }
        // The access completed within this instruction: stamp it with the
        // count after it (instructions + bus cycles).
        let now = self.cycles();
        self.bus.last.map(|a| CsrAccess { cycle: now, ..a })
    }

    fn host_read(&mut self, offset: u32) -> (u32, u32) {
        self.bus.m.read_now(&mut self.bus.dut, offset)
    }

    fn host_write(&mut self, offset: u32, value: u32) -> u32 {
        self.bus.m.write_now(&mut self.bus.dut, offset, value, 0xF)
    }

    fn qp_ctx(&mut self, q: u32) -> Vec<u32> {
        let d = &mut self.bus.dut;
        d.set_qp_rd_addr(q);
        for _ in 0..crate::fw::qp_read_latency() {
            d.eval();
            d.tick();
        }
        d.eval();
        d.get_qp_rd_data().to_vec()
    }

    fn cycles(&self) -> u64 {
        self.clock.read_instret() + self.bus.bus_cycles
    }

    fn instret(&self) -> Option<u64> {
        Some(self.clock.read_instret())
    }

    fn name(&self) -> &'static str {
        "rvsim"
    }
}
