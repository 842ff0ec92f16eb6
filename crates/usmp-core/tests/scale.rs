//! Every algorithm on 10,000 random problems per run: one to three workspace pools with
//! or without limits and alignments, an optional constant pool, candidates, live ranges
//! or explicit conflict lists. Each plan is checked by `check` below, written apart from
//! the verifier; a quarter of the problems are tiny and are solved by brute force too, to
//! check every plan against the optimum, every "optimal" claim, and every "no plan fits".
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::collections::BTreeMap;

use common::brute::{best_total, conflict};
use common::rng::Rng;
use usmp_core::algo::Named;
use usmp_core::{
    Algorithm, Allocation, Assignment, Auto, Buffer, Exact, PlanError, Pool, Problem, plan,
};

const PROBLEMS: u64 = 10_000;

/// The exact search's work budget here: enough to finish every tiny problem, small
/// enough that 10,000 problems stay a test (the default is 100,000,000).
const EXACT_BUDGET: u64 = 200_000;

/// The exact search choosing pools for the smallest total rather than by preference.
const SMALLEST: &str = "exact, smallest total";

/// Algorithm `name`, the exact search (alone or in `auto`) on [`EXACT_BUDGET`].
fn algorithm(name: &str) -> Box<dyn Algorithm> {
    let exact = Exact {
        work_budget: EXACT_BUDGET,
        ..Exact::default()
    };
    match name {
        "exact" => Box::new(exact),
        SMALLEST => Box::new(Exact {
            assignment: Assignment::SmallestTotal,
            ..exact
        }),
        "auto" => Box::new(Auto { exact }),
        _ => Named::from_name(name).unwrap().build(),
    }
}

/// Problem `seed`; `tiny` ones have at most five small buffers, for brute force.
fn random_problem(seed: u64, tiny: bool) -> Problem {
    let mut r = Rng::seeded(seed);
    let mut b = Problem::builder();
    let pools = 1 + r.below(3) as usize;
    for p in 0..pools {
        let mut pool = Pool::workspace(format!("ws{p}")).with_alignment(1 << r.below(3));
        if r.below(2) == 0 {
            pool.size_limit = Some(if tiny {
                4 + r.below(20)
            } else {
                16 + r.below(400)
            });
        }
        b.pool(pool);
    }
    let constant = (r.below(3) == 0).then(|| b.pool(Pool::constant("flash").with_alignment(4)));
    let n = if tiny {
        1 + r.below(5)
    } else {
        1 + r.below(16)
    } as usize;
    let intervals = r.below(2) == 0;
    for i in 0..n {
        let size = 1 + r.below(if tiny { 8 } else { 64 });
        let mut buffer = Buffer::new(format!("b{i}"), size).with_alignment(1 << r.below(5));
        buffer = match constant {
            Some(flash) if r.below(6) == 0 => buffer.constant().with_candidates([flash]),
            _ => {
                let mut candidates: Vec<usize> = (0..pools).filter(|_| r.below(2) == 0).collect();
                if candidates.is_empty() {
                    candidates.push(r.below(pools as u64) as usize);
                }
                // Preference order is part of the problem: shuffle it.
                if candidates.len() > 1 && r.below(2) == 0 {
                    candidates.reverse();
                }
                buffer.with_candidates(candidates)
            }
        };
        if intervals {
            let start = r.below(8);
            buffer = buffer.with_live(start, start + 1 + r.below(4));
        }
        b.buffer(buffer);
    }
    if !intervals {
        for i in 0..n {
            for j in i + 1..n {
                if r.below(3) == 0 {
                    b.conflict(i, j);
                }
            }
        }
    }
    b.build().unwrap()
}

/// Every rule of a plan, checked from the problem's data alone: a candidate pool, an offset
/// aligned for buffer and pool, inside the pool's limit, and no overlap between buffers
/// that conflict (every pair looked at).
fn check(problem: &Problem, allocs: &[Allocation]) -> Result<(), String> {
    let b = problem.buffers();
    if allocs.len() != b.len() {
        return Err(format!(
            "{} allocations for {} buffers",
            allocs.len(),
            b.len()
        ));
    }
    for (i, a) in allocs.iter().enumerate() {
        let pool = &problem.pools()[a.pool];
        if !b[i].candidates.contains(&a.pool) {
            return Err(format!(
                "{} in pool {}, not a candidate",
                b[i].name, pool.name
            ));
        }
        let align = b[i].alignment.max(pool.alignment);
        if a.offset % align != 0 {
            return Err(format!(
                "{} at {} is not aligned to {align}",
                b[i].name, a.offset
            ));
        }
        let end = a.offset.checked_add(b[i].size).ok_or("an end overflows")?;
        if pool.size_limit.is_some_and(|limit| end > limit) {
            return Err(format!(
                "{} ends at {end}, past {}'s limit",
                b[i].name, pool.name
            ));
        }
    }
    for i in 0..b.len() {
        for j in i + 1..b.len() {
            let (x, y) = (&allocs[i], &allocs[j]);
            let overlap = x.pool == y.pool
                && x.offset < y.offset + b[j].size
                && y.offset < x.offset + b[i].size;
            if overlap && conflict(problem, i, j) {
                return Err(format!("{} and {} overlap", b[i].name, b[j].name));
            }
        }
    }
    Ok(())
}

/// Per algorithm: plans, "no plan fits", and (tiny problems) plans at the optimum and
/// "no plan fits" where brute force found one.
#[derive(Default)]
struct Tally {
    plans: u32,
    no_fit: u32,
    at_optimum: u32,
    missed: u32,
}

#[test]
fn every_algorithm_on_ten_thousand_problems_against_an_independent_check() {
    let mut tally: BTreeMap<&str, Tally> = BTreeMap::new();
    let (mut tiny_count, mut infeasible, mut optimal_claims) = (0, 0, 0);
    // "No plan can exist" given, and (tiny problems without a plan) not given.
    let (mut proofs, mut unproven) = (0, 0);
    for seed in 0..PROBLEMS {
        let tiny = seed % 4 == 0;
        let problem = random_problem(seed, tiny);
        let truth = tiny.then(|| best_total(&problem));
        tiny_count += u32::from(tiny);
        infeasible += u32::from(truth == Some(None));
        for name in Named::ALL.map(Named::name).iter().chain(&[SMALLEST]) {
            // The exact search is complete on problems this small: it finds a plan
            // whenever one exists and proves every refusal.
            let complete = matches!(*name, "exact" | "auto" | SMALLEST);
            let t = tally.entry(name).or_default();
            match plan(&problem, algorithm(name).as_ref()) {
                Ok(p) => {
                    t.plans += 1;
                    if let Err(e) = check(&problem, &p.allocations) {
                        panic!("seed {seed}: {name}: {e}");
                    }
                    assert!(
                        p.total() >= p.lower_bound.total,
                        "seed {seed}: {name} below the bound"
                    );
                    if let Some(truth) = truth {
                        let Some(best) = truth else {
                            panic!("seed {seed}: {name} planned what brute force cannot");
                        };
                        assert!(p.total() >= best, "seed {seed}: {name} beat brute force");
                        t.at_optimum += u32::from(p.total() == best);
                        // Complete on a problem this small: the optimum, and said so.
                        if *name == SMALLEST {
                            assert_eq!(p.total(), best, "seed {seed}: {name} not optimal");
                            assert!(p.optimal, "seed {seed}: {name} did not prove its optimum");
                        }
                        if p.optimal {
                            optimal_claims += 1;
                            assert_eq!(p.total(), best, "seed {seed}: {name} claimed optimal");
                        }
                    }
                }
                Err(PlanError::NoFit {
                    lower_bound,
                    impossible,
                    ..
                }) => {
                    t.no_fit += 1;
                    // "No plan can exist" must be true.
                    if let Some(why) = &impossible {
                        proofs += 1;
                        if let Some(Some(best)) = truth {
                            panic!("seed {seed}: {name} says {why}; brute force found {best}");
                        }
                    } else if truth == Some(None) {
                        unproven += 1;
                        assert!(
                            !complete,
                            "seed {seed}: {name} refused without saying no plan can exist"
                        );
                    }
                    let bounded = problem.pools().iter().any(|p| p.size_limit.is_some());
                    assert!(bounded, "seed {seed}: {name}: no fit with unbounded pools");
                    if let Some(Some(best)) = truth {
                        t.missed += 1;
                        assert!(
                            lower_bound <= best,
                            "seed {seed}: {name}: bound above the optimum"
                        );
                        assert!(
                            !complete,
                            "seed {seed}: {name} found no plan; brute force found {best} bytes"
                        );
                    }
                }
                Err(e) => panic!("seed {seed}: {name}: {e}"),
            }
        }
    }
    println!("{PROBLEMS} problems, {tiny_count} solved by brute force ({infeasible} with no plan)");
    println!(
        "\"no plan can exist\" said {proofs} times; {unproven} refusals of tiny problems without a plan said \"may exist\""
    );
    println!(
        "algorithm               plans  no fit  tiny at optimum  tiny no fit but a plan exists"
    );
    for (name, t) in &tally {
        println!(
            "{name:<22} {:>6} {:>7} {:>16} {:>29}",
            t.plans, t.no_fit, t.at_optimum, t.missed
        );
    }
    // The checks above must have had work: plans, refusals and claims of each kind.
    let exact = &tally["exact"];
    assert!(
        infeasible > 50 && optimal_claims > 1000,
        "{infeasible} {optimal_claims}"
    );
    assert!(exact.plans > 8000 && exact.no_fit > 100 && proofs > 1000);
}

/// `auto` runs its greedy planners on several threads: the plan, and the planner it
/// names, must not depend on how many.
#[test]
fn auto_plans_the_same_on_one_two_and_four_threads() {
    let mut differ = 0;
    for seed in 0..400 {
        let problem = random_problem(seed, false);
        let plans: Vec<_> = [1, 2, 4]
            .iter()
            .map(|&threads| {
                let exact = Exact {
                    work_budget: EXACT_BUDGET,
                    threads,
                    ..Exact::default()
                };
                plan(&problem, &Auto { exact })
                    .map(|p| (p.allocations, p.algorithm))
                    .map_err(|e| e.to_string())
            })
            .collect();
        assert_eq!(plans[0], plans[1], "seed {seed}: 1 and 2 threads");
        assert_eq!(plans[0], plans[2], "seed {seed}: 1 and 4 threads");
        // Count the problems where the portfolio had to run past its first member.
        if plans[0]
            .as_ref()
            .is_ok_and(|(_, by)| !by.contains("greedy_by_breadth"))
        {
            differ += 1;
        }
    }
    assert!(
        differ > 100,
        "only {differ} problems ran the whole portfolio"
    );
}
