//! CONV_2D and DEPTHWISE_CONV_2D with per-channel quantization: TensorFlow Lite Micro's
//! reference `ConvPerChannel` and `DepthwiseConvPerChannel`.
//!
//! Loop order (for letting an output overlap its input): batch, output row, output
//! column, output channel. Output pixel `(y, x)` is written after every input pixel of its
//! window is read, and input rows above `y * stride - padding` are never read again once
//! output row `y` begins; NHWC rows are contiguous, so an output may start where the
//! input rows it no longer needs end.

use crate::Error;
use crate::bytes::{channel, i32_at, int8, requantize, want};
use crate::params::Conv;

/// Checks the regions against the shapes and the per-channel lists against the channels.
fn check(
    what: [&'static str; 4],
    p: &Conv,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &[u8],
) -> Result<(), Error> {
    let channels = p.output[3];
    want(what[0], input, p.input.iter().product())?;
    want(what[1], filter, p.filter.iter().product())?;
    if p.bias {
        want(what[2], bias, 4 * channels)?;
    }
    want(what[3], output, p.output.iter().product())?;
    for list in [p.multipliers, p.shifts] {
        if list.len() != 1 && list.len() != channels {
            return Err(Error::Parameters {
                what: what[3],
                problem: "per-channel multipliers do not match the output channels",
            });
        }
    }
    Ok(())
}

/// Input row (or column) `out * stride + tap * dilation - padding`, if inside `size`.
fn tap(
    out: usize,
    stride: usize,
    k: usize,
    dilation: usize,
    pad: usize,
    size: usize,
) -> Option<usize> {
    (out * stride + k * dilation)
        .checked_sub(pad)
        .filter(|&v| v < size)
}

/// CONV_2D (grouped when the filter has fewer input channels than the input).
pub fn conv2d(
    p: &Conv,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
) -> Result<(), Error> {
    check(
        ["conv input", "conv filter", "conv bias", "conv output"],
        p,
        input,
        filter,
        bias,
        output,
    )?;
    let [batches, in_h, in_w, in_c] = p.input;
    let [out_c, f_h, f_w, f_c] = p.filter;
    let [_, out_h, out_w, _] = p.output;
    if f_c == 0 || in_c % f_c != 0 || out_c % (in_c / f_c).max(1) != 0 {
        return Err(Error::Parameters {
            what: "conv filter",
            problem: "input channels are not a multiple of the filter's",
        });
    }
    let per_group = out_c / (in_c / f_c).max(1);
    for b in 0..batches {
        for oy in 0..out_h {
            for ox in 0..out_w {
                for oc in 0..out_c {
                    let group = oc / per_group.max(1);
                    let mut acc: i32 = 0;
                    for fy in 0..f_h {
                        let Some(y) = tap(oy, p.stride[0], fy, p.dilation[0], p.padding[0], in_h)
                        else {
                            continue;
                        };
                        for fx in 0..f_w {
                            let Some(x) =
                                tap(ox, p.stride[1], fx, p.dilation[1], p.padding[1], in_w)
                            else {
                                continue;
                            };
                            let row = ((b * in_h + y) * in_w + x) * in_c + group * f_c;
                            let taps = ((oc * f_h + fy) * f_w + fx) * f_c;
                            for ic in 0..f_c {
                                let iv = int8(input[row + ic]) + p.input_offset;
                                acc = acc.wrapping_add(int8(filter[taps + ic]).wrapping_mul(iv));
                            }
                        }
                    }
                    if p.bias {
                        acc = acc.wrapping_add(i32_at(bias, oc));
                    }
                    output[((b * out_h + oy) * out_w + ox) * out_c + oc] = requantize(
                        acc,
                        channel(p.multipliers, oc),
                        channel(p.shifts, oc),
                        p.output_offset,
                        p.activation,
                    );
                }
            }
        }
    }
    Ok(())
}

/// DEPTHWISE_CONV_2D with any depth multiplier.
pub fn depthwise_conv2d(
    p: &Conv,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
) -> Result<(), Error> {
    check(
        [
            "depthwise input",
            "depthwise filter",
            "depthwise bias",
            "depthwise output",
        ],
        p,
        input,
        filter,
        bias,
        output,
    )?;
    let [batches, in_h, in_w, in_c] = p.input;
    let [_, f_h, f_w, out_c] = p.filter;
    let [_, out_h, out_w, _] = p.output;
    let m = p.depth_multiplier;
    if out_c != in_c * m {
        return Err(Error::Parameters {
            what: "depthwise filter",
            problem: "output channels are not input channels times the depth multiplier",
        });
    }
    for b in 0..batches {
        for oy in 0..out_h {
            for ox in 0..out_w {
                for ic in 0..in_c {
                    for k in 0..m {
                        let oc = ic * m + k;
                        let mut acc: i32 = 0;
                        for fy in 0..f_h {
                            let Some(y) =
                                tap(oy, p.stride[0], fy, p.dilation[0], p.padding[0], in_h)
                            else {
                                continue;
                            };
                            for fx in 0..f_w {
                                let Some(x) =
                                    tap(ox, p.stride[1], fx, p.dilation[1], p.padding[1], in_w)
                                else {
                                    continue;
                                };
                                let iv = int8(input[((b * in_h + y) * in_w + x) * in_c + ic])
                                    + p.input_offset;
                                let fv = int8(filter[(fy * f_w + fx) * out_c + oc]);
                                acc = acc.wrapping_add(fv.wrapping_mul(iv));
                            }
                        }
                        if p.bias {
                            acc = acc.wrapping_add(i32_at(bias, oc));
                        }
                        output[((b * out_h + oy) * out_w + ox) * out_c + oc] = requantize(
                            acc,
                            channel(p.multipliers, oc),
                            channel(p.shifts, oc),
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
