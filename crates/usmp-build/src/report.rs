//! What every build leaves in `OUT_DIR` for people: `usmp-report.txt` (pools against
//! their limits and lower bounds, each model's plan and per-step liveness) and
//! `usmp-report.svg` (the memory maps, one model under the other).

use std::fmt::Write;

use usmp_core::report;

use crate::planned::{Planned, Split, Streamed};

/// The text report.
pub fn text(planned: &Planned) -> String {
    let mut out = String::from("usmp plan\n\npools (shared by every model):\n");
    for pool in &planned.pools {
        let limit = pool
            .limit
            .map_or("no limit".to_string(), |l| format!("limit {l}"));
        let _ = writeln!(
            out,
            "  {:<12} {:<9} {:>10} bytes  {limit}, section {}{}{}",
            pool.name,
            pool.kind.as_str(),
            pool.size,
            pool.section,
            pool.region
                .as_ref()
                .map_or(String::new(), |r| format!(" in region {r}")),
            pool.load.as_ref().map_or(String::new(), |l| format!(
                " (its image in {l}, copied when the workspace is taken)"
            ))
        );
    }
    for split in &planned.splits {
        out.push_str(&shared(planned, split));
    }
    for (i, m) in planned.models.iter().enumerate() {
        let _ = writeln!(out, "\n== model {} ({}) ==\n", m.name, m.path);
        out.push_str(&report::table(&m.liveness.problem, &m.plan));
        if let Some(units) = m.search_budget.filter(|_| !m.plan.optimal) {
            let _ = writeln!(
                out,
                "not proven optimal within the build's work budget of {units} search \
                 units (Config::work_budget gives it more; `usmp plan MODEL --time-limit 60` \
                 searches by the clock)"
            );
        }
        if let Some(p) = planned.preference.as_ref().and_then(|p| p.models.get(i)) {
            let sizes: Vec<String> = p
                .plan
                .pool_sizes
                .iter()
                .zip(p.liveness.problem.pools())
                .map(|(size, pool)| format!("{} {size}", pool.name))
                .collect();
            let heading = format!(
                "beside it, the plan by the preference order (assignment = \"preference\"; pools {} bytes):",
                sizes.join(", ")
            );
            out.push_str(&report::traffic_table(
                &p.liveness.problem,
                &p.plan.allocations,
                &heading,
            ));
        }
        out.push('\n');
        if let Some(order) = &m.order {
            out.push_str(&report::order(order));
            out.push('\n');
        }
        if let Some(streamed) = &m.streamed {
            out.push_str(&stages(streamed));
            out.push('\n');
        }
        out.push_str(&report::liveness(&m.model, &m.liveness, &m.plan));
        if let Some(t) = &m.tflm {
            let _ = writeln!(
                out,
                "\nTensorFlow Lite Micro copy {}: offline plan for {} of {} tensors; arena \
                 head {} bytes (tensors and the model's scratch rules, where TFLite Micro \
                 places them), plus TFLite Micro's persistent tail",
                crate::outputs::tflm_file(&m.module),
                t.planned(),
                t.offline.offsets.len(),
                t.head
            );
        }
    }
    out
}

/// How a shared size was split: every split planned, the one kept marked.
fn shared(planned: &Planned, split: &Split) -> String {
    let (c, w) = (
        &planned.pools[split.constant].name,
        &planned.pools[split.workspace].name,
    );
    let mut out = format!(
        "\npool {c} shares the {} bytes of pool {w}; splits planned ({w} limit + {c} limit: bytes used, estimated memory time per inference):\n",
        split.limit
    );
    for (i, t) in split.tried.iter().enumerate() {
        let outcome = match t.outcome {
            Some((ws, cs, ns)) => format!("{ws} + {cs} bytes, {}", report::micros(ns)),
            None => "no plan".to_string(),
        };
        let kept = if i == split.chosen { "  (kept)" } else { "" };
        let _ = writeln!(
            out,
            "  {:>8} + {:<8} {outcome}{kept}",
            t.workspace, t.constant
        );
    }
    out
}

/// The streamed stages: each with its calls and line buffers, and the workspace
/// without and with them.
fn stages(s: &Streamed) -> String {
    let before = s
        .before
        .map_or("no plan".to_string(), |b| format!("{b} bytes"));
    let mut out = format!(
        "streamed stages: workspace {before} without, {} bytes with: {}\n",
        s.after,
        if s.kept {
            "the model runs with them"
        } else {
            "no lower, so the model runs without them"
        }
    );
    for (stage, ops) in &s.stages {
        let lines: Vec<String> = stage
            .line_buffers
            .iter()
            .map(|(rows, bytes)| {
                format!("{rows} row{} {bytes} B", if *rows == 1 { "" } else { "s" })
            })
            .collect();
        let _ = writeln!(
            out,
            "  calls {}-{} ({}): line buffers {} bytes ({})",
            stage.first,
            stage.last,
            ops.join(", "),
            stage.scratch(),
            lines.join(", ")
        );
    }
    out
}

/// The one-line summary per model for `cargo::warning`.
pub fn summary(planned: &Planned) -> Vec<String> {
    planned
        .models
        .iter()
        .map(|m| {
            let sizes: Vec<String> = planned
                .pools
                .iter()
                .zip(&m.plan.pool_sizes)
                .map(|(p, s)| format!("{} {s}", p.name))
                .collect();
            format!(
                "usmp: {}: {} bytes ({}), lower bound {}{}, by {}",
                m.name,
                m.plan.total(),
                sizes.join(", "),
                m.plan.lower_bound.total,
                if m.plan.optimal { ", optimal" } else { "" },
                m.plan.algorithm
            )
        })
        .collect()
}

/// The memory maps of every model, stacked in one SVG document.
pub fn svg(planned: &Planned) -> String {
    let maps: Vec<String> = planned
        .models
        .iter()
        .map(|m| report::svg_steps(&m.liveness.problem, &m.plan, &m.liveness.steps))
        .collect();
    if let [one] = maps.as_slice() {
        return one.clone();
    }
    let size = |svg: &str, key: &str| -> f64 {
        let key = format!("{key}=\"");
        svg.find(&key)
            .and_then(|i| {
                let rest = &svg[i + key.len()..];
                rest[..rest.find('"')?].parse().ok()
            })
            .unwrap_or(0.0)
    };
    let width = maps.iter().map(|s| size(s, "width")).fold(0.0, f64::max);
    let height: f64 = maps.iter().map(|s| size(s, "height")).sum();
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">\n"
    );
    let mut y = 0.0;
    for map in &maps {
        // A nested <svg> keeps each map's own coordinates.
        let _ = writeln!(out, "<g transform=\"translate(0 {y})\">\n{map}</g>");
        y += size(map, "height");
    }
    out.push_str("</svg>\n");
    out
}
