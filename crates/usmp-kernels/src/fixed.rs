//! Integer fixed-point arithmetic with TensorFlow Lite's rounding, bit for bit (its
//! `MultiplyByQuantizedMultiplier` with double rounding, and gemmlowp's `FixedPoint`
//! helpers used by the int8 softmax, logistic and tanh). A value is an `i32` "raw" with a number of integer
//! bits the caller keeps track of: `Qm` has `m` integer bits and `31 - m` fraction bits.
//!
//! Everything wraps instead of trapping where C++ would overflow silently, so a debug
//! build gives the same bits as a release build.

/// `round(a * b / 2^31)`, saturating the one overflow (`MIN * MIN`). ARM's `VQRDMULH`.
///
/// TFLite writes it as `(ab + nudge) / 2^31`, truncating, with a nudge of `2^30` for a
/// product at or above zero and `1 - 2^30` below. For `ab < 0` that truncation equals
/// `floor((ab + 2^30) / 2^31)` (both are `-floor((-ab + 2^30 - 1) / 2^31)`), so one
/// arithmetic shift of `ab + 2^30` gives the same bits for every product: on Cortex-M,
/// one SMLAL onto the constant and two shifts, no branch on the sign (as CMSIS-NN does).
/// `tests::doubling_high_mul_is_tflites` checks it against TFLite's form.
#[inline(always)]
pub fn doubling_high_mul(a: i32, b: i32) -> i32 {
    if a == i32::MIN && b == i32::MIN {
        return i32::MAX;
    }
    doubling_high_mul_unsaturated(a, b)
}

/// [`doubling_high_mul`] without its one saturation: wrong only for `MIN * MIN`.
#[inline(always)]
fn doubling_high_mul_unsaturated(a: i32, b: i32) -> i32 {
    ((wide_mul(a, b) + (1 << 30)) >> 31) as i32
}

/// `a * b`, all 64 bits. On Armv6-M (Cortex-M0, M0+, M23: no SMULL) LLVM's 64-bit
/// multiply calls `__aeabi_lmul`, a 64 by 64 product of about 60 instructions; there it
/// is [`wide_mul_by_halves`] instead.
#[inline(always)]
pub(crate) fn wide_mul(a: i32, b: i32) -> i64 {
    #[cfg(all(target_arch = "arm", not(usmp_thumb2)))]
    return wide_mul_by_halves(a, b);
    #[cfg(not(all(target_arch = "arm", not(usmp_thumb2))))]
    return i64::from(a) * i64::from(b);
}

/// `a * b` from four 32-bit products of 16-bit halves (`a = ah * 2^16 + al`, `ah` signed,
/// `al` unsigned): none overflows (`|ah * bl| < 2^31`, `al * bl < 2^32` unsigned), and
/// their sum, shifted into place, is the product.
#[cfg(any(test, all(target_arch = "arm", not(usmp_thumb2))))]
#[inline(always)]
fn wide_mul_by_halves(a: i32, b: i32) -> i64 {
    let (ah, al, bh, bl) = (a >> 16, a & 0xFFFF, b >> 16, b & 0xFFFF);
    let low = (al as u32) * (bl as u32);
    let middle = i64::from(ah * bl) + i64::from(al * bh);
    (i64::from(ah * bh) << 32) + (middle << 16) + i64::from(low)
}

/// `x / 2^exponent` for `exponent` in `0..32`, rounded to nearest with ties away from
/// zero, in 32-bit words (the mask of `2^31 - 1` fits one).
#[inline(always)]
pub fn rounding_shift_right(x: i32, exponent: u32) -> i32 {
    let mask = (1u32 << exponent).wrapping_sub(1) as i32;
    let remainder = x & mask;
    let threshold = (mask >> 1) + i32::from(x < 0);
    (x >> exponent) + i32::from(remainder > threshold)
}

/// `x * 2^exponent`, saturating at the ends of `i32`.
pub fn saturating_shift_left(x: i32, exponent: u32) -> i32 {
    let threshold = (1i32 << (31 - exponent)) - 1;
    if x > threshold {
        i32::MAX
    } else if x < -threshold {
        i32::MIN
    } else {
        x << exponent
    }
}

/// `x * multiplier * 2^shift` for a multiplier in Q0.31, as TFLite's kernels rescale
/// accumulators.
#[inline(always)]
pub fn multiply_by_quantized_multiplier(x: i32, multiplier: i32, shift: i32) -> i32 {
    rescaled_by(x, shift, |x| doubling_high_mul(x, multiplier))
}

/// [`multiply_by_quantized_multiplier`] for a multiplier other than `i32::MIN`: the
/// doubling high multiply saturates only for `MIN * MIN`, so without that multiplier the
/// same value needs no test (the convolutions refuse it before they run; no TFLite scale
/// gives it: multipliers are 0 or in `[2^30, 2^31)`).
///
/// A right shift (`shift < 0`, every convolution of the shared models) is computed with
/// one rounding instead of TFLite's two, the same integer: with `P = x * multiplier`, the
/// doubling high multiply is `r = floor((P + 2^30) / 2^31)` and its rounding shift by
/// `e = -shift` is `floor((r + 2^(e-1) - [r < 0]) / 2^e)` (its remainder test, written as
/// a floor); a floor of a floor by a power of two is one floor, so the result is
/// `floor((P + 2^30 + 2^(30+e) - [r < 0] * 2^31) / 2^(31+e))`. `[r < 0]` may be taken as
/// `[P < 0]`: they differ only for `P` in `[-2^30, 0)`, where `r = 0` and both give 0.
/// So: one 64-bit multiply-accumulate onto a constant, and the high word shifted.
#[inline(always)]
pub(crate) fn rescale(x: i32, multiplier: i32, shift: i32) -> i32 {
    if shift >= 0 {
        return rescaled_by(x, shift, |x| doubling_high_mul_unsaturated(x, multiplier));
    }
    let e = shift.unsigned_abs();
    // 2^(30+e), and -2^31 where the product is negative (the signs differ; a zero
    // product gives 0 either way).
    let half = i64::from(1u32 << (e - 1)) << 31;
    let below = i64::from((x ^ multiplier) & i32::MIN);
    let sum = wide_mul(x, multiplier) + ((1 << 30) + half + below);
    ((sum >> 32) as i32) >> (e - 1)
}

/// TFLite's rescaling around a doubling high multiply `high`: `x` shifted left by the
/// positive part of `shift`, multiplied, then shifted right, rounding, by its negative part.
#[inline(always)]
fn rescaled_by(x: i32, shift: i32, high: impl FnOnce(i32) -> i32) -> i32 {
    let left = shift.max(0) as u32;
    let right = (-shift).max(0) as u32;
    rounding_shift_right(high(x.wrapping_mul(1 << left)), right)
}

/// `round((a + b) / 2)`, ties away from zero.
fn rounding_half_sum(a: i32, b: i32) -> i32 {
    let sum = i64::from(a) + i64::from(b);
    let sign = if sum >= 0 { 1 } else { -1 };
    ((sum + sign) / 2) as i32
}

/// `exp(a)` for `a` in [-1/4, 0), both Q0: a Taylor expansion around -1/8.
fn exp_on_interval_near_zero(a: i32) -> i32 {
    const EXP_MINUS_ONE_EIGHTH: i32 = 1_895_147_668;
    const ONE_THIRD: i32 = 715_827_883;
    let x = a.wrapping_add(1 << 28);
    let x2 = doubling_high_mul(x, x);
    let x3 = doubling_high_mul(x2, x);
    let x4 = doubling_high_mul(x2, x2);
    let x4_over_4 = rounding_shift_right(x4, 2);
    let poly = rounding_shift_right(
        doubling_high_mul(x4_over_4.wrapping_add(x3), ONE_THIRD).wrapping_add(x2),
        1,
    );
    EXP_MINUS_ONE_EIGHTH.wrapping_add(doubling_high_mul(
        EXP_MINUS_ONE_EIGHTH,
        x.wrapping_add(poly),
    ))
}

/// `exp(a)` for `a <= 0` in Q5 (the softmax's scaled differences), as a Q0.
pub fn exp_on_negative_values_q5(a: i32) -> i32 {
    exp_on_negative_values(a, 5)
}

/// `exp(a)` for `a <= 0` with `integer_bits` integer bits (at most 5), as a Q0: gemmlowp's
/// `exp_on_negative_values`, which multiplies in `exp(-2^k)` for each bit of the input
/// above a quarter, for the `k` the integer bits reach.
fn exp_on_negative_values(a: i32, integer_bits: u32) -> i32 {
    let fraction_bits = 31 - integer_bits as i32;
    let one_quarter = 1 << (fraction_bits - 2);
    // exp(-2^k) in Q0 for k = -2..=4.
    const BARREL: [(i32, i32); 7] = [
        (-2, 1_672_461_947),
        (-1, 1_302_514_674),
        (0, 790_015_084),
        (1, 290_630_308),
        (2, 39_332_535),
        (3, 720_401),
        (4, 242),
    ];
    if a == 0 {
        return i32::MAX;
    }
    let mod_quarter_minus_quarter = (a & (one_quarter - 1)).wrapping_sub(one_quarter);
    let mut result = exp_on_interval_near_zero(saturating_shift_left(
        mod_quarter_minus_quarter,
        integer_bits,
    ));
    let remainder = mod_quarter_minus_quarter.wrapping_sub(a);
    for (exponent, multiplier) in BARREL {
        if (integer_bits as i32) > exponent && remainder & (1 << (fraction_bits + exponent)) != 0 {
            result = doubling_high_mul(result, multiplier);
        }
    }
    result
}

/// `1 / (1 + x)` in Q2 for `x` in [0, 1) given as `(1 + x) / 2` in Q0: three
/// Newton-Raphson steps from 48/17 - 32/17 d.
fn newton_reciprocal_q2(half_denominator: i32) -> i32 {
    const FORTY_EIGHT_SEVENTEENTHS: i32 = 1_515_870_810;
    const MINUS_THIRTY_TWO_SEVENTEENTHS: i32 = -1_010_580_540;
    const ONE_Q2: i32 = 1 << 29;
    let mut r = FORTY_EIGHT_SEVENTEENTHS.wrapping_add(doubling_high_mul(
        half_denominator,
        MINUS_THIRTY_TWO_SEVENTEENTHS,
    ));
    for _ in 0..3 {
        let one_minus = ONE_Q2.wrapping_sub(doubling_high_mul(half_denominator, r));
        r = r.wrapping_add(saturating_shift_left(doubling_high_mul(r, one_minus), 2));
    }
    r
}

/// `(1 - x) / (1 + x)` for `x` in [0, 1), Q0 in and out.
fn one_minus_x_over_one_plus_x(x: i32) -> i32 {
    let r = newton_reciprocal_q2(rounding_half_sum(x, i32::MAX));
    // 2 / (1 + x) - 1, from Q2 to Q0.
    saturating_shift_left(r.wrapping_sub(1 << 29), 2)
}

/// The logistic function of a Q4 input, as a Q0 (gemmlowp's `logistic`): computed for
/// `|a|` as `1 / (1 + exp(-|a|))` and mirrored as `1 - that` for negative inputs.
pub fn logistic_q4(a: i32) -> i32 {
    if a == 0 {
        return 1 << 30;
    }
    let positive = one_over_one_plus_x(exp_on_negative_values(a.wrapping_abs().wrapping_neg(), 4));
    if a > 0 {
        positive
    } else {
        // One in Q0 is the largest raw value.
        i32::MAX.wrapping_sub(positive)
    }
}

/// `tanh` of a Q4 input, as a Q0 (gemmlowp's `tanh`): `(1 - exp(-2|a|)) / (1 + exp(-2|a|))`
/// with the sign of `a`. Doubling `-|a|` is free: the same raw value read as Q5.
pub fn tanh_q4(a: i32) -> i32 {
    if a == 0 {
        return 0;
    }
    let t = one_minus_x_over_one_plus_x(exp_on_negative_values(a.wrapping_abs().wrapping_neg(), 5));
    if a < 0 { t.wrapping_neg() } else { t }
}

/// `1 / (1 + x)` for `x` in [0, 1), Q0 in and out.
fn one_over_one_plus_x(x: i32) -> i32 {
    let r = newton_reciprocal_q2(rounding_half_sum(x, i32::MAX));
    // r is 1/(1+x) in Q2; halve it exactly (Q1) and rescale to Q0.
    saturating_shift_left(r, 1)
}

/// The reciprocal of a positive sum held with `integer_bits` integer bits: a Q0 scale
/// and how many bits the sum had above one.
pub fn reciprocal(sum: i32, integer_bits: i32) -> (i32, i32) {
    let headroom_plus_one = (sum as u32).leading_zeros();
    let bits_over_unit = integer_bits - headroom_plus_one as i32;
    let shifted_minus_one = (sum as u32)
        .checked_shl(headroom_plus_one)
        .unwrap_or(0)
        .wrapping_sub(1 << 31) as i32;
    (one_over_one_plus_x(shifted_minus_one), bits_over_unit)
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::vec::Vec;

    /// Armv6-M's product by halves is the 64-bit product: on the ends of `i32`, around
    /// the halves' borders, and on 200,000 random pairs.
    #[test]
    fn the_product_by_halves_is_the_product() {
        let edges = [
            i32::MIN,
            i32::MIN + 1,
            -65537,
            -65536,
            -65535,
            -1,
            0,
            1,
            65535,
            65536,
        ];
        let edges = edges.into_iter().chain([65537, i32::MAX - 1, i32::MAX]);
        let mut pairs: Vec<(i32, i32)> = Vec::new();
        for a in edges.clone() {
            pairs.extend(edges.clone().map(|b| (a, b)));
        }
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            pairs.push((state as i32, (state >> 32) as i32));
        }
        for (a, b) in pairs {
            assert_eq!(
                wide_mul_by_halves(a, b),
                i64::from(a) * i64::from(b),
                "{a} * {b}"
            );
        }
    }

    fn q(raw: i32, fraction_bits: i32) -> f64 {
        f64::from(raw) / f64::from(1u32 << fraction_bits)
    }

    /// TFLite's `SaturatingRoundingDoublingHighMul` as its source writes it: a nudge by
    /// the product's sign, then a division truncating toward zero.
    fn tflite_doubling_high_mul(a: i32, b: i32) -> i32 {
        if a == i32::MIN && b == i32::MIN {
            return i32::MAX;
        }
        let ab = i64::from(a) * i64::from(b);
        let nudge = if ab >= 0 { 1 << 30 } else { 1 - (1 << 30) };
        ((ab + nudge) / (1i64 << 31)) as i32
    }

    /// TFLite's `RoundingDivideByPOT` in 64-bit arithmetic, as this crate first wrote it.
    fn tflite_rounding_shift_right(x: i32, exponent: u32) -> i32 {
        let mask = ((1i64 << exponent) - 1) as i32;
        let remainder = x & mask;
        let threshold = (mask >> 1) + i32::from(x < 0);
        (x >> exponent) + i32::from(remainder > threshold)
    }

    /// The shifted form against TFLite's on products near every multiple of 2^30 (where
    /// the rounding turns), the ends of `i32` and a million random pairs; and the
    /// 32-bit shift against the 64-bit one at every exponent.
    #[test]
    fn doubling_high_mul_is_tflites() {
        let mut rng = crate::overlap::tests::Rng(0x0DD_B1A5_ED5E_ED01);
        let mut word = || (rng.below(1 << 32) as u32) as i32;
        let mut pairs = Vec::new();
        for _ in 0..1_000_000 {
            pairs.push((word(), word()));
        }
        let ends = [i32::MIN, i32::MIN + 1, -1, 0, 1, i32::MAX - 1, i32::MAX];
        for a in ends {
            for b in ends {
                pairs.push((a, b));
            }
        }
        // a * 2^k for small a lands exactly on, and beside, the halfway points.
        for k in 0..31 {
            for a in -6i32..=6 {
                for d in -2..=2 {
                    let x = a.wrapping_shl(k).wrapping_add(d);
                    pairs.push((x, 1 << 30));
                    pairs.push((x, (1 << 30) + 1));
                    pairs.push((x, -(1 << 30)));
                }
            }
        }
        for (a, b) in pairs {
            assert_eq!(
                doubling_high_mul(a, b),
                tflite_doubling_high_mul(a, b),
                "{a} * {b}"
            );
            let e = (a as u32) % 32;
            assert_eq!(
                rounding_shift_right(b, e),
                tflite_rounding_shift_right(b, e),
                "{b} >> {e}"
            );
        }
    }

    /// `rescale` equals `multiply_by_quantized_multiplier` for every multiplier but
    /// `i32::MIN`: random accumulators (and the ends of `i32`), multipliers and every shift
    /// from -31 to 30.
    #[test]
    fn rescale_is_the_multiply_without_its_one_saturation() {
        let mut rng = crate::overlap::tests::Rng(0x5CA1_AB1E_0DD5_EED5);
        let mut word = || (rng.below(1 << 32) as u32) as i32;
        for k in 0..200_000 {
            let x = match k % 50 {
                0 => i32::MIN,
                1 => i32::MAX,
                _ => word(),
            };
            let m = match word() {
                i32::MIN => i32::MIN + 1,
                m => m,
            };
            let shift = k % 62 - 31;
            assert_eq!(
                rescale(x, m, shift),
                multiply_by_quantized_multiplier(x, m, shift),
                "{x} * {m} * 2^{shift}"
            );
        }
        // Small products, where the two roundings meet their ties (2^30 halves x; with
        // the multiplier a little off, each side of them), at every right shift.
        let multipliers = [1 << 30, (1 << 30) + 1, (1 << 30) - 1, 3 << 29, i32::MAX, 0];
        for m in multipliers.into_iter().flat_map(|m| [m, -m]) {
            for x in -3000..3000 {
                for shift in -31..=2 {
                    let want = multiply_by_quantized_multiplier(x, m, shift);
                    assert_eq!(rescale(x, m, shift), want, "{x} * {m} * 2^{shift}");
                }
            }
        }
    }

    #[test]
    fn rounding_matches_the_definitions() {
        assert_eq!(doubling_high_mul(i32::MIN, i32::MIN), i32::MAX);
        assert_eq!(doubling_high_mul(1 << 30, 1 << 30), 1 << 29);
        assert_eq!(rounding_shift_right(5, 1), 3, "2.5 rounds away from zero");
        assert_eq!(rounding_shift_right(-5, 1), -3);
        assert_eq!(rounding_shift_right(-4, 1), -2);
        assert_eq!(saturating_shift_left(1 << 29, 2), i32::MAX);
        assert_eq!(saturating_shift_left(-(1 << 29), 2), i32::MIN);
        // 100 * 0.75 * 2^-1 = 37.5 -> 38
        assert_eq!(multiply_by_quantized_multiplier(100, 3 << 29, -1), 38);
        assert_eq!(multiply_by_quantized_multiplier(100, 1 << 30, 2), 200);
    }

    #[test]
    fn exp_and_reciprocal_are_close_to_the_real_functions() {
        for k in 0..200 {
            let x = -f64::from(k) / 16.0;
            let raw = (x * f64::from(1u32 << 26)) as i32;
            let got = q(exp_on_negative_values_q5(raw), 31);
            assert!((got - x.exp()).abs() < 2e-6, "exp({x}) = {got}");
        }
        for k in 1..100 {
            let s = 1.0 + f64::from(k) * 0.37;
            let (scale, over) = reciprocal((s * f64::from(1u32 << 19)) as i32, 12);
            let got = q(scale, 31) / f64::from(1u32 << over);
            assert!((got - 1.0 / s).abs() < 1e-6 / s, "1/{s} = {got}");
        }
    }

    #[test]
    fn logistic_and_tanh_are_close_to_the_real_functions() {
        assert_eq!(logistic_q4(0), 1 << 30);
        assert_eq!(tanh_q4(0), 0);
        for k in -120..=120 {
            let x = f64::from(k) / 8.0;
            let raw = (x * f64::from(1u32 << 27)) as i32;
            let sigmoid = 1.0 / (1.0 + (-x).exp());
            let got = q(logistic_q4(raw), 31);
            assert!(
                (got - sigmoid).abs() < 1e-6,
                "logistic({x}) = {got}, not {sigmoid}"
            );
            let got = q(tanh_q4(raw), 31);
            assert!(
                (got - x.tanh()).abs() < 2e-6,
                "tanh({x}) = {got}, not {}",
                x.tanh()
            );
        }
    }
}
