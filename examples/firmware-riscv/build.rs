// memory.x into OUT_DIR for cortex-m-rt, then the plan of usmp.toml (usmp.rs, usmp.x).
fn main() {
    firmware_common::build();
}
