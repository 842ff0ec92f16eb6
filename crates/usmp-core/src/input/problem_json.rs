//! The RFC-shaped JSON problem:
//!
//! ```json
//! {"pools":   [{"name": "sram", "kind": "workspace", "size_hint_bytes": 65536, "alignment": 16}],
//!  "buffers": [{"name": "a", "size_bytes": 96, "alignment": 16,
//!               "pool_candidates": ["sram"], "conflicts": ["b"]}]}
//! ```
//!
//! Pools: `kind` defaults to `workspace`; a missing or `-1` `size_hint_bytes` means
//! unbounded; `alignment` defaults to 1; `targets` (names) defaults to all; `bandwidth`
//! (bytes per second, or `"8 GB/s"`) is optional. Buffers: `alignment` defaults to 1,
//! `kind` to `workspace`, `traffic` (bytes read and written per inference) to 0; either
//! every buffer has `"live": [start, end]` (half-open) or conflicts are listed by name.
//! A buffer may list `overlaps`: inputs it may be written over, each with its window
//! (see [`overlap_json`](super::overlap_json)).

use super::json::{self, Json, Value};
use super::overlap_json;
use super::read::{Element, Known, Names, Reader, Spans};
use super::{InputError, Pos};
use crate::problem::{Buffer, Locus, Problem, ProblemBuilder, ProblemError};

const TOP_KEYS: &[&str] = &["pools", "buffers"];
const BUFFER_KEYS: &[&str] = &[
    "name",
    "size_bytes",
    "alignment",
    "kind",
    "pool_candidates",
    "conflicts",
    "live",
    "traffic",
    "overlaps",
];

/// Parses a JSON problem; errors name `file`, the line and column, and the field.
pub fn parse_problem_json(text: &str, file: &str) -> Result<Problem, InputError> {
    problem_from_json(&json::parse(text, file)?, file)
}

/// Reads a problem from already parsed JSON. Every mistake is reported: reading ones
/// together, then (when reading found none) every one the problem's checks find.
pub(crate) fn problem_from_json(root: &Json<'_>, file: &str) -> Result<Problem, InputError> {
    let r = Reader::new(file);
    let top = r.object(root, "the problem", TOP_KEYS)?;
    let list = |key: &str| {
        let j = r.required(top, root, key, "the problem");
        r.keep(j.and_then(|j| r.array(j, format_args!("`{key}`"))))
            .unwrap_or_default()
    };
    let (pools_json, buffers_json) = (list("pools"), list("buffers"));

    // Indices are the builder's: an element that is not an object is left out.
    let mut builder = Problem::builder();
    let (pool_spans, pool_index) = read_pools(&r, &pools_json, &mut builder);
    let known_pools = Known::new("pools", &pool_index);
    let (buffer_elements, clean) = read_buffers(&r, &buffers_json, &known_pools, &mut builder);
    let at = |e: &ProblemError| {
        let pos = match e.locus {
            Locus::Pool(i, field) => pool_spans[i].of(field),
            Locus::Buffer(i, field) => {
                buffer_spans(&buffers_json[buffer_elements[i]], &known_pools).of(field)
            }
        };
        InputError::at(file, pos, e.to_string())
    };
    let built = builder.build_all_errors();
    if let Err(errors) = &built {
        for e in errors {
            if let Locus::Buffer(i, _) = e.locus
                && !clean[i]
            {
                continue;
            }
            r.note(at(e));
        }
    }
    r.finish()?;
    // Every builder error was noted, so only a problem gets here.
    built.map_err(|errors| {
        errors
            .first()
            .map_or_else(|| InputError::whole(file, "the problem is invalid"), at)
    })
}

/// The buffers of `buffers_json` into `builder`, with their conflicts and overlaps. Returns
/// where each builder buffer came from in `buffers` (its spans are found there again only
/// when a message needs them, not kept for a million buffers that have none), and whether
/// each was read without a mistake (the builder's checks of a buffer read with stand-ins
/// would only repeat what was noted).
fn read_buffers(
    r: &Reader<'_>,
    buffers_json: &[Json<'_>],
    known_pools: &Known<'_>,
    builder: &mut ProblemBuilder,
) -> (Vec<usize>, Vec<bool>) {
    let mut buffer_elements = Vec::new();
    let (mut pending_conflicts, mut pending_overlaps) = (Vec::new(), Vec::new());
    let mut buffer_index: Names = Names::new();
    // Names are looked up only for conflict and overlap lists: live-range problems (the
    // big ones) build no index.
    let named_lists = buffers_json.iter().any(|b| match &b.value {
        Value::Object(entries) => entries
            .iter()
            .any(|(key, _, _)| &**key == "conflicts" || &**key == "overlaps"),
        _ => false,
    });
    let mut clean = Vec::new();
    for (k, bj) in buffers_json.iter().enumerate() {
        let before = r.noted();
        let Some((buffer, conflicts, overlaps)) = r.keep(buffer(r, bj, k, known_pools)) else {
            continue;
        };
        if named_lists {
            buffer_index
                .entry(buffer.name.clone())
                .or_insert(buffer_elements.len());
        }
        buffer_elements.push(k);
        pending_conflicts.push(conflicts);
        pending_overlaps.push(overlaps);
        clean.push(r.noted() == before);
        builder.buffer(buffer);
    }
    let named = BufferNames {
        index: &buffer_index,
        elements: &buffer_elements,
    };
    add_conflicts(r, builder, pending_conflicts, &named, &mut clean);
    overlap_json::add(r, builder, pending_overlaps, &buffer_index, &mut clean);
    (buffer_elements, clean)
}

/// The pools of `pools_json` into `builder`: where each was written, and each name's
/// index.
fn read_pools(
    r: &Reader<'_>,
    pools_json: &[Json<'_>],
    builder: &mut ProblemBuilder,
) -> (Vec<Spans>, Names) {
    let mut spans = Vec::new();
    let mut index: Names = Names::new();
    for (k, pj) in pools_json.iter().enumerate() {
        // A problem's numbers are exact: no alignment unless stated (the RFC's default).
        let Some((pool, pool_spans)) = r.keep(r.pool(pj, k, 1)) else {
            continue;
        };
        index.entry(pool.name.clone()).or_insert(spans.len());
        spans.push(pool_spans);
        builder.pool(pool);
    }
    (spans, index)
}

/// The builder's buffers by name, and the element of `buffers` each came from.
struct BufferNames<'a> {
    index: &'a Names,
    elements: &'a [usize],
}

/// Each buffer's conflicts into `builder`; a name that is no buffer's is noted, and its
/// buffer is no longer `clean`.
fn add_conflicts(
    r: &Reader<'_>,
    builder: &mut ProblemBuilder,
    pending: Vec<Conflicting<'_>>,
    named: &BufferNames<'_>,
    clean: &mut [bool],
) {
    let (buffer_index, buffer_elements) = (named.index, named.elements);
    let known_buffers = Known::new("buffers", buffer_index);
    for (a, conflicts) in pending.into_iter().enumerate() {
        let k = buffer_elements[a];
        for (name, pos) in conflicts {
            match buffer_index.get(name) {
                Some(&b) => builder.conflict(a, b),
                None => {
                    clean[a] = false;
                    r.note_with(|| {
                        let known = known_buffers.text();
                        let message = format!(
                            "buffers[{k}].conflicts: no buffer is named \"{name}\"; {known}"
                        );
                        r.err(pos, message)
                    });
                }
            }
        }
    }
}

/// Where the fields of a buffer read from `j` were written, its candidates as the builder
/// holds them (the names of known pools, in order).
fn buffer_spans(j: &Json<'_>, pools: &Known<'_>) -> Spans {
    let Value::Object(e) = &j.value else {
        return Spans::at(j.pos);
    };
    let mut spans = Spans::of_entries(j, e, BUFFER_KEYS);
    let candidates = e.iter().find(|(key, _, _)| &**key == "pool_candidates");
    if let Some((
        _,
        _,
        Json {
            value: Value::Array(items),
            ..
        },
    )) = candidates
    {
        for item in items {
            if let Value::String(name) = &item.value
                && pools.get(name).is_some()
            {
                spans.candidates.push(item.pos);
            }
        }
    }
    spans
}

/// The buffers a buffer names as conflicting, each where it was written.
type Conflicting<'j> = Vec<(&'j str, Pos)>;

/// Buffer `k`, the conflicts it names and the overlaps it declares. Bad fields are noted
/// and left at stand-ins; only a buffer that is not an object is an error.
fn buffer<'j>(
    r: &Reader<'_>,
    j: &'j Json<'j>,
    k: usize,
    pools: &Known<'_>,
) -> Result<(Buffer, Conflicting<'j>, overlap_json::Declared<'j>), InputError> {
    let what = Element {
        list: "buffers",
        index: k,
        name: None,
    };
    let e = r.object(j, what, BUFFER_KEYS)?;
    let name = r.name(e, j, what);
    let what = Element {
        name: Some(&name),
        ..what
    };
    let whole = |key: &str, minus_one: bool| {
        let j = r.get(e, key)?;
        r.keep(r.integer(j, format_args!("{what}.{key}"), minus_one))?
    };
    let size = r.keep(r.required(e, j, "size_bytes", what)).map(|s| {
        let size = r.integer(s, format_args!("{what}.size_bytes"), false);
        // 1 stands in for a bad size so that the size check adds no second error.
        r.keep(size).flatten().unwrap_or(1)
    });
    let alignment = whole("alignment", false).unwrap_or(1);
    let traffic = whole("traffic", false).unwrap_or(0);
    let kind = r.keep(r.kind(r.get(e, "kind"), format_args!("{what}.kind")));
    let mut candidates = Vec::new();
    if r.keep(r.required(e, j, "pool_candidates", what)).is_some() {
        let label = format_args!("{what}.pool_candidates");
        for (_, pool_name, pos) in r.strings(e, "pool_candidates", label) {
            match pools.get(pool_name) {
                Some(p) => candidates.push(p),
                None => r.note_with(|| {
                    let known = pools.text();
                    let message = format!(
                        "{what}.pool_candidates: no pool is named \"{pool_name}\"; {known}"
                    );
                    r.err(pos, message)
                }),
            }
        }
    }
    let conflicts = r
        .strings(e, "conflicts", format_args!("{what}.conflicts"))
        .map(|(_, c, pos)| (c, pos))
        .collect();
    let live_range = r.get(e, "live").and_then(|live| live_of(r, live, what));
    let overlaps = overlap_json::read(r, e, what);
    let mut buffer = Buffer::new(name, size.unwrap_or(1));
    buffer.alignment = alignment;
    buffer.traffic = traffic;
    buffer.candidates = candidates;
    if let Some(kind) = kind {
        buffer.kind = kind;
    }
    if let Some((start, end)) = live_range {
        buffer = buffer.with_live(start, end);
    }
    Ok((buffer, conflicts, overlaps))
}

/// A buffer's `live` range, `[start, end]`; a bad one is noted and left out.
fn live_of(r: &Reader<'_>, live: &Json<'_>, what: Element<'_>) -> Option<(u64, u64)> {
    match r
        .keep(r.array(live, format_args!("{what}.live")))
        .as_deref()
    {
        Some([start, end]) => {
            let bound = |j: &Json<'_>, n: usize| {
                let v = r.integer(j, format_args!("{what}.live[{n}]"), false);
                r.keep(v).flatten()
            };
            // Both read, so both are noted when both are bad.
            let (start, end) = (bound(start, 0), bound(end, 1));
            Some((start?, end?))
        }
        Some(_) => {
            r.note(r.err(
                live.pos,
                format!("{what}.live must be [start, end], two whole numbers"),
            ));
            None
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{Conflicts, PoolKind};

    const GOOD: &str = r#"{
  "pools": [
    {"name": "dtcm", "size_hint_bytes": 128, "alignment": 16},
    {"name": "sram", "size_hint_bytes": -1},
    {"name": "flash", "kind": "constant"}
  ],
  "buffers": [
    {"name": "a", "size_bytes": 96, "alignment": 16, "pool_candidates": ["dtcm", "sram"], "conflicts": ["b"]},
    {"name": "b", "size_bytes": 64, "pool_candidates": ["dtcm", "sram"]},
    {"name": "w", "size_bytes": 10, "kind": "constant", "pool_candidates": ["flash"]}
  ]
}"#;

    #[test]
    fn reads_the_rfc_shape() {
        let p = parse_problem_json(GOOD, "p.json").unwrap();
        assert_eq!(p.pools().len(), 3);
        assert_eq!(p.pools()[0].size_limit, Some(128));
        assert_eq!(p.pools()[1].size_limit, None);
        assert_eq!(p.pools()[2].kind, PoolKind::Constant);
        assert_eq!(p.buffers()[0].candidates, vec![0, 1]);
        assert_eq!(
            p.conflicts(),
            &Conflicts::Graph(vec![vec![1], vec![0], vec![]])
        );
    }

    fn error(text: &str) -> String {
        parse_problem_json(text, "p.json").unwrap_err().to_string()
    }

    #[test]
    fn errors_name_line_column_and_field() {
        let bad = GOOD.replace(
            "\"pool_candidates\": [\"dtcm\", \"sram\"], \"conflicts\"",
            "\"pool_candidates\": [\"dtcm\", \"sarm\"], \"conflicts\"",
        );
        assert_eq!(
            error(&bad),
            "p.json:8:82: buffers[0] (\"a\").pool_candidates: no pool is named \"sarm\"; known pools: \"dtcm\", \"flash\", \"sram\""
        );
        let bad = GOOD.replace("\"conflicts\": [\"b\"]", "\"conflicts\": [\"c\"]");
        assert!(
            error(&bad).starts_with("p.json:8:105: buffers[0].conflicts: no buffer is named \"c\""),
            "{}",
            error(&bad)
        );
        let bad = GOOD.replace("\"size_bytes\": 64", "\"size_bytes\": 0");
        assert_eq!(
            error(&bad),
            "p.json:9:33: buffer \"b\" has size 0; sizes are at least 1 byte"
        );
        let bad = GOOD.replace("\"size_bytes\": 64", "\"size_bytes\": -64");
        assert_eq!(
            error(&bad),
            "p.json:9:33: buffers[1] (\"b\").size_bytes is -64; write a number of 0 or more"
        );
        let bad = GOOD.replace("\"alignment\": 16, \"pool", "\"alignment\": 12, \"pool");
        assert!(
            error(&bad).starts_with("p.json:8:50: buffer \"a\" has alignment 12"),
            "{}",
            error(&bad)
        );
        let bad = GOOD.replace("\"size_hint_bytes\": 128", "\"size_hnit_bytes\": 128");
        assert!(
            error(&bad).starts_with(
                "p.json:3:22: pools[0]: unknown key \"size_hnit_bytes\"; expected one of"
            ),
            "{}",
            error(&bad)
        );
        let bad = GOOD.replace("\"name\": \"w\"", "\"name\": \"a\"");
        assert_eq!(
            error(&bad),
            "p.json:10:14: buffer \"a\" is declared twice; give each buffer its own name"
        );
        let bad = GOOD.replace("[\"flash\"]", "[]");
        assert!(
            error(&bad).starts_with("p.json:10:76: buffer \"w\" has no candidate pools"),
            "{}",
            error(&bad)
        );
        let bad = GOOD.replace(
            "\"kind\": \"constant\", \"pool_candidates\": [\"flash\"]",
            "\"kind\": \"constant\", \"pool_candidates\": [\"sram\"]",
        );
        assert!(
            error(&bad).starts_with(
                "p.json:10:77: buffer \"w\" is constant data but candidate pool \"sram\""
            ),
            "{}",
            error(&bad)
        );
        assert_eq!(
            error("{\"pools\": []}"),
            "p.json:1:1: the problem has no \"buffers\"; add it"
        );
        assert_eq!(
            error("[]"),
            "p.json:1:1: the problem must be an object, found an array"
        );
        let e = error(
            r#"{"pools":[{"name":"p","size_hint_bytes":99999999999999999999}],"buffers":[]}"#,
        );
        assert!(e.contains("too large for 64 bits"), "{e}");
        let e = error(
            r#"{"pools":[{"name":"p"}],"buffers":[{"name":"x","size_bytes":1.5,"pool_candidates":["p"]}]}"#,
        );
        assert!(
            e.contains("size_bytes is 1.5, which is not a whole number"),
            "{e}"
        );
    }

    /// Reading mistakes and the problem's own checks, all in one run, in file order; a
    /// buffer read with a stand-in is not checked again (no follow-on errors).
    #[test]
    fn every_mistake_is_reported_together() {
        let text = r#"{"pools": [{"name": "p", "size": 10, "alignment": 3}, {"name": "p"}],
 "buffers": [{"name": "a", "size_bytes": 0, "pool_candidates": ["p"]},
             {"name": "b", "size_bytes": 4, "pool_candidates": ["q"], "conflicts": ["zz"], "live": [1]},
             7]}"#;
        let e = parse_problem_json(text, "p.json").unwrap_err();
        let places: Vec<String> = e
            .each()
            .map(|e| {
                e.pos
                    .map_or(String::new(), |p| format!("{}:{}", p.line, p.column))
            })
            .collect();
        assert_eq!(
            places,
            ["1:51", "1:64", "2:42", "3:65", "3:85", "3:100", "4:14"],
            "{e}"
        );
        let text = e.to_string();
        for needle in [
            "pool \"p\" has alignment 3",
            "pool \"p\" is declared twice",
            "buffer \"a\" has size 0",
            "no pool is named \"q\"",
            "no buffer is named \"zz\"",
            "live must be [start, end]",
            "buffers[2] must be an object, found a number",
        ] {
            assert!(text.contains(needle), "{needle} in {text}");
        }
        assert!(!text.contains("no candidate pools"), "{text}");
    }

    /// Every error of a problem of `n` buffers, buffer `i` written by `buffer(i)`.
    fn errors_of(n: usize, buffer: impl Fn(usize) -> String) -> Vec<InputError> {
        let buffers: Vec<String> = (0..n).map(buffer).collect();
        let text = format!(
            r#"{{"pools": [{{"name": "p"}}], "buffers": [{}]}}"#,
            buffers.join(",")
        );
        parse_problem_json(&text, "p.json")
            .unwrap_err()
            .each()
            .collect()
    }

    /// A file wrong throughout lists 100 errors and counts the rest.
    #[test]
    fn a_file_wrong_throughout_lists_a_hundred_and_counts_the_rest() {
        let all = errors_of(250, |i| {
            format!(r#"{{"name": "b{i}", "size_bytes": -1, "pool_candidates": ["p"]}}"#)
        });
        assert_eq!(all.len(), 101);
        assert!(
            all[99]
                .message
                .contains("buffers[99] (\"b99\").size_bytes is -1")
        );
        assert_eq!(
            all[100].message,
            "150 more errors are not listed; fix these first"
        );
    }

    /// Unknown names past the listed hundred are counted, not written: each message lists
    /// the known names, and writing 20,000 of those lists took minutes.
    #[test]
    fn many_unknown_names_are_counted_not_written() {
        let all = errors_of(20_000, |i| {
            format!(
                r#"{{"name": "b{i}", "size_bytes": 4, "pool_candidates": ["p"], "conflicts": ["z{i}"]}}"#
            )
        });
        assert_eq!(all.len(), 101);
        let first = &all[0].message;
        assert!(
            first.contains("no buffer is named \"z0\"; known buffers: \"b0\", \"b1\", \"b10\""),
            "{first}"
        );
        assert!(first.ends_with("and 19980 more"), "{first}");
        assert_eq!(
            all[100].message,
            "19900 more errors are not listed; fix these first"
        );
    }

    #[test]
    fn overlaps_name_their_input_and_window() {
        let text = r#"{"pools": [{"name": "p"}], "buffers": [
            {"name": "x", "size_bytes": 32, "pool_candidates": ["p"], "live": [0, 2]},
            {"name": "y", "size_bytes": 16, "pool_candidates": ["p"], "live": [1, 3],
             "overlaps": [{"input": "x", "shifts": [-16, 0]}]}]}"#;
        let p = parse_problem_json(text, "p.json").unwrap();
        let o = p.overlap_between(0, 1).unwrap();
        assert_eq!((o.output, o.input, o.shifts), (1, 0, [-16, 0]));
        let e = error(&text.replace("\"input\": \"x\"", "\"input\": \"q\""));
        assert!(
            e.contains("p.json:4:27") && e.contains("no buffer is named \"q\""),
            "{e}"
        );
        let e = error(&text.replace("[-16, 0]", "[-16]"));
        assert!(e.contains("must be [least, greatest]"), "{e}");
        let e = error(&text.replace("[-16, 0]", "[0, -16]"));
        assert!(
            e.contains("p.json:4:26") && e.contains("least is above"),
            "{e}"
        );
    }
}
