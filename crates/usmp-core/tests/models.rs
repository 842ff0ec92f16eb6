//! Models in, plans out: the IR example, every bad-input message, and the oracle on the
//! real TFLite models of ../shared/tflite-models.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::path::PathBuf;

use common::{repo, shared};
use usmp_core::input::{self, PoolsFile};
use usmp_core::model::Role;
use usmp_core::{Auto, FirstFit, HillClimb, PoolKind};

fn example(name: &str) -> PathBuf {
    repo().join("examples/models").join(name)
}

#[test]
fn a_csv_problem_is_not_a_model() {
    // Content sniffing still finds JSON and .tflite without their extensions; what is
    // left would be read as a CSV problem, which no model is.
    let e =
        input::read_model(&repo().join("examples/problems/tflm_greedy_medium.csv")).unwrap_err();
    assert!(e.message.contains("not a model file"), "{e}");
    assert!(e.message.contains(".tflite"), "{e}");
}

#[test]
fn the_ir_example_plans_with_its_pools() {
    let model = input::read_model(&example("kws.json")).unwrap();
    assert_eq!(
        model.files.len(),
        3,
        "the model and its data file, read twice"
    );
    let pools = input::read_pools(&example("kws_pools.json")).unwrap();
    let l = input::lower(&model, &pools).unwrap();
    let plan = usmp_core::plan(&l.problem, &HillClimb::default()).unwrap();

    // In place: relu shares conv's buffer; the dynamic tensor is listed, not planned.
    let t = |n: &str| {
        model
            .model
            .tensors
            .iter()
            .position(|t| t.name == n)
            .unwrap()
    };
    assert_eq!(l.tensor_buffers[t("relu")], l.tensor_buffers[t("conv")]);
    assert_eq!(l.tensor_buffers[t("tokens")], None);
    // The npu only reaches sram: everything fc touches is there.
    let sram = l.problem.pool_index("sram").unwrap();
    for name in ["pool", "state", "logits"] {
        assert_eq!(
            l.tensor_allocation(&plan, t(name)).unwrap().pool,
            sram,
            "{name}"
        );
    }
    // The constant image holds the bytes of the data file at each constant's offset.
    let flash = l.problem.pool_index("flash").unwrap();
    let image = l.constant_image(&model.model, &plan, flash);
    let file = std::fs::read(example("conv_w.bin")).unwrap();
    let fc = l.tensor_allocation(&plan, t("fc_w")).unwrap().offset as usize;
    assert_eq!(&image[fc..fc + 480], &file[128..608]);
    let w = l.tensor_allocation(&plan, t("conv_w")).unwrap().offset as usize;
    assert_eq!(&image[w..w + 640], &file[..]);

    // The default plan fills dtcm first (the pool fallback): each pool is at the bound of
    // the buffers it holds, so only another assignment could total less, and the bound
    // over every assignment is all of the workspace in sram (5776) plus flash (1136).
    let plan = usmp_core::plan(&l.problem, &usmp_core::algo::Auto::default()).unwrap();
    assert!(plan.placement_optimal(), "{:?}", plan.pool_sizes);
    assert_eq!(plan.assigned_bounds, plan.pool_sizes);
    assert_eq!(plan.lower_bound.total, 5776 + 1136);
    assert!(!plan.optimal, "8480 bytes; all in sram would take 6912");
    let text = usmp_core::report::table(&l.problem, &plan);
    assert!(
        text.contains("each pool optimal for the buffers it holds"),
        "{text}"
    );
}

/// Writes `kws.json` with `edit` applied (and `pools`, if given) into a fresh folder and
/// returns the error message of reading, lowering it.
fn error_of(edit: impl Fn(String) -> String, pools: Option<&str>) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "usmp-models-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(example("conv_w.bin"), dir.join("conv_w.bin")).unwrap();
    let text = std::fs::read_to_string(example("kws.json")).unwrap();
    let edited = edit(text.clone());
    assert_ne!(edited, text, "the edit must change the model");
    std::fs::write(dir.join("kws.json"), edited).unwrap();
    let pools_text = pools.map_or_else(
        || std::fs::read_to_string(example("kws_pools.json")).unwrap(),
        String::from,
    );
    std::fs::write(dir.join("pools.json"), pools_text).unwrap();
    let result = input::read_model(&dir.join("kws.json")).and_then(|m| {
        let p = input::read_pools(&dir.join("pools.json"))?;
        input::lower(&m, &p).map(|_| ())
    });
    // Messages name the files by the paths given: drop the folder from every line.
    let message = result.unwrap_err().to_string().replace(
        &format!("{}{}", dir.display(), std::path::MAIN_SEPARATOR),
        "",
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let at = message
        .find("kws.json")
        .or(message.find("pools.json"))
        .unwrap();
    message[at..].to_string()
}

fn replace(from: &'static str, to: &'static str) -> impl Fn(String) -> String {
    move |s: String| s.replacen(from, to, 1)
}

#[test]
fn bad_models_are_named_at_the_place() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "\"reads\": [\"conv\"]",
            "\"reads\": [\"cnov\"]",
            "kws.json:21:30: calls[1] (relu).reads[0]: no tensor is named \"cnov\"; known tensors:",
        ),
        (
            "\"writes\": [\"pool\"]",
            "\"writes\": [\"relu\"]",
            "kws.json:23:53: tensor \"relu\" is written by call 1 (relu) and again by call 2 \
             (maxpool); each activation has one writer",
        ),
        (
            "\"reads\": [\"relu\"]",
            "\"reads\": [\"pool\"]",
            "kws.json:23:33: tensor \"pool\" is read by call 2 (maxpool) before any call writes \
             it",
        ),
        (
            "\"size_bytes\": 1000",
            "\"size_bytes\": 0",
            "kws.json:9:38: tensors[5] (\"pool\").size_bytes is 0; sizes are at least 1 byte",
        ),
        (
            "\"size_bytes\": \"dynamic\"",
            "\"size_bytes\": \"dynamc\"",
            "kws.json:13:38: tensors[9] (\"tokens\").size_bytes is \"dynamc\"; write a number of \
             bytes or \"dynamic\"",
        ),
        (
            "\"name\": \"probs\"",
            "\"name\": \"audio\"",
            "kws.json:14:14: tensor \"audio\" is declared twice",
        ),
        (
            "\"file\": \"conv_w.bin\"}",
            "\"file\": \"missing.bin\"}",
            "kws.json:5:52: tensors[1] (\"conv_w\").file: cannot read",
        ),
        (
            "{\"output\": \"relu\", \"input\": \"conv\"}",
            "{\"output\": \"conv\", \"input\": \"relu\"}",
            "kws.json:22:19: \"conv\" cannot be written in place of \"relu\": this call does not \
             write \"conv\"",
        ),
        (
            "\"alignment\": 16}]},",
            "\"alignment\": 24}]},",
            "kws.json:20:18: scratch \"im2col\" of call 0 (conv2d) has alignment 24, which is \
             not a power of two",
        ),
        (
            "\"op\": \"fc\", \"target\": \"npu\"",
            "\"op\": \"fc\", \"target\": \"dsp\"",
            "kws.json:24:28: call 3 (fc) runs on target \"dsp\" but no workspace pool is \
             accessible from it; add \"dsp\" to the `targets` of a workspace pool",
        ),
        (
            "\"writes\": [\"pool\"]}",
            "\"writes\": [\"pool\"], \"overlaps\": [{\"output\": \"pool\", \"input\": \"relu\", \"shifts\": [16, 0]}]}",
            "kws.json:23:75: \"pool\" cannot be written over \"relu\": its shifts [16, 0] have \
             the least above the greatest",
        ),
        (
            "\"reads\": [\"relu\"], \"writes\": [\"pool\"]}",
            "\"reads\": [\"relu\", \"relu\"], \"writes\": [\"pool\"], \"overlaps\": [{\"output\": \"pool\", \"input\": \"relu\", \"shifts\": [-4096, 0]}]}",
            "kws.json:23:83: \"pool\" cannot be written over \"relu\": the call reads \"relu\" \
             twice, and only an input read once may share bytes with the output",
        ),
        (
            "\"calls\": [",
            "\"calls\": [], \"call\": [",
            "kws.json:18:16: the model: unknown key \"call\"",
        ),
    ];
    for (from, to, expected) in cases {
        let message = error_of(replace(from, to), None);
        assert!(
            message.starts_with(expected),
            "{from} -> {to}\n got: {message}\nwant: {expected}"
        );
    }
    // A folder here; a device (`/dev/zero`) or a FIFO is refused the same way before it is
    // read, as reading it would never end.
    let message = error_of(
        replace("\"file\": \"conv_w.bin\"}", "\"file\": \".\"}"),
        None,
    );
    assert!(
        message.starts_with("kws.json:5:52: tensors[1] (\"conv_w\").file: cannot read")
            && message
                .ends_with("it is not a regular file (a folder, a FIFO or a device); name a file"),
        "{message}"
    );
}

#[test]
fn bad_pools_are_named_at_the_place() {
    let pools = std::fs::read_to_string(example("kws_pools.json")).unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "{\"op\": \"maxpool\"",
            "{\"op\": \"avgpool\"",
            "pools.json:11:5: scratch rule for operator \"avgpool\" matches no call (the model \
             has 5 calls)",
        ),
        (
            "\"targets\": [\"cpu\", \"npu\"]",
            "\"targets\": [\"cpu\"]",
            "kws.json:24:28: call 3 (fc) runs on target \"npu\" but no workspace pool",
        ),
        (
            "{\"name\": \"flash\", \"kind\": \"constant\", \"alignment\": 16}",
            "{\"name\": \"flash\", \"alignment\": 16}",
            "kws.json:5:14: \"conv_w\" needs a constant pool but none is configured",
        ),
        (
            "{\"name\": \"flash\"",
            "{\"name\": \"dtcm\"",
            "pools.json:5:14: pools[2]: pool \"dtcm\" is already declared as pools[0]",
        ),
        (
            "\"size_granularity\": 16",
            "\"size_granularity\": 0",
            "pools.json:8:23: size_granularity is 0; write 1 or more",
        ),
        (
            "\"io_in_pools\": true",
            "\"io_in_pools\": \"yes\"",
            "pools.json:7:18: io_in_pools must be true or false, found a string",
        ),
    ];
    for (from, to, expected) in cases {
        let edited = pools.replacen(from, to, 1);
        assert_ne!(edited, pools, "{from}");
        // The model is unchanged apart from a no-op edit the helper insists on.
        let message = error_of(
            replace("\"name\": \"kws\"", "\"name\": \"kws2\""),
            Some(&edited),
        );
        assert!(
            message.starts_with(expected),
            "{from} -> {to}\n got: {message}\nwant: {expected}"
        );
    }
}

fn shared_models() -> Option<PathBuf> {
    shared("tflite-models")
}

/// TFLite Micro's activation lower bound per model (sizes rounded to 16, no scratch,
/// variables excluded: TFLM keeps them out of its planned area).
const ORACLE: [(&str, u64); 9] = [
    ("hello_world_int8", 32),
    ("hello_world_float", 128),
    ("micro_speech_quantized", 5968),
    ("audio_preprocessor_int8", 2096),
    ("keyword_scrambled", 288),
    ("person_detect", 55296),
    ("trained_lstm_int8", 1344),
    ("dtln_noise_suppression", 544),
    ("magic_wand", 13824),
];

#[test]
fn real_models_plan_to_the_lower_bound() {
    let Some(dir) = shared_models() else {
        return;
    };
    for (name, oracle) in ORACLE {
        let model = input::read_model(&dir.join(format!("{name}.tflite"))).unwrap();
        let l = input::lower(&model, &PoolsFile::default()).unwrap();
        // State is planned too (it must persist), each in bytes of its own.
        let state: u64 = model
            .model
            .tensors
            .iter()
            .filter(|t| t.role == Role::State)
            .map(|t| t.size.bytes().unwrap().next_multiple_of(16))
            .sum();
        let plan = usmp_core::plan(&l.problem, &HillClimb::default()).unwrap();
        let workspace = plan.pool_sizes[0];
        assert_eq!(
            plan.lower_bound.per_pool[0],
            oracle + state,
            "{name}: bound"
        );
        assert_eq!(workspace, oracle + state, "{name}: planned workspace");
        assert!(plan.optimal, "{name}");
        // TFLM's own size-descending first fit reaches the bound too (with our
        // ascending tie order), as the models' README says.
        let ff = usmp_core::plan(&l.problem, &FirstFit).unwrap();
        assert_eq!(ff.pool_sizes[0], oracle + state, "{name}: first_fit");
        let auto = usmp_core::plan(&l.problem, &Auto::default()).unwrap();
        assert_eq!(auto.pool_sizes[0], oracle + state, "{name}: auto");
        assert!(auto.optimal, "{name}: auto");

        // The constant pool holds every used constant tensor's bytes.
        let image = l.constant_image(&model.model, &plan, 1);
        let mut constants = 0;
        for (t, tensor) in model.model.tensors.iter().enumerate() {
            let Role::Constant(data) = &tensor.role else {
                continue;
            };
            let a = l.tensor_allocation(&plan, t).unwrap();
            assert_eq!(l.problem.pools()[a.pool].kind, PoolKind::Constant);
            let at = a.offset as usize;
            assert_eq!(
                &image[at..at + data.len()],
                data.as_slice(),
                "{name}: {}",
                tensor.name
            );
            constants += data.len();
        }
        assert!(constants > 0, "{name} has weights");
    }
}

#[test]
fn real_models_have_the_readme_shapes() {
    let Some(dir) = shared_models() else {
        return;
    };
    // (model, operators, constant bytes, variable bytes) from the models' README.
    let expected = [
        ("hello_world_int8", 3, 420, 0),
        ("micro_speech_quantized", 4, 16704, 0),
        ("keyword_scrambled", 15, 27848, 10240),
        ("person_detect", 31, 218928, 0),
        ("trained_lstm_int8", 4, 9808, 60),
        ("dtln_noise_suppression", 4, 366212, 768),
    ];
    for (name, ops, constant, variable) in expected {
        let m = input::read_model(&dir.join(format!("{name}.tflite")))
            .unwrap()
            .model;
        let sum = |f: &dyn Fn(&Role) -> bool| -> u64 {
            m.tensors
                .iter()
                .filter(|t| f(&t.role))
                .map(|t| t.size.bytes().unwrap())
                .sum()
        };
        assert_eq!(m.calls.len(), ops, "{name}");
        assert_eq!(sum(&|r| matches!(r, Role::Constant(_))), constant, "{name}");
        assert_eq!(sum(&|r| *r == Role::State), variable, "{name}");
    }
}

#[test]
fn a_pool_size_of_the_wrong_type_names_the_accepted_forms() {
    let dir = std::env::temp_dir().join(format!("usmp-size-type-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("pools.json");
    std::fs::write(&file, r#"{"pools": [{"name": "a", "size": true}]}"#).unwrap();
    let e = input::read_pools(&file).unwrap_err();
    assert!(e.message.contains("pools[0].size must be a size"), "{e}");
    assert!(e.message.contains("\"16 KiB\", or -1 for no limit"), "{e}");
    assert!(e.message.contains("found a boolean"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The offline plan written for TFLite Micro holds exactly the activations, at the lower
/// bound (no scratch given), and the copy reads back as the same model.
#[test]
fn real_models_get_tflm_offline_plans_at_the_lower_bound() {
    use usmp_core::tflite::{plan_for_tflm, read_offline_plan, read_tflite};
    let Some(dir) = shared_models() else {
        return;
    };
    for (name, oracle) in ORACLE {
        let bytes = std::fs::read(dir.join(format!("{name}.tflite"))).unwrap();
        let p = plan_for_tflm(&bytes, name, &Auto::default(), &[]).unwrap();
        assert_eq!(p.head, oracle, "{name}: head");
        assert_eq!(p.tensors_head(), oracle, "{name}: tensors");
        let copy = &p.written.bytes;
        assert!(copy.ends_with(&bytes), "{name}: the original is kept");
        assert_eq!(
            read_tflite(copy, name).unwrap(),
            read_tflite(&bytes, name).unwrap()
        );
        let back = read_offline_plan(copy).unwrap().unwrap();
        // An offset for each planned activation; constants, variables and tensors no
        // call touches (LSTM intermediates) -1.
        for (t, tensor) in p.model.tensors.iter().enumerate() {
            let planned = back.offsets[t] >= 0;
            let activation = tensor.role == Role::Activation;
            let in_plan = p.liveness.tensor_buffers[t].is_some();
            assert_eq!(
                planned,
                activation && in_plan,
                "{name}: tensor {t} {}",
                tensor.name
            );
        }
        assert!(
            back.offsets[p.model.tensors.len()..]
                .iter()
                .all(|&o| o == -1)
        );
    }
}

/// One run names every mistake of a file: reading ones together (a bad value gets a
/// stand-in and reading goes on), then, once the model reads cleanly, all of its checks.
#[test]
fn every_mistake_is_reported_together() {
    let edits = [
        replace(
            "\"size_bytes\": 4000, \"alignment\": 16",
            "\"size_bytes\": -4000, \"alignment\": 16",
        ),
        replace("\"data\": [1, 0, 255", "\"data\": [1, 0, 256"),
        replace(
            "{\"name\": \"pool\",   \"size_bytes\": 1000}",
            "{\"name\": \"pool\", \"size\": 1000}",
        ),
        replace("\"reads\": [\"relu\"]", "\"reads\": [\"rleu\"]"),
        replace("\"op\": \"softmax\"", "\"opp\": \"softmax\""),
    ];
    let message = error_of(|s| edits.iter().fold(s, |s, edit| edit(s)), None);
    let expected = [
        "kws.json:6:59: tensors[2] (\"bias\").data[2] is 256; bytes are 0 to 255",
        "kws.json:7:38: tensors[3] (\"conv\").size_bytes is -4000; write a number of 0 or more",
        "kws.json:9:5: tensors[5] (\"pool\") has no \"size_bytes\"; add it",
        "kws.json:9:22: tensors[5]: unknown key \"size\"; expected one of",
        "kws.json:23:33: calls[2] (maxpool).reads[0]: no tensor is named \"rleu\"; known tensors:",
        "kws.json:26:5: calls[4] has no \"op\"; add it",
        "kws.json:26:6: calls[4]: unknown key \"opp\"; expected one of",
    ];
    lines_start_with(&message, &expected);

    // A model that reads cleanly: every check's finding at once.
    let edits = [
        replace(
            "\"size_bytes\": 4000, \"alignment\": 16",
            "\"size_bytes\": 4000, \"alignment\": 12",
        ),
        replace("\"writes\": [\"pool\"]", "\"writes\": [\"audio\"]"),
        replace(
            "\"writes\": [\"probs\", \"tokens\"]",
            "\"writes\": [\"logits\", \"tokens\"]",
        ),
    ];
    let message = error_of(|s| edits.iter().fold(s, |s, edit| edit(s)), None);
    let expected = [
        "kws.json:7:57: tensor \"conv\" has alignment 12",
        "kws.json:17:15: model output \"probs\" is never written",
        "kws.json:23:53: call 2 (maxpool) writes model input \"audio\"",
        "kws.json:24:45: tensor \"pool\" is read by call 3 (fc) before any call writes it",
        "kws.json:26:55: tensor \"logits\" is written by call 3 (fc) and again by call 4 (softmax)",
    ];
    lines_start_with(&message, &expected);
}

/// `message` has one line per `expected`, each starting with it.
fn lines_start_with(message: &str, expected: &[&str]) {
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines.len(), expected.len(), "{message}");
    for (line, want) in lines.iter().zip(expected) {
        assert!(
            line.starts_with(want),
            "{line}\nshould start with\n{want}\nin\n{message}"
        );
    }
}

/// maxpool may write `pool` over `relu`, its last reader: the pair reaches the problem
/// between their buffers, and the plan is verified with it.
#[test]
fn a_model_declares_an_output_written_over_its_input() {
    let text = std::fs::read_to_string(example("kws.json")).unwrap().replacen(
        "\"writes\": [\"pool\"]}",
        "\"writes\": [\"pool\"], \"overlaps\": [{\"output\": \"pool\", \"input\": \"relu\", \"shifts\": [-4096, 0]}]}",
        1,
    );
    let dir = repo().join("examples/models");
    let model = input::parse_model(&text, "kws.json", &dir).unwrap();
    let pools = input::read_pools(&example("kws_pools.json")).unwrap();
    let lowered = input::lower(&model, &pools).unwrap();
    let p = &lowered.problem;
    let [o] = p.overlaps() else {
        panic!("{:?}", p.overlaps())
    };
    let name = |b: usize| p.buffers()[b].name.as_str();
    // relu is written in place of conv: their buffer is the one pool goes over.
    let pair = (name(o.output), name(o.input), o.shifts);
    assert_eq!(pair, ("pool", "conv+relu", [-4096, 0]));
    // Planned (and so verified) with it, never larger than with the two apart. (Here
    // conv+relu fills dtcm, so first fit puts pool in sram: the pair shares no bytes.)
    let apart = input::lower(&input::read_model(&example("kws.json")).unwrap(), &pools).unwrap();
    let total = |p| usmp_core::plan(p, &FirstFit).unwrap().total();
    assert!(total(p) <= total(&apart.problem));
}
