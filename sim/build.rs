//! Verilate the roce-hw blocks the test benches use (see build/bridge.rs).

#[path = "build/bridge.rs"]
mod bridge;

use roce_hw::prim::FAST_SIM_DEFINE;
use std::path::PathBuf;

/// Which form of the XOR networks a model simulates.
#[derive(Copy, Clone, PartialEq)]
enum Variant {
    /// Word-parallel matrix rows (`ROCE_FAST_SIM`): the default models.
    Fast,
    /// The exact Verilog synthesis sees (shared XOR networks): `*Synth`.
    Synth,
}

/// (block, width, variant) with a Verilator model in `roce_sim::models`.
const MODELS: &[(&str, usize, Variant)] = &[
    ("crc32", 64, Variant::Fast),
    ("crc32", 128, Variant::Fast),
    ("crc32", 256, Variant::Fast),
    ("crc32", 512, Variant::Fast),
    ("crc32", 64, Variant::Synth),
    ("crc32", 512, Variant::Synth),
    ("axis_register", 64, Variant::Fast),
    ("axis_register", 512, Variant::Fast),
    ("tx_header", 64, Variant::Fast),
    ("tx_header", 512, Variant::Fast),
    ("roce_tx", 64, Variant::Fast),
    ("roce_tx", 128, Variant::Fast),
    ("roce_tx", 256, Variant::Fast),
    ("roce_tx", 512, Variant::Fast),
    ("roce_rx", 64, Variant::Fast),
    ("roce_rx", 128, Variant::Fast),
    ("roce_rx", 256, Variant::Fast),
    ("roce_rx", 512, Variant::Fast),
    // mr_tlb: the "width" is the MR-table size (64: small test build,
    // 4096: the default build). No XOR matrices, so one form.
    ("mr_tlb", 64, Variant::Fast),
    ("mr_tlb", 4096, Variant::Fast),
    // csr: the "width" is the number of QP contexts (the default build).
    ("csr", 256, Variant::Fast),
    // The 1-cycle datapath forms of the context table's datapath copy
    // (block RAM without its output register, LUT RAM), 64 contexts.
    ("csr_bram", 64, Variant::Fast),
    ("csr_lutram", 64, Variant::Fast),
    // The NIC's form: three datapath read ports, 64 contexts.
    ("csr_nic", 64, Variant::Fast),
    // mr_ctrl (csr + mr_tlb): the "width" is the MR-table size, as mr_tlb.
    ("mr_ctrl", 64, Variant::Fast),
    ("mr_ctrl", 4096, Variant::Fast),
    // qp_timers: the "width" is the number of timer entries.
    ("qp_timers", 128, Variant::Fast),
    ("qp_timers", 2048, Variant::Fast),
    // retx_buf: the test build (64 QPs, 16 slots of 1024 bytes) at both
    // ends of the width range, and the default build (1024 QPs, 64 slots
    // of 4096 bytes) at 64 bits.
    ("retx_buf_small", 64, Variant::Fast),
    ("retx_buf_small", 512, Variant::Fast),
    ("retx_buf", 64, Variant::Fast),
    // resp_chk: the "width" is the number of QPs (64: test build).
    ("resp_chk", 64, Variant::Fast),
    // The responder (resp_chk + resp_exec + DMA engines), 64-QP test build.
    ("resp_top_small", 64, Variant::Fast),
    // req_engine: the 64-QP test build.
    ("req_engine_small", 64, Variant::Fast),
    // The whole RC transport, 64-QP test build.
    ("rc_transport_small", 64, Variant::Fast),
    // tx_arb (1024 QPs) alone at 64 bits (throughput and latency), and
    // joined with roce_tx (64 QPs) at both ends of the width range.
    ("tx_arb", 64, Variant::Fast),
    ("tx_arb_tx", 64, Variant::Fast),
    ("tx_arb_tx", 512, Variant::Fast),
    // The DMA engines at both ends of the width range.
    ("dma_wr", 64, Variant::Fast),
    ("dma_wr", 512, Variant::Fast),
    ("dma_rd", 64, Variant::Fast),
    ("dma_rd", 512, Variant::Fast),
    // host_if: the 64-QP, 64-CQ test build at both ends of the width range.
    ("host_if_small", 64, Variant::Fast),
    ("host_if_small", 512, Variant::Fast),
    // The interconnect: the AXI4 arbiter at both ends of the width range
    // (the 3:1 cascade is two of them joined in the bench), the register bus.
    ("axi_arb", 64, Variant::Fast),
    ("axi_arb", 512, Variant::Fast),
    ("axil_bus", 32, Variant::Fast),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/bridge.rs");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_DIR");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let mut bridge = bridge::Bridge::new(out);
    bridge.runtime();
    for &(block, width, variant) in MODELS {
        let g = roce_hw::blocks::generate(block, width).unwrap_or_else(|e| panic!("{e}"));
        let (name, defines, about) = match variant {
            Variant::Fast => (
                g.top.clone(),
                vec![FAST_SIM_DEFINE],
                "word-parallel simulation form",
            ),
            Variant::Synth => (
                format!("{}_synth", g.top),
                vec![],
                "the exact Verilog synthesis sees",
            ),
        };
        bridge.model(&bridge::ModelInfo {
            name: &name,
            defines: &defines,
            about,
            block: &g,
        });
    }
    if let Some(pico) = picorv32_text() {
        fw_soc(&mut bridge, &pico);
        roce_nic(&mut bridge, &pico);
        println!("cargo:rustc-cfg=roce_picorv32");
    }
    bridge.finish();
}

/// Where `picorv32.v` is: `$ROCE_PICORV32_V`, else the PyPI package
/// `pythondata-cpu-picorv32` in the project venv `.venv` (scripts/setup).
fn find_picorv32() -> Result<PathBuf, String> {
    println!("cargo:rerun-if-env-changed=ROCE_PICORV32_V");
    if let Some(p) = std::env::var_os("ROCE_PICORV32_V") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("ROCE_PICORV32_V={} is not a file", p.display()))
        };
    }
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap())
        .parent()
        .unwrap()
        .to_path_buf();
    let python = root.join(".venv/bin/python");
    // Rerun when the venv appears or its packages change.
    println!("cargo:rerun-if-changed={}", root.join(".venv").display());
    let out = std::process::Command::new(&python)
        .args([
            "-c",
            "import pythondata_cpu_picorv32 as p; print(p.data_location)",
        ])
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} cannot import pythondata_cpu_picorv32",
            python.display()
        ));
    }
    let v = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("picorv32.v");
    if v.is_file() {
        Ok(v)
    } else {
        Err(format!("{} is missing", v.display()))
    }
}

/// `picorv32.v` without its `timescale` (one timescale for a whole model:
/// rust-hdl's Verilog has none). `None`, with a warning, when it is not
/// installed: the models that need it are left out (cfg `roce_picorv32`
/// unset) and `roce_sim::fw::picorv32` reports how to install it.
fn picorv32_text() -> Option<String> {
    println!("cargo::rustc-check-cfg=cfg(roce_picorv32)");
    let pico = match find_picorv32() {
        Ok(p) => p,
        Err(e) => {
            println!(
                "cargo:warning=PicoRV32 models (fw_soc, roce_nic) not built ({e}): run scripts/setup"
            );
            return None;
        }
    };
    println!("cargo:rerun-if-changed={}", pico.display());
    let text = std::fs::read_to_string(&pico).unwrap();
    Some(
        text.lines()
            .filter(|l| !l.trim_start().starts_with("`timescale"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// The whole NIC (`roce_nic` at W=64, its 64-QP build) with PicoRV32.
fn roce_nic(bridge: &mut bridge::Bridge, picorv32: &str) {
    assert_eq!(
        4u64 << roce_hw::roce_nic::FW_RAM_ABITS,
        fw_ram_bytes(),
        "roce_nic's firmware RAM against firmware/memory.x"
    );
    let mut g = roce_hw::blocks::generate("roce_nic", 64).unwrap_or_else(|e| panic!("{e}"));
    g.verilog = format!("{}\n{picorv32}\n", g.verilog);
    bridge.model(&bridge::ModelInfo {
        name: &g.top.clone(),
        defines: &[FAST_SIM_DEFINE],
        about: "the whole NIC (64 QPs) with PicoRV32, word-parallel simulation form",
        block: &g,
    });
}

/// The PicoRV32 SoC of the firmware co-simulation (`FwSoc`): the
/// hand-written top `verilog/fw_soc.v` around PicoRV32 and `csr_w256`,
/// sized by defines computed from roce-regs and the generated CSR block.
fn fw_soc(bridge: &mut bridge::Bridge, picorv32: &str) {
    println!("cargo:rerun-if-changed=verilog/fw_soc.v");
    let csr = roce_hw::blocks::generate("csr", roce_regs::QP_COUNT as usize)
        .unwrap_or_else(|e| panic!("{e}"));
    let width = |name: &str| {
        csr.ports
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("csr port {name}"))
            .width
    };
    let top = std::fs::read_to_string("verilog/fw_soc.v").unwrap();
    let ram_words = fw_ram_bytes() / 4;
    assert!(ram_words.is_power_of_two());
    let defines = [
        format!("FW_RAM_WORDS={ram_words}"),
        format!("FW_RAM_ABITS={}", ram_words.trailing_zeros()),
        format!("FW_CSR_BASE=32'd{}", roce_regs::CSR_BASE),
        format!("FW_CSR_ABITS={}", width("s_axil_awaddr")),
        format!("FW_CTR_BITS={}", width("counters")),
        format!("FW_QA={}", width("qp_rd_addr")),
        format!("FW_CTX_BITS={}", width("qp_rd_data")),
    ];
    assert_eq!(
        1u64 << width("s_axil_awaddr"),
        roce_regs::CSR_WINDOW_SIZE as u64
    );
    let g = roce_hw::blocks::Generated {
        block: "fw_soc",
        top: "fw_soc".into(),
        verilog: format!("{}\n{top}\n{picorv32}\n", csr.verilog),
        ports: vec![],
        params: vec![("RAM_WORDS", ram_words)],
        latency: None,
    };
    let defines: Vec<&str> = defines.iter().map(String::as_str).collect();
    bridge.model(&bridge::ModelInfo {
        name: "fw_soc",
        defines: &defines,
        about: "PicoRV32 with on-chip RAM and the CSR block (csr_w256), host AXI4-Lite port; \
                sim/verilog/fw_soc.v",
        block: &g,
    });
}

/// The firmware's RAM size, from `firmware/memory.x` (`LENGTH = 64K`).
fn fw_ram_bytes() -> u64 {
    println!("cargo:rerun-if-changed=../firmware/memory.x");
    let text = std::fs::read_to_string("../firmware/memory.x").unwrap();
    let len = text
        .split("LENGTH")
        .nth(1)
        .and_then(|s| s.split('=').nth(1))
        .map(|s| {
            s.split_whitespace()
                .next()
                .unwrap_or("")
                .trim_end_matches(',')
        })
        .expect("LENGTH in firmware/memory.x");
    match len.strip_suffix('K') {
        Some(k) => k.parse::<u64>().unwrap() * 1024,
        None => len.parse().unwrap(),
    }
}
