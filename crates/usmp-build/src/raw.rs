//! A TOML document as written, every key and value with its byte span, so that
//! [`crate::manifest`] can read each key on its own and report every wrong one together
//! (a typed serde struct stops at the first value of the wrong type).

use std::fmt;
use std::ops::Range;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use toml::Spanned;

/// A byte range in the document.
pub type Span = Range<usize>;

/// One value.
#[derive(Debug)]
pub enum Raw {
    /// An integer (TOML's are 64-bit signed).
    Int(i64),
    /// A float.
    Float,
    /// `true` or `false`.
    Bool(bool),
    /// A string.
    Str(String),
    /// An array.
    Array(Vec<Spanned<Raw>>),
    /// A table (inline or not), keys in document order; also a date-time, which toml
    /// hands over as a one-key table.
    Table(Entries),
}

impl Raw {
    /// What it is, as an error message names it.
    pub fn describe(&self) -> String {
        match self {
            Raw::Int(n) => format!("the integer {n}"),
            Raw::Float => "a float".into(),
            Raw::Bool(b) => format!("the boolean {b}"),
            Raw::Str(s) => format!("the string {s:?}"),
            Raw::Array(_) => "an array".into(),
            Raw::Table(_) => "a table".into(),
        }
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any TOML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::Int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Raw, E> {
        i64::try_from(v)
            .map(Raw::Int)
            .map_err(|_| E::custom(format!("{v} is too large for a TOML integer")))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Raw, E> {
        Ok(Raw::Float)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::Str(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Raw, E> {
        Ok(Raw::Str(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Raw::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key()? {
            entries.push((key, map.next_value()?));
        }
        Ok(Raw::Table(entries))
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Raw, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

/// A table's entries: each key and its value, in document order.
pub type Entries = Vec<(Spanned<String>, Spanned<Raw>)>;

/// The document's top-level table, or toml's syntax error (its message and span).
pub fn parse(text: &str) -> Result<Entries, (String, Span)> {
    match toml::from_str::<Raw>(text) {
        Ok(Raw::Table(entries)) => Ok(entries),
        Ok(other) => Err((
            format!("expected a table of keys, found {}", other.describe()),
            0..0,
        )),
        Err(e) => Err((e.message().trim().to_string(), e.span().unwrap_or(0..0))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use super::*;

    #[test]
    fn every_key_and_value_keeps_its_span() {
        let text = "[[pool]]\nname = \"sram\"\nsize = [1, true]\n";
        let top = parse(text).unwrap();
        assert_eq!(top[0].0.get_ref(), "pool");
        let Raw::Array(pools) = top[0].1.get_ref() else {
            panic!("{top:?}")
        };
        let Raw::Table(keys) = pools[0].get_ref() else {
            panic!("{pools:?}")
        };
        assert_eq!(&text[keys[0].0.span()], "name");
        assert_eq!(&text[keys[0].1.span()], "\"sram\"");
        let Raw::Array(items) = keys[1].1.get_ref() else {
            panic!("{keys:?}")
        };
        assert_eq!(&text[items[1].span()], "true");
    }
}
