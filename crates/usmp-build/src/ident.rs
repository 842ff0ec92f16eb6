//! Rust identifiers from user names: pool and module names must already be identifiers;
//! tensor names (`sequential/conv2d/Relu;...`) are turned into constant names.

use std::collections::BTreeSet;

/// Words Rust reserves in any edition; a module or pool cannot be called these.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "try",
    "type", "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield",
];

/// Names the generated module defines itself; a pool or model called this would clash.
const TAKEN: &[&str] = &["workspace", "buffer", "pool_info", "pools", "call"];

/// Whether `s` is a lower-case identifier usable as a pool or module name
/// (`[a-z_][a-z0-9_]*`, not a keyword): it becomes `snake` module names and
/// `UPPER` constants, so upper case would only be folded away.
pub fn check_name(s: &str) -> Result<(), String> {
    let mut chars = s.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !first_ok || !rest_ok {
        return Err(format!(
            "`{s}` is not a lower-case Rust identifier; write letters a-z, digits and `_`, \
             starting with a letter, e.g. `{}`",
            snake_suggestion(s)
        ));
    }
    if KEYWORDS.contains(&s) || TAKEN.contains(&s) || s == "_" {
        return Err(format!(
            "`{s}` is reserved (a Rust keyword or a name the generated module uses); pick another"
        ));
    }
    Ok(())
}

/// A lower-case identifier close to `s`, for advice.
pub(crate) fn snake_suggestion(s: &str) -> String {
    let mut out = words(s).join("_").to_ascii_lowercase();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "m_");
    }
    out
}

/// Alphanumeric runs of `s`.
fn words(s: &str) -> Vec<&str> {
    s.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Longest constant name made from a tensor name before it is cut.
const MAX_CONST: usize = 40;

/// `UPPER_SNAKE` constant names for `names`, unique, deterministic, never a keyword and
/// never one of `reserved`: `sequential/conv2d/Relu` becomes `SEQUENTIAL_CONV2D_RELU`;
/// TFLite's long `a;b;c` names keep their first part; clashes get `_<index>`.
pub fn constant_names(names: &[&str], reserved: &[&str]) -> Vec<String> {
    let stems: Vec<String> = names
        .iter()
        .map(|n| {
            let first = n.split(';').next().unwrap_or(n);
            let mut w = words(first);
            // Keep the last words: they name the layer; the first are the model's scope.
            while w.len() > 1 && w.iter().map(|x| x.len() + 1).sum::<usize>() > MAX_CONST + 1 {
                w.remove(0);
            }
            let mut s = w.join("_").to_ascii_uppercase();
            if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
                s.insert_str(0, "T_");
            }
            s
        })
        .collect();
    let mut count = std::collections::BTreeMap::<&str, usize>::new();
    for s in &stems {
        *count.entry(s).or_default() += 1;
    }
    let mut used: BTreeSet<String> = reserved.iter().map(|s| s.to_string()).collect();
    let mut out = Vec::with_capacity(names.len());
    for (i, s) in stems.iter().enumerate() {
        let mut name = if count[s.as_str()] > 1 || used.contains(s) {
            format!("{s}_{i}")
        } else {
            s.clone()
        };
        while used.contains(&name) {
            name.push('_');
        }
        used.insert(name.clone());
        out.push(name);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_names_must_be_snake_identifiers() {
        assert!(check_name("dtcm").is_ok());
        assert!(check_name("sram_2").is_ok());
        let e = check_name("Ext-RAM").unwrap_err();
        assert!(e.contains("`ext_ram`"), "{e}");
        assert!(check_name("2sram").unwrap_err().contains("m_2sram"));
        assert!(check_name("static").unwrap_err().contains("reserved"));
        assert!(check_name("workspace").unwrap_err().contains("reserved"));
        assert!(check_name("").is_err());
    }

    #[test]
    fn constant_names_are_unique_and_readable() {
        let names = [
            "sequential/conv2d/Relu;sequential/conv2d/BiasAdd",
            "input",
            "a b",
            "a-b",
            "0",
            "x_very_long_scope_name/with/many/levels/and/a/final/layer_name",
            "CALLS",
        ];
        let got = constant_names(&names, &["CALLS"]);
        assert_eq!(got[0], "SEQUENTIAL_CONV2D_RELU");
        assert_eq!(got[1], "INPUT");
        assert_eq!(got[2], "A_B_2");
        assert_eq!(got[3], "A_B_3");
        assert_eq!(got[4], "T_0");
        assert_eq!(got[5], "WITH_MANY_LEVELS_AND_A_FINAL_LAYER_NAME");
        assert_eq!(got[6], "CALLS_6");
    }
}
