//! The model IR reader (constant files relative to a folder holding the example's
//! weights), then lowering onto the default pools and planning.
#![no_main]

use libfuzzer_sys::fuzz_target;
use usmp_core::input::{PoolsFile, lower, parse_model};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let base = usmp_fuzz::model_folder();
    if let Ok(model) = parse_model(text, "fuzz.json", &base)
        && let Ok(lowered) = lower(&model, &PoolsFile::default())
    {
        usmp_fuzz::plan_checked(&lowered.problem);
    }
});
