//! Counting guest instructions. QEMU runs with `-icount shift=0`: every guest instruction
//! advances its virtual clock by exactly 1 ns.
//!
//! - On Cortex-M, SysTick is clocked from that virtual clock; the ratio of instructions to
//!   ticks is measured once against a loop of known length ([`start`]), and a
//!   reading is exact to that ratio (40 or 31 instructions).
//! - On RISC-V, QEMU's `minstret` (and `mcycle`) read the instruction count itself when
//!   `-icount` is on, so the count is exact. [`start`] still runs a loop of known
//!   length and refuses to go on if `minstret` did not count it (QEMU run without
//!   `-icount`, where the counter follows the host's time).

/// Instructions per tick, as a ratio measured once (1 to 1 on RISC-V).
#[derive(Clone, Copy)]
pub(crate) struct Clock {
    /// Instructions of the calibration loop.
    pub(crate) instructions: u64,
    /// Ticks it took.
    pub(crate) ticks: u64,
}

impl Clock {
    /// Instructions run while `f` ran.
    pub(crate) fn count<T>(self, f: impl FnOnce() -> T) -> (T, u64) {
        let t0 = ticks();
        let out = f();
        let t1 = ticks();
        (out, (t1 - t0) * self.instructions / self.ticks)
    }
}

#[cfg(target_arch = "arm")]
use self::arm::ticks;
#[cfg(target_arch = "arm")]
pub(crate) use self::arm::{UNIT, start};
#[cfg(target_arch = "riscv32")]
use self::riscv::ticks;
#[cfg(target_arch = "riscv32")]
pub(crate) use self::riscv::{UNIT, start};

#[cfg(target_arch = "arm")]
mod arm {
    use core::sync::atomic::{AtomicU32, Ordering};
    use cortex_m::peripheral::SYST;
    use cortex_m::peripheral::syst::SystClkSource;
    use cortex_m_rt::exception;

    /// SysTick's reload: it counts down from here, 24 bits.
    const RELOAD: u32 = 0x00FF_FFFF;

    /// Times SysTick counted down to zero and reloaded.
    static WRAPS: AtomicU32 = AtomicU32::new(0);

    #[exception]
    fn SysTick() {
        // Only this handler writes it, and nothing preempts it: a load and a store
        // (Armv6-M has no atomic read-modify-write).
        WRAPS.store(WRAPS.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// SysTick ticks since it was started: the wraps, then the count down within one.
    pub(crate) fn ticks() -> u64 {
        loop {
            let wraps = WRAPS.load(Ordering::Relaxed);
            let now = SYST::get_current();
            // A wrap between the two reads: read again.
            if WRAPS.load(Ordering::Relaxed) == wraps {
                return (u64::from(wraps) << 24) + u64::from(RELOAD - now);
            }
        }
    }

    /// What one tick is, for the bench's first line.
    pub(crate) const UNIT: &str = "SysTick ticks";

    /// Starts SysTick on the core clock and measures `cortex_m::asm::delay`, whose loop
    /// runs `n + 1` times two instructions (`subs`, `bne`).
    pub(crate) fn start() -> super::Clock {
        let Some(core) = cortex_m::Peripherals::take() else {
            firmware_common::fail("the core peripherals were taken twice")
        };
        let mut syst = core.SYST;
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(RELOAD);
        syst.clear_current();
        syst.enable_interrupt();
        syst.enable_counter();
        // Cleared, the count reads 0 until the first tick loads RELOAD: start after it.
        while SYST::get_current() == 0 {}
        const N: u32 = 10_000_000;
        let t0 = ticks();
        cortex_m::asm::delay(N);
        let t1 = ticks();
        super::Clock {
            instructions: 2 * (u64::from(N) + 1),
            ticks: (t1 - t0).max(1),
        }
    }
}

#[cfg(target_arch = "riscv32")]
mod riscv {
    /// `minstret`: instructions retired (under `-icount`, QEMU's instruction count).
    pub(crate) fn ticks() -> u64 {
        riscv::register::minstret::read64()
    }

    /// What one tick is, for the bench's first line.
    pub(crate) const UNIT: &str = "minstret counts";

    /// Counts a loop of `2 * N` instructions (`addi`, `bnez`) by `minstret` and fails the
    /// run unless the count is that, give or take the reads around it.
    pub(crate) fn start() -> super::Clock {
        const N: u32 = 10_000_000;
        let t0 = ticks();
        // SAFETY: the loop reads and writes only the register it is given (counted
        // down to zero, then discarded), touches no memory and no stack.
        unsafe {
            core::arch::asm!(
                "2:",
                "addi {n}, {n}, -1",
                "bnez {n}, 2b",
                n = inout(reg) N => _,
                options(nomem, nostack),
            );
        }
        let counted = ticks() - t0;
        let expected = 2 * u64::from(N);
        if counted < expected || counted > expected + 64 {
            firmware_common::fail(
                "minstret did not count the calibration loop's instructions: run QEMU \
                     with -icount shift=0 (.cargo/config.toml's runner does)",
            );
        }
        super::Clock {
            instructions: counted,
            ticks: counted,
        }
    }
}
