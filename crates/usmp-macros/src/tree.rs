//! The macro's entries as the tree `usmp.toml` makes: `pools { dtcm: workspace(...) }`
//! becomes `[[pool]] name = "dtcm", kind = "workspace", ...`, `models { ... }` and the
//! top-level one-model keys become `[[model]]` tables, `scratch = [op(...)]` becomes scratch
//! tables. Only the macro's own structure is checked here; what the keys mean, their
//! defaults and every mistake in their values are usmp-build's one reader's
//! ([`read`]), so both front ends accept the same keys and say the same things about them.

use std::path::Path;

use proc_macro2::{Ident, Span};
use usmp_build::__private::{At, Diagnostic, Dialect, Entries, Raw, Spec, read};

use crate::ast::{Arg, Entry, Input, Named, Value};

type Errors = Vec<Diagnostic<Span>>;
type Node = At<Raw<Span>, Span>;

/// How messages name the macro's tables.
const MACRO: Dialect = Dialect {
    pool: "pool",
    model: "model",
    scratch: "scratch rule",
    file: "this source file",
    unlisted: &["name", "kind", "tflm"],
    add_pool: "`pools { sram: workspace(align = 16) }`",
    add_model: "`model = \"path/to/model.tflite\"`, or a `models { ... }` block",
};

const SCRATCH_HELP: &str =
    "write `scratch = [op(\"CONV_2D\", im2col = 4 KiB)]` or `[call(3, acc = 512, align = 32)]`";

/// The spec `input` declares, with defaults in place of bad values, and every problem
/// found reading it (validation adds its own); model paths are relative to `base`.
pub fn spec(input: &Input, base: &Path) -> (Spec<Span>, Errors) {
    let mut errors = Vec::new();
    let top = tree(input, &mut errors);
    let (spec, more) = read(&top, Span::call_site(), base, MACRO);
    errors.extend(more);
    (spec, errors)
}

/// The top-level table.
fn tree(input: &Input, errors: &mut Errors) -> Entries<Span> {
    let mut pools: Option<(&Ident, Vec<Node>)> = None;
    let mut models: Option<(&Ident, Vec<Node>)> = None;
    let mut single: Entries<Span> = Vec::new();
    for entry in &input.entries {
        match entry {
            Entry::Block(key, items) if key == "pools" => {
                if pools.is_some() {
                    errors.push(
                        Diagnostic::new(key.span(), "`pools` is declared twice")
                            .help("list every pool in one `pools { ... }`"),
                    );
                    continue;
                }
                let tables = items.iter().map(|p| pool(p, errors)).collect();
                pools = Some((key, tables));
            }
            Entry::Block(key, items) if key == "models" => {
                let tables = items.iter().filter_map(|m| model(m, errors)).collect();
                models = Some((key, tables));
            }
            Entry::Block(key, _) => errors.push(
                Diagnostic::new(key.span(), format!("unknown block `{key}`"))
                    .help("the blocks are `pools { ... }` and `models { ... }`"),
            ),
            Entry::Pair(key, value) => {
                // `model = "kws.tflite"` is the one model's path.
                if let Some(pair) = model_key(key, spelled(key, "model", "path"), value, errors) {
                    single.push(pair);
                }
            }
        }
    }
    let mut top = Vec::new();
    if let Some((key, tables)) = pools {
        top.push(entry(key, "pool", Raw::Array(tables)));
    }
    match (models, !single.is_empty()) {
        (Some((key, tables)), single_too) => {
            if single_too {
                errors.push(
                    Diagnostic::new(key.span(), "both `models { ... }` and top-level model keys")
                        .help("put every model's keys inside `models { name: model(path = \"...\") }`"),
                );
            }
            top.push(entry(key, "model", Raw::Array(tables)));
        }
        (None, true) => {
            if !single.iter().any(|(k, _)| k.value == "name") {
                // Without a `name`, named after its file (`kws.tflite`: `kws`).
                let stem = single
                    .iter()
                    .find(|(k, _)| k.value == "path")
                    .and_then(stem);
                let (name, span) = stem.unwrap_or_else(|| ("model".into(), Span::call_site()));
                single.insert(
                    0,
                    (At::new("name".into(), span), At::new(Raw::Str(name), span)),
                );
            }
            let span = single[0].0.span;
            let one = At::new(Raw::Table(single), span);
            top.push((At::new("model".into(), span), one));
        }
        (None, false) => {}
    }
    top
}

/// `key` holding `value`, both at `key`'s span.
fn entry(key: &Ident, name: &str, value: Raw<Span>) -> (At<String, Span>, Node) {
    (At::new(name.into(), key.span()), At::new(value, key.span()))
}

/// The file stem of a path value, at its span.
fn stem((_, v): &(At<String, Span>, Node)) -> Option<(String, Span)> {
    let Raw::Str(path) = &v.value else {
        return None;
    };
    let stem = Path::new(path).file_stem()?;
    Some((stem.to_string_lossy().into_owned(), v.span))
}

/// `name: workspace(args)` as a pool table.
fn pool(p: &Named, errors: &mut Errors) -> Node {
    let kind = p.kind.to_string();
    let kind = if kind == "workspace" || kind == "constant" {
        kind
    } else {
        errors.push(
            Diagnostic::new(p.kind.span(), format!("unknown pool kind `{kind}`")).help(format!(
                "write `{}: workspace(...)` or `{}: constant(...)`",
                p.name, p.name
            )),
        );
        // Read on as a workspace, so that validation finds what else is wrong without
        // a follow-on error for the pool that went missing.
        "workspace".into()
    };
    let mut table = vec![
        name_entry(&p.name),
        (
            At::new("kind".into(), p.kind.span()),
            At::new(Raw::Str(kind), p.kind.span()),
        ),
    ];
    for (key, value) in keyed(&p.args, errors) {
        if key == "name" || key == "kind" {
            errors.push(
                Diagnostic::new(key.span(), format!("a pool's {key} is not an argument")).help(
                    format!(
                        "write `{}: workspace(...)` or `{}: constant(...)`",
                        p.name, p.name
                    ),
                ),
            );
            continue;
        }
        // `align` is the short form of usmp.toml's `alignment`.
        table.extend(pair(key, spelled(key, "align", "alignment"), value, errors));
    }
    At::new(Raw::Table(table), p.name.span())
}

/// `name: model(args)` as a model table.
fn model(m: &Named, errors: &mut Errors) -> Option<Node> {
    if m.kind != "model" {
        errors.push(
            Diagnostic::new(
                m.kind.span(),
                format!("expected `model(...)`, found `{}`", m.kind),
            )
            .help(format!("write `{}: model(path = \"...\")`", m.name)),
        );
        return None;
    }
    let mut table = vec![name_entry(&m.name)];
    for (key, value) in keyed(&m.args, errors) {
        table.extend(model_key(key, key.to_string(), value, errors));
    }
    Some(At::new(Raw::Table(table), m.name.span()))
}

/// `name` holding the entry's name.
fn name_entry(name: &Ident) -> (At<String, Span>, Node) {
    (
        At::new("name".into(), name.span()),
        At::new(Raw::Str(name.to_string()), name.span()),
    )
}

/// The usmp.toml name of `key`: `long` where the macro spells it `short`, else the key.
fn spelled(key: &Ident, short: &str, long: &str) -> String {
    if key == short {
        long.into()
    } else {
        key.to_string()
    }
}

/// One of a model's keys, under usmp.toml's `name` for it; `scratch` holds rules.
fn model_key(
    key: &Ident,
    name: String,
    value: &Value,
    errors: &mut Errors,
) -> Option<(At<String, Span>, Node)> {
    if key == "tflm" {
        errors.push(
            Diagnostic::new(key.span(), "`tflm` is not available in usmp_pools!").help(
                "`tflm = true` writes a .tflite copy holding TensorFlow Lite Micro's plan, a file \
                 only a build script writes: declare this model in usmp.toml for usmp-build",
            ),
        );
        return None;
    }
    if key == "scratch" {
        let rules = scratch(value, errors);
        return Some((
            At::new("scratch".into(), key.span()),
            At::new(Raw::Array(rules), value.span()),
        ));
    }
    pair(key, name, value, errors)
}

/// `key = value` as a table entry named `name`, at the key.
fn pair(
    key: &Ident,
    name: String,
    value: &Value,
    errors: &mut Errors,
) -> Option<(At<String, Span>, Node)> {
    Some((At::new(name, key.span()), raw(value, errors)?))
}

/// Keyed arguments; a bare value is an error.
fn keyed<'a>(args: &'a [Arg], errors: &mut Errors) -> Vec<(&'a Ident, &'a Value)> {
    let mut out = Vec::new();
    for a in args {
        match &a.key {
            Some(k) => out.push((k, &a.value)),
            None => errors.push(
                Diagnostic::new(a.value.span(), "expected `key = value`")
                    .help("name what this value is, e.g. `size = 16 KiB`"),
            ),
        }
    }
    out
}

/// A value as the tree holds it: names and numbers with a unit (`16 KiB`) as strings.
fn raw(v: &Value, errors: &mut Errors) -> Option<Node> {
    let value = match v {
        Value::Str(s) => Raw::Str(s.value()),
        Value::Bool(b) => Raw::Bool(b.value),
        Value::Int(lit, None) => match lit.base10_parse::<i64>() {
            Ok(n) => Raw::Int(n),
            Err(_) => {
                let message = format!("`{}` does not fit in 64 bits", lit.base10_digits());
                errors.push(Diagnostic::new(v.span(), message));
                return None;
            }
        },
        Value::Int(lit, Some(unit)) => Raw::Str(format!("{} {unit}", lit.base10_digits())),
        Value::Ident(i) => Raw::Str(i.to_string()),
        Value::List(_, items) => Raw::Array(items.iter().filter_map(|i| raw(i, errors)).collect()),
        Value::Call(name, _) => {
            errors.push(
                Diagnostic::new(name.span(), format!("`{name}(...)` is not a value here"))
                    .help("write a string, a number (4096 or 16 KiB), true/false, or [ ... ]"),
            );
            return None;
        }
    };
    Some(At::new(value, v.span()))
}

/// `[op("CONV_2D", im2col = 4 KiB, align = 32), call(3, acc = 512)]` as scratch tables.
fn scratch(value: &Value, errors: &mut Errors) -> Vec<Node> {
    let Value::List(_, items) = value else {
        errors.push(
            Diagnostic::new(value.span(), "expected a list of scratch rules").help(SCRATCH_HELP),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items {
        let Value::Call(selector, args) = item else {
            let message = "expected `op(...)` or `call(...)`";
            errors.push(Diagnostic::new(item.span(), message).help(SCRATCH_HELP));
            continue;
        };
        if selector != "op" && selector != "call" {
            let message = format!("unknown scratch selector `{selector}`");
            errors.push(Diagnostic::new(selector.span(), message).help(SCRATCH_HELP));
            continue;
        }
        out.extend(rule(selector, args, errors));
    }
    out
}

/// `op("CONV_2D", im2col = 4 KiB, align = 32)`: the selector's value first, then the
/// buffer's `name = size`, and `align`.
fn rule(selector: &Ident, args: &[Arg], errors: &mut Errors) -> Option<Node> {
    let mut table: Entries<Span> = Vec::new();
    let mut push = |key: &str, span: Span, value: Raw<Span>, at: Span| {
        table.push((At::new(key.into(), span), At::new(value, at)));
    };
    let mut named = false;
    for (k, a) in args.iter().enumerate() {
        let Some(value) = raw(&a.value, errors) else {
            continue;
        };
        match &a.key {
            None if k == 0 => push(
                &selector.to_string(),
                selector.span(),
                value.value,
                value.span,
            ),
            Some(key) if key == "align" => push("alignment", key.span(), value.value, value.span),
            Some(key) if !named => {
                named = true;
                push("name", key.span(), Raw::Str(key.to_string()), key.span());
                push("size", key.span(), value.value, value.span);
            }
            _ => {
                let message = "unexpected argument in a scratch rule";
                errors.push(Diagnostic::new(a.value.span(), message).help(SCRATCH_HELP));
            }
        }
    }
    if !named {
        let message = "a scratch rule needs `name = size`";
        errors.push(Diagnostic::new(selector.span(), message).help(SCRATCH_HELP));
        return None;
    }
    Some(At::new(Raw::Table(table), selector.span()))
}

#[cfg(test)]
mod tests;
