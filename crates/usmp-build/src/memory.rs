//! The region names of a `memory.x` (cortex-m-rt's convention: the file next to the
//! crate's manifest declares `MEMORY { FLASH : ORIGIN = .., LENGTH = .. ... }`), so a pool
//! whose `region` is not one of them fails the build at that key, listing the regions,
//! instead of the linker's `memory region not defined` at a line of a generated file.

use std::path::{Path, PathBuf};

use crate::spec::{Diagnostic, PoolSpec};

/// A diagnostic at each pool `region` that the `memory.x` in `dir` does not declare; none
/// when there is no such file (or it has no `MEMORY` block: the runtime's script may
/// include another). The file, when read, is added to `read` (its edits must rebuild).
pub fn check_beside<S: Clone>(
    pools: &[PoolSpec<S>],
    dir: &Path,
    read: &mut Vec<PathBuf>,
) -> Vec<Diagnostic<S>> {
    let memory_x = dir.join("memory.x");
    let Some(regions) = std::fs::read_to_string(&memory_x)
        .ok()
        .and_then(|t| regions(&t))
    else {
        return Vec::new();
    };
    read.push(memory_x.clone());
    check(pools, &memory_x.display().to_string(), &regions)
}

/// The names declared in `text`'s `MEMORY` block, in order; `None` when it has none.
pub fn regions(text: &str) -> Option<Vec<String>> {
    let text = without_comments(text);
    let start = find_word(&text, "MEMORY")?;
    let body = &text[start..];
    let open = body.find('{')?;
    let close = body[open..].find('}')? + open;
    let block = &body[open + 1..close];
    // Each declaration is `NAME (attributes) : ORIGIN = .., LENGTH = ..`; only they use ':'.
    let mut names = Vec::new();
    let mut rest = block;
    while let Some(colon) = rest.find(':') {
        let mut head = rest[..colon].trim_end();
        if head.ends_with(')')
            && let Some(paren) = head.rfind('(')
        {
            head = head[..paren].trim_end();
        }
        let start = head
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .map_or(0, |i| i + 1);
        if start < head.len() {
            names.push(head[start..].to_string());
        }
        rest = &rest[colon + 1..];
    }
    Some(names)
}

/// `text` with `/* */` comments blanked out.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("/*") {
        out.push_str(&rest[..open]);
        out.push(' ');
        rest = match rest[open + 2..].find("*/") {
            Some(end) => &rest[open + 2 + end + 2..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// Where `word` starts as a whole word in `text`.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = text[..i].chars().next_back().is_none_or(|c| !ident(c));
        let after = text[i + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !ident(c));
        before && after
    })
}

/// A diagnostic at each pool `region` that `regions` (from the file `file`) lacks.
fn check<S: Clone>(pools: &[PoolSpec<S>], file: &str, regions: &[String]) -> Vec<Diagnostic<S>> {
    pools
        .iter()
        .filter_map(|p| p.region.as_ref())
        .filter(|r| !regions.contains(&r.value))
        .map(|r| {
            Diagnostic::new(
                r.span.clone(),
                format!("region `{}` is not declared in {file}", r.value),
            )
            .help(format!(
                "write one of its MEMORY regions: {}",
                regions.join(", ")
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::regions;

    #[test]
    fn region_names_come_from_the_memory_block() {
        let x = "/* Linker script for the LM3S6965 */\nMEMORY\n{\n  FLASH : ORIGIN = 0x00000000, LENGTH = 256K\n  /* fast: DTCM : nothing */\n  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 48K\n  DTCM(rw):ORIGIN=0x20010000,LENGTH=16K\n}\n_stack_start = ORIGIN(RAM) + LENGTH(RAM);\n";
        assert_eq!(
            regions(x),
            Some(vec![
                "FLASH".to_string(),
                "RAM".to_string(),
                "DTCM".to_string()
            ])
        );
        assert_eq!(regions("SECTIONS { .text : { *(.text) } }"), None);
        assert_eq!(regions("MEMORY_SIZE = 4;"), None);
        assert_eq!(regions("/* unterminated MEMORY {"), None);
    }
}
