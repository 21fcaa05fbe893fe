//! The host side: the AXI4 DMA engines (and, next, the host queues).

pub mod dma;
