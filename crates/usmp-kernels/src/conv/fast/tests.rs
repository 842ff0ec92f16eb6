//! The fast paths against the general loops, on thousands of random shapes each.

extern crate std;
use super::super::{apart, conv2d, depthwise_conv2d, int8_loops};
use crate::overlap::tests::Rng;
use crate::params::Conv;
use crate::rows::Frame;
use std::vec::Vec;

/// Multipliers in [2^30, 2^31) and right shifts up to 11: one, or one per channel.
pub(crate) fn requantization(rng: &mut Rng, channels: usize) -> (Vec<i32>, Vec<i32>) {
    let lists = if rng.below(2) == 0 { 1 } else { channels };
    let multipliers = (0..lists)
        .map(|_| (1 << 30) + rng.below(1 << 30) as i32)
        .collect();
    let shifts = (0..lists).map(|_| -(rng.below(12) as i32)).collect();
    (multipliers, shifts)
}

/// A call's requantization drawn at random: multipliers and shifts as [`requantization`]
/// gives them and a clamp inside int8; or, with `tflite`, in the form every TFLite
/// convolution has (and Helium's and the DSP's row requantization take): per-channel lists
/// of right shifts, int8's clamp, and a small bias written into `bias`.
pub(crate) fn requantized(
    rng: &mut Rng,
    channels: usize,
    tflite: bool,
    bias: &mut [u8],
) -> (Vec<i32>, Vec<i32>, [i32; 2]) {
    let (mut multipliers, mut shifts) = requantization(rng, channels);
    let lo = rng.below(256) as i32 - 128;
    let mut activation = [lo, lo + rng.below((128 - lo) as usize) as i32];
    if tflite {
        activation = [-128, 127];
        shifts = (0..channels).map(|_| -1 - rng.below(20) as i32).collect();
        multipliers = (0..channels)
            .map(|_| (1 << 30) + rng.below(1 << 30) as i32)
            .collect();
        for b in bias.chunks_exact_mut(4) {
            b.copy_from_slice(&(rng.below(1 << 13) as i32 - (1 << 12)).to_le_bytes());
        }
    }
    (multipliers, shifts, activation)
}

/// The 1x1 fast path (and its packed form, the one Cortex-M4 and M7 run, here with
/// portable lanes) equals the general loops byte for byte on 3,000 random shapes
/// (channel counts on both sides of the blocks of four, depths on both sides of the
/// words of four), offsets, activation ranges, biases and per-tensor or per-channel
/// multipliers and shifts.
#[test]
fn one_by_one_convolutions_equal_the_general_loops() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut fast_ones, mut helium) = (0, 0);
    for case in 0..3000 {
        // Now and then past the 64 channels an odd pixel's packed run (and Helium's
        // block of sums) takes at once, and past many pieces of 16.
        let most = if case % 10 == 0 { 150 } else { 19 };
        let deepest = if case % 20 == 0 { 200 } else { 40 };
        let (depth, channels) = (1 + rng.below(deepest), 1 + rng.below(most));
        let (batches, h, w) = (1 + rng.below(2), 1 + rng.below(5), 1 + rng.below(5));
        let mut bytes = |n: usize| -> Vec<u8> { (0..n).map(|_| rng.below(256) as u8).collect() };
        let input = bytes(batches * h * w * depth);
        let filter = bytes(channels * depth);
        let mut bias = bytes(4 * channels);
        // A quarter in the form every TFLite convolution has (and Helium's path takes).
        let tflite = case % 4 == 0;
        let (multipliers, shifts, activation) = requantized(&mut rng, channels, tflite, &mut bias);
        let p = Conv {
            input: [batches, h, w, depth],
            filter: [channels, 1, 1, depth],
            output: [batches, h, w, channels],
            stride: [1, 1],
            dilation: [1 + rng.below(2), 1],
            padding: [0, 0],
            depth_multiplier: 1,
            input_offset: rng.below(256) as i32 - 127,
            output_offset: rng.below(256) as i32 - 128,
            activation,
            bias: tflite || rng.below(2) == 0,
            multipliers: &multipliers,
            shifts: &shifts,
        };
        fast_ones += usize::from(super::pointwise(&p));
        let mut fast = std::vec![0u8; batches * h * w * channels];
        let mut general = fast.clone();
        conv2d(
            &p,
            &input,
            &filter,
            &bias,
            &mut fast,
            &mut crate::work::tests::any(),
        )
        .unwrap_or_else(|e| panic!("{case}: {e}"));
        int8_loops::<false, _, _, _>(
            &p,
            &Frame::whole(p.output),
            &input,
            &filter,
            &bias,
            apart(&mut general).1,
        )
        .unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(fast, general, "case {case}: {p:?}");
        let mut packed = std::vec![0u8; fast.len()];
        let work = &mut crate::work::tests::any();
        super::super::packed::conv_1x1(&p, &input, &filter, &bias, &mut packed, work);
        assert_eq!(packed, general, "case {case}, packed: {p:?}");
        for packed in [false, true] {
            let mut out = std::vec![0u8; fast.len()];
            let put = &mut |o: usize, v: u8| out[o] = v;
            if packed {
                super::conv_1x1::<true, u8>(&p, &input, &filter, &bias, put);
            } else {
                super::conv_1x1::<false, u8>(&p, &input, &filter, &bias, put);
            }
            assert_eq!(out, general, "case {case}, words {packed}: {p:?}");
        }
        let mut out = std::vec![0u8; fast.len()];
        let put = &mut |o: usize, v: u8| out[o] = v;
        // With exactly the work the plan gives it; one byte less, it declines.
        let need = super::super::helium::work_bytes(&p);
        let taken = crate::work::tests::exactly_enough(need, |work| {
            super::super::helium::conv_1x1(&p, &input, &filter, &bias, put, work)
        });
        if taken {
            assert_eq!(out, general, "case {case}, Helium's: {p:?}");
            helium += 1;
        }
    }
    assert_eq!(fast_ones, 3000, "every case takes the fast path");
    assert_eq!(
        helium, 750,
        "Helium's path takes every call of TFLite's form"
    );
}

/// A random DEPTHWISE_CONV_2D call and its operands: `c` input channels of depth
/// multiplier `m`, filters up to `most_filter`, inputs up to `most_size` (rows,
/// columns), strides and dilations of 1 or 2, any padding inside the filter.
struct Depthwise {
    shape: [[usize; 4]; 3],
    stride: [usize; 2],
    dilation: [usize; 2],
    padding: [usize; 2],
    m: usize,
    input: Vec<u8>,
    filter: Vec<u8>,
    bias: Vec<u8>,
    multipliers: Vec<i32>,
    shifts: Vec<i32>,
    offsets: [i32; 2],
    activation: [i32; 2],
    with_bias: bool,
}

impl Depthwise {
    fn random(
        rng: &mut Rng,
        (c, m): (usize, usize),
        most_filter: [usize; 2],
        most_size: [usize; 2],
    ) -> Depthwise {
        let (f_h, f_w) = (1 + rng.below(most_filter[0]), 1 + rng.below(most_filter[1]));
        let (sy, sx) = (1 + rng.below(2), 1 + rng.below(2));
        let (dy, dx) = (1 + rng.below(2), 1 + rng.below(2));
        let (h, w) = (1 + rng.below(most_size[0]), 1 + rng.below(most_size[1]));
        let (py, px) = (rng.below(f_h), rng.below(f_w));
        let size = |n: usize, f: usize, s: usize, d: usize, pad: usize| {
            (n + 2 * pad).saturating_sub(d * (f - 1) + 1) / s + 1
        };
        let (out_h, out_w) = (size(h, f_h, sy, dy, py), size(w, f_w, sx, dx, px));
        let mut bytes = |n: usize| -> Vec<u8> { (0..n).map(|_| rng.below(256) as u8).collect() };
        let input = bytes(h * w * c);
        let filter = bytes(f_h * f_w * c * m);
        let bias = bytes(4 * c * m);
        let (multipliers, shifts) = requantization(rng, c * m);
        let lo = rng.below(256) as i32 - 128;
        let offsets = [rng.below(256) as i32 - 127, rng.below(256) as i32 - 128];
        Depthwise {
            shape: [[1, h, w, c], [1, f_h, f_w, c * m], [1, out_h, out_w, c * m]],
            stride: [sy, sx],
            dilation: [dy, dx],
            padding: [py, px],
            m,
            input,
            filter,
            bias,
            multipliers,
            shifts,
            offsets,
            activation: [lo, lo + rng.below((128 - lo) as usize) as i32],
            with_bias: rng.below(2) == 0,
        }
    }

    fn conv(&self) -> Conv<'_> {
        Conv {
            input: self.shape[0],
            filter: self.shape[1],
            output: self.shape[2],
            stride: self.stride,
            dilation: self.dilation,
            padding: self.padding,
            depth_multiplier: self.m,
            input_offset: self.offsets[0],
            output_offset: self.offsets[1],
            activation: self.activation,
            bias: self.with_bias,
            multipliers: &self.multipliers,
            shifts: &self.shifts,
        }
    }

    /// The fast path's output and the general loops'.
    fn both(&self, case: usize) -> (Vec<u8>, Vec<u8>) {
        let (p, [_, out_h, out_w, c]) = (self.conv(), self.shape[2]);
        let mut fast = std::vec![0u8; out_h * out_w * c];
        let mut general = fast.clone();
        let (x, w, b) = (&self.input, &self.filter, &self.bias);
        depthwise_conv2d(&p, x, w, b, &mut fast, &mut crate::work::tests::any())
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        int8_loops::<true, _, _, _>(&p, &Frame::whole(p.output), x, w, b, apart(&mut general).1)
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        (fast, general)
    }
}

/// DEPTHWISE_CONV_2D of depth multiplier 2 to 9 equals the general loops byte for byte
/// on 1,000 random shapes: filters up to 10x8 (micro_speech's), strides, dilations,
/// paddings, 1 to 3 input channels, quantization as above.
#[test]
fn depthwise_by_multiplier_equals_the_general_loops() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for case in 0..1000 {
        let (c, m) = (1 + rng.below(3), 2 + rng.below(8));
        let d = Depthwise::random(&mut rng, (c, m), [10, 8], [12, 10]);
        let p = d.conv();
        assert!(p.several_at_a_time());
        let (fast, general) = d.both(case);
        assert_eq!(fast, general, "case {case}: {p:?}");
        // The form Cortex-M4 and M7 run, here with portable lanes, and the other.
        for packed in [true, false] {
            let mut out = std::vec![0u8; fast.len()];
            let put = &mut |o: usize, v: u8| out[o] = v;
            let (x, w, b) = (&d.input[..], &d.filter[..], &d.bias[..]);
            let need = super::multiplier_work_bytes(&p, packed);
            let taken = crate::work::tests::exactly_enough(need, |work| match packed {
                true => super::depthwise_by_multiplier::<true, u8>(&p, x, w, b, put, work),
                false => super::depthwise_by_multiplier::<false, u8>(&p, x, w, b, put, work),
            });
            assert!(taken, "case {case}: {p:?}");
            assert_eq!(out, general, "case {case}, packed {packed}: {p:?}");
        }
    }
}

/// DEPTHWISE_CONV_2D of depth multiplier 1 four channels at a time equals the general
/// loops byte for byte on 3,000 random shapes: strides, dilations, paddings (inside and
/// past the input's edge), filters up to 4x4, channel counts on both sides of the
/// blocks of four, quantization as above.
#[test]
fn depthwise_by_four_equals_the_general_loops() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let mut four = 0;
    for case in 0..3000 {
        // Past one group of accumulators in one case of ten.
        let c = 1 + rng.below(if case % 10 == 0 { 150 } else { 19 });
        let d = Depthwise::random(&mut rng, (c, 1), [4, 4], [7, 7]);
        let p = d.conv();
        four += usize::from(p.four_at_a_time());
        let (fast, general) = d.both(case);
        let mut packed = std::vec![0u8; fast.len()];
        let put = &mut |o: usize, v: u8| packed[o] = v;
        let need = super::super::depthwise::work_bytes(&p);
        let taken = crate::work::tests::exactly_enough(need, |work| {
            let (frame, x, w, b) = (&Frame::whole(p.output), &d.input, &d.filter, &d.bias);
            super::super::depthwise::by_four::<true, u8, _, _>(&p, frame, x, w, b, put, work)
        });
        assert!(taken, "case {case}: {p:?}");
        assert_eq!(fast, general, "case {case}: {p:?}");
        assert_eq!(packed, general, "case {case}, packed: {p:?}");
    }
    assert_eq!(four, 3000, "every case runs four at a time");
}

impl Depthwise {
    /// In the form every convolution TFLite writes has (which Helium's paths take): a
    /// small bias, per-channel lists of right shifts, int8's clamp; outputs that vary.
    fn tflite_form(mut self, rng: &mut Rng) -> Self {
        let channels = self.shape[2][3];
        self.multipliers = (0..channels)
            .map(|_| (1 << 30) + rng.below(1 << 30) as i32)
            .collect();
        self.shifts = (0..channels).map(|_| -3 - rng.below(12) as i32).collect();
        self.bias = (0..channels)
            .flat_map(|_| (rng.below(4001) as i32 - 2000).to_le_bytes())
            .collect();
        (self.activation, self.with_bias) = ([-128, 127], true);
        self
    }
}

/// Helium's DEPTHWISE_CONV_2D (its portable form here) equals the general loops byte for
/// byte on 2,000 random shapes in TFLite's form: output channels dividing sixteen or
/// multiples of it (and others, which it declines), depth multipliers 1, 2, 4, 8 (and 3,
/// declined), strides, dilations, paddings inside and past the edge, filters up to 4x4
/// and up to 10x8, rows both longer and shorter than a chunk; each taken call again on one or two rows
/// through rings, as a streamed stage runs it ([`in_rings`]).
#[test]
fn heliums_depthwise_equals_the_general_loops() {
    let mut rng = Rng(0x6A09_E667_F3BC_C908);
    let (mut taken, mut several_pixels, mut multiplied, mut wide) = (0, 0, 0, 0);
    for case in 0..2000 {
        let c = [1, 2, 4, 8, 16, 32, 48, 64, 3, 24][rng.below(10)];
        // A multiplier above 1 for a few input channels, now and then.
        let (c, m) = match rng.below(3) {
            0 => ([1, 2, 4, 3][rng.below(4)], [2, 4, 8, 3][rng.below(4)]),
            _ => (c, 1),
        };
        // In one case of five, micro_speech's kind: a multiplier of 2 to 8 for one or two
        // input channels, filters up to 10x8 (past the small lists).
        let large = case % 5 == 0;
        let (c, m) = match large {
            true => (1 + rng.below(2), [2, 4, 8][rng.below(3)]),
            false => (c, m),
        };
        let most = if large { [10, 8] } else { [4, 4] };
        let d = Depthwise::random(&mut rng, (c, m), most, [12, 12]).tflite_form(&mut rng);
        let p = d.conv();
        let (_, general) = d.both(case);
        let mut out = std::vec![0u8; general.len()];
        let put = &mut |o: usize, v: u8| out[o] = v;
        let frame = Frame::whole(p.output);
        let out_c = c * m;
        let need = super::super::chunked::work_bytes(&p);
        let (w, b) = (&d.filter, &d.bias);
        let done = crate::work::tests::exactly_enough(need, |work| {
            super::super::chunked::depthwise(&p, &frame, &d.input, w, b, put, work)
        });
        if done {
            assert_eq!(out, general, "case {case}: {p:?}");
            in_rings(&d, case, &mut rng);
            taken += 1;
            several_pixels += usize::from(out_c < 16);
            multiplied += usize::from(m > 1);
            wide += usize::from(p.filter[1] * p.filter[2] > 16);
        } else {
            // Multiplier 1 past 16 taps is no fast path's (`Conv::four_at_a_time`).
            let taps = p.filter[1] * p.filter[2];
            let declined =
                8 % m != 0 || (out_c % 16 != 0 && 16 % out_c != 0) || (m == 1 && taps > 16);
            assert!(declined, "case {case}: {p:?}");
        }
    }
    assert!(
        taken > 1100 && several_pixels > 500 && multiplied > 300 && wide > 100,
        "{taken} taken, {several_pixels} of few channels, {multiplied} multiplied, {wide} past 16 taps"
    );
}

/// [`heliums_depthwise_equals_the_general_loops`]' call `d` on output rows of a
/// streamed stage's part: one or two rows, the input's rows they read in a ring of just
/// those rows, the outputs in a ring of theirs; the same bytes as the general loops on the
/// same rings.
fn in_rings(d: &Depthwise, case: usize, rng: &mut Rng) {
    use crate::rows::{Ring, RowMap};
    let p = d.conv();
    let ([_, in_h, in_w, c_in], out_h) = (p.input, p.output[1]);
    let (f_h, sy, dy, py) = (p.filter[1], p.stride[0], p.dilation[0], p.padding[0]);
    let first = rng.below(out_h);
    let rows = first..(first + 1 + rng.below(2)).min(out_h);
    let reads = |oy: usize| {
        super::super::taps(oy, sy, dy, py, in_h, f_h).map(move |k| oy * sy + k * dy - py)
    };
    let ys: Vec<usize> = rows.clone().flat_map(reads).collect();
    let (Some(&lo), Some(&hi)) = (ys.iter().min(), ys.iter().max()) else {
        return;
    };
    let frame = Frame {
        input: Ring { rows: hi - lo + 1 },
        output: Ring { rows: rows.len() },
        rows,
    };
    let row = in_w * c_in;
    let mut ring = std::vec![0u8; frame.input.len(p.input)];
    for y in lo..=hi {
        let at = frame.input.at(p.input, 0, y);
        ring[at..at + row].copy_from_slice(&d.input[y * row..(y + 1) * row]);
    }
    let outs = frame.output.len(p.output);
    let (mut chunked, mut general) = (std::vec![0u8; outs], std::vec![0u8; outs]);
    let put = &mut |o: usize, v: u8| chunked[o] = v;
    let (w, b) = (&d.filter, &d.bias);
    assert!(super::super::chunked::depthwise(
        &p,
        &frame,
        &ring,
        w,
        b,
        put,
        &mut crate::work::tests::any()
    ));
    int8_loops::<true, _, _, _>(&p, &frame, &ring[..], w, b, |o, v| general[o] = v)
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_eq!(
        chunked, general,
        "case {case}, rows {:?}: {p:?}",
        frame.rows
    );
}
