//! The `usmp` command end to end: plans of the shared benchmarks checked from outside,
//! and bad input ending in the documented exit code with a message that says where.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};

#[path = "../common/mod.rs"]
mod common;
mod models;
mod pools;

use common::{text, usmp};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `../shared/benchmarks`, or `None` (with the reason printed) on a clone without it.
fn benchmarks() -> Option<PathBuf> {
    let dir = repo().join("../shared/benchmarks");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!(
            "skipped: {} is absent (it is always present in CI)",
            dir.display()
        );
        None
    }
}

struct Row {
    id: String,
    lower: u64,
    upper: u64,
    size: u64,
}

fn rows(csv: &Path) -> Vec<Row> {
    std::fs::read_to_string(csv)
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Row {
                id: f[0].to_string(),
                lower: f[1].parse().unwrap(),
                upper: f[2].parse().unwrap(),
                size: f[3].parse().unwrap(),
            }
        })
        .collect()
}

/// Pulls `"id":{"pool":"workspace","offset":N}` pairs out of the JSON output (the ids of
/// the benchmark files need no escaping), and the pool size.
fn offsets(json: &str) -> (u64, Vec<(String, u64)>) {
    let size_at = json.find("\"pool_sizes\":{\"workspace\":").unwrap() + 26;
    let size = json[size_at..].split('}').next().unwrap().parse().unwrap();
    let allocs = &json[json.find("\"allocations\":{").unwrap() + 15..];
    let mut out = Vec::new();
    for part in allocs.split("},").take_while(|p| p.contains("\"offset\"")) {
        let id = part.split('"').nth(1).unwrap().to_string();
        let offset = part
            .rsplit(':')
            .next()
            .unwrap()
            .trim_end_matches('}')
            .parse()
            .unwrap();
        out.push((id, offset));
    }
    (size, out)
}

/// Checks a plan against the CSV with a sweep by address, a different method from the
/// verifier's sweep by time, so a fault in one is not hidden by the same fault in the other.
fn check_plan(csv: &Path, json: &str) {
    let rows = rows(csv);
    let (pool_size, offsets) = offsets(json);
    assert_eq!(offsets.len(), rows.len(), "{}", csv.display());
    let mut placed: Vec<(u64, u64, &Row)> = rows
        .iter()
        .zip(&offsets)
        .map(|(r, (id, off))| {
            assert_eq!(&r.id, id);
            assert!(off + r.size <= pool_size);
            (*off, off + r.size, r)
        })
        .collect();
    placed.sort_by_key(|p| (p.0, p.1));
    // Buffers whose address range is still open, checked pairwise for time overlap.
    let mut open: Vec<(u64, u64, &Row)> = Vec::new();
    for p in placed {
        open.retain(|q| q.1 > p.0);
        for q in &open {
            let live_together = q.2.lower < p.2.upper && p.2.lower < q.2.upper;
            assert!(
                !live_together,
                "{}: {} and {} overlap",
                csv.display(),
                q.2.id,
                p.2.id
            );
        }
        open.push(p);
    }
}

#[test]
fn every_benchmark_gets_a_valid_plan() {
    let Some(dir) = benchmarks() else { return };
    for folder in ["minimalloc-challenging", "idealloc"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(folder))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let big = std::fs::metadata(&file).unwrap().len() > 100_000;
            // first_fit and hill_climb on the 18k-62k buffer instances take seconds each in
            // release and much longer in a test build; `usmp bench` measures them instead.
            let algorithms: &[&str] = if big {
                &["greedy_by_size", "greedy_by_conflicts"]
            } else {
                &[
                    "greedy_by_size",
                    "greedy_by_conflicts",
                    "first_fit",
                    "hill_climb",
                ]
            };
            for algorithm in algorithms {
                let out = usmp(&[
                    "plan",
                    file.to_str().unwrap(),
                    "--algorithm",
                    algorithm,
                    "--format",
                    "json",
                ]);
                assert!(
                    out.status.success(),
                    "{} {algorithm}: {}",
                    file.display(),
                    text(&out.stderr)
                );
                check_plan(&file, &text(&out.stdout));
            }
        }
    }
}

#[test]
fn json_output_has_the_documented_shape() {
    let file = repo().join("examples/problems/kws_two_pools.json");
    let out = usmp(&["plan", file.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json = text(&out.stdout);
    assert_eq!(json.lines().count(), 1);
    assert!(
        json.starts_with("{\"algorithm\":\"auto (hill_climb)\",\"pool_sizes\":{\"dtcm\":"),
        "{json}"
    );
    assert!(
        json.contains(
            "\"pool_kinds\":{\"dtcm\":\"workspace\",\"sram\":\"workspace\",\"flash\":\"constant\"}"
        ),
        "{json}"
    );
    assert!(
        json.contains("\"fc_weights\":{\"pool\":\"flash\",\"offset\":"),
        "{json}"
    );
    assert!(
        json.trim_end()
            .ends_with(",\"lower_bound\":13402,\"optimal\":false,\"placement_optimal\":true}"),
        "{json}"
    );
    // Byte-identical on a second run.
    assert_eq!(
        usmp(&["plan", file.to_str().unwrap(), "--format", "json"]).stdout,
        out.stdout
    );
}

#[test]
fn table_and_svg_show_every_buffer() {
    let file = repo().join("examples/problems/tvm_fanout.json");
    let svg = std::env::temp_dir().join(format!("usmp-test-{}.svg", std::process::id()));
    let out = usmp(&[
        "plan",
        file.to_str().unwrap(),
        "-a",
        "hill_climb",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(table.starts_with("plan by hill_climb: 7 buffers in 1 pools, 210 bytes in total; lower bound 210 (gap 0.0%, optimal)"), "{table}");
    for name in ["bi_a", "bi_b", "bi_c", "bi_d", "bi_e", "bi_f", "bi_g"] {
        assert!(table.contains(&format!("\n{name} ")), "{table}");
    }
    let drawing = std::fs::read_to_string(&svg).unwrap();
    std::fs::remove_file(&svg).unwrap();
    assert!(drawing.starts_with("<svg"));
    assert_eq!(drawing.matches("<title>bi_").count(), 7);
    assert!(drawing.contains("pool global_workspace (workspace): 210 bytes"));
}

/// What a successful `usmp` run printed.
fn planned(args: &[&str]) -> String {
    let out = usmp(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

fn fails_with(args: &[&str], code: i32, needles: &[&str]) {
    let out = usmp(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for needle in needles {
        assert!(
            err.contains(needle),
            "{args:?}: expected {needle:?} in {err}"
        );
    }
}

fn write(name: &str, contents: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("usmp-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).unwrap();
    path
}

/// The figures of docs/algorithms.md "Pools by speed": person_detect's traffic counted per
/// operator (a convolution reads its input once per multiply), the whole workspace in a
/// 64 KiB TCM either way, and `fastest` putting more accesses in a 16 KiB TCM than the
/// preference order at a lower estimated time.
#[test]
fn person_detect_traffic_moves_to_the_fast_pool_under_fastest() {
    let Some(dir) = benchmarks().map(|b| b.join("../tflite-models")) else {
        return;
    };
    let model = dir.join("person_detect.tflite");
    let run = |tcm: &str, assignment: &str| {
        let pools = write(
            &format!("speed_{tcm}_{assignment}.json"),
            &format!(
                r#"{{"pools": [
  {{"name": "tcm", "size": "{tcm}", "alignment": 16, "bandwidth": "8 GB/s"}},
  {{"name": "ocram", "alignment": 16, "bandwidth": "2 GB/s"}},
  {{"name": "flash", "kind": "constant", "alignment": 16, "bandwidth": "0.2 GB/s"}}
]}}"#
            ),
        );
        let out = planned(&[
            "plan",
            model.to_str().unwrap(),
            "--pools",
            pools.to_str().unwrap(),
            "-a",
            "exact",
            "--assignment",
            assignment,
        ]);
        std::fs::remove_file(pools).unwrap();
        out
    };
    for assignment in ["preference", "fastest"] {
        let out = run("64 KiB", assignment);
        assert!(
            out.contains("tcm                   7306402 bytes  at 8000 MB/s: 913.300 us")
                && out.contains("ocram                       0 bytes"),
            "{out}"
        );
    }
    let preferred = run("16 KiB", "preference");
    let fastest = run("16 KiB", "fastest");
    for (out, tcm, total) in [
        (&preferred, "5255634", "41674.858"),
        (&fastest, "5743762", "41491.810"),
    ] {
        assert!(
            out.contains(&format!("tcm                   {tcm} bytes"))
                && out.contains(&format!("total                                {total} us")),
            "{out}"
        );
    }
    // Speed's plan is shown next to the preference order's estimate.
    let compared = fastest
        .split_once("for comparison, the preference order's plan (288080 bytes in total):")
        .map(|(_, rest)| rest);
    assert!(
        compared.is_some_and(|c| c.contains("total                                41674.858 us")),
        "{fastest}"
    );
    assert!(!preferred.contains("for comparison"), "{preferred}");
}

#[test]
fn malformed_input_exits_2_naming_file_line_and_field() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "neg.csv",
            "id,lower,upper,size\na,0,4,16\nb,1,2,-3\n",
            &["neg.csv:3:7: field `size`: `-3` is not a whole number"],
        ),
        (
            "zero.csv",
            "id,lower,upper,size\na,0,4,0\n",
            &["zero.csv:2:7: field `size`: is 0"],
        ),
        (
            "hdr.csv",
            "name,start,end,bytes\n",
            &[
                "hdr.csv:1:1: the header is `name,start,end,bytes`; it must be `id,lower,upper,size`",
            ],
        ),
        (
            "dup.csv",
            "id,lower,upper,size\na,0,4,1\na,1,2,1\n",
            &["dup.csv:3:1: field `id`: `a` was already used on line 2"],
        ),
        (
            "syntax.json",
            "{\"pools\": [}",
            &["syntax.json:1:12: expected a JSON value"],
        ),
        (
            "pool.json",
            "{\"pools\": [{\"name\": \"sram\"}],\n \"buffers\": [{\"name\": \"a\", \"size_bytes\": 4, \"pool_candidates\": [\"dtcm\"]}]}",
            &[
                "pool.json:2:65: buffers[0] (\"a\").pool_candidates: no pool is named \"dtcm\"; known pools: \"sram\"",
            ],
        ),
        (
            "align.json",
            "{\"pools\": [{\"name\": \"sram\", \"alignment\": 3}],\n \"buffers\": []}",
            &["align.json:1:42: pool \"sram\" has alignment 3, which is not a power of two"],
        ),
        (
            "nocand.json",
            "{\"pools\": [{\"name\": \"sram\"}],\n \"buffers\": [{\"name\": \"a\", \"size_bytes\": 4, \"pool_candidates\": []}]}",
            &["nocand.json:2:64: buffer \"a\" has no candidate pools"],
        ),
        (
            "conflict.json",
            "{\"pools\": [{\"name\": \"sram\"}],\n \"buffers\": [{\"name\": \"a\", \"size_bytes\": 4, \"pool_candidates\": [\"sram\"], \"conflicts\": [\"zz\"]}]}",
            &["conflict.json:2:88: buffers[0].conflicts: no buffer is named \"zz\""],
        ),
    ];
    for (name, contents, needles) in cases {
        let path = write(name, contents);
        fails_with(&["plan", path.to_str().unwrap()], 2, needles);
        std::fs::remove_file(path).unwrap();
    }
    fails_with(
        &["plan", "no/such/file.csv"],
        2,
        &["no/such/file.csv: cannot read the file"],
    );
    let json = repo().join("examples/problems/tvm_fanout.json");
    fails_with(
        &["plan", json.to_str().unwrap(), "--capacity", "10"],
        2,
        &["a capacity only applies to CSV problems"],
    );
    fails_with(
        &["plan", json.to_str().unwrap(), "--algorithm", "magic"],
        2,
        &[
            "invalid value 'magic' for '--algorithm",
            "possible values: greedy_by_size, greedy_by_conflicts",
        ],
    );
}

#[test]
fn no_plan_within_capacity_exits_1_with_the_whole_story() {
    let file = repo().join("examples/problems/tflm_greedy_medium.csv");
    fails_with(
        &[
            "plan",
            file.to_str().unwrap(),
            "--capacity",
            "85",
            "--algorithm",
            "first_fit",
        ],
        1,
        &[
            "buffer \"t1\" (20 bytes) fits in none of its candidate pools",
            "pool \"workspace\": limit 85 bytes, needs 90 bytes (5 missing)",
            "first_fit found no plan, but one may exist",
            "fewer than 80 bytes",
            "try --algorithm auto",
        ],
    );
    // Below the bound the message says no plan can exist, and why.
    fails_with(
        &["plan", file.to_str().unwrap(), "--capacity", "70"],
        1,
        &[
            "no plan can exist: the buffers that can only go to \"workspace\" need at least \
             80 bytes at once; its limit holds 70",
        ],
    );
    // The same capacity is enough for hill climbing, which finds the 80-byte optimum.
    let out = usmp(&[
        "plan",
        file.to_str().unwrap(),
        "--capacity",
        "85",
        "--algorithm",
        "hill_climb",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("\"pool_sizes\":{\"workspace\":80}"));
}

#[test]
fn bench_prints_a_table_and_markdown() {
    let md = std::env::temp_dir().join(format!("usmp-bench-{}.md", std::process::id()));
    let file = repo().join("examples/problems/tflm_greedy_medium.csv");
    let out = usmp(&[
        "bench",
        file.to_str().unwrap(),
        "-a",
        "first_fit",
        "-a",
        "hill_climb",
        "--repeat",
        "1",
        "--markdown",
        md.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(
        table.contains("first_fit") && table.contains("12.50%"),
        "{table}"
    );
    assert!(
        table.contains("hill_climb") && table.contains("0.00%"),
        "{table}"
    );
    let markdown = std::fs::read_to_string(&md).unwrap();
    std::fs::remove_file(&md).unwrap();
    assert!(markdown.starts_with(
        "| instance | buffers | lower bound | best known | algorithm | peak | over best | over LB | read ms | plan ms |"
    ));
    assert!(
        markdown.contains(
            "| problems/tflm_greedy_medium.csv | 5 | 80 | - | first_fit | 90 | - | 12.50% |"
        ),
        "{markdown}"
    );
}

#[test]
fn capacity_decides_and_time_limit_is_checked() {
    // MiniMalloc's README example: the optimum is 12 bytes, and greedy orders miss it.
    let csv = std::env::temp_dir().join(format!("usmp-decide-{}.csv", std::process::id()));
    std::fs::write(
        &csv,
        "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n",
    )
    .unwrap();
    let path = csv.to_str().unwrap();
    let out = usmp(&["plan", path, "--capacity", "12", "--time-limit", "30"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("12 bytes in total; lower bound 12 (gap 0.0%, optimal)"),
        "{}",
        text(&out.stdout)
    );
    // Below the lower bound nothing fits: exit 1 with the pool's story.
    let out = usmp(&["plan", path, "--capacity", "11"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("limit 11 bytes"),
        "{}",
        text(&out.stderr)
    );
    // Every numeric flag is range-checked before anything runs: exit 2 and the form.
    let seconds = "give a positive number of seconds up to 31536000";
    let size = "is not a size; write bytes (4096) or a unit";
    let cases: &[(&[&str], &str)] = &[
        (&["plan", path, "--time-limit=0"], seconds),
        (&["plan", path, "--time-limit", "-1"], seconds),
        (&["plan", path, "--time-limit", "1e30"], seconds),
        (&["plan", path, "--time-limit", "inf"], seconds),
        (&["plan", path, "--time-limit", "NaN"], seconds),
        (
            &["bench", path, "-a", "auto", "--time-limit", "-5"],
            seconds,
        ),
        (&["bench", path, "--repeat", "0"], "0 is not in 1..=1000"),
        (&["bench", path, "--repeat", "99999999999"], "1..=1000"),
        (&["plan", path, "--capacity", "-5"], size),
        (&["plan", path, "--capacity", "1e30"], size),
        (
            &["plan", path, "--capacity", "99999999999999999999999"],
            "does not fit in 64 bits",
        ),
        (
            &["plan", path, "--capacity", "17179869184 GiB"],
            "does not fit in 64 bits",
        ),
    ];
    for (args, needle) in cases {
        let out = usmp(args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    let out = usmp(&["plan", path, "-a", "first_fit", "--time-limit", "5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("applies to the searching algorithms"));
    std::fs::remove_file(&csv).unwrap();
}

/// The documented chain whose outputs may be written over their inputs: every algorithm
/// plans it in 272 bytes where every pair apart needs 528, and the table says so.
#[test]
fn a_problem_with_overlaps_plans_below_the_bound_apart() {
    let file = repo().join("examples/problems/chain_overlaps.json");
    for algorithm in [
        "first_fit",
        "best_fit",
        "greedy_by_size",
        "hill_climb",
        "auto",
    ] {
        let out = usmp(&["plan", file.to_str().unwrap(), "--algorithm", algorithm]);
        assert!(out.status.success(), "{algorithm}: {}", text(&out.stderr));
        let table = text(&out.stdout);
        assert!(
            table.contains("272 bytes in total; lower bound 272"),
            "{table}"
        );
        assert!(
            table.contains("2 declared, 2 used")
                && table.contains("every pair apart 528, with the windows 272"),
            "{table}"
        );
    }
}

/// A usmp.toml whose models run on usmp-kernels plans each output over the input it
/// consumes where the kernel's window allows: `usmp plan` shows both bounds and names
/// every pair the plan uses, with its shift inside its window.
#[test]
fn plan_names_the_outputs_written_over_their_inputs() {
    let file = repo().join("fixtures/tflite/usmp-overlap.toml");
    let out = usmp(&["plan", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    for line in [
        "sram             workspace          37088",
        "sram             workspace           4176",
        "sram             workspace          12304",
        "overlaps: 2 declared, 1 used",
        "Relu over Reshape_2: shift -2208 (window -3999 to -2204)",
        "sequential/max_pooling2d/MaxPool over sequential/conv2d/Relu: shift 0 (window -1343 to 0)",
    ] {
        assert!(report.contains(line), "missing {line:?} in:\n{report}");
    }
}
