//! scripts/synth: a real (small) xc7 run prints every figure, and bad
//! arguments or a missing tool fail with a message naming the problem.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn synth(args: &[&str]) -> Output {
    Command::new(root().join("scripts/synth"))
        .args(args)
        .env("ROCE_GEN", env!("CARGO_BIN_EXE_roce-gen"))
        .output()
        .expect("run scripts/synth")
}

#[test]
fn xc7_report_has_every_figure() {
    let out = synth(&["axis_register", "64", "--target", "xc7"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for field in ["LUT6", "FF", "BRAM", "LUTRAM", "depth", "Fmax"] {
        assert!(text.contains(field), "{field} missing:\n{text}");
    }
    // A register slice is flip-flops: 2 x (64 + 8 + 3) data bits plus state.
    let ff: usize = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("FF"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("FF count");
    assert!((150..=170).contains(&ff), "FF = {ff}:\n{text}");
    let summary = root().join("build/synth/axis_register_w64/xc7.summary");
    assert_eq!(std::fs::read_to_string(summary).unwrap(), text);
}

/// Several seeds placed two at a time: one Fmax per seed, their mean and
/// minimum, and one critical-path line per seed, in seed order, each read
/// back from that seed's own log.
#[test]
fn seeds_in_parallel_report_each_seed_and_its_critical_path() {
    // W=128: its own build directory, apart from the xc7 test's (W=64),
    // which runs beside it.
    let out = synth(&[
        "axis_register",
        "128",
        "--target",
        "ice40",
        "--seeds",
        "3,1,2",
        "--jobs",
        "2",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fmax = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Fmax"))
        .expect("Fmax line");
    assert!(fmax.contains("over seeds 3 1 2"), "{fmax}");
    let paths: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("path"))
        .map(str::trim)
        .collect();
    assert_eq!(paths.len(), 3, "one path line per seed:\n{text}");
    let dir = root().join("build/synth/axis_register_w128");
    let mut figs = Vec::new();
    for (seed, line) in ["3", "1", "2"].iter().zip(&paths) {
        assert!(line.starts_with(&format!("seed {seed}: ")), "{line}");
        // The seed's figure is its own log's.
        let log = std::fs::read_to_string(dir.join(format!("ice40.s{seed}.pnr.log"))).unwrap();
        let f = log
            .lines()
            .filter_map(|l| l.split("Max frequency for clock").nth(1))
            .filter_map(|l| l.split(": ").nth(1))
            .filter_map(|l| l.split(" MHz").next())
            .next_back()
            .expect("Fmax in the log");
        assert!(line.contains(&format!(": {f} MHz, ")), "{line} / {f}");
        figs.push(f.parse::<f64>().unwrap());
        // FROM -> TO (logic, routing), the cells named as the HDL does.
        let (from, rest) = line
            .split_once(" MHz, ")
            .unwrap()
            .1
            .split_once(" -> ")
            .unwrap();
        assert!(
            from.starts_with("core.") || from.starts_with("chain"),
            "{line}"
        );
        assert!(
            rest.contains(" ns logic, ") && rest.ends_with(" ns routing)"),
            "{line}"
        );
        assert!(!rest.contains("_SB_"), "vendor suffix left in {line}");
    }
    let mean = figs.iter().sum::<f64>() / figs.len() as f64;
    assert!(
        fmax.contains(&format!("mean {mean:.1} MHz")),
        "{fmax} / {mean}"
    );
}

#[test]
fn bad_jobs_fail_with_a_message() {
    let out = synth(&["crc32", "64", "--target", "ice40", "--jobs", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--jobs must be a whole number"));
    let out = synth(&["crc32", "64", "--target", "xc7", "--jobs", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--jobs needs a placed target"));
}

#[test]
fn bad_placer_fails_with_a_message() {
    let out = synth(&["crc32", "64", "--target", "ecp5", "--placer", "sa"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown placer 'sa'; valid placers: heap, static"),
        "{err}"
    );
    let out = synth(&["crc32", "64", "--target", "ice40", "--placer", "static"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--placer is for the ecp5 target"), "{err}");
    let out = synth(&["crc32", "64", "--target", "ice40", "--no-ripup"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--no-ripup is for the ecp5 target"), "{err}");
}

#[test]
fn bad_target_lists_targets() {
    let out = synth(&["crc32", "64", "--target", "virtex2"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown target 'virtex2'") && err.contains("xc7, ice40, ecp5"),
        "{err}"
    );
}

#[test]
fn bad_block_and_width_fail_with_roce_gen_message() {
    let out = synth(&["crc99", "64", "--target", "xc7"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("valid blocks"));
    let out = synth(&["crc32", "96", "--target", "xc7"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("valid widths"));
}

#[test]
fn missing_tool_names_the_package() {
    // A PATH with only what the script needs before its tool check.
    let bin = Path::new(env!("CARGO_TARGET_TMPDIR")).join("synth_path");
    let _ = std::fs::remove_dir_all(&bin);
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink("/usr/bin/dirname", bin.join("dirname")).unwrap();
    let out = Command::new("/bin/bash")
        .arg(root().join("scripts/synth"))
        .args(["crc32", "64", "--target", "xc7"])
        .env_clear()
        .env("PATH", &bin)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'yosys' not found: install package yosys"),
        "{err}"
    );
}

/// Writes `text` to a constraints file of this test binary's scratch
/// directory and returns its path.
fn constraints_file(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("synth_constraints");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn bad_constraints_fail_before_synthesis() {
    let cases = [
        (
            "verb.ecp5",
            "placer static\nlocate core.x X4/Y22/EBR0\n",
            "verb.ecp5:2: unknown directive 'locate' (valid: placer, bel)",
        ),
        ("placer.ecp5", "placer sa\n", "unknown placer 'sa' (from "),
        (
            "placer2.ecp5",
            "placer heap static\n",
            "placer2.ecp5:1: expected 'placer NAME'",
        ),
        (
            "site.ecp5",
            "bel core.x R22C4\n",
            "site.ecp5:1: site 'R22C4' is not a nextpnr-ecp5 BEL name",
        ),
        (
            "twice.ecp5",
            "bel core.x X4/Y22/EBR0\nbel core.y X4/Y22/EBR0\n",
            "twice.ecp5:2: site 'X4/Y22/EBR0' already holds 'core.x'",
        ),
    ];
    for (name, text, want) in cases {
        let path = constraints_file(name, text);
        let out = synth(&[
            "crc32",
            "64",
            "--target",
            "ecp5",
            "--constraints",
            path.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{name}: {err}");
        // Refused before synthesis: nothing was generated for the block.
        assert!(out.stdout.is_empty(), "{name}");
    }
    let out = synth(&[
        "crc32",
        "64",
        "--target",
        "ecp5",
        "--constraints",
        "/nonexistent.ecp5",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("constraints file '/nonexistent.ecp5' not found"));
    let out = synth(&["crc32", "64", "--target", "ice40", "--constraints", "none"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--constraints is for the ecp5 target"));
}

/// The small `mr_tlb` build (it has block RAMs) placed on ECP5 with a
/// constraints file.
fn small_mr_tlb_on_ecp5(constraints: &Path) -> Output {
    synth(&[
        "mr_tlb",
        "64",
        "--target",
        "ecp5",
        "--constraints",
        constraints.to_str().unwrap(),
    ])
}

/// A constraints file reaches nextpnr: a block RAM of the small `mr_tlb`
/// build fixed at a block-RAM site places (and the netlist nextpnr reads
/// carries the site), the same cell at a site the device lacks fails place
/// and route with nextpnr's error and a non-zero exit, and a cell the
/// netlist lacks is refused by name.
#[test]
fn ecp5_constraints_reach_nextpnr() {
    let good = constraints_file(
        "good.ecp5",
        "# one block RAM\nplacer heap\nbel core.mr.bram_0_0 X4/Y22/EBR0\n",
    );
    let out = small_mr_tlb_on_ecp5(&good);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("(1 cells at fixed sites)"), "{text}");
    // The build's other block RAMs are not in the file: placed freely, and
    // the run says so.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("DP16KD cell(s) of mr_tlb_w64_shell not in") && err.contains("placed freely"),
        "{err}"
    );
    // The file's placer, and the router's timing-driven rip-up by default.
    assert!(text.contains("heap placer, --tmg-ripup"), "{text}");
    let dir = root().join("build/synth/mr_tlb_w64");
    // (The router's timing-driven rip-up reports the arcs it ripped up.)
    let log = std::fs::read_to_string(dir.join("ecp5.pnr.log")).unwrap();
    assert!(log.contains("ripped up due to negative slack"), "{log}");
    let netlist = std::fs::read_to_string(dir.join("ecp5.constrained.json")).unwrap();
    assert_eq!(netlist.matches("\"BEL\": \"X4/Y22/EBR0\"").count(), 1);

    // The site's column holds no block RAM (they are at x = 4, 6, 8, 10, 13, ...).
    let bad = constraints_file("bad_site.ecp5", "bel core.mr.bram_0_0 X5/Y22/EBR0\n");
    let out = small_mr_tlb_on_ecp5(&bad);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("place and route failed at seed 1"), "{text}");
    assert!(text.contains("X5/Y22/EBR0"), "{text}");

    let missing = constraints_file("missing.ecp5", "bel core.mr.bram_9_9 X4/Y22/EBR0\n");
    let out = Command::new("python3")
        .arg(root().join("scripts/ecp5_constraints"))
        .arg(&missing)
        .arg(dir.join("ecp5.json"))
        .arg(dir.join("missing.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cell 'core.mr.bram_9_9' is not in the netlist of mr_tlb_w64_shell"),
        "{err}"
    );
}
