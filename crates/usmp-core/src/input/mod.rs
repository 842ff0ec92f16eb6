//! Reading files: planning problems (the benchmark CSV format, the RFC-shaped JSON
//! problem), models (the JSON IR, `.tflite`) and the pools file that goes with a model.
//! Every error names the file, the line and column (or, in a `.tflite`, the operator and
//! tensor), and the field.

mod csv;
pub mod json;
mod model_json;
mod overlap_json;
mod pools_json;
mod problem_json;
mod read;
mod size;

use std::fmt;
use std::path::{Path, PathBuf};

pub use csv::parse_csv;
pub use pools_json::PoolsFile;
pub use problem_json::parse_problem_json;
use problem_json::problem_from_json;
pub use size::{BANDWIDTH_FORMS, SIZE_FORMS, parse_bandwidth, parse_size};

use crate::liveness::{self, Liveness};
use crate::model::{Model, ModelError, ModelLocus};
use crate::order::Order;
use crate::problem::Problem;
use crate::tflite::{Graph, read_tflite_graph};
use model_json::{ModelSpans, parse_model_json};
use pools_json::parse_pools_json;

/// A 1-based line and column in an input file. 32 bits each: a parsed JSON file holds
/// one per value, and input files are read up to 4 GiB (positions past that saturate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// Line, from 1.
    pub line: u32,
    /// Column in characters, from 1.
    pub column: u32,
}

impl Pos {
    /// The position at `line` and `column` (both from 1), saturating past `u32::MAX`.
    pub fn new(line: usize, column: usize) -> Pos {
        let narrow = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Pos {
            line: narrow(line),
            column: narrow(column),
        }
    }
}

/// Malformed input: where it is and what to write instead.
///
/// The JSON readers go on past a bad value (using a stand-in) so that one run names every
/// mistake in the file: the first leads, the rest are in [`more`](Self::more). A JSON
/// syntax error still ends the reading, as there is no telling what was meant after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The file, as the user named it.
    pub file: String,
    /// Where in the file; `None` when the file as a whole is at fault.
    pub pos: Option<Pos>,
    /// What is wrong, and what to write instead.
    pub message: String,
    /// The other errors found in the same reading, in file order (each with no `more`).
    pub more: Vec<InputError>,
}

impl InputError {
    /// An error at a position.
    pub fn at(file: &str, pos: Pos, message: impl Into<String>) -> Self {
        InputError {
            file: file.to_string(),
            pos: Some(pos),
            message: message.into(),
            more: Vec::new(),
        }
    }

    /// An error about the whole file.
    pub fn whole(file: &str, message: impl Into<String>) -> Self {
        InputError {
            file: file.to_string(),
            pos: None,
            message: message.into(),
            more: Vec::new(),
        }
    }

    /// One error holding every error of `errors` in order, the first leading; `None` when
    /// there are none.
    pub fn all(errors: impl IntoIterator<Item = InputError>) -> Option<InputError> {
        let mut flat = errors.into_iter().flat_map(|mut e| {
            let more = std::mem::take(&mut e.more);
            std::iter::once(e).chain(more)
        });
        let mut first = flat.next()?;
        first.more = flat.collect();
        Some(first)
    }

    /// This error and then every error of `other`.
    pub fn and(mut self, mut other: InputError) -> InputError {
        let more = std::mem::take(&mut other.more);
        self.more.push(other);
        self.more.extend(more);
        self
    }

    /// Every error this holds, each on its own (no `more`): itself, then
    /// [`more`](Self::more).
    pub fn each(&self) -> impl Iterator<Item = InputError> + '_ {
        let first = InputError {
            more: Vec::new(),
            ..self.clone()
        };
        std::iter::once(first).chain(self.more.iter().cloned())
    }
}

/// How many errors one reading lists: a machine-made file that is wrong throughout gets a
/// count of the rest, not a message per value (which could take more memory than the file).
pub(crate) const MAX_LISTED: usize = 100;

/// `errors` in file order as one error, at most [`MAX_LISTED`] of them and then a count of
/// the others (`dropped` more were never kept); `None` when there are none.
pub(crate) fn listed(
    mut errors: Vec<InputError>,
    dropped: usize,
    file: &str,
) -> Option<InputError> {
    // Stable: errors at one place keep the order they were found in.
    errors.sort_by_key(|e| e.pos);
    let unlisted = dropped + errors.len().saturating_sub(MAX_LISTED);
    errors.truncate(MAX_LISTED);
    if unlisted > 0 {
        errors.push(InputError::whole(
            file,
            format!("{unlisted} more errors are not listed; fix these first"),
        ));
    }
    InputError::all(errors)
}

/// One line per error: `file:line:column: message`.
impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, e) in std::iter::once(self).chain(&self.more).enumerate() {
            if k > 0 {
                writeln!(f)?;
            }
            match e.pos {
                Some(p) => write!(f, "{}:{}:{}: {}", e.file, p.line, p.column, e.message)?,
                None => write!(f, "{}: {}", e.file, e.message)?,
            }
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}

/// The formats [`read`] understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `id,lower,upper,size` rows with half-open live ranges.
    Csv,
    /// A problem: `{"pools": [...], "buffers": [...]}`.
    Json,
    /// A model in the JSON IR: `{"tensors": [...], "calls": [...], ...}`.
    ModelJson,
    /// A TensorFlow Lite flatbuffer.
    Tflite,
}

impl Format {
    /// The format of a file: `.tflite` or the `TFL3` identifier; `.csv`; otherwise JSON
    /// when it starts with `{` (a model when it has `"calls"`); otherwise CSV.
    pub fn detect(path: &Path, bytes: &[u8]) -> Format {
        match container(path, bytes) {
            Container::Json => {
                let text = String::from_utf8_lossy(bytes);
                match json::parse(&text, "") {
                    Ok(root) if is_model(&root) => Format::ModelJson,
                    _ => Format::Json,
                }
            }
            Container::Csv => Format::Csv,
            Container::Tflite => Format::Tflite,
        }
    }
}

/// A file's format as far as can be told without parsing it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    Csv,
    Json,
    Tflite,
}

fn container(path: &Path, bytes: &[u8]) -> Container {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext.eq_ignore_ascii_case("tflite") || bytes.get(4..8) == Some(b"TFL3") {
        return Container::Tflite;
    }
    if ext.eq_ignore_ascii_case("csv") {
        return Container::Csv;
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if ext.eq_ignore_ascii_case("json") || first == Some(&b'{') {
        return Container::Json;
    }
    Container::Csv
}

/// A JSON document is a model when its top level has `"calls"`.
fn is_model(root: &json::Json<'_>) -> bool {
    match &root.value {
        json::Value::Object(entries) => entries.iter().any(|(k, _, _)| &**k == "calls"),
        _ => false,
    }
}

/// What a file held.
#[derive(Clone, Debug)]
pub enum Input {
    /// A planning problem.
    Problem(Problem),
    /// A model, to lower with a [`PoolsFile`].
    Model(Box<ModelFile>),
}

/// A model read from a file, with what is needed to point at its errors.
#[derive(Clone, Debug)]
pub struct ModelFile {
    /// The model.
    pub model: Model,
    /// Every file read to build it: the model and any constant data files.
    pub files: Vec<PathBuf>,
    file: String,
    spans: Option<ModelSpans>,
    /// The file's bytes when it is a `.tflite` (for the offline plan written into a copy).
    tflite: Option<Vec<u8>>,
    /// What kernels need of a `.tflite` (types, shapes, quantization, options), from the
    /// same reading as the model.
    graph: Option<Graph>,
}

impl ModelFile {
    /// The file's bytes, when the model came from a `.tflite` file.
    pub fn tflite_bytes(&self) -> Option<&[u8]> {
        self.tflite.as_deref()
    }

    /// The tensors' types, shapes and quantization and the operators' options, when the
    /// model came from a `.tflite` file (the JSON IR has none).
    pub fn graph(&self) -> Option<&Graph> {
        self.graph.as_ref()
    }

    /// [`graph`](Self::graph), moved out (for a caller that keeps it past the file).
    pub fn take_graph(&mut self) -> Option<Graph> {
        self.graph.take()
    }

    /// Runs the model's calls in `order`: the model ([`Order::apply`]), the `.tflite`
    /// graph's operators and the positions errors point at, all alike.
    pub fn put_in_order(&mut self, order: &Order) {
        self.model = order.apply(&self.model);
        if let Some(graph) = &mut self.graph {
            let operators = std::mem::take(&mut graph.operators);
            graph.operators = (order.calls.iter())
                .filter_map(|&c| operators.get(c).cloned())
                .collect();
        }
        if let Some(spans) = &mut self.spans {
            spans.reorder(&order.calls);
        }
    }

    /// A model built in code or read by other means; errors name `file`.
    pub fn from_model(model: Model, file: &str) -> Self {
        ModelFile {
            model,
            files: Vec::new(),
            file: file.to_string(),
            spans: None,
            tflite: None,
            graph: None,
        }
    }

    /// Points `e` at the model file: a line and column for the JSON IR; for `.tflite` the
    /// message itself names the operator and tensor.
    pub fn error(&self, e: &ModelError) -> InputError {
        match self.spans.as_ref().and_then(|s| s.pos(e.locus)) {
            Some(pos) => InputError::at(&self.file, pos, e.to_string()),
            None => InputError::whole(&self.file, e.to_string()),
        }
    }
}

/// The largest input file read: positions count in 32 bits, and no model or problem for a
/// microcontroller comes near it.
const MAX_FILE_BYTES: u64 = u32::MAX as u64;

fn read_bytes(path: &Path) -> Result<(String, Vec<u8>), InputError> {
    let file = path.display().to_string();
    if let Ok(meta) = std::fs::metadata(path)
        && meta.len() > MAX_FILE_BYTES
    {
        return Err(InputError::whole(
            &file,
            format!(
                "the file is {} bytes; usmp reads input files of up to 4 GiB",
                meta.len()
            ),
        ));
    }
    let bytes = crate::file::read(path)
        .map_err(|e| InputError::whole(&file, format!("cannot read the file: {e}")))?;
    Ok((file, bytes))
}

fn text(file: &str, bytes: Vec<u8>) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|e| {
        InputError::whole(
            file,
            format!(
                "the file is not UTF-8 text (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Reads a problem or a model file, whichever it is. `capacity` bounds the single pool
/// of a CSV problem; other formats state their pools' limits themselves.
pub fn read(path: &Path, capacity: Option<u64>) -> Result<Input, InputError> {
    let (file, bytes) = read_bytes(path)?;
    let container = container(path, &bytes);
    read_as(path, file, bytes, container, capacity)
}

fn read_as(
    path: &Path,
    file: String,
    bytes: Vec<u8>,
    container: Container,
    capacity: Option<u64>,
) -> Result<Input, InputError> {
    if capacity.is_some() && container != Container::Csv {
        return Err(InputError::whole(
            &file,
            "a capacity only applies to CSV problems; give each pool its \"size\" \
             instead",
        ));
    }
    match container {
        Container::Csv => parse_csv(&text(&file, bytes)?, &file, capacity).map(Input::Problem),
        Container::Json => {
            // Parsed once: the same tree tells a model from a problem and is then read.
            let text = text(&file, bytes)?;
            let root = json::parse(&text, &file)?;
            if !is_model(&root) {
                return problem_from_json(&root, &file).map(Input::Problem);
            }
            let base = path.parent().unwrap_or(Path::new("."));
            let mut model = model_from_json(&root, &file, base)?;
            model.files.insert(0, path.to_path_buf());
            Ok(Input::Model(Box::new(model)))
        }
        Container::Tflite => {
            let name = path
                .file_stem()
                .map_or("model".into(), |s| s.to_string_lossy().into_owned());
            let (model, graph) = read_tflite_graph(&bytes, &name)
                .map_err(|e| InputError::whole(&file, e.to_string()))?;
            Ok(Input::Model(Box::new(ModelFile {
                model,
                files: vec![path.to_path_buf()],
                file,
                spans: None,
                tflite: Some(bytes),
                graph: Some(graph),
            })))
        }
    }
}

/// Parses a model in the JSON IR; constant `file`s are read relative to `base`. The IR
/// describes what the RFC's AoT main function does:
///
/// ```json
/// {
///   "name": "kws",
///   "tensors": [
///     {"name": "audio",  "size_bytes": 490},
///     {"name": "conv_w", "kind": "constant", "file": "conv_w.bin"},
///     {"name": "bias",   "kind": "constant", "data": [1, 0, 255, 7]},
///     {"name": "conv",   "size_bytes": 4000, "alignment": 16},
///     {"name": "relu",   "size_bytes": 4000},
///     {"name": "state",  "kind": "state", "size_bytes": 256},
///     {"name": "tokens", "size_bytes": "dynamic"},
///     {"name": "probs",  "size_bytes": 12}
///   ],
///   "inputs": ["audio"],
///   "outputs": ["probs"],
///   "calls": [
///     {"op": "conv2d", "target": "cpu", "reads": ["audio", "conv_w", "bias"], "writes": ["conv"],
///      "scratch": [{"name": "im2col", "size_bytes": 1024, "alignment": 16}]},
///     {"op": "relu", "reads": ["conv"], "writes": ["relu"],
///      "in_place": [{"output": "relu", "input": "conv"}]},
///     {"op": "fc", "target": "npu", "reads": ["relu", "state"], "writes": ["probs", "state", "tokens"]}
///   ]
/// }
/// ```
///
/// Tensors: `kind` is `activation` (default), `constant` or `state`; `size_bytes` is a
/// number or `"dynamic"` (left out of the plan and listed); constants take their bytes
/// from `data` or from `file` (relative to the model file, optionally from `file_offset`),
/// and their size from the data when `size_bytes` is absent. Calls: `target` defaults to
/// `cpu`; `scratch`, `in_place` and `overlaps` (an output that may share bytes with an
/// input dying at the call, within `shifts`: [`model::Overlap`](crate::model::Overlap))
/// are optional.
pub fn parse_model(text: &str, file: &str, base: &Path) -> Result<ModelFile, InputError> {
    model_from_json(&json::parse(text, file)?, file, base)
}

fn model_from_json(
    root: &json::Json<'_>,
    file: &str,
    base: &Path,
) -> Result<ModelFile, InputError> {
    let mut files = Vec::new();
    let (model, spans) = parse_model_json(root, file, base, &mut files)?;
    Ok(ModelFile {
        model,
        files,
        file: file.to_string(),
        spans: Some(spans),
        tflite: None,
        graph: None,
    })
}

/// Reads a problem file; a model file is lowered onto the default pools
/// ([`PoolsFile::default`]).
pub fn read_problem(path: &Path, capacity: Option<u64>) -> Result<Problem, InputError> {
    match read(path, capacity)? {
        Input::Problem(p) => Ok(p),
        Input::Model(m) => Ok(lower(&m, &PoolsFile::default())?.problem),
    }
}

/// Reads a model file (`.tflite` or the JSON IR).
pub fn read_model(path: &Path) -> Result<ModelFile, InputError> {
    let (file, bytes) = read_bytes(path)?;
    let container = container(path, &bytes);
    // Only CSV problems remain once .tflite and JSON are ruled out: none is a model.
    if container == Container::Csv {
        return Err(InputError::whole(
            &file,
            "not a model file; name a .tflite file or a JSON model (usmp's model IR, ending in .json)",
        ));
    }
    match read_as(path, file, bytes, container, None)? {
        Input::Model(m) => Ok(*m),
        Input::Problem(_) => Err(InputError::whole(
            &path.display().to_string(),
            "this is a planning problem, not a model; a model has \"tensors\" and \"calls\"",
        )),
    }
}

/// Reads a pools file.
pub fn read_pools(path: &Path) -> Result<PoolsFile, InputError> {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
    {
        // A usmp.toml is the build's whole manifest (pools and models), not a pools file.
        return Err(InputError::whole(
            &path.display().to_string(),
            "a pools file is JSON (`{\"pools\": [...]}`); this is a .toml file: to plan a \
             usmp.toml as the build does, give it as the file to plan (`usmp plan \
             usmp.toml`) without --pools",
        ));
    }
    let (file, bytes) = read_bytes(path)?;
    parse_pools(&text(&file, bytes)?, &file)
}

/// Parses a pools file's text; errors name `file`.
pub fn parse_pools(text: &str, file: &str) -> Result<PoolsFile, InputError> {
    parse_pools_json(&json::parse(text, file)?, file)
}

/// Lowers a model onto pools; an error points into whichever file it is about. Every
/// problem of the model itself is reported together.
pub fn lower(model: &ModelFile, pools: &PoolsFile) -> Result<Liveness, InputError> {
    liveness::analyse(&model.model, &pools.pools, &pools.options).map_err(|e| {
        // `analyse` stops at the model's first problem; only then are all of them listed.
        let problems = model.model.problems();
        if !problems.is_empty() {
            let all = problems.iter().map(|p| model.error(p)).collect();
            return listed(all, 0, &model.file).unwrap_or_else(|| model.error(&e));
        }
        let in_pools = match e.locus {
            ModelLocus::ScratchRule(k) => pools.rules.get(k).copied(),
            ModelLocus::Pools => pools.root,
            _ => return model.error(&e),
        };
        match (&pools.file, in_pools) {
            (Some(f), Some(pos)) => InputError::at(f, pos, e.to_string()),
            _ => InputError::whole(&model.file, e.to_string()),
        }
    })
}
