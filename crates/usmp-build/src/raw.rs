//! A declaration as written: a tree of values, every key and value with its span, of the
//! front end's own span type `S` (byte ranges in `usmp.toml`, token spans in
//! `usmp_pools!`). Both front ends build this one tree, shaped like `usmp.toml`, and
//! [`crate::read`] reads it, key by key, reporting every wrong one together (a typed serde
//! struct stops at the first value of the wrong type).

use std::fmt;
use std::ops::Range;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use toml::Spanned;

/// A value and where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct At<T, S> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub span: S,
}

impl<T, S> At<T, S> {
    /// `value` written at `span`.
    pub fn new(value: T, span: S) -> Self {
        At { value, span }
    }
}

/// A byte range in a `usmp.toml`.
pub type Span = Range<usize>;

/// One value.
#[derive(Clone, Debug)]
pub enum Raw<S> {
    /// An integer (TOML's are 64-bit signed).
    Int(i64),
    /// A float.
    Float,
    /// `true` or `false`.
    Bool(bool),
    /// A string (in `usmp_pools!` also a bare name, and a number with its unit: `16 KiB`).
    Str(String),
    /// An array.
    Array(Vec<At<Raw<S>, S>>),
    /// A table (inline or not), keys in the order written; also a TOML date-time, which
    /// toml hands over as a one-key table.
    Table(Entries<S>),
}

/// A table's entries: each key and its value, in the order written.
pub type Entries<S> = Vec<(At<String, S>, At<Raw<S>, S>)>;

impl<S> Raw<S> {
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

/// A TOML value with its byte span, as toml hands it over.
fn spanned(v: Spanned<Raw<Span>>) -> At<Raw<Span>, Span> {
    let span = v.span();
    At::new(v.into_inner(), span)
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw<Span>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any TOML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Raw::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Raw::Int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        i64::try_from(v)
            .map(Raw::Int)
            .map_err(|_| E::custom(format!("{v} is too large for a TOML integer")))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Raw::Float)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Raw::Str(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Raw::Str(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Raw<Span>>>()? {
            items.push(spanned(item));
        }
        Ok(Raw::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<String>>()? {
            let span = key.span();
            entries.push((At::new(key.into_inner(), span), spanned(map.next_value()?)));
        }
        Ok(Raw::Table(entries))
    }
}

impl<'de> Deserialize<'de> for Raw<Span> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

/// A `usmp.toml`'s top-level table, or toml's syntax error (its message and span).
pub fn parse(text: &str) -> Result<Entries<Span>, (String, Span)> {
    match toml::from_str::<Raw<Span>>(text) {
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
        assert_eq!(top[0].0.value, "pool");
        let Raw::Array(pools) = &top[0].1.value else {
            panic!("{top:?}")
        };
        let Raw::Table(keys) = &pools[0].value else {
            panic!("{pools:?}")
        };
        assert_eq!(&text[keys[0].0.span.clone()], "name");
        assert_eq!(&text[keys[0].1.span.clone()], "\"sram\"");
        let Raw::Array(items) = &keys[1].1.value else {
            panic!("{keys:?}")
        };
        assert_eq!(&text[items[1].span.clone()], "true");
    }
}
