//! Receive: the RoCE v2 frame parser and classifier and its primitives.

pub mod roce_rx;
pub mod rx_prim;
