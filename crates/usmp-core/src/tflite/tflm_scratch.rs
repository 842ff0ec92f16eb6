//! The scratch TensorFlow Lite Micro's reference kernels request in their `Prepare`
//! (`RequestScratchBufferInArena`), computed from the model's shapes and types as those
//! kernels compute it, so an offline plan leaves room for it without the user typing sizes.
//!
//! Sizes are for a 32-bit microcontroller (`sizeof(int) == 4`, pointers of 4 bytes).
//! Operators whose reference kernel requests none are absent; so are requests that only
//! compressed models make (conv, depthwise and fully connected decompressing weights) and
//! those of optimized kernel libraries (CMSIS-NN's im2col buffers), which come with
//! `--scratch`.

use usmp::{Builtin, ElementType, Options};

use super::graph::{Graph, Operator, TensorInfo};
use crate::liveness::{CallSelector, ScratchRule};
use crate::model::{Scratch, Size};

/// One scratch buffer a reference kernel requests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TflmScratch {
    /// The call (operator index in subgraph 0).
    pub call: usize,
    /// The operator, as the file names it.
    pub op: String,
    /// Bytes requested.
    pub bytes: u64,
    /// What the kernel keeps in it, for messages.
    pub what: &'static str,
}

impl TflmScratch {
    /// The scratch rule planning it at its call.
    pub fn rule(&self) -> ScratchRule {
        ScratchRule {
            calls: CallSelector::Index(self.call),
            scratch: Scratch {
                name: format!("tflm:{}", self.what),
                size: Size::Bytes(self.bytes),
                alignment: None,
            },
        }
    }
}

/// The scratch rules to plan a `.tflite` (`bytes`) for TFLite Micro with: `given` when
/// there are any (the kernels are not the reference ones, or the user knows better), else
/// the reference kernels' requests, which are also returned so the caller can say what it
/// assumed (empty when `given` is used).
pub fn scratch_for_tflm(
    bytes: &[u8],
    given: &[ScratchRule],
) -> (Vec<ScratchRule>, Vec<TflmScratch>) {
    if !given.is_empty() {
        return (given.to_vec(), Vec::new());
    }
    let assumed = super::read_graph(bytes)
        .map(|g| reference_scratch(&g))
        .unwrap_or_default();
    (assumed.iter().map(TflmScratch::rule).collect(), assumed)
}

/// Bytes per `int` and per pointer on the microcontrollers TFLite Micro runs on.
const INT: u64 = 4;
const POINTER: u64 = 4;

/// Every scratch buffer the reference kernels request for `graph`'s calls, in call order
/// and, within a call, in the order `Prepare` requests them (TFLite Micro's planner breaks
/// ties by it). A call whose operands do not have the shapes its kernel expects requests
/// nothing here: TFLite Micro's `Prepare` refuses such a model anyway.
pub fn reference_scratch(graph: &Graph) -> Vec<TflmScratch> {
    let mut out = Vec::new();
    for (call, op) in graph.operators.iter().enumerate() {
        let requests = requests(graph, op).unwrap_or_default();
        out.extend(requests.into_iter().map(|(what, bytes)| TflmScratch {
            call,
            op: op.op.clone(),
            bytes,
            what,
        }));
    }
    out
}

/// One call's operands in the graph.
struct Operands<'a> {
    graph: &'a Graph,
    op: &'a Operator,
}

impl<'a> Operands<'a> {
    fn input(&self, k: usize) -> Option<&'a TensorInfo> {
        self.graph
            .tensors
            .get(self.op.inputs.get(k).copied().flatten()?)
    }

    fn output(&self) -> Option<&'a TensorInfo> {
        self.graph.tensors.get(*self.op.outputs.first()?)
    }
}

fn dim(t: &TensorInfo, k: usize) -> Option<u64> {
    u64::try_from(*t.shape.get(k)?).ok()
}

fn elements(t: &TensorInfo) -> Option<u64> {
    t.shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?))
}

fn rank(t: &TensorInfo) -> u64 {
    t.shape.len() as u64
}

/// Products of shapes from the file: checked, as the file may say anything.
fn product(factors: &[u64]) -> Option<u64> {
    factors.iter().try_fold(1u64, |n, &f| n.checked_mul(f))
}

fn size(t: &TensorInfo) -> Option<u64> {
    t.element.size().map(|s| s as u64)
}

/// The requests of one call, `None` where an operand is missing or malformed.
fn requests(graph: &Graph, op: &Operator) -> Option<Vec<(&'static str, u64)>> {
    let ops = Operands { graph, op };
    // Reference kernels of operators the runtime's list leaves out (no usmp kernel runs
    // them), by the schema's name; the signal library's custom operator too.
    match op.op.as_str() {
        "REDUCE_MIN" | "REDUCE_ALL" => return min_max_or_all(&ops),
        "ADD_N" => return add_n(&ops),
        "SignalRfft" => return rfft(&ops),
        _ => {}
    }
    match op.builtin {
        Some(
            Builtin::Svdf | Builtin::UnidirectionalSequenceLstm | Builtin::Mean | Builtin::Sum,
        ) => recurrent_or_reducing(&ops),
        Some(Builtin::ReduceMax) => min_max_or_all(&ops),
        _ => other(&ops),
    }
}

/// PrepareMinMaxHelper and PrepareAllHelper: the input iterator and the resolved axes.
fn min_max_or_all(ops: &Operands<'_>) -> Option<Vec<(&'static str, u64)>> {
    let (x, axis) = (ops.input(0)?, ops.input(1)?);
    Some(vec![
        ("reduce input iterator", INT * rank(x)),
        ("reduce resolved axes", product(&[INT, elements(axis)?])?),
    ])
}

/// add_n.cc: a pointer to each input, for float and int8.
fn add_n(ops: &Operands<'_>) -> Option<Vec<(&'static str, u64)>> {
    Some(match ops.output()?.element {
        ElementType::Float32 | ElementType::Int8 => {
            vec![("add_n inputs", POINTER * ops.op.inputs.len() as u64)]
        }
        _ => Vec::new(),
    })
}

/// signal/micro/kernels/rfft.cc: fft_length values of the input's type; the output holds
/// fft_length / 2 + 1 complex values in its last dimension.
fn rfft(ops: &Operands<'_>) -> Option<Vec<(&'static str, u64)>> {
    let (x, y) = (ops.input(0)?, ops.output()?);
    let last = dim(y, y.shape.len().checked_sub(1)?)?;
    let fft_length = last.checked_sub(2)?;
    Some(vec![("rfft work", product(&[fft_length, size(x)?])?)])
}

/// SVDF and LSTM state buffers, and MEAN's and SUM's accumulators and iterators.
fn recurrent_or_reducing(ops: &Operands<'_>) -> Option<Vec<(&'static str, u64)>> {
    let (input, output, op) = (|k| ops.input(k), || ops.output(), ops.op);
    Some(match op.builtin? {
        // svdf_common.cc: int32 activations of every filter, then of every unit.
        Builtin::Svdf => {
            let (x, features) = (input(0)?, input(1)?);
            let batch = dim(x, 0)?;
            let filters = dim(features, 0)?;
            let Options::Svdf { rank, .. } = op.options else {
                return None;
            };
            let rank = u64::try_from(rank).ok()?.max(1);
            match x.element {
                ElementType::Int8 => vec![
                    ("svdf filters", product(&[batch, filters, 4])?),
                    ("svdf units", product(&[batch, filters / rank, 4])?),
                ],
                ElementType::Float32 => vec![("svdf filters", product(&[batch, filters, 4])?)],
                _ => return None,
            }
        }
        // unidirectional_sequence_lstm.cc: four buffers of batch x state dimension, in the
        // cell state's type (int16 for int8 models).
        Builtin::UnidirectionalSequenceLstm => {
            let (x, hidden, cell) = (input(0)?, input(18)?, input(19)?);
            let Options::UnidirectionalSequenceLstm { time_major, .. } = op.options else {
                return None;
            };
            let batch = dim(x, usize::from(time_major))?;
            let bytes = product(&[batch, dim(hidden, 1)?, size(cell)?])?;
            vec![("lstm buffer", bytes); 4]
        }
        // reduce_common.cc, PrepareMeanOrSumHelper: int32 accumulators for quantized
        // inputs, then the input iterator and the resolved axes (ints).
        Builtin::Mean | Builtin::Sum => {
            let (x, axis, y) = (input(0)?, input(1)?, output()?);
            let mut r = Vec::new();
            if matches!(x.element, ElementType::Int8 | ElementType::Int16) {
                r.push(("reduce accumulators", product(&[elements(y)?, 4])?));
            }
            r.push(("reduce input iterator", INT * rank(x)));
            r.push(("reduce resolved axes", product(&[INT, elements(axis)?])?));
            r
        }
        _ => Vec::new(),
    })
}

/// Every other operator that requests scratch.
fn other(ops: &Operands<'_>) -> Option<Vec<(&'static str, u64)>> {
    let (input, output, op) = (|k| ops.input(k), || ops.output(), ops.op);
    Some(match op.builtin? {
        // transpose_conv.cc: int32 (int8) or int64 (int16) accumulators of the output, and
        // for int16 with an int16 bias, the bias widened to int64 (requested first).
        Builtin::TransposeConv => {
            let (x, y) = (input(2)?, output()?);
            match x.element {
                ElementType::Int8 => {
                    vec![("transpose conv accumulators", product(&[elements(y)?, 4])?)]
                }
                ElementType::Int16 => {
                    let mut r = Vec::new();
                    if let Some(bias) = input(3).filter(|b| b.element == ElementType::Int16) {
                        r.push(("transpose conv bias", product(&[elements(bias)?, 8])?));
                    }
                    r.push(("transpose conv accumulators", product(&[elements(y)?, 8])?));
                    r
                }
                _ => Vec::new(),
            }
        }
        // mirror_pad.cc: element counts of the output's and the input's dimensions.
        Builtin::MirrorPad => {
            let x = input(0)?;
            vec![
                ("mirror pad output dims", INT * rank(x)),
                ("mirror pad input dims", INT * rank(x)),
            ]
        }
        _ => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::{reference_scratch, scratch_for_tflm};
    use crate::tflite::read_graph;

    const KEYWORD: &[u8] =
        include_bytes!("../../../../fixtures/tflite/models/keyword_scrambled.tflite");

    /// keyword_scrambled's seven int8 SVDF calls, rank 1: batch 1 x filters x 4 bytes for
    /// the filters' and the units' activations, as svdf_common.cc requests them (TFLite
    /// Micro's recorded head with these is checked by check_offline_plans.py in CI).
    #[test]
    fn svdf_requests_are_svdf_commons() {
        let graph = read_graph(KEYWORD).unwrap();
        let all = reference_scratch(&graph);
        let found: Vec<(usize, &str, u64)> = all
            .iter()
            .map(|s| (s.call, s.op.as_str(), s.bytes))
            .collect();
        let mut want = Vec::new();
        for (call, filters) in [
            (1, 64),
            (3, 64),
            (5, 64),
            (7, 64),
            (9, 32),
            (10, 32),
            (11, 32),
        ] {
            want.push((call, "SVDF", filters * 4));
            want.push((call, "SVDF", filters * 4));
        }
        assert_eq!(found, want);
    }

    #[test]
    fn given_rules_replace_the_reference_table() {
        let (rules, assumed) = scratch_for_tflm(KEYWORD, &[]);
        assert_eq!((rules.len(), assumed.len()), (14, 14));
        let one = rules[..1].to_vec();
        let (rules, assumed) = scratch_for_tflm(KEYWORD, &one);
        assert_eq!((rules, assumed.len()), (one, 0));
        // Not a .tflite: nothing assumed, nothing to plan for.
        assert_eq!(scratch_for_tflm(b"not a model", &[]).0.len(), 0);
    }
}
