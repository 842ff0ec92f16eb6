//! Pooling's loops (a window's span once per output pixel, four channels folded at a
//! time) against TensorFlow Lite Micro's reference loops as written there: every output
//! element on its own, the window clipped by filter-start and filter-end indices.

extern crate std;
use super::{
    Average, Fold, Max, average_pool2d, average_pool2d_f32, max_pool2d, max_pool2d_f32, pool_int8,
};
use crate::Error;
use crate::bytes::clamp_f32;
use crate::overlap::apart;
use crate::overlap::tests::Rng;
use crate::params::{Float, Pool};
use std::vec::Vec;

/// TFLite's reference pooling of one output element `(b, oy, ox, c)`: the cells its
/// window covers inside the input, in filter order (rows, then columns).
fn cells(p: &Pool, [b, oy, ox, c]: [usize; 4]) -> Vec<usize> {
    let [_, in_h, in_w, depth] = p.input;
    let origin_y = (oy * p.stride[0]) as isize - p.padding[0] as isize;
    let origin_x = (ox * p.stride[1]) as isize - p.padding[1] as isize;
    let fy_start = (-origin_y).max(0);
    let fy_end = (p.window[0] as isize).min(in_h as isize - origin_y);
    let fx_start = (-origin_x).max(0);
    let fx_end = (p.window[1] as isize).min(in_w as isize - origin_x);
    let mut at = Vec::new();
    for fy in fy_start..fy_end {
        for fx in fx_start..fx_end {
            let (y, x) = ((origin_y + fy) as usize, (origin_x + fx) as usize);
            at.push(((b * in_h + y) * in_w + x) * depth + c);
        }
    }
    at
}

/// Every output element's index, in NHWC order.
fn outputs(p: &Pool) -> impl Iterator<Item = [usize; 4]> {
    let [n, h, w, c] = p.output;
    (0..n).flat_map(move |b| {
        (0..h).flat_map(move |y| (0..w).flat_map(move |x| (0..c).map(move |k| [b, y, x, k])))
    })
}

/// `AveragePool` (int8) of TFLite Micro's reference: `None` where a window is empty (the
/// kernel fails the call there).
fn average_reference(p: &Pool, input: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for o in outputs(p) {
        let at = cells(p, o);
        let count = at.len() as i32;
        if count == 0 {
            return None;
        }
        let sum: i32 = at.iter().map(|&i| i32::from(input[i] as i8)).sum();
        let v = if sum > 0 {
            (sum + count / 2) / count
        } else {
            (sum - count / 2) / count
        };
        out.push(v.clamp(p.activation[0], p.activation[1]) as i8 as u8);
    }
    Some(out)
}

/// `MaxPool` (int8) of TFLite Micro's reference.
fn max_reference(p: &Pool, input: &[u8]) -> Vec<u8> {
    let max = |o| {
        let cells = cells(p, o).into_iter().map(|i| i32::from(input[i] as i8));
        cells.fold(-128, i32::max)
    };
    let clamp = |v: i32| v.clamp(p.activation[0], p.activation[1]) as i8 as u8;
    outputs(p).map(|o| clamp(max(o))).collect()
}

/// The float32 forms: the float sum over the float count; `std::max` from the lowest
/// float. Then the activation's clamp.
fn float_reference(p: &Float<'_, Pool>, input: &[f32], average: bool) -> Vec<f32> {
    let one = |o| {
        let cells = cells(p.shape, o).into_iter().map(|i| input[i]);
        if average {
            let (sum, count) = cells.fold((0.0f32, 0.0f32), |(s, n), v| (s + v, n + 1.0));
            sum / count
        } else {
            cells.fold(f32::MIN, |m, v| if m < v { v } else { m })
        }
    };
    outputs(p.shape)
        .map(|o| clamp_f32(one(o), p.activation))
        .collect()
}

/// A random pooling: batches, sizes, windows up to 5x5 (some larger than the input),
/// strides, paddings (now and then as large as the window: empty windows), depths on both sides
/// of the blocks of four, activation ranges.
fn shapes(rng: &mut Rng) -> Pool {
    let window = [1 + rng.below(5), 1 + rng.below(5)];
    let stride = [1 + rng.below(3), 1 + rng.below(3)];
    // Now and then a padding as large as the window, so some windows are empty.
    let most = |w: usize, rng: &mut Rng| if rng.below(8) == 0 { w + 1 } else { w };
    let padding = [0, 1].map(|k| {
        let m = most(window[k], rng);
        rng.below(m)
    });
    let input = [
        1 + rng.below(2),
        1 + rng.below(9),
        1 + rng.below(9),
        1 + rng.below(21),
    ];
    let size = |k: usize| (input[k + 1] + 2 * padding[k]).saturating_sub(window[k]) / stride[k] + 1;
    let low = -128 + rng.below(100) as i32;
    Pool {
        input,
        output: [input[0], size(0), size(1), input[3]],
        window,
        stride,
        padding,
        activation: [low, low + rng.below((128 - low) as usize) as i32],
    }
}

/// An int8 fold with its four channels folded by the generic loop, not the DSP's lanes
/// (what the cores without the extension run; the host's own calls take the lanes' Rust
/// form).
#[derive(Clone, Copy)]
struct Plain<F>(F);

impl<F: Fold<i32>> Fold<i32> for Plain<F> {
    type Acc = F::Acc;
    const START: F::Acc = F::START;

    fn step(acc: F::Acc, v: i32) -> F::Acc {
        F::step(acc, v)
    }

    fn finish(acc: F::Acc, count: i32) -> Result<i32, Error> {
        F::finish(acc, count)
    }
}

/// AVERAGE_POOL_2D and MAX_POOL_2D (int8) equal TFLite's reference loops on 3,000
/// random calls each, failing where the reference fails (a window wholly in padding):
/// through the DSP's lanes (their Rust form) and through the generic loop.
#[test]
fn int8_pooling_equals_the_reference_loops() {
    let mut rng = Rng(0x6A09_E667_F3BC_C908);
    let (mut averaged, mut refused) = (0, 0);
    for case in 0..3000 {
        let p = shapes(&mut rng);
        let n: usize = p.input.iter().product();
        let input: Vec<u8> = (0..n).map(|_| rng.below(256) as u8).collect();
        let mut out = std::vec![0; p.output.iter().product()];

        max_pool2d(&p, &input, &mut out).unwrap();
        assert_eq!(out, max_reference(&p, &input), "case {case}: {p:?}");
        pool_int8::<Plain<Max>, u8>(&p, ["i", "o"], &input, apart(&mut out)).unwrap();
        assert_eq!(out, max_reference(&p, &input), "case {case}: {p:?}");

        let got = average_pool2d(&p, &input, &mut out);
        match average_reference(&p, &input) {
            Some(want) => {
                got.unwrap();
                assert_eq!(out, want, "case {case}: {p:?}");
                let plain = pool_int8::<Plain<Average>, u8>;
                plain(&p, ["i", "o"], &input, apart(&mut out)).unwrap();
                assert_eq!(out, want, "case {case}: {p:?}");
                averaged += 1;
            }
            None => {
                assert!(got.is_err(), "case {case}: {p:?}");
                refused += 1;
            }
        }
    }
    // Both outcomes were drawn often.
    assert!(averaged > 2500 && refused > 50, "{averaged} {refused}");
}

/// The float32 forms equal the reference on 1,000 random calls each: the same sums in the
/// same order (bit for bit), NaN cells kept where `std::max` keeps them.
#[test]
fn float_pooling_equals_the_reference_loops() {
    let mut rng = Rng(0xBB67_AE85_84CA_A73B);
    for case in 0..1000 {
        let shape = shapes(&mut rng);
        let p = Float {
            shape: &shape,
            activation: if case % 2 == 0 {
                [-1.5, 2.0]
            } else {
                [f32::MIN, f32::MAX]
            },
        };
        let n: usize = shape.input.iter().product();
        let values: Vec<f32> = (0..n)
            .map(|_| match rng.below(50) {
                0 => f32::NAN,
                _ => (rng.below(2001) as f32 - 1000.0) / 317.0,
            })
            .collect();
        let input: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = std::vec![0; 4 * shape.output.iter().product::<usize>()];
        for average in [false, true] {
            if average {
                average_pool2d_f32(&p, &input, &mut out).unwrap();
            } else {
                max_pool2d_f32(&p, &input, &mut out).unwrap();
            }
            let want = float_reference(&p, &values, average);
            let got = out
                .chunks(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            for (k, (g, w)) in got.zip(want).enumerate() {
                assert_eq!(
                    g.to_bits(),
                    w.to_bits(),
                    "case {case} element {k}: {shape:?}"
                );
            }
        }
    }
}
