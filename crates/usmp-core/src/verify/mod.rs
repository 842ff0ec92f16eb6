//! The independent verifier: checks any allocation against the problem's rules.
//!
//! It shares no code with the algorithms on purpose. Overlaps are found by a sweep over
//! time (live ranges) or over the edge list (conflict graphs), not by the placement
//! structures the algorithms use, so a bug in those cannot hide itself here. A declared
//! [`Overlap`] lets its output share bytes with its input exactly within its window, and
//! nowhere else.

mod pieces;

use std::collections::BTreeMap;

use crate::problem::{Conflicts, Overlap, Problem};
use crate::solution::Allocation;
pub use crate::solution::Violation;

/// At most this many violations are reported; one is enough to reject a plan.
const MAX_VIOLATIONS: usize = 20;

/// Checks `allocations` against every rule of `problem`.
pub fn verify(problem: &Problem, allocations: &[Allocation]) -> Result<(), Vec<Violation>> {
    let buffers = problem.buffers();
    if allocations.len() != buffers.len() {
        return Err(vec![Violation::WrongCount {
            buffers: buffers.len(),
            allocations: allocations.len(),
        }]);
    }
    let mut found = Vec::new();
    let pools = problem.pools();
    for (b, a) in buffers.iter().zip(allocations) {
        let Some(pool) = pools.get(a.pool) else {
            found.push(Violation::UnknownPool {
                buffer: b.name.clone(),
                pool: a.pool,
            });
            continue;
        };
        if !b.candidates.contains(&a.pool) {
            found.push(Violation::NotACandidate {
                buffer: b.name.clone(),
                pool: pool.name.clone(),
            });
        }
        let alignment = b.alignment.max(pool.alignment);
        if a.offset % alignment != 0 {
            found.push(Violation::Misaligned {
                buffer: b.name.clone(),
                offset: a.offset,
                alignment,
            });
        }
        let end = a.offset.checked_add(b.size);
        let limit = pool.size_limit.unwrap_or(u64::MAX);
        if end.is_none_or(|end| end > limit) {
            found.push(Violation::OverLimit {
                buffer: b.name.clone(),
                pool: pool.name.clone(),
                end: end.unwrap_or(u64::MAX),
                limit,
            });
        }
    }
    // Overlaps are only meaningful once every allocation is individually sound.
    if found.is_empty() {
        match problem.conflicts() {
            Conflicts::Graph(adj) => overlaps_in_graph(problem, adj, allocations, &mut found),
            Conflicts::Intervals => overlaps_in_time(problem, allocations, &mut found),
        }
    }
    found.truncate(MAX_VIOLATIONS);
    if found.is_empty() { Ok(()) } else { Err(found) }
}

fn overlap_violation(problem: &Problem, a: usize, b: usize, pool: usize) -> Violation {
    let name = |i: usize| problem.buffers()[i].name.clone();
    Violation::Overlap {
        a: name(a),
        b: name(b),
        pool: problem.pools()[pool].name.clone(),
    }
}

/// An output over its input at a shift its window does not allow.
fn outside_window(problem: &Problem, o: &Overlap, allocs: &[Allocation]) -> Violation {
    let name = |i: usize| problem.buffers()[i].name.clone();
    Violation::OutsideWindow {
        output: name(o.output),
        input: name(o.input),
        shift: i128::from(allocs[o.output].offset) - i128::from(allocs[o.input].offset),
        shifts: o.shifts,
    }
}

fn overlaps_in_graph(
    problem: &Problem,
    adj: &[Vec<usize>],
    allocs: &[Allocation],
    found: &mut Vec<Violation>,
) {
    let buffers = problem.buffers();
    for (i, neighbours) in adj.iter().enumerate() {
        for &j in neighbours.iter().filter(|&&j| j > i) {
            let (x, y) = (allocs[i], allocs[j]);
            let disjoint =
                x.offset + buffers[i].size <= y.offset || y.offset + buffers[j].size <= x.offset;
            if x.pool == y.pool && !disjoint {
                match problem.overlap_between(i, j) {
                    Some(o) if o.allows(allocs[o.output].offset, allocs[o.input].offset) => {}
                    Some(o) => found.push(outside_window(problem, o, allocs)),
                    None => found.push(overlap_violation(problem, i, j, x.pool)),
                }
                if found.len() >= MAX_VIOLATIONS {
                    return;
                }
            }
        }
    }
}

/// Below this many events the sweep runs in one piece: a second thread would not pay.
const MIN_EVENTS_TO_SPLIT: usize = 200_000;

/// An item's start or end: `(step, starts, item)`. `false` (an end) sorts before `true`
/// (a start) at the same step, so items that only touch in time never meet.
type Event = (u64, bool, usize);

/// What the time sweep places: a buffer over (a part of) its live range, or an output
/// and the input it is written over, as one, over the steps they share.
#[derive(Clone, Copy, Debug)]
struct Item {
    pool: usize,
    offset: u64,
    end: u64,
    /// The buffer, or the output and the input.
    owners: [usize; 2],
}

impl Item {
    /// Buffer `i` where it is placed.
    fn of(problem: &Problem, allocs: &[Allocation], i: usize) -> Item {
        let a = allocs[i];
        Item {
            pool: a.pool,
            offset: a.offset,
            end: a.offset + problem.buffers()[i].size,
            owners: [i, i],
        }
    }
}

/// Sweeps time; at each step the live items of one pool must be disjoint, so a new item
/// only has to be compared with its neighbours by address.
fn overlaps_in_time(problem: &Problem, allocs: &[Allocation], found: &mut Vec<Violation>) {
    let (items, mut events) = if problem.overlaps().is_empty() {
        let items = (0..allocs.len())
            .map(|i| Item::of(problem, allocs, i))
            .collect();
        let mut events = Vec::with_capacity(allocs.len() * 2);
        for (i, b) in problem.buffers().iter().enumerate() {
            if let Some(live) = b.live {
                events.push((live.start, true, i));
                events.push((live.end, false, i));
            }
        }
        (items, events)
    } else {
        pieces::split(problem, allocs, found)
    };
    let halves = events.len() >= MIN_EVENTS_TO_SPLIT;
    if halves {
        sort_on_two_threads(&mut events);
    } else {
        events.sort_unstable();
    }
    sweep_in_halves(problem, allocs, &items, &events, halves, found);
}

/// Sorts `events`, each half on its own thread, then merges the halves.
fn sort_on_two_threads(events: &mut [Event]) {
    let (left, right) = events.split_at_mut(events.len() / 2);
    crate::parallel::join(|| left.sort_unstable(), || right.sort_unstable());
    // The standard stable sort finds the two sorted halves and merges them in one pass.
    events.sort();
}

/// Sweeps the sorted `events`, when `halves` in two halves on two threads: the second
/// half starts from the items live across its first event. Either way the first
/// [`MAX_VIOLATIONS`] violations, in order, are those of one sweep from the first event
/// (each half stops once it has that many, and the second's come after the first's).
fn sweep_in_halves(
    problem: &Problem,
    allocs: &[Allocation],
    items: &[Item],
    events: &[Event],
    halves: bool,
    found: &mut Vec<Violation>,
) {
    let sweep = |events: &[Event], live: &[usize], found: &mut Vec<Violation>| {
        sweep(problem, allocs, items, events, live, found);
    };
    if !halves || events.len() < 2 {
        sweep(events, &[], found);
        return;
    }
    let (left, right) = events.split_at(events.len() / 2);
    let mut later = Vec::new();
    crate::parallel::join(
        || {
            // Live across the split: started in the first half and not ended there.
            let mut open = vec![false; items.len()];
            for &(_, starts, i) in left {
                open[i] = starts;
            }
            let across: Vec<usize> = (0..items.len()).filter(|&i| open[i]).collect();
            sweep(right, &across, &mut later);
        },
        || sweep(left, &[], found),
    );
    if found.len() < MAX_VIOLATIONS {
        found.extend(later);
    }
}

/// One sweep over `events`, starting with the items `live` (already checked) in place.
fn sweep(
    problem: &Problem,
    allocs: &[Allocation],
    items: &[Item],
    events: &[Event],
    live: &[usize],
    found: &mut Vec<Violation>,
) {
    // Per pool, the live items keyed by (offset, item).
    let mut sets: Vec<BTreeMap<(u64, usize), u64>> = vec![BTreeMap::new(); problem.pools().len()];
    for &i in live {
        let it = items[i];
        sets[it.pool].insert((it.offset, i), it.end);
    }
    for &(_, starts, i) in events {
        let it = items[i];
        let key = (it.offset, i);
        let set = &mut sets[it.pool];
        if !starts {
            set.remove(&key);
            continue;
        }
        let below = set
            .range(..key)
            .next_back()
            .filter(|(_, e)| **e > it.offset);
        let above = set.range(key..).next().filter(|((o, _), _)| *o < it.end);
        for (&(_, j), _) in below.into_iter().chain(above) {
            found.push(pieces::violation(problem, allocs, &items[j], &it));
        }
        if found.len() >= MAX_VIOLATIONS {
            return;
        }
        set.insert(key, it.end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{Buffer, Pool};

    fn at(pool: usize, offset: u64) -> Allocation {
        Allocation { pool, offset }
    }

    fn interval_problem() -> Problem {
        let mut b = Problem::builder();
        let w = b.pool(Pool::workspace("w").with_limit(100).with_alignment(4));
        b.buffer(Buffer::new("a", 10).with_candidates([w]).with_live(0, 2));
        b.buffer(Buffer::new("b", 10).with_candidates([w]).with_live(1, 3));
        b.buffer(
            Buffer::new("c", 10)
                .with_candidates([w])
                .with_live(2, 4)
                .with_alignment(8),
        );
        b.build().unwrap()
    }

    #[test]
    fn accepts_a_valid_plan() {
        let p = interval_problem();
        assert_eq!(verify(&p, &[at(0, 0), at(0, 12), at(0, 0)]), Ok(()));
    }

    #[test]
    fn finds_overlaps_in_time() {
        let p = interval_problem();
        let err = verify(&p, &[at(0, 0), at(0, 8), at(0, 24)]).unwrap_err();
        assert_eq!(
            err,
            vec![Violation::Overlap {
                a: "a".into(),
                b: "b".into(),
                pool: "w".into()
            }]
        );
        // b overlaps c from above too.
        let err = verify(&p, &[at(0, 40), at(0, 4), at(0, 0)]).unwrap_err();
        assert_eq!(err.len(), 1);
        assert!(err[0].to_string().contains("\"b\" and \"c\""), "{}", err[0]);
    }

    #[test]
    fn finds_alignment_limit_and_candidate_faults() {
        let p = interval_problem();
        let err = verify(&p, &[at(0, 2), at(0, 92), at(0, 12)]).unwrap_err();
        let text: Vec<String> = err.iter().map(ToString::to_string).collect();
        assert!(text[0].contains("\"a\" is at offset 2, not a multiple of 4"));
        assert!(text[1].contains("\"b\" ends at 102, past pool \"w\"'s limit of 100"));
        assert!(text[2].contains("\"c\" is at offset 12, not a multiple of 8"));
        assert_eq!(verify(&p, &[at(0, 0)]).unwrap_err().len(), 1);
        assert!(matches!(
            verify(&p, &[at(3, 0), at(0, 20), at(0, 40)]).unwrap_err()[0],
            Violation::UnknownPool { .. }
        ));
    }

    /// The sweep in two halves (the second starting from the buffers live across its
    /// first event) finds the violations of one sweep, in the same order: problems with
    /// no overlap, a few, and more than are reported, in one pool and in two.
    #[test]
    fn sweep_in_halves_is_one_sweep() {
        let mut rng = crate::test_rng::Rng::seeded(0x5e1f_c4ec);
        let mut counts = Vec::new();
        for case in 0..300 {
            let mut b = Problem::builder();
            let pools = [b.pool(Pool::workspace("p")), b.pool(Pool::workspace("q"))];
            let n = 20 + rng.below(300) as usize;
            // Wider address ranges make overlaps rarer.
            let spread = 10 + rng.below(4) * 4_000;
            let mut allocs = Vec::new();
            for i in 0..n {
                let start = rng.below(100);
                let pool = rng.below(2) as usize;
                b.buffer(
                    Buffer::new(format!("b{i}"), 1 + rng.below(8))
                        .with_candidates(pools)
                        .with_live(start, start + 1 + rng.below(30)),
                );
                allocs.push(at(pool, rng.below(spread)));
            }
            let p = b.build().unwrap();
            let mut events: Vec<Event> = Vec::new();
            for (i, buffer) in p.buffers().iter().enumerate() {
                let live = buffer.live.unwrap();
                events.extend([(live.start, true, i), (live.end, false, i)]);
            }
            events.sort_unstable();
            let items: Vec<Item> = (0..n).map(|i| Item::of(&p, &allocs, i)).collect();
            let mut once = Vec::new();
            sweep_in_halves(&p, &allocs, &items, &events, false, &mut once);
            let mut halves = Vec::new();
            sweep_in_halves(&p, &allocs, &items, &events, true, &mut halves);
            // `verify` reports the first `MAX_VIOLATIONS` (a sweep may pass it by one).
            once.truncate(MAX_VIOLATIONS);
            halves.truncate(MAX_VIOLATIONS);
            assert_eq!(halves, once, "case {case}");
            counts.push(once.len());
        }
        // Plans with no overlap, with a few, and with more than are reported.
        assert!(counts.contains(&0), "{counts:?}");
        assert!(
            counts.iter().any(|&c| c > 0 && c < MAX_VIOLATIONS),
            "{counts:?}"
        );
        assert!(counts.iter().any(|&c| c >= MAX_VIOLATIONS), "{counts:?}");
    }

    /// Sorting in two halves and merging gives the one sort's order.
    #[test]
    fn events_sorted_on_two_threads_are_sorted() {
        let mut rng = crate::test_rng::Rng::seeded(0x50_27ed);
        for n in [0, 1, 2, 3, 17, 1000] {
            let mut events: Vec<Event> = (0..n)
                .map(|i| (rng.below(50), rng.below(2) == 0, i))
                .collect();
            let mut expected = events.clone();
            expected.sort_unstable();
            sort_on_two_threads(&mut events);
            assert_eq!(events, expected, "{n} events");
        }
    }

    #[test]
    fn graph_conflicts_and_candidates() {
        let mut b = Problem::builder();
        let w = b.pool(Pool::workspace("w"));
        let v = b.pool(Pool::workspace("v"));
        let x = b.buffer(Buffer::new("x", 4).with_candidates([w, v]));
        let y = b.buffer(Buffer::new("y", 4).with_candidates([w]));
        b.conflict(x, y);
        let p = b.build().unwrap();
        assert_eq!(verify(&p, &[at(1, 0), at(0, 0)]), Ok(()));
        assert_eq!(verify(&p, &[at(0, 4), at(0, 0)]), Ok(()));
        assert!(matches!(
            verify(&p, &[at(0, 2), at(0, 0)]).unwrap_err()[0],
            Violation::Overlap { .. }
        ));
        assert!(matches!(
            verify(&p, &[at(0, 8), at(1, 0)]).unwrap_err()[0],
            Violation::NotACandidate { .. }
        ));
    }
}
