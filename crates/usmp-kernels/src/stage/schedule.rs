//! The order a stage computes its rows in, one implementation for running it and for
//! certifying where its output may lie over its input.
//!
//! Output row `r` of the last part pulls its input's rows up to the last its window
//! reads, each computed in order, which first pulls the rows it needs from the part
//! before, recursively. Rows no later window reads (below the last one a stride reaches)
//! are pulled at the end, last part first, so a stage does exactly its calls' work.

use crate::params::Kernel;

use super::MOST_PARTS;

/// How a part's output rows read its input's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Input rows between two output rows.
    pub stride: usize,
    /// Zero rows before the first input row.
    pub pad: usize,
    /// Input rows one output row's window spans (the filter's height, dilated).
    pub reach: usize,
    /// Its output rows.
    pub rows: usize,
}

impl Step {
    /// The step of `kernel`, whose output has `rows` rows; `None` when it cannot run in a
    /// stage: int8 CONV_2D and DEPTHWISE_CONV_2D, the int8 poolings, and the element-wise
    /// int8 kernels of one input (QUANTIZE between int8, RELU, RELU6, LOGISTIC, TANH), of
    /// one batch.
    pub const fn of(kernel: &Kernel<'_>, rows: usize) -> Option<Step> {
        let (stride, pad, reach) = match kernel {
            Kernel::Conv2d(p) | Kernel::DepthwiseConv2d(p) if p.input[0] == 1 => {
                let d = if p.dilation[0] > 1 { p.dilation[0] } else { 1 };
                (p.stride[0], p.padding[0], (p.filter[1] - 1) * d + 1)
            }
            Kernel::AveragePool2d(p) | Kernel::MaxPool2d(p) if p.input[0] == 1 => {
                (p.stride[0], p.padding[0], p.window[0])
            }
            Kernel::Requantize(p) | Kernel::Relu(p)
                if matches!(p.from, crate::Int::I8) && matches!(p.to, crate::Int::I8) =>
            {
                (1, 0, 1)
            }
            Kernel::Logistic(_) | Kernel::Tanh(_) => (1, 0, 1),
            _ => return None,
        };
        Some(Step {
            stride,
            pad,
            reach,
            rows,
        })
    }

    /// The first input row output row `r` reads (unclamped to the input).
    pub const fn first(&self, r: usize) -> usize {
        (r * self.stride).saturating_sub(self.pad)
    }

    /// The last input row output row `r` reads (unclamped to the input).
    pub const fn last(&self, r: usize) -> usize {
        (r * self.stride + self.reach - 1).saturating_sub(self.pad)
    }
}

/// Calls `at(part, row)` for every row of every part of a stage of `steps`, in the
/// order a stage computes them; stops at the first error.
pub(crate) fn schedule<E>(
    steps: &[Step],
    at: impl FnMut(usize, usize) -> Result<(), E>,
) -> Result<(), E> {
    let Some(last) = steps.len().checked_sub(1) else {
        return Ok(());
    };
    let mut s = Order {
        steps,
        done: [0; MOST_PARTS],
        at,
    };
    for r in 0..steps[last].rows {
        s.pull(last, r)?;
    }
    for j in (0..last).rev() {
        while s.done[j] < steps[j].rows {
            s.pull(j, s.done[j])?;
        }
    }
    Ok(())
}

struct Order<'s, A> {
    steps: &'s [Step],
    done: [usize; MOST_PARTS],
    at: A,
}

impl<E, A: FnMut(usize, usize) -> Result<(), E>> Order<'_, A> {
    /// Row `r` of part `j`, after the rows of its input up to the last it reads.
    fn pull(&mut self, j: usize, r: usize) -> Result<(), E> {
        if j > 0 {
            let need = self.steps[j]
                .last(r)
                .min(self.steps[j - 1].rows.saturating_sub(1));
            while self.done[j - 1] <= need {
                self.pull(j - 1, self.done[j - 1])?;
            }
        }
        (self.at)(j, r)?;
        self.done[j] = r + 1;
        Ok(())
    }
}

/// The highest shift (output start less input start, bytes) at which a stage of `steps`
/// may write its output over its input (`in_row` and `out_row` bytes a row): only its
/// first part reads the input and only its last writes the output, so when output row
/// `r` is written, every input row below the first the next row of the first part reads
/// is dead, and the row may end there. `isize::MIN` (no overlap) for a stage of one part,
/// whose reads and writes interleave.
pub fn most(steps: &[Step], in_row: usize, out_row: usize) -> isize {
    let last = steps.len().saturating_sub(1);
    if last == 0 || steps.len() > MOST_PARTS {
        return isize::MIN;
    }
    let (mut most, mut first_done) = (isize::MAX, 0);
    let done: Result<(), ()> = schedule(steps, |j, r| {
        if j == 0 {
            first_done = r + 1;
        } else if j == last && first_done < steps[0].rows {
            let dead = steps[0].first(first_done) * in_row;
            most = most.min(dead as isize - ((r + 1) * out_row) as isize);
        }
        Ok(())
    });
    match done {
        Ok(()) => most,
        Err(()) => isize::MIN,
    }
}
