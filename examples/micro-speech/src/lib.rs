//! Int8 kernels for TensorFlow Lite Micro's micro_speech model, written for usmp's
//! examples: the firmware in QEMU, the host program and the `usmp_pools!` program all run
//! the model through their generated usmp module and these kernels.
//!
//! The kernels compute exactly what TFLite Micro's reference kernels compute (the same
//! integer arithmetic and rounding), so the outputs can be compared byte for byte with
//! TFLite Micro's interpreter (`testdata/make_expected.py`).
//!
//! Each operator's parameters (shapes, strides, fixed-point multipliers) come from the
//! `.tflite` file at build time: with the `build` feature, [`build::write_ops`] reads the
//! model with `usmp_core::tflite::read_graph` and writes a Rust file with one [`Op`] per
//! operator call, which the program `include!`s:
//!
//! ```ignore
//! // build.rs
//! micro_speech::build::write_ops(model_path, &out_dir.join("ops.rs"))?;
//! // main.rs
//! mod ops { include!(concat!(env!("OUT_DIR"), "/ops.rs")); }
//! for i in 0..model.calls() {
//!     let mut call = model.call(i).unwrap();
//!     micro_speech::run(&ops::OPS[i], &mut call)?;
//! }
//! ```
#![cfg_attr(not(feature = "build"), no_std)]
#![deny(missing_docs)]

#[cfg(feature = "build")]
pub mod build;
pub use usmp_kernels::fixed;
pub mod kernels;
pub mod testdata;

/// One operator call and its parameters.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    /// RESHAPE: a copy (or nothing, when planned in place).
    Reshape,
    /// DEPTHWISE_CONV_2D.
    DepthwiseConv(&'static DepthwiseConv),
    /// FULLY_CONNECTED.
    FullyConnected(&'static FullyConnected),
    /// SOFTMAX.
    Softmax(&'static Softmax),
}

/// DEPTHWISE_CONV_2D parameters, as TFLite Micro prepares them.
#[derive(Clone, Copy, Debug)]
pub struct DepthwiseConv {
    /// Input shape, NHWC.
    pub input: [usize; 4],
    /// Filter shape, 1 x H x W x output channels.
    pub filter: [usize; 4],
    /// Output shape, NHWC.
    pub output: [usize; 4],
    /// Stride, height then width.
    pub stride: [usize; 2],
    /// Dilation, height then width.
    pub dilation: [usize; 2],
    /// Padding before the first row and column.
    pub padding: [usize; 2],
    /// Output channels per input channel.
    pub depth_multiplier: usize,
    /// Minus the input zero point.
    pub input_offset: i32,
    /// The output zero point.
    pub output_offset: i32,
    /// Clamp range of the fused activation, in output integers.
    pub activation: (i32, i32),
    /// Per output channel: Q0.31 multiplier of `input scale * filter scale / output scale`.
    pub multipliers: &'static [i32],
    /// Per output channel: its power-of-two exponent.
    pub shifts: &'static [i32],
}

/// FULLY_CONNECTED parameters.
#[derive(Clone, Copy, Debug)]
pub struct FullyConnected {
    /// Rows of input.
    pub batches: usize,
    /// Inputs per row (the filter's last dimension).
    pub depth: usize,
    /// Outputs per row.
    pub outputs: usize,
    /// Whether the call has a bias input.
    pub bias: bool,
    /// Minus the input zero point.
    pub input_offset: i32,
    /// Minus the filter zero point.
    pub filter_offset: i32,
    /// The output zero point.
    pub output_offset: i32,
    /// Q0.31 multiplier.
    pub multiplier: i32,
    /// Its power-of-two exponent.
    pub shift: i32,
    /// Clamp range of the fused activation.
    pub activation: (i32, i32),
}

/// SOFTMAX parameters (int8 in and out).
#[derive(Clone, Copy, Debug)]
pub struct Softmax {
    /// Rows (every dimension but the last).
    pub rows: usize,
    /// The last dimension.
    pub depth: usize,
    /// `beta * input scale`, scaled to Q5.26 differences: Q0.31 multiplier.
    pub input_multiplier: i32,
    /// Its left shift.
    pub input_left_shift: i32,
    /// Differences below this give exp = 0.
    pub diff_min: i32,
}

/// Why a kernel could not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelError {
    /// A region is smaller than the operator's shapes need.
    TooSmall {
        /// Which operand.
        what: &'static str,
        /// Bytes needed.
        bytes: usize,
        /// Bytes given.
        got: usize,
    },
    /// The call has fewer inputs or outputs than the operator reads or writes.
    MissingOperand {
        /// Which operand.
        what: &'static str,
    },
    /// The parameters are for another operator than the call's (a stale parameter table).
    WrongOperator {
        /// The call.
        call: usize,
        /// Its operator in the plan.
        planned: &'static str,
        /// The operator the parameters are for.
        parameters: &'static str,
    },
}

impl core::fmt::Display for KernelError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            KernelError::TooSmall { what, bytes, got } => {
                write!(f, "{what}: needs {bytes} bytes, the region has {got}")
            }
            KernelError::MissingOperand { what } => write!(f, "{what}: the call has no such slot"),
            KernelError::WrongOperator {
                call,
                planned,
                parameters,
            } => write!(
                f,
                "call {call} is {planned} but its parameters are for {parameters}: rebuild so both come from the same model"
            ),
        }
    }
}

/// Input `k` of the call: its bytes, or empty when it is planned in place of an output
/// (the output then holds them).
fn operand<'a>(
    inputs: &usmp::Inputs<'a>,
    k: usize,
    what: &'static str,
) -> Result<&'a [u8], KernelError> {
    match inputs.get(k) {
        Some(bytes) => Ok(bytes),
        None if inputs.in_place(k).is_some() => Ok(&[]),
        None => Err(KernelError::MissingOperand { what }),
    }
}

impl Op {
    /// The TFLite operator these parameters are for.
    pub fn builtin(&self) -> usmp::Builtin {
        match self {
            Op::Reshape => usmp::Builtin::Reshape,
            Op::DepthwiseConv(_) => usmp::Builtin::DepthwiseConv2d,
            Op::FullyConnected(_) => usmp::Builtin::FullyConnected,
            Op::Softmax(_) => usmp::Builtin::Softmax,
        }
    }
}

/// Runs one operator call on the regions the generated session hands out, with `op`'s
/// parameters; refuses a call whose operator is not the one `op` was made for.
pub fn run(op: &Op, call: &mut usmp::Call<'_>) -> Result<(), KernelError> {
    if call.op() != usmp::Op::Builtin(op.builtin()) {
        return Err(KernelError::WrongOperator {
            call: call.index(),
            planned: call.op().name(),
            parameters: op.builtin().name(),
        });
    }
    let inputs = call.inputs;
    let out = call
        .outputs
        .get_mut(0)
        .ok_or(KernelError::MissingOperand { what: "output" })?;
    match op {
        Op::Reshape => kernels::reshape(operand(&inputs, 0, "reshape input")?, out),
        Op::DepthwiseConv(p) => kernels::depthwise_conv(
            p,
            operand(&inputs, 0, "depthwise input")?,
            operand(&inputs, 1, "depthwise filter")?,
            operand(&inputs, 2, "depthwise bias")?,
            out,
        ),
        Op::FullyConnected(p) => {
            let bias = if p.bias {
                operand(&inputs, 2, "fully connected bias")?
            } else {
                &[]
            };
            kernels::fully_connected(
                p,
                operand(&inputs, 0, "fully connected input")?,
                operand(&inputs, 1, "fully connected filter")?,
                bias,
                out,
            )
        }
        Op::Softmax(p) => kernels::softmax(p, operand(&inputs, 0, "softmax input")?, out),
    }
}
