//! What a kernel author needs from a `.tflite` file besides the memory plan: each
//! tensor's shape, element type and quantization, and each operator's tensors and
//! builtin options. A firmware's `build.rs` reads it to turn scales into the fixed-point
//! multipliers its int8 kernels use, so nothing about the model is typed in by hand.
//!
//! Options are read by slot number, in the order of the options table in TensorFlow
//! Lite's `schema.fbs` (for `DepthwiseConv2DOptions`: 0 padding, 1 stride_w, 2 stride_h,
//! 3 depth_multiplier, 4 fused_activation_function, 5 dilation_w_factor, 6
//! dilation_h_factor); an absent field reads as the default the caller gives, as the
//! schema's defaults do.

use super::flatbuffer::Table;
use super::{TfliteError, corrupt, open, type_name};

/// A model's tensors and operators, as the file describes them (subgraph 0).
#[derive(Clone, Debug)]
pub struct Graph<'a> {
    /// Every tensor, by index.
    pub tensors: Vec<TensorInfo>,
    /// Every operator, in execution order.
    pub operators: Vec<Operator<'a>>,
    /// The model's input tensors.
    pub inputs: Vec<usize>,
    /// The model's output tensors.
    pub outputs: Vec<usize>,
}

/// One tensor's description.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorInfo {
    /// Its name in the file.
    pub name: String,
    /// Its dimensions.
    pub shape: Vec<i32>,
    /// Its element type as the schema names it (`INT8`, `INT32`, `FLOAT32`, ...).
    pub element: String,
    /// The same, as the schema's `TensorType` number (9 for `INT8`).
    pub element_code: u8,
    /// Whether the file holds its data (weights, biases, shape operands).
    pub constant: bool,
    /// How its integers map to real numbers; empty scales for an unquantized tensor.
    pub quantization: Quantization,
}

/// Affine quantization: `real = scale * (q - zero_point)`, per tensor (one scale) or per
/// channel along `dimension`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Quantization {
    /// One scale per tensor, or one per channel.
    pub scales: Vec<f32>,
    /// Zero points, matching `scales`.
    pub zero_points: Vec<i64>,
    /// The channel dimension of per-channel quantization.
    pub dimension: usize,
}

/// One operator call.
#[derive(Clone, Debug)]
pub struct Operator<'a> {
    /// The builtin operator's schema name (`CONV_2D`), or a custom operator's code.
    pub op: String,
    /// Its input tensors, in order; `None` for an optional input left out.
    pub inputs: Vec<Option<usize>>,
    /// Its output tensors, in order.
    pub outputs: Vec<usize>,
    /// Its builtin options table.
    pub options: Options<'a>,
}

/// An operator's builtin options, read by slot number (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct Options<'a> {
    pub(super) table: Option<Table<'a>>,
    /// The operator's index, for messages.
    pub(super) context: usize,
}

impl Options<'_> {
    fn read<T>(
        &self,
        slot: usize,
        default: T,
        get: impl Fn(&Table<'_>) -> super::flatbuffer::Result<T>,
    ) -> Result<T, TfliteError> {
        match &self.table {
            Some(t) => get(t).map_err(corrupt(|| {
                format!("the options of operator {} (slot {slot})", self.context)
            })),
            None => Ok(default),
        }
    }

    /// A one-byte field (an enum such as padding or the fused activation, or a bool).
    pub fn byte(&self, slot: usize, default: u8) -> Result<u8, TfliteError> {
        self.read(slot, default, |t| t.u8(slot, default))
    }

    /// An `int` field.
    pub fn int(&self, slot: usize, default: i32) -> Result<i32, TfliteError> {
        self.read(slot, default, |t| {
            t.u32(slot, default as u32).map(|v| v as i32)
        })
    }

    /// A `float` field.
    pub fn float(&self, slot: usize, default: f32) -> Result<f32, TfliteError> {
        self.read(slot, default, |t| {
            t.u32(slot, default.to_bits()).map(f32::from_bits)
        })
    }
}

/// How an operator's window pads the input (`Padding` in `schema.fbs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// `SAME` (0): the output has `ceil(input / stride)` rows and columns, the input padded
    /// evenly (one more after than before when the total is odd).
    Same,
    /// `VALID` (1): no padding.
    Valid,
}

/// How a convolution or pooling operator slides over its input, from its options:
/// `Conv2DOptions`, `DepthwiseConv2DOptions` or `Pool2DOptions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The padding.
    pub padding: Padding,
    /// Steps between windows: rows, then columns.
    pub stride: [i32; 2],
    /// Steps between the window's taps: rows, then columns (1 for pooling).
    pub dilation: [i32; 2],
    /// A pooling window's rows and columns; `None` for a convolution, whose window is its
    /// filter's shape.
    pub filter: Option<[i32; 2]>,
}

impl Operator<'_> {
    /// The window of a `CONV_2D`, `DEPTHWISE_CONV_2D`, `AVERAGE_POOL_2D` or `MAX_POOL_2D`;
    /// `None` for other operators. A padding the schema does not have is an error.
    pub fn window(&self) -> Result<Option<Window>, TfliteError> {
        window(&self.op, &self.options)
    }
}

/// The slots are the schema's: every one of these tables starts with padding, stride_w and
/// stride_h; the dilations follow the fused activation (and a depthwise convolution's
/// depth multiplier before it), a pooling's window comes before its activation.
pub(super) fn window(op: &str, o: &Options<'_>) -> Result<Option<Window>, TfliteError> {
    let dilation = match op {
        "CONV_2D" => [o.int(5, 1)?, o.int(4, 1)?],
        "DEPTHWISE_CONV_2D" => [o.int(6, 1)?, o.int(5, 1)?],
        "AVERAGE_POOL_2D" | "MAX_POOL_2D" => [1, 1],
        _ => return Ok(None),
    };
    let filter = match op {
        "AVERAGE_POOL_2D" | "MAX_POOL_2D" => Some([o.int(4, 0)?, o.int(3, 0)?]),
        _ => None,
    };
    let padding = match o.byte(0, 0)? {
        0 => Padding::Same,
        1 => Padding::Valid,
        other => {
            return Err(TfliteError::Corrupt {
                context: format!("the options of operator {} ({op}, slot 0)", o.context),
                detail: format!("padding {other} is neither SAME (0) nor VALID (1)"),
            });
        }
    };
    Ok(Some(Window {
        padding,
        stride: [o.int(2, 0)?, o.int(1, 0)?],
        dilation,
        filter,
    }))
}

/// Reads the tensors and operators of a `.tflite` file, for kernel parameters.
pub fn read_graph(bytes: &[u8]) -> Result<Graph<'_>, TfliteError> {
    let file = open(bytes)?;
    let mut tensors = file.records::<TensorInfo>(file.count, "tensor")?;
    if let Some(list) = file.tensors {
        for t in 0..file.count {
            let (table, name, shape) = super::tensor_table(&file, &list, t)?;
            let ctx = || format!("tensor {t} \"{name}\"");
            let buffer = table.u32(2, 0).map_err(corrupt(ctx))? as usize;
            let constant = !super::buffer_data(bytes, file.buffers.as_ref(), buffer)
                .map_err(corrupt(ctx))?
                .is_empty();
            let element_code = table.u8(1, 0).map_err(corrupt(ctx))?;
            let element = type_name(element_code);
            file.charge(element.len(), ctx)?;
            let q = table.table(4).map_err(corrupt(ctx))?;
            let quantization = quantization(q, ctx, |bytes| file.charge(bytes, ctx))?;
            tensors.push(TensorInfo {
                name,
                shape,
                element,
                element_code,
                constant,
                quantization,
            });
        }
    }
    let mut operators = file.records::<Operator<'_>>(file.operator_count(), "operator")?;
    for i in 0..file.operator_count() {
        let op = file.operator(i)?;
        let options = op.options(i)?;
        operators.push(Operator {
            op: op.name,
            inputs: op.inputs,
            outputs: op.outputs,
            options,
        });
    }
    Ok(Graph {
        tensors,
        operators,
        inputs: file.inputs,
        outputs: file.outputs,
    })
}

/// `QuantizationParameters`: scale (slot 2), zero_point (3), quantized_dimension (6).
/// `charge` takes the bytes of the two lists from the read budget before they are copied.
fn quantization(
    table: Option<Table<'_>>,
    context: impl Fn() -> String + Copy,
    charge: impl Fn(usize) -> Result<(), TfliteError>,
) -> Result<Quantization, TfliteError> {
    let Some(q) = table else {
        return Ok(Quantization::default());
    };
    let scales = q.vector(2).map_err(corrupt(context))?;
    let zero_points = q.vector(3).map_err(corrupt(context))?;
    let len = |v: Option<super::flatbuffer::Vector<'_>>| v.map_or(0, |v| v.len());
    charge((len(scales) + len(zero_points)).saturating_mul(8))?;
    let words = |v: Option<super::flatbuffer::Vector<'_>>, width| match v {
        Some(v) => v.words(width).map_err(corrupt(context)),
        None => Ok(Vec::new()),
    };
    let scales = words(scales, 4)?
        .into_iter()
        .map(|w| f32::from_bits(w as u32))
        .collect();
    let zero_points = words(zero_points, 8)?
        .into_iter()
        .map(|w| w as i64)
        .collect();
    let dimension = q.u32(6, 0).map_err(corrupt(context))? as usize;
    Ok(Quantization {
        scales,
        zero_points,
        dimension,
    })
}
