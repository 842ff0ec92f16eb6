//! Outputs written over the input they are the last reader of: which shifts a kernel
//! certifies, and how it reads and writes one region that holds both.
//!
//! A kernel writes its output elements one after another (its loop order) and reads each
//! element's inputs just before writing it. Placing the output `d` bytes from the input
//! (`d` = output start less input start) is safe when no output element lands on an input
//! byte that is still to be read: for output element `j` (`eo` bytes each, written in
//! order), with `m(j)` the lowest input element (`ei` bytes each) any later output element
//! reads, it is enough that `d + (j + 1)·eo <= m(j)·ei`. So every `d` up to
//!
//! ```text
//! most = min over j of  m(j)·ei - (j + 1)·eo
//! ```
//!
//! is safe, and `most + 1` is not: at the `j` that attains it, the output's last byte
//! covers an input byte read later. [`Window`] is that bound; shifts at which the two do
//! not meet at all are always allowed. The tests run each kernel over a traced input and
//! compute the same bound from the reads and writes it actually made.

use core::cell::Cell;
use core::ops::Range;

use crate::Error;

/// The shifts `output start - input start` (bytes) at which a kernel may write its
/// output over its input: every shift up to [`Window::most`], and every shift at which the
/// two do not meet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The highest shift that is safe: the output may start this many bytes after the
    /// input's start (before it, when negative), or anywhere lower.
    pub most: isize,
    /// The input's bytes.
    pub input: usize,
    /// The output's bytes.
    pub output: usize,
}

impl Window {
    /// Whether the kernel may run with its output `shift` bytes from its input.
    pub fn allows(&self, shift: isize) -> bool {
        let apart = shift <= -(self.output as isize) || shift >= self.input as isize;
        apart || shift <= self.most
    }

    /// The shifts at which input and output meet and the kernel is safe, as the planner
    /// takes them (`[lo, hi]`); `None` if there are none.
    pub fn shifts(&self) -> Option<[i64; 2]> {
        let lo = 1 - self.output as i64;
        let hi = (self.most as i64).min(self.input as i64 - 1);
        (lo <= hi).then_some([lo, hi])
    }
}

/// The window of a kernel that works element by element, in order: output element `j`
/// (`eo` bytes) written right after input element `j` (`ei` bytes) is read, `elements` of
/// each (the unary kernels, and ADD or MUL over an input they do not broadcast). Here
/// `m(j) = j + 1` for every `j` but the last, which no later read bounds, so
///
/// ```text
/// most = min over j < n - 1 of (j + 1)·(ei - eo)
/// ```
///
/// that is `ei - eo` when the input's elements are at least as wide (0 for int8 to int8:
/// in place, or the output anywhere below), `(n - 1)·(ei - eo)` when they are narrower
/// (DEQUANTIZE's four-byte floats must start well below their int8 input), and no bound
/// for a single element.
pub fn elementwise_window(elements: usize, ei: usize, eo: usize) -> Window {
    let (n, ei, eo) = (elements as isize, ei as isize, eo as isize);
    let most = match n {
        0 | 1 => isize::MAX,
        _ if ei >= eo => ei - eo,
        _ => (n - 1).saturating_mul(ei - eo),
    };
    Window {
        most,
        input: elements.saturating_mul(ei as usize),
        output: elements.saturating_mul(eo as usize),
    }
}

/// An input byte as a kernel reads it: from a slice of its own, or from cells of a
/// region the output shares.
pub(crate) trait Load {
    fn load(&self) -> u8;

    /// Where `s` starts, where its elements are bytes in memory that the assembly of
    /// `crate::dsp` may read as such (`u8`, `Cell<u8>`); `None` for the tests' probes,
    /// which must see every load.
    #[cfg_attr(not(usmp_helium), allow(dead_code))]
    fn bytes(s: &[Self]) -> Option<*const u8>
    where
        Self: Sized,
    {
        let _ = s;
        None
    }
}

impl Load for u8 {
    #[inline(always)]
    fn load(&self) -> u8 {
        *self
    }

    fn bytes(s: &[u8]) -> Option<*const u8> {
        Some(s.as_ptr())
    }
}

impl Load for Cell<u8> {
    #[inline(always)]
    fn load(&self) -> u8 {
        self.get()
    }

    fn bytes(s: &[Cell<u8>]) -> Option<*const u8> {
        Some(s.as_ptr().cast())
    }
}

/// The `i`-th little-endian `f32` of `data` (callers checked the length).
#[inline(always)]
pub(crate) fn f32_at<T: Load>(data: &[T], i: usize) -> f32 {
    let w = &data[4 * i..4 * i + 4];
    f32::from_le_bytes([w[0].load(), w[1].load(), w[2].load(), w[3].load()])
}

/// A region of its own to write int8 outputs to, as the kernels take it: its length and
/// a store of element `o`.
pub(crate) fn apart(output: &mut [u8]) -> (usize, impl FnMut(usize, u8)) {
    (output.len(), |o, v| output[o] = v)
}

/// [`apart`] for float32 outputs (`o` counts elements of four bytes).
pub(crate) fn apart_f32(output: &mut [u8]) -> (usize, impl FnMut(usize, f32)) {
    (output.len(), |o, v| crate::bytes::put_f32(output, o, v))
}

/// [`apart`] over the output's cells in a shared region.
pub(crate) fn cells(output: &[Cell<u8>]) -> (usize, impl FnMut(usize, u8)) {
    (output.len(), |o, v| output[o].set(v))
}

/// Where a convolution's fast paths store their int8 outputs: element `o` at a time, or
/// a run of them. Any `FnMut(usize, u8)` is one, storing a run byte by byte (the tests'
/// traces see every store); [`Bytes`] and [`Cells`] store a run with one bounds check, so
/// a row of finished outputs costs a copy, not a call and a check per byte.
pub(crate) trait Put {
    /// Stores output element `o`.
    fn one(&mut self, o: usize, v: u8);

    /// Stores `bytes` at output elements `o..o + bytes.len()`.
    #[inline(always)]
    fn row(&mut self, o: usize, bytes: &[u8]) {
        for (k, &v) in bytes.iter().enumerate() {
            self.one(o + k, v);
        }
    }
}

impl<F: FnMut(usize, u8)> Put for F {
    #[inline(always)]
    fn one(&mut self, o: usize, v: u8) {
        self(o, v)
    }
}

/// An output region of its own.
pub(crate) struct Bytes<'a>(pub(crate) &'a mut [u8]);

impl Put for Bytes<'_> {
    #[inline(always)]
    fn one(&mut self, o: usize, v: u8) {
        self.0[o] = v;
    }

    #[inline(always)]
    fn row(&mut self, o: usize, bytes: &[u8]) {
        self.0[o..o + bytes.len()].copy_from_slice(bytes);
    }
}

/// An output's cells in a region it shares with its input.
pub(crate) struct Cells<'a>(pub(crate) &'a [Cell<u8>]);

impl Put for Cells<'_> {
    #[inline(always)]
    fn one(&mut self, o: usize, v: u8) {
        self.0[o].set(v);
    }

    #[inline(always)]
    fn row(&mut self, o: usize, bytes: &[u8]) {
        for (cell, &v) in self.0[o..o + bytes.len()].iter().zip(bytes) {
            cell.set(v);
        }
    }
}

/// [`apart_f32`] over the output's cells in a shared region.
pub(crate) fn cells_f32(output: &[Cell<u8>]) -> (usize, impl FnMut(usize, f32)) {
    (output.len(), |o, v: f32| {
        for (cell, byte) in output[4 * o..4 * o + 4].iter().zip(v.to_le_bytes()) {
            cell.set(byte);
        }
    })
}

/// The input and the output of a kernel run over one region, as cells (both are read and
/// written through shared references, in the kernel's order), after checking that the
/// kernel's window allows the plan's shift.
pub(crate) fn split<'a>(
    region: &'a mut [u8],
    shared: &usmp::Shared,
    window: Window,
) -> Result<[&'a [Cell<u8>]; 2], Error> {
    let shift = shared.shift();
    if !window.allows(shift) {
        return Err(Error::Overlap {
            shift,
            most: window.most,
        });
    }
    let [input, output] = ranges(region.len(), shared)?;
    let cells = Cell::from_mut(region).as_slice_of_cells();
    Ok([&cells[input], &cells[output]])
}

/// The input's and the output's bytes in a region of `size` bytes, checked to lie in it.
pub(crate) fn ranges(size: usize, shared: &usmp::Shared) -> Result<[Range<usize>; 2], Error> {
    let [input, output] = [shared.input(), shared.output()];
    let end = input.end.max(output.end);
    if end > size {
        return Err(Error::TooSmall {
            what: "region of an output over its input",
            bytes: end,
            got: size,
        });
    }
    Ok([input, output])
}

/// The window of a kernel over NHWC tensors `input` and `output` (`width` bytes per
/// element) that writes output pixel after pixel, last dimension innermost, pixel
/// `(b, y, x)`'s channel `q` reading input elements from `first + (q / per)·step` up, where
/// `first` is the element of cell `first_cell(y, x) = (y0, x0)` of batch `b`, channel 0
/// (`None`: the pixel reads nothing). Output channels other than `per·groups` are shapes
/// the kernel refuses: nothing is certified.
pub(crate) fn nhwc_window(
    [input, output]: [[usize; 4]; 2],
    width: usize,
    [per, groups, step]: [usize; 3],
    first_cell: impl Fn(usize, usize) -> Option<(usize, usize)>,
) -> Window {
    let [batches, in_h, in_w, in_c] = input;
    let [_, out_h, out_w, channels] = output;
    let mut bound = Most::new(per, groups, step, width);
    // Last pixel first, by nested loops (no division per pixel: every call over its input
    // computes this before it runs).
    for b in (0..batches).rev() {
        for y in (0..out_h).rev() {
            let row = (b * out_h + y) * out_w;
            for x in (0..out_w).rev() {
                let first = first_cell(y, x).map(|(y0, x0)| ((b * in_h + y0) * in_w + x0) * in_c);
                bound.pixel(row + x, first);
            }
        }
    }
    let elements = |shape: [usize; 4]| width * shape.iter().product::<usize>();
    Window {
        most: if per * groups == channels {
            bound.most
        } else {
            isize::MIN
        },
        input: elements(input),
        output: elements(output),
    }
}

/// The bound `most` over a kernel whose output is written pixel by pixel, each pixel's
/// `per * groups` elements in order, element `q` of a pixel reading input elements from
/// `first + (q / per) * step` up (and nothing below), where `first` is the lowest input
/// element the pixel reads (`None`: it reads nothing), given pixel by pixel, last pixel
/// first ([`Most::pixel`]); `width` is the bytes per element of input and output.
///
/// Within a pixel at element index `J0`, with `later` the lowest first read of the pixels
/// after it, `m(j)` is `min(first read of element j + 1, later)`. The terms of `most` are
/// then: for the pixel's last element, `later·w - (J0 + n)·w`; for element `q' - 1` whose
/// successor `q'` is in the pixel, `(first + g·step)·w - (J0 + q')·w` with `g = q' / per`,
/// least at each group's last `q'`, `(g + 1)·per - 1`, and linear in `g`: its least is at
/// the lowest group with such a `q' >= 1` or at the last group.
struct Most {
    /// Elements per pixel (`per * groups`), and `per`, `groups`, `step` as above.
    n: usize,
    per: usize,
    groups: usize,
    step: usize,
    /// Bytes per element.
    w: isize,
    /// The bound over the pixels given so far.
    most: isize,
    /// The lowest first read of the pixels given so far.
    later: Option<usize>,
}

impl Most {
    fn new(per: usize, groups: usize, step: usize, width: usize) -> Self {
        Most {
            n: per * groups,
            per,
            groups,
            step,
            w: width as isize,
            most: isize::MAX,
            later: None,
        }
    }

    /// The pixel at index `pixel` (pixels are given last first) whose lowest read is
    /// `first`.
    #[inline(always)]
    fn pixel(&mut self, pixel: usize, first: Option<usize>) {
        let (n, per, w) = (self.n, self.per, self.w);
        let j0 = (pixel * n) as isize;
        if let Some(l) = self.later {
            self.most = self.most.min(l as isize * w - (j0 + n as isize) * w);
        }
        if let Some(first) = first {
            let lowest = if per >= 2 { 0 } else { 1 };
            for g in [lowest, self.groups.saturating_sub(1)] {
                if g < self.groups && (g + 1) * per >= 2 {
                    let q = ((g + 1) * per - 1) as isize;
                    let read = (first + g * self.step) as isize;
                    self.most = self.most.min(read * w - (j0 + q) * w);
                }
            }
            self.later = Some(self.later.map_or(first, |l| l.min(first)));
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
