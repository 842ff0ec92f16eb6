//! Just enough of the FlatBuffers wire format to walk a `.tflite` file: tables through
//! their vtables, vectors, strings and scalars. Every read is bounds-checked, so a corrupt
//! or truncated file gives an error, never a panic or an out-of-range slice.
//!
//! Layout reminders: a table starts with an `i32` back-offset to its vtable; the vtable
//! holds `u16` byte sizes of itself and of the table, then one `u16` per field (0 means
//! absent, the field takes its default). Offsets to tables, vectors and strings are `u32`
//! relative to where the offset itself is stored. Vectors are a `u32` count, then items.

/// What went wrong reading the wire format.
pub(crate) type Result<T> = std::result::Result<T, String>;

fn slice(buf: &[u8], pos: usize, len: usize) -> Result<&[u8]> {
    pos.checked_add(len)
        .and_then(|end| buf.get(pos..end))
        .ok_or_else(|| {
            format!(
                "a {len}-byte read at offset {pos} runs past the end of the file ({} bytes); \
                 the file is truncated or corrupt",
                buf.len()
            )
        })
}

fn u16_at(buf: &[u8], pos: usize) -> Result<u16> {
    let b = slice(buf, pos, 2)?;
    Ok(u16::from_le_bytes([b[0], b[1]]))
}

fn u32_at(buf: &[u8], pos: usize) -> Result<u32> {
    let b = slice(buf, pos, 4)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn u64_at(buf: &[u8], pos: usize) -> Result<u64> {
    let b = slice(buf, pos, 8)?;
    let mut w = [0u8; 8];
    w.copy_from_slice(b);
    Ok(u64::from_le_bytes(w))
}

/// Follows the `u32` forward offset stored at `pos`.
fn follow(buf: &[u8], pos: usize) -> Result<usize> {
    let rel = u32_at(buf, pos)? as usize;
    let to = pos
        .checked_add(rel)
        .filter(|&to| to < buf.len())
        .ok_or_else(|| format!("an offset at {pos} points past the end of the file"))?;
    Ok(to)
}

/// A table: where it starts and where its vtable is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Table<'a> {
    buf: &'a [u8],
    pos: usize,
    vtable: usize,
    vtable_len: usize,
}

impl<'a> Table<'a> {
    /// The root table of a buffer.
    pub(crate) fn root(buf: &'a [u8]) -> Result<Self> {
        Table::at(buf, follow(buf, 0)?)
    }

    fn at(buf: &'a [u8], pos: usize) -> Result<Self> {
        let back = u32_at(buf, pos)? as i32;
        let vtable = i64::try_from(pos)
            .ok()
            .map(|p| p - i64::from(back))
            .and_then(|v| usize::try_from(v).ok())
            .filter(|&v| v < buf.len())
            .ok_or_else(|| format!("the table at {pos} has a vtable outside the file"))?;
        let vtable_len = usize::from(u16_at(buf, vtable)?);
        if vtable_len < 4 || vtable_len % 2 != 0 {
            return Err(format!(
                "the vtable at {vtable} has an impossible size {vtable_len}"
            ));
        }
        slice(buf, vtable, vtable_len)?;
        Ok(Table {
            buf,
            pos,
            vtable,
            vtable_len,
        })
    }

    /// Where field `slot` (0-based, in schema order) is stored, if present.
    fn field(&self, slot: usize) -> Result<Option<usize>> {
        let entry = 4 + 2 * slot;
        if entry + 2 > self.vtable_len {
            return Ok(None);
        }
        match u16_at(self.buf, self.vtable + entry)? {
            0 => Ok(None),
            off => Ok(Some(self.pos + usize::from(off))),
        }
    }

    /// How many field slots the table's vtable has room for; slots past it are absent.
    pub(crate) fn slots(&self) -> usize {
        (self.vtable_len - 4) / 2
    }

    /// Whether field `slot` is stored (not left to its default).
    pub(crate) fn has(&self, slot: usize) -> Result<bool> {
        Ok(self.field(slot)?.is_some())
    }

    /// Where the table, vector or string that offset field `slot` refers to starts.
    pub(crate) fn target(&self, slot: usize) -> Result<Option<usize>> {
        match self.field(slot)? {
            Some(p) => follow(self.buf, p).map(Some),
            None => Ok(None),
        }
    }

    /// A one-byte scalar (enum, bool, byte).
    pub(crate) fn u8(&self, slot: usize, default: u8) -> Result<u8> {
        match self.field(slot)? {
            Some(p) => Ok(slice(self.buf, p, 1)?[0]),
            None => Ok(default),
        }
    }

    /// A four-byte scalar.
    pub(crate) fn u32(&self, slot: usize, default: u32) -> Result<u32> {
        match self.field(slot)? {
            Some(p) => u32_at(self.buf, p),
            None => Ok(default),
        }
    }

    /// An eight-byte scalar.
    pub(crate) fn u64(&self, slot: usize, default: u64) -> Result<u64> {
        match self.field(slot)? {
            Some(p) => u64_at(self.buf, p),
            None => Ok(default),
        }
    }

    /// A table field.
    pub(crate) fn table(&self, slot: usize) -> Result<Option<Table<'a>>> {
        match self.field(slot)? {
            Some(p) => Ok(Some(Table::at(self.buf, follow(self.buf, p)?)?)),
            None => Ok(None),
        }
    }

    /// A vector field.
    pub(crate) fn vector(&self, slot: usize) -> Result<Option<Vector<'a>>> {
        let Some(p) = self.field(slot)? else {
            return Ok(None);
        };
        let start = follow(self.buf, p)?;
        let len = u32_at(self.buf, start)? as usize;
        Ok(Some(Vector {
            buf: self.buf,
            items: start + 4,
            len,
        }))
    }

    /// An `[int]` field; absent reads as empty, as the schema's defaults do.
    pub(crate) fn ints(&self, slot: usize) -> Result<Vec<i32>> {
        match self.vector(slot)? {
            Some(v) => v.i32s(),
            None => Ok(Vec::new()),
        }
    }

    /// A string field, with invalid UTF-8 replaced.
    pub(crate) fn string(&self, slot: usize) -> Result<Option<String>> {
        match self.vector(slot)? {
            Some(v) => Ok(Some(String::from_utf8_lossy(v.bytes()?).into_owned())),
            None => Ok(None),
        }
    }
}

/// A vector: its item count and where the items start.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vector<'a> {
    buf: &'a [u8],
    items: usize,
    len: usize,
}

impl<'a> Vector<'a> {
    /// How many items.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The items as bytes (a `[ubyte]` vector or a string).
    pub(crate) fn bytes(&self) -> Result<&'a [u8]> {
        slice(self.buf, self.items, self.len)
    }

    /// Item `k` of an `[int]` vector.
    pub(crate) fn i32(&self, k: usize) -> Result<i32> {
        Ok(u32_at(self.buf, self.items + 4 * k)? as i32)
    }

    /// All items of an `[int]` vector.
    pub(crate) fn i32s(&self) -> Result<Vec<i32>> {
        // Check the whole extent first so a huge count in a corrupt file fails fast.
        slice(self.buf, self.items, self.len.saturating_mul(4))?;
        (0..self.len).map(|k| self.i32(k)).collect()
    }

    /// All items of a vector of four- or eight-byte scalars, widened to `u64`.
    pub(crate) fn words(&self, width: usize) -> Result<Vec<u64>> {
        slice(self.buf, self.items, self.len.saturating_mul(width))?;
        (0..self.len)
            .map(|k| {
                let at = self.items + width * k;
                if width == 8 {
                    u64_at(self.buf, at)
                } else {
                    u32_at(self.buf, at).map(u64::from)
                }
            })
            .collect()
    }

    /// Item `k` of a vector of tables.
    pub(crate) fn table(&self, k: usize) -> Result<Table<'a>> {
        Table::at(self.buf, self.target(k)?)
    }

    /// Where the table that item `k` of a vector of tables refers to starts.
    pub(crate) fn target(&self, k: usize) -> Result<usize> {
        follow(self.buf, self.items + 4 * k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// root -> table { a: u32 = 7, v: [int] = [1, -2] }, built by hand.
    fn tiny() -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(16u32.to_le_bytes()); // root offset -> table at 16
        b.extend(*b"TEST");
        // vtable at 8: size 8, table size 12, field0 at +4, field1 at +8
        b.extend(8u16.to_le_bytes());
        b.extend(12u16.to_le_bytes());
        b.extend(4u16.to_le_bytes());
        b.extend(8u16.to_le_bytes());
        // table at 16: back-offset 8 -> vtable at 8
        b.extend(8i32.to_le_bytes());
        b.extend(7u32.to_le_bytes());
        b.extend(4u32.to_le_bytes()); // at 24: vector at 28
        b.extend(2u32.to_le_bytes());
        b.extend(1i32.to_le_bytes());
        b.extend((-2i32).to_le_bytes());
        b
    }

    #[test]
    fn reads_tables_vectors_and_defaults() {
        let buf = tiny();
        let t = Table::root(&buf).unwrap();
        assert_eq!(t.u32(0, 0).unwrap(), 7);
        assert_eq!(t.ints(1).unwrap(), vec![1, -2]);
        assert_eq!(t.u8(5, 9).unwrap(), 9, "absent field takes its default");
        assert!(t.vector(3).unwrap().is_none());
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let buf = tiny();
        for cut in 0..buf.len() {
            let short = &buf[..cut];
            let read = Table::root(short).and_then(|t| {
                t.u32(0, 0)?;
                t.ints(1).map(|_| ())
            });
            assert!(read.is_err(), "cut at {cut} read fine");
        }
    }
}
