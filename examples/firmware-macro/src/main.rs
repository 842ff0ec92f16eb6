//! TensorFlow Lite Micro's hello_world (y = sin x, int8) on a Cortex-M4F (QEMU's
//! mps2-an386), its pools declared inline with `usmp_pools!` rather than in usmp.toml:
//! activations in the FPGA's block RAM (`BRAM`), weights in flash. The macro writes
//! `usmp_pools.x`, which places each pool's section in its region; `.cargo/config.toml`
//! links with it after cortex-m-rt's `link.x`, and a link without it fails. Prints each
//! output next to TFLite Micro's and exits non-zero on any difference.
//!
//! `cargo run --release` here; `--features poison` fills every buffer that just died with
//! 0xA5 between calls, and the outputs stay the same.
#![no_std]
#![no_main]

use cortex_m_rt::entry;

mod usmp {
    usmp_macros::usmp_pools! {
        model = "../../firmware-m0/model/hello_world_int8.tflite",
        kernels = true,
        pools {
            bram: workspace(size = 16 KiB, region = "BRAM"),
            flash: constant(region = "FLASH"),
        }
    }
}

use usmp::hello_world_int8::Model;

/// One int8 input per case, and TFLite Micro's output for it (the same cases as the
/// Cortex-M0 example's, from its testdata/make_expected.py).
const INPUTS: &[u8] = include_bytes!("../../firmware-m0/testdata/inputs.bin");
const EXPECTED: &[u8] = include_bytes!("../../firmware-m0/testdata/expected.bin");

#[entry]
fn main() -> ! {
    let case = firmware_common::HelloWorld {
        title: "hello_world on a Cortex-M4F, pools from usmp_pools!",
        inputs: INPUTS,
        expected: EXPECTED,
        poison: cfg!(feature = "poison"),
    };
    firmware_common::check_hello_world::<Model, _>(&case, |model| {
        if case.poison {
            usmp::hello_world_int8::invoke_poisoning(model, 0xA5)
        } else {
            usmp::hello_world_int8::invoke(model)
        }
    })
}
