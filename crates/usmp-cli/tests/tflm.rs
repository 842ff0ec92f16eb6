//! `usmp plan MODEL --write-tflm OUT`: the planned copy, its report, and every misuse
//! refused with exit 2 and a message naming the flag or file. TensorFlow Lite Micro itself
//! checks the copies in CI (fixtures/tflite/testdata/check_offline_plans.py).
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};

mod common;

use common::{text, usmp};

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("usmp-tflm-{}-{name}", std::process::id()))
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A shared model, or `None` (with the reason printed) on a clone without ../shared.
fn shared_model(name: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tflite-models");
    if dir.is_dir() {
        Some(dir.join(format!("{name}.tflite")))
    } else {
        println!(
            "skipped: {} is absent (it is always present in CI)",
            dir.display()
        );
        None
    }
}

fn fails_with(args: &[&str], needles: &[&str]) {
    let out = usmp(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for needle in needles {
        assert!(
            err.contains(needle),
            "{args:?}: expected {needle:?} in {err}"
        );
    }
}

#[test]
fn writes_a_planned_copy_and_reports_its_head() {
    let Some(model) = shared_model("audio_preprocessor_int8") else {
        return;
    };
    let original = std::fs::read(&model).unwrap();
    let out = temp("audio.tflite");
    let run = usmp(&[
        "plan",
        path(&model),
        "--write-tflm",
        path(&out),
        "--scratch",
        "SignalRfft=1 KiB",
    ]);
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        stdout.contains("for 25 of 43 tensors") && stdout.contains("arena head: 3040 bytes"),
        "{stdout}"
    );
    assert!(
        stdout.contains("SignalRfft=1 KiB"),
        "the scratch is in the plan: {stdout}"
    );
    let copy = std::fs::read(&out).unwrap();
    assert!(copy.ends_with(&original));
    assert_eq!(std::fs::read(&model).unwrap(), original, "input untouched");
    let plan = usmp_core::tflite::read_offline_plan(&copy)
        .unwrap()
        .unwrap();
    assert_eq!(plan.offsets.len(), 43);

    // Without --scratch usmp plans what TFLite Micro's reference RFFT requests (its
    // fft_length of 512 int16 values, from the output's shape) and says so: the same head.
    let run = usmp(&["plan", path(&model), "--write-tflm", path(&out)]);
    let stdout = text(&run.stdout);
    assert!(
        stdout.contains("arena head: 3040 bytes")
            && stdout.contains("reference kernels request")
            && stdout.contains("call 3 SignalRfft 1024 bytes"),
        "{stdout}"
    );
    // --scratch replaces the assumed table: 16 bytes fit in a gap between the tensors, whose
    // own head is 2096 bytes.
    let run = usmp(&[
        "plan",
        path(&model),
        "--write-tflm",
        path(&out),
        "--scratch",
        "SignalRfft=16",
    ]);
    let stdout = text(&run.stdout);
    assert!(stdout.contains("arena head: 2096 bytes"), "{stdout}");

    // Planning the copy again replaces its plan, with a warning.
    let again = temp("audio-again.tflite");
    let run = usmp(&[
        "plan",
        path(&out),
        "--write-tflm",
        path(&again),
        "--scratch",
        "SignalRfft=16",
    ]);
    assert!(run.status.success());
    assert!(
        text(&run.stderr).contains("already held an offline plan"),
        "{}",
        text(&run.stderr)
    );
    let twice = std::fs::read(&again).unwrap();
    assert_eq!(
        usmp_core::tflite::read_offline_plan(&twice).unwrap(),
        usmp_core::tflite::read_offline_plan(&std::fs::read(&out).unwrap()).unwrap()
    );
    for f in [out, again] {
        std::fs::remove_file(f).unwrap();
    }
}

#[test]
fn misuse_is_refused_naming_the_flag() {
    let json = temp("model.json");
    std::fs::write(
        &json,
        r#"{"tensors": [{"name": "x", "size": 16}], "calls": [{"op": "A", "reads": [0]}], "inputs": [0]}"#,
    )
    .unwrap();
    let j = path(&json);
    fails_with(
        &["plan", j, "--write-tflm", path(&temp("o.tflite"))],
        &["--write-tflm needs a .tflite model", "model.json"],
    );
    // The output may not be the input.
    let Some(model) = shared_model("hello_world_int8") else {
        return;
    };
    let copy = temp("hello.tflite");
    std::fs::copy(&model, &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    fails_with(
        &["plan", path(&copy), "--write-tflm", path(&copy)],
        &["that is the input model", "usmp never modifies its input"],
    );
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    // Nor the input under another name: a hard link is the same file (a comparison of
    // paths let this overwrite the input).
    #[cfg(unix)]
    {
        let link = temp("hello-link.tflite");
        let _ = std::fs::remove_file(&link);
        std::fs::hard_link(&copy, &link).unwrap();
        fails_with(
            &["plan", path(&copy), "--write-tflm", path(&link)],
            &["that is the input model"],
        );
        assert_eq!(std::fs::read(&copy).unwrap(), before);
        std::fs::remove_file(&link).unwrap();
    }
    let m = path(&model);
    let out = temp("never.tflite");
    let o = path(&out);
    fails_with(&["plan", m, "--scratch", "SVDF=512"], &["--write-tflm"]);
    fails_with(
        &["plan", m, "--write-tflm", o, "--scratch", "SVDF"],
        &["OP=SIZE or CALL=SIZE"],
    );
    fails_with(
        &["plan", m, "--write-tflm", o, "--scratch", "=5"],
        &["name an operator or a call number"],
    );
    fails_with(
        &["plan", m, "--write-tflm", o, "--scratch", "SVDF=lots"],
        &["SVDF=lots"],
    );
    fails_with(&["plan", m, "--write-tflm", o, "--pools", j], &["--pools"]);
    assert!(!out.exists(), "nothing written on a refusal");
    for f in [json, copy] {
        std::fs::remove_file(f).unwrap();
    }
}
