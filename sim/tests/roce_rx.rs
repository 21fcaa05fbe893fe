//! The `roce_rx` parser in Verilator (W = 64, 128, 256 and 512), checked against
//! `roce_wire::Frame::parse`: every descriptor prints the same DESIGN §7
//! line as the model, every accepted payload equals the model's payload,
//! the drop counters equal the model's tallies, and `m_axis` keeps the
//! stream rules. Random idle on `s_axis`, random stalls on `m_hdr` and
//! `m_axis`. Seeds print; `ROCE_SEED=<n>` repeats a run.

use roce_sim::rng::Rng;
use roce_sim::rx::{compare, dut, run, Pace, RunResult, WIDTHS};
use roce_sim::traffic::FrameGen;
use roce_wire::json::Line;
use roce_wire::{DropReason, Frame};
use serde_json::Value;

const JSON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/roce_v2.json");

const BUSY: Pace = Pace {
    idle: 200,
    hdr_stall: 200,
    pay_stall: 200,
    hdr_hold: 0,
};

/// Checks a run against the model (`roce_sim::rx::compare`); returns the
/// model's counts (drops by reason, accepts).
fn check(frames: &[Vec<u8>], r: &RunResult, what: &str) -> [u64; 10] {
    compare(frames, r).unwrap_or_else(|(i, e)| {
        let len = i.map_or(0, |i| frames[i].len());
        panic!("{what}: frame {:?} ({len} bytes): {e}", i.map(|i| i + 1))
    })
}

fn random_frames(seed: u64, n: usize) -> Vec<Vec<u8>> {
    let mut g = FrameGen::new(seed);
    (0..n)
        .map(|_| {
            let (repr, payload) = g.frame();
            repr.to_bytes(&payload).unwrap()
        })
        .collect()
}

fn random(width: usize) {
    let seed = Rng::seed_from_env("roce_rx::random", 0x4001 + width as u64);
    println!("seed {seed}");
    let frames = random_frames(seed, 2000);
    let r = run(&mut *dut(width), &frames, BUSY, seed);
    let c = check(&frames, &r, &format!("random W={width}"));
    assert_eq!(c[9], 2000, "FrameGen frames are all valid");
}

#[test]
fn random_frames_at_every_width() {
    for width in WIDTHS {
        random(width);
    }
}
/// The reference frames: expected verdicts, reasons and fields from the JSON.
fn vectors(width: usize) {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(JSON).unwrap()).unwrap();
    let vs = doc["frames"].as_array().unwrap();
    let frames: Vec<Vec<u8>> = vs
        .iter()
        .map(|v| {
            let h = v["hex"].as_str().unwrap();
            (0..h.len() / 2)
                .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap())
                .collect()
        })
        .collect();
    assert_eq!(frames.len(), 83);
    let r = run(&mut *dut(width), &frames, BUSY, 83);
    for (v, d) in vs.iter().zip(&r.descriptors) {
        let line = Line {
            frame: v["frame"].as_u64().unwrap(),
            verdict: d.line_verdict(),
        }
        .to_string();
        let got: Value = serde_json::from_str(&line).unwrap();
        let mut want = serde_json::Map::new();
        want.insert("frame".into(), v["frame"].clone());
        want.insert("verdict".into(), v["expect"]["verdict"].clone());
        want.insert("reason".into(), v["expect"]["reason"].clone());
        if let Some(f) = v["expect"]["fields"].as_object() {
            want.extend(f.clone());
        }
        assert_eq!(got, Value::Object(want), "W={width} frame {}", v["name"]);
    }
    check(&frames, &r, &format!("vectors W={width}"));
}

#[test]
fn reference_vectors() {
    for width in WIDTHS {
        vectors(width);
    }
}
/// Random bit flips anywhere in a frame, each followed by a good frame.
fn flips(width: usize) {
    let seed = Rng::seed_from_env("roce_rx::flips", 0xF11 + width as u64);
    println!("seed {seed}");
    let mut g = FrameGen::new(seed);
    g.max_payload = 300;
    let mut frames = Vec::new();
    for _ in 0..700 {
        let (repr, payload) = g.frame();
        let mut bad = repr.to_bytes(&payload).unwrap();
        let flips = 1 + g.rng().below(3) as usize;
        for _ in 0..flips {
            // Half the flips in the first 80 bytes (the headers).
            let span = if g.rng().chance(500) {
                bad.len().min(80)
            } else {
                bad.len()
            };
            let at = g.rng().below(span as u64) as usize;
            bad[at] ^= 1 << g.rng().below(8);
        }
        if g.rng().chance(100) {
            let cut = g.rng().below(bad.len() as u64) as usize + 1;
            bad.truncate(cut);
        }
        frames.push(bad);
        let (repr, payload) = g.frame();
        frames.push(repr.to_bytes(&payload).unwrap());
    }
    let r = run(&mut *dut(width), &frames, BUSY, seed);
    let c = check(&frames, &r, &format!("flips W={width}"));
    assert!(c[9] >= 700, "every good frame passes");
    let kinds = DropReason::ALL.iter().filter(|x| c[x.index()] > 0).count();
    println!("drops by reason: {c:?}");
    assert!(kinds >= 5, "the flips reach several checks: {c:?}");
}

#[test]
fn bit_flips() {
    for width in WIDTHS {
        flips(width);
    }
}
/// IPv4 headers with options (IHL 6 to 15), which the checksum must cover
/// word for word: the checksum right (the model says ip-options), a bit
/// flipped in the header's last word (bad-ip-checksum), or one flipped in
/// the first word after the header (ip-options still: that word is not in
/// the sum). Each followed by a good frame.
fn options(width: usize) {
    use roce_wire::{ethernet, ipv4};
    let seed = Rng::seed_from_env("roce_rx::options", 0x0B7 + width as u64);
    println!("seed {seed}");
    let mut g = FrameGen::new(seed);
    g.max_payload = 200;
    g.ipv6_permille = 0;
    let mut frames = Vec::new();
    for n in 0..600 {
        let (repr, payload) = g.frame();
        let good = repr.to_bytes(&payload).unwrap();
        let ip = if repr.eth.vlan.is_some() {
            ethernet::TAGGED_HEADER_LEN
        } else {
            ethernet::HEADER_LEN
        };
        let ihl = 6 + n % 10;
        let extra = 4 * ihl - ipv4::HEADER_LEN;
        let mut f = good[..ip + ipv4::HEADER_LEN].to_vec();
        f.extend((0..extra).map(|_| g.rng().below(256) as u8));
        f.extend_from_slice(&good[ip + ipv4::HEADER_LEN..]);
        {
            let mut p = ipv4::Packet::new_unchecked(&mut f[ip..]);
            p.set_ver_hlen(4 * ihl);
            let total = p.total_len() + extra as u16;
            p.set_total_len(total);
            p.fill_checksum();
        }
        let bit = 1u8 << g.rng().below(8);
        match n % 3 {
            1 => f[ip + 4 * ihl - 1 - g.rng().below(2) as usize] ^= bit,
            2 => f[ip + 4 * ihl + g.rng().below(2) as usize] ^= bit,
            _ => {}
        }
        let want = if n % 3 == 1 {
            DropReason::BadIpChecksum
        } else {
            DropReason::IpOptions
        };
        assert_eq!(Frame::parse(&f).err(), Some(want), "model, frame {n}");
        frames.push(f);
        frames.push(good);
    }
    let r = run(&mut *dut(width), &frames, BUSY, seed);
    let c = check(&frames, &r, &format!("options W={width}"));
    assert_eq!(c[9], 600, "every good frame passes");
}

#[test]
fn ipv4_options() {
    for width in WIDTHS {
        options(width);
    }
}
/// L4 parts that end inside the opcode's extension headers (or exactly at
/// their end), with the IP and UDP lengths, the IPv4 checksum and the ICRC
/// made to agree with the cut, so that the first check to fail is the
/// body's length: negative for a cut inside (the model says truncated),
/// zero at the end (then the padding and body checks decide). Only these
/// frames reach the parser's negative-body check; no other test does.
/// Each followed by a good frame.
fn short_ext(width: usize) {
    use roce_wire::{bth, ethernet, icrc, ipv4, ipv6, udp, IpRepr};
    let seed = Rng::seed_from_env("roce_rx::short_ext", 0x5E7 + width as u64);
    println!("seed {seed}");
    let mut g = FrameGen::new(seed);
    g.max_payload = 64;
    let (mut frames, mut inside) = (Vec::new(), 0);
    while frames.len() < 1200 {
        let (repr, payload) = g.frame();
        let ext = repr.bth.opcode.info().map_or(0, |i| i.ext_len());
        if ext == 0 {
            continue;
        }
        let good = repr.to_bytes(&payload).unwrap();
        let (ip, iph) = (repr.eth.header_len(), repr.ip.header_len());
        let kept = g.rng().below(ext as u64 + 1) as usize;
        let l4 = udp::HEADER_LEN + bth::HEADER_LEN + kept + icrc::ICRC_LEN;
        let mut f = good[..ip + iph + l4 - icrc::ICRC_LEN].to_vec();
        f.extend([0; icrc::ICRC_LEN]);
        match repr.ip {
            IpRepr::V4(_) => {
                let mut p = ipv4::Packet::new_unchecked(&mut f[ip..]);
                p.set_total_len((iph + l4) as u16);
                p.fill_checksum();
            }
            IpRepr::V6(_) => ipv6::Packet::new_unchecked(&mut f[ip..]).set_payload_len(l4 as u16),
        }
        udp::Packet::new_unchecked(&mut f[ip + iph..]).set_len(l4 as u16);
        icrc::fill(&mut f[ip..]).unwrap();
        f.resize(f.len().max(ethernet::MIN_FRAME_LEN), 0);
        if kept < ext {
            assert_eq!(Frame::parse(&f).err(), Some(DropReason::Truncated), "model");
            inside += 1;
        }
        frames.push(f);
        frames.push(good);
    }
    let r = run(&mut *dut(width), &frames, BUSY, seed);
    let c = check(&frames, &r, &format!("short_ext W={width}"));
    assert!(inside >= 400, "cuts inside the headers: {inside}");
    assert!(c[9] >= 600, "every good frame passes: {c:?}");
}

#[test]
fn short_extension_headers() {
    for width in WIDTHS {
        short_ext(width);
    }
}
/// Back-to-back frames of every size, no idle and no stall: the parser
/// never deasserts `s_axis.tready`.
#[test]
fn full_rate_without_stalls() {
    for width in WIDTHS {
        for len in [64, 65, 127, 256, 1024, 4096, 9000] {
            let frames = roce_sim::rx::sized_frames(len, 40, 7);
            let r = run(&mut *dut(width), &frames, Pace::default(), 1);
            check(&frames, &r, &format!("full rate W={width} len={len}"));
            assert_eq!(r.input_stalls, 0, "W={width} len={len}");
        }
    }
}

/// `m_hdr_ready` held low for the first 1000 cycles, with 300 of the
/// shortest frames (one beat at W=512) then 300 random ones: the frames
/// credit (`roce_rx::MAX_FRAMES`) closes the input long before the hold
/// ends, no frame's ICRC result is lost (the ICRC engine runs without its
/// own credit: at most `MAX_FRAMES + 1` results wait), and every frame is
/// then parsed as the model parses it.
#[test]
fn long_descriptor_stall_fills_the_block_and_loses_nothing() {
    let hold = 1000;
    let mut frames_held = Vec::new();
    for width in WIDTHS {
        let seed = 0x4100 + width as u64;
        let mut frames = roce_sim::rx::sized_frames(64, 300, seed);
        frames.extend(random_frames(seed, 300));
        let pace = Pace {
            idle: 0,
            hdr_stall: 100,
            pay_stall: 100,
            hdr_hold: hold,
        };
        let r = run(&mut *dut(width), &frames, pace, seed);
        check(&frames, &r, &format!("long stall W={width}"));
        assert!(
            r.hdr_cycle[0] >= hold,
            "W={width}: a descriptor in the hold"
        );
        // The input stopped long before the hold ended: the block was
        // full, not slow.
        let held: Vec<u64> = r.in_cycle.iter().copied().filter(|&c| c < hold).collect();
        let last = *held.last().unwrap();
        let beats = 64usize.div_ceil(width / 8);
        eprintln!(
            "W={width}: {} beats ({} whole frames) taken during the hold, the last at cycle {last}",
            held.len(),
            held.len() / beats
        );
        assert!(last + 500 < hold, "W={width}: still taking at cycle {last}");
        frames_held.push(held.len() / beats);
    }
    // Within a frame of each other at every width, and a few percent of
    // what any buffer holds (W=64: 254 of these frames, W=512: 243):
    // the frames credit closed the input, not the buffer's room.
    let (lo, hi) = (frames_held.iter().min(), frames_held.iter().max());
    assert!(hi.unwrap() - lo.unwrap() <= 1, "{frames_held:?}");
    assert!(frames_held.iter().all(|&n| n < 64), "{frames_held:?}");
}

/// A frame alone on an idle parser: its descriptor is offered at most the
/// published `LATENCY` cycles after its last beat, and exactly that for a
/// frame that fills its last beat (a shorter last beat can finish its ICRC
/// a beat earlier).
#[test]
fn descriptor_latency_is_the_published_one() {
    for width in WIDTHS {
        let lanes = width / 8;
        for len in [64, 65, 127, 256, 1024] {
            let frames = roce_sim::rx::sized_frames(len, 1, 11);
            let mut d = dut(width);
            let r = run(&mut *d, &frames, Pace::default(), 1);
            check(&frames, &r, &format!("latency W={width} len={len}"));
            // The last beat enters at cycle beats - 1.
            let measured = r.hdr_cycle[0] + 1 - len.div_ceil(lanes) as u64;
            assert!(
                measured as usize <= d.latency(),
                "W={width} len={len}: {measured}"
            );
            if len % lanes == 0 {
                assert_eq!(measured as usize, d.latency(), "W={width} len={len}");
            }
        }
    }
}

/// `roce-sim parse --engine hw` prints exactly what `--engine model` prints.
#[test]
fn cli_engines_agree_on_the_reference_pcap() {
    let pcap = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/roce_v2.pcap");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_roce-sim"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let model = run(&["parse", "--pcap", pcap]);
    assert_eq!(model.lines().count(), 83);
    for w in WIDTHS.map(|w| w.to_string()) {
        let w = w.as_str();
        let hw = run(&["parse", "--engine", "hw", "--width", w, "--pcap", pcap]);
        assert_eq!(hw, model, "W={w}");
    }
}

/// Issue 34: accepted IPv6 frames (the reference vectors', and generated
/// ones of every opcode, tagged and not) with only the first four bytes of the IP header (version, traffic
/// class, flow label) overwritten, as Linux rxe sends them (TC 0, flow
/// label 0) and at other edges. The ICRC masks those bits, so the model
/// accepts every one, and the hardware must too, with the same fields.
#[test]
fn ipv6_traffic_class_and_flow_label_edges() {
    const ROWS: [[u8; 4]; 9] = [
        [0x60, 0x00, 0x00, 0x00],
        [0x60, 0x00, 0x00, 0x01],
        [0x60, 0x10, 0x00, 0x00],
        [0x60, 0x21, 0x00, 0x00],
        [0x60, 0x08, 0x00, 0x00],
        [0x60, 0x00, 0x00, 0x45],
        [0x60, 0x00, 0x03, 0x00],
        [0x6f, 0xff, 0xff, 0xff],
        [0x60, 0x21, 0x23, 0x45],
    ];
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(JSON).unwrap()).unwrap();
    let vectors = doc["frames"].as_array().unwrap().iter().map(|v| {
        let h = v["hex"].as_str().unwrap();
        (0..h.len() / 2)
            .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap())
            .collect::<Vec<u8>>()
    });
    // And generated IPv6 frames of every opcode, half of them tagged.
    let mut g = FrameGen::new(34);
    g.ipv6_permille = 1000;
    g.vlan_permille = 500;
    g.max_payload = 300;
    let generated = (0..80).map(|i| {
        let (repr, payload) = g.frame_with_opcode(i % roce_wire::opcode::TABLE.len());
        repr.to_bytes(&payload).unwrap()
    });
    let (mut frames, mut from_vectors) = (Vec::new(), 0);
    for (n, f) in vectors.chain(generated).enumerate() {
        let Ok(parsed) = Frame::parse(&f) else {
            continue;
        };
        if parsed.repr.ip.version() != 6 {
            continue;
        }
        from_vectors += (n < 83) as usize;
        let ip = parsed.repr.eth.header_len();
        for row in ROWS {
            let mut g = f.clone();
            g[ip..ip + 4].copy_from_slice(&row);
            frames.push(g);
        }
    }
    assert_eq!(
        from_vectors, 5,
        "accepted IPv6 frames in the reference vectors"
    );
    assert_eq!(frames.len(), 9 * (5 + 80));
    for width in WIDTHS {
        let r = run(&mut *dut(width), &frames, BUSY, 34);
        let c = check(&frames, &r, &format!("IPv6 edges W={width}"));
        assert_eq!(c[9], frames.len() as u64, "the model accepts every row");
    }
}

/// A short run of `roce-sim fuzz rx` at every width (the long runs are in
/// docs/BENCHMARKS.md): generated, masked, damaged, resized, rewritten,
/// truncated and padded frames, each judged alike by hardware and model.
#[test]
fn differential_fuzz_short_run() {
    use roce_sim::fuzz::{rx, Config};
    for width in WIDTHS {
        let seed = Rng::seed_from_env("roce_rx::fuzz", 0xF022 + width as u64);
        let c = Config {
            width,
            frames: 50_000,
            seed,
            max_payload: 1100,
            batch: 4096,
        };
        let report = rx(&c, |_| {}).unwrap_or_else(|d| panic!("W={width} seed {seed:#x}: {d}"));
        println!("{}", report.table(&c));
        assert_eq!(report.frames(), 50_000);
        assert!(
            report.by_kind.iter().all(|&n| n > 5000),
            "{:?}",
            report.by_kind
        );
        assert!(
            report.verdicts.iter().all(|&n| n > 0),
            "every verdict reached: {:?}",
            report.verdicts
        );
    }
}

/// `roce-sim fuzz rx`: a small run prints its report and exits 0; bad
/// arguments name the problem and exit 2.
#[test]
fn fuzz_cli() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_roce-sim"))
            .args(args)
            .output()
            .unwrap()
    };
    let ok = run(&[
        "fuzz", "rx", "--width", "128", "--frames", "3000", "--seed", "0x34",
    ]);
    let out = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(
        out.contains("roce_rx W=128 against roce-wire: 3000 frames, seed 0x34"),
        "{out}"
    );
    assert!(
        out.contains("all agree") && out.contains("verdict: accept "),
        "{out}"
    );
    for (args, needle) in [
        (
            &["fuzz", "rx", "--width", "100"][..],
            "width must be one of",
        ),
        (&["fuzz", "rx", "--frames", "0"][..], "below the minimum"),
        (&["fuzz", "rx", "--seed", "x"][..], "'x' is not a number"),
        (&["fuzz", "rx", "--max-payload", "9001"][..], "out of range"),
        (&["fuzz", "tx"][..], "unrecognized subcommand"),
    ] {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    }
}
