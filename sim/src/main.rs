//! `roce-sim`: decode captures with the RoCE v2 model (and, as the hardware
//! blocks land, with their Verilator models).

use clap::{Parser, Subcommand, ValueEnum};
use roce_sim::capture::{parse_capture, CaptureReader, ParseError};
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
    },
}

#[derive(Copy, Clone, ValueEnum)]
enum Engine {
    /// The roce-wire software model.
    Model,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Parse {
            pcap,
            engine: Engine::Model,
            stats,
        } => parse(&pcap, stats),
    }
}

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("roce-sim: error: {msg}");
    ExitCode::FAILURE
}

fn parse(path: &std::path::Path, print_stats: bool) -> ExitCode {
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
    let result = parse_capture(&mut capture, &mut out);
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
