//! A readable summary: per pool its use against limit and lower bound, then every buffer.

use std::fmt::Write;

use crate::plan::Plan;
use crate::problem::{Overlap, Problem};
use crate::solution::share_bytes;

fn gap(used: u64, bound: u64) -> String {
    if bound == 0 {
        "-".into()
    } else {
        format!(
            "{:.1}%",
            (used as f64 - bound as f64) * 100.0 / bound as f64
        )
    }
}

/// With overlaps declared: how many the plan uses, and the bound with every pair apart.
fn write_overlaps(out: &mut String, problem: &Problem, plan: &Plan) {
    if problem.overlaps().is_empty() {
        return;
    }
    let apart = crate::bound::LowerBound::of(&problem.without_overlaps()).total;
    let used = overlaps_used(problem, plan);
    let _ = writeln!(
        out,
        "overlaps: {} declared, {} used (outputs over the inputs they consume); lower \
         bound of all pools with every pair apart {apart}, with the windows {}",
        problem.overlaps().len(),
        used.len(),
        plan.lower_bound.total
    );
    let (b, a) = (problem.buffers(), &plan.allocations);
    for o in used {
        let shift = i128::from(a[o.output].offset) - i128::from(a[o.input].offset);
        let _ = writeln!(
            out,
            "  {} over {}: shift {shift} (window {} to {})",
            b[o.output].name, b[o.input].name, o.shifts[0], o.shifts[1]
        );
    }
}

/// The declared overlaps the plan uses: pairs that share bytes.
fn overlaps_used<'p>(problem: &'p Problem, plan: &Plan) -> Vec<&'p Overlap> {
    let shared = |o: &&Overlap| share_bytes(problem, &plan.allocations, o.output, o.input);
    problem.overlaps().iter().filter(shared).collect()
}

/// The plan as a text table.
pub fn table(problem: &Problem, plan: &Plan) -> String {
    let mut out = String::new();
    let total = plan.total();
    let lb = plan.lower_bound.total;
    let verdict = if plan.optimal {
        "optimal"
    } else if plan.placement_optimal() {
        // The gap is then the assignment's: the pool fallback filled the preferred pools
        // first, and only moving buffers between pools could total less.
        "each pool optimal for the buffers it holds; another assignment to pools may total less"
    } else {
        "not proven optimal"
    };
    let _ = writeln!(
        out,
        "plan by {}: {} buffers in {} pools, {total} bytes in total; lower bound {lb} (gap {}, {verdict})",
        plan.algorithm,
        problem.buffers().len(),
        problem.pools().len(),
        gap(total, lb),
    );
    write_overlaps(&mut out, problem, plan);
    let _ = writeln!(
        out,
        "\n{:<16} {:<9} {:>14} {:>14} {:>14} {:>8}",
        "pool", "kind", "used", "limit", "lower bound", "gap"
    );
    for (p, pool) in problem.pools().iter().enumerate() {
        let used = plan.pool_sizes[p];
        let bound = plan.assigned_bounds.get(p).copied().unwrap_or(0);
        let limit = pool
            .size_limit
            .map_or("unbounded".to_string(), |l| l.to_string());
        let bound_text = if bound == 0 {
            "-".to_string()
        } else {
            bound.to_string()
        };
        let _ = writeln!(
            out,
            "{:<16} {:<9} {:>14} {:>14} {:>14} {:>8}",
            pool.name,
            pool.kind.as_str(),
            used,
            limit,
            bound_text,
            gap(used, bound)
        );
    }
    super::traffic::write_traffic(&mut out, problem, &plan.allocations);
    let _ = writeln!(
        out,
        "\n{:<24} {:<16} {:>14} {:>12} {:>14}  live",
        "buffer", "pool", "offset", "size", "end"
    );
    for (b, a) in problem.buffers().iter().zip(&plan.allocations) {
        let live = b
            .live
            .map_or(String::new(), |l| format!("[{}, {})", l.start, l.end));
        let pool = &problem.pools()[a.pool].name;
        let _ = writeln!(
            out,
            "{:<24} {:<16} {:>14} {:>12} {:>14}  {live}",
            b.name,
            pool,
            a.offset,
            b.size,
            a.offset + b.size
        );
    }
    out
}
