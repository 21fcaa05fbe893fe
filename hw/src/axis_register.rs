//! Stream register slice (skid buffer): cuts every combinational path
//! between its two sides at full throughput.
//!
//! Every output, `s_axis.tready` included, comes straight from a flip-flop,
//! so slices can be dropped between any two blocks to close timing. One
//! beat per cycle when the sink is ready; when the sink stalls, the beat in
//! flight lands in the skid register and `s_axis.tready` falls on the next
//! cycle. Latency: 1 cycle. Storage: 2 beats.

use crate::stream::{check_width, StreamIn, StreamOut};
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

#[derive(LogicBlock)]
pub struct AxisRegister<const W: usize, const K: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_axis: StreamIn<W, K>,
    pub m_axis: StreamOut<W, K>,
    // Output register.
    out_valid: DFF<Bit>,
    out_data: DFF<Bits<W>>,
    out_keep: DFF<Bits<K>>,
    out_last: DFF<Bit>,
    out_user: DFF<Bit>,
    // Skid register.
    skid_valid: DFF<Bit>,
    skid_data: DFF<Bits<W>>,
    skid_keep: DFF<Bits<K>>,
    skid_last: DFF<Bit>,
    skid_user: DFF<Bit>,
    take_in: Signal<Local, Bit>,
    out_free: Signal<Local, Bit>,
}

impl<const W: usize, const K: usize> AxisRegister<W, K> {
    pub fn new() -> Self {
        check_width("AxisRegister", W, K);
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_axis: Default::default(),
            m_axis: Default::default(),
            out_valid: Default::default(),
            out_data: Default::default(),
            out_keep: Default::default(),
            out_last: Default::default(),
            out_user: Default::default(),
            skid_valid: Default::default(),
            skid_data: Default::default(),
            skid_keep: Default::default(),
            skid_last: Default::default(),
            skid_user: Default::default(),
            take_in: Default::default(),
            out_free: Default::default(),
        }
    }
}

impl<const W: usize, const K: usize> Default for AxisRegister<W, K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const K: usize> Logic for AxisRegister<W, K> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, out_valid, out_data, out_keep, out_last, out_user, skid_valid, skid_data,
            skid_keep, skid_last, skid_user
        );
        self.s_axis.tready.next = !self.skid_valid.q.val();
        self.m_axis.tvalid.next = self.out_valid.q.val();
        self.m_axis.tdata.next = self.out_data.q.val();
        self.m_axis.tkeep.next = self.out_keep.q.val();
        self.m_axis.tlast.next = self.out_last.q.val();
        self.m_axis.tuser.next = self.out_user.q.val();
        self.take_in.next = self.s_axis.tvalid.val() & !self.skid_valid.q.val();
        self.out_free.next = !self.out_valid.q.val() | self.m_axis.tready.val();
        if self.out_free.val() {
            if self.skid_valid.q.val() {
                // Drain the skid register first (input is stalled meanwhile).
                self.out_valid.d.next = true;
                self.out_data.d.next = self.skid_data.q.val();
                self.out_keep.d.next = self.skid_keep.q.val();
                self.out_last.d.next = self.skid_last.q.val();
                self.out_user.d.next = self.skid_user.q.val();
                self.skid_valid.d.next = false;
            } else {
                self.out_valid.d.next = self.take_in.val();
                self.out_data.d.next = self.s_axis.tdata.val();
                self.out_keep.d.next = self.s_axis.tkeep.val();
                self.out_last.d.next = self.s_axis.tlast.val();
                self.out_user.d.next = self.s_axis.tuser.val();
            }
        } else if self.take_in.val() {
            // Output is held: park the incoming beat.
            self.skid_valid.d.next = true;
            self.skid_data.d.next = self.s_axis.tdata.val();
            self.skid_keep.d.next = self.s_axis.tkeep.val();
            self.skid_last.d.next = self.s_axis.tlast.val();
            self.skid_user.d.next = self.s_axis.tuser.val();
        }
        if self.reset.val() {
            self.out_valid.d.next = false;
            self.skid_valid.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_register_synthesizes() {
        let mut uut = AxisRegister::<64, 8>::new();
        uut.connect_all();
        yosys_validate("axis_register", &generate_verilog(&uut)).unwrap();
    }
}
