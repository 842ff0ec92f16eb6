//! TensorFlow Lite Micro's hello_world (y = sin x, int8, three FULLY_CONNECTED calls) on a
//! RISC-V RV32IMC core (QEMU's sifive_e, SiFive's HiFive1): activations in a planned RAM
//! pool, weights in a planned pool in the flash the core runs from. RV32IMC has no atomic
//! read-modify-write, so `Workspace::take` runs inside a critical section (riscv's
//! single-hart one). Prints each output next to TFLite Micro's and exits non-zero on any
//! difference.
//!
//! `cargo run --release` here; `--features poison` fills every buffer that just died with
//! 0xA5 between calls, and the outputs stay the same.
#![no_std]
#![no_main]

use riscv_rt::entry;

mod usmp {
    include!(concat!(env!("OUT_DIR"), "/usmp.rs"));
}

use usmp::hello_world::Model;

/// One int8 input per case, and TFLite Micro's output for it (the same cases as the
/// Cortex-M0 example's, from its testdata/make_expected.py).
const INPUTS: &[u8] = include_bytes!("../../firmware-m0/testdata/inputs.bin");
const EXPECTED: &[u8] = include_bytes!("../../firmware-m0/testdata/expected.bin");

#[entry]
fn main() -> ! {
    let case = firmware_common::HelloWorld {
        title: "hello_world on RISC-V (RV32IMC)",
        inputs: INPUTS,
        expected: EXPECTED,
        poison: cfg!(feature = "poison"),
    };
    firmware_common::check_hello_world::<Model, _>(&case, |model| {
        if case.poison {
            usmp::hello_world::invoke_poisoning(model, 0xA5)
        } else {
            usmp::hello_world::invoke(model)
        }
    })
}
