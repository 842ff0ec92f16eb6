//! The readers and the planner never panic, whatever the input: arbitrary text, and real
//! problem, model and `.tflite` files with bytes replaced, inserted or removed.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use proptest::prelude::*;
use usmp_core::algo::Named;
use usmp_core::input::{PoolsFile, lower, parse_csv, parse_model, parse_problem_json};
use usmp_core::tflite::read_tflite;

const JSON: &str = include_str!("../../../examples/problems/kws_two_pools.json");
const GRAPH: &str = include_str!("../../../examples/problems/tvm_fanout.json");
const MODEL: &str = include_str!("../../../examples/models/kws.json");
const CSV: &str =
    "id,lower,upper,size\na,0,3,18446744073709551615\nb,1,4,18446744073709551615\nc,2,9,7\n";

/// Applies byte edits to `text`, keeping the result valid UTF-8 as the readers take &str.
fn mutate(text: &str, edits: &[(usize, u8, u8)]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for &(at, op, byte) in edits {
        let at = at % (bytes.len() + 1);
        let byte = b"{}[]\",:-0123456789e.ax \n\\"[byte as usize % 24];
        match op % 3 {
            0 if at < bytes.len() => bytes[at] = byte,
            1 => bytes.insert(at, byte),
            _ if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn plan_all(problem: &usmp_core::Problem) {
    for named in Named::ALL {
        let _ = usmp_core::plan(problem, named.build().as_ref());
    }
}

fn models_dir() -> std::path::PathBuf {
    common::repo().join("examples/models")
}

/// Real `.tflite` files, when ../shared is there.
fn tflite_files() -> Vec<Vec<u8>> {
    let Some(dir) = common::shared("tflite-models") else {
        return Vec::new();
    };
    [
        "hello_world_int8",
        "micro_speech_quantized",
        "trained_lstm_int8",
    ]
    .iter()
    .map(|n| std::fs::read(dir.join(format!("{n}.tflite"))).unwrap())
    .collect()
}

/// Lowers a model onto the default pools and plans it; errors are fine, panics are not.
fn lower_and_plan(model: &usmp_core::input::ModelFile) {
    if let Ok(l) = lower(model, &PoolsFile::default()) {
        let _ = usmp_core::plan(&l.problem, &usmp_core::GreedyBySize);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn mutated_models_are_read_or_rejected(edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..6)) {
        let text = mutate(MODEL, &edits);
        match parse_model(&text, "m.json", &models_dir()) {
            Ok(model) => lower_and_plan(&model),
            Err(e) => prop_assert!(!e.message.is_empty()),
        }
    }

    #[test]
    fn arbitrary_text_is_an_error_not_a_panic(text in ".{0,200}") {
        let _ = parse_problem_json(&text, "fuzz.json");
        let _ = parse_csv(&text, "fuzz.csv", Some(64));
    }

    #[test]
    fn mutated_files_are_read_or_rejected(edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..6)) {
        for (source, is_json) in [(JSON, true), (GRAPH, true), (CSV, false)] {
            let text = mutate(source, &edits);
            let read = if is_json { parse_problem_json(&text, "m.json") } else { parse_csv(&text, "m.csv", None) };
            match read {
                Ok(problem) => plan_all(&problem),
                Err(e) => prop_assert!(!e.message.is_empty()),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn mutated_tflite_files_are_read_or_rejected(
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        for original in tflite_files() {
            let mut bytes = original.clone();
            for &(at, op, byte) in &edits {
                let at = at % (bytes.len() + 1);
                match op % 4 {
                    0 | 1 if at < bytes.len() => bytes[at] = byte,
                    2 => bytes.insert(at, byte),
                    _ if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    _ => {}
                }
            }
            // One case in eight is also truncated.
            if cut % 8 == 0 {
                bytes.truncate(cut / 8 % (bytes.len() + 1));
            }
            match read_tflite(&bytes, "fuzz") {
                Ok(model) => {
                    let file = usmp_core::input::ModelFile::from_model(model, "fuzz.tflite");
                    lower_and_plan(&file);
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
    }
}

#[test]
fn buffers_at_the_edge_of_the_address_space_do_not_overflow() {
    let problem = parse_csv(CSV, "edge.csv", None).unwrap();
    plan_all(&problem);
    let err = usmp_core::plan(&problem, &usmp_core::GreedyBySize)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "pool \"workspace\": unbounded, but the buffer would end past the 64-bit address space"
        ),
        "{err}"
    );
    let lb = usmp_core::LowerBound::of(&problem);
    assert_eq!(
        lb.total,
        u64::MAX,
        "the bound saturates rather than wrapping"
    );
}

/// Positions count in 32 bits, so a file past 4 GiB is refused before it is read. The
/// file is sparse: it takes no disk space.
#[test]
fn files_past_4_gib_are_refused_before_reading() {
    let dir = std::env::temp_dir().join(format!("usmp-huge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("huge.json");
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(u64::from(u32::MAX) + 1).unwrap();
    let e = usmp_core::input::read(&path, None).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        e.contains("huge.json") && e.contains("4294967296 bytes") && e.contains("up to 4 GiB"),
        "{e}"
    );
}
