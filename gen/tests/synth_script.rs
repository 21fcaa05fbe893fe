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
