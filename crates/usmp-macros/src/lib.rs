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
//!         model = "../../../../examples/models/kws.json", // relative to this source file
//!         algorithm = "auto",
//!         scratch = [op("maxpool", window = 64)],
//!         pools {
//!             dtcm:  workspace(size = 8 KiB, align = 16, section = ".usmp.dtcm", targets = ["cpu"]),
//!             sram:  workspace(align = 16, section = ".usmp.sram", targets = ["cpu", "npu"]),
//!             flash: constant(section = ".usmp.flash"),
//!         }
//!     }
//! }
//!
//! let mut ws = usmp::Workspace::take().unwrap();
//! assert!(usmp::Workspace::take().is_none());
//! ```
//!
//! The expansion is built on the `usmp` runtime crate: add `usmp` to `[dependencies]`
//! next to `usmp-macros`.
//!
//! Everything `usmp.toml` can say has a spelling here (read by the same reader, so the
//! same keys, defaults and messages), but `tflm` and `[report]`, which only a build
//! script's files carry:
//!
//! - top level: `model = "path"` with `name`, `module`, `algorithm`, `assignment`,
//!   `io_in_pools`, `size_granularity`, `alignment`, `scratch`, `kernels`, `overlap`,
//!   `order` (`"memory"`: the calls in the order of the lowest peak) for one model; or
//!   `models { kws: model(path = "...", algorithm = "...", ...), vww: model(...) }` for
//!   several sharing the workspace pools;
//! - pools: `name: workspace(...)` or `name: constant(...)` with `size` (`4096`, `16 KiB`),
//!   `alignment` (or `align`), `section`, `targets = ["cpu"]`, `bandwidth = "8 GB/s"`,
//!   and for a constant pool run from RAM `region = "DTCM", load = "FLASH"` (copied when
//!   the workspace is taken) and `shares = "dtcm"`: the keys and units of `usmp.toml`;
//! - scratch: `scratch = [op("CONV_2D", im2col = 4 KiB, align = 32), call(3, acc = 512)]`.
//!
//! ## Memory regions: `usmp_pools.x`
//!
//! On a microcontroller each pool names the `memory.x` region it lives in, as in
//! usmp.toml, and the macro writes the linker fragment `usmp_pools.x` (each pool's section
//! `NOLOAD` in its region, `ASSERT`s that it holds exactly the planned bytes and fits) into
//! the crate's `OUT_DIR`. What the firmware adds, as `examples/firmware-macro` does on a
//! Cortex-M4F:
//!
//! ```text
//! // build.rs: OUT_DIR on the linker's search path (cargo sets OUT_DIR only for crates
//! // with a build script; cortex-m-rt's link.x finds memory.x there too)
//! fn main() {
//!     let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
//!     if let Err(e) = std::fs::copy("memory.x", out.join("memory.x")) {
//!         println!("cargo::error=memory.x: cannot copy it to OUT_DIR: {e}");
//!         return;
//!     }
//!     println!("cargo::rerun-if-changed=memory.x");
//!     println!("cargo::rustc-link-search={}", out.display());
//! }
//!
//! # .cargo/config.toml: the fragment after the runtime's script
//! rustflags = ["-C", "link-arg=-Tlink.x", "-C", "link-arg=-Tusmp_pools.x"]
//!
//! // src/main.rs
//! mod usmp {
//!     usmp_macros::usmp_pools! {
//!         model = "../model/hello_world_int8.tflite",
//!         kernels = true,
//!         pools {
//!             bram: workspace(size = 16 KiB, region = "BRAM"),
//!             flash: constant(region = "FLASH"),
//!         }
//!     }
//! }
//! ```
//!
//! Every way of getting a pool into the wrong memory fails loudly:
//!
//! | mistake | what happens |
//! |---|---|
//! | a region `memory.x` (beside `Cargo.toml`) does not declare | compile error at `region`, listing the regions it does declare |
//! | `-Tusmp_pools.x` left out | link error `undefined symbol: __usmp_pools_x_not_linked__pass_link_arg_Tusmp_pools_x`: on `target_os = "none"` the expansion refers to a symbol only the fragment defines |
//! | no build script (so no `OUT_DIR`) | on `target_os = "none"`, compile error at the first `region` showing the `build.rs` to add |
//! | a pool without `region` on `target_os = "none"` | warning at the pool's name: the linker would place its section as an orphan |
//! | `-Tusmp_pools.x` before `-Tlink.x` | the linker's `memory region not defined` at a line of `usmp_pools.x` whose comment says to swap them |
//! | other data in a pool's section | link error from the fragment's `ASSERT`: the section must hold exactly the planned bytes |
//! | a second invocation with regions in the crate | link error `undefined symbol: __susmp_<pool>` for the first's pools: the expansion refers to each placed pool's start, and the second's `usmp_pools.x` replaced the first's |
//!
//! So declare every pool of a crate in one invocation (`models { ... }` plans several
//! models into the same pools). Host builds (tests, simulators) need none of this: the
//! system's linker places every section, and `region` is only checked against
//! `memory.x`. The file is named differently from usmp-build's `usmp.x`, so a crate may
//! use both.
//!
//! With `kernels = true` each call's kernel work (`usmp_kernels::work`) is planned for the
//! kernels' portable path: a macro, unlike a build script, is not told the target. On a
//! Cortex-M4 or M7, or with Helium, a call whose fast path keeps more work there (a 1x1
//! convolution, a depthwise one) is refused at run time with `Error::Work`, naming the
//! bytes; plan such a model with usmp-build from `build.rs`, which reads the target.
//!
//! Every mistake is a compile error at its token, all reported at once, with what to
//! write instead. The expansion reads the model with `include_bytes!`, so editing the
//! model file recompiles the crate.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod ast;
mod expand;
mod link;
mod tree;

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
    let crate_root = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let out_dir = std::env::var_os("OUT_DIR").map(PathBuf::from);
    let dirs = expand::Dirs {
        base: &base,
        crate_root: crate_root.as_deref(),
        out_dir: out_dir.as_deref(),
    };
    expand::expand(input.into(), &dirs)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
