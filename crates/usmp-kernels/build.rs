//! Sets `cfg`s from the target, as stable Rust does not expose the Arm target features to
//! `cfg`:
//! - `usmp_dsp` on targets whose cores all have the Armv7E-M DSP extension (thumbv7em:
//!   Cortex-M4, M7), where `dsp` runs its lanes as single instructions;
//! - `usmp_thumb2` on every Thumb-2 M-profile target (Armv7-M and up, not Armv6-M), where
//!   the 1x1 loop without the extension is assembly too;
//! - `usmp_helium` where the build enables Helium (MVE: `-C target-cpu=cortex-m55` or
//!   `cortex-m85`, or `-C target-feature=+mve`): LLVM vectorises the portable loops there,
//!   which the assembly would stop, so the kernels keep those loops.

fn main() {
    for name in ["usmp_dsp", "usmp_thumb2", "usmp_helium"] {
        println!("cargo::rustc-check-cfg=cfg({name})");
    }
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.starts_with("thumbv7em") {
        println!("cargo::rustc-cfg=usmp_dsp");
    }
    // Thumb-2 with MLA and post-indexed loads, the DSP extension or not: Armv7-M, Armv7E-M
    // and Armv8-M Mainline (Cortex-M3, M4, M7, M33, M55), not the M0's Armv6-M.
    if ["thumbv7m", "thumbv7em", "thumbv8m.main"]
        .iter()
        .any(|arch| target.starts_with(arch))
    {
        println!("cargo::rustc-cfg=usmp_thumb2");
    }
    if helium(&std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default()) {
        println!("cargo::rustc-cfg=usmp_helium");
    }
}

/// Whether the compiler flags (separated by 0x1f, as cargo passes them) enable MVE.
fn helium(flags: &str) -> bool {
    let flags: Vec<&str> = flags.split('\x1f').collect();
    // `-C x=y` as two flags or one (`-Cx=y`).
    let codegen = flags
        .iter()
        .enumerate()
        .filter_map(|(k, flag)| match *flag {
            "-C" | "--codegen" => flags.get(k + 1).copied(),
            flag => flag.strip_prefix("-C"),
        });
    codegen
        .into_iter()
        .any(|option| match option.split_once('=') {
            Some(("target-cpu", cpu)) => ["cortex-m55", "cortex-m85"].contains(&cpu),
            Some(("target-feature", features)) => features.split(',').any(|f| f == "+mve"),
            _ => false,
        })
}
