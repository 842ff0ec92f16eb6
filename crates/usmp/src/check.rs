//! The plan, proven by the compiler: [`check`] runs in a `const` of every generated module,
//! so a stale or hand-edited file does not build. It reads a certificate the generator
//! writes (each call's live buffers in address order, the constants in address order) and
//! so takes time linear in the plan's size, where comparing every pair would not.
//!
//! What it proves is what [`Session`](crate::Session) relies on to hand out regions:
//!
//! - every buffer lies inside its pool (or its model's image of a constant pool), at an
//!   offset the pool's alignment allows;
//! - every two workspace buffers live during the same call share no byte, but for an
//!   input and an output a call declares to share ([`Source::Over`]: the input dies with the
//!   call, the output is born with it, and they are handed out as one region), and no two
//!   constants of a model share a byte;
//! - every region a call hands out is live during that call, and a call never hands out
//!   the same buffer twice where one of the two is writable.
//!
//! [`check_module`] proves what the models of one module rely on together: each
//! workspace pool's size is its storage's, and no model's state is under another model's
//! buffers.

use crate::plan::{Buffer, ModelInfo, PoolInfo, PoolKind, Slot, Source};

/// `?` for `const fn`, where the operator is not yet allowed.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Err(e),
        }
    };
}

/// What [`check`] found wrong. Each says which rule, and [`Violation::fail`] stops the
/// build with that message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Violation {
    /// A pool's alignment is not a power of two, or the images table does not list every
    /// pool.
    Pool,
    /// A buffer names no pool, or lies (partly) outside it, or at a misaligned offset, or
    /// holds more bytes (`len`) than it reserves (`size`).
    OutsidePool {
        /// The buffer's index.
        buffer: usize,
    },
    /// A buffer's live range is empty of sense (end before start, or past the last call).
    LiveRange {
        /// The buffer's index.
        buffer: usize,
    },
    /// The certificate of a call's live buffers is malformed: an entry is not a workspace
    /// buffer live then, entries are out of address order or repeated, or buffers are
    /// missing from it.
    Certificate {
        /// The call.
        call: usize,
    },
    /// Two buffers live during the same call share bytes.
    Overlap {
        /// The call during which they are both live.
        call: usize,
        /// One of them.
        a: usize,
        /// The other.
        b: usize,
    },
    /// Two constants share bytes, or the list of constants is malformed.
    Constants {
        /// A constant named in the list.
        buffer: usize,
    },
    /// A call (or the model's inputs) hands out a region that is not live then, a
    /// constant to be written, or a writable buffer twice.
    Slot {
        /// The call, or `usize::MAX` for the model's inputs and outputs (which must be
        /// live at call 0 and at the last call).
        call: usize,
    },
    /// A workspace pool's `size` is not the size of the storage the module gives it
    /// ([`check_module`]).
    Storage {
        /// The pool.
        pool: usize,
    },
    /// A model's persistent state shares bytes with a buffer of another model of the same
    /// module, which would overwrite it between two of its inferences ([`check_module`]).
    State {
        /// The model whose state it is (its index in the module's list).
        model: usize,
        /// The state buffer.
        buffer: usize,
    },
}

/// Each violation's rule, written once for [`Violation::message`] (what usmp-build
/// reports at build time) and [`Violation::fail`] (the generated file's compile error).
macro_rules! rules {
    ($($pattern:pat => $rule:literal,)*) => {
        impl Violation {
            /// The rule broken, as a sentence.
            pub const fn message(self) -> &'static str {
                match self {
                    $($pattern => $rule,)*
                }
            }

            /// Stops compile-time evaluation with a message naming the rule broken.
            pub const fn fail(self) -> ! {
                match self {
                    $($pattern => panic!(concat!(
                        "usmp: ",
                        $rule,
                        "; this file is stale or was edited: rebuild to regenerate it"
                    )),)*
                }
            }
        }
    };
}

rules! {
        Violation::Pool => "a pool's alignment is not a power of two, a workspace pool is marked loaded, or a model's images do not list every pool",
        Violation::OutsidePool { .. } => "a buffer lies outside its pool or at a misaligned offset",
        Violation::LiveRange { .. } => "a buffer's live range is not inside the model's calls",
        Violation::Certificate { .. } => "the list of buffers live during a call is wrong",
        Violation::Overlap { .. } => "two buffers live during the same call overlap",
        Violation::Constants { .. } => "two constants overlap, or the list of constants is wrong",
        Violation::Slot { .. } => "a call hands out a region that is not live then, a constant to write, or a writable region twice",
        Violation::Storage { .. } => "a workspace pool's size in POOLS is not the size of its storage",
        Violation::State { .. } => "a model's state shares bytes with another model's buffer, which would overwrite it between inferences",
}

/// Whether `(pool, offset, index)` of `a` comes strictly before that of `b`, and when they
/// share a pool, `a` ends where `b` starts or before.
const fn before(a: &Buffer, ia: usize, b: &Buffer, ib: usize) -> Result<bool, ()> {
    if a.pool != b.pool {
        return Ok(a.pool < b.pool);
    }
    if a.offset > b.offset || (a.offset == b.offset && ia >= ib) {
        return Ok(false);
    }
    // Not in order is reported first; out of order entries are a malformed certificate,
    // overlapping ordered ones an overlap.
    if a.offset + a.size > b.offset {
        return Err(());
    }
    Ok(true)
}

/// Checks what the models of one module rely on together, beyond each one's [`check`]:
///
/// - each workspace pool's `size` is the size of its storage, `storage[p]` (the generated
///   code passes each static's own length; constant pools' entries are not read), so
///   the buffers `check` proves inside `size` are inside the static;
/// - no model's persistent state shares a byte with any buffer of another model: the
///   models share the workspace, and the others run between two of its inferences.
///
/// It takes time proportional to the state buffers times all buffers.
pub const fn check_module(
    pools: &[PoolInfo<'_>],
    storage: &[usize],
    models: &[&ModelInfo<'_>],
) -> Result<(), Violation> {
    if storage.len() != pools.len() {
        return Err(Violation::Pool);
    }
    let mut p = 0;
    while p < pools.len() {
        if matches!(pools[p].kind, PoolKind::Workspace) && pools[p].size != storage[p] {
            return Err(Violation::Storage { pool: p });
        }
        p += 1;
    }
    let mut m = 0;
    while m < models.len() {
        let own = models[m].buffers;
        let mut s = 0;
        while s < own.len() {
            let state = &own[s];
            if state.persistent {
                let mut n = 0;
                while n < models.len() {
                    if n != m && shares_bytes(state, models[n].buffers) {
                        return Err(Violation::State {
                            model: m,
                            buffer: s,
                        });
                    }
                    n += 1;
                }
            }
            s += 1;
        }
        m += 1;
    }
    Ok(())
}

/// Whether `state` shares a byte with any of `buffers` in its pool.
const fn shares_bytes(state: &Buffer, buffers: &[Buffer]) -> bool {
    let mut i = 0;
    while i < buffers.len() {
        let b = &buffers[i];
        // Both inside their pool (each model's `check`), so the sums do not overflow;
        // saturating all the same, as this runs on any hand-edited data.
        if b.pool == state.pool
            && b.size > 0
            && state.size > 0
            && b.offset < state.offset.saturating_add(state.size)
            && state.offset < b.offset.saturating_add(b.size)
        {
            return true;
        }
        i += 1;
    }
    false
}

/// Checks `model` against `pools`; see the module documentation for what it proves.
pub const fn check(pools: &[PoolInfo<'_>], model: &ModelInfo<'_>) -> Result<(), Violation> {
    let buffers = model.buffers;
    let calls = model.calls.len();
    if model.images.len() != pools.len() {
        return Err(Violation::Pool);
    }
    let mut p = 0;
    while p < pools.len() {
        // Only constants are copied in: a loaded workspace pool means a wrong table.
        if !pools[p].alignment.is_power_of_two()
            || (pools[p].loaded && !matches!(pools[p].kind, PoolKind::Constant))
        {
            return Err(Violation::Pool);
        }
        p += 1;
    }

    // Every buffer inside its pool; count the certificate entries it must have.
    let mut expected_live = 0usize;
    let mut constants = 0usize;
    let mut i = 0;
    while i < buffers.len() {
        let b = &buffers[i];
        if b.pool >= pools.len() {
            return Err(Violation::OutsidePool { buffer: i });
        }
        let pool = &pools[b.pool];
        let room = match pool.kind {
            PoolKind::Workspace => pool.size,
            PoolKind::Constant => model.images[b.pool],
        };
        let fits = match b.offset.checked_add(b.size) {
            Some(end) => end <= room,
            None => false,
        };
        if !fits || b.len > b.size || b.offset & (pool.alignment - 1) != 0 {
            return Err(Violation::OutsidePool { buffer: i });
        }
        if b.start > b.end || b.end as usize > calls {
            return Err(Violation::LiveRange { buffer: i });
        }
        match pool.kind {
            PoolKind::Workspace => expected_live += (b.end - b.start) as usize,
            PoolKind::Constant => {
                if b.persistent {
                    return Err(Violation::OutsidePool { buffer: i });
                }
                constants += 1;
            }
        }
        i += 1;
    }

    tri!(check_live(pools, model, expected_live));
    tri!(check_constants(pools, model, constants));

    let mut c = 0;
    while c < calls {
        let call = &model.calls[c];
        if let Err(()) = check_slots(pools, model, c, call.inputs, call.outputs, call.scratch) {
            return Err(Violation::Slot { call: c });
        }
        c += 1;
    }
    // Between calls the model's inputs are handed out writable together, its outputs
    // read-only together (never both at once: the session is borrowed for either).
    // The inputs are all live at call 0, so the certificate proves them disjoint.
    if check_slots(pools, model, 0, &[], model.inputs, &[]).is_err()
        || check_slots(pools, model, usize::MAX, model.outputs, &[], &[]).is_err()
    {
        return Err(Violation::Slot { call: usize::MAX });
    }
    Ok(())
}

/// Each call's list holds exactly the workspace buffers live during it, in address order
/// within each pool, adjacent ones disjoint: so every two of them are disjoint.
const fn check_live(
    pools: &[PoolInfo<'_>],
    model: &ModelInfo<'_>,
    expected: usize,
) -> Result<(), Violation> {
    let (buffers, live, from) = (model.buffers, model.live, model.live_from);
    let calls = model.calls.len();
    if from.len() != calls + 1 || from[0] != 0 || from[calls] as usize != live.len() {
        return Err(Violation::Certificate { call: 0 });
    }
    if live.len() != expected {
        return Err(Violation::Certificate { call: 0 });
    }
    let mut c = 0;
    while c < calls {
        let (lo, hi) = (from[c] as usize, from[c + 1] as usize);
        if lo > hi || hi > live.len() {
            return Err(Violation::Certificate { call: c });
        }
        let mut k = lo;
        let mut reach = 0;
        while k < hi {
            let id = live[k] as usize;
            if id >= buffers.len() {
                return Err(Violation::Certificate { call: c });
            }
            let b = &buffers[id];
            if !matches!(pools[b.pool].kind, PoolKind::Workspace) || !b.live_at(c as u32) {
                return Err(Violation::Certificate { call: c });
            }
            if k > lo {
                // Compared with the entry before, or, after a declared pair, with whichever
                // of the two reaches further: the pair is one region, the next entry must
                // start past both.
                let prev = reach;
                match before(&buffers[prev], prev, b, id) {
                    Ok(true) => reach = id,
                    Ok(false) => return Err(Violation::Certificate { call: c }),
                    Err(()) if live[k - 1] as usize == prev && pair(model, c, prev, id) => {
                        let (p, q) = (&buffers[prev], b);
                        if q.offset + q.size > p.offset + p.size {
                            reach = id;
                        }
                    }
                    Err(()) => {
                        return Err(Violation::Overlap {
                            call: c,
                            a: prev,
                            b: id,
                        });
                    }
                }
            } else {
                reach = id;
            }
            k += 1;
        }
        c += 1;
    }
    Ok(())
}

/// Whether buffers `a` and `b` (in either order) are an input and an output that call `c`
/// declares to share bytes ([`Source::Over`]). That the input dies with `c` and the output
/// is born with it, so both are live together during `c` alone, [`check_over`] proves for
/// every declared pair; [`check`] fails unless both hold.
const fn pair(model: &ModelInfo<'_>, c: usize, a: usize, b: usize) -> bool {
    let call = &model.calls[c];
    let mut k = 0;
    while k < call.inputs.len() {
        if let Source::Over { buffer, output } = call.inputs[k].source
            && (output as usize) < call.outputs.len()
            && let Source::Buffer(out) = call.outputs[output as usize].source
        {
            let (input, out) = (buffer as usize, out as usize);
            if (input == a && out == b) || (input == b && out == a) {
                return true;
            }
        }
        k += 1;
    }
    false
}

/// The constants, in address order within each pool, adjacent ones disjoint, each listed
/// once: so every two are disjoint.
const fn check_constants(
    pools: &[PoolInfo<'_>],
    model: &ModelInfo<'_>,
    count: usize,
) -> Result<(), Violation> {
    let (buffers, order) = (model.buffers, model.constant_order);
    if order.len() != count {
        return Err(Violation::Constants { buffer: 0 });
    }
    let mut k = 0;
    while k < order.len() {
        let id = order[k] as usize;
        if id >= buffers.len() || !matches!(pools[buffers[id].pool].kind, PoolKind::Constant) {
            return Err(Violation::Constants { buffer: id });
        }
        if k > 0 {
            let prev = order[k - 1] as usize;
            if !matches!(before(&buffers[prev], prev, &buffers[id], id), Ok(true)) {
                return Err(Violation::Constants { buffer: id });
            }
        }
        k += 1;
    }
    Ok(())
}

/// The buffer a slot reads or writes, if any; `Err` for a buffer index out of range.
const fn slot_buffer(model: &ModelInfo<'_>, s: &Slot) -> Result<Option<usize>, ()> {
    match s.source {
        Source::Buffer(b) | Source::Over { buffer: b, .. }
            if (b as usize) < model.buffers.len() =>
        {
            Ok(Some(b as usize))
        }
        Source::Buffer(_) | Source::Over { .. } => Err(()),
        _ => Ok(None),
    }
}

/// Read slot `k`, an input sharing bytes with an output ([`Source::Over`]), during `call`:
/// the output is a planned buffer of the call, the two lie in one workspace pool and meet
/// (the region handed out spans both, so nothing else may lie between them), the input
/// dies with the call and the output is born with it, and no other read slot names the
/// input's buffer or the same output.
const fn check_over(
    pools: &[PoolInfo<'_>],
    model: &ModelInfo<'_>,
    call: usize,
    reads: &[Slot],
    writes: &[Slot],
    k: usize,
) -> Result<(), ()> {
    let Source::Over { buffer, output } = reads[k].source else {
        return Ok(());
    };
    if call == usize::MAX || output as usize >= writes.len() {
        return Err(());
    }
    let Some(out) = tri!(slot_buffer(model, &writes[output as usize])) else {
        return Err(());
    };
    let (x, y) = (&model.buffers[buffer as usize], &model.buffers[out]);
    if !matches!(pools[x.pool].kind, PoolKind::Workspace)
        || x.pool != y.pool
        || x.offset > y.offset + y.size
        || y.offset > x.offset + x.size
        || x.end as usize != call + 1
        || y.start as usize != call
    {
        return Err(());
    }
    let mut j = 0;
    while j < reads.len() {
        if j != k {
            let same_output = matches!(reads[j].source,
                Source::Over { output: o, .. } | Source::InPlace(o) if o == output);
            if same_output
                || matches!(tri!(slot_buffer(model, &reads[j])), Some(b) if b == buffer as usize)
            {
                return Err(());
            }
        }
        j += 1;
    }
    Ok(())
}

/// Whether buffer `b` may be handed out during `call` (`usize::MAX`: between calls, for
/// the model's inputs and outputs), writable or not.
const fn usable(
    pools: &[PoolInfo<'_>],
    model: &ModelInfo<'_>,
    b: usize,
    call: usize,
    write: bool,
) -> bool {
    let buffer = &model.buffers[b];
    match pools[buffer.pool].kind {
        PoolKind::Constant => !write,
        PoolKind::Workspace => call == usize::MAX || buffer.live_at(call as u32),
    }
}

/// `reads` are handed out shared, `writes` and `scratch` writable: each live during
/// `call`, no constant writable, no writable buffer twice or also among the reads.
const fn check_slots(
    pools: &[PoolInfo<'_>],
    model: &ModelInfo<'_>,
    call: usize,
    reads: &[Slot],
    writes: &[Slot],
    scratch: &[u32],
) -> Result<(), ()> {
    let mut k = 0;
    while k < reads.len() {
        match reads[k].source {
            Source::InPlace(o) if o as usize >= writes.len() => return Err(()),
            _ => {}
        }
        if let Some(b) = tri!(slot_buffer(model, &reads[k]))
            && !usable(pools, model, b, call, false)
        {
            return Err(());
        }
        tri!(check_over(pools, model, call, reads, writes, k));
        k += 1;
    }
    // Writable ones: outputs, then scratch, as one list.
    let total = writes.len() + scratch.len();
    let mut k = 0;
    while k < total {
        let b = match tri!(writable(model, writes, scratch, k)) {
            Some(b) => b,
            None => {
                k += 1;
                continue;
            }
        };
        if !usable(pools, model, b, call, true) {
            return Err(());
        }
        let mut j = 0;
        while j < k {
            if let Some(other) = tri!(writable(model, writes, scratch, j))
                && other == b
            {
                return Err(());
            }
            j += 1;
        }
        let mut r = 0;
        while r < reads.len() {
            if let Some(other) = tri!(slot_buffer(model, &reads[r]))
                && other == b
            {
                return Err(());
            }
            r += 1;
        }
        k += 1;
    }
    Ok(())
}

/// The `k`-th writable buffer of a call: its outputs, then its scratch.
const fn writable(
    model: &ModelInfo<'_>,
    writes: &[Slot],
    scratch: &[u32],
    k: usize,
) -> Result<Option<usize>, ()> {
    if k < writes.len() {
        if let Source::InPlace(_) | Source::Over { .. } = writes[k].source {
            return Err(());
        }
        return slot_buffer(model, &writes[k]);
    }
    let b = scratch[k - writes.len()] as usize;
    if b >= model.buffers.len() {
        return Err(());
    }
    Ok(Some(b))
}
