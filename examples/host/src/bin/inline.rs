//! The same model and pools as the firmware's usmp.toml, declared inline with
//! `usmp_pools!`: planned at compile time, errors at the offending token, the same
//! generated API. `cargo run -p micro-speech-host --bin inline`.

#[path = "../infer.rs"]
mod infer;
mod usmp {
    // Paths are relative to this file, as with include_bytes!.
    usmp_macros::usmp_pools! {
        model = "../../../micro-speech/model/micro_speech_quantized.tflite",
        name = "micro_speech",
        kernels = true,
        pools {
            // No `region`: the macro writes no linker fragment (a host build needs none).
            dtcm:  workspace(size = 4 KiB),
            sram:  workspace(),
            flash: constant(),
        }
    }
}

fn main() -> std::process::ExitCode {
    infer::run_all("usmp_pools!")
}

#[cfg(test)]
mod tests {
    #[test]
    fn outputs_equal_tflite_micro_with_and_without_poison() {
        super::infer::check_with_and_without_poison();
    }

    #[test]
    fn the_inline_plan_is_the_usmp_toml_plan() {
        let sizes: Vec<usize> = super::usmp::POOLS.iter().map(|p| p.size).collect();
        // As the firmware prints for examples/firmware/usmp.toml.
        assert_eq!(sizes, [1968, 4000, 16704]);
    }
}
