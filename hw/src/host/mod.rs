//! The host side: the AXI4 DMA engines and the host interface (queues in
//! host memory, doorbells).

pub mod dma;
pub mod host_if;
