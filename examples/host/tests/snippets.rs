//! The README's Rust snippets, compiled and run: each block of README.md must stand,
//! line for line (comments and indentation aside), in code the tests or CI compile and
//! run, so a snippet that stops compiling or gives a wrong answer fails here.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::Path;

mod usmp {
    include!(concat!(env!("OUT_DIR"), "/usmp.rs"));
}
use usmp::micro_speech::Model;

/// README.md's `src/main.rs`, on the firmware's plan: the output is TFLite Micro's.
#[test]
fn the_readme_inference_runs() -> Result<(), usmp_kernels::CallError> {
    let input = micro_speech::testdata::input(1);
    // From README.md, as written there:
    let mut workspace = usmp::Workspace::take().unwrap(); // the one handle; None after
    let mut model = Model::session(&mut workspace);
    model.input(0).unwrap().copy_from_slice(input); // exactly the input tensor's bytes
    usmp::micro_speech::invoke(&mut model)?; // every call, with only the kernels it uses
    let y = model.output(0).unwrap();
    // (end of the snippet)
    assert_eq!(y, micro_speech::testdata::expected(1));
    Ok(())
}

/// A block's code lines, trimmed, without comment lines, trailing comments, blank lines,
/// and the snippet-only lines that stand for a file around the code (`mod usmp {`, its
/// `include!`, a `fn main() {` wrapper and the braces closing them).
fn code_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            // A `//` outside string literals (an even number of quotes before it).
            let comment = l
                .match_indices("//")
                .map(|(at, _)| at)
                .find(|&at| l[..at].matches('"').count() % 2 == 0);
            comment.map_or(l, |at| &l[..at]).trim()
        })
        .filter(|l| !l.is_empty() && *l != "}" && *l != "fn main() {")
        .map(str::to_string)
        .collect()
}

/// Whether `needle` stands as one contiguous run in `hay`.
fn contains_run(hay: &[String], needle: &[String]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn every_rust_block_of_the_readme_and_docs_is_compiled_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // Where the snippets live as code, each compiled and run by the tests or CI: these
    // tests, what the firmware examples share (their build script), the macro's passing
    // UI test, and the planner's own trait.
    let homes: Vec<(Vec<String>, Vec<String>)> = [
        "examples/host/tests/snippets.rs",
        "examples/host/tests/snippet_calls.rs",
        "examples/firmware-common/src/lib.rs",
        "crates/usmp-macros/tests/ui/pass_kws.rs",
        "crates/usmp-core/src/algo/mod.rs",
    ]
    .iter()
    .map(|f| uses_and_code(&std::fs::read_to_string(root.join(f)).unwrap()))
    .collect();
    let mut pages: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.insert(0, root.join("README.md"));
    let mut blocks = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        blocks.extend(
            fenced(&text, "```rust")
                .into_iter()
                .map(|b| (page.clone(), b)),
        );
    }
    let markdown = blocks.len();
    // The crates' front pages: their doc tests compile; the `ignore` blocks (code that
    // needs a generated module) must stand in compiled code like the rest.
    for krate in [
        "usmp",
        "usmp-build",
        "usmp-kernels",
        "usmp-macros",
        "usmp-core",
    ] {
        let page = root.join("crates").join(krate).join("src/lib.rs");
        let text: String = std::fs::read_to_string(&page)
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix("//!"))
            .map(|l| format!("{}\n", l.strip_prefix(' ').unwrap_or(l)))
            .collect();
        blocks.extend(
            fenced(&text, "```ignore")
                .into_iter()
                .map(|b| (page.clone(), b)),
        );
    }
    for (page, block) in &blocks {
        let (uses, code) = uses_and_code(block);
        assert!(
            homes.iter().any(|(h_uses, h)| contains_run(h, &code)
                && uses.iter().all(|u| h_uses.contains(u) || h.contains(u))),
            "this Rust block of {} is in no compiled file (put it, word for word, in a test of examples/host/tests):\n{block}",
            page.display()
        );
    }
    assert_eq!(
        (markdown, blocks.len() - markdown),
        (7, 4),
        "the Rust blocks of README.md and docs/*.md, and the front pages' ignored ones"
    );
}

/// The blocks of `text` fenced by `open` (a line of its own) and a closing ``` line.
fn fenced(text: &str, open: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut block: Option<Vec<&str>> = None;
    for line in text.lines() {
        match &mut block {
            None if line == open => block = Some(Vec::new()),
            Some(lines) if line.starts_with("```") => {
                out.push(lines.join("\n"));
                block = None;
            }
            Some(lines) => lines.push(line),
            None => {}
        }
    }
    out
}

/// A snippet's or a file's imports (anywhere in a file) and the rest of its code lines (a
/// snippet's must stand as one run), without the lines that stand for the generated
/// module (`mod usmp {` and its `include!`).
fn uses_and_code(text: &str) -> (Vec<String>, Vec<String>) {
    let mut lines = code_lines(text);
    lines.retain(|l| l != "mod usmp {" && !l.starts_with("include!(concat!(env!(\"OUT_DIR\")"));
    lines.into_iter().partition(|l| l.starts_with("use "))
}
