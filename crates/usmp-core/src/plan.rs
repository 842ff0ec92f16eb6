//! The top of the planner: [`plan()`] runs an algorithm, verifies its solution and
//! summarises it, with its lower bound, as a [`Plan`].

use crate::algo::Algorithm;
use crate::bound::LowerBound;
use crate::problem::Problem;
use crate::solution::{Allocation, PlanError, pool_sizes};
use crate::verify;

/// A verified plan: every buffer's place, every pool's size, and how good it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Name of the algorithm that produced it; for `auto`, with the member that won in
    /// parentheses, e.g. `auto (first_fit)`.
    pub algorithm: String,
    /// `allocations[i]` places buffer `i` of the problem.
    pub allocations: Vec<Allocation>,
    /// Bytes each pool must provide: the highest end of a buffer placed in it.
    pub pool_sizes: Vec<u64>,
    /// What no plan can beat.
    pub lower_bound: LowerBound,
    /// Whether no plan with a smaller total exists (bound reached, or search exhausted).
    pub optimal: bool,
    /// Per pool, the bound of the buffers this plan put there (`bound::assigned`):
    /// no placement of the same buffers makes the pool smaller.
    pub assigned_bounds: Vec<u64>,
}

impl Plan {
    /// Whether every pool is at the bound of the buffers it holds: with this assignment
    /// of buffers to pools (the pool fallback's, for the built-in algorithms) no plan is
    /// smaller, though another assignment might be. Implied by [`Plan::optimal`] only
    /// when it was proved by reaching the bound.
    pub fn placement_optimal(&self) -> bool {
        self.pool_sizes
            .iter()
            .zip(&self.assigned_bounds)
            .all(|(size, bound)| size <= bound)
    }

    /// Recomputes the pool sizes, their bounds and `optimal` (from the bound alone) after
    /// the allocations changed.
    pub fn recheck(&mut self, problem: &Problem) {
        self.pool_sizes = pool_sizes(problem, &self.allocations);
        self.assigned_bounds = crate::bound::assigned(problem, &self.allocations);
        self.optimal = self.total() <= self.lower_bound.total;
    }

    /// Sum of all pool sizes: the figure of merit compared with the lower bound.
    pub fn total(&self) -> u64 {
        // `plan` refuses plans whose total does not fit; saturate rather than wrap anyway.
        self.pool_sizes
            .iter()
            .fold(0u64, |total, &size| total.saturating_add(size))
    }
}

/// Says which algorithm found no plan, and whether none can exist.
fn explained(problem: &Problem, e: PlanError, name: &str) -> PlanError {
    let PlanError::NoFit {
        buffer,
        size,
        attempts,
        lower_bound,
        impossible: searched,
        ..
    } = e
    else {
        return e;
    };
    let pools = problem.pools();
    let impossible = crate::bound::infeasible(problem).map(|proof| {
        let names: Vec<String> = proof
            .pools
            .iter()
            .map(|&p| format!("\"{}\"", pools[p].name))
            .collect();
        let names = names.join(", ");
        match proof.buffer {
            Some(b) => format!(
                "buffer \"{}\" ({} bytes) is larger than each of its pools {names} (the \
                 largest holds {})",
                problem.buffers()[b].name,
                proof.needed,
                proof.limit
            ),
            None => {
                let hold = if proof.pools.len() == 1 {
                    "its limit holds"
                } else {
                    "their limits hold"
                };
                format!(
                    "the buffers that can only go to {names} need at least {} bytes at once; \
                     {hold} {}",
                    proof.needed, proof.limit
                )
            }
        }
    });
    PlanError::NoFit {
        buffer,
        size,
        attempts,
        lower_bound,
        algorithm: name.to_string(),
        // The bound says why in terms of the problem; a complete search only that it was.
        impossible: impossible.or(searched),
    }
}

/// Runs `algorithm` on `problem`, then verifies and summarises its result.
///
/// Every plan this returns has passed [`verify::verify`]: a faulty algorithm, built in or
/// the user's, produces [`PlanError::Invalid`], never a silently wrong plan.
pub fn plan(problem: &Problem, algorithm: &dyn Algorithm) -> Result<Plan, PlanError> {
    let lower_bound = LowerBound::of(problem);
    let name = algorithm.name().to_string();
    let solution = algorithm
        .allocate(problem, &lower_bound)
        .map_err(|e| explained(problem, e, &name))?;
    if let Err(violations) = verify::verify(problem, &solution.allocations) {
        return Err(PlanError::Invalid {
            algorithm: name,
            violations,
        });
    }
    let pool_sizes = pool_sizes(problem, &solution.allocations);
    let Some(total) = pool_sizes
        .iter()
        .try_fold(0u64, |total, &size| total.checked_add(size))
    else {
        return Err(PlanError::Failed {
            algorithm: name,
            reason: format!(
                "its pools need {} bytes, more than {} (2^64 - 1) together: no memory holds them",
                pool_sizes
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(" + "),
                u64::MAX
            ),
        });
    };
    let optimal = solution.proven_optimal || total <= lower_bound.total;
    let algorithm = match solution.produced_by {
        Some(member) => format!("{name} ({member})"),
        None => name,
    };
    let assigned_bounds = crate::bound::assigned(problem, &solution.allocations);
    Ok(Plan {
        algorithm,
        allocations: solution.allocations,
        pool_sizes,
        lower_bound,
        optimal,
        assigned_bounds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Buffer, FirstFit, Pool, Problem};

    #[test]
    fn a_total_past_u64_is_refused_not_wrapped() {
        let mut b = Problem::builder();
        let p = b.pool(Pool::workspace("p"));
        let q = b.pool(Pool::workspace("q"));
        let big = (1u64 << 63) + 5;
        let x = b.buffer(Buffer::new("x", big).with_candidates([p]).with_live(0, 1));
        let y = b.buffer(Buffer::new("y", big).with_candidates([q]).with_live(0, 1));
        let _ = (x, y);
        let problem = b.build().unwrap_or_else(|e| panic!("{e}"));
        match plan(&problem, &FirstFit) {
            Err(PlanError::Failed { reason, .. }) => {
                assert!(
                    reason.contains("9223372036854775813 + 9223372036854775813"),
                    "{reason}"
                );
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
}
