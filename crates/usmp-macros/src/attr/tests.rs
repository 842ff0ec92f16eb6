use std::path::Path;

use quote::quote;
use usmp_build::usmp_core::PoolKind;

use super::spec;
use crate::ast::Input;

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
    let s = spec(&input, Path::new("/fw/src"))
        .unwrap_or_else(|e| panic!("{}", e[0].message))
        .0;
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
    assert_eq!(m.assignment.value, super::Assignment::SmallestTotal);
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
    let s = spec(&input, Path::new("."))
        .unwrap_or_else(|e| panic!("{}", e[0].message))
        .0;
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
    let s = spec(&input, Path::new("."))
        .unwrap_or_else(|e| panic!("{}", e[0].message))
        .0;
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
    let errors = match spec(&input, Path::new(".")) {
        Ok((_, errors)) | Err(errors) => errors,
    };
    let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert!(messages[0].contains("unknown key `colour`"));
    assert!(messages[1].contains("does not fit in 64 bits"));
    assert!(messages[2].contains("unknown key `sise`"));
    assert!(messages[3].contains("unknown pool kind `readonly`"));
}

#[test]
fn a_model_without_a_path() {
    let input =
        parse(quote! { pools { sram: workspace() } models { a: model(algorithm = "auto") } });
    let errors = match spec(&input, Path::new(".")) {
        Ok((_, errors)) | Err(errors) => errors,
    };
    assert!(errors[0].message.contains("model `a` has no path"));
}
