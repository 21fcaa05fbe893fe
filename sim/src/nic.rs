//! Simulated NICs behind one verbs-shaped interface ([`SimNic`]): the
//! hardware transport (`rc_transport`, Verilated, the 64-QP build at
//! W = 64) with the host around it, and a software NIC on the transport
//! model (`roce_transport::Endpoint`). Either one takes QPs, memory
//! regions, send and receive work requests, gives completions, and
//! exchanges Ethernet frames one cycle at a time, so a scenario runs
//! hardware against hardware, hardware against the model, or model
//! against model.
//!
//! **What the host side is today.** The NIC top with its host interface
//! (`host_if`: queues in host memory, doorbells, one DMA master) is not
//! built yet, so [`HwNic`] plays that part in Rust: it hands work requests
//! to the transport's `s_wqe` port (at most `WQES_PER_QP` in flight per QP),
//! answers receive-WQE lookups, takes completions from the `m_scqe` and
//! `m_rcqe` ports, programs the MR table through the `mr_tlb` command port
//! and delivers QP contexts on the context read ports. Memory is real AXI:
//! the transport's two AXI4 masters (requester and responder) each have an
//! [`AxiMem`]; buffers are placed in one or the other by [`Region`].
//!
//! Memory layout: four regions (`Region`), one MR each, at fixed virtual
//! bases; each region's pages sit in reverse order in physical memory, so
//! a request across pages is split into chunks that are not contiguous.

use crate::axi_mem::{AxReq, AxiMem, AxiMemTiming, AxiReadPort, AxiWritePort, RBeat, WBeat};
use crate::models::RcTransportSmallW64 as Dut;
use crate::param;
use crate::responder::{pack_ctx, CTX_WORDS};
use crate::rng::Rng;
use roce_regs::{qp, AccessFlag, QpState as RegState, QpType as RegType};
use roce_transport::{
    Endpoint, HostMemory, Path, Qp, QpAttr, QpType, Remote, Sge, WcOpcode, WcStatus, WrOp,
};
use roce_wire::mr::Access;
use roce_wire::{Pmtu, Psn};
use std::collections::{HashMap, VecDeque};

/// The protection domain of every QP and MR of a simulated NIC.
pub const PD: u16 = 0x1d;

// ------------------------------------------------------------ memory layout

/// The four regions of a NIC's memory, one MR each.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Region {
    /// Sources of SENDs and WRITEs (requester side).
    Src = 0,
    /// READ destinations and atomic results (requester side).
    Dst = 1,
    /// Buffers the peer WRITEs, READs and atomics (responder side).
    Rem = 2,
    /// Receive buffers (responder side).
    Rcv = 3,
}

/// Every region, in order.
pub const REGIONS: [Region; 4] = [Region::Src, Region::Dst, Region::Rem, Region::Rcv];

impl Region {
    /// The region's L_Key and R_Key (MR index `r + 1`, a tag per region).
    pub fn key(self) -> u32 {
        (self as u32 + 1) << roce_wire::mr::KEY_INDEX_SHIFT | (0x51 + self as u32)
    }
    /// The region's first virtual address (not page aligned).
    pub fn va_base(self) -> u64 {
        (self as u64 + 1) << 44 | 0x123_4560
    }
    /// Which side of the transport uses the region's memory.
    pub fn requester_side(self) -> bool {
        matches!(self, Region::Src | Region::Dst)
    }
    /// The region holding `va`.
    pub fn of(va: u64) -> Region {
        REGIONS[((va >> 44) - 1) as usize]
    }
}

/// A bump allocator per region and the page mapping.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Bytes allocated per region.
    pub used: [u64; 4],
    /// Pages per region (after [`Layout::seal`]).
    pub pages: [u64; 4],
    /// log2 of the page size.
    pub page_shift: u32,
}

impl Layout {
    /// An empty layout with pages of `2^page_shift` bytes.
    pub fn new(page_shift: u32) -> Layout {
        Layout {
            used: [0; 4],
            pages: [0; 4],
            page_shift,
        }
    }
    /// The page size.
    pub fn page(&self) -> u64 {
        1 << self.page_shift
    }
    /// `len` bytes in region `r` at an `align`ed address.
    pub fn alloc(&mut self, r: Region, len: u64, align: u64) -> u64 {
        let i = r as usize;
        let at = self.used[i].div_ceil(align) * align;
        self.used[i] = at + len.max(1);
        r.va_base() + at
    }
    /// Fixes the sizes (after every allocation).
    pub fn seal(&mut self) {
        let page = self.page();
        for r in REGIONS {
            self.pages[r as usize] = ((r.va_base() % page) + self.used[r as usize]).div_ceil(page);
        }
    }
    /// Page-table entries the layout needs.
    pub fn pt_entries(&self) -> u64 {
        self.pages.iter().sum()
    }
    /// The physical address of `va` in region `r`.
    pub fn pa(&self, r: Region, va: u64) -> u64 {
        let page = self.page();
        let base_page = r.va_base() / page;
        let p = va / page - base_page;
        let n = self.pages[r as usize];
        assert!(p < n, "{r:?} va {va:#x} beyond the region");
        (0x10_0000_0000 * (r as u64 + 1)) + (n - 1 - p) * page + va % page
    }
    /// The physical address of `va`, whatever its region.
    pub fn pa_of(&self, va: u64) -> u64 {
        self.pa(Region::of(va), va)
    }
}

// ------------------------------------------------------------- verbs shapes

/// The verbs of a send work request.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Verb {
    /// SEND.
    Send,
    /// SEND with immediate.
    SendImm,
    /// RDMA WRITE.
    Write,
    /// RDMA WRITE with immediate.
    WriteImm,
    /// RDMA READ.
    Read,
    /// CMP & SWAP.
    CmpSwap,
    /// FETCH & ADD.
    FetchAdd,
}

impl Verb {
    /// Every verb.
    pub const ALL: [Verb; 7] = [
        Verb::Send,
        Verb::SendImm,
        Verb::Write,
        Verb::WriteImm,
        Verb::Read,
        Verb::CmpSwap,
        Verb::FetchAdd,
    ];
    /// The hardware's code (`req_engine`'s `OP_*`, from the catalogue).
    fn hw_code(self) -> u64 {
        hw_param(match self {
            Verb::Send => "OP_SEND",
            Verb::SendImm => "OP_SEND_IMM",
            Verb::Write => "OP_WRITE",
            Verb::WriteImm => "OP_WRITE_IMM",
            Verb::Read => "OP_READ",
            Verb::CmpSwap => "OP_CMP_SWAP",
            Verb::FetchAdd => "OP_FETCH_ADD",
        })
    }
    fn from_hw(code: u64) -> Option<Verb> {
        Verb::ALL.into_iter().find(|v| v.hw_code() == code)
    }
    /// The verb's completion opcode.
    pub fn wc_opcode(self) -> WcOpcode {
        match self {
            Verb::Send | Verb::SendImm => WcOpcode::Send,
            Verb::Write | Verb::WriteImm => WcOpcode::RdmaWrite,
            Verb::Read => WcOpcode::RdmaRead,
            Verb::CmpSwap => WcOpcode::CompSwap,
            Verb::FetchAdd => WcOpcode::FetchAdd,
        }
    }
    /// An atomic (8 bytes, one result).
    pub fn atomic(self) -> bool {
        matches!(self, Verb::CmpSwap | Verb::FetchAdd)
    }
    /// Consumes a receive WQE at the responder.
    pub fn consumes_recv(self) -> bool {
        matches!(self, Verb::Send | Verb::SendImm | Verb::WriteImm)
    }
    /// The local buffer's region.
    pub fn local_region(self) -> Region {
        if matches!(self, Verb::Read | Verb::CmpSwap | Verb::FetchAdd) {
            Region::Dst
        } else {
            Region::Src
        }
    }
}

/// A send work request with one SGE (in the local region of its verb).
#[derive(Clone, Debug)]
pub struct SendWr {
    /// The QP.
    pub qpn: u32,
    /// The verb.
    pub verb: Verb,
    /// Returned in the completion.
    pub wr_id: u64,
    /// Local buffer (SGE 0): address and length.
    pub lva: u64,
    /// Length of the local buffer (8 for atomics).
    pub len: u32,
    /// Remote address (WRITE, READ, atomics; R_Key: `Region::Rem`'s).
    pub rva: u64,
    /// Immediate data.
    pub imm: u32,
    /// Swap value (CMP & SWAP) or addend (FETCH & ADD).
    pub swap: u64,
    /// Compare value (CMP & SWAP).
    pub compare: u64,
    /// A SEND or WRITE whose payload goes inline in the WQE (at most
    /// `roce_regs::queue::MAX_INLINE` bytes, copied at posting). NICs
    /// without a host interface read it from `lva` as usual.
    pub inline: bool,
}

/// A receive work request with one SGE (in `Region::Rcv`).
#[derive(Clone, Copy, Debug)]
pub struct RecvWr {
    /// Returned in the completion.
    pub wr_id: u64,
    /// Buffer address.
    pub va: u64,
    /// Buffer length.
    pub len: u32,
}

/// A completion, send or receive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cqe {
    /// The QP.
    pub qpn: u32,
    /// The work request's id.
    pub wr_id: u64,
    /// Success or not.
    pub ok: bool,
    /// What completed.
    pub opcode: WcOpcode,
    /// Bytes.
    pub byte_len: u32,
    /// Immediate data (receive completions).
    pub imm: Option<u32>,
    /// The status as the NIC reports it (for messages).
    pub status: u32,
}

/// One QP's attributes on one side (RC).
#[derive(Clone, Copy, Debug)]
pub struct QpSetup {
    /// This QP.
    pub qpn: u32,
    /// The peer's QP.
    pub dest_qpn: u32,
    /// First PSN sent.
    pub sq_psn: u32,
    /// First PSN expected.
    pub rq_psn: u32,
    /// Path MTU.
    pub pmtu: Pmtu,
    /// READ/atomic requests outstanding.
    pub max_rd_atomic: u8,
    /// Local ACK timeout (4.096 µs · 2^timeout).
    pub timeout: u8,
    /// Retries after timeouts and sequence NAKs.
    pub retry_cnt: u8,
    /// Retries after RNR NAKs (7: forever).
    pub rnr_retry: u8,
    /// RNR timer code put in RNR NAKs.
    pub min_rnr_timer: u8,
}

/// The station: MAC and IPv4 address (its GID is the IPv4-mapped one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Station {
    /// MAC address.
    pub mac: [u8; 6],
    /// IPv4 address.
    pub ip: [u8; 4],
}

/// A simulated NIC with its host.
pub trait SimNic {
    /// Its name in messages.
    fn name(&self) -> &str;
    /// Which implementation ("hw" or "model").
    fn engine(&self) -> &'static str;
    /// Adds an RC QP in RTS toward `peer`.
    fn create_qp(&mut self, s: &QpSetup, peer: Station);
    /// Registers the four regions of `lay` (after `Layout::seal`).
    fn reg_mrs(&mut self, lay: &Layout);
    /// Writes host memory (a registered virtual address).
    fn write(&mut self, va: u64, bytes: &[u8]);
    /// Reads host memory (a registered virtual address).
    fn read(&self, va: u64, n: usize) -> Vec<u8>;
    /// Queues a send work request (taken by the NIC when its queue has room).
    fn post_send(&mut self, wr: SendWr);
    /// Posts a receive work request.
    fn post_recv(&mut self, qpn: u32, wr: RecvWr);
    /// Send work requests posted and not completed, per QP.
    fn sends_outstanding(&self, qpn: u32) -> usize;
    /// The next completion, send or receive.
    fn poll_cq(&mut self) -> Option<Cqe>;
    /// Set up (MRs and QPs in place) and ready for work.
    fn ready(&self) -> bool;
    /// Nothing in flight in the host models (for the end of a run).
    fn idle(&self) -> bool;
    /// One clock cycle.
    fn step(&mut self);
    /// Cycles stepped.
    fn cycle(&self) -> u64;
    /// A frame arriving from the link: cycle it may start entering.
    fn push_rx(&mut self, at: u64, frame: Vec<u8>);
    /// The next frame sent: cycle of its first beat, bytes.
    fn pop_tx(&mut self) -> Option<(u64, Vec<u8>)>;
    /// Counters by name (frames, drops by reason, retransmissions, NAKs).
    fn counters(&mut self) -> Vec<(String, u64)>;
    /// QPs moved to Error and protocol violations seen by the host models.
    fn errors(&self) -> Vec<String>;
    /// What is waiting, for a hang's message.
    fn why(&mut self) -> String;
    /// Bytes written in host memory outside `allowed` (virtual
    /// addresses); `None` if the NIC cannot tell.
    fn stray_writes(&self, lay: &Layout, allowed: &dyn Fn(u64) -> bool) -> Option<Vec<u64>>;
    /// Write a VCD of the NIC (hardware only).
    fn trace_to(&mut self, path: &std::path::Path) -> Result<(), String>;
    /// Record each frame's last beat into the MAC input from now on.
    fn record_rx(&mut self);
    /// The frames recorded: cycle of the last beat in, bytes.
    fn rx_log(&self) -> &[(u64, Vec<u8>)];
}

/// A parameter of the hardware NIC's build.
pub fn hw_param(name: &str) -> u64 {
    param(Dut::PARAMS, name)
}

/// A receive WQE's flush completion (`RCQE_FLUSH`'s).
fn flushed_recv(qpn: u32, wr_id: u64) -> Cqe {
    Cqe {
        qpn,
        wr_id,
        ok: false,
        opcode: WcOpcode::Recv,
        byte_len: 0,
        imm: None,
        status: crate::responder::code("RCQE_FLUSH") as u32,
    }
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b.try_into().unwrap())
}

/// The IPv4 header between two stations as the NICs send it (DF set,
/// TTL 64, UDP; lengths filled in per frame).
pub fn ipv4_path(from: Station, to: Station) -> roce_wire::IpRepr {
    roce_wire::IpRepr::V4(roce_wire::Ipv4Repr {
        tos: 0,
        ident: 0,
        dont_frag: true,
        ttl: 64,
        protocol: roce_wire::ipv4::PROTOCOL_UDP,
        src: from.ip,
        dst: to.ip,
        payload_len: 0,
    })
}

/// The IPv4-mapped GID of an address.
pub fn ipv4_mapped(ip: [u8; 4]) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[10] = 0xff;
    g[11] = 0xff;
    g[12..].copy_from_slice(&ip);
    g
}

// ------------------------------------------------------------ hardware NIC

macro_rules! axi_port {
    ($name:ident, $p:ident) => {
        paste::paste! {
            struct $name<'a>(&'a mut Dut);
            impl AxiWritePort for $name<'_> {
                fn lanes(&self) -> usize {
                    8
                }
                fn aw(&self) -> Option<AxReq> {
                    self.0.[<get_m_axi_ $p _awvalid>]().then(|| AxReq {
                        addr: self.0.[<get_m_axi_ $p _awaddr>](),
                        len: self.0.[<get_m_axi_ $p _awlen>]() as u8,
                        size: self.0.[<get_m_axi_ $p _awsize>]() as u8,
                        burst: self.0.[<get_m_axi_ $p _awburst>]() as u8,
                    })
                }
                fn set_aw_ready(&mut self, ready: bool) {
                    self.0.[<set_m_axi_ $p _awready>](ready)
                }
                fn w(&self) -> Option<WBeat> {
                    self.0.[<get_m_axi_ $p _wvalid>]().then(|| WBeat {
                        data: self.0.[<get_m_axi_ $p _wdata>]().to_le_bytes().to_vec(),
                        strb: self.0.[<get_m_axi_ $p _wstrb>]() as u64,
                        last: self.0.[<get_m_axi_ $p _wlast>](),
                    })
                }
                fn set_w_ready(&mut self, ready: bool) {
                    self.0.[<set_m_axi_ $p _wready>](ready)
                }
                fn set_b(&mut self, resp: Option<u8>) {
                    self.0.[<set_m_axi_ $p _bvalid>](resp.is_some());
                    self.0.[<set_m_axi_ $p _bresp>](resp.unwrap_or(0) as u32);
                }
                fn b_ready(&self) -> bool {
                    self.0.[<get_m_axi_ $p _bready>]()
                }
            }
            impl AxiReadPort for $name<'_> {
                fn lanes(&self) -> usize {
                    8
                }
                fn ar(&self) -> Option<AxReq> {
                    self.0.[<get_m_axi_ $p _arvalid>]().then(|| AxReq {
                        addr: self.0.[<get_m_axi_ $p _araddr>](),
                        len: self.0.[<get_m_axi_ $p _arlen>]() as u8,
                        size: self.0.[<get_m_axi_ $p _arsize>]() as u8,
                        burst: self.0.[<get_m_axi_ $p _arburst>]() as u8,
                    })
                }
                fn set_ar_ready(&mut self, ready: bool) {
                    self.0.[<set_m_axi_ $p _arready>](ready)
                }
                fn set_r(&mut self, beat: Option<&RBeat>) {
                    self.0.[<set_m_axi_ $p _rvalid>](beat.is_some());
                    if let Some(b) = beat {
                        self.0.[<set_m_axi_ $p _rdata>](crate::axis::le_u64(&b.data));
                        self.0.[<set_m_axi_ $p _rresp>](b.resp as u32);
                        self.0.[<set_m_axi_ $p _rlast>](b.last);
                    }
                }
                fn r_ready(&self) -> bool {
                    self.0.[<get_m_axi_ $p _rready>]()
                }
            }
        }
    };
}

axi_port!(RspAxi, rsp);
axi_port!(ReqAxi, req);

/// The hardware NIC's counters: one list, read by name.
macro_rules! hw_counters {
    ($d:expr, [$($c:ident),* $(,)?]) => {
        vec![$( (stringify!($c).to_string(), paste::paste!($d.[<get_cnt_ $c>]()) as u64) ),*]
    };
}

/// The transport's counters (`rc_transport`'s `cnt_*`, which `roce_nic`
/// passes through under the same names) of a Verilated model.
macro_rules! transport_counters {
    ($d:expr) => {
        $crate::nic::hw_counters!(
            $d,
            [
                rx_accept,
                rx_not_roce,
                rx_truncated,
                rx_bad_ip_checksum,
                rx_ip_options,
                rx_bad_length,
                rx_bad_tver,
                rx_unknown_opcode,
                rx_bad_padcnt,
                rx_bad_icrc,
                to_responder,
                to_requester,
                rsp_execute,
                rsp_hdr_drop,
                rsp_drop_qpn,
                rsp_drop_state,
                rsp_drop_type,
                rsp_drop_response,
                rsp_drop_out_of_seq,
                rsp_duplicate,
                rsp_nak_psn_seq,
                rsp_nak_op_seq,
                rsp_nak_op_invalid,
                rsp_nak_padcnt,
                rsp_nak_resource,
                rsp_nak_length,
                rsp_rnr_nak,
                rsp_nak_rem_access,
                rsp_nak_rem_op,
                rsp_nak_inv_req,
                rsp_read_replay,
                rsp_atomic_replay,
                rsp_dup_no_res,
                rsp_drop_err,
                rsp_axi_err,
                rsp_stream_err,
                req_sent,
                req_retx,
                req_retry_seq_nak,
                req_retry_implied,
                req_retry_timeout,
                req_retry_rnr,
                req_retry_ignored,
                req_retry_exceeded,
                req_rnr_exceeded,
                req_rnr_nak,
                req_nak_err,
                req_drop_stale,
                req_drop_unexpected,
                req_drop_out_of_order,
                req_drop_qp_state,
                req_stream_err,
                mr_bad_key,
                mr_invalidated_key,
                mr_pd_mismatch,
                mr_access_denied,
                mr_out_of_bounds,
                mr_tlb_miss,
                timers_armed,
                timers_expired,
            ]
        )
    };
}
pub(crate) use {hw_counters, transport_counters};

#[derive(Clone, Copy)]
struct MrCmd {
    op: u64,
    key: u32,
    addr: u64,
    len: u64,
    index: u32,
}

/// One Verilated `rc_transport` (64 QPs, W = 64) and the host the bench
/// plays around it (see the module docs).
pub struct HwNic {
    name: String,
    /// The Verilated transport.
    pub d: Dut,
    /// Memory of the responder's AXI master (`Region::Rem`, `Region::Rcv`).
    pub mem_rsp: AxiMem,
    /// Memory of the requester's AXI master (`Region::Src`, `Region::Dst`).
    pub mem_req: AxiMem,
    lay: Option<Layout>,
    ctx: Vec<[u32; CTX_WORDS]>,
    reads: [VecDeque<[u32; CTX_WORDS]>; 3],
    station: Station,
    rsp_ev: VecDeque<(u64, u32, u32)>,
    /// Requester events: kind, QPN.
    req_ev: VecDeque<(u64, u32)>,
    mr_cmds: VecDeque<MrCmd>,
    mr_wait: bool,
    wqes: Vec<VecDeque<SendWr>>,
    on_port: Option<u32>,
    rr: u32,
    in_hw: Vec<usize>,
    posted: Vec<usize>,
    /// Receive WQEs per QP not yet taken, the one in use, and the wr_ids
    /// of those taken, in order, for their completions.
    rq: Vec<VecDeque<RecvWr>>,
    rq_cur: Vec<Option<RecvWr>>,
    rq_taken: Vec<VecDeque<u64>>,
    /// The receive queue flushes (`RCQE_FLUSH` seen): every WQE completes
    /// with a flush error, lookups answer none, later completions drop.
    rq_fl: Vec<bool>,
    rq_resp: VecDeque<(u64, Option<RecvWr>)>,
    rx_q: VecDeque<(u64, Vec<u8>)>,
    rx_cur: Option<(Vec<u8>, usize)>,
    rx_last_beats: Vec<(u64, Vec<u8>)>,
    record_rx: bool,
    tx_cur: Vec<u8>,
    tx_first: u64,
    tx_out: VecDeque<(u64, Vec<u8>)>,
    tx_ready_permille: u32,
    cq: VecDeque<Cqe>,
    errors: Vec<String>,
    qp_errors: Vec<(u32, &'static str, u64)>,
    rx_taken: u64,
    rng: Rng,
    cycle: u64,
    wqes_per_qp: usize,
    qps: u32,
}

impl HwNic {
    /// A NIC out of reset; `stall` (per mille) adds memory latency and
    /// backpressure on the AXI ports and the MAC output.
    pub fn new(name: &str, seed: u64, station: Station, stall: u32) -> HwNic {
        let timing = AxiMemTiming::with_stalls(stall);
        let qps = hw_param("QPS") as u32;
        let mut n = HwNic {
            name: name.to_string(),
            d: Dut::new(),
            mem_rsp: AxiMem::new(8, seed ^ 1, timing),
            mem_req: AxiMem::new(8, seed ^ 2, timing),
            lay: None,
            ctx: vec![[0; CTX_WORDS]; qps as usize],
            reads: std::array::from_fn(|_| VecDeque::from([[0; CTX_WORDS], [0; CTX_WORDS]])),
            station,
            rsp_ev: VecDeque::new(),
            req_ev: VecDeque::new(),
            mr_cmds: VecDeque::new(),
            mr_wait: false,
            wqes: vec![VecDeque::new(); qps as usize],
            on_port: None,
            rr: 0,
            in_hw: vec![0; qps as usize],
            posted: vec![0; qps as usize],
            rq: vec![VecDeque::new(); qps as usize],
            rq_cur: vec![None; qps as usize],
            rq_taken: vec![VecDeque::new(); qps as usize],
            rq_fl: vec![false; qps as usize],
            rq_resp: VecDeque::new(),
            rx_q: VecDeque::new(),
            rx_cur: None,
            rx_last_beats: Vec::new(),
            record_rx: false,
            tx_cur: Vec::new(),
            tx_first: 0,
            tx_out: VecDeque::new(),
            tx_ready_permille: 1000 - stall,
            cq: VecDeque::new(),
            errors: Vec::new(),
            qp_errors: Vec::new(),
            rx_taken: 0,
            rng: Rng::new(seed),
            cycle: 0,
            wqes_per_qp: hw_param("WQES_PER_QP") as usize,
            qps,
        };
        for r in [true, false] {
            n.d.set_reset(r);
            for _ in 0..3 {
                n.d.eval();
                n.d.tick();
            }
        }
        n
    }

    /// QPs of the build.
    pub fn qps(&self) -> u32 {
        self.qps
    }

    /// The QPs the transport moved to Error since the last call (QP, which
    /// part, cycle); taken, they are no longer among [`SimNic::errors`].
    pub fn take_qp_errors(&mut self) -> Vec<(u32, &'static str, u64)> {
        std::mem::take(&mut self.qp_errors)
    }

    /// Frames taken whole by the MAC input.
    pub fn rx_taken(&self) -> u64 {
        self.rx_taken
    }

    /// Frames waiting for the MAC input (the one going in included).
    pub fn rx_waiting(&self) -> usize {
        self.rx_q.len() + self.rx_cur.is_some() as usize
    }

    fn mem_of(&self, va: u64) -> &AxiMem {
        if Region::of(va).requester_side() {
            &self.mem_req
        } else {
            &self.mem_rsp
        }
    }

    fn lay(&self) -> &Layout {
        self.lay.as_ref().expect("reg_mrs before memory access")
    }

    fn cfg(&mut self) {
        let d = &mut self.d;
        d.set_cfg_mac(self.station.mac.iter().fold(0, |a, &b| a << 8 | b as u64));
        d.set_cfg_udp_sport(0xC000);
        let mut gid = [0u32; 16];
        // Entry 1: the IPv4-mapped station address.
        gid[4] = be32(&self.station.ip);
        gid[5] = 0xFFFF;
        d.set_cfg_gid(&gid);
        d.set_cfg_pkey(roce_wire::bth::DEFAULT_PKEY as _);
    }
}

impl SimNic for HwNic {
    fn name(&self) -> &str {
        &self.name
    }

    fn engine(&self) -> &'static str {
        "hw"
    }

    fn create_qp(&mut self, s: &QpSetup, peer: Station) {
        let dgid = ipv4_mapped(peer.ip);
        let fields: Vec<(&roce_regs::Register, &roce_regs::Field, u32)> = vec![
            (&qp::state::REG, &qp::state::STATE, RegState::Rts as u32),
            (&qp::state::REG, &qp::state::TYPE, RegType::Rc as u32),
            (&qp::path::REG, &qp::path::PMTU, s.pmtu.code() as u32),
            (&qp::path::REG, &qp::path::SGID_INDEX, 1),
            (&qp::path::REG, &qp::path::PKEY_INDEX, 0),
            (
                &qp::access::REG,
                &qp::access::FLAGS,
                AccessFlag::RemoteWrite as u32
                    | AccessFlag::RemoteRead as u32
                    | AccessFlag::RemoteAtomic as u32,
            ),
            (
                &qp::timers::REG,
                &qp::timers::MIN_RNR_TIMER,
                s.min_rnr_timer as u32,
            ),
            (&qp::timers::REG, &qp::timers::TIMEOUT, s.timeout as u32),
            (&qp::timers::REG, &qp::timers::RETRY_CNT, s.retry_cnt as u32),
            (&qp::timers::REG, &qp::timers::RNR_RETRY, s.rnr_retry as u32),
            (
                &qp::rd_atomic::REG,
                &qp::rd_atomic::MAX_DEST_RD_ATOMIC,
                roce_regs::MAX_DEST_RD_ATOMIC,
            ),
            (
                &qp::rd_atomic::REG,
                &qp::rd_atomic::MAX_RD_ATOMIC,
                s.max_rd_atomic as u32,
            ),
            (&qp::rq_psn::REG, &qp::rq_psn::PSN, s.rq_psn),
            (&qp::sq_psn::REG, &qp::sq_psn::PSN, s.sq_psn),
            (&qp::pd::REG, &qp::pd::PD, PD as u32),
            (&qp::dest_qpn::REG, &qp::dest_qpn::QPN, s.dest_qpn),
            (
                &qp::dmac_hi::REG,
                &qp::dmac_hi::MAC,
                u16::from_be_bytes([peer.mac[0], peer.mac[1]]) as u32,
            ),
            (&qp::dmac_lo::REG, &qp::dmac_lo::MAC, be32(&peer.mac[2..])),
            (&qp::dgid_w0::REG, &qp::dgid_w0::WORD, be32(&dgid[0..4])),
            (&qp::dgid_w1::REG, &qp::dgid_w1::WORD, be32(&dgid[4..8])),
            (&qp::dgid_w2::REG, &qp::dgid_w2::WORD, be32(&dgid[8..12])),
            (&qp::dgid_w3::REG, &qp::dgid_w3::WORD, be32(&dgid[12..16])),
        ];
        let mut v: HashMap<(&str, &str), u32> = HashMap::new();
        for (r, f, x) in fields {
            v.insert((r.name, f.name), x);
        }
        assert!(
            s.qpn < self.qps,
            "QP {} beyond the build's {}",
            s.qpn,
            self.qps
        );
        // A QP (re)created from Reset has empty queues (the transport's
        // INIT events clear its side).
        let i = s.qpn as usize;
        self.rq[i].clear();
        self.rq_cur[i] = None;
        self.rq_taken[i].clear();
        self.rq_fl[i] = false;
        self.wqes[i].clear();
        if self.on_port == Some(s.qpn) {
            self.on_port = None;
        }
        self.in_hw[i] = 0;
        self.posted[i] = 0;
        self.ctx[s.qpn as usize] = pack_ctx(|r, f| v.get(&(r, f)).copied().unwrap_or(0));
        self.rsp_ev.push_back((hw_param("RSP_EV_CLEAR"), s.qpn, 0));
        self.rsp_ev.push_back((hw_param("RSP_EV_INIT"), s.qpn, 0));
        self.req_ev.push_back((hw_param("REQ_EV_INIT"), s.qpn));
    }

    fn reg_mrs(&mut self, lay: &Layout) {
        let page = lay.page();
        let mut pt = 0u32;
        for r in REGIONS {
            let n = lay.pages[r as usize];
            let va0 = r.va_base() - r.va_base() % page;
            for p in 0..n {
                self.mr_cmds.push_back(MrCmd {
                    op: roce_regs::MrOp::WritePt as u64,
                    key: 0,
                    addr: lay.pa(r, va0 + p * page) - (va0 + p * page) % page,
                    len: 0,
                    index: pt + p as u32,
                });
            }
            self.mr_cmds.push_back(MrCmd {
                op: roce_regs::MrOp::Register as u64,
                key: r.key(),
                addr: r.va_base(),
                len: lay.used[r as usize].max(1),
                index: pt,
            });
            pt += n as u32;
        }
        self.lay = Some(lay.clone());
    }

    fn write(&mut self, va: u64, bytes: &[u8]) {
        // Page by page (pages are not contiguous).
        let lay = self.lay().clone();
        let mut at = 0;
        while at < bytes.len() {
            let v = va + at as u64;
            let n = ((lay.page() - v % lay.page()) as usize).min(bytes.len() - at);
            let pa = lay.pa_of(v);
            if Region::of(v).requester_side() {
                self.mem_req.poke(pa, &bytes[at..at + n]);
            } else {
                self.mem_rsp.poke(pa, &bytes[at..at + n]);
            }
            at += n;
        }
    }

    fn read(&self, va: u64, n: usize) -> Vec<u8> {
        let lay = self.lay();
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let v = va + out.len() as u64;
            let k = ((lay.page() - v % lay.page()) as usize).min(n - out.len());
            out.extend(self.mem_of(v).peek(lay.pa_of(v), k));
        }
        out
    }

    fn post_send(&mut self, wr: SendWr) {
        self.posted[wr.qpn as usize] += 1;
        self.wqes[wr.qpn as usize].push_back(wr);
    }

    fn post_recv(&mut self, qpn: u32, wr: RecvWr) {
        if self.rq_fl[qpn as usize] {
            self.cq.push_back(flushed_recv(qpn, wr.wr_id));
        } else {
            self.rq[qpn as usize].push_back(wr);
        }
        self.rsp_ev
            .push_back((hw_param("RSP_EV_POST_RECV"), qpn, 1));
    }

    fn sends_outstanding(&self, qpn: u32) -> usize {
        self.posted[qpn as usize]
    }

    fn poll_cq(&mut self) -> Option<Cqe> {
        self.cq.pop_front()
    }

    fn ready(&self) -> bool {
        self.mr_cmds.is_empty() && !self.mr_wait && self.rsp_ev.is_empty() && self.req_ev.is_empty()
    }

    fn idle(&self) -> bool {
        self.rx_q.is_empty()
            && self.rx_cur.is_none()
            && self.mem_rsp.quiet()
            && self.mem_req.quiet()
            && self.tx_cur.is_empty()
    }

    fn cycle(&self) -> u64 {
        self.cycle
    }

    fn push_rx(&mut self, at: u64, frame: Vec<u8>) {
        self.rx_q.push_back((at, frame));
    }

    fn pop_tx(&mut self) -> Option<(u64, Vec<u8>)> {
        self.tx_out.pop_front()
    }

    fn counters(&mut self) -> Vec<(String, u64)> {
        let d = &mut self.d;
        d.eval();
        transport_counters!(d)
    }

    fn errors(&self) -> Vec<String> {
        let mut e = self.errors.clone();
        for (q, what, c) in &self.qp_errors {
            e.push(format!("{what} moved QP {q} to Error at cycle {c}"));
        }
        for (m, what) in [(&self.mem_rsp, "responder"), (&self.mem_req, "requester")] {
            for v in &m.violations {
                e.push(format!("{what} AXI: {v}"));
            }
        }
        e
    }

    fn why(&mut self) -> String {
        let busy = self.d.get_s_wqe_ready();
        let c: Vec<String> = self
            .counters()
            .into_iter()
            .filter(|c| c.1 != 0)
            .map(|(n, v)| format!("{n} {v}"))
            .collect();
        format!(
            "{} (hw): frames waiting {}, in MAC input {}, rq answers {}, s_wqe_ready {busy}, \
             in flight per QP {:?}, AXI quiet responder {} requester {}; counters: {}",
            self.name,
            self.rx_q.len(),
            self.rx_cur.is_some(),
            self.rq_resp.len(),
            self.in_hw
                .iter()
                .enumerate()
                .filter(|x| *x.1 > 0)
                .collect::<Vec<_>>(),
            self.mem_rsp.quiet(),
            self.mem_req.quiet(),
            c.join(", ")
        )
    }

    fn stray_writes(&self, lay: &Layout, allowed: &dyn Fn(u64) -> bool) -> Option<Vec<u64>> {
        // Physical → virtual for every page of the layout.
        let page = lay.page();
        let mut pages = HashMap::new();
        for r in REGIONS {
            let va0 = r.va_base() - r.va_base() % page;
            for p in 0..lay.pages[r as usize] {
                let va = va0 + p * page;
                pages.insert(lay.pa(r, va) / page, va);
            }
        }
        let mut bad = Vec::new();
        for m in [&self.mem_rsp, &self.mem_req] {
            for (pa, _) in m.written() {
                match pages.get(&(pa / page)) {
                    Some(va) if allowed(va + pa % page) => {}
                    Some(va) => bad.push(va + pa % page),
                    None => bad.push(pa),
                }
            }
        }
        bad.sort_unstable();
        Some(bad)
    }

    fn trace_to(&mut self, path: &std::path::Path) -> Result<(), String> {
        self.d.trace_to(path).map_err(|e| e.to_string())
    }

    fn record_rx(&mut self) {
        self.record_rx = true;
    }

    fn rx_log(&self) -> &[(u64, Vec<u8>)] {
        &self.rx_last_beats
    }

    fn step(&mut self) {
        self.cfg();
        let rng = &mut self.rng;
        let d = &mut self.d;
        self.mem_rsp.drive_write(&mut RspAxi(d));
        self.mem_rsp.drive_read(&mut RspAxi(d));
        self.mem_req.drive_write(&mut ReqAxi(d));
        self.mem_req.drive_read(&mut ReqAxi(d));
        // Events.
        let rev = self.rsp_ev.front().copied();
        d.set_s_rsp_ev_valid(rev.is_some());
        if let Some((k, q, c)) = rev {
            d.set_s_rsp_ev_kind(k as _);
            d.set_s_rsp_ev_qpn(q);
            d.set_s_rsp_ev_count(c as _);
        }
        let qev = self.req_ev.front().copied();
        d.set_s_req_ev_valid(qev.is_some());
        let (k, q) = qev.unwrap_or((hw_param("REQ_EV_INIT"), 0));
        d.set_s_req_ev_kind(k as _);
        d.set_s_req_ev_qpn(q);
        // MR commands once mr_tlb is out of its clearing pass (`mr_busy`
        // and `timers_busy` are state, settled by the last edge: no
        // evaluation needed before reading them).
        let busy = d.get_mr_busy() || d.get_timers_busy();
        let shift = self.lay.as_ref().map_or(12, |l| l.page_shift);
        let cmd = self
            .mr_cmds
            .front()
            .copied()
            .filter(|_| !busy && !self.mr_wait);
        d.set_s_mr_cmd_valid(cmd.is_some());
        if let Some(c) = cmd {
            d.set_s_mr_cmd_op(c.op as _);
            d.set_s_mr_cmd_key(c.key);
            d.set_s_mr_cmd_pd(PD as _);
            d.set_s_mr_cmd_access(Access::ALL.bits() as _);
            d.set_s_mr_cmd_addr(c.addr);
            d.set_s_mr_cmd_len(c.len);
            d.set_s_mr_cmd_shift(shift as _);
            d.set_s_mr_cmd_index(c.index);
        }
        // Work requests: once set up, a QP with room in its ring, round
        // robin; the one on the port is held until taken.
        let set_up = self.mr_cmds.is_empty() && !self.mr_wait && self.req_ev.is_empty();
        if self.on_port.is_none() && set_up {
            for i in 0..self.qps {
                let q = (self.rr + i) % self.qps;
                if !self.wqes[q as usize].is_empty() && self.in_hw[q as usize] < self.wqes_per_qp {
                    self.on_port = Some(q);
                    self.rr = q + 1;
                    break;
                }
            }
        }
        let wqe = self.on_port.map(|q| self.wqes[q as usize][0].clone());
        d.set_s_wqe_valid(wqe.is_some());
        if let Some(w) = &wqe {
            d.set_s_wqe_qpn(w.qpn);
            d.set_s_wqe_op(w.verb.hw_code() as _);
            d.set_s_wqe_signaled(true);
            d.set_s_wqe_solicited(false);
            d.set_s_wqe_fence(false);
            d.set_s_wqe_wr_id(w.wr_id);
            d.set_s_wqe_lkey(w.verb.local_region().key());
            d.set_s_wqe_lva(w.lva);
            d.set_s_wqe_len(w.len);
            d.set_s_wqe_rva(w.rva);
            d.set_s_wqe_rkey(
                if w.verb.consumes_recv() && !matches!(w.verb, Verb::WriteImm) {
                    0
                } else {
                    Region::Rem.key()
                },
            );
            d.set_s_wqe_imm(w.imm);
            d.set_s_wqe_swap(w.swap);
            d.set_s_wqe_compare(w.compare);
        }
        // Context ports.
        d.set_rsp_qp_rd_data(&self.reads[0][0]);
        d.set_req_qp_rd_data(&self.reads[1][0]);
        d.set_arb_qp_rd_data(&self.reads[2][0]);
        // Receive queue.
        let rqr = self.rq_resp.front().filter(|r| r.0 <= self.cycle).copied();
        d.set_s_rq_resp_valid(rqr.is_some());
        if let Some((_, w)) = rqr {
            d.set_s_rq_resp_ok(w.is_some());
            d.set_s_rq_resp_key(w.map_or(0, |_| Region::Rcv.key()));
            d.set_s_rq_resp_va(w.map_or(0, |w| w.va));
            d.set_s_rq_resp_len(w.map_or(0, |w| w.len));
        }
        d.set_m_rq_req_ready(true);
        d.set_m_rcqe_ready(true);
        d.set_m_scqe_ready(true);
        d.set_m_req_err_ready(true);
        // Frames in: one beat per cycle.
        if self.rx_cur.is_none() && self.rx_q.front().is_some_and(|f| f.0 <= self.cycle) {
            self.rx_cur = Some((self.rx_q.pop_front().unwrap().1, 0));
        }
        let beat = self.rx_cur.as_ref().map(|(f, i)| {
            let c = &f[i * 8..(i * 8 + 8).min(f.len())];
            (
                crate::axis::le_u64(c),
                (1u32 << c.len()) - 1,
                (i + 1) * 8 >= f.len(),
            )
        });
        d.set_s_axis_tvalid(beat.is_some());
        if let Some((data, keep, last)) = beat {
            d.set_s_axis_tdata(data);
            d.set_s_axis_tkeep(keep as _);
            d.set_s_axis_tlast(last);
            d.set_s_axis_tuser(false);
        }
        let tx_ready = self.tx_ready_permille >= 1000 || rng.chance(self.tx_ready_permille);
        d.set_m_axis_tready(tx_ready);
        d.eval();
        // ---- Handshakes.
        self.mem_rsp.sample_write(&RspAxi(d));
        self.mem_rsp.sample_read(&RspAxi(d));
        self.mem_req.sample_write(&ReqAxi(d));
        self.mem_req.sample_read(&ReqAxi(d));
        for (i, a) in [
            d.get_rsp_qp_rd_addr(),
            d.get_req_qp_rd_addr(),
            d.get_arb_qp_rd_addr(),
        ]
        .into_iter()
        .enumerate()
        {
            self.reads[i].pop_front();
            self.reads[i].push_back(self.ctx[(a % self.qps) as usize]);
        }
        if rev.is_some() && d.get_s_rsp_ev_ready() {
            self.rsp_ev.pop_front();
        }
        if qev.is_some() && d.get_s_req_ev_ready() {
            self.req_ev.pop_front();
        }
        if cmd.is_some() && d.get_s_mr_cmd_ready() {
            self.mr_cmds.pop_front();
            self.mr_wait = true;
        }
        if d.get_m_mr_cmd_done() {
            if d.get_m_mr_cmd_error() {
                self.errors
                    .push(format!("mr_tlb refused a command at cycle {}", self.cycle));
            }
            self.mr_wait = false;
        }
        if wqe.is_some() && d.get_s_wqe_ready() {
            let q = self.on_port.take().unwrap() as usize;
            self.wqes[q].pop_front();
            self.in_hw[q] += 1;
        }
        if d.get_m_scqe_valid() {
            let q = d.get_m_scqe_qpn();
            let status = d.get_m_scqe_status() as u64;
            let op = d.get_m_scqe_opcode() as u64;
            self.cq.push_back(Cqe {
                qpn: q,
                wr_id: d.get_m_scqe_wr_id(),
                ok: status == hw_param("ST_SUCCESS"),
                opcode: Verb::from_hw(op).map_or(WcOpcode::Send, Verb::wc_opcode),
                byte_len: d.get_m_scqe_byte_len(),
                imm: None,
                status: status as u32,
            });
            // Saturating: a completion of a WQE taken before its QP was
            // reset (the counts were cleared) counts nothing.
            let i = q as usize;
            self.in_hw[i] = self.in_hw[i].saturating_sub(1);
            self.posted[i] = self.posted[i].saturating_sub(1);
        }
        let rcqe_flush = crate::responder::code("RCQE_FLUSH");
        if d.get_m_rcqe_valid() && d.get_m_rcqe_status() as u64 == rcqe_flush {
            // The QP went to Error: what was taken, then what was posted,
            // completes with a flush error (as host_if does).
            let q = d.get_m_rcqe_qpn();
            let i = q as usize;
            self.rq_fl[i] = true;
            self.rq_cur[i] = None;
            let ids: Vec<u64> = self.rq_taken[i]
                .drain(..)
                .chain(self.rq[i].drain(..).map(|w| w.wr_id))
                .collect();
            for id in ids {
                self.cq.push_back(flushed_recv(q, id));
            }
        } else if d.get_m_rcqe_valid() && self.rq_fl[d.get_m_rcqe_qpn() as usize] {
            // After the flush: its WQE was flushed.
        } else if d.get_m_rcqe_valid() {
            let q = d.get_m_rcqe_qpn();
            let status = d.get_m_rcqe_status() as u64;
            let op = d.get_m_rcqe_opcode() as u8;
            let info = roce_wire::Opcode(op).info();
            let with_imm = info.is_some_and(|o| o.has(roce_wire::ExtKind::ImmDt));
            let write_imm = info.is_some_and(|o| matches!(o.kind, roce_wire::OpKind::Write));
            // None: a completion for a WQE taken before the QP was reset
            // (its commands were still in the transport); reported with
            // wr_id u64::MAX for the caller to judge.
            let wr_id = self.rq_taken[q as usize].pop_front();
            self.cq.push_back(Cqe {
                qpn: q,
                wr_id: wr_id.unwrap_or(u64::MAX),
                ok: status == crate::responder::code("RCQE_OK"),
                opcode: if write_imm {
                    WcOpcode::RecvRdmaWithImm
                } else {
                    WcOpcode::Recv
                },
                byte_len: d.get_m_rcqe_len(),
                imm: with_imm.then(|| d.get_m_rcqe_imm()),
                status: status as u32,
            });
        }
        if d.get_m_rq_req_valid() {
            let q = d.get_m_rq_req_qpn() as usize;
            let w = if self.rq_fl[q] {
                None
            } else if d.get_m_rq_req_pop() {
                let w = self.rq[q].pop_front();
                if let Some(w) = w {
                    self.rq_cur[q] = Some(w);
                    self.rq_taken[q].push_back(w.wr_id);
                }
                w
            } else {
                self.rq_cur[q]
            };
            self.rq_resp.push_back((self.cycle + 1, w));
        }
        if rqr.is_some() && d.get_s_rq_resp_ready() {
            self.rq_resp.pop_front();
        }
        for (v, q, what) in [
            (d.get_m_req_err_valid(), d.get_m_req_err_qpn(), "requester"),
            (d.get_m_qp_error_valid(), d.get_m_qp_error_qpn(), "resp_chk"),
            (
                d.get_m_exec_error_valid(),
                d.get_m_exec_error_qpn(),
                "resp_exec",
            ),
        ] {
            if v {
                self.qp_errors.push((q, what, self.cycle));
            }
        }
        if beat.is_some() && d.get_s_axis_tready() {
            let (f, i) = self.rx_cur.as_mut().unwrap();
            *i += 1;
            if *i * 8 >= f.len() {
                let (f, _) = self.rx_cur.take().unwrap();
                self.rx_taken += 1;
                if self.record_rx {
                    self.rx_last_beats.push((self.cycle, f));
                }
            }
        }
        if d.get_m_axis_tvalid() && tx_ready {
            if self.tx_cur.is_empty() {
                self.tx_first = self.cycle;
            }
            let k = d.get_m_axis_tkeep().count_ones() as usize;
            self.tx_cur
                .extend_from_slice(&d.get_m_axis_tdata().to_le_bytes()[..k]);
            if d.get_m_axis_tlast() {
                if d.get_m_axis_tuser() {
                    self.errors
                        .push(format!("a frame flagged bad at cycle {}", self.cycle));
                }
                self.tx_out
                    .push_back((self.tx_first, std::mem::take(&mut self.tx_cur)));
            }
        }
        d.tick();
        self.mem_rsp.tick();
        self.mem_req.tick();
        self.cycle += 1;
    }
}

// ------------------------------------------------------------ software NIC

/// The transport model as a NIC: `roce_transport::Endpoint` over a
/// `HostMemory`, paced like the hardware (one frame at a time in each
/// direction at `bytes_per_cycle`), time in nanoseconds at `clock_mhz`.
pub struct SoftNic {
    name: String,
    ep: Endpoint<HostMemory>,
    station: Station,
    lay: Option<Layout>,
    bytes_per_cycle: u64,
    clock_mhz: f64,
    cycle: u64,
    rx_q: VecDeque<(u64, Vec<u8>)>,
    rx_free: u64,
    tx_free: u64,
    tx_out: VecDeque<(u64, Vec<u8>)>,
    qpns: Vec<u32>,
    posted: HashMap<u32, usize>,
    cq: VecDeque<Cqe>,
    errors: Vec<String>,
    rx_accept: u64,
    sent: u64,
    record_rx: bool,
    rx_log: Vec<(u64, Vec<u8>)>,
}

impl SoftNic {
    /// A model NIC with a `bytes_per_cycle` MAC at `clock_mhz`.
    pub fn new(name: &str, station: Station, bytes_per_cycle: u64, clock_mhz: f64) -> SoftNic {
        SoftNic {
            name: name.to_string(),
            ep: Endpoint::new(HostMemory::new(16, 1 << 16)),
            station,
            lay: None,
            bytes_per_cycle,
            clock_mhz,
            cycle: 0,
            rx_q: VecDeque::new(),
            rx_free: 0,
            tx_free: 0,
            tx_out: VecDeque::new(),
            qpns: Vec::new(),
            posted: HashMap::new(),
            cq: VecDeque::new(),
            errors: Vec::new(),
            rx_accept: 0,
            sent: 0,
            record_rx: false,
            rx_log: Vec::new(),
        }
    }

    fn now_ns(&self) -> u64 {
        (self.cycle as f64 * 1000.0 / self.clock_mhz) as u64
    }

    fn beats(&self, len: usize) -> u64 {
        (len as u64).div_ceil(self.bytes_per_cycle)
    }

    /// Adds an RC QP in RTS whose frames carry `path`'s Ethernet and IP
    /// headers (any peer: IPv4 or IPv6, e.g. a live one in `interop`).
    pub fn create_qp_path(&mut self, s: &QpSetup, path: Path) {
        let mut a = QpAttr::new(QpType::Rc, s.qpn, s.dest_qpn);
        a.pmtu = s.pmtu;
        a.sq_psn = Psn::new(s.sq_psn);
        a.rq_psn = Psn::new(s.rq_psn);
        a.timeout = roce_wire::LocalAckTimeout::new(s.timeout).expect("a valid timeout");
        a.retry_cnt = s.retry_cnt;
        a.rnr_retry = s.rnr_retry;
        a.min_rnr_timer = roce_wire::RnrTimer(s.min_rnr_timer);
        a.max_rd_atomic = s.max_rd_atomic;
        a.max_dest_rd_atomic = roce_regs::MAX_DEST_RD_ATOMIC as u8;
        a.pd = PD;
        self.ep.add_qp(Qp::connected(a, Default::default()), path);
        self.qpns.push(s.qpn);
    }

    /// Adds a UD QP in RTS with Q_Key `qkey`; its SENDs carry `path`'s
    /// headers (one destination station per QP: the model keeps one path
    /// per QP).
    pub fn create_ud_qp_path(&mut self, qpn: u32, sq_psn: u32, qkey: u32, pmtu: Pmtu, path: Path) {
        let mut a = QpAttr::new(QpType::Ud, qpn, 0);
        a.pmtu = pmtu;
        a.sq_psn = Psn::new(sq_psn);
        a.qkey = qkey;
        a.pd = PD;
        self.ep.add_qp(Qp::connected(a, Default::default()), path);
        self.qpns.push(qpn);
    }

    /// Queues a UD SEND of `len` bytes at `lva` (in `Region::Src`) to QP
    /// `dest_qpn` with Q_Key `qkey`.
    pub fn post_send_ud(
        &mut self,
        qpn: u32,
        wr_id: u64,
        lva: u64,
        len: u32,
        dest_qpn: u32,
        qkey: u32,
    ) {
        let sge = Sge {
            addr: lva,
            len,
            lkey: Region::Src.key(),
        };
        let mut wr = roce_transport::SendWr::new(wr_id, WrOp::Send, vec![sge]);
        wr.ud = Some(roce_transport::UdDest {
            qpn: dest_qpn,
            qkey,
        });
        match self.ep.qp_mut(qpn).expect("a created QP").post_send(wr) {
            Ok(_) => *self.posted.entry(qpn).or_default() += 1,
            Err(e) => self.errors.push(format!("QP {qpn}: post_send {e:?}")),
        }
    }
}

impl SimNic for SoftNic {
    fn name(&self) -> &str {
        &self.name
    }

    fn engine(&self) -> &'static str {
        "model"
    }

    fn create_qp(&mut self, s: &QpSetup, peer: Station) {
        let path = Path {
            eth: roce_wire::EthernetRepr {
                dst: peer.mac,
                src: self.station.mac,
                vlan: None,
                ethertype: 0,
            },
            ip: ipv4_path(self.station, peer),
        };
        self.create_qp_path(s, path);
    }

    fn reg_mrs(&mut self, lay: &Layout) {
        for r in REGIONS {
            self.ep
                .mem
                .map(
                    r.key(),
                    PD,
                    Access::ALL,
                    r.va_base(),
                    lay.used[r as usize].max(1),
                )
                .expect("the model's memory takes the region");
        }
        self.lay = Some(lay.clone());
    }

    fn write(&mut self, va: u64, bytes: &[u8]) {
        self.ep.mem.poke(Region::of(va).key(), va, bytes);
    }

    fn read(&self, va: u64, n: usize) -> Vec<u8> {
        self.ep.mem.peek(Region::of(va).key(), va, n)
    }

    fn post_send(&mut self, wr: SendWr) {
        let remote = Remote {
            va: wr.rva,
            rkey: Region::Rem.key(),
        };
        let op = match wr.verb {
            Verb::Send => WrOp::Send,
            Verb::SendImm => WrOp::SendImm(wr.imm),
            Verb::Write => WrOp::Write(remote),
            Verb::WriteImm => WrOp::WriteImm(remote, wr.imm),
            Verb::Read => WrOp::Read(remote),
            Verb::CmpSwap => WrOp::CmpSwap {
                remote,
                compare: wr.compare,
                swap: wr.swap,
            },
            Verb::FetchAdd => WrOp::FetchAdd {
                remote,
                add: wr.swap,
            },
        };
        let sge = Sge {
            addr: wr.lva,
            len: wr.len,
            lkey: wr.verb.local_region().key(),
        };
        let r = self
            .ep
            .qp_mut(wr.qpn)
            .expect("a created QP")
            .post_send(roce_transport::SendWr::new(wr.wr_id, op, vec![sge]));
        if let Err(e) = r {
            self.errors.push(format!("QP {}: post_send {e:?}", wr.qpn));
        } else {
            *self.posted.entry(wr.qpn).or_default() += 1;
        }
    }

    fn post_recv(&mut self, qpn: u32, wr: RecvWr) {
        let sge = Sge {
            addr: wr.va,
            len: wr.len,
            lkey: Region::Rcv.key(),
        };
        let r = self
            .ep
            .qp_mut(qpn)
            .expect("a created QP")
            .post_recv(roce_transport::RecvWr {
                wr_id: wr.wr_id,
                sgl: vec![sge],
            });
        if let Err(e) = r {
            self.errors.push(format!("QP {qpn}: post_recv {e:?}"));
        }
    }

    fn sends_outstanding(&self, qpn: u32) -> usize {
        self.posted.get(&qpn).copied().unwrap_or(0)
    }

    fn poll_cq(&mut self) -> Option<Cqe> {
        self.cq.pop_front()
    }

    fn ready(&self) -> bool {
        self.lay.is_some()
    }

    fn idle(&self) -> bool {
        self.rx_q.is_empty() && self.rx_free <= self.cycle && self.tx_free <= self.cycle
    }

    fn step(&mut self) {
        let now = self.now_ns();
        // One frame in at a time, at the MAC's rate.
        if self.rx_free <= self.cycle && self.rx_q.front().is_some_and(|f| f.0 <= self.cycle) {
            let (_, f) = self.rx_q.pop_front().unwrap();
            self.rx_free = self.cycle + self.beats(f.len());
            if self.record_rx {
                self.rx_log.push((self.rx_free - 1, f.clone()));
            }
            if self.ep.receive_frame(now, &f).is_ok() {
                self.rx_accept += 1;
            }
        }
        if self.ep.next_deadline().is_some_and(|t| t <= now) {
            for &q in &self.qpns {
                self.ep.qp_mut(q).expect("listed").handle_timers(now);
            }
        }
        if self.tx_free <= self.cycle {
            if let Some(f) = self.ep.poll_transmit_frame(now) {
                self.tx_free = self.cycle + self.beats(f.len());
                self.sent += 1;
                self.tx_out.push_back((self.cycle, f));
            }
        }
        for &q in &self.qpns {
            let qp = self.ep.qp_mut(q).expect("listed");
            while let Some(c) = qp.poll_cq() {
                let recv = matches!(c.opcode, WcOpcode::Recv | WcOpcode::RecvRdmaWithImm);
                if !recv {
                    *self.posted.get_mut(&q).expect("posted") -= 1;
                }
                self.cq.push_back(Cqe {
                    qpn: q,
                    wr_id: c.wr_id,
                    ok: c.status == WcStatus::Success,
                    opcode: c.opcode,
                    byte_len: c.byte_len,
                    imm: c.imm,
                    status: c.status as u32,
                });
            }
        }
        self.cycle += 1;
    }

    fn cycle(&self) -> u64 {
        self.cycle
    }

    fn push_rx(&mut self, at: u64, frame: Vec<u8>) {
        self.rx_q.push_back((at, frame));
    }

    fn pop_tx(&mut self) -> Option<(u64, Vec<u8>)> {
        self.tx_out.pop_front()
    }

    fn counters(&mut self) -> Vec<(String, u64)> {
        let mut v = vec![
            ("rx_accept".to_string(), self.rx_accept),
            ("frames_sent".to_string(), self.sent),
            ("rx_unknown_qp".to_string(), self.ep.unknown_qp_drops()),
        ];
        for r in roce_wire::DropReason::ALL {
            v.push((
                format!("rx_{}", r.name().replace('-', "_")),
                self.ep.frame_drops(r),
            ));
        }
        // The model's per-QP counters, summed; those the hardware also
        // counts under the hardware's name.
        use roce_transport::Counter as C;
        for &c in C::ALL {
            let n: u64 = self
                .qpns
                .iter()
                .map(|&q| self.ep.qp(q).expect("listed").counters().get(c))
                .sum();
            let name = match c {
                C::RequestSent => "req_sent".to_string(),
                C::RequestRetransmitted => "req_retx".to_string(),
                C::RetryTimeout => "req_retry_timeout".to_string(),
                C::RetrySeqNak => "req_retry_seq_nak".to_string(),
                C::NakPsnSeqSent => "rsp_nak_psn_seq".to_string(),
                C::RnrNakSent => "rsp_rnr_nak".to_string(),
                C::DuplicateRequest => "rsp_duplicate".to_string(),
                C::DropOutOfSequence => "rsp_drop_out_of_seq".to_string(),
                _ => c.name().replace('-', "_"),
            };
            v.push((name, n));
        }
        v
    }

    fn errors(&self) -> Vec<String> {
        self.errors.clone()
    }

    fn why(&mut self) -> String {
        format!(
            "{} (model): frames waiting {}, sends outstanding {:?}",
            self.name,
            self.rx_q.len(),
            self.posted
        )
    }

    fn stray_writes(&self, _: &Layout, _: &dyn Fn(u64) -> bool) -> Option<Vec<u64>> {
        None
    }

    fn trace_to(&mut self, _: &std::path::Path) -> Result<(), String> {
        Err(format!("{}: the model NIC has no waveform", self.name))
    }

    fn record_rx(&mut self) {
        self.record_rx = true;
    }

    fn rx_log(&self) -> &[(u64, Vec<u8>)] {
        &self.rx_log
    }
}
