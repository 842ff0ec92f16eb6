//! A constant pool whose bytes come out of a workspace pool's `size` (`shares`): weights
//! copied into a TCM compete with the activations planned there, and planning chooses
//! how much of the memory each gets.
//!
//! The planner itself keeps each pool under a limit of its own, so the split is searched
//! here, over whole plans, each verified as every plan is: first the workspace alone
//! (the weights get none of the memory), which says what the activations use; then the
//! weights get what that leaves. Under `assignment = "fastest"` the activations are also
//! offered less (seven eighths, three quarters, ... none of what they used) and the
//! weights the rest, and the split of the lowest estimated memory time per inference
//! wins (on a tie the one giving the activations more). Other assignments keep
//! "workspace first": weights fill what the activations leave.

use std::path::PathBuf;

use usmp_core::Assignment;
use usmp_core::traffic::{memory_time, traffic};

use crate::choice::OwnAlgorithms;
use crate::planned::{Planned, Split, Tried};
use crate::planning;
use crate::spec::{At, Diagnostic, Spec};

/// A spec planned, or why not.
type Plans<S> = Result<Planned, Vec<Diagnostic<S>>>;

/// How many parts of what the activations used the search steps through.
const STEPS: u64 = 8;

/// Plans every model of a validated spec, choosing the split of each shared size. Where
/// a model's assignment is `fastest`, the plan of the same spec by the preference order
/// comes with it, for the report to show beside it.
pub fn plan_spec<S: Clone>(
    spec: &Spec<S>,
    own: &OwnAlgorithms,
    kernels_path: &str,
    read: &mut Vec<PathBuf>,
) -> Result<Planned, Vec<Diagnostic<S>>> {
    let mut planned = split(spec, own, kernels_path, read)?;
    if fastest(spec) {
        let mut preference = spec.clone();
        for m in &mut preference.models {
            m.assignment.value = Assignment::Preference;
        }
        // Where the preference order finds no plan, the report has nothing beside it.
        let beside = split(&preference, own, kernels_path, &mut Vec::new()).ok();
        planned.preference = beside.map(Box::new);
    }
    Ok(planned)
}

/// [`plan_spec`] without the preference order's plan beside it.
fn split<S: Clone>(
    spec: &Spec<S>,
    own: &OwnAlgorithms,
    kernels_path: &str,
    read: &mut Vec<PathBuf>,
) -> Result<Planned, Vec<Diagnostic<S>>> {
    let pairs: Vec<(usize, usize, u64)> = spec
        .pools
        .iter()
        .enumerate()
        .filter_map(|(c, p)| {
            let w = spec
                .pools
                .iter()
                .position(|w| Some(&w.name.value) == p.shares.as_ref().map(|s| &s.value))?;
            Some((c, w, spec.pools[w].size.as_ref()?.value))
        })
        .collect();
    // Files are recorded by the first plan; the others read the same ones.
    let mut again = Vec::new();
    let mut first = Some(read);
    let mut plan = |spec: &Spec<S>| {
        let read = first.take().unwrap_or(&mut again);
        planning::plan_spec(spec, own, kernels_path, read)
    };
    let mut spec = spec.clone();
    let mut splits = Vec::new();
    let mut last = None;
    for (c, w, limit) in pairs {
        let (split, planned) = search(&spec, (c, w, limit), &mut plan)?;
        let Tried {
            workspace,
            constant,
            ..
        } = split.tried[split.chosen];
        spec = with_limits(&spec, (w, workspace), (c, constant));
        splits.push(split);
        last = Some(planned);
    }
    match last {
        Some(planned) => Ok(Planned { splits, ..planned }),
        None => plan(&spec),
    }
}

/// The split of workspace pool `w`'s `limit` with constant pool `c`, planned by `plan`:
/// every split tried, and the plan of the one kept.
fn search<S: Clone>(
    spec: &Spec<S>,
    (c, w, limit): (usize, usize, u64),
    plan: &mut dyn FnMut(&Spec<S>) -> Plans<S>,
) -> Result<(Split, Planned), Vec<Diagnostic<S>>> {
    let fastest = fastest(spec);
    let own_limit = spec.pools[c].size.as_ref().map(|s| s.value);
    // What the activations use with the whole size; all of it where the weights cannot
    // do without the pool.
    let used = plan(&with_limits(spec, (w, limit), (c, 0))).map_or(limit, |p| p.pools[w].size);
    let step = spec.pools[w].alignment.value.max(1);
    let mut tried = Vec::new();
    let mut best: Option<(usize, (u64, u64), Planned)> = None;
    let mut failed = None;
    for k in (0..=STEPS).rev() {
        if best.is_some() && !fastest {
            break;
        }
        let workspace = (used * k / STEPS) / step * step;
        let constant = own_limit.map_or(limit - workspace, |o| o.min(limit - workspace));
        let planned = match plan(&with_limits(spec, (w, workspace), (c, constant))) {
            Ok(planned) => planned,
            Err(e) => {
                tried.push(Tried {
                    workspace,
                    constant,
                    outcome: None,
                });
                failed = Some(e);
                continue;
            }
        };
        let score = (time(&planned), total(&planned));
        tried.push(Tried {
            workspace,
            constant,
            outcome: Some((planned.pools[w].size, planned.pools[c].size, score.0)),
        });
        if best.as_ref().is_none_or(|(_, b, _)| score < *b) {
            best = Some((tried.len() - 1, score, planned));
        }
    }
    let Some((chosen, _, planned)) = best else {
        // Every split failed: say so at `shares`, with why the last did (the weights
        // given all of the size).
        let why = failed
            .as_ref()
            .and_then(|f| f.first())
            .map_or(String::new(), |d| format!(": {}", d.message));
        let at = spec.pools[c]
            .shares
            .as_ref()
            .map_or(spec.pools[c].name.span.clone(), |s| s.span.clone());
        let (cn, wn) = (&spec.pools[c].name.value, &spec.pools[w].name.value);
        let message = format!(
            "pools `{wn}` and `{cn}` found no plan within the {limit} bytes of `{wn}` together (every split tried failed; the one giving `{cn}` all of it{why})"
        );
        return Err(vec![Diagnostic::new(at, message).help(format!(
            "give pool `{wn}` a larger `size`, or remove `shares` and give `{cn}` a size of its own"
        ))]);
    };
    let split = Split {
        constant: c,
        workspace: w,
        limit,
        tried,
        chosen,
    };
    Ok((split, planned))
}

/// Whether some model's assignment is `fastest`.
fn fastest<S>(spec: &Spec<S>) -> bool {
    spec.models
        .iter()
        .any(|m| m.assignment.value == Assignment::Fastest)
}

/// `spec` with pools `w` and `c` limited to the bytes given.
fn with_limits<S: Clone>(spec: &Spec<S>, w: (usize, u64), c: (usize, u64)) -> Spec<S> {
    let mut spec = spec.clone();
    for (p, bytes) in [w, c] {
        let at = spec.pools[p].name.span.clone();
        spec.pools[p].size = Some(At::new(bytes, at));
    }
    spec
}

/// The estimated memory time of one inference of every model, in nanoseconds.
fn time(planned: &Planned) -> u64 {
    planned
        .models
        .iter()
        .map(|m| memory_time(&traffic(&m.liveness.problem, &m.plan.allocations)))
        .fold(0, u64::saturating_add)
}

/// The bytes of every pool.
fn total(planned: &Planned) -> u64 {
    planned.pools.iter().map(|p| p.size).sum()
}
