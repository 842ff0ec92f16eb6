//! Through cargo, as users meet it: the runtime and the fixture crates' generated code
//! compile for every supported target (Cortex-M0+, M3, M4F/M7, RV32IMC), and a build
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

/// Every target the generated code and the runtime must build for: Cortex-M0/M0+
/// (no compare-and-swap), Cortex-M3, Cortex-M4F/M7, and RV32IMC (no compare-and-swap).
const TARGETS: &[&str] = &[
    "thumbv6m-none-eabi",
    "thumbv7m-none-eabi",
    "thumbv7em-none-eabihf",
    "riscv32imc-unknown-none-elf",
];

/// Whether the standard library for `target` is installed. Where it is not, a developer's
/// `cargo test` skips with the command that installs it; CI (`CI` set) fails instead, so
/// the check always runs there.
fn installed(target: &str) -> bool {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .unwrap();
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let lib = Path::new(&sysroot)
        .join("lib/rustlib")
        .join(target)
        .join("lib");
    if lib.is_dir() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "target {target} is not installed; .ci/run installs it with `rustup target add {target}`"
    );
    println!("skipped {target}: not installed; run `rustup target add {target}`");
    false
}

/// Builds `packages` of the crate in `dir` for every installed target of [`TARGETS`],
/// without a warning.
fn build_for_every_target(dir: &Path, packages: &[&str], release: bool) {
    for &target in TARGETS.iter().filter(|t| installed(t)) {
        let mut args = vec!["build", "--target", target];
        if release {
            args.push("--release");
        }
        for p in packages {
            args.extend(["-p", p]);
        }
        let out = cargo(dir, "cross", &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{target}:\n{stderr}");
        assert!(!stderr.contains("warning"), "{target}:\n{stderr}");
    }
}

#[test]
fn fixtures_compile_for_every_target() {
    build_for_every_target(
        Path::new(ROOT),
        &[
            "usmp",
            "usmp-kernels",
            "usmp-fixture-kws",
            "usmp-fixture-two-models",
            "usmp-fixture-tflite",
        ],
        false,
    );
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
         [dependencies]\nusmp = {{ path = {:?} }}\n\n\
         [build-dependencies]\nusmp-build = {{ path = {:?} }}\n\n[workspace]\n",
        build.join("../usmp").display().to_string(),
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
fn the_nine_tflite_models_compile_for_every_target_in_one_workspace() {
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
    build_for_every_target(&dir, &[], true);
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

/// The generated module for `usmp_toml` with `edit` applied to its text, compiled in a
/// crate of its own whose build script still writes the constants it includes.
fn build_edited(name: &str, usmp_toml: &str, edit: impl Fn(&str) -> String) -> String {
    let dir = scratch_crate(name, usmp_toml);
    let out = dir.join("generated");
    std::fs::create_dir_all(&out).unwrap();
    usmp_build::Config::from_file(dir.join("usmp.toml"))
        .out_dir(&out)
        .cargo_directives(false)
        .generate()
        .unwrap();
    let text = std::fs::read_to_string(out.join(usmp_build::MODULE_FILE)).unwrap();
    let edited = edit(&text);
    assert_ne!(edited, text, "the edit changed nothing");
    std::fs::write(dir.join("src/edited.rs"), edited).unwrap();
    let lib = "#![no_std]\npub mod usmp {\n    include!(\"edited.rs\");\n}\n";
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    let out = cargo(&dir, "thumb", &["build"]);
    assert!(!out.status.success(), "an edited plan compiled");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_edited_plan_does_not_compile() {
    let toml = std::fs::read_to_string(Path::new(ROOT).join("fixtures/kws/usmp.toml"))
        .unwrap()
        .replace("../../examples", &format!("{ROOT}/examples"));
    // im2col moved over conv's bytes, both live during call 0.
    let stderr = build_edited("edited-overlap", &toml, |t| {
        t.replace(
            "CALL0_IM2COL: Buffer = Buffer::new(0, 4000,",
            "CALL0_IM2COL: Buffer = Buffer::new(0, 3984,",
        )
    });
    assert!(
        stderr.contains("usmp: two buffers live during the same call overlap"),
        "{stderr}"
    );
    // A buffer dropped from call 0's live list: the certificate no longer adds up.
    let stderr = build_edited("edited-certificate", &toml, |t| {
        t.replacen("live: &[3, 9, 0, 6,", "live: &[3, 9, 6,", 1)
            .replacen("live_from: &[0, 4,", "live_from: &[0, 3,", 1)
    });
    assert!(
        stderr.contains("usmp: the list of buffers live during a call is wrong"),
        "{stderr}"
    );
    // relu told to write its input as a second output.
    let stderr = build_edited("edited-slot", &toml, |t| {
        t.replace(
            "outputs: &[Slot::buffer(4, None)],\n            scratch: &[10]",
            "outputs: &[Slot::buffer(4, None), Slot::buffer(3, None)],\n            scratch: &[10]",
        )
    });
    assert!(
        stderr.contains("usmp: a call hands out a region that is not live then"),
        "{stderr}"
    );
    // A pool's size raised past its storage: every buffer still fits the size the
    // models' checks read, but `Workspace::take` would zero past the static.
    let stderr = build_edited("edited-pool-size", &toml, |t| {
        t.replace("size: SRAM_SIZE,", "size: SRAM_SIZE + 4096,")
    });
    assert!(
        stderr.contains("usmp: a workspace pool's size in POOLS is not the size of its storage"),
        "{stderr}"
    );
}

#[test]
fn invoke_without_kernels_says_what_to_add() {
    let toml = std::fs::read_to_string(Path::new(ROOT).join("fixtures/kws/usmp.toml"))
        .unwrap()
        .replace("../../examples", &format!("{ROOT}/examples"));
    let dir = scratch_crate("invoke-without-kernels", &toml);
    let lib = "#![no_std]\npub mod usmp {\n    include!(concat!(env!(\"OUT_DIR\"), \"/usmp.rs\"));\n}\n\n\
               pub fn run(ws: &mut usmp::Workspace) {\n    \
               let mut m = usmp::kws::Model::session(ws);\n    usmp::kws::invoke(&mut m);\n}\n";
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    let out = cargo(&dir, "thumb", &["build"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("model `kws` was planned without `kernels = true`, so it has no `invoke`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("add `kernels = true` to model `kws`"),
        "{stderr}"
    );
}

#[test]
fn a_buffer_moved_over_another_models_state_does_not_compile() {
    let fixture = Path::new(ROOT).join("fixtures/two-models");
    let toml = std::fs::read_to_string(fixture.join("usmp.toml"))
        .unwrap()
        .replace("../../examples", &format!("{ROOT}/examples"))
        .replace(
            "\"tiny.json\"",
            &format!("{:?}", fixture.join("tiny.json").display().to_string()),
        );
    // tiny's `y` moved to offset 0 of sram, over kws's state: tiny's own check still
    // passes (nothing of tiny's is there), but a tiny inference would clobber kws's state.
    let stderr = build_edited("edited-state", &toml, |t| {
        t.replace(
            "Y: Buffer = Buffer::new(0, 256, 9008, 0, 2)",
            "Y: Buffer = Buffer::new(0, 0, 9008, 0, 2)",
        )
    });
    assert!(
        stderr.contains("usmp: a model's state shares bytes with another model's buffer"),
        "{stderr}"
    );
}

/// Inputs at the edge of what the build accepts still give code that compiles: models
/// named like the crates the generated code names (`core`, `usmp`), the largest alignment
/// a static can have, and a constant tensor listed as a model input.
#[test]
fn accepted_edges_compile() {
    // A tensor name with a line break and a comment's end in it, as a .tflite may have.
    let model = r#"{"tensors": [{"name": "x\n*/ `y` \u0000", "size_bytes": 16},
        {"name": "w", "kind": "constant", "data": [1, 2]}, {"name": "y", "size_bytes": 16}],
        "inputs": ["x\n*/ `y` \u0000", "w"], "outputs": ["y"],
        "calls": [{"op": "add", "reads": ["x\n*/ `y` \u0000", "w"], "writes": ["y"]}]}"#;
    let toml = "[[pool]]\nname = \"sram\"\nalignment = 536870912\n\n\
                [[pool]]\nname = \"flash\"\nkind = \"constant\"\n\n\
                [[model]]\nname = \"core\"\npath = \"m.json\"\n\n\
                [[model]]\nname = \"usmp\"\npath = \"m.json\"\n";
    let dir = scratch_crate("edges", toml);
    std::fs::write(dir.join("m.json"), model).unwrap();
    let lib = "#![no_std]\npub mod usmp {\n    include!(concat!(env!(\"OUT_DIR\"), \"/usmp.rs\"));\n}\n\n\
               #[test]\nfn runs() {\n    let mut ws = usmp::Workspace::take().unwrap();\n    \
               let mut m = usmp::core::Model::session(&mut ws);\n    \
               assert!(m.input(1).is_none(), \"a constant input is not handed out\");\n    \
               m.input(0).unwrap().fill(1);\n    assert!(m.call(0).unwrap().inputs.get(1).unwrap()[..2] == [1, 2]);\n}\n";
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    let out = cargo(&dir, "thumb", &["test"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}

/// Code written inside the including module cannot make a second workspace handle: the
/// handle is the runtime crate's type, with a private field.
#[test]
fn the_workspace_cannot_be_forged() {
    let toml = std::fs::read_to_string(Path::new(ROOT).join("fixtures/kws/usmp.toml"))
        .unwrap()
        .replace("../../examples", &format!("{ROOT}/examples"));
    let dir = scratch_crate("forge", &toml);
    let lib = "#![no_std]\npub mod usmp {\n    include!(concat!(env!(\"OUT_DIR\"), \"/usmp.rs\"));\n\n    \
               pub fn forge() -> Workspace {\n        ::usmp::Workspace { _pools: ::core::marker::PhantomData }\n    }\n}\n";
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    let out = cargo(&dir, "thumb", &["build"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a forged handle compiled");
    assert!(stderr.contains("E0451"), "{stderr}");
    assert!(stderr.contains("private"), "{stderr}");
}

/// A crate that depends on the runtime under another name: `Config::runtime_path` makes
/// the generated code name it so, and it builds and its test runs. Without the path, the
/// build script warns at the dependency before rustc's errors.
#[test]
fn a_renamed_runtime_builds_with_its_path() {
    let toml = std::fs::read_to_string(Path::new(ROOT).join("fixtures/kws/usmp.toml"))
        .unwrap()
        .replace("../../examples", &format!("{ROOT}/examples"));
    let dir = scratch_crate("renamed", &toml);
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        manifest.replace("\nusmp = { path", "\nrt = { package = \"usmp\", path"),
    )
    .unwrap();
    let lib = "#![no_std]\npub mod usmp {\n    include!(concat!(env!(\"OUT_DIR\"), \"/usmp.rs\"));\n}\n\n\
               #[test]\nfn runs() {\n    let mut ws = usmp::Workspace::take().unwrap();\n    \
               let m = usmp::kws::Model::session(&mut ws);\n    \
               let _: &rt::ModelInfo<'static> = <usmp::kws::Model as rt::Model>::INFO;\n    drop(m);\n}\n";
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    builds_only_with(&dir, "usmp", "rt", "runtime_path");
}

/// The crate in `dir` lists `package` as `name`: with the default path the build fails,
/// the build script's warning naming the dependency and `Config::<setter>`; with that
/// call in build.rs it builds and its tests pass, warning-free.
fn builds_only_with(dir: &Path, package: &str, name: &str, setter: &str) {
    let out = cargo(dir, "thumb", &["build"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "resolved without a `{package}` dependency"
    );
    let warning =
        format!("lists the `{package}` crate as `{name}`; call `.{setter}(\"::{name}\")`");
    assert!(stderr.contains(&warning), "{stderr}");
    let build = format!(
        "fn main() {{\n    let out = usmp_build::Config::from_file(\"usmp.toml\").{setter}(\"::{name}\").generate();\n    \
         if let Err(e) = out {{\n        e.report_to_cargo();\n    }}\n}}\n"
    );
    std::fs::write(dir.join("build.rs"), build).unwrap();
    let out = cargo(dir, "thumb", &["test"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}

/// `kernels = true` in a crate that depends on usmp-kernels under another name:
/// `Config::kernels_path` makes the generated code name it so, and the model runs. Without
/// the path, the build script warns at the dependency before rustc's errors.
#[test]
fn renamed_kernels_build_with_their_path() {
    let model = Path::new(ROOT).join("fixtures/tflite/models/hello_world_int8.tflite");
    let toml = format!(
        "[[pool]]\nname = \"sram\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\n\n\
         [[model]]\nname = \"sine\"\npath = {:?}\nkernels = true\n",
        model.display().to_string()
    );
    let dir = scratch_crate("renamed-kernels", &toml);
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let kernels = Path::new(ROOT).join("crates/usmp-kernels");
    std::fs::write(
        dir.join("Cargo.toml"),
        manifest.replace(
            "\n\n[build-dependencies]",
            &format!(
                "\nk = {{ package = \"usmp-kernels\", path = {:?} }}\n\n[build-dependencies]",
                kernels.display().to_string()
            ),
        ),
    )
    .unwrap();
    let lib = "#![no_std]\npub mod usmp {\n    include!(concat!(env!(\"OUT_DIR\"), \"/usmp.rs\"));\n}\n\n\
               #[test]\nfn runs() {\n    let mut ws = usmp::Workspace::take().unwrap();\n    \
               let mut m = usmp::sine::Model::session(&mut ws);\n    \
               let _: &[k::Kernel<'static>] = usmp::sine::KERNELS;\n    \
               usmp::sine::invoke(&mut m).unwrap();\n}\n";
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    builds_only_with(&dir, "usmp-kernels", "k", "kernels_path");
}
