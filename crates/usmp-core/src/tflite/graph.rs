//! What a kernel author needs from a `.tflite` file besides the memory plan: each
//! tensor's shape, element type and quantization, and each operator's tensors and
//! builtin options, in the runtime's own types ([`ElementType`], [`Builtin`],
//! [`Options`]). usmp-build reads it to turn scales into the fixed-point multipliers the
//! int8 kernels use, so nothing about the model is typed in by hand. It comes from the
//! same single reading of the file as the [`Model`](crate::model::Model) (see
//! [`read_tflite_graph`](super::read_tflite_graph)).

use usmp::{Builtin, ElementType, Options, Padding};

use super::flatbuffer::Table;
use super::{TfliteError, corrupt};

/// A model's tensors and operators, as the file describes them (subgraph 0).
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    /// Every tensor, by index.
    pub tensors: Vec<TensorInfo>,
    /// Every operator, in execution order.
    pub operators: Vec<Operator>,
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
    /// Its element type.
    pub element: ElementType,
    /// Whether the file holds its data (weights, biases, shape operands).
    pub constant: bool,
    /// How its integers map to real numbers; empty scales for an unquantized tensor.
    pub quantization: Quantization,
}

/// Affine quantization: `real = scale * (q - zero_point)`, per tensor (one scale) or per
/// channel along `dimension`. The owned form of the runtime's
/// [`Quantization`](usmp::Quantization), which generated code holds as `'static` data.
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
#[derive(Clone, Debug, PartialEq)]
pub struct Operator {
    /// The operator's schema name (`CONV_2D`), or a custom operator's code.
    pub op: String,
    /// The same as the runtime's enum, when it is one of those.
    pub builtin: Option<Builtin>,
    /// Its input tensors, in order; `None` for an optional input left out.
    pub inputs: Vec<Option<usize>>,
    /// Its output tensors, in order.
    pub outputs: Vec<usize>,
    /// Its builtin options.
    pub options: Options,
}

/// How a convolution or pooling operator slides over its input, from its options.
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

impl Window {
    /// The window of a convolution's or pooling's options; `None` for other options.
    pub fn of(options: &Options) -> Option<Window> {
        Some(match *options {
            Options::Conv2d {
                padding,
                stride,
                dilation,
                ..
            }
            | Options::DepthwiseConv2d {
                padding,
                stride,
                dilation,
                ..
            } => Window {
                padding,
                stride,
                dilation,
                filter: None,
            },
            Options::Pool2d {
                padding,
                stride,
                filter,
                ..
            } => Window {
                padding,
                stride,
                dilation: [1, 1],
                filter: Some(filter),
            },
            _ => return None,
        })
    }
}

impl Operator {
    /// The window of a `CONV_2D`, `DEPTHWISE_CONV_2D`, `AVERAGE_POOL_2D` or `MAX_POOL_2D`;
    /// `None` for other operators.
    pub fn window(&self) -> Option<Window> {
        Window::of(&self.options)
    }
}

/// `QuantizationParameters`: scale (slot 2), zero_point (3), quantized_dimension (6).
/// `charge` takes the bytes of the two lists from the read budget before they are copied.
pub(super) fn quantization(
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
