//! What planning produces and the generators read: the pools as generated code sees them,
//! each model with its verified plan, and that plan lowered to the runtime's own values.
//! Data only; `planning` makes it, `lower` lowers and checks it.

use usmp_core::liveness::Liveness;
use usmp_core::model::Model;
use usmp_core::order::Order;
use usmp_core::tflite::{TensorInfo, TflmPlan};
use usmp_core::{Plan, PoolKind};

/// A pool as the generated code sees it.
#[derive(Clone, Debug)]
pub struct PlannedPool {
    /// Its name.
    pub name: String,
    /// Workspace or constant.
    pub kind: PoolKind,
    /// Every offset in it is a multiple of this.
    pub alignment: u64,
    /// Its start's alignment: the pool's, raised to the largest alignment of a buffer
    /// placed in it, so that every buffer's address (not only its offset) is aligned.
    pub start_alignment: u64,
    /// Its link section.
    pub section: String,
    /// Its linker memory region.
    pub region: Option<String>,
    /// A constant pool run from RAM: the region its images are stored in, copied into
    /// `region` when the workspace is taken.
    pub load: Option<String>,
    /// Its limit, if any.
    pub limit: Option<u64>,
    /// Workspace: the largest any model needs (they share it). Constant: the sum of the
    /// models' constant images, which are separate statics in the same section.
    pub size: u64,
}

/// One model, planned and verified.
#[derive(Clone, Debug)]
pub struct PlannedModel {
    /// Its name.
    pub name: String,
    /// The generated module's name.
    pub module: String,
    /// The model path as written.
    pub path: String,
    /// The model, its calls in the order they run.
    pub model: Model,
    /// For `exact` and `auto`: the work budget their search had (the report says it
    /// where the plan is not proven optimal).
    pub search_budget: Option<u64>,
    /// With `order = "memory"`: the order chosen (each call's index as the file writes
    /// it) and the peaks of both orders.
    pub order: Option<Order>,
    /// The problem it lowered to, and the way back to tensors.
    pub liveness: Liveness,
    /// The verified plan; its pool indices are the spec's.
    pub plan: Plan,
    /// Each tensor's shape, element type and quantization (`.tflite` models; empty for
    /// the JSON IR).
    pub tensors: Vec<TensorInfo>,
    /// Each call's inputs in the operator's own order, `None` for a left-out optional one
    /// (`.tflite`); the model's reads otherwise.
    pub reads: Vec<Vec<Option<usize>>>,
    /// Each call's builtin options (`.tflite`); `Options::None` otherwise.
    pub options: Vec<usmp::Options>,
    /// With `kernels = true`: each call's `Kernel`, as usmp-kernels prints it (naming the
    /// crate by [`Config::kernels_path`](crate::Config::kernels_path)).
    pub kernels: Option<Vec<String>>,
    /// With `stages` on: the stages tried, and whether they were kept.
    pub streamed: Option<Streamed>,
    /// With `tflm = true`: the model planned for TensorFlow Lite Micro's arena, its plan
    /// written into a copy of the `.tflite` file.
    pub tflm: Option<TflmPlan>,
    /// The plan as the runtime's own values, proven by `usmp::check` at build time: what
    /// the generated module prints.
    pub lowered: LoweredModel,
}

/// One stage: calls `first..=last` of the model as it runs before fusing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    /// Its first call.
    pub first: usize,
    /// Its last call.
    pub last: usize,
    /// The rows each part's line buffer holds, and its bytes: one per part but the last.
    pub line_buffers: Vec<(usize, u64)>,
}

impl Stage {
    /// The bytes of all its line buffers.
    pub fn scratch(&self) -> u64 {
        self.line_buffers.iter().map(|&(_, b)| b).sum()
    }
}

/// A model's streamed stages as planned (`stages`).
#[derive(Clone, Debug)]
pub struct Streamed {
    /// The stages, calls numbered as the model runs without them, with each part's
    /// operator.
    pub stages: Vec<(Stage, Vec<String>)>,
    /// The workspace bytes planned without stages; `None` where the model has no plan
    /// without them (it fits its pools only streamed).
    pub before: Option<u64>,
    /// With them.
    pub after: u64,
    /// Whether the model runs with them: listed stages always; `auto`'s only when they
    /// lower the workspace.
    pub kept: bool,
}

/// Everything the generators need.
#[derive(Clone, Debug)]
pub struct Planned {
    /// The pools, in the spec's order.
    pub pools: Vec<PlannedPool>,
    /// The models, in the spec's order.
    pub models: Vec<PlannedModel>,
    /// One summary line per model as a cargo warning.
    pub summary: bool,
    /// How each size shared by a constant pool (`shares`) was split.
    pub splits: Vec<Split>,
    /// Where a model's assignment is `fastest`: the same spec planned by the preference
    /// order, for the report.
    pub preference: Option<Box<Planned>>,
}

/// How a workspace pool's size was split with the constant pool sharing it.
#[derive(Clone, Debug)]
pub struct Split {
    /// The constant pool (index into the pools).
    pub constant: usize,
    /// The workspace pool whose size it shares.
    pub workspace: usize,
    /// That size.
    pub limit: u64,
    /// The splits planned, in the order tried.
    pub tried: Vec<Tried>,
    /// The one kept (index into `tried`).
    pub chosen: usize,
}

/// One split of a shared size, planned.
#[derive(Clone, Copy, Debug)]
pub struct Tried {
    /// The limit the workspace pool had.
    pub workspace: u64,
    /// The limit the constant pool had.
    pub constant: u64,
    /// Where it planned: the bytes each pool used and the estimated memory time per
    /// inference of all models, in nanoseconds.
    pub outcome: Option<(u64, u64, u64)>,
}

/// One call's operands, as the runtime's `CallInfo` holds them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoweredCall {
    /// What it reads, in the model's order.
    pub inputs: Vec<usmp::Slot>,
    /// What it writes (then the state it updates), in order.
    pub outputs: Vec<usmp::Slot>,
    /// Its scratch buffers.
    pub scratch: Vec<u32>,
}

/// One model's plan as the runtime's values (its `ModelInfo` without the operators and
/// tensors, which are the model's, not the plan's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoweredModel {
    /// Every planned buffer, in the problem's order.
    pub buffers: Vec<usmp::Buffer>,
    /// Each call's operands.
    pub calls: Vec<LoweredCall>,
    /// The model's inputs.
    pub inputs: Vec<usmp::Slot>,
    /// The model's outputs.
    pub outputs: Vec<usmp::Slot>,
    /// The certificate: each call's live workspace buffers in address order.
    pub live: Vec<u32>,
    /// Where each call's list starts in `live`; one more entry than calls.
    pub live_from: Vec<u32>,
    /// The constant buffers in address order.
    pub constant_order: Vec<u32>,
    /// Per pool, the size of this model's constant image in it (0 for workspace pools).
    pub images: Vec<usize>,
}
