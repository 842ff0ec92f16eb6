//! The poolings' windows against their traced order, and each pooling over one region at
//! its window's edges against its run apart; one byte past, refused.

use super::*;
use crate::pool;

/// Random pooling shapes, every window reaching into the input (padding below the
/// window's size, as TFLite's SAME padding gives).
fn pool_shapes(rng: &mut Rng) -> crate::Pool {
    let window = [1 + rng.below(3), 1 + rng.below(3)];
    let stride = [1 + rng.below(3), 1 + rng.below(3)];
    let padding = [rng.below(window[0]), rng.below(window[1])];
    let input = [
        1 + rng.below(2),
        1 + rng.below(7),
        1 + rng.below(7),
        1 + rng.below(4),
    ];
    let size = |k: usize| {
        let padded = input[k + 1] + 2 * padding[k];
        padded.saturating_sub(window[k]) / stride[k] + 1
    };
    crate::Pool {
        input,
        output: [input[0], size(0), size(1), input[3]],
        window,
        stride,
        padding,
        activation: [-128, 127],
    }
}

#[test]
fn pooling_windows_are_the_traced_bound_and_hold_at_their_edge() {
    for seed in 1..=300u64 {
        let mut rng = Rng(seed.wrapping_mul(0xA076_1D64_78BD_642F));
        let p = pool_shapes(&mut rng);
        let max = seed % 2 == 0;
        let window = pool::window(&p, 1);
        let input = bytes(&mut rng, window.input);

        let log = RefCell::new(Vec::new());
        let probes = probes(&input, &log);
        let put = (window.output, |o: usize, _| {
            log.borrow_mut().push(Event::Write(o))
        });
        if max {
            pool::pool_int8::<pool::Max, _>(&p, ["i", "o"], &probes, put).unwrap();
        } else {
            pool::pool_int8::<pool::Average, _>(&p, ["i", "o"], &probes, put).unwrap();
        }
        // Past three channels the loops fold four channels' cells before writing their
        // four outputs, so the trace may allow more than the bound (which is traced channel
        // by channel, and is what the planner uses), never less; below four channels they
        // go channel by channel, and the bound is the trace's.
        let traced = traced_most(&log.borrow(), 1);
        let depth = p.input[3];
        assert!(
            window.most <= traced && (depth >= 4 || traced == window.most),
            "seed {seed}: {p:?}: bound {}, traced {traced}",
            window.most
        );

        let mut apart = vec![0; window.output];
        let run = if max {
            pool::max_pool2d
        } else {
            pool::average_pool2d
        };
        run(&p, &input, &mut apart).unwrap();
        let Some([lo, hi]) = window.shifts() else {
            continue;
        };
        for shift in [lo, hi, hi + 1] {
            let (mut r, shared) = region(&input, window.output, shift as isize);
            let result = if max {
                pool::pool2d_over::<true>(&p, &mut r, &shared)
            } else {
                pool::pool2d_over::<false>(&p, &mut r, &shared)
            };
            if shift == hi + 1 && hi + 1 < window.input as i64 {
                assert!(
                    matches!(result, Err(crate::Error::Overlap { .. })),
                    "seed {seed}"
                );
            } else if shift <= hi {
                result.unwrap();
                assert_eq!(r[shared.output()], apart[..], "seed {seed} shift {shift}");
            }
        }
    }
    // Float pooling counts bytes of four: the same bound, scaled.
    let p = pool_shapes(&mut Rng(7));
    assert_eq!(pool::window(&p, 4).most, 4 * pool::window(&p, 1).most);
}
