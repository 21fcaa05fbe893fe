//! The memory-region datapath port (requests in, grant beats out, reject
//! counters, TLB misses) of the Verilated blocks that have one: `mr_tlb`
//! alone and `mr_ctrl` (the CSR block driving it). Shared by their benches.

use roce_wire::mr::Request;

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
