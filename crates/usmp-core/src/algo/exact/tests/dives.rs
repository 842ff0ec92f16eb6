//! `Search::dive`: a search whose order is shaken is still the whole search. Every plan it
//! finds fits, and where it ends it agrees with the unshaken search on whether a capacity
//! fits at all; the shakes change where it looks first, which `minimise`'s dives rely on.

use super::super::effort::Effort;
use super::super::instance::Instance;
use super::super::preorder::{Order, Preorder, Shaker};
use super::super::search::{Outcome, Search};
use super::*;

/// The peak of `offsets`, after checking them against every conflict of `problem`.
fn checked_peak(problem: &Problem, offsets: &[u64]) -> u64 {
    let allocations: Vec<Allocation> = offsets
        .iter()
        .map(|&offset| Allocation { pool: 0, offset })
        .collect();
    crate::verify::verify(problem, &allocations).unwrap();
    pool_sizes(problem, &allocations)[0]
}

/// The search to its end within a million units, or `None`.
fn ended(inst: &Instance, capacity: u64, order: Order) -> Option<(Outcome, Vec<u64>)> {
    let mut effort = Effort::new(1_000_000, None);
    let result = Search::dive(inst, capacity, order, &mut effort);
    (result.0 != Outcome::Stopped).then_some(result)
}

#[test]
fn shaken_searches_decide_as_the_plain_one_and_look_elsewhere_first() {
    let mut rng = Rng::seeded(0xD1FE);
    let mut shaker = Shaker::new();
    let (mut decided, mut elsewhere) = (0, 0);
    for case in 0..300 {
        let problem = random_problem(&mut rng, 6 + case % 8);
        let inst = Instance::new(&problem, 0, (0..problem.buffers().len()).collect());
        let bound = inst.lower_bound();
        for capacity in bound.saturating_sub(1)..bound + 4 {
            for preorder in Preorder::ALL {
                let Some((plain, first)) = ended(&inst, capacity, Order::plain(preorder)) else {
                    continue;
                };
                let shaken = shaker.shake(preorder, inst.len());
                let Some((outcome, offsets)) = ended(&inst, capacity, shaken) else {
                    continue;
                };
                assert_eq!(outcome, plain, "case {case} at {capacity}: {problem:?}");
                decided += 1;
                if outcome == Outcome::Found {
                    assert!(checked_peak(&problem, &offsets) <= capacity, "case {case}");
                    elsewhere += usize::from(offsets != first);
                }
            }
        }
    }
    assert!(decided > 3000, "only {decided} searches ended");
    assert!(
        elsewhere > 1000,
        "only {elsewhere} shaken plans differ from the plain one"
    );
}
