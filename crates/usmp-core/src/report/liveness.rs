//! What a model needs, step by step: which buffers are live during each call and how
//! many bytes they add up to, with the peak marked; where the model's inputs and outputs
//! went; and what was left out of the plan.

use std::fmt::Write;

use super::json::write_json_string;
use crate::liveness::{Liveness, Omission};
use crate::model::{Model, Role};
use crate::plan::Plan;

/// Why, in words, after the reason's name.
fn why(reason: Omission) -> &'static str {
    match reason {
        Omission::Dynamic => "its size is only known at run time",
        Omission::External => "a model input or output the caller owns",
        Omission::Empty => "no bytes",
        Omission::Unused => "no call reads or writes it",
        Omission::Persistent => "state the runtime keeps in its own persistent memory",
    }
}

/// The workspace buffers live at each step, and their bytes.
fn live_per_step(l: &Liveness) -> Vec<(Vec<usize>, u64)> {
    let buffers = l.problem.buffers();
    (0..l.steps.len())
        .map(|s| {
            let live = l.live_at(s);
            let bytes = live.iter().map(|&b| buffers[b].size).sum();
            (live, bytes)
        })
        .collect()
}

/// The per-step liveness table, then inputs and outputs with their places, then what is
/// left out.
pub fn liveness(model: &Model, l: &Liveness, plan: &Plan) -> String {
    let mut out = String::new();
    let buffers = l.problem.buffers();
    let steps = live_per_step(l);
    let peak = steps.iter().map(|(_, b)| *b).max().unwrap_or(0);
    let peak_step = steps.iter().position(|(_, b)| *b == peak);
    let _ = writeln!(
        out,
        "model {}: {} calls, {} planned buffers; workspace live at the peak: {peak} bytes",
        model.name,
        model.calls.len(),
        buffers.len(),
    );
    let _ = writeln!(
        out,
        "\n{:>5}  {:<28} {:>5} {:>10}  live buffers",
        "step", "call", "live", "bytes"
    );
    for (s, (live, bytes)) in steps.iter().enumerate() {
        let names: Vec<&str> = live.iter().map(|&b| buffers[b].name.as_str()).collect();
        let call = model
            .calls
            .get(s)
            .map_or(String::new(), |c| format!("{} ({})", c.op, c.target));
        let mark = if Some(s) == peak_step {
            "  <- peak"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{s:>5}  {call:<28} {:>5} {bytes:>10}  {}{mark}",
            live.len(),
            names.join(", ")
        );
    }
    for (what, list) in [("input", &model.inputs), ("output", &model.outputs)] {
        for &t in list {
            let place = match l.tensor_allocation(plan, t) {
                Some(a) => format!(
                    "pool {} at offset {}",
                    l.problem.pools()[a.pool].name,
                    a.offset
                ),
                None => "owned by the caller".into(),
            };
            let _ = writeln!(out, "{what} {}: {place}", model.tensors[t].name);
        }
    }
    if !l.left_out.is_empty() {
        let _ = writeln!(out, "\nleft out of the plan:");
        for o in &l.left_out {
            let _ = writeln!(
                out,
                "  {} ({}: {})",
                o.name,
                o.reason.as_str(),
                why(o.reason)
            );
        }
    }
    out
}

/// The plan of a model as one JSON object: `{"model":..., "plan":{...}, "tensors":[...],
/// "step_bytes":[...], "left_out":[...]}`, each tensor with its role, pool and offset
/// (`null` when not planned).
pub fn model_json(model: &Model, l: &Liveness, plan: &Plan) -> String {
    let mut out = String::from("{\"model\":");
    write_json_string(&mut out, &model.name);
    out.push_str(",\"plan\":");
    out.push_str(&super::json(&l.problem, plan));
    out.push_str(",\"tensors\":[");
    for (t, tensor) in model.tensors.iter().enumerate() {
        if t > 0 {
            out.push(',');
        }
        let role = if model.inputs.contains(&t) {
            "input"
        } else if model.outputs.contains(&t) {
            "output"
        } else {
            match tensor.role {
                Role::Activation => "activation",
                Role::Constant(_) => "constant",
                Role::State => "state",
            }
        };
        out.push_str("{\"name\":");
        write_json_string(&mut out, &tensor.name);
        let size = tensor
            .size
            .bytes()
            .map_or("\"dynamic\"".to_string(), |b| b.to_string());
        let _ = write!(out, ",\"role\":\"{role}\",\"size\":{size},\"pool\":");
        match l.tensor_allocation(plan, t) {
            Some(a) => {
                write_json_string(&mut out, &l.problem.pools()[a.pool].name);
                let _ = write!(out, ",\"offset\":{}}}", a.offset);
            }
            None => out.push_str("null,\"offset\":null}"),
        }
    }
    out.push_str("],\"step_bytes\":[");
    let bytes: Vec<String> = live_per_step(l)
        .iter()
        .map(|(_, b)| b.to_string())
        .collect();
    out.push_str(&bytes.join(","));
    out.push_str("],\"left_out\":[");
    for (k, o) in l.left_out.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        write_json_string(&mut out, &o.name);
        let _ = write!(out, ",\"reason\":\"{}\"}}", o.reason.as_str());
    }
    out.push_str("]}");
    out
}
