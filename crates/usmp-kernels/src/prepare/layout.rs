//! `Prepare` of the elementwise, reduction and layout operators: RELU, RELU6, ADD, MUL,
//! MEAN, CONCATENATION, PAD and RESIZE_NEAREST_NEIGHBOR.

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use usmp::{ElementType, Options};

use super::{Call, Operand, activation_range, quantize_multiplier};
use crate::{Add, Broadcast, Concatenation, Int, Kernel, Mean, Mul, Pad, Requantize, Resize};

/// The shape extended to 4 dimensions with leading ones.
fn extend(o: &Operand<'_>, what: &str) -> Result<[usize; 4], String> {
    let d = o.dims()?;
    if d.len() > 4 {
        return Err(format!(
            "{what} has {} dimensions; these kernels take at most 4",
            d.len()
        ));
    }
    let mut out = [1; 4];
    out[4 - d.len()..].copy_from_slice(&d);
    Ok(out)
}

/// A constant input's little-endian int32 values.
fn constant_i32(o: &Operand<'_>, what: &str) -> Result<Vec<i64>, String> {
    let data = o
        .constant
        .ok_or_else(|| format!("{what} is not a constant; these kernels need it at build time"))?;
    match o.element {
        ElementType::Int32 => Ok(data
            .chunks_exact(4)
            .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect()),
        ElementType::Int64 => Ok(data
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect()),
        other => Err(format!("{what} is {other:?}; Int32 or Int64 expected")),
    }
}

pub(super) fn relu<R>(
    call: &Call<'_, '_>,
    six: bool,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let (input, output) = (call.input(0, "the input")?, call.output()?);
    let (in_scale, in_zero) = input.int8("the input")?;
    let (out_scale, out_zero) = output.int8("the output")?;
    let elements = input.elements()?;
    let (multiplier, shift, input_zero, output_zero, clamp) = if six {
        // `Relu6Quantized`: a clamp between the input's zero and six, no rescaling.
        let q6 = (in_zero + (6.0f32 / in_scale).round() as i32).clamp(-128, 127);
        (1 << 30, 1, 0, 0, [in_zero, q6])
    } else {
        let (m, s) = quantize_multiplier(f64::from(in_scale / out_scale))?;
        let lo = (out_zero + (0.0f32 / out_scale).round() as i32).max(-128);
        (m, s, in_zero, out_zero, [lo, 127])
    };
    Ok(with(&Kernel::Relu(&Requantize {
        elements,
        from: Int::I8,
        to: Int::I8,
        input_zero,
        output_zero,
        multiplier,
        shift,
        clamp,
    })))
}

/// How the two inputs broadcast to the output.
fn broadcast(call: &Call<'_, '_>) -> Result<Broadcast, String> {
    let (a, b, o) = (
        call.input(0, "input 1")?,
        call.input(1, "input 2")?,
        call.output()?,
    );
    let out = extend(&o, "the output")?;
    let strides = |x: &Operand<'_>, what: &str| -> Result<[usize; 4], String> {
        let d = extend(x, what)?;
        let mut s = [0; 4];
        let mut step = 1;
        for k in (0..4).rev() {
            if d[k] != out[k] && d[k] != 1 {
                return Err(format!(
                    "{what} {:?} does not broadcast to the output {:?}",
                    x.shape, o.shape
                ));
            }
            s[k] = if d[k] == 1 { 0 } else { step };
            step *= d[k];
        }
        Ok(s)
    };
    Ok(Broadcast {
        output: out,
        first: strides(&a, "input 1")?,
        second: strides(&b, "input 2")?,
        first_elements: a.elements()?,
        second_elements: b.elements()?,
    })
}

fn elementwise_activation(
    call: &Call<'_, '_>,
    out_scale: f32,
    out_zero: i32,
) -> Result<[i32; 2], String> {
    match *call.options {
        Options::Elementwise { activation } => activation_range(activation, out_scale, out_zero),
        Options::None => activation_range(usmp::Activation::None, out_scale, out_zero),
        other => Err(format!("options {other:?} are not ADD's or MUL's")),
    }
}

pub(super) fn add<R>(
    call: &Call<'_, '_>,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    const LEFT_SHIFT: u32 = 20;
    let (s1, z1) = call.input(0, "input 1")?.int8("input 1")?;
    let (s2, z2) = call.input(1, "input 2")?.int8("input 2")?;
    let (so, zo) = call.output()?.int8("the output")?;
    let twice_max = 2.0 * f64::from(s1.max(s2));
    let (m1, e1) = quantize_multiplier(f64::from(s1) / twice_max)?;
    let (m2, e2) = quantize_multiplier(f64::from(s2) / twice_max)?;
    let (mo, eo) =
        quantize_multiplier(twice_max / (f64::from(1u32 << LEFT_SHIFT) * f64::from(so)))?;
    Ok(with(&Kernel::Add(&Add {
        shape: broadcast(call)?,
        first_offset: -z1,
        second_offset: -z2,
        left_shift: LEFT_SHIFT,
        first: [m1, e1],
        second: [m2, e2],
        output: [mo, eo],
        output_offset: zo,
        activation: elementwise_activation(call, so, zo)?,
    })))
}

pub(super) fn mul<R>(
    call: &Call<'_, '_>,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let (s1, z1) = call.input(0, "input 1")?.int8("input 1")?;
    let (s2, z2) = call.input(1, "input 2")?.int8("input 2")?;
    let (so, zo) = call.output()?.int8("the output")?;
    let (m, e) = quantize_multiplier(f64::from(s1) * f64::from(s2) / f64::from(so))?;
    Ok(with(&Kernel::Mul(&Mul {
        shape: broadcast(call)?,
        first_offset: -z1,
        second_offset: -z2,
        output: [m, e],
        output_offset: zo,
        activation: elementwise_activation(call, so, zo)?,
    })))
}

pub(super) fn mean<R>(
    call: &Call<'_, '_>,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let (input, output) = (call.input(0, "the input")?, call.output()?);
    let (si, zi) = input.int8("the input")?;
    let (so, zo) = output.int8("the output")?;
    let rank = input.shape.len();
    let d = extend(&input, "the input")?;
    let mut reduced = [false; 4];
    for axis in constant_i32(&call.input(1, "the axes")?, "the axes")? {
        let a = if axis < 0 { axis + rank as i64 } else { axis };
        if !(0..rank as i64).contains(&a) {
            return Err(format!(
                "axis {axis} is outside the input's {rank} dimensions"
            ));
        }
        reduced[a as usize + 4 - rank] = true;
    }
    let count: usize = (0..4).filter(|&k| reduced[k]).map(|k| d[k]).product();
    let kept: usize = (0..4).filter(|&k| !reduced[k]).map(|k| d[k]).product();
    if count == 0 || output.elements()? != kept {
        return Err(format!(
            "the output {:?} is not the input {:?} reduced",
            output.shape, input.shape
        ));
    }
    let count = i32::try_from(count).map_err(|_| "more than 2^31 elements per mean".to_string())?;
    let (m, s) = quantize_multiplier(f64::from(si) / f64::from(so))?;
    // `QuantizedMeanOrSum` folds the division by the count into the multiplier.
    let shift = (63 - (count as u64).leading_zeros() as i32)
        .min(32)
        .min(31 + s);
    let multiplier = ((i64::from(m) << shift) / i64::from(count)) as i32;
    Ok(with(&Kernel::Mean(&Mean {
        input: d,
        reduced,
        count,
        input_zero: zi,
        output_zero: zo,
        multiplier,
        shift: s - shift,
    })))
}

/// Bytes of one element of a layout operator's operand.
fn element_bytes(o: &Operand<'_>) -> Result<usize, String> {
    match o.element {
        ElementType::Int8 | ElementType::UInt8 => Ok(1),
        ElementType::Int16 => Ok(2),
        ElementType::Int32 | ElementType::Float32 => Ok(4),
        other => Err(format!(
            "element type {other:?} is not one these kernels move"
        )),
    }
}

pub(super) fn concatenation<R>(
    call: &Call<'_, '_>,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let output = call.output()?;
    let Options::Concatenation { axis, activation } = *call.options else {
        return Err(format!(
            "options {:?} are not CONCATENATION's",
            call.options
        ));
    };
    if activation != usmp::Activation::None {
        return Err(
            "a fused activation on CONCATENATION is not one TFLite Micro applies".to_string(),
        );
    }
    let rank = output.shape.len() as i64;
    let axis = if axis < 0 {
        i64::from(axis) + rank
    } else {
        i64::from(axis)
    };
    if !(0..rank).contains(&axis) {
        return Err(format!(
            "axis {axis} is outside the output's {rank} dimensions"
        ));
    }
    let axis = axis as usize;
    let od = output.dims()?;
    let width = element_bytes(&output)?;
    let outer: usize = od[..axis].iter().product();
    let inner: usize = od[axis + 1..].iter().product();
    let mut parts = Vec::new();
    for k in 0..call.inputs.len() {
        let x = call.input(k, "an input")?;
        if x.element != output.element
            || x.scales.first() != output.scales.first()
            || x.zero_points.first() != output.zero_points.first()
        {
            return Err(format!(
                "input {k} has another type or quantization than the output; TFLite Micro requires them equal"
            ));
        }
        let xd = x.dims()?;
        if xd.len() != od.len() || (0..od.len()).any(|i| i != axis && xd[i] != od[i]) {
            return Err(format!(
                "input {k} {:?} does not fit the output {:?}",
                x.shape, output.shape
            ));
        }
        parts.push(xd[axis] * inner * width);
    }
    Ok(with(&Kernel::Concatenation(&Concatenation {
        outer,
        parts: &parts,
    })))
}

pub(super) fn pad<R>(
    call: &Call<'_, '_>,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let (input, output) = (call.input(0, "the input")?, call.output()?);
    let (_, zo) = output.int8("the output")?;
    let rank = input.shape.len();
    let paddings = constant_i32(&call.input(1, "the paddings")?, "the paddings")?;
    if paddings.len() != 2 * rank || paddings.iter().any(|&p| p < 0) {
        return Err(format!(
            "the paddings {paddings:?} are not two non-negative values per dimension"
        ));
    }
    let mut before = [0usize; 4];
    for k in 0..rank {
        before[k + 4 - rank] = paddings[2 * k] as usize;
    }
    let value = if call.has(2) {
        let v = call.input(2, "the padding value")?;
        let data = v
            .constant
            .filter(|d| d.len() == 1)
            .ok_or("the padding value is not a one-byte constant")?;
        data[0] as i8 as i32
    } else {
        zo
    };
    let (i, o) = (extend(&input, "the input")?, extend(&output, "the output")?);
    for k in 0..4 {
        let after = if k + rank >= 4 {
            paddings[2 * (k + rank - 4) + 1] as usize
        } else {
            0
        };
        if before[k] + i[k] + after != o[k] {
            return Err(format!(
                "the output {:?} is not the input {:?} padded by {paddings:?}",
                output.shape, input.shape
            ));
        }
    }
    Ok(with(&Kernel::Pad(&Pad {
        input: i,
        before,
        output: o,
        value: &[value as i8 as u8],
    })))
}

/// `GetNearestNeighbor`, in float as TFLite computes it.
fn nearest(out: usize, input: usize, output: usize, align: bool, half: bool) -> usize {
    let scale = if align && output > 1 {
        (input - 1) as f32 / (output - 1) as f32
    } else {
        input as f32 / output as f32
    };
    let offset = if half { 0.5f32 } else { 0.0 };
    let v = (out as f32 + offset) * scale;
    let v = if align { v.round() } else { v.floor() } as i64;
    v.min(input as i64 - 1).max(0) as usize
}

pub(super) fn resize<R>(
    call: &Call<'_, '_>,
    with: impl FnOnce(&Kernel<'_>) -> R,
) -> Result<R, String> {
    let (input, output) = (call.input(0, "the input")?, call.output()?);
    let Options::Resize {
        align_corners,
        half_pixel_centers,
    } = *call.options
    else {
        return Err(format!(
            "options {:?} are not RESIZE_NEAREST_NEIGHBOR's",
            call.options
        ));
    };
    let i = input.dims_n::<4>("the input")?;
    let o = output.dims_n::<4>("the output")?;
    if i[0] != o[0] || i[3] != o[3] || i[1] == 0 || i[2] == 0 || i[1] > 65536 || i[2] > 65536 {
        return Err(format!("input {i:?} and output {o:?} do not agree"));
    }
    // At most 65,536 input rows and columns (checked above): every index fits a u16.
    let rows: Vec<u16> = (0..o[1])
        .map(|y| nearest(y, i[1], o[1], align_corners, half_pixel_centers) as u16)
        .collect();
    let columns: Vec<u16> = (0..o[2])
        .map(|x| nearest(x, i[2], o[2], align_corners, half_pixel_centers) as u16)
        .collect();
    Ok(with(&Kernel::ResizeNearestNeighbor(&Resize {
        input: i,
        rows: &rows,
        columns: &columns,
        element_bytes: element_bytes(&input)?,
    })))
}
