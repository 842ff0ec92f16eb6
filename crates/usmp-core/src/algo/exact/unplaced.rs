//! Each section's unplaced items, kept apart from its placed ones for the search.

use super::instance::Instance;

/// The offset of an item not placed yet.
pub(super) const UNPLACED: u64 = u64::MAX;

/// Per section, its items with the unplaced ones first, so that the loops over a
/// section's unplaced items do not pass the placed ones: placing an item swaps it to
/// the end of its sections' unplaced items and shortens them; undoing lengthens them
/// again (undone in reverse, the item is where it was put).
#[derive(Debug, Default)]
pub(super) struct Unplaced {
    items: Vec<Vec<u32>>,
    len: Vec<u32>,
    /// Per item, where it is in each section of its span, from `start[item]` on.
    at: Vec<u32>,
    start: Vec<usize>,
}

impl Unplaced {
    /// The sections' items but those already placed (`offset`).
    pub(super) fn new(inst: &Instance, offset: &[u64]) -> Self {
        let mut items: Vec<Vec<u32>> = inst.members.clone();
        let mut start = Vec::with_capacity(inst.len());
        let mut n = 0;
        for &(first, last) in &inst.span {
            start.push(n);
            n += (last - first) as usize;
        }
        let mut at = vec![0; n];
        let mut len = Vec::with_capacity(items.len());
        for list in &mut items {
            // Placed ones (they overlap nothing) last, each part in item order.
            list.sort_by_key(|&m| (offset[m as usize] != UNPLACED, m));
            len.push(list.partition_point(|&m| offset[m as usize] == UNPLACED) as u32);
        }
        for (s, list) in items.iter().enumerate() {
            for (k, &m) in list.iter().enumerate() {
                let m = m as usize;
                at[start[m] + s - inst.span[m].0 as usize] = k as u32;
            }
        }
        Unplaced {
            items,
            len,
            at,
            start,
        }
    }

    /// The unplaced items of section `s`.
    pub(super) fn of(&self, s: usize) -> &[u32] {
        &self.items[s][..self.len[s] as usize]
    }

    /// Takes `item`, live in section `s`, from that section's unplaced items.
    pub(super) fn remove(&mut self, inst: &Instance, item: u32, s: usize) {
        let slot = |m: u32| self.start[m as usize] + s - inst.span[m as usize].0 as usize;
        let here = self.at[slot(item)] as usize;
        let last = self.len[s] as usize - 1;
        let other = self.items[s][last];
        self.items[s].swap(here, last);
        let (a, b) = (slot(other), slot(item));
        self.at[a] = here as u32;
        self.at[b] = last as u32;
        self.len[s] -= 1;
    }

    /// Gives back to section `s` the item last taken from it: it is still where
    /// [`Unplaced::remove`] put it, just past the unplaced ones.
    pub(super) fn restore(&mut self, s: usize) {
        self.len[s] += 1;
    }
}
