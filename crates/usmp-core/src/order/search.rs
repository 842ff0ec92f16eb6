//! The search: a layer of calls at a time, the best order kept per set of calls run.

use std::collections::BTreeMap;

use super::{Graph, MOST_SETS};

/// A set of calls, one bit each.
type Set = Vec<u64>;

fn has(set: &[u64], c: usize) -> bool {
    set[c / 64] & 1 << (c % 64) != 0
}

impl Graph {
    /// Running call `c` once the calls of `done` have run, with `live` bytes live
    /// between calls: the bytes live during `c`, and those live after it.
    fn step(&self, done: &[u64], live: u64, c: usize) -> (u64, u64) {
        // A unit whose users have all run once `c` has.
        let ends = |u: usize| self.units[u].users.iter().all(|&v| v == c || has(done, v));
        // Saturating: sizes near 2^64 give a useless peak, never a panic.
        let during = live.saturating_add(self.born[c]);
        let shared = (self.credits[c].iter())
            .filter(|&&(input, _)| !self.units[input].forever && ends(input))
            .fold(0u64, |t, &(_, bytes)| t.saturating_add(bytes));
        let freed = (self.uses[c].iter())
            .filter(|&&u| ends(u))
            .fold(0u64, |t, &u| t.saturating_add(self.units[u].size));
        (during.saturating_sub(shared), during.saturating_sub(freed))
    }

    /// The bytes live before any call: the units live from the start.
    fn live_at_start(&self) -> u64 {
        self.units
            .iter()
            .filter(|u| u.born_by.is_none())
            .fold(0u64, |t, u| t.saturating_add(u.size))
    }

    fn ready(&self, done: &[u64], c: usize) -> bool {
        !has(done, c) && self.before[c].iter().all(|&b| has(done, b))
    }

    /// The calls ready once `c` has run, `grown` the set with it and `ready` those ready
    /// before: all but `c`, and those of its followers that waited only for it. Sorted.
    fn ready_after(&self, grown: &[u64], ready: &[usize], c: usize) -> Vec<usize> {
        let mut next: Vec<usize> = ready.iter().copied().filter(|&r| r != c).collect();
        next.extend(
            self.after[c]
                .iter()
                .copied()
                .filter(|&d| self.ready(grown, d)),
        );
        next.sort_unstable();
        next.dedup();
        next
    }
}

/// The sets kept per layer for a graph of `n` calls: [`MOST_SETS`] up to 64 calls, fewer
/// in proportion beyond (never under 32), so the work grows about linearly with the calls.
fn most_sets(n: usize) -> usize {
    match n {
        0..=64 => MOST_SETS,
        _ => (MOST_SETS * 64 / n).max(32),
    }
}

/// One order run call by call.
pub(super) struct Run<'g> {
    graph: &'g Graph,
    done: Set,
    live: u64,
}

impl<'g> Run<'g> {
    pub(super) fn new(graph: &'g Graph) -> Self {
        Run {
            graph,
            done: vec![0; graph.before.len().div_ceil(64)],
            live: graph.live_at_start(),
        }
    }

    /// Runs call `c`; returns the bytes live during it.
    pub(super) fn call(&mut self, c: usize) -> u64 {
        let (during, after) = self.graph.step(&self.done, self.live, c);
        self.done[c / 64] |= 1 << (c % 64);
        self.live = after;
        during
    }
}

/// A set of calls reached in a layer: the best order to it so far.
struct Reached {
    peak: u64,
    live: u64,
    /// The calls that may run next.
    ready: Vec<usize>,
    /// The entry of the previous layer it came from, and the call it ran then.
    from: usize,
    call: usize,
}

/// The order with the lowest peak the search finds, that peak, and whether every set
/// was kept (so the peak is the lowest of all orders). `None` for a graph with a cycle
/// (no order runs every call once), which a checked model never is.
pub(super) fn lowest(graph: &Graph) -> Option<(Vec<usize>, u64, bool)> {
    let n = graph.before.len();
    let empty: Set = vec![0; n.div_ceil(64)];
    let start = Reached {
        peak: 0,
        live: graph.live_at_start(),
        ready: (0..n).filter(|&c| graph.ready(&empty, c)).collect(),
        from: 0,
        call: 0,
    };
    let mut layers: Vec<Vec<Reached>> = Vec::with_capacity(n + 1);
    layers.push(vec![start]);
    let mut sets: Vec<Set> = vec![empty];
    let mut exact = true;
    for _ in 0..n {
        let (mut next, mut next_sets) = next_layer(graph, layers.last()?, &sets);
        if next.is_empty() {
            return None;
        }
        if next.len() > most_sets(n) {
            exact = false;
            (next, next_sets) = best(next, next_sets, most_sets(n));
        }
        layers.push(next);
        sets = next_sets;
    }
    // One set holds every call; walk back from it.
    let peak = layers.last()?.first()?.peak;
    let mut order = Vec::with_capacity(n);
    let mut at = 0;
    for layer in layers.iter().skip(1).rev() {
        let r = &layer[at];
        order.push(r.call);
        at = r.from;
    }
    order.reverse();
    Some((order, peak, exact))
}

/// Every set one more call reaches from the sets of `last`, each with the best order to
/// it: in the order first reached, which is the same on every run.
fn next_layer(graph: &Graph, last: &[Reached], sets: &[Set]) -> (Vec<Reached>, Vec<Set>) {
    let mut index: BTreeMap<Set, usize> = BTreeMap::new();
    let (mut next, mut next_sets): (Vec<Reached>, Vec<Set>) = (Vec::new(), Vec::new());
    for (e, (reached, set)) in last.iter().zip(sets).enumerate() {
        for &c in &reached.ready {
            let (during, live) = graph.step(set, reached.live, c);
            let peak = reached.peak.max(during);
            let mut grown = set.clone();
            grown[c / 64] |= 1 << (c % 64);
            // Ties keep the first: orders nearer the written one come first.
            if index.get(&grown).is_some_and(|&k| next[k].peak <= peak) {
                continue;
            }
            let candidate = Reached {
                peak,
                live,
                ready: graph.ready_after(&grown, &reached.ready, c),
                from: e,
                call: c,
            };
            match index.get(&grown) {
                Some(&k) => next[k] = candidate,
                None => {
                    index.insert(grown.clone(), next.len());
                    next.push(candidate);
                    next_sets.push(grown);
                }
            }
        }
    }
    (next, next_sets)
}

/// The `most` sets of the lowest peaks (then the fewest bytes live, then the first
/// reached), in the order they were reached.
fn best(next: Vec<Reached>, sets: Vec<Set>, most: usize) -> (Vec<Reached>, Vec<Set>) {
    let mut keep: Vec<usize> = (0..next.len()).collect();
    keep.sort_by_key(|&k| (next[k].peak, next[k].live, k));
    keep.truncate(most);
    keep.sort_unstable();
    let (mut kept, mut kept_sets) = (Vec::new(), Vec::new());
    for (k, (r, s)) in next.into_iter().zip(sets).enumerate() {
        if keep.binary_search(&k).is_ok() {
            kept.push(r);
            kept_sets.push(s);
        }
    }
    (kept, kept_sets)
}
