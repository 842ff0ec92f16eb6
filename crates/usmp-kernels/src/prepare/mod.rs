//! Build time (feature `prepare`): each call's [`Kernel`] parameters, computed from the
//! `.tflite` as TensorFlow Lite Micro's `Prepare` computes them (the same float and double
//! expressions, the same rounding). usmp-build calls [`kernel`] once per operator call and
//! prints what it gives with [`rust`] into the generated module.
//!
//! An operator, element type or option these kernels do not run is an error here, so a
//! model the kernels cannot run fails the build instead of a call at run time.

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use usmp::{Activation, Builtin, ElementType, Options};

use crate::{Int, Kernel};

mod layout;
mod ops;
mod pointwise;
mod print;
mod stage;

pub use print::rust;
pub use stage::{PartText, stage_rust};

/// One operand of a call, as the model file describes it.
#[derive(Clone, Copy, Debug)]
pub struct Operand<'a> {
    /// Element type.
    pub element: ElementType,
    /// Shape.
    pub shape: &'a [i32],
    /// Quantization scales: one, or one per channel.
    pub scales: &'a [f32],
    /// Zero points, as many.
    pub zero_points: &'a [i64],
    /// A constant's bytes (weights, shape tensors); `None` for activations and state.
    pub constant: Option<&'a [u8]>,
}

impl Operand<'_> {
    /// Its dimensions as `usize`; an error for a negative one.
    fn dims(&self) -> Result<Vec<usize>, String> {
        self.shape
            .iter()
            .map(|&d| {
                usize::try_from(d)
                    .map_err(|_| format!("shape {:?} has a negative dimension", self.shape))
            })
            .collect()
    }

    /// Exactly `N` dimensions.
    fn dims_n<const N: usize>(&self, what: &str) -> Result<[usize; N], String> {
        let d = self.dims()?;
        d.try_into()
            .map_err(|_| format!("{what} has shape {:?}; {N} dimensions expected", self.shape))
    }

    /// Elements.
    fn elements(&self) -> Result<usize, String> {
        Ok(self.dims()?.iter().product())
    }

    /// The per-tensor scale and zero point of an int8 (or `element`) operand.
    fn quantized(&self, what: &str, element: ElementType) -> Result<(f32, i32), String> {
        if self.element != element {
            return Err(format!(
                "{what} is {:?}; these kernels take {element:?} here",
                self.element
            ));
        }
        let (Some(&s), Some(&z)) = (self.scales.first(), self.zero_points.first()) else {
            return Err(format!(
                "{what} is not quantized; these kernels run quantized models"
            ));
        };
        // Every scale (a per-channel filter has several) and the zero point, checked
        // here once: a zero, infinite or NaN scale, or a zero point outside the element's
        // range, would overflow the integer arithmetic or compute garbage later.
        if let Some(bad) = self.scales.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
            return Err(format!(
                "{what} has quantization scale {bad}; a scale is a finite number above zero: \
                 the model's quantization is broken, re-export it"
            ));
        }
        let range = match element {
            ElementType::Int8 => i64::from(i8::MIN)..=i64::from(i8::MAX),
            ElementType::UInt8 => 0..=i64::from(u8::MAX),
            ElementType::Int16 => i64::from(i16::MIN)..=i64::from(i16::MAX),
            _ => i64::from(i32::MIN)..=i64::from(i32::MAX),
        };
        if let Some(bad) = self.zero_points.iter().find(|z| !range.contains(z)) {
            return Err(format!(
                "{what} has zero point {bad}, outside {element:?}'s range {}..={}: \
                 the model's quantization is broken, re-export it",
                range.start(),
                range.end()
            ));
        }
        Ok((s, z as i32))
    }

    /// [`Operand::quantized`] for int8.
    fn int8(&self, what: &str) -> Result<(f32, i32), String> {
        self.quantized(what, ElementType::Int8)
    }
}

/// Call `op`'s kernel with its parameters, handed to `with` (they borrow from this
/// function's frame: [`rust`] prints them, a test reads them), or why these kernels cannot
/// run the call. `inputs` are in the operator's own order (`None` for a left-out optional
/// input); `op` is `None` for an operator that is not a TensorFlow Lite builtin usmp knows.
///
/// ```
/// use usmp::{Activation, Builtin, ElementType, Options};
/// use usmp_kernels::Kernel;
/// use usmp_kernels::prepare::{self, Operand};
///
/// let operand = |shape| Operand {
///     element: ElementType::Float32,
///     shape,
///     scales: &[],
///     zero_points: &[],
///     constant: None,
/// };
/// let options = Options::FullyConnected { activation: Activation::Relu6, keep_num_dims: false };
/// let inputs = [Some(operand(&[1, 4])), Some(operand(&[3, 4])), None];
/// let clamp = prepare::kernel(Some(Builtin::FullyConnected), &options, &inputs, &[operand(&[1, 3])], |k| {
///     match k {
///         Kernel::FullyConnectedFloat(p) => p.activation,
///         _ => unreachable!(),
///     }
/// });
/// assert_eq!(clamp, Ok([0.0, 6.0]));
/// ```
pub fn kernel<R>(
    op: Option<Builtin>,
    options: &Options,
    inputs: &[Option<Operand<'_>>],
    outputs: &[Operand<'_>],
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let call = Call {
        inputs,
        outputs,
        options,
    };
    let unsupported = |name: &str| {
        let names: Vec<&str> = SUPPORTED.iter().map(|b| b.name()).collect();
        Err(format!(
            "usmp-kernels has no kernel for {name}; it runs {}",
            names.join(", ")
        ))
    };
    let Some(op) = op else {
        return unsupported("this operator");
    };
    match op {
        Builtin::Reshape | Builtin::Squeeze | Builtin::ExpandDims => ops::copy(&call, with),
        Builtin::Conv2d => ops::conv(&call, false, with),
        Builtin::DepthwiseConv2d => ops::conv(&call, true, with),
        Builtin::FullyConnected => ops::fully_connected(&call, with),
        Builtin::AveragePool2d => ops::pool(&call, false, with),
        Builtin::MaxPool2d => ops::pool(&call, true, with),
        Builtin::Softmax => ops::softmax(&call, with),
        Builtin::Quantize => ops::quantize(&call, with),
        Builtin::Svdf => ops::svdf(&call, with),
        Builtin::Relu => layout::relu(&call, false, with),
        Builtin::Relu6 => layout::relu(&call, true, with),
        Builtin::Add => layout::add(&call, with),
        Builtin::Mul => layout::mul(&call, with),
        Builtin::Mean => layout::mean(&call, with),
        Builtin::Concatenation => layout::concatenation(&call, with),
        Builtin::Pad | Builtin::PadV2 => layout::pad(&call, with),
        Builtin::ResizeNearestNeighbor => layout::resize(&call, with),
        Builtin::Logistic => pointwise::sigmoid(&call, false, with),
        Builtin::Tanh => pointwise::sigmoid(&call, true, with),
        Builtin::Dequantize => pointwise::affine(&call, true, with),
        _ => unsupported(op.name()),
    }
}

/// The shifts at which call `op`'s kernel may write its output 0 over its input 0
/// ([`crate::overlap::Window`]), for a call [`kernel`] prepares; `None` where the kernel
/// certifies no overlap (or the call has no kernel: [`kernel`] says why).
pub fn window(
    op: Option<Builtin>,
    options: &Options,
    inputs: &[Option<Operand<'_>>],
    outputs: &[Operand<'_>],
) -> Option<crate::overlap::Window> {
    let call = Call {
        inputs,
        outputs,
        options,
    };
    let float = call.input(0, "the input").ok()?.element == ElementType::Float32;
    let width = if float { 4 } else { 1 };
    match op? {
        Builtin::Conv2d | Builtin::DepthwiseConv2d => {
            let depthwise = op == Some(Builtin::DepthwiseConv2d);
            let (shape, _, _) = ops::conv_shape(&call, depthwise).ok()?;
            Some(crate::conv::window(&shape, depthwise, width))
        }
        Builtin::Reshape | Builtin::Squeeze | Builtin::ExpandDims => {
            ops::copy(&call, |_| ()).ok()?;
            let output = call.output().ok()?;
            let bytes = output.elements().ok()? * output.element.size()?;
            Some(crate::quantize::copy_window(bytes))
        }
        Builtin::AveragePool2d | Builtin::MaxPool2d => {
            let (shape, _) = ops::pool_shape(&call).ok()?;
            Some(crate::pool::window(&shape, width))
        }
        // The element-wise kernels and CONCATENATION: from the parameters the call is
        // prepared with.
        other => kernel(Some(other), options, inputs, outputs, parameters_window)
            .ok()
            .flatten(),
    }
}

/// The window of an element-wise kernel ([`crate::overlap::elementwise_window`]) or of
/// CONCATENATION over its input 0 from its parameters; `None` for any other kernel, and
/// for ADD or MUL broadcasting input 1.
fn parameters_window(k: &Kernel<'_>) -> Option<crate::overlap::Window> {
    use crate::overlap::elementwise_window as each;
    match k {
        Kernel::Requantize(p) | Kernel::Relu(p) => {
            Some(each(p.elements, p.from.bytes(), p.to.bytes()))
        }
        Kernel::Logistic(p) | Kernel::Tanh(p) => Some(each(p.elements, 1, 1)),
        Kernel::Dequantize(p) => Some(crate::pointwise::affine_window(p, false)),
        Kernel::QuantizeFloat(p) => Some(crate::pointwise::affine_window(p, true)),
        Kernel::Add(p) => crate::elementwise::window(&p.shape),
        Kernel::Mul(p) => crate::elementwise::window(&p.shape),
        Kernel::Concatenation(p) => Some(crate::shape::concatenation_window(p)),
        _ => None,
    }
}

/// The operators [`kernel`] prepares.
pub const SUPPORTED: &[Builtin] = &[
    Builtin::Conv2d,
    Builtin::DepthwiseConv2d,
    Builtin::FullyConnected,
    Builtin::AveragePool2d,
    Builtin::MaxPool2d,
    Builtin::Softmax,
    Builtin::Quantize,
    Builtin::Svdf,
    Builtin::Relu,
    Builtin::Relu6,
    Builtin::Add,
    Builtin::Mul,
    Builtin::Mean,
    Builtin::Concatenation,
    Builtin::Pad,
    Builtin::PadV2,
    Builtin::ResizeNearestNeighbor,
    Builtin::Logistic,
    Builtin::Tanh,
    Builtin::Dequantize,
    Builtin::Reshape,
    Builtin::Squeeze,
    Builtin::ExpandDims,
];

/// The operands and options of the call being prepared.
struct Call<'c, 'a> {
    inputs: &'c [Option<Operand<'a>>],
    outputs: &'c [Operand<'a>],
    options: &'c Options,
}

impl<'a> Call<'_, 'a> {
    /// Input `k`, which must be present.
    fn input(&self, k: usize, what: &str) -> Result<Operand<'a>, String> {
        self.inputs
            .get(k)
            .copied()
            .flatten()
            .ok_or_else(|| format!("{what} (input {k}) is missing"))
    }

    /// Whether optional input `k` is present.
    fn has(&self, k: usize) -> bool {
        matches!(self.inputs.get(k), Some(Some(_)))
    }

    /// Output 0.
    fn output(&self) -> Result<Operand<'a>, String> {
        self.outputs
            .first()
            .copied()
            .ok_or_else(|| "the call has no output".to_string())
    }
}

/// An integer element type of QUANTIZE.
pub(super) fn int(o: &Operand<'_>, what: &str) -> Result<(Int, f32, i32), String> {
    let name = match o.element {
        ElementType::Int8 => Int::I8,
        ElementType::Int16 => Int::I16,
        ElementType::Int32 => Int::I32,
        other => {
            return Err(format!(
                "{what} is {other:?}; these kernels take Int8, Int16 or Int32 here"
            ));
        }
    };
    let (scale, zero) = o.quantized(what, o.element)?;
    Ok((name, scale, zero))
}

/// The largest left shift the kernels' rescaling takes: `x * 2^shift` is computed in 32
/// bits, and TFLite's own single-rounding path saturates at 30 as well.
const MAX_LEFT_SHIFT: i32 = 30;

/// TFLite's `QuantizeMultiplier`: `m = q * 2^shift` with `q` in [0.5, 1) as Q0.31.
///
/// A factor that is not finite, is negative, or needs a left shift past 30 comes only
/// from broken quantization (a scale of 3e38, say): TFLite Micro's C++ shifts by it all the
/// same, undefined behaviour; here it is an error, so such a model fails the build instead
/// of computing garbage.
pub fn quantize_multiplier(m: f64) -> Result<(i32, i32), String> {
    if !m.is_finite() || m < 0.0 {
        return Err(format!(
            "the quantization scales give a rescale factor of {m}; a factor is finite and \
             not negative, so a scale is a finite number above zero: re-export the model"
        ));
    }
    if m == 0.0 {
        return Ok((0, 0));
    }
    let (q, mut shift) = frexp(m);
    // `TfRound`: half away from zero, as Rust's `round`.
    let mut fixed = (q * f64::from(1u32 << 31)).round() as i64;
    if fixed == 1i64 << 31 {
        fixed /= 2;
        shift += 1;
    }
    if shift < -31 {
        shift = 0;
        fixed = 0;
    }
    if shift > MAX_LEFT_SHIFT {
        return Err(format!(
            "the quantization scales give a rescale factor of {m:e}, which would shift \
             accumulators left by {shift} bits (at most {MAX_LEFT_SHIFT} fit in 32 bits): \
             the model's scales are broken; re-export it"
        ));
    }
    Ok((fixed as i32, shift))
}

/// `x = q * 2^e`, `q` in [0.5, 1), for positive finite `x` (C's `frexp`).
pub(super) fn frexp(x: f64) -> (f64, i32) {
    if x.abs() < f64::MIN_POSITIVE {
        // Subnormal: scale into the normal range first.
        let (q, e) = frexp(x * 2f64.powi(64));
        return (q, e - 64);
    }
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32 - 1022;
    let q = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (q, exponent)
}

/// `CalculateActivationRangeQuantized` for an int8 output: the fused activation's clamp
/// range in output integers.
fn activation_range(activation: Activation, scale: f32, zero: i32) -> Result<[i32; 2], String> {
    // `Quantize`: zero + round(real / scale), the division in float.
    let q = |real: f32| zero.saturating_add((real / scale).round() as i32);
    let (lo, hi) = (i32::from(i8::MIN), i32::from(i8::MAX));
    match activation {
        Activation::None => Ok([lo, hi]),
        Activation::Relu => Ok([q(0.0).max(lo), hi]),
        Activation::Relu6 => Ok([q(0.0).max(lo), q(6.0).min(hi)]),
        Activation::ReluN1To1 => Ok([q(-1.0).max(lo), q(1.0).min(hi)]),
        other => Err(format!(
            "fused activation {other:?} is not one TFLite Micro's int8 kernels apply"
        )),
    }
}

/// `CalculateActivationRange` for a float output: the fused activation's clamp in reals.
/// TFLite leaves any other activation (TANH, SIGN_BIT) unclamped without a word; here
/// it is an error, so a fused activation is never silently dropped.
fn float_activation(activation: Activation) -> Result<[f32; 2], String> {
    match activation {
        Activation::None => Ok([f32::MIN, f32::MAX]),
        Activation::Relu => Ok([0.0, f32::MAX]),
        Activation::Relu6 => Ok([0.0, 6.0]),
        Activation::ReluN1To1 => Ok([-1.0, 1.0]),
        other => Err(format!(
            "fused activation {other:?} is not one TFLite Micro's float kernels apply"
        )),
    }
}

/// `ComputePaddingHeightWidth` for one dimension: the output size and the padding before
/// the first row or column.
fn padding(
    same: bool,
    input: usize,
    filter: usize,
    stride: usize,
    dilation: usize,
) -> Result<(usize, usize), String> {
    if stride == 0 || dilation == 0 || filter == 0 {
        return Err(format!(
            "stride {stride}, dilation {dilation} and filter size {filter} must be at least 1"
        ));
    }
    let effective = (filter - 1) * dilation + 1;
    let out = if same {
        input.div_ceil(stride)
    } else {
        (input + stride).saturating_sub(effective) / stride
    };
    let total = (out.saturating_sub(1) * stride + effective).saturating_sub(input);
    Ok((out, total / 2))
}

/// A positive option value (stride, dilation, multiplier) as `usize`.
fn positive(v: i32, what: &str) -> Result<usize, String> {
    usize::try_from(v)
        .ok()
        .filter(|&v| v > 0)
        .ok_or_else(|| format!("{what} is {v}; it must be at least 1"))
}

/// A height-then-width pair of positive options (`"stride height"`, `"stride width"`).
fn positive2(v: [i32; 2], what: &str) -> Result<[usize; 2], String> {
    Ok([
        positive(v[0], &format!("{what} height"))?,
        positive(v[1], &format!("{what} width"))?,
    ])
}

#[cfg(test)]
mod tests;
