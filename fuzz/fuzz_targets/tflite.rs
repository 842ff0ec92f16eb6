//! The `.tflite` readers (model, graph, offline plan) and TFLite Micro planning, which
//! writes a copy with an offline plan and reads it back; then planning the model.
#![no_main]

use libfuzzer_sys::fuzz_target;
use usmp_core::input::{ModelFile, PoolsFile, lower};
use usmp_core::tflite::{plan_for_tflm, read_graph, read_offline_plan, read_tflite};

fuzz_target!(|data: &[u8]| {
    let _ = read_graph(data).map(|g| g.tensors.len());
    let _ = read_offline_plan(data);
    let Ok(model) = read_tflite(data, "fuzz") else {
        return;
    };
    let file = ModelFile::from_model(model, "fuzz.tflite");
    if let Ok(lowered) = lower(&file, &PoolsFile::default()) {
        usmp_fuzz::plan_checked(&lowered.problem);
    }
    if file.model.tensors.len() <= 4096 {
        let greedy = usmp_core::Named::GreedyBySize.build();
        let _ = plan_for_tflm(data, "fuzz", greedy.as_ref(), &[]);
    }
});
