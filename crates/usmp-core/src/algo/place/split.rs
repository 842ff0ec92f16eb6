//! Gap-search placement in the two halves of time at once.
//!
//! A buffer whose life lies within the first half of the steps never meets one whose
//! life lies within the second: its search reads, and its filing writes, only the root's
//! own ranges and the left subtree of each pool's [`Filed`](super::trees::Filed) tree.
//! So between two buffers whose lives cross the middle, the left buffers and the right
//! buffers of the order are placed side by side, each side in the order's order, on two
//! threads; a crossing buffer is placed alone, with both halves in hand. Each side sees
//! exactly what the one-by-one placement would have shown it (the root's `below` list,
//! which only a crossing query reads, is brought up to date before every crossing
//! buffer), so the plan, the work counted and any error are the same for any thread
//! count (tested against [`place_each`](super::place_each)).
//!
//! Two things keep both threads busy when one side has less to do:
//! - The side that finishes its stretch first goes on with its buffers of the next
//!   stretch while the other works, skipping (and holding back after them) those whose
//!   lives meet the crossing buffer's or a held-back one's: buffers whose lives do not
//!   meet never read what the other files, so the order between them does not matter.
//!   The ranges it places reach the root's `below` before the crossing buffer is placed;
//!   only a query over every step reads that list, and such a buffer's life meets every
//!   other, so nothing was placed ahead of it.
//! - When the other side has nothing left to do (its stretch placed and nothing more it
//!   may run ahead to), the side still working stops, and the rest of its stretch is
//!   placed the same way within its half, split at the half's own middle, on both
//!   threads (down to [`MAX_DEPTH`] levels).
//!
//! On a million random lives the placement took 0.55 s (first fit) and 0.9 s (greedy by
//! breadth) longer than half its threads' work before either, 0.09 s and 0.08 s with
//! both.

use std::sync::atomic::{AtomicBool, Ordering};

use super::addr::Addr;
use super::gaps::Scratch;
use super::trees::{Filed, Part};
use super::{Fit, Occupancy, TimeIndex, TimeTree, choose, place_each, search};
use crate::problem::Problem;
use crate::solution::{Allocation, PlanError};

/// Below this many buffers a placement runs one by one: two threads would not pay.
const MIN_BUFFERS: usize = 20_000;

/// Below this many buffers on both sides, a stretch between two crossing buffers is
/// placed on one thread (side after side: the same result); a side stops early in the
/// last stretch only with at least this many left.
const MIN_SIDE: usize = 16;

/// How many times the rest of a last stretch's side is split again.
const MAX_DEPTH: usize = 3;

/// Above this many pools a placement runs one by one: every stretch takes each pool's
/// halves, so a split placement costs stretches x pools (20,000 pools took 12 s).
const MAX_POOLS: usize = 64;

/// Whether a placement of `n` buffers under `occupancy` is split in time.
pub(super) fn applies<W: Addr>(occupancy: &Occupancy<'_, '_, W>, n: usize) -> bool {
    n >= MIN_BUFFERS && occupancy.trees.len() <= MAX_POOLS && splittable(occupancy).is_some()
}

/// The time index, when the placement searches gaps over at least two steps: then each
/// pool's tree is [`Filed`](super::trees::Filed) and its root has two halves.
fn splittable<'l, W>(occupancy: &Occupancy<'l, '_, W>) -> Option<&'l TimeIndex> {
    let time = occupancy.layout.time.as_ref()?;
    (time.segment_count >= 2 && !matches!(occupancy.fit, Fit::Stack)).then_some(time)
}

/// Places `order` as [`place_each`](super::place_each) would, each stretch between two
/// crossing buffers on two threads when `parallel` and a side is long enough.
pub(super) fn place<W: Addr>(
    occupancy: &mut Occupancy<'_, '_, W>,
    order: &[usize],
    lower_bound: u64,
    parallel: bool,
) -> Result<(), PlanError> {
    let Some(time) = splittable(occupancy) else {
        return place_each(occupancy, order, lower_bound);
    };
    let shared = Shared {
        problem: occupancy.layout.problem,
        fit: occupancy.fit,
        lower_bound,
        segments: &time.segments,
        parallel,
    };
    let buffers: Vec<(usize, usize)> = order.iter().copied().enumerate().collect();
    let mut side = Side {
        scratch: std::mem::take(&mut occupancy.scratch),
        ..Side::default()
    };
    {
        let mut parts: Vec<Part<'_, W>> = occupancy
            .trees
            .iter_mut()
            .map(|t| filed(t).whole())
            .collect();
        place_within(&shared, &mut parts, &buffers, &mut side, 0);
    }
    occupancy.scratch = std::mem::take(&mut side.scratch);
    occupancy.work += side.work;
    for (buffer, allocation) in side.placed {
        occupancy.placed[buffer] = Some(allocation);
    }
    match side.failed {
        Some((_, error)) => Err(error),
        None => Ok(()),
    }
}

/// Places `buffers` (each `(position in the order, buffer)`, in order) in `parts` (one
/// per pool, all over the same steps), stretch by stretch: the buffers of each half side
/// by side, then the one whose life crosses the middle. Stops at the first that fits
/// nowhere (`side.failed`).
fn place_within<W: Addr>(
    shared: &Shared<'_>,
    parts: &mut [Part<'_, W>],
    buffers: &[(usize, usize)],
    side: &mut Side,
    depth: usize,
) {
    let Some(middle) = parts.first().and_then(Part::middle) else {
        place_side(shared, buffers, parts, side, None);
        return;
    };
    let stretches = stretches(buffers, shared.segments, middle);
    // Per side, the positions of the stretch's buffers placed ahead in the one before.
    let mut ahead: [Vec<usize>; 2] = Default::default();
    let mut sides: [Vec<(usize, usize)>; 2] = Default::default();
    for (s, stretch) in stretches.iter().enumerate() {
        for k in 0..2 {
            let (all, done) = (&stretch.sides[k], &ahead[k]);
            sides[k].clear();
            // Both ascend by position: one pass drops the buffers placed ahead.
            let mut d = 0;
            for &(at, buffer) in all {
                if done.get(d) == Some(&at) {
                    d += 1;
                } else {
                    sides[k].push((at, buffer));
                }
            }
        }
        let both = shared.parallel && sides[0].len().max(sides[1].len()) >= MIN_SIDE;
        // Running ahead only pays while the other side works on the other thread. On one
        // thread (tests) the first side runs ahead as far as it may: the same buffers
        // are placed, only sooner.
        let next = match (stretch.crossing, stretches.get(s + 1)) {
            (Some((_, buffer)), Some(next)) if both || !shared.parallel => Some(Ahead {
                sides: [&next.sides[0], &next.sides[1]],
                crossing: shared.segments[buffer],
            }),
            _ => None,
        };
        let stretch_sides = [sides[0].as_slice(), sides[1].as_slice()];
        let run = Run {
            ahead: next,
            parallel: both,
            depth,
        };
        ahead = place_sides(shared, parts, stretch_sides, run, side);
        if side.failed.is_some() {
            return;
        }
        let Some((at, buffer)) = stretch.crossing else {
            break;
        };
        if let Err(error) = place_one(shared, buffer, parts, side) {
            side.failed = Some((at, error));
            return;
        }
    }
}

/// The buffers up to a crossing buffer (or the end), each side's as `(position in the
/// order, buffer)`, and that crossing buffer.
struct Stretch {
    sides: [Vec<(usize, usize)>; 2],
    crossing: Option<(usize, usize)>,
}

/// `buffers` cut at each one whose life crosses `middle`.
fn stretches(
    buffers: &[(usize, usize)],
    segments: &[(usize, usize)],
    middle: usize,
) -> Vec<Stretch> {
    let mut stretches = Vec::new();
    let mut sides = [Vec::new(), Vec::new()];
    for &(at, buffer) in buffers {
        let (lo, hi) = segments[buffer];
        if hi <= middle {
            sides[0].push((at, buffer));
        } else if lo >= middle {
            sides[1].push((at, buffer));
        } else {
            let sides = std::mem::take(&mut sides);
            stretches.push(Stretch {
                sides,
                crossing: Some((at, buffer)),
            });
        }
    }
    stretches.push(Stretch {
        sides,
        crossing: None,
    });
    stretches
}

/// The next stretch's buffers, which a side that finishes first may place while the
/// other still works: each whose life meets neither the crossing buffer's steps
/// `crossing` nor the life of one of its side's buffers held back before it. Two buffers
/// whose lives do not meet read none of the lists the other's filing writes, so each
/// finds what it would have found in order.
struct Ahead<'a> {
    sides: [&'a [(usize, usize)]; 2],
    crossing: (usize, usize),
}

/// How one stretch's sides are run.
struct Run<'a> {
    /// What each side may place ahead once done.
    ahead: Option<Ahead<'a>>,
    /// On two threads.
    parallel: bool,
    /// How many times the sides were split below the whole tree: below [`MAX_DEPTH`] a
    /// side stops when the other has nothing left to do, and its rest is split again.
    depth: usize,
}

/// One side's placement: what it placed and where (which the part's top `below` lists
/// are told afterwards).
#[derive(Default)]
struct Side {
    scratch: Scratch,
    work: u64,
    placed: Vec<(usize, Allocation)>,
    /// The positions of the next stretch's buffers it placed ahead, ascending.
    ahead: Vec<usize>,
    /// The first buffer that fitted nowhere: its position in the order, and the error.
    failed: Option<(usize, PlanError)>,
}

/// What every side's placement reads.
struct Shared<'a> {
    problem: &'a Problem,
    fit: Fit,
    lower_bound: u64,
    segments: &'a [(usize, usize)],
    /// Whether two threads may be used.
    parallel: bool,
}

/// Places `sides[0]` in the first halves of `parts` and `sides[1]` in the second (each
/// `(position in the order, buffer)`) as `run` says, then files what they placed at the
/// parts' tops and adds it to `side`. Returns, per side, the positions of the next
/// stretch's buffers placed ahead.
fn place_sides<W: Addr>(
    shared: &Shared<'_>,
    parts: &mut [Part<'_, W>],
    sides: [&[(usize, usize)]; 2],
    run: Run<'_>,
    side: &mut Side,
) -> [Vec<usize>; 2] {
    let mut results = [Side::default(), Side::default()];
    results[0].scratch = std::mem::take(&mut side.scratch);
    {
        let mut halves = (Vec::new(), Vec::new());
        for part in parts.iter_mut() {
            let Some((l, r)) = part.halves() else {
                unreachable!("parts with a middle have halves (place_within)")
            };
            halves.0.push(l);
            halves.1.push(r);
        }
        let [left, right] = &mut results;
        let (mut left_halves, mut right_halves) = halves;
        let signals = Signals::default();
        let (run, signals) = (&run, &signals);
        let mut run_left = || run_side(shared, run, 0, sides[0], &mut left_halves, left, signals);
        let mut run_right =
            || run_side(shared, run, 1, sides[1], &mut right_halves, right, signals);
        let placed = if run.parallel {
            let (left, right) = crate::parallel::join(run_left, run_right);
            [left, right]
        } else {
            [run_left(), run_right()]
        };
        // A side that stopped early: the rest within its half, split again.
        let halves = [&mut left_halves, &mut right_halves];
        for (k, (halves, result)) in halves.into_iter().zip([left, right]).enumerate() {
            let rest = &sides[k][placed[k]..];
            if !rest.is_empty() && result.failed.is_none() {
                place_within(shared, halves, rest, result, run.depth + 1);
            }
        }
    }
    side.scratch = std::mem::take(&mut results[0].scratch);
    let mut ahead = [Vec::new(), Vec::new()];
    for (k, result) in results.into_iter().enumerate() {
        side.work += result.work;
        for &(buffer, allocation) in &result.placed {
            let end = allocation.offset + shared.problem.buffers()[buffer].size;
            parts[allocation.pool].file_at_top((allocation.offset, end));
        }
        side.placed.extend(result.placed);
        ahead[k] = result.ahead;
        if let Some((at, error)) = result.failed
            && side.failed.as_ref().is_none_or(|(first, _)| at < *first)
        {
            side.failed = Some((at, error));
        }
    }
    ahead
}

/// What the two sides of a stretch tell each other, per side.
#[derive(Default)]
struct Signals {
    /// Its own buffers are placed (or it stopped early): the other stops running ahead.
    done: [AtomicBool; 2],
    /// It has nothing left to do (after running ahead): the other may stop early.
    idle: [AtomicBool; 2],
}

/// Side `k` of a stretch: its `buffers` (stopping early once the other side is idle,
/// while [`MAX_DEPTH`] allows splitting its rest again), then what it may run ahead to.
/// Returns how many of its buffers it went through.
fn run_side<W: Addr>(
    shared: &Shared<'_>,
    run: &Run<'_>,
    k: usize,
    buffers: &[(usize, usize)],
    halves: &mut [Part<'_, W>],
    side: &mut Side,
    signals: &Signals,
) -> usize {
    let stop = (run.depth < MAX_DEPTH).then_some(&signals.idle[1 - k]);
    let placed = place_side(shared, buffers, halves, side, stop);
    signals.done[k].store(true, Ordering::Release);
    if let Some(ahead) = &run.ahead {
        place_ahead(shared, ahead, k, &signals.done[1 - k], halves, side);
    }
    signals.idle[k].store(true, Ordering::Release);
    placed
}

/// A split placement's pool tree: gap searches keep [`Filed`] trees.
fn filed<W>(tree: &mut TimeTree<W>) -> &mut Filed<W> {
    let TimeTree::Filed(filed) = tree else {
        unreachable!("a split placement searches gaps (split::applies)")
    };
    filed
}

/// Places `buffers` (each with its position in the order) in order within `parts`, until
/// one fits nowhere or, given `stop`, once it is set with at least [`MIN_SIDE`] buffers
/// left. Returns how many it went through.
fn place_side<W: Addr>(
    shared: &Shared<'_>,
    buffers: &[(usize, usize)],
    parts: &mut [Part<'_, W>],
    side: &mut Side,
    stop: Option<&AtomicBool>,
) -> usize {
    for (i, &(at, buffer)) in buffers.iter().enumerate() {
        let left = buffers.len() - i;
        if left >= MIN_SIDE && stop.is_some_and(|s| s.load(Ordering::Acquire)) {
            return i;
        }
        if let Err(error) = place_one(shared, buffer, parts, side) {
            side.failed = Some((at, error));
            return buffers.len();
        }
    }
    buffers.len()
}

/// Places side `k`'s buffers of the next stretch that may go ahead (see [`Ahead`]),
/// while the other side (`other_done` not yet set) still works. A buffer that fits
/// nowhere is held back too: its stretch meets it again and fails the same way.
fn place_ahead<W: Addr>(
    shared: &Shared<'_>,
    ahead: &Ahead<'_>,
    k: usize,
    other_done: &AtomicBool,
    parts: &mut [Part<'_, W>],
    side: &mut Side,
) {
    if side.failed.is_some() {
        return;
    }
    let mut held = Steps::default();
    held.add(ahead.crossing);
    for &(at, buffer) in ahead.sides[k] {
        if other_done.load(Ordering::Acquire) {
            return;
        }
        let life = shared.segments[buffer];
        if held.meets(life) || place_one(shared, buffer, parts, side).is_err() {
            held.add(life);
        } else {
            side.ahead.push(at);
        }
    }
}

/// A set of steps, as sorted disjoint ranges `[lo, hi)`.
#[derive(Default)]
struct Steps(Vec<(usize, usize)>);

impl Steps {
    /// Whether a step of `lo..hi` is in the set.
    fn meets(&self, (lo, hi): (usize, usize)) -> bool {
        let first = self.0.partition_point(|r| r.1 <= lo);
        self.0.get(first).is_some_and(|r| r.0 < hi)
    }

    /// Adds the steps `lo..hi`.
    fn add(&mut self, (lo, hi): (usize, usize)) {
        if lo >= hi {
            return;
        }
        // The ranges that meet or touch `lo..hi` become one.
        let first = self.0.partition_point(|r| r.1 < lo);
        let last = first + self.0[first..].partition_point(|r| r.0 <= hi);
        if first == last {
            self.0.insert(first, (lo, hi));
            return;
        }
        let merged = (lo.min(self.0[first].0), hi.max(self.0[last - 1].1));
        self.0[first] = merged;
        self.0.drain(first + 1..last);
    }
}

/// Searches and files `buffer` within `parts` (one per pool); the work counts
/// only when it fits.
fn place_one<W: Addr>(
    shared: &Shared<'_>,
    buffer: usize,
    parts: &mut [Part<'_, W>],
    side: &mut Side,
) -> Result<(), PlanError> {
    let problem = shared.problem;
    let (lo, hi) = shared.segments[buffer];
    let size = problem.buffers()[buffer].size;
    let mut work = 0;
    let allocation = choose(problem, buffer, shared.lower_bound, |pool| {
        let mut runs = Vec::with_capacity(64);
        parts[pool].ranges_meeting(lo, hi, &mut runs);
        let align = problem.alignment_in(buffer, pool);
        let (spent, offset) = search(&runs, shared.fit, size, align, &mut side.scratch);
        work += spent;
        offset
    })?;
    side.work += work;
    let range = (allocation.offset, allocation.offset + size);
    parts[allocation.pool].file(lo, hi, range);
    side.placed.push((buffer, allocation));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::Layout;
    use super::*;
    use crate::problem::{Buffer, Pool, ProblemBuilder};

    /// Buffers with short lives over `steps` steps in two pools, the first too small
    /// for all of them (so some fall back, and some problems fit nowhere).
    fn problem(rng: &mut crate::test_rng::Rng, n: u64, steps: u64) -> Problem {
        let mut b = ProblemBuilder::default();
        let fast = b.pool(Pool::workspace("fast").with_limit(2_000 + rng.below(6_000)));
        let slow = Pool::workspace("slow");
        let slow = b.pool(if rng.below(4) == 0 {
            slow.with_limit(20_000)
        } else {
            slow
        });
        for i in 0..n {
            let start = rng.below(steps);
            let longest = if rng.below(8) == 0 { steps } else { 12 };
            let end = start + 1 + rng.below(longest);
            let buffer = Buffer::new(format!("b{i}"), 1 + rng.below(300))
                .with_alignment(1 << rng.below(4))
                .with_live(start, end)
                .with_candidates([fast, slow]);
            b.buffer(buffer);
        }
        b.build().unwrap()
    }

    /// A placement of `order` one by one (`how` `None`) or split (on two threads or
    /// not), with address ranges kept in the width `W`: the allocations and the work, or
    /// the error.
    fn placed<W: Addr>(
        layout: &Layout<'_>,
        order: &[usize],
        fit: Fit,
        how: Option<bool>,
    ) -> Result<(Vec<Allocation>, u64), String> {
        let mut occupancy = Occupancy::<W>::new(layout, fit);
        let result = match how {
            None => place_each(&mut occupancy, order, 0),
            Some(parallel) => place(&mut occupancy, order, 0, parallel),
        };
        let work = occupancy.work;
        match result {
            Ok(()) => Ok((occupancy.into_allocations(), work)),
            Err(e) => Err(format!("{e:?}")),
        }
    }

    /// A buffer that fits nowhere while its side runs ahead is held back, and so is a
    /// later one whose life meets it: placed first, that one would raise the offset the
    /// failing buffer's error reports.
    #[test]
    fn a_buffer_that_fails_ahead_holds_back_those_meeting_it() {
        let mut b = ProblemBuilder::default();
        let p = b.pool(Pool::workspace("p").with_limit(40));
        let mut buffer = |name: &str, size: u64, (start, end): (u64, u64)| {
            let buffer = Buffer::new(name, size).with_live(start, end);
            b.buffer(buffer.with_candidates([p]))
        };
        // Nine steps between the bounds 0, 10, 20, ..., 80, 100: the middle is the fifth,
        // 40..50, which `c` crosses; `f` and `x` come after it on the left, `x` meeting
        // `f` only.
        let order = [
            buffer("a", 1, (0, 10)),
            buffer("b", 1, (50, 60)),
            buffer("d", 1, (70, 80)),
            buffer("e", 1, (30, 40)),
            buffer("c", 10, (20, 100)),
            buffer("f", 50, (0, 20)),
            buffer("x", 5, (10, 20)),
        ];
        let problem = b.build().unwrap();
        let layout = Layout::new(&problem);
        let one_by_one = placed::<u64>(&layout, &order, Fit::Lowest, None);
        let error = one_by_one.clone().unwrap_err();
        assert!(
            error.contains("\"f\"") && error.contains("needed: 51"),
            "{error}"
        );
        // On one thread the left side runs ahead as far as it may.
        assert_eq!(
            placed::<u64>(&layout, &order, Fit::Lowest, Some(false)),
            one_by_one
        );
    }

    /// The split placement, on one thread and on two, gives the one-by-one placement's
    /// allocations, work count and error, under both gap searches, for orders where
    /// crossing buffers come rarely (long stretches, two threads) and often; and so does
    /// either placement with ranges kept in 32 bits. On one thread the first side runs
    /// ahead as far as it may, so holding back is checked whatever the timing.
    #[test]
    fn split_placement_is_the_one_by_one_placement() {
        let mut rng = crate::test_rng::Rng::seeded(0x5eed_5e11);
        let mut errors = 0;
        for case in 0..60 {
            let steps = 40 + rng.below(400);
            let n = 300 + rng.below(900);
            let problem = problem(&mut rng, n, steps);
            let layout = Layout::new(&problem);
            assert!(layout.narrow, "case {case}: small problems fit in 32 bits");
            let n = problem.buffers().len();
            let mut order: Vec<usize> = (0..n).collect();
            for k in (1..n).rev() {
                order.swap(k, rng.below(k as u64 + 1) as usize);
            }
            for fit in [Fit::Lowest, Fit::Tightest] {
                let expected = placed::<u64>(&layout, &order, fit, None);
                errors += usize::from(expected.is_err());
                for (how, name) in [(Some(false), "one thread"), (Some(true), "two threads")] {
                    let found = placed::<u64>(&layout, &order, fit, how);
                    assert_eq!(found, expected, "case {case}, {fit:?}, {name}");
                }
                for (how, name) in [(None, "one by one"), (Some(true), "two threads")] {
                    let found = placed::<u32>(&layout, &order, fit, how);
                    assert_eq!(found, expected, "case {case}, {fit:?}, 32 bits, {name}");
                }
            }
        }
        // Both outcomes are covered.
        assert!(
            errors > 0 && errors < 120,
            "{errors} of 120 placements failed"
        );
    }
}
