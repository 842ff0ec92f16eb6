//! # usmp-kernels: run a planned model
//!
//! Int8 kernels with TensorFlow Lite Micro's *reference* arithmetic (the same integer
//! formulas and rounding, so outputs are equal byte for byte), run directly on the
//! regions a [`usmp::Session`] hands out: no arena, no allocator, and no `unsafe` but the
//! `dsp` module's inline assembly on Thumb-2 cores (DSP instructions on registers, and
//! seven loops, each behind a safe function that checks its slices first) and
//! one cast of a call's zeroed [`work`] to the integer arrays a path keeps there.
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
//! Where TFLite Micro keeps intermediate sums in a scratch buffer (SVDF), these keep them
//! in registers, with the same wrapping int32 arithmetic. A streamed stage ([`stage`]: a
//! chain of calls usmp-build fused, run a few rows at a time) has one scratch buffer, its
//! line buffers, planned like any scratch. The fast paths keep their buffers in *kernel
//! work* ([`work`]), not on the stack: the 1x1 convolution's pixel pairs (2,176 bytes) or,
//! with Helium, its four pixels laid out and block of sums (3,136), a small convolution's
//! patch (832), the depthwise paths' taps and sums (128 to 448; Helium's chunks 960, or
//! 3,520 past 16 taps), ADD's and MUL's block of outputs on Helium (64). usmp-build plans a
//! call's work as its last scratch buffer, sized for the path of the target it builds for,
//! and the report lists it with every other buffer; [`run`] refuses a call whose plan gave
//! less ([`Error::Work`]). What stays on the stack is a few words a loop keeps at hand (up
//! to a pixel's sixteen sums, eight bytes).
#![no_std]
#![deny(missing_docs)]
#![deny(unsafe_code)]

#[cfg(feature = "prepare")]
extern crate std;

mod bytes;
pub mod conv;
pub mod dense;
// Inline assembly: eight DSP instructions on registers only, and twelve loops reading
// slices they check (see the SAFETY notes): seven Thumb-2 or DSP ones, five Helium ones.
#[allow(unsafe_code)]
#[cfg_attr(not(usmp_dsp), allow(dead_code))]
mod dsp;
pub mod elementwise;
pub mod exp;
pub mod fixed;
mod kinds;
pub mod overlap;
mod params;
pub mod pointwise;
pub mod pool;
#[cfg(feature = "prepare")]
pub mod prepare;
pub mod quantize;
mod rows;
mod run;
pub mod shape;
pub mod softmax;
pub mod stage;
// Read by the build script too; the crate reads what `work::Path::of` needs.
mod plain;
#[cfg(feature = "prepare")]
#[allow(dead_code)]
mod target;
pub mod work;

pub use kinds::{used, used_in};
pub use params::{
    Add, Affine, Broadcast, Concatenation, Conv, Float, FullyConnected, Int, Kernel, Mean, Mul,
    Pad, Part, Pool, Range, Requantize, Resize, Sigmoid, Softmax, SoftmaxFloat, Stage, Svdf,
};

use run::ALL;
use usmp::{Builtin, Model, Session};

pub use run::{run, run_only};

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
    /// The call's plan gave its kernel fewer bytes of work than this build's path keeps
    /// (see [`work`]): the plan was made for another target or target CPU.
    Work {
        /// Bytes the path keeps, from an aligned start.
        need: usize,
        /// Bytes the call's last scratch buffer has.
        got: usize,
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
            Error::Work { need, got } => write!(
                f,
                "the kernel needs {need} bytes of work aligned to {}, its last scratch buffer has {got}: plan for the target the firmware is built for (usmp-build reads TARGET and CARGO_ENCODED_RUSTFLAGS: build the plan and the kernels with the same target and -C target-cpu)",
                work::ALIGN
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
            Kernel::Stage(_) => &[],
        }
    }
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
pub fn invoke_only<const USED: u64, M: Model>(
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
