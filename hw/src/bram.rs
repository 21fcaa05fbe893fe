//! Block RAM leaf: simple dual-port memory with a synchronous write and a
//! registered read with a read enable (the output holds while the enable is
//! low), written so Yosys infers DP16KD on ECP5 and RAMB18/36 on 7-series.
//!
//! rust-hdl's `RAM` widget has no read enable; a pipeline that stalls needs
//! one so the word it read stays on the output. Read-during-write of one
//! address returns the old word.

use rust_hdl_core::prelude::*;
use rust_hdl_core::timing::TimingInfo;

/// `2^A` words of `D`, one write and one registered read per cycle.
#[derive(LogicBlock)]
pub struct Bram<D: Synth, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub write_enable: Signal<In, Bit>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_data: Signal<In, D>,
    pub read_enable: Signal<In, Bit>,
    pub read_address: Signal<In, Bits<A>>,
    pub read_data: Signal<Out, D>,
    _mem: Vec<D>,
    _out: D,
}

impl<D: Synth, const A: usize> Bram<D, A> {
    pub fn new() -> Self {
        assert!(
            (1..=16).contains(&A),
            "Bram: address width {A} out of 1..=16"
        );
        Self {
            clock: Default::default(),
            write_enable: Default::default(),
            write_address: Default::default(),
            write_data: Default::default(),
            read_enable: Default::default(),
            read_address: Default::default(),
            read_data: Default::default(),
            _mem: vec![D::default(); 1 << A],
            _out: D::default(),
        }
    }
}

impl<D: Synth, const A: usize> Default for Bram<D, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Synth, const A: usize> Logic for Bram<D, A> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.read_enable.val() {
                self._out = self._mem[self.read_address.val().index()];
            }
            if self.write_enable.val() {
                self._mem[self.write_address.val().index()] = self.write_data.val();
            }
        }
        self.read_data.next = self._out;
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "reg [{msb}:0] mem [0:{last}];\n\nalways @(posedge clock) begin\n    if (write_enable) mem[write_address] <= write_data;\n    if (read_enable) read_data <= mem[read_address];\nend\n",
            msb = D::BITS - 1,
            last = (1usize << A) - 1
        ))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "bram".into(),
            clock: "clock".into(),
            inputs: vec![
                "write_enable".into(),
                "write_address".into(),
                "write_data".into(),
                "read_enable".into(),
                "read_address".into(),
            ],
            outputs: vec!["read_data".into()],
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bram_synthesizes() {
        let mut m = Bram::<Bits<40>, 9>::new();
        m.connect_all();
        let v = generate_verilog(&m);
        assert!(v.contains("if (read_enable) read_data <= mem[read_address];"));
        yosys_validate("bram", &v).unwrap();
    }
}
