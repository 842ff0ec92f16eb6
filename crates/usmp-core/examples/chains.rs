//! Writes the long chains docs/performance.md plans ("Long chains"), deterministically,
//! as CSV problems (`id,lower,upper,size`: one workspace pool, sizes kept as drawn):
//!
//! - `chain_N.csv`: N activations of 1,024-1,120 bytes, each live from the call that
//!   writes it to the next, every tenth read again nine calls later, and 256 bytes of
//!   scratch per call;
//! - `skips_N.csv`: the same with activations read again 3, 9 and 27 calls later;
//!
//! for N = 100, 500, 1,000, 10,000 and 100,000.
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
/// where `i` is a multiple of `k + 1`, for each `k` of `skips`.
fn chain(calls: u64, skips: &[u64], r: &mut Rng) -> String {
    let mut s = String::from("id,lower,upper,size\n");
    for i in 0..calls {
        let mut end = i + 2;
        for &k in skips {
            if i % (k + 1) == 0 {
                end = end.max(i + k + 1);
            }
        }
        let size = 1024 + r.below(97);
        let _ = writeln!(s, "x{i},{i},{},{size}", end.min(calls + 1));
        let _ = writeln!(s, "s{i},{i},{},256", i + 1);
    }
    s
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
            let text = chain(calls, skips, &mut Rng::seeded(calls));
            let path = dir.join(format!("{name}_{calls}.csv"));
            std::fs::write(&path, text)?;
            println!("{}", path.display());
        }
    }
    Ok(())
}
