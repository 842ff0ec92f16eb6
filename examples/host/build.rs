// The host runs the firmware's plan: the same usmp.toml, so the same pools, offsets and
// generated API; only the link sections land in an ordinary host executable.
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    let planned = usmp_build::Config::from_file("../firmware/usmp.toml")
        .summary(false)
        .generate();
    if let Err(e) = planned {
        e.report_to_cargo();
        return;
    }
    let model = "../micro-speech/model/micro_speech_quantized.tflite";
    println!("cargo::rerun-if-changed={model}");
    if let Err(e) = micro_speech::build::write_ops(model.as_ref(), &out.join("ops.rs")) {
        println!("cargo::error={e}");
    }
}
