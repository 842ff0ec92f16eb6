//! Several models sharing the workspace pools (RFC U2). Each is planned on its own and a
//! pool is sized for the largest. That is right for activations, which die before the
//! model returns, and wrong for state (SVDF or LSTM memory), which must survive while
//! *another* model runs in the same bytes.
//!
//! So when several models share the pools and any has state, [`keep_state_apart`] plans
//! their workspace buffers again together, on one timeline: model 0's calls, then model
//! 1's, and so on, with every state buffer live over the whole of it. Activations of
//! different models never live at the same time, so they still share bytes; state overlaps
//! nothing of any model. It stays a live-range problem, so every algorithm plans it as
//! fast as one model.

use std::fmt;

use crate::algo::Algorithm;
use crate::liveness::Liveness;
use crate::model::Model;
use crate::plan::{Plan, plan};
use crate::problem::{Overlap, Pool, PoolKind, Problem, ProblemError};
use crate::solution::{PlanError, Violation};
use crate::verify::verify;

/// One model of several sharing the workspace: what it is, and its plan, which
/// [`keep_state_apart`] may rewrite.
#[derive(Debug)]
pub struct SharedModel<'a> {
    /// The model's name, for buffer names and errors.
    pub name: &'a str,
    /// The model.
    pub model: &'a Model,
    /// Its problem, over the shared pools, and the way back to tensors.
    pub liveness: &'a Liveness,
    /// Its verified plan.
    pub plan: &'a mut Plan,
}

/// Why the models' state could not be kept apart.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SharedError {
    /// A workspace buffer without a live range: the models' problems are not from
    /// [`liveness`](crate::liveness), which gives every one a range.
    NoLiveRange {
        /// The model.
        model: String,
        /// The buffer.
        buffer: String,
    },
    /// The joint problem is malformed (the models' pools differ).
    Problem(ProblemError),
    /// No plan of the joint timeline was found.
    Plan(PlanError),
    /// The joint plan, cut back to one model, fails that model's own rules (a bug).
    Invalid {
        /// The model.
        model: String,
        /// What the verifier found.
        violations: Vec<Violation>,
    },
}

impl fmt::Display for SharedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SharedError::NoLiveRange { model, buffer } => {
                write!(f, "model `{model}`: buffer `{buffer}` has no live range")
            }
            SharedError::Problem(e) => write!(f, "{e}"),
            SharedError::Plan(e @ PlanError::NoFit { .. }) => write!(
                f,
                "the models' persistent state must not share bytes with any model's buffers, \
                 and together they do not fit: {e}"
            ),
            SharedError::Plan(e) => write!(f, "{e}"),
            SharedError::Invalid { model, violations } => write!(
                f,
                "model `{model}`: the joint plan of state fails verification: {} violation(s)",
                violations.len()
            ),
        }
    }
}

impl std::error::Error for SharedError {}

/// Re-plans the workspace buffers of `models` together with `algorithm` when more than
/// one model shares the pools and any has state; leaves them as they are otherwise. Every
/// model's problem must be over `pools`. The rewritten per-model plans are verified again,
/// each against its own problem.
pub fn keep_state_apart(
    pools: &[Pool],
    models: &mut [SharedModel<'_>],
    algorithm: &dyn Algorithm,
) -> Result<(), SharedError> {
    if models.len() < 2 || !models.iter().any(|m| m.liveness.has_state(m.model)) {
        return Ok(());
    }
    let (problem, owners) = joint_problem(pools, models)?;
    let joint = plan(&problem, algorithm).map_err(SharedError::Plan)?;
    for (&(k, b), a) in owners.iter().zip(&joint.allocations) {
        models[k].plan.allocations[b] = *a;
    }
    for m in models.iter_mut() {
        let problem = &m.liveness.problem;
        // The joint plan was verified; each model's share must pass on its own too.
        verify(problem, &m.plan.allocations).map_err(|violations| SharedError::Invalid {
            model: m.name.to_string(),
            violations,
        })?;
        m.plan.recheck(problem);
        m.plan.algorithm = format!(
            "{}, state kept apart by {}",
            m.plan.algorithm, joint.algorithm
        );
    }
    Ok(())
}

/// The models' workspace buffers on one timeline, state live over all of it, and the
/// (model, buffer) each joint buffer came from.
fn joint_problem(
    pools: &[Pool],
    models: &[SharedModel<'_>],
) -> Result<(Problem, Vec<(usize, usize)>), SharedError> {
    let horizon: u64 = models
        .iter()
        .map(|m| m.model.calls.len().max(1) as u64)
        .sum();
    let mut builder = Problem::builder();
    for p in pools {
        builder.pool(p.clone());
    }
    let mut owners = Vec::new();
    let mut from = 0u64;
    for (k, m) in models.iter().enumerate() {
        // Each of the model's buffers' index in the joint problem, for its overlaps.
        let mut joint_index = vec![None; m.liveness.problem.buffers().len()];
        for (b, buffer) in m.liveness.problem.buffers().iter().enumerate() {
            if buffer.kind != PoolKind::Workspace {
                continue;
            }
            joint_index[b] = Some(owners.len());
            let live = buffer.live.ok_or_else(|| SharedError::NoLiveRange {
                model: m.name.to_string(),
                buffer: buffer.name.clone(),
            })?;
            let (start, end) = if m.liveness.holds_state(m.model, b) {
                (0, horizon)
            } else {
                (from + live.start, from + live.end)
            };
            let mut joint = buffer.clone().with_live(start, end);
            joint.name = format!("{}::{}", m.name, buffer.name);
            builder.buffer(joint);
            owners.push((k, b));
        }
        // Outputs written over the inputs they consume, as within the model alone.
        for o in m.liveness.problem.overlaps() {
            if let (Some(output), Some(input)) = (joint_index[o.output], joint_index[o.input]) {
                builder.overlap(Overlap {
                    output,
                    input,
                    shifts: o.shifts,
                });
            }
        }
        from += m.model.calls.len().max(1) as u64;
    }
    let problem = builder.build().map_err(SharedError::Problem)?;
    Ok((problem, owners))
}
