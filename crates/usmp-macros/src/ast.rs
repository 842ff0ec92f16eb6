//! The macro's syntax, parsed with syn into a loose tree of entries and values; what the
//! keys mean is decided by usmp-build's reader (through [`crate::tree`]), so unknown keys
//! and bad values are all
//! reported together rather than stopping at the first.
//!
//! ```text
//! input := entry (',' entry)* ','?
//! entry := IDENT '=' value                   (model = "kws.tflite", algorithm = "auto", ...)
//!        | 'pools' '{' named (',' named)* '}'
//!        | 'models' '{' named (',' named)* '}'
//! named := IDENT ':' IDENT '(' args ')'      (dtcm: workspace(size = 16 KiB, ...))
//! args  := arg (',' arg)* ','?
//! arg   := IDENT '=' value | value
//! value := STRING | BOOL | INT IDENT? | IDENT | '[' value, ... ']' | IDENT '(' args ')'
//! ```

use proc_macro2::{Ident, Span};
use syn::parse::{Parse, ParseStream};
use syn::{LitBool, LitInt, LitStr, Token, braced, bracketed, parenthesized};

/// A value as written.
#[derive(Clone)]
pub enum Value {
    /// `"text"`.
    Str(LitStr),
    /// `true` / `false`.
    Bool(LitBool),
    /// `4096`, `16 KiB`.
    Int(LitInt, Option<Ident>),
    /// `kws`.
    Ident(Ident),
    /// `[a, b]`.
    List(Span, Vec<Value>),
    /// `op("CONV_2D", im2col = 4 KiB)`.
    Call(Ident, Vec<Arg>),
}

impl Value {
    /// Where it was written (its first token).
    pub fn span(&self) -> Span {
        match self {
            Value::Str(s) => s.span(),
            Value::Bool(b) => b.span,
            Value::Int(i, _) => i.span(),
            Value::Ident(i) | Value::Call(i, _) => i.span(),
            Value::List(s, _) => *s,
        }
    }
}

/// One argument: `key = value`, or a bare value.
#[derive(Clone)]
pub struct Arg {
    /// The key, when given.
    pub key: Option<Ident>,
    /// The value.
    pub value: Value,
}

/// `name: kind(args)`.
#[derive(Clone)]
pub struct Named {
    /// The entry's name.
    pub name: Ident,
    /// Its kind (`workspace`, `constant`, `model`).
    pub kind: Ident,
    /// Its arguments.
    pub args: Vec<Arg>,
}

/// A top-level entry.
#[derive(Clone)]
pub enum Entry {
    /// `key = value`.
    Pair(Ident, Value),
    /// `pools { ... }` or `models { ... }`.
    Block(Ident, Vec<Named>),
}

/// The whole invocation.
#[derive(Clone)]
pub struct Input {
    /// Its entries, in order.
    pub entries: Vec<Entry>,
}

impl Parse for Input {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut entries = Vec::new();
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            if input.peek(syn::token::Brace) {
                let content;
                braced!(content in input);
                let mut items = Vec::new();
                while !content.is_empty() {
                    items.push(content.parse()?);
                    if content.is_empty() {
                        break;
                    }
                    content.parse::<Token![,]>()?;
                }
                entries.push(Entry::Block(key, items));
            } else {
                input.parse::<Token![=]>().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        format!("expected `=` or `{{` after `{key}`, as in `{key} = ...` or `pools {{ ... }}`"),
                    )
                })?;
                entries.push(Entry::Pair(key, input.parse()?));
            }
            if input.is_empty() {
                break;
            }
            // Blocks may stand without a comma after them.
            if !matches!(entries.last(), Some(Entry::Block(..))) || input.peek(Token![,]) {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(Input { entries })
    }
}

impl Parse for Named {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let name: Ident = input.parse()?;
        input.parse::<Token![:]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("expected `:` after `{name}`, as in `{name}: workspace(size = 16 KiB)`"),
            )
        })?;
        let kind: Ident = input.parse()?;
        let content;
        parenthesized!(content in input);
        Ok(Named {
            name,
            kind,
            args: args(&content)?,
        })
    }
}

fn args(input: ParseStream<'_>) -> syn::Result<Vec<Arg>> {
    let mut out = Vec::new();
    while !input.is_empty() {
        out.push(input.parse()?);
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(out)
}

impl Parse for Arg {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.peek(syn::Ident) && input.peek2(Token![=]) {
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            Ok(Arg {
                key: Some(key),
                value: input.parse()?,
            })
        } else {
            Ok(Arg {
                key: None,
                value: input.parse()?,
            })
        }
    }
}

impl Parse for Value {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.peek(LitStr) {
            return Ok(Value::Str(input.parse()?));
        }
        if input.peek(LitBool) {
            return Ok(Value::Bool(input.parse()?));
        }
        if input.peek(LitInt) {
            let n: LitInt = input.parse()?;
            // A unit follows on the same entry: `16 KiB`.
            let unit = if input.peek(syn::Ident) && !input.peek2(Token![=]) {
                Some(input.parse()?)
            } else {
                None
            };
            return Ok(Value::Int(n, unit));
        }
        if input.peek(syn::token::Bracket) {
            let content;
            let b = bracketed!(content in input);
            return Ok(Value::List(
                b.span.join(),
                args(&content)?.into_iter().map(|a| a.value).collect(),
            ));
        }
        if input.peek(syn::Ident) {
            let ident: Ident = input.parse()?;
            if input.peek(syn::token::Paren) {
                let content;
                parenthesized!(content in input);
                return Ok(Value::Call(ident, args(&content)?));
            }
            return Ok(Value::Ident(ident));
        }
        Err(input.error(
            "expected a value: a string (\"...\"), a number (4096 or 16 KiB), true/false, a name, or [ ... ]",
        ))
    }
}
