//! From a validated spec to verified plans: read each model, lower it onto the pools,
//! plan it, and size the shared pools. Errors point back into the spec.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use usmp_core::input::{InputError, ModelFile, read_model};
use usmp_core::liveness::{self, CallSelector, Liveness, Options, ScratchRule};
use usmp_core::model::{Model, ModelError, ModelLocus, Scratch, Size};
use usmp_core::order::{Order, memory_order};
use usmp_core::shared::{self, SharedError, SharedModel};
use usmp_core::tflite::{TflmPlan, plan_for_tflm, scratch_for_tflm};
use usmp_core::{Algorithm, Auto, Plan, PlanError, Pool, PoolKind};

use crate::choice::OwnAlgorithms;
use crate::lower;
use crate::operands::Operands;
use crate::planned::{LoweredModel, Planned, PlannedModel, PlannedPool, Streamed};
use crate::spec::{CallOrder, Diagnostic, ModelSpec, PoolSpec, Spec};
use crate::stages::{Candidate, Planner};

/// Keeps the models' persistent state apart from every model's buffers (usmp-core's
/// [`shared`](usmp_core::shared)), with the default algorithm.
fn keep_state_apart(pools: &[Pool], models: &mut [PlannedModel]) -> Result<(), SharedError> {
    let mut shared: Vec<SharedModel<'_>> = models
        .iter_mut()
        .map(|m| SharedModel {
            name: &m.name,
            model: &m.model,
            liveness: &m.liveness,
            plan: &mut m.plan,
        })
        .collect();
    shared::keep_state_apart(pools, &mut shared, &Auto::default())
}

/// Plans every model of a validated spec. `read` records each file read (for rebuilds)
/// whether or not planning succeeds.
pub fn plan_spec<S: Clone>(
    spec: &Spec<S>,
    own: &OwnAlgorithms,
    kernels_path: &str,
    read: &mut Vec<PathBuf>,
) -> Result<Planned, Vec<Diagnostic<S>>> {
    let mut errors = Vec::new();
    let mut models = Vec::new();
    for m in &spec.models {
        match plan_model(spec, m, own, kernels_path, read) {
            Ok(p) => models.push(p),
            Err(d) => errors.push(d),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let core_pools: Vec<Pool> = spec.pools.iter().map(core_pool).collect();
    if let Err(e) = keep_state_apart(&core_pools, &mut models) {
        let at = spec
            .models
            .iter()
            .zip(&models)
            .find(|(_, m)| m.liveness.has_state(&m.model))
            .map_or(spec.models[0].path.span.clone(), |(s, _)| {
                s.path.span.clone()
            });
        return Err(vec![Diagnostic::new(at, e.to_string()).help(
            "give the workspace pools more room (or no size limit), or plan the models in separate builds",
        )]);
    }
    let pools = sized_pools(spec, &models)?;
    let mut planned = Planned {
        pools,
        models,
        summary: spec.summary,
        splits: Vec::new(),
        preference: None,
    };
    lowered(spec, &mut planned)?;
    Ok(planned)
}

/// The pools as generated code sees them: workspace pools sized for the model that needs
/// the most, constant pools for all models' images; each start aligned for every buffer
/// in it.
fn sized_pools<S: Clone>(
    spec: &Spec<S>,
    models: &[PlannedModel],
) -> Result<Vec<PlannedPool>, Vec<Diagnostic<S>>> {
    let mut errors = Vec::new();
    let mut pools = Vec::new();
    for (i, p) in spec.pools.iter().enumerate() {
        let sizes = models.iter().map(|m| m.plan.pool_sizes[i]);
        let size = match p.kind.value {
            PoolKind::Workspace => sizes.max().unwrap_or(0),
            PoolKind::Constant => sizes.sum(),
        };
        if let Some(limit) = &p.size
            && size > limit.value
        {
            // Only reachable for constants: each model alone fits, all together do not.
            errors.push(
                Diagnostic::new(
                    limit.span.clone(),
                    format!(
                        "constant pool `{}` holds {} bytes but the models' constants need {size} together",
                        p.name.value, limit.value
                    ),
                )
                .help(format!("write size = {size} or more, or add another constant pool")),
            );
        }
        let start_alignment = models
            .iter()
            .flat_map(|m| {
                let problem = &m.liveness.problem;
                m.plan
                    .allocations
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| a.pool == i)
                    .map(move |(b, _)| problem.alignment_in(b, i))
            })
            .fold(p.alignment.value, u64::max);
        if start_alignment > crate::spec::MAX_ALIGNMENT {
            // Only a model file's own buffer alignment gets here: the spec's are checked.
            errors.push(
                Diagnostic::new(
                    p.name.span.clone(),
                    format!(
                        "pool `{}` holds a buffer aligned to {start_alignment} bytes, more than {} (2^29), the largest alignment a Rust static can have",
                        p.name.value,
                        crate::spec::MAX_ALIGNMENT
                    ),
                )
                .help("lower the buffer's `alignment` in the model file"),
            );
        }
        pools.push(PlannedPool {
            name: p.name.value.clone(),
            kind: p.kind.value,
            alignment: p.alignment.value,
            start_alignment,
            section: p.section.value.clone(),
            region: p.region.as_ref().map(|r| r.value.clone()),
            load: p.load.as_ref().map(|r| r.value.clone()),
            limit: p.size.as_ref().map(|s| s.value),
            size,
        });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(pools)
}

/// Lowers every model to the runtime's values and proves them with the runtime's own
/// checks, as the generated module will: a refusal is a bug in usmp-build, reported at
/// the model (or, for the models together, the first) rather than as a const-eval panic
/// in the crate that includes the module.
fn lowered<S: Clone>(spec: &Spec<S>, planned: &mut Planned) -> Result<(), Vec<Diagnostic<S>>> {
    let lowered: Vec<LoweredModel> = planned
        .models
        .iter()
        .map(|m| lower::model(planned, m))
        .collect();
    for (m, l) in planned.models.iter_mut().zip(lowered) {
        m.lowered = l;
    }
    lower::check(planned).map_err(|refused| {
        let k = refused.model.unwrap_or(0);
        let whose = match refused.model {
            Some(_) => format!("model `{}`", planned.models[k].name),
            None => "the models together".to_string(),
        };
        vec![
            Diagnostic::new(
                spec.models[k].path.span.clone(),
                format!(
                    "usmp-build made a plan for {whose} that the runtime's check refuses ({:?}): {}",
                    refused.violation,
                    refused.violation.message()
                ),
            )
            .help("this is a bug in usmp-build, not in your files: please report it with usmp.toml and the model"),
        ]
    })
}

/// The model file `m.path` names, relative to the spec's folder.
pub fn model_path<S>(spec: &Spec<S>, m: &ModelSpec<S>) -> PathBuf {
    spec.base.join(&m.path.value)
}

fn plan_model<S: Clone>(
    spec: &Spec<S>,
    m: &ModelSpec<S>,
    own: &OwnAlgorithms,
    kernels_path: &str,
    read: &mut Vec<PathBuf>,
) -> Result<PlannedModel, Diagnostic<S>> {
    let path = model_path(spec, m);
    let mut file = read_model(&path).map_err(|e| model_error(m, &path, &e))?;
    read.extend(file.files.iter().cloned());
    if file.model.calls.is_empty() {
        // The generated session hands out inputs live at call 0; there is none.
        return Err(Diagnostic::new(
            m.path.span.clone(),
            format!(
                "model `{}` has no operator calls: there is nothing to run",
                m.name.value
            ),
        )
        .help("name a model file with at least one operator call"));
    }
    let (order, options) = in_order(m, &mut file, &path)?;
    let graph = file.take_graph();
    let operands = crate::operands::of(&file.model, graph);
    let prepared = match m.kernels.value {
        true => Some(
            crate::kernels::prepare(
                &file.model,
                &operands,
                kernels_path,
                usmp_kernels::work::Path::from_env(),
            )
            .map_err(|e| kernels_error(m, &e))?,
        ),
        false => None,
    };
    let pools: Vec<Pool> = spec.pools.iter().map(core_pool).collect();
    let algorithm = configured(m, own)?;
    let at = Site {
        spec,
        m,
        file: &file,
        path: &path,
        options: &options,
        pools: &pools,
        algorithm: algorithm.as_ref(),
    };
    let planner = Planner {
        plan: |model, operands, kernels| at.candidate(model, operands, kernels),
        workspace: |c: &Candidate| {
            let sizes = c.plan.pool_sizes.iter().zip(&spec.pools);
            let workspace = sizes.filter(|(_, p)| p.kind.value == PoolKind::Workspace);
            workspace.map(|(&size, _)| size).sum()
        },
        liveness: |mut model, operands: &Operands| at.liveness(&mut model, operands),
    };
    let refuse = |reason: String| {
        Diagnostic::new(
            m.stages.span.clone(),
            format!("model `{}`: {reason}", m.name.value),
        )
        .help("list only chains a stage can run, or write stages = \"auto\" and let usmp choose")
    };
    let (chosen, streamed) = crate::stages::apply(
        &m.stages.value,
        &file.model,
        operands,
        prepared.as_deref(),
        kernels_path,
        &planner,
        refuse,
    )?;
    // TensorFlow Lite Micro runs the calls as the file writes them: its scratch rules
    // keep their numbers.
    let tflm = tflm_copy(m, &file, &self::options(m), algorithm.as_ref())?;
    Ok(planned_model(m, own, (order, tflm, streamed), chosen))
}

/// The model as planned, from the spec and the candidate chosen.
fn planned_model<S>(
    m: &ModelSpec<S>,
    own: &OwnAlgorithms,
    (order, tflm, streamed): (Option<Order>, Option<TflmPlan>, Option<Streamed>),
    chosen: Candidate,
) -> PlannedModel {
    PlannedModel {
        search_budget: m.algorithm.value.searches().then(|| own.work_budget()),
        order,
        tflm,
        kernels: chosen.kernels,
        streamed,
        tensors: chosen.operands.tensors,
        reads: chosen.operands.reads,
        options: chosen.operands.options,
        name: m.name.value.clone(),
        module: m.module.value.clone(),
        path: m.path.value.clone(),
        model: chosen.model,
        liveness: chosen.liveness,
        plan: chosen.plan,
        // Lowered once every model's plan is final (state kept apart) and the pools sized.
        lowered: LoweredModel::default(),
    }
}

/// What planning one way of running a model needs.
struct Site<'a, S> {
    spec: &'a Spec<S>,
    m: &'a ModelSpec<S>,
    file: &'a ModelFile,
    path: &'a Path,
    options: &'a Options,
    pools: &'a [Pool],
    algorithm: &'a dyn Algorithm,
}

impl<S: Clone> Site<'_, S> {
    /// `model` with the windows its kernels certify (with `overlap`), lowered and planned.
    /// `model`'s liveness in the pools, with the overlaps its kernels certify declared on
    /// it where `overlap` is on (and cleared where it is off).
    fn liveness(&self, model: &mut Model, operands: &Operands) -> Result<Liveness, Diagnostic<S>> {
        if self.m.overlap.value {
            crate::kernels::declare_overlaps(model, operands);
        } else {
            // A stage's own window, declared when it was fused.
            model.calls.iter_mut().for_each(|c| c.overlaps.clear());
        }
        liveness::analyse(model, self.pools, self.options)
            .map_err(|e| lower_error(self.m, self.path, self.file, &e))
    }

    fn candidate(
        &self,
        mut model: Model,
        operands: Operands,
        kernels: Option<Vec<String>>,
    ) -> Result<Candidate, Diagnostic<S>> {
        let (m, algorithm) = (self.m, self.algorithm);
        let liveness = self.liveness(&mut model, &operands)?;
        let lower = |pools: &[Pool]| liveness::analyse(&model, pools, self.options);
        let plan = usmp_core::plan(&liveness.problem, algorithm).map_err(|e| {
            plan_error(self.spec, m, &e, |pools| {
                let l = lower(pools).ok()?;
                usmp_core::plan(&l.problem, algorithm).ok()
            })
        })?;
        Ok(Candidate {
            model,
            operands,
            kernels,
            liveness,
            plan,
        })
    }
}

/// With `order = "memory"`: the model's calls put in the order of the lowest peak
/// (with the windows its kernels certify, when `overlap` is on), and the options with
/// their scratch rules renumbered to match. Otherwise the order as written.
fn in_order<S: Clone>(
    m: &ModelSpec<S>,
    file: &mut ModelFile,
    path: &Path,
) -> Result<(Option<Order>, Options), Diagnostic<S>> {
    let options = options(m);
    if m.order.value != CallOrder::Memory {
        return Ok((None, options));
    }
    let operands = crate::operands::of(&file.model, file.graph().cloned());
    let candidates = match m.overlap.value {
        true => crate::kernels::candidate_overlaps(&file.model, &operands),
        false => file.model.clone(),
    };
    let order = memory_order(&candidates, &options).map_err(|e| lower_error(m, path, file, &e))?;
    file.put_in_order(&order);
    let options = order.renumber(&options);
    Ok((Some(order), options))
}

/// A call the kernels cannot run, at `kernels = true`.
fn kernels_error<S: Clone>(m: &ModelSpec<S>, e: &str) -> Diagnostic<S> {
    Diagnostic::new(m.kernels.span.clone(), format!("model `{}`: {e}", m.name.value))
        .help("run that call with your own kernel (leave out `kernels = true` and loop over the session's calls), or change the model")
}

/// A model's error from lowering it, at the scratch rule or in the model file.
fn lower_error<S: Clone>(
    m: &ModelSpec<S>,
    path: &Path,
    file: &ModelFile,
    e: &ModelError,
) -> Diagnostic<S> {
    match e.locus {
        ModelLocus::ScratchRule(k) => Diagnostic::new(m.scratch[k].span.clone(), e.to_string()),
        _ => model_error(m, path, &file.error(e)),
    }
}

/// With `tflm = true`: the model planned for TensorFlow Lite Micro's arena, to be
/// written into a copy of its `.tflite` file.
fn tflm_copy<S: Clone>(
    m: &ModelSpec<S>,
    file: &ModelFile,
    options: &Options,
    algorithm: &dyn Algorithm,
) -> Result<Option<TflmPlan>, Diagnostic<S>> {
    Ok(if m.tflm.value {
        let at = |message: String| {
            Diagnostic::new(
                m.tflm.span.clone(),
                format!("model `{}`: {message}", m.name.value),
            )
        };
        let bytes = file.tflite_bytes().ok_or_else(|| {
            at("`tflm = true` writes a copy of a .tflite model, and this is a JSON model".into())
                .help("leave out `tflm`, or name the model's .tflite file in `path`")
        })?;
        // The model's scratch rules, or else what TFLite Micro's reference kernels request.
        let (scratch, _) = scratch_for_tflm(bytes, &options.scratch);
        let planned = plan_for_tflm(bytes, &m.name.value, algorithm, &scratch)
            .map_err(|e| at(format!("TensorFlow Lite Micro's plan: {e}")))?;
        Some(planned)
    } else {
        None
    })
}

fn core_pool<S>(p: &PoolSpec<S>) -> Pool {
    let pool = match p.kind.value {
        PoolKind::Workspace => Pool::workspace(p.name.value.clone()),
        PoolKind::Constant => Pool::constant(p.name.value.clone()),
    };
    let mut pool = pool.with_alignment(p.alignment.value);
    if let Some(size) = &p.size {
        pool = pool.with_limit(size.value);
    }
    pool.targets = p.targets.iter().map(|t| t.value.clone()).collect();
    pool.bandwidth = p.bandwidth.as_ref().map(|b| b.value);
    pool
}

fn options<S>(m: &ModelSpec<S>) -> Options {
    Options {
        io_in_pools: m.io_in_pools.value,
        state_in_pools: true,
        size_granularity: m.size_granularity.value,
        alignment: m.alignment.value,
        scratch: m
            .scratch
            .iter()
            .map(|r| ScratchRule {
                calls: match (&r.op, &r.call) {
                    (Some(op), _) => CallSelector::Operator(op.value.clone()),
                    (None, Some(c)) => {
                        CallSelector::Index(usize::try_from(c.value).unwrap_or(usize::MAX))
                    }
                    (None, None) => CallSelector::Index(usize::MAX),
                },
                scratch: Scratch {
                    name: r.name.value.clone(),
                    size: Size::Bytes(r.size.value),
                    alignment: r.alignment.as_ref().map(|a| a.value),
                },
            })
            .collect(),
    }
}

/// An error in or about the model file, shown at the path that names it.
/// The model's algorithm, with its choice of pools for `exact` and `auto` (an unknown
/// own name was reported by `valid`; here it is still an error, never a panic).
fn configured<S: Clone>(
    m: &ModelSpec<S>,
    own: &OwnAlgorithms,
) -> Result<Arc<dyn Algorithm + Send + Sync>, Diagnostic<S>> {
    own.build(&m.algorithm.value, m.assignment.value)
        .ok_or_else(|| {
            Diagnostic::new(
                m.algorithm.span.clone(),
                format!("unknown algorithm `{}`", m.algorithm.value),
            )
        })
}

fn model_error<S: Clone>(m: &ModelSpec<S>, path: &Path, e: &InputError) -> Diagnostic<S> {
    let message = if e.more.is_empty() {
        format!("model `{}`: {e}", m.name.value)
    } else {
        let lines: Vec<String> = e.each().map(|one| format!("  {one}")).collect();
        format!(
            "model `{}` has {} mistakes:\n{}",
            m.name.value,
            lines.len(),
            lines.join("\n")
        )
    };
    let d = Diagnostic::new(m.path.span.clone(), message);
    if path.exists() {
        d
    } else {
        d.help(format!(
            "no file at {}; a model path is relative to the file that declares it",
            path.display()
        ))
    }
}

/// A planning failure. A buffer that fits no pool is shown at the size of the last
/// limited pool it tried, with the bytes that pool needs: the plan is made again with that
/// one limit lifted (`replan`) to find out.
fn plan_error<S: Clone>(
    spec: &Spec<S>,
    m: &ModelSpec<S>,
    e: &PlanError,
    replan: impl Fn(&[Pool]) -> Option<Plan>,
) -> Diagnostic<S> {
    let PlanError::NoFit {
        buffer,
        size,
        attempts,
        lower_bound,
        ..
    } = e
    else {
        return Diagnostic::new(
            m.algorithm.span.clone(),
            format!("model `{}`: {e}", m.name.value),
        );
    };
    let limited = attempts.iter().rev().find_map(|a| {
        spec.pools
            .iter()
            .position(|p| p.name.value == a.pool && p.size.is_some())
    });
    let Some(index) = limited else {
        return Diagnostic::new(
            m.path.span.clone(),
            format!("model `{}`: {e}", m.name.value),
        );
    };
    let pool = &spec.pools[index];
    let mut lifted: Vec<Pool> = spec.pools.iter().map(core_pool).collect();
    lifted[index].size_limit = None;
    let limit = pool.size.as_ref().map_or(0, |s| s.value);
    let needed = replan(&lifted).map(|p| p.pool_sizes[index]);
    let span = pool
        .size
        .as_ref()
        .map_or(pool.name.span.clone(), |s| s.span.clone());
    let message = format!(
        "pool `{}` ({limit} bytes) is too small for model `{}`: buffer `{buffer}` ({size} bytes) fits in none of its pools",
        pool.name.value, m.name.value
    );
    let help = match needed {
        Some(n) => format!(
            "with algorithm {} the model needs {n} bytes in `{}` ({} more); write size = {n} or more",
            m.algorithm.value,
            pool.name.value,
            n.saturating_sub(limit)
        ),
        None => format!(
            "raise its size, or add a pool; no plan can go below {lower_bound} bytes in total"
        ),
    };
    Diagnostic::new(span, message).help(help)
}
