//! Live interop (issue 38): a simulated NIC on a QEMU guest's socket
//! netdev, against Linux soft-RoCE (`rdma_rxe`) and the standard verbs
//! tools in the guest (`scripts/interop` builds and boots the guest).
//!
//! - **The link.** QEMU's `-netdev socket` carries each Ethernet frame over
//!   TCP as a 4-byte big-endian length and the frame, without FCS
//!   ([`encode_frame`], [`Deframer`]). `roce-sim interop` listens; QEMU
//!   connects.
//! - **The split.** Frames to UDP port 4791 (RoCE v2, IPv4 or IPv6, no
//!   VLAN) go to the simulated NIC; every other frame (ARP, IPv6 neighbour
//!   discovery, ICMP, TCP) to the simulated host's TCP/IP stack, smoltcp.
//!   On a real NIC the non-RoCE frames would reach the host through the
//!   NIC's raw queue; neither engine has one yet, so the split is done
//!   here, outside the NIC.
//! - **The host.** smoltcp answers ARP, neighbour solicitations and ICMP
//!   echo on its own, and carries the tools' out-of-band exchange over TCP:
//!   ibv_rc_pingpong's `"%04x:%06x:%06x:%s"` message ([`PpDest`]).
//! - **Time.** The NIC is stepped (one clock cycle a step) while it has
//!   frames to take or send or sends outstanding; while it only waits for
//!   the guest, it is stepped [`Config::wait_cycles`] per millisecond of
//!   wall time (so its timers run, slower than the guest's); while it has
//!   nothing to do, its clock stops and the link is polled with a short
//!   timeout. Simulated cycles are reported beside the wall time.
//! - **Engine.** The transport model (`SoftNic`) today.

use crate::nic::{HwNic, Layout, QpSetup, RecvWr, Region, SendWr, SimNic, SoftNic, Station, Verb};
use crate::rng::Rng;
use roce_transport::Path;
use roce_wire::{EthernetRepr, IpRepr, Ipv4Repr, Ipv6Repr, Pmtu};
use smoltcp::iface::{Config as IfConfig, Interface, SocketHandle, SocketSet};
use smoltcp::phy::{Device, DeviceCapabilities, Medium, RxToken, TxToken};
use smoltcp::socket::tcp;
use smoltcp::time::Instant as SmolInstant;
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpAddress, IpCidr};
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};
use std::time::{Duration, Instant};

// ------------------------------------------------------- QEMU socket link

/// The largest frame accepted from QEMU (its socket netdev's buffer is
/// 68 KiB; an Ethernet frame with a jumbo payload is far below).
pub const MAX_FRAME: usize = 65536;

/// One frame as QEMU's socket netdev carries it: 4-byte big-endian length,
/// then the frame.
pub fn encode_frame(frame: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(frame.len() + 4);
    v.extend_from_slice(&(frame.len() as u32).to_be_bytes());
    v.extend_from_slice(frame);
    v
}

/// Splits QEMU's byte stream back into frames.
#[derive(Default, Debug)]
pub struct Deframer {
    buf: Vec<u8>,
}

impl Deframer {
    /// Adds bytes read from the socket.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }
    /// The next whole frame; `Err` when the length is 0 or over
    /// [`MAX_FRAME`] (the stream cannot be resynchronised after that).
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, String> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let n = u32::from_be_bytes(self.buf[..4].try_into().unwrap()) as usize;
        if n == 0 || n > MAX_FRAME {
            return Err(format!(
                "QEMU link: frame length {n} (expected 1..={MAX_FRAME})"
            ));
        }
        if self.buf.len() < 4 + n {
            return Ok(None);
        }
        let f = self.buf[4..4 + n].to_vec();
        self.buf.drain(..4 + n);
        Ok(Some(f))
    }
    /// Bytes held that are not a whole frame yet.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }
}

/// A RoCE v2 frame (Ethernet without VLAN, IPv4 or IPv6, UDP to 4791):
/// the NIC's; anything else is the host's.
pub fn is_roce(f: &[u8]) -> bool {
    use roce_wire::{ethernet, ipv4, ipv6, udp};
    let l3 = ethernet::HEADER_LEN;
    if f.len() < l3 {
        return false;
    }
    let ty = ethernet::field::ETHERTYPE.start;
    let at = match u16::from_be_bytes([f[ty], f[ty + 1]]) {
        ethernet::ETHERTYPE_IPV4
            if f.len() >= l3 + ipv4::HEADER_LEN
                && f[l3] >> 4 == 4
                && f[l3 + ipv4::field::PROTOCOL] == ipv4::PROTOCOL_UDP =>
        {
            l3 + (f[l3] as usize & 15) * 4
        }
        ethernet::ETHERTYPE_IPV6
            if f.len() >= l3 + ipv6::HEADER_LEN
                && f[l3 + ipv6::field::NXT_HDR] == ipv4::PROTOCOL_UDP =>
        {
            l3 + ipv6::HEADER_LEN
        }
        _ => return false,
    };
    let dst = at + udp::field::DST_PORT.start;
    f.len() >= at + udp::HEADER_LEN && u16::from_be_bytes([f[dst], f[dst + 1]]) == udp::ROCE_V2_PORT
}

// ------------------------------------------- ibv_rc_pingpong's exchange

/// The message ibv_rc_pingpong (rdma-core's `libibverbs/examples`) sends
/// each way over TCP: `"%04x:%06x:%06x:%s"` with LID, QPN, PSN and the GID
/// as 32 hex digits (its bytes in order, `gid_to_wire_gid`), then a NUL:
/// `sizeof "0000:000000:000000:00000000000000000000000000000000"` = 52
/// bytes. The client then sends `"done"` with its NUL (5 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PpDest {
    /// LID (0 on RoCE).
    pub lid: u16,
    /// QP number (24 bits).
    pub qpn: u32,
    /// First PSN (24 bits).
    pub psn: u32,
    /// GID.
    pub gid: [u8; 16],
}

/// The length of [`PpDest`]'s message.
pub const PP_MSG_LEN: usize = 52;
/// The client's closing message, `"done"` and its NUL.
pub const PP_DONE: &[u8; 5] = b"done\0";

impl PpDest {
    /// The 52-byte message.
    pub fn encode(&self) -> [u8; PP_MSG_LEN] {
        let mut g = String::new();
        for b in self.gid {
            g.push_str(&format!("{b:02x}"));
        }
        let s = format!(
            "{:04x}:{:06x}:{:06x}:{g}",
            self.lid,
            self.qpn & 0xff_ffff,
            self.psn & 0xff_ffff
        );
        let mut m = [0u8; PP_MSG_LEN];
        m[..51].copy_from_slice(s.as_bytes());
        m
    }
    /// Parses a 52-byte message (strictly: the field widths pingpong
    /// prints, lower- or upper-case hex, the NUL at the end).
    pub fn decode(m: &[u8]) -> Result<PpDest, String> {
        if m.len() != PP_MSG_LEN {
            return Err(format!(
                "pingpong message of {} bytes (expected {PP_MSG_LEN})",
                m.len()
            ));
        }
        if m[51] != 0 || m[4] != b':' || m[11] != b':' || m[18] != b':' {
            return Err(format!(
                "pingpong message {:?} is not LID:QPN:PSN:GID",
                String::from_utf8_lossy(m)
            ));
        }
        let hex = |r: std::ops::Range<usize>| -> Result<u32, String> {
            let s = std::str::from_utf8(&m[r.clone()]).map_err(|e| e.to_string())?;
            if !s.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Err(format!("pingpong message: {s:?} is not hex"));
            }
            u32::from_str_radix(s, 16).map_err(|e| e.to_string())
        };
        let mut gid = [0u8; 16];
        for (i, g) in gid.iter_mut().enumerate() {
            *g = hex(19 + 2 * i..21 + 2 * i)? as u8;
        }
        Ok(PpDest {
            lid: hex(0..4)? as u16,
            qpn: hex(5..11)?,
            psn: hex(12..18)?,
            gid,
        })
    }
}

/// The IPv4-mapped GID (`::ffff:a.b.c.d`) or the IPv6 address itself:
/// the GID rxe gives an address.
pub fn gid_of(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
        IpAddr::V6(a) => a.octets(),
    }
}

/// The link-local IPv6 address of a MAC (modified EUI-64, RFC 4291).
pub fn link_local(mac: [u8; 6]) -> Ipv6Addr {
    let mut a = [0u8; 16];
    a[0] = 0xfe;
    a[1] = 0x80;
    a[8..11].copy_from_slice(&[mac[0] ^ 2, mac[1], mac[2]]);
    a[11] = 0xff;
    a[12] = 0xfe;
    a[13..].copy_from_slice(&mac[3..]);
    Ipv6Addr::from(a)
}

/// The payload ibv_rc_pingpong's client sends with `-c`: 0x7b (its
/// buffer's fill) with a 0 at every page start (its `validate_buf`
/// marking, `i / page_size % sizeof(char)`); the server echoes it.
pub fn pp_payload(size: usize, page: usize) -> Vec<u8> {
    (0..size)
        .map(|i| if i % page == 0 { 0 } else { 0x7b })
        .collect()
}

// ---------------------------------------------------------------- config

/// Which tool runs in the guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// ibv_rc_pingpong (RC SEND ping-pong).
    RcPingpong,
    /// ibv_ud_pingpong (UD SEND ping-pong, Q_Key 0x11111111).
    UdPingpong,
}

impl Tool {
    /// The name scripts use.
    pub fn name(self) -> &'static str {
        match self {
            Tool::RcPingpong => "rc-pingpong",
            Tool::UdPingpong => "ud-pingpong",
        }
    }
}

/// One interop run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where to listen for QEMU's `-netdev socket,connect=`.
    pub listen: SocketAddr,
    /// The tool.
    pub tool: Tool,
    /// roce-sim is the tool's server (the guest its client), or the client.
    pub server: bool,
    /// The simulated host's IPv4 address.
    pub ip4: Ipv4Addr,
    /// The guest's IPv4 address.
    pub peer_ip4: Ipv4Addr,
    /// The simulated host's IPv6 address.
    pub ip6: Ipv6Addr,
    /// The guest's IPv6 address.
    pub peer_ip6: Ipv6Addr,
    /// RoCE over IPv6 (GIDs = the IPv6 addresses) or IPv4 (IPv4-mapped).
    pub v6: bool,
    /// The simulated host's MAC.
    pub mac: [u8; 6],
    /// The tool's TCP port.
    pub port: u16,
    /// Message size.
    pub size: u32,
    /// Exchanges.
    pub iters: u32,
    /// Path MTU.
    pub pmtu: Pmtu,
    /// NIC clock.
    pub clock_mhz: f64,
    /// Cycles stepped per millisecond of waiting for the guest.
    pub wait_cycles: u64,
    /// Drop RoCE frames on the link (each way) per million.
    pub drop_ppm: u32,
    /// Seed of the drops.
    pub seed: u64,
    /// Give up after this long (wall time).
    pub timeout: Duration,
    /// The NIC.
    pub engine: Engine,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The tool's exchange completed and every message checked.
    pub ok: bool,
    /// Why not, when not.
    pub error: Option<String>,
    /// Simulated cycles the NIC ran.
    pub cycles: u64,
    /// Wall time from QEMU's connection to the end.
    pub wall: Duration,
    /// Frames from the guest: all, RoCE.
    pub frames_in: u64,
    /// RoCE frames from the guest.
    pub roce_in: u64,
    /// Frames to the guest: all.
    pub frames_out: u64,
    /// RoCE frames to the guest.
    pub roce_out: u64,
    /// RoCE frames dropped by the link's loss.
    pub dropped: u64,
    /// Messages sent and received by roce-sim's side.
    pub sent: u32,
    /// Messages received (and checked).
    pub received: u32,
    /// The guest's QP as exchanged.
    pub peer: Option<PpDest>,
    /// The NIC's counters.
    pub counters: Vec<(String, u64)>,
    /// Every frame on the link: wall time since connection, bytes.
    pub frames: Vec<(Duration, Vec<u8>)>,
}

impl Report {
    /// JSON (without the frames).
    pub fn json(&self, cfg: &Config) -> serde_json::Value {
        let counters: serde_json::Map<String, serde_json::Value> = self
            .counters
            .iter()
            .filter(|c| c.1 != 0)
            .map(|(k, v)| (k.clone(), (*v).into()))
            .collect();
        serde_json::json!({
            "tool": cfg.tool.name(),
            "engine": match cfg.engine {
                Engine::Model => "model",
                Engine::Hw => "hw",
            },
            "role": if cfg.server { "server" } else { "client" },
            "ip": if cfg.v6 { 6 } else { 4 },
            "size": cfg.size,
            "iters": cfg.iters,
            "drop_ppm": cfg.drop_ppm,
            "ok": self.ok,
            "error": self.error,
            "cycles": self.cycles,
            "clock_mhz": cfg.clock_mhz,
            "wall_s": self.wall.as_secs_f64(),
            "frames_in": self.frames_in,
            "roce_in": self.roce_in,
            "frames_out": self.frames_out,
            "roce_out": self.roce_out,
            "dropped": self.dropped,
            "sent": self.sent,
            "received": self.received,
            "counters": counters,
        })
    }
}

// ------------------------------------------------------------- the host

/// smoltcp's device: frames in and out through queues.
#[derive(Default)]
struct Queues {
    rx: VecDeque<Vec<u8>>,
    tx: VecDeque<Vec<u8>>,
}

struct QRx(Vec<u8>);
struct QTx<'a>(&'a mut VecDeque<Vec<u8>>);

impl RxToken for QRx {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

impl TxToken for QTx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut v = vec![0u8; len];
        let r = f(&mut v);
        self.0.push_back(v);
        r
    }
}

impl Device for Queues {
    type RxToken<'a> = QRx;
    type TxToken<'a> = QTx<'a>;
    fn receive(&mut self, _: SmolInstant) -> Option<(QRx, QTx<'_>)> {
        let f = self.rx.pop_front()?;
        Some((QRx(f), QTx(&mut self.tx)))
    }
    fn transmit(&mut self, _: SmolInstant) -> Option<QTx<'_>> {
        Some(QTx(&mut self.tx))
    }
    fn capabilities(&self) -> DeviceCapabilities {
        let mut c = DeviceCapabilities::default();
        c.medium = Medium::Ethernet;
        c.max_transmission_unit = 1514;
        c
    }
}

// ------------------------------------------------------------ the NIC

/// Which NIC faces the guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The transport model (`SoftNic`): RC and UD, IPv4 and IPv6.
    Model,
    /// The Verilated `rc_transport` with the bench as its host (`HwNic`):
    /// RC over IPv4 (its QPs take a `Station`, an IPv4 peer).
    Hw,
}

/// The NIC of a run.
enum Nic {
    Soft(Box<SoftNic>),
    Other(Box<dyn SimNic>),
}

impl Nic {
    fn get(&mut self) -> &mut dyn SimNic {
        match self {
            Nic::Soft(n) => n.as_mut(),
            Nic::Other(n) => n.as_mut(),
        }
    }
    fn peek(&self) -> &dyn SimNic {
        match self {
            Nic::Soft(n) => n.as_ref(),
            Nic::Other(n) => n.as_ref(),
        }
    }
}

// ------------------------------------------------------------ the run

/// Our QP number (any 24-bit value rxe does not care about).
const QPN: u32 = 0x38;
/// Receive WQEs kept posted.
const RX_DEPTH: usize = 8;
/// ibv_ud_pingpong's Q_Key.
pub const UD_QKEY: u32 = 0x1111_1111;
/// Work request ids, as pingpong's.
const RECV_WRID: u64 = 1;
const SEND_WRID: u64 = 2;

enum Phase {
    /// TCP exchange under way.
    Exchange,
    /// QP connected: ping-pong.
    Traffic,
    /// Done (or failed): linger until the guest powers off.
    Done,
}

struct Pingpong {
    phase: Phase,
    tcp_in: Vec<u8>,
    sent_msg: bool,
    peer: Option<PpDest>,
    pending: u64,
    scnt: u32,
    rcnt: u32,
    posted_recv: usize,
    next_recv: u64,
    payload: Vec<u8>,
    send_va: u64,
    recv_va: Vec<u64>,
    /// UD: the guest's QP, the destination of every SEND.
    ud_dest: Option<u32>,
}

/// Runs one interop session to its end.
pub fn run(cfg: &Config) -> Result<Report, String> {
    if cfg.size == 0 || cfg.iters == 0 {
        return Err("--size and --iters must be at least 1".into());
    }
    if cfg.engine == Engine::Hw && (cfg.tool != Tool::RcPingpong || cfg.v6) {
        return Err("the hw engine runs rc-pingpong over IPv4 only".into());
    }
    if cfg.tool == Tool::UdPingpong && cfg.size > cfg.pmtu.bytes() {
        return Err(format!(
            "ud-pingpong: --size {} is over the PMTU {} (a UD message is one packet)",
            cfg.size,
            cfg.pmtu.bytes()
        ));
    }
    let listener = TcpListener::bind(cfg.listen)
        .map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?;
    eprintln!("roce-sim interop: listening on {} for QEMU", cfg.listen);
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let t_listen = Instant::now();
    let mut sock = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if t_listen.elapsed() > cfg.timeout {
                    return Err(format!(
                        "QEMU did not connect to {} within {:?}",
                        cfg.listen, cfg.timeout
                    ));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(format!("accept: {e}")),
        }
    };
    sock.set_nodelay(true).ok();
    eprintln!("roce-sim interop: QEMU connected");
    let t0 = Instant::now();
    let now_smol = |t: Instant| SmolInstant::from_micros(t.duration_since(t0).as_micros() as i64);

    // The host: smoltcp on the simulated station.
    let mut dev = Queues::default();
    let mut iface = Interface::new(
        IfConfig::new(HardwareAddress::Ethernet(EthernetAddress(cfg.mac))),
        &mut dev,
        now_smol(Instant::now()),
    );
    iface.update_ip_addrs(|a| {
        a.push(IpCidr::new(IpAddress::Ipv4(cfg.ip4), 24))
            .expect("room for two addresses");
        a.push(IpCidr::new(IpAddress::Ipv6(cfg.ip6), 64))
            .expect("room for two addresses");
        // A link-local address (EUI-64 of the MAC): the guest's neighbour
        // solicitations come from its link-local address, and smoltcp
        // answers only destinations it has a route to.
        a.push(IpCidr::new(IpAddress::Ipv6(link_local(cfg.mac)), 64))
            .expect("room for three addresses");
    });
    let mut sockets = SocketSet::new(vec![]);
    let tcp_sock = tcp::Socket::new(
        tcp::SocketBuffer::new(vec![0; 4096]),
        tcp::SocketBuffer::new(vec![0; 4096]),
    );
    let tcp_h: SocketHandle = sockets.add(tcp_sock);
    let mut next_connect = Instant::now();
    if cfg.server {
        sockets
            .get_mut::<tcp::Socket>(tcp_h)
            .listen(cfg.port)
            .map_err(|e| format!("listen: {e}"))?;
    }

    // The NIC: the transport model, one QP, buffers in Src and Rcv.
    let me_station = Station {
        mac: cfg.mac,
        ip: cfg.ip4.octets(),
    };
    let mut nic = match cfg.engine {
        Engine::Model => Nic::Soft(Box::new(SoftNic::new("sim", me_station, 8, cfg.clock_mhz))),
        Engine::Hw => Nic::Other(Box::new(HwNic::new("sim", cfg.seed, me_station, 0))),
    };
    let mut lay = Layout::new(12);
    let send_va = lay.alloc(Region::Src, cfg.size as u64, 4096);
    let recv_va: Vec<u64> = (0..RX_DEPTH)
        .map(|_| lay.alloc(Region::Rcv, cfg.size as u64, 4096))
        .collect();
    lay.seal();
    nic.get().reg_mrs(&lay);
    let payload = pp_payload(cfg.size as usize, 4096);
    nic.get().write(send_va, &payload);
    let mut pp = Pingpong {
        phase: Phase::Exchange,
        tcp_in: Vec::new(),
        sent_msg: false,
        peer: None,
        pending: 0,
        scnt: 0,
        rcnt: 0,
        posted_recv: 0,
        next_recv: 0,
        payload,
        send_va,
        recv_va,
        ud_dest: None,
    };
    let our_psn = 0x3838 & 0xff_ffff;
    let me = PpDest {
        lid: 0,
        qpn: QPN,
        psn: our_psn,
        gid: if cfg.v6 {
            gid_of(IpAddr::V6(cfg.ip6))
        } else {
            gid_of(IpAddr::V4(cfg.ip4))
        },
    };

    let mut rep = Report::default();
    let mut rng = Rng::new(cfg.seed);
    let mut defr = Deframer::default();
    let mut peer_mac: Option<[u8; 6]> = None;
    let mut done_at: Option<Instant> = None;
    let mut buf = vec![0u8; 1 << 16];
    let mut closed = false;
    let mut out: Vec<u8> = Vec::new();
    // Keep stepping this many cycles after the last frame in or out: a NIC
    // may be quiet at its ports while it works (the hardware between a
    // frame's last beat and its ACK).
    const LINGER: u64 = 5000;
    let mut busy_until: u64 = LINGER;

    loop {
        let now = Instant::now();
        if now.duration_since(t0) > cfg.timeout {
            rep.error.get_or_insert(format!(
                "timed out after {:?} ({})",
                cfg.timeout,
                progress(&pp, cfg)
            ));
            break;
        }
        if closed {
            break;
        }
        if let Some(t) = done_at {
            // After the exchange: let the last ACKs through, then stop.
            if now.duration_since(t) > Duration::from_secs(30) {
                break;
            }
        }
        // --- frames from the guest
        let working = !nic.peek().idle() || !nic.peek().ready() || nic.peek().cycle() < busy_until;
        let nic_busy = working || nic.peek().sends_outstanding(QPN) > 0;
        let host_wait = iface
            .poll_delay(now_smol(now), &sockets)
            .map(|d| Duration::from_micros(d.total_micros()))
            .unwrap_or(Duration::from_millis(5))
            .min(Duration::from_millis(5));
        let wait = if working {
            None
        } else if nic_busy {
            Some(Duration::from_millis(1))
        } else {
            Some(host_wait.max(Duration::from_micros(200)))
        };
        match wait {
            None => sock.set_nonblocking(true),
            Some(w) => sock
                .set_nonblocking(false)
                .and_then(|_| sock.set_read_timeout(Some(w))),
        }
        .map_err(|e| format!("QEMU link: {e}"))?;
        match sock.read(&mut buf) {
            Ok(0) => closed = true,
            Ok(n) => defr.push(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => closed = true,
            Err(e) => return Err(format!("QEMU link: read: {e}")),
        }
        while let Some(f) = defr.next_frame()? {
            rep.frames_in += 1;
            rep.frames.push((t0.elapsed(), f.clone()));
            if f.len() >= 14 && peer_mac.is_none() {
                peer_mac = Some(f[6..12].try_into().unwrap());
            }
            if is_roce(&f) {
                rep.roce_in += 1;
                if cfg.drop_ppm > 0 && rng.below(1_000_000) < cfg.drop_ppm as u64 {
                    rep.dropped += 1;
                    continue;
                }
                let at = nic.peek().cycle();
                nic.get().push_rx(at, f);
                busy_until = at + LINGER;
            } else {
                dev.rx.push_back(f);
            }
        }

        // --- the host and the tool's exchange
        iface.poll(now_smol(Instant::now()), &mut dev, &mut sockets);
        {
            let s = sockets.get_mut::<tcp::Socket>(tcp_h);
            if !cfg.server
                && matches!(pp.phase, Phase::Exchange)
                && !s.is_open()
                && Instant::now() >= next_connect
            {
                // The guest's server may not listen yet: retry. Over IPv4
                // whatever the RoCE IP version: ibv_rc_pingpong's server
                // binds the first passive address getaddrinfo gives
                // (0.0.0.0), so it takes no IPv6 connection.
                let local = 40000 + (rng.below(20000) as u16);
                s.connect(
                    iface.context(),
                    (IpAddress::Ipv4(cfg.peer_ip4), cfg.port),
                    local,
                )
                .map_err(|e| format!("connect: {e}"))?;
                next_connect = Instant::now() + Duration::from_millis(500);
            }
            if s.can_recv() {
                s.recv(|d| {
                    pp.tcp_in.extend_from_slice(d);
                    (d.len(), ())
                })
                .map_err(|e| format!("tcp recv: {e}"))?;
            }
            if matches!(pp.phase, Phase::Exchange) {
                exchange(cfg, &mut pp, s, &me, &mut nic, peer_mac)?;
                if let (Some(p), None) = (pp.peer, rep.peer) {
                    rep.peer = Some(p);
                    eprintln!(
                        "roce-sim interop: peer QPN {:#08x} PSN {:#08x} GID {}",
                        p.qpn,
                        p.psn,
                        Ipv6Addr::from(p.gid)
                    );
                }
            }
        }
        iface.poll(now_smol(Instant::now()), &mut dev, &mut sockets);

        // --- the NIC
        let steps = if !nic.peek().idle() || !nic.peek().ready() || nic.peek().cycle() < busy_until
        {
            2000
        } else if nic.peek().sends_outstanding(QPN) > 0 {
            cfg.wait_cycles
        } else {
            0
        };
        // Step until the NIC sends, then hand its frames to QEMU at once:
        // a frame held back for the rest of a 2000-cycle chunk (about 10 ms
        // of wall time with the Verilated NIC) arrives after the guest's
        // own retransmission timer.
        for _ in 0..steps {
            if !out.is_empty() {
                break;
            }
            nic.get().step();
            while let Some((_, f)) = nic.get().pop_tx() {
                busy_until = nic.peek().cycle() + LINGER;
                rep.roce_out += 1;
                if cfg.drop_ppm > 0 && rng.below(1_000_000) < cfg.drop_ppm as u64 {
                    rep.dropped += 1;
                    continue;
                }
                rep.frames.push((t0.elapsed(), f.clone()));
                out.extend_from_slice(&encode_frame(&f));
                rep.frames_out += 1;
            }
        }
        while let Some(c) = nic.get().poll_cq() {
            if let Err(e) = completion(cfg, &mut pp, &mut nic, &c) {
                rep.error.get_or_insert(e);
                pp.phase = Phase::Done;
            }
        }
        if matches!(pp.phase, Phase::Traffic) && pp.scnt >= cfg.iters && pp.rcnt >= cfg.iters {
            eprintln!(
                "roce-sim interop: {} messages of {} bytes each way, checked",
                cfg.iters, cfg.size
            );
            pp.phase = Phase::Done;
        }
        if matches!(pp.phase, Phase::Done) && done_at.is_none() {
            done_at = Some(Instant::now());
        }
        while let Some(f) = dev.tx.pop_front() {
            rep.frames.push((t0.elapsed(), f.clone()));
            out.extend_from_slice(&encode_frame(&f));
            rep.frames_out += 1;
        }
        if !out.is_empty() {
            sock.set_nonblocking(false).ok();
            if let Err(e) = sock.write_all(&out) {
                if matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) {
                    closed = true;
                } else {
                    return Err(format!("QEMU link: write: {e}"));
                }
            }
            out.clear();
        }
    }
    rep.sent = pp.scnt;
    rep.received = pp.rcnt;
    rep.cycles = nic.peek().cycle();
    rep.wall = t0.elapsed();
    rep.counters = nic.get().counters();
    for e in nic.peek().errors() {
        rep.error.get_or_insert(format!("NIC: {e}"));
    }
    rep.ok = rep.error.is_none() && pp.scnt >= cfg.iters && pp.rcnt >= cfg.iters;
    if !rep.ok && rep.error.is_none() {
        rep.error = Some(format!(
            "the guest went away before the exchange completed ({})",
            progress(&pp, cfg)
        ));
    }
    Ok(rep)
}

fn progress(pp: &Pingpong, cfg: &Config) -> String {
    let phase = match pp.phase {
        Phase::Exchange => "in the TCP exchange",
        Phase::Traffic => "in the ping-pong",
        Phase::Done => "done",
    };
    format!(
        "{phase}: sent {}/{}, received {}/{}",
        pp.scnt, cfg.iters, pp.rcnt, cfg.iters
    )
}

/// Posts one receive WQE.
fn post_recv(pp: &mut Pingpong, nic: &mut Nic, size: u32) {
    let va = pp.recv_va[pp.next_recv as usize % RX_DEPTH];
    pp.next_recv += 1;
    nic.get().post_recv(
        QPN,
        RecvWr {
            wr_id: RECV_WRID,
            va,
            len: size,
        },
    );
    pp.posted_recv += 1;
}

fn post_send(pp: &mut Pingpong, nic: &mut Nic, size: u32) {
    if let (Some(ud_dest), Nic::Soft(nic)) = (pp.ud_dest, &mut *nic) {
        nic.post_send_ud(QPN, SEND_WRID, pp.send_va, size, ud_dest, UD_QKEY);
        pp.pending |= SEND_WRID;
        return;
    }
    nic.get().post_send(SendWr {
        qpn: QPN,
        verb: Verb::Send,
        wr_id: SEND_WRID,
        lva: pp.send_va,
        len: size,
        rva: 0,
        imm: 0,
        swap: 0,
        compare: 0,
        inline: false,
    });
    pp.pending |= SEND_WRID;
}

/// The TCP exchange, both roles, then the QP.
fn exchange(
    cfg: &Config,
    pp: &mut Pingpong,
    s: &mut tcp::Socket,
    me: &PpDest,
    nic: &mut Nic,
    peer_mac: Option<[u8; 6]>,
) -> Result<(), String> {
    let connect_qp = |pp: &mut Pingpong, nic: &mut Nic, peer: PpDest| -> Result<(), String> {
        let mac = peer_mac.ok_or("no frame from the guest yet: its MAC is unknown")?;
        let setup = QpSetup {
            qpn: QPN,
            dest_qpn: peer.qpn,
            sq_psn: me.psn,
            rq_psn: peer.psn,
            pmtu: cfg.pmtu,
            max_rd_atomic: 1,
            timeout: 12,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 12,
        };
        match (cfg.tool, &mut *nic) {
            (Tool::RcPingpong, Nic::Soft(n)) => n.create_qp_path(&setup, path(cfg, mac)),
            (Tool::UdPingpong, Nic::Soft(n)) => {
                n.create_ud_qp_path(QPN, me.psn, UD_QKEY, cfg.pmtu, path(cfg, mac));
                pp.ud_dest = Some(peer.qpn);
            }
            // The other engines: RC toward an IPv4 station (checked in run).
            (_, Nic::Other(n)) => n.create_qp(
                &setup,
                Station {
                    mac,
                    ip: cfg.peer_ip4.octets(),
                },
            ),
        }
        for _ in 0..RX_DEPTH {
            post_recv(pp, nic, cfg.size);
        }
        pp.pending = RECV_WRID;
        pp.peer = Some(peer);
        Ok(())
    };
    if cfg.server {
        // Guest = client: it sends its message first; we connect the QP,
        // answer with ours, and take its "done".
        if pp.peer.is_none() && pp.tcp_in.len() >= PP_MSG_LEN {
            let peer = PpDest::decode(&pp.tcp_in[..PP_MSG_LEN])?;
            pp.tcp_in.drain(..PP_MSG_LEN);
            connect_qp(pp, nic, peer)?;
        }
        if pp.peer.is_some() && !pp.sent_msg && s.can_send() {
            s.send_slice(&me.encode())
                .map_err(|e| format!("tcp send: {e}"))?;
            pp.sent_msg = true;
        }
        if pp.sent_msg && pp.tcp_in.len() >= PP_DONE.len() {
            if pp.tcp_in[..PP_DONE.len()] != PP_DONE[..] {
                return Err(format!(
                    "pingpong: expected \"done\", got {:?}",
                    String::from_utf8_lossy(&pp.tcp_in)
                ));
            }
            s.close();
            pp.phase = Phase::Traffic;
        }
    } else {
        // Guest = server: we send first, read its message, send "done",
        // connect the QP and start the ping-pong.
        if !pp.sent_msg && s.may_send() {
            s.send_slice(&me.encode())
                .map_err(|e| format!("tcp send: {e}"))?;
            pp.sent_msg = true;
        }
        if pp.sent_msg && pp.peer.is_none() && pp.tcp_in.len() >= PP_MSG_LEN {
            let peer = PpDest::decode(&pp.tcp_in[..PP_MSG_LEN])?;
            pp.tcp_in.drain(..PP_MSG_LEN);
            s.send_slice(PP_DONE)
                .map_err(|e| format!("tcp send: {e}"))?;
            s.close();
            connect_qp(pp, nic, peer)?;
            post_send(pp, nic, cfg.size);
            pp.phase = Phase::Traffic;
        }
    }
    Ok(())
}

/// The path to the guest: its MAC, our addresses, TTL / hop limit 64.
fn path(cfg: &Config, peer_mac: [u8; 6]) -> Path {
    let ip = if !cfg.v6 {
        IpRepr::V4(Ipv4Repr {
            tos: 0,
            ident: 0,
            dont_frag: true,
            ttl: 64,
            protocol: roce_wire::ipv4::PROTOCOL_UDP,
            src: cfg.ip4.octets(),
            dst: cfg.peer_ip4.octets(),
            payload_len: 0,
        })
    } else {
        IpRepr::V6(Ipv6Repr {
            traffic_class: 0,
            flow_label: 0,
            hop_limit: 64,
            next_header: 17,
            src: cfg.ip6.octets(),
            dst: cfg.peer_ip6.octets(),
            payload_len: 0,
        })
    };
    Path {
        eth: EthernetRepr {
            dst: peer_mac,
            src: cfg.mac,
            vlan: None,
            ethertype: 0,
        },
        ip,
    }
}

/// One completion of the ping-pong (pingpong's `parse_single_wc`).
fn completion(
    cfg: &Config,
    pp: &mut Pingpong,
    nic: &mut Nic,
    c: &crate::nic::Cqe,
) -> Result<(), String> {
    if !c.ok {
        return Err(format!(
            "completion of wr_id {} failed: status {} ({:?})",
            c.wr_id, c.status, c.opcode
        ));
    }
    match c.wr_id {
        SEND_WRID => pp.scnt += 1,
        RECV_WRID => {
            // Receive buffers are used in posting order.
            let i = (pp.next_recv as usize - pp.posted_recv) % RX_DEPTH;
            pp.posted_recv -= 1;
            if c.byte_len != cfg.size {
                return Err(format!(
                    "message {}: {} bytes received, expected {}",
                    pp.rcnt, c.byte_len, cfg.size
                ));
            }
            let got = nic.peek().read(pp.recv_va[i], cfg.size as usize);
            if got != pp.payload {
                let at = got.iter().zip(&pp.payload).position(|(a, b)| a != b);
                return Err(format!(
                    "message {}: data differs from pingpong's at byte {at:?}",
                    pp.rcnt
                ));
            }
            pp.rcnt += 1;
            post_recv(pp, nic, cfg.size);
        }
        w => return Err(format!("completion for unknown wr_id {w}")),
    }
    pp.pending &= !c.wr_id;
    if pp.scnt < cfg.iters && pp.pending == 0 {
        post_send(pp, nic, cfg.size);
        pp.pending |= RECV_WRID;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qemu_framing() {
        // A 60-byte frame: 00 00 00 3c, then the frame.
        let f: Vec<u8> = (0..60).collect();
        let e = encode_frame(&f);
        assert_eq!(&e[..4], &[0, 0, 0, 0x3c]);
        assert_eq!(&e[4..], &f[..]);
        // Split anywhere, two frames back to back.
        let mut d = Deframer::default();
        let mut s = e.clone();
        s.extend_from_slice(&encode_frame(&[0xaa; 1514]));
        for chunk in s.chunks(7) {
            d.push(chunk);
        }
        assert_eq!(d.next_frame().unwrap(), Some(f));
        assert_eq!(d.next_frame().unwrap(), Some(vec![0xaa; 1514]));
        assert_eq!(d.next_frame().unwrap(), None);
        assert_eq!(d.pending(), 0);
        // A partial header, a partial frame.
        d.push(&[0, 0, 5]);
        assert_eq!(d.next_frame().unwrap(), None);
        d.push(&[0xdc, 1, 2]);
        assert_eq!(d.next_frame().unwrap(), None);
        assert_eq!(d.pending(), 6);
    }

    #[test]
    fn qemu_framing_bad_length() {
        let mut d = Deframer::default();
        d.push(&[0, 0, 0, 0]);
        assert!(d.next_frame().unwrap_err().contains("length 0"));
        let mut d = Deframer::default();
        d.push(&[0, 1, 0, 1]);
        assert!(d.next_frame().unwrap_err().contains("65537"));
    }

    #[test]
    fn pp_message_construct() {
        // rc_pingpong's sprintf("%04x:%06x:%06x:%s") of LID 0, QPN 0x11,
        // PSN 0x1234ab, GID ::ffff:10.38.0.2, then the NUL.
        let d = PpDest {
            lid: 0,
            qpn: 0x11,
            psn: 0x1234ab,
            gid: gid_of("10.38.0.2".parse().unwrap()),
        };
        let m = d.encode();
        assert_eq!(
            &m[..],
            b"0000:000011:1234ab:00000000000000000000ffff0a260002\0"
        );
        assert_eq!(PpDest::decode(&m).unwrap(), d);
    }

    #[test]
    fn pp_message_deconstruct() {
        // As a guest prints it (an IPv6 GID fd38::2, upper-case hex is
        // what sscanf's %x takes too).
        let m = b"0000:00001A:abcdef:fd380000000000000000000000000002\0";
        let d = PpDest::decode(m).unwrap();
        assert_eq!(d.qpn, 0x1a);
        assert_eq!(d.psn, 0xabcdef);
        assert_eq!(d.gid, gid_of("fd38::2".parse().unwrap()));
    }

    #[test]
    fn pp_message_impossible() {
        let good = *b"0000:000011:1234ab:00000000000000000000ffff0a260002\0";
        assert!(PpDest::decode(&good[..51])
            .unwrap_err()
            .contains("51 bytes"));
        let mut m = good;
        m[51] = b'0';
        assert!(PpDest::decode(&m).is_err());
        let mut m = good;
        m[4] = b'-';
        assert!(PpDest::decode(&m).is_err());
        let mut m = good;
        m[7] = b'g';
        assert!(PpDest::decode(&m).unwrap_err().contains("not hex"));
        let mut m = good;
        m[30] = b' ';
        assert!(PpDest::decode(&m).is_err());
    }

    #[test]
    fn link_local_eui64() {
        // The guest's: 52:54:00:38:00:02 -> fe80::5054:ff:fe38:2, as its
        // rxe GID 0 shows (fe80:0000:0000:0000:5054:00ff:fe38:0002).
        assert_eq!(
            link_local([0x52, 0x54, 0, 0x38, 0, 2]),
            "fe80::5054:ff:fe38:2".parse::<Ipv6Addr>().unwrap()
        );
    }

    #[test]
    fn pp_payload_marks_pages() {
        let p = pp_payload(8193, 4096);
        assert_eq!(
            (p[0], p[1], p[4095], p[4096], p[4097], p[8192]),
            (0, 0x7b, 0x7b, 0, 0x7b, 0)
        );
    }

    /// Two model NICs, UD QPs toward each other: a SEND with the right
    /// Q_Key lands with its bytes, one with another Q_Key is dropped.
    #[test]
    fn softnic_ud_send() {
        let cfg = Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            tool: Tool::UdPingpong,
            server: true,
            ip4: "10.38.0.1".parse().unwrap(),
            peer_ip4: "10.38.0.2".parse().unwrap(),
            ip6: "fd38::1".parse().unwrap(),
            peer_ip6: "fd38::2".parse().unwrap(),
            v6: true,
            mac: [2, 0, 0, 0x38, 0, 1],
            port: 18515,
            size: 100,
            iters: 1,
            pmtu: Pmtu::Mtu1024,
            clock_mhz: 156.25,
            wait_cycles: 0,
            drop_ppm: 0,
            seed: 1,
            timeout: Duration::from_secs(1),
            engine: Engine::Model,
        };
        let st = crate::nic::Station {
            mac: [0; 6],
            ip: [0; 4],
        };
        let mut a = SoftNic::new("a", st, 8, 156.25);
        let mut b = SoftNic::new("b", st, 8, 156.25);
        let mut lay = Layout::new(12);
        let src = lay.alloc(Region::Src, 100, 64);
        let dst = lay.alloc(Region::Rcv, 100, 64);
        lay.seal();
        a.reg_mrs(&lay);
        b.reg_mrs(&lay);
        let p = path(&cfg, [2, 0, 0, 0x38, 0, 2]);
        a.create_ud_qp_path(0x38, 0, UD_QKEY, Pmtu::Mtu1024, p);
        b.create_ud_qp_path(0x11, 0, UD_QKEY, Pmtu::Mtu1024, p);
        let data: Vec<u8> = (0..100u8).collect();
        a.write(src, &data);
        for _ in 0..2 {
            b.post_recv(
                0x11,
                RecvWr {
                    wr_id: 7,
                    va: dst,
                    len: 100,
                },
            );
        }
        a.post_send_ud(0x38, 1, src, 100, 0x11, 0x1234);
        a.post_send_ud(0x38, 2, src, 100, 0x11, UD_QKEY);
        let mut frames = 0;
        for _ in 0..1000 {
            a.step();
            b.step();
            while let Some((_, f)) = a.pop_tx() {
                assert!(is_roce(&f));
                assert_eq!(f[12..14], [0x86, 0xdd], "IPv6 path");
                frames += 1;
                b.push_rx(b.cycle(), f);
            }
        }
        assert_eq!(frames, 2);
        let sends: Vec<_> = std::iter::from_fn(|| a.poll_cq()).collect();
        assert_eq!(sends.len(), 2);
        let recvs: Vec<_> = std::iter::from_fn(|| b.poll_cq()).collect();
        assert_eq!(recvs.len(), 1, "the SEND with the wrong Q_Key is dropped");
        assert_eq!((recvs[0].wr_id, recvs[0].byte_len), (7, 100));
        assert_eq!(b.read(dst, 100), data);
    }

    #[test]
    fn roce_split() {
        // IPv4 UDP to 4791 is RoCE; to 4792 it is not; ARP is not.
        let mut v4 = vec![0u8; 60];
        v4[12..14].copy_from_slice(&[0x08, 0x00]);
        v4[14] = 0x45;
        v4[23] = 17;
        v4[36..38].copy_from_slice(&4791u16.to_be_bytes());
        assert!(is_roce(&v4));
        v4[37] = 0xb8;
        assert!(!is_roce(&v4));
        let mut arp = vec![0u8; 60];
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert!(!is_roce(&arp));
        // IPv6, next header UDP, dst port 4791 at 14 + 40 + 2.
        let mut v6 = vec![0u8; 80];
        v6[12..14].copy_from_slice(&[0x86, 0xdd]);
        v6[14] = 0x60;
        v6[20] = 17;
        v6[56..58].copy_from_slice(&4791u16.to_be_bytes());
        assert!(is_roce(&v6));
        v6[20] = 6;
        assert!(!is_roce(&v6));
        assert!(!is_roce(&v6[..20]));
    }
}
