//! One test per kind of bad `usmp.toml`: each asserts what the message says and where
//! (`usmp.toml:line:column`) it points.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::PathBuf;

use usmp_build::{Config, Error};

const KWS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/models/kws.json"
);

/// A folder of its own for `case`, holding `usmp.toml` and any `extra` files.
fn setup(case: &str, toml: &str, extra: &[(&str, &str)]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("errors")
        .join(case);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("out")).unwrap();
    std::fs::write(dir.join("usmp.toml"), toml.replace("$KWS", KWS)).unwrap();
    for (name, text) in extra {
        std::fs::write(dir.join(name), text).unwrap();
    }
    dir
}

/// Generates from `dir`'s `usmp.toml`, which must plan.
fn generates(dir: &std::path::Path) {
    let out = Config::from_file(dir.join("usmp.toml"))
        .out_dir(dir.join("out"))
        .cargo_directives(false)
        .generate();
    assert!(out.is_ok(), "{:?}", out.err().map(|e| e.to_string()));
}

/// The rendered diagnostics for a bad `usmp.toml`.
fn errors(case: &str, toml: &str, extra: &[(&str, &str)]) -> Vec<String> {
    let dir = setup(case, toml, extra);
    let result = Config::from_file(dir.join("usmp.toml"))
        .out_dir(dir.join("out"))
        .cargo_directives(false)
        .generate();
    match result {
        Err(Error::Invalid(d)) => d.iter().map(ToString::to_string).collect(),
        Err(e) => panic!("{case}: expected diagnostics, got {e}"),
        Ok(_) => panic!("{case}: the bad file was accepted"),
    }
}

/// Exactly one diagnostic, at `line:column`, containing every one of `words`.
fn one(case: &str, toml: &str, line_col: &str, words: &[&str]) -> String {
    one_with(case, toml, &[], line_col, words)
}

fn one_with(
    case: &str,
    toml: &str,
    extra: &[(&str, &str)],
    line_col: &str,
    words: &[&str],
) -> String {
    let d = errors(case, toml, extra);
    assert_eq!(d.len(), 1, "{case}: {d:#?}");
    let d = d.into_iter().next().unwrap();
    let first = d.lines().next().unwrap();
    assert!(
        first.contains(&format!("usmp.toml:{line_col}: error:")),
        "{case}: expected usmp.toml:{line_col}, got {first}"
    );
    for w in words {
        assert!(d.contains(w), "{case}: `{w}` missing from\n{d}");
    }
    d
}

const POOLS: &str =
    "[[pool]]\nname = \"sram\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\n";
const MODEL: &str = "\n[[model]]\nname = \"kws\"\npath = \"$KWS\"\n";

mod models;
mod pools;
mod shares;
mod stages;

#[test]
fn toml_syntax_error_points_at_the_token() {
    let d = one(
        "syntax",
        "[[pool]]\nname = \"sram\nalignment = 16\n",
        "2:13",
        &["invalid basic string", "^"],
    );
    assert!(d.contains("2 | name = \"sram"), "{d}");
}

#[test]
fn unknown_key_lists_the_keys() {
    one(
        "unknown_key",
        &format!("[[pool]]\nname = \"sram\"\nsise = 4096\n{MODEL}"),
        "3:1",
        &["unknown key `sise`", "`size`", "`alignment`"],
    );
}

#[test]
fn unknown_top_level_table() {
    one(
        "unknown_table",
        &format!("{POOLS}{MODEL}\n[pools]\nx = 1\n"),
        "12:2",
        &["unknown key `pools`", "`pool`", "`model`"],
    );
}

#[test]
fn alignment_must_be_a_power_of_two() {
    one(
        "alignment",
        &format!("[[pool]]\nname = \"sram\"\nalignment = 24\n{MODEL}"),
        "3:13",
        &["pool alignment 24 is not a power of two", "such as 32"],
    );
}

#[test]
fn alignment_stops_where_rust_statics_do() {
    one(
        "alignment_2_30",
        &format!("[[pool]]\nname = \"sram\"\nalignment = 1073741824\n{MODEL}"),
        "3:13",
        &[
            "pool alignment 1073741824 is larger than 536870912 (2^29)",
            "help: write 536870912 or less",
        ],
    );
    one_with(
        "buffer_alignment_2_30",
        &format!("{POOLS}\n[[model]]\nname = \"m\"\npath = \"m.json\"\n"),
        &[(
            "m.json",
            "{\"tensors\": [{\"name\": \"x\", \"size_bytes\": 16, \"alignment\": 1073741824}], \"inputs\": [\"x\"], \"outputs\": [\"x\"], \"calls\": [{\"op\": \"a\", \"reads\": [\"x\"], \"writes\": []}]}",
        )],
        "2:8",
        &[
            "pool `sram` holds a buffer aligned to 1073741824 bytes",
            "help: lower",
        ],
    );
}

/// The 2^29 limit is for alignments only: a size granularity above it is no alignment.
#[test]
fn a_size_granularity_above_2_29_is_not_an_alignment() {
    let dir = setup(
        "granularity_2_30",
        &format!(
            "{POOLS}\n[[model]]\nname = \"m\"\npath = \"m.json\"\nsize_granularity = 1073741824\n"
        ),
        &[(
            "m.json",
            "{\"tensors\": [{\"name\": \"x\", \"size_bytes\": 16}], \"inputs\": [\"x\"], \"outputs\": [\"x\"], \"calls\": [{\"op\": \"a\", \"reads\": [\"x\"], \"writes\": []}]}",
        )],
    );
    generates(&dir);
}

#[test]
fn unknown_algorithm_lists_the_known_ones() {
    one(
        "algorithm",
        &format!("{POOLS}{MODEL}algorithm = \"fastest\"\n"),
        "11:13",
        &["unknown algorithm `fastest`", "auto", "greedy_by_size"],
    );
}

#[test]
fn unknown_pool_kind() {
    one(
        "kind",
        "[[pool]]\nname = \"rom\"\nkind = \"readonly\"\n\n[[model]]\nname = \"kws\"\npath = \"x\"\n",
        "3:8",
        &["unknown pool kind `readonly`", "\"constant\""],
    );
}

#[test]
fn a_size_with_an_unknown_unit() {
    one(
        "size_unit",
        &format!("[[pool]]\nname = \"sram\"\nsize = \"16 kb\"\n{MODEL}"),
        "3:8",
        &["`16 kb` is not a size", "\"16 KiB\""],
    );
}

#[test]
fn a_size_of_the_wrong_type() {
    one(
        "size_type",
        &format!("[[pool]]\nname = \"sram\"\nsize = true\n{MODEL}"),
        "3:8",
        &[
            "`size` is the boolean true, not a size",
            "a number of bytes such as 4096, or a string with a unit such as \"16 KiB\"",
        ],
    );
    one(
        "size_negative",
        &format!("[[pool]]\nname = \"sram\"\nsize = -5\n{MODEL}"),
        "3:8",
        &[
            "`size` is the integer -5, not a size",
            "leave `size` out (or write -1) for no limit",
        ],
    );
}

#[test]
fn minus_one_is_no_limit_as_in_the_pools_file() {
    let dir = setup(
        "size_minus_one",
        &format!(
            "[[pool]]\nname = \"sram\"\nsize = -1\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\n{MODEL}"
        ),
        &[],
    );
    let planned = Config::from_file(dir.join("usmp.toml")).plan().unwrap();
    assert_eq!(planned.pools[0].limit, None);
}

#[test]
fn every_phase_reports_together() {
    // A bad unit and a wrong type (reading), alignment 3 and an unknown algorithm
    // (validation): all four at once, in the order of the file.
    let d = errors(
        "all_phases",
        "[[pool]]\nname = \"dtcm\"\nsize = \"8 XB\"\nalignment = 3\n\n[[pool]]\nname = \"sram\"\nsize = true\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\n\n[[model]]\nname = \"kws\"\npath = \"$KWS\"\nalgorithm = \"nope\"\n",
        &[],
    );
    let at: Vec<&str> = d
        .iter()
        .map(|e| {
            e.split(": error: ")
                .next()
                .unwrap()
                .rsplit("usmp.toml:")
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(at, ["3:8", "4:13", "8:8", "17:13"], "{d:#?}");
    assert!(d[0].contains("`8 XB` is not a size"), "{}", d[0]);
    assert!(
        d[1].contains("alignment 3 is not a power of two"),
        "{}",
        d[1]
    );
    assert!(d[2].contains("`size` is the boolean true"), "{}", d[2]);
    assert!(d[3].contains("unknown algorithm `nope`"), "{}", d[3]);
}

#[test]
fn no_pools() {
    one(
        "no_pools",
        MODEL.trim_start(),
        "1:1",
        &["no pools are declared", "[[pool]]"],
    );
}

#[test]
fn no_model() {
    one(
        "no_model",
        POOLS,
        "1:1",
        &["no model is declared", "[[model]]"],
    );
}

#[test]
fn only_constant_pools() {
    one(
        "all_constant",
        &format!("[[pool]]\nname = \"flash\"\nkind = \"constant\"\n{MODEL}"),
        "2:8",
        &["every pool is a constant pool"],
    );
}

#[test]
fn pool_names_become_identifiers() {
    one(
        "pool_name",
        &format!("[[pool]]\nname = \"Ext-RAM\"\n{MODEL}"),
        "2:8",
        &["bad pool name", "`ext_ram`"],
    );
}

#[test]
fn sections_the_runtime_would_capture() {
    one(
        "section",
        &format!("[[pool]]\nname = \"sram\"\nsection = \".bss.pools\"\n{MODEL}"),
        "3:11",
        &["captured by the runtime's `.bss` rules", ".usmp."],
    );
}

#[test]
fn region_must_be_a_linker_name() {
    one(
        "region",
        &format!("[[pool]]\nname = \"sram\"\nregion = \"my ram\"\n{MODEL}"),
        "3:10",
        &["not a linker memory region name"],
    );
}

#[test]
fn duplicate_model_and_module() {
    let d = errors("duplicate_model", &format!("{POOLS}{MODEL}{MODEL}"), &[]);
    assert_eq!(d.len(), 2, "{d:#?}");
    assert!(
        d[0].contains("usmp.toml:13:8: error: model `kws` is declared twice"),
        "{}",
        d[0]
    );
    assert!(
        d[1].contains("usmp.toml:13:8: error: module `kws` is declared twice"),
        "{}",
        d[1]
    );
}

#[test]
fn scratch_rule_with_op_and_call() {
    one(
        "scratch_both",
        &format!(
            "{POOLS}{MODEL}\n[[model.scratch]]\nop = \"conv2d\"\ncall = 2\nname = \"s\"\nsize = 16\n"
        ),
        "14:8",
        &["both `op` and `call`"],
    );
}

#[test]
fn scratch_rule_that_matches_nothing() {
    one(
        "scratch_nothing",
        &format!("{POOLS}{MODEL}\n[[model.scratch]]\nop = \"CONV_2D\"\nname = \"s\"\nsize = 16\n"),
        "12:1",
        &["matches no call", "the model has 5 calls"],
    );
}

#[test]
fn constants_of_two_models_overflow_their_pool() {
    one(
        "constants_overflow",
        &format!(
            "[[pool]]\nname = \"sram\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\nsize = 2000\n{MODEL}\n[[model]]\nname = \"again\"\npath = \"$KWS\"\n"
        ),
        "7:8",
        &[
            "holds 2000 bytes but the models' constants need 2272 together",
            "size = 2272",
        ],
    );
}

#[test]
fn every_problem_is_reported_not_only_the_first() {
    let d = errors(
        "several",
        "[[pool]]\nname = \"sram\"\nalignment = 3\n\n[[pool]]\nname = \"sram\"\n\n[[model]]\nname = \"kws\"\npath = \"x\"\nalgorithm = \"magic\"\n",
        &[],
    );
    assert_eq!(d.len(), 3, "{d:#?}");
    assert!(d[0].contains("usmp.toml:3:13:"), "{}", d[0]);
    assert!(d[1].contains("usmp.toml:6:8:"), "{}", d[1]);
    assert!(d[2].contains("usmp.toml:11:13:"), "{}", d[2]);
}

#[test]
fn kernels_on_a_model_they_cannot_run_fail_at_the_key_naming_the_call() {
    // The JSON IR has no tensor types: nothing to prepare the kernels from.
    one(
        "kernels-json",
        &format!("{POOLS}{MODEL}kernels = true\n"),
        "11:11",
        &["model `kws`", "kernels = true", "needs a .tflite model"],
    );
    // trained_lstm_int8 starts with an LSTM, which the kernels lack: refused by name.
    let lstm = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/tflite-models/trained_lstm_int8.tflite"
    );
    if !std::path::Path::new(lstm).exists() {
        println!("skipped the trained_lstm_int8 case: {lstm} is absent");
        return;
    }
    let d = one(
        "kernels-lstm",
        &format!("{POOLS}\n[[model]]\nname = \"lstm\"\npath = \"{lstm}\"\nkernels = true\n"),
        "11:11",
        &[
            "model `lstm`",
            "call 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)",
            "no kernel for UNIDIRECTIONAL_SEQUENCE_LSTM",
            "your own kernel",
        ],
    );
    assert!(d.contains("CONV_2D"), "the message lists what runs: {d}");
}

#[test]
fn a_tflm_copy_of_a_json_model_is_refused_at_the_key() {
    one(
        "tflm-json",
        &format!("{POOLS}{MODEL}tflm = true\n"),
        "11:8",
        &[
            "model `kws`",
            "`tflm = true` writes a copy of a .tflite model",
            "leave out `tflm`",
        ],
    );
}

#[test]
fn a_missing_name_and_a_wrong_shape_are_both_reported() {
    let d = errors(
        "missing_name",
        &format!(
            "[[pool]]\nkind = \"workspace\"\ntargets = \"cpu\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\n{MODEL}"
        ),
        &[],
    );
    assert_eq!(d.len(), 2, "{d:#?}");
    assert!(d[0].contains("this [[pool]] has no `name`"), "{}", d[0]);
    assert!(d[0].contains("add `name = \"sram\"`"), "{}", d[0]);
    assert!(
        d[1].contains("usmp.toml:3:11: error: `targets` is the string \"cpu\""),
        "{}",
        d[1]
    );
    assert!(d[1].contains("[\"cpu\"]"), "{}", d[1]);
}

#[test]
fn assignment_is_preference_or_smallest_total_for_the_searching_algorithms() {
    one(
        "assignment_unknown",
        &format!("{POOLS}{MODEL}assignment = \"quickest\"\n"),
        "11:14",
        &[
            "unknown assignment `quickest`",
            "\"preference\"",
            "\"smallest_total\"",
            "\"fastest\"",
        ],
    );
    one(
        "assignment_greedy",
        &format!("{POOLS}{MODEL}algorithm = \"first_fit\"\nassignment = \"smallest_total\"\n"),
        "12:14",
        &["`assignment` applies to the algorithms exact and auto, not `first_fit`"],
    );
}

/// kws in an 8 KiB DTCM listed first (the CPU's only) and SRAM (shared with the NPU): the
/// preference order keeps the 4000-byte activation in DTCM (8480 bytes in all);
/// `assignment = "smallest_total"` moves it to SRAM and reaches the bound, 6912.
#[test]
fn smallest_total_moves_a_buffer_out_of_the_preferred_pool() {
    let pools = "[[pool]]\nname = \"dtcm\"\nsize = \"8 KiB\"\ntargets = [\"cpu\"]\n\n\
                 [[pool]]\nname = \"sram\"\ntargets = [\"cpu\", \"npu\"]\n\n\
                 [[pool]]\nname = \"flash\"\nkind = \"constant\"\n";
    let total = |case: &str, extra: &str| {
        let dir = setup(case, &format!("{pools}{MODEL}{extra}"), &[]);
        let planned = Config::from_file(dir.join("usmp.toml")).plan().unwrap();
        planned.pools.iter().map(|p| p.size).sum::<u64>()
    };
    let preferred = total("assignment_preference", "");
    let smallest = total("assignment_smallest", "assignment = \"smallest_total\"\n");
    assert_eq!((preferred, smallest), (8480, 6912));
}

#[test]
fn fastest_needs_a_bandwidth_and_a_bandwidth_must_be_one() {
    one(
        "fastest_without_speeds",
        &format!("{POOLS}{MODEL}assignment = \"fastest\"\n"),
        "11:14",
        &["needs the pools' speeds", "bandwidth = \"8 GB/s\""],
    );
    one(
        "bad_bandwidth",
        &format!("[[pool]]\nname = \"sram\"\nbandwidth = \"quick\"\n{MODEL}"),
        "3:13",
        &["`quick` is not a bandwidth", "\"0.2 GB/s\""],
    );
}

/// With speeds given, `assignment = "fastest"` plans and the report shows each pool's
/// memory time.
#[test]
fn fastest_plans_with_speeds_and_reports_the_memory_time() {
    let pools = "[[pool]]\nname = \"dtcm\"\nsize = \"8 KiB\"\ntargets = [\"cpu\"]\nbandwidth = \"8 GB/s\"\n\n\
                 [[pool]]\nname = \"sram\"\ntargets = [\"cpu\", \"npu\"]\nbandwidth = \"2 GB/s\"\n\n\
                 [[pool]]\nname = \"flash\"\nkind = \"constant\"\n";
    let dir = setup(
        "fastest",
        &format!("{pools}{MODEL}assignment = \"fastest\"\n"),
        &[],
    );
    generates(&dir);
    let report = std::fs::read_to_string(dir.join("out/usmp-report.txt")).unwrap();
    assert!(
        report.contains("memory traffic per inference") && report.contains("at 8000 MB/s"),
        "{report}"
    );
}

#[test]
fn pools_whose_generated_names_clash_are_refused() {
    // `sram` generates SRAM and SRAM_SIZE; `sram_size` would generate SRAM_SIZE again.
    one(
        "size_suffix_clash",
        &format!("{POOLS}\n[[pool]]\nname = \"sram_size\"\n{MODEL}"),
        "9:8",
        &[
            "pools `sram` and `sram_size` would both generate the constant `SRAM_SIZE`",
            "e.g. to `sram_pool`",
        ],
    );
}

#[test]
fn kernels_without_the_io_in_the_pools_is_refused() {
    // Refused before the model is read.
    one(
        "kernels_without_io",
        &format!(
            "{POOLS}\n[[model]]\nname = \"hw\"\npath = \"hw.tflite\"\nkernels = true\nio_in_pools = false\n"
        ),
        "12:15",
        &[
            "`io_in_pools = false` leaves the model's inputs and outputs out of the pools",
            "leave `io_in_pools` out",
        ],
    );
}

#[test]
fn a_module_named_like_a_pool_is_refused() {
    one(
        "module_pool_clash",
        &format!("{POOLS}{MODEL}module = \"sram\"\n"),
        "11:10",
        &[
            "module `sram` has the name of a pool",
            "rename the module or the pool",
        ],
    );
}
