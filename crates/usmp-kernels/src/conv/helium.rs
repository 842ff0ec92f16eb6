//! The 1x1 CONV_2D on cores with Helium (Cortex-M55, M85: `usmp_helium`), four pixels by
//! every output channel, as CMSIS-NN blocks it there: each four pixels' inputs are laid out
//! once ([`mve::gather`]), each filter row is then read once for all four, sixteen int8
//! products per VMLADAVA ([`mve::dots`]), and each pixel's row of sums is requantized four
//! channels at a time (`dsp::requantize::row`). (DEPTHWISE_CONV_2D's Helium path is
//! `chunked`.)
//!
//! The products are the raw int8 ones; the input offset's share, `offset * sum(row)`, is
//! folded into each channel's bias once per call. The wrapping int32 sum is the general
//! loops' (an integer sum does not depend on its order), and the requantization the same:
//! the same bytes.

use super::{Finish, fast};
use crate::bytes::int8;
use crate::dsp::mve::{self, PIXELS, gathered_len};
use crate::dsp::requantize;
use crate::overlap::{Load, Put};
use crate::params::Conv;
use crate::plain::Carve;

/// The deepest pixels and the most output channels [`conv_1x1`] takes: with them its
/// work holds about 3 KB ([`Buffers`]).
pub(crate) const MOST: usize = 256;

/// The output channels summed per call of [`mve::dots`].
const BLOCK: usize = 64;

/// [`conv_1x1`]'s work: a folded bias per channel, four pixels laid out, a block of sums
/// per pixel, a block of output bytes.
type Buffers = (
    [u8; 4 * MOST],
    [u8; gathered_len(MOST)],
    [[i32; BLOCK]; PIXELS],
    [u8; BLOCK],
);

/// The work [`conv_1x1`] keeps for a call of `p`: [`Buffers`] where it may take the call.
pub(crate) fn work_bytes(p: &Conv<'_>) -> usize {
    let fits = p.filter[3] <= MOST && p.output[3] <= MOST;
    if fits { size_of::<Buffers>() } else { 0 }
}

/// A 1x1 CONV_2D (`fast::pointwise`), its regions checked, over an input read through
/// `T`, output element `o` stored by `put`, four pixels at a time. Every read of four
/// pixels (their layout) comes before every write of them, and later pixels read only
/// higher inputs, so an output byte is written no earlier, relative to the reads, than in
/// the general loops: safe at every shift their window allows (`overlap::tests` traces
/// it). Returns `false`, having done nothing, where a pixel is deeper or wider than
/// [`MOST`], the call's requantization is not the one `requantize::row` runs or `work`
/// is shorter than [`work_bytes`].
// Out of line, as `depthwise::by_four` and for the same reason.
#[inline(never)]
pub(crate) fn conv_1x1<T: Load>(
    p: &Conv<'_>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    put: &mut impl Put,
    work: &mut [u8],
) -> bool {
    let (depth, channels) = (p.filter[3], p.output[3]);
    let finish = Finish::new(p, bias);
    let Some((bias, multipliers, shifts)) = finish.lists() else {
        return false;
    };
    if depth > MOST || channels > MOST || !fast::pointwise(p) || filter.len() < depth * channels {
        return false;
    }
    let Some((folded, gathered, sums, bytes)) = Carve::new(work).one::<Buffers>() else {
        return false;
    };
    let rows = filter.chunks_exact(depth).zip(bias.chunks_exact(4));
    for (to, (row, b)) in folded.chunks_exact_mut(4).zip(rows) {
        let sum = row.iter().fold(0i32, |s, &w| s.wrapping_add(int8(w)));
        let b = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        to.copy_from_slice(
            &b.wrapping_add(sum.wrapping_mul(p.input_offset))
                .to_le_bytes(),
        );
    }
    for (q, x) in input.chunks(PIXELS * depth).enumerate() {
        mve::gather(x, depth, gathered);
        for g in (0..channels).step_by(BLOCK) {
            let n = BLOCK.min(channels - g);
            mve::dots(gathered, depth, &filter[g * depth..], sums, n);
            for (k, sums) in sums.iter().take(x.len() / depth).enumerate() {
                let (b, m, s) = (&folded[4 * g..], &multipliers[g..], &shifts[g..]);
                requantize::row(&sums[..n], b, m, s, p.output_offset, &mut bytes[..n]);
                put.row((q * PIXELS + k) * channels + g, &bytes[..n]);
            }
        }
    }
    true
}
