//! What searching the pool of each buffer gains over the greedy assignment: `exact` by
//! the preference order (the default: the greedy assignment, searched only when it has
//! no plan) against `exact` for the smallest total (every assignment searched), on random
//! problems of two or three bounded pools and on real models split over two bounded pools.
//!
//! ```text
//! cargo run --release -p usmp-core --example pool_choice -- ../shared/tflite-models
//! ```
//!
//! Each model is planned in one unbounded pool first (W bytes); then its workspace is
//! split into `fast` and `slow`, each limited to 70 % of W, every buffer preferring
//! `fast`. Deterministic: default work budgets, no clock.

use std::path::Path;
use std::time::Instant;

use usmp_core::input::{Input, PoolsFile, lower, read};
use usmp_core::{Assignment, Auto, Buffer, Exact, Plan, PlanError, Pool, Problem, plan};

#[path = "../tests/common/rng.rs"]
mod rng;
use rng::Rng;

type Failed = Box<dyn std::error::Error>;

fn main() -> Result<(), Failed> {
    random_problems(1000)?;
    if let Some(dir) = std::env::args().nth(1) {
        models(Path::new(&dir))?;
    }
    Ok(())
}

/// `exact` by preference, and for the smallest total, on `problem`.
fn both(problem: &Problem) -> (Result<Plan, PlanError>, Result<Plan, PlanError>) {
    let smallest = Exact {
        assignment: Assignment::SmallestTotal,
        ..Exact::default()
    };
    (plan(problem, &Exact::default()), plan(problem, &smallest))
}

/// Whether the greedy assignment (first fit's, where `exact` starts) has no plan.
fn greedy_fails(problem: &Problem) -> bool {
    plan(problem, &usmp_core::FirstFit).is_err()
}

#[derive(Default)]
struct Tally {
    cases: u32,
    same: u32,
    smaller: u32,
    gains: Vec<f64>,
    rescued: u32,
    none: u32,
    none_proven: u32,
}

impl Tally {
    fn add(
        &mut self,
        greedy_fails: bool,
        kept: &Result<Plan, PlanError>,
        chosen: &Result<Plan, PlanError>,
    ) {
        self.cases += 1;
        self.rescued += u32::from(greedy_fails && kept.is_ok());
        match (kept, chosen) {
            (Ok(k), Ok(c)) if c.total() < k.total() => {
                self.smaller += 1;
                self.gains
                    .push(100.0 * (k.total() - c.total()) as f64 / k.total() as f64);
            }
            (Ok(_), Ok(_)) => self.same += 1,
            (Err(PlanError::NoFit { impossible, .. }), Err(PlanError::NoFit { .. })) => {
                self.none += 1;
                self.none_proven += u32::from(impossible.is_some());
            }
            // Only a bug gives anything else (`plan` verifies every plan).
            (k, c) => println!("unexpected: {k:?} / {c:?}"),
        }
    }

    fn print(&self, what: &str) {
        let mean = self.gains.iter().sum::<f64>() / self.gains.len().max(1) as f64;
        let max = self.gains.iter().copied().fold(0.0, f64::max);
        let by = if self.gains.is_empty() {
            String::new()
        } else {
            format!(" (by {mean:.1} % on average, at most {max:.1} %)")
        };
        println!(
            "{what}: {} problems; the greedy assignment had no plan, the search found one: \
             {}; the preference plan as small as the smallest total: {}; smaller total \
             elsewhere: {}{by}; no plan: {} ({} proven)",
            self.cases, self.rescued, self.same, self.smaller, self.none, self.none_proven
        );
    }
}

/// `count` problems: 2 or 3 pools, each limited, 6 to 14 buffers with live ranges, each
/// allowed a random non-empty set of pools in a random order.
fn random_problems(count: u64) -> Result<(), Failed> {
    let mut tally = Tally::default();
    let start = Instant::now();
    for seed in 0..count {
        let mut r = Rng::seeded(seed);
        let mut b = Problem::builder();
        let pools = 2 + r.below(2) as usize;
        for p in 0..pools {
            b.pool(Pool::workspace(format!("p{p}")).with_limit(24 + r.below(64)));
        }
        for i in 0..6 + r.below(9) {
            let mut candidates: Vec<usize> = (0..pools).filter(|_| r.below(3) != 0).collect();
            if candidates.is_empty() {
                candidates.push(r.below(pools as u64) as usize);
            }
            if r.below(2) == 0 {
                candidates.reverse();
            }
            let at = r.below(10);
            b.buffer(
                Buffer::new(format!("b{i}"), 1 + r.below(32))
                    .with_candidates(candidates)
                    .with_live(at, at + 1 + r.below(5)),
            );
        }
        let problem = b.build()?;
        let (kept, chosen) = both(&problem);
        tally.add(greedy_fails(&problem), &kept, &chosen);
    }
    tally.print("random");
    println!("({:.1} s for both)", start.elapsed().as_secs_f64());
    Ok(())
}

fn models(dir: &Path) -> Result<(), Failed> {
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "tflite"))
        .collect();
    files.sort();
    let mut tally = Tally::default();
    println!(
        "| model | W (one pool) | fast / slow limits | preference order | smallest total | time |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for path in files {
        let Ok(Input::Model(model)) = read(&path, None) else {
            continue;
        };
        let one = lower(&model, &PoolsFile::default())?;
        let w = plan(&one.problem, &Auto::default())?.pool_sizes[0];
        let limit = (w * 7 / 10).div_ceil(16) * 16;
        let (fast, slow) = (limit, limit);
        let mut pools = PoolsFile::default();
        pools.pools = vec![
            Pool::workspace("fast").with_limit(fast).with_alignment(16),
            Pool::workspace("slow").with_limit(slow).with_alignment(16),
            Pool::constant("constants").with_alignment(16),
        ];
        let split = lower(&model, &pools)?.problem;
        let start = Instant::now();
        let (kept, chosen) = both(&split);
        let took = start.elapsed().as_secs_f64();
        let show = |r: &Result<Plan, PlanError>| match r {
            Ok(p) => {
                let proven = if p.optimal { ", optimal" } else { "" };
                format!("{} + {}{proven}", p.pool_sizes[0], p.pool_sizes[1])
            }
            Err(PlanError::NoFit { impossible, .. }) => match impossible {
                Some(_) => "no plan (proven)".into(),
                None => "no plan found".into(),
            },
            Err(e) => format!("error: {e}"),
        };
        let name = path.file_stem().unwrap_or_default().to_string_lossy();
        println!(
            "| {name} | {w} | {fast} / {slow} | {} | {} | {took:.2} s |",
            show(&kept),
            show(&chosen)
        );
        tally.add(greedy_fails(&split), &kept, &chosen);
    }
    tally.print("models");
    Ok(())
}
