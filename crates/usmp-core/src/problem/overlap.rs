//! Outputs written over the inputs they consume: a call's output may share bytes with an
//! input the call reads for the last time, when the kernel that runs it reads every input
//! byte before it writes an output byte over it. Only the kernel can promise that, so a
//! problem declares each such pair with the window of placements the kernel allows, and
//! everything else (the verifier, the bounds, the algorithms) takes exactly that window.

use super::error::{Field, Locus, ProblemError, ProblemErrorKind as Kind};
use super::{Buffer, Conflicts, Live, PoolKind};

/// An output that may share bytes with one of its call's inputs: legal when both are in
/// one pool and `output offset - input offset` lies in `shifts` (both ends included).
/// Like any conflicting pair, the two may also be disjoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Overlap {
    /// The buffer written (the call's output).
    pub output: usize,
    /// The buffer read for the last time (the call's input).
    pub input: usize,
    /// The least and the greatest shift, output offset minus input offset, in bytes.
    pub shifts: [i64; 2],
}

impl Overlap {
    /// Whether an output at `output` and an input at `input` (offsets in one pool) are
    /// placed within the window.
    pub fn allows(&self, output: u64, input: u64) -> bool {
        let shift = i128::from(output) - i128::from(input);
        i128::from(self.shifts[0]) <= shift && shift <= i128::from(self.shifts[1])
    }

    /// The most bytes an output of `output` bytes and an input of `input` bytes can share
    /// at a shift within the window: the bytes the overlap can save.
    pub fn most_shared(&self, output: u64, input: u64) -> u64 {
        let (o, i) = (i128::from(output), i128::from(input));
        let (lo, hi) = (i128::from(self.shifts[0]), i128::from(self.shifts[1]));
        // Shared bytes at shift d: [d, d + o) against [0, i). Concave and piecewise
        // linear in d, so its maximum over [lo, hi] is at an end or at a corner (0, i - o).
        let shared = |d: i128| ((d + o).min(i) - d.max(0)).max(0);
        [lo, hi, 0, i - o]
            .into_iter()
            .map(|d| shared(d.clamp(lo, hi)))
            .max()
            .map_or(0, |s| s as u64)
    }

    /// The steps both buffers are live at, when they have live ranges.
    pub fn shared_steps(&self, buffers: &[Buffer]) -> Option<Live> {
        let (o, i) = (buffers[self.output].live?, buffers[self.input].live?);
        let live = Live {
            start: o.start.max(i.start),
            end: o.end.min(i.end),
        };
        (live.start < live.end).then_some(live)
    }
}

/// Checks the declared overlaps (each with its position among its output's) against the
/// buffers and conflicts, and returns them sorted by their pair of buffers.
pub(super) fn checked(
    declared: Vec<(Overlap, usize)>,
    buffers: &[Buffer],
    conflicts: &Conflicts,
    conflict: impl Fn(usize, usize) -> bool,
) -> Result<Vec<Overlap>, Vec<ProblemError>> {
    let mut errors = Vec::new();
    let mut pairs = Vec::with_capacity(declared.len());
    for (o, k) in &declared {
        let locus = Locus::Buffer(
            o.output.min(buffers.len().saturating_sub(1)),
            Field::Overlap(*k),
        );
        if let Err(kind) = check_one(o, buffers, &conflict) {
            errors.push(ProblemError { locus, kind });
        } else {
            pairs.push((pair(o), *o, locus));
        }
    }
    pairs.sort_unstable_by_key(|(p, _, _)| *p);
    for w in pairs.windows(2) {
        if w[0].0 == w[1].0 {
            let names = |o: &Overlap| {
                (
                    buffers[o.output].name.clone(),
                    buffers[o.input].name.clone(),
                )
            };
            let (output, input) = names(&w[1].1);
            errors.push(ProblemError {
                locus: w[1].2,
                kind: Kind::DuplicateOverlap { output, input },
            });
        }
    }
    if errors.is_empty() && matches!(conflicts, Conflicts::Intervals) {
        errors.extend(at_once(&pairs, buffers));
    }
    if errors.is_empty() {
        Ok(pairs.into_iter().map(|(_, o, _)| o).collect())
    } else {
        Err(errors)
    }
}

/// The unordered pair of an overlap's buffers.
fn pair(o: &Overlap) -> (usize, usize) {
    (o.output.min(o.input), o.output.max(o.input))
}

fn check_one(
    o: &Overlap,
    buffers: &[Buffer],
    conflict: &impl Fn(usize, usize) -> bool,
) -> Result<(), Kind> {
    if let Some(bad) = [o.output, o.input]
        .into_iter()
        .find(|&b| b >= buffers.len())
    {
        return Err(Kind::UnknownBuffer(bad));
    }
    let (output, input) = (&buffers[o.output].name, &buffers[o.input].name);
    if o.output == o.input {
        return Err(Kind::SelfOverlap(output.clone()));
    }
    let (output, input) = (output.clone(), input.clone());
    if o.shifts[0] > o.shifts[1] {
        return Err(Kind::EmptyWindow {
            output,
            input,
            shifts: o.shifts,
        });
    }
    if [o.output, o.input]
        .iter()
        .any(|&b| buffers[b].kind == PoolKind::Constant)
    {
        return Err(Kind::ConstantOverlap { output, input });
    }
    if !conflict(o.output, o.input) {
        return Err(Kind::OverlapWithoutConflict { output, input });
    }
    Ok(())
}

/// A buffer may share bytes with one other buffer at a time: the steps it shares with
/// each of its overlaps' partners must not meet (the verifier places each pair as one).
fn at_once(pairs: &[((usize, usize), Overlap, Locus)], buffers: &[Buffer]) -> Vec<ProblemError> {
    let mut by_buffer: Vec<(usize, Live, Locus)> = Vec::new();
    for (_, o, locus) in pairs {
        if let Some(steps) = o.shared_steps(buffers) {
            by_buffer.push((o.output, steps, *locus));
            by_buffer.push((o.input, steps, *locus));
        }
    }
    by_buffer.sort_unstable_by_key(|&(b, steps, _)| (b, steps.start, steps.end));
    by_buffer
        .windows(2)
        .filter(|w| w[0].0 == w[1].0 && w[1].1.start < w[0].1.end)
        .map(|w| ProblemError {
            locus: w[1].2,
            kind: Kind::OverlapsAtOnce {
                buffer: buffers[w[0].0].name.clone(),
                step: w[1].1.start,
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(lo: i64, hi: i64) -> Overlap {
        Overlap {
            output: 0,
            input: 1,
            shifts: [lo, hi],
        }
    }

    /// The most shared bytes, by trying every shift.
    fn brute(o: &Overlap, output: u64, input: u64) -> u64 {
        (o.shifts[0]..=o.shifts[1])
            .map(|d| {
                let (o, i, d) = (output as i64, input as i64, d);
                ((d + o).min(i) - d.max(0)).max(0) as u64
            })
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn most_shared_is_the_best_shift_in_the_window() {
        for lo in -12..12 {
            for hi in lo..12 {
                for output in 1..8 {
                    for input in 1..8 {
                        let o = window(lo, hi);
                        assert_eq!(
                            o.most_shared(output, input),
                            brute(&o, output, input),
                            "[{lo}, {hi}] output {output} input {input}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn allows_exactly_the_window() {
        let o = window(-16, 0);
        assert!(o.allows(0, 16) && o.allows(16, 16) && o.allows(0, 0));
        assert!(!o.allows(17, 16) && !o.allows(0, 17));
        // Every shift of 64 bits, but no more: offsets apart by more are outside any.
        let all = window(i64::MIN, i64::MAX);
        assert!(all.allows(i64::MAX as u64, 0) && all.allows(0, 1 << 63));
        assert!(!all.allows(u64::MAX, 0) && !all.allows(0, u64::MAX));
    }

    /// x over [0, 2), y over [1, 3), z over [5, 6); all workspace but the constant w.
    fn build(overlaps: &[(usize, usize, [i64; 2])]) -> Result<super::super::Problem, String> {
        use super::super::{Pool, Problem};
        let mut b = Problem::builder();
        let p = b.pool(Pool::workspace("p"));
        let c = b.pool(Pool::constant("c"));
        b.buffer(Buffer::new("x", 8).with_candidates([p]).with_live(0, 2));
        b.buffer(Buffer::new("y", 8).with_candidates([p]).with_live(1, 3));
        b.buffer(Buffer::new("z", 8).with_candidates([p]).with_live(5, 6));
        b.buffer(
            Buffer::new("w", 8)
                .constant()
                .with_candidates([c])
                .with_live(0, 9),
        );
        b.buffer(Buffer::new("v", 8).with_candidates([p]).with_live(1, 3));
        for &(output, input, shifts) in overlaps {
            b.overlap(Overlap {
                output,
                input,
                shifts,
            });
        }
        b.build().map_err(|e| e.to_string())
    }

    #[test]
    fn the_builder_refuses_what_no_kernel_could_mean() {
        let p = build(&[(1, 0, [-8, 0])]).unwrap();
        assert_eq!(p.overlap_between(0, 1), p.overlap_between(1, 0));
        assert_eq!(p.overlap_between(0, 1).map(|o| o.shifts), Some([-8, 0]));
        assert_eq!(p.overlap_between(0, 2), None);
        for (overlaps, words) in [
            (vec![(1, 1, [0, 0])], "with itself"),
            (vec![(1, 0, [1, 0])], "the least is above the greatest"),
            (vec![(2, 0, [0, 0])], "do not conflict"),
            (vec![(3, 0, [0, 0])], "constant data"),
            (vec![(1, 0, [0, 0]), (0, 1, [0, 0])], "given twice"),
            (
                vec![(1, 0, [0, 0]), (4, 0, [0, 0])],
                "two buffers at step 1",
            ),
            (vec![(9, 0, [0, 0])], "9"),
        ] {
            let e = build(&overlaps).unwrap_err();
            assert!(e.contains(words), "{overlaps:?}: {e}");
        }
    }
}
