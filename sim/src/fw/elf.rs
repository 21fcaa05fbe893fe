//! Build the roce-fw firmware ELF for the softcore and read its loadable
//! image. Plain `std`, no crate dependencies: `firmware/tests/elf.rs`
//! includes this file by path (`#[path]`) so both the firmware's own ELF
//! test and the co-simulations build the ELF the same way.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The softcore's Rust target.
pub const TARGET: &str = "riscv32imc-unknown-none-elf";
/// On-chip RAM at address 0 (`firmware/memory.x`).
pub const RAM_BYTES: u64 = 64 * 1024;

pub fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}

pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// The workspace root (this file lives in `sim/src/fw/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Is the Rust target installed for the `rustc` cargo uses?
pub fn target_installed() -> bool {
    let Ok(out) = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .args(["--print", "sysroot"])
        .output()
    else {
        return false;
    };
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Path::new(&sysroot)
        .join("lib/rustlib")
        .join(TARGET)
        .exists()
}

/// `cargo build --release -p roce-fw --features rt --target TARGET` into
/// `target/fw-elf` (its own target directory, so it never waits on the
/// host build's lock); the ELF's path.
pub fn build() -> Result<PathBuf, String> {
    if !target_installed() {
        return Err(format!(
            "Rust target {TARGET} is not installed: run scripts/setup (rustup target add {TARGET})"
        ));
    }
    let root = workspace_root();
    let target_dir = root.join("target").join("fw-elf");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&root)
        .args([
            "build",
            "--locked",
            "--release",
            "-p",
            "roce-fw",
            "--features",
            "rt",
        ])
        .args(["--target", TARGET, "--target-dir"])
        .arg(&target_dir)
        .output()
        .map_err(|e| format!("run cargo build: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "firmware build failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(target_dir.join(TARGET).join("release").join("roce-fw"))
}

/// One `PT_LOAD` program header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Load (physical) address: where the image holds the bytes.
    pub paddr: u32,
    pub vaddr: u32,
    pub offset: u32,
    pub filesz: u32,
    pub memsz: u32,
}

/// Check the ELF header: 32-bit little-endian RISC-V executable.
pub fn check_header(elf: &[u8]) -> Result<(), String> {
    if elf.len() < 52 || &elf[..4] != b"\x7fELF" {
        return Err("not an ELF".into());
    }
    if elf[4] != 1 || elf[5] != 1 {
        return Err("not a 32-bit little-endian ELF".into());
    }
    if u16_at(elf, 16) != 2 {
        return Err("not an executable".into());
    }
    if u16_at(elf, 18) != 243 {
        return Err("e_machine is not EM_RISCV".into());
    }
    Ok(())
}

/// The entry point.
pub fn entry(elf: &[u8]) -> u32 {
    u32_at(elf, 24)
}

/// The `PT_LOAD` segments.
pub fn load_segments(elf: &[u8]) -> Result<Vec<Segment>, String> {
    check_header(elf)?;
    const PT_LOAD: u32 = 1;
    let phoff = u32_at(elf, 28) as usize;
    let phentsize = u16_at(elf, 42) as usize;
    let phnum = u16_at(elf, 44) as usize;
    let mut segs = Vec::new();
    for i in 0..phnum {
        let at = phoff + i * phentsize;
        let h = elf
            .get(at..at + 32)
            .ok_or_else(|| format!("program header {i} beyond the file"))?;
        if u32_at(h, 0) != PT_LOAD {
            continue;
        }
        let s = Segment {
            offset: u32_at(h, 4),
            vaddr: u32_at(h, 8),
            paddr: u32_at(h, 12),
            filesz: u32_at(h, 16),
            memsz: u32_at(h, 20),
        };
        if (s.offset as usize + s.filesz as usize) > elf.len() {
            return Err(format!("segment {i} beyond the file"));
        }
        segs.push(s);
    }
    Ok(segs)
}

/// The RAM image at reset: each `PT_LOAD` segment's file bytes at its load
/// address, zeros elsewhere (`.bss` and the stack; riscv-rt's start-up
/// copies `.data` from its load address and clears `.bss`).
pub fn ram_image(elf: &[u8], ram_bytes: usize) -> Result<Vec<u8>, String> {
    let mut ram = vec![0u8; ram_bytes];
    for s in load_segments(elf)? {
        let end = s.paddr as usize + s.filesz as usize;
        if end > ram_bytes {
            return Err(format!(
                "segment at {:#x}+{:#x} does not fit {ram_bytes} bytes of RAM",
                s.paddr, s.filesz
            ));
        }
        ram[s.paddr as usize..end]
            .copy_from_slice(&elf[s.offset as usize..(s.offset + s.filesz) as usize]);
    }
    Ok(ram)
}

/// Build the firmware and return its RAM image and entry point.
pub fn build_image() -> Result<(Vec<u8>, u32), String> {
    let path = build()?;
    let elf = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((ram_image(&elf, RAM_BYTES as usize)?, entry(&elf)))
}
