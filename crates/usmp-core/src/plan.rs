//! The planner's output: one [`Allocation`] per buffer, checked and summarised as a
//! [`Plan`], and the errors planning can end in.

use std::fmt;

use crate::algo::Algorithm;
use crate::bound::LowerBound;
use crate::problem::Problem;
use crate::verify::{self, Violation};

/// Where one buffer lives (the RFC's `PoolAllocation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Allocation {
    /// Index into [`Problem::pools`].
    pub pool: usize,
    /// Byte offset from the start of the pool.
    pub offset: u64,
}

/// What an [`Algorithm`] returns: an allocation for every buffer, in buffer order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    /// `allocations[i]` places buffer `i`.
    pub allocations: Vec<Allocation>,
    /// Set by an exact algorithm that exhausted its search: no smaller plan exists.
    pub proven_optimal: bool,
    /// For an algorithm that runs others (`auto`): which one produced this solution.
    pub produced_by: Option<String>,
}

impl Solution {
    /// A solution with no optimality claim.
    pub fn new(allocations: Vec<Allocation>) -> Self {
        Solution {
            allocations,
            proven_optimal: false,
            produced_by: None,
        }
    }

    /// The bytes of every pool this solution's allocations need, summed.
    pub(crate) fn total(&self, problem: &Problem) -> u64 {
        pool_sizes(problem, &self.allocations).iter().sum()
    }
}

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

/// A buffer's best attempt in one candidate pool, for [`PlanError::NoFit`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// Pool name.
    pub pool: String,
    /// Its size limit; `u64::MAX` for an unbounded pool (which can only overflow).
    pub limit: u64,
    /// The end the buffer would have needed, at the lowest offset the algorithm found.
    pub needed: u64,
}

/// Why planning failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    /// A buffer fits in none of its candidate pools.
    NoFit {
        /// The buffer that did not fit.
        buffer: String,
        /// Size of that buffer.
        size: u64,
        /// One entry per candidate, in preference order.
        attempts: Vec<Attempt>,
        /// The problem's lower bound on total bytes.
        lower_bound: u64,
        /// The algorithm that found no plan (filled in by [`plan`]).
        algorithm: String,
        /// Why no plan can exist, when the bound proves it (`bound::infeasible`,
        /// filled in by [`plan`]); `None`: one may exist that this algorithm did not find.
        impossible: Option<String>,
    },
    /// An algorithm returned a plan that breaks the rules: a bug in that algorithm.
    Invalid {
        /// The algorithm's name.
        algorithm: String,
        /// What the verifier found.
        violations: Vec<Violation>,
    },
    /// The algorithm gave up for a reason of its own.
    Failed {
        /// The algorithm's name.
        algorithm: String,
        /// Its explanation.
        reason: String,
    },
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::NoFit {
                buffer,
                size,
                attempts,
                lower_bound,
                algorithm,
                impossible,
            } => {
                writeln!(
                    f,
                    "buffer \"{buffer}\" ({size} bytes) fits in none of its candidate pools:"
                )?;
                for a in attempts {
                    if a.limit == u64::MAX {
                        writeln!(
                            f,
                            "  pool \"{}\": unbounded, but the buffer would end past the 64-bit address space",
                            a.pool
                        )?;
                    } else {
                        let missing = a.needed.saturating_sub(a.limit);
                        writeln!(
                            f,
                            "  pool \"{}\": limit {} bytes, needs {} bytes ({missing} missing)",
                            a.pool, a.limit, a.needed
                        )?;
                    }
                }
                match impossible {
                    Some(why) => write!(
                        f,
                        "no plan can exist: {why}; raise a limit or give buffers more \
                         candidate pools"
                    ),
                    None => {
                        let next = if algorithm.starts_with("auto") || algorithm == "exact" {
                            "try --algorithm hill_climb (which moves buffers between pools) \
                             or a longer search (--time-limit 60)"
                        } else {
                            "try --algorithm auto, which searches exactly"
                        };
                        write!(
                            f,
                            "{algorithm} found no plan, but one may exist: no limit rules it \
                             out, and no plan can use fewer than {lower_bound} bytes in total \
                             (lower bound); {next}, raise a pool's limit, or add a candidate \
                             pool"
                        )
                    }
                }
            }
            PlanError::Invalid {
                algorithm,
                violations,
            } => {
                write!(f, "algorithm \"{algorithm}\" produced an invalid plan:")?;
                for v in violations {
                    write!(f, "\n  {v}")?;
                }
                Ok(())
            }
            PlanError::Failed { algorithm, reason } => {
                write!(f, "algorithm \"{algorithm}\" failed: {reason}")
            }
        }
    }
}

impl std::error::Error for PlanError {}

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

/// Bytes each pool needs for `allocations`. Callers pass verified allocations, whose ends
/// cannot overflow.
pub fn pool_sizes(problem: &Problem, allocations: &[Allocation]) -> Vec<u64> {
    let mut sizes = vec![0u64; problem.pools().len()];
    for (buffer, a) in problem.buffers().iter().zip(allocations) {
        let end = a.offset.saturating_add(buffer.size);
        sizes[a.pool] = sizes[a.pool].max(end);
    }
    sizes
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
