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
use firmware_common::fail;

mod usmp {
    include!(concat!(env!("OUT_DIR"), "/usmp.rs"));
}

use usmp::hello_world::Model;

/// One int8 input per case, and TFLite Micro's output for it (testdata/make_expected.py).
const INPUTS: &[u8] = include_bytes!("../testdata/inputs.bin");
const EXPECTED: &[u8] = include_bytes!("../testdata/expected.bin");

/// Runs one inference on `x` and returns the output byte.
fn infer(model: &mut ::usmp::Session<'_, Model>, x: u8) -> Result<u8, usmp_kernels::CallError> {
    if let Some(input) = model.input(0) {
        input[0] = x;
    }
    if cfg!(feature = "poison") {
        usmp::hello_world::invoke_poisoning(model, 0xA5)?;
    } else {
        usmp::hello_world::invoke(model)?;
    }
    Ok(model.output(0).map_or(0, |y| y[0]))
}

#[entry]
fn main() -> ! {
    let Some(mut workspace) = usmp::Workspace::take() else {
        fail("the workspace was taken twice")
    };
    if usmp::Workspace::take().is_some() {
        fail("a second workspace handle was handed out");
    }
    let mut model = Model::session(&mut workspace);
    firmware_common::print_plan(
        "hello_world on a Cortex-M0",
        model.calls(),
        cfg!(feature = "poison"),
        usmp::POOLS,
    );
    firmware_common::check_hello_world(INPUTS, EXPECTED, |x| infer(&mut model, x))
}
