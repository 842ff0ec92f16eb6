//! The memory map as SVG: one panel per pool, addresses upward, time (operator calls for
//! a model; without live ranges, placement by address) across, one labelled rectangle per
//! buffer. People read
//! this rather than a list of offsets.

use std::fmt::Write;

use crate::plan::Plan;
use crate::problem::Problem;

const WIDTH: f64 = 960.0;
const PANEL: f64 = 300.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const GAP: f64 = 70.0;
const STEP_GAP: f64 = 150.0;

/// A fixed palette; colour `i % len` keeps output identical everywhere.
const COLOURS: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// `s` as XML text or attribute value: the five special characters as entities, and
/// control characters (which XML 1.0 forbids even as references) as U+FFFD.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Renders the plan as a standalone SVG document.
pub fn svg(problem: &Problem, plan: &Plan) -> String {
    render(problem, plan, None)
}

/// Renders a model's plan with time as its operator calls: `steps` labels each step
/// (e.g. `3 CONV_2D (cpu)`, from [`Liveness::steps`](crate::liveness::Liveness::steps)).
pub fn svg_steps(problem: &Problem, plan: &Plan, steps: &[String]) -> String {
    render(problem, plan, Some(steps))
}

fn render(problem: &Problem, plan: &Plan, steps: Option<&[String]>) -> String {
    let pools = problem.pools();
    let buffers = problem.buffers();
    // Step labels hang below each panel, rotated: they need more room than one line.
    let gap = if steps.is_some() { STEP_GAP } else { GAP };
    let height = TOP + pools.len() as f64 * (PANEL + gap);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    let _ = writeln!(out, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(
        out,
        "<text x=\"{LEFT}\" y=\"22\" font-size=\"14\">{} — {} bytes in total, lower bound {}</text>",
        escape(&plan.algorithm),
        plan.total(),
        plan.lower_bound.total
    );
    let timed = buffers.iter().all(|b| b.live.is_some()) && !buffers.is_empty();
    let (t0, t1) = if timed {
        let lives = buffers.iter().filter_map(|b| b.live);
        let lo = lives.clone().map(|l| l.start).min().unwrap_or(0);
        (lo, lives.map(|l| l.end).max().unwrap_or(1))
    } else {
        (0, 1)
    };
    let time = Time { timed, t0, t1 };
    for p in 0..pools.len() {
        let y0 = TOP + p as f64 * (PANEL + gap) + 20.0;
        panel(&mut out, problem, plan, p, y0, &time, steps);
    }
    out.push_str("</svg>\n");
    out
}

/// The time axis every panel shares: the live ranges' span, when every buffer has one.
struct Time {
    timed: bool,
    t0: u64,
    t1: u64,
}

/// Pool `p`'s panel at height `y0`: its title, frame, axis or step labels, and buffers.
fn panel(
    out: &mut String,
    problem: &Problem,
    plan: &Plan,
    p: usize,
    y0: f64,
    time: &Time,
    steps: Option<&[String]>,
) {
    let (pool, buffers) = (&problem.pools()[p], problem.buffers());
    let Time { timed, t0, t1 } = *time;
    let size = plan.pool_sizes[p];
    let members: Vec<usize> = (0..buffers.len())
        .filter(|&i| plan.allocations[i].pool == p)
        .collect();
    let limit = pool
        .size_limit
        .map_or(String::new(), |l| format!(", limit {l}"));
    let _ = writeln!(
        out,
        "<text x=\"{LEFT}\" y=\"{:.1}\" font-size=\"13\" font-weight=\"bold\">pool {} ({}): {size} bytes{limit}, {} buffers</text>",
        y0 - 6.0,
        escape(&pool.name),
        pool.kind,
        members.len()
    );
    let plot_w = WIDTH - LEFT - RIGHT;
    let _ = writeln!(
        out,
        "<rect x=\"{LEFT}\" y=\"{y0:.1}\" width=\"{plot_w:.1}\" height=\"{PANEL}\" fill=\"#f7f7f7\" stroke=\"#333\"/>"
    );
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{size}</text>",
        LEFT - 4.0,
        y0 + 10.0
    );
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">0</text>",
        LEFT - 4.0,
        y0 + PANEL
    );
    match steps {
        Some(labels) if timed => {
            let step_w = plot_w / (t1 - t0).max(1) as f64;
            for (s, label) in labels.iter().enumerate() {
                let x = LEFT + (s as f64 - t0 as f64 + 0.5) * step_w;
                let y = y0 + PANEL + 10.0;
                let short: String = label.chars().take(24).collect();
                let _ = writeln!(
                    out,
                    "<text x=\"{x:.1}\" y=\"{y:.1}\" font-size=\"9\" text-anchor=\"end\" transform=\"rotate(-50 {x:.1} {y:.1})\">{}</text>",
                    escape(&short)
                );
            }
        }
        _ => {
            let axis = if timed {
                format!("time step {t0} → {t1}")
            } else {
                "buffers in address order".into()
            };
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{axis}</text>",
                LEFT + plot_w / 2.0,
                y0 + PANEL + 16.0
            );
        }
    }
    if size > 0 {
        bars(out, problem, plan, &members, (y0, size), time);
    }
}

/// The buffers of one panel as rectangles, named where the name fits.
/// `(y0, size)`: where the panel starts and the bytes its height stands for (not 0).
fn bars(
    out: &mut String,
    problem: &Problem,
    plan: &Plan,
    members: &[usize],
    (y0, size): (f64, u64),
    time: &Time,
) {
    let buffers = problem.buffers();
    let Time { timed, t0, t1 } = *time;
    let plot_w = WIDTH - LEFT - RIGHT;
    // Without live ranges, each buffer gets a column, ordered by address.
    let mut by_address = members.to_vec();
    by_address.sort_by_key(|&i| (plan.allocations[i].offset, i));
    let columns = by_address.len().max(1) as f64;
    let y_scale = PANEL / size as f64;
    let x_scale = plot_w / (t1 - t0).max(1) as f64;
    for (column, &i) in by_address.iter().enumerate() {
        let b = &buffers[i];
        let offset = plan.allocations[i].offset;
        let (x, w) = match b.live {
            Some(l) if timed => (
                LEFT + (l.start - t0) as f64 * x_scale,
                (l.end - l.start) as f64 * x_scale,
            ),
            _ => (LEFT + column as f64 * plot_w / columns, plot_w / columns),
        };
        let h = b.size as f64 * y_scale;
        let y = y0 + PANEL - (offset + b.size) as f64 * y_scale;
        let live = b.live.map_or(String::new(), |l| {
            format!(", live [{}, {})", l.start, l.end)
        });
        let _ = writeln!(
            out,
            "<rect x=\"{x:.2}\" y=\"{y:.2}\" width=\"{w:.2}\" height=\"{h:.2}\" fill=\"{}\" stroke=\"#222\" stroke-width=\"0.3\"><title>{}: offset {offset}, {} bytes{live}</title></rect>",
            COLOURS[i % COLOURS.len()],
            escape(&b.name),
            b.size
        );
        let label = escape(&b.name);
        if w > 7.0 * label.chars().count() as f64 && h > 13.0 {
            let _ = writeln!(
                out,
                "<text x=\"{:.2}\" y=\"{:.2}\" text-anchor=\"middle\" fill=\"white\">{label}</text>",
                x + w / 2.0,
                y + h / 2.0 + 4.0
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn names_become_valid_xml() {
        assert_eq!(escape("a&b<c>\"d'"), "a&amp;b&lt;c&gt;&quot;d&apos;");
        assert_eq!(
            escape("nul\0bell\u{7}tab\t"),
            "nul\u{fffd}bell\u{fffd}tab\u{fffd}"
        );
        assert_eq!(escape("conv/Relu;1"), "conv/Relu;1");
    }
}
