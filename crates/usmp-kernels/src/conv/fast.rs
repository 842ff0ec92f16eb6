//! Faster loops for the common shapes, each giving exactly the general loops' bytes:
//! a 1x1 CONV_2D as a matrix product, DEPTHWISE_CONV_2D of depth multiplier 1 four
//! channels at a time, and of a larger multiplier each input channel's outputs together
//! (with the DSP extension's 16-bit lanes on Cortex-M4 and M7, `crate::dsp`). Integer sums
//! do not depend on their order (wrapping int32, as the general loops), and each output is
//! requantized the same way, so only the instruction count changes. Tests compare each
//! with the general loops on thousands of random shapes; each runs over an input too, at
//! the windows the general order certifies (`overlap::tests` traces them).

use crate::bytes::int8;
use crate::dsp::{At, positions_fit, rows_taps, smlabb, smlabt, sxtb16, sxtb16_odd};
use crate::overlap::{Load, Put};
use crate::params::Conv;
use crate::plain::Carve;
use crate::rows::{Frame, Ring, RowMap};

use super::{Finish, taps};

/// Whether CONV_2D `p` is a 1x1 convolution over every input pixel (stride 1, no
/// padding, one group, at least one channel each way): a matrix product of the pixels by
/// the filter, which [`conv_1x1`] runs.
pub(crate) fn pointwise(p: &Conv<'_>) -> bool {
    let [_, f_h, f_w, f_c] = p.filter;
    [f_h, f_w] == [1, 1]
        && p.stride == [1, 1]
        && p.padding == [0, 0]
        && f_c == p.input[3]
        && f_c > 0
        && p.output[3] > 0
        && p.input[..3] == p.output[..3]
}

/// A 1x1 CONV_2D, its regions checked: for each pixel, four output channels at a time
/// share each offset input element (one load and one add for four multiply-accumulates),
/// then the rest one by one; output element `o` stored by `put`. The same wrapping int32
/// sums as [`int8_loops`](super::int8_loops) (the order of an integer sum does not change
/// it), the same requantization: the same bytes. Within a pixel a block of four reads the
/// pixel's input whole before it writes its four outputs, as the general loops do for
/// each one, so it is safe at every shift their window allows (`overlap::tests` runs it
/// there). With `PACKED` each block takes four input bytes at a time in 16-bit lanes
/// ([`crate::dsp`]), as Cortex-M4 and M7 run it.
// Out of line, as `depthwise::by_four` and for the same reason.
#[inline(never)]
pub(crate) fn conv_1x1<const PACKED: bool, T: Load>(
    p: &Conv<'_>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    put: &mut impl Put,
) {
    let (depth, channels) = (p.filter[3], p.output[3]);
    let offset = p.input_offset;
    let finish = Finish::new(p, bias);
    // Offsets are -127 to 128 (a zero point's negation); lanes take no other.
    let lanes = i16::try_from(offset).ok().filter(|_| PACKED);
    for (pixel, x) in input.chunks_exact(depth).enumerate() {
        let out = pixel * channels;
        let mut blocks = filter.chunks_exact(4 * depth);
        let mut oc = 0;
        for block in blocks.by_ref() {
            let (w0, rest) = block.split_at(depth);
            let (w1, rest) = rest.split_at(depth);
            let (w2, w3) = rest.split_at(depth);
            let mut acc = [0i32; 4];
            let mut k = 0;
            if let Some(lane) = lanes {
                k = depth - depth % 4;
                four_words(&x[..k], [w0, w1, w2, w3], lane, &mut acc);
            }
            let rows = x[k..]
                .iter()
                .zip(&w0[k..])
                .zip(&w1[k..])
                .zip(&w2[k..])
                .zip(&w3[k..]);
            for ((((x, &a), &b), &c), &d) in rows {
                let x = int8(x.load()) + offset;
                acc[0] = acc[0].wrapping_add(int8(a).wrapping_mul(x));
                acc[1] = acc[1].wrapping_add(int8(b).wrapping_mul(x));
                acc[2] = acc[2].wrapping_add(int8(c).wrapping_mul(x));
                acc[3] = acc[3].wrapping_add(int8(d).wrapping_mul(x));
            }
            finish.row(oc, &acc, &mut |k, v| put.one(out + oc + k, v));
            oc += 4;
        }
        for w in blocks.remainder().chunks_exact(depth) {
            let acc = x.iter().zip(w).fold(0i32, |acc, (x, &w)| {
                acc.wrapping_add(int8(w).wrapping_mul(int8(x.load()) + offset))
            });
            put.one(out + oc, finish.one(oc, acc));
            oc += 1;
        }
    }
}

/// Four channels' rows `w` by the input `x` (whole words), in 16-bit lanes: each word of
/// input offset and widened once (SXTAB16), each channel's word widened (SXTB16), one
/// SMLAD per two products.
#[inline(always)]
fn four_words<T: Load>(x: &[T], w: [&[u8]; 4], offset: i16, acc: &mut [i32; 4]) {
    use crate::dsp::{smlad, splat, sxtab16, sxtab16_odd, sxtb16, sxtb16_odd};
    let offsets = splat(offset);
    let word = |b: [u8; 4]| u32::from_le_bytes(b);
    for (k, x) in x.chunks_exact(4).enumerate() {
        let xs = word([x[0].load(), x[1].load(), x[2].load(), x[3].load()]);
        let (even, odd) = (sxtab16(offsets, xs), sxtab16_odd(offsets, xs));
        for (acc, w) in acc.iter_mut().zip(w) {
            let ws = word([w[4 * k], w[4 * k + 1], w[4 * k + 2], w[4 * k + 3]]);
            *acc = smlad(odd, sxtb16_odd(ws), smlad(even, sxtb16(ws), *acc));
        }
    }
}

/// [`conv_1x1`] over an input and an output apart, without lanes: what every core but
/// those with the DSP extension runs. The same loops written once more for slices, not
/// `put`: run through [`conv_1x1`] the apart calls kept person_detect's whole tensor table
/// (30 KB of per-channel scales) in firmware-m55's flash, as measured by
/// `examples/check-firmware.sh`.
pub(super) fn conv_1x1_apart(
    p: &Conv<'_>,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
    output: &mut [u8],
) {
    let (depth, channels) = (p.filter[3], p.output[3]);
    let offset = p.input_offset;
    let finish = Finish::new(p, bias);
    for (x, out) in input
        .chunks_exact(depth)
        .zip(output.chunks_exact_mut(channels))
    {
        let mut blocks = filter.chunks_exact(4 * depth);
        let mut oc = 0;
        for (block, out) in blocks.by_ref().zip(out.chunks_exact_mut(4)) {
            let (w0, rest) = block.split_at(depth);
            let (w1, rest) = rest.split_at(depth);
            let (w2, w3) = rest.split_at(depth);
            let mut acc = [0i32; 4];
            for ((((&x, &a), &b), &c), &d) in x.iter().zip(w0).zip(w1).zip(w2).zip(w3) {
                let x = int8(x) + offset;
                acc[0] = acc[0].wrapping_add(int8(a).wrapping_mul(x));
                acc[1] = acc[1].wrapping_add(int8(b).wrapping_mul(x));
                acc[2] = acc[2].wrapping_add(int8(c).wrapping_mul(x));
                acc[3] = acc[3].wrapping_add(int8(d).wrapping_mul(x));
            }
            finish.row(oc, &acc, &mut |k, v| out[k] = v);
            oc += 4;
        }
        for (w, o) in blocks.remainder().chunks_exact(depth).zip(&mut out[oc..]) {
            let acc = x.iter().zip(w).fold(0i32, |acc, (&x, &w)| {
                acc.wrapping_add(int8(w).wrapping_mul(int8(x) + offset))
            });
            *o = finish.one(oc, acc);
            oc += 1;
        }
    }
}

/// DEPTHWISE_CONV_2D of depth multiplier 2 or more, its regions checked, in the general
/// loops' pixel order: per output pixel and input channel, the taps inside the input are
/// walked once for eight of the channel's outputs at a time (four where fewer are left,
/// or where the DSP lanes cannot take the offset), so each input byte is loaded and offset
/// once for eight multiply-accumulates (the general loops fetch it again for every output
/// channel); the rest one by one. The same wrapping int32 sums, the same
/// requantization: the same bytes; output element `o` stored by `put`. Every later output
/// reads what it read in the general order, so it is safe at every shift their window
/// allows (`overlap::tests` traces it). Returns `false`, having done nothing, unless
/// [`Conv::several_at_a_time`].
// Out of line, as `depthwise::by_four`; whole tensors only, so it compiles as before rows
// were framed (with a frame parameter it ran 2-4 % slower).
#[inline(never)]
pub(crate) fn depthwise_by_multiplier<const PACKED: bool, T: Load>(
    p: &Conv<'_>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    put: &mut impl Put,
    work: &mut [u8],
) -> bool {
    let frame = &Frame::whole(p.output);
    by_multiplier::<PACKED, _, _, _>(p, frame, input, filter, bias, put, work)
}

/// [`depthwise_by_multiplier`] over a frame of rings: a stage's part.
#[inline(never)]
pub(crate) fn depthwise_by_multiplier_rows<const PACKED: bool, T: Load>(
    p: &Conv<'_>,
    frame: &Frame<Ring, Ring>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    put: &mut impl Put,
    work: &mut [u8],
) -> bool {
    by_multiplier::<PACKED, _, _, _>(p, frame, input, filter, bias, put, work)
}

/// How [`by_multiplier`] walks one output pixel's taps for one input channel.
struct Walk {
    /// The filter rows inside the input.
    rows: core::ops::Range<usize>,
    /// Taps per filter row inside the input.
    taps: usize,
    /// From one tap to the next: input elements, filter elements.
    steps: (usize, usize),
    offset: i32,
    lanes: bool,
}

impl Walk {
    /// The sums of output channels `oc..oc + N` (`N` a multiple of four), where `at(fy)`
    /// is the input index of filter row `fy`'s first tap and that tap's filter position:
    /// each tap's input byte loaded and offset once for the `N` outputs, the indexes
    /// stepping along the row. With eight in lanes, every row's taps in one loop of
    /// assembly on thumbv7em, the rows' first positions listed in `rows_at`.
    #[inline(always)]
    fn sums<const N: usize, const PACKED: bool, T: Load>(
        &self,
        (input, filter): (&[T], &[u8]),
        at: impl Fn(usize) -> (usize, usize),
        oc: usize,
        rows_at: Option<&mut RowsAt>,
    ) -> [i32; N] {
        let (step, out_c) = self.steps;
        let mut acc = [0i32; N];
        let eight = <&mut [i32; 8]>::try_from(&mut acc[..]);
        if let (true, true, Some(rows_at), Ok(eight)) = (PACKED, self.lanes, rows_at, eight) {
            let mut n = 0;
            for (entry, fy) in rows_at.iter_mut().zip(self.rows.clone()) {
                let (i, tap) = at(fy);
                // Below the slices' lengths ([`by_multiplier`] checks them), so below
                // 2^32.
                *entry = [i as u32, (tap * out_c + oc) as u32];
                n += 1;
            }
            let (rows, shape) = (&rows_at[..n], (self.taps, self.offset));
            if n == self.rows.len() && rows_taps(eight, (input, filter), rows, self.steps, shape) {
                return acc;
            }
        }
        for fy in self.rows.clone() {
            let (mut i, tap) = at(fy);
            let mut f = tap * out_c + oc;
            for _ in 0..self.taps {
                let x = int8(input[i].load()) + self.offset;
                let w = &filter[f..f + N];
                for (acc, w) in acc.chunks_exact_mut(4).zip(w.chunks_exact(4)) {
                    let ws = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                    // Always four (chunks of four): as an array, its indexes are constants.
                    if let Ok(acc) = <&mut [i32; 4]>::try_from(acc) {
                        four_products(acc, x, ws, self.lanes);
                    }
                }
                (i, f) = (i + step, f + out_c);
            }
        }
        acc
    }
}

/// The most filter rows the multiplier path lists for its loop of assembly (taller
/// filters walk their rows one by one).
const MOST_ROWS: usize = 16;

/// The multiplier path's work: each filter row's first input and filter positions.
type RowsAt = [At; MOST_ROWS];

/// The work the multiplier path keeps for a call of `p`, in `lanes` (the DSP extension's
/// form, `PACKED`) or not: a [`RowsAt`] where it may take the call in lanes, else none.
pub(crate) fn multiplier_work_bytes(p: &Conv<'_>, lanes: bool) -> usize {
    if lanes && p.several_at_a_time() {
        size_of::<RowsAt>()
    } else {
        0
    }
}

/// Whether the multiplier path takes `p` (an input and a filter of `lens` bytes) and, with
/// `PACKED`, the rows' list its assembly walks (thumbv7em's lanes), taken from `work`:
/// `None` where it declines.
fn rows_list<'w, const PACKED: bool>(
    p: &Conv<'_>,
    lens: [usize; 2],
    work: &'w mut [u8],
) -> Option<Option<&'w mut RowsAt>> {
    if !p.several_at_a_time() || !positions_fit(lens) {
        return None;
    }
    match PACKED {
        true => Carve::new(work).one::<RowsAt>().map(Some),
        false => Some(None),
    }
}

/// `x` (an offset input byte) times four filter bytes (`ws`, one word) added to four
/// sums: with `lanes`, the input in lane 0 and the filter's bytes widened into two words,
/// one SMLABB or SMLABT per product; else the bytes taken from the word one by one.
#[inline(always)]
fn four_products(acc: &mut [i32; 4], x: i32, ws: u32, lanes: bool) {
    if lanes {
        let (we, wo, x) = (sxtb16(ws), sxtb16_odd(ws), x as u32);
        acc[0] = smlabb(x, we, acc[0]);
        acc[1] = smlabb(x, wo, acc[1]);
        acc[2] = smlabt(x, we, acc[2]);
        acc[3] = smlabt(x, wo, acc[3]);
    } else {
        for (k, acc) in acc.iter_mut().enumerate() {
            let w = i32::from((ws >> (8 * k)) as u8 as i8);
            *acc = acc.wrapping_add(w.wrapping_mul(x));
        }
    }
}

/// The loops of [`depthwise_by_multiplier`], the rows `frame` names.
#[inline(always)]
fn by_multiplier<const PACKED: bool, T: Load, I: RowMap, O: RowMap>(
    p: &Conv<'_>,
    frame: &Frame<I, O>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    put: &mut impl Put,
    work: &mut [u8],
) -> bool {
    let Some(mut rows_at) = rows_list::<PACKED>(p, [input.len(), filter.len()], work) else {
        return false;
    };
    let [batches, in_h, in_w, in_c] = p.input;
    let [_, f_h, f_w, out_c] = p.filter;
    let [_, _, out_w, _] = p.output;
    let m = p.depth_multiplier;
    let (finish, offset) = (Finish::new(p, bias), p.input_offset);
    // An input byte plus an offset this small fits a 16-bit lane.
    let lanes = PACKED && (-(1 << 14)..1 << 14).contains(&offset);
    let ([sy, sx], [dy, dx], [py, px]) = (p.stride, p.dilation, p.padding);
    let (in_rows, out_rows, shapes) = (frame.input, frame.output, (p.input, p.output));
    for b in 0..batches {
        for oy in frame.rows.clone() {
            let rows = taps(oy, sy, dy, py, in_h, f_h);
            for ox in 0..out_w {
                let cols = taps(ox, sx, dx, px, in_w, f_w);
                let out = out_rows.at(shapes.1, b, oy) + ox * out_c;
                let first = ox * sx + cols.start * dx - px;
                for ic in 0..in_c {
                    let mut oc = ic * m;
                    let end = oc + m;
                    // The row of the first tap of each filter row, and where its input
                    // channel starts.
                    let at = |fy: usize| {
                        let y = in_rows.at(shapes.0, b, oy * sy + fy * dy - py);
                        (y + first * in_c + ic, fy * f_w + cols.start)
                    };
                    let walk = Walk {
                        rows: rows.clone(),
                        taps: cols.len(),
                        steps: (dx * in_c, out_c),
                        offset,
                        lanes,
                    };
                    // Eight outputs per walk where the multiplier allows (each input byte
                    // loaded once for eight), then four.
                    while (lanes || !PACKED) && oc + 8 <= end {
                        let rows_at = rows_at.as_deref_mut();
                        let acc = walk.sums::<8, PACKED, T>((input, filter), at, oc, rows_at);
                        let bytes = &mut [0; 8];
                        finish.put_row(oc, &acc, bytes, (put, out + oc));
                        oc += 8;
                    }
                    while oc + 4 <= end {
                        let acc = walk.sums::<4, PACKED, T>((input, filter), at, oc, None);
                        let bytes = &mut [0; 4];
                        finish.put_row(oc, &acc, bytes, (put, out + oc));
                        oc += 4;
                    }
                    for oc in oc..end {
                        let mut acc = 0i32;
                        for fy in rows.clone() {
                            let y = in_rows.at(shapes.0, b, oy * sy + fy * dy - py);
                            for fx in cols.clone() {
                                let x = ox * sx + fx * dx - px;
                                let x = int8(input[y + x * in_c + ic].load()) + offset;
                                let w = int8(filter[(fy * f_w + fx) * out_c + oc]);
                                acc = acc.wrapping_add(w.wrapping_mul(x));
                            }
                        }
                        put.one(out + oc, finish.one(oc, acc));
                    }
                }
            }
        }
    }
    true
}

#[cfg(test)]
pub(crate) mod tests;
