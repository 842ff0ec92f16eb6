//! What is placed so far, indexed so that the two placement questions the algorithms ask
//! cost O(log n) (stacking) or O((k + 1) log n) for k overlapping buffers (gap search),
//! not a scan over every placed buffer.
//!
//! - **Stack** (TVM's greedy): the lowest aligned offset above every placed conflict.
//!   For live ranges, each pool keeps a "skyline" over time, the highest end at each
//!   step, in a segment tree with range-max queries and range-raise updates.
//! - **First fit** (TFLite Micro, hill climbing): the lowest aligned offset in a gap
//!   between placed conflicts. Each pool keeps the placed buffers' ends in a segment tree
//!   over the buffers sorted by start, so those live with the new buffer are found by
//!   descending only into subtrees whose largest end is past its start.

use crate::plan::{Allocation, Attempt, PlanError};
use crate::problem::{Conflicts, Problem};

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

/// A segment tree of maxima with "raise to at least v" range updates.
///
/// `max[node]` is the largest value in the node's range; `raised[node]` is a pending
/// lower bound for every element of the range. No push-down is needed: a query adds the
/// pending bounds of the partially covered nodes it passes through.
#[derive(Clone, Debug)]
struct MaxTree {
    len: usize,
    max: Vec<u64>,
    raised: Vec<u64>,
}

impl MaxTree {
    fn new(len: usize) -> Self {
        let nodes = 2 * len.max(1).next_power_of_two();
        MaxTree {
            len: len.max(1),
            max: vec![0; nodes],
            raised: vec![0; nodes],
        }
    }

    fn raise(&mut self, lo: usize, hi: usize, v: u64) {
        self.raise_in(1, 0, self.len, lo, hi, v);
    }

    fn raise_in(&mut self, node: usize, nl: usize, nr: usize, lo: usize, hi: usize, v: u64) {
        if hi <= nl || nr <= lo {
            return;
        }
        self.max[node] = self.max[node].max(v);
        if lo <= nl && nr <= hi {
            self.raised[node] = self.raised[node].max(v);
            return;
        }
        let mid = (nl + nr) / 2;
        self.raise_in(2 * node, nl, mid, lo, hi, v);
        self.raise_in(2 * node + 1, mid, nr, lo, hi, v);
    }

    fn max_of(&self, lo: usize, hi: usize) -> u64 {
        self.max_in(1, 0, self.len, lo, hi)
    }

    fn max_in(&self, node: usize, nl: usize, nr: usize, lo: usize, hi: usize) -> u64 {
        if hi <= nl || nr <= lo {
            return 0;
        }
        if lo <= nl && nr <= hi {
            return self.max[node];
        }
        let mid = (nl + nr) / 2;
        let below =
            self.max_in(2 * node, nl, mid, lo, hi)
                .max(self.max_in(2 * node + 1, mid, nr, lo, hi));
        self.raised[node].max(below)
    }

    /// Calls `f(i)` for every leaf `i < end` whose value exceeds `threshold`. Only valid
    /// when updates were single leaves, as they are for the ends tree.
    fn leaves_above(&self, end: usize, threshold: u64, f: &mut impl FnMut(usize)) {
        self.leaves_in(1, 0, self.len, end, threshold, f);
    }

    fn leaves_in(
        &self,
        node: usize,
        nl: usize,
        nr: usize,
        end: usize,
        threshold: u64,
        f: &mut impl FnMut(usize),
    ) {
        if nl >= end || self.max[node] <= threshold {
            return;
        }
        if nr - nl == 1 {
            f(nl);
            return;
        }
        let mid = (nl + nr) / 2;
        self.leaves_in(2 * node, nl, mid, end, threshold, f);
        self.leaves_in(2 * node + 1, mid, nr, end, threshold, f);
    }
}

/// Per-problem facts the placement structures need, computed once and shared by every
/// placement pass (hill climbing runs hundreds).
#[derive(Debug)]
pub(crate) struct Layout<'p> {
    problem: &'p Problem,
    time: Option<TimeIndex>,
}

#[derive(Debug)]
struct TimeIndex {
    /// Per buffer, its live range as elementary segments `[lo, hi)` of compressed time.
    segments: Vec<(usize, usize)>,
    segment_count: usize,
    /// Buffers sorted by start, and the sorted starts.
    by_start: Vec<usize>,
    starts: Vec<u64>,
    /// Position of each buffer in `by_start`.
    rank: Vec<usize>,
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
            let mut by_start: Vec<usize> = (0..lives.len()).collect();
            by_start.sort_unstable_by_key(|&i| (lives[i].start, i));
            let starts = by_start.iter().map(|&i| lives[i].start).collect();
            let mut rank = vec![0; lives.len()];
            for (r, &i) in by_start.iter().enumerate() {
                rank[i] = r;
            }
            TimeIndex {
                segments,
                segment_count: steps.len().saturating_sub(1),
                by_start,
                starts,
                rank,
            }
        });
        Layout { problem, time }
    }
}

/// Placed buffers, per pool.
#[derive(Debug)]
pub(crate) struct Occupancy<'l, 'p> {
    layout: &'l Layout<'p>,
    placed: Vec<Option<Allocation>>,
    /// For live ranges: per pool, the skyline over time and the ends by start rank.
    trees: Vec<(MaxTree, MaxTree)>,
    /// Overlapping buffers examined so far: a deterministic measure of effort.
    pub(crate) work: u64,
    spans: Vec<(u64, u64)>,
}

impl<'l, 'p> Occupancy<'l, 'p> {
    pub(crate) fn new(layout: &'l Layout<'p>) -> Self {
        let problem = layout.problem;
        let trees = match &layout.time {
            Some(t) => (0..problem.pools().len())
                .map(|_| {
                    (
                        MaxTree::new(t.segment_count),
                        MaxTree::new(t.by_start.len()),
                    )
                })
                .collect(),
            None => Vec::new(),
        };
        Occupancy {
            layout,
            placed: vec![None; problem.buffers().len()],
            trees,
            work: 0,
            spans: Vec::new(),
        }
    }

    /// The lowest offset for `buffer` in `pool` under `fit`, `u64::MAX` if none exists
    /// in the address space.
    pub(crate) fn offset(&mut self, buffer: usize, pool: usize, fit: Fit) -> u64 {
        let align = self.layout.problem.alignment_in(buffer, pool);
        self.spans.clear();
        match (&self.layout.time, fit) {
            (Some(t), Fit::Stack) => {
                let (lo, hi) = t.segments[buffer];
                return align_up(self.trees[pool].0.max_of(lo, hi), align);
            }
            (Some(t), Fit::Lowest | Fit::Tightest) => {
                let live = self.layout.problem.buffers()[buffer]
                    .live
                    .unwrap_or(crate::problem::Live { start: 0, end: 0 });
                let ends = &self.trees[pool].1;
                let before = t.starts.partition_point(|&s| s < live.end);
                let (placed, spans) = (&self.placed, &mut self.spans);
                ends.leaves_above(before, live.start, &mut |r| {
                    if let Some(a) = placed[t.by_start[r]] {
                        spans.push((
                            a.offset,
                            a.offset + self.layout.problem.buffers()[t.by_start[r]].size,
                        ));
                    }
                });
            }
            (None, _) => {
                let Conflicts::Graph(adj) = self.layout.problem.conflicts() else {
                    return u64::MAX;
                };
                let buffers = self.layout.problem.buffers();
                for &j in &adj[buffer] {
                    if let Some(a) = self.placed[j].filter(|a| a.pool == pool) {
                        self.spans.push((a.offset, a.offset + buffers[j].size));
                    }
                }
                if fit == Fit::Stack {
                    let top = self.spans.iter().map(|s| s.1).max().unwrap_or(0);
                    return align_up(top, align);
                }
            }
        }
        self.work += self.spans.len() as u64;
        let size = self.layout.problem.buffers()[buffer].size;
        match fit {
            Fit::Tightest => best_gap(&mut self.spans, size, align),
            _ => lowest_gap(&mut self.spans, size, align),
        }
    }

    pub(crate) fn place(&mut self, buffer: usize, at: Allocation) {
        self.placed[buffer] = Some(at);
        if let Some(t) = &self.layout.time {
            let end = at.offset + self.layout.problem.buffers()[buffer].size;
            let (skyline, ends) = &mut self.trees[at.pool];
            let (lo, hi) = t.segments[buffer];
            skyline.raise(lo, hi, end);
            let rank = t.rank[buffer];
            let live_end = self.layout.problem.buffers()[buffer]
                .live
                .map_or(0, |l| l.end);
            ends.raise(rank, rank + 1, live_end);
        }
    }

    /// The allocations, once every buffer is placed.
    pub(crate) fn into_allocations(self) -> Vec<Allocation> {
        self.placed.into_iter().flatten().collect()
    }
}

fn align_up(offset: u64, align: u64) -> u64 {
    offset.checked_next_multiple_of(align).unwrap_or(u64::MAX)
}

/// The lowest `align`-aligned offset where `size` bytes avoid every span `[start, end)`.
fn lowest_gap(spans: &mut [(u64, u64)], size: u64, align: u64) -> u64 {
    spans.sort_unstable_by_key(|s| s.0);
    let mut candidate = 0u64;
    for &(start, end) in spans.iter() {
        if candidate.saturating_add(size) <= start {
            break;
        }
        candidate = candidate.max(align_up(end, align));
    }
    candidate
}

/// The aligned offset of the smallest gap between `spans` that holds `size` bytes (the
/// lowest such gap on ties), or the aligned top of all spans when no gap does.
fn best_gap(spans: &mut [(u64, u64)], size: u64, align: u64) -> u64 {
    spans.sort_unstable_by_key(|s| s.0);
    let mut cursor = 0u64;
    let mut best: Option<(u64, u64)> = None;
    for &(start, end) in spans.iter() {
        let at = align_up(cursor, align);
        if at.saturating_add(size) <= start {
            let gap = start - at;
            if best.is_none_or(|(g, _)| gap < g) {
                best = Some((gap, at));
            }
        }
        cursor = cursor.max(end);
    }
    best.map_or_else(|| align_up(cursor, align), |(_, at)| at)
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
    let problem = layout.problem;
    let mut occupancy = Occupancy::new(layout);
    for &buffer in order {
        let b = &problem.buffers()[buffer];
        let mut attempts = Vec::new();
        let mut chosen = None;
        for &pool in &b.candidates {
            let offset = occupancy.offset(buffer, pool, fit);
            let end = offset.checked_add(b.size);
            let p = &problem.pools()[pool];
            match end {
                Some(end) if p.admits(end) => {
                    chosen = Some(Allocation { pool, offset });
                    break;
                }
                _ => attempts.push(Attempt {
                    pool: p.name.clone(),
                    limit: p.size_limit.unwrap_or(u64::MAX),
                    needed: end.unwrap_or(u64::MAX),
                }),
            }
        }
        let Some(at) = chosen else {
            return Err(PlanError::NoFit {
                buffer: b.name.clone(),
                size: b.size,
                attempts,
                lower_bound,
            });
        };
        occupancy.place(buffer, at);
    }
    occupancy.work += order.len() as u64;
    let work = occupancy.work;
    Ok((occupancy.into_allocations(), work))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_tree_raises_ranges_and_answers_ranges() {
        let mut t = MaxTree::new(10);
        t.raise(2, 5, 7);
        t.raise(4, 8, 9);
        assert_eq!(t.max_of(0, 2), 0);
        assert_eq!(t.max_of(0, 4), 7);
        assert_eq!(t.max_of(3, 4), 7);
        assert_eq!(t.max_of(4, 5), 9);
        assert_eq!(t.max_of(8, 10), 0);
        assert_eq!(t.max_of(0, 10), 9);
    }

    #[test]
    fn leaves_above_visits_only_qualifying_leaves() {
        let mut t = MaxTree::new(6);
        for (i, v) in [5, 1, 8, 3, 9, 2].into_iter().enumerate() {
            t.raise(i, i + 1, v);
        }
        let mut seen = Vec::new();
        t.leaves_above(4, 2, &mut |i| seen.push(i));
        assert_eq!(seen, vec![0, 2, 3]);
        seen.clear();
        t.leaves_above(6, 8, &mut |i| seen.push(i));
        assert_eq!(seen, vec![4]);
    }

    #[test]
    fn lowest_gap_respects_alignment() {
        let mut spans = vec![(0, 10), (20, 30), (12, 14)];
        assert_eq!(lowest_gap(&mut spans, 4, 1), 14);
        assert_eq!(lowest_gap(&mut spans, 4, 8), 16);
        assert_eq!(lowest_gap(&mut spans, 5, 8), 32);
        assert_eq!(lowest_gap(&mut spans, 6, 1), 14);
        assert_eq!(lowest_gap(&mut spans, 7, 1), 30);
        assert_eq!(lowest_gap(&mut [], 7, 16), 0);
    }

    #[test]
    fn best_gap_takes_the_tightest_hole() {
        // Holes: [10, 20) of 10 bytes and [24, 28) of 4; top at 40.
        let mut spans = vec![(0, 10), (20, 24), (28, 40)];
        assert_eq!(best_gap(&mut spans, 4, 1), 24);
        assert_eq!(best_gap(&mut spans, 5, 1), 10);
        assert_eq!(best_gap(&mut spans, 11, 1), 40);
        assert_eq!(best_gap(&mut spans, 4, 8), 16);
        assert_eq!(best_gap(&mut [], 3, 16), 0);
    }
}
