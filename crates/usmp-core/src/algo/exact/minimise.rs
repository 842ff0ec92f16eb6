//! Minimising one pool: probing capacities between its lower bound and the best plan
//! found, then diving below that plan with shaken orders.

use super::effort::Effort;
use super::instance::Instance;
use super::preorder::{Order, Preorder, Shaker};
use super::search::{Outcome, Search};
use super::{BOUND_PROBE_FACTOR, BOUND_PROBE_MOST};

/// Of the work left after the bound's probe, the share the probing rounds get (the
/// rest goes to dives): (numerator, denominator).
const ROUNDS_SHARE: (u32, u32) = (1, 3);

/// Dives run only when the rest holds this many shaken dives; otherwise the rounds get
/// it all (a build's small budget on a large model).
const MIN_DIVES: u64 = 16;

/// A shaken dive's work, in full descents of the search (placing every item once costs
/// about (items + 1)^2 units).
const DIVE_DESCENTS: u64 = 6;

/// A plain dive's work, in shaken dives' (MiniMalloc's D at 1,025,024 bytes: TWA's plain
/// search finds its plan after 7 million units, 25 shaken dives).
const PLAIN_DIVES: u64 = 64;

/// Dives aim below the best plan by a 64th, 32nd, 16th, 8th and 4th of its gap to the
/// lowest capacity not proven impossible, in turn.
const DIVE_LEVELS: u64 = 5;

/// What searching one pool achieved.
pub(super) struct PoolResult {
    pub(super) offsets: Option<Vec<u64>>,
    pub(super) proven: bool,
}

/// Shrinks one pool from `size` (its greedy size) toward its lower bound, or in decision
/// mode only down to `target`. Returns offsets only when they beat `size`.
///
/// Minimising first decides at the bound exactly as decision mode would, with a work
/// budget of its own: [`BOUND_PROBE_FACTOR`] times what `effort` has left, at most
/// [`BOUND_PROBE_MOST`] (and half the time left, under a deadline). Where the optimum is
/// the bound, a probe there needs its whole share at once, which the bisection rounds
/// below never give it. Only when that fails do the rounds run, on a
/// [`ROUNDS_SHARE`] of `effort`; what they leave goes to dives below their best plan.
fn minimise_within(
    inst: &Instance,
    size: u64,
    target: Option<u64>,
    effort: &mut Effort,
) -> PoolResult {
    let bound = inst.lower_bound();
    let mut probes = Probes::default();
    let mut start = Start {
        lo: bound,
        tried: 0,
    };
    if target.is_none() && bound < size && !effort.exhausted() {
        let most = effort.left().saturating_mul(BOUND_PROBE_FACTOR);
        let mut decide = Effort::new(most.min(BOUND_PROBE_MOST), effort.deadline_part(1, 2));
        let (at_bound, after) = rounds(inst, start, size, Some(bound), &mut decide, &mut probes);
        if at_bound.offsets.is_some() {
            return PoolResult {
                proven: true,
                ..at_bound
            };
        }
        start = after;
    }
    let dive = dive_length(inst);
    let mut first = if effort.left() / dive >= MIN_DIVES {
        effort.part(ROUNDS_SHARE.0, ROUNDS_SHARE.1)
    } else {
        effort.part(1, 1)
    };
    let (result, after) = rounds(inst, start, size, target, &mut first, &mut probes);
    effort.absorb(&first);
    if result.proven {
        return result;
    }
    dives(inst, after.lo, size, target, result.offsets, effort)
}

/// Whether minimising between `lo` (the lowest capacity not proven impossible) and `hi`
/// (the best plan's peak) is over: proven optimal, or in decision mode `target` reached
/// or proven out of reach.
fn settled(target: Option<u64>, lo: u64, hi: u64) -> bool {
    match target {
        Some(t) => hi <= t || t < lo,
        None => hi <= lo,
    }
}

/// A shaken dive's work on `inst`.
fn dive_length(inst: &Instance) -> u64 {
    DIVE_DESCENTS.saturating_mul((inst.len() as u64 + 1).pow(2))
}

/// The dives of one kind so far: the work they had and the plans they found.
#[derive(Clone, Copy, Default)]
struct Record {
    spent: u64,
    found: u64,
}

impl Record {
    /// Whether this kind has found at least as many plans per unit as `other`, counting
    /// `prior` units and one plan more for each (so that neither starts out ahead).
    fn leads(self, other: Record, prior: u64) -> bool {
        let rate = |r: Record| {
            (
                u128::from(r.found) + 1,
                u128::from(r.spent) + u128::from(prior),
            )
        };
        let ((a, x), (b, y)) = (rate(self), rate(other));
        a * y >= b * x
    }
}

/// Dives until `effort` is spent, below the best plan (`best`, or `size`) by
/// [`DIVE_LEVELS`] in turn, or at `target` in decision mode. `lo` is the lowest capacity
/// not proven impossible; a dive that exhausts its search proves its capacity impossible
/// too. Two kinds take turns, each while its plans per unit lead:
///
/// - *shaken*: the WAT order with every key shaken afresh (`Search::dive`), for
///   [`DIVE_DESCENTS`] descents;
/// - *plain*: TWA's search unshaken, from the start, at a capacity no plain dive had,
///   for [`PLAIN_DIVES`] times as long.
///
/// Why: near the optimum the plain searches' first plans lie in a few places of their
/// trees, far apart, and the rounds' probes, each going on where the one above stopped,
/// rarely reach them. MiniMalloc's J: of the three orders' plain searches at 13 capacities
/// from 1,019,904 to 1,032,192 bytes, three find a plan within 200 million units; about
/// one shaken dive in 50 does at 1,027,072 (one million units each), one in 500 at
/// 1,017,856. D's shaken dives find one plan per 80-170 million units anywhere from
/// 1,022,976 to 1,029,120, but TWA's plain search at 1,025,024 finds one in 7 million.
fn dives(
    inst: &Instance,
    mut lo: u64,
    size: u64,
    target: Option<u64>,
    mut best: Option<Vec<u64>>,
    effort: &mut Effort,
) -> PoolResult {
    let step = inst.step();
    let down = |c: u64| c / step * step;
    let shaken_length = dive_length(inst);
    let plain_length = shaken_length.saturating_mul(PLAIN_DIVES);
    let mut hi = best.as_ref().map_or(size, |o| peak(inst, o));
    let done = |lo: u64, hi: u64| settled(target, lo, hi);
    let mut shaker = Shaker::new();
    let (mut shaken, mut plain) = (Record::default(), Record::default());
    let mut plain_at = std::collections::BTreeSet::new();
    let mut turn = 0;
    while !done(lo, hi) && !effort.exhausted() {
        let c = match target {
            Some(t) => down(t),
            None => {
                let below = ((hi - lo) >> (DIVE_LEVELS + 1 - turn % DIVE_LEVELS)).max(1);
                down(hi - below).max(lo)
            }
        };
        turn += 1;
        let is_plain = !plain_at.contains(&c) && plain.leads(shaken, plain_length);
        let (order, length, record) = if is_plain {
            plain_at.insert(c);
            (Order::plain(Preorder::Twa), plain_length, &mut plain)
        } else {
            let order = shaker.shake(Preorder::Wat, inst.len());
            (order, shaken_length, &mut shaken)
        };
        let ((outcome, offsets), spent) =
            effort.capped(length, |effort| Search::dive(inst, c, order, effort));
        record.spent += spent;
        match outcome {
            Outcome::Found => {
                record.found += 1;
                hi = peak(inst, &offsets);
                best = Some(offsets);
            }
            Outcome::Infeasible => lo = c + step,
            Outcome::Stopped => {}
        }
    }
    PoolResult {
        offsets: best,
        proven: hi <= lo,
    }
}

/// [`minimise_within`], whose proofs hold for the declared windows only where the search
/// took them whole.
pub(super) fn minimise(
    inst: &Instance,
    size: u64,
    target: Option<u64>,
    effort: &mut Effort,
) -> PoolResult {
    let result = minimise_within(inst, size, target, effort);
    PoolResult {
        proven: result.proven && !inst.narrowed,
        ..result
    }
}

/// Where probing rounds start: the lowest capacity not yet proven impossible, and the
/// largest share of work one probe there has already had without an answer.
#[derive(Clone, Copy, Debug)]
struct Start {
    lo: u64,
    tried: u64,
}

/// The probing rounds of [`minimise`], from `start.lo` up to `size`; and where rounds
/// after them would start. Every end lies on the instance's step (`Instance::step`), so a
/// capacity fits exactly when the step's multiple at or below it does: only those are
/// probed.
fn rounds(
    inst: &Instance,
    start: Start,
    size: u64,
    target: Option<u64>,
    effort: &mut Effort,
    probes: &mut Probes,
) -> (PoolResult, Start) {
    let step = inst.step();
    let down = |c: u64| c / step * step;
    let mut lo = start.lo.next_multiple_of(step);
    let mut hi = size;
    let target = target.map(down);
    let mut best = None;
    let mut share = 16 * (inst.len() as u64 + 1).pow(2);
    let mut tried = start.tried;
    let done = |lo: u64, hi: u64| settled(target, lo, hi);
    while !done(lo, hi) && !effort.exhausted() {
        // One round: the bound (the optimum surprisingly often) unless it has had this
        // share already, then bisection toward `hi`, going up past every probe that runs
        // out of its share. On the open problems the optimum lies well above the bound,
        // and the capacities just below the best plan are where the next plan is found:
        // a round must reach them.
        let mut open = lo;
        let mut first = share > tried;
        while open < hi && !done(lo, hi) && !effort.exhausted() {
            let c = match target {
                Some(t) => t,
                None if first => lo,
                None => down(open + (hi - open) / 2).max(open),
            };
            if c == lo {
                tried = tried.max(share);
            }
            first = false;
            match probes.probe(inst, c, share, effort) {
                (Outcome::Found, offsets) => {
                    hi = peak(inst, &offsets);
                    best = Some(offsets);
                }
                (Outcome::Infeasible, _) => {
                    lo = c + step;
                    open = c + step;
                    tried = 0;
                }
                (Outcome::Stopped, _) => {
                    if target.is_some() {
                        break;
                    }
                    open = c + step;
                }
            }
        }
        share = share.saturating_mul(2);
    }
    let result = PoolResult {
        offsets: best,
        proven: hi <= lo,
    };
    (result, Start { lo, tried })
}

/// The probes made so far: the work each capacity's search had with each preorder, and
/// how far each search got. A search's tree is the same at every capacity but for what
/// a lower capacity prunes, so the nodes a search at capacity `c` went past hold no plan
/// within `c`, nor within any lower capacity: a probe goes on from the furthest node any
/// search of its preorder reached at its capacity or above (see `Search::resume`),
/// instead of searching those nodes again.
#[derive(Debug, Default)]
struct Probes {
    spent: std::collections::BTreeMap<u64, [u64; Preorder::ALL.len()]>,
    /// Per preorder, (capacity, path): before `path` no plan fits in `capacity`.
    reached: [Vec<(u64, Vec<u32>)>; Preorder::ALL.len()],
}

impl Probes {
    /// One capacity, tried with each preorder in turn until it has had `share` work in
    /// all. Any preorder that exhausts its search proves the capacity impossible.
    fn probe(
        &mut self,
        inst: &Instance,
        capacity: u64,
        share: u64,
        effort: &mut Effort,
    ) -> (Outcome, Vec<u64>) {
        let spent = self.spent.entry(capacity).or_default();
        for (k, preorder) in Preorder::ALL.into_iter().enumerate() {
            if spent[k] >= share {
                continue;
            }
            let reached = &mut self.reached[k];
            let from = reached
                .iter()
                .filter(|(c, _)| *c >= capacity)
                .map(|(_, p)| p)
                .max()
                .cloned()
                .unwrap_or_default();
            let ((outcome, offsets, path), used) = effort.capped(share - spent[k], |effort| {
                Search::resume(inst, capacity, preorder, from, effort)
            });
            spent[k] += used;
            let within = match outcome {
                Outcome::Found => Some(peak(inst, &offsets).saturating_sub(1)),
                Outcome::Stopped => Some(capacity),
                Outcome::Infeasible => None,
            };
            if let Some(c) = within {
                // Only what no other entry covers: a lower capacity, or not as far.
                reached.retain(|(d, p)| *d > c || *p > path);
                reached.push((c, path));
            }
            if outcome != Outcome::Stopped || effort.exhausted() {
                return (outcome, offsets);
            }
        }
        (Outcome::Stopped, Vec::new())
    }
}

pub(super) fn peak(inst: &Instance, offsets: &[u64]) -> u64 {
    offsets
        .iter()
        .zip(&inst.size)
        .map(|(&o, &s)| o + s)
        .max()
        .unwrap_or(0)
}
