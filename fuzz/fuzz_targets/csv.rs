//! The benchmark CSV reader, then planning.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(problem) = usmp_core::input::parse_csv(text, "fuzz.csv", None) {
        usmp_fuzz::plan_checked(&problem);
    }
});
