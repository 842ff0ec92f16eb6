//! Streamed stages: a chain of calls run a few rows at a time, so the tensors between them
//! are never whole. Each intermediate tensor lives in a *line buffer*, a ring of the rows
//! its consumer's window still needs (row `y` in slot `y % rows`); the stage's input and
//! output are ordinary tensors.
//!
//! The schedule pulls: each output row of the last part asks its input for the rows up to
//! the last one its window reads, computing them in order, recursively up the chain. So
//! every row of every part is computed exactly once (no halo recompute: the MACs are the
//! unstreamed calls'), each by the same kernel loops as a whole call, over the same
//! elements in the same order: the outputs are the same bytes. A ring of `rows` slots is
//! enough when `rows` is at least the consumer's window height: the rows one output row
//! reads span at most that many, and a row is overwritten only by the row `rows` below it.
//!
//! What may be in a stage ([`window_rows`]): int8 CONV_2D and DEPTHWISE_CONV_2D, both
//! int8 poolings, and the element-wise int8 kernels of one input (QUANTIZE between int8,
//! RELU, RELU6, LOGISTIC, TANH), each of batch 1.

use crate::params::{Conv, Kernel, Pool, Requantize, Sigmoid};
pub use crate::params::{Part, Stage};
use crate::rows::{Frame, Ring, RowMap};
use crate::{Error, Int, conv, pointwise, pool, quantize};

#[cfg(test)]
mod tests;

/// The operator name of a stage's call in the plan and the generated module.
pub const OPERATOR: &str = "USMP_STAGE";

/// The most calls one stage fuses.
pub const MOST_PARTS: usize = 16;

/// How many consecutive input rows one output row of `kernel` reads at most (its
/// window's height), or `None` when it cannot run in a stage.
pub const fn window_rows(kernel: &Kernel<'_>) -> Option<usize> {
    match kernel {
        Kernel::Conv2d(p) | Kernel::DepthwiseConv2d(p) if p.input[0] == 1 => {
            Some((p.filter[1] - 1) * if p.dilation[0] > 1 { p.dilation[0] } else { 1 } + 1)
        }
        Kernel::AveragePool2d(p) | Kernel::MaxPool2d(p) if p.input[0] == 1 => Some(p.window[0]),
        Kernel::Requantize(p) | Kernel::Relu(p)
            if matches!(p.from, Int::I8) && matches!(p.to, Int::I8) =>
        {
            Some(1)
        }
        Kernel::Logistic(_) | Kernel::Tanh(_) => Some(1),
        _ => None,
    }
}

/// The bytes of a line buffer of `rows` rows of a tensor of `shape` (NHWC, int8): at
/// most the whole tensor.
pub const fn line_buffer(rows: usize, shape: [usize; 4]) -> usize {
    let rows = if rows < shape[1] { rows } else { shape[1] };
    rows * shape[2] * shape[3]
}

/// The bytes of `stage`'s scratch: every line buffer, in order.
pub fn scratch_bytes(stage: &Stage<'_>) -> usize {
    let last = stage.parts.len().saturating_sub(1);
    stage.parts[..last]
        .iter()
        .map(|p| line_buffer(p.rows, p.output))
        .sum()
}

fn bad(problem: &'static str) -> Error {
    Error::Parameters {
        what: "stage",
        problem,
    }
}

/// Runs `stage` on the stage call's `inputs` (the chain's input, then the parts'
/// weights) into `output`, its line buffers in `scratch`. Refuses a line buffer shorter
/// than its reader's window.
pub fn run(
    stage: &Stage<'_>,
    inputs: &[&[u8]],
    scratch: &mut [u8],
    output: &mut [u8],
) -> Result<(), Error> {
    for pair in stage.parts.windows(2) {
        let [p, reader] = [&pair[0], &pair[1]];
        let window = window_rows(&reader.kernel).ok_or(bad("this kernel cannot run in a stage"))?;
        if p.rows < window.min(p.output[1]) {
            return Err(bad(
                "a line buffer holds fewer rows than its reader's window",
            ));
        }
    }
    stream(stage, inputs, scratch, output, |_, _| ())
}

/// [`run`] without the line buffers' check, telling `computed(part, row)` after each row.
pub(crate) fn stream(
    stage: &Stage<'_>,
    inputs: &[&[u8]],
    scratch: &mut [u8],
    output: &mut [u8],
    computed: impl FnMut(usize, usize),
) -> Result<(), Error> {
    let parts = stage.parts;
    if parts.is_empty() || parts.len() > MOST_PARTS {
        return Err(bad("a stage has 1 to 16 parts"));
    }
    let mut start = [0; MOST_PARTS];
    for j in 1..parts.len() {
        let p = &parts[j - 1];
        if p.rows == 0 {
            return Err(bad("a line buffer holds no rows"));
        }
        start[j] = start[j - 1] + line_buffer(p.rows, p.output);
    }
    let last = parts.len() - 1;
    if scratch.len() < start[last] {
        return Err(Error::TooSmall {
            what: "stage line buffers",
            bytes: start[last],
            got: scratch.len(),
        });
    }
    let input = inputs
        .first()
        .ok_or(Error::MissingOperand { what: "input" })?;
    let mut s = Streamer {
        parts,
        start,
        done: [0; MOST_PARTS],
        input,
        weights: |k: usize| {
            (inputs.get(k).copied()).ok_or(Error::MissingOperand {
                what: "stage weights",
            })
        },
        scratch,
        output,
        computed,
    };
    for r in 0..parts[last].output[1] {
        s.pull(last, r)?;
    }
    // Rows no later window reads (below the last one a stride reaches) are computed
    // too, so the stage does exactly the calls' work.
    for (j, part) in parts[..last].iter().enumerate() {
        while s.done[j] < part.output[1] {
            s.compute(j, s.done[j])?;
        }
    }
    Ok(())
}

/// A stage being run: how many rows of each part are done.
struct Streamer<'s, 'a, W, C> {
    parts: &'s [Part<'a>],
    start: [usize; MOST_PARTS],
    done: [usize; MOST_PARTS],
    input: &'s [u8],
    weights: W,
    scratch: &'s mut [u8],
    output: &'s mut [u8],
    computed: C,
}

impl<'w, W, C> Streamer<'_, '_, W, C>
where
    W: Fn(usize) -> Result<&'w [u8], Error>,
    C: FnMut(usize, usize),
{
    /// Computes row `r` of part `j`, first the rows of its input up to the last it reads.
    fn pull(&mut self, j: usize, r: usize) -> Result<(), Error> {
        if j > 0 {
            let height = self.parts[j - 1].output[1];
            let need = last_read(&self.parts[j].kernel, r).min(height.saturating_sub(1));
            while self.done[j - 1] <= need {
                self.pull(j - 1, self.done[j - 1])?;
            }
        }
        self.compute(j, r)
    }

    /// Computes row `r` of part `j` from its input's rows, into its ring or the output.
    fn compute(&mut self, j: usize, r: usize) -> Result<(), Error> {
        let part = &self.parts[j];
        let last = j + 1 == self.parts.len();
        let in_shape = match j {
            0 => input_shape(&part.kernel, part.output),
            _ => self.parts[j - 1].output,
        };
        let (before, after) = self.scratch.split_at_mut(self.start[j]);
        let (input, in_rows) = match j {
            0 => (self.input, in_shape[1]),
            _ => (&before[self.start[j - 1]..], self.parts[j - 1].rows),
        };
        let (output, out_rows) = match last {
            true => (&mut *self.output, part.output[1]),
            false => (after, part.rows),
        };
        let frame = Frame {
            input: Ring {
                rows: in_rows.min(in_shape[1]).max(1),
            },
            output: Ring {
                rows: out_rows.min(part.output[1]).max(1),
            },
            rows: r..r + 1,
        };
        row(
            part,
            &frame,
            [in_shape, part.output],
            input,
            &self.weights,
            output,
        )?;
        self.done[j] = r + 1;
        (self.computed)(j, r);
        Ok(())
    }
}

/// The last input row output row `r` of `kernel` reads (unclamped to the input).
fn last_read(kernel: &Kernel<'_>, r: usize) -> usize {
    match kernel {
        Kernel::Conv2d(p) | Kernel::DepthwiseConv2d(p) => (r * p.stride[0]
            + (p.filter[1] - 1) * p.dilation[0].max(1))
        .saturating_sub(p.padding[0]),
        Kernel::AveragePool2d(p) | Kernel::MaxPool2d(p) => {
            (r * p.stride[0] + p.window[0] - 1).saturating_sub(p.padding[0])
        }
        _ => r,
    }
}

/// The input shape of a part that is first: its parameters', or for an element-wise
/// kernel its output's.
fn input_shape(kernel: &Kernel<'_>, output: [usize; 4]) -> [usize; 4] {
    match kernel {
        Kernel::Conv2d(p) | Kernel::DepthwiseConv2d(p) => p.input,
        Kernel::AveragePool2d(p) | Kernel::MaxPool2d(p) => p.input,
        _ => output,
    }
}

/// Output rows `frame.rows` of `part`, its regions (of `shapes`, input and output)
/// reached through `frame`.
fn row<'w>(
    part: &Part<'_>,
    frame: &Frame<Ring, Ring>,
    shapes: [[usize; 4]; 2],
    input: &[u8],
    weights: &impl Fn(usize) -> Result<&'w [u8], Error>,
    output: &mut [u8],
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
            )
        }
        Kernel::Conv2d(p) => conv::int8_rows::<false>(
            p,
            frame,
            input,
            filter()?,
            bias(p, weights, part.weights)?,
            output,
        ),
        Kernel::DepthwiseConv2d(p) => conv::int8_rows::<true>(
            p,
            frame,
            input,
            filter()?,
            bias(p, weights, part.weights)?,
            output,
        ),
        Kernel::AveragePool2d(p) => pooled(p, frame, input, output, pool::average),
        Kernel::MaxPool2d(p) => pooled(p, frame, input, output, pool::max),
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
        Kernel::Logistic(p) => {
            let (x, y) = one_row(frame, shapes, 1, input, output)?;
            pointwise::logistic(
                &Sigmoid {
                    elements: shapes[1][2] * shapes[1][3],
                    ..*p
                },
                x,
                y,
            )
        }
        Kernel::Tanh(p) => {
            let (x, y) = one_row(frame, shapes, 1, input, output)?;
            pointwise::tanh(
                &Sigmoid {
                    elements: shapes[1][2] * shapes[1][3],
                    ..*p
                },
                x,
                y,
            )
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
fn pooled(
    p: &Pool,
    frame: &Frame<Ring, Ring>,
    input: &[u8],
    output: &mut [u8],
    reduce: fn(&mut dyn Iterator<Item = i32>) -> Result<i32, Error>,
) -> Result<(), Error> {
    crate::bytes::want("pool input", input, frame.input.len(p.input))?;
    crate::bytes::want("pool output", output, frame.output.len(p.output))?;
    pool::pool_rows(p, frame, input, |o, v| output[o] = v, reduce)
}
