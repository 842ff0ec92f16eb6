//! A small JSON reader that remembers where every value and key starts, so that errors
//! found after parsing ("unknown pool", "size must be positive") can still name the line
//! and column. Objects keep their keys in file order; duplicate keys are an error.

use std::cell::Cell;

use super::{InputError, Pos};

/// Deeper nesting than this is rejected rather than risking the stack on hostile input.
const MAX_DEPTH: usize = 64;

/// A JSON value and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Json {
    /// The value.
    pub value: Value,
    /// Where it starts.
    pub pos: Pos,
}

/// A JSON value. Numbers keep their text so that integers of any size stay exact.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`
    Null,
    /// `true` or `false`
    Bool(bool),
    /// A number, as written.
    Number(String),
    /// A string, unescaped.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object: keys with their positions, in file order.
    Object(Vec<(String, Pos, Json)>),
}

impl Value {
    /// What to call this kind of value in an error message.
    pub fn describe(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// Parses `text`; errors name `file` and the position.
pub fn parse(text: &str, file: &str) -> Result<Json, InputError> {
    let mut p = Parser {
        bytes: text.as_bytes(),
        at: 0,
        line: 1,
        line_start: 0,
        column: Cell::new((0, 0)),
        file,
    };
    p.skip_space();
    let value = p.value(0)?;
    p.skip_space();
    if p.at < p.bytes.len() {
        return Err(p.error("unexpected text after the end of the JSON value"));
    }
    Ok(value)
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
    line: usize,
    line_start: usize,
    /// The last position asked for, as (byte offset, characters since its line's start):
    /// positions are asked for in file order, so counting on from there keeps the whole
    /// parse linear even when the file is one long line.
    column: Cell<(usize, usize)>,
    file: &'a str,
}

impl Parser<'_> {
    fn pos(&self) -> Pos {
        let (mut from, mut chars) = self.column.get();
        if from < self.line_start || from > self.at {
            (from, chars) = (self.line_start, 0);
        }
        // Columns count characters, not bytes, so they match what an editor shows: every
        // byte but a UTF-8 continuation byte starts one (the text is a valid `str`).
        chars += self.bytes[from..self.at]
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count();
        self.column.set((self.at, chars));
        Pos {
            line: self.line,
            column: chars + 1,
        }
    }

    fn error(&self, message: impl Into<String>) -> InputError {
        InputError::at(self.file, self.pos(), message)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn bump(&mut self) {
        if self.peek() == Some(b'\n') {
            self.line += 1;
            self.line_start = self.at + 1;
        }
        self.at += 1;
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.bump();
        }
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), InputError> {
        if self.peek() == Some(byte) {
            self.bump();
            Ok(())
        } else {
            Err(self.error(format!("expected {what}")))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, InputError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        let pos = self.pos();
        let value =
            match self.peek() {
                Some(b'{') => self.object(depth)?,
                Some(b'[') => self.array(depth)?,
                Some(b'"') => Value::String(self.string()?),
                Some(b'-' | b'0'..=b'9') => Value::Number(self.number()?),
                Some(b't') => self.word("true", Value::Bool(true))?,
                Some(b'f') => self.word("false", Value::Bool(false))?,
                Some(b'n') => self.word("null", Value::Null)?,
                Some(_) => return Err(self.error(
                    "expected a JSON value (object, array, string, number, true, false or null)",
                )),
                None => return Err(self.error("the file ends where a JSON value was expected")),
            };
        Ok(Json { value, pos })
    }

    fn word(&mut self, word: &str, value: Value) -> Result<Value, InputError> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            for _ in 0..word.len() {
                self.bump();
            }
            Ok(value)
        } else {
            Err(self.error("expected a JSON value; strings need double quotes"))
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, InputError> {
        self.bump();
        let mut entries: Vec<(String, Pos, Json)> = Vec::new();
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.bump();
            return Ok(Value::Object(entries));
        }
        loop {
            self.skip_space();
            let key_pos = self.pos();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a key in double quotes"));
            }
            let key = self.string()?;
            if entries.iter().any(|(k, _, _)| *k == key) {
                return Err(InputError::at(
                    self.file,
                    key_pos,
                    format!("key \"{key}\" appears twice in this object"),
                ));
            }
            self.skip_space();
            self.expect(b':', "':' after the key")?;
            self.skip_space();
            let value = self.value(depth + 1)?;
            entries.push((key, key_pos, value));
            self.skip_space();
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b'}') => {
                    self.bump();
                    return Ok(Value::Object(entries));
                }
                _ => return Err(self.error("expected ',' or '}' in the object")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, InputError> {
        self.bump();
        let mut items = Vec::new();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.bump();
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_space();
            items.push(self.value(depth + 1)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b']') => {
                    self.bump();
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected ',' or ']' in the array")),
            }
        }
    }

    fn string(&mut self) -> Result<String, InputError> {
        self.bump();
        let mut out = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error("the file ends inside a string"));
            };
            match c {
                b'"' => {
                    self.bump();
                    return String::from_utf8(out)
                        .map_err(|_| self.error("the string is not valid UTF-8"));
                }
                b'\\' => {
                    self.bump();
                    let escaped = match self.peek() {
                        Some(b'u') => self.unicode_escape()?,
                        Some(c) => {
                            let simple = match c {
                                b'"' => '"',
                                b'\\' => '\\',
                                b'/' => '/',
                                b'b' => '\u{8}',
                                b'f' => '\u{c}',
                                b'n' => '\n',
                                b'r' => '\r',
                                b't' => '\t',
                                _ => {
                                    return Err(self.error(
                                        "unknown escape in string; write \\\\ for a backslash",
                                    ));
                                }
                            };
                            self.bump();
                            simple
                        }
                        None => return Err(self.error("the file ends inside a string")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(escaped.encode_utf8(&mut buf).as_bytes());
                }
                0..=0x1f => return Err(self.error("control character in string; escape it")),
                _ => {
                    out.push(c);
                    self.bump();
                }
            }
        }
    }

    /// Reads `uXXXX` (and a following low surrogate when needed) and moves past it.
    fn unicode_escape(&mut self) -> Result<char, InputError> {
        let first = self.hex4()?;
        let code = if (0xd800..0xdc00).contains(&first) {
            if !self.bytes[self.at..].starts_with(b"\\u") {
                return Err(self.error("a high surrogate must be followed by a \\u low surrogate"));
            }
            self.bump();
            let second = self.hex4()?;
            if !(0xdc00..0xe000).contains(&second) {
                return Err(self.error("invalid low surrogate in \\u escape"));
            }
            0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00)
        } else {
            first
        };
        char::from_u32(code).ok_or_else(|| self.error("\\u escape names no character"))
    }

    /// At `u`: consumes `uXXXX` and returns the value.
    fn hex4(&mut self) -> Result<u32, InputError> {
        self.bump();
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.error("\\u needs four hex digits"))?;
        let text =
            std::str::from_utf8(digits).map_err(|_| self.error("\\u needs four hex digits"))?;
        let value =
            u32::from_str_radix(text, 16).map_err(|_| self.error("\\u needs four hex digits"))?;
        for _ in 0..4 {
            self.bump();
        }
        Ok(value)
    }

    fn number(&mut self) -> Result<String, InputError> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.bump();
        }
        let digits = |p: &mut Self| {
            let from = p.at;
            while matches!(p.peek(), Some(b'0'..=b'9')) {
                p.bump();
            }
            p.at > from
        };
        if !digits(self) {
            return Err(self.error("expected digits in the number"));
        }
        if self.peek() == Some(b'.') {
            self.bump();
            if !digits(self) {
                return Err(self.error("expected digits after the decimal point"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.bump();
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.bump();
            }
            if !digits(self) {
                return Err(self.error("expected digits in the exponent"));
            }
        }
        Ok(String::from_utf8_lossy(&self.bytes[start..self.at]).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_values_with_positions() {
        let j = parse("{\n  \"a\": [1, -2.5e3, \"x\\n\\u00e9\\ud83d\\ude00\"],\n  \"b\": {\"c\": null, \"d\": true}\n}", "t.json").unwrap();
        let Value::Object(entries) = &j.value else {
            panic!()
        };
        assert_eq!(entries[0].0, "a");
        assert_eq!(entries[0].1, Pos { line: 2, column: 3 });
        let Value::Array(items) = &entries[0].2.value else {
            panic!()
        };
        assert_eq!(items[1].value, Value::Number("-2.5e3".into()));
        assert_eq!(items[2].value, Value::String("x\né😀".into()));
        assert_eq!(
            items[2].pos,
            Pos {
                line: 2,
                column: 20
            }
        );
        assert_eq!(entries[1].1, Pos { line: 3, column: 3 });
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let e = parse("{\"a\": 1,\n \"a\": 2}", "f.json").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.json:2:2: key \"a\" appears twice in this object"
        );
        let e = parse("[1, 2", "f.json").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.json:1:6: expected ',' or ']' in the array"
        );
        let e = parse("{'a': 1}", "f.json").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("f.json:1:2: expected a key in double quotes"),
            "{e}"
        );
        assert!(
            parse(&"[".repeat(1000), "deep.json")
                .unwrap_err()
                .to_string()
                .contains("nesting")
        );
        assert!(parse("\"\\ud800\"", "s.json").is_err());
        // Columns count characters, continued from one position to the next on one long
        // line, and start again on the next line.
        let long = format!("[\"é\", {}\"ü\", x]", "1, ".repeat(10_000));
        let e = parse(&long, "l.json").unwrap_err();
        // `x` is at byte find(", x]") + 2; "é" and "ü" before it are 2 bytes, 1 character.
        let x_byte = long.find(", x]").unwrap() + 2;
        let column = x_byte - 2 + 1;
        assert!(
            e.to_string()
                .starts_with(&format!("l.json:1:{column}: expected a JSON value")),
            "{e}"
        );
        let v = parse("[\"ü\",\n \"é\", 7]", "m.json").unwrap();
        let Value::Array(items) = v.value else {
            panic!("an array")
        };
        assert_eq!(items[1].pos, Pos { line: 2, column: 2 });
        assert_eq!(items[2].pos, Pos { line: 2, column: 7 });
        assert!(parse("1 2", "s.json").is_err());
        assert!(parse("", "s.json").is_err());
    }
}
