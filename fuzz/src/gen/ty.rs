//! The generator's own model of StructInfo: every value it binds has a [`Ty`] with
//! exact dimensions (shape expressions over the shape variables in scope), so it can
//! choose only operations that are valid there and annotate with what it knows.
//! The checker derives StructInfo independently; annotations make the two meet.

use spec_model::grammar::{DataType, Expr, ExprKind, PrimBinOp, PrimExpr, PrimExprKind, PrimVar, StructInfo};
use spec_model::grammar::{StructInfoKind, TensorData};
use spec_model::Span;
use std::collections::HashMap;

/// A dimension: its shape expression and an upper bound on its value. Every
/// dimension the generator makes is at least 1, so no tensor is empty.
#[derive(Clone, Debug)]
pub struct Dim {
    pub e: PrimExpr,
    pub hi: i64,
}

impl Dim {
    pub fn lit(v: i64) -> Dim {
        Dim { e: PrimExpr::int(v), hi: v }
    }
    pub fn var(v: &PrimVar, hi: i64) -> Dim {
        Dim { e: PrimExpr::var(v), hi }
    }
    pub fn as_lit(&self) -> Option<i64> {
        self.e.as_int()
    }
    /// Syntactic equality: what the generator relies on to pick operands that fit.
    pub fn same(&self, other: &Dim) -> bool {
        self.e == other.e
    }
    pub fn binary(op: PrimBinOp, a: &Dim, b: &Dim) -> Dim {
        let hi = match op {
            PrimBinOp::Add => a.hi.saturating_add(b.hi),
            PrimBinOp::Mul => a.hi.saturating_mul(b.hi),
            PrimBinOp::Max => a.hi.max(b.hi),
            PrimBinOp::Min => a.hi.min(b.hi),
            _ => a.hi,
        };
        Dim { e: spec_model::ops::dim_op(op, &a.e, &b.e), hi }.settled()
    }

    /// A dimension that folded to a literal is bounded by exactly that literal (an upper
    /// bound computed from its operands may be larger: `3 - 2` is 1, not at most 3).
    pub fn settled(mut self) -> Dim {
        if let Some(v) = self.e.as_int() {
            self.hi = v;
        }
        self
    }
}

/// A value's StructInfo as the generator knows it.
#[derive(Clone, Debug)]
pub enum Ty {
    Tensor {
        dims: Vec<Dim>,
        dtype: DataType,
    },
    Shape(Vec<Dim>),
    Prim(DataType),
    Tuple(Vec<Ty>),
    Object,
    /// A closure (pure, parameters and result without shape variables of their own).
    Func {
        params: Vec<Ty>,
        ret: Box<Ty>,
    },
}

/// The dtypes of generated tensors (bool only where an operator makes or needs it).
pub const NUMERIC: [DataType; 4] = [DataType::FLOAT32, DataType::INT32, DataType::INT64, DataType::float(64)];

impl Ty {
    pub fn tensor(dims: Vec<Dim>, dtype: DataType) -> Ty {
        Ty::Tensor { dims, dtype }
    }
    pub fn scalar(dtype: DataType) -> Ty {
        Ty::Tensor { dims: Vec::new(), dtype }
    }
    pub fn as_tensor(&self) -> Option<(&[Dim], DataType)> {
        match self {
            Ty::Tensor { dims, dtype } => Some((dims, *dtype)),
            _ => None,
        }
    }

    /// Equal as the generator sees it (dimensions compared syntactically).
    pub fn same(&self, other: &Ty) -> bool {
        let dims_eq = |a: &[Dim], b: &[Dim]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y));
        let all_eq = |a: &[Ty], b: &[Ty]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y));
        match (self, other) {
            (Ty::Tensor { dims: a, dtype: x }, Ty::Tensor { dims: b, dtype: y }) => x == y && dims_eq(a, b),
            (Ty::Shape(a), Ty::Shape(b)) => dims_eq(a, b),
            (Ty::Prim(x), Ty::Prim(y)) => x == y,
            (Ty::Tuple(a), Ty::Tuple(b)) => all_eq(a, b),
            (Ty::Object, Ty::Object) => true,
            (Ty::Func { params: p, ret: r }, Ty::Func { params: q, ret: s }) => all_eq(p, q) && r.same(s),
            _ => false,
        }
    }

    /// The shape variables this type mentions.
    pub fn shape_vars(&self, out: &mut Vec<PrimVar>) {
        let dims = |ds: &[Dim], out: &mut Vec<PrimVar>| {
            for d in ds {
                d.e.for_each_var(&mut |v| {
                    if !out.contains(v) {
                        out.push(v.clone())
                    }
                })
            }
        };
        match self {
            Ty::Tensor { dims: ds, .. } | Ty::Shape(ds) => dims(ds, out),
            Ty::Tuple(fs) => fs.iter().for_each(|f| f.shape_vars(out)),
            Ty::Func { params, ret } => {
                params.iter().for_each(|p| p.shape_vars(out));
                ret.shape_vars(out)
            }
            Ty::Prim(_) | Ty::Object => {}
        }
    }

    /// Whether every shape variable it mentions is one of `vars`.
    pub fn only_uses(&self, vars: &[PrimVar]) -> bool {
        let mut used = Vec::new();
        self.shape_vars(&mut used);
        used.iter().all(|v| vars.contains(v))
    }

    /// The StructInfo annotation that says exactly this.
    pub fn to_sinfo(&self) -> StructInfo {
        let kind = match self {
            Ty::Tensor { dims, dtype } => {
                StructInfoKind::Tensor { shape: Some(shape_expr(dims)), dtype: *dtype, ndim: dims.len() as i64 }
            }
            Ty::Shape(dims) => StructInfoKind::Shape {
                values: Some(dims.iter().map(|d| d.e.clone()).collect()),
                ndim: dims.len() as i64,
            },
            Ty::Prim(dtype) => StructInfoKind::Prim { dtype: *dtype, value: None },
            Ty::Tuple(fields) => StructInfoKind::Tuple { fields: fields.iter().map(Ty::to_sinfo).collect() },
            Ty::Object => StructInfoKind::Object,
            Ty::Func { params, ret } => StructInfoKind::Func {
                params: Some(params.iter().map(Ty::to_sinfo).collect()),
                ret: ret.to_sinfo(),
                derive_func: None,
                purity: true,
            },
        };
        StructInfo::new(kind, Span::SYNTHETIC)
    }

    /// The type with shape variables replaced (a callee's signature at a call site).
    pub fn subst(&self, map: &HashMap<PrimVar, Dim>) -> Ty {
        let dims = |ds: &[Dim]| ds.iter().map(|d| subst_dim(d, map)).collect();
        match self {
            Ty::Tensor { dims: ds, dtype } => Ty::Tensor { dims: dims(ds), dtype: *dtype },
            Ty::Shape(ds) => Ty::Shape(dims(ds)),
            Ty::Tuple(fs) => Ty::Tuple(fs.iter().map(|f| f.subst(map)).collect()),
            Ty::Func { params, ret } => {
                Ty::Func { params: params.iter().map(|p| p.subst(map)).collect(), ret: Box::new(ret.subst(map)) }
            }
            Ty::Prim(_) | Ty::Object => self.clone(),
        }
    }

    /// The largest element count of a tensor of this type.
    pub fn elems(dims: &[Dim]) -> u64 {
        dims.iter().fold(1u64, |acc, d| acc.saturating_mul(d.hi.max(0) as u64))
    }
}

/// `R.shape([d0, d1, ...])` as an expression.
pub fn shape_expr(dims: &[Dim]) -> Expr {
    Expr::new(ExprKind::ShapeExpr(dims.iter().map(|d| d.e.clone()).collect()), Span::SYNTHETIC)
}

fn subst_prim(e: &PrimExpr, map: &HashMap<PrimVar, Dim>) -> PrimExpr {
    let k = match &*e.kind {
        PrimExprKind::Var(v) => return map.get(v).map(|d| d.e.clone()).unwrap_or_else(|| e.clone()),
        PrimExprKind::IntImm { .. } | PrimExprKind::FloatImm { .. } => return e.clone(),
        PrimExprKind::Binary { op, a, b } => {
            return spec_model::ops::dim_op(*op, &subst_prim(a, map), &subst_prim(b, map));
        }
        PrimExprKind::Not(a) => PrimExprKind::Not(subst_prim(a, map)),
        PrimExprKind::Cast { dtype, value } => PrimExprKind::Cast { dtype: *dtype, value: subst_prim(value, map) },
        PrimExprKind::Select { cond, then_value, else_value } => PrimExprKind::Select {
            cond: subst_prim(cond, map),
            then_value: subst_prim(then_value, map),
            else_value: subst_prim(else_value, map),
        },
    };
    PrimExpr::new(k, e.span)
}

/// A dimension with shape variables replaced; its bound is recomputed from theirs.
pub fn subst_dim(d: &Dim, map: &HashMap<PrimVar, Dim>) -> Dim {
    fn bound(e: &PrimExpr, map: &HashMap<PrimVar, Dim>, own: i64) -> i64 {
        match &*e.kind {
            PrimExprKind::Var(v) => map.get(v).map_or(own, |d| d.hi),
            PrimExprKind::IntImm { value, .. } => *value,
            PrimExprKind::Binary { op, a, b } => {
                let (x, y) = (bound(a, map, own), bound(b, map, own));
                match op {
                    PrimBinOp::Add => x.saturating_add(y),
                    PrimBinOp::Mul => x.saturating_mul(y),
                    PrimBinOp::Min => x.min(y),
                    PrimBinOp::Max => x.max(y),
                    _ => x,
                }
            }
            _ => own,
        }
    }
    Dim { e: subst_prim(&d.e, map), hi: bound(&d.e, map, d.hi) }.settled()
}

/// A scalar of `dtype` for a literal: small, so arithmetic on it cannot overflow.
pub fn scalar_for(dtype: DataType, k: i64) -> spec_model::grammar::Scalar {
    use spec_model::grammar::Scalar;
    if dtype.is_bool() {
        Scalar::Bool(k % 2 != 0)
    } else if dtype.is_float() {
        Scalar::Float(k as f64 / 2.0)
    } else if dtype.is_uint() {
        Scalar::Int(k.unsigned_abs().into())
    } else {
        Scalar::Int(k as i128)
    }
}

/// Whether tensors of `dtype` can hold generated data.
pub fn supported(dtype: DataType) -> bool {
    TensorData::empty(dtype).is_some()
}
