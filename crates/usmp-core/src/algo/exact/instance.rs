//! One pool's share of a problem, in the form the search works on: buffers renumbered
//! `0..n`, their overlaps, and for live ranges the time "sections" (maximal stretches with
//! one live set) that give the search its pruning and its decomposition.

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
    /// Per item, the items it may not share bytes with.
    pub(crate) overlaps: Vec<Vec<u32>>,
    /// Per section, the items live in it (empty for conflict graphs).
    pub(crate) members: Vec<Vec<u32>>,
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

impl Instance {
    /// The items `buffers` of `problem`, all placed in `pool`.
    pub(crate) fn new(problem: &Problem, pool: usize, buffers: Vec<usize>) -> Instance {
        let all = problem.buffers();
        let size = buffers.iter().map(|&b| all[b].size).collect();
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
            Conflicts::Intervals => {
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
            Conflicts::Graph(adj) => {
                let mut item = vec![u32::MAX; all.len()];
                for (k, &b) in buffers.iter().enumerate() {
                    item[b] = k as u32;
                }
                let overlaps = buffers
                    .iter()
                    .map(|&b| {
                        adj[b]
                            .iter()
                            .map(|&j| item[j])
                            .filter(|&k| k != u32::MAX)
                            .collect()
                    })
                    .collect();
                (vec![(0, 0); n], overlaps, Vec::new())
            }
        };
        Instance {
            buffers,
            size,
            align,
            length,
            span,
            overlaps,
            members,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.buffers.len()
    }

    pub(crate) fn sections(&self) -> usize {
        self.members.len()
    }

    /// The bytes no placement can go below: the fullest section, or the largest item.
    pub(crate) fn lower_bound(&self) -> u64 {
        let sections = self.members.iter().map(|m| self.total(m));
        sections.chain(self.size.iter().copied()).max().unwrap_or(0)
    }

    /// Summed size of `items`, saturating (sizes are user data).
    pub(crate) fn total(&self, items: &[u32]) -> u64 {
        items
            .iter()
            .fold(0u64, |t, &i| t.saturating_add(self.size[i as usize]))
    }
}
