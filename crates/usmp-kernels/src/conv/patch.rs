//! A small CONV_2D by patches: each output pixel's receptive field (filter rows x
//! columns x input channels) gathered once into a patch of offset inputs, zeros where the
//! window leaves the input, then each output channel a dot product of the patch with its
//! contiguous filter. The general loops walk the field again for every output channel,
//! one tap and its few channels at a time (person_detect's first CONV_2D: 3x3 taps of 3
//! channels, eight output channels), so their loop overhead is paid per tap per output
//! channel; here it is paid once per pixel.
//!
//! The same bytes as the general loops: a tap outside the input adds nothing there and
//! adds `0 * w` here, and wrapping int32 sums do not depend on their order. Over an input
//! it is safe at every shift the general order's window allows: a pixel's field is read
//! whole before its outputs are written, where the general loops read it again after each
//! output channel's write, and the writes come in the same order.

use core::ops::Range;

use crate::bytes::int8;
use crate::dsp::{pair, smlad, sxtb16, sxtb16_odd};
use crate::overlap::{Load, Put};
use crate::params::Conv;
use crate::plain::{Carve, carved};
use crate::rows::{Frame, RowMap};

use super::depthwise::GROUP;
use super::{Finish, fast, taps};

/// The most elements a patch holds: its array of 16-bit offset inputs (int8 plus an
/// offset of -127 to 128 always fits) takes 512 bytes, as the packed 1x1's pixel pairs;
/// a 3x3 filter over 28 channels, a 5x5 over 10.
pub(crate) const MOST_PATCH: usize = 256;

/// Whether CONV_2D `p` runs by patches: one group, a field of at most [`MOST_PATCH`]
/// elements, an input offset a 16-bit lane holds with any int8 (-32,640 to 32,639; TFLite's
/// are -127 to 128), not a 1x1 over every pixel (the matrix product's own path).
pub(crate) fn applies(p: &Conv<'_>) -> bool {
    let [_, f_h, f_w, f_c] = p.filter;
    f_c > 0
        && f_c == p.input[3]
        && p.output[3] > 0
        && f_h.saturating_mul(f_w).saturating_mul(f_c) <= MOST_PATCH
        && (-32_640..=32_639).contains(&p.input_offset)
        && !fast::pointwise(p)
}

/// Output rows `frame.rows` of CONV_2D `p` (which [`applies`]), its regions checked; output
/// element `o` stored by `put`. With `PACKED` the dot products take 16-bit lanes
/// ([`crate::dsp`]: two multiply-accumulates per instruction on Cortex-M4 and M7, portable
/// lanes elsewhere, which is how the tests compare them on every target). Returns
/// `false`, having done nothing, where `work` is shorter than [`work_bytes`].
pub(crate) fn conv<const PACKED: bool, T: Load, I: RowMap, O: RowMap>(
    p: &Conv<'_>,
    frame: &Frame<I, O>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    put: &mut impl Put,
    work: &mut [u8],
) -> bool {
    let Some(mut buffers) = Buffers::carve(&mut Carve::new(work), p) else {
        return false;
    };
    let rows = Rows {
        computed: frame.rows.clone(),
        input: &|b, y| frame.input.at(p.input, b, y),
        output: &|b, y| frame.output.at(p.output, b, y),
    };
    by_patches::<PACKED, T>(p, &rows, input, filter, bias, put, &mut buffers);
    true
}

/// [`conv`]'s work, cut to the call's size.
struct Buffers<'w> {
    /// A group's sums.
    accs: &'w mut [i32],
    /// Their bytes.
    finished: &'w mut [u8],
    /// The patch: the field in whole groups of four.
    patch: &'w mut [i16],
}

impl<'w> Buffers<'w> {
    /// The group and patch of a call of `p`, from `work`.
    fn carve(work: &mut Carve<'w>, p: &Conv<'_>) -> Option<Self> {
        let [group, patch] = sizes(p);
        Some(Buffers {
            accs: work.slice(group)?,
            finished: work.slice(group)?,
            patch: work.slice(patch)?,
        })
    }
}

/// The channels of a group and the elements of a patch of a call of `p`.
fn sizes(p: &Conv<'_>) -> [usize; 2] {
    let [_, f_h, f_w, _] = p.filter;
    let field = f_h * f_w * p.input[3];
    [GROUP.min(p.output[3]), field.next_multiple_of(4)]
}

/// The work [`conv`] keeps for a call of `p`: its [`Buffers`] where it [`applies`].
pub(crate) fn work_bytes(p: &Conv<'_>) -> usize {
    let [group, patch] = sizes(p);
    match applies(p) {
        true => carved::<i32>(group) + carved::<u8>(group) + carved::<i16>(patch),
        false => 0,
    }
}

/// Where [`by_patches`] finds rows: looked up once per output row and filter row, so
/// through a reference rather than one copy of the loops per kind of frame (a whole
/// tensor, a stage's ring).
struct Rows<'a> {
    computed: Range<usize>,
    input: &'a dyn Fn(usize, usize) -> usize,
    output: &'a dyn Fn(usize, usize) -> usize,
}

/// Where field element `k` sits in the patch: each group of four holds its elements 0, 2,
/// 1, 3, so the group read as two words of 16-bit lanes, (0, 2) and (1, 3), pairs with the
/// filter's four bytes widened by SXTB16 (bytes 0 and 2) and by its odd form (1 and 3).
const fn slot(k: usize) -> usize {
    (k & !3) | ((k & 1) << 1) | ((k >> 1) & 1)
}

/// Output channel `w`'s filter times the patch (in [`slot`] order), wrapping.
#[inline(always)]
fn dot<const PACKED: bool>(patch: &[i16], w: &[u8]) -> i32 {
    let (head, tail) = w.split_at(w.len() / 4 * 4);
    let mut acc = 0i32;
    for (x, ws) in patch.chunks_exact(4).zip(head.chunks_exact(4)) {
        if PACKED {
            let ws = u32::from_le_bytes([ws[0], ws[1], ws[2], ws[3]]);
            acc = smlad(pair(x[0], x[1]), sxtb16(ws), acc);
            acc = smlad(pair(x[2], x[3]), sxtb16_odd(ws), acc);
        } else {
            for (j, &w) in ws.iter().enumerate() {
                acc = acc.wrapping_add(int8(w).wrapping_mul(i32::from(x[slot(j)])));
            }
        }
    }
    for (j, &w) in tail.iter().enumerate() {
        let x = patch[slot(head.len() + j)];
        acc = acc.wrapping_add(int8(w).wrapping_mul(i32::from(x)));
    }
    acc
}

// Out of line: its callers (apart, over an input, a stage's rows) share one copy per kind
// of input (bytes or cells), which a firmware that never takes it pays for once.
#[inline(never)]
fn by_patches<const PACKED: bool, T: Load>(
    p: &Conv<'_>,
    rows_at: &Rows<'_>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    put: &mut dyn Put,
    buffers: &mut Buffers<'_>,
) {
    let [batches, in_h, in_w, in_c] = p.input;
    let [out_c, f_h, f_w, _] = p.filter;
    let [_, _, out_w, _] = p.output;
    let field = f_h * f_w * in_c;
    let ([sy, sx], [dy, dx], [py, px]) = (p.stride, p.dilation, p.padding);
    let finish = Finish::new(p, bias);
    // Whole groups of four: a last, partial group's slots are spread over the group.
    let Buffers {
        accs,
        finished,
        patch,
    } = buffers;
    for b in 0..batches {
        for oy in rows_at.computed.clone() {
            let rows = taps(oy, sy, dy, py, in_h, f_h);
            let out_row = (rows_at.output)(b, oy);
            for ox in 0..out_w {
                let columns = taps(ox, sx, dx, px, in_w, f_w);
                // Every element is written below unless the window leaves the input.
                if rows.len() < f_h || columns.len() < f_w {
                    patch.fill(0);
                }
                for fy in rows.clone() {
                    let y = (rows_at.input)(b, oy * sy + fy * dy - py);
                    for fx in columns.clone() {
                        let from = y + (ox * sx + fx * dx - px) * in_c;
                        let to = (fy * f_w + fx) * in_c;
                        for (c, x) in input[from..from + in_c].iter().enumerate() {
                            // In 16 bits by `applies`' bound on the offset.
                            patch[slot(to + c)] = (int8(x.load()) + p.input_offset) as i16;
                        }
                    }
                }
                let out = out_row + ox * out_c;
                let mut filters = filter.chunks_exact(field).take(out_c);
                let mut oc = 0;
                // Up to a group of channels summed, then finished in one row.
                while oc < out_c {
                    let mut n = 0;
                    for (acc, w) in accs.iter_mut().zip(filters.by_ref()) {
                        *acc = dot::<PACKED>(patch, w);
                        n += 1;
                    }
                    let bytes = &mut finished[..n];
                    finish.put_row(oc, &accs[..n], bytes, (put, out + oc));
                    if n < GROUP {
                        break;
                    }
                    oc += n;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::fast::tests::requantization;
    use super::super::{apart, conv2d, int8_loops};
    use crate::overlap::tests::Rng;
    use crate::params::Conv;
    use crate::rows::Frame;
    use std::vec::Vec;

    /// CONV_2D by patches equals the general loops byte for byte on 3,000 random shapes:
    /// filters up to 5x5 over up to 12 channels (fields past the patch's 256 elements too), strides and dilations of
    /// 1 to 3, any padding inside the filter (windows leaving the input on every side),
    /// 1 to 12 output channels, offsets, activation ranges, with and without a bias,
    /// multipliers and shifts per tensor or per channel; through `conv2d` and directly, the
    /// dot products in scalars and in 16-bit lanes (Cortex-M4's form, portable here).
    #[test]
    fn patches_equal_the_general_loops() {
        let mut rng = Rng(0x0BAD_5EED_1234_5678);
        let mut taken = 0;
        for case in 0..3000 {
            let (f_h, f_w) = (1 + rng.below(5), 1 + rng.below(5));
            let in_c = 1 + rng.below(12);
            let (stride, dilation) = (
                [1 + rng.below(3), 1 + rng.below(3)],
                [1 + rng.below(3), 1 + rng.below(3)],
            );
            let padding = [rng.below(f_h), rng.below(f_w)];
            let (in_h, in_w) = (1 + rng.below(9), 1 + rng.below(9));
            let size = |n: usize, f: usize, s: usize, d: usize, p: usize| {
                ((n + 2 * p).saturating_sub(d * (f - 1) + 1)) / s + 1
            };
            let out_h = size(in_h, f_h, stride[0], dilation[0], padding[0]);
            let out_w = size(in_w, f_w, stride[1], dilation[1], padding[1]);
            let (batches, out_c) = (1 + rng.below(2), 1 + rng.below(12));
            let (multipliers, shifts) = requantization(&mut rng, out_c);
            let lo = rng.below(256) as i32 - 128;
            let p = Conv {
                input: [batches, in_h, in_w, in_c],
                filter: [out_c, f_h, f_w, in_c],
                output: [batches, out_h, out_w, out_c],
                stride,
                dilation,
                padding,
                depth_multiplier: 1,
                input_offset: rng.below(256) as i32 - 127,
                output_offset: rng.below(256) as i32 - 128,
                activation: [lo, lo + rng.below((128 - lo) as usize) as i32],
                bias: rng.below(2) == 0,
                multipliers: &multipliers,
                shifts: &shifts,
            };
            let mut bytes =
                |n: usize| -> Vec<u8> { (0..n).map(|_| rng.below(256) as u8).collect() };
            let input = bytes(batches * in_h * in_w * in_c);
            let filter = bytes(out_c * f_h * f_w * in_c);
            let bias = bytes(4 * out_c);
            let frame = Frame::whole(p.output);
            let mut general = std::vec![0u8; batches * out_h * out_w * out_c];
            int8_loops::<false, _, _, _>(&p, &frame, &input, &filter, &bias, apart(&mut general).1)
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            let mut called = std::vec![0u8; general.len()];
            conv2d(
                &p,
                &input,
                &filter,
                &bias,
                &mut called,
                &mut crate::work::tests::any(),
            )
            .unwrap_or_else(|e| panic!("{case}: {e}"));
            assert_eq!(called, general, "case {case}, conv2d: {p:?}");
            if super::applies(&p) {
                taken += 1;
                for packed in [false, true] {
                    let mut direct = std::vec![0u8; general.len()];
                    let put = &mut |o: usize, v: u8| direct[o] = v;
                    let need = super::work_bytes(&p);
                    let (x, w, b) = (&input[..], &filter[..], &bias[..]);
                    let taken = crate::work::tests::exactly_enough(need, |work| match packed {
                        true => super::conv::<true, _, _, _>(&p, &frame, x, w, b, put, work),
                        false => super::conv::<false, _, _, _>(&p, &frame, x, w, b, put, work),
                    });
                    assert!(taken, "case {case}: {p:?}");
                    assert_eq!(direct, general, "case {case}, lanes {packed}: {p:?}");
                }
            }
        }
        // Fields over 256 elements and 1x1 calls over every pixel take other paths.
        assert!(taken > 2500, "{taken} cases by patches");
    }
}
