//! NumPy `.npy` files straight into tensors and back (format versions 1.0–3.0, C
//! order, little-endian or byte-order-free dtypes): the bytes are copied into the
//! tensor's buffer as they are.

use crate::buffer::Memory;
use crate::dtype::DType;
use crate::tensor::{element_count, Tensor};
use std::rc::Rc;

const MAGIC: &[u8] = b"\x93NUMPY";

fn descr(d: DType) -> &'static str {
    match d {
        DType::Bool => "|b1",
        DType::I8 => "|i1",
        DType::I16 => "<i2",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::U8 => "|u1",
        DType::U16 => "<u2",
        DType::U32 => "<u4",
        DType::U64 => "<u8",
        DType::F16 => "<f2",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
    }
}

fn dtype(descr: &str) -> Option<DType> {
    if descr.starts_with('>') {
        return None;
    }
    DType::ALL.into_iter().find(|d| self::descr(*d)[1..] == descr[descr.len().saturating_sub(2)..])
}

/// The text after `'key':` in the header dictionary, up to the end of its value.
fn value<'h>(header: &'h str, key: &str) -> Option<&'h str> {
    let at = header.find(&format!("'{key}'"))? + key.len() + 2;
    let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
    let end = match rest.chars().next()? {
        '(' => rest.find(')')? + 1,
        '\'' => rest[1..].find('\'')? + 2,
        _ => rest.find([',', '}']).unwrap_or(rest.len()),
    };
    Some(&rest[..end])
}

/// Reads an `.npy` file's bytes into a tensor allocated from `memory`.
pub fn read(bytes: &[u8], memory: &Rc<Memory>) -> Result<Tensor, String> {
    if bytes.len() < 10 || !bytes.starts_with(MAGIC) {
        return Err("not an .npy file (bad magic)".into());
    }
    let (len, start): (usize, usize) = match bytes[6] {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = bytes.get(start..start.saturating_add(len)).ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(header).map_err(|_| "the .npy header is not text")?;
    let d = value(header, "descr").ok_or("no 'descr' in the .npy header")?.trim_matches('\'');
    let dt = dtype(d).ok_or_else(|| format!("unsupported .npy dtype {d}"))?;
    if value(header, "fortran_order") != Some("False") {
        return Err("Fortran-order arrays are not supported (save with np.ascontiguousarray)".into());
    }
    let shape_text = value(header, "shape").ok_or("no 'shape' in the .npy header")?;
    let shape = shape_text
        .trim_matches(['(', ')'])
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u64>().map_err(|_| format!("bad dimension `{s}` in the .npy shape")))
        .collect::<Result<Vec<u64>, String>>()?;
    let data = &bytes[start + len..];
    let n = element_count(&shape).and_then(|n| n.checked_mul(dt.size())).ok_or("the .npy array is too large")?;
    if data.len() != n {
        return Err(format!("the .npy data has {} bytes, the shape needs {n}", data.len()));
    }
    if dt == DType::Bool && data.iter().any(|b| *b > 1) {
        return Err("a bool .npy element is neither 0 nor 1".into());
    }
    let t = Tensor::zeros(dt, &shape, memory).map_err(|_| "the .npy array exceeds the memory budget".to_string())?;
    t.data_mut().ok_or("a fresh tensor is in use")?.bytes_mut().copy_from_slice(data);
    Ok(t)
}

/// A tensor as `.npy` bytes (format 1.0).
pub fn write(t: &Tensor) -> Option<Vec<u8>> {
    let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!("{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}", descr(t.dtype()));
    let unpadded = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = MAGIC.to_vec();
    out.extend([1, 0]);
    out.extend(u16::try_from(header.len()).ok()?.to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(t.data()?.bytes());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensors_round_trip() {
        let mem = Memory::new(1 << 20);
        let t = Tensor::from_slice(DType::F32, &[2, 2], &[1.0f32, -2.0, 0.5, 8.0], &mem).unwrap();
        let bytes = write(&t).unwrap();
        assert_eq!((bytes.len() - t.numel() * 4) % 64, 0);
        let back = read(&bytes, &mem).unwrap();
        assert_eq!((back.dtype(), back.shape()), (DType::F32, &[2u64, 2][..]));
        assert_eq!(&*back.elements::<f32>().unwrap(), &[1.0, -2.0, 0.5, 8.0]);
        assert!(read(b"garbage", &mem).is_err());
        let mut bad = bytes.clone();
        bad.truncate(bytes.len() - 1);
        assert!(read(&bad, &mem).is_err());
    }
}
