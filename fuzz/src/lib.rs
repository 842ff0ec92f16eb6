//! What every fuzz target does once its reader accepted the input: plan with two fast
//! algorithms through `usmp_core::plan`, which runs the independent verifier. A reader
//! that panics, or a plan the verifier rejects, is a crash for libFuzzer to keep.

use std::path::PathBuf;

use usmp_core::{Algorithm, Named, PlanError, Problem};

/// Problems bigger than this are read but not planned: the inputs are small, and a
/// planner's time on a big one says nothing about the reader.
const MAX_PLANNED: usize = 4096;

/// Plans `problem` with greedy by size and first fit; panics if the verifier rejects a plan.
pub fn plan_checked(problem: &Problem) {
    if problem.buffers().len() > MAX_PLANNED {
        return;
    }
    for named in [Named::GreedyBySize, Named::FirstFit] {
        let algorithm = named.build();
        if let Err(PlanError::Invalid { violations, .. }) =
            usmp_core::plan(problem, algorithm.as_ref() as &dyn Algorithm)
        {
            panic!("{named} made a plan the verifier rejects: {violations:?}");
        }
    }
}

/// A folder holding the repository's example model (`kws.json` and its weights), for
/// inputs that name model files; made once per process.
pub fn model_folder() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("usmp-fuzz-{}", std::process::id()));
    if !dir.join("kws.json").exists() {
        let write = |name: &str, bytes: &[u8]| {
            if std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::write(dir.join(name), bytes))
                .is_err()
            {
                panic!("cannot write the fuzz folder {}", dir.display());
            }
        };
        write(
            "conv_w.bin",
            include_bytes!("../../examples/models/conv_w.bin"),
        );
        write(
            "kws_pools.json",
            include_bytes!("../../examples/models/kws_pools.json"),
        );
        write("kws.json", include_bytes!("../../examples/models/kws.json"));
    }
    dir
}
