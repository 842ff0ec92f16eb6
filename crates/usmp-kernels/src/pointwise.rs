//! LOGISTIC and TANH (int8), DEQUANTIZE and QUANTIZE from float32: TensorFlow Lite
//! Micro's reference `Logistic`, `Tanh`, `Dequantize` and `AffineQuantize`.
//!
//! Loop order: element by element, in order; element `i` of the output is written after
//! element `i` of the input is read and before element `i + 1` is. Where the output's
//! elements are wider than the input's (DEQUANTIZE), output element `i` covers input
//! bytes up to `4i + 3`: an in-place plan must start the output no later than the input.

use crate::Error;
use crate::bytes::want;
use crate::fixed::{logistic_q4, multiply_by_quantized_multiplier, rounding_shift_right, tanh_q4};
use crate::params::{Affine, Sigmoid};
use crate::quantize::{read, write};

/// The shared shape of LOGISTIC and TANH: saturate beyond the radius, else rescale to
/// Q4, apply `f` (a Q0 result) and bring it to int8.
fn sigmoid(
    p: &Sigmoid,
    input: &[u8],
    output: &mut [u8],
    what: &'static str,
    f: impl Fn(i32) -> i32,
) -> Result<(), Error> {
    want(what, input, p.elements)?;
    want(what, output, p.elements)?;
    for i in 0..p.elements {
        let x = i32::from(input[i] as i8) - p.input_zero;
        let y = if x <= -p.input_range_radius {
            i8::MIN
        } else if x >= p.input_range_radius {
            i8::MAX
        } else {
            let q4 = multiply_by_quantized_multiplier(x, p.input_multiplier, p.input_left_shift);
            f(q4).clamp(i8::MIN.into(), i8::MAX.into()) as i8
        };
        output[i] = y as u8;
    }
    Ok(())
}

/// LOGISTIC, int8: the output's scale is 1/256 and its zero point -128 (the converter
/// always writes those; the build checks the zero point as TFLite Micro does).
pub fn logistic(p: &Sigmoid, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    sigmoid(p, input, output, "logistic", |q4| {
        rounding_shift_right(logistic_q4(q4), 23).wrapping_sub(128)
    })
}

/// TANH, int8: the output's scale is 1/128 and its zero point 0.
pub fn tanh(p: &Sigmoid, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    sigmoid(p, input, output, "tanh", |q4| {
        rounding_shift_right(tanh_q4(q4), 24)
    })
}

/// DEQUANTIZE: `scale * (q - zero)`, the product in double as TFLite Micro's, to float32.
pub fn dequantize(p: &Affine, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    want("dequantize input", input, p.elements * p.int.bytes())?;
    want("dequantize output", output, p.elements * 4)?;
    let scale = f64::from(p.scale);
    for i in 0..p.elements {
        let q = read(p.int, input, i).wrapping_sub(p.zero);
        let real = (scale * f64::from(q)) as f32;
        output[4 * i..4 * i + 4].copy_from_slice(&real.to_le_bytes());
    }
    Ok(())
}

/// `round(x)`, halves away from zero (C's `roundf`), then to `i32` saturating (where C++
/// would be undefined) without the float library `core` lacks.
fn round_to_i32(x: f32) -> i32 {
    // At or beyond 2^23 every f32 is an integer already; NaN becomes 0.
    if x.is_nan() || x.abs() >= 8_388_608.0 {
        return x as i32;
    }
    let whole = x as i32;
    // Exact: both have the same sign and differ by less than one.
    let fraction = x - whole as f32;
    whole + i32::from(fraction >= 0.5) - i32::from(fraction <= -0.5)
}

/// QUANTIZE from float32: `round(x / scale) + zero`, the division in float as TFLite
/// Micro's, clamped to the output type.
pub fn quantize(p: &Affine, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    want("quantize input", input, p.elements * 4)?;
    want("quantize output", output, p.elements * p.int.bytes())?;
    let [lo, hi] = p.int.range();
    for i in 0..p.elements {
        let x = f32::from_le_bytes([
            input[4 * i],
            input[4 * i + 1],
            input[4 * i + 2],
            input[4 * i + 3],
        ]);
        let q = round_to_i32(x / p.scale)
            .saturating_add(p.zero)
            .clamp(lo, hi);
        write(p.int, output, i, q);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::round_to_i32;

    #[test]
    fn rounding_is_c_roundf() {
        for (x, want) in [
            (0.5f32, 1),
            (-0.5, -1),
            (1.4999999, 1),
            (2.5, 3),
            (-2.5, -3),
            (-0.49999997, 0),
            (8_388_607.5, 8_388_608),
            (1e20, i32::MAX),
            (-1e20, i32::MIN),
            (f32::NAN, 0),
        ] {
            assert_eq!(round_to_i32(x), want, "round({x})");
        }
    }
}
