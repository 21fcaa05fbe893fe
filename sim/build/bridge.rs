//! The Verilator bridge (DESIGN §4), run from `build.rs`.
//!
//! For each rust-hdl top: Verilog (from `roce_hw::blocks`) → `verilator --cc`
//! under its own prefix → every generated `.cpp` plus a generated
//! `extern "C"` shim compiled by `cc` into a static library → a typed Rust
//! wrapper appended to `$OUT_DIR/models.rs`.
//!
//! Verilated libraries are cached in `target/verilator-cache/<top>-<key>/`,
//! where the key hashes the Verilog text, the Verilator version, the flags
//! and this generator's own source: an unchanged model is never verilated or
//! compiled again, even after `roce-hw` changes elsewhere. A cache entry is
//! built in a temporary directory and renamed into place, so concurrent
//! builds (clippy and test) cannot see half an entry.

use roce_hw::blocks::Generated;
use roce_hw::verilog::VERILATOR_SUPPRESSIONS;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Flags every model is verilated with, besides the warnings rust-hdl's
/// Verilog trips by design (`roce_hw::verilog::VERILATOR_SUPPRESSIONS`).
const VERILATOR_FLAGS: &[&str] = &[
    "--cc",
    "-O3",
    "--x-assign",
    "fast",
    "--x-initial",
    "fast",
    "--noassert",
    "--trace",
    "-Wno-fatal",
];

/// Defines the verilated C++ expects (see `V<top>_classes.mk`).
const DEFINES: &[(&str, &str)] = &[
    ("VM_COVERAGE", "0"),
    ("VM_SC", "0"),
    ("VM_TRACE", "1"),
    ("VM_TRACE_VCD", "1"),
    ("VM_TRACE_FST", "0"),
    ("VL_IGNORE_UNKNOWN_ARCH", "1"),
];

/// This file's text: part of every cache key, so a change to the shim or
/// the flags rebuilds every model.
const GENERATOR_SOURCE: &str = include_str!("bridge.rs");

/// FNV-1a, 64 bit: a stable hash for cache keys.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!(
            "{what}: cannot run {:?}: {e} (is verilator installed? run scripts/setup)",
            cmd.get_program()
        )
    });
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One port as Verilator declares it in `V<top>.h`.
#[derive(Clone, Debug)]
pub struct CPort {
    /// Verilog name (`s_axis$tdata`).
    pub verilog: String,
    /// C++ member (`s_axis__024tdata`).
    pub member: String,
    /// Rust method suffix (`s_axis_tdata`).
    pub rust: String,
    pub input: bool,
    pub width: usize,
}

impl CPort {
    fn words(&self) -> usize {
        self.width.div_ceil(32)
    }
    fn wide(&self) -> bool {
        self.width > 64
    }
    /// Type of the Rust accessor's value.
    fn rust_type(&self) -> String {
        match self.width {
            1 => "bool".into(),
            2..=32 => "u32".into(),
            33..=64 => "u64".into(),
            _ => format!("[u32; {}]", self.words()),
        }
    }
    /// Bits of Verilator's storage word for the port (CData, SData, IData,
    /// QData; wide ports are arrays of 32-bit EData).
    fn storage_bits(&self) -> usize {
        match self.width {
            1..=8 => 8,
            9..=16 => 16,
            17..=32 | 65.. => 32,
            _ => 64,
        }
    }
    /// Mask for the storage word holding the port's top bits, when the port
    /// does not fill it (Verilator requires the unused bits clear).
    fn top_mask(&self) -> Option<u64> {
        let used = if self.wide() {
            self.width % 32
        } else {
            self.width
        };
        (used != 0 && used != self.storage_bits()).then(|| (1u64 << used) - 1)
    }
}

/// Read the ports from the `VL_IN*/VL_OUT*` declarations of a model header.
fn parse_header(header: &str) -> Vec<CPort> {
    let mut ports = Vec::new();
    for line in header.lines() {
        let line = line.trim();
        let input = if line.starts_with("VL_IN") {
            true
        } else if line.starts_with("VL_OUT") {
            false
        } else {
            continue;
        };
        let Some(args) = line.split_once("(&").map(|(_, a)| a.trim_end_matches(");")) else {
            continue;
        };
        let fields: Vec<&str> = args.split(',').map(str::trim).collect();
        let (member, msb, lsb) = (fields[0], fields[1], fields[2]);
        let width = msb.parse::<usize>().unwrap() - lsb.parse::<usize>().unwrap() + 1;
        let verilog = member.replace("__024", "$");
        let rust = verilog.replace('$', "_");
        ports.push(CPort {
            verilog,
            member: member.to_string(),
            rust,
            input,
            width,
        });
    }
    ports
}

pub struct Bridge {
    cache_root: PathBuf,
    include: PathBuf,
    version: String,
    out_dir: PathBuf,
    rust: String,
    /// Static libraries of the models, in link order.
    links: Vec<(PathBuf, String)>,
    /// Verilator's runtime library, linked after every model.
    runtime: Option<(PathBuf, String)>,
}

/// One model to build: a generated block in one Verilog form.
pub struct ModelInfo<'a> {
    /// Unique model name: the Verilator prefix is `V<name>`, the Rust type
    /// its CamelCase.
    pub name: &'a str,
    /// Verilog macros defined when verilating.
    pub defines: &'a [&'a str],
    /// One line on what this model is, for its Rust docs.
    pub about: &'a str,
    /// The block: top name, Verilog, parameters, latency.
    pub block: &'a Generated,
}

impl Bridge {
    pub fn new(out_dir: PathBuf) -> Self {
        let root = run(
            Command::new("verilator").args(["--getenv", "VERILATOR_ROOT"]),
            "verilator --getenv VERILATOR_ROOT",
        );
        let version = run(
            Command::new("verilator").arg("--version"),
            "verilator --version",
        )
        .trim()
        .to_string();
        // OUT_DIR is <target>/<profile>/build/<pkg>-<hash>/out.
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                out_dir
                    .ancestors()
                    .nth(4)
                    .expect("OUT_DIR layout")
                    .to_path_buf()
            });
        let cache_root = target.join("verilator-cache");
        fs::create_dir_all(&cache_root).unwrap();
        Bridge {
            cache_root,
            include: PathBuf::from(root.trim()).join("include"),
            version,
            out_dir,
            rust: String::new(),
            links: Vec::new(),
            runtime: None,
        }
    }

    fn cc(&self, opt: u32) -> cc::Build {
        let mut b = cc::Build::new();
        b.cpp(true)
            .std("c++17")
            .opt_level(opt)
            .debug(false)
            .warnings(false)
            .flag("-w")
            .flag("-faligned-new")
            .include(&self.include)
            .include(self.include.join("vltstd"))
            .cargo_metadata(false)
            .cargo_warnings(false);
        for (k, v) in DEFINES {
            b.define(k, Some(*v));
        }
        b
    }

    /// Build (or reuse) a cache entry: `build` fills a fresh directory that
    /// is renamed to `<name>-<key>` when complete.
    fn cached(&self, name: &str, key: u64, build: impl FnOnce(&Path)) -> PathBuf {
        let dir = self.cache_root.join(format!("{name}-{key:016x}"));
        if dir.join("done").exists() {
            return dir;
        }
        let tmp = self
            .cache_root
            .join(format!(".{name}-{key:016x}.{}", std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(&tmp).unwrap();
        build(&tmp);
        fs::write(tmp.join("done"), b"").unwrap();
        if fs::rename(&tmp, &dir).is_err() {
            // Another build finished the same entry first; use theirs.
            let _ = fs::remove_dir_all(&tmp);
            assert!(
                dir.join("done").exists(),
                "cache entry {} is incomplete",
                dir.display()
            );
        }
        self.prune(name);
        dir
    }

    /// Keep the newest `KEEP` entries of a model: older ones hold Verilog
    /// that has since changed (a few stay for builds that switch branches).
    fn prune(&self, name: &str) {
        const KEEP: usize = 3;
        let prefix = format!("{name}-");
        let Ok(entries) = fs::read_dir(&self.cache_root) else {
            return;
        };
        let mut found: Vec<(std::time::SystemTime, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.strip_prefix(&prefix).is_some_and(|key| {
                    key.len() == 16 && key.bytes().all(|b| b.is_ascii_hexdigit())
                })
            })
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        found.sort_by_key(|e| std::cmp::Reverse(e.0));
        for (_, old) in found.into_iter().skip(KEEP) {
            let _ = fs::remove_dir_all(old);
        }
        // Work directories of builds that failed (Verilator or C++ errors)
        // and are older than an hour: no build still writes them.
        let hidden = format!(".{name}-");
        for e in fs::read_dir(&self.cache_root)
            .into_iter()
            .flatten()
            .flatten()
        {
            let stale = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > 3600);
            if stale && e.file_name().to_string_lossy().starts_with(&hidden) {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    }

    /// Verilator's own runtime, compiled once per Verilator version.
    pub fn runtime(&mut self) {
        let key = fnv1a(&[self.version.as_bytes(), GENERATOR_SOURCE.as_bytes()]);
        let include = self.include.clone();
        let dir = self.cached("runtime", key, |dir| {
            let mut b = self.cc(2);
            for f in [
                "verilated.cpp",
                "verilated_threads.cpp",
                "verilated_vcd_c.cpp",
            ] {
                b.file(include.join(f));
            }
            b.out_dir(dir).compile("roce_verilated");
        });
        self.runtime = Some((dir, "roce_verilated".into()));
    }

    /// Verilate and compile one model and append its Rust wrapper.
    pub fn model(&mut self, info: &ModelInfo) {
        let top = info.block.top.as_str();
        let verilog = info.block.verilog.as_str();
        let name = info.name;
        let prefix = format!("V{name}");
        let defines = info.defines.join(" ");
        let key = fnv1a(&[
            verilog.as_bytes(),
            defines.as_bytes(),
            self.version.as_bytes(),
            GENERATOR_SOURCE.as_bytes(),
        ]);
        let dir = self.cached(name, key, |dir| {
            let vfile = dir.join(format!("{top}.v"));
            fs::write(&vfile, verilog).unwrap();
            let obj = dir.join("obj");
            run(
                Command::new("verilator")
                    .args(VERILATOR_FLAGS)
                    .args(VERILATOR_SUPPRESSIONS)
                    .args(info.defines.iter().map(|d| format!("-D{d}")))
                    .args(["--prefix", &prefix, "--top-module", top, "--Mdir"])
                    .arg(&obj)
                    .arg(&vfile),
                &format!("verilating {name}"),
            );
            let header = fs::read_to_string(obj.join(format!("{prefix}.h"))).unwrap();
            let ports = parse_header(&header);
            fs::write(obj.join("roce_shim.cpp"), shim(name, &prefix, &ports)).unwrap();
            // Hot code at -O2, construction/trace setup (`__Slow`) at -O0.
            let mut fast = self.cc(2);
            let mut slow = self.cc(0);
            fast.include(&obj);
            slow.include(&obj);
            let mut sources: Vec<PathBuf> = fs::read_dir(&obj)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
                .collect();
            sources.sort();
            for src in sources {
                if src.to_string_lossy().contains("__Slow") {
                    slow.file(src);
                } else {
                    fast.file(src);
                }
            }
            fast.out_dir(dir).compile(&format!("{prefix}_fast"));
            slow.out_dir(dir).compile(&format!("{prefix}_slow"));
        });
        let header = fs::read_to_string(dir.join("obj").join(format!("{prefix}.h"))).unwrap();
        let ports = parse_header(&header);
        self.links.push((dir.clone(), format!("{prefix}_fast")));
        self.links.push((dir, format!("{prefix}_slow")));
        self.rust.push_str(&wrapper(info, &ports));
    }

    /// Write `models.rs` and tell cargo what to link.
    pub fn finish(self) {
        let runtime = self.runtime.expect("Bridge::runtime() before finish()");
        // Models first, the runtime after them (static link order).
        for (dir, lib) in self.links.iter().chain([&runtime]) {
            println!("cargo:rustc-link-search=native={}", dir.display());
            println!("cargo:rustc-link-lib=static={lib}");
        }
        for lib in ["stdc++", "z", "pthread", "atomic"] {
            println!("cargo:rustc-link-lib=dylib={lib}");
        }
        let text = format!(
            "// Generated by sim/build/bridge.rs from the roce-hw block catalogue; {}.\n{}",
            self.version, self.rust
        );
        fs::write(self.out_dir.join("models.rs"), text).unwrap();
    }
}

fn camel(top: &str) -> String {
    top.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The `extern "C"` shim: one `VerilatedContext` per model instance, so
/// models of any kind can run in parallel threads.
fn shim(model: &str, prefix: &str, ports: &[CPort]) -> String {
    let mut s = String::new();
    let f = |name: &str| format!("roce_{model}_{name}");
    writeln!(s, "// Generated by roce-sim's bridge; do not edit.").unwrap();
    writeln!(s, "#include <cstdint>\n#include \"verilated.h\"\n#include \"verilated_vcd_c.h\"\n#include \"{prefix}.h\"").unwrap();
    writeln!(
        s,
        "namespace {{ struct Model {{ VerilatedContext ctx; {prefix}* top = nullptr; VerilatedVcdC* tfp = nullptr; }}; }}"
    )
    .unwrap();
    writeln!(s, "#define M(p) (static_cast<Model*>(p))").unwrap();
    writeln!(s, "extern \"C\" {{").unwrap();
    writeln!(
        s,
        "void* {}() {{ Model* m = new Model; m->ctx.traceEverOn(true); m->ctx.fatalOnError(false); m->top = new {prefix}(&m->ctx, \"TOP\"); return m; }}",
        f("new")
    )
    .unwrap();
    writeln!(
        s,
        "void {}(void* p) {{ Model* m = M(p); if (m->tfp) {{ m->tfp->close(); delete m->tfp; }} m->top->final(); delete m->top; delete m; }}",
        f("delete")
    )
    .unwrap();
    writeln!(s, "void {}(void* p) {{ M(p)->top->eval(); }}", f("eval")).unwrap();
    writeln!(
        s,
        "int {}(void* p, const char* path) {{ Model* m = M(p); if (m->tfp) return 0; m->tfp = new VerilatedVcdC; m->top->trace(m->tfp, 99); m->tfp->open(path); return m->tfp->isOpen() ? 1 : 0; }}",
        f("trace_open")
    )
    .unwrap();
    writeln!(
        s,
        "void {}(void* p, uint64_t t) {{ Model* m = M(p); if (m->tfp) m->tfp->dump(t); }}",
        f("trace_dump")
    )
    .unwrap();
    // Every port's storage, by index: the Rust wrapper reads and writes
    // ports through these addresses, with no call per access.
    writeln!(
        s,
        "void* {}(void* p, unsigned i) {{\n    auto* t = M(p)->top;\n    switch (i) {{",
        f("port")
    )
    .unwrap();
    for (i, p) in ports.iter().enumerate() {
        let addr = if p.wide() {
            format!("t->{}.data()", p.member)
        } else {
            format!("&t->{}", p.member)
        };
        writeln!(s, "    case {i}: return {addr};").unwrap();
    }
    writeln!(s, "    }}\n    return nullptr;\n}}").unwrap();
    writeln!(s, "}}").unwrap();
    s
}

/// A stream port group found by name: `<prefix>$tvalid` and friends.
struct StreamGroup<'a> {
    prefix: String,
    /// True when the model receives on it (`tvalid` is an input).
    input: bool,
    data: &'a CPort,
    keep: Option<&'a CPort>,
    last: Option<&'a CPort>,
    user: Option<&'a CPort>,
}

fn stream_groups(ports: &[CPort]) -> Vec<StreamGroup<'_>> {
    let find = |name: String| ports.iter().find(|p| p.verilog == name);
    ports
        .iter()
        .filter_map(|p| {
            let prefix = p.verilog.strip_suffix("$tvalid")?;
            find(format!("{prefix}$tready"))?;
            Some(StreamGroup {
                prefix: prefix.to_string(),
                input: p.input,
                data: find(format!("{prefix}$tdata"))?,
                keep: find(format!("{prefix}$tkeep")),
                last: find(format!("{prefix}$tlast")),
                user: find(format!("{prefix}$tuser")),
            })
        })
        .collect()
}

/// Rust expression converting a `u64`/`bool`/`[u32; N]` getter value into
/// the port's type, and back.
fn to_port(p: &CPort, expr: &str) -> String {
    match p.width {
        1 => format!("({expr}) != 0"),
        2..=32 => format!("({expr}) as u32"),
        33..=64 => format!("({expr}) as u64"),
        _ => expr.to_string(),
    }
}

fn wrapper(info: &ModelInfo, ports: &[CPort]) -> String {
    let top = &info.block.top;
    let ty = camel(info.name);
    let f = |name: &str| format!("roce_{}_{name}", info.name);
    let mut s = String::new();
    // FFI declarations.
    writeln!(s, "\nextern \"C\" {{").unwrap();
    writeln!(s, "    fn {}() -> *mut core::ffi::c_void;", f("new")).unwrap();
    for name in ["delete", "eval"] {
        writeln!(s, "    fn {}(p: *mut core::ffi::c_void);", f(name)).unwrap();
    }
    writeln!(
        s,
        "    fn {}(p: *mut core::ffi::c_void, path: *const core::ffi::c_char) -> i32;",
        f("trace_open")
    )
    .unwrap();
    writeln!(
        s,
        "    fn {}(p: *mut core::ffi::c_void, t: u64);",
        f("trace_dump")
    )
    .unwrap();
    writeln!(
        s,
        "    fn {}(p: *mut core::ffi::c_void, i: u32) -> *mut core::ffi::c_void;",
        f("port")
    )
    .unwrap();
    writeln!(s, "}}\n").unwrap();

    // The model type.
    let params: Vec<String> = info
        .block
        .params
        .iter()
        .map(|(k, v)| format!("(\"{k}\", {v})"))
        .collect();
    let ports_doc: Vec<String> = ports
        .iter()
        .map(|p| {
            format!(
                "/// - `{}`: {} {} bit{}",
                p.verilog,
                if p.input { "in" } else { "out" },
                p.width,
                if p.width == 1 { "" } else { "s" }
            )
        })
        .collect();
    writeln!(
        s,
        "/// Verilator model of `{top}`: {}.\n///\n/// Ports:\n{}\npub struct {ty} {{\n    raw: *mut core::ffi::c_void,\n    /// Address of each port's storage in the model (shim `port()`).\n    ports: [*mut core::ffi::c_void; {nports}],\n    time: u64,\n    cycles: u64,\n    tracing: bool,\n    clock_high: bool,\n}}\n",
        info.about,
        ports_doc.join("\n"),
        nports = ports.len()
    )
    .unwrap();
    writeln!(s, "// SAFETY: each instance owns its VerilatedContext and model; nothing is shared.\nunsafe impl Send for {ty} {{}}\n").unwrap();
    writeln!(s, "impl {ty} {{").unwrap();
    writeln!(
        s,
        "    /// Name of the Verilog top module.\n    pub const TOP: &'static str = \"{top}\";"
    )
    .unwrap();
    writeln!(
        s,
        "    /// Name of this model: the top plus its variant.\n    pub const NAME: &'static str = \"{}\";",
        info.name
    )
    .unwrap();
    writeln!(s, "    /// Block parameters (name, value).\n    pub const PARAMS: &'static [(&'static str, u64)] = &[{}];", params.join(", ")).unwrap();
    let latency = match info.block.latency {
        Some(l) => format!("Some({l})"),
        None => "None".into(),
    };
    writeln!(s, "    /// Documented latency in cycles, where the block has a fixed one.\n    pub const LATENCY: Option<usize> = {latency};").unwrap();
    writeln!(
        s,
        "    /// A model at time 0 with the clock low, traced when `ROCE_TRACE` is set.\n    pub fn new() -> Self {{\n        // SAFETY: the shim returns a fresh model owned by this value.\n        let raw = unsafe {{ {}() }};\n        let ports = std::array::from_fn(|i| {{\n            // SAFETY: `raw` is live; the shim knows every index below the port count.\n            let p = unsafe {{ {}(raw, i as u32) }};\n            assert!(!p.is_null(), \"port {{i}} of {top}\");\n            p\n        }});\n        let mut m = Self {{ raw, ports, time: 0, cycles: 0, tracing: false, clock_high: false }};\n        m.eval();\n        if let Some(path) = crate::model::trace_path_from_env(Self::NAME) {{\n            m.trace_to(&path).unwrap_or_else(|e| panic!(\"ROCE_TRACE: {{e}}\"));\n        }}\n        m\n    }}",
        f("new"),
        f("port")
    )
    .unwrap();
    writeln!(
        s,
        "    /// Write a VCD trace of this model to `path` from now on.\n    pub fn trace_to(&mut self, path: &std::path::Path) -> std::io::Result<()> {{\n        let c = crate::model::c_path(path)?;\n        // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.\n        if unsafe {{ {}(self.raw, c.as_ptr()) }} == 1 {{\n            unsafe {{ {}(self.raw, self.time) }};\n            self.tracing = true;\n            Ok(())\n        }} else {{\n            Err(std::io::Error::other(format!(\"cannot open trace {{}} (or already tracing)\", path.display())))\n        }}\n    }}",
        f("trace_open"),
        f("trace_dump")
    )
    .unwrap();
    // Port accessors: plain loads and stores at the addresses the shim
    // handed out, masked so unused storage bits stay clear as Verilator
    // requires. The pointers live as long as the model (`raw`).
    for (i, p) in ports.iter().enumerate() {
        let (rt, st, mask) = (
            p.rust_type(),
            format!("u{}", p.storage_bits()),
            p.top_mask(),
        );
        let at = format!("self.ports[{i}].cast::<{st}>()");
        if p.wide() {
            let n = p.words();
            if p.input {
                let clear = mask.map_or(String::new(), |m| {
                    format!("\n        let mut v = *v;\n        v[{}] &= {m:#x};", n - 1)
                });
                writeln!(s, "    #[inline]\n    pub fn set_{}(&mut self, v: &{rt}) {{{clear}\n        // SAFETY: the port's storage is {n} words.\n        unsafe {{ {at}.copy_from_nonoverlapping(v.as_ptr(), {n}) }}\n    }}", p.rust).unwrap();
            }
            writeln!(s, "    #[inline]\n    pub fn get_{}(&self) -> {rt} {{\n        let mut w = [0u32; {n}];\n        // SAFETY: the port's storage is {n} words.\n        unsafe {{ w.as_mut_ptr().copy_from_nonoverlapping({at}, {n}) }};\n        w\n    }}", p.rust).unwrap();
        } else {
            if p.input {
                let value = mask.map_or(format!("v as {st}"), |m| {
                    format!("((v as u64) & {m:#x}) as {st}")
                });
                writeln!(s, "    #[inline]\n    pub fn set_{}(&mut self, v: {rt}) {{\n        // SAFETY: the port's storage is one {st}.\n        unsafe {{ {at}.write({value}) }}\n    }}", p.rust).unwrap();
            }
            writeln!(s, "    #[inline]\n    pub fn get_{}(&self) -> {rt} {{\n        // SAFETY: the port's storage is one {st}.\n        let v = unsafe {{ {at}.read() }} as u64;\n        {}\n    }}", p.rust, to_port(p, "v")).unwrap();
        }
    }
    // Stream adapters.
    for g in stream_groups(ports) {
        let name = g.prefix.replace('$', "_");
        let adapter = format!("{ty}{}", camel(&name));
        writeln!(s, "    /// The `{}` stream, for the bus-functional models in [`crate::axis`].\n    pub fn {name}(&mut self) -> {adapter}<'_> {{\n        {adapter}(self)\n    }}", g.prefix).unwrap();
        s.push_str(&stream_adapter(&ty, &adapter, &name, &g));
    }
    writeln!(s, "}}\n").unwrap();

    let has_clock = ports.iter().any(|p| p.verilog == "clock" && p.input);
    // Without tracing, the falling edge is folded into the next eval():
    // nothing in a roce-hw block happens on it, and it saves an eval per
    // cycle. With tracing, both edges are evaluated and dumped.
    let (set_low, set_high) = if has_clock {
        ("self.set_clock(false);", "self.set_clock(true);")
    } else {
        ("", "")
    };
    let model_impl = MODEL_IMPL
        .replace("TY", &ty)
        .replace("EVAL_FN", &f("eval"))
        .replace("DUMP_FN", &f("trace_dump"))
        .replace("SET_LOW", set_low)
        .replace("SET_HIGH", set_high);
    s.push_str(&model_impl);
    writeln!(
        s,
        "impl Default for {ty} {{\n    fn default() -> Self {{\n        Self::new()\n    }}\n}}\n"
    )
    .unwrap();
    writeln!(
        s,
        "impl Drop for {ty} {{\n    fn drop(&mut self) {{\n        // SAFETY: `raw` came from the shim's constructor and is freed once.\n        unsafe {{ {}(self.raw) }}\n    }}\n}}",
        f("delete")
    )
    .unwrap();
    s
}

/// The clocking part of every model wrapper (placeholders in capitals).
const MODEL_IMPL: &str = r#"
impl crate::model::Model for TY {
    fn eval(&mut self) {
        if self.clock_high {
            SET_LOW
            self.clock_high = false;
        }
        // SAFETY: `raw` is live until drop.
        unsafe { EVAL_FN(self.raw) }
    }
    fn tick(&mut self) {
        if self.clock_high {
            // No eval since the last rising edge: let the model see the clock low.
            SET_LOW
            // SAFETY: `raw` is live until drop.
            unsafe { EVAL_FN(self.raw) }
        }
        SET_HIGH
        // SAFETY: `raw` is live until drop.
        unsafe { EVAL_FN(self.raw) }
        self.clock_high = true;
        self.dump();
        if self.tracing {
            crate::model::Model::eval(self);
            self.dump();
        }
        self.cycles += 1;
    }
    fn cycles(&self) -> u64 {
        self.cycles
    }
}

impl TY {
    fn dump(&mut self) {
        if self.tracing {
            self.time += 1;
            // SAFETY: `raw` is live until drop.
            unsafe { DUMP_FN(self.raw, self.time) }
        }
    }
    /// Settle combinational logic after inputs change.
    #[inline]
    pub fn eval(&mut self) {
        crate::model::Model::eval(self)
    }
    /// One clock cycle: the rising edge (the falling edge is evaluated
    /// with the next `eval()`, or here when tracing).
    #[inline]
    pub fn tick(&mut self) {
        crate::model::Model::tick(self)
    }
}

"#;

fn stream_adapter(ty: &str, adapter: &str, name: &str, g: &StreamGroup) -> String {
    let bytes = g.data.width / 8;
    let mut s = String::new();
    // The adapter struct lives outside the impl block: close and reopen it.
    writeln!(
        s,
        "}}\n\n/// `{ty}`'s `{}` stream.\npub struct {adapter}<'a>(pub &'a mut {ty});\n",
        g.prefix
    )
    .unwrap();
    let data_set = match g.data.width {
        w if w <= 32 => format!(
            "self.0.set_{}(crate::axis::le_u64(&b.data) as u32)",
            g.data.rust
        ),
        w if w <= 64 => format!("self.0.set_{}(crate::axis::le_u64(&b.data))", g.data.rust),
        _ => format!(
            "self.0.set_{}(&crate::axis::le_words(&b.data))",
            g.data.rust
        ),
    };
    let data_get = match g.data.width {
        w if w <= 64 => format!(
            "crate::axis::bytes_from_u64(self.0.get_{}() as u64, {bytes})",
            g.data.rust
        ),
        _ => format!(
            "crate::axis::bytes_from_words(&self.0.get_{}(), {bytes})",
            g.data.rust
        ),
    };
    let cast = |p: &CPort, e: &str| match p.width {
        1 => format!("{e} != 0"),
        w if w <= 32 => format!("{e} as u32"),
        _ => format!("{e} as u64"),
    };
    if g.input {
        writeln!(s, "impl crate::axis::StreamInPort for {adapter}<'_> {{\n    fn bytes(&self) -> usize {{\n        {bytes}\n    }}\n    fn drive(&mut self, beat: Option<&crate::axis::Beat>) {{\n        match beat {{\n            Some(b) => {{").unwrap();
        writeln!(s, "                {data_set};").unwrap();
        if let Some(k) = g.keep {
            writeln!(
                s,
                "                self.0.set_{}({});",
                k.rust,
                cast(k, "b.keep")
            )
            .unwrap();
        }
        if let Some(l) = g.last {
            writeln!(s, "                self.0.set_{}(b.last);", l.rust).unwrap();
        }
        if let Some(u) = g.user {
            writeln!(s, "                self.0.set_{}(b.user);", u.rust).unwrap();
        }
        writeln!(s, "                self.0.set_{name}_tvalid(true);\n            }}\n            None => self.0.set_{name}_tvalid(false),\n        }}\n    }}\n    fn ready(&self) -> bool {{\n        self.0.get_{name}_tready()\n    }}\n}}").unwrap();
    } else {
        writeln!(s, "impl crate::axis::StreamOutPort for {adapter}<'_> {{\n    fn bytes(&self) -> usize {{\n        {bytes}\n    }}\n    fn set_ready(&mut self, ready: bool) {{\n        self.0.set_{name}_tready(ready)\n    }}\n    fn peek(&self) -> Option<crate::axis::Beat> {{\n        if !self.0.get_{name}_tvalid() {{\n            return None;\n        }}\n        Some(crate::axis::Beat {{").unwrap();
        writeln!(s, "            data: {data_get},").unwrap();
        match g.keep {
            Some(k) => writeln!(s, "            keep: self.0.get_{}() as u64,", k.rust).unwrap(),
            None => writeln!(s, "            keep: crate::axis::full_keep({bytes}),").unwrap(),
        }
        match g.last {
            Some(l) => writeln!(s, "            last: self.0.get_{}(),", l.rust).unwrap(),
            None => writeln!(s, "            last: true,").unwrap(),
        }
        match g.user {
            Some(u) => writeln!(s, "            user: self.0.get_{}(),", u.rust).unwrap(),
            None => writeln!(s, "            user: false,").unwrap(),
        }
        writeln!(s, "        }})\n    }}\n}}").unwrap();
    }
    writeln!(s, "\nimpl {ty} {{").unwrap();
    s
}
