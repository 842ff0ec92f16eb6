//! LOGISTIC and TANH (int8), DEQUANTIZE and QUANTIZE from float32: TensorFlow Lite
//! Micro's reference `Logistic`, `Tanh`, `Dequantize` and `AffineQuantize`.
//!
//! Loop order: element by element, in order; element `i` of the output is written after
//! element `i` of the input is read and before element `i + 1` is: the window of
//! [`elementwise_window`]. Where the output's elements are wider than the input's
//! (DEQUANTIZE), output element `i` covers input bytes up to `4i + 3`: an output over its
//! input must start well below it.

use crate::Error;
use crate::bytes::want_len;
use crate::fixed::{logistic_q4, multiply_by_quantized_multiplier, rounding_shift_right, tanh_q4};
use crate::overlap::{Load, Window, apart, cells, elementwise_window, f32_at, split};
use crate::params::{Affine, Sigmoid};
use crate::quantize::{read, write};

/// The shared shape of LOGISTIC and TANH: saturate beyond the radius, else rescale to
/// Q4, apply `f` (a Q0 result) and bring it to int8.
#[inline(always)]
pub(crate) fn sigmoid<T: Load>(
    p: &Sigmoid,
    input: &[T],
    (len, mut put): (usize, impl FnMut(usize, u8)),
    what: &'static str,
    f: impl Fn(i32) -> i32,
) -> Result<(), Error> {
    want_len(what, input.len(), p.elements)?;
    want_len(what, len, p.elements)?;
    for (i, byte) in input.iter().take(p.elements).enumerate() {
        let x = i32::from(byte.load() as i8) - p.input_zero;
        let y = if x <= -p.input_range_radius {
            i8::MIN
        } else if x >= p.input_range_radius {
            i8::MAX
        } else {
            let q4 = multiply_by_quantized_multiplier(x, p.input_multiplier, p.input_left_shift);
            f(q4).clamp(i8::MIN.into(), i8::MAX.into()) as i8
        };
        put(i, y as u8);
    }
    Ok(())
}

/// LOGISTIC's `f`: the output's scale is 1/256 and its zero point -128 (the converter
/// always writes those; the build checks the zero point as TFLite Micro does).
pub(crate) fn logistic_of(q4: i32) -> i32 {
    rounding_shift_right(logistic_q4(q4), 23).wrapping_sub(128)
}

/// TANH's `f`: the output's scale is 1/128 and its zero point 0.
pub(crate) fn tanh_of(q4: i32) -> i32 {
    rounding_shift_right(tanh_q4(q4), 24)
}

/// LOGISTIC, int8.
pub fn logistic(p: &Sigmoid, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    sigmoid(p, input, apart(output), "logistic", logistic_of)
}

/// TANH, int8.
pub fn tanh(p: &Sigmoid, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    sigmoid(p, input, apart(output), "tanh", tanh_of)
}

/// LOGISTIC (`TANH` when `TANH`) over one region holding its input and its output where
/// `shared` says, at a shift its window allows.
pub fn sigmoid_over<const TANH: bool>(
    p: &Sigmoid,
    region: &mut [u8],
    shared: &usmp::Shared,
) -> Result<(), Error> {
    let [input, output] = split(region, shared, elementwise_window(p.elements, 1, 1))?;
    match TANH {
        true => sigmoid(p, input, cells(output), "tanh", tanh_of),
        false => sigmoid(p, input, cells(output), "logistic", logistic_of),
    }
}

/// DEQUANTIZE: `scale * (q - zero)`, the product in double as TFLite Micro's, to float32.
pub fn dequantize(p: &Affine, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    dequantize_with(p, input, apart(output))
}

/// The windows of DEQUANTIZE and of QUANTIZE from float32.
pub fn affine_window(p: &Affine, quantize: bool) -> Window {
    let (int, float) = (p.int.bytes(), 4);
    match quantize {
        true => elementwise_window(p.elements, float, int),
        false => elementwise_window(p.elements, int, float),
    }
}

/// DEQUANTIZE (QUANTIZE from float32 when `QUANTIZE`) over one region holding its input
/// and its output where `shared` says, at a shift its window allows.
pub fn affine_over<const QUANTIZE: bool>(
    p: &Affine,
    region: &mut [u8],
    shared: &usmp::Shared,
) -> Result<(), Error> {
    let [input, output] = split(region, shared, affine_window(p, QUANTIZE))?;
    match QUANTIZE {
        true => quantize_with(p, input, cells(output)),
        false => dequantize_with(p, input, cells(output)),
    }
}

#[inline(always)]
pub(crate) fn dequantize_with<T: Load>(
    p: &Affine,
    input: &[T],
    (len, mut put): (usize, impl FnMut(usize, u8)),
) -> Result<(), Error> {
    want_len("dequantize input", input.len(), p.elements * p.int.bytes())?;
    want_len("dequantize output", len, p.elements * 4)?;
    let scale = f64::from(p.scale);
    for i in 0..p.elements {
        let q = read(p.int, input, i).wrapping_sub(p.zero);
        let real = (scale * f64::from(q)) as f32;
        for (k, b) in real.to_le_bytes().into_iter().enumerate() {
            put(4 * i + k, b);
        }
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
    quantize_with(p, input, apart(output))
}

#[inline(always)]
pub(crate) fn quantize_with<T: Load>(
    p: &Affine,
    input: &[T],
    (len, mut put): (usize, impl FnMut(usize, u8)),
) -> Result<(), Error> {
    want_len("quantize input", input.len(), p.elements * 4)?;
    want_len("quantize output", len, p.elements * p.int.bytes())?;
    let [lo, hi] = p.int.range();
    for i in 0..p.elements {
        let x = f32_at(input, i);
        let q = round_to_i32(x / p.scale)
            .saturating_add(p.zero)
            .clamp(lo, hi);
        write(p.int, &mut put, i, q);
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
