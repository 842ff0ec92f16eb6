//! From tokens to the generated module: parse, interpret, plan and generate through
//! usmp-build, so the expansion is the same code `build.rs` users `include!`.

use std::path::Path;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use usmp_build::__private::{Diagnostic, Embed, OwnAlgorithms, Paths};

use crate::{ast, link, tree};

/// Where an invocation's files are.
pub struct Dirs<'a> {
    /// Model paths are relative to it: the invoking file's folder.
    pub base: &'a Path,
    /// The crate's root, where cortex-m-rt's `memory.x` is, if known.
    pub crate_root: Option<&'a Path>,
    /// The crate's `OUT_DIR`, if it has a build script: `usmp_pools.x` goes there.
    pub out_dir: Option<&'a Path>,
}

/// Expands an invocation. Every problem becomes a compile error at its token, all of
/// them together (a region missing from `memory.x` with whatever planning finds).
pub fn expand(input: TokenStream, dirs: &Dirs<'_>) -> syn::Result<TokenStream> {
    let parsed: ast::Input = syn::parse2(input)?;
    let (spec, reading) = tree::spec(&parsed, dirs.base);
    let mut read = Vec::new();
    let planned = usmp_build::__private::plan(
        &spec,
        reading,
        &OwnAlgorithms::default(),
        Paths::DEFAULT,
        dirs.crate_root,
        &mut read,
    )
    .map_err(combine)?;
    let link = link::fragment(&spec, &planned, dirs.out_dir)?;
    let code: TokenStream =
        usmp_build::__private::generate(&planned, &Embed::Inline, Paths::DEFAULT)
            .parse()
            .map_err(|e| {
                syn::Error::new(
                    Span::call_site(),
                    format!("usmp generated code that does not lex: {e}"),
                )
            })?;
    // Reading the files through the compiler makes it rebuild when they change.
    let files = read
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .map(|p| p.display().to_string());
    Ok(quote! {
        #code
        #link
        #( const _: &[u8] = include_bytes!(#files); )*
    })
}

/// One compile error per diagnostic, each at its token with its advice.
pub fn combine(diagnostics: Vec<Diagnostic<Span>>) -> syn::Error {
    let mut all: Option<syn::Error> = None;
    for d in diagnostics {
        let text = match &d.help {
            Some(help) => format!("{}\n  = help: {help}", d.message),
            None => d.message.clone(),
        };
        let e = syn::Error::new(d.span, text);
        match &mut all {
            Some(a) => a.combine(e),
            None => all = Some(e),
        }
    }
    all.unwrap_or_else(|| syn::Error::new(Span::call_site(), "usmp_pools!: no diagnostics"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use std::path::PathBuf;

    use super::{Dirs, expand};

    /// A fresh folder holding a two-tensor model, `memory.x` and an empty `out`.
    fn project(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("usmp-macros-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("out")).unwrap();
        std::fs::write(
            dir.join("m.json"),
            r#"{"name": "m", "tensors": [
                {"name": "x", "size_bytes": 64}, {"name": "w", "kind": "constant", "data": [1, 2]},
                {"name": "y", "size_bytes": 32}],
               "inputs": ["x"], "outputs": ["y"],
               "calls": [{"op": "fc", "reads": ["x", "w"], "writes": ["y"]}]}"#,
        )
        .unwrap();
        std::fs::write(
            dir.join("memory.x"),
            "MEMORY\n{\n  FLASH : ORIGIN = 0, LENGTH = 256K\n  DTCM (rwx) : ORIGIN = 0x20000000, LENGTH = 16K\n}\n",
        )
        .unwrap();
        dir
    }

    fn run(dir: &std::path::Path, region: &str, out_dir: bool) -> syn::Result<String> {
        let input: proc_macro2::TokenStream = format!(
            r#"model = "m.json", pools {{ fast: workspace(region = "{region}"), flash: constant(region = "FLASH") }}"#
        )
        .parse()
        .unwrap();
        let out = dir.join("out");
        let dirs = Dirs {
            base: dir,
            crate_root: Some(dir),
            out_dir: out_dir.then_some(out.as_path()),
        };
        expand(input, &dirs).map(|t| t.to_string())
    }

    #[test]
    fn a_region_is_placed_by_usmp_pools_x_which_the_code_requires() {
        let dir = project("placed");
        let code = run(&dir, "DTCM", true).unwrap();
        let x = std::fs::read_to_string(dir.join("out/usmp_pools.x")).unwrap();
        assert!(x.contains("> DTCM") && x.contains("> FLASH"), "{x}");
        assert!(x.contains("__usmp_pools_x_not_linked__pass_link_arg_Tusmp_pools_x = ."));
        assert!(code.contains("__usmp_pools_x_not_linked__pass_link_arg_Tusmp_pools_x"));
        assert!(!code.contains("has_no_region"), "every pool has a region");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_region_not_in_memory_x_is_an_error_listing_its_regions() {
        let dir = project("misspelt");
        let e = run(&dir, "DTMC", true).unwrap_err().to_string();
        assert!(e.contains("region `DTMC` is not declared in"), "{e}");
        assert!(e.contains("FLASH, DTCM"), "{e}");
        assert!(!dir.join("out/usmp_pools.x").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn without_a_build_script_a_firmware_build_is_told_what_to_add() {
        let dir = project("no-out-dir");
        let code = run(&dir, "DTCM", false).unwrap();
        assert!(code.contains("compile_error"), "{code}");
        assert!(code.contains("cargo::rustc-link-search"), "{code}");
        assert!(code.contains(r#"cfg (target_os = "none")"#), "{code}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_constant_pool_run_from_ram_is_loaded_from_its_image() {
        let dir = project("loaded");
        let input: proc_macro2::TokenStream = r#"model = "m.json", pools { fast: workspace(region = "DTCM", size = 4 KiB), w: constant(region = "DTCM", load = "FLASH", shares = "fast") }"#
            .parse()
            .unwrap();
        let dirs = Dirs {
            base: &dir,
            crate_root: Some(&dir),
            out_dir: Some(&dir.join("out")),
        };
        let code = expand(input, &dirs).unwrap().to_string();
        assert!(code.contains("loaded : true"), "{code}");
        assert!(code.contains("fn load"), "{code}");
        let x = std::fs::read_to_string(dir.join("out/usmp_pools.x")).unwrap();
        assert!(x.contains(".usmp.w.image : ALIGN"), "{x}");
        assert!(x.contains(".usmp.w (NOLOAD)"), "{x}");
        // Copied into the region it is stored in: refused, saying what to write instead.
        let input: proc_macro2::TokenStream = r#"model = "m.json", pools { fast: workspace(region = "DTCM"), w: constant(region = "FLASH", load = "FLASH") }"#
            .parse()
            .unwrap();
        let e = expand(input, &dirs).unwrap_err().to_string();
        assert!(e.contains("into the same region"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_pool_without_region_warns_on_firmware_targets() {
        let dir = project("unplaced");
        let input: proc_macro2::TokenStream =
            r#"model = "m.json", pools { sram: workspace(), flash: constant(region = "FLASH") }"#
                .parse()
                .unwrap();
        let dirs = Dirs {
            base: &dir,
            crate_root: Some(&dir),
            out_dir: Some(&dir.join("out")),
        };
        let code = expand(input, &dirs).unwrap().to_string();
        assert!(code.contains("pool_sram_has_no_region"), "{code}");
        assert!(!code.contains("pool_flash_has_no_region"), "{code}");
        assert!(code.contains("deprecated"), "{code}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
