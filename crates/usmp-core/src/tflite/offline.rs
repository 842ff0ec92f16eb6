//! TensorFlow Lite Micro's offline memory plan: the model metadata named
//! `OfflineMemoryAllocation`, read from and written into a `.tflite` file.
//!
//! The metadata points to a buffer of little-endian `i32` words
//! `[version, subgraphs, n, offset_0 .. offset_n-1]`: one word per tensor of every
//! subgraph, in order, holding its byte offset from the start of TFLite Micro's
//! non-persistent arena area (the head), or -1 for "plan at run time".
//!
//! Writing never edits the model in place. FlatBuffers offsets point forward and are
//! relative to where they are stored, so the original file is kept byte for byte behind a
//! new prefix: a new root `Model` table, a `buffers` vector with one more buffer (the
//! plan), a `metadata` vector with the plan's entry (any older plan's entry left out),
//! and the plan's words. Everything else the new root refers to is the original's, moved
//! by the prefix's length, a multiple of 16, so every alignment in it still holds.

use super::flatbuffer::Table;
use super::{TfliteError, corrupt};

/// The metadata name TensorFlow Lite Micro looks for (`micro_allocation_info.cc`).
pub const OFFLINE_PLAN_METADATA: &str = "OfflineMemoryAllocation";

/// The format version written in the first word (TFLite Micro's tests write 1; it
/// ignores the word).
const VERSION: i32 = 1;

/// `Model` fields by slot, in schema order (`schema.fbs`): 0 `version: uint`, then
/// offsets: 1 `operator_codes`, 2 `subgraphs`, 3 `description`, 4 `buffers`,
/// 5 `metadata_buffer`, 6 `metadata`, 7 `signature_defs`.
const MODEL_SLOTS: usize = 8;
const BUFFERS: usize = 4;
const METADATA: usize = 6;

/// An offline memory plan as the file holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OfflinePlan {
    /// The number of subgraphs the plan says the model has.
    pub subgraphs: i32,
    /// One offset per tensor of every subgraph, in order; -1 is planned at run time.
    pub offsets: Vec<i32>,
}

/// The offline plan in a `.tflite` file's metadata, if it has one.
pub fn read_offline_plan(bytes: &[u8]) -> Result<Option<OfflinePlan>, TfliteError> {
    super::open(bytes)?;
    let root = Table::root(bytes).map_err(corrupt(|| "the model".into()))?;
    let Some(index) = metadata(&root)?.iter().find_map(|m| m.plan_buffer) else {
        return Ok(None);
    };
    let ctx = || format!("the {OFFLINE_PLAN_METADATA} metadata (buffer {index})");
    let buffers = root.vector(BUFFERS).map_err(corrupt(ctx))?;
    let data = super::buffer_data(bytes, buffers.as_ref(), index).map_err(corrupt(ctx))?;
    let bad = |detail: String| TfliteError::Corrupt {
        context: ctx(),
        detail,
    };
    if data.len() % 4 != 0 || data.len() < 12 {
        return Err(bad(format!(
            "{} bytes is not a header of three 32-bit words and whole words after it",
            data.len()
        )));
    }
    let words: Vec<i32> = data
        .chunks_exact(4)
        .map(|w| i32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    let count = usize::try_from(words[2]).ok();
    if count != Some(words.len() - 3) {
        return Err(bad(format!(
            "the header says {} offsets follow, the buffer holds {}",
            words[2],
            words.len() - 3
        )));
    }
    Ok(Some(OfflinePlan {
        subgraphs: words[1],
        offsets: words[3..].to_vec(),
    }))
}

/// One entry of the model's `metadata` vector.
struct Metadata {
    /// Where its table starts.
    at: usize,
    /// Its buffer index, when it is an `OfflineMemoryAllocation` entry.
    plan_buffer: Option<usize>,
}

/// The entries of the model's `metadata` vector, in order.
fn metadata(root: &Table<'_>) -> Result<Vec<Metadata>, TfliteError> {
    let Some(list) = root
        .vector(METADATA)
        .map_err(corrupt(|| "the metadata list".into()))?
    else {
        return Ok(Vec::new());
    };
    (0..list.len())
        .map(|k| {
            let ctx = || format!("metadata entry {k}");
            let entry = list.table(k).map_err(corrupt(ctx))?;
            let is_plan =
                entry.string(0).map_err(corrupt(ctx))?.as_deref() == Some(OFFLINE_PLAN_METADATA);
            let plan_buffer = if is_plan {
                Some(entry.u32(1, 0).map_err(corrupt(ctx))? as usize)
            } else {
                None
            };
            Ok(Metadata {
                at: list.target(k).map_err(corrupt(ctx))?,
                plan_buffer,
            })
        })
        .collect()
}

/// A copy of a model with an offline plan written in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WithOfflinePlan {
    /// The new file.
    pub bytes: Vec<u8>,
    /// Whether the original already held an offline plan, now replaced.
    pub replaced: bool,
}

/// An error about the model usmp cannot write a plan into.
fn unsupported(detail: String) -> TfliteError {
    TfliteError::Unsupported {
        context: "the model".into(),
        detail,
    }
}

/// Where each of the model's buffers is; an error for one stored outside the flatbuffer.
fn inner_buffers(root: &Table<'_>) -> Result<Vec<usize>, TfliteError> {
    let mut old_buffers = Vec::new();
    if let Some(list) = root
        .vector(BUFFERS)
        .map_err(corrupt(|| "the buffer list".into()))?
    {
        for k in 0..list.len() {
            let ctx = || format!("buffer {k}");
            let at = list.target(k).map_err(corrupt(ctx))?;
            if list
                .table(k)
                .and_then(|b| b.u64(1, 0))
                .map_err(corrupt(ctx))?
                > 1
            {
                return Err(unsupported(format!(
                    "buffer {k} (at byte {at}) is stored outside the flatbuffer, at an offset \
                     from the start of the file (a model over 2 GB); usmp writes plans only \
                     into models whose buffers are inside the flatbuffer"
                )));
            }
            old_buffers.push(at);
        }
    }
    Ok(old_buffers)
}

/// The metadata's words: version, subgraphs, the number of offsets, the offsets.
fn plan_words(plan: &OfflinePlan) -> Result<Vec<i32>, TfliteError> {
    let mut words = vec![VERSION, plan.subgraphs];
    words.push(i32::try_from(plan.offsets.len()).map_err(|_| {
        unsupported(format!(
            "{} offsets do not fit the format",
            plan.offsets.len()
        ))
    })?);
    words.extend(&plan.offsets);

    Ok(words)
}

/// Returns a copy of the `.tflite` file `bytes` whose metadata holds `plan`, replacing an
/// offline plan it already had. The copy is read back before it is returned: the same
/// model, and exactly this plan.
pub fn write_offline_plan(
    bytes: &[u8],
    plan: &OfflinePlan,
) -> Result<WithOfflinePlan, TfliteError> {
    let before = super::read_tflite(bytes, "model")?;
    let root = Table::root(bytes).map_err(corrupt(|| "the model".into()))?;
    if let Some(slot) = (MODEL_SLOTS..root.slots()).find(|&s| root.has(s).unwrap_or(true)) {
        return Err(unsupported(format!(
            "it has Model field {slot}, newer than the schema usmp writes (external \
             buffers or later); usmp cannot add a plan to it without knowing that field"
        )));
    }
    let version = match root.has(0) {
        Ok(true) => Some(root.u32(0, 0).map_err(corrupt(|| "the model".into()))?),
        _ => None,
    };
    let old_fields: Vec<Option<usize>> = (1..MODEL_SLOTS)
        .map(|slot| root.target(slot))
        .collect::<Result<_, _>>()
        .map_err(corrupt(|| "the model".into()))?;

    let old_buffers = inner_buffers(&root)?;
    let entries = metadata(&root)?;
    let replaced = entries.iter().any(|m| m.plan_buffer.is_some());
    let kept_metadata: Vec<usize> = entries
        .iter()
        .filter(|m| m.plan_buffer.is_none())
        .map(|m| m.at)
        .collect();

    let words = plan_words(plan)?;
    let mut out = Prefix::default();
    let root_at = out.offset();
    out.bytes.extend(b"TFL3");
    let mut fields = vec![match version {
        Some(v) => Field::Scalar(v),
        None => Field::Absent,
    }];
    let new_buffers = out.later();
    let new_metadata = out.later();
    for (slot, old) in (1..MODEL_SLOTS).zip(&old_fields) {
        fields.push(match (slot, old) {
            (BUFFERS, _) => Field::To(new_buffers),
            (METADATA, _) => Field::To(new_metadata),
            (_, Some(at)) => Field::To(Target::Old(*at)),
            (_, None) => Field::Absent,
        });
    }
    let model = out.table(&fields);
    out.point(root_at, Target::New(model));

    let plan_buffer = out.later();
    let mut items: Vec<Target> = old_buffers.iter().map(|&t| Target::Old(t)).collect();
    items.push(plan_buffer);
    let buffers = out.vector(&items);
    out.resolve(new_buffers, buffers);
    let plan_metadata = out.later();
    let mut items: Vec<Target> = kept_metadata.iter().map(|&t| Target::Old(t)).collect();
    items.push(plan_metadata);
    let metadata = out.vector(&items);
    out.resolve(new_metadata, metadata);

    let data = out.later();
    let buffer = out.table(&[Field::To(data)]);
    out.resolve(plan_buffer, buffer);
    let name = out.later();
    let plan_index = u32::try_from(old_buffers.len())
        .map_err(|_| unsupported("it has more than 2^32 buffers".into()))?;
    let entry = out.table(&[Field::To(name), Field::Scalar(plan_index)]);
    out.resolve(plan_metadata, entry);
    let name_at = out.string(OFFLINE_PLAN_METADATA);
    out.resolve(name, name_at);
    let data_at = out.words(&words);
    out.resolve(data, data_at);

    let bytes = out.finish(bytes).map_err(unsupported)?;
    check_written(&before, &bytes, &words)?;
    Ok(WithOfflinePlan { bytes, replaced })
}

/// The written file reads back as the same model with exactly the plan's words.
fn check_written(
    before: &crate::model::Model,
    bytes: &[u8],
    words: &[i32],
) -> Result<(), TfliteError> {
    let fault = |detail: &str| TfliteError::Corrupt {
        context: "the written copy".into(),
        detail: format!("{detail}; this is a bug in usmp, please report it with the model"),
    };
    if super::read_tflite(bytes, "model")? != *before {
        return Err(fault("it does not read back as the same model"));
    }
    let back = read_offline_plan(bytes)?.ok_or_else(|| fault("its plan cannot be found"))?;
    if back.subgraphs != words[1] || back.offsets != words[3..] {
        return Err(fault("its plan reads back differently"));
    }
    Ok(())
}

/// What an offset in the prefix points to.
#[derive(Clone, Copy, Debug)]
enum Target {
    /// A position in the prefix.
    New(usize),
    /// A position in the original file, which follows the prefix.
    Old(usize),
    /// A part of the prefix not written yet, placed later with [`Prefix::resolve`].
    Later(Later),
}

/// A target announced before it is written: an index into [`Prefix::later`].
#[derive(Clone, Copy, Debug)]
struct Later(usize);

/// A table field: absent, a `u32` scalar, or an offset.
#[derive(Clone, Copy, Debug)]
enum Field {
    Absent,
    Scalar(u32),
    To(Target),
}

/// The new front of the file, written front to back. Every offset it stores points
/// forward (to later in the prefix, or into the original behind it), so each is written as
/// a placeholder and filled in by [`Prefix::finish`].
#[derive(Default)]
struct Prefix {
    bytes: Vec<u8>,
    /// Placeholders: where each is, and what it points to.
    offsets: Vec<(usize, Target)>,
    /// Where each announced part was written.
    later: Vec<Option<usize>>,
}

impl Prefix {
    fn align(&mut self, to: usize, then: usize) {
        while !(self.bytes.len() + then).is_multiple_of(to) {
            self.bytes.push(0);
        }
    }

    /// A `u32` offset placeholder, filled in by `point`.
    fn offset(&mut self) -> usize {
        let at = self.bytes.len();
        self.bytes.extend(0u32.to_le_bytes());
        at
    }

    fn point(&mut self, at: usize, to: Target) {
        self.offsets.push((at, to));
    }

    fn later(&mut self) -> Target {
        self.later.push(None);
        Target::Later(Later(self.later.len() - 1))
    }

    fn resolve(&mut self, which: Target, at: usize) {
        if let Target::Later(Later(k)) = which {
            self.later[k] = Some(at);
        }
    }

    /// A table of four-byte fields, its vtable just before it. Returns where it starts.
    fn table(&mut self, fields: &[Field]) -> usize {
        let present: Vec<bool> = fields.iter().map(|f| !matches!(f, Field::Absent)).collect();
        let stored = present.iter().filter(|&&p| p).count();
        self.align(4, 2 * fields.len() + 4);
        let vtable = self.bytes.len();
        self.bytes
            .extend(((4 + 2 * fields.len()) as u16).to_le_bytes());
        self.bytes.extend(((4 + 4 * stored) as u16).to_le_bytes());
        let mut next = 4u16;
        for &p in &present {
            let at = if p { next } else { 0 };
            next += if p { 4 } else { 0 };
            self.bytes.extend(at.to_le_bytes());
        }
        let table = self.bytes.len();
        self.bytes.extend(((table - vtable) as i32).to_le_bytes());
        for f in fields {
            match *f {
                Field::Absent => {}
                Field::Scalar(v) => self.bytes.extend(v.to_le_bytes()),
                Field::To(t) => {
                    let at = self.offset();
                    self.point(at, t);
                }
            }
        }
        table
    }

    /// A vector of offsets to tables, with `extra` last.
    fn vector(&mut self, items: &[Target]) -> usize {
        self.align(4, 0);
        let start = self.bytes.len();
        self.bytes.extend((items.len() as u32).to_le_bytes());
        for &t in items {
            let at = self.offset();
            self.point(at, t);
        }
        start
    }

    fn string(&mut self, s: &str) -> usize {
        self.align(4, 0);
        let start = self.bytes.len();
        self.bytes.extend((s.len() as u32).to_le_bytes());
        self.bytes.extend(s.as_bytes());
        self.bytes.push(0);
        start
    }

    /// A `[ubyte]` vector of the words' bytes, its data aligned to 16 as the schema's
    /// `force_align: 16` on buffer data asks.
    fn words(&mut self, words: &[i32]) -> usize {
        self.align(16, 4);
        let start = self.bytes.len();
        self.bytes.extend(((words.len() * 4) as u32).to_le_bytes());
        for w in words {
            self.bytes.extend(w.to_le_bytes());
        }
        start
    }

    /// The whole file: the prefix, padded to a multiple of 16, then the original.
    fn finish(mut self, original: &[u8]) -> Result<Vec<u8>, String> {
        self.align(16, 0);
        let base = self.bytes.len();
        if base + original.len() >= 1 << 31 {
            return Err(
                "with the plan added it would reach 2 GB, the most a .tflite \
                        flatbuffer can address"
                    .into(),
            );
        }
        for &(at, to) in &self.offsets {
            let target = match to {
                Target::New(p) => Some(p),
                Target::Old(p) => Some(base + p),
                Target::Later(Later(k)) => self.later[k],
            };
            // Every target lies after its offset: the prefix is written in that order.
            let rel = target
                .and_then(|t| t.checked_sub(at))
                .ok_or_else(|| format!("usmp bug: the offset at {at} has no target after it"))?;
            self.bytes[at..at + 4].copy_from_slice(&(rel as u32).to_le_bytes());
        }
        self.bytes.extend_from_slice(original);
        Ok(self.bytes)
    }
}
