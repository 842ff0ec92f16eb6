//! One model's module: its buffers' placements, each call's operands, the certificate the
//! runtime's `check` proves the plan from at compile time, its constants, and its
//! `::usmp::Model` impl. Every list is written once, so the text is linear in the model.

use std::fmt::Write;

use usmp::{Slot, Source};
use usmp_core::PoolKind;
use usmp_core::liveness::Origin;

use super::{byte_string, comment, tensors, upper};
use crate::ident::constant_names;
use crate::outputs::{Embed, Paths, constants_file};
use crate::planned::{Planned, PlannedModel};
use crate::spec::image_section;

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
fn slot(s: &Slot) -> String {
    let t = match s.tensor {
        Some(t) => format!("Some({t})"),
        None => "None".to_string(),
    };
    match s.source {
        Source::Absent => "Slot::ABSENT".to_string(),
        Source::Buffer(b) => format!("Slot::buffer({b}, {t})"),
        Source::InPlace(o) => format!("Slot::in_place({o}, {t})"),
        Source::Over { buffer, output } => format!("Slot::over({buffer}, {output}, {t})"),
        Source::Unplanned => format!("Slot::unplanned({t})"),
    }
}

/// `&[Slot::..., ...]`.
fn slot_list(slots: &[Slot]) -> String {
    let items: Vec<String> = slots.iter().map(slot).collect();
    format!("&[{}]", items.join(", "))
}

/// `[a, b, c]` without brackets.
fn joined<T: ToString>(items: &[T]) -> String {
    items
        .iter()
        .map(T::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn module(
    out: &mut String,
    planned: &Planned,
    m: &PlannedModel,
    embed: &Embed,
    paths: Paths<'_>,
) {
    let rt = paths.runtime;
    let buffers = m.liveness.problem.buffers();
    let calls = m.model.calls.len();
    let names = buffer_names(planned, m);

    let _ = writeln!(
        out,
        "\n/// Model `{}` (`{}`): {calls} operator calls, planned by {}.\n#[allow(dead_code, unused_imports)]\npub mod {} {{\n    use {rt}::{{Activation, Buffer, Builtin, CallInfo, ElementType, ModelInfo, Op, Options, Padding, Quantization, Scales, Slot, Tensor}};\n",
        m.name,
        comment(&m.path),
        m.plan.algorithm,
        m.module
    );

    for (b, (buffer, low)) in buffers.iter().zip(&m.lowered.buffers).enumerate() {
        let kind = if low.persistent { "state" } else { "new" };
        let holding = if low.len < low.size {
            format!(".holding({})", low.len)
        } else {
            String::new()
        };
        let (start, end) = (low.start, low.end);
        let _ = writeln!(
            out,
            "    /// `{}`: {} bytes at offset {} of `{}`, live during calls {start}..{end}.\n    pub const {}: Buffer = Buffer::{kind}({}, {}, {}, {start}, {end}){holding};",
            comment(&buffer.name),
            low.size,
            low.offset,
            planned.pools[low.pool].name,
            names[b],
            low.pool,
            low.offset,
            low.size,
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

    calls_table(out, m);
    info(out, planned, m, rt);
    constants(out, planned, m, embed);
    kernels(out, m, paths);
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

fn calls_table(out: &mut String, m: &PlannedModel) {
    out.push_str(
        "    /// The operator calls, in execution order.\n    pub const CALLS: &[CallInfo<'static>] = &[\n",
    );
    for (i, (c, low)) in m.model.calls.iter().zip(&m.lowered.calls).enumerate() {
        let _ = writeln!(
            out,
            "        CallInfo {{ op: {}, options: {}, inputs: {}, outputs: {}, scratch: &[{}] }},",
            op(&c.op),
            super::options::render(m.options.get(i).unwrap_or(&usmp::Options::None)),
            slot_list(&low.inputs),
            slot_list(&low.outputs),
            joined(&low.scratch)
        );
    }
    out.push_str("    ];\n");
}

/// The `ModelInfo`, with the certificate `::usmp::check` proves the plan from.
fn info(out: &mut String, planned: &Planned, m: &PlannedModel, rt: &str) {
    let low = &m.lowered;
    // Constant pools' images by the name of their size constant, defined below.
    let images: Vec<String> = planned
        .pools
        .iter()
        .map(|p| match p.kind {
            PoolKind::Workspace => "0".to_string(),
            PoolKind::Constant => format!("{}_SIZE", upper(&p.name)),
        })
        .collect();
    let _ = writeln!(
        out,
        "    /// The plan, as the runtime reads it.
    pub const INFO: ModelInfo<'static> = ModelInfo {{
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
        slot_list(&low.inputs),
        slot_list(&low.outputs),
        joined(&low.live),
        joined(&low.live_from),
        joined(&low.constant_order),
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
            // Beside the module, wherever `out_dir` put it: a path in `include_bytes!` is
            // relative to the file that holds it, the module the firmware `include!`s.
            Embed::OutDir => format!(
                "*include_bytes!(\"{}\")",
                constants_file(&m.module, &pool.name)
            ),
            // The build writes the image for OutDir; only an inline one is made here.
            Embed::Inline => format!(
                "*{}",
                byte_string(&m.liveness.constant_image(&m.model, &m.plan, p))
            ),
        };
        // A pool run from RAM keeps the image in its load region's section; the pool's
        // own section holds the copy (`Model::copy`).
        let (section, stored) = match &pool.load {
            Some(load) => (
                image_section(&pool.section),
                format!(" as stored in {load}, copied into the pool when the workspace is taken"),
            ),
            None => (pool.section.clone(), String::new()),
        };
        let _ = writeln!(
            out,
            "\n    /// Bytes of this model's constants in pool `{}`.\n    pub const {name}_SIZE: usize = {size};\n    /// This model's constants in pool `{}`{stored}.\n    #[unsafe(link_section = {section:?})]\n    static {name}: super::Align{}<[u8; {name}_SIZE]> = super::Align{}({bytes});",
            pool.name, pool.name, pool.start_alignment, pool.start_alignment
        );
    }
}

/// `KERNELS`, `USED_KERNELS`, `invoke` and `invoke_poisoning`, with `kernels = true`;
/// without, an `invoke` and `invoke_poisoning` whose every call fails to compile saying
/// what to add (rather than rustc's bare "cannot find function").
fn kernels(out: &mut String, m: &PlannedModel, paths: Paths<'_>) {
    let (rt, k) = (paths.runtime, paths.kernels);
    let Some(kernels) = &m.kernels else {
        let _ = write!(
            out,
            "
    /// Implemented by nothing: `invoke` needs each call's kernel parameters, which a model
    /// planned without `kernels = true` does not have.
    #[diagnostic::on_unimplemented(
        message = \"model `{name}` was planned without `kernels = true`, so it has no `invoke`\",
        label = \"no kernel parameters were prepared for this model\",
        note = \"add `kernels = true` to model `{name}` (a .tflite model) in usmp.toml or usmp_pools!\",
        note = \"or run your own kernels over `session.call(i)`\"
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
    let _ = write!(
        out,
        "    /// Each call's kernel and parameters (usmp-kernels), prepared from the model.\n    pub const KERNELS: &[{k}::Kernel<'static>] = &[\n",
    );
    for kernel in kernels {
        let _ = writeln!(out, "        {kernel},");
    }
    let _ = write!(
        out,
        "    ];

    /// The kinds of kernel [`KERNELS`] uses, and whether a call writes its output over
    /// its input: only these are linked by [`invoke`].
    pub const USED_KERNELS: u64 = {k}::used_in(KERNELS, &INFO);

    /// Runs every call of `session` with [`KERNELS`].
    pub fn invoke(session: &mut {rt}::Session<'_, Model>) -> Result<(), {k}::CallError> {{
        {k}::invoke_only::<USED_KERNELS, Model>(session, KERNELS, None)
    }}

    /// [`invoke`], filling every buffer with `poison` as soon as its last call returns:
    /// a test of the plan's liveness (outputs must not change).
    pub fn invoke_poisoning(
        session: &mut {rt}::Session<'_, Model>,
        poison: u8,
    ) -> Result<(), {k}::CallError> {{
        {k}::invoke_only::<USED_KERNELS, Model>(session, KERNELS, Some(poison))
    }}
",
    );
}

/// `Model::copy`, where some pool is run from RAM: each such pool's copy of this model's
/// image is a static of the arm that returns it, so its name clashes with nothing.
fn copies(planned: &Planned, rt: &str) -> String {
    let arms: String = planned
        .pools
        .iter()
        .enumerate()
        .filter(|(_, p)| p.load.is_some())
        .map(|(p, pool)| {
            let align = pool.start_alignment;
            format!(
                "                {p} => {{
                    /// Where the constants of pool `{name}` are read from: filled from the
                    /// image by `Workspace::take`, uninitialised until then.
                    #[unsafe(link_section = {section:?})]
                    static COPY: super::Align{align}<{rt}::Storage<{upper}_SIZE>> =
                        super::Align{align}({rt}::Storage::new());
                    COPY.0.base()
                }}
",
                name = pool.name,
                section = pool.section,
                upper = upper(&pool.name),
            )
        })
        .collect();
    if arms.is_empty() {
        return String::new();
    }
    format!(
        "
        fn copy(pool: usize) -> *mut u8 {{
            match pool {{
{arms}                _ => ::core::ptr::null_mut(),
            }}
        }}
"
    )
}

fn model_impl(out: &mut String, planned: &Planned, m: &PlannedModel, rt: &str) {
    let arms: String = planned
        .pools
        .iter()
        .enumerate()
        .filter(|(_, p)| p.kind == PoolKind::Constant)
        .map(|(p, pool)| format!("                {p} => &{}.0,\n", upper(&pool.name)))
        .collect();
    let copies = copies(planned, rt);
    let copy_contract = if copies.is_empty() {
        ""
    } else {
        "; `copy(p)`, for each pool run from RAM, is its own\n    // static of `INFO.images[p]` bytes (the same constant) aligned as the pool, which\n    // `super::Pools::load` lists with `constants(p)`"
    };
    let _ = write!(
        out,
        "
    /// Model `{name}`: `Model::session(&mut workspace)` runs it; kernels see it through
    /// `{rt}::Model`.
    #[derive(Debug)]
    pub struct Model;

    // SAFETY: `INFO` passes `{rt}::check` against `super::POOLS` (asserted above), and
    // `constants(p)` is this model's image in constant pool `p`, of `INFO.images[p]`
    // bytes (the same constants), empty for any other index{copy_contract}.
    unsafe impl {rt}::Model for Model {{
        type Pools = super::Pools;
        const INFO: &'static ModelInfo<'static> = &INFO;

        fn constants(pool: usize) -> &'static [u8] {{
            match pool {{
{arms}                _ => &[],
            }}
        }}
{copies}    }}

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
