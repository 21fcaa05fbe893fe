//! The long differential check of `roce_rx` against `roce-wire`
//! (`roce-sim fuzz rx`): valid frames from [`FrameGen`] (fields drawn to
//! favour edges and the values real stacks send), then mutated as a real
//! link and a hostile peer would: ICRC-masked fields varied, bytes changed,
//! length fields off by a little and by a lot, header fields rewritten with
//! the checksums made good again, truncation, trailing bytes. Every frame
//! must get the same verdict, reason, fields and payload from the hardware
//! as from `Frame::parse`, and the drop counters the model's tallies.

use crate::rng::Rng;
use crate::rx::{compare, dut, run, Pace, RxDut};
use crate::traffic::FrameGen;
use roce_wire::{bth, icrc, ipv4, ipv6, udp, DropReason, Frame, FrameRepr, IpRepr};
use std::fmt::Write as _;

/// What was done to a generated frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// As generated: valid.
    Valid,
    /// Fields the ICRC masks set to edge values (IPv4 TOS, TTL with the
    /// header checksum made good; IPv6 traffic class, flow label, hop limit;
    /// the UDP checksum; BTH byte 4): still valid.
    Masked,
    /// One to three bytes changed, half of them in the headers.
    Bytes,
    /// The IP or UDP length field off by 1 to 4, or set to an edge value;
    /// the IPv4 header checksum made good half of the time.
    Length,
    /// IP and UDP lengths moved together, the frame cut or grown to match,
    /// checksum and ICRC made good: reaches the PadCnt, PMTU and body checks.
    Resized,
    /// A header field rewritten (EtherType, IP version, IHL, protocol, UDP
    /// port, opcode, PadCnt, TVer) with the IPv4 checksum and the ICRC made
    /// good, so the check behind it decides.
    Field,
    /// Cut short anywhere.
    Truncated,
    /// Bytes after the IP datagram (as Ethernet padding would add).
    Trailing,
}

impl Mutation {
    /// Every kind, in report order.
    pub const ALL: [Mutation; 8] = [
        Mutation::Valid,
        Mutation::Masked,
        Mutation::Bytes,
        Mutation::Length,
        Mutation::Resized,
        Mutation::Field,
        Mutation::Truncated,
        Mutation::Trailing,
    ];

    /// Its name in the report.
    pub const fn name(self) -> &'static str {
        match self {
            Mutation::Valid => "valid",
            Mutation::Masked => "masked",
            Mutation::Bytes => "bytes",
            Mutation::Length => "length",
            Mutation::Resized => "resized",
            Mutation::Field => "field",
            Mutation::Truncated => "truncated",
            Mutation::Trailing => "trailing",
        }
    }
}

/// A generated frame's Ethernet header length and IP header length.
fn offsets(repr: &FrameRepr) -> (usize, usize) {
    (repr.eth.header_len(), repr.ip.header_len())
}

/// Makes the IPv4 header checksum (if IPv4) and the ICRC good again, over
/// the datagram the IP length field now describes, where the frame holds it.
fn refill(f: &mut [u8], repr: &FrameRepr) {
    let (ip, _) = offsets(repr);
    let l3_len = match repr.ip {
        IpRepr::V4(_) => {
            let room = f.len() - ip;
            let mut p = ipv4::Packet::new_unchecked(&mut f[ip..]);
            // A rewritten IHL may point past the frame: no checksum then.
            if p.header_len() <= room {
                p.fill_checksum();
            }
            p.total_len() as usize
        }
        IpRepr::V6(_) => {
            ipv6::Packet::new_unchecked(&f[ip..]).payload_len() as usize + ipv6::HEADER_LEN
        }
    };
    if ip + l3_len <= f.len() {
        icrc::fill(&mut f[ip..ip + l3_len]);
    }
}

/// One frame mutated as `kind` says. `Masked` frames stay valid.
pub fn mutate(rng: &mut Rng, kind: Mutation, repr: &FrameRepr, good: &[u8]) -> Vec<u8> {
    let mut f = good.to_vec();
    let (ip, iph) = offsets(repr);
    let l4 = ip + iph;
    let b = l4 + udp::HEADER_LEN;
    match kind {
        Mutation::Valid => {}
        Mutation::Masked => {
            match repr.ip {
                IpRepr::V4(_) => {
                    let mut p = ipv4::Packet::new_unchecked(&mut f[ip..]);
                    p.set_tos(rng.edge(8, 0) as u8);
                    p.set_ttl(rng.edge(8, 64) as u8);
                    p.fill_checksum();
                }
                IpRepr::V6(_) => {
                    let mut p = ipv6::Packet::new_unchecked(&mut f[ip..]);
                    p.set_ver_tc_flow(rng.edge(8, 0) as u8, rng.edge(20, 0) as u32);
                    p.set_hop_limit(rng.edge(8, 64) as u8);
                }
            }
            udp::Packet::new_unchecked(&mut f[l4..]).set_checksum(rng.edge(16, 0) as u16);
            f[b + 4] = rng.edge(8, 0) as u8;
        }
        Mutation::Bytes => {
            for _ in 0..1 + rng.below(3) {
                let span = if rng.chance(500) {
                    f.len().min(b + bth::HEADER_LEN + 28)
                } else {
                    f.len()
                };
                let at = rng.below(span as u64) as usize;
                let old = f[at];
                while f[at] == old {
                    let any = rng.next_u32() as u64;
                    f[at] = rng.edge(8, any) as u8;
                }
            }
        }
        Mutation::Length => {
            // The IP length field half of the time, else the UDP one.
            let at = match repr.ip {
                IpRepr::V4(_) if rng.chance(500) => ip + 2,
                IpRepr::V6(_) if rng.chance(500) => ip + 4,
                _ => l4 + 4,
            };
            let cur = u16::from_be_bytes([f[at], f[at + 1]]);
            let new = match rng.below(3) {
                0 => cur.wrapping_add(1 + rng.below(4) as u16),
                1 => cur.wrapping_sub(1 + rng.below(4) as u16),
                _ => loop {
                    let v = rng.edge(16, cur as u64) as u16;
                    if v != cur {
                        break v;
                    }
                },
            };
            f[at..at + 2].copy_from_slice(&new.to_be_bytes());
            if matches!(repr.ip, IpRepr::V4(_)) && rng.chance(500) {
                ipv4::Packet::new_unchecked(&mut f[ip..]).fill_checksum();
            }
        }
        Mutation::Resized => {
            let delta: i64 = match rng.below(3) {
                0 => 1 + rng.below(4) as i64,
                1 => -(1 + rng.below(4) as i64),
                _ => rng.below(600) as i64 - 300,
            };
            let l3 = repr.l3_len() as i64;
            // The L4 part keeps at least its UDP header.
            let new_l3 = (l3 + delta).max((iph + udp::HEADER_LEN) as i64) as usize;
            let end = ip + repr.l3_len();
            let mut g = f[..end].to_vec();
            g.resize(ip + new_l3, 0);
            let tail_start = end.min(g.len());
            for byte in &mut g[tail_start..] {
                *byte = rng.next_u32() as u8;
            }
            match repr.ip {
                IpRepr::V4(_) => {
                    ipv4::Packet::new_unchecked(&mut g[ip..]).set_total_len(new_l3 as u16)
                }
                IpRepr::V6(_) => {
                    ipv6::Packet::new_unchecked(&mut g[ip..]).set_payload_len((new_l3 - iph) as u16)
                }
            }
            udp::Packet::new_unchecked(&mut g[l4..]).set_len((new_l3 - iph) as u16);
            refill(&mut g, repr);
            g.resize(g.len().max(roce_wire::ethernet::MIN_FRAME_LEN), 0);
            f = g;
        }
        Mutation::Field => {
            let et = ip - 2;
            match rng.below(8) {
                0 => {
                    let v = rng.edge(16, 0x86DD) as u16;
                    f[et..et + 2].copy_from_slice(&v.to_be_bytes());
                }
                1 => f[ip] = (f[ip] & 0x0F) | (rng.edge(4, 6) as u8) << 4,
                2 if matches!(repr.ip, IpRepr::V4(_)) => {
                    f[ip] = (f[ip] & 0xF0) | rng.edge(4, 5) as u8
                }
                2 | 3 => {
                    let at = if matches!(repr.ip, IpRepr::V4(_)) {
                        ip + 9
                    } else {
                        ip + 6
                    };
                    f[at] = rng.edge(8, 17) as u8;
                }
                4 => {
                    let v = rng.edge(16, 4791) as u16;
                    f[l4 + 2..l4 + 4].copy_from_slice(&v.to_be_bytes());
                }
                5 => {
                    // A known RC opcode is the typical value.
                    let rc = rng.below(0x20);
                    f[b] = rng.edge(8, rc) as u8
                }
                6 => f[b + 1] = (f[b + 1] & !0x30) | (rng.below(4) as u8) << 4,
                _ => f[b + 1] = (f[b + 1] & 0xF0) | rng.edge(4, 1) as u8,
            }
            refill(&mut f, repr);
        }
        Mutation::Truncated => {
            // Half the cuts inside the headers.
            let span = if rng.chance(500) {
                f.len().min(b + bth::HEADER_LEN + 32)
            } else {
                f.len()
            };
            let cut = rng.below(span as u64 - 1) as usize + 1;
            f.truncate(cut);
        }
        Mutation::Trailing => {
            let n = 1 + rng.below(64) as usize;
            if rng.chance(500) {
                f.extend(std::iter::repeat_n(0, n));
            } else {
                f.extend(rng.bytes(n));
            }
        }
    }
    f
}

/// Settings of a differential run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Data width of the hardware parser.
    pub width: usize,
    /// Frames in all.
    pub frames: u64,
    /// Seed of everything random in the run.
    pub seed: u64,
    /// Largest payload a generated frame carries.
    pub max_payload: usize,
    /// Frames per simulation run (the parser is reset between runs).
    pub batch: usize,
}

/// What a differential run found.
#[derive(Debug, Default)]
pub struct Report {
    /// Frames per mutation kind (`Mutation::ALL` order).
    pub by_kind: [u64; Mutation::ALL.len()],
    /// The model's verdicts: drops per reason (`DropReason::ALL` order), then accepts.
    pub verdicts: [u64; 10],
    /// Simulated cycles.
    pub cycles: u64,
    /// Input beats taken.
    pub beats: u64,
}

impl Report {
    /// Frames checked.
    pub fn frames(&self) -> u64 {
        self.by_kind.iter().sum()
    }

    /// A short table of the run.
    pub fn table(&self, c: &Config) -> String {
        let mut s = format!(
            "roce_rx W={} against roce-wire: {} frames, seed {:#x}, payloads up to {} bytes: all agree\n",
            c.width,
            self.frames(),
            c.seed,
            c.max_payload
        );
        s.push_str("mutation:");
        for (m, n) in Mutation::ALL.iter().zip(self.by_kind) {
            let _ = write!(s, " {} {n},", m.name());
        }
        s.pop();
        s.push_str("\nverdict:");
        let _ = write!(s, " accept {},", self.verdicts[9]);
        for r in DropReason::ALL {
            let _ = write!(s, " {} {},", r.name(), self.verdicts[r.index()]);
        }
        s.pop();
        let _ = write!(
            s,
            "\n{} cycles, {} input beats ({:.3} beats per cycle with random idle and stalls)",
            self.cycles,
            self.beats,
            self.beats as f64 / self.cycles.max(1) as f64
        );
        s
    }
}

/// A frame the hardware and the model disagree on.
#[derive(Debug)]
pub struct Disagreement {
    /// The frame's number in the run (0-based).
    pub frame: Option<u64>,
    /// How it was made.
    pub mutation: Option<Mutation>,
    /// The frame, in hex.
    pub hex: String,
    /// What differs.
    pub what: String,
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.frame, self.mutation) {
            (Some(n), Some(m)) => writeln!(f, "frame {n} ({} mutation) differs:", m.name())?,
            _ => writeln!(f, "the run differs:")?,
        }
        writeln!(f, "  {}", self.what)?;
        if !self.hex.is_empty() {
            write!(f, "  frame bytes: {}", self.hex)?;
        }
        Ok(())
    }
}

/// Random idle on the input and stalls on both outputs, per mille.
const PACE: Pace = Pace {
    idle: 100,
    hdr_stall: 100,
    pay_stall: 100,
    hdr_hold: 0,
};

/// Runs `c.frames` frames through the hardware parser in batches and
/// compares each with the model. `progress` is called after each batch
/// with the frames done so far.
pub fn rx(c: &Config, mut progress: impl FnMut(u64)) -> Result<Report, Box<Disagreement>> {
    let mut gen = FrameGen::new(c.seed);
    gen.max_payload = c.max_payload;
    let mut rng = Rng::new(c.seed ^ 0xD1FF);
    let mut d: Box<dyn RxDut> = dut(c.width);
    let mut report = Report::default();
    let mut done = 0u64;
    while done < c.frames {
        let n = (c.frames - done).min(c.batch as u64) as usize;
        let mut frames = Vec::with_capacity(n);
        let mut kinds = Vec::with_capacity(n);
        for _ in 0..n {
            let (repr, payload) = gen.frame();
            let good = repr.to_bytes(&payload).expect("FrameGen frames emit");
            // Each kind an eighth of the frames: a quarter stay valid.
            let kind = Mutation::ALL[rng.below(Mutation::ALL.len() as u64) as usize];
            let f = mutate(&mut rng, kind, &repr, &good);
            if matches!(kind, Mutation::Valid | Mutation::Masked) {
                // The generator and the masks: an independent check that the
                // model accepts what the ICRC does not cover.
                if let Err(e) = Frame::parse(&f) {
                    return Err(Box::new(Disagreement {
                        frame: Some(done + frames.len() as u64),
                        mutation: Some(kind),
                        hex: hex(&f),
                        what: format!("the model drops a valid frame: {}", e.name()),
                    }));
                }
            }
            report.by_kind[Mutation::ALL.iter().position(|&m| m == kind).unwrap()] += 1;
            frames.push(f);
            kinds.push(kind);
        }
        let batch_seed = rng.next_u64();
        let r = run(&mut *d, &frames, PACE, batch_seed);
        match compare(&frames, &r) {
            Ok(counts) => {
                for (t, v) in report.verdicts.iter_mut().zip(counts) {
                    *t += v;
                }
            }
            Err((i, what)) => {
                return Err(Box::new(Disagreement {
                    frame: i.map(|i| done + i as u64),
                    mutation: i.map(|i| kinds[i]),
                    hex: i.map_or(String::new(), |i| hex(&frames[i])),
                    what,
                }))
            }
        }
        report.cycles += r.cycles;
        report.beats += r.in_cycle.len() as u64;
        done += n as u64;
        progress(done);
    }
    Ok(report)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::FrameGen;

    /// The mutations do what they say, judged by the model: masked ones
    /// stay valid, the damaging ones reach every drop reason.
    #[test]
    fn mutations_keep_or_break_frames_as_named() {
        let mut gen = FrameGen::new(5);
        gen.max_payload = 300;
        let mut rng = Rng::new(6);
        let mut reasons = [0u64; 10];
        for i in 0..8000 {
            let (repr, payload) = gen.frame();
            let good = repr.to_bytes(&payload).unwrap();
            let kind = Mutation::ALL[i % Mutation::ALL.len()];
            let f = mutate(&mut rng, kind, &repr, &good);
            let v = Frame::parse(&f);
            if matches!(kind, Mutation::Valid | Mutation::Masked) {
                assert!(v.is_ok(), "{kind:?}: {v:?}");
            }
            if kind == Mutation::Truncated {
                assert!(f.len() < good.len());
            }
            reasons[v.map_or_else(|e| e.index(), |_| 9)] += 1;
        }
        for r in DropReason::ALL {
            assert!(
                reasons[r.index()] > 0,
                "{} never reached: {reasons:?}",
                r.name()
            );
        }
    }
}
