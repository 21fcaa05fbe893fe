//! Shared XOR networks for constant GF(2) matrices.
//!
//! A CRC matrix row is the XOR of about half its inputs, and many rows share
//! pairs of inputs. Factoring the most frequent shared pair into one gate,
//! again and again (Paar's greedy algorithm), roughly halves the XOR2 count
//! of the CRC matrices; after LUT mapping the CRC-32 needs about a fifth
//! fewer LUTs (see docs/BENCHMARKS.md). Ties are broken by node number, so the
//! network, and with it the generated Verilog, is the same on every run.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};

/// An XOR network. Node `i < inputs` is input `i`; node `inputs + k` is
/// `gates[k].0 ^ gates[k].1`. Output `j` is the XOR of the nodes in
/// `outputs[j]` (no nodes: constant zero).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XorNet {
    pub inputs: usize,
    pub gates: Vec<(usize, usize)>,
    pub outputs: Vec<Vec<usize>>,
}

impl XorNet {
    /// Evaluate on input bits (for tests).
    pub fn eval(&self, x: &[bool]) -> Vec<bool> {
        let mut v: Vec<bool> = x.to_vec();
        for &(a, b) in &self.gates {
            v.push(v[a] ^ v[b]);
        }
        self.outputs
            .iter()
            .map(|o| o.iter().fold(false, |p, &n| p ^ v[n]))
            .collect()
    }

    /// Two-input XOR gates in all (shared gates plus the output sums).
    pub fn xor2_count(&self) -> usize {
        self.gates.len()
            + self
                .outputs
                .iter()
                .map(|o| o.len().saturating_sub(1))
                .sum::<usize>()
    }
}

/// Pair counts over all rows, ranked most frequent first.
#[derive(Default)]
struct Pairs {
    count: HashMap<(usize, usize), usize>,
    ranked: BTreeSet<(Reverse<usize>, usize, usize)>,
}

impl Pairs {
    fn change(&mut self, a: usize, b: usize, up: bool) {
        let key = (a.min(b), a.max(b));
        let old = self.count.get(&key).copied().unwrap_or(0);
        if old > 0 {
            self.ranked.remove(&(Reverse(old), key.0, key.1));
        }
        let new = if up { old + 1 } else { old - 1 };
        if new > 0 {
            self.count.insert(key, new);
            self.ranked.insert((Reverse(new), key.0, key.1));
        } else {
            self.count.remove(&key);
        }
    }

    /// The most frequent pair (ties: lowest node numbers) and its count.
    fn best(&self) -> Option<(usize, usize, usize)> {
        self.ranked.first().map(|&(Reverse(n), a, b)| (n, a, b))
    }
}

/// Build a shared network for a matrix given as row masks over `inputs`
/// inputs (little-endian 64-bit words, as [`crate::gf2::rows`] makes them).
pub fn share(rows: &[Vec<u64>], inputs: usize) -> XorNet {
    let mut sets: Vec<BTreeSet<usize>> = rows
        .iter()
        .map(|r| {
            (0..inputs)
                .filter(|i| (r[i / 64] >> (i % 64)) & 1 == 1)
                .collect()
        })
        .collect();
    let mut pairs = Pairs::default();
    for set in &sets {
        let items: Vec<usize> = set.iter().copied().collect();
        for (i, &a) in items.iter().enumerate() {
            for &b in &items[i + 1..] {
                pairs.change(a, b, true);
            }
        }
    }
    let mut gates = Vec::new();
    while let Some((n, a, b)) = pairs.best() {
        if n < 2 {
            break;
        }
        let g = inputs + gates.len();
        gates.push((a, b));
        for set in sets.iter_mut().filter(|s| s.contains(&a) && s.contains(&b)) {
            set.remove(&a);
            set.remove(&b);
            pairs.change(a, b, false);
            for &x in set.iter() {
                pairs.change(x, a, false);
                pairs.change(x, b, false);
                pairs.change(x, g, true);
            }
            set.insert(g);
        }
    }
    XorNet {
        inputs,
        gates,
        outputs: sets.into_iter().map(|s| s.into_iter().collect()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gf2;

    /// Both sides are XOR-only, hence linear: agreeing on every unit
    /// vector proves them equal on all inputs.
    fn assert_computes(net: &XorNet, cols: &[u32]) {
        for (i, &col) in cols.iter().enumerate() {
            let x: Vec<bool> = (0..cols.len()).map(|k| k == i).collect();
            let want: Vec<bool> = (0..32).map(|j| (col >> j) & 1 == 1).collect();
            assert_eq!(net.eval(&x), want, "input {i}");
        }
    }

    #[test]
    fn shared_net_computes_the_matrix() {
        for cols in [gf2::data(64), gf2::advance(512), gf2::retreat(8)] {
            let net = share(&gf2::rows(&cols, 32), cols.len());
            assert_computes(&net, &cols);
        }
    }

    #[test]
    fn sharing_halves_the_crc_data_matrix() {
        let cols = gf2::data(64);
        let net = share(&gf2::rows(&cols, 32), 64);
        let plain: usize = (0..32)
            .map(|j| cols.iter().filter(|c| (*c >> j) & 1 == 1).count() - 1)
            .sum();
        assert!(
            net.xor2_count() * 2 < plain,
            "{} vs {plain}",
            net.xor2_count()
        );
    }

    #[test]
    fn deterministic() {
        let rows = gf2::rows(&gf2::advance(512), 32);
        assert_eq!(share(&rows, 32), share(&rows, 32));
    }

    #[test]
    fn trivial_rows() {
        let net = share(&[vec![0], vec![1 << 3], vec![0b110]], 4);
        assert!(net.gates.is_empty());
        assert_eq!(
            net.eval(&[false, true, false, true]),
            vec![false, true, true]
        );
    }
}
