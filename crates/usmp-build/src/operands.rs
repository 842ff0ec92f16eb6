//! What a kernel needs of a `.tflite` model besides the plan: each tensor's element type,
//! shape and quantization, each call's inputs in the operator's own order (a left-out
//! optional input keeps its place), and each call's builtin options, typed. Read once at
//! build time so the generated module carries them as `const` data.

use usmp::{Activation, Options, Padding};
use usmp_core::input::ModelFile;
use usmp_core::tflite::{self, Operator, TensorInfo, TfliteError};

/// The operands of one model.
#[derive(Clone, Debug, Default)]
pub struct Operands {
    /// Tensor descriptions, one per model tensor (empty for the JSON IR).
    pub tensors: Vec<TensorInfo>,
    /// Each call's inputs, `None` for a left-out optional one.
    pub reads: Vec<Vec<Option<usize>>>,
    /// Each call's builtin options.
    pub options: Vec<Options>,
}

/// The operands of `file`'s model: from its `.tflite` bytes when it came from one; the
/// model's own reads (and no tensor table or options) for the JSON IR. An options table
/// the schema does not allow is an error naming the operator.
pub fn read(file: &ModelFile) -> Result<Operands, String> {
    let model = &file.model;
    let Some(bytes) = file.tflite_bytes() else {
        return Ok(Operands {
            tensors: Vec::new(),
            reads: model
                .calls
                .iter()
                .map(|c| c.reads.iter().map(|&t| Some(t)).collect())
                .collect(),
            options: vec![Options::None; model.calls.len()],
        });
    };
    let g = tflite::read_graph(bytes).map_err(|e| e.to_string())?;
    // Both readers read subgraph 0 of the same bytes: a difference is a bug in them.
    if g.tensors.len() != model.tensors.len() || g.operators.len() != model.calls.len() {
        return Err(format!(
            "the graph reader found {} tensors and {} operators where the model reader found {} and {}",
            g.tensors.len(),
            g.operators.len(),
            model.tensors.len(),
            model.calls.len()
        ));
    }
    let options = g
        .operators
        .iter()
        .enumerate()
        .map(|(i, op)| options(op).map_err(|e| format!("operator {i} ({}): {e}", op.op)))
        .collect::<Result<_, _>>()?;
    Ok(Operands {
        reads: g.operators.iter().map(|o| o.inputs.clone()).collect(),
        tensors: g.tensors,
        options,
    })
}

/// A convolution's or pooling's window, as the planner's reader reads it (one place for
/// those slots).
fn window(op: &Operator<'_>) -> Result<(Padding, tflite::Window), String> {
    let w = op
        .window()
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{} has no window", op.op))?;
    let padding = match w.padding {
        tflite::Padding::Same => Padding::Same,
        tflite::Padding::Valid => Padding::Valid,
    };
    Ok((padding, w))
}

fn activation(code: u8) -> Result<Activation, String> {
    Ok(match code {
        0 => Activation::None,
        1 => Activation::Relu,
        2 => Activation::ReluN1To1,
        3 => Activation::Relu6,
        4 => Activation::Tanh,
        5 => Activation::SignBit,
        other => {
            return Err(format!(
                "fused activation {other} is not in the schema (0-5)"
            ));
        }
    })
}

/// `op`'s builtin options by the schema's slot numbers and defaults.
fn options(op: &Operator<'_>) -> Result<Options, String> {
    match op.op.as_str() {
        "CONV_2D" | "DEPTHWISE_CONV_2D" | "AVERAGE_POOL_2D" | "MAX_POOL_2D" => windowed(op),
        _ => other(op),
    }
}

/// The options of the operators that slide a window. The windows come from usmp-core;
/// here the rest of each table.
fn windowed(op: &Operator<'_>) -> Result<Options, String> {
    let byte = |slot, default| op.options.byte(slot, default).map_err(|e| e.to_string());
    let int = |slot, default| op.options.int(slot, default).map_err(|e| e.to_string());
    Ok(match op.op.as_str() {
        // Conv2DOptions: padding, stride_w, stride_h, activation, dilation_w, dilation_h.
        "CONV_2D" => {
            let (padding, w) = window(op)?;
            Options::Conv2d {
                padding,
                stride: w.stride,
                dilation: w.dilation,
                activation: activation(byte(3, 0)?)?,
            }
        }
        // DepthwiseConv2DOptions: padding, stride_w, stride_h, depth_multiplier,
        // activation, dilation_w, dilation_h.
        "DEPTHWISE_CONV_2D" => {
            let (padding, w) = window(op)?;
            Options::DepthwiseConv2d {
                padding,
                stride: w.stride,
                dilation: w.dilation,
                depth_multiplier: int(3, 0)?,
                activation: activation(byte(4, 0)?)?,
            }
        }
        // Pool2DOptions: padding, stride_w, stride_h, filter_width, filter_height, activation.
        "AVERAGE_POOL_2D" | "MAX_POOL_2D" => {
            let (padding, w) = window(op)?;
            Options::Pool2d {
                padding,
                stride: w.stride,
                filter: w.filter.unwrap_or([0, 0]),
                activation: activation(byte(5, 0)?)?,
            }
        }
        _ => Options::None,
    })
}

/// Every other operator's options.
fn other(op: &Operator<'_>) -> Result<Options, String> {
    let o = &op.options;
    let e = |e: TfliteError| e.to_string();
    let byte = |slot, default| o.byte(slot, default).map_err(e);
    let int = |slot, default| o.int(slot, default).map_err(e);
    let float = |slot, default| o.float(slot, default).map_err(e);
    Ok(match op.op.as_str() {
        // FullyConnectedOptions: activation, weights_format, keep_num_dims.
        "FULLY_CONNECTED" => Options::FullyConnected {
            activation: activation(byte(0, 0)?)?,
            keep_num_dims: byte(2, 0)? != 0,
        },
        "SOFTMAX" => Options::Softmax {
            beta: float(0, 0.0)?,
        },
        "CONCATENATION" => Options::Concatenation {
            axis: int(0, 0)?,
            activation: activation(byte(1, 0)?)?,
        },
        "ADD" | "SUB" | "MUL" | "DIV" => Options::Elementwise {
            activation: activation(byte(0, 0)?)?,
        },
        "MEAN" | "SUM" | "REDUCE_MAX" => Options::Reducer {
            keep_dims: byte(0, 0)? != 0,
        },
        "RESIZE_NEAREST_NEIGHBOR" => Options::Resize {
            align_corners: byte(0, 0)? != 0,
            half_pixel_centers: byte(1, 0)? != 0,
        },
        // Slots 0 and 1 are the deprecated new_height and new_width.
        "RESIZE_BILINEAR" => Options::Resize {
            align_corners: byte(2, 0)? != 0,
            half_pixel_centers: byte(3, 0)? != 0,
        },
        "SVDF" => Options::Svdf {
            rank: int(0, 0)?,
            activation: activation(byte(1, 0)?)?,
        },
        "STRIDED_SLICE" => Options::StridedSlice {
            begin_mask: int(0, 0)?,
            end_mask: int(1, 0)?,
            ellipsis_mask: int(2, 0)?,
            new_axis_mask: int(3, 0)?,
            shrink_axis_mask: int(4, 0)?,
            offset: byte(5, 0)? != 0,
        },
        "LEAKY_RELU" => Options::LeakyRelu {
            alpha: float(0, 0.0)?,
        },
        "GATHER" => Options::Gather {
            axis: int(0, 0)?,
            batch_dims: int(1, 0)?,
        },
        "PACK" | "UNPACK" => Options::Pack {
            count: int(0, 0)?,
            axis: int(1, 0)?,
        },
        "SPLIT" | "SPLIT_V" => Options::Split {
            num_splits: int(0, 0)?,
        },
        "SPACE_TO_DEPTH" => Options::SpaceToDepth {
            block_size: int(0, 0)?,
        },
        // UnidirectionalSequenceLSTMOptions: activation, cell_clip, proj_clip, time_major.
        "UNIDIRECTIONAL_SEQUENCE_LSTM" => Options::UnidirectionalSequenceLstm {
            activation: activation(byte(0, 0)?)?,
            cell_clip: float(1, 0.0)?,
            proj_clip: float(2, 0.0)?,
            time_major: byte(3, 0)? != 0,
        },
        _ => Options::None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use super::*;

    /// Output size of one spatial dimension, as TFLite computes it from the options.
    fn out(input: i32, filter: i32, stride: i32, dilation: i32, padding: Padding) -> i32 {
        let effective = (filter - 1) * dilation + 1;
        match padding {
            Padding::Same => (input + stride - 1) / stride,
            Padding::Valid => (input - effective + stride) / stride,
        }
    }

    /// The options read by slot must be the ones the shapes were made with: for every
    /// convolution and pooling of the shared models, the output's height and width follow
    /// from the input's, the window, the strides, the dilation and the padding read.
    #[test]
    fn options_agree_with_the_shapes_of_the_shared_models() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tflite-models");
        if !dir.is_dir() {
            println!("skipped: {} is absent", dir.display());
            return;
        }
        let mut checked = 0;
        for name in [
            "person_detect",
            "micro_speech_quantized",
            "magic_wand",
            "keyword_scrambled",
        ] {
            let path = dir.join(format!("{name}.tflite"));
            let file = usmp_core::input::read_model(&path).unwrap();
            let ops = read(&file).unwrap();
            assert!(!ops.tensors.is_empty(), "{name}: no tensor table");
            for (i, call) in file.model.calls.iter().enumerate() {
                let shape = |t: usize| ops.tensors[t].shape.clone();
                let input = || shape(ops.reads[i][0].unwrap());
                let output = shape(call.writes[0]);
                let (window, stride, dilation, padding) = match ops.options[i] {
                    Options::Conv2d {
                        padding,
                        stride,
                        dilation,
                        ..
                    }
                    | Options::DepthwiseConv2d {
                        padding,
                        stride,
                        dilation,
                        ..
                    } => {
                        let f = shape(ops.reads[i][1].unwrap());
                        ([f[1], f[2]], stride, dilation, padding)
                    }
                    Options::Pool2d {
                        padding,
                        stride,
                        filter,
                        ..
                    } => (filter, stride, [1, 1], padding),
                    _ => continue,
                };
                let x = input();
                for d in 0..2 {
                    assert!(stride[d] >= 1 && dilation[d] >= 1, "{name} call {i}");
                    assert_eq!(
                        output[1 + d],
                        out(x[1 + d], window[d], stride[d], dilation[d], padding),
                        "{name} call {i} ({}): {:?}",
                        call.op,
                        ops.options[i]
                    );
                }
                checked += 1;
            }
        }
        // person_detect alone has 27 convolutions and a pooling.
        assert!(checked >= 28, "only {checked} calls checked");
    }
}
