//! Declared windows ([`crate::Overlap`]) as the search takes them.
//!
//! An overlap lets an output O share bytes with its input I at the shifts
//! `O.offset - I.offset` in `[lo, hi]`, besides every shift where the two do not meet. The
//! search places items in order of offset, each as low as the items placed before it
//! allow, and that order is complete (every plan can be pushed down into one it walks)
//! when, for each pair, the shifts a later item may take at or above the earlier one's
//! offset are all those from one *reach* up. The windows usmp's kernels certify,
//! `[1 - O.size, h]` with `h <= 0` (every shift up to `h`), have that shape:
//!
//! - I placed after O needs `I.offset - O.offset >= -h`: reach `-h`, not O's size.
//! - O placed after I may only sit clear above it: reach I's size. At `h = 0` it may also
//!   start at I's very offset; the search puts O first among items at one offset (`ties`),
//!   so that plan is walked the other way round.
//!
//! Other windows are narrowed to that shape, which keeps every plan valid but makes a
//! proof cover only the narrower windows ([`Windows::narrowed`]): a window that stops
//! short of the shifts where O lies below I is dropped, and `h > 0` becomes 0 (which
//! never lowers the bytes the pair can share: from shift 0 up, the output only leaves
//! its input).

use std::collections::BTreeSet;

use crate::problem::{Overlap, Problem};

/// An overlap the search places with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pair {
    pub(crate) output: u32,
    pub(crate) input: u32,
    /// The sections both are live in, `[first, last)` (empty for conflict graphs).
    pub(crate) sections: (u32, u32),
    /// The most bytes the two can share within the search's window.
    pub(crate) share: u64,
    /// How far above the output's offset the input must start when placed after it.
    pub(crate) reach: u64,
}

/// What the declared windows make of one pool's items (see the module's text).
pub(crate) struct Windows {
    /// Per item, beside its conflicts: how far above it each must start when placed after.
    pub(crate) reach: Vec<Vec<u64>>,
    pub(crate) pairs: Vec<Pair>,
    /// Per item, its pairs (indices into `pairs`).
    pub(crate) pairs_of: Vec<Vec<u32>>,
    /// Per item, the first key among items at one offset (see `ties`).
    pub(crate) tie: Vec<u32>,
    /// Whether some window was narrowed.
    pub(crate) narrowed: bool,
}

impl Windows {
    /// The windows of `problem` between the items `buffers` (of `size`, live in the
    /// sections `span`, each conflicting with the items of `conflicts`).
    pub(crate) fn of(
        problem: &Problem,
        buffers: &[usize],
        size: &[u64],
        span: &[(u32, u32)],
        conflicts: &[Vec<u32>],
    ) -> Windows {
        let n = buffers.len();
        let mut w = Windows {
            reach: (conflicts.iter().zip(size))
                .map(|(c, &s)| vec![s; c.len()])
                .collect(),
            pairs: Vec::new(),
            pairs_of: vec![Vec::new(); n],
            tie: vec![0; n],
            narrowed: false,
        };
        if problem.overlaps().is_empty() {
            return w;
        }
        let mut item = vec![u32::MAX; problem.buffers().len()];
        for (k, &b) in buffers.iter().enumerate() {
            item[b] = k as u32;
        }
        let mut windows = Vec::new();
        for o in problem.overlaps() {
            let (output, input) = (item[o.output], item[o.input]);
            if output == u32::MAX || input == u32::MAX {
                continue;
            }
            let sizes = (size[output as usize], size[input as usize]);
            if let Some(h) = highest_shift(o, sizes, &mut w.narrowed) {
                windows.push((output, input, h));
            }
        }
        w.tie = ties(n, &mut windows, &mut w.narrowed);
        for (output, input, h) in windows {
            let (o, i) = (output as usize, input as usize);
            let (os, is) = (size[o], size[i]);
            // Narrowing a tie can leave the output no shift that meets its input.
            if 1 - i128::from(os) > h {
                continue;
            }
            let Some(k) = conflicts[o].iter().position(|&j| j == input) else {
                continue;
            };
            let reach = u64::try_from(-h).map_or(os, |r| r.min(os));
            w.reach[o][k] = reach;
            let window = Overlap {
                output: 0,
                input: 0,
                shifts: [1 - os as i64, h as i64],
            };
            let first = span[o].0.max(span[i].0);
            let at = w.pairs.len() as u32;
            w.pairs_of[o].push(at);
            w.pairs_of[i].push(at);
            w.pairs.push(Pair {
                output,
                input,
                sections: (first, span[o].1.min(span[i].1).max(first)),
                share: window.most_shared(os, is),
                reach,
            });
        }
        w
    }
}

/// The highest shift `h` of the search's window `[1 - O.size, h]` for overlap `o` between
/// items of `(output, input)` bytes, or `None` when the pair is placed apart.
fn highest_shift(o: &Overlap, (output, input): (u64, u64), narrowed: &mut bool) -> Option<i128> {
    let (os, is) = (i128::from(output), i128::from(input));
    if os == 0 || is == 0 {
        return None;
    }
    // The shifts at which the two meet and the window allows it.
    let lo = i128::from(o.shifts[0]).max(1 - os);
    let hi = i128::from(o.shifts[1]).min(is - 1);
    if lo > hi {
        return None;
    }
    if lo > 1 - os || hi > 0 {
        *narrowed = true;
    }
    (lo == 1 - os).then_some(hi.min(0))
}

/// The search lists items at one offset by tie key first: an output whose window lets it
/// start at its input's offset (`h = 0`) must come before that input, so outputs get
/// lower keys than their inputs (longest chains of such pairs, walked from the outputs).
/// Pairs on a cycle of that relation (possible only in a hand-written problem) get
/// `h = -1` instead, and the instance counts as narrowed.
fn ties(n: usize, windows: &mut [(u32, u32, i128)], narrowed: &mut bool) -> Vec<u32> {
    let mut next: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut waiting = vec![0u32; n];
    for &(output, input, h) in windows.iter() {
        if h == 0 {
            next[output as usize].push(input);
            waiting[input as usize] += 1;
        }
    }
    let mut tie = vec![0u32; n];
    let mut ready: BTreeSet<u32> = (0..n as u32)
        .filter(|&i| waiting[i as usize] == 0)
        .collect();
    let mut done = vec![false; n];
    while let Some(v) = ready.pop_first() {
        done[v as usize] = true;
        for &w in &next[v as usize] {
            tie[w as usize] = tie[w as usize].max(tie[v as usize] + 1);
            waiting[w as usize] -= 1;
            if waiting[w as usize] == 0 {
                ready.insert(w);
            }
        }
    }
    for (output, input, h) in windows.iter_mut() {
        if *h == 0 && !(done[*output as usize] && done[*input as usize]) {
            *h = -1;
            *narrowed = true;
        }
    }
    tie
}
