//! `roce-sim parse` throughput on a large capture (issue 3 goal: ≥ 100 MB/s
//! of frames).
//!
//! Writes two seeded captures of random valid frames (every opcode,
//! IPv4/IPv6, VLAN) with 5% of them corrupted, to `target/bench-data/` once:
//! `mixed` (payloads 0..=4096 with the MTU edges, about 1.1 KB per frame)
//! and `small` (payloads 0..=32, about 90 B per frame: the per-frame cost).
//! For each it measures:
//!
//! - `library`: `roce_sim::capture::parse_capture` from the file into a
//!   sink, JSON formatting included;
//! - `cli`: the `roce-sim` binary of this build profile with stdout to
//!   /dev/null (the command users run).
//!
//! `cargo bench -p roce-sim --bench parse [-- MEGABYTES]` (default 512).
//! Wall-clock figures: run on an idle machine and take the median.

use pcap_file::pcap::{PcapPacket, PcapWriter};
use roce_sim::capture::{parse_capture, CaptureReader};
use roce_sim::traffic::FrameGen;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn target_dir() -> PathBuf {
    // benches run from the package directory; the workspace target is one up.
    let exe = std::env::current_exe().expect("bench path");
    exe.ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "target"))
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target"))
}

fn write_capture(path: &Path, megabytes: u64, max_payload: usize) -> (u64, u64) {
    let mut gen = FrameGen::new(0x9A85E);
    gen.max_payload = max_payload;
    let file = std::fs::File::create(path).expect("create capture");
    let mut w = PcapWriter::new(BufWriter::with_capacity(1 << 20, file)).expect("pcap header");
    let (mut frames, mut bytes) = (0u64, 0u64);
    while bytes < megabytes << 20 {
        let (repr, payload) = gen.frame();
        let mut f = repr.to_bytes(&payload).expect("emit");
        if gen.rng().chance(50) {
            let at = gen.rng().below(f.len() as u64) as usize;
            f[at] ^= 1 + gen.rng().below(255) as u8;
        }
        w.write_packet(&PcapPacket::new(
            Duration::from_nanos(frames),
            f.len() as u32,
            &f,
        ))
        .expect("write frame");
        frames += 1;
        bytes += f.len() as u64;
    }
    (frames, bytes)
}

fn main() {
    let megabytes: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(512);
    for (name, max_payload) in [("mixed", 4096), ("small", 32)] {
        bench(name, megabytes, max_payload);
    }
}

fn bench(name: &str, megabytes: u64, max_payload: usize) {
    let dir = target_dir().join("bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("parse-{name}-{megabytes}M.pcap"));
    if !path.exists() {
        let (frames, bytes) = write_capture(&path, megabytes, max_payload);
        eprintln!("wrote {} ({frames} frames, {bytes} bytes)", path.display());
    }

    let mut lib = Vec::new();
    let mut cli = Vec::new();
    let mut summary = None;
    for _ in 0..3 {
        let t = Instant::now();
        let mut cap = CaptureReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let stats = parse_capture(&mut cap, &mut std::io::sink()).unwrap();
        let s = t.elapsed().as_secs_f64();
        lib.push(stats.bytes as f64 / s / 1e6);
        summary = Some(stats);

        let bin = target_dir()
            .join(if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            })
            .join("roce-sim");
        if bin.exists() {
            let t = Instant::now();
            let st = std::process::Command::new(&bin)
                .args(["parse", "--pcap"])
                .arg(&path)
                .stdout(std::process::Stdio::null())
                .status()
                .expect("run roce-sim");
            assert!(st.success());
            let s = t.elapsed().as_secs_f64();
            cli.push(summary.as_ref().unwrap().bytes as f64 / s / 1e6);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    let s = summary.unwrap();
    println!(
        "{name}: {} frames, {:.1} MB, {} accepted, mean frame {:.0} B",
        s.frames,
        s.bytes as f64 / 1e6,
        s.accepted,
        s.bytes as f64 / s.frames as f64
    );
    println!(
        "library  {:7.1} MB/s of frames (median of 3: {:?})",
        median(&mut lib).unwrap(),
        lib.iter().map(|x| x.round()).collect::<Vec<_>>()
    );
    match median(&mut cli) {
        Some(m) => println!(
            "cli      {m:7.1} MB/s of frames (median of 3: {:?})",
            cli.iter().map(|x| x.round()).collect::<Vec<_>>()
        ),
        None => println!("cli      (build the roce-sim binary of this profile first)"),
    }
}
