//! The `usmp.toml` front end: TOML text to a [`Spec`] whose spans are byte ranges (read by
//! [`crate::read`], the reader both front ends share), and diagnostics rendered as
//! `file:line:column` with the line and a caret.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::raw;
use crate::read::{TOML, read};
use crate::spec::{Diagnostic, Spec};

pub use crate::raw::Span;

/// A spec read as far as it goes, and what was wrong in it.
type Read = (Spec<Span>, Vec<Diagnostic<Span>>);

/// Reads `usmp.toml` text into a spec; `base` is the folder model paths are relative to.
/// Every problem of the text is collected: the spec comes back with defaults in place of
/// the bad values, so validation can add what it finds (see [`crate::valid`]). Only a
/// syntax error returns no spec.
pub fn parse(text: &str, base: &Path) -> Result<Read, Diagnostic<Span>> {
    let top = raw::parse(text).map_err(|(message, span)| {
        Diagnostic::new(span, message)
            .help("see the usmp.toml reference in usmp-build's documentation for every key")
    })?;
    Ok(read(&top, 0..0, base, TOML))
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..floor_char(text, offset)];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

fn floor_char(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One mistake in a `usmp.toml`, where it was written: what
/// [`Error::Invalid`](crate::Error::Invalid) lists, every one the build found.
///
/// It displays as cargo shows it: `file:line:column: error: message`, the line with a
/// caret under the place, and the help.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The `usmp.toml` (a mistake found in a file it names, a model or `memory.x`, is
    /// shown at the key that names it).
    pub file: PathBuf,
    /// The line in the `usmp.toml`, from 1.
    pub line: usize,
    /// The column, from 1, in characters.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// What to write instead, when there is a clear answer.
    pub help: Option<String>,
    rendered: String,
}

impl Located {
    /// `d`, found in `text`, the contents of `file`.
    pub(crate) fn new(file: &Path, text: &str, d: &Diagnostic<Span>) -> Located {
        let (line, column) = line_column(text, d.span.start);
        Located {
            file: file.to_path_buf(),
            line,
            column,
            message: d.message.clone(),
            help: d.help.clone(),
            rendered: render(&file.display().to_string(), text, d, (line, column)),
        }
    }
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rendered)
    }
}

/// `file:line:column: error: message`, the line, a caret under the span, and the help.
/// `(line, column)` is where the span starts.
fn render(file: &str, text: &str, d: &Diagnostic<Span>, (line, column): (usize, usize)) -> String {
    let mut out = format!("{file}:{line}:{column}: error: {}", d.message);
    if let Some(source) = text.lines().nth(line - 1) {
        let gutter = line.to_string().len();
        let width = if d.span.end > d.span.start {
            let end = floor_char(text, d.span.end.min(text.len()));
            let (end_line, end_col) = line_column(text, end);
            if end_line == line {
                end_col.saturating_sub(column).max(1)
            } else {
                source.chars().count().saturating_sub(column - 1).max(1)
            }
        } else {
            1
        };
        out.push_str(&format!(
            "\n{:gutter$} |\n{line} | {source}\n{:gutter$} | {}{}",
            "",
            "",
            " ".repeat(column - 1),
            "^".repeat(width)
        ));
    }
    if let Some(help) = &d.help {
        out.push_str(&format!("\n= help: {help}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_characters() {
        let text = "a = 1\nbé = \"x\"\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        // 'é' is two bytes but one column.
        assert_eq!(line_column(text, 11), (2, 5));
    }

    #[test]
    fn render_puts_a_caret_under_the_span() {
        let text = "[[pool]]\nname = \"dtcm\"\nsize = 0\n";
        let d = Diagnostic::new(30..31, "a pool size of 0 bytes holds nothing").help("give one");
        let r = Located::new(Path::new("usmp.toml"), text, &d);
        assert_eq!((r.line, r.column), (3, 8));
        assert_eq!(r.help.as_deref(), Some("give one"));
        assert_eq!(
            r.to_string(),
            "usmp.toml:3:8: error: a pool size of 0 bytes holds nothing\n  |\n3 | size = 0\n  |        ^\n= help: give one"
        );
    }
}
