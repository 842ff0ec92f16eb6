//! What a build writes and how generated code finds it: file names in the output folder,
//! and how a constant pool's bytes reach the code ([`Embed`], one per front end). The
//! generators (code, linker fragment, report) and the build all name files from here.

// The files [`Config::generate`](crate::Config::generate) writes into the output folder.

/// The generated Rust module, to `include!`.
pub const MODULE_FILE: &str = "usmp.rs";
/// The linker fragment.
pub const LINKER_FILE: &str = "usmp.x";
/// The text report.
pub const REPORT_FILE: &str = "usmp-report.txt";
/// The memory maps.
pub const SVG_FILE: &str = "usmp-report.svg";

/// How a constant pool's bytes get into the generated code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Embed {
    /// `include_bytes!` of `<module>.<pool>.bin` in `OUT_DIR` (written by the build).
    OutDir,
    /// A byte string literal in the code itself (the proc-macro has no `OUT_DIR`).
    Inline,
}

/// The name of the file [`Embed::OutDir`] expects for `module`'s constants in `pool`.
pub fn constants_file(module: &str, pool: &str) -> String {
    format!("{module}.{pool}.bin")
}

/// The file a model's TensorFlow Lite Micro copy is written to (`tflm = true`).
pub fn tflm_file(module: &str) -> String {
    format!("{module}.tflm.tflite")
}

/// The paths the generated module names its crates by ([`Config::runtime_path`] and
/// [`Config::kernels_path`]).
///
/// [`Config::runtime_path`]: crate::Config::runtime_path
/// [`Config::kernels_path`]: crate::Config::kernels_path
#[derive(Clone, Copy, Debug)]
pub struct Paths<'a> {
    /// The `usmp` runtime.
    pub runtime: &'a str,
    /// `usmp-kernels` (named only with `kernels = true`).
    pub kernels: &'a str,
}

impl Paths<'static> {
    /// Each crate under its own name, as a firmware that depends on them plainly has them.
    pub const DEFAULT: Paths<'static> = Paths {
        runtime: "::usmp",
        kernels: "::usmp_kernels",
    };
}

/// Whether `path` names a crate or module from anywhere in the generated module: absolute
/// (`::name...`, a dependency, or `crate::...`, a re-export), each segment an identifier.
pub fn is_crate_path(path: &str) -> bool {
    let rest = match path.strip_prefix("::") {
        Some(rest) => rest,
        None if path.starts_with("crate::") => path,
        None => return false,
    };
    rest.split("::").all(|segment| {
        let mut chars = segment.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            && segment != "_"
    })
}
