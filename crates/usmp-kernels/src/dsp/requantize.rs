//! The requantization of a row of accumulators, the last step of every int8 convolution
//! ([`crate::conv`]'s `Finish`), as one loop: on Thumb-2 cores (`usmp_thumb2`: Cortex-M3,
//! M4, M7, M33, M55) in assembly, 20 instructions per output where LLVM's code for the same
//! took 30 to 38 (it reloaded the lists' lengths and kept the shift's sign test per
//! output); with Helium (`usmp_helium`) four outputs per 13 vector instructions; elsewhere
//! the same arithmetic in Rust, which the host tests check against TFLite's.
//!
//! It covers what every int8 convolution TFLite writes has: a bias, a multiplier and a
//! shift per channel, every shift a right shift (`-31..=-1`), and an output clamped only to
//! the int8 range (no fused activation narrower than it). The caller checks that once per
//! call ([`takes`]); any other call keeps the general form.

/// Whether [`row`] gives TFLite's bytes for a call whose shifts are `shifts` and whose
/// outputs are clamped to `range`: every shift a right shift and no clamp but int8's.
pub(crate) fn takes(shifts: &[i32], range: [i32; 2]) -> bool {
    range == [-128, 127] && shifts.iter().all(|s| (-31..=-1).contains(s))
}

/// TFLite's `MultiplyByQuantizedMultiplier(x, multiplier, shift)` for a right shift
/// (`shift` in `-31..=-1`) and a multiplier other than `i32::MIN`, the way [`row`]'s
/// assembly computes it. TFLite rounds twice, half away from zero both times: `r`, the
/// doubling high multiply, is `floor((x * m + 2^30) / 2^31)` (for every product but
/// `i32::MIN` squared: `fixed::doubling_high_mul_unsaturated`); then `r` divided by `2^e`
/// (`e = -shift`) is `floor((r - [r < 0] + 2^(e-1)) / 2^e)`. With `z = r - [r < 0]` (one
/// add of `r >> 31`) and `t = z >> (e - 1)`, that is `(t >> 1) + (t & 1)`: a floor by
/// `2^(e-1)` and the last bit's half rounded up, with no sum that can overflow. `e - 1` is
/// `!shift`.
#[cfg(any(test, not(usmp_thumb2)))]
#[inline(always)]
pub(crate) fn rescale_right(x: i32, multiplier: i32, shift: i32) -> i32 {
    let r = ((crate::fixed::wide_mul(x, multiplier) + (1 << 30)) >> 31) as i32;
    let z = r.wrapping_add(r >> 31);
    let t = z >> !shift;
    (t >> 1) + (t & 1)
}

/// `out[k]` = accumulator `acc[k]` plus the little-endian bias `bias[4k..4k + 4]`,
/// rescaled by `multipliers[k]` and `shifts[k]` ([`rescale_right`]), plus `offset`,
/// saturated to int8, for each `k` below the shortest length of the five. The same bytes
/// as `Finish::one` where [`takes`] holds for the call (callers check it once per call).
#[inline(always)]
pub(crate) fn row(
    acc: &[i32],
    bias: &[u8],
    multipliers: &[i32],
    shifts: &[i32],
    offset: i32,
    out: &mut [u8],
) {
    let n = acc
        .len()
        .min(bias.len() / 4)
        .min(multipliers.len())
        .min(shifts.len())
        .min(out.len());
    if n == 0 {
        return;
    }
    let lists = Lists {
        acc,
        bias,
        multipliers,
        shifts,
        n,
    };
    #[cfg(usmp_helium)]
    in_vectors(lists, offset, out);
    #[cfg(all(usmp_thumb2, not(usmp_helium)))]
    in_assembly(lists, offset, out);
    #[cfg(not(usmp_thumb2))]
    {
        let Lists {
            acc,
            bias,
            multipliers,
            shifts,
            ..
        } = lists;
        let biases = bias
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let params = biases.zip(multipliers).zip(shifts);
        for ((&a, ((b, &m), &s)), o) in acc.iter().zip(params).zip(out).take(n) {
            let v = rescale_right(a.wrapping_add(b), m, s).wrapping_add(offset);
            *o = v.clamp(-128, 127) as i8 as u8;
        }
    }
}

/// What [`row`] hands its loop: the accumulators, bias bytes, multipliers and shifts, and
/// `n`, the outputs every list holds (the bias counted in words).
struct Lists<'a> {
    acc: &'a [i32],
    bias: &'a [u8],
    multipliers: &'a [i32],
    shifts: &'a [i32],
    n: usize,
}

impl Lists<'_> {
    /// `n`, asserted: at least 1, and every list and `out` hold it.
    #[cfg(usmp_thumb2)]
    #[inline(always)]
    fn checked(&self, out: &[u8]) -> usize {
        let n = self.n;
        assert!(n >= 1 && n <= self.acc.len().min(self.bias.len() / 4).min(out.len()));
        assert!(n <= self.multipliers.len().min(self.shifts.len()));
        n
    }
}

/// [`row`]'s loop in Thumb-2.
#[cfg(all(usmp_thumb2, not(usmp_helium)))]
#[inline(always)]
fn in_assembly(lists: Lists<'_>, offset: i32, out: &mut [u8]) {
    let n = lists.checked(out);
    let po = out.as_mut_ptr();
    // SAFETY: `n >= 1` elements are there in each of the five slices (`Lists::checked`,
    // the bias counted in words), so `end = po + n` is one past the last output byte, in
    // or at the end of `out`'s allocation. The loop runs `n` times, each reading the next
    // word at `pa`, `pb` (LDR of a word may be unaligned on Armv7-M and Armv8-M Mainline,
    // and a bias's bytes need not be aligned), `pm` and `ps`, and writing the next byte
    // at `po`, whose slice is borrowed mutably here, so nothing else reads or writes it
    // meanwhile. It touches no other memory and not the stack; CMP sets the flags, so
    // they are not declared preserved. Every instruction is Thumb-2 (SMLAL and SSAT are
    // Armv7-M's).
    unsafe {
        let end = po.add(n);
        core::arch::asm!(
            "2:",
            "ldr {x}, [{pa}], #4",
            "ldr {t}, [{pb}], #4",
            "ldr {m}, [{pm}], #4",
            "add {x}, {x}, {t}",
            // hi:lo = x * m + 2^30, and r = (hi:lo) >> 31, the doubling high multiply.
            "mov {lo}, #0x40000000",
            "mov {hi}, #0",
            "smlal {lo}, {hi}, {x}, {m}",
            "ldr {t}, [{ps}], #4",
            "lsr {lo}, {lo}, #31",
            "orr {x}, {lo}, {hi}, lsl #1",
            // z = r - [r < 0]; t = z >> (e - 1), e - 1 = !shift; (t >> 1) + (t & 1).
            "add {x}, {x}, {x}, asr #31",
            "mvn {t}, {t}",
            "asr {x}, {x}, {t}",
            "and {t}, {x}, #1",
            "add {x}, {t}, {x}, asr #1",
            "add {x}, {x}, {off}",
            "ssat {x}, #8, {x}",
            "strb {x}, [{po}], #1",
            "cmp {po}, {end}",
            "bne 2b",
            pa = inout(reg) lists.acc.as_ptr() => _,
            pb = inout(reg) lists.bias.as_ptr() => _,
            pm = inout(reg) lists.multipliers.as_ptr() => _,
            ps = inout(reg) lists.shifts.as_ptr() => _,
            po = inout(reg) po => _,
            end = in(reg) end,
            off = in(reg) offset,
            x = out(reg) _,
            t = out(reg) _,
            m = out(reg) _,
            lo = out(reg) _,
            hi = out(reg) _,
            options(nostack),
        );
    }
}

/// [`row`]'s loop on Helium, four outputs at a time. VQRDMULH is TFLite's doubling high
/// multiply (its rounding of a negative product's tie is the same, and no multiplier is
/// `i32::MIN`); TFLite's division by `2^e` rounds half away from zero, VRSHL half up, so a
/// negative value is first lowered by one (`r + (r >> 31)`, which cannot overflow: `|r| <
/// 2^31` for such a multiplier). Two saturating narrowings clamp to int8, and VSTRB.32
/// stores each word's low byte.
#[cfg(usmp_helium)]
#[inline(always)]
fn in_vectors(lists: Lists<'_>, offset: i32, out: &mut [u8]) {
    let n = lists.checked(out);
    // SAFETY: the loop runs `n.div_ceil(4)` times under tail predication of word
    // elements, each time reading the next (up to) four words at `pa`, `pm` and `ps`
    // (`&[i32]`s, so aligned, each holding `n`: `Lists::checked` asserts it) and the next (up to) 16
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
            "vstrb.32 q0, [r0], #4",
            "letp lr, 1b",
            "2:",
            n = in(reg) n,
            pa = inout(reg) lists.acc.as_ptr() => _,
            pb = inout(reg) lists.bias.as_ptr() => _,
            pm = inout(reg) lists.multipliers.as_ptr() => _,
            ps = inout(reg) lists.shifts.as_ptr() => _,
            // VSTRB.32 takes a low register.
            inout("r0") out.as_mut_ptr() => _,
            off = in(reg) offset,
            out("lr") _,
            out("q0") _,
            out("q1") _,
            options(nostack),
        );
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::{rescale_right, row, takes};
    use crate::fixed::multiply_by_quantized_multiplier;
    use std::vec::Vec;

    /// `rescale_right` is TFLite's multiply for every right shift: random accumulators
    /// and multipliers (and the ends of `i32`), then the small products around both
    /// roundings' ties.
    #[test]
    fn rescale_right_is_tflites_multiply() {
        let mut rng = crate::overlap::tests::Rng(0x0DD_BA11_5EED);
        let mut word = || (rng.below(1 << 32) as u32) as i32;
        for k in 0..300_000 {
            let x = match k % 50 {
                0 => i32::MIN,
                1 => i32::MAX,
                _ => word(),
            };
            let m = match word() {
                i32::MIN => i32::MAX,
                m => m,
            };
            let shift = -1 - k % 31;
            let want = multiply_by_quantized_multiplier(x, m, shift);
            assert_eq!(rescale_right(x, m, shift), want, "{x} * {m} * 2^{shift}");
        }
        let multipliers = [1 << 30, (1 << 30) + 1, (1 << 30) - 1, 3 << 29, i32::MAX, 0];
        for m in multipliers.into_iter().flat_map(|m| [m, -m]) {
            for x in -5000..5000 {
                for shift in -31..=-1 {
                    let want = multiply_by_quantized_multiplier(x, m, shift);
                    assert_eq!(rescale_right(x, m, shift), want, "{x} * {m} * 2^{shift}");
                }
            }
        }
    }

    /// A row: bias added, offset added after the rescale, saturated at both ends of int8,
    /// and nothing written past the shortest list.
    #[test]
    fn a_row_is_finished_output_by_output() {
        let acc = [1000, -1000, 1 << 20, -(1 << 20), 0, 7];
        let bias: Vec<u8> = [5i32, -5, 0, 0, 100, 1]
            .iter()
            .flat_map(|b| b.to_le_bytes())
            .collect();
        let multipliers = [1 << 30; 6];
        let shifts = [-1, -2, -1, -1, -3, -1];
        let mut out = [0xAAu8; 7];
        row(&acc, &bias, &multipliers, &shifts[..5], -3, &mut out);
        let want = |a: i32, b: i32, s: i32| {
            let v = multiply_by_quantized_multiplier(a + b, 1 << 30, s) - 3;
            v.clamp(-128, 127) as i8 as u8
        };
        let expected: Vec<u8> = (0..5)
            .map(|k| want(acc[k], [5, -5, 0, 0, 100][k], shifts[k]))
            .chain([0xAA, 0xAA])
            .collect();
        assert_eq!(out.to_vec(), expected);
        assert_eq!(&out[..5], &[0x7F, 0x80, 0x7F, 0x80, 0x03]);
        assert!(takes(&shifts, [-128, 127]));
        assert!(
            !takes(&[-1, 0], [-128, 127]),
            "a shift of 0 is not a right shift"
        );
        assert!(!takes(&[-1], [-128, 6]), "a clamp narrower than int8");
    }
}
