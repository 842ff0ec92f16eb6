//! What a plan costs in memory time: each buffer's traffic (bytes read and written per
//! inference) over the bandwidth of the pool it was put in.

use std::fmt::Write;

use crate::plan::Allocation;
use crate::problem::Problem;

/// One pool's share of the memory traffic of an inference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolTraffic {
    /// Bytes read and written in the pool per inference.
    pub bytes: u64,
    /// Those bytes at the pool's bandwidth, in nanoseconds; `None` without a bandwidth.
    pub nanoseconds: Option<u64>,
}

/// Per pool, the traffic the plan puts there and its estimated time.
pub fn traffic(problem: &Problem, allocations: &[Allocation]) -> Vec<PoolTraffic> {
    let mut bytes = vec![0u64; problem.pools().len()];
    for (b, a) in problem.buffers().iter().zip(allocations) {
        if let Some(t) = bytes.get_mut(a.pool) {
            *t = t.saturating_add(b.traffic);
        }
    }
    problem
        .pools()
        .iter()
        .zip(bytes)
        .map(|(pool, bytes)| PoolTraffic {
            bytes,
            nanoseconds: pool.bandwidth.map(|bw| {
                let ns = u128::from(bytes) * 1_000_000_000 / u128::from(bw.max(1));
                u64::try_from(ns).unwrap_or(u64::MAX)
            }),
        })
        .collect()
}

/// The estimated memory time of an inference, in nanoseconds: the sum over the pools that
/// state a bandwidth.
pub(crate) fn memory_time(per_pool: &[PoolTraffic]) -> u64 {
    per_pool
        .iter()
        .filter_map(|t| t.nanoseconds)
        .fold(0, u64::saturating_add)
}

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

fn micros(ns: u64) -> String {
    format!("{}.{:03} us", ns / 1000, ns % 1000)
}
