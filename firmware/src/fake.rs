//! A fake CSR window for host tests: every register element of the
//! `roce_regs` map at its reset value, all 32 bits stored. Accesses to
//! unmapped offsets, and firmware writes to RO registers, panic: they are
//! firmware bugs.

use crate::regs::Regs;
use roce_regs::{Access, BLOCKS};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FakeRegs {
    words: BTreeMap<u32, u32>,
    access: BTreeMap<u32, Access>,
    /// Writes through the `Regs` trait so far.
    pub writes: usize,
}

impl FakeRegs {
    /// The CSR window after reset.
    pub fn new() -> FakeRegs {
        let mut words = BTreeMap::new();
        let mut access = BTreeMap::new();
        for b in BLOCKS {
            for r in b.registers {
                for i in 0..r.count {
                    let off = b.base + r.element_offset(i);
                    assert!(
                        words.insert(off, r.reset()).is_none(),
                        "{}.{} overlaps",
                        b.name,
                        r.name
                    );
                    access.insert(off, r.access);
                }
            }
        }
        FakeRegs {
            words,
            access,
            writes: 0,
        }
    }

    /// Set a register as the hardware (or a host) would, RO ones included.
    pub fn poke(&mut self, offset: u32, value: u32) {
        *self
            .words
            .get_mut(&offset)
            .unwrap_or_else(|| panic!("poke of unmapped offset {offset:#x}")) = value;
    }

    /// A register's value.
    pub fn peek(&self, offset: u32) -> u32 {
        self.words[&offset]
    }

    /// Every register's value.
    pub fn snapshot(&self) -> BTreeMap<u32, u32> {
        self.words.clone()
    }
}

impl Regs for FakeRegs {
    fn read32(&mut self, offset: u32) -> u32 {
        match self.access.get(&offset) {
            Some(Access::WO) => 0,
            Some(_) => self.words[&offset],
            None => panic!("firmware read unmapped offset {offset:#x}"),
        }
    }

    fn write32(&mut self, offset: u32, value: u32) {
        match self.access.get(&offset) {
            Some(Access::RO) => panic!("firmware wrote RO register at {offset:#x}"),
            Some(_) => {
                self.words.insert(offset, value);
                self.writes += 1;
            }
            None => panic!("firmware wrote unmapped offset {offset:#x}"),
        }
    }
}
