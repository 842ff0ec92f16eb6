//! Each kernel's parameters, as TensorFlow Lite Micro's `Prepare` computes them. The
//! build script ([`prepare`](crate::prepare), feature `prepare`) writes them as `const`
//! data of the generated module, one [`Kernel`] per operator call, so nothing is computed
//! from floats at run time.

/// One operator call's kernel and its parameters.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Kernel<'a> {
    /// RESHAPE, SQUEEZE, EXPAND_DIMS: the bytes unchanged under another shape.
    Copy,
    /// CONV_2D.
    Conv2d(&'a Conv<'a>),
    /// DEPTHWISE_CONV_2D.
    DepthwiseConv2d(&'a Conv<'a>),
    /// FULLY_CONNECTED.
    FullyConnected(&'a FullyConnected<'a>),
    /// AVERAGE_POOL_2D.
    AveragePool2d(&'a Pool),
    /// MAX_POOL_2D.
    MaxPool2d(&'a Pool),
    /// SOFTMAX, int8 in and out.
    Softmax(&'a Softmax),
    /// QUANTIZE between integer types (int8, int16, int32), or a requantizing copy.
    Requantize(&'a Requantize),
    /// SVDF, int8 input and output with int16 state.
    Svdf(&'a Svdf),
    /// RELU and RELU6 (a requantizing clamp).
    Relu(&'a Requantize),
    /// ADD, with broadcasting.
    Add(&'a Add),
    /// MUL, with broadcasting.
    Mul(&'a Mul),
    /// CONCATENATION.
    Concatenation(&'a Concatenation<'a>),
    /// PAD and PADV2.
    Pad(&'a Pad<'a>),
    /// MEAN.
    Mean(&'a Mean),
    /// RESIZE_NEAREST_NEIGHBOR.
    ResizeNearestNeighbor(&'a Resize<'a>),
    /// LOGISTIC, int8.
    Logistic(&'a Sigmoid),
    /// TANH, int8.
    Tanh(&'a Sigmoid),
    /// DEQUANTIZE from int8 or int16 to float32.
    Dequantize(&'a Affine),
    /// QUANTIZE from float32 to int8 or int16.
    QuantizeFloat(&'a Affine),
    /// CONV_2D, float32.
    Conv2dFloat(&'a Float<'a, Conv<'a>>),
    /// DEPTHWISE_CONV_2D, float32.
    DepthwiseConv2dFloat(&'a Float<'a, Conv<'a>>),
    /// FULLY_CONNECTED, float32.
    FullyConnectedFloat(&'a Float<'a, FullyConnected<'a>>),
    /// AVERAGE_POOL_2D, float32.
    AveragePool2dFloat(&'a Float<'a, Pool>),
    /// MAX_POOL_2D, float32.
    MaxPool2dFloat(&'a Float<'a, Pool>),
    /// SOFTMAX, float32.
    SoftmaxFloat(&'a SoftmaxFloat),
    /// A streamed stage: several calls fused, run a few rows at a time
    /// ([`stage`](crate::stage)).
    Stage(&'a Stage<'a>),
}

/// The clamp range of a fused activation, in output integers (inclusive).
pub type Range = [i32; 2];

/// A streamed stage ([`stage`](crate::stage)): its calls in order. The stage call's input 0 is the first part's
/// input; its other inputs are the parts' weights; its output is the last part's; its one
/// scratch buffer holds every part's ring but the last's, in order.
#[derive(Clone, Copy, Debug)]
pub struct Stage<'a> {
    /// The fused calls, in order; each reads the one before it.
    pub parts: &'a [Part<'a>],
}

/// One call of a [`Stage`].
#[derive(Clone, Copy, Debug)]
pub struct Part<'a> {
    /// The call's kernel, as the call alone would run it.
    pub kernel: Kernel<'a>,
    /// Its output's shape, NHWC with one batch.
    pub output: [usize; 4],
    /// Its filter's index among the stage call's inputs (the bias follows where it has
    /// one); 0 for a kernel without weights.
    pub weights: usize,
    /// The rows of its output its line buffer holds; 0 for the last part, whose output
    /// is the stage's, whole.
    pub rows: usize,
}

/// CONV_2D and DEPTHWISE_CONV_2D parameters (NHWC input and output).
#[derive(Clone, Copy, Debug)]
pub struct Conv<'a> {
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
    pub multipliers: &'a [i32],
    /// Per output channel: that multiplier's power-of-two exponent.
    pub shifts: &'a [i32],
}

/// The most filter taps DEPTHWISE_CONV_2D runs four channels at a time (a 4x4 filter).
pub(crate) const MOST_TAPS: usize = 16;

impl Conv<'_> {
    /// Whether DEPTHWISE_CONV_2D with these parameters runs four channels at a time
    /// (depth multiplier 1, at most `MOST_TAPS` (16) taps) instead of its general loops; a
    /// `const fn`, so the set of kernels a model links knows it.
    pub const fn four_at_a_time(&self) -> bool {
        self.depth_multiplier == 1
            && self.filter[3] == self.input[3]
            && self.filter[1] * self.filter[2] <= MOST_TAPS
    }

    /// Whether DEPTHWISE_CONV_2D with these parameters runs each input channel's
    /// `depth_multiplier` outputs together (a multiplier of 2 or more, any filter) instead
    /// of its general loops; a `const fn`, as [`four_at_a_time`](Self::four_at_a_time).
    pub const fn several_at_a_time(&self) -> bool {
        self.depth_multiplier >= 2
            && self.filter[3] == self.input[3] * self.depth_multiplier
            && self.output[3] == self.filter[3]
    }
}

/// FULLY_CONNECTED parameters (filter `[outputs, depth]`).
#[derive(Clone, Copy, Debug)]
pub struct FullyConnected<'a> {
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
    pub multipliers: &'a [i32],
    /// Their exponents, as many.
    pub shifts: &'a [i32],
}

/// The fewest multiply-accumulates per row for which FULLY_CONNECTED runs as a 1x1
/// convolution's blocked product ([`FullyConnected::by_product`]).
pub(crate) const PRODUCT_MACS: usize = 4096;

impl FullyConnected<'_> {
    /// Whether this call runs as a 1x1 convolution of `batches` pixels, by that
    /// convolution's blocked product (DSP lanes on Cortex-M4/M7, Helium on the M55, pixel
    /// pairs elsewhere), for the same bytes as its loop: a filter without a zero point
    /// (every int8 FULLY_CONNECTED TFLite writes: its weights are symmetric), so each
    /// output is the convolution's wrapping sum; no multiplier of -2^31, the one the
    /// convolutions' requantization refuses (no TFLite scale gives it); at least 8 inputs
    /// and 4 outputs and `PRODUCT_MACS` products a row. The product's code costs
    /// 4-11 KB of flash (hello_world's firmware on a Cortex-M0 7,176 -> 13,360 bytes of
    /// `.text`), so smaller calls keep the loop and a model without such a call does not
    /// link it. A `const fn`, so the set of kernels a model links knows it.
    pub const fn by_product(&self) -> bool {
        let mut k = 0;
        while k < self.multipliers.len() {
            if self.multipliers[k] == i32::MIN {
                return false;
            }
            k += 1;
        }
        self.filter_offset == 0
            && self.depth >= 8
            && self.outputs >= 4
            && self.depth.saturating_mul(self.outputs) >= PRODUCT_MACS
    }
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

/// A float32 call of an operator that also runs on int8: the int8 parameters' shapes,
/// strides and padding, and the fused activation's clamp in reals. The shape's
/// quantization fields (zero points, multipliers, the integer clamp) do not apply to
/// float and are written as zeros and empty lists.
#[derive(Clone, Copy, Debug)]
pub struct Float<'a, P> {
    /// Shapes, strides, padding, whether there is a bias (float32, one per channel).
    pub shape: &'a P,
    /// `[lowest, highest]` output, as TFLite's `CalculateActivationRange` for floats.
    pub activation: [f32; 2],
}

/// SOFTMAX parameters, float32.
#[derive(Clone, Copy, Debug)]
pub struct SoftmaxFloat {
    /// Rows: every dimension but the last.
    pub rows: usize,
    /// The last dimension.
    pub depth: usize,
    /// The exponent's factor.
    pub beta: f32,
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
    /// The clamp: the output type's range for QUANTIZE, the activation's for RELU.
    pub clamp: Range,
}

/// LOGISTIC and TANH parameters, as TFLite Micro prepares them: the input rescaled to Q4
/// by `multiplier * 2^left_shift`, and the radius beyond which the output saturates.
#[derive(Clone, Copy, Debug)]
pub struct Sigmoid {
    /// Elements.
    pub elements: usize,
    /// The input zero point.
    pub input_zero: i32,
    /// Inputs (less the zero point) at or beyond +-radius give the output's extremes.
    pub input_range_radius: i32,
    /// Q0.31 multiplier of the input scale into Q4.
    pub input_multiplier: i32,
    /// Its exponent (a left shift).
    pub input_left_shift: i32,
}

/// DEQUANTIZE and QUANTIZE from float: `real = scale * (q - zero)`.
#[derive(Clone, Copy, Debug)]
pub struct Affine {
    /// Elements.
    pub elements: usize,
    /// The integer side's element type.
    pub int: Int,
    /// The integer side's scale.
    pub scale: f32,
    /// The integer side's zero point.
    pub zero: i32,
}

/// How two inputs broadcast to a 4-D output: each input's element stride per output
/// dimension (0 where it broadcasts).
#[derive(Clone, Copy, Debug)]
pub struct Broadcast {
    /// Output shape, extended to 4 dimensions.
    pub output: [usize; 4],
    /// Input 1's strides.
    pub first: [usize; 4],
    /// Input 2's strides.
    pub second: [usize; 4],
    /// Input 1's elements.
    pub first_elements: usize,
    /// Input 2's elements.
    pub second_elements: usize,
}

/// ADD parameters (int8): TFLite's general rescaling through a common scale.
#[derive(Clone, Copy, Debug)]
pub struct Add {
    /// Shapes.
    pub shape: Broadcast,
    /// Minus input 1's zero point.
    pub first_offset: i32,
    /// Minus input 2's zero point.
    pub second_offset: i32,
    /// Left shift before rescaling (20 for int8).
    pub left_shift: u32,
    /// Input 1's multiplier and exponent.
    pub first: [i32; 2],
    /// Input 2's multiplier and exponent.
    pub second: [i32; 2],
    /// The sum's multiplier and exponent.
    pub output: [i32; 2],
    /// The output zero point.
    pub output_offset: i32,
    /// Fused activation's clamp range.
    pub activation: Range,
}

impl Add {
    /// Whether every rescaling of the call may take the one-rounding form
    /// (`fixed::rescale`): no multiplier of `-2^31` (no TFLite scale gives one) and
    /// shifts within `-31..=30`.
    pub fn rescaled(&self) -> bool {
        [self.first, self.second, self.output]
            .iter()
            .all(|&m| one_rounding(m))
    }
}

/// A multiplier and shift that `fixed::rescale` takes: the same integer as
/// `multiply_by_quantized_multiplier`.
fn one_rounding([multiplier, shift]: [i32; 2]) -> bool {
    multiplier != i32::MIN && (-31..=30).contains(&shift)
}

/// MUL parameters (int8).
#[derive(Clone, Copy, Debug)]
pub struct Mul {
    /// Shapes.
    pub shape: Broadcast,
    /// Minus input 1's zero point.
    pub first_offset: i32,
    /// Minus input 2's zero point.
    pub second_offset: i32,
    /// The product's multiplier and exponent.
    pub output: [i32; 2],
    /// The output zero point.
    pub output_offset: i32,
    /// Fused activation's clamp range.
    pub activation: Range,
}

impl Mul {
    /// [`Add::rescaled`] for MUL's one rescaling.
    pub fn rescaled(&self) -> bool {
        one_rounding(self.output)
    }
}

/// CONCATENATION parameters (int8; every input with the output's quantization).
#[derive(Clone, Copy, Debug)]
pub struct Concatenation<'a> {
    /// Product of the dimensions before the axis.
    pub outer: usize,
    /// Each input's bytes per outer step (its axis dimension times the inner size).
    pub parts: &'a [usize],
}

/// PAD parameters: NHWC extended to 4 dimensions, bytes of one element.
#[derive(Clone, Copy, Debug)]
pub struct Pad<'a> {
    /// Input shape.
    pub input: [usize; 4],
    /// Elements before each dimension.
    pub before: [usize; 4],
    /// Output shape.
    pub output: [usize; 4],
    /// The padding value's bytes (little-endian), one element.
    pub value: &'a [u8],
}

/// MEAN parameters (int8): sums over the reduced dimensions, one rescale.
#[derive(Clone, Copy, Debug)]
pub struct Mean {
    /// Input shape, extended to 4 dimensions.
    pub input: [usize; 4],
    /// Which dimensions are reduced.
    pub reduced: [bool; 4],
    /// Elements summed per output.
    pub count: i32,
    /// The input zero point.
    pub input_zero: i32,
    /// The output zero point.
    pub output_zero: i32,
    /// `input scale / output scale / count`: multiplier, already divided by `count`.
    pub multiplier: i32,
    /// Its exponent.
    pub shift: i32,
}

/// RESIZE_NEAREST_NEIGHBOR parameters: the source row and column of each output row and
/// column, computed at build time with TFLite's float formula.
#[derive(Clone, Copy, Debug)]
pub struct Resize<'a> {
    /// Input shape, NHWC.
    pub input: [usize; 4],
    /// Source row of each output row.
    pub rows: &'a [u16],
    /// Source column of each output column.
    pub columns: &'a [u16],
    /// Bytes per element.
    pub element_bytes: usize,
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
