//! `Type` (Grammar; Types in Relax).

use super::DataType;

/// `Type ::= DynTensorType(ndim, dtype) | ShapeType(ndim) | ObjectType() |
/// TupleType(fields) | FuncType(arg_types, ret_type, pure) | PackedFuncType()`.
///
/// `ndim == -1` is the unknown rank; `dtype == Void` the unknown dtype.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    DynTensor { ndim: i64, dtype: DataType },
    Shape { ndim: i64 },
    Object,
    Tuple(Vec<Type>),
    Func { arg_types: Vec<Type>, ret_type: Box<Type>, pure: bool },
    PackedFunc,
}
