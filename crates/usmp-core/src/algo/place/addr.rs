//! The width the gap searches keep address ranges in.
//!
//! The filed ranges are what a placement reads most (a first-fit search on a million
//! random lives passes about 950 of them, and a filing searches some forty lists), and on
//! large problems they no longer fit in the cache. Where no end can pass 2^32 - 1 they are
//! kept in 32 bits, eight to a cache line instead of four; the searches still compute in
//! 64 bits, so the offsets found are the same in either width.

use std::fmt::Debug;

/// An unsigned integer address ranges are stored in.
pub(super) trait Addr: Copy + Ord + Default + Debug + Send + Sync + Into<u64> {
    /// `x` in this width. The placement keeps ranges in a width only when every end it
    /// can produce fits (see [`fits_in_32_bits`]).
    fn narrow(x: u64) -> Self;
}

impl Addr for u64 {
    fn narrow(x: u64) -> u64 {
        x
    }
}

impl Addr for u32 {
    fn narrow(x: u64) -> u32 {
        debug_assert!(x <= u64::from(u32::MAX), "{x} past 32 bits");
        // Never saturates: 32 bits are chosen only when every end fits. If one did, the
        // plan would fail the verifier rather than go out wrong.
        u32::try_from(x).unwrap_or(u32::MAX)
    }
}

/// The range `[start, end)` in the width `W`.
pub(super) fn narrow<W: Addr>((start, end): (u64, u64)) -> (W, W) {
    (W::narrow(start), W::narrow(end))
}

/// The range `[start, end)` in 64 bits, where the searches compute.
pub(super) fn widen<W: Addr>(&(start, end): &(W, W)) -> (u64, u64) {
    (start.into(), end.into())
}

/// Whether every end a gap-search placement can produce fits in 32 bits, given each
/// buffer's size and its largest alignment among its candidate pools: a buffer goes at
/// most its alignment less one byte above the ranges already placed, so no end passes
/// the sum of sizes and alignments.
pub(super) fn fits_in_32_bits(buffers: impl Iterator<Item = (u64, u64)>) -> bool {
    let mut reach = 0u64;
    for (size, align) in buffers {
        reach = reach
            .saturating_add(size)
            .saturating_add(align.saturating_sub(1));
    }
    reach <= u64::from(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_stay_in_32_bits_only_while_every_end_fits() {
        let max = u64::from(u32::MAX);
        assert!(fits_in_32_bits([(max - 10, 1), (10, 1)].into_iter()));
        assert!(!fits_in_32_bits([(max - 10, 1), (11, 1)].into_iter()));
        // Each alignment may leave all but one of its bytes unused.
        assert!(fits_in_32_bits([(max - 10, 4), (7, 1)].into_iter()));
        assert!(!fits_in_32_bits([(max - 10, 4), (8, 1)].into_iter()));
        assert!(!fits_in_32_bits([(u64::MAX, u64::MAX), (1, 1)].into_iter()));
        assert_eq!(u32::narrow(max), u32::MAX);
        assert_eq!(u64::narrow(u64::MAX), u64::MAX);
    }
}
