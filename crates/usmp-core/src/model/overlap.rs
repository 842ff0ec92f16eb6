//! A call's outputs written over the inputs it reads for the last time, each within a
//! window of shifts that the kernel running the call allows (see
//! [`problem::Overlap`](crate::problem::Overlap), which planning turns each into).

use super::{CallField, Model, ModelError, ModelErrorKind, ModelLocus};

/// An output of a call that may share bytes with an input the call reads for the last
/// time, when the output's offset minus the input's lies in `shifts` (both ends
/// included). Only a kernel that reads each input byte before it writes an output byte
/// over it can allow this, so only the kernels' own description of the call declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overlap {
    /// The tensor written (index into [`Model::tensors`]).
    pub output: usize,
    /// The tensor read for the last time.
    pub input: usize,
    /// The least and the greatest output offset minus input offset, in bytes.
    pub shifts: [i64; 2],
}

/// Every declared overlap that cannot hold: each names the pair and says why.
pub(super) fn problems(model: &Model) -> Vec<ModelError> {
    let last = model.last_readers();
    // An output written in place lives in a buffer that began before its call; an input
    // reused in place, in one that goes on after: neither starts or ends at the overlap.
    let (mut joins, mut reused) = (
        vec![false; model.tensors.len()],
        vec![false; model.tensors.len()],
    );
    for ip in model.calls.iter().flat_map(|c| &c.in_place) {
        if let (Some(j), Some(r)) = (joins.get_mut(ip.output), reused.get_mut(ip.input)) {
            (*j, *r) = (true, true);
        }
    }
    let mut found = Vec::new();
    for (i, call) in model.calls.iter().enumerate() {
        for (k, o) in call.overlaps.iter().enumerate() {
            let locus = ModelLocus::Call(i, CallField::Overlap(k));
            let why = match model.sharing_problem(i, &last, o.output, o.input) {
                Err(kind) => {
                    found.push(ModelError { locus, kind });
                    continue;
                }
                Ok(why) => why,
            };
            let (out, inp) = (&model.tensors[o.output], &model.tensors[o.input]);
            let taken = |t: usize| {
                call.overlaps[..k]
                    .iter()
                    .any(|p| p.output == t || p.input == t)
            };
            let why = if why.is_some() {
                why
            } else if o.shifts[0] > o.shifts[1] {
                Some(format!(
                    "its shifts [{}, {}] have the least above the greatest; write [least, greatest]",
                    o.shifts[0], o.shifts[1]
                ))
            } else if joins[o.output] {
                Some(format!(
                    "\"{}\" is written in place of another tensor, in a buffer that is not new",
                    out.name
                ))
            } else if reused[o.input] {
                Some(format!(
                    "\"{}\" is reused in place by another tensor: its buffer lives on",
                    inp.name
                ))
            } else if taken(o.output) || taken(o.input) {
                Some("a tensor may share bytes with one other in a call".into())
            } else {
                None
            };
            if let Some(reason) = why {
                found.push(ModelError {
                    locus,
                    kind: ModelErrorKind::BadOverlap {
                        output: out.name.clone(),
                        input: inp.name.clone(),
                        reason,
                    },
                });
            }
        }
    }
    found
}
