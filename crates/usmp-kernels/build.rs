//! Sets `cfg`s from the target, as stable Rust does not expose the Arm target features to
//! `cfg`:
//! - `usmp_dsp` on targets whose cores all have the Armv7E-M DSP extension (thumbv7em:
//!   Cortex-M4, M7), where `dsp` runs its lanes as single instructions;
//! - `usmp_thumb2` on every Thumb-2 M-profile target (Armv7-M and up, not Armv6-M), where
//!   the 1x1 loop without the extension is assembly too;
//! - `usmp_helium` where the build enables Helium (MVE: `-C target-cpu=cortex-m55` or
//!   `cortex-m85`, or `-C target-feature=+mve`): LLVM vectorises the portable loops there,
//!   which the assembly would stop, so the kernels keep those loops.

// The same functions usmp-build's planning of kernel work reads (`work::Path::of`).
#[path = "src/target.rs"]
mod target;

fn main() {
    for name in ["usmp_dsp", "usmp_thumb2", "usmp_helium"] {
        println!("cargo::rustc-check-cfg=cfg({name})");
    }
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/target.rs");
    println!("cargo::rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target::dsp(&target) {
        println!("cargo::rustc-cfg=usmp_dsp");
    }
    if target::thumb2(&target) {
        println!("cargo::rustc-cfg=usmp_thumb2");
    }
    if target::helium(&std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default()) {
        println!("cargo::rustc-cfg=usmp_helium");
    }
}
