//! Writes the long chains docs/performance.md plans ("Long chains"), deterministically,
//! as CSV problems (`id,lower,upper,size`: one workspace pool, sizes kept as drawn):
//!
//! - `chain_N.csv`: N activations of 1,024-1,120 bytes, each live from the call that
//!   writes it to the next, every tenth read again nine calls later, and 256 bytes of
//!   scratch per call;
//! - `skips_N.csv`: the same with activations read again 3, 9 and 27 calls later;
//!
//! for N = 100, 500, 1,000, 10,000 and 100,000; and each as a model in the JSON IR
//! (`chain_N.json`, `skips_N.json`: the same sizes, one call per step reading its input
//! and the skips ending there, 256 bytes of scratch), which `usmp plan` plans with the
//! default pools (sizes rounded to 16, aligned to 16) as a build would.
//!
//! ```text
//! cargo run --release -p usmp-core --example chains -- target/chains
//! cargo run --release -p usmp-cli -- plan target/chains/chain_10000.csv
//! ```

use std::fmt::Write as _;
use std::path::PathBuf;

#[path = "../tests/common/rng.rs"]
mod rng;
use rng::Rng;

/// `calls` activations and their scratch, each activation `i` read again `k` calls later
/// where `i` is a multiple of `k + 1`, for each `k` of `skips`: the CSV problem and the
/// model.
fn chain(calls: u64, skips: &[u64], r: &mut Rng) -> (String, String) {
    let mut csv = String::from("id,lower,upper,size\n");
    let mut ends = Vec::new();
    let mut sizes = Vec::new();
    for i in 0..calls {
        let mut end = i + 2;
        for &k in skips {
            if i % (k + 1) == 0 {
                end = end.max(i + k + 1);
            }
        }
        let size = 1024 + r.below(97);
        let end = end.min(calls + 1);
        let _ = writeln!(csv, "x{i},{i},{end},{size}");
        let _ = writeln!(csv, "s{i},{i},{},256", i + 1);
        ends.push(end);
        sizes.push(size);
    }
    (csv, model(&ends, &sizes))
}

/// The model of a chain: activation `x{i}` (live over steps `i..ends[i]` above) is written
/// by call `i - 1` (`x0` is the input) and read by every call up to `ends[i] - 2`.
fn model(ends: &[u64], sizes: &[u64]) -> String {
    let calls = ends.len();
    let mut reads: Vec<Vec<usize>> = vec![Vec::new(); calls];
    for (i, &end) in ends.iter().enumerate() {
        // Read by call i (the next) and, where it is skipped over, by the call at its end.
        reads[i].push(i);
        let last = (end as usize).saturating_sub(2);
        if last > i && last < calls {
            reads[last].push(i);
        }
    }
    let tensors: Vec<String> = (0..=calls)
        .map(|i| {
            let size = sizes.get(i).copied().unwrap_or(1024);
            format!("{{\"name\": \"x{i}\", \"size_bytes\": {size}}}")
        })
        .collect();
    let calls_json: Vec<String> = (0..calls)
        .map(|c| {
            let read: Vec<String> = reads[c].iter().map(|i| format!("\"x{i}\"")).collect();
            format!(
                "{{\"op\": \"op\", \"reads\": [{}], \"writes\": [\"x{}\"], \
                 \"scratch\": [{{\"name\": \"s\", \"size_bytes\": 256}}]}}",
                read.join(", "),
                c + 1
            )
        })
        .collect();
    format!(
        "{{\"name\": \"chain\", \"inputs\": [\"x0\"], \"outputs\": [\"x{calls}\"], \
         \"tensors\": [{}], \"calls\": [{}]}}\n",
        tensors.join(", "),
        calls_json.join(", ")
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "target/chains".into()),
    );
    std::fs::create_dir_all(&dir)?;
    for calls in [100, 500, 1_000, 10_000, 100_000] {
        for (name, skips) in [("chain", &[9][..]), ("skips", &[3, 9, 27])] {
            let (csv, model) = chain(calls, skips, &mut Rng::seeded(calls));
            for (ext, text) in [("csv", csv), ("json", model)] {
                let path = dir.join(format!("{name}_{calls}.{ext}"));
                std::fs::write(&path, text)?;
                println!("{}", path.display());
            }
        }
    }
    Ok(())
}
