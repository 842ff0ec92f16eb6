//! The build-script API: [`Config`] reads `usmp.toml`, plans, and writes the generated
//! files; [`build`] does that for the common case and reports errors to cargo.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use usmp_core::Algorithm;

use crate::cargo_toml::manifest_warnings;
use crate::choice::OwnAlgorithms;

use crate::codegen;
use crate::manifest::{self, Located, Span};
use crate::outputs::{
    Embed, LINKER_FILE, MODULE_FILE, Paths, REPORT_FILE, SVG_FILE, constants_file, is_crate_path,
    tflm_file,
};
use crate::planned::Planned;
use crate::shares;
use crate::spec::{Diagnostic, Spec};
use crate::{linker, report, valid};

/// What to generate from which `usmp.toml`, in the style of `prost_build::Config`.
///
/// ```no_run
/// // build.rs
/// fn main() {
///     let out = usmp_build::Config::from_file("usmp.toml")
///         .summary(true)
///         .generate();
///     if let Err(e) = out {
///         e.report_to_cargo();
///     }
/// }
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    manifest: PathBuf,
    out_dir: Option<PathBuf>,
    summary: Option<bool>,
    cargo: bool,
    own: OwnAlgorithms,
    runtime_path: String,
    kernels_path: String,
}

/// What a successful [`Config::generate`] wrote and read.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Output {
    /// The generated Rust module, to `include!`.
    pub module: PathBuf,
    /// The linker fragment.
    pub linker: PathBuf,
    /// The text report.
    pub report: PathBuf,
    /// The memory maps.
    pub svg: PathBuf,
    /// Every input file read: `usmp.toml`, the models and their data files.
    pub read: Vec<PathBuf>,
    /// One line per model: its total, per-pool sizes, lower bound and algorithm.
    pub summary: Vec<String>,
    /// The pools without a `region`, as `(name, section)`: `usmp.x` does not place them.
    pub unplaced: Vec<(String, String)>,
    /// The `.tflite` copies holding TensorFlow Lite Micro's offline plan (`tflm = true`).
    pub tflm: Vec<PathBuf>,
    /// Whether the generated code calls `usmp-kernels` (some model has `kernels = true`).
    pub kernels: bool,
}

/// Why generation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// `usmp.toml` is wrong or its models cannot be planned as declared: every problem
    /// found, in the order of the text, each with its line and column (and displayed as
    /// `file:line:column: error: ...` with the line and a caret).
    Invalid(Vec<Located>),
    /// No output folder: `OUT_DIR` is unset (not run by cargo) and none was given.
    NoOutDir,
    /// [`Config::runtime_path`] was given something that is not an absolute path.
    RuntimePath(String),
    /// [`Config::kernels_path`] was given something that is not an absolute path.
    KernelsPath(String),
    /// The manifest (`usmp.toml`) does not exist: the path looked at.
    NoManifest(PathBuf),
}

/// `path` from the current folder (a build script's is the crate's root), for messages.
fn absolute(path: &Path) -> PathBuf {
    std::env::current_dir()
        .map(|d| d.join(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Invalid(all) => {
                let rendered: Vec<String> = all.iter().map(Located::to_string).collect();
                write!(f, "{}", rendered.join("\n\n"))
            }
            Error::RuntimePath(path) => write!(
                f,
                "Config::runtime_path({path:?}): not a path the generated code can name the runtime by; write `::` and the dependency's name as Rust sees it (\"::rt\" for `rt = {{ package = \"usmp\" }}`), or a `crate::` path to a re-export"
            ),
            Error::KernelsPath(path) => write!(
                f,
                "Config::kernels_path({path:?}): not a path the generated code can name usmp-kernels by; write `::` and the dependency's name as Rust sees it (\"::k\" for `k = {{ package = \"usmp-kernels\" }}`), or a `crate::` path to a re-export"
            ),
            Error::NoOutDir => write!(
                f,
                "OUT_DIR is not set: run from a build script, or call Config::out_dir"
            ),
            Error::NoManifest(path) => write!(
                f,
                "{}: no such file; usmp_build::build() plans the usmp.toml beside the crate's Cargo.toml: create it with a [[pool]] and a [[model]] (see usmp-build's docs), or name your file with Config::from_file",
                path.display()
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl Error {
    /// Prints the error as `cargo::error=` lines, which fail the build with a clean
    /// message (no panic, no backtrace).
    pub fn report_to_cargo(&self) {
        for line in self.to_string().lines() {
            println!("cargo::error={line}");
        }
    }
}

impl Config {
    /// Generation from the `usmp.toml` at `path` (relative to the package in a build
    /// script); model paths in it are relative to its folder.
    pub fn from_file(path: impl AsRef<Path>) -> Config {
        Config {
            manifest: path.as_ref().to_path_buf(),
            out_dir: None,
            summary: None,
            cargo: true,
            own: OwnAlgorithms::default(),
            runtime_path: Paths::DEFAULT.runtime.to_string(),
            kernels_path: Paths::DEFAULT.kernels.to_string(),
        }
    }

    /// The path the generated code names the `usmp` runtime crate by (default `::usmp`),
    /// as prost-build's `prost_path`: for a crate that depends on it under another name
    /// (`rt = { package = "usmp", ... }`: `.runtime_path("::rt")`) or re-exports it
    /// (`crate::deps::usmp`). The build warns when Cargo.toml lists the runtime under
    /// another name than the one the code uses.
    pub fn runtime_path(mut self, path: &str) -> Config {
        self.runtime_path = path.to_string();
        self
    }

    /// The path the generated code names `usmp-kernels` by (default `::usmp_kernels`), as
    /// [`runtime_path`](Self::runtime_path) for the runtime: with `kernels = true`, for a
    /// crate that depends on it under another name (`.kernels_path("::k")`) or re-exports it.
    pub fn kernels_path(mut self, path: &str) -> Config {
        self.kernels_path = path.to_string();
        self
    }

    /// The crate paths the generated code uses.
    fn paths(&self) -> Paths<'_> {
        Paths {
            runtime: &self.runtime_path,
            kernels: &self.kernels_path,
        }
    }

    /// Registers the build script's own planning algorithm under `name`: a model with
    /// `algorithm = "<name>"` in usmp.toml is planned by it. Its plans pass usmp-core's
    /// verifier like every other (a wrong one is a build error naming the algorithm).
    /// A built-in name stays the built-in algorithm.
    ///
    /// ```no_run
    /// // build.rs
    /// use usmp_build::usmp_core::{self, Algorithm, LowerBound, PlanError, Problem, Solution};
    ///
    /// /// First fit, then the exact search with the pool choice this firmware wants.
    /// struct Mine;
    ///
    /// impl Algorithm for Mine {
    ///     fn name(&self) -> &str {
    ///         "mine"
    ///     }
    ///     fn allocate(&self, p: &Problem, bound: &LowerBound) -> Result<Solution, PlanError> {
    ///         usmp_core::FirstFit.allocate(p, bound)
    ///     }
    /// }
    ///
    /// fn main() {
    ///     let out = usmp_build::Config::from_file("usmp.toml").algorithm("mine", Mine).generate();
    ///     if let Err(e) = out {
    ///         e.report_to_cargo();
    ///     }
    /// }
    /// ```
    pub fn algorithm(
        mut self,
        name: &str,
        algorithm: impl Algorithm + Send + Sync + 'static,
    ) -> Config {
        self.own.insert(name, Arc::new(algorithm));
        self
    }

    /// The work budget of `exact` and `auto` (default [`BUILD_WORK_BUDGET`], a 600th
    /// of `usmp plan`'s): more finds smaller plans where the greedy planners miss the lower
    /// bound, at the cost of build time (a build script is compiled without optimisation
    /// unless `[profile.dev.build-override] opt-level = 3` says otherwise). The budget
    /// counts work, not time: the plan is the same on every machine.
    ///
    /// [`BUILD_WORK_BUDGET`]: crate::BUILD_WORK_BUDGET
    pub fn work_budget(mut self, units: u64) -> Config {
        self.own.set_work_budget(units);
        self
    }

    /// Writes into `dir` (made if it does not exist) instead of `OUT_DIR`.
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Config {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Prints a one-line `cargo::warning` per model (overrides `[report] summary`).
    pub fn summary(mut self, on: bool) -> Config {
        self.summary = Some(on);
        self
    }

    /// Whether to print cargo directives (`rerun-if-changed`, `rustc-link-search`,
    /// warnings). On by default; turn it off outside build scripts.
    pub fn cargo_directives(mut self, on: bool) -> Config {
        self.cargo = on;
        self
    }

    /// Reads, validates and plans, then writes the module, the linker fragment, the
    /// reports and the constant pools' bytes. Every plan has passed usmp-core's verifier.
    pub fn generate(&self) -> Result<Output, Error> {
        let mut read = vec![self.manifest.clone()];
        let result = self.run(&mut read);
        if self.cargo {
            rerun_lines(&read);
        }
        let (out, summary_on) = result?;
        if self.cargo {
            let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
                .map(|d| PathBuf::from(d).join("Cargo.toml"))
                .and_then(|p| std::fs::read_to_string(p).ok());
            if let Some(m) = manifest {
                for line in manifest_warnings(&m, out.kernels, self.paths()) {
                    println!("cargo::warning={line}");
                }
            }
            if let Some(dir) = out.module.parent() {
                println!("cargo::rustc-link-search={}", dir.display());
            }
            let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
            for line in unplaced_warnings(&os, &out.unplaced) {
                println!("cargo::warning={line}");
            }
            if summary_on {
                for line in &out.summary {
                    println!("cargo::warning={line}");
                }
            }
        }
        Ok(out)
    }

    fn run(&self, read: &mut Vec<PathBuf>) -> Result<(Output, bool), Error> {
        if !is_crate_path(&self.runtime_path) {
            return Err(Error::RuntimePath(self.runtime_path.clone()));
        }
        if !is_crate_path(&self.kernels_path) {
            return Err(Error::KernelsPath(self.kernels_path.clone()));
        }
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(Error::NoOutDir)?,
        };
        let (planned, summary) = self.planned(read)?;
        let output = write_all(&planned, &out_dir, read, self.paths())?;
        Ok((output, summary))
    }

    /// Reads, validates (with the `memory.x` beside the manifest, if any) and plans.
    fn planned(&self, read: &mut Vec<PathBuf>) -> Result<(Planned, bool), Error> {
        let text = match usmp_core::file::read(&self.manifest) {
            Ok(bytes) => String::from_utf8(bytes).map_err(|e| Error::Io {
                path: self.manifest.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "not UTF-8 text (byte {}); save it as UTF-8",
                        e.utf8_error().valid_up_to()
                    ),
                ),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::NoManifest(absolute(&self.manifest)));
            }
            Err(source) => {
                return Err(Error::Io {
                    path: self.manifest.clone(),
                    source,
                });
            }
        };
        let base = self
            .manifest
            .parent()
            .unwrap_or(Path::new(""))
            .to_path_buf();
        // Every diagnostic of every phase, in the order of the text.
        let invalid = |mut ds: Vec<Diagnostic<Span>>| {
            ds.sort_by_key(|d| d.span.start);
            let located = ds.iter().map(|d| Located::new(&self.manifest, &text, d));
            Error::Invalid(located.collect())
        };
        let (spec, reading) = manifest::parse(&text, &base).map_err(|d| invalid(vec![d]))?;
        // cortex-m-rt's memory.x beside usmp.toml, if any: its regions are the ones to use.
        match plan(&spec, reading, &self.own, self.paths(), Some(&base), read) {
            Ok(planned) => Ok((planned, self.summary.unwrap_or(spec.summary))),
            Err(all) => Err(invalid(all)),
        }
    }

    /// The plans [`generate`](Self::generate) would write, without writing anything:
    /// `usmp plan usmp.toml` prints their report text, so the command plans exactly what
    /// the build would. For the `usmp` command, not public API.
    #[doc(hidden)]
    pub fn plan(&self) -> Result<Planned, Error> {
        self.planned(&mut Vec::new()).map(|(planned, _)| planned)
    }
}

/// On a bare-metal target (`target_os = "none"`), one warning per pool without a region:
/// nothing places its section, so the linker puts it after the runtime's sections as an
/// orphan, in whatever memory follows (with cortex-m-rt, usually FLASH). Host builds,
/// where the system's linker places every section, get none.
pub(crate) fn unplaced_warnings(target_os: &str, unplaced: &[(String, String)]) -> Vec<String> {
    if target_os != "none" {
        return Vec::new();
    }
    unplaced
        .iter()
        .map(|(name, section)| linker::unplaced_warning(name, section, &Embed::OutDir))
        .collect()
}

/// Writes every generated file of `planned` into `dir`.
pub fn write_all(
    planned: &Planned,
    dir: &Path,
    read: &[PathBuf],
    paths: Paths<'_>,
) -> Result<Output, Error> {
    // A folder given to `out_dir` may not exist yet.
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let write = |name: &str, bytes: &[u8]| -> Result<PathBuf, Error> {
        let path = dir.join(name);
        usmp_core::file::write(&path, bytes).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        Ok(path)
    };
    let mut tflm = Vec::new();
    for m in &planned.models {
        if let Some(t) = &m.tflm {
            tflm.push(write(&tflm_file(&m.module), &t.written.bytes)?);
        }
        let scales = codegen::scales_image(&m.tensors);
        if !scales.is_empty() {
            write(&codegen::scales_file(&m.module), &scales)?;
        }
        for (p, pool) in planned.pools.iter().enumerate() {
            if pool.kind == usmp_core::PoolKind::Constant {
                let image = m.liveness.constant_image(&m.model, &m.plan, p);
                write(&constants_file(&m.module, &pool.name), &image)?;
            }
        }
    }
    Ok(Output {
        module: write(
            MODULE_FILE,
            codegen::generate(planned, &Embed::OutDir, paths).as_bytes(),
        )?,
        linker: write(
            LINKER_FILE,
            linker::fragment(planned, &Embed::OutDir).as_bytes(),
        )?,
        report: write(REPORT_FILE, report::text(planned).as_bytes())?,
        svg: write(SVG_FILE, report::svg(planned).as_bytes())?,
        read: read.to_vec(),
        summary: report::summary(planned),
        kernels: planned.models.iter().any(|m| m.kernels.is_some()),
        unplaced: planned
            .pools
            .iter()
            .filter(|p| p.region.is_none())
            .map(|p| (p.name.clone(), p.section.clone()))
            .collect(),
        tflm,
    })
}

/// `rerun-if-changed` for every file read; for a file that is not there, its folder (a
/// missing path would rerun the script on every build).
fn rerun_lines(read: &[PathBuf]) {
    let mut seen = std::collections::BTreeSet::new();
    for path in read {
        let target = if path.exists() {
            Some(path.as_path())
        } else {
            path.parent()
                .filter(|d| !d.as_os_str().is_empty() && d.exists())
        };
        if let Some(t) = target
            && seen.insert(t.to_path_buf())
        {
            println!("cargo::rerun-if-changed={}", t.display());
        }
    }
}

/// The common case in one call: generate from `usmp.toml` beside the package's
/// `Cargo.toml` into `OUT_DIR`; on error, print it for cargo and let the build fail
/// cleanly.
///
/// ```no_run
/// // build.rs
/// fn main() {
///     usmp_build::build();
/// }
/// ```
pub fn build() {
    if let Err(e) = Config::from_file("usmp.toml").generate() {
        e.report_to_cargo();
    }
}

/// Plans a spec from a front end (usmp.toml, the `usmp_pools!` macro): validation, then
/// planning; the caller renders the diagnostics at its own spans. `earlier` holds what
/// reading the front end's text found (the spec then has defaults in place of the bad
/// values): it is returned together with every validation problem, and nothing is
/// planned. Each pool's `region` is checked against the `memory.x` in `memory_x_dir`, if
/// there is one there; those errors come with whatever else is found, planning included.
pub fn plan<S: Clone>(
    spec: &Spec<S>,
    earlier: Vec<Diagnostic<S>>,
    own: &OwnAlgorithms,
    paths: Paths<'_>,
    memory_x_dir: Option<&Path>,
    read: &mut Vec<PathBuf>,
) -> Result<Planned, Vec<Diagnostic<S>>> {
    let mut problems = memory_x_dir
        .map(|dir| crate::memory::check_beside(&spec.pools, dir, read))
        .unwrap_or_default();
    let mut early = earlier;
    early.extend(valid::validate(spec, own));
    if !early.is_empty() {
        early.extend(problems);
        return Err(early);
    }
    match shares::plan_spec(spec, own, paths.kernels, read) {
        Ok(planned) if problems.is_empty() => Ok(planned),
        Ok(_) => Err(problems),
        Err(more) => {
            problems.extend(more);
            Err(problems)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::unplaced_warnings;

    #[test]
    fn a_pool_without_region_is_flagged_on_bare_metal_only() {
        let unplaced = [("sram".to_string(), ".usmp.sram".to_string())];
        let w = unplaced_warnings("none", &unplaced);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("pool `sram` has no `region`"), "{}", w[0]);
        assert!(w[0].contains("`.usmp.sram`"), "{}", w[0]);
        assert!(w[0].contains("add `region = \"RAM\"`"), "{}", w[0]);
        assert!(unplaced_warnings("linux", &unplaced).is_empty());
        assert!(unplaced_warnings("none", &[]).is_empty());
    }
}
