//! The TX frame builder (`roce_tx`) against `roce-wire`: random frames of
//! every opcode, both IP versions, VLAN on and off, payloads across the MTU
//! edges and PSNs near the wrap, under random idle and backpressure: every
//! frame on `m_axis` equals `FrameRepr::emit` byte for byte (header, pad,
//! ICRC, Ethernet fill). At full rate the frames leave back to back.

mod common;

use roce_sim::bfm::{PacketSink, PacketSource};
use roce_sim::models::{RoceTxW512, RoceTxW64};
use roce_sim::rng::Rng;
use roce_sim::traffic::FrameGen;
use roce_wire::opcode::TABLE;
use roce_wire::FrameRepr;

struct Run {
    cycles: u64,
    /// Sum over frames of ceil(wire length / K).
    ideal_beats: u64,
}

macro_rules! run_tx {
    ($model:ty, $seed:expr, $frames:expr, $idle:expr, $stall:expr) => {{
        let frames: &[(FrameRepr, Vec<u8>, usize)] = $frames;
        let seed: u64 = $seed;
        let mut junk = Rng::new(seed ^ 0x1D1E);
        let mut dut = <$model>::new();
        let k = <$model>::PARAMS.iter().find(|p| p.0 == "K").unwrap().1 as usize;
        let mut src = PacketSource::new(k, seed ^ 2, $idle);
        let mut sink = PacketSink::new(k, seed ^ 3, $stall);
        let mut expected = Vec::new();
        let mut ideal_beats = 0u64;
        for (repr, payload, pl) in frames {
            // The descriptor says `pl`; the stream carries `payload`.
            let mut want_payload = payload.clone();
            want_payload.resize(*pl, 0);
            let bytes = repr.to_bytes(&want_payload).unwrap();
            ideal_beats += bytes.len().div_ceil(k) as u64;
            expected.push((bytes, payload.len() != *pl));
            if !payload.is_empty() {
                src.push(payload);
            }
        }
        dut.set_reset(true);
        dut.tick();
        dut.set_reset(false);
        let (mut next, mut cycles) = (0usize, 0u64);
        let limit = 50 * ideal_beats + 10_000;
        while sink.packets.len() < frames.len() {
            assert!(
                cycles < limit,
                "stuck: {} of {} frames out",
                sink.packets.len(),
                frames.len()
            );
            let offer = next < frames.len() && !junk.chance($idle);
            if offer {
                let (repr, _, pl) = &frames[next];
                drive_desc!(dut, set_s_hdr_, repr, *pl, &mut junk);
            }
            dut.set_s_hdr_valid(offer);
            src.drive(&mut dut.s_payload());
            sink.drive(&mut dut.m_axis());
            dut.eval();
            let taken = offer && dut.get_s_hdr_ready();
            src.handshake(&dut.s_payload());
            sink.handshake(&dut.m_axis());
            dut.tick();
            if taken {
                next += 1;
            }
            cycles += 1;
        }
        assert!(
            sink.violations.is_empty(),
            "{:?}",
            &sink.violations[..sink.violations.len().min(3)]
        );
        for (i, ((want, bad), got)) in expected.iter().zip(&sink.packets).enumerate() {
            let (repr, payload, _) = &frames[i];
            let ctx = format!(
                "frame {i}: {:?} IPv{} vlan {} payload {}",
                repr.bth.opcode,
                repr.ip.version(),
                repr.eth.vlan.is_some(),
                payload.len()
            );
            assert_eq!(got.user, *bad, "{ctx}: tuser");
            assert_eq!(got.data.len(), want.len(), "{ctx}: length");
            if let Some(at) = got.data.iter().zip(want).position(|(a, b)| a != b) {
                panic!(
                    "{ctx}: first difference at byte {at}: got {:02x?}, want {:02x?}",
                    &got.data[at..(at + 8).min(want.len())],
                    &want[at..(at + 8).min(want.len())]
                );
            }
        }
        Run {
            cycles,
            ideal_beats,
        }
    }};
}

fn random_frames(seed: u64, n: usize) -> Vec<(FrameRepr, Vec<u8>, usize)> {
    let mut gen = FrameGen::new(seed);
    (0..n)
        .map(|i| {
            let (r, p) = gen.frame_with_opcode(i % TABLE.len());
            let pl = p.len();
            (r, p, pl)
        })
        .collect()
}

#[test]
fn random_frames_w64() {
    let seed = Rng::seed_from_env("random_frames_w64", 0x7164);
    run_tx!(RoceTxW64, seed, &random_frames(seed, 2000), 200, 200);
}

#[test]
fn random_frames_w512() {
    let seed = Rng::seed_from_env("random_frames_w512", 0x71512);
    run_tx!(RoceTxW512, seed, &random_frames(seed, 2000), 200, 200);
}

/// Back to back with no idle and no backpressure: cycles equal the ideal
/// (every output beat full except each frame's last) plus the pipeline fill.
#[test]
fn full_rate() {
    for (w, run) in [
        (64, run_tx!(RoceTxW64, 1, &random_frames(1, 600), 0, 0)),
        (512, run_tx!(RoceTxW512, 2, &random_frames(2, 600), 0, 0)),
    ] {
        eprintln!(
            "W={w}: {} cycles for {} ideal beats",
            run.cycles, run.ideal_beats
        );
        assert!(
            run.cycles <= run.ideal_beats + 40,
            "W={w}: {} cycles, ideal {}",
            run.cycles,
            run.ideal_beats
        );
    }
}
