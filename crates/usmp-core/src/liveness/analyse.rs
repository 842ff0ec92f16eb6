//! The analysis itself: tensors and scratch of a model to buffers with live ranges and
//! candidate pools, checked against the pools' targets.

use std::collections::{BTreeMap, BTreeSet};

use super::{CallSelector, LeftOut, Liveness, Omission, Options, Origin};
use crate::model::{
    CallField, Model, ModelError, ModelErrorKind, ModelLocus, Role, Scratch, Size, TensorField,
};
use crate::problem::{Buffer, Locus, Overlap, Pool, PoolKind, Problem};

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

impl Pending {
    /// Widens this buffer to hold tensor `t` too, written in place over it: the larger
    /// size and alignment, both live ranges, every target.
    fn absorb(
        &mut self,
        t: usize,
        name: &str,
        (size, alignment): (u64, u64),
        live: (u64, u64),
        targets: &BTreeSet<String>,
    ) {
        self.size = self.size.max(size);
        self.alignment = self.alignment.max(alignment);
        self.live = (self.live.0.min(live.0), self.live.1.max(live.1));
        self.targets.extend(targets.iter().cloned());
        self.name = format!("{}+{name}", self.name);
        if let Origin::Tensors(members) = &mut self.origin {
            members.push(t);
        }
    }
}

/// Lowers `model` to a problem over `pools` (in preference order).
pub fn analyse(model: &Model, pools: &[Pool], options: &Options) -> Result<Liveness, ModelError> {
    model.check()?;
    let scratch = scratch_per_call(model, options)?;
    check_targets(model, pools)?;
    let uses = Uses::of(model);
    let mut left_out = Vec::new();
    let mut pending: Vec<Pending> = Vec::new();
    let mut tensor_buffers: Vec<Option<usize>> = vec![None; model.tensors.len()];
    let mut group = uses.group.clone();
    for t in uses.roots_first() {
        let tensor = &model.tensors[t];
        let omit = |reason| LeftOut {
            name: tensor.name.clone(),
            reason,
        };
        let (kind, live) = match placement(model, &uses, options, t) {
            Ok(placed) => placed,
            Err(reason) => {
                left_out.push(omit(reason));
                continue;
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
        let alignment = tensor.alignment.unwrap_or(options.alignment);
        let root = find(&mut group, t);
        if root != t
            && let Some(b) = tensor_buffers[root]
        {
            // Written in place: widen the input's buffer to cover this tensor too.
            pending[b].absorb(t, &tensor.name, (size, alignment), live, &uses.targets[t]);
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
            targets: uses.targets[t].clone(),
            origin: Origin::Tensors(vec![t]),
            locus: ModelLocus::Tensor(t, TensorField::Name),
        });
    }
    scratch_buffers(model, &scratch, options, &mut pending, &mut left_out)?;
    let problem = build_problem(model, pools, &pending, &uses.first_user, &tensor_buffers)?;
    Ok(Liveness {
        problem,
        origins: pending.into_iter().map(|p| p.origin).collect(),
        tensor_buffers,
        steps: model
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{i} {} ({})", c.op, c.target))
            .collect(),
        left_out,
        scratch,
    })
}

/// Who uses each tensor: its in-place group, the calls that produce and last read it,
/// the targets that touch it and the first call that does.
struct Uses {
    /// In-place outputs join their input's group; a group is one buffer.
    group: Vec<usize>,
    producers: Vec<Option<usize>>,
    last: Vec<Option<usize>>,
    targets: Vec<BTreeSet<String>>,
    first_user: Vec<Option<usize>>,
}

impl Uses {
    /// Every tensor, group roots first, so an in-place output always finds its input's
    /// buffer.
    fn roots_first(&self) -> Vec<usize> {
        let mut group = self.group.clone();
        let n = group.len();
        let roots: Vec<bool> = (0..n).map(|t| find(&mut group, t) == t).collect();
        (0..n)
            .filter(|&t| roots[t])
            .chain((0..n).filter(|&t| !roots[t]))
            .collect()
    }

    fn of(model: &Model) -> Uses {
        let n = model.tensors.len();
        let mut group: Vec<usize> = (0..n).collect();
        for call in &model.calls {
            for ip in &call.in_place {
                let root = find(&mut group, ip.input);
                group[ip.output] = root;
            }
        }
        let mut targets: Vec<BTreeSet<String>> = vec![BTreeSet::new(); n];
        let mut first_user: Vec<Option<usize>> = vec![None; n];
        for (i, call) in model.calls.iter().enumerate() {
            for &t in call.reads.iter().chain(&call.writes) {
                targets[t].insert(call.target.clone());
                first_user[t].get_or_insert(i);
            }
        }
        Uses {
            group,
            producers: model.producers(),
            last: model.last_readers(),
            targets,
            first_user,
        }
    }
}

/// Tensor `t`'s kind of pool and live range, or why it is left out of the plan.
fn placement(
    model: &Model,
    uses: &Uses,
    options: &Options,
    t: usize,
) -> Result<(PoolKind, (u64, u64)), Omission> {
    let horizon = model.calls.len().max(1) as u64;
    let is_io = model.inputs.contains(&t) || model.outputs.contains(&t);
    let (producer, last) = (uses.producers[t], uses.last[t]);
    let used = producer.is_some() || last.is_some();
    match model.tensors[t].role {
        Role::Constant(_) if !used => Err(Omission::Unused),
        Role::Constant(_) => Ok((PoolKind::Constant, (0, horizon))),
        Role::State if !options.state_in_pools => Err(Omission::Persistent),
        Role::State => Ok((PoolKind::Workspace, (0, horizon))),
        Role::Activation if is_io && !options.io_in_pools => Err(Omission::External),
        Role::Activation if !used && !is_io => Err(Omission::Unused),
        Role::Activation => {
            let start = match producer {
                Some(p) if !model.inputs.contains(&t) => p as u64,
                _ => 0,
            };
            let end = if model.outputs.contains(&t) {
                horizon
            } else {
                match (last, producer) {
                    (Some(r), _) => r as u64 + 1,
                    (None, Some(p)) => p as u64 + 1,
                    (None, None) => horizon,
                }
            };
            Ok((PoolKind::Workspace, (start, end)))
        }
    }
}

/// Each call's scratch as a buffer live during that call only.
fn scratch_buffers(
    model: &Model,
    scratch: &[Vec<Scratch>],
    options: &Options,
    pending: &mut Vec<Pending>,
    left_out: &mut Vec<LeftOut>,
) -> Result<(), ModelError> {
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
    Ok(())
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

/// The pools of `p`'s kind, in order, that every target touching it can access; an error
/// naming the call (one target) or the targets (several) when there is none.
fn candidates(
    model: &Model,
    pools: &[Pool],
    p: &Pending,
    first_user: &[Option<usize>],
) -> Result<Vec<usize>, ModelError> {
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
    if !candidates.is_empty() {
        return Ok(candidates);
    }
    if p.targets.len() == 1 {
        let target = p.targets.first().cloned().unwrap_or_default();
        let call = match &p.origin {
            Origin::Scratch { call, .. } => *call,
            Origin::Tensors(ts) => ts.iter().filter_map(|&t| first_user[t]).min().unwrap_or(0),
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
    Err(err(ModelErrorKind::NoSharedPool {
        buffer: p.name.clone(),
        targets: p.targets.iter().cloned().collect(),
    }))
}

/// Each call's overlaps between the buffers of its tensors; a tensor left out of the plan
/// (an external model input) shares nothing.
fn overlaps(model: &Model, pending: &[Pending], tensor_buffers: &[Option<usize>]) -> Vec<Overlap> {
    let mut found = Vec::new();
    for o in model.calls.iter().flat_map(|c| &c.overlaps) {
        if let (Some(output), Some(input)) = (tensor_buffers[o.output], tensor_buffers[o.input]) {
            let mut shifts = o.shifts;
            // A window down to where the tensors' bytes stop meeting goes on down to where
            // their buffers' do: the bytes a buffer rounds its tensor up with are not the
            // tensor's, and the call writes none of them.
            if let Size::Bytes(tensor) = model.tensors[o.output].size
                && shifts[0] <= 1 - tensor as i64
            {
                shifts[0] = shifts[0].min(1 - pending[output].size as i64);
            }
            found.push(Overlap {
                output,
                input,
                shifts,
            });
        }
    }
    found
}

fn build_problem(
    model: &Model,
    pools: &[Pool],
    pending: &[Pending],
    first_user: &[Option<usize>],
    tensor_buffers: &[Option<usize>],
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
        let candidates = candidates(model, pools, p, first_user)?;
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
    for overlap in overlaps(model, pending, tensor_buffers) {
        builder.overlap(overlap);
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
