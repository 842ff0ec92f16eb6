//! What the keys mean: the parsed tree becomes the same [`Spec`] that `usmp.toml` becomes,
//! every value keeping its token's span. All problems are collected.

use std::path::Path;

use proc_macro2::{Ident, Span};
use usmp_build::__private::{
    AlgorithmChoice, At, DEFAULT_ALIGNMENT, DEFAULT_SIZE_GRANULARITY, Diagnostic, ModelSpec,
    PoolSpec, ScratchSpec, Spec, assignment,
};
use usmp_build::usmp_core::liveness::Options;
use usmp_build::usmp_core::{Assignment, PoolKind};

use crate::ast::{Arg, Entry, Input, Named, Value};

type Errors = Vec<Diagnostic<Span>>;

const TOP_KEYS: &[&str] = &[
    "pools",
    "models",
    "model",
    "name",
    "module",
    "algorithm",
    "assignment",
    "io_in_pools",
    "size_granularity",
    "alignment",
    "scratch",
    "kernels",
];
const POOL_KEYS: &[&str] = &[
    "size",
    "alignment",
    "align",
    "section",
    "region",
    "targets",
    "bandwidth",
];
const MODEL_KEYS: &[&str] = &[
    "path",
    "algorithm",
    "assignment",
    "io_in_pools",
    "size_granularity",
    "alignment",
    "module",
    "scratch",
    "kernels",
];

fn unknown(key: &Ident, known: &[&str]) -> Diagnostic<Span> {
    Diagnostic::new(key.span(), format!("unknown key `{key}`"))
        .help(format!("the keys here are: {}", known.join(", ")))
}

/// The spec `input` declares, with defaults in place of bad values and the problems
/// found reading it (validation adds its own to those); model paths are relative to
/// `base`. Without pools or a model there is nothing to validate: only the errors.
pub fn spec(input: &Input, base: &Path) -> Result<(Spec<Span>, Errors), Errors> {
    let mut errors = Vec::new();
    let mut pools = None;
    let mut models_block: Option<(Ident, &[Named])> = None;
    let mut single: Vec<(Ident, &Value)> = Vec::new();
    for entry in &input.entries {
        match entry {
            Entry::Block(key, items) if key == "pools" => {
                if pools.is_some() {
                    errors.push(
                        Diagnostic::new(key.span(), "`pools` is declared twice")
                            .help("list every pool in one `pools { ... }`"),
                    );
                }
                pools = Some((key.clone(), items.as_slice()));
            }
            Entry::Block(key, items) if key == "models" => {
                models_block = Some((key.clone(), items.as_slice()));
            }
            Entry::Block(key, _) => errors.push(unknown(key, &["pools", "models"])),
            Entry::Pair(key, value) if TOP_KEYS[2..].contains(&key.to_string().as_str()) => {
                single.push((key.clone(), value));
            }
            Entry::Pair(key, _) => errors.push(unknown(key, TOP_KEYS)),
        }
    }

    let pools = match pools {
        Some((key, [])) => {
            errors.push(
                Diagnostic::new(key.span(), "the pool list is empty")
                    .help("declare at least one pool: `pools { sram: workspace(align = 16) }`"),
            );
            Vec::new()
        }
        Some((_, items)) => items.iter().filter_map(|p| pool(p, &mut errors)).collect(),
        None => {
            errors.push(
                Diagnostic::new(Span::call_site(), "no pools are declared")
                    .help("add `pools { sram: workspace(align = 16), flash: constant() }`"),
            );
            Vec::new()
        }
    };

    let mut models = Vec::new();
    match (models_block, single.is_empty()) {
        (Some((key, _)), false) => {
            errors.push(
                Diagnostic::new(key.span(), "both `models { ... }` and top-level model keys")
                    .help("put every model's keys inside `models { name: model(path = \"...\") }`"),
            );
        }
        (Some((key, items)), true) => {
            if items.is_empty() {
                errors.push(
                    Diagnostic::new(key.span(), "the model list is empty")
                        .help("declare a model: `models { kws: model(path = \"kws.tflite\") }`"),
                );
            }
            for m in items {
                if m.kind != "model" {
                    errors.push(
                        Diagnostic::new(
                            m.kind.span(),
                            format!("expected `model(...)`, found `{}`", m.kind),
                        )
                        .help(format!("write `{}: model(path = \"...\")`", m.name)),
                    );
                    continue;
                }
                let args: Vec<(Ident, &Value)> = keyed(&m.args, &mut errors);
                models.extend(model(
                    &m.name.to_string(),
                    m.name.span(),
                    &args,
                    &mut errors,
                ));
            }
        }
        (None, _) => {
            if let Some(path) = single.iter().find(|(k, _)| k == "model") {
                let name = match single.iter().find(|(k, _)| k == "name") {
                    Some((_, v)) => text(v, "a name", &mut errors).unwrap_or_default(),
                    None => stem(path.1).unwrap_or_else(|| "model".into()),
                };
                let args: Vec<(Ident, &Value)> = single
                    .iter()
                    .filter(|(k, _)| k != "name")
                    .map(|(k, v)| {
                        let k = if k == "model" {
                            Ident::new("path", k.span())
                        } else {
                            k.clone()
                        };
                        (k, *v)
                    })
                    .collect();
                models.extend(model(&name, path.1.span(), &args, &mut errors));
            } else {
                errors.push(
                    Diagnostic::new(Span::call_site(), "no model is declared").help(
                        "add `model = \"path/to/model.tflite\"`, or a `models { ... }` block",
                    ),
                );
            }
        }
    }

    if pools.is_empty() || models.is_empty() {
        return Err(errors);
    }
    let spec = Spec {
        pools,
        models,
        summary: false,
        base: base.to_path_buf(),
        span: Span::call_site(),
    };
    Ok((spec, errors))
}

/// Keyed arguments; a bare value is an error.
fn keyed<'a>(args: &'a [Arg], errors: &mut Errors) -> Vec<(Ident, &'a Value)> {
    let mut out = Vec::new();
    for a in args {
        match &a.key {
            Some(k) => out.push((k.clone(), &a.value)),
            None => errors.push(
                Diagnostic::new(a.value.span(), "expected `key = value`")
                    .help("name what this value is, e.g. `size = 16 KiB`"),
            ),
        }
    }
    out
}

fn stem(v: &Value) -> Option<String> {
    match v {
        Value::Str(s) => Path::new(&s.value())
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned()),
        _ => None,
    }
}

fn pool(p: &Named, errors: &mut Errors) -> Option<PoolSpec<Span>> {
    let kind = match p.kind.to_string().as_str() {
        "workspace" => PoolKind::Workspace,
        "constant" => PoolKind::Constant,
        other => {
            errors.push(
                Diagnostic::new(p.kind.span(), format!("unknown pool kind `{other}`")).help(
                    format!(
                        "write `{}: workspace(...)` or `{}: constant(...)`",
                        p.name, p.name
                    ),
                ),
            );
            // Read on as a workspace, so that validation finds what else is wrong
            // without a follow-on error for the pool that went missing.
            PoolKind::Workspace
        }
    };
    let name = At::new(p.name.to_string(), p.name.span());
    let mut spec = PoolSpec {
        kind: At::new(kind, p.kind.span()),
        size: None,
        bandwidth: None,
        alignment: At::new(DEFAULT_ALIGNMENT, p.name.span()),
        section: At::new(format!(".usmp.{}", name.value), p.name.span()),
        region: None,
        targets: Vec::new(),
        name,
    };
    for (key, value) in keyed(&p.args, errors) {
        match key.to_string().as_str() {
            "size" => spec.size = size(value, errors),
            // `alignment` as in usmp.toml; `align` is its short form.
            "alignment" | "align" => spec.alignment = size(value, errors).unwrap_or(spec.alignment),
            "section" => {
                if let Some(s) = text(value, "a section name", errors) {
                    spec.section = At::new(s, value.span());
                }
            }
            "region" => {
                if let Some(r) = text(value, "a memory region", errors) {
                    spec.region = Some(At::new(r, value.span()));
                }
            }
            "targets" => spec.targets = strings(value, errors),
            "bandwidth" => spec.bandwidth = bandwidth(value, errors),
            _ => errors.push(unknown(&key, POOL_KEYS)),
        }
    }
    Some(spec)
}

fn model(
    name: &str,
    span: Span,
    args: &[(Ident, &Value)],
    errors: &mut Errors,
) -> Option<ModelSpec<Span>> {
    let here = |v| At::new(v, span);
    let mut path = None;
    let mut m = ModelSpec {
        name: here(name.to_string()),
        path: here(String::new()),
        algorithm: At::new(AlgorithmChoice::default(), span),
        assignment: At::new(Assignment::default(), span),
        io_in_pools: At::new(Options::default().io_in_pools, span),
        size_granularity: At::new(DEFAULT_SIZE_GRANULARITY, span),
        alignment: At::new(DEFAULT_ALIGNMENT, span),
        scratch: Vec::new(),
        module: At::new(name.to_string(), span),
        kernels: At::new(false, span),
        tflm: At::new(false, span),
    };
    for (key, value) in args {
        let s = value.span();
        match key.to_string().as_str() {
            "path" => path = text(value, "the model file's path", errors).map(|p| At::new(p, s)),
            "algorithm" => {
                if let Some(a) = text(value, "an algorithm name", errors) {
                    m.algorithm = At::new(AlgorithmChoice::from_name(&a), s);
                }
            }
            "assignment" => {
                let expected = "`\"preference\"`, `\"smallest_total\"` or `\"fastest\"`";
                if let Some(a) = text(value, expected, errors) {
                    match assignment(At::new(a, s)) {
                        Ok(a) => m.assignment = a,
                        Err(d) => errors.push(d),
                    }
                }
            }
            "io_in_pools" => match value {
                Value::Bool(b) => m.io_in_pools = At::new(b.value, s),
                _ => errors.push(Diagnostic::new(s, "expected `true` or `false`")),
            },
            "kernels" => match value {
                Value::Bool(b) => m.kernels = At::new(b.value, s),
                _ => errors.push(
                    Diagnostic::new(s, "expected `true` or `false`")
                        .help("`kernels = true` emits `KERNELS` and `invoke` (usmp-kernels)"),
                ),
            },
            "size_granularity" => {
                m.size_granularity = size(value, errors).unwrap_or(m.size_granularity)
            }
            "alignment" => m.alignment = size(value, errors).unwrap_or(m.alignment),
            "module" => {
                if let Some(t) = text(value, "a module name", errors) {
                    m.module = At::new(t, s);
                }
            }
            "scratch" => m.scratch = scratch(value, errors),
            _ => errors.push(unknown(key, MODEL_KEYS)),
        }
    }
    match path {
        Some(p) => m.path = p,
        None => {
            errors.push(
                Diagnostic::new(span, format!("model `{name}` has no path"))
                    .help("add `path = \"model.tflite\"` (relative to this source file)"),
            );
            return None;
        }
    }
    Some(m)
}

/// `[op("CONV_2D", im2col = 4 KiB, align = 32), call(3, acc = 512)]`
fn scratch(value: &Value, errors: &mut Errors) -> Vec<ScratchSpec<Span>> {
    let help =
        "write `scratch = [op(\"CONV_2D\", im2col = 4 KiB)]` or `[call(3, acc = 512, align = 32)]`";
    let Value::List(_, items) = value else {
        errors.push(Diagnostic::new(value.span(), "expected a list of scratch rules").help(help));
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items {
        let Value::Call(selector, args) = item else {
            errors
                .push(Diagnostic::new(item.span(), "expected `op(...)` or `call(...)`").help(help));
            continue;
        };
        let (mut op, mut call, mut name, mut size_, mut align) = (None, None, None, None, None);
        for a in args {
            match (&a.key, selector.to_string().as_str()) {
                (None, "op") if op.is_none() => {
                    op = text(&a.value, "an operator name", errors)
                        .map(|t| At::new(t, a.value.span()))
                }
                (None, "call") if call.is_none() => call = size(&a.value, errors),
                (Some(k), _) if k == "align" => align = size(&a.value, errors),
                (Some(k), _) if name.is_none() => {
                    name = Some(At::new(k.to_string(), k.span()));
                    size_ = size(&a.value, errors);
                }
                _ => errors.push(
                    Diagnostic::new(a.value.span(), "unexpected argument in a scratch rule")
                        .help(help),
                ),
            }
        }
        if selector != "op" && selector != "call" {
            errors.push(
                Diagnostic::new(
                    selector.span(),
                    format!("unknown scratch selector `{selector}`"),
                )
                .help(help),
            );
            continue;
        }
        match (name, size_) {
            (Some(name), Some(size)) => out.push(ScratchSpec {
                op,
                call,
                name,
                size,
                alignment: align,
                span: selector.span(),
            }),
            _ => errors.push(
                Diagnostic::new(selector.span(), "a scratch rule needs `name = size`").help(help),
            ),
        }
    }
    out
}

fn text(v: &Value, what: &str, errors: &mut Errors) -> Option<String> {
    match v {
        Value::Str(s) => Some(s.value()),
        Value::Ident(i) => Some(i.to_string()),
        _ => {
            errors.push(Diagnostic::new(
                v.span(),
                format!("expected {what} in quotes"),
            ));
            None
        }
    }
}

fn strings(v: &Value, errors: &mut Errors) -> Vec<At<String, Span>> {
    match v {
        Value::List(_, items) => items
            .iter()
            .filter_map(|i| text(i, "a target name", errors).map(|t| At::new(t, i.span())))
            .collect(),
        _ => {
            errors.push(Diagnostic::new(
                v.span(),
                "expected a list such as [\"cpu\", \"npu\"]",
            ));
            Vec::new()
        }
    }
}

/// A number of bytes: `4096`, `16 KiB`, `"16 KiB"`.
fn size(v: &Value, errors: &mut Errors) -> Option<At<u64, Span>> {
    let parsed = match v {
        Value::Int(lit, unit) => match lit.base10_parse::<u64>() {
            Err(_) => Err(format!("`{}` does not fit in 64 bits", lit.base10_digits())),
            Ok(n) => match unit {
                None => Ok(n),
                Some(u) => usmp_build::__private::parse_size(&format!("{n} {u}")),
            },
        },
        Value::Str(s) => usmp_build::__private::parse_size(&s.value()),
        _ => Err("expected a number of bytes, e.g. 4096 or 16 KiB".into()),
    };
    match parsed {
        Ok(n) => Some(At::new(n, v.span())),
        Err(e) => {
            errors.push(Diagnostic::new(v.span(), e));
            None
        }
    }
}

/// A bandwidth, as a string (`"8 GB/s"`) or bytes per second.
fn bandwidth(v: &Value, errors: &mut Errors) -> Option<At<u64, Span>> {
    let forms = usmp_build::usmp_core::input::BANDWIDTH_FORMS;
    let parsed = match v {
        Value::Int(lit, None) => match lit.base10_parse::<u64>() {
            Ok(0) | Err(_) => Err(format!("expected {forms}")),
            Ok(n) => Ok(n),
        },
        Value::Str(s) => usmp_build::usmp_core::input::parse_bandwidth(&s.value()),
        _ => Err(format!("expected {forms}")),
    };
    match parsed {
        Ok(n) => Some(At::new(n, v.span())),
        Err(e) => {
            errors.push(Diagnostic::new(v.span(), e));
            None
        }
    }
}

#[cfg(test)]
mod tests;
