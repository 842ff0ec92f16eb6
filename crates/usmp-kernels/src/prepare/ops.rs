//! Each operator's `Prepare`: TensorFlow Lite Micro's formulas, in its float or double
//! precision, giving the kernel's parameters.

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use usmp::{Activation, ElementType, Options, Padding};

use super::{
    Call, Operand, activation_range, float_activation, int, padding, positive, positive2,
    quantize_multiplier,
};
use crate::{
    Conv, Float, FullyConnected, Int, Kernel, Pool, Requantize, Softmax, SoftmaxFloat, Svdf,
};

/// The bias input, if present: one value per output channel, int32 for int8 calls and
/// float32 for `float` calls.
fn bias(call: &Call<'_, '_>, k: usize, channels: usize, float: bool) -> Result<bool, String> {
    if !call.has(k) {
        return Ok(false);
    }
    let b = call.input(k, "the bias")?;
    let want = if float {
        ElementType::Float32
    } else {
        ElementType::Int32
    };
    if b.element != want {
        return Err(format!(
            "the bias is {:?}; these kernels take {want:?} biases here",
            b.element
        ));
    }
    if b.elements()? != channels {
        return Err(format!(
            "the bias has {} values for {channels} output channels",
            b.elements()?
        ));
    }
    Ok(true)
}

/// Per output channel `(multiplier, shift)` of `input scale * filter scale / output scale`
/// in double, as `PopulateConvolutionQuantizationParams`.
fn per_channel(
    input_scale: f32,
    filter: &Operand<'_>,
    output_scale: f32,
    channels: usize,
) -> Result<(Vec<i32>, Vec<i32>), String> {
    let scales = filter.scales;
    if scales.len() != 1 && scales.len() != channels {
        return Err(format!(
            "the filter has {} scales for {channels} output channels",
            scales.len()
        ));
    }
    let (mut mult, mut shift) = (Vec::new(), Vec::new());
    for c in 0..channels {
        let s = scales[if scales.len() == 1 { 0 } else { c }];
        let (m, sh) =
            quantize_multiplier(f64::from(input_scale) * f64::from(s) / f64::from(output_scale))?;
        mult.push(m);
        shift.push(sh);
    }
    Ok((mult, shift))
}

/// Whether the call runs in float32: its input 0 is, and then its other non-bias inputs
/// and its output must be too (TFLite Micro's float kernels take no mixed types).
fn float(call: &Call<'_, '_>) -> Result<bool, String> {
    if call.input(0, "the input")?.element != ElementType::Float32 {
        return Ok(false);
    }
    let filter = call.inputs.get(1).copied().flatten();
    for (what, o) in [
        ("the filter", filter),
        ("the output", call.outputs.first().copied()),
    ] {
        if let Some(o) = o
            && o.element != ElementType::Float32
        {
            return Err(format!(
                "the input is Float32 but {what} is {:?}; float calls take Float32 throughout",
                o.element
            ));
        }
    }
    Ok(true)
}

/// A float call's parameters: integer-shaped parameters `shape` (quantization zeroed) with
/// the fused activation's clamp in reals.
fn float_of<P>(shape: &P, activation: Activation) -> Result<Float<'_, P>, String> {
    let [lo, hi] = float_activation(activation)?;
    Ok(Float {
        shape,
        activation: [lo, hi],
    })
}

pub(super) fn copy<R>(
    call: &Call<'_, '_>,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let input = call.input(0, "the input")?;
    let output = call.output()?;
    let size = |o: &Operand<'_>| -> Result<usize, String> {
        let bytes = match o.element {
            ElementType::Int8 | ElementType::UInt8 | ElementType::Bool => 1,
            ElementType::Int16 | ElementType::UInt16 | ElementType::Float16 => 2,
            ElementType::Int32 | ElementType::UInt32 | ElementType::Float32 => 4,
            ElementType::Int64 | ElementType::Float64 => 8,
            other => return Err(format!("element type {other:?} has no known size")),
        };
        Ok(bytes * o.elements()?)
    };
    if size(&input)? != size(&output)? || input.element != output.element {
        return Err(format!(
            "input {:?} {:?} and output {:?} {:?} are not the same bytes",
            input.element, input.shape, output.element, output.shape
        ));
    }
    Ok(with(&Kernel::Copy))
}

/// A convolution's padding, stride, dilation and activation, from its own options.
fn conv_options(
    options: &Options,
    depthwise: bool,
) -> Result<(Padding, [i32; 2], [i32; 2], Activation), String> {
    Ok(match *options {
        Options::Conv2d {
            padding,
            stride,
            dilation,
            activation,
        } if !depthwise => (padding, stride, dilation, activation),
        Options::DepthwiseConv2d {
            padding,
            stride,
            dilation,
            activation,
            ..
        } if depthwise => (padding, stride, dilation, activation),
        other => return Err(format!("options {other:?} are not this operator's")),
    })
}

/// How many output channels each input channel makes (depthwise), or 1; an error when
/// the shapes' channels disagree.
fn depth_multiplier(
    depthwise: bool,
    i: [usize; 4],
    f: [usize; 4],
    o: [usize; 4],
) -> Result<usize, String> {
    Ok(if depthwise {
        if i[3] == 0 || !f[3].is_multiple_of(i[3]) || f[3] != o[3] {
            return Err(format!(
                "shapes {i:?} {f:?} {o:?}: output channels are not a multiple of input channels"
            ));
        }
        f[3] / i[3]
    } else {
        if f[0] != o[3] || f[3] == 0 || !i[3].is_multiple_of(f[3]) {
            return Err(format!(
                "shapes {i:?} {f:?} {o:?}: filter and channels disagree"
            ));
        }
        1
    })
}

/// CONV_2D's or DEPTHWISE_CONV_2D's shapes, checked against each other and the options,
/// as [`crate::Conv`] without its quantization; and whether the call is float32.
pub(super) fn conv_shape(
    call: &Call<'_, '_>,
    depthwise: bool,
) -> Result<(Conv<'static>, bool, Activation), String> {
    let (input, filter, output) = (
        call.input(0, "the input")?,
        call.input(1, "the filter")?,
        call.output()?,
    );
    let float = float(call)?;
    if !float && filter.element != ElementType::Int8 {
        return Err(format!(
            "the filter is {:?}; these kernels take Int8 filters",
            filter.element
        ));
    }
    let (padding_kind, stride, dilation, activation) = conv_options(call.options, depthwise)?;
    let i = input.dims_n::<4>("the input")?;
    let f = filter.dims_n::<4>("the filter")?;
    let o = output.dims_n::<4>("the output")?;
    let same = padding_kind == Padding::Same;
    let stride = positive2(stride, "stride")?;
    let dilation = positive2(dilation, "dilation")?;
    let (out_h, pad_h) = padding(same, i[1], f[1], stride[0], dilation[0])?;
    let (out_w, pad_w) = padding(same, i[2], f[2], stride[1], dilation[1])?;
    let depth_multiplier = depth_multiplier(depthwise, i, f, o)?;
    if [out_h, out_w] != [o[1], o[2]] || i[0] != o[0] {
        return Err(format!(
            "the output is {o:?}, but input {i:?}, filter {f:?} and the options give {out_h} x {out_w}"
        ));
    }
    let bias = bias(call, 2, o[3], float)?;
    let shape = Conv {
        input: i,
        filter: f,
        output: o,
        stride,
        dilation,
        padding: [pad_h, pad_w],
        depth_multiplier,
        input_offset: 0,
        output_offset: 0,
        activation: [0, 0],
        bias,
        multipliers: &[],
        shifts: &[],
    };
    Ok((shape, float, activation))
}

pub(super) fn conv<R>(
    call: &Call<'_, '_>,
    depthwise: bool,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let (c, float, activation) = conv_shape(call, depthwise)?;
    let (input, filter, output) = (
        call.input(0, "the input")?,
        call.input(1, "the filter")?,
        call.output()?,
    );
    let channels = c.output[3];
    if float {
        let f = float_of(&c, activation)?;
        return Ok(with(&if depthwise {
            Kernel::DepthwiseConv2dFloat(&f)
        } else {
            Kernel::Conv2dFloat(&f)
        }));
    }
    let (in_scale, in_zero) = input.int8("the input")?;
    let (out_scale, out_zero) = output.int8("the output")?;
    // Every filter scale and zero point checked, as for the operands above.
    filter.int8("the filter")?;
    let (mult, shift) = per_channel(in_scale, &filter, out_scale, channels)?;
    let p = Conv {
        input_offset: -in_zero,
        output_offset: out_zero,
        activation: activation_range(activation, out_scale, out_zero)?,
        multipliers: &mult,
        shifts: &shift,
        ..c
    };
    Ok(with(&if depthwise {
        Kernel::DepthwiseConv2d(&p)
    } else {
        Kernel::Conv2d(&p)
    }))
}

pub(super) fn fully_connected<R>(
    call: &Call<'_, '_>,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let (input, filter, output) = (
        call.input(0, "the input")?,
        call.input(1, "the filter")?,
        call.output()?,
    );
    let Options::FullyConnected { activation, .. } = *call.options else {
        return Err(format!(
            "options {:?} are not FULLY_CONNECTED's",
            call.options
        ));
    };
    let [outputs, depth] = filter.dims_n::<2>("the filter")?;
    let elements = input.elements()?;
    if depth == 0 || elements % depth != 0 || output.elements()? != elements / depth * outputs {
        return Err(format!(
            "input {:?}, filter {:?} and output {:?} do not agree",
            input.shape, filter.shape, output.shape
        ));
    }
    let float = float(call)?;
    let bias = bias(call, 2, outputs, float)?;
    let shape = FullyConnected {
        batches: elements / depth,
        depth,
        outputs,
        bias,
        input_offset: 0,
        filter_offset: 0,
        output_offset: 0,
        activation: [0, 0],
        multipliers: &[],
        shifts: &[],
    };
    if float {
        return Ok(with(&Kernel::FullyConnectedFloat(&float_of(
            &shape, activation,
        )?)));
    }
    let (in_scale, in_zero) = input.int8("the input")?;
    let (out_scale, out_zero) = output.int8("the output")?;
    let (f_scale, f_zero) = filter.int8("the filter")?;
    let (mult, shift, filter_offset) = if filter.scales.len() > 1 {
        let (m, s) = per_channel(in_scale, &filter, out_scale, outputs)?;
        (m, s, 0)
    } else {
        // The two float scales multiplied in float, then divided in double.
        let (m, s) = quantize_multiplier(f64::from(in_scale * f_scale) / f64::from(out_scale))?;
        (std::vec![m], std::vec![s], -f_zero)
    };
    Ok(with(&Kernel::FullyConnected(&FullyConnected {
        input_offset: -in_zero,
        filter_offset,
        output_offset: out_zero,
        activation: activation_range(activation, out_scale, out_zero)?,
        multipliers: &mult,
        shifts: &shift,
        ..shape
    })))
}

/// Pooling's shapes, checked against each other and the options, as [`crate::Pool`]
/// without its clamp; and the fused activation.
pub(super) fn pool_shape(call: &Call<'_, '_>) -> Result<(Pool, Activation), String> {
    let (input, output) = (call.input(0, "the input")?, call.output()?);
    let Options::Pool2d {
        padding: kind_of_padding,
        stride,
        filter,
        activation,
    } = *call.options
    else {
        return Err(format!("options {:?} are not Pool2D's", call.options));
    };
    let i = input.dims_n::<4>("the input")?;
    let o = output.dims_n::<4>("the output")?;
    let same = kind_of_padding == Padding::Same;
    let stride = positive2(stride, "stride")?;
    let window = positive2(filter, "filter")?;
    let (out_h, pad_h) = padding(same, i[1], window[0], stride[0], 1)?;
    let (out_w, pad_w) = padding(same, i[2], window[1], stride[1], 1)?;
    if [i[0], out_h, out_w, i[3]] != o {
        return Err(format!(
            "the output is {o:?}, but the input {i:?} and the options give {out_h} x {out_w}"
        ));
    }
    let shape = Pool {
        input: i,
        output: o,
        window,
        stride,
        padding: [pad_h, pad_w],
        activation: [0, 0],
    };
    Ok((shape, activation))
}

pub(super) fn pool<R>(
    call: &Call<'_, '_>,
    max: bool,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let (p, activation) = pool_shape(call)?;
    let (input, output) = (call.input(0, "the input")?, call.output()?);
    if float(call)? {
        let f = float_of(&p, activation)?;
        return Ok(with(&if max {
            Kernel::MaxPool2dFloat(&f)
        } else {
            Kernel::AveragePool2dFloat(&f)
        }));
    }
    let (in_scale, in_zero) = input.int8("the input")?;
    let (out_scale, out_zero) = output.int8("the output")?;
    if in_scale != out_scale || in_zero != out_zero {
        return Err(
            "input and output quantization differ; TFLite Micro's int8 pooling requires them equal"
                .to_string(),
        );
    }
    let p = Pool {
        activation: activation_range(activation, out_scale, out_zero)?,
        ..p
    };
    Ok(with(&if max {
        Kernel::MaxPool2d(&p)
    } else {
        Kernel::AveragePool2d(&p)
    }))
}

pub(super) fn softmax<R>(
    call: &Call<'_, '_>,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    const SCALED_DIFF_INTEGER_BITS: i32 = 5;
    let (input, output) = (call.input(0, "the input")?, call.output()?);
    let Options::Softmax { beta } = *call.options else {
        return Err(format!("options {:?} are not SOFTMAX's", call.options));
    };
    let depth = *input.dims()?.last().ok_or("the input is a scalar")?;
    let elements = input.elements()?;
    if depth == 0 || output.elements()? != elements {
        return Err("input and output differ in size".to_string());
    }
    if float(call)? {
        return Ok(with(&Kernel::SoftmaxFloat(&SoftmaxFloat {
            rows: elements / depth,
            depth,
            beta,
        })));
    }
    let (in_scale, _) = input.int8("the input")?;
    let out = match output.element {
        ElementType::Int8 => {
            let (scale, zero) = output.int8("the output")?;
            if scale != 1.0 / 256.0 || zero != -128 {
                return Err(
                    "an int8 SOFTMAX output must have scale 1/256 and zero point -128".to_string(),
                );
            }
            Int::I8
        }
        ElementType::Int16 => {
            let (scale, zero) = output.quantized("the output", ElementType::Int16)?;
            if (scale - 1.0 / 65536.0).abs() > 0.001 * scale || zero != -32768 {
                return Err(
                    "an int16 SOFTMAX output must have scale 1/65536 and zero point -32768"
                        .to_string(),
                );
            }
            Int::I16
        }
        other => {
            return Err(format!(
                "the output is {other:?}; these kernels write Int8 or Int16"
            ));
        }
    };
    // `PreprocessSoftmaxScaling`, in double.
    let real = (f64::from(beta)
        * f64::from(in_scale)
        * f64::from(1u32 << (31 - SCALED_DIFF_INTEGER_BITS)))
    .min(f64::from(i32::MAX));
    let (multiplier, left_shift) = quantize_multiplier(real)?;
    if !(0..31).contains(&left_shift) {
        return Err(format!(
            "beta * input scale gives a left shift of {left_shift}, outside 0..31"
        ));
    }
    // `CalculateInputRadius`.
    let radius = f64::from((1 << SCALED_DIFF_INTEGER_BITS) - 1)
        * (1u64 << (31 - SCALED_DIFF_INTEGER_BITS)) as f64
        / (1u64 << left_shift) as f64;
    Ok(with(&Kernel::Softmax(&Softmax {
        rows: elements / depth,
        depth,
        input_multiplier: multiplier,
        input_left_shift: left_shift,
        diff_min: -(radius.floor() as i32),
        output: out,
    })))
}

pub(super) fn quantize<R>(
    call: &Call<'_, '_>,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let (input, output) = (call.input(0, "the input")?, call.output()?);
    if input.element == ElementType::Float32 {
        return super::pointwise::affine(call, false, with);
    }
    let (from, in_scale, in_zero) = int(&input, "the input")?;
    let (to, out_scale, out_zero) = int(&output, "the output")?;
    if from == Int::I32 && to == Int::I32 {
        return Err(format!(
            "QUANTIZE from {from:?} to {to:?} is not one TFLite Micro runs"
        ));
    }
    let elements = input.elements()?;
    if output.elements()? != elements {
        return Err("input and output differ in size".to_string());
    }
    let (multiplier, shift) = quantize_multiplier(f64::from(in_scale) / f64::from(out_scale))?;
    Ok(with(&Kernel::Requantize(&Requantize {
        elements,
        from,
        to,
        input_zero: in_zero,
        output_zero: out_zero,
        multiplier,
        shift,
        clamp: [i32::MIN, i32::MAX],
    })))
}

pub(super) fn svdf<R>(
    call: &Call<'_, '_>,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let input = call.input(0, "the input")?;
    let feature = call.input(1, "the feature weights")?;
    let time = call.input(2, "the time weights")?;
    let state = call.input(4, "the state")?;
    let output = call.output()?;
    let (in_scale, in_zero) = input.int8("the input")?;
    let (feature_scale, _) = feature.int8("the feature weights")?;
    let (time_scale, _) = time.quantized("the time weights", ElementType::Int16)?;
    let (state_scale, state_zero) = state.quantized("the state", ElementType::Int16)?;
    let (out_scale, out_zero) = output.int8("the output")?;
    // TFLite Micro's int8 SVDF leaves the fused activation out; so do these kernels.
    let Options::Svdf { rank, .. } = *call.options else {
        return Err(format!("options {:?} are not SVDF's", call.options));
    };
    let rank = positive(rank, "rank")?;
    let [batches, inputs] = input.dims_n::<2>("the input")?;
    let [filters, feature_inputs] = feature.dims_n::<2>("the feature weights")?;
    let [time_filters, memory] = time.dims_n::<2>("the time weights")?;
    let units = filters / rank;
    if feature_inputs != inputs
        || time_filters != filters
        || filters % rank != 0
        || state.elements()? != batches * filters * memory
        || output.elements()? != batches * units
    {
        return Err(format!(
            "shapes do not agree: input {:?}, feature weights {:?}, time weights {:?}, state {:?}, output {:?}, rank {rank}",
            input.shape, feature.shape, time.shape, state.shape, output.shape
        ));
    }
    let bias = bias(call, 3, units, false)?;
    // Both effective scales in float, then widened, as `PrepareSvdf`.
    let (feature_multiplier, feature_shift) =
        quantize_multiplier(f64::from(in_scale * feature_scale / state_scale))?;
    let (output_multiplier, output_shift) =
        quantize_multiplier(f64::from(state_scale * time_scale / out_scale))?;
    Ok(with(&Kernel::Svdf(&Svdf {
        batches,
        inputs,
        filters,
        rank,
        memory,
        bias,
        input_zero: in_zero,
        state_zero,
        output_zero: out_zero,
        feature_multiplier,
        feature_shift,
        output_multiplier,
        output_shift,
    })))
}
