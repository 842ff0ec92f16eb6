//! The int8 convolutions' checks of their parameters and taps.

extern crate std;
use super::taps;
use crate::params::Conv;
use std::vec::Vec;

/// A multiplier of -2^31 (the one whose doubling multiply saturates, which the
/// requantization does not test for) is refused by every int8 convolution, 1x1 and
/// general, before anything is written.
#[test]
fn a_multiplier_of_minus_two_to_the_31_is_refused() {
    for f in [1, 3] {
        let p = Conv {
            input: [1, 3, 3, 4],
            filter: [4, f, f, 4],
            output: [1, 3, 3, 4],
            stride: [1, 1],
            dilation: [1, 1],
            padding: [f / 2, f / 2],
            depth_multiplier: 1,
            input_offset: 0,
            output_offset: 0,
            activation: [-128, 127],
            bias: false,
            multipliers: &[1 << 30, i32::MIN, 1 << 30, 1 << 30],
            shifts: &[0; 4],
        };
        let (input, filter) = ([1u8; 36], std::vec![1u8; 16 * f * f]);
        let mut output = [7u8; 36];
        let refused = super::conv2d(
            &p,
            &input,
            &filter,
            &[],
            &mut output,
            &mut crate::work::tests::any(),
        );
        assert!(
            matches!(refused, Err(crate::Error::Parameters { problem, .. }) if problem.contains("-2^31")),
            "{refused:?}"
        );
        assert_eq!(output, [7u8; 36], "nothing written");
    }
}

/// The range is exactly the taps whose input row is inside the input, for every
/// small stride, dilation, padding, size and filter.
#[test]
fn taps_are_those_inside_the_input() {
    for stride in 1..4 {
        for dilation in 1..4 {
            for pad in 0..5 {
                for size in 1..7 {
                    for filter in 1..6 {
                        for out in 0..8 {
                            let inside: Vec<usize> = (0..filter)
                                .filter(|&k| {
                                    let row = out * stride + k * dilation;
                                    row >= pad && row - pad < size
                                })
                                .collect();
                            let got: Vec<usize> =
                                taps(out, stride, dilation, pad, size, filter).collect();
                            assert_eq!(
                                got, inside,
                                "out {out} stride {stride} dilation {dilation} pad {pad} size {size} filter {filter}"
                            );
                        }
                    }
                }
            }
        }
    }
}
