//! roce-hw: the RoCE v2 NIC datapath, described in rust-hdl.
//!
//! Blocks are generic over the stream width `W` (64, 128, 256 or 512 bits)
//! and its keep width `K = W / 8`; [`blocks`] lists what can be emitted as
//! Verilog and is what `roce-gen` and the simulation build use.

pub mod axis_register;
pub mod blocks;
pub mod bram;
pub mod crc32;
pub mod csr;
pub mod dma;
pub mod fifo;
pub mod gf2;
pub mod host_if;
pub mod mr_ctrl;
pub mod mr_tlb;
pub mod prim;
pub mod qp_timers;
pub mod rc_transport;
pub mod req_engine;
pub mod resp_chk;
pub mod resp_exec;
pub mod resp_top;
pub mod retx_buf;
pub mod roce_rx;
pub mod roce_tx;
pub mod rx_prim;
pub mod stream;
#[cfg(test)]
mod testing;
pub mod tx_arb;
pub mod tx_header;
pub mod verilog;
pub mod xornet;
