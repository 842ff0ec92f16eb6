//! The search under declared windows: optimal and proven wherever a window has the shape
//! the kernels certify, and never claiming a proof it does not have.

use super::*;
use crate::problem::Overlap;

/// The steps buffers `a` and `b` are both live at, as `[start, end)`.
fn shared_steps(live: &[(u64, u64)], a: usize, b: usize) -> (u64, u64) {
    (live[a].0.max(live[b].0), live[a].1.min(live[b].1))
}

/// Random buffers (sizes 1..=5, ranges in 0..7) and overlaps between buffers live
/// together, each sharing bytes with one partner at a time (chains of pairs included).
/// Windows are the kernels' shape `[1 - output, h]`, `h` from `1 - output` to 1, or with
/// `any`, a quarter of them arbitrary. Returns the problem and whether every window has
/// the shape the search takes whole (`h <= 0`).
fn random_problem_with_windows(rng: &mut Rng, n: usize, any: bool) -> (Problem, bool) {
    let mut b = Problem::builder();
    let w = b.pool(Pool::workspace("w").with_alignment(1));
    let mut live = Vec::new();
    let mut size = Vec::new();
    for i in 0..n {
        let start = rng.below(4);
        let end = start + 1 + rng.below(4);
        size.push(1 + rng.below(6) as i64);
        live.push((start, end));
        let mut buffer = Buffer::new(format!("b{i}"), size[i] as u64)
            .with_candidates([w])
            .with_live(start, end);
        if rng.below(4) == 0 {
            buffer = buffer.with_alignment(2);
        }
        b.buffer(buffer);
    }
    let mut busy: Vec<(usize, (u64, u64))> = Vec::new();
    let mut whole = true;
    for output in 0..n {
        let input = rng.below(n as u64) as usize;
        let steps = shared_steps(&live, output, input);
        let meets = |(s, e): (u64, u64)| s < steps.1 && steps.0 < e;
        let taken = busy
            .iter()
            .any(|&(x, s)| (x == output || x == input) && meets(s));
        if input == output || steps.0 >= steps.1 || taken || rng.below(3) == 0 {
            continue;
        }
        busy.extend([(output, steps), (input, steps)]);
        let lowest = 1 - size[output];
        let shifts = if any && rng.below(4) == 0 {
            let lo = rng.below(12) as i64 - 6;
            [lo, lo + rng.below(6) as i64]
        } else {
            [lowest, lowest + rng.below(size[output] as u64 + 1) as i64]
        };
        // What the search takes whole: every shift from below up to 0 or less.
        let meet = [shifts[0].max(lowest), shifts[1].min(size[input] - 1)];
        whole &= meet[0] > meet[1] || (meet[0] == lowest && meet[1] <= 0);
        b.overlap(Overlap {
            output,
            input,
            shifts,
        });
    }
    (b.build().expect("a well-formed problem"), whole)
}

#[test]
fn matches_brute_force_with_kernel_windows() {
    let mut rng = Rng::seeded(40);
    let (mut shared, mut proven, mut wholes) = (0, 0, 0);
    for case in 0..300 {
        let n = 4 + case % 4;
        let (problem, whole) = random_problem_with_windows(&mut rng, n, false);
        let expected = brute_force(&problem);
        let plan = plan(&problem, &Exact::default()).unwrap();
        let apart = brute_force(&problem.without_overlaps());
        shared += usize::from(expected < apart);
        assert!(plan.total() >= expected, "case {case}: {problem:?}");
        wholes += usize::from(whole);
        if whole {
            assert_eq!(plan.total(), expected, "case {case}: {problem:?}");
            assert!(plan.optimal, "case {case}: not proven");
            proven += usize::from(expected > plan.lower_bound.total);
        }
        if plan.optimal {
            assert_eq!(plan.total(), expected, "case {case}: a false proof");
        }
    }
    // The cases test something: overlaps that pay, proofs above the bound.
    assert!(
        shared > 150 && proven > 10 && wholes > 150,
        "{shared} {proven} {wholes}"
    );
}

#[test]
fn never_claims_a_proof_it_does_not_have() {
    let mut rng = Rng::seeded(41);
    for case in 0..200 {
        let (problem, _) = random_problem_with_windows(&mut rng, 3 + case % 4, true);
        let expected = brute_force(&problem);
        let plan = plan(&problem, &Exact::default()).unwrap();
        assert!(plan.total() >= expected, "case {case}: {problem:?}");
        if plan.optimal {
            assert_eq!(plan.total(), expected, "case {case}: {problem:?}");
        }
    }
}

/// Conflict graphs have no time, so no sections: the windows act through reach alone, and
/// a buffer may overlap several partners.
#[test]
fn matches_brute_force_with_windows_on_conflict_graphs() {
    let mut rng = Rng::seeded(42);
    for case in 0..100 {
        let n = 4 + case % 3;
        let mut b = Problem::builder();
        let w = b.pool(Pool::workspace("w").with_alignment(1));
        let sizes: Vec<i64> = (0..n).map(|_| 1 + rng.below(5) as i64).collect();
        for (i, &size) in sizes.iter().enumerate() {
            b.buffer(Buffer::new(format!("b{i}"), size as u64).with_candidates([w]));
        }
        for i in 0..n {
            for j in i + 1..n {
                if rng.below(3) == 0 {
                    continue;
                }
                b.conflict(i, j);
                if rng.below(3) == 0 {
                    // Outputs below inputs in number: no cycle of pairs (see `ties`).
                    let (output, input) = (i, j);
                    let lowest = 1 - sizes[output];
                    let h = lowest + rng.below(sizes[output] as u64) as i64;
                    b.overlap(Overlap {
                        output,
                        input,
                        shifts: [lowest, h.min(0)],
                    });
                }
            }
        }
        let problem = b.build().unwrap();
        let plan = plan(&problem, &Exact::default()).unwrap();
        assert_eq!(plan.total(), brute_force(&problem), "case {case}");
        assert!(plan.optimal, "case {case}");
    }
}
