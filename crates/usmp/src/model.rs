//! The [`Model`] trait every generated model implements: its plan, its pools, and where
//! its constants are (as stored, and where a pool run from RAM has its copy).

use crate::plan::{Buffer, ModelInfo};
use crate::workspace::Pools;

/// A planned model: generated code implements it for one unit struct per model.
///
/// # Safety
///
/// - [`check`](crate::check)`(Self::Pools::POOLS, Self::INFO)` returns `Ok` (generated code
///   asserts it in a `const`, so a file that breaks it does not compile);
/// - [`Model::constants`]`(p)` is this model's image in constant pool `p`, exactly
///   `INFO.images[p]` bytes, and empty for every other index;
/// - for every pool `p` with `loaded` set, [`Model::copy`]`(p)` is as documented there,
///   and `Self::Pools`' [`Pools::load`] lists the pair `(constants(p), copy(p))`.
pub unsafe trait Model: 'static {
    /// The pools it is planned in.
    type Pools: Pools;
    /// Its plan.
    const INFO: &'static ModelInfo<'static>;

    /// Its constants in constant pool `pool`: the image as the firmware stores it (in
    /// flash), also for a pool run from RAM.
    fn constants(pool: usize) -> &'static [u8];

    /// For a constant pool run from RAM ([`PoolInfo::loaded`](crate::PoolInfo::loaded)):
    /// the first byte of this model's copy of its image there, `INFO.images[pool]`
    /// bytes aligned to the pool's alignment, private to the generated code and filled
    /// by [`Workspace::take`](crate::Workspace::take) (see [`Pools::load`]). Null for
    /// any other index, which is the default.
    fn copy(pool: usize) -> *mut u8 {
        let _ = pool;
        core::ptr::null_mut()
    }

    /// The bytes of constant buffer `b`; empty for a workspace buffer.
    fn constant(b: &Buffer) -> &'static [u8] {
        let end = b.offset.saturating_add(b.len);
        Self::constants(b.pool).get(b.offset..end).unwrap_or(&[])
    }
}
