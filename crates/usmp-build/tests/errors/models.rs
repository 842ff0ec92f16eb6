//! Mistakes found planning the models: a model file that is missing or wrong, a pool too
//! small for what the model needs, a target no pool serves.

use super::*;

#[test]
fn pool_too_small_says_how_many_bytes_are_needed() {
    let toml = |size: u64| {
        format!(
            "[[pool]]\nname = \"sram\"\nsize = {size}\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\n{MODEL}"
        )
    };
    one(
        "too_small",
        &toml(4096),
        "3:8",
        &[
            "pool `sram` (4096 bytes) is too small for model `kws`",
            "the model needs 5776 bytes in `sram` (1680 more); write size = 5776 or more",
        ],
    );
    // The advice is right: with that size the model plans.
    let dir = setup("too_small_fixed", &toml(5776), &[]);
    generates(&dir);
}

#[test]
fn constants_without_a_constant_pool() {
    one(
        "no_constant_pool",
        &format!("[[pool]]\nname = \"sram\"\n{MODEL}"),
        "6:8",
        &[
            "needs a constant pool but none is configured",
            "kind \"constant\"",
        ],
    );
}

#[test]
fn a_target_no_pool_serves() {
    one(
        "target",
        &format!(
            "[[pool]]\nname = \"sram\"\ntargets = [\"cpu\"]\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\n{MODEL}"
        ),
        "11:8",
        &["npu", "kws.json:"],
    );
}

#[test]
fn missing_model_file() {
    one(
        "missing_model",
        &format!("{POOLS}\n[[model]]\nname = \"kws\"\npath = \"models/nope.tflite\"\n"),
        "10:8",
        &["cannot read the file", "help: no file at", "nope.tflite"],
    );
}

#[test]
fn a_model_without_calls_is_refused_at_its_path() {
    one_with(
        "no_calls",
        &format!("{POOLS}\n[[model]]\nname = \"z\"\npath = \"z.json\"\n"),
        &[(
            "z.json",
            "{\"tensors\": [{\"name\": \"x\", \"size_bytes\": 16}], \"inputs\": [\"x\"], \"outputs\": [\"x\"], \"calls\": []}",
        )],
        "10:8",
        &["model `z` has no operator calls", "help: name a model file"],
    );
}

#[test]
fn an_error_inside_the_model_file_names_its_line() {
    one_with(
        "bad_model",
        &format!("{POOLS}\n[[model]]\nname = \"m\"\npath = \"m.json\"\n"),
        &[(
            "m.json",
            "{\"tensors\": [{\"name\": \"x\", \"size_bytes\": 4}],\n \"calls\": [{\"op\": \"a\", \"reads\": [\"y\"]}]}",
        )],
        "10:8",
        &["model `m`", "m.json:2:"],
    );
}

/// Every mistake inside a model file is listed under the one diagnostic at its path.
#[test]
fn every_mistake_inside_the_model_file_is_listed() {
    let d = one_with(
        "bad_model_twice",
        &format!("{POOLS}\n[[model]]\nname = \"m\"\npath = \"m.json\"\n"),
        &[(
            "m.json",
            "{\"tensors\": [{\"name\": \"x\", \"size_bytes\": -4}],\n \"calls\": [{\"op\": \"a\", \"reads\": [\"y\"]}]}",
        )],
        "10:8",
        &[
            "model `m` has 2 mistakes:",
            "size_bytes is -4",
            "no tensor is named \"y\"",
        ],
    );
    let first = d.find("m.json:1:").unwrap();
    let second = d.find("m.json:2:").unwrap();
    assert!(first < second, "{d}");
}

/// A crate path the generated code could not name a crate by is refused before anything
/// is read, naming the setter and what to write.
#[test]
fn crate_paths_must_be_absolute() {
    let dir = setup("crate-paths", &format!("{POOLS}{MODEL}"), &[]);
    let config = || {
        Config::from_file(dir.join("usmp.toml"))
            .out_dir(dir.join("out"))
            .cargo_directives(false)
    };
    for (config, setter) in [
        (config().runtime_path("rt"), "Config::runtime_path(\"rt\")"),
        (
            config().kernels_path("k::"),
            "Config::kernels_path(\"k::\")",
        ),
    ] {
        let e = config.generate().err().map(|e| e.to_string());
        let e = e.unwrap_or_default();
        assert!(e.starts_with(setter), "{e}");
        assert!(e.contains("write `::` and the dependency's name"), "{e}");
    }
    let fine = config()
        .runtime_path("crate::deps::rt")
        .kernels_path("::k")
        .generate();
    assert!(fine.is_ok(), "{:?}", fine.err().map(|e| e.to_string()));
}

#[test]
fn an_unknown_call_order_names_the_two() {
    one(
        "order",
        &format!("{POOLS}{MODEL}order = \"fastest\"\n"),
        "11:9",
        &[
            "unknown call order `fastest`",
            "order = \"written\"",
            "\"memory\"",
        ],
    );
}
