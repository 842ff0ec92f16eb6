//! micro_speech on a Cortex-M3 (QEMU lm3s6965evb), run by usmp-kernels: every activation
//! in a usmp-planned workspace pool (a small fast one in DTCM, a large one in SRAM), every
//! weight in the planned constant pool in flash, no allocator and no arena. Runs each test input,
//! prints the scores next to TFLite Micro's, and exits non-zero on any difference.
//!
//! `cargo run --release` here; `--features poison` fills every buffer that just died
//! with 0xA5 between calls, and the outputs stay the same.
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use firmware_common::{exit, fail};
use micro_speech::testdata::{self, Outcome};

mod usmp {
    include!(concat!(env!("OUT_DIR"), "/usmp.rs"));
}

use usmp::micro_speech::Model;

/// Runs one inference: fill the input, run the calls, read the output.
fn infer(
    model: &mut ::usmp::Session<'_, Model>,
    case: usize,
) -> Result<Outcome, usmp_kernels::CallError> {
    let input = testdata::input(case);
    if let Some(x) = model.input(0) {
        x.copy_from_slice(input);
    }
    if cfg!(feature = "poison") {
        // Every buffer whose last use was a call is garbage after it.
        usmp::micro_speech::invoke_poisoning(model, 0xA5)?;
    } else {
        usmp::micro_speech::invoke(model)?;
    }
    let mut output = [0; testdata::OUTPUT_BYTES];
    if let Some(y) = model.output(0) {
        output.copy_from_slice(y);
    }
    Ok(Outcome { case, output })
}

#[entry]
fn main() -> ! {
    let Some(mut workspace) = usmp::Workspace::take() else {
        fail("the workspace was taken twice")
    };
    let mut model = Model::session(&mut workspace);
    firmware_common::print_plan(
        "micro_speech on a Cortex-M3",
        model.calls(),
        cfg!(feature = "poison"),
        usmp::POOLS,
    );
    let mut all = true;
    for case in 0..testdata::CASES {
        match infer(&mut model, case) {
            Ok(outcome) => {
                hprintln!("{}", outcome);
                all &= outcome.matches();
            }
            Err(e) => {
                hprintln!("error: case {}: {}", case, e);
                all = false;
            }
        }
    }
    if !all {
        fail("an output differs from TFLite Micro's");
    }
    hprintln!("all {} outputs equal TFLite Micro's", testdata::CASES);
    exit(debug::EXIT_SUCCESS)
}
