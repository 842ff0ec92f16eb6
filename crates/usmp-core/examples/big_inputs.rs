//! Writes the big inputs that reading is benchmarked on, each on one line (the layout that
//! once made reading quadratic), deterministically:
//!
//! - `model_100mb.json`: a model IR whose constant holds 30,000,000 inline bytes (~100 MB);
//! - `problem_1m.json`: a JSON problem of 1,000,000 buffers with live ranges (~80 MB).
//!
//! ```text
//! cargo run --release -p usmp-core --example big_inputs -- target/big
//! cargo run --release -p usmp-cli -- bench target/big -a greedy_by_size --repeat 3
//! ```
//!
//! `usmp bench`'s "read ms" is reading, checking and (for the model) lowering the file.

use std::fmt::Write as _;
use std::path::PathBuf;

#[path = "../tests/common/rng.rs"]
mod rng;
use rng::Rng;

fn model(bytes: usize, r: &mut Rng) -> String {
    let mut s = String::with_capacity(bytes * 4);
    s.push_str(r#"{"name":"big","tensors":[{"name":"in","size_bytes":16},"#);
    s.push_str(r#"{"name":"w","kind":"constant","data":["#);
    for k in 0..bytes {
        if k > 0 {
            s.push(',');
        }
        let _ = write!(s, "{}", r.below(256));
    }
    s.push_str(r#"]},{"name":"out","size_bytes":16}],"inputs":["in"],"outputs":["out"],"#);
    s.push_str(r#""calls":[{"op":"FULLY_CONNECTED","reads":["in","w"],"writes":["out"]}]}"#);
    s
}

fn problem(buffers: usize, r: &mut Rng) -> String {
    let mut s = String::with_capacity(buffers * 80);
    s.push_str(r#"{"pools":[{"name":"sram"}],"buffers":["#);
    for i in 0..buffers {
        if i > 0 {
            s.push(',');
        }
        let (start, length, size) = (r.below(10_000), 1 + r.below(200), 1 + r.below(4096));
        let end = start + length;
        let _ = write!(
            s,
            r#"{{"name":"b{i}","size_bytes":{size},"pool_candidates":["sram"],"live":[{start},{end}]}}"#
        );
    }
    s.push_str("]}");
    s
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "target/big".into()),
    );
    std::fs::create_dir_all(&dir)?;
    let mut r = Rng::seeded(1);
    for (name, text) in [
        ("model_100mb.json", model(30_000_000, &mut r)),
        ("problem_1m.json", problem(1_000_000, &mut r)),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, &text)?;
        println!("{}: {:.1} MB", path.display(), text.len() as f64 / 1e6);
    }
    Ok(())
}
