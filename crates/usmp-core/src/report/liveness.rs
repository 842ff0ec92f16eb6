//! What a model needs, step by step: which buffers are live during each call and how
//! many bytes they add up to, with the peak marked; where the model's inputs and outputs
//! went; and what was left out of the plan.

use std::fmt::Write;

use super::json::write_json_string;
use crate::liveness::{Liveness, Omission};
use crate::model::{Model, Role};
use crate::plan::Plan;

fn omission(reason: Omission) -> &'static str {
    match reason {
        Omission::Dynamic => "dynamic: its size is only known at run time",
        Omission::External => "external: a model input or output the caller owns",
        Omission::Empty => "empty: no bytes",
        Omission::Unused => "unused: no call reads or writes it",
    }
}

/// Bytes of the workspace buffers live at each step.
fn step_bytes(l: &Liveness) -> Vec<u64> {
    let buffers = l.problem.buffers();
    (0..l.steps.len())
        .map(|s| l.live_at(s).iter().map(|&b| buffers[b].size).sum())
        .collect()
}

/// The per-step liveness table, then inputs and outputs with their places, then what is
/// left out.
pub fn liveness(model: &Model, l: &Liveness, plan: &Plan) -> String {
    let mut out = String::new();
    let buffers = l.problem.buffers();
    let bytes = step_bytes(l);
    let peak = bytes.iter().copied().max().unwrap_or(0);
    let peak_step = bytes.iter().position(|&b| b == peak);
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
    for (s, label) in l.steps.iter().enumerate() {
        let live = l.live_at(s);
        let names: Vec<&str> = live.iter().map(|&b| buffers[b].name.as_str()).collect();
        let call = label
            .split_once(' ')
            .map_or(label.as_str(), |(_, rest)| rest);
        let mark = if Some(s) == peak_step {
            "  <- peak"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{s:>5}  {call:<28} {:>5} {:>10}  {}{mark}",
            live.len(),
            bytes[s],
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
            let _ = writeln!(out, "  {} ({})", o.name, omission(o.reason));
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
    let bytes: Vec<String> = step_bytes(l).iter().map(u64::to_string).collect();
    out.push_str(&bytes.join(","));
    out.push_str("],\"left_out\":[");
    for (k, o) in l.left_out.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        write_json_string(&mut out, &o.name);
        let reason = omission(o.reason).split(':').next().unwrap_or("");
        let _ = write!(out, ",\"reason\":\"{reason}\"}}");
    }
    out.push_str("]}");
    out
}
