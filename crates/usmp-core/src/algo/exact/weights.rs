//! Which constant pool each weight goes to under [`Assignment::Fastest`](super::Assignment):
//! a knapsack per limited constant pool, solved exactly.
//!
//! Constants are live for the whole program, so a constant pool holds the sum of what it
//! is given (each rounded up to the pool's alignment), and a weight's memory time depends
//! on its pool alone. For a limited pool `f` every weight that may go there gains
//! `traffic × (1/bandwidth(u) − 1/bandwidth(f))` over `u`, the fastest unlimited pool it
//! may use otherwise; the weights of the largest total gain whose rounded sizes fit `f`'s
//! limit are found by dynamic programming over the capacity in units of the alignment.
//! With one limited constant pool that is the quickest choice of weights there is; with
//! several, each is filled in turn, fastest first, from the weights left (exact per pool,
//! not jointly). A table larger than [`MAX_CELLS`] is not solved: the greedy order by
//! traffic per byte chooses there, as it does for activations.

use crate::problem::{PoolKind, Problem};

/// The largest table (weights × capacity units) solved.
pub(crate) const MAX_CELLS: u64 = 1 << 26;

/// Per constant buffer that a knapsack decided, its candidate pools from now on: the one
/// limited pool it goes to, or its other candidates (that pool left out, so that no
/// weight the knapsack left out takes the room of one it chose). Empty where nothing was
/// decided.
pub(crate) fn choose(problem: &Problem) -> Vec<Option<Vec<usize>>> {
    let pools = problem.pools();
    let buffers = problem.buffers();
    let mut decided: Vec<Option<Vec<usize>>> = vec![None; buffers.len()];
    let mut limited: Vec<usize> = (0..pools.len())
        .filter(|&p| {
            pools[p].kind == PoolKind::Constant
                && pools[p].size_limit.is_some()
                && pools[p].bandwidth.is_some()
        })
        .collect();
    limited.sort_by_key(|&p| (std::cmp::Reverse(pools[p].bandwidth), p));
    let per_byte = |p: usize| pools[p].bandwidth.map(crate::traffic::per_byte);
    for &f in &limited {
        let (Some(limit), Some(fast)) = (pools[f].size_limit, per_byte(f)) else {
            continue;
        };
        // The weights still free that may go to `f`, with what they gain there.
        let items: Vec<(usize, u128)> = (0..buffers.len())
            .filter(|&b| buffers[b].kind == PoolKind::Constant && decided[b].is_none())
            .filter(|&b| buffers[b].candidates.contains(&f))
            .filter_map(|b| {
                let fallback = buffers[b]
                    .candidates
                    .iter()
                    .filter(|&&p| pools[p].size_limit.is_none())
                    .filter_map(|&p| per_byte(p))
                    .min()?;
                let gain = u128::from(buffers[b].traffic) * fallback.saturating_sub(fast);
                Some((b, gain))
            })
            .collect();
        let unit = items
            .iter()
            .map(|&(b, _)| problem.alignment_in(b, f))
            .fold(pools[f].alignment, u64::max)
            .max(1);
        let capacity = limit / unit;
        let cells = (items.len() as u64).saturating_mul(capacity + 1);
        if items.is_empty() || cells > MAX_CELLS {
            continue;
        }
        let weights: Vec<usize> = items
            .iter()
            .map(|&(b, _)| usize::try_from(buffers[b].size.div_ceil(unit)).unwrap_or(usize::MAX))
            .collect();
        let gains: Vec<u128> = items.iter().map(|&(_, g)| g).collect();
        let taken = knapsack(&weights, &gains, capacity as usize);
        for (k, &(b, _)) in items.iter().enumerate() {
            decided[b] = Some(if taken[k] {
                vec![f]
            } else {
                buffers[b]
                    .candidates
                    .iter()
                    .copied()
                    .filter(|&p| p != f)
                    .collect()
            });
        }
    }
    decided
}

/// Which items to take: the largest total gain whose weights sum to at most `capacity`
/// (on equal gains, the fewer units; then the earlier items).
fn knapsack(weights: &[usize], gains: &[u128], capacity: usize) -> Vec<bool> {
    let n = weights.len();
    // best[c]: (gain, -units) of the best set of the items so far within c units.
    let mut best = vec![(0u128, 0usize); capacity + 1];
    // Bit i * (capacity + 1) + c: item i improved best[c] when it was added.
    let mut took = vec![0u64; (n * (capacity + 1)).div_ceil(64)];
    let bit = |i: usize, c: usize| i * (capacity + 1) + c;
    for (i, (&w, &g)) in weights.iter().zip(gains).enumerate() {
        if w > capacity || g == 0 {
            continue;
        }
        for c in (w..=capacity).rev() {
            let (gain, units) = best[c - w];
            let with = (gain + g, units + w);
            if with.0 > best[c].0 || (with.0 == best[c].0 && with.1 < best[c].1) {
                best[c] = with;
                took[bit(i, c) / 64] |= 1 << (bit(i, c) % 64);
            }
        }
    }
    let mut taken = vec![false; n];
    let mut c = capacity;
    for i in (0..n).rev() {
        if took[bit(i, c) / 64] & (1 << (bit(i, c) % 64)) != 0 {
            taken[i] = true;
            c -= weights[i];
        }
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::knapsack;
    use crate::test_rng::Rng;

    #[test]
    fn the_knapsack_takes_the_largest_gain_that_fits() {
        let mut rng = Rng::seeded(7);
        let mut next = move |n: u64| rng.below(n);
        for _ in 0..2_000 {
            let n = 1 + next(10) as usize;
            let weights: Vec<usize> = (0..n).map(|_| 1 + next(9) as usize).collect();
            let gains: Vec<u128> = (0..n).map(|_| u128::from(next(50))).collect();
            let capacity = next(30) as usize;
            let taken = knapsack(&weights, &gains, capacity);
            let total = |set: &dyn Fn(usize) -> bool| -> (usize, u128) {
                (0..n)
                    .filter(|&i| set(i))
                    .fold((0, 0), |(w, g), i| (w + weights[i], g + gains[i]))
            };
            let (w, g) = total(&|i| taken[i]);
            assert!(w <= capacity, "{weights:?} {capacity} {taken:?}");
            let best = (0u32..1 << n)
                .map(|m| total(&|i| m & (1 << i) != 0))
                .filter(|&(w, _)| w <= capacity)
                .map(|(_, g)| g)
                .max()
                .unwrap_or(0);
            assert_eq!(g, best, "{weights:?} {gains:?} {capacity}");
        }
    }
}
