//! `DataType` (Grammar; later draft: TIR's data types).
//!
//! `DataType ::= Int(bits, lanes) | UInt(bits, lanes) | Float(bits, lanes) | Handle(bits, lanes)`,
//! with `Bool() = UInt(1, 1)` and `Void() = Handle(64, 0)` (the unknown dtype).
//! Any bit width and lane count is representable so that WF-18 can reject the
//! unsupported ones with a diagnostic instead of the parser refusing them.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeCode {
    Int,
    UInt,
    Float,
    Handle,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DataType {
    pub code: TypeCode,
    pub bits: u32,
    pub lanes: u32,
}

impl DataType {
    pub const fn int(bits: u32) -> DataType {
        DataType { code: TypeCode::Int, bits, lanes: 1 }
    }
    pub const fn uint(bits: u32) -> DataType {
        DataType { code: TypeCode::UInt, bits, lanes: 1 }
    }
    pub const fn float(bits: u32) -> DataType {
        DataType { code: TypeCode::Float, bits, lanes: 1 }
    }
    /// `Bool()`: shorthand for `UInt(1, 1)`.
    pub const fn bool() -> DataType {
        DataType::uint(1)
    }
    /// `Void()`: shorthand for `Handle(64, 0)`, the unknown dtype.
    pub const fn void() -> DataType {
        DataType { code: TypeCode::Handle, bits: 64, lanes: 0 }
    }
    pub const fn handle() -> DataType {
        DataType { code: TypeCode::Handle, bits: 64, lanes: 1 }
    }
    pub const INT64: DataType = DataType::int(64);
    pub const INT32: DataType = DataType::int(32);
    pub const FLOAT32: DataType = DataType::float(32);
    pub const BOOL: DataType = DataType::bool();

    pub fn is_void(&self) -> bool {
        *self == DataType::void()
    }
    pub fn is_bool(&self) -> bool {
        *self == DataType::bool()
    }
    pub fn is_int(&self) -> bool {
        self.code == TypeCode::Int
    }
    pub fn is_uint(&self) -> bool {
        self.code == TypeCode::UInt
    }
    pub fn is_float(&self) -> bool {
        self.code == TypeCode::Float
    }

    /// The dtype both operands of a TIR binary operator are converted to before it
    /// applies, as TVM's `PromoteBinaryOpType` chooses it: the float if one side is a
    /// float (the wider of two floats), the integer beside a bool, the wider of two
    /// integers, and the unsigned type when an int and a uint have the same width.
    pub fn promote_binary(self, other: DataType) -> DataType {
        if self == other {
            return self;
        }
        match (self.is_float(), other.is_float()) {
            (true, true) => return if self.bits < other.bits { other } else { self },
            (false, true) => return other,
            (true, false) => return self,
            _ => {}
        }
        match (self.is_bool(), other.is_bool()) {
            (true, false) => return other,
            (false, true) => return self,
            _ => {}
        }
        match self.bits.cmp(&other.bits) {
            std::cmp::Ordering::Less => other,
            std::cmp::Ordering::Greater => self,
            std::cmp::Ordering::Equal if self.is_uint() => self,
            std::cmp::Ordering::Equal => other,
        }
    }

    /// Does the integer `v` fit in this (integer) dtype?
    pub fn fits(&self, v: i128) -> bool {
        match self.code {
            TypeCode::Int if (1..=64).contains(&self.bits) => {
                let half = 1i128 << (self.bits - 1);
                (-half..half).contains(&v)
            }
            TypeCode::UInt if (1..=64).contains(&self.bits) => (0..(1i128 << self.bits)).contains(&v),
            _ => false,
        }
    }

    /// Parses the TVMScript spelling: `bool`, `void`, `handle`, `int32`, `uint8`,
    /// `float16`, with an optional `xN` lane suffix (`float32x4`). The empty string is `void`.
    pub fn parse(s: &str) -> Option<DataType> {
        match s {
            "" | "void" => return Some(DataType::void()),
            "bool" => return Some(DataType::bool()),
            _ => {}
        }
        let (base, lanes) = match s.rfind('x') {
            Some(i) if i + 1 < s.len() && s[i + 1..].bytes().all(|b| b.is_ascii_digit()) => {
                (&s[..i], s[i + 1..].parse::<u32>().ok()?)
            }
            _ => (s, 1),
        };
        let (code, digits) = if let Some(r) = base.strip_prefix("uint") {
            (TypeCode::UInt, r)
        } else if let Some(r) = base.strip_prefix("int") {
            (TypeCode::Int, r)
        } else if let Some(r) = base.strip_prefix("float") {
            (TypeCode::Float, r)
        } else if let Some(r) = base.strip_prefix("handle") {
            (TypeCode::Handle, r)
        } else {
            return None;
        };
        let bits = if digits.is_empty() {
            match code {
                TypeCode::Handle => 64,
                _ => return None,
            }
        } else {
            if !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            digits.parse::<u32>().ok()?
        };
        Some(DataType { code, bits, lanes })
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_void() {
            return f.write_str("void");
        }
        if self.is_bool() {
            return f.write_str("bool");
        }
        match self.code {
            TypeCode::Int => write!(f, "int{}", self.bits)?,
            TypeCode::UInt => write!(f, "uint{}", self.bits)?,
            TypeCode::Float => write!(f, "float{}", self.bits)?,
            TypeCode::Handle if self.bits == 64 => f.write_str("handle")?,
            TypeCode::Handle => write!(f, "handle{}", self.bits)?,
        }
        if self.lanes != 1 {
            write!(f, "x{}", self.lanes)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for s in [
            "bool",
            "void",
            "handle",
            "int8",
            "int64",
            "uint1x2",
            "uint16",
            "float16",
            "float32x4",
            "int7",
            "handle32",
            "handlex0",
            "float64",
        ] {
            let d = DataType::parse(s).unwrap_or_else(|| panic!("{s}"));
            let again = DataType::parse(&d.to_string()).unwrap();
            assert_eq!(d, again, "{s}");
        }
        assert_eq!(DataType::parse("uint1"), Some(DataType::bool()));
        assert_eq!(DataType::parse("handlex0").unwrap().to_string(), "void");
        assert_eq!(DataType::parse(""), Some(DataType::void()));
        for bad in ["int", "float", "i32", "int32x", "intx4", "int3a", "bfloat16x"] {
            assert_eq!(DataType::parse(bad), None, "{bad}");
        }
    }
}
