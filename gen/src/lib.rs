//! roce-gen: turn roce-hw blocks into files a hardware flow consumes.
//!
//! - `<top>.v`: the block's Verilog (rust-hdl output, top renamed);
//! - `<top>.json`: a manifest (block, parameters, latency, ports, the
//!   Verilator lint flags the Verilog needs);
//! - `<top>_shell.v` (optional): a synthesis shell that loads every core
//!   input from a scan chain and captures every output, so all core paths
//!   are register to register and the design fits a small package for
//!   place and route. Only for measurement, never for a real design.
//!
//! And [`regs`]: the register map of roce-regs as Markdown, C and JSON.

pub mod regs;

use roce_hw::blocks::Generated;
use roce_hw::verilog::{Dir, VERILATOR_SUPPRESSIONS};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub(crate) fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).unwrap(),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The manifest of a generated block, as JSON.
pub fn manifest_json(g: &Generated) -> String {
    let mut s = String::from("{\n");
    writeln!(s, "  \"block\": {},", json_str(g.block)).unwrap();
    writeln!(s, "  \"top\": {},", json_str(&g.top)).unwrap();
    writeln!(
        s,
        "  \"generator\": {},",
        json_str(concat!("roce-gen ", env!("CARGO_PKG_VERSION")))
    )
    .unwrap();
    writeln!(s, "  \"verilog\": {},", json_str(&format!("{}.v", g.top))).unwrap();
    let params: Vec<String> = g
        .params
        .iter()
        .map(|(k, v)| format!("{}: {v}", json_str(k)))
        .collect();
    writeln!(s, "  \"parameters\": {{{}}},", params.join(", ")).unwrap();
    match g.latency {
        Some(l) => writeln!(s, "  \"latency_cycles\": {l},").unwrap(),
        None => writeln!(s, "  \"latency_cycles\": null,").unwrap(),
    }
    let flags: Vec<String> = VERILATOR_SUPPRESSIONS.iter().map(|f| json_str(f)).collect();
    writeln!(s, "  \"verilator_lint_flags\": [{}],", flags.join(", ")).unwrap();
    s.push_str("  \"ports\": [\n");
    let ports: Vec<String> = g
        .ports
        .iter()
        .map(|p| {
            format!(
                "    {{\"name\": {}, \"direction\": \"{}\", \"width\": {}}}",
                json_str(&p.name),
                p.dir,
                p.width
            )
        })
        .collect();
    s.push_str(&ports.join(",\n"));
    s.push_str("\n  ]\n}\n");
    s
}

/// A synthesis shell around the block (see the crate docs). Ports:
/// `clk`, `scan_in`, `scan_en`, `scan_out`.
pub fn shell_verilog(g: &Generated) -> String {
    let inputs: Vec<_> = g
        .ports
        .iter()
        .filter(|p| p.dir == Dir::Input && p.name != "clock")
        .collect();
    let outputs: Vec<_> = g.ports.iter().filter(|p| p.dir == Dir::Output).collect();
    let n_in: usize = inputs.iter().map(|p| p.width).sum();
    let n_out: usize = outputs.iter().map(|p| p.width).sum();
    assert!(n_in > 0 && n_out > 0, "a block with inputs and outputs");
    let top = &g.top;
    let mut s = String::new();
    writeln!(
        s,
        "// Synthesis shell for {top} (roce-gen): inputs from a {n_in}-bit scan chain,\n// outputs captured into a {n_out}-bit chain. For timing and area reports only."
    )
    .unwrap();
    writeln!(s, "module {top}_shell(clk, scan_in, scan_en, scan_out);").unwrap();
    writeln!(s, "    input wire clk;\n    input wire scan_in;\n    input wire scan_en;\n    output wire scan_out;").unwrap();
    writeln!(s, "    reg [{}:0] chain_in;", n_in - 1).unwrap();
    if n_in == 1 {
        writeln!(s, "    always @(posedge clk) chain_in <= scan_in;").unwrap();
    } else {
        writeln!(
            s,
            "    always @(posedge clk) chain_in <= {{chain_in[{}:0], scan_in}};",
            n_in - 2
        )
        .unwrap();
    }
    for (i, p) in outputs.iter().enumerate() {
        writeln!(
            s,
            "    wire [{}:0] core_out_{i}; // {}",
            p.width - 1,
            p.name
        )
        .unwrap();
    }
    let mut conns = Vec::new();
    if g.ports.iter().any(|p| p.name == "clock") {
        conns.push("        .clock(clk)".to_string());
    }
    let mut off = 0;
    for p in &inputs {
        conns.push(format!(
            "        .{}(chain_in[{}:{}])",
            p.name,
            off + p.width - 1,
            off
        ));
        off += p.width;
    }
    for (i, p) in outputs.iter().enumerate() {
        conns.push(format!("        .{}(core_out_{i})", p.name));
    }
    writeln!(s, "    {top} core(\n{}\n    );", conns.join(",\n")).unwrap();
    let captured: Vec<String> = (0..outputs.len())
        .map(|i| format!("core_out_{i}"))
        .collect();
    writeln!(s, "    reg [{}:0] chain_out;", n_out - 1).unwrap();
    let shift = if n_out == 1 {
        "1'b0".to_string()
    } else {
        format!("{{chain_out[{}:0], 1'b0}}", n_out - 2)
    };
    writeln!(
        s,
        "    always @(posedge clk) chain_out <= scan_en ? {shift} : {{{}}};",
        captured.join(", ")
    )
    .unwrap();
    writeln!(
        s,
        "    assign scan_out = chain_out[{}];\nendmodule",
        n_out - 1
    )
    .unwrap();
    s
}

/// Write `<top>.v`, `<top>.json` and, with `shell`, `<top>_shell.v` into
/// `dir` (created if missing). Returns the paths written.
pub fn write_outputs(g: &Generated, dir: &Path, shell: bool) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create output directory {}: {e}", dir.display()))?;
    let mut files = vec![
        (dir.join(format!("{}.v", g.top)), g.verilog.clone()),
        (dir.join(format!("{}.json", g.top)), manifest_json(g)),
    ];
    if shell {
        files.push((dir.join(format!("{}_shell.v", g.top)), shell_verilog(g)));
    }
    let mut written = Vec::new();
    for (path, text) in files {
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use roce_hw::blocks::generate;

    #[test]
    fn manifest_lists_every_port() {
        let g = generate("crc32", 512).unwrap();
        let m = manifest_json(&g);
        assert!(m.contains("\"top\": \"crc32_w512\""));
        assert!(m.contains("\"parameters\": {\"W\": 512, \"K\": 64}"));
        assert!(
            m.contains("{\"name\": \"s_axis$tdata\", \"direction\": \"input\", \"width\": 512}")
        );
        assert!(m.contains("{\"name\": \"m_crc$tready\", \"direction\": \"input\", \"width\": 1}"));
        assert_eq!(m.matches("\"direction\"").count(), g.ports.len());
        assert_eq!(json_str("a\"b\\\n"), "\"a\\\"b\\\\\\u000a\"");
    }

    #[test]
    fn shell_connects_every_port() {
        let g = generate("axis_register", 64).unwrap();
        let s = shell_verilog(&g);
        for p in &g.ports {
            assert!(
                s.contains(&format!(".{}(", p.name)),
                "{} unconnected",
                p.name
            );
        }
        // 64 + 8 + 1 + 1 + 1 data/keep/last/user/valid, tready in, reset.
        assert!(s.contains("reg [76:0] chain_in;"), "{s}");
    }
}
