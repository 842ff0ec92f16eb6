//! From tokens to the generated module: parse, interpret, plan and generate through
//! usmp-build, so the expansion is the same code `build.rs` users `include!`.

use std::path::Path;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use usmp_build::{Diagnostic, Embed};

use crate::{ast, attr};

/// Expands an invocation whose model paths are relative to `base`. Every problem becomes
/// a compile error at its token.
pub fn expand(input: TokenStream, base: &Path) -> syn::Result<TokenStream> {
    let parsed: ast::Input = syn::parse2(input)?;
    let spec = attr::spec(&parsed, base).map_err(combine)?;
    let mut read = Vec::new();
    let planned = usmp_build::plan(&spec, &mut read).map_err(combine)?;
    let code: TokenStream = usmp_build::generate(&planned, &Embed::Inline)
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
