//! The roce-fw binary for the RISC-V softcore (`riscv32imc-unknown-none-elf`,
//! feature `rt`): boot, then serve the command mailbox forever.
//!
//! ```sh
//! cargo build -p roce-fw --release --features rt --target riscv32imc-unknown-none-elf
//! ```
#![no_std]
#![no_main]

use riscv_rt::entry;
use roce_fw::{Firmware, Mmio};

#[entry]
fn main() -> ! {
    let mut regs = Mmio::csr_window();
    let fw = Firmware::boot(&mut regs);
    loop {
        fw.poll(&mut regs);
    }
}

/// PicoRV32 has no `mtvec` and the firmware polls, so there is nothing to
/// set up (riscv-rt feature `custom-setup-interrupts`, DESIGN §4).
#[riscv_rt::setup_interrupts]
fn setup_interrupts() {}

/// A panic is a firmware bug; park the core (the host sees `doorbell.GO`
/// stay set and times out).
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}
