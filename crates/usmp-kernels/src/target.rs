//! What a target's code generation enables, from cargo's environment: read by the build
//! script (for the `cfg`s the kernels are compiled with) and by usmp-build through
//! [`Path::of`](crate::work::Path::of) (for the kernel work it plans), so the two never
//! disagree about which path a call takes.

/// Whether every core of `target` (a target triple) has the Armv7E-M DSP extension:
/// thumbv7em (Cortex-M4, M7).
pub fn dsp(target: &str) -> bool {
    target.starts_with("thumbv7em")
}

/// Whether `target` is Thumb-2 with MLA and post-indexed loads, the DSP extension or not:
/// Armv7-M, Armv7E-M and Armv8-M Mainline (Cortex-M3, M4, M7, M33, M55), not the M0's
/// Armv6-M.
pub fn thumb2(target: &str) -> bool {
    ["thumbv7m", "thumbv7em", "thumbv8m.main"]
        .iter()
        .any(|arch| target.starts_with(arch))
}

/// Whether the compiler flags (separated by 0x1f, as cargo passes them in
/// `CARGO_ENCODED_RUSTFLAGS`) enable Helium (MVE): `-C target-cpu=cortex-m55` or
/// `cortex-m85`, or `-C target-feature=+mve`.
pub fn helium(flags: &str) -> bool {
    let flags: std::vec::Vec<&str> = flags.split('\x1f').collect();
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
