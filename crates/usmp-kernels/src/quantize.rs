//! QUANTIZE between integer types, and the byte copy of RESHAPE and its kin: TensorFlow
//! Lite Micro's reference `Requantize`.
//!
//! Loop order: element by element, in order; element `i` of the output is written after
//! element `i` of the input is read and before element `i + 1` is: the window of
//! [`crate::overlap::elementwise_window`].

use crate::Error;
use crate::bytes::want_len;
use crate::fixed::multiply_by_quantized_multiplier;
use crate::overlap::{Load, apart, cells, split};
use crate::params::{Int, Requantize};

/// Integer element `i` of `data`.
#[inline(always)]
pub(crate) fn read<T: Load>(from: Int, data: &[T], i: usize) -> i32 {
    match from {
        Int::I8 => i32::from(data[i].load() as i8),
        Int::I16 => i32::from(i16::from_le_bytes([
            data[2 * i].load(),
            data[2 * i + 1].load(),
        ])),
        Int::I32 => {
            let w = &data[4 * i..4 * i + 4];
            i32::from_le_bytes([w[0].load(), w[1].load(), w[2].load(), w[3].load()])
        }
    }
}

/// Writes `v` as integer element `i` through `put` (a store of byte `o`), the low bits
/// as C++'s cast.
#[inline(always)]
pub(crate) fn write(to: Int, put: &mut impl FnMut(usize, u8), i: usize, v: i32) {
    match to {
        Int::I8 => put(i, v as i8 as u8),
        Int::I16 => {
            for (k, b) in (v as i16).to_le_bytes().into_iter().enumerate() {
                put(2 * i + k, b);
            }
        }
        Int::I32 => {
            for (k, b) in v.to_le_bytes().into_iter().enumerate() {
                put(4 * i + k, b);
            }
        }
    }
}

/// QUANTIZE and RELU: `(x - input zero) * scale + output zero`, clamped to the output
/// type and to `clamp`.
pub fn requantize(p: &Requantize, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    requantize_with(p, input, apart(output))
}

/// [`requantize`] over one region holding its input and its output where `shared` says,
/// at a shift its window allows.
pub fn requantize_over(
    p: &Requantize,
    region: &mut [u8],
    shared: &usmp::Shared,
) -> Result<(), Error> {
    let window = crate::overlap::elementwise_window(p.elements, p.from.bytes(), p.to.bytes());
    let [input, output] = split(region, shared, window)?;
    requantize_with(p, input, cells(output))
}

/// [`requantize`] from an input read as `T`, each output byte stored by `put`.
#[inline(always)]
pub(crate) fn requantize_with<T: Load>(
    p: &Requantize,
    input: &[T],
    (len, mut put): (usize, impl FnMut(usize, u8)),
) -> Result<(), Error> {
    want_len("quantize input", input.len(), p.elements * p.from.bytes())?;
    want_len("quantize output", len, p.elements * p.to.bytes())?;
    let [lo, hi] = p.to.range();
    let (lo, hi) = (lo.max(p.clamp[0]), hi.min(p.clamp[1]));
    for i in 0..p.elements {
        let x = read(p.from, input, i).wrapping_sub(p.input_zero);
        let v = multiply_by_quantized_multiplier(x, p.multiplier, p.shift)
            .wrapping_add(p.output_zero)
            .clamp(lo, hi);
        write(p.to, &mut put, i, v);
    }
    Ok(())
}

/// RESHAPE, SQUEEZE, EXPAND_DIMS: the input's bytes into the output. Planned in place
/// (an empty input), there is nothing to move.
pub fn copy(input: &[u8], output: &mut [u8]) -> Result<(), Error> {
    if input.is_empty() {
        return Ok(());
    }
    crate::bytes::want("reshape input", input, output.len())?;
    output.copy_from_slice(&input[..output.len()]);
    Ok(())
}

/// The shifts at which RESHAPE and its kin may write their output over their input,
/// `bytes` long each: every one. The copy moves the bytes as `memmove` does (forwards when
/// the output starts below the input, backwards otherwise), so placed at the same offset
/// it is a view of the input and moves nothing.
pub fn copy_window(bytes: usize) -> crate::overlap::Window {
    crate::overlap::Window {
        most: isize::MAX,
        input: bytes,
        output: bytes,
    }
}

/// [`copy`] over one region holding its input and its output where `shared` says: byte
/// by byte, forwards when the output starts below the input and backwards otherwise, as
/// `memmove` (a loop here: firmware often links no `memmove`).
pub fn copy_over(region: &mut [u8], shared: &usmp::Shared) -> Result<(), Error> {
    let [from, to] = crate::overlap::ranges(region.len(), shared)?;
    want_len("reshape input", from.len(), to.len())?;
    let n = to.len();
    if to.start <= from.start {
        for k in 0..n {
            region[to.start + k] = region[from.start + k];
        }
    } else {
        for k in (0..n).rev() {
            region[to.start + k] = region[from.start + k];
        }
    }
    Ok(())
}
