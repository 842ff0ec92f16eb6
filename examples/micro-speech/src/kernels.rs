//! TensorFlow Lite Micro's reference int8 kernels for the four operators of micro_speech,
//! on plain byte slices: the planned regions the generated `Call` hands out. Weights are
//! `i8`, biases little-endian `i32`, as in the `.tflite` file.

use crate::{DepthwiseConv, FullyConnected, KernelError, Softmax};
use usmp_kernels::fixed::{
    doubling_high_mul, exp_on_negative_values_q5, multiply_by_quantized_multiplier, reciprocal,
    rounding_shift_right,
};

fn want(what: &'static str, slice: &[u8], bytes: usize) -> Result<(), KernelError> {
    if slice.len() < bytes {
        return Err(KernelError::TooSmall {
            what,
            bytes,
            got: slice.len(),
        });
    }
    Ok(())
}

fn bias(data: &[u8], channel: usize) -> i32 {
    let at = 4 * channel;
    i32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
}

fn int8(byte: u8) -> i32 {
    i32::from(byte as i8)
}

/// Requantizes an accumulator and clamps it to the fused activation's range.
fn requantize(acc: i32, multiplier: i32, shift: i32, offset: i32, range: (i32, i32)) -> u8 {
    let v = multiply_by_quantized_multiplier(acc, multiplier, shift).wrapping_add(offset);
    v.clamp(range.0, range.1) as i8 as u8
}

/// RESHAPE: the same bytes under another shape. With the input planned in place of the
/// output there is nothing to move.
pub fn reshape(input: &[u8], output: &mut [u8]) -> Result<(), KernelError> {
    if input.is_empty() {
        return Ok(());
    }
    let n = output.len().min(input.len());
    output[..n].copy_from_slice(&input[..n]);
    Ok(())
}

/// DEPTHWISE_CONV_2D with per-channel quantization (NHWC input, 1HWC filter).
pub fn depthwise_conv(
    p: &DepthwiseConv,
    input: &[u8],
    filter: &[u8],
    bias_data: &[u8],
    output: &mut [u8],
) -> Result<(), KernelError> {
    let [batches, in_h, in_w, in_c] = p.input;
    let [_, f_h, f_w, out_c] = p.filter;
    let [_, out_h, out_w, _] = p.output;
    want("depthwise input", input, batches * in_h * in_w * in_c)?;
    want("depthwise filter", filter, f_h * f_w * out_c)?;
    want("depthwise bias", bias_data, 4 * out_c)?;
    want("depthwise output", output, batches * out_h * out_w * out_c)?;
    for b in 0..batches {
        for oy in 0..out_h {
            for ox in 0..out_w {
                for ic in 0..in_c {
                    for m in 0..p.depth_multiplier {
                        let oc = m + ic * p.depth_multiplier;
                        let mut acc: i32 = 0;
                        for fy in 0..f_h {
                            let y =
                                (oy * p.stride[0] + fy * p.dilation[0]).checked_sub(p.padding[0]);
                            let Some(y) = y.filter(|&y| y < in_h) else {
                                continue;
                            };
                            for fx in 0..f_w {
                                let x = (ox * p.stride[1] + fx * p.dilation[1])
                                    .checked_sub(p.padding[1]);
                                let Some(x) = x.filter(|&x| x < in_w) else {
                                    continue;
                                };
                                let iv = int8(input[((b * in_h + y) * in_w + x) * in_c + ic]);
                                let fv = int8(filter[(fy * f_w + fx) * out_c + oc]);
                                acc = acc.wrapping_add(fv * (iv + p.input_offset));
                            }
                        }
                        acc = acc.wrapping_add(bias(bias_data, oc));
                        output[((b * out_h + oy) * out_w + ox) * out_c + oc] = requantize(
                            acc,
                            p.multipliers[oc],
                            p.shifts[oc],
                            p.output_offset,
                            p.activation,
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

/// FULLY_CONNECTED with per-tensor quantization (filter `[outputs, depth]`).
pub fn fully_connected(
    p: &FullyConnected,
    input: &[u8],
    filter: &[u8],
    bias_data: &[u8],
    output: &mut [u8],
) -> Result<(), KernelError> {
    let (batches, depth, outputs) = (p.batches, p.depth, p.outputs);
    want("fully connected input", input, batches * depth)?;
    want("fully connected filter", filter, outputs * depth)?;
    if p.bias {
        want("fully connected bias", bias_data, 4 * outputs)?;
    }
    want("fully connected output", output, batches * outputs)?;
    for b in 0..batches {
        for o in 0..outputs {
            let row = &filter[o * depth..(o + 1) * depth];
            let column = &input[b * depth..(b + 1) * depth];
            let mut acc = row.iter().zip(column).fold(0i32, |acc, (&f, &i)| {
                acc.wrapping_add((int8(f) + p.filter_offset) * (int8(i) + p.input_offset))
            });
            if p.bias {
                acc = acc.wrapping_add(bias(bias_data, o));
            }
            output[b * outputs + o] =
                requantize(acc, p.multiplier, p.shift, p.output_offset, p.activation);
        }
    }
    Ok(())
}

/// SOFTMAX, int8 in and out (output scale 1/256, zero point -128), over the last axis.
pub fn softmax(p: &Softmax, input: &[u8], output: &mut [u8]) -> Result<(), KernelError> {
    const ACCUMULATION_INTEGER_BITS: i32 = 12;
    want("softmax input", input, p.rows * p.depth)?;
    want("softmax output", output, p.rows * p.depth)?;
    for r in 0..p.rows {
        let row = &input[r * p.depth..(r + 1) * p.depth];
        let max = row.iter().map(|&v| int8(v)).max().unwrap_or(-128);
        // exp(beta * scale * (x - max)) in Q0, or None below the cut-off.
        let exp = |v: u8| -> Option<i32> {
            let diff = int8(v) - max;
            (diff >= p.diff_min).then(|| {
                let scaled = doubling_high_mul(
                    diff.wrapping_mul(1 << p.input_left_shift),
                    p.input_multiplier,
                );
                exp_on_negative_values_q5(scaled)
            })
        };
        let sum = row.iter().filter_map(|&v| exp(v)).fold(0i32, |s, e| {
            s.wrapping_add(rounding_shift_right(e, ACCUMULATION_INTEGER_BITS as u32))
        });
        let (scale, bits_over_unit) = reciprocal(sum, ACCUMULATION_INTEGER_BITS);
        let exponent = (bits_over_unit + 31 - 8).clamp(0, 31) as u32;
        for (c, &v) in row.iter().enumerate() {
            let q = match exp(v) {
                Some(e) => {
                    let unsat = rounding_shift_right(doubling_high_mul(scale, e), exponent);
                    (unsat - 128).clamp(-128, 127)
                }
                None => -128,
            };
            output[r * p.depth + c] = q as i8 as u8;
        }
    }
    Ok(())
}
