//! The generated module's layout: every line that is longer than [`WIDTH`] is broken the
//! way rustfmt breaks it, so the file reads like hand-formatted Rust. A comment is wrapped
//! at its words; code is broken at the widest bracket group of the line (a call's
//! arguments, a slice, a struct literal), one element per line with a trailing comma,
//! and each element broken again if it is still too long. Only the layout changes: the
//! tokens, and so the code, are the same.

/// The longest line the generator writes, where a line can be broken (a single string
/// literal or word longer than this stays whole).
pub const WIDTH: usize = 100;

/// Elements of a slice at most this long fill lines rather than taking one each
/// (rustfmt's `short_array_element_width_threshold`).
const SHORT: usize = 10;

/// `text` with every over-long line broken.
pub fn lay_out(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in text.lines() {
        if line.chars().count() <= WIDTH {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let body = line.trim_start();
        match comment_prefix(body) {
            Some(prefix) => wrap_comment(&mut out, &line[..indent], prefix, &body[prefix.len()..]),
            None => break_code(&mut out, &line[..indent], body),
        }
    }
    out
}

/// `//!`, `///` or `//` (with the space after it), when `body` is a comment.
fn comment_prefix(body: &str) -> Option<&'static str> {
    ["//! ", "/// ", "// "]
        .into_iter()
        .find(|p| body.starts_with(p))
}

fn wrap_comment(out: &mut String, indent: &str, prefix: &str, text: &str) {
    let room = WIDTH.saturating_sub(indent.len() + prefix.len()).max(20);
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > room {
            out.push_str(&format!("{indent}{prefix}{line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&format!("{indent}{prefix}{line}\n"));
}

/// A bracket group of a line of code: the byte offsets of its opening and closing
/// bracket, and of the commas directly inside it.
struct Group {
    open: usize,
    close: usize,
    commas: Vec<usize>,
}

/// The bracket groups at the outermost level of `code` that close on the same line;
/// string, byte string and character literals are skipped, and a lifetime is no quote.
fn groups(code: &str) -> Vec<Group> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut stack: Vec<Group> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = after_literal(bytes, i, b'"'),
            b'\'' if bytes.get(i + 2) == Some(&b'\'') || bytes.get(i + 1) == Some(&b'\\') => {
                i = after_literal(bytes, i, b'\'');
            }
            b'(' | b'[' | b'{' => {
                stack.push(Group {
                    open: i,
                    close: i,
                    commas: Vec::new(),
                });
                i += 1;
            }
            b')' | b']' | b'}' => {
                if let Some(mut g) = stack.pop() {
                    g.close = i;
                    if stack.is_empty() {
                        found.push(g);
                    }
                }
                i += 1;
            }
            b',' => {
                if let Some(g) = stack.last_mut() {
                    g.commas.push(i);
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    found
}

/// The offset just past the literal that starts with `quote` at `start`.
fn after_literal(bytes: &[u8], start: usize, quote: u8) -> usize {
    let mut i = start + 1;
    while i < bytes.len() && bytes[i] != quote {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    i + 1
}

fn break_code(out: &mut String, indent: &str, code: &str) {
    let widest = groups(code)
        .into_iter()
        .filter(|g| g.close > g.open + 1)
        .max_by_key(|g| (g.close - g.open, std::cmp::Reverse(g.open)));
    let Some(g) = widest else {
        out.push_str(&format!("{indent}{code}\n"));
        return;
    };
    let inner = format!("{indent}    ");
    let mut from = g.open + 1;
    let mut items: Vec<&str> = Vec::new();
    for &comma in g.commas.iter().chain(std::iter::once(&g.close)) {
        let item = code[from..comma].trim();
        if !item.is_empty() {
            items.push(item);
        }
        from = comma + 1;
    }
    out.push_str(&format!("{indent}{}\n", code[..=g.open].trim_end()));
    if code.as_bytes()[g.open] == b'[' && items.iter().all(|i| i.chars().count() <= SHORT) {
        // A slice of short elements (numbers, mostly) fills its lines, as rustfmt does.
        fill(out, &inner, &items);
        items.clear();
    }
    for item in items {
        let line = format!("{inner}{item},");
        if line.chars().count() <= WIDTH {
            out.push_str(&line);
            out.push('\n');
        } else {
            break_code(out, &inner, &format!("{item},"));
        }
    }
    let rest = format!("{indent}{}", &code[g.close..]);
    if rest.chars().count() <= WIDTH {
        out.push_str(&rest);
        out.push('\n');
    } else {
        break_code(out, indent, &code[g.close..]);
    }
}

/// `items`, each followed by a comma, as many to a line as fit.
fn fill(out: &mut String, indent: &str, items: &[&str]) {
    let mut line = String::new();
    for item in items {
        if !line.is_empty() && indent.len() + line.len() + 1 + item.len() + 1 > WIDTH {
            out.push_str(&format!("{indent}{line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(item);
        line.push(',');
    }
    out.push_str(&format!("{indent}{line}\n"));
}

#[cfg(test)]
mod tests {
    use super::{WIDTH, lay_out};

    /// The tokens of `text`, without whitespace and the commas a break adds before a
    /// closing bracket: what must not change.
    fn tokens(text: &str) -> String {
        let joined: String = text.split_whitespace().collect();
        joined
            .replace(",)", ")")
            .replace(",]", "]")
            .replace(",}", "}")
    }

    #[test]
    fn long_lines_break_at_their_widest_group_and_keep_their_tokens() {
        let items: Vec<String> = (0..30)
            .map(|i| format!("Slot::buffer({i}, Some({i}))"))
            .collect();
        let code = format!(
            "    pub const X: &[Slot] = &[{}];\n    CallInfo {{ op: Op::Named(\"a, (b\"), inputs: &[{}] }},\n",
            items.join(", "),
            items[..4].join(", ")
        );
        let laid = lay_out(&code);
        assert!(laid.lines().all(|l| l.chars().count() <= WIDTH), "{laid}");
        assert_eq!(tokens(&laid), tokens(&code));
        assert!(
            laid.starts_with("    pub const X: &[Slot] = &[\n        Slot::buffer(0, Some(0)),\n"),
            "{laid}"
        );
        // The string literal's comma and bracket are not the code's.
        assert!(
            laid.contains("        op: Op::Named(\"a, (b\"),\n"),
            "{laid}"
        );
        assert!(laid.ends_with("    },\n"), "{laid}");
    }

    #[test]
    fn short_elements_fill_their_lines() {
        let numbers: Vec<String> = (0..60).map(|i| (i * 1_000_003).to_string()).collect();
        let code = format!("    multipliers: &[{}],\n", numbers.join(", "));
        let laid = lay_out(&code);
        assert!(laid.lines().all(|l| l.chars().count() <= WIDTH), "{laid}");
        assert_eq!(tokens(&laid), tokens(&code));
        assert!(laid.lines().count() < 12, "{laid}");
        assert!(
            laid.starts_with("    multipliers: &[\n        0, 1000003, 2000006,"),
            "{laid}"
        );
    }

    #[test]
    fn comments_wrap_at_words_and_short_lines_stay() {
        let words = "word ".repeat(40);
        let text = format!("fn f() {{}}\n    /// {words}\n");
        let laid = lay_out(&text);
        assert!(laid.starts_with("fn f() {}\n    /// word word"), "{laid}");
        assert!(
            laid.lines()
                .skip(1)
                .all(|l| l.starts_with("    /// ") && l.len() <= WIDTH)
        );
        assert_eq!(
            tokens(&laid).replace("///", ""),
            tokens(&text).replace("///", "")
        );
        assert_eq!(lay_out("const A: u8 = 1;\n"), "const A: u8 = 1;\n");
    }

    #[test]
    fn a_call_opening_a_block_breaks_its_arguments() {
        let line = format!(
            "const _: () = if let Err(v) = ::usmp::check_module(POOLS, &[{}], &[&a::INFO]) {{\n",
            "SRAM.0.size(), ".repeat(6).trim_end_matches(", ")
        );
        let laid = lay_out(&line);
        assert!(
            laid.starts_with("const _: () = if let Err(v) = ::usmp::check_module(\n    POOLS,\n"),
            "{laid}"
        );
        assert!(laid.ends_with(") {\n"), "{laid}");
    }
}
