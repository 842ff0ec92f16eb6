//! The graph a `.tflite` is read into beside the model: what kernels need (types, shapes,
//! quantization) and each operator's options, decoded once into the runtime's own types.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::path::PathBuf;

use common::shared;

fn shared_models() -> Option<PathBuf> {
    shared("tflite-models")
}

#[test]
fn the_graph_gives_kernels_shapes_quantization_and_options() {
    let Some(dir) = shared_models() else { return };
    let bytes = std::fs::read(dir.join("micro_speech_quantized.tflite")).unwrap();
    let g = usmp_core::tflite::read_graph(&bytes).unwrap();
    let ops: Vec<&str> = g.operators.iter().map(|o| o.op.as_str()).collect();
    assert_eq!(
        ops,
        ["RESHAPE", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "SOFTMAX"]
    );
    // Values as TFLite Micro's Python package prints them for this file.
    let conv = &g.operators[1];
    assert_eq!(conv.inputs, [Some(4), Some(8), Some(0)]);
    let filter = &g.tensors[8];
    assert_eq!(
        (filter.shape.as_slice(), filter.element),
        (&[1, 10, 8, 8][..], usmp::ElementType::Int8)
    );
    assert!(filter.constant);
    assert_eq!(filter.quantization.scales.len(), 8);
    assert_eq!(filter.quantization.dimension, 3);
    assert_eq!(filter.quantization.scales[0], 0.000_622_243_7_f32);
    let input = &g.tensors[g.inputs[0]];
    assert_eq!(input.quantization.zero_points, [-128]);
    assert_eq!(input.quantization.scales, [0.101_715_684_f32]);
    assert!(!input.constant);
    // padding SAME (the default, so the file leaves it out), stride 2x2, depth
    // multiplier 8, RELU, dilation 1
    assert_eq!(
        conv.options,
        usmp::Options::DepthwiseConv2d {
            padding: usmp::Padding::Same,
            stride: [2, 2],
            dilation: [1, 1],
            depth_multiplier: 8,
            activation: usmp::Activation::Relu,
        }
    );
    assert_eq!(conv.builtin, Some(usmp::Builtin::DepthwiseConv2d));
    assert_eq!(g.operators[3].options, usmp::Options::Softmax { beta: 1.0 });
    assert_eq!(g.tensors[6].quantization.zero_points, [14]);
}

/// Output size of one spatial dimension, as TFLite computes it from the options.
fn out_size(input: i32, filter: i32, stride: i32, dilation: i32, padding: usmp::Padding) -> i32 {
    let effective = (filter - 1) * dilation + 1;
    match padding {
        usmp::Padding::Same => (input + stride - 1) / stride,
        usmp::Padding::Valid => (input - effective + stride) / stride,
    }
}

/// The options read by slot must be the ones the shapes were made with: for every
/// convolution and pooling of the shared models, the output's height and width follow
/// from the input's, the window, the strides, the dilation and the padding read.
#[test]
fn options_agree_with_the_shapes_of_the_shared_models() {
    let Some(dir) = shared_models() else { return };
    let mut checked = 0;
    for name in [
        "person_detect",
        "micro_speech_quantized",
        "magic_wand",
        "keyword_scrambled",
    ] {
        let bytes = std::fs::read(dir.join(format!("{name}.tflite"))).unwrap();
        let g = usmp_core::tflite::read_graph(&bytes).unwrap();
        for (i, op) in g.operators.iter().enumerate() {
            let shape = |t: usize| g.tensors[t].shape.clone();
            let output = shape(op.outputs[0]);
            let Some(w) = op.window() else { continue };
            // A pooling's window is in its options; a convolution's is its filter's shape.
            let window = w.filter.unwrap_or_else(|| {
                let f = shape(op.inputs[1].unwrap());
                [f[1], f[2]]
            });
            let (stride, dilation, padding) = (w.stride, w.dilation, w.padding);
            let x = shape(op.inputs[0].unwrap());
            for d in 0..2 {
                assert!(stride[d] >= 1 && dilation[d] >= 1, "{name} call {i}");
                assert_eq!(
                    output[1 + d],
                    out_size(x[1 + d], window[d], stride[d], dilation[d], padding),
                    "{name} call {i} ({}): {:?}",
                    op.op,
                    op.options
                );
            }
            checked += 1;
        }
    }
    // person_detect alone has 27 convolutions and a pooling.
    assert!(checked >= 28, "only {checked} calls checked");
}
