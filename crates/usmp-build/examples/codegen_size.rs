//! Benchmark of the generated code: its size, and how long rustc takes to compile it, for
//! person_detect (from `../shared/tflite-models`) and a generated chain of 500 operators.
//!
//! `cargo run --release -p usmp-build --example codegen_size` (needs the
//! `thumbv7em-none-eabihf` target). For each model it writes a `no_std` crate under
//! `target/codegen-size/`, builds it once (dependencies included), then touches its
//! `lib.rs` and times the rebuild: that second build compiles only the generated module.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a measuring program: panics report

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const TARGET: &str = "thumbv7em-none-eabihf";

/// A JSON IR chain of `n` operators: x0 -> op -> x1 -> ..., each with a 64-byte weight
/// and 1 KiB activations, so each activation dies at the next call.
fn chain(n: usize) -> String {
    let mut tensors = vec![r#"{"name": "x0", "size_bytes": 1024}"#.to_string()];
    let mut calls = Vec::new();
    for i in 0..n {
        tensors.push(format!(r#"{{"name": "x{}", "size_bytes": 1024}}"#, i + 1));
        tensors.push(format!(
            r#"{{"name": "w{i}", "kind": "constant", "data": [{}]}}"#,
            vec![i % 251; 64]
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
        calls.push(format!(
            r#"{{"op": "fc", "reads": ["x{i}", "w{i}"], "writes": ["x{}"]}}"#,
            i + 1
        ));
    }
    format!(
        "{{\"name\": \"chain\", \"tensors\": [{}], \"inputs\": [\"x0\"], \"outputs\": [\"x{n}\"], \"calls\": [{}]}}",
        tensors.join(",\n"),
        calls.join(",\n")
    )
}

fn scratch_crate(name: &str, model: &Path) -> PathBuf {
    let dir = Path::new(ROOT).join("target/codegen-size").join(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let root = Path::new(ROOT).canonicalize().unwrap();
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
         [dependencies]\nusmp = {{ path = {:?} }}\n\n\
         [build-dependencies]\nusmp-build = {{ path = {:?} }}\n\n[workspace]\n",
        root.join("crates/usmp").display().to_string(),
        root.join("crates/usmp-build").display().to_string(),
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(
        dir.join("build.rs"),
        "fn main() {\n    usmp_build::build();\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "#![no_std]\npub mod usmp_plan {\n    include!(concat!(env!(\"OUT_DIR\"), \"/usmp.rs\"));\n}\n",
    )
    .unwrap();
    let toml = format!(
        "[[pool]]\nname = \"sram\"\nregion = \"RAM\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\nregion = \"FLASH\"\n\n\
         [[model]]\nname = \"{name}\"\npath = {:?}\n",
        model.canonicalize().unwrap().display().to_string()
    );
    std::fs::write(dir.join("usmp.toml"), toml).unwrap();
    std::fs::copy(Path::new(ROOT).join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    dir
}

fn build(dir: &Path) -> f64 {
    let start = Instant::now();
    let out = Command::new(env!("CARGO"))
        .args(["build", "--release", "--target", TARGET])
        .current_dir(dir)
        .env(
            "CARGO_TARGET_DIR",
            Path::new(ROOT).join("target/codegen-size/target"),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    start.elapsed().as_secs_f64()
}

fn measure(name: &str, model: &Path) {
    let dir = scratch_crate(name, model);
    build(&dir);
    // Touch lib.rs: only the crate itself (the generated module) compiles again.
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    let seconds = build(&dir);
    let module = find_module(&Path::new(ROOT).join("target/codegen-size/target"), name);
    let text = std::fs::read_to_string(&module).unwrap();
    println!(
        "{name:<14} {:>9} bytes {:>6} lines   rustc {seconds:.2} s",
        text.len(),
        text.lines().count()
    );
}

/// The newest `usmp.rs` written by `name`'s build script.
fn find_module(target: &Path, name: &str) -> PathBuf {
    let build = target.join(TARGET).join("release/build");
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(build)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|f| f.to_string_lossy().starts_with(&format!("{name}-")))
        })
        .map(|p| p.join("out/usmp.rs"))
        .filter(|p| p.is_file())
        .map(|p| (p.metadata().unwrap().modified().unwrap(), p))
        .collect();
    found.sort();
    found.pop().expect("no generated module").1
}

fn main() {
    println!("generated module for {TARGET}, release; rustc = rebuild of the crate alone");
    let person = Path::new(ROOT).join("../shared/tflite-models/person_detect.tflite");
    if person.is_file() {
        measure("person_detect", &person);
    } else {
        println!("person_detect: skipped, {} is absent", person.display());
    }
    let dir = Path::new(ROOT).join("target/codegen-size");
    std::fs::create_dir_all(&dir).unwrap();
    let chain_path = dir.join("chain500.json");
    std::fs::write(&chain_path, chain(500)).unwrap();
    measure("chain500", &chain_path);
}
