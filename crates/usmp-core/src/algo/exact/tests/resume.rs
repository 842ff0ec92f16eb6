//! `Search::resume`: a search that goes on from a path finds what one search from the
//! start finds, whether the path is where a search stopped for lack of work or where one
//! at a higher capacity found a plan. `Probes` relies on both.

use super::super::effort::Effort;
use super::super::instance::Instance;
use super::super::preorder::Preorder;
use super::super::search::{Outcome, Search};
use super::*;

/// Buffers over a timeline long enough to split into parts (the search's decomposition
/// runs), sizes 2..=9, some aligned to 2.
fn timeline(rng: &mut Rng, n: usize) -> Problem {
    let mut b = Problem::builder();
    let w = b.pool(Pool::workspace("w").with_alignment(1));
    for i in 0..n {
        let start = rng.below(24);
        let mut buffer = Buffer::new(format!("b{i}"), 2 + rng.below(8))
            .with_candidates([w])
            .with_live(start, start + 1 + rng.below(6));
        if rng.below(4) == 0 {
            buffer = buffer.with_alignment(2);
        }
        b.buffer(buffer);
    }
    b.build().unwrap()
}

/// A problem of one of three shapes: dense (one part, many nodes), long (parts within
/// parts), or a conflict graph (its cliques are not sections, so the bound is weak and
/// the capacities below the optimum are proven impossible by search).
fn any_problem(rng: &mut Rng, case: usize) -> Problem {
    match case % 3 {
        0 => random_problem(rng, 14 + case % 16),
        1 => timeline(rng, 16 + case % 40),
        _ => random_graph(rng, 8 + case % 8, 6),
    }
}

fn instance(problem: &Problem) -> Instance {
    Instance::new(problem, 0, (0..problem.buffers().len()).collect())
}

/// Searches to the end, or `None` where that takes more than a million units.
fn whole(inst: &Instance, capacity: u64, preorder: Preorder) -> Option<(Outcome, Vec<u64>)> {
    let mut effort = Effort::new(1_000_000, None);
    let result = Search::decide(inst, capacity, preorder, &mut effort);
    (result.0 != Outcome::Stopped).then_some(result)
}

/// The same search stopped every few nodes, each time going on from where it stopped; and
/// how many times it stopped. Going back along the path costs a node's work per step too
/// (the probes' shares are far larger), so each slice is that and `nodes` more.
fn in_slices(
    inst: &Instance,
    capacity: u64,
    preorder: Preorder,
    rng: &mut Rng,
) -> (Outcome, Vec<u64>, usize) {
    let node = inst.len() as u64 + 1;
    let mut effort = Effort::new(0, None);
    let mut path: Vec<u32> = Vec::new();
    for stops in 0..1_000_000 {
        let nodes = path.len() as u64 + 1 + rng.below(8);
        effort.limit = effort.spent + nodes * node;
        let (outcome, offsets, next) = Search::resume(inst, capacity, preorder, path, &mut effort);
        if outcome != Outcome::Stopped {
            return (outcome, offsets, stops);
        }
        path = next;
    }
    panic!("no end in a million slices: the search does not go on where it stopped");
}

#[test]
fn a_search_in_slices_finds_what_one_search_finds() {
    let mut rng = Rng::seeded(0x5e5);
    let (mut sliced, mut infeasible) = (0, 0);
    for case in 0..120 {
        let problem = any_problem(&mut rng, case);
        let inst = instance(&problem);
        let bound = inst.lower_bound();
        for preorder in Preorder::ALL {
            // Up from the bound to the first capacity with a plan.
            for capacity in bound..bound + 40 {
                let Some((outcome, offsets)) = whole(&inst, capacity, preorder) else {
                    continue;
                };
                let (o, found, stops) = in_slices(&inst, capacity, preorder, &mut rng);
                assert_eq!(
                    (o, &found),
                    (outcome, &offsets),
                    "case {case} {preorder:?} at {capacity}"
                );
                if stops > 2 {
                    sliced += 1;
                    infeasible += usize::from(outcome == Outcome::Infeasible);
                }
                if outcome == Outcome::Found {
                    break;
                }
            }
        }
    }
    // Not vacuous: many searches stopped several times, ending both ways.
    assert!(sliced > 100 && infeasible > 10, "{sliced} {infeasible}");
}

/// From where a search at a capacity ended (its plan, or where it stopped), a search at
/// a lower capacity goes on and finds what a search from the start finds there: every
/// node before that one holds no plan within the higher capacity, so none within the
/// lower (the plan itself is over the lower capacity).
#[test]
fn a_search_from_where_a_higher_capacitys_ended_finds_what_one_from_the_start_finds() {
    let mut rng = Rng::seeded(0x10e);
    let (mut found, mut infeasible, mut stopped) = (0, 0, 0);
    for case in 0..150 {
        let problem = any_problem(&mut rng, case);
        let inst = instance(&problem);
        let bound = inst.lower_bound();
        for preorder in Preorder::ALL {
            let high = bound + 3 + rng.below(6);
            // Every other time the search at the higher capacity stops early.
            let budget = if rng.below(2) == 0 {
                1_000_000
            } else {
                40 * (inst.len() as u64 + 1)
            };
            let mut effort = Effort::new(budget, None);
            let (outcome, offsets, path) =
                Search::resume(&inst, high, preorder, Vec::new(), &mut effort);
            let below = match outcome {
                Outcome::Found => super::super::peak(&inst, &offsets),
                Outcome::Stopped => high + 1,
                Outcome::Infeasible => continue,
            };
            stopped += usize::from(outcome == Outcome::Stopped);
            for capacity in bound..below {
                let Some(fresh) = whole(&inst, capacity, preorder) else {
                    continue;
                };
                let mut effort = Effort::new(1_000_000, None);
                let (o, offs, _) =
                    Search::resume(&inst, capacity, preorder, path.clone(), &mut effort);
                assert_eq!(
                    (o, offs),
                    fresh,
                    "case {case} {preorder:?}: {high} -> {capacity}"
                );
                match o {
                    Outcome::Found => found += 1,
                    _ => infeasible += 1,
                }
            }
        }
    }
    assert!(
        found > 100 && infeasible > 100 && stopped > 50,
        "{found} {infeasible} {stopped}"
    );
}
