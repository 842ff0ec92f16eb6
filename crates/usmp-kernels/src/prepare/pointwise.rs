//! `Prepare` of LOGISTIC, TANH (int8), DEQUANTIZE and QUANTIZE from float32.

use std::format;
use std::string::{String, ToString};

use usmp::ElementType;

use super::{Call, frexp, int};
use crate::{Affine, Int, Kernel, Sigmoid};

/// LOGISTIC and TANH (`tanh` picks the variant): TFLite Micro's
/// `CalculateArithmeticOpDataLogistic` and tanh's `CalculateArithmeticOpData` for int8,
/// which are the same: the input scale times 2^27 (Q4) as `frexp`'s mantissa rounded to
/// Q0.31 and its exponent, and `CalculateInputRadius(4, shift, 31)`.
pub(super) fn sigmoid<R>(
    call: &Call<'_, '_>,
    tanh: bool,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let (input, output) = (call.input(0, "the input")?, call.output()?);
    let (scale, zero) = input.int8("the input")?;
    let (_, out_zero) = output.int8("the output")?;
    if !tanh && out_zero != -128 {
        return Err(format!(
            "the output's zero point is {out_zero}; TFLite Micro's int8 LOGISTIC needs -128"
        ));
    }
    let elements = input.elements()?;
    if output.elements()? != elements {
        return Err("input and output differ in size".to_string());
    }
    let real = f64::from(scale) * f64::from(1u32 << 27);
    if !(real.is_finite() && real > 0.0) {
        return Err(format!("the input scale {scale} is not a positive number"));
    }
    let (q, shift) = frexp(real);
    if !(0..=62).contains(&shift) {
        return Err(format!(
            "the input scale {scale} is out of the range TFLite Micro's kernel handles"
        ));
    }
    // `TfLiteRound(q * 2^31)`: q < 1, so at most 2^31, which the int32 cast wraps as C++'s.
    let multiplier = (q * f64::from(1u32 << 31)).round() as i64 as i32;
    let radius = (15.0 * f64::from(1u32 << 27) / (1u64 << shift) as f64).floor() as i32;
    let p = Sigmoid {
        elements,
        input_zero: zero,
        input_range_radius: radius,
        input_multiplier: multiplier,
        input_left_shift: shift,
    };
    Ok(with(&if tanh {
        Kernel::Tanh(&p)
    } else {
        Kernel::Logistic(&p)
    }))
}

/// DEQUANTIZE (int8 or int16 to float32) or QUANTIZE from float32 to int8 or int16: the
/// float32 side and the quantized side's parameters.
pub(super) fn affine<R>(
    call: &Call<'_, '_>,
    dequantize: bool,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let (input, output) = (call.input(0, "the input")?, call.output()?);
    let (float, quantized) = if dequantize {
        (output, input)
    } else {
        (input, output)
    };
    let side = if dequantize {
        "the input"
    } else {
        "the output"
    };
    if float.element != ElementType::Float32 {
        let other = if dequantize {
            "the output"
        } else {
            "the input"
        };
        return Err(format!(
            "{other} is {:?}; these kernels convert between Float32 and Int8 or Int16",
            float.element
        ));
    }
    let (name, scale, zero) = int(&quantized, side)?;
    if name == Int::I32 {
        return Err(format!(
            "{side} is Int32; these kernels convert between Float32 and Int8 or Int16"
        ));
    }
    let elements = input.elements()?;
    if output.elements()? != elements {
        return Err("input and output differ in size".to_string());
    }
    let p = Affine {
        elements,
        int: name,
        scale,
        zero,
    };
    Ok(with(&if dequantize {
        Kernel::Dequantize(&p)
    } else {
        Kernel::QuantizeFloat(&p)
    }))
}
