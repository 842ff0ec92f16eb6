//! ADD and MUL with broadcasting: TensorFlow Lite Micro's reference int8 `AddFunc` and
//! `MulElementwise` (as in `BroadcastAdd4DSlow` and `BroadcastMul4DSlow`).
//!
//! Loop order: output element by element, in order. Output element `i` is written after
//! the input elements it broadcasts from are read; an input that is not broadcast is read
//! at element `i` only, so it may share its bytes with the output.

use crate::Error;
use crate::bytes::{int8, want};
use crate::fixed::multiply_by_quantized_multiplier;
use crate::params::{Add, Broadcast, Mul};

/// Writes every output element as `f(input 1 value, input 2 value)`.
fn each(
    s: &Broadcast,
    first: &[u8],
    second: &[u8],
    output: &mut [u8],
    f: impl Fn(i32, i32) -> u8,
) -> Result<(), Error> {
    want("elementwise input 1", first, s.first_elements)?;
    want("elementwise input 2", second, s.second_elements)?;
    want("elementwise output", output, s.output.iter().product())?;
    let at =
        |st: &[usize; 4], i: [usize; 4]| i[0] * st[0] + i[1] * st[1] + i[2] * st[2] + i[3] * st[3];
    let [d0, d1, d2, d3] = s.output;
    let mut o = 0;
    for i0 in 0..d0 {
        for i1 in 0..d1 {
            for i2 in 0..d2 {
                for i3 in 0..d3 {
                    let i = [i0, i1, i2, i3];
                    let (a, b) = (at(&s.first, i), at(&s.second, i));
                    if a >= first.len() || b >= second.len() {
                        return Err(Error::Parameters {
                            what: "elementwise input",
                            problem: "a broadcast stride reaches past the input",
                        });
                    }
                    output[o] = f(int8(first[a]), int8(second[b]));
                    o += 1;
                }
            }
        }
    }
    Ok(())
}

/// ADD: both inputs rescaled to a common scale with `left_shift` bits of headroom,
/// summed, and rescaled to the output.
pub fn add(p: &Add, first: &[u8], second: &[u8], output: &mut [u8]) -> Result<(), Error> {
    let scale = |x: i32, offset: i32, [m, s]: [i32; 2]| {
        multiply_by_quantized_multiplier((x + offset).wrapping_mul(1 << p.left_shift.min(30)), m, s)
    };
    each(&p.shape, first, second, output, |a, b| {
        let sum =
            scale(a, p.first_offset, p.first).wrapping_add(scale(b, p.second_offset, p.second));
        let v = multiply_by_quantized_multiplier(sum, p.output[0], p.output[1])
            .wrapping_add(p.output_offset);
        v.clamp(p.activation[0], p.activation[1]) as i8 as u8
    })
}

/// MUL: the product of the offset inputs, rescaled to the output.
pub fn mul(p: &Mul, first: &[u8], second: &[u8], output: &mut [u8]) -> Result<(), Error> {
    each(&p.shape, first, second, output, |a, b| {
        let product = (a + p.first_offset).wrapping_mul(b + p.second_offset);
        let v = multiply_by_quantized_multiplier(product, p.output[0], p.output[1])
            .wrapping_add(p.output_offset);
        v.clamp(p.activation[0], p.activation[1]) as i8 as u8
    })
}
