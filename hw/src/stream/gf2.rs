//! GF(2) linear algebra behind the streaming CRC-32.
//!
//! The reflected CRC-32 (polynomial 0xEDB88320, DESIGN §8) is linear over
//! GF(2): the 32-bit register after a block of input bits is
//! `A^n · s ⊕ M · x`, where `s` is the register before the block, `x` the
//! block's bits (bit 0 of byte 0 first, i.e. AXI-Stream `tdata` bit order),
//! `A^n` the 32×32 matrix that advances the register over `n` zero bits and
//! `M` the 32×n matrix that feeds the data. The hardware holds these
//! matrices as constant XOR masks; this module computes them in plain Rust
//! from the one-bit step, so there is no table to retype.
//!
//! Matrices are stored as *columns*: `cols[i]` is the image of input bit `i`
//! (a 32-bit register value). [`rows`] transposes them into the per-output
//! masks that the hardware XOR trees use.

/// The reflected CRC-32 polynomial (IEEE 802.3, used by the RoCE ICRC).
pub const POLY: u32 = 0xEDB8_8320;

/// The register value a standard CRC-32 starts from.
pub const INIT: u32 = 0xFFFF_FFFF;

/// Advance the reflected CRC-32 register by one input bit.
#[inline]
pub fn step(state: u32, bit: bool) -> u32 {
    let feedback = (state ^ bit as u32) & 1;
    (state >> 1) ^ (POLY & feedback.wrapping_neg())
}

/// Undo one zero-bit step: `unstep(step(s, false)) == s` for every `s`.
///
/// `step` shifts right and XORs in `POLY` when the bit shifted out was one;
/// because bit 31 of `POLY` is set and bit 31 of `s >> 1` is clear, bit 31
/// of the result tells which happened.
#[inline]
pub fn unstep(state: u32) -> u32 {
    let out = state >> 31;
    let shifted = state ^ (POLY & out.wrapping_neg());
    (shifted << 1) | out
}

/// Feed bytes into the register (no final XOR): the software reference the
/// matrices are checked against.
pub fn update(mut state: u32, bytes: &[u8]) -> u32 {
    for &byte in bytes {
        for bit in 0..8 {
            state = step(state, (byte >> bit) & 1 == 1);
        }
    }
    state
}

/// Columns of `A^nbits`: the register advanced over `nbits` zero bits.
pub fn advance(nbits: usize) -> Vec<u32> {
    (0..32)
        .map(|i| (0..nbits).fold(1u32 << i, |s, _| step(s, false)))
        .collect()
}

/// Columns of `A^-nbits`: the register moved back over `nbits` zero bits.
pub fn retreat(nbits: usize) -> Vec<u32> {
    (0..32)
        .map(|i| (0..nbits).fold(1u32 << i, |s, _| unstep(s)))
        .collect()
}

/// Columns of the data matrix `M` for a block of `nbits` input bits, from a
/// zero register: `cols[i]` is the register after the block whose only set
/// bit is bit `i`.
pub fn data(nbits: usize) -> Vec<u32> {
    // By linearity the image of bit i is the one-bit step of a set bit
    // followed by nbits-1-i zero steps.
    let one = step(0, true);
    (0..nbits)
        .map(|i| (i + 1..nbits).fold(one, |s, _| step(s, false)))
        .collect()
}

/// Apply a column-stored matrix to an input vector given as bits.
pub fn apply(cols: &[u32], input: impl IntoIterator<Item = bool>) -> u32 {
    cols.iter()
        .zip(input)
        .filter(|(_, bit)| *bit)
        .fold(0, |acc, (col, _)| acc ^ col)
}

/// Transpose `cols` (over `cols.len()` inputs) into `outputs` row masks, each
/// a little-endian vector of 64-bit words over the inputs: bit `i` of row
/// `j` is set when input `i` reaches output `j`.
pub fn rows(cols: &[u32], outputs: usize) -> Vec<Vec<u64>> {
    let words = cols.len().div_ceil(64);
    (0..outputs)
        .map(|j| {
            let mut row = vec![0u64; words];
            for (i, col) in cols.iter().enumerate() {
                if (col >> j) & 1 == 1 {
                    row[i / 64] |= 1 << (i % 64);
                }
            }
            row
        })
        .collect()
}

/// Bits of a byte slice in CRC (and AXI `tdata`) order.
pub fn bits_of(bytes: &[u8]) -> impl Iterator<Item = bool> + '_ {
    bytes
        .iter()
        .flat_map(|b| (0..8).map(move |i| (b >> i) & 1 == 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crc::{Crc, CRC_32_ISO_HDLC};

    const CRC32: Crc<u32> = Crc::<u32>::new(&CRC_32_ISO_HDLC);

    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    }

    #[test]
    fn update_matches_crc_crate() {
        let mut seed = 7;
        for len in 0..200 {
            let data: Vec<u8> = (0..len).map(|_| lcg(&mut seed) as u8).collect();
            assert_eq!(!update(INIT, &data), CRC32.checksum(&data), "len {len}");
        }
    }

    #[test]
    fn icrc_prefix_state() {
        // DESIGN §8: the register after 8 bytes of 0xFF is 0xDEBB20E3.
        assert_eq!(update(INIT, &[0xFF; 8]), 0xDEBB_20E3);
        assert_eq!(!CRC32.checksum(&[0xFF; 8]), 0xDEBB_20E3);
    }

    #[test]
    fn unstep_inverts_step() {
        let mut seed = 3;
        for _ in 0..10_000 {
            let s = lcg(&mut seed) as u32 ^ ((lcg(&mut seed) as u32) << 16);
            assert_eq!(unstep(step(s, false)), s);
        }
    }

    #[test]
    fn block_matrices_match_bitwise_crc() {
        let mut seed = 11;
        for nbytes in [1usize, 3, 8, 16, 64] {
            let a = advance(nbytes * 8);
            let m = data(nbytes * 8);
            for _ in 0..50 {
                let s = (lcg(&mut seed) as u32) ^ ((lcg(&mut seed) as u32) << 13);
                let x: Vec<u8> = (0..nbytes).map(|_| lcg(&mut seed) as u8).collect();
                let expect = update(s, &x);
                let got = apply(&a, (0..32).map(|i| (s >> i) & 1 == 1)) ^ apply(&m, bits_of(&x));
                assert_eq!(got, expect, "{nbytes} bytes");
            }
        }
    }

    #[test]
    fn retreat_inverts_advance() {
        let mut seed = 5;
        for n in [8usize, 64, 256] {
            let a = advance(n);
            let r = retreat(n);
            for _ in 0..100 {
                let s = (lcg(&mut seed) as u32) ^ ((lcg(&mut seed) as u32) << 9);
                let fwd = apply(&a, (0..32).map(|i| (s >> i) & 1 == 1));
                assert_eq!(apply(&r, (0..32).map(|i| (fwd >> i) & 1 == 1)), s);
            }
        }
    }

    #[test]
    fn trailing_zero_bytes_are_undone_by_retreat() {
        // The hardware's last-beat trick: zero-fill the invalid bytes, then
        // move the register back over them.
        let mut seed = 17;
        for n in 1..=16usize {
            let x: Vec<u8> = (0..n).map(|_| lcg(&mut seed) as u8).collect();
            let mut padded = x.clone();
            padded.resize(16, 0);
            let raw = update(INIT, &padded);
            let back = apply(&retreat((16 - n) * 8), (0..32).map(|i| (raw >> i) & 1 == 1));
            assert_eq!(!back, CRC32.checksum(&x));
        }
    }

    #[test]
    fn rows_transpose_cols() {
        let cols = data(100);
        let r = rows(&cols, 32);
        assert_eq!(r.len(), 32);
        assert_eq!(r[0].len(), 2);
        for (i, col) in cols.iter().enumerate() {
            for (j, row) in r.iter().enumerate() {
                assert_eq!((row[i / 64] >> (i % 64)) & 1, ((col >> j) & 1) as u64);
            }
        }
    }
}
