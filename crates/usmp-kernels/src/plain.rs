//! A fast path's buffers laid over its call's kernel work (`crate::work`): the one place
//! outside `dsp` with `unsafe`, one cast of zeroed bytes to integer arrays.
#![allow(unsafe_code)]

/// Where each buffer [`Carve`] cuts starts: a multiple of this many bytes (`work::ALIGN`).
pub(crate) const ALIGN: usize = 8;

/// A type every pattern of zero bytes is a value of, with no invariant beyond its bytes.
///
/// # Safety
///
/// An implementation's every field (recursively) is an integer or an array of them, so
/// zeroed bytes of its size and alignment are a valid value; any padding between fields is
/// never read through the reference [`Carve::one`] returns.
pub(crate) unsafe trait Plain: Sized {}

// SAFETY: integers: zero is a value.
unsafe impl Plain for u8 {}
// SAFETY: as u8.
unsafe impl Plain for i16 {}
// SAFETY: as u8.
unsafe impl Plain for i32 {}
// SAFETY: as u8.
unsafe impl Plain for u32 {}
// SAFETY: an array of `Plain` elements: each element zeroed is one, with no padding.
unsafe impl<T: Plain, const N: usize> Plain for [T; N] {}
// SAFETY: each field is `Plain`; the padding rustc puts between them is not read.
unsafe impl<A: Plain, B: Plain> Plain for (A, B) {}
// SAFETY: as for pairs.
unsafe impl<A: Plain, B: Plain, C: Plain> Plain for (A, B, C) {}
// SAFETY: as for pairs.
unsafe impl<A: Plain, B: Plain, C: Plain, D: Plain> Plain for (A, B, C, D) {}

/// Work cut into buffers one after another, each starting at a multiple of
/// [`ALIGN`] and as long as its call needs ([`carved`] bytes each):
/// sized to the call, or a fixed type ([`Carve::one`]).
pub(crate) struct Carve<'w>(&'w mut [u8]);

impl<'w> Carve<'w> {
    /// The whole of `work`, nothing cut yet.
    pub(crate) fn new(work: &'w mut [u8]) -> Self {
        Carve(work)
    }

    /// `n` zeroed `T`s from the next multiple of `ALIGN`; `None` where the work left is
    /// too short.
    pub(crate) fn slice<T: Plain>(&mut self, n: usize) -> Option<&'w mut [T]> {
        const { assert!(align_of::<T>() <= ALIGN) };
        let work = core::mem::take(&mut self.0);
        let skip = work.as_ptr().align_offset(ALIGN);
        let len = n.checked_mul(size_of::<T>())?;
        let end = skip.checked_add(len)?;
        if end > work.len() {
            return None;
        }
        let (bytes, rest) = work[skip..].split_at_mut(len);
        self.0 = rest;
        let at = bytes.as_mut_ptr().cast::<T>();
        // SAFETY: `at` points at `len = n * size_of::<T>()` bytes of `work`, borrowed
        // mutably for `'w` and handed out once (the rest of `work` is kept apart), starting
        // at a multiple of `ALIGN`, which `T`'s alignment divides (asserted above):
        // written zero (as `n` `T`s) they are `n` values of `T` (`Plain`).
        unsafe {
            at.write_bytes(0, n);
            Some(core::slice::from_raw_parts_mut(at, n))
        }
    }

    /// One zeroed `T`, as [`Carve::slice`]: a fast path's buffers of fixed size, cleared as
    /// its stack arrays were.
    pub(crate) fn one<T: Plain>(&mut self) -> Option<&'w mut T> {
        self.slice::<T>(1)?.first_mut()
    }
}

/// The bytes [`Carve::slice`] uses for `n` `T`s, the next one's alignment included.
pub(crate) const fn carved<T>(n: usize) -> usize {
    (n * size_of::<T>()).next_multiple_of(ALIGN)
}
