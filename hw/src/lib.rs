//! roce-hw: the RoCE v2 NIC datapath, described in rust-hdl.
//!
//! Blocks are generic over the stream width `W` (64, 128, 256 or 512 bits)
//! and its keep width `K = W / 8`; [`blocks`] lists what can be emitted as
//! Verilog and is what `roce-gen` and the simulation build use.
//!
//! The source is grouped by subsystem: `stream` (streams and primitives),
//! `crc`, `rx`, `tx`, `transport`, `mr`, `csr`, `host`, `nic` (the top). Every block module
//! is also re-exported at the crate root (`roce_hw::roce_rx`, ...).

pub mod blocks;
pub mod crc;
pub mod csr;
pub mod host;
pub mod mr;
pub mod nic;
pub mod rx;
pub mod stream;
#[cfg(test)]
mod testing;
pub mod transport;
pub mod tx;
pub mod verilog;

pub use crc::crc32;
pub use host::{axi_arb, axil_bus, dma, host_if};
pub use mr::{mr_ctrl, mr_tlb};
pub use nic::{fw_core, qp_events, roce_nic};
pub use rx::{roce_rx, rx_prim};
pub use stream::{axis_register, bram, fifo, gf2, prim, xornet};
pub use transport::{
    qp_timers, rc_transport, req_engine, resp_chk, resp_exec, resp_top, retx_buf, tx_arb,
};
pub use tx::{roce_tx, tx_header};
