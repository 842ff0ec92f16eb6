//! Brute force for tiny problems, written apart from the planner: every assignment of
//! buffers to candidate pools, every aligned offset. Used to check optimality claims,
//! bounds and "no plan fits" against the truth.

use std::collections::BTreeMap;

use usmp_core::{Conflicts, Problem};

/// Whether buffers `i` and `j` may not overlap, read from the problem's own data.
pub fn conflict(problem: &Problem, i: usize, j: usize) -> bool {
    let b = problem.buffers();
    match (problem.conflicts(), b[i].live, b[j].live) {
        (Conflicts::Graph(adj), _, _) => adj[i].contains(&j),
        (Conflicts::Intervals, Some(x), Some(y)) => x.start < y.end && y.start < x.end,
        (Conflicts::Intervals, _, _) => false,
    }
}

/// The smallest end of pool `pool` holding `members` (every aligned offset tried).
pub fn smallest_pool(problem: &Problem, pool: usize, members: &[usize]) -> u64 {
    let align = |i: usize| {
        problem.buffers()[i]
            .alignment
            .max(problem.pools()[pool].alignment)
    };
    fn place(
        problem: &Problem,
        members: &[usize],
        align: &dyn Fn(usize) -> u64,
        placed: &mut Vec<(usize, u64)>,
        end: u64,
        best: &mut u64,
    ) {
        let Some((&i, rest)) = members.split_first() else {
            *best = (*best).min(end);
            return;
        };
        let size = problem.buffers()[i].size;
        let mut offset = 0;
        while offset + size < *best {
            let clashes = placed.iter().any(|&(j, o)| {
                let other = problem.buffers()[j].size;
                conflict(problem, i, j) && offset < o + other && o < offset + size
            });
            if !clashes {
                placed.push((i, offset));
                place(problem, rest, align, placed, end.max(offset + size), best);
                placed.pop();
            }
            offset += align(i);
        }
    }
    // Stacking every buffer, each after the previous at its alignment, always fits.
    let mut best = members
        .iter()
        .map(|&i| problem.buffers()[i].size + align(i))
        .sum::<u64>()
        + 1;
    place(problem, members, &align, &mut Vec::new(), 0, &mut best);
    best
}

/// The best total over every assignment of buffers to candidate pools whose pools all
/// stay within their limits, each pool placed optimally; `None` when no assignment fits.
pub fn best_total(problem: &Problem) -> Option<u64> {
    let n = problem.buffers().len();
    let mut memo: BTreeMap<(usize, Vec<usize>), u64> = BTreeMap::new();
    let mut choice = vec![0usize; n];
    let mut best: Option<u64> = None;
    loop {
        let mut total = 0;
        let mut fits = true;
        for (p, pool) in problem.pools().iter().enumerate() {
            let members: Vec<usize> = (0..n)
                .filter(|&i| problem.buffers()[i].candidates[choice[i]] == p)
                .collect();
            let end = *memo
                .entry((p, members.clone()))
                .or_insert_with(|| smallest_pool(problem, p, &members));
            // An empty pool takes nothing whatever its limit.
            let end = if members.is_empty() { 0 } else { end };
            fits &= pool.size_limit.is_none_or(|limit| end <= limit);
            total += end;
        }
        if fits {
            best = Some(best.map_or(total, |b| b.min(total)));
        }
        // The next assignment, counting in mixed radix.
        let mut k = 0;
        while k < n {
            choice[k] += 1;
            if choice[k] < problem.buffers()[k].candidates.len() {
                break;
            }
            choice[k] = 0;
            k += 1;
        }
        if k == n {
            return best;
        }
    }
}
