//! `tx_arb`: transport packets to `roce_tx`. The transport's packet
//! sources hand it *transport packet descriptors* (opcode, PSN, the
//! extension-header fields, a payload length and the local QPN) that know
//! nothing about addressing; this block picks one per cycle from two ports,
//! reads the QP's context for the path, and drives `roce_tx`'s descriptor
//! port (`m_hdr_*`, named as `roce_tx`'s `s_hdr_*`) and payload stream.
//!
//! **Ports.** `s_rsp_*` (the responder: ACK, NAK, RNR NAK, ATOMIC ACK,
//! READ responses) and `s_req_*` (the requester: requests and
//! retransmissions) carry the same fields, each with a payload stream
//! (`s_rsp_pay`, `s_req_pay`) carrying one packet of `payload_len` bytes for
//! every descriptor whose opcode has payload (`roce_wire`'s opcode table)
//! and whose `payload_len` is not 0.
//!
//! **Arbitration** per packet: responses win when both ports wait, except
//! that after [`STARVE_LIMIT`] responder descriptors taken in a row while
//! a requester descriptor waited, the requester's is taken next. A taken
//! descriptor's payload packet is forwarded whole, in take order, before
//! any other port's payload (a queue of port numbers, one per descriptor
//! with payload).
//!
//! **Pipeline** (one descriptor per cycle):
//! - take (cycle t): `qp_rd_addr` is the taken descriptor's QPN; its
//!   fields go into the descriptor queue (`dfifo`);
//! - t+1: the csr block's context port works (`QpStore::BramOutReg`);
//! - t+2: the context is on `qp_rd_data`; the path ([`CtxPath`]: MACs,
//!   IP version and addresses, P_Key, DestQP, UDP source port, DETH) is
//!   worked out and written into the path queue (`pfifo`);
//! - t+4: both queues' heads are on `m_hdr_*`, `m_hdr_valid` high
//!   ([`LATENCY`]).
//!
//! Descriptors are taken while fewer than [`CREDITS`] are in the pipeline
//! or the queues, so nothing stalls and `m_hdr_ready` reaches only the
//! queues' read side.
//!
//! **Path rules** (sources in docs/ARCHITECTURE.md, `tx_arb`): IPv6 unless
//! the destination GID is IPv4-mapped (`::ffff:a.b.c.d`, RFC 4291; what
//! `Ipv6Addr::to_ipv4_mapped` and rxe's `ipv6_addr_v4mapped` test), then
//! IPv4 to its last 4 bytes; the source address is GID table entry
//! `path.SGID_INDEX` (its last 4 bytes for IPv4); P_Key = P_Key table entry
//! `path.PKEY_INDEX`; BTH DestQP = `dest_qpn.QPN`; UDP source port =
//! `cfg_udp_sport | ((qpn ^ qpn >> 14) & 0x3FFF)` (the transport model's
//! `roce_transport::endpoint::udp_src_port` with the `cfg.udp_sport` base);
//! TOS / traffic class 0, TTL / hop limit 64, flow label 0, no VLAN, DF set,
//! IPv4 identification = frames sent since reset mod 2^16 (rxe: a counter
//! and DF); MigReq 0, FECN 0, BECN from the descriptor; DETH Q_Key =
//! `qkey.QKEY`, source QP = the local QPN.

use crate::csr::{ctx_layout, QpStore, QP_CTX_BITS};
use crate::fifo::SyncFifo;
use crate::roce_tx::RoceTx;
use crate::stream::{check_width, StreamIn, StreamOut};
use roce_wire::opcode::Opcode;
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

/// Cycles from a descriptor's handshake to `m_hdr_valid` (with `m_hdr`
/// free; measured by `sim/tests/tx_arb.rs`).
pub const LATENCY: usize = 4;
/// Descriptors the block holds (pipeline and queues): the credit limit.
pub const CREDITS: u64 = 8;
/// Responder descriptors taken in a row while a requester descriptor
/// waits before the requester gets one turn.
pub const STARVE_LIMIT: u64 = 7;
/// IPv4 TTL / IPv6 hop limit (rxe's default, DESIGN §5).
pub const TTL: u64 = 64;
/// IPv4 TOS / IPv6 traffic class.
pub const TOS: u64 = 0;
/// IPv6 flow label.
pub const FLOW_LABEL: u64 = 0;
/// Low bits of the UDP source port taken from the QPN hash.
pub const SPORT_HASH_MASK: u32 = 0x3FFF;
/// GID and P_Key table entries (`roce_regs`).
pub const GIDS: usize = roce_regs::GID_COUNT as usize;
pub const PKEYS: usize = roce_regs::PKEY_COUNT as usize;
/// `cfg_gid` bits: entry e at `[128e +: 128]`, byte 0 of the GID in the
/// entry's top bits (`gid_w0` at `[128e+96 +: 32]`).
pub const GID_TABLE_BITS: usize = 128 * GIDS;
/// `cfg_pkey` bits: entry e at `[16e +: 16]`.
pub const PKEY_TABLE_BITS: usize = 16 * PKEYS;
const _: () = assert!(GID_TABLE_BITS == 512 && PKEY_TABLE_BITS == 64);

/// The UDP source port of local QP `qpn` with base `base` (what
/// [`CtxPath`] computes; the transport model's scheme).
pub const fn udp_src_port(base: u16, qpn: u32) -> u16 {
    base | ((qpn ^ (qpn >> 14)) & SPORT_HASH_MASK) as u16
}

/// A transport packet descriptor as queued (the input ports' fields but
/// the QPN).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct TxDesc {
    pub opcode: Bits<8>,
    pub psn: Bits<24>,
    pub ack_req: Bits<1>,
    pub se: Bits<1>,
    pub payload_len: Bits<16>,
    pub aeth_syndrome: Bits<8>,
    pub aeth_msn: Bits<24>,
    pub reth_va: Bits<64>,
    pub reth_rkey: Bits<32>,
    pub reth_dmalen: Bits<32>,
    pub immdt: Bits<32>,
    pub ieth: Bits<32>,
    pub atomic_va: Bits<64>,
    pub atomic_rkey: Bits<32>,
    pub atomic_swap_add: Bits<64>,
    pub atomic_compare: Bits<64>,
    pub atomic_ack_data: Bits<64>,
    pub becn: Bits<1>,
}

/// What the context and the configuration give a descriptor.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct TxPath {
    pub dst_mac: Bits<48>,
    pub ipv6: Bits<1>,
    pub ip_src: Bits<128>,
    pub ip_dst: Bits<128>,
    pub pkey: Bits<16>,
    pub dest_qp: Bits<24>,
    pub udp_src_port: Bits<16>,
    pub ip_ident: Bits<16>,
    pub deth_qkey: Bits<32>,
    pub deth_src_qp: Bits<24>,
}

/// Where a context field sits in `qp_rd_data`, checked to have `width`.
fn ctx_at(reg: &roce_regs::Register, field: &roce_regs::Field, width: usize) -> usize {
    let (_, f, at) = ctx_layout()
        .into_iter()
        .find(|(r, f, _)| r.name == reg.name && f.name == field.name)
        .unwrap_or_else(|| {
            panic!(
                "context field {}.{} not in the layout",
                reg.name, field.name
            )
        });
    assert_eq!(f.width as usize, width, "{}.{} width", reg.name, field.name);
    at
}

/// Context field offsets [`CtxPath`] reads.
#[derive(Clone, Copy, Debug)]
struct CtxOffsets {
    dest_qpn: usize,
    sgid: usize,
    pkey_index: usize,
    dmac_hi: usize,
    dmac_lo: usize,
    dgid: [usize; 4],
    qkey: usize,
}

impl CtxOffsets {
    fn new() -> Self {
        use roce_regs::qp;
        assert_eq!(qp::path::SGID_INDEX.width as usize, 2, "4 GIDs");
        assert_eq!(qp::path::PKEY_INDEX.width as usize, 2, "4 P_Keys");
        CtxOffsets {
            dest_qpn: ctx_at(&qp::dest_qpn::REG, &qp::dest_qpn::QPN, 24),
            sgid: ctx_at(&qp::path::REG, &qp::path::SGID_INDEX, 2),
            pkey_index: ctx_at(&qp::path::REG, &qp::path::PKEY_INDEX, 2),
            dmac_hi: ctx_at(&qp::dmac_hi::REG, &qp::dmac_hi::MAC, 16),
            dmac_lo: ctx_at(&qp::dmac_lo::REG, &qp::dmac_lo::MAC, 32),
            dgid: [
                ctx_at(&qp::dgid_w0::REG, &qp::dgid_w0::WORD, 32),
                ctx_at(&qp::dgid_w1::REG, &qp::dgid_w1::WORD, 32),
                ctx_at(&qp::dgid_w2::REG, &qp::dgid_w2::WORD, 32),
                ctx_at(&qp::dgid_w3::REG, &qp::dgid_w3::WORD, 32),
            ],
            qkey: ctx_at(&qp::qkey::REG, &qp::qkey::QKEY, 32),
        }
    }
}

/// Bits `[at, at + n)` of `v` as a `u128` (n <= 128).
fn field<const N: usize>(v: Bits<N>, at: usize, n: usize) -> u128 {
    (0..n).fold(0u128, |a, b| a | (v.get_bit(at + b) as u128) << b)
}

/// The low `N` bits of `v` as `Bits<N>` (N <= 128).
fn bits<const N: usize>(v: u128) -> Bits<N> {
    (0..N).fold(Bits::<N>::default(), |a, b| {
        a.replace_bit(b, v >> b & 1 == 1)
    })
}

/// The path of one descriptor from its QP's context and the configuration
/// (combinational; the Verilog is written from the context layout).
#[derive(LogicBlock)]
pub struct CtxPath<const Q: usize> {
    pub ctx: Signal<In, Bits<QP_CTX_BITS>>,
    pub qpn: Signal<In, Bits<Q>>,
    pub gid: Signal<In, Bits<GID_TABLE_BITS>>,
    pub pkey_tab: Signal<In, Bits<PKEY_TABLE_BITS>>,
    pub sport: Signal<In, Bits<16>>,
    pub dst_mac: Signal<Out, Bits<48>>,
    pub ipv6: Signal<Out, Bits<1>>,
    pub ip_src: Signal<Out, Bits<128>>,
    pub ip_dst: Signal<Out, Bits<128>>,
    pub pkey: Signal<Out, Bits<16>>,
    pub dest_qp: Signal<Out, Bits<24>>,
    pub udp_src_port: Signal<Out, Bits<16>>,
    pub deth_qkey: Signal<Out, Bits<32>>,
    pub deth_src_qp: Signal<Out, Bits<24>>,
    _at: CtxOffsets,
}

impl<const Q: usize> CtxPath<Q> {
    pub fn new() -> Self {
        assert!(
            (1..=14).contains(&Q),
            "CtxPath: QP index bits {Q} out of 1..=14"
        );
        Self {
            ctx: Default::default(),
            qpn: Default::default(),
            gid: Default::default(),
            pkey_tab: Default::default(),
            sport: Default::default(),
            dst_mac: Default::default(),
            ipv6: Default::default(),
            ip_src: Default::default(),
            ip_dst: Default::default(),
            pkey: Default::default(),
            dest_qp: Default::default(),
            udp_src_port: Default::default(),
            deth_qkey: Default::default(),
            deth_src_qp: Default::default(),
            _at: CtxOffsets::new(),
        }
    }
}

impl<const Q: usize> Default for CtxPath<Q> {
    fn default() -> Self {
        Self::new()
    }
}

/// The `::ffff:0:0/96` prefix of an IPv4-mapped address (RFC 4291 §2.5.5.2).
const V4_MAPPED: u128 = 0xFFFF << 32;

impl<const Q: usize> Logic for CtxPath<Q> {
    fn update(&mut self) {
        let a = self._at;
        let c = self.ctx.val();
        let dgid = a
            .dgid
            .iter()
            .fold(0u128, |g, &at| g << 32 | field(c, at, 32));
        let sgi = field(c, a.sgid, 2) as usize;
        let pki = field(c, a.pkey_index, 2) as usize;
        let q = field(self.qpn.val(), 0, Q) as u32;
        self.dst_mac.next = bits(field(c, a.dmac_hi, 16) << 32 | field(c, a.dmac_lo, 32));
        self.ipv6.next = bits((dgid >> 32 != V4_MAPPED >> 32) as u128);
        self.ip_dst.next = bits(dgid);
        self.ip_src.next = bits(field(self.gid.val(), 128 * sgi, 128));
        self.pkey.next = bits(field(self.pkey_tab.val(), 16 * pki, 16));
        self.dest_qp.next = bits(field(c, a.dest_qpn, 24));
        self.udp_src_port.next =
            bits(udp_src_port(field(self.sport.val(), 0, 16) as u16, q) as u128);
        self.deth_qkey.next = bits(field(c, a.qkey, 32));
        self.deth_src_qp.next = bits(q as u128);
    }
    fn connect(&mut self) {
        self.dst_mac.connect();
        self.ipv6.connect();
        self.ip_src.connect();
        self.ip_dst.connect();
        self.pkey.connect();
        self.dest_qp.connect();
        self.udp_src_port.connect();
        self.deth_qkey.connect();
        self.deth_src_qp.connect();
    }
    fn hdl(&self) -> Verilog {
        let a = self._at;
        let mut v = format!(
            "wire [127:0] dgid = {{ctx[{}+:32], ctx[{}+:32], ctx[{}+:32], ctx[{}+:32]}};\n\
             wire [1:0] sgi = ctx[{}+:2];\n\
             wire [1:0] pki = ctx[{}+:2];\n\
             wire [23:0] q24 = qpn;\n\
             wire [23:0] hash = q24 ^ (q24 >> 14);\n\
             always @(*) dst_mac = {{ctx[{}+:16], ctx[{}+:32]}};\n\
             always @(*) ip_dst = dgid;\n\
             always @(*) ipv6 = dgid[127:32] != 96'h{:024x};\n\
             always @(*) dest_qp = ctx[{}+:24];\n\
             always @(*) udp_src_port = sport | hash[15:0] & 16'h{:04x};\n\
             always @(*) deth_qkey = ctx[{}+:32];\n\
             always @(*) deth_src_qp = q24;\n",
            a.dgid[0],
            a.dgid[1],
            a.dgid[2],
            a.dgid[3],
            a.sgid,
            a.pkey_index,
            a.dmac_hi,
            a.dmac_lo,
            V4_MAPPED >> 32,
            a.dest_qpn,
            SPORT_HASH_MASK,
            a.qkey,
        );
        v.push_str("always @(*) begin\n    case (sgi)\n");
        for e in 0..GIDS {
            v.push_str(&format!(
                "        2'd{e}: ip_src = gid[{}:{}];\n",
                128 * e + 127,
                128 * e
            ));
        }
        v.push_str("    endcase\n    case (pki)\n");
        for e in 0..PKEYS {
            v.push_str(&format!(
                "        2'd{e}: pkey = pkey_tab[{}:{}];\n",
                16 * e + 15,
                16 * e
            ));
        }
        v.push_str("    endcase\nend\n");
        Verilog::Custom(v)
    }
}

/// A 256-entry opcode flag table.
fn opcode_rom(f: impl Fn(u8) -> bool) -> Constant<Bits<256>> {
    let mut b = Bits::<256>::default();
    for c in 0..=255u8 {
        if f(c) {
            b = b.replace_bit(c as usize, true);
        }
    }
    Constant::new(b)
}

/// Opcodes whose packets carry a payload (`roce_wire`'s opcode table).
pub fn has_payload(opcode: u8) -> bool {
    Opcode(opcode).info().is_some_and(|i| i.has_payload())
}

/// The arbiter (see the module documentation); `2^Q` QPs.
#[derive(LogicBlock)]
pub struct TxArb<const W: usize, const K: usize, const Q: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high: empties the pipeline and the queues.
    pub reset: Signal<In, Bit>,
    /// Responder descriptors (strict priority but for [`STARVE_LIMIT`]).
    pub s_rsp_valid: Signal<In, Bit>,
    pub s_rsp_ready: Signal<Out, Bit>,
    /// Requester descriptors.
    pub s_req_valid: Signal<In, Bit>,
    pub s_req_ready: Signal<Out, Bit>,
    pub s_rsp_qpn: Signal<In, Bits<Q>>,
    pub s_rsp_opcode: Signal<In, Bits<8>>,
    pub s_rsp_psn: Signal<In, Bits<24>>,
    pub s_rsp_ack_req: Signal<In, Bits<1>>,
    pub s_rsp_se: Signal<In, Bits<1>>,
    pub s_rsp_payload_len: Signal<In, Bits<16>>,
    pub s_rsp_aeth_syndrome: Signal<In, Bits<8>>,
    pub s_rsp_aeth_msn: Signal<In, Bits<24>>,
    pub s_rsp_reth_va: Signal<In, Bits<64>>,
    pub s_rsp_reth_rkey: Signal<In, Bits<32>>,
    pub s_rsp_reth_dmalen: Signal<In, Bits<32>>,
    pub s_rsp_immdt: Signal<In, Bits<32>>,
    pub s_rsp_ieth: Signal<In, Bits<32>>,
    pub s_rsp_atomic_va: Signal<In, Bits<64>>,
    pub s_rsp_atomic_rkey: Signal<In, Bits<32>>,
    pub s_rsp_atomic_swap_add: Signal<In, Bits<64>>,
    pub s_rsp_atomic_compare: Signal<In, Bits<64>>,
    pub s_rsp_atomic_ack_data: Signal<In, Bits<64>>,
    pub s_rsp_becn: Signal<In, Bits<1>>,

    pub s_req_qpn: Signal<In, Bits<Q>>,
    pub s_req_opcode: Signal<In, Bits<8>>,
    pub s_req_psn: Signal<In, Bits<24>>,
    pub s_req_ack_req: Signal<In, Bits<1>>,
    pub s_req_se: Signal<In, Bits<1>>,
    pub s_req_payload_len: Signal<In, Bits<16>>,
    pub s_req_aeth_syndrome: Signal<In, Bits<8>>,
    pub s_req_aeth_msn: Signal<In, Bits<24>>,
    pub s_req_reth_va: Signal<In, Bits<64>>,
    pub s_req_reth_rkey: Signal<In, Bits<32>>,
    pub s_req_reth_dmalen: Signal<In, Bits<32>>,
    pub s_req_immdt: Signal<In, Bits<32>>,
    pub s_req_ieth: Signal<In, Bits<32>>,
    pub s_req_atomic_va: Signal<In, Bits<64>>,
    pub s_req_atomic_rkey: Signal<In, Bits<32>>,
    pub s_req_atomic_swap_add: Signal<In, Bits<64>>,
    pub s_req_atomic_compare: Signal<In, Bits<64>>,
    pub s_req_atomic_ack_data: Signal<In, Bits<64>>,
    pub s_req_becn: Signal<In, Bits<1>>,

    /// Payload packets, one per descriptor with payload, per port.
    pub s_rsp_pay: StreamIn<W, K>,
    pub s_req_pay: StreamIn<W, K>,
    /// The csr block's datapath context port (2-cycle form).
    pub qp_rd_addr: Signal<Out, Bits<Q>>,
    pub qp_rd_data: Signal<In, Bits<QP_CTX_BITS>>,
    /// Configuration (the csr block's `cfg` registers): station MAC
    /// (`mac_hi:mac_lo`, byte 0 in bits 47:40), UDP source port base, GID
    /// table (entry e at `[128e +: 128]`, `gid_w0` highest), P_Key table
    /// (entry e at `[16e +: 16]`).
    pub cfg_mac: Signal<In, Bits<48>>,
    pub cfg_udp_sport: Signal<In, Bits<16>>,
    pub cfg_gid: Signal<In, Bits<GID_TABLE_BITS>>,
    pub cfg_pkey: Signal<In, Bits<PKEY_TABLE_BITS>>,
    /// To `roce_tx`'s `s_hdr_*`, one to one.
    pub m_hdr_valid: Signal<Out, Bit>,
    pub m_hdr_ready: Signal<In, Bit>,
    pub m_hdr_dst_mac: Signal<Out, Bits<48>>,
    pub m_hdr_src_mac: Signal<Out, Bits<48>>,
    pub m_hdr_vlan: Signal<Out, Bits<1>>,
    pub m_hdr_vlan_tci: Signal<Out, Bits<16>>,
    pub m_hdr_ipv6: Signal<Out, Bits<1>>,
    pub m_hdr_tos: Signal<Out, Bits<8>>,
    pub m_hdr_ttl: Signal<Out, Bits<8>>,
    pub m_hdr_flow_label: Signal<Out, Bits<20>>,
    pub m_hdr_ip_ident: Signal<Out, Bits<16>>,
    pub m_hdr_ip_df: Signal<Out, Bits<1>>,
    pub m_hdr_ip_src: Signal<Out, Bits<128>>,
    pub m_hdr_ip_dst: Signal<Out, Bits<128>>,
    pub m_hdr_udp_src_port: Signal<Out, Bits<16>>,
    pub m_hdr_opcode: Signal<Out, Bits<8>>,
    pub m_hdr_se: Signal<Out, Bits<1>>,
    pub m_hdr_mig: Signal<Out, Bits<1>>,
    pub m_hdr_pkey: Signal<Out, Bits<16>>,
    pub m_hdr_fecn: Signal<Out, Bits<1>>,
    pub m_hdr_becn: Signal<Out, Bits<1>>,
    pub m_hdr_dest_qp: Signal<Out, Bits<24>>,
    pub m_hdr_ack_req: Signal<Out, Bits<1>>,
    pub m_hdr_psn: Signal<Out, Bits<24>>,
    pub m_hdr_payload_len: Signal<Out, Bits<16>>,
    pub m_hdr_reth_va: Signal<Out, Bits<64>>,
    pub m_hdr_reth_rkey: Signal<Out, Bits<32>>,
    pub m_hdr_reth_dma_len: Signal<Out, Bits<32>>,
    pub m_hdr_aeth_syndrome: Signal<Out, Bits<8>>,
    pub m_hdr_aeth_msn: Signal<Out, Bits<24>>,
    pub m_hdr_immdt: Signal<Out, Bits<32>>,
    pub m_hdr_ieth: Signal<Out, Bits<32>>,
    pub m_hdr_atomic_va: Signal<Out, Bits<64>>,
    pub m_hdr_atomic_rkey: Signal<Out, Bits<32>>,
    pub m_hdr_atomic_swap_add: Signal<Out, Bits<64>>,
    pub m_hdr_atomic_compare: Signal<Out, Bits<64>>,
    pub m_hdr_atomic_ack_data: Signal<Out, Bits<64>>,
    pub m_hdr_deth_qkey: Signal<Out, Bits<32>>,
    pub m_hdr_deth_src_qp: Signal<Out, Bits<24>>,
    /// To `roce_tx`'s `s_payload`.
    pub m_payload: StreamOut<W, K>,
    // Pipeline and queues.
    p1_valid: DFF<Bit>,
    p1_qpn: DFF<Bits<Q>>,
    p2_valid: DFF<Bit>,
    p2_qpn: DFF<Bits<Q>>,
    inflight: DFF<Bits<4>>,
    starve: DFF<Bits<3>>,
    ident: DFF<Bits<16>>,
    dfifo: SyncFifo<TxDesc, 3, 4>,
    pfifo: SyncFifo<TxPath, 3, 4>,
    /// The port of each taken descriptor with payload (1: requester).
    route: SyncFifo<Bit, 4, 5>,
    path: CtxPath<Q>,
    // Combinational.
    ok: Signal<Local, Bit>,
    req_turn: Signal<Local, Bit>,
    rdy_rsp: Signal<Local, Bit>,
    rdy_req: Signal<Local, Bit>,
    take_rsp: Signal<Local, Bit>,
    take_req: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    din: Signal<Local, TxDesc>,
    pin: Signal<Local, TxPath>,
    sel_qpn: Signal<Local, Bits<Q>>,
    sel_op: Signal<Local, Bits<8>>,
    sel_len: Signal<Local, Bits<16>>,
    has_pay: Signal<Local, Bit>,
    pay_on: Signal<Local, Bit>,
    pay_valid: Signal<Local, Bit>,
    pay_last: Signal<Local, Bit>,
    // Constants.
    rom_pay: Constant<Bits<256>>,
    limit: Constant<Bits<4>>,
    starve_max: Constant<Bits<3>>,
    c_ttl: Constant<Bits<8>>,
    c_tos: Constant<Bits<8>>,
    c_flow: Constant<Bits<20>>,
}

/// 1024 QPs (the floor) at each width.
pub type TxArb64 = TxArb<64, 8, 10>;
pub type TxArb128 = TxArb<128, 16, 10>;
pub type TxArb256 = TxArb<256, 32, 10>;
pub type TxArb512 = TxArb<512, 64, 10>;

impl<const W: usize, const K: usize, const Q: usize> TxArb<W, K, Q> {
    pub fn new() -> Self {
        check_width("TxArb", W, K);
        assert!(
            (1..=14).contains(&Q),
            "TxArb: QP index bits {Q} out of 1..=14"
        );
        // The pipeline reads the context two cycles after the take.
        assert_eq!(QpStore::BramOutReg.latency(), 2);
        assert!(CREDITS as usize <= SyncFifo::<TxDesc, 3, 4>::CAPACITY);
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_rsp_valid: Default::default(),
            s_rsp_ready: Default::default(),
            s_rsp_qpn: Default::default(),
            s_rsp_opcode: Default::default(),
            s_rsp_psn: Default::default(),
            s_rsp_ack_req: Default::default(),
            s_rsp_se: Default::default(),
            s_rsp_payload_len: Default::default(),
            s_rsp_aeth_syndrome: Default::default(),
            s_rsp_aeth_msn: Default::default(),
            s_rsp_reth_va: Default::default(),
            s_rsp_reth_rkey: Default::default(),
            s_rsp_reth_dmalen: Default::default(),
            s_rsp_immdt: Default::default(),
            s_rsp_ieth: Default::default(),
            s_rsp_atomic_va: Default::default(),
            s_rsp_atomic_rkey: Default::default(),
            s_rsp_atomic_swap_add: Default::default(),
            s_rsp_atomic_compare: Default::default(),
            s_rsp_atomic_ack_data: Default::default(),
            s_rsp_becn: Default::default(),
            s_rsp_pay: Default::default(),
            s_req_valid: Default::default(),
            s_req_ready: Default::default(),
            s_req_qpn: Default::default(),
            s_req_opcode: Default::default(),
            s_req_psn: Default::default(),
            s_req_ack_req: Default::default(),
            s_req_se: Default::default(),
            s_req_payload_len: Default::default(),
            s_req_aeth_syndrome: Default::default(),
            s_req_aeth_msn: Default::default(),
            s_req_reth_va: Default::default(),
            s_req_reth_rkey: Default::default(),
            s_req_reth_dmalen: Default::default(),
            s_req_immdt: Default::default(),
            s_req_ieth: Default::default(),
            s_req_atomic_va: Default::default(),
            s_req_atomic_rkey: Default::default(),
            s_req_atomic_swap_add: Default::default(),
            s_req_atomic_compare: Default::default(),
            s_req_atomic_ack_data: Default::default(),
            s_req_becn: Default::default(),
            s_req_pay: Default::default(),
            qp_rd_addr: Default::default(),
            qp_rd_data: Default::default(),
            cfg_mac: Default::default(),
            cfg_udp_sport: Default::default(),
            cfg_gid: Default::default(),
            cfg_pkey: Default::default(),
            m_hdr_valid: Default::default(),
            m_hdr_ready: Default::default(),
            m_hdr_dst_mac: Default::default(),
            m_hdr_src_mac: Default::default(),
            m_hdr_vlan: Default::default(),
            m_hdr_vlan_tci: Default::default(),
            m_hdr_ipv6: Default::default(),
            m_hdr_tos: Default::default(),
            m_hdr_ttl: Default::default(),
            m_hdr_flow_label: Default::default(),
            m_hdr_ip_ident: Default::default(),
            m_hdr_ip_df: Default::default(),
            m_hdr_ip_src: Default::default(),
            m_hdr_ip_dst: Default::default(),
            m_hdr_udp_src_port: Default::default(),
            m_hdr_opcode: Default::default(),
            m_hdr_se: Default::default(),
            m_hdr_mig: Default::default(),
            m_hdr_pkey: Default::default(),
            m_hdr_fecn: Default::default(),
            m_hdr_becn: Default::default(),
            m_hdr_dest_qp: Default::default(),
            m_hdr_ack_req: Default::default(),
            m_hdr_psn: Default::default(),
            m_hdr_payload_len: Default::default(),
            m_hdr_reth_va: Default::default(),
            m_hdr_reth_rkey: Default::default(),
            m_hdr_reth_dma_len: Default::default(),
            m_hdr_aeth_syndrome: Default::default(),
            m_hdr_aeth_msn: Default::default(),
            m_hdr_immdt: Default::default(),
            m_hdr_ieth: Default::default(),
            m_hdr_atomic_va: Default::default(),
            m_hdr_atomic_rkey: Default::default(),
            m_hdr_atomic_swap_add: Default::default(),
            m_hdr_atomic_compare: Default::default(),
            m_hdr_atomic_ack_data: Default::default(),
            m_hdr_deth_qkey: Default::default(),
            m_hdr_deth_src_qp: Default::default(),
            m_payload: Default::default(),
            p1_valid: Default::default(),
            p1_qpn: Default::default(),
            p2_valid: Default::default(),
            p2_qpn: Default::default(),
            inflight: Default::default(),
            starve: Default::default(),
            ident: Default::default(),
            dfifo: SyncFifo::new(),
            pfifo: SyncFifo::new(),
            route: SyncFifo::new(),
            path: CtxPath::new(),
            ok: Default::default(),
            req_turn: Default::default(),
            rdy_rsp: Default::default(),
            rdy_req: Default::default(),
            take_rsp: Default::default(),
            take_req: Default::default(),
            take: Default::default(),
            pop: Default::default(),
            din: Default::default(),
            pin: Default::default(),
            sel_qpn: Default::default(),
            sel_op: Default::default(),
            sel_len: Default::default(),
            has_pay: Default::default(),
            pay_on: Default::default(),
            pay_valid: Default::default(),
            pay_last: Default::default(),
            rom_pay: opcode_rom(has_payload),
            limit: Constant::new(CREDITS.into()),
            starve_max: Constant::new(STARVE_LIMIT.into()),
            c_ttl: Constant::new(TTL.into()),
            c_tos: Constant::new(TOS.into()),
            c_flow: Constant::new(FLOW_LABEL.into()),
        }
    }
}

impl<const W: usize, const K: usize, const Q: usize> Default for TxArb<W, K, Q> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const K: usize, const Q: usize> Logic for TxArb<W, K, Q> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, p1_valid, p1_qpn, p2_valid, p2_qpn, inflight, starve, ident);
        clock!(self, clock, dfifo, pfifo, route);
        self.dfifo.reset.next = self.reset.val();
        self.pfifo.reset.next = self.reset.val();
        self.route.reset.next = self.reset.val();
        // ---- Take: one descriptor per cycle while credits last.
        self.ok.next =
            !self.reset.val() & (self.inflight.q.val() < self.limit.val()) & !self.route.full.val();
        self.req_turn.next = self.starve.q.val() == self.starve_max.val();
        self.rdy_rsp.next = self.ok.val() & !(self.req_turn.val() & self.s_req_valid.val());
        self.rdy_req.next = self.ok.val() & (!self.s_rsp_valid.val() | self.req_turn.val());
        self.s_rsp_ready.next = self.rdy_rsp.val();
        self.s_req_ready.next = self.rdy_req.val();
        self.take_rsp.next = self.s_rsp_valid.val() & self.rdy_rsp.val();
        self.take_req.next = self.s_req_valid.val() & self.rdy_req.val();
        self.take.next = self.take_rsp.val() | self.take_req.val();
        self.starve.d.next = self.starve.q.val();
        if !self.s_req_valid.val() | self.take_req.val() | self.reset.val() {
            self.starve.d.next = 0.into();
        } else if self.take_rsp.val() {
            self.starve.d.next = self.starve.q.val() + 1;
        }
        self.din.next.opcode = self.s_rsp_opcode.val();
        self.din.next.psn = self.s_rsp_psn.val();
        self.din.next.ack_req = self.s_rsp_ack_req.val();
        self.din.next.se = self.s_rsp_se.val();
        self.din.next.payload_len = self.s_rsp_payload_len.val();
        self.din.next.aeth_syndrome = self.s_rsp_aeth_syndrome.val();
        self.din.next.aeth_msn = self.s_rsp_aeth_msn.val();
        self.din.next.reth_va = self.s_rsp_reth_va.val();
        self.din.next.reth_rkey = self.s_rsp_reth_rkey.val();
        self.din.next.reth_dmalen = self.s_rsp_reth_dmalen.val();
        self.din.next.immdt = self.s_rsp_immdt.val();
        self.din.next.ieth = self.s_rsp_ieth.val();
        self.din.next.atomic_va = self.s_rsp_atomic_va.val();
        self.din.next.atomic_rkey = self.s_rsp_atomic_rkey.val();
        self.din.next.atomic_swap_add = self.s_rsp_atomic_swap_add.val();
        self.din.next.atomic_compare = self.s_rsp_atomic_compare.val();
        self.din.next.atomic_ack_data = self.s_rsp_atomic_ack_data.val();
        self.din.next.becn = self.s_rsp_becn.val();
        self.sel_qpn.next = self.s_rsp_qpn.val();
        self.sel_op.next = self.s_rsp_opcode.val();
        self.sel_len.next = self.s_rsp_payload_len.val();
        if self.take_req.val() {
            self.din.next.opcode = self.s_req_opcode.val();
            self.din.next.psn = self.s_req_psn.val();
            self.din.next.ack_req = self.s_req_ack_req.val();
            self.din.next.se = self.s_req_se.val();
            self.din.next.payload_len = self.s_req_payload_len.val();
            self.din.next.aeth_syndrome = self.s_req_aeth_syndrome.val();
            self.din.next.aeth_msn = self.s_req_aeth_msn.val();
            self.din.next.reth_va = self.s_req_reth_va.val();
            self.din.next.reth_rkey = self.s_req_reth_rkey.val();
            self.din.next.reth_dmalen = self.s_req_reth_dmalen.val();
            self.din.next.immdt = self.s_req_immdt.val();
            self.din.next.ieth = self.s_req_ieth.val();
            self.din.next.atomic_va = self.s_req_atomic_va.val();
            self.din.next.atomic_rkey = self.s_req_atomic_rkey.val();
            self.din.next.atomic_swap_add = self.s_req_atomic_swap_add.val();
            self.din.next.atomic_compare = self.s_req_atomic_compare.val();
            self.din.next.atomic_ack_data = self.s_req_atomic_ack_data.val();
            self.din.next.becn = self.s_req_becn.val();
            self.sel_qpn.next = self.s_req_qpn.val();
            self.sel_op.next = self.s_req_opcode.val();
            self.sel_len.next = self.s_req_payload_len.val();
        }
        self.has_pay.next =
            self.rom_pay.val().get_bit(self.sel_op.val().index()) & self.sel_len.val().any();
        self.qp_rd_addr.next = self.sel_qpn.val();
        self.dfifo.write.next = self.take.val();
        self.dfifo.data_in.next = self.din.val();
        self.route.write.next = self.take.val() & self.has_pay.val();
        self.route.data_in.next = self.take_req.val();
        // ---- t+1: the context port works; t+2: the path.
        self.p1_valid.d.next = self.take.val();
        self.p1_qpn.d.next = self.sel_qpn.val();
        self.p2_valid.d.next = self.p1_valid.q.val() & !self.reset.val();
        self.p2_qpn.d.next = self.p1_qpn.q.val();
        self.path.ctx.next = self.qp_rd_data.val();
        self.path.qpn.next = self.p2_qpn.q.val();
        self.path.gid.next = self.cfg_gid.val();
        self.path.pkey_tab.next = self.cfg_pkey.val();
        self.path.sport.next = self.cfg_udp_sport.val();
        self.pin.next.dst_mac = self.path.dst_mac.val();
        self.pin.next.ipv6 = self.path.ipv6.val();
        self.pin.next.ip_src = self.path.ip_src.val();
        self.pin.next.ip_dst = self.path.ip_dst.val();
        self.pin.next.pkey = self.path.pkey.val();
        self.pin.next.dest_qp = self.path.dest_qp.val();
        self.pin.next.udp_src_port = self.path.udp_src_port.val();
        self.pin.next.ip_ident = self.ident.q.val();
        self.pin.next.deth_qkey = self.path.deth_qkey.val();
        self.pin.next.deth_src_qp = self.path.deth_src_qp.val();
        self.pfifo.write.next = self.p2_valid.q.val();
        self.pfifo.data_in.next = self.pin.val();
        self.ident.d.next = self.ident.q.val();
        if self.reset.val() {
            self.ident.d.next = 0.into();
        } else if self.p2_valid.q.val() {
            self.ident.d.next = self.ident.q.val() + 1;
        }
        // ---- Out: both queues' heads (the path's is the later write).
        self.m_hdr_valid.next = !self.pfifo.empty.val();
        self.pop.next = !self.pfifo.empty.val() & self.m_hdr_ready.val();
        self.pfifo.read.next = self.pop.val();
        self.dfifo.read.next = self.pop.val();
        self.inflight.d.next = self.inflight.q.val();
        if self.reset.val() {
            self.inflight.d.next = 0.into();
        } else if self.take.val() & !self.pop.val() {
            self.inflight.d.next = self.inflight.q.val() + 1;
        } else if !self.take.val() & self.pop.val() {
            self.inflight.d.next = self.inflight.q.val() - 1;
        }
        self.m_hdr_opcode.next = self.dfifo.data_out.val().opcode;
        self.m_hdr_psn.next = self.dfifo.data_out.val().psn;
        self.m_hdr_ack_req.next = self.dfifo.data_out.val().ack_req;
        self.m_hdr_se.next = self.dfifo.data_out.val().se;
        self.m_hdr_payload_len.next = self.dfifo.data_out.val().payload_len;
        self.m_hdr_aeth_syndrome.next = self.dfifo.data_out.val().aeth_syndrome;
        self.m_hdr_aeth_msn.next = self.dfifo.data_out.val().aeth_msn;
        self.m_hdr_reth_va.next = self.dfifo.data_out.val().reth_va;
        self.m_hdr_reth_rkey.next = self.dfifo.data_out.val().reth_rkey;
        self.m_hdr_reth_dma_len.next = self.dfifo.data_out.val().reth_dmalen;
        self.m_hdr_immdt.next = self.dfifo.data_out.val().immdt;
        self.m_hdr_ieth.next = self.dfifo.data_out.val().ieth;
        self.m_hdr_atomic_va.next = self.dfifo.data_out.val().atomic_va;
        self.m_hdr_atomic_rkey.next = self.dfifo.data_out.val().atomic_rkey;
        self.m_hdr_atomic_swap_add.next = self.dfifo.data_out.val().atomic_swap_add;
        self.m_hdr_atomic_compare.next = self.dfifo.data_out.val().atomic_compare;
        self.m_hdr_atomic_ack_data.next = self.dfifo.data_out.val().atomic_ack_data;
        self.m_hdr_becn.next = self.dfifo.data_out.val().becn;
        self.m_hdr_dst_mac.next = self.pfifo.data_out.val().dst_mac;
        self.m_hdr_src_mac.next = self.cfg_mac.val();
        self.m_hdr_vlan.next = 0.into();
        self.m_hdr_vlan_tci.next = 0.into();
        self.m_hdr_ipv6.next = self.pfifo.data_out.val().ipv6;
        self.m_hdr_tos.next = self.c_tos.val();
        self.m_hdr_ttl.next = self.c_ttl.val();
        self.m_hdr_flow_label.next = self.c_flow.val();
        self.m_hdr_ip_ident.next = self.pfifo.data_out.val().ip_ident;
        self.m_hdr_ip_df.next = 1.into();
        self.m_hdr_ip_src.next = self.pfifo.data_out.val().ip_src;
        self.m_hdr_ip_dst.next = self.pfifo.data_out.val().ip_dst;
        self.m_hdr_udp_src_port.next = self.pfifo.data_out.val().udp_src_port;
        self.m_hdr_mig.next = 0.into();
        self.m_hdr_pkey.next = self.pfifo.data_out.val().pkey;
        self.m_hdr_fecn.next = 0.into();
        self.m_hdr_dest_qp.next = self.pfifo.data_out.val().dest_qp;
        self.m_hdr_deth_qkey.next = self.pfifo.data_out.val().deth_qkey;
        self.m_hdr_deth_src_qp.next = self.pfifo.data_out.val().deth_src_qp;
        // ---- Payload: the route queue's head port, packet by packet.
        self.pay_on.next = !self.route.empty.val() & !self.reset.val();
        self.m_payload.tdata.next = self.s_rsp_pay.tdata.val();
        self.m_payload.tkeep.next = self.s_rsp_pay.tkeep.val();
        self.m_payload.tuser.next = self.s_rsp_pay.tuser.val();
        self.pay_last.next = self.s_rsp_pay.tlast.val();
        self.pay_valid.next = self.s_rsp_pay.tvalid.val();
        if self.route.data_out.val() {
            self.m_payload.tdata.next = self.s_req_pay.tdata.val();
            self.m_payload.tkeep.next = self.s_req_pay.tkeep.val();
            self.m_payload.tuser.next = self.s_req_pay.tuser.val();
            self.pay_last.next = self.s_req_pay.tlast.val();
            self.pay_valid.next = self.s_req_pay.tvalid.val();
        }
        self.m_payload.tlast.next = self.pay_last.val();
        self.m_payload.tvalid.next = self.pay_on.val() & self.pay_valid.val();
        self.s_rsp_pay.tready.next =
            self.pay_on.val() & !self.route.data_out.val() & self.m_payload.tready.val();
        self.s_req_pay.tready.next =
            self.pay_on.val() & self.route.data_out.val() & self.m_payload.tready.val();
        self.route.read.next = self.pay_on.val()
            & self.pay_valid.val()
            & self.pay_last.val()
            & self.m_payload.tready.val();
    }
}

/// `tx_arb` and `roce_tx` joined (`m_hdr_*` to `s_hdr_*`, `m_payload` to
/// `s_payload`): transport descriptors in, wire frames out. The test build
/// `sim/tests/tx_arb.rs` checks frames on; a NIC top wires the same.
#[derive(LogicBlock)]
pub struct TxArbTx<const W: usize, const K: usize, const Q: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_rsp_valid: Signal<In, Bit>,
    pub s_rsp_ready: Signal<Out, Bit>,
    pub s_rsp_qpn: Signal<In, Bits<Q>>,
    pub s_rsp_opcode: Signal<In, Bits<8>>,
    pub s_rsp_psn: Signal<In, Bits<24>>,
    pub s_rsp_ack_req: Signal<In, Bits<1>>,
    pub s_rsp_se: Signal<In, Bits<1>>,
    pub s_rsp_payload_len: Signal<In, Bits<16>>,
    pub s_rsp_aeth_syndrome: Signal<In, Bits<8>>,
    pub s_rsp_aeth_msn: Signal<In, Bits<24>>,
    pub s_rsp_reth_va: Signal<In, Bits<64>>,
    pub s_rsp_reth_rkey: Signal<In, Bits<32>>,
    pub s_rsp_reth_dmalen: Signal<In, Bits<32>>,
    pub s_rsp_immdt: Signal<In, Bits<32>>,
    pub s_rsp_ieth: Signal<In, Bits<32>>,
    pub s_rsp_atomic_va: Signal<In, Bits<64>>,
    pub s_rsp_atomic_rkey: Signal<In, Bits<32>>,
    pub s_rsp_atomic_swap_add: Signal<In, Bits<64>>,
    pub s_rsp_atomic_compare: Signal<In, Bits<64>>,
    pub s_rsp_atomic_ack_data: Signal<In, Bits<64>>,
    pub s_rsp_becn: Signal<In, Bits<1>>,
    pub s_rsp_pay: StreamIn<W, K>,
    pub s_req_valid: Signal<In, Bit>,
    pub s_req_ready: Signal<Out, Bit>,
    pub s_req_qpn: Signal<In, Bits<Q>>,
    pub s_req_opcode: Signal<In, Bits<8>>,
    pub s_req_psn: Signal<In, Bits<24>>,
    pub s_req_ack_req: Signal<In, Bits<1>>,
    pub s_req_se: Signal<In, Bits<1>>,
    pub s_req_payload_len: Signal<In, Bits<16>>,
    pub s_req_aeth_syndrome: Signal<In, Bits<8>>,
    pub s_req_aeth_msn: Signal<In, Bits<24>>,
    pub s_req_reth_va: Signal<In, Bits<64>>,
    pub s_req_reth_rkey: Signal<In, Bits<32>>,
    pub s_req_reth_dmalen: Signal<In, Bits<32>>,
    pub s_req_immdt: Signal<In, Bits<32>>,
    pub s_req_ieth: Signal<In, Bits<32>>,
    pub s_req_atomic_va: Signal<In, Bits<64>>,
    pub s_req_atomic_rkey: Signal<In, Bits<32>>,
    pub s_req_atomic_swap_add: Signal<In, Bits<64>>,
    pub s_req_atomic_compare: Signal<In, Bits<64>>,
    pub s_req_atomic_ack_data: Signal<In, Bits<64>>,
    pub s_req_becn: Signal<In, Bits<1>>,
    pub s_req_pay: StreamIn<W, K>,
    pub qp_rd_addr: Signal<Out, Bits<Q>>,
    pub qp_rd_data: Signal<In, Bits<QP_CTX_BITS>>,
    pub cfg_mac: Signal<In, Bits<48>>,
    pub cfg_udp_sport: Signal<In, Bits<16>>,
    pub cfg_gid: Signal<In, Bits<GID_TABLE_BITS>>,
    pub cfg_pkey: Signal<In, Bits<PKEY_TABLE_BITS>>,
    /// Wire frames (`roce_tx`'s `m_axis`).
    pub m_axis: StreamOut<W, K>,
    pub error_payload: Signal<Out, Bit>,
    arb: TxArb<W, K, Q>,
    tx: RoceTx<W, K>,
}

/// The test builds: 64 QPs.
pub type TxArbTxSmall64 = TxArbTx<64, 8, 6>;
pub type TxArbTxSmall512 = TxArbTx<512, 64, 6>;

impl<const W: usize, const K: usize, const Q: usize> TxArbTx<W, K, Q> {
    pub fn new() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_rsp_valid: Default::default(),
            s_rsp_ready: Default::default(),
            s_rsp_qpn: Default::default(),
            s_rsp_opcode: Default::default(),
            s_rsp_psn: Default::default(),
            s_rsp_ack_req: Default::default(),
            s_rsp_se: Default::default(),
            s_rsp_payload_len: Default::default(),
            s_rsp_aeth_syndrome: Default::default(),
            s_rsp_aeth_msn: Default::default(),
            s_rsp_reth_va: Default::default(),
            s_rsp_reth_rkey: Default::default(),
            s_rsp_reth_dmalen: Default::default(),
            s_rsp_immdt: Default::default(),
            s_rsp_ieth: Default::default(),
            s_rsp_atomic_va: Default::default(),
            s_rsp_atomic_rkey: Default::default(),
            s_rsp_atomic_swap_add: Default::default(),
            s_rsp_atomic_compare: Default::default(),
            s_rsp_atomic_ack_data: Default::default(),
            s_rsp_becn: Default::default(),
            s_rsp_pay: Default::default(),
            s_req_valid: Default::default(),
            s_req_ready: Default::default(),
            s_req_qpn: Default::default(),
            s_req_opcode: Default::default(),
            s_req_psn: Default::default(),
            s_req_ack_req: Default::default(),
            s_req_se: Default::default(),
            s_req_payload_len: Default::default(),
            s_req_aeth_syndrome: Default::default(),
            s_req_aeth_msn: Default::default(),
            s_req_reth_va: Default::default(),
            s_req_reth_rkey: Default::default(),
            s_req_reth_dmalen: Default::default(),
            s_req_immdt: Default::default(),
            s_req_ieth: Default::default(),
            s_req_atomic_va: Default::default(),
            s_req_atomic_rkey: Default::default(),
            s_req_atomic_swap_add: Default::default(),
            s_req_atomic_compare: Default::default(),
            s_req_atomic_ack_data: Default::default(),
            s_req_becn: Default::default(),
            s_req_pay: Default::default(),
            qp_rd_addr: Default::default(),
            qp_rd_data: Default::default(),
            cfg_mac: Default::default(),
            cfg_udp_sport: Default::default(),
            cfg_gid: Default::default(),
            cfg_pkey: Default::default(),
            m_axis: Default::default(),
            error_payload: Default::default(),
            arb: TxArb::new(),
            tx: RoceTx::new(),
        }
    }
}

impl<const W: usize, const K: usize, const Q: usize> Default for TxArbTx<W, K, Q> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const K: usize, const Q: usize> Logic for TxArbTx<W, K, Q> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, arb, tx);
        self.arb.reset.next = self.reset.val();
        self.tx.reset.next = self.reset.val();
        self.qp_rd_addr.next = self.arb.qp_rd_addr.val();
        self.arb.qp_rd_data.next = self.qp_rd_data.val();
        self.arb.cfg_mac.next = self.cfg_mac.val();
        self.arb.cfg_udp_sport.next = self.cfg_udp_sport.val();
        self.arb.cfg_gid.next = self.cfg_gid.val();
        self.arb.cfg_pkey.next = self.cfg_pkey.val();
        self.error_payload.next = self.tx.error_payload.val();
        self.arb.s_rsp_valid.next = self.s_rsp_valid.val();
        self.arb.s_rsp_qpn.next = self.s_rsp_qpn.val();
        self.arb.s_rsp_opcode.next = self.s_rsp_opcode.val();
        self.arb.s_rsp_psn.next = self.s_rsp_psn.val();
        self.arb.s_rsp_ack_req.next = self.s_rsp_ack_req.val();
        self.arb.s_rsp_se.next = self.s_rsp_se.val();
        self.arb.s_rsp_payload_len.next = self.s_rsp_payload_len.val();
        self.arb.s_rsp_aeth_syndrome.next = self.s_rsp_aeth_syndrome.val();
        self.arb.s_rsp_aeth_msn.next = self.s_rsp_aeth_msn.val();
        self.arb.s_rsp_reth_va.next = self.s_rsp_reth_va.val();
        self.arb.s_rsp_reth_rkey.next = self.s_rsp_reth_rkey.val();
        self.arb.s_rsp_reth_dmalen.next = self.s_rsp_reth_dmalen.val();
        self.arb.s_rsp_immdt.next = self.s_rsp_immdt.val();
        self.arb.s_rsp_ieth.next = self.s_rsp_ieth.val();
        self.arb.s_rsp_atomic_va.next = self.s_rsp_atomic_va.val();
        self.arb.s_rsp_atomic_rkey.next = self.s_rsp_atomic_rkey.val();
        self.arb.s_rsp_atomic_swap_add.next = self.s_rsp_atomic_swap_add.val();
        self.arb.s_rsp_atomic_compare.next = self.s_rsp_atomic_compare.val();
        self.arb.s_rsp_atomic_ack_data.next = self.s_rsp_atomic_ack_data.val();
        self.arb.s_rsp_becn.next = self.s_rsp_becn.val();
        self.s_rsp_ready.next = self.arb.s_rsp_ready.val();
        self.arb.s_rsp_pay.tdata.next = self.s_rsp_pay.tdata.val();
        self.arb.s_rsp_pay.tkeep.next = self.s_rsp_pay.tkeep.val();
        self.arb.s_rsp_pay.tlast.next = self.s_rsp_pay.tlast.val();
        self.arb.s_rsp_pay.tuser.next = self.s_rsp_pay.tuser.val();
        self.arb.s_rsp_pay.tvalid.next = self.s_rsp_pay.tvalid.val();
        self.s_rsp_pay.tready.next = self.arb.s_rsp_pay.tready.val();
        self.arb.s_req_valid.next = self.s_req_valid.val();
        self.arb.s_req_qpn.next = self.s_req_qpn.val();
        self.arb.s_req_opcode.next = self.s_req_opcode.val();
        self.arb.s_req_psn.next = self.s_req_psn.val();
        self.arb.s_req_ack_req.next = self.s_req_ack_req.val();
        self.arb.s_req_se.next = self.s_req_se.val();
        self.arb.s_req_payload_len.next = self.s_req_payload_len.val();
        self.arb.s_req_aeth_syndrome.next = self.s_req_aeth_syndrome.val();
        self.arb.s_req_aeth_msn.next = self.s_req_aeth_msn.val();
        self.arb.s_req_reth_va.next = self.s_req_reth_va.val();
        self.arb.s_req_reth_rkey.next = self.s_req_reth_rkey.val();
        self.arb.s_req_reth_dmalen.next = self.s_req_reth_dmalen.val();
        self.arb.s_req_immdt.next = self.s_req_immdt.val();
        self.arb.s_req_ieth.next = self.s_req_ieth.val();
        self.arb.s_req_atomic_va.next = self.s_req_atomic_va.val();
        self.arb.s_req_atomic_rkey.next = self.s_req_atomic_rkey.val();
        self.arb.s_req_atomic_swap_add.next = self.s_req_atomic_swap_add.val();
        self.arb.s_req_atomic_compare.next = self.s_req_atomic_compare.val();
        self.arb.s_req_atomic_ack_data.next = self.s_req_atomic_ack_data.val();
        self.arb.s_req_becn.next = self.s_req_becn.val();
        self.s_req_ready.next = self.arb.s_req_ready.val();
        self.arb.s_req_pay.tdata.next = self.s_req_pay.tdata.val();
        self.arb.s_req_pay.tkeep.next = self.s_req_pay.tkeep.val();
        self.arb.s_req_pay.tlast.next = self.s_req_pay.tlast.val();
        self.arb.s_req_pay.tuser.next = self.s_req_pay.tuser.val();
        self.arb.s_req_pay.tvalid.next = self.s_req_pay.tvalid.val();
        self.s_req_pay.tready.next = self.arb.s_req_pay.tready.val();
        self.tx.s_hdr_dst_mac.next = self.arb.m_hdr_dst_mac.val();
        self.tx.s_hdr_src_mac.next = self.arb.m_hdr_src_mac.val();
        self.tx.s_hdr_vlan.next = self.arb.m_hdr_vlan.val();
        self.tx.s_hdr_vlan_tci.next = self.arb.m_hdr_vlan_tci.val();
        self.tx.s_hdr_ipv6.next = self.arb.m_hdr_ipv6.val();
        self.tx.s_hdr_tos.next = self.arb.m_hdr_tos.val();
        self.tx.s_hdr_ttl.next = self.arb.m_hdr_ttl.val();
        self.tx.s_hdr_flow_label.next = self.arb.m_hdr_flow_label.val();
        self.tx.s_hdr_ip_ident.next = self.arb.m_hdr_ip_ident.val();
        self.tx.s_hdr_ip_df.next = self.arb.m_hdr_ip_df.val();
        self.tx.s_hdr_ip_src.next = self.arb.m_hdr_ip_src.val();
        self.tx.s_hdr_ip_dst.next = self.arb.m_hdr_ip_dst.val();
        self.tx.s_hdr_udp_src_port.next = self.arb.m_hdr_udp_src_port.val();
        self.tx.s_hdr_opcode.next = self.arb.m_hdr_opcode.val();
        self.tx.s_hdr_se.next = self.arb.m_hdr_se.val();
        self.tx.s_hdr_mig.next = self.arb.m_hdr_mig.val();
        self.tx.s_hdr_pkey.next = self.arb.m_hdr_pkey.val();
        self.tx.s_hdr_fecn.next = self.arb.m_hdr_fecn.val();
        self.tx.s_hdr_becn.next = self.arb.m_hdr_becn.val();
        self.tx.s_hdr_dest_qp.next = self.arb.m_hdr_dest_qp.val();
        self.tx.s_hdr_ack_req.next = self.arb.m_hdr_ack_req.val();
        self.tx.s_hdr_psn.next = self.arb.m_hdr_psn.val();
        self.tx.s_hdr_payload_len.next = self.arb.m_hdr_payload_len.val();
        self.tx.s_hdr_reth_va.next = self.arb.m_hdr_reth_va.val();
        self.tx.s_hdr_reth_rkey.next = self.arb.m_hdr_reth_rkey.val();
        self.tx.s_hdr_reth_dma_len.next = self.arb.m_hdr_reth_dma_len.val();
        self.tx.s_hdr_aeth_syndrome.next = self.arb.m_hdr_aeth_syndrome.val();
        self.tx.s_hdr_aeth_msn.next = self.arb.m_hdr_aeth_msn.val();
        self.tx.s_hdr_immdt.next = self.arb.m_hdr_immdt.val();
        self.tx.s_hdr_ieth.next = self.arb.m_hdr_ieth.val();
        self.tx.s_hdr_atomic_va.next = self.arb.m_hdr_atomic_va.val();
        self.tx.s_hdr_atomic_rkey.next = self.arb.m_hdr_atomic_rkey.val();
        self.tx.s_hdr_atomic_swap_add.next = self.arb.m_hdr_atomic_swap_add.val();
        self.tx.s_hdr_atomic_compare.next = self.arb.m_hdr_atomic_compare.val();
        self.tx.s_hdr_atomic_ack_data.next = self.arb.m_hdr_atomic_ack_data.val();
        self.tx.s_hdr_deth_qkey.next = self.arb.m_hdr_deth_qkey.val();
        self.tx.s_hdr_deth_src_qp.next = self.arb.m_hdr_deth_src_qp.val();
        self.tx.s_hdr_valid.next = self.arb.m_hdr_valid.val();
        self.arb.m_hdr_ready.next = self.tx.s_hdr_ready.val();
        self.tx.s_payload.tdata.next = self.arb.m_payload.tdata.val();
        self.tx.s_payload.tkeep.next = self.arb.m_payload.tkeep.val();
        self.tx.s_payload.tlast.next = self.arb.m_payload.tlast.val();
        self.tx.s_payload.tuser.next = self.arb.m_payload.tuser.val();
        self.tx.s_payload.tvalid.next = self.arb.m_payload.tvalid.val();
        self.arb.m_payload.tready.next = self.tx.s_payload.tready.val();
        self.m_axis.tdata.next = self.tx.m_axis.tdata.val();
        self.m_axis.tkeep.next = self.tx.m_axis.tkeep.val();
        self.m_axis.tlast.next = self.tx.m_axis.tlast.val();
        self.m_axis.tuser.next = self.tx.m_axis.tuser.val();
        self.m_axis.tvalid.next = self.tx.m_axis.tvalid.val();
        self.tx.m_axis.tready.next = self.m_axis.tready.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_arb_synthesizes() {
        let mut uut = TxArb::<64, 8, 6>::new();
        uut.connect_all();
        yosys_validate("tx_arb_64", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn udp_src_port_follows_the_model() {
        for q in [0u32, 1, 0x3FFF, 0x4000, 0xFF_FFFF, 12345] {
            assert_eq!(
                udp_src_port(0xC000, q),
                roce_wire::udp::roce_src_port(q ^ (q >> 14))
            );
        }
    }

    #[test]
    fn payload_rom_is_the_opcode_table() {
        // Payload: SEND, WRITE, READ responses; none: READ request, ACK,
        // atomics, ATOMIC ACK, CNP, unknown codes.
        for (c, p) in [
            (0x04, true),
            (0x0A, true),
            (0x10, true),
            (0x0C, false),
            (0x11, false),
            (0x12, false),
            (0x13, false),
            (0x81, false),
            (0x1F, false),
        ] {
            assert_eq!(has_payload(c), p, "opcode {c:#x}");
        }
    }

    #[test]
    #[should_panic(expected = "QP index bits")]
    fn parameters_are_checked() {
        let _ = TxArb::<64, 8, 15>::new();
    }
}
