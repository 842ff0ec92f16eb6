//! A model planned with the stages its spec asks for, beside the same model planned
//! without them: `auto` keeps its stages only where they lower the planned workspace.

use usmp_core::Plan;
use usmp_core::liveness::Liveness;
use usmp_core::model::Model;

use super::{Links, choose, fuse};
use crate::kernels::Prepared;
use crate::operands::Operands;
use crate::planned::{Stage, Streamed};
use crate::spec::Stages;

/// One way to run a model, planned.
pub struct Candidate {
    /// The model as it runs (stages fused).
    pub model: Model,
    /// Its operands.
    pub operands: Operands,
    /// Each call's kernel, with `kernels = true`.
    pub kernels: Option<Vec<String>>,
    /// Its liveness.
    pub liveness: Liveness,
    /// Its verified plan.
    pub plan: Plan,
}

/// How a model's candidates are planned and measured.
pub struct Planner<P, W, L> {
    /// Plans a model with its operands and kernels.
    pub plan: P,
    /// The workspace bytes of a candidate.
    pub workspace: W,
    /// A model's liveness as `plan` lowers it, for choosing stages where the model has no
    /// plan without them.
    pub liveness: L,
}

/// `model` planned with the stages `choice` names (`prepared`: each call's kernel, with
/// `kernels = true`), and what the report says of them; a listed stage that is no chain
/// is `refuse`d with the reason.
pub fn apply<D, P, W, L>(
    choice: &Stages,
    model: &Model,
    operands: Operands,
    prepared: Option<&[Prepared]>,
    path: &str,
    planner: &Planner<P, W, L>,
    refuse: impl Fn(String) -> D,
) -> Result<(Candidate, Option<Streamed>), D>
where
    P: Fn(Model, Operands, Option<Vec<String>>) -> Result<Candidate, D>,
    W: Fn(&Candidate) -> u64,
    L: Fn(Model, &Operands) -> Result<Liveness, D>,
{
    let kernels = prepared.map(|p| p.iter().map(|k| k.rust.clone()).collect());
    // The model as it runs without stages: each call's kernel work planned with it.
    let working = match prepared {
        Some(prepared) => crate::kernels::with_work(model, prepared),
        None => model.clone(),
    };
    let Some(prepared) = prepared.filter(|_| *choice != Stages::Off) else {
        return Ok(((planner.plan)(working, operands, kernels)?, None));
    };
    let links = Links::of(model, &operands, prepared);
    let listed = match choice {
        Stages::Listed(listed) => Some(listed_stages(model, &links, listed).map_err(&refuse)?),
        _ => None,
    };
    // A model may fit its pools only streamed: then the stages are chosen from its
    // liveness alone, and kept.
    let without = (planner.plan)(working.clone(), operands.clone(), kernels);
    let liveness = match &without {
        Ok(w) => w.liveness.clone(),
        Err(_) => (planner.liveness)(working, &operands)?,
    };
    let stages = listed.unwrap_or_else(|| choose(model, &liveness, &links));
    if stages.is_empty() {
        return without.map(|w| (w, None));
    }
    let (fused, fused_operands, fused_kernels) =
        fuse(model, &operands, prepared, &stages, &links, path);
    let with = (planner.plan)(fused, fused_operands, Some(fused_kernels));
    let (without, with) = match (without, with) {
        (Err(e), Err(_)) => return Err(e),
        // Auto's stages with no plan are dropped; listed ones are the user's to fix.
        (Ok(w), Err(e)) => match choice {
            Stages::Listed(_) => return Err(e),
            _ => return Ok((w, None)),
        },
        (without, Ok(with)) => (without.ok(), with),
    };
    let before = without.as_ref().map(&planner.workspace);
    let after = (planner.workspace)(&with);
    let kept = matches!(choice, Stages::Listed(_)) || before.is_none_or(|b| after < b);
    let named = stages
        .into_iter()
        .map(|s| {
            let ops = (s.first..=s.last)
                .map(|i| model.calls[i].op.clone())
                .collect();
            (s, ops)
        })
        .collect();
    let streamed = Streamed {
        stages: named,
        before,
        after,
        kept,
    };
    let chosen = match without {
        Some(without) if !kept => without,
        _ => with,
    };
    Ok((chosen, Some(streamed)))
}

/// The stages `listed` names, checked: in order, apart, each a chain the stage kernel
/// runs. Every listed stage is checked; the mistakes are named together, each once.
fn listed_stages(model: &Model, links: &Links, listed: &[[u64; 2]]) -> Result<Vec<Stage>, String> {
    let mut stages: Vec<Stage> = Vec::new();
    let mut mistakes = Vec::new();
    for &[a, b] in listed {
        match listed_stage(model, links, stages.last(), [a as usize, b as usize]) {
            Ok(stage) => stages.push(stage),
            Err(mistake) => mistakes.push(mistake),
        }
    }
    match mistakes.is_empty() {
        true => Ok(stages),
        false => Err(mistakes.join("; ")),
    }
}

/// Listed stage `[a, b]`, checked against the model and the stage listed before it.
fn listed_stage(
    model: &Model,
    links: &Links,
    prev: Option<&Stage>,
    [a, b]: [usize; 2],
) -> Result<Stage, String> {
    let n = model.calls.len();
    let name = |i: usize| format!("call {i} ({})", model.calls[i].op);
    if a >= b || b >= n {
        return Err(format!(
            "stage [{a}, {b}] is not two or more of the model's {n} calls: write [first, last] with first < last < {n}"
        ));
    }
    if let Some(prev) = prev.filter(|p| p.last >= a) {
        return Err(format!(
            "stage [{a}, {b}] begins at or before the end of [{}, {}]: list stages in order, apart",
            prev.first, prev.last
        ));
    }
    if b - a + 1 > usmp_kernels::stage::MOST_PARTS {
        return Err(format!(
            "stage [{a}, {b}] fuses {} calls; a stage fuses at most {}",
            b - a + 1,
            usmp_kernels::stage::MOST_PARTS
        ));
    }
    if let Some(k) = (a..b).find(|&k| !links.next[k]) {
        return Err(format!(
            "stage [{a}, {b}] cannot fuse {} with {}: a stage's calls are int8 CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D or element-wise calls of one input, each reading only the previous call's output, which nothing else reads",
            name(k),
            name(k + 1)
        ));
    }
    Ok(links.stage(a, b))
}
