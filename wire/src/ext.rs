//! Extension transport headers that follow the BTH (IBTA 9.3, 9.4, 9.5).
//! Which ones a packet carries, and in what order, is the opcode table's
//! business ([`crate::opcode`]); every field is big-endian.
//!
//! ```text
//! RETH  (16) | VA (64) | R_Key (32) | DMA length (32) |
//! AETH   (4) | syndrome (8) | MSN (24) |
//! ImmDt  (4) | immediate data (32) |
//! IETH   (4) | R_Key to invalidate (32) |
//! AtomicETH    (28) | VA (64) | R_Key (32) | swap or add data (64) | compare data (64) |
//! AtomicAckETH  (8) | original remote data (64) |
//! DETH   (8) | Q_Key (32) | reserved (8) | source QP (24) |
//! CNP   (16) | reserved, zero |
//! ```

use crate::aeth::Syndrome;
use crate::be;
use crate::opcode::{ExtKind, OpcodeInfo};
use crate::{DropReason, Result};

macro_rules! view {
    ($len:expr, $(#[$doc:meta])*) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct Packet<T: AsRef<[u8]>> {
            buffer: T,
        }

        /// Header length.
        pub const HEADER_LEN: usize = $len;

        impl<T: AsRef<[u8]>> Packet<T> {
            /// A view without checks.
            pub const fn new_unchecked(buffer: T) -> Packet<T> {
                Packet { buffer }
            }
            /// A view whose header is present.
            pub fn new_checked(buffer: T) -> crate::Result<Packet<T>> {
                let p = Packet::new_unchecked(buffer);
                p.check_len()?;
                Ok(p)
            }
            /// The header is present.
            pub fn check_len(&self) -> crate::Result<()> {
                if self.buffer.as_ref().len() < HEADER_LEN {
                    Err(crate::DropReason::Truncated)
                } else {
                    Ok(())
                }
            }
        }
    };
}

/// RDMA extended transport header.
pub mod reth {
    use crate::be;
    view!(
        16,
        /// A view of a RETH.
    );
    /// Byte ranges.
    pub mod field {
        use crate::Field;
        /// Virtual address.
        pub const VA: Field = 0..8;
        /// Remote key.
        pub const RKEY: Field = 8..12;
        /// DMA length.
        pub const DMA_LEN: Field = 12..16;
    }
    impl<T: AsRef<[u8]>> Packet<T> {
        /// Virtual address.
        pub fn va(&self) -> u64 {
            be::u64(&self.buffer.as_ref()[field::VA])
        }
        /// Remote key.
        pub fn rkey(&self) -> u32 {
            be::u32(&self.buffer.as_ref()[field::RKEY])
        }
        /// DMA length of the whole message.
        pub fn dma_len(&self) -> u32 {
            be::u32(&self.buffer.as_ref()[field::DMA_LEN])
        }
    }
    impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
        /// Writes all fields.
        pub fn set(&mut self, va: u64, rkey: u32, dma_len: u32) {
            let b = self.buffer.as_mut();
            be::set_u64(&mut b[field::VA], va);
            be::set_u32(&mut b[field::RKEY], rkey);
            be::set_u32(&mut b[field::DMA_LEN], dma_len);
        }
    }
}

/// ACK extended transport header.
pub mod aeth {
    use crate::aeth::Syndrome;
    use crate::be;
    view!(
        4,
        /// A view of an AETH.
    );
    /// Byte ranges.
    pub mod field {
        use crate::Field;
        /// Syndrome.
        pub const SYNDROME: usize = 0;
        /// Message sequence number.
        pub const MSN: Field = 1..4;
    }
    impl<T: AsRef<[u8]>> Packet<T> {
        /// Syndrome.
        pub fn syndrome(&self) -> Syndrome {
            Syndrome::from_byte(self.buffer.as_ref()[field::SYNDROME])
        }
        /// Message sequence number (24 bits).
        pub fn msn(&self) -> u32 {
            be::u24(&self.buffer.as_ref()[field::MSN])
        }
    }
    impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
        /// Writes all fields.
        pub fn set(&mut self, syndrome: Syndrome, msn: u32) {
            let b = self.buffer.as_mut();
            b[field::SYNDROME] = syndrome.to_byte();
            be::set_u24(&mut b[field::MSN], msn);
        }
    }
}

/// Single 32-bit big-endian word headers: ImmDt and IETH.
pub mod word {
    use crate::be;
    view!(
        4,
        /// A view of a one-word header (ImmDt or IETH).
    );
    impl<T: AsRef<[u8]>> Packet<T> {
        /// The word.
        pub fn value(&self) -> u32 {
            be::u32(&self.buffer.as_ref()[..4])
        }
    }
    impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
        /// Writes the word.
        pub fn set(&mut self, v: u32) {
            be::set_u32(&mut self.buffer.as_mut()[..4], v);
        }
    }
}

/// Atomic extended transport header.
pub mod atomic_eth {
    use crate::be;
    view!(
        28,
        /// A view of an AtomicETH.
    );
    /// Byte ranges.
    pub mod field {
        use crate::Field;
        /// Virtual address.
        pub const VA: Field = 0..8;
        /// Remote key.
        pub const RKEY: Field = 8..12;
        /// Swap (CMP & SWAP) or add (FETCH & ADD) operand.
        pub const SWAP_ADD: Field = 12..20;
        /// Compare operand.
        pub const COMPARE: Field = 20..28;
    }
    impl<T: AsRef<[u8]>> Packet<T> {
        /// Virtual address.
        pub fn va(&self) -> u64 {
            be::u64(&self.buffer.as_ref()[field::VA])
        }
        /// Remote key.
        pub fn rkey(&self) -> u32 {
            be::u32(&self.buffer.as_ref()[field::RKEY])
        }
        /// Swap or add operand.
        pub fn swap_add(&self) -> u64 {
            be::u64(&self.buffer.as_ref()[field::SWAP_ADD])
        }
        /// Compare operand.
        pub fn compare(&self) -> u64 {
            be::u64(&self.buffer.as_ref()[field::COMPARE])
        }
    }
    impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
        /// Writes all fields.
        pub fn set(&mut self, va: u64, rkey: u32, swap_add: u64, compare: u64) {
            let b = self.buffer.as_mut();
            be::set_u64(&mut b[field::VA], va);
            be::set_u32(&mut b[field::RKEY], rkey);
            be::set_u64(&mut b[field::SWAP_ADD], swap_add);
            be::set_u64(&mut b[field::COMPARE], compare);
        }
    }
}

/// Atomic acknowledge extended transport header.
pub mod atomic_ack_eth {
    use crate::be;
    view!(
        8,
        /// A view of an AtomicAckETH.
    );
    impl<T: AsRef<[u8]>> Packet<T> {
        /// The remote data before the atomic operation.
        pub fn orig_remote_data(&self) -> u64 {
            be::u64(&self.buffer.as_ref()[..8])
        }
    }
    impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
        /// Writes the field.
        pub fn set(&mut self, v: u64) {
            be::set_u64(&mut self.buffer.as_mut()[..8], v);
        }
    }
}

/// Datagram extended transport header.
pub mod deth {
    use crate::be;
    view!(
        8,
        /// A view of a DETH.
    );
    /// Byte ranges.
    pub mod field {
        use crate::Field;
        /// Queue key.
        pub const QKEY: Field = 0..4;
        /// Source QP (after one reserved byte).
        pub const SRC_QP: Field = 5..8;
    }
    impl<T: AsRef<[u8]>> Packet<T> {
        /// Queue key.
        pub fn qkey(&self) -> u32 {
            be::u32(&self.buffer.as_ref()[field::QKEY])
        }
        /// Source QP (24 bits).
        pub fn src_qp(&self) -> u32 {
            be::u24(&self.buffer.as_ref()[field::SRC_QP])
        }
    }
    impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
        /// Writes all fields; the reserved byte is zero.
        pub fn set(&mut self, qkey: u32, src_qp: u32) {
            let b = self.buffer.as_mut();
            be::set_u32(&mut b[field::QKEY], qkey);
            b[4] = 0;
            be::set_u24(&mut b[field::SRC_QP], src_qp);
        }
    }
}

/// A RETH.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct RethRepr {
    /// Virtual address.
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
    /// DMA length.
    pub dma_len: u32,
}

/// An AETH.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct AethRepr {
    /// Syndrome.
    pub syndrome: Syndrome,
    /// Message sequence number (24 bits).
    pub msn: u32,
}

/// An AtomicETH.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct AtomicEthRepr {
    /// Virtual address (8-byte aligned for a valid atomic).
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
    /// Swap or add operand.
    pub swap_add: u64,
    /// Compare operand.
    pub compare: u64,
}

/// An AtomicAckETH.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct AtomicAckEthRepr {
    /// The remote data before the operation.
    pub orig_remote_data: u64,
}

/// A DETH.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct DethRepr {
    /// Queue key.
    pub qkey: u32,
    /// Source QP (24 bits).
    pub src_qp: u32,
}

/// The extension headers of one packet. Exactly those the opcode lists are
/// `Some` after parsing, and [`ExtHeaders::emit`] requires the same.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ExtHeaders {
    /// RETH.
    pub reth: Option<RethRepr>,
    /// AETH.
    pub aeth: Option<AethRepr>,
    /// Immediate data.
    pub immdt: Option<u32>,
    /// R_Key to invalidate.
    pub ieth: Option<u32>,
    /// AtomicETH.
    pub atomic_eth: Option<AtomicEthRepr>,
    /// AtomicAckETH.
    pub atomic_ack_eth: Option<AtomicAckEthRepr>,
    /// DETH.
    pub deth: Option<DethRepr>,
}

impl ExtHeaders {
    /// Is a header of kind `k` held? (The CNP's reserved bytes carry no data
    /// and always count as held.)
    pub const fn holds(&self, k: ExtKind) -> bool {
        match k {
            ExtKind::Reth => self.reth.is_some(),
            ExtKind::Aeth => self.aeth.is_some(),
            ExtKind::ImmDt => self.immdt.is_some(),
            ExtKind::Ieth => self.ieth.is_some(),
            ExtKind::AtomicEth => self.atomic_eth.is_some(),
            ExtKind::AtomicAckEth => self.atomic_ack_eth.is_some(),
            ExtKind::Deth => self.deth.is_some(),
            ExtKind::Cnp => true,
        }
    }

    /// Parses the headers `info` lists from the start of `buf`.
    pub fn parse(info: &OpcodeInfo, buf: &[u8]) -> Result<ExtHeaders> {
        if buf.len() < info.ext_len() {
            return Err(DropReason::Truncated);
        }
        let mut h = ExtHeaders::default();
        let mut off = 0;
        for &k in info.headers {
            let b = &buf[off..off + k.size()];
            match k {
                ExtKind::Reth => {
                    let p = reth::Packet::new_unchecked(b);
                    h.reth = Some(RethRepr {
                        va: p.va(),
                        rkey: p.rkey(),
                        dma_len: p.dma_len(),
                    });
                }
                ExtKind::Aeth => {
                    let p = aeth::Packet::new_unchecked(b);
                    h.aeth = Some(AethRepr {
                        syndrome: p.syndrome(),
                        msn: p.msn(),
                    });
                }
                ExtKind::ImmDt => h.immdt = Some(be::u32(b)),
                ExtKind::Ieth => h.ieth = Some(be::u32(b)),
                ExtKind::AtomicEth => {
                    let p = atomic_eth::Packet::new_unchecked(b);
                    h.atomic_eth = Some(AtomicEthRepr {
                        va: p.va(),
                        rkey: p.rkey(),
                        swap_add: p.swap_add(),
                        compare: p.compare(),
                    });
                }
                ExtKind::AtomicAckEth => {
                    let p = atomic_ack_eth::Packet::new_unchecked(b);
                    h.atomic_ack_eth = Some(AtomicAckEthRepr {
                        orig_remote_data: p.orig_remote_data(),
                    });
                }
                ExtKind::Deth => {
                    let p = deth::Packet::new_unchecked(b);
                    h.deth = Some(DethRepr {
                        qkey: p.qkey(),
                        src_qp: p.src_qp(),
                    });
                }
                ExtKind::Cnp => {}
            }
            off += k.size();
        }
        Ok(h)
    }

    /// The first header kind that `info` needs but `self` lacks, or that
    /// `self` holds but `info` does not list.
    pub fn mismatch(&self, info: &OpcodeInfo) -> Option<ExtKind> {
        ExtKind::ALL
            .into_iter()
            .find(|&k| k != ExtKind::Cnp && self.holds(k) != info.has(k))
    }

    /// Writes the headers `info` lists into the start of `buf`
    /// (`buf.len() >= info.ext_len()`); the caller has checked
    /// [`ExtHeaders::mismatch`].
    pub fn emit(&self, info: &OpcodeInfo, buf: &mut [u8]) {
        let mut off = 0;
        for &k in info.headers {
            let b = &mut buf[off..off + k.size()];
            match k {
                ExtKind::Reth => {
                    let r = self.reth.unwrap_or_default();
                    reth::Packet::new_unchecked(b).set(r.va, r.rkey, r.dma_len);
                }
                ExtKind::Aeth => {
                    let a = self.aeth.unwrap_or(AethRepr {
                        syndrome: Syndrome::ACK_NO_CREDITS,
                        msn: 0,
                    });
                    aeth::Packet::new_unchecked(b).set(a.syndrome, a.msn);
                }
                ExtKind::ImmDt => word::Packet::new_unchecked(b).set(self.immdt.unwrap_or(0)),
                ExtKind::Ieth => word::Packet::new_unchecked(b).set(self.ieth.unwrap_or(0)),
                ExtKind::AtomicEth => {
                    let a = self.atomic_eth.unwrap_or_default();
                    atomic_eth::Packet::new_unchecked(b).set(a.va, a.rkey, a.swap_add, a.compare);
                }
                ExtKind::AtomicAckEth => atomic_ack_eth::Packet::new_unchecked(b)
                    .set(self.atomic_ack_eth.unwrap_or_default().orig_remote_data),
                ExtKind::Deth => {
                    let d = self.deth.unwrap_or_default();
                    deth::Packet::new_unchecked(b).set(d.qkey, d.src_qp);
                }
                ExtKind::Cnp => b.fill(0),
            }
            off += k.size();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aeth::NakCode;
    use crate::opcode::Opcode;

    // AtomicETH and AETH+AtomicAckETH of shared vector frames 28 and 30.
    const CMP_SWAP: [u8; 28] = [
        0x00, 0x00, 0x7f, 0x00, 0x00, 0x01, 0x40, 0x00, 0x00, 0xab, 0xcd, 0xef, 0x11, 0x11, 0x11,
        0x11, 0x22, 0x22, 0x22, 0x44, 0x55, 0x55, 0x55, 0x55, 0x88, 0x88, 0x88, 0x88,
    ];

    #[test]
    fn deconstruct_atomic() {
        let p = atomic_eth::Packet::new_checked(&CMP_SWAP[..]).unwrap();
        assert_eq!(p.va(), 0x7f00_0001_4000);
        assert_eq!(p.rkey(), 0xabcdef);
        assert_eq!(p.swap_add(), 0x1111_1111_2222_2244);
        assert_eq!(p.compare(), 0x5555_5555_8888_8888);
    }

    #[test]
    fn construct_and_parse_every_opcode() {
        for info in &crate::opcode::TABLE {
            let h = ExtHeaders {
                reth: info.has(ExtKind::Reth).then_some(RethRepr {
                    va: 0x1122_3344_5566_7788,
                    rkey: 0xdead_beef,
                    dma_len: 4097,
                }),
                aeth: info.has(ExtKind::Aeth).then_some(AethRepr {
                    syndrome: Syndrome::Nak(NakCode::RemoteAccessError),
                    msn: 0xFF_FFFE,
                }),
                immdt: info.has(ExtKind::ImmDt).then_some(0x0102_0304),
                ieth: info.has(ExtKind::Ieth).then_some(0xCAFE),
                atomic_eth: info.has(ExtKind::AtomicEth).then_some(AtomicEthRepr {
                    va: 8,
                    rkey: 9,
                    swap_add: 10,
                    compare: 11,
                }),
                atomic_ack_eth: info.has(ExtKind::AtomicAckEth).then_some(AtomicAckEthRepr {
                    orig_remote_data: u64::MAX,
                }),
                deth: info.has(ExtKind::Deth).then_some(DethRepr {
                    qkey: 0x8000_0000,
                    src_qp: 0xFF_FFFF,
                }),
            };
            assert_eq!(h.mismatch(info), None, "{}", info.name);
            let mut buf = [0xAAu8; 64];
            h.emit(info, &mut buf);
            assert!(
                buf[info.ext_len()..].iter().all(|&b| b == 0xAA),
                "{} wrote past its headers",
                info.name
            );
            assert_eq!(
                ExtHeaders::parse(info, &buf[..info.ext_len()]).unwrap(),
                h,
                "{}",
                info.name
            );
            if info.ext_len() > 0 {
                assert_eq!(
                    ExtHeaders::parse(info, &buf[..info.ext_len() - 1]).unwrap_err(),
                    DropReason::Truncated
                );
            }
        }
    }

    #[test]
    fn mismatch_names_the_header() {
        let ack = Opcode(0x11).info().unwrap();
        assert_eq!(ExtHeaders::default().mismatch(ack), Some(ExtKind::Aeth));
        let extra = ExtHeaders {
            immdt: Some(1),
            aeth: Some(AethRepr {
                syndrome: Syndrome::ACK_NO_CREDITS,
                msn: 0,
            }),
            ..Default::default()
        };
        assert_eq!(extra.mismatch(ack), Some(ExtKind::ImmDt));
    }
}
