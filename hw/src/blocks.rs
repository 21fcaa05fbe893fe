//! The catalogue of blocks that can be emitted as a Verilog top: what
//! `roce-gen verilog` offers and what the simulation build verilates.

use crate::axis_register::AxisRegister;
use crate::crc32::Crc32;
use crate::roce_rx::RoceRx;
use crate::roce_tx::RoceTx;
use crate::stream::SUPPORTED_WIDTHS;
use crate::tx_header::TxHeader;
use crate::verilog::{ports, rename_top, Port};
use rust_hdl_core::prelude::*;
use std::fmt;

/// A block that can be generated on its own.
#[derive(Debug)]
pub struct BlockSpec {
    pub name: &'static str,
    pub summary: &'static str,
    pub widths: &'static [usize],
}

pub const BLOCKS: &[BlockSpec] = &[
    BlockSpec {
        name: "crc32",
        summary: "streaming CRC-32 (0xEDB88320), settable initial state, one result per packet",
        widths: &SUPPORTED_WIDTHS,
    },
    BlockSpec {
        name: "axis_register",
        summary: "stream register slice (skid buffer), all outputs registered",
        widths: &SUPPORTED_WIDTHS,
    },
    BlockSpec {
        name: "roce_rx",
        summary: "RoCE v2 frame parser: header descriptor with verdict, payload out, drop counters",
        widths: &SUPPORTED_WIDTHS,
    },
    BlockSpec {
        name: "roce_tx",
        summary: "RoCE v2 TX frame builder: descriptor + payload in, wire frame with ICRC out",
        widths: &SUPPORTED_WIDTHS,
    },
    BlockSpec {
        name: "tx_header",
        summary: "RoCE v2 TX header assembly: descriptor in, header bytes and beat counts out",
        widths: &SUPPORTED_WIDTHS,
    },
];

/// A generated block: Verilog plus what a manifest needs.
#[derive(Clone, Debug)]
pub struct Generated {
    pub block: &'static str,
    /// Name of the top module (`<block>_w<width>`).
    pub top: String,
    pub verilog: String,
    pub ports: Vec<Port>,
    /// Parameters as (name, value).
    pub params: Vec<(&'static str, u64)>,
    /// Fixed latency in cycles from input to output, where it has one.
    pub latency: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GenError {
    UnknownBlock(String),
    UnsupportedWidth {
        block: &'static str,
        width: usize,
        valid: &'static [usize],
    },
}

impl fmt::Display for GenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenError::UnknownBlock(b) => {
                let names: Vec<&str> = BLOCKS.iter().map(|b| b.name).collect();
                write!(f, "unknown block '{b}'; valid blocks: {}", names.join(", "))
            }
            GenError::UnsupportedWidth {
                block,
                width,
                valid,
            } => {
                let list: Vec<String> = valid.iter().map(|w| w.to_string()).collect();
                write!(
                    f,
                    "block '{block}' has no width {width}; valid widths: {}",
                    list.join(", ")
                )
            }
        }
    }
}

impl std::error::Error for GenError {}

pub fn spec(block: &str) -> Result<&'static BlockSpec, GenError> {
    BLOCKS
        .iter()
        .find(|b| b.name == block)
        .ok_or_else(|| GenError::UnknownBlock(block.to_string()))
}

fn emit<B: Block>(mut uut: B) -> String {
    uut.connect_all();
    generate_verilog(&uut)
}

fn crc32<const W: usize, const K: usize>() -> (String, Option<usize>) {
    (emit(Crc32::<W, K>::new()), Some(Crc32::<W, K>::latency()))
}

fn axis_register<const W: usize, const K: usize>() -> (String, Option<usize>) {
    (emit(AxisRegister::<W, K>::new()), Some(1))
}

fn tx_header<const W: usize, const K: usize>() -> (String, Option<usize>) {
    (emit(TxHeader::<W, K>::new()), Some(2))
}

fn roce_tx<const W: usize, const K: usize>() -> (String, Option<usize>) {
    (emit(RoceTx::<W, K>::new()), None)
}

/// The receive parser with a 16 KiB frame buffer at every width.
fn roce_rx(width: usize) -> (String, Option<usize>) {
    match width {
        64 => (
            emit(RoceRx::<64, 8, 11>::new()),
            Some(RoceRx::<64, 8, 11>::latency()),
        ),
        128 => (
            emit(RoceRx::<128, 16, 10>::new()),
            Some(RoceRx::<128, 16, 10>::latency()),
        ),
        256 => (
            emit(RoceRx::<256, 32, 9>::new()),
            Some(RoceRx::<256, 32, 9>::latency()),
        ),
        512 => (
            emit(RoceRx::<512, 64, 8>::new()),
            Some(RoceRx::<512, 64, 8>::latency()),
        ),
        _ => unreachable!("width checked against the block's spec"),
    }
}

macro_rules! per_width {
    ($w:expr, $f:ident) => {
        match $w {
            64 => $f::<64, 8>(),
            128 => $f::<128, 16>(),
            256 => $f::<256, 32>(),
            512 => $f::<512, 64>(),
            _ => unreachable!("width checked against the block's spec"),
        }
    };
}

/// Generate `block` at data width `width`.
pub fn generate(block: &str, width: usize) -> Result<Generated, GenError> {
    let spec = spec(block)?;
    if !spec.widths.contains(&width) {
        return Err(GenError::UnsupportedWidth {
            block: spec.name,
            width,
            valid: spec.widths,
        });
    }
    let (raw, latency) = match spec.name {
        "crc32" => per_width!(width, crc32),
        "axis_register" => per_width!(width, axis_register),
        "tx_header" => per_width!(width, tx_header),
        "roce_tx" => per_width!(width, roce_tx),
        "roce_rx" => roce_rx(width),
        other => unreachable!("block {other} listed without a generator"),
    };
    let top = format!("{}_w{}", spec.name, width);
    let verilog = format!(
        "// {top}: roce-hw {} block '{}', W={width}, K={}. Generated by rust-hdl; do not edit.\n{}",
        env!("CARGO_PKG_VERSION"),
        spec.name,
        width / 8,
        rename_top(&raw, &top)
    );
    let ports = ports(&verilog, &top);
    Ok(Generated {
        block: spec.name,
        top,
        verilog,
        ports,
        params: vec![("W", width as u64), ("K", width as u64 / 8)],
        latency,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_names_and_widths_list_valid_values() {
        let e = generate("crc33", 64).unwrap_err();
        assert!(e.to_string().contains("crc32, axis_register"), "{e}");
        let e = generate("crc32", 96).unwrap_err();
        assert_eq!(
            e.to_string(),
            "block 'crc32' has no width 96; valid widths: 64, 128, 256, 512"
        );
    }

    #[test]
    fn every_block_generates_with_ports() {
        for spec in BLOCKS {
            let g = generate(spec.name, 64).unwrap();
            assert!(g.verilog.contains(&format!("module {}(", g.top)));
            assert!(!g.verilog.contains("module top"), "rename missed a module");
            assert!(g.ports.iter().any(|p| p.name == "clock"));
            // A W-wide data port: a stream's, or the header assembly's tail beat.
            let data = if spec.name == "tx_header" {
                "tail_beat"
            } else {
                "$tdata"
            };
            assert!(
                g.ports
                    .iter()
                    .any(|p| p.name.ends_with(data) && p.width == 64),
                "{}: no 64-bit data port",
                spec.name
            );
        }
    }
}
