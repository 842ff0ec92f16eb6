//! Planning algorithms behind one trait (RFC goal G2: the algorithm is changeable).
//!
//! Built in, with TVM's semantics and none of its defects (see the crate docs):
//! [`GreedyBySize`], [`GreedyByConflicts`], [`FirstFit`] (TensorFlow Lite Micro's planner),
//! [`BestFit`] and [`GreedyByBreadth`] (TensorFlow Lite's), [`FirstFitByClass`] (ours),
//! [`HillClimb`], and the
//! [`Exact`] solver; [`Auto`] runs the fast ones, then the exact solver on the best. Any type implementing [`Algorithm`] can be passed to
//! [`plan`](crate::plan()) instead; its result is verified all the same.

mod auto;
mod exact;
mod greedy;
mod hill_climb;
mod named;
mod place;
mod portfolio;
mod slots;

pub use auto::Auto;
pub use exact::{
    Assignment, BOUND_PROBE_FACTOR, BOUND_PROBE_MOST, DEFAULT_WORK_BUDGET, EXACT_MAX_BUFFERS,
    Exact, JOINT_MAX_BUFFERS, JOINT_MAX_CHOOSERS,
};
pub use greedy::{
    BestFit, FirstFit, FirstFitByClass, GreedyByBreadth, GreedyByConflicts, GreedyBySize,
};
pub use hill_climb::HillClimb;
pub use named::{Named, UnknownName};
pub use slots::Slots;

use crate::bound::LowerBound;
use crate::problem::Problem;
use crate::solution::{PlanError, Solution};

/// A memory planning algorithm: the RFC's
/// `Map<BufferInfo, PoolAllocation> (*foo)(Array<BufferInfo>, memory_pressure)`.
///
/// Implementations place every buffer of `problem` in one of its candidate pools. They
/// need not check their own work: [`plan`](crate::plan()) verifies every solution.
///
/// ```
/// use usmp_core::{Algorithm, Allocation, LowerBound, PlanError, Problem, Solution};
///
/// /// Puts every buffer at its own offset in its first pool: valid, never small.
/// struct Stack;
///
/// impl Algorithm for Stack {
///     fn name(&self) -> &str {
///         "stack"
///     }
///     fn allocate(&self, problem: &Problem, _: &LowerBound) -> Result<Solution, PlanError> {
///         let mut next = vec![0u64; problem.pools().len()];
///         let allocations = problem
///             .buffers()
///             .iter()
///             .enumerate()
///             .map(|(i, b)| {
///                 let pool = b.candidates[0];
///                 let align = problem.alignment_in(i, pool);
///                 let offset = next[pool].next_multiple_of(align);
///                 next[pool] = offset + b.size;
///                 Allocation { pool, offset }
///             })
///             .collect();
///         Ok(Solution::new(allocations))
///     }
/// }
///
/// let problem = usmp_core::input::parse_csv("id,lower,upper,size\na,0,2,8\nb,1,3,8\n", "x.csv", None)?;
/// let plan = usmp_core::plan(&problem, &Stack)?;
/// assert_eq!(plan.pool_sizes, vec![16]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Algorithm {
    /// The name shown in plans and reports.
    fn name(&self) -> &str;

    /// Places every buffer. `lower_bound` is the RFC's memory pressure: an algorithm may
    /// stop searching once it reaches it.
    fn allocate(&self, problem: &Problem, lower_bound: &LowerBound) -> Result<Solution, PlanError>;
}
