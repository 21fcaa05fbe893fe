//! Leaf primitives whose Verilog body is generated from Rust data.
//!
//! rust-hdl kernels cannot assemble a vector bit by bit or replicate a bit
//! (no concatenation, DESIGN §4), so the two datapath leaves that need it are
//! written the way rust-hdl writes its own `DFF` and `RAM`: the module
//! header comes from rust-hdl, the body from `Verilog::Custom`, and
//! `update()` is the same function in Rust for rust-hdl's simulator. Each
//! is a few lines of combinational Verilog; all state lives in the kernels
//! that use them.

use rust_hdl_core::prelude::*;

/// `y = A · x` over GF(2) for a constant `M × N` matrix `A`: output bit `j`
/// is the parity of `x & row[j]`. Yosys turns each row into a balanced XOR
/// tree; constant rows with no or one input become wires.
#[derive(LogicBlock)]
pub struct XorMatrix<const N: usize, const M: usize> {
    pub x: Signal<In, Bits<N>>,
    pub y: Signal<Out, Bits<M>>,
    /// Row masks, `M` rows of `ceil(N / 64)` little-endian words.
    _rows: Vec<Vec<u64>>,
}

impl<const N: usize, const M: usize> XorMatrix<N, M> {
    /// `rows[j]` is the input mask of output bit `j` (see [`crate::gf2::rows`]).
    pub fn new(rows: Vec<Vec<u64>>) -> Self {
        assert_eq!(rows.len(), M, "XorMatrix needs one row per output bit");
        for row in &rows {
            assert_eq!(row.len(), N.div_ceil(64), "row width must cover N inputs");
            if N % 64 != 0 {
                assert_eq!(row[N / 64] >> (N % 64), 0, "row has bits beyond N");
            }
        }
        Self {
            x: Default::default(),
            y: Default::default(),
            _rows: rows,
        }
    }

    /// The function this block computes, for rust-hdl's simulator and tests.
    pub fn eval(&self, x: Bits<N>) -> Bits<M> {
        (0..M).fold(Bits::<M>::default(), |y, j| {
            let parity = self.inputs_of(j).fold(false, |p, i| p ^ x.get_bit(i));
            y.replace_bit(j, parity)
        })
    }

    fn inputs_of(&self, j: usize) -> impl Iterator<Item = usize> + '_ {
        (0..N).filter(move |i| (self._rows[j][i / 64] >> (i % 64)) & 1 == 1)
    }
}

/// A Verilog literal of `width` bits from little-endian 64-bit words.
pub fn verilog_literal(width: usize, words: &[u64]) -> String {
    let hex: String = words.iter().rev().map(|w| format!("{w:016x}")).collect();
    let hex = hex.trim_start_matches('0');
    format!("{width}'h{}", if hex.is_empty() { "0" } else { hex })
}

impl<const N: usize, const M: usize> Logic for XorMatrix<N, M> {
    fn update(&mut self) {
        self.y.next = self.eval(self.x.val());
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    fn hdl(&self) -> Verilog {
        let mut body = String::from("always @(*) begin\n");
        for j in 0..M {
            let inputs: Vec<usize> = self.inputs_of(j).collect();
            let rhs = match inputs.as_slice() {
                [] => "1'b0".to_string(),
                [i] => format!("x[{i}]"),
                _ => format!("^(x & {})", verilog_literal(N, &self._rows[j])),
            };
            body.push_str(&format!("    y[{j}] = {rhs};\n"));
        }
        body.push_str("end\n");
        Verilog::Custom(body)
    }
}

/// `y = data` with every byte whose `keep` bit is clear forced to zero
/// (AXI-Stream null bytes carry no defined value).
#[derive(LogicBlock, Default)]
pub struct ByteMask<const W: usize, const K: usize> {
    pub data: Signal<In, Bits<W>>,
    pub keep: Signal<In, Bits<K>>,
    pub y: Signal<Out, Bits<W>>,
}

impl<const W: usize, const K: usize> ByteMask<W, K> {
    pub fn new() -> Self {
        assert_eq!(K * 8, W, "ByteMask: K must be W / 8");
        Self::default()
    }
}

impl<const W: usize, const K: usize> Logic for ByteMask<W, K> {
    fn update(&mut self) {
        let mut y = self.data.val();
        let keep = self.keep.val();
        for byte in 0..K {
            if !keep.get_bit(byte) {
                for bit in 0..8 {
                    y = y.replace_bit(byte * 8 + bit, false);
                }
            }
        }
        self.y.next = y;
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    fn hdl(&self) -> Verilog {
        let spread: Vec<String> = (0..K)
            .rev()
            .map(|b| format!("{{8{{keep[{b}]}}}}"))
            .collect();
        Verilog::Custom(format!(
            "always @(*) begin\n    y = data & {{{}}};\nend\n",
            spread.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_formatting() {
        assert_eq!(verilog_literal(64, &[0x1234]), "64'h1234");
        assert_eq!(verilog_literal(128, &[1, 0xab]), "128'hab0000000000000001");
        assert_eq!(verilog_literal(8, &[0]), "8'h0");
    }

    #[test]
    fn xor_matrix_rust_model() {
        // Rows: y0 = x0 ^ x1, y1 = x2, y2 = 0.
        let m = XorMatrix::<8, 3>::new(vec![vec![0b011], vec![0b100], vec![0]]);
        for x in 0..256u64 {
            let expect = ((x ^ (x >> 1)) & 1) | (((x >> 2) & 1) << 1);
            assert_eq!(m.eval(x.into()), Bits::<3>::from(expect), "x = {x:#b}");
        }
    }

    #[test]
    fn xor_matrix_synthesizes() {
        let mut m = XorMatrix::<70, 2>::new(vec![vec![u64::MAX, 0x3f], vec![1 << 5, 0]]);
        m.connect_all();
        let v = generate_verilog(&m);
        assert!(v.contains("y[0] = ^(x & 70'h3fffffffffffffffff);"), "{v}");
        assert!(v.contains("y[1] = x[5];"), "{v}");
        yosys_validate("xor_matrix", &v).unwrap();
    }

    #[test]
    fn byte_mask_synthesizes() {
        let mut m = ByteMask::<64, 8>::new();
        m.connect_all();
        let v = generate_verilog(&m);
        assert!(v.contains("{8{keep[7]}}"), "{v}");
        yosys_validate("byte_mask", &v).unwrap();
    }
}
