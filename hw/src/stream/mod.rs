//! Streams and primitives: the AXI-Stream interface and its helpers (this
//! module's items, from `axis.rs`), the register slice, FIFOs, block RAM,
//! leaf primitives, and the GF(2) and XOR-network math the CRC builds on.

mod axis;
pub mod axis_register;
pub mod bram;
pub mod fifo;
pub mod gf2;
pub mod prim;
pub mod xornet;

pub use axis::*;
