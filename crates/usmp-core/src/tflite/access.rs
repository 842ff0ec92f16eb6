//! How many bytes one call reads and writes in each of its tensors per inference, counted
//! from the shapes and options the way TensorFlow Lite Micro's reference kernels touch
//! memory: a convolution reads each input byte under its window once per output channel
//! it feeds, and each filter byte once per output pixel; a fully connected layer reads its
//! input once per output unit and its weights once per batch; a pooling reads the input
//! under every window; a broadcasting elementwise operator reads each input once per
//! output element. Taps falling into the padding are not read, so they are not counted.
//!
//! Every other operator, and any of these whose shapes are not of the operator's form
//! (a malformed model its kernel would refuse), counts each tensor once: read once per
//! input it is named as, written once per output. Optimised kernels (CMSIS-NN's im2col,
//! caches) touch memory differently; this is the reference kernels' count, an estimate
//! for choosing pools by speed, not a measurement.

use usmp::{Builtin, Padding};

use super::graph::{Operator, TensorInfo, Window};
use crate::model::Tensor;

/// What the count needs of one tensor.
#[derive(Clone, Debug)]
pub(super) struct Shape<'a> {
    /// Its dimensions.
    pub dims: &'a [i32],
    /// Bytes per element, when the type has a fixed size.
    pub element: Option<u64>,
    /// Its size in bytes.
    pub bytes: u64,
}

impl<'a> Shape<'a> {
    /// The tensor the graph describes as `info` and the model plans as `tensor`.
    pub fn new(info: &'a TensorInfo, tensor: &Tensor) -> Self {
        Shape {
            dims: &info.shape,
            element: info.element.size().map(|e| e as u64),
            bytes: tensor.size.bytes().unwrap_or(0),
        }
    }

    fn elements(&self) -> u64 {
        self.dims
            .iter()
            .fold(1u64, |acc, &d| acc.saturating_mul(d.max(0) as u64))
    }

    /// The dimensions of a rank-`N` tensor with a fixed element size, as counts.
    fn of_rank<const N: usize>(&self) -> Option<([u64; N], u64)> {
        let dims: [i32; N] = self.dims.try_into().ok()?;
        let element = self.element?;
        dims.iter()
            .all(|&d| d >= 0)
            .then(|| (dims.map(|d| d as u64), element))
    }
}

/// Adds operator `op`'s bytes read and written to `traffic`, per tensor index.
pub(super) fn add_call(op: &Operator, shapes: &[Shape<'_>], traffic: &mut [u64]) {
    let window = op.window();
    count(op.builtin, window, &op.inputs, &op.outputs, shapes, traffic);
}

/// Adds one call's bytes read and written to `traffic`, per tensor index.
fn count(
    op: Option<Builtin>,
    window: Option<Window>,
    inputs: &[Option<usize>],
    outputs: &[usize],
    shapes: &[Shape<'_>],
    traffic: &mut [u64],
) {
    let counted = op
        .and_then(|op| counted(op, window, inputs, outputs, shapes))
        .unwrap_or_else(|| {
            inputs
                .iter()
                .flatten()
                .chain(outputs)
                .map(|&t| (t, shapes.get(t).map_or(0, |s| s.bytes)))
                .collect()
        });
    for (t, bytes) in counted {
        if let Some(sum) = traffic.get_mut(t) {
            *sum = sum.saturating_add(bytes);
        }
    }
}

/// The bytes per tensor for the operators whose kernels read data more than once;
/// `None` takes the plain count.
fn counted(
    op: Builtin,
    window: Option<Window>,
    inputs: &[Option<usize>],
    outputs: &[usize],
    shapes: &[Shape<'_>],
) -> Option<Vec<(usize, u64)>> {
    let shape = |t: Option<&Option<usize>>| shapes.get((*t?)?);
    let input = inputs.first().copied().flatten()?;
    let output = *outputs.first()?;
    let out = shapes.get(output)?;
    let written = (output, out.bytes);
    let mul = |factors: &[u64]| factors.iter().fold(1u64, |a, &f| a.saturating_mul(f));
    // The optional bias: one value per output element.
    let bias = |per_output: u64| {
        let t = inputs.get(2).copied().flatten()?;
        Some((t, per_output.saturating_mul(shapes.get(t)?.element?)))
    };
    let mut counts = match op {
        Builtin::Conv2d | Builtin::DepthwiseConv2d => {
            convolution(op, window?, inputs, out, shapes)?
        }
        Builtin::AveragePool2d | Builtin::MaxPool2d => {
            let window = window?;
            let [kh, kw] = window.filter?;
            let (kh, kw) = (u64::try_from(kh).ok()?, u64::try_from(kw).ok()?);
            let ([n, h, w, c], e_in) = shape(inputs.first())?.of_rank::<4>()?;
            let ([_, oh, ow, _], _) = out.of_rank::<4>()?;
            let rows = taps(h, oh, kh, window.stride[0], 1, window.padding)?;
            let cols = taps(w, ow, kw, window.stride[1], 1, window.padding)?;
            vec![(input, mul(&[n, rows, cols, c, e_in]))]
        }
        Builtin::FullyConnected => {
            let ([units, depth], e_w) = shape(inputs.get(1))?.of_rank::<2>()?;
            let x = shape(inputs.first())?;
            let batches = x.elements().checked_div(depth)?;
            let products = mul(&[batches, units, depth]);
            let mut counts = vec![
                (input, products.saturating_mul(x.element?)),
                (
                    inputs.get(1).copied().flatten()?,
                    products.saturating_mul(e_w),
                ),
            ];
            counts.extend(bias(mul(&[batches, units])));
            counts
        }
        Builtin::Add
        | Builtin::Sub
        | Builtin::Mul
        | Builtin::Div
        | Builtin::SquaredDifference
        | Builtin::Maximum
        | Builtin::Minimum => {
            let elements = out.elements();
            inputs
                .iter()
                .flatten()
                .map(|&t| Some((t, elements.saturating_mul(shapes.get(t)?.element?))))
                .collect::<Option<_>>()?
        }
        _ => return None,
    };
    counts.push(written);
    Some(counts)
}

/// What a convolution reads: every (output, tap) pair that lands inside the input reads
/// an input element and a filter element; each output reads its bias once.
fn convolution(
    op: Builtin,
    window: Window,
    inputs: &[Option<usize>],
    out: &Shape<'_>,
    shapes: &[Shape<'_>],
) -> Option<Vec<(usize, u64)>> {
    let shape = |t: Option<&Option<usize>>| shapes.get((*t?)?);
    let mul = |factors: &[u64]| factors.iter().fold(1u64, |a, &f| a.saturating_mul(f));
    let input = inputs.first().copied().flatten()?;
    let ([n, h, w, _], e_in) = shape(inputs.first())?.of_rank::<4>()?;
    let ([_, kh, kw, k_in], e_f) = shape(inputs.get(1))?.of_rank::<4>()?;
    let ([_, oh, ow, oc], _) = out.of_rank::<4>()?;
    let rows = taps(
        h,
        oh,
        kh,
        window.stride[0],
        window.dilation[0],
        window.padding,
    )?;
    let cols = taps(
        w,
        ow,
        kw,
        window.stride[1],
        window.dilation[1],
        window.padding,
    )?;
    // A depthwise output channel reads one input channel; a convolution's, all
    // the filter's input channels.
    let depth = if op == Builtin::Conv2d { k_in } else { 1 };
    let products = mul(&[n, rows, cols, oc, depth]);
    let mut counts = vec![
        (input, products.saturating_mul(e_in)),
        (
            inputs.get(1).copied().flatten()?,
            products.saturating_mul(e_f),
        ),
    ];
    // The optional bias: one value per output element (left out when unknown).
    if let Some(t) = inputs.get(2).copied().flatten()
        && let Some(element) = shapes.get(t).and_then(|s| s.element)
    {
        counts.push((t, mul(&[n, oh, ow, oc]).saturating_mul(element)));
    }
    Some(counts)
}

/// How many (output position, window tap) pairs of one spatial dimension read inside the
/// input: `input` long, `output` positions `stride` apart, a window of `size` taps
/// `dilation` apart, padded as TFLite pads it. `None` for a window no model has (stride
/// or dilation below 1, or more than a million taps), which takes the plain count.
fn taps(
    input: u64,
    output: u64,
    size: u64,
    stride: i32,
    dilation: i32,
    padding: Padding,
) -> Option<u64> {
    const MAX_TAPS: u64 = 1 << 20;
    if stride < 1 || dilation < 1 || size > MAX_TAPS {
        return None;
    }
    let (input, output, stride, dilation) = (
        i128::from(input),
        i128::from(output),
        i128::from(stride),
        i128::from(dilation),
    );
    let effective = (i128::from(size) - 1) * dilation + 1;
    let before = match padding {
        // TFLite's padding: half the total, the odd one after.
        Padding::Same => (((output - 1) * stride + effective - input).max(0)) / 2,
        Padding::Valid => 0,
    };
    // Tap k of output o reads row o * stride - before + k * dilation: count, per tap, the
    // outputs for which that row lies in [0, input).
    let mut sum: i128 = 0;
    for k in 0..i128::from(size) {
        let shift = k * dilation - before;
        // o * stride + shift >= 0 and o * stride + shift <= input - 1.
        let low = ((-shift).max(0) + stride - 1) / stride;
        let high = (input - 1 - shift).div_euclid(stride).min(output - 1);
        sum += (high - low + 1).max(0);
    }
    u64::try_from(sum).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tap counts by enumerating every (output, tap) pair.
    fn brute(input: i64, output: i64, size: i64, stride: i64, dilation: i64, same: bool) -> u64 {
        let effective = (size - 1) * dilation + 1;
        let before = if same {
            ((output - 1) * stride + effective - input).max(0) / 2
        } else {
            0
        };
        let mut n = 0;
        for o in 0..output {
            for k in 0..size {
                let at = o * stride - before + k * dilation;
                if (0..input).contains(&at) {
                    n += 1;
                }
            }
        }
        n
    }

    #[test]
    fn taps_match_enumeration() {
        for input in 1..12i64 {
            for size in 1..5 {
                for stride in 1..4 {
                    for dilation in 1..3 {
                        for same in [true, false] {
                            let effective = (size - 1) * dilation + 1;
                            let output = if same {
                                (input + stride - 1) / stride
                            } else if input >= effective {
                                (input - effective + stride) / stride
                            } else {
                                continue;
                            };
                            let padding = if same { Padding::Same } else { Padding::Valid };
                            assert_eq!(
                                taps(
                                    input as u64,
                                    output as u64,
                                    size as u64,
                                    stride as i32,
                                    dilation as i32,
                                    padding
                                ),
                                Some(brute(input, output, size, stride, dilation, same)),
                                "input {input} size {size} stride {stride} dilation {dilation} \
                                 same {same}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_3x3_same_convolution_reads_each_inner_input_byte_nine_times_per_output_channel() {
        // 1x4x4x2 int8 input, 8 filters of 3x3x2, int32 bias, 1x4x4x8 output, stride 1.
        let shapes = [
            Shape {
                dims: &[1, 4, 4, 2],
                element: Some(1),
                bytes: 32,
            },
            Shape {
                dims: &[8, 3, 3, 2],
                element: Some(1),
                bytes: 144,
            },
            Shape {
                dims: &[8],
                element: Some(4),
                bytes: 32,
            },
            Shape {
                dims: &[1, 4, 4, 8],
                element: Some(1),
                bytes: 128,
            },
        ];
        let window = Window {
            padding: Padding::Same,
            stride: [1, 1],
            dilation: [1, 1],
            filter: None,
        };
        let mut traffic = [0; 4];
        let inputs = [Some(0), Some(1), Some(2)];
        count(
            Some(Builtin::Conv2d),
            Some(window),
            &inputs,
            &[3],
            &shapes,
            &mut traffic,
        );
        // Per dimension of 4 with a 3-tap window padded by 1: 2 + 3 + 3 + 2 = 10 taps.
        let products = 10 * 10 * 8 * 2;
        assert_eq!(traffic, [products, products, 16 * 8 * 4, 128]);
        // Any other operator counts each tensor once.
        let mut plain = [0; 4];
        count(
            Some(Builtin::Reshape),
            None,
            &inputs,
            &[3],
            &shapes,
            &mut plain,
        );
        assert_eq!(plain, [32, 144, 32, 128]);
        // A filter of the wrong rank falls back to the plain count.
        let mut odd = shapes.clone();
        odd[1].dims = &[8, 18];
        let mut fallback = [0; 4];
        let conv = Some(Builtin::Conv2d);
        count(conv, Some(window), &inputs, &[3], &odd, &mut fallback);
        assert_eq!(fallback, plain);
    }

    #[test]
    fn fully_connected_reads_its_input_once_per_unit_and_broadcasts_per_output_element() {
        let shapes = [
            Shape {
                dims: &[2, 10],
                element: Some(1),
                bytes: 20,
            },
            Shape {
                dims: &[3, 10],
                element: Some(1),
                bytes: 30,
            },
            Shape {
                dims: &[2, 3],
                element: Some(1),
                bytes: 6,
            },
            Shape {
                dims: &[1],
                element: Some(1),
                bytes: 1,
            },
        ];
        let mut traffic = [0; 4];
        count(
            Some(Builtin::FullyConnected),
            None,
            &[Some(0), Some(1), None],
            &[2],
            &shapes,
            &mut traffic,
        );
        assert_eq!(traffic, [60, 60, 6, 0]);
        let mut traffic = [0; 4];
        count(
            Some(Builtin::Add),
            None,
            &[Some(2), Some(3)],
            &[2],
            &shapes,
            &mut traffic,
        );
        assert_eq!(traffic, [0, 0, 12, 6]);
    }
}
