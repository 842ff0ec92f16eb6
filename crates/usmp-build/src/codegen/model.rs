//! One model's module: its buffers' placements, each call's operands, the certificate the
//! runtime's `check` proves the plan from at compile time, its constants, and its
//! `::usmp::Model` impl. Every list is written once, so the text is linear in the model.

use std::collections::BTreeMap;
use std::fmt::Write;

use usmp_core::PoolKind;
use usmp_core::liveness::Origin;
use usmp_core::model::Role;

use super::{byte_string, comment, tensors, upper};
use crate::ident::constant_names;
use crate::outputs::{Embed, constants_file};
use crate::planning::{Planned, PlannedModel};

/// Constants each model module defines itself; buffer constants avoid them.
const RESERVED: &[&str] = &[
    "CALLS",
    "BUFFERS",
    "NAMES",
    "TENSORS",
    "INFO",
    "SCALES",
    "KERNELS",
    "USED_KERNELS",
];

/// A slot as the runtime's `Slot` constructors write it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Absent,
    Buffer(usize),
    InPlace(usize),
    Unplanned,
}

/// The buffer holding tensor `t`, if it is planned.
fn tensor_buffer(m: &PlannedModel, t: usize) -> Option<usize> {
    m.liveness.tensor_buffers.get(t).copied().flatten()
}

/// Writable slots for `tensors`: each buffer at most once (a repeat is absent), so no
/// bytes are handed out writable twice.
fn writable(m: &PlannedModel, tensors: &[usize]) -> Vec<(Source, Option<usize>)> {
    let mut seen = Vec::new();
    tensors
        .iter()
        .map(|&t| match tensor_buffer(m, t) {
            Some(b) if seen.contains(&b) => (Source::Absent, Some(t)),
            Some(b) => {
                seen.push(b);
                (Source::Buffer(b), Some(t))
            }
            None => (Source::Unplanned, Some(t)),
        })
        .collect()
}

/// Read slots for `tensors`: a tensor whose buffer the call also writes is in place.
fn readable(
    m: &PlannedModel,
    tensors: &[Option<usize>],
    written: &[(Source, Option<usize>)],
) -> Vec<(Source, Option<usize>)> {
    tensors
        .iter()
        .map(|&t| {
            let Some(t) = t else {
                return (Source::Absent, None);
            };
            let Some(b) = tensor_buffer(m, t) else {
                return (Source::Unplanned, Some(t));
            };
            match written.iter().position(|(s, _)| *s == Source::Buffer(b)) {
                Some(o) => (Source::InPlace(o), Some(t)),
                None => (Source::Buffer(b), Some(t)),
            }
        })
        .collect()
}

/// `&[Slot::..., ...]`; tensor indices only when the module has a tensor table.
fn slot_list(slots: &[(Source, Option<usize>)], typed: bool) -> String {
    let items: Vec<String> = slots
        .iter()
        .map(|&(source, t)| {
            let t = match t {
                Some(t) if typed => format!("Some({t})"),
                _ => "None".to_string(),
            };
            match source {
                Source::Absent => "Slot::ABSENT".to_string(),
                Source::Buffer(b) => format!("Slot::buffer({b}, {t})"),
                Source::InPlace(o) => format!("Slot::in_place({o}, {t})"),
                Source::Unplanned => format!("Slot::unplanned({t})"),
            }
        })
        .collect();
    format!("&[{}]", items.join(", "))
}

/// A buffer's live range in calls. Liveness gives every buffer one within the model's
/// calls (planning refuses a model without calls); `usmp::check` proves it again.
fn live(m: &PlannedModel, b: usize) -> (usize, usize) {
    m.liveness.problem.buffers()[b]
        .live
        .map_or((0, m.model.calls.len()), |l| {
            (l.start as usize, l.end as usize)
        })
}

/// The bytes buffer `b` holds: its largest tensor's (outputs written in place share it)
/// or its scratch's as requested; its planned size when neither is known.
fn held(m: &PlannedModel, b: usize) -> u64 {
    let planned = m.liveness.problem.buffers()[b].size;
    let exact = match &m.liveness.origins[b] {
        Origin::Tensors(tensors) => tensors
            .iter()
            .filter_map(|&t| m.model.tensors.get(t).and_then(|t| t.size.bytes()))
            .max(),
        Origin::Scratch { call, name } => m
            .liveness
            .scratch
            .get(*call)
            .and_then(|s| s.iter().find(|s| &s.name == name))
            .and_then(|s| s.size.bytes()),
    };
    exact.map_or(planned, |e| e.min(planned))
}

pub(super) fn module(
    out: &mut String,
    planned: &Planned,
    m: &PlannedModel,
    embed: &Embed,
    rt: &str,
) {
    let buffers = m.liveness.problem.buffers();
    let calls = m.model.calls.len();
    let names = buffer_names(planned, m);
    let typed = !m.tensors.is_empty();

    let _ = writeln!(
        out,
        "\n/// Model `{}` (`{}`): {calls} operator calls, planned by {}.\n#[allow(dead_code, unused_imports)]\npub mod {} {{\n    use {rt}::{{Activation, Buffer, Builtin, CallInfo, ElementType, ModelInfo, Op, Options, Padding, Quantization, Scales, Slot, Tensor}};\n",
        m.name,
        comment(&m.path),
        m.plan.algorithm,
        m.module
    );

    for (b, buffer) in buffers.iter().enumerate() {
        let a = m.plan.allocations[b];
        let (start, end) = live(m, b);
        let kind = if m.liveness.holds_state(&m.model, b) {
            "state"
        } else {
            "new"
        };
        // Regions are the bytes the buffer holds, not the granularity's padding.
        let len = held(m, b);
        let holding = if len < buffer.size {
            format!(".holding({len})")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "    /// `{}`: {} bytes at offset {} of `{}`, live during calls {start}..{end}.\n    pub const {}: Buffer = Buffer::{kind}({}, {}, {}, {start}, {end}){holding};",
            comment(&buffer.name),
            buffer.size,
            a.offset,
            planned.pools[a.pool].name,
            names[b],
            a.pool,
            a.offset,
            buffer.size,
        );
    }
    let _ = writeln!(
        out,
        "    /// Every planned buffer; slots index it.\n    pub const BUFFERS: &[Buffer] = &[{}];",
        names.join(", ")
    );
    let quoted: Vec<String> = buffers.iter().map(|b| format!("{:?}", b.name)).collect();
    let _ = writeln!(
        out,
        "    /// Each buffer's name in the model.\n    pub const NAMES: &[&str] = &[{}];",
        quoted.join(", ")
    );
    tensors::table(out, &m.module, &m.tensors, embed, rt);

    calls_table(out, m, typed);
    info(out, planned, m, typed, rt);
    constants(out, planned, m, embed);
    kernels(out, m, rt);
    model_impl(out, planned, m, rt);
    out.push_str("}\n");
    debug_assert!(calls == m.reads.len());
}

/// Buffer constant names: from the tensor (or `call<i>/<scratch>`), clear of the module's
/// own constants and of pool names.
fn buffer_names(planned: &Planned, m: &PlannedModel) -> Vec<String> {
    let stems: Vec<String> = m
        .liveness
        .origins
        .iter()
        .map(|o| match o {
            Origin::Tensors(ts) => ts
                .first()
                .map_or(String::new(), |&t| m.model.tensors[t].name.clone()),
            Origin::Scratch { call, name } => format!("call{call}/{name}"),
        })
        .collect();
    let mut reserved: Vec<String> = RESERVED.iter().map(|s| s.to_string()).collect();
    for p in &planned.pools {
        reserved.push(upper(&p.name));
        reserved.push(format!("{}_SIZE", upper(&p.name)));
    }
    let reserved: Vec<&str> = reserved.iter().map(String::as_str).collect();
    constant_names(
        &stems.iter().map(String::as_str).collect::<Vec<_>>(),
        &reserved,
    )
}

fn op(name: &str) -> String {
    match usmp::Builtin::ALL.iter().find(|(_, n, _)| *n == name) {
        Some((_, _, ident)) => format!("Op::Builtin(Builtin::{ident})"),
        None => format!("Op::Named({name:?})"),
    }
}

fn calls_table(out: &mut String, m: &PlannedModel, typed: bool) {
    out.push_str(
        "    /// The operator calls, in execution order.\n    pub const CALLS: &[CallInfo] = &[\n",
    );
    // Each call's scratch buffers by name, found in one pass over the buffers.
    let mut scratch_of: BTreeMap<(usize, &str), usize> = BTreeMap::new();
    for (b, o) in m.liveness.origins.iter().enumerate() {
        if let Origin::Scratch { call, name } = o {
            scratch_of.insert((*call, name.as_str()), b);
        }
    }
    for (i, c) in m.model.calls.iter().enumerate() {
        // A state tensor the call reads it also updates: handed out writable, after the
        // outputs, with the read slot in place of it.
        let mut written = c.writes.clone();
        for &t in m.reads.get(i).into_iter().flatten().flatten() {
            if matches!(m.model.tensors[t].role, Role::State) && !written.contains(&t) {
                written.push(t);
            }
        }
        let outputs = writable(m, &written);
        let no_reads = Vec::new();
        let inputs = readable(m, m.reads.get(i).unwrap_or(&no_reads), &outputs);
        let scratch: Vec<String> = m.liveness.scratch[i]
            .iter()
            .filter_map(|s| scratch_of.get(&(i, s.name.as_str())))
            .map(|b| b.to_string())
            .collect();
        let _ = writeln!(
            out,
            "        CallInfo {{ op: {}, options: {}, inputs: {}, outputs: {}, scratch: &[{}] }},",
            op(&c.op),
            super::options::render(m.options.get(i).unwrap_or(&usmp::Options::None)),
            slot_list(&inputs, typed),
            slot_list(&outputs, typed),
            scratch.join(", ")
        );
    }
    out.push_str("    ];\n");
}

/// The `ModelInfo`, with the certificate `::usmp::check` proves the plan from.
fn info(out: &mut String, planned: &Planned, m: &PlannedModel, typed: bool, rt: &str) {
    let buffers = m.liveness.problem.buffers();
    let calls = m.model.calls.len();
    let kind = |b: usize| buffers[b].kind;
    // Every buffer in (pool, offset, index) order, once; then each call's live list
    // inherits that order, so the whole certificate costs its own size.
    let mut order: Vec<usize> = (0..buffers.len()).collect();
    order.sort_by_key(|&b| (m.plan.allocations[b].pool, m.plan.allocations[b].offset, b));
    let mut per_call: Vec<Vec<usize>> = vec![Vec::new(); calls];
    for &b in order.iter().filter(|&&b| kind(b) == PoolKind::Workspace) {
        let (start, end) = live(m, b);
        for list in &mut per_call[start..end] {
            list.push(b);
        }
    }
    let mut from = vec![0usize];
    let mut live_list = Vec::new();
    for list in &per_call {
        live_list.extend(list.iter().map(|b| b.to_string()));
        from.push(live_list.len());
    }
    let constant_order: Vec<String> = order
        .iter()
        .filter(|&&b| kind(b) == PoolKind::Constant)
        .map(|b| b.to_string())
        .collect();
    let images: Vec<String> = planned
        .pools
        .iter()
        .map(|p| match p.kind {
            PoolKind::Workspace => "0".to_string(),
            PoolKind::Constant => format!("{}_SIZE", upper(&p.name)),
        })
        .collect();
    // A constant model input is the model's own bytes in flash: not handed out to write.
    let inputs: Vec<(Source, Option<usize>)> = writable(m, &m.model.inputs)
        .into_iter()
        .map(|(s, t)| match s {
            Source::Buffer(b) if kind(b) == PoolKind::Constant => (Source::Absent, t),
            s => (s, t),
        })
        .collect();
    let reads: Vec<Option<usize>> = m.model.outputs.iter().map(|&t| Some(t)).collect();
    let outputs = readable(m, &reads, &[]);
    let from: Vec<String> = from.iter().map(usize::to_string).collect();
    let _ = writeln!(
        out,
        "    /// The plan, as the runtime reads it.
    pub const INFO: ModelInfo = ModelInfo {{
        name: {:?},
        buffers: BUFFERS,
        calls: CALLS,
        inputs: {},
        outputs: {},
        tensors: TENSORS,
        live: &[{}],
        live_from: &[{}],
        constant_order: &[{}],
        images: &[{}],
    }};

    // The plan, proven by the compiler in time linear in its size: every buffer inside its
    // pool, buffers live together disjoint, regions handed out sound. A stale or edited
    // file does not build.
    const _: () = if let Err(v) = {rt}::check(super::POOLS, &INFO) {{
        v.fail()
    }};",
        m.name,
        slot_list(&inputs, typed),
        slot_list(&outputs, typed),
        live_list.join(", "),
        from.join(", "),
        constant_order.join(", "),
        images.join(", ")
    );
}

fn constants(out: &mut String, planned: &Planned, m: &PlannedModel, embed: &Embed) {
    for (p, pool) in planned.pools.iter().enumerate() {
        if pool.kind != PoolKind::Constant {
            continue;
        }
        let size = m.plan.pool_sizes[p];
        let name = upper(&pool.name);
        let bytes = match embed {
            Embed::OutDir => format!(
                "*include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{}\"))",
                constants_file(&m.module, &pool.name)
            ),
            // The build writes the image for OutDir; only an inline one is made here.
            Embed::Inline => format!(
                "*{}",
                byte_string(&m.liveness.constant_image(&m.model, &m.plan, p))
            ),
        };
        let _ = writeln!(
            out,
            "\n    /// Bytes of this model's constants in pool `{}`.\n    pub const {name}_SIZE: usize = {size};\n    #[unsafe(link_section = {:?})]\n    static {name}: super::Align{}<[u8; {name}_SIZE]> = super::Align{}({bytes});",
            pool.name, pool.section, pool.start_alignment, pool.start_alignment
        );
    }
}

/// `KERNELS`, `USED_KERNELS`, `invoke` and `invoke_poisoning`, with `kernels = true`;
/// without, an `invoke` and `invoke_poisoning` whose every call fails to compile saying
/// what to add (rather than rustc's bare "cannot find function").
fn kernels(out: &mut String, m: &PlannedModel, rt: &str) {
    let Some(kernels) = &m.kernels else {
        let _ = write!(
            out,
            "
    /// Implemented by nothing: `invoke` needs each call's kernel parameters, which a model
    /// planned without `kernels = true` does not have.
    #[diagnostic::on_unimplemented(
        message = \"model `{name}` was planned without `kernels = true`, so it has no `invoke`\",
        label = \"no kernel parameters were prepared for this model\",
        note = \"add `kernels = true` to model `{name}` (a .tflite model) in usmp.toml or usmp_pools!, or run your own kernels over `session.call(i)`\"
    )]
    pub trait PlannedWithoutKernels {{}}

    /// Not available without `kernels = true`: see [`PlannedWithoutKernels`].
    pub fn invoke<S: PlannedWithoutKernels>(_session: S) {{}}

    /// Not available without `kernels = true`: see [`PlannedWithoutKernels`].
    pub fn invoke_poisoning<S: PlannedWithoutKernels>(_session: S, _poison: u8) {{}}
",
            name = comment(&m.name).replace(['"', '\\', '{', '}'], "_")
        );
        return;
    };
    out.push_str(
        "    /// Each call's kernel and parameters (usmp-kernels), prepared from the model.\n    pub const KERNELS: &[::usmp_kernels::Kernel] = &[\n",
    );
    for k in kernels {
        let _ = writeln!(out, "        {k},");
    }
    let _ = write!(
        out,
        "    ];

    /// The kinds of kernel [`KERNELS`] uses: only these are linked by [`invoke`].
    pub const USED_KERNELS: u32 = ::usmp_kernels::used(KERNELS);

    /// Runs every call of `session` with [`KERNELS`].
    pub fn invoke(session: &mut {rt}::Session<'_, Model>) -> Result<(), ::usmp_kernels::CallError> {{
        ::usmp_kernels::invoke_only::<USED_KERNELS, Model>(session, KERNELS, None)
    }}

    /// [`invoke`], filling every buffer with `poison` as soon as its last call returns:
    /// a test of the plan's liveness (outputs must not change).
    pub fn invoke_poisoning(
        session: &mut {rt}::Session<'_, Model>,
        poison: u8,
    ) -> Result<(), ::usmp_kernels::CallError> {{
        ::usmp_kernels::invoke_only::<USED_KERNELS, Model>(session, KERNELS, Some(poison))
    }}
",
    );
}

fn model_impl(out: &mut String, planned: &Planned, m: &PlannedModel, rt: &str) {
    let arms: String = planned
        .pools
        .iter()
        .enumerate()
        .filter(|(_, p)| p.kind == PoolKind::Constant)
        .map(|(p, pool)| format!("                {p} => &{}.0,\n", upper(&pool.name)))
        .collect();
    let _ = write!(
        out,
        "
    /// Model `{name}`: `Model::session(&mut workspace)` runs it; kernels see it through
    /// `{rt}::Model`.
    #[derive(Debug)]
    pub struct Model;

    // SAFETY: `INFO` passes `{rt}::check` against `super::POOLS` (asserted above), and
    // `constants(p)` is this model's image in constant pool `p`, of `INFO.images[p]`
    // bytes (the same constants), empty for any other index.
    unsafe impl {rt}::Model for Model {{
        type Pools = super::Pools;
        const INFO: &'static ModelInfo = &INFO;

        fn constants(pool: usize) -> &'static [u8] {{
            match pool {{
{arms}                _ => &[],
            }}
        }}
    }}

    impl Model {{
        /// A session of this model in `workspace`, for as long as it is borrowed.
        pub fn session(workspace: &mut super::Workspace) -> {rt}::Session<'_, Model> {{
            {rt}::Session::new(workspace)
        }}
    }}
",
        name = m.name
    );
}
