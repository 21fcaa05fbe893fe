//! Small helpers over the Verilog text rust-hdl emits: give the top module
//! its own name and read back its port list.

use std::fmt;

/// The Verilator warnings rust-hdl's Verilog trips by design (DESIGN §4):
/// WIDTH everywhere, UNOPTFLAT in FIFOs. Everything that verilates or lints
/// generated Verilog passes exactly these.
pub const VERILATOR_SUPPRESSIONS: &[&str] = &["-Wno-WIDTH", "-Wno-UNOPTFLAT"];

/// Direction of a top-level port.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dir {
    Input,
    Output,
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dir::Input => "input",
            Dir::Output => "output",
        })
    }
}

/// One port of a generated top module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    /// The Verilog name; rust-hdl joins interface and field with `$`
    /// (`s_axis$tdata`).
    pub name: String,
    pub dir: Dir,
    pub width: usize,
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// rust-hdl names the top module `top` and every submodule `top$path`.
/// Rename them all to `name` / `name$path`, so several generated blocks can
/// live in one design.
pub fn rename_top(verilog: &str, name: &str) -> String {
    let mut out = String::with_capacity(verilog.len() + 4096);
    let mut prev: Option<char> = None;
    let mut rest = verilog;
    while !rest.is_empty() {
        let at_word_start = !prev.is_some_and(is_ident_char);
        if at_word_start && rest.starts_with("top") {
            let after = rest[3..].chars().next();
            let is_top_module = after == Some('$') || rest.starts_with("top(");
            // Only module names: `top(` follows `module `, `top$x` is a
            // submodule name (in a definition or an instantiation).
            if is_top_module && (after == Some('$') || out.ends_with("module ")) {
                out.push_str(name);
                rest = &rest[3..];
                prev = Some('p');
                continue;
            }
        }
        let c = rest.chars().next().unwrap();
        out.push(c);
        prev = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Ports of module `top`, in declaration order.
pub fn ports(verilog: &str, top: &str) -> Vec<Port> {
    let header = format!("module {top}(");
    let Some(start) = verilog.find(&header) else {
        return Vec::new();
    };
    let body = &verilog[start..];
    let body = &body[..body.find("endmodule").unwrap_or(body.len())];
    let mut ports = Vec::new();
    for line in body.lines() {
        let words: Vec<&str> = line
            .trim()
            .trim_end_matches(';')
            .split_whitespace()
            .collect();
        let dir = match words.first() {
            Some(&"input") => Dir::Input,
            Some(&"output") => Dir::Output,
            _ => continue,
        };
        let (width, name) = match &words[1..] {
            [_kind, range, name] if range.starts_with('[') => (range_width(range), *name),
            [_kind, name] => (1, *name),
            _ => continue,
        };
        ports.push(Port {
            name: name.to_string(),
            dir,
            width,
        });
    }
    ports
}

fn range_width(range: &str) -> usize {
    let inner = range.trim_start_matches('[').trim_end_matches(']');
    let (hi, lo) = inner.split_once(':').unwrap_or((inner, "0"));
    let hi: usize = hi.trim().parse().unwrap_or(0);
    let lo: usize = lo.trim().parse().unwrap_or(0);
    hi.abs_diff(lo) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\n\nmodule top(clock,x,y);\n    input wire  clock;\n    input wire  [63:0] x;\n    output reg  [31:0] y;\n    top$m m(\n        .x(m$x)\n    );\nendmodule // top\n\nmodule top$m(x);\n    input wire  [63:0] x;\n    reg [1:0] stop$x;\nendmodule\n";

    #[test]
    fn rename_top_renames_modules_only() {
        let v = rename_top(SAMPLE, "crc32_w64");
        assert!(v.contains("module crc32_w64(clock,x,y);"));
        assert!(v.contains("crc32_w64$m m("));
        assert!(v.contains("module crc32_w64$m(x);"));
        assert!(
            v.contains("stop$x"),
            "identifiers ending in top are untouched"
        );
        assert!(v.contains("endmodule // top"), "comments keep their text");
    }

    #[test]
    fn ports_parse() {
        let p = ports(SAMPLE, "top");
        assert_eq!(
            p,
            vec![
                Port {
                    name: "clock".into(),
                    dir: Dir::Input,
                    width: 1
                },
                Port {
                    name: "x".into(),
                    dir: Dir::Input,
                    width: 64
                },
                Port {
                    name: "y".into(),
                    dir: Dir::Output,
                    width: 32
                },
            ]
        );
        assert!(ports(SAMPLE, "nope").is_empty());
    }
}
