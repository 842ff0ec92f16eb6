//! Helium (MVE, Armv8.1-M: Cortex-M55, M85) loops for the 1x1 convolution, where one
//! VMLADAVA multiplies and sums sixteen int8 pairs: [`gather`] lays four pixels' inputs
//! side by side in 16-byte pieces, so one running pointer reads all four, and [`dots`] runs
//! every filter row of a block over them, four sums per row. Each loop is tail-predicated
//! (WLSTP/LETP): a row's last piece loads only the bytes that are there, so no length need
//! be a multiple of 16 and nothing is read past a slice.
//!
//! Under `usmp_helium` they are assembly; elsewhere the same arithmetic in Rust, which the
//! host tests run against the general loops.

use crate::overlap::Load;

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
