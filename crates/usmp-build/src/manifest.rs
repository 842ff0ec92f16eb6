//! The `usmp.toml` front end: TOML text to a [`Spec`] whose spans are byte ranges, and
//! diagnostics rendered as `file:line:column` with the line and a caret.

use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;
use usmp_core::PoolKind;

use crate::spec::{
    At, DEFAULT_ALIGNMENT, Diagnostic, ModelSpec, PoolSpec, ScratchSpec, Spec, parse_size,
};

/// A byte range in `usmp.toml`.
pub type Span = Range<usize>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    pool: Vec<PoolToml>,
    #[serde(default)]
    model: Vec<ModelToml>,
    #[serde(default)]
    report: Option<ReportToml>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PoolToml {
    name: Spanned<String>,
    kind: Option<Spanned<String>>,
    size: Option<Spanned<Bytes>>,
    alignment: Option<Spanned<u64>>,
    section: Option<Spanned<String>>,
    region: Option<Spanned<String>>,
    #[serde(default)]
    targets: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelToml {
    name: Spanned<String>,
    path: Spanned<String>,
    algorithm: Option<Spanned<String>>,
    io_in_pools: Option<Spanned<bool>>,
    size_granularity: Option<Spanned<u64>>,
    alignment: Option<Spanned<u64>>,
    #[serde(default)]
    scratch: Vec<Spanned<ScratchToml>>,
    module: Option<Spanned<String>>,
    kernels: Option<Spanned<bool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScratchToml {
    op: Option<Spanned<String>>,
    call: Option<Spanned<u64>>,
    name: Spanned<String>,
    size: Spanned<Bytes>,
    alignment: Option<Spanned<u64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportToml {
    #[serde(default)]
    summary: bool,
}

/// A size as written: a number of bytes or a string with a unit.
enum Bytes {
    Number(u64),
    Text(String),
}

/// Reads a size, saying what a size looks like when it is anything else (an untagged
/// enum would only say that no variant matched).
struct BytesVisitor;

const SIZE_FORMS: &str =
    "a size: a number of bytes such as 4096, or a string with a unit such as \"16 KiB\"";

impl serde::de::Visitor<'_> for BytesVisitor {
    type Value = Bytes;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(SIZE_FORMS)
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Bytes, E> {
        Ok(Bytes::Number(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Bytes, E> {
        u64::try_from(v).map(Bytes::Number).map_err(|_| {
            E::custom(format!(
                "a size cannot be negative ({v}); write {SIZE_FORMS}, or leave `size` out for no limit"
            ))
        })
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Bytes, E> {
        Ok(Bytes::Text(v.to_string()))
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
        d.deserialize_any(BytesVisitor)
    }
}

fn at<T>(s: Spanned<T>) -> At<T, Span> {
    let span = s.span();
    At::new(s.into_inner(), span)
}

/// The value written, or `default` shown at `span` (the entry it belongs to).
fn or<T>(value: Option<Spanned<T>>, default: T, span: &Span) -> At<T, Span> {
    value.map_or_else(|| At::new(default, span.clone()), at)
}

fn bytes(s: Spanned<Bytes>, errors: &mut Vec<Diagnostic<Span>>) -> At<u64, Span> {
    let span = s.span();
    match s.into_inner() {
        Bytes::Number(n) => At::new(n, span),
        Bytes::Text(t) => match parse_size(&t) {
            Ok(n) => At::new(n, span),
            Err(e) => {
                errors.push(Diagnostic::new(span.clone(), e));
                At::new(1, span)
            }
        },
    }
}

/// Reads `usmp.toml` text into a spec; `base` is the folder model paths are relative to.
/// The spec is not validated yet (see [`crate::valid`]).
pub fn parse(text: &str, base: &Path) -> Result<Spec<Span>, Vec<Diagnostic<Span>>> {
    let file: File = toml::from_str(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        vec![
            Diagnostic::new(span, toml_message(&e))
                .help("see the usmp.toml reference in usmp-build's documentation for every key"),
        ]
    })?;
    let mut errors = Vec::new();
    let pools = file
        .pool
        .into_iter()
        .map(|p| pool(p, &mut errors))
        .collect();
    let models = file
        .model
        .into_iter()
        .map(|m| model(m, &mut errors))
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Spec {
        pools,
        models,
        summary: file.report.is_some_and(|r| r.summary),
        base: base.to_path_buf(),
        span: 0..0,
    })
}

/// toml's message without its own rendering of the location, which we add ourselves.
fn toml_message(e: &toml::de::Error) -> String {
    let m = e.message().trim();
    let m = m.replace("unknown field", "unknown key");
    match m.split_once(", expected one of") {
        Some((what, keys)) => format!("{what}; the keys here are{keys}"),
        None => m,
    }
}

fn pool(p: PoolToml, errors: &mut Vec<Diagnostic<Span>>) -> PoolSpec<Span> {
    let name = at(p.name);
    let kind = match p.kind.map(at) {
        None => At::new(PoolKind::Workspace, name.span.clone()),
        Some(k) => match k.value.as_str() {
            "workspace" => At::new(PoolKind::Workspace, k.span),
            "constant" => At::new(PoolKind::Constant, k.span),
            other => {
                errors.push(
                    Diagnostic::new(k.span.clone(), format!("unknown pool kind `{other}`"))
                        .help("write kind = \"workspace\" or kind = \"constant\""),
                );
                At::new(PoolKind::Workspace, k.span)
            }
        },
    };
    let section = p
        .section
        .map(at)
        .unwrap_or_else(|| At::new(format!(".usmp.{}", name.value), name.span.clone()));
    PoolSpec {
        kind,
        size: p.size.map(|s| bytes(s, errors)),
        alignment: p
            .alignment
            .map(at)
            .unwrap_or_else(|| At::new(DEFAULT_ALIGNMENT, name.span.clone())),
        section,
        region: p.region.map(at),
        targets: p.targets.into_iter().map(at).collect(),
        name,
    }
}

fn model(m: ModelToml, errors: &mut Vec<Diagnostic<Span>>) -> ModelSpec<Span> {
    let name = at(m.name);
    let here = &name.span;
    let scratch = m
        .scratch
        .into_iter()
        .map(|s| {
            let span = s.span();
            let s = s.into_inner();
            ScratchSpec {
                op: s.op.map(at),
                call: s.call.map(at),
                name: at(s.name),
                size: bytes(s.size, errors),
                alignment: s.alignment.map(at),
                span,
            }
        })
        .collect();
    ModelSpec {
        path: at(m.path),
        algorithm: or(m.algorithm, "auto".into(), here),
        io_in_pools: or(m.io_in_pools, true, here),
        size_granularity: or(m.size_granularity, 16, here),
        alignment: or(m.alignment, DEFAULT_ALIGNMENT, here),
        scratch,
        module: or(m.module, name.value.clone(), here),
        kernels: or(m.kernels, false, here),
        name,
    }
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

/// `file:line:column: error: message`, the line, a caret under the span, and the help.
pub fn render(file: &str, text: &str, d: &Diagnostic<Span>) -> String {
    let (line, column) = line_column(text, d.span.start);
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
        let r = render("usmp.toml", text, &d);
        assert_eq!(
            r,
            "usmp.toml:3:8: error: a pool size of 0 bytes holds nothing\n  |\n3 | size = 0\n  |        ^\n= help: give one"
        );
    }
}
