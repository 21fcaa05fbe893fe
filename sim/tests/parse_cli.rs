//! `roce-sim parse` end to end: the shared reference capture as pcap and as
//! pcapng gives exactly the expected line per frame; bad files get a clear
//! error and a non-zero exit.

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;
use serde_json::Value;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PCAP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/roce_v2.pcap");
const JSON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/roce_v2.json");

fn roce_sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roce-sim"))
        .args(args)
        .output()
        .expect("run roce-sim")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("parse_cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The expected line of every frame, from the vectors' JSON.
fn expected() -> Vec<Value> {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(JSON).unwrap()).unwrap();
    doc["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let mut m = serde_json::Map::new();
            m.insert("frame".into(), v["frame"].clone());
            m.insert("verdict".into(), v["expect"]["verdict"].clone());
            m.insert("reason".into(), v["expect"]["reason"].clone());
            if let Some(f) = v["expect"]["fields"].as_object() {
                m.extend(f.clone());
            }
            Value::Object(m)
        })
        .collect()
}

fn check_lines(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let got: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    let want = expected();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
}

fn frames_of_reference() -> Vec<Vec<u8>> {
    let mut r = PcapReader::new(std::fs::File::open(PCAP).unwrap()).unwrap();
    let mut v = Vec::new();
    while let Some(p) = r.next_packet() {
        v.push(p.unwrap().data.into_owned());
    }
    v
}

#[test]
fn reference_pcap_gives_the_expected_lines() {
    check_lines(&roce_sim(&["parse", "--pcap", PCAP]));
    check_lines(&roce_sim(&["parse", "--engine", "model", "--pcap", PCAP]));
}

#[test]
fn reference_as_pcapng_gives_the_same_lines() {
    let path = scratch("reference.pcapng");
    let mut w = PcapNgWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    w.write_pcapng_block(InterfaceDescriptionBlock {
        linktype: DataLink::ETHERNET,
        snaplen: 0,
        options: vec![],
    })
    .unwrap();
    for (i, f) in frames_of_reference().iter().enumerate() {
        w.write_pcapng_block(EnhancedPacketBlock {
            interface_id: 0,
            timestamp: std::time::Duration::from_micros(i as u64),
            original_len: f.len() as u32,
            data: Cow::Borrowed(f),
            options: vec![],
        })
        .unwrap();
    }
    drop(w);
    check_lines(&roce_sim(&["parse", "--pcap", path.to_str().unwrap()]));
}

#[test]
fn stats_count_every_reason() {
    let out = roce_sim(&["parse", "--stats", "--pcap", PCAP]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("83 frames"), "{err}");
    assert!(err.contains("71 accepted"), "{err}");
    assert!(err.contains("bad-icrc         5"), "{err}");
}

fn assert_fails(out: &Output, needle: &str) {
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(needle), "stderr {err:?} lacks {needle:?}");
}

#[test]
fn missing_file() {
    assert_fails(
        &roce_sim(&["parse", "--pcap", "/nonexistent/x.pcap"]),
        "cannot open /nonexistent/x.pcap",
    );
}

#[test]
fn not_a_capture() {
    let path = scratch("text.pcap");
    std::fs::write(&path, "hello, world\n").unwrap();
    assert_fails(
        &roce_sim(&["parse", "--pcap", path.to_str().unwrap()]),
        "not a pcap or pcapng file",
    );
    let empty = scratch("empty.pcap");
    std::fs::write(&empty, "").unwrap();
    assert_fails(
        &roce_sim(&["parse", "--pcap", empty.to_str().unwrap()]),
        "not a pcap or pcapng file",
    );
}

/// A capture cut in the middle of frame 10: frames 1..=9 are printed, then
/// an error that names frame 10, and a non-zero exit.
#[test]
fn truncated_capture_names_the_frame() {
    let bytes = std::fs::read(PCAP).unwrap();
    let frames = frames_of_reference();
    let cut = 24 + frames[..9].iter().map(|f| 16 + f.len()).sum::<usize>() + 20;
    let path = scratch("cut.pcap");
    std::fs::write(&path, &bytes[..cut]).unwrap();
    let out = roce_sim(&["parse", "--pcap", path.to_str().unwrap()]);
    assert_fails(&out, "frame 10");
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 9);
}

#[test]
fn other_link_type_is_refused() {
    let path = scratch("raw.pcap");
    let header = PcapHeader {
        datalink: DataLink::RAW,
        ..Default::default()
    };
    let mut w = PcapWriter::with_header(std::fs::File::create(&path).unwrap(), header).unwrap();
    w.write_packet(&PcapPacket::new(Default::default(), 4, &[0x45, 0, 0, 4]))
        .unwrap();
    drop(w);
    assert_fails(
        &roce_sim(&["parse", "--pcap", path.to_str().unwrap()]),
        "is not Ethernet",
    );
}

#[test]
fn bad_arguments() {
    assert_fails(&roce_sim(&["parse"]), "--pcap");
    assert_fails(
        &roce_sim(&["parse", "--pcap", PCAP, "--engine", "rtl"]),
        "invalid value 'rtl'",
    );
    assert_fails(&roce_sim(&["frobnicate"]), "unrecognized subcommand");
}
