use super::*;
use crate::LowerBound;
use crate::model::{Call, InPlace, Overlap, Scratch, Size, Tensor};
use crate::test_rng::Rng;

/// A random model of `calls` calls over a branching graph: each call reads one or two
/// earlier tensors (or the model input), writes one or two, sometimes has scratch, an
/// output in place of a dying input, or a candidate overlap (valid or not as written).
fn random_model(rng: &mut Rng, calls: usize) -> Model {
    let mut model = Model {
        name: "random".into(),
        tensors: vec![Tensor::activation("in", 16 + rng.below(200))],
        inputs: vec![0],
        ..Model::default()
    };
    for i in 0..calls {
        let mut call = Call::new("op", "cpu");
        let have = model.tensors.len() as u64;
        let first = rng.below(have) as usize;
        call.reads.push(first);
        let second = rng.below(have) as usize;
        if rng.below(3) == 0 && second != first {
            call.reads.push(second);
        }
        for k in 0..1 + rng.below(2) {
            let t = model.tensors.len();
            let size = 16 + rng.below(300);
            model
                .tensors
                .push(Tensor::activation(format!("t{i}.{k}"), size));
            call.writes.push(t);
        }
        if rng.below(4) == 0 {
            call.scratch.push(Scratch {
                name: "s".into(),
                size: Size::Bytes(8 + rng.below(100)),
                alignment: None,
            });
        }
        match rng.below(4) {
            0 => call.in_place.push(InPlace {
                output: call.writes[0],
                input: first,
            }),
            1 | 2 => {
                let lo = -(rng.below(400) as i64);
                call.overlaps.push(Overlap {
                    output: call.writes[0],
                    input: first,
                    shifts: [lo, lo + rng.below(200) as i64],
                });
            }
            _ => {}
        }
        model.calls.push(call);
    }
    model.outputs = vec![model.tensors.len() - 1];
    // In-place uses that do not hold as written are dropped (the orders keep them).
    if model.problems().iter().any(|e| {
        !matches!(
            e.locus,
            crate::model::ModelLocus::Call(_, crate::model::CallField::Overlap(_))
        )
    }) {
        for c in &mut model.calls {
            c.in_place.clear();
        }
    }
    // Pairs no order allows (an in-place input, say) are errors, not candidates.
    for i in 0..model.calls.len() {
        if model.overlap_refused_in_every_order(i, 0).is_some() {
            model.calls[i].overlaps.clear();
        }
    }
    model
}

/// The model's lower bound in one workspace pool, from liveness and the bounds alone.
fn bound(model: &Model) -> u64 {
    let pools = [Pool::workspace("w"), Pool::constant("c")];
    let lowered = liveness::analyse(model, &pools, &Options::default()).unwrap();
    LowerBound::of(&lowered.problem).per_pool[0]
}

/// Every permutation of `0..n`, in lexicographic order.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut all = Vec::new();
    for rest in permutations(n - 1) {
        for at in 0..=rest.len() {
            let mut p = rest.clone();
            p.insert(at, n - 1);
            all.push(p);
        }
    }
    all.sort();
    all
}

#[test]
fn each_order_peaks_at_its_bound_and_the_search_finds_the_least() {
    let mut rng = Rng::seeded(0x0de5_0a11);
    let mut improved = 0;
    for _ in 0..150 {
        let calls = 2 + rng.below(5) as usize;
        let model = random_model(&mut rng, calls);
        let graph = Graph::of(&model, &Options::default()).unwrap();
        let mut least = u64::MAX;
        for perm in permutations(calls) {
            let order = Order {
                calls: perm.clone(),
                written: 0,
                peak: 0,
                exact: true,
            };
            let reordered = order.apply(&model);
            // Only the orders the model allows: read after written, in place last.
            if !reordered.problems().is_empty() {
                continue;
            }
            let peak = bound(&reordered);
            assert_eq!(graph.peak_of(&perm), peak, "{perm:?} of {model:#?}");
            least = least.min(peak);
        }
        let found = memory_order(&model, &Options::default()).unwrap();
        assert!(found.exact);
        assert_eq!(found.peak, least, "{model:#?}");
        let reordered = found.apply(&model);
        assert_eq!(reordered.problems(), Vec::new());
        assert_eq!(bound(&reordered), found.peak);
        let written = bound(
            &Order {
                calls: (0..calls).collect(),
                written: 0,
                peak: 0,
                exact: true,
            }
            .apply(&model),
        );
        assert_eq!(found.written, written);
        improved += usize::from(found.peak < written);
        if found.peak == written {
            assert!(found.is_written(), "a tie keeps the order as written");
        }
    }
    // The random graphs branch enough for some orders to matter.
    assert!(improved > 10, "{improved}");
}

/// Two branches from one input, each a big tensor then a small one, joined at the end.
fn two_branches() -> Model {
    let mut model = Model {
        name: "branches".into(),
        tensors: vec![
            Tensor::activation("x", 16),
            Tensor::activation("a1", 1008),
            Tensor::activation("b1", 1008),
            Tensor::activation("a2", 16),
            Tensor::activation("b2", 16),
            Tensor::activation("y", 16),
        ],
        inputs: vec![0],
        outputs: vec![5],
        ..Model::default()
    };
    for (reads, writes) in [
        (vec![0], vec![1]),
        (vec![0], vec![2]),
        (vec![1], vec![3]),
        (vec![2], vec![4]),
        (vec![3, 4], vec![5]),
    ] {
        let mut call = Call::new("op", "cpu");
        (call.reads, call.writes) = (reads, writes);
        model.calls.push(call);
    }
    model
}

#[test]
fn a_branch_runs_to_its_end_before_the_next_starts() {
    let model = two_branches();
    let order = memory_order(&model, &Options::default()).unwrap();
    // As written, a1 and b1 are live together: x + a1 + b1, then a1 + b1 + a2.
    assert_eq!(order.written, 2032);
    assert_eq!(order.calls, vec![0, 2, 1, 3, 4]);
    // x + a1 + a2, then x + a2 + b1 (x read last by call 1), then a2 + b1 + b2.
    assert_eq!(order.peak, 1040);
    assert!(order.exact);
    let reordered = order.apply(&model);
    assert_eq!(bound(&reordered), 1040);
    // A scratch rule naming call 2 as written names it where it runs now.
    let mut options = Options::default();
    options.scratch.push(liveness::ScratchRule {
        calls: CallSelector::Index(2),
        scratch: Scratch {
            name: "s".into(),
            size: Size::Bytes(16),
            alignment: None,
        },
    });
    assert_eq!(
        order.renumber(&options).scratch[0].calls,
        CallSelector::Index(1)
    );
}

#[test]
fn a_chain_keeps_its_order() {
    let mut model = two_branches();
    // Call 1 (b1) now reads a2, so every call waits for the one before.
    model.calls.swap(1, 2);
    model.calls[2].reads = vec![3];
    let order = memory_order(&model, &Options::default()).unwrap();
    assert!(order.is_written() && order.exact);
    assert_eq!(order.peak, order.written);
}

#[test]
fn an_overlap_counts_only_where_its_call_reads_the_input_last() {
    // x is read by calls 0 and 1; call 0 may write a over x. As written call 1 reads x
    // last, so the pair cannot share; run 1 first and it can.
    let mut model = two_branches();
    model.tensors[0].size = Size::Bytes(1000);
    model.calls[0].overlaps.push(Overlap {
        output: 1,
        input: 0,
        shifts: [-2000, 2000],
    });
    let order = memory_order(&model, &Options::default()).unwrap();
    assert_eq!(order.calls[0], 1, "{order:?}");
    let reordered = order.apply(&model);
    assert_eq!(reordered.calls[1].overlaps.len(), 1);
    assert_eq!(bound(&reordered), order.peak);
    // As written the overlap is dropped, not an error.
    let written = Order {
        calls: (0..5).collect(),
        ..order.clone()
    };
    assert!(written.apply(&model).calls[0].overlaps.is_empty());
    // A pair no order allows is the model's error, named at the pair.
    model.calls[4].overlaps.push(Overlap {
        output: 5,
        input: 5,
        shifts: [0, 0],
    });
    let e = memory_order(&model, &Options::default()).unwrap_err();
    assert_eq!(
        e.locus,
        crate::model::ModelLocus::Call(4, crate::model::CallField::Overlap(0))
    );
}

#[test]
fn in_place_and_state_keep_what_must_come_first() {
    // p (from x) is read by call 1 and overwritten in place by call 2: call 1 must run
    // first, though running 2 first would free r's bytes sooner.
    let mut model = Model {
        name: "in place".into(),
        tensors: vec![
            Tensor::activation("x", 16),
            Tensor::activation("p", 100),
            Tensor::activation("r", 1000),
            Tensor::activation("q", 100),
            Tensor::activation("y", 16),
        ],
        inputs: vec![0],
        outputs: vec![4],
        ..Model::default()
    };
    for (reads, writes) in [
        (vec![0], vec![1]),
        (vec![1], vec![2]),
        (vec![1], vec![3]),
        (vec![2, 3], vec![4]),
    ] {
        let mut call = Call::new("op", "cpu");
        (call.reads, call.writes) = (reads, writes);
        model.calls.push(call);
    }
    model.calls[2].in_place.push(InPlace {
        output: 3,
        input: 1,
    });
    assert_eq!(model.problems(), Vec::new());
    let graph = Graph::of(&model, &Options::default()).unwrap();
    assert_eq!(graph.before[2], vec![0, 1]);
    let order = memory_order(&model, &Options::default()).unwrap();
    assert!(order.is_written(), "{order:?}");
    // Calls on state keep their order even with nothing else between them.
    let mut stateful = two_branches();
    stateful.tensors.push(Tensor::state("h", 64));
    stateful.calls[1].reads.push(6);
    stateful.calls[2].writes.push(6);
    let graph = Graph::of(&stateful, &Options::default()).unwrap();
    assert!(graph.before[2].contains(&1), "{:?}", graph.before);
}

#[test]
fn wide_graphs_keep_the_best_sets_and_say_so() {
    // Twelve independent chains of three calls, big tensors first and small outputs:
    // more sets than the search keeps.
    let mut model = Model {
        name: "wide".into(),
        tensors: vec![Tensor::activation("x", 16)],
        inputs: vec![0],
        ..Model::default()
    };
    for b in 0..12 {
        let mut from = 0;
        for k in 0..3 {
            let t = model.tensors.len();
            model
                .tensors
                .push(Tensor::activation(format!("{b}.{k}"), [304, 208, 16][k]));
            let mut call = Call::new("op", "cpu");
            (call.reads, call.writes) = (vec![from], vec![t]);
            model.calls.push(call);
            from = t;
        }
        model.outputs.push(from);
    }
    // Interleaved as written: every chain's first tensor live together.
    let order: Vec<usize> = (0..3)
        .flat_map(|k| (0..12).map(move |b| 3 * b + k))
        .collect();
    model.calls = order.iter().map(|&c| model.calls[c].clone()).collect();
    let found = memory_order(&model, &Options::default()).unwrap();
    assert!(!found.exact);
    assert!(found.peak < found.written, "{found:?}");
    assert_eq!(bound(&found.apply(&model)), found.peak);
    // The same answer every time.
    assert_eq!(memory_order(&model, &Options::default()).unwrap(), found);
}
