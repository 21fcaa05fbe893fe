//! Software model of the memory-region table, page table and its
//! programming commands, with the semantics of `roce_wire::mr` (which
//! states the rules; this adds the state). The hardware `mr_tlb` block is
//! tested against it, and the transport tests will use it as the
//! responder's memory protection.
//!
//! A TLB is invisible here: it caches translations and never changes an
//! outcome, which is exactly what the hardware tests check.

use roce_wire::mr::{
    self, key_index, key_tag, Chunk, CmdError, MrEntry, MrState, Reject, Request, PA_BITS,
};

/// Outcome of one request: the chunks of a grant (none for a zero-length
/// request), or why it was refused.
pub type Outcome = Result<Vec<Chunk>, Reject>;

pub use roce_wire::mr::Region;

/// The MR table and page table, and how many requests [`MrTable::counted`]
/// rejected per reason (the hardware's drop counters).
#[derive(Clone, Debug)]
pub struct MrTable {
    entries: Vec<MrEntry>,
    pt: Vec<u64>,
    rejects: [u64; Reject::ALL.len()],
}

impl MrTable {
    /// `mrs` table entries and `pt_entries` page-table entries (powers of
    /// two), all free / zero, as after a reset.
    pub fn new(mrs: usize, pt_entries: usize) -> Self {
        assert!(mrs.is_power_of_two() && pt_entries.is_power_of_two());
        MrTable {
            entries: vec![MrEntry::default(); mrs],
            pt: vec![0; pt_entries],
            rejects: [0; Reject::ALL.len()],
        }
    }

    /// MR-table entries.
    pub fn mrs(&self) -> usize {
        self.entries.len()
    }

    /// Page-table entries.
    pub fn pt_entries(&self) -> usize {
        self.pt.len()
    }

    /// The entry `key`'s index selects, if inside the table.
    pub fn entry(&self, key: u32) -> Option<&MrEntry> {
        self.entries.get(key_index(key) as usize)
    }

    fn slot(&mut self, key: u32) -> Result<&mut MrEntry, CmdError> {
        self.entries
            .get_mut(key_index(key) as usize)
            .ok_or(CmdError::BadIndex)
    }

    /// WRITE_PT: page-table entry `index` := physical address `pa`.
    pub fn write_pt(&mut self, index: u32, pa: u64) -> Result<(), CmdError> {
        if index as usize >= self.pt.len() {
            return Err(CmdError::BadIndex);
        }
        if pa >> PA_BITS != 0 {
            return Err(CmdError::PaTooWide);
        }
        self.pt[index as usize] = pa;
        Ok(())
    }

    /// REGISTER: the entry of `key`'s index := `region` under `key`'s tag.
    pub fn register(&mut self, key: u32, region: Region) -> Result<(), CmdError> {
        let pt_len = self.pt.len();
        let slot = self.slot(key)?;
        region.validate()?;
        if region.pt_base as usize >= pt_len {
            return Err(CmdError::BadIndex);
        }
        *slot = MrEntry {
            tag: key_tag(key),
            state: MrState::Valid,
            region,
        };
        Ok(())
    }

    /// DEREGISTER: the entry of `key`'s index := free (whatever its tag).
    pub fn deregister(&mut self, key: u32) -> Result<(), CmdError> {
        self.slot(key)?.state = MrState::Free;
        Ok(())
    }

    /// INVALIDATE: a valid entry registered under `key` := invalidated.
    pub fn invalidate(&mut self, key: u32) -> Result<(), CmdError> {
        let e = self.slot(key)?;
        if e.state != MrState::Valid || e.tag != key_tag(key) {
            return Err(CmdError::KeyMismatch);
        }
        e.state = MrState::Invalid;
        Ok(())
    }

    /// The outcome of a request, counted: a reject adds one to its
    /// reason's count ([`MrTable::rejected`]), as the hardware's counters do.
    pub fn counted(&mut self, req: &Request) -> Outcome {
        let outcome = self.request(req);
        if let Err(r) = outcome {
            self.rejects[r.code() as usize - 1] += 1;
        }
        outcome
    }

    /// Requests [`MrTable::counted`] rejected for reason `r`.
    pub fn rejected(&self, r: Reject) -> u64 {
        self.rejects[r.code() as usize - 1]
    }

    /// The outcome of a request.
    pub fn request(&self, req: &Request) -> Outcome {
        let entry = self.entry(req.key);
        mr::check(entry, req)?;
        match entry {
            Some(e) if req.len > 0 => {
                Ok(mr::chunks(e, req, self.pt.len() as u32, |i| self.pt[i as usize]).collect())
            }
            _ => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roce_wire::mr::key;
    use roce_wire::mr::Access;

    #[test]
    fn commands_and_requests() {
        let mut t = MrTable::new(16, 64);
        let region = Region {
            pd: 3,
            access: Access::REMOTE_WRITE,
            base: 0x2000_0800,
            length: 0x1000,
            page_shift: 12,
            pt_base: 10,
        };
        assert_eq!(t.write_pt(10, 0x7_0000_0000), Ok(()));
        assert_eq!(t.write_pt(11, 0x9_0000_0000), Ok(()));
        assert_eq!(t.write_pt(64, 0), Err(CmdError::BadIndex));
        assert_eq!(t.write_pt(1, 1 << 52), Err(CmdError::PaTooWide));
        let k = key(5, 0x77);
        assert_eq!(t.register(key(16, 1), region), Err(CmdError::BadIndex));
        assert_eq!(t.register(k, region), Ok(()));
        let req = Request {
            key: k,
            pd: 3,
            access: Access::REMOTE_WRITE,
            va: 0x2000_0ff0,
            len: 0x20,
        };
        assert_eq!(
            t.request(&req),
            Ok(vec![
                Chunk {
                    pa: 0x7_0000_0ff0,
                    len: 0x10
                },
                Chunk {
                    pa: 0x9_0000_0000,
                    len: 0x10
                }
            ])
        );
        assert_eq!(t.invalidate(key(5, 0x78)), Err(CmdError::KeyMismatch));
        assert_eq!(t.invalidate(k), Ok(()));
        assert_eq!(t.request(&req), Err(Reject::InvalidatedKey));
        assert_eq!(t.invalidate(k), Err(CmdError::KeyMismatch));
        assert_eq!(t.deregister(k), Ok(()));
        assert_eq!(t.request(&req), Err(Reject::BadKey));
        assert_eq!(t.request(&Request { len: 0, ..req }), Ok(vec![]));
        assert_eq!(t.counted(&req), Err(Reject::BadKey));
        assert_eq!(t.counted(&req), Err(Reject::BadKey));
        assert!(t.counted(&Request { len: 0, ..req }).is_ok());
        assert_eq!(t.rejected(Reject::BadKey), 2);
        assert_eq!(t.rejected(Reject::OutOfBounds), 0);
    }
}
