//! Models on the command line: the liveness and plan of the JSON IR and of `.tflite`
//! files, and bad models and pools files exiting 2 at the place of every mistake.

use super::*;

#[test]
fn a_model_prints_its_liveness_then_its_plan() {
    let model = repo().join("examples/models/kws.json");
    let pools = repo().join("examples/models/kws_pools.json");
    let svg = std::env::temp_dir().join(format!("usmp-model-{}.svg", std::process::id()));
    let out = usmp(&[
        "plan",
        model.to_str().unwrap(),
        "--pools",
        pools.to_str().unwrap(),
        "-a",
        "hill_climb",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // The peak is during the first call: audio 496 + conv 4000 + state 256 + im2col 1024.
    let peak = stdout.lines().find(|l| l.ends_with("<- peak")).unwrap();
    assert!(
        peak.contains("conv2d (cpu)") && peak.contains(" 5776 "),
        "{peak}"
    );
    assert!(
        stdout.contains("input audio: pool dtcm at offset"),
        "{stdout}"
    );
    assert!(stdout.contains("tokens (dynamic"), "{stdout}");
    assert!(
        stdout.contains("plan by hill_climb: 12 buffers in 3 pools"),
        "{stdout}"
    );
    let drawing = std::fs::read_to_string(&svg).unwrap();
    std::fs::remove_file(&svg).unwrap();
    assert!(
        drawing.contains(">3 fc (npu)</text>"),
        "steps label the time axis"
    );
    assert!(
        drawing.contains(">conv+relu</text>"),
        "in-place tensors share one box"
    );

    let out = usmp(&[
        "plan",
        model.to_str().unwrap(),
        "--pools",
        pools.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let json = text(&out.stdout);
    assert!(
        json.starts_with("{\"model\":\"kws\",\"plan\":{\"algorithm\":\"auto (greedy_by_breadth)\"")
    );
    assert!(
        json.contains(
            "{\"name\":\"audio\",\"role\":\"input\",\"size\":490,\"pool\":\"dtcm\",\"offset\":"
        ),
        "{json}"
    );
    assert!(json.contains("{\"name\":\"tokens\",\"role\":\"activation\",\"size\":\"dynamic\",\"pool\":null,\"offset\":null}"), "{json}");
    assert!(
        json.contains("\"step_bytes\":[5776,4256,5328,1824,320]"),
        "{json}"
    );
}

#[test]
fn a_tflite_model_plans_to_tflm_s_own_need() {
    let Some(dir) = benchmarks().map(|b| b.join("../tflite-models")) else {
        return;
    };
    let model = dir.join("micro_speech_quantized.tflite");
    let out = usmp(&["plan", model.to_str().unwrap(), "-a", "first_fit"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("model micro_speech_quantized: 4 calls"),
        "{stdout}"
    );
    assert!(
        stdout.contains("workspace live at the peak: 5968 bytes"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("workspace ") && l.contains(" 5968 ")),
        "the planned pool is TFLM's 5968 bytes:\n{stdout}"
    );
}

#[test]
fn bad_models_exit_2_naming_the_place() {
    let bad = write(
        "bad_model.json",
        "{\"tensors\": [{\"name\": \"x\", \"size_bytes\": 4}],\n \"calls\": [{\"op\": \"relu\", \"reads\": [\"y\"]}]}",
    );
    fails_with(
        &["plan", bad.to_str().unwrap()],
        2,
        &["bad_model.json:2:37: calls[0] (relu).reads[0]: no tensor is named \"y\""],
    );
    let problem = repo().join("examples/problems/kws_two_pools.json");
    let pools = repo().join("examples/models/kws_pools.json");
    fails_with(
        &[
            "plan",
            problem.to_str().unwrap(),
            "--pools",
            pools.to_str().unwrap(),
        ],
        2,
        &["--pools applies to models"],
    );
    let not_tflite = write("fake.tflite", "this is not a model");
    fails_with(
        &["plan", not_tflite.to_str().unwrap()],
        2,
        &["fake.tflite: not a TensorFlow Lite model"],
    );
}

/// Every mistake of the model and of its pools file, one `error:` line each, in one run.
#[test]
fn a_model_and_its_pools_file_report_every_mistake_together() {
    let model = write(
        "two_mistakes.json",
        "{\"tensors\": [{\"name\": \"x\", \"size_bytes\": 0}],\n \"calls\": [{\"op\": \"relu\", \"reads\": [\"y\"]}]}",
    );
    let pools = write(
        "three_mistakes.json",
        "{\"pools\": [{\"name\": \"a\", \"alignment\": 3}, {\"name\": \"a\"}],\n \"io_in_pools\": 1}",
    );
    let out = usmp(&[
        "plan",
        model.to_str().unwrap(),
        "--pools",
        pools.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    let expected = [
        "two_mistakes.json:1:42: tensors[0] (\"x\").size_bytes is 0",
        "two_mistakes.json:2:37: calls[0] (relu).reads[0]: no tensor is named \"y\"",
        "three_mistakes.json:1:39: pools[0].alignment is 3, which is not a power of two",
        "three_mistakes.json:1:52: pools[1]: pool \"a\" is already declared as pools[0]",
        "three_mistakes.json:2:17: io_in_pools must be true or false, found a number",
    ];
    assert_eq!(lines.len(), expected.len(), "{stderr}");
    for (line, want) in lines.iter().zip(expected) {
        let (prefix, rest) = line.split_once(": ").unwrap();
        assert_eq!(prefix, "error", "{stderr}");
        assert!(rest.contains(want), "{line} should contain {want}");
    }
    std::fs::remove_file(model).unwrap();
    std::fs::remove_file(pools).unwrap();
}

/// `--order memory` on a model written breadth first (every branch's first call, then
/// every branch's second): each branch runs to its small summary before the next starts,
/// and the plan reaches the new order's peak. The figures of docs/cli.md.
#[test]
fn order_memory_runs_each_branch_to_its_end() {
    let model = repo().join("examples/models/multiscale.json");
    let model = model.to_str().unwrap();
    let written = planned(&["plan", model]);
    assert!(
        written.contains("65552 bytes in total; lower bound 65552"),
        "{written}"
    );
    assert!(!written.contains("call order"), "{written}");
    let report = planned(&["plan", model, "--order", "memory"]);
    for line in [
        "call order: memory: peak 65536 bytes as written, 34816 in this order (no order of the calls has a lower peak)",
        "the calls as written, in the order they run: 1, 4, 0, 3, 2, 5, 6, 7, 8",
        "    0  conv_5x5 (cpu)                   3      34816  image, coarse, im2col@0  <- peak",
        "34832 bytes in total; lower bound 34832",
    ] {
        assert!(report.contains(line), "missing {line:?} in:\n{report}");
    }
    fails_with(
        &[
            "plan",
            "--order",
            "memory",
            &write("p.csv", "id,lower,upper,size\na,0,1,8\n").to_string_lossy(),
        ],
        2,
        &["--order applies to models"],
    );
    let manifest = repo().join("fixtures/tflite/usmp-overlap.toml");
    fails_with(
        &["plan", manifest.to_str().unwrap(), "--order", "memory"],
        2,
        &["--order"],
    );
}

/// The fixture's branching `.tflite` models with `order = "memory"` and the kernels'
/// windows: branches and gates run in another order (their element-wise calls over their
/// inputs make it lower), the others keep theirs, proven lowest (the README's figures).
#[test]
fn the_branching_fixtures_run_in_the_order_of_the_lowest_peak() {
    let file = repo().join("fixtures/tflite/usmp-order.toml");
    let report = planned(&["plan", file.to_str().unwrap()]);
    let kept = |peak: u64| {
        format!(
            "call order: memory: the order as written has the lowest peak found, {peak} bytes (no order of the calls has a lower peak)"
        )
    };
    let moved = |written: u64, peak: u64| {
        format!(
            "call order: memory: peak {written} bytes as written, {peak} in this order (no order of the calls has a lower peak)"
        )
    };
    for (model, line) in [
        ("branches", moved(2120, 2055)),
        ("tall", kept(605)),
        ("gates", moved(607, 579)),
        // Their CONCATENATION calls over their first inputs lower them as written.
        ("wide", kept(896)),
        ("unet", kept(4096)),
    ] {
        let at = report.find(&format!("== model {model} ")).unwrap();
        let section = &report[at + 1..];
        let section = &section[..section.find("== model").unwrap_or(section.len())];
        assert!(
            section.contains(&line),
            "{model}: missing {line:?} in:\n{report}"
        );
    }
}

/// A 500-call chain of near-equal activations (every tenth read again nine calls later):
/// slots reaches the bound, so `auto` stops there (docs/performance.md, "Long chains").
#[test]
fn a_long_chain_is_planned_at_its_bound_by_slots() {
    let model = repo().join("examples/models/chain_500.json");
    let report = planned(&["plan", model.to_str().unwrap()]);
    let line = "plan by auto (slots): 1001 buffers in 2 pools, 3616 bytes in total; lower bound 3616 (gap 0.0%, optimal)";
    assert!(report.contains(line), "missing {line:?} in:\n{report}");
}
