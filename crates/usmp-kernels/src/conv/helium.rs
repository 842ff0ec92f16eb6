//! The convolutions on cores with Helium (Cortex-M55, M85: `usmp_helium`), each output
//! row requantized four channels at a time (`dsp::requantize::row`):
//! - the 1x1 CONV_2D four pixels by every output channel, as CMSIS-NN blocks it there:
//!   each four pixels' inputs are laid out once ([`mve::gather`]), each filter row is then
//!   read once for all four, sixteen int8 products per VMLADAVA ([`mve::dots`]). The
//!   products are the raw int8 ones; the input offset's share, `offset * sum(row)`, is
//!   folded into each channel's bias once per call;
//! - DEPTHWISE_CONV_2D of multiplier 1 ([`depthwise`]) along each output row: the row's
//!   taps are listed once, and where every tap of a pixel is inside the input, the row's
//!   pixels and channels are one run of elements, walked sixteen at a time over every tap
//!   ([`mve::chunk`]); the pixels at the row's ends, sixteen channels at a time over their
//!   own taps.
//!
//! The wrapping int32 sums are the general loops' (an integer sum does not depend on its
//! order), and the requantization the same: the same bytes.

use super::{Finish, fast, taps};
use crate::bytes::int8;
use crate::dsp::mve::{self, CHUNK, PIXELS, Taps, gathered_len};
use crate::dsp::requantize;
use crate::overlap::{Load, Put};
use crate::params::{Conv, MOST_TAPS};
use crate::rows::{Frame, RowMap};

/// The deepest pixels and the most output channels [`conv_1x1`] takes: with them its
/// stack holds about 3 KB (a folded bias per channel, four pixels laid out, a block of
/// sums).
pub(crate) const MOST: usize = 256;

/// The output channels summed per call of [`mve::dots`].
const BLOCK: usize = 64;

/// A 1x1 CONV_2D (`fast::pointwise`), its regions checked, over an input read through
/// `T`, output element `o` stored by `put`, four pixels at a time. Every read of four
/// pixels (their layout) comes before every write of them, and later pixels read only
/// higher inputs, so an output byte is written no earlier, relative to the reads, than in
/// the general loops: safe at every shift their window allows (`overlap::tests` traces
/// it). Returns `false`, having done nothing, where a pixel is deeper or wider than
/// [`MOST`] or the call's requantization is not the one `requantize::row` runs.
pub(crate) fn conv_1x1<T: Load>(
    p: &Conv<'_>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    put: &mut impl Put,
) -> bool {
    let (depth, channels) = (p.filter[3], p.output[3]);
    let finish = Finish::new(p, bias);
    let Some((bias, multipliers, shifts)) = finish.lists() else {
        return false;
    };
    if depth > MOST || channels > MOST || !fast::pointwise(p) || filter.len() < depth * channels {
        return false;
    }
    let mut folded = [0u8; 4 * MOST];
    let rows = filter.chunks_exact(depth).zip(bias.chunks_exact(4));
    for (to, (row, b)) in folded.chunks_exact_mut(4).zip(rows) {
        let sum = row.iter().fold(0i32, |s, &w| s.wrapping_add(int8(w)));
        let b = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        to.copy_from_slice(
            &b.wrapping_add(sum.wrapping_mul(p.input_offset))
                .to_le_bytes(),
        );
    }
    let mut gathered = [0u8; gathered_len(MOST)];
    let mut sums = [[0i32; BLOCK]; PIXELS];
    let mut bytes = [0u8; BLOCK];
    for (q, x) in input.chunks(PIXELS * depth).enumerate() {
        mve::gather(x, depth, &mut gathered);
        for g in (0..channels).step_by(BLOCK) {
            let n = BLOCK.min(channels - g);
            mve::dots(&gathered, depth, &filter[g * depth..], &mut sums, n);
            for (k, sums) in sums.iter().take(x.len() / depth).enumerate() {
                let (b, m, s) = (&folded[4 * g..], &multipliers[g..], &shifts[g..]);
                requantize::row(&sums[..n], b, m, s, p.output_offset, &mut bytes[..n]);
                put.row((q * PIXELS + k) * channels + g, &bytes[..n]);
            }
        }
    }
    true
}

/// The requantization of a depthwise chunk: each element's channel's bias, multiplier
/// and shift, for elements `e..e + CHUNK` of a row whose pixels have `c` channels. Where
/// `c` divides [`CHUNK`] a chunk holds whole pixels, so one set repeated serves every
/// chunk; else (`c` a multiple of it) a chunk's channels are consecutive, the call's
/// lists from its first.
struct Lists<'a> {
    c: usize,
    call: (&'a [u8], &'a [i32], &'a [i32]),
    repeated: ([u8; 4 * CHUNK], [i32; CHUNK], [i32; CHUNK]),
}

impl<'a> Lists<'a> {
    fn new(c: usize, call: (&'a [u8], &'a [i32], &'a [i32])) -> Self {
        let mut repeated = ([0; 4 * CHUNK], [0; CHUNK], [0; CHUNK]);
        if c < CHUNK {
            let (b, m, s) = call;
            for e in 0..CHUNK {
                let ch = e % c;
                repeated.0[4 * e..4 * e + 4].copy_from_slice(&b[4 * ch..4 * ch + 4]);
                (repeated.1[e], repeated.2[e]) = (m[ch], s[ch]);
            }
        }
        Lists { c, call, repeated }
    }

    /// The lists of a chunk whose first element is channel `ch`, for the output offset
    /// `offset`.
    fn at(&self, ch: usize, offset: i32) -> mve::Finish<'_> {
        let (bias, multipliers, shifts) = match self.c < CHUNK {
            true => (
                &self.repeated.0[..],
                &self.repeated.1[..],
                &self.repeated.2[..],
            ),
            false => (
                &self.call.0[4 * ch..],
                &self.call.1[ch..],
                &self.call.2[ch..],
            ),
        };
        mve::Finish {
            bias,
            multipliers,
            shifts,
            offset,
        }
    }
}

/// DEPTHWISE_CONV_2D, its regions checked, over an input read through `T`, output
/// element `o` stored by `put`, in the general loops' pixel order: within a row, the
/// pixels before the run whose taps are all inside the input, the run by chunks of
/// sixteen elements, then the pixels after it. A chunk reads every tap of its elements
/// before it writes them, and reads only its own pixels' inputs of its own channels, so no
/// write is earlier, relative to the reads, than in the general order (`overlap::tests`
/// traces it). Returns `false`, having done nothing, unless the filter has at most
/// [`MOST_TAPS`] taps, the depth multiplier divides eight, the output pixels' channels
/// divide sixteen or are a multiple of it, and the call's requantization is the one
/// `requantize::row` runs.
pub(crate) fn depthwise<T: Load, I: RowMap, O: RowMap>(
    p: &Conv<'_>,
    frame: &Frame<I, O>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    put: &mut impl Put,
) -> bool {
    let [batches, in_h, in_w, c_in] = p.input;
    let [_, f_h, f_w, c] = p.filter;
    let [_, _, out_w, _] = p.output;
    let ([sy, sx], [dy, dx], [py, px]) = (p.stride, p.dilation, p.padding);
    let m = p.depth_multiplier;
    let shaped = (p.four_at_a_time() || p.several_at_a_time())
        && f_h * f_w <= MOST_TAPS
        && m > 0
        && 8 % m == 0
        && c > 0
        && (c % CHUNK == 0 || CHUNK % c == 0);
    let finish = Finish::new(p, bias);
    let Some(lists) = finish.lists().filter(|_| shaped).map(|l| Lists::new(c, l)) else {
        return false;
    };
    // Every tap's start fits the list's 32 bits, and the offset a 16-bit lane.
    let small = |len: usize| u32::try_from(len).is_ok();
    if i16::try_from(p.input_offset).is_err() || !small(input.len()) || !small(filter.len()) {
        return false;
    }
    // Each tap's filter bytes repeated along a chunk, where it holds several pixels.
    let mut repeated = [0u8; CHUNK * MOST_TAPS];
    if c < CHUNK {
        for (to, w) in repeated.chunks_exact_mut(CHUNK).zip(filter.chunks_exact(c)) {
            for (to, &w) in to.iter_mut().zip(w.iter().cycle()) {
                *to = w;
            }
        }
    }
    let (weights, per_tap) = match c < CHUNK {
        true => (&repeated[..], CHUNK),
        false => (filter, c),
    };
    let whole = |ox: usize| taps(ox, sx, dx, px, in_w, f_w) == (0..f_w);
    let first = (0..out_w).find(|&ox| whole(ox)).unwrap_or(out_w);
    let after = (first..out_w).find(|&ox| !whole(ox)).unwrap_or(out_w);
    // The run's elements in whole chunks (whole pixels: `c` divides or is a multiple).
    let chunked = ((after - first) * c) / CHUNK * CHUNK;
    let rest = first + chunked / c;
    // Offsets past 16 bits (pixels far apart): the general loops.
    let Some(gathered) = gather(c, c_in, m, sx) else {
        return false;
    };
    let row = Row {
        p,
        c,
        input: (input, gathered.as_ref()),
        filter,
        weights,
        lists: &lists,
    };
    let mut list = Taps::new();
    for b in 0..batches {
        for oy in frame.rows.clone() {
            let rows = taps(oy, sy, dy, py, in_h, f_h);
            let out = frame.output.at(p.output, b, oy);
            let at = |fy: usize| frame.input.at(p.input, b, oy * sy + fy * dy - py);
            list.clear();
            for fy in rows.clone() {
                for fx in 0..f_w {
                    list.push(at(fy) + fx * dx * c_in, (fy * f_w + fx) * per_tap);
                }
            }
            let pixel = |ox: usize, put: &mut _| {
                let columns = taps(ox, sx, dx, px, in_w, f_w);
                let listed = rows.clone().flat_map(|fy| {
                    let x = |fx: usize| ox * sx + fx * dx - px;
                    columns
                        .clone()
                        .map(move |fx| (at(fy) + x(fx) * c_in, (fy * f_w + fx) * c))
                });
                row.pixel(listed, out + ox * c, put);
            };
            for ox in 0..first {
                pixel(ox, put);
            }
            for e in (0..chunked).step_by(CHUNK) {
                let (k, ch) = (e / c, e % c);
                let at_x = ((first + k) * sx - px) * c_in + ch / m;
                row.chunk(&list, at_x, ch, out + first * c + e, put);
            }
            for ox in rest..out_w {
                pixel(ox, put);
            }
        }
    }
    true
}

/// Where a chunk's elements find their inputs, for output pixels of `c` channels (a
/// multiple of 16, or dividing it), `m` of them per input channel (`m` dividing 8), of
/// `c_in` input channels, `sx` apart along the row: `None` where they are the 16 bytes
/// after the chunk's start (a multiplier of 1, and a chunk inside one pixel or pixels
/// side by side); `None` where an offset passes 16 bits.
fn gather(c: usize, c_in: usize, m: usize, sx: usize) -> Option<Option<mve::Gather>> {
    if m == 1 && (c >= CHUNK || sx == 1) {
        return Some(None);
    }
    // Element `e` of a chunk of whole pixels (`c` dividing 8) is channel `e % c` of pixel
    // `e / c`; one inside a pixel (16 channels or more, from a multiple of 16) reads input
    // channel `e / m` past the chunk's first.
    let at = |e: usize| match c < CHUNK {
        true => (e / c) * sx * c_in + (e % c) / m,
        false => e / m,
    };
    let mut offsets = [0u16; 8];
    for (e, o) in offsets.iter_mut().enumerate() {
        *o = u16::try_from(at(e)).ok()?;
    }
    let step = u32::try_from(at(8)).ok()?;
    Some(Some(mve::Gather { offsets, step }))
}

/// What every chunk and pixel of a depthwise call shares.
struct Row<'a, T> {
    p: &'a Conv<'a>,
    c: usize,
    input: (&'a [T], Option<&'a mve::Gather>),
    filter: &'a [u8],
    /// The filter bytes a run's chunk reads: the filter, or (where a chunk holds several
    /// pixels) each tap's bytes repeated along a chunk.
    weights: &'a [u8],
    lists: &'a Lists<'a>,
}

impl<T: Load> Row<'_, T> {
    /// The chunk whose input starts `at_x` past each tap's of `list`, whose first element
    /// is channel `ch`, finished and stored at output element `out`.
    fn chunk(&self, list: &Taps, at_x: usize, ch: usize, out: usize, put: &mut impl Put) {
        let (mut bytes, mut sums) = ([0u8; CHUNK], [0i32; CHUNK]);
        let at_w = if self.c < CHUNK { 0 } else { ch };
        let finish = self.lists.at(ch, self.p.output_offset);
        let (x, gather) = self.input;
        let taps = (list, self.p.input_offset);
        mve::chunk(
            &mut bytes,
            (x, at_x, gather),
            (self.weights, at_w),
            taps,
            finish,
            &mut sums,
        );
        put.row(out, &bytes);
    }

    /// A pixel whose taps (the input element of its channel 0 and the filter element of
    /// its output channel 0) are `listed`, finished and stored from output element `out`:
    /// sixteen channels at a time where they are a multiple of sixteen
    /// ([`chunk`](Self::chunk)), else (fewer than sixteen) one by one.
    fn pixel(&self, listed: impl Iterator<Item = (usize, usize)>, out: usize, put: &mut impl Put) {
        let (c, m) = (self.c, self.p.depth_multiplier);
        if c % CHUNK == 0 {
            let mut list = Taps::new();
            for (x, w) in listed {
                list.push(x, w);
            }
            for ch in (0..c).step_by(CHUNK) {
                self.chunk(&list, ch / m, ch, out + ch, put);
            }
            return;
        }
        let mut acc = [0i32; CHUNK];
        let (x, offset) = (self.input.0, self.p.input_offset);
        for (i, f) in listed {
            for (oc, (acc, &w)) in acc.iter_mut().zip(&self.filter[f..f + c]).enumerate() {
                let x = int8(x[i + oc / m].load()) + offset;
                *acc = acc.wrapping_add(x.wrapping_mul(int8(w)));
            }
        }
        let mut bytes = [0u8; CHUNK];
        let f = self.lists.at(0, self.p.output_offset);
        let (b, ms, s) = (f.bias, f.multipliers, f.shifts);
        requantize::row(&acc[..c], b, ms, s, f.offset, &mut bytes[..c]);
        put.row(out, &bytes[..c]);
    }
}
