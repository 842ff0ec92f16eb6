//! The gap searches: where a buffer fits among the address ranges it must avoid, given as
//! runs, each a slice of disjoint ascending ranges (as [`Filed`](super::trees::Filed)
//! keeps them); runs may overlap one another. The runs are read where they lie, never
//! copied or merged into one list.
//!
//! - **Lowest fit** leapfrogs: a candidate offset is checked against each run by a
//!   galloping search from where that run was last left, and pushed up past the first
//!   range that blocks it, until every run lets it through. In a region packed solid
//!   this skips every range not at the frontier.
//! - **Tightest fit** must see every gap, so it walks the union of the runs from the
//!   bottom up, merging them lazily by start (a tournament over one cursor per run); an
//!   exact fit ends the walk.
//!
//! A conflict graph gives one range per buffer; [`sorted_union`] makes them one run.

use std::hint::select_unpredictable;

use super::addr::{Addr, widen};
use super::align_up;

/// Sorts `ranges` and merges those that overlap or touch: one run of disjoint ranges.
pub(super) fn sorted_union<W: Addr>(ranges: &mut Vec<(W, W)>) {
    ranges.sort_unstable();
    let mut merged = 0;
    for k in 0..ranges.len() {
        let (start, end) = ranges[k];
        if merged > 0 && start <= ranges[merged - 1].1 {
            let last = &mut ranges[merged - 1];
            last.1 = last.1.max(end);
        } else {
            ranges[merged] = (start, end);
            merged += 1;
        }
    }
    ranges.truncate(merged);
}

/// The work counted for finding position `found` in a run of `len` ranges whose first is
/// passed: the probes of a gallop from the front (doubling the step while a whole step
/// is passed, then bisecting the last), the count kept whatever way `found` was reached.
fn gallop_steps(found: usize, len: usize) -> u64 {
    let (mut lo, mut step) = (0, 1);
    while lo + step <= len && lo + step - 1 < found {
        lo += step;
        step *= 2;
    }
    1 + u64::from(step.ilog2())
}

/// Records the gap `[at, to)` in `best` (gap size, offset) if it is tighter than the one
/// there; true when it fits exactly, which nothing beats (and, found lowest first, it is
/// the lowest of its kind).
fn keep_tighter(best: &mut Option<(u64, u64)>, at: u64, to: u64, size: u64) -> bool {
    let gap = to - at;
    if best.is_none_or(|(g, _)| gap < g) {
        *best = Some((gap, at));
    }
    gap == size
}

/// The memory a gap search works in, kept from one search to the next: a placement pass
/// makes one search per buffer, and allocating these each time cost a twentieth of best
/// fit's time on a million buffers.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    /// Per run, its first range not yet passed: offsets only rise during a search.
    cursors: Vec<usize>,
    /// Best fit's tournament of run heads.
    heads: Tournament,
}

/// Best fit's walk merges the runs by start with a tournament over their heads: each
/// internal node keeps the loser of the match played there, the root's slot the winner.
/// Replacing the winner's head replays one path, a compare and two selects per level, no
/// branch to mispredict; a binary heap's sift has two unpredictable branches per level.
/// Heads that start together may come out in any order: the walk reads them all before
/// it can pass their start, and finds the same gaps and work either way.
#[derive(Debug, Default)]
struct Tournament {
    /// `[0]` the winner, `[n]` for `n` in `1..leaves` the loser at node `n`, whose
    /// children are `2n` and `2n + 1` (leaf `k` is node `leaves + k`).
    nodes: Vec<Head>,
    /// Scratch for building: the winner of every node.
    winners: Vec<Head>,
    leaves: usize,
}

/// A run's first range not yet walked, its start above the run's index (the low
/// [`RUN_BITS`] bits), so that heads compare by start in one word: a tournament of
/// `(start, run)` pairs took a fifth more instructions on best fit's walk. The walk is
/// used only where every start and run fits (see [`Gaps::tightest`]).
type Head = u64;

/// The bits of a [`Head`] that hold its run.
const RUN_BITS: u32 = 8;

/// The head of a run with no range left, after every real head.
const SPENT: Head = u64::MAX;

/// The head of the range starting at `start` in run `run`.
fn head(start: u64, run: usize) -> Head {
    start << RUN_BITS | run as u64
}

impl Tournament {
    /// Plays the tournament over `heads`, one per run.
    fn start(&mut self, heads: impl ExactSizeIterator<Item = Head>) {
        let leaves = heads.len().next_power_of_two();
        self.leaves = leaves;
        self.winners.clear();
        self.winners.resize(leaves, SPENT);
        self.winners.extend(heads);
        self.winners.resize(2 * leaves, SPENT);
        self.nodes.clear();
        self.nodes.resize(leaves, SPENT);
        for n in (1..leaves).rev() {
            let (a, b) = (self.winners[2 * n], self.winners[2 * n + 1]);
            let (low, high) = if b < a { (b, a) } else { (a, b) };
            self.winners[n] = low;
            self.nodes[n] = high;
        }
        // With one leaf, node 1 is that leaf.
        self.nodes[0] = self.winners[1];
    }

    /// The run of the lowest head, `None` when every run is spent.
    fn winner(&self) -> Option<usize> {
        let h = self.nodes[0];
        (h != SPENT).then_some((h & ((1 << RUN_BITS) - 1)) as usize)
    }

    /// Replaces run `k`'s head (the winner's) by `next` and replays its path.
    fn replace(&mut self, k: usize, next: Head) {
        let mut winner = next;
        let mut n = (self.leaves + k) / 2;
        while n > 0 {
            let loser = self.nodes[n];
            let swap = loser < winner;
            self.nodes[n] = select_unpredictable(swap, winner, loser);
            winner = select_unpredictable(swap, loser, winner);
            n /= 2;
        }
        self.nodes[0] = winner;
    }
}

/// One gap search over `runs`, with the work it did: ranges read and search steps taken,
/// a deterministic measure of effort.
pub(super) struct Gaps<'a, W> {
    runs: &'a [&'a [(W, W)]],
    scratch: &'a mut Scratch,
    pub(super) work: u64,
}

impl<'a, W: Addr> Gaps<'a, W> {
    pub(super) fn new(runs: &'a [&'a [(W, W)]], scratch: &'a mut Scratch) -> Self {
        scratch.cursors.clear();
        scratch.cursors.resize(runs.len(), 0);
        Gaps {
            runs,
            scratch,
            work: 0,
        }
    }

    /// The highest end of every range, 0 without ranges.
    pub(super) fn top(&self) -> u64 {
        self.runs
            .iter()
            .filter_map(|r| r.last())
            .map(|r| r.1.into())
            .max()
            .unwrap_or(0)
    }

    /// The lowest `align`-aligned offset where `size` bytes avoid every range.
    pub(super) fn lowest(&mut self, size: u64, align: u64) -> u64 {
        self.lowest_from::<false>(0, size, align).0
    }

    /// The lowest `align`-aligned offset `at`, at or above `from`, where `size` bytes
    /// avoid every range, and the lowest start of a range above it (`u64::MAX` if none
    /// is): `[at, to)` is free. Calls on one search must come with rising `from`s
    /// (cursors only move up). Without `GAP_END`, `to` is not tracked (first fit needs
    /// only `at`, and the tracking costs it a tenth of its time).
    fn lowest_from<const GAP_END: bool>(&mut self, from: u64, size: u64, align: u64) -> (u64, u64) {
        let runs = self.runs.len();
        let mut at = align_up(from, align);
        let (mut clean, mut k, mut to) = (0, 0, u64::MAX);
        while clean < runs {
            match self.first_ending_after(k, at) {
                Some((start, end)) if start < at.saturating_add(size) => {
                    at = align_up(end, align);
                    clean = 0;
                    to = u64::MAX;
                }
                ahead => {
                    // Every run passed since the last jump leaves `at` free up to its
                    // next range.
                    if GAP_END && let Some((start, _)) = ahead {
                        to = to.min(start);
                    }
                    clean += 1;
                    // Not `%`: a division per check costs more than the check.
                    k = if k + 1 == runs { 0 } else { k + 1 };
                }
            }
        }
        (at, to)
    }

    /// Run `k`'s first range that ends after `at`, found by galloping from the run's
    /// cursor (disjoint ascending ranges have ascending ends).
    #[inline(always)]
    fn first_ending_after(&mut self, k: usize, at: u64) -> Option<(u64, u64)> {
        let run = &self.runs[k][self.scratch.cursors[k]..];
        // Most checks find the cursor's range still ahead: one read, one step.
        match run.first() {
            Some(&first) if first.1.into() <= at => {}
            first => {
                self.work += 1;
                return first.map(widen);
            }
        }
        // The cursor's range is passed: most often the one after it is the answer, so the
        // next few (in the same cache line) are stepped over before galloping.
        let passed = |i: usize| run[i].1.into() <= at;
        let mut found = 1;
        while found < run.len().min(4) && passed(found) {
            found += 1;
        }
        if found == 4 && found < run.len() {
            // Double the step while whole steps are passed, then bisect the last one.
            let (mut lo, mut step) = (3, 4);
            while lo + step <= run.len() && passed(lo + step - 1) {
                lo += step;
                step *= 2;
            }
            let hi = (lo + step).min(run.len());
            found = lo + run[lo..hi].partition_point(|r| r.1.into() <= at);
        }
        self.work += gallop_steps(found, run.len());
        self.scratch.cursors[k] += found;
        run.get(found).map(widen)
    }

    /// The aligned offset of the smallest gap between the ranges that holds `size` bytes
    /// (the lowest such gap on ties), or the aligned top of all ranges when no gap does.
    ///
    /// The union of the runs is walked range by range, every gap one step. (Leaping from
    /// one gap that holds the buffer to the next first, four times, cost greedy by
    /// breadth a tenth more on a million random lives once the walk's heads were one
    /// word.) Where a start or the run count does not fit in a head, it leaps to the end.
    pub(super) fn tightest(&mut self, size: u64, align: u64) -> u64 {
        let mut best: Option<(u64, u64)> = None;
        let at_best = |best: Option<(u64, u64)>, top: u64| {
            best.map_or_else(|| align_up(top, align), |(_, at)| at)
        };
        if self.runs.len() < 1 << RUN_BITS && self.top() < SPENT >> RUN_BITS {
            let top = self.free_ranges(|from, to| {
                let at = align_up(from, align);
                at.saturating_add(size) <= to && keep_tighter(&mut best, at, to, size)
            });
            return at_best(best, top);
        }
        let mut from = 0;
        loop {
            let (at, to) = self.lowest_from::<true>(from, size, align);
            if to == u64::MAX {
                // Nothing lies above `at`: no gap is left.
                return at_best(best, self.top());
            }
            if keep_tighter(&mut best, at, to, size) {
                return at;
            }
            from = to;
        }
    }

    /// Calls `f(from, to)` for each free range `[from, to)` below the top of the ranges,
    /// lowest first, until it returns true. Returns the highest end read (the top of all
    /// when `f` never returned true). The walk starts at each run's cursor, which must
    /// still be at its first range.
    fn free_ranges(&mut self, mut f: impl FnMut(u64, u64) -> bool) -> u64 {
        let mut frontier = 0;
        let mut read = 0u64;
        // In ascending start order, a start above every end before it opens a gap;
        // touching ranges leave none.
        let mut step = |(start, end): (u64, u64)| {
            read += 1;
            if start > frontier && f(frontier, start) {
                return true;
            }
            frontier = frontier.max(end);
            false
        };
        let cursors = &mut self.scratch.cursors;
        let heads = &mut self.scratch.heads;
        heads.start(
            self.runs
                .iter()
                .enumerate()
                .map(|(k, run)| run.get(cursors[k]).map_or(SPENT, |r| head(r.0.into(), k))),
        );
        while let Some(k) = heads.winner() {
            let at = cursors[k];
            if step(widen(&self.runs[k][at])) {
                break;
            }
            cursors[k] = at + 1;
            let next = self.runs[k]
                .get(at + 1)
                .map_or(SPENT, |r| head(r.0.into(), k));
            heads.replace(k, next);
        }
        self.work += read;
        frontier
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both searches by brute force over a map of every address below the top.
    fn brute(ranges: &[(u64, u64)], size: u64, align: u64) -> (u64, u64) {
        let top = ranges.iter().map(|r| r.1).max().unwrap_or(0);
        let mut used = vec![false; top as usize];
        for &(s, e) in ranges {
            used[s as usize..e as usize].fill(true);
        }
        let free = |at: u64| (at..at + size).all(|x| x >= top || !used[x as usize]);
        let lowest = (0..).step_by(align as usize).find(|&at| free(at)).unwrap();
        // The maximal free ranges below the top, and the tightest that holds it.
        let mut best: Option<(u64, u64)> = None;
        let mut x = 0;
        while x < top {
            if used[x as usize] {
                x += 1;
                continue;
            }
            let from = x;
            while x < top && !used[x as usize] {
                x += 1;
            }
            let at = align_up(from, align);
            if at + size <= x && best.is_none_or(|(g, _)| x - at < g) {
                best = Some((x - at, at));
            }
        }
        (lowest, best.map_or(align_up(top, align), |(_, at)| at))
    }

    /// The tournament gives every head in ascending start order, for any number of runs
    /// (leaves padded to a power of two), each head replaced by its run's next start.
    #[test]
    fn tournament_merges_runs_by_start() {
        let mut rng = crate::test_rng::Rng::seeded(0x7e57_0a11);
        let mut tournament = Tournament::default();
        for runs in 0..40 {
            let lists: Vec<Vec<u64>> = (0..runs)
                .map(|_| {
                    let mut starts: Vec<u64> = (0..rng.below(6)).map(|_| rng.below(50)).collect();
                    starts.sort_unstable();
                    starts
                })
                .collect();
            let mut next = vec![0; runs];
            let head = |k: usize, i: usize| lists[k].get(i).map_or(SPENT, |&s| head(s, k));
            tournament.start((0..runs).map(|k| head(k, 0)));
            let mut seen = Vec::new();
            while let Some(k) = tournament.winner() {
                seen.push(lists[k][next[k]]);
                next[k] += 1;
                tournament.replace(k, head(k, next[k]));
            }
            let mut expected = lists.concat();
            expected.sort_unstable();
            assert_eq!(seen, expected, "{runs} runs: {lists:?}");
        }
    }

    /// Where starts do not fit beside a run index in one word, best fit leaps to the end
    /// instead of walking: the same gaps, far up the address space.
    #[test]
    fn best_fit_high_in_the_address_space_leaps_to_the_same_gap() {
        let mut rng = crate::test_rng::Rng::seeded(0x41_9e11);
        let mut scratch = Scratch::default();
        // Ranges on both sides of 2^56, where a start no longer fits beside a run index.
        let base = (1u64 << 56) - 24;
        for case in 0..500 {
            let runs: Vec<Vec<(u64, u64)>> = (0..1 + rng.below(6))
                .map(|_| {
                    let mut at = rng.below(6);
                    (0..rng.below(30))
                        .map(|_| {
                            let len = 1 + rng.below(5);
                            let r = (at, at + len);
                            at += len + 1 + rng.below(4);
                            r
                        })
                        .collect()
                })
                .collect();
            // The same runs moved up, and one more taking all below them.
            let mut high: Vec<Vec<(u64, u64)>> = runs
                .iter()
                .map(|run| run.iter().map(|&(s, e)| (base + s, base + e)).collect())
                .collect();
            high.push(vec![(0, base)]);
            // Small buffers among many gaps: many leaps, many heads to walk.
            let (size, align) = (1 + rng.below(3), 1 << rng.below(2));
            let low: Vec<&[(u64, u64)]> = runs.iter().map(Vec::as_slice).collect();
            let high: Vec<&[(u64, u64)]> = high.iter().map(Vec::as_slice).collect();
            let below = Gaps::new(&low, &mut scratch).tightest(size, align);
            let above = Gaps::new(&high, &mut scratch).tightest(size, align);
            assert_eq!(above, base + below, "case {case}: {runs:?}");
        }
    }

    #[test]
    fn searches_agree_with_brute_force_for_any_runs() {
        let mut rng = crate::test_rng::Rng::seeded(0x9e37_79b9);
        let mut next = |n: u64| rng.below(n);
        let mut scratch = Scratch::default();
        for case in 0..3000 {
            let mut runs: Vec<Vec<(u64, u64)>> = Vec::new();
            for _ in 0..next(5) {
                let mut at = next(6);
                let mut run = Vec::new();
                for _ in 0..next(12) {
                    let len = 1 + next(5);
                    run.push((at, at + len));
                    // Disjoint within a run, sometimes touching.
                    at += len + next(4);
                }
                runs.push(run);
            }
            let all: Vec<(u64, u64)> = runs.concat();
            let slices: Vec<&[(u64, u64)]> = runs.iter().map(Vec::as_slice).collect();
            let (size, align) = (1 + next(6), 1 << next(3));
            let (lowest, best) = brute(&all, size, align);
            let mut union = all.clone();
            sorted_union(&mut union);
            let one = [union.as_slice()];
            // The runs as given, and the same ranges as one sorted run; one scratch for
            // every search of every case, as a placement pass reuses it.
            for (form, runs) in [("runs", slices.as_slice()), ("one run", &one[..])] {
                let found = Gaps::new(runs, &mut scratch).lowest(size, align);
                assert_eq!(found, lowest, "case {case}, {form}: {all:?}");
                let found = Gaps::new(runs, &mut scratch).tightest(size, align);
                assert_eq!(found, best, "case {case}, {form}: {all:?}");
            }
        }
    }
}
