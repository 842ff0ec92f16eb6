//! One pool's share of a problem, in the form the search works on: buffers renumbered
//! `0..n`, their overlaps, and for live ranges the time "sections" (maximal stretches with
//! one live set) that give the search its pruning and its decomposition.
//!
//! Declared windows ([`crate::Overlap`]) enter as *reach* (see [`Windows`]): how far
//! above an item's offset a conflicting item placed after it must start.

use super::windows::{Pair, Windows};
use crate::problem::{Conflicts, Problem};

/// The buffers of one pool, as the search sees them.
#[derive(Debug)]
pub(crate) struct Instance {
    /// Problem index of each item.
    pub(crate) buffers: Vec<usize>,
    pub(crate) size: Vec<u64>,
    pub(crate) align: Vec<u64>,
    /// Per item, the sections `[first, last)` it is live in; `(0, 0)` without live ranges.
    pub(crate) span: Vec<(u32, u32)>,
    /// Per item, the length of its live range in time steps (0 without live ranges).
    pub(crate) length: Vec<u64>,
    /// Per item, the items it may not share bytes with (but within a window).
    pub(crate) overlaps: Vec<Vec<u32>>,
    /// Per item, beside `overlaps`: an item placed after it at or above its offset must
    /// start at least this far above it. Its size, but for an output over its input.
    pub(crate) reach: Vec<Vec<u64>>,
    /// Per section, the items live in it (empty for conflict graphs).
    pub(crate) members: Vec<Vec<u32>>,
    /// The windows the search places with.
    pub(crate) pairs: Vec<Pair>,
    /// Per item, its pairs (indices into `pairs`).
    pub(crate) pairs_of: Vec<Vec<u32>>,
    /// Per item, the first key among items at one offset: an output that may start where
    /// its input starts comes before it (see `windows::ties`).
    pub(crate) tie: Vec<u32>,
    /// Whether some window was narrowed for the search (see `windows`): its plans are
    /// then valid, but its proofs cover only the narrower windows.
    pub(crate) narrowed: bool,
    /// Per item, the item before it that it could swap places with in any plan (the
    /// same live range, size and alignment, no window), or `u32::MAX`: the search
    /// places such twins in item order only.
    pub(crate) twin: Vec<u32>,
}

/// Live ranges `[start, end)` as spans of time sections `[first, last)`, sections being
/// the stretches between consecutive distinct bounds; and how many sections there are.
pub(crate) fn section_spans(lives: &[(u64, u64)]) -> (Vec<(u32, u32)>, usize) {
    let mut points: Vec<u64> = lives.iter().flat_map(|&(s, e)| [s, e]).collect();
    points.sort_unstable();
    points.dedup();
    let at = |t: u64| points.partition_point(|&p| p < t) as u32;
    let span = lives.iter().map(|&(s, e)| (at(s), at(e))).collect();
    (span, points.len().saturating_sub(1))
}

/// For live ranges: each item's span of sections, the items each overlaps in time, and
/// each section's items.
type InTime = (Vec<(u32, u32)>, Vec<Vec<u32>>, Vec<Vec<u32>>);

fn in_time(problem: &Problem, buffers: &[usize]) -> InTime {
    let all = problem.buffers();
    let n = buffers.len();
    let lives: Vec<(u64, u64)> = buffers
        .iter()
        .map(|&b| all[b].live.map_or((0, 0), |l| (l.start, l.end)))
        .collect();
    let (span, sections) = section_spans(&lives);
    let mut members = vec![Vec::new(); sections];
    for (i, &(first, last)) in span.iter().enumerate() {
        for m in &mut members[first as usize..last as usize] {
            m.push(i as u32);
        }
    }
    // Two ranges overlap iff their section spans share a section.
    let mut by_start: Vec<u32> = (0..n as u32)
        .filter(|&i| span[i as usize].0 < span[i as usize].1)
        .collect();
    by_start.sort_unstable_by_key(|&i| span[i as usize]);
    let mut overlaps = vec![Vec::new(); n];
    for (k, &i) in by_start.iter().enumerate() {
        let end = span[i as usize].1;
        for &j in &by_start[k + 1..] {
            if span[j as usize].0 >= end {
                break;
            }
            overlaps[i as usize].push(j);
            overlaps[j as usize].push(i);
        }
    }
    (span, overlaps, members)
}

/// For a conflict graph over `buffers` (of `len` in the problem): the items each conflicts with.
fn in_graph(adj: &[Vec<usize>], len: usize, buffers: &[usize]) -> Vec<Vec<u32>> {
    let mut item = vec![u32::MAX; len];
    for (k, &b) in buffers.iter().enumerate() {
        item[b] = k as u32;
    }
    buffers
        .iter()
        .map(|&b| {
            adj[b]
                .iter()
                .map(|&j| item[j])
                .filter(|&k| k != u32::MAX)
                .collect()
        })
        .collect()
}

/// For live ranges: per item, the last item before it with the same live range, size
/// and alignment, neither in a window (`u32::MAX` for none). Such items conflict with
/// the same others and each other, so exchanging their offsets keeps a plan a plan.
fn twins(problem: &Problem, buffers: &[usize], pool: usize, pairs_of: &[Vec<u32>]) -> Vec<u32> {
    let all = problem.buffers();
    let mut last = std::collections::BTreeMap::new();
    let mut twin = vec![u32::MAX; buffers.len()];
    for (k, &b) in buffers.iter().enumerate() {
        let Some(live) = all[b].live.filter(|_| pairs_of[k].is_empty()) else {
            continue;
        };
        let key = (
            live.start,
            live.end,
            all[b].size,
            problem.alignment_in(b, pool),
        );
        if let Some(before) = last.insert(key, k as u32) {
            twin[k] = before;
        }
    }
    twin
}

impl Instance {
    /// The items `buffers` of `problem`, all placed in `pool`.
    pub(crate) fn new(problem: &Problem, pool: usize, buffers: Vec<usize>) -> Instance {
        let all = problem.buffers();
        let size: Vec<u64> = buffers.iter().map(|&b| all[b].size).collect();
        let align = buffers
            .iter()
            .map(|&b| problem.alignment_in(b, pool))
            .collect();
        let n = buffers.len();
        let length = buffers
            .iter()
            .map(|&b| all[b].live.map_or(0, |l| l.end - l.start))
            .collect();
        let (span, overlaps, members) = match problem.conflicts() {
            Conflicts::Intervals => in_time(problem, &buffers),
            Conflicts::Graph(adj) => {
                let overlaps = in_graph(adj, all.len(), &buffers);
                (vec![(0, 0); n], overlaps, Vec::new())
            }
        };
        let w = Windows::of(problem, &buffers, &size, &span, &overlaps);
        let twin = match problem.conflicts() {
            Conflicts::Intervals => twins(problem, &buffers, pool, &w.pairs_of),
            Conflicts::Graph(_) => vec![u32::MAX; n],
        };
        Instance {
            buffers,
            size,
            align,
            length,
            span,
            reach: w.reach,
            overlaps,
            members,
            pairs: w.pairs,
            pairs_of: w.pairs_of,
            tie: w.tie,
            narrowed: w.narrowed,
            twin,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.buffers.len()
    }

    pub(crate) fn sections(&self) -> usize {
        self.members.len()
    }

    /// The bytes no placement can go below: the fullest section less what its pairs may
    /// share, or the largest item; rounded up to the step every end lies on.
    pub(crate) fn lower_bound(&self) -> u64 {
        let shared = self.shared();
        let sections =
            (self.members.iter().zip(shared)).map(|(m, s)| self.total(m).saturating_sub(s));
        let bound = sections.chain(self.size.iter().copied()).max().unwrap_or(0);
        bound.checked_next_multiple_of(self.step()).unwrap_or(bound)
    }

    /// The largest number every item's end (offset plus size) is a multiple of, so that
    /// a capacity fits exactly when that multiple at or below it does. Each offset is 0
    /// or the top of an item below (its offset plus its reach) rounded up to its
    /// alignment. Where every alignment divides every size and reach (alignment 1, or
    /// sizes rounded to it), no rounding happens: ends are sums of sizes and reaches, and
    /// their common divisor is the step (1,024 on MiniMalloc's instances). Otherwise each
    /// offset is a multiple of its alignment, and the step divides every alignment and
    /// size: pools aligned to 16 with sizes rounded to 16 have ends 16 apart, and a bound
    /// between two of them (from overlaps that share odd bytes) is one step short.
    pub(crate) fn step(&self) -> u64 {
        fn gcd(a: u64, b: u64) -> u64 {
            if b == 0 { a } else { gcd(b, a % b) }
        }
        let reaches = self
            .reach
            .iter()
            .flatten()
            .chain(self.pairs.iter().map(|p| &p.reach));
        let sums = self.size.iter().chain(reaches).fold(0, |g, &x| gcd(g, x));
        if sums != 0 && self.align.iter().all(|&a| sums % a == 0) {
            return sums;
        }
        let all = self.size.iter().chain(&self.align);
        all.fold(0, |g, &x| gcd(g, x)).max(1)
    }

    /// Per section, the bytes its pairs may share when none is placed.
    pub(crate) fn shared(&self) -> Vec<u64> {
        let mut shared = vec![0u64; self.sections()];
        for p in &self.pairs {
            for s in &mut shared[p.sections.0 as usize..p.sections.1 as usize] {
                *s = s.saturating_add(p.share);
            }
        }
        shared
    }

    /// Summed size of `items`, saturating (sizes are user data).
    pub(crate) fn total(&self, items: &[u32]) -> u64 {
        items
            .iter()
            .fold(0u64, |t, &i| t.saturating_add(self.size[i as usize]))
    }
}
