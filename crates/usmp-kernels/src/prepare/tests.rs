//! Prepare's arithmetic against TFLite's, and what it refuses.

use super::*;

#[test]
fn multipliers_are_q31_mantissas_and_exponents() {
    assert_eq!(quantize_multiplier(0.5), Ok((1 << 30, 0)));
    assert_eq!(quantize_multiplier(1.0), Ok((1 << 30, 1)));
    assert_eq!(quantize_multiplier(0.75), Ok((3 << 29, 0)));
    // Just below one the mantissa rounds up to 2^31: halved, and the exponent grows.
    assert_eq!(quantize_multiplier(1.0 - 1e-12), Ok((1 << 30, 1)));
    assert_eq!(
        quantize_multiplier(1e-12),
        Ok((0, 0)),
        "below 2^-31: flushed to zero"
    );
    assert_eq!(quantize_multiplier(0.0), Ok((0, 0)));
    // The largest factor whose shift fits, and the first past it.
    assert_eq!(quantize_multiplier(2f64.powi(29)), Ok((1 << 30, 30)));
    for broken in [2f64.powi(30), 3e38, f64::INFINITY, f64::NAN, -0.5] {
        let e = quantize_multiplier(broken).unwrap_err();
        assert!(e.contains("re-export"), "{broken}: {e}");
    }
    assert_eq!(frexp(f64::MIN_POSITIVE / 4.0), (0.5, -1023));
}

#[test]
fn padding_is_tflites() {
    assert_eq!(padding(true, 49, 10, 2, 1), Ok((25, 4)));
    assert_eq!(padding(true, 40, 8, 2, 1), Ok((20, 3)));
    assert_eq!(padding(false, 40, 8, 2, 1), Ok((17, 0)));
    let larger = padding(false, 3, 5, 1, 1).unwrap_or((9, 9));
    assert_eq!(larger.0, 0, "a filter larger than the input: no output");
    assert!(padding(true, 4, 3, 0, 1).is_err());
}

#[test]
fn activation_ranges_are_in_output_integers() {
    assert_eq!(activation_range(Activation::Relu, 0.5, -10), Ok([-10, 127]));
    assert_eq!(
        activation_range(Activation::Relu6, 0.1, -128),
        Ok([-128, -68])
    );
    assert_eq!(
        activation_range(Activation::ReluN1To1, 1.0 / 64.0, 0),
        Ok([-64, 64])
    );
    assert!(activation_range(Activation::Tanh, 1.0, 0).is_err());
}

/// A float FULLY_CONNECTED with an int8 filter (a hybrid model) is refused, naming
/// the operand; all float, it gets the float kernel with the activation's clamp.
#[test]
fn float_calls_take_float_throughout() {
    let operand = |element, shape| Operand {
        element,
        shape,
        scales: &[0.5],
        zero_points: &[0],
        constant: None,
    };
    let options = Options::FullyConnected {
        activation: Activation::Relu,
        keep_num_dims: false,
    };
    let input = operand(ElementType::Float32, &[1, 4]);
    let output = [operand(ElementType::Float32, &[1, 3])];
    let hybrid = [Some(input), Some(operand(ElementType::Int8, &[3, 4])), None];
    let e = kernel(
        Some(Builtin::FullyConnected),
        &options,
        &hybrid,
        &output,
        |_| (),
    )
    .unwrap_err();
    assert!(e.contains("the filter is Int8"), "{e}");
    let float = [
        Some(input),
        Some(operand(ElementType::Float32, &[3, 4])),
        None,
    ];
    let k = kernel(
        Some(Builtin::FullyConnected),
        &options,
        &float,
        &output,
        |k| match k {
            Kernel::FullyConnectedFloat(p) => Some((p.activation, p.shape.bias)),
            _ => None,
        },
    );
    assert_eq!(k, Ok(Some(([0.0, f32::MAX], false))));
}

/// Prepare over extreme quantization (every scale and zero point of a
/// FULLY_CONNECTED's and a CONV_2D's operands drawn from values that broke it before:
/// -2^31 zero points, 3e38, zero, NaN and infinite scales): never a panic, an error
/// exactly when a value is broken, and when accepted, shifts the kernels can take.
#[test]
fn extreme_quantization_is_refused_never_a_panic() {
    let scales = [
        0.5f32,
        1e-3,
        3e38,
        0.0,
        -0.25,
        f32::NAN,
        f32::INFINITY,
        1e-45,
    ];
    let zeros = [0i64, -128, 127, 128, -129, -(1 << 31), i64::MIN, i64::MAX];
    let weights = [1u8; 4 * 3 * 9];
    let mut accepted = 0;
    let mut refused = 0;
    // A small deterministic generator: every operand's scale and zero point vary.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for case in 0..4000 {
        // Mostly ordinary values, so that whole calls are accepted too.
        let picks: [(f32, i64); 3] = core::array::from_fn(|_| {
            let n = if next(3) == 0 { scales.len() } else { 2 };
            let scale = scales[next(n)];
            let n = if next(3) == 0 { zeros.len() } else { 3 };
            let zero = zeros[next(n)];
            (scale, zero)
        });
        let [(si, zi), (sf, zf), (so, zo)] = picks;
        let good = |s: f32, z: i64| s.is_finite() && s > 0.0 && (-128..=127).contains(&z);
        let all_good = good(si, zi) && good(sf, zf) && good(so, zo);
        let conv = case % 2 == 1;
        let (in_shape, f_shape, out_shape): (&[i32], &[i32], &[i32]) = if conv {
            (&[1, 3, 3, 4], &[3, 3, 3, 4], &[1, 1, 1, 3])
        } else {
            (&[1, 4], &[3, 4], &[1, 3])
        };
        let (si_, zi_, sf_, zf_, so_, zo_) = ([si], [zi], [sf], [zf], [so], [zo]);
        let operand = |shape, scales, zero_points, constant| Operand {
            element: ElementType::Int8,
            shape,
            scales,
            zero_points,
            constant,
        };
        let inputs = [
            Some(operand(in_shape, &si_[..], &zi_[..], None)),
            Some(operand(f_shape, &sf_[..], &zf_[..], Some(&weights[..]))),
            None,
        ];
        let outputs = [operand(out_shape, &so_[..], &zo_[..], None)];
        let (op, options) = if conv {
            let options = Options::Conv2d {
                padding: usmp::Padding::Valid,
                stride: [1, 1],
                dilation: [1, 1],
                activation: Activation::None,
            };
            (Builtin::Conv2d, options)
        } else {
            let options = Options::FullyConnected {
                activation: Activation::None,
                keep_num_dims: false,
            };
            (Builtin::FullyConnected, options)
        };
        let shifts = |k: &Kernel<'_>| match k {
            Kernel::Conv2d(p) => p.shifts.to_vec(),
            Kernel::FullyConnected(p) => p.shifts.to_vec(),
            _ => Vec::new(),
        };
        match kernel(Some(op), &options, &inputs, &outputs, shifts) {
            Ok(shifts) => {
                accepted += 1;
                assert!(all_good, "{op:?} accepted broken {picks:?}: {shifts:?}");
                // One per output channel, each within what the kernels shift by.
                assert_eq!(shifts.len(), if conv { 3 } else { 1 }, "{op:?}");
                for &shift in &shifts {
                    assert!(shift <= MAX_LEFT_SHIFT, "{op:?} {picks:?}: {shifts:?}");
                }
            }
            Err(e) => {
                refused += 1;
                let large = (f64::from(si) * f64::from(sf) / f64::from(so)) >= 2f64.powi(30);
                assert!(!all_good || large, "{op:?} refused {picks:?}: {e}");
                assert!(e.contains("re-export"), "{op:?} {picks:?}: {e}");
            }
        }
    }
    assert!(
        accepted > 100 && refused > 100,
        "{accepted} accepted, {refused} refused"
    );
}

#[test]
fn float_activations_are_reals() {
    assert_eq!(float_activation(Activation::None), Ok([f32::MIN, f32::MAX]));
    assert_eq!(float_activation(Activation::Relu6), Ok([0.0, 6.0]));
    assert_eq!(float_activation(Activation::ReluN1To1), Ok([-1.0, 1.0]));
    // TFLite would leave it unclamped without a word: refused instead.
    assert!(float_activation(Activation::Tanh).is_err());
}
