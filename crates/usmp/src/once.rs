//! A flag that says yes once: the guard of [`Workspace::take`](crate::Workspace::take),
//! portable to targets without compare-and-swap.

use core::sync::atomic::{AtomicBool, Ordering};

/// Yes to the first [`TakeOnce::take`], no to every later one, on every target.
///
/// Where the target has compare-and-swap it is one atomic swap. Cortex-M0/M0+ and RV32IMC
/// have only atomic loads and stores, so there the load and the store happen inside
/// `critical_section::with`, as svd2rust's `Peripherals::take` does: the firmware links
/// a critical-section implementation (for a single-core Cortex-M, cortex-m's feature
/// `critical-section-single-core`; for RISC-V, riscv's `critical-section-single-hart`).
///
/// A `static` of it is zero-initialised, so it lives in `.bss`, which start-up code
/// clears; never put it in a `NOLOAD` section.
#[derive(Debug)]
pub struct TakeOnce(AtomicBool);

impl TakeOnce {
    /// A flag not yet taken.
    pub const fn new() -> Self {
        TakeOnce(AtomicBool::new(false))
    }

    /// `true` the first time it is called, `false` after.
    pub fn take(&self) -> bool {
        !self.swap_in()
    }

    /// Whether it has been taken.
    pub fn is_taken(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// Sets the flag and returns what it was.
    #[cfg(all(target_has_atomic = "8", not(feature = "always-critical-section")))]
    fn swap_in(&self) -> bool {
        self.0.swap(true, Ordering::AcqRel)
    }

    /// Sets the flag and returns what it was, with no other code running in between.
    #[cfg(any(not(target_has_atomic = "8"), feature = "always-critical-section"))]
    fn swap_in(&self) -> bool {
        critical_section::with(|_| {
            let was = self.0.load(Ordering::Acquire);
            self.0.store(true, Ordering::Release);
            was
        })
    }
}

impl Default for TakeOnce {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::TakeOnce;

    #[test]
    fn yes_once() {
        let once = TakeOnce::new();
        assert!(!once.is_taken());
        assert!(once.take());
        assert!(once.is_taken());
        assert!(!once.take());
        assert!(!once.take());
    }

    #[test]
    fn one_winner_among_threads() {
        extern crate std;
        static ONCE: TakeOnce = TakeOnce::new();
        let winners: usize = std::thread::scope(|s| {
            let handles: std::vec::Vec<_> = (0..8).map(|_| s.spawn(|| ONCE.take())).collect();
            handles
                .into_iter()
                .map(|h| usize::from(h.join().unwrap_or(false)))
                .sum()
        });
        assert_eq!(winners, 1);
    }
}
