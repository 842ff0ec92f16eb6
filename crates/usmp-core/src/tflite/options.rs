//! Each operator's builtin options, decoded once into the runtime's own
//! [`Options`](usmp::Options) (the value generated code holds and kernels read).
//!
//! Options are read by slot number, in the order of the options table in TensorFlow
//! Lite's `schema.fbs` (for `DepthwiseConv2DOptions`: 0 padding, 1 stride_w, 2 stride_h,
//! 3 depth_multiplier, 4 fused_activation_function, 5 dilation_w_factor, 6
//! dilation_h_factor); an absent field reads as the schema's default.

use usmp::{Activation, Builtin, Options, Padding};

use super::TfliteError;
use super::flatbuffer::Table;

/// An operator's builtin options table, read by slot number.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slots<'a> {
    pub table: Option<Table<'a>>,
    /// The operator's index, for messages.
    pub index: usize,
    /// Its name, for messages.
    pub name: &'a str,
}

impl Slots<'_> {
    fn read<T>(
        &self,
        slot: usize,
        default: T,
        get: impl Fn(&Table<'_>) -> super::flatbuffer::Result<T>,
    ) -> Result<T, TfliteError> {
        match &self.table {
            Some(t) => get(t).map_err(|detail| self.invalid(slot, detail)),
            None => Ok(default),
        }
    }

    /// A one-byte field (an enum such as padding or the fused activation, or a bool).
    fn byte(&self, slot: usize, default: u8) -> Result<u8, TfliteError> {
        self.read(slot, default, |t| t.u8(slot, default))
    }

    /// A bool field.
    fn flag(&self, slot: usize) -> Result<bool, TfliteError> {
        self.byte(slot, 0).map(|b| b != 0)
    }

    /// An `int` field.
    fn int(&self, slot: usize, default: i32) -> Result<i32, TfliteError> {
        self.read(slot, default, |t| {
            t.u32(slot, default as u32).map(|v| v as i32)
        })
    }

    /// A `float` field.
    fn float(&self, slot: usize) -> Result<f32, TfliteError> {
        self.read(slot, 0.0, |t| t.u32(slot, 0).map(f32::from_bits))
    }

    /// A value the schema does not have.
    fn invalid(&self, slot: usize, detail: String) -> TfliteError {
        TfliteError::Corrupt {
            context: format!(
                "the options of operator {} ({}, slot {slot})",
                self.index, self.name
            ),
            detail,
        }
    }

    /// The `Padding` enum at `slot`.
    fn padding(&self, slot: usize) -> Result<Padding, TfliteError> {
        match self.byte(slot, 0)? {
            0 => Ok(Padding::Same),
            1 => Ok(Padding::Valid),
            other => Err(self.invalid(
                slot,
                format!("padding {other} is neither SAME (0) nor VALID (1)"),
            )),
        }
    }

    /// The `ActivationFunctionType` enum at `slot`.
    fn activation(&self, slot: usize) -> Result<Activation, TfliteError> {
        Ok(match self.byte(slot, 0)? {
            0 => Activation::None,
            1 => Activation::Relu,
            2 => Activation::ReluN1To1,
            3 => Activation::Relu6,
            4 => Activation::Tanh,
            5 => Activation::SignBit,
            other => {
                let detail = format!("fused activation {other} is not in the schema (0-5)");
                return Err(self.invalid(slot, detail));
            }
        })
    }

    /// Two `int`s stored width first (`stride_w`, `stride_h`): height, then width.
    fn pair(&self, width: usize, height: usize, default: i32) -> Result<[i32; 2], TfliteError> {
        Ok([self.int(height, default)?, self.int(width, default)?])
    }
}

/// `op`'s builtin options by the schema's slot numbers and defaults; [`Options::None`]
/// for an operator whose options no kernel needs.
pub(super) fn decode(op: Option<Builtin>, o: &Slots<'_>) -> Result<Options, TfliteError> {
    let Some(op) = op else {
        return Ok(Options::None);
    };
    match op {
        Builtin::Conv2d
        | Builtin::DepthwiseConv2d
        | Builtin::AveragePool2d
        | Builtin::MaxPool2d
        | Builtin::FullyConnected => windowed(op, o),
        _ => other(op, o),
    }
}

/// The options of the operators that slide a window, and the fully connected layer.
/// Every window's table starts with padding, stride_w and stride_h.
fn windowed(op: Builtin, o: &Slots<'_>) -> Result<Options, TfliteError> {
    Ok(match op {
        // Conv2DOptions: padding, stride_w, stride_h, activation, dilation_w, dilation_h.
        Builtin::Conv2d => Options::Conv2d {
            padding: o.padding(0)?,
            stride: o.pair(1, 2, 0)?,
            dilation: o.pair(4, 5, 1)?,
            activation: o.activation(3)?,
        },
        // DepthwiseConv2DOptions: padding, stride_w, stride_h, depth_multiplier,
        // activation, dilation_w, dilation_h.
        Builtin::DepthwiseConv2d => Options::DepthwiseConv2d {
            padding: o.padding(0)?,
            stride: o.pair(1, 2, 0)?,
            dilation: o.pair(5, 6, 1)?,
            depth_multiplier: o.int(3, 0)?,
            activation: o.activation(4)?,
        },
        // Pool2DOptions: padding, stride_w, stride_h, filter_width, filter_height,
        // activation.
        Builtin::AveragePool2d | Builtin::MaxPool2d => Options::Pool2d {
            padding: o.padding(0)?,
            stride: o.pair(1, 2, 0)?,
            filter: o.pair(3, 4, 0)?,
            activation: o.activation(5)?,
        },
        // FullyConnectedOptions: activation, weights_format, keep_num_dims.
        Builtin::FullyConnected => Options::FullyConnected {
            activation: o.activation(0)?,
            keep_num_dims: o.flag(2)?,
        },
        _ => Options::None,
    })
}

/// Every other operator's options.
fn other(op: Builtin, o: &Slots<'_>) -> Result<Options, TfliteError> {
    Ok(match op {
        Builtin::Softmax => Options::Softmax { beta: o.float(0)? },
        Builtin::Concatenation => Options::Concatenation {
            axis: o.int(0, 0)?,
            activation: o.activation(1)?,
        },
        Builtin::Add | Builtin::Sub | Builtin::Mul | Builtin::Div => Options::Elementwise {
            activation: o.activation(0)?,
        },
        Builtin::Mean | Builtin::Sum | Builtin::ReduceMax => Options::Reducer {
            keep_dims: o.flag(0)?,
        },
        Builtin::ResizeNearestNeighbor => Options::Resize {
            align_corners: o.flag(0)?,
            half_pixel_centers: o.flag(1)?,
        },
        // Slots 0 and 1 are the deprecated new_height and new_width.
        Builtin::ResizeBilinear => Options::Resize {
            align_corners: o.flag(2)?,
            half_pixel_centers: o.flag(3)?,
        },
        Builtin::Svdf => Options::Svdf {
            rank: o.int(0, 0)?,
            activation: o.activation(1)?,
        },
        Builtin::StridedSlice => Options::StridedSlice {
            begin_mask: o.int(0, 0)?,
            end_mask: o.int(1, 0)?,
            ellipsis_mask: o.int(2, 0)?,
            new_axis_mask: o.int(3, 0)?,
            shrink_axis_mask: o.int(4, 0)?,
            offset: o.flag(5)?,
        },
        Builtin::LeakyRelu => Options::LeakyRelu { alpha: o.float(0)? },
        Builtin::Gather => Options::Gather {
            axis: o.int(0, 0)?,
            batch_dims: o.int(1, 0)?,
        },
        Builtin::Pack | Builtin::Unpack => Options::Pack {
            count: o.int(0, 0)?,
            axis: o.int(1, 0)?,
        },
        Builtin::Split | Builtin::SplitV => Options::Split {
            num_splits: o.int(0, 0)?,
        },
        Builtin::SpaceToDepth => Options::SpaceToDepth {
            block_size: o.int(0, 0)?,
        },
        // UnidirectionalSequenceLSTMOptions: activation, cell_clip, proj_clip, time_major.
        Builtin::UnidirectionalSequenceLstm => Options::UnidirectionalSequenceLstm {
            activation: o.activation(0)?,
            cell_clip: o.float(1)?,
            proj_clip: o.float(2)?,
            time_major: o.flag(3)?,
        },
        _ => Options::None,
    })
}
