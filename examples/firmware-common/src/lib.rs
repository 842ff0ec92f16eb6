//! What usmp's firmware examples share, so each example's `main.rs` is only its model:
//!
//! - on the device: [`exit`] and [`fail`] end the QEMU run through semihosting with a
//!   status CI reads, and the panic handler prints the panic and fails the run;
//!   [`check_hello_world`] compares hello_world's outputs with TFLite Micro's;
//! - in `build.rs` (feature `build`): [`build`] puts `memory.x` where cortex-m-rt's
//!   `link.x` looks for it and plans `usmp.toml` into `usmp.rs` and `usmp.x`.
//!
//! It is the examples' own helper, not part of usmp: a firmware of your own has its own
//! panic handler and `build.rs`, like these.
#![cfg_attr(target_os = "none", no_std)]

#[cfg(target_os = "none")]
mod device {
    // The same semihosting API on both architectures QEMU runs the examples on.
    #[cfg(target_arch = "arm")]
    use cortex_m_semihosting::{debug, hprintln};
    #[cfg(target_arch = "riscv32")]
    use riscv_semihosting::{debug, hprintln};

    /// Ends QEMU with `status` (semihosting); on a board without a debugger, sleeps.
    pub fn exit(status: debug::ExitStatus) -> ! {
        debug::exit(status);
        loop {
            #[cfg(target_arch = "arm")]
            cortex_m::asm::wfi();
            #[cfg(target_arch = "riscv32")]
            riscv::asm::wfi();
        }
    }

    /// Prints what runs (`title`, how many calls, whether poison is on) and each pool as
    /// `  pool <name> <bytes> bytes in <section>`, and for a constant pool run from RAM
    /// its images as `  image <name> <bytes> bytes in <section>.image`: the lines
    /// `check-firmware.sh` compares with the ELF's sections.
    pub fn print_plan(title: &str, calls: usize, poison: bool, pools: &[usmp::PoolInfo<'_>]) {
        let poison = if poison { "on" } else { "off" };
        hprintln!("{}: {} calls, poison {}", title, calls, poison);
        for p in pools {
            hprintln!("  pool {:<5} {:>6} bytes in {}", p.name, p.size, p.section);
            if p.loaded {
                hprintln!(
                    "  image {:<5} {:>6} bytes in {}.image",
                    p.name,
                    p.size,
                    p.section
                );
            }
        }
    }

    /// What a hello_world firmware checks, and how.
    pub struct HelloWorld<'a> {
        /// What runs where, for the first line printed.
        pub title: &'a str,
        /// One int8 input per case.
        pub inputs: &'a [u8],
        /// TFLite Micro's output for each.
        pub expected: &'a [u8],
        /// Whether `invoke` poisons every buffer that dies (the feature `poison`).
        pub poison: bool,
    }

    /// Takes the workspace of model `M` (once: a second take must fail, through the
    /// critical section on cores without compare-and-swap), prints the plan, then for each
    /// one-byte input of hello_world's cases writes it to the model's input, runs `invoke`,
    /// and prints the output next to TFLite Micro's; ends the run as a failure on any
    /// difference or error, as a success otherwise.
    pub fn check_hello_world<M: usmp::Model, E: core::fmt::Display>(
        case: &HelloWorld<'_>,
        mut invoke: impl FnMut(&mut usmp::Session<'_, M>) -> Result<(), E>,
    ) -> ! {
        let Some(mut workspace) = usmp::Workspace::<M::Pools>::take() else {
            fail("the workspace was taken twice")
        };
        if usmp::Workspace::<M::Pools>::take().is_some() {
            fail("a second workspace handle was handed out");
        }
        let model = &mut usmp::Session::<M>::new(&mut workspace);
        print_plan(
            case.title,
            model.calls(),
            case.poison,
            <M::Pools as usmp::Pools>::POOLS,
        );
        let mut infer = |x: u8| {
            if let Some(input) = model.input(0) {
                input[0] = x;
            }
            invoke(model)?;
            Ok::<u8, E>(model.output(0).map_or(0, |y| y[0]))
        };
        let mut all = true;
        for (&x, &want) in case.inputs.iter().zip(case.expected) {
            match infer(x) {
                Ok(y) => {
                    let same = y == want;
                    all &= same;
                    hprintln!(
                        "x {:>4}  y {:>4}  TFLite Micro {:>4}  {}",
                        x as i8,
                        y as i8,
                        want as i8,
                        if same { "=" } else { "DIFFERENT" }
                    );
                }
                Err(e) => {
                    hprintln!("error: x {}: {}", x as i8, e);
                    all = false;
                }
            }
        }
        if !all {
            fail("an output differs from TFLite Micro's");
        }
        hprintln!("all {} outputs equal TFLite Micro's", case.inputs.len());
        exit(debug::EXIT_SUCCESS)
    }

    /// Prints `error: why` and ends the run as a failure.
    pub fn fail(why: &str) -> ! {
        hprintln!("error: {}", why);
        exit(debug::EXIT_FAILURE)
    }

    #[panic_handler]
    fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
        hprintln!("panic: {}", info);
        exit(debug::EXIT_FAILURE)
    }
}

#[cfg(target_os = "none")]
pub use device::{HelloWorld, check_hello_world, exit, fail, print_plan};

/// The whole build script of a firmware example: copies `memory.x` to `OUT_DIR`, where
/// cortex-m-rt's `link.x` looks for it, and plans `usmp.toml` (`usmp_build::build`, which
/// writes `usmp.rs` and `usmp.x` there and adds `OUT_DIR` to the linker's search path).
/// Errors become `cargo::error` lines.
#[cfg(feature = "build")]
pub fn build() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    if let Err(e) = std::fs::copy("memory.x", out.join("memory.x")) {
        println!("cargo::error=memory.x: cannot copy it to OUT_DIR: {e}");
        return;
    }
    println!("cargo::rerun-if-changed=memory.x");
    usmp_build::build();
}
