//! The inference loop both host programs share; each declares its own `usmp` module (from
//! usmp.toml or from `usmp_pools!`, both with the kernels' parameters), and this code only
//! sees the generated API.

use micro_speech::testdata::{self, Outcome};

use crate::usmp::micro_speech::{KERNELS, Model};

/// A session of the micro_speech model.
type Session<'w> = ::usmp::Session<'w, Model>;

/// Runs one inference: fill the input, run the calls, read the output. With `poison`,
/// every buffer whose last use was a call is filled with 0xA5 after it; with `early`,
/// each call's poison comes one call too soon (a liveness bug, on purpose).
fn run(
    model: &mut Session<'_>,
    case: usize,
    poison: bool,
    early: bool,
) -> Result<Outcome, usmp_kernels::CallError> {
    let input = testdata::input(case);
    if let Some(x) = model.input(0) {
        x.copy_from_slice(input);
    }
    if early {
        // Call by call, so the poison can come at the wrong time.
        for (i, kernel) in KERNELS.iter().enumerate() {
            let Some(mut call) = model.call(i) else { break };
            let op = call.op().name();
            usmp_kernels::run(kernel, &mut call).map_err(|error| usmp_kernels::CallError {
                call: i,
                op,
                error,
            })?;
            model.poison_dead(i + 1, 0xA5);
        }
    } else if poison {
        crate::usmp::micro_speech::invoke_poisoning(model, 0xA5)?;
    } else {
        crate::usmp::micro_speech::invoke(model)?;
    }
    let mut output = [0; testdata::OUTPUT_BYTES];
    if let Some(y) = model.output(0) {
        output.copy_from_slice(y);
    }
    Ok(Outcome { case, output })
}

/// Runs one inference: fill the input, step through the calls, read the output. With
/// `poison`, every buffer whose last use was a call is filled with 0xA5 after it.
pub fn infer(
    model: &mut Session<'_>,
    case: usize,
    poison: bool,
) -> Result<Outcome, usmp_kernels::CallError> {
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
