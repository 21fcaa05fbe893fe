//! The NIC top and its glue: `roce_nic` (the whole NIC), `qp_events`
//! (state changes and receive credits to the transport), `fw_core`
//! (PicoRV32 and its RAM).

pub mod fw_core;
pub mod qp_events;
pub mod roce_nic;
