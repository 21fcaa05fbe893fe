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
        /// Data width of the hardware parser (`--engine hw`): 64 or 512.
        #[arg(long, default_value_t = 64, value_parser = parse_width)]
        width: usize,
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
        /// Data width of the hardware builder (`--engine hw`): 64 or 512.
        #[arg(long, default_value_t = 64, value_parser = parse_width)]
        width: usize,
    },
    /// Simulated datapath benchmarks.
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
}

#[derive(Subcommand)]
enum BenchWhat {
    /// Back-to-back frames of 64, 256, 1024, 4096 and 9000 bytes through the
    /// receive parser and the frame builder: cycles per frame against
    /// ceil(len / (W/8)), stalls, latency.
    Datapath {
        /// Data width: 64 or 512.
        #[arg(long, default_value_t = 64, value_parser = parse_width)]
        width: usize,
    },
}

#[derive(Copy, Clone, ValueEnum)]
enum Engine {
    /// The roce-wire software model.
    Model,
    /// The hardware (roce_rx to parse, roce_tx to emit), simulated by Verilator.
    Hw,
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
        Command::Emit {
            json,
            pcap,
            engine,
            width,
        } => emit(&json, &pcap, engine, width),
        Command::Bench {
            what: BenchWhat::Datapath { width },
        } => {
            println!("{}", roce_sim::rx::bench(width));
            println!("{}", roce_sim::tx::bench(width));
            ExitCode::SUCCESS
        }
    }
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

/// `--width`: a width with `roce_rx` and `roce_tx` models.
fn parse_width(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(w) if roce_sim::rx::WIDTHS.contains(&w) => Ok(w),
        _ => Err(format!("width must be one of {:?}", roce_sim::rx::WIDTHS)),
    }
}
