//! A small JSON reader that remembers where every value and key starts, so that errors
//! found after parsing ("unknown pool", "size must be positive") can still name the line
//! and column. Objects keep their keys in file order; duplicate keys are an error.

use std::borrow::Cow;
use std::cell::Cell;

use super::{InputError, Pos};

/// From this many keys on, an object's keys are checked for repeats with a set, so that a
/// hostile object of many keys is read in linear time.
const DUPLICATES_BY_SET: usize = 16;

/// Deeper nesting than this is rejected rather than risking the stack on hostile input.
const MAX_DEPTH: usize = 64;

/// A JSON value and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Json<'a> {
    /// The value.
    pub value: Value<'a>,
    /// Where it starts.
    pub pos: Pos,
}

/// An object's key.
pub type Key = std::rc::Rc<str>;

/// How many distinct keys the parser shares; past them a key is its own copy.
const SHARED_KEYS: usize = 64;

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    /// `null`
    Null,
    /// `true` or `false`
    Bool(bool),
    /// A number, as written.
    Number(Number),
    /// A string, unescaped: borrowed from the text unless it had escapes, so that a
    /// million names are read without a million allocations.
    String(Cow<'a, str>),
    /// An array.
    Array(Box<[Json<'a>]>),
    /// An array under a key named `data` whose items are all whole numbers from 0 to 255
    /// (a constant's inline bytes), kept as bytes: a model with megabytes of inline data
    /// is read at the size of its data rather than of a value per byte.
    Bytes(Box<[u8]>),
    /// An object: keys with their positions, in file order. Keys are shared: a file
    /// of a million objects with the same five keys holds five key strings.
    Object(Box<[(Key, Pos, Json<'a>)]>),
}

/// A number. A plain whole number (digits only, no leading zero, within 64 bits: sizes,
/// indices, the bytes of inline data) is kept as its value, which gives back its text
/// exactly; any other is kept as written, so that integers of any size stay exact and
/// messages quote what was written. Keeping no text for the common case is what lets a
/// model with megabytes of inline data be read in little more memory than its values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Number {
    /// A plain whole number.
    Whole(u64),
    /// Any other number, as written (`-1`, `1.5`, `2e3`, `007`, or above `u64::MAX`).
    Text(Box<str>),
}

impl Number {
    /// The number as written.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Number::Whole(v) => v.to_string().into(),
            Number::Text(t) => std::borrow::Cow::Borrowed(t),
        }
    }
}

impl Value<'_> {
    /// What to call this kind of value in an error message.
    pub fn describe(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) | Value::Bytes(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// The parser's results: the error is boxed so that every value moves through the
/// recursion at its own size, not at the size of an error.
type Parsed<T> = Result<T, Box<InputError>>;

/// Parses `text`; errors name `file` and the position.
pub fn parse<'a>(text: &'a str, file: &str) -> Result<Json<'a>, InputError> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        at: 0,
        line: 1,
        line_start: 0,
        column: Cell::new((0, 0)),
        file,
        keys: Vec::new(),
        items: Vec::new(),
        entries: Vec::new(),
    };
    p.skip_space();
    let value = p.value(0).map_err(|e| *e)?;
    p.skip_space();
    if p.at < p.bytes.len() {
        return Err(*p.error("unexpected text after the end of the JSON value"));
    }
    Ok(value)
}

struct Parser<'a, 'f> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    line: usize,
    line_start: usize,
    /// The last position asked for, as (byte offset, characters since its line's start):
    /// positions are asked for in file order, so counting on from there keeps the whole
    /// parse linear even when the file is one long line.
    column: Cell<(usize, usize)>,
    file: &'f str,
    /// The keys read so far, to share (see [`Value::Object`]).
    keys: Vec<Key>,
    /// The items of the arrays and the entries of the objects being read, innermost last:
    /// each is moved out into a list of exactly its length once complete. Growing each
    /// list as it is read would leave room for four items in a list of one or two (the
    /// tree of a million small objects would be half empty space).
    items: Vec<Json<'a>>,
    entries: Vec<(Key, Pos, Json<'a>)>,
}

impl<'a> Parser<'a, '_> {
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
        Pos::new(self.line, chars + 1)
    }

    fn error(&self, message: impl Into<String>) -> Box<InputError> {
        Box::new(InputError::at(self.file, self.pos(), message))
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

    fn expect(&mut self, byte: u8, what: &str) -> Parsed<()> {
        if self.peek() == Some(byte) {
            self.bump();
            Ok(())
        } else {
            Err(self.error(format!("expected {what}")))
        }
    }

    fn value(&mut self, depth: usize) -> Parsed<Json<'a>> {
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

    fn word(&mut self, word: &str, value: Value<'a>) -> Parsed<Value<'a>> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            for _ in 0..word.len() {
                self.bump();
            }
            Ok(value)
        } else {
            Err(self.error("expected a JSON value; strings need double quotes"))
        }
    }

    fn object(&mut self, depth: usize) -> Parsed<Value<'a>> {
        self.bump();
        let start = self.entries.len();
        let mut seen = std::collections::HashSet::new();
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.bump();
            return Ok(Value::Object(Box::default()));
        }
        loop {
            self.skip_space();
            let key_pos = self.pos();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a key in double quotes"));
            }
            let key = self.key()?;
            let earlier = &self.entries[start..];
            // A set only for big objects: most have a handful of keys.
            if earlier.len() == DUPLICATES_BY_SET {
                seen.extend(earlier.iter().map(|(k, _, _)| Key::clone(k)));
            }
            let twice = if earlier.len() < DUPLICATES_BY_SET {
                earlier.iter().any(|(k, _, _)| *k == key)
            } else {
                !seen.insert(Key::clone(&key))
            };
            if twice {
                return Err(Box::new(InputError::at(
                    self.file,
                    key_pos,
                    format!("key \"{key}\" appears twice in this object"),
                )));
            }
            self.skip_space();
            self.expect(b':', "':' after the key")?;
            self.skip_space();
            let value = if &*key == "data" && self.peek() == Some(b'[') {
                self.bytes_or_value(depth + 1)?
            } else {
                self.value(depth + 1)?
            };
            self.entries.push((key, key_pos, value));
            self.skip_space();
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b'}') => {
                    self.bump();
                    return Ok(Value::Object(self.entries.drain(start..).collect()));
                }
                _ => return Err(self.error("expected ',' or '}' in the object")),
            }
        }
    }

    /// At `[`: the array as [`Value::Bytes`] when every item is a plain whole number up to
    /// 255, otherwise read again from its start as any value (at most twice the work).
    fn bytes_or_value(&mut self, depth: usize) -> Parsed<Json<'a>> {
        let start = (self.at, self.line, self.line_start, self.column.get());
        let pos = self.pos();
        self.bump();
        let mut bytes = Vec::new();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.bump();
            return Ok(Json {
                value: Value::Bytes(bytes.into()),
                pos,
            });
        }
        loop {
            self.skip_space();
            let from = self.at;
            let mut v: u32 = 0;
            while let Some(d @ b'0'..=b'9') = self.peek() {
                v = v * 10 + u32::from(d - b'0');
                self.at += 1;
                if v > 255 {
                    break;
                }
            }
            let digits = self.at - from;
            let plain = digits > 0 && (digits == 1 || self.bytes[from] != b'0');
            if !plain || v > 255 || matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
                break;
            }
            bytes.push(v as u8);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b']') => {
                    self.bump();
                    return Ok(Json {
                        value: Value::Bytes(bytes.into()),
                        pos,
                    });
                }
                _ => break,
            }
        }
        (self.at, self.line, self.line_start) = (start.0, start.1, start.2);
        self.column.set(start.3);
        self.value(depth)
    }

    fn array(&mut self, depth: usize) -> Parsed<Value<'a>> {
        self.bump();
        let start = self.items.len();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.bump();
            return Ok(Value::Array(Box::default()));
        }
        loop {
            self.skip_space();
            let item = self.value(depth + 1)?;
            self.items.push(item);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b']') => {
                    self.bump();
                    return Ok(Value::Array(self.items.drain(start..).collect()));
                }
                _ => return Err(self.error("expected ',' or ']' in the array")),
            }
        }
    }

    /// At `"`: a key, shared with earlier keys of the same text.
    fn key(&mut self) -> Parsed<Key> {
        let text = match self.plain_string() {
            Some(text) => text,
            None => return Ok(Key::from(&*self.string()?)),
        };
        if let Some(k) = self.keys.iter().find(|k| ***k == *text) {
            return Ok(Key::clone(k));
        }
        let key = Key::from(text);
        if self.keys.len() < SHARED_KEYS {
            self.keys.push(Key::clone(&key));
        }
        Ok(key)
    }

    /// At `"`: the string and past it when it has no escape and no control character
    /// (almost every string); otherwise `None`, having moved nowhere.
    fn plain_string(&mut self) -> Option<&'a str> {
        let body = self.bytes.get(self.at + 1..)?;
        let len = body
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        if body[len] != b'"' {
            return None;
        }
        // Cut at ASCII bytes of the text, so at character boundaries; no newline inside,
        // so the line stays.
        let text = self.text.get(self.at + 1..self.at + 1 + len)?;
        self.at += len + 2;
        Some(text)
    }

    fn string(&mut self) -> Parsed<Cow<'a, str>> {
        if let Some(text) = self.plain_string() {
            return Ok(Cow::Borrowed(text));
        }
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
                        .map(Cow::Owned)
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
    fn unicode_escape(&mut self) -> Parsed<char> {
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
    fn hex4(&mut self) -> Parsed<u32> {
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

    fn number(&mut self) -> Parsed<Number> {
        let start = self.at;
        // No newline inside a number: `at` moves without `bump`'s line bookkeeping.
        let digits = |p: &mut Self| {
            let from = p.at;
            while matches!(p.peek(), Some(b'0'..=b'9')) {
                p.at += 1;
            }
            p.at > from
        };
        let minus = self.peek() == Some(b'-');
        if minus {
            self.at += 1;
        }
        if !digits(self) {
            return Err(self.error("expected digits in the number"));
        }
        let whole_end = self.at;
        if self.peek() == Some(b'.') {
            self.at += 1;
            if !digits(self) {
                return Err(self.error("expected digits after the decimal point"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !digits(self) {
                return Err(self.error("expected digits in the exponent"));
            }
        }
        let text = &self.bytes[start..self.at];
        // Digits only, no leading zero: the value gives back exactly this text.
        let plain =
            !minus && whole_end == self.at && (text.first() != Some(&b'0') || text.len() == 1);
        let value = plain
            .then(|| {
                text.iter().try_fold(0u64, |v, &d| {
                    v.checked_mul(10)?.checked_add(u64::from(d - b'0'))
                })
            })
            .flatten();
        Ok(match value {
            Some(v) => Number::Whole(v),
            None => Number::Text(String::from_utf8_lossy(text).into()),
        })
    }
}

#[cfg(test)]
mod tests;
