//! `stages`: its forms, that it needs the kernels, and listed stages the calls do not
//! allow.

use super::*;

const PERSON: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fixtures/tflite/models/person_detect.tflite"
);

/// person_detect with `kernels = true` and `stages = {value}`.
fn person(value: &str) -> String {
    format!(
        "{POOLS}\n[[model]]\nname = \"pd\"\npath = \"{PERSON}\"\nkernels = true\nstages = {value}\n"
    )
}

#[test]
fn stages_of_another_form_say_the_forms() {
    one(
        "stages_form",
        &person("\"some\""),
        "12:10",
        &[
            "`stages` is the string \"some\"",
            "\"auto\"",
            "\"off\"",
            "[[0, 7]]",
        ],
    );
    one(
        "stages_pair",
        &person("[[0, 3, 5]]"),
        "12:11",
        &["an entry of `stages`", "not a [first, last] pair"],
    );
}

#[test]
fn stages_without_the_kernels_are_refused() {
    one(
        "stages_without_kernels",
        &format!("{POOLS}{MODEL}stages = \"auto\"\n"),
        "11:10",
        &[
            "streamed stages run on usmp-kernels",
            "add `kernels = true`",
        ],
    );
}

#[test]
fn a_listed_stage_must_be_a_chain_the_stage_kernel_runs() {
    // Calls 26-29: CONV_2D, AVERAGE_POOL_2D, CONV_2D, then RESHAPE, which no stage runs.
    one(
        "stages_not_a_chain",
        &person("[[26, 29]]"),
        "12:10",
        &[
            "stage [26, 29] cannot fuse call 28 (CONV_2D) with call 29 (RESHAPE)",
            "list only chains a stage can run",
        ],
    );
    one(
        "stages_backwards",
        &person("[[5, 3]]"),
        "12:10",
        &["stage [5, 3] is not two or more of the model's 31 calls"],
    );
    one(
        "stages_overlapping",
        &person("[[0, 3], [3, 5]]"),
        "12:10",
        &[
            "stage [3, 5] begins at or before the end of [0, 3]",
            "in order, apart",
        ],
    );
    one(
        "stages_too_long",
        &person("[[0, 20]]"),
        "12:10",
        &["fuses 21 calls; a stage fuses at most 16"],
    );
}

#[test]
fn listed_stages_run_even_where_auto_would_not() {
    let dir = setup("stages_listed", &person("[[8, 10]]"), &[]);
    generates(&dir);
    let report = std::fs::read_to_string(dir.join("out/usmp-report.txt")).unwrap();
    assert!(
        report.contains("calls 8-10 (CONV_2D, DEPTHWISE_CONV_2D, CONV_2D): line buffers"),
        "{report}"
    );
    assert!(report.contains("the model runs with them"), "{report}");
    assert!(report.contains("29 calls"), "{report}");
}

/// A model that fits its pools only streamed plans, with its stages: person_detect needs
/// 37,088 bytes of workspace run call by call and 14,848 streamed (its kernels' work
/// included), so 16 KiB fits only
/// the second (the model once failed here, as the plan without stages came first).
#[test]
fn a_model_that_fits_only_streamed_runs_streamed() {
    let toml = format!(
        "[[pool]]\nname = \"sram\"\nsize = \"16 KiB\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\n\n[[model]]\nname = \"pd\"\npath = \"{PERSON}\"\nkernels = true\n"
    );
    let dir = setup("stages_only_streamed", &toml, &[]);
    generates(&dir);
    let report = std::fs::read_to_string(dir.join("out/usmp-report.txt")).unwrap();
    assert!(
        report.contains(
            "streamed stages: workspace no plan without, 14848 bytes with: the model runs with them"
        ),
        "{report}"
    );
    // Where even the stages do not fit, the error says what the plan needs.
    let toml = toml.replace("16 KiB", "8 KiB");
    let d = errors("stages_too_small_even_streamed", &toml, &[]);
    assert!(d[0].contains("is too small for model `pd`"), "{d:#?}");
}
