//! The one reader of a declaration: a [`Raw`] tree, whichever front end built it, to a
//! [`Spec`]. The keys each table may hold and the value a missing key takes are written
//! here and nowhere else, so `usmp.toml` and `usmp_pools!` accept the same keys, give the
//! same defaults and report the same mistakes at the same keys. Every problem is
//! collected: the spec comes back with defaults in place of bad values, so validation can
//! add what it finds (see [`crate::valid`]).

use std::path::Path;

use usmp_core::input::{BANDWIDTH_FORMS, SIZE_FORMS, parse_bandwidth};
use usmp_core::liveness::Options;
use usmp_core::{Assignment, PoolKind};

use crate::choice::AlgorithmChoice;
use crate::raw::{Entries, Raw};
use crate::spec::{
    At, CallOrder, DEFAULT_ALIGNMENT, DEFAULT_SIZE_GRANULARITY, Diagnostic, ModelSpec, PoolSpec,
    ScratchSpec, Spec, Stages, parse_size,
};

/// The keys of the top-level table.
pub const TOP_KEYS: &[&str] = &["pool", "model", "report"];
/// The keys of a pool.
pub const POOL_KEYS: &[&str] = &[
    "name",
    "kind",
    "size",
    "alignment",
    "section",
    "region",
    "load",
    "shares",
    "targets",
    "bandwidth",
];
/// The keys of a model.
pub const MODEL_KEYS: &[&str] = &[
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
    "overlap",
    "order",
    "stages",
    "tflm",
];
/// The keys of a scratch rule.
pub const SCRATCH_KEYS: &[&str] = &["op", "call", "name", "size", "alignment"];
/// The keys of `[report]`.
pub const REPORT_KEYS: &[&str] = &["summary"];

/// How a front end names its tables in messages (`[[pool]]` in usmp.toml).
#[derive(Clone, Copy, Debug)]
pub struct Dialect {
    /// A pool.
    pub pool: &'static str,
    /// A model.
    pub model: &'static str,
    /// A scratch rule.
    pub scratch: &'static str,
    /// The file model paths are relative to.
    pub file: &'static str,
    /// Keys left out of the lists of keys that messages show: those the front end writes
    /// by its own structure (`usmp_pools!`'s `dtcm: workspace(...)` is a name and a kind)
    /// or refuses.
    pub unlisted: &'static [&'static str],
    /// How to declare a first pool.
    pub add_pool: &'static str,
    /// How to declare a first model.
    pub add_model: &'static str,
}

/// `usmp.toml`'s names.
pub const TOML: Dialect = Dialect {
    pool: "[[pool]]",
    model: "[[model]]",
    scratch: "scratch entry",
    file: "usmp.toml",
    unlisted: &[],
    add_pool: "a `[[pool]]` with `name = \"sram\"`",
    add_model: "a `[[model]]` with `name` and `path`",
};

/// One table being read: its entries and where it starts.
struct Table<'a, S> {
    entries: &'a Entries<S>,
    span: S,
}

/// Reads values out of tables, collecting every problem rather than stopping.
struct Reader<S> {
    errors: Vec<Diagnostic<S>>,
    dialect: Dialect,
}

impl<S: Clone> Reader<S> {
    fn error(&mut self, span: S, message: String, help: String) {
        self.errors.push(Diagnostic::new(span, message).help(help));
    }

    /// An error at each key not in `known`, and at each key written twice.
    fn known(&mut self, t: &Table<'_, S>, known: &[&str]) {
        for (k, (key, _)) in t.entries.iter().enumerate() {
            if !known.contains(&key.value.as_str()) {
                let list: Vec<String> = known
                    .iter()
                    .filter(|k| !self.dialect.unlisted.contains(k))
                    .map(|k| format!("`{k}`"))
                    .collect();
                self.error(
                    key.span.clone(),
                    format!("unknown key `{}`", key.value),
                    format!("the keys here are {}", list.join(", ")),
                );
            } else if t.entries[..k].iter().any(|(o, _)| o.value == key.value) {
                self.error(
                    key.span.clone(),
                    format!("`{}` is given twice", key.value),
                    "write each key once".into(),
                );
            }
        }
    }

    fn get<'a>(t: &Table<'a, S>, key: &str) -> Option<&'a At<Raw<S>, S>> {
        t.entries
            .iter()
            .find(|(k, _)| k.value == key)
            .map(|(_, v)| v)
    }

    /// The value of `key` read by `f`, which says what it accepts when it returns `None`.
    fn value<T>(
        &mut self,
        t: &Table<'_, S>,
        key: &str,
        forms: &str,
        f: impl FnOnce(&Raw<S>) -> Option<T>,
    ) -> Option<At<T, S>> {
        let v = Self::get(t, key)?;
        match f(&v.value) {
            Some(x) => Some(At::new(x, v.span.clone())),
            None => {
                self.error(
                    v.span.clone(),
                    format!("`{key}` is {}", v.value.describe()),
                    format!("write {forms}"),
                );
                None
            }
        }
    }

    fn string(&mut self, t: &Table<'_, S>, key: &str, example: &str) -> Option<At<String, S>> {
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

    fn uint(&mut self, t: &Table<'_, S>, key: &str, example: &str) -> Option<At<u64, S>> {
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

    fn boolean(&mut self, t: &Table<'_, S>, key: &str) -> Option<At<bool, S>> {
        self.value(t, key, "true or false", |r| match r {
            Raw::Bool(b) => Some(*b),
            _ => None,
        })
    }

    /// A size; `-1` (the RFC's "no hint") is no limit, as in the CLI's pools file.
    fn size(&mut self, t: &Table<'_, S>, key: &str, unbounded: bool) -> Option<At<u64, S>> {
        let v = Self::get(t, key)?;
        let span = v.span.clone();
        let forms = if unbounded {
            format!("{SIZE_FORMS}, or leave `{key}` out (or write -1) for no limit")
        } else {
            SIZE_FORMS.to_string()
        };
        match &v.value {
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
    fn bandwidth(&mut self, t: &Table<'_, S>, key: &str) -> Option<At<u64, S>> {
        let v = Self::get(t, key)?;
        let parsed = match &v.value {
            Raw::Int(n) if *n > 0 => Ok(n.unsigned_abs()),
            Raw::Str(text) => parse_bandwidth(text),
            other => Err(format!("`{key}` is {}, not a bandwidth", other.describe())),
        };
        match parsed {
            Ok(n) => Some(At::new(n, v.span.clone())),
            Err(e) => {
                self.error(v.span.clone(), e, format!("write {BANDWIDTH_FORMS}"));
                None
            }
        }
    }

    /// `stages`: `"auto"`, `"off"`, or an array of `[first, last]` call ranges.
    fn stages(&mut self, t: &Table<'_, S>, key: &str) -> Option<At<Stages, S>> {
        let v = Self::get(t, key)?;
        let help = format!(
            "write {key} = \"auto\" (usmp chooses), \"off\", or the calls to fuse as [[first, last], ...] such as [[0, 7]]"
        );
        let pair = |item: &At<Raw<S>, S>| match &item.value {
            Raw::Array(ends) => match ends.as_slice() {
                [a, b] => match (&a.value, &b.value) {
                    (Raw::Int(a), Raw::Int(b)) => {
                        Some([u64::try_from(*a).ok()?, u64::try_from(*b).ok()?])
                    }
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        let stages = match &v.value {
            Raw::Str(s) if s == "auto" => Stages::Auto,
            Raw::Str(s) if s == "off" => Stages::Off,
            Raw::Array(items) => {
                let mut listed = Vec::new();
                for item in items {
                    match pair(item) {
                        Some(p) => listed.push(p),
                        None => {
                            let message = format!(
                                "an entry of `{key}` is {}, not a [first, last] pair of call indices",
                                item.value.describe()
                            );
                            self.error(item.span.clone(), message, help.clone());
                            return None;
                        }
                    }
                }
                Stages::Listed(listed)
            }
            other => {
                self.error(
                    v.span.clone(),
                    format!("`{key}` is {}", other.describe()),
                    help,
                );
                return None;
            }
        };
        Some(At::new(stages, v.span.clone()))
    }

    /// An array of strings.
    fn strings(&mut self, t: &Table<'_, S>, key: &str, example: &str) -> Vec<At<String, S>> {
        let Some(v) = Self::get(t, key) else {
            return Vec::new();
        };
        let help = format!("write an array of strings such as {example}");
        let Raw::Array(items) = &v.value else {
            let message = format!("`{key}` is {}", v.value.describe());
            self.error(v.span.clone(), message, help);
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| match &item.value {
                Raw::Str(s) => Some(At::new(s.clone(), item.span.clone())),
                other => {
                    let message = format!("an entry of `{key}` is {}", other.describe());
                    self.error(item.span.clone(), message, help.clone());
                    None
                }
            })
            .collect()
    }

    /// The tables of an array of tables (`[[pool]]`), or an inline array of them.
    fn tables<'a>(&mut self, v: &'a At<Raw<S>, S>, key: &str) -> Vec<Table<'a, S>> {
        let items: Vec<&At<Raw<S>, S>> = match &v.value {
            Raw::Array(items) => items.iter().collect(),
            _ => vec![v],
        };
        let mut out = Vec::new();
        for item in items {
            match &item.value {
                Raw::Table(entries) => out.push(Table {
                    entries,
                    span: item.span.clone(),
                }),
                other => self.error(
                    item.span.clone(),
                    format!("`{key}` holds {}, not a table", other.describe()),
                    format!("write each as a `[[{key}]]` table of keys"),
                ),
            }
        }
        out
    }

    /// An error at table `t` (a `what`) if it lacks the required `key`; `add` is what to
    /// write. (A key that is there but wrong was reported where it was read.)
    fn require(&mut self, t: &Table<'_, S>, key: &str, what: &str, add: &str) {
        if Self::get(t, key).is_none() {
            self.error(
                t.span.clone(),
                format!("this {what} has no `{key}`"),
                format!("add {add}"),
            );
        }
    }
}

/// Reads a declaration's top-level table (written at `span`) into a spec, with the
/// problems found; model paths are relative to `base`.
pub fn read<S: Clone>(
    top: &Entries<S>,
    span: S,
    base: &Path,
    dialect: Dialect,
) -> (Spec<S>, Vec<Diagnostic<S>>) {
    let mut r = Reader {
        errors: Vec::new(),
        dialect,
    };
    let root = Table {
        entries: top,
        span: span.clone(),
    };
    r.known(&root, TOP_KEYS);
    let mut pools = Vec::new();
    let mut models = Vec::new();
    let mut summary = false;
    // Where the missing pools or models would go: their key, if written.
    let (mut pools_at, mut models_at) = (span.clone(), span);
    for (key, value) in top {
        match key.value.as_str() {
            "pool" => {
                pools_at = key.span.clone();
                for t in r.tables(value, "pool") {
                    let k = pools.len();
                    pools.push(pool(&mut r, &t, k));
                }
            }
            "model" => {
                models_at = key.span.clone();
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
    if pools.is_empty() {
        let help = format!("declare at least one workspace pool: {}", dialect.add_pool);
        r.error(pools_at, "no pools are declared".into(), help);
    }
    if models.is_empty() {
        let help = format!("add {}", dialect.add_model);
        r.error(models_at, "no model is declared".into(), help);
    }
    let spec = Spec {
        pools,
        models,
        summary,
        base: base.to_path_buf(),
    };
    (spec, r.errors)
}

/// The value written, or `default` shown at `span` (the entry it belongs to).
fn or<T, S: Clone>(value: Option<At<T, S>>, default: T, span: &S) -> At<T, S> {
    value.unwrap_or_else(|| At::new(default, span.clone()))
}

fn pool<S: Clone>(r: &mut Reader<S>, t: &Table<'_, S>, k: usize) -> PoolSpec<S> {
    r.known(t, POOL_KEYS);
    r.require(t, "name", r.dialect.pool, "`name = \"sram\"`");
    // Without a name, a stand-in: validation then sees every pool (and no follow-on error).
    let name = or(
        r.string(t, "name", "\"sram\""),
        format!("pool_{k}"),
        &t.span,
    );
    let kind = r
        .string(t, "kind", "\"constant\"")
        .and_then(|k| match k.value.as_str() {
            "workspace" => Some(At::new(PoolKind::Workspace, k.span)),
            "constant" => Some(At::new(PoolKind::Constant, k.span)),
            other => {
                let message = format!("unknown pool kind `{other}`");
                let help = "write kind = \"workspace\" or kind = \"constant\"".into();
                r.error(k.span.clone(), message, help);
                None
            }
        });
    let size = r.size(t, "size", true);
    let bandwidth = r.bandwidth(t, "bandwidth");
    let alignment = r.uint(t, "alignment", "16");
    let section = r.string(t, "section", "\".usmp.sram\"");
    let region = r.string(t, "region", "\"RAM\"");
    let load = r.string(t, "load", "\"FLASH\"");
    let shares = r.string(t, "shares", "\"dtcm\"");
    let targets = r.strings(t, "targets", "[\"cpu\"]");
    PoolSpec {
        kind: or(kind, PoolKind::Workspace, &name.span),
        size,
        bandwidth,
        alignment: or(alignment, DEFAULT_ALIGNMENT, &name.span),
        section: or(section, format!(".usmp.{}", name.value), &name.span),
        region,
        load,
        shares,
        targets,
        name,
    }
}

fn model<S: Clone>(r: &mut Reader<S>, t: &Table<'_, S>, k: usize) -> ModelSpec<S> {
    r.known(t, MODEL_KEYS);
    let what = r.dialect.model;
    r.require(t, "name", what, "`name = \"kws\"`");
    let add_path = format!(
        "`path = \"models/kws.tflite\"` (a .tflite or JSON model, relative to {})",
        r.dialect.file
    );
    r.require(t, "path", what, &add_path);
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
    let overlap = r.boolean(t, "overlap");
    let order = r.string(t, "order", "\"memory\"").and_then(|o| {
        crate::spec::call_order(o)
            .map_err(|d| r.errors.push(d))
            .ok()
    });
    let tflm = r.boolean(t, "tflm");
    let stages = r.stages(t, "stages");
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
        overlap: match overlap {
            Some(o) => o,
            None => At::new(kernels.as_ref().is_some_and(|k| k.value), here.clone()),
        },
        stages: match stages {
            Some(s) => s,
            None if kernels.as_ref().is_some_and(|k| k.value) => {
                At::new(Stages::Auto, here.clone())
            }
            None => At::new(Stages::Off, here.clone()),
        },
        kernels: or(kernels, false, &here),
        order: or(order, CallOrder::Written, &here),
        tflm: or(tflm, false, &here),
        name,
    }
}

fn scratch<S: Clone>(r: &mut Reader<S>, t: &Table<'_, S>) -> Option<ScratchSpec<S>> {
    r.known(t, SCRATCH_KEYS);
    let op = r.string(t, "op", "\"CONV_2D\"");
    let call = r.uint(t, "call", "3");
    let what = r.dialect.scratch;
    r.require(t, "name", what, "`name = \"im2col\"`");
    r.require(t, "size", what, &format!("`size = ` {SIZE_FORMS}"));
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
