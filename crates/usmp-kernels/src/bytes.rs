//! The byte-level helpers every kernel shares: size checks, reading int8 and
//! little-endian int32 operands, and requantizing an accumulator.

use crate::Error;
use crate::fixed::multiply_by_quantized_multiplier;
use crate::params::Range;

/// `slice` holds at least `bytes` bytes, or [`Error::TooSmall`] naming `what`.
pub(crate) fn want(what: &'static str, slice: &[u8], bytes: usize) -> Result<(), Error> {
    if slice.len() < bytes {
        return Err(Error::TooSmall {
            what,
            bytes,
            got: slice.len(),
        });
    }
    Ok(())
}

/// The `i`-th little-endian `i32` of `data` (callers checked the length).
pub(crate) fn i32_at(data: &[u8], i: usize) -> i32 {
    let at = 4 * i;
    i32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
}

/// The `i`-th little-endian `i16` of `data`.
pub(crate) fn i16_at(data: &[u8], i: usize) -> i16 {
    i16::from_le_bytes([data[2 * i], data[2 * i + 1]])
}

/// A byte as the `i8` it holds, widened.
pub(crate) fn int8(byte: u8) -> i32 {
    i32::from(byte as i8)
}

/// Rescales an accumulator to the output's zero point and clamps it to `range`.
pub(crate) fn requantize(acc: i32, multiplier: i32, shift: i32, offset: i32, range: Range) -> u8 {
    let v = multiply_by_quantized_multiplier(acc, multiplier, shift).wrapping_add(offset);
    v.clamp(range[0], range[1]) as i8 as u8
}

/// Entry `i` of a per-channel list, or its only entry for per-tensor quantization.
pub(crate) fn channel(list: &[i32], i: usize) -> i32 {
    match list {
        [one] => *one,
        // Lengths are checked against the channels before a kernel runs.
        _ => list.get(i).copied().unwrap_or(0),
    }
}
