//! TensorFlow Lite Micro's hello_world (y = sin x, int8, three FULLY_CONNECTED calls) on a
//! Cortex-M0 (QEMU's micro:bit): activations in a planned RAM pool, weights in a planned
//! flash pool. The Cortex-M0 has no compare-and-swap, so `Workspace::take` runs inside a
//! critical section (cortex-m's single-core one). Prints each output next to TFLite
//! Micro's and exits non-zero on any difference.
//!
//! `cargo run --release` here; `--features poison` fills every buffer that just died with
//! 0xA5 between calls, and the outputs stay the same.
#![no_std]
#![no_main]

use cortex_m_rt::entry;

mod usmp {
    include!(concat!(env!("OUT_DIR"), "/usmp.rs"));
}

use usmp::hello_world::Model;

/// One int8 input per case, and TFLite Micro's output for it (testdata/make_expected.py).
const INPUTS: &[u8] = include_bytes!("../testdata/inputs.bin");
const EXPECTED: &[u8] = include_bytes!("../testdata/expected.bin");

#[entry]
fn main() -> ! {
    let case = firmware_common::HelloWorld {
        title: "hello_world on a Cortex-M0",
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
