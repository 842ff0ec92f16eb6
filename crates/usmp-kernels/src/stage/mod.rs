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
//! What may be in a stage: what [`Step::of`] takes. A stage of two parts or more may
//! write its output over its input ([`window`]): only its first part reads the input and
//! only its last writes the output.

use core::ops::Range;

use crate::Error;
use crate::overlap::{self, Window};
pub use crate::params::{Part, Stage};
use crate::rows::{Frame, Ring};

mod part;
mod schedule;
#[cfg(test)]
mod tests;

pub use schedule::{Step, most};

/// The operator name of a stage's call in the plan and the generated module.
pub const OPERATOR: &str = "USMP_STAGE";

/// The most calls one stage fuses.
pub const MOST_PARTS: usize = 16;

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

/// The bytes of kernel work (`crate::work`) `stage`'s scratch holds after its line
/// buffers on `path` ([`work_after`] the most any part keeps).
pub fn work_bytes(stage: &Stage<'_>, path: crate::work::Path) -> usize {
    let most = (stage.parts.iter())
        .map(|p| crate::work::in_stage(&p.kernel, path))
        .max()
        .unwrap_or(0);
    work_after(scratch_bytes(stage), most)
}

/// The bytes a stage's scratch holds after `lines` bytes of line buffers for `most`
/// bytes of its parts' work: the work from the first multiple of
/// [`work::ALIGN`](crate::work::ALIGN) on; 0 where no part keeps any.
pub const fn work_after(lines: usize, most: usize) -> usize {
    match most {
        0 => 0,
        most => lines.next_multiple_of(crate::work::ALIGN) - lines + most,
    }
}

fn bad(problem: &'static str) -> Error {
    Error::Parameters {
        what: "stage",
        problem,
    }
}

/// The steps of `stage`'s parts, and its input's shape; an error for a part no stage runs.
fn steps(stage: &Stage<'_>) -> Result<([Step; MOST_PARTS], [usize; 4]), Error> {
    let parts = stage.parts;
    let first = parts.first().ok_or(bad("a stage has 1 to 16 parts"))?;
    if parts.len() > MOST_PARTS {
        return Err(bad("a stage has 1 to 16 parts"));
    }
    let unit = Step {
        stride: 1,
        pad: 0,
        reach: 1,
        rows: 0,
    };
    let mut steps = [unit; MOST_PARTS];
    let mut input = part::input_shape(&first.kernel, first.output);
    for (step, p) in steps.iter_mut().zip(parts) {
        *step = Step::of(&p.kernel, p.output[1]).ok_or(bad("this kernel cannot run in a stage"))?;
        // Each part reads the shape the part before writes, and writes its own: the
        // frames and the kernels' loops index by these shapes alike.
        if !part::shapes_agree(&p.kernel, input, p.output) {
            return Err(bad(
                "a part's shapes differ from the part before it or from its output",
            ));
        }
        input = p.output;
    }
    Ok((steps, part::input_shape(&first.kernel, first.output)))
}

/// The shifts at which `stage` may write its output over its input ([`most`] over its
/// parts' steps).
pub fn window(stage: &Stage<'_>) -> Result<Window, Error> {
    let (steps, input) = steps(stage)?;
    let output = stage.parts[stage.parts.len() - 1].output;
    let (in_row, out_row) = (input[2] * input[3], output[2] * output[3]);
    Ok(Window {
        most: most(&steps[..stage.parts.len()], in_row, out_row),
        input: input[1] * in_row,
        output: output[1] * out_row,
    })
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
    let input = inputs
        .first()
        .ok_or(Error::MissingOperand { what: "input" })?;
    checked(stage)?;
    stream(
        stage,
        Io::Apart { input, output },
        &inputs[1..],
        scratch,
        |_, _| (),
    )
}

/// [`run`] over one region holding the stage's input and its output where `shared` says,
/// at a shift its [`window`] allows; `weights` are the stage call's inputs after the
/// first.
pub fn run_over(
    stage: &Stage<'_>,
    region: &mut [u8],
    shared: &usmp::Shared,
    weights: &[&[u8]],
    scratch: &mut [u8],
) -> Result<(), Error> {
    checked(stage)?;
    let window = window(stage)?;
    if !window.allows(shared.shift()) {
        return Err(Error::Overlap {
            shift: shared.shift(),
            most: window.most,
        });
    }
    let [input, output] = overlap::ranges(region.len(), shared)?;
    let io = Io::Over {
        region,
        input,
        output,
    };
    stream(stage, io, weights, scratch, |_, _| ())
}

/// Refuses a line buffer shorter than its reader's window.
fn checked(stage: &Stage<'_>) -> Result<(), Error> {
    let (steps, _) = steps(stage)?;
    for (pair, reader) in stage.parts.windows(2).zip(&steps[1..]) {
        if pair[0].rows < reader.reach.min(pair[0].output[1]) {
            return Err(bad(
                "a line buffer holds fewer rows than its reader's window",
            ));
        }
    }
    Ok(())
}

/// The stage's input and output: two regions, or one region holding both.
enum Io<'s> {
    Apart {
        input: &'s [u8],
        output: &'s mut [u8],
    },
    Over {
        region: &'s mut [u8],
        input: Range<usize>,
        output: Range<usize>,
    },
}

impl Io<'_> {
    fn input(&self) -> &[u8] {
        match self {
            Io::Apart { input, .. } => input,
            Io::Over { region, input, .. } => &region[input.clone()],
        }
    }

    fn output(&mut self) -> &mut [u8] {
        match self {
            Io::Apart { output, .. } => output,
            Io::Over { region, output, .. } => &mut region[output.clone()],
        }
    }
}

/// [`run`] without the line buffers' check, telling `computed(part, row)` after each row.
fn stream(
    stage: &Stage<'_>,
    io: Io<'_>,
    weights: &[&[u8]],
    scratch: &mut [u8],
    mut computed: impl FnMut(usize, usize),
) -> Result<(), Error> {
    let parts = stage.parts;
    let (steps, input) = steps(stage)?;
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
    // The parts' kernel work after the line buffers, aligned ([`work_bytes`]).
    let lines = start[last].next_multiple_of(crate::work::ALIGN);
    let (scratch, work) = scratch.split_at_mut(lines.min(scratch.len()));
    if last == 0 && matches!(io, Io::Over { .. }) {
        // Its reads and writes interleave: `window` certifies nothing.
        return Err(bad("a stage of one part is not run over its input"));
    }
    let mut s = Streamer {
        parts,
        start,
        input,
        io,
        weights,
        scratch,
        work,
    };
    schedule::schedule(&steps[..parts.len()], |j, r| {
        s.compute(j, r)?;
        computed(j, r);
        Ok(())
    })
}

/// A stage being run.
struct Streamer<'s, 'a> {
    parts: &'s [Part<'a>],
    /// Where each part's ring starts in the scratch.
    start: [usize; MOST_PARTS],
    /// The first part's input shape.
    input: [usize; 4],
    io: Io<'s>,
    weights: &'s [&'s [u8]],
    scratch: &'s mut [u8],
    /// The parts' kernel work.
    work: &'s mut [u8],
}

impl Streamer<'_, '_> {
    /// Computes row `r` of part `j` from its input's rows, into its ring or the output.
    fn compute(&mut self, j: usize, r: usize) -> Result<(), Error> {
        let part = &self.parts[j];
        let last = j + 1 == self.parts.len();
        let in_shape = if j == 0 {
            self.input
        } else {
            self.parts[j - 1].output
        };
        let in_rows = if j == 0 {
            in_shape[1]
        } else {
            self.parts[j - 1].rows
        };
        let out_rows = if last { part.output[1] } else { part.rows };
        let frame = Frame {
            input: Ring {
                rows: in_rows.min(in_shape[1]).max(1),
            },
            output: Ring {
                rows: out_rows.min(part.output[1]).max(1),
            },
            rows: r..r + 1,
        };
        let weights = |k: usize| {
            (k.checked_sub(1).and_then(|k| self.weights.get(k)).copied()).ok_or(
                Error::MissingOperand {
                    what: "stage weights",
                },
            )
        };
        let shapes = [in_shape, part.output];
        let (before, after) = self.scratch.split_at_mut(self.start[j]);
        let work = &mut *self.work;
        // The first part reads the stage's input, the last writes its output (never one
        // part both: refused over one region, and apart the two are separate regions).
        match (j, last) {
            (0, true) => match &mut self.io {
                Io::Apart { input, output } => {
                    part::row(part, &frame, shapes, input, &weights, output, work)
                }
                Io::Over { .. } => Err(bad("a stage of one part is not run over its input")),
            },
            (0, false) => part::row(part, &frame, shapes, self.io.input(), &weights, after, work),
            (_, true) => {
                let input = &before[self.start[j - 1]..];
                part::row(
                    part,
                    &frame,
                    shapes,
                    input,
                    &weights,
                    self.io.output(),
                    work,
                )
            }
            (_, false) => {
                let input = &before[self.start[j - 1]..];
                part::row(part, &frame, shapes, input, &weights, after, work)
            }
        }
    }
}
