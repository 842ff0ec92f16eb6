//! The lower bound with several pools, against brute force on tiny random problems the
//! bound's code never saw: it never exceeds the best total over every assignment of buffers
//! to candidate pools and every placement; a plan called optimal has that total; a plan
//! whose pools are each at the bound of their buffers cannot place those buffers smaller.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::BTreeMap;

use usmp_core::algo::{BUILT_IN, by_name};
use usmp_core::{Buffer, Conflicts, LowerBound, Pool, Problem, plan};

/// A small deterministic generator (xorshift), so each failure names a reproducible seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Up to three workspace pools, up to five buffers with random candidates, live ranges
/// or a random conflict graph, sizes 1-6 and alignments 1 or 2.
fn random_problem(seed: u64) -> Problem {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut b = Problem::builder();
    let pools = 2 + r.below(2) as usize;
    for p in 0..pools {
        b.pool(Pool::workspace(format!("p{p}")));
    }
    let n = 2 + r.below(4) as usize;
    let intervals = r.below(2) == 0;
    let mut ids = Vec::new();
    for i in 0..n {
        let mut candidates: Vec<usize> = (0..pools).filter(|_| r.below(2) == 0).collect();
        if candidates.is_empty() {
            candidates.push(r.below(pools as u64) as usize);
        }
        let mut buffer = Buffer::new(format!("b{i}"), 1 + r.below(6))
            .with_alignment(1 << r.below(2))
            .with_candidates(candidates);
        if intervals {
            let start = r.below(4);
            buffer = buffer.with_live(start, start + 1 + r.below(3));
        }
        ids.push(b.buffer(buffer));
    }
    if !intervals {
        for i in 0..n {
            for j in i + 1..n {
                if r.below(3) != 0 {
                    b.conflict(ids[i], ids[j]);
                }
            }
        }
    }
    b.build().unwrap()
}

fn conflict(problem: &Problem, i: usize, j: usize) -> bool {
    let b = problem.buffers();
    match (problem.conflicts(), b[i].live, b[j].live) {
        (Conflicts::Graph(adj), _, _) => adj[i].contains(&j),
        (Conflicts::Intervals, Some(x), Some(y)) => x.start < y.end && y.start < x.end,
        (Conflicts::Intervals, _, _) => false,
    }
}

/// The smallest pool holding `members` (every offset of every buffer tried).
fn smallest_pool(problem: &Problem, members: &[usize]) -> u64 {
    fn place(
        problem: &Problem,
        members: &[usize],
        placed: &mut Vec<(usize, u64)>,
        end: u64,
        best: &mut u64,
    ) {
        let Some((&i, rest)) = members.split_first() else {
            *best = (*best).min(end);
            return;
        };
        let b = &problem.buffers()[i];
        let mut offset = 0;
        while offset + b.size < *best {
            let clashes = placed.iter().any(|&(j, o)| {
                let other = problem.buffers()[j].size;
                conflict(problem, i, j) && offset < o + other && o < offset + b.size
            });
            if !clashes {
                placed.push((i, offset));
                place(problem, rest, placed, end.max(offset + b.size), best);
                placed.pop();
            }
            offset += b.alignment;
        }
    }
    let mut best = members
        .iter()
        .map(|&i| problem.buffers()[i].size + problem.buffers()[i].alignment)
        .sum::<u64>()
        + 1;
    place(problem, members, &mut Vec::new(), 0, &mut best);
    best
}

/// The best total over every assignment to candidate pools, each pool placed optimally.
fn brute_force_total(problem: &Problem, memo: &mut BTreeMap<Vec<usize>, u64>) -> u64 {
    let n = problem.buffers().len();
    let mut choice = vec![0usize; n];
    let mut best = u64::MAX;
    loop {
        let mut total = 0;
        for p in 0..problem.pools().len() {
            let members: Vec<usize> = (0..n)
                .filter(|&i| problem.buffers()[i].candidates[choice[i]] == p)
                .collect();
            total += *memo
                .entry(members.clone())
                .or_insert_with(|| smallest_pool(problem, &members));
        }
        best = best.min(total);
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

/// The most bytes live at one step (live-range problems; 0 for conflict graphs).
fn peak(problem: &Problem) -> u64 {
    (0..8)
        .map(|t| {
            problem
                .buffers()
                .iter()
                .filter(|b| b.live.is_some_and(|l| l.start <= t && t < l.end))
                .map(|b| b.size)
                .sum()
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn the_bound_holds_and_optimal_claims_are_true_on_random_multi_pool_problems() {
    let (mut raised, mut tight, mut optimal_claims, mut placement_claims) = (0, 0, 0, 0);
    for seed in 0..400 {
        let problem = random_problem(seed);
        let mut memo = BTreeMap::new();
        let best = brute_force_total(&problem, &mut memo);
        let lb = LowerBound::of(&problem);
        assert!(
            lb.total <= best,
            "seed {seed}: bound {} > optimum {best}",
            lb.total
        );
        // Where it beats the whole-program peak, which was the bound before pools counted.
        if matches!(problem.conflicts(), Conflicts::Intervals) && lb.total > peak(&problem) {
            raised += 1;
        }
        tight += u32::from(lb.total == best);
        for name in BUILT_IN {
            let Ok(p) = plan(&problem, by_name(name).unwrap().as_ref()) else {
                panic!("seed {seed}: {name} failed with unbounded pools");
            };
            assert!(p.total() >= best, "seed {seed}: {name} beat brute force");
            if p.optimal {
                optimal_claims += 1;
                assert_eq!(p.total(), best, "seed {seed}: {name} claimed optimal");
            }
            for (pool, (&size, &bound)) in p.pool_sizes.iter().zip(&p.assigned_bounds).enumerate() {
                let members: Vec<usize> = (0..problem.buffers().len())
                    .filter(|&i| p.allocations[i].pool == pool)
                    .collect();
                let smallest = smallest_pool(&problem, &members);
                assert!(
                    bound <= smallest,
                    "seed {seed}: {name}: pool {pool}'s bound"
                );
                assert!(
                    size >= smallest,
                    "seed {seed}: {name}: pool {pool} too small"
                );
            }
            if p.placement_optimal() {
                placement_claims += 1;
            }
        }
    }
    // The tests above must have had something to check.
    println!(
        "of 400 problems: bound above the whole-program peak on {raised}, equal to the optimum on {tight}; {optimal_claims} optimal and {placement_claims} placement-optimal plans checked"
    );
    assert!(raised > 0 && optimal_claims > 400 && placement_claims > 400);
}

#[test]
fn a_partition_of_the_pools_bounds_more_than_the_whole_or_the_singletons() {
    // u must be in p; v in q or r. They are never live together, so the whole-program
    // peak is 10 and the singletons give 10 (only u is forced), but p and {q, r} hold
    // disjoint pools: any plan needs 20.
    let mut b = Problem::builder();
    let p = b.pool(Pool::workspace("p"));
    let q = b.pool(Pool::workspace("q"));
    let r = b.pool(Pool::workspace("r"));
    b.buffer(Buffer::new("u", 10).with_candidates([p]).with_live(0, 2));
    b.buffer(Buffer::new("v", 10).with_candidates([q, r]).with_live(2, 4));
    let problem = b.build().unwrap();
    let lb = LowerBound::of(&problem);
    assert_eq!(lb.per_pool, vec![10, 0, 0]);
    assert_eq!(lb.total, 20);
    let plan = plan(&problem, &usmp_core::FirstFit).unwrap();
    assert_eq!(plan.total(), 20);
    assert!(plan.optimal, "the bound is reached");
}
