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
    let homes: Vec<Vec<String>> = [
        "examples/host/tests/snippets.rs",
        "examples/host/tests/snippet_calls.rs",
        "examples/firmware-common/src/lib.rs",
        "crates/usmp-macros/tests/ui/pass_kws.rs",
        "crates/usmp-core/src/algo/mod.rs",
    ]
    .iter()
    .map(|f| code_lines(&std::fs::read_to_string(root.join(f)).unwrap()))
    .collect();
    let mut pages: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.insert(0, root.join("README.md"));
    let mut blocks = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let mut rest = text.as_str();
        while let Some(open) = rest.find("\n```rust\n") {
            let body = &rest[open + "\n```rust\n".len()..];
            let close = body.find("\n```").unwrap();
            let block = &body[..close];
            rest = &body[close..];
            blocks += 1;
            let mut lines = code_lines(block);
            // `mod usmp { include!(...) }` stands for the generated module, included above.
            lines.retain(|l| {
                l != "mod usmp {" && !l.starts_with("include!(concat!(env!(\"OUT_DIR\")")
            });
            // Imports stand at the top of a file: anywhere in it; the code, as one run.
            let (uses, code): (Vec<String>, Vec<String>) =
                lines.into_iter().partition(|l| l.starts_with("use "));
            assert!(
                homes
                    .iter()
                    .any(|h| contains_run(h, &code) && uses.iter().all(|u| h.contains(u))),
                "this Rust block of {} is in no compiled file (put it, word for word, in a test of examples/host/tests):\n{block}",
                page.display()
            );
        }
    }
    assert_eq!(blocks, 7, "the Rust blocks of README.md and docs/*.md");
}
