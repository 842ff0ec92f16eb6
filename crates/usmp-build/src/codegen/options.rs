//! A call's builtin options as the Rust expression that builds them.

use usmp::{Activation, Options, Padding};

use super::tensors::float;

fn padding(p: Padding) -> &'static str {
    match p {
        Padding::Same => "Padding::Same",
        Padding::Valid => "Padding::Valid",
    }
}

fn activation(a: Activation) -> &'static str {
    match a {
        Activation::None => "Activation::None",
        Activation::Relu => "Activation::Relu",
        Activation::ReluN1To1 => "Activation::ReluN1To1",
        Activation::Relu6 => "Activation::Relu6",
        Activation::Tanh => "Activation::Tanh",
        Activation::SignBit => "Activation::SignBit",
    }
}

/// `Options::...` for `o`, with the generated module's imports.
pub(super) fn render(o: &Options) -> String {
    windowed(o)
        .or_else(|| other(o))
        // `Options` is non-exhaustive for users; every variant is written in the two.
        .unwrap_or_else(|| "Options::None".to_string())
}

/// The options of the operators that slide a window: convolutions and pooling.
fn windowed(o: &Options) -> Option<String> {
    Some(match *o {
        Options::Conv2d {
            padding: p,
            stride,
            dilation,
            activation: a,
        } => format!(
            "Options::Conv2d {{ padding: {}, stride: {stride:?}, dilation: {dilation:?}, activation: {} }}",
            padding(p),
            activation(a)
        ),
        Options::DepthwiseConv2d {
            padding: p,
            stride,
            dilation,
            depth_multiplier,
            activation: a,
        } => format!(
            "Options::DepthwiseConv2d {{ padding: {}, stride: {stride:?}, dilation: {dilation:?}, depth_multiplier: {depth_multiplier}, activation: {} }}",
            padding(p),
            activation(a)
        ),
        Options::Pool2d {
            padding: p,
            stride,
            filter,
            activation: a,
        } => format!(
            "Options::Pool2d {{ padding: {}, stride: {stride:?}, filter: {filter:?}, activation: {} }}",
            padding(p),
            activation(a)
        ),
        Options::FullyConnected {
            activation: a,
            keep_num_dims,
        } => format!(
            "Options::FullyConnected {{ activation: {}, keep_num_dims: {keep_num_dims} }}",
            activation(a)
        ),
        _ => return None,
    })
}

/// Every other operator's options.
fn other(o: &Options) -> Option<String> {
    Some(match *o {
        Options::Softmax { beta } => format!("Options::Softmax {{ beta: {} }}", float(beta)),
        Options::Concatenation {
            axis,
            activation: a,
        } => format!(
            "Options::Concatenation {{ axis: {axis}, activation: {} }}",
            activation(a)
        ),
        Options::Elementwise { activation: a } => {
            format!("Options::Elementwise {{ activation: {} }}", activation(a))
        }
        Options::Reducer { keep_dims } => format!("Options::Reducer {{ keep_dims: {keep_dims} }}"),
        Options::Resize {
            align_corners,
            half_pixel_centers,
        } => format!(
            "Options::Resize {{ align_corners: {align_corners}, half_pixel_centers: {half_pixel_centers} }}"
        ),
        Options::Svdf {
            rank,
            activation: a,
        } => format!(
            "Options::Svdf {{ rank: {rank}, activation: {} }}",
            activation(a)
        ),
        Options::StridedSlice {
            begin_mask,
            end_mask,
            ellipsis_mask,
            new_axis_mask,
            shrink_axis_mask,
            offset,
        } => format!(
            "Options::StridedSlice {{ begin_mask: {begin_mask}, end_mask: {end_mask}, ellipsis_mask: {ellipsis_mask}, new_axis_mask: {new_axis_mask}, shrink_axis_mask: {shrink_axis_mask}, offset: {offset} }}"
        ),
        Options::LeakyRelu { alpha } => {
            format!("Options::LeakyRelu {{ alpha: {} }}", float(alpha))
        }
        Options::Gather { axis, batch_dims } => {
            format!("Options::Gather {{ axis: {axis}, batch_dims: {batch_dims} }}")
        }
        Options::Pack { count, axis } => {
            format!("Options::Pack {{ count: {count}, axis: {axis} }}")
        }
        Options::Split { num_splits } => format!("Options::Split {{ num_splits: {num_splits} }}"),
        Options::SpaceToDepth { block_size } => {
            format!("Options::SpaceToDepth {{ block_size: {block_size} }}")
        }
        Options::UnidirectionalSequenceLstm {
            activation: a,
            cell_clip,
            proj_clip,
            time_major,
        } => format!(
            "Options::UnidirectionalSequenceLstm {{ activation: {}, cell_clip: {}, proj_clip: {}, time_major: {time_major} }}",
            activation(a),
            float(cell_clip),
            float(proj_clip)
        ),
        _ => return None,
    })
}
