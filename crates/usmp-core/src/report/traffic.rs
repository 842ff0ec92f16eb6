//! The memory-traffic table of a plan (the figures come from [`crate::traffic`]).

use std::fmt::Write;

use crate::problem::Problem;
use crate::solution::Allocation;
use crate::traffic::{memory_time, traffic};

/// The traffic table, written only when some pool states a bandwidth: per pool its bytes
/// and time, then the total time of the pools that have one.
pub(crate) fn write_traffic(out: &mut String, problem: &Problem, allocations: &[Allocation]) {
    write_table(
        out,
        problem,
        allocations,
        "memory traffic per inference, estimated from each pool's bandwidth:",
    );
}

/// Another plan's traffic table, to print after a plan's own (`--assignment fastest` shows
/// the preference order's next to its own), headed by `heading`; empty when no pool
/// states a bandwidth.
pub fn traffic_table(problem: &Problem, allocations: &[Allocation], heading: &str) -> String {
    let mut out = String::new();
    write_table(&mut out, problem, allocations, heading);
    out
}

fn write_table(out: &mut String, problem: &Problem, allocations: &[Allocation], heading: &str) {
    if problem.pools().iter().all(|p| p.bandwidth.is_none()) {
        return;
    }
    let per_pool = traffic(problem, allocations);
    let _ = writeln!(out, "\n{heading}");
    for (pool, t) in problem.pools().iter().zip(&per_pool) {
        let time = match (pool.bandwidth, t.nanoseconds) {
            (Some(bw), Some(ns)) => {
                let speed = if bw >= 1_000_000 {
                    format!("{} MB/s", bw / 1_000_000)
                } else {
                    format!("{bw} B/s")
                };
                format!("at {speed}: {}", micros(ns))
            }
            _ => "no bandwidth given: not counted".to_string(),
        };
        let _ = writeln!(out, "  {:<14} {:>14} bytes  {time}", pool.name, t.bytes);
    }
    let total = micros(memory_time(&per_pool));
    let _ = writeln!(out, "  {:<14} {:>14}        {total}", "total", "");
}

/// Nanoseconds as microseconds with three decimals and the unit: `1234.567 us`.
pub fn micros(ns: u64) -> String {
    format!("{}.{:03} us", ns / 1000, ns % 1000)
}
