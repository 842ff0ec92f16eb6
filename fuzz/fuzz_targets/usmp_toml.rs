//! The usmp.toml reader and validation, then planning exactly as a build would (model
//! paths resolve in a folder holding the example model).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = usmp_fuzz::model_folder();
    let manifest = dir.join("usmp.toml");
    if std::fs::write(&manifest, data).is_err() {
        return;
    }
    let _ = usmp_build::Config::from_file(&manifest)
        .cargo_directives(false)
        .plan();
});
