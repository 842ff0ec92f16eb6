//! Two signed 16-bit lanes in one word, as the Armv7E-M DSP extension's SIMD instructions
//! take them (Cortex-M4, M7): on those cores each function is the one instruction its
//! name gives (seven of them, each reading and writing registers only; [`max_bytes`] is
//! two, SSUB8 and SEL, four signed bytes at a time), and [`two_dots`],
//! [`tap_words`] and [`rows_taps`] loops of them over slices they check first;
//! [`dots::pair_rows`] is a loop of plain Thumb-2 multiply-accumulates for the cores
//! without the extension (M3, M33, M55). Everywhere else, the same arithmetic in portable
//! Rust, so the kernels built on them run (and are tested) on every target. Lane 0 is the
//! low half.
//!
//! [`requantize`] is the requantization of a row of accumulators, a Thumb-2 loop too;
//! [`window`] runs [`tap_words`] over every tap of a depthwise output pixel, [`dots`]
//! [`two_dots`] over a block of filter rows.
//!
//! [`mve`], [`chunks`] and `sums` are Helium's (Cortex-M55, M85, built with their
//! `target-cpu`: `usmp_helium`): the 1x1's four pixels by every filter row, the depthwise
//! chunks of sixteen outputs, and ADD four elements at a time; there [`requantize`]'s row
//! takes four outputs at a time.
//!
//! The build script sets `usmp_dsp` for `thumbv7em` targets: stable Rust cannot test
//! the `dsp` target feature itself.

use crate::overlap::Load;

pub(crate) mod chunks;
pub(crate) mod dots;
pub(crate) mod mve;
pub(crate) mod requantize;
#[cfg(any(test, usmp_helium))]
pub(crate) mod sums;
pub(crate) mod window;

/// One DSP instruction: `$text`, its result in `{o}`, its inputs the named words.
#[cfg(usmp_dsp)]
macro_rules! instruction {
    ($text:literal, $($name:ident = $value:expr),+) => {{
        let out;
        // SAFETY: every instruction given here (SXTB16, SXTAB16, SMLAD, SMLABB, SMLABT,
        // SMLATT) is of the DSP extension, which every thumbv7em core has, and reads and
        // writes only the registers named: no memory, no stack. SMLAD and its kin may set the sticky
        // Q flag, which nothing here reads, so the flags are not declared preserved.
        unsafe {
            core::arch::asm!($text, o = lateout(reg) out, $($name = in(reg) $value),+,
                options(pure, nomem, nostack));
        }
        out
    }};
}

/// A word of two lanes.
pub(crate) type Lanes = u32;

/// A tap's input and filter positions, 32 bits each on every target, so the kernel work
/// that lists them (`crate::work`) has the size the build plans for it, whatever the
/// width of the build machine's `usize`.
pub(crate) type At = [u32; 2];

/// Whether every position in slices of `lens` bytes fits an [`At`]'s 32 bits.
#[inline(always)]
pub(crate) fn positions_fit(lens: [usize; 2]) -> bool {
    lens.iter().all(|&len| u32::try_from(len).is_ok())
}

/// The largest input and filter positions of `list`.
#[inline(always)]
fn largest(list: &[At]) -> [usize; 2] {
    list.iter().fold([0, 0], |[i, f], t| {
        [i.max(t[0] as usize), f.max(t[1] as usize)]
    })
}

/// `value` in both lanes.
#[inline(always)]
pub(crate) fn splat(value: i16) -> Lanes {
    pair(value, value)
}

/// `low` in lane 0 and `high` in lane 1.
#[inline(always)]
pub(crate) fn pair(low: i16, high: i16) -> Lanes {
    u32::from(low as u16) | (u32::from(high as u16) << 16)
}

/// Lane `k` of `x`, as a signed 16-bit value.
#[cfg(test)]
pub(crate) fn lane(x: Lanes, k: u32) -> i16 {
    (x >> (16 * k)) as u16 as i16
}

/// Bytes 0 and 2 of `x`, sign-extended into lanes 0 and 1 (SXTB16).
#[inline(always)]
pub(crate) fn sxtb16(x: u32) -> Lanes {
    #[cfg(usmp_dsp)]
    return instruction!("sxtb16 {o}, {x}", x = x);
    #[cfg(not(usmp_dsp))]
    {
        let byte = |k: u32| u32::from((x >> (8 * k)) as u8 as i8 as i16 as u16);
        byte(0) | (byte(2) << 16)
    }
}

/// Bytes 1 and 3 of `x`, sign-extended into lanes 0 and 1 (SXTB16 with ROR #8).
#[inline(always)]
pub(crate) fn sxtb16_odd(x: u32) -> Lanes {
    #[cfg(usmp_dsp)]
    return instruction!("sxtb16 {o}, {x}, ror #8", x = x);
    #[cfg(not(usmp_dsp))]
    sxtb16(x.rotate_right(8))
}

/// Bytes 0 and 2 of `x`, sign-extended and added to `a`'s lanes, each lane wrapping
/// (SXTAB16).
#[inline(always)]
pub(crate) fn sxtab16(a: Lanes, x: u32) -> Lanes {
    #[cfg(usmp_dsp)]
    return instruction!("sxtab16 {o}, {a}, {x}", a = a, x = x);
    #[cfg(not(usmp_dsp))]
    {
        let b = sxtb16(x);
        let low = (a as u16).wrapping_add(b as u16);
        let high = ((a >> 16) as u16).wrapping_add((b >> 16) as u16);
        u32::from(low) | (u32::from(high) << 16)
    }
}

/// [`sxtab16`] of bytes 1 and 3 (SXTAB16 with ROR #8).
#[inline(always)]
pub(crate) fn sxtab16_odd(a: Lanes, x: u32) -> Lanes {
    #[cfg(usmp_dsp)]
    return instruction!("sxtab16 {o}, {a}, {x}, ror #8", a = a, x = x);
    #[cfg(not(usmp_dsp))]
    sxtab16(a, x.rotate_right(8))
}

/// The larger of each pair of signed bytes of `a` and `b` (SSUB8 sets each byte's GE flag
/// where `a`'s is not below `b`'s, SEL takes `a`'s byte there, `b`'s elsewhere).
#[inline(always)]
pub(crate) fn max_bytes(a: u32, b: u32) -> u32 {
    #[cfg(usmp_dsp)]
    {
        let out;
        // SAFETY: SSUB8 and SEL are of the DSP extension, which every thumbv7em core has;
        // they read and write only the registers named and the GE flags (not declared
        // preserved), no memory, no stack. `out` is written before the inputs' last read,
        // so it is an early-clobber output (`out`, not `lateout`).
        unsafe {
            core::arch::asm!(
                "ssub8 {o}, {a}, {b}",
                "sel {o}, {a}, {b}",
                o = out(reg) out,
                a = in(reg) a,
                b = in(reg) b,
                options(pure, nomem, nostack),
            );
        }
        out
    }
    #[cfg(not(usmp_dsp))]
    {
        let byte = |x: u32, k: u32| (x >> (8 * k)) as u8 as i8;
        (0..4).fold(0, |m, k| {
            m | (u32::from(byte(a, k).max(byte(b, k)) as u8) << (8 * k))
        })
    }
}

/// `acc` plus the products of the lanes of `a` and `b`, wrapping (SMLAD: two multiplies
/// and both adds in one instruction; its Q flag, set on an overflow the wrapping sum
/// ignores, is not read by anything here).
#[inline(always)]
pub(crate) fn smlad(a: Lanes, b: Lanes, acc: i32) -> i32 {
    #[cfg(usmp_dsp)]
    return instruction!("smlad {o}, {a}, {b}, {c}", a = a, b = b, c = acc);
    #[cfg(not(usmp_dsp))]
    {
        let product = |k: u32| {
            let (x, y) = ((a >> (16 * k)) as u16 as i16, (b >> (16 * k)) as u16 as i16);
            i32::from(x) * i32::from(y)
        };
        acc.wrapping_add(product(0)).wrapping_add(product(1))
    }
}

/// `acc` plus the product of lane 0 of `a` and lane 0 of `b` (SMLABB).
#[inline(always)]
pub(crate) fn smlabb(a: Lanes, b: Lanes, acc: i32) -> i32 {
    #[cfg(usmp_dsp)]
    return instruction!("smlabb {o}, {a}, {b}, {c}", a = a, b = b, c = acc);
    #[cfg(not(usmp_dsp))]
    acc.wrapping_add(i32::from(a as u16 as i16) * i32::from(b as u16 as i16))
}

/// `acc` plus the product of lane 0 of `a` and lane 1 of `b` (SMLABT).
#[inline(always)]
pub(crate) fn smlabt(a: Lanes, b: Lanes, acc: i32) -> i32 {
    #[cfg(usmp_dsp)]
    return instruction!("smlabt {o}, {a}, {b}, {c}", a = a, b = b, c = acc);
    #[cfg(not(usmp_dsp))]
    smlabb(a, b >> 16, acc)
}

/// `acc` plus the product of lane 1 of `a` and lane 1 of `b` (SMLATT).
// Its one caller, `tap_words`' portable form, is not built for thumbv7em (there the loop
// is assembly); the tests use it on every target.
#[cfg_attr(usmp_dsp, allow(dead_code))]
#[inline(always)]
pub(crate) fn smlatt(a: Lanes, b: Lanes, acc: i32) -> i32 {
    #[cfg(usmp_dsp)]
    return instruction!("smlatt {o}, {a}, {b}, {c}", a = a, b = b, c = acc);
    #[cfg(not(usmp_dsp))]
    smlabb(a >> 16, b >> 16, acc)
}

/// The dot products of one filter row `u` (int8, four bytes a word) with two pixels whose
/// words are widened in `lanes`, four lanes words per word of `u` (pixel `a`'s bytes 0
/// and 2, then 1 and 3, then pixel `b`'s likewise, as SXTAB16 makes them), added to
/// `acc`: `[acc[0] + a · u, acc[1] + b · u]` over the words both hold, wrapping. The
/// 1x1 convolution's inner loop: on thumbv7em one load of four lanes words, one of `u`,
/// two SXTB16 and four SMLAD per word (10 instructions for 8 products, where the loop
/// LLVM made of the functions above took 12.5 and kept values on the stack).
#[inline(always)]
pub(crate) fn two_dots(lanes: &[u32], u: &[u8], acc: [i32; 2]) -> [i32; 2] {
    let n = (lanes.len() / 4).min(u.len() / 4);
    if n == 0 {
        return acc;
    }
    #[cfg(usmp_dsp)]
    {
        let [mut da, mut db] = acc;
        let (l, w) = (lanes.as_ptr(), u.as_ptr());
        // SAFETY: the loop runs `n >= 1` times, each reading the next four words
        // at `l` (an `&[u32]`, so aligned for LDM; `4 * n <= lanes.len()` words are
        // there) and the next word at `w` (`4 * n <= u.len()` bytes are there; an
        // unaligned LDR, which Armv7-M performs, as LLVM's own loads here do). It writes
        // only the registers named (r2-r5 and the operands), reads no other memory,
        // writes none and does not touch the stack; SUBS sets the flags, so they are not
        // declared preserved.
        unsafe {
            core::arch::asm!(
                "2:",
                "ldm {l}!, {{r2, r3, r4, r5}}",
                "ldr {t0}, [{w}], #4",
                "sxtb16 {t1}, {t0}",
                "sxtb16 {t0}, {t0}, ror #8",
                "smlad {da}, r2, {t1}, {da}",
                "smlad {da}, r3, {t0}, {da}",
                "smlad {db}, r4, {t1}, {db}",
                "smlad {db}, r5, {t0}, {db}",
                "subs {n}, {n}, #1",
                "bne 2b",
                l = inout(reg) l => _,
                w = inout(reg) w => _,
                n = inout(reg) n => _,
                da = inout(reg) da,
                db = inout(reg) db,
                t0 = out(reg) _,
                t1 = out(reg) _,
                out("r2") _,
                out("r3") _,
                out("r4") _,
                out("r5") _,
                options(readonly, nostack),
            );
        }
        [da, db]
    }
    #[cfg(not(usmp_dsp))]
    {
        let [mut da, mut db] = acc;
        for (x, u) in lanes.chunks_exact(4).zip(u.chunks_exact(4)).take(n) {
            let u = u32::from_le_bytes([u[0], u[1], u[2], u[3]]);
            let (ue, uo) = (sxtb16(u), sxtb16_odd(u));
            da = smlad(x[1], uo, smlad(x[0], ue, da));
            db = smlad(x[3], uo, smlad(x[2], ue, db));
        }
        [da, db]
    }
}

/// One depthwise tap over whole words of channels: `acc[c] += (x[c] + offset) * w[c]`
/// for the channels of the words `acc`, `x` and `w` all hold (four per word), each sum
/// wrapping; `offsets` is the input offset in both lanes. `T` is one of the input's
/// element types ([`Load`]: `u8`, or the `Cell<u8>` of a region an output shares), one
/// byte each. On thumbv7em a loop of two loads, four widenings (SXTAB16, SXTB16), four
/// SMLABB/SMLATT and the sums loaded and stored two at a time: 16 instructions per four
/// channels, where LLVM's loop of the functions above took 20.
#[inline(always)]
pub(crate) fn tap_words<T: Load>(acc: &mut [i32], x: &[T], w: &[u8], offsets: Lanes) {
    let n = (acc.len() / 4).min(x.len() / 4).min(w.len() / 4);
    if n == 0 {
        return;
    }
    #[cfg(usmp_dsp)]
    {
        const { assert!(core::mem::size_of::<T>() == 1) };
        let (a, xp, wp) = (acc.as_mut_ptr(), x.as_ptr().cast::<u8>(), w.as_ptr());
        // SAFETY: the loop runs `n >= 1` times, each reading the next word at `xp` and
        // at `wp` (`4 * n` bytes of each slice are there: `T` is one byte, asserted above,
        // and `Load`'s types, `u8` and `Cell<u8>`, are initialized bytes nothing writes
        // while this runs: the region is borrowed here; unaligned LDRs, which Armv7-M
        // performs) and reading then writing the next four sums at `a` (`4 * n` of
        // `acc`'s `i32`s, aligned for LDM and STM, borrowed mutably here). It writes no
        // other memory, only the registers named (r2, r3 and the operands), and does not
        // touch the stack; SUBS sets the flags, so they are not declared preserved.
        unsafe {
            core::arch::asm!(
                "2:",
                "ldr {t0}, [{xp}], #4",
                "ldr {t1}, [{wp}], #4",
                "sxtab16 {t2}, {off}, {t0}",
                "sxtab16 {t0}, {off}, {t0}, ror #8",
                "sxtb16 {t3}, {t1}",
                "sxtb16 {t1}, {t1}, ror #8",
                "ldm {a}, {{r2, r3}}",
                "smlabb r2, {t2}, {t3}, r2",
                "smlabb r3, {t0}, {t1}, r3",
                "stm {a}!, {{r2, r3}}",
                "ldm {a}, {{r2, r3}}",
                "smlatt r2, {t2}, {t3}, r2",
                "smlatt r3, {t0}, {t1}, r3",
                "stm {a}!, {{r2, r3}}",
                "subs {n}, {n}, #1",
                "bne 2b",
                a = inout(reg) a => _,
                xp = inout(reg) xp => _,
                wp = inout(reg) wp => _,
                n = inout(reg) n => _,
                off = in(reg) offsets,
                t0 = out(reg) _,
                t1 = out(reg) _,
                t2 = out(reg) _,
                t3 = out(reg) _,
                out("r2") _,
                out("r3") _,
                options(nostack),
            );
        }
    }
    #[cfg(not(usmp_dsp))]
    {
        let blocks = acc
            .chunks_exact_mut(4)
            .zip(x.chunks_exact(4))
            .zip(w.chunks_exact(4));
        for ((a, x), w) in blocks.take(n) {
            let xs = u32::from_le_bytes([x[0].load(), x[1].load(), x[2].load(), x[3].load()]);
            let ws = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            let (xe, xo) = (sxtab16(offsets, xs), sxtab16_odd(offsets, xs));
            let (we, wo) = (sxtb16(ws), sxtb16_odd(ws));
            a[0] = smlabb(xe, we, a[0]);
            a[1] = smlabb(xo, wo, a[1]);
            a[2] = smlatt(xe, we, a[2]);
            a[3] = smlatt(xo, wo, a[3]);
        }
    }
}

/// The sums of two pixels by two filter rows, added to `acc`: with `x` the pixels' input
/// interleaved and offset (`a[0], b[0], a[1], b[1], ...`), `[acc[0] + a · u, acc[1] + a ·
/// v, acc[2] + b · u, acc[3] + b · v]` over the elements all hold (int8 filter bytes),
/// wrapping. The 1x1 convolution's inner loop on cores without the DSP extension, in Rust
/// (Cortex-M0, RISC-V, the host); on Thumb-2 cores [`dots::pair_rows`] runs the same loop
/// in assembly over a block of rows.
#[cfg(any(test, not(usmp_thumb2)))]
#[inline(always)]
pub(crate) fn pair_products(x: &[i16], u: &[u8], v: &[u8], acc: [i32; 4]) -> [i32; 4] {
    let n = (x.len() / 2).min(u.len()).min(v.len());
    let mut acc = acc;
    for ((x, &u), &v) in x.chunks_exact(2).zip(u).zip(v).take(n) {
        let (xa, xb) = (i32::from(x[0]), i32::from(x[1]));
        let (u, v) = (i32::from(u as i8), i32::from(v as i8));
        acc[0] = acc[0].wrapping_add(xa.wrapping_mul(u));
        acc[1] = acc[1].wrapping_add(xa.wrapping_mul(v));
        acc[2] = acc[2].wrapping_add(xb.wrapping_mul(u));
        acc[3] = acc[3].wrapping_add(xb.wrapping_mul(v));
    }
    acc
}

/// The filter rows of a depthwise call of multiplier 8 or more, eight outputs of one
/// input channel: for each `[i, f]` of `rows` and each of `taps` taps `k`, the input
/// element `x[i + k * step]` plus `offset` times the eight filter bytes `w[f + k *
/// out_c..][..8]`, added to `acc` (wrapping). Returns `false`, having added nothing,
/// where the slices do not hold every tap of every row. On thumbv7em one loop over the
/// rows (each row's positions found in 13 instructions, the bases kept in 24 bytes it
/// reserves below the stack pointer) around a loop of one byte load, two filter words
/// widened (SXTB16) and eight SMLABB/SMLABT on the sums, loaded and stored two at a time
/// (29 instructions per tap where LLVM's loop, its indexes checked and its values
/// spilled, took about 40; a row at a time from Rust cost about 90 per row around it).
#[inline(always)]
pub(crate) fn rows_taps<T: Load>(
    acc: &mut [i32; 8],
    (x, w): (&[T], &[u8]),
    rows: &[At],
    (step, out_c): (usize, usize),
    (taps, offset): (usize, i32),
) -> bool {
    let Some(last) = taps.checked_sub(1) else {
        return true;
    };
    let [i, f] = largest(rows);
    let end =
        |at: usize, by: usize, n: usize| last.checked_mul(by)?.checked_add(at)?.checked_add(n);
    let inside = end(i, step, 1).is_some_and(|e| e <= x.len())
        && end(f, out_c, 8).is_some_and(|e| e <= w.len());
    if !inside {
        return false;
    }
    if rows.is_empty() {
        return true;
    }
    #[cfg(usmp_dsp)]
    {
        const { assert!(core::mem::size_of::<T>() == 1) };
        let list = rows.as_ptr_range();
        // SAFETY: the loop reads `rows` (borrowed here; `[u32; 2]`, so `i` then `f`)
        // one row at a time from `list.start` to `list.end`, at least one. Per row it runs
        // `taps >= 1` times; pass `k` reads the byte at `x + i + k * step` (inside `x`,
        // checked above for the largest `i`: `T` is one byte, asserted, and `Load`'s types
        // are initialized bytes nothing writes while this runs) and the eight bytes at
        // `w + f + k * out_c` (inside `w`, checked above for the largest `f`; unaligned
        // LDRs, which Armv7-M performs), and reads then writes the eight sums at r10
        // (`acc`, borrowed mutably, aligned for LDM and STM; r10 is back at its start
        // after each pass). It keeps the bases, `taps` and the list's place and end in
        // 24 bytes it reserves below the stack pointer (which stays 8-byte aligned) and
        // gives back before it ends; it writes no other memory, only the registers
        // named; CMP and SUBS set the flags, so they are not declared preserved.
        unsafe {
            core::arch::asm!(
                "sub sp, sp, #24",
                "stm sp, {{r8, r9, r10, r11}}",
                "strd {x}, {t0}, [sp, #16]",
                "1:",
                "ldrd {t0}, {t1}, [sp, #16]",
                "cmp {t0}, {t1}",
                "beq 3f",
                "ldm {t0}!, {{r8, r9}}",
                "str {t0}, [sp, #16]",
                "ldr {t0}, [sp]",
                "add r8, r8, {t0}",
                "ldr {t0}, [sp, #4]",
                "add r9, r9, {t0}",
                "ldrd r10, r11, [sp, #8]",
                "2:",
                "ldrsb {x}, [r8]",
                "add r8, r8, {step}",
                "add {x}, {x}, {off}",
                "ldr {t0}, [r9]",
                "sxtb16 {t1}, {t0}",
                "sxtb16 {t0}, {t0}, ror #8",
                "ldm r10, {{r2, r3}}",
                "smlabb r2, {x}, {t1}, r2",
                "smlabb r3, {x}, {t0}, r3",
                "stm r10!, {{r2, r3}}",
                "ldm r10, {{r2, r3}}",
                "smlabt r2, {x}, {t1}, r2",
                "smlabt r3, {x}, {t0}, r3",
                "stm r10!, {{r2, r3}}",
                "ldr {t0}, [r9, #4]",
                "add r9, r9, {outc}",
                "sxtb16 {t1}, {t0}",
                "sxtb16 {t0}, {t0}, ror #8",
                "ldm r10, {{r2, r3}}",
                "smlabb r2, {x}, {t1}, r2",
                "smlabb r3, {x}, {t0}, r3",
                "stm r10!, {{r2, r3}}",
                "ldm r10, {{r2, r3}}",
                "smlabt r2, {x}, {t1}, r2",
                "smlabt r3, {x}, {t0}, r3",
                "stm r10!, {{r2, r3}}",
                "sub r10, r10, #32",
                "subs r11, r11, #1",
                "bne 2b",
                "b 1b",
                "3:",
                "add sp, sp, #24",
                // The bases and `taps` (stored; then the row's input, filter, sums and
                // count of taps).
                inout("r8") x.as_ptr().cast::<u8>() => _,
                inout("r9") w.as_ptr() => _,
                inout("r10") acc.as_mut_ptr() => _,
                inout("r11") taps => _,
                step = in(reg) step,
                outc = in(reg) out_c,
                off = in(reg) offset,
                // The list's place and end (stored; then scratch registers).
                x = inout(reg) list.start => _,
                t0 = inout(reg) list.end => _,
                t1 = out(reg) _,
                out("r2") _,
                out("r3") _,
            );
        }
    }
    #[cfg(not(usmp_dsp))]
    for &[i, f] in rows {
        let (i, f) = (i as usize, f as usize);
        for k in 0..taps {
            let x = i32::from(x[i + k * step].load() as i8) + offset;
            for (acc, &w) in acc.iter_mut().zip(&w[f + k * out_c..f + k * out_c + 8]) {
                *acc = acc.wrapping_add(i32::from(w as i8).wrapping_mul(x));
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overlap::tests::Rng;

    /// `two_dots` against the products one by one, on random words and lengths (none,
    /// and lanes or filter bytes left over).
    #[test]
    fn two_dots_are_the_pixels_dot_products() {
        let mut rng = Rng(0x2F0E_1D3C_4B5A_6978);
        for _ in 0..2_000 {
            let words = rng.below(12);
            let lanes: std::vec::Vec<u32> = (0..4 * words + rng.below(4))
                .map(|_| (rng.below(1 << 16) as u32) << 16 | rng.below(1 << 16) as u32)
                .collect();
            let u: std::vec::Vec<u8> = (0..4 * words + rng.below(5))
                .map(|_| rng.below(256) as u8)
                .collect();
            let acc = [rng.below(1 << 20) as i32, -(rng.below(1 << 20) as i32)];
            let n = (lanes.len() / 4).min(u.len() / 4);
            let mut want = acc;
            for (k, &w) in u.iter().enumerate().take(4 * n) {
                let (word, byte, w) = (k / 4, k % 4, i32::from(w as i8));
                // Bytes 0 and 2 are lanes 0 and 1 of the even word, 1 and 3 of the odd.
                let lane_of = |x: u32| i32::from(lane(x, (byte / 2) as u32));
                let (a, b) = match byte % 2 {
                    0 => (lanes[4 * word], lanes[4 * word + 2]),
                    _ => (lanes[4 * word + 1], lanes[4 * word + 3]),
                };
                want[0] = want[0].wrapping_add(lane_of(a) * w);
                want[1] = want[1].wrapping_add(lane_of(b) * w);
            }
            assert_eq!(two_dots(&lanes, &u, acc), want);
        }
    }

    /// Each function against its definition lane by lane, on random words.
    #[test]
    fn lanes_follow_their_definitions() {
        let mut rng = Rng(0x5DEE_CE66_D1CE_4E5B);
        for _ in 0..20_000 {
            let word =
                |rng: &mut Rng| (rng.below(1 << 16) as u32) << 16 | rng.below(1 << 16) as u32;
            let (x, a, b) = (word(&mut rng), word(&mut rng), word(&mut rng));
            let byte = |k: u32| i16::from((x >> (8 * k)) as u8 as i8);
            assert_eq!([lane(sxtb16(x), 0), lane(sxtb16(x), 1)], [byte(0), byte(2)]);
            assert_eq!(
                [lane(sxtb16_odd(x), 0), lane(sxtb16_odd(x), 1)],
                [byte(1), byte(3)]
            );
            let sum = sxtab16(a, x);
            assert_eq!(lane(sum, 0), lane(a, 0).wrapping_add(byte(0)));
            assert_eq!(lane(sum, 1), lane(a, 1).wrapping_add(byte(2)));
            let sum = sxtab16_odd(a, x);
            assert_eq!(lane(sum, 1), lane(a, 1).wrapping_add(byte(3)));
            let acc = rng.below(1 << 31) as i32 - (1 << 30);
            let dot = i64::from(lane(a, 0)) * i64::from(lane(b, 0))
                + i64::from(lane(a, 1)) * i64::from(lane(b, 1));
            assert_eq!(smlad(a, b, acc), (i64::from(acc) + dot) as i32);
            let low = i32::from(lane(a, 0)) * i32::from(lane(b, 0));
            let high = i32::from(lane(a, 1)) * i32::from(lane(b, 1));
            assert_eq!(smlabb(a, b, acc), acc.wrapping_add(low));
            assert_eq!(smlatt(a, b, acc), acc.wrapping_add(high));
            let across = i32::from(lane(a, 0)) * i32::from(lane(b, 1));
            assert_eq!(smlabt(a, b, acc), acc.wrapping_add(across));
            assert_eq!(lane(splat(lane(a, 1)), 0), lane(a, 1));
        }
    }
}
