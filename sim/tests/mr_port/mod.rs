//! The memory-region datapath port (requests in, grant beats out, reject
//! counters, TLB misses) of the Verilated blocks that have one: `mr_tlb`
//! alone and `mr_ctrl` (the CSR block driving it). Shared by their benches.

use roce_sim::model::Model;
use roce_sim::mr_model::{MrTable, Outcome};
use roce_sim::rng::Rng;
use roce_wire::mr::{self, Chunk, MrState, Reject, Request};

pub trait MrPort: Sized {
    fn create() -> Self;
    fn set_rst(&mut self, v: bool);
    fn busy(&self) -> bool;
    fn drive_req(&mut self, r: Option<&Request>);
    fn req_ready(&self) -> bool;
    fn set_grant_ready(&mut self, v: bool);
    fn grant_ready(&self) -> bool;
    /// (pa, len, last, reason) when a beat is offered.
    fn grant(&self) -> Option<(u64, u32, bool, u8)>;
    fn tlb_miss(&self) -> bool;
    /// The counters: rejects per reason (index `code - 1`), then TLB misses.
    fn counters(&self) -> [u64; 6];
    /// (MRs, TLB entries, page-table entries).
    fn params() -> (usize, usize, usize);
}

/// `impl MrPort` for a model with the `s_req_*` / `m_grant_*` / `cnt_*`
/// ports and the `N`, `TLB`, `PT` parameters.
macro_rules! mr_port {
    ($t:ty) => {
        impl mr_port::MrPort for $t {
            fn create() -> Self {
                <$t>::new()
            }
            fn set_rst(&mut self, v: bool) {
                self.set_reset(v)
            }
            fn busy(&self) -> bool {
                self.get_busy()
            }
            fn drive_req(&mut self, r: Option<&Request>) {
                self.set_s_req_valid(r.is_some());
                if let Some(r) = r {
                    self.set_s_req_key(r.key);
                    self.set_s_req_pd(r.pd as u32);
                    self.set_s_req_access(r.access.bits() as u32);
                    self.set_s_req_va(r.va);
                    self.set_s_req_len(r.len);
                }
            }
            fn req_ready(&self) -> bool {
                self.get_s_req_ready()
            }
            fn set_grant_ready(&mut self, v: bool) {
                self.set_m_grant_ready(v)
            }
            fn grant_ready(&self) -> bool {
                self.get_m_grant_ready()
            }
            fn grant(&self) -> Option<(u64, u32, bool, u8)> {
                self.get_m_grant_valid().then(|| {
                    (
                        self.get_m_grant_pa(),
                        self.get_m_grant_len(),
                        self.get_m_grant_last(),
                        self.get_m_grant_reason() as u8,
                    )
                })
            }
            fn tlb_miss(&self) -> bool {
                self.get_tlb_miss()
            }
            fn counters(&self) -> [u64; 6] {
                [
                    self.get_cnt_bad_key() as u64,
                    self.get_cnt_invalidated_key() as u64,
                    self.get_cnt_pd_mismatch() as u64,
                    self.get_cnt_access_denied() as u64,
                    self.get_cnt_out_of_bounds() as u64,
                    self.get_cnt_tlb_miss() as u64,
                ]
            }
            fn params() -> (usize, usize, usize) {
                let p = |n: &str| <$t>::PARAMS.iter().find(|(k, _)| *k == n).unwrap().1 as usize;
                (p("N"), p("TLB"), p("PT"))
            }
        }
    };
}

/// Counts a run of requests adds to.
#[derive(Default)]
pub struct RunStats {
    pub requests: u64,
    pub beats: u64,
    pub misses: u64,
}

/// Send `reqs` (random idle `idle` ‰ before each, random output stalls
/// `stall` ‰), collect the grant beats, and return each request's outcome
/// as the hardware gave it.
pub fn run_requests<D: MrPort + Model>(
    dut: &mut D,
    rng: &mut Rng,
    reqs: &[Request],
    idle: u32,
    stall: u32,
    stats: &mut RunStats,
) -> Vec<Outcome> {
    let mut next = 0;
    let mut presenting = false;
    let mut outcomes = Vec::with_capacity(reqs.len());
    let mut current: Vec<Chunk> = Vec::new();
    let mut guard = 0u64;
    while outcomes.len() < reqs.len() {
        if !presenting && next < reqs.len() && !rng.chance(idle) {
            presenting = true;
        }
        dut.drive_req(presenting.then(|| &reqs[next]));
        dut.set_grant_ready(!rng.chance(stall));
        dut.eval();
        if presenting && dut.req_ready() {
            presenting = false;
            next += 1;
            stats.requests += 1;
        }
        if dut.tlb_miss() {
            stats.misses += 1;
        }
        if let Some((pa, len, last, reason)) = dut.grant() {
            if dut.grant_ready() {
                stats.beats += 1;
                if reason != 0 {
                    assert!(last && current.is_empty(), "a reject is one beat");
                    let r = Reject::from_code(reason)
                        .unwrap_or_else(|| panic!("unknown reason code {reason}"));
                    outcomes.push(Err(r));
                } else if len == 0 {
                    assert!(
                        last && current.is_empty(),
                        "a zero-length grant is one beat"
                    );
                    outcomes.push(Ok(Vec::new()));
                } else {
                    current.push(Chunk { pa, len });
                    if last {
                        outcomes.push(Ok(std::mem::take(&mut current)));
                    }
                }
            }
        }
        dut.tick();
        guard += 1;
        assert!(guard < 200 * reqs.len() as u64 + 10_000, "no progress");
    }
    dut.drive_req(None);
    outcomes
}

/// The security rule, stated directly on a hardware outcome: a request
/// the rules refuse is never granted; a grant covers exactly the request's
/// bytes, all inside the region, each chunk inside one page that the
/// region's page table maps.
pub fn security_holds(table: &MrTable, req: &Request, hw: &Outcome) {
    let Ok(chunks) = hw else { return };
    let entry = table.entry(req.key);
    assert!(
        mr::check(entry, req).is_ok(),
        "granted a request the rules refuse: {req:x?} -> {chunks:x?}"
    );
    if req.len == 0 {
        assert!(chunks.is_empty(), "zero-length grant touches memory");
        return;
    }
    let e = entry.expect("checked");
    assert_eq!(e.state, MrState::Valid);
    let total: u64 = chunks.iter().map(|c| c.len as u64).sum();
    assert_eq!(total, req.len as u64, "grant length");
    let (lo, hi) = (e.base as u128, e.base as u128 + e.length as u128);
    let mut va = req.va as u128;
    for c in chunks {
        let end = va + c.len as u128;
        assert!(
            lo <= va && end <= hi,
            "chunk {c:x?} at va {va:#x} outside the region"
        );
        let mask = e.page_mask() as u128;
        assert_eq!(va & !mask, (end - 1) & !mask, "chunk {c:x?} crosses a page");
        assert_eq!(c.pa as u128 & mask, va & mask, "page offset of {c:x?}");
        va = end;
    }
}
