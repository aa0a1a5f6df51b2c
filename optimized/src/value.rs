//! The engine's run-time values (the spec's "Values in Relax"): every value is a cheap
//! handle, so passing one is aliasing it, as the Detailed Semantics require.

use crate::tensor::Tensor;
use spec_model::grammar::DataType;
use std::rc::Rc;

#[derive(Clone)]
pub enum Value {
    Tensor(Rc<Tensor>),
    Tuple(Rc<[Value]>),
    Closure(Rc<Closure>),
    /// A shape value: its dimensions.
    Shape(Rc<[i64]>),
    /// A `PrimValue`: a scalar with its dtype.
    Prim(Prim),
    Str(Rc<str>),
    DataType(DataType),
    /// A packed function, by the symbol it is registered under (SEM-8).
    PackedFunc(Rc<str>),
    /// A TIR PrimFunc of the module (by its index in the executable), opaque to Relax.
    PrimFunc(usize),
    Null,
}

/// A scalar `PrimValue`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Prim {
    Int(i64, DataType),
    Float(f64, DataType),
    Bool(bool),
}

/// A closure (SEM-6): a function of the executable and the values of the Relax and
/// shape variables it captured, in the order the function's plan reads them (`None`:
/// a variable without a value where the closure was made, which only an unchecked
/// program has, or a shape variable not bound there).
pub struct Closure {
    pub func: usize,
    pub captured: Box<[Option<Value>]>,
    pub shapes: Box<[Option<i64>]>,
}

impl Value {
    pub fn tensor(t: Tensor) -> Value {
        Value::Tensor(Rc::new(t))
    }

    pub fn tuple(fields: Vec<Value>) -> Value {
        Value::Tuple(fields.into())
    }

    pub fn unit() -> Value {
        Value::Tuple(Rc::new([]))
    }

    /// What kind of value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Tensor(_) => "a tensor",
            Value::Tuple(_) => "a tuple",
            Value::Closure(_) => "a closure",
            Value::Shape(_) => "a shape",
            Value::Prim(_) => "a prim value",
            Value::Str(_) => "a string",
            Value::DataType(_) => "a data type",
            Value::PackedFunc(_) => "a packed function",
            Value::PrimFunc(_) => "a TIR PrimFunc",
            Value::Null => "null",
        }
    }
}

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Tensor(t) => write!(f, "{t:?}"),
            Value::Tuple(vs) => f.debug_list().entries(vs.iter()).finish(),
            Value::Closure(c) => write!(f, "Closure(#{})", c.func),
            Value::Shape(s) => write!(f, "Shape({s:?})"),
            Value::Prim(p) => write!(f, "{p:?}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::DataType(d) => write!(f, "DataType({d})"),
            Value::PackedFunc(n) => write!(f, "PackedFunc({n})"),
            Value::PrimFunc(i) => write!(f, "PrimFunc(#{i})"),
            Value::Null => f.write_str("Null"),
        }
    }
}
