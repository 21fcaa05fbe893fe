//! roce-fw on PicoRV32 (RTL, Verilated): the model `FwSoc` built from the
//! hand-written top `sim/verilog/fw_soc.v` — PicoRV32 (RV32IMC, native
//! memory interface), on-chip RAM loaded from the firmware image through a
//! backdoor port during reset, the CSR block `csr_w256` behind an
//! arbiter shared with the host's AXI4-Lite port. Every step is one clock.
//!
//! `picorv32.v` comes from the PyPI package `pythondata-cpu-picorv32`,
//! installed into `.venv` by `scripts/setup` (or `$ROCE_PICORV32_V`);
//! without it the model is not built and [`PicoSoc::new`] says so.

use super::{CsrAccess, Softcore};
#[cfg(not(roce_picorv32))]
use crate::axil::Timing;
#[cfg(roce_picorv32)]
use crate::axil::{AxilMaster, Done, Timing};

/// Why the PicoRV32 model is missing.
pub const NOT_BUILT: &str = "the PicoRV32 model was not built: picorv32.v not found \
     (run scripts/setup, which installs pythondata-cpu-picorv32 into .venv, \
     or set ROCE_PICORV32_V to a picorv32.v; then rebuild)";

#[cfg(roce_picorv32)]
mod model {
    use super::*;
    use crate::model::Model;
    use crate::models::FwSoc;
    use roce_regs::Counter;
    use std::collections::VecDeque;

    const LANES: usize = Counter::COUNT as usize - 1;

    /// PicoRV32 + RAM + CSR block, and the host's AXI4-Lite master.
    pub struct PicoSoc {
        soc: FwSoc,
        host: AxilMaster,
        /// Core CSR accesses not yet handed out by `step`.
        seen: VecDeque<CsrAccess>,
        /// Cycle at reset release.
        t0: u64,
    }

    impl PicoSoc {
        /// Load `ram` (the firmware image) through the backdoor port while
        /// in reset, then release reset: the core starts at 0.
        pub fn new(ram: &[u8], entry: u32, seed: u64, timing: Timing) -> Result<PicoSoc, String> {
            if entry != 0 {
                return Err(format!("entry {entry:#x}: PicoRV32 here resets to 0"));
            }
            let words = FwSoc::PARAMS
                .iter()
                .find(|(k, _)| *k == "RAM_WORDS")
                .unwrap()
                .1 as usize;
            if ram.len() > 4 * words {
                return Err(format!("image of {} bytes exceeds the RAM", ram.len()));
            }
            let mut s = PicoSoc {
                soc: FwSoc::new(),
                host: AxilMaster::new(seed, timing),
                seen: VecDeque::new(),
                t0: 0,
            };
            s.soc.set_counters(&[0; LANES]);
            s.soc.set_reset(true);
            for i in 0..words {
                let w = ram
                    .get(4 * i..4 * i + 4)
                    .map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap()));
                s.soc.set_ram_we(true);
                s.soc.set_ram_waddr(i as u32);
                s.soc.set_ram_wdata(w);
                s.cycle();
            }
            s.soc.set_ram_we(false);
            for _ in 0..4 {
                s.cycle();
            }
            s.soc.set_reset(false);
            s.seen.clear();
            s.t0 = s.soc.cycles();
            Ok(s)
        }

        /// One clock: host master drives, settle, sample the host's
        /// handshakes and the core's probe, rising edge.
        fn cycle(&mut self) {
            self.host.drive(&mut self.soc);
            self.soc.eval();
            self.host.sample(&self.soc);
            assert!(!self.soc.get_trap(), "PicoRV32 trapped");
            assert!(
                !self.soc.get_bus_error(),
                "PicoRV32 accessed an unmapped address or got a CSR error response"
            );
            if self.soc.get_cpu_csr_done() {
                self.seen.push_back(CsrAccess {
                    offset: self.soc.get_cpu_csr_addr(),
                    write: self
                        .soc
                        .get_cpu_csr_write()
                        .then(|| self.soc.get_cpu_csr_wdata()),
                    cycle: self.soc.cycles() - self.t0,
                });
            }
            self.soc.tick();
        }

        fn host_done(&mut self) -> Done {
            let start = self.soc.cycles();
            while !self.host.idle() {
                assert!(self.soc.cycles() - start < 10_000, "host transaction hung");
                self.cycle();
            }
            self.host.done.pop_front().expect("a completed transaction")
        }
    }

    impl Softcore for PicoSoc {
        fn step(&mut self) -> Option<CsrAccess> {
            if self.seen.is_empty() {
                self.cycle();
            }
            self.seen.pop_front()
        }

        fn drain(&mut self) -> Vec<CsrAccess> {
            self.seen.drain(..).collect()
        }

        fn host_read(&mut self, offset: u32) -> (u32, u32) {
            self.host.read(offset);
            match self.host_done() {
                Done::Read { data, resp, .. } => (data, resp),
                d => panic!("expected a read, got {d:?}"),
            }
        }

        fn host_write(&mut self, offset: u32, value: u32) -> u32 {
            self.host.write(offset, value, 0xF);
            match self.host_done() {
                Done::Write { resp, .. } => resp,
                d => panic!("expected a write, got {d:?}"),
            }
        }

        fn qp_ctx(&mut self, q: u32) -> Vec<u32> {
            self.soc.set_qp_rd_addr(q);
            for _ in 0..crate::fw::qp_read_latency() {
                self.cycle();
            }
            self.soc.eval();
            self.soc.get_qp_rd_data().to_vec()
        }

        fn cycles(&self) -> u64 {
            self.soc.cycles() - self.t0
        }

        fn instret(&self) -> Option<u64> {
            None
        }

        fn name(&self) -> &'static str {
            "picorv32"
        }
    }
}

#[cfg(roce_picorv32)]
pub use model::PicoSoc;

/// Stand-in when the model was not built: [`PicoSoc::new`] fails with
/// [`NOT_BUILT`].
#[cfg(not(roce_picorv32))]
pub struct PicoSoc {
    _never: (),
}

#[cfg(not(roce_picorv32))]
impl PicoSoc {
    pub fn new(_ram: &[u8], _entry: u32, _seed: u64, _timing: Timing) -> Result<PicoSoc, String> {
        Err(NOT_BUILT.into())
    }
}

#[cfg(not(roce_picorv32))]
impl Softcore for PicoSoc {
    fn step(&mut self) -> Option<CsrAccess> {
        unreachable!("{NOT_BUILT}")
    }
    fn host_read(&mut self, _: u32) -> (u32, u32) {
        unreachable!("{NOT_BUILT}")
    }
    fn host_write(&mut self, _: u32, _: u32) -> u32 {
        unreachable!("{NOT_BUILT}")
    }
    fn qp_ctx(&mut self, _: u32) -> Vec<u32> {
        unreachable!("{NOT_BUILT}")
    }
    fn cycles(&self) -> u64 {
        unreachable!("{NOT_BUILT}")
    }
    fn instret(&self) -> Option<u64> {
        unreachable!("{NOT_BUILT}")
    }
    fn name(&self) -> &'static str {
        unreachable!("{NOT_BUILT}")
    }
}
