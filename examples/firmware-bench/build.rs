//! The board follows the target: a Cortex-M4 build (thumbv7em) is for QEMU's mps2-an386,
//! a Cortex-M3 build (thumbv7m: no DSP extension, so the kernels' portable paths, as on a
//! Cortex-M0 or RISC-V core) for its mps2-an385, whose memory map is the an386's, a
//! Cortex-M0 build (thumbv6m: Armv6-M's instructions only, which the M3 runs as they are,
//! since QEMU has no Cortex-M0 board with the RAM person_detect needs) for the an385 too,
//! a Cortex-M55 build (thumbv8m.main) for its mps3-an547, and a RISC-V build (riscv32imc)
//! for QEMU's virt board (its sifive_e, a real RV32 microcontroller, has 16 KiB of RAM).
//! Each board's folder holds its memory.x (copied to OUT_DIR, where cortex-m-rt's and
//! riscv-rt's link.x look for it) and the usmp.toml planned against it; virt's regions are
//! named as the an386's, so it plans the an386's usmp.toml.
use std::path::{Path, PathBuf};

fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    let (board, core) = if target.starts_with("riscv32") {
        ("virt", "RISC-V (RV32IMC code on QEMU's virt)")
    } else if target.starts_with("thumbv8m.main") {
        ("an547", "Cortex-M55 (mps3-an547)")
    } else if target.starts_with("thumbv7m") {
        ("an386", "Cortex-M3 (mps2-an385)")
    } else if target.starts_with("thumbv6m") {
        (
            "an386",
            "Cortex-M0 (Armv6-M code, run by mps2-an385's Cortex-M3)",
        )
    } else {
        ("an386", "Cortex-M4 (mps2-an386)")
    };
    let dir = Path::new("boards").join(board);
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    println!("cargo::rerun-if-changed=boards");
    println!("cargo::rustc-env=BENCH_CORE={core}");
    if let Err(e) = std::fs::copy(dir.join("memory.x"), out.join("memory.x")) {
        println!(
            "cargo::error={}: cannot copy it to OUT_DIR: {e}",
            dir.join("memory.x").display()
        );
        return;
    }
    let plan = Path::new("boards")
        .join(if board == "virt" { "an386" } else { board })
        .join("usmp.toml");
    if let Err(e) = usmp_build::Config::from_file(plan).generate() {
        e.report_to_cargo();
    }
}
