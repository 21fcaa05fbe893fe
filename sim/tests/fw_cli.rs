//! `roce-sim fw bringup`: on both softcores, QP N goes Reset → Init → RTR →
//! RTS with the given attributes (every command `ok`, each with a cycle
//! count), and the context printed from the CSRs holds those attributes
//! (values checked against the arguments, field names from roce-regs). Bad
//! arguments exit 2 with a message naming the problem.

use roce_regs::qp;
use std::process::{Command, Output};

fn roce_sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roce-sim"))
        .args(args)
        .output()
        .expect("run roce-sim")
}

/// `register` line of the printed context: field name → value.
fn ctx_field(out: &str, reg: &str, field: &str) -> String {
    let line = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(reg))
        .unwrap_or_else(|| panic!("no context line for {reg}:\n{out}"));
    line.split_whitespace()
        .skip(1)
        .find_map(|kv| kv.strip_prefix(&format!("{field}=")))
        .unwrap_or_else(|| panic!("no {field} in {line}"))
        .to_string()
}

fn bringup(core: &str) {
    let o = roce_sim(&[
        "fw",
        "bringup",
        "--qp",
        "77",
        "--core",
        core,
        "--mtu",
        "2048",
        "--dest-qp",
        "0x345",
        "--rq-psn",
        "0x1234",
        "--sq-psn",
        "0xabcdef",
        "--timeout",
        "18",
        "--retry-cnt",
        "5",
        "--rnr-retry",
        "6",
        "--min-rnr-timer",
        "3",
        "--dmac",
        "02:11:22:33:44:55",
        "--dgid",
        "fe80::1",
        "--access",
        "remote-read",
    ]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{core}: {out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    println!("{out}");
    let cmds: Vec<&str> = out.lines().filter(|l| l.contains("modify-qp 77")).collect();
    assert_eq!(cmds.len(), 3, "{out}");
    for (l, to) in cmds.iter().zip(["reset->init", "init->rtr", "rtr->rts"]) {
        assert!(l.contains(to), "{l}");
        let cols: Vec<&str> = l.split_whitespace().collect();
        assert!(cols.contains(&"ok"), "{l}");
        let cycles: u64 = cols[cols.iter().position(|c| *c == "ok").unwrap() + 1]
            .parse()
            .unwrap_or_else(|_| panic!("no cycle count in {l}"));
        assert!(cycles > 0);
    }
    let num = |s: String| u32::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    assert_eq!(
        ctx_field(&out, qp::state::REG.name, qp::state::STATE.name),
        roce_regs::QpState::Rts.name()
    );
    assert_eq!(
        ctx_field(&out, qp::state::REG.name, qp::state::TYPE.name),
        roce_regs::QpType::Rc.name()
    );
    let want = [
        (qp::dest_qpn::REG.name, qp::dest_qpn::QPN.name, 0x345),
        (qp::rq_psn::REG.name, qp::rq_psn::PSN.name, 0x1234),
        (qp::sq_psn::REG.name, qp::sq_psn::PSN.name, 0xabcdef),
        (
            qp::path::REG.name,
            qp::path::PMTU.name,
            roce_wire::Pmtu::Mtu2048.code() as u32,
        ),
        (qp::timers::REG.name, qp::timers::TIMEOUT.name, 18),
        (qp::timers::REG.name, qp::timers::RETRY_CNT.name, 5),
        (qp::timers::REG.name, qp::timers::RNR_RETRY.name, 6),
        (qp::timers::REG.name, qp::timers::MIN_RNR_TIMER.name, 3),
        (
            qp::access::REG.name,
            qp::access::FLAGS.name,
            roce_regs::AccessFlag::RemoteRead.value(),
        ),
        (qp::dmac_hi::REG.name, qp::dmac_hi::MAC.name, 0x0211),
        (qp::dmac_lo::REG.name, qp::dmac_lo::MAC.name, 0x2233_4455),
        (qp::dgid_w0::REG.name, qp::dgid_w0::WORD.name, 0xfe80_0000),
        (qp::dgid_w3::REG.name, qp::dgid_w3::WORD.name, 1),
    ];
    for (reg, field, v) in want {
        assert_eq!(num(ctx_field(&out, reg, field)), v, "{core}: {reg}.{field}");
    }
}

#[test]
fn bringup_on_picorv32() {
    bringup("picorv32");
}

#[test]
fn bringup_on_the_iss() {
    bringup("iss");
}

/// A path MTU above the port's cap (`--pmtu-cap`, written to
/// `cfg.pmtu_cap` by the host) is the firmware's to reject: exit 1, the
/// log stops at the rejected RTR with its result code, and the QP stays in
/// Init with no path attributes.
#[test]
fn firmware_rejection_exits_1() {
    let o = roce_sim(&[
        "fw",
        "bringup",
        "--qp",
        "9",
        "--mtu",
        "4096",
        "--pmtu-cap",
        "1024",
    ]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{out}");
    let cmds: Vec<&str> = out.lines().filter(|l| l.contains("modify-qp 9")).collect();
    assert_eq!(cmds.len(), 2, "{out}");
    assert!(cmds[0].contains(roce_regs::ResultCode::Ok.name()), "{out}");
    assert!(
        cmds[1].contains("init->rtr")
            && cmds[1].contains(roce_regs::ResultCode::PmtuAboveCap.name()),
        "{out}"
    );
    assert_eq!(
        ctx_field(&out, qp::state::REG.name, qp::state::STATE.name),
        roce_regs::QpState::Init.name()
    );
    assert_eq!(
        ctx_field(&out, qp::path::REG.name, qp::path::PMTU.name),
        "0x0"
    );
}

#[test]
fn bad_arguments_exit_2_naming_the_problem() {
    let n = roce_regs::QP_COUNT.to_string();
    let cases: &[(&[&str], &str)] = &[
        (&["fw", "bringup"], "--qp"),
        (&["fw", "bringup", "--qp", &n], "out of range"),
        (&["fw", "bringup", "--qp", "x1"], "not a number"),
        (
            &["fw", "bringup", "--qp", "1", "--mtu", "1000"],
            "path MTU 1000",
        ),
        (
            &["fw", "bringup", "--qp", "1", "--type", "xrc"],
            "unknown QP type 'xrc'",
        ),
        (
            &["fw", "bringup", "--qp", "1", "--access", "remote-foo"],
            "unknown access flag 'remote-foo'",
        ),
        (
            &["fw", "bringup", "--qp", "1", "--dmac", "02:00"],
            "not a MAC address",
        ),
        (
            &["fw", "bringup", "--qp", "1", "--dgid", "1.2.3"],
            "not an IPv6 address",
        ),
        (
            &["fw", "bringup", "--qp", "1", "--sq-psn", "0x1000000"],
            "--sq-psn",
        ),
        (
            &["fw", "bringup", "--qp", "1", "--retry-cnt", "8"],
            "--retry-cnt",
        ),
        (
            &["fw", "bringup", "--qp", "1", "--core", "vexriscv"],
            "--core",
        ),
        (
            &["fw", "bringup", "--qp", "1", "--elf", "/nonexistent/fw.elf"],
            "/nonexistent/fw.elf",
        ),
    ];
    for (args, needle) in cases {
        let o = roce_sim(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
