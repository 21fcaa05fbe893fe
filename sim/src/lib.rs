//! roce-sim: Verilator models of the roce-hw blocks, and the bus-functional
//! models that drive them from Rust test benches.
//!
//! - [`models`]: one typed wrapper per verilated top (generated at build
//!   time by `build/bridge.rs`): `set_*`/`get_*` per port (wide ports as
//!   `u32` word arrays, least significant word first), `eval()`, `tick()`,
//!   and an adapter per stream port.
//! - [`axil`]: an AXI4-Lite master with random gaps and backpressure.
//! - [`axi_mem`]: an AXI4 slave memory (latency, backpressure, rule checks).
//! - [`dma`]: the DMA engines' port traits and benches.
//! - [`axis`]: stream beats and the port traits the adapters implement.
//! - [`bfm`]: a seeded packet source with random idle cycles and a seeded
//!   packet sink with random backpressure that checks the AXI-Stream rules.
//! - [`model`]: the common model trait and `ROCE_TRACE` handling.
//! - [`mr_model`]: the memory-region table model the `mr_tlb` block is checked against.
//! - [`retx`]: the retransmit buffer's port trait, reference model and bench.
//! - [`fw`]: the roce-fw ELF on a softcore model (ISS) over the Verilated
//!   CSR block, and the host's side of the command mailbox.
//! - [`verbs`]: a host library in the ibverbs shapes over the whole
//!   Verilated NIC (`roce_nic`, with its PicoRV32 firmware), and that NIC
//!   as one of `roce-sim run`'s (`--a nic`).
//! - [`capture`]: streaming pcap/pcapng input and the `roce-sim parse` pipeline.
//! - [`replay`]: a capture's requests fed to the `roce-transport` model as
//!   our responder, its answers compared with the real ones.

/// A block's Verilator models by width, listed once: `$dut!` implements
/// the block's trait for each model, and the list gives `WIDTHS` and
/// `dut(width)` (used by `rx` and `tx`).
macro_rules! models_by_width {
    ($block:literal, $tr:ident, $dut:ident: $($w:literal => $t:ident),* $(,)?) => {
        $($dut!($t);)*

        /// Widths with a model of this block.
        pub const WIDTHS: [usize; [$($w),*].len()] = [$($w),*];

        /// The model of width `width` (one of [`WIDTHS`]).
        pub fn dut(width: usize) -> Box<dyn $tr> {
            match width {
                $($w => Box::new($t::new()),)*
                w => panic!("no {} model at width {w} (have {WIDTHS:?})", $block),
            }
        }
    };
}

pub mod axi_mem;
pub mod axil;
pub mod axis;
pub mod bfm;
pub mod capture;
pub mod descriptors;
pub mod dma;
pub mod fuzz;
pub mod fw;
pub mod host_if;
pub mod host_rings;
pub mod interop;
pub mod model;
pub mod mr_model;
pub mod nic;
pub mod replay;
pub mod responder;
pub mod retx;
pub mod rng;
pub mod run;
pub mod rx;
pub mod sweep;
pub mod traffic;
pub mod transport_fuzz;
pub mod tx;
#[cfg(roce_picorv32)]
pub mod verbs;

/// The value of parameter `name` of a generated model (`Model::PARAMS`,
/// from the roce-hw block catalogue): the one source of the hardware's
/// sizes and codes on this side of the build.
pub fn param(p: &[(&str, u64)], name: &str) -> u64 {
    p.iter()
        .find(|x| x.0 == name)
        .unwrap_or_else(|| panic!("model parameter {name} not in the catalogue"))
        .1
}

/// Verilator models, generated from the roce-hw block catalogue.
#[allow(
    clippy::unnecessary_cast,
    clippy::new_without_default,
    clippy::needless_return
)]
pub mod models {
    include!(concat!(env!("OUT_DIR"), "/models.rs"));
}
