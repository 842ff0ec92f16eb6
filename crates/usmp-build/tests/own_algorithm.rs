//! `Config::algorithm`: a build script's own planning algorithm, named in usmp.toml,
//! plans the model, and its plan is verified like any other.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::PathBuf;

use usmp_build::usmp_core::{
    self, Algorithm, Allocation, LowerBound, PlanError, Problem, Solution,
};
use usmp_build::{Config, Error};

const TOML: &str = concat!(
    "[[pool]]\nname = \"sram\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\n\n",
    "[[model]]\nname = \"kws\"\npath = \"",
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/models/kws.json\"\nalgorithm = \"stack\"\n"
);

/// Every buffer at its own offset in its first pool: valid, never small.
struct Stack;

impl Algorithm for Stack {
    fn name(&self) -> &str {
        "stack"
    }
    fn allocate(&self, problem: &Problem, _: &LowerBound) -> Result<Solution, PlanError> {
        let mut next = vec![0u64; problem.pools().len()];
        let allocations = (0..problem.buffers().len())
            .map(|i| {
                let b = &problem.buffers()[i];
                let pool = b.candidates[0];
                let offset = next[pool].next_multiple_of(problem.alignment_in(i, pool));
                next[pool] = offset + b.size;
                Allocation { pool, offset }
            })
            .collect();
        Ok(Solution::new(allocations))
    }
}

/// Every buffer at offset 0: overlaps whatever lives at the same time.
struct Pile;

impl Algorithm for Pile {
    fn name(&self) -> &str {
        "pile"
    }
    fn allocate(&self, problem: &Problem, _: &LowerBound) -> Result<Solution, PlanError> {
        let at = |b: &usmp_core::Buffer| Allocation {
            pool: b.candidates[0],
            offset: 0,
        };
        Ok(Solution::new(problem.buffers().iter().map(at).collect()))
    }
}

fn dir(case: &str, toml: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("own_algorithm")
        .join(case);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("usmp.toml"), toml).unwrap();
    dir
}

fn workspace_bytes(config: &Config) -> u64 {
    let planned = config.plan().unwrap();
    planned.pools[0].size
}

#[test]
fn a_registered_algorithm_plans_the_model_that_names_it() {
    let d = dir("stack", TOML);
    let config = Config::from_file(d.join("usmp.toml"))
        .out_dir(&d)
        .cargo_directives(false)
        .algorithm("stack", Stack);
    let stacked = workspace_bytes(&config);
    let out = config.generate().unwrap();
    let report = std::fs::read_to_string(out.report).unwrap();
    assert!(report.contains("stack"), "{report}");
    // The same model with the default algorithm shares bytes between buffers; the stack
    // never does, so it needs more: the registered algorithm really planned.
    let auto = dir("auto", &TOML.replace("algorithm = \"stack\"\n", ""));
    let shared =
        workspace_bytes(&Config::from_file(auto.join("usmp.toml")).cargo_directives(false));
    assert!(stacked > shared, "stack {stacked} bytes, auto {shared}");
}

#[test]
fn a_wrong_plan_from_an_own_algorithm_is_a_build_error_naming_it() {
    let d = dir("pile", &TOML.replace("\"stack\"", "\"pile\""));
    let result = Config::from_file(d.join("usmp.toml"))
        .out_dir(&d)
        .cargo_directives(false)
        .algorithm("pile", Pile)
        .generate();
    let Err(Error::Invalid(d)) = result else {
        panic!(
            "the overlapping plan was accepted: {:?}",
            result.map(|o| o.module)
        );
    };
    assert_eq!(d.len(), 1, "{d:#?}");
    // At the model's `algorithm`, line 11, column 13.
    assert_eq!((d[0].line, d[0].column), (11, 13), "{}", d[0]);
    assert!(d[0].file.ends_with("usmp.toml"), "{}", d[0]);
    let d: Vec<String> = d.iter().map(ToString::to_string).collect();
    assert!(d[0].contains("usmp.toml:11:13: error:"), "{}", d[0]);
    assert!(
        d[0].contains("algorithm \"pile\" produced an invalid plan"),
        "{}",
        d[0]
    );
    assert!(d[0].contains("overlap"), "{}", d[0]);
}

#[test]
fn an_unregistered_name_lists_the_built_in_and_registered_ones() {
    let d = dir("unknown", &TOML.replace("\"stack\"", "\"stak\""));
    let result = Config::from_file(d.join("usmp.toml"))
        .out_dir(&d)
        .cargo_directives(false)
        .algorithm("stack", Stack)
        .generate();
    let Err(Error::Invalid(d)) = result else {
        panic!("an unknown algorithm was accepted");
    };
    let d: Vec<String> = d.iter().map(ToString::to_string).collect();
    assert!(d[0].contains("unknown algorithm `stak`"), "{}", d[0]);
    assert!(
        d[0].contains("first_fit") && d[0].contains("this build's own: stack"),
        "{}",
        d[0]
    );
}

/// A 100-call chain with skip connections read again 3, 9 and 27 calls later, its
/// activations 512-1,120 bytes: no planner reaches its bound (`usmp plan` with the
/// command's whole budget ends 2.7 % over it). With sizes within a tenth of each other
/// slots, pushed down, reaches it.
fn skips_model() -> String {
    // Drawn by a fixed linear congruential generator: 512-1,120 bytes.
    let size = |i: usize| 512 + (i.wrapping_mul(2_654_435_761) >> 7) % 609;
    let tensors: Vec<String> = (0..=100)
        .map(|i| format!("{{\"name\": \"x{i}\", \"size_bytes\": {}}}", size(i)))
        .collect();
    let calls: Vec<String> = (0..100)
        .map(|i| {
            let mut reads = vec![format!("\"x{i}\"")];
            for s in [3, 9, 27] {
                if i >= s && (i - s) % (s + 1) == 0 {
                    reads.push(format!("\"x{}\"", i - s));
                }
            }
            format!(
                "{{\"op\": \"op\", \"reads\": [{}], \"writes\": [\"x{}\"], \"scratch\": [{{\"name\": \"s\", \"size_bytes\": 256}}]}}",
                reads.join(", "),
                i + 1
            )
        })
        .collect();
    format!(
        "{{\"name\": \"skips\", \"inputs\": [\"x0\"], \"outputs\": [\"x100\"], \"tensors\": [{}], \"calls\": [{}]}}",
        tensors.join(", "),
        calls.join(", ")
    )
}

/// `Config::work_budget`: the built-in searching algorithms plan within the budget the
/// build gives them, and the report says so where the plan is not proven optimal.
#[test]
fn the_search_runs_within_the_builds_work_budget() {
    let toml = "[[pool]]\nname = \"sram\"\n\n[[model]]\nname = \"skips\"\npath = \"skips.json\"\n";
    let report = |case: &str, config: fn(Config) -> Config| {
        let d = dir(case, toml);
        std::fs::write(d.join("skips.json"), skips_model()).unwrap();
        config(Config::from_file(d.join("usmp.toml")).out_dir(&d))
            .cargo_directives(false)
            .generate()
            .unwrap();
        std::fs::read_to_string(d.join(usmp_build::REPORT_FILE)).unwrap()
    };
    let line = |units: u64| {
        format!("not proven optimal within the build's work budget of {units} search units")
    };
    let default = report("budget-default", |c| c);
    assert!(
        default.contains(&line(usmp_build::BUILD_WORK_BUDGET)),
        "{default}"
    );
    let none = report("budget-none", |c| c.work_budget(0));
    assert!(none.contains(&line(0)), "{none}");
}
