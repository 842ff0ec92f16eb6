//! Every tap of one depthwise output pixel over a group of channels in one loop: the
//! taps' input and filter positions are checked (the largest of each), then on thumbv7em
//! one assembly loop walks the list, each tap one LDM of its two positions and eight
//! instructions to find its bytes, then [`super::tap_words`]' 16 per four channels. Cutting and checking the
//! two slices of each tap in Rust had cost about 36 instructions per tap (LLVM kept the
//! loop's values on the stack), as many as the work of eight channels.

use super::{At, Lanes};
use crate::overlap::Load;

/// For each `[i, f]` of `taps`, `acc[c] += (x[i + c] + offset) * w[f + c]` for the
/// channels of `acc`'s whole words (four per word, each sum wrapping; `offsets` is the
/// offset in both lanes), taps in order: [`super::tap_words`] per tap. Returns `false`,
/// having added nothing, where some tap's bytes are not all in `x` or `w`.
#[inline(always)]
pub(crate) fn add<T: Load>(
    acc: &mut [i32],
    x: &[T],
    w: &[u8],
    taps: &[At],
    offsets: Lanes,
) -> bool {
    let width = acc.len() - acc.len() % 4;
    let [i, f] = super::largest(taps);
    let inside = |start: usize, len: usize| start.checked_add(width).is_some_and(|e| e <= len);
    if !inside(i, x.len()) || !inside(f, w.len()) {
        return false;
    }
    if width == 0 || taps.is_empty() {
        return true;
    }
    #[cfg(usmp_dsp)]
    in_assembly(&mut acc[..width], x, w, taps, offsets);
    #[cfg(not(usmp_dsp))]
    for &[i, f] in taps {
        let (i, f) = (i as usize, f as usize);
        super::tap_words(
            &mut acc[..width],
            &x[i..i + width],
            &w[f..f + width],
            offsets,
        );
    }
    true
}

/// [`add`]'s loop, its taps checked: every `[i, f]` has `acc.len() / 4 >= 1` whole words
/// at `x[i..]` and `w[f..]`, and there is at least one tap.
#[cfg(usmp_dsp)]
#[inline(always)]
fn in_assembly<T: Load>(acc: &mut [i32], x: &[T], w: &[u8], taps: &[At], offsets: Lanes) {
    const { assert!(core::mem::size_of::<T>() == 1) };
    let words = acc.len() / 4;
    let list = taps.as_ptr_range();
    // SAFETY: the loop reads `taps` (borrowed here; `[u32; 2]`, so `i` then `f`) one
    // tap at a time from `list.start` to `list.end`, at least one. Per tap it runs its
    // `words >= 1` times, each reading the next word at r8 (the tap's input:
    // `i + 4 * words <= x.len()` bytes, checked by `add`; `T` is one byte, asserted above,
    // and `Load`'s types, `u8` and `Cell<u8>`, are initialized bytes nothing writes while
    // this runs: the region is borrowed here; unaligned LDRs, which Armv7-M performs) and
    // at r9 (the tap's filter, likewise `f + 4 * words <= w.len()`), and reading then
    // writing the next four sums at r10 (from `acc`'s start: `4 * words` of its `i32`s,
    // aligned for LDM and STM, borrowed mutably here). It keeps the four bases and the
    // list's end in 24 bytes it reserves below the stack pointer (which stays 8-byte
    // aligned) and gives back before it ends; it writes no other memory, only the
    // registers named; CMP and SUBS set the flags, so they are not declared preserved.
    unsafe {
        core::arch::asm!(
            "sub sp, sp, #24",
            "stm sp, {{r8, r9, r10, r11, r12}}",
            "1:",
            "ldr r12, [sp, #16]",
            "cmp {lp}, r12",
            "beq 3f",
            "ldm {lp}!, {{r8, r9}}",
            "ldr r12, [sp]",
            "add r8, r8, r12",
            "ldr r12, [sp, #4]",
            "add r9, r9, r12",
            "ldrd r10, r11, [sp, #8]",
            "2:",
            "ldr {t0}, [r8], #4",
            "ldr {t1}, [r9], #4",
            "sxtab16 {t2}, {off}, {t0}",
            "sxtab16 {t0}, {off}, {t0}, ror #8",
            "sxtb16 r12, {t1}",
            "sxtb16 {t1}, {t1}, ror #8",
            "ldm r10, {{r2, r3}}",
            "smlabb r2, {t2}, r12, r2",
            "smlabb r3, {t0}, {t1}, r3",
            "stm r10!, {{r2, r3}}",
            "ldm r10, {{r2, r3}}",
            "smlatt r2, {t2}, r12, r2",
            "smlatt r3, {t0}, {t1}, r3",
            "stm r10!, {{r2, r3}}",
            "subs r11, r11, #1",
            "bne 2b",
            "b 1b",
            "3:",
            "add sp, sp, #24",
            lp = inout(reg) list.start => _,
            off = in(reg) offsets,
            t0 = out(reg) _,
            t1 = out(reg) _,
            t2 = out(reg) _,
            out("r2") _,
            out("r3") _,
            inout("r8") x.as_ptr().cast::<u8>() => _,
            inout("r9") w.as_ptr() => _,
            inout("r10") acc.as_mut_ptr() => _,
            inout("r11") words => _,
            inout("r12") list.end => _,
        );
    }
}

/// For each `[i, f]` of `taps`, `acc[c] += (x[i + c] + offset) * w[f + c]` for every
/// channel of `acc` (int8 bytes, each sum wrapping), taps in order: [`add`] without the
/// DSP extension's lanes. Returns `false`, having added nothing, where some tap's bytes
/// are not all in `x` or `w`. On Thumb-2 cores one assembly loop over the taps (each
/// found as in [`add`]) around 22 instructions per four channels (a word of input and of
/// filter, each byte sign-extended), then the last few a byte at a time; on cores without
/// Thumb-2, Rust. With Helium it returns `false`: the caller's loop a tap at a time, which
/// LLVM vectorises there, took person_detect 19.43 M instructions where this one's Rust
/// took 20.39 M.
#[inline(always)]
pub(crate) fn add_bytes<T: Load>(
    acc: &mut [i32],
    x: &[T],
    w: &[u8],
    taps: &[At],
    offset: i32,
) -> bool {
    if cfg!(usmp_helium) {
        return false;
    }
    let width = acc.len();
    let [i, f] = super::largest(taps);
    let inside = |start: usize, len: usize| start.checked_add(width).is_some_and(|e| e <= len);
    if !inside(i, x.len()) || !inside(f, w.len()) {
        return false;
    }
    if width == 0 || taps.is_empty() {
        return true;
    }
    #[cfg(all(usmp_thumb2, not(usmp_helium)))]
    bytes_in_assembly(acc, x, w, taps, offset);
    #[cfg(not(all(usmp_thumb2, not(usmp_helium))))]
    for &[i, f] in taps {
        let (i, f) = (i as usize, f as usize);
        for ((acc, x), &w) in acc.iter_mut().zip(&x[i..i + width]).zip(&w[f..f + width]) {
            let x = i32::from(x.load() as i8) + offset;
            *acc = acc.wrapping_add(i32::from(w as i8).wrapping_mul(x));
        }
    }
    true
}

/// [`add_bytes`]' loop, its taps checked: every `[i, f]` has `acc.len() >= 1` bytes at
/// `x[i..]` and `w[f..]`, and there is at least one tap.
///
/// What the loop touches, as `in_assembly`'s: it reads `taps` (`[u32; 2]`, so `i` then
/// `f`) one tap at a time from `list.start` to `list.end`. Per tap it reads the
/// `acc.len()` bytes at r8 (the tap's input, inside `x`; `T` is one byte, asserted, and
/// `Load`'s types are initialized bytes nothing writes while it runs; unaligned LDRs,
/// which Armv7-M performs) and at r9 (the tap's filter, inside `w`), a word of each for
/// every four channels and then a byte of each, and reads then writes the `acc.len()`
/// sums at r10 (from `acc`'s start, aligned for LDM and STM). It keeps the bases, the
/// count of whole words and the list's end in 24 bytes it reserves below the stack
/// pointer (which stays 8-byte aligned) and gives back before it ends (then r8-r12 are the
/// tap's input, filter, sums, count and a scratch register, `t2` the channels past the
/// last whole word), writes no other memory and only the registers named; CMP and SUBS
/// set the flags, so they are not declared preserved. Every instruction is Thumb-2. From
/// label 2 four channels a pass (a word of input and one of filter, each byte
/// sign-extended), from label 4 the last channels one at a time.
#[cfg(all(usmp_thumb2, not(usmp_helium)))]
#[inline(always)]
fn bytes_in_assembly<T: Load>(acc: &mut [i32], x: &[T], w: &[u8], taps: &[At], offset: i32) {
    const { assert!(core::mem::size_of::<T>() == 1) };
    let list = taps.as_ptr_range();
    // SAFETY: the loop touches only what the doc above lists: `taps` (borrowed here, at
    // least one), each tap's `acc.len() >= 1` bytes of `x` and `w` (`add_bytes` checked
    // `i + acc.len() <= x.len()` and `f + acc.len() <= w.len()` for the largest of each),
    // `acc` (borrowed mutably here) and 24 bytes below the stack pointer it gives back.
    unsafe {
        core::arch::asm!(
            "sub sp, sp, #24",
            "stm sp, {{r8, r9, r10, r11, r12}}",
            "str {t2}, [sp, #20]",
            "1:",
            "ldr r12, [sp, #16]",
            "cmp {lp}, r12",
            "beq 3f",
            "ldm {lp}!, {{r8, r9}}",
            "ldr r12, [sp]",
            "add r8, r8, r12",
            "ldr r12, [sp, #4]",
            "add r9, r9, r12",
            "ldrd r10, r11, [sp, #8]",
            "cmp r11, #0",
            "beq 4f",
            "2:",
            "ldr {t0}, [r8], #4",
            "ldr {t1}, [r9], #4",
            "ldm r10, {{r2, r3}}",
            "sxtb r12, {t0}",
            "add r12, r12, {off}",
            "sxtb {t2}, {t1}",
            "mla r2, r12, {t2}, r2",
            "sxtb r12, {t0}, ror #8",
            "add r12, r12, {off}",
            "sxtb {t2}, {t1}, ror #8",
            "mla r3, r12, {t2}, r3",
            "stm r10!, {{r2, r3}}",
            "ldm r10, {{r2, r3}}",
            "sxtb r12, {t0}, ror #16",
            "add r12, r12, {off}",
            "sxtb {t2}, {t1}, ror #16",
            "mla r2, r12, {t2}, r2",
            "asr r12, {t0}, #24",
            "add r12, r12, {off}",
            "asr {t2}, {t1}, #24",
            "mla r3, r12, {t2}, r3",
            "stm r10!, {{r2, r3}}",
            "subs r11, r11, #1",
            "bne 2b",
            "4:",
            "ldr r11, [sp, #20]",
            "cmp r11, #0",
            "beq 1b",
            "5:",
            "ldrsb {t0}, [r8], #1",
            "ldrsb {t1}, [r9], #1",
            "ldr r12, [r10]",
            "add {t0}, {t0}, {off}",
            "mla r12, {t0}, {t1}, r12",
            "str r12, [r10], #4",
            "subs r11, r11, #1",
            "bne 5b",
            "b 1b",
            "3:",
            "add sp, sp, #24",
            lp = inout(reg) list.start => _,
            off = in(reg) offset,
            t0 = out(reg) _,
            t1 = out(reg) _,
            t2 = inout(reg) acc.len() % 4 => _,
            out("r2") _,
            out("r3") _,
            inout("r8") x.as_ptr().cast::<u8>() => _,
            inout("r9") w.as_ptr() => _,
            inout("r10") acc.as_mut_ptr() => _,
            inout("r11") acc.len() / 4 => _,
            inout("r12") list.end => _,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{add, add_bytes};
    use crate::dsp::splat;

    /// Every tap's products, in the list's order, and nothing where a tap's bytes run past
    /// the input or the filter.
    #[test]
    fn taps_add_each_taps_products() {
        let x: [u8; 40] = core::array::from_fn(|k| (k as u8).wrapping_mul(37));
        let w: [u8; 24] = core::array::from_fn(|k| (k as u8).wrapping_mul(91) ^ 0x55);
        let taps = [[0, 0], [13, 8], [32, 16]];
        for offset in [-128i16, 0, 127] {
            let mut acc = [7i32; 8];
            assert!(add(&mut acc, &x, &w, &taps, splat(offset)));
            for (c, &sum) in acc.iter().enumerate() {
                let want = taps.iter().fold(7i32, |s, &[i, f]| {
                    let (i, f) = (i as usize, f as usize);
                    let xv = i32::from(x[i + c] as i8) + i32::from(offset);
                    s + xv * i32::from(w[f + c] as i8)
                });
                assert_eq!(sum, want, "channel {c}, offset {offset}");
            }
        }
        let mut acc = [0i32; 8];
        assert!(!add(&mut acc, &x, &w, &[[0, 0], [33, 0]], splat(1)));
        assert!(!add(&mut acc, &x, &w, &[[0, 17]], splat(1)));
        assert_eq!(acc, [0; 8], "nothing added");
    }

    /// The same sums without lanes, for any number of channels (a word of four and the
    /// last three one at a time).
    #[test]
    fn bytes_add_each_taps_products() {
        let x: [u8; 40] = core::array::from_fn(|k| (k as u8).wrapping_mul(37));
        let w: [u8; 24] = core::array::from_fn(|k| (k as u8).wrapping_mul(91) ^ 0x55);
        let taps = [[0, 0], [13, 8], [33, 17]];
        let mut acc = [7i32; 7];
        assert!(add_bytes(&mut acc, &x, &w, &taps, -128));
        for (c, &sum) in acc.iter().enumerate() {
            let want = taps.iter().fold(7i32, |s, &[i, f]| {
                let (i, f) = (i as usize, f as usize);
                s + (i32::from(x[i + c] as i8) - 128) * i32::from(w[f + c] as i8)
            });
            assert_eq!(sum, want, "channel {c}");
        }
        assert!(
            !add_bytes(&mut acc, &x, &w, &[[34, 0]], 0),
            "past the input"
        );
    }
}
