//! What the integration tests share: where the repository is, and the skip rule for
//! ../shared (present in CI, perhaps absent in a fresh clone).

#![allow(dead_code)] // each test file uses a part

pub mod brute;
pub mod rng;

use std::path::{Path, PathBuf};

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `../shared/<rel>` beside the repository, or `None` after printing why the test skips.
pub fn shared(rel: &str) -> Option<PathBuf> {
    let path = repo().join("../shared").join(rel);
    if path.exists() {
        Some(path)
    } else {
        eprintln!(
            "skipped: {} is absent (it is always present in CI)",
            path.display()
        );
        None
    }
}
