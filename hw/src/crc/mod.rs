//! CRC: the line-rate streaming CRC-32 (ICRC and FCS).

pub mod crc32;
