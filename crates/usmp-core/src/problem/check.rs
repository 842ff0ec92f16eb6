//! The builder's checks of pools and buffers, and the conflicts they state.

use super::{Buffer, Conflicts, Field, Locus, Pool, ProblemError, ProblemErrorKind};

use ProblemErrorKind as Kind;

pub(super) fn fail(locus: Locus, kind: Kind) -> ProblemError {
    ProblemError { locus, kind }
}

/// `what` names the owner, written only when the alignment is wrong.
pub(super) fn check_alignment(what: impl FnOnce() -> String, alignment: u64) -> Result<(), Kind> {
    if alignment.is_power_of_two() {
        Ok(())
    } else {
        Err(Kind::BadAlignment {
            what: what(),
            alignment,
        })
    }
}

pub(super) fn check_buffer(buffer: &Buffer, pools: &[Pool]) -> Result<(), (Field, Kind)> {
    let name = &buffer.name;
    if buffer.size == 0 {
        return Err((Field::Size, Kind::ZeroSize(name.clone())));
    }
    check_alignment(|| format!("buffer \"{name}\""), buffer.alignment)
        .map_err(|k| (Field::Alignment, k))?;
    if buffer.candidates.is_empty() {
        return Err((Field::Candidates, Kind::NoCandidates(name.clone())));
    }
    for (k, &index) in buffer.candidates.iter().enumerate() {
        let at = Field::Candidate(k);
        let pool = pools.get(index).ok_or_else(|| {
            let buffer = name.clone();
            (at, Kind::UnknownPool { buffer, index })
        })?;
        if buffer.candidates[..k].contains(&index) {
            let pool = pool.name.clone();
            return Err((
                at,
                Kind::DuplicateCandidate {
                    buffer: name.clone(),
                    pool,
                },
            ));
        }
        if pool.kind != buffer.kind {
            let (kind, pool) = (buffer.kind, pool.name.clone());
            return Err((
                at,
                Kind::KindMismatch {
                    buffer: name.clone(),
                    kind,
                    pool,
                },
            ));
        }
    }
    if let Some(live) = buffer.live
        && live.start >= live.end
    {
        return Err((
            Field::Live,
            Kind::EmptyLive {
                buffer: name.clone(),
                live,
            },
        ));
    }
    Ok(())
}

pub(super) fn conflicts_of(
    buffers: &[Buffer],
    edges: Vec<(usize, usize)>,
) -> Result<Conflicts, ProblemError> {
    let with_live = buffers.iter().filter(|b| b.live.is_some()).count();
    if with_live > 0 {
        if let Some(missing) = buffers.iter().position(|b| b.live.is_none()) {
            let why = format!(
                "buffer \"{}\" has no live range but others do; give every buffer a live \
                 range, or none and list conflicts instead",
                buffers[missing].name
            );
            return Err(fail(
                Locus::Buffer(missing, Field::Live),
                Kind::MixedConflicts(why),
            ));
        }
        if let Some(&(a, _)) = edges.first() {
            let why =
                "the problem has both live ranges and explicit conflicts; use one or the other"
                    .into();
            return Err(fail(
                Locus::Buffer(a.min(buffers.len().saturating_sub(1)), Field::Conflicts),
                Kind::MixedConflicts(why),
            ));
        }
        return Ok(Conflicts::Intervals);
    }
    let mut adj = vec![Vec::new(); buffers.len()];
    for (a, b) in edges {
        if let Some(bad) = [a, b].into_iter().find(|&i| i >= buffers.len()) {
            let owner = if a < buffers.len() { a } else { 0 };
            return Err(fail(
                Locus::Buffer(owner, Field::Conflicts),
                Kind::UnknownBuffer(bad),
            ));
        }
        if a == b {
            return Err(fail(
                Locus::Buffer(a, Field::Conflicts),
                Kind::SelfConflict(buffers[a].name.clone()),
            ));
        }
        adj[a].push(b);
        adj[b].push(a);
    }
    for list in &mut adj {
        list.sort_unstable();
        list.dedup();
    }
    Ok(Conflicts::Graph(adj))
}
