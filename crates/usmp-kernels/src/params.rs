//! Each kernel's parameters, as TensorFlow Lite Micro's `Prepare` computes them. The
//! build script ([`prepare`](crate::prepare), feature `prepare`) writes them as `const`
//! data of the generated module, one [`Kernel`] per operator call, so nothing is computed
//! from floats at run time.

/// One operator call's kernel and its parameters.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Kernel {
    /// RESHAPE, SQUEEZE, EXPAND_DIMS: the bytes unchanged under another shape.
    Copy,
    /// CONV_2D.
    Conv2d(&'static Conv),
    /// DEPTHWISE_CONV_2D.
    DepthwiseConv2d(&'static Conv),
    /// FULLY_CONNECTED.
    FullyConnected(&'static FullyConnected),
    /// AVERAGE_POOL_2D.
    AveragePool2d(&'static Pool),
    /// MAX_POOL_2D.
    MaxPool2d(&'static Pool),
    /// SOFTMAX, int8 in and out.
    Softmax(&'static Softmax),
    /// QUANTIZE between integer types (int8, int16, int32), or a requantizing copy.
    Requantize(&'static Requantize),
    /// SVDF, int8 input and output with int16 state.
    Svdf(&'static Svdf),
}

/// The clamp range of a fused activation, in output integers (inclusive).
pub type Range = [i32; 2];

/// CONV_2D and DEPTHWISE_CONV_2D parameters (NHWC input and output).
#[derive(Clone, Copy, Debug)]
pub struct Conv {
    /// Input shape, NHWC.
    pub input: [usize; 4],
    /// Filter shape: `[out channels, H, W, in channels per group]` for CONV_2D,
    /// `[1, H, W, out channels]` for DEPTHWISE_CONV_2D.
    pub filter: [usize; 4],
    /// Output shape, NHWC.
    pub output: [usize; 4],
    /// Stride, height then width.
    pub stride: [usize; 2],
    /// Dilation, height then width.
    pub dilation: [usize; 2],
    /// Zero rows and columns before the first input row and column.
    pub padding: [usize; 2],
    /// DEPTHWISE_CONV_2D: output channels per input channel (1 for CONV_2D).
    pub depth_multiplier: usize,
    /// Minus the input zero point.
    pub input_offset: i32,
    /// The output zero point.
    pub output_offset: i32,
    /// Fused activation's clamp range.
    pub activation: Range,
    /// Whether the call has a bias input (int32 per output channel).
    pub bias: bool,
    /// Per output channel: Q0.31 multiplier of `input scale * filter scale / output scale`.
    pub multipliers: &'static [i32],
    /// Per output channel: that multiplier's power-of-two exponent.
    pub shifts: &'static [i32],
}

/// FULLY_CONNECTED parameters (filter `[outputs, depth]`).
#[derive(Clone, Copy, Debug)]
pub struct FullyConnected {
    /// Rows of input (its elements over `depth`).
    pub batches: usize,
    /// Inputs per row: the filter's last dimension.
    pub depth: usize,
    /// Outputs per row.
    pub outputs: usize,
    /// Whether the call has a bias input.
    pub bias: bool,
    /// Minus the input zero point.
    pub input_offset: i32,
    /// Minus the filter zero point (0 for per-channel filters).
    pub filter_offset: i32,
    /// The output zero point.
    pub output_offset: i32,
    /// Fused activation's clamp range.
    pub activation: Range,
    /// One multiplier for all outputs, or one per output (per-channel filters).
    pub multipliers: &'static [i32],
    /// Their exponents, as many.
    pub shifts: &'static [i32],
}

/// AVERAGE_POOL_2D and MAX_POOL_2D parameters (NHWC).
#[derive(Clone, Copy, Debug)]
pub struct Pool {
    /// Input shape.
    pub input: [usize; 4],
    /// Output shape.
    pub output: [usize; 4],
    /// Window height and width.
    pub window: [usize; 2],
    /// Stride, height then width.
    pub stride: [usize; 2],
    /// Padding before the first row and column (padded cells are left out).
    pub padding: [usize; 2],
    /// Fused activation's clamp range.
    pub activation: Range,
}

/// SOFTMAX parameters: int8 in; int8 out (scale 1/256, zero point -128) or int16 out
/// (scale 1/65536, zero point -32768).
#[derive(Clone, Copy, Debug)]
pub struct Softmax {
    /// Rows: every dimension but the last.
    pub rows: usize,
    /// The last dimension.
    pub depth: usize,
    /// `beta * input scale` scaled for Q5.26 differences: a Q0.31 multiplier.
    pub input_multiplier: i32,
    /// Its left shift.
    pub input_left_shift: i32,
    /// Differences below this give exp = 0.
    pub diff_min: i32,
    /// The output's element type: [`Int::I8`] or [`Int::I16`].
    pub output: Int,
}

/// An integer element type of [`Requantize`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Int {
    /// `i8`.
    I8,
    /// `i16`, little-endian.
    I16,
    /// `i32`, little-endian.
    I32,
}

impl Int {
    /// Bytes per element.
    pub const fn bytes(self) -> usize {
        match self {
            Int::I8 => 1,
            Int::I16 => 2,
            Int::I32 => 4,
        }
    }

    /// The smallest and largest value.
    pub const fn range(self) -> Range {
        match self {
            Int::I8 => [i8::MIN as i32, i8::MAX as i32],
            Int::I16 => [i16::MIN as i32, i16::MAX as i32],
            Int::I32 => [i32::MIN, i32::MAX],
        }
    }
}

/// QUANTIZE from one integer type to another: `(x - input zero) * scale + output zero`.
#[derive(Clone, Copy, Debug)]
pub struct Requantize {
    /// Elements.
    pub elements: usize,
    /// Input element type.
    pub from: Int,
    /// Output element type.
    pub to: Int,
    /// The input zero point.
    pub input_zero: i32,
    /// The output zero point.
    pub output_zero: i32,
    /// Q0.31 multiplier of `input scale / output scale`.
    pub multiplier: i32,
    /// Its exponent.
    pub shift: i32,
}

/// SVDF parameters (int8 input, weights and output; int16 state and time weights).
#[derive(Clone, Copy, Debug)]
pub struct Svdf {
    /// Batches.
    pub batches: usize,
    /// Inputs per batch.
    pub inputs: usize,
    /// Filters: units times rank.
    pub filters: usize,
    /// Rank.
    pub rank: usize,
    /// Time steps of memory.
    pub memory: usize,
    /// Whether the call has a bias input.
    pub bias: bool,
    /// The input zero point.
    pub input_zero: i32,
    /// The state's zero point.
    pub state_zero: i32,
    /// The output zero point.
    pub output_zero: i32,
    /// Feature stage: `input scale * feature weight scale / state scale`, Q0.31.
    pub feature_multiplier: i32,
    /// Its exponent.
    pub feature_shift: i32,
    /// Output stage: `state scale * time weight scale / output scale`, Q0.31.
    pub output_multiplier: i32,
    /// Its exponent.
    pub output_shift: i32,
}
