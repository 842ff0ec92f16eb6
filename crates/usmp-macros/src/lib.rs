//! # usmp-macros: `usmp_pools!`
//!
//! Declares a model and its memory pools next to the code that uses them, plans every
//! buffer at compile time, and expands to the same module that `usmp-build` writes for a
//! `usmp.toml` (pool statics, the plan as data over the `usmp` runtime with its compile-time proof,
//! typed calls, and a `usmp::Model` impl per model).
//!
//! ```ignore
//! mod usmp {
//!     usmp_macros::usmp_pools! {
//!         model = "../models/kws.tflite",      // relative to this source file
//!         algorithm = "auto",                   // default
//!         pools {
//!             dtcm:  workspace(size = 16 KiB, align = 16, section = ".usmp.dtcm", targets = ["cpu"]),
//!             sram:  workspace(align = 16, section = ".usmp.sram"),
//!             flash: constant(section = ".usmp.flash"),
//!         }
//!     }
//! }
//!
//! let mut ws = usmp::Workspace::take().unwrap();
//! let mut kws = usmp::kws::Model::session(&mut ws);
//! ```
//!
//! The expansion is built on the `usmp` runtime crate: add `usmp` to `[dependencies]`
//! next to `usmp-macros`.
//!
//! Everything `usmp.toml` can say has a spelling here:
//!
//! - top level: `model = "path"` with `name`, `module`, `algorithm`, `io_in_pools`,
//!   `size_granularity`, `alignment`, `scratch`, `kernels` for one model; or
//!   `models { kws: model(path = "...", algorithm = "...", ...), vww: model(...) }` for
//!   several sharing the workspace pools;
//! - pools: `name: workspace(...)` or `name: constant(...)` with `size` (`4096`, `16 KiB`),
//!   `alignment` (or `align`), `section`, `targets = ["cpu"]`: the keys and units of
//!   `usmp.toml`;
//! - scratch: `scratch = [op("CONV_2D", im2col = 4 KiB, align = 32), call(3, acc = 512)]`.
//!
//! ## Memory regions
//!
//! A proc-macro cannot write a linker fragment, so `usmp_pools!` places no pool in a
//! memory region: `region = "DTCM"` is a compile error at `region` (it would otherwise be
//! ignored, and the pool would land in the default script's memory, a DTCM pool as
//! loaded data in RAM). On a microcontroller, either declare the pools in `usmp.toml` and
//! let usmp-build write `usmp.x` (each pool's section in its region, with `ASSERT`s), or
//! give each pool a `section` and place it in your own linker script:
//!
//! ```text
//! SECTIONS { .usmp.dtcm (NOLOAD) : ALIGN(16) { KEEP(*(.usmp.dtcm)) } > DTCM } INSERT BEFORE .bss;
//! ```
//!
//! Every mistake is a compile error at its token, all reported at once, with what to
//! write instead. The expansion reads the model with `include_bytes!`, so editing the
//! model file recompiles the crate.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod ast;
mod attr;
mod expand;

use std::path::PathBuf;

/// Plans a model into the declared pools at compile time and expands to the generated
/// module; see the crate documentation for the syntax.
#[proc_macro]
pub fn usmp_pools(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    // Paths are relative to the invoking file, as with `include_bytes!`.
    let base = proc_macro::Span::call_site()
        .local_file()
        .and_then(|f| f.parent().map(PathBuf::from))
        .or_else(|| std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from))
        .unwrap_or_default();
    expand::expand(input.into(), &base)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
