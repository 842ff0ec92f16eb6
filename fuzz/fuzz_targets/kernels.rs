//! Kernel preparation on a mutated `.tflite` (quantization, options, shapes): the input is
//! the model of a usmp.toml with `kernels = true`, planned and prepared as a build does,
//! so each call's parameters go through usmp-kernels' Prepare. Any panic is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;

const MANIFEST: &str = "[[pool]]\nname = \"sram\"\n\n\
    [[pool]]\nname = \"flash\"\nkind = \"constant\"\n\n\
    [[model]]\nname = \"m\"\npath = \"m.tflite\"\nkernels = true\n";

fuzz_target!(|data: &[u8]| {
    let dir = usmp_fuzz::model_folder().join("kernels");
    if std::fs::create_dir_all(&dir).is_err()
        || std::fs::write(dir.join("usmp.toml"), MANIFEST).is_err()
        || std::fs::write(dir.join("m.tflite"), data).is_err()
    {
        return;
    }
    let _ = usmp_build::Config::from_file(dir.join("usmp.toml"))
        .cargo_directives(false)
        .plan();
});
