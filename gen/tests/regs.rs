//! `roce-gen regs`: the committed docs/REGISTERS.md is the generator's
//! output; the C header compiles and its values equal the register table;
//! the JSON parses back to the table; a bad format is refused.

use roce_regs::{CONSTANTS, ENUMS, FORMATS, MAP};
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Output};

fn roce_gen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roce-gen"))
        .args(args)
        .output()
        .expect("run roce-gen")
}

fn stdout_of(args: &[&str]) -> String {
    let out = roce_gen(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn committed_register_doc_is_current() {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/REGISTERS.md");
    let committed = std::fs::read_to_string(&doc).expect("docs/REGISTERS.md");
    let generated = stdout_of(&["regs", "--format", "md"]);
    assert!(
        committed == generated,
        "docs/REGISTERS.md is stale: run `cargo run -p roce-gen -- regs --format md --out docs/REGISTERS.md`"
    );
    // It documents every block and register.
    for b in MAP {
        for r in b.registers {
            assert!(generated.contains(&format!("### {}.{}", b.name, r.name)));
        }
    }
    // One table per queue format, a row per field.
    for f in FORMATS {
        assert!(generated.contains(&format!("### {} ({} bytes)", f.name, f.size)));
        for q in f.fields.iter().chain(f.overlays) {
            assert!(
                generated.contains(&format!("`{}`", q.name)),
                "{}.{}",
                f.name,
                q.name
            );
        }
    }
}

fn up(s: &str) -> String {
    s.to_ascii_uppercase().replace('-', "_")
}

#[test]
fn c_header_compiles_and_matches_the_table() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("regs_c");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let header = dir.join("roce_regs.h");
    let out = roce_gen(&["regs", "--format", "c", "--out", header.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A C file asserting, at compile time, every value against the table.
    // Included twice: the include guard works.
    let mut c = String::from("#include \"roce_regs.h\"\n#include \"roce_regs.h\"\n");
    let mut check = |expr: String, want: u64| {
        writeln!(c, "_Static_assert(({expr}) == {want}u, \"{expr}\");").unwrap();
    };
    for (name, value, _) in CONSTANTS {
        check(format!("ROCE_{name}"), (*value).into());
    }
    for b in MAP {
        let bn = up(b.name);
        check(format!("ROCE_{bn}_BASE"), b.base.into());
        check(format!("ROCE_{bn}_TYPE"), b.type_id.into());
        for r in b.registers {
            let reg = format!("ROCE_{bn}_{}", up(r.name));
            if r.count == 1 {
                check(reg.clone(), (b.base + r.offset).into());
            } else {
                check(format!("{reg}(0)"), (b.base + r.offset).into());
                let last = r.count - 1;
                check(
                    format!("{reg}({last})"),
                    (b.base + r.element_offset(last)).into(),
                );
                check(format!("{reg}_NUM"), r.count.into());
            }
            check(format!("{reg}_RESET"), r.reset().into());
            for f in r.fields {
                check(format!("{reg}_{}_SHIFT", f.name), f.lsb.into());
                check(format!("{reg}_{}_MASK", f.name), f.mask().into());
            }
        }
    }
    for f in FORMATS {
        for q in f.fields.iter().chain(f.overlays) {
            let n = format!("ROCE_{}_{}", up(f.name), q.name);
            if q.count == 1 {
                check(format!("{n}_OFFSET"), q.offset.into());
            } else {
                check(format!("{n}_OFFSET(0)"), q.offset.into());
                let last = q.count as usize - 1;
                check(format!("{n}_OFFSET({last})"), q.offset_of(last) as u64);
                check(format!("{n}_NUM"), q.count.into());
            }
            check(format!("{n}_BYTES"), q.bytes.into());
            check(format!("{n}_SHIFT"), q.lsb.into());
            check(format!("{n}_MASK"), q.max() << q.lsb);
        }
    }
    for e in ENUMS {
        for v in e.values {
            check(
                format!("ROCE_{}_{}", up(e.name), up(v.name)),
                v.value.into(),
            );
        }
    }
    c.push_str("int main(void) { return 0; }\n");
    let src = dir.join("check.c");
    std::fs::write(&src, c).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = match Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o"])
        .arg(dir.join("check"))
        .arg(&src)
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!("C compiler '{cc}' not runnable ({e}): scripts/setup installs g++/gcc"),
    };
    assert!(
        out.status.success(),
        "the generated header does not compile or disagrees with roce-regs:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn json_parses_back_to_the_table() {
    let text = stdout_of(&["regs", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    for (name, value, _) in CONSTANTS {
        assert_eq!(v["constants"][name], *value, "{name}");
    }
    let blocks = v["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), MAP.len());
    for (jb, b) in blocks.iter().zip(MAP) {
        assert_eq!(jb["name"], b.name);
        assert_eq!(jb["base"], b.base);
        assert_eq!(jb["size"], b.size);
        assert_eq!(jb["type"], b.type_id);
        let regs = jb["registers"].as_array().unwrap();
        assert_eq!(regs.len(), b.registers.len());
        for (jr, r) in regs.iter().zip(b.registers) {
            assert_eq!(jr["name"], r.name);
            assert_eq!(jr["offset"], r.offset);
            assert_eq!(jr["count"], r.count);
            assert_eq!(jr["stride"], r.stride);
            assert_eq!(jr["access"], r.access.name());
            assert_eq!(jr["reset"], r.reset());
            let fields = jr["fields"].as_array().unwrap();
            assert_eq!(fields.len(), r.fields.len());
            for (jf, f) in fields.iter().zip(r.fields) {
                assert_eq!(
                    (&jf["name"], &jf["lsb"], &jf["width"], &jf["reset"]),
                    (
                        &f.name.into(),
                        &f.lsb.into(),
                        &f.width.into(),
                        &f.reset.into()
                    )
                );
            }
        }
    }
    let formats = v["formats"].as_array().unwrap();
    assert_eq!(formats.len(), FORMATS.len());
    for (jf, f) in formats.iter().zip(FORMATS) {
        assert_eq!((&jf["name"], &jf["size"]), (&f.name.into(), &f.size.into()));
        let fields = jf["fields"].as_array().unwrap();
        assert_eq!(fields.len(), f.fields.len() + f.overlays.len());
        for (jq, q) in fields.iter().zip(f.fields.iter().chain(f.overlays)) {
            let got: Vec<u64> = ["offset", "bytes", "lsb", "width", "count", "stride"]
                .iter()
                .map(|k| jq[k].as_u64().unwrap())
                .collect();
            let want: Vec<u64> = vec![
                q.offset.into(),
                q.bytes.into(),
                q.lsb.into(),
                q.width.into(),
                q.count.into(),
                q.stride.into(),
            ];
            assert_eq!((jq["name"].as_str().unwrap(), got), (q.name, want));
        }
    }
    let enums = v["enums"].as_array().unwrap();
    assert_eq!(enums.len(), ENUMS.len());
    for (je, e) in enums.iter().zip(ENUMS) {
        assert_eq!(je["name"], e.name);
        let values: Vec<(String, u64)> = je["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["name"].as_str().unwrap().to_string(),
                    x["value"].as_u64().unwrap(),
                )
            })
            .collect();
        let want: Vec<(String, u64)> = e
            .values
            .iter()
            .map(|x| (x.name.to_string(), x.value.into()))
            .collect();
        assert_eq!(values, want);
    }
}

#[test]
fn bad_format_is_refused() {
    let out = roce_gen(&["regs", "--format", "yaml"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid value 'yaml'") && err.contains("md") && err.contains("json"),
        "{err}"
    );
    let out = roce_gen(&["regs"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--format"));
}

#[test]
fn unwritable_output_names_the_path() {
    let out = roce_gen(&["regs", "--format", "c", "--out", "/proc/roce-gen-regs.h"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/proc/roce-gen-regs.h"));
}
