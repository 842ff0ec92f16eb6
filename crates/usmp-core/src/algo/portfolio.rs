//! Running several planners on one problem and keeping the best plan, on as many threads
//! as asked, with the same result whatever the count.
//!
//! The first member runs alone; the others are taken in their order by whichever thread
//! is free. A member whose
//! verified plan reaches the lower bound ends the portfolio: members after it that have
//! not started are skipped. The winner is then chosen by walking the results in member
//! order exactly as a single thread would, so it depends only on the members' own
//! (deterministic) plans: a member before the one at the bound is never skipped, and a
//! member after it is never looked at.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::Algorithm;
use crate::bound::LowerBound;
use crate::problem::Problem;
use crate::solution::{PlanError, Solution};
use crate::verify;

/// What one member gave: its plan or error, and for a valid plan its total.
struct Outcome {
    result: Result<Solution, PlanError>,
    total: Option<u64>,
}

/// The threads to use for `asked` (0: every core the machine has), never more than the
/// work items.
pub(crate) fn thread_count(asked: usize, items: usize) -> usize {
    let cores = || std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = if asked == 0 { cores() } else { asked };
    threads.clamp(1, items.max(1))
}

fn run(member: &(dyn Algorithm + Sync), problem: &Problem, lower_bound: &LowerBound) -> Outcome {
    let result = member.allocate(problem, lower_bound);
    // Only a valid plan may win; plan() verifies the winner again.
    let total = match &result {
        Ok(s) if verify::verify(problem, &s.allocations).is_ok() => Some(s.total(problem)),
        _ => None,
    };
    Outcome { result, total }
}

/// The smallest valid plan any of `members` makes (ties to the earlier), with the member's
/// name; stops at the first that reaches the lower bound. Without any, the first error.
/// `threads` as in [`thread_count`]; the result is the same for any count.
pub(crate) fn best_of(
    problem: &Problem,
    lower_bound: &LowerBound,
    members: &[&(dyn Algorithm + Sync)],
    threads: usize,
) -> Result<(u64, Solution), PlanError> {
    let at_bound = |o: &Outcome| o.total.is_some_and(|t| t <= lower_bound.total);
    let slots: Vec<Mutex<Option<Outcome>>> = members.iter().map(|_| Mutex::new(None)).collect();
    let threads = thread_count(threads, members.len());
    // Runs member `i` into its slot; true when its plan is at the bound.
    let fill = |i: usize| {
        let outcome = run(members[i], problem, lower_bound);
        let stop = at_bound(&outcome);
        *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
        stop
    };
    // The first member runs alone: it is the one most often at the bound (auto puts
    // greedy by breadth first), and then a second planner running beside it only takes
    // memory bandwidth from it (idealloc's Y_1: 0.74 s alone, 1.18 s beside first fit).
    if members.is_empty() || fill(0) {
        // Nothing more to run.
    } else if threads == 1 {
        for i in 1..members.len() {
            if fill(i) {
                break;
            }
        }
    } else {
        let next = AtomicUsize::new(1);
        // The first member known to be at the bound; members after it need not run.
        let first_at_bound = AtomicUsize::new(usize::MAX);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= members.len() || i > first_at_bound.load(Ordering::Relaxed) {
                            break;
                        }
                        if fill(i) {
                            first_at_bound.fetch_min(i, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
    }
    let outcomes = slots
        .into_iter()
        .map(|slot| slot.into_inner().unwrap_or_else(|e| e.into_inner()));
    weigh(members, outcomes, lower_bound)
}

/// The members' outcomes weighed in member order: the smallest valid plan (ties to the
/// earlier), named by its member; without any, the first error.
fn weigh(
    members: &[&(dyn Algorithm + Sync)],
    outcomes: impl Iterator<Item = Option<Outcome>>,
    lower_bound: &LowerBound,
) -> Result<(u64, Solution), PlanError> {
    let mut best: Option<(u64, Solution)> = None;
    let mut first_error = None;
    for (member, outcome) in members.iter().zip(outcomes) {
        // Skipped only after a member at the bound, where the walk has already stopped.
        let Some(outcome) = outcome else {
            break;
        };
        let (solution, total) = match (outcome.result, outcome.total) {
            (Err(e), _) => {
                first_error.get_or_insert(e);
                continue;
            }
            (Ok(_), None) => continue,
            (Ok(s), Some(total)) => (s, total),
        };
        if best.as_ref().is_none_or(|(t, _)| total < *t) {
            let proven = solution.proven_optimal;
            let named = Solution {
                produced_by: Some(member.name().to_string()),
                ..solution
            };
            best = Some((total, named));
            if proven || total <= lower_bound.total {
                break;
            }
        }
    }
    match (best, first_error) {
        (Some(best), _) => Ok(best),
        (None, Some(e)) => Err(e),
        (None, None) => Err(PlanError::Failed {
            algorithm: "auto".into(),
            reason: "no member produced a valid plan".into(),
        }),
    }
}
