use super::*;
use crate::model::{
    Call, CallField, InPlace, ModelErrorKind, ModelLocus, Size, Tensor, TensorField,
};
use crate::problem::Live;
use crate::problem::{Pool, PoolKind};

fn call(op: &str, target: &str, reads: &[usize], writes: &[usize]) -> Call {
    let mut c = Call::new(op, target);
    c.reads = reads.to_vec();
    c.writes = writes.to_vec();
    c
}

/// in -conv(w)-> a -relu-> b -fc-> out, with scratch in conv and a state tensor.
fn chain() -> Model {
    let mut conv = call("CONV_2D", "cpu", &[0, 4], &[1]);
    conv.scratch.push(Scratch {
        name: "im2col".into(),
        size: Size::Bytes(40),
        alignment: None,
    });
    Model {
        name: "chain".into(),
        tensors: vec![
            Tensor::activation("in", 100),
            Tensor::activation("a", 200),
            Tensor::activation("b", 300),
            Tensor::activation("out", 10),
            Tensor::constant("w", vec![7; 33]),
            Tensor::state("h", 8),
        ],
        calls: vec![
            conv,
            call("RELU", "cpu", &[1], &[2]),
            call("FC", "cpu", &[2, 5], &[3, 5]),
        ],
        inputs: vec![0],
        outputs: vec![3],
    }
}

fn pools() -> Vec<Pool> {
    vec![
        Pool::workspace("sram").with_alignment(16),
        Pool::constant("flash"),
    ]
}

fn live_of(l: &Liveness, name: &str) -> Live {
    let b = l.problem.buffers().iter().find(|b| b.name == name).unwrap();
    b.live.unwrap()
}

#[test]
fn live_ranges_follow_the_program() {
    let l = analyse(&chain(), &pools(), &Options::default()).unwrap();
    let r = |s, e| Live { start: s, end: e };
    assert_eq!(live_of(&l, "in"), r(0, 1));
    assert_eq!(live_of(&l, "a"), r(0, 2));
    assert_eq!(live_of(&l, "b"), r(1, 3));
    assert_eq!(live_of(&l, "out"), r(2, 3));
    assert_eq!(live_of(&l, "im2col@0"), r(0, 1));
    assert_eq!(live_of(&l, "h"), r(0, 3));
    assert_eq!(live_of(&l, "w"), r(0, 3));
    // Sizes rounded to 16; the constant goes to the constant pool only.
    let w = l.problem.buffers().iter().find(|b| b.name == "w").unwrap();
    assert_eq!(
        (w.size, w.kind, w.candidates.clone()),
        (48, PoolKind::Constant, vec![1])
    );
    assert_eq!(
        l.steps,
        vec!["0 CONV_2D (cpu)", "1 RELU (cpu)", "2 FC (cpu)"]
    );
    // Scratch and tensors meet in one problem: conv's scratch conflicts with its input
    // and output but not with "b".
    let idx = |n: &str| {
        l.problem
            .buffers()
            .iter()
            .position(|b| b.name == n)
            .unwrap()
    };
    assert!(l.problem.conflict(idx("im2col@0"), idx("in")));
    assert!(l.problem.conflict(idx("im2col@0"), idx("a")));
    assert!(!l.problem.conflict(idx("im2col@0"), idx("b")));
    assert!(!l.problem.conflict(idx("in"), idx("b")));
    assert_eq!(l.live_at(1).len(), 3, "a, b and h are live during RELU");
}

#[test]
fn io_outside_pools_is_left_out_and_listed() {
    let options = Options {
        io_in_pools: false,
        ..Options::default()
    };
    let l = analyse(&chain(), &pools(), &options).unwrap();
    assert_eq!(l.tensor_buffers[0], None);
    assert_eq!(l.tensor_buffers[3], None);
    let external: Vec<&str> = l
        .left_out
        .iter()
        .filter(|o| o.reason == Omission::External)
        .map(|o| o.name.as_str())
        .collect();
    assert_eq!(external, vec!["in", "out"]);
}

#[test]
fn dynamic_and_unused_tensors_are_listed_not_planned() {
    let mut m = chain();
    m.tensors.push(Tensor {
        size: Size::Dynamic,
        ..Tensor::activation("tokens", 0)
    });
    m.calls[2].writes.push(6);
    m.tensors.push(Tensor::activation("orphan", 5));
    let l = analyse(&m, &pools(), &Options::default()).unwrap();
    assert_eq!(
        l.left_out,
        vec![
            LeftOut {
                name: "tokens".into(),
                reason: Omission::Dynamic
            },
            LeftOut {
                name: "orphan".into(),
                reason: Omission::Unused
            }
        ]
    );
}

#[test]
fn an_operator_called_twice_gets_scratch_per_call() {
    let mut m = chain();
    m.calls[1].op = "CONV_2D".into();
    let options = Options {
        scratch: vec![ScratchRule {
            calls: CallSelector::Operator("CONV_2D".into()),
            scratch: Scratch {
                name: "acc".into(),
                size: Size::Bytes(64),
                alignment: Some(32),
            },
        }],
        ..Options::default()
    };
    let l = analyse(&m, &pools(), &options).unwrap();
    assert_eq!(live_of(&l, "acc@0"), Live { start: 0, end: 1 });
    assert_eq!(live_of(&l, "acc@1"), Live { start: 1, end: 2 });
    let bad = Options {
        scratch: vec![ScratchRule {
            calls: CallSelector::Operator("DEPTHWISE".into()),
            ..options.scratch[0].clone()
        }],
        ..Options::default()
    };
    let e = analyse(&m, &pools(), &bad).unwrap_err();
    assert_eq!(e.locus, ModelLocus::ScratchRule(0));
    assert!(e.to_string().contains("matches no call"), "{e}");
}

#[test]
fn in_place_outputs_share_their_input_buffer() {
    let mut m = chain();
    m.calls[1].in_place.push(InPlace {
        output: 2,
        input: 1,
    });
    let l = analyse(&m, &pools(), &Options::default()).unwrap();
    assert_eq!(l.tensor_buffers[1], l.tensor_buffers[2]);
    let b = l.tensor_buffers[1].unwrap();
    assert_eq!(l.origins[b], Origin::Tensors(vec![1, 2]));
    let buffer = &l.problem.buffers()[b];
    assert_eq!(
        (buffer.size, buffer.live),
        (304, Some(Live { start: 0, end: 3 }))
    );
}

#[test]
fn targets_filter_the_candidate_pools() {
    let mut m = chain();
    m.calls[1].target = "npu".into();
    let mut p = vec![
        Pool::workspace("dtcm"),
        Pool::workspace("shared"),
        Pool::constant("flash"),
    ];
    p[0].targets = vec!["cpu".into()];
    p[1].targets = vec!["cpu".into(), "npu".into()];
    let l = analyse(&m, &p, &Options::default()).unwrap();
    let cands = |n: &str| {
        let b = l.problem.buffers().iter().find(|b| b.name == n).unwrap();
        b.candidates.clone()
    };
    assert_eq!(cands("in"), vec![0, 1], "cpu only");
    assert_eq!(cands("a"), vec![1], "cpu writes, npu reads");
    assert_eq!(cands("im2col@0"), vec![0, 1]);

    p[1].targets = vec!["npu".into()];
    let e = analyse(&m, &p, &Options::default()).unwrap_err();
    assert!(
        matches!(&e.kind, ModelErrorKind::NoSharedPool { buffer, .. } if buffer == "a"),
        "{e}"
    );
    p[1].targets = vec!["dsp".into()];
    let e = analyse(&m, &p, &Options::default()).unwrap_err();
    assert_eq!(e.locus, ModelLocus::Call(1, CallField::Target));
    assert!(
        e.to_string().contains("add \"npu\" to the `targets`"),
        "{e}"
    );
}

#[test]
fn constants_need_a_constant_pool() {
    let e = analyse(&chain(), &[Pool::workspace("sram")], &Options::default()).unwrap_err();
    assert_eq!(e.locus, ModelLocus::Tensor(4, TensorField::Name));
    assert!(e.to_string().contains("needs a constant pool"), "{e}");
}

#[test]
fn the_constant_image_holds_every_constant() {
    let mut m = chain();
    m.tensors.push(Tensor::constant("bias", vec![1, 2, 3]));
    m.calls[2].reads.push(6);
    let l = analyse(&m, &pools(), &Options::default()).unwrap();
    let plan = crate::plan(&l.problem, &crate::GreedyBySize).unwrap();
    let image = l.constant_image(&m, &plan, 1);
    for t in [4, 6] {
        let a = l.tensor_allocation(&plan, t).unwrap();
        let Role::Constant(data) = &m.tensors[t].role else {
            unreachable!()
        };
        let at = a.offset as usize;
        assert_eq!(&image[at..at + data.len()], data.as_slice());
    }
}

#[test]
fn duplicate_tensor_names_get_distinct_buffer_names() {
    let mut m = chain();
    m.tensors[2].name = "a".into();
    let names = buffer_names(&m);
    assert!(
        names.contains(&"a".to_string()) && names.contains(&"a#2".to_string()),
        "{names:?}"
    );
}

/// The problem's buffer names, in order, for model `m` on the test pools.
fn buffer_names(m: &Model) -> Vec<String> {
    let l = analyse(m, &pools(), &Options::default()).unwrap();
    l.problem.buffers().iter().map(|b| b.name.clone()).collect()
}

/// 30,000 tensors of one name (a `.tflite` may have them) get `#2`, `#3`, ... in one pass
/// each, skipping a suffix another tensor already has as its own name.
#[test]
fn many_tensors_of_one_name_are_numbered_in_order() {
    let n = 30_000;
    let mut tensors: Vec<Tensor> = (0..n).map(|_| Tensor::activation("t", 16)).collect();
    tensors[1].name = "t#3".into();
    let mut call = Call::new("CONCAT", "cpu");
    call.reads = (0..n).collect();
    let mut out = Call::new("SUM", "cpu");
    out.reads = (0..n).collect();
    out.writes = vec![n];
    tensors.push(Tensor::activation("out", 16));
    let m = Model {
        name: "many".into(),
        tensors,
        calls: vec![call, out],
        inputs: (0..n).collect(),
        outputs: vec![n],
    };
    let names = buffer_names(&m);
    assert_eq!(names.len(), n + 1);
    assert_eq!(&names[..4], ["t", "t#3", "t#2", "t#4"]);
    assert_eq!(names[n - 1], format!("t#{n}"));
    let distinct: std::collections::BTreeSet<&String> = names.iter().collect();
    assert_eq!(distinct.len(), names.len());
}

/// Traffic per inference: a tensor's planned size times the reads and writes naming it,
/// twice the size for scratch (written and read within its call), or what the model
/// states for a tensor.
#[test]
fn traffic_counts_the_reads_and_writes_of_each_buffer() {
    let mut m = chain();
    m.tensors[2].traffic = Some(5000);
    let l = analyse(&m, &pools(), &Options::default()).unwrap();
    let traffic = |name: &str| {
        let b = l.problem.buffers().iter().find(|b| b.name == name).unwrap();
        (b.size, b.traffic)
    };
    // `a`: written by CONV_2D, read by RELU; `h`: read and written by FC; `w`: read once.
    assert_eq!(traffic("a"), (208, 416));
    assert_eq!(traffic("h"), (16, 32));
    assert_eq!(traffic("w"), (48, 48));
    assert_eq!(traffic("b"), (304, 5000));
    let scratch = l
        .problem
        .buffers()
        .iter()
        .find(|b| b.name.starts_with("im2col"));
    assert_eq!(scratch.map(|b| b.traffic), Some(2 * 48));
}

/// A window down to where the tensors stop meeting (b's 300 bytes: -299) goes on down to
/// where their buffers stop meeting (304 bytes after rounding: -303), so the pair keeps
/// the kernels' shape; a window that stops short of it is left as it is.
#[test]
fn a_window_to_where_tensors_part_reaches_where_buffers_part() {
    use crate::model::Overlap as TensorOverlap;
    for (declared, planned) in [
        ([-299, 0], [-303, 0]),
        ([-400, -8], [-400, -8]),
        ([-298, 0], [-298, 0]),
    ] {
        let mut m = chain();
        m.calls[1].overlaps.push(TensorOverlap {
            output: 2,
            input: 1,
            shifts: declared,
        });
        let l = analyse(&m, &pools(), &Options::default()).unwrap();
        let (a, b) = (l.tensor_buffers[1].unwrap(), l.tensor_buffers[2].unwrap());
        assert_eq!(l.problem.buffers()[b].size, 304);
        let o = l.problem.overlap_between(a, b).unwrap();
        assert_eq!(o.shifts, planned, "{declared:?}");
    }
}

/// RELU may write b over a (its last reader): the problem gets the pair between their
/// buffers, and a plan shares a's bytes with b, below the bound with the two apart.
#[test]
fn a_call_s_overlaps_become_the_problem_s() {
    use crate::model::Overlap as TensorOverlap;
    let mut m = chain();
    m.calls[1].overlaps.push(TensorOverlap {
        output: 2,
        input: 1,
        shifts: [-100, 0],
    });
    let l = analyse(&m, &pools(), &Options::default()).unwrap();
    let (a, b) = (l.tensor_buffers[1].unwrap(), l.tensor_buffers[2].unwrap());
    let o = l.problem.overlap_between(a, b).unwrap();
    assert_eq!((o.output, o.input, o.shifts), (b, a, [-100, 0]));
    let apart = analyse(&chain(), &pools(), &Options::default()).unwrap();
    let over = crate::plan(&l.problem, &crate::FirstFit).unwrap();
    let apart = crate::plan(&apart.problem, &crate::FirstFit).unwrap();
    assert!(
        over.total() < apart.total(),
        "{} {}",
        over.total(),
        apart.total()
    );
}

/// Each way an overlap cannot hold is refused at the call's overlap, saying why.
#[test]
fn an_overlap_that_cannot_hold_says_why() {
    use crate::model::Overlap as TensorOverlap;
    for (call, output, input, shifts, why) in [
        (1, 2, 1, [1, 0], "least above the greatest"),
        (1, 3, 1, [0, 0], "does not write \"out\""),
        (0, 1, 2, [0, 0], "does not read \"b\""),
        (0, 1, 4, [0, 0], "only activations"),
        (2, 3, 5, [0, 0], "only activations"),
    ] {
        let mut m = chain();
        m.calls[call].overlaps.push(TensorOverlap {
            output,
            input,
            shifts,
        });
        let e = analyse(&m, &pools(), &Options::default()).unwrap_err();
        assert_eq!(
            e.locus,
            ModelLocus::Call(call, CallField::Overlap(0)),
            "{e}"
        );
        assert!(e.to_string().contains(why), "{why}: {e}");
    }
    // b written in place of a is not a new buffer to write over a.
    let mut m = chain();
    m.calls[1].in_place.push(InPlace {
        output: 2,
        input: 1,
    });
    m.calls[1].overlaps.push(TensorOverlap {
        output: 2,
        input: 1,
        shifts: [0, 0],
    });
    let e = analyse(&m, &pools(), &Options::default()).unwrap_err();
    assert!(e.to_string().contains("in a buffer that is not new"), "{e}");
    // a is read again after RELU: the overlap would destroy it.
    let mut m = chain();
    m.calls[2].reads.push(1);
    m.calls[1].overlaps.push(TensorOverlap {
        output: 2,
        input: 1,
        shifts: [0, 0],
    });
    let e = analyse(&m, &pools(), &Options::default()).unwrap_err();
    assert!(
        e.to_string().contains("still needed after this call"),
        "{e}"
    );
}
