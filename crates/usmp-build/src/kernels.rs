//! `kernels = true`: each call's usmp-kernels parameters, prepared at build time from the
//! `.tflite` (usmp-kernels' `prepare` does the arithmetic), so a model the kernels cannot
//! run fails the build naming the call.

use usmp_core::model::{Model, Overlap, Role, Scratch, Size};
use usmp_kernels::prepare::{self, Operand};
use usmp_kernels::stage::Step;
use usmp_kernels::work;

use crate::operands::Operands;

/// A call's kernel as the build prepared it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prepared {
    /// Its `Kernel` expression.
    pub rust: String,
    /// In a streamed stage: how its output rows read its input's rows; `None` when the
    /// kernel cannot be in a stage.
    pub step: Option<Step>,
    /// The bytes of work its kernel keeps on the target's path (`usmp_kernels::work`),
    /// planned as its last scratch buffer.
    pub work: usize,
    /// The bytes it keeps as a part of a streamed stage (`work::in_stage`).
    pub stage_work: usize,
}

/// Each call's kernel as a `Kernel` expression naming usmp-kernels by `path` (usmp-kernels
/// computes the parameters and prints them) with its step in a stage, or the first call
/// that has none.
pub fn prepare(
    model: &Model,
    operands: &Operands,
    path: &str,
    target: work::Path,
) -> Result<Vec<Prepared>, String> {
    if operands.tensors.is_empty() {
        return Err(
            "`kernels = true` needs a .tflite model: the JSON IR gives no tensor types or options"
                .into(),
        );
    }
    (0..model.calls.len())
        .map(|i| {
            let (inputs, outputs) = call_operands(model, operands, i);
            let rows = outputs
                .first()
                .and_then(|o| o.shape.get(1))
                .copied()
                .unwrap_or(0);
            let rows = usize::try_from(rows).unwrap_or(0);
            prepare::kernel(
                operands.builtins[i],
                &operands.options[i],
                &inputs,
                &outputs,
                |k| Prepared {
                    rust: prepare::rust(k, path),
                    step: Step::of(k, rows),
                    work: work::bytes(k, target),
                    stage_work: work::in_stage(k, target),
                },
            )
            .map_err(|e| format!("call {i} ({}): {e}", model.calls[i].op))
        })
        .collect()
}

/// The scratch buffer that holds a call's kernel work of `bytes` (`Prepared::work`).
pub fn work_scratch(bytes: usize) -> Scratch {
    Scratch {
        name: "kernel work".into(),
        size: Size::Bytes(bytes as u64),
        alignment: Some(work::ALIGN as u64),
    }
}

/// `model` with each call's kernel work (`prepared`, call by call) as its last scratch
/// buffer, where it keeps any.
pub fn with_work(model: &Model, prepared: &[Prepared]) -> Model {
    let mut model = model.clone();
    for (call, kernel) in model.calls.iter_mut().zip(prepared) {
        if kernel.work > 0 {
            call.scratch.push(work_scratch(kernel.work));
        }
    }
    model
}

/// Call `i`'s operands as usmp-kernels' `prepare` takes them.
fn call_operands<'m>(
    model: &'m Model,
    operands: &'m Operands,
    i: usize,
) -> (Vec<Option<Operand<'m>>>, Vec<Operand<'m>>) {
    let operand = |t: usize| {
        let info = &operands.tensors[t];
        Operand {
            element: info.element,
            shape: &info.shape,
            scales: &info.quantization.scales,
            zero_points: &info.quantization.zero_points,
            constant: match &model.tensors[t].role {
                Role::Constant(data) => Some(data.as_slice()),
                _ => None,
            },
        }
    };
    let inputs = operands.reads[i].iter().map(|t| t.map(operand)).collect();
    let outputs = model.calls[i].writes.iter().map(|&t| operand(t)).collect();
    (inputs, outputs)
}

/// Declares, for every call whose kernel certifies a window (usmp-kernels'
/// `prepare::window`), that its output 0 may be placed over its input 0 within it,
/// where the model allows (the call is the input's last reader, both are activations):
/// a pair the model refuses is left out, not an error. Returns how many were declared.
pub fn declare_overlaps(model: &mut Model, operands: &Operands) -> usize {
    if operands.tensors.is_empty() {
        // A JSON model's own overlaps are the user's: refused, they are errors.
        return 0;
    }
    let found = push_windows(model, operands);
    found - model.drop_refused_overlaps()
}

/// `model` with every window its kernels certify declared, allowed by the order as
/// written or not: the pairs an order of the calls may use (`usmp_core::order`).
/// Windows no order can use (an input that is a model output, say) are left out.
pub fn candidate_overlaps(model: &Model, operands: &Operands) -> Model {
    let mut candidates = model.clone();
    push_windows(&mut candidates, operands);
    for i in 0..candidates.calls.len() {
        let k = candidates.calls[i].overlaps.len();
        if k > 0
            && candidates
                .overlap_refused_in_every_order(i, k - 1)
                .is_some()
        {
            candidates.calls[i].overlaps.pop();
        }
    }
    candidates
}

/// Pushes each call's certified window onto its overlaps; returns how many.
fn push_windows(model: &mut Model, operands: &Operands) -> usize {
    if operands.tensors.is_empty() {
        return 0;
    }
    let found: Vec<(usize, Overlap)> = (0..model.calls.len())
        .filter_map(|i| {
            let (inputs, outputs) = call_operands(model, operands, i);
            let window = prepare::window(
                operands.builtins[i],
                &operands.options[i],
                &inputs,
                &outputs,
            )?;
            let [lo, hi] = window.shifts()?;
            // Shifts above 0 share no more bytes than 0 does (from there up the output
            // only leaves its input), and the exact search proves its plans for windows
            // that stop at 0 (usmp_core's `exact`): the planner is given the rest.
            let overlap = Overlap {
                output: *model.calls[i].writes.first()?,
                input: operands.reads[i].first().copied().flatten()?,
                shifts: [lo, hi.min(0)],
            };
            Some((i, overlap))
        })
        .collect();
    for (i, o) in &found {
        model.calls[*i].overlaps.push(*o);
    }
    found.len()
}
