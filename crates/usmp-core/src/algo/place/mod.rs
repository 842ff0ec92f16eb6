//! What is placed so far, indexed so that the placement questions the algorithms ask
//! cost O(log T) (stacking) or a search over O(log T) sorted runs of address ranges (gap
//! search, `gaps`), not a scan over every placed buffer.
//!
//! - **Stack** (TVM's greedy): the lowest aligned offset above every placed conflict.
//!   For live ranges, each pool keeps a "skyline" over time, the highest end at each
//!   step, in a segment tree with range-max queries and range-raise updates.
//! - **Lowest and tightest gap** (TFLite Micro's first fit, TFLite's best fit, hill
//!   climbing): a gap between placed conflicts. For live ranges each pool files the
//!   placed address ranges by time, merged into runs (`trees`); the runs of the steps a
//!   buffer lives in are what it must avoid, searched where they lie (`gaps`). On
//!   idealloc's Y_1 (62,185 buffers, thousands live at once) a first-fit search takes
//!   about 170 steps.

mod addr;
mod gaps;
mod split;
mod trees;

use crate::problem::{Conflicts, Problem};
use crate::solution::{Allocation, Attempt, PlanError};
use addr::Addr;
use gaps::{Gaps, Scratch};
use trees::{Filed, MaxTree};

/// How a buffer's offset is chosen within one pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fit {
    /// Above every placed conflict (TVM's greedy semantics).
    Stack,
    /// In the lowest gap between placed conflicts.
    Lowest,
    /// In the smallest gap between placed conflicts that holds it, else on top
    /// (TensorFlow Lite's "greedy by size" offset planner).
    Tightest,
}

/// Per-problem facts the placement structures need, computed once and shared by every
/// placement pass (hill climbing runs hundreds).
#[derive(Debug)]
pub(crate) struct Layout<'p> {
    problem: &'p Problem,
    time: Option<TimeIndex>,
    /// Whether every end a placement can produce fits in 32 bits (see `addr`).
    narrow: bool,
}

#[derive(Debug)]
struct TimeIndex {
    /// Per buffer, its live range as elementary segments `[lo, hi)` of compressed time.
    segments: Vec<(usize, usize)>,
    segment_count: usize,
}

impl<'p> Layout<'p> {
    pub(crate) fn new(problem: &'p Problem) -> Self {
        let time = matches!(problem.conflicts(), Conflicts::Intervals).then(|| {
            let lives: Vec<_> = problem.buffers().iter().filter_map(|b| b.live).collect();
            let mut steps: Vec<u64> = lives.iter().flat_map(|l| [l.start, l.end]).collect();
            steps.sort_unstable();
            steps.dedup();
            let at = |t: u64| steps.partition_point(|&s| s < t);
            let segments = lives.iter().map(|l| (at(l.start), at(l.end))).collect();
            TimeIndex {
                segments,
                segment_count: steps.len().saturating_sub(1),
            }
        });
        let narrow = addr::fits_in_32_bits(problem.buffers().iter().enumerate().map(|(i, b)| {
            let align = b.candidates.iter().map(|&p| problem.alignment_in(i, p));
            (b.size, align.max().unwrap_or(1))
        }));
        Layout {
            problem,
            time,
            narrow,
        }
    }
}

/// A pool's placed buffers indexed by time, for the one question its fit asks.
#[derive(Debug)]
enum TimeTree<W> {
    /// For stacking: the highest end at each step.
    Skyline(MaxTree),
    /// For gap searches: the address ranges taken at each step.
    Filed(Filed<W>),
}

/// Placed buffers, per pool, for placement under one fit.
#[derive(Debug)]
struct Occupancy<'l, 'p, W> {
    layout: &'l Layout<'p>,
    fit: Fit,
    placed: Vec<Option<Allocation>>,
    /// For live ranges, per pool: only the tree `fit` reads is kept (filing ranges for a
    /// stacking pass cost as much as the pass and a tree per pool of memory).
    trees: Vec<TimeTree<W>>,
    /// Address ranges a gap search examined so far: a deterministic measure of effort.
    work: u64,
    /// A conflict graph's placed neighbours' address ranges, collected per search.
    ranges: Vec<(W, W)>,
    scratch: Scratch,
}

impl<'l, 'p, W: Addr> Occupancy<'l, 'p, W> {
    fn new(layout: &'l Layout<'p>, fit: Fit) -> Self {
        let problem = layout.problem;
        let trees = match &layout.time {
            Some(t) => (0..problem.pools().len())
                .map(|_| match fit {
                    Fit::Stack => TimeTree::Skyline(MaxTree::new(t.segment_count)),
                    Fit::Lowest | Fit::Tightest => TimeTree::Filed(Filed::new(t.segment_count)),
                })
                .collect(),
            None => Vec::new(),
        };
        Occupancy {
            layout,
            fit,
            placed: vec![None; problem.buffers().len()],
            trees,
            work: 0,
            ranges: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    /// The lowest offset for `buffer` in `pool` under the fit, `u64::MAX` if none exists
    /// in the address space.
    fn offset(&mut self, buffer: usize, pool: usize) -> u64 {
        let (problem, fit) = (self.layout.problem, self.fit);
        let align = problem.alignment_in(buffer, pool);
        let size = problem.buffers()[buffer].size;
        let (work, offset) = match &self.layout.time {
            Some(t) => {
                let (lo, hi) = t.segments[buffer];
                let filed = match &self.trees[pool] {
                    TimeTree::Skyline(skyline) => return align_up(skyline.max_of(lo, hi), align),
                    TimeTree::Filed(filed) => filed,
                };
                let mut runs = Vec::with_capacity(64);
                filed.ranges_meeting(lo, hi, &mut runs);
                search(&runs, fit, size, align, &mut self.scratch)
            }
            None => {
                let Conflicts::Graph(adj) = problem.conflicts() else {
                    return u64::MAX;
                };
                let buffers = problem.buffers();
                let ranges = &mut self.ranges;
                ranges.clear();
                for &j in &adj[buffer] {
                    if let Some(a) = self.placed[j].filter(|a| a.pool == pool) {
                        ranges.push(addr::narrow((a.offset, a.offset + buffers[j].size)));
                    }
                }
                // A conflict graph gives its ranges in no order: one sorted run of them.
                let read = ranges.len() as u64;
                gaps::sorted_union(ranges);
                let (work, offset) =
                    search(&[ranges.as_slice()], fit, size, align, &mut self.scratch);
                (work + read, offset)
            }
        };
        self.work += work;
        offset
    }

    /// The lowest offset for `buffer` in `pool` over a placed buffer it may be written
    /// over (or that may be written over it), within the declared window and clear of
    /// every other placed conflict; `None` without such a partner or place. A scan over
    /// the placed buffers: only problems that declare overlaps pay it.
    fn overlapping(&self, buffer: usize, pool: usize) -> Option<u64> {
        let problem = self.layout.problem;
        let buffers = problem.buffers();
        let (size, align) = (buffers[buffer].size, problem.alignment_in(buffer, pool));
        let mut best: Option<u64> = None;
        for o in problem.overlaps() {
            let partner = match (o.output == buffer, o.input == buffer) {
                (true, _) => o.input,
                (_, true) => o.output,
                _ => continue,
            };
            let Some(p) = self.placed[partner].filter(|a| a.pool == pool) else {
                continue;
            };
            // The offsets the window allows: output minus input within `shifts`.
            let at = i128::from(p.offset);
            let [lo, hi] = o.shifts.map(i128::from);
            let (lo, hi) = if o.output == buffer {
                (at + lo, at + hi)
            } else {
                (at - hi, at - lo)
            };
            let Ok(lo) = u64::try_from(lo.max(0)) else {
                continue;
            };
            let mut taken: Vec<(u64, u64)> = self
                .conflicting(buffer)
                .filter(|&j| j != partner)
                .filter_map(|j| {
                    let a = self.placed[j].filter(|a| a.pool == pool)?;
                    Some((a.offset, a.offset + buffers[j].size))
                })
                .collect();
            taken.sort_unstable();
            // The lowest aligned offset from `lo` that misses every taken range.
            let mut offset = align_up(lo, align);
            for (start, end) in taken {
                if start >= offset.saturating_add(size) {
                    break;
                }
                if end > offset {
                    offset = align_up(end, align);
                }
            }
            if i128::from(offset) <= hi {
                best = Some(best.map_or(offset, |b: u64| b.min(offset)));
            }
        }
        best
    }

    /// The buffers `buffer` conflicts with.
    fn conflicting(&self, buffer: usize) -> Box<dyn Iterator<Item = usize> + '_> {
        let problem = self.layout.problem;
        match problem.conflicts() {
            Conflicts::Graph(adj) => Box::new(adj[buffer].iter().copied()),
            Conflicts::Intervals => {
                Box::new((0..problem.buffers().len()).filter(move |&j| problem.conflict(buffer, j)))
            }
        }
    }

    fn place(&mut self, buffer: usize, at: Allocation) {
        self.placed[buffer] = Some(at);
        if let Some(t) = &self.layout.time {
            let end = at.offset + self.layout.problem.buffers()[buffer].size;
            let (lo, hi) = t.segments[buffer];
            match &mut self.trees[at.pool] {
                TimeTree::Skyline(skyline) => skyline.raise(lo, hi, end),
                TimeTree::Filed(filed) => filed.file(lo, hi, (at.offset, end)),
            }
        }
    }

    /// The allocations, once every buffer is placed.
    fn into_allocations(self) -> Vec<Allocation> {
        self.placed.into_iter().flatten().collect()
    }
}

/// One gap search under `fit` over `runs` (see `gaps`): the work done and the offset.
fn search<W: Addr>(
    runs: &[&[(W, W)]],
    fit: Fit,
    size: u64,
    align: u64,
    scratch: &mut Scratch,
) -> (u64, u64) {
    let mut gaps = Gaps::new(runs, scratch);
    let offset = match fit {
        Fit::Stack => align_up(gaps.top(), align),
        Fit::Lowest => gaps.lowest(size, align),
        Fit::Tightest => gaps.tightest(size, align),
    };
    (gaps.work, offset)
}

pub(super) fn align_up(offset: u64, align: u64) -> u64 {
    // Alignments are nearly always powers of two; a mask spares the division, which
    // cost a twentieth of a first-fit search.
    if align.is_power_of_two() {
        let mask = align - 1;
        return offset.checked_add(mask).map_or(u64::MAX, |o| o & !mask);
    }
    offset.checked_next_multiple_of(align).unwrap_or(u64::MAX)
}

/// Places the buffers in `order`, each in its most preferred candidate pool where it fits
/// under the pool's limit (the RFC's fallback). Returns the allocations and the work done;
/// `lower_bound` is only quoted in the error when a buffer fits nowhere.
pub(crate) fn place_in_order(
    layout: &Layout<'_>,
    order: &[usize],
    fit: Fit,
    lower_bound: u64,
) -> Result<(Vec<Allocation>, u64), PlanError> {
    if layout.narrow {
        place_with::<u32>(layout, order, fit, lower_bound)
    } else {
        place_with::<u64>(layout, order, fit, lower_bound)
    }
}

/// [`place_in_order`] with address ranges kept in the width `W`.
fn place_with<W: Addr>(
    layout: &Layout<'_>,
    order: &[usize],
    fit: Fit,
    lower_bound: u64,
) -> Result<(Vec<Allocation>, u64), PlanError> {
    let mut occupancy = Occupancy::<W>::new(layout, fit);
    // The two threads' halves place without overlaps; a problem that declares them is
    // placed in one pass.
    let overlaps = !layout.problem.overlaps().is_empty();
    if !overlaps && split::applies(&occupancy, order.len()) {
        split::place(&mut occupancy, order, lower_bound, true)?;
    } else {
        place_each(&mut occupancy, order, lower_bound)?;
    }
    occupancy.work += order.len() as u64;
    let work = occupancy.work;

    Ok((occupancy.into_allocations(), work))
}

/// Places the buffers of `order` one after the other.
fn place_each<W: Addr>(
    occupancy: &mut Occupancy<'_, '_, W>,
    order: &[usize],
    lower_bound: u64,
) -> Result<(), PlanError> {
    let problem = occupancy.layout.problem;
    let overlaps = !problem.overlaps().is_empty();
    for &buffer in order {
        let at = choose(problem, buffer, lower_bound, |pool| {
            let clear = occupancy.offset(buffer, pool);
            // Over a partner, when that is lower than clear of everything.
            let over = overlaps
                .then(|| occupancy.overlapping(buffer, pool))
                .flatten();
            over.map_or(clear, |o| o.min(clear))
        })?;
        occupancy.place(buffer, at);
    }
    Ok(())
}

/// The first of `buffer`'s candidate pools where the offset `offset(pool)` finds for it
/// ends within the pool's limit, or the error naming every pool tried.
fn choose(
    problem: &Problem,
    buffer: usize,
    lower_bound: u64,
    mut offset: impl FnMut(usize) -> u64,
) -> Result<Allocation, PlanError> {
    let b = &problem.buffers()[buffer];
    let mut attempts = Vec::new();
    for &pool in &b.candidates {
        let offset = offset(pool);
        let end = offset.checked_add(b.size);
        let p = &problem.pools()[pool];
        match end {
            Some(end) if p.admits(end) => return Ok(Allocation { pool, offset }),
            _ => attempts.push(Attempt {
                pool: p.name.clone(),
                limit: p.size_limit.unwrap_or(u64::MAX),
                needed: end.unwrap_or(u64::MAX),
            }),
        }
    }
    Err(PlanError::NoFit {
        buffer: b.name.clone(),
        size: b.size,
        attempts,
        lower_bound,
        algorithm: String::new(),
        impossible: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gap searches' offsets for `spans`, each span its own run.
    fn lowest(spans: &[(u64, u64)], size: u64, align: u64) -> u64 {
        found(spans, Fit::Lowest, size, align)
    }

    fn best(spans: &[(u64, u64)], size: u64, align: u64) -> u64 {
        found(spans, Fit::Tightest, size, align)
    }

    fn found(spans: &[(u64, u64)], fit: Fit, size: u64, align: u64) -> u64 {
        search(&runs(spans), fit, size, align, &mut Scratch::default()).1
    }

    fn runs(spans: &[(u64, u64)]) -> Vec<&[(u64, u64)]> {
        spans.iter().map(std::slice::from_ref).collect()
    }

    #[test]
    fn lowest_gap_respects_alignment() {
        let s = [(0, 10), (20, 30), (12, 14)];
        assert_eq!(lowest(&s, 4, 1), 14);
        assert_eq!(lowest(&s, 4, 8), 16);
        assert_eq!(lowest(&s, 5, 8), 32);
        assert_eq!(lowest(&s, 6, 1), 14);
        assert_eq!(lowest(&s, 7, 1), 30);
        assert_eq!(lowest(&[], 7, 16), 0);
    }

    #[test]
    fn gaps_see_through_spans_that_overlap_or_touch() {
        // Spans met at different times may share addresses: [0, 8) and [4, 12) leave no
        // hole at 8; [12, 16) touches [4, 12); the first hole is [16, 20).
        let s = [(4, 12), (0, 8), (20, 24), (12, 16)];
        assert_eq!(lowest(&s, 4, 1), 16);
        assert_eq!(lowest(&s, 5, 1), 24);
        assert_eq!(best(&s, 4, 1), 16);
        assert_eq!(best(&s, 5, 1), 24);
    }

    #[test]
    fn best_gap_takes_the_tightest_hole() {
        // Holes: [10, 20) of 10 bytes and [24, 28) of 4; top at 40.
        let s = [(0, 10), (20, 24), (28, 40)];
        assert_eq!(best(&s, 4, 1), 24);
        assert_eq!(best(&s, 5, 1), 10);
        assert_eq!(best(&s, 11, 1), 40);
        assert_eq!(best(&s, 4, 8), 16);
        assert_eq!(best(&[], 3, 16), 0);
    }
}
