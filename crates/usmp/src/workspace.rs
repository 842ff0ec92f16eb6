//! Pool storage and the one handle to it.

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::mem::MaybeUninit;

use crate::once::TakeOnce;
use crate::plan::{PoolInfo, PoolKind};

/// The uninitialised bytes of one workspace pool: a `static` in the pool's link section,
/// reached only through a [`Workspace`].
#[repr(transparent)]
pub struct Storage<const N: usize>(UnsafeCell<MaybeUninit<[u8; N]>>);

// SAFETY: `Storage` hands out nothing itself; its bytes are reached only through the one
// `Workspace` handle of its pools (`Pools`'s contract), which is borrowed mutably while
// any region of them is alive, so no two threads can touch them at once.
unsafe impl<const N: usize> Sync for Storage<N> {}

impl<const N: usize> Storage<N> {
    /// Storage of `N` uninitialised bytes.
    #[allow(clippy::new_without_default)] // a `static` initialiser: must be `const`
    pub const fn new() -> Self {
        Storage(UnsafeCell::new(MaybeUninit::uninit()))
    }

    /// Its first byte.
    pub const fn base(&self) -> *mut u8 {
        self.0.get().cast()
    }

    /// Its size in bytes, `N`: generated code passes it to
    /// [`check_module`](crate::check_module), tying each pool's planned size to its
    /// storage.
    pub const fn size(&self) -> usize {
        N
    }
}

impl<const N: usize> core::fmt::Debug for Storage<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Storage<{N}>")
    }
}

/// A set of pools: generated code implements it once per `usmp.toml` or `usmp_pools!`.
///
/// # Safety
///
/// - For every workspace pool `p` of [`Pools::POOLS`], [`Pools::base`]`(p)` points to
///   `POOLS[p].size` bytes, aligned to `POOLS[p].alignment`, valid for the whole program
///   and reached by nothing but this crate (a private `static` [`Storage`]).
/// - [`Pools::once`] returns the same flag every time, used for nothing else.
/// - [`Pools::load`] lists, for every model planned in these pools and every pool of
///   `POOLS` that is `loaded`, that model's image and the storage of its copy
///   ([`Model::copy`](crate::Model::copy)): storage of the image's length, reached by
///   nothing but this crate, apart from the image and from every other copy.
pub unsafe trait Pools: 'static {
    /// Every pool, in preference order; [`Buffer::pool`](crate::Buffer::pool) indexes it.
    const POOLS: &'static [PoolInfo<'static>];

    /// The first byte of workspace pool `pool`; null for any other index.
    fn base(pool: usize) -> *mut u8;

    /// The flag [`Workspace::take`] sets.
    fn once() -> &'static TakeOnce;

    /// The `i`-th copy taking the workspace makes: an image of constants (in flash) and
    /// where it runs from (RAM of the image's length); `None` past the last. Pools with
    /// no constant pool run from RAM list none, the default.
    fn load(i: usize) -> Option<(&'static [u8], *mut u8)> {
        let _ = i;
        None
    }
}

/// The one handle to every workspace pool of `P`. A model's [`Session`](crate::Session)
/// borrows it mutably while it hands out regions, so the same bytes are never reached
/// twice. It has a private field: code outside this crate cannot make one, only
/// [`Workspace::take`] and [`Workspace::steal`] can.
pub struct Workspace<P: Pools> {
    _pools: PhantomData<P>,
}

impl<P: Pools> core::fmt::Debug for Workspace<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Workspace")
            .field("pools", &P::POOLS.len())
            .finish()
    }
}

impl<P: Pools> Workspace<P> {
    /// Returns the handle the first time it is called and `None` after. It zeroes the
    /// workspace pools (uninitialised `NOLOAD` memory at start-up), so every byte reached
    /// through it is initialised and state starts at zero, and copies the images of the
    /// constant pools run from RAM ([`Pools::load`]) into place: exactly once, before
    /// any session can read them.
    pub fn take() -> Option<Self> {
        if !P::once().take() {
            return None;
        }
        // SAFETY: the flag was not set, so this is the first and only handle.
        Some(unsafe { Self::init() })
    }

    /// Returns a handle whether or not one was taken, zeroing the pools and copying the
    /// constants run from RAM again.
    ///
    /// # Safety
    ///
    /// No other handle of `P` may be used again, and no region from one may be alive:
    /// for example, after a reset path that forgets the first handle.
    pub unsafe fn steal() -> Self {
        P::once().take();
        // SAFETY: by the caller's promise, nothing else refers to the pools' bytes.
        unsafe { Self::init() }
    }

    /// Zeroes every workspace pool, copies the constants run from RAM, and makes the
    /// handle.
    ///
    /// # Safety
    ///
    /// No reference to any pool byte or copy of constants is alive or will be used
    /// through another handle.
    unsafe fn init() -> Self {
        for (p, pool) in P::POOLS.iter().enumerate() {
            if pool.kind == PoolKind::Workspace {
                // SAFETY: `base(p)` points to `pool.size` bytes (the `Pools` contract)
                // that nothing refers to (the caller's promise).
                unsafe { core::ptr::write_bytes(P::base(p), 0, pool.size) };
            }
        }
        let mut i = 0;
        while let Some((image, copy)) = P::load(i) {
            // SAFETY: `copy` is storage of `image.len()` bytes apart from the image (the
            // `Pools` contract) that nothing refers to (the caller's promise).
            unsafe { core::ptr::copy_nonoverlapping(image.as_ptr(), copy, image.len()) };
            i += 1;
        }
        Workspace {
            _pools: PhantomData,
        }
    }

    /// The pools, as [`Pools::POOLS`].
    pub fn pools(&self) -> &'static [PoolInfo<'static>] {
        P::POOLS
    }
}
