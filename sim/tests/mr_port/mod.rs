//! The memory-region datapath port (requests in, grant beats out, reject
//! counters, TLB misses) of the Verilated blocks that have one: `mr_tlb`
//! alone and `mr_ctrl` (the CSR block driving it). Shared by their benches.

use roce_sim::model::Model;
use roce_sim::mr_model::{MrTable, Outcome, Region};
use roce_sim::rng::Rng;
use roce_wire::mr::{
    self, key, Access, Chunk, MrState, Reject, Request, PAGE_SHIFT_MAX, PAGE_SHIFT_MIN,
};

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
    run_paced(dut, rng, reqs, stall, stats, |rng, _, _| !rng.chance(idle))
}

/// As [`run_requests`], with the requests' pace given by `present(rng, i,
/// waited)`: whether request `i` is presented in a cycle `waited` cycles
/// after the previous one was taken (or after the start); once presented
/// it stays until taken.
pub fn run_paced<D: MrPort + Model>(
    dut: &mut D,
    rng: &mut Rng,
    reqs: &[Request],
    stall: u32,
    stats: &mut RunStats,
    mut present: impl FnMut(&mut Rng, usize, u32) -> bool,
) -> Vec<Outcome> {
    let mut next = 0;
    let mut presenting = false;
    let mut waited = 0u32;
    let mut outcomes = Vec::with_capacity(reqs.len());
    let mut current: Vec<Chunk> = Vec::new();
    let mut guard = 0u64;
    while outcomes.len() < reqs.len() {
        if !presenting && next < reqs.len() && present(rng, next, waited) {
            presenting = true;
        }
        waited += 1;
        dut.drive_req(presenting.then(|| &reqs[next]));
        dut.set_grant_ready(!rng.chance(stall));
        dut.eval();
        if presenting && dut.req_ready() {
            presenting = false;
            next += 1;
            waited = 0;
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
    let e = &e.region;
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

/// A random region of at most 12 pages (3 above 64 KiB pages) at a random
/// page size, its page-table run starting below `pt_bases`; now and then
/// at the very top of the address space.
pub fn random_region(rng: &mut Rng, pt_bases: u64) -> Region {
    let page_shift = rng.range(PAGE_SHIFT_MIN as usize, PAGE_SHIFT_MAX as usize) as u8;
    let psize = 1u64 << page_shift;
    let max_pages = if page_shift > 16 { 3 } else { 12 };
    let length = rng.range(1, max_pages) as u64 * psize - rng.below(psize);
    let base = match rng.below(8) {
        0 => 0u64.wrapping_sub(length),
        1 => rng.below(1 << 20),
        _ => rng.next_u64() >> rng.below(20),
    };
    Region {
        pd: rng.below(4) as u16,
        access: Access::from_bits(rng.below(16) as u8 | 6),
        base: base.min(u64::MAX - length + 1),
        length,
        page_shift,
        pt_base: rng.below(pt_bases) as u32,
    }
}

/// A request for one of the `live` keys, mostly inside its region, with
/// faults now and then (another tag or index, PD, access, below the base,
/// near the top of the address space).
pub fn random_request(rng: &mut Rng, model: &MrTable, live: &[u32]) -> Request {
    let mut k = live[rng.below(live.len() as u64) as usize];
    let e = model.entry(k).unwrap().region;
    let off = rng.below(e.length);
    let room = e.length - off;
    let mut req = Request {
        key: k,
        pd: e.pd,
        access: Access::from_bits(e.access.bits() & rng.below(16) as u8),
        va: e.base + off,
        len: match rng.below(10) {
            0 => 0,
            1..=6 => 1 + rng.below(room.min(1 << 13)) as u32,
            7 => room.min(u32::MAX as u64) as u32,
            _ => (room + rng.below(64)).min(u32::MAX as u64) as u32,
        },
    };
    match rng.below(40) {
        0 => k ^= 1 + rng.below(255) as u32,
        1 => {
            k = key(
                rng.below(model.mrs() as u64 * 2) as u32,
                rng.next_u32() as u8,
            )
        }
        2 => req.pd ^= 1,
        3 => req.access = Access::ALL,
        4 => req.va = e.base.wrapping_sub(1 + rng.below(16)),
        5 => req.va = u64::MAX - rng.below(64),
        _ => {}
    }
    req.key = k;
    req
}
