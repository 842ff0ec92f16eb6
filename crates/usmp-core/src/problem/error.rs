//! Why a problem could not be built, and where: front ends turn the [`Locus`] into a
//! line and column of their own input.

use std::fmt;

use super::{Live, PoolKind};

/// Which part of a problem an error is about, so a front end can point at the line and
/// column the user wrote it on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Locus {
    /// Pool number `.0` (declaration order), field `.1`.
    Pool(usize, Field),
    /// Buffer number `.0` (declaration order), field `.1`.
    Buffer(usize, Field),
}

/// A field of a pool or buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The name.
    Name,
    /// The size.
    Size,
    /// The alignment.
    Alignment,
    /// The candidate pool at this position in the list.
    Candidate(usize),
    /// The candidate list as a whole.
    Candidates,
    /// The conflict list.
    Conflicts,
    /// The live range.
    Live,
    /// The overlap at this position among the buffer's (as the output).
    Overlap(usize),
}

/// Why a problem could not be built: what is wrong, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProblemError {
    /// The pool or buffer, and the field.
    pub locus: Locus,
    /// What is wrong.
    pub kind: ProblemErrorKind,
}

impl fmt::Display for ProblemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kind.fmt(f)
    }
}

impl std::error::Error for ProblemError {}

/// What is wrong with a problem. Names are the user's, so the message stands alone.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProblemErrorKind {
    /// Two pools share a name.
    DuplicatePool(String),
    /// Two buffers share a name.
    DuplicateBuffer(String),
    /// A pool or buffer alignment is zero or not a power of two.
    BadAlignment {
        /// `pool "x"` or `buffer "x"`.
        what: String,
        /// The alignment given.
        alignment: u64,
    },
    /// A buffer of size zero.
    ZeroSize(String),
    /// A buffer with no candidate pools.
    NoCandidates(String),
    /// A candidate index that names no pool.
    UnknownPool {
        /// The buffer.
        buffer: String,
        /// The bad index.
        index: usize,
    },
    /// A candidate listed twice for one buffer.
    DuplicateCandidate {
        /// The buffer.
        buffer: String,
        /// The pool listed twice.
        pool: String,
    },
    /// A buffer listed a candidate pool of the wrong kind.
    KindMismatch {
        /// The buffer.
        buffer: String,
        /// The buffer's kind.
        kind: PoolKind,
        /// The pool.
        pool: String,
    },
    /// A conflict naming a buffer index that does not exist.
    UnknownBuffer(usize),
    /// A buffer listed as conflicting with itself.
    SelfConflict(String),
    /// A live range with `start >= end`.
    EmptyLive {
        /// The buffer.
        buffer: String,
        /// Its live range.
        live: Live,
    },
    /// Some buffers have live ranges and others do not, or ranges and explicit conflicts
    /// were mixed.
    MixedConflicts(String),
    /// An overlap of a buffer with itself.
    SelfOverlap(String),
    /// An overlap whose least shift is above its greatest.
    EmptyWindow {
        /// The output.
        output: String,
        /// The input.
        input: String,
        /// The window given.
        shifts: [i64; 2],
    },
    /// An overlap of constant data.
    ConstantOverlap {
        /// The output.
        output: String,
        /// The input.
        input: String,
    },
    /// An overlap between buffers that do not conflict.
    OverlapWithoutConflict {
        /// The output.
        output: String,
        /// The input.
        input: String,
    },
    /// The same pair of buffers given two overlaps.
    DuplicateOverlap {
        /// The output.
        output: String,
        /// The input.
        input: String,
    },
    /// A buffer that would share bytes with two others at one step.
    OverlapsAtOnce {
        /// The buffer.
        buffer: String,
        /// The first step it would.
        step: u64,
    },
}

impl fmt::Display for ProblemErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ProblemErrorKind as ProblemError;
        match self {
            ProblemError::DuplicatePool(n) => {
                write!(
                    f,
                    "pool \"{n}\" is declared twice; give each pool its own name"
                )
            }
            ProblemError::DuplicateBuffer(n) => {
                write!(
                    f,
                    "buffer \"{n}\" is declared twice; give each buffer its own name"
                )
            }
            ProblemError::BadAlignment { what, alignment } => write!(
                f,
                "{what} has alignment {alignment}, which is not a power of two; write 1, 2, 4, 8, 16, ..."
            ),
            ProblemError::ZeroSize(n) => {
                write!(f, "buffer \"{n}\" has size 0; sizes are at least 1 byte")
            }
            ProblemError::NoCandidates(n) => write!(
                f,
                "buffer \"{n}\" has no candidate pools; list at least one pool it may go to"
            ),
            ProblemError::UnknownPool { buffer, index } => {
                write!(
                    f,
                    "buffer \"{buffer}\" names pool #{index}, which does not exist"
                )
            }
            ProblemError::DuplicateCandidate { buffer, pool } => write!(
                f,
                "buffer \"{buffer}\" lists pool \"{pool}\" twice among its candidates; list it once"
            ),
            ProblemError::KindMismatch { buffer, kind, pool } => write!(
                f,
                "buffer \"{buffer}\" is {kind} data but candidate pool \"{pool}\" is not a {kind} pool; \
                 list only {kind} pools for it"
            ),
            ProblemError::UnknownBuffer(i) => {
                write!(f, "a conflict names buffer #{i}, which does not exist")
            }
            ProblemError::SelfConflict(n) => {
                write!(
                    f,
                    "buffer \"{n}\" lists itself as a conflict; remove it from its own list"
                )
            }
            ProblemError::EmptyLive { buffer, live } => write!(
                f,
                "buffer \"{buffer}\" has live range [{}, {}), which is empty; the end must be greater than the start",
                live.start, live.end
            ),
            ProblemError::MixedConflicts(why) => f.write_str(why),
            ProblemError::SelfOverlap(_)
            | ProblemError::EmptyWindow { .. }
            | ProblemError::ConstantOverlap { .. }
            | ProblemError::OverlapWithoutConflict { .. }
            | ProblemError::DuplicateOverlap { .. }
            | ProblemError::OverlapsAtOnce { .. } => overlap(self, f),
        }
    }
}

/// The messages of the overlap kinds.
fn overlap(kind: &ProblemErrorKind, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match kind {
        ProblemErrorKind::SelfOverlap(n) => write!(
            f,
            "buffer \"{n}\" is given an overlap with itself; name the input its call reads \
                 for the last time"
        ),
        ProblemErrorKind::EmptyWindow {
            output,
            input,
            shifts,
        } => write!(
            f,
            "the overlap of \"{output}\" over \"{input}\" has shifts [{}, {}]: the least is \
                 above the greatest; write [least, greatest]",
            shifts[0], shifts[1]
        ),
        ProblemErrorKind::ConstantOverlap { output, input } => write!(
            f,
            "the overlap of \"{output}\" over \"{input}\" involves constant data, which is \
                 never written; only workspace buffers may share bytes"
        ),
        ProblemErrorKind::OverlapWithoutConflict { output, input } => write!(
            f,
            "\"{output}\" and \"{input}\" do not conflict, so they may share bytes anyway; \
                 leave the overlap out"
        ),
        ProblemErrorKind::DuplicateOverlap { output, input } => write!(
            f,
            "the overlap of \"{output}\" over \"{input}\" is given twice; give each pair one \
                 window"
        ),
        ProblemErrorKind::OverlapsAtOnce { buffer, step } => write!(
            f,
            "buffer \"{buffer}\" would share bytes with two buffers at step {step}; a buffer \
                 may overlap one other at a time"
        ),
        // Only the overlap kinds come here (see `fmt`).
        other => fmt::Debug::fmt(other, f),
    }
}
