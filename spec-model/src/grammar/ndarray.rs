//! `NDArray`: the data of a `Constant` (an n-dimensional array of one dtype).

use super::{DataType, TypeCode};
use half::f16;

/// Row-major element storage, one variant per supported dtype.
#[derive(Clone, Debug)]
pub enum TensorData {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F16(Vec<f16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// One element, widened: the common currency between literals and storage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i128),
    Float(f64),
}

macro_rules! each_variant {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            TensorData::Bool($v) => $body,
            TensorData::I8($v) => $body,
            TensorData::I16($v) => $body,
            TensorData::I32($v) => $body,
            TensorData::I64($v) => $body,
            TensorData::U8($v) => $body,
            TensorData::U16($v) => $body,
            TensorData::U32($v) => $body,
            TensorData::U64($v) => $body,
            TensorData::F16($v) => $body,
            TensorData::F32($v) => $body,
            TensorData::F64($v) => $body,
        }
    };
}

impl TensorData {
    pub fn len(&self) -> usize {
        each_variant!(self, v => v.len())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Room for `additional` more elements, allocated once.
    pub fn reserve(&mut self, additional: usize) {
        each_variant!(self, v => v.reserve_exact(additional))
    }

    /// Empty storage for `dtype`, or `None` if the dtype has no tensor storage
    /// (supported: bool, int8/16/32/64, uint8/16/32/64, float16/32/64, one lane).
    pub fn empty(dtype: DataType) -> Option<TensorData> {
        if dtype.lanes != 1 {
            return None;
        }
        Some(match (dtype.code, dtype.bits) {
            (TypeCode::UInt, 1) => TensorData::Bool(Vec::new()),
            (TypeCode::Int, 8) => TensorData::I8(Vec::new()),
            (TypeCode::Int, 16) => TensorData::I16(Vec::new()),
            (TypeCode::Int, 32) => TensorData::I32(Vec::new()),
            (TypeCode::Int, 64) => TensorData::I64(Vec::new()),
            (TypeCode::UInt, 8) => TensorData::U8(Vec::new()),
            (TypeCode::UInt, 16) => TensorData::U16(Vec::new()),
            (TypeCode::UInt, 32) => TensorData::U32(Vec::new()),
            (TypeCode::UInt, 64) => TensorData::U64(Vec::new()),
            (TypeCode::Float, 16) => TensorData::F16(Vec::new()),
            (TypeCode::Float, 32) => TensorData::F32(Vec::new()),
            (TypeCode::Float, 64) => TensorData::F64(Vec::new()),
            _ => return None,
        })
    }

    /// Appends `s` converted to this storage's dtype. Integers must fit exactly;
    /// floats are rounded to the nearest representable value. Returns a reason on failure.
    pub fn push(&mut self, s: Scalar) -> Result<(), String> {
        fn int<T: TryFrom<i128>>(s: Scalar, name: &str) -> Result<T, String> {
            match s {
                Scalar::Int(i) => T::try_from(i).map_err(|_| format!("{i} does not fit in {name}")),
                Scalar::Bool(b) => T::try_from(b as i128).map_err(|_| unreachable_msg()),
                Scalar::Float(f) => Err(format!("float literal {f} given for an {name} tensor")),
            }
        }
        fn float(s: Scalar) -> f64 {
            match s {
                Scalar::Int(i) => i as f64,
                Scalar::Bool(b) => b as u8 as f64,
                Scalar::Float(f) => f,
            }
        }
        match self {
            TensorData::Bool(v) => v.push(match s {
                Scalar::Bool(b) => b,
                Scalar::Int(0) => false,
                Scalar::Int(1) => true,
                other => return Err(format!("{other:?} is not a bool (use True/False, 0 or 1)")),
            }),
            TensorData::I8(v) => v.push(int(s, "int8")?),
            TensorData::I16(v) => v.push(int(s, "int16")?),
            TensorData::I32(v) => v.push(int(s, "int32")?),
            TensorData::I64(v) => v.push(int(s, "int64")?),
            TensorData::U8(v) => v.push(int(s, "uint8")?),
            TensorData::U16(v) => v.push(int(s, "uint16")?),
            TensorData::U32(v) => v.push(int(s, "uint32")?),
            TensorData::U64(v) => v.push(int(s, "uint64")?),
            TensorData::F16(v) => v.push(super::f16_nearest(float(s))),
            TensorData::F32(v) => v.push(float(s) as f32),
            TensorData::F64(v) => v.push(float(s)),
        }
        Ok(())
    }

    pub fn get(&self, i: usize) -> Scalar {
        match self {
            TensorData::Bool(v) => Scalar::Bool(v[i]),
            TensorData::I8(v) => Scalar::Int(v[i] as i128),
            TensorData::I16(v) => Scalar::Int(v[i] as i128),
            TensorData::I32(v) => Scalar::Int(v[i] as i128),
            TensorData::I64(v) => Scalar::Int(v[i] as i128),
            TensorData::U8(v) => Scalar::Int(v[i] as i128),
            TensorData::U16(v) => Scalar::Int(v[i] as i128),
            TensorData::U32(v) => Scalar::Int(v[i] as i128),
            TensorData::U64(v) => Scalar::Int(v[i] as i128),
            TensorData::F16(v) => Scalar::Float(v[i].to_f64()),
            TensorData::F32(v) => Scalar::Float(v[i] as f64),
            TensorData::F64(v) => Scalar::Float(v[i]),
        }
    }

    /// The shortest decimal text that reads back as element `i` in this dtype
    /// (`nan`, `inf`, `-inf` for the non-finite floats).
    pub fn element_text(&self, i: usize) -> String {
        fn float_text<T: std::fmt::Debug + Into<f64> + Copy>(x: T) -> String {
            let f: f64 = x.into();
            if f.is_nan() {
                // The sign of a NaN is kept (`-float("nan")` reads back with it).
                if f.is_sign_negative() { "-nan" } else { "nan" }.into()
            } else if f.is_infinite() {
                if f > 0.0 {
                    "inf".into()
                } else {
                    "-inf".into()
                }
            } else {
                format!("{x:?}")
            }
        }
        match self {
            TensorData::Bool(v) => if v[i] { "True" } else { "False" }.to_string(),
            TensorData::F16(v) => float_text(v[i].to_f32()),
            TensorData::F32(v) => float_text(v[i]),
            TensorData::F64(v) => float_text(v[i]),
            other => match other.get(i) {
                Scalar::Int(x) => x.to_string(),
                _ => unreachable!("integer storage yields integers"),
            },
        }
    }
}

fn unreachable_msg() -> String {
    "bool does not fit".to_string()
}

impl PartialEq for TensorData {
    /// Bitwise for floats: constants are syntax, and syntax equality is reflexive.
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (TensorData::F16(a), TensorData::F16(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            (TensorData::F32(a), TensorData::F32(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            (TensorData::F64(a), TensorData::F64(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            (TensorData::Bool(a), TensorData::Bool(b)) => a == b,
            (TensorData::I8(a), TensorData::I8(b)) => a == b,
            (TensorData::I16(a), TensorData::I16(b)) => a == b,
            (TensorData::I32(a), TensorData::I32(b)) => a == b,
            (TensorData::I64(a), TensorData::I64(b)) => a == b,
            (TensorData::U8(a), TensorData::U8(b)) => a == b,
            (TensorData::U16(a), TensorData::U16(b)) => a == b,
            (TensorData::U32(a), TensorData::U32(b)) => a == b,
            (TensorData::U64(a), TensorData::U64(b)) => a == b,
            _ => false,
        }
    }
}

/// An n-dimensional array: dtype, shape and row-major data with
/// `data.len() == shape.iter().product()`.
#[derive(Clone, Debug, PartialEq)]
pub struct NDArray {
    pub dtype: DataType,
    pub shape: Vec<u64>,
    pub data: TensorData,
}

impl NDArray {
    /// Builds an array from widened scalars, checking the element count and that
    /// every value fits the dtype.
    pub fn from_scalars(dtype: DataType, shape: Vec<u64>, values: &[Scalar]) -> Result<NDArray, String> {
        let mut data = TensorData::empty(dtype).ok_or_else(|| format!("dtype {dtype} has no tensor storage"))?;
        let count = shape.iter().try_fold(1u64, |acc, d| acc.checked_mul(*d));
        if count != Some(values.len() as u64) {
            return Err(format!("shape {shape:?} does not hold {} elements", values.len()));
        }
        for v in values {
            data.push(*v)?;
        }
        Ok(NDArray { dtype, shape, data })
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
}
