//! Lower bounds: how many bytes no plan can go below.
//!
//! Buffers that conflict pairwise occupy disjoint bytes, so the total of any set of
//! mutually conflicting buffers (a clique) bounds the sum of the pool sizes from below.
//! For live ranges the largest clique is exact to compute: the peak of the summed sizes of
//! the buffers live at one step. For a general conflict graph the largest clique is
//! NP-hard, so a greedy search finds a good clique, and any clique is a valid bound.
//! Alignment padding is ignored, which only makes the bound weaker, never wrong.
//!
//! With several pools a buffer lands in one of its candidates. Group the pools of a kind
//! into disjoint sets: the buffers whose candidates all lie in one set are in that set's
//! pools in any plan, so those pools together hold at least their clique, and the sets'
//! bounds add up. The best such partition is the total bound: it is at least the
//! whole-program peak (one set) and the sum of the per-pool bounds (singletons), and more
//! than both when pools share some buffers but not others. A plan's own pools get a
//! second, plan-relative bound, [`assigned`]: the clique of the buffers it put there.
//!
//! An output declared to overlap its input ([`Overlap`](crate::problem::Overlap)) may
//! share up to its window's most bytes with it, so a clique holding both counts that
//! much less (see `overlap`): the bounds stay bounds of the problem as declared.

mod overlap;

use crate::problem::{Conflicts, PoolKind, Problem};

/// Why no plan can exist, from the same argument as the bound: buffers that can only go
/// to some bounded pools need more bytes at once than those pools' limits hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Infeasible {
    /// The pools (indices), every one with a limit.
    pub pools: Vec<usize>,
    /// The bytes the buffers that can only go to `pools` need at once (at least).
    pub needed: u64,
    /// What `pools` hold: the sum of their limits, or for `buffer` the largest one.
    pub limit: u64,
    /// A single buffer larger than each of its candidate pools, when that is the reason.
    pub buffer: Option<usize>,
}

/// A proof that `problem` has no plan, when the bound's argument gives one: one buffer
/// bigger than each of its (bounded) candidates, or a set of bounded pools (every set up
/// to 6 pools of a kind; beyond, single pools and all of them) whose forced buffers'
/// clique exceeds their summed limits. `None` says nothing: a plan may or may not exist.
pub fn infeasible(problem: &Problem) -> Option<Infeasible> {
    let pools = problem.pools();
    for (i, b) in problem.buffers().iter().enumerate() {
        let limits: Option<Vec<u64>> = b.candidates.iter().map(|&p| pools[p].size_limit).collect();
        if let Some(largest) = limits.and_then(|l| l.into_iter().max())
            && b.size > largest
        {
            return Some(Infeasible {
                pools: b.candidates.clone(),
                needed: b.size,
                limit: largest,
                buffer: Some(i),
            });
        }
    }
    // Each pool's buffers with no other candidate, filed once when first needed.
    let mut alone: Option<Vec<Vec<usize>>> = None;
    for kind in [PoolKind::Workspace, PoolKind::Constant] {
        let bounded: Vec<usize> = (0..pools.len())
            .filter(|&p| pools[p].kind == kind && pools[p].size_limit.is_some())
            .collect();
        let sets: Vec<Vec<usize>> = if bounded.len() <= PARTITION_POOLS {
            (1u64..1 << bounded.len())
                .map(|set| {
                    let members = (0..bounded.len()).filter(|k| set & 1 << k != 0);
                    members.map(|k| bounded[k]).collect()
                })
                .collect()
        } else {
            let mut sets: Vec<Vec<usize>> = bounded.iter().map(|&p| vec![p]).collect();
            sets.push(bounded.clone());
            sets
        };
        for set in sets {
            // Beyond PARTITION_POOLS the sets are the single pools and all of them: the
            // single pools' buffers come from one filing pass, so the check stays linear
            // in buffers plus pools (a pass per pool took over a minute for 100,000 pools).
            let forced = match set.as_slice() {
                &[p] if bounded.len() > PARTITION_POOLS => {
                    std::mem::take(&mut alone.get_or_insert_with(|| alone_in(problem))[p])
                }
                _ => forced_within(problem, &set),
            };
            let limit = set.iter().fold(0u64, |t, &p| {
                t.saturating_add(pools[p].size_limit.unwrap_or(u64::MAX))
            });
            let needed = clique_bound(problem, &forced);
            if needed > limit {
                return Some(Infeasible {
                    pools: set,
                    needed,
                    limit,
                    buffer: None,
                });
            }
        }
    }
    None
}

/// For each pool, the buffers whose only candidate it is (candidates are duplicate-free
/// and of the buffer's kind), filed in one pass over the buffers.
fn alone_in(problem: &Problem) -> Vec<Vec<usize>> {
    let mut alone = vec![Vec::new(); problem.pools().len()];
    for (i, b) in problem.buffers().iter().enumerate() {
        if let [p] = b.candidates[..] {
            alone[p].push(i);
        }
    }
    alone
}

/// The buffers whose candidates all lie within the pools `set`.
fn forced_within(problem: &Problem, set: &[usize]) -> Vec<usize> {
    let mut within = vec![false; problem.pools().len()];
    for &p in set {
        within[p] = true;
    }
    (0..problem.buffers().len())
        .filter(|&i| problem.buffers()[i].candidates.iter().all(|&p| within[p]))
        .collect()
}

/// The bound reported with every plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LowerBound {
    /// Bound on the sum of all pool sizes (workspace and constant).
    pub total: u64,
    /// Bound per pool from the buffers that can only go to that pool; 0 when none must.
    pub per_pool: Vec<u64>,
}

/// How many starting buffers the greedy clique search tries for conflict graphs; enough
/// to find the dense core of real problems while staying linear in practice.
const CLIQUE_STARTS: usize = 64;

impl LowerBound {
    /// Computes the bound for `problem`.
    pub fn of(problem: &Problem) -> LowerBound {
        let mut per_pool = vec![0; problem.pools().len()];
        let alone = alone_in(problem);
        let total = kind_bound(problem, PoolKind::Workspace, &alone, &mut per_pool).saturating_add(
            kind_bound(problem, PoolKind::Constant, &alone, &mut per_pool),
        );
        LowerBound { total, per_pool }
    }
}

/// Pools of one kind up to which every partition is tried (203 partitions of 6); with
/// more, only the whole set and the singletons.
const PARTITION_POOLS: usize = 6;

/// The best bound over partitions of the pools of `kind` (see the module docs); fills in
/// `per_pool` for them on the way (the singletons: the buffers that can only go there).
fn kind_bound(
    problem: &Problem,
    kind: PoolKind,
    alone: &[Vec<usize>],
    per_pool: &mut [u64],
) -> u64 {
    let pools: Vec<usize> = (0..problem.pools().len())
        .filter(|&p| problem.pools()[p].kind == kind)
        .collect();
    let buffers = problem.buffers();
    let members: Vec<usize> = (0..buffers.len())
        .filter(|&i| buffers[i].kind == kind)
        .collect();
    // From the one filing pass (a pass per pool would be quadratic: 100,000 pools took
    // over a minute).
    for &p in &pools {
        per_pool[p] = clique_bound(problem, &alone[p]);
    }
    match pools.as_slice() {
        // Every buffer of the kind is forced into the one pool.
        [] => return 0,
        [p] => return per_pool[*p],
        _ => {}
    }
    let singletons = pools
        .iter()
        .fold(0u64, |t, &p| t.saturating_add(per_pool[p]));
    let whole = clique_bound(problem, &members);
    if pools.len() > PARTITION_POOLS {
        return whole.max(singletons);
    }
    // Each buffer's candidates as a set of positions in `pools` (at most 6 bits).
    let index = |p: usize| pools.iter().position(|&q| q == p).unwrap_or(0);
    let masks: Vec<u64> = members
        .iter()
        .map(|&i| {
            buffers[i]
                .candidates
                .iter()
                .fold(0u64, |m, &p| m | 1 << index(p))
        })
        .collect();
    let all = (1u64 << pools.len()) - 1;
    // The bound of the buffers whose candidates lie within each set of pools; the
    // singletons and the whole set are known already.
    let bounds: Vec<u64> = (0..=all)
        .map(|set| {
            if set == all {
                whole
            } else if set.is_power_of_two() {
                per_pool[pools[set.trailing_zeros() as usize]]
            } else {
                let inside: Vec<usize> = members
                    .iter()
                    .zip(&masks)
                    .filter(|&(_, &m)| m & !set == 0)
                    .map(|(&i, _)| i)
                    .collect();
                clique_bound(problem, &inside)
            }
        })
        .collect();
    best_partition(all, &bounds)
}

/// The largest sum of `bounds[set]` over partitions of `rest` into sets: the lowest
/// member of `rest` goes with each subset of the others in turn.
fn best_partition(rest: u64, bounds: &[u64]) -> u64 {
    if rest == 0 {
        return 0;
    }
    let low = rest & rest.wrapping_neg();
    let others = rest & !low;
    let mut best = 0u64;
    // Every subset of `others`, from all of it down to none.
    let mut sub = others;
    loop {
        let set = low | sub;
        let value = bounds[set as usize].saturating_add(best_partition(rest & !set, bounds));
        best = best.max(value);
        if sub == 0 {
            break;
        }
        sub = (sub - 1) & others;
    }
    best
}

/// For each pool, the bound of the buffers `allocations` put in it: a pool at this bound
/// has the smallest size any placement of the same buffers can have.
pub fn assigned(problem: &Problem, allocations: &[crate::solution::Allocation]) -> Vec<u64> {
    let mut members = vec![Vec::new(); problem.pools().len()];
    for (i, a) in allocations.iter().enumerate() {
        if let Some(m) = members.get_mut(a.pool) {
            m.push(i);
        }
    }
    members.iter().map(|m| clique_bound(problem, m)).collect()
}

/// A lower bound on the memory the buffers `members` need together.
fn clique_bound(problem: &Problem, members: &[usize]) -> u64 {
    match problem.conflicts() {
        Conflicts::Intervals if problem.overlaps().is_empty() => peak(problem, members),
        Conflicts::Intervals => overlap::peak(problem, members),
        Conflicts::Graph(adj) => greedy_clique(problem, adj, members),
    }
}

/// From this many buffers on, [`peak`] sorts starts and ends on two threads.
const MIN_BUFFERS_TO_SPLIT: usize = 100_000;

/// The largest summed size of buffers live at one step.
fn peak(problem: &Problem, members: &[usize]) -> u64 {
    peak_sorted(problem, members, members.len() >= MIN_BUFFERS_TO_SPLIT)
}

/// [`peak`], its two sorts on two threads when `split`.
fn peak_sorted(problem: &Problem, members: &[usize], split: bool) -> u64 {
    let buffers = problem.buffers();
    let lives = || {
        members
            .iter()
            .filter_map(|&i| buffers[i].live.map(|l| (l, buffers[i].size)))
    };
    // `(step, size)`: starts and ends apart, half the bytes to sort of one list of both.
    let mut starts: Vec<(u64, u64)> = lives().map(|(l, size)| (l.start, size)).collect();
    let mut ends: Vec<(u64, u64)> = lives().map(|(l, size)| (l.end, size)).collect();
    if split {
        crate::parallel::join(|| ends.sort_unstable(), || starts.sort_unstable());
    } else {
        starts.sort_unstable();
        ends.sort_unstable();
    }
    let (mut live, mut best, mut ended) = (0u64, 0u64, 0);
    for &(step, size) in &starts {
        // At equal steps a range that ends frees its bytes before one that starts takes
        // them (ranges are half-open).
        while let Some(&(_, freed)) = ends.get(ended).filter(|e| e.0 <= step) {
            live = live.saturating_sub(freed);
            ended += 1;
        }
        live = live.saturating_add(size);
        best = best.max(live);
    }
    best
}

fn greedy_clique(problem: &Problem, adj: &[Vec<usize>], members: &[usize]) -> u64 {
    let buffers = problem.buffers();
    let size = |i: usize| buffers[i].size;
    let mut in_set = vec![false; buffers.len()];
    for &m in members {
        in_set[m] = true;
    }
    // Start from the buffers with the heaviest neighbourhoods; ties by index keep the
    // result deterministic.
    let weight = |i: usize| -> u64 {
        adj[i]
            .iter()
            .filter(|&&j| in_set[j])
            .fold(size(i), |w, &j| w.saturating_add(size(j)))
    };
    let mut starts: Vec<(u64, usize)> = members.iter().map(|&i| (weight(i), i)).collect();
    starts.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut best = 0u64;
    for &(_, start) in starts.iter().take(CLIQUE_STARTS) {
        let mut neighbours: Vec<usize> =
            adj[start].iter().copied().filter(|&j| in_set[j]).collect();
        neighbours.sort_unstable_by(|&a, &b| size(b).cmp(&size(a)).then(a.cmp(&b)));
        let mut clique = vec![start];
        let mut total = size(start);
        for j in neighbours {
            if clique.iter().all(|&c| adj[j].binary_search(&c).is_ok()) {
                // Less what a declared overlap with a member may share (never counted
                // below what the union of the clique's bytes must hold).
                let shared = overlap::shared_with(problem, j, &clique);
                clique.push(j);
                total = total.saturating_add(size(j)).saturating_sub(shared);
            }
        }
        best = best.max(total);
    }
    best
}

/// For each of `members`, the most bytes the members have live at any one step of its
/// life: the heaviest clique it belongs to (0 without a live range). Greedy by breadth
/// orders by it.
pub(crate) fn widest_step(problem: &Problem, members: &[usize]) -> Vec<u64> {
    let b = problem.buffers();
    let lives: Vec<Option<(u64, u64)>> = members
        .iter()
        .map(|&i| b[i].live.map(|l| (l.start, l.end)))
        .collect();
    let mut points: Vec<u64> = lives.iter().flatten().flat_map(|&(s, e)| [s, e]).collect();
    points.sort_unstable();
    points.dedup();
    let at = |t: u64| points.partition_point(|&p| p < t);
    // Each life as elementary steps `[lo, hi)`, searched for once.
    let steps: Vec<Option<(usize, usize)>> = lives
        .iter()
        .map(|live| live.map(|(s, e)| (at(s), at(e))))
        .collect();
    // Bytes live per elementary step, from a difference array.
    let mut delta = vec![0i128; points.len() + 1];
    for (&i, life) in members.iter().zip(&steps) {
        if let Some((lo, hi)) = life {
            delta[*lo] += i128::from(b[i].size);
            delta[*hi] -= i128::from(b[i].size);
        }
    }
    let mut live = 0i128;
    let widths: Vec<u64> = delta
        .iter()
        .map(|d| {
            live += d;
            u64::try_from(live).unwrap_or(u64::MAX)
        })
        .collect();
    // Range maxima by a bottom-up segment tree, the steps at its leaves `n..2n`: 2n
    // values, where a sparse table took n log n (200 MB for a million buffers).
    let n = widths.len();
    let mut tree = vec![0u64; n];
    tree.extend_from_slice(&widths);
    for i in (1..n).rev() {
        tree[i] = tree[2 * i].max(tree[2 * i + 1]);
    }
    let widest = |lo: usize, hi: usize| {
        let (mut lo, mut hi, mut max) = (lo + n, hi + n, 0);
        while lo < hi {
            if lo & 1 == 1 {
                max = max.max(tree[lo]);
                lo += 1;
            }
            if hi & 1 == 1 {
                hi -= 1;
                max = max.max(tree[hi]);
            }
            lo /= 2;
            hi /= 2;
        }
        max
    };
    // An empty life (lo == hi) meets no step: 0.
    steps
        .iter()
        .map(|life| life.map_or(0, |(lo, hi)| widest(lo, hi)))
        .collect()
}

#[cfg(test)]
mod tests;
