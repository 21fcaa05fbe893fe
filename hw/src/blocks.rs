//! The catalogue of blocks that can be emitted as a Verilog top: what
//! `roce-gen verilog` offers and what the simulation build verilates.

use crate::axi_arb::{AxiArb2, ORDER_BITS};
use crate::axil_bus::AxilBus;
use crate::axis_register::AxisRegister;
use crate::crc32::Crc32;
use crate::csr::{CsrDefault, CsrSmall, QpStore};
use crate::dma::{DmaRd, DmaWr, RD_BUF_BEATS, RD_OUTSTANDING, WR_OUTSTANDING};
use crate::host_if::HostIf;
use crate::mr_ctrl::{MrCtrlDefault, MrCtrlSmall};
use crate::mr_tlb::{MrTlbDefault, MrTlbSmall};
use crate::qp_timers::{QpTimersDefault, QpTimersSmall, DEFAULT_TICK, SMALL_TICK};
use crate::rc_transport::{
    RcTransport128, RcTransport256, RcTransport512, RcTransport64, RcTransportSmall512,
    RcTransportSmall64,
};
use crate::req_engine::{
    ReqEngine128, ReqEngine256, ReqEngine512, ReqEngine64, ReqEngineSmall512, ReqEngineSmall64,
};
use crate::resp_chk::{RespChkDefault, RespChkSmall};
use crate::resp_exec::{RespExec128, RespExec256, RespExec512, RespExec64};
use crate::resp_top::{
    RespTop128, RespTop256, RespTop512, RespTop64, RespTopSmall512, RespTopSmall64,
};
use crate::retx_buf::{
    RetxBuf128, RetxBuf256, RetxBuf512, RetxBuf64, RetxBufSmall512, RetxBufSmall64,
};
use crate::roce_nic::{RoceNic512, RoceNic64};
use crate::roce_rx::RoceRx;
use crate::roce_tx::RoceTx;
use crate::stream::SUPPORTED_WIDTHS;
use crate::tx_arb::{TxArb, TxArbTx};
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
    BlockSpec {
        name: "mr_tlb",
        summary: "memory-region table + TLB (key/PD/access/bounds, VA->PA chunks); \
                  'width' = MR entries: 4096 default build, 64 small test build",
        widths: &MR_TLB_SIZES,
    },
    BlockSpec {
        name: "csr",
        summary: "CSR block: AXI4-Lite slave decoding the roce-regs map, counters, \
                  QP context table in block RAM with a registered datapath read port \
                  (2 cycles, block RAM output register); 'width' = QP contexts \
                  (256 default build)",
        widths: &CSR_SIZES,
    },
    BlockSpec {
        name: "csr_bram",
        summary: "csr with the datapath copy in block RAM read without its output \
                  register (1-cycle read port); 'width' = QP contexts (64 test build)",
        widths: &CSR_STORE_SIZES,
    },
    BlockSpec {
        name: "csr_lutram",
        summary: "csr with the datapath copy in LUT RAM (1-cycle read port); \
                  'width' = QP contexts (64 test build)",
        widths: &CSR_STORE_SIZES,
    },
    BlockSpec {
        name: "csr_nic",
        summary: "csr as the NIC top uses it: three datapath context read ports \
                  (responder, requester, tx_arb; 2 cycles each, own block RAM copies), \
                  cfg outputs for tx_arb, context-write notification; \
                  'width' = QP contexts (64)",
        widths: &CSR_NIC_SIZES,
    },
    BlockSpec {
        name: "mr_ctrl",
        summary: "csr + mr_tlb: MRs and page tables programmed through the roce-regs \
                  'mr' block over AXI4-Lite, grants on the datapath port; \
                  'width' = MR entries as mr_tlb (256 QP contexts)",
        widths: &MR_TLB_SIZES,
    },
    BlockSpec {
        name: "qp_timers",
        summary: "transport timers (ACK timeout, RNR wait) for every QP: deadlines in \
                  block RAM banks scanned several per cycle, expiries queued; \
                  'width' = timer entries: 2048 default build (1024 QPs x 2), \
                  128 small test build",
        widths: &QP_TIMERS_SIZES,
    },
    BlockSpec {
        name: "retx_buf",
        summary: "requester retransmit buffer: shared pool of packet slots in block RAM, \
                  per-QP lists, freed by cumulative ACKs, go-back-N replay; \
                  1024 QPs, 64 slots of 4096 bytes, 128-bit descriptor",
        widths: &SUPPORTED_WIDTHS,
    },
    BlockSpec {
        name: "retx_buf_small",
        summary: "retx_buf test build: 64 QPs, 16 slots of 1024 bytes, 64-bit descriptor",
        widths: &RETX_SMALL_WIDTHS,
    },
    BlockSpec {
        name: "resp_chk",
        summary: "RC responder header engine: QP/PSN/opcode-sequence/access/resource/length \
                  checks in IBTA 9.7.5 order, per-QP state in block RAM, one command per \
                  header; 'width' = QPs (1024 default build, 64 test build)",
        widths: &RESP_CHK_SIZES,
    },
    BlockSpec {
        name: "resp_exec",
        summary: "RC responder executor: resp_chk's commands to mr_tlb checks, DMA writes and \
                  reads, receive WQEs and completions, responder resources (READ/atomic \
                  replay), ACK/NAK/READ response/ATOMIC ACK descriptors; 1024 QPs",
        widths: &SUPPORTED_WIDTHS,
    },
    BlockSpec {
        name: "resp_top",
        summary: "the RC responder: resp_chk + resp_exec + dma_wr + dma_rd; headers and \
                  payloads from roce_rx in, AXI4 master, response descriptors and payloads \
                  for tx_arb out; 1024 QPs",
        widths: &SUPPORTED_WIDTHS,
    },
    BlockSpec {
        name: "resp_top_small",
        summary: "resp_top test build: 64 QPs",
        widths: &RETX_SMALL_WIDTHS,
    },
    BlockSpec {
        name: "req_engine",
        summary: "RC requester and completer: work requests to request descriptors at PMTU \
                  (PSNs, AckReq, max_rd_atomic), payload reads through mr_tlb and dma_rd, \
                  ACK/NAK/RNR/READ response/ATOMIC ACK processing, go-back-N by \
                  regeneration, qp_timers arming, send completions; 1024 QPs, 4 WQEs each",
        widths: &SUPPORTED_WIDTHS,
    },
    BlockSpec {
        name: "req_engine_small",
        summary: "req_engine test build: 64 QPs, 8 WQEs each",
        widths: &RETX_SMALL_WIDTHS,
    },
    BlockSpec {
        name: "tx_arb",
        summary: "transport packets to roce_tx: responder and requester descriptor ports \
                  (responses first, bounded), QP context read for the path (MACs, IP \
                  version and addresses, P_Key, DestQP, UDP source port), payload packets \
                  forwarded in take order; 1024 QPs",
        widths: &SUPPORTED_WIDTHS,
    },
    BlockSpec {
        name: "tx_arb_tx",
        summary: "tx_arb + roce_tx (test build, 64 QPs): transport descriptors in, \
                  wire frames out",
        widths: &TX_ARB_TX_WIDTHS,
    },
    BlockSpec {
        name: "rc_transport",
        summary: "the RC transport: roce_rx, dispatch (responses to req_engine, the rest to \
                  resp_top, payloads routed in order), resp_top, req_engine with its DMA \
                  engines, qp_timers, one shared mr_tlb, tx_arb + roce_tx; MAC frame streams, \
                  two AXI4 masters, three context read ports; 1024 QPs, 4096 MRs",
        widths: &SUPPORTED_WIDTHS,
    },
    BlockSpec {
        name: "rc_transport_small",
        summary: "rc_transport test build: 64 QPs (8 WQEs each), 64 MRs, 128 timers",
        widths: &RETX_SMALL_WIDTHS,
    },
    BlockSpec {
        name: "dma_wr",
        summary: "AXI4 master write DMA: commands (addr, len, last/discard/imm) take bytes of \
                  the payload stream (or an 8-byte immediate) to memory, unaligned, bursts \
                  split at 4 KiB, up to 17 awaiting B, one completion per command",
        widths: &SUPPORTED_WIDTHS,
    },
    BlockSpec {
        name: "dma_rd",
        summary: "AXI4 master read DMA: commands (addr, len, last) read memory into one dense \
                  stream per packet, realigned to lane 0, ARs bounded by a 64-beat R buffer",
        widths: &SUPPORTED_WIDTHS,
    },
    BlockSpec {
        name: "host_if",
        summary: "host interface: the db/hq register blocks, send WQE fetch (doorbell, DMA read, \
                  decode to req_engine work requests), receive WQE lookups and CQE writes \
                  (phase bit, overrun, arm/event) through its own dma_rd/dma_wr (one AXI4 \
                  master); 256 QPs, 256 CQs",
        widths: &SUPPORTED_WIDTHS,
    },
    BlockSpec {
        name: "roce_nic",
        summary: "the whole NIC (64 QPs, 64 CQs): rc_transport, host_if, csr (three context \
                  ports, configuration to tx_arb), qp_events, PicoRV32 (fw_core; picorv32.v \
                  from scripts/setup is added beside this Verilog), the AXI4-Lite bus and the \
                  AXI4 arbiters onto one DMA master",
        widths: &RETX_SMALL_WIDTHS,
    },
    BlockSpec {
        name: "host_if_small",
        summary: "host_if test build: 64 QPs, 64 CQs",
        widths: &RETX_SMALL_WIDTHS,
    },
    BlockSpec {
        name: "axi_arb",
        summary: "AXI4 arbiter, two masters onto one (no IDs): round-robin registered AR/AW, \
                  R/W/B routed in request order through order FIFOs (33 bursts each way), \
                  one beat a cycle",
        widths: &SUPPORTED_WIDTHS,
    },
    BlockSpec {
        name: "axil_bus",
        summary: "register bus: host and core AXI4-Lite ports onto the CSR block's AXI4-Lite \
                  port and host_if's register port (db/hq blocks), one transaction at a time; \
                  'width' = data width 32",
        widths: &AXIL_BUS_WIDTHS,
    },
];

/// The `axil_bus` build: its data width.
pub const AXIL_BUS_WIDTHS: [usize; 1] = [32];

/// The `tx_arb_tx` (test build) widths.
pub const TX_ARB_TX_WIDTHS: [usize; 2] = [64, 512];

/// The `qp_timers` builds, selected by the catalogue's size argument: timer
/// entries.
pub const QP_TIMERS_SIZES: [usize; 2] = [128, 2048];

/// The `retx_buf_small` (test build) widths.
pub const RETX_SMALL_WIDTHS: [usize; 2] = [64, 512];

/// The `resp_chk` builds, selected by the catalogue's size argument: QPs.
pub const RESP_CHK_SIZES: [usize; 2] = [64, 1024];

/// The `csr` builds, selected by the catalogue's size argument: QP contexts.
pub const CSR_SIZES: [usize; 1] = [roce_regs::QP_COUNT as usize];

/// The `csr_bram` and `csr_lutram` builds (the other [`QpStore`] forms of
/// the datapath copy, for simulation): QP contexts.
pub const CSR_STORE_SIZES: [usize; 1] = [64];

/// The `csr_nic` builds (three datapath read ports, the default store): QP
/// contexts.
pub const CSR_NIC_SIZES: [usize; 1] = [64];

/// The `mr_tlb` builds, selected by the catalogue's size argument (the
/// `--width` of `roce-gen`): MR-table entries.
pub const MR_TLB_SIZES: [usize; 2] = [64, 4096];

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
    (
        emit(TxHeader::<W, K>::new()),
        Some(crate::tx_header::LATENCY),
    )
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

/// `mr_tlb` Verilog, hit latency and parameters (N MRs, TLB entries, PT entries).
fn mr_tlb(size: usize) -> (String, Option<usize>, Vec<(&'static str, u64)>) {
    macro_rules! build {
        ($t:ty) => {
            (
                emit(<$t>::new()),
                Some(<$t>::HIT_LATENCY),
                vec![
                    ("W", size as u64),
                    ("N", <$t>::MRS as u64),
                    ("TLB", <$t>::TLB_ENTRIES as u64),
                    ("PT", <$t>::PT_ENTRIES as u64),
                ],
            )
        };
    }
    match size {
        64 => build!(MrTlbSmall),
        4096 => build!(MrTlbDefault),
        _ => unreachable!("size checked against the block's spec"),
    }
}

/// `mr_ctrl` Verilog, hit latency and parameters.
fn mr_ctrl(size: usize) -> (String, Option<usize>, Vec<(&'static str, u64)>) {
    macro_rules! build {
        ($t:ty, $tlb:ty) => {
            (
                emit(<$t>::new(roce_regs::QP_COUNT)),
                Some(<$tlb>::HIT_LATENCY),
                vec![
                    ("W", size as u64),
                    ("N", <$tlb>::MRS as u64),
                    ("TLB", <$tlb>::TLB_ENTRIES as u64),
                    ("PT", <$tlb>::PT_ENTRIES as u64),
                    ("QPS", roce_regs::QP_COUNT as u64),
                    ("COUNTER_LANES", crate::csr::COUNTER_LANES as u64),
                ],
            )
        };
    }
    match size {
        64 => build!(MrCtrlSmall, MrTlbSmall),
        4096 => build!(MrCtrlDefault, MrTlbDefault),
        _ => unreachable!("size checked against the block's spec"),
    }
}

/// `qp_timers` Verilog (`size` entries), no fixed latency, parameters.
fn qp_timers(size: usize) -> (String, Option<usize>, Vec<(&'static str, u64)>) {
    macro_rules! build {
        ($t:ty, $tick:expr) => {
            (
                emit(<$t>::new($tick)),
                None,
                vec![
                    ("W", size as u64),
                    ("ENTRIES", <$t>::ENTRIES as u64),
                    ("LANES", <$t>::LANES as u64),
                    ("SCAN_CYCLES", <$t>::SCAN_CYCLES as u64),
                    ("TICK_CYCLES", $tick as u64),
                ],
            )
        };
    }
    match size {
        128 => build!(QpTimersSmall, SMALL_TICK),
        2048 => build!(QpTimersDefault, DEFAULT_TICK),
        _ => unreachable!("size checked against the block's spec"),
    }
}

/// `csr` Verilog (N = `size` contexts, `ports` copies of the datapath
/// store in `store`), AXI read latency and parameters.
fn csr(
    size: usize,
    store: QpStore,
    ports: usize,
) -> (String, Option<usize>, Vec<(&'static str, u64)>) {
    macro_rules! build {
        ($t:ty) => {{
            let m = <$t>::with_ports(size as u32, store, ports);
            let params = vec![
                ("W", size as u64),
                ("N", m.qps() as u64),
                ("QP_CTX_BITS", crate::csr::QP_CTX_BITS as u64),
                ("COUNTER_LANES", crate::csr::COUNTER_LANES as u64),
                ("WRITE_LATENCY", <$t>::WRITE_LATENCY as u64),
                ("QP_READ_LATENCY", m.qp_read_latency() as u64),
                ("QP_READ_PORTS", m.qp_read_ports() as u64),
                ("CTX_WR_LATENCY", <$t>::CTX_WR_LATENCY as u64),
            ];
            (emit(m), Some(<$t>::READ_LATENCY), params)
        }};
    }
    match size {
        64 => build!(CsrSmall),
        256 => build!(CsrDefault),
        _ => unreachable!("size checked against the block's spec"),
    }
}

/// `retx_buf` Verilog and parameters; `small` selects the test build.
fn retx_buf(width: usize, small: bool) -> (String, Option<usize>, Vec<(&'static str, u64)>) {
    macro_rules! build {
        ($t:ty) => {
            (
                emit(<$t>::new()),
                None,
                vec![
                    ("W", width as u64),
                    ("K", width as u64 / 8),
                    ("QPS", <$t>::QPS as u64),
                    ("SLOTS", <$t>::SLOTS as u64),
                    ("PMTU", <$t>::SLOT_BYTES as u64),
                    ("META", <$t>::META_BITS as u64),
                    ("INIT_CYCLES", <$t>::INIT_CYCLES as u64),
                ],
            )
        };
    }
    match (width, small) {
        (64, false) => build!(RetxBuf64),
        (128, false) => build!(RetxBuf128),
        (256, false) => build!(RetxBuf256),
        (512, false) => build!(RetxBuf512),
        (64, true) => build!(RetxBufSmall64),
        (512, true) => build!(RetxBufSmall512),
        _ => unreachable!("width checked against the block's spec"),
    }
}

/// `resp_chk` Verilog, latency and parameters (QPs).
fn resp_chk(size: usize) -> (String, Option<usize>, Vec<(&'static str, u64)>) {
    let params = vec![
        ("W", size as u64),
        ("QPS", size as u64),
        ("QP_CTX_BITS", crate::csr::QP_CTX_BITS as u64),
        ("QP_READ_LATENCY", 2),
        ("CMD_CAPACITY", crate::resp_chk::CMD_CAPACITY),
        ("CMD_EXECUTE", crate::resp_chk::CMD_EXECUTE),
        ("CMD_DUPLICATE", crate::resp_chk::CMD_DUPLICATE),
        ("CMD_NAK", crate::resp_chk::CMD_NAK),
        ("CMD_RNR_NAK", crate::resp_chk::CMD_RNR_NAK),
        ("CMD_DROP", crate::resp_chk::CMD_DROP),
        ("CMD_RESET", crate::resp_chk::CMD_RESET),
        ("CMD_FLUSH", crate::resp_chk::CMD_FLUSH),
        ("EV_INIT", crate::resp_chk::EV_INIT),
        ("EV_POST_RECV", crate::resp_chk::EV_POST_RECV),
        ("EV_CLEAR", crate::resp_chk::EV_CLEAR),
        ("EV_ERROR", crate::resp_chk::EV_ERROR),
    ];
    let v = match size {
        64 => emit(RespChkSmall::new()),
        1024 => emit(RespChkDefault::new()),
        _ => unreachable!("size checked against the block's spec"),
    };
    (v, Some(crate::resp_chk::LATENCY), params)
}

/// `resp_exec` (`top` false) or `resp_top` Verilog and parameters;
/// `small` selects the 64-QP build.
fn responder(
    width: usize,
    top: bool,
    small: bool,
) -> (String, Option<usize>, Vec<(&'static str, u64)>) {
    let qps: u64 = if small { 64 } else { 1024 };
    let params = vec![
        ("W", width as u64),
        ("K", width as u64 / 8),
        ("QPS", qps),
        ("RES_PER_QP", crate::resp_exec::RES_PER_QP as u64),
        ("QP_READ_LATENCY", 2),
        ("EV_INIT", crate::resp_chk::EV_INIT),
        ("EV_POST_RECV", crate::resp_chk::EV_POST_RECV),
        ("EV_CLEAR", crate::resp_chk::EV_CLEAR),
        ("EV_ERROR", crate::resp_chk::EV_ERROR),
        ("RCQE_OK", crate::resp_exec::RCQE_OK),
        ("RCQE_FLUSH", crate::resp_exec::RCQE_FLUSH),
    ];
    let v = match (width, top, small) {
        (64, false, false) => emit(RespExec64::new()),
        (128, false, false) => emit(RespExec128::new()),
        (256, false, false) => emit(RespExec256::new()),
        (512, false, false) => emit(RespExec512::new()),
        (64, true, false) => emit(RespTop64::new()),
        (128, true, false) => emit(RespTop128::new()),
        (256, true, false) => emit(RespTop256::new()),
        (512, true, false) => emit(RespTop512::new()),
        (64, true, true) => emit(RespTopSmall64::new()),
        (512, true, true) => emit(RespTopSmall512::new()),
        _ => unreachable!("width checked against the block's spec"),
    };
    (v, None, params)
}

/// `req_engine` Verilog and parameters; `small` selects the 64-QP build.
fn req_engine(width: usize, small: bool) -> (String, Option<usize>, Vec<(&'static str, u64)>) {
    let (qps, wqes): (u64, u64) = if small { (64, 8) } else { (1024, 4) };
    let params = vec![
        ("W", width as u64),
        ("K", width as u64 / 8),
        ("QPS", qps),
        ("WQES_PER_QP", wqes),
        ("ACK_REQ_EVERY", crate::req_engine::ACK_REQ_EVERY as u64),
        ("WINDOW", crate::req_engine::WINDOW as u64),
    ];
    let v = match (width, small) {
        (64, false) => emit(ReqEngine64::new()),
        (128, false) => emit(ReqEngine128::new()),
        (256, false) => emit(ReqEngine256::new()),
        (512, false) => emit(ReqEngine512::new()),
        (64, true) => emit(ReqEngineSmall64::new()),
        (512, true) => emit(ReqEngineSmall512::new()),
        _ => unreachable!("width checked against the block's spec"),
    };
    (v, None, params)
}

/// `rc_transport`'s parameters and timer tick; `small` selects the 64-QP
/// build.
fn rc_transport_params(width: usize, small: bool) -> (Vec<(&'static str, u64)>, u16) {
    let (qps, wqes, mrs, pt, tick) = if small {
        (64, 8, 64, 1 << 8, SMALL_TICK)
    } else {
        (1024, 4, 4096, 1 << 13, DEFAULT_TICK)
    };
    let params = vec![
        ("W", width as u64),
        ("K", width as u64 / 8),
        ("QPS", qps),
        ("WQES_PER_QP", wqes),
        ("MRS", mrs),
        ("PT_ENTRIES", pt),
        ("TICK_CYCLES", tick as u64),
        ("QP_CTX_BITS", crate::csr::QP_CTX_BITS as u64),
        ("QP_READ_LATENCY", 2),
        // Port codes, for benches and harnesses.
        ("OP_SEND", crate::req_engine::OP_SEND),
        ("OP_SEND_IMM", crate::req_engine::OP_SEND_IMM),
        ("OP_SEND_INV", crate::req_engine::OP_SEND_INV),
        ("OP_WRITE", crate::req_engine::OP_WRITE),
        ("OP_WRITE_IMM", crate::req_engine::OP_WRITE_IMM),
        ("OP_READ", crate::req_engine::OP_READ),
        ("OP_CMP_SWAP", crate::req_engine::OP_CMP_SWAP),
        ("OP_FETCH_ADD", crate::req_engine::OP_FETCH_ADD),
        ("ST_SUCCESS", crate::req_engine::ST_SUCCESS),
        ("RSP_EV_INIT", crate::resp_chk::EV_INIT),
        ("RSP_EV_POST_RECV", crate::resp_chk::EV_POST_RECV),
        ("RSP_EV_CLEAR", crate::resp_chk::EV_CLEAR),
        ("RSP_EV_ERROR", crate::resp_chk::EV_ERROR),
        ("REQ_EV_INIT", crate::req_engine::EV_INIT),
        ("REQ_EV_ERROR", crate::req_engine::EV_ERROR),
    ];
    (params, tick)
}

/// `rc_transport` Verilog and parameters; `small` selects the 64-QP build.
fn rc_transport(width: usize, small: bool) -> (String, Option<usize>, Vec<(&'static str, u64)>) {
    let (params, tick) = rc_transport_params(width, small);
    let v = match (width, small) {
        (64, false) => emit(RcTransport64::new(tick)),
        (128, false) => emit(RcTransport128::new(tick)),
        (256, false) => emit(RcTransport256::new(tick)),
        (512, false) => emit(RcTransport512::new(tick)),
        (64, true) => emit(RcTransportSmall64::new(tick)),
        (512, true) => emit(RcTransportSmall512::new(tick)),
        _ => unreachable!("width checked against the block's spec"),
    };
    (v, None, params)
}

/// `tx_arb` parameters (QPs, context bits and read latency).
fn tx_arb_params(width: usize, qps: u64) -> Vec<(&'static str, u64)> {
    vec![
        ("W", width as u64),
        ("K", width as u64 / 8),
        ("QPS", qps),
        ("QP_CTX_BITS", crate::csr::QP_CTX_BITS as u64),
        ("QP_READ_LATENCY", 2),
        ("CREDITS", crate::tx_arb::CREDITS),
        ("STARVE_LIMIT", crate::tx_arb::STARVE_LIMIT),
    ]
}

fn tx_arb<const W: usize, const K: usize>() -> (String, Option<usize>) {
    (emit(TxArb::<W, K, 10>::new()), Some(crate::tx_arb::LATENCY))
}

fn tx_arb_tx<const W: usize, const K: usize>() -> (String, Option<usize>) {
    (emit(TxArbTx::<W, K, 6>::new()), None)
}

fn dma_wr<const W: usize, const K: usize>() -> (String, Option<usize>) {
    (emit(DmaWr::<W, K>::new()), None)
}

/// `host_if` Verilog and parameters; `small` selects the 64-QP build.
fn host_if<const W: usize, const K: usize>(
    small: bool,
) -> (String, Option<usize>, Vec<(&'static str, u64)>) {
    let (v, qps, cqs) = if small {
        (emit(HostIf::<W, K, 6, 64, 6>::new()), 64, 64)
    } else {
        (emit(HostIf::<W, K, 8, 256, 8>::new()), 256, 256)
    };
    (v, None, host_if_params(W, qps, cqs))
}

/// `host_if`'s parameters (and the transport codes it translates).
fn host_if_params(w: usize, qps: u64, cqs: u64) -> Vec<(&'static str, u64)> {
    use crate::req_engine as re;
    use crate::resp_exec as rx;
    vec![
        ("W", w as u64),
        ("K", w as u64 / 8),
        ("QPS", qps),
        ("CQS", cqs),
        ("SQ_WINDOW", crate::host_if::SQ_WINDOW as u64),
        // The transport's codes host_if translates (for benches).
        ("OP_SEND", re::OP_SEND),
        ("OP_SEND_IMM", re::OP_SEND_IMM),
        ("OP_SEND_INV", re::OP_SEND_INV),
        ("OP_WRITE", re::OP_WRITE),
        ("OP_WRITE_IMM", re::OP_WRITE_IMM),
        ("OP_READ", re::OP_READ),
        ("OP_CMP_SWAP", re::OP_CMP_SWAP),
        ("OP_FETCH_ADD", re::OP_FETCH_ADD),
        ("ST_SUCCESS", re::ST_SUCCESS),
        ("ST_LOC_LEN", re::ST_LOC_LEN),
        ("ST_LOC_PROT", re::ST_LOC_PROT),
        ("ST_FLUSH", re::ST_FLUSH),
        ("ST_REM_INV_REQ", re::ST_REM_INV_REQ),
        ("ST_REM_ACCESS", re::ST_REM_ACCESS),
        ("ST_REM_OP", re::ST_REM_OP),
        ("ST_RETRY_EXC", re::ST_RETRY_EXC),
        ("ST_RNR_RETRY_EXC", re::ST_RNR_RETRY_EXC),
        ("RCQE_OK", rx::RCQE_OK),
        ("RCQE_LOC_LEN", rx::RCQE_LOC_LEN),
        ("RCQE_LOC_QP_OP", rx::RCQE_LOC_QP_OP),
        ("RCQE_FAILED", rx::RCQE_FAILED),
        ("RCQE_FLUSH", rx::RCQE_FLUSH),
    ]
}

/// `roce_nic` Verilog (PicoRV32 not included: see `fw_core`) and
/// parameters: the 64-QP build.
fn roce_nic(width: usize) -> (String, Option<usize>, Vec<(&'static str, u64)>) {
    let (mut params, tick) = rc_transport_params(width, true);
    for p in host_if_params(width, 64, 64) {
        if !params.iter().any(|q| q.0 == p.0) {
            params.push(p);
        }
    }
    params.push(("FW_RAM_WORDS", 1 << crate::roce_nic::FW_RAM_ABITS));
    let v = match width {
        64 => emit(RoceNic64::new(tick)),
        512 => emit(RoceNic512::new(tick)),
        _ => unreachable!("width checked against the block's spec"),
    };
    (v, None, params)
}

fn dma_rd<const W: usize, const K: usize>() -> (String, Option<usize>) {
    (emit(DmaRd::<W, K>::new()), None)
}

fn axi_arb<const W: usize, const K: usize>() -> (String, Option<usize>) {
    (emit(AxiArb2::<W, K>::new()), None)
}

/// `axil_bus` Verilog and parameters: the data width (the catalogue's
/// width, 32), the address width and the host_if ranges.
fn axil_bus() -> (String, Option<usize>, Vec<(&'static str, u64)>) {
    let mut params = vec![("W", 32), ("ADDR_BITS", crate::csr::ADDR_BITS as u64)];
    let names = [("DB_BASE", "DB_SIZE"), ("HQ_BASE", "HQ_SIZE")];
    for (b, (base, size)) in roce_regs::HOST_BLOCKS.iter().zip(names) {
        params.push((base, b.base as u64));
        params.push((size, b.size as u64));
    }
    (emit(AxilBus::new()), None, params)
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
    let stream_params = vec![("W", width as u64), ("K", width as u64 / 8)];
    let (raw, latency, params) = match spec.name {
        "crc32" => {
            let (v, l) = per_width!(width, crc32);
            (v, l, stream_params)
        }
        "axis_register" => {
            let (v, l) = per_width!(width, axis_register);
            (v, l, stream_params)
        }
        "tx_header" => {
            let (v, l) = per_width!(width, tx_header);
            (v, l, stream_params)
        }
        "roce_tx" => {
            let (v, l) = per_width!(width, roce_tx);
            (v, l, stream_params)
        }
        "roce_rx" => {
            let (v, l) = roce_rx(width);
            (v, l, stream_params)
        }
        "dma_wr" => {
            let (v, l) = per_width!(width, dma_wr);
            let mut p = stream_params;
            p.push(("MAX_BURST", crate::dma::wr_max_burst(width / 8) as u64));
            p.push(("OUTSTANDING", WR_OUTSTANDING as u64));
            (v, l, p)
        }
        "dma_rd" => {
            let (v, l) = per_width!(width, dma_rd);
            let mut p = stream_params;
            p.push(("MAX_BURST", crate::dma::rd_max_burst(width / 8) as u64));
            p.push(("OUTSTANDING", RD_OUTSTANDING as u64));
            p.push(("RBUF_BEATS", RD_BUF_BEATS as u64));
            (v, l, p)
        }
        "axi_arb" => {
            let (v, l) = per_width!(width, axi_arb);
            let mut p = stream_params;
            p.push(("OUTSTANDING", AxiArb2::<64, 8>::OUTSTANDING as u64));
            p.push(("ORDER_BITS", ORDER_BITS as u64));
            (v, l, p)
        }
        "axil_bus" => axil_bus(),
        "mr_tlb" => mr_tlb(width),
        "mr_ctrl" => mr_ctrl(width),
        "retx_buf" => retx_buf(width, false),
        "retx_buf_small" => retx_buf(width, true),
        "resp_chk" => resp_chk(width),
        "resp_exec" => responder(width, false, false),
        "resp_top" => responder(width, true, false),
        "resp_top_small" => responder(width, true, true),
        "req_engine" => req_engine(width, false),
        "req_engine_small" => req_engine(width, true),
        "host_if" => match width {
            64 => host_if::<64, 8>(false),
            128 => host_if::<128, 16>(false),
            256 => host_if::<256, 32>(false),
            512 => host_if::<512, 64>(false),
            _ => unreachable!("width checked against the block's spec"),
        },
        "host_if_small" => match width {
            64 => host_if::<64, 8>(true),
            512 => host_if::<512, 64>(true),
            _ => unreachable!("width checked against the block's spec"),
        },
        "rc_transport" => rc_transport(width, false),
        "rc_transport_small" => rc_transport(width, true),
        "roce_nic" => roce_nic(width),
        "tx_arb" => {
            let (v, l) = per_width!(width, tx_arb);
            (v, l, tx_arb_params(width, 1024))
        }
        "tx_arb_tx" => {
            let (v, l) = per_width!(width, tx_arb_tx);
            (v, l, tx_arb_params(width, 64))
        }
        "csr" => csr(width, CsrDefault::DEFAULT_STORE, 1),
        "csr_bram" => csr(width, QpStore::Bram, 1),
        "csr_lutram" => csr(width, QpStore::Lutram, 1),
        "csr_nic" => csr(width, CsrSmall::DEFAULT_STORE, crate::csr::QP_READ_PORTS),
        "qp_timers" => qp_timers(width),
        other => unreachable!("block {other} listed without a generator"),
    };
    let top = format!("{}_w{}", spec.name, width);
    let plist: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let verilog = format!(
        "// {top}: roce-hw {} block '{}', {}. Generated by rust-hdl; do not edit.\n{}",
        env!("CARGO_PKG_VERSION"),
        spec.name,
        plist.join(", "),
        rename_top(&raw, &top)
    );
    let ports = ports(&verilog, &top);
    Ok(Generated {
        block: spec.name,
        top,
        verilog,
        ports,
        params,
        latency,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_names_and_widths_list_valid_values() {
        let e = generate("crc33", 64).unwrap_err();
        let names: Vec<&str> = BLOCKS.iter().map(|b| b.name).collect();
        assert!(e.to_string().ends_with(&names.join(", ")), "{e}");
        let e = generate("crc32", 96).unwrap_err();
        assert_eq!(
            e.to_string(),
            "block 'crc32' has no width 96; valid widths: 64, 128, 256, 512"
        );
    }

    #[test]
    fn mr_tlb_sizes() {
        let g = generate("mr_tlb", 4096).unwrap();
        assert_eq!(g.top, "mr_tlb_w4096");
        assert!(g.params.contains(&("N", 4096)) && g.params.contains(&("TLB", 256)));
        assert!(g
            .ports
            .iter()
            .any(|p| p.name == "s_req_va" && p.width == 64));
        assert!(generate("mr_tlb", 512).is_err());
    }

    #[test]
    fn csr_build() {
        let g = generate("csr", 256).unwrap();
        assert_eq!(g.top, "csr_w256");
        assert!(g
            .ports
            .iter()
            .any(|p| p.name == "s_axil_awaddr" && p.width == 18));
        assert!(g
            .ports
            .iter()
            .any(|p| p.name == "qp_rd_data" && p.width == crate::csr::QP_CTX_BITS));
    }

    #[test]
    fn csr_store_builds_publish_their_latency() {
        for (block, store) in [
            ("csr", CsrDefault::DEFAULT_STORE),
            ("csr_bram", QpStore::Bram),
            ("csr_lutram", QpStore::Lutram),
        ] {
            let size = if block == "csr" { 256 } else { 64 };
            let g = generate(block, size).unwrap();
            let lat = store.latency() as u64;
            assert!(g.params.contains(&("QP_READ_LATENCY", lat)), "{block}");
            assert!(g.params.contains(&("N", size as u64)), "{block}");
            assert_eq!(
                g.verilog.contains("ram_style = \"distributed\""),
                block == "csr_lutram"
            );
            assert!(g.params.contains(&("QP_READ_PORTS", 1)), "{block}");
        }
    }

    #[test]
    fn csr_nic_build() {
        let g = generate("csr_nic", 64).unwrap();
        assert_eq!(g.top, "csr_nic_w64");
        assert!(g.params.contains(&("QP_READ_PORTS", 3)));
        assert!(g.params.contains(&("QP_READ_LATENCY", 2)));
        for (port, width) in [
            ("qp_rd_addr_1", 6),
            ("qp_rd_addr_2", 6),
            ("qp_rd_data_1", crate::csr::QP_CTX_BITS),
            ("qp_rd_data_2", crate::csr::QP_CTX_BITS),
            ("m_ctx_wr_valid", 1),
            ("m_ctx_wr_qpn", 6),
            ("m_ctx_wr_offset", crate::csr::CTX_OFFSET_BITS),
            ("m_ctx_wr_data", 32),
            ("cfg_mac", 48),
            ("cfg_udp_sport", 16),
            ("cfg_gid", crate::tx_arb::GID_TABLE_BITS),
            ("cfg_pkey", crate::tx_arb::PKEY_TABLE_BITS),
        ] {
            assert!(
                g.ports.iter().any(|p| p.name == port && p.width == width),
                "{port}"
            );
        }
    }

    #[test]
    fn mr_ctrl_sizes() {
        let g = generate("mr_ctrl", 64).unwrap();
        assert_eq!(g.top, "mr_ctrl_w64");
        assert!(g.params.contains(&("N", 64)) && g.params.contains(&("TLB", 8)));
        for (port, width) in [("s_axil_awaddr", 18), ("s_req_va", 64), ("m_grant_pa", 64)] {
            assert!(
                g.ports.iter().any(|p| p.name == port && p.width == width),
                "{port}"
            );
        }
        // The command port is internal.
        assert!(!g.ports.iter().any(|p| p.name.contains("cmd")));
        assert!(generate("mr_ctrl", 512).is_err());
    }

    #[test]
    fn retx_buf_builds() {
        let g = generate("retx_buf", 64).unwrap();
        assert_eq!(g.top, "retx_buf_w64");
        assert!(g.params.contains(&("QPS", 1024)) && g.params.contains(&("PMTU", 4096)));
        assert!(g
            .ports
            .iter()
            .any(|p| p.name == "s_pkt_qpn" && p.width == 10));
        let g = generate("retx_buf_small", 512).unwrap();
        assert!(g.params.contains(&("SLOTS", 16)) && g.params.contains(&("PMTU", 1024)));
        assert!(g
            .ports
            .iter()
            .any(|p| p.name == "m_axis$tdata" && p.width == 512));
        assert!(generate("retx_buf_small", 128).is_err());
    }

    #[test]
    fn dma_builds() {
        for w in SUPPORTED_WIDTHS {
            let g = generate("dma_wr", w).unwrap();
            assert_eq!(g.top, format!("dma_wr_w{w}"));
            for (port, width) in [
                ("s_cmd_addr", 64),
                ("s_cmd_len", 32),
                ("s_cmd_data", 64),
                ("s_pay$tdata", w),
                ("m_axi_awaddr", 64),
                ("m_axi_awlen", 8),
                ("m_axi_wdata", w),
                ("m_axi_wstrb", w / 8),
                ("m_axi_bresp", 2),
                ("m_done_err", 1),
                ("idle", 1),
                ("cnt_stream_err", 32),
            ] {
                assert!(
                    g.ports.iter().any(|p| p.name == port && p.width == width),
                    "dma_wr w{w}: {port}"
                );
            }
            let g = generate("dma_rd", w).unwrap();
            assert!(g.params.contains(&("RBUF_BEATS", RD_BUF_BEATS as u64)));
            for (port, width) in [
                ("s_cmd_addr", 64),
                ("m_axi_araddr", 64),
                ("m_axi_arlen", 8),
                ("m_axi_rdata", w),
                ("m_data$tdata", w),
                ("m_data$tuser", 1),
            ] {
                assert!(
                    g.ports.iter().any(|p| p.name == port && p.width == width),
                    "dma_rd w{w}: {port}"
                );
            }
        }
    }

    #[test]
    fn qp_timers_sizes() {
        let g = generate("qp_timers", 2048).unwrap();
        assert_eq!(g.top, "qp_timers_w2048");
        assert!(g.params.contains(&("LANES", 16)) && g.params.contains(&("SCAN_CYCLES", 128)));
        for (port, width) in [
            ("s_arm_entry", 11),
            ("s_arm_delay", 32),
            ("m_exp_entry", 11),
        ] {
            assert!(
                g.ports.iter().any(|p| p.name == port && p.width == width),
                "{port}"
            );
        }
        let g = generate("qp_timers", 128).unwrap();
        assert!(g.params.contains(&("LANES", 8)) && g.params.contains(&("TICK_CYCLES", 16)));
        assert!(generate("qp_timers", 64).is_err());
    }

    #[test]
    fn resp_chk_sizes() {
        let g = generate("resp_chk", 1024).unwrap();
        assert_eq!(g.top, "resp_chk_w1024");
        for (port, width) in [
            ("qp_rd_addr", 10),
            ("qp_rd_data", crate::csr::QP_CTX_BITS),
            ("s_hdr_psn", 24),
            ("m_cmd_va", 64),
        ] {
            assert!(
                g.ports.iter().any(|p| p.name == port && p.width == width),
                "{port}"
            );
        }
        assert!(generate("resp_chk", 256).is_err());
    }

    #[test]
    fn tx_arb_builds() {
        let g = generate("tx_arb", 512).unwrap();
        assert_eq!(g.top, "tx_arb_w512");
        assert!(g.params.contains(&("QPS", 1024)));
        for (port, width) in [
            ("qp_rd_addr", 10),
            ("qp_rd_data", crate::csr::QP_CTX_BITS),
            ("s_rsp_qpn", 10),
            ("s_req_atomic_ack_data", 64),
            ("cfg_gid", 512),
            ("m_hdr_reth_dma_len", 32),
            ("m_hdr_ip_src", 128),
            ("s_req_pay$tdata", 512),
            ("m_payload$tkeep", 64),
        ] {
            assert!(
                g.ports.iter().any(|p| p.name == port && p.width == width),
                "{port}"
            );
        }
        // Every roce_tx descriptor input has its m_hdr_ output.
        let tx = generate("roce_tx", 512).unwrap();
        for p in tx.ports.iter().filter(|p| p.name.starts_with("s_hdr_")) {
            let name = p.name.replacen("s_hdr_", "m_hdr_", 1);
            assert!(
                g.ports.iter().any(|q| q.name == name && q.width == p.width),
                "{name}"
            );
        }
        let g = generate("tx_arb_tx", 64).unwrap();
        assert!(g.params.contains(&("QPS", 64)));
        assert!(g
            .ports
            .iter()
            .any(|p| p.name == "m_axis$tdata" && p.width == 64));
        assert!(generate("tx_arb_tx", 128).is_err());
    }

    #[test]
    fn rc_transport_builds() {
        let g = generate("rc_transport_small", 64).unwrap();
        assert_eq!(g.top, "rc_transport_small_w64");
        assert!(g.params.contains(&("QPS", 64)));
        for (port, width) in [
            ("s_axis$tdata", 64),
            ("m_axis$tdata", 64),
            ("rsp_qp_rd_addr", 6),
            ("req_qp_rd_addr", 6),
            ("arb_qp_rd_addr", 6),
            ("req_qp_rd_data", crate::csr::QP_CTX_BITS),
            ("m_axi_rsp_wdata", 64),
            ("m_axi_req_rdata", 64),
            ("s_mr_cmd_len", 64),
            ("s_wqe_wr_id", 64),
            ("cfg_gid", 512),
        ] {
            assert!(
                g.ports.iter().any(|p| p.name == port && p.width == width),
                "{port}"
            );
        }
        assert!(generate("rc_transport_small", 128).is_err());
    }

    #[test]
    fn host_if_builds() {
        for (name, w, qps) in [("host_if", 64, 256), ("host_if_small", 512, 64)] {
            let g = generate(name, w).unwrap();
            assert!(g.params.contains(&("QPS", qps)), "{name}");
            for (port, width) in [
                ("m_axi_wdata", w),
                ("m_axi_rdata", w),
                ("m_wqe_wr_id", 64),
                ("s_reg_addr", crate::host_if::ADDR_BITS),
            ] {
                assert!(
                    g.ports.iter().any(|p| p.name == port && p.width == width),
                    "{name} w{w}: {port}"
                );
            }
        }
        assert!(generate("host_if_small", 128).is_err());
    }

    #[test]
    fn interconnect_builds() {
        for w in SUPPORTED_WIDTHS {
            let g = generate("axi_arb", w).unwrap();
            assert_eq!(g.top, format!("axi_arb_w{w}"));
            for p in ["s0", "s1", "m"] {
                for (port, width) in [
                    ("awaddr", 64),
                    ("awlen", 8),
                    ("awsize", 3),
                    ("awburst", 2),
                    ("wdata", w),
                    ("wstrb", w / 8),
                    ("bresp", 2),
                    ("araddr", 64),
                    ("rdata", w),
                    ("rlast", 1),
                ] {
                    let name = format!("{p}_axi_{port}");
                    assert!(
                        g.ports.iter().any(|q| q.name == name && q.width == width),
                        "axi_arb w{w}: {name}"
                    );
                }
            }
        }
        let g = generate("axil_bus", 32).unwrap();
        let a = crate::csr::ADDR_BITS;
        for (port, width) in [
            ("s_host_axil_awaddr", a),
            ("s_core_axil_araddr", a),
            ("s_core_axil_rdata", 32),
            ("m_csr_axil_awaddr", a),
            ("m_csr_axil_wstrb", 4),
            ("m_reg_addr", a),
            ("m_reg_strb", 4),
            ("s_reg_resp_rdata", 32),
            ("s_reg_resp_err", 1),
        ] {
            assert!(
                g.ports.iter().any(|q| q.name == port && q.width == width),
                "axil_bus: {port}"
            );
        }
        assert!(generate("axil_bus", 64).is_err());
    }

    #[test]
    fn every_block_generates_with_ports() {
        for spec in BLOCKS.iter().filter(|b| {
            ![
                "mr_tlb",
                "csr",
                "csr_bram",
                "csr_lutram",
                "csr_nic",
                "mr_ctrl",
                "resp_chk",
                "qp_timers",
                "host_if",
                "host_if_small",
                "axi_arb",
                "axil_bus",
            ]
            .contains(&b.name)
        }) {
            let g = generate(spec.name, 64).unwrap();
            assert!(g.verilog.contains(&format!("module {}(", g.top)));
            assert!(!g.verilog.contains("module top"), "rename missed a module");
            assert!(g.ports.iter().any(|p| p.name == "clock"));
            // A W-wide data port: a stream's, or the header assembly's window.
            let (data, width) = if spec.name == "tx_header" {
                ("hdr", crate::tx_header::HDR_BITS)
            } else {
                ("$tdata", 64)
            };
            assert!(
                g.ports
                    .iter()
                    .any(|p| p.name.ends_with(data) && p.width == width),
                "{}: no {width}-bit data port",
                spec.name
            );
        }
    }
}
