//! # usmp-macros (in progress)
//!
//! Will hold the `usmp_pools!` procedural macro, which declares pools and a model inline
//! and expands through usmp-build's code generator. It exports no macro yet.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
