//! The invariant CRC of RoCE v2 (IBTA Annex 17.3.3, DESIGN §8).
//!
//! CRC-32 (reflected 0x04C11DB7, init all ones, final xor all ones) over:
//! 8 bytes of 0xFF standing in for the InfiniBand LRH; the IP header with
//! IPv4 TOS, TTL and header checksum (or IPv6 traffic class, flow label and
//! hop limit) set to ones; the UDP header with its checksum set to ones; the
//! BTH with byte 4 (FECN, BECN, reserved) set to 0xFF; then everything up to
//! the ICRC itself. The ICRC is sent least significant byte first.
//!
//! Not masked: the IP version, lengths, IPv4 identification, flags and
//! protocol, addresses, ports and every other BTH field.

use crate::{bth, ipv4, ipv6, udp};
use crc::{Crc, Table, CRC_32_ISO_HDLC};

/// Length of the ICRC trailer.
pub const ICRC_LEN: usize = 4;
/// What stands in for the LRH at the start of the ICRC computation.
pub const LRH_PREFIX: [u8; 8] = [0xFF; 8];

/// Slice-by-16 tables: the ICRC is the bulk of `roce-sim parse`'s work.
static CRC32: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC_32_ISO_HDLC);

/// The bytes the ICRC sets to ones, as (offset from the first IP header
/// byte, mask), for an IPv4 header without options and for IPv6: TOS, TTL
/// and header checksum, or traffic class, flow label and hop limit; the UDP
/// checksum; BTH byte 4 (FECN, BECN, reserved). The software ICRC below and
/// the hardware ICRC paths all read this one table.
pub const fn masked_bytes(ipv6: bool) -> &'static [(usize, u8)] {
    if ipv6 {
        &MASKED_V6
    } else {
        &MASKED_V4
    }
}

const fn l4_masks(ip_len: usize) -> [(usize, u8); 3] {
    [
        (ip_len + udp::field::CHECKSUM.start, 0xFF),
        (ip_len + udp::field::CHECKSUM.start + 1, 0xFF),
        (ip_len + udp::HEADER_LEN + bth::field::FECN_BECN, 0xFF),
    ]
}

const MASKED_V4: [(usize, u8); 7] = {
    let l4 = l4_masks(ipv4::HEADER_LEN);
    [
        (ipv4::field::TOS, 0xFF),
        (ipv4::field::TTL, 0xFF),
        (ipv4::field::CHECKSUM.start, 0xFF),
        (ipv4::field::CHECKSUM.start + 1, 0xFF),
        l4[0],
        l4[1],
        l4[2],
    ]
};

const MASKED_V6: [(usize, u8); 8] = {
    let l4 = l4_masks(ipv6::HEADER_LEN);
    // Byte 0 keeps the version nibble; the traffic class starts below it.
    [
        (ipv6::field::VER_TC_FLOW.start, 0x0F),
        (ipv6::field::VER_TC_FLOW.start + 1, 0xFF),
        (ipv6::field::VER_TC_FLOW.start + 2, 0xFF),
        (ipv6::field::VER_TC_FLOW.start + 3, 0xFF),
        (ipv6::field::HOP_LIMIT, 0xFF),
        l4[0],
        l4[1],
        l4[2],
    ]
};

/// Longest masked region: IPv4 with 40 bytes of options + UDP + BTH.
const MAX_MASKED: usize = 60 + udp::HEADER_LEN + bth::HEADER_LEN;

/// Copies the masked part of `l3` (IP, UDP and BTH headers) with the
/// variant fields set to ones; returns the copy and its length. `None` when
/// `l3` is too short or not IPv4/IPv6.
fn masked_headers(l3: &[u8]) -> Option<([u8; MAX_MASKED], usize)> {
    let ip_len = match l3.first()? >> 4 {
        4 => ((l3[0] & 0x0F) as usize * 4).max(ipv4::HEADER_LEN),
        6 => ipv6::HEADER_LEN,
        _ => return None,
    };
    let n = ip_len + udp::HEADER_LEN + bth::HEADER_LEN;
    if l3.len() < n {
        return None;
    }
    let mut m = [0u8; MAX_MASKED];
    m[..n].copy_from_slice(&l3[..n]);
    let v6 = l3[0] >> 4 == 6;
    // IPv4 options move UDP and the BTH: shift the table's L4 offsets.
    let skew = if v6 { 0 } else { ip_len - ipv4::HEADER_LEN };
    for &(off, mask) in masked_bytes(v6) {
        let at = if off >= ipv4::HEADER_LEN && !v6 {
            off + skew
        } else {
            off
        };
        m[at] |= mask;
    }
    Some((m, n))
}

/// The ICRC of `covered`: the bytes from the first IP header byte up to, not
/// including, the ICRC trailer. `None` if `covered` does not start with a
/// whole IPv4/IPv6 + UDP + BTH header.
pub fn compute(covered: &[u8]) -> Option<u32> {
    let (masked, n) = masked_headers(covered)?;
    let mut d = CRC32.digest();
    d.update(&LRH_PREFIX);
    d.update(&masked[..n]);
    d.update(&covered[n..]);
    Some(d.finalize())
}

/// Checks the ICRC of `l3`: the IP datagram (IP header to ICRC trailer
/// inclusive, without Ethernet padding).
pub fn check(l3: &[u8]) -> bool {
    let Some(split) = l3.len().checked_sub(ICRC_LEN) else {
        return false;
    };
    let (covered, trailer) = l3.split_at(split);
    compute(covered).is_some_and(|c| c.to_le_bytes() == trailer)
}

/// Computes the ICRC of `l3` (IP header to ICRC trailer inclusive) and writes
/// it into the last four bytes. Returns it, or `None` as for [`compute`].
pub fn fill(l3: &mut [u8]) -> Option<u32> {
    let split = l3.len().checked_sub(ICRC_LEN)?;
    let c = compute(&l3[..split])?;
    l3[split..].copy_from_slice(&c.to_le_bytes());
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frame 71 of ../shared/vectors (IPv4 RC SEND ONLY, 32 bytes), from the
    /// IP header on; its ICRC was cross-checked by scapy and Wireshark.
    const FRAME71_L3: &str = "4502004c108340004011161a0a0000010a000002c0de12b7003800000400ffff0000012380000800151c232a31383f464d545b626970777e858c939aa1a8afb6bdc4cbd2d9e0e7eefc343445";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn reference_frame_checks() {
        let l3 = hex(FRAME71_L3);
        assert!(check(&l3));
        let mut again = l3.clone();
        again[l3.len() - 4..].fill(0);
        fill(&mut again).unwrap();
        assert_eq!(again, l3);
    }

    /// The same CRC from the bit-serial definition (no tables, no crate).
    #[test]
    fn matches_bitwise_crc() {
        let l3 = hex(FRAME71_L3);
        let (m, n) = masked_headers(&l3).unwrap();
        let mut crc = 0xFFFF_FFFFu32;
        let bytes = LRH_PREFIX.iter().chain(&m[..n]).chain(&l3[n..l3.len() - 4]);
        for &b in bytes {
            crc ^= b as u32;
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        assert_eq!(compute(&l3[..l3.len() - 4]), Some(!crc));
    }

    #[test]
    fn masked_fields_do_not_matter() {
        let l3 = hex(FRAME71_L3);
        for (i, mask) in [
            (1, 0xFF),
            (8, 0xFF),
            (10, 0xFF),
            (11, 0xFF),
            (26, 0xFF),
            (27, 0xFF),
            (32, 0xC0),
        ] {
            let mut x = l3.clone();
            x[i] ^= mask;
            assert!(check(&x), "byte {i} should be masked");
        }
        for i in [0, 2, 3, 4, 6, 9, 12, 19, 20, 23, 24, 28, 29, 31, 33, 40, 50] {
            let mut x = l3.clone();
            x[i] ^= 0x01;
            assert!(!check(&x), "byte {i} should be covered");
        }
    }

    #[test]
    fn too_short_or_not_ip() {
        assert!(!check(&[]));
        assert!(!check(&[0x45; 10]));
        assert_eq!(compute(&[0x55; 64]), None);
    }
}
