//! The TX frame builder (`roce_tx`) against `roce-wire`: random frames of
//! every opcode, both IP versions, VLAN on and off, payloads across the MTU
//! edges and PSNs near the wrap, under random idle and backpressure: every
//! frame on `m_axis` equals `FrameRepr::emit` byte for byte (header, pad,
//! ICRC, Ethernet fill). At full rate frames leave back to back; payload
//! packets of the wrong length are flagged, never stall it.

use roce_sim::rng::Rng;
use roce_sim::traffic::FrameGen;
use roce_sim::tx::{dut, run, Pace, TxFrame, TxRun, WIDTHS};
use roce_wire::opcode::TABLE;

fn random_frames(seed: u64, n: usize) -> Vec<TxFrame> {
    random_frames_upto(seed, n, FrameGen::new(0).max_payload)
}

fn random_frames_upto(seed: u64, n: usize, max_payload: usize) -> Vec<TxFrame> {
    let mut gen = FrameGen::new(seed);
    gen.max_payload = max_payload;
    (0..n)
        .map(|i| {
            let (r, p) = gen.frame_with_opcode(i % TABLE.len());
            TxFrame::new(r, p)
        })
        .collect()
}

/// Runs and checks every frame against the model; returns the run.
fn check(width: usize, frames: &[TxFrame], pace: Pace, seed: u64) -> TxRun {
    let r = run(&mut *dut(width), frames, pace, seed);
    assert!(
        r.violations.is_empty(),
        "{:?}",
        &r.violations[..r.violations.len().min(3)]
    );
    assert_eq!(r.frames.len(), frames.len());
    let mut flagged = 0;
    for (i, (f, (got, user))) in frames.iter().zip(&r.frames).enumerate() {
        let (want, bad) = f.expected();
        let ctx = format!(
            "W={width} frame {i}: {:?} IPv{} vlan {} payload {} (descriptor {})",
            f.repr.bth.opcode,
            f.repr.ip.version(),
            f.repr.eth.vlan.is_some(),
            f.payload.len(),
            f.payload_len
        );
        assert_eq!(*user, bad, "{ctx}: tuser");
        flagged += bad as u64;
        assert_eq!(got.len(), want.len(), "{ctx}: length");
        if let Some(at) = got.iter().zip(&want).position(|(a, b)| a != b) {
            let end = (at + 8).min(want.len());
            panic!(
                "{ctx}: first difference at byte {at}: got {:02x?}, want {:02x?}",
                &got[at..end],
                &want[at..end]
            );
        }
    }
    assert_eq!(r.error_pulses, flagged, "W={width}: error_payload pulses");
    r
}

#[test]
fn random_frames_under_idle_and_backpressure() {
    for width in WIDTHS {
        let seed = Rng::seed_from_env(&format!("roce_tx W={width}"), 0x7100 + width as u64);
        check(
            width,
            &random_frames(seed, 2000),
            Pace {
                idle: 200,
                stall: 200,
                hold: 0,
                ..Pace::default()
            },
            seed,
        );
    }
}

/// Descriptors in a trickle (99.5 % idle on their port): many frames end
/// with the header queue empty, and the front must wait for the next
/// descriptor rather than start a frame from a stale head.
#[test]
fn a_trickle_of_descriptors_empties_the_header_queue() {
    for width in WIDTHS {
        let seed = Rng::seed_from_env(&format!("roce_tx trickle W={width}"), 0x5A00 + width as u64);
        // Payloads up to 512 bytes: at most 70 beats at W=64, well within
        // the 200 cycles a descriptor waits on average.
        let frames = random_frames_upto(seed, 300, 512);
        let r = check(
            width,
            &frames,
            Pace {
                idle: 100,
                stall: 100,
                hold: 0,
                hdr_idle: 995,
            },
            seed,
        );
        // The premise: descriptors taken only after the previous frame's
        // last beat left the block, so the front had already ended that
        // frame with the header queue empty.
        let dry = (1..frames.len())
            .filter(|&i| r.taken_at[i] > r.last_beat_at[i - 1])
            .count();
        eprintln!(
            "W={width}: {dry} of {} frames taken after the previous one left",
            frames.len()
        );
        assert!(
            4 * dry >= frames.len(),
            "W={width}: the header queue ran dry after only {dry} frames"
        );
    }
}

/// Back to back, no idle, no backpressure: every frame's first beat
/// follows the previous frame's last beat (cycles per frame =
/// ceil(wire length / K)), except for the start-up wait. The tail waits for
/// a frame's ICRC on its last beat, and that wait is a cycle longer for some
/// frames than for others (it depends on where the frame's and its ICRC
/// stream's last bytes fall in their beats). So the lag the first frame
/// leaves between the front and the tail can grow by one cycle, once, at a
/// later frame with the longer wait, and never again: at most one cycle of
/// bubble after frame 1 in the whole run, whatever its length.
#[test]
fn full_rate_has_no_bubbles() {
    for width in WIDTHS {
        let mut late_runs = 0;
        for seed in [1, 2, 3, 4] {
            let frames = random_frames(seed, 600);
            let r = check(width, &frames, Pace::default(), seed);
            let k = width / 8;
            let beats: Vec<u64> = frames.iter().map(|f| f.beats(k)).collect();
            let mut late = Vec::new();
            for i in 2..frames.len() {
                let gap = r.first_beat_at[i] - r.first_beat_at[i - 1];
                assert!(gap >= beats[i - 1], "W={width}: frame {i} overlaps");
                if gap > beats[i - 1] {
                    late.push((i, gap - beats[i - 1]));
                }
            }
            let extra: u64 = late.iter().map(|&(_, n)| n).sum();
            assert!(
                extra <= 1,
                "W={width} seed {seed}: bubbles after frame 1 (frame, cycles): {late:?}"
            );
            late_runs += extra;
            let busy = r.cycles - r.first_beat_at[0];
            let ideal: u64 = beats.iter().sum();
            eprintln!(
                "W={width} seed {seed}: {busy} cycles from the first beat for {ideal} ideal beats; later waits {late:?}"
            );
            assert!(
                busy - ideal <= 16,
                "W={width}: start-up wait {}",
                busy - ideal
            );
        }
        eprintln!("W={width}: {late_runs} of 4 runs grew their lag after frame 1");
    }
}

/// Payload packets that end early, end late or carry `tuser`: the frame keeps
/// the descriptor's length, is flagged on its last beat, `error_payload`
/// pulses, and every later frame is exact.
#[test]
fn wrong_payload_lengths_are_flagged_and_contained() {
    for width in WIDTHS {
        let seed = 0xBAD00 + width as u64;
        let mut rng = Rng::new(seed);
        let mut frames = random_frames(seed, 600);
        for f in frames.iter_mut() {
            let has = f.repr.bth.opcode.info().unwrap().has_payload();
            if !has || f.payload.is_empty() || !rng.chance(300) {
                continue;
            }
            let n = f.payload.len();
            match rng.below(2) {
                // The stream carries fewer bytes than announced.
                0 if n > 1 => f.payload.truncate(rng.range(1, n - 1)),
                // ... or more.
                _ => {
                    let extra = rng.range(1, 3 * width / 8);
                    f.payload.extend(rng.bytes(extra));
                }
            }
        }
        assert!(
            frames
                .iter()
                .filter(|f| f.payload.len() != f.payload_len)
                .count()
                > 50
        );
        check(
            width,
            &frames,
            Pace {
                idle: 100,
                stall: 100,
                hold: 0,
                ..Pace::default()
            },
            seed,
        );
    }
}

/// The output held off long enough for the block to fill: every queue
/// backs up to the descriptor port. With the shortest frames (one beat at
/// W=512) the delay FIFO is full of frames whose ICRC results are all
/// queued, the most the engine ever holds (it runs without a result
/// credit); every frame still comes out byte-exact once the output moves.
#[test]
fn long_output_stall_fills_the_block_and_loses_nothing() {
    let hold = 1000;
    for width in WIDTHS {
        let seed = 0x4000 + width as u64;
        let mut gen = FrameGen::new(seed);
        gen.ipv6_permille = 0;
        gen.vlan_permille = 0;
        let ack = TABLE
            .iter()
            .position(|i| i.name == "RC_ACKNOWLEDGE")
            .unwrap();
        let mut frames: Vec<TxFrame> = (0..300)
            .map(|_| {
                let (r, p) = gen.frame_with_opcode(ack);
                TxFrame::new(r, p)
            })
            .collect();
        frames.extend(random_frames(seed, 300));
        let r = check(
            width,
            &frames,
            Pace {
                idle: 0,
                stall: 100,
                hold,
                ..Pace::default()
            },
            seed,
        );
        // The block stopped taking descriptors long before the hold ended:
        // it was full, not just slow.
        let held: Vec<u64> = r.taken_at.iter().copied().filter(|&c| c < hold).collect();
        let last = *held.last().unwrap();
        eprintln!(
            "W={width}: {} descriptors taken during the hold, the last at cycle {last}",
            held.len()
        );
        assert!(last + 500 < hold, "W={width}: still taking at cycle {last}");
        assert!(held.len() < frames.len() / 2);
    }
}
