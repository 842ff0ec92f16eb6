//! Through cargo, as users meet it: the fixture crates' generated code compiles for
//! Cortex-M (thumbv7em-none-eabihf, installed by rust-toolchain.toml), and a build
//! script with a bad `usmp.toml` fails with a clean located message, no panic.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn cargo(dir: &Path, target_dir: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO"))
        .args(args)
        .current_dir(dir)
        // A target folder of its own: the outer `cargo test` holds the workspace's.
        .env(
            "CARGO_TARGET_DIR",
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(target_dir),
        )
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap()
}

#[test]
fn fixtures_compile_for_cortex_m() {
    let out = cargo(
        Path::new(ROOT),
        "thumb",
        &[
            "build",
            "--target",
            "thumbv7em-none-eabihf",
            "-p",
            "usmp-fixture-kws",
            "-p",
            "usmp-fixture-two-models",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}

/// A `no_std` crate of its own in the test's temporary folder, whose build script calls
/// `usmp_build::build()` on `usmp_toml` and whose library includes the result.
fn scratch_crate(name: &str, usmp_toml: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let build = Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .unwrap();
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
         [build-dependencies]\nusmp-build = {{ path = {:?} }}\n\n[workspace]\n",
        build.display().to_string()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(
        dir.join("build.rs"),
        "fn main() {\n    usmp_build::build();\n}\n",
    )
    .unwrap();
    let lib =
        "#![no_std]\npub mod usmp {\n    include!(concat!(env!(\"OUT_DIR\"), \"/usmp.rs\"));\n}\n";
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    std::fs::write(dir.join("usmp.toml"), usmp_toml).unwrap();
    std::fs::copy(Path::new(ROOT).join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    dir
}

#[test]
fn the_nine_tflite_models_compile_for_cortex_m_in_one_workspace() {
    let models = Path::new(ROOT).join("../shared/tflite-models");
    if !models.is_dir() {
        println!("skipped: {} is absent", models.display());
        return;
    }
    let mut toml = String::from(
        "[[pool]]\nname = \"dtcm\"\nsize = \"64 KiB\"\nregion = \"DTCM\"\n\n\
         [[pool]]\nname = \"sram\"\nregion = \"RAM\"\n\n\
         [[pool]]\nname = \"flash\"\nkind = \"constant\"\nregion = \"FLASH\"\n",
    );
    let mut names: Vec<String> = std::fs::read_dir(&models)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tflite"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 9, "{names:?}");
    for n in &names {
        let path = models.join(format!("{n}.tflite")).canonicalize().unwrap();
        let path = path.display().to_string();
        toml.push_str(&format!("\n[[model]]\nname = \"{n}\"\npath = {path:?}\n"));
    }
    let dir = scratch_crate("nine-models", &toml);
    let args = ["build", "--release", "--target", "thumbv7em-none-eabihf"];
    let out = cargo(&dir, "thumb", &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}

#[test]
fn a_bad_usmp_toml_fails_the_build_cleanly() {
    let dir = scratch_crate(
        "bad",
        "[[pool]]\nname = \"sram\"\nalignment = 12\n\n[[model]]\nname = \"m\"\npath = \"missing.tflite\"\n",
    );
    let out = cargo(&dir, "thumb", &["build"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the build should fail:\n{stderr}");
    assert!(
        stderr.contains("usmp.toml:3:13: error: pool alignment 12 is not a power of two"),
        "{stderr}"
    );
    assert!(stderr.contains("3 | alignment = 12"), "{stderr}");
    assert!(
        stderr.contains("help: write a power of two such as 16"),
        "{stderr}"
    );
    // Validation comes first: the missing model is not read before the spec is right.
    assert!(!stderr.contains("missing.tflite"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("backtrace"), "{stderr}");
}
