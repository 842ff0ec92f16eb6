//! The bounds of a problem with overlaps: a declared pair may share up to its window's
//! most bytes, so the bytes a set of buffers needs at once count that much less for each
//! pair in the set. For a union of intervals that is Bonferroni's inequality (the union
//! holds at least the sizes less the pairwise intersections, and only declared pairs may
//! intersect), so the bounds stay bounds.

use crate::problem::{Overlap, Problem};

/// The most bytes the pair of `o` may share.
fn most(problem: &Problem, o: &Overlap) -> u64 {
    let b = problem.buffers();
    o.most_shared(b[o.output].size, b[o.input].size)
}

/// The most bytes buffer `j` may share with the buffers of `clique` through declared
/// overlaps.
pub(super) fn shared_with(problem: &Problem, j: usize, clique: &[usize]) -> u64 {
    if problem.overlaps().is_empty() {
        return 0;
    }
    clique
        .iter()
        .filter_map(|&c| problem.overlap_between(j, c))
        .fold(0u64, |t, o| t.saturating_add(most(problem, o)))
}

/// The largest bytes `members` have live at one step, less at each step what the pairs
/// of members live together then may share.
pub(super) fn peak(problem: &Problem, members: &[usize]) -> u64 {
    let buffers = problem.buffers();
    let mut member = vec![false; buffers.len()];
    let mut changes: Vec<(u64, i128)> = Vec::with_capacity(members.len() * 2);
    for &i in members {
        member[i] = true;
        if let Some(live) = buffers[i].live {
            let size = i128::from(buffers[i].size);
            changes.extend([(live.start, size), (live.end, -size)]);
        }
    }
    for o in problem.overlaps() {
        if let Some(steps) = o.shared_steps(buffers)
            && member[o.output]
            && member[o.input]
        {
            let shared = i128::from(most(problem, o));
            changes.extend([(steps.start, -shared), (steps.end, shared)]);
        }
    }
    changes.sort_unstable();
    let (mut live, mut best) = (0i128, 0i128);
    let mut k = 0;
    while k < changes.len() {
        // Every change at one step, then the bytes live over it.
        let step = changes[k].0;
        while k < changes.len() && changes[k].0 == step {
            live += changes[k].1;
            k += 1;
        }
        best = best.max(live);
    }
    u64::try_from(best).unwrap_or(u64::MAX)
}
