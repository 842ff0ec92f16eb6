//! ADD and MUL of two int8 rows on Helium (Cortex-M55, M85: `usmp_helium`), four
//! elements per pass of one tail-predicated loop: both inputs widened to words and offset;
//! for ADD each shifted left, rescaled (VQRDMULH, then a rounding shift right) and summed,
//! for MUL multiplied; then rescaled to the output, offset and clamped, where the scalar
//! loop takes about 65 (ADD) and 40 (MUL) instructions an element. In the host tests
//! `portable` is the same arithmetic in Rust, checked against TFLite's and run through the
//! same blocks as the assembly; other builds keep the scalar loop.
//!
//! It takes the calls TFLite's int8 ADD and MUL make ([`Row::add`], [`Row::mul`]): for ADD
//! a left shift of 20, every multiplier other than `i32::MIN`, and every shift a right
//! shift or none (`-31..=0`).

#[cfg(usmp_helium)]
use crate::overlap::Load;
use crate::params::{Add, Mul};

/// The elements of one block: a row is run a block at a time into a buffer of the
/// caller's, then stored.
pub(crate) const BLOCK: usize = 64;

/// A call's constants as its loop reads them, two at a time (LDRD). ADD: for each input
/// its offset, multiplier, whether its shift divides (1) or not (0), and its shift; then
/// the output's multiplier, whether its shift divides, its shift and its offset. MUL: the
/// inputs' offsets, the output's multiplier, whether its shift divides, its shift and its
/// offset. Both: the clamp's ends in words 12 and 13.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(8))]
pub(crate) struct Row {
    words: [i32; 14],
    product: bool,
}

/// Whether a shift takes the loop's rescaling: a right shift or none (the call's
/// `rescaled` has already refused `i32::MIN`, where VQRDMULH saturates and TFLite's
/// multiply does not).
fn right([_, s]: [i32; 2]) -> bool {
    s <= 0
}

/// 1 where a shift divides (the lowering before VRSHL applies), 0 where it is none.
fn divides(s: i32) -> i32 {
    i32::from(s < 0)
}

/// The left shift TFLite's int8 ADD gives its inputs, the one the loop has built in.
const LEFT_SHIFT: u32 = 20;

impl Row {
    /// The constants of ADD `p`, where the loop gives TFLite's bytes for it.
    pub(crate) fn add(p: &Add) -> Option<Row> {
        let fits = p.rescaled()
            && p.left_shift == LEFT_SHIFT
            && right(p.first)
            && right(p.second)
            && right(p.output)
            && p.activation[0] <= p.activation[1];
        fits.then(|| Row {
            product: false,
            words: [
                p.first_offset,
                p.first[0],
                divides(p.first[1]),
                p.first[1],
                p.second_offset,
                p.second[0],
                divides(p.second[1]),
                p.second[1],
                p.output[0],
                divides(p.output[1]),
                p.output[1],
                p.output_offset,
                p.activation[0],
                p.activation[1],
            ],
        })
    }

    /// The constants of MUL `p`, where the loop gives TFLite's bytes for it.
    pub(crate) fn mul(p: &Mul) -> Option<Row> {
        let fits = p.rescaled() && right(p.output) && p.activation[0] <= p.activation[1];
        let [m, s] = p.output;
        let (o, [lo, hi]) = (p.output_offset, p.activation);
        fits.then(|| Row {
            product: true,
            words: [
                p.first_offset,
                p.second_offset,
                m,
                divides(s),
                s,
                o,
                0,
                0,
                0,
                0,
                0,
                0,
                lo,
                hi,
            ],
        })
    }
}

/// `out[k]` = the ADD (or MUL) of `first[k]` and `second[k]` under `row`'s constants, for
/// `k` below `n`, the shortest of the three and [`BLOCK`]. `false`, having done nothing,
/// where `first`'s bytes cannot be read as such (the tests' probes).
#[cfg(usmp_helium)]
#[inline(always)]
pub(crate) fn run<T: Load>(row: &Row, first: &[T], second: &[u8], out: &mut [u8]) -> bool {
    let n = out.len().min(first.len()).min(second.len()).min(BLOCK);
    let Some(x) = T::bytes(first) else {
        return false;
    };
    let (y, o) = (second.as_ptr(), out.as_mut_ptr());
    // SAFETY: `x` points at `first`'s bytes (`Load::bytes`: bytes, or cells no one writes
    // during this call, as the output is `out`, borrowed mutably here), and `first`,
    // `second` and `out` each hold at least `n` elements; `n >= 1` is checked here.
    unsafe {
        if n > 0 && row.product {
            products(row, x, y, o, n);
        } else if n > 0 {
            sums(row, x, y, o, n);
        }
    }
    true
}

/// [`run`]'s ADD loop over `n` elements at `x`, `y` and `out`.
///
/// # Safety
///
/// `n >= 1`; `x` and `y` point at `n` readable bytes that nothing writes during the call,
/// `out` at `n` writable bytes nothing else reads or writes meanwhile.
#[cfg(usmp_helium)]
#[inline(always)]
unsafe fn sums(row: &Row, x: *const u8, y: *const u8, out: *mut u8, n: usize) {
    // SAFETY: the function's contract gives `n >= 1` and `n` bytes at each of `x`, `y`
    // (read) and `out` (written), and `row` is 56 bytes of words aligned to 8 (LDRD). The
    // loop runs `n.div_ceil(4)` times under tail predication of word elements, each time
    // reading the next (up to) four bytes at R0 and R1, widened, and storing the next (up
    // to) four at R2 (VLDRB.S32 and VSTRB.32 take low registers only), and reading
    // `row`'s words; the inactive lanes of the last time neither load nor store. It
    // touches no other memory and not the stack; LR is declared clobbered.
    unsafe {
        core::arch::asm!(
            "ldrd {t}, {u}, [{pp}, #48]",
            "vdup.32 q6, {t}",
            "vdup.32 q7, {u}",
            "wlstp.32 lr, {n}, 2f",
            "1:",
            // Input 1: (x + offset) << 20, doubling high multiply, rounding shift right
            // (a negative value lowered by one first where the shift divides).
            "vldrb.s32 q0, [r0], #4",
            "ldrd {t}, {u}, [{pp}]",
            "vadd.i32 q0, q0, {t}",
            "vshl.i32 q0, q0, #20",
            "vqrdmulh.s32 q0, q0, {u}",
            "ldrd {t}, {u}, [{pp}, #8]",
            "vshr.s32 q2, q0, #31",
            "vmla.i32 q0, q2, {t}",
            "vrshl.s32 q0, {u}",
            // Input 2, the same with its own constants.
            "vldrb.s32 q1, [r1], #4",
            "ldrd {t}, {u}, [{pp}, #16]",
            "vadd.i32 q1, q1, {t}",
            "vshl.i32 q1, q1, #20",
            "vqrdmulh.s32 q1, q1, {u}",
            "ldrd {t}, {u}, [{pp}, #24]",
            "vshr.s32 q2, q1, #31",
            "vmla.i32 q1, q2, {t}",
            "vrshl.s32 q1, {u}",
            // The sum rescaled to the output, offset, clamped, each word's low byte stored.
            "vadd.i32 q0, q0, q1",
            "ldrd {t}, {u}, [{pp}, #32]",
            "vqrdmulh.s32 q0, q0, {t}",
            "vshr.s32 q2, q0, #31",
            "vmla.i32 q0, q2, {u}",
            "ldrd {t}, {u}, [{pp}, #40]",
            "vrshl.s32 q0, {t}",
            "vadd.i32 q0, q0, {u}",
            "vmax.s32 q0, q0, q6",
            "vmin.s32 q0, q0, q7",
            "vstrb.32 q0, [r2], #4",
            "letp lr, 1b",
            "2:",
            n = in(reg) n,
            pp = in(reg) row.words.as_ptr(),
            t = out(reg) _,
            u = out(reg) _,
            inout("r0") x => _,
            inout("r1") y => _,
            inout("r2") out => _,
            out("lr") _,
            out("q0") _,
            out("q1") _,
            out("q2") _,
            out("q6") _,
            out("q7") _,
            options(nostack),
        );
    }
}

/// [`run`]'s MUL loop over `n` elements at `x`, `y` and `out`.
///
/// # Safety
///
/// As [`sums`].
#[cfg(usmp_helium)]
#[inline(always)]
unsafe fn products(row: &Row, x: *const u8, y: *const u8, out: *mut u8, n: usize) {
    // SAFETY: as in [`sums`]: the contract gives `n >= 1` bytes at each of `x`, `y` and
    // `out`, and `row`'s words are aligned to 8. The loop runs `n.div_ceil(4)` times under
    // tail predication of word elements, reading the next (up to) four bytes at R0 and R1,
    // widened, storing the next (up to) four at R2, and reading `row`'s words; the
    // inactive lanes of the last time neither load nor store. It touches no other memory
    // and not the stack; LR is declared clobbered.
    unsafe {
        core::arch::asm!(
            "ldrd {t}, {u}, [{pp}, #48]",
            "vdup.32 q6, {t}",
            "vdup.32 q7, {u}",
            "wlstp.32 lr, {n}, 2f",
            "1:",
            // (x + offset) * (y + offset), rescaled to the output, offset, clamped.
            "vldrb.s32 q0, [r0], #4",
            "vldrb.s32 q1, [r1], #4",
            "ldrd {t}, {u}, [{pp}]",
            "vadd.i32 q0, q0, {t}",
            "vadd.i32 q1, q1, {u}",
            "vmul.i32 q0, q0, q1",
            "ldrd {t}, {u}, [{pp}, #8]",
            "vqrdmulh.s32 q0, q0, {t}",
            "vshr.s32 q2, q0, #31",
            "vmla.i32 q0, q2, {u}",
            "ldrd {t}, {u}, [{pp}, #16]",
            "vrshl.s32 q0, {t}",
            "vadd.i32 q0, q0, {u}",
            "vmax.s32 q0, q0, q6",
            "vmin.s32 q0, q0, q7",
            "vstrb.32 q0, [r2], #4",
            "letp lr, 1b",
            "2:",
            n = in(reg) n,
            pp = in(reg) row.words.as_ptr(),
            t = out(reg) _,
            u = out(reg) _,
            inout("r0") x => _,
            inout("r1") y => _,
            inout("r2") out => _,
            out("lr") _,
            out("q0") _,
            out("q1") _,
            out("q2") _,
            out("q6") _,
            out("q7") _,
            options(nostack),
        );
    }
}

/// [`add`]'s arithmetic for one element, as the assembly computes it lane by lane.
#[cfg(test)]
pub(crate) fn portable(row: &Row, a: u8, b: u8) -> u8 {
    let w = &row.words;
    // VQRDMULH: `(2·x·m + 2^31) >> 32`, saturating only for `i32::MIN` squared, which
    // `Row::add` and `Row::mul` keep out.
    let high = |x: i32, m: i32| ((2 * i64::from(x) * i64::from(m) + (1 << 31)) >> 32) as i32;
    // VRSHL by a negative shift: `(x + 2^(e-1)) >> e`, computed wide; by 0, `x`.
    let shift = |x: i32, s: i32| {
        let e = (-s) as u32;
        if e == 0 {
            x
        } else {
            ((i64::from(x) + (1 << (e - 1))) >> e) as i32
        }
    };
    let lower = |r: i32, divides: i32| r.wrapping_add((r >> 31).wrapping_mul(divides));
    let input = |x: u8, k: usize| {
        let shifted = (i32::from(x as i8) + w[k]) << LEFT_SHIFT;
        shift(lower(high(shifted, w[k + 1]), w[k + 2]), w[k + 3])
    };
    if row.product {
        let product = (i32::from(a as i8) + w[0]).wrapping_mul(i32::from(b as i8) + w[1]);
        let v = shift(lower(high(product, w[2]), w[3]), w[4]).wrapping_add(w[5]);
        return v.clamp(w[12], w[13]) as i8 as u8;
    }
    let sum = input(a, 0).wrapping_add(input(b, 4));
    let v = shift(lower(high(sum, w[8]), w[9]), w[10]).wrapping_add(w[11]);
    v.clamp(w[12], w[13]) as i8 as u8
}

#[cfg(test)]
mod tests {
    use super::{Row, portable};
    use crate::elementwise::tests::{add_one, mul_one};
    use crate::overlap::tests::Rng;
    use crate::params::{Add, Broadcast, Mul};

    /// The lanes' arithmetic is TFLite's ADD for every call [`Row::add`] takes: TFLite's own
    /// scales, every right shift, multipliers up to `i32::MAX` and negative ones, every
    /// pair of inputs.
    #[test]
    fn the_lanes_are_tflites_add() {
        let mut rng = Rng(0x7137_9E37_79B9_7F4A);
        let shape = Broadcast {
            output: [1, 1, 1, 1],
            first: [0, 0, 0, 1],
            second: [0, 0, 0, 1],
            first_elements: 1,
            second_elements: 1,
        };
        for case in 0..3000 {
            let multiplier = |rng: &mut Rng| match case % 4 {
                0 => (rng.below(1 << 32) as u32) as i32 | 1,
                _ => (1 << 30) + rng.below(1 << 30) as i32,
            };
            let low = -128 + rng.below(100) as i32;
            let p = Add {
                shape,
                first_offset: rng.below(256) as i32 - 128,
                second_offset: rng.below(256) as i32 - 128,
                left_shift: 20,
                first: [multiplier(&mut rng), -(rng.below(12) as i32)],
                second: [multiplier(&mut rng), -(rng.below(12) as i32)],
                output: [multiplier(&mut rng), -(rng.below(32) as i32)],
                output_offset: rng.below(256) as i32 - 128,
                activation: [low, low + rng.below((128 - low) as usize) as i32],
            };
            let row = Row::add(&p).expect("a call of TFLite's form");
            for a in (0..=255u8).step_by(1 + case % 7) {
                for b in (0..=255u8).step_by(3 + case % 11) {
                    let want = add_one(&p, a, b);
                    assert_eq!(portable(&row, a, b), want, "{a} + {b}: {p:?}");
                }
            }
        }
        let p = Add {
            shape,
            first_offset: 0,
            second_offset: 0,
            left_shift: 20,
            first: [1 << 30, 0],
            second: [1 << 30, -1],
            output: [1 << 30, -18],
            output_offset: 0,
            activation: [-128, 127],
        };
        assert!(Row::add(&p).is_some());
        assert!(
            Row::add(&Add {
                left_shift: 19,
                ..p
            })
            .is_none()
        );
        assert!(
            Row::add(&Add {
                first: [i32::MIN, -1],
                ..p
            })
            .is_none()
        );
        assert!(
            Row::add(&Add {
                output: [1 << 30, 1],
                ..p
            })
            .is_none()
        );
    }

    /// The lanes' arithmetic is TFLite's MUL for every call [`Row::mul`] takes: TFLite's
    /// scales and others, every right shift and none, every pair of inputs.
    #[test]
    fn the_lanes_are_tflites_mul() {
        let mut rng = Rng(0x5851_F42D_4C95_7F2D);
        for case in 0..2000 {
            let m = match case % 4 {
                0 => (rng.below(1 << 32) as u32) as i32 | 1,
                _ => (1 << 30) + rng.below(1 << 30) as i32,
            };
            let low = -128 + rng.below(100) as i32;
            let p = Mul {
                shape: Broadcast {
                    output: [1, 1, 1, 1],
                    first: [0, 0, 0, 1],
                    second: [0, 0, 0, 1],
                    first_elements: 1,
                    second_elements: 1,
                },
                first_offset: rng.below(256) as i32 - 128,
                second_offset: rng.below(256) as i32 - 128,
                output: [m, -(rng.below(32) as i32)],
                output_offset: rng.below(256) as i32 - 128,
                activation: [low, low + rng.below((128 - low) as usize) as i32],
            };
            let row = Row::mul(&p).expect("a call of TFLite's form");
            for a in (0..=255u8).step_by(1 + case % 5) {
                for b in (0..=255u8).step_by(2 + case % 9) {
                    let want = mul_one(&p, a, b);
                    assert_eq!(portable(&row, a, b), want, "{a} * {b}: {p:?}");
                }
            }
        }
    }
}
