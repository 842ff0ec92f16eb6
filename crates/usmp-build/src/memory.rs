//! The regions of a `memory.x` (cortex-m-rt's convention: the file next to the crate's
//! manifest declares `MEMORY { FLASH : ORIGIN = .., LENGTH = .. ... }`), so a pool whose
//! `region` is not one of them, or is the wrong kind of memory for the pool, fails the
//! build at that key instead of at link time or, worse, on the board.
//!
//! What kind of memory a region is comes from its attributes (`RAM (rwx)`, `QSPI (rx)`);
//! without attributes, cortex-m-rt's two names say it: `FLASH` is what the image is
//! programmed into, `RAM` is written at run time. Any other region without attributes
//! cannot be told apart, and a pool placed there is refused until memory.x says.

use std::path::{Path, PathBuf};

use usmp_core::PoolKind;

use crate::spec::{At, Diagnostic, PoolSpec};

/// One region of a `MEMORY` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// Its name, as the linker script writes it.
    pub name: String,
    /// What is between the parentheses after the name (`rwx`), if anything.
    pub attributes: Option<String>,
    /// The line of memory.x it is declared on, from 1.
    pub line: usize,
}

/// What a region holds, as far as memory.x says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    /// Written at run time (its attributes include `w`, or it is cortex-m-rt's `RAM`):
    /// nothing in the image is loaded there on a board.
    Writable,
    /// Read-only (attributes without `w`, or cortex-m-rt's `FLASH`): the image is
    /// programmed into it; the firmware cannot write it.
    Image,
    /// No attributes and not one of cortex-m-rt's names.
    Unknown,
}

impl Region {
    /// What the region holds.
    pub fn memory(&self) -> Memory {
        match &self.attributes {
            Some(attributes) => {
                // ld: attributes after `!` are the ones sections must not have.
                let wanted = attributes.split('!').next().unwrap_or("");
                if wanted.contains(['w', 'W']) {
                    Memory::Writable
                } else if wanted.contains(['r', 'R', 'x', 'X']) {
                    Memory::Image
                } else {
                    Memory::Unknown
                }
            }
            None => match self.name.as_str() {
                "FLASH" => Memory::Image,
                "RAM" => Memory::Writable,
                _ => Memory::Unknown,
            },
        }
    }
}

/// A diagnostic at each pool `region` that the `memory.x` in `dir` does not declare, or
/// declares as the wrong kind of memory for the pool; none when no pool names a region or
/// there is no such file (or it has no `MEMORY` block: the runtime's script may include
/// another). The file, when read, is added to `read` (its edits must rebuild).
pub fn check_beside<S: Clone>(
    pools: &[PoolSpec<S>],
    dir: &Path,
    read: &mut Vec<PathBuf>,
) -> Vec<Diagnostic<S>> {
    let Some(first) = pools.iter().find_map(|p| p.region.as_ref()) else {
        return Vec::new();
    };
    let memory_x = dir.join("memory.x");
    let file = memory_x.display().to_string();
    if !memory_x.exists() {
        return Vec::new();
    }
    let text = match usmp_core::file::read(&memory_x) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            return vec![
                Diagnostic::new(first.span.clone(), format!("{file}: cannot read it: {e}"))
                    .help("make memory.x a plain file (cortex-m-rt's link.x reads it too)"),
            ];
        }
    };
    let Some(regions) = regions(&text) else {
        return Vec::new();
    };
    read.push(memory_x);
    check(pools, &file, &regions)
}

/// The regions declared in `text`'s `MEMORY` block, in order; `None` when it has none.
pub fn regions(text: &str) -> Option<Vec<Region>> {
    let text = without_comments(text);
    let start = find_word(&text, "MEMORY")?;
    let open = start + text[start..].find('{')?;
    let close = open + text[open..].find('}')?;
    let block = &text[open + 1..close];
    let line_of = |at: usize| text[..open + 1 + at].matches('\n').count() + 1;
    // Each declaration is `NAME (attributes) : ORIGIN = .., LENGTH = ..`; only they use ':'.
    let mut found = Vec::new();
    for (colon, _) in block.match_indices(':') {
        let mut head = block[..colon].trim_end();
        let mut attributes = None;
        if let Some(inner) = head.strip_suffix(')')
            && let Some(paren) = inner.rfind('(')
        {
            attributes = Some(inner[paren + 1..].trim().to_string());
            head = inner[..paren].trim_end();
        }
        // ld allows any character in a name but blanks and the script's punctuation.
        let name_start = head
            .char_indices()
            .rev()
            .find(|&(_, c)| c.is_whitespace() || ",;={}()".contains(c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        if name_start < head.len() {
            found.push(Region {
                name: head[name_start..].to_string(),
                attributes,
                line: line_of(name_start),
            });
        }
    }
    Some(found)
}

/// `text` with each `/* */` comment blanked out, its line breaks kept, so offsets and line
/// numbers stay those of the file.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("/*") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let (comment, next) = match after.find("*/") {
            Some(end) => (&rest[open..open + 2 + end + 2], &after[end + 2..]),
            None => (&rest[open..], ""),
        };
        out.extend(comment.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
        rest = next;
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

/// The names of the regions of `regions` that hold `memory`, for advice.
fn names_of(regions: &[Region], memory: Memory) -> String {
    let names: Vec<&str> = regions
        .iter()
        .filter(|r| r.memory() == memory)
        .map(|r| r.name.as_str())
        .collect();
    if names.is_empty() {
        "none is declared yet".to_string()
    } else {
        names.join(", ")
    }
}

/// A diagnostic at each pool `region` that `regions` (from the file `file`) lacks or
/// declares as the wrong memory for the pool's kind.
fn check<S: Clone>(pools: &[PoolSpec<S>], file: &str, regions: &[Region]) -> Vec<Diagnostic<S>> {
    let mut found = Vec::new();
    for pool in pools {
        let Some(r) = &pool.region else { continue };
        let name = &pool.name.value;
        let Some(region) = regions.iter().find(|x| x.name == r.value) else {
            let all: Vec<&str> = regions.iter().map(|x| x.name.as_str()).collect();
            found.push(
                Diagnostic::new(
                    r.span.clone(),
                    format!("region `{}` is not declared in {file}", r.value),
                )
                .help(format!(
                    "write one of its MEMORY regions: {}",
                    all.join(", ")
                )),
            );
            continue;
        };
        let at = format!("{file}:{}", region.line);
        let message = match (pool.kind.value, region.memory()) {
            (_, Memory::Unknown) => Some((
                format!(
                    "region `{}` ({at}) states no attributes usmp can read, so it cannot tell whether pool `{name}` would be in RAM or in flash",
                    r.value
                ),
                format!(
                    "in {file}, write `{0} (rwx) : ...` if {0} is RAM written at run time, or `{0} (rx) : ...` if it is flash or ROM the image is programmed into",
                    r.value
                ),
            )),
            (PoolKind::Workspace, Memory::Image) => Some((
                format!(
                    "workspace pool `{name}` is in region `{}`, which {at} declares read-only (the image is programmed into it): the firmware cannot write its tensors there",
                    r.value
                ),
                format!(
                    "put the pool in a writable region: {}",
                    names_of(regions, Memory::Writable)
                ),
            )),
            (PoolKind::Constant, Memory::Image) if pool.load.is_some() => Some((
                format!(
                    "constant pool `{name}` runs from region `{}` (it has a `load` region), but {at} declares it read-only: the image could not be copied there",
                    r.value
                ),
                format!(
                    "run it from a writable region ({}), or remove `load` to read the weights where they are stored",
                    names_of(regions, Memory::Writable)
                ),
            )),
            (PoolKind::Constant, Memory::Writable) if pool.load.is_none() => Some((
                format!(
                    "constant pool `{name}` is in region `{}`, which {at} declares writable RAM: on a board nothing loads the image's weights there (cortex-m-rt copies only .data), so the model would read garbage",
                    r.value
                ),
                format!(
                    "add load = \"FLASH\" (a region the image is programmed into: {}) to copy the weights into {} when the workspace is taken, or put the pool in one of those regions",
                    names_of(regions, Memory::Image),
                    r.value
                ),
            )),
            _ => None,
        };
        if let Some((message, help)) = message {
            found.push(Diagnostic::new(r.span.clone(), message).help(help));
        }
        if let Some(load) = &pool.load {
            found.extend(load_region(name, load, file, regions));
        }
    }
    found
}

/// A diagnostic at a pool's `load` when `regions` lacks it or it is RAM (nothing the
/// board is programmed with would be there to copy).
fn load_region<S: Clone>(
    pool: &str,
    load: &At<String, S>,
    file: &str,
    regions: &[Region],
) -> Option<Diagnostic<S>> {
    let Some(region) = regions.iter().find(|x| x.name == load.value) else {
        return Some(
            Diagnostic::new(
                load.span.clone(),
                format!("region `{}` is not declared in {file}", load.value),
            )
            .help(format!(
                "write the region the image is stored in: {}",
                names_of(regions, Memory::Image)
            )),
        );
    };
    (region.memory() != Memory::Image).then(|| {
        Diagnostic::new(
            load.span.clone(),
            format!(
                "constant pool `{pool}` loads its image from region `{}`, which {file}:{} does not declare read-only: only memory the image is programmed into holds the weights at start-up",
                load.value, region.line
            ),
        )
        .help(format!(
            "write a region the image is programmed into ({}), or give {} attributes `(rx)` in {file} if it is flash",
            names_of(regions, Memory::Image),
            load.value
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::{Memory, Region, regions};

    fn region(name: &str, attributes: Option<&str>, line: usize) -> Region {
        Region {
            name: name.to_string(),
            attributes: attributes.map(str::to_string),
            line,
        }
    }

    #[test]
    fn regions_come_from_the_memory_block_with_attributes_and_lines() {
        let x = "/* Linker script for the LM3S6965 */\nMEMORY\n{\n  FLASH : ORIGIN = 0x00000000, LENGTH = 256K\n  /* fast: DTCM : nothing */\n  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 48K\n  DTCM(rw):ORIGIN=0x20010000,LENGTH=16K\n}\n_stack_start = ORIGIN(RAM) + LENGTH(RAM);\n";
        assert_eq!(
            regions(x),
            Some(vec![
                region("FLASH", None, 4),
                region("RAM", Some("rwx"), 6),
                region("DTCM", Some("rw"), 7),
            ])
        );
        assert_eq!(regions("SECTIONS { .text : { *(.text) } }"), None);
        assert_eq!(regions("MEMORY_SIZE = 4;"), None);
        assert_eq!(regions("/* unterminated MEMORY {"), None);
    }

    #[test]
    fn names_that_are_not_ascii_are_read_whole() {
        // Slicing at a byte inside `é` used to panic.
        let x = "/* é */ MEMORY { RAMé : ORIGIN = 0, LENGTH = 4K\n ÄFLASH (rx): ORIGIN = 8, LENGTH = 4K }";
        assert_eq!(
            regions(x),
            Some(vec![
                region("RAMé", None, 1),
                region("ÄFLASH", Some("rx"), 2)
            ])
        );
    }

    #[test]
    fn attributes_and_cortex_m_rt_names_say_what_a_region_holds() {
        assert_eq!(region("FLASH", None, 1).memory(), Memory::Image);
        assert_eq!(region("RAM", None, 1).memory(), Memory::Writable);
        assert_eq!(region("DTCM", None, 1).memory(), Memory::Unknown);
        assert_eq!(region("DTCM", Some("rwx"), 1).memory(), Memory::Writable);
        assert_eq!(region("QSPI", Some("rx"), 1).memory(), Memory::Image);
        assert_eq!(region("FLASH", Some("rw"), 1).memory(), Memory::Writable);
        assert_eq!(region("X", Some("rx!w"), 1).memory(), Memory::Image);
        assert_eq!(region("X", Some("!w"), 1).memory(), Memory::Unknown);
    }
}
