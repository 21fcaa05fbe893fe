//! The `roce-sim parse` JSON line of one frame (DESIGN §7), written with
//! `core::fmt` so it costs no allocation and works in `no_std`.
//!
//! `{"frame": n, "verdict": "accept"|"drop", "reason": null|R, ...fields}`,
//! fields only for accepted frames, in the order of the shared vectors.

use crate::frame::FrameRepr;
use crate::reason::DropReason;
use core::fmt;

/// One frame's verdict, printable as its JSON line (no trailing newline).
#[derive(Copy, Clone, Debug)]
pub struct Line<'a> {
    /// 1-based frame number.
    pub frame: u64,
    /// The parse result.
    pub verdict: Result<&'a FrameRepr, DropReason>,
}

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = match self.verdict {
            Err(reason) => {
                return write!(
                    f,
                    r#"{{"frame": {}, "verdict": "drop", "reason": "{}"}}"#,
                    self.frame,
                    reason.name()
                )
            }
            Ok(r) => r,
        };
        let b = &r.bth;
        write!(
            f,
            concat!(
                r#"{{"frame": {}, "verdict": "accept", "reason": null, "ip": {}, "src_port": {}, "#,
                r#""opcode": {}, "se": {}, "m": {}, "padcnt": {}, "tver": {}, "pkey": {}, "#,
                r#""fecn": {}, "becn": {}, "destqp": {}, "ackreq": {}, "psn": {}, "payload_len": {}"#
            ),
            self.frame,
            r.ip.version(),
            r.udp.src_port,
            b.opcode.0,
            b.solicited,
            b.mig_req,
            b.pad_count,
            b.tver,
            b.pkey,
            b.fecn,
            b.becn,
            b.dest_qp,
            b.ack_req,
            b.psn.value(),
            r.payload_len
        )?;
        let e = &r.ext;
        if let Some(x) = e.reth {
            write!(
                f,
                r#", "reth": {{"va": {}, "rkey": {}, "dmalen": {}}}"#,
                x.va, x.rkey, x.dma_len
            )?;
        }
        if let Some(x) = e.aeth {
            write!(
                f,
                r#", "aeth": {{"syndrome": {}, "msn": {}}}"#,
                x.syndrome.to_byte(),
                x.msn
            )?;
        }
        if let Some(x) = e.immdt {
            write!(f, r#", "immdt": {x}"#)?;
        }
        if let Some(x) = e.ieth {
            write!(f, r#", "ieth": {x}"#)?;
        }
        if let Some(x) = e.atomic_eth {
            write!(
                f,
                r#", "atomiceth": {{"va": {}, "rkey": {}, "swap_add": {}, "compare": {}}}"#,
                x.va, x.rkey, x.swap_add, x.compare
            )?;
        }
        if let Some(x) = e.atomic_ack_eth {
            write!(
                f,
                r#", "atomicacketh": {{"orig_remote_data": {}}}"#,
                x.orig_remote_data
            )?;
        }
        if let Some(x) = e.deth {
            write!(
                f,
                r#", "deth": {{"qkey": {}, "srcqp": {}}}"#,
                x.qkey, x.src_qp
            )?;
        }
        f.write_str("}")
    }
}
