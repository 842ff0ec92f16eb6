//! SOFTMAX: TensorFlow Lite Micro's reference int8 `Softmax` (gemmlowp fixed point: exp
//! of the scaled differences from the row's maximum, their sum's reciprocal), and its
//! float `Softmax`, whose `std::exp` is [`expf`].
//!
//! Loop order: row by row, and no later row is read before a row is written. Int8: a
//! row's outputs are written after the whole row is read (twice: for its maximum and its
//! sum). Float: the row is read for its maximum, then element `i`'s exp is written to
//! output `i` right after input `i` is read, and the row of outputs is divided in place.

use crate::Error;
use crate::bytes::{f32_at, int8, put_f32, want};
use crate::exp::expf;
use crate::fixed::{
    doubling_high_mul, exp_on_negative_values_q5, reciprocal, rounding_shift_right,
};
use crate::params::{Int, Softmax, SoftmaxFloat};

/// SOFTMAX over the last axis; the output has its type's lowest value as zero point and
/// one over its range as scale.
pub fn softmax(p: &Softmax, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    const ACCUMULATION_INTEGER_BITS: i32 = 12;
    let bits = match p.output {
        Int::I8 => 8,
        Int::I16 => 16,
        Int::I32 => {
            return Err(Error::Parameters {
                what: "softmax output",
                problem: "an int32 output is not one TFLite Micro writes",
            });
        }
    };
    let [lo, hi] = p.output.range();
    let width = p.output.bytes();
    want("softmax input", input, p.rows * p.depth)?;
    want("softmax output", output, p.rows * p.depth * width)?;
    for r in 0..p.rows {
        let row = &input[r * p.depth..(r + 1) * p.depth];
        let max = row.iter().map(|&v| int8(v)).max().unwrap_or(-128);
        // exp(beta * scale * (x - max)) in Q0, or None below the cut-off.
        let exp = |v: u8| -> Option<i32> {
            let diff = int8(v) - max;
            (diff >= p.diff_min).then(|| {
                let scaled = doubling_high_mul(
                    diff.wrapping_mul(1 << p.input_left_shift),
                    p.input_multiplier,
                );
                exp_on_negative_values_q5(scaled)
            })
        };
        let sum = row.iter().filter_map(|&v| exp(v)).fold(0i32, |s, e| {
            s.wrapping_add(rounding_shift_right(e, ACCUMULATION_INTEGER_BITS as u32))
        });
        let (scale, bits_over_unit) = reciprocal(sum, ACCUMULATION_INTEGER_BITS);
        let exponent = (bits_over_unit + 31 - bits).clamp(0, 31) as u32;
        for (c, &v) in row.iter().enumerate() {
            let q = match exp(v) {
                Some(e) => {
                    let unsat = rounding_shift_right(doubling_high_mul(scale, e), exponent);
                    unsat.wrapping_add(lo).clamp(lo, hi)
                }
                None => lo,
            };
            let at = (r * p.depth + c) * width;
            output[at..at + width].copy_from_slice(&q.to_le_bytes()[..width]);
        }
    }
    Ok(())
}

/// SOFTMAX, float32: each exp of `(x - max) * beta` is written to the output, summed in
/// float, and the row divided by the sum afterwards, in TFLite's order.
pub fn softmax_f32(p: &SoftmaxFloat, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    want("softmax input", input, 4 * p.rows * p.depth)?;
    want("softmax output", output, 4 * p.rows * p.depth)?;
    for r in 0..p.rows {
        let row = r * p.depth;
        let max = (row..row + p.depth).fold(f32::MIN, |m, i| {
            let v = f32_at(input, i);
            if m < v { v } else { m }
        });
        let mut sum = 0.0f32;
        for i in row..row + p.depth {
            let e = expf((f32_at(input, i) - max) * p.beta);
            put_f32(output, i, e);
            sum += e;
        }
        for i in row..row + p.depth {
            put_f32(output, i, f32_at(output, i) / sum);
        }
    }
    Ok(())
}
