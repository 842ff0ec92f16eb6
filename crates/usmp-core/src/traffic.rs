//! What a plan costs in memory time: each buffer's traffic (bytes read and written per
//! inference) over the bandwidth of the pool it was put in. The exact solver minimises
//! it under `assignment = "fastest"`; `report` only prints it.

use crate::problem::Problem;
use crate::solution::Allocation;

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
pub fn memory_time(per_pool: &[PoolTraffic]) -> u64 {
    per_pool
        .iter()
        .filter_map(|t| t.nanoseconds)
        .fold(0, u64::saturating_add)
}

/// The time one byte takes at `bandwidth` bytes per second, in units of 10^-18 s: exact
/// for every bandwidth that divides 10^18 bytes per second, within one unit per byte
/// otherwise. What choosing pools by speed compares, summed in `u128`.
pub(crate) fn per_byte(bandwidth: u64) -> u128 {
    1_000_000_000_000_000_000 / u128::from(bandwidth.max(1))
}
