//! The pools file reader; the format is documented on [`PoolsFile`].

use super::json::Json;
use super::read::{Entries, Reader};
use super::{InputError, Pos};
use crate::liveness::{CallSelector, DEFAULT_ALIGNMENT, Options, ScratchRule};
use crate::model::{Scratch, Size};
use crate::problem::Pool;

const TOP_KEYS: &[&str] = &[
    "pools",
    "io_in_pools",
    "size_granularity",
    "alignment",
    "scratch",
];
const RULE_KEYS: &[&str] = &["op", "call", "name", "size", "size_bytes", "alignment"];

/// The pools file that goes with a model: the memories to plan into and how to lower
/// the model onto them.
///
/// ```json
/// {
///   "pools": [
///     {"name": "dtcm",  "size": "16 KiB", "alignment": 16, "targets": ["cpu"]},
///     {"name": "sram",  "alignment": 16, "targets": ["cpu", "npu"]},
///     {"name": "flash", "kind": "constant", "alignment": 16}
///   ],
///   "io_in_pools": true,
///   "size_granularity": 16,
///   "alignment": 16,
///   "scratch": [
///     {"op": "SVDF", "name": "state_scratch", "size": 448},
///     {"call": 3, "name": "im2col", "size": "4 KiB", "alignment": 32}
///   ]
/// }
/// ```
///
/// Sizes are written as in `usmp.toml`: bytes, or a string with a binary unit (`"16 KiB"`);
/// a pool's `size` of -1 or none means no limit. The RFC's older names, `size_hint_bytes`
/// for a pool and `size_bytes` for a scratch rule, are still read (one or the other).
/// Pools take the keys of the JSON problem's pools, in preference order. The other keys
/// are [`Options`](crate::liveness::Options) and default to TFLite Micro's and TVM's
/// choices: I/O in pools, sizes rounded to 16, alignment 16. A scratch rule selects
/// calls by operator name (`op`) or by position (`call`).
#[derive(Clone, Debug)]
pub struct PoolsFile {
    /// The pools, in preference order.
    pub pools: Vec<Pool>,
    /// How the model is lowered.
    pub options: Options,
    pub(crate) file: Option<String>,
    pub(crate) rules: Vec<Pos>,
    pub(crate) root: Option<Pos>,
}

impl Default for PoolsFile {
    /// One unbounded workspace pool `workspace` and one constant pool `constants`, both
    /// aligned to 16, every target allowed; default options.
    fn default() -> Self {
        PoolsFile {
            pools: vec![
                Pool::workspace("workspace").with_alignment(DEFAULT_ALIGNMENT),
                Pool::constant("constants").with_alignment(DEFAULT_ALIGNMENT),
            ],
            options: Options::default(),
            file: None,
            rules: Vec::new(),
            root: None,
        }
    }
}

/// Parses a pools file, reporting every mistake in it together.
pub(crate) fn parse_pools_json(root: &Json<'_>, file: &str) -> Result<PoolsFile, InputError> {
    let r = Reader::new(file);
    let top = r.object(root, "the pools file", TOP_KEYS)?;
    let mut out = PoolsFile {
        pools: Vec::new(),
        file: Some(file.to_string()),
        root: Some(root.pos),
        ..PoolsFile::default()
    };
    let pools = r.required(top, root, "pools", "the pools file");
    let pools = r.keep(pools.and_then(|p| r.array(p, "`pools`")));
    if pools.as_ref().is_some_and(|p| p.is_empty()) {
        r.note(r.err(root.pos, "`pools` is empty; list at least one pool".into()));
    }
    for (k, pj) in pools.unwrap_or_default().iter().enumerate() {
        let Some((pool, spans)) = r.keep(r.pool(pj, k, DEFAULT_ALIGNMENT)) else {
            continue;
        };
        let at = |key: &str| spans.field(key).unwrap_or(pj.pos);
        if let Some(first) = out.pools.iter().position(|p| p.name == pool.name) {
            r.note(r.err(
                at("name"),
                format!(
                    "pools[{k}]: pool \"{}\" is already declared as pools[{first}]; give each \
                     pool its own name",
                    pool.name
                ),
            ));
        }
        if !pool.alignment.is_power_of_two() {
            r.note(r.err(
                at("alignment"),
                format!(
                    "pools[{k}].alignment is {}, which is not a power of two; write 1, 2, 4, \
                     8, 16, ...",
                    pool.alignment
                ),
            ));
        }
        out.pools.push(pool);
    }
    if let Some(v) = r.get(top, "io_in_pools")
        && let Some(b) = r.keep(r.boolean(v, "io_in_pools"))
    {
        out.options.io_in_pools = b;
    }
    if let Some(g) = power_of_two(&r, top, "size_granularity") {
        out.options.size_granularity = g;
    }
    if let Some(a) = power_of_two(&r, top, "alignment") {
        out.options.alignment = a;
    }
    if let Some(list) = r.get(top, "scratch") {
        for (k, rj) in r
            .keep(r.array(list, "`scratch`"))
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            if let Some(Some(rule)) = r.keep(rule(&r, rj, k)) {
                out.options.scratch.push(rule);
                out.rules.push(rj.pos);
            }
        }
    }
    r.finish()?;
    Ok(out)
}

/// The option `key` when it is given and is a power of two; otherwise notes why not.
fn power_of_two(r: &Reader<'_>, top: Entries<'_>, key: &str) -> Option<u64> {
    let v = r.get(top, key)?;
    let n = r.keep(positive(r, v, key))?;
    if !n.is_power_of_two() {
        r.note(r.err(
            v.pos,
            format!("{key} is {n}, which is not a power of two; write 1, 2, 4, 8, 16, ..."),
        ));
        return None;
    }
    Some(n)
}

fn positive(r: &Reader<'_>, j: &Json<'_>, what: &str) -> Result<u64, InputError> {
    match r.integer(j, what, false)? {
        Some(0) | None => Err(r.err(j.pos, format!("{what} is 0; write 1 or more"))),
        Some(v) => Ok(v),
    }
}

/// Scratch rule `k`: an error when it is not an object, `None` when a mistake in it was
/// noted.
fn rule(r: &Reader<'_>, j: &Json<'_>, k: usize) -> Result<Option<ScratchRule>, InputError> {
    let what = format!("scratch[{k}]");
    let e = r.object(j, &what, RULE_KEYS)?;
    let calls = match (r.get(e, "op"), r.get(e, "call")) {
        (Some(op), None) => r
            .keep(r.string(op, format_args!("{what}.op")))
            .map(CallSelector::Operator),
        (None, Some(c)) => r
            .keep(r.integer(c, format_args!("{what}.call"), false))
            .flatten()
            .map(|c| CallSelector::Index(usize::try_from(c).unwrap_or(usize::MAX))),
        (Some(_), Some(c)) => {
            r.note(r.err(
                c.pos,
                format!("{what} has both \"op\" and \"call\"; keep one"),
            ));
            None
        }
        (None, None) => {
            r.note(r.err(
                j.pos,
                format!(
                    "{what} selects no call; add \"op\": \"CONV_2D\" (every call of an \
                     operator) or \"call\": 3 (one call)"
                ),
            ));
            None
        }
    };
    let name = r.name(e, j, &what);
    // `size` as in usmp.toml (bytes or "4 KiB"), or the older `size_bytes`.
    let size = match r.keep(r.either(e, &what, "size", "size_bytes")) {
        Some(Some(found)) => Some(found),
        Some(None) => r.keep(r.required(e, j, "size", &what)).map(|s| (s, "size")),
        None => None,
    };
    let bytes =
        size.and_then(
            |(size_json, key)| match r.bytes(size_json, format_args!("{what}.{key}")) {
                Ok(Some(0) | None) => {
                    r.note(r.err(
                        size_json.pos,
                        format!("{what}.{key} must be 1 byte or more"),
                    ));
                    None
                }
                other => r.keep(other).flatten(),
            },
        );
    let alignment = r
        .get(e, "alignment")
        .and_then(|a| r.keep(positive(r, a, &format!("{what}.alignment"))));
    Ok(calls.zip(bytes).map(|(calls, bytes)| ScratchRule {
        calls,
        scratch: Scratch {
            name,
            size: Size::Bytes(bytes),
            alignment,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::parse_pools_json;
    use crate::input::json;

    fn message(text: &str) -> String {
        let root = json::parse(text, "pools.json").unwrap_or_else(|e| panic!("{e}"));
        match parse_pools_json(&root, "pools.json") {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    }

    /// The keys and units of usmp.toml work here too; the RFC's older names still do.
    #[test]
    fn sizes_are_written_as_in_usmp_toml() {
        let pools = |text: &str| {
            let root = json::parse(text, "pools.json").unwrap_or_else(|e| panic!("{e}"));
            parse_pools_json(&root, "pools.json").unwrap_or_else(|e| panic!("{e}"))
        };
        let new = pools(
            r#"{"pools": [{"name": "dtcm", "size": "8 KiB"}, {"name": "sram", "size": -1}],
                "scratch": [{"op": "CONV_2D", "name": "im2col", "size": "1 KiB"}]}"#,
        );
        let old = pools(
            r#"{"pools": [{"name": "dtcm", "size_hint_bytes": 8192}, {"name": "sram"}],
                "scratch": [{"op": "CONV_2D", "name": "im2col", "size_bytes": 1024}]}"#,
        );
        assert_eq!(format!("{:?}", new.pools), format!("{:?}", old.pools));
        assert_eq!(new.pools[0].size_limit, Some(8192));
        assert_eq!(new.pools[1].size_limit, None);
        assert_eq!(
            format!("{:?}", new.options.scratch),
            format!("{:?}", old.options.scratch)
        );
        let both = message(r#"{"pools": [{"name": "p", "size": 1, "size_hint_bytes": 1}]}"#);
        assert!(
            both.contains("pools[0] gives both size and size_hint_bytes; keep size"),
            "{both}"
        );
        let unit = message(r#"{"pools": [{"name": "p", "size": "8 kb"}]}"#);
        assert!(
            unit.contains("pools[0].size: `8 kb` is not a size"),
            "{unit}"
        );
        assert!(unit.contains("\"16 KiB\""), "{unit}");
    }

    #[test]
    fn size_granularity_is_a_power_of_two_as_in_usmp_toml() {
        let m = message(r#"{"pools": [{"name": "sram"}], "size_granularity": 3}"#);
        assert!(
            m.contains("size_granularity is 3, which is not a power of two"),
            "{m}"
        );
        assert_eq!(
            message(r#"{"pools": [{"name": "sram"}], "size_granularity": 4}"#),
            ""
        );
    }
}
