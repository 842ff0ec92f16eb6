//! Sizes as people write them, the same in every front end (usmp.toml, `usmp_pools!`, the
//! command's pools and problem files, `--capacity`): bytes or a binary unit. And memory
//! bandwidths, as datasheets write them: `"8 GB/s"`, `"0.2 GB/s"`.

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

/// What a bandwidth may be, for messages about a value that is not one.
pub const BANDWIDTH_FORMS: &str =
    "a number of bytes per second, or a string such as \"8 GB/s\", \"400 MB/s\" or \"0.2 GB/s\"";

/// Parses a bandwidth in bytes per second: `"8 GB/s"` (decimal units: B, KB, MB, GB; or
/// binary: KiB, MiB, GiB), with an optional fraction (`"0.2 GB/s"`, rounded down to whole
/// bytes per second), or a plain number of bytes per second. Zero is refused.
pub fn parse_bandwidth(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let bad = || format!("`{text}` is not a bandwidth; write {BANDWIDTH_FORMS}");
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.' && c != '_')
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: String = number.chars().filter(|&c| c != '_').collect();
    let (whole, fraction) = number.split_once('.').unwrap_or((&number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') || fraction.len() > 9 {
        return Err(bad());
    }
    let unit = unit.trim();
    let unit = match unit.strip_suffix("/s") {
        Some(u) => u.trim(),
        None if unit.is_empty() => "B",
        None => return Err(bad()),
    };
    let scale: u128 = match unit {
        "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return Err(bad()),
    };
    let digits = format!("{whole}{fraction}");
    let mantissa: u128 = digits.parse().map_err(|_| bad())?;
    let per_second = mantissa * scale / 10u128.pow(fraction.len() as u32);
    match u64::try_from(per_second) {
        Ok(0) => Err(format!(
            "`{text}` is no bandwidth at all; write a speed above zero"
        )),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("`{text}` does not fit in 64 bits")),
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_bandwidth, parse_size};

    #[test]
    fn bandwidths_take_decimal_and_binary_units() {
        assert_eq!(parse_bandwidth("8 GB/s"), Ok(8_000_000_000));
        assert_eq!(parse_bandwidth("0.2 GB/s"), Ok(200_000_000));
        assert_eq!(parse_bandwidth("400MB/s"), Ok(400_000_000));
        assert_eq!(parse_bandwidth("1 MiB/s"), Ok(1 << 20));
        assert_eq!(parse_bandwidth("1000"), Ok(1000));
        assert!(parse_bandwidth("fast").unwrap_err().contains("GB/s"));
        assert!(parse_bandwidth("8 GB").unwrap_err().contains("GB/s"));
        assert!(parse_bandwidth("1.2.3 GB/s").is_err());
        assert!(
            parse_bandwidth("0 GB/s")
                .unwrap_err()
                .contains("above zero")
        );
        assert!(
            parse_bandwidth("99999999999 GB/s")
                .unwrap_err()
                .contains("64 bits")
        );
    }

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
