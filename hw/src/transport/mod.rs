//! The RC transport: responder (`resp_chk`, `resp_exec`, `resp_top`),
//! requester and completer (`req_engine`), retransmit buffer, timers, the
//! arbiter to `roce_tx`, and all of it as one block (`rc_transport`).

pub mod qp_timers;
pub mod rc_transport;
pub mod req_engine;
pub mod resp_chk;
pub mod resp_exec;
pub mod resp_top;
pub mod retx_buf;
pub mod tx_arb;
