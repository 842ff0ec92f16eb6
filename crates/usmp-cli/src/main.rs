//! `usmp`: plan, inspect and benchmark static memory plans without building firmware.
//!
//! Exit codes: 0 a plan was found; 1 no plan fits the pools; 2 malformed input or usage.

mod bench;
mod tflm;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand, ValueEnum};
use usmp_core::input::{Input, InputError, PoolsFile};
use usmp_core::{Algorithm, Assignment, Exact, Named, report};

/// Unified Static Memory Planning: give every buffer a pool and an offset at build time.
#[derive(Debug, Parser)]
#[command(name = "usmp", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `usmp plan`'s arguments.
#[derive(Debug, clap::Args)]
struct PlanArgs {
    /// The problem or model file (.csv, .json, .tflite), or a build's usmp.toml (planned
    /// exactly as usmp-build would, printing the report the build writes).
    file: PathBuf,
    /// Planning algorithm.
    #[arg(long, short, default_value = "auto", value_parser = algorithm_name())]
    algorithm: Named,
    /// Decision mode: stop at the first plan of at most this many bytes in total. For a
    /// CSV problem it is also the size limit of its pool. Bytes, or a unit as in
    /// usmp.toml: `--capacity "64 KiB"`.
    #[arg(long, allow_negative_numbers = true, value_parser = usmp_core::input::parse_size)]
    capacity: Option<u64>,
    /// For `exact` and `auto`: search for at most this many seconds instead of the
    /// deterministic work budget that builds use (ends earlier once proven optimal).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true, value_parser = seconds)]
    time_limit: Option<f64>,
    /// For `exact` and `auto`, where buffers may go to several pools: keep the pools'
    /// preference order (a buffer leaves its first pool with room only when no plan
    /// exists otherwise), search every assignment for the smallest total, or put the
    /// most-accessed bytes in the fastest pools (by each pool's `bandwidth`).
    #[arg(long, default_value = "preference", value_parser = assignment_name())]
    assignment: Assignment,
    /// For `exact` and `auto`: threads for independent work (0: every core). The plan
    /// is the same whatever the count.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// For a model: the order its calls run in: as the file writes them, or among the
    /// orders its data dependencies allow the one of the lowest peak of live bytes (with
    /// the overlaps the model declares). A usmp.toml sets this per model (`order`).
    #[arg(long, value_enum, default_value_t = CallOrder::Written, conflicts_with = "write_tflm")]
    order: CallOrder,
    /// For a model: the pools file (pools, I/O in pools, size rounding, scratch).
    #[arg(long, value_name = "POOLS")]
    pools: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also write the memory map as SVG to this file.
    #[arg(long, value_name = "OUT")]
    svg: Option<PathBuf>,
    /// For a `.tflite` model: plan it for TensorFlow Lite Micro's arena (its lifetime
    /// rules, 16-byte alignment) and write a copy of the model to OUT holding the plan
    /// as `OfflineMemoryAllocation` metadata, which TFLite Micro uses instead of
    /// planning at run time. An offline plan already in the model is replaced, with a
    /// warning. The input file is never modified.
    #[arg(long, value_name = "OUT", conflicts_with_all = ["pools", "capacity"])]
    write_tflm: Option<PathBuf>,
    /// With --write-tflm: a scratch buffer TFLite Micro's kernels request, which it
    /// places at run time around the planned tensors. `OP=SIZE` for every call of an
    /// operator, `CALL=SIZE` for one call by its number (as the liveness table shows);
    /// repeat for several buffers, e.g. `--scratch SignalRfft=1024 --scratch 1=256`.
    #[arg(long, value_name = "CALL=SIZE", requires = "write_tflm", value_parser = tflm::scratch_rule)]
    scratch: Vec<usmp_core::liveness::ScratchRule>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Plan one problem or model and print the plan.
    ///
    /// FILE is a problem: a CSV with header `id,lower,upper,size` (half-open live ranges,
    /// one workspace pool called `workspace`) or a JSON problem
    /// `{"pools": [...], "buffers": [...]}` in the RFC's shape. Or it is a model: a
    /// `.tflite` file or the JSON model IR `{"tensors": [...], "calls": [...]}`; then the
    /// per-call liveness is printed first, and `--pools` gives the memories (default: one
    /// unbounded workspace pool and one constant pool, both aligned to 16). Or it is a
    /// build's `usmp.toml`, planned exactly as usmp-build would.
    Plan(PlanArgs),
    /// Time algorithms over problem files and print a table of peaks and times.
    Bench(bench::Args),
}

/// `--order`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CallOrder {
    /// As the model file writes them.
    Written,
    /// The order of the lowest peak the data dependencies allow.
    Memory,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum Format {
    /// A readable per-pool summary, then every buffer.
    Table,
    /// One JSON object on one line.
    Json,
}

/// `--algorithm`: a built-in algorithm's name (listed in `--help`).
fn algorithm_name() -> impl TypedValueParser<Value = Named> {
    PossibleValuesParser::new(Named::ALL.map(Named::name)).try_map(|s| s.parse::<Named>())
}

/// `--assignment`: how the searching algorithms choose pools (listed in `--help`).
fn assignment_name() -> impl TypedValueParser<Value = Assignment> {
    PossibleValuesParser::new(Assignment::ALL.map(Assignment::name))
        .try_map(|s| s.parse::<Assignment>())
}

/// A year: past it the deadline could overflow the clock, and no one waits that long.
const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// `--time-limit`'s value: a positive, finite number of seconds up to a year.
pub(crate) fn seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= MAX_SECONDS => Ok(s),
        _ => Err(format!(
            "give a positive number of seconds up to {MAX_SECONDS} (a year), e.g. --time-limit 60"
        )),
    }
}

/// The algorithm `named` with the command's search options applied; options only the
/// searching algorithms take are refused for the others.
fn configured(
    named: Named,
    capacity: Option<u64>,
    time_limit: Option<f64>,
    assignment: Assignment,
    threads: usize,
) -> Result<Box<dyn Algorithm + Send + Sync>, Failure> {
    if !named.searches() {
        let given = [
            ("--time-limit", time_limit.is_some()),
            ("--assignment", assignment != Assignment::Preference),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
            return Err(Failure::Input(format!(
                "{flag} applies to the searching algorithms exact and auto, not {named}"
            )));
        }
    }
    // `seconds` checked the range when the arguments were parsed.
    let time_limit = time_limit.map(std::time::Duration::from_secs_f64);
    Ok(named.with(Exact {
        time_limit,
        capacity,
        // With a clock the clock decides; the work budget only guards builds.
        work_budget: if time_limit.is_some() {
            u64::MAX
        } else {
            usmp_core::DEFAULT_WORK_BUDGET
        },
        assignment,
        threads,
    }))
}

/// How a command failed, and so which exit code it ends with.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Malformed input or unusable arguments: exit 2.
    Input(String),
    /// Malformed input, as diagnostics that already say `error:` (a usmp.toml's): exit 2.
    Rendered(String),
    /// No plan fits the pools: exit 1.
    NoPlan(String),
}

impl Failure {
    /// Every error the input held, one `error:` line each.
    pub(crate) fn from_input(e: InputError) -> Failure {
        Failure::Input(e.to_string().replace('\n', "\nerror: "))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Plan(args) => plan_command(args),
        Command::Bench(args) => bench::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::NoPlan(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
        Err(Failure::Input(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Rendered(diagnostics)) => {
            eprintln!("{diagnostics}");
            ExitCode::from(2)
        }
    }
}

/// `usmp plan`: a usmp.toml as the build plans it, a model or problem with the chosen
/// algorithm, or TensorFlow Lite Micro's copy of a `.tflite`.
fn plan_command(args: PlanArgs) -> Result<(), Failure> {
    let PlanArgs {
        file,
        algorithm: named,
        capacity,
        time_limit,
        assignment,
        threads,
        order,
        pools,
        format,
        svg,
        write_tflm,
        scratch,
    } = args;
    if let Some(out) = write_tflm {
        configured(named, capacity, time_limit, assignment, threads).and_then(|algorithm| {
            let to = tflm::Output {
                file: &out,
                format,
                svg: svg.as_deref(),
            };
            tflm::write(&file, algorithm.as_ref(), &scratch, to)
        })
    } else if is_manifest(&file) {
        let flags = Flags {
            algorithm: named,
            capacity,
            time_limit,
            assignment,
            pools: pools.as_deref(),
            order,
            format,
        };
        manifest_only(&file, &flags).and_then(|()| manifest(&file, svg.as_deref()))
    } else {
        configured(named, capacity, time_limit, assignment, threads).and_then(|algorithm| {
            // Speed's plan is shown next to the preference order's.
            let preference = match assignment {
                Assignment::Fastest => Some(configured(
                    named,
                    capacity,
                    time_limit,
                    Assignment::Preference,
                    threads,
                )?),
                _ => None,
            };
            let algorithms = Algorithms {
                chosen: algorithm.as_ref(),
                preference: preference.as_deref().map(|p| p as &dyn Algorithm),
            };
            let model = ModelArgs {
                pools: pools.as_deref(),
                order,
            };
            plan(&file, &algorithms, capacity, &model, format, svg.as_deref())
        })
    }
}

/// Writes to standard output; a reader that went away (`usmp plan ... | head`) ends the
/// command quietly instead of panicking as `print!` would.
pub(crate) fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        std::process::exit(0);
    }
}

/// Whether `file` is a build's `usmp.toml` (any `.toml`), not a problem or a model.
fn is_manifest(file: &Path) -> bool {
    file.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
}

/// The flags of `usmp plan` that a `usmp.toml` sets itself.
struct Flags<'a> {
    algorithm: Named,
    capacity: Option<u64>,
    time_limit: Option<f64>,
    assignment: Assignment,
    pools: Option<&'a Path>,
    order: CallOrder,
    format: Format,
}

/// The flags of `usmp plan` that only a model takes.
struct ModelArgs<'a> {
    pools: Option<&'a Path>,
    order: CallOrder,
}

/// Refuses the flags a `usmp.toml` sets itself.
fn manifest_only(file: &Path, flags: &Flags<'_>) -> Result<(), Failure> {
    let given = [
        ("--pools", flags.pools.is_some()),
        ("--order", flags.order != CallOrder::Written),
        ("--capacity", flags.capacity.is_some()),
        ("--time-limit", flags.time_limit.is_some()),
        ("--assignment", flags.assignment != Assignment::Preference),
        ("--algorithm", flags.algorithm != Named::Auto),
        ("--format json", matches!(flags.format, Format::Json)),
    ];
    match given.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(Failure::Input(format!(
            "{}: {flag} does not apply to a usmp.toml, which sets its pools and algorithms itself; leave {flag} out",
            file.display()
        ))),
        None => Ok(()),
    }
}

/// Plans a `usmp.toml` exactly as usmp-build would in `build.rs` (the same validation,
/// `memory.x` check, algorithms and verifier) and prints the report it would write.
fn manifest(file: &Path, svg: Option<&Path>) -> Result<(), Failure> {
    let config = usmp_build::Config::from_file(file).cargo_directives(false);
    let failed = |e: usmp_build::Error| match e {
        usmp_build::Error::Invalid(d) => {
            let rendered: Vec<String> = d.iter().map(ToString::to_string).collect();
            Failure::Rendered(rendered.join("\n"))
        }
        other => Failure::Input(other.to_string()),
    };
    let planned = config.plan().map_err(failed)?;
    emit(&usmp_build::__private::report_text(&planned));
    write_svg(svg, || usmp_build::__private::report_svg(&planned))
}

/// The algorithm that plans, and with `--assignment fastest` the same under the
/// preference order, whose memory time the table shows next to it.
struct Algorithms<'a> {
    chosen: &'a dyn Algorithm,
    preference: Option<&'a dyn Algorithm>,
}

impl Algorithms<'_> {
    /// What the preference order's plan would cost, for the table; empty unless asked.
    fn compared(&self, problem: &usmp_core::Problem) -> String {
        match self.preference.map(|a| usmp_core::plan(problem, a)) {
            None => String::new(),
            Some(Ok(other)) => {
                let total: u64 = other.pool_sizes.iter().sum();
                report::traffic_table(
                    problem,
                    &other.allocations,
                    &format!(
                        "for comparison, the preference order's plan ({total} bytes in total):"
                    ),
                )
            }
            Some(Err(_)) => "\nfor comparison, the preference order finds no plan\n".into(),
        }
    }
}

fn plan(
    file: &Path,
    algorithms: &Algorithms<'_>,
    capacity: Option<u64>,
    model_args: &ModelArgs<'_>,
    format: Format,
    svg: Option<&Path>,
) -> Result<(), Failure> {
    let pools = model_args.pools;
    let input = Failure::from_input;
    let read = usmp_core::input::read(file, capacity).map_err(|e| {
        // A bad model and a bad pools file are reported together.
        match pools.and_then(|p| usmp_core::input::read_pools(p).err()) {
            Some(also) => input(e.and(also)),
            None => input(e),
        }
    });
    let model = match read? {
        Input::Problem(problem) => {
            if pools.is_some() {
                return Err(Failure::Input(format!(
                    "{}: --pools applies to models; a problem file lists its own pools",
                    file.display()
                )));
            }
            if model_args.order != CallOrder::Written {
                return Err(Failure::Input(format!(
                    "{}: --order applies to models; a problem file has no calls to order",
                    file.display()
                )));
            }
            let plan = run(&problem, algorithms.chosen)?;
            match format {
                Format::Table => {
                    emit(&(report::table(&problem, &plan) + &algorithms.compared(&problem)))
                }
                Format::Json => emit(&(report::json(&problem, &plan) + "\n")),
            }
            return write_svg(svg, || report::svg(&problem, &plan));
        }
        Input::Model(model) => model,
    };
    let mut pools = match pools {
        Some(path) => usmp_core::input::read_pools(path).map_err(input)?,
        None => PoolsFile::default(),
    };
    let mut model = *model;
    let order = match model_args.order {
        CallOrder::Written => String::new(),
        CallOrder::Memory => {
            let order =
                usmp_core::order::memory_order(&model.model, &pools.options).map_err(|e| {
                    input(
                        usmp_core::input::lower(&model, &pools)
                            .err()
                            .unwrap_or_else(|| model.error(&e)),
                    )
                })?;
            model.put_in_order(&order);
            pools.options = order.renumber(&pools.options);
            report::order(&order) + "\n"
        }
    };
    let lowered = usmp_core::input::lower(&model, &pools).map_err(input)?;
    let plan = run(&lowered.problem, algorithms.chosen)?;
    match format {
        Format::Table => emit(&format!(
            "{order}{}\n{}{}",
            report::liveness(&model.model, &lowered, &plan),
            report::table(&lowered.problem, &plan),
            algorithms.compared(&lowered.problem)
        )),
        Format::Json => emit(&(report::model_json(&model.model, &lowered, &plan) + "\n")),
    }
    write_svg(svg, || {
        report::svg_steps(&lowered.problem, &plan, &lowered.steps)
    })
}

fn run(
    problem: &usmp_core::Problem,
    algorithm: &dyn Algorithm,
) -> Result<usmp_core::Plan, Failure> {
    usmp_core::plan(problem, algorithm).map_err(|e| Failure::NoPlan(e.to_string()))
}

pub(crate) fn write_svg(
    out: Option<&Path>,
    render: impl FnOnce() -> String,
) -> Result<(), Failure> {
    match out {
        Some(out) => write_file(out, "the SVG", render().as_bytes()),
        None => Ok(()),
    }
}

/// Writes an output file (`what` names it in the error), creating its folder:
/// `--svg target/x.svg` works before anything has created `target/`.
pub(crate) fn write_file(out: &Path, what: &str, bytes: &[u8]) -> Result<(), Failure> {
    let cannot =
        |e: std::io::Error| Failure::Input(format!("{}: cannot write {what}: {e}", out.display()));
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(cannot)?;
    }
    usmp_core::file::write(out, bytes).map_err(cannot)
}
