//! The macro's linker story, the same as usmp-build's: when a pool names a `region`, the
//! expansion writes `usmp_pools.x` (each pool's section in its region, with `ASSERT`s on
//! sizes) into the crate's `OUT_DIR`, and the generated code refers to a symbol only that
//! fragment defines, so a firmware linked without `-Tusmp_pools.x` fails naming it.
//!
//! Only the invoking crate's build script gives it an `OUT_DIR`. Without one, a firmware
//! build (`target_os = "none"`) is a compile error at the first `region` that says what
//! `build.rs` to add; host builds need no fragment and compile as they are. A pool without
//! a region on a firmware target is a warning at its name (stable Rust lets a macro warn
//! only through a deprecated item), as the linker would place it as an orphan section.

use std::path::Path;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote_spanned};
use usmp_build::__private::{Embed, Planned, Spec};

/// The tokens to add to the expansion, after writing the fragment into `out_dir` when a
/// pool has a region and there is one. Writes only when the text changed, so an unchanged
/// plan does not relink.
pub fn fragment(
    spec: &Spec<Span>,
    planned: &Planned,
    out_dir: Option<&Path>,
) -> syn::Result<TokenStream> {
    let mut tokens = unplaced(spec);
    let Some(first) = spec.pools.iter().find_map(|p| p.region.as_ref()) else {
        return Ok(tokens);
    };
    let file = usmp_build::__private::linker_file(&Embed::Inline);
    let Some(dir) = out_dir else {
        let message = format!(
            "usmp_pools!: pool regions need the linker fragment {file}, written into the crate's OUT_DIR, but this crate has no build script (cargo sets OUT_DIR only for crates with one)\n  = help: add a build.rs that puts OUT_DIR on the linker's search path:\n      fn main() {{\n          let out = std::env::var(\"OUT_DIR\").unwrap();\n          println!(\"cargo::rustc-link-search={{out}}\");\n      }}\n    and link with it after the runtime's script: rustflags = [\"-C\", \"link-arg=-Tlink.x\", \"-C\", \"link-arg=-T{file}\"]"
        );
        tokens.extend(quote_spanned! {first.span=>
            #[cfg(target_os = "none")]
            ::core::compile_error!(#message);
        });
        return Ok(tokens);
    };
    let text = usmp_build::__private::linker_fragment(planned, &Embed::Inline);
    let path = dir.join(file);
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        usmp_build::usmp_core::file::write(&path, text.as_bytes()).map_err(|e| {
            syn::Error::new(
                first.span,
                format!(
                    "usmp_pools!: cannot write the linker fragment {}: {e}",
                    path.display()
                ),
            )
        })?;
    }
    Ok(tokens)
}

/// A warning on a firmware target at each pool without a region.
fn unplaced(spec: &Spec<Span>) -> TokenStream {
    let mut tokens = TokenStream::new();
    for pool in spec.pools.iter().filter(|p| p.region.is_none()) {
        let span = pool.name.span;
        let note = usmp_build::__private::unplaced_warning(
            &pool.name.value,
            &pool.section.value,
            &Embed::Inline,
        );
        let item = format_ident!("pool_{}_has_no_region", pool.name.value, span = span);
        tokens.extend(quote_spanned! {span=>
            #[cfg(target_os = "none")]
            const _: () = {
                #[deprecated(note = #note)]
                #[allow(non_upper_case_globals)]
                const #item: () = ();
                #item
            };
        });
    }
    tokens
}
