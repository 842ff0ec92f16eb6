//! TensorFlow Lite import: a `.tflite` flatbuffer to a [`Model`], with TensorFlow Lite
//! Micro's rules, read directly from the file (no TensorFlow, no C++).
//!
//! - Subgraph 0; operators in file order; every call runs on target `cpu`.
//! - A tensor with a non-empty buffer is a constant holding that buffer's bytes.
//! - A variable tensor (LSTM/SVDF state) is persistent state.
//! - Every other tensor is an activation of `elements x element size` bytes; zero-size
//!   ones are left out of the plan, as TFLite Micro does.
//! - Each tensor's traffic (bytes read and written per inference, for choosing pools by
//!   speed) is counted per operator from the shapes and options, as TFLite Micro's
//!   reference kernels touch memory (see `access.rs`): a convolution's input and filter
//!   once per multiply, other operators' tensors once per call.
//! - Kernel scratch depends on the kernel library, not on the model, so it comes from
//!   the planning options ([`ScratchRule`](crate::liveness::ScratchRule)).
//!
//! What cannot be planned statically is an error that names the operator or tensor:
//! control flow (`IF`, `WHILE`, `CALL_ONCE`), dynamic shapes, element types without a
//! fixed size, and corrupt or truncated files.
//!
//! Memory is bounded by the file: FlatBuffers lets many tensors share one name, shape or
//! buffer, and many operators one input list, so a small file could describe gigabytes.
//! What the readers copy out of a file (the tensor and operator records, names, shapes,
//! index lists, constant bytes, quantization) may total at most
//! [`READ_BUDGET_FACTOR`] times the file's size plus [`READ_BUDGET_SLACK`]; past that the
//! file is refused as corrupt before anything bigger is allocated.

mod access;
mod flatbuffer;
mod graph;
mod offline;
mod ops;
mod options;
mod tflm;
mod tflm_scratch;

use std::cell::Cell;
use std::fmt;

use flatbuffer::{Table, Vector};

use usmp::{Builtin, ElementType};

use crate::model::{Call, Model, Role, Size, Tensor};

pub use graph::{Graph, Operator, Quantization, TensorInfo, Window};
pub use offline::{
    OFFLINE_PLAN_METADATA, OfflinePlan, WithOfflinePlan, read_offline_plan, write_offline_plan,
};
pub use tflm::{TFLM_ALIGNMENT, TflmError, TflmPlan, plan_for_tflm, tflm_pools};
pub use tflm_scratch::{TflmScratch, reference_scratch, scratch_for_tflm};

/// Why a `.tflite` file could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TfliteError {
    /// Not a TensorFlow Lite flatbuffer at all.
    NotTflite {
        /// What was found instead.
        found: String,
    },
    /// The bytes do not form a valid model.
    Corrupt {
        /// Where in the model (e.g. `tensor 12 "conv1"`).
        context: String,
        /// What is wrong.
        detail: String,
    },
    /// A valid model that static planning cannot handle.
    Unsupported {
        /// Where in the model.
        context: String,
        /// What and why.
        detail: String,
    },
}

impl fmt::Display for TfliteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TfliteError::NotTflite { found } => write!(
                f,
                "not a TensorFlow Lite model: expected the identifier \"TFL3\" at byte 4, \
                 found {found}"
            ),
            TfliteError::Corrupt { context, detail } => {
                write!(f, "{context}: {detail} (the file is corrupt)")
            }
            TfliteError::Unsupported { context, detail } => write!(f, "{context}: {detail}"),
        }
    }
}

impl std::error::Error for TfliteError {}

/// Attaches a context to the wire-format errors of one step.
fn corrupt(context: impl Fn() -> String) -> impl Fn(String) -> TfliteError {
    move |detail| TfliteError::Corrupt {
        context: context(),
        detail,
    }
}

/// How many times its own size a `.tflite` file may take in memory once read (see the
/// module docs); real models take less than twice.
pub const READ_BUDGET_FACTOR: usize = 8;

/// Bytes a `.tflite` file may take in memory once read, beyond
/// [`READ_BUDGET_FACTOR`] times its size.
pub const READ_BUDGET_SLACK: usize = 16 << 20;

/// What the reader takes from a `.tflite` file before reading tensors and operators:
/// subgraph 0's tensor and operator lists, its inputs and outputs, the buffers and the
/// operator code names.
struct File<'a> {
    buffers: Option<Vector<'a>>,
    tensors: Option<Vector<'a>>,
    /// How many tensors subgraph 0 has.
    count: usize,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    operators: Option<Vector<'a>>,
    op_names: Vec<(i32, String)>,
    /// Bytes the readers may still copy out of the file.
    budget: Cell<usize>,
}

/// One operator as the file has it.
struct RawOperator<'a> {
    code: i32,
    name: String,
    /// `None` for an optional input left out (-1).
    inputs: Vec<Option<usize>>,
    outputs: Vec<usize>,
    table: Table<'a>,
}

fn open(bytes: &[u8]) -> Result<File<'_>, TfliteError> {
    match bytes.get(4..8) {
        Some(b"TFL3") => {}
        Some(other) => {
            return Err(TfliteError::NotTflite {
                found: format!("{:?}", String::from_utf8_lossy(other)),
            });
        }
        None => {
            return Err(TfliteError::NotTflite {
                found: format!("a file of {} bytes", bytes.len()),
            });
        }
    }
    let root = Table::root(bytes).map_err(corrupt(|| "the model".into()))?;
    let budget = Cell::new(
        bytes
            .len()
            .saturating_mul(READ_BUDGET_FACTOR)
            .saturating_add(READ_BUDGET_SLACK),
    );
    let op_names = operator_names(&root, &budget)?;
    let subgraph = match root
        .vector(2)
        .map_err(corrupt(|| "the subgraph list".into()))?
    {
        Some(list) if list.len() > 0 => list.table(0).map_err(corrupt(|| "subgraph 0".into()))?,
        _ => {
            return Err(TfliteError::Corrupt {
                context: "the model".into(),
                detail: "it has no subgraph".into(),
            });
        }
    };
    let buffers = root
        .vector(4)
        .map_err(corrupt(|| "the buffer list".into()))?;
    let tensors = subgraph
        .vector(0)
        .map_err(corrupt(|| "the tensor list".into()))?;
    let count = tensors.map_or(0, |v| v.len());
    let index_list = |slot: usize, what: &str| -> Result<Vec<usize>, TfliteError> {
        let ctx = || format!("the model's {what}");
        let raw = subgraph.ints(slot).map_err(corrupt(ctx))?;
        raw.into_iter()
            .map(|i| tensor_index(i, count).map_err(corrupt(ctx)))
            .collect()
    };
    let inputs = index_list(1, "inputs")?;
    let outputs = index_list(2, "outputs")?;
    let operators = subgraph
        .vector(3)
        .map_err(corrupt(|| "the operator list".into()))?;
    Ok(File {
        buffers,
        tensors,
        count,
        inputs,
        outputs,
        operators,
        op_names,
        budget,
    })
}

/// Takes `bytes` from what may still be copied out of the file, or refuses the file.
fn charge(budget: &Cell<usize>, bytes: usize, ctx: impl Fn() -> String) -> Result<(), TfliteError> {
    match budget.get().checked_sub(bytes) {
        Some(left) => {
            budget.set(left);
            Ok(())
        }
        None => Err(TfliteError::Corrupt {
            context: ctx(),
            detail: format!(
                "reading the file would take more than {READ_BUDGET_FACTOR} times its size in \
                 memory: its tables share names, shapes, lists or buffers far more than a \
                 converted model does; the file is corrupt or made to exhaust memory"
            ),
        }),
    }
}

impl<'a> File<'a> {
    fn operator_count(&self) -> usize {
        self.operators.map_or(0, |v| v.len())
    }

    /// Room for `n` records of type `R`, taken from the read budget first: a list's
    /// length is only a number in the file.
    fn records<R>(&self, n: usize, what: &str) -> Result<Vec<R>, TfliteError> {
        self.charge(n.saturating_mul(size_of::<R>()), || {
            format!("the {what} list")
        })?;
        Ok(Vec::with_capacity(n))
    }

    /// Takes `bytes` from the read budget (see the module docs).
    fn charge(&self, bytes: usize, ctx: impl Fn() -> String) -> Result<(), TfliteError> {
        charge(&self.budget, bytes, ctx)
    }

    /// Operator `i`: its code and name, and its tensors checked against the tensor list.
    fn operator(&self, i: usize) -> Result<RawOperator<'a>, TfliteError> {
        let ctx = || format!("operator {i}");
        let Some(list) = self.operators else {
            return Err(TfliteError::Corrupt {
                context: ctx(),
                detail: "the model has no operator list".into(),
            });
        };
        let table = list.table(i).map_err(corrupt(ctx))?;
        let opcode = table.u32(0, 0).map_err(corrupt(ctx))? as usize;
        let Some((code, name)) = self.op_names.get(opcode) else {
            return Err(TfliteError::Corrupt {
                context: ctx(),
                detail: format!("operator code index {opcode} is out of range"),
            });
        };
        let ctx = || format!("operator {i} ({name})");
        let count = self.count;
        // The lists' lengths are known before they are copied out.
        let listed = |slot| table.vector(slot).map(|v| v.map_or(0, |v| v.len()));
        let items = listed(1).map_err(corrupt(ctx))? + listed(2).map_err(corrupt(ctx))?;
        // Read as `Option<usize>` and `usize`, then copied into the caller's record.
        self.charge(
            name.len() + items.saturating_mul(3 * size_of::<usize>()),
            ctx,
        )?;
        // Exactly as long as the file's lists (the charge above counted that many).
        let raw = table.ints(1).map_err(corrupt(ctx))?;
        let mut inputs = Vec::with_capacity(raw.len());
        for r in raw {
            inputs.push(match r {
                -1 => None,
                r => Some(tensor_index(r, count).map_err(corrupt(ctx))?),
            });
        }
        let raw = table.ints(2).map_err(corrupt(ctx))?;
        let mut outputs = Vec::with_capacity(raw.len());
        for r in raw {
            outputs.push(tensor_index(r, count).map_err(corrupt(ctx))?);
        }
        Ok(RawOperator {
            code: *code,
            name: name.clone(),
            inputs,
            outputs,
            table,
        })
    }
}

/// Reads a `.tflite` model. `name` becomes the model's name.
pub fn read_tflite(bytes: &[u8], name: &str) -> Result<Model, TfliteError> {
    read_tflite_graph(bytes, name).map(|(model, _)| model)
}

/// Reads the tensors and operators of a `.tflite` file, for kernel parameters.
pub fn read_graph(bytes: &[u8]) -> Result<Graph, TfliteError> {
    read_tflite_graph(bytes, "").map(|(_, graph)| graph)
}

/// Reads a `.tflite` file once into both what planning needs (the [`Model`], named
/// `name`) and what kernels need (the [`Graph`]: types, shapes, quantization, options).
pub fn read_tflite_graph(bytes: &[u8], name: &str) -> Result<(Model, Graph), TfliteError> {
    let file = open(bytes)?;
    let count = file.count;
    let mut tensors = file.records::<Tensor>(count, "tensor")?;
    let mut infos = file.records::<TensorInfo>(count, "tensor")?;
    if let Some(list) = file.tensors {
        for t in 0..count {
            let (tensor, info) = tensor(&file, bytes, &list, t)?;
            tensors.push(tensor);
            infos.push(info);
        }
    }
    let shapes: Vec<access::Shape<'_>> = infos
        .iter()
        .zip(&tensors)
        .map(|(info, tensor)| access::Shape::new(info, tensor))
        .collect();
    let mut traffic = vec![0u64; count];
    let mut calls = file.records::<Call>(file.operator_count(), "operator")?;
    let mut operators = file.records::<Operator>(file.operator_count(), "operator")?;
    for i in 0..file.operator_count() {
        let op = operator(&file, i)?;
        access::add_call(&op, &shapes, &mut traffic);
        // The call's own copy of the name (the file's charge covered the graph's).
        file.charge(op.op.len(), || format!("operator {i} ({})", op.op))?;
        let mut c = Call::new(op.op.clone(), "cpu");
        c.reads = op.inputs.iter().flatten().copied().collect();
        c.writes = op.outputs.clone();
        calls.push(c);
        operators.push(op);
    }
    drop(shapes);
    for (tensor, &bytes) in tensors.iter_mut().zip(&traffic) {
        tensor.traffic = Some(bytes);
    }
    let model = Model {
        name: name.to_string(),
        tensors,
        calls,
        inputs: file.inputs.clone(),
        outputs: file.outputs.clone(),
    };
    let graph = Graph {
        tensors: infos,
        operators,
        inputs: file.inputs,
        outputs: file.outputs,
    };
    Ok((model, graph))
}

/// Operator `i` with its options decoded; control flow is refused.
fn operator(file: &File<'_>, i: usize) -> Result<Operator, TfliteError> {
    let op = file.operator(i)?;
    let context = format!("operator {i} ({})", op.name);
    if ops::CONTROL_FLOW.contains(&op.code) {
        return Err(TfliteError::Unsupported {
            context,
            detail: "control flow runs other subgraphs; usmp plans one straight-line \
                     program (subgraph 0), so remove or inline it"
                .into(),
        });
    }
    let builtin = Builtin::from_name(&op.name);
    let slots = options::Slots {
        table: op.table.table(4).map_err(corrupt(|| context.clone()))?,
        index: i,
        name: &op.name,
    };
    let options = options::decode(builtin, &slots)?;
    Ok(Operator {
        op: op.name,
        builtin,
        inputs: op.inputs,
        outputs: op.outputs,
        options,
    })
}

fn tensor_index(raw: i32, count: usize) -> Result<usize, String> {
    usize::try_from(raw)
        .ok()
        .filter(|&i| i < count)
        .ok_or_else(|| format!("tensor index {raw} is out of range (the subgraph has {count})"))
}

/// Each operator code's name, with its builtin code.
fn operator_names(
    root: &Table<'_>,
    budget: &Cell<usize>,
) -> Result<Vec<(i32, String)>, TfliteError> {
    let Some(codes) = root
        .vector(1)
        .map_err(corrupt(|| "the operator codes".into()))?
    else {
        return Ok(Vec::new());
    };
    (0..codes.len())
        .map(|k| {
            let ctx = || format!("operator code {k}");
            let t = codes.table(k).map_err(corrupt(ctx))?;
            // Codes above 127 live in the newer i32 field; the old byte field stays.
            let old = i32::from(t.u8(0, 0).map_err(corrupt(ctx))? as i8);
            let new = t.u32(3, 0).map_err(corrupt(ctx))? as i32;
            let code = old.max(new);
            let name = if code == ops::CUSTOM {
                t.string(1)
                    .map_err(corrupt(ctx))?
                    .unwrap_or_else(|| "CUSTOM".into())
            } else {
                ops::name(code)
            };
            charge(budget, size_of::<(i32, String)>() + name.len(), ctx)?;
            Ok((code, name))
        })
        .collect()
}

/// Tensor `t`'s table, name and shape, charged to the read budget before they are copied.
fn tensor_table<'a>(
    file: &File<'a>,
    list: &Vector<'a>,
    t: usize,
) -> Result<(Table<'a>, String, Vec<i32>), TfliteError> {
    let ctx = || format!("tensor {t}");
    let table = list.table(t).map_err(corrupt(ctx))?;
    let len = |slot| table.vector(slot).map(|v| v.map_or(0, |v| v.len()));
    let (name_len, rank) = (len(3).map_err(corrupt(ctx))?, len(0).map_err(corrupt(ctx))?);
    file.charge(name_len + rank.saturating_mul(4), ctx)?;
    let name = table
        .string(3)
        .map_err(corrupt(ctx))?
        .unwrap_or_else(|| format!("tensor{t}"));
    let shape = table.ints(0).map_err(corrupt(ctx))?;
    Ok((table, name, shape))
}

/// Tensor `t`: as the model plans it, and as the graph describes it.
fn tensor(
    file: &File<'_>,
    bytes: &[u8],
    list: &Vector<'_>,
    t: usize,
) -> Result<(Tensor, TensorInfo), TfliteError> {
    let (table, name, shape) = tensor_table(file, list, t)?;
    let ctx = || format!("tensor {t} \"{name}\"");
    let element = ElementType::from_code(table.u8(1, 0).map_err(corrupt(ctx))?);
    let buffer = table.u32(2, 0).map_err(corrupt(ctx))? as usize;
    let is_variable = table.u8(5, 0).map_err(corrupt(ctx))? != 0;
    let q = table.table(4).map_err(corrupt(ctx))?;
    let quantization = graph::quantization(q, ctx, |bytes| file.charge(bytes, ctx))?;
    let data = buffer_data(bytes, file.buffers.as_ref(), buffer).map_err(corrupt(ctx))?;
    let tensor = if !is_variable && !data.is_empty() {
        file.charge(data.len(), ctx)?;
        Tensor::constant(name.clone(), data.to_vec())
    } else {
        Tensor {
            name: name.clone(),
            size: Size::Bytes(activation_bytes(&shape, element, ctx)?),
            alignment: None,
            role: if is_variable {
                Role::State
            } else {
                Role::Activation
            },
            traffic: None,
        }
    };
    let info = TensorInfo {
        name,
        shape,
        element,
        constant: !data.is_empty(),
        quantization,
    };
    Ok((tensor, info))
}

/// The bytes of an activation or state tensor: every dimension known and the element
/// type of a fixed size, or an error saying why it cannot be planned.
fn activation_bytes(
    dims: &[i32],
    element: ElementType,
    ctx: impl Fn() -> String,
) -> Result<u64, TfliteError> {
    if let Some(&d) = dims.iter().find(|&&d| d < 0) {
        return Err(TfliteError::Unsupported {
            context: ctx(),
            detail: format!(
                "shape {dims:?} has a dynamic dimension ({d}); static planning needs every \
                 dimension known (fix the shape when converting the model)"
            ),
        });
    }
    let Some(size) = element.size() else {
        return Err(TfliteError::Unsupported {
            context: ctx(),
            detail: format!(
                "element type {element} has no fixed size, so this tensor cannot be planned \
                 statically"
            ),
        });
    };
    dims.iter()
        .try_fold(size as u64, |acc, &d| acc.checked_mul(d as u64))
        .ok_or_else(|| TfliteError::Corrupt {
            context: ctx(),
            detail: format!("shape {dims:?} overflows 64 bits"),
        })
}

/// The bytes of buffer `index`: inline, or (for models over 2 GB) at a file offset.
fn buffer_data<'a>(
    file: &'a [u8],
    buffers: Option<&Vector<'a>>,
    index: usize,
) -> Result<&'a [u8], String> {
    if index == 0 {
        return Ok(&[]);
    }
    let Some(list) = buffers.filter(|l| index < l.len()) else {
        return Err(format!("buffer index {index} is out of range"));
    };
    let b = list.table(index)?;
    if let Some(data) = b.vector(0)? {
        return data.bytes();
    }
    let (offset, size) = (b.u64(1, 0)?, b.u64(2, 0)?);
    if offset <= 1 {
        return Ok(&[]);
    }
    usize::try_from(offset)
        .ok()
        .zip(usize::try_from(size).ok())
        .and_then(|(o, s)| file.get(o..o.checked_add(s)?))
        .ok_or_else(|| format!("buffer {index} lies outside the file ({size} bytes at {offset})"))
}

#[cfg(test)]
mod tests;
