//! What the crate's own `Cargo.toml` must list for the generated code to build: the
//! runtime (under the name the generated code uses for it) and, with `kernels = true`,
//! usmp-kernels. Missing ones are cargo warnings printed before rustc's own errors about
//! them, which would otherwise be a dozen unresolved paths inside `OUT_DIR`. (A missing
//! critical-section implementation is the linker fragment's to report: it may come from
//! any crate of the firmware, a HAL's as well.)

use std::path::Path;

use crate::outputs::Paths;

/// What `cargo_toml` lacks for code generated with the crates at `paths`, each as one
/// warning line: the `usmp` runtime, and `usmp-kernels` when `kernels`.
pub(crate) fn manifest_warnings(cargo_toml: &str, kernels: bool, paths: Paths<'_>) -> Vec<String> {
    // A manifest that does not parse: cargo reports that itself.
    let Ok(doc) = cargo_toml.parse::<toml::Table>() else {
        return Vec::new();
    };
    let mut lines: Vec<String> = lacking(
        &doc,
        "usmp",
        paths.runtime,
        "runtime_path",
        "the generated module is built on the `usmp` runtime crate",
    )
    .into_iter()
    .collect();
    if kernels {
        lines.extend(lacking(
            &doc,
            "usmp-kernels",
            paths.kernels,
            "kernels_path",
            "`kernels = true` generates calls into the `usmp-kernels` crate",
        ));
    }
    lines
}

/// The warning for the dependency `package` that the generated code names by `path`
/// (set with `Config::<setter>`), if Cargo.toml does not list it under that name.
fn lacking(
    doc: &toml::Table,
    package: &str,
    path: &str,
    setter: &str,
    why: &str,
) -> Option<String> {
    let listed = dependency_names(doc, package);
    // A path inside the crate (`crate::deps::usmp`) is a re-export the crate made itself.
    let wanted = path
        .strip_prefix("::")
        .map(|p| p.split("::").next().unwrap_or(p));
    match (listed.first(), wanted) {
        (None, _) => Some(format!(
            "usmp: {why}, which Cargo.toml does not list; add {} to [dependencies]",
            dependency_line(package)
        )),
        (Some(first), Some(wanted)) if !listed.iter().any(|n| n == wanted) => Some(format!(
            "usmp: the generated module names a crate `{path}`, but Cargo.toml lists the `{package}` crate as `{first}`; call `.{setter}(\"::{first}\")` on usmp_build::Config in build.rs, or depend on it as `{package}`"
        )),
        _ => None,
    }
}

/// How to depend on the sibling crate `name`, from where this usmp-build came: the same
/// version from the registry, or the folder beside this one for a local checkout (no
/// version is published yet).
fn dependency_line(name: &str) -> String {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let version = env!("CARGO_PKG_VERSION");
    let from_registry = here
        .components()
        .any(|c| c.as_os_str() == "registry" || c.as_os_str() == "vendor");
    match here.parent().map(|p| p.join(name)) {
        Some(sibling) if !from_registry && sibling.is_dir() => {
            format!(
                "`{name} = {{ path = {:?} }}`",
                sibling.display().to_string()
            )
        }
        _ => format!("`{name} = \"{version}\"`"),
    }
}

/// The names (as Rust code writes them: `-` as `_`) under which the manifest `doc` lists
/// the package `package` among its dependencies, for every target or some: by its own
/// name, or renamed with `package = "..."`.
fn dependency_names(doc: &toml::Table, package: &str) -> Vec<String> {
    let mut tables = vec![doc];
    if let Some(targets) = doc.get("target").and_then(toml::Value::as_table) {
        tables.extend(targets.values().filter_map(toml::Value::as_table));
    }
    let mut names: Vec<String> = tables
        .into_iter()
        .filter_map(|t| t.get("dependencies").and_then(toml::Value::as_table))
        .flat_map(|deps| deps.iter())
        .filter(|(key, v)| {
            v.get("package")
                .and_then(toml::Value::as_str)
                .unwrap_or(key)
                == package
        })
        .map(|(key, _)| key.replace('-', "_"))
        .collect();
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::{Paths, dependency_names, manifest_warnings};

    const DEFAULT: Paths<'static> = Paths::DEFAULT;

    fn runtime(runtime: &str) -> Paths<'_> {
        Paths { runtime, ..DEFAULT }
    }

    /// A manifest that does not parse counts as listing it: no warning, cargo says why.
    fn depends_on(cargo_toml: &str, package: &str) -> bool {
        cargo_toml
            .parse::<toml::Table>()
            .map_or(true, |doc| !dependency_names(&doc, package).is_empty())
    }

    #[test]
    fn the_runtime_dependency_is_found_however_written() {
        let depends_on_runtime = |t: &str| depends_on(t, "usmp");
        assert!(depends_on_runtime("[dependencies]\nusmp = \"0.1\"\n"));
        assert!(depends_on_runtime(
            "[dependencies]\nusmp.workspace = true\n"
        ));
        assert!(depends_on_runtime(
            "[dependencies]\nplan = { package = \"usmp\", version = \"0.1\" }\n"
        ));
        assert!(depends_on_runtime(
            "[target.'cfg(target_os = \"none\")'.dependencies]\nusmp = \"0.1\"\n"
        ));
        assert!(!depends_on_runtime(
            "[dependencies]\nusmp-core = \"0.1\"\n[build-dependencies]\nusmp = \"0.1\"\n"
        ));
        assert!(depends_on_runtime("not toml ["));
    }

    #[test]
    fn a_manifest_missing_what_the_code_needs_is_told_what_to_add() {
        let full = "[dependencies]\nusmp = \"0.1\"\nusmp-kernels = \"0.1\"\n";
        assert!(manifest_warnings(full, true, DEFAULT).is_empty());
        let bare = "[dependencies]\ncortex-m-rt = \"0.7\"\n";
        let w = manifest_warnings(bare, true, DEFAULT);
        assert_eq!(w.len(), 2, "{w:#?}");
        assert!(
            w[0].contains("`usmp` runtime crate") && w[0].contains("add `usmp = "),
            "{}",
            w[0]
        );
        // This checkout's usmp-build suggests its sibling folder: no version is published.
        assert!(w[0].contains("path = "), "{}", w[0]);
        assert!(
            w[1].contains("`usmp-kernels` crate") && w[1].contains("add `usmp-kernels = "),
            "{}",
            w[1]
        );
        // Without kernels, only the runtime is needed.
        assert_eq!(manifest_warnings(bare, false, DEFAULT).len(), 1);
    }

    #[test]
    fn a_renamed_runtime_is_found_under_its_name_or_named_to_the_build() {
        let renamed = "[dependencies]\nrt = { package = \"usmp\", version = \"0.1\" }\n";
        assert!(manifest_warnings(renamed, false, runtime("::rt")).is_empty());
        // Through a re-export inside the crate: the crate's own business.
        assert!(manifest_warnings(renamed, false, runtime("crate::deps::usmp")).is_empty());
        let w = manifest_warnings(renamed, false, DEFAULT);
        assert_eq!(w.len(), 1, "{w:#?}");
        assert!(w[0].contains("lists the `usmp` crate as `rt`"), "{}", w[0]);
        assert!(w[0].contains(".runtime_path(\"::rt\")"), "{}", w[0]);
        // A crate called usmp that is another package is not the runtime.
        let other = "[dependencies]\nusmp = { package = \"not-usmp\", version = \"1\" }\n";
        assert!(manifest_warnings(other, false, DEFAULT)[0].contains("does not list"));
        let doc = "[dependencies]\nmy-rt = { package = \"usmp\" }"
            .parse()
            .unwrap();
        assert_eq!(dependency_names(&doc, "usmp"), vec!["my_rt".to_string()]);
    }

    #[test]
    fn renamed_kernels_are_found_under_their_name_or_named_to_the_build() {
        let renamed = "[dependencies]\nusmp = \"0.1\"\nk = { package = \"usmp-kernels\" }\n";
        let kernels = |kernels| Paths { kernels, ..DEFAULT };
        assert!(manifest_warnings(renamed, true, kernels("::k")).is_empty());
        let w = manifest_warnings(renamed, true, DEFAULT);
        assert_eq!(w.len(), 1, "{w:#?}");
        assert!(
            w[0].contains("lists the `usmp-kernels` crate as `k`"),
            "{}",
            w[0]
        );
        assert!(w[0].contains(".kernels_path(\"::k\")"), "{}", w[0]);
        // Without kernels, the kernels crate's name does not matter.
        assert!(manifest_warnings(renamed, false, DEFAULT).is_empty());
    }
}
