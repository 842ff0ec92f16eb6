//! The tensor table: each tensor's element type, shape and quantization as `const` data,
//! written compactly (per-channel data is most of a model's table).

use std::fmt::Write;

use usmp_core::tflite::{Quantization, TensorInfo};

use crate::outputs::Embed;

/// `ElementType::...`: the runtime's variant, written as its name (`Int8`, `Other(200)`).
fn element(e: usmp::ElementType) -> String {
    format!("ElementType::{e:?}")
}

/// An exact `f32` literal: the shortest decimal that reads back to the same bits, or the
/// bits themselves where no literal can say it (NaN, infinities).
pub(super) fn float(x: f32) -> String {
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

/// Whether a tensor's scales go to the binary file rather than into the text: the
/// per-channel lists, which are most of a model's table.
fn in_file(q: &Quantization) -> bool {
    q.scales.len() > 1
}

/// The name of the file [`Embed::OutDir`] expects for `module`'s per-channel scales.
pub fn scales_file(module: &str) -> String {
    format!("{module}.scales.bin")
}

/// The per-channel scales of `tensors`, four little-endian bytes each, in tensor order;
/// empty when no tensor has more than one scale.
pub fn scales_image(tensors: &[TensorInfo]) -> Vec<u8> {
    tensors
        .iter()
        .map(|t| &t.quantization)
        .filter(|q| in_file(q))
        .flat_map(|q| q.scales.iter().flat_map(|s| s.to_le_bytes()))
        .collect()
}

/// Writes `TENSORS` for `module`; with [`Embed::OutDir`], per-channel scales are cut out
/// of one included file ([`scales_image`]) instead of written as literals.
pub(super) fn table(
    out: &mut String,
    module: &str,
    tensors: &[TensorInfo],
    embed: &Embed,
    rt: &str,
) {
    let file = *embed == Embed::OutDir && tensors.iter().any(|t| in_file(&t.quantization));
    if file {
        let _ = writeln!(
            out,
            "    /// Per-channel quantization scales, four little-endian bytes each.\n    const SCALES: &[u8] = include_bytes!(\"{}\");",
            scales_file(module)
        );
    }
    out.push_str(
        "    /// Each tensor's element type, shape and quantization (from the `.tflite` file).\n",
    );
    out.push_str("    pub const TENSORS: &[Tensor] = &[");
    if tensors.is_empty() {
        out.push_str("];\n");
        return;
    }
    out.push('\n');
    let mut at = 0usize;
    for t in tensors {
        let shape: Vec<String> = t.shape.iter().map(i32::to_string).collect();
        let q = &t.quantization;
        let quantization = if q.scales.is_empty() {
            "None".to_string()
        } else {
            let scales = if file && in_file(q) {
                let bytes = q.scales.len() * 4;
                at += bytes;
                format!(
                    "Scales::LittleEndian({rt}::slice(SCALES, {}, {bytes}))",
                    at - bytes
                )
            } else {
                format!("Scales::F32({})", list(&q.scales, |&s| float(s)))
            };
            format!(
                "Some(Quantization {{ scale: {scales}, zero_point: {}, dimension: {} }})",
                list(&q.zero_points, i64::to_string),
                q.dimension
            )
        };
        let _ = writeln!(
            out,
            "        Tensor {{ element: {}, shape: &[{}], quantization: {quantization} }},",
            element(t.element),
            shape.join(", ")
        );
    }
    out.push_str("    ];\n");
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
        assert_eq!(element(usmp::ElementType::Int8), "ElementType::Int8");
        let unknown = usmp::ElementType::from_code(200);
        assert_eq!(element(unknown), "ElementType::Other(200)");
    }
}
