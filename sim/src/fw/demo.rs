//! `roce-sim fw bringup`: boot the firmware on a softcore model, take one QP
//! from Reset through Init and RTR to RTS with the given attributes, and
//! print the command log (mask, result, cycles) and the QP's context as
//! the host reads it back.

use super::{boot, post, BringUp, Softcore};
use roce_regs::{qp, AttrMask, QpState, ResultCode};
use std::fmt::Write as _;

/// The mask as attribute names.
pub fn mask_names(mask: u32) -> String {
    let names: Vec<&str> = AttrMask::ALL
        .iter()
        .filter(|a| mask & a.value() != 0)
        .map(|a| a.name())
        .collect();
    let unknown = mask & !AttrMask::ALL.iter().fold(0, |m, a| m | a.value());
    let mut s = names.join(",");
    if unknown != 0 {
        let _ = write!(s, ",{unknown:#x}");
    }
    s
}

/// Run the bring-up on `s`, writing the log to `out`. `Ok(true)` when every
/// command answered `ok`, `Ok(false)` when one was rejected (the log stops
/// there); `Err` when the model failed (no answer).
/// `pmtu_cap`: a PMTU code the host writes to `cfg.pmtu_cap` after boot,
/// before the commands (the port's MTU limit; the firmware checks
/// `path_mtu` against it).
pub fn run<S: Softcore>(
    s: &mut S,
    b: &BringUp,
    pmtu_cap: Option<u32>,
    out: &mut String,
) -> Result<bool, String> {
    let booted = boot(s)?;
    let _ = writeln!(out, "boot: poll loop reached after {booted} cycles");
    if let Some(code) = pmtu_cap {
        let resp = s.host_write(
            roce_regs::cfg::pmtu_cap::ADDR,
            roce_regs::cfg::pmtu_cap::PMTU.val(code),
        );
        if resp != crate::axil::OKAY {
            return Err(format!("host write of cfg.pmtu_cap answered {resp}"));
        }
        let _ = writeln!(out, "host: cfg.pmtu_cap = {code} (PMTU code)");
    }
    let _ = writeln!(
        out,
        "{:<3} {:<28} {:<70} {:<20} {:>7}",
        "#", "command", "attribute mask", "result", "cycles"
    );
    let mut from = QpState::Reset;
    let mut all_ok = true;
    for (i, (_, req)) in b.requests().iter().enumerate() {
        let p = post(s, req)?;
        let to = QpState::from_value(req.qp_state).expect("a QP state");
        let instrs = p
            .instrs
            .map(|n| format!(" ({n} instructions)"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{:<3} {:<28} {:<70} {:<20} {:>7}{instrs}",
            i + 1,
            format!("modify-qp {} {}->{}", b.qpn, from.name(), to.name()),
            mask_names(req.mask),
            p.result.name(),
            p.cycles
        );
        if p.result != ResultCode::Ok {
            all_ok = false;
            break;
        }
        from = to;
    }
    let _ = writeln!(out, "QP {} context (host CSR reads):", b.qpn);
    for r in qp::BLOCK
        .registers
        .iter()
        .filter(|r| r.count == roce_regs::QP_COUNT && r.stride == roce_regs::QP_STRIDE)
    {
        let (v, resp) = s.host_read(qp::BASE + r.element_offset(b.qpn));
        if resp != crate::axil::OKAY {
            return Err(format!("host read of {} answered {resp}", r.name));
        }
        let fields: Vec<String> = r
            .fields
            .iter()
            .map(|f| {
                let x = f.get(v);
                let state = *r == qp::state::REG;
                match f.name {
                    n if state && n == qp::state::STATE.name => format!(
                        "{}={}",
                        f.name,
                        QpState::from_value(x).map_or("?", |s| s.name())
                    ),
                    n if state && n == qp::state::TYPE.name => format!(
                        "{}={}",
                        f.name,
                        roce_regs::QpType::from_value(x).map_or("?", |t| t.name())
                    ),
                    _ => format!("{}={x:#x}", f.name),
                }
            })
            .collect();
        let _ = writeln!(out, "  {:<12} {}", r.name, fields.join(" "));
    }
    Ok(all_ok)
}
