//! Host memory behind the memory-region rules of `roce_wire::mr`.
//!
//! The transport touches memory only through [`Memory`]: every remote
//! WRITE, READ and atomic and every local scatter/gather access names a key,
//! a PD, the access it wants and a virtual range; [`Memory::translate`]
//! applies `roce_wire::mr::check` (key, tag, state, PD, access, bounds, in
//! that order) and returns the physical chunks. A request is translated
//! whole before any byte moves, so nothing is written when a check fails.
//!
//! [`HostMemory`] is the simple implementation the tests use: an MR table
//! and a page table exactly as `mr_tlb` holds them, over a flat physical
//! byte array. A simulation can implement [`Memory`] over its own MR model.

use alloc::vec;
use alloc::vec::Vec;
use roce_wire::mr::{
    self, key, key_index, key_tag, Access, Chunk, CmdError, MrEntry, MrState, Region, Reject,
    Request,
};

/// Memory with memory-region protection.
pub trait Memory {
    /// Checks `req` by the `roce_wire::mr` rules and translates it into
    /// physical chunks (none for a zero-length request).
    fn translate(&self, req: &Request) -> Result<Vec<Chunk>, Reject>;
    /// Reads physical memory.
    fn read_pa(&self, pa: u64, buf: &mut [u8]);
    /// Writes physical memory.
    fn write_pa(&mut self, pa: u64, data: &[u8]);
    /// Invalidates the region registered under `key` (SEND with invalidate).
    fn invalidate(&mut self, key: u32) -> Result<(), CmdError>;

    /// Checks `len` bytes at `va` under `key` and splits them into the
    /// physical chunks behind them: (physical address, the chunk's range
    /// in the caller's buffer).
    fn spans(
        &self,
        key: u32,
        pd: u16,
        access: Access,
        va: u64,
        len: usize,
    ) -> Result<Vec<(u64, core::ops::Range<usize>)>, Reject> {
        let req = Request {
            key,
            pd,
            access,
            va,
            len: len as u32,
        };
        let mut at = 0;
        Ok(self
            .translate(&req)?
            .into_iter()
            .map(|c| {
                let r = at..at + c.len as usize;
                at = r.end;
                (c.pa, r)
            })
            .collect())
    }

    /// Checks and reads `buf.len()` bytes at `va` under `key`.
    fn read(
        &self,
        key: u32,
        pd: u16,
        access: Access,
        va: u64,
        buf: &mut [u8],
    ) -> Result<(), Reject> {
        for (pa, r) in self.spans(key, pd, access, va, buf.len())? {
            self.read_pa(pa, &mut buf[r]);
        }
        Ok(())
    }

    /// Checks and writes `data` at `va` under `key`; writes nothing when a
    /// check fails.
    fn write(
        &mut self,
        key: u32,
        pd: u16,
        access: Access,
        va: u64,
        data: &[u8],
    ) -> Result<(), Reject> {
        for (pa, r) in self.spans(key, pd, access, va, data.len())? {
            self.write_pa(pa, &data[r]);
        }
        Ok(())
    }
}

/// One scatter/gather element of a work request: `len` bytes at `addr`
/// under local key `lkey`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Sge {
    /// Virtual address.
    pub addr: u64,
    /// Bytes.
    pub len: u32,
    /// Local key.
    pub lkey: u32,
}

/// Why a scatter/gather access failed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SgError {
    /// The list is shorter than the access.
    TooShort,
    /// A local key check failed.
    Protection(Reject),
}

/// Total bytes of a scatter/gather list.
pub fn sg_len(sgl: &[Sge]) -> u64 {
    sgl.iter().map(|s| s.len as u64).sum()
}

/// The pieces `(sge index, va, len)` of `len` bytes at byte `offset` of a list.
fn sg_pieces(sgl: &[Sge], offset: u64, len: usize) -> Result<Vec<(usize, u64, u32)>, SgError> {
    if offset + len as u64 > sg_len(sgl) {
        return Err(SgError::TooShort);
    }
    let mut out = Vec::new();
    let (mut off, mut left) = (offset, len as u64);
    for (i, s) in sgl.iter().enumerate() {
        if left == 0 {
            break;
        }
        if off >= s.len as u64 {
            off -= s.len as u64;
            continue;
        }
        let n = (s.len as u64 - off).min(left);
        out.push((i, s.addr.wrapping_add(off), n as u32));
        left -= n;
        off = 0;
    }
    Ok(out)
}

/// Scatters `data` into the list at byte `offset`, with local write access
/// in `pd`. Every piece is checked before any byte is written.
pub fn sg_write<M: Memory + ?Sized>(
    mem: &mut M,
    pd: u16,
    sgl: &[Sge],
    offset: u64,
    data: &[u8],
) -> Result<(), SgError> {
    let pieces = sg_pieces(sgl, offset, data.len())?;
    let mut all = Vec::new();
    for &(i, va, n) in &pieces {
        let req = Request {
            key: sgl[i].lkey,
            pd,
            access: Access::LOCAL_WRITE,
            va,
            len: n,
        };
        all.push(mem.translate(&req).map_err(SgError::Protection)?);
    }
    let mut at = 0;
    for c in all.into_iter().flatten() {
        let n = c.len as usize;
        mem.write_pa(c.pa, &data[at..at + n]);
        at += n;
    }
    Ok(())
}

/// Gathers `len` bytes from the list at byte `offset` (local read: no
/// access flag needed, key and PD checked).
pub fn sg_read<M: Memory + ?Sized>(
    mem: &M,
    pd: u16,
    sgl: &[Sge],
    offset: u64,
    len: usize,
) -> Result<Vec<u8>, SgError> {
    let mut out = vec![0u8; len];
    let mut at = 0;
    for (i, va, n) in sg_pieces(sgl, offset, len)? {
        let end = at + n as usize;
        mem.read(sgl[i].lkey, pd, Access::NONE, va, &mut out[at..end])
            .map_err(SgError::Protection)?;
        at = end;
    }
    Ok(out)
}

/// An MR table and page table as `mr_tlb` holds them, over flat physical
/// memory that grows as regions are allocated.
#[derive(Clone, Debug)]
pub struct HostMemory {
    entries: Vec<MrEntry>,
    pt: Vec<u64>,
    pt_next: u32,
    phys: Vec<u8>,
    next_index: u32,
    next_va: u64,
}

/// Page size [`HostMemory::alloc`] uses (4 KiB).
pub const PAGE_SHIFT: u8 = 12;

impl HostMemory {
    /// An empty memory with `mrs` MR-table entries and `pt_entries`
    /// page-table entries (powers of two).
    pub fn new(mrs: usize, pt_entries: usize) -> HostMemory {
        assert!(mrs.is_power_of_two() && pt_entries.is_power_of_two());
        HostMemory {
            entries: vec![MrEntry::default(); mrs],
            pt: vec![0; pt_entries],
            pt_next: 0,
            phys: Vec::new(),
            next_index: 1,
            next_va: 0x7f00_0000_0000,
        }
    }

    /// The MR-table entry `key`'s index selects.
    pub fn entry(&self, key: u32) -> Option<&MrEntry> {
        self.entries.get(key_index(key) as usize)
    }

    /// REGISTER: `region` under `key` (as the `mr_tlb` command).
    pub fn register(&mut self, key: u32, region: Region) -> Result<(), CmdError> {
        region.validate()?;
        if region.pt_base as usize >= self.pt.len() {
            return Err(CmdError::BadIndex);
        }
        let e = self
            .entries
            .get_mut(key_index(key) as usize)
            .ok_or(CmdError::BadIndex)?;
        *e = MrEntry {
            tag: key_tag(key),
            state: MrState::Valid,
            region,
        };
        Ok(())
    }

    /// DEREGISTER.
    pub fn deregister(&mut self, key: u32) -> Result<(), CmdError> {
        let e = self
            .entries
            .get_mut(key_index(key) as usize)
            .ok_or(CmdError::BadIndex)?;
        e.state = MrState::Free;
        Ok(())
    }

    /// Makes an invalidated region valid again under the same key.
    pub fn revalidate(&mut self, key: u32) -> Result<(), CmdError> {
        let e = self
            .entries
            .get_mut(key_index(key) as usize)
            .ok_or(CmdError::BadIndex)?;
        if e.state != MrState::Invalid || e.tag != key_tag(key) {
            return Err(CmdError::KeyMismatch);
        }
        e.state = MrState::Valid;
        Ok(())
    }

    /// Allocates `len` bytes of fresh, zeroed physical memory, maps it at a
    /// new virtual address (never equal to the physical one, so translation
    /// is exercised) and registers it. Returns the key and the base VA.
    pub fn alloc(&mut self, pd: u16, access: Access, len: u64) -> (u32, u64) {
        let page = 1u64 << PAGE_SHIFT;
        let base = self.next_va;
        self.next_va += (len.div_ceil(page).max(1) + 1) * page;
        let index = self.next_index;
        self.next_index += 1;
        let k = key(index, (index as u8).wrapping_mul(37) ^ 0x5a);
        self.map(k, pd, access, base, len)
            .expect("a fresh region registers");
        (k, base)
    }

    /// Allocates fresh, zeroed physical pages for `[base, base + len)` and
    /// registers them under a key the caller chose (a replay sets up the
    /// keys and addresses a capture shows this way).
    pub fn map(
        &mut self,
        key: u32,
        pd: u16,
        access: Access,
        base: u64,
        len: u64,
    ) -> Result<(), CmdError> {
        let page = 1u64 << PAGE_SHIFT;
        let first_page = base >> PAGE_SHIFT;
        let pages = ((base + len.max(1)).div_ceil(page) - first_page).max(1);
        let pt_base = self.pt_next;
        if pt_base as u64 + pages > self.pt.len() as u64 {
            return Err(CmdError::BadIndex);
        }
        let region = Region {
            pd,
            access,
            base,
            length: len,
            page_shift: PAGE_SHIFT,
            pt_base,
        };
        region.validate()?;
        if key_index(key) as usize >= self.entries.len() {
            return Err(CmdError::BadIndex);
        }
        // Physical pages in reverse order, so a region's pages are not
        // contiguous in physical memory.
        let first_pa = self.phys.len() as u64;
        self.phys.resize((first_pa + pages * page) as usize, 0);
        for i in 0..pages {
            self.pt[(pt_base as u64 + i) as usize] = first_pa + (pages - 1 - i) * page;
        }
        self.pt_next += pages as u32;
        self.next_index = self.next_index.max(key_index(key) + 1);
        self.register(key, region)
    }

    /// Reads through a region's translation without access checks (for
    /// tests and harnesses: what the host sees).
    pub fn peek(&self, key: u32, va: u64, len: usize) -> Vec<u8> {
        let e = self.entry(key).expect("key inside the table");
        let req = Request {
            key,
            pd: e.region.pd,
            access: Access::NONE,
            va,
            len: len as u32,
        };
        let mut out = vec![0u8; len];
        let mut at = 0;
        for c in self.chunks_unchecked(e, &req) {
            let n = c.len as usize;
            self.read_pa(c.pa, &mut out[at..at + n]);
            at += n;
        }
        out
    }

    /// Writes through a region's translation without access checks.
    pub fn poke(&mut self, key: u32, va: u64, data: &[u8]) {
        let e = *self.entry(key).expect("key inside the table");
        let req = Request {
            key,
            pd: e.region.pd,
            access: Access::NONE,
            va,
            len: data.len() as u32,
        };
        let chunks = self.chunks_unchecked(&e, &req);
        let mut at = 0;
        for c in chunks {
            let n = c.len as usize;
            self.write_pa(c.pa, &data[at..at + n]);
            at += n;
        }
    }

    fn chunks_unchecked(&self, e: &MrEntry, req: &Request) -> Vec<Chunk> {
        assert!(
            req.va >= e.region.base && req.va + req.len as u64 <= e.region.base + e.region.length,
            "peek/poke outside the region"
        );
        mr::chunks(e, req, self.pt.len() as u32, |i| self.pt[i as usize]).collect()
    }

    /// The physical memory.
    pub fn phys(&self) -> &[u8] {
        &self.phys
    }
}

impl Memory for HostMemory {
    fn translate(&self, req: &Request) -> Result<Vec<Chunk>, Reject> {
        let entry = self.entry(req.key);
        mr::check(entry, req)?;
        match entry {
            Some(e) if req.len > 0 => {
                Ok(mr::chunks(e, req, self.pt.len() as u32, |i| self.pt[i as usize]).collect())
            }
            _ => Ok(Vec::new()),
        }
    }

    fn read_pa(&self, pa: u64, buf: &mut [u8]) {
        let a = pa as usize;
        buf.copy_from_slice(&self.phys[a..a + buf.len()]);
    }

    fn write_pa(&mut self, pa: u64, data: &[u8]) {
        let a = pa as usize;
        self.phys[a..a + data.len()].copy_from_slice(data);
    }

    fn invalidate(&mut self, key: u32) -> Result<(), CmdError> {
        let e = self
            .entries
            .get_mut(key_index(key) as usize)
            .ok_or(CmdError::BadIndex)?;
        if e.state != MrState::Valid || e.tag != key_tag(key) {
            return Err(CmdError::KeyMismatch);
        }
        e.state = MrState::Invalid;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_translate_and_scatter() {
        let mut m = HostMemory::new(16, 64);
        let (k, va) = m.alloc(3, Access::ALL, 10_000);
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        m.write(k, 3, Access::REMOTE_WRITE, va, &data).unwrap();
        assert_eq!(m.peek(k, va, 10_000), data);
        // Pages are mapped in reverse, so the first page is not at PA 0.
        assert_ne!(&m.phys()[..4096], &data[..4096]);
        assert_eq!(
            m.write(k, 4, Access::REMOTE_WRITE, va, &data[..1]),
            Err(Reject::PdMismatch)
        );
        assert_eq!(
            m.write(k, 3, Access::REMOTE_WRITE, va + 9_999, &[1, 2]),
            Err(Reject::OutOfBounds)
        );
        assert_eq!(m.peek(k, va + 9_999, 1), [data[9_999]]);
        let sgl = [
            Sge {
                addr: va,
                len: 3,
                lkey: k,
            },
            Sge {
                addr: va + 5000,
                len: 5,
                lkey: k,
            },
        ];
        sg_write(&mut m, 3, &sgl, 1, &[9, 9, 9, 9]).unwrap();
        assert_eq!(m.peek(k, va, 3), [data[0], 9, 9]);
        assert_eq!(m.peek(k, va + 5000, 3), [9, 9, data[5002]]);
        assert_eq!(sg_read(&m, 3, &sgl, 1, 4).unwrap(), [9, 9, 9, 9]);
        assert_eq!(
            sg_write(&mut m, 3, &sgl, 5, &[0; 4]),
            Err(SgError::TooShort)
        );
        let bad = [
            sgl[0],
            Sge {
                lkey: k ^ 1,
                ..sgl[1]
            },
        ];
        assert_eq!(
            sg_write(&mut m, 3, &bad, 0, &[7; 8]),
            Err(SgError::Protection(Reject::BadKey))
        );
        assert_eq!(
            m.peek(k, va, 1),
            [data[0]],
            "nothing written on a failed check"
        );
        m.invalidate(k).unwrap();
        assert_eq!(
            m.read(k, 3, Access::REMOTE_READ, va, &mut [0; 1]),
            Err(Reject::InvalidatedKey)
        );
        m.revalidate(k).unwrap();
        assert!(m.read(k, 3, Access::REMOTE_READ, va, &mut [0; 1]).is_ok());
    }
}
