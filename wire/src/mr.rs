//! Memory regions: keys, access flags, the protection checks and VA→PA
//! translation every RDMA WRITE, READ and atomic passes (IBTA 10.6, 9.7.4;
//! Linux rxe `rxe_mr.c`, `rxe_resp.c`).
//!
//! The one statement of these rules: the hardware TLB (`roce-hw`'s
//! `mr_tlb`), its software model (`roce-sim`'s `mr_model`, which adds the
//! table state) and later the transport all follow this module. Pure
//! functions, `no_std`, no allocation.
//!
//! # Keys
//! As rxe: `key = index << 8 | tag`; `index` selects the table entry, the
//! 8-bit `tag` must match the one the entry was registered with.
//!
//! # Checks, in order (the first that fails is the reason)
//! 0. **Zero length**: a request of length 0 is granted with no chunks and
//!    no check at all. IBTA C9-88: a zero-length RDMA READ or WRITE need not
//!    carry a valid VA or R_Key; rxe's `check_rkey` returns before looking
//!    the key up when the RETH length is 0 (the MR stays NULL and nothing
//!    is read or written). Atomics always have length 8, so the rule never
//!    applies to them; a zero-length local (lkey) access touches no memory
//!    either, so it is granted the same way. A grant without chunks cannot
//!    touch memory, so the security rule below holds for it trivially.
//! 1. [`Reject::BadKey`]: the index is beyond the table, the entry is free
//!    (never registered or deregistered), or the tag differs.
//! 2. [`Reject::InvalidatedKey`]: the tag matches an entry that was
//!    invalidated (SEND_WITH_INVALIDATE, local invalidate).
//! 3. [`Reject::PdMismatch`]: the request's PD is not the region's.
//! 4. [`Reject::AccessDenied`]: a wanted access flag is not granted.
//! 5. [`Reject::OutOfBounds`]: `[va, va + len)` is not inside
//!    `[base, base + length)`. Computed without wrapping (in 128 bits), so
//!    a `va + len` beyond 2^64 is always out of bounds.
//!
//! # Translation
//! A region has one page size `2^shift`, `shift` in
//! [`PAGE_SHIFT_MIN`]..=[`PAGE_SHIFT_MAX`] (4 KiB to 2 MiB), and a run of
//! page-table entries from `pt_base`: entry `pt_base + i` holds the
//! physical address of the region's page `i`, counted from the page that
//! holds `base` (`i = (va >> shift) - (base >> shift)`). The page-table
//! index wraps modulo the table size. A page-table entry is a physical
//! address of [`PA_BITS`] bits whose bits below the page size are ignored,
//! so `pa = (entry & !mask) | (va & mask)`. A grant is the list of
//! `(pa, len)` chunks of the request, split at the region's page
//! boundaries, in address order.

/// Bits of the key below the table index: the tag.
pub const KEY_INDEX_SHIFT: u32 = 8;
/// Mask of the tag in a key.
pub const KEY_TAG_MASK: u32 = (1 << KEY_INDEX_SHIFT) - 1;
/// Smallest page size, as a shift (4 KiB).
pub const PAGE_SHIFT_MIN: u8 = 12;
/// Largest page size, as a shift (2 MiB).
pub const PAGE_SHIFT_MAX: u8 = 21;
/// Width of a physical address; page-table entries hold `PA_BITS - 12`
/// bits of page frame number.
pub const PA_BITS: u32 = 52;
/// Width of a protection domain number.
pub const PD_BITS: u32 = 16;
/// Width of the epoch the hardware keeps per table entry (how many
/// re-registrations of one index before its TLB needs a sweep).
pub const EPOCH_BITS: u32 = 8;

/// `index << 8 | tag`.
pub const fn key(index: u32, tag: u8) -> u32 {
    (index << KEY_INDEX_SHIFT) | tag as u32
}

/// The table index of a key.
pub const fn key_index(key: u32) -> u32 {
    key >> KEY_INDEX_SHIFT
}

/// The 8-bit tag of a key.
pub const fn key_tag(key: u32) -> u8 {
    (key & KEY_TAG_MASK) as u8
}

/// Access flags of a region, and the access a request wants.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Access(u8);

impl Access {
    /// No access.
    pub const NONE: Access = Access(0);
    /// Local write (the NIC writes into the region for a local work request).
    pub const LOCAL_WRITE: Access = Access(1);
    /// Remote READ.
    pub const REMOTE_READ: Access = Access(2);
    /// Remote WRITE.
    pub const REMOTE_WRITE: Access = Access(4);
    /// Remote atomics.
    pub const REMOTE_ATOMIC: Access = Access(8);
    /// Every flag.
    pub const ALL: Access = Access(15);
    /// Width of the flag field in hardware.
    pub const BITS: u32 = 4;

    /// Flags from their bits; bits above [`Access::BITS`] are dropped.
    pub const fn from_bits(b: u8) -> Access {
        Access(b & Self::ALL.0)
    }

    /// The flag bits.
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// True when every flag of `want` is in `self`.
    pub const fn contains(self, want: Access) -> bool {
        self.0 & want.0 == want.0
    }

    /// Union.
    pub const fn union(self, other: Access) -> Access {
        Access(self.0 | other.0)
    }
}

/// Why a request is refused. Codes are what the hardware reports.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Reject {
    /// Index beyond the table, free entry, or tag mismatch.
    BadKey = 1,
    /// The key names an invalidated region.
    InvalidatedKey = 2,
    /// The request's PD is not the region's.
    PdMismatch = 3,
    /// A wanted access flag is not granted.
    AccessDenied = 4,
    /// The request reaches outside the region (or beyond 2^64).
    OutOfBounds = 5,
}

impl Reject {
    /// Every reason, in check order.
    pub const ALL: [Reject; 5] = [
        Reject::BadKey,
        Reject::InvalidatedKey,
        Reject::PdMismatch,
        Reject::AccessDenied,
        Reject::OutOfBounds,
    ];
    /// Width of the code in hardware.
    pub const BITS: u32 = 3;

    /// The hardware code (1..=5; 0 means granted).
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The reason with hardware code `c`, if any.
    pub fn from_code(c: u8) -> Option<Reject> {
        Self::ALL.into_iter().find(|r| r.code() == c)
    }
}

/// Life cycle of a table entry.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum MrState {
    /// Never registered, or deregistered.
    #[default]
    Free = 0,
    /// Registered and usable.
    Valid = 1,
    /// Invalidated: the key is known but refused until re-registered.
    Invalid = 2,
}

/// A region to register: what the `REGISTER` command carries besides the
/// key (the model, the firmware driver and the tests share it).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Region {
    /// Protection domain.
    pub pd: u16,
    /// Access the region grants.
    pub access: Access,
    /// First virtual address.
    pub base: u64,
    /// Bytes.
    pub length: u64,
    /// log2 of the page size (`PAGE_SHIFT_MIN..=PAGE_SHIFT_MAX`).
    pub page_shift: u8,
    /// Page-table index of the region's first page.
    pub pt_base: u32,
}

/// One memory region as the table holds it: the registered [`Region`]
/// under its key's tag, with its life cycle.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct MrEntry {
    /// The key's low 8 bits.
    pub tag: u8,
    /// Life cycle.
    pub state: MrState,
    /// What was registered (`base + length <= 2^64`, a valid page shift).
    pub region: Region,
}

/// Why a programming command is refused (the table is left unchanged).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CmdError {
    /// The key's index is beyond the MR table, or a page-table index beyond
    /// the page table.
    BadIndex,
    /// Page shift outside `PAGE_SHIFT_MIN..=PAGE_SHIFT_MAX`.
    BadPageShift,
    /// `base + length > 2^64`.
    RegionWraps,
    /// A page-table entry's physical address has bits at or above `PA_BITS`.
    PaTooWide,
    /// Invalidate: the entry is not valid or its tag differs from the key's.
    KeyMismatch,
}

impl Region {
    /// Check a region before registration.
    pub fn validate(&self) -> Result<(), CmdError> {
        if !(PAGE_SHIFT_MIN..=PAGE_SHIFT_MAX).contains(&self.page_shift) {
            return Err(CmdError::BadPageShift);
        }
        if self.base as u128 + self.length as u128 > 1u128 << 64 {
            return Err(CmdError::RegionWraps);
        }
        Ok(())
    }

    /// Mask of the offset within a page.
    pub const fn page_mask(&self) -> u64 {
        (1u64 << self.page_shift) - 1
    }

    /// Index of the page holding `va`, counted from the region's first page.
    pub const fn page_index(&self, va: u64) -> u64 {
        (va >> self.page_shift) - (self.base >> self.page_shift)
    }
}

/// A translation request.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Request {
    /// rkey or lkey.
    pub key: u32,
    /// The QP's protection domain.
    pub pd: u16,
    /// Access wanted.
    pub access: Access,
    /// First virtual address.
    pub va: u64,
    /// Length in bytes (RETH DMA length is 32 bits).
    pub len: u32,
}

/// One piece of a grant: `len` bytes at physical address `pa`, inside one page.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Chunk {
    /// Physical address.
    pub pa: u64,
    /// Length in bytes (at least 1).
    pub len: u32,
}

/// The protection checks (steps 0 to 5 of the module docs). `entry` is the
/// table entry the key's index selects, `None` when the index is beyond
/// the table. `Ok(())` means granted.
pub fn check(entry: Option<&MrEntry>, req: &Request) -> Result<(), Reject> {
    if req.len == 0 {
        return Ok(());
    }
    let e = match entry {
        Some(e) if e.state != MrState::Free && e.tag == key_tag(req.key) => e,
        _ => return Err(Reject::BadKey),
    };
    if e.state == MrState::Invalid {
        return Err(Reject::InvalidatedKey);
    }
    let g = &e.region;
    if g.pd != req.pd {
        return Err(Reject::PdMismatch);
    }
    if !g.access.contains(req.access) {
        return Err(Reject::AccessDenied);
    }
    let (va, end) = (req.va as u128, req.va as u128 + req.len as u128);
    if va < g.base as u128 || end > g.base as u128 + g.length as u128 {
        return Err(Reject::OutOfBounds);
    }
    Ok(())
}

/// The chunks of a request that passed [`check`], split at the region's
/// page boundaries. `pt_entries` is the page-table size (a power of two);
/// `pt(i)` reads page-table entry `i`.
pub fn chunks<'a, F: Fn(u32) -> u64>(
    e: &'a MrEntry,
    req: &Request,
    pt_entries: u32,
    pt: F,
) -> Chunks<'a, F> {
    debug_assert!(pt_entries.is_power_of_two());
    Chunks {
        r: &e.region,
        va: req.va,
        left: req.len as u64,
        pt_mask: pt_entries as u64 - 1,
        pt,
    }
}

/// Iterator over the chunks of a grant (see [`chunks`]).
pub struct Chunks<'a, F> {
    r: &'a Region,
    va: u64,
    left: u64,
    pt_mask: u64,
    pt: F,
}

impl<F: Fn(u32) -> u64> Iterator for Chunks<'_, F> {
    type Item = Chunk;

    fn next(&mut self) -> Option<Chunk> {
        if self.left == 0 {
            return None;
        }
        let mask = self.r.page_mask();
        let index = (self.r.pt_base as u64 + self.r.page_index(self.va)) & self.pt_mask;
        let page_pa = (self.pt)(index as u32) & !mask;
        let in_page = mask + 1 - (self.va & mask);
        let len = self.left.min(in_page);
        let chunk = Chunk {
            pa: page_pa | (self.va & mask),
            len: len as u32,
        };
        self.left -= len;
        self.va = self.va.wrapping_add(len);
        Some(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region() -> MrEntry {
        MrEntry {
            tag: 0x5a,
            state: MrState::Valid,
            region: Region {
                pd: 7,
                access: Access::REMOTE_READ.union(Access::REMOTE_WRITE),
                base: 0x1_0000_0ff0,
                length: 0x2020,
                page_shift: 12,
                pt_base: 3,
            },
        }
    }

    fn req(va: u64, len: u32) -> Request {
        Request {
            key: key(9, 0x5a),
            pd: 7,
            access: Access::REMOTE_WRITE,
            va,
            len,
        }
    }

    #[test]
    fn keys() {
        assert_eq!(key(0x123, 0x45), 0x12345);
        assert_eq!(key_index(0x12345), 0x123);
        assert_eq!(key_tag(0x12345), 0x45);
    }

    #[test]
    fn check_order_and_reasons() {
        let e = region();
        assert_eq!(check(Some(&e), &req(e.region.base, 16)), Ok(()));
        assert_eq!(check(None, &req(e.region.base, 16)), Err(Reject::BadKey));
        let mut r = req(e.region.base, 16);
        r.key = key(9, 0x5b);
        assert_eq!(check(Some(&e), &r), Err(Reject::BadKey));
        let free = MrEntry {
            state: MrState::Free,
            ..e
        };
        assert_eq!(
            check(Some(&free), &req(e.region.base, 16)),
            Err(Reject::BadKey)
        );
        let inv = MrEntry {
            state: MrState::Invalid,
            ..e
        };
        assert_eq!(
            check(Some(&inv), &req(e.region.base, 16)),
            Err(Reject::InvalidatedKey)
        );
        // An invalidated entry under another tag is simply a bad key.
        assert_eq!(check(Some(&inv), &r), Err(Reject::BadKey));
        let mut r = req(e.region.base, 16);
        r.pd = 8;
        assert_eq!(check(Some(&e), &r), Err(Reject::PdMismatch));
        r.access = Access::REMOTE_ATOMIC; // PD is checked first
        assert_eq!(check(Some(&e), &r), Err(Reject::PdMismatch));
        let mut r = req(e.region.base, 16);
        r.access = Access::REMOTE_WRITE.union(Access::LOCAL_WRITE);
        assert_eq!(check(Some(&e), &r), Err(Reject::AccessDenied));
    }

    #[test]
    fn bounds() {
        let e = region();
        let last = e.region.base + e.region.length - 1;
        assert_eq!(check(Some(&e), &req(last, 1)), Ok(()));
        assert_eq!(check(Some(&e), &req(last, 2)), Err(Reject::OutOfBounds));
        assert_eq!(check(Some(&e), &req(last + 1, 1)), Err(Reject::OutOfBounds));
        assert_eq!(
            check(Some(&e), &req(e.region.base - 1, 1)),
            Err(Reject::OutOfBounds)
        );
        assert_eq!(
            check(Some(&e), &req(e.region.base, e.region.length as u32)),
            Ok(())
        );
        // A region ending at 2^64, and a request wrapping past it.
        let top = MrEntry {
            region: Region {
                base: u64::MAX - 0xfff,
                length: 0x1000,
                ..e.region
            },
            ..e
        };
        assert_eq!(top.region.validate(), Ok(()));
        assert_eq!(check(Some(&top), &req(u64::MAX, 1)), Ok(()));
        assert_eq!(
            check(Some(&top), &req(u64::MAX, 2)),
            Err(Reject::OutOfBounds)
        );
        assert_eq!(
            Region {
                length: 0x1001,
                ..top.region
            }
            .validate(),
            Err(CmdError::RegionWraps)
        );
    }

    #[test]
    fn zero_length_is_granted_without_checks() {
        let e = MrEntry {
            state: MrState::Free,
            ..region()
        };
        let mut r = req(u64::MAX, 0);
        r.pd = 99;
        r.access = Access::ALL;
        assert_eq!(check(Some(&e), &r), Ok(()));
        assert_eq!(check(None, &r), Ok(()));
        assert_eq!(chunks(&e, &r, 16, |_| 0).count(), 0);
    }

    #[test]
    fn chunks_split_at_pages() {
        let e = region();
        // Page i of the region maps to 0x80_0000 + i * 0x10_000 + junk low bits.
        let pt = |i: u32| 0x80_0000 + (i as u64 - 3) * 0x1_0000 + 0x123;
        let got: [Chunk; 3] = {
            let mut it = chunks(&e, &req(e.region.base + 8, 0x1ff8 + 0x20), 16, pt);
            [it.next().unwrap(), it.next().unwrap(), it.next().unwrap()]
        };
        assert_eq!(
            got[0],
            Chunk {
                pa: 0x80_0ff8,
                len: 8
            }
        );
        assert_eq!(
            got[1],
            Chunk {
                pa: 0x81_0000,
                len: 0x1000
            }
        );
        assert_eq!(
            got[2],
            Chunk {
                pa: 0x82_0000,
                len: 0x1000
            }
        );
        let all = chunks(&e, &req(e.region.base + 8, 0x2018), 16, pt);
        assert_eq!(all.map(|c| c.len as u64).sum::<u64>(), 0x2018);
        // Page-table indices wrap modulo the table size.
        let e2 = MrEntry {
            region: Region {
                pt_base: 15,
                ..e.region
            },
            ..e
        };
        let mut it = chunks(&e2, &req(e.region.base + 8, 0x10), 16, |i| {
            assert!(i < 16);
            (i as u64) << 12
        });
        assert_eq!(it.next(), Some(Chunk { pa: 0xfff8, len: 8 }));
        assert_eq!(it.next(), Some(Chunk { pa: 0x0000, len: 8 }));
        assert_eq!(it.next(), None);
    }
}
