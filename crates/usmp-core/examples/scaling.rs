//! Writes the scaling benchmark's problems (CSV: `id,lower,upper,size`), deterministically,
//! for n = 10,000, 100,000 and 1,000,000 buffers:
//!
//! - `random_N.csv`: lives of 1 to 200 steps starting anywhere in the first n / 10 steps
//!   (about 1,000 buffers live at once whatever n is), sizes of 1 to 4,096 bytes;
//! - `y1_N.csv`, when `../shared/benchmarks/idealloc/Y_1.csv` is there: idealloc's Y_1
//!   (62,185 buffers, thousands live at once) played again and again, one copy after the
//!   other in time, cut at n buffers.
//!
//! ```text
//! cargo run --release -p usmp-core --example scaling -- target/scaling
//! cargo run --release -p usmp-cli -- bench target/scaling -a first_fit -a greedy_by_breadth --repeat 1
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "../tests/common/rng.rs"]
mod rng;
use rng::Rng;

const SIZES: [u64; 3] = [10_000, 100_000, 1_000_000];

fn random(n: u64, r: &mut Rng) -> String {
    let mut s = String::from("id,lower,upper,size\n");
    let steps = (n / 10).max(1);
    for i in 0..n {
        let (start, length, size) = (r.below(steps), 1 + r.below(200), 1 + r.below(4096));
        let _ = writeln!(s, "b{i},{start},{},{size}", start + length);
    }
    s
}

/// One buffer: lower, upper, size.
type Row = (u64, u64, u64);

/// Y_1's rows.
fn read_y1(path: &Path) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path)?;
    let mut rows = Vec::new();
    for line in text.lines().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        let [_, lower, upper, size] = fields.as_slice() else {
            return Err(format!("{}: not id,lower,upper,size: {line}", path.display()).into());
        };
        rows.push((lower.parse()?, upper.parse()?, size.parse()?));
    }
    Ok(rows)
}

fn tiled(rows: &[Row], n: u64) -> String {
    let span = rows.iter().map(|r| r.1).max().unwrap_or(0);
    let mut s = String::from("id,lower,upper,size\n");
    for i in 0..n {
        let copy = i / rows.len() as u64;
        let (lower, upper, size) = rows[(i % rows.len() as u64) as usize];
        let shift = copy * span;
        let _ = writeln!(s, "y{i},{},{},{size}", lower + shift, upper + shift);
    }
    s
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "target/scaling".into()),
    );
    std::fs::create_dir_all(&dir)?;
    let y1 =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/benchmarks/idealloc/Y_1.csv");
    let y1 = if y1.is_file() {
        Some(read_y1(&y1)?)
    } else {
        println!("{} is absent: only the random problems", y1.display());
        None
    };
    for n in SIZES {
        let mut files = vec![(format!("random_{n}.csv"), random(n, &mut Rng::seeded(n)))];
        if let Some(rows) = &y1 {
            files.push((format!("y1_{n}.csv"), tiled(rows, n)));
        }
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::write(&path, &text)?;
            println!("{}: {:.1} MB", path.display(), text.len() as f64 / 1e6);
        }
    }
    Ok(())
}
