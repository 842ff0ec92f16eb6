//! AVERAGE_POOL_2D and MAX_POOL_2D: TensorFlow Lite Micro's reference pooling, int8 and
//! float32.
//! Padded cells are left out of the window (not counted as zeros).
//!
//! Loop order: batch, output row, output column, channel; output pixel `(y, x)` is
//! written after its window is read, as for convolutions.

use crate::Error;
use crate::bytes::{clamp_f32, int8, want, want_len};
use crate::fixed::multiply_by_quantized_multiplier;
use crate::overlap::{self, Load, Window, apart, apart_f32, cells, cells_f32, f32_at};
use crate::params::{Float, Mean, Pool};
use crate::rows::{Frame, RowMap};

/// The window of output `(oy, ox)`, clamped to the input: rows then columns, half-open.
fn span(p: &Pool, oy: usize, ox: usize) -> [(usize, usize); 2] {
    let [_, in_h, in_w, _] = p.input;
    let span = |out: usize, stride: usize, pad: usize, size: usize, len: usize| {
        let origin = out * stride;
        let start = origin.max(pad) - pad;
        let end = (origin + size).saturating_sub(pad).min(len);
        (start, end.max(start))
    };
    [
        span(oy, p.stride[0], p.padding[0], p.window[0], in_h),
        span(ox, p.stride[1], p.padding[1], p.window[1], in_w),
    ]
}

/// The input and output hold the shapes' elements of `width` bytes.
fn sizes(
    p: &Pool,
    what: [&'static str; 2],
    width: usize,
    [input, output]: [usize; 2],
) -> Result<(), Error> {
    want_len(what[0], input, width * p.input.iter().product::<usize>())?;
    want_len(what[1], output, width * p.output.iter().product::<usize>())
}

/// The pooling loops, int8 or float32: each output element is `reduce` over its
/// window's cells (`at` reads input element `i`), stored by `put`.
fn pool<T, I: RowMap, O: RowMap>(
    p: &Pool,
    frame: &Frame<I, O>,
    at: impl Fn(usize) -> T,
    reduce: impl Fn(&mut dyn Iterator<Item = T>) -> Result<T, Error>,
    mut put: impl FnMut(usize, T),
) -> Result<(), Error> {
    let [batches, _, _, depth] = p.input;
    let [_, _, out_w, _] = p.output;
    let (in_rows, out_rows, computed) = (frame.input, frame.output, frame.rows.clone());
    let (in_shape, out_shape) = (p.input, p.output);
    for b in 0..batches {
        for oy in computed.clone() {
            let out_row = out_rows.at(out_shape, b, oy);
            for ox in 0..out_w {
                let [(y0, y1), (x0, x1)] = span(p, oy, ox);
                for c in 0..depth {
                    let cells = (y0..y1).flat_map(|y| {
                        (x0..x1).map(move |x| in_rows.at(in_shape, b, y) + x * depth + c)
                    });
                    let v = reduce(&mut cells.map(&at))?;
                    put(out_row + ox * depth + c, v);
                }
            }
        }
    }
    Ok(())
}

/// [`pool`] over int8 cells.
pub(crate) fn pool_int8<L: Load>(
    p: &Pool,
    what: [&'static str; 2],
    input: &[L],
    (output, put): (usize, impl FnMut(usize, u8)),
    reduce: impl Fn(&mut dyn Iterator<Item = i32>) -> Result<i32, Error>,
) -> Result<(), Error> {
    sizes(p, what, 1, [input.len(), output])?;
    pool_rows(p, &Frame::whole(p.output), input, put, reduce)
}

/// [`pool`] over int8 cells, the regions checked: the output rows `frame` names.
pub(crate) fn pool_rows<L: Load, I: RowMap, O: RowMap>(
    p: &Pool,
    frame: &Frame<I, O>,
    input: &[L],
    mut put: impl FnMut(usize, u8),
    reduce: impl Fn(&mut dyn Iterator<Item = i32>) -> Result<i32, Error>,
) -> Result<(), Error> {
    pool(
        p,
        frame,
        |i| int8(input[i].load()),
        reduce,
        |o, v| put(o, v.clamp(p.activation[0], p.activation[1]) as i8 as u8),
    )
}

/// [`pool`] over float32 cells.
pub(crate) fn pool_f32<L: Load>(
    p: &Float<'_, Pool>,
    what: [&'static str; 2],
    input: &[L],
    (output, mut put): (usize, impl FnMut(usize, f32)),
    reduce: impl Fn(&mut dyn Iterator<Item = f32>) -> Result<f32, Error>,
) -> Result<(), Error> {
    sizes(p.shape, what, 4, [input.len(), output])?;
    pool(
        p.shape,
        &Frame::whole(p.shape.output),
        |i| f32_at(input, i),
        reduce,
        |o, v| put(o, clamp_f32(v, p.activation)),
    )
}

const AVERAGE: [&str; 2] = ["average pool input", "average pool output"];
const MAX: [&str; 2] = ["max pool input", "max pool output"];

/// The average of int8 cells, rounded half away from zero.
pub(crate) fn average(cells: &mut dyn Iterator<Item = i32>) -> Result<i32, Error> {
    let (sum, count) = cells.fold((0i32, 0i32), |(s, n), v| (s.wrapping_add(v), n + 1));
    if count == 0 {
        // TFLite Micro fails the call the same way.
        return Err(Error::Parameters {
            what: "average pool output",
            problem: "a window lies wholly in the padding",
        });
    }
    Ok(if sum > 0 {
        (sum + count / 2) / count
    } else {
        (sum - count / 2) / count
    })
}

/// The largest of int8 cells (-128 for none).
pub(crate) fn max(cells: &mut dyn Iterator<Item = i32>) -> Result<i32, Error> {
    Ok(cells.fold(i32::from(i8::MIN), i32::max))
}

/// The float sum of float32 cells divided by their count in float, as TFLite's
/// reference (an empty window gives NaN there too).
pub(crate) fn average_f32(cells: &mut dyn Iterator<Item = f32>) -> Result<f32, Error> {
    let (sum, count) = cells.fold((0.0f32, 0.0f32), |(s, n), v| (s + v, n + 1.0));
    Ok(sum / count)
}

/// `std::max` from the lowest float, so a NaN cell is kept only where the reference
/// keeps it.
pub(crate) fn max_f32(cells: &mut dyn Iterator<Item = f32>) -> Result<f32, Error> {
    Ok(cells.fold(f32::MIN, |m, v| if m < v { v } else { m }))
}

/// AVERAGE_POOL_2D: the window's sum over its count, rounded half away from zero.
pub fn average_pool2d(p: &Pool, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    pool_int8(p, AVERAGE, input, apart(output), average)
}

/// MAX_POOL_2D: the window's largest value (-128 for an empty window).
pub fn max_pool2d(p: &Pool, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    pool_int8(p, MAX, input, apart(output), max)
}

/// AVERAGE_POOL_2D, float32.
pub fn average_pool2d_f32(
    p: &Float<'_, Pool>,
    input: &[u8],
    output: &mut [u8],
) -> Result<(), Error> {
    pool_f32(p, AVERAGE, input, apart_f32(output), average_f32)
}

/// MAX_POOL_2D, float32.
pub fn max_pool2d_f32(p: &Float<'_, Pool>, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    pool_f32(p, MAX, input, apart_f32(output), max_f32)
}

/// The shifts at which pooling of shapes `p` may write its output over its input, `width`
/// bytes per element. Output pixel `(b, y, x)`'s channel `c` reads its window's cells of
/// channel `c`, from `first + c` up, where `first = ((b·H + y0)·W + x0)·C` is the window's
/// first cell inside the input: the depthwise pattern with a multiplier of 1 (groups of
/// one element, one channel apart); [`overlap::most`](crate::overlap) gives the bound.
pub fn window(p: &Pool, width: usize) -> Window {
    let depth = p.input[3];
    overlap::nhwc_window([p.input, p.output], width, [1, depth, 1], |y, x| {
        let [(y0, y1), (x0, x1)] = span(p, y, x);
        (y0 < y1 && x0 < x1).then_some((y0, x0))
    })
}

/// MAX_POOL_2D (or, without `MAX`, AVERAGE_POOL_2D) over one region holding its input and
/// its output where `shared` says, at a shift [`window`] allows.
pub fn pool2d_over<const MAX: bool>(
    p: &Pool,
    region: &mut [u8],
    shared: &usmp::Shared,
) -> Result<(), Error> {
    let [input, output] = overlap::split(region, shared, window(p, 1))?;
    if MAX {
        pool_int8(p, self::MAX, input, cells(output), max)
    } else {
        pool_int8(p, AVERAGE, input, cells(output), average)
    }
}

/// [`pool2d_over`] for float32.
pub fn pool2d_f32_over<const MAX: bool>(
    p: &Float<'_, Pool>,
    region: &mut [u8],
    shared: &usmp::Shared,
) -> Result<(), Error> {
    let [input, output] = overlap::split(region, shared, window(p.shape, 4))?;
    if MAX {
        pool_f32(p, self::MAX, input, cells_f32(output), max_f32)
    } else {
        pool_f32(p, AVERAGE, input, cells_f32(output), average_f32)
    }
}

/// MEAN (int8): each output is the sum over the reduced dimensions, less the zero points,
/// rescaled once by a multiplier already divided by the count, as TFLite Micro's
/// `QuantizedMeanOrSum`. Sums are kept per output in a register, not in scratch.
///
/// Loop order: outputs in order; each output reads all of its reduced elements first.
pub fn mean(p: &Mean, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    let d = p.input;
    want("mean input", input, d.iter().product())?;
    // Kept dimensions iterate over their size, reduced ones over 1 (and inside).
    let kept = |k: usize| if p.reduced[k] { 1 } else { d[k] };
    let inner = |k: usize| if p.reduced[k] { d[k] } else { 1 };
    let outputs: usize = (0..4).map(kept).product();
    want("mean output", output, outputs)?;
    let mut o = 0;
    for a in 0..kept(0) {
        for b in 0..kept(1) {
            for c in 0..kept(2) {
                for e in 0..kept(3) {
                    let mut sum: i32 = 0;
                    for ra in 0..inner(0) {
                        for rb in 0..inner(1) {
                            for rc in 0..inner(2) {
                                for re in 0..inner(3) {
                                    let i = [a + ra, b + rb, c + rc, e + re];
                                    let at = ((i[0] * d[1] + i[1]) * d[2] + i[2]) * d[3] + i[3];
                                    sum = sum.wrapping_add(int8(input[at]));
                                }
                            }
                        }
                    }
                    let shifted = sum.wrapping_sub(p.input_zero.wrapping_mul(p.count));
                    let v = multiply_by_quantized_multiplier(shifted, p.multiplier, p.shift)
                        .wrapping_add(p.output_zero);
                    output[o] = v.clamp(-128, 127) as i8 as u8;
                    o += 1;
                }
            }
        }
    }
    Ok(())
}
