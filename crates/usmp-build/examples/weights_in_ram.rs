//! Weights where they run fastest (issue 44): the estimated memory time per inference of
//! person_detect and micro_speech on two memory maps, with TCMs of 16, 64 and 128 KiB, when
//! the weights stay in flash, when `assignment = "fastest"` chooses which to copy into
//! the TCM (sharing it with the activations) or into the TCM and SRAM at start-up, and
//! when everything that fits is copied (the preference order: the TCM first, then SRAM,
//! the rest left in flash). RAM is the workspace pools and the copies. Prints the
//! README's tables.
//!
//! `cargo run --release -p usmp-build --example weights_in_ram`. It writes one `usmp.toml`
//! per case under `target/weights-in-ram/` and plans it exactly as a build would
//! (`usmp plan usmp.toml` prints any of them in full). Deterministic: every machine prints
//! the same. The bandwidths are assumptions, stated in the tables; they are not
//! measurements of any part.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a measuring program: panics report

use std::fmt::Write as _;
use std::path::PathBuf;

use usmp_build::Config;
use usmp_core::PoolKind;
use usmp_core::traffic::{memory_time, traffic};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// A memory map: its name, then (TCM, SRAM, flash) bandwidths in bytes per second, and
/// the SRAM's size.
struct Map {
    name: &'static str,
    tcm: u64,
    sram: u64,
    flash: u64,
    sram_size: u64,
}

const MAPS: &[Map] = &[
    Map {
        // DTCM 64 bits at 480 MHz, AXI SRAM 64 bits at 240 MHz, internal flash behind
        // wait states (sequential lines, no cache hits assumed).
        name: "STM32H7-class: DTCM, 512 KiB AXI SRAM, 2 MiB internal flash",
        tcm: 3_840_000_000,
        sram: 1_920_000_000,
        flash: 500_000_000,
        sram_size: 512 * 1024,
    },
    Map {
        // TCM 64 bits at 600 MHz, OCRAM 64 bits at 150 MHz, quad-SPI NOR flash at 133 MHz
        // DDR read in place (the ESP32-S3 with octal PSRAM and flash is of the same kind).
        name: "i.MX RT1060-class: TCM, 512 KiB OCRAM, external QSPI flash",
        tcm: 4_800_000_000,
        sram: 1_200_000_000,
        flash: 133_000_000,
        sram_size: 512 * 1024,
    },
];

const MODELS: &[(&str, &str)] = &[
    (
        "person_detect",
        "fixtures/tflite/models/person_detect.tflite",
    ),
    (
        "micro_speech",
        "fixtures/tflite/models/micro_speech_quantized.tflite",
    ),
];

const TCMS: &[u64] = &[16, 64, 128];

/// Where the weights may go.
#[derive(Clone, Copy, PartialEq)]
enum Strategy {
    /// Flash only: the TCM and SRAM hold activations.
    Flash,
    /// Copies in the TCM only (the SRAM keeps activations), chosen by speed.
    TcmOnly,
    /// Copies in the TCM and SRAM, chosen by speed.
    Fastest,
    /// Copies in the TCM and SRAM, in the preference order: whatever fits is copied.
    Naive,
}

fn toml(map: &Map, tcm: u64, model: &str, path: &str, strategy: Strategy) -> String {
    let mut t = String::new();
    let pool = |t: &mut String, name: &str, kind: &str, extra: &str, bw: u64| {
        let _ = write!(
            t,
            "[[pool]]\nname = \"{name}\"\nkind = \"{kind}\"\n{extra}bandwidth = {bw}\n\n"
        );
    };
    pool(
        &mut t,
        "tcm",
        "workspace",
        &format!("size = {}\n", tcm * 1024),
        map.tcm,
    );
    if strategy != Strategy::Flash {
        pool(&mut t, "tcm_w", "constant", "shares = \"tcm\"\n", map.tcm);
    }
    pool(
        &mut t,
        "sram",
        "workspace",
        &format!("size = {}\n", map.sram_size),
        map.sram,
    );
    if strategy == Strategy::Fastest || strategy == Strategy::Naive {
        pool(
            &mut t,
            "sram_w",
            "constant",
            "shares = \"sram\"\n",
            map.sram,
        );
    }
    pool(&mut t, "flash", "constant", "", map.flash);
    let assignment = match strategy {
        Strategy::Naive => "preference",
        _ => "fastest",
    };
    let _ = write!(
        t,
        "[[model]]\nname = \"{model}\"\npath = \"{ROOT}/{path}\"\nkernels = true\nassignment = \"{assignment}\"\n"
    );
    t
}

/// Estimated memory time (ns) and RAM bytes (workspace pools and the copies in RAM).
fn plan(case: &str, text: &str) -> (u64, u64) {
    let dir = PathBuf::from(ROOT).join("target/weights-in-ram").join(case);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("usmp.toml"), text).unwrap();
    let planned = Config::from_file(dir.join("usmp.toml"))
        .cargo_directives(false)
        .plan()
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    let m = &planned.models[0];
    let time = memory_time(&traffic(&m.liveness.problem, &m.plan.allocations));
    let ram = planned
        .pools
        .iter()
        .filter(|p| p.kind == PoolKind::Workspace || p.name.ends_with("_w"))
        .map(|p| p.size)
        .sum();
    (time, ram)
}

fn us(ns: u64) -> String {
    format!("{:.1} us", ns as f64 / 1000.0)
}

fn main() {
    for map in MAPS {
        println!(
            "\n{} (assumed: TCM {:.2} GB/s, SRAM {:.2} GB/s, flash {:.3} GB/s)\n",
            map.name,
            map.tcm as f64 / 1e9,
            map.sram as f64 / 1e9,
            map.flash as f64 / 1e9
        );
        println!(
            "| model | TCM | weights in flash | `fastest`, copies in the TCM | `fastest`, copies in TCM and SRAM | everything that fits copied |"
        );
        println!("|---|---:|---:|---:|---:|---:|");
        for &(model, path) in MODELS {
            for &tcm in TCMS {
                let strategies = [
                    Strategy::Flash,
                    Strategy::TcmOnly,
                    Strategy::Fastest,
                    Strategy::Naive,
                ];
                let cells: Vec<String> = strategies
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| {
                        let case = format!("{}-{model}-{tcm}-{i}", map.tcm);
                        let (time, ram) = plan(&case, &toml(map, tcm, model, path, s));
                        format!("{}, {ram} B RAM", us(time))
                    })
                    .collect();
                println!("| {model} | {tcm} KiB | {} |", cells.join(" | "));
            }
        }
    }
}
