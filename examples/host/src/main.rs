//! micro_speech on the host through the generated API of the firmware's usmp.toml: the
//! same pools, offsets and operator calls as the firmware, checked against TFLite Micro.
//! `cargo run -p micro-speech-host` (add `--features poison` for the liveness proof).

mod infer;
mod ops {
    include!(concat!(env!("OUT_DIR"), "/ops.rs"));
}
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

    /// The typed operands of the generated module (element type, shape, quantization, with
    /// per-channel scales read from a binary file) agree with the kernel parameters that
    /// micro_speech's build computed from the same .tflite on its own.
    #[test]
    fn typed_operands_agree_with_the_kernel_parameters() {
        use ::usmp::{Builtin, ElementType, Model as _, Op, Tensor};
        let info = super::usmp::micro_speech::Model::INFO;
        let tensor =
            |slot: &::usmp::Slot| -> &Tensor { &info.tensors[slot.tensor.unwrap() as usize] };
        let zero = |t: &Tensor| t.quantization.unwrap().zero_point[0] as i32;
        let mut checked = 0;
        for (call, op) in info.calls.iter().zip(&super::ops::OPS) {
            assert_eq!(call.op, Op::Builtin(op.builtin()));
            let (input, output) = (tensor(&call.inputs[0]), tensor(&call.outputs[0]));
            assert_eq!(input.element, ElementType::Int8);
            match op {
                micro_speech::Op::DepthwiseConv(p) => {
                    let filter = tensor(&call.inputs[1]);
                    let shape: Vec<usize> = filter.shape.iter().map(|&d| d as usize).collect();
                    assert_eq!(shape, p.filter);
                    let scales = filter.quantization.unwrap().scale;
                    assert_eq!(scales.len(), p.multipliers.len());
                    assert!(scales.iter().all(|s| s > 0.0 && s.is_finite()));
                    assert_eq!(-zero(input), p.input_offset);
                    assert_eq!(zero(output), p.output_offset);
                    let ::usmp::Options::DepthwiseConv2d {
                        stride, dilation, ..
                    } = call.options
                    else {
                        panic!("depthwise options: {:?}", call.options)
                    };
                    assert_eq!(stride.map(|s| s as usize), p.stride);
                    assert_eq!(dilation.map(|d| d as usize), p.dilation);
                    checked += 1;
                }
                micro_speech::Op::FullyConnected(p) => {
                    assert_eq!(
                        tensor(&call.inputs[1]).shape,
                        [p.outputs as i32, p.depth as i32]
                    );
                    assert_eq!(-zero(input), p.input_offset);
                    assert_eq!(zero(output), p.output_offset);
                    checked += 1;
                }
                micro_speech::Op::Softmax(p) => {
                    assert_eq!(*output.shape.last().unwrap() as usize, p.depth);
                    assert!(
                        matches!(call.options, ::usmp::Options::Softmax { beta } if beta > 0.0)
                    );
                    checked += 1;
                }
                micro_speech::Op::Reshape => assert_eq!(call.op, Op::Builtin(Builtin::Reshape)),
            }
        }
        assert_eq!(checked, 3);
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
