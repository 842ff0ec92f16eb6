//! The RFC-shaped JSON problem:
//!
//! ```json
//! {"pools":   [{"name": "sram", "kind": "workspace", "size_hint_bytes": 65536, "alignment": 16}],
//!  "buffers": [{"name": "a", "size_bytes": 96, "alignment": 16,
//!               "pool_candidates": ["sram"], "conflicts": ["b"]}]}
//! ```
//!
//! Pools: `kind` defaults to `workspace`; a missing or `-1` `size_hint_bytes` means
//! unbounded; `alignment` defaults to 1; `targets` (names) defaults to all. Buffers:
//! `alignment` defaults to 1, `kind` to `workspace`; either every buffer has
//! `"live": [start, end]` (half-open) or conflicts are listed by name.

use std::collections::BTreeMap;

use super::json::{self, Json};
use super::read::{Reader, Spans, known};
use super::{InputError, Pos};
use crate::problem::{Buffer, Locus, Problem};

const TOP_KEYS: &[&str] = &["pools", "buffers"];
const BUFFER_KEYS: &[&str] = &[
    "name",
    "size_bytes",
    "alignment",
    "kind",
    "pool_candidates",
    "conflicts",
    "live",
];

/// Parses a JSON problem; errors name `file`, the line and column, and the field.
pub fn parse_problem_json(text: &str, file: &str) -> Result<Problem, InputError> {
    problem_from_json(&json::parse(text, file)?, file)
}

/// Reads a problem from already parsed JSON.
pub(crate) fn problem_from_json(root: &Json, file: &str) -> Result<Problem, InputError> {
    let r = Reader { file };
    let top = r.object(root, "the problem", TOP_KEYS)?;
    let pools_json = r.array(r.required(top, root, "pools", "the problem")?, "`pools`")?;
    let buffers_json = r.array(
        r.required(top, root, "buffers", "the problem")?,
        "`buffers`",
    )?;

    let mut builder = Problem::builder();
    let mut pool_spans = Vec::new();
    let mut pool_index: BTreeMap<String, usize> = BTreeMap::new();
    for (k, pj) in pools_json.iter().enumerate() {
        // A problem's numbers are exact: no alignment unless stated (the RFC's default).
        let (pool, spans) = r.pool(pj, k, 1)?;
        pool_index.entry(pool.name.clone()).or_insert(k);
        pool_spans.push(spans);
        builder.pool(pool);
    }
    let mut buffer_spans = Vec::new();
    let mut pending_conflicts = Vec::new();
    let mut buffer_index: BTreeMap<String, usize> = BTreeMap::new();
    for (k, bj) in buffers_json.iter().enumerate() {
        let (buffer, spans, conflicts) = buffer(&r, bj, k, &pool_index)?;
        buffer_index.entry(buffer.name.clone()).or_insert(k);
        buffer_spans.push(spans);
        pending_conflicts.push(conflicts);
        builder.buffer(buffer);
    }
    for (a, conflicts) in pending_conflicts.into_iter().enumerate() {
        for (name, pos) in conflicts {
            let Some(&b) = buffer_index.get(&name) else {
                return Err(InputError::at(
                    file,
                    pos,
                    format!(
                        "buffers[{a}].conflicts: no buffer is named \"{name}\"; {}",
                        known("buffers", &buffer_index)
                    ),
                ));
            };
            builder.conflict(a, b);
        }
    }
    builder.build().map_err(|e| {
        let pos = match e.locus {
            Locus::Pool(i, field) => pool_spans[i].of(field),
            Locus::Buffer(i, field) => buffer_spans[i].of(field),
        };
        InputError::at(file, pos, e.to_string())
    })
}

#[allow(clippy::type_complexity)]
fn buffer(
    r: &Reader<'_>,
    j: &Json,
    k: usize,
    pools: &BTreeMap<String, usize>,
) -> Result<(Buffer, Spans, Vec<(String, Pos)>), InputError> {
    let what = format!("buffers[{k}]");
    let e = r.object(j, &what, BUFFER_KEYS)?;
    let name = r.string(r.required(e, j, "name", &what)?, &format!("{what}.name"))?;
    let what = format!("buffers[{k}] (\"{name}\")");
    let size_json = r.required(e, j, "size_bytes", &what)?;
    let size = r
        .integer(size_json, &format!("{what}.size_bytes"), false)?
        .unwrap_or(0);
    let mut buffer = Buffer::new(name, size);
    if let Some(a) = r.get(e, "alignment") {
        buffer.alignment = r
            .integer(a, &format!("{what}.alignment"), false)?
            .unwrap_or(1);
    }
    buffer.kind = r.kind(r.get(e, "kind"), &format!("{what}.kind"))?;
    let mut spans = r.spans(j, e);
    let candidates = r.required(e, j, "pool_candidates", &what)?;
    for (n, c) in r
        .array(candidates, &format!("{what}.pool_candidates"))?
        .iter()
        .enumerate()
    {
        let pool_name = r.string(c, &format!("{what}.pool_candidates[{n}]"))?;
        let Some(&p) = pools.get(&pool_name) else {
            return Err(r.err(
                c.pos,
                format!(
                    "{what}.pool_candidates: no pool is named \"{pool_name}\"; {}",
                    known("pools", pools)
                ),
            ));
        };
        buffer.candidates.push(p);
        spans.candidates.push(c.pos);
    }
    let mut conflicts = Vec::new();
    if let Some(list) = r.get(e, "conflicts") {
        for (n, c) in r
            .array(list, &format!("{what}.conflicts"))?
            .iter()
            .enumerate()
        {
            conflicts.push((r.string(c, &format!("{what}.conflicts[{n}]"))?, c.pos));
        }
    }
    if let Some(live) = r.get(e, "live") {
        let range = r.array(live, &format!("{what}.live"))?;
        let [start, end] = range else {
            return Err(r.err(
                live.pos,
                format!("{what}.live must be [start, end], two whole numbers"),
            ));
        };
        let start = r
            .integer(start, &format!("{what}.live[0]"), false)?
            .unwrap_or(0);
        let end = r
            .integer(end, &format!("{what}.live[1]"), false)?
            .unwrap_or(0);
        buffer = buffer.with_live(start, end);
    }
    Ok((buffer, spans, conflicts))
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
}
