// Copies memory.x to OUT_DIR, where cortex-m-rt's link.x looks for it, and plans
// usmp.toml (OUT_DIR/usmp.rs and OUT_DIR/usmp.x, which usmp_build adds to the search path).
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    if let Err(e) = std::fs::copy("memory.x", out.join("memory.x")) {
        println!("cargo::error=memory.x: cannot copy to OUT_DIR: {e}");
        return;
    }
    println!("cargo::rerun-if-changed=memory.x");
    usmp_build::build();
}
