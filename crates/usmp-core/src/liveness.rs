//! Holistic liveness: one planning [`Problem`] from a whole [`Model`], holding the
//! tensors between operators and the scratch inside them together (the RFC's point:
//! planning scratch per operator first and tensors second wastes memory).
//!
//! Call `i` of the model is time step `i`; live ranges are half-open `[start, end)`:
//!
//! | buffer | live |
//! |---|---|
//! | activation written by call `p`, last read by call `r` | `[p, r + 1)` |
//! | model input | from `0` |
//! | model output | to the end (the number of calls) |
//! | activation written and never read | `[p, p + 1)` |
//! | scratch of call `i` | `[i, i + 1)` |
//! | state, constants | the whole program |
//!
//! Conflicts are exactly the overlaps of these ranges. An in-place output shares one
//! buffer with the input it overwrites. A buffer's candidate pools are the configured pools
//! of its kind, in order, that every target touching it can access.

use crate::model::{Model, Role, Scratch};
use crate::plan::Plan;
use crate::problem::{PoolKind, Problem};
use crate::solution::Allocation;

mod analyse;

pub use analyse::analyse;

/// Alignment of pools and buffers that state none in a configuration (usmp.toml,
/// `usmp_pools!`, the CLI's pools file): TVM's default, and what SIMD loads want.
/// Problem files (CSV, JSON problems) keep the RFC's 1, as their numbers are exact.
pub const DEFAULT_ALIGNMENT: u64 = 16;

/// Sizes round up to a multiple of this unless configured otherwise (TFLite Micro's 16).
pub const DEFAULT_SIZE_GRANULARITY: u64 = 16;

/// How a model becomes a problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Plan the model's inputs and outputs inside workspace pools (RFC U4). When off,
    /// the caller owns them and they are left out of the plan.
    pub io_in_pools: bool,
    /// Plan persistent state (variable tensors) inside workspace pools. When off, the
    /// runtime keeps it in memory of its own (TensorFlow Lite Micro's persistent area)
    /// and it is left out of the plan.
    pub state_in_pools: bool,
    /// Round every size up to a multiple of this (TFLite Micro uses 16). 1 keeps sizes.
    pub size_granularity: u64,
    /// Alignment of buffers that do not state their own (TVM's default is 16).
    pub alignment: u64,
    /// Scratch sizes that come from the kernel library rather than the model.
    pub scratch: Vec<ScratchRule>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            io_in_pools: true,
            state_in_pools: true,
            size_granularity: DEFAULT_SIZE_GRANULARITY,
            alignment: DEFAULT_ALIGNMENT,
            scratch: Vec::new(),
        }
    }
}

/// Which calls a [`ScratchRule`] applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallSelector {
    /// One call, by its position in execution order.
    Index(usize),
    /// Every call of this operator.
    Operator(String),
}

/// A scratch allocation added to the calls it selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScratchRule {
    /// The calls.
    pub calls: CallSelector,
    /// The allocation each of them makes.
    pub scratch: Scratch,
}

/// What a planned buffer stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Tensors (indices into [`Model::tensors`]); more than one when outputs are written
    /// in place of their inputs, in program order.
    Tensors(Vec<usize>),
    /// A scratch allocation of a call.
    Scratch {
        /// The call.
        call: usize,
        /// The scratch's name.
        name: String,
    },
}

/// Why something is not in the static plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Omission {
    /// Its size is only known at run time.
    Dynamic,
    /// A model input or output the caller owns (I/O not in pools).
    External,
    /// It has no bytes.
    Empty,
    /// No call reads or writes it.
    Unused,
    /// Persistent state the runtime keeps outside the pools (state not in pools).
    Persistent,
}

impl Omission {
    /// Its name in reports: `dynamic`, `external`, `empty`, `unused` or `persistent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Omission::Dynamic => "dynamic",
            Omission::External => "external",
            Omission::Empty => "empty",
            Omission::Unused => "unused",
            Omission::Persistent => "persistent",
        }
    }
}

/// Something the model has that the plan leaves out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut {
    /// A tensor's name, or `call N (OP): name` for scratch.
    pub name: String,
    /// Why.
    pub reason: Omission,
}

/// A model lowered to a problem, with the way back from buffers to what they stand for.
#[derive(Clone, Debug)]
pub struct Liveness {
    /// The planning problem.
    pub problem: Problem,
    /// What each buffer of the problem stands for.
    pub origins: Vec<Origin>,
    /// The buffer of each tensor, when it is planned.
    pub tensor_buffers: Vec<Option<usize>>,
    /// One label per time step (per call), e.g. `3 CONV_2D (cpu)`.
    pub steps: Vec<String>,
    /// What is not planned, and why.
    pub left_out: Vec<LeftOut>,
    /// The scratch each call makes, from the model and the scratch rules.
    pub scratch: Vec<Vec<Scratch>>,
}

impl Liveness {
    /// Workspace buffers live during `step`, in buffer order.
    pub fn live_at(&self, step: usize) -> Vec<usize> {
        let step = step as u64;
        let buffers = self.problem.buffers();
        (0..buffers.len())
            .filter(|&b| buffers[b].kind == PoolKind::Workspace)
            .filter(|&b| {
                buffers[b]
                    .live
                    .is_some_and(|l| l.start <= step && step < l.end)
            })
            .collect()
    }

    /// Whether buffer `b` holds persistent state (a tensor of [`Role::State`]), which
    /// must outlive every call of every model sharing the workspace.
    pub fn holds_state(&self, model: &Model, b: usize) -> bool {
        match self.origins.get(b) {
            Some(Origin::Tensors(ts)) => ts
                .iter()
                .any(|&t| matches!(model.tensors.get(t).map(|t| &t.role), Some(Role::State))),
            _ => false,
        }
    }

    /// Whether any buffer holds persistent state.
    pub fn has_state(&self, model: &Model) -> bool {
        (0..self.origins.len()).any(|b| self.holds_state(model, b))
    }

    /// Where a tensor went in `plan`, if it is planned.
    pub fn tensor_allocation(&self, plan: &Plan, tensor: usize) -> Option<Allocation> {
        let b = (*self.tensor_buffers.get(tensor)?)?;
        plan.allocations.get(b).copied()
    }

    /// The bytes of constant pool `pool`: every planned constant's data at its offset,
    /// zeros in between. This is what goes into flash.
    pub fn constant_image(&self, model: &Model, plan: &Plan, pool: usize) -> Vec<u8> {
        let size = plan.pool_sizes.get(pool).copied().unwrap_or(0);
        let mut image = vec![0u8; usize::try_from(size).unwrap_or(0)];
        for (t, tensor) in model.tensors.iter().enumerate() {
            let Role::Constant(data) = &tensor.role else {
                continue;
            };
            let Some(a) = self.tensor_allocation(plan, t) else {
                continue;
            };
            if a.pool != pool {
                continue;
            }
            let start = usize::try_from(a.offset).unwrap_or(usize::MAX);
            if let Some(slot) = image.get_mut(start..start.saturating_add(data.len())) {
                slot.copy_from_slice(data);
            }
        }
        image
    }
}

#[cfg(test)]
mod tests;
