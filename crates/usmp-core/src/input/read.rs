//! Helpers shared by the JSON readers: typed access to objects, arrays, strings and whole
//! numbers, each error naming the file, the position and the field in the user's words.
//!
//! The readers do not stop at the first bad value: [`Reader::keep`] notes the error and the
//! reader goes on with a stand-in, so that [`Reader::finish`] reports every mistake at once.
//! Stand-ins are never planned: a reading that noted an error ends in that error.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Display;

use super::json::{Json, Key, Number, Value};
use super::{InputError, MAX_LISTED, Pos, listed};
use crate::problem::{Field, Pool, PoolKind};

/// Every key a pool object may have, in the RFC's spelling.
pub(crate) const POOL_KEYS: &[&str] = &[
    "name",
    "kind",
    "size",
    "size_hint_bytes",
    "alignment",
    "targets",
    "bandwidth",
];

/// Names to indices. Only looked up, never walked in its own order, so a hash map keeps
/// reading deterministic; [`known`] sorts the names it lists.
pub(crate) type Names = HashMap<String, usize>;

/// How many names [`known`] lists.
const KNOWN_LISTED: usize = 20;

/// `known pools: "a", "b"`: the names one could have meant, sorted, the first
/// [`KNOWN_LISTED`] of them.
fn known(what: impl Display, names: &Names) -> String {
    if names.is_empty() {
        return format!("there are no {what}");
    }
    let mut sorted: Vec<&String> = names.keys().collect();
    sorted.sort_unstable();
    let list: Vec<String> = sorted
        .iter()
        .take(KNOWN_LISTED)
        .map(|n| format!("\"{n}\""))
        .collect();
    let more = sorted.len().saturating_sub(KNOWN_LISTED);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("known {what}: {}{tail}", list.join(", "))
}

/// [`known`]'s text for one complete map of names, written once at most: a file that
/// names a million unknowns must not sort a million names a million times.
pub(crate) struct Known<'n> {
    what: &'static str,
    names: &'n Names,
    /// The names again when there are only a few (pools, mostly): a million candidates
    /// naming one of three pools are found by comparing, not by hashing a million times.
    few: Option<Vec<(&'n str, usize)>>,
    text: std::cell::OnceCell<String>,
}

/// Up to how many names [`Known`] finds by comparing each.
const FEW_NAMES: usize = 8;

impl<'n> Known<'n> {
    pub(crate) fn new(what: &'static str, names: &'n Names) -> Self {
        let few = (names.len() <= FEW_NAMES)
            .then(|| names.iter().map(|(n, &i)| (n.as_str(), i)).collect());
        Known {
            what,
            names,
            few,
            text: std::cell::OnceCell::new(),
        }
    }

    /// The index of `name`.
    pub(crate) fn get(&self, name: &str) -> Option<usize> {
        match &self.few {
            Some(few) => few.iter().find(|(n, _)| *n == name).map(|&(_, i)| i),
            None => self.names.get(name).copied(),
        }
    }

    pub(crate) fn text(&self) -> &str {
        self.text.get_or_init(|| known(self.what, self.names))
    }
}

/// How messages name an element of a list, `buffers[3]` or `buffers[3] ("conv")`: written
/// out only when a message is, so that reading a million elements formats no labels.
#[derive(Clone, Copy)]
pub(crate) struct Element<'a> {
    pub(crate) list: &'static str,
    pub(crate) index: usize,
    pub(crate) name: Option<&'a str>,
}

impl Display for Element<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}]", self.list, self.index)?;
        match self.name {
            Some(name) => write!(f, " (\"{name}\")"),
            None => Ok(()),
        }
    }
}

/// Where each field of one pool or buffer was written.
#[derive(Clone, Debug, Default)]
pub(crate) struct Spans {
    pub(crate) whole: Option<Pos>,
    /// Known keys only (unknown ones are errors anyway): no copy of a key per element.
    fields: Vec<(&'static str, Pos)>,
    pub(crate) candidates: Vec<Pos>,
}

impl Spans {
    /// Only where the whole element was written.
    pub(crate) fn at(whole: Pos) -> Spans {
        Spans {
            whole: Some(whole),
            ..Spans::default()
        }
    }

    /// Where `j` and the values of its `known` keys were written.
    pub(crate) fn of_entries(j: &Json<'_>, entries: Entries<'_>, known: &[&'static str]) -> Spans {
        let fields = entries
            .iter()
            .filter_map(|(key, _, value)| {
                let k = known.iter().find(|k| **k == &**key)?;
                Some((*k, value.pos))
            })
            .collect();
        Spans {
            fields,
            ..Spans::at(j.pos)
        }
    }

    /// Where the value of `key` was written.
    pub(crate) fn field(&self, key: &str) -> Option<Pos> {
        self.fields
            .iter()
            .find(|(k, _)| *k == key)
            .map(|&(_, pos)| pos)
    }

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
            Field::Overlap(_) => "overlaps",
        };
        let whole = self.whole.unwrap_or(Pos { line: 1, column: 1 });
        self.field(key).unwrap_or(whole)
    }
}

pub(crate) type Entries<'j> = &'j [(Key, Pos, Json<'j>)];

pub(crate) struct Reader<'f> {
    pub(crate) file: &'f str,
    noted: RefCell<Vec<InputError>>,
    /// Errors found past [`MAX_LISTED`].
    dropped: std::cell::Cell<usize>,
}

impl<'f> Reader<'f> {
    pub(crate) fn new(file: &'f str) -> Self {
        Reader {
            file,
            noted: RefCell::new(Vec::new()),
            dropped: std::cell::Cell::new(0),
        }
    }

    pub(crate) fn err(&self, pos: Pos, message: String) -> InputError {
        InputError::at(self.file, pos, message)
    }

    /// Notes an error and goes on.
    pub(crate) fn note(&self, e: InputError) {
        self.note_with(|| e);
    }

    /// How many errors have been noted so far.
    pub(crate) fn noted(&self) -> usize {
        self.noted.borrow().len() + self.dropped.get()
    }

    /// Notes the error `make` writes, writing it only when it will be listed.
    pub(crate) fn note_with(&self, make: impl FnOnce() -> InputError) {
        let mut noted = self.noted.borrow_mut();
        if noted.len() < MAX_LISTED {
            noted.push(make());
        } else {
            self.dropped.set(self.dropped.get() + 1);
        }
    }

    /// The value, or `None` after noting the error: the caller goes on with a stand-in.
    pub(crate) fn keep<T>(&self, result: Result<T, InputError>) -> Option<T> {
        result.map_err(|e| self.note(e)).ok()
    }

    /// Every error noted so far, in file order, as one error.
    pub(crate) fn finish(&self) -> Result<(), InputError> {
        let noted = std::mem::take(&mut *self.noted.borrow_mut());
        listed(noted, self.dropped.replace(0), self.file).map_or(Ok(()), Err)
    }

    /// The entries of an object. Unknown keys are noted (and read no further); only a
    /// value that is not an object at all is an error here.
    pub(crate) fn object<'j>(
        &self,
        j: &'j Json<'j>,
        what: impl Display,
        allowed: &[&str],
    ) -> Result<Entries<'j>, InputError> {
        let Value::Object(entries) = &j.value else {
            return Err(self.err(
                j.pos,
                format!("{what} must be an object, found {}", j.value.describe()),
            ));
        };
        for (key, pos, _) in entries {
            if !allowed.contains(&&**key) {
                let list = allowed
                    .iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.note(self.err(
                    *pos,
                    format!("{what}: unknown key \"{key}\"; expected one of {list}"),
                ));
            }
        }
        Ok(entries)
    }

    pub(crate) fn get<'j>(&self, entries: Entries<'j>, key: &str) -> Option<&'j Json<'j>> {
        entries
            .iter()
            .find(|(k, _, _)| **k == *key)
            .map(|(_, _, v)| v)
    }

    /// The value under `key` or under its older name `old`, and which name it was under:
    /// both is an error.
    pub(crate) fn either<'j>(
        &self,
        entries: Entries<'j>,
        what: impl Display,
        key: &'static str,
        old: &'static str,
    ) -> Result<Option<(&'j Json<'j>, &'static str)>, InputError> {
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
        whole: &Json<'_>,
        key: &str,
        what: impl Display,
    ) -> Result<&'j Json<'j>, InputError> {
        self.get(entries, key)
            .ok_or_else(|| self.err(whole.pos, format!("{what} has no \"{key}\"; add it")))
    }

    /// The items of an array. A [`Value::Bytes`] array is given back as numbers, each at
    /// the array's position (no item of one can be at fault as a number).
    pub(crate) fn array<'j>(
        &self,
        j: &'j Json<'j>,
        what: impl Display,
    ) -> Result<Cow<'j, [Json<'j>]>, InputError> {
        match &j.value {
            Value::Array(items) => Ok(Cow::Borrowed(items)),
            Value::Bytes(bytes) => Ok(bytes
                .iter()
                .map(|&b| Json {
                    value: Value::Number(Number::Whole(u64::from(b))),
                    pos: j.pos,
                })
                .collect()),
            other => Err(self.err(
                j.pos,
                format!("{what} must be an array, found {}", other.describe()),
            )),
        }
    }

    pub(crate) fn string(&self, j: &Json<'_>, what: impl Display) -> Result<String, InputError> {
        self.str(j, what).map(str::to_string)
    }

    /// A non-empty string, borrowed from the file.
    pub(crate) fn str<'j>(
        &self,
        j: &'j Json<'j>,
        what: impl Display,
    ) -> Result<&'j str, InputError> {
        match &j.value {
            Value::String(s) if !s.is_empty() => Ok(s),
            Value::String(_) => Err(self.err(j.pos, format!("{what} is empty; write a name"))),
            other => Err(self.err(
                j.pos,
                format!("{what} must be a string, found {}", other.describe()),
            )),
        }
    }

    pub(crate) fn boolean(&self, j: &Json<'_>, what: impl Display) -> Result<bool, InputError> {
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
    pub(crate) fn bytes(
        &self,
        j: &Json<'_>,
        what: impl Display,
    ) -> Result<Option<u64>, InputError> {
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

    /// A whole number that may be negative.
    pub(crate) fn signed(&self, j: &Json<'_>, what: impl Display) -> Result<i64, InputError> {
        let text = match &j.value {
            Value::Number(Number::Whole(v)) => return Ok(i64::try_from(*v).unwrap_or(i64::MAX)),
            Value::Number(Number::Text(text)) => &**text,
            other => {
                let found = other.describe();
                let message = format!("{what} must be a whole number, found {found}");
                return Err(self.err(j.pos, message));
            }
        };
        text.parse::<i64>().map_err(|_| {
            let message = format!("{what} is {text}, which is not a whole number of 64 bits");
            self.err(j.pos, message)
        })
    }

    pub(crate) fn integer(
        &self,
        j: &Json<'_>,
        what: impl Display,
        minus_one_is_none: bool,
    ) -> Result<Option<u64>, InputError> {
        let Value::Number(number) = &j.value else {
            return Err(self.err(
                j.pos,
                format!(
                    "{what} must be a whole number, found {}",
                    j.value.describe()
                ),
            ));
        };
        let text = match number {
            Number::Whole(v) => return Ok(Some(*v)),
            Number::Text(text) => &**text,
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

    pub(crate) fn kind(
        &self,
        j: Option<&Json<'_>>,
        what: impl Display,
    ) -> Result<PoolKind, InputError> {
        let Some(j) = j else {
            return Ok(PoolKind::Workspace);
        };
        match self.string(j, &what)?.as_str() {
            "workspace" => Ok(PoolKind::Workspace),
            "constant" => Ok(PoolKind::Constant),
            other => Err(self.err(
                j.pos,
                format!("{what} is \"{other}\"; write \"workspace\" or \"constant\""),
            )),
        }
    }

    /// A required name, or a stand-in (`what` itself) after noting why there is none, so
    /// that one missing name does not stop the rest of the element being checked.
    pub(crate) fn name(&self, e: Entries<'_>, whole: &Json<'_>, what: impl Display) -> String {
        let name = self
            .required(e, whole, "name", &what)
            .and_then(|n| self.string(n, format_args!("{what}.name")));
        self.keep(name).unwrap_or_else(|| what.to_string())
    }

    /// The strings of the optional array under `key` (called `label` in messages), each
    /// with its index and where it was written; bad items are noted (as the iterator
    /// reaches them) and left out.
    pub(crate) fn strings<'j, 's>(
        &'s self,
        e: Entries<'j>,
        key: &str,
        label: impl Display + 's,
    ) -> impl Iterator<Item = (usize, &'j str, Pos)> + 's
    where
        'j: 's,
    {
        let items: &'j [Json<'j>] = match self.get(e, key).map(|l| self.keep(self.array(l, &label)))
        {
            Some(Some(Cow::Borrowed(items))) => items,
            // Bytes: numbers, not one a string.
            Some(Some(Cow::Owned(numbers))) => {
                for (n, item) in numbers.iter().enumerate() {
                    self.keep(self.str(item, format_args!("{label}[{n}]")));
                }
                &[]
            }
            _ => &[],
        };
        items.iter().enumerate().filter_map(move |(n, item)| {
            let s = self.keep(self.str(item, format_args!("{label}[{n}]")))?;
            Some((n, s, item.pos))
        })
    }

    /// Pool `k`; `alignment` when it states none. Bad fields are noted and left at their
    /// defaults.
    pub(crate) fn pool(
        &self,
        j: &Json<'_>,
        k: usize,
        alignment: u64,
    ) -> Result<(Pool, Spans), InputError> {
        let what = Element {
            list: "pools",
            index: k,
            name: None,
        };
        let e = self.object(j, what, POOL_KEYS)?;
        let mut pool = Pool::workspace(self.name(e, j, what)).with_alignment(alignment);
        if let Some(kind) = self.keep(self.kind(self.get(e, "kind"), format_args!("{what}.kind"))) {
            pool.kind = kind;
        }
        // `size` as in usmp.toml (a number, "64 KiB", or -1 for none), or the RFC's name.
        let size = self.either(e, what, "size", "size_hint_bytes");
        if let Some((size, key)) = self.keep(size).flatten() {
            pool.size_limit = self
                .keep(self.bytes(size, format_args!("{what}.{key}")))
                .flatten();
        }
        if let Some(a) = self.get(e, "alignment") {
            let a = self.integer(a, format_args!("{what}.alignment"), false);
            pool.alignment = self.keep(a).flatten().unwrap_or(1);
        }
        if let Some(b) = self.get(e, "bandwidth") {
            let label = format_args!("{what}.bandwidth");
            let speed = match &b.value {
                Value::String(text) => super::parse_bandwidth(text)
                    .map_err(|m| self.err(b.pos, format!("{label}: {m}"))),
                Value::Number(_) => match self.integer(b, label, false) {
                    Ok(Some(0)) => {
                        Err(self.err(b.pos, format!("{label} is 0; write a speed above zero")))
                    }
                    other => other.map(|v| v.unwrap_or(1)),
                },
                other => Err(self.err(
                    b.pos,
                    format!(
                        "{label} must be {}; found {}",
                        super::BANDWIDTH_FORMS,
                        other.describe()
                    ),
                )),
            };
            pool.bandwidth = self.keep(speed);
        }
        pool.targets = self
            .strings(e, "targets", format_args!("{what}.targets"))
            .map(|(_, t, _)| t.to_string())
            .collect();
        Ok((pool, Spans::of_entries(j, e, POOL_KEYS)))
    }
}
