//! NumPy `.npy` files (format versions 1.0–3.0, C order, little-endian or
//! byte-order-free dtypes): `oracle eval`'s `@path.npy` arguments and `--out DIR`, and the
//! tensors of the conformance protocol (both its sides, so it lives with the AST).

use crate::grammar::{DataType, NDArray, Scalar, TensorData, TypeCode};

const MAGIC: &[u8] = b"\x93NUMPY";

fn descr_of(d: DataType) -> Option<&'static str> {
    Some(match (d.code, d.bits) {
        (TypeCode::UInt, 1) => "|b1",
        (TypeCode::Int, 8) => "|i1",
        (TypeCode::Int, 16) => "<i2",
        (TypeCode::Int, 32) => "<i4",
        (TypeCode::Int, 64) => "<i8",
        (TypeCode::UInt, 8) => "|u1",
        (TypeCode::UInt, 16) => "<u2",
        (TypeCode::UInt, 32) => "<u4",
        (TypeCode::UInt, 64) => "<u8",
        (TypeCode::Float, 16) => "<f2",
        (TypeCode::Float, 32) => "<f4",
        (TypeCode::Float, 64) => "<f8",
        _ => return None,
    })
}

fn dtype_of(descr: &str) -> Option<DataType> {
    let d = descr.trim_start_matches(['<', '|', '=']);
    Some(match d {
        "b1" => DataType::BOOL,
        "i1" => DataType::int(8),
        "i2" => DataType::int(16),
        "i4" => DataType::int(32),
        "i8" => DataType::int(64),
        "u1" => DataType::uint(8),
        "u2" => DataType::uint(16),
        "u4" => DataType::uint(32),
        "u8" => DataType::uint(64),
        "f2" => DataType::float(16),
        "f4" => DataType::float(32),
        "f8" => DataType::float(64),
        _ => return None,
    })
}

/// The value of `'key': ...` in the header dictionary (a string, a bool or a tuple).
fn field<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let start = header.find(&format!("'{key}'"))? + key.len() + 2;
    let rest = header[start..].trim_start().strip_prefix(':')?.trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')')? + 1
    } else if let Some(q) = rest.strip_prefix('\'') {
        q.find('\'')? + 2
    } else {
        rest.find([',', '}']).unwrap_or(rest.len())
    };
    Some(rest[..end].trim())
}

/// Parses an `.npy` file's bytes.
pub fn read_npy(bytes: &[u8]) -> Result<NDArray, String> {
    if !bytes.starts_with(MAGIC) || bytes.len() < 10 {
        return Err("not an .npy file (bad magic)".into());
    }
    let (header_len, offset) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = bytes.get(offset..offset + header_len).ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(header).map_err(|_| "the .npy header is not text")?;
    let descr = field(header, "descr").ok_or("no 'descr' in the .npy header")?.trim_matches('\'');
    if descr.starts_with('>') {
        return Err(format!("big-endian dtype {descr} is not supported"));
    }
    let dtype = dtype_of(descr).ok_or_else(|| format!("unsupported .npy dtype {descr}"))?;
    if field(header, "fortran_order") != Some("False") {
        return Err("Fortran-order arrays are not supported (save with np.ascontiguousarray)".into());
    }
    let shape_text = field(header, "shape").ok_or("no 'shape' in the .npy header")?;
    let shape: Vec<u64> = shape_text
        .trim_matches(['(', ')'])
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u64>().map_err(|_| format!("bad dimension `{s}` in the .npy shape")))
        .collect::<Result<_, _>>()?;
    let width = (dtype.bits as usize).div_ceil(8).max(1);
    let budget = crate::limits::current().memory as u64;
    let count =
        shape.iter().try_fold(1u64, |a, d| a.checked_mul(*d)).filter(|n| n.saturating_mul(width as u64) <= budget);
    let count = count.ok_or_else(|| {
        format!(
            "the array of shape {shape:?} is larger than the memory budget ({})",
            crate::limits::raise_hint("LIMIT-memory")
        )
    })? as usize;
    let data = &bytes[offset + header_len..];
    if data.len() != count * width {
        return Err(format!("expected {} bytes of data, found {}", count * width, data.len()));
    }
    let mut values = Vec::with_capacity(count);
    for chunk in data.chunks_exact(width) {
        let mut b = [0u8; 8];
        b[..width].copy_from_slice(chunk);
        let raw = u64::from_le_bytes(b);
        values.push(match (dtype.code, dtype.bits) {
            (TypeCode::UInt, 1) => Scalar::Bool(raw != 0),
            (TypeCode::Int, bits) => Scalar::Int(i128::from(((raw << (64 - bits)) as i64) >> (64 - bits))),
            (TypeCode::UInt, _) => Scalar::Int(i128::from(raw)),
            (_, 16) => Scalar::Float(f64::from(half::f16::from_bits(raw as u16).to_f32())),
            (_, 32) => Scalar::Float(f64::from(f32::from_bits(raw as u32))),
            _ => Scalar::Float(f64::from_bits(raw)),
        });
    }
    NDArray::from_scalars(dtype, shape, &values)
}

/// Serializes an array as `.npy` (version 1.0).
pub fn write_npy(a: &NDArray) -> Result<Vec<u8>, String> {
    let descr = descr_of(a.dtype).ok_or_else(|| format!("dtype {} has no .npy form", a.dtype))?;
    let shape = match a.shape.len() {
        1 => format!("({},)", a.shape[0]),
        _ => format!("({})", a.shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad so that the data starts at a multiple of 64 bytes, ending with a newline.
    while !(MAGIC.len() + 4 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut out = MAGIC.to_vec();
    out.extend([1, 0]);
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    let width = (a.dtype.bits as usize).div_ceil(8).max(1);
    for i in 0..a.data.len() {
        let bits: u64 = match (&a.data, a.data.get(i)) {
            (TensorData::F16(v), _) => u64::from(v[i].to_bits()),
            (TensorData::F32(v), _) => u64::from(v[i].to_bits()),
            (TensorData::F64(v), _) => v[i].to_bits(),
            (_, Scalar::Bool(b)) => u64::from(b),
            (_, Scalar::Int(x)) => x as u64,
            (_, Scalar::Float(f)) => f.to_bits(),
        };
        out.extend(&bits.to_le_bytes()[..width]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_round_trips() {
        for (d, vals) in [
            (DataType::BOOL, vec![Scalar::Bool(true), Scalar::Bool(false)]),
            (DataType::int(8), vec![Scalar::Int(-128), Scalar::Int(127)]),
            (DataType::int(64), vec![Scalar::Int(i128::from(i64::MIN)), Scalar::Int(5)]),
            (DataType::uint(16), vec![Scalar::Int(65535), Scalar::Int(0)]),
            (DataType::float(16), vec![Scalar::Float(0.5), Scalar::Float(-2.0)]),
            (DataType::float(32), vec![Scalar::Float(1.25), Scalar::Float(f64::INFINITY)]),
            (DataType::float(64), vec![Scalar::Float(0.1), Scalar::Float(-0.0)]),
        ] {
            let a = NDArray::from_scalars(d, vec![2], &vals).unwrap();
            let bytes = write_npy(&a).unwrap();
            assert_eq!(read_npy(&bytes).unwrap(), a, "{d}");
        }
        let scalar = NDArray::from_scalars(DataType::INT32, vec![], &[Scalar::Int(7)]).unwrap();
        assert_eq!(read_npy(&write_npy(&scalar).unwrap()).unwrap(), scalar);
    }

    #[test]
    fn bad_files_are_errors() {
        assert!(read_npy(b"hello").is_err());
        let a =
            NDArray::from_scalars(DataType::INT32, vec![3], &[Scalar::Int(1), Scalar::Int(2), Scalar::Int(3)]).unwrap();
        let mut bytes = write_npy(&a).unwrap();
        bytes.pop();
        assert!(read_npy(&bytes).is_err());
        for cut in 0..bytes.len() {
            let _ = read_npy(&bytes[..cut]);
        }
    }
}
