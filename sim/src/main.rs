//! `roce-sim`: decode captures with the RoCE v2 model (and, as the hardware
//! blocks land, with their Verilator models).

use clap::{Parser, Subcommand, ValueEnum};
use roce_sim::capture::{parse_capture, parse_capture_hw, CaptureReader, ParseError};
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "roce-sim",
    version,
    about = "RoCE v2 model and simulation tools"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print one JSON line (DESIGN §7 schema) per frame of a pcap or pcapng
    /// capture: the verdict, the drop reason, and the header fields.
    Parse {
        /// Capture file (pcap or pcapng, Ethernet link type).
        #[arg(long)]
        pcap: PathBuf,
        /// Which implementation judges the frames.
        #[arg(long, value_enum, default_value_t = Engine::Model)]
        engine: Engine,
        /// Print frame and drop counts to stderr at the end.
        #[arg(long)]
        stats: bool,
        /// Data width of the hardware parser (`--engine hw`): 64, 128, 256 or 512.
        #[arg(long, default_value_t = 64, value_parser = parse_width)]
        width: usize,
    },
    /// Replay a real capture against our responder: find each conversation
    /// (a QP pair), set up our responding QP from what the capture shows,
    /// feed it the requester's packets in capture order, print one JSON line
    /// per frame it sends (DESIGN §7 fields plus `in_reply_to`,
    /// `capture_frame` and `differs`/`allowed`), and compare with the real
    /// responses by the rules of docs/REPLAY.md. Summary on stderr; exit 1
    /// on any disagreement.
    Replay {
        /// Capture file (pcap or pcapng, Ethernet link type).
        #[arg(long)]
        pcap: PathBuf,
        /// Which implementation responds.
        #[arg(long, value_enum, default_value_t = ReplayEngine::Model)]
        engine: ReplayEngine,
    },
    /// Build frames from JSON descriptors (see `roce_sim::descriptors`:
    /// DESIGN §7 field names plus MACs, IP addresses and payload) and write
    /// them to a pcap.
    Emit {
        /// Descriptor file: `{"frames": [...]}`.
        #[arg(long)]
        json: PathBuf,
        /// Output pcap (Ethernet, no FCS).
        #[arg(long)]
        pcap: PathBuf,
        /// Which implementation builds the frames.
        #[arg(long, value_enum, default_value_t = Engine::Model)]
        engine: Engine,
        /// Data width of the hardware builder (`--engine hw`): 64, 128, 256 or 512.
        #[arg(long, default_value_t = 64, value_parser = parse_width)]
        width: usize,
    },
    /// Firmware on a softcore model over the Verilated CSR block.
    Fw {
        #[command(subcommand)]
        what: FwWhat,
    },
    /// Long differential checks of a hardware block against the model.
    Fuzz {
        #[command(subcommand)]
        what: FuzzWhat,
    },
    /// Two simulated NICs doing RDMA over a simulated link (the main job):
    /// perftest-style workloads from NIC A to NIC B, every byte checked
    /// where it lands, and a report (bandwidth, message rate, latency
    /// percentiles, retransmissions, NAKs and drops by reason from the
    /// NICs' counters). Exit 1 when a check fails or the run hangs (the
    /// message names the QP and message), 2 for bad arguments.
    Run(Box<RunArgs>),
    /// `run` over a range of one parameter (loss rate, message size, QP
    /// count, link latency, ...): a Markdown table, JSON, and charts of
    /// goodput and latency percentiles as SVG and PNG in --out. Exit 1 when
    /// a point's run fails (naming the value), 2 for bad arguments.
    Sweep(Box<SweepArgs>),
    /// Live interop (issue 38): a simulated NIC (the transport model) on a
    /// QEMU guest's socket netdev (`-netdev socket,connect=`), against Linux
    /// rdma_rxe and a verbs tool in the guest; smoltcp is the simulated
    /// host's TCP/IP stack (ARP, IPv6 ND, ICMP echo, the tool's TCP
    /// exchange). `scripts/interop` builds and boots the guest. Exit 0 when
    /// every message was exchanged and checked, 1 when not (the message says
    /// where it stopped), 2 for bad arguments.
    Interop(Box<InteropArgs>),
    /// Simulated datapath benchmarks.
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// The workload.
    #[arg(long, value_enum, default_value_t = roce_sim::run::Test::Write)]
    test: roce_sim::run::Test,
    /// Message size in bytes (atomics: 8; mixed: the largest).
    #[arg(long, default_value_t = 4096, value_parser = num_max(1 << 20))]
    size: u32,
    /// Messages per QP.
    #[arg(long, default_value_t = 500, value_parser = at_least(1))]
    iters: u64,
    /// QPs (the hardware build has 64).
    #[arg(long, default_value_t = 2, value_parser = num_max(1 << 24))]
    qps: u32,
    /// SEND and WRITE with immediate data.
    #[arg(long)]
    imm: bool,
    /// The responders run the same workload back at the same time.
    #[arg(long)]
    bidir: bool,
    /// NICs: 2 on one link, up to 16 through a switch (one output port
    /// per NIC with the link's latency, bandwidth, faults and ECN marking).
    #[arg(long, default_value_t = 2)]
    nics: usize,
    /// Who sends to whom: pairs (A→B, C→D, ...) or incast (every NIC to A).
    #[arg(long, value_enum, default_value_t = roce_sim::run::Pattern::Pairs)]
    pattern: roce_sim::run::Pattern,
    /// SENDs and WRITEs of at most 64 bytes carry their payload inline in
    /// the WQE (the host interface reads it from the send queue; NICs
    /// without one read the buffer as usual).
    #[arg(long)]
    inline: bool,
    /// Messages outstanding per QP (perftest's tx-depth).
    #[arg(long, default_value_t = 8, value_parser = num_max(256))]
    depth: u32,
    /// Receive WQEs each responder QP keeps posted (default 2 × --depth;
    /// fewer than the SENDs in flight brings RNR NAKs and retries).
    #[arg(long, value_parser = num_max(512))]
    recv_depth: Option<u32>,
    /// Cycles the responder's host takes to post a receive WQE again after
    /// its completion (a slow host: RNR NAKs).
    #[arg(long, default_value_t = 0, value_parser = at_least(0))]
    recv_delay: u64,
    /// Path MTU in bytes (256, 512, 1024, 2048, 4096).
    #[arg(long, default_value = "4096", value_parser = mtu)]
    pmtu: u32,
    /// The requesters (NIC A; with a switch, the NICs that send): hw
    /// (Verilated rc_transport) or model.
    #[arg(long, value_enum, default_value_t = roce_sim::run::Engine::Hw)]
    a: roce_sim::run::Engine,
    /// The responders (NIC B; with a switch, the NICs that receive): hw or model.
    #[arg(long, value_enum, default_value_t = roce_sim::run::Engine::Hw)]
    b: roce_sim::run::Engine,
    /// Link latency in cycles, each way (156 = 1 µs at 156.25 MHz).
    #[arg(long, default_value_t = 156, value_parser = at_least(0))]
    latency: u64,
    /// Link bandwidth in bytes per cycle (8 = W/8 at W = 64, line rate).
    #[arg(long, default_value_t = 8.0)]
    bandwidth: f64,
    /// Frames dropped, percent (each direction).
    #[arg(long, default_value = "1", value_parser = percent)]
    drop: u32,
    /// Frames duplicated, percent.
    #[arg(long, default_value = "0", value_parser = percent)]
    dup: u32,
    /// Frames reordered, percent.
    #[arg(long, default_value = "0", value_parser = percent)]
    reorder: u32,
    /// Frames corrupted (one bit past the Ethernet header), percent.
    #[arg(long, default_value = "0", value_parser = percent)]
    corrupt: u32,
    /// Mark ECN CE on frames that find more than this many bytes queued.
    #[arg(long, value_parser = at_least(0))]
    ecn_threshold: Option<u64>,
    /// Seed (decimal or 0x hex).
    #[arg(long, default_value = "1", value_parser = number)]
    seed: u64,
    /// Clock for the figures in Gb/s and µs, MHz.
    #[arg(long, default_value_t = 156.25)]
    clock_mhz: f64,
    /// Local ACK timeout code (4.096 µs · 2^t at the clock).
    #[arg(long, default_value_t = 7, value_parser = num_max(31))]
    timeout: u32,
    /// Memory latency and backpressure on the hardware NICs, per mille.
    #[arg(long, default_value_t = 0, value_parser = num_max(999))]
    stall: u32,
    /// Write the report as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Capture both directions of the link (as sent) to this pcap.
    #[arg(long)]
    pcap: Option<PathBuf>,
    /// Write a VCD of the first hardware NIC to this file.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

#[derive(clap::Args)]
struct InteropArgs {
    /// Listen here for QEMU (`-netdev socket,id=n0,connect=HOST:PORT`).
    #[arg(long, default_value = "127.0.0.1:47910")]
    listen: std::net::SocketAddr,
    /// The verbs tool the guest runs.
    #[arg(long, value_enum, default_value = "rc-pingpong")]
    tool: InteropTool,
    /// roce-sim's role in the tool (the guest takes the other).
    #[arg(long, value_enum)]
    role: InteropRole,
    /// RoCE over IPv4 (GIDs IPv4-mapped) or IPv6 (GIDs the IPv6
    /// addresses). The simulated host has both addresses either way; as
    /// the client it makes the tool's TCP exchange over IPv4.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u8).range(4..=6))]
    ipv: u8,
    /// The simulated host's IPv4 address.
    #[arg(long, default_value = "10.38.0.1")]
    ip: std::net::Ipv4Addr,
    /// The guest's IPv4 address.
    #[arg(long, default_value = "10.38.0.2")]
    peer_ip: std::net::Ipv4Addr,
    /// The simulated host's IPv6 address.
    #[arg(long, default_value = "fd38::1")]
    ip6: std::net::Ipv6Addr,
    /// The guest's IPv6 address.
    #[arg(long, default_value = "fd38::2")]
    peer_ip6: std::net::Ipv6Addr,
    /// The tool's TCP port.
    #[arg(long, default_value_t = 18515)]
    port: u16,
    /// Message size in bytes (the guest's -s).
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..=1 << 20))]
    size: u32,
    /// Exchanges (the guest's -n).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    iters: u32,
    /// Path MTU (the guest's -m).
    #[arg(long, default_value_t = 1024)]
    mtu: u32,
    /// NIC clock (MHz).
    #[arg(long, default_value_t = 156.25)]
    clock: f64,
    /// Cycles stepped per millisecond spent waiting for the guest.
    #[arg(long, default_value_t = 4000)]
    wait_cycles: u64,
    /// Drop RoCE frames on the link, each way, per million.
    #[arg(long, default_value_t = 0, value_parser = num_max(1_000_000))]
    drop: u32,
    /// Seed of the drops.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// The NIC facing the guest.
    #[arg(long, value_enum, default_value = "model")]
    engine: InteropEngine,
    /// Write every frame of the link (both ways) to this pcap.
    #[arg(long)]
    pcap: Option<PathBuf>,
    /// Write the report as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Copy, Clone, ValueEnum)]
enum InteropEngine {
    /// The transport model (RC and UD, IPv4 and IPv6).
    Model,
    /// The Verilated rc_transport with the bench as its host (RC over IPv4).
    Hw,
}

#[derive(Copy, Clone, ValueEnum)]
enum InteropTool {
    /// ibv_rc_pingpong (RC SEND ping-pong, rdma-core).
    RcPingpong,
    /// ibv_ud_pingpong (UD SEND ping-pong, rdma-core; --size up to the PMTU).
    UdPingpong,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum InteropRole {
    /// roce-sim serves; the guest connects to --ip.
    Server,
    /// roce-sim connects to the guest at --peer-ip.
    Client,
}

#[derive(clap::Args)]
struct SweepArgs {
    /// The parameter to vary.
    #[arg(long, value_enum)]
    param: roce_sim::sweep::Param,
    /// Its values, comma separated (percent for rates).
    #[arg(long, value_delimiter = ',', required = true)]
    values: Vec<f64>,
    /// Folder for sweep.md, sweep.json, sweep.svg and sweep.png.
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum BenchWhat {
    /// Back-to-back frames of 64, 256, 1024, 4096 and 9000 bytes through the
    /// receive parser and the frame builder: cycles per frame against
    /// ceil(len / (W/8)), stalls, latency.
    Datapath {
        /// Data width: 64, 128, 256 or 512.
        #[arg(long, default_value_t = 64, value_parser = parse_width)]
        width: usize,
    },
}

#[derive(Subcommand)]
enum FuzzWhat {
    /// Random frames (fields favouring edges and real stacks' values),
    /// mutated (masked fields varied, bytes changed, lengths off, fields
    /// rewritten with good checksums, truncated, trailing bytes), through
    /// the Verilated `roce_rx` and `roce_wire::Frame::parse`: every verdict,
    /// reason, field, payload and counter must agree. Exit 1 on the first
    /// disagreement, printing the frame.
    Rx {
        /// Data width: 64, 128, 256 or 512.
        #[arg(long, default_value_t = 64, value_parser = parse_width)]
        width: usize,
        /// Frames to check.
        #[arg(long, default_value_t = 100_000, value_parser = at_least(1))]
        frames: u64,
        /// Seed (decimal or 0x hex; default: from the clock, printed).
        #[arg(long, value_parser = number)]
        seed: Option<u64>,
        /// Largest payload of a generated frame, in bytes (at most 9000).
        #[arg(long, default_value_t = 4096, value_parser = num_max(9000))]
        max_payload: u32,
    },
    /// Well-formed, random and mutated frames into the whole hardware
    /// transport (rc_transport, W=64, 64-QP build): requests with the PSNs
    /// it expects, responses to its own requests, every opcode at random,
    /// a share mutated. Exit 1 on a hang, a broken AXI rule, a byte written
    /// outside the registered regions, or QPs that carry no clean traffic
    /// after Reset at the end.
    Transport {
        /// Frames into the transport.
        #[arg(long, default_value_t = 100_000, value_parser = at_least(1))]
        frames: u64,
        /// Seed (decimal or 0x hex; default: from the clock, printed).
        #[arg(long, value_parser = number)]
        seed: Option<u64>,
        /// QPs the frames address (1 to 62: QP 2 up; 0 and 1 are the management QPs).
        #[arg(long, default_value_t = 8, value_parser = num_max(62))]
        qps: u32,
        /// Frames mutated, per mille.
        #[arg(long, default_value_t = 150, value_parser = num_max(1000))]
        mutate: u32,
    },
}

#[derive(Subcommand)]
enum FwWhat {
    /// Boot roce-fw on a softcore, take QP N from Reset through Init and
    /// RTR to RTS with the given attributes, print each command's mask,
    /// result and cycles, then the QP's context read back over the CSRs.
    /// Exit 0 when every command succeeds, 1 when the firmware rejects one,
    /// 2 for bad arguments.
    Bringup(Box<BringupArgs>),
}

#[derive(clap::Args)]
struct BringupArgs {
    /// The QP number (below the CSR block's QP count).
    #[arg(long, value_parser = below(roce_regs::QP_COUNT))]
    qp: u32,
    /// The softcore model.
    #[arg(long, value_enum, default_value_t = Core::Picorv32)]
    core: Core,
    /// Firmware ELF (default: build roce-fw into target/fw-elf with cargo).
    #[arg(long)]
    elf: Option<PathBuf>,
    /// QP type.
    #[arg(long = "type", default_value = "rc", value_parser = qp_type)]
    qp_type: roce_regs::QpType,
    /// P_Key table index.
    #[arg(long, default_value = "0", value_parser = below(roce_regs::PKEY_COUNT))]
    pkey_index: u32,
    /// Access flags, comma separated (local-write, remote-write,
    /// remote-read, remote-atomic), or "none".
    #[arg(long, default_value = "remote-write,remote-read", value_parser = access_flags)]
    access: u32,
    /// Q_Key (UD).
    #[arg(long, default_value = "0", value_parser = num_max(u32::MAX))]
    qkey: u32,
    /// Source GID table index.
    #[arg(long, default_value = "0", value_parser = below(roce_regs::GID_COUNT))]
    sgid_index: u32,
    /// Destination MAC (aa:bb:cc:dd:ee:ff).
    #[arg(long, default_value = "02:00:00:00:00:02", value_parser = mac)]
    dmac: [u8; 6],
    /// Destination GID (IPv6 text; an IPv4 peer as ::ffff:a.b.c.d).
    #[arg(long, default_value = "::ffff:10.0.0.2", value_parser = gid)]
    dgid: [u8; 16],
    /// Path MTU in bytes (256, 512, 1024, 2048, 4096).
    #[arg(long, default_value = "1024", value_parser = mtu)]
    mtu: u32,
    /// Destination QP number.
    #[arg(long, default_value = "0x12", value_parser = num_max(roce_regs::qp::dest_qpn::QPN.max()))]
    dest_qp: u32,
    /// Receive PSN.
    #[arg(long, default_value = "0", value_parser = num_max(roce_regs::qp::rq_psn::PSN.max()))]
    rq_psn: u32,
    /// Send PSN.
    #[arg(long, default_value = "0", value_parser = num_max(roce_regs::qp::sq_psn::PSN.max()))]
    sq_psn: u32,
    /// Responder READ/atomic depth.
    #[arg(long, default_value = "1", value_parser = num_max(roce_regs::MAX_DEST_RD_ATOMIC))]
    max_dest_rd_atomic: u32,
    /// Requester READ/atomic depth.
    #[arg(long, default_value = "1", value_parser = num_max(roce_regs::MAX_RD_ATOMIC))]
    max_rd_atomic: u32,
    /// Minimum RNR NAK timer code.
    #[arg(long, default_value = "12", value_parser = num_max(roce_regs::qp::timers::MIN_RNR_TIMER.max()))]
    min_rnr_timer: u32,
    /// Local ACK timeout exponent (4.096 us * 2^t; 0 disables).
    #[arg(long, default_value = "14", value_parser = num_max(roce_regs::qp::timers::TIMEOUT.max()))]
    timeout: u32,
    /// Retry count.
    #[arg(long, default_value = "7", value_parser = num_max(roce_regs::qp::timers::RETRY_CNT.max()))]
    retry_cnt: u32,
    /// Port MTU limit in bytes, written to `cfg.pmtu_cap` by the host
    /// before the commands (default: leave the reset value, 4096); a
    /// `--mtu` above it is rejected by the firmware.
    #[arg(long, value_parser = mtu)]
    pmtu_cap: Option<u32>,
    /// Protection domain (set on Reset to Init).
    #[arg(long, default_value = "1", value_parser = num_max(roce_regs::qp::pd::PD.max()))]
    pd: u32,
    /// RNR retry count (7 = forever).
    #[arg(long, default_value = "7", value_parser = num_max(roce_regs::qp::timers::RNR_RETRY.max()))]
    rnr_retry: u32,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Core {
    /// PicoRV32 RTL in Verilator (sim/verilog/fw_soc.v).
    Picorv32,
    /// The rvsim instruction-set simulator.
    Iss,
}

#[derive(Copy, Clone, ValueEnum)]
enum Engine {
    /// The roce-wire software model.
    Model,
    /// The hardware (roce_rx to parse, roce_tx to emit), simulated by Verilator.
    Hw,
}

#[derive(Copy, Clone, ValueEnum)]
enum ReplayEngine {
    /// The roce-transport software model.
    Model,
    /// The hardware responder (resp_top, Verilator) for RC conversations;
    /// UC and UD, not built in hardware, on the model.
    Hw,
}

/// The `--json` and `--pcap` files, created before a run so that a bad
/// path fails at once.
fn create_outputs(
    json: &Option<PathBuf>,
    pcap: &Option<PathBuf>,
) -> Result<(Option<std::fs::File>, Option<std::fs::File>), String> {
    let create = |p: &Option<PathBuf>| match p {
        Some(p) => std::fs::File::create(p)
            .map(Some)
            .map_err(|e| format!("cannot create {}: {e}", p.display())),
        None => Ok(None),
    };
    Ok((create(json)?, create(pcap)?))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Parse {
            pcap,
            engine,
            stats,
            width,
        } => parse(&pcap, stats, engine, width),
        Command::Replay { pcap, engine } => replay(&pcap, engine),
        Command::Emit {
            json,
            pcap,
            engine,
            width,
        } => emit(&json, &pcap, engine, width),
        Command::Fw {
            what: FwWhat::Bringup(a),
        } => bringup(&a),
        Command::Fuzz {
            what:
                FuzzWhat::Rx {
                    width,
                    frames,
                    seed,
                    max_payload,
                },
        } => fuzz_rx(width, frames, seed, max_payload as usize),
        Command::Fuzz {
            what:
                FuzzWhat::Transport {
                    frames,
                    seed,
                    qps,
                    mutate,
                },
        } => fuzz_transport(frames, seed, qps, mutate),
        Command::Run(a) => run(&a),
        Command::Sweep(a) => sweep(&a),
        Command::Interop(a) => interop(&a),
        Command::Bench {
            what: BenchWhat::Datapath { width },
        } => {
            println!("{}", roce_sim::rx::bench(width));
            println!("{}", roce_sim::tx::bench(width));
            ExitCode::SUCCESS
        }
    }
}

/// The scenario the `run` arguments describe, or the message for exit 2.
fn scenario(a: &RunArgs) -> Result<roce_sim::run::Scenario, String> {
    use roce_sim::run::{Engine as E, LinkConfig, Scenario, Test};
    use std::io::IsTerminal;
    let test = a.test;
    let atomic = matches!(test, Test::AtomicFa | Test::AtomicCs);
    let sc = Scenario {
        test,
        // An atomic's size is 8 whatever the default says.
        size: if atomic { 8 } else { a.size },
        iters: a.iters,
        qps: a.qps,
        imm: a.imm,
        inline: a.inline,
        depth: a.depth as usize,
        recv_depth: a.recv_depth.map_or(2 * a.depth as usize, |r| r as usize),
        recv_delay: a.recv_delay,
        pmtu: roce_wire::Pmtu::ALL
            .into_iter()
            .find(|p| u32::from(p.code()) == a.pmtu)
            .expect("checked by the parser"),
        link: LinkConfig {
            latency: a.latency,
            bytes_per_cycle: a.bandwidth,
            drop_ppm: a.drop,
            dup_ppm: a.dup,
            reorder_ppm: a.reorder,
            corrupt_ppm: a.corrupt,
            ecn_threshold: a.ecn_threshold,
        },
        seed: a.seed,
        engines: [a.a, a.b],
        clock_mhz: a.clock_mhz,
        timeout: a.timeout as u8,
        stall: a.stall,
        hang_cycles: Scenario::default_run().hang_cycles,
        progress: !a.quiet && io::stderr().is_terminal(),
        record_rx: false,
        bidir: a.bidir,
        nics: a.nics,
        pattern: a.pattern,
    };
    if a.recv_depth.is_some_and(|r| r as usize > 2 * sc.depth) {
        return Err(format!(
            "--recv-depth {}: at most 2 × --depth ({})",
            sc.recv_depth,
            2 * sc.depth
        ));
    }
    if atomic && a.size != 4096 && a.size != 8 {
        return Err(format!("--size {}: atomics are 8 bytes", a.size));
    }
    sc.validate()?;
    if a.trace.is_some() && !sc.engines.contains(&E::Hw) {
        return Err("--trace needs a hardware NIC (--a hw or --b hw)".into());
    }
    Ok(sc)
}

fn run(a: &RunArgs) -> ExitCode {
    let bad = |msg: String| {
        eprintln!("roce-sim run: error: {msg}");
        ExitCode::from(2)
    };
    let sc = match scenario(a) {
        Ok(s) => s,
        Err(e) => return bad(e),
    };
    // Outputs are created before the run, so a bad path fails at once.
    let (json, pcap) = match create_outputs(&a.json, &a.pcap) {
        Ok(f) => f,
        Err(e) => return bad(e),
    };
    let (report, out) = match roce_sim::run::run(&sc, a.trace.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("roce-sim run: FAILED: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", report.text());
    if let Some(f) = json {
        let mut w = BufWriter::new(f);
        if let Err(e) = serde_json::to_writer_pretty(&mut w, &report.json())
            .map_err(io::Error::from)
            .and_then(|_| w.flush())
        {
            return fail(format_args!("writing the JSON report: {e}"));
        }
    }
    if let Some(f) = pcap {
        let written = (|| -> Result<(), pcap_file::PcapError> {
            let mut w = pcap_file::pcap::PcapWriter::new(BufWriter::new(f))?;
            let mut frames = out.frames;
            frames.sort_by_key(|f| f.0);
            for (cycle, _, fr) in &frames {
                let ts =
                    std::time::Duration::from_nanos((*cycle as f64 * 1000.0 / sc.clock_mhz) as u64);
                w.write_packet(&pcap_file::pcap::PcapPacket::new(ts, fr.len() as u32, fr))?;
            }
            w.into_writer()
                .flush()
                .map_err(pcap_file::PcapError::IoError)
        })();
        if let Err(e) = written {
            return fail(format_args!("writing the pcap: {e}"));
        }
    }
    ExitCode::SUCCESS
}

fn interop(a: &InteropArgs) -> ExitCode {
    use roce_sim::interop::{Config, Tool};
    let bad = |msg: &str| {
        eprintln!("roce-sim interop: {msg}");
        ExitCode::from(2)
    };
    let Some(pmtu) = roce_wire::Pmtu::from_bytes(a.mtu) else {
        return bad(&format!(
            "--mtu {} is not 256, 512, 1024, 2048 or 4096",
            a.mtu
        ));
    };
    if a.ipv == 5 {
        return bad("--ipv is 4 or 6");
    }
    if matches!(a.engine, InteropEngine::Hw)
        && (!matches!(a.tool, InteropTool::RcPingpong) || a.ipv == 6)
    {
        return bad("--engine hw runs rc-pingpong over IPv4 only");
    }
    if matches!(a.tool, InteropTool::UdPingpong) && a.size > pmtu.bytes() {
        return bad(&format!(
            "ud-pingpong: --size {} is over the PMTU {} (a UD message is one packet)",
            a.size,
            pmtu.bytes()
        ));
    }
    if !(a.clock > 0.0 && a.clock.is_finite()) {
        return bad("--clock must be a positive number of MHz");
    }
    let cfg = Config {
        listen: a.listen,
        tool: match a.tool {
            InteropTool::RcPingpong => Tool::RcPingpong,
            InteropTool::UdPingpong => Tool::UdPingpong,
        },
        server: a.role == InteropRole::Server,
        ip4: a.ip,
        peer_ip4: a.peer_ip,
        ip6: a.ip6,
        peer_ip6: a.peer_ip6,
        v6: a.ipv == 6,
        mac: [0x02, 0x00, 0x00, 0x38, 0x00, 0x01],
        port: a.port,
        size: a.size,
        iters: a.iters,
        pmtu,
        clock_mhz: a.clock,
        wait_cycles: a.wait_cycles,
        drop_ppm: a.drop,
        seed: a.seed,
        timeout: std::time::Duration::from_secs(a.timeout),
        engine: match a.engine {
            InteropEngine::Model => roce_sim::interop::Engine::Model,
            InteropEngine::Hw => roce_sim::interop::Engine::Hw,
        },
    };
    let (json, pcap) = match create_outputs(&a.json, &a.pcap) {
        Ok(f) => f,
        Err(e) => return bad(&e),
    };
    let rep = match roce_sim::interop::run(&cfg) {
        Ok(r) => r,
        Err(e) => return fail(format_args!("interop: {e}")),
    };
    if let Some(f) = pcap {
        let written = (|| -> Result<(), pcap_file::PcapError> {
            let mut w = pcap_file::pcap::PcapWriter::new(BufWriter::new(f))?;
            for (t, fr) in &rep.frames {
                w.write_packet(&pcap_file::pcap::PcapPacket::new(*t, fr.len() as u32, fr))?;
            }
            w.into_writer()
                .flush()
                .map_err(pcap_file::PcapError::IoError)
        })();
        if let Err(e) = written {
            return fail(format_args!("writing the pcap: {e}"));
        }
    }
    if let Some(f) = json {
        let mut w = BufWriter::new(f);
        if let Err(e) = serde_json::to_writer_pretty(&mut w, &rep.json(&cfg))
            .map_err(io::Error::from)
            .and_then(|_| w.flush())
        {
            return fail(format_args!("writing the JSON report: {e}"));
        }
    }
    println!(
        "roce-sim interop: {} {} IPv{}: {} ({} sent, {} received of {}; {} cycles, {:.1} s wall; frames in {} (RoCE {}), out {} (RoCE {}), dropped {})",
        cfg.tool.name(),
        if cfg.server { "server" } else { "client" },
        if cfg.v6 { 6 } else { 4 },
        if rep.ok { "PASS" } else { "FAIL" },
        rep.sent,
        rep.received,
        cfg.iters,
        rep.cycles,
        rep.wall.as_secs_f64(),
        rep.frames_in,
        rep.roce_in,
        rep.frames_out,
        rep.roce_out,
        rep.dropped
    );
    if rep.ok {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "roce-sim interop: FAILED: {}",
            rep.error.unwrap_or_default()
        );
        ExitCode::FAILURE
    }
}

fn sweep(a: &SweepArgs) -> ExitCode {
    use roce_sim::sweep;
    let bad = |msg: String| {
        eprintln!("roce-sim sweep: error: {msg}");
        ExitCode::from(2)
    };
    if a.run.json.is_some() || a.run.pcap.is_some() || a.run.trace.is_some() {
        return bad("--json, --pcap and --trace are for run; a sweep writes into --out".into());
    }
    let mut base = match scenario(&a.run) {
        Ok(s) => s,
        Err(e) => return bad(e),
    };
    base.progress = false;
    // Every point's scenario is checked before the first runs.
    for &v in &a.values {
        if let Err(e) = a.param.apply(&base, v) {
            return bad(format!("--values: {e}"));
        }
    }
    if let Err(e) = std::fs::create_dir_all(&a.out) {
        return bad(format!("cannot create {}: {e}", a.out.display()));
    }
    let pts = match sweep::sweep(&base, a.param, &a.values, |p| {
        eprintln!(
            "roce-sim sweep: {} = {}: {:.3} bytes/cycle, latency p50 {} p99 {} cycles",
            a.param.label(),
            p.value,
            p.report.bytes_per_cycle(),
            p.report.latency(50.0),
            p.report.latency(99.0)
        )
    }) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("roce-sim sweep: FAILED: {e}");
            return ExitCode::FAILURE;
        }
    };
    let md = sweep::markdown(a.param, &pts);
    print!("{md}");
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(a.out.join(name), bytes)
            .map_err(|e| format!("writing {}: {e}", a.out.join(name).display()))
    };
    let results = [
        write("sweep.md", md.as_bytes()),
        write(
            "sweep.json",
            serde_json::to_string_pretty(&sweep::json(a.param, &pts))
                .expect("JSON")
                .as_bytes(),
        ),
        sweep::svg(a.param, &pts, &a.out.join("sweep.svg")),
        sweep::png(a.param, &pts, &a.out.join("sweep.png")),
    ];
    for r in results {
        if let Err(e) = r {
            return fail(e);
        }
    }
    eprintln!(
        "roce-sim sweep: wrote sweep.md, sweep.json, sweep.svg, sweep.png in {}",
        a.out.display()
    );
    ExitCode::SUCCESS
}

/// A percentage (0 to 50) as parts per million.
fn percent(s: &str) -> Result<u32, String> {
    let v: f64 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    if !(0.0..=50.0).contains(&v) {
        return Err(format!("{v} is not between 0 and 50 (percent)"));
    }
    Ok((v * 10_000.0).round() as u32)
}

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("roce-sim: error: {msg}");
    ExitCode::FAILURE
}

fn parse(path: &std::path::Path, print_stats: bool, engine: Engine, width: usize) -> ExitCode {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return fail(format_args!("cannot open {}: {e}", path.display())),
    };
    let mut capture = match CaptureReader::new(file) {
        Ok(c) => c,
        Err(e) => return fail(format_args!("{}: {e}", path.display())),
    };
    let stdout = io::stdout().lock();
    let mut out = BufWriter::with_capacity(1 << 16, stdout);
    let result = match engine {
        Engine::Model => parse_capture(&mut capture, &mut out),
        Engine::Hw => parse_capture_hw(&mut capture, &mut out, width),
    };
    let flushed = out.flush();
    let stats = match result {
        Ok(s) => s,
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(ParseError::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
            return ExitCode::SUCCESS
        }
        Err(ParseError::Output(e)) => return fail(format_args!("writing output: {e}")),
        Err(ParseError::Capture(e)) => return fail(format_args!("{}: {e}", path.display())),
    };
    match flushed {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return ExitCode::SUCCESS,
        Err(e) => return fail(format_args!("writing output: {e}")),
        Ok(()) => {}
    }
    if print_stats {
        eprintln!(
            "roce-sim: {} frames, {} bytes, {} accepted",
            stats.frames, stats.bytes, stats.accepted
        );
        for r in roce_wire::DropReason::ALL {
            if stats.dropped[r.index()] > 0 {
                eprintln!(
                    "roce-sim:   drop {:<16} {}",
                    r.name(),
                    stats.dropped[r.index()]
                );
            }
        }
    }
    ExitCode::SUCCESS
}

fn replay(path: &std::path::Path, engine: ReplayEngine) -> ExitCode {
    let engine = match engine {
        ReplayEngine::Model => roce_sim::replay::Engine::Model,
        ReplayEngine::Hw => roce_sim::replay::Engine::Hw,
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return fail(format_args!("cannot open {}: {e}", path.display())),
    };
    let report = match CaptureReader::new(file)
        .map_err(roce_sim::replay::ReplayError::Capture)
        .and_then(|mut c| roce_sim::replay::replay_with(&mut c, engine))
    {
        Ok(r) => r,
        Err(e) => return fail(format_args!("{}: {e}", path.display())),
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let mut written = Ok(());
    for l in report.lines() {
        written = writeln!(out, "{l}");
        if written.is_err() {
            break;
        }
    }
    match written.and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            return fail(format_args!("writing output: {e}"))
        }
        _ => {}
    }
    let sent: usize = report.responders.iter().map(|r| r.sent.len()).sum();
    let fed: usize = report.responders.iter().map(|r| r.fed).sum();
    let real: usize = report.responders.iter().map(|r| r.real).sum();
    let agree: usize = report.responders.iter().map(|r| r.agree).sum();
    let allowed: usize = report.responders.iter().map(|r| r.allowed.len()).sum();
    let bad: Vec<&String> = report.disagreements().collect();
    eprintln!(
        "roce-sim replay: {}: {} frames ({} RoCE v2), {} conversations, {} responders",
        path.display(),
        report.frames,
        report.roce_frames,
        report.conversations,
        report.responders.len()
    );
    for r in &report.responders {
        eprintln!(
            "roce-sim replay:   conversation {} {}: {} requests fed, {} responses sent, {} real, {} agree, {} allowed differences, {} disagreements",
            r.conversation,
            r.name,
            r.fed,
            r.sent.len(),
            r.real,
            r.agree,
            r.allowed.len(),
            r.disagreements.len()
        );
        for a in &r.allowed {
            eprintln!("roce-sim replay:     allowed: {a}");
        }
    }
    if report.orphan_responses > 0 {
        eprintln!(
            "roce-sim replay: {} responses answer no request in the capture (not compared)",
            report.orphan_responses
        );
    }
    eprintln!(
        "roce-sim replay: {fed} requests fed, {sent} responses sent, {real} real responses; {agree} agreements, {allowed} allowed differences, {} disagreements",
        bad.len()
    );
    if bad.is_empty() {
        return ExitCode::SUCCESS;
    }
    for d in bad {
        eprintln!("roce-sim replay: disagreement: {d}");
    }
    ExitCode::FAILURE
}

fn fuzz_rx(width: usize, frames: u64, seed: Option<u64>, max_payload: usize) -> ExitCode {
    use roce_sim::fuzz::{rx, Config};
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let c = Config {
        width,
        frames,
        seed,
        max_payload,
        batch: 4096,
    };
    eprintln!("roce-sim fuzz rx: W={width}, {frames} frames, seed {seed:#x} (--seed repeats it)");
    let tty = std::io::IsTerminal::is_terminal(&io::stderr());
    let mut next_line = frames / 10;
    let result = rx(&c, |done| {
        if tty {
            eprint!("\r{done} / {frames} frames");
        } else if done >= next_line && done < frames {
            eprintln!("{done} / {frames} frames");
            next_line += frames / 10;
        }
    });
    if tty {
        eprintln!();
    }
    match result {
        Ok(report) => {
            println!("{}", report.table(&c));
            ExitCode::SUCCESS
        }
        Err(d) => {
            eprintln!("roce-sim fuzz rx: W={width} seed {seed:#x}: {d}");
            ExitCode::FAILURE
        }
    }
}

fn fuzz_transport(frames: u64, seed: Option<u64>, qps: u32, mutate: u32) -> ExitCode {
    use roce_sim::transport_fuzz::{transport, Config};
    if qps == 0 {
        eprintln!("roce-sim fuzz transport: error: --qps 0: 1 to 62");
        return ExitCode::from(2);
    }
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let c = Config {
        frames,
        seed,
        qps,
        mutate_permille: mutate,
    };
    eprintln!(
        "roce-sim fuzz transport: {frames} frames, {qps} QPs, {mutate} per mille mutated, seed {seed:#x} (--seed repeats it)"
    );
    let tty = std::io::IsTerminal::is_terminal(&io::stderr());
    let mut next_line = frames / 10;
    let result = transport(&c, |done| {
        if tty {
            eprint!("\r{done} / {frames} frames");
        } else if done >= next_line && done < frames {
            eprintln!("{done} / {frames} frames");
            next_line += frames / 10;
        }
    });
    if tty {
        eprintln!();
    }
    match result {
        Ok(r) => {
            print!("{}", r.text());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("roce-sim fuzz transport: seed {seed:#x}: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

fn at_least(min: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |s| {
        let v = number(s)?;
        if v < min {
            return Err(format!("{v} is below the minimum, {min}"));
        }
        Ok(v)
    }
}

fn emit(json: &std::path::Path, pcap: &std::path::Path, engine: Engine, width: usize) -> ExitCode {
    let text = match std::fs::read_to_string(json) {
        Ok(t) => t,
        Err(e) => return fail(format_args!("cannot read {}: {e}", json.display())),
    };
    let frames = match roce_sim::descriptors::parse_document(&text) {
        Ok(f) => f,
        Err(e) => return fail(format_args!("{}: {e}", json.display())),
    };
    let bytes: Vec<Vec<u8>> = match engine {
        Engine::Model => frames
            .iter()
            .map(|(r, p)| r.to_bytes(p).expect("a parsed descriptor emits"))
            .collect(),
        Engine::Hw => roce_sim::tx::emit_hw(width, &frames),
    };
    let file = match std::fs::File::create(pcap) {
        Ok(f) => f,
        Err(e) => return fail(format_args!("cannot create {}: {e}", pcap.display())),
    };
    let written = (|| -> Result<(), pcap_file::PcapError> {
        let mut w = pcap_file::pcap::PcapWriter::new(BufWriter::new(file))?;
        for (i, f) in bytes.iter().enumerate() {
            let ts = std::time::Duration::from_micros(i as u64);
            w.write_packet(&pcap_file::pcap::PcapPacket::new(ts, f.len() as u32, f))?;
        }
        w.into_writer()
            .flush()
            .map_err(pcap_file::PcapError::IoError)
    })();
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(format_args!("writing {}: {e}", pcap.display())),
    }
}

/// One `--width` serves both blocks (`bench datapath` runs both), so their
/// model widths must be the same list.
const _: () = {
    let (rx, tx) = (roce_sim::rx::WIDTHS, roce_sim::tx::WIDTHS);
    assert!(
        rx.len() == tx.len(),
        "roce_rx and roce_tx model widths differ"
    );
    let mut i = 0;
    while i < rx.len() {
        assert!(rx[i] == tx[i], "roce_rx and roce_tx model widths differ");
        i += 1;
    }
};

/// `--width`: a width with `roce_rx` and `roce_tx` models.
fn parse_width(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(w) if roce_sim::rx::WIDTHS.contains(&w) => Ok(w),
        _ => Err(format!("width must be one of {:?}", roce_sim::rx::WIDTHS)),
    }
}

/// A number, decimal or 0x hex.
fn number(s: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("'{s}' is not a number"))
}

fn num_max(max: u32) -> impl Fn(&str) -> Result<u32, String> + Clone + Send + Sync + 'static {
    move |s| {
        let v = number(s)?;
        if v > u64::from(max) {
            return Err(format!("{v} is out of range 0..={max}"));
        }
        Ok(v as u32)
    }
}

fn below(n: u32) -> impl Fn(&str) -> Result<u32, String> + Clone + Send + Sync + 'static {
    move |s| {
        let v = number(s)?;
        if v >= u64::from(n) {
            return Err(format!("{v} is out of range 0..{n}"));
        }
        Ok(v as u32)
    }
}

fn qp_type(s: &str) -> Result<roce_regs::QpType, String> {
    roce_regs::QpType::ALL
        .iter()
        .find(|t| t.name() == s)
        .copied()
        .ok_or_else(|| {
            let names: Vec<&str> = roce_regs::QpType::ALL.iter().map(|t| t.name()).collect();
            format!("unknown QP type '{s}' (one of {})", names.join(", "))
        })
}

fn access_flags(s: &str) -> Result<u32, String> {
    if s == "none" {
        return Ok(0);
    }
    s.split(',').try_fold(0, |m, name| {
        roce_regs::AccessFlag::ALL
            .iter()
            .find(|f| f.name() == name)
            .map(|f| m | f.value())
            .ok_or_else(|| {
                let names: Vec<&str> = roce_regs::AccessFlag::ALL
                    .iter()
                    .map(|f| f.name())
                    .collect();
                format!(
                    "unknown access flag '{name}' (one of {}, or none)",
                    names.join(", ")
                )
            })
    })
}

fn mac(s: &str) -> Result<[u8; 6], String> {
    let parts: Vec<&str> = s.split(':').collect();
    let bad = || format!("'{s}' is not a MAC address (aa:bb:cc:dd:ee:ff)");
    if parts.len() != 6 {
        return Err(bad());
    }
    let mut m = [0u8; 6];
    for (b, p) in m.iter_mut().zip(parts) {
        *b = u8::from_str_radix(p, 16).map_err(|_| bad())?;
    }
    Ok(m)
}

fn gid(s: &str) -> Result<[u8; 16], String> {
    s.parse::<std::net::Ipv6Addr>()
        .map(|a| a.octets())
        .map_err(|_| format!("'{s}' is not an IPv6 address"))
}

fn mtu(s: &str) -> Result<u32, String> {
    let v = number(s)?;
    u32::try_from(v)
        .ok()
        .and_then(roce_wire::Pmtu::from_bytes)
        .map(|p| u32::from(p.code()))
        .ok_or_else(|| format!("path MTU {v} is not one of 256, 512, 1024, 2048, 4096"))
}

fn bringup(a: &BringupArgs) -> ExitCode {
    use roce_sim::fw::{self, BringUp};
    let b = BringUp {
        qpn: a.qp,
        qp_type: a.qp_type,
        pkey_index: a.pkey_index,
        access_flags: a.access,
        qkey: a.qkey,
        sgid_index: a.sgid_index,
        dmac: a.dmac,
        dgid: a.dgid,
        path_mtu: a.mtu,
        dest_qpn: a.dest_qp,
        rq_psn: a.rq_psn,
        max_dest_rd_atomic: a.max_dest_rd_atomic,
        min_rnr_timer: a.min_rnr_timer,
        sq_psn: a.sq_psn,
        timeout: a.timeout,
        retry_cnt: a.retry_cnt,
        rnr_retry: a.rnr_retry,
        max_rd_atomic: a.max_rd_atomic,
        pd: a.pd,
    };
    let (ram, entry, from) = match &a.elf {
        Some(p) => {
            let image = std::fs::read(p)
                .map_err(|e| format!("cannot read {}: {e}", p.display()))
                .and_then(|elf| {
                    Ok((
                        fw::elf::ram_image(&elf, fw::elf::RAM_BYTES as usize)?,
                        fw::elf::entry(&elf),
                    ))
                });
            match image {
                Ok((r, e)) => (r, e, p.display().to_string()),
                Err(e) => {
                    eprintln!("roce-sim: error: --elf: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        None => match fw::image() {
            Ok((r, e)) => (r.clone(), *e, "roce-fw (built into target/fw-elf)".into()),
            Err(e) => return fail(e),
        },
    };
    let mut out = String::new();
    let result = match a.core {
        Core::Picorv32 => {
            match fw::picorv32::PicoSoc::new(&ram, entry, 1, roce_sim::axil::Timing::FULL_RATE) {
                Ok(mut s) => {
                    println!(
                        "core: PicoRV32 RTL (Verilator model FwSoc) + csr_w256; firmware: {from}"
                    );
                    fw::demo::run(&mut s, &b, a.pmtu_cap, &mut out)
                }
                Err(e) => Err(e),
            }
        }
        Core::Iss => {
            let mut s = fw::iss::IssSoc::new(&ram, entry, 1, roce_sim::axil::Timing::FULL_RATE);
            println!("core: rvsim RV32IMC ISS + csr_w256 (Verilator); firmware: {from}");
            fw::demo::run(&mut s, &b, a.pmtu_cap, &mut out)
        }
    };
    print!("{out}");
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => fail(e),
    }
}
