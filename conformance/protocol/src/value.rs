//! The value encoding of PROTOCOL.md ("Values"): tensors as base64 `.npy`, the others
//! as small JSON objects with one key naming the kind.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Map, Value as Json};
use spec_model::grammar::{DataType, NDArray, TypeCode};
use spec_model::npy::{read_npy, write_npy};

/// A scalar prim value with its dtype.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WirePrim {
    Int(i64, DataType),
    Float(f64, DataType),
    Bool(bool),
}

/// A value crossing the protocol.
#[derive(Clone, Debug, PartialEq)]
pub enum WireValue {
    Tensor(NDArray),
    Shape(Vec<i64>),
    Prim(WirePrim),
    Tuple(Vec<WireValue>),
    Str(String),
    DType(DataType),
    /// A global function of the program (arguments only).
    Global(String),
    /// A value that cannot be sent (results only): what it is.
    Opaque(String),
    Null,
}

fn float_json(f: f64) -> Json {
    if f.is_nan() {
        json!("nan")
    } else if f.is_infinite() {
        json!(if f > 0.0 { "inf" } else { "-inf" })
    } else {
        json!(f)
    }
}

fn float_of(j: &Json) -> Option<f64> {
    match j {
        Json::String(s) => match s.as_str() {
            "nan" => Some(f64::NAN),
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        other => other.as_f64(),
    }
}

impl WireValue {
    /// The JSON form.
    pub fn to_json(&self) -> Result<Json, String> {
        Ok(match self {
            WireValue::Tensor(a) => json!({ "tensor": BASE64.encode(write_npy(a)?) }),
            WireValue::Shape(s) => json!({ "shape": s }),
            WireValue::Prim(p) => {
                let (dtype, value) = match *p {
                    WirePrim::Int(i, d) => (d, json!(i)),
                    WirePrim::Float(f, d) => (d, float_json(f)),
                    WirePrim::Bool(b) => (DataType::BOOL, json!(b)),
                };
                json!({ "prim": { "dtype": dtype.to_string(), "value": value } })
            }
            WireValue::Tuple(fs) => json!({ "tuple": fs.iter().map(|f| f.to_json()).collect::<Result<Vec<_>, _>>()? }),
            WireValue::Str(s) => json!({ "str": s }),
            WireValue::DType(d) => json!({ "dtype": d.to_string() }),
            WireValue::Global(g) => json!({ "global": g }),
            WireValue::Opaque(o) => json!({ "opaque": o }),
            WireValue::Null => json!({ "null": true }),
        })
    }

    /// Reads the JSON form; errors say what is wrong with it.
    pub fn from_json(j: &Json) -> Result<WireValue, String> {
        let obj: &Map<String, Json> = j.as_object().ok_or_else(|| format!("a value is an object, not `{j}`"))?;
        let mut entries = obj.iter();
        let (Some((key, v)), None) = (entries.next(), entries.next()) else {
            return Err(format!("a value has exactly one key: `{j}`"));
        };
        let text = |v: &Json| v.as_str().map(str::to_string).ok_or_else(|| format!("`{key}` takes a string"));
        let dtype = |s: &str| DataType::parse(s).ok_or_else(|| format!("unknown dtype `{s}`"));
        Ok(match key.as_str() {
            "tensor" => {
                let bytes = BASE64.decode(text(v)?).map_err(|e| format!("tensor: bad base64: {e}"))?;
                WireValue::Tensor(read_npy(&bytes)?)
            }
            "shape" => WireValue::Shape(
                v.as_array()
                    .ok_or("`shape` takes a list")?
                    .iter()
                    .map(|d| d.as_i64().ok_or_else(|| format!("a dimension is an integer, not `{d}`")))
                    .collect::<Result<_, _>>()?,
            ),
            "prim" => {
                let d = dtype(v.get("dtype").and_then(Json::as_str).ok_or("`prim` needs a `dtype` string")?)?;
                let x = v.get("value").ok_or("`prim` needs a `value`")?;
                WireValue::Prim(match d.code {
                    _ if d == DataType::BOOL => WirePrim::Bool(
                        x.as_bool().or_else(|| x.as_i64().map(|i| i != 0)).ok_or("a bool prim is true/false")?,
                    ),
                    TypeCode::Int | TypeCode::UInt => {
                        WirePrim::Int(x.as_i64().ok_or_else(|| format!("an {d} prim is an integer, not `{x}`"))?, d)
                    }
                    _ => WirePrim::Float(float_of(x).ok_or_else(|| format!("a {d} prim is a number, not `{x}`"))?, d),
                })
            }
            "tuple" => WireValue::Tuple(
                v.as_array()
                    .ok_or("`tuple` takes a list")?
                    .iter()
                    .map(WireValue::from_json)
                    .collect::<Result<_, _>>()?,
            ),
            "str" => WireValue::Str(text(v)?),
            "dtype" => WireValue::DType(dtype(&text(v)?)?),
            "global" => WireValue::Global(text(v)?),
            "opaque" => WireValue::Opaque(text(v)?),
            "null" => WireValue::Null,
            other => return Err(format!("unknown value kind `{other}`")),
        })
    }
}

impl Serialize for WireValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().map_err(serde::ser::Error::custom)?.serialize(s)
    }
}

impl<'de> Deserialize<'de> for WireValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        WireValue::from_json(&Json::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}
