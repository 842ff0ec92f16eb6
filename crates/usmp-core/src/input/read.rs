//! Helpers shared by the JSON readers: typed access to objects, arrays, strings and whole
//! numbers, each error naming the file, the position and the field in the user's words.

use std::collections::BTreeMap;

use super::json::{Json, Value};
use super::{InputError, Pos};
use crate::problem::{Field, Pool, PoolKind};

/// Every key a pool object may have, in the RFC's spelling.
pub(crate) const POOL_KEYS: &[&str] = &[
    "name",
    "kind",
    "size",
    "size_hint_bytes",
    "alignment",
    "targets",
];

pub(crate) fn known(what: &str, names: &BTreeMap<String, usize>) -> String {
    if names.is_empty() {
        return format!("there are no {what}");
    }
    let list: Vec<String> = names.keys().map(|n| format!("\"{n}\"")).collect();
    format!("known {what}: {}", list.join(", "))
}

/// Where each field of one pool or buffer was written.
#[derive(Clone, Debug, Default)]
pub(crate) struct Spans {
    pub(crate) whole: Option<Pos>,
    pub(crate) fields: BTreeMap<String, Pos>,
    pub(crate) candidates: Vec<Pos>,
}

impl Spans {
    pub(crate) fn of(&self, field: Field) -> Pos {
        let key = match field {
            Field::Name => "name",
            Field::Size => "size_bytes",
            Field::Alignment => "alignment",
            Field::Candidates => "pool_candidates",
            Field::Candidate(k) => {
                return self
                    .candidates
                    .get(k)
                    .copied()
                    .unwrap_or(self.of(Field::Candidates));
            }
            Field::Conflicts => "conflicts",
            Field::Live => "live",
        };
        let whole = self.whole.unwrap_or(Pos { line: 1, column: 1 });
        self.fields.get(key).copied().unwrap_or(whole)
    }
}

pub(crate) type Entries<'j> = &'j [(String, Pos, Json)];

pub(crate) struct Reader<'f> {
    pub(crate) file: &'f str,
}

impl Reader<'_> {
    pub(crate) fn err(&self, pos: Pos, message: String) -> InputError {
        InputError::at(self.file, pos, message)
    }

    pub(crate) fn object<'j>(
        &self,
        j: &'j Json,
        what: &str,
        allowed: &[&str],
    ) -> Result<Entries<'j>, InputError> {
        let Value::Object(entries) = &j.value else {
            return Err(self.err(
                j.pos,
                format!("{what} must be an object, found {}", j.value.describe()),
            ));
        };
        for (key, pos, _) in entries {
            if !allowed.contains(&key.as_str()) {
                let list = allowed
                    .iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(self.err(
                    *pos,
                    format!("{what}: unknown key \"{key}\"; expected one of {list}"),
                ));
            }
        }
        Ok(entries)
    }

    pub(crate) fn get<'j>(&self, entries: Entries<'j>, key: &str) -> Option<&'j Json> {
        entries.iter().find(|(k, _, _)| k == key).map(|(_, _, v)| v)
    }

    /// The value under `key` or under its older name `old`, and which name it was under:
    /// both is an error.
    pub(crate) fn either<'j>(
        &self,
        entries: Entries<'j>,
        what: &str,
        key: &'static str,
        old: &'static str,
    ) -> Result<Option<(&'j Json, &'static str)>, InputError> {
        match (self.get(entries, key), self.get(entries, old)) {
            (Some(both), Some(_)) => Err(self.err(
                both.pos,
                format!("{what} gives both {key} and {old}; keep {key}"),
            )),
            (Some(v), None) => Ok(Some((v, key))),
            (None, Some(v)) => Ok(Some((v, old))),
            (None, None) => Ok(None),
        }
    }

    pub(crate) fn required<'j>(
        &self,
        entries: Entries<'j>,
        whole: &Json,
        key: &str,
        what: &str,
    ) -> Result<&'j Json, InputError> {
        self.get(entries, key)
            .ok_or_else(|| self.err(whole.pos, format!("{what} has no \"{key}\"; add it")))
    }

    pub(crate) fn array<'j>(&self, j: &'j Json, what: &str) -> Result<&'j [Json], InputError> {
        match &j.value {
            Value::Array(items) => Ok(items),
            other => Err(self.err(
                j.pos,
                format!("{what} must be an array, found {}", other.describe()),
            )),
        }
    }

    pub(crate) fn string(&self, j: &Json, what: &str) -> Result<String, InputError> {
        match &j.value {
            Value::String(s) if !s.is_empty() => Ok(s.clone()),
            Value::String(_) => Err(self.err(j.pos, format!("{what} is empty; write a name"))),
            other => Err(self.err(
                j.pos,
                format!("{what} must be a string, found {}", other.describe()),
            )),
        }
    }

    pub(crate) fn boolean(&self, j: &Json, what: &str) -> Result<bool, InputError> {
        match &j.value {
            Value::Bool(b) => Ok(*b),
            other => Err(self.err(
                j.pos,
                format!("{what} must be true or false, found {}", other.describe()),
            )),
        }
    }

    /// A whole number; `-1` is returned as `None` when `minus_one_is_none`.
    /// A size: a whole number of bytes, a string with a unit (`"64 KiB"`), or -1 for none.
    pub(crate) fn bytes(&self, j: &Json, what: &str) -> Result<Option<u64>, InputError> {
        match &j.value {
            Value::String(text) => super::parse_size(text)
                .map(Some)
                .map_err(|e| self.err(j.pos, format!("{what}: {e}"))),
            Value::Number(_) => self.integer(j, what, true),
            other => Err(self.err(
                j.pos,
                format!(
                    "{what} must be a size: {}, or -1 for no limit; found {}",
                    super::SIZE_FORMS,
                    other.describe()
                ),
            )),
        }
    }

    pub(crate) fn integer(
        &self,
        j: &Json,
        what: &str,
        minus_one_is_none: bool,
    ) -> Result<Option<u64>, InputError> {
        let Value::Number(text) = &j.value else {
            return Err(self.err(
                j.pos,
                format!(
                    "{what} must be a whole number, found {}",
                    j.value.describe()
                ),
            ));
        };
        if minus_one_is_none && text == "-1" {
            return Ok(None);
        }
        if text.starts_with('-') {
            let hint = if minus_one_is_none {
                " (or -1 for unbounded)"
            } else {
                ""
            };
            return Err(self.err(
                j.pos,
                format!("{what} is {text}; write a number of 0 or more{hint}"),
            ));
        }
        text.parse::<u64>().map(Some).map_err(|_| {
            let why = if text.bytes().all(|b| b.is_ascii_digit()) {
                "too large for 64 bits"
            } else {
                "not a whole number"
            };
            self.err(j.pos, format!("{what} is {text}, which is {why}"))
        })
    }

    pub(crate) fn kind(&self, j: Option<&Json>, what: &str) -> Result<PoolKind, InputError> {
        let Some(j) = j else {
            return Ok(PoolKind::Workspace);
        };
        match self.string(j, what)?.as_str() {
            "workspace" => Ok(PoolKind::Workspace),
            "constant" => Ok(PoolKind::Constant),
            other => Err(self.err(
                j.pos,
                format!("{what} is \"{other}\"; write \"workspace\" or \"constant\""),
            )),
        }
    }

    pub(crate) fn spans(&self, j: &Json, entries: Entries<'_>) -> Spans {
        let mut spans = Spans {
            whole: Some(j.pos),
            ..Spans::default()
        };
        for (key, _, value) in entries {
            spans.fields.insert(key.clone(), value.pos);
        }
        spans
    }

    /// Pool `k`; `alignment` when it states none.
    pub(crate) fn pool(
        &self,
        j: &Json,
        k: usize,
        alignment: u64,
    ) -> Result<(Pool, Spans), InputError> {
        let what = format!("pools[{k}]");
        let e = self.object(j, &what, POOL_KEYS)?;
        let name = self.string(self.required(e, j, "name", &what)?, &format!("{what}.name"))?;
        let mut pool = Pool::workspace(name).with_alignment(alignment);
        pool.kind = self.kind(self.get(e, "kind"), &format!("{what}.kind"))?;
        // `size` as in usmp.toml (a number, "64 KiB", or -1 for none), or the RFC's name.
        if let Some((size, key)) = self.either(e, &what, "size", "size_hint_bytes")? {
            pool.size_limit = self.bytes(size, &format!("{what}.{key}"))?;
        }
        if let Some(a) = self.get(e, "alignment") {
            pool.alignment = self
                .integer(a, &format!("{what}.alignment"), false)?
                .unwrap_or(1);
        }
        if let Some(t) = self.get(e, "targets") {
            for (n, target) in self
                .array(t, &format!("{what}.targets"))?
                .iter()
                .enumerate()
            {
                pool.targets
                    .push(self.string(target, &format!("{what}.targets[{n}]"))?);
            }
        }
        Ok((pool, self.spans(j, e)))
    }
}
