//! # usmp-build: static memory pools, planned from a build script
//!
//! A firmware crate describes its memories and its model in `usmp.toml`; this crate,
//! called from `build.rs`, plans every buffer of the model (activations, scratch,
//! weights) into those memories at compile time with [`usmp_core`] and writes:
//!
//! - `usmp.rs`: one `static` per workspace pool, exactly the planned size, in its link
//!   section, uninitialised; the model's constants at their planned offsets in the
//!   constant pools; per model its buffers, calls and tensors as `const` data over the
//!   [`usmp`] runtime, with a compile-time proof of the plan (`usmp::check`), and a
//!   `usmp::Model` impl whose sessions hand out each call's regions safely;
//! - `usmp.x`: a linker fragment placing each pool's section in its memory region;
//! - `usmp-report.txt` and `usmp-report.svg`: sizes against lower bounds and limits, what
//!   is live at each call, the memory map.
//!
//! Nothing is allocated at run time and the firmware writes no `unsafe`.
//!
//! ## 1. `Cargo.toml`
//!
//! ```toml
//! [build-dependencies]
//! usmp-build = "0.1"
//! ```
//!
//! ## 2. `usmp.toml`, beside `Cargo.toml`
//!
//! ```toml
//! # Pools, in preference order: a buffer goes to the first one that can hold it and
//! # falls back to the next when it is full.
//! [[pool]]
//! name = "dtcm"              # becomes DTCM, DTCM_SIZE in the generated code
//! kind = "workspace"         # default; activations and scratch
//! size = "16 KiB"            # optional limit: bytes, or "16 KiB" / "1 MiB"; -1 = none
//! alignment = 16             # default 16 (TVM's); a power of two
//! section = ".usmp.dtcm"     # default ".usmp.<name>"
//! region = "DTCM"            # memory.x region for usmp.x; leave out on the host
//! targets = ["cpu"]          # who can reach it; default: every target
//!
//! [[pool]]
//! name = "sram"
//! region = "RAM"
//!
//! [[pool]]
//! name = "flash"
//! kind = "constant"          # weights, at their planned offsets (RFC U3)
//! region = "FLASH"
//!
//! # Models; several share the workspace pools, each sized for the largest need (RFC U2).
//! [[model]]
//! name = "micro_speech"
//! path = "models/micro_speech.tflite" # a .tflite or usmp's JSON model IR, relative to this file
//! algorithm = "auto"          # default; any of usmp-core's built-in algorithms
//! assignment = "preference"   # default: each buffer in the first of its pools with room;
//!                             # "smallest_total" (exact, auto): the smallest sum of pools;
//!                             # "fastest": the most-accessed bytes in the fastest pools
//!                             # (a pool states its speed: bandwidth = "8 GB/s")
//! io_in_pools = true          # default; inputs and outputs live in the pools (RFC U4)
//! size_granularity = 16       # default; sizes are rounded up to this
//! alignment = 16              # default alignment of buffers
//! module = "micro_speech"     # default: the model's name
//! kernels = true              # default false; true emits KERNELS and invoke for
//!                             # usmp-kernels (.tflite)
//! tflm = false                # default; true also writes OUT_DIR/<module>.tflm.tflite,
//!                             # the model holding TensorFlow Lite Micro's offline plan
//!
//! # Scratch the kernels need beyond what the model says, by operator or by call.
//! [[model.scratch]]
//! op = "CONV_2D"
//! name = "im2col"
//! size = 4096
//!
//! [report]
//! summary = true              # a one-line cargo warning per model; default off
//! ```
//!
//! ## 3. `build.rs`
//!
//! ```no_run
//! fn main() {
//!     // Reads usmp.toml, writes OUT_DIR/usmp.rs and OUT_DIR/usmp.x, and prints
//!     // `cargo::error=` lines (file:line:column and a caret) if anything is wrong.
//!     usmp_build::build();
//! }
//! ```
//!
//! [`Config`] is the builder behind it, for another file name, output folder or summary
//! setting; its error is a typed [`Error`].
//!
//! ## 4. The firmware
//!
//! The generated module is data over the [`usmp`] runtime crate, so the firmware depends
//! on it too (`[dependencies] usmp = "0.1"`):
//!
//! ```ignore
//! mod usmp {
//!     include!(concat!(env!("OUT_DIR"), "/usmp.rs"));
//! }
//!
//! let mut workspace = usmp::Workspace::take().unwrap(); // the one handle; None after
//! let mut model = usmp::micro_speech::Model::session(&mut workspace);
//! model.input(0).unwrap().copy_from_slice(features);
//! for i in 0..model.calls() {
//!     let mut call = model.call(i).unwrap();
//!     // call.op(), call.inputs (shared: activations and &'static weights, each with its
//!     // tensor's type, shape and quantization), call.outputs and call.scratch
//!     // (exclusive): every region live during the call, pairwise disjoint. Any kernels
//!     // written against ::usmp run it; here usmp-kernels' own, call by call:
//!     usmp_kernels::run(&usmp::micro_speech::KERNELS[i], &mut call)?;
//! }
//! let scores = model.output(0).unwrap();
//! ```
//!
//! ## 5. Linking (cortex-m-rt)
//!
//! `build()` adds `OUT_DIR` to the linker's search path; pass the fragment after the
//! runtime's script in `.cargo/config.toml`:
//!
//! ```toml
//! [target.thumbv7em-none-eabihf]
//! rustflags = ["-C", "link-arg=-Tlink.x", "-C", "link-arg=-Tusmp.x"]
//! ```
//!
//! Each workspace pool becomes a `NOLOAD` output section in its region (no flash image,
//! no start-up cost). A pool can never end up in the wrong memory without a message that
//! names it and says what to write:
//!
//! | mistake | what happens |
//! |---|---|
//! | `-Tusmp.x` left out (or `build()` not run) | link error `undefined symbol: __usmp_x_not_linked__pass_link_arg_Tusmp_x`: on `target_os = "none"` the generated code refers to a symbol only `usmp.x` defines |
//! | the pool does not fit its region | `ASSERT` error `ERROR(usmp): pool dtcm (N bytes) overflows memory region DTCM; ...` |
//! | other data put in a pool's section | `ASSERT` error `ERROR(usmp): section .usmp.dtcm holds more than pool dtcm's N bytes: other data is in that section, ...` |
//! | `-Tusmp.x` passed twice, or a model the firmware never runs (rustc leaves its statics out) | `ASSERT` error `ERROR(usmp): section .usmp.flash holds less than pool flash's N bytes: ...`, naming both causes |
//! | two pools given one `section` | build error at the second `section`, naming both |
//! | a pool without `region` on a bare-metal target | a `cargo::warning` naming the pool and its section, and `region = "RAM"` to add |
//! | a region name that is not a symbol | build error at `region` |
//! | a region `memory.x` does not declare (`"DTMC"`) | build error at `region`, listing the regions of the `memory.x` beside `usmp.toml` |
//! | a workspace pool in a read-only region (`FLASH`, `QSPI (rx)`) | build error at `region`: the firmware could not write it; the writable regions listed |
//! | a constant pool in RAM (`DTCM (rwx)`, `RAM`) | build error at `region`: nothing loads the weights there on a board; the regions the image is programmed into listed |
//! | a region whose kind memory.x does not state (`DTCM : ...`, no attributes) | build error at `region` asking for `(rwx)` or `(rx)` in memory.x (cortex-m-rt's `FLASH` and `RAM` need none) |
//!
//! Without a `memory.x` beside `usmp.toml`, a misspelt region is the linker's own error
//! at the pool's line of `usmp.x`: `usmp.x:22: memory region not defined: DTMC`.
//!
//! ## Other front ends
//!
//! `usmp.toml` is read as a tree of spanned values, and one reader turns that tree into a
//! spec. The `usmp_pools!` macro builds the same tree from its tokens (with its own span
//! type), and reads, plans and generates through this crate (its hidden `__private`
//! module, which is not public API), so both front ends share the keys, their defaults,
//! every message about them, validation, planning and generation.
#![deny(missing_docs)]
// The examples are whole build.rs files: their `fn main` is the point.
#![allow(clippy::needless_doctest_main)]
#![forbid(unsafe_code)]

mod cargo_toml;
mod choice;
mod codegen;
mod config;
mod ident;
mod kernels;
mod linker;
mod lower;
mod manifest;
mod memory;
mod operands;
mod outputs;
mod planned;
mod planning;
mod raw;
mod read;
mod report;
mod shares;
mod spec;
mod stages;
mod valid;

pub use choice::BUILD_WORK_BUDGET;
pub use config::{Config, Error, Output, build};
pub use manifest::Located;
pub use outputs::{LINKER_FILE, MODULE_FILE, REPORT_FILE, SVG_FILE, tflm_file};
/// The planner, for a [`Config::algorithm`]'s own [`Algorithm`](usmp_core::Algorithm) and
/// its types (the same version usmp-build plans with).
pub use usmp_core;

/// What `usmp_pools!` (usmp-macros) and the `usmp` command build on: the spec both front
/// ends produce, planning, and the generators. Not public API: it changes with usmp-macros
/// and usmp-cli, never on its own.
#[doc(hidden)]
pub mod __private {
    pub use crate::choice::{AlgorithmChoice, OwnAlgorithms};
    pub use crate::codegen::generate;
    pub use crate::config::plan;
    pub use crate::linker::{
        file_name as linker_file, fragment as linker_fragment, unplaced_warning,
    };
    pub use crate::manifest::parse as parse_manifest;
    pub use crate::outputs::{Embed, Paths};
    pub use crate::planned::{LoweredCall, LoweredModel, Planned, PlannedModel, PlannedPool};
    pub use crate::raw::{Entries, Raw};
    pub use crate::read::{Dialect, read};
    pub use crate::report::{svg as report_svg, text as report_text};
    pub use crate::spec::{
        At, DEFAULT_ALIGNMENT, DEFAULT_SIZE_GRANULARITY, Diagnostic, MAX_ALIGNMENT, ModelSpec,
        PoolSpec, ScratchSpec, Spec, assignment, parse_size,
    };
}
