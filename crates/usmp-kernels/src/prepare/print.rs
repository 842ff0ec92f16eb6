//! The one printer of prepared parameters: a [`Kernel`] as the Rust expression that builds
//! it, for the generated module's `const KERNELS`. Every struct is taken apart field by
//! field (no `..`), so a field added to the parameters fails to compile here until it is
//! printed too.

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::{
    Add, Affine, Broadcast, Concatenation, Conv, Float, FullyConnected, Int, Kernel, Mean, Mul,
    Pad, Pool, Requantize, Resize, Sigmoid, Softmax, SoftmaxFloat, Svdf,
};

/// `kernel` as a Rust expression naming the kernels crate by `path` (`"::usmp_kernels"`
/// unless the firmware depends on it under another name), e.g.
/// `::usmp_kernels::Kernel::MaxPool2d(&::usmp_kernels::Pool { input: [1, 8, 8, 4], .. })`.
pub fn rust(kernel: &Kernel<'_>, path: &str) -> String {
    let k = path;
    let (variant, params) = match kernel {
        Kernel::Copy => return format!("{k}::Kernel::Copy"),
        Kernel::Conv2d(p) => ("Conv2d", p.rust(k)),
        Kernel::DepthwiseConv2d(p) => ("DepthwiseConv2d", p.rust(k)),
        Kernel::FullyConnected(p) => ("FullyConnected", p.rust(k)),
        Kernel::AveragePool2d(p) => ("AveragePool2d", p.rust(k)),
        Kernel::MaxPool2d(p) => ("MaxPool2d", p.rust(k)),
        Kernel::Softmax(p) => ("Softmax", p.rust(k)),
        Kernel::Requantize(p) => ("Requantize", p.rust(k)),
        Kernel::Svdf(p) => ("Svdf", p.rust(k)),
        Kernel::Relu(p) => ("Relu", p.rust(k)),
        Kernel::Add(p) => ("Add", p.rust(k)),
        Kernel::Mul(p) => ("Mul", p.rust(k)),
        Kernel::Concatenation(p) => ("Concatenation", p.rust(k)),
        Kernel::Pad(p) => ("Pad", p.rust(k)),
        Kernel::Mean(p) => ("Mean", p.rust(k)),
        Kernel::ResizeNearestNeighbor(p) => ("ResizeNearestNeighbor", p.rust(k)),
        Kernel::Logistic(p) => ("Logistic", p.rust(k)),
        Kernel::Tanh(p) => ("Tanh", p.rust(k)),
        Kernel::Dequantize(p) => ("Dequantize", p.rust(k)),
        Kernel::QuantizeFloat(p) => ("QuantizeFloat", p.rust(k)),
        Kernel::Conv2dFloat(p) => ("Conv2dFloat", p.rust(k)),
        Kernel::DepthwiseConv2dFloat(p) => ("DepthwiseConv2dFloat", p.rust(k)),
        Kernel::FullyConnectedFloat(p) => ("FullyConnectedFloat", p.rust(k)),
        Kernel::AveragePool2dFloat(p) => ("AveragePool2dFloat", p.rust(k)),
        Kernel::MaxPool2dFloat(p) => ("MaxPool2dFloat", p.rust(k)),
        Kernel::SoftmaxFloat(p) => ("SoftmaxFloat", p.rust(k)),
        Kernel::Stage(p) => ("Stage", p.rust(k)),
    };
    format!("{k}::Kernel::{variant}(&{params})")
}

/// A parameter struct as a Rust expression, the kernels crate at `k`.
pub(super) trait Rust {
    fn rust(&self, k: &str) -> String;
}

/// `k::name { field: value, .. }` from `(field, value)` pairs in declaration order.
pub(super) fn literal(k: &str, name: &str, fields: &[(&str, String)]) -> String {
    let fields: Vec<String> = fields.iter().map(|(f, v)| format!("{f}: {v}")).collect();
    format!("{k}::{name} {{ {} }}", fields.join(", "))
}

/// `&[a, b, c]`.
fn list<T: ToString>(v: &[T]) -> String {
    let items: Vec<String> = v.iter().map(T::to_string).collect();
    format!("&[{}]", items.join(", "))
}

/// An `f32` literal that reads back as the same value (`{:?}` is the shortest such
/// decimal); infinities and NaN, which have no literal, by their constants.
fn float(x: f32) -> String {
    if x.is_nan() {
        "f32::NAN".to_string()
    } else if x.is_infinite() {
        let sign = if x < 0.0 { "-" } else { "" };
        format!("{sign}f32::INFINITY")
    } else {
        format!("{x:?}")
    }
}

fn int(k: &str, i: Int) -> String {
    format!("{k}::Int::{i:?}")
}

impl Rust for Conv<'_> {
    fn rust(&self, k: &str) -> String {
        let Conv {
            input,
            filter,
            output,
            stride,
            dilation,
            padding,
            depth_multiplier,
            input_offset,
            output_offset,
            activation,
            bias,
            multipliers,
            shifts,
        } = self;
        literal(
            k,
            "Conv",
            &[
                ("input", format!("{input:?}")),
                ("filter", format!("{filter:?}")),
                ("output", format!("{output:?}")),
                ("stride", format!("{stride:?}")),
                ("dilation", format!("{dilation:?}")),
                ("padding", format!("{padding:?}")),
                ("depth_multiplier", depth_multiplier.to_string()),
                ("input_offset", input_offset.to_string()),
                ("output_offset", output_offset.to_string()),
                ("activation", format!("{activation:?}")),
                ("bias", bias.to_string()),
                ("multipliers", list(multipliers)),
                ("shifts", list(shifts)),
            ],
        )
    }
}

impl Rust for FullyConnected<'_> {
    fn rust(&self, k: &str) -> String {
        let FullyConnected {
            batches,
            depth,
            outputs,
            bias,
            input_offset,
            filter_offset,
            output_offset,
            activation,
            multipliers,
            shifts,
        } = self;
        literal(
            k,
            "FullyConnected",
            &[
                ("batches", batches.to_string()),
                ("depth", depth.to_string()),
                ("outputs", outputs.to_string()),
                ("bias", bias.to_string()),
                ("input_offset", input_offset.to_string()),
                ("filter_offset", filter_offset.to_string()),
                ("output_offset", output_offset.to_string()),
                ("activation", format!("{activation:?}")),
                ("multipliers", list(multipliers)),
                ("shifts", list(shifts)),
            ],
        )
    }
}

impl Rust for Pool {
    fn rust(&self, k: &str) -> String {
        let Pool {
            input,
            output,
            window,
            stride,
            padding,
            activation,
        } = self;
        literal(
            k,
            "Pool",
            &[
                ("input", format!("{input:?}")),
                ("output", format!("{output:?}")),
                ("window", format!("{window:?}")),
                ("stride", format!("{stride:?}")),
                ("padding", format!("{padding:?}")),
                ("activation", format!("{activation:?}")),
            ],
        )
    }
}

impl<P: Rust> Rust for Float<'_, P> {
    fn rust(&self, k: &str) -> String {
        let Float {
            shape,
            activation: [lo, hi],
        } = self;
        literal(
            k,
            "Float",
            &[
                ("shape", format!("&{}", shape.rust(k))),
                ("activation", format!("[{}, {}]", float(*lo), float(*hi))),
            ],
        )
    }
}

impl Rust for Softmax {
    fn rust(&self, k: &str) -> String {
        let Softmax {
            rows,
            depth,
            input_multiplier,
            input_left_shift,
            diff_min,
            output,
        } = self;
        literal(
            k,
            "Softmax",
            &[
                ("rows", rows.to_string()),
                ("depth", depth.to_string()),
                ("input_multiplier", input_multiplier.to_string()),
                ("input_left_shift", input_left_shift.to_string()),
                ("diff_min", diff_min.to_string()),
                ("output", int(k, *output)),
            ],
        )
    }
}

impl Rust for SoftmaxFloat {
    fn rust(&self, k: &str) -> String {
        let SoftmaxFloat { rows, depth, beta } = self;
        literal(
            k,
            "SoftmaxFloat",
            &[
                ("rows", rows.to_string()),
                ("depth", depth.to_string()),
                ("beta", float(*beta)),
            ],
        )
    }
}

impl Rust for Requantize {
    fn rust(&self, k: &str) -> String {
        let Requantize {
            elements,
            from,
            to,
            input_zero,
            output_zero,
            multiplier,
            shift,
            clamp,
        } = self;
        literal(
            k,
            "Requantize",
            &[
                ("elements", elements.to_string()),
                ("from", int(k, *from)),
                ("to", int(k, *to)),
                ("input_zero", input_zero.to_string()),
                ("output_zero", output_zero.to_string()),
                ("multiplier", multiplier.to_string()),
                ("shift", shift.to_string()),
                ("clamp", format!("{clamp:?}")),
            ],
        )
    }
}

impl Rust for Sigmoid {
    fn rust(&self, k: &str) -> String {
        let Sigmoid {
            elements,
            input_zero,
            input_range_radius,
            input_multiplier,
            input_left_shift,
        } = self;
        literal(
            k,
            "Sigmoid",
            &[
                ("elements", elements.to_string()),
                ("input_zero", input_zero.to_string()),
                ("input_range_radius", input_range_radius.to_string()),
                ("input_multiplier", input_multiplier.to_string()),
                ("input_left_shift", input_left_shift.to_string()),
            ],
        )
    }
}

impl Rust for Affine {
    fn rust(&self, k: &str) -> String {
        let Affine {
            elements,
            int: i,
            scale,
            zero,
        } = self;
        literal(
            k,
            "Affine",
            &[
                ("elements", elements.to_string()),
                ("int", int(k, *i)),
                ("scale", float(*scale)),
                ("zero", zero.to_string()),
            ],
        )
    }
}

impl Rust for Broadcast {
    fn rust(&self, k: &str) -> String {
        let Broadcast {
            output,
            first,
            second,
            first_elements,
            second_elements,
        } = self;
        literal(
            k,
            "Broadcast",
            &[
                ("output", format!("{output:?}")),
                ("first", format!("{first:?}")),
                ("second", format!("{second:?}")),
                ("first_elements", first_elements.to_string()),
                ("second_elements", second_elements.to_string()),
            ],
        )
    }
}

impl Rust for Add {
    fn rust(&self, k: &str) -> String {
        let Add {
            shape,
            first_offset,
            second_offset,
            left_shift,
            first,
            second,
            output,
            output_offset,
            activation,
        } = self;
        literal(
            k,
            "Add",
            &[
                ("shape", shape.rust(k)),
                ("first_offset", first_offset.to_string()),
                ("second_offset", second_offset.to_string()),
                ("left_shift", left_shift.to_string()),
                ("first", format!("{first:?}")),
                ("second", format!("{second:?}")),
                ("output", format!("{output:?}")),
                ("output_offset", output_offset.to_string()),
                ("activation", format!("{activation:?}")),
            ],
        )
    }
}

impl Rust for Mul {
    fn rust(&self, k: &str) -> String {
        let Mul {
            shape,
            first_offset,
            second_offset,
            output,
            output_offset,
            activation,
        } = self;
        literal(
            k,
            "Mul",
            &[
                ("shape", shape.rust(k)),
                ("first_offset", first_offset.to_string()),
                ("second_offset", second_offset.to_string()),
                ("output", format!("{output:?}")),
                ("output_offset", output_offset.to_string()),
                ("activation", format!("{activation:?}")),
            ],
        )
    }
}

impl Rust for Mean {
    fn rust(&self, k: &str) -> String {
        let Mean {
            input,
            reduced,
            count,
            input_zero,
            output_zero,
            multiplier,
            shift,
        } = self;
        literal(
            k,
            "Mean",
            &[
                ("input", format!("{input:?}")),
                ("reduced", format!("{reduced:?}")),
                ("count", count.to_string()),
                ("input_zero", input_zero.to_string()),
                ("output_zero", output_zero.to_string()),
                ("multiplier", multiplier.to_string()),
                ("shift", shift.to_string()),
            ],
        )
    }
}

impl Rust for Concatenation<'_> {
    fn rust(&self, k: &str) -> String {
        let Concatenation { outer, parts } = self;
        literal(
            k,
            "Concatenation",
            &[("outer", outer.to_string()), ("parts", list(parts))],
        )
    }
}

impl Rust for Pad<'_> {
    fn rust(&self, k: &str) -> String {
        let Pad {
            input,
            before,
            output,
            value,
        } = self;
        literal(
            k,
            "Pad",
            &[
                ("input", format!("{input:?}")),
                ("before", format!("{before:?}")),
                ("output", format!("{output:?}")),
                ("value", list(value)),
            ],
        )
    }
}

impl Rust for Resize<'_> {
    fn rust(&self, k: &str) -> String {
        let Resize {
            input,
            rows,
            columns,
            element_bytes,
        } = self;
        literal(
            k,
            "Resize",
            &[
                ("input", format!("{input:?}")),
                ("rows", list(rows)),
                ("columns", list(columns)),
                ("element_bytes", element_bytes.to_string()),
            ],
        )
    }
}

impl Rust for Svdf {
    fn rust(&self, k: &str) -> String {
        let Svdf {
            batches,
            inputs,
            filters,
            rank,
            memory,
            bias,
            input_zero,
            state_zero,
            output_zero,
            feature_multiplier,
            feature_shift,
            output_multiplier,
            output_shift,
        } = self;
        literal(
            k,
            "Svdf",
            &[
                ("batches", batches.to_string()),
                ("inputs", inputs.to_string()),
                ("filters", filters.to_string()),
                ("rank", rank.to_string()),
                ("memory", memory.to_string()),
                ("bias", bias.to_string()),
                ("input_zero", input_zero.to_string()),
                ("state_zero", state_zero.to_string()),
                ("output_zero", output_zero.to_string()),
                ("feature_multiplier", feature_multiplier.to_string()),
                ("feature_shift", feature_shift.to_string()),
                ("output_multiplier", output_multiplier.to_string()),
                ("output_shift", output_shift.to_string()),
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact text: every field in declaration order, lists as `&[..]`, the path as
    /// given, a float parameter's struct inside `Float`.
    #[test]
    fn parameters_print_as_their_rust_literal() {
        let conv = Conv {
            input: [1, 4, 4, 2],
            filter: [3, 1, 1, 2],
            output: [1, 4, 4, 3],
            stride: [1, 1],
            dilation: [1, 1],
            padding: [0, 0],
            depth_multiplier: 1,
            input_offset: 128,
            output_offset: -5,
            activation: [-128, 127],
            bias: true,
            multipliers: &[1 << 30, 3 << 29, 1 << 30],
            shifts: &[-1, 0, -2],
        };
        assert_eq!(
            rust(&Kernel::Conv2d(&conv), "::rt_kernels"),
            "::rt_kernels::Kernel::Conv2d(&::rt_kernels::Conv { input: [1, 4, 4, 2], \
             filter: [3, 1, 1, 2], output: [1, 4, 4, 3], stride: [1, 1], dilation: [1, 1], \
             padding: [0, 0], depth_multiplier: 1, input_offset: 128, output_offset: -5, \
             activation: [-128, 127], bias: true, multipliers: &[1073741824, 1610612736, \
             1073741824], shifts: &[-1, 0, -2] })"
        );
        let pool = Pool {
            input: [1, 2, 2, 1],
            output: [1, 1, 1, 1],
            window: [2, 2],
            stride: [2, 2],
            padding: [0, 0],
            activation: [0, 0],
        };
        let float = Float {
            shape: &pool,
            activation: [f32::MIN, 6.0],
        };
        assert_eq!(
            rust(&Kernel::MaxPool2dFloat(&float), "k"),
            "k::Kernel::MaxPool2dFloat(&k::Float { shape: &k::Pool { input: [1, 2, 2, 1], \
             output: [1, 1, 1, 1], window: [2, 2], stride: [2, 2], padding: [0, 0], \
             activation: [0, 0] }, activation: [-3.4028235e38, 6.0] })"
        );
        assert_eq!(rust(&Kernel::Copy, "k"), "k::Kernel::Copy");
    }

    /// Every `f32` prints as a literal that reads back bit for bit; those without a
    /// literal as constants.
    #[test]
    fn floats_read_back_as_themselves() {
        for x in [
            0.1f32,
            -0.0,
            1e-45,
            f32::MIN,
            f32::MAX,
            3.921_569e-3,
            1.0 / 3.0,
        ] {
            let text = float(x);
            assert_eq!(
                text.parse::<f32>().map(f32::to_bits),
                Ok(x.to_bits()),
                "{text}"
            );
        }
        assert_eq!(float(f32::INFINITY), "f32::INFINITY");
        assert_eq!(float(f32::NEG_INFINITY), "-f32::INFINITY");
        assert_eq!(float(f32::NAN), "f32::NAN");
    }
}
