//! `expf` for float SOFTMAX, computed as glibc computes it since version 2.27 (the Arm
//! optimized-routines algorithm, which musl and newlib use too): TensorFlow Lite Micro's
//! float softmax calls `std::exp`, so equal outputs need the same function, not merely
//! an accurate one. The result is `2^(k/32) * p(r)`, every step in double: the power from
//! a 32-entry table, the rest from a cubic in the remainder.
//!
//! No `std` here (firmware has no libm); doubles are IEEE on every target, so the result
//! is the same bits on a Cortex-M0+ as on the host that ran TFLite Micro.

/// `2^(i/32)` for `i` in `0..32`, correctly rounded to double (computed with Python's
/// `decimal` at 60 digits and converted by `float()`, which rounds correctly).
const POWERS: [u64; 32] = [
    0x3ff0000000000000,
    0x3ff059b0d3158574,
    0x3ff0b5586cf9890f,
    0x3ff11301d0125b51,
    0x3ff172b83c7d517b,
    0x3ff1d4873168b9aa,
    0x3ff2387a6e756238,
    0x3ff29e9df51fdee1,
    0x3ff306fe0a31b715,
    0x3ff371a7373aa9cb,
    0x3ff3dea64c123422,
    0x3ff44e086061892d,
    0x3ff4bfdad5362a27,
    0x3ff5342b569d4f82,
    0x3ff5ab07dd485429,
    0x3ff6247eb03a5585,
    0x3ff6a09e667f3bcd,
    0x3ff71f75e8ec5f74,
    0x3ff7a11473eb0187,
    0x3ff82589994cce13,
    0x3ff8ace5422aa0db,
    0x3ff93737b0cdc5e5,
    0x3ff9c49182a3f090,
    0x3ffa5503b23e255d,
    0x3ffae89f995ad3ad,
    0x3ffb7f76f2fb5e47,
    0x3ffc199bdd85529c,
    0x3ffcb720dcef9069,
    0x3ffd5818dcfba487,
    0x3ffdfc97337b9b5f,
    0x3ffea4afa2a490da,
    0x3fff50765b6e4540,
];

/// `32 / ln 2`, as the reference rounds it.
const INV_LN2_32: f64 = f64::from_bits(0x3ff71547652b82fe) * 32.0;
/// `1.5 * 2^52`: adding it rounds a double to an integer, ties to even, and leaves that
/// integer in the low bits.
const SHIFT: f64 = f64::from_bits(0x4338000000000000);
/// The cubic's coefficients for `2^(r/32)`, `r` in [-1/2, 1/2] (the reference's minimax
/// fit, divided by powers of 32 exactly).
const C0: f64 = f64::from_bits(0x3fac6af84b912394) / 32768.0;
const C1: f64 = f64::from_bits(0x3fcebfce50fac4f3) / 1024.0;
const C2: f64 = f64::from_bits(0x3fe62e42ff0c52d6) / 32.0;

/// `e^x` in single precision, bit for bit glibc's `expf` (round to nearest).
pub fn expf(x: f32) -> f32 {
    let bits = x.to_bits();
    let top = (bits >> 20) & 0x7ff;
    if top >= 0x42b {
        // |x| >= 88, or not a number.
        if bits == f32::NEG_INFINITY.to_bits() {
            return 0.0;
        }
        if top >= 0x7f8 {
            return x + x;
        }
        if x > f32::from_bits(0x42b17217) {
            return f32::INFINITY;
        }
        if x < f32::from_bits(0xc2cff1b4) {
            return 0.0;
        }
    }
    // x * 32 / ln 2 = k + r, k an integer, |r| <= 1/2.
    let z = INV_LN2_32 * f64::from(x);
    let kd = z + SHIFT;
    let ki = kd.to_bits();
    let r = z - (kd - SHIFT);
    // 2^(k/32): the table's 2^((k mod 32)/32), its exponent raised by floor(k/32). The
    // low bits of `ki` are k in two's complement, so a wrapping shift carries the sign.
    let j = (ki % 32) as usize;
    let scale = f64::from_bits(
        POWERS[j]
            .wrapping_sub((j as u64) << 47)
            .wrapping_add(ki << 47),
    );
    let high = C0 * r + C1;
    let r2 = r * r;
    let low = C2 * r + 1.0;
    ((high * r2 + low) * scale) as f32
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::expf;

    #[test]
    fn edges() {
        assert_eq!(expf(0.0), 1.0);
        assert_eq!(expf(f32::NEG_INFINITY), 0.0);
        assert_eq!(expf(-200.0), 0.0);
        assert_eq!(expf(100.0), f32::INFINITY);
        assert!(expf(f32::NAN).is_nan());
        assert_eq!(expf(1.0), core::f32::consts::E);
    }

    /// On glibc, `f32::exp` is the C library's `expf`, the function TFLite Micro's
    /// softmax calls: every 251st float from 0 down through the underflow must agree.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn equals_glibc_expf() {
        let mut checked = 0;
        for bits in (0x8000_0000u32..=0xc2d0_0000).step_by(251) {
            let x = f32::from_bits(bits);
            assert_eq!(
                expf(x).to_bits(),
                x.exp().to_bits(),
                "expf({x:e}) differs from glibc's"
            );
            checked += 1;
        }
        // And the positive side up to overflow.
        for bits in (0u32..=0x42b2_0000).step_by(251) {
            let x = f32::from_bits(bits);
            assert_eq!(expf(x).to_bits(), x.exp().to_bits(), "expf({x:e})");
            checked += 1;
        }
        assert!(checked > 8_000_000);
    }
}
