//! Streamed stages (`stages` in usmp.toml): chains of calls fused into one call of
//! usmp-kernels' stage kernel, so the tensors between them are never whole. The fused
//! call reads the chain's input and every part's weights, writes the chain's output, and
//! has one scratch buffer, its line buffers; the planner, the verifier and the report see
//! an ordinary call with scratch.
//!
//! Which chains: the ones `stages` lists, or with `auto` the ones [`choose`] finds.

mod apply;
mod choose;
#[cfg(test)]
mod tests;

pub use apply::{Candidate, Planner, apply};
pub use choose::choose;

use usmp::Options;
use usmp_core::model::{Call, Model, Overlap, Role, Scratch, Size};
use usmp_kernels::overlap::Window;
use usmp_kernels::prepare::{PartText, stage_rust};
use usmp_kernels::stage::{MOST_PARTS, OPERATOR, Step, line_buffer, most};

use crate::kernels::Prepared;
use crate::operands::Operands;
use crate::planned::Stage;

/// What a model's calls allow: for each call, whether it may be in a stage, and for each
/// call whether it may be fused with the next.
pub struct Links {
    /// Call `i` and call `i + 1` may be parts of one stage, in that order.
    pub next: Vec<bool>,
    /// Each call's output shape as a stage part sees it (NHWC, one batch).
    shapes: Vec<Option<[usize; 4]>>,
    steps: Vec<Option<Step>>,
}

impl Links {
    /// The links of `model`'s calls, whose kernels are `prepared`.
    pub fn of(model: &Model, operands: &Operands, prepared: &[Prepared]) -> Self {
        let n = model.calls.len();
        let readers = readers(model);
        let shapes: Vec<Option<[usize; 4]>> = (0..n)
            .map(|i| streamable(model, operands, prepared, &readers, i))
            .collect();
        let next = (0..n.saturating_sub(1))
            .map(|i| {
                let (Some(_), Some(_)) = (shapes[i], shapes[i + 1]) else {
                    return false;
                };
                let t = model.calls[i].writes[0];
                operands.reads[i + 1].first().copied().flatten() == Some(t)
                    && readers[t] == 1
                    && !model.outputs.contains(&t)
                    && !model.inputs.contains(&t)
            })
            .collect();
        Links {
            next,
            shapes,
            steps: prepared.iter().map(|p| p.step).collect(),
        }
    }

    /// Whether calls `first..=last` may be one stage.
    pub fn chain(&self, first: usize, last: usize) -> bool {
        first < last && last - first < MOST_PARTS && self.next[first..last].iter().all(|&l| l)
    }

    /// The line buffers of a stage of calls `first..=last` (a chain).
    pub fn stage(&self, first: usize, last: usize) -> Stage {
        let line_buffers = (first..last)
            .map(|i| {
                let shape = self.shapes[i].unwrap_or_default();
                let reach = self.steps[i + 1].map_or(shape[1], |s| s.reach);
                let rows = reach.min(shape[1]);
                (rows, line_buffer(rows, shape) as u64)
            })
            .collect();
        Stage {
            first,
            last,
            line_buffers,
        }
    }
}

/// How many calls read each tensor (a call reading it twice counts once).
fn readers(model: &Model) -> Vec<usize> {
    let mut n = vec![0; model.tensors.len()];
    for call in &model.calls {
        let mut seen: Vec<usize> = call.reads.clone();
        seen.sort_unstable();
        seen.dedup();
        for t in seen {
            n[t] += 1;
        }
    }
    n
}

/// Call `i`'s output shape when it may be a stage's part: a kernel the stage runs, one
/// output of one batch, its input 0 an activation and every other input a constant only
/// it reads.
fn streamable(
    model: &Model,
    operands: &Operands,
    prepared: &[Prepared],
    readers: &[usize],
    i: usize,
) -> Option<[usize; 4]> {
    let call = &model.calls[i];
    prepared.get(i)?.step?;
    if call.writes.len() != 1 || !call.in_place.is_empty() || !call.scratch.is_empty() {
        return None;
    }
    let reads = &operands.reads[i];
    let input = reads.first().copied().flatten()?;
    if !matches!(model.tensors[input].role, Role::Activation) {
        return None;
    }
    let weights_only = reads[1..]
        .iter()
        .flatten()
        .all(|&t| matches!(model.tensors[t].role, Role::Constant(_)) && readers[t] == 1);
    nhwc(operands, call.writes[0]).filter(|_| weights_only)
}

/// Tensor `t`'s shape when it is NHWC of one batch, as a stage's kernels take it.
fn nhwc(operands: &Operands, t: usize) -> Option<[usize; 4]> {
    match operands.tensors.get(t)?.shape.as_slice() {
        &[1, h, w, c] => Some([1, h, w, c].map(|d| usize::try_from(d).unwrap_or(0))),
        _ => None,
    }
}

/// `model` with each of `stages` (in order, apart) fused into one call, its operands and
/// its kernels (`prepared`, the stage calls' printed naming usmp-kernels by `path`).
pub fn fuse(
    model: &Model,
    operands: &Operands,
    prepared: &[Prepared],
    stages: &[Stage],
    links: &Links,
    path: &str,
) -> (Model, Operands, Vec<String>) {
    let mut fused = Model {
        calls: Vec::new(),
        ..model.clone()
    };
    let mut ops = Operands {
        tensors: operands.tensors.clone(),
        reads: Vec::new(),
        builtins: Vec::new(),
        options: Vec::new(),
    };
    let mut kernels = Vec::new();
    let mut next = stages.iter().peekable();
    let mut i = 0;
    while i < model.calls.len() {
        let Some(stage) = next.next_if(|s| s.first == i) else {
            let mut call = model.calls[i].clone();
            if prepared[i].work > 0 {
                call.scratch
                    .push(crate::kernels::work_scratch(prepared[i].work));
            }
            fused.calls.push(call);
            ops.reads.push(operands.reads[i].clone());
            ops.builtins.push(operands.builtins[i]);
            ops.options.push(operands.options[i]);
            kernels.push(prepared[i].rust.clone());
            i += 1;
            continue;
        };
        let (call, reads, parts) = stage_call(model, operands, prepared, stage, links);
        fused.calls.push(call);
        ops.reads.push(reads.into_iter().map(Some).collect());
        ops.builtins.push(None);
        ops.options.push(Options::None);
        kernels.push(stage_rust(&parts, path));
        i = stage.last + 1;
    }
    (fused, ops, kernels)
}

/// The shifts at which `stage`'s output (tensor `output`) may lie over its input
/// (`input`), as usmp-kernels' stage kernel certifies them ([`most`]), declared as the
/// build declares a call's window: shifts up to 0.
fn window(
    operands: &Operands,
    links: &Links,
    stage: &Stage,
    input: usize,
    output: usize,
) -> Option<Overlap> {
    let steps: Option<Vec<Step>> = (stage.first..=stage.last).map(|i| links.steps[i]).collect();
    let ([_, in_h, in_w, in_c], [_, out_h, out_w, out_c]) =
        (nhwc(operands, input)?, nhwc(operands, output)?);
    let window = Window {
        most: most(&steps?, in_w * in_c, out_w * out_c),
        input: in_h * in_w * in_c,
        output: out_h * out_w * out_c,
    };
    let [lo, hi] = window.shifts()?;
    Some(Overlap {
        output,
        input,
        shifts: [lo, hi.min(0)],
    })
}

/// The call of `stage`, its inputs, and its parts as usmp-kernels prints them.
fn stage_call(
    model: &Model,
    operands: &Operands,
    prepared: &[Prepared],
    stage: &Stage,
    links: &Links,
) -> (Call, Vec<usize>, Vec<PartText>) {
    let first = &model.calls[stage.first];
    let mut reads = vec![operands.reads[stage.first][0].unwrap_or_default()];
    let mut parts = Vec::new();
    let calls = stage.first..=stage.last;
    for (k, (i, kernel)) in calls.clone().zip(&prepared[calls]).enumerate() {
        let at = reads.len();
        reads.extend(operands.reads[i][1..].iter().flatten().copied());
        parts.push(PartText {
            kernel: kernel.rust.clone(),
            output: links.shapes[i].unwrap_or_default(),
            weights: if reads.len() > at { at } else { 0 },
            rows: stage.line_buffers.get(k).map_or(0, |&(rows, _)| rows),
        });
    }
    let mut call = Call::new(OPERATOR, first.target.clone());
    call.reads = reads.clone();
    call.writes = model.calls[stage.last].writes.clone();
    if let Some(overlap) = window(operands, links, stage, reads[0], call.writes[0]) {
        call.overlaps.push(overlap);
    }
    // The parts' kernel work after the line buffers, as usmp-kernels' stage reads it.
    let most = prepared[stage.first..=stage.last]
        .iter()
        .map(|k| k.stage_work)
        .max()
        .unwrap_or(0);
    let lines = usize::try_from(stage.scratch()).unwrap_or(usize::MAX);
    let scratch = lines + usmp_kernels::stage::work_after(lines, most);
    if scratch > 0 {
        call.scratch.push(Scratch {
            name: match most {
                0 => "line buffers",
                _ => "line buffers and kernel work",
            }
            .into(),
            size: Size::Bytes(scratch as u64),
            alignment: (most > 0).then_some(usmp_kernels::work::ALIGN as u64),
        });
    }
    (call, reads, parts)
}
