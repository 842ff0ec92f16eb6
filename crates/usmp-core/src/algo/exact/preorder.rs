//! The orders that break ties between items the search could place at one offset.

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
