//! DEPTHWISE_CONV_2D on cores with Helium (Cortex-M55, M85: `usmp_helium`) along each
//! output row, by chunks of sixteen outputs ([`chunks`]): the row's taps are listed once;
//! where every tap of a pixel is inside the input, the row's pixels of fewer than sixteen
//! channels are one run of elements, sixteen at a time over every tap (several pixels per
//! chunk, each tap's filter bytes repeated along it), and a pixel of sixteen channels or
//! more is a run of its own; the pixels at the row's ends list their own taps. Where a
//! chunk's inputs are not the sixteen bytes after its start (a stride over narrow pixels,
//! a depth multiplier above 1), a gather load finds them.
//!
//! The wrapping int32 sums are the general loops' (an integer sum does not depend on its
//! order), and the requantization (`requantize::row`'s, in the same loop) the same: the
//! same bytes.

use super::{Finish, taps};
use crate::bytes::int8;
use crate::dsp::chunks::{
    self, CHUNK, FEW_TAPS, Gather, Input, MOST_CHUNKS, MOST_TAPS, Taps, chunks,
};
use crate::dsp::{positions_fit, requantize};
use crate::overlap::{Load, Put};
use crate::params::Conv;
use crate::plain::Carve;
use crate::rows::{Frame, RowMap};

/// The lists of the call's output channels (`c` of them), and where `c` divides [`CHUNK`]
/// (a chunk holding whole pixels) each repeated along a chunk, as one set serves every
/// chunk.
struct Lists<'a> {
    c: usize,
    call: (&'a [u8], &'a [i32], &'a [i32]),
    repeated: &'a Repeated,
}

/// The lists repeated along a chunk: bias, multipliers, shifts.
type Repeated = ([u8; 4 * CHUNK], [i32; CHUNK], [i32; CHUNK]);

impl<'a> Lists<'a> {
    /// The lists of `call`, repeated in `repeated` (zeroed) where `c` divides a chunk.
    fn new(c: usize, call: (&'a [u8], &'a [i32], &'a [i32]), repeated: &'a mut Repeated) -> Self {
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

    /// The lists of chunks from channel `ch` on, for the output offset `offset`.
    fn at(&self, ch: usize, offset: i32) -> chunks::Finish<'_> {
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
        chunks::Finish {
            bias,
            multipliers,
            shifts,
            offset,
            along: self.c >= CHUNK,
        }
    }
}

/// DEPTHWISE_CONV_2D, its regions checked, over an input read through `T`, output
/// element `o` stored by `put`, in the general loops' pixel order: within a row, the
/// pixels before the run whose taps are all inside the input, the run, then the pixels
/// after it. A chunk reads every tap of its elements (its own pixels' inputs of its own
/// channels) before it writes them, and later chunks read only later pixels or later
/// channels of the same pixel, so no write is earlier, relative to the reads, than in the
/// general order (`overlap::tests` traces it). Returns `false`, having done nothing, unless the
/// filter has at most [`MOST_TAPS`] taps, the depth multiplier divides eight, the output
/// pixels' channels divide sixteen or are a multiple of it, and the call's requantization
/// is the one `requantize::row` runs.
// Out of line, as `depthwise::by_four` and for the same reason.
#[inline(never)]
pub(crate) fn depthwise<T: Load, I: RowMap, O: RowMap>(
    p: &Conv<'_>,
    frame: &Frame<I, O>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    put: &mut impl Put,
    work: &mut [u8],
) -> bool {
    // Storage cleared on every call (a streamed stage's part is a call of a row or two):
    // as small as the filter allows.
    match p.filter[1] * p.filter[2] {
        taps if taps <= FEW_TAPS => match Carve::new(work).one::<Buffers<FEW_TAPS>>() {
            Some(((a, b, c), lists, bytes)) => {
                let store = (&mut a[..], &mut b[..], c.as_flattened_mut(), lists, bytes);
                with(p, frame, input, filter, bias, store, put)
            }
            None => false,
        },
        taps if taps <= MOST_TAPS => match Carve::new(work).one::<Buffers<MOST_TAPS>>() {
            Some(((a, b, c), lists, bytes)) => {
                let store = (&mut a[..], &mut b[..], c.as_flattened_mut(), lists, bytes);
                with(p, frame, input, filter, bias, store, put)
            }
            None => false,
        },
        _ => false,
    }
}

/// [`depthwise`]'s work for a filter of at most `TAPS` taps: a [`Store`]'s taps and
/// repeated filter, the lists repeated along a chunk, a run's output bytes.
type Buffers<const TAPS: usize> = (
    ([[u32; 2]; TAPS], [[u32; 2]; TAPS], [[u8; CHUNK]; TAPS]),
    Repeated,
    Bytes,
);

/// The output bytes of a run of chunks.
type Bytes = [u8; CHUNK * MOST_CHUNKS];

/// The work [`depthwise`] keeps for a call of `p`: the [`Buffers`] its filter needs.
pub(crate) fn work_bytes(p: &Conv<'_>) -> usize {
    match p.filter[1] * p.filter[2] {
        taps if taps <= FEW_TAPS => size_of::<Buffers<FEW_TAPS>>(),
        taps if taps <= MOST_TAPS => size_of::<Buffers<MOST_TAPS>>(),
        _ => 0,
    }
}

/// Storage for a row's taps, an end pixel's, each tap's filter bytes repeated along a
/// chunk, the lists repeated along one, a run's output bytes.
type Store<'a> = (
    &'a mut [[u32; 2]],
    &'a mut [[u32; 2]],
    &'a mut [u8],
    &'a mut Repeated,
    &'a mut Bytes,
);

/// [`depthwise`] in `store`, room for every tap of the filter.
#[inline(never)]
fn with<T: Load, I: RowMap, O: RowMap>(
    p: &Conv<'_>,
    frame: &Frame<I, O>,
    input: &[T],
    filter: &[u8],
    bias: &[u8],
    (row_taps, own_taps, repeated, repeated_lists, bytes): Store<'_>,
    put: &mut impl Put,
) -> bool {
    let [_, _, in_w, c_in] = p.input;
    let [_, f_h, f_w, c] = p.filter;
    let out_w = p.output[2];
    let ([_, sx], [_, dx], [_, px]) = (p.stride, p.dilation, p.padding);
    let m = p.depth_multiplier;
    let shaped = (p.four_at_a_time() || p.several_at_a_time())
        && f_h * f_w <= row_taps.len().min(own_taps.len())
        && CHUNK * f_h * f_w <= repeated.len()
        && m > 0
        && 8 % m == 0
        && c > 0
        && (c % CHUNK == 0 || CHUNK.is_multiple_of(c));
    let finish = Finish::new(p, bias);
    let Some(lists) = finish.lists().filter(|_| shaped) else {
        return false;
    };
    // Every tap's start fits the list's 32 bits, the offset a 16-bit lane, and the
    // gather's offsets 16 bits.
    let gathered = gather(c, c_in, m, sx);
    let fits = i16::try_from(p.input_offset).is_ok() && positions_fit([input.len(), filter.len()]);
    let Some(gathered) = gathered.filter(|_| fits) else {
        return false;
    };
    let lists = Lists::new(c, lists, repeated_lists);
    // Each tap's filter bytes repeated along a chunk, where it holds several pixels.
    if c < CHUNK {
        for (to, w) in repeated.chunks_exact_mut(CHUNK).zip(filter.chunks_exact(c)) {
            for (to, &w) in to.iter_mut().zip(w.iter().cycle()) {
                *to = w;
            }
        }
    }
    let whole = |ox: usize| taps(ox, sx, dx, px, in_w, f_w) == (0..f_w);
    let first = (0..out_w).find(|&ox| whole(ox)).unwrap_or(out_w);
    let after = (first..out_w).find(|&ox| !whole(ox)).unwrap_or(out_w);
    let row = Row {
        p,
        c,
        input: (input, gathered.as_ref()),
        filter,
        repeated,
        lists: &lists,
        run: [first, after],
    };
    let ([sy, _], [dy, _], [py, _]) = (p.stride, p.dilation, p.padding);
    // The row's taps, and a pixel's at the row's ends.
    let mut lists = [Taps::new(row_taps), Taps::new(own_taps)];
    for b in 0..p.input[0] {
        for oy in frame.rows.clone() {
            let at = |fy: usize| frame.input.at(p.input, b, oy * sy + fy * dy - py);
            let out = frame.output.at(p.output, b, oy);
            row.line(&mut lists, oy, &at, (out, &mut *bytes), put);
        }
    }
    true
}

/// Where a chunk's elements find their inputs, for output pixels of `c` channels (a
/// multiple of 16, or dividing it), `m` of them per input channel (`m` dividing 8), of
/// `c_in` input channels, `sx` apart along the row: `Some(None)` where they are the 16
/// bytes after the chunk's start (a multiplier of 1, and a chunk inside one pixel or
/// pixels side by side); `None` where an offset passes 16 bits.
fn gather(c: usize, c_in: usize, m: usize, sx: usize) -> Option<Option<Gather>> {
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
    Some(Some(Gather::new(offsets, step)))
}

/// What every run and pixel of a depthwise call shares.
struct Row<'a, T> {
    p: &'a Conv<'a>,
    c: usize,
    input: (&'a [T], Option<&'a Gather>),
    filter: &'a [u8],
    /// Each tap's filter bytes repeated along a chunk, where `c` is below 16.
    repeated: &'a [u8],
    lists: &'a Lists<'a>,
    /// The output pixels of a row whose taps are all inside the input: `run[0]..run[1]`.
    run: [usize; 2],
}

impl<T: Load> Row<'_, T> {
    /// Output row `oy`, from output element `out`, its filter row `fy`'s input starting
    /// at `at(fy)`; `list` is the row's taps' to fill, `own` each end pixel's.
    fn line(
        &self,
        [list, own]: &mut [Taps<'_>; 2],
        oy: usize,
        at: &impl Fn(usize) -> usize,
        (out, bytes): (usize, &mut Bytes),
        put: &mut impl Put,
    ) {
        let (p, c) = (self.p, self.c);
        let ([_, in_h, in_w, c_in], [_, f_h, f_w, _]) = (p.input, p.filter);
        let ([sy, sx], [dy, dx], [py, px]) = (p.stride, p.dilation, p.padding);
        let [first, after] = self.run;
        let rows = taps(oy, sy, dy, py, in_h, f_h);
        let per_tap = if c < CHUNK { CHUNK } else { c };
        list.clear();
        for fy in rows.clone() {
            for fx in 0..f_w {
                list.push(at(fy) + fx * dx * c_in, (fy * f_w + fx) * per_tap);
            }
        }
        let mut pixel = |ox: usize, put: &mut _, bytes: &mut Bytes| {
            let columns = taps(ox, sx, dx, px, in_w, f_w);
            let listed = rows.clone().flat_map(|fy| {
                let x = |fx: usize| ox * sx + fx * dx - px;
                let at = at(fy);
                columns
                    .clone()
                    .map(move |fx| (at + x(fx) * c_in, (fy * f_w + fx) * c))
            });
            self.pixel(listed, own, (out + ox * c, bytes), put);
        };
        for ox in 0..first {
            pixel(ox, put, bytes);
        }
        // Narrow pixels side by side: runs of chunks, `16 / c` pixels each, the pixels
        // left over as the ends.
        let chunked = if c < CHUNK {
            (after - first) * c / CHUNK
        } else {
            0
        };
        let step = CHUNK / c * sx * c_in;
        for j in (0..chunked).step_by(MOST_CHUNKS) {
            let n = MOST_CHUNKS.min(chunked - j);
            let at_x = (first * sx - px) * c_in + j * step;
            let to = out + first * c + j * CHUNK;
            self.run(list, (at_x, step), (0, n), (to, &mut *bytes), put);
        }
        // Wide pixels: a run of chunks each, from the row's list.
        for ox in (first..after).filter(|_| c >= CHUNK) {
            self.wide(
                list,
                (ox * sx - px) * c_in,
                (out + ox * c, &mut *bytes),
                put,
            );
        }
        let rest = if c < CHUNK {
            first + chunked * CHUNK / c
        } else {
            after
        };
        for ox in rest..p.output[2] {
            pixel(ox, put, bytes);
        }
    }

    /// `n` chunks (at most [`MOST_CHUNKS`]), the first's input `at_x` past each tap's of
    /// `list` and each next one `step` further, the first's first element channel `ch`
    /// (the next ones 16 channels on, where pixels are that wide), finished and stored
    /// from output element `out`.
    fn run(
        &self,
        list: &Taps<'_>,
        (at_x, step): (usize, usize),
        (ch, n): (usize, usize),
        (out, bytes): (usize, &mut Bytes),
        put: &mut impl Put,
    ) {
        let bytes = &mut bytes[..CHUNK * n.min(MOST_CHUNKS)];
        let (x, gather) = self.input;
        let input = Input {
            x,
            at: at_x,
            step,
            gather,
        };
        let w = match self.c < CHUNK {
            true => (self.repeated, 0, 0),
            false => (self.filter, ch, CHUNK),
        };
        let taps = (list, self.p.input_offset);
        chunks(
            bytes,
            input,
            w,
            taps,
            self.lists.at(ch, self.p.output_offset),
        );
        put.row(out, bytes);
    }

    /// A pixel of channels a multiple of 16 whose input starts `at_x` past each tap's of
    /// `list`, by runs of chunks, stored from output element `out`.
    fn wide(
        &self,
        list: &Taps<'_>,
        at_x: usize,
        (out, bytes): (usize, &mut Bytes),
        put: &mut impl Put,
    ) {
        let m = self.p.depth_multiplier;
        for ch in (0..self.c).step_by(CHUNK * MOST_CHUNKS) {
            let n = MOST_CHUNKS.min((self.c - ch) / CHUNK);
            let to = (out + ch, &mut *bytes);
            self.run(list, (at_x + ch / m, CHUNK / m), (ch, n), to, put);
        }
    }

    /// A pixel whose taps (the input element of its channel 0 and the filter element of
    /// its output channel 0) are `listed` (into `list`, where it takes one), finished and
    /// stored from output element `out`:
    /// runs of chunks where its channels are a multiple of sixteen, else (fewer than
    /// sixteen) one channel at a time.
    fn pixel(
        &self,
        listed: impl Iterator<Item = (usize, usize)>,
        list: &mut Taps<'_>,
        (out, bytes): (usize, &mut Bytes),
        put: &mut impl Put,
    ) {
        let (c, m) = (self.c, self.p.depth_multiplier);
        if c >= CHUNK {
            list.clear();
            for (x, w) in listed {
                list.push(x, w);
            }
            self.wide(list, 0, (out, bytes), put);
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
        let f = self.lists.at(0, self.p.output_offset);
        let (b, ms, s) = (f.bias, f.multipliers, f.shifts);
        requantize::row(&acc[..c], b, ms, s, f.offset, &mut bytes[..c]);
        put.row(out, &bytes[..c]);
    }
}
