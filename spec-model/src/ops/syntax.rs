//! How TVMScript writes calls of an operator: which arguments are Relax expressions,
//! which are shapes (a Python tuple becomes a `ShapeExpr`), which are packed-function
//! names (a string becomes an `ExternFunc`), which are attributes and which are
//! StructInfo (`sinfo_args`). The parser and the printer both read an operator's
//! signature from the operator table, so a call prints the way it parses. Operators
//! without a signature (and unregistered ones) use the generic rule: positional
//! arguments are expressions, keywords are attributes.

/// One formal parameter of an operator's TVMScript signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpParam {
    /// A Relax expression argument.
    Expr(&'static str),
    /// An argument where a tuple or list of dimensions means a `ShapeExpr`.
    Shape(&'static str),
    /// An argument where a string names a packed function (`ExternFunc`).
    Func(&'static str),
    /// All remaining positional arguments, as expressions.
    Rest(&'static str),
    /// An attribute (positional or keyword).
    Attr(&'static str),
    /// A StructInfo that becomes the call's `sinfo_args` (positional or keyword).
    Sinfo(&'static str),
    /// A Relax expression argument that TVMScript's Python wrapper fills in with
    /// `R.prim_value(default)` (an `int64`) when the call leaves it out
    /// (`R.tril(x)` is `R.tril(x, R.prim_value(0))`).
    PrimOr(&'static str, i64),
    /// A Relax expression argument where a string means a `DataTypeImm`
    /// (`dtype="float32"` is `R.dtype("float32")`, as the lowered-memory operators'
    /// Python wrappers convert it).
    Dtype(&'static str),
    /// A Relax expression argument that the Python wrapper fills in with
    /// `R.str(default)` when the call leaves it out (`storage_scope="global"`).
    StrOr(&'static str, &'static str),
}

impl OpParam {
    pub fn name(self) -> &'static str {
        match self {
            OpParam::Expr(n)
            | OpParam::Shape(n)
            | OpParam::Func(n)
            | OpParam::Rest(n)
            | OpParam::Attr(n)
            | OpParam::Sinfo(n)
            | OpParam::PrimOr(n, _)
            | OpParam::Dtype(n)
            | OpParam::StrOr(n, _) => n,
        }
    }
    pub fn is_argument(self) -> bool {
        matches!(
            self,
            OpParam::Expr(_)
                | OpParam::Shape(_)
                | OpParam::Func(_)
                | OpParam::Rest(_)
                | OpParam::PrimOr(..)
                | OpParam::Dtype(_)
                | OpParam::StrOr(..)
        )
    }
}

/// The signatures several operators share.
pub(super) mod shared {
    use super::OpParam::{self, *};

    pub const UNARY: &[OpParam] = &[Expr("x")];
    pub const BINARY: &[OpParam] = &[Expr("x1"), Expr("x2")];
    pub const REDUCE: &[OpParam] = &[Expr("x"), Attr("axis"), Attr("keepdims")];
}
