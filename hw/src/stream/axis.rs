//! AXI-Stream shaped interfaces (DESIGN §3).
//!
//! A beat moves when `tvalid && tready` at a rising clock edge. `tdata` byte
//! `i` is bits `[8i+7:8i]` and is the `i`-th byte of the packet within the
//! beat; `tkeep[i]` marks it valid. Every beat but the last carries all `K`
//! bytes; the last (`tlast`) carries `1..=K` bytes packed from byte 0
//! (`tkeep` = `2^n - 1`). `tuser` is one error/drop bit, meaningful on the
//! last beat and ORed over the packet by blocks that forward it.
//!
//! Once a source raises `tvalid` it holds the beat unchanged until the
//! handshake; `tready` may depend on `tvalid` in no block of this project
//! (so any two blocks can be joined without a combinational loop).
//!
//! `W` is the data width in bits and `K = W / 8` the keep width; stable Rust
//! cannot derive one from the other inside a type (DESIGN §4), so blocks
//! take both and check `K * 8 == W` in `new()`. Use the per-width aliases.

use rust_hdl_core::prelude::*;

/// The receiving end of a stream, as seen from the block that receives.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "StreamOut"]
pub struct StreamIn<const W: usize, const K: usize> {
    pub tdata: Signal<In, Bits<W>>,
    pub tkeep: Signal<In, Bits<K>>,
    pub tlast: Signal<In, Bit>,
    pub tuser: Signal<In, Bit>,
    pub tvalid: Signal<In, Bit>,
    pub tready: Signal<Out, Bit>,
}

/// The sending end of a stream, as seen from the block that sends.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "StreamIn"]
pub struct StreamOut<const W: usize, const K: usize> {
    pub tdata: Signal<Out, Bits<W>>,
    pub tkeep: Signal<Out, Bits<K>>,
    pub tlast: Signal<Out, Bit>,
    pub tuser: Signal<Out, Bit>,
    pub tvalid: Signal<Out, Bit>,
    pub tready: Signal<In, Bit>,
}

/// Check a `(W, K)` pair; every stream block calls this from `new()`.
pub fn check_width(block: &str, w: usize, k: usize) {
    assert!(
        SUPPORTED_WIDTHS.contains(&w),
        "{block}: data width {w} not in {SUPPORTED_WIDTHS:?}"
    );
    assert_eq!(k * 8, w, "{block}: keep width must be W / 8");
}

/// The datapath widths the project builds and tests (DESIGN §3).
pub const SUPPORTED_WIDTHS: [usize; 4] = [64, 128, 256, 512];

pub type StreamIn64 = StreamIn<64, 8>;
pub type StreamIn128 = StreamIn<128, 16>;
pub type StreamIn256 = StreamIn<256, 32>;
pub type StreamIn512 = StreamIn<512, 64>;
pub type StreamOut64 = StreamOut<64, 8>;
pub type StreamOut128 = StreamOut<128, 16>;
pub type StreamOut256 = StreamOut<256, 32>;
pub type StreamOut512 = StreamOut<512, 64>;
