//! Holistic liveness: one planning [`Problem`] from a whole [`Model`], holding the
//! tensors between operators and the scratch inside them together (the RFC's point:
//! planning scratch per operator first and tensors second wastes memory).
//!
//! Call `i` of the model is time step `i`; live ranges are half-open `[start, end)`:
//!
//! | buffer | live |
//! |---|---|
//! | activation written by call `p`, last read by call `r` | `[p, r + 1)` |
//! | model input | from `0` |
//! | model output | to the end (the number of calls) |
//! | activation written and never read | `[p, p + 1)` |
//! | scratch of call `i` | `[i, i + 1)` |
//! | state, constants | the whole program |
//!
//! Conflicts are exactly the overlaps of these ranges. An in-place output shares one
//! buffer with the input it overwrites. A buffer's candidate pools are the configured pools
//! of its kind, in order, that every target touching it can access.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{
    CallField, Model, ModelError, ModelErrorKind, ModelLocus, Role, Scratch, Size, TensorField,
};
use crate::plan::Plan;
use crate::problem::{Buffer, Locus, Pool, PoolKind, Problem};
use crate::solution::Allocation;

/// Alignment of pools and buffers that state none in a configuration (usmp.toml,
/// `usmp_pools!`, the CLI's pools file): TVM's default, and what SIMD loads want.
/// Problem files (CSV, JSON problems) keep the RFC's 1, as their numbers are exact.
pub const DEFAULT_ALIGNMENT: u64 = 16;

/// Sizes round up to a multiple of this unless configured otherwise (TFLite Micro's 16).
pub const DEFAULT_SIZE_GRANULARITY: u64 = 16;

/// How a model becomes a problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Plan the model's inputs and outputs inside workspace pools (RFC U4). When off,
    /// the caller owns them and they are left out of the plan.
    pub io_in_pools: bool,
    /// Plan persistent state (variable tensors) inside workspace pools. When off, the
    /// runtime keeps it in memory of its own (TensorFlow Lite Micro's persistent area)
    /// and it is left out of the plan.
    pub state_in_pools: bool,
    /// Round every size up to a multiple of this (TFLite Micro uses 16). 1 keeps sizes.
    pub size_granularity: u64,
    /// Alignment of buffers that do not state their own (TVM's default is 16).
    pub alignment: u64,
    /// Scratch sizes that come from the kernel library rather than the model.
    pub scratch: Vec<ScratchRule>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            io_in_pools: true,
            state_in_pools: true,
            size_granularity: DEFAULT_SIZE_GRANULARITY,
            alignment: DEFAULT_ALIGNMENT,
            scratch: Vec::new(),
        }
    }
}

/// Which calls a [`ScratchRule`] applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallSelector {
    /// One call, by its position in execution order.
    Index(usize),
    /// Every call of this operator.
    Operator(String),
}

/// A scratch allocation added to the calls it selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScratchRule {
    /// The calls.
    pub calls: CallSelector,
    /// The allocation each of them makes.
    pub scratch: Scratch,
}

/// What a planned buffer stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Tensors (indices into [`Model::tensors`]); more than one when outputs are written
    /// in place of their inputs, in program order.
    Tensors(Vec<usize>),
    /// A scratch allocation of a call.
    Scratch {
        /// The call.
        call: usize,
        /// The scratch's name.
        name: String,
    },
}

/// Why something is not in the static plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Omission {
    /// Its size is only known at run time.
    Dynamic,
    /// A model input or output the caller owns (I/O not in pools).
    External,
    /// It has no bytes.
    Empty,
    /// No call reads or writes it.
    Unused,
    /// Persistent state the runtime keeps outside the pools (state not in pools).
    Persistent,
}

impl Omission {
    /// Its name in reports: `dynamic`, `external`, `empty`, `unused` or `persistent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Omission::Dynamic => "dynamic",
            Omission::External => "external",
            Omission::Empty => "empty",
            Omission::Unused => "unused",
            Omission::Persistent => "persistent",
        }
    }
}

/// Something the model has that the plan leaves out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut {
    /// A tensor's name, or `call N (OP): name` for scratch.
    pub name: String,
    /// Why.
    pub reason: Omission,
}

/// A model lowered to a problem, with the way back from buffers to what they stand for.
#[derive(Clone, Debug)]
pub struct Liveness {
    /// The planning problem.
    pub problem: Problem,
    /// What each buffer of the problem stands for.
    pub origins: Vec<Origin>,
    /// The buffer of each tensor, when it is planned.
    pub tensor_buffers: Vec<Option<usize>>,
    /// One label per time step (per call), e.g. `3 CONV_2D (cpu)`.
    pub steps: Vec<String>,
    /// What is not planned, and why.
    pub left_out: Vec<LeftOut>,
    /// The scratch each call makes, from the model and the scratch rules.
    pub scratch: Vec<Vec<Scratch>>,
}

impl Liveness {
    /// Workspace buffers live during `step`, in buffer order.
    pub fn live_at(&self, step: usize) -> Vec<usize> {
        let step = step as u64;
        let buffers = self.problem.buffers();
        (0..buffers.len())
            .filter(|&b| buffers[b].kind == PoolKind::Workspace)
            .filter(|&b| {
                buffers[b]
                    .live
                    .is_some_and(|l| l.start <= step && step < l.end)
            })
            .collect()
    }

    /// Whether buffer `b` holds persistent state (a tensor of [`Role::State`]), which
    /// must outlive every call of every model sharing the workspace.
    pub fn holds_state(&self, model: &Model, b: usize) -> bool {
        match self.origins.get(b) {
            Some(Origin::Tensors(ts)) => ts
                .iter()
                .any(|&t| matches!(model.tensors.get(t).map(|t| &t.role), Some(Role::State))),
            _ => false,
        }
    }

    /// Whether any buffer holds persistent state.
    pub fn has_state(&self, model: &Model) -> bool {
        (0..self.origins.len()).any(|b| self.holds_state(model, b))
    }

    /// Where a tensor went in `plan`, if it is planned.
    pub fn tensor_allocation(&self, plan: &Plan, tensor: usize) -> Option<Allocation> {
        let b = (*self.tensor_buffers.get(tensor)?)?;
        plan.allocations.get(b).copied()
    }

    /// The bytes of constant pool `pool`: every planned constant's data at its offset,
    /// zeros in between. This is what goes into flash.
    pub fn constant_image(&self, model: &Model, plan: &Plan, pool: usize) -> Vec<u8> {
        let size = plan.pool_sizes.get(pool).copied().unwrap_or(0);
        let mut image = vec![0u8; usize::try_from(size).unwrap_or(0)];
        for (t, tensor) in model.tensors.iter().enumerate() {
            let Role::Constant(data) = &tensor.role else {
                continue;
            };
            let Some(a) = self.tensor_allocation(plan, t) else {
                continue;
            };
            if a.pool != pool {
                continue;
            }
            let start = usize::try_from(a.offset).unwrap_or(usize::MAX);
            if let Some(slot) = image.get_mut(start..start.saturating_add(data.len())) {
                slot.copy_from_slice(data);
            }
        }
        image
    }
}

/// One planned buffer before it becomes a [`Buffer`].
struct Pending {
    name: String,
    size: u64,
    alignment: u64,
    kind: PoolKind,
    live: (u64, u64),
    targets: BTreeSet<String>,
    origin: Origin,
    locus: ModelLocus,
}

/// Lowers `model` to a problem over `pools` (in preference order).
pub fn analyse(model: &Model, pools: &[Pool], options: &Options) -> Result<Liveness, ModelError> {
    model.check()?;
    let horizon = model.calls.len().max(1) as u64;
    let scratch = scratch_per_call(model, options)?;
    check_targets(model, pools)?;

    let mut left_out = Vec::new();
    let mut pending: Vec<Pending> = Vec::new();
    let mut tensor_buffers = vec![None; model.tensors.len()];

    // In-place outputs join their input's group; a group is one buffer.
    let mut group: Vec<usize> = (0..model.tensors.len()).collect();
    for call in &model.calls {
        for ip in &call.in_place {
            let root = find(&mut group, ip.input);
            group[ip.output] = root;
        }
    }
    let producers = model.producers();
    let last = model.last_readers();
    let mut users: Vec<BTreeSet<String>> = vec![BTreeSet::new(); model.tensors.len()];
    let mut first_user: Vec<Option<usize>> = vec![None; model.tensors.len()];
    for (i, call) in model.calls.iter().enumerate() {
        for &t in call.reads.iter().chain(&call.writes) {
            users[t].insert(call.target.clone());
            first_user[t].get_or_insert(i);
        }
    }

    // Group roots first, so an in-place output always finds its input's buffer.
    let n = model.tensors.len();
    let roots: Vec<bool> = (0..n).map(|t| find(&mut group, t) == t).collect();
    let order = (0..n)
        .filter(|&t| roots[t])
        .chain((0..n).filter(|&t| !roots[t]));
    for t in order {
        let tensor = &model.tensors[t];
        let is_io = model.inputs.contains(&t) || model.outputs.contains(&t);
        let used = producers[t].is_some() || last[t].is_some();
        let omit = |reason| LeftOut {
            name: tensor.name.clone(),
            reason,
        };
        let (kind, live) = match tensor.role {
            Role::Constant(_) if !used => {
                left_out.push(omit(Omission::Unused));
                continue;
            }
            Role::Constant(_) => (PoolKind::Constant, (0, horizon)),
            Role::State if !options.state_in_pools => {
                left_out.push(omit(Omission::Persistent));
                continue;
            }
            Role::State => (PoolKind::Workspace, (0, horizon)),
            Role::Activation if is_io && !options.io_in_pools => {
                left_out.push(omit(Omission::External));
                continue;
            }
            Role::Activation if !used && !is_io => {
                left_out.push(omit(Omission::Unused));
                continue;
            }
            Role::Activation => {
                let start = match producers[t] {
                    Some(p) if !model.inputs.contains(&t) => p as u64,
                    _ => 0,
                };
                let end = if model.outputs.contains(&t) {
                    horizon
                } else {
                    match (last[t], producers[t]) {
                        (Some(r), _) => r as u64 + 1,
                        (None, Some(p)) => p as u64 + 1,
                        (None, None) => horizon,
                    }
                };
                (PoolKind::Workspace, (start, end))
            }
        };
        let overflow_at = ModelLocus::Tensor(t, TensorField::Size);
        let size = match planned_size(tensor.size, options, &tensor.name, overflow_at)? {
            Planned::Bytes(b) => b,
            Planned::LeftOut(reason) => {
                left_out.push(omit(reason));
                continue;
            }
        };
        let locus = ModelLocus::Tensor(t, TensorField::Name);
        let alignment = tensor.alignment.unwrap_or(options.alignment);
        let root = find(&mut group, t);
        if root != t
            && let Some(b) = tensor_buffers[root]
        {
            // Written in place: widen the input's buffer to cover this tensor too.
            let p: &mut Pending = &mut pending[b];
            p.size = p.size.max(size);
            p.alignment = p.alignment.max(alignment);
            p.live = (p.live.0.min(live.0), p.live.1.max(live.1));
            p.targets.extend(users[t].iter().cloned());
            p.name = format!("{}+{}", p.name, tensor.name);
            if let Origin::Tensors(members) = &mut p.origin {
                members.push(t);
            }
            tensor_buffers[t] = Some(b);
            continue;
        }
        tensor_buffers[t] = Some(pending.len());
        pending.push(Pending {
            name: tensor.name.clone(),
            size,
            alignment,
            kind,
            live,
            targets: users[t].clone(),
            origin: Origin::Tensors(vec![t]),
            locus,
        });
    }

    for (i, list) in scratch.iter().enumerate() {
        let call = &model.calls[i];
        for (k, s) in list.iter().enumerate() {
            let name = format!("{}: {}", model.describe_call(i), s.name);
            let locus = ModelLocus::Call(i, CallField::Scratch(k));
            let size = match planned_size(s.size, options, &name, locus)? {
                Planned::Bytes(b) => b,
                Planned::LeftOut(reason) => {
                    left_out.push(LeftOut { name, reason });
                    continue;
                }
            };
            pending.push(Pending {
                name: format!("{}@{i}", s.name),
                size,
                alignment: s.alignment.unwrap_or(options.alignment),
                kind: PoolKind::Workspace,
                live: (i as u64, i as u64 + 1),
                targets: BTreeSet::from([call.target.clone()]),
                origin: Origin::Scratch {
                    call: i,
                    name: s.name.clone(),
                },
                locus,
            });
        }
    }

    let problem = build_problem(model, pools, &pending, &first_user)?;
    let steps = (0..model.calls.len())
        .map(|i| {
            let c = &model.calls[i];
            format!("{i} {} ({})", c.op, c.target)
        })
        .collect();
    Ok(Liveness {
        problem,
        origins: pending.into_iter().map(|p| p.origin).collect(),
        tensor_buffers,
        steps,
        left_out,
        scratch,
    })
}

fn find(group: &mut [usize], mut t: usize) -> usize {
    while group[t] != t {
        group[t] = group[group[t]];
        t = group[t];
    }
    t
}

/// What a tensor or scratch size becomes in the plan.
enum Planned {
    /// Planned, with its size rounded up to the granularity.
    Bytes(u64),
    /// Not planned.
    LeftOut(Omission),
}

fn planned_size(
    size: Size,
    options: &Options,
    name: &str,
    overflow_at: ModelLocus,
) -> Result<Planned, ModelError> {
    let bytes = match size {
        Size::Dynamic => return Ok(Planned::LeftOut(Omission::Dynamic)),
        Size::Bytes(0) => return Ok(Planned::LeftOut(Omission::Empty)),
        Size::Bytes(b) => b,
    };
    bytes
        .checked_next_multiple_of(options.size_granularity.max(1))
        .map(Planned::Bytes)
        .ok_or(ModelError {
            locus: overflow_at,
            kind: ModelErrorKind::SizeOverflow {
                buffer: name.to_string(),
            },
        })
}

/// The model's own scratch plus what the rules add, per call.
fn scratch_per_call(model: &Model, options: &Options) -> Result<Vec<Vec<Scratch>>, ModelError> {
    let mut scratch: Vec<Vec<Scratch>> = model.calls.iter().map(|c| c.scratch.clone()).collect();
    for (k, rule) in options.scratch.iter().enumerate() {
        let (selector, matched): (String, Vec<usize>) = match &rule.calls {
            CallSelector::Index(i) => (
                format!("call {i}"),
                if *i < model.calls.len() {
                    vec![*i]
                } else {
                    vec![]
                },
            ),
            CallSelector::Operator(op) => (
                format!("operator \"{op}\""),
                (0..model.calls.len())
                    .filter(|&i| model.calls[i].op == *op)
                    .collect(),
            ),
        };
        let locus = ModelLocus::ScratchRule(k);
        if matched.is_empty() {
            return Err(ModelError {
                locus,
                kind: ModelErrorKind::RuleMatchesNothing {
                    selector,
                    calls: model.calls.len(),
                },
            });
        }
        for i in matched {
            if scratch[i].iter().any(|s| s.name == rule.scratch.name) {
                return Err(ModelError {
                    locus,
                    kind: ModelErrorKind::DuplicateScratch {
                        name: rule.scratch.name.clone(),
                        call: model.describe_call(i),
                    },
                });
            }
            if let Some(a) = rule.scratch.alignment
                && !a.is_power_of_two()
            {
                return Err(ModelError {
                    locus,
                    kind: ModelErrorKind::BadAlignment {
                        what: format!("scratch \"{}\"", rule.scratch.name),
                        alignment: a,
                    },
                });
            }
            scratch[i].push(rule.scratch.clone());
        }
    }
    Ok(scratch)
}

fn serves(pool: &Pool, target: &str) -> bool {
    pool.targets.is_empty() || pool.targets.iter().any(|t| t == target)
}

/// Every call's target must reach some workspace pool: said at the call, which is where
/// the user will look, rather than at whichever buffer meets it first.
fn check_targets(model: &Model, pools: &[Pool]) -> Result<(), ModelError> {
    let workspace: Vec<&Pool> = pools
        .iter()
        .filter(|p| p.kind == PoolKind::Workspace)
        .collect();
    if workspace.is_empty() {
        return Ok(());
    }
    for (i, call) in model.calls.iter().enumerate() {
        if !workspace.iter().any(|p| serves(p, &call.target)) {
            return Err(ModelError {
                locus: ModelLocus::Call(i, CallField::Target),
                kind: ModelErrorKind::TargetWithoutPool {
                    target: call.target.clone(),
                    call: model.describe_call(i),
                    kind: "workspace",
                },
            });
        }
    }
    Ok(())
}

fn build_problem(
    model: &Model,
    pools: &[Pool],
    pending: &[Pending],
    first_user: &[Option<usize>],
) -> Result<Problem, ModelError> {
    let mut builder = Problem::builder();
    for pool in pools {
        builder.pool(pool.clone());
    }
    // How often each tensor is read or written per inference, for each buffer's traffic.
    let mut accesses = vec![0u64; model.tensors.len()];
    for call in &model.calls {
        for &t in call.reads.iter().chain(&call.writes) {
            if let Some(a) = accesses.get_mut(t) {
                *a += 1;
            }
        }
    }
    let mut taken = BTreeSet::new();
    // The next suffix to try per name: 30,000 tensors of one name take linear time.
    let mut next_suffix: BTreeMap<String, usize> = BTreeMap::new();
    for p in pending {
        let err = |kind| ModelError {
            locus: p.locus,
            kind,
        };
        let of_kind: Vec<usize> = (0..pools.len())
            .filter(|&k| pools[k].kind == p.kind)
            .collect();
        if of_kind.is_empty() {
            return Err(err(ModelErrorKind::NoPoolOfKind {
                kind: p.kind.as_str(),
                buffer: p.name.clone(),
            }));
        }
        let candidates: Vec<usize> = of_kind
            .into_iter()
            .filter(|&k| p.targets.iter().all(|t| serves(&pools[k], t)))
            .collect();
        if candidates.is_empty() {
            if p.targets.len() == 1 {
                let target = p.targets.first().cloned().unwrap_or_default();
                let call = match &p.origin {
                    Origin::Scratch { call, .. } => *call,
                    Origin::Tensors(ts) => {
                        ts.iter().filter_map(|&t| first_user[t]).min().unwrap_or(0)
                    }
                };
                return Err(ModelError {
                    locus: ModelLocus::Call(call, CallField::Target),
                    kind: ModelErrorKind::TargetWithoutPool {
                        target,
                        call: model.describe_call(call),
                        kind: p.kind.as_str(),
                    },
                });
            }
            return Err(err(ModelErrorKind::NoSharedPool {
                buffer: p.name.clone(),
                targets: p.targets.iter().cloned().collect(),
            }));
        }
        // Names must be unique in a problem; `.tflite` tensor names need not be.
        let mut name = p.name.clone();
        if !taken.insert(name.clone()) {
            let n = next_suffix.entry(p.name.clone()).or_insert(2);
            loop {
                name = format!("{}#{n}", p.name);
                *n += 1;
                if taken.insert(name.clone()) {
                    break;
                }
            }
        }
        // A scratch buffer is written and read within its call; a tensor as often as the
        // calls name it, unless the model says better.
        let traffic = match &p.origin {
            Origin::Scratch { .. } => p.size.saturating_mul(2),
            Origin::Tensors(ts) => ts
                .iter()
                .map(|&t| match model.tensors.get(t).and_then(|x| x.traffic) {
                    Some(given) => given,
                    None => p.size.saturating_mul(accesses.get(t).copied().unwrap_or(0)),
                })
                .fold(0u64, u64::saturating_add),
        };
        let mut buffer = Buffer::new(name, p.size)
            .with_alignment(p.alignment)
            .with_candidates(candidates)
            .with_live(p.live.0, p.live.1)
            .with_traffic(traffic);
        buffer.kind = p.kind;
        builder.buffer(buffer);
    }
    builder.build().map_err(|e| {
        let locus = match e.locus {
            Locus::Buffer(b, _) => pending.get(b).map_or(ModelLocus::Pools, |p| p.locus),
            Locus::Pool(..) => ModelLocus::Pools,
        };
        ModelError {
            locus,
            kind: ModelErrorKind::Problem(e.to_string()),
        }
    })
}

#[cfg(test)]
mod tests;
