//! All a usmp_pools! firmware's build script does: put OUT_DIR on the linker's search
//! path, where cortex-m-rt's link.x finds memory.x and where the macro writes
//! usmp_pools.x (cargo sets OUT_DIR only for crates with a build script).
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    if let Err(e) = std::fs::copy("memory.x", out.join("memory.x")) {
        println!("cargo::error=memory.x: cannot copy to OUT_DIR: {e}");
        return;
    }
    println!("cargo::rerun-if-changed=memory.x");
    println!("cargo::rustc-link-search={}", out.display());
}
