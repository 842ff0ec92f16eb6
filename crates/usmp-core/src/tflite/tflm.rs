//! A verified plan for TensorFlow Lite Micro's own arena, as an offline plan.
//!
//! TFLite Micro plans the tensors of its non-persistent arena area (the head) at run time
//! unless the model carries offline offsets. This plans them ahead of time with TFLite
//! Micro's rules: one arena, every tensor size rounded up to 16 bytes and placed at a
//! multiple of 16, lifetimes as `micro_allocation_info.cc` marks them (the liveness of
//! [`crate::liveness`] is the same or longer, so a plan valid here is valid there).
//!
//! Which tensors get an offset: the activations of subgraph 0 that TFLite Micro places in
//! the head. Everything it keeps elsewhere gets -1: constants (they stay in the model),
//! variables (TFLite Micro gives them persistent memory when their offset is -1), tensors
//! of size 0 and tensors no operator touches, and every tensor of the other subgraphs
//! (usmp plans subgraph 0, one straight-line program).
//!
//! Kernel scratch is not a tensor: TFLite Micro places it at run time, around the offline
//! offsets, with its greedy planner (largest first, each at the lowest gap free during its
//! call). Its sizes depend on the kernel library, so they come from scratch rules, as for
//! usmp's own kernels. Given them, the tensors are planned together with the scratch, so
//! the plan leaves a hole where each scratch fits, and [`TflmPlan::head`] replays TFLite
//! Micro's placement of the scratch around the written offsets: the head TFLite Micro will
//! use. Scratch left out of the rules is placed by TFLite Micro all the same, above or
//! between the planned tensors, so the head grows by up to its size.

use std::fmt;

use super::flatbuffer::Table;
use super::offline::{OfflinePlan, WithOfflinePlan, write_offline_plan};
use super::{TfliteError, corrupt, read_tflite};
use crate::algo::Algorithm;
use crate::liveness::{self, Liveness, Options, Origin, ScratchRule};
use crate::model::{Model, ModelError, Role};
use crate::plan::Plan;
use crate::problem::Pool;
use crate::solution::PlanError;

/// TFLite Micro's arena alignment (`MicroArenaBufferAlignment()`).
pub const TFLM_ALIGNMENT: u64 = 16;

/// A model planned for TFLite Micro's arena, with its plan written into a copy.
#[derive(Clone, Debug)]
pub struct TflmPlan {
    /// The model as read.
    pub model: Model,
    /// Its liveness: pool 0 is the arena head, pool 1 the model's constants.
    pub liveness: Liveness,
    /// The verified plan.
    pub plan: Plan,
    /// The offsets written, one per tensor of every subgraph.
    pub offline: OfflinePlan,
    /// The copy of the model holding the plan.
    pub written: WithOfflinePlan,
    /// Bytes of the arena head TFLite Micro will use: the planned tensors, and the scratch
    /// of the rules where its planner will put it (TFLite Micro adds its persistent tail,
    /// and any scratch the rules leave out).
    pub head: u64,
}

impl TflmPlan {
    /// Bytes of the arena head the planned tensors reach.
    pub fn tensors_head(&self) -> u64 {
        let buffers = self.liveness.problem.buffers();
        self.plan
            .allocations
            .iter()
            .zip(buffers)
            .zip(&self.liveness.origins)
            .filter(|((a, _), o)| a.pool == 0 && matches!(o, Origin::Tensors(_)))
            .map(|((a, b), _)| a.offset + b.size)
            .max()
            .unwrap_or(0)
    }

    /// How many tensors have an offset (the rest are -1).
    pub fn planned(&self) -> usize {
        self.offline.offsets.iter().filter(|&&o| o >= 0).count()
    }
}

/// Why a model could not be planned for TFLite Micro.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TflmError {
    /// The file could not be read or written.
    Tflite(TfliteError),
    /// The model could not be lowered to a planning problem.
    Model(ModelError),
    /// No verified plan was found.
    Plan(PlanError),
}

impl fmt::Display for TflmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TflmError::Tflite(e) => e.fmt(f),
            TflmError::Model(e) => e.fmt(f),
            TflmError::Plan(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for TflmError {}

impl From<TfliteError> for TflmError {
    fn from(e: TfliteError) -> Self {
        TflmError::Tflite(e)
    }
}

/// The pools of TFLite Micro's arena: the head, and the constants that stay in the model.
pub fn tflm_pools() -> Vec<Pool> {
    vec![
        Pool::workspace("arena").with_alignment(TFLM_ALIGNMENT),
        Pool::constant("model").with_alignment(TFLM_ALIGNMENT),
    ]
}

/// Plans `bytes`, a `.tflite` file, for TFLite Micro's arena with `algorithm`, and writes
/// the plan into a copy of the file (replacing an offline plan it had). `scratch` gives the
/// scratch TFLite Micro's kernels request (module docs); `name` names the model in
/// messages. The plan is verified, and the copy read back, before this returns.
pub fn plan_for_tflm(
    bytes: &[u8],
    name: &str,
    algorithm: &dyn Algorithm,
    scratch: &[ScratchRule],
) -> Result<TflmPlan, TflmError> {
    let model = read_tflite(bytes, name)?;
    let options = Options {
        io_in_pools: true,
        state_in_pools: false,
        size_granularity: TFLM_ALIGNMENT,
        alignment: TFLM_ALIGNMENT,
        scratch: scratch.to_vec(),
    };
    let liveness = liveness::analyse(&model, &tflm_pools(), &options).map_err(TflmError::Model)?;
    let plan = crate::plan::plan(&liveness.problem, algorithm).map_err(TflmError::Plan)?;
    let offline = offsets(bytes, &model, &liveness, &plan)?;
    let written = write_offline_plan(bytes, &offline)?;
    let head = replay_head(&liveness, &plan);
    Ok(TflmPlan {
        model,
        liveness,
        plan,
        offline,
        written,
        head,
    })
}

/// One buffer for TFLite Micro's greedy planner: bytes, first and last scope in use
/// (inclusive; call `i` is scope `i + 1`), and the offline offset if it has one.
struct Request {
    size: u64,
    first: u64,
    last: u64,
    offline: Option<u64>,
}

/// The head TFLite Micro's `GreedyMemoryPlanner` ends with when the planned tensors have
/// their offline offsets and the scratch is planned at run time, replayed step for step:
/// offline buffers first, at their offsets; then the others largest first (equal sizes
/// latest-requested first, as its reverse fill and stable sort leave them), each at the
/// first gap, in offset order, between the placed buffers that share a scope with it.
fn replay_head(l: &Liveness, plan: &Plan) -> u64 {
    let buffers = l.problem.buffers();
    let mut offline = Vec::new();
    let mut online = Vec::new();
    for ((b, a), origin) in buffers.iter().zip(&plan.allocations).zip(&l.origins) {
        let Some(live) = b.live.filter(|_| a.pool == 0) else {
            continue;
        };
        let request = |offline| Request {
            size: b.size,
            first: live.start + 1,
            last: live.end,
            offline,
        };
        match origin {
            Origin::Tensors(_) => offline.push(request(Some(a.offset))),
            Origin::Scratch { .. } => online.push(request(None)),
        }
    }
    online.reverse();
    online.sort_by_key(|r| std::cmp::Reverse(r.size));

    // Placed buffers with their offsets, in offset order; a new entry goes after those at
    // its offset, as in TFLite Micro's list.
    let mut placed: Vec<(u64, Request)> = Vec::new();
    for r in offline.into_iter().chain(online) {
        let offset = match r.offline {
            Some(o) => o,
            None => {
                let mut at = 0;
                for (o, p) in &placed {
                    if p.first > r.last || r.first > p.last {
                        continue;
                    }
                    if *o >= at && o - at >= r.size {
                        break;
                    }
                    at = at.max(o + p.size);
                }
                at
            }
        };
        let k = placed.partition_point(|(o, _)| *o <= offset);
        placed.insert(k, (offset, r));
    }
    placed.iter().map(|(o, r)| o + r.size).max().unwrap_or(0)
}

/// One offset per tensor of every subgraph: the plan's for subgraph 0's planned
/// activations, -1 for the rest.
fn offsets(
    bytes: &[u8],
    model: &Model,
    liveness: &Liveness,
    plan: &Plan,
) -> Result<OfflinePlan, TfliteError> {
    let counts = subgraph_tensor_counts(bytes)?;
    // Each tensor takes at least a 4-byte offset in the file: a larger total is corrupt,
    // and refusing it bounds the allocation below.
    let total = counts
        .iter()
        .try_fold(0usize, |a, &c| a.checked_add(c))
        .filter(|&t| t <= bytes.len())
        .ok_or_else(|| TfliteError::Corrupt {
            context: "the subgraph list".into(),
            detail: "its tensor counts add up to more than the file can hold".into(),
        })?;
    let mut offsets = vec![-1i32; total];
    for (t, tensor) in model.tensors.iter().enumerate() {
        if !matches!(tensor.role, Role::Activation) {
            continue;
        }
        let Some(a) = liveness.tensor_allocation(plan, t) else {
            continue;
        };
        offsets[t] = i32::try_from(a.offset).map_err(|_| TfliteError::Unsupported {
            context: format!("tensor {t} \"{}\"", tensor.name),
            detail: format!(
                "its offset {} does not fit the offline plan's 32-bit words",
                a.offset
            ),
        })?;
    }
    Ok(OfflinePlan {
        subgraphs: i32::try_from(counts.len()).unwrap_or(i32::MAX),
        offsets,
    })
}

/// How many tensors each subgraph has.
fn subgraph_tensor_counts(bytes: &[u8]) -> Result<Vec<usize>, TfliteError> {
    let root = Table::root(bytes).map_err(corrupt(|| "the model".into()))?;
    let Some(list) = root
        .vector(2)
        .map_err(corrupt(|| "the subgraph list".into()))?
    else {
        return Ok(Vec::new());
    };
    (0..list.len())
        .map(|k| {
            let ctx = || format!("subgraph {k}");
            let sub = list.table(k).map_err(corrupt(ctx))?;
            Ok(sub.vector(0).map_err(corrupt(ctx))?.map_or(0, |v| v.len()))
        })
        .collect()
}
