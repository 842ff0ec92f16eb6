//! # usmp-core: Unified Static Memory Planning
//!
//! The planning engine of [usmp](https://github.com/usmp-rs/usmp), after the Unified
//! Static Memory Planning RFC for Apache TVM. A microcontroller running a neural network
//! has a few memories of different speed and size; every buffer the program needs is
//! known at compile time. This crate gives each buffer a pool and an offset so that
//! buffers live at the same time never share bytes, every pool stays within its limit,
//! and the pools are as small as the algorithm can make them.
//!
//! The flow is one way, each step a plain function over plain data:
//!
//! 1. Describe a [`Problem`]: [`Pool`]s (workspace or constant, optional size limit,
//!    alignment) and [`Buffer`]s (size, alignment, candidate pools in preference order,
//!    and either a live range or explicit conflicts). [`input`] reads the benchmark CSV
//!    format and the RFC-shaped JSON problem.
//! 2. Pick an [`Algorithm`] (built in: [`GreedyBySize`], [`GreedyByConflicts`],
//!    [`FirstFit`], [`BestFit`], [`GreedyByBreadth`], [`FirstFitByClass`], [`HillClimb`],
//!    [`Exact`], [`Auto`]; or your own) and call [`plan()`].
//! 3. [`plan()`] runs the algorithm, checks its result with the independent
//!    [`verify`](verify::verify) and reports it with a [`LowerBound`]. A failed check is
//!    an error, never a silently wrong plan.
//! 4. [`report`] shows the plan as a table, JSON or an SVG memory map.
//!
//! ```
//! use usmp_core::{Buffer, GreedyBySize, Pool, Problem};
//!
//! let mut problem = Problem::builder();
//! let dtcm = problem.pool(Pool::workspace("dtcm").with_limit(64).with_alignment(16));
//! let sram = problem.pool(Pool::workspace("sram").with_alignment(16));
//! // Three activations of a chain of operators: a feeds b feeds c.
//! let a = problem.buffer(Buffer::new("a", 48).with_candidates([dtcm, sram]));
//! let b = problem.buffer(Buffer::new("b", 32).with_candidates([dtcm, sram]));
//! let c = problem.buffer(Buffer::new("c", 16).with_candidates([dtcm, sram]));
//! problem.conflict(a, b);
//! problem.conflict(b, c);
//! let problem = problem.build()?;
//!
//! let plan = usmp_core::plan(&problem, &GreedyBySize)?;
//! // a (48 bytes) fills dtcm; b conflicts with it and falls back to sram; c reuses a's bytes.
//! assert_eq!(plan.allocations[a].pool, dtcm);
//! assert_eq!(plan.allocations[b].pool, sram);
//! assert_eq!((plan.allocations[c].pool, plan.allocations[c].offset), (dtcm, 0));
//! assert_eq!(plan.pool_sizes, vec![48, 32]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Models
//!
//! Usually the buffers come from a model: a `.tflite` file ([`tflite`]) or usmp's JSON
//! model IR ([`input::parse_model`], documented in docs/cli.md), both read into a
//! [`model::Model`] of operator calls, tensors and scratch. [`liveness::analyse`] turns a
//! model and its pools into one problem holding the tensors between operators and the
//! scratch inside them together, each with its live range and the pools its targets can
//! reach; the [`Liveness`](liveness::Liveness) it returns maps every buffer back to its
//! tensors and builds the constant pools' bytes.
//!
//! ```
//! use std::path::Path;
//! use usmp_core::input::{PoolsFile, lower, parse_model};
//! use usmp_core::HillClimb;
//!
//! // x -> conv (with 64 bytes of scratch) -> y -> relu -> z
//! let text = r#"{
//!   "tensors": [{"name": "x", "size_bytes": 100}, {"name": "y", "size_bytes": 200},
//!               {"name": "w", "kind": "constant", "data": [1, 2, 3]},
//!               {"name": "z", "size_bytes": 50}],
//!   "inputs": ["x"], "outputs": ["z"],
//!   "calls": [
//!     {"op": "conv", "reads": ["x", "w"], "writes": ["y"],
//!      "scratch": [{"name": "im2col", "size_bytes": 64}]},
//!     {"op": "relu", "reads": ["y"], "writes": ["z"]}]}"#;
//! let model = parse_model(text, "tiny.json", Path::new("."))?;
//! let liveness = lower(&model, &PoolsFile::default())?;
//! let plan = usmp_core::plan(&liveness.problem, &HillClimb::default())?;
//! // During conv: x (112 after rounding to 16) + y (208) + im2col (64) = 384 bytes.
//! assert_eq!(plan.pool_sizes, vec![384, 16]);
//! assert!(plan.optimal);
//! let z = liveness.tensor_allocation(&plan, 3).unwrap();
//! assert_eq!(liveness.problem.pools()[z.pool].name, "workspace");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Differences from TVM's implementation
//!
//! The built-in algorithms keep TVM's orders and placement rules but not its defects:
//! conflicts are symmetric (a conflict listed on either buffer counts), a pool that failed
//! for a buffer is never taken back, duplicate conflicts are merged, a buffer's own
//! alignment is applied to its offset, and hill climbing draws from a fixed-seed
//! generator under a work budget, so it gives the same plan on every machine.
//!
//! For live-range problems the greedy placements use segment trees over time instead of
//! scanning every placed buffer, so `greedy_by_size` plans 62,185 buffers in a fraction
//! of a second.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod algo;
mod bound;
pub mod file;
pub mod input;
pub mod liveness;
pub mod model;
pub mod order;
mod parallel;
mod plan;
mod problem;
pub mod report;
pub mod shared;
mod solution;
pub mod tflite;
pub mod traffic;
pub mod verify;

// The integration tests' generator, so unit tests draw from the same one.
#[cfg(test)]
#[path = "../tests/common/rng.rs"]
mod test_rng;

pub use algo::{
    Algorithm, Assignment, Auto, BOUND_PROBE_FACTOR, BOUND_PROBE_MOST, BestFit,
    DEFAULT_WORK_BUDGET, EXACT_MAX_BUFFERS, Exact, FirstFit, FirstFitByClass, GreedyByBreadth,
    GreedyByConflicts, GreedyBySize, HillClimb, JOINT_MAX_BUFFERS, JOINT_MAX_CHOOSERS, Named,
    Slots,
};
pub use bound::LowerBound;
pub use plan::{Plan, plan};
pub use problem::{
    Buffer, Conflicts, Field, Live, Locus, Overlap, Pool, PoolKind, Problem, ProblemBuilder,
    ProblemError, ProblemErrorKind,
};
pub use solution::{Allocation, Attempt, PlanError, Solution, Violation, pool_sizes, share_bytes};
