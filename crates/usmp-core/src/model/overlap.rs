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

impl Model {
    /// Drops every declared [`Overlap`] the model refuses, keeping the others, and returns
    /// how many were dropped. An overlap is a permission a kernel gives, so dropping one
    /// is always safe: its pair is then placed apart. Used where overlaps are declared
    /// before it is known which the model allows (every window a kernel certifies, or
    /// calls put in another order).
    pub fn drop_refused_overlaps(&mut self) -> usize {
        drop_refused(self)
    }

    /// Why overlap `k` of call `call` can hold in no order of the calls (the checks of
    /// [`check`](Self::check) but the one an order decides: that the call reads the input
    /// last), or `None` when some order may allow it.
    pub fn overlap_refused_in_every_order(&self, call: usize, k: usize) -> Option<ModelError> {
        refusal_in_every_order(self, call, k)
    }
}

/// Every declared overlap that cannot hold: each names the pair and says why.
pub(super) fn problems(model: &Model) -> Vec<ModelError> {
    let last = model.last_readers();
    let in_place = InPlaceUse::of(model);
    let mut found = Vec::new();
    for (i, call) in model.calls.iter().enumerate() {
        for k in 0..call.overlaps.len() {
            found.extend(refusal(model, &in_place, &last, i, k));
        }
    }
    found
}

/// Why overlap `k` of call `i` cannot hold even were call `i` the last reader of its
/// input: everything [`problems`] asks but the one thing an operator order decides.
fn refusal_in_every_order(model: &Model, i: usize, k: usize) -> Option<ModelError> {
    let o = model.calls.get(i)?.overlaps.get(k)?;
    let mut last = model.last_readers();
    if let Some(l) = last.get_mut(o.input) {
        *l = Some(i);
    }
    refusal(model, &InPlaceUse::of(model), &last, i, k)
}

/// Drops every declared overlap the model refuses (a permission no longer given, for
/// instance once its call is not the input's last reader), keeping the others; returns
/// how many were dropped.
fn drop_refused(model: &mut Model) -> usize {
    let mut dropped = 0;
    loop {
        // One pair's refusal can rest on an earlier pair of its call (one pair per
        // tensor), so drop until none is refused.
        let refused: Vec<(usize, usize)> = problems(model)
            .iter()
            .filter_map(|e| match e.locus {
                ModelLocus::Call(i, CallField::Overlap(k)) => Some((i, k)),
                _ => None,
            })
            .collect();
        if refused.is_empty() {
            return dropped;
        }
        for &(i, k) in refused.iter().rev() {
            model.calls[i].overlaps.remove(k);
            dropped += 1;
        }
    }
}

/// The tensors in-place uses tie up. An output written in place lives in a buffer that
/// began before its call; an input reused in place, in one that goes on after: neither
/// starts or ends at the overlap.
struct InPlaceUse {
    joins: Vec<bool>,
    reused: Vec<bool>,
}

impl InPlaceUse {
    fn of(model: &Model) -> InPlaceUse {
        let n = model.tensors.len();
        let (mut joins, mut reused) = (vec![false; n], vec![false; n]);
        for ip in model.calls.iter().flat_map(|c| &c.in_place) {
            if let (Some(j), Some(r)) = (joins.get_mut(ip.output), reused.get_mut(ip.input)) {
                (*j, *r) = (true, true);
            }
        }
        InPlaceUse { joins, reused }
    }
}

/// Why overlap `k` of call `i` cannot hold, given each tensor's `last` reader.
fn refusal(
    model: &Model,
    in_place: &InPlaceUse,
    last: &[Option<usize>],
    i: usize,
    k: usize,
) -> Option<ModelError> {
    let call = &model.calls[i];
    let o = &call.overlaps[k];
    let locus = ModelLocus::Call(i, CallField::Overlap(k));
    let why = match model.sharing_problem(i, last, o.output, o.input) {
        Err(kind) => return Some(ModelError { locus, kind }),
        Ok(why) => why,
    };
    let (out, inp) = (&model.tensors[o.output], &model.tensors[o.input]);
    let taken = |t: usize| {
        call.overlaps[..k]
            .iter()
            .any(|p| p.output == t || p.input == t)
    };
    let reason = if why.is_some() {
        why
    } else if o.shifts[0] > o.shifts[1] {
        Some(format!(
            "its shifts [{}, {}] have the least above the greatest; write [least, greatest]",
            o.shifts[0], o.shifts[1]
        ))
    } else if in_place.joins[o.output] {
        Some(format!(
            "\"{}\" is written in place of another tensor, in a buffer that is not new",
            out.name
        ))
    } else if in_place.reused[o.input] {
        Some(format!(
            "\"{}\" is reused in place by another tensor: its buffer lives on",
            inp.name
        ))
    } else if call.reads.iter().filter(|&&t| t == o.input).count() > 1 {
        // The region both share is handed out once, for the one read that shares it.
        Some(format!(
            "the call reads \"{}\" twice, and only an input read once may share bytes with the output",
            inp.name
        ))
    } else if taken(o.output) || taken(o.input) {
        Some("a tensor may share bytes with one other in a call".into())
    } else {
        None
    }?;
    Some(ModelError {
        locus,
        kind: ModelErrorKind::BadOverlap {
            output: out.name.clone(),
            input: inp.name.clone(),
            reason,
        },
    })
}
