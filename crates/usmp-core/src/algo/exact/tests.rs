use super::*;
use crate::plan;
use crate::problem::{Buffer, Pool};

use crate::test_rng::Rng;

mod dives;
mod overlaps;
mod resume;

/// Random buffers with sizes 1..=4 and ranges in 0..8, some aligned to 2, in one pool.
fn random_problem(rng: &mut Rng, n: usize) -> Problem {
    let mut b = Problem::builder();
    let w = b.pool(Pool::workspace("w").with_alignment(1));
    for i in 0..n {
        let start = rng.below(7);
        let end = start + 1 + rng.below(8 - start);
        let mut buffer = Buffer::new(format!("b{i}"), 1 + rng.below(4))
            .with_candidates([w])
            .with_live(start, end);
        if rng.below(4) == 0 {
            buffer = buffer.with_alignment(2);
        }
        b.buffer(buffer);
    }
    b.build().unwrap()
}

/// Buffers of sizes 1..=`largest` that conflict by a random graph (each pair by a coin).
fn random_graph(rng: &mut Rng, n: usize, largest: u64) -> Problem {
    let mut b = Problem::builder();
    let w = b.pool(Pool::workspace("w").with_alignment(1));
    for i in 0..n {
        b.buffer(Buffer::new(format!("b{i}"), 1 + rng.below(largest)).with_candidates([w]));
    }
    for i in 0..n {
        for j in i + 1..n {
            if rng.below(2) == 0 {
                b.conflict(i, j);
            }
        }
    }
    b.build().unwrap()
}

/// The optimum by trying every offset of every buffer (branch and bound on the peak),
/// declared windows included: nothing here shares code or reasoning with the solver.
fn brute_force(problem: &Problem) -> u64 {
    fn go(p: &Problem, offsets: &mut Vec<u64>, peak: u64, best: &mut u64) {
        let i = offsets.len();
        if i == p.buffers().len() {
            *best = (*best).min(peak);
            return;
        }
        let b = &p.buffers()[i];
        let mut at = 0;
        while at + b.size < *best {
            let offset = |k: usize| if k == i { at } else { offsets[k] };
            let clear = (0..i).all(|j| {
                !p.conflict(i, j)
                    || at + b.size <= offsets[j]
                    || offsets[j] + p.buffers()[j].size <= at
                    || p.overlap_between(i, j)
                        .is_some_and(|o| o.allows(offset(o.output), offset(o.input)))
            });
            if clear && at % b.alignment == 0 {
                offsets.push(at);
                go(p, offsets, peak.max(at + b.size), best);
                offsets.pop();
            }
            at += 1;
        }
    }
    let mut best = u64::MAX;
    go(problem, &mut Vec::new(), 0, &mut best);
    best
}

#[test]
fn matches_brute_force_on_small_instances() {
    let mut rng = Rng::seeded(7);
    for case in 0..150 {
        let n = 3 + (case % 4);
        let problem = random_problem(&mut rng, n);
        let expected = brute_force(&problem);
        let plan = plan(&problem, &Exact::default()).unwrap();
        assert_eq!(plan.total(), expected, "case {case}: {problem:?}");
        assert!(plan.optimal, "case {case}: the search was not exhausted");
    }
}

/// Buffers with twins (the same live range, size and alignment), which the search places
/// in item order only, and near-twins (one of the three differs by one) which it must
/// not: still the optimum, proven, and the twins are seen as such.
#[test]
fn matches_brute_force_with_twins() {
    let mut rng = Rng::seeded(0x7715);
    for case in 0..10000 {
        let base = random_problem(&mut rng, 2 + case % 2);
        let mut b = Problem::builder();
        let w = b.pool(Pool::workspace("w").with_alignment(1));
        let (mut n, mut copies) = (0, 0);
        for buffer in base.buffers() {
            for copy in 0..1 + rng.below(2) {
                let live = buffer.live.unwrap();
                // A copy is a twin, or differs in its start, end, size or alignment.
                let near = if copy == 0 { 0 } else { rng.below(5) };
                let start = live.start.saturating_sub(u64::from(near == 1));
                let end = live.end + u64::from(near == 2);
                let size = buffer.size + u64::from(near == 3);
                let align = if near == 4 {
                    3 - buffer.alignment
                } else {
                    buffer.alignment
                };
                copies += usize::from(copy > 0 && near == 0);
                b.buffer(
                    Buffer::new(format!("b{n}"), size)
                        .with_candidates([w])
                        .with_live(start, end)
                        .with_alignment(align),
                );
                n += 1;
            }
        }
        let problem = b.build().unwrap();
        let inst = Instance::new(&problem, 0, (0..n).collect());
        let twins = inst.twin.iter().filter(|&&t| t != u32::MAX).count();
        // At least the copies (the draw may give twins of its own).
        assert!(twins >= copies, "case {case}");
        let plan = plan(&problem, &Exact::default()).unwrap();
        assert_eq!(
            plan.total(),
            brute_force(&problem),
            "case {case}: {problem:?}"
        );
        assert!(plan.optimal, "case {case}: the search was not exhausted");
    }
}

/// Sizes that share a factor (3, 4 or 6), alignments that divide it or not: the search
/// probes only capacities on the step every end lies on (the factor where each alignment
/// divides it, else the common divisor of sizes and alignments), and still finds the
/// optimum and proves it; a capacity between two steps gives a plan within it.
#[test]
fn matches_brute_force_where_sizes_share_a_factor() {
    let mut rng = Rng::seeded(0x5732);
    let mut stepped = 0;
    for case in 0..120 {
        let mut b = Problem::builder();
        let w = b.pool(Pool::workspace("w").with_alignment(1));
        for i in 0..3 + case % 4 {
            let start = rng.below(7);
            let end = start + 1 + rng.below(8 - start);
            let align = [1, 1, 2, 4][rng.below(4) as usize];
            let factor = [3, 4, 6][case % 3];
            b.buffer(
                Buffer::new(format!("b{i}"), factor * (1 + rng.below(4)))
                    .with_candidates([w])
                    .with_live(start, end)
                    .with_alignment(align),
            );
        }
        let problem = b.build().unwrap();
        let expected = brute_force(&problem);
        let step = Instance::new(&problem, 0, (0..problem.buffers().len()).collect()).step();
        assert_eq!(
            expected % step,
            0,
            "case {case}: optimum off the step {step}"
        );
        stepped += usize::from(step > 1);
        let plan = plan(&problem, &Exact::default()).unwrap();
        assert_eq!(plan.total(), expected, "case {case}: {problem:?}");
        assert!(plan.optimal, "case {case}: the search was not exhausted");
        let between = Exact {
            capacity: Some(expected + 2),
            ..Exact::default()
        };
        let within = crate::plan(&problem, &between).unwrap();
        assert!(within.total() <= expected + 2, "case {case}");
    }
    assert!(stepped > 40, "{stepped} cases with a step");
}

#[test]
fn matches_brute_force_on_conflict_graphs() {
    let mut rng = Rng::seeded(11);
    for case in 0..60 {
        let problem = random_graph(&mut rng, 4 + case % 3, 5);
        let plan = plan(&problem, &Exact::default()).unwrap();
        assert_eq!(plan.total(), brute_force(&problem), "case {case}");
    }
}

#[test]
fn same_budget_same_plan() {
    let mut rng = Rng::seeded(3);
    let problem = random_problem(&mut rng, 40);
    let tight = Exact {
        work_budget: 20_000,
        ..Exact::default()
    };
    let first = plan(&problem, &tight).unwrap();
    for _ in 0..3 {
        assert_eq!(plan(&problem, &tight).unwrap(), first);
    }
}

#[test]
fn decision_mode_stops_at_the_capacity() {
    // Optimum 12: MiniMalloc's README example.
    let problem = crate::input::parse_csv(
        "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n",
        "x.csv",
        None,
    )
    .unwrap();
    let loose = Exact {
        capacity: Some(16),
        ..Exact::default()
    };
    assert!(plan(&problem, &loose).unwrap().total() <= 16);
    assert_eq!(plan(&problem, &Exact::default()).unwrap().total(), 12);
}

/// `exact` choosing pools for the smallest total.
fn smallest_total() -> Exact {
    Exact {
        assignment: Assignment::SmallestTotal,
        ..Exact::default()
    }
}

/// Buffers of `sizes`, all live together, each free to use either of two pools limited
/// to 10 bytes.
fn live_together_in_two_pools_of_ten(sizes: &[u64]) -> Problem {
    let mut b = Problem::builder();
    let p = b.pool(Pool::workspace("p").with_limit(10).with_alignment(1));
    let q = b.pool(Pool::workspace("q").with_limit(10).with_alignment(1));
    for (i, &size) in sizes.iter().enumerate() {
        b.buffer(
            Buffer::new(format!("b{i}"), size)
                .with_candidates([p, q])
                .with_live(0, 1),
        );
    }
    b.build().unwrap()
}

/// Six buffers live together, 5, 4, 4, 3, 2 and 2 bytes, in two pools of 10 bytes that
/// each may use: 20 bytes only fit as 5 + 3 + 2 and 4 + 4 + 2. First fit fills `p` with
/// 5 + 4 and then has nowhere for the second 4 (the assignment the search used to keep).
#[test]
fn chooses_pools_where_the_greedy_assignment_has_no_plan() {
    let problem = live_together_in_two_pools_of_ten(&[5, 4, 4, 3, 2, 2]);
    assert!(matches!(
        plan(&problem, &FirstFit),
        Err(PlanError::NoFit { .. })
    ));
    let exact = plan(&problem, &Exact::default()).unwrap();
    assert_eq!(exact.pool_sizes, vec![10, 10]);
    let exact = plan(&problem, &smallest_total()).unwrap();
    assert_eq!(exact.pool_sizes, vec![10, 10]);
    assert!(exact.optimal);
}

/// Three buffers of 6 bytes live together, two pools of 10: 18 bytes would fit in 20, but
/// one pool must take two of them. No bound shows it; the search tries every assignment
/// and says that no plan can exist.
#[test]
fn a_complete_search_proves_that_no_plan_fits() {
    let problem = live_together_in_two_pools_of_ten(&[6, 6, 6]);
    match plan(&problem, &Exact::default()) {
        Err(PlanError::NoFit { impossible, .. }) => {
            let why = impossible.expect("a proof");
            assert!(why.contains("tried every assignment"), "{why}");
        }
        other => panic!("{other:?}"),
    }
}

/// `a` may use the fast pool or the slow one; `s` only the slow one, and the two are never
/// live together. The preference order keeps `a` in the fast pool (80 bytes in all); the
/// smallest total puts both at offset 0 of the slow pool (40), and proves it.
#[test]
fn the_preference_order_keeps_a_buffer_the_smallest_total_would_move() {
    let mut b = Problem::builder();
    let fast = b.pool(Pool::workspace("fast").with_limit(64).with_alignment(1));
    let slow = b.pool(Pool::workspace("slow").with_alignment(1));
    b.buffer(
        Buffer::new("a", 40)
            .with_candidates([fast, slow])
            .with_live(1, 2),
    );
    b.buffer(Buffer::new("s", 40).with_candidates([slow]).with_live(0, 1));
    let problem = b.build().unwrap();
    let preferred = plan(&problem, &Exact::default()).unwrap();
    assert_eq!(preferred.pool_sizes, vec![40, 40]);
    let smallest = plan(&problem, &smallest_total()).unwrap();
    assert_eq!(smallest.pool_sizes, vec![0, 40]);
    assert!(smallest.optimal);
}

/// A cold 60-byte buffer and a hot 32-byte one (100 times the traffic per byte), live
/// together; the fast pool holds 64 bytes, one of them. Both list the slow pool first,
/// so the preference order puts both there; `Fastest` goes by speed and traffic: the hot
/// one in the fast pool, and the estimated memory time drops by 7 times.
#[test]
fn fastest_puts_the_most_accessed_bytes_in_the_fastest_pool() {
    let mut b = Problem::builder();
    let slow = b.pool(Pool::workspace("slow").with_bandwidth(1_000_000_000));
    let fast = b.pool(
        Pool::workspace("fast")
            .with_limit(64)
            .with_bandwidth(8_000_000_000),
    );
    let cold = b.buffer(
        Buffer::new("cold", 60)
            .with_candidates([slow, fast])
            .with_live(0, 2)
            .with_traffic(60),
    );
    let hot = b.buffer(
        Buffer::new("hot", 32)
            .with_candidates([slow, fast])
            .with_live(0, 2)
            .with_traffic(3200),
    );
    let problem = b.build().unwrap();
    let preferred = plan(&problem, &Exact::default()).unwrap();
    assert_eq!(preferred.allocations[cold].pool, slow);
    assert_eq!(preferred.allocations[hot].pool, slow);
    let fastest = Exact {
        assignment: Assignment::Fastest,
        ..Exact::default()
    };
    let quick = plan(&problem, &fastest).unwrap();
    assert_eq!(quick.allocations[hot].pool, fast);
    assert_eq!(quick.allocations[cold].pool, slow);
    let time = |p: &crate::Plan| {
        crate::traffic::memory_time(&crate::traffic::traffic(&problem, &p.allocations))
    };
    // 3260 B at 1 GB/s, against 3200 B at 8 GB/s and 60 B at 1 GB/s.
    assert_eq!((time(&preferred), time(&quick)), (3260, 460));
}

/// Under `fastest`, the weights a limited constant pool holds are the quickest choice
/// there is (a knapsack solved exactly), where the greedy order by traffic per byte is
/// not: checked against every subset on random small sets of weights.
#[test]
fn fastest_chooses_the_quickest_weights_for_a_limited_constant_pool() {
    let mut rng = Rng::seeded(11);
    let mut next = move |n: u64| rng.below(n);
    let fastest = Exact {
        assignment: Assignment::Fastest,
        ..Exact::default()
    };
    let mut greedy_missed = 0;
    for _ in 0..300 {
        let mut b = Problem::builder();
        let work = b.pool(Pool::workspace("sram").with_bandwidth(1_000_000_000));
        // 1 ns and 10 ns per byte: every time below is a whole number of nanoseconds.
        let limit = 16 * (1 + next(24));
        let tcm = b.pool(
            Pool::constant("tcm_w")
                .with_limit(limit)
                .with_alignment(16)
                .with_bandwidth(1_000_000_000),
        );
        let flash = b.pool(Pool::constant("flash").with_bandwidth(100_000_000));
        b.buffer(Buffer::new("x", 16).with_candidates([work]).with_live(0, 1));
        let n = 1 + next(10) as usize;
        let weights: Vec<(u64, u64)> = (0..n)
            .map(|_| (16 * (1 + next(8)), 1 + next(5_000)))
            .collect();
        for (i, &(size, traffic)) in weights.iter().enumerate() {
            b.buffer(
                Buffer::new(format!("w{i}"), size)
                    .constant()
                    .with_candidates([tcm, flash])
                    .with_live(0, 1)
                    .with_traffic(traffic),
            );
        }
        let problem = b.build().unwrap();
        let planned = plan(&problem, &fastest).unwrap();
        let time =
            crate::traffic::memory_time(&crate::traffic::traffic(&problem, &planned.allocations));
        // Every subset of weights that fits the limit: 1 ns per byte in tcm_w, 10 in
        // flash (the activation moves no bytes).
        let all: u64 = weights.iter().map(|w| 10 * w.1).sum();
        let best = (0u32..1 << n)
            .filter(|m| {
                let used: u64 = (0..n)
                    .filter(|i| m & (1 << i) != 0)
                    .map(|i| weights[i].0)
                    .sum();
                used <= limit
            })
            .map(|m| {
                let saved: u64 = (0..n)
                    .filter(|i| m & (1 << i) != 0)
                    .map(|i| 9 * weights[i].1)
                    .sum();
                all - saved
            })
            .min()
            .unwrap();
        assert_eq!(time, best, "limit {limit}, weights {weights:?}");
        // The greedy order: by traffic per byte, each where it fits.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&i, &j| {
            (u128::from(weights[j].1) * u128::from(weights[i].0))
                .cmp(&(u128::from(weights[i].1) * u128::from(weights[j].0)))
        });
        let mut room = limit;
        let mut greedy = all;
        for i in order {
            if weights[i].0 <= room {
                room -= weights[i].0;
                greedy -= 9 * weights[i].1;
            }
        }
        greedy_missed += usize::from(greedy > best);
    }
    // The sets are such that the greedy order alone misses the optimum often.
    assert!(greedy_missed > 10, "{greedy_missed}");
}

/// Under `fastest`, a problem small enough is searched over every assignment for the
/// quickest plan: against brute force on random buffers all live together (each pool
/// then holds the sum of its buffers), over two limited pools and an unlimited one.
#[test]
fn fastest_finds_the_quickest_assignment_of_a_small_problem() {
    let mut rng = Rng::seeded(0x44);
    let fastest = Exact {
        assignment: Assignment::Fastest,
        ..Exact::default()
    };
    let mut greedy_missed = 0;
    for _ in 0..300 {
        let mut b = Problem::builder();
        // 1, 2 and 10 ns per byte.
        let speeds = [1_000_000_000u64, 500_000_000, 100_000_000];
        let limits = [Some(1 + rng.below(200)), Some(1 + rng.below(300)), None];
        let pools: Vec<usize> = speeds
            .iter()
            .zip(limits)
            .enumerate()
            .map(|(i, (&bw, limit))| {
                let pool = Pool::workspace(format!("p{i}")).with_bandwidth(bw);
                b.pool(match limit {
                    Some(l) => pool.with_limit(l),
                    None => pool,
                })
            })
            .collect();
        let n = 1 + rng.below(7) as usize;
        let buffers: Vec<(u64, u64)> = (0..n)
            .map(|_| (1 + rng.below(100), rng.below(2_000)))
            .collect();
        for (i, &(size, traffic)) in buffers.iter().enumerate() {
            b.buffer(
                Buffer::new(format!("b{i}"), size)
                    .with_candidates(pools.clone())
                    .with_live(0, 1)
                    .with_traffic(traffic),
            );
        }
        let problem = b.build().unwrap();
        let planned = plan(&problem, &fastest).unwrap();
        let time_of = |pool_of: &dyn Fn(usize) -> usize| -> Option<u64> {
            let mut used = [0u64; 3];
            let mut time = 0;
            for (i, &(size, traffic)) in buffers.iter().enumerate() {
                let p = pool_of(i);
                used[p] += size;
                time += traffic * (1_000_000_000 / speeds[p]);
            }
            let fits = (0..3).all(|p| limits[p].is_none_or(|l| used[p] <= l));
            fits.then_some(time)
        };
        let best = (0..3u32.pow(n as u32))
            .filter_map(|code| time_of(&|i| (code / 3u32.pow(i as u32) % 3) as usize))
            .min()
            .unwrap();
        let time = time_of(&|i| planned.allocations[i].pool).unwrap();
        assert_eq!(time, best, "limits {limits:?}, buffers {buffers:?}");
        // The greedy order alone: by traffic per byte, each in the quickest pool it fits.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&i, &j| {
            (u128::from(buffers[j].1) * u128::from(buffers[i].0))
                .cmp(&(u128::from(buffers[i].1) * u128::from(buffers[j].0)))
        });
        let mut room = [limits[0].unwrap(), limits[1].unwrap(), u64::MAX];
        let mut greedy = 0;
        for i in order {
            let p = (0..3).find(|&p| buffers[i].0 <= room[p]).unwrap();
            room[p] -= buffers[i].0;
            greedy += buffers[i].1 * (1_000_000_000 / speeds[p]);
        }
        greedy_missed += usize::from(greedy > best);
    }
    assert!(greedy_missed > 10, "{greedy_missed}");
}
