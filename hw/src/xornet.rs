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

/// Build a shared network for the rows (each a set of input indices).
pub fn share(rows: &[Vec<usize>], inputs: usize) -> XorNet {
    let mut sets: Vec<BTreeSet<usize>> = rows.iter().map(|r| r.iter().copied().collect()).collect();
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

    fn rows_of(cols: &[u32]) -> Vec<Vec<usize>> {
        (0..32)
            .map(|j| {
                (0..cols.len())
                    .filter(|&i| (cols[i] >> j) & 1 == 1)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn shared_net_computes_the_matrix() {
        let cols = gf2::data(64);
        let rows = rows_of(&cols);
        let net = share(&rows, 64);
        let mut seed = 1u64;
        for _ in 0..500 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x: Vec<bool> = (0..64).map(|i| (seed >> (i % 64)) & 1 == 1).collect();
            let want: Vec<bool> = rows
                .iter()
                .map(|r| r.iter().fold(false, |p, &i| p ^ x[i]))
                .collect();
            assert_eq!(net.eval(&x), want);
        }
        let plain: usize = rows.iter().map(|r| r.len() - 1).sum();
        assert!(
            net.xor2_count() * 2 < plain,
            "{} vs {plain}",
            net.xor2_count()
        );
    }

    #[test]
    fn deterministic() {
        let rows = rows_of(&gf2::advance(512));
        assert_eq!(share(&rows, 32), share(&rows, 32));
    }

    #[test]
    fn trivial_rows() {
        let net = share(&[vec![], vec![3], vec![1, 2]], 4);
        assert!(net.gates.is_empty());
        assert_eq!(
            net.eval(&[false, true, false, true]),
            vec![false, true, true]
        );
    }
}
