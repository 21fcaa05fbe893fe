//! Register access: the [`Regs`] trait every part of the firmware is generic
//! over, and [`Mmio`], the one implementation with `unsafe` in it.

/// A 32-bit register file addressed by byte offset in the CSR window
/// (`roce_regs` block `ADDR`s). Implementations: [`Mmio`] on the softcore,
/// a fake register file in the host tests, a Verilated CSR block in
/// co-simulation.
pub trait Regs {
    /// Read the register at `offset`.
    fn read32(&mut self, offset: u32) -> u32;
    /// Write `value` to the register at `offset`.
    fn write32(&mut self, offset: u32, value: u32);
}

/// The CSR window as memory-mapped I/O at [`roce_regs::CSR_BASE`].
#[derive(Debug)]
pub struct Mmio {
    base: usize,
}

impl Mmio {
    /// The CSR window of the roce-hdl SoC memory map.
    ///
    /// Only on the softcore: there, [`roce_regs::CSR_BASE`] is the CSR
    /// window by construction of the SoC, so the accesses are always valid.
    #[cfg(target_arch = "riscv32")]
    pub fn csr_window() -> Mmio {
        Mmio {
            base: roce_regs::CSR_BASE as usize,
        }
    }
}

#[allow(unsafe_code)]
impl Regs for Mmio {
    fn read32(&mut self, offset: u32) -> u32 {
        let addr = self.base + (offset & !3) as usize;
        // SAFETY: `Mmio` is only built for the CSR window (`csr_window`),
        // which the SoC maps for every aligned offset; device registers are
        // never Rust objects, so a volatile access aliases nothing.
        unsafe { core::ptr::read_volatile(addr as *const u32) }
    }

    fn write32(&mut self, offset: u32, value: u32) {
        let addr = self.base + (offset & !3) as usize;
        // SAFETY: as in `read32`.
        unsafe { core::ptr::write_volatile(addr as *mut u32, value) }
    }
}
