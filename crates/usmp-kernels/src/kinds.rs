//! The kinds of kernel a model uses, as a set of bits computed in a `const`: what lets a
//! firmware link only its model's kernels ([`invoke_only`](crate::invoke_only)).

use crate::params::Kernel;

/// Each kind of kernel's bit in a set made by [`used`]; `run_only` tests these constants
/// in its match guards, so an arm whose bit is not in a constant set compiles to nothing.
pub(crate) mod bit {
    pub const COPY: u64 = 1 << 0;
    pub const CONV_2D: u64 = 1 << 1;
    pub const DEPTHWISE_CONV_2D: u64 = 1 << 2;
    pub const FULLY_CONNECTED: u64 = 1 << 3;
    pub const AVERAGE_POOL_2D: u64 = 1 << 4;
    pub const MAX_POOL_2D: u64 = 1 << 5;
    pub const SOFTMAX: u64 = 1 << 6;
    pub const REQUANTIZE: u64 = 1 << 7;
    pub const SVDF: u64 = 1 << 8;
    pub const RELU: u64 = 1 << 9;
    pub const ADD: u64 = 1 << 10;
    pub const MUL: u64 = 1 << 11;
    pub const CONCATENATION: u64 = 1 << 12;
    pub const PAD: u64 = 1 << 13;
    pub const MEAN: u64 = 1 << 14;
    pub const RESIZE_NEAREST_NEIGHBOR: u64 = 1 << 15;
    pub const LOGISTIC: u64 = 1 << 16;
    pub const TANH: u64 = 1 << 17;
    pub const DEQUANTIZE: u64 = 1 << 18;
    pub const QUANTIZE_FLOAT: u64 = 1 << 19;
    pub const CONV_2D_FLOAT: u64 = 1 << 20;
    pub const DEPTHWISE_CONV_2D_FLOAT: u64 = 1 << 21;
    pub const FULLY_CONNECTED_FLOAT: u64 = 1 << 22;
    pub const AVERAGE_POOL_2D_FLOAT: u64 = 1 << 23;
    pub const MAX_POOL_2D_FLOAT: u64 = 1 << 24;
    pub const SOFTMAX_FLOAT: u64 = 1 << 25;
    /// Some call writes its output over its input (`usmp::Source::Over`): the kernels'
    /// variants over one region are linked too, those of the kinds below that do.
    pub const OVER: u64 = 1 << 31;
    /// A CONV_2D call (int8 or float) writes over its input.
    pub const OVER_CONV: u64 = 1 << 26;
    /// A DEPTHWISE_CONV_2D call writes over its input.
    pub const OVER_DEPTHWISE: u64 = 1 << 27;
    /// A pooling call writes over its input.
    pub const OVER_POOL: u64 = 1 << 28;
    /// A call that works element by element, or copies, writes over its input: RESHAPE,
    /// SQUEEZE, EXPAND_DIMS, QUANTIZE, RELU, RELU6, LOGISTIC, TANH, DEQUANTIZE, ADD, MUL,
    /// CONCATENATION (each kind's variant is linked only where the model also uses that
    /// kind).
    pub const OVER_ELEMENTWISE: u64 = 1 << 29;
    /// A DEPTHWISE_CONV_2D call can take a path of its own: four channels at a time
    /// ([`Conv::four_at_a_time`]), or its multiplier's channels together
    /// ([`Conv::several_at_a_time`]). Those paths are linked too.
    pub const DEPTHWISE_BY_FOUR: u64 = 1 << 30;
    /// A streamed stage; its parts' kinds are in the set too.
    pub const STAGE: u64 = 1 << 32;
    /// A stage writes its output over its input.
    pub const OVER_STAGE: u64 = 1 << 33;
    /// A FULLY_CONNECTED call runs as the 1x1 convolution's blocked product
    /// ([`FullyConnected::by_product`](crate::FullyConnected::by_product)): that product
    /// is linked too.
    pub const FULLY_CONNECTED_PRODUCT: u64 = 1 << 34;
}

impl Kernel<'_> {
    /// This kind of kernel's bit in a set made by [`used`].
    pub const fn bit(&self) -> u64 {
        match self {
            Kernel::Copy => bit::COPY,
            Kernel::Conv2d(_) => bit::CONV_2D,
            Kernel::DepthwiseConv2d(p) if p.four_at_a_time() || p.several_at_a_time() => {
                bit::DEPTHWISE_CONV_2D | bit::DEPTHWISE_BY_FOUR
            }
            Kernel::DepthwiseConv2d(_) => bit::DEPTHWISE_CONV_2D,
            Kernel::FullyConnected(p) if p.by_product() => {
                bit::FULLY_CONNECTED | bit::FULLY_CONNECTED_PRODUCT
            }
            Kernel::FullyConnected(_) => bit::FULLY_CONNECTED,
            Kernel::AveragePool2d(_) => bit::AVERAGE_POOL_2D,
            Kernel::MaxPool2d(_) => bit::MAX_POOL_2D,
            Kernel::Softmax(_) => bit::SOFTMAX,
            Kernel::Requantize(_) => bit::REQUANTIZE,
            Kernel::Svdf(_) => bit::SVDF,
            Kernel::Relu(_) => bit::RELU,
            Kernel::Add(_) => bit::ADD,
            Kernel::Mul(_) => bit::MUL,
            Kernel::Concatenation(_) => bit::CONCATENATION,
            Kernel::Pad(_) => bit::PAD,
            Kernel::Mean(_) => bit::MEAN,
            Kernel::ResizeNearestNeighbor(_) => bit::RESIZE_NEAREST_NEIGHBOR,
            Kernel::Logistic(_) => bit::LOGISTIC,
            Kernel::Tanh(_) => bit::TANH,
            Kernel::Dequantize(_) => bit::DEQUANTIZE,
            Kernel::QuantizeFloat(_) => bit::QUANTIZE_FLOAT,
            Kernel::Conv2dFloat(_) => bit::CONV_2D_FLOAT,
            Kernel::DepthwiseConv2dFloat(_) => bit::DEPTHWISE_CONV_2D_FLOAT,
            Kernel::FullyConnectedFloat(_) => bit::FULLY_CONNECTED_FLOAT,
            Kernel::AveragePool2dFloat(_) => bit::AVERAGE_POOL_2D_FLOAT,
            Kernel::MaxPool2dFloat(_) => bit::MAX_POOL_2D_FLOAT,
            Kernel::SoftmaxFloat(_) => bit::SOFTMAX_FLOAT,
            Kernel::Stage(s) => {
                let mut set = bit::STAGE;
                let mut k = 0;
                while k < s.parts.len() {
                    set |= s.parts[k].kernel.bit();
                    k += 1;
                }
                set
            }
        }
    }
}

/// The kinds of kernel `kernels` uses, as a set of [`Kernel::bit`]s, for
/// [`invoke_only`](crate::invoke_only): computed in a `const`, it lets the firmware link
/// only the kernels its model needs.
pub const fn used(kernels: &[Kernel<'_>]) -> u64 {
    let mut set = 0;
    let mut i = 0;
    while i < kernels.len() {
        set |= kernels[i].bit();
        i += 1;
    }
    set
}

/// [`used`], and whether some call of `info` writes its output over its input: computed
/// in a `const` by the generated module, so a firmware whose plan shares no bytes between
/// an input and an output links none of the kernels' variants over one region.
pub const fn used_in(kernels: &[Kernel<'_>], info: &usmp::ModelInfo<'_>) -> u64 {
    let mut set = used(kernels);
    let mut c = 0;
    while c < info.calls.len() {
        let inputs = info.calls[c].inputs;
        let mut k = 0;
        while k < inputs.len() {
            if let usmp::Source::Over { .. } = inputs[k].source {
                set |= bit::OVER;
                if c < kernels.len() {
                    set |= over_bit(&kernels[c]);
                }
            }
            k += 1;
        }
        c += 1;
    }
    set
}

/// The bit of `kernel`'s variant over one region, 0 for a kernel that has none.
const fn over_bit(kernel: &Kernel<'_>) -> u64 {
    match kernel {
        Kernel::Conv2d(_) | Kernel::Conv2dFloat(_) => bit::OVER_CONV,
        Kernel::DepthwiseConv2d(_) | Kernel::DepthwiseConv2dFloat(_) => bit::OVER_DEPTHWISE,
        Kernel::AveragePool2d(_)
        | Kernel::MaxPool2d(_)
        | Kernel::AveragePool2dFloat(_)
        | Kernel::MaxPool2dFloat(_) => bit::OVER_POOL,
        Kernel::Copy
        | Kernel::Requantize(_)
        | Kernel::Relu(_)
        | Kernel::Logistic(_)
        | Kernel::Tanh(_)
        | Kernel::Dequantize(_)
        | Kernel::QuantizeFloat(_)
        | Kernel::Add(_)
        | Kernel::Mul(_)
        | Kernel::Concatenation(_) => bit::OVER_ELEMENTWISE,
        Kernel::Stage(_) => bit::OVER_STAGE,
        _ => 0,
    }
}
