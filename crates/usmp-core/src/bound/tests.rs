use super::*;
use crate::problem::{Buffer, Pool};

#[test]
fn interval_peak_respects_half_open_ranges() {
    let mut b = Problem::builder();
    let w = b.pool(Pool::workspace("w"));
    b.buffer(Buffer::new("a", 10).with_candidates([w]).with_live(0, 2));
    b.buffer(Buffer::new("b", 20).with_candidates([w]).with_live(2, 3));
    b.buffer(Buffer::new("c", 5).with_candidates([w]).with_live(1, 3));
    let lb = LowerBound::of(&b.build().unwrap());
    assert_eq!(lb.total, 25);
    assert_eq!(lb.per_pool, vec![25]);
}

/// The peak is the most bytes live at any one step, counted step by step, on one
/// thread and on two, with lives that touch, nest and share ends.
#[test]
fn interval_peak_is_the_most_bytes_live_at_a_step() {
    let mut rng = crate::test_rng::Rng::seeded(0x9ea_c0de);
    for case in 0..200 {
        let mut b = Problem::builder();
        let w = b.pool(Pool::workspace("w"));
        let n = 1 + rng.below(60) as usize;
        for i in 0..n {
            let start = rng.below(20);
            let end = start + 1 + rng.below(6);
            let buffer = Buffer::new(format!("b{i}"), 1 + rng.below(100));
            b.buffer(buffer.with_candidates([w]).with_live(start, end));
        }
        let p = b.build().unwrap();
        let expected = (0..30)
            .map(|t| {
                let live = p
                    .buffers()
                    .iter()
                    .filter(|b| b.live.is_some_and(|l| l.start <= t && t < l.end));
                live.map(|b| b.size).sum::<u64>()
            })
            .max()
            .unwrap_or(0);
        let all: Vec<usize> = (0..n).collect();
        for split in [false, true] {
            assert_eq!(peak_sorted(&p, &all, split), expected, "case {case}");
        }
    }
}

#[test]
fn graph_clique_finds_the_heavy_core() {
    // A 4-clique of 210 bytes plus a heavy buffer with a single neighbour.
    let mut b = Problem::builder();
    let w = b.pool(Pool::workspace("w"));
    let sizes = [20, 100, 40, 50, 150];
    let ids: Vec<usize> = sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| b.buffer(Buffer::new(format!("b{i}"), s).with_candidates([w])))
        .collect();
    for i in 0..4 {
        for j in i + 1..4 {
            b.conflict(ids[i], ids[j]);
        }
    }
    b.conflict(ids[4], ids[0]);
    let lb = LowerBound::of(&b.build().unwrap());
    assert_eq!(lb.total, 210);
}

#[test]
fn per_pool_bound_counts_only_forced_buffers() {
    // Workspace and constants are bounded separately and added; "b" may go to either
    // RAM pool, so only "a" bounds "fast" and nothing bounds "slow".
    let mut b2 = Problem::builder();
    let fast = b2.pool(Pool::workspace("fast"));
    let slow = b2.pool(Pool::workspace("slow"));
    let flash = b2.pool(Pool::constant("flash"));
    b2.buffer(Buffer::new("a", 30).with_candidates([fast]).with_live(0, 2));
    b2.buffer(
        Buffer::new("b", 50)
            .with_candidates([fast, slow])
            .with_live(0, 2),
    );
    b2.buffer(
        Buffer::new("k", 7)
            .constant()
            .with_candidates([flash])
            .with_live(0, 1),
    );
    let lb = LowerBound::of(&b2.build().unwrap());
    assert_eq!(lb.total, 87);
    assert_eq!(lb.per_pool, vec![30, 0, 7]);
}

#[test]
fn infeasible_names_a_buffer_too_big_or_pools_too_small() {
    let mut b = Problem::builder();
    let mut small = Pool::workspace("dtcm");
    small.size_limit = Some(16);
    let mut big = Pool::workspace("sram");
    big.size_limit = Some(40);
    let dtcm = b.pool(small);
    let sram = b.pool(big);
    b.buffer(
        Buffer::new("a", 24)
            .with_candidates([dtcm, sram])
            .with_live(0, 2),
    );
    b.buffer(
        Buffer::new("b", 24)
            .with_candidates([dtcm, sram])
            .with_live(1, 3),
    );
    let fits = b.clone().build().unwrap();
    // 48 bytes live at once, 56 bytes of limits: the bound rules nothing out.
    assert_eq!(infeasible(&fits), None);
    b.buffer(
        Buffer::new("c", 20)
            .with_candidates([dtcm, sram])
            .with_live(1, 2),
    );
    let three = b.clone().build().unwrap();
    let proof = infeasible(&three).unwrap();
    assert_eq!(
        (proof.pools, proof.needed, proof.limit),
        (vec![dtcm, sram], 68, 56)
    );
    b.buffer(
        Buffer::new("d", 41)
            .with_candidates([dtcm, sram])
            .with_live(4, 5),
    );
    let proof = infeasible(&b.build().unwrap()).unwrap();
    assert_eq!((proof.buffer, proof.needed, proof.limit), (Some(3), 41, 40));
}

/// Past PARTITION_POOLS pools the single pools are checked from one filing pass: the
/// pool whose own buffers outgrow it is named, the bound counts each pool's own, and
/// a buffer with two candidates is forced into neither alone.
#[test]
fn many_pools_are_checked_one_by_one_from_one_pass() {
    let build = |overfull: Option<usize>| {
        let mut b = Problem::builder();
        let pools: Vec<usize> = (0..10)
            .map(|k| {
                let mut p = Pool::workspace(format!("p{k}"));
                p.size_limit = Some(100);
                b.pool(p)
            })
            .collect();
        for (k, &p) in pools.iter().enumerate() {
            let size = if Some(k) == overfull { 60 } else { 40 };
            for step in 0..2 {
                b.buffer(
                    Buffer::new(format!("b{k}_{step}"), size)
                        .with_candidates([p])
                        .with_live(0, 2),
                );
            }
        }
        // Shared by two pools: a bound for neither alone.
        b.buffer(
            Buffer::new("shared", 90)
                .with_candidates([pools[3], pools[4]])
                .with_live(0, 2),
        );
        b.build().unwrap()
    };
    let fits = build(None);
    assert_eq!(infeasible(&fits), None);
    let lb = LowerBound::of(&fits);
    assert_eq!(lb.per_pool, vec![80; 10]);
    assert_eq!(
        lb.total, 890,
        "the whole set's peak: every buffer is live at once"
    );
    let proof = infeasible(&build(Some(7))).unwrap();
    assert_eq!(
        (proof.pools, proof.needed, proof.limit, proof.buffer),
        (vec![7], 120, 100, None)
    );
}

/// The widest step of each buffer's life, against a scan of every step it lives at,
/// on random lives (step counts that are not powers of two).
#[test]
fn widest_step_is_the_most_bytes_live_in_a_buffers_life() {
    let mut rng = crate::test_rng::Rng::seeded(0x57ee);
    for case in 0..200 {
        let mut b = Problem::builder();
        b.pool(Pool::workspace("ws"));
        let n = 1 + rng.below(30);
        for i in 0..n {
            let start = rng.below(20);
            let end = start + 1 + rng.below(6);
            b.buffer(
                Buffer::new(format!("b{i}"), 1 + rng.below(100))
                    .with_candidates([0])
                    .with_live(start, end),
            );
        }
        let problem = b.build().unwrap();
        let all: Vec<usize> = (0..problem.buffers().len()).collect();
        let buffers = problem.buffers();
        let live_at = |t: u64| -> u64 {
            buffers
                .iter()
                .filter(|x| x.live.is_some_and(|l| l.start <= t && t < l.end))
                .map(|x| x.size)
                .sum()
        };
        let expected: Vec<u64> = buffers
            .iter()
            .map(|x| {
                x.live
                    .map_or(0, |l| (l.start..l.end).map(live_at).max().unwrap_or(0))
            })
            .collect();
        assert_eq!(widest_step(&problem, &all), expected, "case {case}");
    }
}

/// x (32 bytes) then y (16) written over it: together they need only 32 bytes, at the
/// shift 0 the window allows, and the bound says so, for live ranges and for a graph.
#[test]
fn an_overlap_lowers_the_bound_by_what_its_window_shares() {
    use crate::problem::Overlap;
    use crate::solution::Allocation;
    for graph in [false, true] {
        let mut b = Problem::builder();
        let w = b.pool(Pool::workspace("w"));
        let (x, y) = if graph {
            let x = b.buffer(Buffer::new("x", 32).with_candidates([w]));
            let y = b.buffer(Buffer::new("y", 16).with_candidates([w]));
            b.conflict(x, y);
            (x, y)
        } else {
            let x = b.buffer(Buffer::new("x", 32).with_candidates([w]).with_live(0, 2));
            (
                x,
                b.buffer(Buffer::new("y", 16).with_candidates([w]).with_live(1, 3)),
            )
        };
        let without = LowerBound::of(&b.clone().build().unwrap()).total;
        assert_eq!(without, 48);
        b.overlap(Overlap {
            output: y,
            input: x,
            shifts: [-16, 0],
        });
        let p = b.build().unwrap();
        assert_eq!(LowerBound::of(&p).total, 32, "graph {graph}");
        let both_at_0 = [Allocation { pool: 0, offset: 0 }; 2];
        assert_eq!(crate::verify::verify(&p, &both_at_0), Ok(()));
    }
}

/// On small random problems with overlaps, no placement the verifier accepts is smaller
/// than the bound (every placement of up to four buffers at offsets below 12, tried).
#[test]
fn the_bound_with_overlaps_is_below_every_verified_plan() {
    use crate::problem::Overlap;
    use crate::solution::Allocation;
    let mut rng = crate::test_rng::Rng::seeded(0x0b0_07e5);
    let mut tight = 0;
    for case in 0..300 {
        let mut b = Problem::builder();
        let w = b.pool(Pool::workspace("w"));
        let n = 2 + rng.below(3) as usize;
        let mut sizes = Vec::new();
        for k in 0..n {
            let size = 1 + rng.below(6);
            sizes.push(size);
            // A chain: k live over [k, k + 2), so k and k + 1 meet at step k + 1.
            let start = k as u64;
            b.buffer(
                Buffer::new(format!("b{k}"), size)
                    .with_candidates([w])
                    .with_live(start, start + 2),
            );
        }
        for k in 1..n {
            if rng.below(2) == 0 {
                let lo = rng.below(9) as i64 - 6;
                b.overlap(Overlap {
                    output: k,
                    input: k - 1,
                    shifts: [lo, lo + rng.below(4) as i64],
                });
            }
        }
        let p = b.build().unwrap();
        let bound = LowerBound::of(&p).total;
        // Every placement at offsets 0..12: the smallest end any verified one reaches.
        let mut best = u64::MAX;
        let mut offsets = vec![0u64; n];
        loop {
            let allocs: Vec<Allocation> = offsets
                .iter()
                .map(|&offset| Allocation { pool: 0, offset })
                .collect();
            if crate::verify::verify(&p, &allocs).is_ok() {
                let end = offsets
                    .iter()
                    .zip(&sizes)
                    .map(|(o, s)| o + s)
                    .max()
                    .unwrap_or(0);
                best = best.min(end);
            }
            let Some(k) = offsets.iter().position(|&o| o < 11) else {
                break;
            };
            offsets[k] += 1;
            offsets[..k].iter_mut().for_each(|o| *o = 0);
        }
        assert!(
            bound <= best,
            "case {case}: bound {bound} above a plan of {best}"
        );
        tight += usize::from(bound == best);
    }
    assert!(tight > 100, "the bound is rarely reached: {tight} of 300");
}
