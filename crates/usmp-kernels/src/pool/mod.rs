//! AVERAGE_POOL_2D and MAX_POOL_2D: TensorFlow Lite Micro's reference pooling, int8 and
//! float32.
//! Padded cells are left out of the window (not counted as zeros).
//!
//! Loop order: batch, output row, output column, channel; output pixel `(y, x)` is
//! written after its window is read, as for convolutions.

use crate::Error;
use crate::bytes::{clamp_f32, int8, want, want_len};
#[cfg(any(test, usmp_dsp))]
use crate::dsp;
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

/// How pooling folds one channel of a window's cells: from [`START`](Fold::START), one
/// [`step`](Fold::step) per cell in the window's order (rows, then columns), then
/// [`finish`](Fold::finish) with the count of cells. `T` is the cell's value: `i32` for
/// int8, `f32` for float32.
pub(crate) trait Fold<T>: Copy {
    /// The running value.
    type Acc: Copy;
    /// The value before the first cell.
    const START: Self::Acc;
    /// `acc` with cell `v` folded in.
    fn step(acc: Self::Acc, v: T) -> Self::Acc;
    /// The output of a window of `count` cells.
    fn finish(acc: Self::Acc, count: i32) -> Result<T, Error>;

    /// Channels `c..c + 4` of a window of `count` cells folded ([`fold`]'s arguments);
    /// the int8 folds take the DSP extension's lanes where they can.
    #[inline(always)]
    fn fold4(
        rows: impl Iterator<Item = usize>,
        width: usize,
        depth: usize,
        c: usize,
        at: &impl Cells<T>,
        count: i32,
    ) -> [Self::Acc; 4] {
        let _ = count;
        fold::<T, Self, 4>(rows, width, depth, c, at)
    }
}

/// The pooling loops, int8 or float32: each output element is `F`'s fold over its
/// window's cells (read from `at`), stored by `put`.
///
/// The window's span is decided once per output pixel, and its channels are folded four
/// at a time (one pass over the window's cells for four outputs, their running values in
/// registers), then one at a time past the last four. Each channel's cells are folded in
/// the same order as one at a time, so every output is the same value. Over a shared
/// region this reads a block's cells before writing its outputs: writes only come later,
/// so [`window`]'s bound (traced channel by channel) still holds.
///
/// Out of line: a model pools once or twice, and inlined into the kernels' dispatch each
/// form added 1.5 KB of code to person_detect's Cortex-M55 firmware for 10 % of one call.
#[inline(never)]
fn pool<T: Copy, F: Fold<T>, I: RowMap, O: RowMap>(
    p: &Pool,
    frame: &Frame<I, O>,
    at: &impl Cells<T>,
    mut put: impl FnMut(usize, T),
) -> Result<(), Error> {
    let [batches, _, _, depth] = p.input;
    let [_, _, out_w, _] = p.output;
    let (in_rows, out_rows) = (frame.input, frame.output);
    let (in_shape, out_shape) = (p.input, p.output);
    for b in 0..batches {
        for oy in frame.rows.clone() {
            let out_row = out_rows.at(out_shape, b, oy);
            for ox in 0..out_w {
                let [(y0, y1), (x0, x1)] = span(p, oy, ox);
                // At most the window's size, which the prepared shapes keep small.
                let count = ((y1 - y0) * (x1 - x0)) as i32;
                let rows = (y0..y1).map(|y| in_rows.at(in_shape, b, y) + x0 * depth);
                let out = out_row + ox * depth;
                let mut c = 0;
                while c + 4 <= depth {
                    let acc = F::fold4(rows.clone(), x1 - x0, depth, c, at, count);
                    for (k, acc) in acc.into_iter().enumerate() {
                        put(out + c + k, F::finish(acc, count)?);
                    }
                    c += 4;
                }
                while c < depth {
                    let [acc] = fold::<T, F, 1>(rows.clone(), x1 - x0, depth, c, at);
                    put(out + c, F::finish(acc, count)?);
                    c += 1;
                }
            }
        }
    }
    Ok(())
}

/// Channels `c..c + N` of one window folded: `rows` are where each of its rows' first
/// cell starts, `width` its cells a row, `depth` elements apart.
#[inline(always)]
fn fold<T, F: Fold<T>, const N: usize>(
    rows: impl Iterator<Item = usize>,
    width: usize,
    depth: usize,
    c: usize,
    at: &impl Cells<T>,
) -> [F::Acc; N] {
    let mut acc = [F::START; N];
    for row in rows {
        let mut cell = row + c;
        for _ in 0..width {
            for (acc, v) in acc.iter_mut().zip(at.read::<N>(cell)) {
                *acc = F::step(*acc, v);
            }
            cell += depth;
        }
    }
    acc
}

/// Where a pooling reads its cells.
pub(crate) trait Cells<T> {
    /// Whether [`word`](Cells::word) reads cells: int8 ones.
    #[cfg(any(test, usmp_dsp))]
    const WORDS: bool = false;

    /// Elements `i..i + N` (one bounds check for the `N`).
    fn read<const N: usize>(&self, i: usize) -> [T; N];

    /// Elements `i..i + 4` as the bytes of one little-endian word, where
    /// [`WORDS`](Cells::WORDS) says so (0 elsewhere).
    #[cfg(any(test, usmp_dsp))]
    #[inline(always)]
    fn word(&self, i: usize) -> u32 {
        let _ = i;
        0
    }
}

/// Int8 cells, widened.
struct Int8<'a, L>(&'a [L]);

impl<L: Load> Cells<i32> for Int8<'_, L> {
    #[cfg(any(test, usmp_dsp))]
    const WORDS: bool = true;

    #[inline(always)]
    fn read<const N: usize>(&self, i: usize) -> [i32; N] {
        let cells = &self.0[i..i + N];
        core::array::from_fn(|k| int8(cells[k].load()))
    }

    #[cfg(any(test, usmp_dsp))]
    #[inline(always)]
    fn word(&self, i: usize) -> u32 {
        let c = &self.0[i..i + 4];
        u32::from_le_bytes([c[0].load(), c[1].load(), c[2].load(), c[3].load()])
    }
}

/// Float32 cells, four little-endian bytes each.
struct Floats<'a, L>(&'a [L]);

impl<L: Load> Cells<f32> for Floats<'_, L> {
    #[inline(always)]
    fn read<const N: usize>(&self, i: usize) -> [f32; N] {
        let cells = &self.0[4 * i..4 * (i + N)];
        core::array::from_fn(|k| f32_at(cells, k))
    }
}

/// [`pool`] over int8 cells.
pub(crate) fn pool_int8<F: Fold<i32>, L: Load>(
    p: &Pool,
    what: [&'static str; 2],
    input: &[L],
    (output, put): (usize, impl FnMut(usize, u8)),
) -> Result<(), Error> {
    sizes(p, what, 1, [input.len(), output])?;
    pool_rows::<F, L, _, _>(p, &Frame::whole(p.output), input, put)
}

/// [`pool`] over int8 cells, the regions checked: the output rows `frame` names.
pub(crate) fn pool_rows<F: Fold<i32>, L: Load, I: RowMap, O: RowMap>(
    p: &Pool,
    frame: &Frame<I, O>,
    input: &[L],
    mut put: impl FnMut(usize, u8),
) -> Result<(), Error> {
    pool::<i32, F, I, O>(p, frame, &Int8(input), |o, v| {
        put(o, v.clamp(p.activation[0], p.activation[1]) as i8 as u8)
    })
}

/// [`pool`] over float32 cells.
pub(crate) fn pool_f32<F: Fold<f32>, L: Load>(
    p: &Float<'_, Pool>,
    what: [&'static str; 2],
    input: &[L],
    (output, mut put): (usize, impl FnMut(usize, f32)),
) -> Result<(), Error> {
    sizes(p.shape, what, 4, [input.len(), output])?;
    pool::<f32, F, _, _>(
        p.shape,
        &Frame::whole(p.shape.output),
        &Floats(input),
        |o, v| put(o, clamp_f32(v, p.activation)),
    )
}

const AVERAGE: [&str; 2] = ["average pool input", "average pool output"];
const MAX: [&str; 2] = ["max pool input", "max pool output"];

/// Channels `c..c + 4` of a window's int8 cells as words ([`fold`]'s arguments), folded
/// by `step` from `start`.
#[cfg(any(test, usmp_dsp))]
#[inline(always)]
fn words<W>(
    rows: impl Iterator<Item = usize>,
    width: usize,
    depth: usize,
    c: usize,
    at: &impl Cells<i32>,
    start: W,
    step: impl Fn(W, u32) -> W,
) -> W {
    let mut acc = start;
    for row in rows {
        let mut cell = row + c;
        for _ in 0..width {
            acc = step(acc, at.word(cell));
            cell += depth;
        }
    }
    acc
}

/// Whether the int8 folds take the DSP's lanes over `at`: where it reads words.
#[cfg(any(test, usmp_dsp))]
#[inline(always)]
fn lanes<C: Cells<i32>>(_: &C) -> bool {
    C::WORDS
}

/// AVERAGE_POOL_2D's fold: the average of the cells, rounded half away from zero (int8);
/// the float sum over the float count, as TFLite's reference (float32; an empty window
/// gives NaN there too).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Average;

/// MAX_POOL_2D's fold: the largest cell (int8: -128 for none; float32: `std::max` from
/// the lowest float, so a NaN cell is kept only where the reference keeps it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Max;

impl Fold<i32> for Average {
    type Acc = i32;
    const START: i32 = 0;

    #[inline(always)]
    fn step(sum: i32, v: i32) -> i32 {
        sum.wrapping_add(v)
    }

    /// Four channels' sums in two words of 16-bit lanes, each cell's four bytes added by
    /// two SXTAB16s: windows of at most 256 cells, whose sums of int8 values fit 16 bits.
    #[cfg(any(test, usmp_dsp))]
    #[inline(always)]
    fn fold4(
        rows: impl Iterator<Item = usize>,
        width: usize,
        depth: usize,
        c: usize,
        at: &impl Cells<i32>,
        count: i32,
    ) -> [i32; 4] {
        if !lanes(at) || count > 256 {
            return fold::<i32, Self, 4>(rows, width, depth, c, at);
        }
        let (even, odd) = words(rows, width, depth, c, at, (0, 0), |(even, odd), w| {
            (dsp::sxtab16(even, w), dsp::sxtab16_odd(odd, w))
        });
        let lane = |x: u32, k: u32| i32::from((x >> (16 * k)) as u16 as i16);
        [lane(even, 0), lane(odd, 0), lane(even, 1), lane(odd, 1)]
    }

    #[inline(always)]
    fn finish(sum: i32, count: i32) -> Result<i32, Error> {
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
}

impl Fold<i32> for Max {
    type Acc = i32;
    const START: i32 = i8::MIN as i32;

    #[inline(always)]
    fn step(most: i32, v: i32) -> i32 {
        most.max(v)
    }

    /// Four channels' maxima as the bytes of one word, each cell's four bytes taken by
    /// SSUB8 and SEL.
    #[cfg(any(test, usmp_dsp))]
    #[inline(always)]
    fn fold4(
        rows: impl Iterator<Item = usize>,
        width: usize,
        depth: usize,
        c: usize,
        at: &impl Cells<i32>,
        count: i32,
    ) -> [i32; 4] {
        let _ = count;
        if !lanes(at) {
            return fold::<i32, Self, 4>(rows, width, depth, c, at);
        }
        let most = words(rows, width, depth, c, at, 0x8080_8080, dsp::max_bytes);
        core::array::from_fn(|k| int8((most >> (8 * k)) as u8))
    }

    #[inline(always)]
    fn finish(most: i32, _: i32) -> Result<i32, Error> {
        Ok(most)
    }
}

impl Fold<f32> for Average {
    type Acc = f32;
    const START: f32 = 0.0;

    #[inline(always)]
    fn step(sum: f32, v: f32) -> f32 {
        sum + v
    }

    #[inline(always)]
    fn finish(sum: f32, count: i32) -> Result<f32, Error> {
        Ok(sum / count as f32)
    }
}

impl Fold<f32> for Max {
    type Acc = f32;
    const START: f32 = f32::MIN;

    #[inline(always)]
    fn step(most: f32, v: f32) -> f32 {
        if most < v { v } else { most }
    }

    #[inline(always)]
    fn finish(most: f32, _: i32) -> Result<f32, Error> {
        Ok(most)
    }
}

/// AVERAGE_POOL_2D: the window's sum over its count, rounded half away from zero.
pub fn average_pool2d(p: &Pool, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    pool_int8::<Average, _>(p, AVERAGE, input, apart(output))
}

/// MAX_POOL_2D: the window's largest value (-128 for an empty window).
pub fn max_pool2d(p: &Pool, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    pool_int8::<Max, _>(p, MAX, input, apart(output))
}

/// AVERAGE_POOL_2D, float32.
pub fn average_pool2d_f32(
    p: &Float<'_, Pool>,
    input: &[u8],
    output: &mut [u8],
) -> Result<(), Error> {
    pool_f32::<Average, _>(p, AVERAGE, input, apart_f32(output))
}

/// MAX_POOL_2D, float32.
pub fn max_pool2d_f32(p: &Float<'_, Pool>, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    pool_f32::<Max, _>(p, MAX, input, apart_f32(output))
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
        pool_int8::<Max, _>(p, self::MAX, input, cells(output))
    } else {
        pool_int8::<Average, _>(p, AVERAGE, input, cells(output))
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
        pool_f32::<Max, _>(p, self::MAX, input, cells_f32(output))
    } else {
        pool_f32::<Average, _>(p, AVERAGE, input, cells_f32(output))
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

#[cfg(test)]
mod tests;
