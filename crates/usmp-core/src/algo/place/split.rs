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
//! The side that finishes its stretch first goes on with its buffers of the next stretch
//! while the other works, skipping (and holding back after them) those whose lives meet
//! the crossing buffer's or a held-back one's: buffers whose lives do not meet never read
//! what the other files, so the order between them does not matter. The ranges it places
//! reach the root's `below` before the crossing buffer is placed; only a query over
//! every step reads that list, and such a buffer's life meets every other, so nothing
//! was placed ahead of it. (On a million random lives first fit's two sides idled 0.55 s
//! of 8.5 s waiting for each other before, 0.34 s after; the last stretch has nothing
//! to run ahead into.)

use std::sync::atomic::{AtomicBool, Ordering};

use super::addr::Addr;
use super::gaps::Scratch;
use super::trees::{Filed, Half};
use super::{Fit, Occupancy, TimeIndex, TimeTree, choose, place_each, search};
use crate::plan::{Allocation, PlanError};
use crate::problem::Problem;

/// Below this many buffers a placement runs one by one: two threads would not pay.
const MIN_BUFFERS: usize = 20_000;

/// Below this many buffers on either side, a stretch between two crossing buffers is
/// placed on one thread (side after side: the same result).
const MIN_SIDE: usize = 16;

/// Whether a placement of `n` buffers under `occupancy` is split in time.
pub(super) fn applies<W: Addr>(occupancy: &Occupancy<'_, '_, W>, n: usize) -> bool {
    n >= MIN_BUFFERS && splittable(occupancy).is_some()
}

/// The time index, when the placement searches gaps over at least two steps: then each
/// pool's tree is [`Filed`](super::trees::Filed) and its root has two halves.
fn splittable<'l, W>(occupancy: &Occupancy<'l, '_, W>) -> Option<&'l TimeIndex> {
    let time = occupancy.layout.time.as_ref()?;
    (time.segment_count >= 2 && !matches!(occupancy.fit, Fit::Stack)).then_some(time)
}

/// Places `order` as [`place_each`](super::place_each) would, each stretch between two
/// crossing buffers on two threads when `parallel` and both sides are long enough.
pub(super) fn place<W: Addr>(
    occupancy: &mut Occupancy<'_, '_, W>,
    order: &[usize],
    lower_bound: u64,
    parallel: bool,
) -> Result<(), PlanError> {
    let Some(time) = splittable(occupancy) else {
        return place_each(occupancy, order, lower_bound);
    };
    // Every pool's tree has the same steps, and so the same middle.
    let segments = &time.segments;
    let stretches = stretches(order, segments, time.segment_count / 2);
    let mut sides: [Vec<(usize, usize)>; 2] = Default::default();
    for (s, stretch) in stretches.iter().enumerate() {
        // Less the buffers placed ahead during the stretch before.
        for (side, all) in sides.iter_mut().zip(&stretch.sides) {
            side.clear();
            side.extend(all.iter().filter(|&&(_, b)| occupancy.placed[b].is_none()));
        }
        let both = parallel && sides[0].len().max(sides[1].len()) >= MIN_SIDE;
        // Running ahead only pays while the other side works on the other thread. On one
        // thread (tests) the first side runs ahead as far as it may: the same buffers
        // are placed, only sooner.
        let next = match (stretch.crossing, stretches.get(s + 1)) {
            (Some(at), Some(next)) if both || !parallel => Some(Ahead {
                sides: [&next.sides[0], &next.sides[1]],
                crossing: segments[order[at]],
            }),
            _ => None,
        };
        place_sides(
            occupancy,
            segments,
            [&sides[0], &sides[1]],
            next,
            lower_bound,
            both,
        )?;
        let Some(at) = stretch.crossing else { break };
        place_each(occupancy, &order[at..=at], lower_bound)?;
    }
    Ok(())
}

/// The buffers of the order up to a crossing buffer (or the end), each side's as
/// `(position in the order, buffer)`, and that crossing buffer's position.
struct Stretch {
    sides: [Vec<(usize, usize)>; 2],
    crossing: Option<usize>,
}

/// `order` cut at each buffer whose life crosses `middle`.
fn stretches(order: &[usize], segments: &[(usize, usize)], middle: usize) -> Vec<Stretch> {
    let mut stretches = Vec::new();
    let mut sides = [Vec::new(), Vec::new()];
    for (at, &buffer) in order.iter().enumerate() {
        let (lo, hi) = segments[buffer];
        if hi <= middle {
            sides[0].push((at, buffer));
        } else if lo >= middle {
            sides[1].push((at, buffer));
        } else {
            let sides = std::mem::take(&mut sides);
            stretches.push(Stretch {
                sides,
                crossing: Some(at),
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

/// One side's placement: what it placed and where (which the root's `below` lists are
/// told afterwards).
#[derive(Default)]
struct Side {
    scratch: Scratch,
    work: u64,
    placed: Vec<(usize, Allocation)>,
    /// The first buffer that fitted nowhere: its position in the order, and the error.
    failed: Option<(usize, PlanError)>,
}

/// What every side's placement reads.
struct Shared<'a> {
    problem: &'a Problem,
    fit: Fit,
    lower_bound: u64,
    segments: &'a [(usize, usize)],
}

/// Places `sides[0]` in the first halves and `sides[1]` in the second (each `(position
/// in the order, buffer)`), and, while the other side works, what each may of the next
/// stretch's (`ahead`); then files what they placed at the roots.
fn place_sides<W: Addr>(
    occupancy: &mut Occupancy<'_, '_, W>,
    segments: &[(usize, usize)],
    sides: [&[(usize, usize)]; 2],
    ahead: Option<Ahead<'_>>,
    lower_bound: u64,
    parallel: bool,
) -> Result<(), PlanError> {
    let shared = Shared {
        problem: occupancy.layout.problem,
        fit: occupancy.fit,
        lower_bound,
        segments,
    };
    let mut results = [Side::default(), Side::default()];
    results[0].scratch = std::mem::take(&mut occupancy.scratch);
    {
        let mut halves = (Vec::new(), Vec::new());
        for tree in &mut occupancy.trees {
            let (l, r) = filed(tree).halves();
            halves.0.push(l);
            halves.1.push(r);
        }
        let [left, right] = &mut results;
        let (mut left_halves, mut right_halves) = halves;
        // Set by each side once its own buffers are placed.
        let done = [AtomicBool::new(false), AtomicBool::new(false)];
        let (shared, done, ahead) = (&shared, &done, ahead.as_ref());
        let mut run_left = || {
            place_side(shared, sides[0], &mut left_halves, left);
            done[0].store(true, Ordering::Release);
            if let Some(ahead) = ahead {
                place_ahead(shared, ahead, 0, &done[1], &mut left_halves, left);
            }
        };
        let mut run_right = || {
            place_side(shared, sides[1], &mut right_halves, right);
            done[1].store(true, Ordering::Release);
            if let Some(ahead) = ahead {
                place_ahead(shared, ahead, 1, &done[0], &mut right_halves, right);
            }
        };
        if parallel {
            std::thread::scope(|scope| {
                let handle = scope.spawn(run_left);
                run_right();
                if let Err(panic) = handle.join() {
                    std::panic::resume_unwind(panic);
                }
            });
        } else {
            run_left();
            run_right();
        }
    }
    occupancy.scratch = std::mem::take(&mut results[0].scratch);
    let mut failed: Option<(usize, PlanError)> = None;
    for side in results {
        occupancy.work += side.work;
        for (buffer, allocation) in side.placed {
            occupancy.placed[buffer] = Some(allocation);
            let end = allocation.offset + shared.problem.buffers()[buffer].size;
            filed(&mut occupancy.trees[allocation.pool]).file_at_root((allocation.offset, end));
        }
        if let Some((at, error)) = side.failed
            && failed.as_ref().is_none_or(|(first, _)| at < *first)
        {
            failed = Some((at, error));
        }
    }
    match failed {
        Some((_, error)) => Err(error),
        None => Ok(()),
    }
}

/// A split placement's pool tree: gap searches keep [`Filed`] trees.
fn filed<W>(tree: &mut TimeTree<W>) -> &mut Filed<W> {
    let TimeTree::Filed(filed) = tree else {
        unreachable!("a split placement searches gaps (split::applies)")
    };
    filed
}

/// Places `buffers` (each with its position in the order) in order within one half of
/// each pool's tree (`halves`), until one fits nowhere.
fn place_side<W: Addr>(
    shared: &Shared<'_>,
    buffers: &[(usize, usize)],
    halves: &mut [Half<'_, W>],
    side: &mut Side,
) {
    for &(at, buffer) in buffers {
        if let Err(error) = place_one(shared, buffer, halves, side) {
            side.failed = Some((at, error));
            return;
        }
    }
}

/// Places side `k`'s buffers of the next stretch that may go ahead (see [`Ahead`]),
/// while the other side (`other_done` not yet set) still works. A buffer that fits
/// nowhere is held back too: its stretch meets it again and fails the same way.
fn place_ahead<W: Addr>(
    shared: &Shared<'_>,
    ahead: &Ahead<'_>,
    k: usize,
    other_done: &AtomicBool,
    halves: &mut [Half<'_, W>],
    side: &mut Side,
) {
    if side.failed.is_some() {
        return;
    }
    let mut held = Steps::default();
    held.add(ahead.crossing);
    for &(_, buffer) in ahead.sides[k] {
        if other_done.load(Ordering::Acquire) {
            return;
        }
        let life = shared.segments[buffer];
        if held.meets(life) || place_one(shared, buffer, halves, side).is_err() {
            held.add(life);
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

/// Searches and files `buffer` within one half of each pool's tree; the work counts
/// only when it fits.
fn place_one<W: Addr>(
    shared: &Shared<'_>,
    buffer: usize,
    halves: &mut [Half<'_, W>],
    side: &mut Side,
) -> Result<(), PlanError> {
    let problem = shared.problem;
    let (lo, hi) = shared.segments[buffer];
    let size = problem.buffers()[buffer].size;
    let mut work = 0;
    let allocation = choose(problem, buffer, shared.lower_bound, |pool| {
        let mut runs = Vec::with_capacity(64);
        halves[pool].ranges_meeting(lo, hi, &mut runs);
        let align = problem.alignment_in(buffer, pool);
        let (spent, offset) = search(&runs, shared.fit, size, align, &mut side.scratch);
        work += spent;
        offset
    })?;
    side.work += work;
    let range = (allocation.offset, allocation.offset + size);
    halves[allocation.pool].file(lo, hi, range);
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
