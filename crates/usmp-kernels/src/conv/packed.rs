//! The 1x1 CONV_2D with two multiply-accumulates per instruction, the way CMSIS-NN runs it
//! on cores with the DSP extension (Cortex-M4, M7; [`crate::dsp`]): two pixels by two
//! output channels at a time. Four input bytes of each pixel come in one load and, with the
//! input offset added on the way, become two words of two 16-bit lanes (SXTAB16); four
//! filter bytes of each channel likewise (SXTB16), each shared by both pixels; one SMLAD
//! adds two products. So sixteen multiply-accumulates take four loads, eight unpackings and
//! eight SMLADs, against sixteen multiplies and about as many loads one by one.
//!
//! The same bytes as the general loops: an input byte plus its offset (-127 to 128) and a
//! filter byte fit a lane, and the products and their wrapping int32 sum are the general
//! loops' (an integer sum does not depend on its order); each output is requantized the
//! same way. Depths that are not a multiple of four finish one byte at a time, an odd
//! channel one at a time, and an odd pixel on its own (`fast::conv_1x1`'s lanes).

// Run on thumbv7em only; its lanes are portable, so every target's tests run it.
#![cfg_attr(not(usmp_dsp), allow(dead_code))]

use super::finish::Rows;
use super::{Finish, fast};
use crate::bytes::int8;
use crate::dsp::dots::dot_rows;
use crate::dsp::{Lanes, splat, sxtab16, sxtab16_odd, two_dots};
use crate::params::Conv;
use crate::plain::Carve;

/// Four bytes known to be there: one (unaligned) load.
#[inline(always)]
fn word(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// The first `whole` bytes of `x` in words.
#[inline(always)]
fn words(x: &[u8], whole: usize) -> core::slice::ChunksExact<'_, u8> {
    x[..whole].chunks_exact(4)
}

/// What every block of the call shares.
struct Shape<'a> {
    depth: usize,
    /// The depth in whole words.
    whole: usize,
    offset: i32,
    /// The offset in both lanes.
    offsets: Lanes,
    finish: Finish<'a>,
}

/// [`fast::conv_1x1_apart`]'s call, its regions checked, two pixels and two channels at a
/// time, in `work` (one pixel at a time where it is shorter than a [`Scratch`]).
pub(crate) fn conv_1x1(
    p: &Conv<'_>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
    work: &mut [u8],
) {
    let finish = Finish::new(p, bias);
    match Scratch::carve(&mut Carve::new(work), p.filter[3]) {
        Some(mut scratch) => conv_1x1_in(p, &finish, input, filter, bias, output, &mut scratch),
        None => fast::conv_1x1::<true, _>(p, input, filter, bias, &mut |o, v| output[o] = v),
    }
}

/// What [`conv_1x1_in`] works in, cut from the call's work once per call, not per pixel
/// pair (clearing it cost a 1,024-byte memclr per pair).
pub(crate) struct Scratch<'w> {
    /// A pixel pair's input in 16-bit lanes.
    widened: &'w mut [u32],
    /// Its sums before they are finished.
    rows: &'w mut Rows,
}

impl<'w> Scratch<'w> {
    /// For pixels of `depth` bytes (at most [`MOST_PAIRED`]), from `work`.
    pub(crate) fn carve(work: &mut Carve<'w>, depth: usize) -> Option<Self> {
        Some(Scratch {
            widened: work.slice(depth.min(MOST_PAIRED))?,
            rows: work.one()?,
        })
    }
}

/// [`conv_1x1`] finished by `finish` (the call's, made once where a call runs as many
/// calls of a pixel pair), working in `scratch`.
#[inline(always)]
pub(super) fn conv_1x1_in(
    p: &Conv<'_>,
    finish: &Finish<'_>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
    scratch: &mut Scratch<'_>,
) {
    let (depth, channels) = (p.filter[3], p.output[3]);
    // Offsets are -127 to 128 (a zero point's negation); the general loops take any.
    let Ok(lane) = i16::try_from(p.input_offset) else {
        return fast::conv_1x1_apart(p, input, filter, bias, output);
    };
    if depth > MOST_PAIRED {
        // Too deep for the widened pair: one pixel at a time, in lanes.
        let put = &mut |o: usize, v| output[o] = v;
        fast::conv_1x1::<true, _>(p, input, filter, bias, put);
        return;
    }
    let shape = Shape {
        depth,
        whole: depth - depth % 4,
        offset: p.input_offset,
        offsets: splat(lane),
        finish: *finish,
    };
    let mut pairs = input.chunks_exact(2 * depth);
    let mut outs = output.chunks_exact_mut(2 * channels);
    for (xs, out) in pairs.by_ref().zip(outs.by_ref()) {
        let (a, b) = xs.split_at(depth);
        let (oa, ob) = out.split_at_mut(channels);
        two_pixels(&shape, filter, [a, b], [oa, ob], scratch);
    }
    // An odd pixel last, on its own: four channels at a time, in the same lanes.
    let out = outs.into_remainder();
    let put = &mut |o: usize, v| out[o] = v;
    fast::conv_1x1::<true, _>(p, pairs.remainder(), filter, bias, put);
}

/// The most bytes a pixel's input or output may have for [`conv_1x1`]'s pairs and for
/// [`pairs::conv_1x1_over`](super::pairs::conv_1x1_over).
pub(crate) const MOST_PAIRED: usize = 256;

/// The sums of pixels `a` and `b` by the two channels of `pair`: `a` by each, then `b`.
#[inline(always)]
fn pair_sums(s: &Shape<'_>, widened: &[u32], pair: &[u8], [a, b]: [&[u8]; 2]) -> [i32; 4] {
    let (depth, whole) = (s.depth, s.whole);
    let (u, v) = pair.split_at(depth);
    let widened = &widened[..whole];
    let [a_u, b_u] = two_dots(widened, &u[..whole], [0, 0]);
    let [a_v, b_v] = two_dots(widened, &v[..whole], [0, 0]);
    let mut acc = [a_u, a_v, b_u, b_v];
    for k in whole..depth {
        let (xa, xb) = (int8(a[k]) + s.offset, int8(b[k]) + s.offset);
        let (wu, wv) = (int8(u[k]), int8(v[k]));
        acc[0] = acc[0].wrapping_add(wu.wrapping_mul(xa));
        acc[1] = acc[1].wrapping_add(wv.wrapping_mul(xa));
        acc[2] = acc[2].wrapping_add(wu.wrapping_mul(xb));
        acc[3] = acc[3].wrapping_add(wv.wrapping_mul(xb));
    }
    acc
}

/// Pixels `x` (each `depth` bytes, at most [`MOST_PAIRED`]) by every channel of `filter`
/// into `out`. Their whole words are widened once, offset added, into 16-bit lanes in
/// `scratch` (the call's work) in the order the loop reads them (for each
/// word: `a`'s bytes 0 and 2, 1 and 3, then `b`'s), so each pair of channels reads one run
/// of lanes and its two filter words: four SXTB16 and eight SMLAD per sixteen products,
/// as CMSIS-NN's reordered columns.
fn two_pixels(
    s: &Shape<'_>,
    filter: &[u8],
    [a, b]: [&[u8]; 2],
    [oa, ob]: [&mut [u8]; 2],
    scratch: &mut Scratch<'_>,
) {
    let (depth, whole) = (s.depth, s.whole);
    let Scratch { widened, rows } = scratch;
    let pixels = words(a, whole).zip(words(b, whole));
    for (lanes, (a, b)) in widened.chunks_exact_mut(4).zip(pixels) {
        let (a, b) = (word(a), word(b));
        lanes[0] = sxtab16(s.offsets, a);
        lanes[1] = sxtab16_odd(s.offsets, a);
        lanes[2] = sxtab16(s.offsets, b);
        lanes[3] = sxtab16_odd(s.offsets, b);
    }
    let widened = &widened[..whole];
    let mut pairs = filter.chunks_exact(2 * depth);
    let sums = |pair: &[u8]| pair_sums(s, widened, pair, [a, b]);
    let oc = if whole == depth {
        // Whole words only: each block of rows in one loop.
        s.finish.by_blocks(rows, [oa, ob], |oc, len, rows| {
            let block = filter.get(oc * depth..).unwrap_or(&[]);
            dot_rows(widened, block, rows, len)
        })
    } else {
        s.finish.pairs(rows, [oa, ob], || pairs.next().map(sums))
    };
    let w = pairs.remainder();
    if w.len() == depth {
        for (x, o) in [(a, &mut oa[oc]), (b, &mut ob[oc])] {
            let acc = x.iter().zip(w).fold(0i32, |acc, (&x, &w)| {
                acc.wrapping_add(int8(w).wrapping_mul(int8(x) + s.offset))
            });
            *o = s.finish.one(oc, acc);
        }
    }
}
