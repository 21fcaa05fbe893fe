//! Stream beats as the bus-functional models see them, and the two port
//! traits the generated model adapters implement.
//!
//! Byte `i` of a beat is `tdata[8i+7:8i]`; wide `tdata` travels as `u32`
//! words, least significant first (Verilator's layout).

/// One beat of a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Beat {
    /// Exactly one byte per byte lane (`W / 8`); lanes outside `keep` are
    /// don't-care.
    pub data: Vec<u8>,
    pub keep: u64,
    pub last: bool,
    pub user: bool,
}

impl Beat {
    /// The bytes this beat carries (`keep` lanes, in lane order).
    pub fn kept(&self) -> impl Iterator<Item = u8> + '_ {
        self.data
            .iter()
            .enumerate()
            .filter(|(i, _)| (self.keep >> i) & 1 == 1)
            .map(|(_, b)| *b)
    }

    /// True when `keep` is `2^n - 1` with `n >= 1` (packed from lane 0),
    /// and, unless this is the last beat, all lanes.
    pub fn keep_is_packed(&self, lanes: usize) -> bool {
        let full = full_keep(lanes);
        if self.last {
            self.keep & 1 == 1
                && self.keep & (self.keep.wrapping_add(1)) == 0
                && self.keep & !full == 0
        } else {
            self.keep == full
        }
    }
}

/// `keep` with all `lanes` set.
pub fn full_keep(lanes: usize) -> u64 {
    if lanes >= 64 {
        u64::MAX
    } else {
        (1u64 << lanes) - 1
    }
}

/// A model's receiving stream port (the bench drives it).
pub trait StreamInPort {
    /// Byte lanes (`W / 8`).
    fn bytes(&self) -> usize;
    /// Present a beat (`tvalid` high) or nothing (`tvalid` low).
    fn drive(&mut self, beat: Option<&Beat>);
    /// `tready` as the model drives it now (after `eval()`).
    fn ready(&self) -> bool;
}

/// A model's sending stream port (the bench receives from it).
pub trait StreamOutPort {
    /// Byte lanes (`W / 8`).
    fn bytes(&self) -> usize;
    /// Drive `tready`.
    fn set_ready(&mut self, ready: bool);
    /// The beat on the port when `tvalid` is high (after `eval()`).
    fn peek(&self) -> Option<Beat>;
}

/// Little-endian `u64` from up to 8 bytes.
pub fn le_u64(bytes: &[u8]) -> u64 {
    assert!(bytes.len() <= 8);
    bytes.iter().rev().fold(0, |acc, &b| (acc << 8) | b as u64)
}

/// Little-endian `u32` words from bytes (`N * 4` bytes or fewer).
pub fn le_words<const N: usize>(bytes: &[u8]) -> [u32; N] {
    assert!(bytes.len() <= N * 4);
    let mut w = [0u32; N];
    for (i, &b) in bytes.iter().enumerate() {
        w[i / 4] |= (b as u32) << (8 * (i % 4));
    }
    w
}

/// The low `n` bytes of a value, least significant first.
pub fn bytes_from_u64(v: u64, n: usize) -> Vec<u8> {
    (0..n).map(|i| (v >> (8 * i)) as u8).collect()
}

/// The low `n` bytes of a word array, least significant first.
pub fn bytes_from_words(w: &[u32], n: usize) -> Vec<u8> {
    (0..n).map(|i| (w[i / 4] >> (8 * (i % 4))) as u8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips() {
        let bytes: Vec<u8> = (1..=64).collect();
        let w: [u32; 16] = le_words(&bytes);
        assert_eq!(w[0], 0x0403_0201);
        assert_eq!(bytes_from_words(&w, 64), bytes);
        assert_eq!(le_u64(&bytes[..8]), 0x0807_0605_0403_0201);
        assert_eq!(bytes_from_u64(0x0807_0605_0403_0201, 8), bytes[..8]);
    }

    #[test]
    fn keep_rules() {
        let beat = |keep, last| Beat {
            data: vec![0; 8],
            keep,
            last,
            user: false,
        };
        assert!(beat(0xff, false).keep_is_packed(8));
        assert!(!beat(0x7f, false).keep_is_packed(8));
        assert!(beat(0x07, true).keep_is_packed(8));
        assert!(!beat(0x05, true).keep_is_packed(8));
        assert!(!beat(0x00, true).keep_is_packed(8));
        assert!(!beat(0x1ff, true).keep_is_packed(8));
        assert_eq!(beat(0x05, true).kept().count(), 2);
    }
}
