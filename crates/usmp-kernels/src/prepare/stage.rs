//! A streamed stage printed from its parts' kernels, each printed on its own: what a
//! build that prepares each call apart (usmp-build) puts together.

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use super::print::{Rust, literal, rust};
#[cfg(doc)]
use crate::Part;
use crate::Stage;

/// A stage's part with its kernel already printed: what [`stage_rust`] takes, for a
/// build that prepares each call's kernel on its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartText {
    /// The part's kernel as [`rust`] prints it.
    pub kernel: String,
    /// [`Part::output`].
    pub output: [usize; 4],
    /// [`Part::weights`].
    pub weights: usize,
    /// [`Part::rows`].
    pub rows: usize,
}

/// A `Kernel::Stage` of `parts` as a Rust expression naming the kernels crate by `path`.
pub fn stage_rust(parts: &[PartText], path: &str) -> String {
    format!("{path}::Kernel::Stage(&{})", stage_literal(path, parts))
}

pub(super) fn stage_literal(k: &str, parts: &[PartText]) -> String {
    let parts: Vec<String> = parts
        .iter()
        .map(|p| {
            literal(
                k,
                "Part",
                &[
                    ("kernel", p.kernel.clone()),
                    ("output", format!("{:?}", p.output)),
                    ("weights", p.weights.to_string()),
                    ("rows", p.rows.to_string()),
                ],
            )
        })
        .collect();
    literal(k, "Stage", &[("parts", format!("&[{}]", parts.join(", ")))])
}

impl Rust for Stage<'_> {
    fn rust(&self, k: &str) -> String {
        let parts: Vec<PartText> = self
            .parts
            .iter()
            .map(|p| PartText {
                kernel: rust(&p.kernel, k),
                output: p.output,
                weights: p.weights,
                rows: p.rows,
            })
            .collect();
        stage_literal(k, &parts)
    }
}
