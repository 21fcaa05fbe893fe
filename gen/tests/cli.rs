//! The roce-gen binary: every block at every width lints clean in
//! Verilator with only the suppressions rust-hdl needs; bad arguments exit
//! non-zero naming the valid values.

use roce_hw::blocks::BLOCKS;
use roce_hw::verilog::VERILATOR_SUPPRESSIONS;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn roce_gen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roce-gen"))
        .args(args)
        .output()
        .expect("run roce-gen")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Lint both forms of the Verilog: as synthesis reads it, and with the
/// fast-simulation macro the test benches verilate it with.
fn lint(files: &[PathBuf], top: &str) {
    for define in [None, Some(format!("-D{}", roce_hw::prim::FAST_SIM_DEFINE))] {
        let out = Command::new("verilator")
            .args(["--lint-only", "--top-module", top])
            .args(VERILATOR_SUPPRESSIONS)
            .args(define.iter())
            .args(files)
            .output()
            .expect("verilator on PATH (scripts/setup installs it)");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "verilator --lint-only {top} {define:?} failed:\n{stderr}"
        );
        assert!(
            !stderr.contains("%Warning") && !stderr.contains("%Error"),
            "{stderr}"
        );
    }
}

/// Verilog a block needs beside its own: `roce_nic` instantiates
/// PicoRV32, whose `picorv32.v` comes from `$ROCE_PICORV32_V` or the
/// venv's `pythondata-cpu-picorv32` (scripts/setup), copied without its
/// `timescale` into `dir`.
fn beside(block: &str, dir: &Path) -> Vec<PathBuf> {
    if block != "roce_nic" {
        return Vec::new();
    }
    let src = match std::env::var_os("ROCE_PICORV32_V") {
        Some(p) => PathBuf::from(p),
        None => {
            let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python");
            let out = Command::new(&py)
                .args([
                    "-c",
                    "import pythondata_cpu_picorv32 as p; print(p.data_location)",
                ])
                .output()
                .unwrap_or_else(|e| panic!("{}: {e} (run scripts/setup)", py.display()));
            assert!(
                out.status.success(),
                "pythondata-cpu-picorv32: run scripts/setup"
            );
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("picorv32.v")
        }
    };
    let text = std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    let v = dir.join("picorv32.v");
    let body: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("`timescale"))
        .collect();
    std::fs::write(&v, body.join("\n")).unwrap();
    vec![v]
}

#[test]
fn every_block_and_width_lints_clean() {
    for b in BLOCKS {
        for &w in b.widths {
            let dir = scratch(&format!("lint_{}_{w}", b.name));
            let out = roce_gen(&[
                "verilog",
                "--block",
                b.name,
                "--width",
                &w.to_string(),
                "--out",
                dir.to_str().unwrap(),
                "--shell",
            ]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let top = format!("{}_w{w}", b.name);
            let v = dir.join(format!("{top}.v"));
            let shell = dir.join(format!("{top}_shell.v"));
            let manifest = std::fs::read_to_string(dir.join(format!("{top}.json"))).unwrap();
            assert!(manifest.contains(&format!("\"top\": \"{top}\"")));
            assert!(manifest.contains(&format!("\"W\": {w}")));
            let extra = beside(b.name, &dir);
            lint(&[vec![v.clone()], extra.clone()].concat(), &top);
            lint(&[vec![shell, v], extra].concat(), &format!("{top}_shell"));
        }
    }
}

#[test]
fn unknown_block_lists_blocks() {
    let out = roce_gen(&[
        "verilog",
        "--block",
        "crc64",
        "--width",
        "64",
        "--out",
        "/tmp/unused",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown block 'crc64'")
            && err.contains("crc32")
            && err.contains("axis_register"),
        "{err}"
    );
}

#[test]
fn unknown_width_lists_widths() {
    let out = roce_gen(&[
        "verilog",
        "--block",
        "crc32",
        "--width",
        "100",
        "--out",
        "/tmp/unused",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no width 100") && err.contains("64, 128, 256, 512"),
        "{err}"
    );
    let out = roce_gen(&[
        "verilog",
        "--block",
        "crc32",
        "--width",
        "wide",
        "--out",
        "/tmp/unused",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid value 'wide'"));
}

#[test]
fn unwritable_output_names_the_path() {
    let out = roce_gen(&[
        "verilog",
        "--block",
        "crc32",
        "--width",
        "64",
        "--out",
        "/proc/roce-gen-test",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/proc/roce-gen-test"));
}

#[test]
fn list_names_every_block() {
    let out = roce_gen(&["list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for b in BLOCKS {
        assert!(text.contains(b.name));
    }
}
