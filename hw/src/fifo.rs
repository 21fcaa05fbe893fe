//! Small synchronous first-word-fall-through FIFO with a synchronous reset.
//!
//! rust-hdl's `SynchronousFIFO` has no reset (its pointers rely on initial
//! values) and forwards an incremented read address through a mux into a
//! registered RAM, which sets the clock on small FPGAs. This one keeps its
//! words in distributed RAM ([`LutRam`], asynchronous read) and moves the
//! head word into an output register whenever that register is free or
//! being emptied, so every path is short: a pointer register straight into
//! the RAM address, and one enable computed from a 2-pointer compare.
//!
//! Capacity: `2^A + 1` words (the RAM plus the output register). `AP1 =
//! A + 1` is the pointer width (checked in `new()`). A written word appears
//! at `data_out` two cycles later at the earliest. `write` when `full` and
//! `read` when `empty` are ignored.

use crate::prim::LutRam;
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

#[derive(LogicBlock)]
pub struct SyncFifo<D: Synth, const A: usize, const AP1: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub write: Signal<In, Bit>,
    pub data_in: Signal<In, D>,
    pub full: Signal<Out, Bit>,
    pub read: Signal<In, Bit>,
    pub data_out: Signal<Out, D>,
    pub empty: Signal<Out, Bit>,
    ram: LutRam<D, A>,
    wptr: DFF<Bits<AP1>>,
    rptr: DFF<Bits<AP1>>,
    out_valid: DFF<Bit>,
    out_data: DFF<D>,
    /// The RAM is full / holds a word, as of this cycle (registered).
    full_q: DFF<Bit>,
    nonempty_q: DFF<Bit>,
    ram_empty: Signal<Local, Bit>,
    store: Signal<Local, Bit>,
    load: Signal<Local, Bit>,
    addr_mask: Constant<Bits<AP1>>,
    wrap: Constant<Bits<AP1>>,
}

impl<D: Synth, const A: usize, const AP1: usize> SyncFifo<D, A, AP1> {
    pub fn new() -> Self {
        assert!(
            (1..=8).contains(&A),
            "SyncFifo: address width {A} out of 1..=8"
        );
        assert_eq!(AP1, A + 1, "SyncFifo: AP1 must be A + 1");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            write: Default::default(),
            data_in: Default::default(),
            full: Default::default(),
            read: Default::default(),
            data_out: Default::default(),
            empty: Default::default(),
            ram: LutRam::new(),
            wptr: Default::default(),
            rptr: Default::default(),
            out_valid: Default::default(),
            out_data: Default::default(),
            full_q: Default::default(),
            nonempty_q: Default::default(),
            ram_empty: Default::default(),
            store: Default::default(),
            load: Default::default(),
            addr_mask: Constant::new(((1u64 << A) - 1).into()),
            wrap: Constant::new((1u64 << A).into()),
        }
    }
}

impl<D: Synth, const A: usize, const AP1: usize> Default for SyncFifo<D, A, AP1> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Synth, const A: usize, const AP1: usize> Logic for SyncFifo<D, A, AP1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, wptr, rptr, out_valid, out_data, full_q, nonempty_q);
        clock!(self, clock, ram);
        // RAM full / empty, from flip-flops (set from the next pointers below).
        self.full.next = self.full_q.q.val();
        self.ram_empty.next = !self.nonempty_q.q.val();
        // Write side.
        self.store.next = self.write.val() & !self.full.val();
        self.ram.write_enable.next = self.store.val();
        self.ram.write_address.next = bit_cast::<A, AP1>(self.wptr.q.val() & self.addr_mask.val());
        self.ram.write_data.next = self.data_in.val();
        if self.store.val() {
            self.wptr.d.next = self.wptr.q.val() + 1;
        }
        // Read side: refill the output register when it is free or taken.
        self.ram.read_address.next = bit_cast::<A, AP1>(self.rptr.q.val() & self.addr_mask.val());
        self.load.next = !self.ram_empty.val() & (!self.out_valid.q.val() | self.read.val());
        if self.load.val() {
            self.out_data.d.next = self.ram.read_data.val();
            self.out_valid.d.next = true;
            self.rptr.d.next = self.rptr.q.val() + 1;
        } else if self.read.val() {
            self.out_valid.d.next = false;
        }
        self.data_out.next = self.out_data.q.val();
        self.empty.next = !self.out_valid.q.val();
        if self.reset.val() {
            self.wptr.d.next = 0.into();
            self.rptr.d.next = 0.into();
            self.out_valid.d.next = false;
        }
        // RAM full: the pointers differ only in their wrap bit.
        self.full_q.d.next = (self.wptr.d.val() ^ self.rptr.d.val()) == self.wrap.val();
        self.nonempty_q.d.next = self.wptr.d.val() != self.rptr.d.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_fifo_synthesizes() {
        let mut uut = SyncFifo::<Bits<33>, 5, 6>::new();
        uut.connect_all();
        yosys_validate("sync_fifo", &generate_verilog(&uut)).unwrap();
    }
}
