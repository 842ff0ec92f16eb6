//! The data a generated module is made of: pools, buffers, and each call's operands. All of
//! it is `const`, linear in the model's size, and read by [`check`](crate::check) at
//! compile time and by [`Session`](crate::Session) at run time. The tables borrow for
//! `'a`: `'static` in generated code; usmp-build builds the same values from its own
//! vectors and runs `check` on them before it prints any.

use crate::op::{Op, Tensor};
use crate::options::Options;

/// What a pool holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PoolKind {
    /// Activations, scratch and state: uninitialised RAM, zeroed by
    /// [`Workspace::take`](crate::Workspace::take).
    Workspace,
    /// Weights: each model's bytes at their planned offsets, usually in flash.
    Constant,
}

impl PoolKind {
    /// The lower-case name used in files and reports: `workspace` or `constant`.
    pub const fn as_str(self) -> &'static str {
        match self {
            PoolKind::Workspace => "workspace",
            PoolKind::Constant => "constant",
        }
    }
}

impl core::fmt::Display for PoolKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A pool as planned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolInfo<'a> {
    /// Its name in the pools' declaration.
    pub name: &'a str,
    /// Workspace or constant.
    pub kind: PoolKind,
    /// Its size in bytes: for a workspace pool the most any model needs, for a constant
    /// pool the sum of the models' images.
    pub size: usize,
    /// Its start and every offset in it are multiples of this (a power of two).
    pub alignment: usize,
    /// The link section of its storage.
    pub section: &'a str,
    /// A constant pool run from RAM: each model's image stays where the firmware is
    /// programmed ([`Model::constants`](crate::Model::constants)), and
    /// [`Workspace::take`](crate::Workspace::take) copies it into storage of its own in
    /// this pool's section, which sessions then read. Always `false` for a workspace pool.
    pub loaded: bool,
}

/// Where one planned buffer lives and when it is live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffer {
    /// Its pool: an index into the pools' table.
    pub pool: usize,
    /// Byte offset from the pool's start; in a constant pool, from the start of its
    /// model's image.
    pub offset: usize,
    /// Size in bytes, as planned: what it reserves in its pool, rounded up to the model's
    /// size granularity.
    pub size: usize,
    /// The bytes it holds (its tensor's, or its scratch's as requested): the length of
    /// every region handed out for it. At most `size`.
    pub len: usize,
    /// The first call during which it is live.
    pub start: u32,
    /// One past the last call during which it is live.
    pub end: u32,
    /// Persistent state: it keeps its bytes from one inference to the next, and no other
    /// buffer of any model is ever placed over it.
    pub persistent: bool,
}

impl Buffer {
    /// A buffer of `size` bytes at `offset` in pool `pool`, live during calls
    /// `start..end`.
    pub const fn new(pool: usize, offset: usize, size: usize, start: u32, end: u32) -> Self {
        Buffer {
            pool,
            offset,
            size,
            len: size,
            start,
            end,
            persistent: false,
        }
    }

    /// The same buffer holding `len` bytes of its `size` (a tensor whose size is not a
    /// multiple of the granularity): regions handed out for it are `len` bytes long.
    pub const fn holding(self, len: usize) -> Self {
        Buffer { len, ..self }
    }

    /// Persistent state: as [`Buffer::new`], kept from one inference to the next.
    pub const fn state(pool: usize, offset: usize, size: usize, start: u32, end: u32) -> Self {
        Buffer {
            persistent: true,
            ..Buffer::new(pool, offset, size, start, end)
        }
    }

    /// Whether it is live during call `call`.
    pub const fn live_at(&self, call: u32) -> bool {
        self.start <= call && call < self.end
    }
}

/// Where an operand's bytes come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// No tensor (a left-out optional input), or one handed out by an earlier slot of the
    /// same list (a tensor read twice is one region).
    Absent,
    /// A planned buffer: an index into the model's buffers.
    Buffer(u32),
    /// An input the call also writes (in place): its bytes are the output with this index.
    InPlace(u32),
    /// An input whose planned buffer shares bytes with output `output` of the same call,
    /// which is the input's last reader and whose kernel certifies the shift between them
    /// (it reads each input element before it writes any output byte placed over it). The
    /// two are handed out as one region, the output's: see
    /// [`Inputs::shared`](crate::Inputs::shared).
    Over {
        /// The input's buffer: an index into the model's buffers.
        buffer: u32,
        /// The output holding the union of both.
        output: u32,
    },
    /// A model input or output left out of the pools (`io_in_pools = false`): the
    /// firmware supplies it.
    Unplanned,
}

/// One operand of a call, or one input or output of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Its bytes.
    pub source: Source,
    /// The tensor it holds: an index into the model's tensors, when the model describes
    /// them (`.tflite` models do).
    pub tensor: Option<u32>,
}

impl Slot {
    /// No tensor, or one an earlier slot of the list already hands out.
    pub const ABSENT: Slot = Slot {
        source: Source::Absent,
        tensor: None,
    };

    /// Planned buffer `buffer`, holding `tensor`.
    pub const fn buffer(buffer: u32, tensor: Option<u32>) -> Self {
        Slot {
            source: Source::Buffer(buffer),
            tensor,
        }
    }

    /// An input whose bytes are output `output` of the same call.
    pub const fn in_place(output: u32, tensor: Option<u32>) -> Self {
        Slot {
            source: Source::InPlace(output),
            tensor,
        }
    }

    /// An input in buffer `buffer` that shares bytes with output `output` of the same call.
    pub const fn over(buffer: u32, output: u32, tensor: Option<u32>) -> Self {
        Slot {
            source: Source::Over { buffer, output },
            tensor,
        }
    }

    /// A model input or output left out of the pools.
    pub const fn unplanned(tensor: Option<u32>) -> Self {
        Slot {
            source: Source::Unplanned,
            tensor,
        }
    }
}

/// One operator call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CallInfo<'a> {
    /// The operator.
    pub op: Op,
    /// Its builtin options (`.tflite` models; [`Options::None`] otherwise).
    pub options: Options,
    /// What it reads, in the model's order.
    pub inputs: &'a [Slot],
    /// What it writes, in the model's order.
    pub outputs: &'a [Slot],
    /// Its scratch buffers, in order: indices into the model's buffers.
    pub scratch: &'a [u32],
}

/// Everything about one planned model, as `const` data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelInfo<'a> {
    /// Its name.
    pub name: &'a str,
    /// Every planned buffer.
    pub buffers: &'a [Buffer],
    /// The operator calls, in execution order.
    pub calls: &'a [CallInfo<'a>],
    /// The model's inputs, in its order.
    pub inputs: &'a [Slot],
    /// The model's outputs, in its order.
    pub outputs: &'a [Slot],
    /// Shape, element type and quantization of each tensor, when the model file gives
    /// them (empty for usmp's JSON IR).
    pub tensors: &'a [Tensor],
    /// For each call `i`, `live[live_from[i]..live_from[i + 1]]` are the workspace
    /// buffers live during it, in address order within each pool: the certificate
    /// [`check`](crate::check) reads to prove the plan in linear time.
    pub live: &'a [u32],
    /// Where each call's list starts in `live`; one more entry than calls.
    pub live_from: &'a [u32],
    /// The constant buffers, in address order within each pool.
    pub constant_order: &'a [u32],
    /// For each pool, the size of this model's image in it (0 for workspace pools).
    pub images: &'a [usize],
}
