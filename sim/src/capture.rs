//! Streaming pcap / pcapng input (through the `pcap-file` crate) and the
//! `roce-sim parse` pipeline: one DESIGN §7 JSON line per frame.
//!
//! Memory stays constant whatever the capture's size: packets are borrowed
//! from the reader's buffer one at a time and lines go to a buffered writer.

use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::DataLink;
use roce_wire::json::Line;
use roce_wire::{DropReason, Frame};
use std::fmt;
use std::io::{self, Read, Write};

/// Why a capture cannot be read to its end.
#[derive(Debug)]
pub enum CaptureError {
    /// Reading failed.
    Io(io::Error),
    /// The file does not start with a pcap or pcapng magic number.
    NotACapture([u8; 4]),
    /// The capture is damaged; `frame` is the number of the frame being read.
    Damaged { frame: u64, detail: String },
    /// The capture holds another link type than Ethernet.
    LinkType { frame: u64, link: DataLink },
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureError::Io(e) => write!(f, "{e}"),
            CaptureError::NotACapture(m) => write!(
                f,
                "not a pcap or pcapng file (starts with {:02x} {:02x} {:02x} {:02x})",
                m[0], m[1], m[2], m[3]
            ),
            CaptureError::Damaged { frame, detail } => {
                write!(f, "damaged capture at frame {frame}: {detail}")
            }
            CaptureError::LinkType { frame, link } => write!(
                f,
                "frame {frame}: link type {link:?} is not Ethernet (only Ethernet captures hold RoCE v2)"
            ),
        }
    }
}

impl std::error::Error for CaptureError {}

impl From<io::Error> for CaptureError {
    fn from(e: io::Error) -> Self {
        CaptureError::Io(e)
    }
}

const PCAP_MAGICS: [[u8; 4]; 4] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
];
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

enum Inner<R: Read> {
    Pcap(PcapReader<io::Chain<io::Cursor<[u8; 4]>, R>>),
    PcapNg(PcapNgReader<io::Chain<io::Cursor<[u8; 4]>, R>>),
}

/// A pcap or pcapng file, read one Ethernet frame at a time.
pub struct CaptureReader<R: Read> {
    inner: Inner<R>,
    /// Link type of each pcapng interface, in the current section.
    interfaces: Vec<DataLink>,
    frames: u64,
    /// Timestamp of the last frame, in ns.
    last_ts: u64,
}

impl<R: Read> CaptureReader<R> {
    /// Opens a capture, detecting pcap (µs or ns, either byte order) or pcapng.
    pub fn new(mut reader: R) -> Result<CaptureReader<R>, CaptureError> {
        let mut magic = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            match reader.read(&mut magic[got..])? {
                0 => return Err(CaptureError::NotACapture(magic)),
                n => got += n,
            }
        }
        let stream = io::Cursor::new(magic).chain(reader);
        let damaged = |e: pcap_file::PcapError| CaptureError::Damaged {
            frame: 0,
            detail: format!("file header: {e}"),
        };
        let inner = if PCAP_MAGICS.contains(&magic) {
            let r = PcapReader::new(stream).map_err(damaged)?;
            if r.header().datalink != DataLink::ETHERNET {
                return Err(CaptureError::LinkType {
                    frame: 0,
                    link: r.header().datalink,
                });
            }
            Inner::Pcap(r)
        } else if magic == PCAPNG_MAGIC {
            Inner::PcapNg(PcapNgReader::new(stream).map_err(damaged)?)
        } else {
            return Err(CaptureError::NotACapture(magic));
        };
        Ok(CaptureReader {
            inner,
            interfaces: Vec::new(),
            frames: 0,
            last_ts: 0,
        })
    }

    /// Frames delivered so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Calls `f(number, bytes)` for the next frame; `Ok(false)` at the end.
    pub fn next_frame(&mut self, f: impl FnOnce(u64, &[u8])) -> Result<bool, CaptureError> {
        self.next_frame_ts(|n, _, data| f(n, data))
    }

    /// Calls `f(number, timestamp in ns, bytes)` for the next frame;
    /// `Ok(false)` at the end. A pcapng simple packet block has no
    /// timestamp: it gets the previous frame's.
    pub fn next_frame_ts(&mut self, f: impl FnOnce(u64, u64, &[u8])) -> Result<bool, CaptureError> {
        let frame = self.frames + 1;
        let damaged = |e: pcap_file::PcapError| CaptureError::Damaged {
            frame,
            detail: e.to_string(),
        };
        let ns = |d: std::time::Duration| d.as_nanos() as u64;
        match &mut self.inner {
            Inner::Pcap(r) => match r.next_packet() {
                None => Ok(false),
                Some(Err(e)) => Err(damaged(e)),
                Some(Ok(p)) => {
                    self.frames = frame;
                    self.last_ts = ns(p.timestamp);
                    f(frame, self.last_ts, &p.data);
                    Ok(true)
                }
            },
            Inner::PcapNg(r) => loop {
                let (link, ts, data) = match r.next_block() {
                    None => return Ok(false),
                    Some(Err(e)) => return Err(damaged(e)),
                    Some(Ok(Block::SectionHeader(_))) => {
                        self.interfaces.clear();
                        continue;
                    }
                    Some(Ok(Block::InterfaceDescription(idb))) => {
                        self.interfaces.push(idb.linktype);
                        continue;
                    }
                    Some(Ok(Block::EnhancedPacket(p))) => (
                        self.interfaces.get(p.interface_id as usize).copied(),
                        ns(p.timestamp),
                        p.data,
                    ),
                    Some(Ok(Block::SimplePacket(p))) => {
                        (self.interfaces.first().copied(), self.last_ts, p.data)
                    }
                    // The obsolete packet block: microseconds (the default resolution).
                    Some(Ok(Block::Packet(p))) => (
                        self.interfaces.get(p.interface_id as usize).copied(),
                        p.timestamp.saturating_mul(1000),
                        p.data,
                    ),
                    Some(Ok(_)) => continue,
                };
                self.last_ts = ts;
                return deliver(&mut self.frames, frame, link, &data, |n, d| f(n, ts, d));
            },
        }
    }
}

fn deliver(
    frames: &mut u64,
    frame: u64,
    link: Option<DataLink>,
    data: &[u8],
    f: impl FnOnce(u64, &[u8]),
) -> Result<bool, CaptureError> {
    match link {
        Some(DataLink::ETHERNET) => {
            *frames = frame;
            f(frame, data);
            Ok(true)
        }
        Some(link) => Err(CaptureError::LinkType { frame, link }),
        None => Err(CaptureError::Damaged {
            frame,
            detail: "packet refers to an interface that was never described".into(),
        }),
    }
}

/// Frames and bytes seen, and drops per reason.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParseStats {
    /// Frames read.
    pub frames: u64,
    /// Bytes of frame data read.
    pub bytes: u64,
    /// Accepted frames.
    pub accepted: u64,
    /// Drops, indexed by [`DropReason::index`].
    pub dropped: [u64; DropReason::ALL.len()],
}

/// Where `roce-sim parse` went wrong: reading the capture or writing lines.
#[derive(Debug)]
pub enum ParseError {
    /// The capture could not be read.
    Capture(CaptureError),
    /// The output could not be written.
    Output(io::Error),
}

/// Parses every frame of `capture` with the `roce-wire` model and writes
/// one JSON line per frame to `out`.
pub fn parse_capture<R: Read, W: Write>(
    capture: &mut CaptureReader<R>,
    out: &mut W,
) -> Result<ParseStats, ParseError> {
    let mut stats = ParseStats::default();
    let mut written = Ok(());
    loop {
        let more = capture
            .next_frame(|n, data| {
                stats.frames += 1;
                stats.bytes += data.len() as u64;
                let parsed = Frame::parse(data);
                match &parsed {
                    Ok(_) => stats.accepted += 1,
                    Err(r) => stats.dropped[r.index()] += 1,
                }
                let line = Line {
                    frame: n,
                    verdict: parsed.as_ref().map(|f| &f.repr).map_err(|e| *e),
                };
                written = writeln!(out, "{line}");
            })
            .map_err(ParseError::Capture)?;
        std::mem::replace(&mut written, Ok(())).map_err(ParseError::Output)?;
        if !more {
            return Ok(stats);
        }
    }
}

/// Like [`parse_capture`], judged by the `roce_rx` hardware parser in
/// Verilator at data width `width` (the whole capture is read first, then
/// streamed back to back). An empty record cannot be put on a stream and is
/// reported as `truncated`, as a receiver would count it.
pub fn parse_capture_hw<R: Read, W: Write>(
    capture: &mut CaptureReader<R>,
    out: &mut W,
    width: usize,
) -> Result<ParseStats, ParseError> {
    let mut stats = ParseStats::default();
    let mut frames = Vec::new();
    while capture
        .next_frame(|_, data| frames.push(data.to_vec()))
        .map_err(ParseError::Capture)?
    {}
    let sent: Vec<Vec<u8>> = frames.iter().filter(|f| !f.is_empty()).cloned().collect();
    let r = crate::rx::run(&mut *crate::rx::dut(width), &sent, Default::default(), 1);
    let mut descs = r.descriptors.iter();
    for (i, f) in frames.iter().enumerate() {
        stats.frames += 1;
        stats.bytes += f.len() as u64;
        let verdict = if f.is_empty() {
            Err(DropReason::Truncated)
        } else {
            descs
                .next()
                .expect("one descriptor per frame")
                .line_verdict()
        };
        match verdict {
            Ok(_) => stats.accepted += 1,
            Err(r) => stats.dropped[r.index()] += 1,
        }
        let line = Line {
            frame: i as u64 + 1,
            verdict,
        };
        writeln!(out, "{line}").map_err(ParseError::Output)?;
    }
    Ok(stats)
}
