//! A buffer's `overlaps` in the JSON problem: the inputs it may be written over, each
//! with its window of shifts (output offset minus input offset, both ends included).
//!
//! ```json
//! {"name": "y", "size_bytes": 64, "pool_candidates": ["sram"], "live": [1, 3],
//!  "overlaps": [{"input": "x", "shifts": [-16, 0]}]}
//! ```

use std::borrow::Cow;

use super::Pos;
use super::json::Json;
use super::read::{Element, Entries, Known, Names, Reader};
use crate::problem::{Overlap, ProblemBuilder};

const KEYS: &[&str] = &["input", "shifts"];

/// The inputs a buffer names in `overlaps`, each with its window and where it was written.
pub(super) type Declared<'j> = Vec<(&'j str, [i64; 2], Pos)>;

/// The `overlaps` of the buffer whose fields are `e`; bad entries are noted and left out.
pub(super) fn read<'j>(r: &Reader<'_>, e: Entries<'j>, what: Element<'_>) -> Declared<'j> {
    let Some(list) = r.get(e, "overlaps") else {
        return Vec::new();
    };
    let label = format!("{what}.overlaps");
    // An array of numbers (read as bytes) holds no objects: its first item is the error.
    let items = match r.keep(r.array(list, &label)) {
        Some(Cow::Borrowed(items)) => items,
        Some(Cow::Owned(_)) => {
            let message = format!("{label} must list objects: {{\"input\": ..., \"shifts\": ...}}");
            r.note(r.err(list.pos, message));
            return Vec::new();
        }
        None => return Vec::new(),
    };
    let mut out = Vec::new();
    for (k, item) in items.iter().enumerate() {
        let label = format!("{what}.overlaps[{k}]");
        let Some(fields) = r.keep(r.object(item, &label, KEYS)) else {
            continue;
        };
        let input = r.keep(r.required(fields, item, "input", &label));
        let input = input.and_then(|j| r.keep(r.str(j, format_args!("{label}.input"))));
        let shifts = r.keep(r.required(fields, item, "shifts", &label));
        let shifts = shifts.and_then(|j| window(r, j, &label));
        if let (Some(input), Some(shifts)) = (input, shifts) {
            out.push((input, shifts, item.pos));
        }
    }
    out
}

/// `[least, greatest]`, two whole numbers that may be negative (also a model call's
/// `overlaps`).
pub(super) fn window(r: &Reader<'_>, j: &Json<'_>, label: &str) -> Option<[i64; 2]> {
    let what = format!("{label}.shifts");
    match r.keep(r.array(j, &what)).as_deref() {
        Some([lo, hi]) => {
            let lo = r.keep(r.signed(lo, format_args!("{what}[0]")));
            let hi = r.keep(r.signed(hi, format_args!("{what}[1]")));
            Some([lo?, hi?])
        }
        Some(_) => {
            let message = format!("{what} must be [least, greatest], two whole numbers");
            r.note(r.err(j.pos, message));
            None
        }
        None => None,
    }
}

/// Each buffer's overlaps into `builder` (buffer `a` is `pending[a]`'s output); an input
/// that is no buffer's name is noted, and its buffer is no longer `clean`.
pub(super) fn add(
    r: &Reader<'_>,
    builder: &mut ProblemBuilder,
    pending: Vec<Declared<'_>>,
    index: &Names,
    clean: &mut [bool],
) {
    let known = Known::new("buffers", index);
    for (output, declared) in pending.into_iter().enumerate() {
        for (name, shifts, pos) in declared {
            match index.get(name) {
                Some(&input) => builder.overlap(Overlap {
                    output,
                    input,
                    shifts,
                }),
                None => {
                    clean[output] = false;
                    let message =
                        format!("overlaps: no buffer is named \"{name}\"; {}", known.text());
                    r.note(r.err(pos, message));
                }
            }
        }
    }
}
