//! The decision search: do one pool's items fit in `capacity` bytes?
//!
//! Depth-first over *canonical* placements (MiniMalloc, NOTES §3). Any plan can be
//! pushed down until every buffer rests on another or on 0 without growing; listing those
//! buffers by offset, each sits at the top of the buffers before it that it overlaps (its
//! "minimum offset" below). So the search only ever places an item at its minimum offset,
//! and only in non-decreasing (offset, preorder rank) order. On top of that:
//!
//! - **Dominance.** Never place an item at or above the minimum *top* of another unplaced
//!   item: that one fits entirely below, and later items (all higher) cannot disturb it,
//!   so a plan with it placed first is as good.
//! - **Sections.** In each time section the unplaced items are live together, so they
//!   stack above the section's floor (and above the current offset): floor + their sizes,
//!   less what their pairs may share, must fit. A section's floor is also at least the
//!   smallest minimum offset among its unplaced items.
//! - **Stacks.** The floor's check is the one at the lowest height: for every height
//!   some of a section's unplaced items cannot start below (raised by their neighbours),
//!   it plus their sizes must fit. (MiniMalloc's D decided at 1,025,024 bytes: 3.4 s
//!   before, 0.3 s.)
//! - **Twins.** Items of one live range, size and alignment (no window) can swap places
//!   in any plan: they are placed in item order only.
//! - **Hatless items.** If an item that overlaps no unplaced item fails at its minimum
//!   offset, the node fails: every completion could put it there and place it first.
//! - **Decomposition.** When no unplaced item crosses some section boundary, the two sides
//!   no longer interact: each is solved on its own, and one failing side fails the node
//!   without trying the other side's alternatives.
//!
//! With declared windows, "the top of the buffers before it" is each one's offset plus its
//! reach toward the item (its size, but for an output over its input; see `windows`).
//!
//! State changes go on a trail and are undone in reverse, so backtracking costs what the
//! step cost. The search is iterative, so deep problems cannot exhaust the stack.

use super::effort::Effort;
use super::instance::Instance;
use super::preorder::{Order, Preorder};
use super::unplaced::{UNPLACED, Unplaced};

/// How a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Every item placed within the capacity.
    Found,
    /// The search was exhausted: no placement fits.
    Infeasible,
    /// The effort ran out first.
    Stopped,
}

/// The section boundaries an item of sections `[first, last)` crosses: `j` is the boundary
/// between sections `j` and `j + 1`.
fn boundaries((first, last): (u32, u32)) -> std::ops::Range<u32> {
    first..last.saturating_sub(1).max(first)
}

/// Decompositions nest at most this deep; beyond it the search simply goes on in one piece.
const MAX_NESTING: u32 = 1024;

#[derive(Clone, Copy, Debug)]
enum Undo {
    Placed(u32),
    MinOffset(u32, u64),
    Floor(u32, u64),
    Shared(u32, u64),
    /// A candidate chosen: its index in its frame was pushed on `path`.
    Chose,
}

#[derive(Debug)]
struct Frame {
    /// Candidates as (offset, rank, item), in the order they are tried.
    order: Vec<(u64, u32, u32)>,
    next: usize,
    /// Trail length before the candidate now placed, if one is.
    placed: Option<usize>,
    /// Whether that candidate overlaps no unplaced item ("has no hat"). If it fails, so
    /// does every later candidate: any completion could have it right there.
    hatless: bool,
}

/// One decision search over an [`Instance`].
#[derive(Debug)]
pub(crate) struct Search<'i> {
    inst: &'i Instance,
    capacity: u64,
    order: Order,
    /// Per item, its position in `order` among the items of its part.
    rank: Vec<u32>,
    offset: Vec<u64>,
    min_offset: Vec<u64>,
    floor: Vec<u64>,
    total: Vec<u64>,
    /// Per section, the bytes the pairs of unplaced items in it may share.
    shared: Vec<u64>,
    /// Per section boundary `j` (between `j` and `j + 1`), unplaced items crossing it.
    cuts: Vec<u32>,
    trail: Vec<Undo>,
    new_cuts: Vec<u32>,
    /// The spans of the items the last placement raised, merged into `affected`.
    raised: Vec<(u32, u32)>,
    affected: Vec<u32>,
    /// The index of each candidate on the way to the current node, in the order chosen.
    path: Vec<u32>,
    /// A path to go back to before searching on (see [`Search::resume`]), and how much of
    /// it is retraced; once the search leaves it, the rest is dropped.
    replay: Vec<u32>,
    replayed: usize,
    /// Where the effort ran out: the path to the node, then the candidate not yet tried.
    stopped_at: Option<Vec<u32>>,
    /// Scratch for [`Search::stacks`].
    column: Vec<(u64, u64)>,
    /// Per section, its items, the unplaced ones first (`Unplaced`).
    unplaced: Unplaced,
}

impl<'i> Search<'i> {
    /// Decides whether `inst` fits in `capacity`, trying items in `preorder` among equal
    /// offsets. On [`Outcome::Found`] the offsets are returned.
    #[cfg(test)]
    pub(crate) fn decide(
        inst: &'i Instance,
        capacity: u64,
        preorder: Preorder,
        effort: &mut Effort,
    ) -> (Outcome, Vec<u64>) {
        Self::dive(inst, capacity, Order::plain(preorder), effort)
    }

    /// [`Search::decide`], starting where an earlier search of the same instance and
    /// preorder ended: at the node `path` led it to, which it had found with a capacity
    /// at least this one. The tree is the same at every capacity but for what a lower one
    /// prunes (every check compares with the capacity one way), so every node before
    /// that one has no plan within this capacity either: the search goes on from there.
    /// Also returns, for the next resume, the path to the plan found, or to the node where
    /// the effort ran out followed by the candidate it had not tried (empty when the
    /// capacity is proven impossible).
    pub(crate) fn resume(
        inst: &'i Instance,
        capacity: u64,
        preorder: Preorder,
        path: Vec<u32>,
        effort: &mut Effort,
    ) -> (Outcome, Vec<u64>, Vec<u32>) {
        Self::run(inst, capacity, Order::plain(preorder), path, effort)
    }

    /// One dive: [`Search::decide`] in `order`, maybe shaken, from the start. A shaken
    /// search's first plan lies somewhere else than every other's, and is often found in
    /// few nodes where the plain search at the same capacity runs for hundreds of
    /// millions (see `minimise`'s dives).
    pub(crate) fn dive(
        inst: &'i Instance,
        capacity: u64,
        order: Order,
        effort: &mut Effort,
    ) -> (Outcome, Vec<u64>) {
        let (outcome, offsets, _) = Self::run(inst, capacity, order, Vec::new(), effort);
        (outcome, offsets)
    }

    /// [`Search::resume`] in any [`Order`].
    fn run(
        inst: &'i Instance,
        capacity: u64,
        order: Order,
        path: Vec<u32>,
        effort: &mut Effort,
    ) -> (Outcome, Vec<u64>, Vec<u32>) {
        let sections = inst.sections();
        let mut cuts = vec![0u32; sections.saturating_sub(1)];
        // Items that overlap nothing are placed at 0 below and never block a cut.
        let crossing = inst
            .span
            .iter()
            .zip(&inst.overlaps)
            .filter(|(_, o)| !o.is_empty());
        for (&span, _) in crossing {
            for j in boundaries(span) {
                cuts[j as usize] += 1;
            }
        }
        let mut search = Search {
            inst,
            capacity,
            order,
            rank: vec![0; inst.len()],
            offset: vec![UNPLACED; inst.len()],
            min_offset: vec![0; inst.len()],
            floor: vec![0; sections],
            total: inst.members.iter().map(|m| inst.total(m)).collect(),
            shared: inst.shared(),
            cuts,
            trail: Vec::new(),
            new_cuts: Vec::new(),
            raised: Vec::new(),
            affected: Vec::new(),
            path: Vec::new(),
            replay: path,
            replayed: 0,
            stopped_at: None,
            column: Vec::new(),
            unplaced: Unplaced::default(),
        };
        // An item that overlaps nothing goes at 0.
        for i in 0..inst.len() {
            if inst.overlaps[i].is_empty() {
                if inst.size[i] > capacity {
                    return (Outcome::Infeasible, Vec::new(), Vec::new());
                }
                search.offset[i] = 0;
            }
        }
        search.unplaced = Unplaced::new(inst, &search.offset);
        let mut stacked = search.total.iter().zip(&search.shared);
        if stacked.any(|(&t, &s)| t.saturating_sub(s) > capacity) {
            return (Outcome::Infeasible, Vec::new(), Vec::new());
        }
        let items: Vec<u32> = (0..inst.len() as u32)
            .filter(|&i| search.offset[i as usize] == UNPLACED)
            .collect();
        let cuts: Vec<u32> = (0..search.cuts.len())
            .filter(|&j| search.cuts[j] == 0)
            .map(|j| j as u32 + 1)
            .collect();
        let outcome = search.parts(&items, 0, sections as u32, &cuts, 0, effort);
        match outcome {
            Outcome::Found => (outcome, search.offset, search.path),
            Outcome::Stopped => (outcome, Vec::new(), search.stopped_at.unwrap_or_default()),
            Outcome::Infeasible => (outcome, Vec::new(), Vec::new()),
        }
    }

    /// Solves `items` (sections `lo..hi`) as independent parts split at `cuts` (sorted
    /// section indices where a part starts). Leaves the state as found on success, as
    /// entered otherwise.
    fn parts(
        &mut self,
        items: &[u32],
        lo: u32,
        hi: u32,
        cuts: &[u32],
        depth: u32,
        effort: &mut Effort,
    ) -> Outcome {
        let mut groups: Vec<Vec<u32>> = vec![Vec::new(); cuts.len() + 1];
        for &i in items {
            let first = self.inst.span[i as usize].0;
            groups[cuts.partition_point(|&c| c <= first)].push(i);
        }
        let mut bounds = Vec::with_capacity(cuts.len() + 2);
        bounds.push(lo);
        bounds.extend_from_slice(cuts);
        bounds.push(hi);
        let entry = self.trail.len();
        for (g, group) in groups.iter().enumerate() {
            if group.is_empty() {
                continue;
            }
            let saved: Vec<u32> = group.iter().map(|&i| self.rank[i as usize]).collect();
            self.order
                .rank(self.inst, &self.total, group, &mut self.rank);
            let outcome = self.dfs(group, bounds[g], bounds[g + 1], depth, effort);
            // The enclosing part's frames compare ranks of its own order.
            for (&i, &r) in group.iter().zip(&saved) {
                self.rank[i as usize] = r;
            }
            if outcome != Outcome::Found {
                self.undo(entry);
                return outcome;
            }
        }
        Outcome::Found
    }

    /// The depth-first search over one part.
    fn dfs(&mut self, items: &[u32], lo: u32, hi: u32, depth: u32, effort: &mut Effort) -> Outcome {
        let entry = self.trail.len();
        let mut stack = match self.frame(items, None) {
            None => return Outcome::Found,
            Some(f) => vec![self.retrace(f)],
        };
        let step = items.len() as u64 + 1;
        while let Some(frame) = stack.last_mut() {
            if let Some(mark) = frame.placed.take() {
                // Off the path being retraced: from here on every frame starts at its first.
                self.replay.clear();
                self.undo(mark);
                if frame.hatless {
                    stack.pop();
                    continue;
                }
            }
            let Some(&(at, rank, item)) = frame.order.get(frame.next) else {
                stack.pop();
                continue;
            };
            frame.next += 1;
            if !effort.spend(step) {
                if self.stopped_at.is_none() {
                    let mut at = self.path.clone();
                    at.push(frame.next as u32 - 1);
                    self.stopped_at = Some(at);
                }
                self.undo(entry);
                return Outcome::Stopped;
            }
            frame.placed = Some(self.trail.len());
            self.path.push(frame.next as u32 - 1);
            self.trail.push(Undo::Chose);
            frame.hatless = self.inst.overlaps[item as usize]
                .iter()
                .all(|&u| self.offset[u as usize] != UNPLACED);
            if !self.place(item, at, lo, hi) || !self.fits(lo, hi, at) || !self.stacks(at) {
                continue;
            }
            if !self.new_cuts.is_empty() && depth < MAX_NESTING {
                let mut cuts = std::mem::take(&mut self.new_cuts);
                cuts.sort_unstable();
                let rest: Vec<u32> = items
                    .iter()
                    .copied()
                    .filter(|&i| self.offset[i as usize] == UNPLACED)
                    .collect();
                match self.parts(&rest, lo, hi, &cuts, depth + 1, effort) {
                    Outcome::Found => return Outcome::Found,
                    Outcome::Infeasible => continue,
                    Outcome::Stopped => {
                        self.undo(entry);
                        return Outcome::Stopped;
                    }
                }
            }
            match self.frame(items, Some((at, rank))) {
                None => return Outcome::Found,
                Some(f) => {
                    let f = self.retrace(f);
                    stack.push(f);
                }
            }
        }
        Outcome::Infeasible
    }

    /// `frame`, set to try first the candidate the path being retraced chose there.
    fn retrace(&mut self, mut frame: Frame) -> Frame {
        if let Some(&next) = self.replay.get(self.replayed) {
            self.replayed += 1;
            frame.next = (next as usize).min(frame.order.len());
        }
        frame
    }

    /// The candidates for the next placement among `items`, or `None` when all are placed.
    fn frame(&self, items: &[u32], last: Option<(u64, u32)>) -> Option<Frame> {
        let mut order = Vec::new();
        let mut min_top = u64::MAX;
        for &i in items {
            let i_us = i as usize;
            if self.offset[i_us] != UNPLACED {
                continue;
            }
            let at = self.min_offset[i_us];
            min_top = min_top.min(at.saturating_add(self.inst.size[i_us]));
            // Twins go in item order: with the one before unplaced, this one waits.
            let twin = self.inst.twin[i_us];
            if twin == u32::MAX || self.offset[twin as usize] != UNPLACED {
                order.push((at, self.rank[i_us], i));
            }
        }
        if order.is_empty() {
            return None;
        }
        order.sort_unstable();
        // Dominance cuts a suffix; canonical order a prefix.
        let keep = order.partition_point(|&(at, _, _)| at < min_top);
        order.truncate(keep);
        if let Some(last) = last {
            let skip = order.partition_point(|&(at, r, _)| (at, r) < last);
            order.drain(..skip);
        }
        Some(Frame {
            order,
            next: 0,
            placed: None,
            hatless: false,
        })
    }

    /// Puts `item` at `at` and propagates; false if that already breaks the capacity.
    /// Records cut points that open inside `lo..hi` in `new_cuts`.
    fn place(&mut self, item: u32, at: u64, lo: u32, hi: u32) -> bool {
        let inst = self.inst;
        let i = item as usize;
        self.offset[i] = at;
        self.trail.push(Undo::Placed(item));
        self.new_cuts.clear();
        let end = at.saturating_add(inst.size[i]);
        let (first, last) = inst.span[i];
        for s in first..last {
            let s_us = s as usize;
            self.unplaced.remove(inst, item, s_us);
            self.total[s_us] = self.total[s_us].saturating_sub(inst.size[i]);
            let top = self.top_in(item, s, at, end);
            if self.floor[s_us] < top {
                self.trail.push(Undo::Floor(s, self.floor[s_us]));
                self.floor[s_us] = top;
            }
        }
        self.unshare(item);
        for j in boundaries((first, last)) {
            let c = &mut self.cuts[j as usize];
            *c -= 1;
            if *c == 0 && lo <= j && j + 1 < hi {
                self.new_cuts.push(j + 1);
            }
        }
        if end > self.capacity {
            return false;
        }
        self.raised.clear();
        for (&u, &reach) in inst.overlaps[i].iter().zip(&inst.reach[i]) {
            let u_us = u as usize;
            let top = at.saturating_add(reach);
            if self.offset[u_us] != UNPLACED || self.min_offset[u_us] >= top {
                continue;
            }
            let raised = top
                .checked_next_multiple_of(inst.align[u_us])
                .unwrap_or(u64::MAX);
            self.trail.push(Undo::MinOffset(u, self.min_offset[u_us]));
            self.min_offset[u_us] = raised;
            if raised.saturating_add(inst.size[u_us]) > self.capacity {
                return false;
            }
            self.raised.push(inst.span[u_us]);
        }
        // The sections the raised items cover, each once: their spans merged.
        self.raised.sort_unstable();
        self.affected.clear();
        let mut covered = 0;
        for &(f, l) in &self.raised {
            self.affected.extend(f.max(covered)..l);
            covered = covered.max(l);
        }
        // A section's floor is at least the lowest place any of its unplaced items can go.
        for k in 0..self.affected.len() {
            let s = self.affected[k];
            let floor = self.floor[s as usize];
            // One unplaced item at or below the floor settles it; most sections have one.
            let mut lowest = u64::MAX;
            for &m in self.unplaced.of(s as usize) {
                lowest = lowest.min(self.min_offset[m as usize]);
                if lowest <= floor {
                    break;
                }
            }
            if lowest != u64::MAX && lowest > floor {
                self.trail.push(Undo::Floor(s, floor));
                self.floor[s as usize] = lowest;
            }
        }
        true
    }

    /// The stacks check (module text) in each section whose items were just raised; apart
    /// from the floors' loop, which stops at the first item at the floor.
    fn stacks(&mut self, at: u64) -> bool {
        let inst = self.inst;
        for k in 0..self.affected.len() {
            let s = self.affected[k] as usize;
            let needed = self.total[s];
            if self.shared[s] != 0 || needed == 0 {
                continue;
            }
            // `fits` checked the floor (or `at`): only items starting above it count.
            let base = self.floor[s].max(at);
            let unplaced = self.unplaced.of(s);
            let highest = unplaced
                .iter()
                .map(|&m| self.min_offset[m as usize])
                .max()
                .unwrap_or(0);
            if highest <= base || highest.saturating_add(needed) <= self.capacity {
                continue;
            }
            let column = &mut self.column;
            column.clear();
            for &m in unplaced {
                let low = self.min_offset[m as usize];
                if low > base {
                    column.push((low, inst.size[m as usize]));
                }
            }
            // Highest first: each prefix must start no lower than its last item.
            column.sort_unstable_by_key(|c| std::cmp::Reverse(c.0));
            let mut above = 0u64;
            let fits = column.iter().all(|&(low, size)| {
                above = above.saturating_add(size);
                low.saturating_add(above) <= self.capacity
            });
            if !fits {
                return false;
            }
        }
        true
    }

    /// Takes what the pairs of `item`, just placed, with unplaced partners could share
    /// off their sections: the partner now stacks whole above the floor.
    fn unshare(&mut self, item: u32) {
        let inst = self.inst;
        for &p in &inst.pairs_of[item as usize] {
            let pair = &inst.pairs[p as usize];
            let partner = if pair.output == item {
                pair.input
            } else {
                pair.output
            };
            if self.offset[partner as usize] != UNPLACED {
                continue;
            }
            for s in pair.sections.0..pair.sections.1 {
                let old = self.shared[s as usize];
                self.trail.push(Undo::Shared(s, old));
                self.shared[s as usize] = old.saturating_sub(pair.share);
            }
        }
    }

    /// The lowest an unplaced item live in section `s` can start above `item`, placed at
    /// `at`: its top `end`, but where its input may start inside an output.
    fn top_in(&self, item: u32, s: u32, at: u64, end: u64) -> u64 {
        let inst = self.inst;
        let pairs = inst.pairs_of[item as usize]
            .iter()
            .map(|&p| &inst.pairs[p as usize]);
        pairs
            .filter(|p| p.output == item && (p.sections.0..p.sections.1).contains(&s))
            .fold(end, |top, p| top.min(at.saturating_add(p.reach)))
    }

    /// Whether every section of `lo..hi` can still hold its unplaced items above both its
    /// floor and the current offset `at` (later items go no lower).
    fn fits(&self, lo: u32, hi: u32, at: u64) -> bool {
        (lo as usize..hi as usize).all(|s| {
            let needed = self.total[s].saturating_sub(self.shared[s]);
            needed == 0 || self.floor[s].max(at).saturating_add(needed) <= self.capacity
        })
    }

    fn undo(&mut self, mark: usize) {
        while self.trail.len() > mark {
            match self.trail.pop() {
                Some(Undo::Placed(item)) => {
                    let i = item as usize;
                    self.offset[i] = UNPLACED;
                    let (first, last) = self.inst.span[i];
                    for s in first..last {
                        self.total[s as usize] =
                            self.total[s as usize].saturating_add(self.inst.size[i]);
                        self.unplaced.restore(s as usize);
                    }
                    for j in boundaries((first, last)) {
                        self.cuts[j as usize] += 1;
                    }
                }
                Some(Undo::MinOffset(u, old)) => self.min_offset[u as usize] = old,
                Some(Undo::Floor(s, old)) => self.floor[s as usize] = old,
                Some(Undo::Shared(s, old)) => self.shared[s as usize] = old,
                Some(Undo::Chose) => {
                    self.path.pop();
                }
                None => break,
            }
        }
    }
}
