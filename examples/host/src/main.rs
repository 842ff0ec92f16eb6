//! micro_speech on the host through the generated API of the firmware's usmp.toml: the
//! same pools, offsets and operator calls as the firmware, checked against TFLite Micro.
//! `cargo run -p micro-speech-host` (add `--features poison` for the liveness proof).

mod infer;
mod usmp {
    include!(concat!(env!("OUT_DIR"), "/usmp.rs"));
}

fn main() -> std::process::ExitCode {
    infer::run_all("the firmware's usmp.toml")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use micro_speech::testdata;

    #[test]
    fn outputs_equal_tflite_micro_with_and_without_poison() {
        super::infer::check_with_and_without_poison();
    }

    #[test]
    fn the_example_model_is_tflite_micros_file() {
        let ours = include_bytes!("../../micro-speech/model/micro_speech_quantized.tflite");
        let shared = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/tflite-models/micro_speech_quantized.tflite"
        );
        match std::fs::read(shared) {
            Ok(bytes) => assert!(bytes == ours, "the example's model differs from {shared}"),
            Err(_) => eprintln!("skipped: {shared} is absent (it is always present in CI)"),
        }
        assert_eq!(testdata::CASES, 4);
    }
}
