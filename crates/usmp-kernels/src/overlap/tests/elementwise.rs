//! The element-wise kernels' windows against their traced order, and each kernel over one
//! region at its window's edges against its run apart; one byte past, refused.

use super::*;
use crate::elementwise::{self, Elementwise};
use crate::params::{Add, Affine, Broadcast, Int, Mul, Requantize, Sigmoid};
use crate::pointwise::{self, logistic_of, tanh_of};
use crate::quantize;

type Ran = Result<(), crate::Error>;
/// The kernel over traced input bytes, each output byte stored by the second argument.
type Traced<'a> = &'a dyn Fn(&[Probe<'_>], &mut dyn FnMut(usize, u8));
/// The kernel over an input and an output apart.
type Apart<'a> = &'a dyn Fn(&[u8], &mut [u8]) -> Ran;
/// The kernel over one region holding both.
type Over<'a> = &'a dyn Fn(&mut [u8], &usmp::Shared) -> Ran;

/// One kernel as the test drives it: traced over probes, apart, and over a region.
struct Case<'a> {
    name: &'static str,
    window: Window,
    traced: Traced<'a>,
    apart: Apart<'a>,
    over: Over<'a>,
}

/// The window equals the bound traced from the kernel's reads and writes; at its low
/// end, middle and edge the run over one region writes what the run apart does; one
/// byte past the edge (where input and output still meet) it is refused.
fn check(case: &Case<'_>, input: &[u8], seed: u64) -> bool {
    let log = RefCell::new(Vec::new());
    let probes = probes(input, &log);
    (case.traced)(&probes, &mut |o, _| log.borrow_mut().push(Event::Write(o)));
    let name = case.name;
    assert_eq!(
        case.window.most,
        traced_most(&log.borrow(), 1),
        "{name} seed {seed}"
    );
    let mut apart = vec![0; case.window.output];
    (case.apart)(input, &mut apart).unwrap();
    let run = |shift: i64| {
        let (mut r, shared) = region(input, case.window.output, shift as isize);
        (case.over)(&mut r, &shared).map(|()| r[shared.output()].to_vec())
    };
    let Some([lo, hi]) = case.window.shifts() else {
        return false;
    };
    for shift in [lo, (lo + hi) / 2, hi] {
        assert_eq!(
            run(shift).unwrap(),
            apart,
            "{name} seed {seed} shift {shift}"
        );
    }
    if hi + 1 < case.window.input as i64 {
        assert!(
            matches!(run(hi + 1), Err(crate::Error::Overlap { .. })),
            "{name} seed {seed}: one byte past the window must be refused"
        );
    }
    true
}

fn int(rng: &mut Rng) -> Int {
    [Int::I8, Int::I16, Int::I32][rng.below(3)]
}

fn floats(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|_| (rng.below(4000) as f32 / 50.0 - 40.0).to_le_bytes())
        .collect()
}

#[test]
fn unary_windows_are_the_traced_bound_and_hold_at_their_edges() {
    let mut with_window = 0;
    for seed in 1..=300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let elements = 1 + rng.below(40);
        let requantize = Requantize {
            elements,
            from: int(&mut rng),
            to: int(&mut rng),
            input_zero: rng.below(9) as i32 - 4,
            output_zero: rng.below(9) as i32 - 4,
            multiplier: 1 << 30,
            shift: rng.below(3) as i32 - 1,
            clamp: [-100, 100],
        };
        let sigmoid = Sigmoid {
            elements,
            input_zero: rng.below(20) as i32 - 10,
            input_range_radius: 100,
            input_multiplier: 1 << 30,
            input_left_shift: 2,
        };
        let affine = Affine {
            elements,
            int: int(&mut rng),
            scale: 0.25,
            zero: 3,
        };
        let (r, s, a) = (&requantize, &sigmoid, &affine);
        let cases = [
            Case {
                name: "requantize",
                window: crate::overlap::elementwise_window(elements, r.from.bytes(), r.to.bytes()),
                traced: &|x, put| quantize::requantize_with(r, x, (usize::MAX, put)).unwrap(),
                apart: &|x, out| quantize::requantize(r, x, out),
                over: &|region, shared| quantize::requantize_over(r, region, shared),
            },
            Case {
                name: "logistic",
                window: crate::overlap::elementwise_window(elements, 1, 1),
                traced: &|x, put| {
                    pointwise::sigmoid(s, x, (usize::MAX, put), "l", logistic_of).unwrap()
                },
                apart: &|x, out| pointwise::logistic(s, x, out),
                over: &|region, shared| pointwise::sigmoid_over::<false>(s, region, shared),
            },
            Case {
                name: "tanh",
                window: crate::overlap::elementwise_window(elements, 1, 1),
                traced: &|x, put| {
                    pointwise::sigmoid(s, x, (usize::MAX, put), "t", tanh_of).unwrap()
                },
                apart: &|x, out| pointwise::tanh(s, x, out),
                over: &|region, shared| pointwise::sigmoid_over::<true>(s, region, shared),
            },
            Case {
                name: "dequantize",
                window: pointwise::affine_window(a, false),
                traced: &|x, put| pointwise::dequantize_with(a, x, (usize::MAX, put)).unwrap(),
                apart: &|x, out| pointwise::dequantize(a, x, out),
                over: &|region, shared| pointwise::affine_over::<false>(a, region, shared),
            },
            Case {
                name: "quantize from float",
                window: pointwise::affine_window(a, true),
                traced: &|x, put| pointwise::quantize_with(a, x, (usize::MAX, put)).unwrap(),
                apart: &|x, out| pointwise::quantize(a, x, out),
                over: &|region, shared| pointwise::affine_over::<true>(a, region, shared),
            },
        ];
        for case in &cases {
            let input = match case.name {
                "quantize from float" => floats(&mut rng, elements),
                _ => bytes(&mut rng, case.window.input),
            };
            with_window += usize::from(check(case, &input, seed));
        }
    }
    // Every case with more than one element meets its input somewhere.
    assert!(with_window > 1400, "{with_window}");
}

/// Contiguous strides of `dims`, with 0 where `broadcast` says the input has size 1.
fn strides(dims: [usize; 4], broadcast: [bool; 4]) -> ([usize; 4], usize) {
    let (mut st, mut step) = ([0; 4], 1);
    for k in (0..4).rev() {
        if !broadcast[k] {
            st[k] = step;
            step *= dims[k];
        }
    }
    (st, step)
}

#[test]
fn add_and_mul_write_over_an_input_they_do_not_broadcast() {
    let mut with_window = 0;
    for seed in 1..=300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9FB2_1C65_1E98_DF25));
        let dims = [1, 1 + rng.below(3), 1 + rng.below(4), 1 + rng.below(5)];
        // Input 1 broadcast along some axes one time in four: then it certifies nothing.
        let first_broadcast = [false, rng.below(8) == 0, false, rng.below(8) == 0];
        let second_broadcast = [false, rng.below(2) == 0, rng.below(2) == 0, false];
        let (first, first_elements) = strides(dims, first_broadcast);
        let (second, second_elements) = strides(dims, second_broadcast);
        let shape = Broadcast {
            output: dims,
            first,
            second,
            first_elements,
            second_elements,
        };
        let add = Add {
            shape,
            first_offset: 3,
            second_offset: -7,
            left_shift: 20,
            first: [1 << 30, -1],
            second: [3 << 28, -2],
            output: [1 << 30, -18],
            output_offset: 5,
            activation: [-128, 127],
        };
        let mul = Mul {
            shape,
            first_offset: 3,
            second_offset: -7,
            output: [1 << 30, -6],
            output_offset: -2,
            activation: [-128, 127],
        };
        let second_bytes = bytes(&mut rng, second_elements);
        let (a, m, y) = (&add, &mul, &second_bytes[..]);
        let Some(window) = elementwise::window(&shape) else {
            assert!(
                first_broadcast.contains(&true) && dims[1] * dims[3] > 1,
                "{shape:?}"
            );
            continue;
        };
        let cases = [
            Case {
                name: "add",
                window,
                traced: &|x, put| {
                    elementwise::each(&a.shape, x, y, (usize::MAX, put), |p, q| {
                        a.of::<false>(p, q)
                    })
                    .unwrap()
                },
                apart: &|x, out| elementwise::add(a, x, y, out, &mut crate::work::tests::any()),
                over: &|region, shared| {
                    elementwise::add_over(a, region, shared, y, &mut crate::work::tests::any())
                },
            },
            Case {
                name: "mul",
                window,
                traced: &|x, put| {
                    elementwise::each(&m.shape, x, y, (usize::MAX, put), |p, q| {
                        m.of::<false>(p, q)
                    })
                    .unwrap()
                },
                apart: &|x, out| elementwise::mul(m, x, y, out, &mut crate::work::tests::any()),
                over: &|region, shared| {
                    elementwise::mul_over(m, region, shared, y, &mut crate::work::tests::any())
                },
            },
        ];
        for case in &cases {
            let input = bytes(&mut rng, first_elements);
            with_window += usize::from(check(case, &input, seed));
        }
    }
    assert!(with_window > 300, "{with_window}");
}

/// CONCATENATION over its input 0 (the other inputs apart), along outer steps of 1 to 5
/// and with 1 to 4 inputs: its window is the traced bound and holds at its edges.
#[test]
fn concatenation_writes_over_its_first_input() {
    use crate::params::Concatenation;
    use crate::shape;
    let mut with_window = 0;
    for seed in 1..=300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let inputs = 1 + rng.below(4);
        let parts: Vec<usize> = (0..inputs).map(|_| 1 + rng.below(6)).collect();
        let p = Concatenation {
            outer: 1 + rng.below(5),
            parts: &parts,
        };
        let others: Vec<Vec<u8>> = parts[1..]
            .iter()
            .map(|&part| bytes(&mut rng, p.outer * part))
            .collect();
        let others: Vec<&[u8]> = others.iter().map(Vec::as_slice).collect();
        let case = Case {
            name: "concatenation",
            window: shape::concatenation_window(&p),
            traced: &|x, put| shape::concatenation_with(&p, x, &others, (usize::MAX, put)).unwrap(),
            apart: &|x, out| {
                let all: Vec<&[u8]> = [x].into_iter().chain(others.iter().copied()).collect();
                shape::concatenation(&p, &all, out)
            },
            over: &|region, shared| shape::concatenation_over(&p, region, shared, &others),
        };
        let input = bytes(&mut rng, p.outer * parts[0]);
        with_window += usize::from(check(&case, &input, seed));
    }
    assert!(with_window > 250, "{with_window}");
}
