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
    ("roce_tx", 512, Variant::Fast),
    ("roce_rx", 64, Variant::Fast),
    ("roce_rx", 512, Variant::Fast),
    // mr_tlb: the "width" is the MR-table size (64: small test build,
    // 4096: the default build). No XOR matrices, so one form.
    ("mr_tlb", 64, Variant::Fast),
    ("mr_tlb", 4096, Variant::Fast),
    // csr: the "width" is the number of QP contexts (the default build).
    ("csr", 256, Variant::Fast),
    // mr_ctrl (csr + mr_tlb): the "width" is the MR-table size, as mr_tlb.
    ("mr_ctrl", 64, Variant::Fast),
    ("mr_ctrl", 4096, Variant::Fast),
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
    bridge.finish();
}
