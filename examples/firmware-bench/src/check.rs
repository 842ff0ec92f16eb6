//! The convolutions' fast paths on this core against a reference written here, on random
//! shapes: the kernels' own tests compare every path with the general loops on the host,
//! where the inline assembly (`usmp_kernels`' `dsp`) runs as its portable Rust form; the
//! bench's models run the assembly but only on their own shapes. Here it runs on shapes
//! none of the models has (odd depths, short last blocks, one input channel, borders,
//! per-tensor lists, narrow clamps, left shifts), and every output byte must equal the
//! reference's, the same arithmetic as TensorFlow Lite Micro's reference kernels (one
//! multiply-accumulate at a time, then `MultiplyByQuantizedMultiplier`); and again over
//! its input, the output placed as close over it as the kernel's window allows. Then
//! random ADD and MUL calls the same way ([`elementwise`]).

use usmp::Shared;
use usmp_kernels::conv::{conv2d, conv2d_over, depthwise_conv2d, window};

/// Kernel work for one call the checks draw (`usmp_kernels::work`; Helium's depthwise
/// past 16 taps keeps the most, 3,520 bytes; each case checks its call's need fits),
/// aligned as a plan aligns it.
#[repr(C, align(8))]
struct Work([u8; WORK]);

/// The bytes of [`Work`].
const WORK: usize = 4096;

impl Work {
    fn new() -> Self {
        Work([0; WORK])
    }
}
use usmp_kernels::elementwise::{add, mul};
use usmp_kernels::fixed::multiply_by_quantized_multiplier;
use usmp_kernels::work::{self, Path};
use usmp_kernels::{Add, Broadcast, Conv, Kernel, Mul};

/// A convolution kernel's entry point.
type Run =
    fn(&Conv<'_>, &[u8], &[u8], &[u8], &mut [u8], &mut [u8]) -> Result<(), usmp_kernels::Error>;

/// The most bytes of any one tensor here.
const MOST: usize = 2048;

/// A small xorshift generator: the same cases on every run.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }

    /// A value in `0..n` (`n` at least 1).
    fn below(&mut self, n: usize) -> usize {
        self.next() as usize % n
    }
}

/// Output element `(y, x, oc)` by the reference: every tap inside the input, one at a
/// time, then requantized as TFLite does.
fn reference(
    p: &Conv<'_>,
    depthwise: bool,
    input: &[u8],
    filter: &[u8],
    bias: &[u8],
) -> [u8; MOST] {
    let [_, in_h, in_w, in_c] = p.input;
    let [_, out_h, out_w, out_c] = p.output;
    let [_, f_h, f_w, _] = p.filter;
    let mut out = [0u8; MOST];
    let int8 = |b: u8| i32::from(b as i8);
    for (o, out) in out.iter_mut().enumerate().take(out_h * out_w * out_c) {
        let (y, x, oc) = (o / (out_w * out_c), o / out_c % out_w, o % out_c);
        let mut acc = 0i32;
        for fy in 0..f_h {
            for fx in 0..f_w {
                let iy = (y * p.stride[0] + fy * p.dilation[0]) as isize - p.padding[0] as isize;
                let ix = (x * p.stride[1] + fx * p.dilation[1]) as isize - p.padding[1] as isize;
                if iy < 0 || ix < 0 || iy as usize >= in_h || ix as usize >= in_w {
                    continue;
                }
                let at = (iy as usize * in_w + ix as usize) * in_c;
                let tap = fy * f_w + fx;
                let products = if depthwise {
                    let ic = oc / p.depth_multiplier;
                    int8(filter[tap * out_c + oc]) * (int8(input[at + ic]) + p.input_offset)
                } else {
                    (0..in_c).fold(0i32, |s, ic| {
                        let w = int8(filter[(oc * f_h * f_w + tap) * in_c + ic]);
                        s.wrapping_add(w * (int8(input[at + ic]) + p.input_offset))
                    })
                };
                acc = acc.wrapping_add(products);
            }
        }
        if p.bias {
            let b = &bias[4 * oc..4 * oc + 4];
            acc = acc.wrapping_add(i32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        }
        let pick = |list: &[i32]| if list.len() == 1 { list[0] } else { list[oc] };
        let v = multiply_by_quantized_multiplier(acc, pick(p.multipliers), pick(p.shifts));
        let [lo, hi] = p.activation;
        *out = v.wrapping_add(p.output_offset).clamp(lo, hi) as i8 as u8;
    }
    out
}

/// The call run over its input: the output placed at the highest shift the kernel's
/// window allows (no further than the input's length), in one region with the input, as a
/// plan that writes outputs over the inputs they consume places them. Whether its outputs
/// equal `want`; `None` where the window certifies no shift or the region would not fit.
fn over_input(
    p: &Conv<'_>,
    depthwise: bool,
    (input, filter, bias): (&[u8], &[u8], &[u8]),
    want: &[u8],
) -> Option<bool> {
    let most = window(p, depthwise, 1).most;
    if most == isize::MIN {
        return None;
    }
    let shift = most.min(input.len() as isize);
    let (input_at, output_at) = match usize::try_from(shift) {
        Ok(up) => (0, up),
        Err(_) => (shift.unsigned_abs(), 0),
    };
    let mut region = [0u8; 2 * MOST];
    let len = (input_at + input.len()).max(output_at + want.len());
    if len > region.len() {
        return None;
    }
    region[input_at..input_at + input.len()].copy_from_slice(input);
    let shared = Shared {
        output: 0,
        input_at,
        input_len: input.len(),
        output_at,
        output_len: want.len(),
    };
    let region = &mut region[..len];
    let done = if depthwise {
        conv2d_over::<true>(p, region, &shared, filter, bias, &mut Work::new().0)
    } else {
        conv2d_over::<false>(p, region, &shared, filter, bias, &mut Work::new().0)
    };
    Some(done.is_ok() && region[output_at..output_at + want.len()] == *want)
}

/// The shapes of one case: 1x1 convolutions (the matrix products), small kxk ones (by
/// patches), depthwise of multiplier 1 (rows along the channels) and of more (the
/// multiplier's walk).
fn shape(rng: &mut Rng, kind: usize) -> ([usize; 4], [usize; 4], [usize; 2], [usize; 2], usize) {
    let (f, stride, padding) = match kind {
        0 => (1, 1, 0),
        _ => {
            let f = 1 + rng.below(3);
            (f, 1 + rng.below(2), rng.below(f))
        }
    };
    let (in_c, m) = match kind {
        0 => (1 + rng.below(48), 1),
        1 => (1 + rng.below(6), 1),
        2 => (1 + rng.below(70), 1),
        _ => (1 + rng.below(3), 2 + rng.below(8)),
    };
    let out_c = match kind {
        // Now and then past 64 channels: Helium's block of sums.
        0 if rng.below(4) == 0 => 1 + rng.below(90),
        0 => 1 + rng.below(40),
        1 => 1 + rng.below(12),
        _ => in_c * m,
    };
    let (in_h, in_w) = (1 + rng.below(6), 1 + rng.below(6));
    let size = |n: usize| ((n + 2 * padding).saturating_sub(f)) / stride + 1;
    let filter = if kind < 2 {
        [out_c, f, f, in_c]
    } else {
        [1, f, f, out_c]
    };
    (
        [1, in_h, in_w, in_c],
        filter,
        [stride, stride],
        [padding, padding],
        size(in_h) * size(in_w) * out_c,
    )
}

/// Draws `cases` random convolutions (a quarter of each kind), runs those whose tensors
/// fit through `usmp_kernels` and compares each with the reference: the count run, or the
/// first case (and its kind) that differs or fails. Each is run apart and, where the
/// kernel certifies a shift, over its input: the counts run, and run over their inputs.
pub fn convolutions(cases: usize) -> Result<(usize, usize), (usize, usize)> {
    let mut rng = Rng(0x2545_F491);
    let (mut ran, mut over) = (0, 0);
    for case in 0..cases {
        let kind = case % 4;
        let (input_shape, filter_shape, stride, padding, outputs) = shape(&mut rng, kind);
        let [_, in_h, in_w, in_c] = input_shape;
        let out_c = if kind < 2 {
            filter_shape[0]
        } else {
            filter_shape[3]
        };
        let filter_len = filter_shape.iter().product::<usize>();
        let reach = |n: usize, k: usize| n + 2 * padding[k] >= filter_shape[1 + k];
        if !reach(in_h, 0) || !reach(in_w, 1) {
            continue;
        }
        if in_h * in_w * in_c > MOST || filter_len > MOST || outputs > MOST {
            continue;
        }
        let (out_h, out_w) = (
            (in_h + 2 * padding[0] - filter_shape[1]) / stride[0] + 1,
            (in_w + 2 * padding[1] - filter_shape[2]) / stride[1] + 1,
        );
        let mut bytes = [0u8; 3 * MOST];
        for b in bytes.iter_mut() {
            *b = rng.next() as u8;
        }
        // Half of them in the form every convolution TFLite writes has (and the kernels'
        // fastest paths take): per-channel lists of right shifts, a bias, int8's clamp;
        // the bias small and the shifts such that the outputs vary, so a wrong sum shows.
        let tflite = rng.below(2) == 0;
        if tflite {
            for b in bytes[2 * MOST..].chunks_exact_mut(4) {
                b.copy_from_slice(&(rng.below(8192) as i32 - 4096).to_le_bytes());
            }
        }
        let (input, rest) = bytes.split_at(MOST);
        let (filter, bias) = rest.split_at(MOST);
        let (mut multipliers, mut shifts) = ([0i32; 256], [0i32; 256]);
        for (m, s) in multipliers.iter_mut().zip(shifts.iter_mut()) {
            *m = (1 << 30) + (rng.next() >> 2) as i32;
            // Mostly right shifts, as every model's; now and then none or a left one.
            *s = match rng.below(16) {
                _ if tflite => -4 - rng.below(14) as i32,
                0 => 0,
                1 => 1,
                _ => -1 - rng.below(12) as i32,
            };
        }
        let per_channel = tflite || rng.below(8) != 0;
        let lists = if per_channel { out_c } else { 1 };
        let lo = if rng.below(4) == 0 && !tflite {
            rng.below(100) as i32 - 128
        } else {
            -128
        };
        let hi = if rng.below(4) == 0 && !tflite {
            100
        } else {
            127
        };
        let p = Conv {
            input: input_shape,
            filter: filter_shape,
            output: [1, out_h, out_w, out_c],
            stride,
            dilation: [1, 1],
            padding,
            depth_multiplier: if kind < 2 { 1 } else { out_c / in_c },
            input_offset: rng.below(256) as i32 - 127,
            output_offset: rng.below(256) as i32 - 128,
            activation: [lo, hi],
            bias: tflite || rng.below(8) != 0,
            multipliers: &multipliers[..lists],
            shifts: &shifts[..lists],
        };
        let (input, filter) = (&input[..in_h * in_w * in_c], &filter[..filter_len]);
        let bias = &bias[..4 * out_c];
        let mut out = [0u8; MOST];
        let (run, kernel) = match kind < 2 {
            true => (conv2d as Run, Kernel::Conv2d(&p)),
            false => (depthwise_conv2d as Run, Kernel::DepthwiseConv2d(&p)),
        };
        if work::bytes(&kernel, Path::TARGET) > WORK {
            return Err((case, kind));
        }
        let done = run(
            &p,
            input,
            filter,
            bias,
            &mut out[..outputs],
            &mut Work::new().0,
        );
        let want = reference(&p, kind >= 2, input, filter, bias);
        if done.is_err() || out[..outputs] != want[..outputs] {
            return Err((case, kind));
        }
        match over_input(&p, kind >= 2, (input, filter, bias), &want[..outputs]) {
            Some(false) => return Err((case, kind)),
            Some(true) => over += 1,
            None => {}
        }
        ran += 1;
    }
    Ok((ran, over))
}

/// Draws `cases` random ADD calls of the form TFLite's int8 ADD has (both inputs of the
/// output's shape; a left shift of 20; multipliers in `[2^30, 2^31)`, the larger input's
/// shift 0 now and then, right shifts otherwise; any offsets and clamp), 1 to 300
/// elements, and a MUL of the same inputs, and compares each output with TFLite's
/// `AddElementwise` and `MulElementwise` computed here: the count run, or the first case
/// that differs or fails. On a Helium build this is where the vector loops meet lengths
/// and scales the models do not have.
pub fn elementwise(cases: usize) -> Result<usize, usize> {
    let mut rng = Rng(0x9E37_79B9);
    for case in 0..cases {
        let n = 1 + rng.below(300);
        let mut bytes = [0u8; 600];
        for b in bytes.iter_mut() {
            *b = rng.next() as u8;
        }
        let (first, second) = (&bytes[..n], &bytes[300..300 + n]);
        let mut scale = |most: usize| {
            let m = (1 << 30) + (rng.next() >> 2) as i32;
            let s = if rng.below(4) == 0 {
                0
            } else {
                -1 - rng.below(most) as i32
            };
            [m, s]
        };
        let (a, b, o, product) = (scale(12), scale(12), scale(31), scale(31));
        let lo = rng.below(128) as i32 - 128;
        let p = Add {
            shape: Broadcast {
                output: [1, 1, 1, n],
                first: [0, 0, 0, 1],
                second: [0, 0, 0, 1],
                first_elements: n,
                second_elements: n,
            },
            first_offset: rng.below(256) as i32 - 128,
            second_offset: rng.below(256) as i32 - 128,
            left_shift: 20,
            first: a,
            second: b,
            output: o,
            output_offset: rng.below(256) as i32 - 128,
            activation: [lo, lo + rng.below((128 - lo) as usize) as i32],
        };
        let mut out = [0u8; 300];
        if add(&p, first, second, &mut out[..n], &mut Work::new().0).is_err() {
            return Err(case);
        }
        let int8 = |x: u8| i32::from(x as i8);
        let rescaled = |x: i32, [m, s]: [i32; 2]| multiply_by_quantized_multiplier(x, m, s);
        for k in 0..n {
            let input = |x: u8, offset: i32, by| rescaled((int8(x) + offset) << 20, by);
            let sum = input(first[k], p.first_offset, a).wrapping_add(input(
                second[k],
                p.second_offset,
                b,
            ));
            let v = rescaled(sum, o).wrapping_add(p.output_offset);
            if out[k] != v.clamp(p.activation[0], p.activation[1]) as i8 as u8 {
                return Err(case);
            }
        }
        let q = Mul {
            shape: p.shape,
            first_offset: p.first_offset,
            second_offset: p.second_offset,
            output: product,
            output_offset: p.output_offset,
            activation: p.activation,
        };
        if mul(&q, first, second, &mut out[..n], &mut Work::new().0).is_err() {
            return Err(case);
        }
        for k in 0..n {
            let x = (int8(first[k]) + q.first_offset) * (int8(second[k]) + q.second_offset);
            let v = rescaled(x, product).wrapping_add(q.output_offset);
            if out[k] != v.clamp(q.activation[0], q.activation[1]) as i8 as u8 {
                return Err(case);
            }
        }
    }
    Ok(cases)
}
