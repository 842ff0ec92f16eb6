//! ADD and MUL (one loop where nothing is broadcast, one rounding where the call's
//! multipliers allow it) against TensorFlow Lite Micro's reference as written there:
//! `BroadcastAdd4DSlow` / `BroadcastMul4DSlow`, each element's inputs found through the
//! broadcast strides, each rescaling by `MultiplyByQuantizedMultiplier` in two steps.

extern crate std;
use super::{add, mul};
use crate::fixed::multiply_by_quantized_multiplier;
use crate::overlap::tests::Rng;
use crate::params::{Add, Broadcast, Mul};
use std::vec::Vec;

/// Output element `i`'s two inputs, by the strides.
fn inputs(s: &Broadcast, first: &[u8], second: &[u8]) -> Vec<(u8, u8)> {
    let [d0, d1, d2, d3] = s.output;
    let mut out = Vec::new();
    for i0 in 0..d0 {
        for i1 in 0..d1 {
            for i2 in 0..d2 {
                for i3 in 0..d3 {
                    let at = |st: [usize; 4]| i0 * st[0] + i1 * st[1] + i2 * st[2] + i3 * st[3];
                    out.push((first[at(s.first)], second[at(s.second)]));
                }
            }
        }
    }
    out
}

/// TFLite's `AddElementwise` for one int8 pair, as written there.
pub(crate) fn add_one(p: &Add, a: u8, b: u8) -> u8 {
    let scaled = |x: u8, offset: i32, [m, s]: [i32; 2]| {
        let shifted = (i32::from(x as i8) + offset) * (1 << p.left_shift);
        multiply_by_quantized_multiplier(shifted, m, s)
    };
    // Sums wrap as int32 does on the cores (only scales no model has reach them).
    let sum = scaled(a, p.first_offset, p.first).wrapping_add(scaled(b, p.second_offset, p.second));
    let [m, s] = p.output;
    let v = multiply_by_quantized_multiplier(sum, m, s).wrapping_add(p.output_offset);
    v.clamp(p.activation[0], p.activation[1]) as i8 as u8
}

/// TFLite's `MulElementwise` for one int8 pair, as written there.
pub(crate) fn mul_one(p: &Mul, a: u8, b: u8) -> u8 {
    let product = (i32::from(a as i8) + p.first_offset) * (i32::from(b as i8) + p.second_offset);
    let [m, s] = p.output;
    let v = multiply_by_quantized_multiplier(product, m, s).wrapping_add(p.output_offset);
    v.clamp(p.activation[0], p.activation[1]) as i8 as u8
}

/// TFLite's `BroadcastAdd4DSlow` for int8.
fn add_reference(p: &Add, first: &[u8], second: &[u8]) -> Vec<u8> {
    let each = |(a, b)| add_one(p, a, b);
    inputs(&p.shape, first, second)
        .into_iter()
        .map(each)
        .collect()
}

/// TFLite's `BroadcastMul4DSlow` for int8.
fn mul_reference(p: &Mul, first: &[u8], second: &[u8]) -> Vec<u8> {
    let each = |(a, b)| mul_one(p, a, b);
    inputs(&p.shape, first, second)
        .into_iter()
        .map(each)
        .collect()
}

/// Output dimensions and each input's strides: an input is broadcast along a dimension
/// (stride 0, size 1 there) where `rng` says, in half of the calls along none.
fn shapes(rng: &mut Rng) -> Broadcast {
    let output = [
        1 + rng.below(2),
        1 + rng.below(5),
        1 + rng.below(6),
        1 + rng.below(9),
    ];
    let plain = rng.below(2) == 0;
    let mut strides = || {
        let (mut st, mut step) = ([0; 4], 1);
        for k in (0..4).rev() {
            if plain || rng.below(3) != 0 {
                st[k] = step;
                step *= output[k];
            }
        }
        (st, step)
    };
    let ((first, first_elements), (second, second_elements)) = (strides(), strides());
    Broadcast {
        output,
        first,
        second,
        first_elements,
        second_elements,
    }
}

/// A multiplier and shift: as TFLite's scales give them (`[2^30, 2^31)`, right shifts)
/// three times in four, anything else (left shifts, small and negative multipliers,
/// `-2^31`, which keeps the two-step form) otherwise.
fn scale(rng: &mut Rng, most_right: usize) -> [i32; 2] {
    if rng.below(4) != 0 {
        let m = (1 << 30) + rng.below(1 << 30) as i32;
        return [m, -(rng.below(most_right) as i32) - 1];
    }
    let m = match rng.below(8) {
        0 => i32::MIN,
        _ => (rng.below(1 << 32) as u32) as i32,
    };
    [m, rng.below(62) as i32 - 31]
}

/// The offsets, output offset and activation range of a call.
fn offsets(rng: &mut Rng) -> [i32; 5] {
    let offset = |rng: &mut Rng| rng.below(256) as i32 - 128;
    let low = -128 + rng.below(120) as i32;
    let high = low + rng.below((128 - low) as usize) as i32;
    [offset(rng), offset(rng), offset(rng), low, high]
}

/// ADD and MUL equal TFLite's reference byte for byte on 3,000 random calls each:
/// broadcast or not, TFLite's scales and others (one rounding taken where they allow,
/// the two-step form kept for `-2^31`; ADDs and MULs of TFLite's form that broadcast
/// nothing by the vector path's blocks, up to 540 elements).
#[test]
fn add_and_mul_equal_the_reference() {
    let mut rng = Rng(0x3C6E_F372_FE94_F82B);
    let (mut plain, mut one_rounding, mut vectors) = (0, 0, 0);
    let mut buffer = Vec::new();
    for case in 0..3000 {
        let shape = shapes(&mut rng);
        let bytes =
            |rng: &mut Rng, n: usize| -> Vec<u8> { (0..n).map(|_| rng.below(256) as u8).collect() };
        let first = bytes(&mut rng, shape.first_elements);
        let second = bytes(&mut rng, shape.second_elements);
        let n: usize = shape.output.iter().product();
        let mut out = std::vec![0; n];
        plain += usize::from(shape.first_elements == n && shape.second_elements == n);

        let [a, b, o, low, high] = offsets(&mut rng);
        let p = Add {
            shape,
            first_offset: a,
            second_offset: b,
            left_shift: 20,
            first: scale(&mut rng, 12),
            second: scale(&mut rng, 12),
            output: scale(&mut rng, 31),
            output_offset: o,
            activation: [low, high],
        };
        one_rounding += usize::from(p.rescaled());
        let broadcast = shape.first_elements < n || shape.second_elements < n;
        vectors += usize::from(!broadcast && crate::dsp::sums::Row::add(&p).is_some());
        // Exactly the work a plan for Helium gives the call.
        let need = crate::work::bytes(&crate::Kernel::Add(&p), crate::work::Path::Helium);
        let work = crate::work::tests::exactly(&mut buffer, need);
        add(&p, &first, &second, &mut out, work).unwrap();
        assert_eq!(
            out,
            add_reference(&p, &first, &second),
            "case {case}: {p:?}"
        );

        let [a, b, o, low, high] = offsets(&mut rng);
        let p = Mul {
            shape,
            first_offset: a,
            second_offset: b,
            output: scale(&mut rng, 31),
            output_offset: o,
            activation: [low, high],
        };
        vectors += usize::from(!broadcast && crate::dsp::sums::Row::mul(&p).is_some());
        let need = crate::work::bytes(&crate::Kernel::Mul(&p), crate::work::Path::Helium);
        let work = crate::work::tests::exactly(&mut buffer, need);
        mul(&p, &first, &second, &mut out, work).unwrap();
        assert_eq!(
            out,
            mul_reference(&p, &first, &second),
            "case {case}: {p:?}"
        );
    }
    // Both loops, both roundings and the vector path's blocks (here its arithmetic in
    // Rust) ran often.
    assert!(
        plain > 1200 && one_rounding > 1000 && vectors > 1000,
        "{plain} {one_rounding} {vectors}"
    );
}
