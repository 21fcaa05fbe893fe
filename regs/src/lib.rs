//! roce-regs: the one register map of roce-hdl (DESIGN §6.7).
//!
//! The CSR window is a set of [`Block`]s of 32-bit registers at byte
//! offsets, for an AXI4-Lite slave: `cfg` (global configuration), `mbox`
//! (the QP-modify command mailbox), `ctr` (per-reason counters), `mr`
//! (memory-region commands for the MR table, [`MrOp`]) and `qp`
//! (the QP context table, [`QP_COUNT`] contexts of [`QP_STRIDE`] bytes).
//! Every block starts with its `id` word (type and version).
//!
//! Each block is a module ([`cfg`], [`mbox`], [`ctr`], [`mr`], [`qp`]) with one
//! module per register: `REG` (the [`Register`] as data), `ADDR` (its offset
//! in the window), `addr(i)` for arrays and a [`Field`] const per field
//! with `get`/`set`. [`BLOCKS`] is the whole map for generators
//! (`roce-gen regs`), and the enums ([`QpState`], [`ResultCode`],
//! [`Counter`], ...) give the values fields hold, each with a name table.
//!
//! Registers are lower case, fields UPPER case (tock-registers style).
#![no_std]
#![deny(unsafe_code)]

#[macro_use]
pub mod model;
mod map;
pub mod queue;
mod values;

pub use map::*;
pub use model::{Access, Block, EnumDesc, EnumValue, Field, Register};
pub use queue::{QField, QueueFormat, FORMATS, QUEUE_ENUMS};
pub use values::*;
