//! The spec: what the user declared, pools and models, whichever front end they wrote it
//! in (`usmp.toml` or `usmp_pools!`). Every value keeps the span it came from, of the
//! front end's own span type `S`, so that later phases can point back at it.

use std::path::PathBuf;

use usmp_core::{Assignment, PoolKind};

use crate::choice::AlgorithmChoice;

pub use usmp_core::input::parse_size;

pub use crate::raw::At;

pub use usmp_core::liveness::{DEFAULT_ALIGNMENT, DEFAULT_SIZE_GRANULARITY};

/// The largest alignment a pool or buffer may have: `repr(align)`, which places the pools'
/// statics, stops at 2^29.
pub const MAX_ALIGNMENT: u64 = 1 << 29;

/// Pools, models and options: everything needed to plan and generate.
#[derive(Clone, Debug)]
pub struct Spec<S> {
    /// The pools, in preference order: a buffer goes to the first one that can hold it.
    pub pools: Vec<PoolSpec<S>>,
    /// The models; they share the workspace pools (RFC U2).
    pub models: Vec<ModelSpec<S>>,
    /// Print a one-line `cargo::warning` summary per model.
    pub summary: bool,
    /// Model paths are relative to this folder.
    pub base: PathBuf,
}

/// One memory pool.
#[derive(Clone, Debug)]
pub struct PoolSpec<S> {
    /// Unique name; also the generated identifiers' stem.
    pub name: At<String, S>,
    /// Workspace (activations, scratch) or constant (weights).
    pub kind: At<PoolKind, S>,
    /// Upper bound on its size in bytes.
    pub size: Option<At<u64, S>>,
    /// Its speed in bytes per second, if stated (for `assignment = "fastest"` and the
    /// report's memory time).
    pub bandwidth: Option<At<u64, S>>,
    /// Every offset in the pool and the pool's start are multiples of this.
    pub alignment: At<u64, S>,
    /// The link section its static goes to.
    pub section: At<String, S>,
    /// The linker memory region its section goes to in `usmp.x`; none: left to the
    /// default linker script (host builds).
    pub region: Option<At<String, S>>,
    /// A constant pool run from RAM: the region its image is stored in (`"FLASH"`), from
    /// which taking the workspace copies it into `region`. None: read where it is stored.
    pub load: Option<At<String, S>>,
    /// A constant pool whose bytes come out of this workspace pool's `size`: the two are
    /// one memory (a TCM holding weights and activations), and planning chooses the split.
    pub shares: Option<At<String, S>>,
    /// Targets that can access it; empty: every target.
    pub targets: Vec<At<String, S>>,
}

/// The link section of the images of a constant pool run from RAM (`load`), whose own
/// section (`section`) is then the RAM the images are copied into.
pub fn image_section(section: &str) -> String {
    format!("{section}.image")
}

/// One model.
#[derive(Clone, Debug)]
pub struct ModelSpec<S> {
    /// Unique name, used in reports.
    pub name: At<String, S>,
    /// Path of the `.tflite` or JSON IR file, as written.
    pub path: At<String, S>,
    /// Planning algorithm: built in, or the build script's own.
    pub algorithm: At<AlgorithmChoice, S>,
    /// How `exact` and `auto` choose pools for buffers that may use several.
    pub assignment: At<Assignment, S>,
    /// Plan the model's inputs and outputs inside the workspace pools (RFC U4).
    pub io_in_pools: At<bool, S>,
    /// Round every buffer size up to a multiple of this.
    pub size_granularity: At<u64, S>,
    /// Alignment of buffers that state none.
    pub alignment: At<u64, S>,
    /// Scratch sizes from the kernel library.
    pub scratch: Vec<ScratchSpec<S>>,
    /// Name of the generated Rust module.
    pub module: At<String, S>,
    /// Emit `KERNELS`, each call's usmp-kernels parameters (`.tflite` models).
    pub kernels: At<bool, S>,
    /// Let a call's output share bytes with the input it reads last, within the window
    /// usmp-kernels certifies for its kernel (true by default with `kernels = true`; only
    /// usmp's own kernels are known to allow it).
    pub overlap: At<bool, S>,
    /// The order the calls run in: as the model file writes them (the default), or the
    /// order of the lowest peak its dependencies allow (`usmp_core::order`).
    pub order: At<CallOrder, S>,
    /// Which chains of calls run as streamed stages (usmp-kernels' `stage`): `auto` by
    /// default with `kernels = true`, `off` otherwise.
    pub stages: At<Stages, S>,
    /// Also write a copy of the `.tflite` model holding TensorFlow Lite Micro's offline
    /// plan (`<module>.tflm.tflite`), for firmware that runs TFLite Micro.
    pub tflm: At<bool, S>,
}

/// Which chains of calls a model runs as streamed stages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stages {
    /// usmp chooses the chains whose fusing lowers the planned workspace most, with the
    /// fewest calls fused.
    Auto,
    /// None.
    Off,
    /// These: each `[first, last]`, call indices as the model runs them.
    Listed(Vec<[u64; 2]>),
}

/// Scratch that the kernels of some calls need, beyond what the model states.
#[derive(Clone, Debug)]
pub struct ScratchSpec<S> {
    /// Every call of this operator ...
    pub op: Option<At<String, S>>,
    /// ... or one call by its position.
    pub call: Option<At<u64, S>>,
    /// The scratch buffer's name.
    pub name: At<String, S>,
    /// Its size in bytes.
    pub size: At<u64, S>,
    /// Its alignment, if it needs more than the default.
    pub alignment: Option<At<u64, S>>,
    /// The whole rule.
    pub span: S,
}

/// Something wrong in a spec, pointed at where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic<S> {
    /// Where.
    pub span: S,
    /// What is wrong.
    pub message: String,
    /// What to write instead, when there is a clear answer.
    pub help: Option<String>,
}

impl<S> Diagnostic<S> {
    /// An error at `span`.
    pub fn new(span: S, message: impl Into<String>) -> Self {
        Diagnostic {
            span,
            message: message.into(),
            help: None,
        }
    }

    /// The same error with advice.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// The order a model's calls run in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallOrder {
    /// As the model file writes them.
    Written,
    /// Among the orders the data dependencies allow, the one of the lowest peak of live
    /// bytes (with the overlaps the kernels certify).
    Memory,
}

/// The call order `text` names, or a diagnostic at its span that says what to write.
pub fn call_order<S: Clone>(text: At<String, S>) -> Result<At<CallOrder, S>, Diagnostic<S>> {
    let order = match text.value.as_str() {
        "written" => CallOrder::Written,
        "memory" => CallOrder::Memory,
        other => {
            return Err(
                Diagnostic::new(text.span, format!("unknown call order `{other}`")).help(
                    "write order = \"written\" (the default: the calls run as the model file \
                 lists them) or \"memory\" (the order of the lowest peak of live bytes the \
                 data dependencies allow)",
                ),
            );
        }
    };
    Ok(At::new(order, text.span))
}

/// The assignment `text` names, or a diagnostic at its span that says what to write.
pub fn assignment<S: Clone>(text: At<String, S>) -> Result<At<Assignment, S>, Diagnostic<S>> {
    match text.value.parse::<Assignment>() {
        Ok(a) => Ok(At::new(a, text.span)),
        Err(_) => Err(
            Diagnostic::new(text.span, format!("unknown assignment `{}`", text.value)).help(
                "write assignment = \"preference\" (the default: each buffer in the first of its \
             pools with room), \"smallest_total\" or \"fastest\" (the most-accessed bytes in \
             the pools of the highest `bandwidth`)",
            ),
        ),
    }
}
