//! The model IR reader; the format is documented on [`parse_model`](super::parse_model).

use std::path::{Path, PathBuf};

use super::json::{Json, Number, Value};
use super::read::{Entries, Known, Names, Reader, Spans};
use super::{InputError, Pos};
use crate::model::{
    Call, CallField, InPlace, Model, ModelLocus, Overlap, Role, Scratch, Size, Tensor, TensorField,
};

const TOP_KEYS: &[&str] = &["name", "tensors", "inputs", "outputs", "calls"];
const TENSOR_KEYS: &[&str] = &[
    "name",
    "size_bytes",
    "alignment",
    "kind",
    "data",
    "file",
    "file_offset",
    "traffic",
];
const CALL_KEYS: &[&str] = &[
    "op", "target", "reads", "writes", "scratch", "in_place", "overlaps",
];
const SCRATCH_KEYS: &[&str] = &["name", "size_bytes", "alignment"];
const IN_PLACE_KEYS: &[&str] = &["output", "input"];
const OVERLAP_KEYS: &[&str] = &["output", "input", "shifts"];

/// Where every part of a model IR file was written, to turn a [`ModelLocus`] into a
/// line and column.
#[derive(Clone, Debug, Default)]
pub(crate) struct ModelSpans {
    root: Option<Pos>,
    tensors: Vec<Spans>,
    calls: Vec<CallSpans>,
    inputs: Vec<Pos>,
    outputs: Vec<Pos>,
}

#[derive(Clone, Debug, Default)]
struct CallSpans {
    whole: Option<Pos>,
    target: Option<Pos>,
    reads: Vec<Pos>,
    writes: Vec<Pos>,
    scratch: Vec<Pos>,
    in_place: Vec<Pos>,
    overlaps: Vec<Pos>,
}

impl ModelSpans {
    /// The spans of the calls in `order` (each a call's index as written).
    pub(crate) fn reorder(&mut self, order: &[usize]) {
        let calls = std::mem::take(&mut self.calls);
        self.calls = order
            .iter()
            .map(|&c| calls.get(c).cloned().unwrap_or_default())
            .collect();
    }

    /// Where `locus` is in the file, if it is in this file.
    pub(crate) fn pos(&self, locus: ModelLocus) -> Option<Pos> {
        let root = self.root?;
        Some(match locus {
            ModelLocus::Tensor(t, field) => {
                let spans = self.tensors.get(t)?;
                let key = match field {
                    TensorField::Name => "name",
                    TensorField::Size => "size_bytes",
                    TensorField::Alignment => "alignment",
                };
                spans.field(key).or(spans.whole).unwrap_or(root)
            }
            ModelLocus::Call(i, field) => {
                let c = self.calls.get(i)?;
                let whole = c.whole.unwrap_or(root);
                let item = |list: &Vec<Pos>, k: usize| list.get(k).copied().unwrap_or(whole);
                match field {
                    CallField::Op => whole,
                    CallField::Target => c.target.unwrap_or(whole),
                    CallField::Read(k) => item(&c.reads, k),
                    CallField::Write(k) => item(&c.writes, k),
                    CallField::Scratch(k) => item(&c.scratch, k),
                    CallField::InPlace(k) => item(&c.in_place, k),
                    CallField::Overlap(k) => item(&c.overlaps, k),
                }
            }
            ModelLocus::Input(k) => self.inputs.get(k).copied().unwrap_or(root),
            ModelLocus::Output(k) => self.outputs.get(k).copied().unwrap_or(root),
            ModelLocus::ScratchRule(_) | ModelLocus::Pools => return None,
        })
    }
}

/// Parses a model IR file, reporting every mistake in it together. `base` is the folder
/// constant `file`s are relative to; every file read is appended to `read` (for build
/// scripts' `rerun-if-changed`).
pub(crate) fn parse_model_json(
    root: &Json<'_>,
    file: &str,
    base: &Path,
    read: &mut Vec<PathBuf>,
) -> Result<(Model, ModelSpans), InputError> {
    let r = Reader::new(file);
    let top = r.object(root, "the model", TOP_KEYS)?;
    let mut spans = ModelSpans {
        root: Some(root.pos),
        ..ModelSpans::default()
    };
    let name = r.get(top, "name").map(|n| r.string(n, "the model's name"));
    let mut model = Model {
        name: name
            .and_then(|n| r.keep(n))
            .unwrap_or_else(|| String::from("model")),
        ..Model::default()
    };
    let list = |key: &str| {
        let j = r.required(top, root, key, "the model");
        r.keep(j.and_then(|j| r.array(j, format_args!("`{key}`"))))
            .unwrap_or_default()
    };
    let mut index: Names = Names::new();
    for (t, tj) in list("tensors").iter().enumerate() {
        let Some((tensor, tspans)) = r.keep(tensor(&r, tj, t, base, read)) else {
            continue;
        };
        if index.contains_key(&tensor.name) {
            r.note(r.err(
                tspans.field("name").unwrap_or(tj.pos),
                format!(
                    "tensor \"{}\" is declared twice; give each tensor its own name",
                    tensor.name
                ),
            ));
        } else {
            index.insert(tensor.name.clone(), model.tensors.len());
        }
        model.tensors.push(tensor);
        spans.tensors.push(tspans);
    }
    // The tensor a name names; a name that is not a tensor's is noted.
    let known_tensors = Known::new("tensors", &index);
    let lookup = |name: &str, pos: Pos, what: &dyn std::fmt::Display| {
        let found = index.get(name).copied();
        if found.is_none() {
            r.note_with(|| {
                let known = known_tensors.text();
                r.err(
                    pos,
                    format!("{what}: no tensor is named \"{name}\"; {known}"),
                )
            });
        }
        found
    };
    for (t, pos) in names(&r, top, "inputs", "inputs", &lookup) {
        model.inputs.push(t);
        spans.inputs.push(pos);
    }
    for (t, pos) in names(&r, top, "outputs", "outputs", &lookup) {
        model.outputs.push(t);
        spans.outputs.push(pos);
    }
    for (i, cj) in list("calls").iter().enumerate() {
        if let Some((call, cs)) = call(&r, cj, i, &lookup) {
            model.calls.push(call);
            spans.calls.push(cs);
        }
    }
    r.finish()?;
    Ok((model, spans))
}

/// Finds the tensor a name names at `pos`; a name that is no tensor's is noted, labelled
/// with the third argument.
type Lookup<'a> = dyn Fn(&str, Pos, &dyn std::fmt::Display) -> Option<usize> + 'a;

/// The tensors the string list `key` of `e` names, each with where it was written.
fn names(
    r: &Reader<'_>,
    e: Entries<'_>,
    key: &str,
    label: &str,
    lookup: &Lookup<'_>,
) -> Vec<(usize, Pos)> {
    r.strings(e, key, label)
        .filter_map(|(n, name, pos)| Some((lookup(name, pos, &format_args!("{label}[{n}]"))?, pos)))
        .collect()
}

/// Call `i`: its operator and target, the tensors it reads and writes, its scratch and
/// its in-place pairs; `None` when it is not an object (noted).
fn call(r: &Reader<'_>, cj: &Json<'_>, i: usize, lookup: &Lookup<'_>) -> Option<(Call, CallSpans)> {
    let what = format!("calls[{i}]");
    let e = r.keep(r.object(cj, &what, CALL_KEYS))?;
    let op = r.required(e, cj, "op", &what);
    let op = r.keep(op.and_then(|op| r.string(op, format_args!("{what}.op"))));
    let what = format!("calls[{i}] ({})", op.as_deref().unwrap_or("?"));
    let mut call = Call::new(op.unwrap_or_default(), "cpu");
    let mut cs = CallSpans {
        whole: Some(cj.pos),
        ..CallSpans::default()
    };
    if let Some(t) = r.get(e, "target") {
        if let Some(target) = r.keep(r.string(t, format_args!("{what}.target"))) {
            call.target = target;
        }
        cs.target = Some(t.pos);
    }
    (call.reads, cs.reads) = names(r, e, "reads", &format!("{what}.reads"), lookup)
        .into_iter()
        .unzip();
    (call.writes, cs.writes) = names(r, e, "writes", &format!("{what}.writes"), lookup)
        .into_iter()
        .unzip();
    if let Some(list) = r.get(e, "scratch") {
        let items = r.keep(r.array(list, format_args!("{what}.scratch")));
        for (k, sj) in items.unwrap_or_default().iter().enumerate() {
            if let Some(s) = r.keep(scratch(r, sj, &format!("{what}.scratch[{k}]"))) {
                call.scratch.push(s);
                cs.scratch.push(sj.pos);
            }
        }
    }
    if let Some(list) = r.get(e, "in_place") {
        let items = r.keep(r.array(list, format_args!("{what}.in_place")));
        for (k, ij) in items.unwrap_or_default().iter().enumerate() {
            let w = format!("{what}.in_place[{k}]");
            let Some(ie) = r.keep(r.object(ij, &w, IN_PLACE_KEYS)) else {
                continue;
            };
            let one = |key: &str| {
                let j = r.keep(r.required(ie, ij, key, &w))?;
                let what = format!("{w}.{key}");
                lookup(&r.keep(r.string(j, &what))?, j.pos, &what)
            };
            if let (Some(output), Some(input)) = (one("output"), one("input")) {
                call.in_place.push(InPlace { output, input });
                cs.in_place.push(ij.pos);
            }
        }
    }
    if let Some(list) = r.get(e, "overlaps") {
        let items = r.keep(r.array(list, format_args!("{what}.overlaps")));
        for (k, oj) in items.unwrap_or_default().iter().enumerate() {
            let w = format!("{what}.overlaps[{k}]");
            let Some(oe) = r.keep(r.object(oj, &w, OVERLAP_KEYS)) else {
                continue;
            };
            let one = |key: &str| {
                let j = r.keep(r.required(oe, oj, key, &w))?;
                let what = format!("{w}.{key}");
                lookup(&r.keep(r.string(j, &what))?, j.pos, &what)
            };
            let (output, input) = (one("output"), one("input"));
            let shifts = r.keep(r.required(oe, oj, "shifts", &w));
            let shifts = shifts.and_then(|j| super::overlap_json::window(r, j, &w));
            if let (Some(output), Some(input), Some(shifts)) = (output, input, shifts) {
                call.overlaps.push(Overlap {
                    output,
                    input,
                    shifts,
                });
                cs.overlaps.push(oj.pos);
            }
        }
    }
    Some((call, cs))
}

/// A size: a whole number, or `"dynamic"` when `dynamic_ok`. Zero is an error: nothing
/// would be planned, which is never what was meant.
fn size(r: &Reader<'_>, j: &Json<'_>, what: &str) -> Result<Size, InputError> {
    if let Value::String(s) = &j.value
        && s == "dynamic"
    {
        return Ok(Size::Dynamic);
    }
    if let Value::String(s) = &j.value {
        return Err(r.err(
            j.pos,
            format!("{what} is \"{s}\"; write a number of bytes or \"dynamic\""),
        ));
    }
    match r.integer(j, what, false)? {
        Some(0) | None => Err(r.err(
            j.pos,
            format!("{what} is 0; sizes are at least 1 byte (leave unused tensors out)"),
        )),
        Some(b) => Ok(Size::Bytes(b)),
    }
}

/// The optional `alignment`; a bad one is noted.
fn alignment(r: &Reader<'_>, e: Entries<'_>, what: &str) -> Option<u64> {
    let a = r.get(e, "alignment")?;
    r.keep(r.integer(a, format_args!("{what}.alignment"), false))?
}

fn scratch(r: &Reader<'_>, j: &Json<'_>, what: &str) -> Result<Scratch, InputError> {
    let e = r.object(j, what, SCRATCH_KEYS)?;
    let name = r.name(e, j, what);
    let size = r.required(e, j, "size_bytes", what);
    let size = size.and_then(|s| self::size(r, s, &format!("{what}.size_bytes")));
    Ok(Scratch {
        name,
        size: r.keep(size).unwrap_or(Size::Bytes(1)),
        alignment: alignment(r, e, what),
    })
}

/// Tensor `t`: an error when it is not an object; its other mistakes are noted and
/// replaced by stand-ins.
fn tensor(
    r: &Reader<'_>,
    j: &Json<'_>,
    t: usize,
    base: &Path,
    read: &mut Vec<PathBuf>,
) -> Result<(Tensor, Spans), InputError> {
    let what = format!("tensors[{t}]");
    let e = r.object(j, &what, TENSOR_KEYS)?;
    let spans = Spans::of_entries(j, e, TENSOR_KEYS);
    let name = r.name(e, j, &what);
    let what = format!("tensors[{t}] (\"{name}\")");
    let kind = match r.get(e, "kind") {
        None => Some("activation".to_string()),
        Some(k) => r.keep(r.string(k, format_args!("{what}.kind"))),
    };
    let size_json = r.get(e, "size_bytes");
    // None: not given; Some(None): given but wrong (noted).
    let declared = size_json.map(|s| r.keep(size(r, s, &format!("{what}.size_bytes"))));
    let role = match kind.as_deref() {
        Some("constant") => {
            // Empty bytes stand in for data that could not be read (noted).
            let data = constant_data(r, j, e, &what, base, read);
            Role::Constant(r.keep(data).unwrap_or_default())
        }
        kind => {
            if let Some((key, _, v)) = e.iter().find(|(k, _, _)| DATA_KEYS.contains(&&**k)) {
                r.note(r.err(
                    v.pos,
                    format!(
                        "{what}.{key}: only constants carry data; write \"kind\": \"constant\" \
                         or remove \"{key}\""
                    ),
                ));
            }
            match kind {
                Some("state") => Role::State,
                Some("activation") | None => Role::Activation,
                Some(other) => {
                    let pos = r.get(e, "kind").map_or(j.pos, |k| k.pos);
                    r.note(r.err(
                        pos,
                        format!(
                            "{what}.kind is \"{other}\"; write \"activation\", \"constant\" \
                             or \"state\""
                        ),
                    ));
                    Role::Activation
                }
            }
        }
    };
    let size = checked_size(r, j, &role, declared, size_json, &what);
    Ok((
        Tensor {
            name,
            size,
            alignment: alignment(r, e, &what),
            role,
            traffic: r.get(e, "traffic").and_then(|t| {
                let t = r.integer(t, format_args!("{what}.traffic"), false);
                r.keep(t).flatten()
            }),
        },
        spans,
    ))
}

/// A tensor's size: as declared (1 for a wrong one, already noted), or its constant
/// data's; a declared size that differs from the data, or none at all, is noted.
fn checked_size(
    r: &Reader<'_>,
    j: &Json<'_>,
    role: &Role,
    declared: Option<Option<Size>>,
    size_json: Option<&Json<'_>>,
    what: &str,
) -> Size {
    match (&role, declared) {
        (_, Some(None)) => Size::Bytes(1),
        (Role::Constant(data), None) => Size::Bytes(data.len() as u64),
        (Role::Constant(data), Some(Some(s)))
            if !data.is_empty() && s != Size::Bytes(data.len() as u64) =>
        {
            let pos = size_json.map_or(j.pos, |s| s.pos);
            r.note(r.err(
                pos,
                format!(
                    "{what}.size_bytes does not match its data ({} bytes); remove \
                     \"size_bytes\" or make them agree",
                    data.len()
                ),
            ));
            s
        }
        (_, Some(Some(s))) => s,
        (_, None) => {
            r.note(r.err(j.pos, format!("{what} has no \"size_bytes\"; add it")));
            Size::Bytes(1)
        }
    }
}

const DATA_KEYS: &[&str] = &["data", "file", "file_offset"];

fn constant_data(
    r: &Reader<'_>,
    j: &Json<'_>,
    e: Entries<'_>,
    what: &str,
    base: &Path,
    read: &mut Vec<PathBuf>,
) -> Result<Vec<u8>, InputError> {
    match (r.get(e, "data"), r.get(e, "file")) {
        (Some(d), None) => inline_bytes(r, d, what),
        (None, Some(f)) => file_bytes(r, e, f, what, base, read),
        (Some(_), Some(f)) => Err(r.err(
            f.pos,
            format!("{what} has both \"data\" and \"file\"; keep one"),
        )),
        (None, None) => Err(r.err(
            j.pos,
            format!("{what} is a constant without bytes; add \"data\": [...] or \"file\": \"...\""),
        )),
    }
}

/// A constant's `data`: a list of bytes (or a `data` the reader kept as bytes).
fn inline_bytes(r: &Reader<'_>, d: &Json<'_>, what: &str) -> Result<Vec<u8>, InputError> {
    if let Value::Bytes(bytes) = &d.value {
        if bytes.is_empty() {
            return Err(r.err(d.pos, format!("{what}.data is empty; a constant has bytes")));
        }
        return Ok(bytes.to_vec());
    }
    let items = r.array(d, format_args!("{what}.data"))?;
    let mut bytes = Vec::with_capacity(items.len());
    for (k, b) in items.iter().enumerate() {
        // The common case without building a label: megabytes of data are read
        // at the speed of the parser.
        if let Value::Number(Number::Whole(v @ 0..=255)) = b.value {
            bytes.push(v as u8);
            continue;
        }
        let v = r
            .integer(b, format_args!("{what}.data[{k}]"), false)?
            .unwrap_or(0);
        let byte = u8::try_from(v).map_err(|_| {
            r.err(
                b.pos,
                format!("{what}.data[{k}] is {v}; bytes are 0 to 255"),
            )
        })?;
        bytes.push(byte);
    }
    if bytes.is_empty() {
        return Err(r.err(d.pos, format!("{what}.data is empty; a constant has bytes")));
    }
    Ok(bytes)
}

/// A constant's `file` (relative to `base`), from `file_offset` for `size_bytes`.
fn file_bytes(
    r: &Reader<'_>,
    e: Entries<'_>,
    f: &Json<'_>,
    what: &str,
    base: &Path,
    read: &mut Vec<PathBuf>,
) -> Result<Vec<u8>, InputError> {
    let rel = r.string(f, format_args!("{what}.file"))?;
    let path = base.join(&rel);
    let cannot = |e: String| {
        let shown = path.display();
        r.err(f.pos, format!("{what}.file: cannot read \"{shown}\": {e}"))
    };
    let all = crate::file::read(&path).map_err(|e| cannot(e.to_string()))?;
    read.push(path);
    let offset = match r.get(e, "file_offset") {
        Some(o) => r
            .integer(o, format_args!("{what}.file_offset"), false)?
            .unwrap_or(0),
        None => 0,
    };
    let len = match r.get(e, "size_bytes") {
        Some(s) => r.integer(s, format_args!("{what}.size_bytes"), false)?,
        None => None,
    };
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    let end = match len {
        Some(l) => start.saturating_add(usize::try_from(l).unwrap_or(usize::MAX)),
        None => all.len(),
    };
    match all.get(start..end) {
        Some(bytes) if !bytes.is_empty() => Ok(bytes.to_vec()),
        _ => Err(r.err(
            f.pos,
            format!(
                "{what}.file: \"{rel}\" has {} bytes, too few for {} bytes from offset \
                 {offset}",
                all.len(),
                len.map_or("any".to_string(), |l| l.to_string())
            ),
        )),
    }
}
