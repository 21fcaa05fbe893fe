//! `roce-sim replay` end to end on the real rxe capture
//! (`../shared/captures/rxe_v4.pcap`): the whole capture agrees; the same
//! capture with other PSNs and QPNs (one conversation across the 24-bit
//! PSN wrap) and over IPv6 agrees; a capture with a mutated or missing
//! response is refused naming the frame; bad input gets a clear error.

use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};
use roce_wire::{Frame, IpRepr, Ipv6Repr};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

const RXE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/captures/rxe_v4.pcap"
);

/// Frames our responders send for rxe_v4.pcap, and the real responses.
const RESPONSES: usize = 47;

fn roce_sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roce-sim"))
        .args(args)
        .output()
        .expect("run roce-sim")
}

fn replay(path: &Path) -> Output {
    roce_sim(&["replay", "--pcap", path.to_str().unwrap()])
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("replay_cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The capture's frames with their timestamps.
fn rxe_frames() -> Vec<(Duration, Vec<u8>)> {
    assert!(
        Path::new(RXE).exists(),
        "{RXE} is missing: the shared captures sit beside the clone"
    );
    let mut r = PcapReader::new(std::fs::File::open(RXE).unwrap()).unwrap();
    let mut v = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        v.push((p.timestamp, p.data.into_owned()));
    }
    v
}

fn write_pcap(name: &str, frames: &[(Duration, Vec<u8>)]) -> PathBuf {
    let path = scratch(name);
    let mut w = PcapWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    for (ts, f) in frames {
        w.write_packet(&PcapPacket::new(*ts, f.len() as u32, f))
            .unwrap();
    }
    path
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn lines(o: &Output) -> Vec<Value> {
    String::from_utf8(o.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// Exit 0, every line paired with a real response and none differing.
fn assert_clean(o: &Output, ip: u64) -> Vec<Value> {
    let err = stderr(o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("8 conversations, 11 responders"), "{err}");
    assert!(
        err.contains(&format!(
            "67 requests fed, {RESPONSES} responses sent, {RESPONSES} real responses; {RESPONSES} agreements, 0 allowed differences, 0 disagreements"
        )),
        "{err}"
    );
    let v = lines(o);
    assert_eq!(v.len(), RESPONSES);
    for (k, l) in v.iter().enumerate() {
        assert_eq!(l["frame"], k as u64 + 1);
        assert_eq!(l["verdict"], "accept");
        assert_eq!(l["ip"], ip);
        assert!(l["in_reply_to"].as_u64().unwrap() < l["capture_frame"].as_u64().unwrap());
        assert!(
            l.get("differs").is_none() && l.get("allowed").is_none(),
            "{l}"
        );
    }
    v
}

#[test]
fn rxe_capture_replays_with_no_disagreement() {
    let o = replay(Path::new(RXE));
    let v = assert_clean(&o, 4);
    // Spot checks against the capture (frame numbers from `roce-sim parse`):
    // the four ACKs of test 1's retransmitted message, one per duplicate
    // packet, and the first fetch-add's original value.
    let acks: Vec<u64> = v
        .iter()
        .filter(|l| l["conversation"] == 1 && l["psn"] == 12812214)
        .map(|l| l["capture_frame"].as_u64().unwrap())
        .collect();
    assert_eq!(acks, [15, 16, 17, 18]);
    let fa = v.iter().find(|l| l["in_reply_to"] == 75).unwrap();
    assert_eq!(fa["opcode"], 0x12);
    assert_eq!(
        fa["atomicacketh"]["orig_remote_data"],
        8597180133513859055u64
    );
    assert_eq!(fa["aeth"]["msn"], 1);
}

/// Byte offset of the BTH in the capture's frames (untagged IPv4).
const BTH: usize = 14 + 20 + 8;

fn refill_icrc(f: &mut [u8]) {
    let total = u16::from_be_bytes([f[16], f[17]]) as usize;
    roce_wire::icrc::fill(&mut f[14..14 + total]).expect("an IPv4 RoCE frame");
}

#[test]
fn a_changed_ack_msn_is_a_disagreement_naming_the_frame() {
    let mut frames = rxe_frames();
    // Frame 44: the WRITE test's ACK for PSN 9687697, MSN 2 -> 3.
    let f = &mut frames[43].1;
    assert_eq!(f[BTH], 0x11);
    assert_eq!(f[BTH + 15], 2);
    f[BTH + 15] = 3;
    refill_icrc(f);
    let o = replay(&write_pcap("msn.pcap", &frames));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("1 disagreements"), "{err}");
    assert!(
        err.contains("real frame 44 (ACKNOWLEDGE PSN 9687697 ACK MSN 3)"),
        "{err}"
    );
    assert!(err.contains("msn 2 != 3"), "{err}");
    let bad: Vec<Value> = lines(&o)
        .into_iter()
        .filter(|l| l.get("differs").is_some())
        .collect();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0]["capture_frame"], 44);
    assert_eq!(bad[0]["differs"], "msn 2 != 3");
}

#[test]
fn a_missing_read_response_is_a_disagreement_naming_the_frame() {
    let mut frames = rxe_frames();
    // Frame 62, READ RESPONSE MIDDLE PSN 10915830: gone; frame 63 (the
    // LAST) becomes frame 62.
    assert_eq!(frames[61].1[BTH], 0x0e);
    frames.remove(61);
    let o = replay(&write_pcap("drop.pcap", &frames));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("real frame 62 (RDMA_READ_RESPONSE_LAST PSN 10915831"),
        "{err}"
    );
    assert!(err.contains("opcode 0x0e != 0x0f"), "{err}");
}

#[test]
fn changed_read_data_is_a_disagreement() {
    let mut frames = rxe_frames();
    // Frame 65: the third READ's first response; its bytes were already
    // revealed by frame 57 (same address, nothing written since).
    let f = &mut frames[64].1;
    assert_eq!(f[BTH], 0x0d);
    f[BTH + 16 + 100] ^= 0xff;
    refill_icrc(f);
    let o = replay(&write_pcap("data.pcap", &frames));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("1 disagreements"), "{err}");
    assert!(
        err.contains("real frame 65 (RDMA_READ_RESPONSE_FIRST PSN 10915832")
            && err.contains("payload byte 100"),
        "{err}"
    );
}

/// Byte offsets of the AtomicETH VA and the AtomicAckETH original data.
const ATOMIC_VA: usize = BTH + 12;
const ORIG: usize = BTH + 12 + 4;

fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[..8].try_into().unwrap())
}

/// The fetch-add test with its third FETCH_ADD (frame 77) aimed at the
/// second's word (frame 76, add 1), and the third ATOMIC ACK's (frame 82)
/// original value set to `orig(81) + delta`.
fn same_word_fetch_adds(delta: u64) -> PathBuf {
    let mut frames = rxe_frames();
    assert_eq!((frames[75].1[BTH], frames[76].1[BTH]), (0x14, 0x14));
    let va = frames[75].1[ATOMIC_VA..ATOMIC_VA + 8].to_vec();
    frames[76].1[ATOMIC_VA..ATOMIC_VA + 8].copy_from_slice(&va);
    refill_icrc(&mut frames[76].1);
    assert_eq!((frames[80].1[BTH], frames[81].1[BTH]), (0x12, 0x12));
    let orig = be64(&frames[80].1[ORIG..]).wrapping_add(delta);
    frames[81].1[ORIG..ORIG + 8].copy_from_slice(&orig.to_be_bytes());
    refill_icrc(&mut frames[81].1);
    write_pcap(&format!("fa{delta}.pcap"), &frames)
}

#[test]
fn atomics_on_one_word_are_computed_not_copied() {
    // The model adds 1 to the word frame 81 revealed: the capture agrees
    // when frame 82 says orig(81) + 1 ...
    let o = replay(&same_word_fetch_adds(1));
    assert_clean(&o, 4);
    // ... and not when it says orig(81) + 2.
    let o = replay(&same_word_fetch_adds(2));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("1 disagreements"), "{err}");
    assert!(
        err.contains("real frame 82 (ATOMIC_ACKNOWLEDGE PSN 3929045")
            && err.contains("orig_remote_data"),
        "{err}"
    );
}

/// Replays `frames`, expecting exit 0 and `allowed` lines on our side.
fn assert_allowed(name: &str, frames: &[(Duration, Vec<u8>)], rule: &str) -> Vec<Value> {
    let o = replay(&write_pcap(name, frames));
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains(" 0 disagreements"), "{err}");
    assert!(err.contains(rule), "{err}");
    lines(&o)
}

#[test]
fn duplicates_may_be_re_acked_once() {
    // Rule 2: rxe ACKed each of the three duplicate packets of test 1's
    // retransmitted message (frames 16, 17, 18); a responder that ACKs
    // the duplicate message once (keep frame 18 only) agrees too.
    let mut frames = rxe_frames();
    frames.drain(15..17);
    let v = assert_allowed("dup_once.pcap", &frames, "(rule 2)");
    let allowed: Vec<u64> = v
        .iter()
        .filter(|l| l.get("allowed").is_some())
        .map(|l| l["in_reply_to"].as_u64().unwrap())
        .collect();
    // The first duplicate's ACK pairs with the one left; the model's ACKs
    // of the second and third duplicate packets are the allowed extras.
    assert_eq!(allowed, [13, 14]);
    // The other way round: a repeated real ACK with no duplicate request
    // before it is not allowed (frame 42, the WRITE test's first ACK,
    // twice).
    let mut frames = rxe_frames();
    let again = frames[41].clone();
    frames.insert(42, again);
    let o = replay(&write_pcap("repeat.pcap", &frames));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("real frame 43 (ACKNOWLEDGE PSN 9687694"),
        "{err}"
    );
}

#[test]
fn acks_may_be_coalesced_but_not_lost() {
    // Rule 1: without frame 44 (ACK PSN 9687697, MSN 2), rxe's next ACK
    // (frame 47 -> 46: PSN 9687700, MSN 3) covers the model's.
    let mut frames = rxe_frames();
    frames.remove(43);
    let v = assert_allowed("coalesced.pcap", &frames, "(rule 1)");
    let a: Vec<&Value> = v.iter().filter(|l| l.get("allowed").is_some()).collect();
    assert_eq!(a.len(), 1);
    assert_eq!(
        (a[0]["psn"].clone(), a[0]["in_reply_to"].clone()),
        (9687697.into(), 40.into())
    );
    // Without the last ACK (frame 54) nothing covers the model's.
    let mut frames = rxe_frames();
    frames.remove(53);
    let o = replay(&write_pcap("lost_ack.pcap", &frames));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the model answered frame 52 with ACKNOWLEDGE PSN 9687706 ACK MSN 5; the capture has no such response"),
        "{err}"
    );
}

/// The capture with every PSN moved by `psn_add` and every QPN by `qpn_add`
/// (DestQP and the DETH source QP), ICRCs refilled.
fn renumbered(psn_add: u32, qpn_add: u32) -> Vec<(Duration, Vec<u8>)> {
    let mut frames = rxe_frames();
    for (_, f) in &mut frames {
        let get24 = |b: &[u8]| u32::from_be_bytes([0, b[0], b[1], b[2]]);
        let qpn = get24(&f[BTH + 5..]);
        f[BTH + 5..BTH + 8].copy_from_slice(&((qpn + qpn_add) & 0xff_ffff).to_be_bytes()[1..]);
        let psn = get24(&f[BTH + 9..]);
        f[BTH + 9..BTH + 12].copy_from_slice(&((psn + psn_add) & 0xff_ffff).to_be_bytes()[1..]);
        if f[BTH] == 0x64 {
            let src = BTH + 12 + 5;
            let q = get24(&f[src..]);
            f[src..src + 3].copy_from_slice(&((q + qpn_add) & 0xff_ffff).to_be_bytes()[1..]);
        }
        refill_icrc(f);
        assert!(Frame::parse(f).is_ok());
    }
    frames
}

#[test]
fn other_psns_and_qpns_replay_clean() {
    // The WRITE test's first PSN, 9687692, lands on 2^24 - 3: its 15
    // request PSNs cross the 24-bit wrap.
    let psn_add = (1 << 24) - 3 - 9687692;
    let frames = renumbered(psn_add, 0x3a00);
    let o = replay(&write_pcap("renumbered.pcap", &frames));
    let v = assert_clean(&o, 4);
    let write: Vec<u64> = v
        .iter()
        .filter(|l| l["conversation"] == 4)
        .map(|l| l["psn"].as_u64().unwrap())
        .collect();
    assert_eq!(write, [16777215, 2, 5, 8, 11]);
    assert!(v.iter().all(|l| l["destqp"].as_u64().unwrap() >= 0x3a11));
    // And PSNs near zero, QPNs near the top.
    let o = replay(&write_pcap(
        "renumbered2.pcap",
        &renumbered((1 << 24) - 1694547, 0xff_fe00),
    ));
    assert_clean(&o, 4);
}

/// The capture over IPv6: ::ffff:a.b.c.d addresses, traffic class and hop
/// limit from the IPv4 TOS and TTL, flow label 0 (as rxe), lengths and
/// ICRC made by `roce_wire`'s emitter.
fn ipv6() -> Vec<(Duration, Vec<u8>)> {
    let map = |a: [u8; 4]| {
        let mut m = [0u8; 16];
        m[10] = 0xff;
        m[11] = 0xff;
        m[12..].copy_from_slice(&a);
        m
    };
    rxe_frames()
        .into_iter()
        .map(|(ts, f)| {
            let p = Frame::parse(&f).unwrap();
            let mut r = p.repr;
            let IpRepr::V4(ip) = r.ip else {
                panic!("an IPv4 capture")
            };
            r.ip = IpRepr::V6(Ipv6Repr {
                traffic_class: ip.tos,
                flow_label: 0,
                hop_limit: ip.ttl,
                next_header: 17,
                src: map(ip.src),
                dst: map(ip.dst),
                payload_len: 0,
            });
            let bytes = r.to_bytes(p.payload).unwrap();
            assert_eq!(bytes.len(), f.len() + 20);
            assert!(Frame::parse(&bytes).is_ok());
            (ts, bytes)
        })
        .collect()
}

#[test]
fn ipv6_capture_replays_clean() {
    let o = replay(&write_pcap("ipv6.pcap", &ipv6()));
    assert_clean(&o, 6);
    assert!(stderr(&o).contains("::ffff:10.0.0.2"), "{}", stderr(&o));
}

#[test]
fn pcapng_capture_replays_clean() {
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
    use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
    use pcap_file::pcapng::PcapNgWriter;
    let path = scratch("rxe_v4.pcapng");
    let mut w = PcapNgWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    w.write_pcapng_block(InterfaceDescriptionBlock {
        linktype: pcap_file::DataLink::ETHERNET,
        snaplen: 0,
        options: vec![],
    })
    .unwrap();
    for (ts, f) in rxe_frames() {
        w.write_pcapng_block(EnhancedPacketBlock {
            interface_id: 0,
            timestamp: ts,
            original_len: f.len() as u32,
            data: std::borrow::Cow::Borrowed(&f),
            options: vec![],
        })
        .unwrap();
    }
    drop(w);
    assert_clean(&replay(&path), 4);
}

#[test]
fn write_with_immediate_takes_receive_wqes_and_replays_clean() {
    // The WRITE test's LAST packets (0x08) as LAST with immediate (0x09):
    // each takes a receive WQE; the responses stay the same ACKs.
    let frames: Vec<_> = rxe_frames()
        .into_iter()
        .map(|(ts, f)| {
            if f[BTH] != 0x08 {
                return (ts, f);
            }
            let p = Frame::parse(&f).unwrap();
            let mut r = p.repr;
            r.bth.opcode = roce_wire::Opcode(0x09);
            r.ext.immdt = Some(0x1234_5678);
            (ts, r.to_bytes(p.payload).unwrap())
        })
        .collect();
    let o = replay(&write_pcap("write_imm.pcap", &frames));
    assert_clean(&o, 4);
}

#[test]
fn bad_input_is_named_and_fails() {
    let o = roce_sim(&["replay", "--pcap", "/nonexistent/x.pcap"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot open /nonexistent/x.pcap"));

    let garbled = scratch("garbled.pcap");
    std::fs::write(&garbled, b"this is not a capture at all").unwrap();
    let o = replay(&garbled);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("not a pcap or pcapng file"),
        "{}",
        stderr(&o)
    );

    // A truncated capture: the file header and half a record.
    let bytes = std::fs::read(RXE).unwrap();
    let cut = scratch("cut.pcap");
    std::fs::write(&cut, &bytes[..24 + 16 + 30]).unwrap();
    let o = replay(&cut);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("damaged capture at frame 1"),
        "{}",
        stderr(&o)
    );

    // No RoCE at all: the first frame sent to UDP port 4792.
    let mut frames = rxe_frames();
    frames.truncate(1);
    frames[0].1[14 + 20 + 3] = 0xb8;
    let o = replay(&write_pcap("not_roce.pcap", &frames));
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("no RoCE conversation"), "{err}");
    assert!(err.contains("none of its 1 frames"), "{err}");

    // RoCE, but only responses: nothing to feed a responder.
    let acks: Vec<_> = rxe_frames()
        .into_iter()
        .filter(|(_, f)| f[BTH] == 0x11)
        .collect();
    let o = replay(&write_pcap("acks.pcap", &acks));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("hold no requests"), "{}", stderr(&o));

    // An engine that does not exist: clap names it.
    let o = roce_sim(&["replay", "--pcap", RXE, "--engine", "fpga"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("invalid value 'fpga'"),
        "{}",
        stderr(&o)
    );
}

// ---------------------------------------------------------- --engine hw

fn replay_hw(path: &Path) -> Output {
    roce_sim(&["replay", "--pcap", path.to_str().unwrap(), "--engine", "hw"])
}

/// The hardware responder (resp_top) answers the real capture, and the
/// renumbered (across the PSN wrap, other QPNs) and IPv6 versions of it,
/// exactly as rxe did, and its lines equal the model's.
#[test]
fn hardware_responder_agrees_with_rxe() {
    for (name, frames, ip) in [
        ("rxe", rxe_frames(), 4),
        (
            "renumbered_hw",
            renumbered((1 << 24) - 3 - 9687692, 0x3a00),
            4,
        ),
        ("ipv6_hw", ipv6(), 6),
    ] {
        let path = write_pcap(&format!("{name}.pcap"), &frames);
        let hw = replay_hw(&path);
        let v = assert_clean(&hw, ip);
        assert!(
            stderr(&hw).contains("(UD) [model: UC/UD not built in hardware]"),
            "{name}: the UD conversations are named as replayed on the model"
        );
        assert_eq!(v, lines(&replay(&path)), "{name}: hardware and model lines");
    }
}

/// A changed byte of READ data in the capture is a disagreement for the
/// hardware responder too (its READ responses come from memory).
#[test]
fn hardware_responder_reports_changed_read_data() {
    let mut frames = rxe_frames();
    let f = &mut frames[64].1;
    assert_eq!(f[BTH], 0x0d);
    f[BTH + 16 + 100] ^= 0xff;
    refill_icrc(f);
    let o = replay_hw(&write_pcap("data_hw.pcap", &frames));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("1 disagreements"), "{err}");
    assert!(err.contains("payload byte 100"), "{err}");
}
