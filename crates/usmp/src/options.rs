//! Each call's TensorFlow Lite builtin options (padding, strides, fused activation, ...),
//! read from the `.tflite` file at build time by their schema slots and written as `const`
//! data, so a kernel needs no flatbuffer reader. Vector fields (RESHAPE's `new_shape`,
//! SQUEEZE's dims) are left out: the operands' shapes say the same.

/// `Padding` of the schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Padding {
    /// `SAME`: the output has `ceil(input / stride)` elements per dimension.
    Same,
    /// `VALID`: no padding.
    Valid,
}

/// `ActivationFunctionType` of the schema: the activation fused into an operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activation {
    /// `NONE`.
    None,
    /// `RELU`.
    Relu,
    /// `RELU_N1_TO_1`.
    ReluN1To1,
    /// `RELU6`.
    Relu6,
    /// `TANH`.
    Tanh,
    /// `SIGN_BIT`.
    SignBit,
}

/// A call's builtin options, for the operators kernels commonly implement; `None` for an
/// operator without options or one not listed.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Options {
    /// No options (or none that a kernel needs).
    None,
    /// `Conv2DOptions`.
    Conv2d {
        /// Padding.
        padding: Padding,
        /// Stride, height then width.
        stride: [i32; 2],
        /// Dilation, height then width.
        dilation: [i32; 2],
        /// Fused activation.
        activation: Activation,
    },
    /// `DepthwiseConv2DOptions`.
    DepthwiseConv2d {
        /// Padding.
        padding: Padding,
        /// Stride, height then width.
        stride: [i32; 2],
        /// Dilation, height then width.
        dilation: [i32; 2],
        /// Output channels per input channel, as the file states it.
        depth_multiplier: i32,
        /// Fused activation.
        activation: Activation,
    },
    /// `Pool2DOptions` (AVERAGE_POOL_2D, MAX_POOL_2D).
    Pool2d {
        /// Padding.
        padding: Padding,
        /// Stride, height then width.
        stride: [i32; 2],
        /// Window, height then width.
        filter: [i32; 2],
        /// Fused activation.
        activation: Activation,
    },
    /// `FullyConnectedOptions`.
    FullyConnected {
        /// Fused activation.
        activation: Activation,
        /// Whether the output keeps the input's leading dimensions.
        keep_num_dims: bool,
    },
    /// `SoftmaxOptions`.
    Softmax {
        /// The exponent's factor.
        beta: f32,
    },
    /// `ConcatenationOptions`.
    Concatenation {
        /// The axis joined along (negative: from the end).
        axis: i32,
        /// Fused activation.
        activation: Activation,
    },
    /// `AddOptions`, `SubOptions`, `MulOptions`, `DivOptions`.
    Elementwise {
        /// Fused activation.
        activation: Activation,
    },
    /// `ReducerOptions` (MEAN, SUM, REDUCE_MAX).
    Reducer {
        /// Whether reduced dimensions stay, with size 1.
        keep_dims: bool,
    },
    /// `ResizeNearestNeighborOptions`, `ResizeBilinearOptions`.
    Resize {
        /// Corners aligned.
        align_corners: bool,
        /// Pixel centres at half coordinates.
        half_pixel_centers: bool,
    },
    /// `SVDFOptions`.
    Svdf {
        /// The rank.
        rank: i32,
        /// Fused activation.
        activation: Activation,
    },
    /// `StridedSliceOptions`.
    StridedSlice {
        /// Bits of dimensions whose begin is ignored.
        begin_mask: i32,
        /// Bits of dimensions whose end is ignored.
        end_mask: i32,
        /// Bits of ellipsis dimensions.
        ellipsis_mask: i32,
        /// Bits of new axes.
        new_axis_mask: i32,
        /// Bits of dimensions shrunk away.
        shrink_axis_mask: i32,
        /// The end tensor is an offset from the begin tensor.
        offset: bool,
    },
    /// `LeakyReluOptions`.
    LeakyRelu {
        /// The slope below zero.
        alpha: f32,
    },
    /// `GatherOptions`.
    Gather {
        /// The axis gathered along.
        axis: i32,
        /// Leading batch dimensions.
        batch_dims: i32,
    },
    /// `PackOptions`, `UnpackOptions`.
    Pack {
        /// How many tensors are packed or unpacked.
        count: i32,
        /// The axis.
        axis: i32,
    },
    /// `SplitOptions`, `SplitVOptions`.
    Split {
        /// Into how many parts.
        num_splits: i32,
    },
    /// `SpaceToDepthOptions`.
    SpaceToDepth {
        /// The block size.
        block_size: i32,
    },
    /// `UnidirectionalSequenceLSTMOptions`.
    UnidirectionalSequenceLstm {
        /// Fused activation.
        activation: Activation,
        /// Cell clip (0: none).
        cell_clip: f32,
        /// Projection clip (0: none).
        proj_clip: f32,
        /// Whether the first dimension is time.
        time_major: bool,
    },
}
