//! The pools file reader; the format is documented on [`PoolsFile`].

use super::json::Json;
use super::read::Reader;
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

/// Parses a pools file.
pub(crate) fn parse_pools_json(root: &Json, file: &str) -> Result<PoolsFile, InputError> {
    let r = Reader { file };
    let top = r.object(root, "the pools file", TOP_KEYS)?;
    let mut out = PoolsFile {
        pools: Vec::new(),
        file: Some(file.to_string()),
        root: Some(root.pos),
        ..PoolsFile::default()
    };
    let pools = r.array(r.required(top, root, "pools", "the pools file")?, "`pools`")?;
    if pools.is_empty() {
        return Err(r.err(root.pos, "`pools` is empty; list at least one pool".into()));
    }
    for (k, pj) in pools.iter().enumerate() {
        let (pool, spans) = r.pool(pj, k, DEFAULT_ALIGNMENT)?;
        if let Some(first) = out.pools.iter().position(|p| p.name == pool.name) {
            return Err(r.err(
                spans.fields.get("name").copied().unwrap_or(pj.pos),
                format!(
                    "pools[{k}]: pool \"{}\" is already declared as pools[{first}]; give each \
                     pool its own name",
                    pool.name
                ),
            ));
        }
        if !pool.alignment.is_power_of_two() {
            return Err(r.err(
                spans.fields.get("alignment").copied().unwrap_or(pj.pos),
                format!(
                    "pools[{k}].alignment is {}, which is not a power of two; write 1, 2, 4, \
                     8, 16, ...",
                    pool.alignment
                ),
            ));
        }
        out.pools.push(pool);
    }
    if let Some(v) = r.get(top, "io_in_pools") {
        out.options.io_in_pools = r.boolean(v, "io_in_pools")?;
    }
    if let Some(v) = r.get(top, "size_granularity") {
        let g = positive(&r, v, "size_granularity")?;
        if !g.is_power_of_two() {
            return Err(r.err(
                v.pos,
                format!(
                    "size_granularity is {g}, which is not a power of two; write 1, 2, 4, 8, 16, ..."
                ),
            ));
        }
        out.options.size_granularity = g;
    }
    if let Some(v) = r.get(top, "alignment") {
        let a = positive(&r, v, "alignment")?;
        if !a.is_power_of_two() {
            return Err(r.err(
                v.pos,
                format!("alignment is {a}, which is not a power of two; write 1, 2, 4, 8, 16, ..."),
            ));
        }
        out.options.alignment = a;
    }
    if let Some(list) = r.get(top, "scratch") {
        for (k, rj) in r.array(list, "`scratch`")?.iter().enumerate() {
            out.options.scratch.push(rule(&r, rj, k)?);
            out.rules.push(rj.pos);
        }
    }
    Ok(out)
}

fn positive(r: &Reader<'_>, j: &Json, what: &str) -> Result<u64, InputError> {
    match r.integer(j, what, false)? {
        Some(0) | None => Err(r.err(j.pos, format!("{what} is 0; write 1 or more"))),
        Some(v) => Ok(v),
    }
}

fn rule(r: &Reader<'_>, j: &Json, k: usize) -> Result<ScratchRule, InputError> {
    let what = format!("scratch[{k}]");
    let e = r.object(j, &what, RULE_KEYS)?;
    let calls = match (r.get(e, "op"), r.get(e, "call")) {
        (Some(op), None) => CallSelector::Operator(r.string(op, &format!("{what}.op"))?),
        (None, Some(c)) => {
            CallSelector::Index(r.integer(c, &format!("{what}.call"), false)?.unwrap_or(0) as usize)
        }
        (Some(_), Some(c)) => {
            return Err(r.err(
                c.pos,
                format!("{what} has both \"op\" and \"call\"; keep one"),
            ));
        }
        (None, None) => {
            return Err(r.err(
                j.pos,
                format!(
                    "{what} selects no call; add \"op\": \"CONV_2D\" (every call of an \
                     operator) or \"call\": 3 (one call)"
                ),
            ));
        }
    };
    let name = r.string(r.required(e, j, "name", &what)?, &format!("{what}.name"))?;
    // `size` as in usmp.toml (bytes or "4 KiB"), or the older `size_bytes`.
    let (size_json, key) = match r.either(e, &what, "size", "size_bytes")? {
        Some(found) => found,
        None => (r.required(e, j, "size", &what)?, "size"),
    };
    let bytes = match r.bytes(size_json, &format!("{what}.{key}"))? {
        Some(0) | None => {
            return Err(r.err(
                size_json.pos,
                format!("{what}.{key} must be 1 byte or more"),
            ));
        }
        Some(v) => v,
    };
    let alignment = match r.get(e, "alignment") {
        Some(a) => Some(positive(r, a, &format!("{what}.alignment"))?),
        None => None,
    };
    Ok(ScratchRule {
        calls,
        scratch: Scratch {
            name,
            size: Size::Bytes(bytes),
            alignment,
        },
    })
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
