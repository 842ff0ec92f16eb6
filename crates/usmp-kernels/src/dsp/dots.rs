//! The 1x1 convolution's dot products of two pixels with a block of filter rows in one
//! loop: [`super::two_dots`] for each row, the sums stored as two rows (pixel `a`'s, then
//! `b`'s). On thumbv7em one assembly loop over the rows, each row's set-up and stores
//! nine instructions; calling `two_dots` row by row from Rust had cost about 30 per row
//! around its loop (LLVM kept the block's values on the stack).

/// For each of the first `n` rows `r` of `filter` (rows of `4 * lanes.len() / 4` bytes,
/// the pixels' whole words: `lanes` as [`super::two_dots`] takes them, four lanes words
/// per word), `sums[0][r] = a · row` and `sums[1][r] = b · row`, wrapping. Returns the
/// rows done: `n`, or fewer where `filter` or `sums` holds fewer; none where `lanes` holds
/// no whole word.
#[inline(always)]
pub(crate) fn dot_rows<const N: usize>(
    lanes: &[u32],
    filter: &[u8],
    sums: &mut [[i32; N]; 2],
    n: usize,
) -> usize {
    let words = lanes.len() / 4;
    let Some(row) = words.checked_mul(4).filter(|&row| row > 0) else {
        return 0;
    };
    let rows = n.min(N).min(filter.len() / row);
    if rows == 0 {
        return 0;
    }
    #[cfg(usmp_dsp)]
    in_assembly(&lanes[..4 * words], &filter[..rows * row], sums, rows);
    #[cfg(not(usmp_dsp))]
    for (r, u) in filter.chunks_exact(row).take(rows).enumerate() {
        [sums[0][r], sums[1][r]] = super::two_dots(lanes, u, [0, 0]);
    }
    rows
}

/// [`dot_rows`]' loop: `rows >= 1` rows of `lanes.len()` bytes in `filter` (exactly),
/// `lanes.len()` a multiple of four and at least four, `rows <= N`.
#[cfg(usmp_dsp)]
#[inline(always)]
fn in_assembly<const N: usize>(
    lanes: &[u32],
    filter: &[u8],
    sums: &mut [[i32; N]; 2],
    rows: usize,
) {
    let words = lanes.len() / 4;
    let s = sums[0].as_mut_ptr();
    // SAFETY: per row the inner loop runs `words >= 1` times, each reading the next four
    // words at r8 (from `lanes`' start: `4 * words` words are there, an `&[u32]`, so
    // aligned for LDM) and the next word at `w` (`filter` holds exactly `rows * 4 *
    // words` bytes, read once in order; unaligned LDRs, which Armv7-M performs); after
    // each row it writes the two sums at `s` and at `s + 4 * N` bytes (`sums[0][r]` and
    // `sums[1][r]`: the two arrays of `[[i32; N]; 2]` are contiguous, `r < rows <= N`,
    // borrowed mutably here). It keeps the lanes' start, the word count and the end of
    // the first row of sums in 16 bytes it reserves below the stack pointer (which stays
    // 8-byte aligned) and gives back before it ends; it writes no other memory, only the
    // registers named; SUBS and CMP set the flags, so they are not declared preserved.
    unsafe {
        core::arch::asm!(
            "sub sp, sp, #16",
            "stm sp, {{r8, r9, r10}}",
            "1:",
            "ldm sp, {{r8, r9}}",
            "mov {da}, #0",
            "mov {db}, #0",
            "2:",
            "ldm r8!, {{r2, r3, r4, r5}}",
            "ldr {t0}, [{w}], #4",
            "sxtb16 r10, {t0}",
            "sxtb16 {t0}, {t0}, ror #8",
            "smlad {da}, r2, r10, {da}",
            "smlad {da}, r3, {t0}, {da}",
            "smlad {db}, r4, r10, {db}",
            "smlad {db}, r5, {t0}, {db}",
            "subs r9, r9, #1",
            "bne 2b",
            "str {db}, [{s}, #{second}]",
            "str {da}, [{s}], #4",
            "ldr {t0}, [sp, #8]",
            "cmp {s}, {t0}",
            "bne 1b",
            "add sp, sp, #16",
            second = const 4 * N,
            // The lanes' start and the word count (r8 and r9 walk them), the end of the
            // first row of sums (stored; then r10 is a scratch register).
            inout("r8") lanes.as_ptr() => _,
            inout("r9") words => _,
            inout("r10") s.wrapping_add(rows) => _,
            w = inout(reg) filter.as_ptr() => _,
            s = inout(reg) s => _,
            da = out(reg) _,
            db = out(reg) _,
            t0 = out(reg) _,
            out("r2") _,
            out("r3") _,
            out("r4") _,
            out("r5") _,
        );
    }
}

/// For each of the first `n / 2` pairs of rows `(u, v)` of `filter` (rows of `depth =
/// x.len() / 2` bytes; `x` the two pixels' offset inputs interleaved, as
/// `pair_products` takes them), `[sums[0][2j], sums[0][2j + 1], sums[1][2j],
/// sums[1][2j + 1]] = [a · u, a · v, b · u, b · v]`, wrapping. Returns the rows done
/// (even): fewer than `n` where `filter` or `sums` holds fewer pairs. On Thumb-2 cores
/// (`usmp_thumb2`) one assembly loop over the pairs, each pair's set-up and stores 15
/// instructions around `pair_products`' loop; elsewhere `pair_products` per pair.
#[inline(always)]
pub(crate) fn pair_rows<const N: usize>(
    x: &[i16],
    filter: &[u8],
    sums: &mut [[i32; N]; 2],
    n: usize,
) -> usize {
    let depth = x.len() / 2;
    if depth == 0 {
        return 0;
    }
    let pairs = (n.min(N) / 2).min(filter.len() / depth / 2);
    if pairs == 0 {
        return 0;
    }
    #[cfg(usmp_thumb2)]
    pairs_in_assembly(&x[..2 * depth], &filter[..2 * pairs * depth], sums, pairs);
    #[cfg(not(usmp_thumb2))]
    for (j, uv) in filter.chunks_exact(2 * depth).take(pairs).enumerate() {
        let (u, v) = uv.split_at(depth);
        let [au, av, bu, bv] = super::pair_products(x, u, v, [0; 4]);
        [sums[0][2 * j], sums[0][2 * j + 1]] = [au, av];
        [sums[1][2 * j], sums[1][2 * j + 1]] = [bu, bv];
    }
    2 * pairs
}

/// [`pair_rows`]' loop: `x` of `2 * depth >= 2` values, `filter` of exactly `pairs >= 1`
/// pairs of rows of `depth` bytes, `2 * pairs <= N`.
#[cfg(usmp_thumb2)]
#[inline(always)]
fn pairs_in_assembly<const N: usize>(
    x: &[i16],
    filter: &[u8],
    sums: &mut [[i32; N]; 2],
    pairs: usize,
) {
    let depth = x.len() / 2;
    let s = sums[0].as_mut_ptr();
    // SAFETY: per pair of rows the inner loop runs `depth >= 1` times, each reading the
    // next two halfwords at r8 (from `x`'s start: `2 * depth` are there, an `&[i16]`, so
    // aligned) and the next byte of each row (`up` from the pair's first row, `vp` from
    // its second: `filter` holds exactly `pairs` pairs of rows, read once in order); after
    // each pair it writes four sums, two at the pointer kept at `sp + 8` and two at `4 *
    // N` bytes past it (`sums[0][2j..2j + 2]` and `sums[1][2j..2j + 2]`: the two arrays
    // of `[[i32; N]; 2]` are contiguous, `2j + 1 < 2 * pairs <= N`, borrowed mutably
    // here). It keeps `x`'s start, `depth`, that pointer and its end in 16 of 24 bytes it
    // reserves below the stack pointer (which stays 8-byte aligned) and gives back before
    // it ends; it writes no other memory, only the registers named; SUBS and CMP set the
    // flags, so they are not declared preserved. Every instruction is Thumb-2.
    unsafe {
        core::arch::asm!(
            "sub sp, sp, #24",
            "stm sp, {{r8, r9, r10, r11}}",
            "1:",
            "ldm sp, {{r8, r9}}",
            "add {vp}, {up}, r9",
            "mov {a0}, #0",
            "mov {a1}, #0",
            "mov r10, #0",
            "mov r11, #0",
            "2:",
            "ldrsh {xa}, [r8], #2",
            "ldrsh {xb}, [r8], #2",
            "ldrsb {wu}, [{up}], #1",
            "ldrsb {wv}, [{vp}], #1",
            "mla {a0}, {xa}, {wu}, {a0}",
            "mla {a1}, {xa}, {wv}, {a1}",
            "mla r10, {xb}, {wu}, r10",
            "mla r11, {xb}, {wv}, r11",
            "subs r9, r9, #1",
            "bne 2b",
            "mov {up}, {vp}",
            "ldr {xa}, [sp, #8]",
            "strd {a0}, {a1}, [{xa}]",
            "strd r10, r11, [{xa}, #{second}]",
            "add {xa}, {xa}, #8",
            "str {xa}, [sp, #8]",
            "ldr {xb}, [sp, #12]",
            "cmp {xa}, {xb}",
            "bne 1b",
            "add sp, sp, #24",
            second = const 4 * N,
            // `x`'s start and `depth` (r8 and r9 walk them), the sums' pointer and its end
            // (stored; then r10 and r11 are pixel `b`'s sums).
            inout("r8") x.as_ptr() => _,
            inout("r9") depth => _,
            inout("r10") s => _,
            inout("r11") s.wrapping_add(2 * pairs) => _,
            up = inout(reg) filter.as_ptr() => _,
            vp = out(reg) _,
            a0 = out(reg) _,
            a1 = out(reg) _,
            xa = out(reg) _,
            xb = out(reg) _,
            wu = out(reg) _,
            wv = out(reg) _,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{dot_rows, pair_rows};
    use crate::dsp::{sxtab16, sxtab16_odd};

    /// Each row's dot products with both pixels, rows past `n`, `N` or the filter left
    /// alone, and nothing without a whole word.
    #[test]
    fn dot_rows_are_each_rows_dot_products() {
        let (a, b): ([u8; 8], [u8; 8]) = (
            core::array::from_fn(|k| (k as u8).wrapping_mul(53) ^ 0x9C),
            core::array::from_fn(|k| (k as u8).wrapping_mul(29) ^ 0x31),
        );
        let offset = 100u32 | (100 << 16);
        let mut lanes = [0u32; 8];
        for (k, l) in lanes.chunks_exact_mut(4).enumerate() {
            let word = |p: &[u8; 8]| {
                u32::from_le_bytes([p[4 * k], p[4 * k + 1], p[4 * k + 2], p[4 * k + 3]])
            };
            [l[0], l[1], l[2], l[3]] = [
                sxtab16(offset, word(&a)),
                sxtab16_odd(offset, word(&a)),
                sxtab16(offset, word(&b)),
                sxtab16_odd(offset, word(&b)),
            ];
        }
        let filter: [u8; 40] = core::array::from_fn(|k| (k as u8).wrapping_mul(77) ^ 0x5A);
        let dot = |p: &[u8; 8], r: usize| {
            (0..8).fold(0i32, |s, k| {
                s + (i32::from(p[k] as i8) + 100) * i32::from(filter[8 * r + k] as i8)
            })
        };
        let mut sums = [[-1i32; 4]; 2];
        assert_eq!(dot_rows(&lanes, &filter, &mut sums, 3), 3);
        for (r, (&sa, &sb)) in sums[0].iter().zip(&sums[1]).take(3).enumerate() {
            assert_eq!([sa, sb], [dot(&a, r), dot(&b, r)], "row {r}");
        }
        assert_eq!([sums[0][3], sums[1][3]], [-1, -1], "past n");
        assert_eq!(dot_rows(&lanes, &filter, &mut sums, 9), 4, "N rows at most");
        assert_eq!(
            dot_rows(&lanes, &filter[..12], &mut sums, 4),
            1,
            "whole rows only"
        );
        assert_eq!(
            dot_rows(&lanes[..3], &filter, &mut sums, 4),
            0,
            "no whole word"
        );
    }

    /// Each pair of rows' four dot products with the interleaved pixels, pairs past `n`,
    /// `N` or the filter left alone.
    #[test]
    fn pair_rows_are_each_pairs_dot_products() {
        let x: [i16; 10] = core::array::from_fn(|k| (k as i16 * 61) % 255 - 127);
        let filter: [u8; 30] = core::array::from_fn(|k| (k as u8).wrapping_mul(83) ^ 0xA5);
        let dot = |pixel: usize, r: usize| {
            (0..5).fold(0i32, |s, k| {
                s + i32::from(x[2 * k + pixel]) * i32::from(filter[5 * r + k] as i8)
            })
        };
        let mut sums = [[-1i32; 4]; 2];
        assert_eq!(pair_rows(&x, &filter, &mut sums, 3), 2, "whole pairs only");
        assert_eq!(sums[0][..2], [dot(0, 0), dot(0, 1)]);
        assert_eq!(sums[1][..2], [dot(1, 0), dot(1, 1)]);
        assert_eq!([sums[0][2], sums[1][2]], [-1, -1], "past n");
        assert_eq!(pair_rows(&x, &filter, &mut sums, 8), 4, "N rows at most");
        assert_eq!(sums[0][2..], [dot(0, 2), dot(0, 3)]);
        assert_eq!(sums[1][2..], [dot(1, 2), dot(1, 3)]);
        assert_eq!(
            pair_rows(&x, &filter[..9], &mut sums, 4),
            0,
            "no whole pair"
        );
    }
}
