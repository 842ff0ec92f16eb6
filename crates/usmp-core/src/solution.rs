//! The planner's vocabulary, below everything that plans: where a buffer lives
//! ([`Allocation`]), what an algorithm returns ([`Solution`]), why planning failed
//! ([`PlanError`]) and which rule a placement breaks ([`Violation`]). Algorithms, bounds
//! and the verifier import these; nothing here imports them.

use std::fmt;

use crate::problem::Problem;

/// Where one buffer lives (the RFC's `PoolAllocation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Allocation {
    /// Index into [`Problem::pools`].
    pub pool: usize,
    /// Byte offset from the start of the pool.
    pub offset: u64,
}

/// What an [`Algorithm`](crate::Algorithm) returns: an allocation for every buffer, in buffer order.
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

/// Whether buffers `a` and `b` share a byte where `allocations` place them (one pool,
/// their `[offset, offset + size)` ranges intersecting): for a declared overlap, whether
/// the plan uses it.
pub fn share_bytes(problem: &Problem, allocations: &[Allocation], a: usize, b: usize) -> bool {
    let (x, y) = (allocations[a], allocations[b]);
    let size = |i: usize| problem.buffers()[i].size;
    x.pool == y.pool && x.offset < y.offset + size(b) && y.offset < x.offset + size(a)
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
        /// The algorithm that found no plan (filled in by [`plan`](crate::plan())).
        algorithm: String,
        /// Why no plan can exist, when the bound proves it (`bound::infeasible`,
        /// filled in by [`plan`](crate::plan())); `None`: one may exist that this algorithm did not find.
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

/// One broken rule, naming the buffers and pools involved.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// The number of allocations differs from the number of buffers.
    WrongCount {
        /// Buffers in the problem.
        buffers: usize,
        /// Allocations given.
        allocations: usize,
    },
    /// An allocation names a pool that does not exist.
    UnknownPool {
        /// The buffer.
        buffer: String,
        /// The bad pool index.
        pool: usize,
    },
    /// A buffer sits in a pool that is not one of its candidates (this also catches
    /// constants outside constant pools, since candidates always match the buffer's kind).
    NotACandidate {
        /// The buffer.
        buffer: String,
        /// The pool.
        pool: String,
    },
    /// An offset that is not a multiple of the buffer's and the pool's alignment.
    Misaligned {
        /// The buffer.
        buffer: String,
        /// Its offset.
        offset: u64,
        /// The alignment required.
        alignment: u64,
    },
    /// A buffer that ends past its pool's limit (or past the address space).
    OverLimit {
        /// The buffer.
        buffer: String,
        /// The pool.
        pool: String,
        /// Where the buffer ends.
        end: u64,
        /// The pool's limit.
        limit: u64,
    },
    /// Two conflicting buffers share bytes.
    Overlap {
        /// One buffer.
        a: String,
        /// The other.
        b: String,
        /// Their pool.
        pool: String,
    },
    /// An output shares bytes with an input it may overlap, but at a shift outside the
    /// declared window.
    OutsideWindow {
        /// The output.
        output: String,
        /// The input.
        input: String,
        /// Output offset minus input offset.
        shift: i128,
        /// The window declared.
        shifts: [i64; 2],
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::WrongCount {
                buffers,
                allocations,
            } => write!(f, "{allocations} allocations for {buffers} buffers"),
            Violation::UnknownPool { buffer, pool } => {
                write!(
                    f,
                    "buffer \"{buffer}\" is placed in pool #{pool}, which does not exist"
                )
            }
            Violation::NotACandidate { buffer, pool } => {
                write!(
                    f,
                    "buffer \"{buffer}\" is placed in pool \"{pool}\", which is not one of its candidates"
                )
            }
            Violation::Misaligned {
                buffer,
                offset,
                alignment,
            } => write!(
                f,
                "buffer \"{buffer}\" is at offset {offset}, not a multiple of {alignment}"
            ),
            Violation::OverLimit {
                buffer,
                pool,
                end,
                limit,
            } => write!(
                f,
                "buffer \"{buffer}\" ends at {end}, past pool \"{pool}\"'s limit of {limit}"
            ),
            Violation::Overlap { a, b, pool } => {
                write!(
                    f,
                    "conflicting buffers \"{a}\" and \"{b}\" overlap in pool \"{pool}\""
                )
            }
            Violation::OutsideWindow {
                output,
                input,
                shift,
                shifts,
            } => write!(
                f,
                "\"{output}\" shares bytes with \"{input}\" at shift {shift}, outside its \
                 window [{}, {}]",
                shifts[0], shifts[1]
            ),
        }
    }
}
