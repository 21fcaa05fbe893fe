//! What every Verilator model offers, and trace-file naming.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A cycle-based model: set inputs, `eval()` to settle, read outputs,
/// `tick()` to clock.
pub trait Model {
    /// Settle combinational logic after inputs change.
    fn eval(&mut self);
    /// One clock cycle. The rising edge is evaluated here; the falling edge
    /// (on which no roce-hw block acts) is folded into the next `eval()`,
    /// or evaluated here too when tracing, so the trace shows both edges.
    fn tick(&mut self);
    /// Cycles ticked since construction.
    fn cycles(&self) -> u64;
}

/// Trace paths handed out in this process, so two models of one top in one
/// test get two files (a rerun of the test overwrites its old traces).
static TRACES: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// Name a trace after the running test: cargo's test harness names each
/// test's thread after the test (`crc32::random_w64`).
pub fn trace_name(thread: Option<&str>, top: &str, seq: u32) -> String {
    let test: String = thread
        .unwrap_or("main")
        .replace("::", ".")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_-.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if seq == 0 {
        format!("{test}.{top}.vcd")
    } else {
        format!("{test}.{top}.{seq}.vcd")
    }
}

/// With `ROCE_TRACE=<dir>` set, where this model's trace goes: one VCD per
/// test and model, `<dir>/<test>.<model>.vcd` (`top` is the model name).
pub fn trace_path_from_env(top: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("ROCE_TRACE")?);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("ROCE_TRACE: cannot create {}: {e}", dir.display()));
    let thread = std::thread::current();
    let mut taken = TRACES.lock().unwrap_or_else(|e| e.into_inner());
    let path = (0..)
        .map(|seq| dir.join(trace_name(thread.name(), top, seq)))
        .find(|p| !taken.contains(p))
        .expect("an unused trace name");
    taken.insert(path.clone());
    Some(path)
}

pub(crate) fn c_path(path: &Path) -> std::io::Result<CString> {
    CString::new(path.as_os_str().as_encoded_bytes()).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_names() {
        assert_eq!(
            trace_name(Some("crc32::random_w64"), "crc32_w64", 0),
            "crc32.random_w64.crc32_w64.vcd"
        );
        assert_eq!(trace_name(None, "x", 2), "main.x.2.vcd");
    }
}
