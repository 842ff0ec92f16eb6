//! Running a planned model: the [`Session`] that hands out each call's regions of a
//! [`Model`]. This file holds the crate's only `unsafe` that makes references to pool
//! bytes.

use core::marker::PhantomData;

use crate::model::Model;
use crate::op::{Op, Tensor};
use crate::plan::{Buffer, CallInfo, ModelInfo, PoolKind, Slot, Source};
use crate::workspace::{Pools, Workspace};

/// Where regions come from: the pools' bases and the model's constants. Carries no
/// lifetime; the types holding it do.
#[derive(Clone, Copy)]
struct Memory {
    info: &'static ModelInfo<'static>,
    base: fn(usize) -> *mut u8,
    constant: fn(&Buffer) -> &'static [u8],
    copy: fn(usize) -> *mut u8,
    kinds: &'static [crate::plan::PoolInfo<'static>],
}

impl Memory {
    fn of<M: Model>() -> Self {
        Memory {
            info: M::INFO,
            base: M::Pools::base,
            constant: M::constant,
            copy: M::copy,
            kinds: M::Pools::POOLS,
        }
    }

    fn buffer(&self, b: u32) -> Option<&'static Buffer> {
        self.info.buffers.get(b as usize)
    }

    fn is_constant(&self, b: &Buffer) -> bool {
        self.kinds.get(b.pool).map(|p| p.kind) == Some(PoolKind::Constant)
    }

    /// The bytes of buffer `b`, shared.
    ///
    /// # Safety
    ///
    /// If `b` is a workspace buffer: the caller holds the workspace borrowed for `'a`,
    /// and no writable region overlapping `b` is alive during `'a`.
    unsafe fn shared<'a>(&self, b: u32) -> Option<&'a [u8]> {
        let buffer = self.buffer(b)?;
        if self.is_constant(buffer) {
            if !self.kinds.get(buffer.pool).is_some_and(|p| p.loaded) {
                return Some((self.constant)(buffer));
            }
            let copy = (self.copy)(buffer.pool);
            if copy.is_null() {
                // A model that does not say where its copy is: no weights, not garbage.
                return None;
            }
            // SAFETY: the checked plan puts the buffer's bytes inside the model's image
            // of this pool, which `copy` mirrors byte for byte (`Model`'s contract); the
            // caller holds the workspace, so `take` (or `steal`) filled the copy before
            // it existed (`Pools::load`), and nothing writes it afterwards while a
            // workspace is borrowed.
            return Some(unsafe {
                core::slice::from_raw_parts(copy.wrapping_add(buffer.offset), buffer.len)
            });
        }
        // SAFETY: the plan is checked (`Model`'s contract): the buffer's `size` bytes,
        // and so its first `len`, lie inside its pool, whose bytes `take` initialised; no
        // writable region overlaps it (the caller's promise), so a shared slice is sound.
        Some(unsafe { core::slice::from_raw_parts(self.at(buffer), buffer.len) })
    }

    /// The bytes of workspace buffer `b`, writable; `None` for a constant.
    ///
    /// # Safety
    ///
    /// The caller holds the workspace borrowed mutably for `'a`, and no other region
    /// overlapping `b` is alive during `'a`.
    unsafe fn exclusive<'a>(&self, b: u32) -> Option<&'a mut [u8]> {
        let buffer = self.buffer(b)?;
        if self.is_constant(buffer) {
            return None;
        }
        // SAFETY: its first `len <= size` bytes are inside its pool and initialised (the
        // checked plan, `take`); exclusive by the caller's promise.
        Some(unsafe { core::slice::from_raw_parts_mut(self.at(buffer), buffer.len) })
    }

    /// Bytes `offset..offset + len` of workspace pool `pool`, writable.
    ///
    /// # Safety
    ///
    /// As [`Memory::exclusive`], for those bytes, which the checked plan puts inside the
    /// pool (a buffer's, or the union of a declared pair's).
    unsafe fn exclusive_at<'a>(&self, pool: usize, offset: usize, len: usize) -> &'a mut [u8] {
        let at = (self.base)(pool).wrapping_add(offset);
        // SAFETY: inside the pool and initialised (the checked plan, `take`); exclusive by
        // the caller's promise.
        unsafe { core::slice::from_raw_parts_mut(at, len) }
    }

    /// The region handed out for an output that input buffer `input` shares bytes with
    /// ([`Source::Over`]), and where each lies in it.
    fn union(&self, input: u32, output: u32, slot: usize) -> Option<Union> {
        let (x, y) = (self.buffer(input)?, self.buffer(output)?);
        let lo = x.offset.min(y.offset);
        let hi = (x.offset + x.len).max(y.offset + y.len);
        Some(Union {
            pool: y.pool,
            offset: lo,
            len: hi - lo,
            shared: Shared {
                output: slot,
                input_at: x.offset - lo,
                input_len: x.len,
                output_at: y.offset - lo,
                output_len: y.len,
            },
        })
    }

    fn at(&self, buffer: &Buffer) -> *mut u8 {
        // `wrapping_add` keeps this safe code; the checked plan keeps it in the pool.
        (self.base)(buffer.pool).wrapping_add(buffer.offset)
    }
}

/// The buffer of output slot `output` of a call's `outputs`, which a declared pair
/// ([`Source::Over`]) names.
fn pair_output(outputs: &[Slot], output: u32) -> Option<u32> {
    match outputs.get(output as usize)?.source {
        Source::Buffer(y) => Some(y),
        _ => None,
    }
}

/// A declared pair's region: bytes `offset..offset + len` of pool `pool`.
#[derive(Clone, Copy)]
struct Union {
    pool: usize,
    offset: usize,
    len: usize,
    shared: Shared,
}

/// Where an input and the output it shares bytes with ([`Source::Over`]) lie in the one
/// region handed out for the output. The kernel reads the input and writes the output in
/// that region, in an order that never overwrites an input byte it has still to read; it
/// checks [`Shared::shift`] against the window it certifies before it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shared {
    /// The output whose region holds both.
    pub output: usize,
    /// Where the input's bytes start in the region.
    pub input_at: usize,
    /// How many bytes the input holds.
    pub input_len: usize,
    /// Where the output's bytes start in the region.
    pub output_at: usize,
    /// How many bytes the output holds.
    pub output_len: usize,
}

impl Shared {
    /// The input's bytes in the region.
    pub fn input(&self) -> core::ops::Range<usize> {
        self.input_at..self.input_at + self.input_len
    }

    /// The output's bytes in the region.
    pub fn output(&self) -> core::ops::Range<usize> {
        self.output_at..self.output_at + self.output_len
    }

    /// The output's start less the input's, in bytes: the shift the plan chose.
    pub fn shift(&self) -> isize {
        self.output_at as isize - self.input_at as isize
    }
}

/// A model running in its workspace: hands out each call's regions, the model's inputs
/// and outputs, and can poison dead buffers. It borrows the [`Workspace`] mutably, so two
/// sessions never run at once; several models share one workspace one after the other.
pub struct Session<'w, M: Model> {
    _ws: &'w mut Workspace<M::Pools>,
    memory: Memory,
}

impl<M: Model> core::fmt::Debug for Session<'_, M> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Session")
            .field("model", &M::INFO.name)
            .finish()
    }
}

impl<'w, M: Model> Session<'w, M> {
    /// Model `M`, running in `workspace` for as long as it is borrowed.
    pub fn new(workspace: &'w mut Workspace<M::Pools>) -> Self {
        Session {
            _ws: workspace,
            memory: Memory::of::<M>(),
        }
    }

    /// Its plan.
    pub fn info(&self) -> &'static ModelInfo<'static> {
        M::INFO
    }

    /// How many operator calls it makes.
    pub fn calls(&self) -> usize {
        M::INFO.calls.len()
    }

    /// The regions of call `index`, or `None` past the last call.
    pub fn call(&mut self, index: usize) -> Option<Call<'_>> {
        let info = M::INFO.calls.get(index)?;
        Some(Call {
            index,
            info,
            inputs: Inputs {
                slots: info.inputs,
                outputs: info.outputs,
                memory: self.memory,
                _borrow: PhantomData,
            },
            outputs: Writable {
                slots: Writes::Slots(info.outputs),
                over: info.inputs,
                next: 0,
                memory: self.memory,
                _borrow: PhantomData,
            },
            scratch: Writable {
                slots: Writes::Buffers(info.scratch),
                over: &[],
                next: 0,
                memory: self.memory,
                _borrow: PhantomData,
            },
        })
    }

    /// The model's inputs, writable, in its order: fill them before call 0 (after it, their
    /// bytes may already hold other buffers). An input left out of the pools yields `None`.
    pub fn inputs(&mut self) -> Writable<'_> {
        Writable {
            slots: Writes::Slots(M::INFO.inputs),
            over: &[],
            next: 0,
            memory: self.memory,
            _borrow: PhantomData,
        }
    }

    /// Model input `k`, writable; `None` if there is none or it is left out of the pools.
    /// It is exactly the tensor's bytes (not the planned buffer, which the size granularity
    /// may round up), so `copy_from_slice` of the features works whatever their size.
    pub fn input(&mut self, k: usize) -> Option<&mut [u8]> {
        self.inputs().nth(k).flatten()
    }

    /// The model's outputs, read-only, in its order: read them after the last call.
    pub fn outputs(&self) -> Inputs<'_> {
        Inputs {
            slots: M::INFO.outputs,
            outputs: &[],
            memory: self.memory,
            _borrow: PhantomData,
        }
    }

    /// Model output `k`, exactly the tensor's bytes; `None` if there is none or it is left
    /// out of the pools.
    pub fn output(&self, k: usize) -> Option<&[u8]> {
        self.outputs().get(k)
    }

    /// Fills with `byte` every workspace buffer that is dead once call `index` has
    /// returned. Running with this between calls tests the plan's liveness: a kernel
    /// that read a dead buffer would see the poison.
    ///
    /// An input that call `index` overwrote with its output ([`Source::Over`]) died when
    /// the call began: its bytes outside the output are poisoned, those inside hold the
    /// output.
    pub fn poison_dead(&mut self, index: usize, byte: u8) {
        let calls = M::INFO.calls.len();
        let end = index.saturating_add(1);
        let (over, outputs) = M::INFO
            .calls
            .get(index)
            .map_or((&[][..], &[][..]), |c| (c.inputs, c.outputs));
        for (i, b) in M::INFO.buffers.iter().enumerate() {
            if b.end as usize != end || end >= calls {
                continue;
            }
            // SAFETY: `self` borrows the workspace mutably and no region is alive
            // during this call (every one borrows `self`).
            let Some(bytes) = (unsafe { self.memory.exclusive(i as u32) }) else {
                continue;
            };
            let partner = over.iter().find_map(|s| match s.source {
                Source::Over { buffer, output } if buffer as usize == i => {
                    self.memory.buffer(pair_output(outputs, output)?)
                }
                _ => None,
            });
            match partner {
                // The output's bytes, relative to the input's start, kept.
                Some(y) => {
                    let lo = y.offset.saturating_sub(b.offset).min(bytes.len());
                    let hi = (y.offset + y.len).saturating_sub(b.offset).min(bytes.len());
                    bytes[..lo].fill(byte);
                    bytes[hi..].fill(byte);
                }
                None => bytes.fill(byte),
            }
        }
    }

    /// Fills with `byte` every workspace buffer of this model but its persistent state:
    /// whatever another model or an earlier inference left there is gone, and a model
    /// that needed it would show it.
    pub fn poison_all(&mut self, byte: u8) {
        self.fill_where(byte, |b| !b.persistent);
    }

    fn fill_where(&mut self, byte: u8, pick: impl Fn(&Buffer) -> bool) {
        for (i, b) in M::INFO.buffers.iter().enumerate() {
            if pick(b) {
                // SAFETY: `self` borrows the workspace mutably and no region is alive
                // during this call (every one borrows `self`).
                if let Some(bytes) = unsafe { self.memory.exclusive(i as u32) } {
                    bytes.fill(byte);
                }
            }
        }
    }
}

/// What one operator call works on. Its fields borrow apart: read `inputs` while writing
/// `outputs` and `scratch`. Every region live during the call is disjoint from every
/// other, so the only shared bytes are those a slot says it shares ([`Source::InPlace`]).
#[derive(Debug)]
pub struct Call<'a> {
    index: usize,
    info: &'static CallInfo<'static>,
    /// What the call reads, in the model's order.
    pub inputs: Inputs<'a>,
    /// What the call writes, in the model's order.
    pub outputs: Writable<'a>,
    /// Its scratch buffers, in order.
    pub scratch: Writable<'a>,
}

impl Call<'_> {
    /// Its position in execution order.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Its operator.
    pub fn op(&self) -> Op {
        self.info.op
    }

    /// Its builtin options: padding, strides, fused activation, ...
    pub fn options(&self) -> crate::Options {
        self.info.options
    }

    /// Its description: operator and operands.
    pub fn info(&self) -> &'static CallInfo<'static> {
        self.info
    }
}

/// Regions read-only: a call's inputs, or a model's outputs. Reading a tensor twice gives
/// the same bytes twice, which is fine for shared slices.
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    slots: &'static [Slot],
    /// The call's outputs, which declared pairs name; empty for the model's outputs.
    outputs: &'static [Slot],
    memory: Memory,
    _borrow: PhantomData<&'a [u8]>,
}

impl core::fmt::Debug for Inputs<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.slots).finish()
    }
}

impl<'a> Inputs<'a> {
    /// How many there are.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The bytes of input `k`: `None` if there is none, or it is absent, left out of the
    /// pools, or written in place (see [`Inputs::in_place`]).
    pub fn get(&self, k: usize) -> Option<&'a [u8]> {
        match self.slots.get(k)?.source {
            // SAFETY: `'a` is a borrow of the session, which borrows the workspace; the
            // checked plan keeps every buffer handed out writable during it (the call's
            // outputs and scratch) disjoint from every buffer read.
            Source::Buffer(b) => unsafe { self.memory.shared(b) },
            _ => None,
        }
    }

    /// Where input `k`'s bytes come from.
    pub fn source(&self, k: usize) -> Option<Source> {
        self.slots.get(k).map(|s| s.source)
    }

    /// If input `k` is written in place, the index of the output that holds its bytes.
    pub fn in_place(&self, k: usize) -> Option<usize> {
        match self.slots.get(k)?.source {
            Source::InPlace(o) => Some(o as usize),
            _ => None,
        }
    }

    /// If input `k` shares bytes with an output ([`Source::Over`]), where the two lie in
    /// the region handed out for that output, which holds them both.
    pub fn shared(&self, k: usize) -> Option<Shared> {
        match self.slots.get(k)?.source {
            Source::Over { buffer, output } => {
                let y = pair_output(self.outputs, output)?;
                Some(self.memory.union(buffer, y, output as usize)?.shared)
            }
            _ => None,
        }
    }

    /// Element type, shape and quantization of input `k`, when the model gives them.
    pub fn tensor(&self, k: usize) -> Option<&'static Tensor> {
        let t = self.slots.get(k)?.tensor?;
        self.memory.info.tensors.get(t as usize)
    }

    /// Every input's bytes, in order (`None` as for [`Inputs::get`]).
    pub fn iter(&self) -> impl Iterator<Item = Option<&'a [u8]>> + '_ {
        (0..self.slots.len()).map(|k| self.get(k))
    }
}

#[derive(Clone, Copy, Debug)]
enum Writes {
    Slots(&'static [Slot]),
    Buffers(&'static [u32]),
}

/// Regions writable: a call's outputs or scratch, or a model's inputs. Each region is
/// handed out once with the whole lifetime (as an iterator, like `slice::IterMut`), or
/// reborrowed one at a time with [`Writable::get_mut`].
pub struct Writable<'a> {
    slots: Writes,
    /// The call's inputs, for a call's outputs: an output an input shares bytes with is
    /// handed out as the union of both. Empty otherwise.
    over: &'static [Slot],
    next: usize,
    memory: Memory,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl core::fmt::Debug for Writable<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Writable")
            .field("slots", &self.slots)
            .field("next", &self.next)
            .finish()
    }
}

impl<'a> Writable<'a> {
    /// How many there are, including those already handed out by the iterator.
    pub fn len(&self) -> usize {
        match self.slots {
            Writes::Slots(s) => s.len(),
            Writes::Buffers(b) => b.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn buffer(&self, k: usize) -> Option<u32> {
        match self.slots {
            Writes::Slots(s) => match s.get(k)?.source {
                Source::Buffer(b) => Some(b),
                _ => None,
            },
            Writes::Buffers(b) => b.get(k).copied(),
        }
    }

    /// Element type, shape and quantization of region `k`, when the model gives them.
    pub fn tensor(&self, k: usize) -> Option<&'static Tensor> {
        let Writes::Slots(s) = self.slots else {
            return None;
        };
        let t = s.get(k)?.tensor?;
        self.memory.info.tensors.get(t as usize)
    }

    /// Region `k`, for as long as `self` is borrowed; `None` if there is none, it is
    /// absent or left out of the pools, or the iterator already handed it out.
    // Inlined always: out of line it takes the session's `ModelInfo` by address, and the
    // linker then keeps all of it, tensor table and scales (30 KB of person_detect's
    // flash on firmware-m55 once a stage's scratch was a second caller).
    #[inline(always)]
    pub fn get_mut(&mut self, k: usize) -> Option<&mut [u8]> {
        if k < self.next {
            return None;
        }
        // SAFETY: `self` is borrowed mutably for the result's life, and region `k` is
        // not handed out by the iterator (k >= next).
        unsafe { self.region(k) }
    }

    /// Region `k`: its buffer, or, for an output an input shares bytes with, the union of
    /// the two.
    ///
    /// # Safety
    ///
    /// The session is borrowed mutably for `'b`, during which region `k` is handed out
    /// once. The checked plan then keeps it disjoint from every other region of the call:
    /// the shared input is not handed out as an input ([`Inputs::get`] is `None` for it).
    // Inlined always, as `get_mut`.
    #[inline(always)]
    unsafe fn region<'b>(&self, k: usize) -> Option<&'b mut [u8]> {
        let b = self.buffer(k)?;
        let over = self.over.iter().find_map(|s| match s.source {
            Source::Over { buffer, output } if output as usize == k => Some(buffer),
            _ => None,
        });
        match over.and_then(|x| self.memory.union(x, b, k)) {
            // SAFETY: the caller's promise; the checked plan puts the union inside the
            // pool and lets no other live buffer between or over the pair.
            Some(u) => Some(unsafe { self.memory.exclusive_at(u.pool, u.offset, u.len) }),
            // SAFETY: the caller's promise.
            None => unsafe { self.memory.exclusive(b) },
        }
    }

    /// The first `N` regions at once, each for the whole lifetime: `None` if there are
    /// fewer, one of them is absent, or the iterator has started.
    pub fn array<const N: usize>(mut self) -> Option<[&'a mut [u8]; N]> {
        if self.next != 0 || self.len() < N {
            return None;
        }
        let mut out: [Option<&'a mut [u8]>; N] = [const { None }; N];
        for slot in &mut out {
            *slot = Some(self.next()??);
        }
        Some(out.map(|s| s.unwrap_or_default()))
    }
}

impl<'a> Iterator for Writable<'a> {
    /// A region, or `None` for an absent one or one left out of the pools.
    type Item = Option<&'a mut [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        let k = self.next;
        if k >= self.len() {
            return None;
        }
        self.next += 1;
        // SAFETY: each index is handed out once (`next` only grows) and `'a` is a mutable
        // borrow of the session; the checked plan keeps the call's writable regions
        // pairwise distinct, disjoint, and disjoint from what it reads.
        Some(unsafe { self.region(k) })
    }
}
