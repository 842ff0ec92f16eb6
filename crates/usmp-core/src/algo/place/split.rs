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
    let middle = time.segment_count / 2;
    let segments = &time.segments;
    let mut left = Vec::new();
    let mut right = Vec::new();
    let mut position = 0;
    while position < order.len() {
        left.clear();
        right.clear();
        let mut crossing = None;
        for (at, &buffer) in order.iter().enumerate().skip(position) {
            let (lo, hi) = segments[buffer];
            if hi <= middle {
                left.push((at, buffer));
            } else if lo >= middle {
                right.push((at, buffer));
            } else {
                crossing = Some(at);
                break;
            }
        }
        let both = parallel && left.len().min(right.len()) >= MIN_SIDE;
        place_sides(occupancy, segments, &left, &right, lower_bound, both)?;
        let Some(at) = crossing else { break };
        place_each(occupancy, &order[at..=at], lower_bound)?;
        position = at + 1;
    }
    Ok(())
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

/// Places the left buffers in the first halves and the right ones in the second (each
/// `(position in the order, buffer)`), then files what they placed at the roots.
fn place_sides<W: Addr>(
    occupancy: &mut Occupancy<'_, '_, W>,
    segments: &[(usize, usize)],
    left: &[(usize, usize)],
    right: &[(usize, usize)],
    lower_bound: u64,
    parallel: bool,
) -> Result<(), PlanError> {
    let (problem, fit) = (occupancy.layout.problem, occupancy.fit);
    let mut sides = [Side::default(), Side::default()];
    sides[0].scratch = std::mem::take(&mut occupancy.scratch);
    {
        let mut halves = (Vec::new(), Vec::new());
        for tree in &mut occupancy.trees {
            let (l, r) = filed(tree).halves();
            halves.0.push(l);
            halves.1.push(r);
        }
        let [left_side, right_side] = &mut sides;
        let (mut left_halves, mut right_halves) = halves;
        let mut run_left = || {
            place_side(
                problem,
                fit,
                lower_bound,
                left,
                segments,
                &mut left_halves,
                left_side,
            )
        };
        let mut run_right = || {
            place_side(
                problem,
                fit,
                lower_bound,
                right,
                segments,
                &mut right_halves,
                right_side,
            )
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
    occupancy.scratch = std::mem::take(&mut sides[0].scratch);
    let mut failed: Option<(usize, PlanError)> = None;
    for side in sides {
        occupancy.work += side.work;
        for (buffer, allocation) in side.placed {
            occupancy.placed[buffer] = Some(allocation);
            let end = allocation.offset + problem.buffers()[buffer].size;
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
/// each pool's tree (`halves`), until one fits nowhere; `segments` are every buffer's
/// steps.
fn place_side<W: Addr>(
    problem: &Problem,
    fit: Fit,
    lower_bound: u64,
    buffers: &[(usize, usize)],
    segments: &[(usize, usize)],
    halves: &mut [Half<'_, W>],
    side: &mut Side,
) {
    for &(at, buffer) in buffers {
        let (lo, hi) = segments[buffer];
        let size = problem.buffers()[buffer].size;
        let chosen = choose(problem, buffer, lower_bound, |pool| {
            let mut runs = Vec::with_capacity(64);
            halves[pool].ranges_meeting(lo, hi, &mut runs);
            let align = problem.alignment_in(buffer, pool);
            let (work, offset) = search(&runs, fit, size, align, &mut side.scratch);
            side.work += work;
            offset
        });
        match chosen {
            Ok(allocation) => {
                let range = (allocation.offset, allocation.offset + size);
                halves[allocation.pool].file(lo, hi, range);
                side.placed.push((buffer, allocation));
            }
            Err(error) => {
                side.failed = Some((at, error));
                return;
            }
        }
    }
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
    /// either placement with ranges kept in 32 bits.
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
