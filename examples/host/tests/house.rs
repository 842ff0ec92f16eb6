//! The house rules of docs/layout.md, checked against the source. In every crate the
//! imports between modules form no circle, and in the crates the document layers, a
//! module imports only from its own layer or those below it (a module may use what its
//! parent defines: the parent holds its children's shared vocabulary; test files are
//! above every layer and not read). No source file (tests included) is over 600 lines,
//! and no function outside tests over 80, but for the ones listed here as known debt.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module's path inside its crate (`["algo", "exact"]`); the crate root is empty.
type ModPath = Vec<String>;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every module file of the crate whose sources are in `src`, by module path; files that
/// only hold tests (`tests.rs`) are left out.
fn modules(src: &Path) -> BTreeMap<ModPath, PathBuf> {
    let mut found = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let Ok(rel) = path.strip_prefix(src) else {
                continue;
            };
            let Some(rel) = rel.to_str().and_then(|r| r.strip_suffix(".rs")) else {
                continue;
            };
            let mut parts: ModPath = rel.split('/').map(str::to_string).collect();
            let last = parts.last().cloned().unwrap_or_default();
            if last == "tests" {
                continue;
            }
            if ["mod", "lib", "main"].contains(&last.as_str()) {
                parts.pop();
            }
            found.insert(parts, path);
        }
    }
    found
}

/// `text` without comments, string and character literals (their contents could look
/// like paths), and without `#[cfg(test)]` modules written inline (of any visibility).
fn code(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let rest = |k: usize| chars.get(i + k).copied().unwrap_or('\0');
        match (chars[i], rest(1)) {
            ('/', '/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            ('/', '*') => {
                let from = i;
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
                keep_lines(&mut out, &chars[from..i.min(chars.len())]);
            }
            ('r', '#') | ('r', '"') if !out.ends_with(|c: char| c.is_alphanumeric()) => {
                let hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let from: String = chars[i + 2 + hashes..].iter().collect();
                let len = from.find(&close).map_or(from.len(), |at| at + close.len());
                let start = i;
                i += 2 + hashes + from[..len].chars().count();
                out.push_str("\"\"");
                keep_lines(&mut out, &chars[start..i.min(chars.len())]);
            }
            ('"', _) => {
                let start = i;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
                keep_lines(&mut out, &chars[start..i.min(chars.len())]);
            }
            ('\'', c) if rest(2) == '\'' || (c == '\\') => {
                // A character literal ('a', '\n', '\u{..}'); a lifetime has no closing quote.
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("' '");
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    without_test_modules(&out)
}

/// The line breaks of a removed literal or comment, so that lines still count.
fn keep_lines(out: &mut String, removed: &[char]) {
    out.extend(removed.iter().filter(|&&c| c == '\n'));
}

fn without_test_modules(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let item = after.trim_start();
        // A test module may be visible to its siblings' tests (`pub(super) mod tests`).
        let item = ["pub(crate) ", "pub(super) ", "pub "]
            .iter()
            .find_map(|v| item.strip_prefix(v))
            .unwrap_or(item);
        let Some(body) = item.strip_prefix("mod ").and_then(|m| {
            let brace = m.find(['{', ';'])?;
            (m.as_bytes()[brace] == b'{').then(|| &m[brace..])
        }) else {
            rest = after;
            continue;
        };
        let mut depth = 0usize;
        let mut end = body.len();
        for (k, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &body[end..];
    }
    out.push_str(rest);
    out
}

/// The paths a `use` tree names: `a::{b, c::d as e}` gives `a::b` and `a::c::d`.
fn use_paths(prefix: &[String], tree: &str, out: &mut Vec<ModPath>) {
    let tree = tree.trim();
    if let Some(inner) = tree.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        let mut depth = 0;
        let mut start = 0;
        for (k, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    use_paths(prefix, &inner[start..k], out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        use_paths(prefix, &inner[start..], out);
        return;
    }
    if let Some((head, tail)) = tree.split_once("::") {
        let mut longer = prefix.to_vec();
        longer.push(head.trim().to_string());
        use_paths(&longer, tail, out);
        return;
    }
    let name = tree.split(" as ").next().unwrap_or("").trim();
    let mut path = prefix.to_vec();
    if !name.is_empty() && name != "self" {
        path.push(name.to_string());
    }
    if !path.is_empty() {
        out.push(path);
    }
}

/// Every path a module's code names that starts in its own crate: `use` trees, and
/// `crate::`, `super::` and `self::` paths in expressions and types.
fn named_paths(code: &str) -> Vec<ModPath> {
    let mut paths = Vec::new();
    for (at, _) in code.match_indices("use ") {
        let before = code[..at].chars().next_back().unwrap_or(' ');
        if before.is_alphanumeric() || before == '_' {
            continue;
        }
        if let Some(end) = code[at..].find(';') {
            use_paths(&[], &code[at + 4..at + end], &mut paths);
        }
    }
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(start) {
            let before = code[..at].chars().next_back().unwrap_or(' ');
            if before.is_alphanumeric() || before == '_' || before == ':' {
                continue;
            }
            let path: String = code[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            paths.push(
                path.split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
            );
        }
    }
    paths
}

/// The module a path from `module` resolves to: the longest prefix that is a module.
fn target(module: &ModPath, path: &ModPath, mods: &BTreeMap<ModPath, PathBuf>) -> Option<ModPath> {
    let first = path.first()?;
    let mut full: ModPath = match first.as_str() {
        "crate" => path[1..].to_vec(),
        "self" => module.iter().chain(&path[1..]).cloned().collect(),
        "super" => {
            let ups = path.iter().take_while(|s| *s == "super").count();
            let keep = module.len().checked_sub(ups)?;
            module[..keep].iter().chain(&path[ups..]).cloned().collect()
        }
        // A child module named without `self::` (`pub use greedy::FirstFit`).
        _ => {
            let mut child = module.clone();
            child.push(first.clone());
            if !mods.contains_key(&child) {
                return None;
            }
            module.iter().chain(path).cloned().collect()
        }
    };
    while !full.is_empty() {
        if mods.contains_key(&full) {
            return Some(full);
        }
        full.pop();
    }
    None
}

/// Module -> the modules it imports from (its ancestors left out: a child may use what
/// its parent defines, and the root re-exports everything).
fn imports(src: &Path) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let mods = modules(src);
    let mut graph = BTreeMap::new();
    for (module, file) in &mods {
        let code = code(&fs::read_to_string(file).unwrap());
        let mut to = BTreeSet::new();
        for path in named_paths(&code) {
            if let Some(t) = target(module, &path, &mods)
                && !module.starts_with(&t)
            {
                to.insert(t);
            }
        }
        graph.insert(module.clone(), to);
    }
    graph
}

fn name(m: &ModPath) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

/// A circle in `graph`, if there is one, as the modules along it.
fn circle(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Option<Vec<String>> {
    // 0: not seen, 1: on the current path, 2: done.
    let mut state: BTreeMap<&ModPath, u8> = BTreeMap::new();
    for start in graph.keys() {
        let mut stack: Vec<(&ModPath, Vec<&ModPath>)> = Vec::new();
        if state.get(start).copied().unwrap_or(0) != 0 {
            continue;
        }
        state.insert(start, 1);
        stack.push((start, graph[start].iter().collect()));
        while let Some((node, next)) = stack.last_mut() {
            let node = *node;
            let Some(to) = next.pop() else {
                state.insert(node, 2);
                stack.pop();
                continue;
            };
            match state.get(to).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|(m, _)| *m == to).unwrap_or(0);
                    let mut path: Vec<String> = stack[at..].iter().map(|(m, _)| name(m)).collect();
                    path.push(name(to));
                    return Some(path);
                }
                0 if graph.contains_key(to) => {
                    state.insert(to, 1);
                    stack.push((to, graph[to].iter().collect()));
                }
                _ => {}
            }
        }
    }
    None
}

/// docs/layout.md's layer blocks: ```` ```text layers <crate> ```` then one line per
/// layer, lowest first, each naming the crate's top-level modules in it (text after `#`
/// is a comment).
fn documented_layers() -> BTreeMap<String, Vec<Vec<String>>> {
    let text = fs::read_to_string(repo().join("docs/layout.md")).unwrap();
    let mut layers = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(krate) = line.trim().strip_prefix("```text layers ") else {
            continue;
        };
        let mut rows = Vec::new();
        for row in lines.by_ref().take_while(|l| l.trim() != "```") {
            let row = row.split('#').next().unwrap_or("");
            rows.push(row.split_whitespace().map(str::to_string).collect());
        }
        layers.insert(krate.to_string(), rows);
    }
    layers
}

fn crate_sources() -> Vec<(String, PathBuf)> {
    let mut crates: Vec<(String, PathBuf)> = fs::read_dir(repo().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("src").is_dir())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                p.join("src"),
            )
        })
        .collect();
    crates.sort();
    crates
}

#[test]
fn no_crate_has_an_import_circle() {
    let crates = crate_sources();
    assert!(crates.len() >= 6, "found only {crates:?}");
    for (krate, src) in crates {
        let graph = imports(&src);
        assert!(
            graph.len() > 1 || krate == "usmp-macros",
            "{krate}: no modules read"
        );
        if let Some(path) = circle(&graph) {
            panic!(
                "{krate}: modules import each other in a circle: {}",
                path.join(" -> ")
            );
        }
    }
}

#[test]
fn imports_follow_the_documented_layers() {
    let layers = documented_layers();
    assert!(
        layers.contains_key("usmp-core") && layers.contains_key("usmp-build"),
        "{layers:?}"
    );
    for (krate, rows) in &layers {
        let graph = imports(&repo().join("crates").join(krate).join("src"));
        let level: BTreeMap<&str, usize> = rows
            .iter()
            .enumerate()
            .flat_map(|(k, row)| row.iter().map(move |m| (m.as_str(), k)))
            .collect();
        let mut wrong = Vec::new();
        for (module, to) in &graph {
            let Some(top) = module.first() else { continue };
            let Some(&from) = level.get(top.as_str()) else {
                wrong.push(format!(
                    "module `{top}` is in no layer of docs/layout.md; add it"
                ));
                continue;
            };
            for t in to {
                let Some(other) = t.first().filter(|o| *o != top) else {
                    continue;
                };
                match level.get(other.as_str()) {
                    Some(&up) if up > from => wrong.push(format!(
                        "`{}` imports from `{}`, a higher layer",
                        name(module),
                        name(t)
                    )),
                    _ => {}
                }
            }
        }
        for name in level.keys() {
            if !graph
                .keys()
                .any(|m| m.first().map(String::as_str) == Some(*name))
            {
                wrong.push(format!("docs/layout.md names `{name}`, which is no module"));
            }
        }
        wrong.sort();
        wrong.dedup();
        assert!(wrong.is_empty(), "{krate}:\n{}", wrong.join("\n"));
    }
}

/// The reader itself: a circle and an upward import are found, in the shapes the crates
/// use (a `use` tree with braces, a child named without `self::`, a `crate::` path in an
/// expression), and comments and strings are not read as paths.
#[test]
fn the_checker_finds_circles_and_ignores_comments() {
    let dir = std::env::temp_dir().join(format!("usmp-layers-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("algo")).unwrap();
    fs::write(dir.join("lib.rs"), "mod algo; mod plan;").unwrap();
    fs::write(
        dir.join("algo/mod.rs"),
        "mod greedy;\npub use greedy::{First, Second as S};",
    )
    .unwrap();
    fs::write(
        dir.join("algo/greedy.rs"),
        "// use crate::nothing;\nconst S: &str = \"crate::plan\";\nfn f() { super::x(); }",
    )
    .unwrap();
    fs::write(dir.join("plan.rs"), "fn g() -> u8 { 'a' as u8 }").unwrap();
    let graph = imports(&dir);
    assert_eq!(circle(&graph), None, "{graph:?}");
    let algo = vec!["algo".to_string()];
    let greedy = vec!["algo".to_string(), "greedy".to_string()];
    assert_eq!(graph[&algo], BTreeSet::from([greedy.clone()]));
    assert!(graph[&greedy].is_empty(), "{graph:?}");
    fs::write(dir.join("plan.rs"), "fn g() { crate::algo::greedy::f() }").unwrap();
    fs::write(dir.join("algo/greedy.rs"), "use crate::{plan::Plan, x};").unwrap();
    let circle = circle(&imports(&dir)).unwrap();
    assert!(circle.contains(&"plan".to_string()) && circle.contains(&"algo::greedy".to_string()));
    fs::remove_dir_all(&dir).unwrap();
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn no_source_file_is_over_600_lines() {
    let mut files = Vec::new();
    for (_, src) in crate_sources() {
        rust_files(&src, &mut files);
        // The integration tests too; golden files are generated output, not source.
        let tests = src.with_file_name("tests");
        if tests.is_dir() {
            rust_files(&tests, &mut files);
        }
    }
    files.retain(|f| !f.components().any(|c| c.as_os_str() == "golden"));
    assert!(files.len() > 60, "{files:?}");
    let long: Vec<String> = files
        .iter()
        .map(|f| (f, fs::read_to_string(f).unwrap().lines().count()))
        .filter(|(_, n)| *n > 600)
        .map(|(f, n)| format!("{}: {n} lines", f.display()))
        .collect();
    assert!(long.is_empty(), "split these files:\n{}", long.join("\n"));
}

/// Functions longer than 80 lines that are known and not yet split: the list may only
/// shrink (a function split, its entry removed).
const LONG_FUNCTIONS: &[&str] = &[];

/// `(name, lines)` of every function with a body in `code` (comments, literals and test
/// modules already removed by [`code`]).
fn functions(code: &str) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("fn ") {
        let before = code[..at].chars().next_back().unwrap_or(' ');
        if before.is_alphanumeric() || before == '_' {
            continue;
        }
        let rest = &code[at + 3..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(open) = rest.find(['{', ';']) else {
            continue;
        };
        if name.is_empty() || rest.as_bytes()[open] == b';' {
            continue;
        }
        let mut depth = 0usize;
        let mut end = rest.len();
        for (k, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k;
                        break;
                    }
                }
                _ => {}
            }
        }
        // From the `fn` line to the closing brace's, both counted.
        found.push((name, rest[..end].matches('\n').count() + 1));
    }
    found
}

#[test]
fn no_function_outside_tests_is_over_80_lines() {
    let mut long = Vec::new();
    for (krate, src) in crate_sources() {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for file in files {
            // Test-only files: `tests.rs`, and those of a `tests/` folder beside it.
            let in_src = file.strip_prefix(&src).unwrap();
            if file.file_name().is_some_and(|n| n == "tests.rs")
                || in_src.components().any(|c| c.as_os_str() == "tests")
            {
                continue;
            }
            let rel = file.strip_prefix(src.parent().unwrap()).unwrap();
            for (name, lines) in functions(&code(&fs::read_to_string(&file).unwrap())) {
                if lines > 80 {
                    long.push(format!("{krate}/{}: {name}", rel.display()));
                }
            }
        }
    }
    long.sort();
    let mut known: Vec<String> = LONG_FUNCTIONS.iter().map(|s| s.to_string()).collect();
    known.sort();
    let new: Vec<&String> = long.iter().filter(|f| !known.contains(f)).collect();
    assert!(
        new.is_empty(),
        "functions over 80 lines: split them\n{new:#?}"
    );
    let done: Vec<&String> = known.iter().filter(|f| !long.contains(f)).collect();
    assert!(
        done.is_empty(),
        "no longer over 80 lines: remove from LONG_FUNCTIONS\n{done:#?}"
    );
}
