//! Pools, buffers and their conflicts: the planner's input, named after the RFC's
//! `PoolInfo` and `BufferInfo`.
//!
//! A [`Problem`] is only ever built through [`ProblemBuilder`], which checks every
//! invariant the algorithms rely on (positive sizes, power-of-two alignments, known pool
//! names, at least one candidate of the right kind, symmetric and duplicate-free
//! conflicts). Algorithms can therefore index freely without re-validating user data.

mod check;
mod error;
mod overlap;

use std::collections::HashSet;

pub use error::{Field, Locus, ProblemError, ProblemErrorKind};
pub use overlap::Overlap;

use ProblemErrorKind as Kind;
use check::{check_alignment, check_buffer, conflicts_of, fail};

/// Whether a pool holds read-write scratch or read-only constants (RFC goal G3): the
/// runtime's own enum, which generated code names.
pub use usmp::PoolKind;

/// A memory that buffers are placed into (the RFC's `PoolInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool {
    /// Unique name, e.g. `dtcm` or `sram`.
    pub name: String,
    /// Workspace or constant.
    pub kind: PoolKind,
    /// Upper bound on the pool's size in bytes; `None` means unbounded.
    pub size_limit: Option<u64>,
    /// Every offset in this pool is a multiple of this (a power of two).
    pub alignment: u64,
    /// Targets (e.g. `cpu`, `npu`) that may access the pool; empty means all.
    pub targets: Vec<String>,
    /// How fast the memory is, in bytes per second, if stated: used to estimate the
    /// memory time of a plan and by [`Assignment::Fastest`](crate::Assignment::Fastest).
    pub bandwidth: Option<u64>,
}

impl Pool {
    /// An unbounded workspace pool with alignment 1 reachable from every target.
    pub fn workspace(name: impl Into<String>) -> Self {
        Pool {
            name: name.into(),
            kind: PoolKind::Workspace,
            size_limit: None,
            alignment: 1,
            targets: Vec::new(),
            bandwidth: None,
        }
    }

    /// An unbounded constant pool with alignment 1 reachable from every target.
    pub fn constant(name: impl Into<String>) -> Self {
        Pool {
            kind: PoolKind::Constant,
            ..Pool::workspace(name)
        }
    }

    /// Sets the size limit in bytes.
    pub fn with_limit(mut self, bytes: u64) -> Self {
        self.size_limit = Some(bytes);
        self
    }

    /// Sets the pool's alignment in bytes.
    pub fn with_alignment(mut self, bytes: u64) -> Self {
        self.alignment = bytes;
        self
    }

    /// Sets the pool's bandwidth in bytes per second.
    pub fn with_bandwidth(mut self, bytes_per_second: u64) -> Self {
        self.bandwidth = Some(bytes_per_second);
        self
    }

    /// Whether `bytes` bytes fit under the pool's limit.
    pub fn admits(&self, bytes: u64) -> bool {
        self.size_limit.is_none_or(|limit| bytes <= limit)
    }
}

/// A half-open live range `[start, end)` in abstract time steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Live {
    /// First step at which the buffer holds data.
    pub start: u64,
    /// First step at which it no longer does.
    pub end: u64,
}

impl Live {
    /// Whether two live ranges share a step.
    pub fn overlaps(self, other: Live) -> bool {
        self.start < other.end && other.start < self.end
    }
}

/// A buffer to place (the RFC's `BufferInfo`), as given to [`ProblemBuilder::buffer`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    /// Unique name.
    pub name: String,
    /// Size in bytes, at least 1.
    pub size: u64,
    /// The buffer's offset is a multiple of this (a power of two).
    pub alignment: u64,
    /// The kind of pool the buffer must live in.
    pub kind: PoolKind,
    /// Pools it may go to, most preferred first (indices into [`Problem::pools`]).
    pub candidates: Vec<usize>,
    /// Its live range, for problems whose conflicts come from liveness.
    pub live: Option<Live>,
    /// Bytes read and written in it per inference (0: unknown). From a model, its size
    /// times the reads and writes of the calls that use it (twice its size for scratch).
    pub traffic: u64,
}

impl Buffer {
    /// A workspace buffer of `size` bytes with alignment 1 and no candidates yet.
    pub fn new(name: impl Into<String>, size: u64) -> Self {
        Buffer {
            name: name.into(),
            size,
            alignment: 1,
            kind: PoolKind::Workspace,
            candidates: Vec::new(),
            live: None,
            traffic: 0,
        }
    }

    /// Sets the alignment in bytes.
    pub fn with_alignment(mut self, bytes: u64) -> Self {
        self.alignment = bytes;
        self
    }

    /// Sets the candidate pools, most preferred first.
    pub fn with_candidates(mut self, pools: impl IntoIterator<Item = usize>) -> Self {
        self.candidates = pools.into_iter().collect();
        self
    }

    /// Sets the live range `[start, end)`.
    pub fn with_live(mut self, start: u64, end: u64) -> Self {
        self.live = Some(Live { start, end });
        self
    }

    /// Sets the bytes read and written in the buffer per inference.
    pub fn with_traffic(mut self, bytes: u64) -> Self {
        self.traffic = bytes;
        self
    }

    /// Marks the buffer as constant data.
    pub fn constant(mut self) -> Self {
        self.kind = PoolKind::Constant;
        self
    }
}

/// How a problem states which buffers may not share memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Conflicts {
    /// Every buffer has a live range; two conflict iff their ranges overlap. Large
    /// liveness problems are stored this way so no quadratic edge list is ever built.
    Intervals,
    /// An explicit, symmetric, sorted, duplicate-free adjacency list per buffer.
    Graph(Vec<Vec<usize>>),
}

/// A checked planning problem: pools, buffers and conflicts.
#[derive(Clone, Debug)]
pub struct Problem {
    pools: Vec<Pool>,
    buffers: Vec<Buffer>,
    conflicts: Conflicts,
    /// Sorted by their pair of buffers (lower index first).
    overlaps: Vec<Overlap>,
}

impl Problem {
    /// Starts building a problem.
    pub fn builder() -> ProblemBuilder {
        ProblemBuilder::default()
    }

    /// The pools, in declaration (preference) order.
    pub fn pools(&self) -> &[Pool] {
        &self.pools
    }

    /// The buffers, in declaration order.
    pub fn buffers(&self) -> &[Buffer] {
        &self.buffers
    }

    /// How conflicts are represented.
    pub fn conflicts(&self) -> &Conflicts {
        &self.conflicts
    }

    /// The outputs that may share bytes with an input they consume, and where.
    pub fn overlaps(&self) -> &[Overlap] {
        &self.overlaps
    }

    /// The overlap declared between buffers `a` and `b`, either way round.
    pub fn overlap_between(&self, a: usize, b: usize) -> Option<&Overlap> {
        let key = (a.min(b), a.max(b));
        let k = self
            .overlaps
            .binary_search_by_key(&key, |o| (o.output.min(o.input), o.output.max(o.input)))
            .ok()?;
        self.overlaps.get(k)
    }

    /// Whether buffers `a` and `b` may not overlap in memory (but for a declared
    /// [`Overlap`]'s window).
    pub fn conflict(&self, a: usize, b: usize) -> bool {
        if a == b {
            return false;
        }
        match &self.conflicts {
            Conflicts::Graph(adj) => adj[a].binary_search(&b).is_ok(),
            Conflicts::Intervals => match (self.buffers[a].live, self.buffers[b].live) {
                (Some(x), Some(y)) => x.overlaps(y),
                _ => false,
            },
        }
    }

    /// The number of buffers each buffer conflicts with, in O(n log n) for intervals.
    pub fn conflict_counts(&self) -> Vec<usize> {
        match &self.conflicts {
            Conflicts::Graph(adj) => adj.iter().map(Vec::len).collect(),
            Conflicts::Intervals => {
                let lives: Vec<Live> = self.buffers.iter().filter_map(|b| b.live).collect();
                let mut starts: Vec<u64> = lives.iter().map(|l| l.start).collect();
                let mut ends: Vec<u64> = lives.iter().map(|l| l.end).collect();
                starts.sort_unstable();
                ends.sort_unstable();
                let n = lives.len();
                lives
                    .iter()
                    .map(|l| {
                        // Those that end by our start, or start at or after our end, miss us.
                        let ended = ends.partition_point(|&e| e <= l.start);
                        let later = n - starts.partition_point(|&s| s < l.end);
                        n - ended - later - 1
                    })
                    .collect()
            }
        }
    }

    /// Index of the pool called `name`.
    pub fn pool_index(&self, name: &str) -> Option<usize> {
        self.pools.iter().position(|p| p.name == name)
    }

    /// The same problem with every pool unbounded: where a greedy plan overflows a limit,
    /// the exact solver starts from this one's plan and searches under the limits.
    pub(crate) fn without_limits(&self) -> Problem {
        let mut relaxed = self.clone();
        for pool in &mut relaxed.pools {
            pool.size_limit = None;
        }
        relaxed
    }

    /// The same problem with no overlaps declared: every conflicting pair apart.
    pub(crate) fn without_overlaps(&self) -> Problem {
        Problem {
            overlaps: Vec::new(),
            ..self.clone()
        }
    }

    /// The same problem with each buffer's candidates fastest first (by bandwidth; a pool
    /// without one counts as slowest; equals keep their preference order).
    pub(crate) fn fastest_first(&self) -> Problem {
        let mut fast = self.clone();
        let speed = |p: &usize| std::cmp::Reverse(self.pools[*p].bandwidth.unwrap_or(0));
        for buffer in &mut fast.buffers {
            buffer.candidates.sort_by_key(speed);
        }
        fast
    }

    /// Narrows `buffer`'s candidate pools to `pools` (a subset of them, in the order to
    /// try), for an assignment decided before placing.
    pub(crate) fn set_candidates(&mut self, buffer: usize, pools: Vec<usize>) {
        debug_assert!(
            pools
                .iter()
                .all(|p| self.buffers[buffer].candidates.contains(p))
        );
        self.buffers[buffer].candidates = pools;
    }

    /// The alignment an offset of `buffer` in `pool` must have: the larger of the two.
    pub fn alignment_in(&self, buffer: usize, pool: usize) -> u64 {
        self.buffers[buffer]
            .alignment
            .max(self.pools[pool].alignment)
    }
}

/// Collects pools, buffers and conflicts, then checks them all in [`build`](Self::build).
#[derive(Clone, Debug, Default)]
pub struct ProblemBuilder {
    pools: Vec<Pool>,
    buffers: Vec<Buffer>,
    edges: Vec<(usize, usize)>,
    /// Each with its position among its output's.
    overlaps: Vec<(Overlap, usize)>,
}

impl ProblemBuilder {
    /// Adds a pool and returns its index (its preference rank among pools).
    pub fn pool(&mut self, pool: Pool) -> usize {
        self.pools.push(pool);
        self.pools.len() - 1
    }

    /// Adds a buffer and returns its index.
    pub fn buffer(&mut self, buffer: Buffer) -> usize {
        self.buffers.push(buffer);
        self.buffers.len() - 1
    }

    /// Declares that buffers `a` and `b` may not overlap. Order and repetition do not
    /// matter: conflicts are symmetric and deduplicated.
    pub fn conflict(&mut self, a: usize, b: usize) {
        self.edges.push((a, b));
    }

    /// Declares that `overlap.output` may share bytes with `overlap.input` within its
    /// window. The two must conflict (else they may share bytes anyway), be workspace
    /// buffers, and (with live ranges) each share bytes with one buffer at a time.
    pub fn overlap(&mut self, overlap: Overlap) {
        let k = self
            .overlaps
            .iter()
            .filter(|(o, _)| o.output == overlap.output)
            .count();
        self.overlaps.push((overlap, k));
    }

    /// Checks everything and returns the problem, or the first problem found.
    pub fn build(self) -> Result<Problem, ProblemError> {
        self.build_all_errors()
            .map_err(|mut all| all.swap_remove(0))
    }

    /// As [`build`](Self::build), but names every problem found: each pool's and each
    /// buffer's first, then the conflicts' (never an empty list).
    pub fn build_all_errors(self) -> Result<Problem, Vec<ProblemError>> {
        let ProblemBuilder {
            pools,
            buffers,
            edges,
            overlaps,
        } = self;
        let mut errors = Vec::new();
        let mut pool_names = HashSet::new();
        for (p, pool) in pools.iter().enumerate() {
            let at = |field| Locus::Pool(p, field);
            if !pool_names.insert(pool.name.as_str()) {
                errors.push(fail(
                    at(Field::Name),
                    Kind::DuplicatePool(pool.name.clone()),
                ));
            } else if let Err(k) =
                check_alignment(|| format!("pool \"{}\"", pool.name), pool.alignment)
            {
                errors.push(fail(at(Field::Alignment), k));
            }
        }
        // Sized at once: growing would hash every name again at each doubling.
        let mut buffer_names = HashSet::with_capacity(buffers.len());
        for (i, buffer) in buffers.iter().enumerate() {
            if !buffer_names.insert(buffer.name.as_str()) {
                errors.push(fail(
                    Locus::Buffer(i, Field::Name),
                    Kind::DuplicateBuffer(buffer.name.clone()),
                ));
            } else if let Err((field, k)) = check_buffer(buffer, &pools) {
                errors.push(fail(Locus::Buffer(i, field), k));
            }
        }
        if !errors.is_empty() {
            // The conflicts are checked against well-formed buffers only.
            return Err(errors);
        }
        let conflicts = conflicts_of(&buffers, edges).map_err(|e| vec![e])?;
        let mut problem = Problem {
            pools,
            buffers,
            conflicts,
            overlaps: Vec::new(),
        };
        if !overlaps.is_empty() {
            problem.overlaps =
                overlap::checked(overlaps, &problem.buffers, &problem.conflicts, |a, b| {
                    problem.conflict(a, b)
                })?;
        }
        Ok(problem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_buffers() -> ProblemBuilder {
        let mut b = Problem::builder();
        let p = b.pool(Pool::workspace("sram"));
        b.buffer(Buffer::new("a", 8).with_candidates([p]));
        b.buffer(Buffer::new("b", 8).with_candidates([p]));
        b
    }

    #[test]
    fn conflicts_are_symmetric_and_deduplicated() {
        let mut b = two_buffers();
        b.conflict(0, 1);
        b.conflict(0, 1);
        b.conflict(1, 0);
        let p = b.build().unwrap();
        assert_eq!(p.conflicts(), &Conflicts::Graph(vec![vec![1], vec![0]]));
        assert!(p.conflict(1, 0) && p.conflict(0, 1));
        assert_eq!(p.conflict_counts(), vec![1, 1]);
    }

    #[test]
    fn interval_conflicts_are_half_open() {
        let mut b = Problem::builder();
        let p = b.pool(Pool::workspace("w"));
        b.buffer(Buffer::new("a", 1).with_candidates([p]).with_live(0, 2));
        b.buffer(Buffer::new("b", 1).with_candidates([p]).with_live(2, 4));
        b.buffer(Buffer::new("c", 1).with_candidates([p]).with_live(1, 3));
        let p = b.build().unwrap();
        assert!(!p.conflict(0, 1));
        assert!(p.conflict(0, 2) && p.conflict(1, 2));
        assert_eq!(p.conflict_counts(), vec![1, 1, 2]);
    }

    #[test]
    fn rejects_bad_input_with_names() {
        let mut b = two_buffers();
        b.conflict(1, 1);
        assert_eq!(
            b.build().unwrap_err(),
            fail(
                Locus::Buffer(1, Field::Conflicts),
                Kind::SelfConflict("b".into())
            )
        );

        let mut b = Problem::builder();
        let p = b.pool(Pool::workspace("w").with_alignment(12));
        b.buffer(Buffer::new("a", 1).with_candidates([p]));
        let e = b.build().unwrap_err();
        assert!(e.to_string().contains("pool \"w\" has alignment 12"), "{e}");

        let mut b = Problem::builder();
        let p = b.pool(Pool::workspace("w"));
        b.buffer(Buffer::new("k", 4).constant().with_candidates([p]));
        let e = b.build().unwrap_err();
        assert!(matches!(e.kind, Kind::KindMismatch { .. }), "{e}");
        assert_eq!(e.locus, Locus::Buffer(0, Field::Candidate(0)));

        let mut b = Problem::builder();
        b.pool(Pool::workspace("w"));
        b.buffer(Buffer::new("a", 0).with_candidates([0]));
        assert_eq!(
            b.build().unwrap_err(),
            fail(Locus::Buffer(0, Field::Size), Kind::ZeroSize("a".into()))
        );

        let mut b = Problem::builder();
        b.pool(Pool::workspace("w"));
        b.buffer(Buffer::new("a", 1).with_candidates([0]).with_live(0, 1));
        b.buffer(Buffer::new("b", 1).with_candidates([0]));
        assert_eq!(b.build().unwrap_err().locus, Locus::Buffer(1, Field::Live));
    }
}
