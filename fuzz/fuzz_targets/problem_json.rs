//! The JSON problem reader, then planning.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(problem) = usmp_core::input::parse_problem_json(text, "fuzz.json") {
        usmp_fuzz::plan_checked(&problem);
    }
});
