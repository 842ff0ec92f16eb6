//! The benchmark format: a header `id,lower,upper,size`, then one buffer per row, live in
//! the half-open range `[lower, upper)`, all in one workspace pool called `workspace`.

use std::collections::BTreeMap;

use super::{InputError, Pos};
use crate::problem::{Buffer, Pool, Problem};

const HEADER: [&str; 4] = ["id", "lower", "upper", "size"];

/// Parses a CSV problem; `capacity` bounds the pool (unbounded when `None`).
pub fn parse_csv(text: &str, file: &str, capacity: Option<u64>) -> Result<Problem, InputError> {
    let mut builder = Problem::builder();
    let mut pool = Pool::workspace("workspace");
    pool.size_limit = capacity;
    let pool = builder.pool(pool);
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    check_header(lines.next(), file)?;
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (index, line) in lines {
        let line_no = index + 1;
        let fields = split_with_columns(line);
        if fields.len() != 4 {
            let at = Pos::new(line_no, 1);
            let found = fields.len();
            return Err(InputError::at(
                file,
                at,
                format!("expected 4 fields (id,lower,upper,size), found {found}"),
            ));
        }
        let field_error = |k: usize, message: String| {
            let column = fields[k].0;
            InputError::at(
                file,
                Pos::new(line_no, column),
                format!("field `{}`: {message}", HEADER[k]),
            )
        };
        let number = |k: usize| -> Result<u64, InputError> {
            let text = fields[k].1;
            text.parse::<u64>()
                .map_err(|_| field_error(k, format!("`{text}` is not a whole number of 0 or more")))
        };
        let id = fields[0].1;
        if id.is_empty() {
            return Err(field_error(0, "is empty; give each buffer an id".into()));
        }
        if let Some(first) = seen.insert(id.to_string(), line_no) {
            return Err(field_error(
                0,
                format!("`{id}` was already used on line {first}; ids must be unique"),
            ));
        }
        let (lower, upper, size) = (number(1)?, number(2)?, number(3)?);
        if lower >= upper {
            return Err(field_error(
                2,
                format!(
                    "{upper} is not greater than lower {lower}; the live range [lower, upper) must not be empty"
                ),
            ));
        }
        if size == 0 {
            return Err(field_error(3, "is 0; a buffer has at least 1 byte".into()));
        }
        builder.buffer(
            Buffer::new(id, size)
                .with_candidates([pool])
                .with_live(lower, upper),
        );
    }
    // Every rule the builder checks was checked above with a position.
    builder
        .build()
        .map_err(|e| InputError::whole(file, e.to_string()))
}

/// The header line (the first that is not blank) must be `id,lower,upper,size`.
fn check_header(first: Option<(usize, &str)>, file: &str) -> Result<(), InputError> {
    let Some((header_line, header)) = first else {
        return Err(InputError::whole(
            file,
            "the file is empty; it needs the header `id,lower,upper,size`",
        ));
    };
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    if names != HEADER {
        let at = Pos::new(header_line + 1, 1);
        return Err(InputError::at(
            file,
            at,
            format!(
                "the header is `{}`; it must be `id,lower,upper,size`",
                header.trim()
            ),
        ));
    }
    Ok(())
}

/// The fields of a line with the 1-based column each starts at (after trimming).
fn split_with_columns(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    for part in line.split(',') {
        let lead = part.len() - part.trim_start().len();
        let column = line[..start + lead].chars().count() + 1;
        out.push((column, part.trim()));
        start += part.len() + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rows_into_one_pool() {
        let p = parse_csv(
            "id,lower,upper,size\r\nb1,0,3,4\nb2,3,9,4\n\n",
            "x.csv",
            Some(12),
        )
        .unwrap();
        assert_eq!(p.pools()[0].size_limit, Some(12));
        assert_eq!(p.buffers().len(), 2);
        assert_eq!(p.buffers()[1].live.map(|l| (l.start, l.end)), Some((3, 9)));
    }

    #[test]
    fn errors_point_at_the_field() {
        let e = |t: &str| parse_csv(t, "x.csv", None).unwrap_err().to_string();
        assert_eq!(
            e(""),
            "x.csv: the file is empty; it needs the header `id,lower,upper,size`"
        );
        assert!(e("id,size\n").starts_with("x.csv:1:1: the header is `id,size`"));
        assert_eq!(
            e("id,lower,upper,size\na,0,1,4\na,1,2,3\n"),
            "x.csv:3:1: field `id`: `a` was already used on line 2; ids must be unique"
        );
        assert_eq!(
            e("id,lower,upper,size\na,0,1,-4\n"),
            "x.csv:2:7: field `size`: `-4` is not a whole number of 0 or more"
        );
        assert_eq!(
            e("id,lower,upper,size\na, 5, 5, 4\n"),
            "x.csv:2:7: field `upper`: 5 is not greater than lower 5; the live range [lower, upper) must not be empty"
        );
        assert_eq!(
            e("id,lower,upper,size\na,0,1,0\n"),
            "x.csv:2:7: field `size`: is 0; a buffer has at least 1 byte"
        );
        assert_eq!(
            e("id,lower,upper,size\na,0,1\n"),
            "x.csv:2:1: expected 4 fields (id,lower,upper,size), found 3"
        );
    }
}
