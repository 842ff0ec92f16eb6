//! Checks a spec on its own, before any model is read: every problem found, not only the
//! first, each at the token that caused it.

use std::collections::BTreeSet;

use usmp_core::PoolKind;
use usmp_core::{Assignment, Named};

use crate::choice::{AlgorithmChoice, OwnAlgorithms};

use crate::ident::check_name;
use crate::spec::{
    At, Diagnostic, MAX_ALIGNMENT, ModelSpec, PoolSpec, Spec, Stages, image_section,
};

/// Every problem in `spec` that can be seen without reading the models.
pub fn validate<S: Clone>(spec: &Spec<S>, own: &OwnAlgorithms) -> Vec<Diagnostic<S>> {
    let mut out = Vec::new();
    presence(spec, &mut out);
    pools(spec, &mut out);
    // (A set, not a scan per pool: a file may declare very many pools.)
    let pool_names: BTreeSet<&str> = spec.pools.iter().map(|p| p.name.value.as_str()).collect();
    size_constants(spec, &pool_names, &mut out);
    shares(spec, &mut out);
    let mut names = BTreeSet::new();
    let mut modules = BTreeSet::new();
    for model in &spec.models {
        if model.name.value.is_empty() {
            out.push(Diagnostic::new(
                model.name.span.clone(),
                "a model needs a non-empty name",
            ));
        } else if !names.insert(model.name.value.clone()) {
            out.push(
                Diagnostic::new(
                    model.name.span.clone(),
                    format!("model `{}` is declared twice", model.name.value),
                )
                .help("give each model its own name"),
            );
        }
        name(&model.module, "module", &mut modules, &mut out);
        if pool_names.contains(model.module.value.as_str()) {
            out.push(
                Diagnostic::new(
                    model.module.span.clone(),
                    format!(
                        "module `{}` has the name of a pool; the generated names would clash",
                        model.module.value
                    ),
                )
                .help("rename the module or the pool"),
            );
        }
        if model.path.value.trim().is_empty() {
            out.push(
                Diagnostic::new(model.path.span.clone(), "the model path is empty")
                    .help("write the path of a .tflite or JSON model file"),
            );
        }
        choices(spec, model, own, &mut out);
        if model.kernels.value && !model.io_in_pools.value {
            // invoke() reads the inputs and writes the outputs in the pools: without them
            // every call would fail with MissingOperand.
            out.push(
                Diagnostic::new(
                    model.io_in_pools.span.clone(),
                    "`io_in_pools = false` leaves the model's inputs and outputs out of the pools, but `kernels = true` runs the model there",
                )
                .help("leave `io_in_pools` out (it is true by default) to run the model with invoke(), or set `kernels = false` to run your own kernels"),
            );
        }
        only_with_kernels(model, &mut out);
        alignment(&model.alignment, "alignment", &mut out);
        power_of_two(&model.size_granularity, "size granularity", &mut out);
        scratch_rules(model, &mut out);
    }
    out
}

/// `overlap` and `stages` are promises of usmp-kernels: refused for a model run otherwise.
fn only_with_kernels<S: Clone>(model: &ModelSpec<S>, out: &mut Vec<Diagnostic<S>>) {
    if model.overlap.value && !model.kernels.value {
        // Only usmp's kernels are known to read each input byte before they write an
        // output byte over it.
        out.push(
            Diagnostic::new(
                model.overlap.span.clone(),
                "`overlap = true` lets outputs overwrite inputs within the windows usmp-kernels certifies, but this model does not run on usmp-kernels",
            )
            .help("add `kernels = true` to run it on usmp-kernels, or leave `overlap` out: other kernels may read an input byte after writing over it"),
        );
    }
    if model.stages.value != Stages::Off && !model.kernels.value {
        out.push(
            Diagnostic::new(
                model.stages.span.clone(),
                "streamed stages run on usmp-kernels' stage kernel, but this model does not run on usmp-kernels",
            )
            .help("add `kernels = true`, or leave `stages` out (it is off without kernels)"),
        );
    }
}

/// At least one workspace pool (that there is a pool and a model at all, the reader
/// checked).
fn presence<S: Clone>(spec: &Spec<S>, out: &mut Vec<Diagnostic<S>>) {
    if let Some(first) = spec.pools.first()
        && !spec
            .pools
            .iter()
            .any(|p| p.kind.value == PoolKind::Workspace)
    {
        out.push(
            Diagnostic::new(first.name.span.clone(), "every pool is a constant pool")
                .help("declare a workspace pool for the activations and scratch"),
        );
    }
}

/// Each pool on its own: names, sections, alignment, size, region and targets.
fn pools<S: Clone>(spec: &Spec<S>, out: &mut Vec<Diagnostic<S>>) {
    let mut seen = BTreeSet::new();
    let mut sections: BTreeSet<String> = BTreeSet::new();
    for pool in &spec.pools {
        // A pool declared twice has its default section twice too: one error is enough.
        let twice = seen.contains(&pool.name.value);
        name(&pool.name, "pool", &mut seen, out);
        if !sections.insert(pool.section.value.clone()) && !twice {
            // Two statics in one section: the linker would lay them end to end, and the
            // fragment could not place or size either pool.
            out.push(
                Diagnostic::new(
                    pool.section.span.clone(),
                    format!(
                        "pool `{}` uses section `{}`, which an earlier pool uses too",
                        pool.name.value, pool.section.value
                    ),
                )
                .help(format!(
                    "give each pool a section of its own, or leave `section` out for \".usmp.{}\"",
                    pool.name.value
                )),
            );
        }
        alignment(&pool.alignment, "pool alignment", out);
        if let Some(size) = &pool.size
            && size.value == 0
        {
            out.push(
                Diagnostic::new(size.span.clone(), "a pool size of 0 bytes holds nothing")
                    .help("give the pool's limit in bytes, or leave `size` out for no limit"),
            );
        }
        section(&pool.section, out);
        if let Some(region) = &pool.region
            && !is_symbol(&region.value)
        {
            out.push(
                Diagnostic::new(
                    region.span.clone(),
                    format!("`{}` is not a linker memory region name", region.value),
                )
                .help("write the name of a region of memory.x's MEMORY block, e.g. \"RAM\""),
            );
        }
        if let Some(load) = &pool.load {
            load_region(pool, load, out);
            let image = image_section(&pool.section.value);
            if !sections.insert(image.clone()) {
                out.push(
                    Diagnostic::new(
                        pool.section.span.clone(),
                        format!(
                            "pool `{}` keeps its images in section `{image}`, which an earlier pool uses too",
                            pool.name.value
                        ),
                    )
                    .help("give the pools sections whose names do not differ only by `.image`"),
                );
            }
        }
        for t in &pool.targets {
            if t.value.is_empty() {
                out.push(
                    Diagnostic::new(t.span.clone(), "an empty target name")
                        .help("write a target such as \"cpu\", or leave `targets` out"),
                );
            }
        }
    }
}

/// A pool's `load`: only a constant pool run from a `region` of its own has one.
fn load_region<S: Clone>(pool: &PoolSpec<S>, load: &At<String, S>, out: &mut Vec<Diagnostic<S>>) {
    let name = &pool.name.value;
    let problem = if pool.kind.value == PoolKind::Workspace {
        Some((
            format!(
                "workspace pool `{name}` has a `load` region, but only constants have an image to copy"
            ),
            "remove `load`, or make it a constant pool (kind = \"constant\") run from RAM"
                .to_string(),
        ))
    } else if !is_symbol(&load.value) {
        Some((
            format!("`{}` is not a linker memory region name", load.value),
            "write the region of memory.x the image is stored in, e.g. \"FLASH\"".to_string(),
        ))
    } else {
        match &pool.region {
            None => Some((
                format!("constant pool `{name}` has a `load` region but no `region` to run from"),
                format!(
                    "add region = \"DTCM\" (the RAM its weights are copied into when the workspace is taken), or remove `load` to read them in {}",
                    load.value
                ),
            )),
            Some(region) if region.value == load.value => Some((
                format!(
                    "constant pool `{name}` would be copied from region `{}` into the same region",
                    load.value
                ),
                "make `region` the RAM it runs from and `load` the flash its image is stored in, or remove `load` to read it in place".to_string(),
            )),
            Some(_) => None,
        }
    };
    if let Some((message, help)) = problem {
        out.push(Diagnostic::new(load.span.clone(), message).help(help));
    }
}

/// Each `shares`: a constant pool naming a workspace pool of a `size` (its limit is what
/// the two split), in the same region, shared with no other constant pool.
fn shares<S: Clone>(spec: &Spec<S>, out: &mut Vec<Diagnostic<S>>) {
    let mut taken = BTreeSet::new();
    for pool in &spec.pools {
        let Some(shares) = &pool.shares else { continue };
        let name = &pool.name.value;
        let target = spec.pools.iter().find(|p| p.name.value == shares.value);
        let problem = match target {
            _ if pool.kind.value == PoolKind::Workspace => Some((
                format!(
                    "workspace pool `{name}` shares another pool's size, but only a constant pool can"
                ),
                "put `shares` on the constant pool whose weights take room in this one".to_string(),
            )),
            None => Some((
                format!(
                    "`shares` names pool `{}`, which is not declared",
                    shares.value
                ),
                "name a workspace pool with a `size`, e.g. shares = \"dtcm\"".to_string(),
            )),
            Some(t) if t.kind.value != PoolKind::Workspace => Some((
                format!(
                    "`shares` names constant pool `{}`: only a workspace pool's size can be shared",
                    shares.value
                ),
                "name the workspace pool in the same memory, e.g. shares = \"dtcm\"".to_string(),
            )),
            Some(t) if t.size.is_none() => Some((
                format!(
                    "`shares` names workspace pool `{}`, which has no `size` to share",
                    shares.value
                ),
                format!(
                    "give pool `{}` a size: what the activations and the weights of `{name}` have together",
                    shares.value
                ),
            )),
            Some(t)
                if t.region.as_ref().map(|r| &r.value)
                    != pool.region.as_ref().map(|r| &r.value) =>
            {
                Some((
                    format!(
                        "constant pool `{name}` shares the size of pool `{}`, but the two are not in the same region",
                        shares.value
                    ),
                    format!(
                        "give both the same `region` (the memory they split), or remove `shares` and give `{name}` a `size` of its own"
                    ),
                ))
            }
            Some(_) if !taken.insert(shares.value.as_str()) => Some((
                format!(
                    "pool `{}` is already shared by another constant pool",
                    shares.value
                ),
                "let one constant pool share it; give the others a `size` of their own".to_string(),
            )),
            Some(_) => None,
        };
        if let Some((message, help)) = problem {
            out.push(Diagnostic::new(shares.span.clone(), message).help(help));
        }
    }
}

/// Each pool generates `NAME` and `NAME_SIZE`: pools `sram` and `sram_size` would both
/// define `SRAM_SIZE`, and rustc would refuse the generated module (E0428).
fn size_constants<S: Clone>(
    spec: &Spec<S>,
    pool_names: &BTreeSet<&str>,
    out: &mut Vec<Diagnostic<S>>,
) {
    for pool in &spec.pools {
        if let Some(stem) = pool.name.value.strip_suffix("_size")
            && pool_names.contains(stem)
        {
            out.push(
                Diagnostic::new(
                    pool.name.span.clone(),
                    format!(
                        "pools `{stem}` and `{}` would both generate the constant `{}`",
                        pool.name.value,
                        pool.name.value.to_ascii_uppercase()
                    ),
                )
                .help(format!(
                    "rename pool `{}`, e.g. to `{stem}_pool`: no pool may be named another's name plus `_size`",
                    pool.name.value
                )),
            );
        }
    }
}

/// A model's algorithm (built in or registered) and its pool assignment.
fn choices<S: Clone>(
    spec: &Spec<S>,
    model: &ModelSpec<S>,
    own: &OwnAlgorithms,
    out: &mut Vec<Diagnostic<S>>,
) {
    if let AlgorithmChoice::Own(name) = &model.algorithm.value
        && !own.contains(name)
    {
        let registered: Vec<&str> = own.names().collect();
        let also = if registered.is_empty() {
            String::new()
        } else {
            format!(", or this build's own: {}", registered.join(", "))
        };
        out.push(
            Diagnostic::new(
                model.algorithm.span.clone(),
                format!("unknown algorithm `{name}`"),
            )
            .help(format!("write one of: {}{also}", Named::names())),
        );
    }
    let searching = model.algorithm.value.searches();
    match model.assignment.value {
        Assignment::Preference => {}
        Assignment::Fastest if searching && spec.pools.iter().all(|p| p.bandwidth.is_none()) => out
            .push(
                Diagnostic::new(
                    model.assignment.span.clone(),
                    "`assignment = \"fastest\"` needs the pools' speeds, and no pool states one",
                )
                .help("give the pools a `bandwidth`, e.g. bandwidth = \"8 GB/s\" for DTCM"),
            ),
        _ if searching => {}
        _ => out.push(
            Diagnostic::new(
                model.assignment.span.clone(),
                format!(
                    "`assignment` applies to the algorithms exact and auto, not `{}`",
                    model.algorithm.value
                ),
            )
            .help("leave `assignment` out, or write algorithm = \"auto\""),
        ),
    }
}

/// A model's scratch rules: each selects calls one way, with a size and an alignment.
fn scratch_rules<S: Clone>(model: &ModelSpec<S>, out: &mut Vec<Diagnostic<S>>) {
    for rule in &model.scratch {
        match (&rule.op, &rule.call) {
            (Some(_), Some(call)) => out.push(
                Diagnostic::new(call.span.clone(), "a scratch rule has both `op` and `call`")
                    .help("select calls either by operator (`op`) or by position (`call`)"),
            ),
            (None, None) => out.push(
                Diagnostic::new(rule.span.clone(), "a scratch rule selects no call")
                    .help("add `op = \"CONV_2D\"` or `call = 3`"),
            ),
            _ => {}
        }
        if rule.size.value == 0 {
            out.push(
                Diagnostic::new(rule.size.span.clone(), "a scratch size of 0 bytes")
                    .help("give the scratch's size in bytes, or remove the rule"),
            );
        }
        if let Some(a) = &rule.alignment {
            alignment(a, "scratch alignment", out);
        }
    }
}

fn name<S: Clone>(
    name: &At<String, S>,
    what: &str,
    seen: &mut BTreeSet<String>,
    out: &mut Vec<Diagnostic<S>>,
) {
    if let Err(e) = check_name(&name.value) {
        let mut d = Diagnostic::new(name.span.clone(), format!("bad {what} name: {e}"));
        if what == "module" {
            // Usually not written at all: the model's name (usmp_pools!'s `model = ...`:
            // the file's) was taken for it.
            d = d.help(format!(
                "the generated module is named after the model unless the model says `module = \"...\"`: add module = \"{}\"",
                crate::ident::snake_suggestion(&name.value)
            ));
        }
        out.push(d);
    } else if !seen.insert(name.value.clone()) {
        out.push(
            Diagnostic::new(
                name.span.clone(),
                format!("{what} `{}` is declared twice", name.value),
            )
            .help(format!("give each {what} its own name")),
        );
    }
}

fn power_of_two<S: Clone>(value: &At<u64, S>, what: &str, out: &mut Vec<Diagnostic<S>>) {
    if !value.value.is_power_of_two() {
        let v = value.value;
        let up = v.checked_next_power_of_two().unwrap_or(1 << 63);
        out.push(
            Diagnostic::new(
                value.span.clone(),
                format!("{what} {v} is not a power of two"),
            )
            .help(format!("write a power of two such as {up}")),
        );
    }
}

/// A power of two no larger than a Rust static's alignment can be.
fn alignment<S: Clone>(value: &At<u64, S>, what: &str, out: &mut Vec<Diagnostic<S>>) {
    if !value.value.is_power_of_two() {
        power_of_two(value, what, out);
    } else if value.value > MAX_ALIGNMENT {
        out.push(
            Diagnostic::new(
                value.span.clone(),
                format!(
                    "{what} {} is larger than {MAX_ALIGNMENT} (2^29), the largest alignment a Rust static can have",
                    value.value
                ),
            )
            .help(format!("write {MAX_ALIGNMENT} or less")),
        );
    }
}

fn section<S: Clone>(section: &At<String, S>, out: &mut Vec<Diagnostic<S>>) {
    let s = &section.value;
    if s.is_empty() || s.chars().any(|c| c.is_whitespace() || c == '"' || c == ',') {
        out.push(
            Diagnostic::new(section.span.clone(), format!("`{s}` is not a section name"))
                .help("write a name such as \".usmp.sram\""),
        );
        return;
    }
    // cortex-m-rt's link.x gathers these into its own sections before usmp.x sees them.
    for taken in [".bss", ".data", ".uninit", ".text", ".rodata"] {
        if s == taken || s.starts_with(&format!("{taken}.")) {
            out.push(
                Diagnostic::new(
                    section.span.clone(),
                    format!("section `{s}` would be captured by the runtime's `{taken}` rules"),
                )
                .help("use a name of its own, such as \".usmp.<pool>\""),
            );
        }
    }
}

/// A linker script symbol: letters, digits, `_`, `.`, not starting with a digit.
fn is_symbol(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}
