//! Synchronous first-word-fall-through FIFO with a synchronous reset.
//!
//! rust-hdl's `SynchronousFIFO` has no reset (its pointers rely on initial
//! values), so a block reset could leave stale entries behind. This one is
//! built the same way (a registered-read `RAM`, the read address forwarded
//! by a cycle so `data_out` is valid whenever `empty` is low) and clears
//! both pointers on `reset`.
//!
//! Capacity is `2^A` entries; `AP1 = A + 1` is the pointer width (checked in
//! `new()`). A write takes one extra cycle to become visible at the read
//! side. `write` when `full` and `read` when `empty` are ignored.

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
    /// Entries written and not yet read (including one not yet visible).
    pub count: Signal<Out, Bits<AP1>>,
    ram: RAM<D, A>,
    wptr: DFF<Bits<AP1>>,
    wptr_seen: DFF<Bits<AP1>>,
    rptr: DFF<Bits<AP1>>,
    do_write: Signal<Local, Bit>,
    do_read: Signal<Local, Bit>,
    addr_mask: Constant<Bits<AP1>>,
    capacity: Constant<Bits<AP1>>,
}

impl<D: Synth, const A: usize, const AP1: usize> SyncFifo<D, A, AP1> {
    pub fn new() -> Self {
        assert!(
            (1..=16).contains(&A),
            "SyncFifo: address width {A} out of 1..=16"
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
            count: Default::default(),
            ram: Default::default(),
            wptr: Default::default(),
            wptr_seen: Default::default(),
            rptr: Default::default(),
            do_write: Default::default(),
            do_read: Default::default(),
            addr_mask: Constant::new(((1u64 << A) - 1).into()),
            capacity: Constant::new((1u64 << A).into()),
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
        dff_setup!(self, clock, wptr, wptr_seen, rptr);
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.count.next = self.wptr.q.val() - self.rptr.q.val();
        self.full.next = self.count.val() == self.capacity.val();
        self.empty.next = self.rptr.q.val() == self.wptr_seen.q.val();
        self.do_write.next = self.write.val() & !self.full.val();
        self.do_read.next = self.read.val() & !self.empty.val();
        // Write side.
        self.ram.write_enable.next = self.do_write.val();
        self.ram.write_address.next = bit_cast::<A, AP1>(self.wptr.q.val() & self.addr_mask.val());
        self.ram.write_data.next = self.data_in.val();
        if self.do_write.val() {
            self.wptr.d.next = self.wptr.q.val() + 1;
        }
        self.wptr_seen.d.next = self.wptr.q.val();
        // Read side: present the address of the word after the one being
        // taken, so the registered RAM output is ready on the next cycle.
        self.ram.read_address.next = bit_cast::<A, AP1>(self.rptr.q.val() & self.addr_mask.val());
        if self.do_read.val() {
            self.rptr.d.next = self.rptr.q.val() + 1;
            self.ram.read_address.next =
                bit_cast::<A, AP1>((self.rptr.q.val() + 1) & self.addr_mask.val());
        }
        self.data_out.next = self.ram.read_data.val();
        if self.reset.val() {
            self.wptr.d.next = 0.into();
            self.wptr_seen.d.next = 0.into();
            self.rptr.d.next = 0.into();
        }
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
