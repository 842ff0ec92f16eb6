//! # usmp-build (in progress)
//!
//! The build-script front end of usmp: it will read `usmp.toml`, plan with
//! [`usmp_core`], and write a Rust module with pool statics, offset constants and a safe
//! per-operator access API, plus a linker fragment. None of that exists yet; this crate
//! only re-exports the planning engine so that build scripts can already call it directly.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub use usmp_core as core;
