//! `auto`: run several planners and keep the smallest plan, so the user need not know
//! which one suits their model. Members run in a fixed order and the first to reach the
//! lower bound ends the search, so the result is the same on every machine.

use super::{Algorithm, FirstFit, GreedyByConflicts, GreedyBySize, HillClimb};
use crate::bound::LowerBound;
use crate::plan::{PlanError, Solution, pool_sizes};
use crate::problem::Problem;
use crate::verify;

/// Runs greedy by size, greedy by conflicts, first fit and hill climbing in turn and keeps
/// the smallest valid plan (ties go to the earlier member), stopping at the first that
/// reaches the lower bound. The plan names the member that produced it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Auto;

impl Algorithm for Auto {
    fn name(&self) -> &str {
        "auto"
    }

    fn allocate(&self, problem: &Problem, lower_bound: &LowerBound) -> Result<Solution, PlanError> {
        let members: [&dyn Algorithm; 4] = [
            &GreedyBySize,
            &GreedyByConflicts,
            &FirstFit,
            &HillClimb::default(),
        ];
        let mut best: Option<(u64, Solution)> = None;
        let mut first_error = None;
        for member in members {
            let solution = match member.allocate(problem, lower_bound) {
                Ok(s) => s,
                Err(e) => {
                    first_error.get_or_insert(e);
                    continue;
                }
            };
            // Only a valid plan may win; plan() verifies the winner again.
            if verify::verify(problem, &solution.allocations).is_err() {
                continue;
            }
            let total: u64 = pool_sizes(problem, &solution.allocations).iter().sum();
            if best.as_ref().is_none_or(|(t, _)| total < *t) {
                let proven = solution.proven_optimal;
                best = Some((
                    total,
                    Solution {
                        produced_by: Some(member.name().to_string()),
                        ..solution
                    },
                ));
                if proven || total <= lower_bound.total {
                    break;
                }
            }
        }
        match (best, first_error) {
            (Some((_, solution)), _) => Ok(solution),
            (None, Some(e)) => Err(e),
            (None, None) => Err(PlanError::Failed {
                algorithm: "auto".into(),
                reason: "no member produced a valid plan".into(),
            }),
        }
    }
}
