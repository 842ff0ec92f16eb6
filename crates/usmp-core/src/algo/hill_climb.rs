//! Hill climbing over placement orders (TVM's `hill_climb`), deterministic everywhere.
//!
//! Start from first fit's order and placement, then repeatedly move the buffer that
//! ends highest in the tallest pool earlier in the order (or, now and then, swap two
//! random buffers) and keep the change when the total does not grow. TVM reseeds the C
//! library's generator for this; here a fixed-seed SplitMix64 of our own makes the same
//! input give the same plan on every machine, and the effort is bounded by a count of
//! attempts and of work (placements plus the address ranges the gap searches examine),
//! never by a clock.

use super::Algorithm;
use super::greedy::first_fit_order;
use super::place::{Fit, Layout, place_in_order};
use crate::bound::LowerBound;
use crate::problem::Problem;
use crate::solution::{Allocation, PlanError, Solution, pool_sizes};

/// Hill climbing with a deterministic budget.
#[derive(Clone, Copy, Debug)]
pub struct HillClimb {
    /// At most this many orders are tried (TVM: 500).
    pub max_attempts: u32,
    /// Stop once this much work (buffers placed plus address ranges examined) is spent.
    pub work_budget: u64,
    /// Seed of the move generator.
    pub seed: u64,
}

impl Default for HillClimb {
    fn default() -> Self {
        HillClimb {
            max_attempts: 500,
            work_budget: 50_000_000,
            seed: 0x5553_4d50,
        }
    }
}

/// SplitMix64: tiny, fast, and identical on every platform.
#[derive(Debug)]
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`); the tiny modulo bias does not matter here.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Position in `order` of the buffer that ends highest in the tallest pool.
fn top_position(problem: &Problem, order: &[usize], allocs: &[Allocation]) -> usize {
    let sizes = pool_sizes(problem, allocs);
    let tallest = (0..sizes.len())
        .max_by_key(|&p| (sizes[p], std::cmp::Reverse(p)))
        .unwrap_or(0);
    let end = |i: usize| allocs[i].offset + problem.buffers()[i].size;
    (0..order.len())
        .filter(|&k| allocs[order[k]].pool == tallest)
        .max_by_key(|&k| (end(order[k]), k))
        .unwrap_or(0)
}

impl Algorithm for HillClimb {
    fn name(&self) -> &str {
        "hill_climb"
    }

    fn allocate(&self, problem: &Problem, lower_bound: &LowerBound) -> Result<Solution, PlanError> {
        let layout = Layout::new(problem);
        let n = problem.buffers().len();
        let total = |allocs: &[Allocation]| pool_sizes(problem, allocs).iter().sum::<u64>();
        // Starting from first fit's order means the climb never ends worse than first fit.
        let mut order = first_fit_order(problem);
        let (mut current, mut work, first_error) =
            match place_in_order(&layout, &order, Fit::Lowest, lower_bound.total) {
                Ok((allocs, work)) => (Some(allocs), work, None),
                Err(e) => (None, n as u64, Some(e)),
            };
        let mut current_total = current.as_deref().map_or(u64::MAX, total);
        let mut best = current.clone();
        let mut best_total = current_total;
        let mut rng = SplitMix(self.seed);
        for _ in 1..self.max_attempts {
            if n < 2 || best_total <= lower_bound.total || work >= self.work_budget {
                break;
            }
            // Mostly promote the highest buffer; one move in four is a random swap so
            // that plateaus do not trap the search.
            let top = current.as_deref().map(|a| top_position(problem, &order, a));
            let mv = match top {
                Some(i) if i > 0 && rng.below(4) != 0 => Move::Promote {
                    from: i,
                    to: rng.below(i),
                },
                _ => {
                    let a = rng.below(n);
                    let b = (a + 1 + rng.below(n - 1)) % n;
                    Move::Swap(a, b)
                }
            };
            mv.apply(&mut order);
            match place_in_order(&layout, &order, Fit::Lowest, lower_bound.total) {
                Ok((allocs, w)) => {
                    work += w;
                    let t = total(&allocs);
                    if t <= current_total {
                        current_total = t;
                        if t < best_total {
                            best_total = t;
                            best = Some(allocs.clone());
                        }
                        current = Some(allocs);
                    } else {
                        mv.undo(&mut order);
                    }
                }
                Err(_) => {
                    work += n as u64;
                    mv.undo(&mut order);
                }
            }
        }
        match (best, first_error) {
            (Some(allocs), _) => Ok(Solution::new(allocs)),
            (None, Some(e)) => Err(e),
            (None, None) => Ok(Solution::new(Vec::new())),
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Move {
    /// Move the buffer at `from` to the earlier position `to`.
    Promote {
        from: usize,
        to: usize,
    },
    Swap(usize, usize),
}

impl Move {
    fn apply(self, order: &mut [usize]) {
        match self {
            Move::Promote { from, to } => order[to..=from].rotate_right(1),
            Move::Swap(a, b) => order.swap(a, b),
        }
    }

    fn undo(self, order: &mut [usize]) {
        match self {
            Move::Promote { from, to } => order[to..=from].rotate_left(1),
            Move::Swap(a, b) => order.swap(a, b),
        }
    }
}
