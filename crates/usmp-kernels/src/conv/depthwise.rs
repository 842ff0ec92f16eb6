//! DEPTHWISE_CONV_2D of depth multiplier 1 (at most [`MOST_TAPS`](crate::params::MOST_TAPS) taps) along the
//! channels: per output pixel the taps inside the input are found once; then each tap
//! adds its products to a row of accumulators, one per channel, walking the input's and
//! the filter's contiguous channels together; then the row is requantized and written.
//! The loop over a tap's channels has no bounds checks and no decisions in it (the tap's
//! slices are cut once), and on Cortex-M4 and M7 takes four channels per word of input
//! and word of filter in 16-bit lanes ([`crate::dsp`]): one SMLABB or SMLATT per product.
//! Up to [`GROUP`] channels at a time, so the accumulators (and their finished bytes) stay
//! small stack arrays.
//!
//! The same wrapping int32 sums as the general loops (an integer sum does not depend on
//! its order) and the same requantization: the same bytes. Within a pixel every read of
//! a group comes before its writes, and a group reads only its own channels, so a write is
//! never earlier, relative to the reads, than in the general order: a window the general
//! order certifies holds here too (`overlap::tests` traces it), and a call planned over its
//! input runs this path as well.

use crate::bytes::int8;
use crate::dsp::window;
use crate::dsp::{At, positions_fit, splat, tap_words};
use crate::overlap::{Load, Put};
use crate::params::Conv;
use crate::plain::{Carve, carved};
use crate::rows::{Frame, RowMap};

use super::{Finish, taps};

/// The most channels of a pixel accumulated together: 256 bytes of work, and 64 for
/// their bytes.
pub(crate) const GROUP: usize = 64;

/// The taps of a pixel (at most [`MOST_TAPS`](crate::params::MOST_TAPS) where [`Conv::four_at_a_time`]) and the
/// channels of a group of a call of `p`: what [`by_four`]'s work holds, a pixel's taps
/// (input and filter positions), a group's sums and their bytes.
fn sizes(p: &Conv<'_>) -> [usize; 2] {
    [p.filter[1] * p.filter[2], GROUP.min(p.input[3])]
}

/// [`by_four`]'s buffers for a call of `p`, cut from `work`: a pixel's taps, a group's
/// sums and their bytes.
#[allow(clippy::type_complexity)]
fn buffers<'w>(
    p: &Conv<'_>,
    work: &'w mut [u8],
) -> Option<(&'w mut [At], &'w mut [i32], &'w mut [u8])> {
    let [taps, group] = sizes(p);
    let work = &mut Carve::new(work);
    Some((work.slice(taps)?, work.slice(group)?, work.slice(group)?))
}

/// The work [`by_four`] keeps for a call of `p`, where it may take the call.
pub(crate) fn work_bytes(p: &Conv<'_>) -> usize {
    let [taps, group] = sizes(p);
    match p.four_at_a_time() {
        true => carved::<At>(taps) + carved::<i32>(group) + carved::<u8>(group),
        false => 0,
    }
}

/// DEPTHWISE_CONV_2D of depth multiplier 1, its regions checked, in the general loops'
/// pixel order; output element `o` stored by `put`. With `PACKED` each tap takes four
/// channels at a time in 16-bit lanes, as Cortex-M4 and M7 run it. Returns `false`, having
/// done nothing, unless [`Conv::four_at_a_time`] and `work` holds [`work_bytes`].
// Out of line: the dispatch that calls it must stay small enough to be inlined into the
// generated `invoke` and on into the firmware's own code. Where a `Call` is passed to a
// function that is not inlined, the linker keeps the model's whole `ModelInfo`, which a
// `Call` refers to, with its tensor table and per-channel scales (30 KB of flash on
// person_detect, measured on firmware-m55 when this path was first inlined).
#[inline(never)]
pub(crate) fn by_four<const PACKED: bool, T: Load, I: RowMap, O: RowMap>(
    p: &Conv<'_>,
    frame: &Frame<I, O>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    put: &mut impl Put,
    work: &mut [u8],
) -> bool {
    let [batches, in_h, in_w, c] = p.input;
    let [_, f_h, f_w, _] = p.filter;
    let [_, _, out_w, _] = p.output;
    if !p.four_at_a_time() || !positions_fit([input.len(), filter.len()]) {
        return false;
    }
    let Some((at, accs, finished)) = buffers(p, work) else {
        return false;
    };
    let finish = Finish::new(p, bias);
    // Offsets are -127 to 128 (a zero point's negation); lanes take no other.
    let lanes = i16::try_from(p.input_offset).ok().filter(|_| PACKED);
    let ([sy, sx], [dy, dx], [py, px]) = (p.stride, p.dilation, p.padding);
    let (in_rows, out_rows, computed) = (frame.input, frame.output, frame.rows.clone());
    let (in_shape, out_shape) = (p.input, p.output);
    for b in 0..batches {
        for oy in computed.clone() {
            let rows = taps(oy, sy, dy, py, in_h, f_h);
            let out_row = out_rows.at(out_shape, b, oy);
            for ox in 0..out_w {
                let mut n = 0;
                for fy in rows.clone() {
                    let y = in_rows.at(in_shape, b, oy * sy + fy * dy - py);
                    for fx in taps(ox, sx, dx, px, in_w, f_w) {
                        let x = ox * sx + fx * dx - px;
                        // Below the slices' lengths (the general loops' indexes), so
                        // below 2^32.
                        at[n] = [(y + x * c) as u32, ((fy * f_w + fx) * c) as u32];
                        n += 1;
                    }
                }
                let out = out_row + ox * c;
                let mut g = 0;
                while g < c {
                    // Whole words of channels, then the last few on their own: a group
                    // in lanes has no remainder to handle at every tap.
                    let width = match GROUP.min(c - g) {
                        w if w >= 4 && lanes.is_some() => w - w % 4,
                        w => w,
                    };
                    let acc = &mut accs[..width];
                    acc.fill(0);
                    // Every tap in one loop, in lanes where they take the group; the taps
                    // one at a time where it declines (with Helium, LLVM's loop).
                    let (x, w) = (
                        input.get(g..).unwrap_or(&[]),
                        filter.get(g..).unwrap_or(&[]),
                    );
                    let listed = match lanes {
                        Some(lane) if width % 4 == 0 => {
                            window::add(acc, x, w, &at[..n], splat(lane))
                        }
                        _ => window::add_bytes(acc, x, w, &at[..n], p.input_offset),
                    };
                    for &[i, f] in at[..n].iter().filter(|_| !listed) {
                        let (i, f) = (i as usize, f as usize);
                        let (x, w) = (&input[i + g..i + g + width], &filter[f + g..f + g + width]);
                        match lanes {
                            Some(lane) if width % 4 == 0 => tap_packed(acc, x, w, lane),
                            _ => tap(acc, x, w, p.input_offset),
                        }
                    }
                    let bytes = &mut finished[..width];
                    finish.put_row(g, acc, bytes, (put, out + g));
                    g += width;
                }
            }
        }
    }
    true
}

/// One tap's products added to the accumulators, channel by channel.
#[inline(always)]
fn tap<T: Load>(acc: &mut [i32], x: &[T], w: &[u8], offset: i32) {
    for ((acc, x), &w) in acc.iter_mut().zip(x).zip(w) {
        let x = int8(x.load()) + offset;
        *acc = acc.wrapping_add(int8(w).wrapping_mul(x));
    }
}

/// [`tap`] in 16-bit lanes, for a whole number of words of channels: four channels'
/// input bytes in one word, offset and widened into two words (channels 0 and 2, 1 and
/// 3), the filter's likewise, one SMLABB or SMLATT per channel.
#[inline(always)]
fn tap_packed<T: Load>(acc: &mut [i32], x: &[T], w: &[u8], offset: i16) {
    tap_words(acc, x, w, splat(offset));
}
