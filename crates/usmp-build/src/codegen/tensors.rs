//! The tensor table: each tensor's element type, shape and quantization as `const` data,
//! written compactly (per-channel data is most of a model's table).

use std::fmt::Write;

use usmp_core::tflite::TensorInfo;

/// `ElementType::...` for a schema type name.
fn element(name: &str) -> String {
    let known = [
        ("FLOAT32", "Float32"),
        ("FLOAT16", "Float16"),
        ("INT32", "Int32"),
        ("UINT8", "UInt8"),
        ("INT64", "Int64"),
        ("BOOL", "Bool"),
        ("INT16", "Int16"),
        ("INT8", "Int8"),
        ("FLOAT64", "Float64"),
        ("UINT32", "UInt32"),
        ("UINT16", "UInt16"),
    ];
    if let Some((_, v)) = known.iter().find(|(n, _)| *n == name) {
        return format!("ElementType::{v}");
    }
    // The rest by schema number, as the reader names them.
    let code = match name {
        "STRING" => 5,
        "COMPLEX64" => 8,
        "COMPLEX128" => 11,
        "UINT64" => 12,
        "RESOURCE" => 13,
        "VARIANT" => 14,
        "INT4" => 17,
        other => other
            .strip_prefix("type ")
            .and_then(|n| n.parse::<u8>().ok())
            .unwrap_or(u8::MAX),
    };
    format!("ElementType::Other({code})")
}

/// An exact `f32` literal: the shortest decimal that reads back to the same bits, or the
/// bits themselves where no literal can say it (NaN, infinities).
fn float(x: f32) -> String {
    if x.is_finite() {
        let s = format!("{x:?}");
        if s.contains(['.', 'e']) {
            s
        } else {
            format!("{s}.0")
        }
    } else {
        format!("f32::from_bits({:#x})", x.to_bits())
    }
}

/// `&[a, b, ...]`, or `&[a; n]` when every item is the same (per-channel zero points).
fn list<T: PartialEq>(items: &[T], show: impl Fn(&T) -> String) -> String {
    match items {
        [first, rest @ ..] if !rest.is_empty() && rest.iter().all(|x| x == first) => {
            format!("&[{}; {}]", show(first), items.len())
        }
        _ => {
            let shown: Vec<String> = items.iter().map(show).collect();
            format!("&[{}]", shown.join(", "))
        }
    }
}

/// Writes the entries of `TENSORS` (between its brackets).
pub(super) fn table(out: &mut String, tensors: &[TensorInfo]) {
    if tensors.is_empty() {
        return;
    }
    out.push('\n');
    for t in tensors {
        let shape: Vec<String> = t.shape.iter().map(i32::to_string).collect();
        let q = &t.quantization;
        let quantization = if q.scales.is_empty() {
            "None".to_string()
        } else {
            format!(
                "Some(Quantization {{ scale: {}, zero_point: {}, dimension: {} }})",
                list(&q.scales, |&s| float(s)),
                list(&q.zero_points, i64::to_string),
                q.dimension
            )
        };
        let _ = writeln!(
            out,
            "        Tensor {{ element: {}, shape: &[{}], quantization: {quantization} }},",
            element(&t.element),
            shape.join(", ")
        );
    }
    out.push_str("    ");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_back_exactly() {
        for x in [
            0.0f32,
            1.0,
            -0.5,
            0.003_921_569,
            1e-30,
            3.4e38,
            f32::MIN_POSITIVE,
        ] {
            let s = float(x);
            assert_eq!(s.parse::<f32>().unwrap().to_bits(), x.to_bits(), "{s}");
        }
        assert_eq!(float(f32::INFINITY), "f32::from_bits(0x7f800000)");
        assert_eq!(float(2.0), "2.0");
    }

    #[test]
    fn repeated_items_are_one() {
        assert_eq!(list(&[0i64, 0, 0], i64::to_string), "&[0; 3]");
        assert_eq!(list(&[1i64, 2], i64::to_string), "&[1, 2]");
        assert_eq!(list(&[5i64], i64::to_string), "&[5]");
        assert_eq!(element("INT8"), "ElementType::Int8");
        assert_eq!(element("STRING"), "ElementType::Other(5)");
    }
}
