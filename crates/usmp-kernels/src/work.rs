//! Kernel work: the buffers a fast path keeps during one call (pixels laid out or widened
//! for the loop, blocks of sums, a patch, a pixel's list of taps, per-channel constants
//! folded for the call), planned like any scratch instead of taken from the stack.
//!
//! Which path a call takes depends on the target (`usmp_dsp`, `usmp_helium`, set by the
//! build script from the same functions usmp-build reads, `Path::of`), so the bytes a
//! call needs are [`bytes`]`(kernel, path)`. usmp-build plans that much as the call's
//! last scratch buffer, named `kernel work`, aligned to [`ALIGN`], and shows it in the
//! report; [`run`](crate::run) hands it to the kernel and refuses a call whose plan gave
//! less ([`Error::Work`](crate::Error::Work)). A kernel function called directly takes its
//! `work` as an argument: with fewer bytes than [`bytes`] it runs the general loops
//! (the same outputs, slower).

use crate::Kernel;
use crate::conv::{chunked, depthwise, fast, helium, pairs, patch};
use crate::params::Conv;

/// The alignment of a call's work, in bytes: every buffer in it starts aligned.
pub const ALIGN: usize = crate::plain::ALIGN;

/// The kernels' paths that keep buffers of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Portable Rust and the Thumb-2 loops without the DSP extension: Cortex-M0 to M3,
    /// Armv8-M without Helium, RISC-V, the host.
    Portable,
    /// The Armv7E-M DSP extension's lanes (thumbv7em: Cortex-M4, M7).
    Dsp,
    /// Helium's vector loops (Armv8.1-M with MVE: Cortex-M55, M85).
    Helium,
}

impl Path {
    /// The path this build of the kernels takes.
    pub const TARGET: Path = if cfg!(usmp_dsp) {
        Path::Dsp
    } else if cfg!(usmp_helium) {
        Path::Helium
    } else {
        Path::Portable
    };

    /// The path of a target triple compiled with `flags` (cargo's
    /// `CARGO_ENCODED_RUSTFLAGS`): what [`Path::TARGET`] is in the kernels built for it.
    #[cfg(feature = "prepare")]
    pub fn of(target: &str, flags: &str) -> Path {
        if crate::target::dsp(target) {
            Path::Dsp
        } else if crate::target::helium(flags) {
            Path::Helium
        } else {
            Path::Portable
        }
    }

    /// The path of the target a build script is building for, from cargo's environment
    /// (`TARGET`, `CARGO_ENCODED_RUSTFLAGS`); [`Path::Portable`] outside a build script.
    #[cfg(feature = "prepare")]
    pub fn from_env() -> Path {
        let var = |name| std::env::var(name).unwrap_or_default();
        Path::of(&var("TARGET"), &var("CARGO_ENCODED_RUSTFLAGS"))
    }
}

/// The bytes of work a call of `kernel` needs on `path`: the most any of the paths the
/// kernel may take there keeps (0 where none keeps any). A stage's is its parts' most
/// [`in_stage`], after its line buffers ([`stage::work_bytes`](crate::stage::work_bytes)).
pub fn bytes(kernel: &Kernel<'_>, path: Path) -> usize {
    match kernel {
        Kernel::Conv2d(p) => conv(p, false, path),
        Kernel::FullyConnected(p) => {
            // Always apart: the product runs over an input and an output of its own.
            crate::dense::as_pointwise(p).map_or(0, |c| pointwise(&c, path, false))
        }
        _ => in_stage(kernel, path),
    }
}

/// [`bytes`] of `kernel` run as a part of a streamed stage: a row at a time, its input
/// and output apart (a 1x1 CONV_2D copies no pixel pairs then).
pub fn in_stage(kernel: &Kernel<'_>, path: Path) -> usize {
    match kernel {
        Kernel::Conv2d(p) if fast::pointwise(p) => pointwise(p, path, false),
        Kernel::Conv2d(p) => conv(p, false, path),
        Kernel::DepthwiseConv2d(p) => conv(p, true, path),
        // Helium's block of outputs (any call: those its loop declines keep it unused).
        Kernel::Add(_) | Kernel::Mul(_) if path == Path::Helium => crate::elementwise::WORK,
        _ => 0,
    }
}

/// [`bytes`] of an int8 CONV_2D (or, `depthwise`, DEPTHWISE_CONV_2D): the most of the
/// paths the call may take on `path` (each keeps its buffers only while it runs), a 1x1
/// one's over its input included.
pub(crate) fn conv(p: &Conv<'_>, depthwise: bool, path: Path) -> usize {
    if depthwise {
        let helium = match path {
            Path::Helium => chunked::work_bytes(p),
            Path::Dsp | Path::Portable => 0,
        };
        let others =
            depthwise::work_bytes(p).max(fast::multiplier_work_bytes(p, path == Path::Dsp));
        helium.max(others)
    } else if fast::pointwise(p) {
        pointwise(p, path, true)
    } else {
        patch::work_bytes(p)
    }
}

/// The work of a 1x1 CONV_2D's blocked product, `over` its input or apart.
fn pointwise(p: &Conv<'_>, path: Path, over: bool) -> usize {
    match path {
        Path::Helium => helium::work_bytes(p),
        Path::Dsp | Path::Portable => pairs::work_bytes(p, over),
    }
}

/// Whether `work` holds `need` bytes from its first byte aligned to [`ALIGN`].
pub(crate) fn holds(work: &[u8], need: usize) -> bool {
    let skip = work.as_ptr().align_offset(ALIGN);
    skip.checked_add(need).is_some_and(|end| end <= work.len())
}

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;
    use super::{ALIGN, holds};
    use crate::plain::Carve;
    use std::vec::Vec;

    /// Work enough for any call of the kernels' tests on any path.
    pub(crate) fn any() -> Vec<u8> {
        std::vec![0xA5; 16 * 1024 + ALIGN]
    }

    /// Exactly `n` bytes of work from an aligned start, inside `buffer`: as a plan gives
    /// [`bytes`](super::bytes), so a test sees the path taken with no byte to spare.
    pub(crate) fn exactly(buffer: &mut Vec<u8>, n: usize) -> &mut [u8] {
        buffer.clear();
        buffer.resize(n + ALIGN, 0xA5);
        let skip = buffer.as_ptr().align_offset(ALIGN);
        &mut buffer[skip..skip + n]
    }

    /// `path` run with [`ALIGN`] bytes less work than `need` (it must decline, having
    /// done nothing), then with exactly `need`: what it returns then. So a test that
    /// asserts the path taken also asserts that [`bytes`](super::bytes) is enough, and
    /// tight to the padding that aligns its last buffer.
    pub(crate) fn exactly_enough(need: usize, mut path: impl FnMut(&mut [u8]) -> bool) -> bool {
        let mut buffer = Vec::new();
        if need > 0 {
            let short = exactly(&mut buffer, need.saturating_sub(ALIGN));
            assert!(
                !path(short),
                "taken with {} bytes of work",
                need.saturating_sub(ALIGN)
            );
        }
        path(exactly(&mut buffer, need))
    }

    #[test]
    fn carve_zeroes_and_aligns_or_refuses() {
        let mut work = std::vec![0xFFu8; 64];
        let n = work.len();
        let skip = work.as_ptr().align_offset(4);
        let words: &mut [i32; 8] = Carve::new(&mut work)
            .one()
            .expect("64 bytes hold 32 aligned");
        assert_eq!(*words, [0; 8]);
        words[7] = -1;
        assert!(
            Carve::new(&mut work[skip + 1..])
                .one::<[i32; 16]>()
                .is_none()
        );
        assert!(Carve::new(&mut work).one::<[u8; 65]>().is_none());
        assert!(holds(&work, n - work.as_ptr().align_offset(ALIGN)));
        assert!(!holds(&work, n + 1));
    }
}
