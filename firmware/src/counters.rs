//! Counter read-out: `ctr.counter[i]` for each [`Counter`].

use crate::regs::Regs;
use roce_regs::{ctr, Counter};

/// The value of counter `c`.
pub fn read<R: Regs>(r: &mut R, c: Counter) -> u32 {
    r.read32(ctr::counter::addr(c.index()))
}

/// Every counter, indexed by [`Counter::index`].
pub fn read_all<R: Regs>(r: &mut R) -> [u32; Counter::COUNT as usize] {
    let mut out = [0; Counter::COUNT as usize];
    for c in Counter::ALL {
        out[c.index() as usize] = read(r, c);
    }
    out
}
