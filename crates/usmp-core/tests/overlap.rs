//! Outputs written over the inputs they consume (issue 40): every built-in algorithm
//! places a declared output over its input where its window allows, so plans go below the
//! bound of disjoint placements, and every such plan passes the verifier.
#![allow(clippy::expect_used)] // test code: a panic is the failure report

use usmp_core::{Buffer, LowerBound, Named, Overlap, Pool, Problem, plan};

/// A chain of `n` activations of `size` bytes, each live from its call to the next
/// call (so two are live at each call), and 16 bytes of scratch per call; each output may
/// be written over its input at a shift in `shifts` when `overlap`.
fn chain(n: usize, size: u64, shifts: [i64; 2], overlap: bool) -> Problem {
    let mut b = Problem::builder();
    let w = b.pool(Pool::workspace("sram").with_alignment(16));
    for k in 0..n {
        let start = k as u64;
        b.buffer(
            Buffer::new(format!("x{k}"), size)
                .with_candidates([w])
                .with_live(start, start + 2),
        );
        b.buffer(
            Buffer::new(format!("s{k}"), 16)
                .with_candidates([w])
                .with_live(start + 1, start + 2),
        );
    }
    if overlap {
        for k in 1..n {
            b.overlap(Overlap {
                output: 2 * k,
                input: 2 * (k - 1),
                shifts,
            });
        }
    }
    b.build().expect("a well-formed chain")
}

#[test]
fn every_algorithm_writes_outputs_over_their_inputs() {
    // Apart, two activations and a scratch buffer are live at each call: 2 x 256 + 16.
    let apart = chain(12, 256, [-64, 0], false);
    assert_eq!(LowerBound::of(&apart).total, 528);
    // Over each other, down to a shift of -64: 256 + 64 of the next, and the scratch.
    let over = chain(12, 256, [-64, 0], true);
    assert_eq!(LowerBound::of(&over).total, 272);
    for named in Named::ALL {
        let algorithm = named.build();
        let without = plan(&apart, algorithm.as_ref()).expect("a plan apart");
        let with = plan(&over, algorithm.as_ref()).expect("a plan over");
        // Each output at 64 bytes below its input: the bound, so optimal.
        assert!(with.optimal, "{}", named.name());
        let (without, with) = (without.total(), with.total());
        assert!(without >= 528, "{}: {without}", named.name());
        assert_eq!(with, 272, "{}", named.name());
    }
}

/// A window that only allows the output well above its input saves nothing here, and
/// the plans stay verified; one that allows nothing either side of -256 places the
/// output just below, sharing nothing.
#[test]
fn a_window_that_shares_nothing_changes_nothing() {
    let far = chain(6, 256, [256, 512], true);
    assert_eq!(LowerBound::of(&far).total, 528);
    for named in Named::ALL {
        let p = plan(&far, named.build().as_ref()).expect("a plan");
        assert!(p.total() >= 528, "{}: {}", named.name(), p.total());
    }
}
