//! The firmware binary builds for the softcore: `cargo build --features rt
//! --target riscv32imc-unknown-none-elf --release` in its own target
//! directory gives a 32-bit little-endian RISC-V ELF with compressed
//! instructions and soft float, entered at the reset vector 0, that fits the
//! 64 KiB RAM of `memory.x`. Prints the code size (docs/BENCHMARKS.md).

// The ELF build is shared with the co-simulations in roce-sim.
#[allow(dead_code)]
#[path = "../../sim/src/fw/elf.rs"]
mod fw_elf;

use fw_elf::{u16_at, u32_at, RAM_BYTES, TARGET};

struct Section {
    name: String,
    flags: u32,
    addr: u32,
    size: u32,
}

/// The section headers of a 32-bit little-endian ELF.
fn sections(elf: &[u8]) -> Vec<Section> {
    let shoff = u32_at(elf, 32) as usize;
    let shentsize = u16_at(elf, 46) as usize;
    let shnum = u16_at(elf, 48) as usize;
    let shstrndx = u16_at(elf, 50) as usize;
    let hdr = |i: usize| &elf[shoff + i * shentsize..shoff + (i + 1) * shentsize];
    let strtab = u32_at(hdr(shstrndx), 16) as usize;
    (0..shnum)
        .map(|i| {
            let h = hdr(i);
            let name_at = strtab + u32_at(h, 0) as usize;
            let end = elf[name_at..].iter().position(|&c| c == 0).unwrap();
            Section {
                name: String::from_utf8_lossy(&elf[name_at..name_at + end]).into_owned(),
                flags: u32_at(h, 8),
                addr: u32_at(h, 12),
                size: u32_at(h, 20),
            }
        })
        .collect()
}

#[test]
fn firmware_elf_builds_for_riscv32imc() {
    let path = fw_elf::build().unwrap_or_else(|e| panic!("{e}"));
    let elf = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));

    fw_elf::check_header(&elf).unwrap();
    let flags = u32_at(&elf, 36);
    assert_eq!(flags & 0x1, 0x1, "no RVC (compressed) flag: {flags:#x}");
    assert_eq!(flags & 0x6, 0, "not the soft-float ABI: {flags:#x}");
    assert_eq!(u32_at(&elf, 24), 0, "entry is not the reset vector 0");

    let secs = sections(&elf);
    const ALLOC: u32 = 0x2;
    const EXEC: u32 = 0x4;
    let text = secs.iter().find(|s| s.name == ".text").expect(".text");
    let code: u32 = secs
        .iter()
        .filter(|s| s.flags & EXEC != 0)
        .map(|s| s.size)
        .sum();
    let image: u32 = secs
        .iter()
        .filter(|s| s.flags & ALLOC != 0 && s.name != ".stack" && s.name != ".heap")
        .map(|s| s.size)
        .sum();
    let end = secs
        .iter()
        .filter(|s| s.flags & ALLOC != 0)
        .map(|s| u64::from(s.addr) + u64::from(s.size))
        .max()
        .unwrap();
    assert!(text.size > 0);
    assert!(
        end <= RAM_BYTES,
        "image and stack end at {end:#x}, beyond 64 KiB"
    );
    println!(
        "roce-fw ({TARGET}, release): .text {} bytes, code {} bytes, image {} bytes (of {} KiB RAM)",
        text.size,
        code,
        image,
        RAM_BYTES / 1024
    );
}
