// Plans the pools (usmp.toml), writes usmp.rs and usmp.x to OUT_DIR, and the kernels'
// parameters from the same model file; cortex-m-rt finds memory.x in OUT_DIR too.
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    if let Err(e) = std::fs::copy("memory.x", out.join("memory.x")) {
        println!("cargo::error=memory.x: cannot copy to OUT_DIR: {e}");
        return;
    }
    println!("cargo::rustc-link-search={}", out.display());
    println!("cargo::rerun-if-changed=memory.x");
    usmp_build::build();
    let model = "model/hello_world_int8.tflite";
    println!("cargo::rerun-if-changed={model}");
    if let Err(e) = micro_speech::build::write_ops(model.as_ref(), &out.join("ops.rs")) {
        println!("cargo::error={e}");
    }
}
