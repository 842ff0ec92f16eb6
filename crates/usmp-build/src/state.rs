//! Persistent state across models. Models share the workspace pools (RFC U2): each is
//! planned on its own and a pool is sized for the largest. That is right for activations,
//! which die before the model returns, and wrong for state (SVDF or LSTM memory, `kind =
//! "state"`), which must survive while *another* model runs in the same bytes.
//!
//! So when several models share the pools and any has state, their workspace buffers are
//! planned again together, on one timeline: model 0's calls, then model 1's, and so on,
//! with every state buffer live over the whole of it. Activations of different models
//! never live at the same time, so they still share bytes; state overlaps nothing of any
//! model. It stays a live-range problem, so every algorithm plans it as fast as one model.

use usmp_core::model::Role;
use usmp_core::{Allocation, Plan, PlanError, Pool, PoolKind, Problem, algo};

use crate::planning::PlannedModel;

/// Whether buffer `b` of `m` holds persistent state.
pub fn is_state(m: &PlannedModel, b: usize) -> bool {
    match m.liveness.origins.get(b) {
        Some(usmp_core::liveness::Origin::Tensors(ts)) => ts
            .iter()
            .any(|&t| matches!(m.model.tensors[t].role, Role::State)),
        _ => false,
    }
}

/// Whether any buffer of `m` holds persistent state.
pub fn has_state(m: &PlannedModel) -> bool {
    (0..m.liveness.problem.buffers().len()).any(|b| is_state(m, b))
}

/// Re-plans the workspace buffers of `models` together when more than one model shares
/// the pools and any has state; leaves them as they are otherwise. The per-model plans
/// are rewritten and verified again against each model's own problem.
pub fn keep_state_apart(pools: &[Pool], models: &mut [PlannedModel]) -> Result<(), String> {
    if models.len() < 2 || !models.iter().any(has_state) {
        return Ok(());
    }
    let horizon: u64 = models
        .iter()
        .map(|m| m.model.calls.len().max(1) as u64)
        .sum();
    let mut builder = Problem::builder();
    for p in pools {
        builder.pool(p.clone());
    }
    // (model, buffer) of each joint buffer, in order.
    let mut owners = Vec::new();
    let mut from = 0u64;
    for (k, m) in models.iter().enumerate() {
        for (b, buffer) in m.liveness.problem.buffers().iter().enumerate() {
            if buffer.kind != PoolKind::Workspace {
                continue;
            }
            let live = buffer.live.ok_or_else(|| {
                format!(
                    "model `{}`: buffer `{}` has no live range",
                    m.name, buffer.name
                )
            })?;
            let (start, end) = if is_state(m, b) {
                (0, horizon)
            } else {
                (from + live.start, from + live.end)
            };
            let mut joint = buffer.clone().with_live(start, end);
            joint.name = format!("{}::{}", m.name, buffer.name);
            builder.buffer(joint);
            owners.push((k, b));
        }
        from += m.model.calls.len().max(1) as u64;
    }
    let problem = builder.build().map_err(|e| e.to_string())?;
    let plan = usmp_core::plan(&problem, &algo::Auto::default()).map_err(|e| match e {
        PlanError::NoFit { .. } => format!(
            "the models' persistent state must not share bytes with any model's buffers, and together they do not fit: {e}"
        ),
        e => e.to_string(),
    })?;
    write_back(models, &owners, &plan)
}

fn write_back(
    models: &mut [PlannedModel],
    owners: &[(usize, usize)],
    joint: &Plan,
) -> Result<(), String> {
    for (&(k, b), a) in owners.iter().zip(&joint.allocations) {
        models[k].plan.allocations[b] = Allocation {
            pool: a.pool,
            offset: a.offset,
        };
    }
    for m in models.iter_mut() {
        let problem = &m.liveness.problem;
        // The joint plan was verified; each model's share must pass on its own too.
        usmp_core::verify::verify(problem, &m.plan.allocations).map_err(|v| {
            format!(
                "model `{}`: the joint plan of state fails verification: {} violation(s)",
                m.name,
                v.len()
            )
        })?;
        m.plan.recheck(problem);
        m.plan.algorithm = format!(
            "{}, state kept apart by {}",
            m.plan.algorithm, joint.algorithm
        );
    }
    Ok(())
}
