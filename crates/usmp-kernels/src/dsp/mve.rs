//! Helium (MVE, Armv8.1-M: Cortex-M55, M85) loops for the 1x1 convolution, where one
//! VMLADAVA multiplies and sums sixteen int8 pairs: [`gather`] lays four pixels' inputs
//! side by side in 16-byte pieces, so one running pointer reads all four, and [`dots`] runs
//! every filter row of a block over them, four sums per row. Each loop is tail-predicated
//! (WLSTP/LETP): a row's last piece loads only the bytes that are there, so no length need
//! be a multiple of 16 and nothing is read past a slice.
//!
//! Under `usmp_helium` they are assembly; elsewhere the same arithmetic in Rust, which the
//! host tests run against the general loops.

use crate::bytes::int8;
use crate::overlap::Load;
use crate::params::MOST_TAPS;

/// The bytes of one piece: what a Helium register holds.
pub(crate) const PIECE: usize = 16;

/// The pixels [`gather`] and [`dots`] take together.
pub(crate) const PIXELS: usize = 4;

/// Bytes [`gather`] needs for pixels of `depth` bytes: a piece per pixel for every
/// started piece of a pixel.
pub(crate) const fn gathered_len(depth: usize) -> usize {
    depth.div_ceil(PIECE) * PIECE * PIXELS
}

/// Pixels `x` (`PIXELS` of `depth` bytes, one after another; fewer where `x` holds fewer)
/// into `to` as [`dots`] reads them: piece `k` of pixel `p` at `to[(k * PIXELS + p) *
/// PIECE..]`, a last piece's bytes past the pixel left as they were. Returns `false`,
/// having done nothing, where `to` is shorter than [`gathered_len`].
#[inline(always)]
pub(crate) fn gather<T: Load>(x: &[T], depth: usize, to: &mut [u8]) -> bool {
    if to.len() < gathered_len(depth) || depth == 0 {
        return false;
    }
    for (p, x) in x.chunks_exact(depth).take(PIXELS).enumerate() {
        #[cfg(usmp_helium)]
        if let Some(x) = T::bytes(x) {
            gather_one(x, depth, &mut to[p * PIECE..]);
            continue;
        }
        for (k, x) in x.chunks(PIECE).enumerate() {
            let at = (k * PIXELS + p) * PIECE;
            for (to, x) in to[at..at + x.len()].iter_mut().zip(x) {
                *to = x.load();
            }
        }
    }
    true
}

/// One pixel of [`gather`]: `depth >= 1` bytes from `x` into every `PIXELS`-th piece of
/// `to` (the caller's `to` starts `p * PIECE` into one of [`gathered_len`] bytes).
#[cfg(usmp_helium)]
#[inline(always)]
fn gather_one(x: *const u8, depth: usize, to: &mut [u8]) {
    let pieces = depth.div_ceil(PIECE);
    assert!(to.len() >= (pieces - 1) * PIXELS * PIECE + (depth - (pieces - 1) * PIECE));
    // SAFETY: `x` points at `depth` readable bytes (a pixel of the caller's slice, read
    // through `Load::bytes`: bytes or cells no one writes during this call). The loop runs
    // `pieces` times under tail predication of byte elements: piece `k` loads the
    // `min(16, depth - 16k)` bytes at `x + 16k` and stores them at `to + 64k`, in `to`
    // (asserted above), borrowed mutably here; the inactive lanes neither load nor store.
    // It touches no other memory and not the stack; LR is declared clobbered.
    unsafe {
        core::arch::asm!(
            "wlstp.8 lr, {n}, 2f",
            "1:",
            "vldrb.u8 q0, [{x}], #16",
            "vstrb.8 q0, [{to}], #{stride}",
            "letp lr, 1b",
            "2:",
            n = in(reg) depth,
            x = inout(reg) x => _,
            to = inout(reg) to.as_mut_ptr() => _,
            stride = const PIXELS * PIECE,
            out("lr") _,
            out("q0") _,
            options(nostack),
        );
    }
}

/// For each of the first `n` rows `r` of `filter` (rows of `depth` bytes, `n` at most `N`
/// and the rows `filter` holds), `sums[p][r]` = the int8 dot product of pixel `p` of
/// `gathered` ([`gather`]'s layout) with row `r`, wrapping. Returns the rows done: `n`, or
/// fewer where `filter` holds fewer; none where `gathered` is shorter than
/// [`gathered_len`] or `depth` is 0.
#[inline(always)]
pub(crate) fn dots<const N: usize>(
    gathered: &[u8],
    depth: usize,
    filter: &[u8],
    sums: &mut [[i32; N]; PIXELS],
    n: usize,
) -> usize {
    let rows = n.min(N).min(filter.len().checked_div(depth).unwrap_or(0));
    if rows == 0 || gathered.len() < gathered_len(depth) {
        return 0;
    }
    #[cfg(usmp_helium)]
    in_assembly(
        &gathered[..gathered_len(depth)],
        depth,
        &filter[..rows * depth],
        sums,
        rows,
    );
    #[cfg(not(usmp_helium))]
    for (r, w) in filter.chunks_exact(depth).take(rows).enumerate() {
        for (p, sums) in sums.iter_mut().enumerate() {
            let mut acc = 0i32;
            for (k, &w) in w.iter().enumerate() {
                let x = gathered[(k / PIECE * PIXELS + p) * PIECE + k % PIECE];
                acc = acc.wrapping_add(i32::from(x as i8) * i32::from(w as i8));
            }
            sums[r] = acc;
        }
    }
    rows
}

/// [`dots`]' loop: `rows >= 1` rows of `depth >= 1` bytes, exactly what `filter` holds,
/// `rows <= N`, `gathered` exactly [`gathered_len`] bytes.
#[cfg(usmp_helium)]
#[inline(always)]
fn in_assembly<const N: usize>(
    gathered: &[u8],
    depth: usize,
    filter: &[u8],
    sums: &mut [[i32; N]; PIXELS],
    rows: usize,
) {
    assert!(rows >= 1 && rows <= N && depth >= 1 && filter.len() == rows * depth);
    assert!(gathered.len() == gathered_len(depth));
    // How far the filter pointer, moved a whole piece per load, runs past a row's end.
    let pad = depth.div_ceil(PIECE) * PIECE - depth;
    // SAFETY: per row the inner loop runs `depth.div_ceil(16)` times under tail
    // predication of byte elements: each time it loads the next piece of the row at `w`
    // (the last one only its `depth % 16` bytes, or 16) and four pieces at `xp`, from
    // `gathered`'s start (its `gathered_len(depth)` bytes are exactly those pieces; the
    // inactive lanes load nothing). After a row, `w` steps back by `pad`, to the next
    // row's start in `filter` (`rows * depth` bytes, read once in order), and the four
    // sums are stored at `s + 4 * N * p` bytes for pixel `p` (`sums[p][r]`: the arrays of
    // `[[i32; N]; 4]` are contiguous, `r < rows <= N`, borrowed mutably here), `s` then
    // moved one word on. It touches no other memory and not the stack; LR is clobbered
    // and SUBS sets the flags, so they are not declared preserved. VMLADAVA's accumulators
    // are even registers, as its encoding requires.
    unsafe {
        core::arch::asm!(
            "3:",
            "mov {xp}, {x}",
            "movs r0, #0",
            "movs r2, #0",
            "movs r4, #0",
            "mov r8, #0",
            "wlstp.8 lr, {depth}, 2f",
            "1:",
            "vldrb.u8 q0, [{w}], #16",
            "vldrb.u8 q1, [{xp}], #16",
            "vmladava.s8 r0, q1, q0",
            "vldrb.u8 q2, [{xp}], #16",
            "vmladava.s8 r2, q2, q0",
            "vldrb.u8 q1, [{xp}], #16",
            "vmladava.s8 r4, q1, q0",
            "vldrb.u8 q2, [{xp}], #16",
            "vmladava.s8 r8, q2, q0",
            "letp lr, 1b",
            "2:",
            "sub {w}, {w}, {pad}",
            "str r2, [{s}, #{row}]",
            "str r4, [{s}, #{row2}]",
            "str r8, [{s}, #{row3}]",
            "str r0, [{s}], #4",
            "subs {rows}, {rows}, #1",
            "bne 3b",
            x = in(reg) gathered.as_ptr(),
            xp = out(reg) _,
            w = inout(reg) filter.as_ptr() => _,
            depth = in(reg) depth,
            pad = in(reg) pad,
            s = inout(reg) sums[0].as_mut_ptr() => _,
            rows = inout(reg) rows => _,
            row = const 4 * N,
            row2 = const 8 * N,
            row3 = const 12 * N,
            out("r0") _,
            out("r2") _,
            out("r4") _,
            out("r8") _,
            out("lr") _,
            out("q0") _,
            out("q1") _,
            out("q2") _,
            options(nostack),
        );
    }
}

/// `out[k]` = `acc[k]` plus the little-endian bias `bias[4k..4k + 4]`, rescaled by
/// `multipliers[k]` and `shifts[k]` (each in `-31..=-1`), plus `offset`, saturated to
/// int8, for the first `n` of each (`n >= 1`, at most every length, the bias counted in
/// words): `requantize::row`'s bytes, four at a time. VQRDMULH is TFLite's doubling high
/// multiply (its rounding of a negative product's tie is the same, and no multiplier is
/// `i32::MIN`); TFLite's division by `2^e` rounds half away from zero, VRSHL half up, so a
/// negative value is first lowered by one (`r + (r >> 31)`, which cannot overflow: `|r| <
/// 2^31` for such a multiplier). Two saturating narrowings clamp to int8, and VSTRB.32
/// stores each word's low byte.
#[cfg(usmp_helium)]
#[inline(always)]
pub(crate) fn requantize_row(
    acc: &[i32],
    bias: &[u8],
    multipliers: &[i32],
    shifts: &[i32],
    offset: i32,
    out: &mut [u8],
    n: usize,
) {
    assert!(n >= 1 && n <= acc.len().min(bias.len() / 4).min(out.len()));
    assert!(n <= multipliers.len().min(shifts.len()));
    // SAFETY: the loop runs `n.div_ceil(4)` times under tail predication of word
    // elements, each time reading the next (up to) four words at `pa`, `pm` and `ps`
    // (`&[i32]`s, so aligned, each holding `n`: asserted above) and the next (up to) 16
    // bytes at `pb` (`4n` bias bytes are there; a byte load needs no alignment), and
    // storing the next (up to) four bytes at `po` (`n` are there, borrowed mutably here);
    // the inactive lanes of the last time neither load nor store. It touches no other
    // memory and not the stack; LR is declared clobbered.
    unsafe {
        core::arch::asm!(
            "wlstp.32 lr, {n}, 2f",
            "1:",
            "vldrw.u32 q0, [{pa}], #16",
            "vldrb.u8 q1, [{pb}], #16",
            "vadd.i32 q0, q0, q1",
            "vldrw.u32 q1, [{pm}], #16",
            "vqrdmulh.s32 q0, q0, q1",
            "vshr.s32 q1, q0, #31",
            "vadd.i32 q0, q0, q1",
            "vldrw.u32 q1, [{ps}], #16",
            "vrshl.s32 q0, q0, q1",
            "vadd.i32 q0, q0, {off}",
            "vqmovnb.s32 q0, q0",
            "vqmovnb.s16 q0, q0",
            "vstrb.32 q0, [{po}], #4",
            "letp lr, 1b",
            "2:",
            n = in(reg) n,
            pa = inout(reg) acc.as_ptr() => _,
            pb = inout(reg) bias.as_ptr() => _,
            pm = inout(reg) multipliers.as_ptr() => _,
            ps = inout(reg) shifts.as_ptr() => _,
            po = inout(reg) out.as_mut_ptr() => _,
            off = in(reg) offset,
            out("lr") _,
            out("q0") _,
            out("q1") _,
            options(nostack),
        );
    }
}

/// The elements [`chunk`] sums together: a Helium register of bytes.
pub(crate) const CHUNK: usize = 16;

/// The taps of a row of depthwise outputs as [`chunk`] walks them: for each, where its
/// input and its filter bytes start (relative to a chunk's own starts), and the largest of
/// each, so [`chunk`] checks a whole list with two comparisons.
pub(crate) struct Taps {
    list: [[u32; 2]; MOST_TAPS],
    n: usize,
    most: [usize; 2],
}

impl Taps {
    /// No taps.
    pub(crate) fn new() -> Self {
        Taps {
            list: [[0; 2]; MOST_TAPS],
            n: 0,
            most: [0; 2],
        }
    }

    /// Emptied.
    pub(crate) fn clear(&mut self) {
        (self.n, self.most) = (0, [0; 2]);
    }

    /// One more tap, its input at `x` and its filter at `w`; `false` (and the list
    /// unchanged) where the list is full or a start passes 32 bits.
    pub(crate) fn push(&mut self, x: usize, w: usize) -> bool {
        let (Ok(xs), Ok(ws)) = (u32::try_from(x), u32::try_from(w)) else {
            return false;
        };
        let Some(slot) = self.list.get_mut(self.n) else {
            return false;
        };
        *slot = [xs, ws];
        self.n += 1;
        self.most = [self.most[0].max(x), self.most[1].max(w)];
        true
    }

    /// The taps, `[input, filter]` starts.
    pub(crate) fn iter(&self) -> impl Iterator<Item = [usize; 2]> + '_ {
        self.list[..self.n]
            .iter()
            .map(|&[x, w]| [x as usize, w as usize])
    }
}

/// The requantization of a chunk's elements, element by element: the bias bytes
/// (little-endian words), multipliers and shifts (each in `-31..=-1`, as
/// `requantize::takes` asks) of the chunk's first [`CHUNK`] elements, and the output's
/// offset.
#[derive(Clone, Copy)]
pub(crate) struct Finish<'a> {
    pub(crate) bias: &'a [u8],
    pub(crate) multipliers: &'a [i32],
    pub(crate) shifts: &'a [i32],
    pub(crate) offset: i32,
}

/// Where a chunk's elements find their input bytes when they are not the 16 after its
/// start (a stride along the row over pixels of fewer than 16 channels, or a depth
/// multiplier above 1): element `e < 8` at `offsets[e]`, element `e + 8` at `offsets[e] +
/// step`, which a gather load (VLDRB with a vector of offsets) reads.
pub(crate) struct Gather {
    pub(crate) offsets: [u16; 8],
    pub(crate) step: u32,
}

impl Gather {
    /// The input bytes a chunk spans from its start: its last element's, plus one.
    fn span(&self) -> usize {
        let most = self.offsets.iter().max().copied().unwrap_or(0);
        usize::from(most) + self.step as usize + 1
    }

    /// Element `e`'s input byte, from the chunk's start.
    fn at(&self, e: usize) -> usize {
        let step = if e < 8 { 0 } else { self.step as usize };
        usize::from(self.offsets[e % 8]) + step
    }
}

/// `out[e]` = the sum over `taps` of `(x[at_x + tx + g(e)] + offset) * w[at_w + tw + e]`
/// (each tap `[tx, tw]`; wrapping; `g(e)` is `e`, or `gather`'s), finished by `finish`,
/// for the [`CHUNK`] elements `e`: a chunk of one row's depthwise outputs, `sums` its
/// scratch. In assembly where every tap's bytes are in `x` and `w`, each list of `finish`
/// holds a chunk and `offset` fits 16 bits; else the same in Rust (which, like any slice
/// index, panics on a tap outside `x` or `w`: the callers' shapes keep them inside).
#[inline(always)]
pub(crate) fn chunk<T: Load>(
    out: &mut [u8; CHUNK],
    (x, at_x, gather): (&[T], usize, Option<&Gather>),
    (w, at_w): (&[u8], usize),
    (taps, offset): (&Taps, i32),
    finish: Finish<'_>,
    sums: &mut [i32; CHUNK],
) {
    let Finish {
        bias,
        multipliers,
        shifts,
        offset: out_offset,
    } = finish;
    let list = &taps.list[..taps.n];
    #[cfg(usmp_helium)]
    {
        let inside = |at: usize, most: usize, span: usize, len: usize| {
            at.checked_add(most)
                .and_then(|e| e.checked_add(span))
                .is_some_and(|e| e <= len)
        };
        let span = gather.map_or(CHUNK, Gather::span);
        let lists = bias.len() >= 4 * CHUNK && multipliers.len() >= CHUNK && shifts.len() >= CHUNK;
        let inside =
            inside(at_x, taps.most[0], span, x.len()) && inside(at_w, taps.most[1], CHUNK, w.len());
        if let (Some(x), Ok(lane), true) = (
            T::bytes(x),
            i16::try_from(offset),
            lists && inside && !list.is_empty(),
        ) {
            // `at_x + most + span <= x.len()` and likewise for `w`: checked above.
            let lists = [
                bias.as_ptr() as usize,
                multipliers.as_ptr() as usize,
                shifts.as_ptr() as usize,
                gather.map_or(0, |g| g.step as usize),
            ];
            let at = (x.wrapping_add(at_x), w[at_w..].as_ptr());
            match gather {
                None => chunk_in_assembly(out, at, (list, lane), (&lists, out_offset), sums),
                Some(g) => {
                    let run = (list, lane, &g.offsets);
                    chunk_gathered_in_assembly(out, at, run, (&lists, out_offset), sums);
                }
            }
            return;
        }
    }
    sums.fill(0);
    for &[tx, tw] in list {
        let (x, w) = (&x[at_x + tx as usize..], &w[at_w + tw as usize..]);
        for (e, (acc, &w)) in sums.iter_mut().zip(&w[..CHUNK]).enumerate() {
            let x = int8(x[gather.map_or(e, |g| g.at(e))].load()).wrapping_add(offset);
            *acc = acc.wrapping_add(x.wrapping_mul(int8(w)));
        }
    }
    super::requantize::row(sums, bias, multipliers, shifts, out_offset, out);
}

/// [`chunk`]'s assembly: `$load_low` and `$load_high` load the input's two halves into
/// Q4 from the tap's start in `{tx}` (`{n}` is free once the loop count is in LR), after
/// `$start`; the rest is the same for every form.
#[cfg(usmp_helium)]
macro_rules! chunk_assembly {
    ($start:literal, $load_low:literal, $load_high:literal, $tx:expr,
     ($out:expr, $x:expr, $w:expr, $list:expr, $offset:expr, $lists:expr, $out_offset:expr, $sums:expr)) => {
        core::arch::asm!(
            "vmov.i32 q0, #0",
            "vmov.i32 q1, #0",
            "vmov.i32 q2, #0",
            "vmov.i32 q3, #0",
            $start,
            "1:",
            "ldrd {tx}, {tw}, [{list}], #8",
            "add {tx}, {tx}, {x}",
            "add {tw}, {tw}, {w}",
            $load_low,
            "vldrb.s16 q5, [{tw}]",
            "vadd.i16 q4, q4, {off}",
            "vmullb.s16 q6, q4, q5",
            "vadd.i32 q0, q0, q6",
            "vmullt.s16 q6, q4, q5",
            "vadd.i32 q1, q1, q6",
            $load_high,
            "vldrb.s16 q5, [{tw}, #8]",
            "vadd.i16 q4, q4, {off}",
            "vmullb.s16 q6, q4, q5",
            "vadd.i32 q2, q2, q6",
            "vmullt.s16 q6, q4, q5",
            "vadd.i32 q3, q3, q6",
            "le lr, 1b",
            "vst20.32 {{q0, q1}}, [{sums}]",
            "vst21.32 {{q0, q1}}, [{sums}]!",
            "vst20.32 {{q2, q3}}, [{sums}]",
            "vst21.32 {{q2, q3}}, [{sums}]",
            "sub {sums}, {sums}, #32",
            // The taps are done: their registers take the lists.
            "ldr {x}, [{lists}]",
            "ldr {w}, [{lists}, #4]",
            "ldr {list}, [{lists}, #8]",
            ".rept 4",
            "vldrw.u32 q0, [{sums}], #16",
            "vldrb.u8 q1, [{x}], #16",
            "vadd.i32 q0, q0, q1",
            "vldrw.u32 q1, [{w}], #16",
            "vqrdmulh.s32 q0, q0, q1",
            "vshr.s32 q1, q0, #31",
            "vadd.i32 q0, q0, q1",
            "vldrw.u32 q1, [{list}], #16",
            "vrshl.s32 q0, q0, q1",
            "vadd.i32 q0, q0, {out_off}",
            "vqmovnb.s32 q0, q0",
            "vqmovnb.s16 q0, q0",
            "vstrb.32 q0, [{out}], #4",
            ".endr",
            n = inout(reg) $list.len() => _,
            list = inout(reg) $list.as_ptr() => _,
            x = inout(reg) $x => _,
            w = inout(reg) $w => _,
            tx = inout(reg) $tx => _,
            tw = out(reg) _,
            off = in(reg) i32::from($offset),
            sums = inout(reg) $sums.as_mut_ptr() => _,
            lists = in(reg) $lists.as_ptr(),
            out_off = in(reg) $out_offset,
            out = inout(reg) $out.as_mut_ptr() => _,
            out("lr") _,
            out("q0") _,
            out("q1") _,
            out("q2") _,
            out("q3") _,
            out("q4") _,
            out("q5") _,
            out("q6") _,
            out("q7") _,
            options(nostack),
        )
    };
}

/// [`chunk`]'s loop over a non-empty list whose every tap has 16 bytes at `x + tx` and at
/// `w + tw` (checked by `chunk`): the 16 input bytes in two halves of eight 16-bit lanes,
/// the offset added, times the filter's, the even lanes' and the odd lanes' products
/// (VMULLB, VMULLT) summed into four registers of 32-bit sums, stored interleaved back in
/// element order (VST20/VST21) in `sums`; then `requantize_row`'s loop, four elements at a
/// time, `lists` the addresses of the bias bytes, multipliers and shifts (16 of each).
#[cfg(usmp_helium)]
#[inline(always)]
fn chunk_in_assembly(
    out: &mut [u8; CHUNK],
    (x, w): (*const u8, *const u8),
    (list, offset): (&[[u32; 2]], i16),
    (lists, out_offset): (&[usize; 4], i32),
    sums: &mut [i32; CHUNK],
) {
    assert!(!list.is_empty());
    // SAFETY: the loop runs once per tap of `list` (borrowed, `list.len() >= 1`), reading
    // its two words with LDRD and then 16 bytes at `x + tx` and 16 at `w + tw`, which the
    // caller checked are inside `x`'s slice (bytes or cells no one writes during this
    // call) and `w`'s. It then stores 64 bytes at `sums` (`[i32; 16]`, borrowed mutably,
    // word-aligned as VST2 needs) and reads them back, reads 64 bytes at `lists[0]` and 16
    // words at `lists[1]` and `lists[2]` (slices `chunk` checked hold that many; `&[i32]`,
    // so aligned for VLDRW), and writes the 16 bytes of `out` (borrowed mutably). It
    // touches no other memory and not the stack; LR and the flags are declared clobbered;
    // Q4-Q7, callee-saved, are declared clobbered so the compiler saves them.
    unsafe {
        chunk_assembly!(
            "dls lr, {n}",
            "vldrb.s16 q4, [{tx}]",
            "vldrb.s16 q4, [{tx}, #8]",
            0usize,
            (out, x, w, list, offset, lists, out_offset, sums)
        );
    }
}

/// [`chunk_in_assembly`] with the input gathered: element `e < 8` at `x + tx +
/// offsets[e]`, element `e + 8` at that plus `lists[3]` (the step), which `chunk`
/// checked are inside `x`'s slice for every tap.
#[cfg(usmp_helium)]
#[inline(always)]
fn chunk_gathered_in_assembly(
    out: &mut [u8; CHUNK],
    (x, w): (*const u8, *const u8),
    (list, offset, offsets): (&[[u32; 2]], i16, &[u16; 8]),
    (lists, out_offset): (&[usize; 4], i32),
    sums: &mut [i32; CHUNK],
) {
    assert!(!list.is_empty());
    // SAFETY: as `chunk_in_assembly`'s, but each half of a tap's input is eight bytes
    // gathered at `x + tx + offsets[e]` (then at those plus the step), every one inside
    // `x`'s slice (checked by `chunk` with the gather's span); the 16 offsets are read
    // from `offsets` (borrowed, 2-byte aligned as VLDRH needs) before the loop, and the
    // step from `lists[3]`.
    unsafe {
        chunk_assembly!(
            "vldrh.u16 q7, [{tx}]\ndls lr, {n}\nldr {n}, [{lists}, #12]",
            "vldrb.s16 q4, [{tx}, q7]",
            "add {tx}, {tx}, {n}\nvldrb.s16 q4, [{tx}, q7]",
            offsets.as_ptr(),
            (out, x, w, list, offset, lists, out_offset, sums)
        );
    }
}
