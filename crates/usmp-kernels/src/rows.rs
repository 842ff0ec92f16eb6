//! Where the rows of an NHWC tensor are: the whole tensor, or a ring holding only its
//! latest rows (a streamed stage's line buffer, row `y` in slot `y % rows`). The windowed
//! kernels (convolutions, pooling) index their input and output through a [`Frame`], so
//! one set of loops computes a whole call or a few rows of one, with the same arithmetic
//! in the same order per output element.

use core::ops::Range;

/// Where row `y` of batch `b` of a tensor of `shape` starts, in elements; `len` is the
/// elements it spans. The shape is the kernel's own, so the whole tensor's map holds
/// nothing and its loops keep the registers they had.
pub(crate) trait RowMap: Copy {
    /// Whether this is [`Whole`]: the paths written for whole tensors only take it.
    const WHOLE: bool;
    /// The first element of row `y` of batch `b`.
    fn at(self, shape: [usize; 4], b: usize, y: usize) -> usize;
    /// The elements the mapped tensor needs in its region.
    fn len(self, shape: [usize; 4]) -> usize;
}

/// The whole tensor, rows in order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Whole;

impl RowMap for Whole {
    const WHOLE: bool = true;

    #[inline(always)]
    fn at(self, [_, h, w, c]: [usize; 4], b: usize, y: usize) -> usize {
        ((b * h + y) * w) * c
    }

    fn len(self, shape: [usize; 4]) -> usize {
        shape.iter().product()
    }
}

/// A ring of `rows` rows of one batch: row `y` in slot `y % rows`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ring {
    /// Slots.
    pub(crate) rows: usize,
}

impl RowMap for Ring {
    const WHOLE: bool = false;

    #[inline(always)]
    fn at(self, [_, _, w, c]: [usize; 4], _: usize, y: usize) -> usize {
        y % self.rows * w * c
    }

    fn len(self, [_, h, w, c]: [usize; 4]) -> usize {
        self.rows.min(h) * w * c
    }
}

/// How a windowed kernel reaches its input and output, and which output rows it
/// computes.
#[derive(Clone, Debug)]
pub(crate) struct Frame<I: RowMap, O: RowMap> {
    /// The input's rows.
    pub(crate) input: I,
    /// The output's rows.
    pub(crate) output: O,
    /// The output rows computed, in each batch.
    pub(crate) rows: Range<usize>,
}

impl Frame<Whole, Whole> {
    /// A whole call: every output row, input and output whole.
    pub(crate) const fn whole(output: [usize; 4]) -> Self {
        Frame {
            input: Whole,
            output: Whole,
            rows: 0..output[1],
        }
    }
}
