//! The lower bound with several pools, against brute force on tiny random problems the
//! bound's code never saw: it never exceeds the best total over every assignment of buffers
//! to candidate pools and every placement; a plan called optimal has that total; a plan
//! whose pools are each at the bound of their buffers cannot place those buffers smaller.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use common::brute::{best_total, smallest_pool};
use common::rng::Rng;
use usmp_core::algo::Named;
use usmp_core::{Buffer, Conflicts, LowerBound, Pool, Problem, plan};

/// Up to three workspace pools, up to five buffers with random candidates, live ranges
/// or a random conflict graph, sizes 1-6 and alignments 1 or 2.
fn random_problem(seed: u64) -> Problem {
    let mut r = Rng::seeded(seed);
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
        let best = best_total(&problem).unwrap();
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
        for named in Named::ALL {
            let name = named.name();
            let Ok(p) = plan(&problem, named.build().as_ref()) else {
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
                let smallest = smallest_pool(&problem, pool, &members);
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
