//! The byte-level helpers every kernel shares: size checks, reading int8 and
//! little-endian int32 and float32 operands, requantizing an integer accumulator and
//! clamping a float one.

use crate::Error;
use crate::fixed::multiply_by_quantized_multiplier;
use crate::params::Range;

/// `slice` holds at least `bytes` bytes, or [`Error::TooSmall`] naming `what`.
pub(crate) fn want(what: &'static str, slice: &[u8], bytes: usize) -> Result<(), Error> {
    want_len(what, slice.len(), bytes)
}

/// [`want`] for a region known by its length.
pub(crate) fn want_len(what: &'static str, len: usize, bytes: usize) -> Result<(), Error> {
    if len < bytes {
        return Err(Error::TooSmall {
            what,
            bytes,
            got: len,
        });
    }
    Ok(())
}

/// The `i`-th little-endian `i32` of `data` (callers checked the length).
pub(crate) fn i32_at(data: &[u8], i: usize) -> i32 {
    i32::from_le_bytes(word(data, i))
}

/// The `i`-th 4-byte word of `data`, with one bounds check.
fn word(data: &[u8], i: usize) -> [u8; 4] {
    let mut w = [0; 4];
    w.copy_from_slice(&data[4 * i..4 * i + 4]);
    w
}

/// The `i`-th little-endian `i16` of `data`.
pub(crate) fn i16_at(data: &[u8], i: usize) -> i16 {
    i16::from_le_bytes([data[2 * i], data[2 * i + 1]])
}

/// The `i`-th little-endian `f32` of `data`.
pub(crate) fn f32_at(data: &[u8], i: usize) -> f32 {
    f32::from_le_bytes(word(data, i))
}

/// The little-endian `f32`s of `data`, in order (a trailing partial word is left out).
pub(crate) fn f32s(data: &[u8]) -> impl Iterator<Item = f32> + '_ {
    data.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

/// Stores `v` as the `i`-th little-endian `f32` of `data`.
pub(crate) fn put_f32(data: &mut [u8], i: usize, v: f32) {
    data[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
}

/// TFLite's `ActivationFunctionWithMinMax` on floats: `std::min(std::max(x, lo), hi)`,
/// comparisons written out so a NaN passes through as it does there (`f32::clamp` and
/// `f32::max` would not).
pub(crate) fn clamp_f32(x: f32, [lo, hi]: [f32; 2]) -> f32 {
    let x = if x < lo { lo } else { x };
    if hi < x { hi } else { x }
}

/// A byte as the `i8` it holds, widened.
pub(crate) fn int8(byte: u8) -> i32 {
    i32::from(byte as i8)
}

/// Rescales an accumulator to the output's zero point and clamps it to `range`.
pub(crate) fn requantize(acc: i32, multiplier: i32, shift: i32, offset: i32, range: Range) -> u8 {
    let v = multiply_by_quantized_multiplier(acc, multiplier, shift);
    to_output(v, offset, range)
}

/// A rescaled value moved to the output's zero point `offset` and clamped to `range`:
/// the int8 byte.
#[inline(always)]
pub(crate) fn to_output(rescaled: i32, offset: i32, range: Range) -> u8 {
    rescaled.wrapping_add(offset).clamp(range[0], range[1]) as i8 as u8
}

/// Entry `i` of a per-channel list, or its only entry for per-tensor quantization.
pub(crate) fn channel(list: &[i32], i: usize) -> i32 {
    match list {
        [one] => *one,
        // Lengths are checked against the channels before a kernel runs.
        _ => list.get(i).copied().unwrap_or(0),
    }
}
