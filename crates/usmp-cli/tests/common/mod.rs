//! What the `usmp` command's tests share: running it and reading what it printed.
#![allow(clippy::unwrap_used, dead_code)] // test code; each test file uses a part

use std::process::{Command, Output};

/// Runs the built `usmp` with `args`.
pub fn usmp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_usmp"))
        .args(args)
        .output()
        .unwrap()
}

/// Printed bytes as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
