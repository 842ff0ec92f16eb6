//! Pool choice, searched with placement: which of its candidate pools each buffer goes to.
//!
//! Depth first over the buffers that have a choice, largest first, each trying its
//! candidates in preference order. Every pool keeps a lower bound of what it holds so far
//! (the fullest time section for live ranges, the largest pair that conflicts for conflict
//! lists), which only grows as buffers are added, so a branch ends as soon as a bounded
//! pool's bound passes its limit or the bounds add up to the best total found. At a
//! complete assignment each pool is placed by the exact search (`minimise`), remembered by
//! its set of buffers, since many assignments share a pool's contents.
//!
//! A plan replaces the one in hand only when its total of pool sizes is strictly smaller,
//! so among equal totals the first found stays (the start plan, then assignments in
//! preference order). The search stops at the first plan of at most `enough` bytes: the
//! lower bound for the smallest total, or any size for the first plan in preference
//! order. When it ends within its work it has seen every assignment: the best plan is the
//! smallest, and if none was found, none exists.

use std::collections::BTreeMap;

use super::effort::Effort;
use super::instance::{Instance, section_spans};
use super::{minimise, peak};
use crate::problem::{Conflicts, Problem};
use crate::solution::Allocation;

/// Problems with more buffers than this are not searched jointly: every complete
/// assignment places each pool exactly, which would not get past the first few.
pub const JOINT_MAX_BUFFERS: usize = 256;

/// Nor problems with more buffers that have a choice of pools than this: the assignments
/// grow as the number of candidates to this power, and a build must not spend its budget
/// on a search that cannot finish (a real model whose every tensor may go to either of
/// two memories has 2^40 or more).
pub const JOINT_MAX_CHOOSERS: usize = 24;

/// The joint search's share of [`Exact::work_budget`](super::Exact::work_budget): it
/// runs after the placement search, which has the whole budget.
pub(crate) const JOINT_BUDGET_DIVISOR: u64 = 4;

/// Whether `problem` is small enough for the joint search: at most [`JOINT_MAX_BUFFERS`]
/// buffers, [`JOINT_MAX_CHOOSERS`] of them with a choice of pools.
pub(crate) fn small(problem: &Problem) -> bool {
    let buffers = problem.buffers();
    let choosers = buffers.iter().filter(|b| b.candidates.len() > 1).count();
    buffers.len() <= JOINT_MAX_BUFFERS && choosers <= JOINT_MAX_CHOOSERS
}

/// What the joint search found.
pub(crate) struct Joint {
    /// The best plan seen, the start plan included, and its total.
    pub(crate) best: Option<(u64, Vec<Allocation>)>,
    /// Whether every assignment was covered: `best` is optimal, or no plan exists.
    pub(crate) complete: bool,
}

/// One pool placed exactly: its end and offsets (by the order of its buffers), and whether
/// that end is proven the smallest.
#[derive(Clone)]
struct Placed {
    end: u64,
    offsets: Vec<u64>,
    proven: bool,
}

struct State<'p> {
    problem: &'p Problem,
    /// The buffers with a choice, in the order they are decided.
    choosers: Vec<usize>,
    /// Per buffer, its pool; `usize::MAX` while undecided.
    pool_of: Vec<usize>,
    /// Per pool, its buffers in the order they were added.
    members: Vec<Vec<usize>>,
    /// Per pool, the lower bound of what it holds, one entry per buffer added.
    bound: Vec<Vec<u64>>,
    /// Live ranges only: per pool and time section, the bytes live there.
    load: Vec<Vec<u64>>,
    /// Per buffer, its sections `[first, last)` (live ranges only).
    span: Vec<(usize, usize)>,
    /// Stop once a plan this small is found (the problem's lower bound, or in decision
    /// mode the capacity asked for).
    enough: u64,
    best: Option<(u64, Vec<Allocation>)>,
    /// Pools placed so far, by pool and sorted buffers.
    placed: BTreeMap<(usize, Vec<usize>), Option<Placed>>,
    complete: bool,
    effort: &'p mut Effort,
    /// With [`Objective::Time`]: the estimated memory time decides, the total only
    /// between equal times.
    time: Option<Time>,
}

/// What the search minimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Objective {
    /// The total of the pool sizes.
    Total,
    /// The estimated memory time per inference (each buffer's traffic at its pool's
    /// bandwidth; pools without one cost nothing), then the total.
    Time,
}

/// The memory time of an assignment, in units of 10^-18 s ([`crate::traffic::per_byte`]).
struct Time {
    /// Per buffer and pool, the time its traffic takes there.
    cost: Vec<Vec<u128>>,
    /// Per depth, the least the choosers from there on can add: each at its quickest.
    rest: Vec<u128>,
    /// The time of the buffers placed so far.
    so_far: u128,
    /// The best plan's time; `u128::MAX` before one.
    best: u128,
    /// No assignment is quicker than this: every buffer at its quickest candidate.
    floor: u128,
}

/// Searches the assignments of `problem`'s buffers to pools, starting from `start` (a
/// valid plan and its total, if there is one), until a plan of at most `enough` bytes is
/// found or `effort` runs out.
pub(crate) fn search(
    problem: &Problem,
    start: Option<(u64, Vec<Allocation>)>,
    enough: u64,
    effort: &mut Effort,
    objective: Objective,
) -> Joint {
    let n = problem.buffers().len();
    let pools = problem.pools().len();
    let (span, sections) = match problem.conflicts() {
        Conflicts::Intervals => sections(problem),
        Conflicts::Graph(_) => (vec![(0, 0); n], 0),
    };
    let mut choosers: Vec<usize> = (0..n)
        .filter(|&b| problem.buffers()[b].candidates.len() > 1)
        .collect();
    choosers.sort_by_key(|&b| (std::cmp::Reverse(problem.buffers()[b].size), b));
    let time = (objective == Objective::Time).then(|| Time::new(problem, &choosers, &start));
    let mut state = State {
        problem,
        choosers,
        pool_of: vec![usize::MAX; n],
        members: vec![Vec::new(); pools],
        bound: vec![vec![0]; pools],
        load: vec![vec![0; sections]; pools],
        span,
        enough,
        best: start,
        placed: BTreeMap::new(),
        complete: true,
        effort,
        time,
    };
    if state.done() {
        return Joint {
            best: state.best,
            complete: true,
        };
    }
    // Buffers without a choice are where they must be from the start.
    for b in 0..n {
        if let [pool] = problem.buffers()[b].candidates[..] {
            state.add(b, pool);
        }
    }
    if state.fits(0) {
        state.decide(0);
    }
    Joint {
        // The loads that prune assignments add sizes as if every pair were apart: with
        // overlaps declared, an assignment they prune may fit, so trying the rest proves
        // nothing.
        complete: state.complete && problem.overlaps().is_empty(),
        best: state.best,
    }
}

impl Time {
    fn new(problem: &Problem, choosers: &[usize], start: &Option<(u64, Vec<Allocation>)>) -> Self {
        let pools = problem.pools();
        let cost: Vec<Vec<u128>> = problem
            .buffers()
            .iter()
            .map(|b| {
                pools
                    .iter()
                    .map(|p| {
                        p.bandwidth
                            .map_or(0, |bw| u128::from(b.traffic) * crate::traffic::per_byte(bw))
                    })
                    .collect()
            })
            .collect();
        let quickest = |b: usize| {
            let candidates = &problem.buffers()[b].candidates;
            candidates.iter().map(|&p| cost[b][p]).min().unwrap_or(0)
        };
        let mut rest = vec![0u128; choosers.len() + 1];
        for d in (0..choosers.len()).rev() {
            rest[d] = rest[d + 1] + quickest(choosers[d]);
        }
        let floor = (0..cost.len()).map(quickest).sum();
        let time_of = |a: &[Allocation]| a.iter().enumerate().map(|(b, x)| cost[b][x.pool]).sum();
        let best = start.as_ref().map_or(u128::MAX, |(_, a)| time_of(a));
        Time {
            cost,
            rest,
            so_far: 0,
            best,
            floor,
        }
    }
}

/// Per buffer, the time sections `[first, last)` of its live range, numbered over the
/// whole problem; and how many sections there are.
fn sections(problem: &Problem) -> (Vec<(usize, usize)>, usize) {
    let lives: Vec<(u64, u64)> = problem
        .buffers()
        .iter()
        .map(|b| b.live.map_or((0, 0), |l| (l.start, l.end)))
        .collect();
    let (span, count) = section_spans(&lives);
    let span = span
        .into_iter()
        .map(|(first, last)| (first as usize, last as usize))
        .collect();
    (span, count)
}

impl State<'_> {
    fn total(&self) -> u64 {
        self.best.as_ref().map_or(u64::MAX, |(t, _)| *t)
    }

    fn done(&self) -> bool {
        match &self.time {
            Some(time) => time.best <= time.floor,
            None => self.best.as_ref().is_some_and(|(t, _)| *t <= self.enough),
        }
    }

    /// Whether a plan of the current assignment, whose pools add at least `total` bytes
    /// (and, with the time objective, `time` at least), cannot beat the best.
    fn beaten(&self, total: u64, time: u128) -> bool {
        match &self.time {
            Some(t) => time > t.best || (time == t.best && total >= self.total()),
            None => total >= self.total(),
        }
    }

    /// The least time an assignment completing the current one from `depth` can have.
    fn time_from(&self, depth: usize) -> u128 {
        self.time.as_ref().map_or(0, |t| t.so_far + t.rest[depth])
    }

    fn bound_of(&self, pool: usize) -> u64 {
        self.bound[pool].last().copied().unwrap_or(0)
    }

    /// Puts buffer `b` in `pool` and raises the pool's bound.
    fn add(&mut self, b: usize, pool: usize) {
        let size = self.problem.buffers()[b].size;
        let mut bound = self.bound_of(pool).max(size);
        match self.problem.conflicts() {
            Conflicts::Intervals => {
                let (first, last) = self.span[b];
                for load in &mut self.load[pool][first..last] {
                    *load = load.saturating_add(size);
                    bound = bound.max(*load);
                }
            }
            Conflicts::Graph(adj) => {
                for &j in &adj[b] {
                    if self.pool_of[j] == pool {
                        let pair = size.saturating_add(self.problem.buffers()[j].size);
                        bound = bound.max(pair);
                    }
                }
            }
        }
        self.pool_of[b] = pool;
        self.members[pool].push(b);
        self.bound[pool].push(bound);
        if let Some(t) = &mut self.time {
            t.so_far += t.cost[b][pool];
        }
    }

    /// Undoes the last [`add`](Self::add) of `b`.
    fn remove(&mut self, b: usize) {
        let pool = self.pool_of[b];
        let size = self.problem.buffers()[b].size;
        if let Conflicts::Intervals = self.problem.conflicts() {
            let (first, last) = self.span[b];
            for load in &mut self.load[pool][first..last] {
                *load -= size;
            }
        }
        self.pool_of[b] = usize::MAX;
        self.members[pool].pop();
        self.bound[pool].pop();
        if let Some(t) = &mut self.time {
            t.so_far -= t.cost[b][pool];
        }
    }

    /// Whether the pools' bounds still allow a plan better than the best, with the
    /// choosers from `depth` on still to decide.
    fn fits(&self, depth: usize) -> bool {
        let pools = self.problem.pools();
        let mut sum = 0u64;
        for (p, pool) in pools.iter().enumerate() {
            let bound = self.bound_of(p);
            if !pool.admits(bound) {
                return false;
            }
            sum = sum.saturating_add(bound);
        }
        !self.beaten(sum, self.time_from(depth))
    }

    /// Decides the chooser at `depth` and everything after it.
    fn decide(&mut self, depth: usize) {
        if !self.effort.spend(1) {
            self.complete = false;
            return;
        }
        let Some(&b) = self.choosers.get(depth) else {
            self.complete_assignment();
            return;
        };
        let candidates = self.problem.buffers()[b].candidates.clone();
        for pool in candidates {
            self.add(b, pool);
            if self.fits(depth + 1) {
                self.decide(depth + 1);
            }
            self.remove(b);
            if self.done() || self.effort.exhausted() {
                return;
            }
        }
    }

    /// Places every pool of the current assignment; keeps the plan if it is the best.
    fn complete_assignment(&mut self) {
        let pools = self.problem.pools();
        let mut total = 0u64;
        let mut ends = vec![None; pools.len()];
        for p in 0..pools.len() {
            if self.members[p].is_empty() {
                continue;
            }
            // What the pools still to place must add at least.
            let later: u64 = (p + 1..pools.len()).map(|q| self.bound_of(q)).sum();
            let least = total.saturating_add(self.bound_of(p)).saturating_add(later);
            if self.beaten(least, self.time_from(self.choosers.len())) {
                return;
            }
            let mut key = self.members[p].clone();
            key.sort_unstable();
            let placed = match self.placed.get(&(p, key.clone())) {
                Some(placed) => placed.clone(),
                None => {
                    let placed = place(self.problem, p, key.clone(), self.effort);
                    self.placed.insert((p, key.clone()), placed.clone());
                    placed
                }
            };
            let Some(placed) = placed else {
                // No placement found at all (sizes near the end of the address space).
                self.complete = false;
                return;
            };
            if !placed.proven {
                // A smaller end may exist: this assignment was not settled.
                self.complete = false;
            }
            if !pools[p].admits(placed.end) {
                // Proven too big for the limit, or not settled (noted above).
                return;
            }
            total = total.saturating_add(placed.end);
            ends[p] = Some((key, placed));
        }
        let time = self.time_from(self.choosers.len());
        if self.beaten(total, time) {
            return;
        }
        if let Some(t) = &mut self.time {
            t.best = time;
        }
        let mut allocations = vec![Allocation { pool: 0, offset: 0 }; self.pool_of.len()];
        for (pool, end) in ends.into_iter().enumerate() {
            if let Some((key, placed)) = end {
                for (&b, &offset) in key.iter().zip(&placed.offsets) {
                    allocations[b] = Allocation { pool, offset };
                }
            }
        }
        self.best = Some((total, allocations));
    }
}

/// Pool `pool` holding `buffers`, placed as small as the effort allows; `None` when no
/// placement was found (stacking them passes the 64-bit address space, and so did every
/// placement the search tried).
fn place(
    problem: &Problem,
    pool: usize,
    buffers: Vec<usize>,
    effort: &mut Effort,
) -> Option<Placed> {
    let inst = Instance::new(problem, pool, buffers);
    // Stacked one above the other, each at its alignment: a placement unless it passes
    // the address space, and the ceiling the search starts below.
    let mut stacked = Some(Vec::with_capacity(inst.len()));
    let mut end = 0u64;
    for (&size, &align) in inst.size.iter().zip(&inst.align) {
        let next = end
            .checked_next_multiple_of(align)
            .and_then(|offset| Some((offset, offset.checked_add(size)?)));
        match (next, stacked.as_mut()) {
            (Some((offset, top)), Some(offsets)) => {
                offsets.push(offset);
                end = top;
            }
            _ => {
                (stacked, end) = (None, u64::MAX);
                break;
            }
        }
    }
    let result = minimise(&inst, end, None, effort);
    let offsets = result.offsets.or(stacked)?;
    Some(Placed {
        end: peak(&inst, &offsets),
        offsets,
        proven: result.proven,
    })
}
