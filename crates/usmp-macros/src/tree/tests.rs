use std::path::Path;

use quote::quote;
use usmp_build::__private::Spec;
use usmp_build::usmp_core::PoolKind;

use super::spec;
use crate::ast::Input;

/// The spec, which must have been read without a problem.
fn read(input: &Input, base: &Path) -> Spec<proc_macro2::Span> {
    let (spec, errors) = spec(input, base);
    let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
    assert!(messages.is_empty(), "{messages:?}");
    spec
}

fn parse(tokens: proc_macro2::TokenStream) -> Input {
    match syn::parse2(tokens) {
        Ok(i) => i,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn one_model_with_every_key() {
    let input = parse(quote! {
        model = "models/kws.tflite",
        name = "keywords",
        module = kws,
        algorithm = "first_fit",
        assignment = "smallest_total",
        io_in_pools = false,
        kernels = true,
        size_granularity = 4,
        alignment = 8,
        scratch = [op("CONV_2D", im2col = 4 KiB, align = 32), call(3, acc = 512)],
        pools {
            dtcm: workspace(size = 16 KiB, align = 32, section = ".dtcm", targets = ["cpu"], bandwidth = "8 GB/s"),
            flash: constant(size = "1 MiB", alignment = 64),
        }
    });
    let s = read(&input, Path::new("/fw/src"));
    assert_eq!(s.pools.len(), 2);
    let dtcm = &s.pools[0];
    assert_eq!(dtcm.name.value, "dtcm");
    assert_eq!(dtcm.size.as_ref().map(|x| x.value), Some(16384));
    assert_eq!(dtcm.alignment.value, 32);
    assert_eq!(dtcm.section.value, ".dtcm");
    assert!(dtcm.region.is_none());
    assert_eq!(dtcm.targets[0].value, "cpu");
    assert_eq!(
        dtcm.bandwidth.as_ref().map(|b| b.value),
        Some(8_000_000_000)
    );
    assert_eq!(s.pools[1].kind.value, PoolKind::Constant);
    assert_eq!(
        s.pools[1].alignment.value, 64,
        "`alignment` as in usmp.toml"
    );
    assert_eq!(s.pools[1].section.value, ".usmp.flash");
    assert_eq!(s.pools[1].size.as_ref().map(|x| x.value), Some(1 << 20));
    let m = &s.models[0];
    assert_eq!(m.name.value, "keywords");
    assert_eq!(m.module.value, "kws");
    assert_eq!(m.path.value, "models/kws.tflite");
    assert_eq!(m.algorithm.value.name(), "first_fit");
    assert_eq!(
        m.assignment.value,
        usmp_build::usmp_core::Assignment::SmallestTotal
    );
    assert!(!m.io_in_pools.value);
    assert!(m.kernels.value);
    assert_eq!((m.size_granularity.value, m.alignment.value), (4, 8));
    assert_eq!(m.scratch.len(), 2);
    assert_eq!(
        m.scratch[0].op.as_ref().map(|o| o.value.as_str()),
        Some("CONV_2D")
    );
    assert_eq!(
        (
            m.scratch[0].size.value,
            m.scratch[0].alignment.as_ref().map(|a| a.value)
        ),
        (4096, Some(32))
    );
    assert_eq!(m.scratch[1].call.as_ref().map(|c| c.value), Some(3));
    assert_eq!(m.scratch[1].name.value, "acc");
    assert_eq!(s.base, Path::new("/fw/src"));
}

#[test]
fn the_model_name_defaults_to_the_file_stem() {
    let input = parse(quote! { model = "m/person_detect.tflite", pools { sram: workspace() } });
    let s = read(&input, Path::new("."));
    assert_eq!(s.models[0].name.value, "person_detect");
    assert_eq!(s.models[0].module.value, "person_detect");
    assert_eq!(s.models[0].algorithm.value.name(), "auto");
}

#[test]
fn several_models() {
    let input = parse(quote! {
        pools { sram: workspace() }
        models { a: model(path = "a.json"), b: model(path = "b.tflite", algorithm = "exact") }
    });
    let s = read(&input, Path::new("."));
    let names: Vec<&str> = s.models.iter().map(|m| m.name.value.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(s.models[1].algorithm.value.name(), "exact");
}

#[test]
fn every_problem_is_collected() {
    let input = parse(quote! {
        model = "m.json",
        colour = "blue",
        pools {
            sram: workspace(size = 99999999999999999999999, sise = 3),
            flash: readonly(),
        }
    });
    let errors = spec(&input, Path::new(".")).1;
    // The macro's own structure is checked before the reader reads the keys: sorted.
    let mut messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
    messages.sort();
    assert_eq!(
        messages,
        [
            "`99999999999999999999999` does not fit in 64 bits",
            "unknown key `colour`",
            "unknown key `sise`",
            "unknown pool kind `readonly`",
        ]
    );
}

#[test]
fn a_model_without_a_path() {
    let input =
        parse(quote! { pools { sram: workspace() } models { a: model(algorithm = "auto") } });
    let errors = spec(&input, Path::new(".")).1;
    assert_eq!(errors[0].message, "this model has no `path`");
}

/// Each message with its help, sorted; but the list of a table's keys, which leaves out
/// those the macro writes by its structure (a pool's name and kind).
fn said<S>(errors: &[usmp_build::__private::Diagnostic<S>]) -> Vec<(String, Option<String>)> {
    let mut out: Vec<_> = errors
        .iter()
        .map(|e| {
            let listing = e.message.starts_with("unknown key");
            (e.message.clone(), e.help.clone().filter(|_| !listing))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_same_mistakes_say_the_same_as_in_usmp_toml() {
    let toml = r#"
        [[pool]]
        name = "dtcm"
        size = true
        sise = 3
        alignment = "sixteen"
        bandwidth = 0
        targets = "cpu"
        [[pool]]
        name = "flash"
        kind = "constant"
        [[model]]
        name = "kws"
        path = "kws.json"
        assignment = "quickest"
        io_in_pools = 3
        algorithm = "auto"
        algorithm = "exact"
        [[model.scratch]]
        op = "CONV_2D"
        name = "im2col"
        size = "4 KB"
    "#;
    let input = parse(quote! {
        pools {
            dtcm: workspace(size = true, sise = 3, align = "sixteen", bandwidth = 0, targets = "cpu"),
            flash: constant(),
        }
        models {
            kws: model(
                path = "kws.json",
                assignment = quickest,
                io_in_pools = 3,
                algorithm = "auto",
                algorithm = "exact",
                scratch = [op("CONV_2D", im2col = "4 KB")],
            ),
        }
    });
    let from_macro = spec(&input, Path::new(".")).1;
    // toml refuses a key written twice itself, before any reading.
    let once = toml.replace("algorithm = \"exact\"\n", "");
    let (_, from_toml) = usmp_build::__private::parse_manifest(&once, Path::new("."))
        .unwrap_or_else(|d| panic!("{}", d.message));
    let mut expected = said(&from_toml);
    expected.push((
        "`algorithm` is given twice".into(),
        Some("write each key once".into()),
    ));
    expected.sort();
    assert_eq!(said(&from_macro), expected);
    assert_eq!(from_toml.len(), 8, "one error per mistake: {from_toml:?}");
}
