//! The inference loop both host programs share; each declares its own `usmp` module (from
//! usmp.toml or from `usmp_pools!`) and `ops`, and this code only sees the generated API.

use micro_speech::testdata::{self, Outcome};

use crate::usmp::micro_speech::Model;

/// A session of the micro_speech model.
type Session<'w> = ::usmp::Session<'w, Model>;

/// Runs one inference: fill the input, step through the calls, read the output. With
/// `poison`, every buffer whose last use was a call is filled with 0xA5 after it; with
/// `early`, each call's poison comes one call too soon (a liveness bug, on purpose).
fn run(
    model: &mut Session<'_>,
    case: usize,
    poison: bool,
    early: bool,
) -> Result<Outcome, micro_speech::KernelError> {
    let input = testdata::input(case);
    let missing = micro_speech::KernelError::MissingOperand {
        what: "model input",
    };
    model.input(0).ok_or(missing)?[..input.len()].copy_from_slice(input);
    for i in 0..model.calls() {
        let Some(mut call) = model.call(i) else { break };
        micro_speech::run(&crate::ops::OPS[i], &mut call)?;
        if poison {
            model.poison_dead(i + usize::from(early), 0xA5);
        }
    }
    let missing = micro_speech::KernelError::MissingOperand {
        what: "model output",
    };
    let y = model.output(0).ok_or(missing)?;
    let mut output = [0; testdata::OUTPUT_BYTES];
    output.copy_from_slice(&y[..testdata::OUTPUT_BYTES]);
    Ok(Outcome { case, output })
}

/// Runs one inference: fill the input, step through the calls, read the output. With
/// `poison`, every buffer whose last use was a call is filled with 0xA5 after it.
pub fn infer(
    model: &mut Session<'_>,
    case: usize,
    poison: bool,
) -> Result<Outcome, micro_speech::KernelError> {
    run(model, case, poison, false)
}

/// Runs every test case, prints each next to TFLite Micro's output, and tells whether all
/// were equal.
pub fn run_all(how: &str) -> std::process::ExitCode {
    let poison = cfg!(feature = "poison");
    let Some(mut workspace) = crate::usmp::Workspace::take() else {
        eprintln!("error: the workspace was taken twice");
        return std::process::ExitCode::FAILURE;
    };
    let mut model = Model::session(&mut workspace);
    let pools: Vec<String> = crate::usmp::POOLS
        .iter()
        .map(|p| format!("{} {} B", p.name, p.size))
        .collect();
    println!(
        "micro_speech on the host ({how}): pools {} (poison {})",
        pools.join(", "),
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

/// A program's whole test (the workspace can be taken once per process): outputs equal
/// TFLite Micro's without and with poison, and the check can fail: poisoning one call
/// too early, as a liveness bug in the plan would overwrite a buffer before its last
/// read, changes the outputs.
#[cfg(test)]
pub fn check_with_and_without_poison() {
    let Some(mut workspace) = crate::usmp::Workspace::take() else {
        panic!("the workspace was taken twice");
    };
    let mut model = Model::session(&mut workspace);
    for poison in [false, true] {
        for case in 0..testdata::CASES {
            match infer(&mut model, case, poison) {
                Ok(outcome) => assert!(outcome.matches(), "poison {poison}: {outcome}"),
                Err(e) => panic!("case {case}: {e}"),
            }
        }
    }
    let mut changed = 0;
    for case in 0..testdata::CASES {
        match run(&mut model, case, true, true) {
            Ok(outcome) => changed += usize::from(!outcome.matches()),
            Err(e) => panic!("case {case}: {e}"),
        }
    }
    assert!(changed > 0, "poisoning live buffers changed no output");
}
