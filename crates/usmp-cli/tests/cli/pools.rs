//! Pools on the command line: a build's usmp.toml planned as the build would, the
//! assignment of buffers to pools, and the memory time of pools with bandwidths.

use super::*;

/// `usmp plan usmp.toml` plans what the build would and prints the report it would
/// write; flags the manifest sets itself are refused; a bad manifest is located.
#[test]
fn a_usmp_toml_plans_as_the_build_would() {
    let toml = repo().join("examples/firmware/usmp.toml");
    let toml = toml.to_str().unwrap();
    let out = usmp(&["plan", toml]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains(
            "dtcm         workspace       1968 bytes  limit 4096, section .usmp.dtcm in region DTCM"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("== model micro_speech"), "{stdout}");
    // The same bytes as the report a build writes (usmp-build's own text).
    let planned = usmp_build::Config::from_file(toml)
        .cargo_directives(false)
        .plan()
        .unwrap();
    assert_eq!(stdout, usmp_build::__private::report_text(&planned));

    let out = usmp(&["plan", toml, "--pools", "p.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--pools does not apply to a usmp.toml"),
        "{}",
        text(&out.stderr)
    );
    // The other way round: a usmp.toml given as the pools of a model is not read as JSON.
    let model = repo().join("examples/models/kws.json");
    fails_with(
        &["plan", model.to_str().unwrap(), "--pools", toml],
        2,
        &["a pools file is JSON", "`usmp plan usmp.toml`"],
    );

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-manifest");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("usmp.toml");
    std::fs::write(&bad, "[[pool]]\nname = \"sram\"\nalignment = 3\n").unwrap();
    let out = usmp(&["plan", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("usmp.toml:3:13: error:"), "{err}");
    // The diagnostics say `error:` themselves; the command adds no second one.
    assert!(err.lines().all(|l| !l.starts_with("error:")), "{err}");
    assert!(
        err.contains("no model is declared"),
        "all errors at once: {err}"
    );
}

/// `--assignment`: the preference order keeps the 4000-byte activation in the 8 KiB
/// `dtcm` listed first; the smallest total moves it to `sram`, where it fits beside what
/// `sram` holds anyway, and proves the total optimal. Only the searching algorithms take it.
#[test]
fn assignment_chooses_between_preference_and_the_smallest_total() {
    let model = repo().join("examples/models/kws.json");
    let pools = repo().join("examples/models/kws_pools.json");
    let (model, pools) = (model.to_str().unwrap(), pools.to_str().unwrap());
    let run = |extra: &[&str]| planned(&[&["plan", model, "--pools", pools], extra].concat());
    let preferred = run(&[]);
    assert!(
        preferred.contains("8480 bytes in total")
            && preferred.contains("conv+relu                dtcm"),
        "{preferred}"
    );
    let smallest = run(&["--assignment", "smallest_total"]);
    assert!(
        smallest.contains("6912 bytes in total; lower bound 6912 (gap 0.0%, optimal)")
            && smallest.contains("conv+relu                sram"),
        "{smallest}"
    );
    fails_with(
        &[
            "plan",
            model,
            "--pools",
            pools,
            "-a",
            "first_fit",
            "--assignment",
            "smallest_total",
        ],
        2,
        &["--assignment applies to the searching algorithms exact and auto, not first_fit"],
    );
}

/// Pools with a `bandwidth` and buffers with `traffic`: the table estimates the memory
/// time per pool, `--assignment fastest` puts the hot buffer in the fast pool, and a
/// bandwidth that is not one is located.
#[test]
fn bandwidth_and_traffic_give_the_memory_time_and_the_fastest_plan() {
    let problem = write(
        "speed.json",
        r#"{"pools": [
  {"name": "slow", "bandwidth": "1 GB/s"},
  {"name": "fast", "size": 64, "bandwidth": "8 GB/s"}
],
"buffers": [
  {"name": "cold", "size_bytes": 60, "pool_candidates": ["slow", "fast"], "live": [0, 2], "traffic": 60},
  {"name": "hot", "size_bytes": 32, "pool_candidates": ["slow", "fast"], "live": [0, 2], "traffic": 3200}
]}"#,
    );
    let file = problem.to_str().unwrap();
    let run = |extra: &[&str]| planned(&[&["plan", file], extra].concat());
    let preferred = run(&[]);
    assert!(
        preferred.contains("slow                     3260 bytes  at 1000 MB/s: 3.260 us")
            && preferred.contains("total                                3.260 us"),
        "{preferred}"
    );
    let json = run(&["--format", "json"]);
    assert!(
        json.contains(
            r#""traffic":{"slow":{"bytes":3260,"nanoseconds":3260},"fast":{"bytes":0,"nanoseconds":0}}"#
        ),
        "{json}"
    );
    let fastest = run(&["--assignment", "fastest"]);
    assert!(
        fastest.contains("fast                     3200 bytes  at 8000 MB/s: 0.400 us")
            && fastest.contains("total                                0.460 us"),
        "{fastest}"
    );
    let bad = write(
        "bad_speed.json",
        r#"{"pools": [{"name": "p", "bandwidth": "fast"}], "buffers": []}"#,
    );
    fails_with(
        &["plan", bad.to_str().unwrap()],
        2,
        &["bad_speed.json:1:39: pools[0].bandwidth: `fast` is not a bandwidth; write"],
    );
    std::fs::remove_file(problem).unwrap();
    std::fs::remove_file(bad).unwrap();
}
