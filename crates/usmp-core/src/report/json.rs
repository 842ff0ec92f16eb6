//! The plan as one JSON object, keys in pool and buffer declaration order so the output
//! is byte-identical on every run.

use std::fmt::Write;

use crate::plan::Plan;
use crate::problem::Problem;

/// Appends `s` to `out` as a JSON string literal.
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `{"algorithm":...,"pool_sizes":{...},"pool_kinds":{...},"allocations":{...},
/// "lower_bound":N,"optimal":B}` on one line; when a pool states a bandwidth, also
/// `"traffic":{"pool":{"bytes":N,"nanoseconds":N or null},...}` before `lower_bound`.
pub fn json(problem: &Problem, plan: &Plan) -> String {
    let mut out = String::from("{\"algorithm\":");
    write_json_string(&mut out, &plan.algorithm);
    let pools = problem.pools();
    let map = |out: &mut String, key: &str, items: &mut dyn Iterator<Item = (&str, String)>| {
        let _ = write!(out, ",\"{key}\":{{");
        for (k, (name, value)) in items.enumerate() {
            if k > 0 {
                out.push(',');
            }
            write_json_string(out, name);
            out.push(':');
            out.push_str(&value);
        }
        out.push('}');
    };
    map(
        &mut out,
        "pool_sizes",
        &mut pools
            .iter()
            .zip(&plan.pool_sizes)
            .map(|(p, s)| (p.name.as_str(), s.to_string())),
    );
    map(
        &mut out,
        "pool_kinds",
        &mut pools
            .iter()
            .map(|p| (p.name.as_str(), format!("\"{}\"", p.kind))),
    );
    map(
        &mut out,
        "allocations",
        &mut problem
            .buffers()
            .iter()
            .zip(&plan.allocations)
            .map(|(b, a)| {
                let mut pool = String::new();
                write_json_string(&mut pool, &pools[a.pool].name);
                (
                    b.name.as_str(),
                    format!("{{\"pool\":{pool},\"offset\":{}}}", a.offset),
                )
            }),
    );
    // Only when a pool states its speed, so plans without speeds print as they did.
    if pools.iter().any(|p| p.bandwidth.is_some()) {
        let traffic = crate::traffic::traffic(problem, &plan.allocations);
        map(
            &mut out,
            "traffic",
            &mut pools.iter().zip(&traffic).map(|(p, t)| {
                let ns = t.nanoseconds.map_or("null".to_string(), |n| n.to_string());
                let value = format!("{{\"bytes\":{},\"nanoseconds\":{ns}}}", t.bytes);
                (p.name.as_str(), value)
            }),
        );
    }
    let _ = write!(
        out,
        ",\"lower_bound\":{},\"optimal\":{},\"placement_optimal\":{}}}",
        plan.lower_bound.total,
        plan.optimal,
        plan.placement_optimal()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_strings() {
        let mut s = String::new();
        write_json_string(&mut s, "a\"b\\c\n\u{1}é");
        assert_eq!(s, "\"a\\\"b\\\\c\\n\\u0001é\"");
    }
}
