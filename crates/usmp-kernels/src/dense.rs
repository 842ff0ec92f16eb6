//! FULLY_CONNECTED and SVDF: TensorFlow Lite Micro's reference int8 `FullyConnected`
//! (per-tensor and per-channel), its float `FullyConnected`, and
//! `EvalIntegerSvdfReference`.
//!
//! Loop order: FULLY_CONNECTED writes output row `b` after reading all of input row `b`
//! and nothing of later rows. SVDF reads its input before it writes its output, and
//! updates its state in place (shifted by one step, newest values last).

use crate::Error;
use crate::bytes::{
    channel, clamp_f32, f32_at, f32s, i16_at, i32_at, int8, put_f32, requantize, want,
};
use crate::fixed::multiply_by_quantized_multiplier;
use crate::params::{Conv, Float, FullyConnected, Svdf};

/// FULLY_CONNECTED: `output[b][o] = sum_k filter[o][k] * input[b][k] + bias[o]`, rescaled;
/// by a 1x1 convolution's blocked product where [`FullyConnected::by_product`]; `work`
/// holds the call's [`work::bytes`](crate::work::bytes).
pub fn fully_connected(
    p: &FullyConnected<'_>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
    work: &mut [u8],
) -> Result<(), Error> {
    fully_connected_by::<true>(p, input, filter, bias, output, work)
}

/// [`fully_connected`], or with `PRODUCT` false always its loop: a firmware none of whose
/// calls is [`FullyConnected::by_product`] does not link the product (`run_only`).
pub(crate) fn fully_connected_by<const PRODUCT: bool>(
    p: &FullyConnected<'_>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
    work: &mut [u8],
) -> Result<(), Error> {
    let (batches, depth, outputs) = (p.batches, p.depth, p.outputs);
    want("fully connected input", input, batches * depth)?;
    want("fully connected filter", filter, outputs * depth)?;
    if p.bias {
        want("fully connected bias", bias, 4 * outputs)?;
    }
    want("fully connected output", output, batches * outputs)?;
    for list in [p.multipliers, p.shifts] {
        if list.len() != 1 && list.len() != outputs {
            return Err(Error::Parameters {
                what: "fully connected output",
                problem: "per-channel multipliers do not match the outputs",
            });
        }
    }
    if PRODUCT && let Some(conv) = as_pointwise(p) {
        let (input, filter) = (&input[..batches * depth], &filter[..outputs * depth]);
        let bias = if p.bias { &bias[..4 * outputs] } else { bias };
        let output = &mut output[..batches * outputs];
        crate::conv::pointwise_apart(&conv, input, filter, bias, output, work);
        return Ok(());
    }
    general(p, input, filter, bias, output);
    Ok(())
}

/// FULLY_CONNECTED as a 1x1 convolution of `batches` pixels, where
/// [`FullyConnected::by_product`] says it gives the same bytes and pays.
pub(crate) fn as_pointwise<'a>(p: &FullyConnected<'a>) -> Option<Conv<'a>> {
    let (batches, depth, outputs) = (p.batches, p.depth, p.outputs);
    p.by_product().then_some(Conv {
        input: [1, batches, 1, depth],
        filter: [outputs, 1, 1, depth],
        output: [1, batches, 1, outputs],
        stride: [1, 1],
        dilation: [1, 1],
        padding: [0, 0],
        depth_multiplier: 1,
        input_offset: p.input_offset,
        output_offset: p.output_offset,
        activation: p.activation,
        bias: p.bias,
        multipliers: p.multipliers,
        shifts: p.shifts,
    })
}

/// TFLite Micro's reference loop: each output's products in input order, the filter's
/// offset added to each weight. The caller has checked the regions and lists.
#[inline(always)]
fn general(p: &FullyConnected<'_>, input: &[u8], filter: &[u8], bias: &[u8], output: &mut [u8]) {
    let (batches, depth, outputs) = (p.batches, p.depth, p.outputs);
    for b in 0..batches {
        let row = &input[b * depth..(b + 1) * depth];
        for o in 0..outputs {
            let weights = &filter[o * depth..(o + 1) * depth];
            let mut acc = weights.iter().zip(row).fold(0i32, |acc, (&f, &i)| {
                acc.wrapping_add((int8(f) + p.filter_offset).wrapping_mul(int8(i) + p.input_offset))
            });
            if p.bias {
                acc = acc.wrapping_add(i32_at(bias, o));
            }
            output[b * outputs + o] = requantize(
                acc,
                channel(p.multipliers, o),
                channel(p.shifts, o),
                p.output_offset,
                p.activation,
            );
        }
    }
}

/// FULLY_CONNECTED, float32: each output's products summed in float in input order, plus
/// the bias (or 0.0), clamped, as TFLite's reference float `FullyConnected`.
pub fn fully_connected_f32(
    p: &Float<'_, FullyConnected<'_>>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
) -> Result<(), Error> {
    let s = p.shape;
    let (batches, depth, outputs) = (s.batches, s.depth, s.outputs);
    want("fully connected input", input, 4 * batches * depth)?;
    want("fully connected filter", filter, 4 * outputs * depth)?;
    if s.bias {
        want("fully connected bias", bias, 4 * outputs)?;
    }
    want("fully connected output", output, 4 * batches * outputs)?;
    for b in 0..batches {
        for o in 0..outputs {
            let total = f32s(&input[4 * b * depth..4 * (b + 1) * depth])
                .zip(f32s(&filter[4 * o * depth..4 * (o + 1) * depth]))
                .fold(0.0f32, |acc, (x, w)| acc + x * w);
            let bias = if s.bias { f32_at(bias, o) } else { 0.0 };
            put_f32(
                output,
                b * outputs + o,
                clamp_f32(total + bias, p.activation),
            );
        }
    }
    Ok(())
}

/// SVDF: the state `[batch][filter][memory]` (int16) is shifted one step and takes the
/// feature stage's newest value; each unit sums its `rank` filters over time.
///
/// TFLite Micro keeps the per-filter sums in two int32 scratch buffers; this sums each
/// unit in a register instead (the same wrapping int32 sums), so it needs no scratch.
pub fn svdf(
    p: &Svdf,
    input: &[u8],
    feature_weights: &[u8],
    time_weights: &[u8],
    bias: &[u8],
    state: &mut [u8],
    output: &mut [u8],
) -> Result<(), Error> {
    let (filters, memory) = (p.filters, p.memory);
    let units = filters / p.rank.max(1);
    want("svdf input", input, p.batches * p.inputs)?;
    want("svdf feature weights", feature_weights, filters * p.inputs)?;
    want("svdf time weights", time_weights, 2 * filters * memory)?;
    if p.bias {
        want("svdf bias", bias, 4 * units)?;
    }
    let state_elements = p.batches * filters * memory;
    want("svdf state", state, 2 * state_elements)?;
    want("svdf output", output, p.batches * units)?;
    if state_elements == 0 {
        return Ok(());
    }
    // Shift the whole state left by one element, as the reference does.
    state.copy_within(2..2 * state_elements, 0);
    for b in 0..p.batches {
        let row = &input[b * p.inputs..(b + 1) * p.inputs];
        for f in 0..filters {
            let weights = &feature_weights[f * p.inputs..(f + 1) * p.inputs];
            let dot = weights.iter().zip(row).fold(0i32, |acc, (&w, &x)| {
                acc.wrapping_add(int8(w).wrapping_mul(int8(x) - p.input_zero))
            });
            let scaled =
                multiply_by_quantized_multiplier(dot, p.feature_multiplier, p.feature_shift)
                    .clamp(i32::from(i16::MIN), i32::from(i16::MAX));
            let newest = (p.state_zero.wrapping_add(scaled)) as i16;
            let at = 2 * ((b * filters + f) * memory + memory - 1);
            state[at..at + 2].copy_from_slice(&newest.to_le_bytes());
        }
    }
    for b in 0..p.batches {
        for u in 0..units {
            let mut acc = if p.bias { i32_at(bias, u) } else { 0 };
            for f in u * p.rank..(u + 1) * p.rank {
                for t in 0..memory {
                    let w = i32::from(i16_at(time_weights, f * memory + t));
                    let s = i32::from(i16_at(state, (b * filters + f) * memory + t));
                    acc = acc.wrapping_add(w.wrapping_mul(s - p.state_zero));
                }
            }
            let v = multiply_by_quantized_multiplier(acc, p.output_multiplier, p.output_shift)
                .wrapping_add(p.output_zero);
            output[b * units + u] = v.clamp(-128, 127) as i8 as u8;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
