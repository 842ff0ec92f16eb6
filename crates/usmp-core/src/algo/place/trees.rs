//! The two time-indexed structures of a pool's placed buffers, both trees over the
//! elementary time steps (the distinct live-range bounds, compressed).
//!
//! [`MaxTree`] is the skyline: a segment tree of the highest end at each step.
//! [`Filed`] is a segment tree of address ranges: a placed buffer's life is tiled by the
//! O(log T) nodes it covers whole (its *own* nodes), and each node keeps two merged lists
//! of disjoint ranges: the buffers it owns, and every buffer owned at or below it. A query
//! takes the second list of each node inside it and the first of each node it crosses:
//! one sorted run per node, O(log T) runs, whose ranges coalesce wherever buffers are
//! packed solid. (An earlier interval tree handed over the single buffers reaching into a
//! query from one side of a node's middle: on idealloc's Y_1 that was 143 million ranges
//! over 62,185 queries, and the searches spent most of their time merging them.)

use super::addr::{Addr, narrow};

/// The children of `node`, whose steps `[nl, nr)` split at `mid`. A subtree of k steps
/// takes 2k - 1 consecutive nodes, its left subtree right after it and then its right
/// one, so a tree over T steps takes 2T - 1 nodes where heap numbering takes up to 4T.
fn children(node: usize, nl: usize, mid: usize) -> (usize, usize) {
    (node + 1, node + 2 * (mid - nl))
}

/// A segment tree of maxima with "raise to at least v" range updates.
///
/// `max[node]` is the largest value in the node's range; `raised[node]` is a pending
/// lower bound for every element of the range. No push-down is needed: a query adds the
/// pending bounds of the partially covered nodes it passes through.
#[derive(Clone, Debug)]
pub(super) struct MaxTree {
    len: usize,
    max: Vec<u64>,
    raised: Vec<u64>,
}

impl MaxTree {
    pub(super) fn new(len: usize) -> Self {
        let nodes = 2 * len.max(1) - 1;
        MaxTree {
            len: len.max(1),
            max: vec![0; nodes],
            raised: vec![0; nodes],
        }
    }

    pub(super) fn raise(&mut self, lo: usize, hi: usize, v: u64) {
        self.raise_in(0, 0, self.len, lo, hi, v);
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
        let (left, right) = children(node, nl, mid);
        self.raise_in(left, nl, mid, lo, hi, v);
        self.raise_in(right, mid, nr, lo, hi, v);
    }

    pub(super) fn max_of(&self, lo: usize, hi: usize) -> u64 {
        self.max_in(0, 0, self.len, lo, hi)
    }

    fn max_in(&self, node: usize, nl: usize, nr: usize, lo: usize, hi: usize) -> u64 {
        if hi <= nl || nr <= lo {
            return 0;
        }
        if lo <= nl && nr <= hi {
            return self.max[node];
        }
        let mid = (nl + nr) / 2;
        let (left, right) = children(node, nl, mid);
        let below = self
            .max_in(left, nl, mid, lo, hi)
            .max(self.max_in(right, mid, nr, lo, hi));
        self.raised[node].max(below)
    }
}

/// An address range `[start, end)`, kept in the width `W` (see `addr`).
type Range<W> = (W, W);

/// Placed buffers' address ranges filed by time (see the module docs).
#[derive(Clone, Debug)]
pub(super) struct Filed<W> {
    len: usize,
    /// Per node (numbered as [`children`] says), its lists.
    nodes: Vec<Node<W>>,
}

/// One node's two lists, side by side: a filing or a query reads both, and apart they
/// cost two cache misses per node on a large tree.
#[derive(Clone, Debug, Default)]
struct Node<W> {
    /// The ranges of the buffers live at every step of the node whose parent they do not
    /// cover (the node is one of the O(log T) that tile their life), merged.
    own: Vec<Range<W>>,
    /// The ranges of every buffer filed at the node or below it, merged.
    below: Vec<Range<W>>,
}

impl<W: Addr> Filed<W> {
    pub(super) fn new(len: usize) -> Self {
        let nodes = 2 * len.max(1) - 1;
        Filed {
            len: len.max(1),
            nodes: vec![Node::default(); nodes],
        }
    }

    /// Files `range` for the steps `from..to`.
    pub(super) fn file(&mut self, from: usize, to: usize, range: (u64, u64)) {
        file_in(&mut self.nodes, 0, 0, self.len, from, to, narrow(range));
    }

    /// Appends to `runs` the address ranges that together cover exactly those filed for
    /// some step of `from..to`, as sorted runs of disjoint ranges, one per node: a node
    /// inside the query gives everything filed in its subtree, a node the query only
    /// crosses gives the buffers that cover the whole node. A buffer meets the query
    /// exactly when one of its nodes lies inside one of the query's, or above it.
    pub(super) fn ranges_meeting<'a>(
        &'a self,
        from: usize,
        to: usize,
        runs: &mut Vec<&'a [Range<W>]>,
    ) {
        visit(&self.nodes, 0, 0, self.len, from, to, runs);
    }

    /// The whole tree as a [`Part`], to be split into halves.
    pub(super) fn whole(&mut self) -> Part<'_, W> {
        Part {
            above: Vec::new(),
            nodes: &mut self.nodes,
            steps: (0, self.len),
        }
    }
}

/// A subtree of a [`Filed`] tree, for lives within its steps, worked on alone: the whole
/// tree, or one half of a part. The own ranges of the nodes above it are read as they
/// are (only a life covering every step of such a node files there).
#[derive(Debug)]
pub(super) struct Part<'a, W> {
    /// The own ranges of every node above the subtree, the root's first.
    above: Vec<&'a [Range<W>]>,
    nodes: &'a mut [Node<W>],
    steps: (usize, usize),
}

impl<W: Addr> Part<'_, W> {
    /// As [`Filed::file`], for `from..to` within the part's steps.
    pub(super) fn file(&mut self, from: usize, to: usize, range: (u64, u64)) {
        let (nl, nr) = self.steps;
        file_in(self.nodes, 0, nl, nr, from, to, narrow(range));
    }

    /// As [`Filed::ranges_meeting`], for `from..to` within the part's steps: the same
    /// runs in the same order (the own ranges above the part, then the part's).
    pub(super) fn ranges_meeting<'a>(
        &'a self,
        from: usize,
        to: usize,
        runs: &mut Vec<&'a [Range<W>]>,
    ) {
        runs.extend(self.above.iter().filter(|own| !own.is_empty()));
        let (nl, nr) = self.steps;
        visit(self.nodes, 0, nl, nr, from, to, runs);
    }

    /// The step that splits the part into halves, if it has two steps or more.
    pub(super) fn middle(&self) -> Option<usize> {
        let (nl, nr) = self.steps;
        (nr - nl >= 2).then_some((nl + nr) / 2)
    }

    /// The two halves below the part's top node, each to be worked on alone (both read
    /// the top's own ranges, which only a life covering every step of the part files).
    /// Filing into a half does not reach the top's `below`: give those ranges to
    /// [`Part::file_at_top`].
    pub(super) fn halves(&mut self) -> Option<(Part<'_, W>, Part<'_, W>)> {
        let mid = self.middle()?;
        let (nl, nr) = self.steps;
        let (top, nodes) = self.nodes.split_at_mut(1);
        // The left subtree's 2 (mid - nl) - 1 nodes follow the top, then the right one's.
        let (left, right) = nodes.split_at_mut(2 * (mid - nl) - 1);
        let mut above = self.above.clone();
        above.push(&top[0].own);
        let left = Part {
            above: above.clone(),
            nodes: left,
            steps: (nl, mid),
        };
        let right = Part {
            above,
            nodes: right,
            steps: (mid, nr),
        };
        Some((left, right))
    }

    /// Adds to the top's `below` a range filed through one of its [`Part::halves`].
    pub(super) fn file_at_top(&mut self, range: (u64, u64)) {
        merge_in(&mut self.nodes[0].below, narrow(range));
    }
}

/// Files `range` for the steps `from..to` in the subtree of `node` (steps `nl..nr`), node
/// numbers counted from the subtree's first.
fn file_in<W: Addr>(
    nodes: &mut [Node<W>],
    node: usize,
    nl: usize,
    nr: usize,
    from: usize,
    to: usize,
    range: Range<W>,
) {
    if to <= nl || nr <= from {
        return;
    }
    let lists = &mut nodes[node];
    merge_in(&mut lists.below, range);
    if from <= nl && nr <= to {
        merge_in(&mut lists.own, range);
        return;
    }
    let mid = (nl + nr) / 2;
    let (left, right) = children(node, nl, mid);
    file_in(nodes, left, nl, mid, from, to, range);
    file_in(nodes, right, mid, nr, from, to, range);
}

/// The runs meeting `from..to` in the subtree of `node`, as [`Filed::ranges_meeting`].
fn visit<'a, W>(
    nodes: &'a [Node<W>],
    node: usize,
    nl: usize,
    nr: usize,
    from: usize,
    to: usize,
    runs: &mut Vec<&'a [Range<W>]>,
) {
    let lists = &nodes[node];
    if to <= nl || nr <= from || lists.below.is_empty() {
        return;
    }
    if from <= nl && nr <= to {
        runs.push(&lists.below);
        return;
    }
    if !lists.own.is_empty() {
        runs.push(&lists.own);
    }
    let mid = (nl + nr) / 2;
    let (left, right) = children(node, nl, mid);
    visit(nodes, left, nl, mid, from, to, runs);
    visit(nodes, right, mid, nr, from, to, runs);
}

/// Adds `range` to the sorted disjoint `runs`, merging it with every run it overlaps or
/// touches. (Buffers filed at one node are live together and so never overlap; merging
/// overlaps too keeps the list sound whatever it is given.)
fn merge_in<W: Addr>(runs: &mut Vec<Range<W>>, (start, end): Range<W>) {
    let first = first_ending_from(runs, start);
    // A new range meets at most a few of the ranges from `first` on: stepping over them
    // beats a second binary search, whose every probe is a cache miss on a long list.
    let mut last = first;
    while last < runs.len() && runs[last].0 <= end {
        last += 1;
    }
    if first == last {
        runs.insert(first, (start, end));
        return;
    }
    let merged = (start.min(runs[first].0), end.max(runs[last - 1].1));
    runs[first] = merged;
    runs.drain(first + 1..last);
}

/// The index of the first of `runs` that ends at or after `start`.
///
/// A list filed at a node spreads its ranges over the addresses in use about evenly, so
/// the search starts where `start` would sit if they were spread exactly evenly up to
/// the last end, and gallops from there: on a long list of a large tree that reads two
/// or three cache lines where a bisection from the middle misses on six or seven (the
/// filings took over a quarter of first fit's time on a million buffers, a sixth after).
/// However the ranges are spread, the index is the same.
fn first_ending_from<W: Addr>(runs: &[Range<W>], start: W) -> usize {
    let n = runs.len();
    if n < 16 {
        return runs.partition_point(|r| r.1 < start);
    }
    let before = |i: usize| runs[i].1 < start;
    // The guess only steers the search: floating point cannot change the answer.
    let top = runs[n - 1].1.into().max(1) as f64;
    let guess = ((start.into() as f64 / top) * n as f64) as usize;
    let guess = guess.min(n - 1);
    // The answer lies in `lo..=hi`: double the step away from the guess while the
    // probes stay on the guess's side, then bisect the last step.
    let (lo, hi) = if before(guess) {
        let (mut lo, mut step) = (guess + 1, 1);
        while lo + step <= n && before(lo + step - 1) {
            lo += step;
            step *= 2;
        }
        (lo, (lo + step - 1).min(n))
    } else {
        let (mut hi, mut step) = (guess, 1);
        while hi >= step && !before(hi - step) {
            hi -= step;
            step *= 2;
        }
        (hi.saturating_sub(step - 1), hi)
    };
    lo + runs[lo..hi].partition_point(|r| r.1 < start)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guided search finds the same index as a bisection, for lists short and long,
    /// spread evenly or crowded at either end, and starts below, among and above the
    /// ranges.
    #[test]
    fn first_ending_from_is_the_partition_point() {
        let mut rng = crate::test_rng::Rng::seeded(0x1e55_0f1e);
        for case in 0..2000 {
            let n = rng.below(80) as usize;
            let skew = rng.below(3);
            let mut at = rng.below(10);
            let runs: Vec<(u64, u64)> = (0..n)
                .map(|i| {
                    let len = 1 + rng.below(8);
                    let hole = match skew {
                        0 => rng.below(8),
                        1 => rng.below(8) * (i as u64 / 8).pow(2),
                        _ => rng.below(8) * ((n - i) as u64 / 8).pow(2),
                    };
                    let r = (at + hole, at + hole + len);
                    at = r.1;
                    r
                })
                .collect();
            let top = runs.last().map_or(10, |r| r.1 + 10);
            for start in (0..top).step_by(1 + (top / 97) as usize) {
                assert_eq!(
                    first_ending_from(&runs, start),
                    runs.partition_point(|r| r.1 < start),
                    "case {case}, start {start}: {runs:?}"
                );
            }
        }
    }

    /// The halves of the whole tree, and their halves, meet every query within their
    /// steps with the runs the whole tree meets, in the same order (the leapfrog's work
    /// depends on it), lives covering whole nodes included.
    #[test]
    fn parts_meet_the_runs_of_the_whole_tree() {
        fn spans(nl: usize, nr: usize, depth: u32, out: &mut Vec<(usize, usize)>) {
            out.push((nl, nr));
            let mid = (nl + nr) / 2;
            if depth > 0 && nr - nl >= 2 {
                spans(nl, mid, depth - 1, out);
                spans(mid, nr, depth - 1, out);
            }
        }
        let mut rng = crate::test_rng::Rng::seeded(0x9a27_5e7e);
        let steps = 37;
        // Every node's span down to the eighths, and short and long random lives.
        let mut lives = Vec::new();
        spans(0, steps, 3, &mut lives);
        for _ in 0..80 {
            let from = rng.below(steps as u64) as usize;
            let longest = if rng.below(4) == 0 { 37 } else { 4 };
            let len = 1 + rng.below(longest) as usize;
            lives.push((from, (from + len).min(steps)));
        }
        let mut filed = Filed::<u64>::new(steps);
        for (k, &(from, to)) in lives.iter().enumerate() {
            filed.file(from, to, (100 * k as u64, 100 * k as u64 + 10));
        }
        let runs_of = |runs: Vec<&[(u64, u64)]>| -> Vec<Vec<(u64, u64)>> {
            runs.into_iter().map(<[_]>::to_vec).collect()
        };
        let mut expected = std::collections::BTreeMap::new();
        for lo in 0..steps {
            for hi in lo + 1..=steps {
                let mut runs = Vec::new();
                filed.ranges_meeting(lo, hi, &mut runs);
                expected.insert((lo, hi), runs_of(runs));
            }
        }
        let check = |part: &Part<'_, u64>, checked: &mut usize| {
            let (nl, nr) = part.steps;
            for lo in nl..nr {
                for hi in lo + 1..=nr {
                    let mut runs = Vec::new();
                    part.ranges_meeting(lo, hi, &mut runs);
                    assert_eq!(runs_of(runs), expected[&(lo, hi)], "{nl}..{nr}: {lo}..{hi}");
                    *checked += 1;
                }
            }
        };
        let mut checked = 0;
        let mut whole = filed.whole();
        check(&whole, &mut checked);
        let (mut left, mut right) = whole.halves().unwrap();
        for half in [&mut left, &mut right] {
            check(half, &mut checked);
            let (quarter_l, quarter_r) = half.halves().unwrap();
            check(&quarter_l, &mut checked);
            check(&quarter_r, &mut checked);
        }
        assert!(checked > 1000, "{checked}");
    }

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
    fn merge_in_joins_touching_and_overlapping_runs() {
        let mut runs: Vec<(u64, u64)> = Vec::new();
        merge_in(&mut runs, (10, 20));
        merge_in(&mut runs, (30, 40));
        merge_in(&mut runs, (0, 5));
        assert_eq!(runs, vec![(0, 5), (10, 20), (30, 40)]);
        merge_in(&mut runs, (20, 30));
        assert_eq!(runs, vec![(0, 5), (10, 40)]);
        merge_in(&mut runs, (3, 12));
        assert_eq!(runs, vec![(0, 40)]);
        merge_in(&mut runs, (50, 60));
        merge_in(&mut runs, (45, 46));
        assert_eq!(runs, vec![(0, 40), (45, 46), (50, 60)]);
    }

    /// Every range filed for a step that meets the query comes back, and no other, each run
    /// sorted by address: all
    /// queries over 37 steps (not a power of two), 60 lives from a fixed generator.
    #[test]
    fn ranges_meeting_finds_exactly_the_ranges_live_in_the_query() {
        let mut rng = crate::test_rng::Rng::seeded(0x2545_f491);
        let mut next = |n: usize| rng.below(n as u64) as usize;
        let steps = 37;
        let lives: Vec<(usize, usize)> = (0..60)
            .map(|_| {
                let from = next(steps);
                let long = next(4) == 0;
                let len = 1 + if long { next(steps) } else { next(3) };
                (from, (from + len).min(steps))
            })
            .collect();
        // Buffers far apart in address, so no two merge into one run.
        let range = |k: usize| (100 * k as u64, 100 * k as u64 + 10);
        let mut filed = Filed::<u64>::new(steps);
        for (k, &(from, to)) in lives.iter().enumerate() {
            filed.file(from, to, range(k));
        }
        for lo in 0..steps {
            for hi in lo + 1..=steps {
                let mut runs = Vec::new();
                filed.ranges_meeting(lo, hi, &mut runs);
                // A buffer filed at two nodes the query meets comes twice: same union.
                let mut seen: Vec<(u64, u64)> = runs.concat();
                seen.sort_unstable();
                seen.dedup();
                let expected: Vec<(u64, u64)> = (0..lives.len())
                    .filter(|&k| lives[k].0 < hi && lo < lives[k].1)
                    .map(range)
                    .collect();
                assert_eq!(seen, expected, "query {lo}..{hi}");
                for run in runs {
                    assert!(run.windows(2).all(|w| w[0].1 < w[1].0), "{run:?}");
                }
            }
        }
    }
}
