//! `ROCE_TRACE=<dir>` makes every model write `<dir>/<test>.<top>.vcd`.
//! Alone in its test binary because it sets a process-wide variable.

use roce_sim::models::AxisRegisterW64;
use std::path::Path;

#[test]
fn trace_named_after_the_test() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace_env");
    let _ = std::fs::remove_dir_all(&dir);
    std::env::set_var("ROCE_TRACE", &dir);
    {
        let mut a = AxisRegisterW64::new();
        let mut b = AxisRegisterW64::new();
        for _ in 0..10 {
            a.tick();
            b.tick();
        }
    }
    std::env::remove_var("ROCE_TRACE");
    for name in [
        "trace_named_after_the_test.axis_register_w64.vcd",
        "trace_named_after_the_test.axis_register_w64.1.vcd",
    ] {
        let path = dir.join(name);
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        assert!(len > 100, "{} missing or empty", path.display());
    }
}
