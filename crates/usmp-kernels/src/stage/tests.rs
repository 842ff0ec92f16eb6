//! A stage's output equals its calls run whole, on random chains; each row is computed
//! once; a line buffer one row short is refused, and run anyway gives other bytes.

extern crate std;

use std::vec;
use std::vec::Vec;

use super::{Io, Part, Stage, Step, line_buffer, run, run_over, scratch_bytes, stream, window};
use crate::overlap::tests::Rng;
use crate::params::{Conv, Int, Kernel, Pool, Requantize};
use crate::{conv, pool, quantize};

static MULTIPLIERS: [i32; 8] = [
    1 << 30,
    1_500_000_000,
    1 << 29,
    2_000_000_000,
    1_234_567_890,
    1 << 30,
    1_900_000_000,
    1_100_000_000,
];
static SHIFTS: [i32; 8] = [-3, -4, -2, -5, -3, -4, -6, -3];

/// TFLite's output size, or `None` when the window does not fit.
fn size(n: usize, f: usize, s: usize, d: usize, p: usize) -> Option<usize> {
    let reach = d * (f - 1) + 1;
    (n + 2 * p >= reach).then(|| (n + 2 * p - reach) / s + 1)
}

/// One random call reading a tensor of `shape`, with its weights; `None` when the drawn
/// window does not fit the input.
fn part(rng: &mut Rng, shape: [usize; 4]) -> Option<(Kernel<'static>, Vec<Vec<u8>>)> {
    let [_, h, w, c] = shape;
    let f = [1 + rng.below(3), 1 + rng.below(3)];
    let stride = [1 + rng.below(2), 1 + rng.below(2)];
    let padding = [rng.below(f[0]), rng.below(f[1])];
    let leak = |p: Conv<'static>| -> &'static Conv<'static> {
        std::boxed::Box::leak(std::boxed::Box::new(p))
    };
    let bytes = |rng: &mut Rng, n: usize| (0..n).map(|_| rng.below(256) as u8).collect::<Vec<u8>>();
    match rng.below(6) {
        kind @ (0 | 1) => {
            let dilation = [1 + rng.below(2), 1 + rng.below(2)];
            let out_h = size(h, f[0], stride[0], dilation[0], padding[0])?;
            let out_w = size(w, f[1], stride[1], dilation[1], padding[1])?;
            let (filter, out_c, m) = if kind == 0 {
                let o = 1 + rng.below(8);
                ([o, f[0], f[1], c], o, 1)
            } else {
                let m = 1 + rng.below(3);
                ([1, f[0], f[1], c * m], c * m, m)
            };
            let channels = out_c.min(8);
            let p = leak(Conv {
                input: shape,
                filter,
                output: [1, out_h, out_w, out_c],
                stride,
                dilation,
                padding,
                depth_multiplier: m,
                input_offset: rng.below(20) as i32 - 10,
                output_offset: rng.below(20) as i32 - 10,
                activation: [-128 + rng.below(30) as i32, 127],
                bias: rng.below(3) > 0,
                multipliers: if channels == out_c {
                    &MULTIPLIERS[..channels]
                } else {
                    &MULTIPLIERS[..1]
                },
                shifts: if channels == out_c {
                    &SHIFTS[..channels]
                } else {
                    &SHIFTS[..1]
                },
            });
            let mut weights = vec![bytes(rng, filter.iter().product())];
            if p.bias {
                weights.push(bytes(rng, 4 * out_c));
            }
            let kernel = if kind == 0 {
                Kernel::Conv2d(p)
            } else {
                Kernel::DepthwiseConv2d(p)
            };
            Some((kernel, weights))
        }
        kind @ (2 | 3) => {
            let out_h = size(h, f[0], stride[0], 1, padding[0])?;
            let out_w = size(w, f[1], stride[1], 1, padding[1])?;
            let p: &'static Pool = std::boxed::Box::leak(std::boxed::Box::new(Pool {
                input: shape,
                output: [1, out_h, out_w, c],
                window: f,
                stride,
                padding,
                activation: [-128, 127 - rng.below(30) as i32],
            }));
            let kernel = if kind == 2 {
                Kernel::MaxPool2d(p)
            } else {
                Kernel::AveragePool2d(p)
            };
            Some((kernel, Vec::new()))
        }
        5 => {
            // An input scale of about 0.1, as prepare gives it.
            let p = std::boxed::Box::leak(std::boxed::Box::new(crate::params::Sigmoid {
                elements: h * w * c,
                input_zero: rng.below(20) as i32 - 10,
                input_range_radius: 120,
                input_multiplier: 1_717_986_918,
                input_left_shift: 24,
            }));
            let kernel = match rng.below(2) {
                0 => Kernel::Logistic(p),
                _ => Kernel::Tanh(p),
            };
            Some((kernel, Vec::new()))
        }
        _ => {
            let p = std::boxed::Box::leak(std::boxed::Box::new(Requantize {
                elements: h * w * c,
                from: Int::I8,
                to: Int::I8,
                input_zero: rng.below(10) as i32 - 5,
                output_zero: rng.below(10) as i32 - 5,
                multiplier: 1_600_000_000,
                shift: 0,
                clamp: [-100, 127],
            }));
            Some((Kernel::Relu(p), Vec::new()))
        }
    }
}

/// The output shape of `kernel` reading `shape`.
fn output_of(kernel: &Kernel<'_>, shape: [usize; 4]) -> [usize; 4] {
    match kernel {
        Kernel::Conv2d(p) | Kernel::DepthwiseConv2d(p) => p.output,
        Kernel::MaxPool2d(p) | Kernel::AveragePool2d(p) => p.output,
        _ => shape,
    }
}

/// `kernel` run whole.
fn whole(kernel: &Kernel<'_>, x: &[u8], weights: &[Vec<u8>], out: &mut [u8]) {
    let w = |k: usize| weights.get(k).map_or(&[][..], |v| &v[..]);
    match kernel {
        Kernel::Conv2d(p) => conv::conv2d(p, x, w(0), w(1), out, &mut crate::work::tests::any()),
        Kernel::DepthwiseConv2d(p) => {
            conv::depthwise_conv2d(p, x, w(0), w(1), out, &mut crate::work::tests::any())
        }
        Kernel::MaxPool2d(p) => pool::max_pool2d(p, x, out),
        Kernel::AveragePool2d(p) => pool::average_pool2d(p, x, out),
        Kernel::Relu(p) => quantize::requantize(p, x, out),
        Kernel::Logistic(p) => crate::pointwise::logistic(p, x, out),
        Kernel::Tanh(p) => crate::pointwise::tanh(p, x, out),
        _ => unreachable!(),
    }
    .unwrap();
}

/// A random chain: its input, its stage (rings as its readers' `Step::reach` says), the stage call's
/// inputs after input 0, and the bytes the calls give run whole.
struct Chain {
    input: Vec<u8>,
    parts: Vec<Part<'static>>,
    inputs: Vec<Vec<u8>>,
    expected: Vec<u8>,
}

fn chain(seed: u64) -> Option<Chain> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut shape = [1, 1 + rng.below(12), 1 + rng.below(9), 1 + rng.below(6)];
    let input: Vec<u8> = (0..shape.iter().product())
        .map(|_| rng.below(256) as u8)
        .collect();
    let (mut parts, mut inputs) = (Vec::new(), vec![Vec::new()]);
    let mut x = input.clone();
    for _ in 0..1 + rng.below(4) {
        let (kernel, weights) = part(&mut rng, shape)?;
        let output = output_of(&kernel, shape);
        let mut y = vec![0u8; output.iter().product()];
        whole(&kernel, &x, &weights, &mut y);
        if let Some(last) = parts.last_mut() {
            let last: &mut Part<'static> = last;
            last.rows = Step::of(&kernel, 0).unwrap().reach;
        }
        let at = if weights.is_empty() { 0 } else { inputs.len() };
        inputs.extend(weights);
        parts.push(Part {
            kernel,
            output,
            weights: at,
            rows: 0,
        });
        (shape, x) = (output, y);
    }
    Some(Chain {
        input,
        parts,
        inputs,
        expected: x,
    })
}

impl Chain {
    /// The stage's output, and how often each part's rows were computed.
    fn streamed(&self, checked: bool) -> (Result<Vec<u8>, crate::Error>, Vec<Vec<u32>>) {
        let stage = Stage { parts: &self.parts };
        let mut scratch = vec![0x5Au8; scratch_bytes(&stage)];
        let mut out = vec![0u8; self.expected.len()];
        let mut counts: Vec<Vec<u32>> = self.parts.iter().map(|p| vec![0; p.output[1]]).collect();
        let mut inputs: Vec<&[u8]> = self.inputs.iter().map(|v| &v[..]).collect();
        inputs[0] = &self.input;
        let done = if checked {
            run(&stage, &inputs, &mut scratch, &mut out)
        } else {
            let io = Io::Apart {
                input: &self.input,
                output: &mut out,
            };
            stream(&stage, io, &inputs[1..], &mut scratch, |j, r| {
                counts[j][r] += 1
            })
        };
        (done.map(|()| out), counts)
    }
}

#[test]
fn a_stage_gives_its_calls_bytes_computing_each_row_once() {
    let (mut ran, mut long) = (0, 0);
    for seed in 0..3_000 {
        let Some(chain) = chain(seed) else { continue };
        let (out, counts) = chain.streamed(false);
        assert_eq!(
            out.unwrap(),
            chain.expected,
            "seed {seed}: {:?}",
            chain.parts
        );
        for (j, c) in counts.iter().enumerate() {
            assert!(
                c.iter().all(|&n| n == 1),
                "seed {seed}: part {j} rows computed {c:?}"
            );
        }
        assert_eq!(
            chain.streamed(true).0.unwrap(),
            chain.expected,
            "seed {seed}"
        );
        ran += 1;
        long += usize::from(chain.parts.len() >= 3);
    }
    assert!(
        ran > 1_000 && long > 300,
        "{ran} chains, {long} of 3 or more parts"
    );
}

#[test]
fn a_line_buffer_one_row_short_is_refused_and_would_be_wrong() {
    let mut differed = 0;
    for seed in 0..3_000 {
        let Some(mut chain) = chain(seed) else {
            continue;
        };
        // The first line buffer whose reader's window spans two rows or more of it.
        let Some(j) = (0..chain.parts.len().saturating_sub(1)).find(|&j| {
            let p = &chain.parts[j];
            p.rows >= 2 && p.rows <= p.output[1]
        }) else {
            continue;
        };
        chain.parts[j].rows -= 1;
        let (checked, _) = chain.streamed(true);
        assert!(checked.is_err(), "seed {seed}: a short line buffer was run");
        let (out, _) = chain.streamed(false);
        differed += usize::from(out.unwrap() != chain.expected);
    }
    assert!(
        differed > 200,
        "only {differed} chains differed with a short line buffer"
    );
}

#[test]
fn line_buffers_are_their_rows_of_the_tensor() {
    assert_eq!(line_buffer(3, [1, 48, 48, 8]), 3 * 48 * 8);
    assert_eq!(line_buffer(5, [1, 2, 4, 3]), 2 * 4 * 3);
}

impl Chain {
    /// The stage run over one region, its output `shift` bytes from its input: the
    /// output's bytes, or the error.
    fn over(&self, shift: isize, checked: bool) -> Result<Vec<u8>, crate::Error> {
        let stage = Stage { parts: &self.parts };
        let (input_at, output_at) = ((-shift).max(0) as usize, shift.max(0) as usize);
        let (n, m) = (self.input.len(), self.expected.len());
        let mut region = vec![0x3Cu8; (input_at + n).max(output_at + m)];
        region[input_at..input_at + n].copy_from_slice(&self.input);
        let shared = usmp::Shared {
            output: 0,
            input_at,
            input_len: n,
            output_at,
            output_len: m,
        };
        let mut scratch = vec![0x5Au8; scratch_bytes(&stage)];
        let weights: Vec<&[u8]> = self.inputs[1..].iter().map(|v| &v[..]).collect();
        if checked {
            run_over(&stage, &mut region, &shared, &weights, &mut scratch)?;
        } else {
            let (input, output) = (input_at..input_at + n, output_at..output_at + m);
            let io = Io::Over {
                region: &mut region,
                input,
                output,
            };
            stream(&stage, io, &weights, &mut scratch, |_, _| ())?;
        }
        Ok(region[output_at..output_at + m].to_vec())
    }
}

#[test]
fn a_stage_over_its_input_gives_its_bytes_up_to_its_window_and_not_past_it() {
    let (mut ran, mut tight) = (0, 0);
    for seed in 0..3_000 {
        let Some(chain) = chain(seed) else { continue };
        let w = window(&Stage {
            parts: &chain.parts,
        })
        .unwrap();
        let Some([lo, hi]) = w.shifts() else { continue };
        // Every shift the window allows, from apart to the highest.
        for shift in [lo, (lo + hi) / 2, hi] {
            let got = chain.over(shift as isize, true);
            assert_eq!(
                got.unwrap(),
                chain.expected,
                "seed {seed} shift {shift} of {w:?}"
            );
        }
        ran += 1;
        // One byte past it is refused, and run anyway it is wrong on some chains.
        if hi + 1 < w.input as i64 {
            assert!(chain.over(hi as isize + 1, true).is_err(), "seed {seed}");
            tight += usize::from(chain.over(hi as isize + 1, false).unwrap() != chain.expected);
        }
    }
    assert!(
        ran > 500 && tight > 100,
        "{ran} chains over their input, {tight} wrong past it"
    );
}

#[test]
fn parts_whose_shapes_disagree_are_refused_not_run() {
    let mut refused = 0;
    for seed in 0..500 {
        let Some(mut chain) = chain(seed) else {
            continue;
        };
        if chain.parts.len() < 2 {
            continue;
        }
        // The first part's output said one row taller than what the second reads.
        chain.parts[0].output[1] += 1;
        chain.expected.clear();
        let (got, _) = chain.streamed(true);
        assert!(got.is_err(), "seed {seed}: disagreeing shapes were run");
        refused += 1;
    }
    assert!(refused > 100, "only {refused} chains of two parts or more");
}
