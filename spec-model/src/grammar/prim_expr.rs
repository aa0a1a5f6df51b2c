//! `PrimExpr` (Grammar): TIR's scalar expressions, used for shape dimensions,
//! `PrimValue`s and shape-variable arithmetic.
//!
//! The spec lists `Var, IntImm, Add, Sub, Mul, Div, Min, Max, Not, And, Or, Select`
//! "and others as deemed necessary"; this model adds `FloatImm`, `Mod`, `FloorDiv`,
//! `FloorMod`, the six comparisons and `Cast`, as TIR has them. The binary nodes share
//! one variant, [`PrimExprKind::Binary`], tagged by [`PrimBinOp`]; its
//! [`PrimBinOp::spec_name`] is the spec/TIR node name.

use super::{fresh_id, DataType};
use crate::span::Span;
use std::fmt;
use std::rc::Rc;

/// A shape variable (`tir::Var`). Identity is the `id`, not the name: two shape
/// variables may share a name hint.
#[derive(Clone)]
pub struct PrimVar(Rc<PrimVarNode>);

#[derive(Debug)]
pub struct PrimVarNode {
    pub id: u64,
    pub name: String,
    pub dtype: DataType,
}

impl PrimVar {
    pub fn new(name: impl Into<String>, dtype: DataType) -> PrimVar {
        PrimVar(Rc::new(PrimVarNode { id: fresh_id(), name: name.into(), dtype }))
    }
    /// A fresh `int64` shape variable.
    pub fn shape_var(name: impl Into<String>) -> PrimVar {
        PrimVar::new(name, DataType::INT64)
    }
    pub fn id(&self) -> u64 {
        self.0.id
    }
    pub fn name(&self) -> &str {
        &self.0.name
    }
    pub fn dtype(&self) -> DataType {
        self.0.dtype
    }
}

impl PartialEq for PrimVar {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}
impl Eq for PrimVar {}
impl std::hash::Hash for PrimVar {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.id.hash(state)
    }
}
impl PartialOrd for PrimVar {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for PrimVar {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.id.cmp(&other.0.id)
    }
}
impl fmt::Debug for PrimVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.0.name, self.0.id)
    }
}

/// A float literal compared bit for bit, so that `NaN == NaN` and `0.0 != -0.0`:
/// literals are syntax, and syntax equality must be reflexive.
#[derive(Clone, Copy, Debug)]
pub struct FloatLit(pub f64);

impl PartialEq for FloatLit {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrimBinOp {
    Add,
    Sub,
    Mul,
    /// Truncating division (TIR `Div`, `T.truncdiv`).
    Div,
    /// Truncating remainder (TIR `Mod`, `T.truncmod`).
    Mod,
    /// Floor division (TIR `FloorDiv`, TVMScript `//`).
    FloorDiv,
    /// Floor remainder (TIR `FloorMod`, TVMScript `%`).
    FloorMod,
    Min,
    Max,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl PrimBinOp {
    pub const ALL: [PrimBinOp; 17] = [
        PrimBinOp::Add,
        PrimBinOp::Sub,
        PrimBinOp::Mul,
        PrimBinOp::Div,
        PrimBinOp::Mod,
        PrimBinOp::FloorDiv,
        PrimBinOp::FloorMod,
        PrimBinOp::Min,
        PrimBinOp::Max,
        PrimBinOp::Eq,
        PrimBinOp::Ne,
        PrimBinOp::Lt,
        PrimBinOp::Le,
        PrimBinOp::Gt,
        PrimBinOp::Ge,
        PrimBinOp::And,
        PrimBinOp::Or,
    ];

    /// The node's name in the spec / TIR.
    pub fn spec_name(self) -> &'static str {
        match self {
            PrimBinOp::Add => "Add",
            PrimBinOp::Sub => "Sub",
            PrimBinOp::Mul => "Mul",
            PrimBinOp::Div => "Div",
            PrimBinOp::Mod => "Mod",
            PrimBinOp::FloorDiv => "FloorDiv",
            PrimBinOp::FloorMod => "FloorMod",
            PrimBinOp::Min => "Min",
            PrimBinOp::Max => "Max",
            PrimBinOp::Eq => "EQ",
            PrimBinOp::Ne => "NE",
            PrimBinOp::Lt => "LT",
            PrimBinOp::Le => "LE",
            PrimBinOp::Gt => "GT",
            PrimBinOp::Ge => "GE",
            PrimBinOp::And => "And",
            PrimBinOp::Or => "Or",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(self, PrimBinOp::Eq | PrimBinOp::Ne | PrimBinOp::Lt | PrimBinOp::Le | PrimBinOp::Gt | PrimBinOp::Ge)
    }

    pub fn is_logical(self) -> bool {
        matches!(self, PrimBinOp::And | PrimBinOp::Or)
    }

    /// TIR's result dtype: `bool` for comparisons and logic, else the operands' dtype.
    pub fn result_dtype(self, operand: DataType) -> DataType {
        if self.is_comparison() || self.is_logical() {
            DataType::bool()
        } else {
            operand
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct PrimExpr {
    pub kind: Box<PrimExprKind>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PrimExprKind {
    /// `Var(name)`: a shape variable.
    Var(PrimVar),
    /// `IntImm(value)`; `dtype` is `int64` in shapes, `bool` for `True`/`False`.
    IntImm {
        value: i64,
        dtype: DataType,
    },
    FloatImm {
        value: FloatLit,
        dtype: DataType,
    },
    /// `Add`, `Sub`, `Mul`, `Div`, `Mod`, `FloorDiv`, `FloorMod`, `Min`, `Max`,
    /// `EQ`, `NE`, `LT`, `LE`, `GT`, `GE`, `And`, `Or`.
    Binary {
        op: PrimBinOp,
        a: PrimExpr,
        b: PrimExpr,
    },
    Not(PrimExpr),
    Select {
        cond: PrimExpr,
        then_value: PrimExpr,
        else_value: PrimExpr,
    },
    Cast {
        dtype: DataType,
        value: PrimExpr,
    },
}

impl PrimExpr {
    pub fn new(kind: PrimExprKind, span: Span) -> PrimExpr {
        PrimExpr { kind: Box::new(kind), span }
    }
    pub fn var(v: &PrimVar) -> PrimExpr {
        PrimExpr::new(PrimExprKind::Var(v.clone()), Span::SYNTHETIC)
    }
    /// An `int64` literal, the type of shape dimensions.
    pub fn int(value: i64) -> PrimExpr {
        PrimExpr::new(PrimExprKind::IntImm { value, dtype: DataType::INT64 }, Span::SYNTHETIC)
    }
    pub fn binary(op: PrimBinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        let span = a.span.to(b.span);
        PrimExpr::new(PrimExprKind::Binary { op, a, b }, span)
    }
    pub fn with_span(mut self, span: Span) -> PrimExpr {
        self.span = span;
        self
    }

    /// The bare variable this expression consists of, if any (WF-5: only such a
    /// dimension binds a shape variable).
    pub fn as_var(&self) -> Option<&PrimVar> {
        match &*self.kind {
            PrimExprKind::Var(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match &*self.kind {
            PrimExprKind::IntImm { value, .. } => Some(*value),
            _ => None,
        }
    }

    /// The dtype TIR gives this expression.
    pub fn dtype(&self) -> DataType {
        match &*self.kind {
            PrimExprKind::Var(v) => v.dtype(),
            PrimExprKind::IntImm { dtype, .. } | PrimExprKind::FloatImm { dtype, .. } => *dtype,
            PrimExprKind::Binary { op, a, b } => op.result_dtype(a.dtype().promote_binary(b.dtype())),
            PrimExprKind::Not(_) => DataType::bool(),
            PrimExprKind::Select { then_value, .. } => then_value.dtype(),
            PrimExprKind::Cast { dtype, .. } => *dtype,
        }
    }

    /// Calls `f` on each shape variable occurrence, left to right.
    pub fn for_each_var(&self, f: &mut dyn FnMut(&PrimVar)) {
        match &*self.kind {
            PrimExprKind::Var(v) => f(v),
            PrimExprKind::IntImm { .. } | PrimExprKind::FloatImm { .. } => {}
            PrimExprKind::Binary { a, b, .. } => {
                a.for_each_var(f);
                b.for_each_var(f);
            }
            PrimExprKind::Not(a) | PrimExprKind::Cast { value: a, .. } => a.for_each_var(f),
            PrimExprKind::Select { cond, then_value, else_value } => {
                cond.for_each_var(f);
                then_value.for_each_var(f);
                else_value.for_each_var(f);
            }
        }
    }

    /// The distinct shape variables, in order of first occurrence.
    pub fn vars(&self) -> Vec<PrimVar> {
        let mut out: Vec<PrimVar> = Vec::new();
        self.for_each_var(&mut |v| {
            if !out.contains(v) {
                out.push(v.clone())
            }
        });
        out
    }
}
