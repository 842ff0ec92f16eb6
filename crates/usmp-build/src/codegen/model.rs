//! One model's module: its buffers' placements, the compile-time checks of the plan, its
//! constants, and the safe per-call access API.

use std::fmt::Write;

use usmp_core::PoolKind;
use usmp_core::liveness::Origin;

use super::{Embed, byte_string, constants_file, upper};
use crate::ident::constant_names;
use crate::planning::{Planned, PlannedModel};

/// Constants each model module defines itself; buffer constants avoid them.
const RESERVED: &[&str] = &[
    "CALLS",
    "MAX_INPUTS",
    "MAX_OUTPUTS",
    "MAX_SCRATCH",
    "BUFFERS",
    "OPS",
    "DEAD_AFTER",
];

/// What one call is handed: buffer indices (into the problem) per slot; `None` for an
/// empty slot.
struct Slots {
    inputs: Vec<Option<usize>>,
    outputs: Vec<Option<usize>>,
    scratch: Vec<Option<usize>>,
}

/// The buffer holding tensor `t`, if it is planned.
fn tensor_buffer(m: &PlannedModel, t: usize) -> Option<usize> {
    m.liveness.tensor_buffers.get(t).copied().flatten()
}

/// The buffers of `tensors`, each at most once: a repeat (or one already in `taken`) is
/// an empty slot, so no bytes are handed out mutably twice.
fn distinct(m: &PlannedModel, tensors: &[usize], taken: &mut Vec<usize>) -> Vec<Option<usize>> {
    tensors
        .iter()
        .map(|&t| {
            let b = tensor_buffer(m, t).filter(|b| !taken.contains(b));
            taken.extend(b);
            b
        })
        .collect()
}

/// Whether any slot holds a workspace buffer (the code then needs the workspace).
fn uses_workspace(m: &PlannedModel, lists: &[&Vec<Option<usize>>]) -> bool {
    let buffers = m.liveness.problem.buffers();
    lists.iter().any(|v| {
        v.iter()
            .flatten()
            .any(|&b| buffers[b].kind == PoolKind::Workspace)
    })
}

/// Each buffer is handed out mutably at most once per call; a read of a buffer the call
/// also writes is left empty (the output slot has it).
fn slots(m: &PlannedModel, call: usize) -> Slots {
    let c = &m.model.calls[call];
    let mut taken = Vec::new();
    let outputs = distinct(m, &c.writes, &mut taken);
    let scratch = (0..m.liveness.scratch[call].len())
        .map(|k| {
            m.liveness.origins.iter().position(|o| {
                matches!(o, Origin::Scratch { call: c2, name } if *c2 == call && *name == m.liveness.scratch[call][k].name)
            })
        })
        .collect();
    let inputs = c
        .reads
        .iter()
        .map(|&t| tensor_buffer(m, t).filter(|b| !taken.contains(b)))
        .collect();
    Slots {
        inputs,
        outputs,
        scratch,
    }
}

pub(super) fn module(out: &mut String, planned: &Planned, m: &PlannedModel, embed: &Embed) {
    let problem = &m.liveness.problem;
    let buffers = problem.buffers();
    let calls = m.model.calls.len();
    let slots: Vec<Slots> = (0..calls).map(|i| slots(m, i)).collect();
    let max = |f: fn(&Slots) -> usize| slots.iter().map(f).max().unwrap_or(0);
    let widths = [
        max(|s| s.inputs.len()),
        max(|s| s.outputs.len()),
        max(|s| s.scratch.len()),
    ];

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
    let names = constant_names(
        &stems.iter().map(String::as_str).collect::<Vec<_>>(),
        &reserved,
    );

    let _ = writeln!(
        out,
        "\n/// Model `{}` (`{}`): {calls} operator calls, planned by {}.\n#[allow(dead_code)]\npub mod {} {{\n    use super::{{Buffer, Workspace}};",
        m.name, m.path, m.plan.algorithm, m.module
    );
    let _ = writeln!(
        out,
        "\n    /// Operator calls, in execution order.\n    pub const CALLS: usize = {calls};\n    /// Most inputs of any call.\n    pub const MAX_INPUTS: usize = {};\n    /// Most outputs of any call.\n    pub const MAX_OUTPUTS: usize = {};\n    /// Most scratch buffers of any call.\n    pub const MAX_SCRATCH: usize = {};",
        widths[0], widths[1], widths[2]
    );
    let ops: Vec<String> = m
        .model
        .calls
        .iter()
        .map(|c| format!("{:?}", c.op))
        .collect();
    let _ = writeln!(
        out,
        "    /// The operator of each call.\n    pub const OPS: [&str; CALLS] = [{}];",
        ops.join(", ")
    );

    // Placements.
    out.push('\n');
    for (b, buffer) in buffers.iter().enumerate() {
        let a = m.plan.allocations[b];
        let live = buffer.live.map_or(String::new(), |l| {
            format!(", live during calls {}..{}", l.start, l.end)
        });
        let _ = writeln!(
            out,
            "    /// `{}`: {} bytes at offset {} of `{}`{live}.\n    pub const {}: Buffer = Buffer {{ name: {:?}, pool: {}, offset: {}, size: {} }};",
            buffer.name.replace('`', "'"),
            buffer.size,
            a.offset,
            planned.pools[a.pool].name,
            names[b],
            buffer.name,
            a.pool,
            a.offset,
            buffer.size
        );
    }
    let _ = writeln!(
        out,
        "    /// Every planned buffer.\n    pub const BUFFERS: [Buffer; {}] = [{}];",
        buffers.len(),
        names.join(", ")
    );

    // The plan, checked by the compiler: a stale or edited file does not build.
    out.push_str("\n    // Every buffer lies inside its pool; buffers live at the same time share no byte.\n");
    for name in &names {
        let _ = writeln!(
            out,
            "    const _: () = assert!(super::placed(&{name}), \"buffer {name} is outside its pool: regenerate this file\");"
        );
    }
    for a in 0..buffers.len() {
        for b in a + 1..buffers.len() {
            // Constants and workspace never share a pool: only same-kind pairs can clash.
            if buffers[a].kind == buffers[b].kind && problem.conflict(a, b) {
                let _ = writeln!(
                    out,
                    "    const _: () = assert!(super::disjoint(&{0}, &{1}), \"{0} and {1} are live together but overlap: regenerate this file\");",
                    names[a], names[b]
                );
            }
        }
    }

    constants(out, planned, m, embed);
    dead_after(out, m, &names);
    handle(out, m, &slots, widths, &names);
    out.push_str("}\n");
}

fn constants(out: &mut String, planned: &Planned, m: &PlannedModel, embed: &Embed) {
    let mut arms = Vec::new();
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
        arms.push(format!("            {p} => &{name}.0,"));
    }
    let _ = writeln!(
        out,
        "\n    /// The bytes of constant buffer `b` (empty for a workspace buffer).\n    pub fn constant(b: &Buffer) -> &'static [u8] {{\n        let pool: &'static [u8] = match b.pool {{\n{}\n            _ => return &[],\n        }};\n        &pool[b.offset..b.offset + b.size]\n    }}",
        arms.join("\n")
    );
}

fn dead_after(out: &mut String, m: &PlannedModel, names: &[String]) {
    let buffers = m.liveness.problem.buffers();
    let calls = m.model.calls.len() as u64;
    let lists: Vec<String> = (0..calls)
        .map(|i| {
            let dead: Vec<&str> = buffers
                .iter()
                .enumerate()
                .filter(|(_, b)| b.kind == PoolKind::Workspace)
                .filter(|(_, b)| b.live.is_some_and(|l| l.end == i + 1 && l.end < calls))
                .map(|(k, _)| names[k].as_str())
                .collect();
            format!("&[{}]", dead.join(", "))
        })
        .collect();
    let _ = writeln!(
        out,
        "\n    /// Workspace buffers whose last use is each call: dead once it returns.\n    pub const DEAD_AFTER: [&[Buffer]; CALLS] = [{}];",
        lists.join(", ")
    );
}

fn slot_list(
    slots: &[Option<usize>],
    max: usize,
    names: &[String],
    m: &PlannedModel,
    shared: bool,
) -> String {
    let buffers = m.liveness.problem.buffers();
    let items: Vec<String> = (0..max)
        .map(|k| match slots.get(k).copied().flatten() {
            Some(b) if buffers[b].kind == PoolKind::Constant => format!("constant(&{})", names[b]),
            Some(b) if shared => format!("&*ws.region(&{})", names[b]),
            Some(b) => format!("ws.region(&{})", names[b]),
            None if shared => "&[]".to_string(),
            None => "&mut []".to_string(),
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// `widths`: the longest inputs, outputs and scratch lists of any call.
fn handle(
    out: &mut String,
    m: &PlannedModel,
    slots: &[Slots],
    widths: [usize; 3],
    names: &[String],
) {
    let [max_in, max_out, max_scratch] = widths;
    out.push_str(CALL_TYPE);
    let arms: Vec<String> = (0..slots.len())
        .map(|i| format!("                {i} => Some(self.call_{i}()),"))
        .collect();
    let _ = writeln!(
        out,
        "    impl<'w> Model<'w> {{
        /// The model, running in `workspace` for as long as it is borrowed.
        pub fn new(workspace: &'w mut Workspace) -> Self {{
            Model {{ ws: workspace }}
        }}

        /// The regions of call `index`, or `None` past the last call.
        pub fn call(&mut self, index: usize) -> Option<Call<'_>> {{
            match index {{
{}
                _ => None,
            }}
        }}",
        arms.join("\n")
    );
    for (i, s) in slots.iter().enumerate() {
        let inputs = slot_list(&s.inputs, max_in, names, m, true);
        let outputs = slot_list(&s.outputs, max_out, names, m, false);
        let scratch = slot_list(&s.scratch, max_scratch, names, m, false);
        let uses_ws = uses_workspace(m, &[&s.inputs, &s.outputs, &s.scratch]);
        let body = format!(
            "Call {{ index: {i}, op: {:?}, inputs: {inputs}, outputs: {outputs}, scratch: {scratch} }}",
            m.model.calls[i].op
        );
        let _ = writeln!(out, "\n        /// Call {i}: `{}`.", m.model.calls[i].op);
        let _ = writeln!(out, "        pub fn call_{i}(&mut self) -> Call<'_> {{");
        if uses_ws {
            let _ = writeln!(
                out,
                "            let ws: &Workspace = self.ws;
            // SAFETY: `self` borrows the only Workspace mutably for as long as the Call
            // lives, so nothing else reaches the pools; the buffers below are all live
            // during call {i}, so the plan keeps them pairwise disjoint and inside their
            // pools (both asserted above), and each is handed out once.
            unsafe {{ {body} }}"
            );
        } else {
            let _ = writeln!(out, "            {body}");
        }
        out.push_str("        }\n");
    }
    io(out, m, names);
    out.push_str(
        "
        /// Fills with `byte` every workspace buffer that is dead once call `index` has
        /// returned. Running with this between calls proves the plan's liveness: a kernel
        /// that read a dead buffer would see the poison.
        pub fn poison_dead(&mut self, index: usize, byte: u8) {
            let ws: &Workspace = self.ws;
            for b in DEAD_AFTER.get(index).copied().unwrap_or(&[]) {
                // SAFETY: `self` borrows the only Workspace mutably and no region is
                // alive during this call; `b` is a planned workspace buffer, asserted to
                // lie inside its pool.
                unsafe { ws.region(b) }.fill(byte);
            }
        }
    }
",
    );
}

fn io(out: &mut String, m: &PlannedModel, names: &[String]) {
    for (what, tensors, shared) in [
        ("inputs", &m.model.inputs, false),
        ("outputs", &m.model.outputs, true),
    ] {
        let list = distinct(m, tensors, &mut Vec::new());
        let items = slot_list(&list, tensors.len(), names, m, shared);
        let (doc, ty) = if shared {
            (
                "The model's outputs, in its order; read them after the last call",
                "&[u8]",
            )
        } else {
            (
                "The model's inputs, in its order; fill them before call 0",
                "&mut [u8]",
            )
        };
        let _ = writeln!(
            out,
            "\n        /// {doc}. Empty for any left out of the pools (`io_in_pools = false`)."
        );
        let _ = writeln!(
            out,
            "        pub fn {what}(&mut self) -> [{ty}; {}] {{",
            tensors.len()
        );
        if !uses_workspace(m, &[&list]) {
            let _ = writeln!(out, "            {items}\n        }}");
        } else {
            let _ = writeln!(
                out,
                "            let ws: &Workspace = self.ws;
            // SAFETY: `self` borrows the only Workspace mutably for as long as the
            // slices live; the model's {what} are live at the same time, so the plan keeps
            // them disjoint (asserted above), and each is handed out once.
            unsafe {{ {items} }}
        }}"
            );
        }
    }
}

const CALL_TYPE: &str = r#"
    /// What one operator call works on: every region live during it, pairwise disjoint.
    /// Slots past the call's own inputs, outputs or scratch are empty.
    #[derive(Debug)]
    pub struct Call<'a> {
        /// Position in execution order.
        pub index: usize,
        /// The operator, as the model names it.
        pub op: &'static str,
        /// What the call reads, in the model's order: activations and constants. A read
        /// of bytes the call also writes (in place) is empty here; its output slot has it.
        pub inputs: [&'a [u8]; MAX_INPUTS],
        /// What the call writes, in the model's order.
        pub outputs: [&'a mut [u8]; MAX_OUTPUTS],
        /// The call's scratch buffers, in order.
        pub scratch: [&'a mut [u8]; MAX_SCRATCH],
    }

    /// This model, running in the workspace it borrows.
    #[derive(Debug)]
    pub struct Model<'w> {
        ws: &'w mut Workspace,
    }

"#;
