//! TensorFlow Lite Micro's person_detect (a 96x96 grayscale MobileNet, 31 calls) on a
//! Cortex-M55 (QEMU's MPS3 AN547), run by usmp-kernels from planned memory: activations
//! split over a 32 KiB pool in DTCM and a pool in SRAM; the weights read most per byte in
//! a constant pool run from DTCM, which `Workspace::take` fills from its image in QSPI
//! flash, the rest read in place from QSPI; no allocator and no arena. Runs each test input, prints the scores next
//! to TFLite Micro's, and exits non-zero on any difference.
//!
//! `cargo run --release` here; `--features poison` fills every buffer with 0x5A before
//! each inference and every buffer that just died with 0xA5 after each call, and the
//! outputs stay the same.
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use firmware_common::{exit, fail};

mod usmp {
    include!(concat!(env!("OUT_DIR"), "/usmp.rs"));
}

use usmp::person_detect::Model;

/// For each case, the input image (96x96 int8) then TFLite Micro's two int8 scores on it
/// (`fixtures/tflite/testdata/make_expected.py`, the `tflite-micro` Python package).
const CASES: &[u8] = include_bytes!("../../../fixtures/tflite/testdata/person_detect.bin");
const INPUT_BYTES: usize = 96 * 96;
const OUTPUT_BYTES: usize = 2;

/// Runs one inference on `image` and returns the two scores (no person, person).
fn infer(
    model: &mut ::usmp::Session<'_, Model>,
    image: &[u8],
) -> Result<[i8; OUTPUT_BYTES], usmp_kernels::CallError> {
    if cfg!(feature = "poison") {
        model.poison_all(0x5A);
    }
    if let Some(input) = model.input(0) {
        input.copy_from_slice(image);
    }
    if cfg!(feature = "poison") {
        // Every buffer whose last use was a call is garbage after it.
        usmp::person_detect::invoke_poisoning(model, 0xA5)?;
    } else {
        usmp::person_detect::invoke(model)?;
    }
    let mut scores = [0; OUTPUT_BYTES];
    if let Some(output) = model.output(0) {
        for (s, &b) in scores.iter_mut().zip(output.iter()) {
            *s = b as i8;
        }
    }
    Ok(scores)
}

#[entry]
fn main() -> ! {
    let Some(mut workspace) = usmp::Workspace::take() else {
        fail("the workspace was taken twice")
    };
    let mut model = Model::session(&mut workspace);
    firmware_common::print_plan(
        "person_detect on a Cortex-M55",
        model.calls(),
        cfg!(feature = "poison"),
        usmp::POOLS,
    );
    let mut all = true;
    let cases = CASES.chunks_exact(INPUT_BYTES + OUTPUT_BYTES);
    let count = cases.len();
    for (case, data) in cases.enumerate() {
        let (image, expected) = data.split_at(INPUT_BYTES);
        match infer(&mut model, image) {
            Ok(scores) => {
                let same = scores.iter().zip(expected).all(|(&s, &e)| s as u8 == e);
                all &= same;
                hprintln!(
                    "case {}: no person {:>4}, person {:>4}   TFLite Micro {:>4} {:>4}  {}",
                    case,
                    scores[0],
                    scores[1],
                    expected[0] as i8,
                    expected[1] as i8,
                    if same { "=" } else { "DIFFERENT" }
                );
            }
            Err(e) => {
                hprintln!("error: case {}: {}", case, e);
                all = false;
            }
        }
    }
    if !all || count == 0 {
        fail("an output differs from TFLite Micro's");
    }
    hprintln!("all {} outputs equal TFLite Micro's", count);
    exit(debug::EXIT_SUCCESS)
}
