//! Property tests over random problems: mixed sizes and alignments, bounded and unbounded
//! pools, several candidates, constants, live ranges or explicit conflict graphs.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use proptest::prelude::*;
use usmp_core::algo::Named;
use usmp_core::verify::{Violation, verify};
use usmp_core::{Allocation, Buffer, PlanError, Pool, Problem, plan};

const ALIGNMENTS: [u64; 5] = [1, 2, 4, 8, 16];

#[derive(Clone, Debug)]
struct Spec {
    /// (limit, alignment index) per workspace pool.
    pools: Vec<(Option<u64>, usize)>,
    with_constant_pool: bool,
    /// (size, alignment index, candidate picks, constant?, start, length) per buffer.
    buffers: Vec<(u64, usize, Vec<usize>, bool, u64, u64)>,
    intervals: bool,
    edges: Vec<(usize, usize)>,
}

fn spec() -> impl Strategy<Value = Spec> {
    let pool = (prop::option::weighted(0.5, 16u64..400), 0..ALIGNMENTS.len());
    let buffer = (
        1u64..64,
        0..ALIGNMENTS.len(),
        prop::collection::vec(0usize..3, 1..4),
        prop::bool::weighted(0.15),
        0u64..10,
        1u64..5,
    );
    (
        prop::collection::vec(pool, 1..4),
        any::<bool>(),
        prop::collection::vec(buffer, 1..15),
        any::<bool>(),
        prop::collection::vec((0usize..15, 0usize..15), 0..40),
    )
        .prop_map(
            |(pools, with_constant_pool, buffers, intervals, edges)| Spec {
                pools,
                with_constant_pool,
                buffers,
                intervals,
                edges,
            },
        )
}

fn build(spec: &Spec) -> Problem {
    let mut b = Problem::builder();
    let workspace: Vec<usize> = spec
        .pools
        .iter()
        .enumerate()
        .map(|(i, &(limit, align))| {
            let mut pool = Pool::workspace(format!("ws{i}")).with_alignment(ALIGNMENTS[align]);
            pool.size_limit = limit;
            b.pool(pool)
        })
        .collect();
    let constant = spec
        .with_constant_pool
        .then(|| b.pool(Pool::constant("flash").with_alignment(4)));
    let n = spec.buffers.len();
    for (i, (size, align, picks, is_const, start, len)) in spec.buffers.iter().enumerate() {
        let mut buffer = Buffer::new(format!("b{i}"), *size).with_alignment(ALIGNMENTS[*align]);
        match constant {
            Some(flash) if *is_const => buffer = buffer.constant().with_candidates([flash]),
            _ => {
                let mut candidates = Vec::new();
                for &p in picks {
                    let pool = workspace[p % workspace.len()];
                    if !candidates.contains(&pool) {
                        candidates.push(pool);
                    }
                }
                buffer = buffer.with_candidates(candidates);
            }
        }
        if spec.intervals {
            buffer = buffer.with_live(*start, start + len);
        }
        b.buffer(buffer);
    }
    if !spec.intervals {
        for &(x, y) in &spec.edges {
            if x % n != y % n {
                b.conflict(x % n, y % n);
            }
        }
    }
    b.build().unwrap()
}

/// The slowest possible check: every pair of buffers.
fn naive_overlaps(problem: &Problem, allocs: &[Allocation]) -> bool {
    let b = problem.buffers();
    (0..b.len()).any(|i| {
        (i + 1..b.len()).any(|j| {
            problem.conflict(i, j)
                && allocs[i].pool == allocs[j].pool
                && allocs[i].offset < allocs[j].offset + b[j].size
                && allocs[j].offset < allocs[i].offset + b[i].size
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn every_algorithm_gives_a_valid_plan_or_an_honest_no_fit(spec in spec()) {
        let problem = build(&spec);
        let bounded = problem.pools().iter().any(|p| p.size_limit.is_some());
        for named in Named::ALL {
            let name = named.name();
            match plan(&problem, named.build().as_ref()) {
                Ok(p) => {
                    prop_assert_eq!(verify(&problem, &p.allocations), Ok(()));
                    prop_assert!(!naive_overlaps(&problem, &p.allocations), "{}", name);
                    prop_assert!(p.total() >= p.lower_bound.total, "{}: total below the bound", name);
                    for (size, bound) in p.pool_sizes.iter().zip(&p.lower_bound.per_pool) {
                        prop_assert!(size >= bound, "{}: pool below its bound", name);
                    }
                }
                Err(PlanError::NoFit { .. }) => prop_assert!(bounded, "{} failed with only unbounded pools", name),
                Err(e) => prop_assert!(false, "{}: {}", name, e),
            }
        }
    }

    #[test]
    fn the_verifier_agrees_with_a_pairwise_check(spec in spec(), picks in prop::collection::vec((0usize..3, 0u64..12), 15)) {
        let problem = build(&spec);
        // Random allocations, legal except (often) for overlaps.
        let allocs: Vec<Allocation> = problem.buffers().iter().enumerate().map(|(i, b)| {
            let (c, slot) = picks[i];
            let pool = b.candidates[c % b.candidates.len()];
            let align = problem.alignment_in(i, pool);
            Allocation { pool, offset: slot * align }
        }).collect();
        let within_limits = problem.buffers().iter().zip(&allocs).all(|(b, a)| problem.pools()[a.pool].admits(a.offset + b.size));
        prop_assume!(within_limits);
        let found = verify(&problem, &allocs);
        let overlap = naive_overlaps(&problem, &allocs);
        prop_assert_eq!(found.is_err(), overlap, "{:?}", found);
        if let Err(v) = found {
            let only_overlaps = v.iter().all(|v| matches!(v, Violation::Overlap { .. }));
            prop_assert!(only_overlaps, "{:?}", v);
        }
    }

    #[test]
    fn hill_climb_is_deterministic_and_no_worse_than_first_fit(spec in spec()) {
        let problem = build(&spec);
        let climb = || plan(&problem, Named::HillClimb.build().as_ref());
        let (first, second) = (climb(), climb());
        prop_assert_eq!(&first, &second);
        if let (Ok(climbed), Ok(fit)) = (first, plan(&problem, Named::FirstFit.build().as_ref())) {
            prop_assert!(climbed.total() <= fit.total());
        }
    }

    #[test]
    fn auto_is_deterministic_and_no_worse_than_any_member(spec in spec()) {
        let problem = build(&spec);
        let auto = || plan(&problem, Named::Auto.build().as_ref());
        let (first, second) = (auto(), auto());
        prop_assert_eq!(&first, &second);
        let Ok(best) = first else {
            return Ok(());
        };
        for named in Named::ALL.into_iter().filter(|&n| n != Named::Auto) {
            let name = named.name();
            if let Ok(member) = plan(&problem, named.build().as_ref()) {
                prop_assert!(best.total() <= member.total(), "{} beat auto", name);
            }
        }
        prop_assert!(best.algorithm.starts_with("auto ("), "{}", best.algorithm);
    }
}
