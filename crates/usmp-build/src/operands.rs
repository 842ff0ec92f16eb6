//! What a kernel needs of a model besides the plan: each tensor's element type, shape and
//! quantization, each call's inputs in the operator's own order (a left-out optional
//! input keeps its place), and each call's builtin options, typed. usmp-core read them
//! from the `.tflite` in the same pass as the model ([`ModelFile::graph`]); the generated
//! module carries them as `const` data.

use usmp::{Builtin, Options};
#[cfg(doc)]
use usmp_core::input::ModelFile;
use usmp_core::model::Model;
use usmp_core::tflite::{Graph, TensorInfo};

/// The operands of one model.
#[derive(Clone, Debug, Default)]
pub struct Operands {
    /// Tensor descriptions, one per model tensor (empty for the JSON IR).
    pub tensors: Vec<TensorInfo>,
    /// Each call's inputs, `None` for a left-out optional one.
    pub reads: Vec<Vec<Option<usize>>>,
    /// Each call's operator, when it is a builtin the runtime names.
    pub builtins: Vec<Option<Builtin>>,
    /// Each call's builtin options.
    pub options: Vec<Options>,
}

/// The operands of `model`: from its `.tflite` `graph` when it came from one (taken from
/// the model file: [`ModelFile::take_graph`]); the model's own reads (and no tensor table
/// or options) for the JSON IR.
pub fn of(model: &Model, graph: Option<Graph>) -> Operands {
    match graph {
        Some(g) => Operands {
            reads: g.operators.iter().map(|o| o.inputs.clone()).collect(),
            builtins: g.operators.iter().map(|o| o.builtin).collect(),
            options: g.operators.iter().map(|o| o.options).collect(),
            tensors: g.tensors,
        },
        None => Operands {
            tensors: Vec::new(),
            reads: model
                .calls
                .iter()
                .map(|c| c.reads.iter().map(|&t| Some(t)).collect())
                .collect(),
            builtins: model
                .calls
                .iter()
                .map(|c| Builtin::from_name(&c.op))
                .collect(),
            options: vec![Options::None; model.calls.len()],
        },
    }
}
