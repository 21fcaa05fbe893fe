//! Shared by the CSR and firmware co-simulation benches: a reference
//! register file built from the `roce-regs` tables (independent of the
//! hardware decoder's plan), and the datapath port's context packing.
#![allow(dead_code)]

pub mod fwcheck;

use roce_regs::{Access, Counter, Register, BLOCKS, QP_STRIDE};
use roce_sim::axil::{OKAY, SLVERR};
use std::collections::BTreeMap;

pub const LANES: usize = Counter::COUNT as usize - 1;
pub const CTX_WORDS: usize = roce_sim::responder::CTX_WORDS;

/// A per-QP context register: one element per QP, a context apart.
pub fn is_ctx(r: &Register) -> bool {
    r.count == roce_regs::QP_COUNT && r.stride == QP_STRIDE
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub reg: &'static Register,
    pub access: Access,
    pub value: u32,
    /// Bits a write stores.
    pub store: u32,
    /// `ctr.counter` lane, or the unmapped counter.
    pub counter: Option<Counter>,
    /// (QPN, register) for context registers.
    pub ctx: Option<u32>,
}

/// The register file as the map defines it.
#[derive(Clone, Debug)]
pub struct RefRegs {
    pub words: BTreeMap<u32, Entry>,
    pub lanes: [u32; LANES],
    pub unmapped: u32,
}

impl RefRegs {
    pub fn new() -> RefRegs {
        let mut words = BTreeMap::new();
        for b in BLOCKS {
            for r in b.registers {
                for i in 0..r.count {
                    let addr = b.base + r.element_offset(i);
                    let store = if b.name == "mbox" {
                        u32::MAX
                    } else {
                        r.used_bits()
                    };
                    let counter = (*r == roce_regs::ctr::counter::REG)
                        .then(|| Counter::from_index(i).unwrap());
                    let e = Entry {
                        reg: r,
                        access: r.access,
                        value: r.reset(),
                        store,
                        counter,
                        ctx: is_ctx(r).then_some(i),
                    };
                    assert!(
                        words.insert(addr, e).is_none(),
                        "{}.{} overlaps",
                        b.name,
                        r.name
                    );
                }
            }
        }
        RefRegs {
            words,
            lanes: [0; LANES],
            unmapped: 0,
        }
    }

    /// The register file of a build with `n` QP contexts: contexts from
    /// `n` up are unmapped and `qp.qp_count` reads `n`.
    pub fn with_qps(n: u32) -> RefRegs {
        let mut r = RefRegs::new();
        r.words.retain(|_, e| e.ctx.is_none_or(|q| q < n));
        r.words
            .get_mut(&roce_regs::qp::qp_count::ADDR)
            .expect("qp.qp_count is mapped")
            .value = n;
        r
    }

    pub fn read(&self, addr: u32) -> Option<u32> {
        let e = self.words.get(&(addr & !3))?;
        Some(match e.counter {
            Some(Counter::CsrUnmapped) => self.unmapped,
            Some(c) => self.lanes[c.index() as usize],
            None => e.value,
        })
    }

    /// Apply a write; the response it must get.
    pub fn write(&mut self, addr: u32, data: u32, strb: u32) -> u32 {
        let Some(e) = self.words.get_mut(&(addr & !3)) else {
            self.unmapped += 1;
            return SLVERR;
        };
        if e.ctx.is_some() && strb != 0xF {
            return SLVERR;
        }
        if e.access == Access::RW {
            let bytes = (0..4)
                .filter(|b| strb >> b & 1 == 1)
                .fold(0u32, |m, b| m | 0xFF << (8 * b));
            let m = bytes & e.store;
            e.value = (e.value & !m) | (data & m);
        }
        OKAY
    }

    /// QP `q`'s context as the datapath port packs it: context registers
    /// in map order, their fields in order, from bit 0 up.
    pub fn packed_ctx(&self, q: u32) -> [u32; CTX_WORDS] {
        roce_sim::responder::pack_ctx(|reg, field| {
            let r = roce_regs::qp::BLOCK
                .registers
                .iter()
                .find(|r| is_ctx(r) && r.name == reg)
                .expect("a context register");
            let f = r
                .fields
                .iter()
                .find(|f| f.name == field)
                .expect("its field");
            f.get(self.words[&(roce_regs::qp::BASE + r.element_offset(q))].value)
        })
    }

    pub fn addrs(&self) -> Vec<u32> {
        self.words.keys().copied().collect()
    }
}

/// Unpack the datapath port's context into (register, field) values,
/// walking the same packing as [`RefRegs::packed_ctx`].
pub fn unpack_ctx(words: &[u32; CTX_WORDS]) -> BTreeMap<(&'static str, &'static str), u32> {
    let mut out = BTreeMap::new();
    let mut at = 0;
    for r in roce_regs::qp::BLOCK.registers.iter().filter(|r| is_ctx(r)) {
        for f in r.fields {
            let v = (0..f.width as usize).fold(0u32, |v, b| {
                v | (words[(at + b) / 32] >> ((at + b) % 32) & 1) << b
            });
            out.insert((r.name, f.name), v);
            at += f.width as usize;
        }
    }
    out
}

/// The firmware's host library over the reference register file: every
/// write has all byte strobes and must answer OKAY, as on the bus.
impl roce_fw::Regs for RefRegs {
    fn read32(&mut self, offset: u32) -> u32 {
        self.read(offset)
            .unwrap_or_else(|| panic!("reference read of unmapped {offset:#x}"))
    }
    fn write32(&mut self, offset: u32, value: u32) {
        assert_eq!(
            self.write(offset, value, 0xF),
            OKAY,
            "reference write {offset:#x}"
        );
    }
}
