//! The `usmp.toml` front end: TOML text to a [`Spec`] whose spans are byte ranges, and
//! diagnostics rendered as `file:line:column` with the line and a caret.

use std::path::Path;

use toml::Spanned;
use usmp_core::input::{BANDWIDTH_FORMS, SIZE_FORMS, parse_bandwidth};
use usmp_core::liveness::Options;
use usmp_core::{Assignment, PoolKind};

use crate::choice::AlgorithmChoice;
use crate::raw::{self, Entries, Raw};
use crate::spec::{
    At, DEFAULT_ALIGNMENT, DEFAULT_SIZE_GRANULARITY, Diagnostic, ModelSpec, PoolSpec, ScratchSpec,
    Spec, parse_size,
};

pub use crate::raw::Span;

const TOP_KEYS: &[&str] = &["pool", "model", "report"];
const POOL_KEYS: &[&str] = &[
    "name",
    "kind",
    "size",
    "alignment",
    "section",
    "region",
    "targets",
    "bandwidth",
];
const MODEL_KEYS: &[&str] = &[
    "name",
    "path",
    "algorithm",
    "assignment",
    "io_in_pools",
    "size_granularity",
    "alignment",
    "scratch",
    "module",
    "kernels",
    "tflm",
];
const SCRATCH_KEYS: &[&str] = &["op", "call", "name", "size", "alignment"];
const REPORT_KEYS: &[&str] = &["summary"];

/// A spec read as far as it goes, and what was wrong in it.
type Read = (Spec<Span>, Vec<Diagnostic<Span>>);

/// One table being read: its entries and where it starts.
struct Table<'a> {
    entries: &'a Entries,
    span: Span,
}

/// Reads values out of tables, collecting every problem rather than stopping.
#[derive(Default)]
struct Reader {
    errors: Vec<Diagnostic<Span>>,
}

impl Reader {
    fn error(&mut self, span: Span, message: String, help: String) {
        self.errors.push(Diagnostic::new(span, message).help(help));
    }

    /// An error at each key not in `known`.
    fn known(&mut self, t: &Table<'_>, known: &[&str]) {
        for (key, _) in t.entries {
            if !known.contains(&key.get_ref().as_str()) {
                let list: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                self.error(
                    key.span(),
                    format!("unknown key `{}`", key.get_ref()),
                    format!("the keys here are {}", list.join(", ")),
                );
            }
        }
    }

    fn get<'a>(t: &Table<'a>, key: &str) -> Option<&'a Spanned<Raw>> {
        t.entries
            .iter()
            .find(|(k, _)| k.get_ref() == key)
            .map(|(_, v)| v)
    }

    /// The value of `key` read by `f`, which says what it accepts when it returns `None`.
    fn value<T>(
        &mut self,
        t: &Table<'_>,
        key: &str,
        forms: &str,
        f: impl FnOnce(&Raw) -> Option<T>,
    ) -> Option<At<T, Span>> {
        let v = Self::get(t, key)?;
        match f(v.get_ref()) {
            Some(x) => Some(At::new(x, v.span())),
            None => {
                self.error(
                    v.span(),
                    format!("`{key}` is {}", v.get_ref().describe()),
                    format!("write {forms}"),
                );
                None
            }
        }
    }

    fn string(&mut self, t: &Table<'_>, key: &str, example: &str) -> Option<At<String, Span>> {
        self.value(
            t,
            key,
            &format!("a string such as {example}"),
            |r| match r {
                Raw::Str(s) => Some(s.clone()),
                _ => None,
            },
        )
    }

    fn uint(&mut self, t: &Table<'_>, key: &str, example: &str) -> Option<At<u64, Span>> {
        self.value(
            t,
            key,
            &format!("a whole number such as {example}"),
            |r| match r {
                Raw::Int(n) => u64::try_from(*n).ok(),
                _ => None,
            },
        )
    }

    fn boolean(&mut self, t: &Table<'_>, key: &str) -> Option<At<bool, Span>> {
        self.value(t, key, "true or false", |r| match r {
            Raw::Bool(b) => Some(*b),
            _ => None,
        })
    }

    /// A size; `-1` (the RFC's "no hint") is no limit, as in the CLI's pools file.
    fn size(&mut self, t: &Table<'_>, key: &str, unbounded: bool) -> Option<At<u64, Span>> {
        let v = Self::get(t, key)?;
        let span = v.span();
        let forms = if unbounded {
            format!("{SIZE_FORMS}, or leave `{key}` out (or write -1) for no limit")
        } else {
            SIZE_FORMS.to_string()
        };
        match v.get_ref() {
            Raw::Int(n) if *n >= 0 => Some(At::new(n.unsigned_abs(), span)),
            Raw::Int(-1) if unbounded => None,
            Raw::Str(text) => match parse_size(text) {
                Ok(n) => Some(At::new(n, span)),
                Err(e) => {
                    self.errors.push(Diagnostic::new(span, e));
                    None
                }
            },
            other => {
                self.error(
                    span,
                    format!("`{key}` is {}, not a size", other.describe()),
                    format!("write {forms}"),
                );
                None
            }
        }
    }

    /// A bandwidth: bytes per second, or a string such as "8 GB/s".
    fn bandwidth(&mut self, t: &Table<'_>, key: &str) -> Option<At<u64, Span>> {
        let v = Self::get(t, key)?;
        let span = v.span();
        let parsed = match v.get_ref() {
            Raw::Int(n) if *n > 0 => Ok(n.unsigned_abs()),
            Raw::Str(text) => parse_bandwidth(text),
            other => Err(format!("`{key}` is {}, not a bandwidth", other.describe())),
        };
        match parsed {
            Ok(n) => Some(At::new(n, span)),
            Err(e) => {
                self.error(span, e, format!("write {BANDWIDTH_FORMS}"));
                None
            }
        }
    }

    /// The tables of an array of tables (`[[pool]]`), or an inline array of them.
    fn tables<'a>(&mut self, v: &'a Spanned<Raw>, key: &str) -> Vec<Table<'a>> {
        let one = |item: &'a Spanned<Raw>| match item.get_ref() {
            Raw::Table(entries) => Some(Table {
                entries,
                span: item.span(),
            }),
            _ => None,
        };
        let items: Vec<&Spanned<Raw>> = match v.get_ref() {
            Raw::Array(items) => items.iter().collect(),
            _ => vec![v],
        };
        items
            .into_iter()
            .filter_map(|item| {
                let t = one(item);
                if t.is_none() {
                    self.error(
                        item.span(),
                        format!("`{key}` holds {}, not a table", item.get_ref().describe()),
                        format!("write each as a `[[{key}]]` table of keys"),
                    );
                }
                t
            })
            .collect()
    }
}

/// Reads `usmp.toml` text into a spec; `base` is the folder model paths are relative to.
/// Every problem of the text is collected: the spec comes back with defaults in place of
/// the bad values, so validation can add what it finds (see [`crate::valid`]). Only a
/// syntax error returns no spec.
pub fn parse(text: &str, base: &Path) -> Result<Read, Diagnostic<Span>> {
    let top = raw::parse(text).map_err(|(message, span)| {
        Diagnostic::new(span, message)
            .help("see the usmp.toml reference in usmp-build's documentation for every key")
    })?;
    let mut r = Reader::default();
    let root = Table {
        entries: &top,
        span: 0..0,
    };
    r.known(&root, TOP_KEYS);
    let mut pools = Vec::new();
    let mut models = Vec::new();
    let mut summary = false;
    for (key, value) in &top {
        match key.get_ref().as_str() {
            "pool" => {
                for t in r.tables(value, "pool") {
                    let k = pools.len();
                    pools.push(pool(&mut r, &t, k));
                }
            }
            "model" => {
                for t in r.tables(value, "model") {
                    let k = models.len();
                    models.push(model(&mut r, &t, k));
                }
            }
            "report" => {
                if let Some(t) = r.tables(value, "report").first() {
                    r.known(t, REPORT_KEYS);
                    summary = r.boolean(t, "summary").is_some_and(|b| b.value);
                }
            }
            _ => {}
        }
    }
    let spec = Spec {
        pools,
        models,
        summary,
        base: base.to_path_buf(),
        span: 0..0,
    };
    Ok((spec, r.errors))
}

/// An error at table `t` (a `what`) if it lacks the required `key`; `add` is what to
/// write. (A key that is there but wrong was reported where it was read.)
fn require(r: &mut Reader, t: &Table<'_>, key: &str, what: &str, add: &str) {
    if Reader::get(t, key).is_none() {
        r.error(
            t.span.clone(),
            format!("this {what} has no `{key}`"),
            format!("add {add}"),
        );
    }
}

/// The value written, or `default` shown at `span` (the entry it belongs to).
fn or<T>(value: Option<At<T, Span>>, default: T, span: &Span) -> At<T, Span> {
    value.unwrap_or_else(|| At::new(default, span.clone()))
}

fn pool(r: &mut Reader, t: &Table<'_>, k: usize) -> PoolSpec<Span> {
    r.known(t, POOL_KEYS);
    require(r, t, "name", "[[pool]]", "`name = \"sram\"`");
    // Without a name, a stand-in: validation then sees every pool (and no follow-on error).
    let name = or(
        r.string(t, "name", "\"sram\""),
        format!("pool_{k}"),
        &t.span,
    );
    let kind = match r.string(t, "kind", "\"constant\"") {
        None => None,
        Some(k) => match k.value.as_str() {
            "workspace" => Some(At::new(PoolKind::Workspace, k.span)),
            "constant" => Some(At::new(PoolKind::Constant, k.span)),
            other => {
                r.error(
                    k.span.clone(),
                    format!("unknown pool kind `{other}`"),
                    "write kind = \"workspace\" or kind = \"constant\"".into(),
                );
                None
            }
        },
    };
    let size = r.size(t, "size", true);
    let bandwidth = r.bandwidth(t, "bandwidth");
    let alignment = r.uint(t, "alignment", "16");
    let section = r.string(t, "section", "\".usmp.sram\"");
    let region = r.string(t, "region", "\"RAM\"");
    let targets = strings(r, t, "targets", "[\"cpu\"]");
    PoolSpec {
        kind: or(kind, PoolKind::Workspace, &name.span),
        size,
        bandwidth,
        alignment: or(alignment, DEFAULT_ALIGNMENT, &name.span),
        section: or(section, format!(".usmp.{}", name.value), &name.span),
        region,
        targets,
        name,
    }
}

/// An array of strings.
fn strings(r: &mut Reader, t: &Table<'_>, key: &str, example: &str) -> Vec<At<String, Span>> {
    let Some(v) = Reader::get(t, key) else {
        return Vec::new();
    };
    let Raw::Array(items) = v.get_ref() else {
        r.error(
            v.span(),
            format!("`{key}` is {}", v.get_ref().describe()),
            format!("write an array of strings such as {example}"),
        );
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match item.get_ref() {
            Raw::Str(s) => Some(At::new(s.clone(), item.span())),
            other => {
                r.error(
                    item.span(),
                    format!("an entry of `{key}` is {}", other.describe()),
                    format!("write an array of strings such as {example}"),
                );
                None
            }
        })
        .collect()
}

fn model(r: &mut Reader, t: &Table<'_>, k: usize) -> ModelSpec<Span> {
    r.known(t, MODEL_KEYS);
    require(r, t, "name", "[[model]]", "`name = \"kws\"`");
    require(
        r,
        t,
        "path",
        "[[model]]",
        "`path = \"models/kws.tflite\"` (a .tflite or JSON model, relative to usmp.toml)",
    );
    let name = or(
        r.string(t, "name", "\"kws\""),
        format!("model_{k}"),
        &t.span,
    );
    let path = or(
        r.string(t, "path", "\"models/kws.tflite\""),
        String::new(),
        &t.span,
    );
    let algorithm = r
        .string(t, "algorithm", "\"auto\"")
        .map(|a| At::new(AlgorithmChoice::from_name(&a.value), a.span));
    let assignment = r.string(t, "assignment", "\"preference\"").and_then(|a| {
        crate::spec::assignment(a)
            .map_err(|d| r.errors.push(d))
            .ok()
    });
    let io_in_pools = r.boolean(t, "io_in_pools");
    let size_granularity = r.uint(t, "size_granularity", "16");
    let alignment = r.uint(t, "alignment", "16");
    let module = r.string(t, "module", "\"kws\"");
    let kernels = r.boolean(t, "kernels");
    let tflm = r.boolean(t, "tflm");
    let scratch = match Reader::get(t, "scratch") {
        Some(v) => r
            .tables(v, "scratch")
            .iter()
            .filter_map(|s| scratch(r, s))
            .collect(),
        None => Vec::new(),
    };
    let here = name.span.clone();
    ModelSpec {
        path,
        algorithm: or(algorithm, AlgorithmChoice::default(), &here),
        assignment: or(assignment, Assignment::default(), &here),
        io_in_pools: or(io_in_pools, Options::default().io_in_pools, &here),
        size_granularity: or(size_granularity, DEFAULT_SIZE_GRANULARITY, &here),
        alignment: or(alignment, DEFAULT_ALIGNMENT, &here),
        scratch,
        module: or(module, name.value.clone(), &here),
        kernels: or(kernels, false, &here),
        tflm: or(tflm, false, &here),
        name,
    }
}

fn scratch(r: &mut Reader, t: &Table<'_>) -> Option<ScratchSpec<Span>> {
    r.known(t, SCRATCH_KEYS);
    let op = r.string(t, "op", "\"CONV_2D\"");
    let call = r.uint(t, "call", "3");
    require(r, t, "name", "scratch entry", "`name = \"im2col\"`");
    require(
        r,
        t,
        "size",
        "scratch entry",
        &format!("`size = ` {SIZE_FORMS}"),
    );
    let name = r.string(t, "name", "\"im2col\"");
    let size = r.size(t, "size", false);
    let alignment = r.uint(t, "alignment", "16");
    Some(ScratchSpec {
        op,
        call,
        name: name?,
        size: size?,
        alignment,
        span: t.span.clone(),
    })
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
