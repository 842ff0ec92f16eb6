//! # usmp-kernels: run a planned model
//!
//! Int8 kernels with TensorFlow Lite Micro's *reference* arithmetic (the same integer
//! formulas and rounding, so outputs are equal byte for byte), run directly on the
//! regions a [`usmp::Session`] hands out: no arena, no allocator, no `unsafe`.
//!
//! Everything TFLite Micro's `Prepare` computes from floats (fixed-point multipliers and
//! shifts, padding, activation ranges, softmax's exp scaling) is computed at build time
//! by the `prepare` module (feature `prepare`, used by usmp-build) and emitted as `const` data: one
//! [`Kernel`] per operator call. A model with an operator or a type these kernels do not
//! run fails the build, naming the call and the operator.
//!
//! ## Running a model
//!
//! In `usmp.toml`, ask for the kernels' parameters:
//!
//! ```toml
//! [[model]]
//! name = "micro_speech"
//! path = "models/micro_speech.tflite"
//! kernels = true
//! ```
//!
//! and with `usmp` and `usmp-kernels` as dependencies, one call runs every operator (here
//! on micro_speech, `use usmp::micro_speech::Model;`):
//!
//! ```ignore
//! let mut workspace = usmp::Workspace::take().unwrap(); // the one handle; None after
//! let mut model = Model::session(&mut workspace);
//! model.input(0).unwrap().copy_from_slice(input); // exactly the input tensor's bytes
//! usmp::micro_speech::invoke(&mut model)?; // every call, with only the kernels it uses
//! let y = model.output(0).unwrap();
//! ```
//!
//! The generated `invoke` is [`invoke_only`] with the model's `KERNELS` and the constant
//! set of the kinds of kernel they use ([`used_in`]: [`used`], and whether the plan writes
//! an output over its input), so a firmware links only its model's kernels (micro_speech
//! on a Cortex-M3: 10,788 bytes of `.text` in all, against 20,692 with every int8 kernel
//! before the float kernels existed). [`invoke`] and [`run`] take any table and link everything.
//! `invoke_poisoning` poisons each buffer as it dies, to test the plan's liveness.
//!
//! ## Operators
//!
//! CONV_2D (grouped too), DEPTHWISE_CONV_2D (any multiplier), FULLY_CONNECTED (per-tensor
//! or per-channel), AVERAGE_POOL_2D, MAX_POOL_2D, SOFTMAX, QUANTIZE between int8, int16
//! and int32 and from float32, DEQUANTIZE to float32, LOGISTIC and TANH (int8), SVDF
//! (int8 with int16 state), ADD and MUL (broadcasting), MEAN, CONCATENATION, PAD/PADV2,
//! RESIZE_NEAREST_NEIGHBOR, RELU, RELU6, and RESHAPE, SQUEEZE and EXPAND_DIMS as copies; any stride, dilation and padding the schema allows, fused NONE, RELU,
//! RELU_N1_TO_1 and RELU6. Each kernel's module states its loop order: which output
//! bytes are written before which input bytes are last read.
//!
//! Float32 models (magic_wand, hello_world_float) run too: CONV_2D, DEPTHWISE_CONV_2D,
//! FULLY_CONNECTED, both poolings and SOFTMAX have float kernels with the reference's
//! float operations in its order (a float sum depends on it), and float SOFTMAX's `exp`
//! is [`exp::expf`], glibc's algorithm in plain double arithmetic, so the outputs are
//! TFLite Micro's bits on the host that made them and the same bits on any target.
//!
//! CONV_2D, DEPTHWISE_CONV_2D, the poolings and RESHAPE's copy may write their output over the input they
//! read last, at a shift their window allows ([`overlap`]): the plan marks such an input
//! [`usmp::Source::Over`], the session hands the two out as one region, and the kernel
//! refuses a shift past its window ([`Error::Overlap`]).
//!
//! No kernel needs scratch memory: where TFLite Micro keeps intermediate sums in a scratch
//! buffer (SVDF), these keep them in registers, with the same wrapping int32 arithmetic.
#![no_std]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

#[cfg(feature = "prepare")]
extern crate std;

mod bytes;
pub mod conv;
pub mod dense;
pub mod elementwise;
pub mod exp;
pub mod fixed;
pub mod overlap;
mod params;
pub mod pointwise;
pub mod pool;
#[cfg(feature = "prepare")]
pub mod prepare;
pub mod quantize;
pub mod shape;
pub mod softmax;

pub use params::{
    Add, Affine, Broadcast, Concatenation, Conv, Float, FullyConnected, Int, Kernel, Mean, Mul,
    Pad, Pool, Range, Requantize, Resize, Sigmoid, Softmax, SoftmaxFloat, Svdf, used, used_in,
};

use params::bit;
use usmp::{Builtin, Call, Inputs, Model, Session};

/// Why a kernel could not run a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// A region is smaller than the operator's shapes need.
    TooSmall {
        /// Which operand.
        what: &'static str,
        /// Bytes needed.
        bytes: usize,
        /// Bytes given.
        got: usize,
    },
    /// The call has no region for an operand the kernel reads or writes.
    MissingOperand {
        /// Which operand.
        what: &'static str,
    },
    /// The parameters are for another operator than the call's.
    WrongOperator {
        /// The call's operator in the plan.
        planned: &'static str,
        /// The operator the parameters are for.
        kernel: &'static str,
    },
    /// The parameters contradict themselves (a table edited by hand).
    Parameters {
        /// Which operand.
        what: &'static str,
        /// What is wrong.
        problem: &'static str,
    },
    /// The call's kernel is not in the set the caller linked (`invoke_only`).
    NotLinked {
        /// The call's operator.
        op: &'static str,
    },
    /// The plan put the output over the input at a shift this kernel does not certify
    /// (see [`overlap::Window`]).
    Overlap {
        /// The output's start less the input's, in bytes.
        shift: isize,
        /// The highest shift the kernel allows where the two meet.
        most: isize,
    },
    /// There are not as many kernels as the model has calls.
    Count {
        /// The model's calls.
        calls: usize,
        /// Kernels given.
        kernels: usize,
    },
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::TooSmall { what, bytes, got } => {
                write!(f, "{what}: needs {bytes} bytes, the region has {got}")
            }
            Error::MissingOperand { what } => write!(f, "{what}: the call has no such region"),
            Error::WrongOperator { planned, kernel } => write!(
                f,
                "the call is {planned} but its parameters are for {kernel}: rebuild so both come from the same model"
            ),
            Error::Parameters { what, problem } => write!(f, "{what}: {problem}"),
            Error::NotLinked { op } => write!(
                f,
                "the {op} kernel was left out of this build: pass `used(KERNELS)` of the same generated module"
            ),
            Error::Overlap { shift, most } if *most == isize::MIN => write!(
                f,
                "the output starts {shift} bytes from the input it overwrites, but this kernel certifies no overlap: plan it without (rebuild)"
            ),
            Error::Overlap { shift, most } => write!(
                f,
                "the output starts {shift} bytes from the input it overwrites, where this kernel allows at most {most}: plan with the kernels' windows (rebuild)"
            ),
            Error::Count { calls, kernels } => write!(
                f,
                "the model has {calls} calls but {kernels} kernels were given: pass the KERNELS of the same generated module"
            ),
        }
    }
}

/// An [`Error`] at one call of a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallError {
    /// The call's index.
    pub call: usize,
    /// Its operator.
    pub op: &'static str,
    /// What went wrong.
    pub error: Error,
}

impl core::fmt::Display for CallError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "call {} ({}): {}", self.call, self.op, self.error)
    }
}

impl Kernel<'_> {
    /// The operators these parameters are for.
    pub fn builtins(&self) -> &'static [Builtin] {
        match self {
            Kernel::Copy => &[Builtin::Reshape, Builtin::Squeeze, Builtin::ExpandDims],
            Kernel::Conv2d(_) => &[Builtin::Conv2d],
            Kernel::DepthwiseConv2d(_) => &[Builtin::DepthwiseConv2d],
            Kernel::FullyConnected(_) => &[Builtin::FullyConnected],
            Kernel::AveragePool2d(_) => &[Builtin::AveragePool2d],
            Kernel::MaxPool2d(_) => &[Builtin::MaxPool2d],
            Kernel::Softmax(_) => &[Builtin::Softmax],
            Kernel::Requantize(_) => &[Builtin::Quantize],
            Kernel::Svdf(_) => &[Builtin::Svdf],
            Kernel::Relu(_) => &[Builtin::Relu, Builtin::Relu6],
            Kernel::Add(_) => &[Builtin::Add],
            Kernel::Mul(_) => &[Builtin::Mul],
            Kernel::Concatenation(_) => &[Builtin::Concatenation],
            Kernel::Pad(_) => &[Builtin::Pad, Builtin::PadV2],
            Kernel::Mean(_) => &[Builtin::Mean],
            Kernel::ResizeNearestNeighbor(_) => &[Builtin::ResizeNearestNeighbor],
            Kernel::Logistic(_) => &[Builtin::Logistic],
            Kernel::Tanh(_) => &[Builtin::Tanh],
            Kernel::Dequantize(_) => &[Builtin::Dequantize],
            Kernel::QuantizeFloat(_) => &[Builtin::Quantize],
            Kernel::Conv2dFloat(_) => &[Builtin::Conv2d],
            Kernel::DepthwiseConv2dFloat(_) => &[Builtin::DepthwiseConv2d],
            Kernel::FullyConnectedFloat(_) => &[Builtin::FullyConnected],
            Kernel::AveragePool2dFloat(_) => &[Builtin::AveragePool2d],
            Kernel::MaxPool2dFloat(_) => &[Builtin::MaxPool2d],
            Kernel::SoftmaxFloat(_) => &[Builtin::Softmax],
        }
    }
}

/// Input `k`: its bytes; empty when it is planned in place of an output (which then holds
/// them) or is an absent optional input the parameters say is unused.
fn input<'a>(inputs: &Inputs<'a>, k: usize, what: &'static str) -> Result<&'a [u8], Error> {
    match inputs.get(k) {
        Some(bytes) => Ok(bytes),
        None if inputs.in_place(k).is_some() => Ok(&[]),
        None => Err(Error::MissingOperand { what }),
    }
}

/// Optional input `k` (a bias): empty when the parameters say there is none.
fn optional<'a>(
    inputs: &Inputs<'a>,
    k: usize,
    present: bool,
    what: &'static str,
) -> Result<&'a [u8], Error> {
    if present {
        input(inputs, k, what)
    } else {
        Ok(&[])
    }
}

/// Every kind of kernel.
const ALL: u32 = u32::MAX;

/// Runs one call with `kernel`'s parameters; refuses a call of another operator.
pub fn run(kernel: &Kernel<'_>, call: &mut Call<'_>) -> Result<(), Error> {
    run_only::<ALL>(kernel, call)
}

/// Whether every bit of `bits` is in the constant set `USED`: a match guard that folds to
/// a constant.
const fn on<const USED: u32>(bits: u32) -> bool {
    USED & bits == bits
}

/// [`run`], with only the kernels in `USED` linked in: every arm's guard is a constant,
/// so the arms of the other kinds of kernel compile to nothing.
fn run_only<const USED: u32>(kernel: &Kernel<'_>, call: &mut Call<'_>) -> Result<(), Error> {
    let op = call.op();
    if !kernel
        .builtins()
        .iter()
        .any(|&b| op == usmp::Op::Builtin(b))
    {
        return Err(Error::WrongOperator {
            planned: op.name(),
            kernel: kernel.builtins().first().map_or("", |b| b.name()),
        });
    }
    let inputs = call.inputs;
    if let Kernel::Svdf(p) = kernel
        && on::<USED>(bit::SVDF)
    {
        return svdf(p, &inputs, call);
    }
    let out = call
        .outputs
        .get_mut(0)
        .ok_or(Error::MissingOperand { what: "output" })?;
    // A plan without outputs over inputs links none of this; a call with one anyway (a
    // `USED` set made by hand) finds no input region and fails with MissingOperand.
    if on::<USED>(bit::OVER)
        && let Some(shared) = inputs.shared(0)
    {
        return run_over::<USED>(kernel, &shared, &inputs, out);
    }
    match kernel {
        Kernel::Copy if on::<USED>(bit::COPY) => {
            quantize::copy(input(&inputs, 0, "reshape input")?, out)
        }
        Kernel::Conv2d(p) if on::<USED>(bit::CONV_2D) => conv::conv2d(
            p,
            input(&inputs, 0, "conv input")?,
            input(&inputs, 1, "conv filter")?,
            optional(&inputs, 2, p.bias, "conv bias")?,
            out,
        ),
        Kernel::DepthwiseConv2d(p) if on::<USED>(bit::DEPTHWISE_CONV_2D) => conv::depthwise_conv2d(
            p,
            input(&inputs, 0, "depthwise input")?,
            input(&inputs, 1, "depthwise filter")?,
            optional(&inputs, 2, p.bias, "depthwise bias")?,
            out,
        ),
        Kernel::FullyConnected(p) if on::<USED>(bit::FULLY_CONNECTED) => dense::fully_connected(
            p,
            input(&inputs, 0, "fully connected input")?,
            input(&inputs, 1, "fully connected filter")?,
            optional(&inputs, 2, p.bias, "fully connected bias")?,
            out,
        ),
        Kernel::AveragePool2d(p) if on::<USED>(bit::AVERAGE_POOL_2D) => {
            pool::average_pool2d(p, input(&inputs, 0, "average pool input")?, out)
        }
        Kernel::MaxPool2d(p) if on::<USED>(bit::MAX_POOL_2D) => {
            pool::max_pool2d(p, input(&inputs, 0, "max pool input")?, out)
        }
        Kernel::Softmax(p) if on::<USED>(bit::SOFTMAX) => {
            softmax::softmax(p, input(&inputs, 0, "softmax input")?, out)
        }
        Kernel::Requantize(p) if on::<USED>(bit::REQUANTIZE) => {
            quantize::requantize(p, input(&inputs, 0, "quantize input")?, out)
        }
        Kernel::Relu(p) if on::<USED>(bit::RELU) => {
            quantize::requantize(p, input(&inputs, 0, "quantize input")?, out)
        }
        Kernel::Add(p) if on::<USED>(bit::ADD) => elementwise::add(
            p,
            input(&inputs, 0, "add input 1")?,
            input(&inputs, 1, "add input 2")?,
            out,
        ),
        Kernel::Mul(p) if on::<USED>(bit::MUL) => elementwise::mul(
            p,
            input(&inputs, 0, "mul input 1")?,
            input(&inputs, 1, "mul input 2")?,
            out,
        ),
        Kernel::Concatenation(p) if on::<USED>(bit::CONCATENATION) => {
            const MOST: usize = 16;
            let mut parts: [&[u8]; MOST] = [&[]; MOST];
            if inputs.len() > MOST {
                return Err(Error::Parameters {
                    what: "concatenation inputs",
                    problem: "more than 16 inputs",
                });
            }
            for (k, part) in parts.iter_mut().enumerate().take(inputs.len()) {
                *part = input(&inputs, k, "concatenation input")?;
            }
            shape::concatenation(p, &parts[..inputs.len()], out)
        }
        Kernel::Pad(p) if on::<USED>(bit::PAD) => {
            shape::pad(p, input(&inputs, 0, "pad input")?, out)
        }
        Kernel::Mean(p) if on::<USED>(bit::MEAN) => {
            pool::mean(p, input(&inputs, 0, "mean input")?, out)
        }
        Kernel::ResizeNearestNeighbor(p) if on::<USED>(bit::RESIZE_NEAREST_NEIGHBOR) => {
            shape::resize_nearest_neighbor(p, input(&inputs, 0, "resize input")?, out)
        }
        Kernel::Logistic(p) if on::<USED>(bit::LOGISTIC) => {
            pointwise::logistic(p, input(&inputs, 0, "logistic input")?, out)
        }
        Kernel::Tanh(p) if on::<USED>(bit::TANH) => {
            pointwise::tanh(p, input(&inputs, 0, "tanh input")?, out)
        }
        Kernel::Dequantize(p) if on::<USED>(bit::DEQUANTIZE) => {
            pointwise::dequantize(p, input(&inputs, 0, "dequantize input")?, out)
        }
        Kernel::QuantizeFloat(p) if on::<USED>(bit::QUANTIZE_FLOAT) => {
            pointwise::quantize(p, input(&inputs, 0, "quantize input")?, out)
        }
        Kernel::Conv2dFloat(p) if on::<USED>(bit::CONV_2D_FLOAT) => conv::conv2d_f32(
            p,
            input(&inputs, 0, "conv input")?,
            input(&inputs, 1, "conv filter")?,
            optional(&inputs, 2, p.shape.bias, "conv bias")?,
            out,
        ),
        Kernel::DepthwiseConv2dFloat(p) if on::<USED>(bit::DEPTHWISE_CONV_2D_FLOAT) => {
            conv::depthwise_conv2d_f32(
                p,
                input(&inputs, 0, "depthwise input")?,
                input(&inputs, 1, "depthwise filter")?,
                optional(&inputs, 2, p.shape.bias, "depthwise bias")?,
                out,
            )
        }
        Kernel::FullyConnectedFloat(p) if on::<USED>(bit::FULLY_CONNECTED_FLOAT) => {
            dense::fully_connected_f32(
                p,
                input(&inputs, 0, "fully connected input")?,
                input(&inputs, 1, "fully connected filter")?,
                optional(&inputs, 2, p.shape.bias, "fully connected bias")?,
                out,
            )
        }
        Kernel::AveragePool2dFloat(p) if on::<USED>(bit::AVERAGE_POOL_2D_FLOAT) => {
            pool::average_pool2d_f32(p, input(&inputs, 0, "average pool input")?, out)
        }
        Kernel::MaxPool2dFloat(p) if on::<USED>(bit::MAX_POOL_2D_FLOAT) => {
            pool::max_pool2d_f32(p, input(&inputs, 0, "max pool input")?, out)
        }
        Kernel::SoftmaxFloat(p) if on::<USED>(bit::SOFTMAX_FLOAT) => {
            softmax::softmax_f32(p, input(&inputs, 0, "softmax input")?, out)
        }
        // SVDF ran above; anything else is a kernel left out of `USED`.
        _ => Err(Error::NotLinked { op: op.name() }),
    }
}

/// A call whose output the plan put over its input 0 ([`usmp::Source::Over`]): `region`
/// holds both. Only a kernel that certifies a window ([`overlap::Window`]) runs it, and
/// only at a shift the window allows.
fn run_over<const USED: u32>(
    kernel: &Kernel<'_>,
    shared: &usmp::Shared,
    inputs: &Inputs<'_>,
    region: &mut [u8],
) -> Result<(), Error> {
    match kernel {
        Kernel::Copy if on::<USED>(bit::OVER_COPY) => quantize::copy_over(region, shared),
        Kernel::Conv2d(p) if on::<USED>(bit::CONV_2D | bit::OVER_CONV) => {
            conv::conv2d_over::<false>(
                p,
                region,
                shared,
                input(inputs, 1, "conv filter")?,
                optional(inputs, 2, p.bias, "conv bias")?,
            )
        }
        Kernel::DepthwiseConv2d(p) if on::<USED>(bit::DEPTHWISE_CONV_2D | bit::OVER_DEPTHWISE) => {
            conv::conv2d_over::<true>(
                p,
                region,
                shared,
                input(inputs, 1, "depthwise filter")?,
                optional(inputs, 2, p.bias, "depthwise bias")?,
            )
        }
        Kernel::Conv2dFloat(p) if on::<USED>(bit::CONV_2D_FLOAT | bit::OVER_CONV) => {
            conv::conv2d_f32_over::<false>(
                p,
                region,
                shared,
                input(inputs, 1, "conv filter")?,
                optional(inputs, 2, p.shape.bias, "conv bias")?,
            )
        }
        Kernel::DepthwiseConv2dFloat(p)
            if on::<USED>(bit::DEPTHWISE_CONV_2D_FLOAT | bit::OVER_DEPTHWISE) =>
        {
            conv::conv2d_f32_over::<true>(
                p,
                region,
                shared,
                input(inputs, 1, "depthwise filter")?,
                optional(inputs, 2, p.shape.bias, "depthwise bias")?,
            )
        }
        Kernel::AveragePool2d(p) if on::<USED>(bit::AVERAGE_POOL_2D | bit::OVER_POOL) => {
            pool::pool2d_over::<false>(p, region, shared)
        }
        Kernel::MaxPool2d(p) if on::<USED>(bit::MAX_POOL_2D | bit::OVER_POOL) => {
            pool::pool2d_over::<true>(p, region, shared)
        }
        Kernel::AveragePool2dFloat(p)
            if on::<USED>(bit::AVERAGE_POOL_2D_FLOAT | bit::OVER_POOL) =>
        {
            pool::pool2d_f32_over::<false>(p, region, shared)
        }
        Kernel::MaxPool2dFloat(p) if on::<USED>(bit::MAX_POOL_2D_FLOAT | bit::OVER_POOL) => {
            pool::pool2d_f32_over::<true>(p, region, shared)
        }
        _ => Err(Error::Overlap {
            shift: shared.shift(),
            most: isize::MIN,
        }),
    }
}

/// SVDF writes two regions: its output, and its state (input 4), which the generated
/// code hands out in place of an extra output.
fn svdf(p: &Svdf, inputs: &Inputs<'_>, call: &mut Call<'_>) -> Result<(), Error> {
    const STATE: &str = "svdf state (a variable tensor, written in place)";
    let state_slot = inputs
        .in_place(4)
        .ok_or(Error::MissingOperand { what: STATE })?;
    let (mut output, mut state) = (None, None);
    for (k, region) in call.outputs.by_ref().enumerate() {
        match k {
            0 => output = region,
            k if k == state_slot => state = region,
            _ => {}
        }
    }
    dense::svdf(
        p,
        input(inputs, 0, "svdf input")?,
        input(inputs, 1, "svdf feature weights")?,
        input(inputs, 2, "svdf time weights")?,
        optional(inputs, 3, p.bias, "svdf bias")?,
        state.ok_or(Error::MissingOperand { what: STATE })?,
        output.ok_or(Error::MissingOperand {
            what: "svdf output",
        })?,
    )
}

/// Runs every call of `session`'s model in order, call `i` with `kernels[i]` (the
/// generated module's `KERNELS`). The first failure stops it, naming the call.
///
/// This links every kernel the crate has; the generated module's own `invoke` links only
/// those its model uses (see [`invoke_only`]).
pub fn invoke<M: Model>(
    session: &mut Session<'_, M>,
    kernels: &[Kernel<'_>],
) -> Result<(), CallError> {
    invoke_only::<ALL, M>(session, kernels, None)
}

/// [`invoke`], filling every buffer whose last use was call `i` with `poison` right after
/// it (`Session::poison_dead`). A plan that let a buffer die too early, or a kernel that
/// reads past its call, then changes the outputs instead of passing by luck: run a
/// model's test inputs both ways and compare.
pub fn invoke_poisoning<M: Model>(
    session: &mut Session<'_, M>,
    kernels: &[Kernel<'_>],
    poison: u8,
) -> Result<(), CallError> {
    invoke_only::<ALL, M>(session, kernels, Some(poison))
}

/// [`invoke`] (or, with `poison`, [`invoke_poisoning`]) linking only the kinds of kernel in
/// `USED`, which should be [`used`]`(kernels)` computed in a `const`: a model of three
/// FULLY_CONNECTED calls then carries one kernel, not all of them. The generated module's
/// `invoke` and `invoke_poisoning` call this; a kernel left out is
/// [`Error::NotLinked`], never a wrong result.
pub fn invoke_only<const USED: u32, M: Model>(
    session: &mut Session<'_, M>,
    kernels: &[Kernel<'_>],
    poison: Option<u8>,
) -> Result<(), CallError> {
    let calls = session.calls();
    if kernels.len() != calls {
        return Err(CallError {
            call: 0,
            op: "",
            error: Error::Count {
                calls,
                kernels: kernels.len(),
            },
        });
    }
    for (i, kernel) in kernels.iter().enumerate() {
        let info = &M::INFO.calls[i];
        let fail = |error| CallError {
            call: i,
            op: info.op.name(),
            error,
        };
        let mut call = session
            .call(i)
            .ok_or_else(|| fail(Error::MissingOperand { what: "call" }))?;
        run_only::<USED>(kernel, &mut call).map_err(fail)?;
        if let Some(byte) = poison {
            session.poison_dead(i, byte);
        }
    }
    Ok(())
}
