//! The time sweep's items for a problem with overlaps. Where an output is written over its
//! input, the two are one item over the steps they share (their union of bytes, which
//! every other buffer live then must miss) and each is itself over the rest of its live
//! range. The sweep's rule, live items of a pool are disjoint, then holds again, and a
//! buffer live beside the pair is compared with both at once.

use super::{Event, Item, outside_window, overlap_violation};
use crate::problem::{Live, Problem};
use crate::solution::{Allocation, Violation};

/// The items and their events; a pair placed over each other outside its window is
/// reported into `found` (and still swept as one, so it is reported once).
pub(super) fn split(
    problem: &Problem,
    allocs: &[Allocation],
    found: &mut Vec<Violation>,
) -> (Vec<Item>, Vec<Event>) {
    let buffers = problem.buffers();
    let mut items: Vec<Item> = (0..allocs.len())
        .map(|i| Item::of(problem, allocs, i))
        .collect();
    let mut events = Vec::with_capacity(allocs.len() * 2);
    // The steps each buffer spends inside a pair: (buffer, steps).
    let mut cuts: Vec<(usize, Live)> = Vec::new();
    for o in problem.overlaps() {
        let (out, inp) = (items[o.output], items[o.input]);
        let shared = out.pool == inp.pool && out.offset < inp.end && inp.offset < out.end;
        let Some(steps) = o.shared_steps(buffers).filter(|_| shared) else {
            // Disjoint (or never live together): swept as any two buffers.
            continue;
        };
        if !o.allows(out.offset, inp.offset) {
            found.push(outside_window(problem, o, allocs));
        }
        let pair = items.len();
        items.push(Item {
            pool: out.pool,
            offset: out.offset.min(inp.offset),
            end: out.end.max(inp.end),
            owners: [o.output, o.input],
        });
        events.push((steps.start, true, pair));
        events.push((steps.end, false, pair));
        cuts.push((o.output, steps));
        cuts.push((o.input, steps));
    }
    cuts.sort_unstable_by_key(|&(b, steps)| (b, steps.start));
    let mut next = 0;
    for (i, b) in buffers.iter().enumerate() {
        let Some(live) = b.live else { continue };
        // The live range minus this buffer's cuts, which do not meet (the problem's
        // builder made sure) and are in order.
        let mut from = live.start;
        while next < cuts.len() && cuts[next].0 == i {
            let cut = cuts[next].1;
            if from < cut.start {
                events.push((from, true, i));
                events.push((cut.start, false, i));
            }
            from = from.max(cut.end);
            next += 1;
        }
        if from < live.end {
            events.push((from, true, i));
            events.push((live.end, false, i));
        }
    }
    (items, events)
}

/// Items `x` and `y` share bytes: named by the buffers of each that do.
pub(super) fn violation(problem: &Problem, allocs: &[Allocation], x: &Item, y: &Item) -> Violation {
    let own = |i: usize| Item::of(problem, allocs, i);
    let meet = |a: &Item, b: &Item| a.offset < b.end && b.offset < a.end;
    let (a, b) = x
        .owners
        .iter()
        .flat_map(|&a| y.owners.iter().map(move |&b| (a, b)))
        .find(|&(a, b)| meet(&own(a), &own(b)))
        .unwrap_or((x.owners[0], y.owners[0]));
    overlap_violation(problem, a.min(b), a.max(b), x.pool)
}

#[cfg(test)]
mod tests {
    use crate::problem::{Buffer, Overlap, Pool, Problem};
    use crate::solution::{Allocation, Violation, share_bytes};
    use crate::test_rng::Rng;
    use crate::verify::verify;

    /// Every pair of conflicting buffers that shares bytes: `Ok` when a declared window
    /// allows it, else the violation, found by comparing every pair.
    fn brute(p: &Problem, allocs: &[Allocation]) -> Vec<Violation> {
        let b = p.buffers();
        let mut out = Vec::new();
        for i in 0..b.len() {
            for j in i + 1..b.len() {
                if !share_bytes(p, allocs, i, j) || !p.conflict(i, j) {
                    continue;
                }
                match p.overlap_between(i, j) {
                    Some(o) if o.allows(allocs[o.output].offset, allocs[o.input].offset) => {}
                    Some(o) => out.push(super::super::outside_window(p, o, allocs)),
                    None => out.push(Violation::Overlap {
                        a: b[i].name.clone(),
                        b: b[j].name.clone(),
                        pool: p.pools()[allocs[i].pool].name.clone(),
                    }),
                }
            }
        }
        out
    }

    /// A chain (buffer k live over [k, k + 2), some written over the one before within
    /// a random window) beside buffers without overlaps, placed at random close together:
    /// the verifier accepts exactly the plans the pairwise check accepts, and every
    /// violation it names is one that check finds.
    #[test]
    fn overlaps_are_allowed_exactly_within_their_windows() {
        let mut rng = Rng::seeded(0x000e_71a9);
        let (mut accepted, mut refused, mut windows_used) = (0, 0, 0);
        for case in 0..3000 {
            let mut b = Problem::builder();
            let pools = [b.pool(Pool::workspace("p")), b.pool(Pool::workspace("q"))];
            let chain = 2 + rng.below(8) as usize;
            let others = rng.below(6) as usize;
            let mut allocs = Vec::new();
            for k in 0..chain + others {
                let start = if k < chain {
                    k as u64
                } else {
                    rng.below(chain as u64 + 2)
                };
                let live = if k < chain { 2 } else { 1 + rng.below(3) };
                b.buffer(
                    Buffer::new(format!("b{k}"), 1 + rng.below(12))
                        .with_candidates(pools)
                        .with_live(start, start + live),
                );
                let pool = usize::from(rng.below(8) == 0);
                allocs.push(Allocation {
                    pool,
                    offset: rng.below(24),
                });
            }
            for k in 1..chain {
                if rng.below(3) > 0 {
                    let lo = rng.below(20) as i64 - 12;
                    b.overlap(Overlap {
                        output: k,
                        input: k - 1,
                        shifts: [lo, lo + rng.below(10) as i64],
                    });
                }
            }
            let p = b.build().unwrap();
            let expected = brute(&p, &allocs);
            match verify(&p, &allocs) {
                Ok(()) => {
                    assert!(expected.is_empty(), "case {case}: missed {expected:?}");
                    accepted += 1;
                    windows_used += usize::from(
                        p.overlaps()
                            .iter()
                            .any(|o| share_bytes(&p, &allocs, o.output, o.input)),
                    );
                }
                Err(found) => {
                    assert!(
                        !expected.is_empty(),
                        "case {case}: refused a valid plan: {found:?}"
                    );
                    for v in &found {
                        assert!(expected.contains(v), "case {case}: {v} is not a violation");
                    }
                    refused += 1;
                }
            }
        }
        // Both outcomes, and accepted plans that do share bytes within a window.
        assert!(accepted > 100 && refused > 100, "{accepted} {refused}");
        assert!(windows_used > 50, "{windows_used}");
    }
}
