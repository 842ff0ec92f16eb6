//! `stages = "auto"`: which chains to fuse. A fused call's live bytes are the union of
//! what its calls had live (the workspace buffers of the model's own liveness, as planned
//! without stages), less the tensors between them, plus its line buffers; a call left
//! alone keeps its own. Chains are short (at most `MOST_PARTS` calls a stage), so
//! the search is exact over every way to cut each chain into stages: first the lowest
//! peak any cut reaches (a min-max over prefixes), then, among the cuts at or under the
//! model's peak, the one fusing the fewest calls (each fused call runs a little slower,
//! and fusing below the peak saves nothing). Ties go to the later cut; so the choice is
//! deterministic.

use usmp_core::PoolKind;
use usmp_core::liveness::Liveness;
use usmp_core::model::Model;

use super::Links;
use crate::planned::Stage;

/// The stages `auto` runs `model` with (its `liveness`, lowered without stages): none
/// when no chain can lower its peak.
pub fn choose(model: &Model, liveness: &Liveness, links: &Links) -> Vec<Stage> {
    let live = Live::of(model, liveness);
    let n = model.calls.len();
    let cost = |a: usize, b: usize| live.cost(links, a, b);
    let chains = chains(links, n);
    let alone = (0..n)
        .filter(|&i| !chains.iter().any(|c| c.contains(&i)))
        .map(|i| cost(i, i))
        .max()
        .unwrap_or(0);
    let peak = chains
        .iter()
        .map(|c| lowest_peak(c.clone(), links, &cost))
        .fold(alone, u64::max);
    chains
        .into_iter()
        .flat_map(|c| fewest_fused(c, links, peak, &cost))
        .filter(|&(a, b)| a < b)
        .map(|(a, b)| links.stage(a, b))
        .collect()
}

/// The maximal runs of linked calls, as inclusive ranges.
pub(super) fn chains(links: &Links, n: usize) -> Vec<std::ops::RangeInclusive<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j < links.next.len() && links.next[j] {
            j += 1;
        }
        if j > i {
            out.push(i..=j);
        }
        i = j + 1;
    }
    out
}

/// The segments `a..=b` that may be one call: one call alone, or a chain short enough.
fn segments(
    chain: &std::ops::RangeInclusive<usize>,
    links: &Links,
    b: usize,
) -> impl Iterator<Item = usize> {
    let first = *chain.start();
    let ok: Vec<usize> = (first..=b)
        .rev()
        .take_while(|&a| a == b || links.chain(a, b))
        .collect();
    ok.into_iter()
}

/// The lowest peak of any cut of `chain` into calls and stages.
fn lowest_peak(
    chain: std::ops::RangeInclusive<usize>,
    links: &Links,
    cost: &impl Fn(usize, usize) -> u64,
) -> u64 {
    let first = *chain.start();
    // best[k]: the lowest peak of the calls first..k (k calls done).
    let mut best = vec![0u64];
    for b in chain.clone() {
        let peak = segments(&chain, links, b)
            .map(|a| best[a - first].max(cost(a, b)))
            .min()
            .unwrap_or(u64::MAX);
        best.push(peak);
    }
    best[best.len() - 1]
}

/// The cut of `chain` with every call at most `peak` that fuses the fewest calls, as
/// its segments in order.
fn fewest_fused(
    chain: std::ops::RangeInclusive<usize>,
    links: &Links,
    peak: u64,
    cost: &impl Fn(usize, usize) -> u64,
) -> Vec<(usize, usize)> {
    let first = *chain.start();
    // fused[k]: the fewest calls fused among the calls first..k, and the last segment.
    let mut fused: Vec<Option<(usize, usize)>> = vec![Some((0, first))];
    for b in chain.clone() {
        let mut best: Option<(usize, usize)> = None;
        for a in segments(&chain, links, b) {
            let Some((before, _)) = fused[a - first] else {
                continue;
            };
            if cost(a, b) > peak {
                continue;
            }
            let count = before + if a < b { b - a + 1 } else { 0 };
            if best.is_none_or(|(c, _)| count < c) {
                best = Some((count, a));
            }
        }
        fused.push(best);
    }
    let mut cut = Vec::new();
    let mut b = *chain.end();
    loop {
        let Some((_, a)) = fused[b + 1 - first] else {
            // No cut under the peak: the peak was this chain's own lowest, so one exists.
            return Vec::new();
        };
        cut.push((a, b));
        if a == first {
            break;
        }
        b = a - 1;
    }
    cut.reverse();
    cut
}

/// Each workspace buffer's bytes and the calls it is live during.
pub(super) struct Live {
    /// Buffer bytes, live from `span.0` to `span.1` (inclusive calls).
    buffers: Vec<(u64, (u64, u64))>,
    /// The bytes of each call's outputs.
    out: Vec<u64>,
}

impl Live {
    pub(super) fn of(model: &Model, liveness: &Liveness) -> Self {
        let all = liveness.problem.buffers();
        let workspace = all.iter().filter(|b| b.kind == PoolKind::Workspace);
        let buffers = workspace
            .filter_map(|b| Some((b.size, (b.live?.start, b.live?.end.checked_sub(1)?))))
            .collect();
        let bytes = |t: usize| liveness.tensor_buffers[t].map_or(0, |b| all[b].size);
        let out = model
            .calls
            .iter()
            .map(|c| c.writes.iter().map(|&t| bytes(t)).sum())
            .collect();
        Live { buffers, out }
    }

    /// The live bytes of calls `a..=b` as one call: one call's own, or a stage's (what
    /// its calls had live, less the tensors between them, plus its line buffers).
    pub(super) fn cost(&self, links: &Links, a: usize, b: usize) -> u64 {
        let between: u64 = (a..b).map(|i| self.out[i]).sum();
        let lines = if a < b {
            links.stage(a, b).scratch()
        } else {
            0
        };
        self.union(a, b).saturating_sub(between) + lines
    }

    /// The bytes of every buffer live during some call of `a..=b`.
    fn union(&self, a: usize, b: usize) -> u64 {
        let (a, b) = (a as u64, b as u64);
        self.buffers
            .iter()
            .filter(|(_, (s, e))| *s <= b && a <= *e)
            .map(|(bytes, _)| bytes)
            .sum()
    }
}
