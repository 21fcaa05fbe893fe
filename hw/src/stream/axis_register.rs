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
        // The skid register samples the input on every cycle it is empty,
        // so its enable is the registered `!skid_valid` alone (the beat's
        // enables wait on no handshake); `skid_valid` says whether the
        // sample is a parked beat.
        if !self.skid_valid.q.val() {
            self.skid_data.d.next = self.s_axis.tdata.val();
            self.skid_keep.d.next = self.s_axis.tkeep.val();
            self.skid_last.d.next = self.s_axis.tlast.val();
            self.skid_user.d.next = self.s_axis.tuser.val();
        }
        if self.out_free.val() {
            if self.skid_valid.q.val() {
                // Drain the skid register first (input is stalled meanwhile).
                self.out_valid.d.next = true;
                self.out_data.d.next = self.skid_data.q.val();
                self.out_keep.d.next = self.skid_keep.q.val();
                self.out_last.d.next = self.skid_last.q.val();
                self.out_user.d.next = self.skid_user.q.val();
            } else {
                self.out_valid.d.next = self.take_in.val();
                self.out_data.d.next = self.s_axis.tdata.val();
                self.out_keep.d.next = self.s_axis.tkeep.val();
                self.out_last.d.next = self.s_axis.tlast.val();
                self.out_user.d.next = self.s_axis.tuser.val();
            }
        }
        // A beat is parked while the output holds one its sink does not
        // take and a beat is (or stays) in the skid register.
        self.skid_valid.d.next = self.out_valid.q.val()
            & !self.m_axis.tready.val()
            & (self.skid_valid.q.val() | self.s_axis.tvalid.val());
        if self.reset.val() {
            self.out_valid.d.next = false;
            self.skid_valid.d.next = false;
        }
    }
}

/// The same slice for any [`Synth`] payload (a descriptor, a command):
/// `s_ready` and every `m_*` output come straight from flip-flops, one word
/// per cycle when the sink is ready, latency 1, storage 2 words.
#[derive(LogicBlock)]
pub struct RegSlice<D: Synth> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_valid: Signal<In, Bit>,
    pub s_ready: Signal<Out, Bit>,
    pub s_data: Signal<In, D>,
    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,
    pub m_data: Signal<Out, D>,
    out_valid: DFF<Bit>,
    out_data: DFF<D>,
    skid_valid: DFF<Bit>,
    skid_data: DFF<D>,
    take_in: Signal<Local, Bit>,
    out_free: Signal<Local, Bit>,
}

impl<D: Synth> RegSlice<D> {
    pub fn new() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_valid: Default::default(),
            s_ready: Default::default(),
            s_data: Default::default(),
            m_valid: Default::default(),
            m_ready: Default::default(),
            m_data: Default::default(),
            out_valid: Default::default(),
            out_data: Default::default(),
            skid_valid: Default::default(),
            skid_data: Default::default(),
            take_in: Default::default(),
            out_free: Default::default(),
        }
    }
}

impl<D: Synth> Default for RegSlice<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Synth> Logic for RegSlice<D> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out_valid, out_data, skid_valid, skid_data);
        self.s_ready.next = !self.skid_valid.q.val();
        self.m_valid.next = self.out_valid.q.val();
        self.m_data.next = self.out_data.q.val();
        self.take_in.next = self.s_valid.val() & !self.skid_valid.q.val();
        self.out_free.next = !self.out_valid.q.val() | self.m_ready.val();
        // The skid register samples the input on every cycle it is empty,
        // so its enable is the registered `!skid_valid` alone (a wide
        // payload's enables then wait on no handshake); `skid_valid` says
        // whether the sample is a parked word.
        if !self.skid_valid.q.val() {
            self.skid_data.d.next = self.s_data.val();
        }
        if self.out_free.val() {
            if self.skid_valid.q.val() {
                self.out_valid.d.next = true;
                self.out_data.d.next = self.skid_data.q.val();
            } else {
                self.out_valid.d.next = self.take_in.val();
                self.out_data.d.next = self.s_data.val();
            }
        }
        // A word is parked while the output holds one its sink does not
        // take and a word is (or stays) in the skid register: one LUT of
        // registers and the two handshakes, not through `out_free` (whose
        // net enables the whole output register).
        self.skid_valid.d.next = self.out_valid.q.val()
            & !self.m_ready.val()
            & (self.skid_valid.q.val() | self.s_valid.val());
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

    #[test]
    fn reg_slice_matches_a_queue() {
        // Random offers and sink readiness, cycle by cycle, against the
        // documented behaviour: every word offered while `s_ready` is high
        // comes out once, in order; `s_ready` falls only while a word is
        // parked (two held); a word can leave at the edge after it entered.
        type R = RegSlice<Bits<8>>;
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<R>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<R>| {
            let mut x = sim.init()?;
            let mut held = std::collections::VecDeque::<u64>::new();
            let mut rng = 0x2545_f491_4f6c_dd1du64;
            let (mut next, mut stalls, mut moved) = (0u64, 0, 0);
            x.reset.next = true;
            wait_clock_cycle!(sim, clock, x);
            x.reset.next = false;
            for cycle in 0..4000u64 {
                let (offer, ready) = crate::testing::phased_handshake(&mut rng, cycle, 8);
                sim_assert_eq!(sim, x.s_ready.val(), held.len() < 2, x);
                sim_assert_eq!(sim, x.m_valid.val(), !held.is_empty(), x);
                if let Some(&w) = held.front() {
                    sim_assert_eq!(sim, x.m_data.val().index() as u64, w, x);
                }
                let took = x.s_ready.val() && offer;
                x.s_valid.next = offer;
                x.s_data.next = next.into();
                x.m_ready.next = ready;
                wait_clock_cycle!(sim, clock, x);
                if ready && !held.is_empty() {
                    held.pop_front();
                    moved += 1;
                }
                if took {
                    held.push_back(next);
                    next = (next + 1) & 0xff;
                }
                stalls += (held.len() == 2) as u32;
            }
            sim_assert!(sim, stalls > 50 && moved > 1000, x);
            sim.done(x)
        });
        sim.run(Box::new(R::new()), 200_000).unwrap();
    }

    #[test]
    fn reg_slice_synthesizes() {
        let mut uut = RegSlice::<Bits<40>>::new();
        uut.connect_all();
        yosys_validate("reg_slice", &generate_verilog(&uut)).unwrap();
    }
}
