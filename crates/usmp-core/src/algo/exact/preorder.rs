//! The orders that break ties between items the search could place at one offset.

use super::instance::Instance;

/// A static order that breaks ties between items at the same offset: keys compared
/// largest first, named after MiniMalloc's letters. W is the length of the item's life,
/// A its area (bytes times steps) and T the most bytes still unplaced in any
/// section of its life. T changes as items are placed, so each part of a decomposition
/// ranks its items afresh: what is left crowded decides, not what was crowded at the start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Preorder {
    Wat,
    Taw,
    Twa,
}

impl Preorder {
    /// Every order, in the order a probe tries them. TWA first: on MiniMalloc's
    /// challenging set it is the one that finds the plan at the bound on A, E, F and I and
    /// most of D's and J's plans, and a probe's later orders only run once it is stopped
    /// (E at its bound: 543 million units with WAT first, 352 million with TWA first).
    pub(crate) const ALL: [Preorder; 3] = [Preorder::Twa, Preorder::Taw, Preorder::Wat];

    /// The key of an item of life `length`, `area` and `crowded` (see the type's text),
    /// compared largest first.
    pub(super) fn key(self, length: u64, area: u64, crowded: u64) -> (u64, u64, u64) {
        match self {
            Preorder::Wat => (length, area, crowded),
            Preorder::Taw => (crowded, area, length),
            Preorder::Twa => (crowded, length, area),
        }
    }
}

/// How far a shaken key's first field may move, in thousandths of it.
const SHAKE_PER_MILLE: u64 = 50;

/// The order one search breaks ties by: a preorder, its keys maybe shaken.
#[derive(Clone, Debug)]
pub(crate) struct Order {
    pub(crate) preorder: Preorder,
    /// Per item, the thousandths its key's first field moves by (near-equal items change
    /// places, the order's sense stays); empty for none.
    pub(crate) shake: Vec<i16>,
}

impl Order {
    pub(crate) fn plain(preorder: Preorder) -> Self {
        Order {
            preorder,
            shake: Vec::new(),
        }
    }

    /// Puts in `rank` each of `items`' position in this order, ties by item number;
    /// `total` is each section's unplaced bytes (T).
    pub(super) fn rank(&self, inst: &Instance, total: &[u64], items: &[u32], rank: &mut [u32]) {
        let crowded = |i: usize| {
            let (first, last) = inst.span[i];
            (first..last).map(|s| total[s as usize]).max().unwrap_or(0)
        };
        let mut keyed: Vec<((u64, u64, u64), u32)> = items
            .iter()
            .map(|&item| {
                let i = item as usize;
                let w = inst.length[i];
                let a = inst.size[i].saturating_mul(w);
                (self.shaken(self.preorder.key(w, a, crowded(i)), item), item)
            })
            .collect();
        let tie = |i: &u32| inst.tie[*i as usize];
        keyed.sort_unstable_by(|(ka, ia), (kb, ib)| {
            (tie(ia).cmp(&tie(ib))).then(kb.cmp(ka)).then(ia.cmp(ib))
        });
        for (r, &(_, item)) in keyed.iter().enumerate() {
            rank[item as usize] = r as u32;
        }
    }

    /// `key` of `item`, its first field moved as the shake says.
    fn shaken(&self, key: (u64, u64, u64), item: u32) -> (u64, u64, u64) {
        let Some(&by) = self.shake.get(item as usize) else {
            return key;
        };
        let first = i128::from(key.0) * (i128::from(by) + 1000) / 1000;
        (u64::try_from(first).unwrap_or(u64::MAX), key.1, key.2)
    }
}

/// Shakes for dives, from a fixed start, so every machine dives alike.
#[derive(Debug)]
pub(crate) struct Shaker {
    state: u64,
}

impl Shaker {
    pub(crate) fn new() -> Self {
        Shaker { state: 0x5EED }
    }

    /// splitmix64: every bit of the state moves every bit of the result.
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut h = self.state;
        h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^ (h >> 31)
    }

    /// One item's shake, up to [`SHAKE_PER_MILLE`] either way.
    fn draw(&mut self) -> i16 {
        let r = self.next() % (2 * SHAKE_PER_MILLE + 1);
        // Both at most 2 * SHAKE_PER_MILLE, far inside i16.
        r as i16 - SHAKE_PER_MILLE as i16
    }

    /// `preorder` with a shake of `len` items, every one drawn afresh.
    pub(crate) fn shake(&mut self, preorder: Preorder, len: usize) -> Order {
        Order {
            preorder,
            shake: (0..len).map(|_| self.draw()).collect(),
        }
    }
}
