//! CONV_2D and DEPTHWISE_CONV_2D: TensorFlow Lite Micro's reference `ConvPerChannel` and
//! `DepthwiseConvPerChannel` (int8, per-channel quantization), and its float `Conv` and
//! `DepthwiseConv`, over one set of loops each.
//!
//! Loop order (for letting an output overlap its input): batch, output row, output
//! column, output channel. Output pixel `(y, x)` is written after every input pixel of its
//! window is read, and input rows above `y * stride - padding` are never read again once
//! output row `y` begins; NHWC rows are contiguous, so an output may start where the
//! input rows it no longer needs end.

use core::ops::Range;

use crate::Error;
use crate::bytes::{clamp_f32, f32_at, int8, want, want_len};
use crate::overlap::{
    self, Bytes, Cells, Load, Put, Window, apart, apart_f32, cells, cells_f32, f32_at as load_f32,
};
use crate::params::{Conv, Float};
use crate::rows::{Frame, Ring, RowMap};

use finish::Finish;

pub(crate) mod chunked;
pub(crate) mod depthwise;
pub(crate) mod fast;
mod finish;
pub(crate) mod helium;
pub(crate) mod packed;
pub(crate) mod pairs;
pub(crate) mod patch;

/// Checks the regions against the shapes (`width` bytes per element); the input and
/// output by length, as they may be cells of one region.
fn check(
    what: [&'static str; 4],
    p: &Conv<'_>,
    width: usize,
    [input, output]: [usize; 2],
    filter: &[u8],
    bias: &[u8],
) -> Result<(), Error> {
    let channels = p.output[3];
    want_len(what[0], input, width * p.input.iter().product::<usize>())?;
    want(what[1], filter, width * p.filter.iter().product::<usize>())?;
    if p.bias {
        want(what[2], bias, 4 * channels)?;
    }
    want_len(what[3], output, width * p.output.iter().product::<usize>())
}

/// The filter taps `k` (rows or columns) of output `out` whose input row
/// `out * stride + k * dilation - pad` lies inside `0..size`: one range, computed once
/// per output row or column so the inner loops test nothing.
fn taps(
    out: usize,
    stride: usize,
    dilation: usize,
    pad: usize,
    size: usize,
    filter: usize,
) -> Range<usize> {
    let origin = out * stride;
    if dilation <= 1 {
        // The common case without its two divisions (every pixel of every call asks).
        let lo = pad.saturating_sub(origin);
        let hi = (size + pad).saturating_sub(origin).min(filter);
        return lo..hi.max(lo);
    }
    let lo = pad.saturating_sub(origin).div_ceil(dilation);
    let hi = (size + pad)
        .saturating_sub(origin)
        .div_ceil(dilation)
        .min(filter);
    lo..hi.max(lo)
}

/// CONV_2D's loops, shared by the int8 and float kernels: for each output element in
/// loop order, `mac(acc, input element, filter element, n)` over its taps inside the
/// input (filter row, column, then `n` channels contiguous in both: TFLite's order, which
/// float sums depend on), then `store(output element, output channel, acc)`. Grouped
/// when the filter has fewer input channels than the input.
fn conv_loops<A: Copy, I: RowMap, O: RowMap>(
    p: &Conv<'_>,
    frame: &Frame<I, O>,
    zero: A,
    mac: impl Fn(A, usize, usize, usize) -> A,
    mut store: impl FnMut(usize, usize, A),
) -> Result<(), Error> {
    let [batches, in_h, in_w, in_c] = p.input;
    let [out_c, f_h, f_w, f_c] = p.filter;
    let [_, _, out_w, _] = p.output;
    if f_c == 0 || in_c % f_c != 0 || out_c % (in_c / f_c).max(1) != 0 {
        return Err(Error::Parameters {
            what: "conv filter",
            problem: "input channels are not a multiple of the filter's",
        });
    }
    let per_group = out_c / (in_c / f_c).max(1);
    let ([sy, sx], [dy, dx], [py, px]) = (p.stride, p.dilation, p.padding);
    let (in_rows, out_rows, computed) = (frame.input, frame.output, frame.rows.clone());
    let (in_shape, out_shape) = (p.input, p.output);
    for b in 0..batches {
        for oy in computed.clone() {
            let rows = taps(oy, sy, dy, py, in_h, f_h);
            let out_row = out_rows.at(out_shape, b, oy);
            for ox in 0..out_w {
                let columns = taps(ox, sx, dx, px, in_w, f_w);
                for oc in 0..out_c {
                    let group = oc / per_group.max(1);
                    let mut acc = zero;
                    for fy in rows.clone() {
                        let y = in_rows.at(in_shape, b, oy * sy + fy * dy - py);
                        for fx in columns.clone() {
                            let x = ox * sx + fx * dx - px;
                            let row = y + x * in_c + group * f_c;
                            let taps = ((oc * f_h + fy) * f_w + fx) * f_c;
                            acc = mac(acc, row, taps, f_c);
                        }
                    }
                    store(out_row + ox * out_c + oc, oc, acc);
                }
            }
        }
    }
    Ok(())
}

/// DEPTHWISE_CONV_2D's loops (any depth multiplier), as [`conv_loops`]: taps by filter
/// row then column, one element each.
fn depthwise_loops<A: Copy, I: RowMap, O: RowMap>(
    p: &Conv<'_>,
    frame: &Frame<I, O>,
    zero: A,
    mac: impl Fn(A, usize, usize, usize) -> A,
    mut store: impl FnMut(usize, usize, A),
) -> Result<(), Error> {
    let [batches, in_h, in_w, in_c] = p.input;
    let [_, f_h, f_w, out_c] = p.filter;
    let [_, _, out_w, _] = p.output;
    let m = p.depth_multiplier;
    if out_c != in_c * m {
        return Err(Error::Parameters {
            what: "depthwise filter",
            problem: "output channels are not input channels times the depth multiplier",
        });
    }
    let ([sy, sx], [dy, dx], [py, px]) = (p.stride, p.dilation, p.padding);
    let (in_rows, out_rows, computed) = (frame.input, frame.output, frame.rows.clone());
    let (in_shape, out_shape) = (p.input, p.output);
    for b in 0..batches {
        for oy in computed.clone() {
            let rows = taps(oy, sy, dy, py, in_h, f_h);
            let out_row = out_rows.at(out_shape, b, oy);
            for ox in 0..out_w {
                let columns = taps(ox, sx, dx, px, in_w, f_w);
                for ic in 0..in_c {
                    for k in 0..m {
                        let oc = ic * m + k;
                        let mut acc = zero;
                        for fy in rows.clone() {
                            let y = in_rows.at(in_shape, b, oy * sy + fy * dy - py);
                            for fx in columns.clone() {
                                let x = ox * sx + fx * dx - px;
                                acc = mac(acc, y + x * in_c + ic, (fy * f_w + fx) * out_c + oc, 1);
                            }
                        }
                        store(out_row + ox * out_c + oc, oc, acc);
                    }
                }
            }
        }
    }
    Ok(())
}

/// [`conv_loops`], or with `DEPTHWISE` [`depthwise_loops`]: a constant, so each kernel
/// links only its own loops.
fn loops<const DEPTHWISE: bool, A: Copy, I: RowMap, O: RowMap>(
    p: &Conv<'_>,
    frame: &Frame<I, O>,
    zero: A,
    mac: impl Fn(A, usize, usize, usize) -> A,
    store: impl FnMut(usize, usize, A),
) -> Result<(), Error> {
    if DEPTHWISE {
        depthwise_loops(p, frame, zero, mac, store)
    } else {
        conv_loops(p, frame, zero, mac, store)
    }
}

/// Refuses per-channel multipliers and shifts that are neither one nor one per output
/// channel.
fn per_channel_lists(what: [&'static str; 4], p: &Conv<'_>) -> Result<(), Error> {
    for list in [p.multipliers, p.shifts] {
        if list.len() != 1 && list.len() != p.output[3] {
            return Err(Error::Parameters {
                what: what[3],
                problem: "per-channel multipliers do not match the output channels",
            });
        }
    }
    // The requantization (`Finish`) relies on it: only MIN * MIN saturates.
    if p.multipliers.contains(&i32::MIN) {
        return Err(Error::Parameters {
            what: what[3],
            problem: "a multiplier is -2^31, which no TFLite scale gives (0 or 2^30 to 2^31 - 1)",
        });
    }
    Ok(())
}

/// The int8 kernel over [`int8_loops`], the regions checked first.
pub(crate) fn int8_conv<const DEPTHWISE: bool, T: Load>(
    what: [&'static str; 4],
    p: &Conv<'_>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    (output, put): (usize, impl FnMut(usize, u8)),
) -> Result<(), Error> {
    check(what, p, 1, [input.len(), output], filter, bias)?;
    per_channel_lists(what, p)?;
    int8_loops::<DEPTHWISE, T, _, _>(p, &Frame::whole(p.output), input, filter, bias, put)
}

/// The int8 kernel over [`loops`], its regions checked: offset input times filter in
/// wrapping int32, plus the bias, requantized per channel. The order of reads and writes
/// [`window`] is derived from.
pub(crate) fn int8_loops<const DEPTHWISE: bool, T: Load, I: RowMap, O: RowMap>(
    p: &Conv<'_>,
    frame: &Frame<I, O>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    mut put: impl FnMut(usize, u8),
) -> Result<(), Error> {
    let finish = Finish::new(p, bias);
    loops::<DEPTHWISE, i32, I, O>(
        p,
        frame,
        0,
        |acc, i, f, n| {
            input[i..i + n]
                .iter()
                .zip(&filter[f..f + n])
                .fold(acc, |acc, (x, &w)| {
                    acc.wrapping_add(int8(w).wrapping_mul(int8(x.load()) + p.input_offset))
                })
        },
        |o, oc, acc| put(o, finish.one(oc, acc)),
    )
}

/// The float32 kernel over [`loops`]: products summed in float in TFLite's order, plus the
/// bias (0.0 without one, which turns a -0.0 sum into +0.0 as there), clamped.
pub(crate) fn float_conv<const DEPTHWISE: bool, T: Load>(
    what: [&'static str; 4],
    p: &Float<'_, Conv<'_>>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    (output, mut put): (usize, impl FnMut(usize, f32)),
) -> Result<(), Error> {
    let shape = p.shape;
    check(what, shape, 4, [input.len(), output], filter, bias)?;
    loops::<DEPTHWISE, f32, _, _>(
        shape,
        &Frame::whole(shape.output),
        0.0,
        |acc, i, f, n| {
            (0..n).fold(acc, |acc, k| {
                acc + load_f32(input, i + k) * f32_at(filter, f + k)
            })
        },
        |o, oc, acc| {
            let b = if shape.bias { f32_at(bias, oc) } else { 0.0 };
            put(o, clamp_f32(acc + b, p.activation));
        },
    )
}

const CONV: [&str; 4] = ["conv input", "conv filter", "conv bias", "conv output"];
const DEPTHWISE: [&str; 4] = [
    "depthwise input",
    "depthwise filter",
    "depthwise bias",
    "depthwise output",
];

/// What an int8 path checks before it runs: the regions' sizes, the per-channel lists.
fn checked(
    what: [&'static str; 4],
    p: &Conv<'_>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &[u8],
) -> Result<(), Error> {
    check(what, p, 1, [input.len(), output.len()], filter, bias)?;
    per_channel_lists(what, p)
}

/// A 1x1 CONV_2D over every pixel ([`fast::pointwise`]), its regions checked as
/// [`checked`] does, over an input and an output apart: the blocked matrix product each
/// core runs (DSP lanes, Helium, pixel pairs). FULLY_CONNECTED takes it too (`dense`).
pub(crate) fn pointwise_apart(
    p: &Conv<'_>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
    work: &mut [u8],
) {
    #[cfg(usmp_dsp)]
    packed::conv_1x1(p, input, filter, bias, output, work);
    // With Helium LLVM vectorises the one-pixel loops; `pairs` would stop it.
    #[cfg(all(not(usmp_dsp), not(usmp_helium)))]
    pairs::conv_1x1(p, input, filter, bias, output, work);
    #[cfg(all(not(usmp_dsp), usmp_helium))]
    if !helium::conv_1x1(p, input, filter, bias, &mut Bytes(output), work) {
        fast::conv_1x1_apart(p, input, filter, bias, output);
    }
}

/// CONV_2D, int8 (grouped when the filter has fewer input channels than the input);
/// `work` holds the call's [`work::bytes`](crate::work::bytes).
pub fn conv2d(
    p: &Conv<'_>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
    work: &mut [u8],
) -> Result<(), Error> {
    if fast::pointwise(p) {
        checked(CONV, p, input, filter, bias, output)?;
        pointwise_apart(p, input, filter, bias, output, work);
        return Ok(());
    }
    if patch::applies(p) {
        checked(CONV, p, input, filter, bias, output)?;
        let frame = Frame::whole(p.output);
        let put = &mut Bytes(output);
        if patch::conv::<{ cfg!(usmp_dsp) }, _, _, _>(p, &frame, input, filter, bias, put, work) {
            return Ok(());
        }
    }
    int8_conv::<false, _>(CONV, p, input, filter, bias, apart(output))
}

/// DEPTHWISE_CONV_2D, int8, with any depth multiplier; `work` as [`conv2d`]'s.
pub fn depthwise_conv2d(
    p: &Conv<'_>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
    work: &mut [u8],
) -> Result<(), Error> {
    depthwise::<true>(p, input, filter, bias, output, work)
}

/// [`depthwise_conv2d`]: four channels at a time where [`Conv::four_at_a_time`], a
/// channel's multiplier outputs together where [`Conv::several_at_a_time`], the general
/// loops otherwise; with `FAST` false, only the general loops are linked (for a model none
/// of whose calls can take either path).
pub(crate) fn depthwise<const FAST: bool>(
    p: &Conv<'_>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
    work: &mut [u8],
) -> Result<(), Error> {
    if FAST && (p.several_at_a_time() || p.four_at_a_time()) {
        checked(DEPTHWISE, p, input, filter, bias, output)?;
        let frame = Frame::whole(p.output);
        fast_paths::<true, _, _, _>(p, &frame, input, filter, bias, &mut Bytes(output), work);
        return Ok(());
    }
    int8_conv::<true, _>(DEPTHWISE, p, input, filter, bias, apart(output))
}

/// Output rows `frame.rows` of an int8 CONV_2D (or, with `DW`, DEPTHWISE_CONV_2D) of one
/// batch, its input and output reached through line buffers: a streamed stage's part.
/// The regions are checked against the frame; the paths are a whole call's (the 1x1
/// CONV_2D, row-local, runs as a call of one row instead).
pub(crate) fn int8_rows<const DW: bool>(
    p: &Conv<'_>,
    frame: &Frame<Ring, Ring>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
    work: &mut [u8],
) -> Result<(), Error> {
    let what = if DW { DEPTHWISE } else { CONV };
    want_len(what[0], input.len(), frame.input.len(p.input))?;
    want(what[1], filter, p.filter.iter().product::<usize>())?;
    if p.bias {
        want(what[2], bias, 4 * p.output[3])?;
    }
    want_len(what[3], output.len(), frame.output.len(p.output))?;
    per_channel_lists(what, p)?;
    let mut put = Bytes(output);
    // A multiplier above 1 in rows is the multiplier path's (`fast_paths` takes it in
    // whole calls only), after Helium's, which `fast_paths` tries first.
    if DW
        && (fast_paths::<true, _, _, _>(p, frame, input, filter, bias, &mut put, work)
            || fast::depthwise_by_multiplier_rows::<{ cfg!(usmp_dsp) }, _>(
                p, frame, input, filter, bias, &mut put, work,
            ))
    {
        return Ok(());
    }
    if !DW
        && patch::applies(p)
        && patch::conv::<{ cfg!(usmp_dsp) }, _, _, _>(p, frame, input, filter, bias, &mut put, work)
    {
        return Ok(());
    }
    int8_loops::<DW, _, _, _>(p, frame, input, filter, bias, |o, v| put.one(o, v))
}

/// CONV_2D, float32: TensorFlow Lite Micro's reference float `Conv`.
pub fn conv2d_f32(
    p: &Float<'_, Conv<'_>>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
) -> Result<(), Error> {
    float_conv::<false, _>(CONV, p, input, filter, bias, apart_f32(output))
}

/// DEPTHWISE_CONV_2D, float32: TensorFlow Lite Micro's reference float `DepthwiseConv`.
pub fn depthwise_conv2d_f32(
    p: &Float<'_, Conv<'_>>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
) -> Result<(), Error> {
    float_conv::<true, _>(DEPTHWISE, p, input, filter, bias, apart_f32(output))
}

/// The shifts at which CONV_2D (or, with `depthwise`, DEPTHWISE_CONV_2D) of shapes `p`
/// may write its output over its input, `width` bytes per element (1 for int8, 4 for
/// float32).
///
/// In loop order an output pixel's elements are its channels; pixel `(b, y, x)` reads
/// input elements from its first tap inside the input, `first = ((b·H + y0)·W + x0)·C`,
/// up. CONV_2D's output channel `oc` reads from `first + group(oc)·Cg` (groups of
/// `Cout / G` channels, `Cg` input channels each); DEPTHWISE_CONV_2D's output channel
/// `ic·M + k` reads from `first + ic`, groups of `M` (the depth multiplier) one channel
/// apart. [`overlap::most`](crate::overlap) turns that into the bound.
pub fn window(p: &Conv<'_>, depthwise: bool, width: usize) -> Window {
    let [_, in_h, in_w, in_c] = p.input;
    let [out_c, f_h, f_w, f_c] = p.filter;
    let ([sy, sx], [dy, dx], [py, px]) = (p.stride, p.dilation, p.padding);
    let (per, groups, step) = if depthwise {
        (p.depth_multiplier.max(1), in_c, 1)
    } else {
        let groups = (in_c / f_c.max(1)).max(1);
        ((out_c / groups).max(1), groups, f_c)
    };
    overlap::nhwc_window([p.input, p.output], width, [per, groups, step], |y, x| {
        let rows = taps(y, sy, dy, py, in_h, f_h);
        let columns = taps(x, sx, dx, px, in_w, f_w);
        (!rows.is_empty() && !columns.is_empty()).then(|| {
            let y0 = y * sy + rows.start * dy - py;
            (y0, x * sx + columns.start * dx - px)
        })
    })
}

/// [`conv2d`] (or, with `DW`, [`depthwise_conv2d`]) over one region holding its input and
/// its output where `shared` says, at a shift [`window`] allows.
pub fn conv2d_over<const DW: bool>(
    p: &Conv<'_>,
    region: &mut [u8],
    shared: &usmp::Shared,
    filter: &[u8],
    bias: &[u8],
    work: &mut [u8],
) -> Result<(), Error> {
    let [input, output] = overlap::split(region, shared, window(p, DW, 1))?;
    let what = if DW { DEPTHWISE } else { CONV };
    check(what, p, 1, [input.len(), output.len()], filter, bias)?;
    per_channel_lists(what, p)?;
    let frame = Frame::whole(p.output);
    if fast_paths::<DW, _, _, _>(p, &frame, input, filter, bias, &mut Cells(output), work) {
        return Ok(());
    }
    int8_loops::<DW, _, _, _>(p, &frame, input, filter, bias, cells(output).1)
}

/// The int8 paths of their own (`fast`) for a call whose regions are checked: stores
/// the outputs through `put` and returns `true`, or returns `false` when none takes the
/// call. Each is safe over its input at every shift the general order's window allows:
/// later outputs read what they read in the general order, and a block of outputs is
/// written after all its reads (traced in `overlap::tests`). The 1x1 CONV_2D runs two
/// pixels at a time with the DSP extension, each pair's input copied before its outputs
/// are written, else its pixel order four channels at a time; a small CONV_2D by patches
/// (`patch`); calls apart take `conv2d`'s own paths.
fn fast_paths<const DW: bool, T: Load, I: RowMap, O: RowMap>(
    p: &Conv<'_>,
    frame: &Frame<I, O>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    put: &mut impl Put,
    work: &mut [u8],
) -> bool {
    // The DSP extension's lanes on thumbv7em (`crate::dsp`).
    if DW {
        (cfg!(usmp_helium) && chunked::depthwise(p, frame, input, filter, bias, put, work))
            || (I::WHOLE
                && O::WHOLE
                && fast::depthwise_by_multiplier::<{ cfg!(usmp_dsp) }, _>(
                    p, input, filter, bias, put, work,
                ))
            || depthwise::by_four::<{ cfg!(usmp_dsp) }, _, _, _>(
                p, frame, input, filter, bias, put, work,
            )
    } else if fast::pointwise(p) {
        // Four pixels at a time with Helium (`helium`), else two (`pairs`), their inputs
        // copied first.
        let done = if cfg!(usmp_helium) {
            helium::conv_1x1(p, input, filter, bias, put, work)
        } else {
            pairs::conv_1x1_over::<{ cfg!(usmp_dsp) }, _>(p, input, filter, bias, put, work)
        };
        if !done {
            fast::conv_1x1::<{ cfg!(usmp_dsp) }, _>(p, input, filter, bias, put);
        }
        true
    } else if patch::applies(p) {
        patch::conv::<{ cfg!(usmp_dsp) }, _, _, _>(p, frame, input, filter, bias, put, work)
    } else {
        false
    }
}

/// [`conv2d_f32`] (or, with `DW`, [`depthwise_conv2d_f32`]) over one region, as
/// [`conv2d_over`].
pub fn conv2d_f32_over<const DW: bool>(
    p: &Float<'_, Conv<'_>>,
    region: &mut [u8],
    shared: &usmp::Shared,
    filter: &[u8],
    bias: &[u8],
) -> Result<(), Error> {
    let [input, output] = overlap::split(region, shared, window(p.shape, DW, 4))?;
    let what = if DW { DEPTHWISE } else { CONV };
    float_conv::<DW, _>(what, p, input, filter, bias, cells_f32(output))
}

#[cfg(test)]
mod tests;
