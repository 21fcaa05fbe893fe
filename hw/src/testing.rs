//! Helpers for the rust-hdl simulation tests of the queue-like blocks.

/// One cycle of a random producer / consumer pair in three phases of 200
/// cycles: filling (offer 7/8, take 2/8), draining (2/8, 7/8), then
/// `steady` (eighths for both). Returns (offer, take); `rng` is an
/// xorshift64 state.
pub(crate) fn phased_handshake(rng: &mut u64, cycle: u64, steady: u64) -> (bool, bool) {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    let (op, tp) = match (cycle / 200) % 3 {
        0 => (7, 2),
        1 => (2, 7),
        _ => (steady, steady),
    };
    (*rng % 8 < op, (*rng >> 8) % 8 < tp)
}
