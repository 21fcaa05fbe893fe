//! `roce-sim run` end to end, as a user runs it: the default scenario
//! passes and its report, JSON and pcap agree with each other and with
//! roce-wire (every captured frame parses with a valid ICRC); every
//! workload runs on hardware and on the model; a message lost beyond
//! `retry_cnt` fails the run naming the message; bad arguments exit 2
//! naming the argument. `roce-sim sweep` writes its table, JSON and charts.
//! Wireshark (tshark, installed by scripts/setup) decodes every captured
//! frame as RoCE v2 without an error.

use roce_wire::Frame;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn roce_sim(args: &[&str]) -> Output {
    sub("run", args)
}

fn sub(cmd: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roce-sim"))
        .arg(cmd)
        .args(args)
        .output()
        .expect("run roce-sim")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("run_cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn ok(args: &[&str]) -> String {
    let o = roce_sim(args);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "roce-sim run {args:?} failed: {}\n{out}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

fn counter(j: &Value, nic: usize, name: &str) -> u64 {
    j["nics"][nic]["counters"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("counter {name} in {}", j["nics"][nic]))
}

#[test]
fn default_run_reports_and_captures() {
    let (json, pcap) = (scratch("default.json"), scratch("default.pcap"));
    let out = ok(&[
        "--quiet",
        "--json",
        json.to_str().unwrap(),
        "--pcap",
        pcap.to_str().unwrap(),
    ]);
    print!("{out}");
    assert!(out.contains("BW [Gb/s @ 156.25 MHz]"), "{out}");
    let j: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    // The default: 4 KiB WRITEs, 500 per QP on 2 QPs, 1 % loss.
    assert_eq!(j["messages"], 1000);
    assert_eq!(j["bytes"], 1000 * 4096);
    let (bytes, cycles) = (j["bytes"].as_f64().unwrap(), j["cycles"].as_f64().unwrap());
    let bpc = j["bytes_per_cycle"].as_f64().unwrap();
    assert!((bpc - bytes / cycles).abs() < 1e-9);
    assert!(bpc <= 8.0, "no faster than the line: {bpc}");
    assert!(
        (j["gbps"].as_f64().unwrap() - bpc * 8.0 * 156.25 / 1000.0).abs() < 1e-9,
        "Gb/s from bytes per cycle at the clock"
    );
    let lat = &j["latency_cycles"];
    assert!(
        lat["p50"].as_u64() <= lat["p99"].as_u64() && lat["p99"].as_u64() <= lat["max"].as_u64()
    );
    let links = j["links"].as_array().unwrap();
    assert_eq!(links.len(), 2);
    let sum = |k: &str| links.iter().map(|l| l[k].as_u64().unwrap()).sum::<u64>();
    let dropped = sum("dropped");
    assert!(dropped > 0, "1 % of about 2000 frames dropped");
    // WRITEs lost on the way to B are sent again; lost ACKs are covered
    // by the next one.
    let to_b = links.iter().find(|l| l["to"] == "B").unwrap();
    if to_b["dropped"].as_u64().unwrap() > 0 {
        assert!(
            counter(&j, 0, "req_retx") > 0,
            "the loss was repaired by retransmission"
        );
    }
    assert_eq!(j["nics"][0]["engine"], "hw");
    // The capture: both directions as sent, every frame valid RoCE.
    let sent = sum("frames");
    let mut r = pcap_file::pcap::PcapReader::new(std::fs::File::open(&pcap).unwrap()).unwrap();
    let (mut n, mut last) = (0u64, std::time::Duration::ZERO);
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        Frame::parse(&p.data).unwrap_or_else(|e| panic!("captured frame {n}: {e:?}"));
        assert!(p.timestamp >= last, "frames in time order");
        last = p.timestamp;
        n += 1;
    }
    assert_eq!(n, sent, "every frame sent is in the capture");
}

#[test]
fn every_workload_on_hardware_and_model() {
    let mut retx_all = 0;
    for (args, msgs) in [
        (&["--test", "send", "--a", "model"][..], 2 * 60),
        (&["--test", "send", "--imm", "--b", "model"][..], 2 * 60),
        (
            &[
                "--test", "write", "--imm", "--size", "1500", "--pmtu", "1024",
            ][..],
            2 * 60,
        ),
        (
            &["--test", "read", "--size", "5000", "--pmtu", "2048"][..],
            2 * 60,
        ),
        (&["--test", "atomic-fa", "--qps", "3"][..], 3 * 60),
        (&["--test", "atomic-cs", "--b", "model"][..], 2 * 60),
        (
            &[
                "--test", "mixed", "--bidir", "--size", "700", "--pmtu", "256",
            ][..],
            4 * 60,
        ),
    ] {
        let json = scratch("w.json");
        let mut a = vec![
            "--quiet",
            "--iters",
            "60",
            "--drop",
            "1",
            "--json",
            json.to_str().unwrap(),
        ];
        a.extend_from_slice(args);
        ok(&a);
        let j: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(j["messages"], msgs, "{args:?}");
        // 1 % loss: something was lost.
        let lost: u64 = j["links"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["dropped"].as_u64().unwrap())
            .sum();
        let retx: u64 = (0..j["nics"].as_array().unwrap().len())
            .map(|n| counter(&j, n, "req_retx"))
            .sum();
        assert!(lost > 0, "{args:?}: 1 % loss lost nothing");
        retx_all += retx;
    }
    // Over all of them, lost requests were sent again (a run may lose only
    // ACKs, which later ACKs cover).
    assert!(retx_all > 0, "retransmissions");
}

#[test]
fn a_message_lost_beyond_retry_fails_the_run_naming_it() {
    let o = roce_sim(&[
        "--quiet",
        "--drop",
        "50",
        "--timeout",
        "1",
        "--iters",
        "100",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("FAILED") && err.contains("QP") && err.contains("message"),
        "{err}"
    );
}

#[test]
fn bad_arguments_exit_2_naming_them() {
    for (args, names) in [
        (&["--qps", "0"][..], "--qps"),
        (&["--qps", "65"][..], "--qps"),
        (&["--drop", "70"][..], "--drop"),
        (&["--test", "bogus"][..], "--test"),
        (&["--pmtu", "1000"][..], "--pmtu"),
        (&["--test", "atomic-fa", "--size", "16"][..], "--size"),
        (&["--inline"][..], "--inline"),
        (
            &["--inline", "--test", "read", "--size", "64"][..],
            "--inline",
        ),
        (&["--timeout", "0"][..], "--timeout"),
        (&["--bandwidth", "0"][..], "--bandwidth"),
        (&["--depth", "4", "--recv-depth", "9"][..], "--recv-depth"),
        (&["--nics", "3"][..], "--nics"),
        (&["--nics", "17", "--pattern", "incast"][..], "--nics"),
        (
            &["--nics", "16", "--pattern", "incast", "--qps", "5"][..],
            "--qps",
        ),
        (
            &["--json", "/nonexistent-dir/x.json"][..],
            "/nonexistent-dir/x.json",
        ),
        (
            &["--trace", "x.vcd", "--a", "model", "--b", "model"][..],
            "--trace",
        ),
    ] {
        let o = roce_sim(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(names), "{args:?}: {err}");
    }
}

#[test]
fn sweep_writes_table_json_and_charts() {
    let dir = scratch("sweep");
    let _ = std::fs::remove_dir_all(&dir);
    let o = sub(
        "sweep",
        &[
            "--param",
            "drop",
            "--values",
            "0,3",
            "--out",
            dir.to_str().unwrap(),
            "--iters",
            "40",
            "--qps",
            "2",
            "--quiet",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(dir.join("sweep.md")).unwrap();
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| 0 |") || l.starts_with("| 3 |"))
        .collect();
    assert_eq!(rows.len(), 2, "{md}");
    let j: Value = serde_json::from_slice(&std::fs::read(dir.join("sweep.json")).unwrap()).unwrap();
    let pts = j["points"].as_array().unwrap();
    assert_eq!(pts.len(), 2);
    assert!(
        pts[0]["report"]["links"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["dropped"] == 0),
        "no loss at 0 %"
    );
    assert!(
        pts[1]["report"]["nics"][0]["counters"]["req_retx"]
            .as_u64()
            .unwrap()
            > 0,
        "3 % loss repaired"
    );
    assert!(std::fs::read_to_string(dir.join("sweep.svg"))
        .unwrap()
        .contains("<svg"));
    assert_eq!(
        &std::fs::read(dir.join("sweep.png")).unwrap()[..4],
        b"\x89PNG"
    );
    for (args, names) in [
        (
            &["--param", "qps", "--values", "1.5", "--out", "x"][..],
            "--values",
        ),
        (
            &["--param", "drop", "--values", "60", "--out", "x"][..],
            "--values",
        ),
        (
            &["--param", "bogus", "--values", "1", "--out", "x"][..],
            "--param",
        ),
        (&["--param", "drop", "--out", "x"][..], "--values"),
        (
            &[
                "--param", "drop", "--values", "1", "--out", "x", "--pcap", "y",
            ][..],
            "--pcap",
        ),
    ] {
        let o = sub("sweep", args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(names), "{args:?}: {err}");
    }
}

/// Incast through the switch: four senders into one port fill its queue,
/// frames over the threshold are marked CE, and the receiver (the model,
/// a congestion notification point) answers with CNPs the hardware senders
/// count as dropped by type (no reaction point yet).
#[test]
fn incast_marks_ecn_at_the_congested_port() {
    let json = scratch("incast.json");
    ok(&[
        "--quiet",
        "--nics",
        "5",
        "--pattern",
        "incast",
        "--b",
        "model",
        "--qps",
        "2",
        "--iters",
        "100",
        "--drop",
        "0",
        "--ecn-threshold",
        "20000",
        "--json",
        json.to_str().unwrap(),
    ]);
    let j: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let links = j["links"].as_array().unwrap();
    assert_eq!(links.len(), 5);
    assert_eq!(links[0]["to"], "A");
    assert!(
        links[0]["ecn_marked"].as_u64().unwrap() > 0,
        "the incast port marked CE"
    );
    for l in &links[1..] {
        assert_eq!(l["ecn_marked"], 0, "uncongested ports mark nothing: {l}");
    }
    assert!(counter(&j, 0, "cnp_sent") > 0, "the receiver sent CNPs");
    assert_eq!(j["messages"], 4 * 2 * 100);
}

/// Wireshark's own dissectors judge the capture of a run with every verb in
/// both directions: each frame is RoCE v2 (RRoCE) with a BTH opcode, and
/// none is malformed or raises an expert warning. The upper protocols
/// whose heuristics look inside InfiniBand payloads (RPC over RDMA, SMB
/// Direct, ...) are off: our payloads are random bytes, not theirs.
#[test]
fn wireshark_decodes_every_captured_frame() {
    let pcap = scratch("wireshark.pcap");
    let json = scratch("wireshark.json");
    ok(&[
        "--quiet",
        "--test",
        "mixed",
        "--bidir",
        "--iters",
        "40",
        "--size",
        "3000",
        "--pmtu",
        "1024",
        "--drop",
        "0",
        "--pcap",
        pcap.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let tshark = |args: &[&str]| -> String {
        let o = Command::new("tshark")
            .args(args)
            .output()
            .expect("tshark (scripts/setup installs it)");
        assert!(
            o.status.success(),
            "tshark {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let mut off = Vec::new();
    for l in tshark(&["-G", "heuristic-decodes"]).lines() {
        let f: Vec<&str> = l.split('\t').collect();
        // Upper protocols only: not the EtherType or InfiniBand's own.
        if f.len() >= 2
            && f[0] == "infiniband.payload"
            && f[1] != "ethertype"
            && !f[1].starts_with("infiniband")
        {
            off.push("--disable-protocol".to_string());
            off.push(f[1].to_string());
        }
    }
    assert!(off.len() >= 2, "tshark lists InfiniBand payload heuristics");
    let mut args: Vec<&str> = vec!["-r", pcap.to_str().unwrap()];
    args.extend(off.iter().map(String::as_str));
    let mut fields = args.clone();
    fields.extend([
        "-T",
        "fields",
        "-e",
        "infiniband.bth.opcode",
        "-e",
        "_ws.malformed",
        "-e",
        "_ws.expert",
    ]);
    let out = tshark(&fields);
    let j: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let sent: u64 = j["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["frames"].as_u64().unwrap())
        .sum();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len() as u64, sent, "one line per captured frame");
    let mut opcodes = std::collections::BTreeSet::new();
    for (i, l) in lines.iter().enumerate() {
        let f: Vec<&str> = l.split('\t').collect();
        assert!(
            !f[0].is_empty(),
            "frame {}: no BTH opcode decoded: {l:?}",
            i + 1
        );
        assert!(
            f.iter().skip(1).all(|x| x.is_empty()),
            "frame {}: malformed or expert info: {l:?}",
            i + 1
        );
        opcodes.insert(f[0].to_string());
    }
    // SEND, WRITE and READ request/response kinds, ACKs and atomics.
    assert!(opcodes.len() >= 15, "opcodes seen: {opcodes:?}");
}

/// A slow responder host (two receive WQEs, posted again 3000 cycles after
/// each completion) against eight SENDs in flight: the responder answers
/// RNR NAK, the requester waits out the RNR timer and retries, and every
/// SEND still lands, on every pairing of hardware and model.
#[test]
fn rnr_naks_when_the_host_posts_receives_late() {
    for (a, b) in [("hw", "hw"), ("model", "hw"), ("hw", "model")] {
        let json = scratch("rnr.json");
        ok(&[
            "--quiet",
            "--test",
            "send",
            "--size",
            "2000",
            "--pmtu",
            "1024",
            "--iters",
            "60",
            "--drop",
            "0",
            "--recv-depth",
            "2",
            "--recv-delay",
            "3000",
            "--a",
            a,
            "--b",
            b,
            "--json",
            json.to_str().unwrap(),
        ]);
        let j: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(j["messages"], 2 * 60);
        assert!(counter(&j, 1, "rsp_rnr_nak") > 0, "{a}/{b}: RNR NAKs sent");
        let got = if a == "hw" {
            counter(&j, 0, "req_rnr_nak")
        } else {
            counter(&j, 0, "rnr_nak_received")
        };
        assert!(got > 0, "{a}/{b}: RNR NAKs received");
    }
}
