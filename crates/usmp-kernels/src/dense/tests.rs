//! FULLY_CONNECTED's fast path (a 1x1 convolution's blocked product) against TFLite
//! Micro's reference loop, on thousands of random shapes.

extern crate std;
use super::{as_pointwise, fully_connected, general};
use crate::conv::fast::tests::requantized;
use crate::overlap::tests::Rng;
use crate::params::{FullyConnected, PRODUCT_MACS};
use std::vec::Vec;

/// `fully_connected` equals the reference loop byte for byte on 3,000 random calls:
/// 1-4 rows, depths and output counts on both sides of the blocks of four and the pieces
/// of 16 (past Helium's 64 channels too), and small calls, offsets, activation ranges, with and without a
/// bias, per-tensor or per-output lists; a quarter in the form TFLite writes (per-output
/// right shifts, small biases, int8's clamp), which the DSP's and Helium's row
/// requantization take. The packed form (the Cortex-M4's and M7's, here with portable
/// lanes) and Helium's (its portable form) run on each too; a filter with a zero point,
/// and calls too small to pay for the product's code, keep the reference loop.
#[test]
fn fully_connected_equals_the_reference_loop() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let (mut fast, mut helium) = (0, 0);
    for case in 0..3000 {
        // Mostly calls the product takes (past Helium's 64 channels now and then), an
        // eighth small ones that keep the loop.
        let (batches, depth, outputs) = if case % 8 == 0 {
            (1 + rng.below(4), 1 + rng.below(16), 1 + rng.below(8))
        } else {
            let most = if case % 10 == 0 { 150 } else { 60 };
            (1 + rng.below(4), 8 + rng.below(400), 4 + rng.below(most))
        };
        let mut bytes = |n: usize| -> Vec<u8> { (0..n).map(|_| rng.below(256) as u8).collect() };
        let input = bytes(batches * depth);
        let filter = bytes(outputs * depth);
        let mut bias = bytes(4 * outputs);
        let tflite = case % 4 == 0;
        let (multipliers, shifts, activation) = requantized(&mut rng, outputs, tflite, &mut bias);
        let p = FullyConnected {
            batches,
            depth,
            outputs,
            bias: tflite || rng.below(2) == 0,
            input_offset: rng.below(256) as i32 - 127,
            filter_offset: if rng.below(10) == 0 {
                rng.below(256) as i32 - 128
            } else {
                0
            },
            output_offset: rng.below(256) as i32 - 128,
            activation,
            multipliers: &multipliers,
            shifts: &shifts,
        };
        let mut reference = std::vec![0u8; batches * outputs];
        general(&p, &input, &filter, &bias, &mut reference);
        let mut out = std::vec![0u8; reference.len()];
        fully_connected(
            &p,
            &input,
            &filter,
            &bias,
            &mut out,
            &mut crate::work::tests::any(),
        )
        .unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(out, reference, "case {case}: {p:?}");
        let Some(conv) = as_pointwise(&p) else {
            let small = depth < 8 || outputs < 4 || depth * outputs < PRODUCT_MACS;
            assert!(p.filter_offset != 0 || small, "case {case}");
            continue;
        };
        fast += 1;
        let mut packed = std::vec![0u8; reference.len()];
        let work = &mut crate::work::tests::any();
        crate::conv::packed::conv_1x1(&conv, &input, &filter, &bias, &mut packed, work);
        assert_eq!(packed, reference, "case {case}, packed: {p:?}");
        let mut vectors = std::vec![0u8; reference.len()];
        let put = &mut |o: usize, v: u8| vectors[o] = v;
        if crate::conv::helium::conv_1x1(
            &conv,
            &input,
            &filter,
            &bias,
            put,
            &mut crate::work::tests::any(),
        ) {
            assert_eq!(vectors, reference, "case {case}, Helium's: {p:?}");
            helium += 1;
        }
    }
    // Not vacuous: most calls take the product, and Helium's takes those of TFLite's form
    // up to its 256 inputs and outputs.
    assert!(fast > 1200, "{fast}");
    assert!(helium > 70, "{helium}");
}
