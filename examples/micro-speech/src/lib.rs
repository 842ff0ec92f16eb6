//! TensorFlow Lite Micro's micro_speech model (`model/`), the test inputs of usmp's
//! examples and TFLite Micro's outputs on them (`testdata/`). The firmware in QEMU, the
//! host program and the `usmp_pools!` program all plan this model with `kernels = true`,
//! run it with usmp-kernels from their generated module, and compare with [`testdata`].
#![no_std]
#![deny(missing_docs)]

pub mod testdata;
