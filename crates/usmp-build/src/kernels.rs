//! `kernels = true`: each call's usmp-kernels parameters, prepared at build time from the
//! `.tflite` (usmp-kernels' `prepare` does the arithmetic), so a model the kernels cannot
//! run fails the build naming the call.

use usmp_core::model::{Model, Role};
use usmp_kernels::prepare::{self, Operand};

use crate::operands::Operands;

/// Each call's `::usmp_kernels::Kernel` expression, or the first call that has none.
pub fn prepare(model: &Model, operands: &Operands) -> Result<Vec<String>, String> {
    if operands.tensors.is_empty() {
        return Err(
            "`kernels = true` needs a .tflite model: the JSON IR gives no tensor types or options"
                .into(),
        );
    }
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
    model
        .calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let inputs: Vec<Option<Operand<'_>>> =
                operands.reads[i].iter().map(|t| t.map(operand)).collect();
            let outputs: Vec<Operand<'_>> = call.writes.iter().map(|&t| operand(t)).collect();
            prepare::kernel(
                operands.builtins[i],
                &operands.options[i],
                &inputs,
                &outputs,
            )
            .map_err(|e| format!("call {i} ({}): {e}", call.op))
        })
        .collect()
}
