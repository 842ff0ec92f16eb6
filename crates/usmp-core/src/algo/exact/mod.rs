//! `exact`: the smallest plan there is, or the best found and how far from the bound.
//!
//! A multi-pool problem is first assigned to pools by a greedy plan, which respects every
//! pool's limit and the preference order; then each pool's buffers are re-placed by an
//! exact search (see `search`), which can only shrink the pool, so limits still hold.
//! When that assignment has no plan, or the smallest total is asked for rather than the
//! preference order ([`Assignment`]), the assignment itself is searched (see `assign`),
//! with its own work budget: within it, that search covers every assignment, so "no plan
//! fits" is proven, and under [`Assignment::SmallestTotal`] the plan is the smallest.
//!
//! Per pool the search answers "does it fit in C bytes?". Minimising probes capacities
//! between the pool's lower bound and the best size found: the bound first (finding a plan
//! there proves it optimal), then bisection. Each probe gets a share of work that doubles
//! from round to round, so easy capacities are settled before hard ones eat the budget,
//! and goes on from where the searches before it stopped (`Probes`); a probe that
//! exhausts its search proves every smaller capacity impossible. The rounds get a third
//! of the budget; the rest goes to short searches from the start below the best plan,
//! in shaken and plain orders (`minimise`'s dives).
//!
//! The budget is a count of work, so the same problem gives the same plan on every
//! machine; the command may add a wall-clock limit, which builds never do.

mod assign;
mod effort;
mod instance;
mod minimise;
mod preorder;
mod search;
mod unplaced;
mod weights;
mod windows;

#[cfg(test)]
mod tests;

use std::time::{Duration, Instant};

use super::Algorithm;
use super::greedy::FirstFit;
use super::place::{Fit, Layout, place_in_order};
use super::portfolio::best_of;
use crate::bound::LowerBound;
use crate::problem::Problem;
use crate::solution::{Allocation, PlanError, Solution, pool_sizes};
use assign::Objective;
pub use assign::{JOINT_MAX_BUFFERS, JOINT_MAX_CHOOSERS};
use effort::Effort;
use instance::Instance;
use minimise::{minimise, peak};

/// Pools with more buffers than this keep their greedy placement: the search's tables
/// grow with buffers times sections, and greedy plans of such pools are already close.
pub const EXACT_MAX_BUFFERS: usize = 2500;

/// Before bisecting, minimising decides at the lower bound with this many times the work
/// budget left, and never more than [`BOUND_PROBE_MOST`] units (see `minimise`).
pub const BOUND_PROBE_FACTOR: u64 = 6;

/// The most work the decision at the lower bound gets. MiniMalloc's challenging
/// instances whose optimum is the bound need up to 214 million units for it (H; E 163
/// million, B 121 million), since probes go on where they stopped (352 million for E
/// before, 543 million before probes tried TWA first). Where the optimum is above the
/// bound (D and J), the decision never ends, and this is what it costs before the search
/// goes on: 600 million units were 10-13 s of their 12-15 s (this project's 2-core
/// machine), 250 million hold `auto` under 10 s on every one of them.
pub const BOUND_PROBE_MOST: u64 = 250_000_000;

/// [`Exact`]'s default work budget: a third for the probing rounds, the rest for dives
/// (MiniMalloc's D and J, whose optimum is above the bound, spend it all, with the
/// bound's probe 7-8 s on this project's 2-core machine).
pub const DEFAULT_WORK_BUDGET: u64 = 300_000_000;

/// The exact solver, anytime, with a deterministic budget.
#[derive(Clone, Copy, Debug)]
pub struct Exact {
    /// Work the search may spend over all pools (items examined; 3-20 ns each on this
    /// project's 2-core machine, by the shape of the problem). Builds rely on this to stay
    /// reproducible.
    pub work_budget: u64,
    /// An additional wall-clock limit, for interactive use only: plans then depend on
    /// the machine's speed.
    pub time_limit: Option<Duration>,
    /// Decision mode: stop at the first plan whose total is at most this many bytes.
    pub capacity: Option<u64>,
    /// How the pool of each buffer with a choice is chosen.
    pub assignment: Assignment,
    /// Threads for work that splits into independent parts (`auto`'s greedy planners); 0
    /// takes every core. The plan is the same whatever the count.
    pub threads: usize,
}

/// How [`Exact`] chooses the pool of each buffer that has a choice of pools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Assignment {
    /// The RFC's fallback order (default): each buffer where the greedy start put it, in
    /// the first of its candidates with room. Only when that assignment has no plan are
    /// the others searched, largest buffers first, each trying its candidates in
    /// preference order, and the first that fits is taken. A fast memory listed first
    /// keeps what fits in it, even where moving a buffer out would save bytes in total.
    #[default]
    Preference,
    /// The smallest total of the pool sizes over every assignment: buffers leave a
    /// preferred pool whenever that saves bytes. When the search finishes within its
    /// budget the plan is proven the smallest there is.
    SmallestTotal,
    /// The most-accessed bytes in the fastest memories: buffers taken by their traffic
    /// per byte ([`Buffer::traffic`](crate::Buffer::traffic)), most first, each into the
    /// fastest of its candidates ([`Pool::bandwidth`](crate::Pool::bandwidth)) where it
    /// fits under the limit, lowest gap first; then each pool is placed exactly. The
    /// weights a limited constant pool holds are chosen before, exactly: a knapsack of
    /// their time saved against their fastest unlimited pool (one pool at a time, the
    /// fastest first). The preference order's plan is kept instead where its estimated
    /// memory time is lower (or equal, and it is no larger), and where the other finds no
    /// plan. A problem of at most [`JOINT_MAX_BUFFERS`] buffers, [`JOINT_MAX_CHOOSERS`]
    /// with a choice, is then searched over every assignment for the quickest plan
    /// (within a quarter of the work budget).
    Fastest,
}

impl Default for Exact {
    fn default() -> Self {
        Exact {
            work_budget: DEFAULT_WORK_BUDGET,
            time_limit: None,
            capacity: None,
            assignment: Assignment::Preference,
            threads: 0,
        }
    }
}

impl Algorithm for Exact {
    fn name(&self) -> &str {
        "exact"
    }

    fn allocate(&self, problem: &Problem, lower_bound: &LowerBound) -> Result<Solution, PlanError> {
        let start = self.improve_best(problem, lower_bound, &[&FirstFit], &|| None);
        let mut solution = self.choose_pools(problem, lower_bound, start);
        if self.assignment != Assignment::Fastest {
            return solution.map(|s| Solution {
                produced_by: None,
                ..s
            });
        }
        let cost = |s: &Solution| {
            let total = s.total(problem);
            let traffic = crate::traffic::traffic(problem, &s.allocations);
            (crate::traffic::memory_time(&traffic), total)
        };
        if let Ok(start) = fastest(problem, lower_bound) {
            // Taking buffers by traffic per byte is a greedy answer to a knapsack: keep
            // the preference plan where it is quicker (or as quick and smaller).
            let (quick, _) = self.improve(problem, start);
            if solution.as_ref().map_or(true, |s| cost(&quick) < cost(s)) {
                solution = Ok(quick);
            }
        }
        let mut solution = solution?;
        // Small enough: every assignment searched for the quickest, from the one in hand.
        if assign::small(problem) {
            let mut effort = self.joint_effort();
            let start = (solution.total(problem), solution.allocations.clone());
            let joint = assign::search(problem, Some(start), 0, &mut effort, Objective::Time);
            if let Some((_, allocations)) = joint.best {
                let found = Solution::new(allocations);
                if cost(&found) < cost(&solution) {
                    solution = found;
                }
            }
        }
        Ok(Solution {
            produced_by: None,
            ..solution
        })
    }
}

impl Exact {
    /// Starts from the best plan of `members` and improves it. When every member overflows
    /// a pool limit, starts from their best plan without limits and searches under them;
    /// if that fails too, the first member's error stands. `at_bound` makes a plan
    /// another way, only when no member reaches the lower bound; it is returned instead
    /// of searching where it does.
    pub(crate) fn improve_best(
        &self,
        problem: &Problem,
        lower_bound: &LowerBound,
        members: &[&(dyn Algorithm + Sync)],
        at_bound: &dyn Fn() -> Option<Solution>,
    ) -> Result<Solution, PlanError> {
        let (start, overflow) = match best_of(problem, lower_bound, members, self.threads) {
            Ok((total, s)) if total <= lower_bound.total => return Ok(s),
            Ok((_, s)) => match at_bound().filter(|a| a.total(problem) <= lower_bound.total) {
                Some(a) => return Ok(a),
                None => (s, None),
            },
            Err(e @ PlanError::NoFit { .. }) => {
                let relaxed = problem.without_limits();
                match best_of(&relaxed, &LowerBound::of(&relaxed), members, self.threads) {
                    Ok((_, s)) => (s, Some(e)),
                    Err(_) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        let member = start.produced_by.clone();
        let (solution, improved) = self.improve(problem, start);
        if let Some(e) = overflow {
            let sizes = pool_sizes(problem, &solution.allocations);
            if !problem.pools().iter().zip(sizes).all(|(p, s)| p.admits(s)) {
                return Err(e);
            }
        }
        Ok(Solution {
            produced_by: if improved {
                Some("exact".into())
            } else {
                member
            },
            ..solution
        })
    }

    /// Where `start` found no plan, or buffers have a choice and the assignment is to
    /// give the smallest total (and there are at most [`JOINT_MAX_BUFFERS`] buffers,
    /// [`JOINT_MAX_CHOOSERS`] of them with a choice), searches the assignment of buffers
    /// to pools from `start` on, with a quarter of the work budget. Keeps `start` unless a strictly smaller plan is found; an exhausted search
    /// proves the plan optimal, or that no plan exists.
    pub(crate) fn choose_pools(
        &self,
        problem: &Problem,
        lower_bound: &LowerBound,
        start: Result<Solution, PlanError>,
    ) -> Result<Solution, PlanError> {
        let buffers = problem.buffers();
        let choosers = buffers.iter().filter(|b| b.candidates.len() > 1).count();
        // Under the preference order a plan stands; without a choice there is one
        // assignment. Either way the search only settles a "no fit".
        let wanted = match self.assignment {
            Assignment::Preference | Assignment::Fastest => start.is_err(),
            Assignment::SmallestTotal => choosers > 0 || start.is_err(),
        };
        if !wanted || !assign::small(problem) {
            return start;
        }
        let total = |s: &Solution| s.total(problem);
        let enough = match self.assignment {
            // The first plan found, in preference order.
            Assignment::Preference | Assignment::Fastest => u64::MAX,
            Assignment::SmallestTotal => lower_bound.total.max(self.capacity.unwrap_or(0)),
        };
        let incumbent = match &start {
            Ok(s) if s.proven_optimal || total(s) <= enough => return start,
            Ok(s) => Some((total(s), s.allocations.clone())),
            Err(PlanError::NoFit { .. }) => None,
            Err(_) => return start,
        };
        let mut effort = self.joint_effort();
        let joint = assign::search(problem, incumbent, enough, &mut effort, Objective::Total);
        match (start, joint.best) {
            (Ok(s), Some((found, allocations))) if found < total(&s) => Ok(Solution {
                allocations,
                proven_optimal: joint.complete,
                produced_by: Some("exact".into()),
            }),
            (Ok(s), _) => Ok(Solution {
                proven_optimal: s.proven_optimal || joint.complete,
                ..s
            }),
            (Err(_), Some((_, allocations))) => Ok(Solution {
                allocations,
                proven_optimal: joint.complete && self.assignment == Assignment::SmallestTotal,
                produced_by: Some("exact".into()),
            }),
            (Err(mut e), None) if joint.complete => {
                if let PlanError::NoFit { impossible, .. } = &mut e {
                    *impossible = Some(
                        "the exact search tried every assignment of buffers to their \
                         candidate pools, and in none do all pools stay within their limits"
                            .into(),
                    );
                }
                Err(e)
            }
            (Err(e), None) => Err(e),
        }
    }

    /// The joint search's work: its share of the budget, and the deadline if any.
    fn joint_effort(&self) -> Effort {
        let deadline = self.time_limit.map(|t| Instant::now() + t);
        Effort::new(self.work_budget / assign::JOINT_BUDGET_DIVISOR, deadline)
    }

    /// Re-places each pool's buffers of `start` as tightly as the budget allows. Returns
    /// the solution and whether the search changed anything.
    pub(crate) fn improve(&self, problem: &Problem, start: Solution) -> (Solution, bool) {
        let mut allocations = start.allocations;
        let mut sizes = pool_sizes(problem, &allocations);
        let deadline = self.time_limit.map(|t| Instant::now() + t);
        let mut effort = Effort::new(self.work_budget, deadline);
        let mut all_proven = true;
        let mut improved = false;
        for pool in 0..problem.pools().len() {
            let members: Vec<usize> = (0..allocations.len())
                .filter(|&b| allocations[b].pool == pool)
                .collect();
            if members.is_empty() {
                continue;
            }
            if members.len() > EXACT_MAX_BUFFERS {
                all_proven = false;
                continue;
            }
            let others: u64 = sizes.iter().sum::<u64>() - sizes[pool];
            let wanted = self.capacity.map(|c| c.saturating_sub(others));
            let inst = Instance::new(problem, pool, members);
            let mut size = sizes[pool];
            let mut offsets = None;
            // A pool over its limit (a plan made without limits) must get under it first.
            if let Some(limit) = problem.pools()[pool].size_limit.filter(|&l| size > l) {
                let target = wanted.map_or(limit, |w| w.min(limit));
                let result = minimise(&inst, size, Some(target), &mut effort);
                match result.offsets {
                    Some(o) => {
                        size = peak(&inst, &o);
                        offsets = Some(o);
                    }
                    None => {
                        all_proven = false;
                        continue;
                    }
                }
            }
            let result = minimise(&inst, size, wanted, &mut effort);
            all_proven &= result.proven;
            if let Some(offsets) = result.offsets.or(offsets) {
                for (k, &b) in inst.buffers.iter().enumerate() {
                    allocations[b] = Allocation {
                        pool,
                        offset: offsets[k],
                    };
                }
                sizes[pool] = peak(&inst, &offsets);
                improved = true;
            }
        }
        // Per-pool optima add up to the optimum only if no buffer could have gone elsewhere.
        let forced = problem.buffers().iter().all(|b| b.candidates.len() == 1);
        let solution = Solution {
            allocations,
            proven_optimal: all_proven && forced,
            produced_by: None,
        };
        (solution, improved)
    }
}

/// [`Assignment::Fastest`]'s start: the weights of each limited constant pool chosen by
/// a knapsack (`weights`), then buffers by traffic per byte, most first (then larger
/// first, then in order), each in the lowest gap of the fastest candidate it fits in.
fn fastest(problem: &Problem, lower_bound: &LowerBound) -> Result<Solution, PlanError> {
    let mut fast = problem.fastest_first();
    // The weights each limited constant pool holds are a knapsack, decided first.
    for (b, candidates) in weights::choose(&fast).into_iter().enumerate() {
        if let Some(candidates) = candidates {
            fast.set_candidates(b, candidates);
        }
    }
    let b = problem.buffers();
    let mut order: Vec<usize> = (0..b.len()).collect();
    // traffic_i / size_i > traffic_j / size_j, compared without division.
    let density = |i: usize, j: usize| {
        (u128::from(b[j].traffic) * u128::from(b[i].size))
            .cmp(&(u128::from(b[i].traffic) * u128::from(b[j].size)))
    };
    order.sort_by(|&i, &j| {
        density(i, j)
            .then(b[j].size.cmp(&b[i].size))
            .then(i.cmp(&j))
    });
    let layout = Layout::new(&fast);
    let (allocations, _) = place_in_order(&layout, &order, Fit::Lowest, lower_bound.total)?;
    Ok(Solution::new(allocations))
}
