//! `tflm = true` on a `[[model]]`: the build also writes `<module>.tflm.tflite`, a copy of
//! the model holding TensorFlow Lite Micro's offline plan, planned with the model's scratch
//! rules, and says so in the report.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};

use usmp_build::Config;
use usmp_build::usmp_core::tflite::{read_offline_plan, read_tflite};

/// Runs the build on `toml` in a fresh directory `name` under the tests' scratch space;
/// returns the directory and what the build wrote.
fn generate(name: &str, toml: &str) -> (PathBuf, usmp_build::Output) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("out")).unwrap();
    std::fs::write(dir.join("usmp.toml"), toml).unwrap();
    let out = Config::from_file(dir.join("usmp.toml"))
        .out_dir(dir.join("out"))
        .cargo_directives(false)
        .generate()
        .unwrap();
    (dir, out)
}

#[test]
fn the_build_writes_the_planned_tflite_copy() {
    let model = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/tflite-models/audio_preprocessor_int8.tflite");
    if !model.exists() {
        println!(
            "skipped: {} is absent (it is always present in CI)",
            model.display()
        );
        return;
    }
    let toml = format!(
        "[[pool]]\nname = \"sram\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\n\n\
         [[model]]\nname = \"audio\"\npath = \"{}\"\ntflm = true\n\
         scratch = [{{ op = \"SignalRfft\", name = \"fft\", size = \"1 KiB\" }}]\n",
        model.display()
    );
    let (dir, out) = generate("tflm", &toml);
    assert_eq!(out.tflm, [dir.join("out").join("audio.tflm.tflite")]);
    let original = std::fs::read(&model).unwrap();
    let copy = std::fs::read(&out.tflm[0]).unwrap();
    assert_eq!(
        read_tflite(&copy, "a").unwrap(),
        read_tflite(&original, "a").unwrap()
    );
    let plan = read_offline_plan(&copy).unwrap().unwrap();
    assert_eq!(plan.offsets.iter().filter(|&&o| o >= 0).count(), 25);
    let report = std::fs::read_to_string(&out.report).unwrap();
    assert!(
        report.contains("TensorFlow Lite Micro copy audio.tflm.tflite: offline plan for 25 of 43 tensors; arena head 3040 bytes"),
        "{report}"
    );
}

/// With `order = "memory"` the firmware runs the calls in another order, but TensorFlow
/// Lite Micro runs them as written: its copy's plan, and a scratch rule naming a call by
/// number in it, are those of the order as written.
#[test]
fn the_tflm_copy_keeps_the_written_order() {
    let model =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tflite/models/branches.tflite");
    let copy = |order: &str| {
        let toml = format!(
            "[[pool]]\nname = \"sram\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\n\n\
             [[model]]\nname = \"branches\"\npath = \"{}\"\nkernels = true\ntflm = true\n\
             order = \"{order}\"\n\
             scratch = [{{ call = 2, name = \"tmp\", size = 1024 }}]\n",
            model.display()
        );
        let (_, out) = generate(&format!("tflm-{order}"), &toml);
        let report = std::fs::read_to_string(&out.report).unwrap();
        let plan = read_offline_plan(&std::fs::read(&out.tflm[0]).unwrap()).unwrap();
        (plan.unwrap().offsets, report)
    };
    let (written, _) = copy("written");
    let (memory, report) = copy("memory");
    // The firmware's order moved call 1 ...
    assert!(
        report.contains("the calls as written, in the order they run: 0, 2, 1,"),
        "{report}"
    );
    // ... and TensorFlow Lite Micro's plan did not move.
    assert_eq!(memory, written);
}
