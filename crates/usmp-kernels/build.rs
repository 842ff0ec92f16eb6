//! Sets `usmp_dsp` on targets whose cores all have the Armv7E-M DSP extension (thumbv7em:
//! Cortex-M4, M7), where `dsp` runs its lanes as single instructions. Stable Rust does not
//! expose the `dsp` target feature to `cfg`, so the target's name decides.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(usmp_dsp)");
    println!("cargo::rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.starts_with("thumbv7em") {
        println!("cargo::rustc-cfg=usmp_dsp");
    }
}
