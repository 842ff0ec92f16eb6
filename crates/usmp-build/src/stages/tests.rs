//! `auto`'s cut is the best of every cut; person_detect's stages, fused, are a model that
//! checks; listed stages are checked.

use std::path::Path;

use usmp_core::Pool;
use usmp_core::input::read_model;
use usmp_core::liveness::{self, Liveness, Options};
use usmp_core::model::{Call, Model, Tensor};

use super::choose::{Live, chains};
use super::{Links, choose, fuse};
use crate::kernels::Prepared;
use crate::operands;
use crate::planned::Stage;

/// A chain of `sizes.len() - 1` calls, tensor `i` of `sizes[i]` bytes (rows of
/// `sizes[i] / 64` bytes), each call's window `windows[i]` rows, with one more tensor read
/// by the last call and written by the first (a skip over the whole chain) when `skip`.
fn chain_model(sizes: &[u64], windows: &[usize], skip: bool) -> (Model, Links) {
    let mut model = Model::default();
    for (i, &s) in sizes.iter().enumerate() {
        model.tensors.push(Tensor::activation(format!("t{i}"), s));
    }
    let n = sizes.len() - 1;
    for i in 0..n {
        let mut call = Call::new("CONV_2D", "cpu");
        call.reads.push(i);
        call.writes.push(i + 1);
        model.calls.push(call);
    }
    if skip {
        model.tensors.push(Tensor::activation("skip", 100));
        model.calls[0].writes.push(sizes.len());
        model.calls[n - 1].reads.push(sizes.len());
    }
    model.inputs.push(0);
    model.outputs.push(n);
    let links = Links {
        next: vec![true; n - 1],
        shapes: sizes[1..]
            .iter()
            .map(|&s| Some([1, (s / 64) as usize, 8, 8]))
            .collect(),
        steps: windows
            .iter()
            .zip(&sizes[1..])
            .map(|(&reach, &s)| {
                Some(usmp_kernels::stage::Step {
                    stride: 1,
                    pad: reach / 2,
                    reach,
                    rows: (s / 64) as usize,
                })
            })
            .collect(),
    };
    (model, links)
}

/// `model`'s liveness in a workspace and a constant pool, as the build lowers it.
fn lower(model: &Model) -> Liveness {
    let pools = [Pool::workspace("sram"), Pool::constant("flash")];
    liveness::analyse(model, &pools, &Options::default()).unwrap()
}

/// Every cut of calls `0..n` into segments, as bit sets of where a segment ends.
fn cuts(n: usize) -> impl Iterator<Item = Vec<(usize, usize)>> {
    (0u32..1 << (n - 1)).map(move |ends| {
        let mut out = Vec::new();
        let mut a = 0;
        for b in 0..n {
            if b == n - 1 || ends >> b & 1 == 1 {
                out.push((a, b));
                a = b + 1;
            }
        }
        out
    })
}

#[test]
fn auto_cuts_as_the_best_of_every_cut() {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut draw = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for case in 0..300 {
        let n = 2 + draw(9) as usize;
        let sizes: Vec<u64> = (0..=n).map(|_| 64 * (1 + draw(40))).collect();
        let windows: Vec<usize> = (0..n).map(|_| 1 + draw(3) as usize).collect();
        let (model, links) = chain_model(&sizes, &windows, case % 3 == 0);
        let lowered = lower(&model);
        let live = Live::of(&model, &lowered);
        let cost = |a, b| live.cost(&links, a, b);
        let peak = |cut: &[(usize, usize)]| cut.iter().map(|&(a, b)| cost(a, b)).max().unwrap();
        let fused = |cut: &[(usize, usize)]| -> usize {
            cut.iter()
                .filter(|(a, b)| a < b)
                .map(|(a, b)| b - a + 1)
                .sum()
        };
        let all: Vec<_> = cuts(n)
            .filter(|c| c.iter().all(|&(a, b)| b - a < 16))
            .collect();
        let lowest = all.iter().map(|c| peak(c)).min().unwrap();
        let fewest = all
            .iter()
            .filter(|c| peak(c) <= lowest)
            .map(|c| fused(c))
            .min()
            .unwrap();

        let chosen = choose(&model, &lowered, &links);
        let mut cut: Vec<(usize, usize)> = chosen.iter().map(|s| (s.first, s.last)).collect();
        for i in 0..n {
            if !cut.iter().any(|&(a, b)| a <= i && i <= b) {
                cut.push((i, i));
            }
        }
        cut.sort_unstable();
        assert_eq!(
            peak(&cut),
            lowest,
            "case {case}: {sizes:?} {windows:?} {cut:?}"
        );
        assert_eq!(
            fused(&cut),
            fewest,
            "case {case}: {sizes:?} {windows:?} {cut:?}"
        );
        assert_eq!(chains(&links, n), vec![0..=n - 1]);
    }
}

/// person_detect as usmp-build reads it, its kernels prepared.
fn person_detect() -> (Model, operands::Operands, Vec<Prepared>) {
    person_detect_for(usmp_kernels::work::Path::Portable)
}

/// person_detect's kernels prepared for `target`'s path.
fn person_detect_for(
    target: usmp_kernels::work::Path,
) -> (Model, operands::Operands, Vec<Prepared>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/tflite/models/person_detect.tflite");
    let mut file = read_model(&path).unwrap();
    let graph = file.take_graph();
    let ops = operands::of(&file.model, graph);
    let prepared = crate::kernels::prepare(&file.model, &ops, "k", target).unwrap();
    (file.model, ops, prepared)
}

/// Each call's kernel work is what its paths keep on the target's path, planned as its
/// last scratch buffer, and a stage's after its line buffers, aligned.
#[test]
fn kernel_work_is_planned_for_the_targets_path() {
    use usmp_kernels::work::Path;
    // Calls 0 to 2: the 3x3 depthwise of multiplier 8, one of multiplier 1, a 1x1
    // convolution.
    let work = |target| {
        let (_, _, prepared) = person_detect_for(target);
        [0, 1, 2].map(|i| prepared[i].work)
    };
    // Each cut to the call: the four-channel blocks' taps, sums and bytes for 9 taps of 8
    // channels (72 + 32 + 8); the 1x1's pixel pair (8 channels in, 16 out) copied in and
    // out, its lanes and sums (16 + 32 + 32 + 128); with the DSP extension also the
    // multiplier path's rows for its assembly (16 of 8 bytes).
    assert_eq!(work(Path::Portable), [0, 112, 208]);
    assert_eq!(work(Path::Dsp), [128, 112, 208]);
    // Helium's chunks for 9 taps (two lists of taps, the filter repeated, the channel
    // lists repeated, a run's bytes: 2 x 128 + 256 + 192 + 256), the most of the paths
    // a depthwise call may take there, and its 1x1 product (1,024 + 1,024 + 1,024 + 64).
    assert_eq!(work(Path::Helium), [960, 960, 3136]);
    let (model, ops, prepared) = person_detect_for(Path::Helium);
    let working = crate::kernels::with_work(&model, &prepared);
    let work = &working.calls[2].scratch;
    assert_eq!(work.len(), 1);
    assert_eq!(work[0].name, "kernel work");
    assert_eq!(
        (work[0].size.bytes(), work[0].alignment),
        (Some(3136), Some(8))
    );
    let links = Links::of(&model, &ops, &prepared);
    let stages = choose(&model, &lower(&model), &links);
    let (fused, _, _) = fuse(&model, &ops, &prepared, &stages, &links, "k");
    fused.check().unwrap();
    // 3,840 bytes of line buffers (a multiple of 8), then the most any part keeps.
    let stage = &fused.calls[0].scratch[0];
    assert_eq!(stage.name, "line buffers and kernel work");
    assert_eq!(stage.size.bytes(), Some(3840 + 3136));
    assert_eq!(stage.alignment, Some(8));
    // The calls after the stages keep their own.
    assert_eq!(fused.calls[2].scratch[0].name, "kernel work");
}

#[test]
fn person_detects_stages_fuse_into_a_model_that_checks() {
    let (model, ops, prepared) = person_detect();
    let links = Links::of(&model, &ops, &prepared);
    // Calls 0-28 are convolutions and one average pooling, each reading the one
    // before; RESHAPE (29) and SOFTMAX (30) cannot stream.
    assert_eq!(chains(&links, model.calls.len()), vec![0..=28]);
    let stages = choose(&model, &lower(&model), &links);
    let spans: Vec<(usize, usize)> = stages.iter().map(|s| (s.first, s.last)).collect();
    assert_eq!(spans, [(0, 3), (4, 7)]);
    // 3 rows of 48 x 8 before the 3x3 depthwise, 1 row of 48 x 8 before the 1x1 conv.
    assert_eq!(stages[0].line_buffers, [(3, 1152), (1, 384), (3, 2304)]);
    let (fused, fused_ops, kernels) = fuse(&model, &ops, &prepared, &stages, &links, "k");
    fused.check().unwrap();
    assert_eq!(fused.calls.len(), 31 - 6);
    assert_eq!((fused_ops.reads.len(), kernels.len()), (25, 25));
    let stage = &fused.calls[0];
    assert_eq!(stage.op, "USMP_STAGE");
    // The input, then each part's filter and bias.
    assert_eq!(stage.reads.len(), 1 + 2 * 4);
    assert_eq!(stage.reads[0], model.calls[0].reads[0]);
    assert_eq!(stage.writes, model.calls[3].writes);
    // 3,840 bytes of line buffers, then the 1x1 part's kernel work: a pixel pair's lanes
    // and sums (a part runs apart, copying no pair).
    assert_eq!(stage.scratch[0].size.bytes(), Some(3840 + 32 + 128));
    assert!(kernels[0].starts_with(
        "k::Kernel::Stage(&k::Stage { parts: &[k::Part { kernel: k::Kernel::DepthwiseConv2d("
    ));
    assert!(kernels[0].contains("weights: 1, rows: 3 }"));
    assert_eq!(
        kernels[2..],
        prepared[8..]
            .iter()
            .map(|p| p.rust.clone())
            .collect::<Vec<_>>()[..]
    );
}

#[test]
fn a_chain_with_an_output_read_twice_is_cut_there() {
    let (mut model, ops, prepared) = person_detect();
    // Call 5 also reads call 3's output: call 3's output may not be a line buffer.
    let t = model.calls[3].writes[0];
    model.calls[5].reads.push(t);
    let links = Links::of(&model, &ops, &prepared);
    assert!(!links.next[3] && links.next[2] && links.next[4]);
    let stage: Stage = links.stage(0, 3);
    assert_eq!(stage.scratch(), 1152 + 384 + 2304);
}
