//! A planned model lowered to the runtime's own values: every decision the generated
//! module states is made here, once (which slot is writable, what is in place, which
//! buffer is state, the certificate `usmp::check` reads), and [`check`] runs the
//! runtime's own `check` and `check_module` on them before anything is printed. A bug
//! here is then a build error naming the model, never a const-eval panic inside the
//! user's crate. `codegen` only prints these values.

use std::collections::BTreeMap;

use usmp::{Buffer, CallInfo, ModelInfo, Op, Options, PoolInfo, Slot, Violation};
use usmp_core::PoolKind;
use usmp_core::liveness::Origin;
use usmp_core::model::Role;

use crate::planned::{LoweredCall, LoweredModel, Planned, PlannedModel, PlannedPool};

/// The buffer holding tensor `t`, if it is planned.
fn tensor_buffer(m: &PlannedModel, t: usize) -> Option<u32> {
    let b = m.liveness.tensor_buffers.get(t).copied().flatten()?;
    u32::try_from(b).ok()
}

/// Lowers `m`; `typed`: slots name their tensors (the module has a tensor table).
pub fn model(planned: &Planned, m: &PlannedModel) -> LoweredModel {
    let typed = !m.tensors.is_empty();
    let slot = |t: usize| typed.then(|| u32::try_from(t).ok()).flatten();
    let calls = (0..m.model.calls.len())
        .map(|i| call(m, i, &slot))
        .collect();
    // A constant model input is the model's own bytes in flash: not handed out to write.
    let inputs = writable(m, &m.model.inputs, &slot)
        .into_iter()
        .map(|s| match s.source {
            usmp::Source::Buffer(b) if is_constant(m, b) => Slot::ABSENT,
            _ => s,
        })
        .collect();
    let reads: Vec<Option<usize>> = m.model.outputs.iter().map(|&t| Some(t)).collect();
    let (live, live_from, constant_order) = certificate(m);
    LoweredModel {
        buffers: (0..m.liveness.problem.buffers().len())
            .map(|b| buffer(m, b))
            .collect(),
        calls,
        inputs,
        outputs: readable(m, &reads, &[], &slot),
        live,
        live_from,
        constant_order,
        images: planned
            .pools
            .iter()
            .enumerate()
            .map(|(p, pool)| match pool.kind {
                PoolKind::Workspace => 0,
                PoolKind::Constant => usize::try_from(m.plan.pool_sizes[p]).unwrap_or(usize::MAX),
            })
            .collect(),
    }
}

fn is_constant(m: &PlannedModel, b: u32) -> bool {
    m.liveness.problem.buffers()[b as usize].kind == PoolKind::Constant
}

/// Buffer `b` as the runtime states it: placed, live, the bytes it holds, state or not.
fn buffer(m: &PlannedModel, b: usize) -> Buffer {
    let planned = &m.liveness.problem.buffers()[b];
    let a = m.plan.allocations[b];
    let (start, end) = live(m, b);
    let at = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
    let new = if m.liveness.holds_state(&m.model, b) {
        Buffer::state
    } else {
        Buffer::new
    };
    // Regions are the bytes the buffer holds, not the granularity's padding.
    new(a.pool, at(a.offset), at(planned.size), start, end).holding(at(held(m, b)))
}

/// A buffer's live range in calls. Liveness gives every buffer one within the model's
/// calls (planning refuses a model without calls); `usmp::check` proves it again.
fn live(m: &PlannedModel, b: usize) -> (u32, u32) {
    let calls = u32::try_from(m.model.calls.len()).unwrap_or(u32::MAX);
    m.liveness.problem.buffers()[b]
        .live
        .map_or((0, calls), |l| {
            let at = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
            (at(l.start), at(l.end))
        })
}

/// The bytes buffer `b` holds: its largest tensor's (outputs written in place share it)
/// or its scratch's as requested; its planned size when neither is known.
fn held(m: &PlannedModel, b: usize) -> u64 {
    let planned = m.liveness.problem.buffers()[b].size;
    let exact = match &m.liveness.origins[b] {
        Origin::Tensors(tensors) => tensors
            .iter()
            .filter_map(|&t| m.model.tensors.get(t).and_then(|t| t.size.bytes()))
            .max(),
        Origin::Scratch { call, name } => m
            .liveness
            .scratch
            .get(*call)
            .and_then(|s| s.iter().find(|s| &s.name == name))
            .and_then(|s| s.size.bytes()),
    };
    exact.map_or(planned, |e| e.min(planned))
}

/// Writable slots for `tensors`: each buffer at most once (a repeat is absent), so no
/// bytes are handed out writable twice.
fn writable(
    m: &PlannedModel,
    tensors: &[usize],
    slot: &impl Fn(usize) -> Option<u32>,
) -> Vec<Slot> {
    let mut seen = Vec::new();
    tensors
        .iter()
        .map(|&t| match tensor_buffer(m, t) {
            Some(b) if seen.contains(&b) => Slot::ABSENT,
            Some(b) => {
                seen.push(b);
                Slot::buffer(b, slot(t))
            }
            None => Slot::unplanned(slot(t)),
        })
        .collect()
}

/// Read slots for `tensors`: a tensor whose buffer the call also writes is in place.
fn readable(
    m: &PlannedModel,
    tensors: &[Option<usize>],
    written: &[Slot],
    slot: &impl Fn(usize) -> Option<u32>,
) -> Vec<Slot> {
    tensors
        .iter()
        .map(|&t| {
            let Some(t) = t else {
                return Slot::ABSENT;
            };
            let Some(b) = tensor_buffer(m, t) else {
                return Slot::unplanned(slot(t));
            };
            let out = written
                .iter()
                .position(|s| s.source == usmp::Source::Buffer(b));
            match out.and_then(|o| u32::try_from(o).ok()) {
                Some(o) => Slot::in_place(o, slot(t)),
                None => Slot::buffer(b, slot(t)),
            }
        })
        .collect()
}

/// Call `i`'s operands. A state tensor the call reads it also updates: handed out
/// writable, after the outputs, with the read slot in place of it.
fn call(m: &PlannedModel, i: usize, slot: &impl Fn(usize) -> Option<u32>) -> LoweredCall {
    let c = &m.model.calls[i];
    let mut written = c.writes.clone();
    for &t in m.reads.get(i).into_iter().flatten().flatten() {
        if matches!(m.model.tensors[t].role, Role::State) && !written.contains(&t) {
            written.push(t);
        }
    }
    let outputs = writable(m, &written, slot);
    let reads = m.reads.get(i).map_or(&[][..], Vec::as_slice);
    let mut inputs = readable(m, reads, &outputs, slot);
    over(m, i, reads, &outputs, &mut inputs, slot);
    // Each scratch of the call by name, in the call's order.
    let of_call: BTreeMap<&str, u32> = m
        .liveness
        .origins
        .iter()
        .enumerate()
        .filter_map(|(b, o)| match o {
            Origin::Scratch { call, name } if *call == i => {
                Some((name.as_str(), u32::try_from(b).ok()?))
            }
            _ => None,
        })
        .collect();
    let scratch = m.liveness.scratch[i]
        .iter()
        .filter_map(|s| of_call.get(s.name.as_str()).copied())
        .collect();
    LoweredCall {
        inputs,
        outputs,
        scratch,
    }
}

/// Call `i`'s declared overlaps that the plan used: an input whose buffer meets its
/// output's shares one region with it ([`usmp::Source::Over`]). A pair placed apart stays
/// two plain slots.
fn over(
    m: &PlannedModel,
    i: usize,
    reads: &[Option<usize>],
    outputs: &[Slot],
    inputs: &mut [Slot],
    slot: &impl Fn(usize) -> Option<u32>,
) {
    for o in &m.model.calls[i].overlaps {
        let (Some(x), Some(y)) = (tensor_buffer(m, o.input), tensor_buffer(m, o.output)) else {
            continue;
        };
        let problem = &m.liveness.problem;
        let meet = usmp_core::share_bytes(problem, &m.plan.allocations, x as usize, y as usize);
        let k = reads.iter().position(|&t| t == Some(o.input));
        let out = outputs
            .iter()
            .position(|s| s.source == usmp::Source::Buffer(y));
        if let (true, Some(k), Some(out)) = (meet, k, out.and_then(|o| u32::try_from(o).ok())) {
            inputs[k] = Slot::over(x, out, slot(o.input));
        }
    }
}

/// Every buffer in (pool, offset, index) order, once; then each call's live list
/// inherits that order, so the whole certificate costs its own size.
fn certificate(m: &PlannedModel) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let buffers = m.liveness.problem.buffers();
    let mut order: Vec<usize> = (0..buffers.len()).collect();
    order.sort_by_key(|&b| (m.plan.allocations[b].pool, m.plan.allocations[b].offset, b));
    let index = |b: &usize| u32::try_from(*b).unwrap_or(u32::MAX);
    let mut per_call: Vec<Vec<u32>> = vec![Vec::new(); m.model.calls.len()];
    for &b in order
        .iter()
        .filter(|&&b| buffers[b].kind == PoolKind::Workspace)
    {
        let (start, end) = live(m, b);
        for list in per_call.iter_mut().take(end as usize).skip(start as usize) {
            list.push(index(&b));
        }
    }
    let mut from = vec![0u32];
    let mut live = Vec::new();
    for list in per_call {
        live.extend(list);
        from.push(u32::try_from(live.len()).unwrap_or(u32::MAX));
    }
    let constants = order
        .iter()
        .filter(|&&b| buffers[b].kind == PoolKind::Constant)
        .map(index)
        .collect();
    (live, from, constants)
}

/// The runtime's description of pool `p`, as the generated `POOLS` states it.
pub fn pool_info(p: &PlannedPool) -> PoolInfo<'_> {
    let at = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
    PoolInfo {
        name: &p.name,
        kind: match p.kind {
            PoolKind::Workspace => usmp::PoolKind::Workspace,
            PoolKind::Constant => usmp::PoolKind::Constant,
        },
        size: at(p.size),
        alignment: at(p.alignment),
        section: &p.section,
        loaded: p.load.is_some(),
    }
}

/// Which model the runtime's check refused, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The model (index into `Planned::models`); `None`: the models together
    /// (`check_module`).
    pub model: Option<usize>,
    /// What the check found.
    pub violation: Violation,
}

/// Runs the runtime's `check` on every lowered model and `check_module` on them
/// together, exactly as the generated module's `const` items will.
pub fn check(planned: &Planned) -> Result<(), Refused> {
    let pools: Vec<PoolInfo<'_>> = planned.pools.iter().map(pool_info).collect();
    let calls: Vec<Vec<CallInfo<'_>>> = planned
        .models
        .iter()
        .map(|m| {
            m.lowered
                .calls
                .iter()
                .map(|c| CallInfo {
                    // Operators and options are not the plan's: `check` reads neither.
                    op: Op::Named(""),
                    options: Options::None,
                    inputs: &c.inputs,
                    outputs: &c.outputs,
                    scratch: &c.scratch,
                })
                .collect()
        })
        .collect();
    let infos: Vec<ModelInfo<'_>> = planned
        .models
        .iter()
        .zip(&calls)
        .map(|(m, calls)| {
            let l = &m.lowered;
            ModelInfo {
                name: &m.name,
                buffers: &l.buffers,
                calls,
                inputs: &l.inputs,
                outputs: &l.outputs,
                tensors: &[],
                live: &l.live,
                live_from: &l.live_from,
                constant_order: &l.constant_order,
                images: &l.images,
            }
        })
        .collect();
    for (k, info) in infos.iter().enumerate() {
        usmp::check(&pools, info).map_err(|violation| Refused {
            model: Some(k),
            violation,
        })?;
    }
    let storage: Vec<usize> = pools
        .iter()
        .map(|p| match p.kind {
            usmp::PoolKind::Workspace => p.size,
            usmp::PoolKind::Constant => 0,
        })
        .collect();
    let all: Vec<&ModelInfo<'_>> = infos.iter().collect();
    usmp::check_module(&pools, &storage, &all).map_err(|violation| Refused {
        model: None,
        violation,
    })
}

#[cfg(test)]
mod tests {
    use usmp::{Slot, Source, Violation};

    use super::check;
    use crate::config::Config;
    use crate::planned::Planned;

    fn planned(fixture: &str) -> Planned {
        let toml = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/");
        Config::from_file(format!("{toml}{fixture}/usmp.toml"))
            .cargo_directives(false)
            .plan()
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The rules the module states, on the two-models fixture: `keyword`'s fc call reads
    /// its state and writes it back (a second output, the read slot in place of it), the
    /// relu writes over its input, and every lowered value passes the runtime's checks.
    #[test]
    fn state_is_written_back_and_in_place_inputs_name_their_output() {
        let p = planned("two-models");
        let kws = &p.models[0].lowered;
        let state = kws.buffers.iter().position(|b| b.persistent).unwrap();
        assert_eq!(kws.buffers.iter().filter(|b| b.persistent).count(), 1);
        let fc = &kws.calls[3];
        let state_out = fc
            .outputs
            .iter()
            .position(|s| s.source == Source::Buffer(state as u32))
            .unwrap();
        assert_eq!(state_out, fc.outputs.len() - 1, "state after the outputs");
        assert!(
            fc.inputs.contains(&Slot::in_place(state_out as u32, None)),
            "{fc:?}"
        );
        assert_eq!(kws.calls[1].inputs, [Slot::in_place(0, None)]);
        // The certificate lists each call's live workspace buffers, in order per pool.
        assert_eq!(kws.live_from.len(), kws.calls.len() + 1);
        assert_eq!(*kws.live_from.last().unwrap() as usize, kws.live.len());
        assert_eq!(check(&p), Ok(()));
    }

    /// What the generated module's own `const` checks would refuse is refused here first,
    /// naming the model: a buffer moved over another live one, a slot handing out a
    /// buffer not live during its call, another model's buffer over the state.
    #[test]
    fn a_wrong_lowering_is_refused_naming_the_model() {
        let p = planned("two-models");
        let mut over = p.clone();
        let tiny = &mut over.models[1].lowered;
        // Two buffers live during the same call (the first such call's first two).
        let call = (0..tiny.calls.len())
            .find(|&c| tiny.live_from[c + 1] - tiny.live_from[c] >= 2)
            .unwrap();
        let from = tiny.live_from[call] as usize;
        let (a, b) = (tiny.live[from] as usize, tiny.live[from + 1] as usize);
        tiny.buffers[b].offset = tiny.buffers[a].offset;
        let refused = check(&over).unwrap_err();
        assert_eq!(refused.model, Some(1));
        assert!(matches!(
            refused.violation,
            Violation::Overlap { .. } | Violation::Certificate { .. }
        ));

        let mut dead = p.clone();
        let kws = &mut dead.models[0].lowered;
        let last = kws.calls.len() - 1;
        // A workspace buffer live during call 0 only, handed to the last call.
        let early = kws.live[..kws.live_from[1] as usize]
            .iter()
            .copied()
            .find(|&b| (kws.buffers[b as usize].end as usize) <= last)
            .unwrap();
        kws.calls[last].inputs = vec![Slot::buffer(early, None)];
        let refused = check(&dead).unwrap_err();
        assert_eq!(
            (
                refused.model,
                refused.violation.message().contains("not live")
            ),
            (Some(0), true)
        );

        let mut state = p;
        let at = state.models[0]
            .lowered
            .buffers
            .iter()
            .position(|b| b.persistent)
            .unwrap();
        let offset = state.models[0].lowered.buffers[at].offset;
        let tiny = &mut state.models[1].lowered;
        let b = tiny.live[0] as usize;
        tiny.buffers[b].offset = offset;
        let refused = check(&state).unwrap_err();
        assert_eq!(refused.model, None, "{refused:?}");
        assert!(
            matches!(refused.violation, Violation::State { .. }),
            "{refused:?}"
        );
    }
}
