//! What a call computes and on what kind of data: the operator, and each operand's element
//! type, shape and quantization, so one kernel library can run any model.

/// Declares [`Builtin`] with each variant's TensorFlow Lite schema name, once.
macro_rules! builtins {
    ($($variant:ident = $name:literal,)*) => {
        /// A TensorFlow Lite built-in operator that kernels commonly implement.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Builtin {
            $(
                #[doc = concat!("`", $name, "`.")]
                $variant,
            )*
        }

        impl Builtin {
            /// Every variant with its schema name and its Rust name, for generators.
            pub const ALL: &'static [(Builtin, &'static str, &'static str)] =
                &[$((Builtin::$variant, $name, stringify!($variant)),)*];
        }
    };
}

builtins! {
    Add = "ADD",
    AveragePool2d = "AVERAGE_POOL_2D",
    BatchMatmul = "BATCH_MATMUL",
    Concatenation = "CONCATENATION",
    Conv2d = "CONV_2D",
    DepthwiseConv2d = "DEPTHWISE_CONV_2D",
    Dequantize = "DEQUANTIZE",
    Div = "DIV",
    Elu = "ELU",
    Equal = "EQUAL",
    Exp = "EXP",
    ExpandDims = "EXPAND_DIMS",
    Fill = "FILL",
    Floor = "FLOOR",
    FullyConnected = "FULLY_CONNECTED",
    Gather = "GATHER",
    HardSwish = "HARD_SWISH",
    L2Normalization = "L2_NORMALIZATION",
    LeakyRelu = "LEAKY_RELU",
    Log = "LOG",
    Logistic = "LOGISTIC",
    LogSoftmax = "LOG_SOFTMAX",
    MaxPool2d = "MAX_POOL_2D",
    Maximum = "MAXIMUM",
    Mean = "MEAN",
    Minimum = "MINIMUM",
    MirrorPad = "MIRROR_PAD",
    Mul = "MUL",
    Neg = "NEG",
    Pack = "PACK",
    Pad = "PAD",
    PadV2 = "PADV2",
    Prelu = "PRELU",
    Quantize = "QUANTIZE",
    ReduceMax = "REDUCE_MAX",
    Relu = "RELU",
    Relu6 = "RELU6",
    ReluN1To1 = "RELU_N1_TO_1",
    Reshape = "RESHAPE",
    ResizeBilinear = "RESIZE_BILINEAR",
    ResizeNearestNeighbor = "RESIZE_NEAREST_NEIGHBOR",
    Rsqrt = "RSQRT",
    Shape = "SHAPE",
    Slice = "SLICE",
    Softmax = "SOFTMAX",
    SpaceToDepth = "SPACE_TO_DEPTH",
    Split = "SPLIT",
    SplitV = "SPLIT_V",
    Sqrt = "SQRT",
    Square = "SQUARE",
    SquaredDifference = "SQUARED_DIFFERENCE",
    Squeeze = "SQUEEZE",
    StridedSlice = "STRIDED_SLICE",
    Sub = "SUB",
    Sum = "SUM",
    Svdf = "SVDF",
    Tanh = "TANH",
    Transpose = "TRANSPOSE",
    TransposeConv = "TRANSPOSE_CONV",
    UnidirectionalSequenceLstm = "UNIDIRECTIONAL_SEQUENCE_LSTM",
    Unpack = "UNPACK",
}

impl Builtin {
    /// Its name in the TensorFlow Lite schema (`CONV_2D`).
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(b, _, _)| *b == self)
            .map_or("", |(_, name, _)| name)
    }

    /// The operator with schema name `name`, if it is one of these.
    pub fn from_name(name: &str) -> Option<Builtin> {
        Self::ALL
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(b, _, _)| *b)
    }
}

/// The operator of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// A TensorFlow Lite built-in operator listed in [`Builtin`].
    Builtin(Builtin),
    /// Any other operator, by the name the model gives it: a custom operator, a built-in
    /// not listed, or an operator of usmp's JSON IR.
    Named(&'static str),
}

impl Op {
    /// Its name as the model file writes it.
    pub fn name(self) -> &'static str {
        match self {
            Op::Builtin(b) => b.name(),
            Op::Named(name) => name,
        }
    }
}

impl core::fmt::Display for Op {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Declares [`ElementType`] with each variant's schema number, name and size, once.
macro_rules! element_types {
    ($($variant:ident = $code:literal, $name:literal, $size:expr;)*) => {
        /// The element type of a tensor: the TensorFlow Lite schema's `TensorType`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ElementType {
            $(
                #[doc = concat!("`", $name, "` (", stringify!($code), ").")]
                $variant,
            )*
            /// Any other type, by its schema number.
            Other(u8),
        }

        impl ElementType {
            /// The type with the schema's `TensorType` number `code`.
            pub const fn from_code(code: u8) -> Self {
                match code {
                    $($code => ElementType::$variant,)*
                    other => ElementType::Other(other),
                }
            }

            /// Its schema number.
            pub const fn code(self) -> u8 {
                match self {
                    $(ElementType::$variant => $code,)*
                    ElementType::Other(code) => code,
                }
            }

            /// Its name in the schema (`INT8`); `None` for a number the schema lacks.
            pub const fn name(self) -> Option<&'static str> {
                match self {
                    $(ElementType::$variant => Some($name),)*
                    ElementType::Other(_) => None,
                }
            }

            /// Bytes per element; `None` for the types without a fixed size (strings,
            /// resources, variants, packed int4) and numbers the schema lacks.
            pub const fn size(self) -> Option<usize> {
                match self {
                    $(ElementType::$variant => $size,)*
                    ElementType::Other(_) => None,
                }
            }
        }
    };
}

element_types! {
    Float32 = 0, "FLOAT32", Some(4);
    Float16 = 1, "FLOAT16", Some(2);
    Int32 = 2, "INT32", Some(4);
    UInt8 = 3, "UINT8", Some(1);
    Int64 = 4, "INT64", Some(8);
    Bool = 6, "BOOL", Some(1);
    Int16 = 7, "INT16", Some(2);
    Int8 = 9, "INT8", Some(1);
    Float64 = 10, "FLOAT64", Some(8);
    UInt32 = 15, "UINT32", Some(4);
    UInt16 = 16, "UINT16", Some(2);
    // The types without a kernel anywhere come last, so the common ones keep the
    // discriminants firmware compares against.
    String = 5, "STRING", None;
    Complex64 = 8, "COMPLEX64", Some(8);
    Complex128 = 11, "COMPLEX128", Some(16);
    UInt64 = 12, "UINT64", Some(8);
    Resource = 13, "RESOURCE", None;
    Variant = 14, "VARIANT", None;
    Int4 = 17, "INT4", None;
}

impl core::fmt::Display for ElementType {
    /// The schema's name, or `type N` for a number it lacks.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "type {}", self.code()),
        }
    }
}

/// Quantization scales: `f32`s, or the same as little-endian bytes (how generated code
/// keeps long per-channel lists: one binary file instead of a literal per value).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scales {
    /// The values.
    F32(&'static [f32]),
    /// Four little-endian bytes per value.
    LittleEndian(&'static [u8]),
}

impl Scales {
    /// How many there are.
    pub const fn len(&self) -> usize {
        match self {
            Scales::F32(v) => v.len(),
            Scales::LittleEndian(b) => b.len() / 4,
        }
    }

    /// Whether there are none.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Scale `k`.
    pub fn get(&self, k: usize) -> Option<f32> {
        match self {
            Scales::F32(v) => v.get(k).copied(),
            Scales::LittleEndian(b) => {
                let bytes = b.get(k.checked_mul(4)?..k.checked_mul(4)?.checked_add(4)?)?;
                Some(f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
            }
        }
    }

    /// Every scale, in order.
    pub fn iter(&self) -> impl Iterator<Item = f32> + '_ {
        (0..self.len()).filter_map(|k| self.get(k))
    }
}

/// `bytes[start..start + len]` in a `const`: how generated code cuts each tensor's scales
/// out of one included file. Out of range stops the build.
pub const fn slice(bytes: &'static [u8], start: usize, len: usize) -> &'static [u8] {
    bytes.split_at(start).1.split_at(len).0
}

/// Affine quantization of a tensor: `real = scale * (q - zero_point)`, per tensor (one
/// entry) or per channel along `dimension`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quantization {
    /// Scales, one per channel or one for the tensor.
    pub scale: Scales,
    /// Zero points, as many as scales.
    pub zero_point: &'static [i64],
    /// The channel dimension, for per-channel quantization.
    pub dimension: u32,
}

/// What a kernel needs to know of a tensor besides its bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tensor {
    /// Its element type.
    pub element: ElementType,
    /// Its shape, outermost dimension first.
    pub shape: &'static [i32],
    /// Its quantization, if it is quantized.
    pub quantization: Option<Quantization>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &(b, name, _) in Builtin::ALL {
            assert_eq!(b.name(), name);
            assert_eq!(Builtin::from_name(name), Some(b));
        }
        assert_eq!(Builtin::from_name("conv2d"), None);
        assert_eq!(Op::Named("conv2d").name(), "conv2d");
        assert_eq!(Op::Builtin(Builtin::Conv2d).name(), "CONV_2D");
    }

    #[test]
    fn scales_read_the_same_either_way() {
        const BYTES: &[u8] = &[0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64];
        let le = Scales::LittleEndian(slice(BYTES, 4, 8));
        assert_eq!(le.len(), 2);
        assert_eq!(le.get(0), Some(2.0));
        assert_eq!(le.get(1), Some(3.0));
        assert_eq!(le.get(2), None);
        let f = Scales::F32(&[2.0, 3.0]);
        assert!(le.iter().eq(f.iter()));
    }

    #[test]
    fn element_sizes() {
        assert_eq!(ElementType::from_code(9), ElementType::Int8);
        assert_eq!(ElementType::from_code(0), ElementType::Float32);
        assert_eq!(ElementType::from_code(5), ElementType::String);
        assert_eq!(ElementType::from_code(200), ElementType::Other(200));
        assert_eq!(ElementType::Int8.size(), Some(1));
        assert_eq!(ElementType::Float32.size(), Some(4));
        assert_eq!(ElementType::String.size(), None);
        assert_eq!(ElementType::Other(200).size(), None);
        for code in 0..=u8::MAX {
            assert_eq!(ElementType::from_code(code).code(), code);
        }
    }

    #[test]
    fn element_names() {
        extern crate std;
        use std::string::ToString;
        assert_eq!(ElementType::Int8.to_string(), "INT8");
        assert_eq!(ElementType::Other(200).to_string(), "type 200");
    }
}
