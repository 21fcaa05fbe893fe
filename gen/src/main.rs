//! `roce-gen`: generate Verilog (and manifests, synthesis shells) for the
//! roce-hw blocks. Needs only Rust.

use clap::{Parser, Subcommand};
use roce_hw::blocks::{generate, BLOCKS};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "roce-gen",
    version,
    about = "Generate Verilog for roce-hw blocks, and the register map"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the blocks and their widths.
    List,
    /// Write <top>.v and <top>.json (and <top>_shell.v with --shell).
    Verilog {
        /// Block name (see `roce-gen list`).
        #[arg(long)]
        block: String,
        /// Stream data width in bits.
        #[arg(long)]
        width: usize,
        /// Output directory (created if missing).
        #[arg(long)]
        out: PathBuf,
        /// Also write a synthesis shell (scan chains around the block).
        #[arg(long)]
        shell: bool,
    },
    /// Write the register map (crate roce-regs) as Markdown, a C header or JSON.
    Regs {
        /// Output format.
        #[arg(long, value_enum)]
        format: roce_gen::regs::Format,
        /// Output file (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::List => {
            for b in BLOCKS {
                let widths: Vec<String> = b.widths.iter().map(|w| w.to_string()).collect();
                println!(
                    "{:<14} widths {:<16} {}",
                    b.name,
                    widths.join(","),
                    b.summary
                );
            }
            ExitCode::SUCCESS
        }
        Command::Regs { format, out } => {
            let text = roce_gen::regs::render(format);
            match out {
                None => {
                    print!("{text}");
                    ExitCode::SUCCESS
                }
                Some(path) => match std::fs::write(&path, text) {
                    Ok(()) => {
                        println!("{}", path.display());
                        ExitCode::SUCCESS
                    }
                    Err(e) => {
                        eprintln!("roce-gen: error: cannot write {}: {e}", path.display());
                        ExitCode::FAILURE
                    }
                },
            }
        }
        Command::Verilog {
            block,
            width,
            out,
            shell,
        } => {
            let generated = match generate(&block, width) {
                Ok(g) => g,
                Err(e) => {
                    eprintln!("roce-gen: error: {e}");
                    return ExitCode::from(2);
                }
            };
            match roce_gen::write_outputs(&generated, &out, shell) {
                Ok(files) => {
                    for f in files {
                        println!("{}", f.display());
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("roce-gen: error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
