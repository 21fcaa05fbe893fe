//! Transmit: the RoCE v2 frame builder and its header assembly.

pub mod roce_tx;
pub mod tx_header;
