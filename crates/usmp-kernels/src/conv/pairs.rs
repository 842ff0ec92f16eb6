//! The 1x1 CONV_2D without the DSP extension (Cortex-M0, M3, M33, M55 built without
//! `target-cpu`, RISC-V), two pixels by two output channels at a time: each pixel pair's
//! input is offset and widened once into 16-bit values, interleaved (`a[0], b[0], a[1],
//! ...`), so a pair of channels reads one run of them and its two filter rows, four
//! multiply-accumulates per four loads. The same wrapping int32 sums as the general loops
//! (an integer sum does not depend on its order) and the same requantization: the same
//! bytes. An odd channel and an odd pixel are finished on their own.

use super::finish::Rows;
use super::packed::{self, MOST_PAIRED};
use super::{Finish, fast};
use crate::bytes::int8;
use crate::dsp::dots::pair_rows;
use crate::overlap::{Load, Put};
use crate::params::Conv;
use crate::plain::{Carve, carved};

/// [`fast::conv_1x1_apart`]'s call, its regions checked, two pixels and two channels at a
/// time in `work`; deeper pixels, an offset past 16 bits, or `work` shorter than a
/// [`Scratch`], go to that function.
// Called where neither the DSP form nor Helium's loops take calls apart (the host tests
// run it on every target).
#[cfg_attr(any(usmp_dsp, usmp_helium), allow(dead_code))]
pub(super) fn conv_1x1(
    p: &Conv<'_>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
    work: &mut [u8],
) {
    let finish = Finish::new(p, bias);
    match Scratch::carve(&mut Carve::new(work), p.filter[3]) {
        Some(mut scratch) => conv_1x1_by(p, &finish, input, filter, bias, output, &mut scratch),
        None => fast::conv_1x1_apart(p, input, filter, bias, output),
    }
}

/// What [`conv_1x1_by`] works in, cut from the call's work once per call, not per pixel
/// pair.
struct Scratch<'w> {
    /// A pixel pair's input, offset, interleaved.
    widened: &'w mut [i16],
    /// Its sums before they are finished.
    rows: &'w mut Rows,
}

impl<'w> Scratch<'w> {
    /// For pixels of `depth` bytes, from `work`.
    fn carve(work: &mut Carve<'w>, depth: usize) -> Option<Self> {
        Some(Scratch {
            widened: work.slice(2 * depth)?,
            rows: work.one()?,
        })
    }
}

/// The work the pairs keep for a 1x1 CONV_2D of `p` (with the DSP extension or not),
/// `over` its input (an [`Over`]: the pair's input and output copied) or apart (a
/// [`Scratch`]): none where they do not take the call.
pub(crate) fn work_bytes(p: &Conv<'_>, over: bool) -> usize {
    let (depth, channels) = (p.filter[3], p.output[3]);
    if depth > MOST_PAIRED || channels > MOST_PAIRED {
        return 0;
    }
    // Either form's lanes: 2 x `depth` i16 or `depth` u32, the same bytes.
    let scratch = carved::<i16>(2 * depth).max(carved::<u32>(depth)) + carved::<Rows>(1);
    match over {
        true => carved::<u8>(2 * depth) + carved::<u8>(2 * channels) + scratch,
        false => scratch,
    }
}

/// [`conv_1x1`] finished by `finish` (the call's, made once where a call runs as many
/// calls of a pixel pair), working in `scratch`.
#[inline(always)]
fn conv_1x1_by(
    p: &Conv<'_>,
    finish: &Finish<'_>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
    scratch: &mut Scratch<'_>,
) {
    let (depth, channels) = (p.filter[3], p.output[3]);
    let Ok(offset) = i16::try_from(p.input_offset) else {
        return fast::conv_1x1_apart(p, input, filter, bias, output);
    };
    if depth > MOST_PAIRED || offset.unsigned_abs() > i16::MAX.unsigned_abs() - 128 {
        return fast::conv_1x1_apart(p, input, filter, bias, output);
    }
    let Scratch { widened, rows } = scratch;
    let mut pairs = input.chunks_exact(2 * depth);
    let mut outs = output.chunks_exact_mut(2 * channels);
    for (xs, out) in pairs.by_ref().zip(outs.by_ref()) {
        let (a, b) = xs.split_at(depth);
        for (w, (&a, &b)) in widened.chunks_exact_mut(2).zip(a.iter().zip(b)) {
            w[0] = int8(a) as i16 + offset;
            w[1] = int8(b) as i16 + offset;
        }
        let (oa, ob) = out.split_at_mut(channels);
        two_pixels(finish, rows, &widened[..2 * depth], filter, [oa, ob]);
    }
    // An odd pixel last, on its own.
    let rest = pairs.remainder();
    if !rest.is_empty() {
        let done = input.len() - rest.len();
        let start = done / depth * channels;
        fast::conv_1x1_apart(
            &Conv {
                input: [1, 1, 1, depth],
                output: [1, 1, 1, channels],
                ..*p
            },
            rest,
            filter,
            bias,
            &mut output[start..],
        );
    }
}

/// A 1x1 CONV_2D over an input read through `T` (the cells of a region the output shares,
/// say), output element `o` stored by `put`, two pixels at a time: each pair's inputs
/// copied first, then its outputs computed (with `PACKED` by [`packed`]'s DSP form, else by
/// [`conv_1x1`]) and stored. Every read of a pair comes before every write of it, and a
/// later pair reads only higher pixels, so an output byte is written no earlier, relative
/// to the reads, than in the general loops: safe at every shift their window allows
/// (`overlap::tests` traces it). Returns `false`, having done nothing, for pixels of more
/// than [`MOST_PAIRED`] bytes.
pub(crate) fn conv_1x1_over<const PACKED: bool, T: Load>(
    p: &Conv<'_>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    put: &mut impl Put,
    work: &mut [u8],
) -> bool {
    let (depth, channels) = (p.filter[3], p.output[3]);
    if depth > MOST_PAIRED || channels > MOST_PAIRED || !fast::pointwise(p) {
        return false;
    }
    // Each pair as a call of two pixels: `packed::conv_1x1` stays the one caller of its
    // `two_pixels`, which LLVM then compiles as it did (a second caller cost the calls
    // apart 5 %).
    let pair = Conv {
        input: [1, 1, 2, depth],
        output: [1, 1, 2, channels],
        ..*p
    };
    let finish = Finish::new(p, bias);
    let pairs = input.chunks_exact(2 * depth);
    let rest = pairs.remainder();
    let (depth, channels) = (2 * depth, 2 * channels);
    // The one scratch or the other, in the same bytes of work.
    let work = &mut Carve::new(work);
    let (Some(x), Some(y)) = (work.slice(depth), work.slice(channels)) else {
        return false;
    };
    if PACKED {
        let Some(mut scratch) = packed::Scratch::carve(work, p.filter[3]) else {
            return false;
        };
        each_pair(pairs, [x, y], put, &mut |x, y| {
            packed::conv_1x1_in(&pair, &finish, x, filter, bias, y, &mut scratch)
        });
    } else {
        let Some(mut scratch) = Scratch::carve(work, p.filter[3]) else {
            return false;
        };
        each_pair(pairs, [x, y], put, &mut |x, y| {
            conv_1x1_by(&pair, &finish, x, filter, bias, y, &mut scratch)
        });
    }
    // An odd pixel last, on its own, as the general loops take it.
    let (depth, channels) = (p.filter[3], p.output[3]);
    let done = input.len() / depth - rest.len() / depth;
    fast::conv_1x1::<PACKED, _>(p, rest, filter, bias, &mut |o, v| {
        put.one(done * channels + o, v)
    });
    true
}

/// Each pixel pair of `pairs` copied into `x`, its outputs computed by `pair_of` into `y`
/// and stored by `put`.
fn each_pair<T: Load>(
    pairs: core::slice::ChunksExact<'_, T>,
    [x, y]: [&mut [u8]; 2],
    put: &mut impl Put,
    pair_of: &mut dyn FnMut(&[u8], &mut [u8]),
) {
    for (k, xs) in pairs.enumerate() {
        for (to, from) in x.iter_mut().zip(xs) {
            *to = from.load();
        }
        pair_of(x, y);
        put.row(k * y.len(), y);
    }
}

/// The outputs of a pixel pair whose inputs are `widened` (interleaved, offset) by every
/// channel of `filter`.
fn two_pixels(
    finish: &Finish<'_>,
    rows_of_sums: &mut Rows,
    widened: &[i16],
    filter: &[u8],
    [oa, ob]: [&mut [u8]; 2],
) {
    let depth = widened.len() / 2;
    let channels = oa.len().min(ob.len());
    let oc = finish.by_blocks(rows_of_sums, [oa, ob], |oc, len, sums| {
        let block = filter.get(oc * depth..).unwrap_or(&[]);
        pair_rows(widened, block, sums, len)
    });
    let last = filter.get(oc * depth..).and_then(|f| f.get(..depth));
    if let Some(u) = last.filter(|_| oc < channels && depth > 0) {
        let mut acc = [0i32; 2];
        for (x, &u) in widened.chunks_exact(2).zip(u) {
            acc[0] = acc[0].wrapping_add(i32::from(x[0]).wrapping_mul(int8(u)));
            acc[1] = acc[1].wrapping_add(i32::from(x[1]).wrapping_mul(int8(u)));
        }
        oa[oc] = finish.one(oc, acc[0]);
        ob[oc] = finish.one(oc, acc[1]);
    }
}
