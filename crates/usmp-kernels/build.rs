//! Sets `usmp_dsp` on targets whose cores all have the Armv7E-M DSP extension (thumbv7em:
//! Cortex-M4, M7), where `dsp` runs its lanes as single instructions, and `usmp_thumb2` on
//! every Thumb-2 M-profile target (Armv7-M and up, not Armv6-M), where its loop without
//! the extension is assembly too. Stable Rust does not
//! expose the `dsp` target feature to `cfg`, so the target's name decides.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(usmp_dsp)");
    println!("cargo::rustc-check-cfg=cfg(usmp_thumb2)");
    println!("cargo::rerun-if-changed=build.rs");
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
}
