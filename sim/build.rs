//! Verilate the roce-hw blocks the test benches use (see build/bridge.rs).

#[path = "build/bridge.rs"]
mod bridge;

use std::path::PathBuf;

/// (block, width) pairs with a Verilator model in `roce_sim::models`.
const MODELS: &[(&str, usize)] = &[
    ("crc32", 64),
    ("crc32", 128),
    ("crc32", 256),
    ("crc32", 512),
    ("axis_register", 64),
    ("axis_register", 512),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/bridge.rs");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_DIR");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let mut bridge = bridge::Bridge::new(out);
    bridge.runtime();
    for &(block, width) in MODELS {
        let g = roce_hw::blocks::generate(block, width).unwrap_or_else(|e| panic!("{e}"));
        bridge.model(&bridge::ModelInfo {
            top: &g.top,
            verilog: &g.verilog,
            params: &g.params,
            latency: g.latency,
        });
    }
    bridge.finish();
}
