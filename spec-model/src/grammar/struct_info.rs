//! `StructInfo` (Grammar; Structural Information in Relax).

use super::{DataType, Expr, PrimExpr};
use crate::span::Span;
use std::rc::Rc;

#[derive(Clone, Debug, PartialEq)]
pub struct StructInfo {
    pub kind: Rc<StructInfoKind>,
    pub span: Span,
}

/// `StructInfo ::= TensorStructInfo(shape: Expr?, dtype, ndim) | ShapeStructInfo(values: [PrimExpr]?, ndim)
/// | PrimStructInfo(dtype) | ObjectStructInfo() | TupleStructInfo(fields)
/// | FuncStructInfo(params: [StructInfo]?, ret, derive_func: EnvFunc?)`.
#[derive(Clone, Debug, PartialEq)]
pub enum StructInfoKind {
    Object,
    /// `PrimStructInfo` (later draft): describes `PrimValue`s. `value` is TVM's
    /// extension `R.Prim(value=n)` (proofs-notes/struct-info.md, S-prim-value): the
    /// value as a shape expression, known only in annotations (SI-D-13 derives none).
    Prim {
        dtype: DataType,
        value: Option<PrimExpr>,
    },
    Shape {
        values: Option<Vec<PrimExpr>>,
        ndim: i64,
    },
    /// `shape`, when given, is a `ShapeExpr` or a `Var` (WF-13 rejects anything else).
    Tensor {
        shape: Option<Expr>,
        dtype: DataType,
        ndim: i64,
    },
    Tuple {
        fields: Vec<StructInfo>,
    },
    /// `purity` is the «pure» flag the spec carries on `FuncType`; TVMScript's
    /// `R.Callable` defaults it to pure when `params` are given and impure otherwise.
    Func {
        params: Option<Vec<StructInfo>>,
        ret: StructInfo,
        derive_func: Option<DeriveFunc>,
        purity: bool,
    },
}

/// The `derive_func` macros of `FuncStructInfo` (Auxiliary Procedures).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DeriveFunc {
    /// `default_derive`: the result from the call's `sinfo_args`.
    Default,
    /// `empty_derive`: always `ObjectStructInfo()`.
    Empty,
    /// Any other registered name (the static checker decides whether it exists).
    Named(String),
}

impl DeriveFunc {
    pub fn from_name(name: &str) -> DeriveFunc {
        match name {
            "default_derive" => DeriveFunc::Default,
            "empty_derive" => DeriveFunc::Empty,
            other => DeriveFunc::Named(other.to_string()),
        }
    }
    pub fn name(&self) -> &str {
        match self {
            DeriveFunc::Default => "default_derive",
            DeriveFunc::Empty => "empty_derive",
            DeriveFunc::Named(n) => n,
        }
    }
}

impl StructInfo {
    pub fn new(kind: StructInfoKind, span: Span) -> StructInfo {
        StructInfo { kind: Rc::new(kind), span }
    }
    pub fn object() -> StructInfo {
        StructInfo::new(StructInfoKind::Object, Span::SYNTHETIC)
    }
    pub fn with_span(mut self, span: Span) -> StructInfo {
        self.span = span;
        self
    }
}
