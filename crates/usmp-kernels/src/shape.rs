//! Operators that move bytes without arithmetic: CONCATENATION, PAD and
//! RESIZE_NEAREST_NEIGHBOR (TensorFlow Lite Micro's reference kernels, which copy).
//!
//! Loop order: the output is written in order, front to back; CONCATENATION reads each
//! input front to back, PAD each input row once, RESIZE input rows in order (a row may be
//! read again for the next output row when upscaling).

use crate::Error;
use crate::bytes::{want, want_len};
use crate::overlap::{Load, cells, split};
use crate::params::{Concatenation, Pad, Resize};

/// CONCATENATION: for each outer step, each input's part in turn.
pub fn concatenation(
    p: &Concatenation<'_>,
    inputs: &[&[u8]],
    output: &mut [u8],
) -> Result<(), Error> {
    if inputs.len() != p.parts.len() {
        return Err(Error::Parameters {
            what: "concatenation inputs",
            problem: "the call has another number of inputs than the parameters",
        });
    }
    let step: usize = p.parts.iter().sum();
    want("concatenation output", output, p.outer * step)?;
    for (input, &part) in inputs.iter().zip(p.parts) {
        want("concatenation input", input, p.outer * part)?;
    }
    let mut o = 0;
    for k in 0..p.outer {
        for (input, &part) in inputs.iter().zip(p.parts) {
            output[o..o + part].copy_from_slice(&input[k * part..(k + 1) * part]);
            o += part;
        }
    }
    Ok(())
}

/// The shifts at which CONCATENATION may write its output over its input 0 (the
/// others stay apart). Output byte `j` of outer step `k` is written right after its
/// source is read, and input 0's bytes are read in order, `part` of them per step of
/// `step` output bytes. With `m(j)` the next input-0 byte to read after output byte `j`
/// ([`crate::overlap`]'s bound `min m(j) - (j + 1)`): at input 0's byte `c` of step `k`,
/// `m(j) - (j + 1) = k·(part - step)`; at the other inputs' bytes of step `k`, it falls to
/// `(k + 1)·(part - step)` at the last of them. Nothing is read after the last step's
/// part, so the least is at step `outer - 2`'s other inputs or step `outer - 1`'s part:
///
/// ```text
/// most = -(outer - 1)·(step - part)
/// ```
///
/// (no bound when input 0 has at most one byte). At that shift every byte of input 0
/// lies inside the output: the output's first `outer - 1` steps, written ahead of the
/// input's, take all the room the other inputs need.
pub fn concatenation_window(p: &Concatenation<'_>) -> crate::overlap::Window {
    let step: usize = p.parts.iter().sum();
    let part = p.parts.first().copied().unwrap_or(0);
    let most = if p.outer * part <= 1 {
        isize::MAX
    } else {
        let behind = (p.outer - 1).saturating_mul(step - part);
        -(isize::try_from(behind).unwrap_or(isize::MAX))
    };
    crate::overlap::Window {
        most,
        input: p.outer * part,
        output: p.outer * step,
    }
}

/// [`concatenation`] with input 0 read through `first` and the output stored by `put`
/// (`len` bytes): the order every run over one region takes.
pub(crate) fn concatenation_with<T: Load>(
    p: &Concatenation<'_>,
    first: &[T],
    others: &[&[u8]],
    (len, mut put): (usize, impl FnMut(usize, u8)),
) -> Result<(), Error> {
    if others.len() + 1 != p.parts.len() {
        return Err(Error::Parameters {
            what: "concatenation inputs",
            problem: "the call has another number of inputs than the parameters",
        });
    }
    let step: usize = p.parts.iter().sum();
    want_len("concatenation output", len, p.outer * step)?;
    want_len("concatenation input", first.len(), p.outer * p.parts[0])?;
    for (input, &part) in others.iter().zip(&p.parts[1..]) {
        want("concatenation input", input, p.outer * part)?;
    }
    let mut o = 0;
    for k in 0..p.outer {
        let part = p.parts[0];
        for (c, x) in first[k * part..(k + 1) * part].iter().enumerate() {
            put(o + c, x.load());
        }
        o += part;
        for (input, &part) in others.iter().zip(&p.parts[1..]) {
            for (c, &x) in input[k * part..(k + 1) * part].iter().enumerate() {
                put(o + c, x);
            }
            o += part;
        }
    }
    Ok(())
}

/// [`concatenation`] over one region holding input 0 and the output where `shared` says;
/// the other inputs apart. Refused at a shift [`concatenation_window`] does not allow.
pub fn concatenation_over(
    p: &Concatenation<'_>,
    region: &mut [u8],
    shared: &usmp::Shared,
    others: &[&[u8]],
) -> Result<(), Error> {
    let [first, output] = split(region, shared, concatenation_window(p))?;
    concatenation_with(p, first, others, cells(output))
}

/// PAD: the input, surrounded by the padding value.
pub fn pad(p: &Pad<'_>, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    let width = p.value.len();
    if width == 0 {
        return Err(Error::Parameters {
            what: "pad value",
            problem: "the padding value has no bytes",
        });
    }
    let elements = |s: [usize; 4]| s.iter().product::<usize>();
    want("pad input", input, elements(p.input) * width)?;
    want("pad output", output, elements(p.output) * width)?;
    for (i, &d) in p.input.iter().enumerate() {
        if p.before[i] + d > p.output[i] {
            return Err(Error::Parameters {
                what: "pad output",
                problem: "the input and its padding do not fit the output",
            });
        }
    }
    let row = p.input[3] * width;
    for cell in output.chunks_exact_mut(width).take(elements(p.output)) {
        cell.copy_from_slice(p.value);
    }
    for b in 0..p.input[0] {
        for y in 0..p.input[1] {
            for x in 0..p.input[2] {
                let from = ((b * p.input[1] + y) * p.input[2] + x) * row;
                let to = (((b + p.before[0]) * p.output[1] + y + p.before[1]) * p.output[2]
                    + x
                    + p.before[2])
                    * p.output[3]
                    * width
                    + p.before[3] * width;
                output[to..to + row].copy_from_slice(&input[from..from + row]);
            }
        }
    }
    Ok(())
}

/// RESIZE_NEAREST_NEIGHBOR: each output pixel is a copy of its source pixel.
pub fn resize_nearest_neighbor(
    p: &Resize<'_>,
    input: &[u8],
    output: &mut [u8],
) -> Result<(), Error> {
    let [batches, in_h, in_w, depth] = p.input;
    let pixel = depth * p.element_bytes;
    want("resize input", input, batches * in_h * in_w * pixel)?;
    want(
        "resize output",
        output,
        batches * p.rows.len() * p.columns.len() * pixel,
    )?;
    if p.rows.iter().any(|&r| usize::from(r) >= in_h)
        || p.columns.iter().any(|&c| usize::from(c) >= in_w)
    {
        return Err(Error::Parameters {
            what: "resize input",
            problem: "a source row or column is outside the input",
        });
    }
    let mut o = 0;
    for b in 0..batches {
        for &y in p.rows {
            for &x in p.columns {
                let from = ((b * in_h + usize::from(y)) * in_w + usize::from(x)) * pixel;
                output[o..o + pixel].copy_from_slice(&input[from..from + pixel]);
                o += pixel;
            }
        }
    }
    Ok(())
}
