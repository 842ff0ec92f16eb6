//! Each certified window against the kernel itself: run over a traced input, the reads
//! and writes it makes give the bound [`Window::most`] must equal; run at the window's
//! edge over one region, it writes what it writes apart; one byte past, it refuses.
extern crate std;

use core::cell::RefCell;
use std::vec;
use std::vec::Vec;

use super::{Load, Window};
use crate::conv::{self, conv2d_f32_over, conv2d_over};
use crate::params::{Conv, Float};
use crate::rows::Frame;

/// An input byte that logs its reads.
struct Probe<'a> {
    byte: usize,
    value: u8,
    log: &'a RefCell<Vec<Event>>,
}

#[derive(Clone, Copy)]
enum Event {
    Read(usize),
    Write(usize),
}

impl Load for Probe<'_> {
    fn load(&self) -> u8 {
        self.log.borrow_mut().push(Event::Read(self.byte));
        self.value
    }
}

/// `input`'s bytes as probes logging their reads into `log`.
fn probes<'a>(input: &[u8], log: &'a RefCell<Vec<Event>>) -> Vec<Probe<'a>> {
    let each = input.iter().enumerate();
    each.map(|(byte, &value)| Probe { byte, value, log })
        .collect()
}

/// The bound from a trace (bytes; output element `o` ends at `(o + 1)·width`): for each
/// write, the lowest input byte read after it, less the write's end.
fn traced_most(events: &[Event], width: usize) -> isize {
    let mut most = isize::MAX;
    let mut lowest_later: Option<usize> = None;
    for e in events.iter().rev() {
        match *e {
            Event::Read(b) => lowest_later = Some(lowest_later.map_or(b, |l| l.min(b))),
            Event::Write(o) => {
                if let Some(l) = lowest_later {
                    most = most.min(l as isize - ((o + 1) * width) as isize);
                }
            }
        }
    }
    most
}

/// A small deterministic generator (xorshift), so a failure names its seed.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

static MULTIPLIER: [i32; 1] = [1 << 30];
// Sums of up to a dozen products land inside int8 after this shift, so outputs vary and
// a wrong sum shows.
static SHIFT: [i32; 1] = [-11];

/// Random shapes: strides, dilations, paddings, filter sizes, channels, groups and
/// depth multipliers, with the output size TFLite's formula gives.
fn shapes(rng: &mut Rng, depthwise: bool) -> Conv<'static> {
    let (f_h, f_w) = (1 + rng.below(3), 1 + rng.below(3));
    let stride = [1 + rng.below(3), 1 + rng.below(3)];
    let dilation = [1 + rng.below(2), 1 + rng.below(2)];
    let (in_h, in_w) = (1 + rng.below(7), 1 + rng.below(7));
    let padding = [rng.below(f_h), rng.below(f_w)];
    let size = |n: usize, f: usize, s: usize, d: usize, p: usize| {
        ((n + 2 * p).saturating_sub(d * (f - 1) + 1)) / s + 1
    };
    let out_h = size(in_h, f_h, stride[0], dilation[0], padding[0]);
    let out_w = size(in_w, f_w, stride[1], dilation[1], padding[1]);
    let batches = 1 + rng.below(2);
    let (in_c, out_c, filter, m) = if depthwise {
        let (c, m) = (1 + rng.below(4), 1 + rng.below(3));
        (c, c * m, [1, f_h, f_w, c * m], m)
    } else {
        let groups = 1 + rng.below(4);
        let (per_in, per_out) = (1 + rng.below(3), 1 + rng.below(3));
        let (i, o) = (groups * per_in, groups * per_out);
        (i, o, [o, f_h, f_w, per_in], 1)
    };
    Conv {
        input: [batches, in_h, in_w, in_c],
        filter,
        output: [batches, out_h, out_w, out_c],
        stride,
        dilation,
        padding,
        depth_multiplier: m,
        input_offset: 3,
        output_offset: -5,
        activation: [-128, 127],
        bias: true,
        multipliers: &MULTIPLIER,
        shifts: &SHIFT,
    }
}

fn bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.below(256) as u8).collect()
}

/// A region holding `input` and room for an output of `output` bytes, `shift` bytes from
/// it, and where each lies in it.
fn region(input: &[u8], output: usize, shift: isize) -> (Vec<u8>, usmp::Shared) {
    let input_at = (-shift).max(0) as usize;
    let output_at = shift.max(0) as usize;
    let mut region = vec![0x77; (input_at + input.len()).max(output_at + output)];
    region[input_at..input_at + input.len()].copy_from_slice(input);
    let shared = usmp::Shared {
        output: 0,
        input_at,
        input_len: input.len(),
        output_at,
        output_len: output,
    };
    (region, shared)
}

#[test]
fn int8_windows_are_the_traced_bound_and_hold_at_their_edge() {
    let (mut checked_edges, mut fast_traced, mut pointwise_over) = (0, 0, 0);
    let mut groups_traced = 0;
    let (mut pairs_traced, mut pairs_varied) = (0, 0);
    let (mut several_traced, mut helium_traced) = (0, 0);
    for seed in 1..=400u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let depthwise = seed % 2 == 0;
        let mut p = shapes(&mut rng, depthwise);
        if seed % 8 == 1 {
            // A 1x1 convolution over every pixel (the fast path), up to 12 channels.
            let (i, o) = (1 + rng.below(12), 1 + rng.below(12));
            let [b, h, w, _] = p.input;
            (p.input, p.output, p.filter) = ([b, h, w, i], [b, h, w, o], [o, 1, 1, i]);
            (p.stride, p.dilation, p.padding) = ([1, 1], [1, 1], [0, 0]);
        }
        if depthwise && seed % 16 == 2 {
            // Multiplier 1 past one group of the four-channel path's accumulators.
            let c = 65 + rng.below(70);
            let [b, h, w, _] = p.input;
            let [_, f_h, f_w, _] = p.filter;
            (p.input, p.filter, p.depth_multiplier) = ([b, h, w, c], [1, f_h, f_w, c], 1);
            p.output[3] = c;
        }
        let window = conv::window(&p, depthwise, 1);
        let frame = Frame::whole(p.output);
        let (ins, outs) = (window.input, window.output);
        let input = bytes(&mut rng, ins);
        let filter = bytes(&mut rng, p.filter.iter().product());
        // Small biases, for the same reason as SHIFT.
        let bias: Vec<u8> = (0..p.output[3])
            .flat_map(|_| (rng.below(2001) as i32 - 1000).to_le_bytes())
            .collect();

        // The window is the general loops' order exactly; the four-channel depthwise
        // path never writes earlier, relative to its reads.
        let log = RefCell::new(Vec::new());
        let probes = probes(&input, &log);
        let put = |o: usize, _| log.borrow_mut().push(Event::Write(o));
        if depthwise {
            conv::int8_loops::<true, _, _, _>(&p, &frame, &probes, &filter, &bias, put).unwrap();
        } else {
            conv::int8_loops::<false, _, _, _>(&p, &frame, &probes, &filter, &bias, put).unwrap();
        }
        assert_eq!(
            window.most,
            traced_most(&log.borrow(), 1),
            "seed {seed}: {p:?}"
        );
        log.borrow_mut().clear();
        let mut put = |o: usize, _| log.borrow_mut().push(Event::Write(o));
        if depthwise
            && conv::depthwise::by_four::<false, _, _, _>(
                &p,
                &frame,
                &probes,
                &filter,
                &bias,
                &mut put,
                &mut crate::work::tests::any(),
            )
        {
            let taken = traced_most(&log.borrow(), 1);
            assert!(
                taken >= window.most,
                "seed {seed}: four at a time allows only {taken}: {p:?}"
            );
            fast_traced += 1;
            groups_traced += usize::from(p.input[3] > crate::conv::depthwise::GROUP);
        }
        // Helium's paths, with the per-channel lists they take.
        let (m, s) = (vec![1 << 30; p.output[3]], vec![-11; p.output[3]]);
        let q = Conv {
            multipliers: &m,
            shifts: &s,
            ..p
        };
        log.borrow_mut().clear();
        let mut put = |o: usize, _| log.borrow_mut().push(Event::Write(o));
        if depthwise
            && conv::chunked::depthwise(
                &q,
                &frame,
                &probes,
                &filter,
                &bias,
                &mut put,
                &mut crate::work::tests::any(),
            )
        {
            let taken = traced_most(&log.borrow(), 1);
            assert!(
                taken >= window.most,
                "seed {seed}: Helium's depthwise allows only {taken}: {q:?}"
            );
            helium_traced += 1;
        }
        log.borrow_mut().clear();
        let mut put = |o: usize, _| log.borrow_mut().push(Event::Write(o));
        if depthwise
            && conv::fast::depthwise_by_multiplier::<false, _>(
                &p,
                &probes,
                &filter,
                &bias,
                &mut put,
                &mut crate::work::tests::any(),
            )
        {
            let taken = traced_most(&log.borrow(), 1);
            assert!(
                taken >= window.most,
                "seed {seed}: the multiplier path allows only {taken}: {p:?}"
            );
            several_traced += 1;
        }
        log.borrow_mut().clear();
        let mut put = |o: usize, _| log.borrow_mut().push(Event::Write(o));
        if !depthwise && conv::fast::pointwise(&p) {
            conv::fast::conv_1x1::<true, _>(&p, &probes, &filter, &bias, &mut put);
            let taken = traced_most(&log.borrow(), 1);
            assert!(
                taken >= window.most,
                "seed {seed}: the 1x1 path allows only {taken}: {p:?}"
            );
            pointwise_over += usize::from(window.shifts().is_some());
            log.borrow_mut().clear();
            let mut put = |o: usize, _| log.borrow_mut().push(Event::Write(o));
            if conv::pairs::conv_1x1_over::<true, _>(
                &p,
                &probes,
                &filter,
                &bias,
                &mut put,
                &mut crate::work::tests::any(),
            ) {
                let taken = traced_most(&log.borrow(), 1);
                assert!(
                    taken >= window.most,
                    "seed {seed}: the paired 1x1 path allows only {taken}: {p:?}"
                );
                pairs_traced += 1;
            }
            log.borrow_mut().clear();
            let mut put = |o: usize, _| log.borrow_mut().push(Event::Write(o));
            if conv::pairs::conv_1x1_over::<false, _>(
                &p,
                &probes,
                &filter,
                &bias,
                &mut put,
                &mut crate::work::tests::any(),
            ) {
                let taken = traced_most(&log.borrow(), 1);
                assert!(
                    taken >= window.most,
                    "seed {seed}: the portable paired 1x1 path allows only {taken}: {p:?}"
                );
            }
            // Helium's four pixels.
            log.borrow_mut().clear();
            let mut put = |o: usize, _| log.borrow_mut().push(Event::Write(o));
            if conv::helium::conv_1x1(
                &q,
                &probes,
                &filter,
                &bias,
                &mut put,
                &mut crate::work::tests::any(),
            ) {
                let taken = traced_most(&log.borrow(), 1);
                assert!(
                    taken >= window.most,
                    "seed {seed}: Helium's 1x1 path allows only {taken}: {q:?}"
                );
                helium_traced += 1;
            }
        }

        let mut apart = vec![0; outs];
        let run = if depthwise {
            conv::depthwise_conv2d
        } else {
            conv::conv2d
        };
        let work = &mut crate::work::tests::any();
        run(&p, &input, &filter, &bias, &mut apart, work).unwrap();
        if !depthwise {
            // Outputs that do not saturate (no random bias), so a wrong sum shows.
            let q = Conv {
                multipliers: &[1 << 30],
                shifts: &[-11],
                bias: false,
                ..p
            };
            let (mut paired, mut general) = (vec![0; outs], vec![0; outs]);
            conv::conv2d(
                &q,
                &input,
                &filter,
                &bias,
                &mut general,
                &mut crate::work::tests::any(),
            )
            .unwrap();
            let put = &mut |o: usize, v| paired[o] = v;
            let need = conv::pairs::work_bytes(&q, true);
            let x = &input[..];
            if crate::work::tests::exactly_enough(need, |work| {
                conv::pairs::conv_1x1_over::<true, _>(&q, x, &filter, &bias, put, work)
            }) {
                assert_eq!(paired, general, "seed {seed}: the paired 1x1 path: {q:?}");
                let distinct = general.iter().collect::<std::collections::BTreeSet<_>>();
                pairs_varied += usize::from(distinct.len() > 3);
            }
            let mut portable = vec![0; outs];
            let put = &mut |o: usize, v| portable[o] = v;
            let need = conv::pairs::work_bytes(&q, true);
            let x = &input[..];
            if crate::work::tests::exactly_enough(need, |work| {
                conv::pairs::conv_1x1_over::<false, _>(&q, x, &filter, &bias, put, work)
            }) {
                assert_eq!(
                    portable, general,
                    "seed {seed}: the portable paired path: {q:?}"
                );
            }
        }
        let over = |shift: isize| {
            let (mut r, shared) = region(&input, outs, shift);
            let result = if depthwise {
                conv2d_over::<true>(
                    &p,
                    &mut r,
                    &shared,
                    &filter,
                    &bias,
                    &mut crate::work::tests::any(),
                )
            } else {
                conv2d_over::<false>(
                    &p,
                    &mut r,
                    &shared,
                    &filter,
                    &bias,
                    &mut crate::work::tests::any(),
                )
            };
            result.map(|()| r[shared.output()].to_vec())
        };
        let Some([lo, hi]) = window.shifts() else {
            continue;
        };
        for shift in [lo, (lo + hi) / 2, hi] {
            assert_eq!(
                over(shift as isize).unwrap(),
                apart,
                "seed {seed} shift {shift}"
            );
        }
        if hi + 1 < ins as i64 {
            let past = over(hi as isize + 1);
            assert!(
                matches!(past, Err(crate::Error::Overlap { .. })),
                "seed {seed}: one byte past the window must be refused"
            );
        }
        checked_edges += 1;
    }
    assert!(
        checked_edges > 100,
        "only {checked_edges} shapes had a window"
    );
    // `conv2d_over` runs these on the 1x1 path: its edges are checked above.
    assert!(pointwise_over > 5, "only {pointwise_over} 1x1 shapes");
    assert!(pairs_traced > 5, "only {pairs_traced} 1x1 shapes in pairs");
    assert!(
        helium_traced > 5,
        "only {helium_traced} 1x1 shapes in Helium's"
    );
    assert!(
        pairs_varied > 5,
        "only {pairs_varied} 1x1 shapes in pairs with varied outputs"
    );
    assert!(
        several_traced > 50,
        "only {several_traced} multiplier shapes"
    );
    assert!(
        fast_traced > 20,
        "only {fast_traced} shapes ran four at a time"
    );
    assert!(
        groups_traced >= 10,
        "only {groups_traced} shapes ran four at a time in several groups"
    );
}

#[test]
fn float_windows_count_bytes_of_four() {
    for seed in 1..=100u64 {
        let mut rng = Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03));
        let depthwise = seed % 2 == 1;
        let shape = &shapes(&mut rng, depthwise);
        let p = Float {
            shape,
            activation: [f32::MIN, f32::MAX],
        };
        let window = conv::window(shape, depthwise, 4);
        let floats = |rng: &mut Rng, n: usize| -> Vec<u8> {
            (0..n)
                .flat_map(|_| (rng.below(2000) as f32 / 100.0 - 10.0).to_le_bytes())
                .collect()
        };
        let input = floats(&mut rng, window.input / 4);
        let filter = floats(&mut rng, shape.filter.iter().product());
        let bias = floats(&mut rng, shape.output[3]);

        let log = RefCell::new(Vec::new());
        let probes = probes(&input, &log);
        let put = (window.output, |o: usize, _| {
            log.borrow_mut().push(Event::Write(o))
        });
        let what = ["i", "f", "b", "o"];
        if depthwise {
            conv::float_conv::<true, _>(what, &p, &probes, &filter, &bias, put).unwrap();
        } else {
            conv::float_conv::<false, _>(what, &p, &probes, &filter, &bias, put).unwrap();
        }
        assert_eq!(window.most, traced_most(&log.borrow(), 4), "seed {seed}");

        let mut apart = vec![0; window.output];
        let run_apart = if depthwise {
            conv::depthwise_conv2d_f32
        } else {
            conv::conv2d_f32
        };
        run_apart(&p, &input, &filter, &bias, &mut apart).unwrap();
        if let Some([_, hi]) = window.shifts() {
            let (mut r, shared) = region(&input, window.output, hi as isize);
            let result = if depthwise {
                conv2d_f32_over::<true>(&p, &mut r, &shared, &filter, &bias)
            } else {
                conv2d_f32_over::<false>(&p, &mut r, &shared, &filter, &bias)
            };
            result.unwrap();
            assert_eq!(r[shared.output()], apart[..], "seed {seed}");
        }
    }
}

/// The worked examples, in bytes: 1x1 convolution with as many or fewer output
/// channels, and 3x3 depthwise stride 1 with same padding.
#[test]
fn windows_match_the_worked_examples() {
    let conv1x1 = |cin: usize, cout: usize| Conv {
        input: [1, 6, 6, cin],
        filter: [cout, 1, 1, cin],
        output: [1, 6, 6, cout],
        stride: [1, 1],
        dilation: [1, 1],
        padding: [0, 0],
        depth_multiplier: 1,
        input_offset: 0,
        output_offset: 0,
        activation: [-128, 127],
        bias: false,
        multipliers: &MULTIPLIER,
        shifts: &SHIFT,
    };
    assert_eq!(conv::window(&conv1x1(8, 8), false, 1).most, -7);
    assert_eq!(conv::window(&conv1x1(16, 8), false, 1).most, -7);
    // Cin < Cout: (X - Y) - (Cin - 1).
    let (x, y) = (36 * 8, 36 * 16);
    assert_eq!(conv::window(&conv1x1(8, 16), false, 1).most, (x - y) - 7);
    let dw = Conv {
        filter: [1, 3, 3, 4],
        padding: [1, 1],
        ..conv1x1(4, 4)
    };
    // -(W + 1)·C, W = 6, C = 4.
    assert_eq!(conv::window(&dw, true, 1).most, -(7 * 4));
    let w = Window {
        most: -28,
        input: 144,
        output: 144,
    };
    assert!(w.allows(-28) && !w.allows(-27) && w.allows(-144) && w.allows(144));
    assert_eq!(w.shifts(), Some([-143, -28]));
}

/// RESHAPE's copy moves bytes as `memmove` does: every shift at which input and output
/// meet gives the input's bytes, the same offset included (a view).
#[test]
fn a_copy_over_its_input_is_right_at_every_shift() {
    let input: Vec<u8> = (1..=23).collect();
    let window = crate::quantize::copy_window(input.len());
    let [lo, hi] = window.shifts().unwrap();
    assert_eq!([lo, hi], [-22, 22]);
    for shift in lo..=hi {
        let (mut r, shared) = region(&input, input.len(), shift as isize);
        crate::quantize::copy_over(&mut r, &shared).unwrap();
        assert_eq!(r[shared.output()], input[..], "shift {shift}");
    }
}

mod elementwise;
mod pool;
