//! `auto`: the default. The fast greedy planners run first and the best plan they find
//! goes to the exact solver, which shrinks it within a deterministic budget; first fit by
//! size class then replaces the result where it is smaller. The plan says which produced
//! it. Members run in a fixed order (on [`Exact::threads`] threads) and
//! stop at the lower bound, so the result is the same on every machine and thread count.

use super::slots::pushed_down;
use super::{
    Algorithm, Assignment, BestFit, Exact, FirstFit, FirstFitByClass, GreedyByBreadth,
    GreedyByConflicts, GreedyBySize, HillClimb, Slots,
};
use crate::bound::LowerBound;
use crate::problem::Problem;
use crate::solution::{PlanError, Solution};
use crate::verify;

/// Greedy by breadth, first fit, best fit, greedy by size and by conflicts (and hill
/// climbing when buffers have a choice of pools), then [`Exact`] on the smallest of their
/// plans (ties go to the earlier member), which also searches the assignment of buffers to
/// pools as [`Exact::assignment`] says, unless [`Slots`] reaches the lower bound, as placed
/// or pushed down, where the members do not (then its plan); then [`FirstFitByClass`], kept where it is strictly
/// smaller (or alone finds a plan). Where buffers have a choice of pools it also runs
/// [`Exact`] from first fit's plan, as `exact` alone does, and keeps the smaller result;
/// last, where slots' plan is no larger, that plan pushed down (every buffer into the
/// lowest gap below it), kept where strictly smaller.
#[derive(Clone, Copy, Debug, Default)]
pub struct Auto {
    /// The exact stage, with its budget and, in decision mode, its target capacity.
    pub exact: Exact,
}

impl Auto {
    /// `start`, or first fit by size class where that is strictly smaller (or `start` has
    /// no plan). It runs after the exact search rather than as one of the members whose
    /// best seeds it: the search's probes follow from its start, and from this one's plan
    /// it ends larger on MiniMalloc's J (1,042,432 bytes, not 1,039,360), while on large
    /// pools the search does not run and this plan is the smallest by far (idealloc's
    /// S_1: 0.2 % over the lower bound, the members 4.2 % and more).
    fn or_by_class(
        &self,
        problem: &Problem,
        lower_bound: &LowerBound,
        start: Result<Solution, PlanError>,
    ) -> Result<Solution, PlanError> {
        if start
            .as_ref()
            .is_ok_and(|s| s.total(problem) <= lower_bound.total)
        {
            return start;
        }
        let by_class = FirstFitByClass::default();
        let other = by_class.allocate(problem, lower_bound);
        keep_smaller(problem, start, other, by_class.name())
    }
}

/// `kept`, unless `other` is a plan and `kept` is not, or `other` is strictly smaller:
/// then `other`, named as produced by `name`. Ties keep `kept`.
fn keep_smaller(
    problem: &Problem,
    kept: Result<Solution, PlanError>,
    other: Result<Solution, PlanError>,
    name: &str,
) -> Result<Solution, PlanError> {
    match (other, &kept) {
        (Ok(o), Ok(k)) if o.total(problem) >= k.total(problem) => kept,
        (Ok(o), _) => Ok(Solution {
            produced_by: Some(name.into()),
            ..o
        }),
        (Err(_), _) => kept,
    }
}

impl Algorithm for Auto {
    fn name(&self) -> &str {
        "auto"
    }

    fn allocate(&self, problem: &Problem, lower_bound: &LowerBound) -> Result<Solution, PlanError> {
        if self.exact.assignment == Assignment::Fastest {
            // Speed decides the pools, not the smallest of the members' totals.
            return self.exact.allocate(problem, lower_bound).map(|s| Solution {
                produced_by: Some("exact".into()),
                ..s
            });
        }
        // Slots takes a moment, and on long chains of near-equal activations it is at the
        // bound where the others are far above it: then the search does not run.
        let slots = Slots
            .slotted(problem)
            .map(|s| Solution {
                produced_by: Some(Slots.name().into()),
                ..s
            })
            .ok()
            .filter(|s| verify::verify(problem, &s.allocations).is_ok());
        let climb = HillClimb::default();
        // Breadth first: on real graphs it is the most often at the bound, which ends the
        // portfolio early (idealloc's Y_1: at the bound, 62,185 buffers).
        let mut members: Vec<&(dyn Algorithm + Sync)> = vec![
            &GreedyByBreadth,
            &FirstFit,
            &BestFit,
            &GreedyBySize,
            &GreedyByConflicts,
        ];
        // Where there is a choice of pools, hill climbing also explores the assignment.
        let choice = problem.buffers().iter().any(|b| b.candidates.len() > 1);
        if choice {
            members.push(&climb);
        }
        // Slots pushed down, made at most once: before the search where the members miss
        // the bound and slots alone does not reach it, or at the end.
        let pushed = std::cell::OnceCell::new();
        let pushed_slots = |s: &Solution| {
            pushed
                .get_or_init(|| Solution {
                    produced_by: Some(Slots.name().into()),
                    ..Solution::new(pushed_down(problem, s.allocations.clone()))
                })
                .clone()
        };
        let at_bound = || {
            let s = slots.as_ref()?;
            let at = |s: &Solution| s.total(problem) <= lower_bound.total;
            Some(if at(s) { s.clone() } else { pushed_slots(s) })
        };
        let start = self
            .exact
            .improve_best(problem, lower_bound, &members, &at_bound);
        let start = self.or_by_class(problem, lower_bound, start);
        // Where there is a choice of pools (or no plan yet), the search above kept each
        // buffer's pool: search the assignment too.
        let best = self.exact.choose_pools(problem, lower_bound, start);
        let best = if choice {
            // The best greedy total need not have the best assignment: also search from
            // first fit's, as `exact` alone does, and keep the smaller.
            let alt = self.exact.allocate(problem, lower_bound);
            keep_smaller(problem, best, alt, "exact")
        } else {
            best
        };
        // Slots after everything, where strictly smaller: the others' results are as
        // before wherever slots does not beat them. Pushed down only where it is already
        // the smallest (the push-down only lowers it).
        let smallest = |s: &Solution| {
            best.as_ref()
                .map_or(true, |b| s.total(problem) <= b.total(problem))
        };
        match &slots {
            Some(s) if smallest(s) => {
                keep_smaller(problem, best, Ok(pushed_slots(s)), Slots.name())
            }
            _ => best,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{Buffer, Pool};
    use crate::test_rng::Rng;

    /// Where the members and the slots as placed miss the bound and the slots pushed down
    /// reach it, `auto` returns that plan (with no budget, so the search could not have
    /// found it) and names slots; such problems are found among short skip chains. (That
    /// it returns it before searching is a matter of time: docs/performance.md.)
    #[test]
    fn slots_pushed_down_at_the_bound_are_returned() {
        let no_budget = Auto {
            exact: Exact {
                work_budget: 0,
                ..Exact::default()
            },
        };
        let mut rng = Rng::seeded(0x5107);
        let mut seen = 0;
        for case in 0..60 {
            let problem = super::super::slots::tests::skips(40, &[3, 9, 27], &mut rng);
            let bound = LowerBound::of(&problem);
            let members = [
                crate::plan(&problem, &GreedyByBreadth).unwrap().total(),
                crate::plan(&problem, &FirstFit).unwrap().total(),
                crate::plan(&problem, &BestFit).unwrap().total(),
                crate::plan(&problem, &GreedyBySize).unwrap().total(),
                crate::plan(&problem, &GreedyByConflicts).unwrap().total(),
            ];
            let placed = Slots.slotted(&problem).unwrap().total(&problem);
            let pushed = crate::plan(&problem, &Slots).unwrap().total();
            let auto = crate::plan(&problem, &no_budget).unwrap();
            let only_pushed = members.iter().all(|&m| m > bound.total) && placed > bound.total;
            if only_pushed && pushed == bound.total {
                seen += 1;
                assert_eq!(auto.total(), bound.total, "case {case}");
                assert!(
                    auto.algorithm.contains("slots"),
                    "case {case}: {}",
                    auto.algorithm
                );
            }
            assert!(
                auto.total() <= members.into_iter().min().unwrap_or(0),
                "case {case}"
            );
        }
        assert!(
            seen > 0,
            "no case where only the pushed slots reach the bound"
        );
    }

    /// With no budget for the exact stage, equal sizes in an order the members place badly:
    /// slots reaches the bound (an interval graph colored by start takes its largest
    /// clique), so its plan is the one `auto` returns, and it says so. Sizes of 16 and 48
    /// bytes (two classes, stacked) are where first fit by size class does better: its
    /// plan replaces the members' where strictly smaller.
    #[test]
    fn slots_and_by_class_replace_a_larger_plan_and_are_named() {
        let mut rng = Rng::seeded(0xc1a5);
        let no_budget = Auto {
            exact: Exact {
                work_budget: 0,
                ..Exact::default()
            },
        };
        let (mut by_slots, mut by_class) = (0, 0);
        for case in 0..200 {
            let mut b = Problem::builder();
            b.pool(Pool::workspace("ws"));
            let mixed = case % 2 == 1;
            for i in 0..20 {
                let start = rng.below(30);
                let size = if mixed && rng.below(2) == 0 { 48 } else { 16 };
                b.buffer(
                    Buffer::new(format!("b{i}"), size)
                        .with_candidates([0])
                        .with_live(start, start + 1 + rng.below(8)),
                );
            }
            let problem = b.build().unwrap();
            let bound = LowerBound::of(&problem);
            let plan = crate::plan(&problem, &no_budget).unwrap();
            let first = crate::plan(&problem, &FirstFit).unwrap();
            assert!(plan.pool_sizes[0] <= first.pool_sizes[0], "case {case}");
            if !mixed {
                assert_eq!(plan.pool_sizes[0], bound.total, "case {case}: one size");
            }
            if plan.algorithm.contains("slots") {
                by_slots += 1;
            }
            if plan.algorithm.contains("first_fit_by_class") {
                assert!(plan.pool_sizes[0] < first.pool_sizes[0], "case {case}");
                by_class += 1;
            }
        }
        // Not vacuous: on some problems every member missed the bound.
        assert!(by_slots > 0 && by_class > 0, "{by_slots} {by_class}");
    }
}
