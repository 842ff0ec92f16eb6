//! `usmp bench`: time algorithms over problem files. Times are wall-clock here, on
//! purpose, and only here: they measure, they never decide a plan.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use usmp_core::{Assignment, Named};

use super::{Failure, algorithm_name, configured};

/// Arguments of `usmp bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Problem files, or folders whose .csv and .json files are all taken.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Algorithms to run (repeat the flag); default: all built in.
    #[arg(long, short, value_parser = algorithm_name())]
    algorithm: Vec<Named>,
    /// Runs per measurement (1 to 1000); the fastest is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeat: u32,
    /// Also write the table as Markdown to this file.
    #[arg(long, value_name = "OUT")]
    markdown: Option<PathBuf>,
    /// For `exact` and `auto`: search for this many seconds instead of the deterministic
    /// work budget (the other algorithms ignore it).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true, value_parser = crate::seconds)]
    time_limit: Option<f64>,
    /// For `exact` and `auto`: threads for independent work (0: every core); the plans
    /// are the same whatever the count.
    #[arg(long, default_value_t = 0)]
    threads: usize,
}

struct Row {
    instance: String,
    /// Time to read and check the file.
    read: Duration,
    buffers: usize,
    lower_bound: u64,
    /// The best peak anyone is known to have reached, from the instances' README.
    best_known: Option<u64>,
    algorithm: String,
    result: Result<(u64, Duration), String>,
}

fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path)
                .map_err(|e| Failure::Input(format!("{}: cannot list: {e}", path.display())))?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension()
                        .is_some_and(|x| x == "csv" || x == "json" || x == "tflite")
                })
                .collect();
            found.sort();
            out.extend(found);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

fn name_of(path: &Path) -> String {
    let parent = path
        .parent()
        .and_then(Path::file_name)
        .map(|p| p.to_string_lossy().into_owned());
    let file = path.file_name().map_or_else(
        || path.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    parent.map_or(file.clone(), |p| format!("{p}/{file}"))
}

/// Runs the benchmark and prints the table.
pub fn run(args: &Args) -> Result<(), Failure> {
    let algorithms: Vec<Named> = if args.algorithm.is_empty() {
        Named::ALL.to_vec()
    } else {
        args.algorithm.clone()
    };
    let mut rows = Vec::new();
    for path in files(&args.paths)? {
        let start = Instant::now();
        let problem = usmp_core::input::read_problem(&path, None).map_err(Failure::from_input)?;
        let read = start.elapsed();
        let lower_bound = usmp_core::LowerBound::of(&problem).total;
        let best_known = best_known(&path);
        for &named in &algorithms {
            // The time limit only concerns the searching algorithms.
            let time_limit = args.time_limit.filter(|_| named.searches());
            let algo = configured(
                named,
                None,
                time_limit,
                Assignment::Preference,
                args.threads,
            )?;
            let mut best: Option<Result<(u64, Duration), String>> = None;
            for _ in 0..args.repeat {
                let start = Instant::now();
                let outcome = usmp_core::plan(&problem, algo.as_ref());
                let took = start.elapsed();
                let r = outcome
                    .map(|p| (p.total(), took))
                    .map_err(|e| e.to_string().lines().next().unwrap_or("").to_string());
                best = Some(match (best, r) {
                    (Some(Ok((total, t))), Ok((_, u))) => Ok((total, t.min(u))),
                    (_, r) => r,
                });
            }
            let row = Row {
                instance: name_of(&path),
                read,
                buffers: problem.buffers().len(),
                lower_bound,
                best_known,
                algorithm: named.name().to_string(),
                result: best.unwrap_or_else(|| Err("not run".into())),
            };
            eprintln!("{}", line(&row, false));
            rows.push(row);
        }
    }
    super::emit(&render(&rows, false));
    if let Some(out) = &args.markdown {
        super::write_file(out, "the table", render(&rows, true).as_bytes())?;
    }
    Ok(())
}

/// Column titles and widths (negative: left-aligned) of the text table.
const COLUMNS: [(&str, i32); 10] = [
    ("instance", -40),
    ("buffers", 7),
    ("lower bound", 14),
    ("best known", 14),
    ("algorithm", -20),
    ("peak", 14),
    ("over best", 9),
    ("over LB", 8),
    ("read ms", 8),
    ("plan ms", 9),
];

/// The "best known peak" of `path` from a README.md beside it or one folder up: a
/// Markdown table whose header has a column starting "best known" and whose first cell
/// names the file, as in ../shared/benchmarks/README.md.
fn best_known(path: &Path) -> Option<u64> {
    let file = path.file_name()?.to_str()?;
    let folder = path.parent()?;
    [folder.join("README.md"), folder.parent()?.join("README.md")]
        .iter()
        .filter_map(|readme| std::fs::read_to_string(readme).ok())
        .find_map(|text| best_known_in(&text, file))
}

fn best_known_in(readme: &str, file: &str) -> Option<u64> {
    let cells = |line: &str| -> Vec<String> {
        line.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let mut column = None;
    for line in readme.lines().filter(|l| l.trim_start().starts_with('|')) {
        let row = cells(line);
        if let Some(c) = row.iter().position(|h| h.starts_with("best known")) {
            column = Some(c);
        } else if let Some(c) = column.filter(|_| row.first().is_some_and(|f| f == file)) {
            return row.get(c)?.replace(',', "").parse().ok();
        }
    }
    None
}

/// `peak` above `base` in percent.
fn excess(peak: u64, base: u64) -> String {
    if base == 0 {
        return "-".into();
    }
    format!("{:.2}%", (peak as f64 - base as f64) * 100.0 / base as f64)
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn format_row(cells: &[String], markdown: bool) -> String {
    if markdown {
        return format!("| {} |", cells.join(" | "));
    }
    let padded: Vec<String> = cells
        .iter()
        .zip(COLUMNS)
        .map(|(c, (_, w))| match w {
            w if w < 0 => format!("{c:<width$}", width = w.unsigned_abs() as usize),
            w => format!("{c:>width$}", width = w as usize),
        })
        .collect();
    padded.join(" ")
}

fn line(row: &Row, markdown: bool) -> String {
    let (peak, over_best, over_lb, time) = match &row.result {
        Ok((total, took)) => (
            total.to_string(),
            row.best_known.map_or("-".into(), |b| excess(*total, b)),
            excess(*total, row.lower_bound),
            ms(*took),
        ),
        Err(e) => (format!("failed: {e}"), "-".into(), "-".into(), "-".into()),
    };
    let cells = [
        row.instance.clone(),
        row.buffers.to_string(),
        row.lower_bound.to_string(),
        row.best_known.map_or("-".into(), |b| b.to_string()),
        row.algorithm.clone(),
        peak,
        over_best,
        over_lb,
        ms(row.read),
        time,
    ];
    format_row(&cells, markdown)
}

fn render(rows: &[Row], markdown: bool) -> String {
    let head: Vec<String> = COLUMNS.iter().map(|(t, _)| t.to_string()).collect();
    let mut out = format_row(&head, markdown) + "\n";
    if markdown {
        let rule: Vec<&str> = COLUMNS
            .iter()
            .map(|(_, w)| if *w < 0 { "---" } else { "---:" })
            .collect();
        out += &format!("|{}|\n", rule.join("|"));
    }
    for row in rows {
        out += &line(row, markdown);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_known_comes_from_the_column_of_that_name() {
        let readme = "text\n\n| file | LB | best known peak | proven |\n|---|---|---|---|\n\
                      | A.csv | 10 | 1,048,576 | yes |\n| B.csv | 3 | 12 | no |\n";
        assert_eq!(best_known_in(readme, "A.csv"), Some(1_048_576));
        assert_eq!(best_known_in(readme, "B.csv"), Some(12));
        assert_eq!(best_known_in(readme, "C.csv"), None);
        assert_eq!(
            best_known_in("| file | bytes |\n| A.csv | 7 |\n", "A.csv"),
            None
        );
        assert_eq!(excess(110, 100), "10.00%");
        assert_eq!(excess(5, 0), "-");
    }
}
