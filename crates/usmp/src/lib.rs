//! # usmp: the runtime of statically planned memory
//!
//! [usmp-build] (from `build.rs` and `usmp.toml`) and `usmp_pools!` plan every buffer of a
//! neural network into the firmware's memories at compile time. The module they generate
//! is mostly `const` data over this crate, as `prost`'s generated code is over `prost`:
//!
//! - [`PoolInfo`], [`Buffer`], [`CallInfo`], [`Slot`], [`ModelInfo`]: the plan as data,
//!   linear in the model's size;
//! - [`check`]: run in a `const` of the generated module, proves in linear time that the
//!   plan is sound (every buffer inside its pool, buffers live together disjoint), so a
//!   stale or edited file does not compile;
//! - [`Storage`] and [`Pools`]: the pools' `static` bytes, uninitialised, in their link
//!   sections; [`Workspace`]: the one handle to them, taken once through [`TakeOnce`]
//!   (compare-and-swap where the target has it, a critical section on Cortex-M0/M0+ and
//!   RV32IMC), which zeroes the workspace pools and copies the weights of constant pools
//!   run from RAM ([`PoolInfo::loaded`]) from their images in flash;
//! - [`Model`] and [`Session`]: every generated model implements the trait, so kernels
//!   are written once and run any model: a [`Call`] gives the operator ([`Op`]) and its
//!   builtin [`Options`], the regions (inputs shared, outputs and scratch exclusive) and
//!   each operand's [`Tensor`] (element type, shape, quantization).
//!
//! The firmware writes no `unsafe`; all of it is in this crate, each block with the
//! invariant it relies on, and the crate's tests run under Miri.
//!
//! ## A firmware's inference loop
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
//! A kernel library needs this crate only:
//!
//! ```
//! use usmp::{Builtin, Call, Op};
//!
//! /// RELU on int8 data: in place when the plan put the output over the input.
//! fn relu(call: &mut Call<'_>) -> Option<()> {
//!     let zero = call.inputs.tensor(0)?.quantization.map_or(0, |q| q.zero_point[0]) as i8;
//!     let input = call.inputs.get(0);
//!     let out = call.outputs.get_mut(0)?;
//!     if let Some(input) = input {
//!         out.copy_from_slice(input);
//!     } // else: in place, the output already holds the input
//!     for b in out.iter_mut() {
//!         *b = (*b as i8).max(zero) as u8;
//!     }
//!     Some(())
//! }
//!
//! fn run(call: &mut Call<'_>) -> Option<()> {
//!     match call.op() {
//!         Op::Builtin(Builtin::Relu) => relu(call),
//!         _ => None,
//!     }
//! }
//! # let _ = run;
//! ```
//!
//! ## Targets
//!
//! `no_std`, no allocator, no features needed. Built and tested for `thumbv6m-none-eabi`,
//! `thumbv7m-none-eabi`, `thumbv7em-none-eabihf` and `riscv32imc-unknown-none-elf`. On
//! the targets without compare-and-swap (`thumbv6m`, `riscv32imc`) the firmware links a
//! [critical-section] implementation, as for any embedded crate that needs one. Without
//! one the link fails with `undefined symbol: _critical_section_1_0_acquire`: on a
//! single-core Cortex-M add `cortex-m = { version = "0.7", features =
//! ["critical-section-single-core"] }`, on a single-hart RISC-V `riscv = { version =
//! "0.16", features = ["critical-section-single-hart"] }`, or turn on your HAL's
//! implementation (`examples/firmware-m0` and `examples/firmware-riscv` do the first two).
//!
//! [usmp-build]: https://docs.rs/usmp-build
//! [critical-section]: https://docs.rs/critical-section
#![no_std]
#![deny(missing_docs)]

mod check;
mod model;
mod once;
mod op;
mod options;
mod plan;
mod session;
mod workspace;

pub use check::{Violation, check, check_module};
pub use model::Model;
pub use once::TakeOnce;
pub use op::{Builtin, ElementType, Op, Quantization, Scales, Tensor, slice};
pub use options::{Activation, Options, Padding};
pub use plan::{Buffer, CallInfo, ModelInfo, PoolInfo, PoolKind, Slot, Source};
pub use session::{Call, Inputs, Session, Shared, Writable};
pub use workspace::{Pools, Storage, Workspace};
