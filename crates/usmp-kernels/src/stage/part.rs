//! One row of one part of a stage: the part's kernel over a frame of rings, by the same
//! loops as the call run whole (a kernel that reads one row for each row it writes runs as
//! a call of one row).

use crate::params::{Conv, Kernel, Part, Pool, Requantize, Sigmoid};
use crate::rows::{Frame, Ring, RowMap};
use crate::{Error, conv, pointwise, pool, quantize};

use super::bad;

/// The input shape of a part that is first: its parameters', or for an element-wise
/// kernel its output's.
pub(super) fn input_shape(kernel: &Kernel<'_>, output: [usize; 4]) -> [usize; 4] {
    match kernel {
        Kernel::Conv2d(p) | Kernel::DepthwiseConv2d(p) => p.input,
        Kernel::AveragePool2d(p) | Kernel::MaxPool2d(p) => p.input,
        _ => output,
    }
}

/// Whether `kernel` reads a tensor of shape `input` and writes one of shape `output`
/// (an element-wise kernel: as many elements as its parameters say, in and out alike).
pub(super) fn shapes_agree(kernel: &Kernel<'_>, input: [usize; 4], output: [usize; 4]) -> bool {
    let elements = |shape: [usize; 4]| shape.iter().product::<usize>();
    match kernel {
        Kernel::Conv2d(p) | Kernel::DepthwiseConv2d(p) => p.input == input && p.output == output,
        Kernel::AveragePool2d(p) | Kernel::MaxPool2d(p) => p.input == input && p.output == output,
        Kernel::Requantize(p) | Kernel::Relu(p) => {
            input == output && p.elements == elements(output)
        }
        Kernel::Logistic(p) | Kernel::Tanh(p) => input == output && p.elements == elements(output),
        _ => false,
    }
}

/// Output rows `frame.rows` of `part`, its regions (of `shapes`, input and output)
/// reached through `frame`.
pub(super) fn row<'w>(
    part: &Part<'_>,
    frame: &Frame<Ring, Ring>,
    shapes: [[usize; 4]; 2],
    input: &[u8],
    weights: &impl Fn(usize) -> Result<&'w [u8], Error>,
    output: &mut [u8],
    work: &mut [u8],
) -> Result<(), Error> {
    let filter = || weights(part.weights);
    match part.kernel {
        Kernel::Conv2d(p) if p.filter[1] == 1 && p.padding[0] == 0 => {
            let bias = bias(p, weights, part.weights)?;
            let (x, y) = one_row(frame, shapes, p.stride[0], input, output)?;
            conv::conv2d(
                &Conv {
                    input: [1, 1, p.input[2], p.input[3]],
                    output: [1, 1, p.output[2], p.output[3]],
                    stride: [1, p.stride[1]],
                    ..*p
                },
                x,
                filter()?,
                bias,
                y,
                work,
            )
        }
        Kernel::Conv2d(p) | Kernel::DepthwiseConv2d(p) => {
            let rows = match part.kernel {
                Kernel::DepthwiseConv2d(_) => conv::int8_rows::<true>,
                _ => conv::int8_rows::<false>,
            };
            let bias = bias(p, weights, part.weights)?;
            rows(p, frame, input, filter()?, bias, output, work)
        }
        Kernel::AveragePool2d(p) => pooled::<pool::Average>(p, frame, input, output),
        Kernel::MaxPool2d(p) => pooled::<pool::Max>(p, frame, input, output),
        Kernel::Requantize(p) | Kernel::Relu(p) => {
            let (x, y) = one_row(frame, shapes, 1, input, output)?;
            quantize::requantize(
                &Requantize {
                    elements: shapes[1][2] * shapes[1][3],
                    ..*p
                },
                x,
                y,
            )
        }
        Kernel::Logistic(p) | Kernel::Tanh(p) => {
            let sigmoid = match part.kernel {
                Kernel::Tanh(_) => pointwise::tanh,
                _ => pointwise::logistic,
            };
            let (x, y) = one_row(frame, shapes, 1, input, output)?;
            let elements = shapes[1][2] * shapes[1][3];
            sigmoid(&Sigmoid { elements, ..*p }, x, y)
        }
        _ => Err(bad("this kernel cannot run in a stage")),
    }
}

/// A convolution's bias input, or none.
fn bias<'w>(
    p: &Conv<'_>,
    weights: &impl Fn(usize) -> Result<&'w [u8], Error>,
    at: usize,
) -> Result<&'w [u8], Error> {
    if p.bias { weights(at + 1) } else { Ok(&[]) }
}

/// The one input row (output row times `stride`) and the one output row of a kernel
/// that reads a row for each row it writes.
fn one_row<'x, 'y>(
    frame: &Frame<Ring, Ring>,
    [in_shape, out_shape]: [[usize; 4]; 2],
    stride: usize,
    input: &'x [u8],
    output: &'y mut [u8],
) -> Result<(&'x [u8], &'y mut [u8]), Error> {
    let r = frame.rows.start;
    let i = frame.input.at(in_shape, 0, r * stride);
    let o = frame.output.at(out_shape, 0, r);
    let (n, m) = (in_shape[2] * in_shape[3], out_shape[2] * out_shape[3]);
    let x = input.get(i..i + n).ok_or(Error::TooSmall {
        what: "stage input row",
        bytes: i + n,
        got: input.len(),
    })?;
    let got = output.len();
    let y = output.get_mut(o..o + m).ok_or(Error::TooSmall {
        what: "stage output row",
        bytes: o + m,
        got,
    })?;
    Ok((x, y))
}

/// A pooling's rows, its regions checked against the frame.
fn pooled<F: pool::Fold<i32>>(
    p: &Pool,
    frame: &Frame<Ring, Ring>,
    input: &[u8],
    output: &mut [u8],
) -> Result<(), Error> {
    crate::bytes::want("pool input", input, frame.input.len(p.input))?;
    crate::bytes::want("pool output", output, frame.output.len(p.output))?;
    pool::pool_rows::<F, _, _, _>(p, frame, input, |o, v| output[o] = v)
}
