//! One call run with its kernel: which kernel function a [`Kernel`] calls, over which of
//! the call's regions. Every arm is guarded by a constant test of the set of kernels the
//! firmware links (`USED`, from [`used_in`](crate::used_in)), so the arms of kernels a
//! model does not use compile to nothing.

use usmp::{Call, Inputs};

use crate::kinds::bit;
use crate::{
    Concatenation, Conv, Error, Float, Kernel, Stage, Svdf, conv, dense, elementwise, pointwise,
    pool, quantize, shape, softmax,
};

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
pub(crate) const ALL: u64 = u64::MAX;

/// Runs one call with `kernel`'s parameters; refuses a call of another operator.
pub fn run(kernel: &Kernel<'_>, call: &mut Call<'_>) -> Result<(), Error> {
    run_only::<ALL>(kernel, call)
}

/// Whether every bit of `bits` is in the constant set `USED`: a match guard that folds to
/// a constant.
const fn on<const USED: u64>(bits: u64) -> bool {
    USED & bits == bits
}

/// [`run`], with only the kernels in `USED` linked in: every arm's guard is a constant,
/// so the arms of the other kinds of kernel compile to nothing. `USED` should be the
/// generated module's `USED_KERNELS`; what [`invoke_only`](crate::invoke_only) runs for
/// each call, for a firmware that runs (or times) its calls one by one.
pub fn run_only<const USED: u64>(kernel: &Kernel<'_>, call: &mut Call<'_>) -> Result<(), Error> {
    let op = call.op();
    let runs = match kernel {
        // The operator's name is compared only where a stage is linked.
        Kernel::Stage(_) => on::<USED>(bit::STAGE) && op == usmp::Op::Named(crate::stage::OPERATOR),
        _ => (kernel.builtins().iter()).any(|&b| op == usmp::Op::Builtin(b)),
    };
    if !runs {
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
    if let Kernel::Stage(p) = kernel
        && on::<USED>(bit::STAGE)
    {
        return stage::<USED>(p, &inputs, call);
    }
    let out = call
        .outputs
        .get_mut(0)
        .ok_or(Error::MissingOperand { what: "output" })?;
    let work = work::<USED>(kernel, &mut call.scratch)?;
    // A plan without outputs over inputs links none of this; a call with one anyway (a
    // `USED` set made by hand) finds no input region and fails with MissingOperand.
    if on::<USED>(bit::OVER)
        && let Some(shared) = inputs.shared(0)
    {
        return run_over::<USED>(kernel, &shared, &inputs, out, work);
    }
    run_kernel::<USED>(kernel, &inputs, out, work, op)
}

/// The call's kernel work (`crate::work`): its last scratch buffer where this build's
/// path keeps work for `kernel`, else none. Refuses a plan that gave it fewer bytes.
#[inline(always)]
fn work<'s, const USED: u64>(
    kernel: &Kernel<'_>,
    scratch: &'s mut usmp::Writable<'_>,
) -> Result<&'s mut [u8], Error> {
    // Only the kinds the firmware links are looked at (a model of FULLY_CONNECTED calls
    // alone links none of this), FULLY_CONNECTED only where it links the product, its
    // one path that keeps work.
    let target = crate::work::Path::TARGET;
    let need = match kernel {
        Kernel::Conv2d(p) if on::<USED>(bit::CONV_2D) => crate::work::conv(p, false, target),
        Kernel::DepthwiseConv2d(p) if on::<USED>(bit::DEPTHWISE_CONV_2D) => {
            crate::work::conv(p, true, target)
        }
        Kernel::FullyConnected(_) if on::<USED>(bit::FULLY_CONNECTED_PRODUCT) => {
            crate::work::bytes(kernel, target)
        }
        Kernel::Add(_) if on::<USED>(bit::ADD) => crate::work::bytes(kernel, target),
        Kernel::Mul(_) if on::<USED>(bit::MUL) => crate::work::bytes(kernel, target),
        _ => 0,
    };
    if need == 0 {
        return Ok(&mut []);
    }
    let last = scratch.len().saturating_sub(1);
    let work = scratch.get_mut(last).unwrap_or(&mut []);
    if !crate::work::holds(work, need) {
        return Err(Error::Work {
            need,
            got: work.len(),
        });
    }
    Ok(work)
}

/// The call of `op` with `kernel` over `inputs` into `out`: one arm per kind of kernel,
/// each guarded by its constant bit. Input 0 is named only "input" in errors: the call's
/// [`CallError`](crate::CallError) names the operator.
fn run_kernel<const USED: u64>(
    kernel: &Kernel<'_>,
    inputs: &Inputs<'_>,
    out: &mut [u8],
    work: &mut [u8],
    op: usmp::Op,
) -> Result<(), Error> {
    let x = || input(inputs, 0, "input");
    let y = || input(inputs, 1, "input 2");
    match kernel {
        Kernel::Copy if on::<USED>(bit::COPY) => quantize::copy(x()?, out),
        Kernel::Conv2d(p) if on::<USED>(bit::CONV_2D) => {
            convolution::<USED>(p, inputs, out, work, false)
        }
        Kernel::DepthwiseConv2d(p) if on::<USED>(bit::DEPTHWISE_CONV_2D) => {
            convolution::<USED>(p, inputs, out, work, true)
        }
        Kernel::FullyConnected(p) if on::<USED>(bit::FULLY_CONNECTED) => {
            let [x, filter, bias] = weighted(inputs, p.bias)?;
            if on::<USED>(bit::FULLY_CONNECTED_PRODUCT) {
                dense::fully_connected_by::<true>(p, x, filter, bias, out, work)
            } else {
                dense::fully_connected_by::<false>(p, x, filter, bias, out, work)
            }
        }
        Kernel::AveragePool2d(p) if on::<USED>(bit::AVERAGE_POOL_2D) => {
            pool::average_pool2d(p, x()?, out)
        }
        Kernel::MaxPool2d(p) if on::<USED>(bit::MAX_POOL_2D) => pool::max_pool2d(p, x()?, out),
        Kernel::Softmax(p) if on::<USED>(bit::SOFTMAX) => softmax::softmax(p, x()?, out),
        Kernel::Requantize(p) if on::<USED>(bit::REQUANTIZE) => quantize::requantize(p, x()?, out),
        Kernel::Relu(p) if on::<USED>(bit::RELU) => quantize::requantize(p, x()?, out),
        Kernel::Add(p) if on::<USED>(bit::ADD) => elementwise::add(p, x()?, y()?, out, work),
        Kernel::Mul(p) if on::<USED>(bit::MUL) => elementwise::mul(p, x()?, y()?, out, work),
        Kernel::Concatenation(p) if on::<USED>(bit::CONCATENATION) => concatenation(p, inputs, out),
        Kernel::Pad(p) if on::<USED>(bit::PAD) => shape::pad(p, x()?, out),
        Kernel::Mean(p) if on::<USED>(bit::MEAN) => pool::mean(p, x()?, out),
        Kernel::ResizeNearestNeighbor(p) if on::<USED>(bit::RESIZE_NEAREST_NEIGHBOR) => {
            shape::resize_nearest_neighbor(p, x()?, out)
        }
        Kernel::Logistic(p) if on::<USED>(bit::LOGISTIC) => pointwise::logistic(p, x()?, out),
        Kernel::Tanh(p) if on::<USED>(bit::TANH) => pointwise::tanh(p, x()?, out),
        Kernel::Dequantize(p) if on::<USED>(bit::DEQUANTIZE) => pointwise::dequantize(p, x()?, out),
        Kernel::QuantizeFloat(p) if on::<USED>(bit::QUANTIZE_FLOAT) => {
            pointwise::quantize(p, x()?, out)
        }
        Kernel::Conv2dFloat(p) if on::<USED>(bit::CONV_2D_FLOAT) => conv_f32(p, inputs, out, false),
        Kernel::DepthwiseConv2dFloat(p) if on::<USED>(bit::DEPTHWISE_CONV_2D_FLOAT) => {
            conv_f32(p, inputs, out, true)
        }
        Kernel::FullyConnectedFloat(p) if on::<USED>(bit::FULLY_CONNECTED_FLOAT) => {
            let [x, filter, bias] = weighted(inputs, p.shape.bias)?;
            dense::fully_connected_f32(p, x, filter, bias, out)
        }
        Kernel::AveragePool2dFloat(p) if on::<USED>(bit::AVERAGE_POOL_2D_FLOAT) => {
            pool::average_pool2d_f32(p, x()?, out)
        }
        Kernel::MaxPool2dFloat(p) if on::<USED>(bit::MAX_POOL_2D_FLOAT) => {
            pool::max_pool2d_f32(p, x()?, out)
        }
        Kernel::SoftmaxFloat(p) if on::<USED>(bit::SOFTMAX_FLOAT) => {
            softmax::softmax_f32(p, x()?, out)
        }
        // SVDF ran in run_only; anything else is a kernel left out of `USED`.
        _ => Err(Error::NotLinked { op: op.name() }),
    }
}

/// A streamed stage: its inputs (the chain's, then every part's weights) resolved to
/// slices here, so the stage kernel takes only slices; its line buffers in scratch 0
/// (none when it has one part). Where the plan put its output over its input, output 0's
/// region holds both.
#[inline(always)]
fn stage<const USED: u64>(
    p: &Stage<'_>,
    inputs: &Inputs<'_>,
    call: &mut Call<'_>,
) -> Result<(), Error> {
    const MOST: usize = 1 + 2 * crate::stage::MOST_PARTS;
    let shared = match on::<USED>(bit::OVER | bit::OVER_STAGE) {
        true => inputs.shared(0),
        false => None,
    };
    let out = call
        .outputs
        .get_mut(0)
        .ok_or(Error::MissingOperand { what: "output" })?;
    let scratch = call.scratch.get_mut(0).unwrap_or(&mut []);
    // Over its input, input 0 is the region's: the weights alone are handed out.
    let first = usize::from(shared.is_some());
    with_parts::<MOST, _>(inputs, first, STAGE, |slices| match shared {
        Some(shared) => crate::stage::run_over(p, out, &shared, slices, scratch),
        None => crate::stage::run(p, slices, scratch, out),
    })
}

/// A weighted kernel's input, filter and (when the parameters say so) bias.
#[inline(always)]
fn weighted<'a>(inputs: &Inputs<'a>, bias: bool) -> Result<[&'a [u8]; 3], Error> {
    Ok([
        input(inputs, 0, "input")?,
        input(inputs, 1, "filter")?,
        optional(inputs, 2, bias, "bias")?,
    ])
}

/// CONV_2D or DEPTHWISE_CONV_2D, int8; the depthwise paths of their own linked only when
/// some call of the model takes one.
#[inline(always)]
fn convolution<const USED: u64>(
    p: &Conv<'_>,
    inputs: &Inputs<'_>,
    out: &mut [u8],
    work: &mut [u8],
    depthwise: bool,
) -> Result<(), Error> {
    let [x, filter, bias] = weighted(inputs, p.bias)?;
    if !depthwise {
        conv::conv2d(p, x, filter, bias, out, work)
    } else if on::<USED>(bit::DEPTHWISE_BY_FOUR) {
        conv::depthwise::<true>(p, x, filter, bias, out, work)
    } else {
        conv::depthwise::<false>(p, x, filter, bias, out, work)
    }
}

/// CONV_2D or DEPTHWISE_CONV_2D, float32.
#[inline(always)]
fn conv_f32(
    p: &Float<'_, Conv<'_>>,
    inputs: &Inputs<'_>,
    out: &mut [u8],
    depthwise: bool,
) -> Result<(), Error> {
    let [x, filter, bias] = weighted(inputs, p.shape.bias)?;
    if depthwise {
        conv::depthwise_conv2d_f32(p, x, filter, bias, out)
    } else {
        conv::conv2d_f32(p, x, filter, bias, out)
    }
}

/// CONCATENATION: every input in order, at most 16.
#[inline(always)]
fn concatenation(p: &Concatenation<'_>, inputs: &Inputs<'_>, out: &mut [u8]) -> Result<(), Error> {
    with_parts::<16, _>(inputs, 0, CONCATENATION, |parts| {
        shape::concatenation(p, parts, out)
    })
}

/// What a kernel of many inputs names in its errors: the inputs, what is wrong when there
/// are too many, one input.
struct Many {
    inputs: &'static str,
    too_many: &'static str,
    input: &'static str,
}

const CONCATENATION: Many = Many {
    inputs: "concatenation inputs",
    too_many: "more than 16 inputs",
    input: "concatenation input",
};

const STAGE: Many = Many {
    inputs: "stage inputs",
    too_many: "more than two weights a part",
    input: "stage input",
};

/// The call's inputs from `first` on as slices (at most `MOST` inputs in all), handed to
/// `run`.
#[inline(always)]
fn with_parts<const MOST: usize, R>(
    inputs: &Inputs<'_>,
    first: usize,
    names: Many,
    run: impl FnOnce(&[&[u8]]) -> Result<R, Error>,
) -> Result<R, Error> {
    let mut parts: [&[u8]; MOST] = [&[]; MOST];
    if inputs.len() > MOST {
        return Err(Error::Parameters {
            what: names.inputs,
            problem: names.too_many,
        });
    }
    let n = inputs.len().saturating_sub(first);
    for (k, part) in parts.iter_mut().enumerate().take(n) {
        *part = input(inputs, first + k, names.input)?;
    }
    run(&parts[..n])
}

/// A call whose output the plan put over its input 0 ([`usmp::Source::Over`]): `region`
/// holds both. Only a kernel that certifies a window ([`overlap::Window`]) runs it, and
/// only at a shift the window allows.
fn run_over<const USED: u64>(
    kernel: &Kernel<'_>,
    shared: &usmp::Shared,
    inputs: &Inputs<'_>,
    region: &mut [u8],
    work: &mut [u8],
) -> Result<(), Error> {
    match kernel {
        Kernel::Conv2d(p) if on::<USED>(bit::CONV_2D | bit::OVER_CONV) => {
            conv::conv2d_over::<false>(
                p,
                region,
                shared,
                input(inputs, 1, "conv filter")?,
                optional(inputs, 2, p.bias, "conv bias")?,
                work,
            )
        }
        Kernel::DepthwiseConv2d(p) if on::<USED>(bit::DEPTHWISE_CONV_2D | bit::OVER_DEPTHWISE) => {
            conv::conv2d_over::<true>(
                p,
                region,
                shared,
                input(inputs, 1, "depthwise filter")?,
                optional(inputs, 2, p.bias, "depthwise bias")?,
                work,
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
        _ => run_over_elementwise::<USED>(kernel, shared, inputs, region, work),
    }
}

/// [`run_over`] for the kernels that work element by element.
fn run_over_elementwise<const USED: u64>(
    kernel: &Kernel<'_>,
    shared: &usmp::Shared,
    inputs: &Inputs<'_>,
    region: &mut [u8],
    work: &mut [u8],
) -> Result<(), Error> {
    match kernel {
        Kernel::Copy if on::<USED>(bit::OVER_ELEMENTWISE) => quantize::copy_over(region, shared),
        Kernel::Requantize(p) if on::<USED>(bit::REQUANTIZE | bit::OVER_ELEMENTWISE) => {
            quantize::requantize_over(p, region, shared)
        }
        Kernel::Relu(p) if on::<USED>(bit::RELU | bit::OVER_ELEMENTWISE) => {
            quantize::requantize_over(p, region, shared)
        }
        Kernel::Logistic(p) if on::<USED>(bit::LOGISTIC | bit::OVER_ELEMENTWISE) => {
            pointwise::sigmoid_over::<false>(p, region, shared)
        }
        Kernel::Tanh(p) if on::<USED>(bit::TANH | bit::OVER_ELEMENTWISE) => {
            pointwise::sigmoid_over::<true>(p, region, shared)
        }
        Kernel::Dequantize(p) if on::<USED>(bit::DEQUANTIZE | bit::OVER_ELEMENTWISE) => {
            pointwise::affine_over::<false>(p, region, shared)
        }
        Kernel::QuantizeFloat(p) if on::<USED>(bit::QUANTIZE_FLOAT | bit::OVER_ELEMENTWISE) => {
            pointwise::affine_over::<true>(p, region, shared)
        }
        Kernel::Add(p) if on::<USED>(bit::ADD | bit::OVER_ELEMENTWISE) => {
            elementwise::add_over(p, region, shared, input(inputs, 1, "input 2")?, work)
        }
        Kernel::Mul(p) if on::<USED>(bit::MUL | bit::OVER_ELEMENTWISE) => {
            elementwise::mul_over(p, region, shared, input(inputs, 1, "input 2")?, work)
        }
        Kernel::Concatenation(p) if on::<USED>(bit::CONCATENATION | bit::OVER_ELEMENTWISE) => {
            with_parts::<16, _>(inputs, 1, CONCATENATION, |others| {
                shape::concatenation_over(p, region, shared, others)
            })
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
