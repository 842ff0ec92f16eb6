//! micro_speech on the host through the generated API of the firmware's usmp.toml: the
//! same pools, offsets and operator calls as the firmware, checked against TFLite Micro.
//! `cargo run -p micro-speech-host` (add `--features poison` for the liveness proof).

mod usmp {
    include!(concat!(env!("OUT_DIR"), "/usmp.rs"));
}
mod ops {
    include!(concat!(env!("OUT_DIR"), "/ops.rs"));
}

use micro_speech::testdata::{self, Outcome};
use usmp::micro_speech::{CALLS, Model};

/// Runs one inference: fill the input, step through the calls, read the output.
fn infer(
    model: &mut Model<'_>,
    case: usize,
    poison: bool,
) -> Result<Outcome, micro_speech::KernelError> {
    let input = testdata::input(case);
    let [x] = model.inputs();
    x[..input.len()].copy_from_slice(input);
    for i in 0..CALLS {
        let Some(mut call) = model.call(i) else { break };
        micro_speech::run(&ops::OPS[i], &call.inputs, &mut call.outputs)?;
        if poison {
            // Every buffer whose last use was this call is garbage from now on.
            model.poison_dead(i, 0xA5);
        }
    }
    let [y] = model.outputs();
    let mut output = [0; testdata::OUTPUT_BYTES];
    output.copy_from_slice(&y[..testdata::OUTPUT_BYTES]);
    Ok(Outcome { case, output })
}

fn main() -> std::process::ExitCode {
    let poison = cfg!(feature = "poison");
    let Some(mut workspace) = usmp::Workspace::take() else {
        eprintln!("error: the workspace was taken twice");
        return std::process::ExitCode::FAILURE;
    };
    let mut model = Model::new(&mut workspace);
    println!(
        "micro_speech on the host: pools {} (poison {})",
        usmp::POOLS
            .map(|p| format!("{} {} B", p.name, p.size))
            .join(", "),
        if poison { "on" } else { "off" }
    );
    let mut all = true;
    for case in 0..testdata::CASES {
        match infer(&mut model, case, poison) {
            Ok(outcome) => {
                println!("{outcome}");
                all &= outcome.matches();
            }
            Err(e) => {
                eprintln!("error: case {case}: {e}");
                all = false;
            }
        }
    }
    if all {
        println!("all {} outputs equal TFLite Micro's", testdata::CASES);
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    /// Both runs in one test: the workspace can be taken once per process.
    #[test]
    fn outputs_equal_tflite_micro_with_and_without_poison() {
        let mut workspace = super::usmp::Workspace::take().unwrap();
        let mut model = super::Model::new(&mut workspace);
        for poison in [false, true] {
            for case in 0..super::testdata::CASES {
                let outcome = super::infer(&mut model, case, poison).unwrap();
                assert!(outcome.matches(), "poison {poison}: {outcome}");
            }
        }
        // The check can fail: poisoning one call too early (what a liveness bug in the
        // plan would do) changes the outputs.
        let mut changed = 0;
        for case in 0..super::testdata::CASES {
            let [x] = model.inputs();
            x[..super::testdata::INPUT_BYTES].copy_from_slice(super::testdata::input(case));
            for i in 0..super::CALLS {
                let mut call = model.call(i).unwrap();
                micro_speech::run(&super::ops::OPS[i], &call.inputs, &mut call.outputs).unwrap();
                model.poison_dead(i + 1, 0xA5);
            }
            let [y] = model.outputs();
            changed += usize::from(y[..4] != *super::testdata::expected(case));
        }
        assert!(changed > 0, "poisoning live buffers changed no output");
    }

    #[test]
    fn the_example_model_is_tflite_micros_file() {
        let ours = include_bytes!("../../micro-speech/model/micro_speech_quantized.tflite");
        let shared = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/tflite-models/micro_speech_quantized.tflite"
        );
        match std::fs::read(shared) {
            Ok(bytes) => assert!(bytes == ours, "the example's model differs from {shared}"),
            Err(_) => eprintln!("skipped: {shared} is absent (it is always present in CI)"),
        }
    }
}
