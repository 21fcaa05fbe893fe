//! `roce-sim emit`: descriptors taken from the reference frames are built by
//! the model and by the Verilated TX path at 64, 128, 256 and 512 bits;
//! all five pcaps are identical and equal the reference frames byte for byte, and
//! `roce-sim parse` (model and hardware) reads them back to the same
//! fields. Bad descriptor files get an error naming the frame and field.

use pcap_file::pcap::PcapReader;
use roce_sim::descriptors::to_json;
use roce_wire::Frame;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const JSON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/roce_v2.json");

fn roce_sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roce-sim"))
        .args(args)
        .output()
        .expect("run roce-sim")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("emit_cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn read_pcap(path: &Path) -> Vec<Vec<u8>> {
    let mut r = PcapReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut v = Vec::new();
    while let Some(p) = r.next_packet() {
        v.push(p.unwrap().data.into_owned());
    }
    v
}

/// The accepted reference frames as a RoCE v2 sender produces them: UDP
/// checksum 0. (Seven of them carry one; it is ICRC-masked, so zeroing it
/// leaves the frame valid.)
fn reference() -> Vec<Vec<u8>> {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(JSON).unwrap()).unwrap();
    doc["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let h = f["hex"].as_str().unwrap();
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect::<Vec<u8>>()
        })
        .filter_map(|mut b| {
            let r = Frame::parse(&b).ok()?.repr;
            let at = r.eth.header_len() + r.ip.header_len() + 6;
            b[at..at + 2].fill(0);
            Frame::parse(&b).expect("still valid");
            Some(b)
        })
        .collect()
}

#[test]
fn model_and_hardware_build_the_reference_frames() {
    let frames = reference();
    assert_eq!(frames.len(), 71);
    let descs: Vec<Value> = frames
        .iter()
        .map(|b| {
            let f = Frame::parse(b).unwrap();
            to_json(&f.repr, f.payload)
        })
        .collect();
    let json_path = scratch("reference.json");
    std::fs::write(&json_path, json!({ "frames": descs }).to_string()).unwrap();
    let j = json_path.to_str().unwrap();
    let mut outputs = Vec::new();
    for (name, extra) in [
        ("model", vec!["--engine", "model"]),
        ("hw64", vec!["--engine", "hw", "--width", "64"]),
        ("hw128", vec!["--engine", "hw", "--width", "128"]),
        ("hw256", vec!["--engine", "hw", "--width", "256"]),
        ("hw512", vec!["--engine", "hw", "--width", "512"]),
    ] {
        let pcap = scratch(&format!("{name}.pcap"));
        let mut args = vec!["emit", "--json", j, "--pcap", pcap.to_str().unwrap()];
        args.extend(extra);
        let out = roce_sim(&args);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = read_pcap(&pcap);
        assert_eq!(got.len(), frames.len(), "{name}");
        for (i, (g, want)) in got.iter().zip(&frames).enumerate() {
            assert_eq!(g, want, "{name}: frame {}", i + 1);
        }
        // ...and both parsers read the built frames back to the descriptors.
        for engine in ["model", "hw"] {
            let parsed = roce_sim(&[
                "parse",
                "--engine",
                engine,
                "--pcap",
                pcap.to_str().unwrap(),
            ]);
            assert!(parsed.status.success());
            let text = String::from_utf8(parsed.stdout).unwrap();
            for (line, b) in text.lines().zip(&frames) {
                let v: Value = serde_json::from_str(line).unwrap();
                let f = Frame::parse(b).unwrap();
                assert_eq!(v["verdict"], "accept", "{name}/{engine}: {line}");
                assert_eq!(v["psn"], f.repr.bth.psn.value(), "{name}/{engine}: {line}");
                assert_eq!(v["payload_len"], f.payload.len(), "{name}/{engine}: {line}");
            }
        }
        outputs.push(got);
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
}

fn fails_with(args: &[&str], needle: &str) {
    let out = roce_sim(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(needle), "stderr {err:?} lacks {needle:?}");
}

#[test]
fn bad_descriptor_files() {
    let out = scratch("never.pcap");
    let o = out.to_str().unwrap();
    fails_with(
        &["emit", "--json", "/nonexistent.json", "--pcap", o],
        "cannot read /nonexistent.json",
    );
    let bad = scratch("bad.json");
    std::fs::write(&bad, "{\"frames\": [").unwrap();
    fails_with(
        &["emit", "--json", bad.to_str().unwrap(), "--pcap", o],
        "not JSON",
    );
    std::fs::write(&bad, r#"{"frames": [{"dst_mac": "02:00:00:00:00:0b", "src_mac": "02:00:00:00:00:0a", "dst_ip": "10.0.0.2", "src_ip": "10.0.0.1", "opcode": 17, "destqp": 1, "psn": 2}]}"#).unwrap();
    fails_with(
        &["emit", "--json", bad.to_str().unwrap(), "--pcap", o],
        "frame 1: missing \"aeth\"",
    );
    fails_with(
        &[
            "emit",
            "--json",
            bad.to_str().unwrap(),
            "--pcap",
            o,
            "--width",
            "96",
        ],
        "width must be one of",
    );
    assert!(
        !out.exists(),
        "no pcap is written for a bad descriptor file"
    );
}
