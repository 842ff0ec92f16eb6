//! Reading planning problems from files: the benchmark CSV format and the RFC-shaped
//! JSON problem. Every error names the file, the line and column, and the field.

mod csv;
pub mod json;
mod problem_json;
mod read;

use std::fmt;
use std::path::Path;

pub use csv::parse_csv;
pub use problem_json::parse_problem_json;

use crate::problem::Problem;

/// A 1-based line and column in an input file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

/// Malformed input: where it is and what to write instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The file, as the user named it.
    pub file: String,
    /// Where in the file; `None` when the file as a whole is at fault.
    pub pos: Option<Pos>,
    /// What is wrong, and what to write instead.
    pub message: String,
}

impl InputError {
    /// An error at a position.
    pub fn at(file: &str, pos: Pos, message: impl Into<String>) -> Self {
        InputError {
            file: file.to_string(),
            pos: Some(pos),
            message: message.into(),
        }
    }

    /// An error about the whole file.
    pub fn whole(file: &str, message: impl Into<String>) -> Self {
        InputError {
            file: file.to_string(),
            pos: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos {
            Some(p) => write!(f, "{}:{}:{}: {}", self.file, p.line, p.column, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for InputError {}

/// The formats [`read_problem`] understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `id,lower,upper,size` rows with half-open live ranges.
    Csv,
    /// `{"pools": [...], "buffers": [...]}`.
    Json,
}

impl Format {
    /// The format of `path`: by extension, else by the first non-blank character.
    pub fn detect(path: &Path, text: &str) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("csv") => Format::Csv,
            Some(e) if e.eq_ignore_ascii_case("json") => Format::Json,
            _ if text.trim_start().starts_with('{') => Format::Json,
            _ => Format::Csv,
        }
    }
}

/// Reads a problem file. `capacity` bounds the single pool of a CSV problem; a JSON
/// problem states its pools' limits itself, so giving one there is an error.
pub fn read_problem(path: &Path, capacity: Option<u64>) -> Result<Problem, InputError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::whole(&file, format!("cannot read the file: {e}")))?;
    match Format::detect(path, &text) {
        Format::Csv => parse_csv(&text, &file, capacity),
        Format::Json if capacity.is_some() => Err(InputError::whole(
            &file,
            "a capacity only applies to CSV problems; give each pool of a JSON problem its \
             \"size_hint_bytes\" instead",
        )),
        Format::Json => parse_problem_json(&text, &file),
    }
}
