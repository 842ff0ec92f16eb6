//! Sizes as people write them, the same in every front end (usmp.toml, `usmp_pools!`, the
//! command's pools and problem files, `--capacity`): bytes or a binary unit.

/// What a size may be, for messages about a value that is not one.
pub const SIZE_FORMS: &str =
    "a number of bytes such as 4096, or a string with a unit such as \"16 KiB\"";

/// Parses a size in bytes as users write it: `4096`, `"16 KiB"`, `"1 MiB"`, `"512 B"`.
/// Returns a message saying what to write on failure.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '_')
        .unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    let bad =
        || format!("`{text}` is not a size; write bytes (4096) or a unit: \"16 KiB\", \"1 MiB\"");
    if digits.is_empty() {
        return Err(bad());
    }
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` does not fit in 64 bits"))?;
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" | "K" | "k" => 1 << 10,
        "MiB" | "M" => 1 << 20,
        "GiB" | "G" => 1 << 30,
        _ => return Err(bad()),
    };
    n.checked_mul(scale)
        .ok_or_else(|| format!("`{text}` does not fit in 64 bits"))
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("16 KiB"), Ok(16384));
        assert_eq!(parse_size("16KiB"), Ok(16384));
        assert_eq!(parse_size("1 MiB"), Ok(1 << 20));
        assert_eq!(parse_size("64_000"), Ok(64000));
        assert!(parse_size("16 kb").unwrap_err().contains("KiB"));
        assert!(parse_size("lots").is_err());
        assert!(
            parse_size("99999999999999999999")
                .unwrap_err()
                .contains("64 bits")
        );
        assert!(
            parse_size("17179869184 GiB")
                .unwrap_err()
                .contains("64 bits")
        );
    }
}
