//! The two time-indexed structures of a pool's placed buffers, both trees over the
//! elementary time steps (the distinct live-range bounds, compressed).
//!
//! [`MaxTree`] is the skyline: a segment tree of the highest end at each step.
//! [`Filed`] is a centered interval tree: each placed buffer is filed once, at the
//! highest node whose middle its life spans (a single-step life at its leaf), in address
//! order and merged into disjoint runs. Buffers filed at one node are live together, so
//! their ranges never overlap. A query that covers a node, or spans the same middle, meets
//! every buffer there and takes the node's runs whole; a query on one side of the middle
//! takes the buffers that reach into it, still in address order. Either way each node
//! gives one sorted run, and [`Runs::merge`] merges them.

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
        let nodes = 2 * len.max(1).next_power_of_two();
        MaxTree {
            len: len.max(1),
            max: vec![0; nodes],
            raised: vec![0; nodes],
        }
    }

    pub(super) fn raise(&mut self, lo: usize, hi: usize, v: u64) {
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

    pub(super) fn max_of(&self, lo: usize, hi: usize) -> u64 {
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
}

/// One buffer as a node of [`Filed`] keeps it: its steps `[from, to)` and its addresses.
#[derive(Clone, Copy, Debug)]
struct Entry {
    from: u32,
    to: u32,
    range: (u64, u64),
}

/// The buffers one node holds (see [`Filed`]).
#[derive(Clone, Debug, Default)]
struct Node {
    /// Their address ranges, merged into sorted disjoint runs.
    runs: Vec<(u64, u64)>,
    /// The same buffers one by one, by address. They are live together, so their
    /// ranges are disjoint and the ends ascend too: any selection is a sorted run.
    by_address: Vec<Entry>,
}

/// Placed buffers' address ranges filed by time (see the module docs).
#[derive(Clone, Debug)]
pub(super) struct Filed {
    len: usize,
    nodes: Vec<Node>,
    /// Per node, the buffers filed in its subtree, so a query skips empty subtrees.
    filed: Vec<u32>,
}

impl Filed {
    pub(super) fn new(len: usize) -> Self {
        let nodes = 2 * len.max(1).next_power_of_two();
        Filed {
            len: len.max(1),
            nodes: vec![Node::default(); nodes],
            filed: vec![0; nodes],
        }
    }

    /// Files `range` for the steps `from..to`.
    pub(super) fn file(&mut self, from: usize, to: usize, range: (u64, u64)) {
        let (mut node, mut nl, mut nr) = (1, 0, self.len);
        loop {
            self.filed[node] = self.filed[node].saturating_add(1);
            let mid = (nl + nr) / 2;
            if nr - nl == 1 || (from < mid && mid < to) {
                break;
            }
            if to <= mid {
                (node, nr) = (2 * node, mid);
            } else {
                (node, nl) = (2 * node + 1, mid);
            }
        }
        let entry = Entry {
            from: from as u32,
            to: to as u32,
            range,
        };
        let n = &mut self.nodes[node];
        merge_in(&mut n.runs, range);
        let at = n.by_address.partition_point(|e| e.range.0 <= range.0);
        n.by_address.insert(at, entry);
    }

    /// Appends to `runs` the address ranges that together cover exactly those filed for
    /// some step of `from..to`: each buffer once, or merged with its neighbours. They
    /// come as sorted runs, one per node, of disjoint ranges: starts and ends ascend.
    pub(super) fn ranges_meeting(&self, from: usize, to: usize, runs: &mut Runs) {
        self.visit(1, 0, self.len, from, to, runs);
    }

    fn visit(&self, node: usize, nl: usize, nr: usize, from: usize, to: usize, runs: &mut Runs) {
        if to <= nl || nr <= from || self.filed[node] == 0 {
            return;
        }
        let n = &self.nodes[node];
        let mid = (nl + nr) / 2;
        // Every buffer here lies within the node and, unless the node is a single step,
        // is live at steps mid - 1 and mid.
        if nr - nl == 1 || (from <= nl && nr <= to) || (from < mid && mid < to) {
            runs.extend(n.runs.iter().copied());
        } else if to <= mid {
            // The query is left of the middle, which every buffer here reaches past: those
            // that start before it ends meet it.
            let reaching = n.by_address.iter().filter(|e| (e.from as usize) < to);
            runs.extend(reaching.map(|e| e.range));
        } else {
            let reaching = n.by_address.iter().filter(|e| (e.to as usize) > from);
            runs.extend(reaching.map(|e| e.range));
        }
        runs.close();
        if nr - nl > 1 {
            self.visit(2 * node, nl, mid, from, to, runs);
            self.visit(2 * node + 1, mid, nr, from, to, runs);
        }
    }
}

/// Address ranges collected as sorted runs: their starts and their ends, each ascending
/// within a run, and where each run ends. [`Runs::merge`] sorts both lists in O(m log r)
/// for m ranges in r runs, instead of sorting thousands of numbers from scratch.
#[derive(Debug, Default)]
pub(super) struct Runs {
    pub(super) starts: Vec<u64>,
    pub(super) ends: Vec<u64>,
    bounds: Vec<usize>,
    scratch: Vec<u64>,
}

impl Runs {
    pub(super) fn clear(&mut self) {
        self.starts.clear();
        self.ends.clear();
        self.bounds.clear();
    }

    /// Adds ranges to the open run.
    pub(super) fn extend(&mut self, ranges: impl Iterator<Item = (u64, u64)>) {
        for (start, end) in ranges {
            self.starts.push(start);
            self.ends.push(end);
        }
    }

    /// Ends the open run, if it holds anything.
    pub(super) fn close(&mut self) {
        if self.bounds.last().copied().unwrap_or(0) < self.starts.len() {
            self.bounds.push(self.starts.len());
        }
    }

    /// Sorts the starts and the ends: by merging neighbouring runs until one is left when
    /// the runs are few and long (log r merge levels), else from scratch.
    pub(super) fn merge(&mut self) {
        self.close();
        let runs = self.bounds.len();
        if runs.saturating_mul(runs) > self.starts.len() {
            self.starts.sort_unstable();
            self.ends.sort_unstable();
            self.bounds.clear();
            self.bounds.push(self.starts.len());
            return;
        }
        let bounds = std::mem::take(&mut self.bounds);
        merge_all(&mut self.starts, &bounds, &mut self.scratch);
        merge_all(&mut self.ends, &bounds, &mut self.scratch);
        self.bounds = bounds;
        self.bounds.clear();
        self.bounds.push(self.starts.len());
    }
}

/// Sorts `keys`, made of ascending runs ending at `bounds`, by merging pairs of runs.
fn merge_all(keys: &mut Vec<u64>, bounds: &[usize], scratch: &mut Vec<u64>) {
    let mut ends = bounds.to_vec();
    while ends.len() > 1 {
        scratch.clear();
        scratch.resize(keys.len(), 0);
        let mut start = 0;
        let mut merged = 0;
        for k in (0..ends.len()).step_by(2) {
            let mid = ends[k];
            let end = ends.get(k + 1).copied().unwrap_or(mid);
            merge_into(&keys[start..mid], &keys[mid..end], &mut scratch[start..end]);
            ends[merged] = end;
            merged += 1;
            start = end;
        }
        ends.truncate(merged);
        std::mem::swap(keys, scratch);
    }
}

/// Writes the merge of the ascending `a` and `b` to `out` (as long as both together).
fn merge_into(a: &[u64], b: &[u64], out: &mut [u64]) {
    let (mut i, mut j) = (0, 0);
    for slot in out.iter_mut() {
        // The branch is a coin toss on merged data; as arithmetic it costs no misses.
        let from_b = j < b.len() && (i >= a.len() || b[j] < a[i]);
        *slot = if from_b { b[j] } else { a[i] };
        j += usize::from(from_b);
        i += usize::from(!from_b);
    }
}

/// Adds `range` to the sorted disjoint `runs`, merging it with every run it overlaps or
/// touches. (Buffers filed at one node are live together and so never overlap; merging
/// overlaps too keeps the list sound whatever it is given.)
fn merge_in(runs: &mut Vec<(u64, u64)>, (start, end): (u64, u64)) {
    let first = runs.partition_point(|r| r.1 < start);
    let last = runs.partition_point(|r| r.0 <= end);
    if first == last {
        runs.insert(first, (start, end));
        return;
    }
    let merged = (start.min(runs[first].0), end.max(runs[last - 1].1));
    runs[first] = merged;
    runs.drain(first + 1..last);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_sorts_runs_of_any_count() {
        let mut runs = Runs::default();
        for run in [&[5u64, 9, 12][..], &[1, 2], &[7], &[0, 3, 20, 21], &[4]] {
            runs.extend(run.iter().map(|&s| (s, s + 1)));
            runs.close();
        }
        runs.merge();
        let sorted = vec![0, 1, 2, 3, 4, 5, 7, 9, 12, 20, 21];
        assert_eq!(runs.starts, sorted);
        assert_eq!(runs.ends, sorted.iter().map(|s| s + 1).collect::<Vec<_>>());
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
        let mut runs = Vec::new();
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

    /// Every range filed for a step that meets the query comes back, and no other: all
    /// queries over 37 steps (not a power of two), 60 lives from a fixed generator.
    #[test]
    fn ranges_meeting_finds_exactly_the_ranges_live_in_the_query() {
        let mut seed = 0x2545_f491_u64;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) as usize % n
        };
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
        let mut filed = Filed::new(steps);
        for (k, &(from, to)) in lives.iter().enumerate() {
            filed.file(from, to, range(k));
        }
        for lo in 0..steps {
            for hi in lo + 1..=steps {
                let mut runs = Runs::default();
                filed.ranges_meeting(lo, hi, &mut runs);
                runs.merge();
                let seen: Vec<(u64, u64)> = runs
                    .starts
                    .iter()
                    .copied()
                    .zip(runs.ends.iter().copied())
                    .collect();
                let expected: Vec<(u64, u64)> = (0..lives.len())
                    .filter(|&k| lives[k].0 < hi && lo < lives[k].1)
                    .map(range)
                    .collect();
                assert_eq!(seen, expected, "query {lo}..{hi}");
            }
        }
    }
}
