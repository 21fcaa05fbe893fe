//! The host side: the AXI4 DMA engines, the host interface (queues in
//! host memory, doorbells) and the interconnect (the AXI4 arbiter, the
//! AXI4-Lite register bus).

pub mod axi_arb;
pub mod axil_bus;
pub mod dma;
pub mod host_if;
