//! The pools file reader, then lowering the example model onto those pools and planning.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use usmp_core::input::{ModelFile, lower, parse_pools, read_model};

static MODEL: OnceLock<ModelFile> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let model =
        MODEL.get_or_init(
            || match read_model(&usmp_fuzz::model_folder().join("kws.json")) {
                Ok(m) => m,
                Err(e) => panic!("the example model does not read: {e}"),
            },
        );
    if let Ok(pools) = parse_pools(text, "pools.json")
        && let Ok(lowered) = lower(model, &pools)
    {
        usmp_fuzz::plan_checked(&lowered.problem);
    }
});
